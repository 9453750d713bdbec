"""The one solve pipeline (odtmip.solving.pipeline): registry, warm starts, the DP solved once, the time budget."""

import math
import time
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import odtmip
from odtmip import Dataset, Status
from odtmip.core.datasets import load
from odtmip.core.exceptions import OdtmipError, OptionError, ResourceError
from odtmip.core.options import MEMORY_LIMIT, OPTIONS, memory_text
from odtmip.core.tree import Split, branch, leaf
from odtmip.models import FORMULATIONS, gunluk
from odtmip.models._highs import HighsOptions
from odtmip.models.formulation import DPProblem, estimated_memory_gib
from odtmip.solving.check import check
from odtmip.solving.pipeline import WARM_START_SHARE, Budget, dp_lower_bound, solve_mip, solve_problem

pytestmark = pytest.mark.highs


def small_data(seed=0, n=30):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x": rng.integers(0, 6, n).astype(float), "c": pd.Categorical(rng.integers(0, 3, n).astype(str))})
    y = ((X["x"] > 2) ^ (X["c"] == "1") ^ (rng.random(n) < 0.15)).astype(int)
    return Dataset(X, y)


def test_the_solver_table_names_every_formulation_of_the_registry():
    assert list(odtmip.SOLVERS) == ["dp", "contree", *FORMULATIONS]
    for name, f in FORMULATIONS.items():
        assert odtmip.SOLVERS[name].load().args == (name,)
        assert odtmip.SOLVERS[name].checked == (f.dp_problem is not None)
        assert OPTIONS[name] is f.options


@pytest.mark.parametrize("name, depth", [("gunluk", 2), ("binoct", 2), ("oct", 1)])
def test_check_solves_the_dp_once_and_starts_the_mip_from_it(monkeypatch, name, depth):
    import odtmip.solving.check
    import odtmip.solving.pipeline

    calls = []
    solve = odtmip.solving.pipeline.solve_problem

    def counted(problem, d, time_limit=None, memory_limit=MEMORY_LIMIT, threads=None):
        calls.append(d)
        return solve(problem, d, time_limit, memory_limit, threads)

    for module in (odtmip.solving.check, odtmip.solving.pipeline):
        monkeypatch.setattr(module, "solve_problem", counted)
    report = check(small_data(), name, max_depth=depth)
    assert report.verdict == "agree"
    assert calls == [depth]  # the MIP's warm start reused check's DP solution
    assert report.mip.stats["warm_start_accepted"] is True
    assert report.mip.stats["warm_start_loss"] == pytest.approx(report.mip.objective)


@pytest.mark.parametrize("name, loss", [("gunluk", 3.0), ("binoct", 3 / 8), ("oct", 1.0)])
def test_a_single_leaf_optimum_is_the_accepted_start(name, loss):
    # each combination of the two columns holds one row of each class, but for (1, 1), two of class 0: no split
    # saves an error, so the DP's optimum (fewest nodes) is the single leaf of class 0 (3 errors); Günlük refused it
    data = Dataset(np.repeat([[0, 0], [0, 1], [1, 0], [1, 1]], 2, axis=0), [0, 1, 0, 1, 0, 1, 0, 0])
    dp = odtmip.solve(data, "dp", max_depth=2)
    assert dp.tree.n_leaves == 1 and dp.objective == 3
    res = solve_mip(name, data, 2)
    assert res.stats["warm_start_accepted"] is True and res.stats["warm_start_loss"] == pytest.approx(loss)
    assert res.status is Status.OPTIMAL and res.objective == pytest.approx(loss)


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


@pytest.mark.parametrize("name", ["gunluk", "binoct", "oct"])
def test_a_model_that_cannot_be_built_in_the_time_left_is_not_built(monkeypatch, name):
    # a build takes (here) an hour per nonzero: the DP start is the answer, with the time limit's status
    import odtmip.solving.pipeline

    monkeypatch.setattr(odtmip.solving.pipeline, "BUILD_SECONDS_PER_NONZERO", 3600.0)
    _unbuildable(monkeypatch, name)
    data = Dataset(*load("monk1"))
    result = solve_mip(name, data, 2, time_limit=60.0)
    dp = FORMULATIONS[name].dp_problem(data, 2, FORMULATIONS[name].make_options(2, None, {}))
    optimum = dp.in_model_units(solve_problem(dp, 2).objective)
    assert result.stop_reason == "time_limit" and result.objective == pytest.approx(optimum, abs=1e-9)
    # the DP's bound of the model's own problem proves the start optimal (OCT's DP problem is not exact)
    proven = result.stats["bound_source"] == "dp"
    assert proven == (name != "oct") and result.optimal == proven
    assert result.bound == (result.objective if proven else 0.0)
    assert "too little to build the model" in result.stats["incumbent"]


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
    from odtmip.core.exceptions import DataError

    X = np.array([[1.0], [np.nan], [3.0], [4.0], [2.0], [5.0]])
    data = Dataset(X, [0, 1, 0, 1, 1, 0])
    with pytest.raises(DataError, match=f"{name} reads numeric columns as numbers.*column 'x0' has some"):
        solve_mip(name, data, 1)


@pytest.mark.parametrize("name, fallback", [("oct", "cart"), ("gunluk", None)])
def test_a_dp_start_over_the_memory_limit_is_left_out_not_fatal(monkeypatch, name, fallback):
    import odtmip.solving.pipeline

    def refuse(problem, depth, time_limit=None, memory_limit=None, threads=None):
        raise ResourceError("the DP on 30 rows x 5 binary columns would take about 9.0 GiB, more than ...")

    monkeypatch.setattr(odtmip.solving.pipeline, "solve_problem", refuse)
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

    def stopped_at_once(model, options, warm_start=None, more_starts=(), progress_units=None):
        result = run(model, options)  # no start given to HiGHS
        return replace(result, status=Status.TIME_LIMIT, stop_reason="time_limit", has_solution=False,
                       objective=None, bound=None)

    monkeypatch.setattr(_highs, "solve", stopped_at_once)
    data = small_data()
    res = solve_mip("gunluk", data, max_depth=2, time_limit=30)
    assert res.stop_reason == "time_limit" and res.tree is not None
    assert res.objective == res.stats["warm_start_loss"] == data.misclassifications(res.tree)
    assert res.stats["incumbent"].startswith("the warm start")
    # the DP proved its start optimal for the same problem (balanced depth 2, the model's splits)
    assert res.status is Status.OPTIMAL and res.bound == res.objective and res.stats["bound_source"] == "dp"
    unproven = solve_mip("gunluk", data, max_depth=2, time_limit=30, dp_bound=False)
    assert unproven.status is Status.TIME_LIMIT and unproven.bound == 0.0 and unproven.gap == 1.0
    assert unproven.stats["bound_source"] == "trivial"
    monkeypatch.undo()
    assert res.objective == solve_mip("gunluk", data, max_depth=2).objective


def test_a_stopped_model_reports_the_dps_bound_of_the_same_problem():
    # HiGHS stopped before its first node had no bound: the call reported -inf (JSON null, gap inf) although the DP
    # start had proved its tree optimal for the same problem (balanced depth 3 on the model's splits: 216 errors)
    data = Dataset(*load("tic-tac-toe"))
    stopped = HighsOptions(extra={"mip_max_nodes": 0})
    res = solve_mip("gunluk", data, 3, highs=stopped)
    assert res.stop_reason == "node_limit" and res.stats["bound_source"] == "dp"
    assert res.objective == res.bound == odtmip.solve(data, "dp", max_depth=3).objective == 216
    assert res.status is Status.OPTIMAL and res.gap == 0.0
    alone = solve_mip("gunluk", data, 3, highs=stopped, dp_bound=False)  # what the model proved by itself: nothing
    assert alone.status is Status.TIME_LIMIT and alone.bound == 0.0 and alone.gap == 1.0
    # a shallower tree than the topology's deepest leaf bounds nothing: depth2.5's DP bound is the deep one only
    bracket = DPProblem(data, 2, 3)
    assert dp_lower_bound([(bracket, 2, odtmip.solve(data, "dp", max_depth=2))]) is None
    assert dp_lower_bound([(replace(bracket, exact=False), 3, odtmip.solve(data, "dp", max_depth=3))]) is None


def test_a_model_proved_infeasible_has_an_infinite_bound(monkeypatch):
    # as the DP reports a problem no tree meets: no tree, bound inf (JSON null); it was -inf
    from odtmip.models import _highs

    run = _highs.solve

    def infeasible(model, options, warm_start=None, more_starts=(), progress_units=None):
        return replace(run(model, options), status=Status.INFEASIBLE, stop_reason="infeasible", has_solution=False,
                       objective=None, bound=None)

    monkeypatch.setattr(_highs, "solve", infeasible)
    res = solve_mip("gunluk", small_data(), 1)
    assert res.status is Status.INFEASIBLE and res.tree is None and res.bound == math.inf
    assert res.stats["bound_source"] == "highs" and res.gap == math.inf


def _model_bound(name, m, loss):
    """The objective value of ``name``'s model ``m`` whose loss is ``loss``."""
    return gunluk.loss_offset(m) - loss if name == "gunluk" else loss


@pytest.mark.parametrize("name, options, floor", [("gunluk", {}, 0.0), ("binoct", {"leaf_penalty": 0.05}, 0.05),
                                                  ("oct", {"alpha": 0.1}, 0.0)])
@pytest.mark.parametrize("weak", [-2874.0, None])
def test_no_bound_is_below_the_losss_trivial_bound(monkeypatch, name, options, floor, weak):
    # a stopped Günlük run reported bound -2874 and gap 14.3 for a count of errors; without a bound, -inf. Every tree
    # costs at least the trivial bound: 0 errors (Günlük, OCT's errors / L_hat + alpha x splits), and lambda for
    # RBinOCT's one leaf at least
    from odtmip.models import _highs

    run, units = _highs.solve, []

    def weak_bound(model, options, warm_start=None, more_starts=(), progress_units=None):
        result = run(model, options, warm_start)
        units.append((progress_units, model))
        dual = None if weak is None else _model_bound(name, model, weak)
        return replace(result, status=Status.TIME_LIMIT, stop_reason="time_limit", bound=dual,
                       trajectory=[(0.1, result.objective, -math.inf if dual is None else dual)])

    monkeypatch.setattr(_highs, "solve", weak_bound)
    data = small_data(2)
    res = solve_mip(name, data, 2, warm_start=data.new_tree(leaf(0)), **options)  # no DP solve: no DP bound
    assert res.status is Status.TIME_LIMIT and res.bound == floor and res.stats["bound_source"] == "trivial"
    assert 0.0 < res.gap <= 1.0
    ((t, best, bound),) = res.stats["trajectory"]  # HiGHS's incumbent in loss units, up to its round-off
    assert (t, bound) == (0.1, None if weak is None else floor) and best == pytest.approx(res.objective)
    (shown, model), = units
    best, bound = shown(_model_bound(name, model, 7.0), _model_bound(name, model, -2874.0))
    assert best == pytest.approx(7.0) and bound == floor  # the progress lines: loss units, the same floor


@pytest.mark.parametrize("threads", [1, 2, None])
def test_the_dp_starts_and_checks_search_in_highs_threads(monkeypatch, threads):
    # concurrent runs (compare's jobs) give HiGHS cores // jobs threads each; the DP solves of a run take as many
    from odtmip.solving import pipeline

    seen = []
    real = pipeline.solve

    def spy(data, solver, **options):
        seen.append((solver, options.get("threads", "absent")))
        return real(data, solver, **options)

    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, size=(60, 5))
    data = Dataset(X, X[:, 0] ^ X[:, 1] ^ (rng.random(60) < 0.1))
    optimum = odtmip.solve(data, "dp", max_depth=2, threads=1).objective
    monkeypatch.setattr(pipeline, "solve", spy)
    res = solve_mip("binoct", data, 2, highs=HighsOptions(threads=threads))
    assert res.status is Status.OPTIMAL and res.objective == pytest.approx(optimum / 60)
    report = check(data, "binoct", 2, highs=HighsOptions(threads=threads))
    assert report.verdict == "agree"
    assert seen and {t for _, t in seen} == {threads}, seen
