"""Tree files and the commands around them: ``odtmip fit --save/--weight``, ``odtmip predict``, ``odtmip show``.

The round trips run the installed ``odtmip`` executable in a subprocess (as test_cli_subprocess.py does) and compare
its output with the same tree used in-process; the error cases run ``main`` in-process.
"""

import io
import json

import numpy as np
import pandas as pd
import pytest

import odtmip
from odtmip import Dataset
from odtmip.cli import main
from odtmip.core.datasets import load
from odtmip.core.deploy import FORMAT, VERSION, SavedTree
from tests.unit.test_cli_subprocess import run


def _write_csv(path, rng, n=60):
    """A CSV file with a zip code (text that looks like numbers), an age, a weight column and a label: yes for zip
    010 or age > 50."""
    zips = rng.choice(["010", "020", "030"], n)
    age = rng.integers(18, 71, n)
    label = np.where((zips == "010") | (age > 50), "yes", "no")
    frame = pd.DataFrame({"zip": zips, "age": age, "w": rng.integers(0, 4, n), "label": label})
    frame.to_csv(path, index=False)
    return frame


def _in_process(path):
    """The Dataset `odtmip fit PATH --target label --categorical zip --weight w --numeric thresholds` builds."""
    X, y = load(str(path), target="label", categorical=["zip"])
    return Dataset(X, y, X.pop("w").to_numpy(dtype=float), numeric="thresholds")


@pytest.mark.slow
def test_fit_save_predict_show_round_trip(tmp_path, rng):
    _write_csv(tmp_path / "d.csv", rng)
    saved_path = tmp_path / "tree.json"
    done = run("fit", str(tmp_path / "d.csv"), "--target", "label", "--categorical", "zip", "--weight", "w",
               "--numeric", "thresholds", "--depth", "2", "--save", str(saved_path), "--json")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)

    # the file holds the fit's tree, which is the in-process solve of the weighted data without the weight column
    data = _in_process(tmp_path / "d.csv")
    result = odtmip.solve(data, "dp", max_depth=2)
    saved = SavedTree.read(saved_path)
    assert saved.tree == result.tree == odtmip.Tree.from_dict(record["tree"])
    assert saved.features == {"zip": "categorical", "age": "numeric"} and saved.target == "label"
    assert saved.fit["objective"] == result.objective == record["objective"] and saved.fit["status"] == "optimal"
    assert saved.fit["options"] == {"max_depth": 2}
    stored = json.loads(saved_path.read_text())
    assert stored["format"] == FORMAT and stored["version"] == VERSION

    # predict: new rows with the columns in another order, an extra column, no label; zip codes read as text
    new = pd.DataFrame({"age": [30, 60, 25, 45], "other": ["x", "y", "z", "w"], "zip": ["010", "020", "030", "020"]})
    new.to_csv(tmp_path / "new.csv", index=False)
    done = run("predict", str(saved_path), str(tmp_path / "new.csv"), "--proba")
    assert done.returncode == 0, done.stderr
    predicted = pd.read_csv(io.StringIO(done.stdout), dtype={"label": str})
    X_new, _ = load(str(tmp_path / "new.csv"), target="other", categorical=["zip"])
    assert predicted["label"].tolist() == result.tree.predict(X_new).tolist()
    assert result.objective == 0 and predicted["label"].tolist() == ["yes", "yes", "no", "no"]  # the rule
    np.testing.assert_array_equal(predicted[["proba_no", "proba_yes"]].to_numpy(), result.tree.predict_proba(X_new))

    # predict the training file itself into a file: the fit's own predictions
    done = run("predict", str(saved_path), str(tmp_path / "d.csv"), "--output", str(tmp_path / "p.csv"))
    assert done.returncode == 0 and done.stdout == ""
    assert pd.read_csv(tmp_path / "p.csv")["label"].tolist() == result.tree.predict(data.X).tolist()

    # show: the fit, then the text; DOT; PNG
    done = run("show", str(saved_path))
    assert done.returncode == 0
    assert done.stdout.endswith(result.tree.to_text() + "\n") and "target: label" in done.stdout
    assert "zip (categorical), age (numeric)" in done.stdout and "solver dp, optimal" in done.stdout
    done = run("show", str(saved_path), "--dot")
    assert done.returncode == 0 and done.stdout == result.tree.to_dot() + "\n"
    done = run("show", str(saved_path), "--png", str(tmp_path / "tree.png"))
    assert done.returncode == 0 and (tmp_path / "tree.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
@pytest.mark.parametrize("solver, data, depth", [("gunluk", "monk1", "1"), ("oct-h", "iris", "1")])
def test_a_mip_tree_round_trips_on_a_bundled_set(tmp_path, solver, data, depth):
    saved_path = tmp_path / "tree.json"
    done = run("fit", data, "--solver", solver, "--depth", depth, "--time-limit", "30", "--save", str(saved_path))
    assert done.returncode == 0, done.stderr
    done = run("predict", str(saved_path), data)
    assert done.returncode == 0, done.stderr
    tree = SavedTree.read(saved_path).tree
    X, y = load(data)
    assert pd.read_csv(io.StringIO(done.stdout))["class"].astype(str).tolist() == tree.predict(X).astype(str).tolist()
    assert tree == odtmip.solve(Dataset(X, y), solver, max_depth=int(depth), time_limit=30).tree


def test_weights_are_the_weighted_fit(capsys, tmp_path, rng):
    _write_csv(tmp_path / "d.csv", rng)
    assert main(["fit", str(tmp_path / "d.csv"), "--target", "label", "--categorical", "zip", "--weight", "w",
                 "--numeric", "thresholds", "--depth", "1", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    data = _in_process(tmp_path / "d.csv")
    result = odtmip.solve(data, "dp", max_depth=1)
    assert record["objective"] == result.objective > 0 and odtmip.Tree.from_dict(record["tree"]) == result.tree
    assert record["misclassifications"] == data.misclassifications(odtmip.Tree.from_dict(record["tree"]))
    # unweighted, the weight column would be a feature: it is not one here
    assert data.feature_names == ["zip", "age"] and record["n_features"] == 2


@pytest.mark.parametrize("w, message", [
    (["a", "b", "c", "d"], "weight column 'w' must hold numbers; it holds 'a'"),
    (["1", "", "2", "1"], "weight column 'w' has 1 missing values, first in data row 2"),
    (["1", "2", "-1", "1"], "weight column 'w' has 1 negative values, first in data row 3"),
    (["0", "0", "0", "0"], "weight column 'w' is zero in every row"),
])
def test_bad_weights_exit_2_naming_the_column(capsys, tmp_path, w, message):
    rows = "".join(f"{i % 2},{i % 3},{wi},{'yes' if i % 2 else 'no'}\n" for i, wi in enumerate(w))
    (tmp_path / "d.csv").write_text("a,b,w,label\n" + rows)
    assert main(["fit", str(tmp_path / "d.csv"), "--weight", "w", "--depth", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"odtmip: error: {message}") and err.count("\n") == 1


@pytest.mark.parametrize("weight", ["label", "nope"])
def test_the_weight_column_must_be_a_feature_column(capsys, tmp_path, weight):
    (tmp_path / "d.csv").write_text("a,w,label\n" + "".join(f"{i % 2},1,{i % 2}\n" for i in range(6)))
    assert main(["fit", str(tmp_path / "d.csv"), "--weight", weight]) == 2
    assert f"weight column {weight!r} not found" in capsys.readouterr().err


@pytest.fixture
def saved_path(tmp_path):
    path = tmp_path / "tree.json"
    (tmp_path / "d.csv").write_text("colour,size,label\n" + "".join(
        f"{c},{s},{'yes' if c == 'red' or s > 3 else 'no'}\n" for c, s in zip(["red", "blue", "green"] * 4,
                                                                             range(12), strict=True)))
    assert main(["fit", str(tmp_path / "d.csv"), "--depth", "2", "--save", str(path)]) == 0
    return path


@pytest.mark.parametrize("header, row, message", [
    ("colour,label", "red,yes", "{data} lacks the tree's column(s) 'size' (it has: colour, label)"),
    ("colour,size", "red,big", "column 'size' of {data} holds text (e.g. 'big'); the tree was fitted on it as numbers"),
])
def test_predict_refuses_data_without_the_tree_columns(capsys, tmp_path, saved_path, header, row, message):
    capsys.readouterr()
    data = tmp_path / "new.csv"
    data.write_text(f"{header}\n{row}\n")
    assert main(["predict", str(saved_path), str(data)]) == 2
    assert capsys.readouterr().err == f"odtmip: error: {message.format(data=data)}\n"


def test_predict_warns_about_unseen_values_and_refuses_a_column_of_other_codes(capsys, caplog, tmp_path):
    # regression: both went to the "not in" branch without a word
    saved_path, data = tmp_path / "tree.json", tmp_path / "new.csv"
    data.write_text("colour,size,label\n" + "".join(f"{c},{s % 5},{'yes' if c == 'red' else 'no'}\n"
                                                     for s, c in enumerate(["red", "blue", "green"] * 4)))
    assert main(["fit", str(data), "--depth", "1", "--save", str(saved_path)]) == 0
    capsys.readouterr()
    data.write_text("colour,size\nRed,1\nred,5\n,2\n")
    assert main(["predict", str(saved_path), str(data)]) == 0
    assert [r.getMessage() for r in caplog.records] == [
        "column 'colour' has 1 value(s) never seen in training, in 1 of 3 rows (e.g. 'Red'); they go to the 'not in' "
        "branch of its splits"]  # the missing colour is not unseen
    data.write_text("colour,size\n1,1\n2,5\n3,2\n")
    assert main(["predict", str(saved_path), str(data)]) == 2
    assert capsys.readouterr().err == ("odtmip: error: column 'colour': none of its 3 distinct values was seen in "
                                       "training (e.g. '1'; training saw 'blue', 'green', 'red'): the wrong column, or "
                                       "other codes for the same values?\n")


def test_categories_fitted_as_numbers_are_read_as_numbers(capsys, tmp_path):
    # regression: monk1's levels are numbers; read back from a CSV file as text ('1'), no row met a subset split
    X, y = load("monk1")
    X.assign(**{"class": y}).to_csv(tmp_path / "monk1.csv", index=False)
    assert main(["fit", "monk1", "--depth", "2", "--save", str(tmp_path / "t.json")]) == 0
    capsys.readouterr()
    assert main(["predict", str(tmp_path / "t.json"), str(tmp_path / "monk1.csv")]) == 0
    predicted = pd.read_csv(io.StringIO(capsys.readouterr().out))["class"]
    assert predicted.tolist() == SavedTree.read(tmp_path / "t.json").tree.predict(X).tolist()


@pytest.mark.parametrize("content, message", [
    ("not json", "is not a tree file (not JSON"),
    ('{"tree": {}}', "is not a tree file (write one with `odtmip fit ... --save FILE`)"),
    (json.dumps({"format": FORMAT, "version": VERSION + 1}), f"has tree file version {VERSION + 1}; this odtmip"),
    (json.dumps({"format": FORMAT}), "has no tree file version: not written by `odtmip fit --save`, or edited since"),
    (json.dumps({"format": FORMAT, "version": "1"}), "a damaged tree file (its version '1' is not a version number)"),
    (json.dumps({"format": FORMAT, "version": VERSION, "features": [], "tree": {"nodes": []}}), "damaged tree file"),
])
@pytest.mark.parametrize("command", ["show", "predict"])
def test_a_file_that_is_not_a_tree_file_exits_2(capsys, tmp_path, content, message, command):
    path = tmp_path / "t.json"
    path.write_text(content)
    assert main([command, str(path), *(["monk1"] if command == "predict" else [])]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"odtmip: error: {path}") and message in err and err.count("\n") == 1


def test_a_saved_file_reads_back_to_the_same_record(saved_path):
    saved = SavedTree.read(saved_path)
    saved.save(saved_path.with_name("again.json"))
    assert json.loads(saved_path.with_name("again.json").read_text()) == json.loads(saved_path.read_text())
