"""Exact arithmetic for integer weights and penalties, however large the total (below 2^53): no relative tie
tolerance may hide a real improvement or lift the bound above the optimum (module docstring of
:mod:`odtmip.dp.solver`, "Arithmetic")."""

import math

import numpy as np
import pytest
from _brute import brute_force
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtmip.core.data import Dataset
from odtmip.core.results import Status
from odtmip.dp import DPOptions, DPSolver, solve_dp
from odtmip.dp.common import EXACT_INTEGERS, tie_tolerance
from odtmip.dp.reference import solve_reference

from .strategies import big_integer_data

SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
PENALTIES = st.one_of(st.just(0), st.integers(1, 5), st.integers(1, 10**12))
MIN_LEAF = st.sampled_from([1, 1, 2])
OPTIONS = [
    DPOptions(),
    DPOptions(depth_two=False),
    DPOptions(counting="frequency", incremental=False),
    DPOptions(similarity=False, cache="branch"),
    DPOptions(upper_bound=False, refined_lb=False),
    DPOptions(equivalent_points=False, leaf_bound=False, leaf_support=False),
    DPOptions(incremental_accuracy=False, leaf_accuracy=False, dynamic_order=False),
]

# the issue's example: the split on column 0 errs on weight 1, the leaf on 4, and the total is 1e10 + 5
ISSUE_X = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [1, 1]])
ISSUE_Y = [0, 0, 1, 1, 0]
ISSUE_W = [5e9, 5e9, 1, 3, 1]


def value(res):
    return (res.objective, res.tree.n_branch_nodes)


def assert_exact(res, expected):
    """``res`` is optimal with exactly the (objective, branch nodes) ``expected`` and a bound equal to it."""
    assert res.status is Status.OPTIMAL
    assert value(res) == expected
    assert res.bound == res.objective


@pytest.mark.parametrize("options", OPTIONS)
def test_large_total_weight_keeps_an_improvement_of_a_few_units(options):
    ds = Dataset(ISSUE_X, ISSUE_Y, ISSUE_W)
    res = solve_dp(ds, max_depth=1, options=options)
    assert_exact(res, (1.0, 1))
    assert res.stats["tolerance"] == 0.0
    assert res.tree.nodes[0].split == ds.split_of(0)
    assert_exact(solve_reference(ds, max_depth=1), (1.0, 1))


def test_large_total_weight_with_an_integer_penalty_and_no_depth_limit():
    ds = Dataset(ISSUE_X, ISSUE_Y, ISSUE_W)
    # the split costs 1 + 2 = 3 < 4: the leaf-count bound floor((4 - 1) / 2) = 1 must allow it
    assert_exact(solve_dp(ds, max_depth=None, penalty=2), (3.0, 1))
    assert_exact(solve_reference(ds, max_depth=None, penalty=2), (3.0, 1))
    # a penalty of 3 ties the split with the leaf, and the smaller tree wins
    assert_exact(solve_dp(ds, max_depth=None, penalty=3), (4.0, 0))
    assert_exact(solve_reference(ds, max_depth=None, penalty=3), (4.0, 0))


@settings(max_examples=300, **SETTINGS)
@given(ds=big_integer_data(), depth=st.integers(0, 2), min_leaf=MIN_LEAF, penalty=PENALTIES)
def test_weights_up_to_1e12_match_brute_force_exactly(ds, depth, min_leaf, penalty):
    brute = brute_force(ds, depth, min_leaf, penalty)
    solver = DPSolver(ds, min_leaf=min_leaf, penalty=penalty)
    for n in range(2**depth):
        expected = brute[n][:2]
        res = solver.solve(max_depth=depth, max_nodes=n)
        assert res.stats["tolerance"] == 0.0
        assert_exact(res, expected)
        assert_exact(solve_reference(ds, depth, n, min_leaf, penalty), expected)


@settings(max_examples=100, **SETTINGS)
@given(ds=big_integer_data(max_weight=2**46), depth=st.integers(1, 2), penalty=st.integers(0, 2**46))
def test_weights_near_the_limit_are_exact(ds, depth, penalty):
    # K (W + 3 penalty) <= 3 x 13 x 2^46 < 2^53: still exact
    expected = brute_force(ds, depth, 1, penalty)[2**depth - 1][:2]
    res = solve_dp(ds, depth, penalty=penalty)
    assert res.stats["tolerance"] == 0.0
    assert_exact(res, expected)


@settings(max_examples=60, **SETTINGS)
@given(ds=big_integer_data(max_rows=8), depth=st.integers(1, 3), penalty=PENALTIES)
def test_weights_up_to_1e12_are_exact_with_every_technique_switch(ds, depth, penalty):
    expected = brute_force(ds, depth, 1, penalty)[2**depth - 1][:2]
    for options in OPTIONS:
        assert_exact(solve_dp(ds, depth, penalty=penalty, options=options), expected)


@settings(max_examples=60, **SETTINGS)
@given(ds=big_integer_data(max_rows=8), penalty=st.one_of(st.integers(1, 5), st.integers(1, 10**12)))
def test_weights_up_to_1e12_are_exact_without_a_depth_limit(ds, penalty):
    # an optimal tree never splits twice on a column on one path (that split has an empty side), so
    # depth <= the number of columns loses nothing
    p = ds.n_binary
    expected = brute_force(ds, p, 1, penalty)[2**p - 1][:2]
    assert_exact(solve_dp(ds, max_depth=None, penalty=penalty), expected)
    assert_exact(solve_reference(ds, max_depth=None, penalty=penalty), expected)


def test_the_exact_rule_and_its_limit():
    ones = np.ones(4)
    assert tie_tolerance(ones, 0.0, 2) == 0.0
    assert tie_tolerance(ones, 3.0, 2) == 0.0
    eps = 2.0**-52  # otherwise: 4 (n + 64) eps max(1, W + 3 penalty), n rows
    assert tie_tolerance(ones, 0.5, 2) == pytest.approx(4 * 68 * eps * 5.5)  # real penalty
    assert tie_tolerance(np.array([1.0, 2.5]), 0.0, 2) == pytest.approx(4 * 66 * eps * 3.5)  # real weights
    # K (W + 3 penalty) < 2^53 is the limit
    w = np.array([2.0**50, 1.0])
    assert tie_tolerance(w, 0.0, 7) == 0.0 and tie_tolerance(w, 0.0, 8) > 0
    assert tie_tolerance(w, 2.0**49, 2) == 0.0 and tie_tolerance(w, 2.0**50, 2) > 0
    assert tie_tolerance(np.array([EXACT_INTEGERS, 1.0]), 0.0, 2) == pytest.approx(4 * 66 * eps * EXACT_INTEGERS)


def test_sparse_objective_is_exact_when_its_penalty_per_branch_node_is_an_integer():
    res = DPSolver(Dataset(ISSUE_X, ISSUE_Y), leaf_penalty=0.25).solve(max_depth=None)  # 0.25 x 5 = 1.25
    assert res.stats["tolerance"] > 0
    res = DPSolver(Dataset(ISSUE_X, ISSUE_Y, [1, 1, 1, 1, 4]), leaf_penalty=0.25).solve(max_depth=None)
    assert res.stats["tolerance"] == 0.0  # 0.25 x 8 = 2 per branch node
    assert res.objective == res.bound


def test_integer_data_beyond_2_53_falls_back_to_the_tolerance():
    ds = Dataset(ISSUE_X, ISSUE_Y, [2.0**52, 2.0**52, 1, 3, 1])
    res = solve_dp(ds, max_depth=1)
    assert res.status is Status.OPTIMAL
    tol = res.stats["tolerance"]
    assert tol == pytest.approx(4 * (5 + 64) * 2.0**-52 * 2.0**53)  # 552: round-off of sums near 2^53
    assert res.objective <= 1.0 + tol and res.bound <= res.objective  # float64 spacing is 2 at 2^53


def test_real_weights_are_optimal_up_to_the_documented_tolerance():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 2, size=(12, 3))
    y = rng.integers(0, 2, size=12)
    w = rng.random(12) + 0.05
    ds = Dataset(X, y, w)
    for depth in (1, 2):
        res = solve_dp(ds, depth)
        assert res.stats["tolerance"] == pytest.approx(4 * (12 + 64) * 2.0**-52 * max(1.0, w.sum()))
        assert math.isclose(res.objective, brute_force(ds, depth)[2**depth - 1][0], rel_tol=1e-9, abs_tol=1e-9)
        assert res.bound <= res.objective
    # the tolerance is a round-off bound (about 6e-4 here), not a fraction of W: the split on column 0 (error 1)
    # beats the leaf (4.5) although the total weight is 1e10
    ds = Dataset(ISSUE_X, ISSUE_Y, [5e9, 5e9, 1.5, 3, 1])
    res = solve_dp(ds, max_depth=1)
    assert res.stats["tolerance"] < 1e-3
    assert value(res) == (1.0, 1) and res.bound == res.objective
