"""The compiled search of [MurTree] Alg. 1-3: T(D, d, n) by recursion over (feature, left size) with
caching, upper and lower bounds, and the bounds of [OSDT] for a positive penalty per branch node.

Everything below runs in one numba function that calls itself, so no Python frame is entered per search
node. The objective is the lexicographic pair (leaf costs + ``penalty`` x branch nodes, branch nodes): it
adds up over the two children plus (penalty, 1) for the root, so Eq. 1 holds for pairs, and minimising
pairs returns, among the optimal trees, one with the fewest branch nodes. "Infeasible under UB" means
no tree with pair <= UB; the next pair above (c, k) is (c, k + 1), so "strictly better than (c, k)" is
"<= (c, k - 1)" and the integer "best - 1" of [MurTree] §4.2 (upper bounds) becomes exact for real objectives too.

How the bounds of [OSDT] (a best-first search over leaf sets) act in this recursion:

* Hierarchical lower bound (Theorem 3.1) and one-step lookahead (Lemma 3.2): a subtree is only searched
  under the upper bound "incumbent minus what the rest of the tree costs at least" (the parent's penalty and
  the sibling's lower bound), so a partial tree whose fixed part already reaches the incumbent is never
  extended; the cached lower bounds of solved or refuted subproblems are OSDT's b(d_un) for the leaves that
  stay unsplit, and every split adds ``penalty`` to the bound before its children are searched.
* Equivalent points (Theorem B.2): ``cnt[K + 1]`` of a subproblem is the weight of the rows that are not in
  the majority class of their group of identical feature vectors (``data[6]``); a group is never separated
  by a split, so this weight is a lower bound on the errors of every tree on the subproblem. It raises the
  subproblem's lower bound, closes it when its leaf already reaches it, and enters the two bounds below.
* Leaf support (Theorem 3.3) and the leaf count (Theorem C.1, per subproblem):
  :func:`~odtmip.dp._kernels._common.effective_budget` shrinks the budget of every subproblem (and of the
  root, which makes a search without a depth limit finite). That budget is the subproblem's cache budget.
* Incremental accuracy (Theorem 3.4): before the children of a split are searched, each child is either a
  leaf (its cost is known) or a subtree with at least one more split (cost >= max(its lower bound, its
  equivalent points + penalty)); the pair of leaves only counts when it beats the incumbent, which is at
  most the parent's leaf. The least of these combinations bounds the split.
* Leaf accuracy (Theorem 3.5): a split with a child whose majority weight is <= penalty is skipped; every
  leaf below that child classifies at most that weight correctly, so no optimal tree contains the split.

Arguments shared by the kernels (all arrays; STYLE §6.5)::

    data  = (fbits (p, W) uint64   rows where feature f is 1, one bitset per feature
             cbits (K, W) uint64   rows of each class
             wts   (n,)  float64   sample weights (ones when unweighted)
             yv    (n,)  int64     class of each row
             rptr  (n+1,) int64, ridx (nnz,) int64   sparse present features of each row, sorted
             zbits (W,)  uint64    rows outside the majority class of their equivalence class (all 0: off))
    cache = see :mod:`odtmip.dp._kernels._cache`
    arch  = (abits (L, 2, W) uint64, akey (L, 2) int64, an (L,) int64)
            similarity archive: two solved subproblems per depth and their cache keys ([MurTree] §4.5)
    d2    = depth-two scratch, see :mod:`odtmip.dp._kernels._depth2`
    lv    = (lbits (L+1, 2, W) uint64, lkeys (L+1, 2, KW) uint64, lcnt (L+1, 2, K+2) float64)
            per recursion level and side: the rows, the branch-cache key, the class weights, the row count
            and the equivalent-points weight
    ipar, fpar, st : parameters and statistics, indices in :mod:`odtmip.dp._kernels._common`
    rinc  (7,) float64  root incumbent (objective, nodes, feature, left budget, depth, packed left and right
            child budgets) for anytime use
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
    CNT_EQUIV,
    F_MIN_CORRECT,
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
    P_INC_ACC,
    P_K,
    P_MINROWS,
    P_RLB,
    P_SIMILARITY,
    P_UB,
    P_UNIT,
    S_CACHE_HITS,
    S_CAPPED,
    S_EQUIV_CLOSED,
    S_FULL,
    S_LEAF_ACC,
    S_SIM_PRUNE,
    S_SPLIT_BOUND,
    S_TIMEOUT,
    check_clock,
    class_counts,
    effective_budget,
    leaf_cost,
    lex_le,
    lex_lt,
    masked_weight,
    max_class,
    pack_budget,
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
def _child_bound(cache, k, d, n, leaf, equiv, tol):
    """Lower bound of a child: its leaf cost when it gets no node, else the cached bound raised to the
    equivalent-points weight ``equiv`` ([OSDT] Theorem B.2)."""
    if n == 0:
        return leaf, np.int64(0)
    lbc, lbn = lower_bound(cache, k, d, n, 0.0)
    if equiv > lbc + tol:
        return equiv, np.int64(0)
    return lbc, lbn


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


@njit(cache=NUMBA_CACHE)
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


@njit(cache=NUMBA_CACHE)
def solve_node(data, cache, arch, d2, lv, ipar, fpar, st, rinc, lvl, side, d, n, ubc, ubn):
    """Optimal (objective, branch nodes) of the subproblem ``lv[.][lvl, side]`` at budget (d, n) if <= UB.

    Parameters
    ----------
    lvl, side : int
        Where the subproblem's rows, key and class weights are (``lv`` arrays); children go to
        ``lvl + 1``, left side 0 (feature absent), right side 1 (feature present).
    d, n : int
        Depth and branch-node budget, canonical: d <= n <= 2^d - 1 ([MurTree] Eq. 1). It is first reduced
        to :func:`~odtmip.dp._kernels._common.effective_budget` (same optimum); the cache entry, and the
        budgets of the children recorded in it, are those reduced budgets.
    ubc, ubn : float, int
        Upper bound (objective, nodes): only trees lexicographically <= it are wanted.

    Returns
    -------
    (objective, nodes, depth) of the optimal tree when it is <= UB, else (inf, 0, 0). Optimal trees are
    written to the cache at the reduced budget (root assignment only); an infeasible node gets the lower
    bound max(LB, RLB, UB+) of Eq. 15-16. Nothing is written once the deadline passed or the cache is full.

    Notes
    -----
    [MurTree] Alg. 1 (SolveSubtree) with Alg. 2-3 (general case), §4 (depth two), §5 (similarity bound),
    §6 (cache), §7 (UB propagation, subtracting the sibling's cached bound), §8 (child order), §9
    (degenerate splits); [OSDT] bounds as in the module docstring.
    """
    fbits, cbits, wts, yv, zbits = data[0], data[1], data[2], data[3], data[6]
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
    mincorrect = fpar[F_MIN_CORRECT]  # -1 when the leaf-accuracy bound is off (or the penalty is 0)
    sparse = pen > 0.0  # the [OSDT] bounds below only prune with a positive penalty
    inc_acc = sparse and ipar[P_INC_ACC] != 0
    if check_clock(st, fpar) or st[S_FULL]:
        return INF, np.int64(0), np.int64(0)
    D = lbits[lvl, side]
    cnt = lcnt[lvl, side]
    n_rows = np.int64(cnt[K])
    eqc = cnt[K + CNT_EQUIV]
    leafc = leaf_cost(cnt, K, code)[0]
    if 0 < n_rows < minrows:
        leafc = INF
    if not lex_le(0.0, 0, ubc, ubn, tol):
        return INF, np.int64(0), np.int64(0)
    if sparse:  # the parent passes it reduced already, except at the root
        d, n = effective_budget(cnt, K, d, n, ipar, fpar)
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
    if eqc > lbc + tol:
        lbc, lbn = eqc, np.int64(0)  # [OSDT] Theorem B.2: no tree fixes the minority of identical rows
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
        if lbc > 0.0 and lbc == eqc:
            st[S_EQUIV_CLOSED] += 1
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
    bpl, bpr = np.int64(-1), np.int64(-1)
    # a new tree must be <= (tc, tn): within the UB and strictly better than the incumbent
    tc, tn = (bc, bn - 1) if has_best else (ubc, ubn)
    rlbc, rlbn = INF, np.int64(0)
    max_l = min((np.int64(1) << (d - 1)) - 1, n - 1)
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
        cR[K + CNT_EQUIV] = masked_weight(DR, zbits, wts, unit) if eqc > 0.0 else 0.0
        for c in range(K + 1 + CNT_EQUIV):
            cL[c] = cnt[c] - cR[c]
        if mincorrect >= 0.0 and (max_class(cL, K) <= mincorrect or max_class(cR, K) <= mincorrect):
            st[S_LEAF_ACC] += 1
            continue  # [OSDT] Theorem 3.5: no leaf below that child would classify enough correctly
        leaf_l = leaf_cost(cL, K, code)[0]
        leaf_r = leaf_cost(cR, K, code)[0]
        eq_l, eq_r = cL[K + CNT_EQUIV], cR[K + CNT_EQUIV]
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
            dl, nl_ = min(d - 1, nl), nl
            dr, nr_ = min(d - 1, n - 1 - nl), n - 1 - nl
            if sparse:
                dl, nl_ = effective_budget(cL, K, dl, nl_, ipar, fpar)
                dr, nr_ = effective_budget(cR, K, dr, nr_, ipar, fpar)
                if dl < min(d - 1, nl) or dr < min(d - 1, n - 1 - nl):
                    st[S_CAPPED] += 1
            lb_lc, lb_ln = _child_bound(cache, k_l, dl, nl_, leaf_l, eq_l, tol)
            lb_rc, lb_rn = _child_bound(cache, k_r, dr, nr_, leaf_r, eq_r, tol)
            sc, sn = lb_lc + lb_rc + pen, lb_ln + lb_rn + 1
            scp, snp = sc, sn
            if inc_acc:
                sc, sn, scp, snp = _split_bound(lb_lc, lb_ln, lb_rc, lb_rn, leaf_l, leaf_r, eq_l, eq_r, nl_, nr_,
                                                pen, tol, tc, tn, inc_acc)
            if use_ub and lex_lt(tc, tn, scp, snp, tol):
                if not lex_lt(tc, tn, lb_lc + lb_rc + pen, lb_ln + lb_rn + 1, tol):
                    st[S_SPLIT_BOUND] += 1  # pruned thanks to the [OSDT] split bound only
                if lex_lt(sc, sn, rlbc, rlbn, tol):
                    rlbc, rlbn = sc, sn
                continue
            if left_first:
                s1, d1, n1, s2, d2_, n2 = 0, dl, nl_, 1, dr, nr_
                lb2c, lb2n = _leaf_or_split(lb_rc, lb_rn, leaf_r, eq_r, nr_, pen, tol, inc_acc)
            else:
                s1, d1, n1, s2, d2_, n2 = 1, dr, nr_, 0, dl, nl_
                lb2c, lb2n = _leaf_or_split(lb_lc, lb_ln, leaf_l, eq_l, nl_, pen, tol, inc_acc)
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
                    lb_lc, lb_ln = _child_bound(cache, k_l, dl, nl_, leaf_l, eq_l, tol)
                    lb_rc, lb_rn = _child_bound(cache, k_r, dr, nr_, leaf_r, eq_r, tol)
                    sc, sn, scp, snp = _split_bound(lb_lc, lb_ln, lb_rc, lb_rn, leaf_l, leaf_r, eq_l, eq_r, nl_, nr_,
                                                    pen, tol, tc, tn, inc_acc)
                    if lex_lt(sc, sn, rlbc, rlbn, tol):
                        rlbc, rlbn = sc, sn
                continue
            vc, vn = r1c + r2c + pen, r1n + r2n + 1
            if not has_best or lex_lt(vc, vn, bc, bn, tol):
                has_best = True
                bc, bn, bd, bf, bl = vc, vn, 1 + max(r1d, r2d), np.int64(f), np.int64(nl)
                bpl, bpr = pack_budget(dl, nl_), pack_budget(dr, nr_)
                tc, tn = bc, bn - 1
                if lvl == 0 and lex_lt(bc, bn, rinc[0], np.int64(rinc[1]), tol):
                    rinc[0], rinc[1], rinc[2], rinc[3], rinc[4] = bc, bn, bf, bl, bd
                    rinc[5], rinc[6] = bpl, bpr
                if lex_le(bc, bn, lbc, lbn, tol):
                    break
    if st[S_TIMEOUT] != 0 or st[S_FULL] != 0:
        return INF, np.int64(0), np.int64(0)  # nothing from a loop cut short is stored
    if k < 0:
        k = key_index(cache, key, True, st)
        if k < 0:
            return INF, np.int64(0), np.int64(0)
    if has_best:
        store_optimal(cache, k, d, n, bc, bn, bd, bf, bl, bpl, bpr, 0, st)
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
