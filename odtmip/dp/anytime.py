"""The first incumbent of the DP and of ConTree: a greedy tree with optimal depth-two bottoms (depth-three ones at
depth >= 5), built before the search starts.

A search stopped by its time limit returns the best tree it knows ([MurTree] §10). Without this module that
is the single leaf until a whole root configuration finished, which on wide data or at depth >= 5 takes longer
than the limit. :func:`grow_greedy` builds, in a small part of the search's time (0.01-4.2 s on the ConTree
datasets at depths 4-6), a tree that is never worse than CART at the same depth on the same splits:

* the top levels, down to remaining depth 3, split like CART ([CART] §4.3): the split of largest weighted
  Gini decrease among those leaving ``min_leaf`` rows on each side; a pure node, or one without such a split,
  stays a leaf. The splits are the search's: 0/1 columns for the DP (:func:`greedy_tree`), every threshold of
  every ordered feature for ConTree (:func:`ordered_split`);
* at remaining depth <= 2 the subtree is the optimum of the search's depth-two solver ([MurTree] §4.3-4.4,
  [ConTree] Alg. 2), which is never worse than any other tree of that depth there, CART's included;
* bottom up, a subtree that does not beat its node's leaf lexicographically on (objective, branch nodes)
  is replaced by the leaf (the objective charges ``penalty`` per branch node, so this is cost-complexity
  pruning of [CART] §3.3 at the search's fixed penalty);
* a second tree is grown the same way except that each top node takes the root split of the optimal
  depth-two tree of its rows (a two-level lookahead, which sees interactions such as XOR that Gini misses),
  and the better of the two is the greedy tree. On the ConTree datasets at depths 4-6 the lookahead tree
  had fewer errors in 27 of 30 cases (segment at depth 5: 64 against 314; CART 401);
* at depth >= 5, where the search rarely finishes a root split within a minute on wide data, a last pass replaces
  each subtree of remaining depth 3 of the better tree (a leaf there too) by the best of itself and every candidate
  split with optimal depth-two children: for the DP every column, so the subtree becomes an optimal depth-three
  tree of its rows; for ConTree the best threshold of each feature. It costs about two depth-two solves per
  candidate and node (pruned when the first child alone cannot win) and stops at the search's deadline (for ConTree
  also when its cache is full), keeping the subtrees improved so far. It may add branch nodes, so the DP skips it
  under a node limit (``max_nodes`` < 2^depth - 1), which the greedy tree must meet to be used. On the binary DL8.5
  sets (those CART does not fit perfectly) the DP's greedy tree went from a median of 20 % fewer errors than CART
  to 38 % at depth 5, and from 30 % to 50 % at depth 6 (splice-1 at depth 5: 108 -> 102, CART 117; tic-tac-toe at
  depth 6: 25 -> 14, CART 49), in at most 1.4 s. ConTree's at depth 5 improved on 6 of the 7 continuous sets of up
  to 6,000 rows (fault: 427 -> 417 in 4.1 s instead of 0.8 s), and on four of them a 30 s search found nothing
  better. At depth 4 the pass would cost more than it saves: the search there mostly finishes within a second.

Under a time limit CART's tree (its splits at every level) is grown first and the splits of the first tree are
taken from it, so that a depth-two optimum cut short by the deadline falls back on a split already known, and the
lookahead tree stops where the deadline cuts it: the time limit waits for none of CART's splits. CART's tree itself
is the floor: a limit shorter than it is overrun. ConTree's splits are compiled
(:func:`~odtmip.dp._kernels._contree.cart_thresholds`): on 10^6 rows x 10 numeric columns the root's takes 0.46 s
(1.0 s in numpy) and CART's tree of depth 3 1.7 s.

The objective adds up over the nodes, so replacing CART's bottom subtrees by optima and pruning only lowers it:
with the same top splits, the first tree <= CART in errors + penalty x branch nodes, and the greedy tree is never
worse than the first (the last pass only replaces subtrees by better ones). (CART breaks exact ties between splits
in its own order; a different choice among tied splits may lead elsewhere.) The tree is an upper bound for the
search ([MurTree] §4.2) and, through the leaf-count bound ([OSDT] Theorem C.1), it caps the root's budget; a
stopped search returns it when it found nothing better.

**Bound passes** (:func:`rounds_and_passes`). The search for the optimum proves nothing about the root before it has
visited the last root split, so a search stopped before reports a lower bound of about 0. The DP and ConTree
therefore interleave it with bound passes, as IDA* raises its bound: the search for the optimum runs in rounds of
:data:`IMPROVE_NODES` search nodes, twice as many each round, and after each round a pass searches the root under an
upper bound B between the bound proven and the best tree (:func:`pass_target`). Under a low B every root split is
refuted with little work; a pass that finds no tree proves objective >= B (the DP: > B), and one that finds a tree
has found the optimum. A pass gets at most as many search nodes as the round before it (:data:`PASS_SHARE`) and,
stopped there, goes on after the next round (under a B from the bound and the best tree as they are then), so the
search for the optimum keeps at least half of the work and a pass too long for the time limit no longer holds back
the tree (diabetes at depth 6, 20 s: 66 errors as without passes, where a pass without that cap left 83). What
rounds and passes solve stays in the searches' cache, so each starts where the others left off; in total a proof
took 0-15 % longer with passes on the binary DL8.5 sets (german-credit at depth 5: 21.1 -> 24.2 s; it stops at 20 s
with bound 102 instead of 0). Where no pass finishes (wide data at depth >= 5, where one pass over the whole root
costs about as much as the proof) the bound stays that of the equivalent points.

References
----------
.. [CART] L. Breiman, J. H. Friedman, R. A. Olshen, C. J. Stone, "Classification and Regression Trees",
   Wadsworth, 1984.
.. [ConTree] see :mod:`odtmip.dp.contree`.
.. [MurTree] see :mod:`odtmip.dp.solver`.
.. [OSDT] see :mod:`odtmip.dp.solver`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from odtmip.dp._kernels._common import CNT_EQUIV, N_STATS, NO_NODE_LIMIT, S_NODES, S_TIMEOUT, gini_proxy
from odtmip.dp._kernels._depth2 import R_FEATURE, R_LEFT, R_NODES, R_RIGHT, solve_terminal

#: Search nodes of the first round of the search for the optimum before a bound pass; each round has twice as many.
IMPROVE_NODES = 1 << 14
#: Search nodes of a bound pass, as a share of the round before it.
PASS_SHARE = 1.0
#: Most bound passes that prove their bound per search, and (real objectives) the gap, relative to the incumbent,
#: below which none runs.
MAX_BOUND_PASSES = 6
PASS_GAP = 1 / 64
#: What a bound pass did (:func:`rounds_and_passes`): ended the search (found the optimum, or hit the time or
#: memory limit), proved its bound (found no tree), or stopped at its share of the nodes.
ENDED, PROVED, CAPPED = "ended", "proved", "capped"


def pass_target(lb: float, ub: float, first: bool, integral: bool) -> float | None:
    """The upper bound B of a bound pass: a quarter of the way from the proven bound ``lb`` to the incumbent ``ub``
    until a pass has proved its bound (``first``), halfway after; with ``integral`` objectives an integer below
    ``ub`` - 1 (the search for the optimum proves that bound itself). None: no pass is worth running."""
    target = lb + (0.25 if first else 0.5) * (ub - lb)
    if integral:
        target = math.floor(target)
        return float(target) if lb < target < ub - 1 else None
    return target if ub - lb > PASS_GAP * max(ub, 1.0) else None


def stopped_for_good(st: np.ndarray, cap: int, total_nodes: int, node_limit: int, deadline: float) -> bool:
    """Whether a round or pass whose statistics are ``st``, to stop after ``cap`` search nodes, stopped for good: at
    the deadline as its kernels read the clock (the interpreter's also ends when the compiled kernels are ready),
    or with ``total_nodes`` over the call's ``node_limit``; not at its cap, nor finished."""
    return bool(st[S_TIMEOUT]) and (st[S_NODES] <= cap or total_nodes > node_limit
                                    or time.perf_counter() >= deadline)


def can_stop(deadline: float, node_limit: int) -> bool:
    """Whether a limit may stop the search before its optimum: a deadline, or a node limit (tests). Only then do
    the rounds and bound passes run: a search that nothing stops ends with the optimum, and nobody reads the
    bounds the passes prove on the way (ConTree on 3000 rows x 10 numeric columns at depth 3: 16.4 s with them,
    10.0 s without)."""
    return math.isfinite(deadline) or node_limit < NO_NODE_LIMIT


def rounds_and_passes(search_round: Callable[[int], bool], bound_pass: Callable[[float, int], str],
                      target: Callable[[bool], float | None]) -> bool:
    """Rounds of the search for the optimum, each followed by a bound pass (module docstring).

    ``search_round(cap)`` runs the search for the optimum, stopping after ``cap`` search nodes, and returns True
    when it ended the search (finished it, or hit the time or memory limit); ``bound_pass(B, cap)`` searches the
    root under the upper bound B, stopping after ``cap`` search nodes, and returns :data:`ENDED`,
    :data:`PROVED` or :data:`CAPPED`. ``target(first)`` is the bound of the next pass (:func:`pass_target`;
    ``first``: no pass has proved its bound yet), None for no more passes. Returns True when a round or a pass
    ended the search; False: the caller runs the search for the optimum to the end.
    """
    cap, proved = IMPROVE_NODES, 0
    while proved < MAX_BOUND_PASSES:
        if search_round(cap):
            return True
        bound = target(proved == 0)
        if bound is None:
            return False
        done = bound_pass(bound, int(cap * PASS_SHARE))
        if done == ENDED:
            return True
        proved += done == PROVED
        cap = max(2 * cap, 1)
    return False


class Greedy(NamedTuple):
    """A tree over the search's own splits: ``spec`` is a class index (a leaf) or a tuple ``(split, left subtree,
    right subtree)`` (for the DP an internal feature, rows without it left; for ConTree a split code, rows
    above its threshold right); ``cost`` errors + penalty x branch nodes as the search counts it, ``nodes``
    its branch nodes, ``depth`` its depth."""

    spec: object
    cost: float
    nodes: int
    depth: int


def grow_greedy(y: np.ndarray, w: np.ndarray, n_classes: int, depth: int, min_leaf: int, penalty: float,
                tol: float, split, route, terminal=None, lookahead: bool = True, candidates=None,
                deadline: float = math.inf) -> Greedy:
    """Greedy tree of depth <= ``depth`` (module docstring): the better (lexicographically on objective, branch
    nodes) of two trees, one splitting its top levels like CART, and, with ``terminal``, one splitting each
    top node like the optimal depth-two tree of its rows (a lookahead of two levels; CART's split where that
    tree is a leaf or out of time). Both end in optimal depth-two subtrees; at depth >= 5, with ``candidates``,
    the better one's subtrees of remaining depth 3 are then improved (module docstring).

    Parameters
    ----------
    y, w : arrays (n,)
        Class indices 0..K-1 and sample weights.
    n_classes : int
        K.
    depth, min_leaf : int
        Depth limit and rows (unweighted) every leaf holds.
    penalty, tol : float
        Objective per branch node; objectives closer than ``tol`` are equal.
    split : callable
        ``split(rows, Y, counts)`` -> ``(split, right)``: CART's split of the rows (class weights ``Y``, one
        row each, one-hot times weight; ``counts`` their sum) and the boolean mask of the rows it sends right,
        or None when no split leaves ``min_leaf`` rows on both sides.
    route : callable
        ``route(split, rows)`` -> the boolean mask of the rows ``split`` sends right.
    terminal : callable, optional
        ``terminal(rows, depth)`` -> (spec, cost, nodes) of an optimal tree of depth <= 1 or 2 on the rows
        (the search's depth-two solver), or None when it ran out of time; without it, and when it gives
        None, CART's split is taken at every level.
    lookahead : bool
        Grow the second tree (with ``terminal``, at depth >= 3).
    candidates : callable, optional
        ``candidates(rows, Y, counts)`` -> the splits ``(split, right)`` the last pass tries at remaining
        depth 3 (with ``terminal``, at depth >= 5), each leaving ``min_leaf`` rows on both sides; without it
        there is no last pass.
    deadline : float, default=inf
        The ``time.perf_counter()`` value at which ``terminal`` starts returning None. When finite, CART's tree is
        grown first, so that what follows the deadline reuses its splits: the time limit does not wait for them.
    """
    onehot = np.zeros((len(y), n_classes))
    onehot[np.arange(len(y)), y] = w

    def better(a: Greedy, b: Greedy) -> bool:  # lexicographically on (objective, branch nodes)
        return a.cost < b.cost - tol or (a.cost <= b.cost + tol and a.nodes < b.nodes)

    def joined(head, left: Greedy, right: Greedy) -> Greedy:
        return Greedy((head, left.spec, right.spec), left.cost + right.cost + penalty, left.nodes + right.nodes + 1,
                      1 + max(left.depth, right.depth))

    carts: dict[tuple, object] = {}  # CART's split of each node of the first tree, by its path from the root

    def grow(rows: np.ndarray, r: int, ahead: bool, path: tuple = (), plain: bool = False) -> Greedy:
        # ``plain``: CART's splits at every level (no depth-two optima)
        counts = onehot[rows].sum(axis=0)
        label = int(np.argmax(counts))
        leaf = Greedy(label, float(counts.sum() - counts[label]), 0, 0)
        if r == 0 or len(rows) < 2 * min_leaf or leaf.cost == 0.0:
            return leaf
        if r <= 2 and terminal is not None and not plain:
            found = terminal(rows, r)
            if found is not None:
                return Greedy(*found, depth=min(found[2], r))
        found = None
        if ahead:
            two = terminal(rows, 2)
            if two is None:  # out of time: the rest would be CART's splits again (the first tree has them), which
                return leaf  # on 10^6 rows take seconds
            if isinstance(two[0], tuple):
                found = two[0][0], route(two[0][0], rows)
        elif path not in carts:
            carts[path] = split(rows, onehot[rows], counts)
        if found is None:
            found = split(rows, onehot[rows], counts) if ahead else carts[path]
        if found is None:
            return leaf
        head, right = found
        sub = joined(head, grow(rows[~right], r - 1, ahead, path + (0,), plain),
                     grow(rows[right], r - 1, ahead, path + (1,), plain))
        return sub if sub.cost < leaf.cost - tol else leaf  # lexicographically better than the leaf (0 nodes)

    def measured(spec, rows: np.ndarray) -> Greedy:  # a spec's objective by routing the rows
        if not isinstance(spec, tuple):
            counts = onehot[rows].sum(axis=0)
            return Greedy(spec, float(counts.sum() - counts[spec]), 0, 0)
        right = route(spec[0], rows)
        return joined(spec[0], measured(spec[1], rows[~right]), measured(spec[2], rows[right]))

    def three(rows: np.ndarray, best: Greedy) -> Greedy | None:
        # the best of ``best`` and of each candidate split with optimal depth-two children; None past the deadline
        Y = onehot[rows]
        for head, right in candidates(rows, Y, Y.sum(axis=0)):
            left = terminal(rows[~right], 2)
            if left is None:
                return None
            if left[1] + penalty > best.cost + tol:
                continue  # cannot beat, nor tie, the best so far
            other = terminal(rows[right], 2)
            if other is None:
                return None
            found = joined(head, Greedy(*left, depth=min(left[2], 2)), Greedy(*other, depth=min(other[2], 2)))
            if better(found, best):
                best = found
        return best

    late = False

    def deepen(spec, rows: np.ndarray, r: int) -> Greedy:
        # each subtree of remaining depth 3 (a leaf too) becomes the better of itself and of three(), until the
        # deadline
        nonlocal late
        if late or (r > 3 and not isinstance(spec, tuple)):
            return measured(spec, rows)
        if r == 3:
            tree = measured(spec, rows)
            if tree.cost <= tol:
                return tree
            found = three(rows, tree)
            late = found is None
            return tree if late else found
        right = route(spec[0], rows)
        return joined(spec[0], deepen(spec[1], rows[~right], r - 1), deepen(spec[2], rows[right], r - 1))

    rows = np.arange(len(y))
    # under a deadline CART's tree first, so that the deadline never waits for its splits (on 10^6 rows they take
    # seconds): a depth-two optimum cut short by the deadline then falls back on splits already known
    cart = grow(rows, depth, False, plain=True) if math.isfinite(deadline) and terminal is not None else None
    best = grow(rows, depth, False)
    if cart is not None and better(cart, best):  # no lower objective (same top splits), at most fewer branch nodes
        best = cart
    if lookahead and terminal is not None and depth >= 3 and best.cost > tol:
        looked = grow(rows, depth, True)
        if better(looked, best):
            best = looked
    if candidates is not None and terminal is not None and depth >= 5:
        best = deepen(best.spec, rows, depth)
    return best


def greedy_tree(X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int, depth: int, min_leaf: int,
                penalty: float, tol: float, terminal=None, lookahead: bool = True, last_pass: bool = True,
                deadline: float = math.inf) -> Greedy:
    """:func:`grow_greedy` on the 0/1 columns ``X`` (uint8 array (n, p), the DP's internal columns); a split is
    a column, the rows having it go right. ``last_pass``: at depth >= 5 the subtrees of remaining depth 3 become
    optimal depth-three trees (every column is a candidate)."""

    def route(f: int, rows: np.ndarray) -> np.ndarray:
        return X[rows, f] == 1

    def split(rows: np.ndarray, Y: np.ndarray, counts: np.ndarray):
        f = _cart_split(X[rows], Y, counts, min_leaf)
        return None if f < 0 else (f, route(f, rows))

    def candidates(rows: np.ndarray, Y: np.ndarray, counts: np.ndarray):
        Xr = X[rows]
        have = Xr.sum(axis=0, dtype=np.int64)
        for f in np.flatnonzero((have >= min_leaf) & (len(rows) - have >= min_leaf)):
            yield int(f), Xr[:, f] == 1

    return grow_greedy(y, w, n_classes, depth, min_leaf, penalty, tol, split, route, terminal, lookahead,
                       candidates if last_pass else None, deadline)


def ordered_split(order: np.ndarray, ranks: np.ndarray, offsets: np.ndarray, min_leaf: int, thresholds: Callable):
    """``split`` and ``candidates`` of :func:`grow_greedy` over ordered features, by CART's best threshold of each
    (``thresholds``: :func:`~odtmip.dp._kernels._contree.cart_thresholds`, compiled or interpreted): the split code
    ``offsets[f] + r`` sends right the rows of rank > r on f. ``split`` takes the best threshold of the best feature
    (ties to the first feature), ``candidates`` the best threshold of every feature."""

    def candidates(rows: np.ndarray, Y: np.ndarray, counts: np.ndarray):
        proxy, rank = thresholds(order, ranks, rows, Y, counts, min_leaf)
        for f in np.argsort(-proxy, kind="stable"):
            if proxy[f] == -np.inf:
                return
            yield int(offsets[f] + rank[f]), ranks[f, rows] > rank[f]

    def split(rows: np.ndarray, Y: np.ndarray, counts: np.ndarray):
        return next(candidates(rows, Y, counts), None)

    return split, candidates


#: Columns per block when the class weights of all columns are counted (bounds the float copy of the rows).
_BLOCK = 256


def _cart_split(Xr: np.ndarray, Yr: np.ndarray, counts: np.ndarray, min_leaf: int) -> int:
    """The column of largest weighted Gini decrease ([CART] §4.3) among those leaving ``min_leaf`` rows on each
    side of the rows ``Xr`` (uint8, 0/1) with class weights ``Yr`` (one-hot times weight); -1 if none.

    Gini decrease = G(parent) - (w_a G(absent) + w_p G(present)) / w with G = 1 - sum_c (w_c / w)^2, so its
    maximiser maximises sum_c w_ac^2 / w_a + sum_c w_pc^2 / w_p. Ties go to the lowest column.
    """
    m, p = Xr.shape
    rows_p = Xr.sum(axis=0, dtype=np.int64)
    ok = (rows_p >= min_leaf) & (m - rows_p >= min_leaf)
    if not ok.any():
        return -1
    present = np.empty((p, Yr.shape[1]))  # class weights of the rows with the column
    for j in range(0, p, _BLOCK):
        present[j:j + _BLOCK] = Xr[:, j:j + _BLOCK].T.astype(np.float64) @ Yr
    proxy = gini_proxy(present, counts[None, :] - present)
    proxy[~ok] = -np.inf
    return int(np.argmax(proxy))


def terminal_solver(data, scratch, prm, n_counts: int, solve=solve_terminal):
    """``terminal`` of :func:`greedy_tree` from the search's arrays: the depth-two solver on a set of rows.

    Parameters
    ----------
    data : Data
        The training rows (:class:`~odtmip.dp._kernels._common.Data`).
    scratch : Scratch
        The depth-two solver's arrays (their frequency counters stay consistent).
    prm : Params
        The search parameters; its deadline stops the solver (then ``terminal`` returns None, as every later call
        does). All calls count their work in one statistics record, so the solver reads the clock every few
        thousand word operations (its ``CLOCK_WORK``) however small each call is.
    n_counts : int
        Length of a class-weight vector (K + 1 + CNT_EQUIV).
    solve : callable
        The depth-two kernel: compiled, or its interpreted twin (:mod:`odtmip.dp._kernels._interpreted`).
    """
    n, K = data.labels.shape[0], prm.n_classes
    words = data.feature_bits.shape[1] if data.feature_bits.shape[0] else max(1, (n + 63) // 64)
    st = np.zeros(N_STATS, dtype=np.int64)

    def terminal(rows: np.ndarray, r: int):
        if st[S_TIMEOUT]:
            return None
        mask = np.zeros(words * 64, dtype=np.uint8)
        mask[rows] = 1
        D = np.packbits(mask, bitorder="little").view(np.uint64)
        cnt = np.zeros(n_counts)
        cnt[:K] = np.bincount(data.labels[rows], weights=data.weights[rows], minlength=K)
        cnt[K] = len(rows)
        cnt[K + CNT_EQUIV] = 0.0  # the depth-two solver does not read it
        solve(data, scratch, prm, st, D, cnt, r == 2)
        if st[S_TIMEOUT]:
            return None
        b = 0 if r == 1 else 2  # budgets (1, 1) and (2, 3)
        tree = scratch.result_tree[b]
        f, fl, fr = int(tree[R_FEATURE]), int(tree[R_LEFT]), int(tree[R_RIGHT])
        cost, nodes = float(scratch.result_cost[b]), int(tree[R_NODES])
        if f < 0:
            return int(np.argmax(cnt[:K])), cost, 0
        return (f, _split_leaves(data, rows, f, fl, False, K), _split_leaves(data, rows, f, fr, True, K)), cost, nodes

    return terminal


def _split_leaves(data, rows: np.ndarray, f: int, g: int, present: bool, K: int):
    """Spec of the child ``present`` of root ``f`` over ``rows``: a leaf, or a split on ``g`` into two leaves."""
    side = rows[_has(data, rows, f) == present]
    if g < 0:
        return _majority(data, side, K)
    has_g = _has(data, side, g)
    return (g, _majority(data, side[~has_g], K), _majority(data, side[has_g], K))


def _has(data, rows: np.ndarray, f: int) -> np.ndarray:
    """Whether each row of ``rows`` has internal feature ``f`` (read from its bitset)."""
    words = data.feature_bits[f]
    return ((words[rows >> 6] >> (rows & 63).astype(np.uint64)) & np.uint64(1)).astype(bool)


def _majority(data, rows: np.ndarray, K: int) -> int:
    """Leaf label of ``rows``: the class of largest weight, ties to the lowest index."""
    return int(np.argmax(np.bincount(data.labels[rows], weights=data.weights[rows], minlength=K)))
