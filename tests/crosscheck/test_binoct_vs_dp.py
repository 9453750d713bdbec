"""BinOCT / RBinOCT optimum == DP optimum over the same candidate thresholds (ARCHITECTURE.md, "Equivalences").

Units: the model's loss is weighted errors / W + λ · leaves; the DP over ``binoct.dp_equivalent`` minimises
weighted errors + λW · branch nodes, so loss = DP objective / W + λ (``binoct.dp_objective_to_loss``).
Compare objectives, not trees.
"""

import numpy as np
import pandas as pd
import pytest

from odtmip import Dataset, Status
from odtmip.dp import solve_contree, solve_dp
from odtmip.models import binoct
from odtmip.models.binoct import BinOCTOptions
from odtmip.solving.pipeline import solve_mip

pytestmark = pytest.mark.highs
SEEDS = range(4)


def mixed_data(seed, n=20, n_classes=2, weights=True, a_values=5):
    """Numeric columns with few distinct values, a categorical column, optional integer weights.

    Kept tiny on purpose: BinOCT's LP relaxation is weak (the bound starts at 0), so HiGHS proves optimality
    by enumeration; a few more rows or thresholds can cost minutes."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.integers(0, a_values, n), "b": rng.integers(0, 3, n) / 2,
                      "c": pd.Categorical(rng.choice(["u", "v", "w"], n))})
    score = (X["a"] > 2).astype(int) + (X["c"] == "v") + (rng.random(n) < 0.2)
    y = (score % n_classes).to_numpy()
    return Dataset(X, y, sample_weight=rng.integers(1, 4, n) if weights else None)


def dp_loss(data, depth, options):
    derived, penalty = binoct.dp_equivalent(data, options)
    dp = solve_dp(derived, max_depth=depth, penalty=penalty)
    assert dp.status is Status.OPTIMAL
    if options.thresholds == "all":  # the same splits: ConTree solves BinOCT's DP problem
        assert solve_contree(data, depth, penalty=penalty).objective == pytest.approx(dp.objective)
    return binoct.dp_objective_to_loss(dp.objective, data, options), dp


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("depth", [1, 2])
def test_binoct_equals_dp_minimum_misclassification(seed, depth):
    data = mixed_data(seed)
    mip = solve_mip("binoct", data, depth, warm_start="none")
    expected, dp = dp_loss(data, depth, BinOCTOptions())
    assert mip.status is Status.OPTIMAL
    assert mip.objective == pytest.approx(expected)
    assert data.misclassifications(mip.tree) == pytest.approx(dp.objective)  # λ = 0: loss · W = errors


def test_binoct_multiclass_equals_dp():
    data = mixed_data(7, n_classes=3)
    mip = solve_mip("binoct", data, 2)
    assert mip.status is Status.OPTIMAL
    assert mip.objective == pytest.approx(dp_loss(data, 2, BinOCTOptions())[0])


def test_binoct_depth3_equals_dp():
    data = mixed_data(3, n=12, weights=False, a_values=4)
    mip = solve_mip("binoct", data, 3)
    expected = dp_loss(data, 3, BinOCTOptions())[0]
    assert mip.status is Status.OPTIMAL
    assert mip.objective == pytest.approx(expected)
    assert expected == pytest.approx(1 / 12) and dp_loss(data, 2, BinOCTOptions())[0] > expected  # depth 3 pays


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_boundary_thresholds_equal_dp_over_the_same_set(seed):
    data = mixed_data(seed)
    opts = BinOCTOptions(thresholds="boundary")
    mip = solve_mip("binoct", data, 2, options=opts)
    assert mip.objective == pytest.approx(dp_loss(data, 2, opts)[0])


@pytest.mark.parametrize("seed", SEEDS[:2])
@pytest.mark.parametrize("lam", [0.01, 0.05, 0.15, 0.6])
def test_rbinoct_equals_dp_with_leaf_penalty(seed, lam):
    data = mixed_data(seed)
    opts = BinOCTOptions(leaf_penalty=lam)
    mip = solve_mip("binoct", data, 2, options=opts)
    expected, dp = dp_loss(data, 2, opts)
    assert mip.status is Status.OPTIMAL
    assert mip.objective == pytest.approx(expected)
    assert mip.tree.n_leaves >= dp.tree.n_leaves  # the DP returns an optimum with the fewest nodes


def test_single_leaf_optimum_needs_the_pass_through():
    data = mixed_data(0)
    lam = 0.6  # above the majority-class error fraction (<= 1/2): the single leaf is optimal
    opts = BinOCTOptions(leaf_penalty=lam)
    expected, dp = dp_loss(data, 2, opts)
    assert dp.tree.n_leaves == 1
    with_s = solve_mip("binoct", data, 2, options=opts)
    assert with_s.objective == pytest.approx(expected) and with_s.tree.n_leaves == 1
    without = solve_mip("binoct", data, 2, leaf_penalty=lam, root_pass_through=False)
    assert without.status is Status.OPTIMAL
    assert without.objective > expected + lam / 2  # at least one leaf more
    assert without.tree.n_leaves == 2


def test_objective_and_leaves_are_monotone_in_lambda():
    data = mixed_data(2)
    results = [solve_mip("binoct", data, 2, leaf_penalty=lam) for lam in (0.0, 0.02, 0.05, 0.1, 0.2, 0.5)]
    objectives = [r.objective for r in results]
    leaves = [r.tree.n_leaves for r in results]
    assert all(r.status is Status.OPTIMAL for r in results)
    assert objectives == sorted(objectives)
    assert leaves == sorted(leaves, reverse=True)
    assert leaves[-1] == 1 and leaves[0] > 1


@pytest.mark.parametrize("lam", [0.0, 0.05])
def test_dp_warm_start_is_accepted_with_the_dp_objective(lam):
    data = mixed_data(3)
    opts = BinOCTOptions(leaf_penalty=lam)
    expected, _ = dp_loss(data, 2, opts)
    r = solve_mip("binoct", data, 2, options=opts, warm_start="dp")
    assert r.stats["warm_start_accepted"] is True
    assert r.stats["warm_start_objective"] == pytest.approx(expected)
    assert r.stats["warm_start_loss"] == pytest.approx(expected)
    assert r.objective == pytest.approx(expected)
