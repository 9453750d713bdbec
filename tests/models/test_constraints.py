"""Side constraints (odtmip.models.constraints) on every formulation, by brute force on tiny data: every tree of depth
<= 2 over the model's splits with every labelling of its leaves is enumerated; the constrained optimum is the least
loss among those whose ``holds`` is true, and each formulation's MIP must reach exactly it (or report infeasible when
no tree holds). ``holds`` and the rows agree on enumerated trees: a tree embedded in the constrained model with its
structure and labels fixed is feasible exactly when ``holds`` says so."""

import json

import numpy as np
import pandas as pd
import pyomo.environ as pyo
import pytest

import odtmip
from odtmip import Dataset, Status
from odtmip.constraints import (
    Custom,
    EqualOpportunity,
    FeatureCosts,
    Forbid,
    MaxFeatures,
    MinLeafSize,
    PredictiveEquality,
    Require,
    StatisticalParity,
    canonical,
)
from odtmip.core.exceptions import DataError, OptionError
from odtmip.core.tree import branch, leaf
from odtmip.models import FORMULATIONS, solve_model

pytestmark = pytest.mark.highs

NAMES = ("gunluk", "binoct", "oct")
#: The components that fix a tree's structure and its leaves' classes in each model.
FIXED = {"gunluk": ("v", "z"), "binoct": ("f", "t", "s", "p"), "oct": ("a", "b", "d", "c")}


def tiny(name: str, seed: int = 24, n: int = 10) -> Dataset:
    """Columns a (3 values), b (2 values) and a protected g (2 values); labels that depend on all three (the seed
    makes nearly every constraint of CASES bind: test_the_constraints_bind)."""
    rng = np.random.default_rng(seed)
    a, b, g = rng.integers(0, 3, n), rng.integers(0, 2, n), rng.integers(0, 2, n)
    y = (((a == 1) & (g == 1)) | ((b == 1) & (a != 2)) ^ (rng.random(n) < 0.15)).astype(int)
    if name == "gunluk":
        X = pd.DataFrame({c: pd.Categorical(v.astype(str)) for c, v in zip("abg", (a, b, g), strict=True)})
    else:
        X = pd.DataFrame({c: v.astype(float) for c, v in zip("abg", (a, b, g), strict=True)})
    return Dataset(X, y)


def labelled_trees(n_columns: int, n_classes: int, depth: int) -> list:
    """Every tree of depth <= ``depth`` over ``n_columns`` binary columns as nested tuples, ("leaf", k) or
    (column, left, right), each leaf labelled every way."""
    leaves = [("leaf", k) for k in range(n_classes)]
    if depth == 0:
        return leaves
    below = labelled_trees(n_columns, n_classes, depth - 1)
    return leaves + [(j, left, right) for j in range(n_columns) for left in below for right in below]


def canonical_form(s, X: np.ndarray, rows: np.ndarray):
    """(the canonical form of tree ``s`` on ``rows``, the classes it predicts there), written apart from the
    library's :func:`canonical`: a split with an empty side goes, a subtree predicting one class is one leaf."""
    if s[0] == "leaf":
        return s, {s[1]} if rows.any() else set()
    j, left, right = s
    goes_right = rows & (X[:, j] == 1)
    (cl, pl), (cr, pr) = canonical_form(left, X, rows & ~goes_right), canonical_form(right, X, goes_right)
    predicted = pl | pr
    if len(predicted) == 1:
        return ("leaf", next(iter(predicted))), predicted
    if not goes_right.any():
        return cl, pl
    if not (rows & ~goes_right).any():
        return cr, pr
    return (j, cl, cr), predicted


def as_spec(columns: Dataset, s):
    return leaf(s[1]) if s[0] == "leaf" else branch(columns.split_of(s[0]), as_spec(columns, s[1]),
                                                     as_spec(columns, s[2]))


_ENUMERATED: dict = {}


def enumerated(name: str):
    """(data, [(tree, loss)]) for the formulation's tiny data: the distinct canonical trees of every labelled tree of
    depth <= 2 over the model's splits (a tree and its canonical tree have the same loss and the same verdicts)."""
    if name not in _ENUMERATED:
        data = tiny(name)
        f = FORMULATIONS[name]
        opts = f.make_options(2, None, {})
        columns = f.dp_bound_problem(data, 2, opts).data
        X, every = np.asarray(columns.Xb, dtype=np.int64), np.ones(data.n_samples, dtype=bool)
        forms = {canonical_form(s, X, every)[0] for s in labelled_trees(X.shape[1], data.n_classes, 2)}
        trees = [data.new_tree(as_spec(columns, s)) for s in sorted(forms, key=str)]
        assert all(canonical(t, data) is t for t in trees)  # the library's canonical form agrees
        _ENUMERATED[name] = (data, [(t, f.loss(data, t, opts)) for t in trees])
    return _ENUMERATED[name]


def brute_optimum(name: str, constraints) -> float | None:
    data, trees = enumerated(name)
    for c in constraints:
        c.prepare(data)
    losses = [loss for tree, loss in trees if all(c.holds(tree, data) for c in constraints)]
    return min(losses, default=None)


CASES = {
    "parity": lambda: [StatisticalParity("g", 0.2)],
    "parity-0": lambda: [StatisticalParity("g", 0.0)],
    "opportunity": lambda: [EqualOpportunity("g", 0.25)],
    "equality": lambda: [PredictiveEquality("g", 0.1)],
    "parity-split-on-g": lambda: [StatisticalParity("g", 0.1, split_on_protected=True)],
    "max-features-1": lambda: [MaxFeatures(1)],
    "max-features-0": lambda: [MaxFeatures(0)],
    "costs": lambda: [FeatureCosts({"a": 3, "b": 1, "g": 1}, 2)],
    "forbid": lambda: [Forbid(["a"])],
    "require-root": lambda: [Require("g", at="root")],
    "require-anywhere": lambda: [Require("b")],
    "min-leaf": lambda: [MinLeafSize(3)],
    "mixed": lambda: [MaxFeatures(2), MinLeafSize(2), StatisticalParity("g", 0.3)],
}
INFEASIBLE = {
    "require-forbidden": lambda: [Require("a", at="root"), Forbid("a")],
    "require-no-feature": lambda: [Require("b"), MaxFeatures(0)],
    "min-leaf-above-rows": lambda: [MinLeafSize(11)],
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("name", NAMES)
def test_the_mip_reaches_the_brute_force_constrained_optimum(name, case):
    expected = brute_optimum(name, CASES[case]())
    assert expected is not None
    data, _ = enumerated(name)
    result = odtmip.solve(data, name, max_depth=2, constraints=CASES[case]())
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(expected, abs=1e-9), result.tree
    assert all(c.holds(result.tree, data) for c in CASES[case]())


def test_the_constraints_bind():
    binding = [(name, case) for name in NAMES for case, make in CASES.items()
               if brute_optimum(name, make()) > brute_optimum(name, []) + 1e-9]
    assert len(binding) >= 35  # of 39: the tests below compare optima the constraints move


@pytest.mark.parametrize("case", sorted(INFEASIBLE))
@pytest.mark.parametrize("name", NAMES)
def test_a_combination_no_tree_meets_is_infeasible(name, case):
    assert brute_optimum(name, INFEASIBLE[case]()) is None
    data, _ = enumerated(name)
    result = odtmip.solve(data, name, max_depth=2, constraints=INFEASIBLE[case]())
    assert result.status is Status.INFEASIBLE and result.tree is None


def embedded_feasible(f, m, data, tree, names) -> bool | None:
    """Whether the model ``m`` has a solution with ``tree``'s structure and labels fixed (None: it does not embed)."""
    pairs = f.embed(m, data, tree)
    if pairs is None:
        return None
    fixed = [(v, x) for v, x in pairs if v.parent_component().local_name in names and not v.fixed and x is not None]
    for v, x in fixed:
        v.fix(round(x) if v.is_integer() else x)
    try:
        return solve_model(m).status is Status.OPTIMAL
    finally:
        for v, _ in fixed:
            v.unfix()


def agreement(name: str, case: str, every: int) -> int:
    """Check ``holds`` against the rows on every ``every``-th enumerated tree; returns the number checked."""
    data, trees = enumerated(name)
    f = FORMULATIONS[name]
    opts = f.constrained(f.make_options(2, None, {}))
    constraints = (CASES | INFEASIBLE)[case]()
    for c in constraints:
        c.prepare(data)
    plain, constrained = f.build(data, 2, opts), f.build(data, 2, opts)
    view = f.view(constrained, data)
    for c in constraints:
        c.rows(constrained, view, data)
    view.free_labels and view.free_labels()  # noqa: B018 (the rows read the labels)
    if name == "oct":
        f.view(plain, data).free_labels()
    checked = 0
    for tree, _ in trees[::every]:
        if not embedded_feasible(f, plain, data, tree, FIXED[name]):
            continue  # not a tree of the model as embedded (OCT's fixed threshold, Günlük's fixed leaf classes)
        holds = all(c.holds(tree, data) for c in constraints)
        assert embedded_feasible(f, constrained, data, tree, FIXED[name]) is holds, (case, tree)
        checked += 1
    return checked


@pytest.mark.parametrize("case", ["parity", "opportunity", "max-features-1", "costs", "forbid", "require-root",
                                  "require-anywhere", "min-leaf"])
@pytest.mark.parametrize("name", NAMES)
def test_holds_agrees_with_the_rows_on_sampled_trees(name, case):
    assert agreement(name, case, every=23) >= 3


@pytest.mark.bench
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("name", NAMES)
def test_holds_agrees_with_the_rows_on_every_tree(name, case):
    assert agreement(name, case, every=1) >= 20


@pytest.mark.parametrize("name", NAMES)
def test_the_dp_bound_rows_keep_the_constrained_optimum(name):
    data, _ = enumerated(name)
    constraints = [StatisticalParity("g", 0.1), MaxFeatures(2)]
    plain = odtmip.solve(data, name, max_depth=2, constraints=constraints)
    bounded = odtmip.solve(data, name, max_depth=2, constraints=constraints, dp_bounds="root")
    assert bounded.status is Status.OPTIMAL and bounded.objective == pytest.approx(plain.objective, abs=1e-9)
    assert bounded.stats["dp_rows"] >= 1


def test_the_dp_takes_the_constraints_it_expresses_exactly():
    data, _ = enumerated("binoct")  # numeric columns: the DP searches every midpoint, as BinOCT
    for constraints in ([Forbid("a")], [MinLeafSize(3)], [Forbid("b"), MinLeafSize(2)]):
        dp = odtmip.solve(data, "dp", max_depth=2, constraints=constraints)
        errors = brute_optimum("binoct", constraints) * data.weights.sum()
        assert dp.status is Status.OPTIMAL and dp.objective == pytest.approx(errors, abs=1e-9)
        assert dp.stats["constraints"] == [c.describe() for c in constraints]
    with pytest.raises(OptionError, match="MaxFeatures"):
        odtmip.solve(data, "dp", max_depth=2, constraints=[MaxFeatures(1)])
    with pytest.raises(OptionError, match="Forbid"):
        odtmip.solve(data, "contree", max_depth=2, constraints=[Forbid("a")])


def test_the_warm_start_under_the_constraints_the_dp_expresses():
    data, _ = enumerated("binoct")
    result = odtmip.solve(data, "binoct", max_depth=2, constraints=[Require("g", at="root"), MinLeafSize(2)])
    assert result.stats["warm_start_accepted"] is True or result.stats.get("warm_start_constrained_dp")
    root = result.tree.nodes[0]
    assert root.split.column == data.feature_names.index("g")


def test_a_custom_constraint_adds_rows_and_says_when_it_was_not_checked():
    data, _ = enumerated("binoct")

    def first_row_positive(m, view):
        m.first_row_positive = pyo.Constraint(expr=view.row_predicted(0, 1) == 1)

    result = odtmip.solve(data, "binoct", max_depth=2, constraints=[Custom(first_row_positive)])
    assert result.tree.predict_index(data.X)[0] == 1
    assert result.stats["constraints_unchecked"] == ["Custom(first_row_positive)"]
    checked = odtmip.solve(data, "binoct", max_depth=2, constraints=[
        Custom(first_row_positive, holds=lambda tree, d: tree.predict_index(d.X)[0] == 1)])
    assert "constraints_unchecked" not in checked.stats
    assert checked.objective == pytest.approx(result.objective)


def test_oct_h_meets_its_constraints():
    data, _ = enumerated("oct")
    constraints = [StatisticalParity("g", 0.1), MaxFeatures(1)]
    result = odtmip.solve(data, "oct-h", max_depth=1, constraints=constraints)
    assert result.status is Status.OPTIMAL and all(c.holds(result.tree, data) for c in constraints)


def test_bad_constraints_are_refused_with_one_line():
    data, _ = enumerated("binoct")
    with pytest.raises(DataError, match="unknown column 'zz'"):
        odtmip.solve(data, "binoct", max_depth=1, constraints=[Forbid("zz")])
    with pytest.raises(OptionError, match="max_gap"):
        StatisticalParity("g", 1.5)
    with pytest.raises(OptionError, match="constraints must be"):
        odtmip.solve(data, "binoct", max_depth=1, constraints=[MaxFeatures])
    with pytest.raises(OptionError, match="at must be"):
        Require("a", at="leaf")


def test_weighted_rates_count_sample_weight():
    X = pd.DataFrame({"g": [0.0, 0.0, 1.0, 1.0], "x": [0.0, 1.0, 0.0, 1.0]})
    data = Dataset(X, [0, 1, 0, 1], sample_weight=[1, 3, 1, 1])
    tree = data.new_tree(branch(data.split_of(1), leaf(0), leaf(1)))  # predicts x
    parity = StatisticalParity("g", 0.2)
    assert parity.gap(tree, data) == pytest.approx(3 / 4 - 1 / 2)  # weighted: 3/4 of group 0, 1/2 of group 1
    assert not parity.holds(tree, data) and StatisticalParity("g", 0.25).holds(tree, data)


def test_canonical_trees_drop_useless_splits():
    data, _ = enumerated("binoct")
    same = data.new_tree(branch(data.split_of(0), leaf(1), leaf(1)))
    assert canonical(same, data).n_nodes == 1
    assert not Require(data.feature_names[data.columns[0].split.column]).holds(same, data)
    assert MaxFeatures(0).holds(same, data)


def test_every_pair_of_three_groups_is_held_to_the_gap():
    X = pd.DataFrame({"g": [0, 1, 2] * 4, "x": [0.0, 1.0] * 6})
    data = Dataset(X, [0, 1] * 6)
    tree = data.new_tree(leaf(1))
    assert StatisticalParity("g", 0.0).holds(tree, data)
    model = odtmip.solve(data, "binoct", max_depth=1, constraints=[StatisticalParity("g", 0.0)])
    assert model.status is Status.OPTIMAL
    assert StatisticalParity("g", 0.0).gap(model.tree, data) == 0.0


def test_the_size_the_routing_adds_to_gunluk():
    data, _ = enumerated("gunluk")
    f = FORMULATIONS["gunluk"]
    opts = f.make_options(2, None, {})
    plain, full = f.size(data, 2, opts), f.size(data, 2, f.constrained(opts))
    assert full["n_variables"] > plain["n_variables"] and full["n_constraints"] > plain["n_constraints"]


@pytest.mark.parametrize("name", NAMES)
def test_check_expects_equality_where_the_dp_expresses_the_constraints_and_a_bound_elsewhere(name):
    from odtmip.solving.check import check

    data, _ = enumerated(name)
    exact = check(data, name, max_depth=2, constraints=[Forbid("a"), MinLeafSize(2)])
    assert exact.relation == "equal" and exact.verdict == "agree"
    assert exact.mip.objective == pytest.approx(brute_optimum(name, [Forbid("a"), MinLeafSize(2)]), abs=1e-9)
    bound = check(data, name, max_depth=2, constraints=[StatisticalParity("g", 0.0)])
    assert bound.relation == "bound" and bound.verdict == "agree"
    assert bound.problem.in_model_units(bound.dp_deep.objective) < bound.mip.objective  # the parity binds


def test_the_command_line_takes_the_constraints(tmp_path):
    import subprocess
    import sys

    data, _ = enumerated("binoct")
    path = tmp_path / "tiny.csv"
    data.X.assign(y=data.y).to_csv(path, index=False)
    costs = tmp_path / "costs.csv"
    costs.write_text("column,cost\na,3\nb,1\ng,1\n")
    command = [sys.executable, "-m", "odtmip.cli", "fit", str(path), "--target", "y", "--solver", "binoct", "--depth",
               "2", "--json"]
    for flags, case in ((["--parity", "g:0"], "parity-0"), (["--feature-costs", str(costs), "--budget", "2"], "costs"),
                        (["--forbid", "a"], "forbid")):
        done = subprocess.run(command + flags, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        record = json.loads(done.stdout)
        assert record["status"] == "optimal"
        assert record["objective"] == pytest.approx(brute_optimum("binoct", CASES[case]()), abs=1e-9)
    bad = subprocess.run(command + ["--parity", "g:2"], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "odtmip: error: --parity g:2: expected COL:GAP with GAP a number in [0, 1]"]


def test_the_estimator_takes_the_constraints():
    from sklearn.base import clone

    from odtmip import OptimalTreeClassifier

    data, _ = enumerated("binoct")
    est = OptimalTreeClassifier(solver="binoct", max_depth=2, constraints=[StatisticalParity("g", 0.0)])
    est.fit(data.X, data.y)
    assert 1 - est.score(data.X, data.y) == pytest.approx(brute_optimum("binoct", CASES["parity-0"]()), abs=1e-9)
    assert clone(est).get_params()["constraints"][0].describe() == "StatisticalParity('g', 0)"
