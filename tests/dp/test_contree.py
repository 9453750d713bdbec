"""ConTree ([ConTree] Eq. 2-13) against brute force and against the MurTree DP on the all-midpoint encoding."""

import json
import math
import time
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from _brute import brute_force
from _data import SEPARABLE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtmip.core.data import Dataset
from odtmip.core.exceptions import DataError, OptionError
from odtmip.core.results import Status
from odtmip.dp import anytime, contree, solve_dp
from odtmip.dp._kernels import _interpreted
from odtmip.dp._kernels._contree import INDEXED_SCAN_ROWS, LABEL_MAX, new_work
from odtmip.dp.contree import ContreeOptions, ContreeSolver, ordered_features, solve_contree

SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
PENALTIES = st.sampled_from([0.0, 0.0, 1.0, 2.5])
MIN_LEAF = st.sampled_from([1, 1, 1, 2, 3])

#: The technique switches (every option but the engine); each off alone, then all of them off.
SWITCHES = [name for name in ContreeOptions.__dataclass_fields__ if name != "engine"]
SWITCHES_OFF = [ContreeOptions(**{name: False}) for name in SWITCHES] + [
    ContreeOptions(**{name: False for name in SWITCHES})]


@st.composite
def numeric_data(draw, max_rows=24, max_cols=3, max_values=6, classes=(2, 3)):
    """Numeric columns with few distinct values (ties), K in ``classes``, no / integer / real weights."""
    n = draw(st.integers(2, max_rows))
    p = draw(st.integers(1, max_cols))
    K = draw(st.sampled_from(classes))
    kind = draw(st.sampled_from(["none", "integer", "real"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.integers(0, draw(st.integers(2, max_values)), size=(n, p)) * 1.5 + rng.random(p)
    y = rng.integers(0, K, size=n)
    y[:2] = [0, 1]
    w = None
    if kind == "integer":
        w = rng.integers(1, 5, size=n).astype(float)
    elif kind == "real":
        w = rng.random(n) + 0.05
    return X, y, w


def midpoints(X, y, w):
    """The same data, its numeric columns encoded by every midpoint (the MurTree DP's binary columns)."""
    return Dataset(X, y, w, numeric="thresholds")


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-7)


@settings(max_examples=300, **SETTINGS)
@given(data=numeric_data(), depth=st.integers(0, 4), min_leaf=MIN_LEAF, penalty=PENALTIES)
def test_equals_murtree_dp_on_all_midpoints(data, depth, min_leaf, penalty):
    ds = midpoints(*data)
    con = solve_contree(ds, depth, min_leaf, penalty)
    dp = solve_dp(ds, depth, None, min_leaf, penalty)
    assert (con.tree is None) == (dp.tree is None)
    if dp.tree is not None:
        assert con.status is Status.OPTIMAL and con.bound == con.objective
        assert close(con.objective, dp.objective), (con.objective, dp.objective)
        assert con.tree.depth <= depth


@settings(max_examples=150, **SETTINGS)
@given(data=numeric_data(max_rows=9, max_cols=2, max_values=4), depth=st.integers(1, 2), min_leaf=MIN_LEAF,
       penalty=PENALTIES)
def test_equals_brute_force(data, depth, min_leaf, penalty):
    ds = midpoints(*data)
    best = brute_force(ds, depth, min_leaf, penalty)[2**depth - 1]
    con = solve_contree(ds, depth, min_leaf, penalty)
    if best is None:
        assert con.tree is None
    else:
        assert close(con.objective, best[0]), (con.objective, best[0])


@settings(max_examples=60, **SETTINGS)
@given(data=numeric_data(max_rows=30, max_cols=3, max_values=8), depth=st.integers(1, 3), penalty=PENALTIES,
       min_leaf=MIN_LEAF)
def test_every_switch_off_keeps_the_optimum(data, depth, penalty, min_leaf):
    ds = midpoints(*data)
    base = solve_contree(ds, depth, min_leaf, penalty).objective
    for options in SWITCHES_OFF:
        res = solve_contree(ds, depth, min_leaf, penalty, options=options)
        assert close(res.objective, base), (options, res.objective, base)


def searched(res):
    """What a search found and how: objective, tree and its counters (not its seconds)."""
    return (res.objective, None if res.tree is None else res.tree.to_dict(),
            {key: value for key, value in res.stats.items() if not key.endswith("seconds")})


@settings(max_examples=40, **SETTINGS)
@given(data=numeric_data(max_rows=30, max_cols=3, max_values=8), depth=st.integers(1, 3), penalty=PENALTIES,
       min_leaf=MIN_LEAF)
def test_the_scan_indexed_by_side_searches_node_for_node_as_the_scan_written_out(data, depth, penalty, min_leaf):
    """best_stumps has two forms (the sides' state in arrays, or in variables of their own); the interpreted kernels
    read INDEXED_SCAN_ROWS when they run, so with it at 0 every node is scanned indexed."""
    ds = midpoints(*data)
    interpreted = ContreeOptions(engine="interpreted")
    space = _interpreted.kernels()["_contree"].solve_subtree.__globals__  # the interpreted module's globals
    apart = ContreeSolver(ds, min_leaf=min_leaf, penalty=penalty, options=interpreted).solve(depth)
    with mock.patch.dict(space, INDEXED_SCAN_ROWS=0):
        indexed = ContreeSolver(ds, min_leaf=min_leaf, penalty=penalty, options=interpreted).solve(depth)
    assert searched(indexed) == searched(apart)


@pytest.mark.parametrize("depth", [2, 3])
def test_nodes_of_many_rows_scanned_indexed_by_side_keep_the_optimum(rng, depth):
    n = INDEXED_SCAN_ROWS + 808  # the root and its children's depth-two searches scan indexed by side
    X = rng.integers(0, 12, size=(n, 3)) * 0.5
    y = (X[:, 0] + X[:, 1] > 5).astype(int) + (X[:, 2] > 4).astype(int)
    noise = rng.random(n) < 0.3
    y[noise] = rng.integers(0, 3, size=noise.sum())
    ds = midpoints(X, y, rng.random(n) + 0.5)
    con = solve_contree(ds, depth)
    assert close(con.objective, solve_dp(ds, depth).objective)
    assert con.status is Status.OPTIMAL and con.stats["depth_two_evaluations"] > 0


def test_three_classes_weighted_depth_three(rng):
    X = rng.normal(size=(120, 4)).round(1)
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)
    y[rng.random(120) < 0.2] = 2
    w = rng.integers(1, 6, size=120).astype(float)
    ds = midpoints(X, y, w)
    con = solve_contree(ds, 3)
    assert con.objective == solve_dp(ds, 3).objective
    assert con.stats["tolerance"] == 0.0  # integer weights: exact arithmetic


def test_mixed_numeric_categorical_and_missing_equals_dp(rng):
    n = 60
    frame = pd.DataFrame({
        "size": rng.normal(size=n).round(1),
        "colour": rng.choice(["red", "green", "blue"], size=n),
        "flag": rng.integers(0, 2, size=n),
        "age": np.where(rng.random(n) < 0.2, np.nan, rng.integers(20, 30, size=n)),
    })
    y = ((frame["size"] > 0) ^ (frame["colour"] == "red") | frame["age"].isna()).astype(int).to_numpy().copy()
    y[rng.random(n) < 0.15] ^= 1
    ds = Dataset(frame, y, numeric="thresholds")
    space = ordered_features(ds)
    assert space.numeric == 2 and len(space.ranks) == 2 + 3 + 1 + 1  # + one-hot colours, flag, "age is missing"
    for depth in (1, 2, 3):
        assert solve_contree(ds, depth).objective == solve_dp(ds, depth).objective
    # the split space is the raw columns' midpoints whatever the numeric encoding chose
    assert solve_contree(Dataset(frame, y), 2).objective == solve_contree(ds, 2).objective


def test_the_time_limit_counts_the_sorting_of_the_rows(rng):
    # ContreeSolver sorts the rows by every feature when it is made (1.1 s at 10^6 rows x 10 columns); the limit of
    # solve_contree covers that, and the search gets what is left (here nothing: a sliver)
    X = rng.random((200, 3)).round(2)
    ds = Dataset(X, (X[:, 0] > 0.5).astype(int))
    real_sort, real_solve, given = contree.ordered_features, ContreeSolver.solve, []

    def slow_sort(dataset):
        time.sleep(0.3)
        return real_sort(dataset)

    def solve(self, max_depth, time_limit, *args):  # (kernels not yet loaded: their warm-up solves come after)
        given.append(time_limit)
        return real_solve(self, max_depth, time_limit, *args)

    with mock.patch.object(contree, "ordered_features", slow_sort), mock.patch.object(ContreeSolver, "solve", solve):
        res = solve_contree(ds, 2, time_limit=0.2)
    assert given[0] == 1e-6 and res.seconds >= res.stats["preprocess_seconds"] >= 0.3
    assert res.tree is not None and res.objective <= float(min((ds.y == 0).sum(), (ds.y == 1).sum()))


def test_time_limit_returns_a_verified_tree_and_a_valid_bound(rng):
    X = rng.random((1500, 6)).round(3)
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0.7).astype(int)
    y[rng.random(1500) < 0.2] ^= 1
    res = solve_contree(Dataset(X, y), max_depth=4, time_limit=0.3)
    assert res.status is Status.TIME_LIMIT and res.stop_reason == "time_limit"
    assert res.tree is not None and res.tree.depth <= 4
    assert res.objective == Dataset(X, y).misclassifications(res.tree)
    best2 = solve_contree(Dataset(X, y), max_depth=2).objective
    assert 0.0 <= res.bound <= best2 - 0  # a depth-4 tree is never worse than the depth-2 optimum


def _stops(ds, depth, penalty=0.0, options=None, threads=1):
    """(optimum, stops): the search solved without a limit, and the same search stopped after 1, 2, 3, ... nodes
    (10 % more each time) until it finishes, as (bound, objective) per stop; each stop is checked: a verified tree
    (by the solver) and a bound between the optimum and the returned objective. (Doubling missed the stops in the
    second-to-last feature, whose bound took the features after it as searched.) With ``threads`` > 1 each thread
    stops at its share of the nodes, wherever the others are."""
    optimum = solve_contree(ds, depth, penalty=penalty, options=options)
    stops, limit = [], 1
    while True:
        solver = ContreeSolver(ds, penalty=penalty, options=options, threads=threads)
        solver._node_limit = limit
        res = solver.solve(depth)
        if res.status is Status.OPTIMAL:
            assert close(res.objective, optimum.objective)
            return optimum, stops
        assert res.status is Status.TIME_LIMIT
        assert res.bound <= optimum.objective + 1e-9 <= res.objective + 2e-9
        stops.append((res.bound, res.objective))
        limit += max(1, limit // 10)


@pytest.mark.parametrize("penalty", [0.0, 1.5])
@pytest.mark.parametrize("weights", ["none", "real"])
@pytest.mark.parametrize("improve_nodes", [anytime.IMPROVE_NODES, 0])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_search_stopped_anywhere_returns_a_valid_bound(penalty, weights, improve_nodes, threads):
    # improve_nodes=0: bound passes right after the greedy tree, so stops fall into them too
    rng = np.random.default_rng(3)
    X = rng.random((80, 3)).round(2)
    y = (X[:, 0] + X[:, 1] > 1).astype(int) ^ (rng.random(80) < 0.2)
    ds = Dataset(X, y, None if weights == "none" else rng.random(80) + 0.5)
    with mock.patch.object(anytime, "IMPROVE_NODES", improve_nodes):
        _, stops = _stops(ds, 3, penalty, threads=threads)
    assert len(stops) >= 10 and any(bound > 0 for bound, _ in stops)


@pytest.mark.parametrize("weights", ["none", "real"])
def test_bound_passes_raise_the_bound_of_a_stopped_search_before_the_proof(weights):
    # The same search stopped ever later: the bound never falls and the objective never rises. With bound passes
    # far more stops have a bound between 0 and the optimum: without them the root's bound rises above 0 only in
    # its last feature.
    rng = np.random.default_rng(4)
    X = rng.random((200, 4)).round(3)
    y = ((X[:, 0] + X[:, 1] > 1) ^ (X[:, 2] > 0.6)).astype(int) ^ (rng.random(200) < 0.2)
    ds = Dataset(X, y, None if weights == "none" else rng.random(200) + 0.5)
    between = {}
    for passes in (True, False):
        with mock.patch.object(anytime, "IMPROVE_NODES", 64):
            optimum, stops = _stops(ds, 3, options=ContreeOptions(bound_passes=passes))
        bounds, objectives = [b for b, _ in stops], [o for _, o in stops]
        assert bounds == sorted(bounds) and objectives == sorted(objectives, reverse=True)
        between[passes] = [b for b in bounds if 0 < b < optimum.objective - 1e-9]
    assert len(between[True]) >= 5 + 2 * len(between[False]), between


@settings(max_examples=100, **SETTINGS)
@given(data=numeric_data(max_rows=40, max_cols=3, max_values=10), depth=st.integers(3, 4), min_leaf=MIN_LEAF,
       penalty=PENALTIES)
def test_bound_passes_from_the_first_node_keep_the_optimum(data, depth, min_leaf, penalty):
    # every pass that finds no tree proves its bound, the first that finds one has the optimum
    ds = midpoints(*data)
    dp = solve_dp(ds, depth, None, min_leaf, penalty)
    with mock.patch.object(anytime, "IMPROVE_NODES", 0):
        con = solve_contree(ds, depth, min_leaf, penalty, time_limit=3600.0)  # a limit keeps the passes
    assert (con.tree is None) == (dp.tree is None)
    if dp.tree is not None:
        assert con.status is Status.OPTIMAL and con.bound == con.objective
        assert close(con.objective, dp.objective), (con.objective, dp.objective)


def test_the_bound_of_a_stop_after_the_first_root_threshold():
    # One feature, stopped after the root's first threshold (the middle one, x <= 19): the thresholds left lie
    # right of it, at least L + penalty, or left of it, at least R + penalty (SP, Theorem 3); L and R are the
    # children's depth-one optima.
    rng = np.random.default_rng(5)
    X = np.arange(40.0).reshape(-1, 1)
    y = rng.integers(0, 2, size=40)
    left, right = (solve_contree(Dataset(X[part], y[part]), 1, penalty=1.0).objective
                   for part in (slice(0, 20), slice(20, 40)))
    solver = ContreeSolver(Dataset(X, y), penalty=1.0)
    solver._node_limit = 2  # the root's node, then its first threshold
    res = solver.solve(2)
    best = min(float(min(np.bincount(y))), left + right + 1.0)
    assert res.status is Status.TIME_LIMIT and res.objective == best
    assert res.bound == min(best, left + 1.0, right + 1.0) > 0


@pytest.mark.parametrize("threads", [1, 2])
def test_memory_limit_refuses_arrays_and_stops_a_growing_cache(monkeypatch, threads):
    from odtmip.core.exceptions import ResourceError
    from odtmip.dp import contree

    rng = np.random.default_rng(4)
    X = rng.random((200, 3)).round(2)
    y = (X[:, 0] > X[:, 1]).astype(int) ^ (rng.random(200) < 0.2)
    ds = Dataset(X, y)
    with pytest.raises(ResourceError, match="memory_limit = 0.0001 GiB"):
        solve_contree(ds, 3, memory_limit=1e-4, threads=threads)
    optimum = solve_contree(ds, 3).objective
    monkeypatch.setattr(contree, "_table_sizes", lambda words: (4, 8))  # a cache that must grow at once
    arrays = contree.work_memory_gib(3, 3, 200, threads)  # each thread's scratch
    # the compiled kernels: first in a new environment the interpreter searches, in one thread with one scratch
    compiled = ContreeOptions(engine="compiled")
    grown = solve_contree(ds, 3, memory_limit=arrays + 0.001, threads=threads, options=compiled)  # room to grow
    assert grown.status is Status.OPTIMAL and grown.objective == optimum and grown.stats["cache_grows"] > 0
    # the first tables fit, twice them do not
    res = solve_contree(ds, 3, memory_limit=arrays + 2e-6, threads=threads, options=compiled)
    assert res.status is Status.MEMORY_LIMIT and res.stop_reason == "memory_limit"
    assert res.tree is not None and res.objective == ds.misclassifications(res.tree)
    assert res.bound <= optimum <= res.objective


@pytest.mark.parametrize("depth, threads, shared", [(3, 1, False), (2, 2, True), (4, 3, False)])
def test_the_memory_estimate_is_the_bytes_of_the_arrays_made(depth, threads, shared):
    rng = np.random.default_rng(2)
    n = 1000
    X = np.column_stack([rng.random(n).round(3), rng.integers(0, 2, n), rng.normal(size=n)])
    features = ordered_features(Dataset(X, rng.integers(0, 3, n)))
    F = len(features.ranks)
    first = new_work(depth, F, n, 3, memo=shared)
    works = [first] + [new_work(depth, F, n, 3, first if shared else None, memo=shared) for _ in range(threads - 1)]
    large = ("rows", "vals", "labs", "wts", "side", "pos", "cw", "rec", "queue", "keys", "memo")
    made = {id(getattr(w, a)): getattr(w, a).nbytes for w in works for a in large}  # shared arrays once
    made = sum(made.values()) + features.ranks.nbytes + features.order.nbytes
    assert contree.work_memory_gib(depth, F, n, threads, shared) * 2**30 == made


def test_more_classes_than_the_sorted_levels_hold_is_a_one_line_error():
    n = LABEL_MAX + 1
    ds = Dataset(np.arange(n, dtype=float).reshape(-1, 1), [f"c{i}" for i in range(n)])
    with pytest.raises(DataError, match=f"ConTree takes at most {LABEL_MAX:,} classes, the data has {n:,}"):
        solve_contree(ds, 1)


def test_the_greedy_tree_reads_the_root_splits_that_ordered_the_features(monkeypatch):
    from odtmip.dp._kernels import _contree as kcontree

    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 4)).round(2)
    y = (X[:, 0] + X[:, 1] ** 2 + rng.normal(size=500) > 0.5).astype(int)
    compiled = ContreeOptions(engine="compiled")
    contree.warm_up()  # its solves call them too
    rows = []  # of each call of CART's splits
    real = kcontree.cart_thresholds
    monkeypatch.setattr(kcontree, "cart_thresholds", lambda *a: rows.append(len(a[2])) or real(*a))
    again = ContreeSolver(Dataset(X, y), options=compiled)
    again._root_cart = None  # the greedy computes CART's root splits itself
    expected = again.solve(3)
    assert rows == [500, 500]  # the features' order, the greedy's root (below it depth-two optima)
    rows.clear()
    res = ContreeSolver(Dataset(X, y), options=compiled).solve(3)
    assert rows == [500]
    assert res.stats["greedy_objective"] == expected.stats["greedy_objective"]
    assert (res.objective, res.tree) == (expected.objective, expected.tree)


def test_breast_cancer_depth_two_is_22():
    from odtmip.core.datasets import load

    X, y = load("breast-cancer")
    res = solve_contree(Dataset(X, y), max_depth=2)  # the default (bucket) encoding does not matter
    assert res.status is Status.OPTIMAL and res.objective == 22.0


@pytest.mark.parametrize("kwargs, message", [
    ({"max_depth": -1}, "max_depth"),
    ({"max_depth": 2.5}, "max_depth"),
    ({"penalty": -1.0}, "penalty"),
    ({"min_leaf": 0}, "min_leaf"),
    ({"time_limit": 0}, "time_limit"),
    ({"options": {"depth_two": False}}, "ContreeOptions"),
])
def test_bad_options_are_one_line_errors(kwargs, message):
    ds = Dataset(np.array([[0.5], [1.5], [2.5]]), [0, 1, 0])
    with pytest.raises(OptionError, match=message):
        solve_contree(ds, **kwargs)


def test_constant_columns_and_too_few_rows():
    ds = Dataset(np.array([[1.0], [1.0], [1.0]]), [0, 1, 1])
    res = solve_contree(ds, 3)
    assert res.status is Status.OPTIMAL and res.objective == 1.0 and res.tree.n_branch_nodes == 0
    assert ContreeSolver(ds, min_leaf=4).solve(2).status is Status.INFEASIBLE


def test_solve_and_command_line(capsys):
    import json

    from odtmip import solve
    from odtmip.cli import main
    from odtmip.core.datasets import load

    X, y = load("breast-cancer")
    res = solve(Dataset(X, y), "contree", max_depth=2, max_gap=0.01)
    assert res.objective == 22.0 and res.bound == 22.0  # ceil(0.99 x 22) = 22: the gap closes on integers
    with pytest.raises(OptionError, match="max_gap"):
        solve(Dataset(X, y), "contree", max_gap=1.0)
    assert main(["fit", "breast-cancer", "--solver", "contree", "--depth", "2", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["status"] == "optimal" and record["misclassifications"] == 22.0
    assert record["split_space"].startswith("every midpoint of 30 numeric column(s)")


@settings(max_examples=40, **SETTINGS)
@given(data=numeric_data(max_rows=30, max_values=8), depth=st.integers(2, 3), gap=st.sampled_from([0.1, 0.3, 0.6]))
def test_relative_gap_bounds_the_optimum(data, depth, gap):
    ds = midpoints(*data)
    opt = solve_contree(ds, depth).objective
    res = solve_contree(ds, depth, max_gap=gap)
    assert res.bound <= opt + 1e-9 <= res.objective + 2e-9
    assert res.objective * (1 - gap) <= opt + 1e-7


def test_default_dp_searches_every_threshold_and_buckets_stay_a_choice():
    from odtmip import solve
    from odtmip.core.datasets import load

    X, y = load("breast-cancer")
    exact = solve(Dataset(X, y), "dp", max_depth=2)  # numeric="auto": every threshold (ConTree)
    buckets = solve(Dataset(X, y, numeric="buckets"), "dp", max_depth=2)
    assert exact.objective == 22.0 and buckets.objective == 98.0  # the deciles' optimum (issue #12)
    assert "every midpoint" in exact.stats["split_space"] and "quantile buckets" in buckets.stats["split_space"]
    # a problem ConTree does not take (a node limit) goes to the MurTree DP on every midpoint
    small = Dataset(X.iloc[:80, :3], y[:80])
    limited = solve(small, "dp", max_depth=2, max_nodes=2)
    assert limited.objective == solve(Dataset(X.iloc[:80, :3], y[:80], numeric="thresholds"), "dp", max_depth=2,
                                      max_nodes=2).objective
    assert "every midpoint" in limited.stats["split_space"]


def test_midpoint_columns_refuse_a_matrix_too_large(monkeypatch):
    from odtmip import solve
    from odtmip.core.exceptions import ResourceError
    from odtmip.dp import contree

    monkeypatch.setattr(contree, "MAX_MIDPOINT_CELLS", 100)
    ds = Dataset(np.arange(40.0).reshape(20, 2), [0, 1] * 10)
    with pytest.raises(ResourceError, match="38 binary columns for 20 rows"):
        solve(ds, "dp", max_depth=2, max_nodes=2)


#: Routes of the "dp" solver: ConTree (default encoding, a penalty), the MurTree DP on the threshold columns or on
#: every midpoint (a node limit, a leaf penalty, a metric); (solver, encoding, options, optimum of a tree with s
#: splits and no error).
ROUTES = {"auto": ("dp", {}, {}, lambda s: 0.0), "thresholds": ("dp", {"numeric": "thresholds"}, {}, lambda s: 0.0),
          "contree": ("contree", {}, {}, lambda s: 0.0), "penalty": ("dp", {}, {"penalty": 0.25}, lambda s: 0.25 * s),
          "max_nodes": ("dp", {}, {"max_nodes": 3}, lambda s: 0.0),
          "leaf_penalty": ("dp", {}, {"leaf_penalty": 0.125}, lambda s: 0.125 * (s + 1)),
          "metric": ("dp", {}, {"metric": "accuracy"}, lambda s: 0.0)}


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("x, y, depth", SEPARABLE.values(), ids=SEPARABLE)
def test_thresholds_separate_adjacent_and_huge_values(x, y, depth, route):
    from odtmip import solve
    from odtmip.core.tree import Tree

    solver, encoding, options, optimum = ROUTES[route]
    ds = Dataset(pd.DataFrame({"x": x}), y, **encoding)
    res = solve(ds, solver, max_depth=depth, **options)
    splits = [node.split for node in res.tree.nodes if not node.is_leaf]
    assert res.status is Status.OPTIMAL and len(splits) == len(x) - 1 and ds.misclassifications(res.tree) == 0
    assert res.objective == optimum(len(splits))
    assert all(math.isfinite(s.threshold) for s in splits)
    assert Tree.from_dict(json.loads(res.tree.to_json())) == res.tree  # the JSON keeps the exact thresholds
