"""Tests of odtmip.datasets: generated sets, the file readers, name resolution and the benchmark folder."""

from __future__ import annotations

import csv
import gzip
import itertools
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from odtmip.core import datasets as ds
from odtmip.core.exceptions import DataError, FormatError, OptionError

NO_SHARED = "benchmark datasets folder not found (set ODTMIP_DATA)"


def _shared_dir() -> Path | None:
    try:
        return ds.data_dir()
    except DataError:
        return None


SHARED = _shared_dir()


def shared_data(test):
    """Mark a test that reads the benchmark folder and skip it when the folder is absent."""
    return pytest.mark.shared_data(pytest.mark.skipif(SHARED is None, reason=NO_SHARED)(test))


LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def _line(board: tuple[str, ...], player: str) -> bool:
    return any(all(board[i] == player for i in line) for line in LINES)


def _one_line(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


def _write(path: Path, text: str, *, gz: bool = False, encoding: str = "utf-8") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode(encoding)
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


# ------------------------------------------------------------------------------------------------------
# tic-tac-toe
# ------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ttt() -> tuple[pd.DataFrame, pd.Series]:
    return ds.load("tic-tac-toe")


def test_tic_tac_toe_shape_and_values(ttt):
    X, y = ttt
    assert X.shape == (958, 9)
    assert list(X.columns) == [
        "top-left-square",
        "top-middle-square",
        "top-right-square",
        "middle-left-square",
        "middle-middle-square",
        "middle-right-square",
        "bottom-left-square",
        "bottom-middle-square",
        "bottom-right-square",
    ]
    for column in X:
        assert list(X[column].cat.categories) == ["x", "o", "b"]
        assert set(X[column].astype(str)) <= {"x", "o", "b"}
    assert y.name == "class"
    assert (y == "positive").sum() == 626
    assert (y == "negative").sum() == 332
    assert not X.isna().any().any()


def test_tic_tac_toe_boards_obey_the_rules(ttt):
    X, y = ttt
    boards = [tuple(row) for row in X.astype(str).itertuples(index=False)]
    assert len(set(boards)) == 958
    for board, label in zip(boards, y, strict=True):
        x_line, o_line = _line(board, "x"), _line(board, "o")
        moves = board.count("x") - board.count("o")
        assert moves in (0, 1)
        assert not (x_line and o_line)
        assert (label == "positive") == x_line
        if x_line:
            assert moves == 1  # x made the last move
        elif o_line:
            assert moves == 0
        else:
            assert "b" not in board  # a game only ends early with a line


def test_tic_tac_toe_is_deterministic(ttt):
    X, y = ds.load("tic-tac-toe")
    pd.testing.assert_frame_equal(X, ttt[0])
    pd.testing.assert_series_equal(y, ttt[1])


@shared_data
def test_tic_tac_toe_equals_uci_file(ttt):
    path = SHARED / "categorical" / "tic-tac-toe.arff"
    if not path.is_file():
        pytest.skip(f"{path} not present")
    X, y = ttt
    Xf, yf = ds.load(path)
    ours = [(*row, label) for row, label in zip(X.astype(str).itertuples(index=False), y.astype(str), strict=True)]
    theirs = [(*row, label) for row, label in zip(Xf.astype(str).itertuples(index=False), yf.astype(str), strict=True)]
    assert set(ours) == set(theirs)
    assert ours == theirs  # the documented row order is the UCI order


# ------------------------------------------------------------------------------------------------------
# MONK's problems
# ------------------------------------------------------------------------------------------------------

MONK_POSITIVES = {"monk1": 216, "monk2": 142, "monk3": 228}


def _monk_rule(name: str, a: np.ndarray) -> np.ndarray:
    a1, a2, _a3, a4, a5, _a6 = a.T
    if name == "monk1":
        return (a1 == a2) | (a5 == 1)
    if name == "monk2":
        return (a == 1).sum(axis=1) == 2
    return ((a5 == 3) & (a4 == 1)) | ((a5 != 4) & (a2 != 3))


@pytest.mark.parametrize("name", sorted(MONK_POSITIVES))
def test_monks_generated(name):
    X, y = ds.load(name)
    assert X.shape == (432, 6)
    assert list(X.columns) == ["a1", "a2", "a3", "a4", "a5", "a6"]
    domains = [[1, 2, 3], [1, 2, 3], [1, 2], [1, 2, 3], [1, 2, 3, 4], [1, 2]]
    for column, domain in zip(X, domains, strict=True):
        assert list(X[column].cat.categories) == domain
    values = X.astype(int).to_numpy()
    assert [tuple(r) for r in values] == list(itertools.product(*domains))
    assert y.name == "class" and set(y) == {0, 1}
    assert int(y.sum()) == MONK_POSITIVES[name]
    assert int((y == 0).sum()) == 432 - MONK_POSITIVES[name]
    np.testing.assert_array_equal(y.to_numpy(), _monk_rule(name, values).astype(int))


@shared_data
@pytest.mark.parametrize("number", [1, 2, 3])
def test_monks_equal_uci_test_sets(number):
    path = SHARED / "categorical" / f"monks-{number}-test.arff"
    if not path.is_file():
        pytest.skip(f"{path} not present")
    X, y = ds.load(f"monk{number}")
    Xf, yf = ds.load(path)  # the label 'class' is the first attribute of these files
    assert len(Xf) == 432
    file_values = Xf.astype(str).astype(int).to_numpy()
    assert {tuple(r) for r in file_values} == {tuple(r) for r in X.astype(int).to_numpy()}
    np.testing.assert_array_equal(file_values, X.astype(int).to_numpy())  # same row order
    disagreements = int((yf.astype(str).astype(int).to_numpy() != y.to_numpy()).sum())
    assert disagreements == 0, f"monk{number}: the rule disagrees with {path.name} on {disagreements} rows"
    if number == 3:
        assert int(yf.astype(str).astype(int).sum()) == MONK_POSITIVES["monk3"]


# ------------------------------------------------------------------------------------------------------
# scikit-learn sets and bundled-name options
# ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "shape", "counts"),
    [
        ("breast-cancer", (569, 30), {"malignant": 212, "benign": 357}),
        ("iris", (150, 4), {"setosa": 50, "versicolor": 50, "virginica": 50}),
        ("wine", (178, 13), {"class_0": 59, "class_1": 71, "class_2": 48}),
    ],
)
def test_sklearn_sets(name, shape, counts):
    X, y = ds.load(name)
    assert X.shape == shape
    assert all(dtype == np.float64 for dtype in X.dtypes)
    assert y.name == "class"
    assert list(y.cat.categories) == list(counts)
    assert y.value_counts().to_dict() == counts


def test_bundled_target_override_and_unknown_target():
    X, y = ds.load("monk1", target="a5")
    assert y.name == "a5" and "class" in X.columns and X.shape == (432, 6)
    with pytest.raises(DataError, match="available columns") as exc:
        ds.load("monk1", target="nope")
    assert "a1" in _one_line(exc)


def test_format_is_checked_even_for_bundled_names():
    with pytest.raises(OptionError, match="xlsx"):
        ds.load("iris", format="xlsx")


# ------------------------------------------------------------------------------------------------------
# DL8.5 / txt
# ------------------------------------------------------------------------------------------------------

DL85 = "1 0 1 1\n0 1 0 0\n\n1 1 1 0\n"


@pytest.mark.parametrize("gz", [False, True])
def test_read_dl85(tmp_path, gz):
    path = _write(tmp_path / ("d.txt.gz" if gz else "d.txt"), DL85, gz=gz)
    X, y = ds.read_dl85(path)
    assert list(X.columns) == ["f0", "f1", "f2"]
    assert all(dtype == np.int8 for dtype in X.dtypes)
    np.testing.assert_array_equal(X.to_numpy(), [[0, 1, 1], [1, 0, 0], [1, 1, 0]])
    assert y.name == "class" and y.dtype == np.int64
    assert y.tolist() == [1, 0, 1]
    X2, y2 = ds.load(path)  # .txt with 0/1 features is inferred as dl85
    pd.testing.assert_frame_equal(X, X2)
    pd.testing.assert_series_equal(y, y2)


def test_read_dl85_accepts_float_spelling_of_0_1(tmp_path):
    path = _write(tmp_path / "a.txt", "-1.0 0.0 1.0\n1.0 1.0 0.0\n")
    X, y = ds.read_dl85(path)
    assert y.tolist() == [-1, 1] and X.dtypes.iloc[0] == np.int8


def test_read_txt_and_inference(tmp_path):
    path = _write(tmp_path / "c.txt.gz", "0 0.25 3\n2 0.5 1e-3\n1 1 0\n", gz=True)
    X, y = ds.read_txt(path)
    assert all(dtype == np.float64 for dtype in X.dtypes)
    np.testing.assert_allclose(X.to_numpy(), [[0.25, 3], [0.5, 0.001], [1, 0]])
    assert y.tolist() == [0, 2, 1] and y.dtype == np.int64
    X2, _ = ds.load(path)
    assert all(dtype == np.float64 for dtype in X2.dtypes)
    X3, _ = ds.load(path, format="txt")
    pd.testing.assert_frame_equal(X, X3)
    with pytest.raises(FormatError, match="line 1"):
        ds.load(path, format="dl85")


def test_read_txt_real_labels_stay_float(tmp_path):
    path = _write(tmp_path / "r.txt", "0.5 1\n1.5 0\n")
    _, y = ds.read_txt(path)
    assert y.dtype == np.float64 and y.tolist() == [0.5, 1.5]


def test_dl85_non_binary_feature(tmp_path):
    path = _write(tmp_path / "bad.txt", "1 0 1\n0 1 1\n1 2 0\n")
    with pytest.raises(FormatError) as exc:
        ds.read_dl85(path)
    message = _one_line(exc)
    assert "line 3" in message and "bad.txt" in message and "'2'" in message


def test_dl85_non_integer_label(tmp_path):
    path = _write(tmp_path / "lab.txt", "1 0 1\n0.5 1 1\n")
    with pytest.raises(FormatError, match="line 2"):
        ds.read_dl85(path)


@pytest.mark.parametrize("reader", [ds.read_dl85, ds.read_txt])
def test_ragged_rows(tmp_path, reader):
    path = _write(tmp_path / "ragged.txt", "1 0 1\n0 1\n")
    with pytest.raises(FormatError) as exc:
        reader(path)
    assert "line 2" in _one_line(exc) and "ragged.txt" in str(exc.value)


def test_non_numeric_token(tmp_path):
    path = _write(tmp_path / "tok.txt", "1 0 1\n0 1 x\n")
    with pytest.raises(FormatError, match="line 2.*'x'"):
        ds.read_txt(path)


def test_label_only_file(tmp_path):
    path = _write(tmp_path / "labels.txt", "1\n0\n")
    with pytest.raises(DataError, match="no feature"):
        ds.read_dl85(path)


def test_dl85_target_must_be_column_0(tmp_path):
    path = _write(tmp_path / "d.txt", DL85)
    assert ds.load(path, target=0)[1].tolist() == [1, 0, 1]
    assert ds.load(path, target="class")[1].tolist() == [1, 0, 1]
    with pytest.raises(OptionError, match="column 0"):
        ds.load(path, target=2)


# ------------------------------------------------------------------------------------------------------
# ARFF
# ------------------------------------------------------------------------------------------------------

ARFF = """% a comment
%another
@RELATION 'small test'

@Attribute 'wind speed' NUMERIC
@attribute count integer [1,10]
@attribute colour { 'dark red', "blue", green}
@attribute note string
@ATTRIBUTE class {yes,no}

@DATA
% comment inside data
1.5, 3, 'dark red', 'a, b', yes
?, 4, blue, "q", no
2,?,?,'?',yes
"""


@pytest.mark.parametrize("gz", [False, True])
def test_read_arff(tmp_path, gz):
    path = _write(tmp_path / ("t.arff.gz" if gz else "t.arff"), ARFF, gz=gz)
    X, y = ds.read_arff(path)
    assert list(X.columns) == ["wind speed", "count", "colour", "note"]
    assert X["wind speed"].dtype == np.float64 and X["count"].dtype == np.float64
    np.testing.assert_array_equal(X["wind speed"].to_numpy(), [1.5, np.nan, 2.0])
    np.testing.assert_array_equal(X["count"].to_numpy(), [3.0, 4.0, np.nan])
    assert list(X["colour"].cat.categories) == ["dark red", "blue", "green"]
    assert X["colour"].tolist()[:2] == ["dark red", "blue"] and pd.isna(X["colour"].iloc[2])
    assert X["note"].tolist() == ["a, b", "q", "?"]  # a quoted '?' is a value, not missing
    assert y.name == "class" and list(y.cat.categories) == ["yes", "no"]
    assert y.tolist() == ["yes", "no", "yes"]


def test_arff_target_defaults_and_explicit(tmp_path):
    text = "@relation r\n@attribute Class {a,b}\n@attribute x real\n@attribute z {p,q}\n@data\na,1,p\nb,2,q\n"
    path = _write(tmp_path / "first.arff", text)
    _, y = ds.read_arff(path)
    assert y.name == "Class"  # an attribute named class (any case) wins over the last one
    _, y = ds.read_arff(path, target="z")
    assert y.name == "z"
    _, y = ds.read_arff(path, target=1)
    assert y.name == "x"
    path = _write(tmp_path / "label.arff", text.replace("Class", "label"))
    assert ds.read_arff(path)[1].name == "label"  # class, label, target or y: named like a target
    path = _write(tmp_path / "last.arff", text.replace("Class", "kind"))
    with pytest.raises(DataError, match="no column is named class, label, target or y; name the target") as exc:
        ds.read_arff(path)  # the last attribute is never taken silently
    assert "columns: kind, x, z" in _one_line(exc)


@pytest.mark.parametrize(
    ("data", "error", "pattern"),
    [
        ("{0 1, 2 x}\n", FormatError, "sparse"),
        ("1,purple\n", FormatError, "'purple'.*'colour'"),
        ("1,red,3\n", FormatError, "line 5: 3 values"),
        ("abc,red\n", FormatError, "line 5.*'abc'.*'speed'"),
    ],
)
def test_arff_errors(tmp_path, data, error, pattern):
    text = "@relation r\n@attribute speed real\n@attribute colour {red, blue}\n@data\n" + data
    path = _write(tmp_path / "bad.arff", text)
    with pytest.raises(error, match=pattern) as exc:
        ds.read_arff(path)
    assert "bad.arff" in _one_line(exc)


def test_arff_unsupported_type(tmp_path):
    path = _write(tmp_path / "rel.arff", "@relation r\n@attribute bag relational\n@data\n")
    with pytest.raises(FormatError, match="unsupported type 'relational'"):
        ds.read_arff(path)


def test_arff_without_rows(tmp_path):
    path = _write(tmp_path / "norows.arff", "@relation r\n@attribute a real\n@attribute b {x}\n@data\n")
    with pytest.raises(DataError, match="no data rows"):
        ds.read_arff(path)


# ------------------------------------------------------------------------------------------------------
# CSV
# ------------------------------------------------------------------------------------------------------


def test_read_csv_semicolon(tmp_path):
    path = _write(tmp_path / "o.csv", "age:<21;priors:=0;target\r\n0;1;1\r\n1;0;0\r\n")
    X, y = ds.read_csv(path)
    assert list(X.columns) == ["age:<21", "priors:=0"]
    assert X.to_numpy().tolist() == [[0, 1], [1, 0]]
    assert y.name == "target" and y.tolist() == [1, 0]


def test_read_csv_bom_strings_and_missing(tmp_path):
    path = _write(tmp_path / "s.csv", "school,age,job,G3\nGP,18,teacher,6\nMS,?,at_home,10\nGP,17,,12\n")
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    X, y = ds.read_csv(path, target="G3")  # no column named like a target: the last one is never taken silently
    assert list(X.columns) == ["school", "age", "job"]  # no BOM glued to the first name
    assert list(X["school"].cat.categories) == ["GP", "MS"]
    assert X["age"].dtype == np.float64 and np.isnan(X["age"].iloc[1])
    assert pd.isna(X["job"].iloc[2]) and list(X["job"].cat.categories) == ["at_home", "teacher"]
    assert y.name == "G3" and y.tolist() == [6, 10, 12]
    X2, y2 = ds.read_csv(path, target="school")
    assert y2.name == "school" and "G3" in X2.columns
    assert ds.read_csv(path, target=0)[1].name == "school"


@pytest.mark.parametrize(("sep", "name"), [("\t", "tab.csv"), ("  ", "ws.csv")])
def test_read_csv_other_delimiters(tmp_path, sep, name):
    path = _write(tmp_path / name, sep.join(["a", "b", "y"]) + "\n" + sep.join(["1", "2", "0"]) + "\n")
    X, y = ds.read_csv(path)
    assert list(X.columns) == ["a", "b"] and y.tolist() == [0]


def test_read_csv_gz(tmp_path):
    path = _write(tmp_path / "g.csv.gz", "r,g,b,skin\r\n74,85,123,1\r\n73,84,122,2\r\n", gz=True)
    X, y = ds.load(path, target="skin")
    assert X.shape == (2, 3) and y.tolist() == [1, 2]


def test_csv_unknown_target_lists_columns(tmp_path):
    path = _write(tmp_path / "t.csv", "alpha,beta,gamma\n1,2,3\n")
    with pytest.raises(DataError) as exc:
        ds.load(path, target="delta")
    message = _one_line(exc)
    assert "'delta'" in message and "t.csv" in message
    assert "alpha, beta, gamma" in message


def test_csv_target_position_out_of_range(tmp_path):
    path = _write(tmp_path / "t.csv", "a,b\n1,2\n")
    with pytest.raises(DataError, match="out of range"):
        ds.read_csv(path, target=5)
    with pytest.raises(OptionError):
        ds.read_csv(path, target=1.5)


@pytest.mark.parametrize("content", [
    b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)) * 4,  # an image: NUL bytes
    bytes((i * 37 + 11) % 256 for i in range(3000) if (i * 37 + 11) % 256 not in (0, 10, 13)),  # bytes with no NUL
])
@pytest.mark.parametrize("name, gz", [("d.csv", False), ("d.arff", False), ("d.txt", False), ("d.csv.gz", True)])
def test_a_binary_file_is_not_text_data(tmp_path, content, name, gz):
    # regression: its bytes were read as Latin-1 text and printed as column names
    path = tmp_path / name
    path.write_bytes(gzip.compress(content) if gz else content)
    with pytest.raises(FormatError, match=rf"^{re.escape(str(path))} is not a text data file \(binary data"):
        ds.load(str(path))


def test_text_with_a_stray_control_byte_is_still_text(tmp_path):
    path = _write(tmp_path / "d.csv", "a,b,label\n" + "1,x,yes\n0,y,no\n" * 100 + "1,z\x07,yes\n")
    assert len(ds.load(str(path))[0]) == 201


def test_csv_too_many_fields(tmp_path):
    path = _write(tmp_path / "r.csv", "a,b\n1,2\n1,2,3\n")
    with pytest.raises(FormatError, match="r.csv"):
        ds.read_csv(path)


@pytest.mark.parametrize("text", ["", "\n\n", "a;b;c\n"])
def test_csv_empty(tmp_path, text):
    path = _write(tmp_path / "e.csv", text)
    with pytest.raises(DataError, match="e.csv"):
        ds.read_csv(path)


# ------------------------------------------------------------------------------------------------------
# Errors common to all readers
# ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reader", [ds.read_dl85, ds.read_txt, ds.read_arff, ds.read_csv, ds.load])
def test_file_not_found(tmp_path, reader):
    missing = tmp_path / "nowhere.txt"
    with pytest.raises(DataError, match="nowhere.txt") as exc:
        reader(missing)
    _one_line(exc)


@pytest.mark.parametrize(("name", "reader"), [("e.txt", ds.read_dl85), ("e.arff", ds.read_arff), ("e.csv", ds.load)])
def test_empty_file(tmp_path, name, reader):
    path = _write(tmp_path / name, "")
    with pytest.raises(DataError, match=name) as exc:
        reader(path)
    _one_line(exc)


def test_unknown_format(tmp_path):
    path = _write(tmp_path / "d.txt", DL85)
    with pytest.raises(OptionError, match="unknown format 'xlsx'") as exc:
        ds.load(path, format="xlsx")
    _one_line(exc)
    assert ds.load(path, format="DL85")[0].shape == (3, 3)  # case-insensitive


def test_uninferable_extension(tmp_path):
    path = _write(tmp_path / "d.data", DL85)
    with pytest.raises(FormatError, match="d.data"):
        ds.load(path)
    assert ds.load(path, format="dl85")[0].shape == (3, 3)


def test_directory_is_not_a_file(tmp_path):
    with pytest.raises(DataError, match="directory"):
        ds.load(tmp_path)


# ------------------------------------------------------------------------------------------------------
# Resolution of names in a data directory
# ------------------------------------------------------------------------------------------------------


@pytest.fixture
def fake_dir(tmp_path) -> Path:
    root = tmp_path / "datasets"
    _write(root / "binary" / "anneal.txt", DL85)
    _write(root / "binary" / "mush.txt.gz", DL85, gz=True)
    _write(root / "categorical" / "mush.arff", "@relation m\n@attribute a {p,q}\n@attribute class {e,p}\n@data\np,e\n")
    _write(root / "continuous" / "bank.txt", "0 0.5 0.25\n1 0.75 0.1\n")
    return root


def test_load_relative_to_data_dir_and_by_stem(fake_dir):
    X, _ = ds.load("binary/anneal.txt", data_dir=fake_dir)
    assert X.shape == (3, 3)
    X, _ = ds.load("anneal", data_dir=fake_dir)
    assert X.shape == (3, 3)
    X, _ = ds.load("bank", data_dir=fake_dir)
    assert X.dtypes.iloc[0] == np.float64
    X, y = ds.load("categorical/mush", data_dir=fake_dir)
    assert y.tolist() == ["e"]


def test_ambiguous_stem(fake_dir):
    with pytest.raises(DataError, match="ambiguous") as exc:
        ds.load("mush", data_dir=fake_dir)
    message = _one_line(exc)
    assert "binary/mush.txt.gz" in message and "categorical/mush.arff" in message


def test_not_found_in_data_dir(fake_dir):
    with pytest.raises(DataError, match="'nothing' not found") as exc:
        ds.load("nothing", data_dir=fake_dir)
    assert str(fake_dir) in _one_line(exc)


def test_bad_data_dir_argument(tmp_path):
    with pytest.raises(DataError, match="nope"):
        ds.load("anneal", data_dir=tmp_path / "nope")


# ------------------------------------------------------------------------------------------------------
# data_dir
# ------------------------------------------------------------------------------------------------------


def test_data_dir_explicit(tmp_path, monkeypatch):
    monkeypatch.setenv("ODTMIP_DATA", str(tmp_path / "elsewhere"))  # explicit path wins over the variable
    assert ds.data_dir(tmp_path) == tmp_path
    assert ds.data_dir(str(tmp_path)) == tmp_path


def test_data_dir_env(tmp_path, monkeypatch):
    monkeypatch.setenv("ODTMIP_DATA", str(tmp_path))
    assert ds.data_dir() == tmp_path


def test_data_dir_missing(tmp_path, monkeypatch):
    with pytest.raises(DataError, match="missing") as exc:
        ds.data_dir(tmp_path / "missing")
    _one_line(exc)
    file = _write(tmp_path / "f.txt", "x")
    with pytest.raises(DataError, match="not a directory"):
        ds.data_dir(file)
    monkeypatch.setenv("ODTMIP_DATA", str(tmp_path / "gone"))
    with pytest.raises(DataError, match="ODTMIP_DATA.*gone"):
        ds.data_dir()


def test_data_dir_defaults(tmp_path, monkeypatch):
    monkeypatch.delenv("ODTMIP_DATA", raising=False)
    monkeypatch.setattr(ds, "__file__", str(tmp_path / "repo" / "odtmip" / "datasets.py"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert ds.data_dir() is None
    (tmp_path / "shared" / "datasets").mkdir(parents=True)  # ../shared/datasets from the working directory
    assert ds.data_dir() == tmp_path / "shared" / "datasets"
    (work / "shared" / "datasets").mkdir(parents=True)
    assert ds.data_dir() == tmp_path / "shared" / "datasets"  # the repository's neighbour comes first


# ------------------------------------------------------------------------------------------------------
# list_datasets
# ------------------------------------------------------------------------------------------------------


def test_list_datasets_bundled_first(tmp_path, monkeypatch):
    monkeypatch.setenv("ODTMIP_DATA", str(tmp_path))
    table = ds.list_datasets()
    assert list(table.columns) == ["name", "source", "kind", "rows", "features", "classes"]
    assert table["name"].tolist() == list(ds.BUNDLED_DATASETS)
    assert {"breast-cancer", "iris", "wine", "tic-tac-toe", "monk1", "monk2", "monk3"} == set(table["name"])
    for record in table.itertuples():
        X, y = ds.load(record.name)
        assert (len(X), X.shape[1], y.nunique()) == (record.rows, record.features, record.classes)
        assert record.source in ("generated", "scikit-learn")


def test_list_datasets_scans_without_manifest(fake_dir):
    table = ds.list_datasets(fake_dir)
    files = table[~table["source"].isin(["generated", "scikit-learn"])]
    assert dict(zip(files["source"], files["name"], strict=True)) == {
        "binary/anneal.txt": "anneal",
        "binary/mush.txt.gz": "binary/mush",
        "categorical/mush.arff": "categorical/mush",
        "continuous/bank.txt": "bank",
    }
    assert files["rows"].isna().all()
    for name in files["name"]:
        ds.load(name, data_dir=fake_dir)


def test_list_datasets_reads_manifest_without_opening_files(tmp_path):
    _write(
        tmp_path / "manifest.csv",
        "file,rows,features,classes,label_column,format,collection,sha256\n"
        "binary/absent.txt,10,3,2,0,ssv,binary,x\n"
        "extra/thing.csv,5,2,3,y,csv,,x\n",
    )
    table = ds.list_datasets(tmp_path).set_index("source")
    assert table.loc["binary/absent.txt", "name"] == "absent"
    assert table.loc["binary/absent.txt", "rows"] == 10
    assert table.loc["extra/thing.csv", "kind"] == "mixed"
    assert table.loc["extra/thing.csv", "classes"] == 3


# ------------------------------------------------------------------------------------------------------
# The benchmark folder
# ------------------------------------------------------------------------------------------------------


def _manifest_rows() -> list:
    manifest = SHARED / "manifest.csv" if SHARED is not None else None
    if manifest is None or not manifest.is_file():
        return [pytest.param({}, marks=pytest.mark.skip(reason=NO_SHARED), id="no-manifest")]
    with manifest.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [pytest.param(row, id=row["file"]) for row in rows]


@pytest.mark.shared_data
@pytest.mark.parametrize("row", _manifest_rows())
def test_every_manifest_file_loads(row):
    label = row["label_column"]
    target: str | int | None = int(label) if label.lstrip("-").isdigit() else label
    X, y = ds.load(row["file"], target=target)
    assert (len(X), X.shape[1], y.nunique()) == (int(row["rows"]), int(row["features"]), int(row["classes"]))
    if row["collection"] == "binary":
        assert all(dtype == np.int8 for dtype in X.dtypes)  # inferred as dl85
    if row["file"].startswith("continuous/") and row["file"].endswith((".txt", ".txt.gz")):
        assert all(dtype == np.float64 for dtype in X.dtypes)


@shared_data
def test_shared_listing_and_stems():
    table = ds.list_datasets()
    assert table["name"].is_unique
    assert table["name"].tolist()[: len(ds.BUNDLED_DATASETS)] == list(ds.BUNDLED_DATASETS)
    assert len(table) > len(ds.BUNDLED_DATASETS)
    if (SHARED / "binary" / "anneal.txt").is_file():
        X, _ = ds.load("anneal")
        assert X.shape[0] == int(table.set_index("name").loc["anneal", "rows"])
    if (SHARED / "binary" / "mushroom.txt.gz").is_file() and (SHARED / "categorical" / "mushroom.arff").is_file():
        with pytest.raises(DataError, match="ambiguous"):
            ds.load("mushroom")
