"""Metrics and sensitivity/specificity targets optimised over the (fp, fn) front, against brute force over every
tree (value and fewest branch nodes), through ``odtmip.solve``."""

import math

import numpy as np
import pytest
from _brute import achievable_pairs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import odtmip
from odtmip.core.data import Dataset
from odtmip.core.exceptions import DataError, OptionError
from odtmip.core.metrics import Confusion, count_target
from odtmip.core.results import Status
from odtmip.dp.pareto import METRICS, objective_of

from .strategies import integral, tiny_data

SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def brute_optimum(ds, depth, positive, loss, fp_cap=math.inf, fn_cap=math.inf):
    """(least loss, fewest branch nodes reaching it) over every tree within the caps; None if no tree fits."""
    X = np.asarray(ds.Xb, dtype=np.int64)
    pos = ds.y == positive
    triples = [(fp, fn, k) for fp, fn, k in achievable_pairs(X, pos, ds.weights, np.arange(len(pos)), depth)
               if fp <= fp_cap + 1e-9 and fn <= fn_cap + 1e-9]
    if not triples:
        return None
    values = [(loss(fp, fn), k) for fp, fn, k in triples]
    low = min(v for v, _ in values)
    return low, min(k for v, k in values if v <= low + 1e-12)


def metric_loss(name, ds, positive):
    P = float(ds.weights[ds.y == positive].sum())
    N = float(ds.weights[ds.y != positive].sum())
    return lambda fp, fn: 1.0 - METRICS[name](Confusion(tp=P - fn, fp=fp, tn=N - fp, fn=fn))


@settings(max_examples=80, **SETTINGS)
@given(ds=tiny_data(max_rows=24, max_cols=4, classes=(2,)), depth=st.integers(1, 3),
       metric=st.sampled_from(sorted(METRICS)), positive=st.integers(0, 1))
def test_metric_optimum_matches_brute_force(ds, depth, metric, positive):
    res = odtmip.solve(ds, "dp", max_depth=depth, metric=metric, positive=ds.classes_[positive])
    loss, nodes = brute_optimum(ds, depth, positive, metric_loss(metric, ds, positive))
    assert res.status is Status.OPTIMAL
    tol = 1e-9 if integral(ds) else 1e-6  # brute force rounds real sums to 9 decimals
    assert math.isclose(res.objective, loss, abs_tol=tol) and res.bound == res.objective
    assert math.isclose(res.stats["metric_value"], 1 - loss, abs_tol=tol)
    pred = res.tree.predict_index(ds.X) == positive
    routed = Confusion.from_labels(ds.y == positive, pred, ds.sample_weight, positive=True)
    assert math.isclose(1 - getattr(routed, {"fmi": "fowlkes_mallows", "balanced-accuracy": "balanced_accuracy"}
                                    .get(metric, metric)), res.objective, abs_tol=tol)
    if integral(ds):
        assert res.tree.n_branch_nodes == nodes


@settings(max_examples=80, **SETTINGS)
@given(ds=tiny_data(max_rows=24, max_cols=4, classes=(2,), weights=("none", "integer")), depth=st.integers(1, 3),
       tau=st.sampled_from([0.0, 0.5, 0.8, 0.9, 0.95, 1.0]), sensitivity=st.booleans())
def test_rate_targets_match_brute_force(ds, depth, tau, sensitivity):
    """Maximise sensitivity s.t. TN >= ceil(tau |I-|) (the corrected (15) of [GKLMS]), and the mirror."""
    P, N = float(ds.weights[ds.y == 1].sum()), float(ds.weights[ds.y == 0].sum())
    if sensitivity:
        res = odtmip.solve(ds, "dp", max_depth=depth, min_sensitivity=tau)
        expect = brute_optimum(ds, depth, 1, lambda fp, fn: fp, fn_cap=P - count_target(tau, P))
    else:
        res = odtmip.solve(ds, "dp", max_depth=depth, min_specificity=tau)
        expect = brute_optimum(ds, depth, 1, lambda fp, fn: fn, fp_cap=N - count_target(tau, N))
    if expect is None:
        assert res.status is Status.INFEASIBLE and res.tree is None
        return
    assert res.status is Status.OPTIMAL
    assert res.objective == expect[0] and res.tree.n_branch_nodes == expect[1]
    rate = res.stats["tpr"] if sensitivity else res.stats["tnr"]
    assert rate >= tau - 1e-12


def test_a_rate_target_on_real_weights_survives_a_loss_rounded_below_zero():
    # The best tree's fp, summed from real weights, is -5.6e-17: the search for its fewest nodes then looked in a
    # region with a negative corner and stopped with an OptionError. The region starts at 0 now.
    X = np.array([[1, 1, 1], [1, 1, 0], [0, 1, 0], [0, 1, 1], [0, 0, 1], [1, 1, 1]])
    ds = Dataset(X, [0, 1, 0, 1, 1, 0], [0.72, 0.66, 0.41, 0.18, 0.23, 0.29])
    P = float(ds.weights[ds.y == 1].sum())
    expect = brute_optimum(ds, 2, 1, lambda fp, fn: fp, fn_cap=P - count_target(0.8, P))
    res = odtmip.solve(ds, "dp", max_depth=2, min_sensitivity=0.8)
    assert res.status is Status.OPTIMAL and res.stats["tpr"] >= 0.8
    assert math.isclose(res.objective, expect[0], abs_tol=1e-9) and res.tree.n_branch_nodes == expect[1]


@settings(max_examples=40, **SETTINGS)
@given(ds=tiny_data(max_rows=24, max_cols=4, classes=(2,)), depth=st.integers(1, 3), data=st.data())
def test_caps_with_a_metric_match_brute_force(ds, depth, data):
    W = float(ds.weights.sum())
    cap_fp, cap_fn = data.draw(st.floats(0, W)), data.draw(st.floats(0, W))
    res = odtmip.solve(ds, "dp", max_depth=depth, metric="f1", max_false_positives=cap_fp,
                       max_false_negatives=cap_fn)
    expect = brute_optimum(ds, depth, 1, metric_loss("f1", ds, 1), cap_fp, cap_fn)
    if expect is None:
        assert res.status is Status.INFEASIBLE
    else:
        assert math.isclose(res.objective, expect[0], abs_tol=1e-6)


def test_user_metric_and_time_limit(rng):
    X = rng.integers(0, 2, size=(300, 60))
    y = ((X[:, :5].sum(axis=1) + rng.integers(0, 2, 300)) % 2).astype(int)
    ds = Dataset(X, y)

    def youden(c):
        return c.sensitivity + c.specificity - 1

    res = odtmip.solve(ds, "dp", max_depth=2, metric=youden)
    same = odtmip.solve(ds, "dp", max_depth=2, metric="balanced-accuracy")  # the same order of trees
    assert math.isclose(1 - res.objective, 2 * (1 - same.objective) - 1, abs_tol=1e-12)
    assert res.stats["metric"] == "youden"
    # the front at depth 5 takes some 40 s of search on one core here (20 s in two threads): 0.05 s stops it anywhere
    timed = odtmip.solve(ds, "dp", max_depth=5, metric="f1", time_limit=0.05)
    assert timed.status is Status.TIME_LIMIT and timed.tree is not None
    assert timed.bound <= timed.objective


def test_exact_integer_target():
    """0.07 x 100 is 7.000000000000001 in floating point; the target is 7, so 93 false positives are allowed."""
    assert count_target(0.07, 100) == 7
    ds = Dataset(np.zeros((200, 1), dtype=int), [0] * 100 + [1] * 100)
    assert objective_of(ds, 1, min_specificity=0.07).fp_cap == 93


def test_bad_options_are_one_line_errors():
    X = np.array([[0], [1], [0], [1]])
    with pytest.raises(DataError, match="two classes"):
        odtmip.solve(Dataset(X, [0, 1, 2, 2]), "dp", metric="f1")
    with pytest.raises(DataError, match="positive label 7 is not a class; the classes are 0, 1$"):  # not np.int64(0)
        odtmip.solve(Dataset(X, [0, 1, 1, 0]), "dp", metric="f1", positive=7)
    with pytest.raises(OptionError, match="min_leaf cannot be combined"):
        odtmip.solve(Dataset(X, [0, 1, 1, 0]), "dp", metric="f1", min_leaf=2)
    with pytest.raises(OptionError, match="metric must be"):
        odtmip.solve(Dataset(X, [0, 1, 1, 0]), "dp", metric="recall")
    with pytest.raises(OptionError, match="must return a finite number"):
        odtmip.solve(Dataset(X, [0, 1, 1, 0]), "dp", metric=lambda c: math.nan)
