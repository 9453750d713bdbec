"""Brute force: every decision tree over the binary columns, for tiny data.

Independent of the DP code: trees are enumerated explicitly (every structure of depth <= d over the p
binary columns, each leaf labelled with its best class, which is optimal for a fixed structure), their
objective is evaluated by routing the rows, and the winner of each node budget is rebuilt as a
:class:`~odtmip.core.tree.Tree` and re-scored by routing the raw data through it. Degenerate trees (empty
leaves) are enumerated too; an empty leaf costs 0 and is always allowed.

The number of trees grows as S(d) = 1 + p S(d-1)^2: 295 for d = 2, p = 6 and 40 805 for d = 3, p = 4.
"""

from __future__ import annotations

import math

import numpy as np

from odtmip.core.data import Dataset
from odtmip.core.tree import branch, leaf


def _leaf(X, y, w, K, rows, min_leaf):
    if len(rows) == 0:
        return [(0.0, 0, ("leaf", 0))]
    if len(rows) < min_leaf:
        return []  # no tree on these rows meets min_leaf
    counts = np.bincount(y[rows], weights=w[rows], minlength=K)
    label = int(np.argmax(counts))
    return [(float(counts.sum() - counts[label]), 0, ("leaf", label))]


def all_trees(X, y, w, K, rows, depth, min_leaf):
    """Every feasible tree on ``rows`` of depth <= ``depth``: list of (errors, branch nodes, structure)."""
    out = list(_leaf(X, y, w, K, rows, min_leaf))
    if depth == 0:
        return out
    for j in range(X.shape[1]):
        right = X[rows, j] == 1
        lefts = all_trees(X, y, w, K, rows[~right], depth - 1, min_leaf)
        rights = all_trees(X, y, w, K, rows[right], depth - 1, min_leaf)
        for el, nl, sl in lefts:
            for er, nr, sr in rights:
                out.append((el + er, nl + nr + 1, (j, sl, sr)))
    return out


def brute_force(dataset: Dataset, max_depth: int, min_leaf: int = 1, penalty: float = 0.0):
    """Optimum for every node budget 0..2^d-1: dict n -> (objective, branch nodes, Tree) or None.

    The objective is errors + ``penalty`` x nodes; among optima the fewest nodes win (objectives within
    1e-9 are equal, so integer objectives tie exactly). Each returned tree has been re-scored through
    :class:`Tree` routing.
    """
    X = np.asarray(dataset.Xb, dtype=np.int64)
    y, w = dataset.y, dataset.weights
    trees = all_trees(X, y, w, dataset.n_classes, np.arange(len(y)), max_depth, min_leaf)
    best: dict[int, tuple | None] = {}
    for budget in range(2**max_depth):
        cands = [(e + penalty * k, k, s) for e, k, s in trees if k <= budget]
        if not cands:
            best[budget] = None
            continue
        low = min(c[0] for c in cands)
        obj, k, s = min((c for c in cands if c[0] <= low + 1e-9), key=lambda c: c[1])
        tree = dataset.new_tree(_spec(dataset, s))
        routed = dataset.misclassifications(tree) + penalty * tree.n_branch_nodes
        assert math.isclose(routed, obj, rel_tol=1e-9, abs_tol=1e-9), (routed, obj)
        best[budget] = (obj, k, tree)
    return best


def _spec(dataset: Dataset, s):
    if s[0] == "leaf":
        return leaf(s[1])
    return branch(dataset.split_of(s[0]), _spec(dataset, s[1]), _spec(dataset, s[2]))


# ------------------------------------------------------------------------------------------- sparse
def achievable(X, y, w, K, rows, features, depth, min_leaf):
    """Every (errors, leaves) a tree on ``rows`` can reach, splitting each path on distinct ``features``.

    Returns a dict (rounded errors, leaves) -> (errors, leaves, structure): all trees of depth <= ``depth``
    are enumerated (each column at most once per path, empty leaves allowed), keeping one structure per
    distinct pair. A tree that splits twice on a column has a split with an empty side; removing it keeps
    the errors and saves a leaf, so these trees contain an optimum of every objective that grows with the
    errors and the leaves.
    """
    out = {}
    for errors, _, s in _leaf(X, y, w, K, rows, min_leaf):
        out[(round(errors, 9), 1)] = (errors, 1, s)
    if depth == 0:
        return out
    for j in features:
        right = X[rows, j] == 1
        rest = features - {j}
        lefts = achievable(X, y, w, K, rows[~right], rest, depth - 1, min_leaf)
        rights = achievable(X, y, w, K, rows[right], rest, depth - 1, min_leaf)
        for el, ll, sl in lefts.values():
            for er, lr, sr in rights.values():
                out.setdefault((round(el + er, 9), ll + lr), (el + er, ll + lr, (j, sl, sr)))
    return out


def brute_force_sparse(dataset: Dataset, leaf_penalty: float, max_depth: int | None = None, min_leaf: int = 1):
    """Optimum of errors / W + leaf_penalty x leaves over trees of depth <= ``max_depth`` (None: any depth).

    Returns (objective, leaves, Tree) or None when no tree meets ``min_leaf``; among optima (objectives
    within 1e-9) the fewest leaves win. Every tree over distinct columns per path is enumerated (see
    :func:`achievable`; any depth means depth <= the number of columns), and the winner is re-scored by
    routing the raw data through it.
    """
    X = np.asarray(dataset.Xb, dtype=np.int64)
    y, w = dataset.y, dataset.weights
    W = float(w.sum())
    depth = X.shape[1] if max_depth is None else max_depth
    pairs = achievable(X, y, w, dataset.n_classes, np.arange(len(y)), frozenset(range(X.shape[1])), depth, min_leaf)
    if not pairs:
        return None
    cands = [(e / W + leaf_penalty * k, k, s) for e, k, s in pairs.values()]
    low = min(c[0] for c in cands)
    obj, k, s = min((c for c in cands if c[0] <= low + 1e-9), key=lambda c: c[1])
    tree = dataset.new_tree(_spec(dataset, s))
    routed = dataset.misclassifications(tree) / W + leaf_penalty * tree.n_leaves
    assert math.isclose(routed, obj, rel_tol=1e-9, abs_tol=1e-9), (routed, obj)
    return obj, k, tree


# ------------------------------------------------------------------------------------------- fronts
def achievable_pairs(X, pos, w, rows, depth):
    """Every (fp, fn, branch nodes) a tree of depth <= ``depth`` on ``rows`` reaches, each leaf labelled either
    way (``pos``: the rows of the positive class); a set, without any dominance filtering."""
    fp_leaf = round(float(w[rows][~pos[rows]].sum()), 9)  # a positive leaf errs on the negatives
    fn_leaf = round(float(w[rows][pos[rows]].sum()), 9)
    out = {(fp_leaf, 0.0, 0), (0.0, fn_leaf, 0)}
    if depth == 0:
        return out
    for j in range(X.shape[1]):
        right = X[rows, j] == 1
        lefts = achievable_pairs(X, pos, w, rows[~right], depth - 1)
        rights = achievable_pairs(X, pos, w, rows[right], depth - 1)
        out |= {(round(a + c, 9), round(b + d, 9), k + m + 1) for a, b, k in lefts for c, d, m in rights}
    return out


def brute_front(dataset: Dataset, max_depth: int, max_nodes: int | None = None, positive: int = 1):
    """The Pareto front of (fp, fn) over all trees of depth <= ``max_depth`` with <= ``max_nodes`` branch nodes
    (class index ``positive`` positive): sorted list of (fp, fn, fewest branch nodes reaching that pair)."""
    X = np.asarray(dataset.Xb, dtype=np.int64)
    pos = dataset.y == positive
    triples = achievable_pairs(X, pos, dataset.weights, np.arange(len(pos)), max_depth)
    n = 2**max_depth - 1 if max_nodes is None else max_nodes
    fewest = {}
    for a, b, k in triples:
        if k <= n:
            fewest[(a, b)] = min(k, fewest.get((a, b), k))
    return sorted((a, b, k) for (a, b), k in fewest.items()
                  if not any(c <= a and d <= b and (c, d) != (a, b) for c, d in fewest))
