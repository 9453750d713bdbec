"""The compiled search of [MurTree] Alg. 1-3: T(D, d, n) by recursion over (feature, left size) with
caching, upper and lower bounds, and the bounds of [OSDT] for a positive penalty per branch node.

Everything below runs in one numba function that calls itself, so no Python frame is entered per search
node. The objective is the lexicographic pair (leaf costs + ``penalty`` x branch nodes, branch nodes): it
adds up over the two children plus (penalty, 1) for the root, so Eq. 1 holds for pairs, and minimising
pairs returns, among the optimal trees, one with the fewest branch nodes. "Infeasible under UB" means
no tree with pair <= UB; the next pair above (c, k) is (c, k + 1), so "strictly better than (c, k)" is
"<= (c, k - 1)" and the integer "best - 1" of [MurTree] §4.2 (upper bounds) becomes exact for real objectives too.
With ``Params.fewest_nodes`` off a new tree must have a strictly smaller objective, "<= (c, -1)" (no tree has
-1 nodes), and a subproblem is closed once its incumbent's objective reaches its lower bound: the search then
returns the first optimal tree it meets, as [MurTree] §4.2 and [STreeD] do, which can be much faster when many
trees are optimal (a perfect tree at a generous depth).

How the bounds of [OSDT] (a best-first search over leaf sets) act in this recursion:

* Hierarchical lower bound (Theorem 3.1) and one-step lookahead (Lemma 3.2): a subtree is only searched
  under the upper bound "incumbent minus what the rest of the tree costs at least" (the parent's penalty and
  the sibling's lower bound), so a partial tree whose fixed part already reaches the incumbent is never
  extended; the cached lower bounds of solved or refuted subproblems are OSDT's b(d_un) for the leaves that
  stay unsplit, and every split adds ``penalty`` to the bound before its children are searched.
* Equivalent points (Theorem B.2): ``cnt[K + 1]`` of a subproblem is the weight of the rows that are not in
  the majority class of their group of identical feature vectors (``Data.minority_bits``); a group is never separated
  by a split, so this weight is a lower bound on the errors of every tree on the subproblem. It raises the
  subproblem's lower bound, closes it when its leaf already reaches it, and enters the two bounds below.
* Leaf support (Theorem 3.3) and the leaf count (Theorem C.1, per subproblem):
  :func:`~odtmip.dp._kernels._common.effective_budget` shrinks the budget of every subproblem (and of the
  root, which makes a search without a depth limit finite). That budget is the subproblem's cache budget.
  The leaf count applies to the upper bound u of a child as well (T_c any tree of cost u): a tree within
  the bound has at most floor((u - E) / penalty) branch nodes, so the child is searched, cached and
  recorded in its parent's entry at that smaller budget (:func:`~odtmip.dp._kernels._common.cap_budget`),
  whose optimum is the same whenever it is within the bound; a child found infeasible under u is
  infeasible at its full budget too. With a tight incumbent this bounds the depth of a deep sparse search
  by what the incumbent leaves to pay for branch nodes. Read the other way, a subproblem with an optimum T
  cached for a budget of depth d' (a smaller depth of the root's iterative deepening, a depth-two result)
  costs at least min(T, E + (d' + 1) penalty) at any larger budget: a better tree is deeper, so it has
  more branch nodes (:func:`~odtmip.dp._kernels._cache.solved_bound`).
* Incremental accuracy (Theorem 3.4): before the children of a split are searched, each child is either a
  leaf (its cost is known) or a subtree with at least one more split (cost >= max(its lower bound, its
  equivalent points + penalty)); the pair of leaves only counts when it beats the incumbent, which is at
  most the parent's leaf. The least of these combinations bounds the split.
* Leaf accuracy (Theorem 3.5): a split with a child whose majority weight is <= penalty is skipped; every
  leaf below that child classifies at most that weight correctly, so no optimal tree contains the split.

The state of a search is one :class:`Search` record: the training rows
(:class:`~odtmip.dp._kernels._common.Data`), the cache (:class:`~odtmip.dp._kernels._cache.Cache`), the
similarity archive, the depth-two solver's arrays (:class:`~odtmip.dp._kernels._depth2.Scratch`), the
subproblems on the recursion path, the parameters (:class:`~odtmip.dp._kernels._common.Params`), the
statistics and the root incumbent. :func:`solve_node` reads the arrays its loops need once, and its
helpers get those arrays, not the record: numba takes a reference to every array of a record whose field
is read, and a call copies every array of its arguments; in the loops over features and child budgets that
made the search up to twice as slow (measured on the sparse objective without a depth limit).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from odtmip.dp._kernels._cache import (
    E_SOL_DEPTH,
    E_SOL_NODES,
    EF_COST,
    ROOT_COST,
    ROOT_DEALT,
    ROOT_FEATURE,
    ROOT_NODES,
    U_STOP,
    Cache,
    find_optimal,
    key_index,
    lock,
    lower_bound,
    solved_bound,
    store_leaf,
    store_lower_bound,
    store_optimal,
    take_root_feature,
    unlock,
)
from odtmip.dp._kernels._common import (
    CNT_EQUIV,
    INF,
    INTERNAL,
    NUMBA_CACHE,
    S_CACHE_HITS,
    S_CAPPED,
    S_EQUIV_CLOSED,
    S_FULL,
    S_HELPS,
    S_LEAF_ACC,
    S_SIM_PRUNE,
    S_SPLIT_BOUND,
    S_TIMEOUT,
    Data,
    Params,
    cap_budget,
    check_clock,
    class_counts,
    copy_words,
    effective_budget,
    leaf_cost,
    lex_le,
    lex_lt,
    lex_min,
    masked_weight,
    max_class,
    pack_budget,
    popcount,
    weight_minus,
)
from odtmip.dp._kernels._depth2 import R_FEATURE, R_LEFT, R_NODES, R_RIGHT, Scratch, solve_terminal

#: Node part of "no upper bound".
NO_BOUND_NODES = np.int64(1) << 60

#: (objective, nodes, depth) of "no tree within the upper bound".
NO_TREE = (INF, np.int64(0), np.int64(0))


class Archive(NamedTuple):
    """The similarity archive ([MurTree] §4.5): two solved subproblems per depth budget 0..L-1."""

    bits: np.ndarray  # uint64 (L, 2, W): their rows
    keys: np.ndarray  # int64 (L, 2): their cache key indices
    size: np.ndarray  # int64 (L,): how many are archived (0..2)


class Levels(NamedTuple):
    """The subproblems on the recursion path, per level (L = depth + 2) and side (0: feature absent, 1: present)."""

    bits: np.ndarray  # uint64 (L, 2, W): the rows
    keys: np.ndarray  # uint64 (L, 2, KW): the branch-cache key (the path literals)
    counts: np.ndarray  # float64 (L, 2, K+2): class weights, the row count and the equivalent-points weight


class Search(NamedTuple):
    """Everything :func:`solve_node` reads or writes besides the subproblem's place, budget and upper bound."""

    data: Data  # the training rows
    cache: Cache  # the memo ([MurTree] §4.6)
    archive: Archive  # the similarity archive ([MurTree] §4.5)
    scratch: Scratch  # the depth-two solver's arrays ([MurTree] §4.3)
    levels: Levels  # the subproblems on the recursion path
    prm: Params  # the parameters
    st: np.ndarray  # int64 (N_STATS,): statistics and flags S_*
    incumbent: np.ndarray  # float64 (N_INC,): the best root tree so far, for anytime use; fields INC_*
    root: np.ndarray  # float64 (N_ROOT [+ p],): the root's features dealt out to threads; ROOT_*, WORK_* (shared)
    helping: np.ndarray  # bool (1,): this thread helps another search a root feature (solve_node)


# ---- the root incumbent (``Search.incumbent``) -------------------------------------------------------
INC_COST = 0  # objective, inf before the first tree
INC_NODES = 1  # branch nodes
INC_FEATURE = 2  # root feature
INC_LEFT = 3  # the left child's budget, packed as nodes * BUDGET_BASE + depth
INC_RIGHT = 4  # the right child's budget, packed the same way
N_INC = 5


def new_incumbent() -> np.ndarray:
    """A root incumbent holding no tree."""
    inc = np.full(N_INC, -1.0)
    inc[INC_COST], inc[INC_NODES] = INF, 0.0
    return inc


def new_levels(depth: int, words: int, key_words: int, n_counts: int) -> Levels:
    """Empty levels for a search of depth ``depth``."""
    L = depth + 2
    return Levels(bits=np.zeros((L, 2, words), dtype=np.uint64), keys=np.zeros((L, 2, key_words), dtype=np.uint64),
                  counts=np.zeros((L, 2, n_counts)))


def grow_archive(archive: Archive | None, depth: int, words: int) -> Archive:
    """``archive`` if it has room for depth ``depth``, else a larger one holding its subproblems."""
    if archive is not None and archive.size.shape[0] > depth:
        return archive
    L = depth + 1
    new = Archive(bits=np.zeros((L, 2, words), dtype=np.uint64), keys=np.zeros((L, 2), dtype=np.int64),
                  size=np.zeros(L, dtype=np.int64))
    if archive is not None:  # keep what is archived for smaller depths
        old = archive.size.shape[0]
        new.bits[:old], new.keys[:old], new.size[:old] = archive.bits, archive.keys, archive.size
    return new


@njit(cache=NUMBA_CACHE, **INTERNAL)
def similarity_bound(cache, archive, D, d, n, wts, unit, tol):
    """Similarity lower bound on the objective of ``D`` at budget (d, n), [MurTree] §4.5.

    For an archived subproblem D_old of the same depth, T(D) >= LB(D_old, d, n) - w(D_old \\ D): removing a
    row lowers the optimum by at most its weight and adding rows never lowers it. Only valid for the
    misclassification cost with ``min_leaf`` = 1 (the caller checks).
    """
    abits, akeys, size = archive.bits, archive.keys, archive.size
    best = 0.0
    for j in range(size[d]):
        lbc = lower_bound(cache, akeys[d, j], d, n, tol)[0]
        if lbc <= best:
            continue
        v = lbc - weight_minus(abits[d, j], D, wts, unit)
        if v > best:
            best = v
    return best


@njit(cache=NUMBA_CACHE, **INTERNAL)
def archive_subproblem(archive, D, k, d):
    """Remember solved ``D`` (cache key ``k``) at depth ``d``; when full, replace the most similar entry."""
    abits, akeys, size = archive.bits, archive.keys, archive.size
    if size[d] < 2:
        j = size[d]
        size[d] += 1
    else:
        j, best = 0, np.uint64(1) << np.uint64(63)
        for t in range(2):
            diff = np.uint64(0)
            for i in range(D.shape[0]):
                diff += popcount(abits[d, t, i] ^ D[i])
            if diff < best:
                j, best = t, diff
    copy_words(abits[d, j], D)
    akeys[d, j] = k


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _within(c, nodes, depth, ubc, ubn, tol):
    """Return the tree (c, nodes, depth) if it meets the bound, else the infeasible marker."""
    if c < INF and lex_le(c, nodes, ubc, ubn, tol):
        return c, nodes, depth
    return NO_TREE


@njit(cache=NUMBA_CACHE, inline="always")
def _solved_penalty(prm):
    """The penalty with which optima cached for other budgets bound a subproblem (:func:`_cached_bound`); 0: off."""
    return prm.penalty if prm.leaf_bound else 0.0


@njit(cache=NUMBA_CACHE, inline="always")
def _cached_bound(cache, k, d, n, equiv, pen, tol):
    """Lower bound of key ``k`` (-1: none) at budget (d, n) from the cache: its stored bound, raised by its
    optima for other budgets when ``pen`` > 0 (:func:`~odtmip.dp._kernels._cache.solved_bound`) and to the
    equivalent-points weight ``equiv`` ([OSDT] Theorem B.2)."""
    lbc, lbn = lower_bound(cache, k, d, n, tol)
    if pen > 0.0:
        sc, sn = solved_bound(cache, k, d, n, equiv, pen, tol)
        if lex_lt(lbc, lbn, sc, sn, tol):
            lbc, lbn = sc, sn
    if equiv > lbc + tol:
        return equiv, np.int64(0)
    return lbc, lbn


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _child_bound(cache, k, d, n, leaf, equiv, pen, tol):
    """Lower bound of a child: its leaf cost when it gets no node, else :func:`_cached_bound`."""
    if n == 0:
        return leaf, np.int64(0)
    return _cached_bound(cache, k, d, n, equiv, pen, tol)


@njit(cache=NUMBA_CACHE, inline="always")
def _leaf_or_split(lbc, lbn, leaf, equiv, n, pen, tol, inc_acc):
    """A child's bound raised to min(leaf, equivalent points + penalty) ([OSDT] Lemma 3.2): the child is a
    leaf or has at least one split (none without node budget ``n``)."""
    if not inc_acc:
        return lbc, lbn
    v = leaf if n == 0 else min(leaf, max(lbc, equiv + pen))
    if v > lbc + tol:
        return v, np.int64(0)
    return lbc, lbn


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _split_bound(lb_lc, lb_ln, lb_rc, lb_rn, leaf_l, leaf_r, eq_l, eq_r, n_l, n_r, pen, tol, tc, tn, inc_acc):
    """Lower bounds on the trees that split on a feature, whose children have the bounds (lb_lc, lb_ln) and
    (lb_rc, lb_rn).

    Returns ``(c, k, cp, kp)``: (c, k) bounds every such tree; (cp, kp) only those strictly better than the
    incumbent threshold (tc, tn), for pruning. Plain: lb_l + lb_r + penalty ([MurTree] §4.2). With
    ``inc_acc`` ([OSDT] Theorem 3.4 with the lookahead of Lemma 3.2): a child is a leaf, at its known leaf
    cost, or is split again, at least max(lb, equivalent points + penalty) (+inf without node budget);
    the split into two leaves is left out of (cp, kp) when it does not beat the threshold.
    """
    c, k = lb_lc + lb_rc + pen, lb_ln + lb_rn + 1
    if not inc_acc:
        return c, k, c, k
    s_l = max(lb_lc, eq_l + pen) if n_l > 0 else INF
    s_r = max(lb_rc, eq_r + pen) if n_r > 0 else INF
    two_leaves = leaf_l + leaf_r + pen
    deeper = min(leaf_l + s_r, s_l + leaf_r, s_l + s_r) + pen
    u = min(two_leaves, deeper)
    cp, kp = c, k
    if u > c + tol:
        c, k = u, np.int64(1)
    p = u if lex_le(two_leaves, 1, tc, tn, tol) else deeper
    if p > cp + tol:
        cp, kp = p, np.int64(1)
    return c, k, cp, kp


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _node_bound(cache, archive, prm, st, wts, key, k, D, equiv, pen, d, n, ubc, ubn):
    """Lower bound (objective, nodes) of the subproblem ``D`` (cache key ``key``, index ``k`` or -1) at budget
    (d, n): its cached bound (:func:`_cached_bound`, ``pen`` > 0 for the bound from its other optima), raised
    to its equivalent-points weight ``equiv`` ([OSDT] Theorem B.2) and to the similarity bound ([MurTree]
    §4.5), which is cached when it raises the bound.

    Returns ``(k, lbc, lbn)``, ``k`` the key index once the bound was cached; -1 with S_FULL set when the
    key table is full.
    """
    tol = prm.tol
    lbc, lbn = _cached_bound(cache, k if prm.use_cache else np.int64(-1), d, n, equiv, pen, tol)
    if prm.similarity:
        sim = similarity_bound(cache, archive, D, d, n, wts, prm.unit, tol)
        if lex_lt(lbc, lbn, sim, 0, tol):
            lbc, lbn = sim, np.int64(0)
            if k < 0:
                k = key_index(cache, key, np.bool_(True), st)
                if k < 0:
                    return k, lbc, lbn
            store_lower_bound(cache, k, d, n, lbc, lbn, tol, st)
            if lex_lt(ubc, ubn, lbc, lbn, tol):
                st[S_SIM_PRUNE] += 1
    return k, lbc, lbn


@njit(cache=NUMBA_CACHE, inline="always")
def _stored_or(cache, e, c, nodes, depth):
    """(objective, nodes, depth) of the optimum in entry ``e`` (-1: the table was full, then ``(c, nodes, depth)``):
    the optimum stored first, another thread's if it solved the subproblem too, which is the tree the cache
    rebuilds (:func:`~odtmip.dp._kernels._cache.store_optimal`)."""
    if e < 0:
        return c, nodes, depth
    return cache.reals[e, EF_COST], cache.ints[e, E_SOL_NODES], cache.ints[e, E_SOL_DEPTH]


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _solve_depth_two(data, scr, cache, archive, prm, st, key, k, D, cnt, d, n):
    """Optimal (objective, nodes, depth) of ``D`` at budget (d, n), d <= 2, by the depth-two solver ([MurTree]
    §4.3-4.4). Its results are exact whatever the upper bound, so every budget it solves is cached ([MurTree]
    §4.6), and ``D`` is archived. :data:`NO_TREE` when the key table is full."""
    solve_terminal(data, scr, prm, st, D, cnt, d == 2)
    if st[S_TIMEOUT]:
        return NO_TREE  # cut short by the deadline: nothing to store
    if k < 0:
        k = key_index(cache, key, np.bool_(True), st)
        if k < 0:
            return NO_TREE
    res_c, res_i = scr.result_cost, scr.result_tree
    asked = 0 if d == 1 else n - 1
    e = np.int64(-1)
    for b in range(3 if d == 2 else 1):  # budgets (1, 1), (2, 2), (2, 3)
        nodes = res_i[b, R_NODES]
        stored = store_optimal(cache, k, min(b + 1, 2), b + 1, res_c[b], nodes, min(nodes, 2), res_i[b, R_FEATURE],
                               res_i[b, R_LEFT], res_i[b, R_RIGHT], np.int64(1), st)
        if b == asked:
            e = stored
    archive_subproblem(archive, D, k, d)
    return _stored_or(cache, e, res_c[asked], res_i[asked, R_NODES], min(res_i[asked, R_NODES], np.int64(2)))


@njit(cache=NUMBA_CACHE, inline="always")
def _child_ub(use_ub, tc, tn, pen, sib_c, sib_n):
    """Upper bound of a child ([MurTree] §4.2): the threshold (tc, tn) minus the root's (penalty, 1) and the
    sibling's cost or lower bound (sib_c, sib_n); none without upper-bound propagation."""
    if use_ub:
        return tc - pen - sib_c, tn - 1 - sib_n
    return INF, NO_BOUND_NODES


@njit(cache=NUMBA_CACHE, inline="always")
def _capped_by_upper_bound(on, uc, eq, tol, pen, d, n):
    """A child's budget (d, n) capped by the leaf-count bound on its upper bound uc ([OSDT] Theorem C.1): a tree
    within uc has at most (uc - eq) / penalty branch nodes, eq its equivalent-points weight; unchanged when off."""
    if on:
        q = (uc - eq + tol) / pen
        if q < d:
            return cap_budget(d, n, q)
    return d, n


@njit(cache=NUMBA_CACHE, inline="always")
def _beating(fewest, c, nodes):
    """The pair a new tree must be <= to beat the tree (c, nodes): (c, nodes - 1) when ties go to the fewest
    branch nodes, else (c, -1), a strictly smaller objective (module docstring)."""
    return c, nodes - 1 if fewest else np.int64(-1)


@njit(cache=NUMBA_CACHE, inline="always")
def _reaches(fewest, c, nodes, lbc, lbn, tol):
    """The tree (c, nodes) reaches the lower bound (lbc, lbn), so no tree beats it (:func:`_beating`)."""
    if fewest:
        return lex_le(c, nodes, lbc, lbn, tol)
    return c <= lbc + tol


@njit(cache=NUMBA_CACHE, inline="always")
def _record_incumbent(inc, c, nodes, f, left, right, tol):
    """Keep the root tree (c, nodes) on ``f`` with packed child budgets ``left``, ``right`` if it is better."""
    if lex_lt(c, nodes, inc[INC_COST], np.int64(inc[INC_NODES]), tol):
        inc[INC_COST], inc[INC_NODES], inc[INC_FEATURE], inc[INC_LEFT], inc[INC_RIGHT] = c, nodes, f, left, right


@njit(cache=NUMBA_CACHE, inline="always")
def _refined_bound(lbc, lbn, ubc, ubn, rlbc, rlbn, leafc, refined, tol):
    """Lower bound of a subproblem with no tree <= UB ([MurTree] Eq. 15-16): above UB, at least its bound
    (lbc, lbn), and with ``refined`` at least the least of its leaf and the bounds (rlbc, rlbn) of its splits."""
    nlc, nln = lbc, lbn
    if lex_lt(nlc, nln, ubc, ubn + 1, tol):
        nlc, nln = ubc, ubn + 1
    if refined:
        if leafc < INF:
            rlbc, rlbn = lex_min(rlbc, rlbn, leafc, np.int64(0), tol)
        if lex_lt(nlc, nln, rlbc, rlbn, tol):
            nlc, nln = rlbc, rlbn
    return nlc, nln


# what :func:`_split_children` finds about a split
_SPLIT_USABLE = 0  # both children can be leaves
_SPLIT_DEGENERATE = 1  # a child is empty, skipped ([MurTree] Prop. 4.2: dominated by a smaller tree)
_SPLIT_SMALL = 2  # a child holds fewer than min_leaf rows: no tree has this split
_SPLIT_DEAD = 3  # a child's majority weight is <= the penalty ([OSDT] Theorem 3.5): no optimal tree has it


@njit(cache=NUMBA_CACHE)
def _split_children(fb, cbits, wts, yv, zbits, prm, D, cnt, DL, DR, cL, cR):
    """The children of ``D`` (class weights ``cnt``) split on the feature with rows ``fb``: their rows into ``DL``
    (feature absent) and ``DR`` (present), and, unless the split is skipped (degenerate with
    ``skip_degenerate``) or too small, their class weights, row counts and equivalent-points weights into
    ``cL`` and ``cR``. Returns one of the _SPLIT_* codes.
    """
    K, unit = prm.n_classes, prm.unit
    nr = np.uint64(0)
    for i in range(D.shape[0]):
        v = D[i] & fb[i]
        DR[i] = v
        DL[i] = D[i] & ~fb[i]
        nr += popcount(v)
    n_right = np.int64(nr)
    n_left = np.int64(cnt[K]) - n_right
    if n_right == 0 or n_left == 0:
        if prm.skip_degenerate:
            return _SPLIT_DEGENERATE
    elif n_right < prm.min_rows or n_left < prm.min_rows:
        return _SPLIT_SMALL
    class_counts(DR, cbits, wts, yv, K, unit, cR)
    cR[K + CNT_EQUIV] = masked_weight(DR, zbits, wts, unit) if cnt[K + CNT_EQUIV] > 0.0 else 0.0
    for c in range(K + 1 + CNT_EQUIV):
        cL[c] = cnt[c] - cR[c]
    mincorrect = prm.min_correct  # -1 when the leaf-accuracy bound is off
    if mincorrect >= 0.0 and (max_class(cL, K) <= mincorrect or max_class(cR, K) <= mincorrect):
        return _SPLIT_DEAD
    return _SPLIT_USABLE


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _child_keys(key, f, key_l, key_r):
    """Branch-cache keys of the children on feature ``f``: the parent's path literals ``key`` plus 2f (f absent)
    or 2f + 1 (f present)."""
    copy_words(key_l, key)
    copy_words(key_r, key)
    key_l[(2 * f) >> 6] |= np.uint64(1) << np.uint64((2 * f) & 63)
    key_r[(2 * f + 1) >> 6] |= np.uint64(1) << np.uint64((2 * f + 1) & 63)


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _shared_threshold(cache, root, f, fewest, tc, tn, tol):
    """The threshold (tc, tn) a tree on root feature ``f`` must meet, lowered to what the best root tree of all
    threads (c, nodes) on feature g leaves: ties go to the lower feature, as in one thread's feature order, so a
    tree on f < g may equal it and one on f > g must beat it (:func:`_beating`)."""
    lock(cache)
    c, nodes, g = root[ROOT_COST], np.int64(root[ROOT_NODES]), np.int64(root[ROOT_FEATURE])
    unlock(cache)
    if c == INF:
        return tc, tn
    if f < g:
        sc, sn = c, nodes if fewest else NO_BOUND_NODES
    else:
        sc, sn = _beating(fewest, c, nodes)
    if lex_lt(sc, sn, tc, tn, tol):
        return sc, sn
    return tc, tn


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _share_incumbent(cache, root, c, nodes, f, tol):
    """Offer the root tree (c, nodes) on feature ``f`` to the other threads: it replaces their best if it is
    better, or as good on a lower feature."""
    lock(cache)
    pc, pn, g = root[ROOT_COST], np.int64(root[ROOT_NODES]), np.int64(root[ROOT_FEATURE])
    if pc == INF or lex_lt(c, nodes, pc, pn, tol) or (f < g and lex_le(c, nodes, pc, pn, tol)):
        root[ROOT_COST], root[ROOT_NODES], root[ROOT_FEATURE] = c, nodes, f
    unlock(cache)


@njit(cache=NUMBA_CACHE, nogil=True)
def solve_node(s, lvl, side, d, n, ubc, ubn):
    """Optimal (objective, branch nodes) of the subproblem at ``s.levels`` (``lvl``, ``side``) at budget (d, n)
    if <= UB.

    Parameters
    ----------
    s : Search
        The state of the search (module docstring).
    lvl, side : int
        Where the subproblem's rows, key and class weights are (:class:`Levels`); children go to
        ``lvl + 1``, left side 0 (feature absent), right side 1 (feature present).
    d, n : int
        Depth and branch-node budget, canonical: d <= n <= 2^d - 1 ([MurTree] Eq. 1). It is first reduced
        to :func:`~odtmip.dp._kernels._common.effective_budget` (same optimum); the cache entry, and the
        budgets of the children recorded in it, are those reduced budgets.
    ubc, ubn : float, int
        Upper bound (objective, nodes): only trees lexicographically <= it are wanted.

    Returns
    -------
    (objective, nodes, depth) of the optimal tree when it is <= UB, else :data:`NO_TREE`. Optimal trees are
    written to the cache at the reduced budget (root assignment only); an infeasible node gets the lower
    bound max(LB, RLB, UB+) of Eq. 15-16. Nothing is written once the deadline passed or the cache is full.

    Notes
    -----
    [MurTree] Alg. 1 (SolveSubtree) with Alg. 2-3 (general case), §4 (depth two), §5 (similarity bound),
    §6 (cache), §7 (UB propagation, subtracting the sibling's cached bound), §8 (child order), §9
    (degenerate splits); [OSDT] bounds as in the module docstring.

    Threads: several threads may run this function at once on one root, each with its own :class:`Search` but the
    same cache and root record ``s.root`` (released from the GIL, ``nogil``). At a root dealt out to them
    (``ROOT_DEALT``) each takes the next root feature no thread has taken and searches it under the best root tree
    any thread has found (:func:`_shared_threshold`), and returns the best tree of its features without storing the
    root: the solver then searches the root once more in one thread, which finds the children in the cache and
    picks the tree one thread would have picked. A thread that fills the cache stops them all (``U_STOP``). Once
    every root feature is taken, a thread with none left helps one still at work on its feature
    (:func:`~odtmip.dp._kernels._cache.take_root_feature`): it searches the same split from the other end, the
    other child first and the features below the root in descending order, and each finds in the cache what the
    other has solved, so that the last root feature does not keep one thread busy while the others wait. Of equal
    trees, the helper's order may find another first, so it stores the subproblems below the root it solves as
    bounds, not trees, and keeps its root trees to itself (their children are not in the cache): the thread it
    helps then finds, soon, the tree one thread finds.
    """
    # the arrays the loops below read, bound once (module docstring)
    prm, st, cache = s.prm, s.st, s.cache
    fbits, cbits, wts = s.data.feature_bits, s.data.class_bits, s.data.weights
    yv, zbits = s.data.labels, s.data.minority_bits
    lbits, lkeys, lcnt = s.levels.bits, s.levels.keys, s.levels.counts
    K, minrows, code, pen, tol = prm.n_classes, prm.min_rows, prm.cost, prm.penalty, prm.tol
    sparse = pen > 0.0  # the [OSDT] bounds below only prune with a positive penalty
    inc_acc = sparse and prm.incremental_accuracy
    ub_leaf_bound = sparse and prm.leaf_bound and prm.upper_bound
    lb_pen = _solved_penalty(prm)
    if cache.used[U_STOP] != 0:  # another thread filled the cache
        st[S_FULL] = 1
    if check_clock(st, prm) or st[S_FULL]:
        return NO_TREE
    D, cnt = lbits[lvl, side], lcnt[lvl, side]
    n_rows = np.int64(cnt[K])
    eqc = cnt[K + CNT_EQUIV]
    leafc = leaf_cost(cnt, K, code)[0]
    if 0 < n_rows < minrows:
        leafc = INF
    if not lex_le(0.0, 0, ubc, ubn, tol):
        return NO_TREE
    if sparse:  # the parent passes it reduced already, except at the root
        d, n = effective_budget(cnt, d, n, prm)
    # no budget, or too few rows for any split with min_rows on both sides: only the leaf
    if d == 0 or n == 0 or n_rows < 2 * minrows:
        return _within(leafc, np.int64(0), np.int64(0), ubc, ubn, tol)

    key = lkeys[lvl, side] if prm.branch_keys else D
    k = key_index(cache, key, np.bool_(False), st)
    if prm.use_cache and k >= 0:
        e = find_optimal(cache, k, d, n)
        if e >= 0:
            st[S_CACHE_HITS] += 1
            return _within(cache.reals[e, EF_COST], cache.ints[e, E_SOL_NODES], cache.ints[e, E_SOL_DEPTH],
                           ubc, ubn, tol)
    k, lbc, lbn = _node_bound(cache, s.archive, prm, st, wts, key, k, D, eqc, lb_pen, d, n, ubc, ubn)
    if (k < 0 and st[S_FULL]) or lex_lt(ubc, ubn, lbc, lbn, tol):
        return NO_TREE
    if leafc < INF and _reaches(prm.fewest_nodes, leafc, np.int64(0), lbc, lbn, tol):
        # the bound reaches the leaf: the leaf is optimal
        if lbc > 0.0 and lbc == eqc:
            st[S_EQUIV_CLOSED] += 1
        if k < 0:
            k = key_index(cache, key, np.bool_(True), st)
            if k < 0:
                return NO_TREE
        c, nodes, depth = _stored_or(cache, store_leaf(cache, k, d, n, leafc, st), leafc, np.int64(0), np.int64(0))
        return _within(c, nodes, depth, ubc, ubn, tol)
    if prm.depth_two and d <= 2:
        c, nodes, depth = _solve_depth_two(s.data, s.scratch, cache, s.archive, prm, st, key, k, D, cnt, d, n)
        return _within(c, nodes, depth, ubc, ubn, tol)

    # general case, Alg. 2-3: the best split over (feature f, left node budget nl)
    has_best = leafc < INF and lex_le(leafc, 0, ubc, ubn, tol)
    leaf_ok = has_best
    bc, bn, bd, bf = leafc, np.int64(0), np.int64(0), np.int64(-1)  # the incumbent: the leaf
    bpl, bpr = np.int64(-1), np.int64(-1)  # its children's packed budgets
    # a new tree must be <= (tc, tn): within the UB and strictly better than the incumbent
    tc, tn = _beating(prm.fewest_nodes, bc, bn) if has_best else (ubc, ubn)
    rlbc, rlbn = INF, np.int64(0)  # least lower bound over the splits not solved (Eq. 15-16)
    max_l = min((np.int64(1) << (d - 1)) - 1, n - 1)
    min_l = n - 1 - max_l
    DL, DR = lbits[lvl + 1, 0], lbits[lvl + 1, 1]
    cL, cR = lcnt[lvl + 1, 0], lcnt[lvl + 1, 1]
    stop = False  # a child's search was interrupted
    dealt = lvl == 0 and s.root[ROOT_DEALT] != 0.0  # threads share the root's features and help each other
    reverse = lvl == 1 and s.helping[0]  # a helper takes the features below the root in descending order
    p = fbits.shape[0]
    f, i = np.int64(-1), np.int64(-1)
    while True:
        if dealt:
            f, helping = take_root_feature(cache, s.root, f)
            s.helping[0] = helping
            st[S_HELPS] += helping
        else:
            i += 1
            f = p - 1 - i if reverse and i < p else i
        if f >= p or stop or (has_best and not dealt and _reaches(prm.fewest_nodes, bc, bn, lbc, lbn, tol)):
            break  # every feature taken, stopped, or the incumbent reaches the lower bound (a helper may be needed)
        if dealt:
            if s.helping[0]:  # back at a lower feature: the threshold of the leaf and of the best tree of all threads
                tc, tn = _beating(prm.fewest_nodes, leafc, np.int64(0)) if leaf_ok else (ubc, ubn)
            tc, tn = _shared_threshold(cache, s.root, f, prm.fewest_nodes, tc, tn, tol)
        # the children's rows (left: f absent, right: f present), class weights and keys
        usable = _split_children(fbits[f], cbits, wts, yv, zbits, prm, D, cnt, DL, DR, cL, cR)
        if usable == _SPLIT_DEAD:
            st[S_LEAF_ACC] += 1
        if usable != _SPLIT_USABLE:
            continue  # degenerate ([MurTree] Prop. 4.2), a side below min_leaf, or dead ([OSDT] Theorem 3.5)
        leaf_l, leaf_r = leaf_cost(cL, K, code)[0], leaf_cost(cR, K, code)[0]
        eq_l, eq_r = cL[K + CNT_EQUIV], cR[K + CNT_EQUIV]
        if prm.branch_keys:
            _child_keys(key, f, lkeys[lvl + 1, 0], lkeys[lvl + 1, 1])
            key_l, key_r = lkeys[lvl + 1, 0], lkeys[lvl + 1, 1]
        else:
            key_l, key_r = DL, DR
        k_l = key_index(cache, key_l, np.bool_(False), st) if prm.use_cache else np.int64(-1)
        k_r = key_index(cache, key_r, np.bool_(False), st) if prm.use_cache else np.int64(-1)
        # [MurTree] §4.7-4.8: the child with the larger leaf cost first, so its sibling is more likely pruned
        left_first = not prm.dynamic_order or leaf_l >= leaf_r
        if lvl == 0 and s.helping[0]:  # a helper starts with the child the thread it helps searches last
            left_first = not left_first
        for nl in range(min_l, max_l + 1):
            dl, nl_ = min(d - 1, nl), nl
            dr, nr_ = min(d - 1, n - 1 - nl), n - 1 - nl
            if sparse:
                dl, nl_ = effective_budget(cL, dl, nl_, prm)
                dr, nr_ = effective_budget(cR, dr, nr_, prm)
                if dl < min(d - 1, nl) or dr < min(d - 1, n - 1 - nl):
                    st[S_CAPPED] += 1
            lb_lc, lb_ln = _child_bound(cache, k_l, dl, nl_, leaf_l, eq_l, lb_pen, tol)
            lb_rc, lb_rn = _child_bound(cache, k_r, dr, nr_, leaf_r, eq_r, lb_pen, tol)
            sc, sn = lb_lc + lb_rc + pen, lb_ln + lb_rn + 1
            scp, snp = sc, sn
            if inc_acc:
                sc, sn, scp, snp = _split_bound(lb_lc, lb_ln, lb_rc, lb_rn, leaf_l, leaf_r, eq_l, eq_r, nl_, nr_,
                                                pen, tol, tc, tn, inc_acc)
            if prm.upper_bound and lex_lt(tc, tn, scp, snp, tol):
                if not lex_lt(tc, tn, lb_lc + lb_rc + pen, lb_ln + lb_rn + 1, tol):
                    st[S_SPLIT_BOUND] += 1  # pruned thanks to the [OSDT] split bound only
                rlbc, rlbn = lex_min(rlbc, rlbn, sc, sn, tol)
                continue
            # the first child under the UB minus the second's bound (oc, on), the second under the UB minus the
            # first's optimum; one recursive call for both, as numba types every recursive call site twice
            r1c, r1n, r1d = NO_TREE
            r2c, r2n, r2d = NO_TREE
            if left_first:
                s1, d1, n1, e1, s2, d2, n2, e2 = 0, dl, nl_, eq_l, 1, dr, nr_, eq_r
                oc, on = _leaf_or_split(lb_rc, lb_rn, leaf_r, eq_r, nr_, pen, tol, inc_acc)
            else:
                s1, d1, n1, e1, s2, d2, n2, e2 = 1, dr, nr_, eq_r, 0, dl, nl_, eq_l
                oc, on = _leaf_or_split(lb_lc, lb_ln, leaf_l, eq_l, nl_, pen, tol, inc_acc)
            for j in range(2):
                second = j == 1
                sj, dj, nj, ej = (s2, d2, n2, e2) if second else (s1, d1, n1, e1)
                uc, un = _child_ub(prm.upper_bound, tc, tn, pen, oc, on)
                dj, nj = _capped_by_upper_bound(ub_leaf_bound, uc, ej, tol, pen, dj, nj)
                rc, rn, rd = solve_node(s, lvl + 1, sj, dj, nj, uc, un)
                stop = st[S_TIMEOUT] != 0 or st[S_FULL] != 0
                if stop or rc == INF:
                    break
                if second:
                    d2, n2, r2c, r2n, r2d = dj, nj, rc, rn, rd
                else:
                    d1, n1, r1c, r1n, r1d = dj, nj, rc, rn, rd
                    oc, on = rc, rn
            if stop:
                break
            if r1c == INF or r2c == INF:
                if prm.refined_lb:  # the children's bounds may have risen meanwhile
                    if prm.use_cache:
                        k_l = key_index(cache, key_l, np.bool_(False), st)
                        k_r = key_index(cache, key_r, np.bool_(False), st)
                    lb_lc, lb_ln = _child_bound(cache, k_l, dl, nl_, leaf_l, eq_l, lb_pen, tol)
                    lb_rc, lb_rn = _child_bound(cache, k_r, dr, nr_, leaf_r, eq_r, lb_pen, tol)
                    sc, sn, scp, snp = _split_bound(lb_lc, lb_ln, lb_rc, lb_rn, leaf_l, leaf_r, eq_l, eq_r, nl_, nr_,
                                                    pen, tol, tc, tn, inc_acc)
                    rlbc, rlbn = lex_min(rlbc, rlbn, sc, sn, tol)
                continue
            vc, vn = r1c + r2c + pen, r1n + r2n + 1
            if not has_best or lex_lt(vc, vn, bc, bn, tol):
                has_best = True
                bc, bn, bd, bf = vc, vn, 1 + max(r1d, r2d), np.int64(f)
                bpl, bpr = (pack_budget(d1, n1), pack_budget(d2, n2)) if left_first else (pack_budget(d2, n2),
                                                                                         pack_budget(d1, n1))
                tc, tn = _beating(prm.fewest_nodes, bc, bn)
                if lvl == 0 and not s.helping[0]:  # a helper's children are bounds in the cache, not trees
                    _record_incumbent(s.incumbent, bc, bn, bf, bpl, bpr, tol)
                    if dealt:
                        _share_incumbent(cache, s.root, bc, bn, bf, tol)
                if _reaches(prm.fewest_nodes, bc, bn, lbc, lbn, tol):
                    break
    if st[S_TIMEOUT] != 0 or st[S_FULL] != 0:
        return NO_TREE  # nothing from a loop cut short is stored
    if dealt:  # this thread's share of the root's features: the solver stores the root after all threads
        return _within(bc, bn, bd, ubc, ubn, tol) if has_best else NO_TREE
    if k < 0:
        k = key_index(cache, key, np.bool_(True), st)
        if k < 0:
            return NO_TREE
    archive_subproblem(s.archive, D, k, d)
    if has_best and reverse:  # found in a helper's order: of equal trees, maybe not the one one thread stores first;
        # its objective (and, by fewest nodes, its nodes) bound the subproblem, where one thread then soon finds its own
        store_lower_bound(cache, k, d, n, bc, bn if prm.fewest_nodes else np.int64(0), tol, st)
        return _within(bc, bn, bd, ubc, ubn, tol)
    if has_best:
        bc, bn, bd = _stored_or(cache, store_optimal(cache, k, d, n, bc, bn, bd, bf, bpl, bpr, np.int64(0), st), bc,
                                bn, bd)
        return _within(bc, bn, bd, ubc, ubn, tol)
    nlc, nln = _refined_bound(lbc, lbn, ubc, ubn, rlbc, rlbn, leafc, prm.refined_lb, tol)
    store_lower_bound(cache, k, d, n, nlc, nln, tol, st)
    return NO_TREE


@njit(cache=NUMBA_CACHE)
def root_bound(s, key, d, n):
    """Best cached lower bound (objective, nodes) of the root (``s.levels`` (0, 0), cache key ``key``) at
    budget (d, n) (:func:`_cached_bound`)."""
    prm = s.prm
    st = np.zeros(8, dtype=np.int64)
    k = key_index(s.cache, key, np.bool_(False), st)
    return _cached_bound(s.cache, k, d, n, s.levels.counts[0, 0, prm.n_classes + CNT_EQUIV], _solved_penalty(prm),
                         prm.tol)


@njit(cache=NUMBA_CACHE)
def split_bound(s, key, d, n):
    """Lower bound on the objective of the root (``s.levels`` (0, 0), cache key ``key``) at budget (d, n) from
    what the cache knows about the children of every root split; valid at any moment of a search.

    The optimum is the leaf or a split on some feature f with left node budget nl, whose objective is at
    least the split's bound (:func:`_split_bound`) from the children's cached lower bounds at their budgets
    (:func:`_child_bound`: finished and refuted subtrees, the equivalent-points weight, a child's leaf
    when it gets no node); splits the search skips contain no optimal tree ([MurTree] Prop. 4.2, [OSDT]
    Theorem 3.5). So the least of the leaf and these bounds over all (f, nl) is a lower bound: Eq. 15-16 of
    [MurTree] (the refined bound), applied to every split at once instead of after the loop over splits,
    which a stopped search never finishes. The children's rows are built in fresh arrays, so a progress
    report may call this in the middle of the search.
    """
    prm, cache, data = s.prm, s.cache, s.data
    K, code, pen, tol = prm.n_classes, prm.cost, prm.penalty, prm.tol
    inc_acc = pen > 0.0 and prm.incremental_accuracy
    lb_pen = _solved_penalty(prm)
    D, cnt = s.levels.bits[0, 0], s.levels.counts[0, 0]
    best = leaf_cost(cnt, K, code)[0]  # the root holds at least min_leaf rows (else the solver stops before)
    if d == 0 or n == 0 or cnt[K] < 2 * prm.min_rows:
        return best
    DL, DR = np.empty_like(D), np.empty_like(D)
    cL, cR = np.empty_like(cnt), np.empty_like(cnt)
    key_l, key_r = np.empty_like(key), np.empty_like(key)
    st = np.zeros(S_FULL + 1, dtype=np.int64)
    max_l = min((np.int64(1) << (d - 1)) - 1, n - 1)
    min_l = n - 1 - max_l
    for f in range(data.feature_bits.shape[0]):
        if _split_children(data.feature_bits[f], data.class_bits, data.weights, data.labels, data.minority_bits,
                           prm, D, cnt, DL, DR, cL, cR) != _SPLIT_USABLE:
            continue
        leaf_l, leaf_r = leaf_cost(cL, K, code)[0], leaf_cost(cR, K, code)[0]
        eq_l, eq_r = cL[K + CNT_EQUIV], cR[K + CNT_EQUIV]
        if prm.branch_keys:
            _child_keys(key, f, key_l, key_r)
        else:
            copy_words(key_l, DL)
            copy_words(key_r, DR)
        k_l, k_r = key_index(cache, key_l, np.bool_(False), st), key_index(cache, key_r, np.bool_(False), st)
        for nl in range(min_l, max_l + 1):
            dl, nl_ = min(d - 1, nl), nl
            dr, nr_ = min(d - 1, n - 1 - nl), n - 1 - nl
            if pen > 0.0:
                dl, nl_ = effective_budget(cL, dl, nl_, prm)
                dr, nr_ = effective_budget(cR, dr, nr_, prm)
            lb_lc, lb_ln = _child_bound(cache, k_l, dl, nl_, leaf_l, eq_l, lb_pen, tol)
            lb_rc, lb_rn = _child_bound(cache, k_r, dr, nr_, leaf_r, eq_r, lb_pen, tol)
            c = _split_bound(lb_lc, lb_ln, lb_rc, lb_rn, leaf_l, leaf_r, eq_l, eq_r, nl_, nr_, pen, tol, INF,
                             NO_BOUND_NODES, inc_acc)[0]
            best = min(best, c)
    return best


@njit(cache=NUMBA_CACHE)
def optimal_entry(cache, key, d, n):
    """Entry index of the optimal tree of ``key`` at budget (d, n), -1 if none (for reconstruction)."""
    st = np.zeros(8, dtype=np.int64)
    k = key_index(cache, key, np.bool_(False), st)
    if k < 0:
        return -1
    return find_optimal(cache, k, d, n)
