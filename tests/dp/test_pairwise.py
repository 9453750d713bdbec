"""The pairwise engine (numpy only) against brute force, the reference recursion and the compiled search, and the
rule by which solve_dp picks it."""

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from _brute import brute_force
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odtmip.core.data import Dataset
from odtmip.core.exceptions import OptionError, ResourceError
from odtmip.core.results import Status
from odtmip.dp import DPOptions, DPSolver, solve_dp
from odtmip.dp import pairwise as pw
from odtmip.dp.anytime import greedy_tree
from odtmip.dp.reference import solve_reference

from .strategies import integral, tiny_data

SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
PAIRWISE = DPOptions(engine="pairwise")
COMPILED = DPOptions(engine="compiled")


def value(res):
    return None if res.tree is None else (res.objective, res.tree.n_branch_nodes)


def assert_same(a, b, ds):
    """Equal optima: exactly, with equal node counts, for integer weights; within round-off for real weights."""
    if a is None or b is None:
        assert a is b
    elif integral(ds):
        assert a == b
    else:
        assert math.isclose(a[0], b[0], rel_tol=1e-9, abs_tol=1e-9)


@settings(max_examples=300, **SETTINGS)
@given(ds=tiny_data(), depth=st.integers(0, 2), min_leaf=st.sampled_from([1, 1, 2, 3]),
       penalty=st.sampled_from([0.0, 0.0, 0.5, 1.0, 2.25]))
def test_every_depth_two_budget_matches_brute_force(ds, depth, min_leaf, penalty):
    brute = brute_force(ds, depth, min_leaf, penalty)
    for n in range(2**depth):
        res = pw.solve_pairwise(ds, depth, n, min_leaf, penalty)
        assert_same(value(res), brute[n] and brute[n][:2], ds)
        if res.tree is not None:
            assert res.tree.depth <= depth and res.tree.n_branch_nodes <= n and res.bound == res.objective
        else:
            assert res.status is Status.INFEASIBLE


@settings(max_examples=300, **SETTINGS)
@given(ds=tiny_data(max_rows=20, max_cols=5), depth=st.integers(3, 4), nodes=st.one_of(st.none(), st.integers(0, 15)),
       min_leaf=st.sampled_from([1, 1, 2, 3]), penalty=st.sampled_from([0.0, 0.0, 0.5, 1.0, 2.25]),
       leaf_penalty=st.sampled_from([None, None, 0.02, 0.1]))
def test_deeper_trees_match_the_reference(ds, depth, nodes, min_leaf, penalty, leaf_penalty):
    if leaf_penalty is not None:
        penalty = 0.0
    res = pw.solve_pairwise(ds, depth, nodes, min_leaf, penalty, leaf_penalty)
    ref = solve_reference(ds, depth, nodes, min_leaf, penalty, leaf_penalty)
    assert res.status is ref.status
    assert_same(value(res), value(ref), ds)
    assert res.bound == res.objective or res.tree is None


@pytest.mark.parametrize("depth", [3, 4])
@pytest.mark.parametrize("weights", ["none", "integer", "real"])
def test_wider_data_matches_the_compiled_search(rng, depth, weights):
    # wider than brute force reaches: the memo, the pruning and the greedy incumbent all take part
    n, p = 300, 14
    X = rng.integers(0, 2, size=(n, p))
    y = ((X[:, 0] & X[:, 3]) | (X[:, 5] ^ X[:, 7])).astype(int) ^ (rng.random(n) < 0.15)
    w = {"none": None, "integer": rng.integers(1, 6, n).astype(float), "real": rng.random(n) + 0.1}[weights]
    ds = Dataset(X, y, w)
    for kwargs in ({}, {"min_leaf": 10}, {"penalty": 2.0}, {"max_nodes": 5}, {"leaf_penalty": 0.01}):
        a = solve_dp(ds, depth, options=PAIRWISE, **kwargs)
        b = solve_dp(ds, depth, options=COMPILED, **kwargs)
        assert (a.stats["engine"], b.stats["engine"]) == ("pairwise", "compiled")
        assert a.status is b.status is Status.OPTIMAL
        assert_same(value(a), value(b), ds)
        assert a.stats["tolerance"] == b.stats["tolerance"]


def test_three_classes_and_the_bundled_tic_tac_toe_match_the_compiled_search():
    from odtmip.core.datasets import load

    X, y = load("tic-tac-toe")
    ds = Dataset(X, y)
    for depth, optimum in ((2, 282), (3, 216)):
        assert solve_dp(ds, depth).objective == optimum == solve_dp(ds, depth, options=COMPILED).objective
    rng = np.random.default_rng(5)
    Xk = rng.integers(0, 2, size=(200, 8))
    yk = Xk[:, 0] + Xk[:, 1] * (rng.random(200) < 0.8)
    three = Dataset(Xk, yk, rng.integers(1, 4, 200).astype(float))
    assert three.n_classes == 3
    for depth in (2, 3, 4):
        assert_same(value(solve_dp(three, depth, options=PAIRWISE)), value(solve_dp(three, depth, options=COMPILED)),
                    three)


@pytest.mark.parametrize("stop_after", [0, 1, 2, 5, 20])
def test_a_stop_returns_the_best_tree_known_and_a_valid_bound(rng, monkeypatch, stop_after):
    X = rng.integers(0, 2, size=(200, 10))
    y = ((X[:, 0] & X[:, 1]) | X[:, 2]).astype(int) ^ (rng.random(200) < 0.15)
    ds = Dataset(X, y)
    optimum = pw.solve_pairwise(ds, 4)
    calls = []
    depth_two = pw._Search.depth_two

    def stopping(self, rows):  # the deadline passes after ``stop_after`` depth-two solves
        calls.append(1)
        if len(calls) > stop_after:
            raise pw._Stopped
        return depth_two(self, rows)

    monkeypatch.setattr(pw._Search, "depth_two", stopping)
    res = pw.solve_pairwise(ds, 4, time_limit=60.0)
    assert res.status is Status.TIME_LIMIT and res.stop_reason == "time_limit"
    assert res.objective == ds.misclassifications(res.tree) and res.tree.depth <= 4
    assert 0 <= res.bound <= optimum.objective <= res.objective
    # never worse than the greedy tree: CART's splits (with optimal depth-two bottoms where they were reached)
    g = greedy_tree(X.astype(np.uint8), ds.y, ds.weights, 2, 4, 1, 0.0, 0.0)
    assert res.objective <= g.cost


def test_solve_dp_picks_the_pairwise_engine_for_small_problems_only(rng):
    small = Dataset(rng.integers(0, 2, size=(100, 6)), rng.integers(0, 2, 100))
    assert pw.suits(small, 3) and solve_dp(small, 3).stats["engine"] == "pairwise"
    assert "compile_seconds" not in solve_dp(small, 3).stats
    # the compiled search when asked, for any technique switch, for deep or unbounded trees and for big data
    assert solve_dp(small, 3, options=DPOptions(similarity=False)).stats["engine"] == "compiled"
    assert not pw.suits(small, 5) and solve_dp(small, 5).stats["engine"] == "compiled"
    assert solve_dp(small, None, leaf_penalty=0.05).stats["engine"] == "compiled"
    wide = Dataset(rng.integers(0, 2, size=(2000, 120)), rng.integers(0, 2, 2000))
    assert pw.estimated_seconds(2000, 120, 2, 3) > pw.BUDGET_SECONDS and not pw.suits(wide, 3)
    assert pw.suits(wide, 2) and not pw.suits(wide, 2, memory_limit=1e-4)  # nor beyond the memory limit
    assert pw.estimated_memory_gib(2000, 120, 2) > 5e-3
    assert solve_dp(wide, 2, memory_limit=5e-3).stats["engine"] == "compiled"


def test_engine_options_are_checked():
    ds = Dataset(np.array([[0, 1], [1, 0], [1, 1], [0, 0]]), [0, 1, 1, 0])
    with pytest.raises(OptionError, match="engine must be one of"):
        DPOptions(engine="numpy")
    with pytest.raises(OptionError, match="engine='pairwise' needs max_depth <= 4"):
        solve_dp(ds, 5, options=PAIRWISE)
    with pytest.raises(OptionError, match="engine='pairwise' needs max_depth <= 4"):
        solve_dp(ds, None, leaf_penalty=0.1, options=PAIRWISE)
    wide = Dataset(np.random.default_rng(0).integers(0, 2, size=(50, 400)), [0, 1] * 25)
    with pytest.raises(ResourceError, match=r"pairwise engine on 50 rows x 400 binary columns .* memory_limit = 0.001"):
        solve_dp(wide, 2, options=PAIRWISE, memory_limit=1e-3)
    with pytest.raises(OptionError, match="DPSolver is the MurTree search"):
        DPSolver(ds, options=PAIRWISE)
    for bad, match in (({"min_leaf": 0}, "min_leaf"), ({"max_nodes": -1}, "max_nodes"), ({"penalty": -1}, "penalty"),
                       ({"penalty": 1, "leaf_penalty": 0.1}, "not both"), ({"max_depth": 2.5}, "max_depth")):
        kwargs = {"max_depth": 2, **bad}
        with pytest.raises(OptionError, match=match):
            solve_dp(ds, **kwargs)


def test_a_first_fit_of_a_small_dataset_compiles_nothing(tmp_path):
    # A new environment: numba's disk cache is empty. The CLI's fit of the bundled tic-tac-toe at depth 3 runs the
    # pairwise engine, so it compiles no kernel and writes nothing to the cache.
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    proc = subprocess.run([sys.executable, "-m", "odtmip.cli", "fit", "tic-tac-toe", "--depth", "3", "--json"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["objective"] == 216 and out["status"] == "optimal"
    assert out["stats"]["engine"] == "pairwise" and "compile_seconds" not in out["stats"]
    assert not (tmp_path / "numba").exists() or not any((tmp_path / "numba").rglob("*.nbi"))
