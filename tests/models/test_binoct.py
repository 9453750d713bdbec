"""The BinOCT / RBinOCT model: the threshold-index encoding (exhaustive, no solver), candidate thresholds and
the boundary counterexample, warm-start embedding, decoding, options. Cross-checks against the DP live in
tests/crosscheck/test_binoct_vs_dp.py."""

import itertools
import math

import numpy as np
import pandas as pd
import pyomo.environ as pyo
import pytest
from _data import SEPARABLE

from odtmip import Dataset, Status
from odtmip.core.exceptions import DataError, OptionError
from odtmip.core.tree import Split, branch, leaf
from odtmip.models import _highs, binoct
from odtmip.models.binoct import (
    BinOCTOptions,
    decode_index,
    encode_index,
    split_conditions,
    threshold_trie,
    trie_arrays,
    trie_depth,
)
from odtmip.solving.pipeline import solve_mip

pytestmark = pytest.mark.highs

# A counterexample to the reference code's class-boundary shortcut: it drops x2 = 1.5 (both sides pure class 1).
BOUNDARY_X = [[3, 2], [1, 3], [0, 3], [3, 0], [2, 0], [2, 3], [1, 1]]
BOUNDARY_Y = [1, 0, 0, 0, 1, 1, 1]


def mixed_data(rng, n=24, weights=False):
    """Two small-range numeric columns and a 3-level categorical one; label from a small tree plus noise."""
    X = pd.DataFrame({"a": rng.integers(0, 5, n), "b": rng.integers(0, 4, n).astype(float),
                      "c": pd.Categorical(rng.choice(["u", "v", "w"], n))})
    y = ((X["a"] > 2) ^ (X["c"] == "v") ^ (rng.random(n) < 0.15)).astype(int).to_numpy()
    return Dataset(X, y, sample_weight=rng.integers(1, 4, n) if weights else None)


# --------------------------------------------------------------------------------- encoding (no solver)
def forced_gaps(n_thresholds, bits):
    """Gaps forced left / right by the split conditions active under ``bits`` (the chosen feature's f = 1)."""
    left, right = set(), set()
    for cond in split_conditions(n_thresholds):
        if all(bits[i] == 0 for i in cond.zero_bits) and all(bits[i] == 1 for i in cond.one_bits):
            if cond.not_right is not None:
                left.update(range(cond.not_right[0], cond.not_right[1] + 1))
            if cond.not_left is not None:
                right.update(range(cond.not_left[0], cond.not_left[1] + 1))
    return left, right


@pytest.mark.parametrize("n_thresholds", range(1, 13))
def test_every_bit_vector_forces_exactly_the_decoded_threshold(n_thresholds):
    # rows are represented by their gap g (V between τ_{g-1} and τ_g); V < τ_j <=> g <= j.
    # One surplus bit beyond the trie depth must not matter (the reference code's bit count can add one).
    n_bits = trie_depth(n_thresholds) + 1
    for bits in itertools.product((0, 1), repeat=n_bits):
        j = decode_index(bits, n_thresholds)
        left, right = forced_gaps(n_thresholds, bits)
        assert left == set(range(0, j + 1)), (bits, j)
        assert right == set(range(j + 1, n_thresholds + 1)), (bits, j)


@pytest.mark.parametrize("n_thresholds", range(1, 20))
def test_trie_shape_and_encoding_round_trip(n_thresholds):
    nodes = threshold_trie(n_thresholds)
    assert len(nodes) == n_thresholds - 1  # one trie node per element of bin(f)
    assert max((nu.level + 1 for nu in nodes), default=0) == trie_depth(n_thresholds)
    for nu in nodes:  # the lower half is never smaller than the upper half
        assert nu.mid - nu.low + 1 >= nu.high - nu.mid
    for j in range(n_thresholds):
        bits = encode_index(j, n_thresholds)
        assert decode_index(bits, n_thresholds) == j


def test_worked_example_four_thresholds():
    # worked example: j=0 <=> (1,1), j=1 <=> (1,0), j=2 <=> (0,1), j=3 <=> (0,0); t = 1 is the lower half
    assert [encode_index(j, 4) for j in range(4)] == [(1, 1), (1, 0), (0, 1), (0, 0)]


# --------------------------------------------------------------------------------- candidate thresholds
def test_candidate_thresholds_all_and_boundary():
    data = Dataset(BOUNDARY_X, BOUNDARY_Y)
    feats = {f.name: f.thresholds for f in binoct.candidate_features(data, BinOCTOptions())}
    assert feats == {"x0": (0.5, 1.5, 2.5), "x1": (0.5, 1.5, 2.5)}
    feats = {f.name: f.thresholds for f in binoct.candidate_features(data, BinOCTOptions(thresholds="boundary"))}
    assert feats["x1"] == (0.5, 2.5)  # x1 = 1 and x1 = 2 are both pure class 1: 1.5 is dropped


@pytest.mark.parametrize("x, y, depth", SEPARABLE.values(), ids=SEPARABLE)
def test_thresholds_separate_adjacent_and_huge_values(x, y, depth):
    data = Dataset(pd.DataFrame({"x": x}), y)
    (feature,) = binoct.candidate_features(data, BinOCTOptions())
    assert all(math.isfinite(t) for t in feature.thresholds)
    r = solve_mip("binoct", data, depth, warm_start="none")
    assert r.status is Status.OPTIMAL and r.objective == 0.0 and data.misclassifications(r.tree) == 0


def test_categorical_columns_become_level_indicators_and_constants_are_excluded():
    X = pd.DataFrame({"colour": pd.Categorical(["r", "g", "b", "r", "g", "b"]),
                      "sex": pd.Categorical(["m", "f", "m", "f", "m", "f"]),
                      "const": [1.0] * 6, "n": [1, 2, 3, 4, 5, 6]})
    data = Dataset(X, [0, 1, 0, 1, 1, 0])
    feats = binoct.candidate_features(data, BinOCTOptions())
    names = [f.name for f in feats]
    assert names == ["colour=b", "colour=g", "colour=r", "sex=f", "n"]  # two levels: one indicator; no const
    colour_g = feats[1]
    assert colour_g.thresholds == (0.5,) and colour_g.split(0) == Split("subset", (0,), categories=("g",))
    assert feats[-1].split(2) == Split("threshold", (3,), threshold=3.5)


# --------------------------------------------------------------------------------- model and decoding
def solve_built(m, start=None):
    run = _highs.solve(m, _highs.HighsOptions(), warm_start=start)
    assert run.status is Status.OPTIMAL
    return run


def test_boundary_counterexample():
    data = Dataset(BOUNDARY_X, BOUNDARY_Y)
    full = solve_mip("binoct", data, max_depth=2, warm_start="none")
    boundary = solve_mip("binoct", data, max_depth=2, thresholds="boundary", warm_start="none")
    assert full.status is Status.OPTIMAL and boundary.status is Status.OPTIMAL
    assert full.objective == 0
    assert boundary.objective == pytest.approx(1 / 7)
    assert data.misclassifications(boundary.tree) == 1


def test_decoded_tree_reproduces_the_error_sum(rng):
    data = mixed_data(rng, weights=True)
    m = binoct.build_model(data, 2, BinOCTOptions())
    solve_built(m)
    errors = sum(pyo.value(m.e[lf, c]) for lf in m.LEAVES for c in m.CLASSES)
    tree = binoct.decode_tree(m, data)
    assert data.misclassifications(tree) == pytest.approx(errors, abs=1e-6)
    # each row's leaf variable l is the leaf reached by following f and the bits t through the complete tree
    bd = m.bdata
    for r in m.ROWS:
        h = 1
        while h < bd.n_leaves:
            f = max(m.FEATURES, key=lambda f: pyo.value(m.f[h, f]))
            feat = bd.features[f]
            j = decode_index([pyo.value(m.t[h, i]) for i in m.BITS], feat.n_thresholds)
            h = 2 * h + int(feat.values[r] > feat.thresholds[j])
        assert pyo.value(m.l[r, h - bd.n_leaves]) == pytest.approx(1.0)


def test_decode_collapses_pass_through_and_one_sided_nodes():
    data = Dataset(BOUNDARY_X, BOUNDARY_Y)
    m = binoct.build_model(data, 2, BinOCTOptions(leaf_penalty=0.5))
    solve_built(m)
    assert pyo.value(m.s) == 1  # λ = 0.5: the single leaf, only through the pass-through
    tree = binoct.decode_tree(m, data)
    assert tree.n_leaves == 1 and tree.nodes[0].label == 1


def constraint_violations(m, tol=1e-9):
    out = []
    for con in m.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(con.body)
        if con.upper is not None and body > pyo.value(con.upper) + tol:
            out.append(con.name)
        if con.lower is not None and body < pyo.value(con.lower) - tol:
            out.append(con.name)
    return out


@pytest.mark.parametrize("lam,pass_through", [(0.0, False), (0.1, True), (0.1, False)])
def test_warm_start_values_embed_shallow_trees_feasibly(rng, lam, pass_through):
    data = mixed_data(rng, weights=True)
    opts = BinOCTOptions(leaf_penalty=lam, root_pass_through=pass_through)
    a = Split("threshold", (0,), threshold=2.5)
    c = Split("subset", (2,), categories=("v",))
    trees = [data.new_tree(leaf(1)),
             data.new_tree(branch(a, leaf(0), leaf(1))),
             data.new_tree(branch(a, leaf(0), branch(c, leaf(1), leaf(0))))]
    m = binoct.build_model(data, 3, opts)
    for tree in trees:
        values = binoct.warm_start_values(m, data, tree)
        for var, value in values:
            var.set_value(value)
        assert constraint_violations(m) == []
        expected = binoct.loss(data, tree, opts)
        if tree.n_leaves == 1 and not pass_through:
            expected += lam  # padded with a second leaf: the root must split
        assert pyo.value(m.misclassification_and_leaves) == pytest.approx(expected)
        decoded = binoct.decode_tree(m, data)
        assert np.array_equal(decoded.predict_index(data.X), tree.predict_index(data.X))


def test_warm_start_values_reject_a_tree_too_deep(rng):
    data = mixed_data(rng)
    a = Split("threshold", (0,), threshold=2.5)
    deep = data.new_tree(branch(a, leaf(0), branch(Split("threshold", (1,), threshold=1.5), leaf(0),
                                                    branch(a, leaf(1), leaf(0)))))
    m = binoct.build_model(data, 2, BinOCTOptions())
    assert binoct.warm_start_values(m, data, deep) is None
    with pytest.raises(OptionError):
        solve_mip("binoct", data, 2, warm_start=deep)


def test_user_tree_start_with_a_non_candidate_split_that_induces_a_candidate_partition(rng):
    data = mixed_data(rng)
    # a > 2.7 splits the rows exactly like the candidate a > 2.5; the start must still be accepted
    tree = data.new_tree(branch(Split("threshold", (0,), threshold=2.7), leaf(0), leaf(1)))
    r = solve_mip("binoct", data, 2, warm_start=tree)
    assert r.stats["warm_start_accepted"] is True
    assert r.stats["warm_start_objective"] == pytest.approx(binoct.loss(data, tree, BinOCTOptions()))


@pytest.mark.parametrize("option", [{"bits": "reference"}, {"surplus_bit_fix": False},
                                    {"root_pass_through": True}])
def test_options_do_not_change_the_optimum(rng, option):
    data = mixed_data(rng)
    base = solve_mip("binoct", data, 2)
    other = solve_mip("binoct", data, 2, **option)
    assert other.status is Status.OPTIMAL
    assert other.objective == pytest.approx(base.objective)


def test_reference_bit_count():
    data = Dataset([[0], [1], [2], [3], [4]], [0, 1, 0, 1, 0])  # T = 4 thresholds
    assert binoct.prepare(data, 2, BinOCTOptions()).n_bits == 2
    assert binoct.prepare(data, 2, BinOCTOptions(bits="reference")).n_bits == 3


def test_time_limit_never_raises(rng):
    n = 40
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "c": rng.normal(size=n)})
    y = rng.integers(0, 2, n)
    data = Dataset(X, y)
    r = solve_mip("binoct", data, 3, time_limit=0.05, warm_start="none")
    assert r.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    if r.tree is not None:
        assert r.objective >= r.bound - 1e-9
    started = solve_mip("binoct", data, 3, time_limit=0.05)  # with the DP start, a tree is always returned
    assert started.status in (Status.TIME_LIMIT, Status.OPTIMAL)
    assert started.objective <= started.stats["warm_start_loss"] + 1e-9


def test_invalid_options_and_data():
    data = Dataset(BOUNDARY_X, BOUNDARY_Y)
    with pytest.raises(OptionError):
        BinOCTOptions(leaf_penalty=-0.1)
    with pytest.raises(OptionError):
        BinOCTOptions(thresholds="some")
    with pytest.raises(OptionError):
        BinOCTOptions(bits="many")
    with pytest.raises(OptionError):
        solve_mip("binoct", data, 2, lambda_=0.1)
    with pytest.raises(OptionError):
        binoct.build_model(data, 0, BinOCTOptions())
    with pytest.raises(OptionError):
        solve_mip("binoct", data, 2, warm_start="cart")
    constant = Dataset(pd.DataFrame({"k": [1.0, 1.0, 1.0], "c": pd.Categorical(["a", "a", "a"])}), [0, 1, 0])
    with pytest.raises(DataError):
        binoct.build_model(constant, 1, BinOCTOptions())


def test_model_components_follow_the_style():
    data = Dataset(BOUNDARY_X, BOUNDARY_Y)
    m = binoct.build_model(data, 2, BinOCTOptions(leaf_penalty=0.1))
    for name in ("f", "t", "l", "p", "e", "alpha", "s"):
        assert isinstance(getattr(m, name), pyo.Var)
    for con in m.component_objects(pyo.Constraint):
        assert con.doc, con.name
    # per (node, feature): 2 (T_f - 1) + 1 split constraints at most (empty ranges are skipped)
    n_split = sum(len(getattr(m, c)) for c in ("lower_range_not_right", "upper_range_not_left",
                                                "outside_thresholds"))
    assert n_split <= 3 * sum(2 * (f.n_thresholds - 1) + 1 for f in m.bdata.features)


@pytest.mark.parametrize("T", [*range(1, 70), 255, 256, 257, 1000])
def test_the_trie_as_arrays_is_the_trie(T):
    # model_size counts over trie_arrays (10^5 thresholds); the model is built from threshold_trie
    def masks(prefix, b):
        return sum(1 << i for i, bit in enumerate(prefix) if bit == b)

    ref = sorted((n.low, n.mid, n.high, n.level, sum(n.prefix), n.level - sum(n.prefix), masks(n.prefix, 1),
                  masks(n.prefix, 0)) for n in threshold_trie(T))
    assert sorted(zip(*(a.tolist() for a in trie_arrays(T)), strict=True)) == ref
