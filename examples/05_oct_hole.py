"""
The OCT d = 0 hole, and its fix
===============================

Run it with ``python examples/05_oct_hole.py`` (a second). In Bertsimas and Dunn's OCT model ([BD17]) a
branch node t either splits (d_t = 1) or does not (d_t = 0, and then a_t = 0 and b_t = 0). The routing rows
(13) and (14) read, for a point i in a leaf below t,

* left of t (13): a_t . (x_i + eps) <= b_t + (1 + eps_max)(1 - z_it),
* right of t (14): a_t . x_i >= b_t - (1 - z_it).

With a_t = 0 and b_t = 0 both hold for z_it = 1: a node that does not split lets every point go left *or*
right, as it likes, at no complexity cost. The paper means "no split: everybody goes right", but, as
transcribed, the model never says so. On data where two identical points carry different labels, no tree can
classify both, yet the unfixed model reaches zero error by sending them to different leaves below a root that
does not split.

odtmip closes the hole with one row per (leaf, ancestor) pair, ``no_split_sends_all_right``: l_t <= d_m for
every leaf t left of node m (a leaf left of a non-splitting node is empty). This script builds the model of
depth 1 for x = (0, 0, 1), y = (0, 1, 0), prints the routing rows and the fix, then solves it with the fix
deactivated (:func:`odtmip.models.solve_model` on the Pyomo model) and with it (:func:`odtmip.solve`).

Known results (the test suite checks them): baseline error L_hat = 1; without the fix the optimum is 0 with
d_1 = 0 and the two x = 0 points in different leaves (leaves 2 and 3); with the fix the optimum is 1 (one
error), as for every tree on these points.
"""

import numpy as np
import pyomo.environ as pyo

import odtmip
from odtmip.models import oct as oct_model
from odtmip.models import solve_model

#: Two identical points with different labels, and a third one so that the feature is not constant.
HOLE = odtmip.Dataset(np.array([[0], [0], [1]]), [0, 1, 0])


def main(verbose: bool = True) -> dict:
    """Solve without and with the fix; returns the numbers it prints (the test suite checks them)."""
    say = print if verbose else (lambda *a, **k: None)
    m = oct_model.build_model(HOLE, max_depth=1)
    if verbose:
        m.left_branch_strict.pprint()  # (13) for the three points in leaf 2 (left of the root)
        m.right_branch.pprint()  # (14) for the three points in leaf 3 (right of the root)
        m.no_split_sends_all_right.pprint()  # the fix: l_2 <= d_1

    # Without the fix: HiGHS finds the hole.
    m.no_split_sends_all_right.deactivate()
    unfixed = solve_model(m)
    leaves = oct_model.assignment(m)  # the leaf of each point in the solution
    d_root = pyo.value(m.d[1])
    say(f"\nwithout the fix: {unfixed.status.value}, objective {unfixed.objective:g}, d_1 = {d_root:g}, "
        f"points in leaves {leaves.tolist()}")

    # With the fix (the model odtmip builds): every tree makes one error.
    fixed = odtmip.solve(HOLE, "oct", max_depth=1, warm_start="none")
    say(f"with the fix:    {fixed.status.value}, objective {fixed.objective:g}")
    say(fixed.tree.to_text())
    return {"unfixed": unfixed.objective, "unfixed_status": unfixed.status, "d_root": d_root,
            "leaves": leaves.tolist(), "fixed": fixed.objective, "fixed_status": fixed.status,
            "baseline": oct_model.baseline_error(HOLE)}


if __name__ == "__main__":
    main()
