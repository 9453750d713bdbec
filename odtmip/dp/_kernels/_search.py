"""The compiled search of [MurTree] Alg. 1-3: T(D, d, n) by recursion over (feature, left size) with
caching, upper and lower bounds.

Everything below runs in one numba function that calls itself, so no Python frame is entered per search
node. The objective is the lexicographic pair (leaf costs + ``penalty`` x branch nodes, branch nodes): it
adds up over the two children plus (penalty, 1) for the root, so Eq. 1 holds for pairs, and minimising
pairs returns, among the optimal trees, one with the fewest branch nodes. "Infeasible under UB" means
no tree with pair <= UB; the next pair above (c, k) is (c, k + 1), so "strictly better than (c, k)" is
"<= (c, k - 1)" and the integer "best - 1" of [MurTree] §4.2 (upper bounds) becomes exact for real objectives too.

Arguments shared by the kernels (all arrays; STYLE §6.5)::

    data  = (fbits (p, W) uint64   rows where feature f is 1, one bitset per feature
             cbits (K, W) uint64   rows of each class
             wts   (n,)  float64   sample weights (ones when unweighted)
             yv    (n,)  int64     class of each row
             rptr  (n+1,) int64, ridx (nnz,) int64   sparse present features of each row, sorted)
    cache = see :mod:`odtmip.dp._kernels._cache`
    arch  = (abits (L, 2, W) uint64, akey (L, 2) int64, an (L,) int64)
            similarity archive: two solved subproblems per depth and their cache keys ([MurTree] §4.5)
    d2    = depth-two scratch, see :mod:`odtmip.dp._kernels._depth2`
    lv    = (lbits (L+1, 2, W) uint64, lkeys (L+1, 2, KW) uint64, lcnt (L+1, 2, K+1) float64)
            per recursion level and side: the rows, the branch-cache key and the class weights
    ipar, fpar, st : parameters and statistics, indices in :mod:`odtmip.dp._kernels._common`
    rinc  (5,) float64  root incumbent (objective, nodes, feature, left budget, depth) for anytime use
"""

from __future__ import annotations

import numpy as np
from numba import njit

from odtmip.dp._kernels._cache import (
    E_SOL_DEPTH,
    E_SOL_NODES,
    EF_COST,
    find_optimal,
    key_index,
    lower_bound,
    store_lower_bound,
    store_optimal,
)
from odtmip.dp._kernels._common import (
    F_PENALTY,
    F_TOL,
    INF,
    NUMBA_CACHE,
    P_BRANCH_KEYS,
    P_CACHE,
    P_COST,
    P_DEGENERATE,
    P_DEPTH2,
    P_DYNAMIC_ORDER,
    P_K,
    P_MINROWS,
    P_RLB,
    P_SIMILARITY,
    P_UB,
    P_UNIT,
    S_CACHE_HITS,
    S_FULL,
    S_SIM_PRUNE,
    S_TIMEOUT,
    check_clock,
    class_counts,
    leaf_cost,
    lex_le,
    lex_lt,
    popcount,
    weight_minus,
)
from odtmip.dp._kernels._depth2 import solve_terminal

#: Node part of "no upper bound".
NO_BOUND_NODES = np.int64(1) << 60


@njit(cache=NUMBA_CACHE)
def similarity_bound(cache, arch, D, d, n, wts, unit, tol):
    """Similarity lower bound on the objective of ``D`` at budget (d, n), [MurTree] §4.5.

    For an archived subproblem D_old of the same depth, T(D) >= LB(D_old, d, n) - w(D_old \\ D): removing a
    row lowers the optimum by at most its weight and adding rows never lowers it. Only valid for the
    misclassification cost with ``min_leaf`` = 1 (the caller checks).
    """
    abits, akey, an = arch
    best = 0.0
    for j in range(an[d]):
        lbc = lower_bound(cache, akey[d, j], d, n, tol)[0]
        if lbc <= best:
            continue
        v = lbc - weight_minus(abits[d, j], D, wts, unit)
        if v > best:
            best = v
    return best


@njit(cache=NUMBA_CACHE)
def archive(arch, D, k, d):
    """Remember solved ``D`` (cache key ``k``) at depth ``d``; when full, replace the most similar entry."""
    abits, akey, an = arch
    if an[d] < 2:
        j = an[d]
        an[d] += 1
    else:
        j, best = 0, np.uint64(1) << np.uint64(63)
        for t in range(2):
            diff = np.uint64(0)
            for i in range(D.shape[0]):
                diff += popcount(abits[d, t, i] ^ D[i])
            if diff < best:
                j, best = t, diff
    abits[d, j, :] = D
    akey[d, j] = k


@njit(cache=NUMBA_CACHE)
def _within(c, nodes, depth, ubc, ubn, tol):
    """Return the tree (c, nodes, depth) if it meets the bound, else the infeasible marker."""
    if c < INF and lex_le(c, nodes, ubc, ubn, tol):
        return c, nodes, depth
    return INF, np.int64(0), np.int64(0)


@njit(cache=NUMBA_CACHE)
def _child_bound(cache, k, d, n, leaf):
    """Lower bound of a child: its leaf cost when it gets no node, else the cached bound."""
    if n == 0:
        return leaf, np.int64(0)
    return lower_bound(cache, k, d, n, 0.0)


@njit(cache=NUMBA_CACHE)
def solve_node(data, cache, arch, d2, lv, ipar, fpar, st, rinc, lvl, side, d, n, ubc, ubn):
    """Optimal (objective, branch nodes) of the subproblem ``lv[.][lvl, side]`` at budget (d, n) if <= UB.

    Parameters
    ----------
    lvl, side : int
        Where the subproblem's rows, key and class weights are (``lv`` arrays); children go to
        ``lvl + 1``, left side 0 (feature absent), right side 1 (feature present).
    d, n : int
        Depth and branch-node budget, canonical: d <= n <= 2^d - 1 ([MurTree] Eq. 1).
    ubc, ubn : float, int
        Upper bound (objective, nodes): only trees lexicographically <= it are wanted.

    Returns
    -------
    (objective, nodes, depth) of the optimal tree when it is <= UB, else (inf, 0, 0). Optimal trees are
    written to the cache (root assignment only); an infeasible node gets the lower bound
    max(LB, RLB, UB+) of Eq. 15-16. Nothing is written once the deadline passed or the cache is full.

    Notes
    -----
    [MurTree] Alg. 1 (SolveSubtree) with Alg. 2-3 (general case), §4 (depth two), §5 (similarity bound),
    §6 (cache), §7 (UB propagation, subtracting the sibling's cached bound), §8 (child order), §9
    (degenerate splits).
    """
    fbits, cbits, wts, yv = data[0], data[1], data[2], data[3]
    lbits, lkeys, lcnt = lv
    K = ipar[P_K]
    minrows = ipar[P_MINROWS]
    code = ipar[P_COST]
    unit = ipar[P_UNIT] != 0
    use_cache = ipar[P_CACHE] != 0
    branch_keys = ipar[P_BRANCH_KEYS] != 0
    use_ub = ipar[P_UB] != 0
    pen = fpar[F_PENALTY]
    tol = fpar[F_TOL]
    if check_clock(st, fpar) or st[S_FULL]:
        return INF, np.int64(0), np.int64(0)
    D = lbits[lvl, side]
    cnt = lcnt[lvl, side]
    n_rows = np.int64(cnt[K])
    leafc = leaf_cost(cnt, K, code)[0]
    if 0 < n_rows < minrows:
        leafc = INF
    if not lex_le(0.0, 0, ubc, ubn, tol):
        return INF, np.int64(0), np.int64(0)
    # no budget, or too few rows for any split with minrows on both sides: only the leaf
    if d == 0 or n == 0 or n_rows < 2 * minrows:
        return _within(leafc, np.int64(0), np.int64(0), ubc, ubn, tol)

    key = lkeys[lvl, side] if branch_keys else D
    k = key_index(cache, key, False, st)
    lbc, lbn = 0.0, np.int64(0)
    if use_cache and k >= 0:
        e = find_optimal(cache, k, d, n)
        if e >= 0:
            st[S_CACHE_HITS] += 1
            return _within(cache[5][e, EF_COST], cache[4][e, E_SOL_NODES], cache[4][e, E_SOL_DEPTH],
                           ubc, ubn, tol)
        lbc, lbn = lower_bound(cache, k, d, n, tol)
    if ipar[P_SIMILARITY] != 0:
        sim = similarity_bound(cache, arch, D, d, n, wts, unit, tol)
        if lex_lt(lbc, lbn, sim, 0, tol):
            lbc, lbn = sim, np.int64(0)
            if k < 0:
                k = key_index(cache, key, True, st)
                if k < 0:
                    return INF, np.int64(0), np.int64(0)
            store_lower_bound(cache, k, d, n, lbc, lbn, tol, st)
            if lex_lt(ubc, ubn, lbc, lbn, tol):
                st[S_SIM_PRUNE] += 1
    if lex_lt(ubc, ubn, lbc, lbn, tol):
        return INF, np.int64(0), np.int64(0)
    if leafc < INF and lex_le(leafc, 0, lbc, lbn, tol):
        # the bound reaches the leaf: the leaf is optimal
        if k < 0:
            k = key_index(cache, key, True, st)
            if k < 0:
                return INF, np.int64(0), np.int64(0)
        store_optimal(cache, k, d, n, leafc, 0, 0, -1, 0, -1, -1, 0, st)
        return _within(leafc, np.int64(0), np.int64(0), ubc, ubn, tol)

    if ipar[P_DEPTH2] != 0 and d <= 2:
        solve_terminal(data, d2, ipar, fpar, st, D, cnt, d == 2)
        if k < 0:
            k = key_index(cache, key, True, st)
            if k < 0:
                return INF, np.int64(0), np.int64(0)
        res_c, res_i = d2[17], d2[18]
        # terminal results are exact whatever the UB: cache every budget ([MurTree] §4.6)
        for b in range(3 if d == 2 else 1):
            bd = 1 if b == 0 else 2
            bn = 1 if b == 0 else b + 1
            nodes = res_i[b, 0]
            depth = nodes if nodes < 2 else 2
            store_optimal(cache, k, bd, bn, res_c[b], nodes, depth, res_i[b, 1],
                          1 if res_i[b, 2] >= 0 else 0, res_i[b, 2], res_i[b, 3], 1, st)
        archive(arch, D, k, d)
        b = 0 if d == 1 else n - 1
        nodes = res_i[b, 0]
        return _within(res_c[b], nodes, nodes if nodes < 2 else np.int64(2), ubc, ubn, tol)

    # general case, Alg. 2-3
    p = fbits.shape[0]
    W = D.shape[0]
    has_best = leafc < INF and lex_le(leafc, 0, ubc, ubn, tol)
    bc, bn, bd, bf, bl = leafc, np.int64(0), np.int64(0), np.int64(-1), np.int64(0)
    # a new tree must be <= (tc, tn): within the UB and strictly better than the incumbent
    tc, tn = (bc, bn - 1) if has_best else (ubc, ubn)
    rlbc, rlbn = INF, np.int64(0)
    max_l = min((1 << (d - 1)) - 1, n - 1)
    min_l = n - 1 - max_l
    DL, DR = lbits[lvl + 1, 0], lbits[lvl + 1, 1]
    cL, cR = lcnt[lvl + 1, 0], lcnt[lvl + 1, 1]
    stop = False
    for f in range(p):
        if stop or (has_best and lex_le(bc, bn, lbc, lbn, tol)):
            break  # stopped, or the incumbent reaches the lower bound
        nr = np.uint64(0)
        for i in range(W):
            v = D[i] & fbits[f, i]
            DR[i] = v
            DL[i] = D[i] & ~fbits[f, i]
            nr += popcount(v)
        n_right = np.int64(nr)
        n_left = n_rows - n_right
        if n_right == 0 or n_left == 0:
            if ipar[P_DEGENERATE] != 0:
                continue  # [MurTree] Prop. 4.2: dominated by a smaller tree
        elif n_right < minrows or n_left < minrows:
            continue  # a side too small for any leaf
        class_counts(DR, cbits, wts, yv, K, unit, cR)
        for c in range(K + 1):
            cL[c] = cnt[c] - cR[c]
        leaf_l = leaf_cost(cL, K, code)[0]
        leaf_r = leaf_cost(cR, K, code)[0]
        if branch_keys:
            lkeys[lvl + 1, 0, :] = key
            lkeys[lvl + 1, 1, :] = key
            lkeys[lvl + 1, 0, (2 * f) >> 6] |= np.uint64(1) << np.uint64((2 * f) & 63)
            lkeys[lvl + 1, 1, (2 * f + 1) >> 6] |= np.uint64(1) << np.uint64((2 * f + 1) & 63)
            key_l, key_r = lkeys[lvl + 1, 0], lkeys[lvl + 1, 1]
        else:
            key_l, key_r = DL, DR
        k_l = key_index(cache, key_l, False, st) if use_cache else np.int64(-1)
        k_r = key_index(cache, key_r, False, st) if use_cache else np.int64(-1)
        # [MurTree] §4.7-4.8: the child with the larger leaf cost first, so its sibling is more likely pruned
        left_first = ipar[P_DYNAMIC_ORDER] == 0 or leaf_l >= leaf_r
        for nl in range(min_l, max_l + 1):
            nr_ = n - 1 - nl
            dl = min(d - 1, nl)
            dr = min(d - 1, nr_)
            lb_lc, lb_ln = _child_bound(cache, k_l, dl, nl, leaf_l)
            lb_rc, lb_rn = _child_bound(cache, k_r, dr, nr_, leaf_r)
            sc, sn = lb_lc + lb_rc + pen, lb_ln + lb_rn + 1
            if use_ub and lex_lt(tc, tn, sc, sn, tol):
                if lex_lt(sc, sn, rlbc, rlbn, tol):
                    rlbc, rlbn = sc, sn
                continue
            if left_first:
                s1, d1, n1, s2, d2_, n2 = 0, dl, nl, 1, dr, nr_
                lb2c, lb2n = lb_rc, lb_rn
            else:
                s1, d1, n1, s2, d2_, n2 = 1, dr, nr_, 0, dl, nl
                lb2c, lb2n = lb_lc, lb_ln
            if use_ub:
                u1c, u1n = tc - pen - lb2c, tn - 1 - lb2n
            else:
                u1c, u1n = INF, NO_BOUND_NODES
            r1c, r1n, r1d = solve_node(data, cache, arch, d2, lv, ipar, fpar, st, rinc, lvl + 1, s1, d1, n1,
                                       u1c, u1n)
            if st[S_TIMEOUT] != 0 or st[S_FULL] != 0:
                stop = True
                break
            r2c, r2n, r2d = INF, np.int64(0), np.int64(0)
            if r1c < INF:
                if use_ub:
                    u2c, u2n = tc - pen - r1c, tn - 1 - r1n
                else:
                    u2c, u2n = INF, NO_BOUND_NODES
                r2c, r2n, r2d = solve_node(data, cache, arch, d2, lv, ipar, fpar, st, rinc, lvl + 1, s2, d2_, n2,
                                           u2c, u2n)
                if st[S_TIMEOUT] != 0 or st[S_FULL] != 0:
                    stop = True
                    break
            if r1c == INF or r2c == INF:
                if ipar[P_RLB] != 0:
                    if use_cache:
                        k_l = key_index(cache, key_l, False, st)
                        k_r = key_index(cache, key_r, False, st)
                    lb_lc, lb_ln = _child_bound(cache, k_l, dl, nl, leaf_l)
                    lb_rc, lb_rn = _child_bound(cache, k_r, dr, nr_, leaf_r)
                    sc, sn = lb_lc + lb_rc + pen, lb_ln + lb_rn + 1
                    if lex_lt(sc, sn, rlbc, rlbn, tol):
                        rlbc, rlbn = sc, sn
                continue
            vc, vn = r1c + r2c + pen, r1n + r2n + 1
            if not has_best or lex_lt(vc, vn, bc, bn, tol):
                has_best = True
                bc, bn, bd, bf, bl = vc, vn, 1 + max(r1d, r2d), np.int64(f), np.int64(nl)
                tc, tn = bc, bn - 1
                if lvl == 0 and lex_lt(bc, bn, rinc[0], np.int64(rinc[1]), tol):
                    rinc[0], rinc[1], rinc[2], rinc[3], rinc[4] = bc, bn, bf, bl, bd
                if lex_le(bc, bn, lbc, lbn, tol):
                    break
    if st[S_TIMEOUT] != 0 or st[S_FULL] != 0:
        return INF, np.int64(0), np.int64(0)  # nothing from a loop cut short is stored
    if k < 0:
        k = key_index(cache, key, True, st)
        if k < 0:
            return INF, np.int64(0), np.int64(0)
    if has_best:
        store_optimal(cache, k, d, n, bc, bn, bd, bf, bl, -1, -1, 0, st)
        archive(arch, D, k, d)
        return _within(bc, bn, bd, ubc, ubn, tol)
    # Eq. 15-16: no tree <= UB; the optimum is above UB, and at least the best leaf-or-split bound
    nlc, nln = lbc, lbn
    if lex_lt(nlc, nln, ubc, ubn + 1, tol):
        nlc, nln = ubc, ubn + 1
    if ipar[P_RLB] != 0:
        if leafc < INF and lex_lt(leafc, 0, rlbc, rlbn, tol):
            rlbc, rlbn = leafc, np.int64(0)
        if lex_lt(nlc, nln, rlbc, rlbn, tol):
            nlc, nln = rlbc, rlbn
    store_lower_bound(cache, k, d, n, nlc, nln, tol, st)
    archive(arch, D, k, d)
    return INF, np.int64(0), np.int64(0)


@njit(cache=NUMBA_CACHE)
def root_bound(cache, key, d, n, tol):
    """Best cached lower bound (objective, nodes) of the root subproblem ``key`` at budget (d, n)."""
    st = np.zeros(8, dtype=np.int64)
    k = key_index(cache, key, False, st)
    return lower_bound(cache, k, d, n, tol)


@njit(cache=NUMBA_CACHE)
def optimal_entry(cache, key, d, n):
    """Entry index of the optimal tree of ``key`` at budget (d, n), -1 if none (for reconstruction)."""
    st = np.zeros(8, dtype=np.int64)
    k = key_index(cache, key, False, st)
    if k < 0:
        return -1
    return find_optimal(cache, k, d, n)
