"""
Warm start vs cold: OCT on 60 iris rows, from nothing and from the DP optimum
==============================================================================

Run it with ``python examples/04_warm_start.py`` (about 10 s). Bertsimas and Dunn's OCT model ([BD17]) of a
depth-2 tree has a weak LP relaxation (a fractional leaf label makes every leaf's error L_t almost 0), so
HiGHS needs many branch-and-bound nodes to prove the optimum by itself. odtmip's dynamic program finds the
optimal tree over all midpoint thresholds in milliseconds; handed to HiGHS as a MIP start it gives the
incumbent at once, and only the bound is left to prove.

The script prints the objective (24) and the label rows (18) of the model, then solves it twice with
:func:`odtmip.solve`: cold (``warm_start="none"``) and warm (``warm_start="dp"``), prints the time to proof and
the branch-and-bound nodes of each, and plots the incumbent and the bound over time. Times vary from run to run
and machine to machine: they are printed, never checked.

Known results (the test suite checks them): 60 rows (20 of each iris class: rows 0-19, 50-69, 100-119), 4
numeric columns, baseline error L_hat = 40; the optimum is 1/40 = 0.025 (one misclassified row, alpha = 0: the
DP's optimum over the same thresholds, exact); the DP start is accepted, and it is already optimal (its objective
is 0.025), so the warm run's tree is optimal however soon it stops. Whether a run proves the optimum within the
time limit depends on the machine (each takes about a second): at any speed each run's bound and tree bracket it,
bound <= 0.025 <= objective.
"""

import numpy as np

import odtmip
from odtmip.core.datasets import load
from odtmip.models import oct as oct_model
from odtmip.solving.check import dp_problem
from odtmip.solving.pipeline import solve_problem

DEPTH, TIME_LIMIT = 2, 60.0
ROWS = np.r_[0:20, 50:70, 100:120]


def iris_sample() -> odtmip.Dataset:
    """20 rows of each iris class (the bundled scikit-learn copy)."""
    X, y = load("iris")
    return odtmip.Dataset(X.iloc[ROWS].reset_index(drop=True), np.asarray(y)[ROWS])


def main(verbose: bool = True) -> dict:
    """Solve cold and warm; returns the numbers it prints (the test suite checks the exact ones)."""
    say = print if verbose else (lambda *a, **k: None)
    data = iris_sample()
    say(f"data: {data.describe()}")
    if verbose:
        m = oct_model.build_model(data, DEPTH)  # the model odtmip.solve builds, to look at
        m.penalised_error.pprint()  # (24): errors scaled by 1/L_hat = 1/40, plus alpha per split (alpha = 0 here)
        m.one_label_per_nonempty_leaf.pprint()  # (18): a non-empty leaf takes one label
        # (20) and (21) tie L_t to the label through W c_kt: with c_kt fractional the LP lets L_t drop to about 0
        say(f"error_lower: {m.error_lower.doc}\nerror_upper: {m.error_upper.doc}")
    problem = dp_problem(data, "oct", DEPTH)  # odtmip check's DP problem: the same optimum, exactly
    optimum = problem.in_model_units(solve_problem(problem, DEPTH).objective)
    runs = {start: odtmip.solve(data, "oct", max_depth=DEPTH, warm_start=start, time_limit=TIME_LIMIT)
            for start in ("none", "dp")}
    say(f"the optimum (the DP's): {optimum:g}")
    for start, r in runs.items():
        # proven or stopped by the time limit, the bound and the best tree bracket the optimum
        assert r.bound <= optimum + 1e-9 and optimum <= r.objective + 1e-9
        say(f"warm_start={start!r:6}: {r.status.value}, objective {r.objective:g}, bound {r.bound:g}, "
            f"{r.stats['nodes']} B&B nodes, {r.seconds:.2f} s "
            f"(start accepted: {r.stats['warm_start_accepted']}, start objective: {r.stats['warm_start_objective']})")
    warm = runs["dp"]
    say("\nThe optimal tree (thresholds on the original scale):")
    say(warm.tree.to_text())
    cold_s, warm_s = runs["none"].seconds, warm.seconds
    say(f"time to proof: cold {cold_s:.2f} s, warm {warm_s:.2f} s")
    return {
        "optimum": optimum,
        "objective": {start: r.objective for start, r in runs.items()},
        "accepted": {start: r.stats["warm_start_accepted"] for start, r in runs.items()},
        "warm_start_objective": warm.stats["warm_start_objective"],
        "misclassified": int(round(warm.objective * 40)),
        "seconds": {start: r.seconds for start, r in runs.items()},
        "figure": plot(runs),
    }


def plot(runs: dict):
    """Incumbent (solid) and bound (dashed) over time, from HiGHS's callbacks."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for (start, r), colour in zip(runs.items(), ("tab:red", "tab:blue"), strict=True):
        points = r.stats["trajectory"]
        t = [p[0] for p in points]
        ax.step(t, [p[1] if p[1] is not None else np.nan for p in points], where="post", color=colour,
                label=f"incumbent, warm_start={start!r}")
        ax.step(t, [p[2] if p[2] is not None else np.nan for p in points], where="post", color=colour,
                linestyle="--", label=f"bound, warm_start={start!r}")
    ax.set_xlabel("seconds in HiGHS")
    ax.set_ylabel("OCT objective (errors / L_hat)")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title("OCT, depth 2, 60 iris rows")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    import matplotlib.pyplot as plt

    main()
    plt.show()
