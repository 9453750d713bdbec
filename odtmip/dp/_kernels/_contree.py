"""The compiled search of [ConTree]: optimal trees of depth <= d on ordered features by dynamic programming
with branch-and-bound over the thresholds of each feature.

A feature is an ordered column given by the *rank* of each row's value among the feature's distinct values
(a binary column has ranks 0 and 1). A split code ``offsets[f] + r`` sends right the rows whose rank on f
exceeds r. Every node keeps its rows sorted by every feature (``Work.rows[level, f]``, with their ranks,
labels and weights in the same order, so that scans read memory in sequence); a split partitions these lists
stably into the child's level, so nothing is sorted twice ([ConTree] §5).

Costs are leaf misclassification weights plus ``penalty`` per branch node. :func:`solve_subtree` returns
``(value, exact)``: with ``exact`` the optimum T(D, d) (up to ``tol``); otherwise a lower bound on it, at
least ``ub - tol`` when the search ran to the end (no tree costs less than ``ub - tol``).

Bounds (``B`` is the value to beat strictly: the incumbent or the node's upper bound, whichever is lower;
``(L_k, R_k)`` lower bounds on the children of the evaluated threshold k; ``cw`` the weight left of a
threshold):

* Similarity bound, [ConTree] Eq. 3: T(j) >= T(k) - |cw(j) - cw(k)|, the weight of the rows that move.
* Neighbourhood pruning (NB), Theorem 1 / Eq. 7-9: no j with |cw(j) - cw(k)| <= T(k) - B can beat B.
* Interval shrinking (IS), Theorem 2 / Eq. 10: NB re-applied from a queued interval's evaluated neighbours
  after B fell; with the zero rules (L_k = 0 prunes every j < k, R_k = 0 every j > k).
* Sub-interval pruning (SP), Theorem 3 / Eq. 12: an interval between evaluated u and v costs >= L_u + R_v.
* Depth two (Alg. 2, Eq. 13): at a node of depth 2 each root threshold gets both optimal depth-one children
  from one scan per feature over the node's rows (:func:`best_stumps`).
* Upper bounds ([ConTree] "Upper bounds"): the larger child is solved under B - penalty, the smaller under
  the hybrid B - penalty - T_big + (weight to the interval's farther edge), T_big the larger child's value or
  lower bound. The paper takes the max of the two terms; the sum (the authors' 2026 code) solves a smaller
  child exactly more often, and its exact value lets NB prune more (at depth 3, 2.5x fewer depth-two
  evaluations on raisin).
* Relative gap g (``Switches.gap``): the root's threshold search replaces B by (1 - g) B in all of the above, so
  every split it skips costs at least (1 - g) times the tree returned; the subproblems stay exact.

These bounds rest on monotonicity (a subset of rows never costs more), which a minimum leaf size breaks; with
``min_rows > 1`` the orchestration switches NB, IS and SP off and every threshold is evaluated.

References
----------
.. [ConTree] C. E. Briţa, J. G. M. van der Linden, E. Demirović, "Optimal Classification Trees for
   Continuous Feature Data Using Dynamic Programming with Branch-and-Bound", AAAI 2025 (arXiv 2501.07903).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from odtmip.dp._kernels._cache import (
    E_FEAT_LEFT,
    E_FEAT_RIGHT,
    E_FEATURE,
    E_TERMINAL,
    EF_COST,
    N_ROOT,
    ROOT_COST,
    ROOT_DEALT,
    ROOT_END,
    ROOT_FEATURE,
    ROOT_NEXT,
    find_optimal,
    key_index,
    lock,
    lower_bound,
    new_root,
    next_feature,
    store_lower_bound,
    store_optimal,
    unlock,
)
from odtmip.dp._kernels._common import (
    COST_ERRORS,
    INF,
    INTERNAL,
    NUMBA_CACHE,
    S_CACHE_HITS,
    S_DEPTH1,
    S_DEPTH2,
    S_FULL,
    S_TIMEOUT,
    check_clock,
    gini_proxy,
    leaf_cost,
    past_deadline,
)

# ---- pruning counters (``Work.pruned``) ---------------------------------------------------------------
P_NEIGHBOURHOOD = 0  # thresholds skipped by NB
P_INTERVAL = 1  # thresholds removed by IS (and the zero rules)
P_SUBINTERVAL = 2  # intervals pruned whole by SP
N_PRUNED = 3

# ---- root incumbent (``Work.incumbent``) -------------------------------------------------------------
I_COST = 0  # cost of the best root tree found (inf: none)
I_CODE = 1  # its split code
I_LEFT = 2  # terminal: split code of the left child (-1 leaf); otherwise unused (children are cached)
I_RIGHT = 3  # the same for the right child
I_TERMINAL = 4  # 1: children are the stumps above; 0: children are cached optima one level deeper
I_BOUND = 5  # once stopped: a lower bound on the root's optimum (see :func:`stopped_bound`)
N_INCUMBENT = 6

#: The most rows and classes the sorted levels hold: row numbers int32, labels int16 (6 bytes a row and feature).
ROW_MAX, LABEL_MAX = int(np.iinfo(np.int32).max), int(np.iinfo(np.int16).max)

#: Rows from which :func:`best_stumps` keeps the sides' state in arrays indexed by the row's side
#: (:func:`_stumps_indexed`), not written out side by side (:func:`_stumps_apart`). A branch on a row's side is
#: mispredicted about every other row when the sides follow no order along the feature; below this the predictor
#: mostly follows them, and registers win. At the root of 10^6 rows x 10 numeric columns the indexed scan took
#: 0.6 of the time, at 20 000 rows of eeg, magic, htru and avila 0.55-0.8; at 800-3 000 rows 1.2-2 times as long.
INDEXED_SCAN_ROWS = 8192


class Switches(NamedTuple):
    """Parameters of one search (read-only in the kernels)."""

    n_classes: int  # K
    min_rows: int  # rows a non-empty leaf needs
    penalty: float  # cost per branch node
    tol: float  # costs closer than this are equal
    deadline: float  # time.perf_counter() value at which to stop (inf: none)
    depth_two: bool  # Alg. 2 at depth two, else recursion to depth-one subproblems
    neighbourhood: bool  # NB
    interval: bool  # IS and the zero rules
    subinterval: bool  # SP
    use_cache: bool  # read optima and lower bounds from the cache
    upper_bound: bool  # solve children under upper bounds
    gap: float  # relative gap g of the root's threshold search: only splits below (1 - g) B are sought there
    report_every: float = INF  # seconds between progress reports (odtmip.core.progress.dp_hook; inf: none)
    node_limit: int = 1 << 62  # stop as at the deadline after this many nodes (none here)


class Work(NamedTuple):
    """Preallocated scratch of one search; L = the depth, n rows, F features, K classes."""

    rows: np.ndarray  # int32 (L+1, max(F, 1), n): rows of the node at each level, sorted by each feature
    vals: np.ndarray  # int32 (L+1, max(F, 1), n): the rank on feature f of each row of rows[level, f]
    labs: np.ndarray  # int16 (L+1, max(F, 1), n): its class (ContreeSolver refuses more than LABEL_MAX classes)
    wts: np.ndarray  # float64 (L+1, max(F, 1), n): its weight
    side: np.ndarray  # uint8 (n,): 0 left / 1 right of the split being evaluated
    pos: np.ndarray  # int32 (L, n): split positions (rows going left) of the feature being searched
    cw: np.ndarray  # float64 (L, n): weight going left at each split position
    rec: np.ndarray  # float64 (L, n, 2): lower bounds (L_k, R_k) of the evaluated thresholds
    queue: np.ndarray  # int32 (L, 2n+2, 4): FIFO intervals (a, b, u, v) of threshold indices
    keys: np.ndarray  # uint64 (L+1, W): the instance set of the node at each level
    counts: np.ndarray  # float64 (2, K+2): class weights, row count (K) and weight (K+1) of each side
    scan: np.ndarray  # float64 (2, K+2): the same, left of the scanned threshold
    incumbent: np.ndarray  # float64 (N_INCUMBENT,): root incumbent, fields I_*
    pruned: np.ndarray  # int64 (N_PRUNED,): pruning counters
    root: np.ndarray  # float64 (N_ROOT [+ F],): the root record (one array shared by the threads; _cache.new_root)
    memo: np.ndarray  # float64 (2, n or 0, 4): a depth-two root's evaluated thresholds (lval, rval, lcode, rcode)


def new_work(depth: int, n_features: int, n_rows: int, n_classes: int, sorted_rows: Work | None = None,
             memo: bool = False) -> Work:
    """Scratch arrays for a search of depth ``depth`` (at least 1); with the sorted rows of ``sorted_rows``
    (``rows``, ``vals``, ``labs``, ``wts``: searches that only read them share them); with a ``memo`` of a
    depth-two root's threshold evaluations (:func:`solve_subtree`)."""
    levels = max(depth, 1)
    shape = (levels + 1, max(n_features, 1), n_rows)
    s = sorted_rows
    return Work(
        rows=np.zeros(shape, dtype=np.int32) if s is None else s.rows,
        vals=np.zeros(shape, dtype=np.int32) if s is None else s.vals,
        labs=np.zeros(shape, dtype=np.int16) if s is None else s.labs,
        wts=np.zeros(shape) if s is None else s.wts,
        side=np.zeros(n_rows, dtype=np.uint8),
        pos=np.zeros((levels, n_rows), dtype=np.int32),
        cw=np.zeros((levels, n_rows), dtype=np.float64),
        rec=np.zeros((levels, n_rows, 2), dtype=np.float64),
        queue=np.zeros((levels, 2 * n_rows + 2, 4), dtype=np.int32),
        keys=np.zeros((levels + 1, (n_rows + 63) // 64), dtype=np.uint64),
        counts=np.zeros((2, n_classes + 2)),
        scan=np.zeros((2, n_classes + 2)),
        **_search_state(n_rows if memo else 0),
    )


def renewed(work: Work, memo_rows: int = 0) -> Work:
    """``work`` for another search: the same scratch and sorted rows (no search writes level 0), a new incumbent,
    pruning counters, root record and a memo of ``memo_rows`` rows."""
    return work._replace(**_search_state(memo_rows))


def _search_state(memo_rows: int) -> dict:
    """The arrays of :class:`Work` that one search fills for its caller (:func:`new_work`, :func:`renewed`)."""
    inc = np.full(N_INCUMBENT, -1.0)
    inc[I_COST] = np.inf
    inc[I_BOUND] = 0.0
    return dict(incumbent=inc, pruned=np.zeros(N_PRUNED, dtype=np.int64), root=new_root(False),
                memo=np.empty((2, memo_rows, 4)))


@njit(cache=NUMBA_CACHE, **INTERNAL)
def side_counts(rows, labs, wts, m, side, K, counts):
    """Class weights (``counts[s, 0..K-1]``), row counts (``counts[s, K]``) and weights (``counts[s, K+1]``) of
    both sides of ``rows[:m]`` (classes ``labs``, weights ``wts`` in the same order)."""
    counts[:, :] = 0.0
    for i in range(m):
        s = side[rows[i]]
        counts[s, labs[i]] += wts[i]
        counts[s, K] += 1.0
        counts[s, K + 1] += wts[i]


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _evaluate_threshold(scan, counts, K, pen, tol, w, best, code, new_code):
    """One threshold of a side in :func:`best_stumps`: the rows counted in ``scan`` (weight ``w``) left, the rest
    of ``counts`` right, each a leaf (Eq. 13), plus ``pen``. Returns ``(best, code)`` updated when it costs less
    than ``best`` (split code ``new_code``), then the right leaf's majority class, its weight in ``scan`` and the
    two weights to wait for (other classes, all). Called out of line: the scan then keeps its state in registers.
    """
    total = 0.0
    best_in = 0.0
    best_out, second_out = -1.0, -1.0
    major = 0
    for c in range(K):
        a = scan[c]
        b = counts[c] - a
        total += counts[c]
        if a > best_in:
            best_in = a
        if b > best_out:
            best_out, second_out, major = b, best_out, c
        elif b > second_out:
            second_out = b
    cost = total - best_in - best_out + pen
    if cost < best - tol:
        best, code = cost, new_code
    t = max(cost - best, 0.0) + tol
    return best, code, major, scan[major], w - scan[major] + t, w + t + best_out - second_out


@njit(cache=NUMBA_CACHE, **INTERNAL)
def best_stumps(offsets, work, prm, st, level, m):
    """Optimal depth-one trees of both sides of the rows ``work.rows[level, :, :m]`` ([ConTree] Alg. 2).

    ``work.side`` assigns each row a side and ``work.counts`` holds the sides' class weights. For each feature
    g one pass over the rows in g-order keeps each side's class weights left of the scanned threshold; a
    threshold of side s lies between two consecutive *distinct* ranks seen on s, and its two leaves cost
    Eq. 13. Returns ``(cost_left, code_left, cost_right, code_right)``, each cost the least of the side's
    leaf and its best stump plus ``penalty`` (code -1: the leaf). The clock is read between features
    (:func:`~odtmip.dp._kernels._common.past_deadline`); past the deadline the scan stops with what it found and
    sets S_TIMEOUT in ``st``, which the caller reads. The scan has two forms, the same state and evaluations:
    :func:`_stumps_apart` below :data:`INDEXED_SCAN_ROWS` rows, :func:`_stumps_indexed` from there on.

    Skipping (the similarity bound of Eq. 3 inside the scan, sharpened): let a threshold of side s cost c, its
    right leaf's majority class be c* with a lead l over the next class, and t = c - best_s. A later threshold
    moves weight M (M_k of class k) from the right leaf to the left one. The left leaf's errors never fall;
    the right leaf's errors under label k fall by M - M_k. So it can only beat best_s once M - M_c* > t or
    (another label on the right) M > t + l; the thresholds before that are not evaluated. The authors' code
    waits for M > t, which on data with a rare class evaluates most thresholds.
    """
    if m >= INDEXED_SCAN_ROWS:
        return _stumps_indexed(offsets, work, prm, st, level, m)
    return _stumps_apart(offsets, work, prm, st, level, m)


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _stumps_apart(offsets, work, prm, st, level, m):
    """:func:`best_stumps` with the two sides written out, each in its own variables: they stay in registers."""
    K = prm.n_classes
    pen, tol, min_rows = prm.penalty, prm.tol, prm.min_rows
    cnt0, cnt1, sc0, sc1 = work.counts[0], work.counts[1], work.scan[0], work.scan[1]
    side = work.side
    best0, _ = leaf_cost(cnt0, K, np.int64(COST_ERRORS))
    best1, _ = leaf_cost(cnt1, K, np.int64(COST_ERRORS))
    code0 = np.int64(-1)
    code1 = np.int64(-1)
    rows0, rows1 = cnt0[K], cnt1[K]
    for g in range(offsets.shape[0]):
        if best0 <= tol and best1 <= tol or past_deadline(st, prm.deadline, m):
            break
        sc0[:] = 0.0
        sc1[:] = 0.0
        # per side: last rank seen, rows and weight scanned; the right leaf's majority class at the last
        # evaluation and its weight scanned since; the weights (of other classes, of all) to wait for
        last0, last1 = -1, -1
        n0, n1, w0, w1 = 0.0, 0.0, 0.0, 0.0
        major0, major1 = 0, 0
        wmajor0, wmajor1 = 0.0, 0.0
        minor0, minor1 = -1.0, -1.0
        resume0, resume1 = -1.0, -1.0
        rg, vg, lg, wg = work.rows[level, g], work.vals[level, g], work.labs[level, g], work.wts[level, g]
        for i in range(m):
            rk = vg[i]
            w = wg[i]
            lab = lg[i]
            # the two sides are written out, not indexed by the side: their state then stays in registers
            if side[rg[i]] == 0:
                if (rk != last0 and (w0 - wmajor0 > minor0 or w0 > resume0) and n0 >= min_rows
                        and rows0 - n0 >= min_rows):
                    best0, code0, major0, wmajor0, minor0, resume0 = _evaluate_threshold(
                        sc0, cnt0, K, pen, tol, w0, best0, code0, offsets[g] + last0)
                sc0[lab] += w
                wmajor0 += w if lab == major0 else 0.0
                n0 += 1.0
                w0 += w
                last0 = rk
            else:
                if (rk != last1 and (w1 - wmajor1 > minor1 or w1 > resume1) and n1 >= min_rows
                        and rows1 - n1 >= min_rows):
                    best1, code1, major1, wmajor1, minor1, resume1 = _evaluate_threshold(
                        sc1, cnt1, K, pen, tol, w1, best1, code1, offsets[g] + last1)
                sc1[lab] += w
                wmajor1 += w if lab == major1 else 0.0
                n1 += 1.0
                w1 += w
                last1 = rk
    return best0, code0, best1, code1


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _stumps_indexed(offsets, work, prm, st, level, m):
    """:func:`best_stumps` with the two sides' state in arrays indexed by the row's side: no branch on the side but
    the rare evaluation's."""
    K = prm.n_classes
    pen, tol, min_rows = prm.penalty, prm.tol, prm.min_rows
    cnt, sc, side = work.counts, work.scan, work.side
    best = np.empty(2)
    code = np.full(2, -1, dtype=np.int64)
    for s in range(2):
        best[s], _ = leaf_cost(cnt[s], K, np.int64(COST_ERRORS))
    # per side, as in _stumps_apart
    last = np.empty(2, dtype=np.int64)
    scanned, weight = np.empty(2), np.empty(2)
    major = np.empty(2, dtype=np.int64)
    wmajor, minor, resume = np.empty(2), np.empty(2), np.empty(2)
    for g in range(offsets.shape[0]):
        if best[0] <= tol and best[1] <= tol or past_deadline(st, prm.deadline, m):
            break
        sc[:, :] = 0.0
        last[:] = -1
        scanned[:] = 0.0
        weight[:] = 0.0
        major[:] = 0
        wmajor[:] = 0.0
        minor[:] = -1.0
        resume[:] = -1.0
        rg, vg, lg, wg = work.rows[level, g], work.vals[level, g], work.labs[level, g], work.wts[level, g]
        for i in range(m):
            s = side[rg[i]]
            rk = vg[i]
            w = wg[i]
            lab = lg[i]
            if (rk != last[s] and (weight[s] - wmajor[s] > minor[s] or weight[s] > resume[s])
                    and scanned[s] >= min_rows and cnt[s, K] - scanned[s] >= min_rows):
                best[s], code[s], major[s], wmajor[s], minor[s], resume[s] = _evaluate_threshold(
                    sc[s], cnt[s], K, pen, tol, weight[s], best[s], code[s], offsets[g] + last[s])
            sc[s, lab] += w
            wmajor[s] += w if lab == major[s] else 0.0
            scanned[s] += 1.0
            weight[s] += w
            last[s] = rk
    return best[0], code[0], best[1], code[1]


@njit(cache=NUMBA_CACHE)
def partition(work, level, m, target):
    """Copy the rows of ``work.side == target`` (with their ranks, labels, weights) from ``level`` to
    ``level + 1`` for every feature, keeping each order; returns their number."""
    rows, vals, labs, wts, side = work.rows, work.vals, work.labs, work.wts, work.side
    c = 0
    for f in range(rows.shape[1]):
        c = 0
        for i in range(m):
            r = rows[level, f, i]
            if side[r] == target:
                rows[level + 1, f, c] = r
                vals[level + 1, f, c] = vals[level, f, i]
                labs[level + 1, f, c] = labs[level, f, i]
                wts[level + 1, f, c] = wts[level, f, i]
                c += 1
    return c


@njit(cache=NUMBA_CACHE, **INTERNAL)
def mark_sides(rows, m, p, side):
    """Side 0 for the first ``p`` of ``rows[:m]``, side 1 for the rest."""
    for i in range(m):
        side[rows[i]] = 0 if i < p else 1


@njit(cache=NUMBA_CACHE, **INTERNAL)
def instance_key(rows, m, key):
    """Bitset of the rows ``rows[:m]`` into ``key`` (the dataset-cache key, [MurTree] §4.6)."""
    key[:] = 0
    for i in range(m):
        r = rows[i]
        key[r >> 6] |= np.uint64(1) << np.uint64(r & 63)


@njit(cache=NUMBA_CACHE, **INTERNAL)
def first_beyond(cw, lo, hi, base, dist):
    """Smallest j in [lo, hi] with cw[j] - base > dist (hi + 1 if none); ``cw`` non-decreasing."""
    while lo <= hi:
        mid = (lo + hi) >> 1
        if cw[mid] - base > dist:
            hi = mid - 1
        else:
            lo = mid + 1
    return lo


@njit(cache=NUMBA_CACHE, **INTERNAL)
def last_before(cw, lo, hi, base, dist):
    """Largest j in [lo, hi] with base - cw[j] > dist (lo - 1 if none); ``cw`` non-decreasing."""
    while lo <= hi:
        mid = (lo + hi) >> 1
        if base - cw[mid] > dist:
            lo = mid + 1
        else:
            hi = mid - 1
    return hi


@njit(cache=NUMBA_CACHE, **INTERNAL)
def stopped_bound(queue, first, tail, rec, best, last, slack, prm):
    """A lower bound on the root's optimum T(D, d) when its search stopped inside the threshold search of a
    feature f, with the intervals ``queue[first:tail]`` (the one in hand first) not yet searched.

    Every threshold of the features before f, and every threshold of f outside those intervals, was evaluated
    or pruned: it costs at least ``best``, the incumbent or the root's upper bound, whichever is lower (times
    1 - ``slack`` under a relative gap). An interval
    between the evaluated u and v costs at least L_u + R_v + penalty (SP, [ConTree] Theorem 3; only with the
    pruning rules on: they rest on monotonicity). A feature after f (``last`` false) costs at least the penalty.
    """
    pen = prm.penalty
    bound = best * (1.0 - slack)
    if not last:
        bound = min(bound, pen)
    for q in range(first, tail):
        u, v = queue[q, 2], queue[q, 3]
        sp = pen
        if prm.subinterval:
            sp += (rec[u, 0] if u >= 0 else 0.0) + (rec[v, 1] if v >= 0 else 0.0)
        bound = min(bound, sp)
    return max(bound - prm.tol, 0.0)


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _shared_bound(cache, root, f):
    """The cost a root split on feature ``f`` must beat by the best root tree of all threads (c on feature g): c for
    f > g; none (inf) for f <= g, where a tie wins, as in one thread's feature order."""
    lock(cache)
    c, g = root[ROOT_COST], np.int64(root[ROOT_FEATURE])
    unlock(cache)
    return c if f > g else INF


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _share_root(cache, root, c, f, tol):
    """Offer the root tree of cost ``c`` on feature ``f`` to the other threads (better, or as good on a lower f), and
    record it as f's best root tree: the record holds after its fields the cost of each feature's best root tree
    (inf: none below the bound). One thread searches f, so that needs no lock."""
    root[N_ROOT + f] = c
    lock(cache)
    if c < root[ROOT_COST] - tol or (c <= root[ROOT_COST] + tol and f < root[ROOT_FEATURE]):
        root[ROOT_COST], root[ROOT_FEATURE] = c, f
    unlock(cache)


@njit(cache=NUMBA_CACHE, nogil=True)
def solve_subtree(offsets, work, prm, cache, st, level, m, d, ub):
    """T(D, d) of [ConTree] Eq. 4-6 for the rows D = ``work.rows[level, :, :m]``, searched below ``ub``;
    ``offsets[f]`` is the split code of feature f's first threshold.

    Returns ``(value, exact)``: exact, the optimum (cached with its root split); otherwise a lower bound on
    it that is at least ``ub - tol`` (also cached), or, after the deadline or once the cache is full (flag
    S_FULL), the best cost found (only the root reads it, through ``work.incumbent``, with a lower bound). See
    the module docstring for the bounds.

    Threads: at a root dealt out to threads (``work.root``, as in :func:`~odtmip.dp._kernels._search.solve_node`) each
    thread, with its own ``work`` and the shared cache, takes the next feature no thread has taken, searches it below
    the best root tree of all threads too (:func:`_shared_bound`), records each feature's best root tree there, and
    returns the best of its features without storing the root; the solver then searches the root in one thread, on
    one feature without a gap (``ROOT_NEXT`` .. ``ROOT_END`` - 1 of the record, which a root outside threads reads).
    """
    K = prm.n_classes
    tol, pen, min_rows = prm.tol, prm.penalty, prm.min_rows
    rows, vals, labs, wts, side, counts = work.rows, work.vals, work.labs, work.wts, work.side, work.counts
    root = level == 0
    # the leaf: T(D, 0) = |D| - max_c |D_c| (weighted)
    mark_sides(rows[level, 0], m, m, side)
    side_counts(rows[level, 0], labs[level, 0], wts[level, 0], m, side, K, counts)
    leafc, _ = leaf_cost(counts[0], K, np.int64(COST_ERRORS))
    if d == 0 or m < 2 * min_rows or leafc <= tol:
        return leafc, True
    if check_clock(st, prm) or st[S_FULL]:
        return leafc, False
    n_nodes = (np.int64(1) << d) - 1
    key = work.keys[level]
    instance_key(rows[level, 0], m, key)
    ki = key_index(cache, key, np.bool_(True), st)
    if st[S_FULL]:  # stop as at the deadline; the caller grows the cache and searches again
        return leafc, False
    if prm.use_cache and ki >= 0:
        e = find_optimal(cache, ki, d, n_nodes)
        if e >= 0:
            st[S_CACHE_HITS] += 1
            return cache.reals[e, EF_COST], True
        lb, _ = lower_bound(cache, ki, d, n_nodes, tol)
        if lb >= ub - tol:
            return lb, False
    best = leafc
    code, left_code, right_code, terminal = np.int64(-1), np.int64(-1), np.int64(-1), np.int64(1)
    if d == 1:  # the best stump
        st[S_DEPTH1] += 1
        c0, k0, _, _ = best_stumps(offsets, work, prm, st, level, m)
        if st[S_TIMEOUT]:
            return leafc, False
        if c0 < best - tol:
            best, code = c0, k0
    else:
        pos, cw, rec, queue = work.pos[level], work.cw[level], work.rec[level], work.queue[level]
        pruning = prm.neighbourhood or prm.interval or prm.subinterval
        slack = prm.gap if root else 0.0
        stopped = False
        dealt = root and work.root[ROOT_DEALT] != 0.0
        f, end = np.int64(-1), offsets.shape[0]
        part = root and not dealt and work.root[ROOT_END] < INF  # a root searched on the record's features only
        if part:
            f, end = np.int64(work.root[ROOT_NEXT]) - 1, min(end, np.int64(work.root[ROOT_END]))
        # a depth-two root shared out to threads: each keeps its threshold evaluations of the feature it searches
        # (memo[1]) and of the feature of its best tree (memo[0]); one thread's search of that feature then reads
        # memo[0] (a replay: Python's ContreeSolver._replayed)
        memo = work.memo
        memoize = dealt and memo.shape[1] > 0
        replay = part and memo.shape[1] > 0
        sh = INF  # the best root tree of the other threads, where it binds feature f
        while True:
            f = next_feature(cache, work.root, dealt, f)
            if f >= end or best <= tol:
                break
            # split positions of f: between consecutive distinct ranks, both sides >= min_rows
            rf, vf, wf = rows[level, f], vals[level, f], wts[level, f]
            npos = 0
            acc = wf[0]
            for i in range(1, m):
                if vf[i] != vf[i - 1] and i >= min_rows and m - i >= min_rows:
                    pos[npos] = i
                    cw[npos] = acc
                    npos += 1
                acc += wf[i]
            if npos == 0:
                continue
            improved = False  # a tree on f became this search's best
            if memoize:
                memo[1, :npos, 0] = -1.0  # none evaluated yet
            head, tail = 0, 1
            queue[0, 0], queue[0, 1], queue[0, 2], queue[0, 3] = 0, npos - 1, -1, -1
            zero_left, zero_right = np.int64(-1), npos  # zero rules: prune j < zero_left and j > zero_right
            while head < tail:
                q = queue[head]  # int32, read as int64: one type for every call below
                a, b, u, v = np.int64(q[0]), np.int64(q[1]), np.int64(q[2]), np.int64(q[3])
                head += 1
                if dealt:
                    sh = _shared_bound(cache, work.root, f)
                B = min(best, ub, sh)
                B -= slack * B
                if pruning:
                    if prm.subinterval:  # SP, Eq. 12
                        lu = rec[u, 0] if u >= 0 else 0.0
                        rv = rec[v, 1] if v >= 0 else 0.0
                        if lu + rv + pen >= B - tol:
                            work.pruned[P_SUBINTERVAL] += 1
                            continue
                    if prm.interval:  # IS, Theorem 2 and Eq. 10, and the zero rules
                        a0, b0 = a, b
                        if u >= 0:
                            a = first_beyond(cw, a, b, cw[u], rec[u, 0] + rec[u, 1] + pen - B + tol)
                        if v >= 0:
                            b = last_before(cw, a, b, cw[v], rec[v, 0] + rec[v, 1] + pen - B + tol)
                        a = max(a, zero_left + 1)
                        b = min(b, zero_right - 1)
                        if a > b:
                            work.pruned[P_INTERVAL] += b0 - a0 + 1
                            continue
                        work.pruned[P_INTERVAL] += (a - a0) + (b0 - b)
                k = (a + b) >> 1
                p = np.int64(pos[k])
                if check_clock(st, prm) or st[S_FULL]:
                    stopped = True
                    break
                lexact, rexact = True, True
                lcode, rcode = np.int64(-1), np.int64(-1)
                if d == 2 and prm.depth_two:  # Alg. 2: both depth-one children at once
                    if replay and memo[0, k, 0] >= 0.0:  # evaluated by the thread that searched f
                        lval, rval, lcode, rcode = memo[0, k, 0], memo[0, k, 1], np.int64(memo[0, k, 2]), \
                            np.int64(memo[0, k, 3])
                    else:
                        st[S_DEPTH2] += 1
                        mark_sides(rf, m, p, side)
                        side_counts(rf, labs[level, f], wf, m, side, K, counts)
                        lval, lcode, rval, rcode = best_stumps(offsets, work, prm, st, level, m)
                        if st[S_TIMEOUT]:
                            stopped = True
                            break
                        if memoize:
                            memo[1, k, 0], memo[1, k, 1], memo[1, k, 2], memo[1, k, 3] = lval, rval, lcode, rcode
                else:
                    mark_sides(rf, m, p, side)
                    # the larger child first, under B - penalty; the smaller under the hybrid bound
                    first = 0 if 2 * p >= m else 1
                    child = np.zeros(2)
                    exact = np.zeros(2, dtype=np.bool_)
                    # one recursive call for both children, as numba types every recursive call site twice
                    for j in range(2):
                        c = first if j == 0 else 1 - first
                        ub_c = B - pen if prm.upper_bound else INF
                        if j == 1:
                            if prm.upper_bound:
                                # what the larger child leaves of B, plus the weight to the interval's farther
                                # edge: also when the larger child was cut off, the smaller one's record then lets
                                # NB reach that edge
                                half = max(cw[k] - (cw[a] if a < k else cw[k]), (cw[b] if b > k else cw[k]) - cw[k])
                                ub_c = B - pen - child[first] + half
                            if ub_c <= tol:
                                break
                            mark_sides(rf, m, p, side)
                        child[c], exact[c] = solve_subtree(offsets, work, prm, cache, st, level + 1,
                                                           partition(work, level, m, c), d - 1, ub_c)
                        if st[S_TIMEOUT] or st[S_FULL]:
                            stopped = True
                            break
                    if stopped:
                        break
                    lval, rval = child[0], child[1]
                    lexact, rexact = exact[0], exact[1]
                value = lval + rval + pen
                if lexact and rexact and value < best - tol:
                    best, improved = value, True
                    code = offsets[f] + vf[p - 1]
                    if d == 2 and prm.depth_two:
                        left_code, right_code, terminal = lcode, rcode, 1
                    else:
                        left_code, right_code, terminal = d - 1, d - 1, 0
                    if root:
                        work.incumbent[I_COST] = best
                        work.incumbent[I_CODE] = code
                        work.incumbent[I_LEFT] = left_code
                        work.incumbent[I_RIGHT] = right_code
                        work.incumbent[I_TERMINAL] = terminal
                        if dealt:
                            _share_root(cache, work.root, best, f, tol)
                    if best <= tol:
                        break
                rec[k, 0], rec[k, 1] = lval, rval
                if lexact and lval == 0.0:
                    zero_left = max(zero_left, k)
                if rexact and rval == 0.0:
                    zero_right = min(zero_right, k)
                if a == b:
                    continue
                r0, l1 = k + 1, k - 1
                if prm.neighbourhood:  # NB, Corollary 1: |cw(j) - cw(k)| must exceed T(k) - B
                    B = min(best, ub, sh)
                    dist = value - (B - slack * B) + tol
                    if dist >= 0.0:
                        r0 = first_beyond(cw, k + 1, b, cw[k], dist)
                        l1 = last_before(cw, a, k - 1, cw[k], dist)
                        work.pruned[P_NEIGHBOURHOOD] += (r0 - k - 1) + (k - 1 - l1)
                if r0 <= b:
                    queue[tail, 0], queue[tail, 1], queue[tail, 2], queue[tail, 3] = r0, b, k, v
                    tail += 1
                if a <= l1:
                    queue[tail, 0], queue[tail, 1], queue[tail, 2], queue[tail, 3] = a, l1, u, k
                    tail += 1
            if memoize and improved:  # the evaluations of the feature of this thread's best tree
                memo[0, :npos] = memo[1, :npos]
            if stopped:
                break  # in feature f: the features after it are not searched
        if stopped:
            if root:
                # dealt: the features this thread did not take are other threads' (the solver bounds any left)
                last = dealt or not part and f == end - 1
                work.incumbent[I_BOUND] = stopped_bound(queue, head - 1, tail, rec, min(best, ub, sh), last, slack,
                                                          prm)
            return best, False
        if dealt:  # this thread's share of the root's features: the solver stores the root after all threads
            work.incumbent[I_BOUND] = min(best, ub) - tol
            return (best, True) if best < ub - tol else (min(best, ub) - tol, False)
    if best < ub - tol:
        if ki >= 0:
            store_optimal(cache, ki, d, n_nodes, best, n_nodes, d, code, left_code, right_code, terminal, st)
        return best, True
    lb = min(best, ub) - tol
    if ki >= 0:
        store_lower_bound(cache, ki, d, n_nodes, lb, np.int64(0), tol, st)
    return lb, False


@njit(cache=NUMBA_CACHE)
def cached_split(cache, key, d):
    """The cached optimum of the instance set ``key`` at depth ``d``: (code, left, right, terminal), or all -1
    and terminal -1 when none is cached."""
    ki = key_index(cache, key, np.bool_(False), np.zeros(16, dtype=np.int64))
    if ki < 0:
        return np.int64(-1), np.int64(-1), np.int64(-1), np.int64(-1)
    e = find_optimal(cache, ki, d, (np.int64(1) << d) - 1)
    if e < 0:
        return np.int64(-1), np.int64(-1), np.int64(-1), np.int64(-1)
    ei = cache.ints[e]
    return ei[E_FEATURE], ei[E_FEAT_LEFT], ei[E_FEAT_RIGHT], ei[E_TERMINAL]


# ---- CART's split of ordered features (the greedy tree's top levels, odtmip.dp.anytime.ordered_split) -------------
@njit(cache=NUMBA_CACHE)
def cart_thresholds(order, ranks, rows, Y, counts, min_leaf):
    """CART's best threshold of each ordered feature ([ConTree] Eq. 1) on ``rows``: ``order[f]`` lists all rows by
    their rank ``ranks[f]`` on feature f, ``Y`` holds the class weights of ``rows`` (one-hot times weight, one row
    each) and ``counts`` their sum.

    Returns per feature the largest Gini proxy (:func:`~odtmip.dp._kernels._common.gini_proxy`; -inf when no
    threshold leaves ``min_leaf`` rows on both sides) and the rank r of its threshold (rows of rank > r go right). The
    rows of the node, in f-order, give every threshold's left class weights as a running sum; a threshold lies between
    consecutive distinct ranks; ties go to the lowest threshold. One pass over ``order[f]`` per feature; the
    interpreter runs :func:`_cart_thresholds_numpy`, the same sums in the same order.
    """
    F, n = order.shape
    m, K = rows.shape[0], Y.shape[1]
    where = np.full(n, -1)
    where[rows] = np.arange(m)
    proxy, rank = np.full(F, -np.inf), np.full(F, -1)
    left = np.zeros(K)
    for f in range(F):
        left[:] = 0.0
        i, last = 0, -1  # rows of the node seen, the rank of the last one
        for j in range(n):
            r = order[f, j]
            q = where[r]
            if q < 0:
                continue
            v = ranks[f, r]
            if i > 0 and v != last and i >= min_leaf and m - i >= min_leaf:
                # gini_proxy of the first i rows against the rest, class by class as there
                w_a, s_a = left[0], left[0] ** 2
                b = counts[0] - left[0]
                w_b, s_b = b, b ** 2
                for c in range(1, K):
                    b = counts[c] - left[c]
                    w_a += left[c]
                    w_b += b
                    s_a += left[c] ** 2
                    s_b += b ** 2
                p = (s_a / w_a if w_a > 0 else 0.0) + (s_b / w_b if w_b > 0 else 0.0)
                if p > proxy[f]:
                    proxy[f], rank[f] = p, last
            for c in range(K):
                left[c] += Y[q, c]
            i += 1
            last = v
    return proxy, rank


#: The kernels the interpreter runs in another form (:func:`odtmip.dp._kernels._interpreted.kernels`).
INTERPRETED_FORMS = {"cart_thresholds": "_cart_thresholds_numpy"}


def _cart_thresholds_numpy(order, ranks, rows, Y, counts, min_leaf):
    """:func:`cart_thresholds` in numpy's vector operations (never compiled)."""
    F, n = order.shape
    m = len(rows)
    where = np.full(n, -1)
    where[rows] = np.arange(m)
    every = m == n and bool((where == np.arange(n)).all())  # all the rows, in order: no row to leave out or map
    proxy, rank = np.full(F, -np.inf), np.full(F, -1)
    left_rows = np.arange(1, m)
    for f in range(F):
        o = order[f] if every else order[f][where[order[f]] >= 0]
        v = ranks[f, o]
        left = np.cumsum(Y[o if every else where[o]], axis=0)[:-1]  # class weights of the first i rows, i = 1..m-1
        ok = (v[1:] != v[:-1]) & (left_rows >= min_leaf) & (m - left_rows >= min_leaf)
        if ok.any():
            p = gini_proxy(left, counts[None, :] - left)
            p[~ok] = -np.inf
            k = int(np.argmax(p))
            proxy[f], rank[f] = p[k], v[k]
    return proxy, rank
