"""Search threads of the (fp, fn) front (the ``threads`` option of :class:`~odtmip.dp.pareto.ParetoSolver`): two
threads return the front of one, point for point with the same tree, a search stopped in two threads keeps trees
that route to their points and a valid bound, the store they share grows when full, and the option is checked.

No test here asserts a time or a speed-up."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtmip.core.data import Dataset
from odtmip.core.datasets import load
from odtmip.core.exceptions import OptionError
from odtmip.core.options import usable_cores
from odtmip.core.results import Status
from odtmip.dp import pareto, solve_dp
from odtmip.dp._kernels import _cache as kc
from odtmip.dp._kernels import _pareto as kp
from odtmip.dp.pareto import ParetoOptions, ParetoSolver, solve_pareto

from .strategies import tiny_data
from .test_pareto import check_points

SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
COMPILED = ParetoOptions(engine="compiled")


def _front(ds, threads, depth, **kw):
    return ParetoSolver(ds, options=COMPILED, threads=threads).front(max_depth=depth, **kw)


def points_of(front):
    """Each point's (fp, fn, nodes) and its tree as text."""
    return [(p.fp, p.fn, p.nodes, p.tree.to_text()) for p in front.points]


def assert_same(one, two):
    """The same status, points, trees and bound (the tie rule of one thread reproduced by two)."""
    assert one.stats["threads"] == 1 and two.stats["threads"] == 2
    assert one.status is two.status
    assert points_of(one) == points_of(two)
    assert np.array_equal(one.bound, two.bound)


@settings(max_examples=120, **SETTINGS)
@given(ds=tiny_data(max_rows=40, max_cols=7, classes=(2,)), depth=st.integers(3, 4),
       nodes=st.none() | st.integers(2, 15), data=st.data())
def test_two_threads_return_the_front_and_trees_of_one(ds, depth, nodes, data):
    W = float(ds.weights.sum())
    ceiling = data.draw(st.none() | st.lists(st.tuples(st.floats(0, W), st.floats(0, W)), min_size=1, max_size=3))
    one = _front(ds, 1, depth, max_nodes=nodes, ceiling=ceiling)
    two = _front(ds, 2, depth, max_nodes=nodes, ceiling=ceiling)
    assert_same(one, two)
    check_points(two, ds, 1)
    if min(depth, 7 if nodes is None else nodes) >= 3 and two.stats["features"] > 1:
        assert len(two.stats["thread_nodes"]) == 2 and two.stats["parallel_seconds"] >= 0


@pytest.mark.parametrize("name, depth", [("monk1", 3), ("tic-tac-toe", 3)])
def test_two_threads_return_the_front_of_one_on_bundled_data(name, depth):
    X, y = load(name)
    ds = Dataset(X, y)
    one, two = _front(ds, 1, depth), _front(ds, 2, depth)
    assert one.status is Status.OPTIMAL and len(one.points) > 2
    assert_same(one, two)
    assert sum(two.stats["thread_nodes"]) == two.stats["subproblems"]


def test_a_solver_called_again_in_two_threads_keeps_its_front():
    """The store the threads shared persists across calls (nothing of the root is stored): the second call finds the
    root's children in it and returns the same front and trees."""
    ds = noisy_pair(3)
    solver = ParetoSolver(ds, options=COMPILED, threads=2)
    first, again = solver.front(max_depth=4), solver.front(max_depth=4)
    assert points_of(first) == points_of(again) == points_of(_front(ds, 1, 4))
    assert again.stats["cache_hits"] > 0


def noisy_pair(seed, n=120, p=8):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, p))
    y = ((X[:, 0] & X[:, 1]) ^ X[:, 2] ^ (rng.random(n) < 0.2)).astype(int)
    return Dataset(X, y)


@pytest.mark.parametrize("depth", [3, 4])
def test_a_store_shared_by_threads_grows_when_full(monkeypatch, depth):
    ds = noisy_pair(1)
    one = _front(ds, 1, depth)
    small = kp.new_store
    monkeypatch.setattr(pareto.kp, "new_store", lambda words: small(words, n_keys=2, n_rows=2))
    solver = ParetoSolver(ds, options=COMPILED, threads=2)
    two = solver.front(max_depth=depth)
    assert two.status is Status.OPTIMAL
    assert_same(one, two)
    assert solver._store.cache.keys.shape[0] > 2 and solver._store.rows.shape[0] > 2
    assert solver._store.cache.used[kc.U_SHARED] == 0  # the lock is off once the threads are done


def assert_valid_stop(front, exact, ds, found_above=True):
    """Every point's tree routes to its pair and lies at or above the complete front ``exact`` (if
    ``found_above``); every point of ``exact`` is >= some point of the bound."""
    check_points(front, ds, 1)
    for fp, fn in front.pairs if found_above else ():
        assert any(a <= fp + 1e-9 and b <= fn + 1e-9 for a, b in exact)
    for fp, fn in exact:
        assert any(a <= fp + 1e-9 and b <= fn + 1e-9 for a, b in front.bound)


@pytest.mark.parametrize("depth", [3, 4])
def test_a_search_stopped_anywhere_in_two_threads_keeps_trees_and_a_valid_bound(depth):
    ds = noisy_pair(2, n=100, p=7)
    exact = _front(ds, 1, depth)
    stops, limit = 0, 1
    while True:
        solver = ParetoSolver(ds, options=COMPILED, threads=2)
        solver._params = solver._params._replace(node_limit=limit)
        front = solver.front(max_depth=depth)
        assert_valid_stop(front, exact.pairs, ds)
        if front.status is Status.OPTIMAL:
            assert points_of(front) == points_of(exact)
            break
        assert front.status is Status.TIME_LIMIT and front.stop_reason == "time_limit"
        assert front.stats["threads"] == 2
        stops += 1
        limit += max(1, limit // 3)
    assert stops >= 3


@settings(max_examples=40, **SETTINGS)
@given(ds=tiny_data(max_rows=30, max_cols=5, classes=(2,)), depth=st.integers(3, 4), limit=st.integers(1, 80))
def test_a_stopped_two_thread_search_with_any_weights_keeps_a_valid_bound(ds, depth, limit):
    solver = ParetoSolver(ds, options=COMPILED, threads=2)
    solver._params = solver._params._replace(node_limit=limit)
    front = solver.front(max_depth=depth)
    assert_valid_stop(front, _front(ds, 1, depth).pairs, ds)


def test_a_stop_with_a_full_store_keeps_a_valid_bound(monkeypatch):
    """A thread stopped by a full store as the node limit stops the search counts as having finished nothing."""
    ds = noisy_pair(4)
    exact = _front(ds, 1, 4).pairs
    small = kp.new_store
    monkeypatch.setattr(pareto.kp, "new_store", lambda words: small(words, n_keys=2, n_rows=2))
    for limit in (5, 20, 60, 200):
        solver = ParetoSolver(ds, options=COMPILED, threads=2)
        solver._params = solver._params._replace(node_limit=limit)
        assert_valid_stop(solver.front(max_depth=4), exact, ds)


def test_a_time_limit_stops_every_thread():
    rng = np.random.default_rng(9)
    X = rng.integers(0, 2, size=(400, 30))
    y = ((X[:, :6].sum(axis=1) + rng.integers(0, 3, 400)) % 2).astype(int)
    ds = Dataset(X, y)
    front = _front(ds, 2, 4, time_limit=0.05)
    assert front.status is Status.TIME_LIMIT and front.stats["threads"] == 2
    assert_valid_stop(front, _front(ds, 1, 3).pairs, ds, found_above=False)  # depth-3 trees are depth-4 trees


def test_two_class_objectives_search_the_front_in_the_threads_asked_for():
    ds = noisy_pair(5)
    for threads in (1, 2):
        res = solve_pareto(ds, 3, metric="f1", threads=threads, options=COMPILED)
        assert res.stats["threads"] == threads
        via_dp = solve_dp(ds, 3, metric="f1", threads=threads, pareto_options=COMPILED)
        assert via_dp.stats["threads"] == threads and via_dp.tree == res.tree
    assert math.isclose(res.objective, solve_pareto(ds, 3, metric="f1", threads=1, options=COMPILED).objective)


def test_the_interpreted_engine_searches_in_one_thread():
    ds = noisy_pair(6, n=40, p=5)
    front = ParetoSolver(ds, options=ParetoOptions(engine="interpreted"), threads=2).front(max_depth=3)
    assert front.stats["threads"] == 1 and "thread_nodes" not in front.stats
    assert points_of(front) == points_of(_front(ds, 1, 3))


def test_threads_default_to_the_usable_cores():
    assert ParetoSolver(noisy_pair(0)).threads == usable_cores()


@pytest.mark.parametrize("threads", [0, -1, "2", 1.5, True])
def test_invalid_threads_raise_one_line_option_errors(threads):
    ds = noisy_pair(0)
    for call in (lambda: ParetoSolver(ds, threads=threads), lambda: solve_pareto(ds, 3, threads=threads),
                 lambda: solve_dp(ds, 3, metric="f1", threads=threads)):
        with pytest.raises(OptionError, match="threads must be") as err:
            call()
        assert "\n" not in str(err.value)
