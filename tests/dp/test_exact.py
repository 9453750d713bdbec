"""The DP against the readable reference and brute force on tiny random data ([MurTree] Eq. 1): DPSolver is the
compiled search; solve_dp gives such small problems to the pairwise engine, so where a test compares the two it
compares the engines."""

import math
from unittest import mock

import numpy as np
import pytest
from _brute import brute_force
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from odtmip.core.data import Dataset
from odtmip.dp import DPOptions, DPSolver, anytime, solve_dp
from odtmip.dp.reference import solve_reference

from .strategies import integral, tiny_data

SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
PENALTIES = st.sampled_from([0.0, 0.0, 0.5, 1.0, 2.25])
MIN_LEAF = st.sampled_from([1, 1, 2, 3])


def same(a, b, ds):
    """Objectives agree (and node counts too, when weights are integers so ties are exact)."""
    if a is None or b is None:
        return a is b
    if not math.isclose(a[0], b[0], rel_tol=1e-9, abs_tol=1e-7):
        return False
    return not integral(ds) or a[1] == b[1]


def value(res):
    return None if res.tree is None else (res.objective, res.tree.n_branch_nodes)


@settings(max_examples=400, **SETTINGS)
@given(ds=tiny_data(), depth=st.integers(0, 2), min_leaf=MIN_LEAF, penalty=PENALTIES)
def test_depth_two_every_budget_matches_brute_force_and_reference(ds, depth, min_leaf, penalty):
    brute = brute_force(ds, depth, min_leaf, penalty)
    solver = DPSolver(ds, min_leaf=min_leaf, penalty=penalty)
    for n in range(2**depth):
        dp = solver.solve(max_depth=depth, max_nodes=n)
        ref = solve_reference(ds, depth, n, min_leaf, penalty)
        b = brute[n]
        assert same(value(dp), b and b[:2], ds), (n, value(dp), b and b[:2])
        assert same(value(ref), b and b[:2], ds), (n, value(ref), b and b[:2])
        assert same(value(solve_dp(ds, depth, n, min_leaf, penalty)), value(dp), ds)


@settings(max_examples=100, **SETTINGS)
@given(ds=tiny_data(max_rows=20, max_cols=4), min_leaf=MIN_LEAF, penalty=PENALTIES)
def test_depth_three_every_budget_matches_brute_force(ds, min_leaf, penalty):
    brute = brute_force(ds, 3, min_leaf, penalty)
    solver = DPSolver(ds, min_leaf=min_leaf, penalty=penalty)
    for n in range(8):
        b = brute[n]
        dp = solver.solve(max_depth=3, max_nodes=n)
        assert same(value(dp), b and b[:2], ds), (n, value(dp), b and b[:2])


@settings(max_examples=400, **SETTINGS)
@given(ds=tiny_data(), depth=st.integers(1, 3), nodes=st.integers(0, 7), min_leaf=MIN_LEAF, penalty=PENALTIES)
def test_depth_three_matches_reference(ds, depth, nodes, min_leaf, penalty):
    nodes = min(nodes, 2**depth - 1)
    dp = solve_dp(ds, depth, nodes, min_leaf, penalty)
    ref = solve_reference(ds, depth, nodes, min_leaf, penalty)
    assert same(value(dp), value(ref), ds)
    if dp.tree is not None:
        assert dp.tree.depth <= depth and dp.tree.n_branch_nodes <= nodes
        assert math.isclose(dp.objective, ds.misclassifications(dp.tree) + penalty * dp.tree.n_branch_nodes,
                            rel_tol=1e-9, abs_tol=1e-9)
        sizes = np.bincount(dp.tree.apply(ds.X), minlength=dp.tree.n_nodes)
        assert all(sizes[i] >= min_leaf for i, node in enumerate(dp.tree.nodes) if node.is_leaf)
        assert dp.bound == dp.objective


TOGGLES = [
    DPOptions(depth_two=False),
    DPOptions(counting="frequency"),
    DPOptions(counting="frequency", incremental=False),
    DPOptions(similarity=False),
    DPOptions(cache="branch"),
    DPOptions(cache=None),
    DPOptions(upper_bound=False),
    DPOptions(refined_lb=False),
    DPOptions(skip_degenerate=False),
    DPOptions(dynamic_order=False),
    DPOptions(merge_features=False),
    DPOptions(equivalent_points=False),
    DPOptions(leaf_bound=False),
    DPOptions(leaf_support=False),
    DPOptions(incremental_accuracy=False),
    DPOptions(leaf_accuracy=False),
    DPOptions(bound_passes=False),
    DPOptions(depth_two=False, similarity=False, cache=None, upper_bound=False, refined_lb=False,
              skip_degenerate=False, dynamic_order=False, merge_features=False, equivalent_points=False,
              leaf_bound=False, leaf_support=False, incremental_accuracy=False, leaf_accuracy=False,
              bound_passes=False),
]


@settings(max_examples=200, **SETTINGS)
@given(ds=tiny_data(max_rows=30, max_cols=6), depth=st.integers(1, 3), nodes=st.integers(1, 7),
       min_leaf=MIN_LEAF, penalty=PENALTIES)
def test_switching_a_technique_off_keeps_the_optimum(ds, depth, nodes, min_leaf, penalty):
    nodes = min(nodes, 2**depth - 1)
    base = value(solve_dp(ds, depth, nodes, min_leaf, penalty))
    for options in TOGGLES:
        if options.counting == "bitset" and not np.all(ds.weights == 1):
            continue
        assert same(value(solve_dp(ds, depth, nodes, min_leaf, penalty, options=options)), base, ds), options


def noisy_xor(seed):
    """150 rows, 10 columns, y = x0 xor x1 with a fifth of the labels flipped."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(150, 10))
    return Dataset(X, (X[:, 0] ^ X[:, 1] ^ (rng.random(150) < 0.2)).astype(int))


@settings(max_examples=25, **SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), depth=st.integers(3, 4))
def test_toggles_agree_on_larger_data(seed, depth):
    ds = noisy_xor(seed)
    base = value(solve_dp(ds, depth))
    for options in TOGGLES[:-1]:
        if options.cache is None and depth == 4:
            continue  # without memoisation depth 4 is needlessly slow
        assert same(value(solve_dp(ds, depth, options=options)), base, ds), options


@settings(max_examples=150, **SETTINGS)
@given(ds=tiny_data(), depth=st.integers(1, 3), penalty=PENALTIES, seed=st.integers(0, 2**32 - 1))
def test_row_and_column_permutations_keep_the_objective(ds, depth, penalty, seed):
    rng = np.random.default_rng(seed)
    rows = rng.permutation(ds.n_samples)
    cols = rng.permutation(ds.n_binary)
    w = None if ds.sample_weight is None else ds.sample_weight[rows]
    perm = Dataset(ds.Xb[rows][:, cols], ds.y[rows], w)
    a = solve_dp(ds, depth, penalty=penalty).objective
    b = solve_dp(perm, depth, penalty=penalty).objective
    assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-7)


@settings(max_examples=150, **SETTINGS)
@given(ds=tiny_data(), min_leaf=MIN_LEAF)
def test_optimum_is_monotone_in_depth_and_nodes(ds, min_leaf):
    assume(ds.n_samples >= min_leaf)
    solver = DPSolver(ds, min_leaf=min_leaf)
    counts = np.bincount(ds.y, weights=ds.weights)
    leaf_cost = counts.sum() - counts.max()
    previous_depth = math.inf
    for depth in range(4):
        values = [solver.solve(max_depth=depth, max_nodes=n).objective for n in range(2**depth)]
        assert values[0] == pytest.approx(leaf_cost)
        assert all(b <= a + 1e-9 for a, b in zip(values, values[1:], strict=False))
        assert values[-1] <= previous_depth + 1e-9
        assert solver.solve(max_depth=depth, max_nodes=2**depth + 5).objective == pytest.approx(values[-1])
        previous_depth = values[-1]


@settings(max_examples=150, **SETTINGS)
@given(ds=tiny_data(), min_leaf=MIN_LEAF, penalty=PENALTIES,
       budgets=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 7)), min_size=2, max_size=8))
def test_incremental_solver_matches_fresh_solves(ds, min_leaf, penalty, budgets):
    solver = DPSolver(ds, min_leaf=min_leaf, penalty=penalty)
    for depth, nodes in budgets:
        again = value(solver.solve(max_depth=depth, max_nodes=nodes))
        fresh = value(solve_dp(ds, depth, nodes, min_leaf, penalty))
        assert same(again, fresh, ds), (depth, nodes)


def test_duplicate_and_complementary_columns_are_merged_and_mapped_back(rng):
    X = rng.integers(0, 2, size=(60, 3))
    X = np.column_stack([X, 1 - X[:, 0], X[:, 1], np.ones(60, dtype=int), 1 - X[:, 2]])
    y = (X[:, 0] ^ X[:, 2]).astype(int)
    ds = Dataset(X, y)
    res = solve_dp(ds, 2)
    assert res.stats["features"] == 3 and res.stats["features_raw"] == 7
    assert res.objective == 0.0
    assert res.objective == solve_dp(ds, 2, options=DPOptions(merge_features=False)).objective


def test_leaf_ties_go_to_the_lowest_class():
    ds = Dataset(np.array([[0], [1], [0], [1]]), [1, 0, 0, 1])
    res = solve_dp(ds, 1)
    assert res.tree.n_branch_nodes == 0 and res.tree.nodes[0].label == 0 and res.objective == 2.0


def test_min_leaf_larger_than_the_data_is_infeasible():
    ds = Dataset(np.array([[0], [1], [0]]), [1, 0, 0])
    res = solve_dp(ds, 2, min_leaf=4)
    assert res.status.value == "infeasible" and res.tree is None and res.objective is None


ANY_OPTIMAL = DPOptions(fewest_nodes=False)


@settings(max_examples=100, **SETTINGS)
@given(ds=tiny_data(max_rows=20, max_cols=4), depth=st.integers(0, 3), min_leaf=MIN_LEAF, penalty=PENALTIES)
def test_any_optimal_tree_has_the_brute_force_objective(ds, depth, min_leaf, penalty):
    """fewest_nodes=False: at every node budget the objective of brute force, reproduced by routing the rows
    through a tree within the budget that has no fewer branch nodes than the fewest (exact with integer weights)."""
    brute = brute_force(ds, depth, min_leaf, penalty)
    solver = DPSolver(ds, min_leaf=min_leaf, penalty=penalty, options=ANY_OPTIMAL)
    for n in range(2**depth):
        b, res = brute[n], solver.solve(max_depth=depth, max_nodes=n)
        if b is None:
            assert res.tree is None, n
            continue
        tree = res.tree
        assert math.isclose(res.objective, b[0], rel_tol=1e-9, abs_tol=1e-7), (n, res.objective, b[:2])
        assert math.isclose(res.objective, ds.misclassifications(tree) + penalty * tree.n_branch_nodes,
                            rel_tol=1e-9, abs_tol=1e-9)
        assert tree.depth <= depth and tree.n_branch_nodes <= n
        assert not integral(ds) or tree.n_branch_nodes >= b[1]


@settings(max_examples=25, **SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), depth=st.integers(3, 5))
def test_any_optimal_tree_agrees_on_larger_data(seed, depth):
    ds = noisy_xor(seed)
    fewest, first = solve_dp(ds, depth), solve_dp(ds, depth, options=ANY_OPTIMAL)
    assert first.objective == fewest.objective and first.bound == first.objective
    assert first.tree.n_branch_nodes >= fewest.tree.n_branch_nodes


def test_a_perfect_greedy_tree_ends_the_search_for_any_optimal_tree():
    """y = x0 and x1 with a spare column: the greedy tree is perfect, so without the fewest-nodes proof the
    search has nothing to look for; with it the search still proves that 2 branch nodes are the fewest."""
    X = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)] * 3)
    ds = Dataset(X, X[:, 0] & X[:, 1])
    first, fewest = solve_dp(ds, 4, options=ANY_OPTIMAL, threads=1), solve_dp(ds, 4, threads=1)
    assert first.objective == fewest.objective == 0 and first.optimal
    assert first.stats["nodes"] == 1 < fewest.stats["nodes"]  # the root's call, which finds no better tree
    assert fewest.tree.n_branch_nodes == 2


@settings(max_examples=150, **SETTINGS)
@given(ds=tiny_data(max_rows=30, max_cols=6), depth=st.integers(1, 3), min_leaf=MIN_LEAF, penalty=PENALTIES,
       fewest=st.booleans())
def test_bound_passes_from_the_first_node_keep_the_brute_force_optimum(ds, depth, min_leaf, penalty, fewest):
    """Bound passes right after the greedy tree (no search for a better incumbent first): every pass that finds no
    tree proves its bound, the first that finds one has the optimum, and the search after the passes proves it."""
    brute = brute_force(ds, depth, min_leaf, penalty)[2**depth - 1]
    with mock.patch.object(anytime, "IMPROVE_NODES", 0):
        res = DPSolver(ds, min_leaf=min_leaf, penalty=penalty,
                       options=DPOptions(fewest_nodes=fewest)).solve(max_depth=depth, time_limit=3600.0)  # passes on
    if brute is None:
        assert res.tree is None
        return
    assert math.isclose(res.objective, brute[0], rel_tol=1e-9, abs_tol=1e-7), (res.objective, brute[:2])
    assert res.bound == res.objective
    assert not (fewest and integral(ds)) or res.tree.n_branch_nodes == brute[1]


@settings(max_examples=20, **SETTINGS)
@given(seed=st.integers(0, 2**32 - 1), depth=st.integers(3, 5), fewest=st.booleans())
def test_bound_passes_keep_the_optimum_on_larger_data(seed, depth, fewest):
    ds = noisy_xor(seed)
    plain = DPSolver(ds, options=DPOptions(bound_passes=False, fewest_nodes=fewest)).solve(max_depth=depth)
    with mock.patch.object(anytime, "IMPROVE_NODES", 0):
        passes = DPSolver(ds, options=DPOptions(fewest_nodes=fewest)).solve(max_depth=depth, time_limit=3600.0)
    assert passes.objective == plain.objective and passes.optimal and "bound_passes" in passes.stats
    assert not fewest or passes.tree.n_branch_nodes == plain.tree.n_branch_nodes
