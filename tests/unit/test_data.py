"""Dataset and encodings: groups, label mapping, weights, unseen raw data, and one test per error kind."""

import math

import numpy as np
import pandas as pd
import pytest
from _data import NARROW_OR_HUGE
from hypothesis import assume, event, example, given, settings
from hypothesis import strategies as st

from odtmip.core.binarize import MISSING, midpoint, midpoint_thresholds, quantile_edges
from odtmip.core.data import Dataset
from odtmip.core.exceptions import DataError, OptionError, UnseenCategoryWarning
from odtmip.core.tree import branch, leaf
from odtmip.solving.check import check
from odtmip.solving.solvers import solve

RAW = pd.DataFrame({
    "colour": pd.Categorical(["red", "blue", "red", "green", "blue", "red"], categories=["red", "green", "blue"]),
    "shape": ["round", "square", "round", "round", None, "square"],
    "age": [23.0, 35.0, 41.0, 52.0, 60.0, 71.0],
    "smoker": [0, 1, 1, 0, 0, 1],
    "member": [True, False, True, True, False, False],
})
Y = ["yes", "no", "yes", "no", "no", "yes"]


def test_groups_by_column_kind():
    ds = Dataset(RAW, Y)
    kinds = [(g.name, g.kind, len(g.members)) for g in ds.groups]
    assert kinds == [("colour", "categorical", 3), ("shape", "categorical", 3), ("age", "ordinal", 6),
                     ("smoker", "binary", 1), ("member", "binary", 1)]
    assert ds.groups[0].levels == ("red", "green", "blue")  # declared category order kept
    assert ds.groups[1].levels == ("round", "square", MISSING)
    assert ds.n_binary == 14 and ds.Xb.dtype == np.uint8
    # one-hot groups have exactly one 1 per row
    for g in ds.groups[:3]:
        assert (ds.Xb[:, list(g.members)].sum(axis=1) == 1).all()


def test_labels_map_to_sorted_indices_and_back():
    ds = Dataset(RAW, Y)
    assert ds.classes_.tolist() == ["no", "yes"]
    assert ds.classes_[ds.y].tolist() == Y
    ds_int = Dataset(RAW, [3, 7, 3, 7, 7, 3])
    assert ds_int.classes_.tolist() == [3, 7] and ds_int.y.tolist() == [0, 1, 0, 1, 1, 0]


def test_threshold_encoding_all_midpoints_and_quantiles():
    ds = Dataset(RAW[["age"]], Y, numeric="thresholds")
    assert [c.name for c in ds.columns] == ["age>29", "age>38", "age>46.5", "age>56", "age>65.5"]
    assert midpoint_thresholds(np.arange(100.0), 3) == [24.5, 49.5, 74.5]


FINITE = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=500, deadline=None)
@given(a=FINITE, b=st.one_of(FINITE, st.just(None)))
@example(a=1e-300, b=None)
@example(a=1.6e308, b=1.7e308)
@example(a=-1.7e308, b=-1.6e308)
@example(a=5e-324, b=None)
def test_midpoint_lies_in_the_gap_it_splits(a, b):
    b = math.nextafter(a, math.inf) if b is None else b  # None: the next double above a
    assume(math.isfinite(b) and a != b)
    a, b = min(a, b), max(a, b)
    t = float(midpoint(a, b))
    assert math.isfinite(t) and a <= t < b  # x > t goes right: a left, b right


def test_midpoint_is_elementwise_and_the_usual_one_between_ordinary_values():
    a, b = zip(*NARROW_OR_HUGE.values(), (1.0, 2.0), strict=True)
    assert midpoint(a, b).tolist() == [1e-300, 1.6e308 / 2 + 1.7e308 / 2, -1.7e308 / 2 - 1.6e308 / 2, 0.0, 1.5]


@pytest.mark.parametrize("x", NARROW_OR_HUGE.values(), ids=NARROW_OR_HUGE)
def test_threshold_columns_separate_adjacent_and_huge_values(x):
    ds = Dataset(pd.DataFrame({"x": x}), [0, 1], numeric="thresholds")
    (t,) = ds.groups[0].edges
    assert math.isfinite(t) and x[0] <= t < x[1]
    assert ds.Xb[:, 0].tolist() == [0, 1]


def test_decile_buckets_by_default():
    v = np.arange(1.0, 101.0)
    edges = quantile_edges(v, 10)
    assert edges == tuple(float(e) for e in range(10, 100, 10))
    counts = np.bincount(np.searchsorted(edges, v, side="left"))
    assert counts.tolist() == [10] * 10


def test_encoding_applies_to_unseen_raw_data():
    ds = Dataset(RAW, Y, numeric="thresholds")
    new = pd.DataFrame({
        "colour": ["purple", "red"], "shape": ["oval", None], "age": [100.0, 10.0], "smoker": [1, 0],
        "member": [False, True],
    })
    Xb = ds.encoder.transform(new)
    names = [c.name for c in ds.columns]
    row0 = {n for n, v in zip(names, Xb[0], strict=True) if v}
    row1 = {n for n, v in zip(names, Xb[1], strict=True) if v}
    # unseen categories have all indicators 0; missing maps to its own level; thresholds extend to new values
    assert row0 == {"age>29", "age>38", "age>46.5", "age>56", "age>65.5", "smoker"}
    assert row1 == {"colour=red", f"shape={MISSING}", "member"}


def test_tree_on_binary_columns_predicts_raw_data():
    ds = Dataset(RAW, Y)
    colour_red = ds.groups[0].members[0]
    split, swap = ds.encoder.group_split(2, ds.groups[2].members[:3])  # age buckets 0..2: a prefix
    assert split.kind == "threshold" and swap and split.threshold == 41.0
    # red rows go right; there age <= 41 (the prefix, sent left because swap is True) predicts "yes"
    tree = ds.new_tree(branch(ds.split_of(colour_red), leaf(0), branch(split, leaf(1), leaf(0))))
    assert tree.predict(RAW).tolist() == ["yes", "no", "yes", "no", "no", "no"]
    assert ds.misclassifications(tree) == 1.0
    new = pd.DataFrame({"colour": ["red", "red", "violet"], "shape": ["x", "y", "z"], "age": [30.0, 90.0, 30.0],
                        "smoker": [0, 0, 1], "member": [False, False, True]})
    with pytest.warns(UnseenCategoryWarning, match="column 'colour' has 1 value"):  # violet; shape is not tested
        assert tree.predict(new).tolist() == ["yes", "no", "no"]
    assert "age <= 41" in tree.to_text() and "colour in {red}" in tree.to_text()


def test_group_split_forms():
    ds = Dataset(RAW, Y)
    colour = ds.groups[0]
    s, swap = ds.encoder.group_split(0, colour.members[:2])
    assert (s.kind, s.categories, swap) == ("subset", ("red", "green"), False)
    age = ds.groups[2]
    s, swap = ds.encoder.group_split(2, age.members[3:])
    assert (s.kind, s.threshold, swap) == ("threshold", 41.0, False)
    s, swap = ds.encoder.group_split(2, [age.members[1], age.members[3]])
    assert (s.kind, s.bins, swap) == ("bins", (1, 3), False)
    with pytest.raises(ValueError, match="non-empty subset"):
        ds.encoder.group_split(0, [age.members[0]])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False, width=32), min_size=2, max_size=40),
       st.sampled_from(["buckets", "thresholds"]))
def test_every_binary_column_is_its_split_on_the_raw_data(values, numeric):
    x = np.array(values, dtype=float)
    y = np.arange(len(x)) % 2
    ds = Dataset(pd.DataFrame({"v": x}), y, numeric=numeric, n_buckets=4)
    for j, col in enumerate(ds.columns):
        assert (ds.Xb[:, j] == col.split.goes_right([x])).all()
    if numeric == "buckets" and ds.n_binary > 1:
        assert (ds.Xb.sum(axis=1) == 1).all()  # every value lands in exactly one bucket


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(-1e3, 1e3, allow_nan=False, width=32), st.just(np.nan)), min_size=2, max_size=40)
       .filter(lambda v: not all(np.isnan(v))),
       st.sampled_from(["buckets", "thresholds"]), st.data())
def test_missing_numbers_keep_every_column_a_split_on_the_raw_data(values, numeric, draw):
    x = np.array(values, dtype=float)
    ds = Dataset(pd.DataFrame({"v": x}), np.arange(len(x)) % 2, numeric=numeric, n_buckets=4)
    for j, col in enumerate(ds.columns):
        assert (ds.Xb[:, j] == col.split.goes_right([x])).all()
    kinds = [g.kind for g in ds.groups]
    assert ("missing" in kinds) == bool(np.isnan(x).any())
    if numeric == "buckets" and ds.groups[0].kind == "ordinal":
        assert (ds.Xb[:, list(ds.groups[0].members)].sum(axis=1) == 1).all()  # still one bucket per row
        members = ds.groups[0].members
        right = draw.draw(st.sets(st.sampled_from(members), min_size=1))
        split, swap = ds.encoder.group_split(0, sorted(right))  # any subset of buckets, as a raw split
        assert ((split.goes_right([x]) ^ swap) == ds.Xb[:, sorted(right)].any(axis=1)).all()


def test_numeric_column_with_missing_values_gets_an_indicator_and_routes_like_its_encoding():
    X = pd.DataFrame({"age": [20.0, np.nan, 40.0, 50.0, np.nan, 70.0], "smoker": [0, 1, np.nan, 1, 0, 0]})
    ds = Dataset(X, ["a", "b", "a", "a", "b", "a"], numeric="thresholds")
    assert [(g.name, g.kind) for g in ds.groups] == [("age", "thresholds"), ("age is missing", "missing"),
                                                    ("smoker", "binary"), ("smoker is missing", "missing")]
    assert [c.name for c in ds.columns] == ["age>30", "age>45", "age>60", "age is missing", "smoker",
                                            "smoker is missing"]
    assert ds.missing_numeric == ["age", "smoker"]
    assert ds.Xb[1].tolist() == [0, 0, 0, 1, 1, 0]  # age missing: every x > t false; smoker 1
    assert "2 with missing values (+1 indicator each)" in ds.describe()
    result = solve(ds, "dp", max_depth=1)
    assert result.objective == 0 and "age is missing" in result.tree.to_text()
    assert result.tree.predict(X).tolist() == ["a", "b", "a", "a", "b", "a"]  # raw routing = the encoding's


def test_missing_numbers_with_gunluk_agree_with_the_dp():
    rng = np.random.default_rng(3)
    x = rng.normal(size=40).round(2)
    x[rng.random(40) < 0.3] = np.nan
    y = np.where(np.isnan(x) | (x > 0.5), 1, 0) ^ (rng.random(40) < 0.1)
    ds = Dataset(pd.DataFrame({"x": x, "z": rng.integers(0, 3, 40)}), y, n_buckets=4)
    assert check(ds, "gunluk", max_depth=2).verdict == "agree"


def test_nullable_dtypes_with_missing_values():
    X = pd.DataFrame({"n": pd.array([1, None, 3, 4], dtype="Int64"), "b": pd.array([True, None, False, True],
                                                                                  dtype="boolean")})
    ds = Dataset(X, [0, 1, 0, 1], numeric="thresholds")
    assert [c.name for c in ds.columns] == ["n>2", "n>3.5", "n is missing", "b", "b is missing"]
    assert ds.Xb[1].tolist() == [0, 0, 1, 0, 1]


@pytest.mark.parametrize("n_rows, n_levels, error", [(60, 60, True), (20, 11, True), (22, 11, False),
                                                      (12, 10, False)])
def test_id_like_categorical_columns(n_rows, n_levels, error):
    X = pd.DataFrame({"id": [f"u{i % n_levels}" for i in range(n_rows)], "a": np.arange(n_rows) % 2})
    y = np.arange(n_rows) % 3
    if error:
        with pytest.raises(DataError, match=f"column 'id' has {n_levels} distinct values in {n_rows} rows, like an "
                                            r"identifier: drop it \(--drop id\)"):
            Dataset(X, y)
    else:
        assert Dataset(X, y).groups[0].kind == "categorical"
    assert len(Dataset(X, y, allow_many_levels=True).groups[0].members) == n_levels


def test_target_name_is_kept_and_described():
    ds = Dataset(RAW, pd.Series(Y, name="buys"))
    assert ds.target == "buys" and "(target 'buys')" in ds.describe()
    assert Dataset(RAW, Y).target is None


def test_sample_weights():
    ds = Dataset(RAW, Y, sample_weight=[1, 2, 3, 4, 5, 6])
    tree = ds.new_tree(leaf(1))
    assert ds.misclassifications(tree) == 2 + 4 + 5
    assert Dataset(RAW, Y).weights.tolist() == [1.0] * 6


def test_numpy_input_gets_names_and_numeric_object_columns_stay_numeric():
    A = np.array([[1, "a", 0.5], [0, "b", 1.5], [1, "a", 2.5]], dtype=object)
    ds = Dataset(A, [0, 1, 0])
    assert ds.feature_names == ["x0", "x1", "x2"]
    assert [g.kind for g in ds.groups] == ["binary", "categorical", "ordinal"]
    ds = Dataset(np.eye(3), [0, 1, 1], feature_names=["a", "b", "c"])
    assert ds.feature_names == ["a", "b", "c"]


def outcome(make):
    """What ``make()`` gives, or the message of the DataError it raises."""
    try:
        return make()
    except DataError as exc:
        return f"DataError: {exc}"


def encoding(ds: Dataset):
    """All a Dataset decided: names, groups, binary columns and matrix, labels (compared across input kinds)."""
    return (ds.feature_names, ds.groups, [c.name for c in ds.columns], ds.Xb.tolist(), ds.y.tolist(),
            ds.classes_.tolist(), ds.describe())


NUMBERS = st.one_of(st.integers(-3, 3).map(float), st.floats(-5, 5), st.just(math.nan))


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 25).flatmap(lambda n: st.tuples(
           st.lists(st.lists(NUMBERS, min_size=n, max_size=n), min_size=1, max_size=3),
           st.lists(st.sampled_from([0.0, 1.0, 2.5]), min_size=n, max_size=n))),
       st.sampled_from([float, np.int64, bool]), st.sampled_from(["auto", "buckets", "thresholds"]),
       st.sampled_from([False] * 9 + [True]))
def test_an_array_of_numbers_is_kept_without_pandas_and_encoded_and_routed_as_its_dataframe(data, dtype, numeric,
                                                                                             no_label):
    columns, labels = data
    if no_label:
        labels[0] = math.nan
    A = np.array(columns, dtype=float).T
    if dtype is not float:
        A = np.nan_to_num(A).round().astype(dtype)
    y = np.array(labels)
    names = [f"x{c}" for c in range(A.shape[1])]
    ours = outcome(lambda: Dataset(A, y, numeric=numeric))
    theirs = outcome(lambda: Dataset(pd.DataFrame(A, columns=names), pd.Series(labels), numeric=numeric))
    event("refused" if isinstance(theirs, str) else "encoded")
    if isinstance(theirs, str):
        assert ours == theirs
        return
    assert isinstance(ours.raw, np.ndarray) and ours.raw.dtype == A.dtype
    assert encoding(ours) == encoding(theirs)
    pd.testing.assert_frame_equal(ours.X, theirs.X)
    for j in range(ours.n_binary):  # a tree routes the array as it routes the DataFrame
        spec = branch(ours.split_of(j), leaf(0), leaf(1))
        theirs_tree = theirs.new_tree(spec).to_dict()
        assert theirs_tree.pop("named_columns") and ours.new_tree(spec).to_dict() == theirs_tree
    rows = np.arange(0, A.shape[0], 2)
    assert encoding(ours.subset(rows))[3:5] == encoding(theirs.subset(rows))[3:5]


def test_an_array_of_numbers_is_copied():
    A = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0]])
    ds = Dataset(A, np.array([0, 1, 1]))
    A[:] = 7.0
    assert ds.raw.tolist() == [[0.0, 1.0], [1.0, 0.0], [2.0, 1.0]] and ds.column(0).tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("y, message", [
    (np.array([1.0, np.nan, 0.0, 0.0, 1.0, 1.0]), r"^y has 1 missing label\(s\); drop those rows first$"),
    (np.full(6, np.nan), r"^y has no labels \(all 6 values are missing\)"),
    (np.ones(6), r"^y has a single class \(1.0\)"),
    (np.array([True] * 6), r"^y has a single class \(True\)"),
])
def test_labels_in_an_array_of_numbers_are_refused_as_in_a_list(y, message):
    for labels in (y, list(y)):
        with pytest.raises(DataError, match=message):
            Dataset(np.zeros((6, 1)), labels)


def test_a_regression_target_in_an_array_of_numbers_is_refused():
    y = np.linspace(0, 1, 30)
    with pytest.raises(DataError, match=r"^y has 30 distinct numeric values \(not all whole numbers\): a regression"):
        Dataset(np.zeros((30, 1)), y)
    assert Dataset(np.zeros((30, 1)), y, force_classification=True).n_classes == 30


@pytest.mark.parametrize("X, y, kwargs, message", [
    (RAW, Y[:-1], {}, "X has 6 rows but y has 5 labels"),
    (RAW.iloc[:0], [], {}, "empty"),
    (RAW.iloc[:, :0], Y, {}, "X has 6 rows but no feature columns"),
    (RAW, ["yes"] * 6, {}, "single class"),
    (RAW, np.ones(6, dtype=np.int64), {}, r"^y has a single class \(1\); a classification"),  # not np.int64(1)
    (RAW, ["yes", None, "no", "no", "yes", "no"], {}, "missing label"),
    (RAW, [1, "a", 1, "a", 1, "a"], {}, "incomparable"),
    (RAW.assign(age=np.nan), Y, {}, r"column 'age' has no values \(all 6 are missing\); drop it"),
    (np.zeros(6), Y, {}, "must be 2-D"),
    (np.zeros((6, 2)), Y, {"feature_names": ["a"]}, "1 feature names for 2 columns"),
    (RAW, Y, {"sample_weight": [1, 2, 3]}, "sample_weight has 3 entries"),
    (RAW, Y, {"sample_weight": [1, -2, 3, 4, 5, 6]}, "negative"),
    (RAW, Y, {"sample_weight": [1, np.nan, 3, 4, 5, 6]}, "NaN"),
    (RAW, Y, {"sample_weight": [0] * 6}, "sums to zero"),
    (RAW, Y, {"sample_weight": [1e308] * 6}, r"sums to more than the largest float \(1.8e\+308\); scale"),
    (RAW, Y, {"categorical": ["nope"]}, r"categorical column\(s\) \['nope'\] not in the data"),
    (pd.DataFrame({"a": [*range(29), "n/a"]}), [0, 1] * 15, {},  # was "like an identifier"
     r"^column 'a' holds numbers but also 1 non-numeric value\(s\), in 1 row\(s\) \(e.g. 'n/a'\), so it reads as "
     r"text with 30 distinct values: mark them missing \(na_values, --na-values, or replace them with NaN\)"),
    (RAW, Y, {"feature_names": ["a"]}, "only for array input"),
    (RAW.assign(shape=["a", "a ", "b", "a", "b", "b"]), Y, {},
     r"column 'shape' has values that differ only in surrounding whitespace \('a' and 'a '\); strip them"),
])
def test_bad_input_raises_data_error(X, y, kwargs, message):
    with pytest.raises(DataError, match=message):
        Dataset(X, y, **kwargs)


@pytest.mark.parametrize("X, y, message", [
    (np.zeros((5, 0)), [0, 1, 0, 1, 1], r"X has 5 rows but no feature columns \(an array of shape \(5, 0\)\)"),
    (pd.DataFrame({"label": [0, 1, 0, 1, 1]})[[]], [0, 1, 0, 1, 1],
     r"X has 5 rows but no feature columns \(a DataFrame without columns\)"),
    (pd.DataFrame({"label": [0, 1, 0, 1, 1]})[[]], pd.Series([0, 1, 0, 1, 1], name="label"),
     "X has 5 rows but no feature columns .*only the target 'label' was given"),
])
def test_zero_feature_columns_are_named_not_called_empty(X, y, message):
    with pytest.raises(DataError, match=message):
        Dataset(X, y)


@pytest.mark.parametrize("kwargs, message", [
    ({"numeric": "deciles"}, "numeric encoding must be one of"),
    ({"n_buckets": 1}, "n_buckets must be an integer >= 2"),
    ({"n_thresholds": 0}, "n_thresholds must be a positive integer"),
])
def test_bad_encoding_options_raise_option_error(kwargs, message):
    with pytest.raises(OptionError, match=message):
        Dataset(RAW, Y, **kwargs)


def test_errors_are_value_errors():
    assert issubclass(DataError, ValueError) and issubclass(OptionError, ValueError)
