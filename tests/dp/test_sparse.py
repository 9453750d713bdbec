"""The sparse objective of OSDT in the DP: errors / W + lambda x leaves ([OSDT] Eq. 4), with and without a
depth limit, against brute force, and the properties of [OSDT] §3 and appendices B-C on the optima found."""

import math

import numpy as np
import pytest
from _brute import brute_force, brute_force_sparse
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from odtmip.core.data import Dataset
from odtmip.core.exceptions import OptionError
from odtmip.core.results import Status
from odtmip.dp import DPOptions, DPSolver, solve_dp
from odtmip.dp._kernels import _common as kcommon
from odtmip.dp.common import equivalent_minority
from odtmip.dp.reference import solve_reference

from .strategies import integral, tiny_data

SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
# per-leaf penalties from "many leaves" to "the single leaf is optimal" (lambda >= the leaf's error fraction)
LAMBDAS = st.one_of(st.sampled_from([0.01, 0.02, 0.05, 0.0625, 0.1, 0.125, 0.2, 0.25, 0.5, 0.75]),
                    st.floats(0.005, 0.6))
DEPTHS = st.sampled_from([None, None, 1, 2, 3])

OSDT_OFF = [
    DPOptions(equivalent_points=False),
    DPOptions(leaf_bound=False),
    DPOptions(leaf_support=False),
    DPOptions(incremental_accuracy=False),
    DPOptions(leaf_accuracy=False),
    DPOptions(equivalent_points=False, leaf_bound=False, leaf_support=False, incremental_accuracy=False,
              leaf_accuracy=False),
]
MURTREE_OFF = [
    DPOptions(depth_two=False),
    DPOptions(counting="frequency"),
    DPOptions(cache="branch"),
    DPOptions(cache=None, leaf_bound=False),
    DPOptions(upper_bound=False, refined_lb=False),
    DPOptions(similarity=False, dynamic_order=False, skip_degenerate=False, merge_features=False),
]


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def osdt_objective(ds: Dataset, tree, lam: float) -> float:
    return ds.misclassifications(tree) / ds.weights.sum() + lam * tree.n_leaves


def leaf_indices(tree) -> list[int]:
    return [i for i, node in enumerate(tree.nodes) if node.is_leaf]


# ------------------------------------------------------------------------------------------ exactness
@settings(max_examples=800, **SETTINGS)
@given(ds=tiny_data(max_rows=16, max_cols=4), depth=DEPTHS, lam=LAMBDAS, min_leaf=st.sampled_from([1, 1, 2]))
def test_sparse_optimum_matches_brute_force_and_reference(ds, depth, lam, min_leaf):
    brute = brute_force_sparse(ds, lam, depth, min_leaf)
    assume(brute is not None)
    res = solve_dp(ds, depth, min_leaf=min_leaf, leaf_penalty=lam)
    assert res.status is Status.OPTIMAL
    assert close(res.objective, brute[0]), (res.objective, brute[:2])
    assert close(res.objective, osdt_objective(ds, res.tree, lam))
    assert res.bound == res.objective
    ref = solve_reference(ds, depth, min_leaf=min_leaf, leaf_penalty=lam)
    assert close(ref.objective, brute[0])
    if integral(ds):  # exact ties: the fewest leaves win everywhere
        assert res.tree.n_leaves == brute[1] == ref.tree.n_leaves
    if depth is not None:
        assert res.tree.depth <= depth


@settings(max_examples=250, **SETTINGS)
@given(ds=tiny_data(max_rows=40, max_cols=7), depth=st.sampled_from([None, 2, 3, 4]), lam=LAMBDAS,
       min_leaf=st.sampled_from([1, 1, 3]))
def test_switching_an_osdt_bound_off_keeps_the_optimum(ds, depth, lam, min_leaf):
    assume(ds.n_samples >= min_leaf)
    base = solve_dp(ds, depth, min_leaf=min_leaf, leaf_penalty=lam)
    for options in OSDT_OFF + MURTREE_OFF:
        if options.counting == "bitset" and not integral(ds):
            continue
        other = solve_dp(ds, depth, min_leaf=min_leaf, leaf_penalty=lam, options=options)
        assert close(other.objective, base.objective), options
        if integral(ds):
            assert other.tree.n_leaves == base.tree.n_leaves, options


@pytest.mark.parametrize("lam", [0.01, 0.03])
@pytest.mark.parametrize("depth", [4, None])
def test_osdt_bounds_off_agree_on_larger_data(rng, lam, depth):
    X = rng.integers(0, 2, size=(200, 12))
    y = (X[:, 0] ^ X[:, 1] ^ (X[:, 2] & X[:, 3]) ^ (rng.random(200) < 0.15)).astype(int)
    ds = Dataset(X, y)
    base = solve_dp(ds, depth, leaf_penalty=lam)
    assert base.optimal
    for options in OSDT_OFF:
        other = solve_dp(ds, depth, leaf_penalty=lam, options=options)
        assert other.objective == pytest.approx(base.objective, abs=1e-12), options
        assert other.tree.n_leaves == base.tree.n_leaves, options
    if depth is not None:  # the bounds prune: fewer depth-two solves (the O(p^2) work) with them than without
        none = solve_dp(ds, depth, leaf_penalty=lam, options=OSDT_OFF[-1])
        assert base.stats["depth_two_calls"] < none.stats["depth_two_calls"]


def test_penalty_per_branch_node_is_the_same_search(rng):
    X = rng.integers(0, 2, size=(80, 6))
    y = (X[:, 0] | X[:, 1] & X[:, 2]).astype(int) ^ (rng.random(80) < 0.1)
    ds = Dataset(X, y)
    lam = 0.02
    sparse = solve_dp(ds, 3, leaf_penalty=lam)
    counts = solve_dp(ds, 3, penalty=lam * 80)
    assert sparse.objective == pytest.approx((counts.objective + lam * 80) / 80)
    assert sparse.tree.n_leaves == counts.tree.n_branch_nodes + 1


@settings(max_examples=150, **SETTINGS)
@given(ds=tiny_data(max_rows=24, max_cols=4), fraction=st.sampled_from([0.1, 0.25, 0.5, 0.99]),
       rule=st.sampled_from(["xor", "and-or", "noisy"]),
       budgets=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 7)), min_size=1, max_size=6))
def test_penalties_below_the_smallest_weight_match_brute_force_at_every_budget(ds, fraction, rule, budgets):
    # segment with penalty 1/20 (issue #17): once the incumbent costs less than one row, every leaf must be pure,
    # and the search proves "no perfect tree with fewer nodes" from the bounds of the optima at smaller budgets;
    # one solver answers the budgets in any order, so every bound comes from a cache filled by the others
    X = np.asarray(ds.Xb)
    y = {"xor": X[:, 0] ^ X[:, -1], "and-or": (X[:, 0] & X[:, -1]) | X[:, 1 % X.shape[1]], "noisy": ds.y}[rule]
    assume(y.min() < y.max())
    ds = Dataset(X, y.astype(int), ds.sample_weight)
    penalty = fraction * float(ds.weights.min())
    brute = {depth: brute_force(ds, depth, 1, penalty) for depth in {depth for depth, _ in budgets}}
    solvers = [DPSolver(ds, penalty=penalty, options=DPOptions(iterative_deepening=on)) for on in (True, False)]
    for depth, nodes in budgets:
        nodes = min(nodes, 2**depth - 1)
        best = brute[depth][nodes]
        for solver in solvers:
            res = solver.solve(depth, nodes)
            assert res.status is Status.OPTIMAL and res.bound == res.objective
            assert close(res.objective, best[0]), (depth, nodes, res.objective, best[:2])
            assert res.tree.depth <= depth and res.tree.n_branch_nodes <= nodes
            if integral(ds):
                assert res.tree.n_branch_nodes == best[1]


# --------------------------------------------------------------------------------- the lambda path
@settings(max_examples=80, **SETTINGS)
@given(ds=tiny_data(max_rows=40, max_cols=6), depth=st.sampled_from([None, 2, 3]))
def test_objective_is_concave_piecewise_linear_and_leaves_fall_with_lambda(ds, depth):
    grid = [0.0025 * k for k in range(1, 41)] + [0.15, 0.2, 0.3, 0.5, 0.75]
    results = [solve_dp(ds, depth, leaf_penalty=lam) for lam in grid]
    values = [r.objective for r in results]
    leaves = [r.tree.n_leaves for r in results]
    errors = [ds.misclassifications(r.tree) / ds.weights.sum() for r in results]
    assert all(b >= a - 1e-12 for a, b in zip(values, values[1:], strict=False))  # non-decreasing
    assert all(b <= a for a, b in zip(leaves, leaves[1:], strict=False))  # leaves non-increasing
    slopes = [(b - a) / (lb - la) for a, b, la, lb in zip(values, values[1:], grid, grid[1:], strict=False)]
    assert all(s2 <= s1 + 1e-9 for s1, s2 in zip(slopes, slopes[1:], strict=False))  # concave
    # the minimum of the lines errors(T) + lambda leaves(T) of the optimal trees: each line lies above it
    for lam, value in zip(grid, values, strict=True):
        assert all(e + lam * k >= value - 1e-12 for e, k in zip(errors, leaves, strict=True))
    counts = np.bincount(ds.y, weights=ds.weights)
    leaf_error = 1 - counts.max() / counts.sum()
    for lam, r in zip(grid, results, strict=True):
        if lam >= leaf_error:  # [OSDT] §6: lambda >= the leaf's error fraction makes the single leaf optimal
            assert r.tree.n_leaves == 1


@settings(max_examples=150, **SETTINGS)
@given(ds=tiny_data(max_rows=30, max_cols=6), depth=st.integers(0, 3))
def test_lambda_zero_is_the_minimum_misclassification_optimum(ds, depth):
    sparse = solve_dp(ds, depth, leaf_penalty=0.0)
    plain = solve_dp(ds, depth)
    assert close(sparse.objective, plain.objective / ds.weights.sum())
    if integral(ds):
        assert sparse.tree.n_leaves == plain.tree.n_branch_nodes + 1


# ------------------------------------------------------------------------ structure of the optima
@settings(max_examples=400, **SETTINGS)
@given(ds=tiny_data(max_rows=40, max_cols=7), depth=st.sampled_from([None, None, 2, 3]), lam=LAMBDAS,
       min_leaf=st.sampled_from([1, 1, 2]))
def test_optimal_sparse_trees_have_the_structure_of_osdt_theorems(ds, depth, lam, min_leaf):
    assume(ds.n_samples >= min_leaf)
    res = solve_dp(ds, depth, min_leaf=min_leaf, leaf_penalty=lam)
    tree, W = res.tree, ds.weights.sum()
    eps = 1e-9
    correct = {i: tree.nodes[i].counts.max() / W for i in leaf_indices(tree)}
    support = {i: tree.nodes[i].counts.sum() / W for i in leaf_indices(tree)}
    if tree.n_leaves > 1:
        # Theorem 3.5: every leaf classifies more than lambda of the data correctly
        assert all(c > lam - eps for c in correct.values())
    for node in tree.nodes:
        if node.is_leaf or not (tree.nodes[node.left].is_leaf and tree.nodes[node.right].is_leaf):
            continue
        a, b = node.left, node.right
        # Theorem 3.3: sibling leaves hold more than 2 lambda of the data
        assert support[a] + support[b] > 2 * lam - eps
        # Theorem 3.4: their split classifies more than lambda more of the data correctly than their parent
        parent_correct = (tree.nodes[a].counts + tree.nodes[b].counts).max() / W
        assert correct[a] + correct[b] - parent_correct > lam - eps
        # hence they predict different labels
        assert tree.nodes[a].label != tree.nodes[b].label
    counts = np.bincount(ds.y, weights=ds.weights)
    leaf_objective = 1 - counts.max() / W + lam
    # Theorem C.1 with the single leaf, or the optimum itself, as R^c; the corrected Corollary C.2
    assert tree.n_leaves <= math.floor(leaf_objective / lam + eps)
    assert tree.n_leaves <= math.floor(res.objective / lam + eps)
    assert tree.n_leaves <= math.floor(1 / (2 * lam) + eps) + 1
    # Proposition B.1: R* >= equivalent points + lambda
    eq = ds.weights[equivalent_minority(ds.Xb.astype(np.uint8), ds.y, ds.weights, ds.n_classes)].sum() / W
    assert res.objective >= eq + lam - eps


def test_corollary_c2_is_off_by_one_and_not_used():
    """[OSDT] §C: with lambda = 0.3 the two points (0, 0), (1, 1) want 2 > floor(1 / 0.6) leaves."""
    ds = Dataset(np.array([[0], [1]]), [0, 1])
    res = solve_dp(ds, None, leaf_penalty=0.3)
    assert res.tree.n_leaves == 2 and res.objective == pytest.approx(0.6)


def test_equivalent_points_bound_the_objective():
    # two groups of identical rows with mixed labels: no tree errs less than their minorities
    X = np.array([[0, 1]] * 5 + [[1, 0]] * 4 + [[1, 1]] * 3)
    y = np.array([0, 0, 0, 1, 1] + [1, 1, 1, 0] + [0, 0, 0])
    ds = Dataset(X, y)
    minority = equivalent_minority(ds.Xb.astype(np.uint8), ds.y, ds.weights, 2)
    assert minority.sum() == 3
    solver = DPSolver(ds, leaf_penalty=0.01)
    assert solver.equivalent_points_weight == 3
    res = solver.solve(None)  # one split on the second column leaves exactly the 3 unavoidable errors
    assert res.objective == pytest.approx(3 / 12 + 0.01 * 2) and res.tree.n_leaves == 2
    assert res.stats["depth_bound"] >= res.tree.depth


@settings(max_examples=200, **SETTINGS)
@given(ds=tiny_data(max_rows=30, max_cols=6), lam=LAMBDAS, depth=DEPTHS, seed=st.integers(0, 2**32 - 1))
def test_row_and_column_permutations_keep_the_sparse_optimum(ds, lam, depth, seed):
    rng = np.random.default_rng(seed)
    rows = rng.permutation(ds.n_samples)
    cols = rng.permutation(ds.n_binary)
    w = None if ds.sample_weight is None else ds.sample_weight[rows]
    perm = Dataset(ds.Xb[rows][:, cols], ds.y[rows], w)
    a = solve_dp(ds, depth, leaf_penalty=lam)
    b = solve_dp(perm, depth, leaf_penalty=lam)
    assert math.isclose(a.objective, b.objective, rel_tol=1e-9, abs_tol=1e-12)
    if integral(ds):
        assert a.tree.n_leaves == b.tree.n_leaves


@settings(max_examples=150, **SETTINGS)
@given(ds=tiny_data(max_rows=30, max_cols=6), lam=LAMBDAS,
       depths=st.lists(st.sampled_from([None, 1, 2, 3]), min_size=2, max_size=5))
def test_a_solver_reused_across_depths_matches_fresh_solves(ds, lam, depths):
    solver = DPSolver(ds, leaf_penalty=lam)
    for depth in depths:
        again = solver.solve(depth)
        fresh = solve_dp(ds, depth, leaf_penalty=lam)
        assert close(again.objective, fresh.objective), depth


# ------------------------------------------------------------------------------ the depth budget
@settings(max_examples=500, **SETTINGS)
@given(counts=st.lists(st.integers(0, 40), min_size=2, max_size=3), equiv=st.integers(0, 10),
       d=st.integers(0, 8), extra=st.integers(0, 255), pen=st.sampled_from([0.0, 0.5, 1.0, 3.0, 7.5]),
       support=st.booleans(), leaf_bound=st.booleans())
def test_effective_budget_is_canonical_idempotent_and_keeps_every_possible_optimum(counts, equiv, d, extra, pen,
                                                                                    support, leaf_bound):
    K = len(counts)
    leaf = sum(counts) - max(counts)
    equiv = min(equiv, leaf)
    n = d + extra % (2**d - d) if d else 0  # d <= n <= 2^d - 1
    cnt = np.array([*counts, sum(counts), equiv], dtype=float)
    prm = kcommon.Params(n_classes=K, leaf_support=support, leaf_bound=leaf_bound, penalty=pen, tol=1e-9)
    d2, n2 = kcommon.effective_budget(cnt, d, n, prm)
    assert 0 <= d2 <= d and 0 <= n2 <= n and d2 <= n2 <= 2**d2 - 1
    assert tuple(kcommon.effective_budget(cnt, d2, n2, prm)) == (d2, n2)
    if pen > 0 and sum(counts) > 0:
        # a tree with B branch nodes costs >= equiv + pen B; it must beat the leaf to be optimal
        most = max((b for b in range(n + 1) if equiv + pen * b < leaf), default=0)
        assert n2 >= min(most, n) and d2 >= min(most, d)


# --------------------------------------------------------------------------------- options, anytime
def test_no_depth_limit_needs_a_positive_penalty(rng):
    ds = Dataset(rng.integers(0, 2, size=(20, 3)), rng.integers(0, 2, size=20))
    for kwargs in ({}, {"leaf_penalty": 0.0}, {"penalty": 0.0}):
        with pytest.raises(OptionError, match="max_depth=None"):
            solve_dp(ds, None, **kwargs)
    assert solve_dp(ds, None, penalty=2.0).optimal


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"leaf_penalty": -0.1}, "leaf_penalty"), ({"leaf_penalty": math.inf}, "leaf_penalty"),
     ({"leaf_penalty": "x"}, "leaf_penalty"), ({"leaf_penalty": 0.1, "penalty": 1.0}, "not both")],
)
def test_invalid_leaf_penalty_raises_option_error(rng, kwargs, message):
    ds = Dataset(rng.integers(0, 2, size=(20, 3)), rng.integers(0, 2, size=20))
    with pytest.raises(OptionError, match=message):
        solve_dp(ds, 2, **kwargs)


def test_time_limit_without_depth_limit_returns_a_valid_tree_and_bound():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(1500, 60))
    y = ((X[:, :7].sum(axis=1) + rng.integers(0, 3, size=1500)) % 3).astype(int)
    ds = Dataset(X, y)
    res = solve_dp(ds, None, leaf_penalty=0.002, time_limit=0.3)
    assert res.status is Status.TIME_LIMIT and res.stop_reason == "time_limit"
    assert res.objective == pytest.approx(osdt_objective(ds, res.tree, 0.002))
    assert 0.002 <= res.bound <= res.objective
    assert res.seconds < 5
