"""Anytime quality of the DP and of ConTree: the greedy first incumbent is never worse than CART, and a search
stopped anywhere returns a verified tree and a valid lower bound (issue #17)."""

import numpy as np
import pytest
from _brute import all_trees
from sklearn.tree import DecisionTreeClassifier

from odtmip.data import Dataset
from odtmip.dp import DPSolver, solve_contree, solve_dp
from odtmip.dp.anytime import greedy_tree
from odtmip.dp.contree import ContreeOptions, ContreeSolver
from odtmip.results import Status


def _random_data(rng, n, p, K, weights):
    X = rng.integers(0, 2, size=(n, p))
    y = (X[:, 0] ^ X[:, 1] ^ (rng.random(n) < 0.3)).astype(int)
    if K > 2:
        y = np.where(rng.random(n) < 0.3, rng.integers(0, K, size=n), y)
    w = {"none": None, "integer": rng.integers(1, 5, size=n).astype(float), "real": rng.random(n) + 0.05}[weights]
    return Dataset(X, y, w)


def _cart_errors(ds, depth, min_leaf, X=None):
    """Weighted training misclassifications of scikit-learn's CART at ``depth`` on the same binary columns (or on
    the numeric columns ``X``, split at midpoints as ConTree splits them)."""
    X = ds.Xb if X is None else X
    cart = DecisionTreeClassifier(max_depth=depth, min_samples_leaf=min_leaf, random_state=0)
    cart.fit(X, ds.y, sample_weight=ds.weights)
    return float(np.sum(ds.weights * (cart.predict(X) != ds.y)))


@pytest.mark.parametrize("case", range(24))
def test_a_stopped_search_is_never_worse_than_cart(case):
    # Real weights: no two different splits tie in Gini, so CART's splits are determined and the greedy tree
    # (its top splits, optimal depth-two bottoms) can only be better. Stopped at the root's first search node,
    # the search returns the greedy tree (or the leaf, when that is better).
    rng = np.random.default_rng(case)
    depth, min_leaf, K = 1 + case % 5, (1, 1, 4)[case % 3], (2, 3)[case % 2]
    ds = _random_data(rng, int(rng.integers(40, 200)), int(rng.integers(3, 14)), K, "real")
    cart = _cart_errors(ds, depth, min_leaf)
    solver = DPSolver(ds, min_leaf=min_leaf)
    solver._params = solver._params._replace(node_limit=0)
    stopped = solver.solve(max_depth=depth)
    assert stopped.status is Status.TIME_LIMIT
    assert stopped.objective <= cart + 1e-9
    optimum = solve_dp(ds, depth, min_leaf=min_leaf)
    assert optimum.objective <= stopped.objective + 1e-9


def test_a_tiny_time_limit_still_beats_the_leaf_like_cart(rng):
    # the time limit passes during preprocessing: the search gets no time, the greedy tree is still returned
    X = rng.integers(0, 2, size=(500, 30))
    y = (X[:, 0] & X[:, 1] | X[:, 2]).astype(int) ^ (rng.random(500) < 0.1)
    ds = Dataset(X, y, rng.random(500) + 0.5)
    res = solve_dp(ds, 3, time_limit=1e-6)
    assert res.status is Status.TIME_LIMIT
    leaf = float(min(ds.weights[ds.y == 0].sum(), ds.weights[ds.y == 1].sum()))
    assert res.objective <= _cart_errors(ds, 3, 1) + 1e-9 < leaf


@pytest.mark.parametrize("case", range(16))
def test_a_stopped_contree_search_is_never_worse_than_cart(case):
    # The same on numeric columns: stopped at its root, ConTree returns the greedy tree (CART's thresholds, optimal
    # depth-two subtrees), which is at least as good as CART; without a greedy first incumbent it was the leaf.
    rng = np.random.default_rng(100 + case)
    depth, min_leaf, K = 3 + case % 2, (1, 1, 4)[case % 3], (2, 3)[case % 2]
    n, p = int(rng.integers(50, 130)), int(rng.integers(2, 6))
    X = rng.random((n, p)).round(2)
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.3) ^ (rng.random(n) < 0.2)).astype(int)
    if K > 2:
        y = np.where(rng.random(n) < 0.3, rng.integers(0, K, size=n), y)
    ds = Dataset(X, y, rng.random(n) + 0.05)
    cart = _cart_errors(ds, depth, min_leaf, X)
    solver = ContreeSolver(ds, min_leaf=min_leaf)
    solver._node_limit = 0
    stopped = solver.solve(depth)
    assert stopped.status is Status.TIME_LIMIT
    assert stopped.stats["greedy_objective"] == pytest.approx(stopped.objective)
    assert stopped.objective <= cart + 1e-9
    optimum = solve_contree(ds, depth, min_leaf)
    assert optimum.objective <= stopped.objective + 1e-9
    assert 0.0 <= stopped.bound <= optimum.objective
    leafless = ContreeSolver(ds, min_leaf=min_leaf, options=ContreeOptions(greedy=False))
    leafless._node_limit = 0
    assert leafless.solve(depth).tree.n_branch_nodes == 0  # the same stop without the greedy tree


def test_a_tiny_contree_time_limit_still_beats_the_leaf_like_cart(rng):
    # past the deadline before the greedy tree's first depth-two subtree: CART's thresholds all the way down
    X = rng.random((400, 4)).round(3)
    y = ((X[:, 0] > 0.4) & (X[:, 1] < 0.7) | (X[:, 2] > 0.9)).astype(int) ^ (rng.random(400) < 0.05)
    ds = Dataset(X, y, rng.random(400) + 0.5)
    res = solve_contree(ds, 4, time_limit=1e-6)
    assert res.status is Status.TIME_LIMIT and res.tree.depth <= 4
    leaf = float(min(ds.weights[ds.y == 0].sum(), ds.weights[ds.y == 1].sum()))
    assert res.objective <= _cart_errors(ds, 4, 1, X) + 1e-9 < leaf


@pytest.mark.parametrize("penalty, leaf_penalty, depth", [(0.0, None, 3), (0.0, None, 4), (2.0, None, 4),
                                                            (0.3, None, 5), (0.0, 0.01, 5), (0.0, 0.02, None)])
@pytest.mark.parametrize("weights", ["none", "integer", "real"])
def test_a_search_stopped_anywhere_returns_a_valid_bound(penalty, leaf_penalty, depth, weights):
    # Stop the same search after 1, 2, 3, ... nodes (10 % more each time): every stop returns a verified tree
    # (checked by the solver) and a bound between the optimum solved without a limit and the returned objective.
    rng = np.random.default_rng(7)
    ds = _random_data(rng, 120, 9, 3 if weights == "integer" else 2, weights)
    kw = dict(penalty=penalty, leaf_penalty=leaf_penalty)
    optimum = DPSolver(ds, **kw).solve(max_depth=depth)
    assert optimum.status is Status.OPTIMAL
    tol = 1e-9 * max(1.0, optimum.objective)
    stops = above_trivial = 0
    limit = 1
    while True:
        solver = DPSolver(ds, **kw)
        solver._params = solver._params._replace(node_limit=limit)
        res = solver.solve(max_depth=depth)
        if res.status is Status.OPTIMAL:
            assert res.objective == pytest.approx(optimum.objective)
            break
        assert res.status is Status.TIME_LIMIT
        assert res.bound <= optimum.objective + tol <= res.objective + 2 * tol
        stops += 1
        above_trivial += res.bound > solver._report(solver.equivalent_points_weight) + tol
        limit += max(1, limit // 10)
    assert stops >= 3
    if penalty > 0 or leaf_penalty is not None:
        # each split pays the penalty: the bound of every root split is above the equivalent points
        assert above_trivial == stops


# ----------------------------------------------------------------------------------------------- the greedy tree
def _exact(X, y, w, K, rows, r, min_leaf, penalty):
    """(spec, cost, nodes) of an optimal tree of depth <= r on ``rows`` by brute force, fewest nodes among ties."""
    cost, nodes, tree = min(((e + penalty * k, k, t) for e, k, t in all_trees(X, y, w, K, rows, r, min_leaf)),
                            key=lambda c: c[:2])

    def spec(t):  # _brute's structures -> greedy specs
        return t[1] if t[0] == "leaf" else (t[0], spec(t[1]), spec(t[2]))

    return spec(tree), cost, nodes


def _routed(X, y, w, spec, rows, penalty):
    """Weighted errors + penalty x branch nodes of a greedy spec, by routing ``rows`` through it."""
    if not isinstance(spec, tuple):
        return float(w[rows][y[rows] != spec].sum())
    right = X[rows, spec[0]] == 1
    return penalty + _routed(X, y, w, spec[1], rows[~right], penalty) + _routed(X, y, w, spec[2], rows[right], penalty)


def test_the_greedy_tree_is_the_better_of_cart_splits_and_a_two_level_lookahead():
    # With an exact depth-two solver (enumeration), the greedy tree is never worse than the tree of CART's splits
    # alone, its cost is what routing the rows gives, and on some of these cases the lookahead tree wins outright
    wins = 0
    for case in range(40):
        rng = np.random.default_rng(case)
        n, p, K = int(rng.integers(20, 60)), int(rng.integers(3, 7)), (2, 3)[case % 2]
        X = rng.integers(0, 2, size=(n, p)).astype(np.uint8)
        y = ((X[:, 0] ^ X[:, 1]) | (X[:, 2] & (rng.random(n) < 0.5))).astype(int) ^ (rng.random(n) < 0.15)
        if K > 2:
            y = np.where(rng.random(n) < 0.2, rng.integers(0, K, size=n), y)
        w = rng.integers(1, 4, size=n).astype(float)
        depth, min_leaf, penalty = 3 + case % 2, (1, 1, 3)[case % 3], (0.0, 1.0)[case % 4 // 2]

        def terminal(rows, r):
            return _exact(X, y, w, K, rows, r, min_leaf, penalty)  # noqa: B023 (called in this iteration)

        best, cart = (greedy_tree(X, y, w, K, depth, min_leaf, penalty, 0.0, terminal, lookahead=ahead)
                      for ahead in (True, False))
        assert best.depth <= depth and best.cost == _routed(X, y, w, best.spec, np.arange(n), penalty)
        assert (best.cost, best.nodes) <= (cart.cost, cart.nodes)
        wins += best.cost < cart.cost
    assert wins >= 5, wins  # 14 of the 40
