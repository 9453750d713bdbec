"""
Why the LP bound is weak: the Günlük et al. model's LP relaxation, and what anchors buy
========================================================================================

Run it with ``python examples/03_lp_bound.py`` (about 15 s). A branch-and-bound solver proves optimality by
closing the gap between its best tree and a bound from LP relaxations. [GKLMS] §4.3 shows that the relaxation
of their IP (8) carries no information once the tree has two levels: the point z = 1/2 sends every sample half
left and half right, so each sample sits half in each of two leaves, one of which labels it correctly, and the
LP "classifies every sample correctly". Its value is ``|I+| + C|I-|``, here simply N (C = 1), whatever the data.

This script, on 40 rows of the MONK's problem 1 (``odtmip.core.datasets.load("monk1")``, rows drawn with seed 0):

1. solves the LP relaxation at depths 1, 2 and 3, without and with the anchors (13), next to the optimum (the
   DP's over the model's splits, exact) and the model itself, warm-started from the DP, within 60 s;
2. solves the relaxed model itself (:func:`odtmip.models.solve_model` after Pyomo's ``core.relax_integer_vars``),
   then builds the paper's fractional point by hand (z = 1/2 on the columns of one group, c = 1/2 at depth 2,
   1/4 at depth 3) and checks every row of the relaxed model: it is feasible, with value N;
3. shows what anchors buy: not a better LP bound on this data, but fewer symmetric copies of each tree, so a
   smaller branch-and-bound tree (printed, not checked: node counts vary with the HiGHS release);
4. on all 958 tic-tac-toe boards at depth 2, where the anchors do lift the LP bound, a little: from 958 to
   14344/15 = 956.27, while the optimum classifies 676 boards correctly.

Known results (the test suite checks them): at depth 1 the LP bound is tight, 28 correct = the optimum (12
misclassified); at depths 2 and 3 the LP value is 40 = N with and without anchors, while the optima are 34 and 39
correct (6 and 1 misclassified), and the hand-built fractional point satisfies every row with value 40. The
anchors add one row per feature group and anchor node: 6 rows at depth 2 (the root), 18 at depth 3 (the root and
its two children). On tic-tac-toe the LP value is 958 without anchors and 14344/15 with them. Whether HiGHS proves
the optimum within the time limit depends on the machine (at depth 3 it takes seconds), so the script checks what
holds at any speed: the model's bound <= the optimum <= its best tree.
"""

import time

import numpy as np
import pyomo.environ as pyo

import odtmip
from odtmip.core.datasets import load
from odtmip.models import gunluk, lp_relaxation, model_statistics, solve_model
from odtmip.solving.check import dp_problem
from odtmip.solving.pipeline import solve_problem

N, SEED, DEPTHS = 40, 0, (1, 2, 3)


def monk1_sample(n: int = N, seed: int = SEED) -> odtmip.Dataset:
    """``n`` rows of the bundled MONK's problem 1, drawn without replacement."""
    data = odtmip.Dataset(*load("monk1"))
    return data.subset(np.sort(np.random.default_rng(seed).choice(data.n_samples, n, replace=False)))


def main(verbose: bool = True) -> dict:
    """Run the walk-through; returns the numbers it prints (the test suite checks them)."""
    say = print if verbose else (lambda *a, **k: None)
    data = monk1_sample()
    say(f"data: {data.describe()}")

    # 1. LP relaxation and optimum of (8) for each depth, without and with the anchors (13). The model maximises
    #    the number of correctly classified samples (8a); odtmip's results count misclassifications. The optimum
    #    is the DP's over the model's splits (odtmip check's problem: the same optimum, found in milliseconds).
    lp, correct, status, nodes, seconds, rows = {}, {}, {}, {}, {}, {}
    for depth in DEPTHS:
        problem = dp_problem(data, "gunluk", depth)
        optimum = problem.in_model_units(solve_problem(problem, depth).objective)
        correct[depth] = data.n_samples - optimum
        for anchors in (False, True):
            options = gunluk.GunlukOptions(topology=f"balanced-{depth}", anchors=anchors)
            m = gunluk.build_model(data, options)
            lp[depth, anchors] = lp_relaxation(m)
            rows[depth, anchors] = model_statistics(m)["n_constraints"]
            start = time.perf_counter()
            result = odtmip.solve(data, "gunluk", options=options, warm_start="dp", time_limit=60)
            seconds[depth, anchors] = time.perf_counter() - start
            # proven or stopped by the time limit, the bound and the best tree bracket the optimum
            assert result.bound <= optimum + 1e-6 and optimum <= result.objective
            status[depth, anchors] = result.status.value
            nodes[depth, anchors] = result.stats["nodes"]
    say("\ndepth  anchors  LP bound (correct)  optimum (correct)  MIP status  B&B nodes  seconds")
    for (depth, anchors), value in lp.items():
        say(f"{depth:5d}  {anchors!s:7}  {value:18g}  {correct[depth]:17g}  {status[depth, anchors]:>10}"
            f"  {nodes[depth, anchors]:9d}  {seconds[depth, anchors]:7.2f}")

    # 2. The fractional point behind the trivial bound. HiGHS finds an LP optimum of value N ...
    m = gunluk.build_model(data, gunluk.GunlukOptions(topology="balanced-2", anchors=False))
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(m)
    run = solve_model(m)
    z_values = sorted({round(pyo.value(z), 6) for z in m.z.values()})
    c_values = sorted({round(pyo.value(c), 6) for c in m.c.values()})
    say(f"\nrelaxed depth-2 model: {run.status.value}, value {run.objective:g}; HiGHS's optimum has z in {z_values}, "
        f"c in {c_values}")
    # ... and the point of [GKLMS] §4.3 is one: build it, and check every row of the relaxed model by hand.
    half_point = {depth: fractional_point(data, depth) for depth in (2, 3)}
    for depth, (value, violation) in half_point.items():
        say(f"depth {depth}: z = 1/2, c = 1/{2 ** (depth - 1)} is feasible (largest violation {violation:g}) "
            f"with value {value:g} = N")
    if verbose:
        # (11)-(12) at the root for sample 0: with z = 1/2 the right-hand sides allow c = 1/2 on both sides
        say("(11) for sample 0 at the root:", m.left_branch[0, 1].expr)
        say("(12) for sample 0 at the root:", m.right_branch[0, 1].expr)
        anchored = gunluk.build_model(data, gunluk.GunlukOptions(topology="balanced-2"))
        anchored.anchor.pprint()  # (13): one row per group at the root

    # 4. Where anchors do move the LP bound: all 958 tic-tac-toe boards, depth 2 (optimum: 676 correct).
    boards = odtmip.Dataset(*load("tic-tac-toe"))
    board_lp = {anchors: lp_relaxation(gunluk.build_model(boards, gunluk.GunlukOptions(topology="depth2",
                                                                                        anchors=anchors)))
                for anchors in (False, True)}
    say(f"\ntic-tac-toe, depth 2: LP bound {board_lp[False]:g} without anchors, {board_lp[True]:.4f} with them "
        f"(N = {boards.n_samples})")

    out = {
        "tic_tac_toe_lp": board_lp,
        "n_samples": data.n_samples,
        "lp": {f"{depth}{'+anchors' if anchors else ''}": value for (depth, anchors), value in lp.items()},
        "correct": correct,
        "anchor_rows": {depth: rows[depth, True] - rows[depth, False] for depth in DEPTHS},
        "relaxed_value": run.objective,
        "half_point": half_point,
        "nodes": {f"{depth}{'+anchors' if anchors else ''}": n for (depth, anchors), n in nodes.items()},
    }
    out["figure"] = plot(data.n_samples, lp, correct)
    return out


def fractional_point(data: odtmip.Dataset, depth: int) -> tuple[float, float]:
    """[GKLMS] §4.3's point in the relaxed model of the given depth (no anchors): every node picks the first group
    (v = 1) and each of its columns halfway (z = 1/2), so every sample goes half left and half right at every node,
    and sits with c = 1/2^(depth-1) in each of its 2^(depth-1) correct leaves. Returns (objective, largest violation
    of any row)."""
    m = gunluk.build_model(data, gunluk.GunlukOptions(topology=f"balanced-{depth}", anchors=False))
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(m)
    first_group = set(data.groups[0].members)
    for (g, _k), v in m.v.items():
        v.value = 1.0 if g == 0 else 0.0
    for (j, _k), z in m.z.items():
        z.value = 0.5 if j in first_group else 0.0
    for c in m.c.values():
        c.value = 0.5 ** (depth - 1)
    violation = 0.0
    for row in m.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(row.body)
        if row.has_lb():
            violation = max(violation, pyo.value(row.lower) - body)
        if row.has_ub():
            violation = max(violation, body - pyo.value(row.upper))
    return pyo.value(m.correct), violation


def plot(n: int, lp: dict, correct: dict):
    """Bars: the LP bound against the optimum at each depth (in correctly classified samples)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    x = np.arange(len(DEPTHS))
    ax.bar(x - 0.2, [lp[d, False] for d in DEPTHS], 0.4, label="LP relaxation of (8)")
    ax.bar(x + 0.2, [correct[d] for d in DEPTHS], 0.4, label="optimum of (8)")
    ax.axhline(n, color="grey", linestyle="--", linewidth=1, label=f"N = {n}")
    ax.set_xticks(x, [f"depth {d}" for d in DEPTHS])
    ax.set_ylabel("correctly classified samples")
    ax.set_ylim(0, n * 1.15)
    ax.set_title("From two levels on, the LP bound is N: it says nothing")
    ax.legend(loc="lower right")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    import matplotlib.pyplot as plt

    main()
    plt.show()
