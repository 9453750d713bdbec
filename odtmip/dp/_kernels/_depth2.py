"""Specialised solver for trees of depth at most two ([MurTree] v1 §4.3-4.4, JMLR Alg. 4).

One pass computes the optimal trees with budgets (depth 1, 1 node), (2, 2) and (2, 3) of a subproblem
from the class weights of every cell f, f-bar, (f1, f2), (f1-bar, f2), ... (phase 1), then enumerates the
feature pairs once (phase 2, O(p^2) time, O(p) memory: the best left and right child split per root).

Phase 1 has two implementations, chosen by ``Params.bitset``:

* **bitset** (unit weights): the subproblem's rows are compacted into per-feature bitsets of
  ceil(|D|/64) words, and the weight of the cell (f1, f2) of class c is
  ``popcount(col[f1] & col[f2] & class[c])``; O(p^2 |D| / 64) popcounts, no state.
* **frequency counters** (any weights): FQ_c(i, j) = weight of class c with features i and j, built by
  walking each row's sparse list of present features, O(|D| m^2) for m present features per row. Two
  counters are kept; a new subproblem updates the counter whose last subproblem differs least, by
  subtracting D_old \\ D_new and adding D_new \\ D_old, when that is fewer rows than |D_new|
  ([MurTree] §4.4.3). Channel K holds row counts
  (for ``min_leaf``).

Cells with fewer than ``minrows`` rows (in particular empty cells) are never used: a tree with an empty
leaf is dominated by a smaller one ([MurTree] Prop. 4.2), and ``min_leaf`` forbids the rest.

Dead features ([OSDT] §3 with Theorem 3.5) are left out of both phases: a feature with a side whose
majority weight is at most ``Params.min_correct`` (the penalty per branch node when the leaf-accuracy
bound is on, else -1). No optimal tree has a leaf classifying that little correctly (merging it into its
sibling's subtree costs at most its correct weight and saves a branch node), every leaf below that side
would be one, and the same holds in every subset of the rows, so the results stay exact. The test is made
once per feature, outside the O(p^2) pair loop, which it shortens.

The arrays of both phases and the results are one :class:`Scratch` record, allocated once per solver.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from odtmip.dp._kernels._common import (
    COST_ERRORS,
    INF,
    INTERNAL,
    NUMBA_CACHE,
    S_DEPTH1,
    S_DEPTH2,
    S_INCREMENTAL,
    S_RECOUNT,
    S_TIMEOUT,
    copy_words,
    leaf_cost,
    lex_lt,
    max_class,
    past_deadline,
    popcount,
    trailing_zeros,
    unpacked_bits,
)


class Scratch(NamedTuple):
    """Work arrays and results of :func:`solve_terminal` (W words per row bitset, C = K + 1 channels)."""

    rows: np.ndarray  # int64 (n,): the rows of the subproblem D, renumbered 0..|D|-1 (bitset form)
    feat_bits: np.ndarray  # uint64 (p, W): per feature, its renumbered rows (bitset form)
    class_bits: np.ndarray  # uint64 (K, W): per class, its renumbered rows (bitset form)
    feat_class_bits: np.ndarray  # uint64 (max(K-1, 1), p, W): feat_bits[f] & class_bits[c + 1] (bitset form)
    active: np.ndarray  # int64 (p,): the features that can split D (the first ``na``)
    feat_counts: np.ndarray  # float64 (p, C): class weights and rows of D with feature f (the diagonal FQ(f, f))
    leaf_absent: np.ndarray  # float64 (p,): leaf cost of the rows of D without feature f
    leaf_present: np.ndarray  # float64 (p,): leaf cost of the rows of D with feature f
    left_cost: np.ndarray  # float64 (p,): best cost of root f's left child split once
    left_feature: np.ndarray  # int64 (p,): the feature of that split, -1 none
    right_cost: np.ndarray  # float64 (p,): best cost of root f's right child split once
    right_feature: np.ndarray  # int64 (p,): the feature of that split, -1 none
    freq: np.ndarray  # float64 (2, p|1, p|1, C): two frequency counters FQ_c(i, j); channel K counts rows
    freq_rows: np.ndarray  # uint64 (2, W): the rows each counter holds
    freq_valid: np.ndarray  # int64 (2,): 1 once the counter holds a subproblem
    cells: np.ndarray  # float64 (4, C): class weights of the cells (i-bar, j-bar), (i-bar, j), (i, j-bar), (i, j)
    pair_counts: np.ndarray  # float64 (C,): class weights of the cell (i, j)
    result_cost: np.ndarray  # float64 (3,): objective of the optimal trees of budgets (1, 1), (2, 2), (2, 3)
    result_tree: np.ndarray  # int64 (3, NR): those trees, columns R_*


# ---- columns of ``Scratch.result_tree`` --------------------------------------------------------------
R_NODES = 0  # branch nodes
R_FEATURE = 1  # root feature, -1 leaf
R_LEFT = 2  # feature of the left child, -1 leaf
R_RIGHT = 3  # feature of the right child, -1 leaf
NR = 4


def new_scratch(n: int, p: int, words: int, n_classes: int, frequency: bool) -> Scratch:
    """Scratch arrays for ``n`` rows, ``p`` features, ``words`` words per row bitset and ``n_classes`` classes;
    the frequency counters are only allocated in full for ``frequency`` counting."""
    K, C = n_classes, n_classes + 1
    pf = p if frequency else 1
    return Scratch(
        rows=np.zeros(n, dtype=np.int64),
        feat_bits=np.zeros((p, words), dtype=np.uint64),
        class_bits=np.zeros((K, words), dtype=np.uint64),
        feat_class_bits=np.zeros((max(K - 1, 1), p, words), dtype=np.uint64),
        active=np.zeros(p, dtype=np.int64),
        feat_counts=np.zeros((p, C)),
        leaf_absent=np.zeros(p),
        leaf_present=np.zeros(p),
        left_cost=np.zeros(p),
        left_feature=np.zeros(p, dtype=np.int64),
        right_cost=np.zeros(p),
        right_feature=np.zeros(p, dtype=np.int64),
        freq=np.zeros((2, pf, pf, C)),
        freq_rows=np.zeros((2, words), dtype=np.uint64),
        freq_valid=np.zeros(2, dtype=np.int64),
        cells=np.zeros((4, C)),
        pair_counts=np.zeros(C),
        result_cost=np.zeros(3),
        result_tree=np.zeros((3, NR), dtype=np.int64),
    )


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _compact(data, scr, D, K):
    """Phase 1, bitset form: per-feature and per-class bitsets over the rows of ``D`` renumbered 0..|D|-1;
    returns their number of words."""
    rptr, ridx, yv = data.row_start, data.row_features, data.labels
    rows, comp, ccls, compc = scr.rows, scr.feat_bits, scr.class_bits, scr.feat_class_bits
    p = comp.shape[0]
    m = 0
    for i in range(D.shape[0]):
        word = D[i]
        while word:
            rows[m] = i * 64 + np.int64(trailing_zeros(word))
            m += 1
            word &= word - np.uint64(1)
    nw = (m + 63) // 64
    comp[:, :nw] = 0
    ccls[:, :nw] = 0
    for k in range(m):
        r = rows[k]
        bit = np.uint64(1) << np.uint64(k & 63)
        wi = k >> 6
        for t in range(rptr[r], rptr[r + 1]):
            comp[ridx[t], wi] |= bit
        ccls[yv[r], wi] |= bit
    diag = scr.feat_counts
    for f in range(p):
        n_f = np.uint64(0)
        for w in range(nw):
            n_f += popcount(comp[f, w])
        rest = np.uint64(0)
        for c in range(1, K):
            s = np.uint64(0)
            for w in range(nw):
                v = comp[f, w] & ccls[c, w]
                compc[c - 1, f, w] = v
                s += popcount(v)
            diag[f, c] = s
            rest += s
        diag[f, 0] = n_f - rest
        diag[f, K] = n_f
    return nw


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _add_row(fq, s, r, sign, data, K):
    """Add (sign=+1) or remove (-1) row ``r`` from frequency counter ``s``: all pairs of its features."""
    wts, yv, rptr, ridx = data.weights, data.labels, data.row_start, data.row_features
    lo, hi = rptr[r], rptr[r + 1]
    c = yv[r]
    wv = sign * wts[r]
    for a in range(lo, hi):
        fa = ridx[a]
        for b in range(a, hi):
            fb = ridx[b]
            fq[s, fa, fb, c] += wv
            fq[s, fa, fb, K] += sign


@njit(cache=NUMBA_CACHE, inline="always")
def _word_work(data):
    """Operations to add the rows of one bitset word to a counter: 64 rows of m(m+1)/2 feature pairs each, m
    the mean number of present features per row."""
    m = data.row_start[-1] // max(1, data.labels.shape[0])
    return 32 * m * (m + 1)


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _add_rows(fq, s, bits, sign, data, K, st, deadline):
    """Add or remove every row of ``bits`` from counter ``s``; stops (unfinished) once past ``deadline``."""
    for i in range(bits.shape[0]):
        if past_deadline(st, deadline, _word_work(data)):
            return
        word = bits[i]
        while word:
            _add_row(fq, s, i * 64 + np.int64(trailing_zeros(word)), sign, data, K)
            word &= word - np.uint64(1)


@njit(cache=NUMBA_CACHE)
def _frequency(data, scr, prm, st, D, n_rows):
    """Phase 1, counter form: bring a frequency counter to ``D`` and return its index."""
    K = prm.n_classes
    fq, fqD, fqv = scr.freq, scr.freq_rows, scr.freq_valid
    W = D.shape[0]
    best, best_diff = np.int64(-1), np.int64(1) << 62
    if prm.incremental:
        for s in range(2):
            if fqv[s]:
                diff = np.uint64(0)
                for i in range(W):
                    diff += popcount(fqD[s, i] ^ D[i])
                if np.int64(diff) < best_diff:
                    best, best_diff = s, np.int64(diff)
    if best >= 0 and best_diff < n_rows:
        s = best
        if best_diff > 0:
            for i in range(W):
                if past_deadline(st, prm.deadline, _word_work(data)):
                    break
                gone = fqD[s, i] & ~D[i]
                while gone:
                    _add_row(fq, s, i * 64 + np.int64(trailing_zeros(gone)), -1.0, data, K)
                    gone &= gone - np.uint64(1)
                new = D[i] & ~fqD[s, i]
                while new:
                    _add_row(fq, s, i * 64 + np.int64(trailing_zeros(new)), 1.0, data, K)
                    new &= new - np.uint64(1)
        st[S_INCREMENTAL] += 1
    else:
        # recount in the counter that is not the closer one, so the other stays useful
        s = 0
        if prm.incremental:
            if fqv[0] and not fqv[1]:
                s = 1
            elif fqv[0] and fqv[1]:
                s = 1 - best if best >= 0 else 0
        fq[s, :, :, :] = 0.0
        _add_rows(fq, s, D, 1.0, data, K, st, prm.deadline)
        st[S_RECOUNT] += 1
    copy_words(fqD[s], D)
    fqv[s] = st[S_TIMEOUT] == 0  # a counter cut short by the deadline holds no subproblem
    return s


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _cell_cost(cell, K, code, minrows):
    """Leaf cost of a cell, +inf when it has fewer than ``minrows`` rows (empty cells included)."""
    if cell[K] < minrows:
        return INF
    return leaf_cost(cell, K, code)[0]


@njit(cache=NUMBA_CACHE, inline="always")
def _record_pair(i, j, l00, l01, l10, l11, bLc, bLf, bRc, bRf, tol):
    """Keep the best child split per side for two roots per pair: root i with a child split on j, and root j
    with a child split on i (cell lab: a = row has column i, b = row has column j); ``bLc``, ``bLf``, ``bRc``,
    ``bRf`` are the left and right cost and feature arrays of :class:`Scratch`."""
    if l00 + l01 < bLc[i] - tol:
        bLc[i], bLf[i] = l00 + l01, j
    if l10 + l11 < bRc[i] - tol:
        bRc[i], bRf[i] = l10 + l11, j
    if l00 + l10 < bLc[j] - tol:
        bLc[j], bLf[j] = l00 + l10, i
    if l01 + l11 < bRc[j] - tol:
        bRc[j], bRf[j] = l01 + l11, i


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _pairs_general(scr, prm, st, na, nw, s, cnt):
    """Phase 2 for any K and cost: best child split of each side of each root, over all feature pairs; stops
    (unfinished) once past the deadline."""
    K, code, minrows, tol = prm.n_classes, prm.cost, prm.min_rows, prm.tol
    C = K + 1
    act, diag, comp, compc = scr.active, scr.feat_counts, scr.feat_bits, scr.feat_class_bits
    fq, cell, pc = scr.freq, scr.cells, scr.pair_counts
    bLc, bLf, bRc, bRf = scr.left_cost, scr.left_feature, scr.right_cost, scr.right_feature
    for a in range(na):
        if past_deadline(st, prm.deadline, (na - a) * (nw + 1)):
            return
        i = act[a]
        for b in range(a + 1, na):
            j = act[b]
            if prm.bitset:
                tot = np.uint64(0)
                for w in range(nw):
                    tot += popcount(comp[i, w] & comp[j, w])
                rest = np.uint64(0)
                for c in range(1, K):
                    sc = np.uint64(0)
                    for w in range(nw):
                        sc += popcount(compc[c - 1, i, w] & comp[j, w])
                    pc[c] = sc
                    rest += sc
                pc[0] = tot - rest
                pc[K] = tot
            else:
                for c in range(C):
                    pc[c] = fq[s, i, j, c]
            # cells: 0 = (i-bar, j-bar), 1 = (i-bar, j), 2 = (i, j-bar), 3 = (i, j)
            for c in range(C):
                cell[3, c] = pc[c]
                cell[2, c] = diag[i, c] - pc[c]
                cell[1, c] = diag[j, c] - pc[c]
                cell[0, c] = cnt[c] - diag[i, c] - diag[j, c] + pc[c]
            l00 = _cell_cost(cell[0], K, code, minrows)
            l01 = _cell_cost(cell[1], K, code, minrows)
            l10 = _cell_cost(cell[2], K, code, minrows)
            l11 = _cell_cost(cell[3], K, code, minrows)
            _record_pair(i, j, l00, l01, l10, l11, bLc, bLf, bRc, bRf, tol)


@njit(cache=NUMBA_CACHE, inline="always")
def _binary_cost(rows, pos, minrows):
    """Misclassifications of a two-class cell with ``rows`` rows of which ``pos`` of class 1."""
    if rows < minrows:
        return INF
    return min(pos, rows - pos)


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _pairs_binary(scr, prm, st, na, nw, cnt):
    """Phase 2 specialised to two classes, unit weights and misclassifications (the common case).

    Same result as :func:`_pairs_general`; the cells live in registers: with t = |col_i & col_j| and
    q = |col_i & col_j & class_1|, cell (i, j) has t rows (q of class 1), (i, j-bar) n_i - t (p_i - q),
    (i-bar, j) n_j - t (p_j - q) and (i-bar, j-bar) N - n_i - n_j + t (P - p_i - p_j + q).
    """
    minrows, tol = prm.min_rows, prm.tol
    act, diag, comp, compc = scr.active, scr.feat_counts, scr.feat_bits, scr.feat_class_bits
    bLc, bLf, bRc, bRf = scr.left_cost, scr.left_feature, scr.right_cost, scr.right_feature
    big_n, big_p = cnt[2], cnt[1]
    for a in range(na):
        if past_deadline(st, prm.deadline, (na - a) * (nw + 1)):
            return
        i = act[a]
        ni, pi = diag[i, 2], diag[i, 1]
        for b in range(a + 1, na):
            j = act[b]
            tw = np.uint64(0)
            qw = np.uint64(0)
            for w in range(nw):
                x = comp[j, w]
                tw += popcount(comp[i, w] & x)
                qw += popcount(compc[0, i, w] & x)
            t = np.float64(tw)
            q = np.float64(qw)
            nj, pj = diag[j, 2], diag[j, 1]
            l11 = _binary_cost(t, q, minrows)
            l10 = _binary_cost(ni - t, pi - q, minrows)
            l01 = _binary_cost(nj - t, pj - q, minrows)
            l00 = _binary_cost(big_n - ni - nj + t, big_p - pi - pj + q, minrows)
            _record_pair(i, j, l00, l01, l10, l11, bLc, bLf, bRc, bRf, tol)


# ---- the interpreter's forms of phase 1 (bitset) and of the two-class phase 2 ----------------------------------
# Interpreted, the word loops above cost a Python step per word and pair (:mod:`odtmip.dp._kernels._interpreted`);
# these compute the same arrays with numpy's vector operations on the rows as 0/1 matrices. The counts are
# integers, exact in float64, and each cost is the same float operation as the loop's, so the search visits the
# same nodes (the tests compare the two forms node for node). Never compiled: they run only among the interpreted
# kernels, where every kernel they call (past_deadline) is a Python function too.
#: The kernels the interpreter runs in these forms, by name.
INTERPRETED_FORMS = {"_compact": "_compact_numpy", "_pairs_binary": "_pairs_binary_numpy"}
#: Words of rows per block of the pair form's matrix products (16,384 rows).
_BLOCK_WORDS = 256


def _packed(bits, nw):
    """The 0/1 array ``bits`` (..., m) as uint64 bitsets (..., nw), bit k in word k // 64 at position k % 64."""
    wide = np.zeros(bits.shape[:-1] + (nw * 64,), dtype=np.uint8)
    wide[..., :bits.shape[-1]] = bits
    return np.packbits(wide, axis=-1, bitorder="little").view("<u8")


def _compact_numpy(data, scr, D, K):
    """:func:`_compact` with numpy: the same bitsets, counts and number of words."""
    rows = np.flatnonzero(unpacked_bits(D, data.labels.shape[0]))
    m = rows.shape[0]
    scr.rows[:m] = rows
    nw = (m + 63) // 64
    bit = (rows & 63).astype(np.uint64)
    present = ((data.feature_bits[:, rows >> 6] >> bit) & np.uint64(1)).astype(np.uint8)  # (p, m): row k has f
    classes = (data.labels[rows][None, :] == np.arange(K)[:, None]).astype(np.uint8)  # (K, m)
    both = present[None, :, :] & classes[1:, None, :]  # (K-1, p, m)
    scr.feat_bits[:, :nw] = _packed(present, nw)
    scr.class_bits[:, :nw] = _packed(classes, nw)
    scr.feat_class_bits[:K - 1, :, :nw] = _packed(both, nw)
    n_f = present.sum(axis=1, dtype=np.int64)
    per_class = both.sum(axis=2, dtype=np.int64)  # (K-1, p)
    diag = scr.feat_counts
    diag[:, 1:K] = per_class.T
    diag[:, 0] = n_f - per_class.sum(axis=0)
    diag[:, K] = n_f
    return nw


def _pairs_binary_numpy(scr, prm, st, na, nw, cnt):
    """:func:`_pairs_binary` with numpy: t and q of every pair by one matrix product each, the four cell costs
    as matrices, and per root the first best child split of each side in the loop's order (the other features
    in order). It counts the loop's word operations for the clock at once, before the products."""
    if na == 0 or past_deadline(st, prm.deadline, na * (na + 1) // 2 * (nw + 1)):
        return
    act = scr.active[:na]
    diag = scr.feat_counts
    t, q = np.zeros((na, na)), np.zeros((na, na))  # rows with both features, ... of class 1 (both symmetric)
    for w in range(0, nw, _BLOCK_WORDS):  # blocks of rows bound the memory of the 0/1 matrices
        block = slice(w, min(w + _BLOCK_WORDS, nw))
        cols = unpacked_bits(scr.feat_bits[act, block], 64 * _BLOCK_WORDS).astype(np.float64)
        t += cols @ cols.T
        q += unpacked_bits(scr.feat_class_bits[0, act, block], 64 * _BLOCK_WORDS).astype(np.float64) @ cols.T
    n_i, p_i = diag[act, 2][:, None], diag[act, 1][:, None]
    n_j, p_j = n_i.T, p_i.T

    def cost(rows, pos):  # _binary_cost
        with np.errstate(invalid="ignore"):
            return np.where(rows < prm.min_rows, INF, np.minimum(pos, rows - pos))

    l11, l10 = cost(t, q), cost(n_i - t, p_i - q)
    l01, l00 = cost(n_j - t, p_j - q), cost(cnt[2] - n_i - n_j + t, cnt[1] - p_i - p_j + q)
    # row a: root act[a], the other feature splitting its side without it (left) or with it (right)
    for side, (best_c, best_f) in ((l00 + l01, (scr.left_cost, scr.left_feature)),
                                   (l10 + l11, (scr.right_cost, scr.right_feature))):
        np.fill_diagonal(side, INF)
        if prm.tol == 0.0:  # the first least cost per root, as the loop keeps it
            b = np.argmin(side, axis=1)
            v = side[np.arange(na), b]
            better = v < best_c[act]
            best_c[act[better]], best_f[act[better]] = v[better], act[b[better]]
            continue
        for a in range(na):
            i = act[a]
            for b in range(na):
                if side[a, b] < best_c[i] - prm.tol:
                    best_c[i], best_f[i] = side[a, b], act[b]


@njit(cache=NUMBA_CACHE, inline="always")
def _set_result(res_c, res_i, b, cost, nodes, feature, left, right):
    """Result ``b`` of :func:`solve_terminal` (``Scratch.result_cost``, ``Scratch.result_tree``): a tree of
    ``nodes`` branch nodes with these features."""
    res_c[b] = cost
    res_i[b, R_NODES], res_i[b, R_FEATURE], res_i[b, R_LEFT], res_i[b, R_RIGHT] = nodes, feature, left, right


@njit(cache=NUMBA_CACHE, inline="always")
def _copy_result(res_c, res_i, dst, src):
    """Result ``dst`` of :func:`solve_terminal` set to result ``src``."""
    res_c[dst] = res_c[src]
    for k in range(NR):
        res_i[dst, k] = res_i[src, k]


@njit(cache=NUMBA_CACHE)
def solve_terminal(data, scr, prm, st, D, cnt, pairs):
    """Optimal trees of depth <= 1 (and, with ``pairs``, depth <= 2) for the rows ``D``.

    Parameters
    ----------
    data : Data
        The training rows (:class:`~odtmip.dp._kernels._common.Data`).
    scr : Scratch
        Work arrays; the results land in ``scr.result_cost`` (objective) and ``scr.result_tree`` (columns
        R_*) for the budgets (1, 1), (2, 2), (2, 3), in that order. Each result is the lexicographic
        minimum of (objective, branch nodes), the objective being leaf costs plus ``penalty`` per branch
        node.
    prm : Params
        The search parameters (:class:`~odtmip.dp._kernels._common.Params`).
    st : int64 array
        Statistics (S_*).
    D : uint64 array
        The rows of the subproblem.
    cnt : float64 array (K+1,)
        Class weights of ``D`` and its row count.
    pairs : bool
        Also solve depth two (else only the (1, 1) result is set).

    Notes
    -----
    [MurTree] v1 §4.3-4.4. Ties keep the first root in feature order and the first child feature; a
    bigger budget takes a bigger tree only when it is lexicographically better.
    """
    K = prm.n_classes
    C = K + 1
    minrows, code, pen, tol, mincorrect = prm.min_rows, prm.cost, prm.penalty, prm.tol, prm.min_correct
    act, diag, lf0, lf1 = scr.active, scr.feat_counts, scr.leaf_absent, scr.leaf_present
    bLc, bLf, bRc, bRf = scr.left_cost, scr.left_feature, scr.right_cost, scr.right_feature
    fq, cell, res_c, res_i = scr.freq, scr.cells, scr.result_cost, scr.result_tree
    p = diag.shape[0]
    n_rows = np.int64(cnt[K])
    nw = np.int64(0)
    s = np.int64(0)
    if prm.bitset:
        nw = _compact(data, scr, D, K)
    else:
        s = _frequency(data, scr, prm, st, D, n_rows)
        if st[S_TIMEOUT]:
            return
        for f in range(p):
            for c in range(C):
                diag[f, c] = fq[s, f, f, c]
    if pairs:
        st[S_DEPTH2] += 1
    else:
        st[S_DEPTH1] += 1

    # features that can split D with at least minrows rows on each side (the others never can below D)
    # and are not dead (module docstring)
    na = np.int64(0)
    for f in range(p):
        r = diag[f, K]
        if r >= minrows and n_rows - r >= minrows:
            if mincorrect >= 0.0:
                for c in range(C):
                    cell[0, c] = cnt[c] - diag[f, c]
                if max_class(diag[f], K) <= mincorrect or max_class(cell[0], K) <= mincorrect:
                    continue
            act[na] = f
            na += 1
    for a in range(na):
        f = act[a]
        lf1[f] = leaf_cost(diag[f], K, code)[0]
        for c in range(C):
            cell[0, c] = cnt[c] - diag[f, c]
        lf0[f] = leaf_cost(cell[0], K, code)[0]

    leaf = leaf_cost(cnt, K, code)[0]
    b1c, b1f = INF, -1
    for a in range(na):
        f = act[a]
        v = lf0[f] + lf1[f]
        if v < b1c - tol:
            b1c, b1f = v, f
    _set_result(res_c, res_i, 0, leaf, 0, -1, -1, -1)
    if b1f >= 0 and lex_lt(b1c + pen, 1, leaf, 0, tol):
        _set_result(res_c, res_i, 0, b1c + pen, 1, b1f, -1, -1)
    if not pairs:
        return

    for a in range(na):
        f = act[a]
        bLc[f], bLf[f], bRc[f], bRf[f] = INF, -1, INF, -1
    if prm.bitset and K == 2 and code == COST_ERRORS:
        _pairs_binary(scr, prm, st, na, nw, cnt)
    else:
        _pairs_general(scr, prm, st, na, nw, s, cnt)

    b2c, b2f, b2l, b2r = INF, -1, -1, -1
    b3c, b3f = INF, -1
    for a in range(na):
        f = act[a]
        v = bLc[f] + lf1[f]
        if v < b2c - tol:
            b2c, b2f, b2l, b2r = v, f, bLf[f], -1
        v = lf0[f] + bRc[f]
        if v < b2c - tol:
            b2c, b2f, b2l, b2r = v, f, -1, bRf[f]
        v = bLc[f] + bRc[f]
        if v < b3c - tol:
            b3c, b3f = v, f
    # a bigger budget keeps the smaller budget's tree unless a bigger tree is lexicographically better
    _copy_result(res_c, res_i, 1, 0)
    if b2f >= 0 and lex_lt(b2c + 2 * pen, 2, res_c[1], res_i[1, R_NODES], tol):
        _set_result(res_c, res_i, 1, b2c + 2 * pen, 2, b2f, b2l, b2r)
    _copy_result(res_c, res_i, 2, 1)
    if b3f >= 0 and lex_lt(b3c + 3 * pen, 3, res_c[2], res_i[2, R_NODES], tol):
        _set_result(res_c, res_i, 2, b3c + 3 * pen, 3, b3f, bLf[b3f], bRf[b3f])
