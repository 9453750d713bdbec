"""Anytime quality of the DP and of ConTree: the greedy first incumbent is never worse than CART, and a search
stopped anywhere returns a verified tree and a valid lower bound (issue #17)."""

from unittest import mock

import numpy as np
import pytest
from _brute import all_trees
from sklearn.tree import DecisionTreeClassifier

from odtmip.core.data import Dataset
from odtmip.core.results import Status
from odtmip.dp import DPSolver, anytime, solve_contree, solve_dp
from odtmip.dp._kernels._common import CNT_EQUIV
from odtmip.dp.anytime import greedy_tree, terminal_solver
from odtmip.dp.contree import ContreeOptions, ContreeSolver
from odtmip.dp.pareto import ParetoSolver, solve_pareto
from odtmip.dp.solver import DPOptions


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
    assert stopped.stop_reason == "time_limit"  # optimal when the bound at the stop proves it (depth 1: it does)
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


@pytest.mark.parametrize("case", range(4))
def test_at_depth_five_a_stopped_contree_search_is_never_worse_than_cart(case):
    # with the greedy tree's last pass (each depth-three subtree tries every feature's best threshold above optimal
    # depth-two subtrees): the tree returned at the root's first node is verified by routing (in the solver) and
    # is no worse than CART's at depth 5
    rng = np.random.default_rng(200 + case)
    n, min_leaf, K = int(rng.integers(150, 300)), (1, 4)[case % 2], (2, 3)[case // 2]
    X = rng.random((n, 4)).round(2)
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.3) ^ (X[:, 2] > 0.6) ^ (rng.random(n) < 0.1)).astype(int)
    if K > 2:
        y = np.where(rng.random(n) < 0.2, rng.integers(0, K, size=n), y)
    ds = Dataset(X, y, rng.random(n) + 0.05)
    solver = ContreeSolver(ds, min_leaf=min_leaf)
    solver._node_limit = 0
    stopped = solver.solve(5)
    assert stopped.status is Status.TIME_LIMIT and stopped.tree.depth <= 5
    assert stopped.stats["greedy_objective"] == pytest.approx(stopped.objective)
    assert 0.0 <= stopped.bound <= stopped.objective <= _cart_errors(ds, 5, min_leaf, X) + 1e-9


def test_a_tiny_contree_time_limit_still_beats_the_leaf_like_cart(rng):
    # past the deadline before the greedy tree's first depth-two subtree: CART's thresholds all the way down
    X = rng.random((400, 4)).round(3)
    y = ((X[:, 0] > 0.4) & (X[:, 1] < 0.7) | (X[:, 2] > 0.9)).astype(int) ^ (rng.random(400) < 0.05)
    ds = Dataset(X, y, rng.random(400) + 0.5)
    res = solve_contree(ds, 4, time_limit=1e-6)
    assert res.status is Status.TIME_LIMIT and res.tree.depth <= 4
    leaf = float(min(ds.weights[ds.y == 0].sum(), ds.weights[ds.y == 1].sum()))
    assert res.objective <= _cart_errors(ds, 4, 1, X) + 1e-9 < leaf


def _stops(ds, depth, **kw):
    """(optimum, stops): the search solved without a limit, and the same search stopped after 1, 2, 3, ...
    search nodes (10 % more each time) until it finishes, as (bound, objective, solver) per stop; each stop is
    checked: a verified tree (by the solver) and a bound between the optimum and the returned objective."""
    optimum = DPSolver(ds, **kw).solve(max_depth=depth)
    assert optimum.status is Status.OPTIMAL
    tol = 1e-9 * max(1.0, optimum.objective)
    stops, limit = [], 1
    while True:
        solver = DPSolver(ds, **kw)
        solver._params = solver._params._replace(node_limit=limit)
        res = solver.solve(max_depth=depth)
        if res.status is Status.OPTIMAL:
            assert res.objective == pytest.approx(optimum.objective)
            return optimum, stops
        assert res.status is Status.TIME_LIMIT
        assert res.bound <= optimum.objective + tol <= res.objective + 2 * tol
        stops.append((res.bound, res.objective, solver))
        limit += max(1, limit // 10)


@pytest.mark.parametrize("penalty, leaf_penalty, depth", [(0.0, None, 3), (0.0, None, 4), (2.0, None, 4),
                                                            (0.3, None, 5), (0.0, 0.01, 5), (0.0, 0.02, None)])
@pytest.mark.parametrize("weights", ["none", "integer", "real"])
@pytest.mark.parametrize("improve_nodes", [anytime.IMPROVE_NODES, 0])
def test_a_search_stopped_anywhere_returns_a_valid_bound(penalty, leaf_penalty, depth, weights, improve_nodes):
    # improve_nodes=0: the bound passes start right after the greedy tree, so stops fall into them too
    rng = np.random.default_rng(7)
    ds = _random_data(rng, 120, 9, 3 if weights == "integer" else 2, weights)
    with mock.patch.object(anytime, "IMPROVE_NODES", improve_nodes):
        optimum, stops = _stops(ds, depth, penalty=penalty, leaf_penalty=leaf_penalty)
    assert len(stops) >= 3
    if penalty > 0 or leaf_penalty is not None:
        # each split pays the penalty: the bound of every root split is above the equivalent points
        tol = 1e-9 * max(1.0, optimum.objective)
        assert all(bound > s._report(s.equivalent_points_weight) + tol for bound, _, s in stops)


@pytest.mark.parametrize("weights", ["none", "real"])
def test_bound_passes_raise_the_bound_of_a_stopped_search_before_the_proof(weights):
    # The same search stopped ever later: the bound never falls and the objective never rises. With bound passes,
    # stops before the proof have a bound between the equivalent points and the optimum; the search for the
    # optimum alone proves nothing at the root before it has visited the last root split.
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, size=(300, 24))
    y = (X[:, 0] ^ X[:, 1] ^ (X[:, 2] & X[:, 3]) ^ (rng.random(300) < 0.15)).astype(int)
    ds = Dataset(X, y, None if weights == "none" else rng.random(300) + 0.5)
    between = {}
    for passes in (True, False):
        with mock.patch.object(anytime, "IMPROVE_NODES", 64):
            optimum, stops = _stops(ds, 4, options=DPOptions(bound_passes=passes), threads=1)  # a later stop did more
        bounds, objectives = [b for b, _, _ in stops], [o for _, o, _ in stops]
        assert bounds == sorted(bounds) and objectives == sorted(objectives, reverse=True)
        eq = stops[0][2]._report(stops[0][2].equivalent_points_weight)
        between[passes] = [b for b in bounds if eq + 1e-9 < b < optimum.objective - 1e-9]
    assert len(between[True]) >= 5 and not between[False]


def _stopped_pareto(ds, depth, nodes):
    """solve_pareto's front search stopped after ``nodes`` subproblems (as the deadline stops it, repeatably; one
    thread, whose subproblems come in one order)."""
    front = ParetoSolver.front

    def stopped(self, *args, **kwargs):
        self._params = self._params._replace(node_limit=nodes)
        return front(self, *args, **kwargs)

    with mock.patch.object(ParetoSolver, "front", stopped):
        return solve_pareto(ds, depth, metric="f1", threads=1)


@pytest.mark.parametrize("engine", ["search", "pairwise", "contree", "pareto"])
def test_a_stopped_search_whose_tree_meets_its_bound_reports_it_optimal(engine):
    # Separable data: the first tree found has no error and the bound is 0, so a search stopped right after finding
    # it has proved it optimal; it said time_limit (objective = bound = 0). The stop reason still names the limit.
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(60, 6))
    ds = Dataset(X, X[:, 0] ^ X[:, 1])
    if engine == "search":
        solver = DPSolver(ds)
        solver._params = solver._params._replace(node_limit=0)
        res = solver.solve(max_depth=3)
    elif engine == "pairwise":
        res = solve_dp(ds, 3, time_limit=1e-9)  # past the deadline before the search's first node
        assert res.stats["engine"] == "pairwise"
    elif engine == "contree":
        Xn = rng.random((80, 3)).round(2)
        solver = ContreeSolver(Dataset(Xn, ((Xn[:, 0] > 0.5) ^ (Xn[:, 1] > 0.3)).astype(int)))
        solver._node_limit = 0
        res = solver.solve(3)
    else:
        res = _stopped_pareto(Dataset(X, X[:, 0] & X[:, 1]), 3, nodes=3)
    assert res.status is Status.OPTIMAL and res.stop_reason == "time_limit"
    assert res.objective == res.bound == 0.0 and res.gap == 0.0
    if engine != "contree":  # the DP's optimum has the fewest branch nodes; a stopped search did not prove that
        assert res.stats["fewest_nodes_proven"] is False


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


def _level(spec, rows, X, level):
    """(subtree, rows) of each node of a greedy spec ``level`` splits below its root (leaves above it end a path)."""
    if level == 0:
        return [(spec, rows)]
    if not isinstance(spec, tuple):
        return []
    right = X[rows, spec[0]] == 1
    return _level(spec[1], rows[~right], X, level - 1) + _level(spec[2], rows[right], X, level - 1)


def _parity_data(case):
    """A noisy parity of columns 0-2, which neither CART nor the two-level lookahead sees, and column 3 agreeing
    with the class on 80 % of the rows (a decoy both split on); weights 1-3; K = 2 or 3; seven columns."""
    rng = np.random.default_rng(50 + case)
    n, K = int(rng.integers(150, 250)), (2, 3)[case % 2]
    X = rng.integers(0, 2, size=(n, 7)).astype(np.uint8)
    y = (X[:, 0] ^ X[:, 1] ^ X[:, 2] ^ (rng.random(n) < 0.05)).astype(int)
    X[:, 3] = y ^ (rng.random(n) < 0.2)
    if K > 2:
        y = np.where(rng.random(n) < 0.1, rng.integers(0, K, size=n), y)
    return X, y, rng.integers(1, 4, size=n).astype(float), K


def test_at_depth_five_the_greedy_tree_ends_in_optimal_depth_three_subtrees():
    # At depth >= 5 each node three levels above the bottom takes the best of its subtree and every column with
    # optimal depth-two children (here by brute force): an optimal depth-three subtree of its rows, as the DP
    # solves it. Without that last pass, CART's splits (or the lookahead's) miss it on the parity data
    checked = improved = 0
    for case in range(4):
        X, y, w, K = _parity_data(case)
        n = len(y)
        min_leaf, penalty = (1, 3)[case % 2], (0.0, 1.0)[case // 2]

        def terminal(rows, r):
            return _exact(X, y, w, K, rows, r, min_leaf, penalty)  # noqa: B023 (called in this iteration)

        g = greedy_tree(X, y, w, K, 5, min_leaf, penalty, 0.0, terminal)
        assert g.depth <= 5 and g.cost == _routed(X, y, w, g.spec, np.arange(n), penalty)
        for spec, rows in _level(g.spec, np.arange(n), X, 2):
            optimum = solve_dp(Dataset(X[rows], y[rows], w[rows]), 3, min_leaf=min_leaf, penalty=penalty)
            assert _routed(X, y, w, spec, rows, penalty) == optimum.objective
            checked += 1
        before = greedy_tree(X, y, w, K, 5, min_leaf, penalty, 0.0, terminal, last_pass=False)
        assert g.cost <= before.cost
        improved += g.cost < before.cost
    assert checked >= 12 and improved >= 2, (checked, improved)


def test_the_last_pass_stops_at_the_deadline_keeping_the_subtrees_it_improved():
    # At depth 6 the depth-two solver runs out of time after its k-th call, for every k from the last call of the
    # two greedy trees to the last call of the pass. Every stopped pass returns a tree whose cost is what routing
    # gives, no worse for a later deadline; between the tree before the pass and the finished pass, a stop keeps
    # the subtrees improved by then
    X, y, w, K = _parity_data(2)
    calls, limit = [], [np.inf]

    def terminal(rows, r):
        calls.append(1)
        return None if len(calls) > limit[0] else _exact(X, y, w, K, rows, r, 1, 0.0)

    before = greedy_tree(X, y, w, K, 6, 1, 0.0, 0.0, terminal, last_pass=False)
    first = len(calls)
    full = greedy_tree(X, y, w, K, 6, 1, 0.0, 0.0, terminal)
    last = len(calls) - first
    costs = []
    for k in range(first, last + 1):
        calls.clear()
        limit[0] = k
        g = greedy_tree(X, y, w, K, 6, 1, 0.0, 0.0, terminal)
        assert g.depth <= 6 and g.cost == _routed(X, y, w, g.spec, np.arange(len(y)), 0.0)
        costs.append(g.cost)
    assert costs == sorted(costs, reverse=True)
    assert costs[0] == before.cost and costs[-1] == full.cost
    assert len(set(costs)) >= 3, costs  # before, some subtrees improved, all (here three, one after the other)


@pytest.mark.parametrize("case", [0, 2, 5])
def test_under_a_node_limit_the_greedy_tree_skips_the_last_pass(case):
    # the last pass trades branch nodes for errors (here 2-3 more nodes): with max_nodes at the tree before the pass,
    # a search stopped at its root still returns that tree; without a node limit that binds, the tree after the pass
    X, y, w, K = _parity_data(case)

    def terminal(rows, r):
        return _exact(X, y, w, K, rows, r, 1, 0.0)

    before, after = (greedy_tree(X, y, w, K, 5, 1, 0.0, 0.0, terminal, last_pass=p) for p in (False, True))
    assert after.cost < before.cost and after.nodes > before.nodes
    for max_nodes, expected in ((before.nodes, before), (31, after), (None, after)):  # 31 = 2^5 - 1 does not bind
        solver = DPSolver(Dataset(X, y, w))
        solver._params = solver._params._replace(node_limit=0)
        stopped = solver.solve(max_depth=5, max_nodes=max_nodes)
        assert stopped.status is Status.TIME_LIMIT
        assert (stopped.objective, stopped.tree.n_branch_nodes) == (expected.cost, expected.nodes)


@pytest.mark.parametrize("engine", ["compiled", "interpreted"])
def test_past_the_deadline_the_greedy_trees_depth_two_calls_stop_however_small_each_is(engine):
    # The last pass makes thousands of small depth-two calls. They count their work in one record, so the solver reads
    # the clock after a bounded number of them (compiled: 2^20 word operations, 12 calls here; interpreted: 2^12, the
    # first call), and every later call returns None at once. With a record per call (3.9 s for a 0.5 s limit), or
    # the interpreter's pair form not counting its work (13 s for 0.05 s), no call ever returned None.
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(1000, 100))
    y = (X[:, 0] ^ X[:, 1] ^ X[:, 2] ^ (rng.random(1000) < 0.2)).astype(int)
    s = DPSolver(Dataset(X, y), options=DPOptions(engine=engine))
    prm = s._params._replace(deadline=0.0)  # long past
    terminal = terminal_solver(s._data, s._scratch, prm, s._K + 1 + CNT_EQUIV, s._k.depth2.solve_terminal)
    answers = [terminal(np.arange(1000), 2) for _ in range(40)]
    assert None in answers
    first = answers.index(None)
    assert first <= 13 and answers[first:] == [None] * (40 - first)


@pytest.mark.parametrize("seed", range(6))
def test_with_a_deadline_cart_comes_first_and_each_of_its_splits_is_computed_once(seed):
    # A depth-two optimum cut short by the deadline falls back on CART's split of its node, and the lookahead tree
    # stops. With a deadline CART's tree is grown first, so nothing after the deadline computes a split again (on
    # 10^6 rows x 10 numeric columns each took about 0.5 s, and a 10 s limit ended at 15 s).
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(300, 12)).astype(np.uint8)
    y = (X[:, 0] & X[:, 1] | X[:, 2] ^ (rng.random(300) < 0.2)).astype(int)
    w = rng.random(300) + 0.5
    made = []

    def split(rows, Y, counts):
        made.append(len(rows))
        f = anytime._cart_split(X[rows], Y, counts, 1)
        return None if f < 0 else (f, X[rows, f] == 1)

    def route(f, rows):
        return X[rows, f] == 1

    def out_of_time(rows, r):
        return None

    def grown(**kw):
        made.clear()
        g = anytime.grow_greedy(y, w, 2, 4, 1, 0.0, 0.0, split, route, **kw)
        return g, len(made)

    cart, cart_splits = grown()
    late, late_splits = grown(terminal=out_of_time, deadline=0.0)
    assert (late.spec, late.cost, late_splits) == (cart.spec, cart.cost, cart_splits)


def test_bound_passes_run_only_where_a_limit_may_stop_the_search():
    # without a time limit the search runs to the optimum and nobody reads the passes' bounds: none run
    rng = np.random.default_rng(3)
    B = rng.integers(0, 2, size=(150, 10))
    ds = Dataset(B, B[:, 0] ^ B[:, 1] ^ (rng.random(150) < 0.2))
    X = rng.random((300, 4)).round(2)
    numeric = Dataset(X, (X[:, 0] + X[:, 1] > 1) ^ (X[:, 2] > 0.7))
    for solve, data in ((solve_dp, ds), (solve_contree, numeric)):
        free, limited = solve(data, 4), solve(data, 4, time_limit=3600.0)
        assert "greedy_objective" in free.stats and "bound_passes" not in free.stats
        assert "bound_passes" in limited.stats
        assert (free.objective, free.tree) == (limited.objective, limited.tree) and free.optimal
