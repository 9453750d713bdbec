"""The DP for small problems, without compiling anything: MurTree's depth-two solver as matrix products.

:func:`solve_pairwise` solves the problem of :func:`odtmip.dp.solve_dp` (see :mod:`odtmip.dp.solver`: depth and
branch-node limits, ``min_leaf``, a penalty per branch node or per leaf, sample weights, K classes) and returns
the same answer: an optimal tree with the fewest branch nodes among the optimal ones, its objective recomputed by
routing. It is written in numpy only, so it runs at once in a new environment, where the compiled search first
spends about 20 seconds compiling its kernels. :func:`odtmip.dp.solve_dp` hands it the problems it finishes in
a few hundredths of a second (:func:`suits`); tests compare it with the compiled search and with brute force.

**Depth two** ([MurTree] §4.3). For a set D of rows, the class weights of the rows with column i present,
F_c(i), and with columns i and j both present, F_c(i, j), give the class weights of every cell of every pair of
splits by inclusion and exclusion::

    i present, j present:  F_c(i, j)              i absent, j present:  F_c(j) - F_c(i, j)
    i present, j absent:   F_c(i) - F_c(i, j)     i absent, j absent:   F_c - F_c(i) - F_c(j) + F_c(i, j)

MurTree counts them row by row; here, with X_D the 0/1 columns of D and w_c the weights of class c (0 on rows of
other classes), they are matrix products::

    F_c(., .) = X_D^T diag(w_c) X_D,          F_c(.) = X_D^T w_c,

plus the same products of unit weights for the row counts that ``min_leaf`` reads. Every cell's leaf cost
(its weight minus its largest class weight) then gives, by minima over the rows of these matrices, the best
depth-one tree below each side of each root split, and so the best tree of depth <= 2 for every branch-node
budget 0..3 at once: O(K n m^2) for the n rows of D and m columns, in a few calls to BLAS.

**Above depth two**: Eq. 1 of [MurTree], as in :mod:`odtmip.dp.reference`, memoised on (rows, depth, budget),
with the greedy tree of :mod:`odtmip.dp.anytime` as the first incumbent; a split is dropped once its first
child's optimum plus the penalty exceeds the best tree found. Objectives compare as in the compiled search
(:func:`~odtmip.dp.common.tie_tolerance`): exactly for integer data. The columns are those of the compiled search
(:func:`~odtmip.dp.common.encode_columns`): constant columns dropped, duplicates and complements merged.

References
----------
.. [MurTree] see :mod:`odtmip.dp.solver`.
"""

from __future__ import annotations

import math
import time

import numpy as np

from odtmip.core.data import Dataset
from odtmip.core.results import SolveResult, Status, stopped_status
from odtmip.dp.anytime import greedy_tree
from odtmip.dp.common import (
    encode_columns,
    equivalent_minority,
    internal_spec,
    one_blas_thread,
    reported,
    routed_objective,
    tie_tolerance,
    verify_tree,
)

#: Deepest tree solved here; deeper trees need the compiled search's bounds.
MAX_DEPTH = 4
#: :func:`suits` accepts a problem whose estimated run time (:func:`estimated_seconds`) is at most this: once the
#: compiled search is compiled it solves these problems in milliseconds, so repeated fits (cross-validation) lose
#: at most about this much each, against a compile of about 20 s saved on the first.
BUDGET_SECONDS = 0.04
#: :func:`suits` accepts a problem whose arrays (:func:`estimated_memory_gib`) take at most this many GiB.
BUDGET_GIB = 0.125
#: Calibration of :func:`estimated_seconds`: seconds per depth-two call, and per multiply-add of its products
#: (measured on two cores: the estimate was 1-10 times the run time on the binary benchmark sets at depths 2-4).
CALL_SECONDS, FLOP_SECONDS = 4e-4, 2e-10


def estimated_seconds(n: int, m: int, n_classes: int, depth: int) -> float:
    """Rough run time of :func:`solve_pairwise` on ``n`` rows, ``m`` columns and ``n_classes`` classes at ``depth``:
    the depth-two calls times their cost. With L = depth - 2 levels above depth two there are (2m)^L paths of L
    splits, and the L! orders of the same splits reach the same rows (the memo solves those once); the rows halve
    per level."""
    levels = max(depth - 2, 0)
    calls = (2 * m) ** levels / math.factorial(levels)
    rows = n / 2**levels
    return calls * (CALL_SECONDS + FLOP_SECONDS * (n_classes + 1) * rows * m * m)


def estimated_memory_gib(n: int, m: int, n_classes: int) -> float:
    """GiB of the largest arrays of a depth-two call on ``n`` rows and ``m`` columns: the rows' columns times their
    class weights (n x m x (K+1)), and the cells of all split pairs with their leaf costs (about 6 m^2 (K+1))."""
    return 8 * (n * m * (n_classes + 2) + 6 * m * m * (n_classes + 1)) / 2**30


def suits(dataset: Dataset, max_depth: int | None, memory_limit: float | None = None) -> bool:
    """Whether :func:`odtmip.dp.solve_dp` solves this problem here: a depth limit of at most :data:`MAX_DEPTH`, an
    estimated run time of at most :data:`BUDGET_SECONDS` and arrays of at most :data:`BUDGET_GIB` and
    ``memory_limit`` GiB (the columns counted before merging)."""
    if max_depth is None or max_depth > MAX_DEPTH:
        return False
    (n, m), K = dataset.Xb.shape, dataset.n_classes
    gib = estimated_memory_gib(n, m, K)
    return (estimated_seconds(n, m, K, max_depth) <= BUDGET_SECONDS and gib <= BUDGET_GIB
            and (memory_limit is None or gib <= memory_limit))


def leaf_costs(v: np.ndarray, n_classes: int, min_leaf: int) -> tuple[np.ndarray, np.ndarray]:
    """Leaf cost and label of count vectors ``v`` (..., K+1: the class weights, then the row count): the weight
    minus the largest class weight (0 for no rows, inf for fewer than ``min_leaf`` rows) and the class of largest
    weight, ties to the lowest index."""
    weights, rows = v[..., :n_classes], v[..., n_classes]
    label = weights.argmax(axis=-1)
    cost = weights.sum(axis=-1) - np.take_along_axis(weights, label[..., None], axis=-1)[..., 0]
    cost = np.where(rows < min_leaf, math.inf, cost)
    return np.where(rows == 0, 0.0, cost), label


def cell_costs(X: np.ndarray, Y: np.ndarray, n_classes: int, min_leaf: int, labels: bool = False):
    """The leaves of every split and pair of splits of the rows ``X`` (0/1 columns, float) with count vectors ``Y``
    (class weights, then 1), by the products of the module docstring: ``side_cost[a, i]``, the leaf of side a of
    split i (0 absent, 1 present), and ``cost[2a + b, i, j]``, the leaf of side a of split i and side b of split j;
    with ``labels`` each as a (cost, label) pair."""
    n, m = X.shape
    total = Y.sum(axis=0)  # F
    present = X.T @ Y  # F(i): (m, K+1)
    absent = total - present
    pair = (X.T @ (X[:, :, None] * Y[:, None, :]).reshape(n, -1)).reshape(m, m, -1)  # F(i, j)
    cells = leaf_costs(np.stack([absent[:, None] - present[None, :] + pair, present[None, :] - pair,
                                 present[:, None] - pair, pair]), n_classes, min_leaf)
    sides = leaf_costs(np.stack([absent, present]), n_classes, min_leaf)
    return (sides, cells) if labels else (sides[0], cells[0])


class _Stopped(Exception):
    """The deadline passed inside the recursion."""


class _Search:
    """Eq. 1 over the rows of ``X`` (internal 0/1 columns), with the depth-two solver of the module docstring.

    Values are triples (cost, branch nodes, spec): cost = errors + penalty x branch nodes, spec a class index or
    ``(feature, absent spec, present spec)`` over internal features, None when infeasible (cost inf).
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int, min_leaf: int, penalty: float,
                 tol: float, deadline: float):
        self.X, self.K, self.min_leaf, self.penalty, self.tol = X, n_classes, min_leaf, penalty, tol
        self.deadline = deadline
        # class weights, then the row count: the columns of every "count" vector below
        self.Y = np.zeros((len(y), n_classes + 1))
        self.Y[np.arange(len(y)), y] = w
        self.Y[:, n_classes] = 1.0
        self.memo: dict = {}
        self.depth_two_calls = 0
        self.nodes = 0
        self.incumbent = None  # best root tree finished so far: (cost, nodes, spec)

    # ---------------------------------------------------------------- leaves
    def leaf(self, rows: np.ndarray) -> tuple:
        """The leaf of ``rows`` as a value (cost, 0, class index), or (inf, 0, None)."""
        cost, label = leaf_costs(self.Y[rows].sum(axis=0), self.K, self.min_leaf)
        return (float(cost), 0, int(label) if math.isfinite(cost) else None)

    def better(self, a: tuple, b: tuple) -> bool:
        """a < b in the order (objective, branch nodes), objectives within ``tol`` being equal."""
        return a[0] < b[0] - self.tol or (a[0] <= b[0] + self.tol and a[1] < b[1])

    def lexmin(self, cost: np.ndarray, nodes: np.ndarray) -> int:
        """Index of the least (cost, nodes), costs within ``tol`` being equal; ties to the lowest index."""
        near = cost <= cost.min() + self.tol
        return int(np.flatnonzero(near & (nodes == nodes[near].min()))[0])

    # ---------------------------------------------------------------- depth two
    def depth_two(self, rows: np.ndarray) -> dict:
        """Optimal trees of the rows for the budgets (depth, branch nodes) (1, 0..1) and (2, 0..3)."""
        if time.perf_counter() > self.deadline:
            raise _Stopped
        self.depth_two_calls += 1
        root = self.leaf(rows)
        Xd, Yd = self.X[rows].astype(np.float64), self.Y[rows]
        m = Xd.shape[1]
        if m == 0:
            return dict.fromkeys(((1, 0), (1, 1), (2, 0), (2, 1), (2, 2), (2, 3)), root)
        pen, tol = self.penalty, self.tol
        (side_cost, side_label), (cost, label) = cell_costs(Xd, Yd, self.K, self.min_leaf, labels=True)
        # the best tree of <= 1 branch node below each side of each root split i: a leaf, or a split on j != i
        split = cost[0::2] + cost[1::2] + pen  # (2, m, m)
        split[:, np.arange(m), np.arange(m)] = math.inf
        j = split.argmin(axis=2)  # ties to the lowest column
        best = np.take_along_axis(split, j[..., None], axis=2)[..., 0]
        use = best < side_cost - tol  # a split must beat the leaf, which has one branch node less
        c_cost, c_nodes, c_split = np.where(use, best, side_cost), use.astype(np.int64), np.where(use, j, -1)

        def spec(i: int, below: tuple) -> tuple:
            """Root split i with, on side a, a split on below[a] into two leaves, or a leaf if below[a] < 0."""
            return (i, *(side_label[a, i] if k < 0 else (k, label[2 * a, i, k], label[2 * a + 1, i, k])
                         for a, k in enumerate(below)))

        def pick(cost: np.ndarray, nodes: np.ndarray, below) -> tuple:
            """The root's leaf, or the best root split i whose sides split on ``below(i)``, if it is better."""
            i = self.lexmin(cost, nodes)
            cand = (float(cost[i]), int(nodes[i]))
            return (*cand, spec(i, below(i))) if self.better(cand, root) else root

        stump = pick(side_cost[0] + side_cost[1] + pen, np.ones(m, dtype=np.int64), lambda i: (-1, -1))
        # two branch nodes: the root and the better of a split below its absent side or below its present side
        left, right = c_cost[0] + side_cost[1], side_cost[0] + c_cost[1]
        take_left = (left < right - tol) | ((left <= right + tol) & (c_nodes[0] < c_nodes[1]))
        two = pick(np.where(take_left, left, right) + pen, 1 + np.where(take_left, c_nodes[0], c_nodes[1]),
                   lambda i: (c_split[0, i], -1) if take_left[i] else (-1, c_split[1, i]))
        three = pick(c_cost[0] + c_cost[1] + pen, 1 + c_nodes[0] + c_nodes[1], lambda i: tuple(c_split[:, i]))
        return {(1, 0): root, (1, 1): stump, (2, 0): root, (2, 1): stump, (2, 2): two, (2, 3): three}

    # ---------------------------------------------------------------- Eq. 1
    def solve(self, rows: np.ndarray, d: int, n: int, is_root: bool = False) -> tuple:
        """Optimal tree of ``rows`` with depth <= d and <= n branch nodes."""
        n = min(n, (1 << d) - 1)
        d = min(d, n)
        if d == 0:
            return self.leaf(rows)
        if d <= 2:
            key = rows.tobytes()
            if key not in self.memo:
                self.memo[key] = self.depth_two(rows)
            return self.memo[key][d, n]
        key = (rows.tobytes(), d, n)
        if key in self.memo:
            return self.memo[key]
        self.nodes += 1
        best = self.leaf(rows)
        if is_root and self.incumbent is not None and self.better(self.incumbent, best):
            best = self.incumbent
        cap = (1 << (d - 1)) - 1
        for f in range(self.X.shape[1]):
            if not self.better((self.penalty, 1), best):
                break  # every split costs at least (penalty, 1 branch node)
            has = self.X[rows, f].astype(bool)
            sides = rows[~has], rows[has]
            if len(sides[0]) < self.min_leaf or len(sides[1]) < self.min_leaf:
                continue  # an empty side is a degenerate split ([MurTree] Prop. 4.2); a small one is infeasible
            for i in range(max(0, n - 1 - cap), min(cap, n - 1) + 1):
                a = self.solve(sides[0], d - 1, i)
                if a[0] + self.penalty > best[0] + self.tol:
                    continue
                b = self.solve(sides[1], d - 1, n - 1 - i)
                cand = (a[0] + b[0] + self.penalty, a[1] + b[1] + 1, (f, a[2], b[2]))
                if self.better(cand, best):
                    best = cand
                    if is_root:
                        self.incumbent = best
        self.memo[key] = best
        return best


def solve_pairwise(dataset: Dataset, max_depth: int = 3, max_nodes: int | None = None, min_leaf: int = 1,
                   penalty: float = 0.0, leaf_penalty: float | None = None,
                   time_limit: float | None = None) -> SolveResult:
    """Optimal tree of depth <= ``max_depth`` (at most :data:`MAX_DEPTH`) by the recursion of the module docstring.

    The parameters mean what they mean in :func:`odtmip.dp.solve_dp`, which checks them and calls this for the
    problems :func:`suits` accepts. Returns ``solver="dp"`` with ``stats["engine"] = "pairwise"``. At the time
    limit the best tree known (the greedy tree of :mod:`odtmip.dp.anytime`, or a better root tree found since)
    is returned with ``Status.TIME_LIMIT`` and the equivalent-points bound ([OSDT] Theorem B.2).
    """
    t0 = time.perf_counter()
    enc = encode_columns(dataset.Xb, merge=True)
    prep = time.perf_counter() - t0
    y, w, K = np.asarray(dataset.y, dtype=np.int64), dataset.weights, dataset.n_classes
    total = float(np.sum(w))
    if leaf_penalty is not None:
        penalty = leaf_penalty * total
    tol = tie_tolerance(w, penalty, K)
    deadline = math.inf if time_limit is None else t0 + time_limit
    search = _Search(enc.X, y, w, K, min_leaf, penalty, tol, deadline)
    stats = {"engine": "pairwise", "features": enc.X.shape[1], "features_raw": int(dataset.Xb.shape[1]),
             "tolerance": tol, "depth_bound": max_depth, "preprocess_seconds": prep}
    if leaf_penalty is not None:
        stats["leaf_penalty"] = leaf_penalty

    def result(stop: Status, value: tuple, bound: float) -> SolveResult:
        """The result of the best tree ``value`` when ``stop`` ended the search (OPTIMAL: it finished) with the
        lower bound ``bound``; a stopped search whose tree meets it proved it optimal, though not the one with the
        fewest branch nodes (:func:`~odtmip.core.results.stopped_status`)."""
        stats.update(nodes=search.nodes, depth_two_calls=search.depth_two_calls,
                     search_seconds=time.perf_counter() - t0)
        if value[2] is None:
            return SolveResult("dp", Status.INFEASIBLE, "solved", None, None, math.inf, time.perf_counter() - t0, stats)
        tree = dataset.new_tree(internal_spec(dataset, enc, value[2]))
        verify_tree(dataset, tree, value[0], penalty, min_leaf, max_depth, n_nodes)
        objective = routed_objective(dataset, tree, penalty, leaf_penalty, total)
        status = stopped_status(stop, value[0], bound, tol)
        if status is Status.OPTIMAL and stop is not Status.OPTIMAL:
            stats["fewest_nodes_proven"] = False
        bound = objective if status is Status.OPTIMAL else reported(min(bound, value[0]), penalty, leaf_penalty, total)
        return SolveResult("dp", status, stop.value, tree, float(objective), bound, time.perf_counter() - t0, stats)

    n_nodes = (1 << max_depth) - 1 if max_nodes is None else min(max_nodes, (1 << max_depth) - 1)
    rows = np.arange(len(y))
    with one_blas_thread():  # the products are small: BLAS threads only wait for each other
        try:
            if max_depth >= 3:  # the greedy tree: the first incumbent, and the answer if the deadline comes first

                def terminal(r: np.ndarray, depth: int):
                    try:
                        cost, nodes, spec = search.solve(np.asarray(r, dtype=np.int64), depth, (1 << depth) - 1)
                    except _Stopped:
                        return None  # past the deadline: CART's split (odtmip.dp.anytime)
                    return (spec, cost, nodes) if spec is not None else None

                g = greedy_tree(enc.X, y, w, K, max_depth, min_leaf, penalty, tol, terminal)
                if 0 < g.nodes <= n_nodes:
                    search.incumbent = (g.cost, g.nodes, g.spec)
                    stats["greedy_objective"] = reported(g.cost, penalty, leaf_penalty, total)
            best = search.solve(rows, max_depth, n_nodes, is_root=True)
        except _Stopped:
            root = search.leaf(rows)
            best = search.incumbent if search.incumbent is not None and search.better(search.incumbent, root) else root
            equivalent = float(w[equivalent_minority(enc.X, y, w, K)].sum())
            return result(Status.TIME_LIMIT, best, equivalent)
        return result(Status.OPTIMAL, best, best[0])
