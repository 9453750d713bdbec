"""The least objective below each split: the DP's bounds for the rows of a MIP model (``dp_bounds``).

For a set S of rows, a depth d and a binary column s, let

    V_d(S, s) = least objective of a tree on S of depth <= d whose root splits on s,
    OPT_d(S)  = least objective of any tree on S of depth <= d,

the objective being that of :func:`odtmip.dp.solve_dp`: weighted errors + ``penalty`` x branch nodes, every
non-empty leaf holding at least ``min_leaf`` rows (an empty leaf costs 0). Then ([MurTree] Eq. 1)

    V_d(S, s) = OPT_{d-1}(S_0) + OPT_{d-1}(S_1) + penalty,     OPT_d(S) = min(leaf(S), min_s V_d(S, s)),

S_0 and S_1 the rows of S without and with column s. A split that leaves one side empty (a *degenerate* split:
every row goes one way, as a MIP model may choose) is given ``V_d(S, s) = OPT_{d-1}(S)``, the penalty left out: a
lower bound on every tree whose root splits on s, since its rows all meet a subtree of depth <= d-1.

:func:`split_values` computes, for the rows of a dataset, ``V_d`` of every column (``root``), ``OPT_{d-1}`` (the
root splitting trivially or not at all, ``below``) and one leaf; with ``paths`` also one level down: for every
column s and side a, ``OPT_{d-1}(S_a)``, ``OPT_{d-2}(S_a)``, one leaf and ``V_{d-1}(S_a, s')`` of every column s',
and ``V_{d-1}(S, s)`` of every column. A MIP model
turns them into rows ("the loss is at least the value of the root's choice", :mod:`odtmip.models.view`).

How they are computed: at depths one and two, all columns at once from the class weights of the rows with
column i present and with columns i and j both present (MurTree's depth-two counts, as matrix products, see
:mod:`odtmip.dp.pairwise`); deeper, each child's optimum by :func:`odtmip.dp.solve.solve_dp` (the compiled search,
its pruning and its cache). Values are exact (integer data: exactly; real weights: up to the DP's rounding
tolerance, :func:`~odtmip.dp.common.tie_tolerance`). At the time limit the values not yet computed are replaced by
valid lower bounds (a proper split costs at least ``penalty``, anything at least 0) and ``complete`` is False.

:func:`target_values` does the same for a sensitivity/specificity target, from the (fp, fn) fronts of each side.

References
----------
.. [MurTree] see :mod:`odtmip.dp.solver`.
.. [DS21] see :mod:`odtmip.dp.pareto`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from odtmip.core.data import Dataset
from odtmip.core.exceptions import OptionError
from odtmip.dp.common import one_blas_thread
from odtmip.dp.pairwise import cell_costs, leaf_costs

#: Deepest tree whose per-split values are computed here (the children of depth 4 are DP solves of depth 3).
MAX_DEPTH = 4


@dataclass
class SplitValues:
    """The values of :func:`split_values` for the rows of one dataset (the DP's objective units).

    ``root[s]`` is V_d(S, s) and ``below`` OPT_{d-1}(S); ``leaf`` is one leaf's cost (inf with fewer than
    ``min_leaf`` rows). With ``paths``: ``child[s, a]`` = OPT_{d-1}(S_a), ``child_below[s, a]`` = OPT_{d-2}(S_a)
    ``child_root[s, a, s']`` = V_{d-1}(S_a, s') and ``child_leaf[s, a]`` = one leaf of S_a, side a = 0 without
    column s, 1 with it; ``empty[s, a]`` tells that S_a has no rows; ``root_shallow[s]`` = V_{d-1}(S, s).
    """

    depth: int
    leaf: float
    below: float
    root: np.ndarray
    child: np.ndarray | None = None
    child_below: np.ndarray | None = None
    child_root: np.ndarray | None = None
    child_leaf: np.ndarray | None = None
    root_shallow: np.ndarray | None = None
    empty: np.ndarray | None = None
    complete: bool = True
    stats: dict = field(default_factory=dict)

    @property
    def optimum(self) -> float:
        """OPT_d(S): the best of one leaf and every root split (not below the best tree of a smaller depth)."""
        return float(min(self.leaf, self.below, self.root.min(initial=math.inf)))


class _Values:
    """V and OPT over subsets of the rows of one dataset (see the module docstring)."""

    def __init__(self, dataset: Dataset, penalty: float, min_leaf: int, deadline: float):
        self.dataset = dataset
        self.X = np.asarray(dataset.Xb, dtype=np.float64)
        self.K = dataset.n_classes
        # class weights, then the row count (the columns of every count vector)
        self.Y = np.zeros((dataset.n_samples, self.K + 1))
        self.Y[np.arange(dataset.n_samples), dataset.y] = dataset.weights
        self.Y[:, self.K] = 1.0
        self.penalty, self.min_leaf, self.deadline = penalty, min_leaf, deadline
        self.solves = 0
        self.stopped = False
        self.memo: dict = {}  # (rows, d) -> V_d and OPT_{d-1} at depths 1-2: the root's pass and the paths' share them

    def leaf(self, rows: np.ndarray) -> float:
        return float(leaf_costs(self.Y[rows].sum(axis=0), self.K, self.min_leaf)[0])

    def late(self) -> bool:
        self.stopped = self.stopped or time.perf_counter() > self.deadline
        return self.stopped

    def values(self, rows: np.ndarray, d: int) -> tuple[np.ndarray, float]:
        """(V_d(rows, s) for every column s, OPT_{d-1}(rows))."""
        m = self.X.shape[1]
        if len(rows) == 0:
            return np.zeros(m), 0.0
        if d <= 2:
            return self._shallow(rows, d)
        below = self.optimum(rows, d - 1)
        out = np.empty(m)
        present = self.X[rows] > 0
        for s in range(m):
            side = present[:, s]
            if side.all() or not side.any():
                out[s] = below
            else:
                out[s] = self.optimum(rows[~side], d - 1) + self.optimum(rows[side], d - 1) + self.penalty
        return out, below

    def optimum(self, rows: np.ndarray, d: int) -> float:
        """OPT_d(rows); past the deadline a valid lower bound (0, or the DP's bound where it stopped)."""
        if len(rows) == 0:
            return 0.0
        if d == 0:
            return self.leaf(rows)
        if self.late():
            return 0.0
        if d <= 2:
            v, below = self._shallow(rows, d)
            return float(min(self.leaf(rows), below, v.min(initial=math.inf)))
        from odtmip.dp.solve import solve_dp

        self.solves += 1
        left = max(self.deadline - time.perf_counter(), 1e-3) if math.isfinite(self.deadline) else None
        result = solve_dp(self.dataset.subset(rows), max_depth=d, min_leaf=self.min_leaf, penalty=self.penalty,
                          time_limit=left)
        if result.tree is None:  # no tree meets min_leaf
            return math.inf
        return float(result.objective if result.status.value == "optimal" else result.bound)

    def _shallow(self, rows: np.ndarray, d: int) -> tuple[np.ndarray, float]:
        """V_1 or V_2 of every column at once, from the depth-two counts (memoised)."""
        key = (rows.tobytes(), d)
        if key not in self.memo:
            self.memo[key] = self._counted(rows, d)
        return self.memo[key]

    def _counted(self, rows: np.ndarray, d: int) -> tuple[np.ndarray, float]:
        self.solves += 1
        X, Y = self.X[rows], self.Y[rows]
        n_side = np.stack([len(rows) - X.sum(axis=0), X.sum(axis=0)])  # rows on each side of each column
        degenerate = (n_side == 0).any(axis=0)
        leaf = self.leaf(rows)
        if d == 1:  # the sides' leaves only: F(i) and F - F(i)
            present = X.T @ Y
            side_cost = leaf_costs(np.stack([Y.sum(axis=0) - present, present]), self.K, self.min_leaf)[0]
            return np.where(degenerate, leaf, side_cost[0] + side_cost[1] + self.penalty), leaf
        side_cost, cost = cell_costs(X, Y, self.K, self.min_leaf)  # (2, m), (4, m, m)
        # the best tree of depth <= 1 on each side of each root column i: its leaf or a split on j (a degenerate
        # split on j costs its side's leaf plus the penalty, never less than the leaf)
        split = cost[0::2] + cost[1::2] + self.penalty  # (2, m, m)
        depth_one = np.minimum(side_cost, split.min(axis=2))
        below = float(min(leaf, np.where(degenerate, leaf, side_cost[0] + side_cost[1] + self.penalty).min()))
        return np.where(degenerate, below, depth_one[0] + depth_one[1] + self.penalty), below


def _check_depth(depth) -> None:
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or not 1 <= depth <= MAX_DEPTH:
        raise OptionError(f"the DP's split bounds are computed at depths 1 to {MAX_DEPTH}, got {depth!r}")


def split_values(dataset: Dataset, depth: int, penalty: float = 0.0, min_leaf: int = 1, paths: bool = False,
                 time_limit: float | None = None) -> SplitValues:
    """V_depth of every binary column of ``dataset``, and with ``paths`` the values one level down (see the module
    docstring). ``depth`` lies in 1..:data:`MAX_DEPTH`; ``paths`` needs ``depth >= 2``."""
    _check_depth(depth)
    if paths and depth < 2:
        raise OptionError("the bounds one level down (paths) need a depth >= 2")
    t0 = time.perf_counter()
    deadline = math.inf if time_limit is None else t0 + time_limit
    with one_blas_thread():
        out = _split_values(dataset, depth, float(penalty), int(min_leaf), paths, deadline)
    out.stats["seconds"] = time.perf_counter() - t0
    return out


def _split_values(dataset: Dataset, depth: int, penalty: float, min_leaf: int, paths: bool,
                  deadline: float) -> SplitValues:
    v = _Values(dataset, penalty, min_leaf, deadline)
    rows = np.arange(dataset.n_samples)
    root, below = v.values(rows, depth)
    out = SplitValues(depth, v.leaf(rows), below, root)
    if paths:
        m = v.X.shape[1]
        present = v.X > 0
        out.child = np.zeros((m, 2))
        out.child_below = np.zeros((m, 2))
        out.child_root = np.zeros((m, 2, m))
        out.child_leaf = np.zeros((m, 2))
        out.empty = np.zeros((m, 2), dtype=bool)
        out.root_shallow, _ = v.values(rows, depth - 1)
        for s in range(m):
            for a in (0, 1):
                side = rows[present[:, s] == bool(a)]
                out.empty[s, a] = len(side) == 0
                out.child_leaf[s, a] = v.leaf(side) if len(side) else 0.0
                if v.late():
                    out.child_root[s, a] = 0.0  # a valid bound; the rows with it are useless, not wrong
                    continue
                out.child_root[s, a], out.child_below[s, a] = v.values(side, depth - 1)
                out.child[s, a] = min(v.leaf(side) if len(side) else 0.0, out.child_below[s, a],
                                      out.child_root[s, a].min(initial=math.inf))
    if v.stopped:  # values computed after the deadline are valid lower bounds, not the optimum
        out.complete = False
    out.stats = {"solves": v.solves, "columns": int(dataset.Xb.shape[1])}
    return out


def target_values(dataset: Dataset, depth: int, two_class: dict, time_limit: float | None = None) -> SplitValues:
    """V_d of every binary column of ``dataset`` for a two-class target (``two_class``: ``min_specificity`` or
    ``min_sensitivity``, and ``positive``, as the DP takes them): the loss is the missed weight (false negatives under
    a specificity floor, false positives under a sensitivity floor) of a tree that meets the floor, which does not add
    up over the subtrees. A tree whose root splits on s has (fp, fn) = the sum of a point of each side's front of
    depth d - 1 ([DS21]: every tree's pair is dominated by a front point, :class:`odtmip.dp.pareto.ParetoSolver`),
    so V_d(S, s) is the least loss over pairs of front points whose sum meets the floor (inf: none does). A split
    that sends every row one way, ``below`` and ``leaf`` come from the fronts of all rows. Past the time limit the
    values left are 0, a valid bound. No ``paths``."""
    from odtmip.dp.pareto import ParetoSolver, objective_of

    _check_depth(depth)
    t0 = time.perf_counter()
    deadline = math.inf if time_limit is None else t0 + time_limit
    positive = two_class.get("positive")
    caps = {k: two_class[k] for k in ("min_specificity", "min_sensitivity") if two_class.get(k) is not None}
    whole = ParetoSolver(dataset, positive=positive)
    goal = objective_of(dataset, whole.positive_index, **caps)
    solves = 0

    def front(rows: np.ndarray, d: int) -> np.ndarray:
        nonlocal solves
        if len(rows) == 0:
            return np.zeros((1, 2))
        solves += 1
        solver = whole if len(rows) == dataset.n_samples else ParetoSolver(dataset.subset(rows), positive=positive)
        return np.array(solver.front(max_depth=d).pairs, dtype=float).reshape(-1, 2)

    def least(points: np.ndarray) -> float:
        inside = (points[:, 0] <= goal.fp_cap + 1e-9) & (points[:, 1] <= goal.fn_cap + 1e-9)
        missed = points[:, 1] if goal.name == "false-negatives" else points[:, 0]
        return float(missed[inside].min(initial=math.inf))

    rows = np.arange(dataset.n_samples)
    below = least(front(rows, depth - 1))
    leaf = least(front(rows, 0))
    X = np.asarray(dataset.Xb) > 0
    root = np.zeros(X.shape[1])
    complete = True
    for s in range(X.shape[1]):
        side = X[:, s]
        if side.all() or not side.any():
            root[s] = below
        elif time.perf_counter() > deadline:
            complete = False  # 0: a valid bound
        else:
            a, b = front(rows[~side], depth - 1), front(rows[side], depth - 1)
            root[s] = least((a[:, None, :] + b[None, :, :]).reshape(-1, 2))
    out = SplitValues(depth, leaf, below, root, complete=complete)
    out.stats = {"solves": solves, "columns": int(X.shape[1]), "seconds": time.perf_counter() - t0}
    return out
