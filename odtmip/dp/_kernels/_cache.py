"""The memo of optimal subtrees and lower bounds ([MurTree] §4.6) as open-addressing hash tables in arrays.

One :class:`Cache` record is passed to every kernel; its entry tables have the columns E_* and EF_* below.
A key has one entry per (depth, node) budget. An entry holds a lower bound on the lexicographic optimum
(objective, branch nodes) for its budget and, once solved, the optimal root assignment (the feature, and
the children's features for depth-two results). Key indices never change, so other arrays (the
similarity archive) may hold them. A general (non-terminal) entry records the budgets its children were
solved and cached under, which :func:`~odtmip.dp._kernels._common.effective_budget` may have reduced, so
that the tree is rebuilt from exactly those entries. When a table is full the kernel sets the S_FULL flag
(and U_STOP, which stops every thread of a search) and returns; Python grows the arrays (:func:`grow_tables`) and
re-enters the search.

Search threads share one cache (:func:`~odtmip.dp._kernels._search.solve_node`): with U_SHARED set, every reading
or writing function below holds a spin lock (U_LOCK, :func:`lock`) while it runs, so that no thread reads a key or an
entry half written. An optimal entry, once stored, is never changed (a second thread that solves the same
subproblem stores the same values), so a caller may read its fields after the lock is released.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import numpy as np
from numba import njit

from odtmip.dp._kernels._common import (
    INF,
    INTERNAL,
    NUMBA_CACHE,
    S_FULL,
    compare_and_swap,
    copy_words,
    hash_key,
    lex_lt,
    yield_core,
)


class Cache(NamedTuple):
    """The memo's arrays; kcap keys of KW words, ecap entries, a slot table of hcap = 4 kcap slots."""

    slots: np.ndarray  # int64 (hcap,): slot -> key index, -1 empty; hcap a power of two, load <= 1/2
    keys: np.ndarray  # uint64 (kcap, KW): the instance set (dataset cache) or path literals 2f + polarity (branch)
    hashes: np.ndarray  # uint64 (kcap,): hash of each key (compared before the full key)
    heads: np.ndarray  # int64 (kcap,): first entry of the key's list, -1 none
    ints: np.ndarray  # int64 (ecap, NE_I): entries, integer fields E_*
    reals: np.ndarray  # float64 (ecap, NE_F): entries, real fields EF_*
    used: np.ndarray  # int64 (N_USED,): keys and entries in use, the lock and flags of threads (U_*)


# ---- integer fields of an entry (columns of ``Cache.ints``) ------------------------------------------
E_NEXT = 0  # next entry of the same key, -1 last
E_DEPTH = 1  # depth budget d
E_NODES = 2  # node budget n
E_LB_NODES = 3  # node part of the lower bound
E_OPT = 4  # 1: the optimum below is known
E_FEATURE = 5  # root feature, -1 leaf
E_SOL_NODES = 6  # branch nodes of the optimal tree
E_FEAT_LEFT = 7  # depth-two results: feature of the left child, -1 leaf; otherwise the left child's budget
E_FEAT_RIGHT = 8  # the same for the right child; budgets packed as nodes * BUDGET_BASE + depth
E_SOL_DEPTH = 9  # depth of the optimal tree
E_TERMINAL = 10  # 1: stored by the depth-one/two solver (children given by E_FEAT_*)
NE_I = 11

# ---- real fields of an entry (columns of ``Cache.reals``) --------------------------------------------
EF_LB = 0  # objective part of the lower bound
EF_COST = 1  # optimal objective
NE_F = 2

# ---- counters (``Cache.used``) -----------------------------------------------------------------------
U_KEYS = 0  # keys in use
U_ENTRIES = 1  # entries in use
U_LOCK = 2  # the spin lock of threads sharing the cache: 1 while one holds it
U_STOP = 3  # set with S_FULL: every thread of the search stops, so that Python grows the tables
U_SHARED = 4  # 1: threads share the cache, its functions take the lock
N_USED = 5

#: Tries of the lock before a waiting thread yields its core (a critical section takes well under a microsecond; a
#: holder stopped by the system takes a time slice, milliseconds, which spinning would waste).
SPINS = 1000


@njit(cache=NUMBA_CACHE, **INTERNAL)
def lock(cache):
    """Take the cache's spin lock when threads share it (U_SHARED); a critical section is a few table reads. After
    :data:`SPINS` failed tries the thread yields its core (:func:`~odtmip.dp._kernels._common.yield_core`)."""
    used = cache.used
    if used[U_SHARED] != 0:
        spins = 0
        while compare_and_swap(used, U_LOCK, 0, 1) != 0:
            spins += 1
            if spins >= SPINS:  # the holder may have lost its core: give ours up rather than spin it away
                yield_core()
                spins = 0


@njit(cache=NUMBA_CACHE, **INTERNAL)
def unlock(cache):
    """Release the lock :func:`lock` took."""
    used = cache.used
    if used[U_SHARED] != 0:
        compare_and_swap(used, U_LOCK, 1, 0)


# ---- the root's features dealt out to threads (one array shared by the threads; the DP, ConTree, the front) ------
ROOT_DEALT = 0  # 1: each thread takes the next root feature no thread has taken; 0: one thread takes them all
ROOT_NEXT = 1  # the next root feature to take
ROOT_COST = 2  # the best root tree of all threads: objective (inf: none yet)
ROOT_NODES = 3  # its branch nodes
ROOT_FEATURE = 4  # its root feature
ROOT_END = 5  # a root ConTree searches in one thread: its features ROOT_NEXT .. ROOT_END - 1 only (0 .. inf: all)
N_ROOT = 6
# After these fields a root record of ``features`` slots (``new_root(True, features)``) holds one per root feature:
# the DP's threads keep the state of each feature there, ConTree's the cost of each feature's best root tree.
WORK_FREE = 0  # not taken yet, or searched to the end
WORK_ONE = 1  # one thread searches it
WORK_HELPED = 2  # one thread searches it and another helps (:func:`take_root_feature`)


@contextmanager
def shared_by_threads(cache: Cache) -> Iterator[None]:
    """Inside the block threads share ``cache`` (and the tables :func:`grow_tables` makes of it, which keep its
    ``used``): its functions take the lock."""
    used = cache.used
    used[U_SHARED] = 1
    try:
        yield
    finally:
        used[U_SHARED] = used[U_LOCK] = 0


def new_root(dealt: bool, features: int = 0) -> np.ndarray:
    """A root record: its features dealt out to threads (``dealt``) or all searched by one; with a slot for each of
    its ``features`` (the DP's threads: its state, :func:`take_root_feature`; ConTree's: its best root tree)."""
    root = np.zeros(N_ROOT + features)
    root[ROOT_DEALT], root[ROOT_COST], root[ROOT_FEATURE], root[ROOT_END] = float(dealt), INF, -1.0, INF
    return root


@njit(cache=NUMBA_CACHE, **INTERNAL)
def next_feature(cache, root, dealt, f):
    """The feature after ``f`` this search takes: ``f + 1``, or, at a root ``dealt`` out to threads, the next feature
    no thread has taken (ConTree and the front; the DP's threads also help each other, :func:`take_root_feature`)."""
    if not dealt:
        return f + 1
    lock(cache)
    g = np.int64(root[ROOT_NEXT])
    root[ROOT_NEXT] = g + 1
    unlock(cache)
    return g


@njit(cache=NUMBA_CACHE)
def take_root_feature(cache, root, f):
    """The root feature a thread takes once it has searched ``f`` (-1 at first) to the end, at a root dealt out to
    threads whose record holds the features' states: the next feature no thread has taken, or once every feature is
    taken, the first one that one thread still searches and no other helps, or the number of features when there
    is none. Returns it and whether the thread helps another there."""
    p = root.shape[0] - N_ROOT
    lock(cache)
    if f >= 0:
        root[N_ROOT + f] = WORK_FREE
    g = np.int64(root[ROOT_NEXT])
    helping = False
    if g < p:
        root[ROOT_NEXT] = g + 1
        root[N_ROOT + g] = WORK_ONE
    else:
        for h in range(p):
            if root[N_ROOT + h] == WORK_ONE:
                root[N_ROOT + h] = WORK_HELPED
                g, helping = np.int64(h), True
                break
    unlock(cache)
    return g, helping


@njit(cache=NUMBA_CACHE, **INTERNAL)
def find_key(cache, key, h):
    """Index of ``key`` (hash ``h``) or -1."""
    slots, keys, hashes = cache.slots, cache.keys, cache.hashes
    mask = slots.shape[0] - 1
    s = np.int64(h & np.uint64(mask))
    while True:
        k = slots[s]
        if k < 0:
            return -1
        if hashes[k] == h:
            same = True
            for i in range(key.shape[0]):
                if keys[k, i] != key[i]:
                    same = False
                    break
            if same:
                return k
        s = (s + 1) & mask


@njit(cache=NUMBA_CACHE, **INTERNAL)
def add_key(cache, key, h, st):
    """Insert ``key`` (known absent) and return its index; -1 and the S_FULL flag when out of room."""
    slots, keys, used = cache.slots, cache.keys, cache.used
    k = used[U_KEYS]
    if k >= keys.shape[0] or 2 * (k + 1) > slots.shape[0]:
        st[S_FULL] = 1
        used[U_STOP] = 1
        return -1
    mask = slots.shape[0] - 1
    s = np.int64(h & np.uint64(mask))
    while slots[s] >= 0:
        s = (s + 1) & mask
    slots[s] = k
    copy_words(keys[k], key)
    cache.hashes[k] = h
    cache.heads[k] = -1
    used[U_KEYS] = k + 1
    return k


@njit(cache=NUMBA_CACHE, **INTERNAL)
def key_index(cache, key, create, st):
    """Index of ``key``; with ``create`` insert it when absent (-1 if the table is full)."""
    h = hash_key(key)
    lock(cache)
    k = find_key(cache, key, h)
    if k < 0 and create:
        k = add_key(cache, key, h, st)
    unlock(cache)
    return k


@njit(cache=NUMBA_CACHE, **INTERNAL)
def find_entry(cache, k, d, n):
    """The entry of key ``k`` for budget (d, n), or -1."""
    ei = cache.ints
    e = cache.heads[k]
    while e >= 0:
        if ei[e, E_DEPTH] == d and ei[e, E_NODES] == n:
            return e
        e = ei[e, E_NEXT]
    return -1


@njit(cache=NUMBA_CACHE, **INTERNAL)
def link_entry(cache, k, d, n, st):
    """A new entry of key ``k`` for budget (d, n), its other integer fields -1; -1 and the S_FULL flag if full."""
    ei, used = cache.ints, cache.used
    e = used[U_ENTRIES]
    if e >= ei.shape[0]:
        st[S_FULL] = 1
        used[U_STOP] = 1
        return -1
    used[U_ENTRIES] = e + 1
    ei[e, :] = -1
    ei[e, E_NEXT] = cache.heads[k]
    ei[e, E_DEPTH] = d
    ei[e, E_NODES] = n
    cache.heads[k] = e
    return e


@njit(cache=NUMBA_CACHE, **INTERNAL)
def entry_for(cache, k, d, n, st):
    """The entry of key ``k`` for budget (d, n), created with a zero bound if absent; -1 if full."""
    e = find_entry(cache, k, d, n)
    if e >= 0:
        return e
    e = link_entry(cache, k, d, n, st)
    if e < 0:
        return -1
    ei, ef = cache.ints, cache.reals
    ei[e, E_LB_NODES] = 0
    ei[e, E_OPT] = 0
    ei[e, E_TERMINAL] = 0
    ef[e, EF_LB] = 0.0
    ef[e, EF_COST] = np.inf
    return e


@njit(cache=NUMBA_CACHE, **INTERNAL)
def find_optimal(cache, k, d, n):
    """Entry holding an optimal tree for budget (d, n) of key ``k``, or -1.

    Besides the exact budget, an optimum stored for a larger budget (d', n') >= (d, n) serves when that
    tree fits (d, n): the optimum over a larger feasible set that lies in the smaller one is optimal there.
    """
    lock(cache)
    e = _find_optimal_unlocked(cache, k, d, n)
    unlock(cache)
    return e


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _find_optimal_unlocked(cache, k, d, n):
    """:func:`find_optimal` without the lock: the entry of the exact budget, else the oldest that serves (the list runs
    from the newest), so that the answer for a budget never changes once it has one (:func:`store_optimal`)."""
    ei = cache.ints
    e = cache.heads[k]
    found = np.int64(-1)
    while e >= 0:
        if ei[e, E_OPT] == 1:
            ed = ei[e, E_DEPTH]
            en = ei[e, E_NODES]
            if ed == d and en == n:
                return e
            if ed >= d and en >= n and ei[e, E_SOL_NODES] <= n and ei[e, E_SOL_DEPTH] <= d:
                found = e
        e = ei[e, E_NEXT]
    return found


@njit(cache=NUMBA_CACHE, **INTERNAL)
def lower_bound(cache, k, d, n, tol):
    """Best stored lower bound (objective, nodes) for budget (d, n) of key ``k``.

    The maximum over entries with budget d' >= d and n' >= n: the optimum only falls as the budget grows,
    so a bound for a larger budget bounds a smaller one, never the reverse ([MurTree] §4.6.2).
    """
    lock(cache)
    lbc, lbn = _lower_bound_unlocked(cache, k, d, n, tol)
    unlock(cache)
    return lbc, lbn


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _lower_bound_unlocked(cache, k, d, n, tol):
    """:func:`lower_bound` without the lock."""
    lbc = 0.0
    lbn = np.int64(0)
    if k < 0:
        return lbc, lbn
    ei, ef = cache.ints, cache.reals
    e = cache.heads[k]
    while e >= 0:
        if ei[e, E_DEPTH] >= d and ei[e, E_NODES] >= n:
            if lex_lt(lbc, lbn, ef[e, EF_LB], ei[e, E_LB_NODES], tol):
                lbc = ef[e, EF_LB]
                lbn = ei[e, E_LB_NODES]
        e = ei[e, E_NEXT]
    return lbc, lbn


@njit(cache=NUMBA_CACHE, **INTERNAL)
def solved_bound(cache, k, d, n, eq, pen, tol):
    """Lower bound (objective, nodes) for budget (d, n) of key ``k`` from its optima cached for other budgets,
    with ``pen`` > 0 per branch node and ``eq`` the subproblem's equivalent-points weight.

    For an optimum T at budget (d', n'), a tree within (d, n) is either within (d', n'), so no better than T,
    or has more than n' branch nodes or (when d > d') a depth above d', so at least m = n' + 1 or
    min(d', n') + 1 of them and costs at least eq + m pen ([OSDT] Theorems B.2 and C.1). So
    T(d, n) >= min(T, (eq + m pen, m)): the hierarchical bound "a tree beyond a finished depth pays for
    the extra nodes" that [STreeD]'s solver applies after each depth it completes.
    """
    lock(cache)
    lbc, lbn = _solved_bound_unlocked(cache, k, d, n, eq, pen, tol)
    unlock(cache)
    return lbc, lbn


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _solved_bound_unlocked(cache, k, d, n, eq, pen, tol):
    """:func:`solved_bound` without the lock."""
    lbc = 0.0
    lbn = np.int64(0)
    if k < 0 or pen <= 0.0:
        return lbc, lbn
    ei, ef = cache.ints, cache.reals
    e = cache.heads[k]
    while e >= 0:
        if ei[e, E_OPT] == 1:
            ed, en = ei[e, E_DEPTH], ei[e, E_NODES]
            m = (en if d <= ed else min(ed, en)) + 1
            c, nodes = ef[e, EF_COST], ei[e, E_SOL_NODES]
            if lex_lt(eq + m * pen, m, c, nodes, tol):
                c, nodes = eq + m * pen, m
            if lex_lt(lbc, lbn, c, nodes, tol):
                lbc, lbn = c, nodes
        e = ei[e, E_NEXT]
    return lbc, lbn


@njit(cache=NUMBA_CACHE, **INTERNAL)
def store_lower_bound(cache, k, d, n, lbc, lbn, tol, st):
    """Raise the lower bound of key ``k`` at budget (d, n) to (lbc, lbn) unless it is solved."""
    lock(cache)
    _store_lower_bound_unlocked(cache, k, d, n, lbc, lbn, tol, st)
    unlock(cache)


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _store_lower_bound_unlocked(cache, k, d, n, lbc, lbn, tol, st):
    """:func:`store_lower_bound` without the lock."""
    e = entry_for(cache, k, d, n, st)
    if e < 0:
        return
    ei, ef = cache.ints, cache.reals
    if ei[e, E_OPT] == 0 and lex_lt(ef[e, EF_LB], ei[e, E_LB_NODES], lbc, lbn, tol):
        ef[e, EF_LB] = lbc
        ei[e, E_LB_NODES] = lbn


@njit(cache=NUMBA_CACHE, **INTERNAL)
def store_optimal(cache, k, d, n, cost, nodes, depth, feature, feat_left, feat_right, terminal, st):
    """Record the optimal tree of key ``k`` at budget (d, n); its objective is also the lower bound. Returns the entry
    (-1 if the table is full), which keeps the optimum stored first: a thread that solved the subproblem at the same
    time may have found another optimal tree, and the callers then go on with that one, the tree the cache rebuilds.
    Nothing is stored where an optimum already serves (d, n) (:func:`find_optimal`): a parent's record of its
    child's nodes and depth then always matches the tree rebuilt from the child's budget."""
    lock(cache)
    e = _store_optimal_unlocked(cache, k, d, n, cost, nodes, depth, feature, feat_left, feat_right, terminal, st)
    unlock(cache)
    return e


@njit(cache=NUMBA_CACHE, **INTERNAL)
def _store_optimal_unlocked(cache, k, d, n, cost, nodes, depth, feature, feat_left, feat_right, terminal, st):
    """:func:`store_optimal` without the lock."""
    e = _find_optimal_unlocked(cache, k, d, n)
    if e >= 0:  # an optimum serves this budget already (stored first by another thread, or for a larger budget)
        return e
    e = entry_for(cache, k, d, n, st)
    if e < 0:
        return e
    ei, ef = cache.ints, cache.reals
    if ei[e, E_OPT] == 1:
        return e
    ei[e, E_OPT] = 1
    ef[e, EF_COST] = cost
    ef[e, EF_LB] = cost
    ei[e, E_LB_NODES] = nodes
    ei[e, E_SOL_NODES] = nodes
    ei[e, E_SOL_DEPTH] = depth
    ei[e, E_FEATURE] = feature
    ei[e, E_FEAT_LEFT] = feat_left
    ei[e, E_FEAT_RIGHT] = feat_right
    ei[e, E_TERMINAL] = terminal
    return e


@njit(cache=NUMBA_CACHE, **INTERNAL)
def store_leaf(cache, k, d, n, cost, st):
    """:func:`store_optimal` of a leaf: no branch node and no split."""
    none = np.int64(-1)
    return store_optimal(cache, k, d, n, cost, np.int64(0), np.int64(0), none, none, none, np.int64(0), st)


@njit(cache=NUMBA_CACHE)
def rehash(slots, hashes, n_keys):
    """Fill an empty slot table ``slots`` (all -1) with key indices 0..n_keys-1 by their hashes."""
    mask = slots.shape[0] - 1
    for k in range(n_keys):
        s = np.int64(hashes[k] & np.uint64(mask))
        while slots[s] >= 0:
            s = (s + 1) & mask
        slots[s] = k


def new_tables(key_words: int, n_keys: int = 1 << 14, n_entries: int = 1 << 15, n_ints: int = NE_I,
               n_reals: int = NE_F) -> Cache:
    """Empty cache tables for keys of ``key_words`` uint64 words, entries of ``n_ints`` integer fields (the first
    three E_NEXT, E_DEPTH, E_NODES) and ``n_reals`` real ones (default: the fields E_* and EF_* above)."""
    return Cache(
        slots=np.full(4 * n_keys, -1, dtype=np.int64),
        keys=np.zeros((n_keys, key_words), dtype=np.uint64),
        hashes=np.zeros(n_keys, dtype=np.uint64),
        heads=np.full(n_keys, -1, dtype=np.int64),
        ints=np.zeros((n_entries, n_ints), dtype=np.int64),
        reals=np.zeros((n_entries, n_reals), dtype=np.float64),
        used=np.zeros(N_USED, dtype=np.int64),
    )


def tables_gib(cache: Cache) -> float:
    """GiB the cache's tables hold (:func:`grow_tables` doubles them)."""
    return sum(a.nbytes for a in cache) / 2**30


def grow_tables(cache: Cache) -> Cache:
    """The same cache in tables of twice the size (keys and entries keep their indices)."""
    n_keys, n_entries = int(cache.used[U_KEYS]), int(cache.used[U_ENTRIES])
    kcap, ecap = cache.keys.shape[0], cache.ints.shape[0]
    if n_keys >= kcap - 1 or 2 * (n_keys + 1) > cache.slots.shape[0]:
        kcap *= 2
    if n_entries >= ecap - 1:
        ecap *= 2
    new = new_tables(cache.keys.shape[1], kcap, ecap, cache.ints.shape[1], cache.reals.shape[1])._replace(
        used=cache.used)
    new.keys[:n_keys] = cache.keys[:n_keys]
    new.hashes[:n_keys] = cache.hashes[:n_keys]
    new.heads[:n_keys] = cache.heads[:n_keys]
    new.ints[:n_entries] = cache.ints[:n_entries]
    new.reals[:n_entries] = cache.reals[:n_entries]
    rehash(new.slots, new.hashes, n_keys)
    return new
