"""A slow, readable dynamic program for optimal trees: Eq. 1 of [MurTree] in plain Python.

This is the teaching version of :mod:`odtmip.dp.solver` and the oracle its tests compare against. It
keeps none of the speed-ups (no bounds, no depth-two solver, no preprocessing) and only memoises
T(D, d, n) on (row set, d, n)::

    T(D, d, n) = T(D, d, 2^d - 1)                                         if n > 2^d - 1
               = leaf(D)                                                  if d = 0 or n = 0
               = min( leaf(D),  min_{f, i} T(D(not f), d-1, i) + T(D(f), d-1, n-1-i) + (penalty, 1) )

over the binary columns f and left sizes i in 0..n-1. Values are pairs (objective, branch nodes) compared
lexicographically, so the smallest optimal tree wins; leaf(D) = (weighted misclassifications of the
majority label, 0), +inf when D holds between 1 and ``min_leaf - 1`` rows, and 0 for an empty D (Eq. 1
literally allows degenerate splits; they never win, see [MurTree] Prop. 4.2).

With ``leaf_penalty`` = lambda the objective is the sparse one of [OSDT] Eq. 4, errors / W + lambda x
leaves (W the total weight): the same recursion with ``penalty = lambda W``, reported in those units. With
``max_depth=None`` the depth is bounded by the leaf-count bound of [OSDT] Theorem C.1 with the single leaf as
the known tree: an optimal tree has at most floor(leaf errors / (lambda W)) branch nodes, and no more depth
than there are columns.

Objectives are compared as in the compiled search (:func:`odtmip.dp.common.tie_tolerance`): exactly for
integer weights and an integer penalty per branch node while K (W + 3 penalty) < 2^53 (K classes, W the
total weight), else with the round-off tolerance of :func:`odtmip.dp.common.tie_tolerance`.

Only for tiny data: the number of row sets grows quickly with depth and columns.

References
----------
.. [MurTree] Emir Demirović et al., "MurTree: Optimal Classification Trees via Dynamic Programming and
   Search", JMLR 23(26), 2022.
.. [OSDT] X. Hu, C. Rudin, M. Seltzer, "Optimal Sparse Decision Trees", NeurIPS 2019.
"""

from __future__ import annotations

import math
import time
from functools import cache

import numpy as np

from odtmip.core.data import Dataset
from odtmip.core.exceptions import OptionError
from odtmip.core.results import SolveResult, Status
from odtmip.core.tree import branch, leaf
from odtmip.dp.common import tie_tolerance


def solve_reference(dataset: Dataset, max_depth: int | None = 2, max_nodes: int | None = None, min_leaf: int = 1,
                    penalty: float = 0.0, leaf_penalty: float | None = None) -> SolveResult:
    """Optimal tree by the plain recursion of Eq. 1 (same problem as :func:`odtmip.dp.solve_dp`).

    Returns a :class:`SolveResult` with ``solver="dp-reference"``, whose ``objective`` is recomputed from
    the tree (in the units of [OSDT] Eq. 4 when ``leaf_penalty`` is given) and ``stats["dp_value"]`` is the
    recursion's own value (errors + penalty x branch nodes).
    """
    if ((max_depth is not None and max_depth < 0) or (max_nodes is not None and max_nodes < 0) or min_leaf < 1
            or penalty < 0 or (leaf_penalty is not None and (leaf_penalty < 0 or penalty != 0))):
        raise OptionError("invalid limits for the reference DP")
    t0 = time.perf_counter()
    X = np.asarray(dataset.Xb, dtype=bool)
    y = dataset.y
    w = dataset.weights
    K = dataset.n_classes
    p = X.shape[1]
    total = float(w.sum())
    if leaf_penalty is not None:
        penalty = leaf_penalty * total
    tol = tie_tolerance(w, penalty, K)  # 0 for integer data: exact comparisons (module docstring of the solver)
    if max_depth is None:
        if penalty <= 0:
            raise OptionError("max_depth=None needs a positive penalty")
        counts = np.bincount(y, weights=w, minlength=K)
        # [OSDT] Theorem C.1 with the single leaf as the known tree
        max_depth = min(p, int((counts.sum() - counts.max() + tol) // penalty))

    def better(a: tuple, b: tuple) -> bool:
        """a < b in the order (objective, branch nodes), objectives within ``tol`` being equal."""
        return a[0] < b[0] - tol or (a[0] <= b[0] + tol and a[1] < b[1])

    def leaf_value(rows: tuple) -> tuple:
        if not rows:
            return (0.0, 0, ("leaf", 0))
        if len(rows) < min_leaf:
            return (math.inf, 0, None)
        idx = list(rows)
        counts = np.bincount(y[idx], weights=w[idx], minlength=K)
        label = int(np.argmax(counts))  # lowest class index among the largest weights
        return (float(counts.sum() - counts[label]), 0, ("leaf", label))

    @cache
    def T(rows: tuple, d: int, n: int) -> tuple:
        n = min(n, 2**d - 1)
        best = leaf_value(rows)
        if d == 0 or n == 0:
            return best
        for f in range(p):
            left = tuple(r for r in rows if not X[r, f])
            right = tuple(r for r in rows if X[r, f])
            for i in range(n):
                a = T(left, d - 1, i)
                b = T(right, d - 1, n - 1 - i)
                cand = (a[0] + b[0] + penalty, a[1] + b[1] + 1, (f, a[2], b[2]))
                if better(cand, best):
                    best = cand
        return best

    nodes = 2**max_depth - 1 if max_nodes is None else max_nodes
    value, n_nodes, structure = T(tuple(range(len(y))), max_depth, nodes)
    stats = {"dp_value": value, "dp_nodes": n_nodes, "subproblems": T.cache_info().currsize}
    if structure is None:
        return SolveResult("dp-reference", Status.INFEASIBLE, "solved", None, None, math.inf,
                           time.perf_counter() - t0, stats)

    def spec(s):
        if s[0] == "leaf":
            return leaf(s[1])
        return branch(dataset.split_of(s[0]), spec(s[1]), spec(s[2]))

    tree = dataset.new_tree(spec(structure))
    if leaf_penalty is None:
        objective = dataset.misclassifications(tree) + penalty * tree.n_branch_nodes
        bound = value
    else:
        objective = dataset.misclassifications(tree) / total + leaf_penalty * tree.n_leaves
        bound = (value + penalty) / total
    return SolveResult("dp-reference", Status.OPTIMAL, "solved", tree, float(objective), float(bound),
                       time.perf_counter() - t0, stats)
