"""The DP's budgets: the time limit reaches inside the depth-two solver, and the memory limit guards the arrays
and the cache."""

import pytest

from odtmip.core.data import Dataset
from odtmip.core.exceptions import ResourceError
from odtmip.core.results import Status
from odtmip.dp import DPSolver, solve_dp
from odtmip.dp._kernels import _cache as kc
from odtmip.dp.solver import estimated_memory_gib


def _wide(rng, n=64, p=1500, weights=None):
    """Many distinct columns: the root's depth-two solve alone is ~p^2 word operations, beyond one clock read."""
    X = rng.integers(0, 2, size=(n, p))
    y = (X[:, 0] ^ X[:, 1] ^ (rng.random(n) < 0.2)).astype(int)
    return Dataset(X, y, weights)


def _assert_valid_stop(res, ds, status):
    assert res.status is status and res.stop_reason == status.value
    assert res.tree is not None and res.objective == ds.misclassifications(res.tree)
    assert 0 <= res.bound <= res.objective


@pytest.mark.parametrize("weighted", [False, True], ids=["bitset", "frequency"])
def test_the_deadline_stops_the_depth_two_solver_itself(rng, weighted):
    # At depth 2 the root is one depth-two solve: it only stops early (TIME_LIMIT) if its own loops read the
    # clock; run to the end, it would prove the optimum.
    ds = _wide(rng, weights=rng.integers(1, 4, size=64).astype(float) if weighted else None)
    res = solve_dp(ds, 2, time_limit=1e-6)
    _assert_valid_stop(res, ds, Status.TIME_LIMIT)
    assert res.objective == res.stats["greedy_objective"]  # nothing finished but the first incumbent


def test_a_stopped_depth_two_solve_leaves_the_solver_sound(rng):
    ds = _wide(rng, weights=rng.integers(1, 4, size=64).astype(float))
    solver = DPSolver(ds)
    cut = solver.solve(max_depth=2, time_limit=1e-6)
    full = solver.solve(max_depth=2)
    assert full.status is Status.OPTIMAL and full.objective == solve_dp(ds, 2).objective
    assert cut.bound <= full.objective <= cut.objective


def test_preprocessing_counts_against_the_time_limit(rng):
    res = solve_dp(_wide(rng), 2, time_limit=30.0)
    assert res.status is Status.OPTIMAL
    assert 0 < res.stats["preprocess_seconds"] <= res.seconds


def test_arrays_beyond_the_memory_limit_are_refused_with_the_estimate(rng):
    ds = _wide(rng)
    gib = estimated_memory_gib(64, 1500, 2, frequency=False)
    assert gib == pytest.approx((12 * 64 * 1500 + 8 * 1 * 1500 * 3) / 2**30)
    with pytest.raises(ResourceError, match=r"64 rows x 1,500 binary columns .* more than memory_limit = 1e-05 GiB"):
        solve_dp(ds, 2, memory_limit=1e-5)
    # frequency counting adds its two counters of all column pairs
    assert estimated_memory_gib(64, 1500, 2, frequency=True) - gib == pytest.approx(2 * 8 * 1500**2 * 3 / 2**30)


def test_a_cache_that_would_outgrow_the_memory_limit_stops_the_search(rng):
    X = rng.integers(0, 2, size=(200, 12))
    y = (X[:, 0] ^ X[:, 5] ^ (rng.random(200) < 0.2)).astype(int)
    ds = Dataset(X, y)
    optimum = solve_dp(ds, 4)
    solver = DPSolver(ds)
    solver._cache = kc.new_tables(solver._key_words, n_keys=2, n_entries=2)  # tiny: the search must grow them
    # room for the arrays and these tables, not for tables twice their size
    solver.memory_limit = (estimated_memory_gib(200, 12, 2, frequency=False)
                           + 1.5 * sum(a.nbytes for a in solver._cache) / 2**30)
    res = solver.solve(max_depth=4)
    _assert_valid_stop(res, ds, Status.MEMORY_LIMIT)
    assert res.stats["cache_grows"] == 0
    assert res.bound <= optimum.objective <= res.objective
    solver.memory_limit = None  # the same solver, unguarded, grows its cache and proves the optimum
    assert solver.solve(max_depth=4).objective == optimum.objective
