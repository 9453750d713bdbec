"""Search threads (the ``threads`` option) of the DP and of ConTree: two threads return the same optimum and the same
tree as one, a search stopped in any thread count keeps the anytime guarantees, and the option is checked.

No test here asserts a time or a speed-up (benchmarks/threads.py measures them)."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtmip.core.data import Dataset
from odtmip.core.exceptions import OptionError
from odtmip.core.options import usable_cores, validate
from odtmip.core.results import Status
from odtmip.dp import DPOptions, DPSolver, contree, solve_dp
from odtmip.dp._kernels import _cache as kc
from odtmip.dp._kernels._common import S_HELPS
from odtmip.dp._kernels._search import NO_BOUND_NODES
from odtmip.dp.contree import ContreeOptions, solve_contree

from .strategies import tiny_data
from .test_exact import TOGGLES, noisy_xor

SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
COMPILED = DPOptions(engine="compiled")


def _solve(ds, threads, depth, options=COMPILED, **kw):
    return DPSolver(ds, options=options, threads=threads, **kw).solve(max_depth=depth)


def assert_same(one, two):
    """The same status, objective, bound and tree (the tie rule of one thread reproduced by two)."""
    assert two.stats["threads"] == 2 and one.stats["threads"] == 1
    assert one.status is two.status
    assert one.objective == two.objective and one.bound == two.bound
    assert one.tree == two.tree


@settings(max_examples=150, **SETTINGS)
@given(ds=tiny_data(max_rows=40, max_cols=7), depth=st.integers(3, 4), min_leaf=st.sampled_from([1, 1, 2]),
       penalty=st.sampled_from([0.0, 0.0, 0.5, 2.25]), fewest=st.booleans())
def test_two_threads_return_the_tree_of_one(ds, depth, min_leaf, penalty, fewest):
    options = DPOptions(engine="compiled", fewest_nodes=fewest)
    one = _solve(ds, 1, depth, options, min_leaf=min_leaf, penalty=penalty)
    assert_same(one, _solve(ds, 2, depth, options, min_leaf=min_leaf, penalty=penalty))


@pytest.mark.parametrize("options", TOGGLES[:-1], ids=repr)
@pytest.mark.parametrize("seed", [0, 1])
def test_two_threads_return_the_tree_of_one_under_every_switch(options, seed):
    ds = noisy_xor(seed)
    options = DPOptions(**{**options.__dict__, "engine": "compiled"})
    assert_same(_solve(ds, 1, 4, options), _solve(ds, 2, 4, options))


@pytest.mark.parametrize("fewest", [True, False])
def test_two_threads_return_the_tree_of_one_at_depth_five(fewest):
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, size=(300, 14))
    y = ((X[:, 0] & X[:, 1]) ^ X[:, 2] ^ (X[:, 3] & X[:, 4]) ^ (rng.random(300) < 0.15)).astype(int)
    options = DPOptions(engine="compiled", fewest_nodes=fewest)
    assert_same(_solve(Dataset(X, y), 1, 5, options), _solve(Dataset(X, y), 2, 5, options))


@pytest.mark.parametrize("leaf_penalty, depth", [(0.01, 5), (0.02, None)])
def test_two_threads_return_the_tree_of_one_on_the_sparse_objective(leaf_penalty, depth):
    ds = noisy_xor(3)
    assert_same(_solve(ds, 1, depth, leaf_penalty=leaf_penalty), _solve(ds, 2, depth, leaf_penalty=leaf_penalty))


def test_threads_fill_and_grow_one_shared_cache():
    ds = noisy_xor(4)
    one = _solve(ds, 1, 4)
    solver = DPSolver(ds, options=COMPILED, threads=2)
    solver._cache = kc.new_tables(solver._key_words, n_keys=2, n_entries=2)  # every thread fills it many times
    two = solver.solve(max_depth=4)
    assert two.stats["cache_grows"] > 3
    assert_same(one, two)


@pytest.mark.parametrize("penalty, depth", [(0.0, 4), (1.0, 5)])
def test_a_search_stopped_anywhere_in_two_threads_keeps_the_anytime_guarantees(penalty, depth):
    rng = np.random.default_rng(11)
    X = rng.integers(0, 2, size=(160, 10))
    y = (X[:, 0] ^ X[:, 1] ^ (X[:, 2] & X[:, 3]) ^ (rng.random(160) < 0.2)).astype(int)
    ds = Dataset(X, y)
    optimum = _solve(ds, 1, depth, penalty=penalty)
    tol = 1e-9 * max(1.0, optimum.objective)
    stops, limit = 0, 1
    while True:
        solver = DPSolver(ds, options=COMPILED, threads=2, penalty=penalty)
        solver._params = solver._params._replace(node_limit=limit)
        res = solver.solve(max_depth=depth)
        if res.status is Status.OPTIMAL:
            assert res.objective == optimum.objective and res.tree == optimum.tree
            break
        assert res.status is Status.TIME_LIMIT
        # never worse than the greedy tree (itself never worse than CART), and a valid bound
        assert res.objective <= res.stats["greedy_objective"] + tol
        assert res.bound <= optimum.objective + tol <= res.objective + 2 * tol
        assert math.isclose(res.objective, ds.misclassifications(res.tree) + penalty * res.tree.n_branch_nodes)
        stops += 1
        limit += max(1, limit // 4)
    assert stops >= 3


def test_a_thread_with_no_root_feature_left_helps_one_still_searched():
    take = kc.take_root_feature
    cache, root = kc.new_tables(1), kc.new_root(True, 3)
    assert take(cache, root, -1) == (0, False) and take(cache, root, -1) == (1, False)  # threads A and B
    assert take(cache, root, 0) == (2, False)  # A has searched 0: it takes 2, the last
    assert take(cache, root, 1) == (2, True)  # B has searched 1: it helps A at 2
    assert take(cache, root, -1) == (3, False)  # a third: 2 has its helper, nothing left
    assert take(cache, root, 2) == (3, False) and take(cache, root, 2) == (3, False)  # A and B end
    assert root[kc.N_ROOT:].tolist() == [kc.WORK_FREE] * 3


@pytest.mark.parametrize("fewest", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_helper_finds_the_best_tree_on_the_root_feature_it_helps_with(seed, fewest):
    """A thread that helps at root feature j searches it the other way round (the other child first, the features
    below the root in descending order, under the threshold of the leaf and of the best tree of all threads, not of
    its own last feature): it returns the best tree with root split j, or of its own feature, the last, searched
    first, as the children's optima solved apart give them; and it leaves nothing in the cache that makes one thread
    return another tree (of equal trees a helper may find another first)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(120, 8))
    y = (X[:, 0] ^ (X[:, 6] & X[:, 7]) ^ (rng.random(120) < 0.1)).astype(int)  # the last features count
    options = DPOptions(engine="compiled", fewest_nodes=fewest)
    depth = 4

    def split(solver, j):  # (objective, nodes) of the best tree with root split j
        column = solver._enc.X[:, j].astype(bool)
        children = [DPSolver(Dataset(solver._enc.X[rows], y[rows]), options=options, threads=1).solve(depth - 1)
                    for rows in (~column, column)]
        return sum(c.objective for c in children), 1 + sum(c.tree.n_branch_nodes for c in children)

    one = DPSolver(Dataset(X, y), options=options, threads=1).solve(max_depth=depth).tree
    for j in range(0, 7, 3):
        for owns_last in (False, True):
            solver = DPSolver(Dataset(X, y), options=options, threads=1)
            p = solver._p
            root = kc.new_root(True, p)
            root[kc.ROOT_NEXT], root[kc.N_ROOT + j] = p - owns_last, kc.WORK_ONE  # j taken by another thread
            search = solver._thread_search(0, depth, solver._params, root)
            cost, nodes, _ = solver._k.search.solve_node(search, 0, 0, depth, 15, math.inf, NO_BOUND_NODES)
            assert search.st[S_HELPS] == 1 and root[kc.N_ROOT + j] == kc.WORK_FREE
            trees = [(float(min(np.bincount(y, minlength=2))), 0)] + [split(solver, p - 1)] * owns_last + \
                [split(solver, j)]
            best = min(trees) if fewest else min(trees, key=lambda t: t[0])
            assert cost == best[0] and (nodes == best[1] or not fewest)
            assert solver.solve(max_depth=depth).tree == one  # one thread, on the cache the helper left


def test_a_time_limit_stops_every_thread():
    ds = noisy_xor(6)
    res = DPSolver(ds, options=COMPILED, threads=2).solve(max_depth=6, time_limit=1e-3)
    assert res.status in (Status.TIME_LIMIT, Status.OPTIMAL) and res.tree is not None
    assert res.bound <= res.objective


def test_the_interpreted_engine_searches_in_one_thread():
    ds = noisy_xor(2)
    res = DPSolver(ds, options=DPOptions(engine="interpreted"), threads=2).solve(max_depth=3)
    assert res.stats["threads"] == 1
    assert res.tree == _solve(ds, 1, 3).tree


def test_threads_default_to_the_usable_cores():
    assert DPSolver(noisy_xor(0)).threads == usable_cores()
    assert solve_dp(noisy_xor(0), 3, options=COMPILED).stats["threads"] == usable_cores()


@pytest.mark.parametrize("threads", [0, -2, 1.5, "2", True])
def test_invalid_threads_raise_one_line_option_errors(threads):
    for call in (lambda: DPSolver(noisy_xor(0), threads=threads), lambda: solve_dp(noisy_xor(0), 3, threads=threads),
                 lambda: solve_dp(noisy_xor(0), 3, metric="f1", threads=threads),  # the front checks it too
                 lambda: validate("dp", threads=threads)):
        with pytest.raises(OptionError, match=r"threads must be|threads: .*must be") as err:
            call()
        assert "\n" not in str(err.value)


# ---------------------------------------------------------------------------------------------------- ConTree
CONTREE = ContreeOptions(engine="compiled")


def _contree(ds, threads, depth, **kw):
    return solve_contree(ds, depth, options=CONTREE, threads=threads, **kw)


@st.composite
def numeric_data(draw):
    """Up to 150 rows of 2-5 integer-valued numeric columns (many ties), 2 or 3 classes, optional integer weights."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n, p = draw(st.integers(20, 150)), draw(st.integers(2, 5))
    X = rng.integers(0, draw(st.sampled_from([3, 8, 30])), size=(n, p)).astype(float)
    y = rng.integers(0, draw(st.sampled_from([2, 3])), size=n)
    if draw(st.booleans()):
        y = ((X[:, 0] > X[:, 0].mean()) ^ (X[:, 1] % 2 == 0) ^ (rng.random(n) < 0.2)).astype(int)
    w = rng.integers(1, 4, size=n).astype(float) if draw(st.booleans()) else None
    return Dataset(X, y, w)


@settings(max_examples=120, **SETTINGS)
@given(ds=numeric_data(), depth=st.integers(2, 4), penalty=st.sampled_from([0.0, 0.0, 1.5]),
       min_leaf=st.sampled_from([1, 1, 3]))
def test_contree_in_two_threads_returns_the_tree_of_one(ds, depth, penalty, min_leaf):
    one = _contree(ds, 1, depth, penalty=penalty, min_leaf=min_leaf)
    two = _contree(ds, 2, depth, penalty=penalty, min_leaf=min_leaf)
    assert one.stats["threads"] == 1 and two.stats["threads"] == (2 if two.stats["features"] >= 2 else 1)
    assert (one.status, one.objective, one.bound, one.tree) == (two.status, two.objective, two.bound, two.tree)


def _replays(monkeypatch, seed: int, rows: int, cols: int, depth: int):
    """One thread and two on the noisy rule of ``rows`` x ``cols`` normal columns, with the feature ranges of the
    threads' last passes (``ContreeSolver._replayed``)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, cols)).round(2)
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 - 0.7 * X[:, 2] + rng.normal(size=rows) > 0.3).astype(int)
    ds = Dataset(X, y)
    contree.warm_up()  # its solves in threads replay too
    replayed = []
    real = contree.ContreeSolver._replayed
    monkeypatch.setattr(contree.ContreeSolver, "_replayed", lambda self, *a: replayed.append(real(self, *a)) or
                        replayed[-1])
    one, two = _contree(ds, 1, depth), _contree(ds, 2, depth)
    assert two.stats["threads"] == 2 and one.status is two.status is Status.OPTIMAL
    assert (one.objective, one.tree) == (two.objective, two.tree)
    return one, two, [r[:2] for r in replayed]


@pytest.mark.parametrize("seed", [0, 3, 5])
def test_contree_at_depth_two_in_two_threads_replays_the_tree_of_one_from_their_evaluations(monkeypatch, seed):
    # the optimum's feature is not the first one: one thread enters it with the first feature's tree, the thread that
    # searched it with none, and the last pass replays one thread's search of it, reading that thread's evaluations
    one, two, replayed = _replays(monkeypatch, seed, 3000, 6, 2)
    assert replayed == [(1, 2)]
    assert two.stats["last_pass_evaluations"] < one.stats["depth_two_evaluations"] / 4


@pytest.mark.parametrize("seed, feature", [(2, 2), (3, 1), (6, 2)])
def test_contree_at_depth_three_in_two_threads_stores_the_root_from_one_feature(monkeypatch, seed, feature):
    # the last pass searches only the feature one thread takes its tree from (not the first), finding the children
    # in the cache: searching every root feature again took 355-2 165 nodes on these sets
    one, two, replayed = _replays(monkeypatch, seed, 400, 5, 3)
    assert replayed == [(feature, feature + 1)]
    assert two.stats["nodes"] - sum(two.stats["thread_nodes"]) < one.stats["nodes"] / 50


def test_contree_threads_fill_and_grow_one_shared_cache(monkeypatch):
    rng = np.random.default_rng(8)
    X = rng.normal(size=(300, 4)).round(1)
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0.5) ^ (rng.random(300) < 0.2)).astype(int)
    one = _contree(Dataset(X, y), 1, 3)
    monkeypatch.setattr(contree, "_table_sizes", lambda words: (2, 2))  # every thread fills them many times
    two = _contree(Dataset(X, y), 2, 3)
    assert two.stats["cache_grows"] > 3
    assert (one.objective, one.tree) == (two.objective, two.tree)


@pytest.mark.parametrize("depth", [2, 3, 4])
def test_a_contree_search_stopped_anywhere_in_two_threads_keeps_the_anytime_guarantees(depth):
    rng = np.random.default_rng(12)
    X = rng.integers(0, 10, size=(120, 4)).astype(float)
    y = ((X[:, 0] > 4) ^ (X[:, 1] > 6) ^ (rng.random(120) < 0.2)).astype(int)
    ds = Dataset(X, y)
    optimum = _contree(ds, 1, depth)
    stops, limit = 0, 1
    while True:
        solver = contree.ContreeSolver(ds, options=CONTREE, threads=2)
        solver._node_limit = limit
        res = solver.solve(depth)
        if res.status is Status.OPTIMAL:
            assert (res.objective, res.tree) == (optimum.objective, optimum.tree)
            break
        assert res.status is Status.TIME_LIMIT
        assert res.objective <= res.stats.get("greedy_objective", res.objective)
        assert res.bound <= optimum.objective <= res.objective
        assert res.objective == ds.misclassifications(res.tree)
        stops += 1
        limit += max(1, limit // 3)
    assert stops >= 3


@pytest.mark.parametrize("threads", [0, 2.5, "all"])
def test_contree_checks_threads(threads):
    with pytest.raises(OptionError, match="threads must be"):
        solve_contree(noisy_xor(0), 2, threads=threads)
