"""No silent data guesses: which column is the target, how CSV values are typed, which labels are refused, and
which of a file and a bundled set a name means."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from odtmip.core import datasets as ds
from odtmip.core.data import Dataset
from odtmip.core.exceptions import DataError, FormatError, OptionError


def _csv(tmp_path: Path, text: str, name: str = "d.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _one_line(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


def _rows(header: str, rows) -> str:
    return header + "\n" + "".join(",".join(map(str, row)) + "\n" for row in rows)


# ------------------------------------------------------------------------------------------------------
# The target column
# ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["class", "Label", "TARGET", "y"])
def test_a_column_named_like_a_target_is_taken_wherever_it_is(tmp_path, name):
    path = _csv(tmp_path, f"a,{name},b\n1,p,2\n3,q,4\n")
    X, y = ds.load(path)
    assert y.name == name and list(X.columns) == ["a", "b"]


def test_no_target_named_is_an_error_listing_the_columns(tmp_path):
    path = _csv(tmp_path, "a,b,outcome\n1,2,x\n3,4,y\n")
    with pytest.raises(DataError) as exc:
        ds.load(path)
    assert _one_line(exc) == (f"{path}: no column is named class, label, target or y; name the target with "
                              "--target (columns: a, b, outcome)")
    assert ds.load(path, target="outcome")[1].name == "outcome"


def test_several_targets_named_is_an_error_and_drop_settles_it(tmp_path):
    path = _csv(tmp_path, "a,class,label\n1,p,x\n3,q,y\n")
    with pytest.raises(DataError, match="columns 'class' and 'label' could each be the target; name it with "
                                        r"--target \(columns: a, class, label\)"):
        ds.load(path)
    X, y = ds.load(path, drop=["label"])
    assert y.name == "class" and list(X.columns) == ["a"]


def test_the_chosen_target_is_logged(tmp_path, caplog):
    path = _csv(tmp_path, "a,label\n1,p\n3,q\n")
    with caplog.at_level(logging.INFO, logger="odtmip"):
        ds.load(path)
    assert "target 'label', the column named like a label" in caplog.text


# ------------------------------------------------------------------------------------------------------
# Labels a classification tree refuses
# ------------------------------------------------------------------------------------------------------

RNG = np.random.default_rng(0)
X60 = pd.DataFrame({"a": np.arange(60) % 2})


@pytest.mark.parametrize("y, message", [
    (pd.Series(RNG.normal(size=60).round(2), name="price"),
     r"target 'price' has \d+ distinct numeric values \(not all whole numbers\): a regression target, not class "
     r"labels; choose the label column \(--target\), or pass --classification \(force_classification=True\)"),
    (pd.Series(np.arange(60) * 7, name="count"), r"target 'count' has 60 distinct numeric values \(in 60 rows\)"),
    (pd.Series([f"2021-03-{i % 28 + 1:02d}" for i in range(60)], name="when"),
     r"target 'when' holds dates \(e.g. '2021-03-01'\), not class labels"),
    (pd.Series(pd.date_range("2020-01-01", periods=60), name="when"), "target 'when' holds dates"),
    (pd.Series([np.nan] * 60, name="y"), r"target 'y' has no labels \(all 60 values are missing\)"),
    (pd.Series(["yes"] * 60, name="y"), r"target 'y' has a single class \('yes'\)"),
    (pd.Series(["yes", "yes "] * 30, name="y"),
     r"target 'y' has labels that differ only in surrounding whitespace \('yes' and 'yes '\); strip them"),
    (pd.Series(["yes", None] * 30, name="y"), r"target 'y' has 30 missing label\(s\); drop those rows first"),
])
def test_labels_that_are_not_class_labels_are_refused(y, message):
    with pytest.raises(DataError, match=message):
        Dataset(X60, y)


def test_force_classification_takes_numbers_and_dates_as_classes():
    assert Dataset(X60, pd.Series(np.arange(60) * 0.5), force_classification=True).n_classes == 60
    dates = pd.Series([f"2021-03-{i % 2 + 1:02d}" for i in range(60)])
    assert Dataset(X60, dates, force_classification=True).n_classes == 2


def test_many_whole_number_classes_are_labels():
    y = np.arange(300) % 26  # e.g. 26 letters coded 0..25: more than 20 classes, but few per row
    assert Dataset(pd.DataFrame({"a": np.arange(300) % 2}), y).n_classes == 26
    assert Dataset(X60, np.arange(60) % 20 + 0.5).n_classes == 20  # 20 distinct values, fractional: still labels


# ------------------------------------------------------------------------------------------------------
# CSV typing
# ------------------------------------------------------------------------------------------------------


def test_values_and_labels_are_stripped_and_typed(tmp_path):
    path = _csv(tmp_path, "n , f,flag,word,label\n1 , 1.5,True,x ,yes\n2, 2,false, x,yes \n3,NA,TRUE,y,no\n")
    X, y = ds.load(path)
    assert list(X.columns) == ["n", "f", "flag", "word"]
    assert X["n"].dtype == np.int64 and X["f"].dtype == np.float64 and np.isnan(X["f"].iloc[2])
    assert X["flag"].dtype == bool and X["flag"].tolist() == [True, False, True]
    assert list(X["word"].cat.categories) == ["x", "y"]
    assert y.tolist() == ["yes", "yes", "no"] and list(y.cat.categories) == ["no", "yes"]


def test_stray_text_in_a_numeric_column_is_an_error_naming_it(tmp_path):
    ages = [str(20 + i) for i in range(30)]
    ages[4] = ages[9] = "n/a"
    ages[11] = "unknown"
    path = _csv(tmp_path, _rows("age,label", zip(ages, ["a", "b"] * 15, strict=True)))
    with pytest.raises(DataError) as exc:
        ds.load(path)
    assert _one_line(exc) == ("column 'age': 3 of 30 values are not numbers (e.g. 'n/a'); clean them, mark them "
                              "missing with --na-values, or keep the column as text with --categorical age")
    X, _ = ds.load(path, na_values=["n/a", "unknown"])
    assert X["age"].dtype == np.float64 and int(X["age"].isna().sum()) == 3
    X, _ = ds.load(path, categorical=["age"])
    assert isinstance(X["age"].dtype, pd.CategoricalDtype) and "n/a" in X["age"].cat.categories


def test_a_number_given_as_missing_is_missing_in_a_column_of_numbers(tmp_path):
    path = _csv(tmp_path, _rows("x,z,label", [("1.5", "-999", "a"), ("-999", " 2 ", "b"), ("3", "4", "a")]))
    X, _ = ds.load(path, na_values=["-999"])
    assert X["x"].isna().tolist() == [False, True, False] and X["x"][0] == 1.5
    assert X["z"].isna().tolist() == [True, False, False] and X["z"][1] == 2.0
    X, _ = ds.load(path)  # without the marker the columns are whole numbers, the spaces stripped
    assert X["z"].dtype == np.int64 and X["z"].tolist() == [-999, 2, 4]


def test_two_columns_of_one_name_are_an_error(tmp_path):
    path = _csv(tmp_path, _rows("x,x ,label", [("1", "2", "a"), ("3", "4", "b")]))  # the same name, stripped
    with pytest.raises(DataError) as exc:
        ds.load(path)
    assert _one_line(exc).endswith("two columns are named 'x'")


def test_text_with_a_few_numbers_stays_text(tmp_path):
    path = _csv(tmp_path, _rows("size,label", zip(["S", "M", "L", "XL", "1", "2"] * 3, ["a", "b"] * 9, strict=True)))
    X, _ = ds.load(path)
    assert list(X["size"].cat.categories) == ["1", "2", "L", "M", "S", "XL"]


def test_categorical_keeps_numbers_as_text(tmp_path):
    path = _csv(tmp_path, "zip,label\n01234,a\n98765,b\n")
    X, _ = ds.load(path, categorical=["zip"])
    assert X["zip"].tolist() == ["01234", "98765"]


def test_decimal_comma_is_read_with_a_warning(tmp_path, caplog):
    path = _csv(tmp_path, "a;b;label\n1,5;1.234,5;x\n-2,25;7;y\n3;0,5;x\n")
    with caplog.at_level(logging.WARNING, logger="odtmip"):
        X, _ = ds.load(path)
    assert X["a"].tolist() == [1.5, -2.25, 3.0] and X["b"].tolist() == [1234.5, 7.0, 0.5]
    assert "column 'a' has numbers with a decimal comma: '1,5' read as 1.5 (--decimal chooses)" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="odtmip"):
        ds.load(path, decimal=",")
    assert caplog.text == ""  # the user said so


def test_thousands_separators(tmp_path):
    path = _csv(tmp_path, 'n,m,label\n"1,234,567",12,x\n"2,000.5","1,500",y\n')
    X, _ = ds.load(path)  # '1,234,567' and '2,000.5' cannot have a decimal comma: the file's convention
    assert X["n"].tolist() == [1234567.0, 2000.5] and X["m"].tolist() == [12.0, 1500.0]
    path = _csv(tmp_path, "n;label\n1.234.567;x\n2.000;y\n7;x\n", "dots.csv")  # '.' between thousands
    assert ds.load(path)[0]["n"].tolist() == [1234567.0, 2000.0, 7.0]


def test_ambiguous_number_format_is_an_error_until_decimal_says(tmp_path):
    path = _csv(tmp_path, 'n,label\n"1,000",x\n"2,500",y\n')
    with pytest.raises(DataError) as exc:
        ds.load(path)
    assert _one_line(exc).endswith("column 'n': '1,000' reads as 1 with a decimal comma and as 1000 with ',' "
                                   "between thousands; choose with --decimal , or --decimal .")
    assert ds.load(path, decimal=".")[0]["n"].tolist() == [1000.0, 2500.0]
    assert ds.load(path, decimal=",")[0]["n"].tolist() == [1.0, 2.5]


def test_conflicting_number_formats_are_an_error(tmp_path):
    path = _csv(tmp_path, 'a,b,label\n"1,5","1,234.5",x\n"2,25",7,y\n')
    with pytest.raises(DataError, match="column 'a' has numbers with a decimal comma but column 'b' has ',' between "
                                        "thousands; choose with --decimal , or --decimal ."):
        ds.load(path)
    path = _csv(tmp_path, 'a,label\n1.5,x\n"2,5",y\n3,x\n', "mixed.csv")
    with pytest.raises(DataError, match=r"column 'a' writes its numbers in more than one way \(e.g. '1.5' and "
                                        r"'2,5'\)"):
        ds.load(path)


def test_more_fields_than_names_is_a_format_error(tmp_path):
    path = _csv(tmp_path, "a,label\n1,2,x\n3,4,y\n")  # pandas would make the first column an index
    with pytest.raises(FormatError, match="more fields than the header names"):
        ds.load(path)


def test_csv_options_are_refused_elsewhere(tmp_path):
    with pytest.raises(OptionError, match="na_values and decimal are for CSV files; monk1 is not one"):
        ds.load("monk1", na_values=["?"])
    with pytest.raises(OptionError, match="decimal must be ',' or '.'"):
        ds.load(_csv(tmp_path, "a,label\n1,x\n"), decimal=";")


# ------------------------------------------------------------------------------------------------------
# drop and categorical
# ------------------------------------------------------------------------------------------------------


def test_drop_and_categorical_for_every_source(tmp_path):
    X, y = ds.load("monk1", drop=["a1", "a2"])
    assert list(X.columns) == ["a3", "a4", "a5", "a6"] and y.name == "class"
    txt = tmp_path / "d.txt"
    txt.write_text("1 0 1\n0 1 0\n")
    X, y = ds.load(txt, drop=["f0"], categorical=["f1"])
    assert list(X.columns) == ["f1"] and isinstance(X["f1"].dtype, pd.CategoricalDtype) and y.tolist() == [1, 0]
    arff = tmp_path / "d.arff"
    arff.write_text("@relation r\n@attribute x real\n@attribute z real\n@attribute class {a,b}\n@data\n1,2,a\n3,4,b\n")
    X, _ = ds.load(arff, drop=["z"], categorical=["x"])
    assert list(X.columns) == ["x"] and list(X["x"].cat.categories) == [1.0, 3.0]


def test_dropped_columns_are_not_typed(tmp_path):
    path = _csv(tmp_path, "junk,a,label\n1,1,x\n2,2,y\nn/a,3,x\n")
    assert list(ds.load(path, drop=["junk"])[0].columns) == ["a"]


@pytest.mark.parametrize("kwargs, message", [
    ({"drop": ["zz"]}, r"cannot drop 'zz': no such column in .*d.csv \(columns: a, label\)"),
    ({"categorical": ["zz"]}, "cannot make categorical 'zz': no such column"),
    ({"drop": ["label"], "target": "label"}, r"the target 'label' cannot also be dropped \(--drop\)"),
])
def test_bad_column_names(tmp_path, kwargs, message):
    with pytest.raises(DataError, match=message):
        ds.load(_csv(tmp_path, "a,label\n1,x\n2,y\n"), **kwargs)


# ------------------------------------------------------------------------------------------------------
# A file and a bundled set of the same name
# ------------------------------------------------------------------------------------------------------


def test_an_existing_file_wins_over_a_bundled_name(tmp_path, monkeypatch, caplog):
    monkeypatch.chdir(tmp_path)
    Path("monk1").write_text("a,label\n1,x\n2,y\n")
    with caplog.at_level(logging.INFO, logger="odtmip"):
        X, y = ds.load("monk1", format="csv")
    assert X.shape == (2, 1) and y.name == "label"
    assert "monk1: loading the file" in caplog.text and "write bundled:monk1 for that" in caplog.text
    assert ds.load("bundled:monk1")[0].shape == (432, 6)
    with pytest.raises(FormatError, match="cannot infer the format of monk1 .*; for the bundled set write "
                                          "bundled:monk1"):
        ds.load("monk1")
    Path("iris").mkdir()  # a folder is not a data file: the bundled set
    assert ds.load("iris")[0].shape == (150, 4)


def test_unknown_bundled_name():
    with pytest.raises(DataError, match="no bundled data set 'monk9'; the bundled sets are breast-cancer, iris"):
        ds.load("bundled:monk9")
