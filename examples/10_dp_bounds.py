"""
Bounds from the dynamic program: one row that makes every formulation's LP exact
================================================================================

Run it with ``python examples/10_dp_bounds.py`` (about 15 s). Example 03 shows why the LP relaxations of these
models say nothing from depth two on: Günlük et al.'s model, BinOCT and OCT all relax to "every row classified
correctly", 0 errors. The dynamic program knows much more, and can say it in the model's own variables.

For every split s the root may choose, the DP computes V(s), the least loss of any tree of depth <= D whose root
splits on s: the best subtrees of depth D - 1 on each side, plus the penalty ([MurTree] Eq. 1; at depth two these
are the depth-two counts the DP uses anyway). A model's root chooses exactly one of its options c (Günlük: a
feature group v[g, root], BinOCT: a feature f[1, f] at any of its thresholds, OCT: a feature a[j, 1] or no split
1 - d[1]), so

    loss >= sum_c LB_c x_c,         LB_c = min over the splits s of option c of V(s),

holds for every tree of the model: it cuts off no tree, only fractional points (``dp_bounds="root"``,
:mod:`odtmip.models.view`). The LP relaxation then cannot put the root "half on every feature" for free: its bound
is at least the smallest LB_c, which is the optimum. So the LP proves the DP's tree optimal at once, with no
branching; ``odtmip.solve(..., dp_bounds="root")`` then stops there (``stats["proved_by"] == "lp"``).

This script, on the 432 rows of the MONK's problem 1 at depth 2:

1. solves each formulation's LP relaxation without the row (0 errors for all three) and with it (the optimum,
   96 errors), and prints the values LB_c of the root's options;
2. prints BinOCT's row with ``pprint``: its loss is W x (27), the weighted errors e[l, c] of the four leaves;
3. solves each model with ``dp_bounds="root"``: proved by the LP, at the DP's optimum;
4. at depth 3 on the 958 tic-tac-toe boards, adds the paths' rows (``dp_bounds="paths"``: one per root option,
   child and child option) to Günlük et al.'s model and solves its LP: the optimum, 216 errors.

Known results (the test suite checks them): the LP bound without the row is 0 errors for every formulation and
96 with it, the optimum; each solve is proved by the LP; tic-tac-toe at depth 3: LP bound 216 = the optimum.

.. [MurTree] E. Demirović et al., "MurTree: optimal decision trees via dynamic programming and search", JMLR 23
   (2022).
"""

import numpy as np

import odtmip
from odtmip.core.datasets import load
from odtmip.dp.bounds import split_values
from odtmip.models import FORMULATIONS, lp_relaxation
from odtmip.models.view import add_dp_rows, root_bounds

DEPTH = 2
NAMES = ("gunluk", "binoct", "oct")


def lp_errors(name: str, data: odtmip.Dataset, depth: int, rows: str | None):
    """The LP relaxation of formulation ``name`` (with the DP's rows of ``rows``, if any) in errors, the bound
    problem's DP units; and the model."""
    f = FORMULATIONS[name]
    options = f.make_options(depth, None, {})
    problem = f.dp_bound_problem(data, depth, options)
    m = f.build(data, depth, options)
    values = None
    if rows is not None:
        values = split_values(problem.data, problem.deep, problem.penalty, problem.min_leaf, paths=rows == "paths")
        add_dp_rows(m, f.view(m, data), values, rows, problem.penalty)
    return problem.in_dp_units(f.to_loss(m)(lp_relaxation(m))), m, values


def main(verbose: bool = True) -> dict:
    """Run the walk-through; returns the numbers it prints (the test suite checks them)."""
    say = print if verbose else (lambda *a, **k: None)
    data = odtmip.Dataset(*load("monk1"))
    say(f"data: {data.describe()}")

    # 1. The LP relaxation of each model, without and with the root's row, in errors.
    plain, bounded, lbs = {}, {}, {}
    for name in NAMES:
        plain[name], _, _ = lp_errors(name, data, DEPTH, None)
        bounded[name], m, values = lp_errors(name, data, DEPTH, "root")
        f = FORMULATIONS[name]
        lbs[name] = root_bounds(f.view(m, data), values)
    say("\nformulation  LP bound (errors)  with the DP's root row  root options: least and largest LB_c")
    for name in NAMES:
        say(f"{name:11}  {plain[name]:17.6g}  {bounded[name]:22.6g}  {min(lbs[name]):g} .. {max(lbs[name]):g}"
            f" over {len(lbs[name])} options")

    # 2. The row itself, in BinOCT's variables: W x (27) >= sum_f LB_f f[1, f].
    _, m, _ = lp_errors("binoct", data, DEPTH, "root")
    if verbose:
        m.dp_root_bound.pprint()

    # 3. Solving with the row: the LP proves the DP's tree optimal, no branch and bound runs.
    solved = {name: odtmip.solve(data, name, max_depth=DEPTH, dp_bounds="root") for name in NAMES}
    for name, result in solved.items():
        say(f"{name}: {result.status.value}, {data.misclassifications(result.tree):g} errors, proved by "
            f"{result.stats['proved_by']}, values of the row in {result.stats['dp_bounds_seconds']:.3f} s")

    # 4. Depth 3 with the paths' rows on the tic-tac-toe boards.
    boards = odtmip.Dataset(*load("tic-tac-toe"))
    deep, m, _ = lp_errors("gunluk", boards, 3, "paths")
    say(f"\ntic-tac-toe, depth 3, Günlük et al. with the paths' rows ({len(m.DP_PATHS) + 1} rows): LP bound "
        f"{deep:g} errors")

    out = {"lp_plain": plain, "lp_root": bounded, "root_bounds": lbs,
           "proved_by": {name: r.stats["proved_by"] for name, r in solved.items()},
           "errors": {name: data.misclassifications(r.tree) for name, r in solved.items()},
           "tic_tac_toe_depth3_lp": deep}
    out["figure"] = plot(plain, bounded)
    return out


def plot(plain: dict, bounded: dict):
    """Bars: each formulation's LP bound without and with the DP's root row, in errors."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    x = np.arange(len(NAMES))
    ax.bar(x - 0.2, [plain[n] for n in NAMES], 0.4, label="LP relaxation")
    ax.bar(x + 0.2, [bounded[n] for n in NAMES], 0.4, label="LP relaxation + the DP's root row")
    ax.set_xticks(x, NAMES)
    ax.set_ylabel("errors (lower bound)")
    ax.set_title("monk1, depth 2: one row from the DP closes the gap")
    ax.legend(loc="center right")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    import matplotlib.pyplot as plt

    main()
    plt.show()
