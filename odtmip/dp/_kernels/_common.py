"""Shared pieces of the compiled DP: the numba cache switch, the records every kernel reads (the search
parameters and the training rows), bit intrinsics, the clock, the lexicographic order on (objective, branch
nodes) pairs, leaf costs and the budget a subproblem really needs.

The kernels of :mod:`odtmip.dp._kernels` take numpy arrays, scalars and named records of them
(``typing.NamedTuple``; STYLE §6.5): numba compiles a record as a tuple, so ``rec.field`` costs what
``rec[i]`` did, and the records live in the module that owns their layout. numba caches compiled code per
file and does **not** notice edits to another file that a kernel calls: after changing a kernel, clear
``odtmip/dp/_kernels/__pycache__`` (or run with ``ODTMIP_NUMBA_CACHE=0``). In a read-only install set
``NUMBA_CACHE_DIR`` to a writable folder.

A constant passed to another kernel (``0``, ``True``, a module constant such as ``KIND_LEAF``), or a variable whose
first value is one, reaches it as a literal type, and numba compiles the callee once more for every literal it
sees. So the kernels write such values as ``np.int64(0)`` or ``np.bool_(True)``: every kernel compiles once per
record type, which ``tests/dp/test_specialisations.py`` checks, and the first run compiles a fifth less code.
A recursive kernel calls itself from one place (a loop over the two children): numba types the function once
more for every recursive call site, which cost about a second per engine.
"""

from __future__ import annotations

import os
import time
from typing import NamedTuple

import numpy as np
from numba import njit, objmode, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from odtmip.core.progress import dp_hook

#: Compile with ``cache=True`` unless the environment says ``ODTMIP_NUMBA_CACHE=0``.
NUMBA_CACHE = os.environ.get("ODTMIP_NUMBA_CACHE", "1") != "0"

#: Compile options of a kernel that only other kernels call: numba then builds it no wrappers to be called from Python
#: or C, whose unboxing of every array of its records costs compile time (about 2.5 s of the DP's first 22 s). Such a
#: kernel must never be called from Python, where it would crash the interpreter;
#: ``tests/dp/test_specialisations.py`` checks that no Python code names one.
INTERNAL = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}

INF = np.inf

# leaf-cost codes
COST_ERRORS = 0  # weighted misclassifications: total - max_c count_c, label = lowest arg max


NO_NODE_LIMIT = 1 << 62  # a search's node limit when it has none


class Params(NamedTuple):
    """The scalar parameters of one search (read-only in the kernels): the problem, the technique switches
    of :class:`~odtmip.dp.solver.DPOptions` and the real parameters. Unset switches are off."""

    n_classes: int  # K, the number of classes
    min_rows: int = 1  # rows a non-empty leaf needs (min_leaf, at least 1)
    cost: int = COST_ERRORS  # leaf-cost code, see leaf_cost
    unit: bool = False  # every weight is 1, so class weights are popcounts
    depth_two: bool = False  # specialised depth-two solver ([MurTree] §4.3-4.4)
    bitset: bool = False  # depth-two counting by bitset popcounts, else frequency counters ([MurTree] §4.3)
    incremental: bool = False  # frequency counters updated incrementally ([MurTree] §4.4.3)
    similarity: bool = False  # similarity lower bound ([MurTree] §4.5)
    use_cache: bool = False  # read the cache during search ([MurTree] §4.6)
    branch_keys: bool = False  # branch cache (path literals), else dataset cache (instance set)
    upper_bound: bool = False  # upper-bound propagation ([MurTree] §4.2)
    refined_lb: bool = False  # refined lower bound of infeasible subproblems ([MurTree] Eq. 15-16)
    skip_degenerate: bool = False  # skip splits with an empty side ([MurTree] Prop. 4.2)
    dynamic_order: bool = False  # solve the child with the larger leaf cost first ([MurTree] §4.7-4.8)
    leaf_bound: bool = False  # cap each subproblem's budget by its leaf-count bound ([OSDT] Theorem C.1)
    leaf_support: bool = False  # never split a subproblem of too little support ([OSDT] Theorem 3.3)
    incremental_accuracy: bool = False  # a child is a leaf or pays one more split ([OSDT] Thm 3.4, Lemma 3.2)
    fewest_nodes: bool = False  # among the optimal trees, one with the fewest branch nodes (else the first found)
    penalty: float = 0.0  # objective per branch node
    tol: float = 0.0  # objectives closer than this are equal
    deadline: float = INF  # time.perf_counter() value at which to stop (inf: none)
    report_every: float = INF  # seconds between progress reports (odtmip.core.progress.dp_hook; inf: none)
    min_correct: float = -1.0  # a leaf of an optimal tree classifies more than this weight correctly (-1: no test)
    node_limit: int = NO_NODE_LIMIT  # stop as at the deadline after this many search nodes (a stop tests repeat)


class Data(NamedTuple):
    """The training rows as the kernels read them; W = ceil(n / 64) words per bitset over the rows."""

    feature_bits: np.ndarray  # uint64 (p, W): rows where feature f is 1, one bitset per feature
    class_bits: np.ndarray  # uint64 (K, W): rows of each class
    weights: np.ndarray  # float64 (n,): sample weights (ones when unweighted)
    labels: np.ndarray  # int64 (n,): class of each row
    row_start: np.ndarray  # int64 (n+1,): row r's present features are row_features[row_start[r]:row_start[r+1]]
    row_features: np.ndarray  # int64 (nnz,): the present features of every row, each row's ascending
    minority_bits: np.ndarray  # uint64 (W,): rows outside the majority class of their identical rows (0: off)


# ---- statistics and flags (``st``, int64) -----------------------------------------------------------
S_NODES = 0  # search nodes (calls of the recursion)
S_DEPTH2 = 1  # specialised depth-two solves (pairs counted)
S_DEPTH1 = 2  # depth-one solves
S_TIMEOUT = 3  # set once the deadline passed
S_FULL = 4  # set when the cache needs to grow
S_TICK = 5  # nodes since the clock was last read
S_INCREMENTAL = 6  # frequency counters updated incrementally
S_RECOUNT = 7  # frequency counters recomputed from scratch
S_SIM_PRUNE = 8  # nodes pruned by the similarity lower bound
S_CACHE_HITS = 9  # optimal subtrees answered from the cache
S_CAPPED = 10  # splits with a child budget reduced by the support or leaf-count bound ([OSDT] Thm 3.3, C.1)
S_EQUIV_CLOSED = 11  # subproblems closed because their leaf reaches the equivalent-points bound
S_LEAF_ACC = 12  # splits skipped by the leaf-accuracy bound ([OSDT] Theorem 3.5)
S_SPLIT_BOUND = 13  # splits pruned by the incremental-accuracy split bound only ([OSDT] Theorem 3.4)
S_WORK = 14  # word operations of long loops since the clock was last read (:func:`past_deadline`)
S_NEXT_REPORT = 15  # microseconds (time.perf_counter()) of the next progress report
S_HELPS = 16  # root features a thread searched to help the thread that took them (threads sharing a root)
N_STATS = 17

#: Read the clock once per this many search nodes (an objmode call costs about 0.4 us).
CLOCK_EVERY = 256
#: Loops with long steps (rows of feature pairs, rows of a frequency counter) read the clock once this many
#: word operations have passed since the last read (about a millisecond).
CLOCK_WORK = 1 << 20

#: Class-weight vectors ``cnt`` hold K class weights, then the row count at index K and the equivalent-points
#: weight at index K + 1: the weight no tree can classify correctly ([OSDT] Theorem B.2). Offset from K:
CNT_EQUIV = 1

#: A child's (depth, node) budget packed into one int64 of a cache entry: ``nodes * BUDGET_BASE + depth``.
BUDGET_BASE = 64


def popcount(x):
    """Number of set bits of a uint64; compiled, LLVM ``ctpop`` (one instruction on x86-64 with popcnt)."""
    return np.uint64(int(x).bit_count())


def trailing_zeros(x):
    """Index of the lowest set bit of a non-zero uint64; compiled, LLVM ``cttz``."""
    x = int(x)
    return np.uint64((x & -x).bit_length() - 1)


@intrinsic
def _ctpop(typingctx, x):
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen


@intrinsic
def _cttz(typingctx, x):
    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], context.get_constant(types.boolean, True))

    return types.uint64(types.uint64), codegen


def compare_and_swap(arr, i, old, new):
    """Set ``arr[i]`` (int64) to ``new`` if it holds ``old``; returns the value it held. Compiled, one atomic LLVM
    ``cmpxchg`` (sequentially consistent), which the spin lock of the cache shared by search threads is built on
    (:func:`~odtmip.dp._kernels._cache.lock`)."""
    v = arr[i]
    if v == old:
        arr[i] = new
    return v


@intrinsic
def _cmpxchg(typingctx, arr, i, old, new):
    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
        pair = builder.cmpxchg(ptr, args[2], args[3], "seq_cst", "seq_cst")
        return builder.extract_value(pair, 0)

    return types.int64(arr, types.int64, types.int64, types.int64), codegen


@overload(compare_and_swap)
def _compare_and_swap_compiled(arr, i, old, new):
    return lambda arr, i, old, new: _cmpxchg(arr, np.int64(i), np.int64(old), np.int64(new))


@overload(popcount)
def _popcount_compiled(x):
    return lambda x: _ctpop(x)


@overload(trailing_zeros)
def _trailing_zeros_compiled(x):
    return lambda x: _cttz(x)


_perf_counter = time.perf_counter
_dp_hook = dp_hook
_sched_yield = getattr(os, "sched_yield", lambda: time.sleep(0))


@njit(cache=NUMBA_CACHE)
def clock():
    """``time.perf_counter()`` from compiled code (numba has no time module)."""
    with objmode(t="float64"):
        t = _perf_counter()
    return t


@njit(cache=NUMBA_CACHE)
def yield_core():
    """Give this thread's core to another one (``os.sched_yield``): a thread waiting for a lock whose holder the
    system has stopped lets it run (the machine may run more threads than it has cores)."""
    with objmode():
        _sched_yield()


@njit(cache=NUMBA_CACHE, **INTERNAL)
def check_clock(st, prm):
    """Count a search node and read the clock every ``CLOCK_EVERY`` nodes; report progress when due; True once
    past the deadline or the node limit."""
    st[S_NODES] += 1
    if st[S_NODES] > prm.node_limit:
        st[S_TIMEOUT] = 1
    st[S_TICK] += 1
    if st[S_TICK] >= CLOCK_EVERY:
        st[S_TICK] = 0
        if prm.deadline < INF or prm.report_every < INF:
            now = clock()
            if now > prm.deadline:
                st[S_TIMEOUT] = 1
            if prm.report_every < INF and now * 1e6 >= st[S_NEXT_REPORT]:
                st[S_NEXT_REPORT] = np.int64((now + prm.report_every) * 1e6)
                with objmode():
                    _dp_hook()
    return st[S_TIMEOUT] != 0


@njit(cache=NUMBA_CACHE)
def row_lists(X):
    """The present columns of every row of a 0/1 matrix ``X`` (uint8, n x p): (row_start, row_features) of
    :class:`Data`."""
    n, p = X.shape
    start = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        c = np.int64(0)  # not 0: interpreted, a Python int plus X's uint8 stays uint8 and wraps past 255
        for j in range(p):
            c += X[i, j]
        start[i + 1] = start[i] + c
    features = np.empty(start[n], dtype=np.int64)
    for i in range(n):
        k = start[i]
        for j in range(p):
            if X[i, j]:
                features[k] = j
                k += 1
    return start, features


@njit(cache=NUMBA_CACHE, **INTERNAL)
def past_deadline(st, deadline, work):
    """For loops with long steps: count ``work`` word operations and read the clock once ``CLOCK_WORK`` of
    them have passed; True once past ``deadline``."""
    st[S_WORK] += work
    if st[S_WORK] >= CLOCK_WORK:
        st[S_WORK] = 0
        if deadline < INF and clock() > deadline:
            st[S_TIMEOUT] = 1
    return st[S_TIMEOUT] != 0


@njit(cache=NUMBA_CACHE, inline="always")
def lex_le(ac, an, bc, bn, tol):
    """(ac, an) <= (bc, bn) in the lexicographic order (objective, then branch nodes)."""
    return ac < bc - tol or (ac <= bc + tol and an <= bn)


@njit(cache=NUMBA_CACHE, inline="always")
def lex_lt(ac, an, bc, bn, tol):
    """(ac, an) < (bc, bn) lexicographically: strictly better objective, or equal with fewer nodes."""
    return ac < bc - tol or (ac <= bc + tol and an < bn)


@njit(cache=NUMBA_CACHE, inline="always")
def lex_min(ac, an, bc, bn, tol):
    """The lexicographically smaller of (ac, an) and (bc, bn); (ac, an) on ties."""
    if lex_lt(bc, bn, ac, an, tol):
        return bc, bn
    return ac, an


@njit(cache=NUMBA_CACHE)
def leaf_cost(cnt, K, code):
    """Cost and label of a leaf holding the class weights ``cnt[0..K-1]``.

    ``code`` selects the cost (only :data:`COST_ERRORS` so far): the weighted misclassifications
    ``sum_c cnt[c] - max_c cnt[c]``, the label being the lowest class index among the maxima
    ([MurTree] §2 (leaf cost); ties go to the lowest label).
    """
    total = 0.0
    best = -1.0
    label = 0
    for c in range(K):
        v = cnt[c]
        total += v
        if v > best:
            best = v
            label = c
    return total - best, label


@njit(cache=NUMBA_CACHE, **INTERNAL)
def max_class(cnt, K):
    """Largest class weight in ``cnt[0..K-1]``: the weight a leaf over these rows classifies correctly."""
    best = 0.0
    for c in range(K):
        if cnt[c] > best:
            best = cnt[c]
    return best


@njit(cache=NUMBA_CACHE)
def effective_budget(cnt, d, n, prm):
    """The (depth, node) budget a subproblem with class weights ``cnt`` needs instead of (d, n).

    Exact: the lexicographically optimal tree (objective, then branch nodes) within (d, n) lies within the
    returned budget, so both budgets have the same optimum; the search and the tree reconstruction use the
    smaller one. Only active for a positive ``penalty`` p per branch node, with the leaf feasible.

    * **Support** ([OSDT] Theorem 3.3, K-class form): a split beats the leaf only if the leaf errs on more
      than p (the split pays at least p), and a leaf errs on at most (K-1)/K of the weight w(D). So
      w(D) (K-1)/K <= p leaves no split: budget (0, 0). For K = 2 this is the paper's "support < 2 lambda".
    * **Leaf count** ([OSDT] Theorem C.1 applied to the subproblem, with the subproblem's own leaf as the
      known tree R^c): a tree with B branch nodes costs at least E + p B, E the equivalent-points weight
      (index K + 1 of ``cnt``, 0 when that bound is off), and must cost less than the leaf L. Hence
      B <= floor((L - E + tol) / p), and its depth is at most B. The depth is capped by B; the node budget
      too, unless it is the full 2^d - 1 (a full budget keeps one left/right split of the nodes per
      feature, which is cheaper to search than a tight node count).

    Parameters
    ----------
    cnt : float64 array (K+2,)
        Class weights, row count (index K) and equivalent-points weight (index K+1).
    d, n : int
        Canonical budget, d <= n <= 2^d - 1.
    prm : Params
        Reads ``n_classes`` (K), ``min_rows``, ``leaf_support``, ``leaf_bound``, ``penalty`` and ``tol``.

    Returns
    -------
    (d', n') : canonical budget with d' <= d and n' <= n; applying the function again changes nothing.
    """
    K = prm.n_classes
    pen = prm.penalty
    if pen <= 0.0 or d == 0 or n == 0 or cnt[K] < prm.min_rows:
        return d, n
    tol = prm.tol
    total = 0.0
    for c in range(K):
        total += cnt[c]
    if prm.leaf_support and total * (K - 1) / K <= pen + tol:
        return np.int64(0), np.int64(0)
    if prm.leaf_bound:
        return cap_budget(d, n, (total - max_class(cnt, K) - cnt[K + CNT_EQUIV] + tol) / pen)
    return d, n


@njit(cache=NUMBA_CACHE)
def cap_budget(d, n, q):
    """Canonical budget (d, n) reduced to trees with at most floor(q) branch nodes (and so that depth).

    A full node budget 2^d - 1 stays full at the smaller depth (one left/right split of the nodes per
    feature is cheaper to search than a tight node count); a real node limit is capped as well.
    """
    if q < n:
        b = np.int64(max(q, 0.0))  # floor: the most branch nodes a wanted tree can have
        if n >= (np.int64(1) << d) - 1:
            if b < d:
                d = b
                n = (np.int64(1) << d) - 1
        else:
            n = b
            d = min(d, n)
    return d, n


@njit(cache=NUMBA_CACHE, inline="always")
def pack_budget(d, n):
    """One int64 holding the budget (d, n); see :data:`BUDGET_BASE`."""
    return n * BUDGET_BASE + d


@njit(cache=NUMBA_CACHE, **INTERNAL)
def class_counts(bits, cbits, wts, yv, K, unit, out):
    """Class weights of the rows in ``bits`` into ``out[0..K-1]`` and their number into ``out[K]``.

    Unit weights use popcounts against the class bitsets ``cbits``; real weights walk the set bits.
    """
    if unit:
        rows = np.uint64(0)
        for i in range(bits.shape[0]):
            rows += popcount(bits[i])
        rest = np.uint64(0)
        for c in range(1, K):
            s = np.uint64(0)
            for i in range(bits.shape[0]):
                s += popcount(bits[i] & cbits[c, i])
            out[c] = s
            rest += s
        out[0] = rows - rest
        out[K] = rows
        return
    for c in range(K + 1):
        out[c] = 0.0
    for i in range(bits.shape[0]):
        word = bits[i]
        while word:
            r = i * 64 + np.int64(trailing_zeros(word))
            out[yv[r]] += wts[r]
            out[K] += 1.0
            word &= word - np.uint64(1)


@njit(cache=NUMBA_CACHE, inline="always")
def word_weight(word, base, wts):
    """Total weight of the rows set in one 64-bit ``word`` whose first row is ``base``."""
    s = 0.0
    while word:
        s += wts[base + np.int64(trailing_zeros(word))]
        word &= word - np.uint64(1)
    return s


@njit(cache=NUMBA_CACHE, inline="always")
def _and_weight(a, b, flip, wts, unit):
    """Total weight of the rows in ``a & (b ^ flip)``: flip = 0 for a and b, all ones for a and not b."""
    if unit:
        n = np.uint64(0)
        for i in range(a.shape[0]):
            n += popcount(a[i] & (b[i] ^ flip))
        return np.float64(n)
    s = 0.0
    for i in range(a.shape[0]):
        s += word_weight(a[i] & (b[i] ^ flip), i * 64, wts)
    return s


@njit(cache=NUMBA_CACHE, **INTERNAL)
def weight_minus(a, b, wts, unit):
    """Total weight of the rows in ``a`` and not in ``b`` (|D_old \\ D_new| of [MurTree] §4.5)."""
    return _and_weight(a, b, ~np.uint64(0), wts, unit)


@njit(cache=NUMBA_CACHE, **INTERNAL)
def masked_weight(a, b, wts, unit):
    """Total weight of the rows in both ``a`` and ``b``."""
    return _and_weight(a, b, np.uint64(0), wts, unit)


@njit(cache=NUMBA_CACHE, inline="always")
def copy_words(dst, src):
    """``dst[:] = src`` for two bitsets of the same length, as a loop: numba's slice assignment checks the shapes
    and compiles the formatting of its error message into every kernel that uses it (seconds of compile time)."""
    for i in range(src.shape[0]):
        dst[i] = src[i]


@njit(cache=NUMBA_CACHE, **INTERNAL)
def hash_key(key):
    """64-bit hash of a bitset key (splitmix-style mixing of every word)."""
    h = np.uint64(0x9E3779B97F4A7C15)
    for i in range(key.shape[0]):
        h ^= key[i]
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
    return h


def gini_proxy(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """sum_c a_c^2 / w_a + sum_c b_c^2 / w_b per row of the class weights ``a``, ``b`` of two sides (a side of
    no weight adds 0): the larger, the larger CART's Gini decrease ([CART] §4.3; numpy, never compiled: the greedy
    trees' splits, :mod:`odtmip.dp.anytime`). The sums over classes run class by class, each a vector operation over
    the rows (a sum along the short class axis is several times slower)."""
    w_a, w_b = a[:, 0].copy(), b[:, 0].copy()
    s_a, s_b = a[:, 0] ** 2, b[:, 0] ** 2
    for c in range(1, a.shape[1]):
        w_a += a[:, c]
        w_b += b[:, c]
        s_a += a[:, c] ** 2
        s_b += b[:, c] ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(w_a > 0, s_a / w_a, 0.0) + np.where(w_b > 0, s_b / w_b, 0.0)


# ---- the interpreter's forms (:func:`odtmip.dp._kernels._interpreted.kernels`; never compiled) ---------------
#: The kernels the interpreter runs in another form, by name: the cache's hash in Python's integers (a uint64 numpy
#: scalar operation costs as much as a hundred of them), the same 64-bit value; with unit weights, the class counts
#: and the weights of two bitsets' rows by counting the bits of whole arrays (real weights: the loops).
INTERPRETED_FORMS = {"hash_key": "_hash_key_ints", "class_counts": "_class_counts_bits",
                     "weight_minus": "_weight_minus_bits", "masked_weight": "_masked_weight_bits"}
_WORD = (1 << 64) - 1
#: The interpreted loops of these kernels, for the cases their forms leave to them: set in the interpreter's namespace
#: of this module (:func:`odtmip.dp._kernels._interpreted.kernels`).
LOOPS: dict = {}


def _hash_key_ints(key):
    """:func:`hash_key` in Python's integers, wrapped to 64 bits as the uint64 operations wrap."""
    h = 0x9E3779B97F4A7C15
    for word in key.tolist():
        h = ((h ^ word) * 0xBF58476D1CE4E5B9) & _WORD
        h ^= h >> 31
    return np.uint64(h)


def _class_counts_bits(bits, cbits, wts, yv, K, unit, out):
    """:func:`class_counts` with unit weights by :func:`count_bits`."""
    if not unit:
        return LOOPS["class_counts"](bits, cbits, wts, yv, K, unit, out)
    rows = count_bits(bits)
    per_class = [count_bits(bits & cbits[c]) for c in range(1, K)]
    out[1:K] = per_class
    out[0] = rows - sum(per_class)
    out[K] = rows


def _weight_minus_bits(a, b, wts, unit):
    """:func:`weight_minus` with unit weights by :func:`count_bits`."""
    if not unit:
        return LOOPS["weight_minus"](a, b, wts, unit)
    return np.float64(count_bits(a & ~b))


def _masked_weight_bits(a, b, wts, unit):
    """:func:`masked_weight` with unit weights by :func:`count_bits`."""
    if not unit:
        return LOOPS["masked_weight"](a, b, wts, unit)
    return np.float64(count_bits(a & b))


def count_bits(words):
    """The number of bits set in the uint64 bitsets ``words``, as a Python int, for the numpy forms of kernels."""
    return int(np.unpackbits(np.ascontiguousarray(words, dtype=np.uint64).view(np.uint8)).sum())


def unpacked_bits(words, m):
    """The first ``m`` bits of each row of the uint64 bitsets ``words`` (..., W) as a uint8 0/1 array (..., m), for
    the numpy forms of kernels."""
    octets = np.ascontiguousarray(words, dtype="<u8").view(np.uint8)  # little-endian: bit k in octet k // 8
    return np.unpackbits(octets, axis=-1, bitorder="little")[..., :m]
