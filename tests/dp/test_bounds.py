"""The DP's values below each split (odtmip.dp.bounds) against brute force: every tree enumerated."""

import math

import numpy as np
import pytest
from _brute import achievable_pairs, all_trees
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtmip.core.data import Dataset
from odtmip.core.exceptions import OptionError
from odtmip.dp.bounds import split_values, target_values

from .strategies import integral, tiny_data

SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow], max_examples=40)


def brute_values(ds: Dataset, rows: np.ndarray, depth: int, penalty: float, min_leaf: int):
    """(V_depth(rows, s) for every column s, OPT_{depth-1}(rows), leaf) by enumerating every tree: a split on s
    that leaves a side empty stands for OPT_{depth-1}(rows), as the module documents."""
    X, y, w, K = np.asarray(ds.Xb, dtype=np.int64), ds.y, ds.weights, ds.n_classes
    trees = all_trees(X, y, w, K, rows, depth, min_leaf)
    cost = [(e + penalty * k, s) for e, k, s in trees]
    below = min((c for c, s in [(e + penalty * k, s) for e, k, s in all_trees(X, y, w, K, rows, depth - 1, min_leaf)]),
                default=math.inf)
    leaf = min((c for c, s in cost if s[0] == "leaf"), default=math.inf)
    root = []
    for j in range(X.shape[1]):
        side = X[rows, j] == 1
        if len(rows) and (side.all() or not side.any()):
            root.append(below)
        else:
            root.append(min((c for c, s in cost if s[0] == j), default=math.inf))
    return np.array(root), below, leaf


def close(a, b, ds):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if integral(ds):
        return np.array_equal(a, b)
    return np.allclose(a, b, rtol=1e-9, atol=1e-9) and np.array_equal(np.isinf(a), np.isinf(b))


@settings(**SETTINGS)
@given(ds=tiny_data(max_rows=14, max_cols=4), depth=st.integers(1, 3), penalty=st.sampled_from([0.0, 1.0, 0.75]),
       min_leaf=st.integers(1, 3))
def test_every_root_value_is_the_best_tree_below_that_split(ds, depth, penalty, min_leaf):
    got = split_values(ds, depth, penalty, min_leaf)
    rows = np.arange(ds.n_samples)
    root, below, leaf = brute_values(ds, rows, depth, penalty, min_leaf)
    assert close(got.root, root, ds)
    assert close(got.below, below, ds) and close(got.leaf, leaf, ds)
    assert got.complete


@settings(**SETTINGS)
@given(ds=tiny_data(max_rows=12, max_cols=3), depth=st.integers(2, 3), penalty=st.sampled_from([0.0, 1.0]),
       min_leaf=st.integers(1, 2))
def test_the_values_one_level_down_are_those_of_each_side(ds, depth, penalty, min_leaf):
    got = split_values(ds, depth, penalty, min_leaf, paths=True)
    X = np.asarray(ds.Xb)
    for s in range(X.shape[1]):
        for a in (0, 1):
            rows = np.flatnonzero(X[:, s] == a)
            assert got.empty[s, a] == (len(rows) == 0)
            if len(rows) == 0:
                continue
            root, below, leaf = brute_values(ds, rows, depth - 1, penalty, min_leaf)
            assert close(got.child_root[s, a], root, ds), (s, a)
            assert close(got.child_below[s, a], below, ds)
            assert close(got.child[s, a], min(leaf, below, root.min()), ds)


def test_a_split_that_leaves_a_side_empty_is_worth_the_best_tree_one_level_shallower():
    X = np.array([[1, 0], [1, 1], [1, 0], [1, 1]])
    ds = Dataset(X, [0, 1, 0, 1])
    got = split_values(ds, 2, penalty=0.5)
    assert got.root.tolist() == [0.5, 0.5]  # column 0 is constant: OPT_1 = the stump on column 1
    assert got.below == 0.5 and got.leaf == 2.0 and got.optimum == 0.5


def test_depth_four_uses_the_search_for_the_children_and_agrees_with_the_optimum():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(60, 6))
    y = (X[:, 0] ^ X[:, 1] ^ (X[:, 2] & X[:, 3])).astype(int)
    y[rng.random(60) < 0.1] ^= 1
    ds = Dataset(X, y)
    from odtmip.dp import solve_dp

    got = split_values(ds, 4)
    assert got.optimum == solve_dp(ds, max_depth=4).objective
    assert got.stats["solves"] > 0


def test_a_spent_time_limit_leaves_valid_bounds_and_says_so():
    rng = np.random.default_rng(4)
    X = rng.integers(0, 2, size=(200, 8))
    ds = Dataset(X, (X[:, 0] ^ X[:, 1]).astype(int))
    exact = split_values(ds, 3, penalty=1.0, paths=True)
    stopped = split_values(ds, 3, penalty=1.0, paths=True, time_limit=0.0)
    assert not stopped.complete and exact.complete
    assert (stopped.root <= exact.root).all() and (stopped.child_root <= exact.child_root).all()


@pytest.mark.parametrize("depth, paths", [(0, False), (5, False), (True, False), (1, True)])
def test_depths_outside_the_computed_range_are_refused(depth, paths):
    with pytest.raises(OptionError, match="depth"):
        split_values(Dataset(np.array([[0], [1]]), [0, 1]), depth, paths=paths)


@settings(**SETTINGS)
@given(ds=tiny_data(max_rows=12, max_cols=3, classes=(2,), weights=("none",)), depth=st.integers(1, 3),
       target=st.sampled_from([("min_specificity", 0.5), ("min_specificity", 0.8), ("min_sensitivity", 0.7)]))
def test_the_values_under_a_target_are_the_least_missed_weight_of_the_trees_that_meet_it(ds, depth, target):
    """Every (fp, fn) of every tree, by brute force: V_d(S, s) is the least fn (fp) of a tree with root s that meets
    the floor, counted as the DP counts it (TN >= ceil(tau negatives))."""
    name, tau = target
    got = target_values(ds, depth, {name: tau, "positive": 1})
    X, w = np.asarray(ds.Xb, dtype=np.int64), ds.weights
    pos = ds.y == 1
    negatives, positives = float(w[~pos].sum()), float(w[pos].sum())
    fp_cap = negatives - math.ceil(tau * negatives - 1e-9) if name == "min_specificity" else math.inf
    fn_cap = positives - math.ceil(tau * positives - 1e-9) if name == "min_sensitivity" else math.inf

    def least(pairs):
        missed = [fn if name == "min_specificity" else fp for fp, fn, _ in pairs if fp <= fp_cap and fn <= fn_cap]
        return min(missed, default=math.inf)

    rows = np.arange(ds.n_samples)
    below = least(achievable_pairs(X, pos, w, rows, depth - 1))
    assert got.below == below and got.leaf == least(achievable_pairs(X, pos, w, rows, 0))
    for j in range(X.shape[1]):
        side = X[:, j] == 1
        if side.all() or not side.any():
            assert got.root[j] == below
            continue
        lefts = achievable_pairs(X, pos, w, rows[~side], depth - 1)
        rights = achievable_pairs(X, pos, w, rows[side], depth - 1)
        assert got.root[j] == least({(a + c, b + d, 0) for a, b, _ in lefts for c, d, _ in rights}), j
