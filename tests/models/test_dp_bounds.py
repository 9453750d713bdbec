"""The DP's bound rows of every formulation (dp_bounds, odtmip.models.view) by brute force: every tree of a tiny
model keeps its optimum when the rows are added (no feasible tree is cut off), the rows are tight at the optimum,
and the LP relaxation with them proves the DP's optimum."""

import numpy as np
import pandas as pd
import pytest
from _brute import _spec, all_trees

import odtmip
from odtmip import Dataset, Status
from odtmip.core.exceptions import OptionError
from odtmip.dp.bounds import split_values, target_values
from odtmip.models import FORMULATIONS, solve_model
from odtmip.models.view import add_dp_rows, root_bounds
from odtmip.solving.pipeline import lp_proves

pytestmark = pytest.mark.highs

#: The components that fix a tree's structure in each model: with them fixed, the model's optimum is the best
#: labelling of that structure.
STRUCTURE = {"gunluk": ("v", "z"), "binoct": ("f", "t", "s"), "oct": ("a", "b", "d")}
#: Model options of each case: the plain model and its penalised or weighted variant.
CASES = [("gunluk", {}), ("gunluk", {"class_weight": 2.0}), ("binoct", {}), ("binoct", {"leaf_penalty": 0.1}),
         ("oct", {}), ("oct", {"alpha": 0.2, "min_leaf": 2})]


def tiny(name: str, seed: int, n: int = 9) -> Dataset:
    """Two columns of 2-3 values (categorical for Günlük, numeric for the others) and noisy labels."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 3, n), rng.integers(0, 2, n)
    y = ((a == 1) ^ (b == 1) ^ (rng.random(n) < 0.25)).astype(int)
    y[:2] = [0, 1]
    if name == "gunluk":
        X = pd.DataFrame({"a": pd.Categorical(a.astype(str)), "b": pd.Categorical(b.astype(str))})
    else:
        X = pd.DataFrame({"a": a.astype(float), "b": b.astype(float)})
    return Dataset(X, y, sample_weight=rng.integers(1, 3, n))


def bounded_model(name: str, given: dict, depth: int, mode: str, n: int, seeds=range(1, 41)):
    """Tiny data (the first of ``seeds`` whose model gets rows one level down, when ``mode`` is "paths" and one
    does), its options, the DP problem, its values, and the model without and with the rows."""
    f = FORMULATIONS[name]
    opts = f.make_options(depth, None, dict(given))
    for seed in seeds:
        data = tiny(name, seed=seed, n=n)
        problem = f.dp_bound_problem(data, depth, opts)
        values = split_values(problem.data, problem.deep, problem.penalty, problem.min_leaf, paths=mode == "paths")
        bounded = f.build(data, depth, opts)
        stats = add_dp_rows(bounded, f.view(bounded, data), values, mode, problem.penalty)
        if mode == "root" or stats["dp_rows"] > 1:
            break
    return data, opts, problem, f.build(data, depth, opts), bounded, stats


def every_tree(problem, depth: int, every: int = 1):
    """Every tree of depth <= ``depth`` over the DP problem's columns (each leaf its best class); with ``every`` = k
    every k-th of them."""
    X = np.asarray(problem.data.Xb, dtype=np.int64)
    data = problem.data
    trees = all_trees(X, data.y, data.weights, data.n_classes, np.arange(data.n_samples), depth, 1)
    for _, _, s in trees[::every]:
        yield data.new_tree(_spec(data, s))


def optimum_with_structure(m, pairs, names) -> tuple[Status, float | None]:
    """The model's optimum with the structure of an embedded tree fixed (``pairs`` of the components ``names``)."""
    fixed = [(v, x) for v, x in pairs if v.parent_component().local_name in names and not v.fixed and x is not None]
    for v, x in fixed:
        v.fix(round(x) if v.is_integer() else x)
    try:
        run = solve_model(m)
        return run.status, run.objective
    finally:
        for v, _ in fixed:
            v.unfix()


@pytest.mark.parametrize("name, given", CASES)
@pytest.mark.parametrize("mode", ["root", "paths"])
def test_no_tree_of_the_model_is_cut_off_by_the_rows(name, given, mode):
    f = FORMULATIONS[name]
    depth = 2
    data, opts, problem, plain, bounded, stats = bounded_model(name, given, depth, mode, n=9)
    assert stats["dp_rows"] > (1 if mode == "paths" else 0)
    checked = 0
    for tree in every_tree(problem, depth):
        pairs = f.embed(bounded, data, tree)
        if pairs is None:
            continue
        pairs_plain = f.embed(plain, data, tree)
        without = optimum_with_structure(plain, pairs_plain, STRUCTURE[name])
        with_rows = optimum_with_structure(bounded, pairs, STRUCTURE[name])
        if without[0] is not Status.OPTIMAL:
            continue  # the structure as embedded is not feasible in the model itself (OCT's fixed threshold b)
        assert with_rows[0] is Status.OPTIMAL, tree
        assert with_rows[1] == pytest.approx(without[1], rel=1e-7, abs=1e-7), tree
        checked += 1
    assert checked >= 8  # most trees over the columns embed in the model and meet its N_min


@pytest.mark.parametrize("name, given", CASES)
def test_the_root_row_is_tight_at_the_optimum_and_the_lp_proves_it(name, given):
    data = tiny(name, seed=3, n=12)
    result = odtmip.solve(data, name, max_depth=2, dp_bounds="root", **given)
    dp = odtmip.solve(data, name, max_depth=2, **given)
    assert result.status is Status.OPTIMAL and result.objective == pytest.approx(dp.objective, abs=1e-9)
    assert result.stats["proved_by"] in ("lp", "mip", "trivial")
    f = FORMULATIONS[name]
    opts = f.make_options(2, None, dict(given))
    problem = f.dp_bound_problem(data, 2, opts)
    values = split_values(problem.data, 2, problem.penalty, problem.min_leaf)
    m = f.build(data, 2, opts)
    lbs = root_bounds(f.view(m, data), values)
    assert problem.in_model_units(min(lbs)) == pytest.approx(result.objective, abs=1e-9)  # LB of the best root choice


def test_inflated_values_cut_off_the_optimum_so_the_brute_force_test_can_fail():
    name = "binoct"
    f = FORMULATIONS[name]
    data = tiny(name, seed=1)
    opts = f.make_options(2, None, {})
    problem = f.dp_bound_problem(data, 2, opts)
    values = split_values(problem.data, 2, problem.penalty, problem.min_leaf)
    values.root = values.root + 1.0  # one error more than any tree below each split
    m = f.build(data, 2, opts)
    add_dp_rows(m, f.view(m, data), values, "root", problem.penalty)
    run = solve_model(m)
    best = odtmip.solve(data, name, max_depth=2)
    assert f.to_loss(m)(run.objective) > best.objective + 1e-9


def test_oct_h_takes_no_dp_bounds_and_bad_values_are_refused():
    data = tiny("oct", seed=0)
    with pytest.raises(OptionError, match="dp_bounds"):
        odtmip.solve(data, "oct-h", max_depth=1, dp_bounds="root")
    with pytest.raises(OptionError, match="dp_bounds"):
        odtmip.solve(data, "binoct", max_depth=1, dp_bounds="everything")
    with pytest.raises(OptionError, match="depth of at least 2"):
        odtmip.solve(data, "binoct", max_depth=1, dp_bounds="paths")
    with pytest.raises(OptionError, match="target"):
        odtmip.solve(data, "binoct", max_depth=2, dp_bounds="paths", min_specificity=0.5)


@pytest.mark.parametrize("lp, incumbent, weights, penalty, proves", [
    (11.2, 12.0, [1, 1], 0.0, True),  # integer losses: nothing lies strictly between 11 and 12
    (11.0, 12.0, [1, 1], 0.0, False),
    (11.2, 12.0, [1, 0.5], 0.0, False),  # real weights: the bound must reach the incumbent
    (12.0 - 1e-9, 12.0, [1, 0.5], 0.0, True),
    (11.2, 12.0, [1, 1], 0.5, False),
])
def test_the_lp_proves_a_tree_only_when_no_better_loss_fits_between(lp, incumbent, weights, penalty, proves):
    from odtmip.models.formulation import DPProblem

    data = Dataset(np.array([[0], [1]]), [0, 1], sample_weight=weights)
    assert lp_proves(DPProblem(data, 1, 1, penalty=penalty), lp, incumbent) is proves


@pytest.mark.parametrize("name, given", [("gunluk", {}), ("gunluk", {"topology": "depth2.5"}), ("binoct", {}),
                                         ("oct", {})])
def test_depth_three_paths_add_rows_that_hold_for_sampled_trees(name, given):
    f = FORMULATIONS[name]
    data, opts, problem, plain, bounded, stats = bounded_model(name, given, 3, "paths", n=12, seeds=[2])
    assert stats["dp_rows"] > (0 if name == "gunluk" else 1)  # two columns leave Günlük's depth-3 paths dominated
    checked = 0
    shallow = list(every_tree(problem, problem.shallow, every=3)) if problem.shallow < problem.deep else []
    for tree in shallow + list(every_tree(problem, problem.deep, every=37)):
        pairs = f.embed(bounded, data, tree)
        if pairs is None:
            continue
        without = optimum_with_structure(plain, f.embed(plain, data, tree), STRUCTURE[name])
        if without[0] is not Status.OPTIMAL:
            continue
        with_rows = optimum_with_structure(bounded, pairs, STRUCTURE[name])
        assert with_rows[1] == pytest.approx(without[1], rel=1e-7, abs=1e-7), tree
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize("name", ["gunluk", "binoct", "oct"])
@pytest.mark.parametrize("target", [{"min_specificity": 0.6}, {"min_sensitivity": 0.8}])
def test_under_a_target_the_rows_cut_off_no_tree_and_keep_the_optimum(name, target):
    f = FORMULATIONS[name]
    data = tiny(name, seed=4, n=10).reweighted(None)  # the DP's targets count rows as (15) does: unit weights
    opts = f.make_options(2, None, dict(target))
    problem = f.dp_bound_problem(data, 2, opts)
    values = target_values(problem.data, problem.deep, problem.two_class)
    plain, bounded = f.build(data, 2, opts), f.build(data, 2, opts)
    add_dp_rows(bounded, f.view(bounded, data), values, "root", problem.penalty)
    checked = 0
    for tree in every_tree(problem, 2):
        pairs = f.embed(bounded, data, tree)
        if pairs is None:
            continue
        without = optimum_with_structure(plain, f.embed(plain, data, tree), STRUCTURE[name])
        with_rows = optimum_with_structure(bounded, pairs, STRUCTURE[name])
        assert with_rows[0] is without[0], tree
        if without[0] is Status.OPTIMAL:
            assert with_rows[1] == pytest.approx(without[1], rel=1e-7, abs=1e-7), tree
            checked += 1
    assert checked >= 5
    bounded_result = odtmip.solve(data, name, max_depth=2, dp_bounds="root", **target)
    plain_result = odtmip.solve(data, name, max_depth=2, **target)
    assert bounded_result.status is plain_result.status is Status.OPTIMAL
    assert bounded_result.objective == pytest.approx(plain_result.objective, abs=1e-9)
