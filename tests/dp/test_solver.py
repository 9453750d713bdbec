"""Options, anytime behaviour, incremental solving and the known optima of the MurTree README."""

import math

import numpy as np
import pytest

from odtmip.core.data import Dataset
from odtmip.core.exceptions import OptionError
from odtmip.core.results import Status
from odtmip.dp import DPOptions, DPSolver, solve_dp
from odtmip.dp._kernels import _cache as kc
from odtmip.dp._kernels import _common as kcommon
from odtmip.dp._kernels._depth2 import _frequency, new_scratch
from odtmip.dp.common import encode_columns, pack_columns


@pytest.fixture
def small(rng):
    X = rng.integers(0, 2, size=(40, 5))
    return Dataset(X, (X[:, 0] & X[:, 1]).astype(int))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_depth": -1}, "max_depth"),
        ({"max_depth": 21}, "max_depth"),
        ({"max_depth": 2.5}, "max_depth"),
        ({"max_nodes": -1}, "max_nodes"),
        ({"min_leaf": 0}, "min_leaf"),
        ({"penalty": -0.1}, "penalty"),
        ({"penalty": math.nan}, "penalty"),
        ({"time_limit": 0}, "time_limit"),
        ({"time_limit": -3}, "time_limit"),
    ],
)
def test_invalid_limits_raise_option_error(small, kwargs, message):
    with pytest.raises(OptionError, match=message) as err:
        solve_dp(small, **kwargs)
    assert "\n" not in str(err.value)


def test_invalid_dp_options_raise_option_error(small, rng):
    with pytest.raises(OptionError, match="counting"):
        DPOptions(counting="fast")
    with pytest.raises(OptionError, match="cache"):
        DPOptions(cache="lru")
    weighted = Dataset(small.Xb, small.y, rng.random(small.n_samples) + 0.5)
    with pytest.raises(OptionError, match="bitset"):
        solve_dp(weighted, 2, options=DPOptions(counting="bitset"))


def test_node_budget_above_the_depth_cap_is_clamped(small):
    assert solve_dp(small, 2, max_nodes=100).objective == solve_dp(small, 2).objective


def _hard_instance(seed=0, n=1500, p=90):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, p))
    y = ((X[:, :7].sum(axis=1) + rng.integers(0, 3, size=n)) % 3).astype(int)
    return Dataset(X, y)


def test_time_limit_returns_a_valid_tree_and_bound():
    ds = _hard_instance()
    res = solve_dp(ds, 5, time_limit=0.2)
    assert res.status is Status.TIME_LIMIT and res.stop_reason == "time_limit"
    assert res.tree is not None and res.tree.depth <= 5
    assert res.objective == pytest.approx(ds.misclassifications(res.tree))
    assert 0 <= res.bound <= res.objective
    assert res.seconds < 5


def test_a_timed_out_solve_leaves_the_cache_sound(rng):
    X = rng.integers(0, 2, size=(300, 25))
    y = (X[:, 0] ^ X[:, 1] ^ (X[:, 2] & X[:, 3]) ^ (rng.random(300) < 0.15)).astype(int)
    ds = Dataset(X, y)
    solver = DPSolver(ds)
    for limit in (0.001, 0.01, 0.05):
        cut = solver.solve(max_depth=4, time_limit=limit)
        assert cut.bound <= cut.objective
    full = solver.solve(max_depth=4)
    fresh = solve_dp(ds, 4)
    assert full.status is Status.OPTIMAL and full.objective == fresh.objective
    assert full.tree.n_branch_nodes == fresh.tree.n_branch_nodes
    assert cut.bound <= full.objective <= cut.objective


def test_stats_are_reported(small):
    res = solve_dp(small, 3, options=DPOptions(engine="compiled"))
    for key in ("cache_entries", "depth_two_calls", "nodes", "search_seconds"):
        assert key in res.stats
    assert res.stats["depth_two_calls"] >= 1 and res.stats["cache_entries"] >= 1


def test_cache_grows_without_changing_the_answer(rng):
    X = rng.integers(0, 2, size=(200, 12))
    y = (X[:, 0] ^ X[:, 5] ^ (rng.random(200) < 0.2)).astype(int)
    ds = Dataset(X, y)
    for cache in ("dataset", "branch"):
        solver = DPSolver(ds, options=DPOptions(cache=cache))
        solver._cache = kc.new_tables(solver._key_words, n_keys=2, n_entries=2)  # force many regrowths
        res = solver.solve(max_depth=4)
        assert res.stats["cache_grows"] >= 5
        assert res.objective == solve_dp(ds, 4).objective


def test_incremental_frequency_counters_equal_recounting(rng):
    n, p, K = 90, 7, 3
    X = rng.integers(0, 2, size=(n, p)).astype(np.uint8)
    y = rng.integers(0, K, size=n)
    w = rng.integers(1, 4, size=n).astype(float)
    rows, cols = np.nonzero(X)
    rptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))]).astype(np.int64)
    fbits = pack_columns(X)
    W = fbits.shape[1]
    data = kcommon.Data(feature_bits=fbits, class_bits=pack_columns((y[:, None] == np.arange(K)).astype(np.uint8)),
                        weights=w, labels=y.astype(np.int64), row_start=rptr, row_features=cols.astype(np.int64),
                        minority_bits=np.zeros(W, np.uint64))
    scratch = new_scratch(n, p, W, K, frequency=True)
    prm = kcommon.Params(n_classes=K, incremental=True)
    st = np.zeros(kcommon.N_STATS, dtype=np.int64)
    for _ in range(30):
        mask = rng.random(n) < rng.uniform(0.2, 0.9)
        D = pack_columns(mask[:, None].astype(np.uint8))[0]
        s = _frequency(data, scratch, prm, st, D, int(mask.sum()))
        expect = np.zeros((p, p, K + 1))
        for r in np.flatnonzero(mask):
            f = np.flatnonzero(X[r])
            for a in f:
                for b in f[f >= a]:
                    expect[a, b, y[r]] += w[r]
                    expect[a, b, K] += 1
        assert np.allclose(scratch.freq[s], expect)
    assert st[kcommon.S_INCREMENTAL] > 0 and st[kcommon.S_RECOUNT] > 0


def test_encoding_merges_complements_and_keeps_the_sparser_polarity():
    a = np.array([1, 1, 1, 0, 0, 1], dtype=np.uint8)  # four 1s: stored flipped
    b = np.array([0, 1, 0, 0, 1, 0], dtype=np.uint8)  # two 1s: stored as is
    X = np.column_stack([a, b, 1 - a, np.ones(6, np.uint8), b, np.zeros(6, np.uint8)])
    enc = encode_columns(X, merge=True)
    assert enc.orig.tolist() == [0, 1] and enc.flip.tolist() == [True, False]
    assert (enc.X == np.column_stack([1 - a, b])).all()
    assert encode_columns(X, merge=False).X.shape == (6, 6)


MURTREE_README = {"anneal": 91, "australian-credit": 56, "german-credit": 204, "vehicle": 12}


@pytest.mark.parametrize("name", sorted(MURTREE_README))
def test_murtree_readme_optima_at_depth_four(data_dir, name):
    path = data_dir / "binary" / f"{name}.txt"
    if not path.exists():
        pytest.skip(f"{path.name} not in the data folder")
    A = np.loadtxt(path, dtype=np.int64)
    ds = Dataset(A[:, 1:], A[:, 0])
    res = solve_dp(ds, 4, 15)
    assert res.status is Status.OPTIMAL
    assert res.objective == MURTREE_README[name]
