"""The (fp, fn) Pareto-front DP of [DS21] against brute force, against itself with every technique switched off,
under class swap, and against the MurTree DP (min fp + fn, weighted sums)."""

import math
from dataclasses import fields

import numpy as np
import pytest
from _brute import brute_front
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtmip.core.data import Dataset
from odtmip.core.exceptions import DataError, OptionError
from odtmip.core.results import Status
from odtmip.dp import DPSolver
from odtmip.dp._kernels import _pareto as kp
from odtmip.dp.pareto import ParetoOptions, ParetoSolver

from .strategies import integral, tiny_data

SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
SWITCHES = [f.name for f in fields(ParetoOptions) if f.name != "engine"]  # the technique switches


def pairs_close(a, b):
    return len(a) == len(b) and all(math.isclose(x, u, abs_tol=1e-7) and math.isclose(y, v, abs_tol=1e-7)
                                    for (x, y), (u, v) in zip(a, b, strict=True))


def check_points(front, ds, positive):
    """Every point's tree has the point's (fp, fn), by routing; the points are sorted and non-dominated."""
    pos = ds.y == positive
    for p in front.points:
        pred = p.tree.predict_index(ds.X) == positive
        assert math.isclose(ds.weights[pred & ~pos].sum(), p.fp, abs_tol=1e-7)
        assert math.isclose(ds.weights[~pred & pos].sum(), p.fn, abs_tol=1e-7)
    fps, fns = [p.fp for p in front.points], [p.fn for p in front.points]
    assert fps == sorted(fps) and all(a > b for a, b in zip(fns, fns[1:], strict=False))


@settings(max_examples=150, **SETTINGS)
@given(ds=tiny_data(max_rows=24, max_cols=4, classes=(2,)), depth=st.integers(0, 3))
def test_front_equals_brute_force_at_every_node_budget(ds, depth):
    solver = ParetoSolver(ds)
    for n in range(2**depth):
        brute = brute_front(ds, depth, n)
        front = solver.front(max_depth=depth, max_nodes=n)
        assert front.status is Status.OPTIMAL
        assert pairs_close(front.pairs, [(a, b) for a, b, _ in brute]), (n, front.pairs, brute)
        check_points(front, ds, 1)
        for point, (_, _, fewest) in zip(front.points, brute, strict=True):
            assert point.tree.depth <= depth and point.tree.n_branch_nodes == point.nodes <= n
            if integral(ds):  # each point keeps the fewest branch nodes of any tree reaching it
                assert point.nodes == fewest


@settings(max_examples=60, **SETTINGS)
@given(ds=tiny_data(max_rows=24, max_cols=4, classes=(2,)), depth=st.integers(2, 3),
       off=st.sets(st.sampled_from(SWITCHES), min_size=1))
def test_switching_techniques_off_keeps_the_front(ds, depth, off):
    full = ParetoSolver(ds).front(max_depth=depth)
    plain = ParetoSolver(ds, options=ParetoOptions(**{name: False for name in off})).front(max_depth=depth)
    assert pairs_close(plain.pairs, full.pairs)  # real weights: sums in another order
    check_points(plain, ds, 1)


@settings(max_examples=60, **SETTINGS)
@given(ds=tiny_data(max_rows=24, max_cols=4, classes=(2,)), depth=st.integers(1, 3), data=st.data())
def test_ceiling_returns_the_front_below_it(ds, depth, data):
    full = ParetoSolver(ds).front(max_depth=depth).pairs
    W = float(ds.weights.sum())
    U = data.draw(st.lists(st.tuples(st.floats(0, W), st.floats(0, W)), min_size=1, max_size=3))
    part = ParetoSolver(ds).front(max_depth=depth, ceiling=U).pairs
    assert part == [(a, b) for a, b in full if any(a <= u + 1e-9 and b <= v + 1e-9 for u, v in U)]


@settings(max_examples=60, **SETTINGS)
@given(ds=tiny_data(max_rows=30, max_cols=5, classes=(2,)), depth=st.integers(1, 3))
def test_class_swap_mirrors_the_front(ds, depth):
    a = ParetoSolver(ds, positive=ds.classes_[1]).front(max_depth=depth)
    b = ParetoSolver(ds, positive=ds.classes_[0]).front(max_depth=depth)
    assert pairs_close(a.pairs, sorted((fn, fp) for fp, fn in b.pairs))
    check_points(b, ds, 0)


@settings(max_examples=60, **SETTINGS)
@given(ds=tiny_data(max_rows=30, max_cols=5, classes=(2,)), depth=st.integers(1, 3),
       w=st.sampled_from([1.0, 2.0, 0.5, 3.0]))
def test_weighted_sum_over_the_front_is_the_murtree_optimum(ds, depth, w):
    """min over the front of w fp + fn = the single-objective DP with negatives weighted by w ([DS21] §3)."""
    front = ParetoSolver(ds).front(max_depth=depth)
    reweighted = ds.reweighted(np.where(ds.y == 0, w, 1.0) * ds.weights)
    dp = DPSolver(reweighted).solve(max_depth=depth)
    assert math.isclose(min(w * fp + fn for fp, fn in front.pairs), dp.objective, abs_tol=1e-7)


def test_front_invariants_and_leaf_points(rng):
    X = rng.integers(0, 2, size=(80, 6))
    y = (X[:, 0] ^ X[:, 1] | (rng.random(80) < 0.15)).astype(int)
    ds = Dataset(X, y)
    front = ParetoSolver(ds).front(max_depth=3)
    pairs = front.pairs
    assert pairs[0][0] == 0 and pairs[-1][1] == 0  # the leaves make fp = 0 and fn = 0 reachable
    assert all(0 <= fp <= (y == 0).sum() and 0 <= fn <= (y == 1).sum() for fp, fn in pairs)
    assert min(fp + fn for fp, fn in pairs) == DPSolver(ds).solve(max_depth=3).objective
    assert np.array_equal(front.bound, np.array(pairs))


def test_time_limit_returns_trees_and_a_valid_bound(rng):
    X = rng.integers(0, 2, size=(400, 30))
    y = ((X[:, :6].sum(axis=1) + rng.integers(0, 3, 400)) % 2).astype(int)
    ds = Dataset(X, y)
    front = ParetoSolver(ds).front(max_depth=4, time_limit=0.05)
    assert front.status is Status.TIME_LIMIT and front.stop_reason == "time_limit"
    check_points(front, ds, 1)
    exact = ParetoSolver(ds).front(max_depth=3)  # every depth-3 tree is a depth-4 tree
    for fp, fn in exact.pairs:  # each is >= some bound point
        assert any(a <= fp + 1e-9 and b <= fn + 1e-9 for a, b in front.bound)


def test_kernels_keep_fewest_nodes_and_build_ceilings():
    P = np.zeros((3, kp.NCOL))
    P[:, kp.P_FP], P[:, kp.P_FN], P[:, kp.P_NODES] = [2, 2, 1], [1, 1, 3], [3, 1, 0]
    kept = kp.nondominated(P, 0.0)
    assert kept[:, :3].tolist() == [[1, 3, 0], [2, 1, 1]]
    # the region no point of {(1, 3), (2, 1)} weakly dominates: fp <= 0, or fp <= 1 and fn <= 2, or fn <= 0
    assert kp.tighten(np.array([[np.inf, np.inf]]), kept, 1.0, 0.0).tolist() == [[0, np.inf], [1, 2], [np.inf, 0]]
    assert kp.outside(np.array([[1.0, 4.0], [3.0, 2.0]]), 1.0).tolist() == [[0, 5], [2, 3], [4, 0]]
    assert kp.subtract(np.array([[5.0, 5.0]]), np.array([[1.0, 2.0], [4.0, 0.0]]), 0.0).tolist() == [[1, 5], [4, 3]]


def test_nondominated_keeps_the_first_of_points_equal_within_tol():
    """Points equal within tol with as many nodes (one tree's sums in another order): the first row stands, not the
    one a rounding puts first by fp; fewer nodes still win."""
    P = np.zeros((2, kp.NCOL))
    P[:, kp.P_FP], P[:, kp.P_FN], P[:, kp.P_NODES], P[:, kp.P_FEATURE] = [1.0 + 1e-12, 1.0], [2.0, 2.0], [3, 3], [0, 2]
    assert kp.nondominated(P, 1e-9)[:, kp.P_FEATURE].tolist() == [0]
    assert kp.nondominated(P[::-1].copy(), 1e-9)[:, kp.P_FEATURE].tolist() == [2]
    P[1, kp.P_NODES] = 2
    assert kp.nondominated(P, 1e-9)[:, kp.P_FEATURE].tolist() == [2]


@settings(max_examples=200, **SETTINGS)
@given(points=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 3)), max_size=30))
def test_insert_point_by_point_equals_nondominated(points):
    """The depth-two solver's nd, one point at a time into a work array, is nd of all at once: the
    same (fp, fn) pairs, each with its fewest branch nodes."""
    P = np.zeros((len(points), kp.NCOL))
    F, k = np.empty((len(points) + 1, kp.NCOL)), 0
    for i, (fp, fn, nodes) in enumerate(points):
        P[i, :3] = fp, fn, nodes
        k = kp._insert(F, k, float(fp), float(fn), float(nodes), kp.KIND_TERMINAL, -1, -1.0, -1.0, 0.0, 0.0)
    assert F[:k, :3].tolist() == kp.nondominated(P, 0.0)[:, :3].tolist()


def maximal_by_sorting(P, tol):
    """The definition the ceiling kernels keep: by (fp, fn) descending, a point whose fn exceeds the last kept one's
    by more than tol; returned by fp ascending."""
    kept = []
    for x, y in sorted(map(tuple, P), reverse=True):
        if not kept or y > kept[-1][1] + tol:
            kept.append((x, y))
    return kept[::-1]


finite = st.integers(0, 30).map(lambda v: v / 10)
finite_sets = st.lists(st.tuples(finite, finite), min_size=1, max_size=12)
ceiling_sets = st.lists(st.tuples(finite | st.just(math.inf), finite | st.just(math.inf)), min_size=1, max_size=12)


@settings(max_examples=300, **SETTINGS)
@given(u=ceiling_sets, f=finite_sets, s=finite_sets, tol=st.sampled_from([0.0, 0.1, 0.25]), unit=st.integers(0, 1))
def test_ceiling_kernels_equal_their_definitions(u, f, s, tol, unit):
    """maximal, minimal, tighten, subtract (sweeps and a stack instead of all pairs and a sort) and the lookahead
    test are their definitions over all pairs, within tol as well."""
    U = np.array(maximal_by_sorting(u, tol))
    assert kp.maximal(np.array(u), tol).tolist() == [list(p) for p in U.tolist()]
    S = -np.array(maximal_by_sorting([(-x, -y) for x, y in s], tol)[::-1])  # minimal points, by fp ascending
    assert kp.minimal(np.array(s), tol).tolist() == S.tolist()
    F = np.zeros((0, kp.NCOL))
    for x, y in f:
        F = kp.nondominated(np.vstack((F, [[x, y] + [0.0] * (kp.NCOL - 2)])), tol)
    G = [(F[0, 0] - unit, math.inf)] + [(F[i, 0] - unit, F[i - 1, 1] - unit) for i in range(1, len(F))] + \
        [(math.inf, F[-1, 1] - unit)]
    meet = [(max(min(a, c), 0.0), max(min(b, d), 0.0)) for a, b in U for c, d in G if min(a, c) >= -tol
            and min(b, d) >= -tol]
    assert kp.tighten(U, F, float(unit), tol).tolist() == [list(p) for p in maximal_by_sorting(meet, tol)]
    rest = [(max(a - c, 0.0), max(b - d, 0.0)) for a, b in U for c, d in S if c <= a + tol and d <= b + tol]
    assert kp.subtract(U, S, tol).tolist() == [list(p) for p in maximal_by_sorting(rest, tol)]
    assert kp.infeasible_merge(S, F, U, tol) == kp.infeasible(kp.merge_bounds(S, F[:, :2].copy(), 0.0), U, tol)


@settings(max_examples=100, **SETTINGS)
@given(ds=tiny_data(max_rows=40, max_cols=5, classes=(2,)), depth=st.integers(1, 2), nodes=st.integers(1, 3))
def test_depth_two_buckets_equal_insertion(ds, depth, nodes):
    """With unit weights the depth-two solver keeps its fronts in fp buckets (the children's as integer codes);
    read as real weights it inserts point by point: the same points, each with its fewest branch nodes and the
    same tree (the first candidate offered of equal ones)."""
    solver = ParetoSolver(Dataset(ds.X, ds.y))
    data, out = solver._dp._data, []
    for unit in (True, False):
        F, complete = kp.depth_two_front(solver._dp._root, solver._pos_bits, np.ones_like(data.weights), unit,
                                         data.row_start, data.row_features, depth, nodes, 0.0, np.inf,
                                         np.zeros(kp.N_PARETO_STATS, dtype=np.int64), *solver._counts)
        assert complete
        out.append(F.tolist())
    assert out[0] == out[1]


def test_bad_input_is_one_line_error():
    X = np.array([[0], [1], [0]])
    with pytest.raises(DataError, match="two classes"):
        ParetoSolver(Dataset(X, [0, 1, 2]))
    with pytest.raises(DataError, match="positive label 'x' is not a class"):
        ParetoSolver(Dataset(X, [0, 1, 1]), positive="x")
    with pytest.raises(OptionError, match="ceiling"):
        ParetoSolver(Dataset(X, [0, 1, 1])).front(max_depth=1, ceiling=[(-1, 2)])


def test_integer_weights_are_exact(rng):
    X = rng.integers(0, 2, size=(40, 4))
    y = rng.integers(0, 2, size=40)
    ds = Dataset(X, y, rng.integers(1, 4, size=40).astype(float))
    assert integral(ds)
    front = ParetoSolver(ds).front(max_depth=2)
    assert front.stats["tolerance"] == 0
    assert [(a, b) for a, b, _ in brute_front(ds, 2)] == front.pairs


@pytest.mark.parametrize("seed", [100, 101, 103])
def test_depth_four_front_equals_brute_force(seed):
    """Depth 4: subproblems of depth 3 are searched under ceilings and stored as bounds, unlike at depth <= 3."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(40, 5))
    y = rng.integers(0, 2, size=40)
    ds = Dataset(X, y)
    assert ParetoSolver(ds).front(max_depth=4).pairs == [(a, b) for a, b, _ in brute_front(ds, 4)]


@settings(max_examples=40, **SETTINGS)
@given(ds=tiny_data(max_rows=24, max_cols=4, classes=(2,)), depth=st.integers(2, 4))
def test_a_store_that_must_grow_keeps_the_front(ds, depth):
    """A full store (keys, entries, points, bounds) makes the compiled search stop, grow it and search again."""
    full = ParetoSolver(ds).front(max_depth=depth)
    small = ParetoSolver(ds)
    small._store = kp.new_store(small._store.cache.keys.shape[1], n_keys=2, n_rows=2)
    front = small.front(max_depth=depth)
    assert front.status is Status.OPTIMAL and pairs_close(front.pairs, full.pairs)
    assert [p.nodes for p in front.points] == [p.nodes for p in full.points]
    check_points(front, ds, 1)


@settings(max_examples=60, **SETTINGS)
@given(ds=tiny_data(max_rows=30, max_cols=5, classes=(2,)), depth=st.integers(2, 4), limit=st.integers(1, 80))
def test_a_stopped_search_returns_trees_and_a_valid_bound(ds, depth, limit):
    """Stopped after ``limit`` subproblems (the node limit stops the search as the deadline does, repeatably): every
    point is a tree with its pair, at or above the front, and every tree's pair is >= some point of the bound."""
    solver = ParetoSolver(ds)
    solver._params = solver._params._replace(node_limit=limit)
    front = solver.front(max_depth=depth)
    exact = ParetoSolver(ds).front(max_depth=depth).pairs
    check_points(front, ds, 1)
    for fp, fn in front.pairs:
        assert any(a <= fp + 1e-9 and b <= fn + 1e-9 for a, b in exact)
    for fp, fn in exact:
        assert any(a <= fp + 1e-9 and b <= fn + 1e-9 for a, b in front.bound)
    if front.status is Status.OPTIMAL:
        assert pairs_close(front.pairs, exact)
    else:
        assert front.stop_reason == "time_limit"
