"""The memo of optimal subtrees and lower bounds ([MurTree] §4.6) as open-addressing hash tables in arrays.

Layout (one tuple ``cache`` passed to every kernel)::

    ht     int64  (hcap,)        slot -> key index, -1 empty; hcap a power of two, load <= 1/2
    keys   uint64 (kcap, KW)     the keys: the instance bitset (dataset cache) or the set of path
                                 literals 2*f + polarity as a bitset (branch cache), [MurTree] §4.6
    khash  uint64 (kcap,)        hash of each key (compared before the full key)
    khead  int64  (kcap,)        first entry of the key's list, -1 none
    ei     int64  (ecap, NE_I)   entries, integer fields E_*
    ef     float64(ecap, 2)      entries, real fields: lower-bound objective, optimal objective
    count  int64  (2,)           keys and entries in use

A key has one entry per (depth, node) budget. An entry holds a lower bound on the lexicographic optimum
(objective, branch nodes) for its budget and, once solved, the optimal root assignment (feature, left
node budget, the children's features for depth-two results). Key indices never change, so other arrays
(the similarity archive) may hold them. A general (non-terminal) entry records the budgets its children
were solved and cached under, which :func:`~odtmip.dp._kernels._common.effective_budget` may have reduced,
so that the tree is rebuilt from exactly those entries. When a table is full the kernel sets the S_FULL
flag and returns; Python grows the arrays (:func:`grow_tables`) and re-enters the search.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from odtmip.dp._kernels._common import NUMBA_CACHE, S_FULL, hash_key, lex_lt

E_NEXT = 0  # next entry of the same key, -1 last
E_DEPTH = 1  # depth budget d
E_NODES = 2  # node budget n
E_LB_NODES = 3  # node part of the lower bound
E_OPT = 4  # 1: the optimum below is known
E_FEATURE = 5  # root feature, -1 leaf
E_LEFT = 6  # node budget of the left child
E_SOL_NODES = 7  # branch nodes of the optimal tree
E_FEAT_LEFT = 8  # depth-two results: feature of the left child, -1 leaf; otherwise the left child's budget
E_FEAT_RIGHT = 9  # the same for the right child; budgets packed as nodes * BUDGET_BASE + depth
E_SOL_DEPTH = 10  # depth of the optimal tree
E_TERMINAL = 11  # 1: stored by the depth-one/two solver (children given by E_FEAT_*)
NE_I = 12

EF_LB = 0  # objective part of the lower bound
EF_COST = 1  # optimal objective


@njit(cache=NUMBA_CACHE)
def find_key(cache, key, h):
    """Index of ``key`` (hash ``h``) or -1."""
    ht, keys, khash = cache[0], cache[1], cache[2]
    mask = ht.shape[0] - 1
    s = np.int64(h & np.uint64(mask))
    while True:
        k = ht[s]
        if k < 0:
            return -1
        if khash[k] == h:
            same = True
            for i in range(key.shape[0]):
                if keys[k, i] != key[i]:
                    same = False
                    break
            if same:
                return k
        s = (s + 1) & mask


@njit(cache=NUMBA_CACHE)
def add_key(cache, key, h, st):
    """Insert ``key`` (known absent) and return its index; -1 and the S_FULL flag when out of room."""
    ht, keys, khash, khead, count = cache[0], cache[1], cache[2], cache[3], cache[6]
    k = count[0]
    if k >= keys.shape[0] or 2 * (k + 1) > ht.shape[0]:
        st[S_FULL] = 1
        return -1
    mask = ht.shape[0] - 1
    s = np.int64(h & np.uint64(mask))
    while ht[s] >= 0:
        s = (s + 1) & mask
    ht[s] = k
    keys[k, :] = key
    khash[k] = h
    khead[k] = -1
    count[0] = k + 1
    return k


@njit(cache=NUMBA_CACHE)
def key_index(cache, key, create, st):
    """Index of ``key``; with ``create`` insert it when absent (-1 if the table is full)."""
    h = hash_key(key)
    k = find_key(cache, key, h)
    if k < 0 and create:
        k = add_key(cache, key, h, st)
    return k


@njit(cache=NUMBA_CACHE)
def entry_for(cache, k, d, n, st):
    """The entry of key ``k`` for budget (d, n), created with a zero bound if absent; -1 if full."""
    khead, ei, ef, count = cache[3], cache[4], cache[5], cache[6]
    e = khead[k]
    while e >= 0:
        if ei[e, E_DEPTH] == d and ei[e, E_NODES] == n:
            return e
        e = ei[e, E_NEXT]
    e = count[1]
    if e >= ei.shape[0]:
        st[S_FULL] = 1
        return -1
    count[1] = e + 1
    ei[e, :] = -1
    ei[e, E_NEXT] = khead[k]
    ei[e, E_DEPTH] = d
    ei[e, E_NODES] = n
    ei[e, E_LB_NODES] = 0
    ei[e, E_OPT] = 0
    ei[e, E_TERMINAL] = 0
    ef[e, EF_LB] = 0.0
    ef[e, EF_COST] = np.inf
    khead[k] = e
    return e


@njit(cache=NUMBA_CACHE)
def find_optimal(cache, k, d, n):
    """Entry holding an optimal tree for budget (d, n) of key ``k``, or -1.

    Besides the exact budget, an optimum stored for a larger budget (d', n') >= (d, n) serves when that
    tree fits (d, n): the optimum over a larger feasible set that lies in the smaller one is optimal there.
    """
    khead, ei = cache[3], cache[4]
    e = khead[k]
    while e >= 0:
        if ei[e, E_OPT] == 1:
            ed = ei[e, E_DEPTH]
            en = ei[e, E_NODES]
            if (ed == d and en == n) or (
                ed >= d and en >= n and ei[e, E_SOL_NODES] <= n and ei[e, E_SOL_DEPTH] <= d
            ):
                return e
        e = ei[e, E_NEXT]
    return -1


@njit(cache=NUMBA_CACHE)
def lower_bound(cache, k, d, n, tol):
    """Best stored lower bound (objective, nodes) for budget (d, n) of key ``k``.

    The maximum over entries with budget d' >= d and n' >= n: the optimum only falls as the budget grows,
    so a bound for a larger budget bounds a smaller one, never the reverse ([MurTree] §4.6.2).
    """
    lbc = 0.0
    lbn = np.int64(0)
    if k < 0:
        return lbc, lbn
    khead, ei, ef = cache[3], cache[4], cache[5]
    e = khead[k]
    while e >= 0:
        if ei[e, E_DEPTH] >= d and ei[e, E_NODES] >= n:
            if lex_lt(lbc, lbn, ef[e, EF_LB], ei[e, E_LB_NODES], tol):
                lbc = ef[e, EF_LB]
                lbn = ei[e, E_LB_NODES]
        e = ei[e, E_NEXT]
    return lbc, lbn


@njit(cache=NUMBA_CACHE)
def store_lower_bound(cache, k, d, n, lbc, lbn, tol, st):
    """Raise the lower bound of key ``k`` at budget (d, n) to (lbc, lbn) unless it is solved."""
    e = entry_for(cache, k, d, n, st)
    if e < 0:
        return
    ei, ef = cache[4], cache[5]
    if ei[e, E_OPT] == 0 and lex_lt(ef[e, EF_LB], ei[e, E_LB_NODES], lbc, lbn, tol):
        ef[e, EF_LB] = lbc
        ei[e, E_LB_NODES] = lbn


@njit(cache=NUMBA_CACHE)
def store_optimal(cache, k, d, n, cost, nodes, depth, feature, left, feat_left, feat_right, terminal, st):
    """Record the optimal tree of key ``k`` at budget (d, n); its objective is also the lower bound."""
    e = entry_for(cache, k, d, n, st)
    if e < 0:
        return
    ei, ef = cache[4], cache[5]
    ei[e, E_OPT] = 1
    ef[e, EF_COST] = cost
    ef[e, EF_LB] = cost
    ei[e, E_LB_NODES] = nodes
    ei[e, E_SOL_NODES] = nodes
    ei[e, E_SOL_DEPTH] = depth
    ei[e, E_FEATURE] = feature
    ei[e, E_LEFT] = left
    ei[e, E_FEAT_LEFT] = feat_left
    ei[e, E_FEAT_RIGHT] = feat_right
    ei[e, E_TERMINAL] = terminal


@njit(cache=NUMBA_CACHE)
def rehash(ht, khash, n_keys):
    """Fill an empty slot table ``ht`` (all -1) with key indices 0..n_keys-1 by their hashes."""
    mask = ht.shape[0] - 1
    for k in range(n_keys):
        s = np.int64(khash[k] & np.uint64(mask))
        while ht[s] >= 0:
            s = (s + 1) & mask
        ht[s] = k


def new_tables(key_words: int, n_keys: int = 1 << 14, n_entries: int = 1 << 15) -> tuple:
    """Empty cache tables for keys of ``key_words`` uint64 words."""
    return (
        np.full(4 * n_keys, -1, dtype=np.int64),
        np.zeros((n_keys, key_words), dtype=np.uint64),
        np.zeros(n_keys, dtype=np.uint64),
        np.full(n_keys, -1, dtype=np.int64),
        np.zeros((n_entries, NE_I), dtype=np.int64),
        np.zeros((n_entries, 2), dtype=np.float64),
        np.zeros(2, dtype=np.int64),
    )


def grow_tables(cache: tuple) -> tuple:
    """The same cache in tables of twice the size (keys and entries keep their indices)."""
    ht, keys, khash, khead, ei, ef, count = cache
    n_keys, n_entries = int(count[0]), int(count[1])
    kcap = keys.shape[0] * (2 if n_keys >= keys.shape[0] - 1 or 2 * (n_keys + 1) > ht.shape[0] else 1)
    ecap = ei.shape[0] * (2 if n_entries >= ei.shape[0] - 1 else 1)
    new_keys = np.zeros((kcap, keys.shape[1]), dtype=np.uint64)
    new_keys[:n_keys] = keys[:n_keys]
    new_hash = np.zeros(kcap, dtype=np.uint64)
    new_hash[:n_keys] = khash[:n_keys]
    new_head = np.full(kcap, -1, dtype=np.int64)
    new_head[:n_keys] = khead[:n_keys]
    new_ei = np.zeros((ecap, NE_I), dtype=np.int64)
    new_ei[:n_entries] = ei[:n_entries]
    new_ef = np.zeros((ecap, 2), dtype=np.float64)
    new_ef[:n_entries] = ef[:n_entries]
    new_ht = np.full(4 * kcap, -1, dtype=np.int64)
    rehash(new_ht, new_hash, n_keys)
    return new_ht, new_keys, new_hash, new_head, new_ei, new_ef, count
