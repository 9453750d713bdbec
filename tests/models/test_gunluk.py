"""The [GKLMS] model: Figure 1 routing, LP weakness, option invariance, targets, max.card, topologies,
brute force on tiny data, warm starts. Cross-checks against the DP live in tests/crosscheck."""

import itertools
from fractions import Fraction

import numpy as np
import pandas as pd
import pyomo.environ as pyo
import pytest

import odtmip
from odtmip import Dataset, Status
from odtmip.core.datasets import load
from odtmip.core.exceptions import DataError, OptionError
from odtmip.core.tree import Tree, branch, leaf
from odtmip.models import _highs, gunluk
from odtmip.models.gunluk import GunlukOptions, exact_target
from odtmip.solving.pipeline import solve_mip
from odtmip.solving.select import select_topology

pytestmark = pytest.mark.highs


def categorical_data(rng, n=24, levels=(3, 2, 2), noise=0.15):
    """Random categorical data whose label follows a small tree, with label noise."""
    X = pd.DataFrame({f"g{g}": pd.Categorical(rng.integers(0, k, n).astype(str)) for g, k in enumerate(levels)})
    y = ((X["g0"] == "0") ^ (X["g1"] == "1")).astype(int).to_numpy()
    flip = rng.random(n) < noise
    return X, np.where(flip, 1 - y, y)


# --------------------------------------------------------------------------- brute force over subset splits
def _partitions(data: Dataset) -> list[np.ndarray]:
    """Every distinct way one node can split the rows: a group and a subset of its levels (goes right)."""
    seen, out = set(), []
    for group in data.groups:
        cols = list(group.members)
        for r in range(len(cols) + 1):
            for subset in itertools.combinations(cols, r):
                right = data.Xb[:, list(subset)].sum(axis=1).astype(bool) if subset else np.zeros(data.n_samples, bool)
                key = right.tobytes()
                if key not in seen:
                    seen.add(key)
                    out.append(right)
    return out


def brute_force(data: Dataset, depth: int, score) -> float:
    """Best ``score(leaf_masks, labels)`` over all trees of depth <= 2 with subset splits and any leaf labels."""
    parts = _partitions(data)
    every = np.ones(data.n_samples, bool)
    leaf_sets = []
    if depth == 1:
        leaf_sets = [[~p, p] for p in parts]
    else:
        for p in parts:
            for a in parts:
                for b in parts:
                    leaf_sets.append([~p & ~a, ~p & a, p & ~b, p & b])
    best = -np.inf
    for masks in leaf_sets or [[every]]:
        for labels in itertools.product((0, 1), repeat=len(masks)):
            best = max(best, score(masks, labels))
    return best


def test_figure1_routing():
    # a in {0,1}^6 with groups {a1..a4} and {a5, a6}: encode as two categorical columns
    X = pd.DataFrame({"G1": pd.Categorical(["a1", "a3", "a2", "a4"], categories=["a1", "a2", "a3", "a4"]),
                      "G2": pd.Categorical(["a6", "a5", "a5", "a6"], categories=["a5", "a6"])})
    data = Dataset(X, [0, 1, 0, 1])
    m = gunluk.build_model(data, GunlukOptions(topology="depth2", relax=False))
    gd = m.gdata
    col = {data.columns[c.source].name: j for j, c in enumerate(gd.columns)}
    g_of = {g.name: i for i, g in enumerate(gd.groups)}
    for var in m.component_data_objects(pyo.Var):
        var.set_value(0)
    m.v[g_of["G1"], 1].set_value(1)  # root: a1 or a2 goes left
    m.z[col["G1=a1"], 1].set_value(1)
    m.z[col["G1=a2"], 1].set_value(1)
    m.v[g_of["G2"], 2].set_value(1)  # node 2: a6 goes left
    m.z[col["G2=a6"], 2].set_value(1)
    m.v[g_of["G1"], 3].set_value(1)  # node 3: a3 goes left
    m.z[col["G1=a3"], 3].set_value(1)

    def L(i, k):  # [GKLMS] (3)
        return gunluk.left_indicator(m, i, k)

    def leaf_of(i):
        return [b for b, (lt, rt) in m.topology.paths.items()
                if all(pyo.value(L(i, k)) == 1 for k in lt) and all(pyo.value(L(i, k)) == 0 for k in rt)]

    assert leaf_of(0) == [1]  # (1,0,0,0,0,1) -> node 2 -> leaf 1
    assert leaf_of(1) == [3]  # (0,0,1,0,1,0) -> node 3 -> leaf 3
    assert {pyo.value(L(i, k)) for i in range(4) for k in m.NODES} <= {0, 1}  # Proposition 1


@pytest.mark.parametrize("topology", ["depth2", "depth3", "depth2.5"])
def test_lp_relaxation_is_trivial_without_anchors(rng, topology):
    X, y = categorical_data(rng)
    data = Dataset(X, y)
    for c in (1.0, 2.0):
        plain = gunluk.build_model(data, GunlukOptions(topology=topology, anchors=False, class_weight=c))
        assert _highs.lp_relaxation(plain) == pytest.approx(gunluk.loss_offset(plain))  # "all correct"
        anchored = gunluk.build_model(data, GunlukOptions(topology=topology, anchors=True, class_weight=c))
        assert _highs.lp_relaxation(anchored) <= gunluk.loss_offset(anchored) + 1e-6  # never higher


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_option_keeps_the_optimum(seed):
    X, y = categorical_data(np.random.default_rng(seed), n=20)
    data = Dataset(X, y)
    values = set()
    for strengthen, anchors, delete, relax in itertools.product((True, False), repeat=4):
        opts = GunlukOptions(topology="depth2", strengthen=strengthen, anchors=anchors, delete_variables=delete,
                             relax=relax)
        r = solve_mip("gunluk", data, options=opts, warm_start="none")
        assert r.status is Status.OPTIMAL and r.objective == pytest.approx(r.bound)
        values.add(round(r.objective, 6))
    assert len(values) == 1


@pytest.mark.parametrize("depth", [1, 2])
def test_minimum_errors_equal_brute_force(rng, depth):
    X, y = categorical_data(rng, n=18, levels=(3, 2))
    data = Dataset(X, y, sample_weight=rng.integers(1, 4, 18))
    w = data.weights
    pos = data.y == 1

    def correct(masks, labels):
        return sum(w[m & (pos if lab else ~pos)].sum() for m, lab in zip(masks, labels, strict=True))

    r = solve_mip("gunluk", data, max_depth=depth, warm_start="none")
    assert r.status is Status.OPTIMAL
    assert r.objective == pytest.approx(w.sum() - brute_force(data, depth, correct))


@pytest.mark.parametrize("tau", [0.0, 0.5, 0.8, 1.0])
def test_specificity_target_matches_brute_force(rng, tau):
    X, y = categorical_data(rng, n=18, levels=(3, 2))
    data = Dataset(X, y)
    pos = data.y == 1
    target = exact_target(tau, int((~pos).sum()))

    def tp_if_feasible(masks, labels):
        tn = sum(int((m & ~pos).sum()) for m, lab in zip(masks, labels, strict=True) if lab == 0)
        tp = sum(int((m & pos).sum()) for m, lab in zip(masks, labels, strict=True) if lab == 1)
        return tp if tn >= target else -np.inf

    r = solve_mip("gunluk", data, max_depth=2, min_specificity=tau)
    assert r.status is Status.OPTIMAL
    predicted = r.tree.predict_index(data.X) == 1
    assert int((~pos & ~predicted).sum()) >= target  # recomputed TN meets the corrected (15)
    assert pos.sum() - r.objective == brute_force(data, 2, tp_if_feasible)  # loss = missed positives
    if tau == 0.0:
        assert r.objective == 0  # all-positive is optimal


def test_sensitivity_target_mirror(rng):
    X, y = categorical_data(rng, n=20)
    data = Dataset(X, y)
    pos = data.y == 1
    losses = []
    for tau in (0.5, 0.8, 1.0):
        r = solve_mip("gunluk", data, max_depth=2, min_sensitivity=tau)
        predicted = r.tree.predict_index(data.X) == 1
        assert int((pos & predicted).sum()) >= exact_target(tau, int(pos.sum()))
        losses.append(r.objective)  # missed negatives
    assert losses == sorted(losses)  # a stricter target never helps


def test_exact_targets():
    assert exact_target(0.07, 100) == 7 and exact_target(0.55, 100) == 55  # floats would give 8 and 56
    for tau in (0.01, 0.33, 0.5, 0.9, 0.95, 0.99):
        for n in (1, 7, 100, 2999):
            assert exact_target(tau, n) == -((-Fraction(str(tau)) * n) // 1)


def test_max_card_is_monotone_and_large_values_change_nothing(rng):
    X, y = categorical_data(rng, n=30, levels=(5, 2))
    y = np.where(X["g0"].isin(["1", "3"]), 1, 0) ^ (rng.random(30) < 0.1)
    data = Dataset(X, y)
    free = solve_mip("gunluk", data, max_depth=2).objective
    by_card = [solve_mip("gunluk", data, max_depth=2, max_card=q).objective for q in (1, 2, 3)]
    assert by_card[0] >= by_card[1] >= by_card[2]
    assert by_card[1] == free  # max.card >= floor(|J(g)|/2) allows every split up to complement


def test_topology_minors_are_monotone(rng):
    X, y = categorical_data(rng, n=22, levels=(3, 3, 2))
    data = Dataset(X, y)
    loss = {t: solve_mip("gunluk", data, topology=t).objective for t in ("depth2", "depth2.5", "depth3", "imbalanced")}
    assert loss["depth2"] >= loss["depth2.5"] >= loss["depth3"]
    assert loss["depth2.5"] >= loss["imbalanced"]


def test_ordinal_groups_give_threshold_splits(rng):
    x = rng.permutation(100).astype(float)  # decile cut points 9, 19, ..., 89
    y = ((x > 29) & (x <= 69)).astype(int)
    data = Dataset(pd.DataFrame({"age": x}), y, n_buckets=10)
    r = solve_mip("gunluk", data, max_depth=2, warm_start="none")
    assert r.objective == 0  # two cuts on the decile buckets separate the band
    assert {n.split.kind for n in r.tree.nodes if not n.is_leaf} == {"threshold"}
    as_categories = solve_mip("gunluk", data, max_depth=1, ordinal=False, warm_start="none")
    assert as_categories.objective == 0  # a subset of buckets needs no ordering


def test_hand_made_warm_start_is_accepted(rng):
    X, y = categorical_data(rng, n=24)
    data = Dataset(X, y)
    g0 = data.groups[0].members[0]  # g0 = "0"
    g1 = data.groups[1].members[1]  # g1 = "1"
    tree = Tree(branch(data.split_of(g0), branch(data.split_of(g1), leaf(0), leaf(1)),
                       branch(data.split_of(g1), leaf(1), leaf(0))), data.feature_names, data.classes_)
    r = solve_mip("gunluk", data, max_depth=2, warm_start=tree)
    assert r.stats["warm_start_accepted"] is True
    assert r.stats["warm_start_objective"] == pytest.approx(data.misclassifications(tree))
    assert r.objective <= data.misclassifications(tree)


@pytest.mark.parametrize("topology", ["balanced-2", "balanced-3", "depth2.5", "imbalanced"])
def test_trees_with_shallow_leaves_are_accepted_as_starts(rng, topology):
    # a leaf above the topology's leaves goes down trivial splits; the nodes of the other subtree of each got no
    # group, which (1) requires, so HiGHS refused the start (the single leaf at every depth >= 2, a stump at >= 3)
    X, y = categorical_data(rng, n=24)
    data = Dataset(X, y)
    stump = branch(data.split_of(data.groups[0].members[0]), leaf(0), leaf(1))
    for spec in (leaf(1), stump):
        tree = Tree(spec, data.feature_names, data.classes_)
        r = solve_mip("gunluk", data, topology=topology, warm_start=tree)
        assert r.stats["warm_start_accepted"] is True
        assert r.stats["warm_start_objective"] == pytest.approx(data.misclassifications(tree))


def test_the_single_leaf_optimum_of_monk2_is_accepted_as_the_start():
    # monk2 at depth 2: the DP's optimum is the single leaf (142 errors), and HiGHS refused it as the start
    data = Dataset(*load("monk2"))
    dp = odtmip.solve(data, "dp", max_depth=2)
    assert dp.tree.n_leaves == 1 and dp.objective == 142
    r = solve_mip("gunluk", data, max_depth=2, highs=_highs.HighsOptions(extra={"mip_max_nodes": 0}))  # stops at once
    assert r.stats["warm_start_accepted"] is True and r.stats["warm_start_objective"] == 142
    assert r.objective == dp.objective and r.tree.n_leaves == 1


def test_time_limit_returns_the_incumbent_with_status():
    rng = np.random.default_rng(5)
    X = pd.DataFrame({f"g{g}": pd.Categorical(rng.integers(0, 4, 400).astype(str)) for g in range(8)})
    y = rng.integers(0, 2, 400)
    r = solve_mip("gunluk", Dataset(X, y), topology="depth3", time_limit=1.0, warm_start="none")
    assert r.status in (Status.TIME_LIMIT, Status.NO_SOLUTION)
    if r.tree is not None:
        assert r.bound <= r.objective and r.gap > 0


def test_bad_input_and_options(rng):
    X, y = categorical_data(rng)
    with pytest.raises(DataError, match="two classes"):
        solve_mip("gunluk", Dataset(X, np.arange(len(y)) % 3), max_depth=2)
    for kwargs, message in [({"max_card": 0}, "max_card"), ({"class_weight": -1.0}, "class_weight"),
                            ({"min_specificity": 1.5}, r"\[0, 1\]"),
                            ({"min_specificity": 0.5, "min_sensitivity": 0.5}, "not both"),
                            ({"anchors": True, "order_symmetry": True}, "one of them"),
                            ({"topology": "(L (L L))"}, "two leaves or two decision nodes")]:
        with pytest.raises(OptionError, match=message):
            GunlukOptions(**kwargs)
    with pytest.raises(OptionError, match="warm_start"):
        solve_mip("gunluk", Dataset(X, y), max_depth=2, warm_start="cart")


def test_select_topology_by_cross_validation(rng):
    X, y = categorical_data(rng, n=40, levels=(3, 3, 2))
    data = Dataset(X, y)
    best, scores = select_topology(data, candidates=("depth2", "depth2.5"), folds=3, time_limit=20)
    assert best in ("depth2", "depth2.5") and set(scores) == {"depth2", "depth2.5"}
    assert all(len(v) == 3 and all(0 <= a <= 1 for a in v) for v in scores.values())
    assert np.mean(scores[best]) == max(np.mean(v) for v in scores.values())
    again = select_topology(data, candidates=("depth2", "depth2.5"), folds=3, time_limit=20)
    assert again == (best, scores)  # seeded folds: deterministic


def test_feature_selection_keeps_cart_groups(rng):
    X, y = categorical_data(rng, n=60, levels=(3, 2, 2))
    X["noise"] = pd.Categorical(rng.integers(0, 2, 60).astype(str))
    data = Dataset(X, y)
    kept = gunluk.cart_selected_groups(data)
    assert kept and kept <= set(range(len(data.groups)))
    r = solve_mip("gunluk", data, max_depth=2, feature_selection=True)
    used = {n.split.column for n in r.tree.nodes if not n.is_leaf}
    assert used <= {data.groups[g].column for g in kept}
    assert r.objective >= solve_mip("gunluk", data, max_depth=2).objective  # fewer groups never help on training data


def test_decode_is_exact_at_relaxed_leaf_adjacent_nodes(rng):
    # a heuristic incumbent need not be a vertex: fractional z, v at the Proposition 3 nodes must not hurt
    X, y = categorical_data(rng, n=30, levels=(3, 3, 2))
    data = Dataset(X, y)
    r = solve_mip("gunluk", data, max_depth=2, warm_start="none")
    m = gunluk.build_model(data, GunlukOptions(topology="depth2"))
    assert gunluk.relaxation_applies(m.options, m.gdata)
    _highs.solve(m)
    for k in m.NODES:
        if m.topology.leaf_adjacent(k):
            for g in m.GROUPS:
                m.v[g, k].set_value(1 / len(m.GROUPS))
            for j in m.COLUMNS:
                m.z[j, k].set_value(0.5)
    tree = gunluk.decode_tree(m, data)
    assert gunluk.loss(data, tree, m.options) == pytest.approx(r.objective)
