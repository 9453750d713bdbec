"""Tree: routing by every split kind, shape, exports (golden strings) and the exact JSON round trip."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odtmip.core.data import Dataset
from odtmip.core.exceptions import DataError, UnseenCategoryWarning
from odtmip.core.tree import Split, Tree, branch, leaf

NAMES = ["colour", "age", "smoker", "height"]
X = pd.DataFrame({
    "colour": ["red", "blue", "green", "red", "purple"],
    "age": [20.0, 35.0, 50.0, 65.0, 80.0],
    "smoker": [0, 1, 1, 0, 1],
    "height": [1.5, 1.6, 1.7, 1.8, 1.9],
})


def example_tree() -> Tree:
    return Tree(
        branch(Split("subset", (0,), categories=("red", "blue")),
               branch(Split("threshold", (1,), threshold=40.0), leaf(0), leaf(1)),
               branch(Split("binary", (2,)), leaf(1),
                      branch(Split("hyperplane", (1, 3), threshold=60.0, weights=(1.0, -10.0)), leaf(0), leaf(1)))),
        NAMES, ["no", "yes"])


def test_routing_follows_each_split_kind():
    t = example_tree()
    # green: not in subset -> age 50 > 40 -> leaf 1 ("yes"); purple (unseen) -> left -> age 80 -> yes
    # red 20: subset -> smoker 0 -> yes; blue 35: subset -> smoker 1 -> 35 - 16 = 19 < 60 -> no
    # red 65: subset -> smoker 0 -> yes
    assert t.predict(X).tolist() == ["yes", "no", "yes", "yes", "yes"]
    assert t.apply(X).tolist() == [5, 7, 3, 5, 3]


def test_bins_split_uses_half_open_buckets():
    s = Split("bins", (0,), edges=(10.0, 20.0, 30.0), bins=(0, 2))
    x = np.array([5.0, 10.0, 10.5, 20.0, 25.0, 30.0, 31.0])
    assert s.goes_right([x]).tolist() == [True, True, False, False, True, True, False]


def test_missing_values_count_as_smaller_than_every_number():
    x = np.array([np.nan, 1.0, 5.0])
    assert Split("threshold", (0,), threshold=2.0).goes_right([x]).tolist() == [False, False, True]
    assert Split("binary", (0,)).goes_right([x]).tolist() == [False, True, False]
    assert Split("bins", (0,), edges=(2.0,), bins=(0,)).goes_right([x]).tolist() == [True, True, False]
    assert Split("missing", (0,)).goes_right([x]).tolist() == [True, False, False]
    objects = np.array([None, 1, pd.NA, "a"], dtype=object)  # any missing marker, any dtype
    assert Split("missing", (0,)).goes_right([objects]).tolist() == [True, False, True, False]
    assert Split("threshold", (0,), threshold=0.5).goes_right([objects[:3]]).tolist() == [False, True, False]
    with pytest.raises(DataError, match="hyperplane split cannot route"):
        Split("hyperplane", (0,), threshold=0.0, weights=(1.0,)).goes_right([x])


def test_missing_split_text_json_and_dot():
    t = Tree(branch(Split("missing", (1,)), leaf(0, [2, 1]), leaf(1, [0, 3])), ["colour", "age"], ["no", "yes"])
    assert t.to_text() == ("|--- age is not missing\n|   class: no  (2/3)\n"
                           "|--- age is missing\n|   class: yes  (3/3)")
    assert '0 [label="age is missing"];' in t.to_dot()
    assert t.to_dict()["nodes"][0]["split"] == {"kind": "missing", "columns": [1]}
    assert Tree.from_dict(json.loads(t.to_json())) == t
    assert t.predict(pd.DataFrame({"colour": ["red", "blue"], "age": [np.nan, 3.0]})).tolist() == ["yes", "no"]


def test_shape_counts():
    t = example_tree()
    assert (t.depth, t.n_branch_nodes, t.n_leaves, t.n_nodes) == (3, 4, 5, 9)
    single = Tree(leaf(1), ["a"], [0, 1])
    assert (single.depth, single.n_branch_nodes, single.n_leaves) == (0, 0, 1)


def test_predict_by_position_and_by_name():
    t = example_tree()
    assert t.predict(X.to_numpy()).tolist() == t.predict(X).tolist()
    shuffled = X[["height", "smoker", "age", "colour"]]
    assert t.predict(shuffled).tolist() == t.predict(X).tolist()


def test_missing_column_and_wrong_width_are_clear_errors():
    t = example_tree()
    with pytest.raises(DataError, match="lacks the tree's feature"):
        t.predict(X.drop(columns="age").assign(other=1))
    with pytest.raises(DataError, match="expected 4 feature columns"):
        t.predict(np.zeros((2, 3)))
    with pytest.raises(DataError, match="NaN"):  # the hyperplane on age cannot weigh a missing value
        t.predict(X.assign(age=np.nan))


def test_leaf_counts_and_predict_proba():
    t = example_tree().fit_counts(X, np.array([1, 0, 1, 1, 0]), sample_weight=[1, 2, 1, 1, 3])
    leaves = {i: n.counts.tolist() for i, n in enumerate(t.nodes) if n.is_leaf}
    assert leaves == {2: [0.0, 0.0], 3: [3.0, 1.0], 5: [0.0, 2.0], 7: [2.0, 0.0], 8: [0.0, 0.0]}
    proba = t.predict_proba(X)
    assert np.allclose(proba.sum(axis=1), 1.0)
    assert proba[2].tolist() == [0.75, 0.25]


def test_json_round_trip_is_exact():
    t = example_tree().fit_counts(X, np.array([1, 0, 1, 1, 0]), sample_weight=[0.1, 2, 1, 1 / 3, 3])
    text = t.to_json()
    back = Tree.from_dict(json.loads(text))
    assert back == t
    assert back.to_json() == text
    assert back.predict(X).tolist() == t.predict(X).tolist()


def test_text_export_golden():
    t = Tree(branch(Split("threshold", (1,), threshold=37.5), leaf(0, [3, 1]),
                    branch(Split("subset", (0,), categories=("red",)), leaf(1, [0, 2]), leaf(0, [1, 0]))),
             ["colour", "age"], ["no", "yes"])
    assert t.to_text() == (
        "|--- age <= 37.5\n"
        "|   class: no  (3/4)\n"
        "|--- age > 37.5\n"
        "|   |--- colour not in {red}\n"
        "|   |   class: yes  (2/2)\n"
        "|   |--- colour in {red}\n"
        "|   |   class: no  (1/1)"
    )


def test_dot_export_golden():
    t = Tree(branch(Split("binary", (0,)), leaf(0), leaf(1)), ["smoker"], [0, 1])
    assert t.to_dot() == (
        'digraph Tree {\nnode [shape=box, style="rounded", fontname="helvetica"];\n'
        '0 [label="smoker = 1"];\n1 [label="class = 0"];\n2 [label="class = 1"];\n'
        '0 -> 1 [label="no"];\n0 -> 2 [label="yes"];\n}'
    )


def test_plot_draws_every_node():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    ax = example_tree().plot()
    assert len(ax.texts) >= example_tree().n_nodes


def test_invalid_splits_and_labels_are_rejected():
    with pytest.raises(ValueError, match="unknown split kind"):
        Split("oblique", (0,))
    with pytest.raises(ValueError, match="needs a threshold"):
        Split("threshold", (0,))
    with pytest.raises(ValueError, match="one weight per column"):
        Split("hyperplane", (0, 1), threshold=0.0, weights=(1.0,))
    with pytest.raises(ValueError, match="not a class index"):
        Tree(leaf(2), ["a"], ["x", "y"])
    with pytest.raises(ValueError, match="only 1 features"):
        Tree(branch(Split("binary", (3,)), leaf(0), leaf(1)), ["a"], [0, 1])


def _random_tree(draw, depth):
    if depth == 0 or draw(st.booleans()):
        return leaf(draw(st.integers(0, 2)), [draw(st.floats(0, 10, allow_nan=False)) for _ in range(3)])
    kind = draw(st.sampled_from(["binary", "subset", "threshold", "bins", "hyperplane", "missing"]))
    if kind == "binary":
        split = Split("binary", (2,))
    elif kind == "missing":
        split = Split("missing", (draw(st.integers(0, 3)),))
    elif kind == "subset":
        split = Split("subset", (0,), categories=tuple(draw(st.sets(st.sampled_from(["red", "blue", 3]), min_size=1))))
    elif kind == "threshold":
        split = Split("threshold", (1,), threshold=draw(st.floats(-1e6, 1e6, allow_nan=False)))
    elif kind == "bins":
        bins = tuple(sorted(draw(st.sets(st.integers(0, 3), min_size=1))))
        split = Split("bins", (1,), edges=(0.0, 1.5, 7.25), bins=bins)
    else:
        split = Split("hyperplane", (1, 3), threshold=draw(st.floats(-5, 5)), weights=(draw(st.floats(-2, 2)), 0.1))
    return branch(split, _random_tree(draw, depth - 1), _random_tree(draw, depth - 1))


@st.composite
def trees(draw):
    return Tree(_random_tree(draw, 4), NAMES, ["a", "b", 7])


@settings(max_examples=200, deadline=None)
@given(trees())
def test_json_round_trip_property(t):
    back = Tree.from_dict(json.loads(t.to_json()))
    assert back == t
    assert back.predict(X).tolist() == t.predict(X).tolist()


# ------------------------------------------------------------------ prediction data unlike the training data
def fitted_tree() -> Tree:
    """example_tree as a Dataset made it: the colours training saw, named columns, leaf counts."""
    t = example_tree().fit_counts(X, np.array([1, 0, 1, 1, 0]))
    return Tree.from_dict({**t.to_dict(), "levels": {"colour": ["blue", "green", "red"]}, "named_columns": True})


def test_unseen_categories_warn_with_the_column_and_their_count():
    # regression: 'Red' for 'red' went to the "not in" branch without a word
    new = X.assign(colour=["Red", "blue", "green", "Red", "purple"])
    with pytest.warns(UnseenCategoryWarning, match=r"^column 'colour' has 2 value\(s\) never seen in training, in 3 "
                                                   r"of 5 rows \(e.g. 'Red'\); they go to the 'not in' branch"):
        assert fitted_tree().predict(new).tolist() == example_tree().predict(new).tolist()
    with pytest.warns(UnseenCategoryWarning, match="column 'colour' has 2 value"):
        fitted_tree().predict_proba(new)


def test_a_column_with_none_of_the_training_values_is_refused():
    # regression: integer codes for a text column were routed left, every row, without a word
    codes = X.assign(colour=[2, 0, 1, 2, 3])
    with pytest.raises(DataError, match=r"^column 'colour': none of its 4 distinct values was seen in training \(e.g. "
                                        r"2; training saw 'blue', 'green', 'red'\): the wrong column, or other codes"):
        fitted_tree().predict(codes)


def test_missing_values_numeric_columns_and_seen_values_are_quiet(recwarn):
    t = fitted_tree()
    t.predict(X.assign(colour=[None, "red", np.nan, "blue", "green"], age=[1e9, -1.0, 3.5, 4.0, 5.0]))
    t.predict(X.iloc[:0])  # no rows
    assert not recwarn.list
    with pytest.warns(UnseenCategoryWarning):  # one new value alone is a warning, not the wrong column
        t.predict(X.iloc[:1].assign(colour="purple"))


def test_an_array_for_a_tree_fitted_on_named_columns_warns_as_scikit_learn_does():
    with pytest.warns(UserWarning, match="^X does not have valid feature names, but Tree was fitted with feature "):
        fitted_tree().predict(X.iloc[:4].to_numpy(dtype=object))  # the colours training saw
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        example_tree().predict(X.to_numpy(dtype=object))  # fitted on an array (or built by hand): no names to miss
        fitted_tree().apply(X.assign(colour="Red"))  # apply routes without comparing


def test_levels_and_names_round_trip_and_come_from_the_dataset():
    t = fitted_tree()
    assert Tree.from_dict(json.loads(t.to_json())) == t and t.levels == {"colour": ("blue", "green", "red")}
    data = Dataset(X.assign(colour=["red", None, "green", "red", "red"]), ["no", "yes", "no", "yes", "yes"])
    made = data.new_tree(leaf(0))
    assert made.levels == {"colour": ("green", "red")} and made.named_columns  # the missing level is not a value
    assert not Dataset(X.to_numpy(dtype=object), [0, 1, 0, 1, 1]).new_tree(leaf(0)).named_columns
