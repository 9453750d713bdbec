"""The one solve pipeline (odtmip.pipeline): registry, warm starts, the DP solved once, the time budget."""

import math
import time
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import odtmip
from odtmip import Dataset, Status
from odtmip.check import check
from odtmip.datasets import load
from odtmip.exceptions import OdtmipError, OptionError, ResourceError
from odtmip.models import FORMULATIONS
from odtmip.models.formulation import MEMORY_LIMIT, DPProblem, estimated_memory_gib
from odtmip.options import memory_text
from odtmip.pipeline import WARM_START_SHARE, Budget, solve_mip
from odtmip.tree import Split, branch, leaf

pytestmark = pytest.mark.highs


def small_data(seed=0, n=30):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x": rng.integers(0, 6, n).astype(float), "c": pd.Categorical(rng.integers(0, 3, n).astype(str))})
    y = ((X["x"] > 2) ^ (X["c"] == "1") ^ (rng.random(n) < 0.15)).astype(int)
    return Dataset(X, y)


def test_every_solver_name_comes_from_the_registry():
    assert list(odtmip.SOLVERS) == ["dp", "contree", *FORMULATIONS]
    for name, f in FORMULATIONS.items():
        assert odtmip.SOLVERS[name].load() is f.solve
        assert odtmip.SOLVERS[name].summary == f.summary


@pytest.mark.parametrize("name, depth", [("gunluk", 2), ("binoct", 2), ("oct", 1)])
def test_check_solves_the_dp_once_and_starts_the_mip_from_it(monkeypatch, name, depth):
    calls = []
    solve = DPProblem.solve

    def counted(self, d, time_limit=None):
        calls.append(d)
        return solve(self, d, time_limit)

    monkeypatch.setattr(DPProblem, "solve", counted)
    report = check(small_data(), name, max_depth=depth)
    assert report.verdict == "agree"
    assert calls == [depth]  # the MIP's warm start reused check's DP solution
    assert report.mip.stats["warm_start_accepted"] is True
    assert report.mip.stats["warm_start_loss"] == pytest.approx(report.mip.objective)


@pytest.mark.parametrize("name, depth", [("gunluk", 2), ("binoct", 2), ("oct", 1)])
def test_fed_dp_trees_and_no_start_give_the_same_optimum(name, depth):
    data = small_data(1)
    started = solve_mip(name, data, depth)
    fed = solve_mip(name, data, depth, warm_start="none", feed_dp=True)
    cold = solve_mip(name, data, depth, warm_start="none")
    assert started.status is fed.status is cold.status is Status.OPTIMAL
    assert started.objective == pytest.approx(fed.objective) and fed.objective == pytest.approx(cold.objective)
    assert cold.stats["warm_start_given"] is False and cold.stats["warm_start_accepted"] is None


def test_a_given_tree_that_does_not_fit_is_an_error_and_one_that_fits_is_the_start():
    data = small_data()
    deep = branch(Split("threshold", (0,), threshold=2.5), leaf(0),
                  branch(Split("threshold", (0,), threshold=4.5), leaf(1), leaf(0)))
    with pytest.raises(OptionError, match="does not fit the binoct model"):
        solve_mip("binoct", data, 1, warm_start=data.new_tree(deep))
    stump = data.new_tree(branch(Split("threshold", (0,), threshold=2.5), leaf(0), leaf(1)))
    result = solve_mip("binoct", data, 1, warm_start=stump)
    assert result.stats["warm_start"] == "tree" and result.stats["warm_start_accepted"] is True
    assert result.stats["warm_start_loss"] == pytest.approx(data.misclassifications(stump) / data.n_samples)


def test_unknown_formulation_and_warm_start_are_named():
    with pytest.raises(OptionError, match="unknown MIP formulation 'cart'"):
        solve_mip("cart", small_data(), 2)
    with pytest.raises(OptionError, match="warm_start must be 'dp', 'none'"):
        solve_mip("binoct", small_data(), 2, warm_start="cart")


def test_the_budget_splits_one_time_limit():
    budget = Budget(8.0)
    part = budget.part(WARM_START_SHARE)
    assert part.seconds == pytest.approx(2.0, abs=0.01) and part.deadline <= budget.deadline
    assert Budget(None).left() is None and Budget(None).part(0.25).left() is None
    late = Budget(0.01)
    time.sleep(0.02)
    assert late.left() == 0.0 and late.part(0.5).seconds == 0.0


def test_the_time_limit_covers_the_whole_call():
    # OCT on 300 rows at depth 3 is far from proven in 3 s: the call stops at the limit with the best tree so far,
    # an honest status and a valid bound (wall times are measured in benchmarks, never asserted)
    rng = np.random.default_rng(5)
    X = rng.integers(0, 10, size=(300, 4)).astype(float)
    y = (X[:, 0] + X[:, 1] * X[:, 2] / 5 + rng.normal(scale=2, size=300) > 8).astype(int)
    data = Dataset(X, y)
    result = solve_mip("oct", data, 3, time_limit=3.0)
    assert result.status is Status.TIME_LIMIT and result.tree is not None
    assert result.bound <= result.objective


def _never_built(*args):
    raise AssertionError("the model was built")


def _unbuildable(monkeypatch, name):
    """Make building ``name``'s model fail, so that a refusal is seen to come before the build."""
    monkeypatch.setitem(FORMULATIONS, name, replace(FORMULATIONS[name], build=_never_built))


def _estimate(name, data, depth):
    f = FORMULATIONS[name]
    size = f.size(data, depth, f.make_options(depth, None, dict(f.fixed)))
    return size, estimated_memory_gib(size)


def test_a_model_over_the_memory_limit_is_refused_before_it_is_built(monkeypatch):
    data = small_data()
    size, gib = _estimate("gunluk", data, 2)
    _unbuildable(monkeypatch, "gunluk")
    with pytest.raises(ResourceError) as err:
        odtmip.solve(data, "gunluk", max_depth=2, memory_limit=1e-6)
    message = str(err.value)
    assert isinstance(err.value, OdtmipError) and isinstance(err.value, MemoryError) and "\n" not in message
    assert f"about {memory_text(gib)} ({size['n_constraints']:,} rows" in message and " MiB (" in message  # not 0.0 GiB
    assert f"{size['n_nonzeros']:,} nonzeros), more than memory_limit = 1e-06 GiB" in message
    assert "smaller depth" in message and "raise memory_limit" in message


def test_the_estimate_is_in_the_stats_and_none_turns_the_guard_off(monkeypatch):
    data = small_data()
    result = solve_mip("binoct", data, 1)
    assert result.stats["estimated_memory_gib"] == pytest.approx(_estimate("binoct", data, 1)[1])
    monkeypatch.setattr("odtmip.models.formulation.BYTES_PER_NONZERO", 2**50)  # too large for any limit
    with pytest.raises(ResourceError, match=f"more than memory_limit = {MEMORY_LIMIT:g} GiB"):
        solve_mip("binoct", data, 1)
    assert solve_mip("binoct", data, 1, memory_limit=None).status is Status.OPTIMAL


@pytest.mark.parametrize("name, depth", [("binoct", 12), ("oct", 10)])
def test_monk1_at_a_large_depth_is_refused_with_the_default_limit(monkeypatch, name, depth):
    # issue #11: binoct at depth 12 peaked at 15 GB on a 24 GB machine, OCT at depth 10 passed 6 GB in seconds
    data = Dataset(*load("monk1"))
    size, gib = _estimate(name, data, depth)
    if gib <= MEMORY_LIMIT:
        pytest.skip(f"{name} depth {depth} fits this machine's default limit: {gib:.1f} <= {MEMORY_LIMIT} GiB")
    _unbuildable(monkeypatch, name)
    with pytest.raises(ResourceError, match=rf"more than memory_limit = {MEMORY_LIMIT:g} GiB"):
        odtmip.solve(data, name, max_depth=depth)


@pytest.mark.parametrize("name", ["binoct", "oct", "oct-h"])
def test_models_that_read_numbers_refuse_missing_values(name):
    from odtmip.exceptions import DataError

    X = np.array([[1.0], [np.nan], [3.0], [4.0], [2.0], [5.0]])
    data = Dataset(X, [0, 1, 0, 1, 1, 0])
    with pytest.raises(DataError, match=f"{name} reads numeric columns as numbers.*column 'x0' has some"):
        solve_mip(name, data, 1)


@pytest.mark.parametrize("name, fallback", [("oct", "cart"), ("gunluk", None)])
def test_a_dp_start_over_the_memory_limit_is_left_out_not_fatal(monkeypatch, name, fallback):
    def refuse(self, depth, time_limit=None, memory_limit=None):
        raise ResourceError("the DP on 30 rows x 5 binary columns would take about 9.0 GiB, more than ...")

    monkeypatch.setattr(DPProblem, "solve", refuse)
    data = small_data()
    res = solve_mip(name, data, max_depth=1)
    assert res.status is Status.OPTIMAL  # the MIP itself still runs and proves its optimum
    assert res.stats["warm_start_note"].startswith("DP start left out: the DP on 30 rows")
    assert res.stats["dp_solves"] == 0
    monkeypatch.undo()
    assert res.objective == pytest.approx(solve_mip(name, data, max_depth=1).objective)
    if fallback == "cart":
        assert res.stats["warm_start_note"].endswith("; started from CART instead")
        assert res.stats["warm_start_loss"] == pytest.approx(solve_mip(name, data, max_depth=1, warm_start="cart")
                                                              .stats["warm_start_loss"])
    else:
        assert res.stats["warm_start_loss"] is None


def test_the_warm_start_tree_is_returned_when_highs_stops_before_holding_a_solution(monkeypatch):
    from odtmip.models import _highs

    run = _highs.solve

    def stopped_at_once(model, options, warm_start=None, more_starts=()):
        result = run(model, options)  # no start given to HiGHS
        return replace(result, status=Status.TIME_LIMIT, stop_reason="time_limit", has_solution=False,
                       objective=None, bound=None)

    monkeypatch.setattr(_highs, "solve", stopped_at_once)
    data = small_data()
    res = solve_mip("gunluk", data, max_depth=2, time_limit=30)
    assert res.status is Status.TIME_LIMIT and res.tree is not None
    assert res.objective == res.stats["warm_start_loss"] == data.misclassifications(res.tree)
    monkeypatch.undo()
    assert res.objective == solve_mip("gunluk", data, max_depth=2).objective  # the DP start is optimal here
    assert res.bound == -math.inf or res.bound <= res.objective
    assert res.stats["incumbent"].startswith("the warm start")
