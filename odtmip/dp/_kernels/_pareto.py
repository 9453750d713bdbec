"""Kernels of the bi-objective (FP, FN) search of [DS21]: fronts, their merge and filter, the ceiling algebra of
the bounds, the specialised depth-two front solver, and the search itself (:func:`solve_front`, the recursion of
[DS21] Eq. 3 with the techniques of :mod:`odtmip.dp.pareto`).

A **front** is a float64 array (k, NCOL), one row per point, sorted by ``fp`` ascending (then ``fn`` strictly
descending): the point's false-positive and false-negative weight, its branch nodes, and how to rebuild its tree
(columns below). A **ceiling** U is a float64 array (k, 2) of maximal points sorted by fp, whose coordinates may be
inf; its allowed region is Down(U) = {t : t <= u componentwise for some u in U} (see :mod:`odtmip.dp.pareto`). A
**lower bound** L is a float64 array (k, 2): every tree's pair is >= some point of L.

``tol`` is 0 for integer weights (exact) and the round-off bound of :func:`odtmip.dp.common.tie_tolerance`
otherwise; ``unit`` is the step "strictly better" means: 1 for integer weights, 0 (closed regions, weaker but
sound) for real ones.

References
----------
.. [DS21] E. Demirović, P. J. Stuckey, "Optimal Decision Trees for Nonlinear Metrics", AAAI-21, 35(5):3733-3741.
.. [MurTree] E. Demirović et al., "MurTree: Optimal Classification Trees via Dynamic Programming and Search",
   JMLR 23(26), 2022.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from odtmip.dp._kernels._cache import (
    ROOT_DEALT,
    U_STOP,
    Cache,
    find_entry,
    grow_tables,
    key_index,
    link_entry,
    lock,
    new_tables,
    next_feature,
    unlock,
)
from odtmip.dp._kernels._common import (
    INF,
    INTERNAL,
    N_STATS,
    NUMBA_CACHE,
    S_CACHE_HITS,
    S_DEPTH2,
    S_FULL,
    Data,
    check_clock,
    count_bits,
    past_deadline,
    popcount,
    trailing_zeros,
    unpacked_bits,
    word_weight,
)
from odtmip.dp._kernels._search import Archive, archive_subproblem

# ---- columns of a front ------------------------------------------------------------------------------
P_FP = 0  # false-positive weight
P_FN = 1  # false-negative weight
P_NODES = 2  # branch nodes of the point's tree
P_KIND = 3  # how to rebuild it: KIND_LEAF, KIND_TERMINAL or KIND_SPLIT
P_FEATURE = 4  # root feature (internal index); -1 for a leaf
P_A = 5  # leaf: 1 = predicts positive; terminal: left child feature (-1: leaf); split: left child's row (P_C)
P_B = 6  # terminal: right child feature (-1: leaf); split: right child's row (P_C)
P_C = 7  # terminal: leaf labels, bit i for leaf i from the left (1 = positive); split: -1 while P_A and P_B are
#          rows of the two fronts just merged, 0 once they are rows of FrontStore.rows (kept for the trees)
NCOL = 8

KIND_LEAF = 0
KIND_TERMINAL = 1  # a tree of depth <= 2 found by depth_two_front
KIND_SPLIT = 2  # a root split whose children are rows of two fronts (a merge, [DS21] Def. 2)

NO_CODE = np.iinfo(np.int64).max  # an empty bucket of :func:`_offer`


@njit(cache=NUMBA_CACHE)
def nondominated(P, tol):
    """nd(P): the non-dominated rows of ``P`` sorted by fp ascending (fn then strictly descending).

    Of equal points (within ``tol``) the one with the fewest branch nodes is kept, of those the first in ``P``: the
    rule of :func:`_insert`, so nd(A u B) keeps the point of A where one of B equals it with as many nodes, whatever
    the round-off in their sums (so nd of fronts found apart keeps the trees nd keeps point by point).
    [DS21] §3 sorts lexicographically and keeps a point whose fn is strictly below the last kept one's; here one
    sort by fp and, per run of equal fp, its least (fn, nodes, row) does the same.
    """
    k = P.shape[0]
    if k == 0:
        return P.copy()
    o = np.argsort(P[:, P_FP], kind="mergesort")  # stable, so numba and numpy keep the same of equal points
    keep = np.empty(k, dtype=np.int64)
    m = 0
    i = 0
    while i < k:
        best = o[i]  # the least (fn, nodes) among the points of this fp
        j = i + 1
        while j < k and P[o[j], P_FP] <= P[o[i], P_FP] + tol:
            c = o[j]
            if P[c, P_FN] < P[best, P_FN] - tol or (P[c, P_FN] <= P[best, P_FN] + tol and (
                    P[c, P_NODES] < P[best, P_NODES] or (P[c, P_NODES] == P[best, P_NODES] and c < best))):
                best = c
            j += 1
        if m == 0 or P[best, P_FN] < P[keep[m - 1], P_FN] - tol:
            keep[m] = best
            m += 1
        i = j
    return P[keep[:m]]


@njit(cache=NUMBA_CACHE)
def merge(A, B, PF, tol):
    """Merge(A, B) = nd({a + b}) of two sibling fronts ([DS21] Def. 2) without the sums that a point of the front
    ``PF`` dominates (:func:`_dominated`: they would leave nd(PF u Merge) anyway); columns ``P_A``/``P_B`` hold
    the rows of ``a`` and ``b`` (``P_C`` = -1), ``P_FEATURE`` is left for the caller."""
    out = np.empty((A.shape[0] * B.shape[0], NCOL))
    r = 0
    for i in range(A.shape[0]):
        for j in range(B.shape[0]):
            out[r, P_FP] = A[i, P_FP] + B[j, P_FP]
            out[r, P_FN] = A[i, P_FN] + B[j, P_FN]
            out[r, P_NODES] = A[i, P_NODES] + B[j, P_NODES] + 1
            if _dominated(PF, PF.shape[0], out[r, P_FP], out[r, P_FN], out[r, P_NODES], tol) < 0:
                continue
            out[r, P_KIND] = KIND_SPLIT
            out[r, P_FEATURE] = -1
            out[r, P_A] = i
            out[r, P_B] = j
            out[r, P_C] = -1
            r += 1
    return nondominated(out[:r], tol)


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _pairwise(L1, L2, take_max, tol):
    """The minimal points of {l1 + l2} (or of {max(l1, l2)} with ``take_max``) over two (k, 2) arrays."""
    out = np.empty((L1.shape[0] * L2.shape[0], 2))
    r = 0
    for i in range(L1.shape[0]):
        for j in range(L2.shape[0]):
            for c in range(2):
                out[r, c] = max(L1[i, c], L2[j, c]) if take_max else L1[i, c] + L2[j, c]
            r += 1
    return minimal(out, tol)


@njit(cache=NUMBA_CACHE)
def merge_bounds(L1, L2, tol):
    """nd({l1 + l2}) of two lower bounds (k, 2): the bound of a split, [DS21] Eq. 5."""
    return _pairwise(L1, L2, np.bool_(False), tol)


@njit(cache=NUMBA_CACHE)
def minimal(L, tol):
    """The minimal points of the (k, 2) array ``L``, sorted by the first coordinate: the maximal points of -L."""
    return -maximal(-L, tol)[::-1]


@njit(cache=NUMBA_CACHE)
def maximal(U, tol):
    """The maximal points of the (k, 2) array ``U`` (a ceiling), sorted by the first coordinate ascending: one sort
    by the first coordinate, a stack (:func:`_push_maximal`) and the rule within ``tol`` (:func:`_thin`)."""
    M = np.empty((U.shape[0], 2))
    k = np.int64(0)
    for i in np.argsort(U[:, 0]):
        k = _push_maximal(M, k, U[i, 0], U[i, 1])
    return _thin(M, k, tol)


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _push_maximal(M, k, x, y):
    """Offer (x, y) to the maximal points ``M[:k]`` (x strictly ascending, y strictly descending) of the points
    offered so far, in non-decreasing x: a stack, the points (x, y) dominates are popped. Returns the new k."""
    while k > 0 and M[k - 1, 1] <= y:
        k -= 1
    if k > 0 and M[k - 1, 0] >= x:  # the same x with a larger y
        return k
    M[k, 0] = x
    M[k, 1] = y
    return k + 1


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _thin(M, k, tol):
    """The exact maximal points ``M[:k]`` (x ascending) thinned within ``tol``: by x descending, a point is kept
    when its y exceeds the last kept one's by more than tol. A dominated point never passes this rule nor changes
    what passes, so the result is the same for every set whose exact maximal points are M."""
    keep = np.empty(k, dtype=np.int64)
    m = 0
    for i in range(k - 1, -1, -1):
        if m == 0 or M[i, 1] > M[keep[m - 1], 1] + tol:
            keep[m] = i
            m += 1
    return M[keep[:m][::-1]]


@njit(cache=NUMBA_CACHE)
def allowed(P, U, tol):
    """Mask of the rows of ``P`` (a front or a bound) inside Down(U)."""
    out = np.zeros(P.shape[0], dtype=np.bool_)
    for i in range(P.shape[0]):
        for u in range(U.shape[0]):
            if P[i, 0] <= U[u, 0] + tol and P[i, 1] <= U[u, 1] + tol:
                out[i] = True
                break
    return out


@njit(cache=NUMBA_CACHE)
def infeasible(L, U, tol):
    """No point of the lower bound ``L`` lies in Down(U), so no tree does ([DS21] Def. 5, ceiling form)."""
    return not np.any(allowed(L, U, tol))


@njit(cache=NUMBA_CACHE)
def infeasible_merge(L1, L2, U, tol):
    """:func:`infeasible` for merge_bounds(L1, L2) (the lookahead (C), Eq. 5) without building it: no sum l1 + l2
    lies in Down(U), for a ceiling ``U`` sorted by fp (the first u with fp no smaller has the largest fn)."""
    for i in range(L1.shape[0]):
        for j in range(L2.shape[0]):
            x, y = L1[i, 0] + L2[j, 0], L1[i, 1] + L2[j, 1]
            lo, hi = 0, U.shape[0]
            while lo < hi:
                mid = (lo + hi) // 2
                if x <= U[mid, 0] + tol:
                    hi = mid
                else:
                    lo = mid + 1
            if lo < U.shape[0] and y <= U[lo, 1] + tol:
                return False
    return True


@njit(cache=NUMBA_CACHE)
def subtract(U, S, tol):
    """U minus S = maxnd({u - s : s <= u}) ([DS21] Eq. 4): the ceiling of a child whose sibling is >= a point
    of ``S`` (its front, or its lower bound); a + b in Down(U) iff b <= u - a for some u.

    No sort: for each s the points u - s of the ceiling ``U`` (sorted by fp) ascend in fp, and are merged into
    the maximal points so far (:func:`_push_maximal`)."""
    n = U.shape[0] * S.shape[0]
    R, T, Q = np.empty((n, 2)), np.empty((n, 2)), np.empty((U.shape[0], 2))
    kr = np.int64(0)
    for s in range(S.shape[0]):
        kq = 0
        for u in range(U.shape[0]):
            if S[s, 0] <= U[u, 0] + tol and S[s, 1] <= U[u, 1] + tol:
                Q[kq, 0] = max(U[u, 0] - S[s, 0], 0.0)
                Q[kq, 1] = max(U[u, 1] - S[s, 1], 0.0)
                kq += 1
        i, j, k = 0, 0, np.int64(0)
        while i < kr or j < kq:
            if j == kq or (i < kr and R[i, 0] <= Q[j, 0]):
                k = _push_maximal(T, k, R[i, 0], R[i, 1])
                i += 1
            else:
                k = _push_maximal(T, k, Q[j, 0], Q[j, 1])
                j += 1
        R, T, kr = T, R, k
    return _thin(R, kr, tol)


@njit(cache=NUMBA_CACHE)
def tighten(U, F, unit, tol):
    """Ceiling for the rest of a node's search once it has found the front ``F``: only points that no point of
    ``F`` weakly dominates still matter. With F sorted by fp the corners of that region are (f_1.fp - unit, inf),
    (f_{i+1}.fp - unit, f_i.fn - unit) and (inf, f_k.fn - unit); the new ceiling is maxnd({min(u, g)}) without
    points below 0 (the "best - 1" of [MurTree] §4.2, for fronts)."""
    k = F.shape[0]
    if k == 0:
        return U.copy()
    G = np.empty((k + 1, 2))
    G[0, 0] = F[0, P_FP] - unit
    G[0, 1] = INF
    for i in range(1, k):
        G[i, 0] = F[i, P_FP] - unit
        G[i, 1] = F[i - 1, P_FN] - unit
    G[k, 0] = INF
    G[k, 1] = F[k - 1, P_FN] - unit
    # Down(U) n Down(G) in one sweep over fp (both sorted): its maximal points are min(u, g) of the first u and g
    # with fp no smaller than each fp of U or G (the heights of the two staircases there)
    M = np.empty((U.shape[0] + k + 1, 2))
    r, u, g = np.int64(0), 0, 0
    while u < U.shape[0] and g <= k:
        a = min(U[u, 0], G[g, 0])
        b = min(U[u, 1], G[g, 1])
        if a >= -tol and b >= -tol:
            r = _push_maximal(M, r, max(a, 0.0), max(b, 0.0))
        step_u, step_g = U[u, 0] <= G[g, 0], G[g, 0] <= U[u, 0]
        u += step_u
        g += step_g
    return _thin(M, r, tol)


@njit(cache=NUMBA_CACHE)
def outside(U, unit):
    """The minimal points of the complement of Down(U) ([DS21] §4, the bound (B)): with U sorted by fp,
    (0, u_1.fn + unit), (u_i.fp + unit, u_{i+1}.fn + unit), (u_k.fp + unit, 0), leaving out points with an
    infinite coordinate. Every tree outside Down(U) is >= one of them."""
    k = U.shape[0]
    out = np.empty((k + 1, 2))
    r = 0
    for i in range(k + 1):
        a = 0.0 if i == 0 else U[i - 1, 0] + unit
        b = 0.0 if i == k else U[i, 1] + unit
        if a < INF and b < INF:
            out[r, 0] = a
            out[r, 1] = b
            r += 1
    return out[:r].copy()


@njit(cache=NUMBA_CACHE)
def meet(L1, L2, tol):
    """L1 meet L2 = nd({max(l1, l2)}): a lower bound implied by two lower bounds ([DS21] §4)."""
    return _pairwise(L1, L2, np.bool_(True), tol)


@njit(cache=NUMBA_CACHE, **INTERNAL)
def similarity_bound(L, removed_neg, removed_pos, tol):
    """[DS21] Eq. 6: a lower bound of a new row set from one ``L`` of an old row set at the same budget, when
    ``removed_neg`` (``removed_pos``) weight of negatives (positives) of the old set is not in the new one:
    removing a negative lowers fp by at most its weight, a positive only fn, and adding rows lowers nothing."""
    out = np.empty((L.shape[0], 2))
    for i in range(L.shape[0]):
        out[i, 0] = max(0.0, L[i, 0] - removed_neg)
        out[i, 1] = max(0.0, L[i, 1] - removed_pos)
    return minimal(out, tol)


@njit(cache=NUMBA_CACHE, **INTERNAL)
def leaf_front(pos, neg, tol):
    """The front of a single leaf: nd({(neg, 0) predicting positive, (0, pos) predicting negative})."""
    P = np.zeros((2, NCOL))
    P[0, P_FP] = neg
    P[0, P_A] = 1
    P[1, P_FN] = pos
    for i in range(2):
        P[i, P_KIND] = KIND_LEAF
        P[i, P_FEATURE] = -1
    return nondominated(P, tol)


@njit(cache=NUMBA_CACHE, inline="always")
def _word_weights(word, pos_word, base, weights, unit):
    """(positive, negative) weight of the rows set in one 64-bit ``word`` whose first row is ``base``."""
    pos, neg = word & pos_word, word & ~pos_word
    if unit:
        return np.float64(popcount(pos)), np.float64(popcount(neg))
    return word_weight(pos, base, weights), word_weight(neg, base, weights)


@njit(cache=NUMBA_CACHE, **INTERNAL)
def class_weights(bits, pos_bits, weights, unit):
    """(positive, negative) weight of the rows in ``bits``."""
    pos = 0.0
    neg = 0.0
    for i in range(bits.shape[0]):
        p, n = _word_weights(bits[i], pos_bits[i], i * 64, weights, unit)
        pos += p
        neg += n
    return pos, neg


@njit(cache=NUMBA_CACHE, **INTERNAL)
def removed_weights(old, new, pos_bits, weights, unit):
    """(positive, negative) weight of the rows in ``old`` and not in ``new`` (r+ and r- of [DS21] Eq. 6)."""
    pos = 0.0
    neg = 0.0
    for i in range(old.shape[0]):
        p, n = _word_weights(old[i] & ~new[i], pos_bits[i], i * 64, weights, unit)
        pos += p
        neg += n
    return pos, neg


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _count_pairs(bits, pos_bits, weights, unit, row_start, row_features, fpos, fneg, pos2, neg2):
    """Frequency counting ([MurTree] §4.3): the positive and negative weight of the rows in ``bits`` with
    feature f (``fpos[f]``, ``fneg[f]``) and with features f != g both present (``pos2[f, g]``, ``neg2[f, g]``,
    symmetric, so that a root's row is contiguous)."""
    fpos[:] = 0.0
    fneg[:] = 0.0
    pos2[:, :] = 0.0
    neg2[:, :] = 0.0
    for i in range(bits.shape[0]):
        word = bits[i]
        while word:
            b = np.int64(trailing_zeros(word))
            r = i * 64 + b
            w = 1.0 if unit else weights[r]
            is_pos = (pos_bits[i] >> np.uint64(b)) & np.uint64(1)
            s, e = row_start[r], row_start[r + 1]
            for a in range(s, e):
                f = row_features[a]
                if is_pos:
                    fpos[f] += w
                else:
                    fneg[f] += w
                for c in range(a + 1, e):
                    if is_pos:
                        pos2[f, row_features[c]] += w
                    else:
                        neg2[f, row_features[c]] += w
            word &= word - np.uint64(1)
    p = fpos.shape[0]
    for f in range(p):
        for g in range(f + 1, p):
            pos2[g, f] = pos2[f, g]  # each row's features ascend: counted at f < g
            neg2[g, f] = neg2[f, g]


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _dominated(F, k, fp, fn, nodes, tol):
    """-1 when a point of the front ``F[:k]`` dominates (fp, fn) or equals it (within ``tol``) with no more branch
    nodes than ``nodes``; else the number of points with fp no larger (within ``tol``), where it would go. Binary
    search on fp: the last of those has their least fn."""
    lo, hi = 0, k
    while lo < hi:
        mid = (lo + hi) // 2
        if F[mid, P_FP] <= fp + tol:
            lo = mid + 1
        else:
            hi = mid
    if lo > 0:
        y = lo - 1
        if F[y, P_FN] <= fn + tol and (F[y, P_FP] < fp - tol or F[y, P_FN] < fn - tol or F[y, P_NODES] <= nodes):
            return -1
    return lo


@njit(cache=NUMBA_CACHE)
def _insert(F, k, fp, fn, nodes, kind, feature, a, b, c, tol):
    """nd(F[:k] u {x}) in place for the point x = (fp, fn) with ``nodes`` and the columns P_KIND on ([DS21] §3's
    nd, one point at a time, no sort): nothing when a point dominates x (:func:`_dominated`), else x replaces the
    run of points it dominates, those with fp and fn no smaller (a run: fn descends). ``F`` has a free row;
    returns the new k (no array returned: this runs for every candidate)."""
    s = _dominated(F, k, fp, fn, nodes, tol)
    if s < 0:
        return k
    while s > 0 and F[s - 1, P_FP] >= fp - tol:
        s -= 1
    e = s
    while e < k and F[e, P_FN] >= fn - tol:
        e += 1
    if e == s:  # nothing dominated: shift the tail one row on
        for r in range(k, s, -1):
            for j in range(NCOL):
                F[r, j] = F[r - 1, j]
    else:  # x takes the first dominated row, the tail moves back over the others
        for r in range(e, k):
            for j in range(NCOL):
                F[s + 1 + r - e, j] = F[r, j]
    _set_row(F, s, fp, fn, nodes, kind, feature, a, b, c)
    return k + 1 - (e - s)


@njit(cache=NUMBA_CACHE, inline="always")
def _set_row(F, r, fp, fn, nodes, kind, feature, a, b, c):
    """Row ``r`` of the front ``F`` := the point (fp, fn) with the columns P_NODES on."""
    F[r, P_FP], F[r, P_FN], F[r, P_NODES], F[r, P_KIND] = fp, fn, nodes, kind
    F[r, P_FEATURE], F[r, P_A], F[r, P_B], F[r, P_C] = feature, a, b, c


@njit(cache=NUMBA_CACHE, inline="always")
def _keep(F, k, B, key, fp, fn, nodes, kind, feature, a, b, c, tol):
    """Offer a candidate point to a front: with integer weights (``key`` not empty) to its fp bucket, row fp of
    ``B``, which keeps the least (fn, nodes) (``key``: 4 fn + nodes, nodes <= 3; :func:`_sweep` reads the front off
    the buckets, nd by counting sort); else :func:`_insert` into ``F[:k]``. Returns the new k."""
    if key.shape[0] == 0:
        return _insert(F, k, fp, fn, nodes, kind, feature, a, b, c, tol)
    i = np.int64(fp)
    if fn * 4.0 + nodes < key[i]:
        key[i] = fn * 4.0 + nodes
        _set_row(B, i, fp, fn, nodes, kind, feature, a, b, c)
    return k


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _sweep(F, k, B, key, top):
    """The front of the buckets 0..``top`` of :func:`_keep` into ``F`` (fn strictly descending as fp ascends);
    ``k`` (the length of F) unchanged without buckets. Returns the new k."""
    if key.shape[0] == 0:
        return k
    k = 0
    for i in range(np.int64(top) + 1):
        if key[i] < INF:
            if k == 0 or B[i, P_FN] < F[k - 1, P_FN]:
                for j in range(NCOL):
                    F[k, j] = B[i, j]
                k += 1
    return k


@njit(cache=NUMBA_CACHE, inline="always")
def _offer(code, fp, fn, nodes, m, index):
    """Offer a point of integer (fp, fn), ``nodes`` <= 3, candidate ``index`` of ``m``, to the code buckets: bucket
    fp keeps the least (fn, nodes, index), one integer (4 fn + nodes) m + index, without a branch (the first of
    equal points offered in index order wins, as with :func:`_keep`)."""
    i = np.int64(fp)
    code[i] = min(code[i], (np.int64(fn) * 4 + np.int64(nodes)) * m + index)


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _read_codes(code, top, m, out):
    """The front of the code buckets 0..``top`` of :func:`_offer` (fn strictly descending as fp ascends) into the
    rows (fp, fn, nodes, index) of ``out``, the buckets emptied; returns its length."""
    k = 0
    for i in range(np.int64(top) + 1):
        c = code[i]
        if c != NO_CODE:
            code[i] = NO_CODE
            fn = c // (4 * m)
            if k == 0 or fn < out[k - 1, 1]:
                out[k, 0], out[k, 1], out[k, 2], out[k, 3] = i, fn, (c // m) % 4, c % m
                k += 1
    return k


@njit(cache=NUMBA_CACHE, inline="always")
def _child_columns(index):
    """(P_A, P_C) of candidate ``index`` of :func:`_child_front`: 0 and 1 are the leaf predicting positive and
    negative (g = -1, labels 1 and 0), 2 + 2g and 3 + 2g the split on g with labels 1 and 2."""
    if index < 2:
        return -1.0, np.float64(1 - index)
    return np.float64((index - 2) // 2), np.float64(1 + (index - 2) % 2)


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _child_front(C, cand, code, pts, p_side, n_side, fpos, fneg, pos2, neg2, f, present, splits, tol):
    """The front, in ``C`` (2p + 2 rows), of one child of a root split on ``f`` (``present``: the rows with f) over
    its leaf and, with ``splits``, every split on g != f; returns its length. ``P_A`` holds g (-1: the leaf) and
    ``P_C`` the labels (bit 0: the leaf, or the g-absent leaf; bit 1: the g-present leaf; 1 = positive).

    Candidate i is row i of ``cand`` (fp, fn, nodes; fp = -inf: none, as round-off can make a real fp negative),
    numbered as in :func:`_child_columns`; with integer weights they go to the code buckets ``code`` (n_side + 1
    of them, :func:`_offer`; ``pts`` is :func:`_read_codes`' work array), else (``code`` empty) they are inserted
    one by one (:func:`_insert`)."""
    terminal, no_feature = np.int64(KIND_TERMINAL), np.int64(-1)
    cand[0, 0], cand[0, 1], cand[0, 2] = n_side, 0.0, 0.0
    cand[1, 0], cand[1, 1], cand[1, 2] = 0.0, p_side, 0.0
    m = cand.shape[0] if splits else 2
    for g in range(m // 2 - 1):
        if present:  # cells (f, not g) and (f, g)
            pg, ng = pos2[f, g], neg2[f, g]
        else:  # cells (not f, not g) and (not f, g)
            pg, ng = fpos[g] - pos2[f, g], fneg[g] - neg2[f, g]
        p0, n0 = p_side - pg, n_side - ng
        # a positive leaf errs on its negatives (fp), a negative one on its positives (fn); the two uniform
        # labellings have the pair of a leaf with one node more, so only the mixed ones (1 and 2) can be kept
        cand[2 + 2 * g, 0], cand[2 + 2 * g, 1], cand[2 + 2 * g, 2] = n0, pg, 1.0
        cand[3 + 2 * g, 0], cand[3 + 2 * g, 1], cand[3 + 2 * g, 2] = ng, p0, 1.0
        if g == f or pg + ng <= 0.0 or p0 + n0 <= 0.0:  # an empty side: the leaf again ([MurTree] Prop. 4.2)
            cand[2 + 2 * g, 0] = cand[3 + 2 * g, 0] = -INF
    if code.shape[0] == 0:
        k = np.int64(0)
        for i in range(m):
            if cand[i, 0] > -INF:
                a, c = _child_columns(i)
                k = _insert(C, k, cand[i, 0], cand[i, 1], cand[i, 2], terminal, no_feature, a, -1.0, c, tol)
        return k
    for i in range(m):
        if cand[i, 0] > -INF:
            _offer(code, cand[i, 0], cand[i, 1], cand[i, 2], m, i)
    k = _read_codes(code, n_side, m, pts)
    for r in range(k):
        a, c = _child_columns(pts[r, 3])
        _set_row(C, r, np.float64(pts[r, 0]), np.float64(pts[r, 1]), np.float64(pts[r, 2]), terminal, no_feature, a,
                 -1.0, c)
    return k


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _add_roots(best, k, B, key, L, kl, R, kr, f, tol):
    """nd(best[:k] u Merge(L[:kl], R[:kr])): the trees of root ``f`` whose children are points of the child fronts
    (labels: left bits 0-1, right 2-3), offered to the buckets ``B``, ``key`` of :func:`_keep` or, without
    buckets, inserted in place (:func:`_insert`; a row of L whose sum with R's ideal point is dominated is skipped).
    The bucket loop is kept apart: without the insertion's branches it compiles to a tight loop. Returns (best,
    new k)."""
    if key.shape[0]:
        for i in range(kl):
            for j in range(kr):
                _keep(best, k, B, key, L[i, P_FP] + R[j, P_FP], L[i, P_FN] + R[j, P_FN],
                      L[i, P_NODES] + R[j, P_NODES] + 1, np.int64(KIND_TERMINAL), f, L[i, P_A], R[j, P_A],
                      L[i, P_C] + 4 * R[j, P_C], tol)
        return best, k
    least = R[0, P_NODES]
    for j in range(kr):
        least = min(least, R[j, P_NODES])
    for i in range(kl):
        if _dominated(best, k, L[i, P_FP] + R[0, P_FP], L[i, P_FN] + R[kr - 1, P_FN], L[i, P_NODES] + least + 1,
                      tol) < 0:
            continue
        for j in range(kr):
            if k == best.shape[0]:
                best = np.concatenate((best, np.empty_like(best)))
            k = _insert(best, k, L[i, P_FP] + R[j, P_FP], L[i, P_FN] + R[j, P_FN], L[i, P_NODES] + R[j, P_NODES] + 1,
                        np.int64(KIND_TERMINAL), f, L[i, P_A], R[j, P_A], L[i, P_C] + 4 * R[j, P_C], tol)
    return best, k


@njit(cache=NUMBA_CACHE)
def depth_two_front(bits, pos_bits, weights, unit, row_start, row_features, depth, nodes, tol, deadline, st,
                    fpos, fneg, pos2, neg2):
    """PF(D, d, n) for d <= 2: the front of every tree of depth <= ``depth`` with <= ``nodes`` branch nodes on the
    rows ``bits`` ([DS21] §3: [MurTree]'s depth-two solver with Merge for sums).

    Per root f, the front of each child over its leaf and all splits on g (cells from one frequency count), then
    the merge of the two children: both may split with 3 nodes, one of them with 2, neither with 1. The result is
    nd of the union over f with the leaf's front, kept by inserting point by point (:func:`_insert`) into work
    arrays allocated once per call. ``fpos``, ``fneg`` (p,) and ``pos2``, ``neg2`` (p, p) are work arrays.
    Returns (front, complete); ``complete`` is False when the clock passed ``deadline`` (read by
    :func:`~odtmip.dp._kernels._common.past_deadline`, counting the points each root builds, which sets S_TIMEOUT
    in ``st``), and the front then holds the roots tried so far.
    """
    P, N = class_weights(bits, pos_bits, weights, unit)
    leaf = leaf_front(P, N, tol)
    if depth == 0 or nodes == 0:
        return leaf, True
    _count_pairs(bits, pos_bits, weights, unit, row_start, row_features, fpos, fneg, pos2, neg2)
    p = fpos.shape[0]
    m = np.int64(N) + 1 if unit else 0  # buckets: fp is an integer <= N
    B, key = np.empty((m, NCOL)), np.full(m, INF)  # the root's
    code, pts, cand = np.full(m, NO_CODE), np.empty((m, 4), dtype=np.int64), np.empty((2 * p + 2, 3))  # a child's
    best = np.empty((max(16, m + 1), NCOL))
    k = np.int64(0)
    for r in range(leaf.shape[0]):
        k = _keep(best, k, B, key, leaf[r, P_FP], leaf[r, P_FN], 0.0, np.int64(KIND_LEAF), np.int64(-1),
                  leaf[r, P_A], 0.0, 0.0, tol)
    splits = depth > 1 and nodes > 1
    absent, present, leaves = np.bool_(False), np.bool_(True), np.bool_(False)  # the child's side; no splits
    L, R = np.empty((2 * p + 2, NCOL)), np.empty((2 * p + 2, NCOL))
    leaf_l, leaf_r = np.empty((2, NCOL)), np.empty((2, NCOL))
    work = np.int64(0)  # points the last root built (its children's candidates and their merge)
    for f in range(p):
        if past_deadline(st, deadline, work):
            return best[:_sweep(best, k, B, key, N)], False
        pr, nr = fpos[f], fneg[f]
        pl, nl = P - pr, N - nr
        if pr + nr <= 0.0 or pl + nl <= 0.0:
            work = 0
            continue
        kl = _child_front(L, cand, code, pts, pl, nl, fpos, fneg, pos2, neg2, f, absent, splits, tol)
        kr = _child_front(R, cand, code, pts, pr, nr, fpos, fneg, pos2, neg2, f, present, splits, tol)
        work = 4 * p + kl * kr
        if nodes >= 3 or not splits:
            best, k = _add_roots(best, k, B, key, L, kl, R, kr, f, tol)
        else:  # two nodes: one child splits, the other is a leaf
            kll = _child_front(leaf_l, cand, code, pts, pl, nl, fpos, fneg, pos2, neg2, f, absent, leaves, tol)
            klr = _child_front(leaf_r, cand, code, pts, pr, nr, fpos, fneg, pos2, neg2, f, present, leaves, tol)
            best, k = _add_roots(best, k, B, key, L, kl, leaf_r, klr, f, tol)
            best, k = _add_roots(best, k, B, key, leaf_l, kll, R, kr, f, tol)
    return best[:_sweep(best, k, B, key, N)], True


# ---- the interpreter's forms of the depth-two front solver and the ceiling algebra -----------------------------
# Interpreted, each step of the loops over rows, feature pairs, candidates, merged pairs and ceiling points is a
# Python step: profiled, the interpreted front search of tic-tac-toe at depth 4 (F1) spent 25 of its 30 seconds in
# depth_two_front and 4 in subtract. With unit weights (the fp buckets) the form of depth_two_front builds the same
# front with numpy, a block of roots at a time: the counts by two matrix products, the children's candidates as
# arrays, and the first least key of every bucket by sorting (the loop keeps the first of equal keys offered).
# Counts are integers, exact in float64, and every key is the same float operation, so the search visits the same
# subproblems (the tests compare the forms point for point). Real weights insert point by point under a
# tolerance: that form leaves them to the loops. The forms of the ceiling algebra take every pair of points at
# once, and unit class weights are counts of bits. Never compiled: the forms run only among the interpreted kernels
# (:func:`odtmip.dp._kernels._interpreted.kernels`).
#: The kernels the interpreter runs in another form, by name.
INTERPRETED_FORMS = {"depth_two_front": "_depth_two_front_numpy", "subtract": "_subtract_numpy",
                     "allowed": "_allowed_numpy", "infeasible_merge": "_infeasible_merge_numpy",
                     "maximal": "_maximal_numpy", "class_weights": "_class_weights_numpy",
                     "removed_weights": "_removed_weights_numpy"}
#: The interpreted loops of these kernels, for the cases their forms leave to them: set in the interpreter's namespace
#: of this module (:func:`odtmip.dp._kernels._interpreted.kernels`).
LOOPS: dict = {}
#: Points per block of the depth-two form: the children's candidates of a block of roots, and the merged points
#: offered at once (beyond it by one root's at most) bound the memory of its arrays.
_BLOCK_POINTS = 1 << 18
#: Rows per block of the depth-two form's counts (bounds the memory of its 0/1 matrices).
_BLOCK_ROWS = 1 << 14
#: Points (or pairs of points) up to which the forms of the ceiling algebra leave them to the loops, which finish
#: such calls before numpy has set up its arrays.
_FEW_POINTS = 8


def _depth_two_front_numpy(bits, pos_bits, weights, unit, row_start, row_features, depth, nodes, tol, deadline, st,
                           fpos, fneg, pos2, neg2):
    """:func:`depth_two_front` with numpy: the same front, the same clock (read root by root with the loop's
    counts of work)."""
    if not unit:
        return LOOPS["depth_two_front"](bits, pos_bits, weights, unit, row_start, row_features, depth, nodes, tol,
                                        deadline, st, fpos, fneg, pos2, neg2)
    P, N = class_weights(bits, pos_bits, weights, unit)
    leaf = leaf_front(P, N, tol)
    if depth == 0 or nodes == 0:
        return leaf, True
    _count_pairs_numpy(bits, pos_bits, row_start, row_features, fpos, fneg, pos2, neg2)
    p = fpos.shape[0]
    B, key = np.empty((np.int64(N) + 1, NCOL)), np.full(np.int64(N) + 1, INF)  # the root's buckets
    _keep_first_least(B, key, leaf)  # a leaf's row is the bucket row _keep makes of it
    splits = depth > 1 and nodes > 1
    block = max(1, _BLOCK_POINTS // (2 * p + 2))
    work = 0
    for start in range(0, p, block):
        end = min(start + block, p)
        roots = np.arange(start, end)
        roots = roots[(fpos[roots] + fneg[roots] > 0.0) & (P - fpos[roots] + N - fneg[roots] > 0.0)]
        L, kl, R, kr = _child_fronts(P, N, fpos, fneg, pos2, neg2, roots, splits)
        if nodes >= 3 or not splits:
            merges, pairs = ((L, kl, R, kr),), kl * kr
        else:  # two nodes: one child splits, the other is a leaf; per root the loop merges (L, leaf) then (leaf, R)
            leaf_l, one_l, leaf_r, one_r = _child_fronts(P, N, fpos, fneg, pos2, neg2, roots, False)
            merges, pairs = ((L, kl, leaf_r, one_r), (leaf_l, one_l, R, kr)), kl * one_r + one_l * kr
        # root by root as the loop reads the clock (a root it skips counts no work), the merged points of the roots
        # done offered once they add up to a block
        done, offered, pending, stopped = 0, 0, 0, False
        for f in range(start, end):
            if past_deadline(st, deadline, work):
                stopped = True
                break
            usable = done < roots.shape[0] and roots[done] == f
            work = 4 * p + kl[done] * kr[done] if usable else 0
            if usable:
                pending += pairs[done]
                done += 1
            if pending >= _BLOCK_POINTS:
                _offer_merged(B, key, merges, roots, offered, done)
                offered, pending = done, 0
        _offer_merged(B, key, merges, roots, offered, done)
        if stopped:
            return _swept(B, key), False
    return _swept(B, key), True


def _count_pairs_numpy(bits, pos_bits, row_start, row_features, fpos, fneg, pos2, neg2):
    """:func:`_count_pairs` with unit weights: the rows of ``bits`` as 0/1 matrices (rows x features, a block of
    rows at a time) from the lists of their features, and their positive and negative rows' column sums and
    products."""
    n = row_start.shape[0] - 1
    rows = np.flatnonzero(unpacked_bits(bits, n))
    positive = unpacked_bits(pos_bits, n)[rows].astype(np.bool_)
    for x in (fpos, fneg, pos2, neg2):
        x[...] = 0.0
    for start in range(0, rows.shape[0], _BLOCK_ROWS):
        block = rows[start:start + _BLOCK_ROWS]
        lengths = row_start[block + 1] - row_start[block]
        first = np.repeat(row_start[block] - (np.cumsum(lengths) - lengths), lengths)  # + position in the list
        present = np.zeros((block.shape[0], fpos.shape[0]))
        present[np.repeat(np.arange(block.shape[0]), lengths), row_features[first + np.arange(lengths.sum())]] = 1.0
        sign = positive[start:start + _BLOCK_ROWS]
        for fx, x2, side in ((fpos, pos2, present[sign]), (fneg, neg2, present[~sign])):
            fx += side.sum(axis=0)
            x2 += side.T @ side
    np.fill_diagonal(pos2, 0.0)  # the loop counts pairs f != g only
    np.fill_diagonal(neg2, 0.0)


def _child_fronts(P, N, fpos, fneg, pos2, neg2, roots, splits):
    """:func:`_child_front` with its code buckets, for both children of each root of ``roots`` of rows with P
    positives and N negatives: the left fronts one after another and their lengths, then the right ones. The
    candidates are numbered as in the loop; per child, the least code of each fp bucket is kept, then the points
    whose fn falls below every smaller fp's."""
    r, m = roots.shape[0], 2 * fpos.shape[0] + 2 if splits else 2
    if r == 0:
        return np.empty((0, NCOL)), np.zeros(0, dtype=np.int64), np.empty((0, NCOL)), np.zeros(0, dtype=np.int64)
    p_side = np.concatenate((P - fpos[roots], fpos[roots]))  # children 0..r-1 left (without f), r..2r-1 right
    n_side = np.concatenate((N - fneg[roots], fneg[roots]))
    fp, fn, nodes = np.empty((2 * r, m)), np.empty((2 * r, m)), np.ones(m, dtype=np.int64)
    fp[:, 0], fn[:, 0], fp[:, 1], fn[:, 1], nodes[:2] = n_side, 0.0, 0.0, p_side, 0
    usable = np.ones((2 * r, m), dtype=np.bool_)
    if splits:
        pg = np.concatenate((fpos - pos2[roots], pos2[roots]))  # (2r, p): the cells (f or not f, g)
        ng = np.concatenate((fneg - neg2[roots], neg2[roots]))
        p0, n0 = p_side[:, None] - pg, n_side[:, None] - ng
        fp[:, 2::2], fn[:, 2::2], fp[:, 3::2], fn[:, 3::2] = n0, pg, ng, p0
        empty = (pg + ng <= 0.0) | (p0 + n0 <= 0.0)
        empty[np.arange(2 * r), np.concatenate((roots, roots))] = True
        usable[:, 2::2] = usable[:, 3::2] = ~empty
    owner, index = np.nonzero(usable)  # by child, then candidate
    bucket = fp[owner, index].astype(np.int64)
    code = (fn[owner, index].astype(np.int64) * 4 + nodes[index]) * m + index
    order = np.lexsort((code, bucket, owner))
    owner, bucket, code = owner[order], bucket[order], code[order]
    least = _first_and((bucket[1:] != bucket[:-1]) | (owner[1:] != owner[:-1]))
    owner, bucket, code = owner[least], bucket[least], code[least]
    fn = code // (4 * m)
    # a running minimum of fn per child: each child's fn (>= 0) raised by a multiple of max + 1 above all of the next
    # children's, so that no earlier child's minimum reaches into a later child
    raised = fn + (2 * r - owner) * (fn.max() + 1)
    front = _record_lows(raised)
    bucket, fn, code, owner = bucket[front], fn[front], code[front], owner[front]
    index = code % m
    C = np.empty((bucket.shape[0], NCOL))
    C[:, P_FP], C[:, P_FN], C[:, P_NODES] = bucket, fn, (code // m) % 4
    C[:, P_KIND], C[:, P_FEATURE], C[:, P_B] = KIND_TERMINAL, -1.0, -1.0
    C[:, P_A] = np.where(index < 2, -1.0, (index - 2) // 2)  # _child_columns
    C[:, P_C] = np.where(index < 2, 1 - index, 1 + (index - 2) % 2)
    k = np.bincount(owner, minlength=2 * r)
    left = k[:r].sum()
    return C[:left], k[:r], C[left:], k[r:]


def _offer_merged(B, key, merges, roots, lo, hi):
    """Offer to the root's buckets (:func:`_keep_first_least`) the points :func:`_add_roots` offers for the roots
    ``lo``..``hi`` - 1 of ``roots``: per root, the points of each of ``merges`` (L, kl, R, kr) in turn."""
    if hi == lo:
        return
    merged = np.concatenate([_merged(L, kl, R, kr, roots, lo, hi) for L, kl, R, kr in merges])
    if len(merges) > 1:  # per root, in the order of merges
        merged = merged[np.lexsort((np.arange(merged.shape[0]), merged[:, P_FEATURE]))]
    _keep_first_least(B, key, merged)


def _merged(L, kl, R, kr, roots, lo, hi):
    """The merged points of the roots ``lo``..``hi`` - 1 of ``roots``, whose children's fronts are ``L`` and ``R``
    (lengths ``kl``, ``kr``, root after root): per root, every row i of its L with every row j of its R, i then j."""
    first_l, first_r = (np.cumsum(kl) - kl)[lo:hi], (np.cumsum(kr) - kr)[lo:hi]  # each root's first row
    kl, kr = kl[lo:hi], kr[lo:hi]
    sizes = kl * kr
    root = np.repeat(np.arange(hi - lo), sizes)
    t = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    i, j = first_l[root] + t // kr[root], first_r[root] + t % kr[root]
    M = np.empty((t.shape[0], NCOL))
    M[:, P_FP], M[:, P_FN] = L[i, P_FP] + R[j, P_FP], L[i, P_FN] + R[j, P_FN]
    M[:, P_NODES], M[:, P_KIND], M[:, P_FEATURE] = L[i, P_NODES] + R[j, P_NODES] + 1, KIND_TERMINAL, roots[lo + root]
    M[:, P_A], M[:, P_B], M[:, P_C] = L[i, P_A], R[j, P_A], L[i, P_C] + 4 * R[j, P_C]
    return M


def _keep_first_least(B, key, rows):
    """Offer the points ``rows`` (in the loop's order) to the root's fp buckets (:func:`_keep`): per bucket the
    first least key 4 fn + nodes, which takes the bucket where it is strictly less than the bucket's key."""
    if rows.shape[0] == 0:
        return
    value = rows[:, P_FN] * 4.0 + rows[:, P_NODES]
    bucket = rows[:, P_FP].astype(np.int64)
    order = np.lexsort((np.arange(value.shape[0]), value, bucket))
    ordered = bucket[order]
    least = order[_first_and(ordered[1:] != ordered[:-1])]
    least = least[value[least] < key[bucket[least]]]
    key[bucket[least]] = value[least]
    B[bucket[least]] = rows[least]


def _swept(B, key):
    """:func:`_sweep` of all the root's buckets: their points whose fn falls below every smaller fp's."""
    rows = np.flatnonzero(key < INF)
    fn = B[rows, P_FN]
    return B[rows[_record_lows(fn)]]


def _maximal_numpy(U, tol):
    """:func:`maximal` with numpy: the exact maximal points (:func:`_exact_maximal`), thinned alike."""
    if U.shape[0] <= _FEW_POINTS:
        return LOOPS["maximal"](U, tol)
    M = _exact_maximal(U[:, 0], U[:, 1])
    return _thin(M, M.shape[0], tol)


def _subtract_numpy(U, S, tol):
    """:func:`subtract` with numpy: every u - s with s <= u at once, their exact maximal points (the loop's stack
    keeps the same), thinned alike."""
    if U.shape[0] * S.shape[0] <= _FEW_POINTS:
        return LOOPS["subtract"](U, S, tol)
    s, u = np.nonzero((S[:, None, 0] <= U[None, :, 0] + tol) & (S[:, None, 1] <= U[None, :, 1] + tol))
    M = _exact_maximal(_at_least_zero(U[u, 0] - S[s, 0]), _at_least_zero(U[u, 1] - S[s, 1]))
    return _thin(M, M.shape[0], tol)


def _at_least_zero(a):
    """``max(a, 0.0)`` of each entry as the loops compute it (-0.0 stays -0.0, which ``np.maximum`` makes 0.0)."""
    return np.where(a < 0.0, 0.0, a)


def _exact_maximal(x, y):
    """The maximal points of the points (x, y), x ascending: by x descending (then y descending), those whose y
    exceeds every y before them. :func:`_push_maximal`'s stack, offered them by x ascending, keeps the same points
    whatever the order of equal x."""
    if x.shape[0] == 0:
        return np.empty((0, 2))
    order = np.lexsort((-y, -x))
    x, y = x[order], y[order]
    top = _record_lows(-y)
    return np.column_stack((x[top], y[top]))[::-1]


def _record_lows(v):
    """Mask of the entries of ``v`` below every entry before them (the first one included)."""
    return _first_and(v[1:] < np.minimum.accumulate(v)[:-1])


def _first_and(mask):
    """True followed by the boolean array ``mask`` (numpy's ``r_`` costs more than what the forms do with it)."""
    out = np.empty(mask.shape[0] + 1, dtype=np.bool_)
    out[0], out[1:] = True, mask
    return out


def _allowed_numpy(P, U, tol):
    """:func:`allowed` with numpy."""
    if P.shape[0] * U.shape[0] <= _FEW_POINTS:
        return LOOPS["allowed"](P, U, tol)
    return ((P[:, None, 0] <= U[None, :, 0] + tol) & (P[:, None, 1] <= U[None, :, 1] + tol)).any(axis=1)


def _infeasible_merge_numpy(L1, L2, U, tol):
    """:func:`infeasible_merge` with numpy: every sum at once, and for each the loop's binary search over U's fp."""
    x = (L1[:, None, 0] + L2[None, :, 0]).ravel()
    y = (L1[:, None, 1] + L2[None, :, 1]).ravel()
    lo = np.searchsorted(U[:, 0] + tol, x, side="left")  # the first u with x <= u.fp + tol
    inside = lo < U.shape[0]
    return not np.any(y[inside] <= U[lo[inside], 1] + tol)


def _class_weights_numpy(bits, pos_bits, weights, unit):
    """:func:`class_weights` with unit weights by counting bits (real weights: the loops, which sum in their order)."""
    if not unit:
        return LOOPS["class_weights"](bits, pos_bits, weights, unit)
    return np.float64(count_bits(bits & pos_bits)), np.float64(count_bits(bits & ~pos_bits))


def _removed_weights_numpy(old, new, pos_bits, weights, unit):
    """:func:`removed_weights` with unit weights by counting bits (real weights: the loops)."""
    if not unit:
        return LOOPS["removed_weights"](old, new, pos_bits, weights, unit)
    return _class_weights_numpy(old & ~new, pos_bits, weights, unit)


# ============================================================================================ the search
class ParetoParams(NamedTuple):
    """The scalar parameters of one front search (read-only in the kernels): the switches of
    :class:`~odtmip.dp.pareto.ParetoOptions` and the arithmetic. ``node_limit``, ``deadline`` and
    ``report_every`` are read by :func:`~odtmip.dp._kernels._common.check_clock` (no progress reports)."""

    depth_two: bool  # specialised depth-two solver ([DS21] §3)
    upper_bound: bool  # (A) child ceilings (Eq. 4) and the node's ceiling tightened by its points
    infeasibility_lb: bool  # (B) lower bounds of subproblems searched to the end under a ceiling
    lookahead: bool  # (C) skip a split whose children's lower bounds merge to nothing under the ceiling (Eq. 5)
    similarity: bool  # (D) similarity lower bound (Eq. 6)
    use_cache: bool  # read stored fronts and bounds
    unit: bool  # every weight is 1, so class weights are popcounts
    tol: float  # pairs closer than this are equal
    step: float  # "strictly better": 1 for integer weights, 0 (closed regions) for real ones
    deadline: float = INF  # time.perf_counter() value at which to stop (inf: none)
    node_limit: int = 1 << 62  # stop as at the deadline after this many subproblems (a stop that tests repeat)
    report_every: float = INF


# ---- integer fields of a stored entry (columns of ``FrontStore.cache.ints`` after E_NEXT, E_DEPTH, E_NODES) --
PE_FRONT = 3  # first row in FrontStore.rows of the complete front PF(D, d, n), -1 none
PE_FRONT_LEN = 4  # its number of points
PE_BOUND = 5  # first row in FrontStore.bounds of the stored lower bound (B), -1 none
PE_BOUND_LEN = 6  # its number of points
NPE = 7

# ---- counters (``FrontStore.used``) ----------------------------------------------------------------------------
U_ROWS = 0  # rows of FrontStore.rows in use
U_BOUNDS = 1  # rows of FrontStore.bounds in use

# ---- statistics after those of :mod:`odtmip.dp._kernels._common` (``st``; S_NODES counts subproblems) ---------
S_MERGES = N_STATS  # merges of two child fronts
S_LOOKAHEAD = N_STATS + 1  # splits skipped by the lookahead (C)
S_BOUND_PRUNES = N_STATS + 2  # subproblems answered "nothing under the ceiling" by a stored bound (B)
N_PARETO_STATS = N_STATS + 3


class FrontStore(NamedTuple):
    """What the search keeps across calls: one key per row set (the tables of :mod:`~odtmip.dp._kernels._cache`,
    entries per (depth, node) budget with the fields PE_*), the points of complete fronts and of the children of
    every point found (``rows``: a split point's P_A and P_B are rows here, so every point's tree can be rebuilt),
    and the lower bounds. When an array is full the kernels set S_FULL (and the cache's U_STOP, which stops every
    thread) and return; Python grows it (:func:`grow_store`) and searches again.

    Search threads share one store: with the cache's U_SHARED set (:func:`~odtmip.dp._kernels._cache.lock`) every
    reading or writing of an entry, and every append to ``rows`` or ``bounds``, holds the cache's lock. Rows are only
    appended and an entry points at rows written before it, so a front read under the lock may be used after it."""

    cache: Cache  # keys: row sets; entries: PE_* fields
    rows: np.ndarray  # float64 (cap, NCOL): points
    bounds: np.ndarray  # float64 (bcap, 2): lower-bound points
    used: np.ndarray  # int64 (2,): U_ROWS, U_BOUNDS


class FrontSearch(NamedTuple):
    """Everything :func:`solve_front` reads or writes besides the subproblem's place, budget and ceiling."""

    data: Data  # the training rows (labels unread; ``pos_bits`` is its class_bits row of the positive class)
    pos_bits: np.ndarray  # uint64 (W,): the positive rows
    store: FrontStore
    archive: Archive  # two solved row sets per budget slot n (d_root + 1) + d ([MurTree] §4.5, [DS21] Eq. 6)
    levels: np.ndarray  # uint64 (d_root + 2, 2, W): the rows of the subproblems on the recursion path
    counts: tuple  # the depth-two solver's work arrays fpos, fneg (p,) and pos2, neg2 (p, p)
    done: np.ndarray  # bool (p, n_root): root splits (f, left nodes) searched to the end, for the bound of a stop
    prm: ParetoParams
    st: np.ndarray  # int64 (N_PARETO_STATS,): statistics and flags
    root: np.ndarray  # the root record shared by the threads (:func:`~odtmip.dp._kernels._cache.new_root`)


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _no_ceiling():
    U = np.empty((1, 2))
    U[0, 0] = INF
    U[0, 1] = INF
    return U


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _under(F, U, tol):
    """The rows of ``F`` in Down(U)."""
    return F[allowed(F, U, tol)]


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _points(F, G):
    """The (fp, fn) pairs of the rows of ``F`` followed by the points of ``G`` (k, 2), as one (k', 2) array."""
    L = np.empty((F.shape[0] + G.shape[0], 2))
    for i in range(F.shape[0]):
        L[i, 0] = F[i, P_FP]
        L[i, 1] = F[i, P_FN]
    for i in range(G.shape[0]):
        L[F.shape[0] + i, 0] = G[i, 0]
        L[F.shape[0] + i, 1] = G[i, 1]
    return L


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _push(store, c, P, st):
    """Append the rows of ``P`` to ``store.rows`` (``c`` = U_ROWS) or ``store.bounds`` (U_BOUNDS); their first row, or
    -1 and S_FULL (and U_STOP). The caller holds the store's lock."""
    dst, used = store.rows if c == U_ROWS else store.bounds, store.used
    r = used[c]
    if r + P.shape[0] > dst.shape[0]:
        st[S_FULL] = 1
        store.cache.used[U_STOP] = 1
        return -1
    for i in range(P.shape[0]):
        for j in range(dst.shape[1]):
            dst[r + i, j] = P[i, j]
    used[c] = r + P.shape[0]
    return r


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _kept_row(F, i, where, store, st):
    """The row of ``store.rows`` holding row ``i`` of ``F``, copied there at the first call (``where`` maps)."""
    if where[i] < 0:
        where[i] = _push(store, np.int64(U_ROWS), F[i:i + 1], st)
    return where[i]


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _keep_children(PF, A, B, store, st):
    """Copy the children of the new split points of ``PF`` (P_C = -1: P_A, P_B are rows of A and B) to
    ``store.rows`` and point P_A, P_B there; the children of a point stay rebuildable whatever is stored."""
    wa = np.full(A.shape[0], -1, dtype=np.int64)
    wb = np.full(B.shape[0], -1, dtype=np.int64)
    lock(store.cache)
    for r in range(PF.shape[0]):
        if PF[r, P_KIND] == KIND_SPLIT and PF[r, P_C] < 0:
            PF[r, P_A] = _kept_row(A, np.int64(PF[r, P_A]), wa, store, st)
            PF[r, P_B] = _kept_row(B, np.int64(PF[r, P_B]), wb, store, st)
            PF[r, P_C] = 0
    unlock(store.cache)


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _stored(store, e):
    """(front, bound) stored in entry ``e`` (empty arrays where none). The caller holds the store's lock."""
    ei = store.cache.ints
    F = store.rows[:0]
    L = store.bounds[:0]
    if e >= 0:
        if ei[e, PE_FRONT] >= 0:
            F = store.rows[ei[e, PE_FRONT]:ei[e, PE_FRONT] + ei[e, PE_FRONT_LEN]]
        if ei[e, PE_BOUND] >= 0:
            L = store.bounds[ei[e, PE_BOUND]:ei[e, PE_BOUND] + ei[e, PE_BOUND_LEN]]
    return F, L


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _lookup(store, k, d, n):
    """(front, bound) stored for key ``k`` at budget (d, n), read under the store's lock."""
    lock(store.cache)
    F, L = _stored(store, find_entry(store.cache, k, d, n))
    unlock(store.cache)
    return F, L


@njit(cache=NUMBA_CACHE, inline="always")
def _slot(s, d, n):
    """The archive slot of the budget (d, n)."""
    return n * (s.levels.shape[0] - 1) + d


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _store_locked(store, k, d, n, F, L, free, tol, st):
    """The entry (d, n) of key ``k`` takes the front ``F`` (``free``) or the lower bound ``L`` met with the one it
    holds; False when the store is full. The caller holds the store's lock."""
    cache = store.cache
    e = find_entry(cache, k, d, n)
    if e < 0:
        e = link_entry(cache, k, d, n, st)
        if e < 0:
            return False
    ei = cache.ints
    if free:
        r = _push(store, np.int64(U_ROWS), F, st)
        if r < 0:
            return False
        ei[e, PE_FRONT], ei[e, PE_FRONT_LEN] = r, F.shape[0]
    else:
        old = _stored(store, e)[1]
        if old.shape[0]:
            L = meet(old, L, tol)
        r = _push(store, np.int64(U_BOUNDS), L, st)
        if r < 0:
            return False
        ei[e, PE_BOUND], ei[e, PE_BOUND_LEN] = r, L.shape[0]
    return True


@njit(cache=NUMBA_CACHE)
def _store(s, D, d, n, F, U):
    """Remember the subproblem ``D`` searched to the end under ``U`` with the points ``F``: its front when U is no
    restriction, else (B) the lower bound nd(F u minimal points outside Down(U)) met with the stored one; archive
    it for (D)."""
    prm, store, st, tol = s.prm, s.store, s.st, s.prm.tol
    free = U.shape[0] > 0 and U[0, 0] == INF and U[0, 1] == INF
    if not free and not prm.infeasibility_lb:
        return
    cache = store.cache
    k = key_index(cache, D, np.bool_(True), st)
    if k < 0:
        return
    L = np.empty((0, 2)) if free else minimal(_points(F, outside(U, prm.step)), tol)
    lock(cache)
    stored = _store_locked(store, k, d, n, F, L, free, tol, st)
    unlock(cache)
    if stored and prm.similarity:
        archive_subproblem(s.archive, D, k, _slot(s, d, n))


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _bound(s, D, d, n):
    """A lower bound of PF(D, d, n) (a (k, >= 2) array, its first two columns the points): its stored front or
    bound, met with the similarity bounds (D) of the row sets archived at the same budget."""
    prm, store, tol = s.prm, s.store, s.prm.tol
    d, n = min(d, n), min(n, (np.int64(1) << d) - 1)
    L = np.zeros((1, 2))
    cache = store.cache
    if prm.use_cache:
        k = key_index(cache, D, np.bool_(False), s.st)
        if k >= 0:
            F, Lk = _lookup(store, k, d, n)
            if F.shape[0]:
                return F
            if Lk.shape[0]:
                L = Lk
    if prm.similarity:
        a, slot = s.archive, _slot(s, d, n)
        for j in range(a.size[slot]):
            F, Lold = _lookup(store, a.keys[slot, j], d, n)
            if F.shape[0]:
                Lold = F
            if Lold.shape[0] == 0:
                continue
            pos, neg = removed_weights(a.bits[slot, j], D, s.pos_bits, s.data.weights, prm.unit)
            L = meet(L, similarity_bound(Lold, neg, pos, tol), tol)
    return L


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _split_rows(D, fb, DL, DR):
    """The rows of ``D`` without (``DL``) and with (``DR``) the feature ``fb``; whether both are non-empty."""
    any_l = False
    any_r = False
    for i in range(D.shape[0]):
        DL[i] = D[i] & ~fb[i]
        DR[i] = D[i] & fb[i]
        any_l |= DL[i] != 0
        any_r |= DR[i] != 0
    return any_l and any_r


@njit(cache=NUMBA_CACHE, nogil=True)
def solve_front(s, lvl, side, d, n, U):
    """(PF(D, d, n) n Down(U), complete) for the rows D at ``s.levels[lvl, side]``: the front part under the
    ceiling ``U`` ([DS21] Eq. 3 with the techniques of :mod:`odtmip.dp.pareto`, each switched by ``s.prm``).

    Children go to ``lvl + 1`` (side 0: the feature absent, 1: present). ``complete`` is False when the deadline
    or the node limit (S_TIMEOUT) or a full store (S_FULL) cut the search short; the points are then trees found,
    not a proven front, and nothing of the interrupted subproblems is stored. At the root (``lvl`` 0) the splits
    (f, left nodes) searched to the end are marked in ``s.done``.

    Threads run it side by side (released from the GIL, ``nogil``), sharing one store (:class:`FrontStore`), each
    with its own archive and work arrays. At a root dealt out to them (``s.root``) each takes the next root feature
    no thread has taken and returns nd(the leaf u the merges of its features) under ``U`` without storing the root:
    the union of their fronts, nd again, is the root's (Eq. 3 is an nd over a union). A thread that fills the store
    stops them all (U_STOP).
    """
    prm, st, tol = s.prm, s.st, s.prm.tol
    d, n = min(d, n), min(n, (np.int64(1) << d) - 1)
    if check_clock(st, prm) or st[S_FULL]:
        return np.empty((0, NCOL)), False
    if s.store.cache.used[U_STOP]:  # another thread filled the store
        st[S_FULL] = 1
        return np.empty((0, NCOL)), False
    D = s.levels[lvl, side]
    pos, neg = class_weights(D, s.pos_bits, s.data.weights, prm.unit)
    leaf = leaf_front(pos, neg, tol)
    if d == 0 or pos <= tol or neg <= tol:  # a pure leaf, (0, 0), dominates every tree
        return _under(leaf, U, tol), True
    if prm.use_cache:
        k = key_index(s.store.cache, D, np.bool_(False), st)
        if k >= 0:
            F, L = _lookup(s.store, k, d, n)
            if F.shape[0]:
                st[S_CACHE_HITS] += 1
                return _under(F, U, tol), True
            if L.shape[0] and infeasible(L, U, tol):
                st[S_BOUND_PRUNES] += 1
                return leaf[:0], True
    data = s.data
    if prm.depth_two and d <= 2:
        st[S_DEPTH2] += 1
        fpos, fneg, pos2, neg2 = s.counts
        F, complete = depth_two_front(D, s.pos_bits, data.weights, prm.unit, data.row_start, data.row_features, d,
                                      n, tol, prm.deadline, st, fpos, fneg, pos2, neg2)
        if complete:
            _store(s, D, d, n, F, _no_ceiling())
        return _under(F, U, tol), complete
    PF = leaf
    bounded = prm.upper_bound
    Ucur = tighten(U, PF, 0.0, tol) if bounded else U
    complete = True
    half = (np.int64(1) << (d - 1)) - 1
    fbits = data.feature_bits
    DL, DR = s.levels[lvl + 1, 0], s.levels[lvl + 1, 1]
    zero = np.zeros((1, 2))  # the bound of a child nothing is known about (read only)
    dealt = lvl == 0 and s.root[ROOT_DEALT] != 0.0  # threads share the root's features, each keeps the front of its own
    f = np.int64(-1)
    while True:
        f = next_feature(s.store.cache, s.root, dealt, f)
        if f >= fbits.shape[0]:
            break
        if not _split_rows(D, fbits[f], DL, DR):  # a degenerate split reproduces the leaf ([DS21] trap 11)
            continue
        for nl in range(max(0, n - 1 - half), min(n - 1, half) + 1):
            nr = n - 1 - nl
            Lr = _bound(s, DR, d - 1, nr) if prm.lookahead or bounded else zero
            if prm.lookahead and infeasible_merge(_bound(s, DL, d - 1, nl), Lr, Ucur, tol):
                st[S_LOOKAHEAD] += 1
                if lvl == 0:
                    s.done[f, nl] = True
                continue
            # the left side under the ceiling minus the right's bound, then the right under the ceiling minus the
            # left's front; one recursive call for both, as numba types every recursive call site twice
            A, B, ok = leaf[:0], leaf[:0], True
            for side_c in range(2):
                F, ok = solve_front(s, lvl + 1, side_c, d - 1, nr if side_c else nl,
                                    subtract(Ucur, A if side_c else Lr, tol) if bounded else _no_ceiling())
                if side_c:
                    B = F
                else:
                    A = F
                if not ok or not F.shape[0]:
                    break
            if A.shape[0] and B.shape[0]:
                M = merge(A, B, PF, tol)
                M[:, P_FEATURE] = f
                st[S_MERGES] += 1
                if M.shape[0]:  # else nothing new: PF and its ceiling stay
                    PF = nondominated(np.concatenate((PF, M)), tol)
                    _keep_children(PF, A, B, s.store, st)
                    if bounded:
                        Ucur = tighten(U, PF, 0.0, tol)
            if not ok or st[S_FULL]:
                complete = False
                break
            if lvl == 0:
                s.done[f, nl] = True
        if not complete:
            break
    if complete and not dealt:  # a dealt root's front is the part of its thread's features (Python merges them)
        _store(s, D, d, n, PF, U)
    return _under(PF, U, tol), complete


@njit(cache=NUMBA_CACHE)
def root_bound(s, d, n, P):
    """A lower bound of the root (``s.levels[0, 0]`` at budget (d, n), d > 2 or no depth-two solver) after a stop:
    the points ``P`` found, and the merge of the children's lower bounds (Eq. 5) for every split not marked in
    ``s.done``. (A finished split's trees outside the tightened ceiling are weakly dominated by points found.)"""
    tol = s.prm.tol
    L = _points(P, np.empty((0, 2)))
    D = s.levels[0, 0]
    DL, DR = np.empty_like(D), np.empty_like(D)
    half = (np.int64(1) << (d - 1)) - 1
    fbits = s.data.feature_bits
    for f in range(fbits.shape[0]):
        if not _split_rows(D, fbits[f], DL, DR):
            continue
        for nl in range(max(0, n - 1 - half), min(n - 1, half) + 1):
            if not s.done[f, nl]:
                L = minimal(np.concatenate((L, merge_bounds(_bound(s, DL, d - 1, nl), _bound(s, DR, d - 1, n - 1 - nl),
                                                            tol))), tol)
    return minimal(L, tol)


def new_store(words: int, n_keys: int = 1 << 12, n_rows: int = 1 << 14) -> FrontStore:
    """An empty store for row sets of ``words`` uint64 words: ``n_keys`` keys, twice as many entries, ``n_rows``
    points and a quarter of that lower-bound points (it grows when full)."""
    return FrontStore(cache=new_tables(words, n_keys, 2 * n_keys, NPE, 0), rows=np.zeros((n_rows, NCOL)),
                      bounds=np.zeros((max(n_rows // 4, 1), 2)), used=np.zeros(2, dtype=np.int64))


def grow_store(store: FrontStore) -> FrontStore:
    """The same store with its full arrays twice as large (keys, entries and rows keep their indices); every array
    when none looks full (a front larger than the free rows)."""
    cache = grow_tables(store.cache)
    rows, bounds = store.rows, store.bounds
    grown = cache.keys.shape[0] > store.cache.keys.shape[0] or cache.ints.shape[0] > store.cache.ints.shape[0]
    every = not grown and store.used[U_ROWS] <= rows.shape[0] // 2 and store.used[U_BOUNDS] <= bounds.shape[0] // 2
    if every or store.used[U_ROWS] > rows.shape[0] // 2:
        rows = np.concatenate((rows, np.zeros_like(rows)))
    if every or store.used[U_BOUNDS] > bounds.shape[0] // 2:
        bounds = np.concatenate((bounds, np.zeros_like(bounds)))
    return FrontStore(cache=cache, rows=rows, bounds=bounds, used=store.used)
