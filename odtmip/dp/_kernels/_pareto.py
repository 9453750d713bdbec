"""Kernels of the bi-objective (FP, FN) search of [DS21]: fronts, their merge and filter, the ceiling algebra of
the bounds, and the specialised depth-two front solver.

A **front** is a float64 array (k, NCOL), one row per point, sorted by ``fp`` ascending (then ``fn`` strictly
descending): the point's false-positive and false-negative weight, its branch nodes, and how to rebuild its tree
(columns below). A **ceiling** U is a float64 array (k, 2) of maximal points whose coordinates may be inf; its
allowed region is Down(U) = {t : t <= u componentwise for some u in U} (see :mod:`odtmip.dp.pareto`). A **lower
bound** L is a float64 array (k, 2): every tree's pair is >= some point of L.

``tol`` is 0 for integer weights (exact) and the round-off bound of :func:`odtmip.dp.solver.tie_tolerance`
otherwise; ``unit`` is the step "strictly better" means: 1 for integer weights, 0 (closed regions, weaker but
sound) for real ones.

References
----------
.. [DS21] E. Demirović, P. J. Stuckey, "Optimal Decision Trees for Nonlinear Metrics", AAAI-21, 35(5):3733-3741.
.. [MurTree] E. Demirović et al., "MurTree: Optimal Classification Trees via Dynamic Programming and Search",
   JMLR 23(26), 2022.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from odtmip.dp._kernels._common import INF, NUMBA_CACHE, clock, trailing_zeros

# ---- columns of a front ------------------------------------------------------------------------------
P_FP = 0  # false-positive weight
P_FN = 1  # false-negative weight
P_NODES = 2  # branch nodes of the point's tree
P_KIND = 3  # how to rebuild it: KIND_LEAF, KIND_TERMINAL or KIND_SPLIT
P_FEATURE = 4  # root feature (internal index); -1 for a leaf
P_A = 5  # leaf: 1 = predicts positive; terminal: left child feature (-1: leaf); split: row in the left front
P_B = 6  # terminal: right child feature (-1: leaf); split: row in the right front
P_C = 7  # terminal: leaf labels, bit i for leaf i from the left (1 = positive); split: id of the merge
NCOL = 8

KIND_LEAF = 0
KIND_TERMINAL = 1  # a tree of depth <= 2 found by depth_two_front
KIND_SPLIT = 2  # a root split whose children are rows of two fronts (a merge, [DS21] Def. 2)


@njit(cache=NUMBA_CACHE)
def nondominated(P, tol):
    """nd(P): the non-dominated rows of ``P`` sorted by fp ascending (fn then strictly descending).

    Of equal points (within ``tol``) the one with the fewest branch nodes is kept. [DS21] §3 sorts
    lexicographically and keeps a point whose fn is strictly below the last kept one's; here one sort by fp and,
    per run of equal fp, its least (fn, nodes) does the same.
    """
    k = P.shape[0]
    if k == 0:
        return P.copy()
    o = np.argsort(P[:, P_FP])
    keep = np.empty(k, dtype=np.int64)
    m = 0
    i = 0
    while i < k:
        best = o[i]  # the least (fn, nodes) among the points of this fp
        j = i + 1
        while j < k and P[o[j], P_FP] <= P[o[i], P_FP] + tol:
            c = o[j]
            if P[c, P_FN] < P[best, P_FN] - tol or (P[c, P_FN] <= P[best, P_FN] + tol
                                                     and P[c, P_NODES] < P[best, P_NODES]):
                best = c
            j += 1
        if m == 0 or P[best, P_FN] < P[keep[m - 1], P_FN] - tol:
            keep[m] = best
            m += 1
        i = j
    return P[keep[:m]]


@njit(cache=NUMBA_CACHE)
def merge(A, B, tol):
    """Merge(A, B) = nd({a + b}) of two sibling fronts ([DS21] Def. 2); column ``P_A``/``P_B`` hold the rows of
    ``a`` and ``b``, ``P_C`` (the merge id) and ``P_FEATURE`` are left for the caller."""
    out = np.empty((A.shape[0] * B.shape[0], NCOL))
    r = 0
    for i in range(A.shape[0]):
        for j in range(B.shape[0]):
            out[r, P_FP] = A[i, P_FP] + B[j, P_FP]
            out[r, P_FN] = A[i, P_FN] + B[j, P_FN]
            out[r, P_NODES] = A[i, P_NODES] + B[j, P_NODES] + 1
            out[r, P_KIND] = KIND_SPLIT
            out[r, P_FEATURE] = -1
            out[r, P_A] = i
            out[r, P_B] = j
            out[r, P_C] = -1
            r += 1
    return nondominated(out, tol)


@njit(cache=NUMBA_CACHE)
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
    return _pairwise(L1, L2, False, tol)


@njit(cache=NUMBA_CACHE)
def minimal(L, tol):
    """The minimal points of the (k, 2) array ``L``, sorted by the first coordinate."""
    if L.shape[0] == 0:
        return L.copy()
    o = np.argsort(L[:, 1], kind="mergesort")
    o = o[np.argsort(L[o, 0], kind="mergesort")]
    keep = np.empty(L.shape[0], dtype=np.int64)
    m = 0
    for i in o:
        if m == 0 or L[i, 1] < L[keep[m - 1], 1] - tol:
            keep[m] = i
            m += 1
    return L[keep[:m]].copy()


@njit(cache=NUMBA_CACHE)
def maximal(U, tol):
    """The maximal points of the (k, 2) array ``U`` (a ceiling), sorted by the first coordinate ascending."""
    if U.shape[0] == 0:
        return U.copy()
    o = np.argsort(-U[:, 1], kind="mergesort")
    o = o[np.argsort(-U[o, 0], kind="mergesort")]  # fp descending, then fn descending
    keep = np.empty(U.shape[0], dtype=np.int64)
    m = 0
    for i in o:
        if m == 0 or U[i, 1] > U[keep[m - 1], 1] + tol:
            keep[m] = i
            m += 1
    return U[keep[:m][::-1]].copy()


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
def subtract(U, S, tol):
    """U minus S = maxnd({u - s : s <= u}) ([DS21] Eq. 4): the ceiling of a child whose sibling is >= a point
    of ``S`` (its front, or its lower bound); a + b in Down(U) iff b <= u - a for some u."""
    out = np.empty((U.shape[0] * S.shape[0], 2))
    r = 0
    for u in range(U.shape[0]):
        for s in range(S.shape[0]):
            if S[s, 0] <= U[u, 0] + tol and S[s, 1] <= U[u, 1] + tol:
                out[r, 0] = max(U[u, 0] - S[s, 0], 0.0)
                out[r, 1] = max(U[u, 1] - S[s, 1], 0.0)
                r += 1
    return maximal(out[:r], tol)


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
    out = np.empty((U.shape[0] * (k + 1), 2))
    r = 0
    for u in range(U.shape[0]):
        for g in range(k + 1):
            a = min(U[u, 0], G[g, 0])
            b = min(U[u, 1], G[g, 1])
            if a >= -tol and b >= -tol:
                out[r, 0] = max(a, 0.0)
                out[r, 1] = max(b, 0.0)
                r += 1
    return maximal(out[:r], tol)


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
    return _pairwise(L1, L2, True, tol)


@njit(cache=NUMBA_CACHE)
def similarity_bound(L, removed_neg, removed_pos, tol):
    """[DS21] Eq. 6: a lower bound of a new row set from one ``L`` of an old row set at the same budget, when
    ``removed_neg`` (``removed_pos``) weight of negatives (positives) of the old set is not in the new one:
    removing a negative lowers fp by at most its weight, a positive only fn, and adding rows lowers nothing."""
    out = np.empty((L.shape[0], 2))
    for i in range(L.shape[0]):
        out[i, 0] = max(0.0, L[i, 0] - removed_neg)
        out[i, 1] = max(0.0, L[i, 1] - removed_pos)
    return minimal(out, tol)


@njit(cache=NUMBA_CACHE)
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


@njit(cache=NUMBA_CACHE)
def class_weights(bits, pos_bits, weights, unit):
    """(positive, negative) weight of the rows in ``bits``."""
    pos = 0.0
    neg = 0.0
    for i in range(bits.shape[0]):
        word = bits[i]
        while word:
            b = np.int64(trailing_zeros(word))
            w = 1.0 if unit else weights[i * 64 + b]
            if (pos_bits[i] >> np.uint64(b)) & np.uint64(1):
                pos += w
            else:
                neg += w
            word &= word - np.uint64(1)
    return pos, neg


@njit(cache=NUMBA_CACHE)
def _count_pairs(bits, pos_bits, weights, unit, row_start, row_features, fpos, fneg, pos2, neg2):
    """Frequency counting ([MurTree] §4.3): the positive and negative weight of the rows in ``bits`` with
    feature f (``fpos[f]``, ``fneg[f]``) and with features f < g both present (``pos2[f, g]``, ``neg2[f, g]``)."""
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


@njit(cache=NUMBA_CACHE)
def _cell(pos, neg, label_bit, tol):
    """Leaf front of a cell with its labels in ``P_C`` at ``label_bit`` (1 = positive)."""
    P = leaf_front(pos, neg, tol)
    for i in range(P.shape[0]):
        P[i, P_C] = P[i, P_A] * label_bit
    return P


@njit(cache=NUMBA_CACHE)
def _child_front(p_side, n_side, fpos, fneg, pos2, neg2, f, present, tol):
    """Front of one child of a root split on ``f`` (``present``: the rows with f) over trees of <= 1 node: its
    leaf and every split on g != f. ``P_A`` holds g (-1: leaf) and ``P_C`` the labels (bit 0: the leaf, or
    the g-absent leaf; bit 1: the g-present leaf)."""
    p = fpos.shape[0]
    out = np.empty((2 + 4 * p, NCOL))
    leaf = _cell(p_side, n_side, 1, tol)
    r = 0
    for i in range(leaf.shape[0]):
        out[r] = leaf[i]
        out[r, P_A] = -1
        r += 1
    for g in range(p):
        if g == f:
            continue
        a, b = min(f, g), max(f, g)
        pfg, nfg = pos2[a, b], neg2[a, b]
        if present:  # cells (f, not g) and (f, g)
            pg, ng = pfg, nfg
        else:  # cells (not f, not g) and (not f, g)
            pg, ng = fpos[g] - pfg, fneg[g] - nfg
        p0, n0 = p_side - pg, n_side - ng
        if pg + ng <= 0.0 or p0 + n0 <= 0.0:  # an empty side: the leaf again ([MurTree] Prop. 4.2)
            continue
        # the four labellings of the two leaves (bit 0: the g-absent leaf, bit 1: the g-present leaf, 1 =
        # positive): a positive leaf errs on its negatives (fp), a negative one on its positives (fn)
        for labels in range(4):
            out[r, P_FP] = (n0 if labels & 1 else 0.0) + (ng if labels & 2 else 0.0)
            out[r, P_FN] = (0.0 if labels & 1 else p0) + (0.0 if labels & 2 else pg)
            out[r, P_NODES] = 1
            out[r, P_KIND] = KIND_TERMINAL
            out[r, P_FEATURE] = g
            out[r, P_A] = g
            out[r, P_B] = -1
            out[r, P_C] = labels
            r += 1
    return nondominated(out[:r], tol)


@njit(cache=NUMBA_CACHE)
def _root_front(L, R, f, tol):
    """Merge of the two child fronts of root ``f`` as terminal points (labels: left bits 0-1, right 2-3)."""
    M = merge(L, R, tol)
    for r in range(M.shape[0]):
        i, j = np.int64(M[r, P_A]), np.int64(M[r, P_B])
        M[r, P_KIND] = KIND_TERMINAL
        M[r, P_FEATURE] = f
        M[r, P_A] = L[i, P_A]
        M[r, P_B] = R[j, P_A]
        M[r, P_C] = L[i, P_C] + 4 * R[j, P_C]
    return M


@njit(cache=NUMBA_CACHE)
def depth_two_front(bits, pos_bits, weights, unit, row_start, row_features, depth, nodes, tol, deadline,
                    fpos, fneg, pos2, neg2):
    """PF(D, d, n) for d <= 2: the front of every tree of depth <= ``depth`` with <= ``nodes`` branch nodes on the
    rows ``bits`` ([DS21] §3: [MurTree]'s depth-two solver with Merge for sums).

    Per root f, the front of each child over its leaf and all splits on g (cells from one frequency count), then
    the merge of the two children: both may split with 3 nodes, one of them with 2, neither with 1. The result is
    nd of the union over f with the leaf's front. ``fpos``, ``fneg`` (p,) and ``pos2``, ``neg2`` (p, p) are work
    arrays. Returns (front, complete); ``complete`` is False when the clock passed ``deadline`` (read once per
    root feature), and the front then holds the roots tried so far.
    """
    P, N = class_weights(bits, pos_bits, weights, unit)
    best = leaf_front(P, N, tol)
    if depth == 0 or nodes == 0:
        return best, True
    _count_pairs(bits, pos_bits, weights, unit, row_start, row_features, fpos, fneg, pos2, neg2)
    p = fpos.shape[0]
    for f in range(p):
        if deadline < INF and clock() > deadline:
            return best, False
        pr, nr = fpos[f], fneg[f]
        pl, nl = P - pr, N - nr
        if pr + nr <= 0.0 or pl + nl <= 0.0:
            continue
        leaf_l, leaf_r = _cell(pl, nl, 1, tol), _cell(pr, nr, 1, tol)
        leaf_l[:, P_A] = -1
        leaf_r[:, P_A] = -1
        if depth == 1 or nodes == 1:
            F = _root_front(leaf_l, leaf_r, f, tol)
        else:
            L = _child_front(pl, nl, fpos, fneg, pos2, neg2, f, False, tol)
            R = _child_front(pr, nr, fpos, fneg, pos2, neg2, f, True, tol)
            if nodes >= 3:
                F = _root_front(L, R, f, tol)
            else:  # two nodes: one child splits, the other is a leaf
                F = np.concatenate((_root_front(L, leaf_r, f, tol), _root_front(leaf_l, R, f, tol)))
        best = nondominated(np.concatenate((best, F)), tol)
    return best, True
