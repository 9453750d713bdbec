"""The two-class objectives on the command line: ``fit --metric/--positive/--min-specificity`` with the DP, and
``odtmip front`` (table, JSON contract, plot)."""

import json

import pytest

from odtmip import Dataset, Tree
from odtmip.cli import main
from odtmip.core.datasets import load
from odtmip.core.metrics import Confusion
from odtmip.dp.pareto import ParetoSolver, _warm_up_pareto


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def tic_tac_toe():
    X, y = load("tic-tac-toe")
    return Dataset(X, y)


def test_fit_dp_with_a_specificity_target_shows_the_rates(capsys):
    code, out, _ = run(capsys, "fit", "tic-tac-toe", "--depth", "2", "--min-specificity", "0.9")
    assert code == 0 and "status: optimal" in out
    line = next(x for x in out.splitlines() if x.startswith("sensitivity:"))
    tnr = float(line.split("specificity:")[1].split()[0])
    assert tnr >= 0.9


def test_fit_json_adds_rates_and_the_metric_for_the_chosen_positive(capsys):
    code, out, _ = run(capsys, "fit", "tic-tac-toe", "--depth", "2", "--metric", "mcc", "--positive", "negative",
                       "--json")
    assert code == 0
    record = json.loads(out)
    data = tic_tac_toe()
    tree = Tree.from_dict(record["tree"])
    rates = Confusion.from_labels(data.y, tree.predict_index(data.X), positive=0)  # "negative" is class 0
    assert (record["tpr"], record["tnr"], record["f1"], record["mcc"]) == pytest.approx(
        (rates.sensitivity, rates.specificity, rates.f1, rates.mcc))
    assert record["objective"] == pytest.approx(1 - rates.mcc)


@pytest.mark.parametrize("argv, message", [
    (["--positive", "nope", "--metric", "f1"], "positive label 'nope' is not a class"),
    (["--metric", "f1", "--min-leaf", "2"], "min_leaf cannot be combined"),
    (["--metric", "recall"], "metric must be one of 'f1'"),
])
def test_bad_two_class_options_exit_2(capsys, argv, message):
    code, out, err = run(capsys, "fit", "tic-tac-toe", "--depth", "2", *argv)
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1


def test_front_json_is_the_whole_front(capsys):
    code, out, _ = run(capsys, "front", "tic-tac-toe", "--depth", "2", "--json")
    assert code == 0
    record = json.loads(out)
    data = tic_tac_toe()
    assert [(p["fp"], p["fn"]) for p in record["front"]] == ParetoSolver(data).front(2).pairs
    for point in record["front"]:  # each tree re-routes to its point
        tree = Tree.from_dict(point["tree"])
        rates = Confusion.from_labels(data.y, tree.predict_index(data.X))
        assert (rates.fp, rates.fn, rates.sensitivity, rates.specificity) == pytest.approx(
            (point["fp"], point["fn"], point["tpr"], point["tnr"]))
    assert record["status"] == "optimal" and record["positive"] == "positive"


def test_front_table_and_plot(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "front.png"
    code, out, _ = run(capsys, "front", "tic-tac-toe", "--depth", "2", "--positive", "negative", "--plot", str(path))
    assert code == 0 and "positive class: negative" in out
    assert path.stat().st_size > 1000


@pytest.mark.highs
def test_check_with_a_target_agrees(capsys, tmp_path):
    from _data import mixed_data

    data = mixed_data(0, n=16, max_weight=None)
    path = tmp_path / "tiny.csv"
    data.X.assign(label=data.classes_[data.y]).to_csv(path, index=False)
    code, out, _ = run(capsys, "check", str(path), "--target", "label", "--model", "binoct", "--depth", "2",
                       "--min-specificity", "0.8", "--positive", "0", "--json")
    record = json.loads(out)
    assert code == 0 and record["verdict"] == "agree"
    assert record["mip"]["objective"] == record["dp_objective"] and record["mip"]["status"] == "optimal"


def test_threads_reach_the_front_search_of_front_and_fit(capsys):
    """``--threads`` reaches the front search of ``odtmip front`` and of ``fit`` with a two-class objective; the
    front and the tree are those of one thread."""
    _warm_up_pareto()  # the compiled kernels: first in a new environment the interpreter searches, in one thread
    fronts = {}
    for threads in ("1", "2"):
        code, out, _ = run(capsys, "front", "tic-tac-toe", "--depth", "3", "--threads", threads, "--json")
        record = json.loads(out)
        assert code == 0 and record["stats"]["threads"] == int(threads)
        fronts[threads] = record["front"]
    assert fronts["1"] == fronts["2"]
    trees = {}
    for threads in ("1", "2"):
        code, out, _ = run(capsys, "fit", "tic-tac-toe", "--depth", "3", "--metric", "f1", "--threads", threads,
                           "--json")
        record = json.loads(out)
        assert code == 0 and record["stats"]["threads"] == int(threads)
        trees[threads] = record["tree"]
    assert trees["1"] == trees["2"]
    code, out, err = run(capsys, "front", "tic-tac-toe", "--depth", "3", "--threads", "0")
    assert code == 2 and out == "" and "threads must be" in err and len(err.strip().splitlines()) == 1
