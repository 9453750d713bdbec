"""odtmip.solving.check on every model: the verdict, the units conversion, and a disagreement it must report."""

import time

import numpy as np
import pandas as pd
import pytest

from odtmip import Dataset, Status
from odtmip.core.exceptions import OptionError
from odtmip.core.results import SolveResult
from odtmip.solving.check import _verdict, check, dp_problem
from odtmip.solving.pipeline import solve_problem

pytestmark = pytest.mark.highs


def small_data(seed=0, n=24):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x": rng.integers(0, 5, n).astype(float), "c": pd.Categorical(rng.integers(0, 3, n).astype(str))})
    y = ((X["x"] > 2) ^ (X["c"] == "1") ^ (rng.random(n) < 0.15)).astype(int)
    return Dataset(X, y, sample_weight=rng.integers(1, 3, n))


@pytest.mark.parametrize("model, options", [
    ("gunluk", {}), ("binoct", {}), ("binoct", {"leaf_penalty": 0.05}), ("binoct", {"leaf_penalty": 0.6}),
    ("oct", {}), ("oct", {"alpha": 0.1, "min_leaf": 3}),
])
def test_models_agree_with_the_dp(model, options):
    report = check(small_data(), model, max_depth=2 if model != "oct" else 1, **options)
    assert report.verdict == "agree", report.summary()
    assert report.mip.objective == pytest.approx(report.problem.in_model_units(report.dp.objective))


def test_a_model_tree_better_than_the_dp_optimum_is_a_disagreement():
    data = small_data()
    problem = dp_problem(data, "binoct", max_depth=1)
    dp = solve_problem(problem, 1, None)
    fake = SolveResult("binoct", Status.OPTIMAL, "solved", None, problem.in_model_units(dp.objective) - 0.1,
                       0.0, 0.0)
    assert _verdict(fake, dp, dp, problem) == "disagree"
    worse = SolveResult("binoct", Status.OPTIMAL, "solved", None, problem.in_model_units(dp.objective) + 0.1,
                        0.0, 0.0)
    assert _verdict(worse, dp, dp, problem) == "disagree"  # a proven optimum worse than a DP tree
    unproven = SolveResult("binoct", Status.TIME_LIMIT, "time_limit", None, worse.objective, 0.0, 0.0)
    assert _verdict(unproven, dp, dp, problem) == "unproven"


def test_check_rejects_what_it_cannot_compare():
    data = small_data()
    with pytest.raises(OptionError, match="supports the models"):
        check(data, "cart", max_depth=2)
    with pytest.raises(OptionError, match="needs a depth"):
        check(data, "binoct")
    with pytest.raises(OptionError, match="no DP equivalent"):
        dp_problem(data, "oct", max_depth=1, hyperplanes=True)
    with pytest.raises(OptionError, match="sensitivity/specificity"):
        check(data, "gunluk", max_depth=2, min_specificity=0.9)


def test_compile_time_is_reported_and_counted_in_every_solve(monkeypatch):
    # The DP's kernels are compiled or loaded once per process (odtmip.dp.warm_up); a check, a MIP with the DP's warm
    # start and the comparison's row report that as compile_seconds, and count it in the call's seconds: a time
    # limit covers the whole call. A stand-in warm_up takes and reports a load of a known length the first time it
    # is called, as the real one does.
    import odtmip.dp.pairwise
    import odtmip.dp.solver
    from odtmip.dp._kernels import _interpreted
    from odtmip.solving.compare import COLUMNS, Cell, Variant, solve_cell
    from odtmip.solving.pipeline import solve_mip

    compile_seconds = 0.3

    def a_new_process():
        calls = iter([compile_seconds])

        def warm_up():
            seconds = next(calls, 0.0)
            time.sleep(seconds)
            return seconds

        monkeypatch.setattr(odtmip.dp.solver, "warm_up", warm_up)

    monkeypatch.setattr(odtmip.dp.pairwise, "suits", lambda *args: False)  # the compiled search, also for small data
    monkeypatch.setattr(_interpreted, "compiled_ready", lambda *kernels, warm_up=None: True)  # ... on disk: loaded
    a_new_process()
    mip = solve_mip("gunluk", small_data(), max_depth=1)
    assert mip.stats["compile_seconds"] == compile_seconds and mip.stats["dp_solves"] >= 1
    assert mip.seconds >= compile_seconds  # the load is the call's time too
    assert "compile_seconds" not in solve_mip("gunluk", small_data(), max_depth=1, warm_start="none").stats
    a_new_process()
    report = check(small_data(), "gunluk", max_depth=1)
    assert report.compile_seconds == compile_seconds  # the DP's solve loaded them; the MIP reused its trees
    assert report.dp.seconds >= compile_seconds
    assert "compiled (or loaded from numba's cache) in 0.30 s" in report.summary()
    a_new_process()
    row, _, _ = solve_cell(Cell("small", small_data(), "-", Variant("gunluk", {}), depth=1, warm_start="dp", seed=None,
                                time_limit=None))
    assert "compile_seconds" in COLUMNS and row["compile_seconds"] == compile_seconds
    a_new_process()  # kernels not compiled: interpreted, nothing compiled or loaded (no second process here)
    monkeypatch.setattr(_interpreted, "compiled_ready", lambda *kernels, warm_up=None: False)
    monkeypatch.setattr(_interpreted, "compile_in_background", lambda warm_up, one_core=False: None)
    monkeypatch.setattr(_interpreted, "_SPENT", {})
    assert "compile_seconds" not in solve_mip("gunluk", small_data(), max_depth=1).stats
