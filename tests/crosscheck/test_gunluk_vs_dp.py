"""Günlük MIP optimum == DP optimum on the same problem (ARCHITECTURE.md, "Equivalences"); compare objectives."""

import numpy as np
import pandas as pd
import pytest

from odtmip import Dataset, Status
from odtmip.dp import solve_dp
from odtmip.models import gunluk
from odtmip.models.gunluk import GunlukOptions
from odtmip.solving.check import check
from odtmip.solving.pipeline import solve_mip

pytestmark = pytest.mark.highs
SEEDS = range(6)


def binary_data(seed, n=40, p=5):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, p))
    y = (X[:, 0] ^ X[:, 1] ^ (rng.random(n) < 0.2)).astype(int)
    return Dataset(X, y, sample_weight=rng.integers(1, 4, n))


def categorical_data(seed, n=40):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": pd.Categorical(rng.integers(0, 5, n).astype(str)),
                      "b": pd.Categorical(rng.integers(0, 4, n).astype(str)),
                      "c": rng.integers(0, 2, n)})
    y = (X["a"].isin(["1", "3"]) ^ (X["b"] == "2") ^ (rng.random(n) < 0.15)).astype(int)
    return Dataset(X, y)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("depth", [1, 2])
def test_binary_features_as_two_value_groups(seed, depth):
    data = binary_data(seed)
    mip = solve_mip("gunluk", data, max_depth=depth, warm_start="none")
    dp = solve_dp(data, max_depth=depth)
    assert mip.status is Status.OPTIMAL and dp.status is Status.OPTIMAL
    assert mip.objective == pytest.approx(dp.objective)


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_depth3_binary(seed):
    data = binary_data(seed, n=30, p=4)
    mip = solve_mip("gunluk", data, max_depth=3)
    assert mip.objective == pytest.approx(solve_dp(data, max_depth=3).objective)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("c", [2.0, 0.5])
def test_class_weight_is_a_dp_sample_weight(seed, c):
    data = binary_data(seed)
    mip = solve_mip("gunluk", data, max_depth=2, class_weight=c)
    weights = np.where(data.y == 0, c, 1.0) * data.weights
    assert mip.objective == pytest.approx(solve_dp(data.reweighted(weights), max_depth=2).objective)


@pytest.mark.parametrize("seed", SEEDS)
def test_categorical_groups_equal_dp_over_subsets(seed):
    data = categorical_data(seed)
    report = check(data, max_depth=2)
    assert report.relation == "equal" and report.verdict == "agree", report.summary()
    # the one-hot DP sees fewer splits (no pairs of a 5-level group), so it can only be worse
    assert solve_dp(data, max_depth=2).objective >= report.mip.objective


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("max_card", [1, 2])
def test_max_card_equals_dp_over_small_subsets(seed, max_card):
    data = categorical_data(seed)
    report = check(data, max_depth=2, max_card=max_card)
    assert report.verdict == "agree", report.summary()


@pytest.mark.parametrize("seed", SEEDS)
def test_ordinal_groups_equal_dp_on_bucket_thresholds(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=60)
    z = rng.normal(size=60)
    y = ((x > 0.3) ^ (z < -0.5) ^ (rng.random(60) < 0.1)).astype(int)
    data = Dataset(pd.DataFrame({"x": x, "z": z}), y, n_buckets=6)
    report = check(data, max_depth=2)
    assert report.verdict == "agree", report.summary()
    # both orientations matter: the decoded splits read as thresholds on the raw columns
    assert all(n.split.kind == "threshold" for n in report.mip.tree.nodes if not n.is_leaf)


@pytest.mark.parametrize("topology", ["depth2.5", "imbalanced"])
def test_unbalanced_topologies_are_bracketed_by_the_dp(topology):
    data = binary_data(3, n=30, p=4)
    report = check(data, topology=topology)
    assert report.relation == "bracket" and report.verdict == "agree", report.summary()
    assert report.dp_deep.objective <= report.mip.objective <= report.dp.objective


@pytest.mark.parametrize("seed", SEEDS)
def test_dp_warm_start_is_accepted_with_the_dp_objective(seed):
    data = categorical_data(seed)
    opts = GunlukOptions(topology="depth2")
    derived, shallow, _, _ = gunluk.dp_equivalent(data, opts)
    dp = solve_dp(derived, max_depth=shallow)
    r = solve_mip("gunluk", data, options=opts, warm_start="dp")
    assert r.stats["warm_start_accepted"] is True
    assert r.stats["warm_start_objective"] == pytest.approx(dp.objective)
    assert r.stats["warm_start_loss"] == pytest.approx(dp.objective)


def test_tic_tac_toe_depth2_agrees():
    from odtmip.core.datasets import load

    X, y = load("tic-tac-toe")
    report = check(Dataset(X, y), max_depth=2)
    assert report.verdict == "agree" and report.mip.objective == 282


def test_unbalanced_topology_starts_from_the_deep_dp_tree_when_it_fits():
    # planted tree of the depth2.5 shape: root x0; left: x1 then x2 / x3; right: x4
    rng = np.random.default_rng(7)
    X = rng.integers(0, 2, (60, 5))
    y = np.where(X[:, 0] == 0, np.where(X[:, 1] == 0, X[:, 2], 1 - X[:, 3]), X[:, 4])
    data = Dataset(X, y)
    derived, shallow, deep, _ = gunluk.dp_equivalent(data, GunlukOptions(topology="depth2.5"))
    assert (shallow, deep) == (2, 3) and solve_dp(derived, max_depth=deep).objective == 0
    r = solve_mip("gunluk", data, topology="depth2.5")
    assert r.stats["warm_start_loss"] == 0 and r.stats["warm_start_accepted"] is True
    assert r.status is Status.OPTIMAL and r.objective == 0


@pytest.mark.parametrize("target", [{"min_specificity": 0.8}, {}])
def test_feeding_dp_trees_during_the_search_keeps_the_optimum(target):
    data = categorical_data(1)
    fed = solve_mip("gunluk", data, max_depth=2, feed_dp=True, **target)
    plain = solve_mip("gunluk", data, max_depth=2, **target)
    assert fed.status is Status.OPTIMAL and fed.objective == pytest.approx(plain.objective)
