"""Sensitivity/specificity targets and class weights on every formulation (odtmip.models.rates, Günlük's (15)):
each MIP's proven optimum == the DP's constrained optimum from the (fp, fn) front over the model's splits, with the
MIP solved without a warm start, so the two proofs are independent. Compare objectives, not trees."""

import pytest
from _data import mixed_data

from odtmip import Status
from odtmip.core.options import CLASS_WEIGHT
from odtmip.solving.check import check, dp_problem
from odtmip.solving.pipeline import solve_mip, solve_problem

pytestmark = pytest.mark.highs

TARGETS = [{"min_specificity": 0.8}, {"min_sensitivity": 0.9}, {"min_specificity": 0.6, "positive": 0},
           {"min_sensitivity": 1.0}]


@pytest.mark.parametrize("model", ["gunluk", "binoct", "oct"])
@pytest.mark.parametrize("target", TARGETS, ids=str)
@pytest.mark.parametrize("seed", [0, 1])
def test_mip_optimum_under_a_target_equals_the_dp(model, target, seed):
    data = mixed_data(seed, n=16, max_weight=None)
    depth = 2 if model != "binoct" or seed == 0 else 1
    problem = dp_problem(data, model, depth, **target)
    dp = solve_problem(problem, depth)
    mip = solve_mip(model, data, depth, warm_start="none", **target)
    assert dp.status is Status.OPTIMAL and mip.status is Status.OPTIMAL
    assert mip.objective == pytest.approx(problem.in_model_units(dp.objective))
    # the MIP's tree meets the target, counted by routing
    rates = dp.stats["fp_cap"], dp.stats["fn_cap"]
    positive = target.get("positive", 1)
    predicted = mip.tree.predict_index(data.X) == positive
    actual = data.y == positive
    assert (predicted & ~actual).sum() <= rates[0] and (~predicted & actual).sum() <= rates[1]


@pytest.mark.parametrize("model", ["gunluk", "binoct", "oct"])
@pytest.mark.parametrize("c", [CLASS_WEIGHT.low, 0.2, 5.0, CLASS_WEIGHT.high])
def test_mip_optimum_with_a_class_weight_equals_the_dp(model, c):
    # regression: BinOCT's DP problem over every midpoint (thresholds="all") left the class weight out; the ends of
    # the range hold too (beyond them HiGHS's claimed optima fail the check, and the DP's sums lose rows)
    data = mixed_data(0, n=16, max_weight=None)
    problem = dp_problem(data, model, 1, class_weight=c)
    dp = solve_problem(problem, 1)
    mip = solve_mip(model, data, 1, warm_start="none", class_weight=c)
    assert dp.status is Status.OPTIMAL and mip.status is Status.OPTIMAL
    assert mip.objective == pytest.approx(problem.in_model_units(dp.objective))


@pytest.mark.parametrize("model", ["gunluk", "binoct", "oct"])
def test_class_weight_and_the_check_verdict(model):
    data = mixed_data(2, n=16, max_weight=None)
    for options in ({"class_weight": 3.0}, {"min_sensitivity": 0.75}):
        report = check(data, model, 2, **options)
        assert report.verdict == "agree" and report.mip.optimal, (options, report.summary())
