"""OCT MIP optimum x L_hat == DP optimum over all midpoint thresholds == ConTree on the raw columns; compare
objectives, not trees.

The DP side is :func:`odtmip.models.oct.dp_equivalent`: every midpoint threshold of each numeric column, one
``column in {v}`` per categorical level, penalty alpha x L_hat per branch node, min_leaf = N_min. ConTree searches
the same splits without building those columns.
"""

import numpy as np
import pandas as pd
import pytest
from _data import mixed_data as shared_mixed_data

from odtmip import Dataset, Status
from odtmip.dp import solve_contree, solve_dp
from odtmip.models import oct as O
from odtmip.models.oct import OCTOptions
from odtmip.solving.pipeline import solve_mip

pytestmark = pytest.mark.highs


def mixed_data(seed, n=24, n_classes=2):
    return shared_mixed_data(seed, n, n_classes, max_weight=4)


def dp_value(data, depth, options):
    """The DP optimum divided by L_hat: the OCT optimum it must equal."""
    derived, penalty, min_leaf = O.dp_equivalent(data, options)
    dp = solve_dp(derived, max_depth=depth, penalty=penalty, min_leaf=min_leaf)
    assert dp.status is Status.OPTIMAL
    assert solve_contree(data, depth, min_leaf, penalty).objective == pytest.approx(dp.objective)
    return dp.objective / O.baseline_error(data)


@pytest.mark.parametrize("seed", range(5))
def test_min_misclassification_depth1(seed):
    data = mixed_data(seed, n=30)
    r = solve_mip("oct", data, max_depth=1, warm_start="none")
    assert r.status is Status.OPTIMAL
    assert r.objective == pytest.approx(dp_value(data, 1, OCTOptions()))
    assert r.objective * O.baseline_error(data) == pytest.approx(data.misclassifications(r.tree))


@pytest.mark.parametrize("seed, warm_start", [(0, "none"), (1, "dp")])
def test_min_misclassification_depth2(seed, warm_start):
    data = mixed_data(seed, n=16)
    r = solve_mip("oct", data, max_depth=2, warm_start=warm_start)
    assert r.status is Status.OPTIMAL
    assert r.objective == pytest.approx(dp_value(data, 2, OCTOptions()))


def test_three_classes():
    data = mixed_data(2, n=18, n_classes=3)
    r = solve_mip("oct", data, max_depth=2, warm_start="cart")
    assert r.status is Status.OPTIMAL
    assert r.objective == pytest.approx(dp_value(data, 2, OCTOptions()))


@pytest.mark.parametrize("seed, alpha, min_leaf", [(3, 0.05, 1), (4, 0.1, 3), (5, 0.02, 5), (6, 0.3, 2)])
def test_alpha_and_min_leaf_depth1(seed, alpha, min_leaf):
    data = mixed_data(seed, n=30)
    opts = OCTOptions(alpha=alpha, min_leaf=min_leaf)
    r = solve_mip("oct", data, max_depth=1, options=opts, warm_start="none")
    assert r.status is Status.OPTIMAL
    assert r.objective == pytest.approx(dp_value(data, 1, opts))


def test_alpha_and_min_leaf_depth2():
    data = mixed_data(7, n=16)
    opts = OCTOptions(alpha=0.04, min_leaf=3)
    r = solve_mip("oct", data, max_depth=2, options=opts, warm_start="none")
    assert r.status is Status.OPTIMAL
    assert r.objective == pytest.approx(dp_value(data, 2, opts))


def test_minmax_scaling_has_the_same_optimum():
    data = mixed_data(8, n=24)
    opts = OCTOptions(scaling="minmax", alpha=0.05)
    assert not O.prepare(data, opts).floored
    r = solve_mip("oct", data, max_depth=1, options=opts, warm_start="none")
    assert r.objective == pytest.approx(dp_value(data, 1, opts))


@pytest.mark.parametrize("seed", range(3))
def test_octh_is_no_worse_than_oct_on_wide_gaps(seed):
    # integer features 0..9: every min-max gap is 1/9 >= mu, so each axis split is an OCT-H split
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"u": rng.integers(0, 10, 20), "v": rng.integers(0, 10, 20)})
    y = ((X["u"] + 2 * X["v"] > 13) ^ (rng.random(20) < 0.1)).astype(int).to_numpy()
    data = Dataset(X, y)
    oct_h = solve_mip("oct-h", data, max_depth=1, warm_start="none")
    axis = dp_value(data, 1, OCTOptions())
    assert oct_h.status is Status.OPTIMAL
    assert oct_h.objective <= axis + 1e-9
    assert oct_h.objective <= dp_value(data, 1, OCTOptions(hyperplanes=True)) + 1e-9  # the OCT-H warm start
