"""The [BD17] OCT / OCT-H model: the d = 0 hole and its fix, properties (alpha, N_min, depth monotonicity,
alpha >= 1, re-routing reproduces z), decoding on the original scale, warm starts, time limits, errors.
Cross-checks against the DP live in tests/crosscheck/test_oct_vs_dp.py."""

import math

import numpy as np
import pandas as pd
import pyomo.environ as pyo
import pytest
from _data import SEPARABLE
from _data import mixed_data as shared_mixed_data

import odtmip
from odtmip import Dataset, Status
from odtmip.core.exceptions import DataError, OptionError
from odtmip.core.tree import Split, branch, leaf
from odtmip.models import _highs
from odtmip.models import oct as O
from odtmip.models.oct import OCTOptions
from odtmip.solving.pipeline import solve_mip

pytestmark = pytest.mark.highs


def mixed_data(seed, n=20, n_classes=2, weights=True):
    return shared_mixed_data(seed, n, n_classes, max_weight=3 if weights else None)


def grid_data(seed, n=20):
    """Integer features 0..9: every gap is 1/9 after min-max scaling, far above mu."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"u": rng.integers(0, 10, n), "v": rng.integers(0, 10, n)})
    y = ((X["u"] + X["v"] > 9) ^ (rng.random(n) < 0.1)).astype(int).to_numpy()
    return Dataset(X, y)


HOLE = Dataset(np.array([[0], [0], [1]]), [0, 1, 0])  # duplicated x with conflicting labels


# --------------------------------------------------------------------------------------- the d = 0 hole
@pytest.mark.parametrize("depth", [1, 2])
def test_hole_detector_fixed_model_makes_one_error(depth):
    r = solve_mip("oct", HOLE, max_depth=depth, warm_start="none")
    assert r.status is Status.OPTIMAL
    assert r.objective == pytest.approx(1.0)  # every tree errs on one of the two x = 0 rows; L_hat = 1


def test_hole_detector_unfixed_model_reaches_zero():
    m = O.build_model(HOLE, 1, OCTOptions())
    m.no_split_sends_all_right.deactivate()
    run = _highs.solve(m)
    assert run.status is Status.OPTIMAL
    assert run.objective == pytest.approx(0.0, abs=1e-9)
    assert pyo.value(m.d[1]) == pytest.approx(0.0)  # no split, yet the points sit in both leaves
    assert set(O.assignment(m).tolist()) == {2, 3}


def test_fix_rows_are_one_per_leaf_and_left_ancestor():
    m = O.build_model(mixed_data(0), 3, OCTOptions())
    heap = m.heap
    assert sorted(heap.left_ancestors(8)) == [1, 2, 4] and heap.right_ancestors(8) == []
    assert sorted(heap.left_ancestors(9)) == [1, 2] and heap.right_ancestors(9) == [4]
    assert heap.left_ancestors(15) == [] and sorted(heap.right_ancestors(15)) == [1, 3, 7]
    assert len(m.no_split_sends_all_right) == sum(len(heap.left_ancestors(t)) for t in heap.leaves) == 12


# --------------------------------------------------------------------------------------- properties
@pytest.mark.parametrize("alpha", [1.0, 2.5])
def test_alpha_at_least_one_gives_objective_one(alpha):
    r = solve_mip("oct", mixed_data(1), max_depth=2, alpha=alpha, warm_start="dp")
    assert r.status is Status.OPTIMAL
    assert r.objective == pytest.approx(1.0)
    if alpha > 1:
        assert r.tree.n_branch_nodes == 0


def test_objective_is_monotone_in_alpha():
    data = mixed_data(2, n=24)
    values, splits = [], []
    for alpha in (0.0, 0.05, 0.15, 0.4, 1.0):
        r = solve_mip("oct", data, max_depth=1, alpha=alpha, warm_start="none")
        assert r.status is Status.OPTIMAL
        values.append(r.objective)
        splits.append(r.tree.n_branch_nodes)
    assert values == sorted(values)
    assert splits == sorted(splits, reverse=True)
    assert values[-1] == pytest.approx(1.0) and splits[-1] == 0


def test_objective_is_monotone_in_min_leaf():
    data = mixed_data(3, n=24)
    values = []
    for n_min in (1, 3, 6, 10):
        r = solve_mip("oct", data, max_depth=1, min_leaf=n_min, warm_start="none")
        assert r.status is Status.OPTIMAL
        values.append(r.objective)
        leaf_rows = np.bincount(r.tree.apply(data.X))
        assert leaf_rows[leaf_rows > 0].min() >= n_min
    assert values == sorted(values)


def test_objective_is_monotone_in_depth():
    data = mixed_data(4, n=16)
    values = [solve_mip("oct", data, max_depth=depth, alpha=0.02, warm_start="dp").objective for depth in (0, 1, 2)]
    assert values[0] == pytest.approx(1.0)
    assert values == sorted(values, reverse=True)


@pytest.mark.parametrize("options", [OCTOptions(), OCTOptions(scaling="minmax"), OCTOptions(min_leaf=3),
                                     OCTOptions(hyperplanes=True), OCTOptions(hyperplanes=True, alpha=0.05)],
                         ids=["rank", "minmax", "min_leaf", "oct-h", "oct-h-alpha"])
def test_rerouting_reproduces_the_model_assignment(options):
    data = grid_data(5) if options.hyperplanes else mixed_data(5, n=16)
    m = O.build_model(data, 2, options)
    run = _highs.solve(m)
    assert run.status is Status.OPTIMAL
    np.testing.assert_array_equal(O.route(m, data), O.assignment(m))  # re-routing reproduces z
    tree = O.decode_tree(m, data)
    assert O.loss(data, tree, options) <= run.objective + 1e-9
    # the decoded tree's leaves hold exactly the model's non-empty leaves' rows (up to merged siblings)
    assert tree.n_leaves <= len({int(t) for t in O.assignment(m)})


def test_decoded_threshold_is_a_midpoint_on_the_original_scale():
    data = Dataset(pd.DataFrame({"age": [20, 30, 41, 55, 70, 90]}), [0, 0, 0, 1, 1, 1])
    r = solve_mip("oct", data, max_depth=1, warm_start="none")
    assert r.objective == 0.0
    split = r.tree.nodes[0].split
    assert split.kind == "threshold" and split.threshold == pytest.approx(48.0)


@pytest.mark.parametrize("warm_start", ["none", "cart"])
@pytest.mark.parametrize("x, y, depth", SEPARABLE.values(), ids=SEPARABLE)
def test_decoded_thresholds_separate_adjacent_and_huge_values(x, y, depth, warm_start):
    data = Dataset(pd.DataFrame({"x": x}), y)  # ranks: every gap is a model's gap, however narrow
    r = solve_mip("oct", data, max_depth=depth, warm_start=warm_start)
    assert r.status is Status.OPTIMAL and r.objective == 0.0 and data.misclassifications(r.tree) == 0
    assert all(math.isfinite(node.split.threshold) for node in r.tree.nodes if not node.is_leaf)
    assert data.misclassifications(O.cart_tree(data, depth, OCTOptions())) == 0
    columns, _, _ = O.dp_columns(data)
    assert [c.split.goes_right([np.array(x)]).sum() for c in columns] == list(range(len(x) - 1, 0, -1))


def test_categorical_split_decodes_to_a_subset():
    X = pd.DataFrame({"colour": ["red", "blue", "green", "red", "blue", "green"]})
    data = Dataset(X, [1, 0, 0, 1, 0, 0])
    r = solve_mip("oct", data, max_depth=1, warm_start="none")
    assert r.objective == 0.0
    assert r.tree.nodes[0].split == Split("subset", (0,), categories=("red",))


def test_hyperplane_decodes_on_the_original_scale():
    # y = 1 iff u + v >= 10: one oblique split, no axis-aligned split separates the classes
    X = pd.DataFrame({"u": [0, 2, 4, 6, 8, 1, 3, 5, 7, 9, 5, 6], "v": [2, 4, 5, 3, 1, 9, 8, 6, 4, 3, 4, 3]})
    y = (X["u"] + X["v"] >= 10).astype(int).to_numpy()
    data = Dataset(X * 10 + 100, y)  # an affine change of units must not matter
    r = solve_mip("oct-h", data, max_depth=1, warm_start="none")
    assert r.status is Status.OPTIMAL and r.objective == 0.0
    split = r.tree.nodes[0].split
    assert split.kind == "hyperplane" and set(split.columns) == {0, 1}
    assert max(abs(w) for w in split.weights) == pytest.approx(1.0)
    assert solve_mip("oct", data, max_depth=1, warm_start="none").objective > 0
    assert odtmip.solve(data, "oct-h", max_depth=1, warm_start="none").solver == "oct-h"


@pytest.mark.parametrize("x, y, depth", [v for k, v in SEPARABLE.items() if k != "widest"],
                         ids=[k for k in SEPARABLE if k != "widest"])  # widest: its min-max span overflows
def test_decoded_hyperplanes_separate_adjacent_and_huge_values(x, y, depth):
    data = Dataset(pd.DataFrame({"x": x}), y)
    r = solve_mip("oct-h", data, max_depth=depth, warm_start="none")
    assert r.status is Status.OPTIMAL and r.objective == 0.0 and data.misclassifications(r.tree) == 0
    assert all(math.isfinite(node.split.threshold) for node in r.tree.nodes if not node.is_leaf)


def test_octh_features_penalty_counts_columns():
    data = grid_data(6)
    opts = OCTOptions(hyperplanes=True, alpha=0.05)
    r = solve_mip("oct", data, max_depth=1, options=opts, warm_start="none")
    assert r.objective == pytest.approx(O.loss(data, r.tree, opts))
    used = sum(len(n.split.columns) for n in r.tree.nodes if not n.is_leaf)
    assert r.objective == pytest.approx(data.misclassifications(r.tree) / O.baseline_error(data) + 0.05 * used)


def test_constant_columns_are_dropped():
    X = pd.DataFrame({"k": [3.0] * 6, "x": [1, 2, 3, 4, 5, 6], "c": ["a"] * 6})
    data = Dataset(X, [0, 0, 0, 1, 1, 1])
    od = O.prepare(data, OCTOptions())
    assert [f.name for f in od.features] == ["x"]
    assert od.epsilon.tolist() == [pytest.approx(0.2)]


def test_epsilon_floor_is_reported():
    x = np.array([0.0, 1e-7, 1.0, 2.0])
    od = O.prepare(Dataset(x[:, None], [0, 1, 0, 1]), OCTOptions(scaling="minmax"))
    assert od.floored and od.epsilon[0] == pytest.approx(1e-4)
    assert not O.prepare(Dataset(x[:, None], [0, 1, 0, 1]), OCTOptions()).floored  # ranks: gap 1/3


def test_pure_weighted_data_gives_the_single_leaf():
    data = Dataset(np.array([[0], [1], [2], [3]]), [0, 1, 0, 1], sample_weight=[1, 0, 2, 0])
    r = solve_mip("oct", data, max_depth=2)
    assert r.status is Status.OPTIMAL and r.objective == 0.0 and r.tree.n_branch_nodes == 0
    assert r.tree.nodes[0].label == 0


def test_constraints_cite_the_paper():
    m = O.build_model(grid_data(0, n=6), 2, OCTOptions(hyperplanes=True))
    for con in m.component_objects(pyo.Constraint):
        assert con.doc.startswith(("[BD17]", "d = 0 fix")), con.name


# --------------------------------------------------------------------------------------- warm starts
def test_dp_warm_start_is_accepted_with_the_dp_objective():
    from odtmip.dp import solve_dp

    data = mixed_data(7)
    opts = OCTOptions(alpha=0.03, min_leaf=2)
    derived, penalty, min_leaf = O.dp_equivalent(data, opts)
    dp = solve_dp(derived, max_depth=2, penalty=penalty, min_leaf=min_leaf)
    r = solve_mip("oct", data, max_depth=2, options=opts, warm_start="dp")
    assert r.stats["warm_start_accepted"] is True
    assert r.stats["warm_start_objective"] == pytest.approx(dp.objective / O.baseline_error(data))
    assert r.stats["warm_start_loss"] == pytest.approx(dp.objective / O.baseline_error(data))


@pytest.mark.parametrize("hyperplanes", [False, True])
def test_cart_warm_start_is_accepted(hyperplanes):
    data = grid_data(8) if hyperplanes else mixed_data(8)
    r = solve_mip("oct", data, max_depth=2, warm_start="cart", hyperplanes=hyperplanes, alpha=0.05, time_limit=20)
    assert r.stats["warm_start_accepted"] is True
    assert r.stats["warm_start_objective"] == pytest.approx(r.stats["warm_start_loss"])
    assert r.objective <= r.stats["warm_start_loss"] + 1e-9


def test_hand_made_warm_start_with_swapped_subset_is_accepted():
    data = mixed_data(9, n=16)
    # "c not in {1}" (a 2-level subset) right: the model's feature c=1 with the children swapped
    split = Split("subset", (2,), categories=("0", "2"))
    tree = data.new_tree(branch(split, leaf(1), leaf(0)))
    r = solve_mip("oct", data, max_depth=1, warm_start=tree)
    assert r.stats["warm_start_accepted"] is True
    assert r.stats["warm_start_objective"] == pytest.approx(O.loss(data, tree, OCTOptions()))


def test_too_deep_warm_start_tree_is_an_error():
    data = mixed_data(10, n=12)
    t1, t2 = Split("threshold", (0,), threshold=0.0), Split("threshold", (1,), threshold=2.5)
    tree = data.new_tree(branch(t1, branch(t2, leaf(0), leaf(1)), leaf(1)))
    m = O.build_model(data, 1, OCTOptions())
    assert O.warm_start_values(m, data, tree) is None
    with pytest.raises(OptionError, match="warm-start tree"):
        solve_mip("oct", data, max_depth=1, warm_start=tree)


@pytest.mark.parametrize("warm_start", ["none", "dp"])
def test_time_limit_never_raises(warm_start):
    data = mixed_data(11, n=40, n_classes=3)
    r = solve_mip("oct", data, max_depth=3, time_limit=0.2, warm_start=warm_start)
    assert r.status in (Status.TIME_LIMIT, Status.NO_SOLUTION, Status.OPTIMAL)
    assert (r.tree is None) == (r.objective is None)
    if r.status is not Status.OPTIMAL:
        assert r.stop_reason == "time_limit"
    if warm_start == "dp":  # the accepted start is an incumbent
        assert r.tree is not None and r.stats["warm_start_accepted"] is True
    if r.tree is not None:
        assert r.objective == pytest.approx(O.loss(data, r.tree, OCTOptions()))
        assert r.bound <= r.objective + 1e-9


# --------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("values, match", [
    ({"alpha": -0.1}, "alpha"), ({"alpha": math.nan}, "alpha"), ({"alpha": True}, "alpha"),
    ({"min_leaf": 0}, "min_leaf"), ({"min_leaf": 1.5}, "min_leaf"), ({"mu": 0.0}, "mu"),
    ({"complexity": "leaves"}, "complexity"), ({"scaling": "log"}, "scaling"),
    ({"hyperplanes": True, "scaling": "rank"}, "minmax"), ({"epsilon_floor": 0}, "epsilon_floor"),
    ({"lambda_": 0.1}, "unknown OCT option"),
])
def test_bad_options_are_clear_errors(values, match):
    with pytest.raises(OptionError, match=match):
        solve_mip("oct", HOLE, max_depth=1, **values)


@pytest.mark.parametrize("depth", [-1, 1.5, 13, None])
def test_bad_depth(depth):
    with pytest.raises(OptionError, match="max_depth"):
        solve_mip("oct", HOLE, max_depth=depth)


def test_bad_warm_start():
    with pytest.raises(OptionError, match="warm_start"):
        solve_mip("oct", HOLE, max_depth=1, warm_start="greedy")


def test_octh_rejects_categorical_columns():
    with pytest.raises(DataError, match="OCT-H needs numeric"):
        solve_mip("oct-h", mixed_data(0), max_depth=1)


def test_single_class_is_rejected_by_the_dataset():
    with pytest.raises(DataError, match="single class"):
        Dataset(np.array([[0], [1]]), [1, 1])
