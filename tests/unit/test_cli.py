"""The odtmip command: JSON contract, plain output, and a one-line error with exit code 2 for each bad input."""

import json
import logging

import numpy as np
import pytest

from odtmip import Dataset, Tree, __version__
from odtmip.cli import main
from odtmip.core.datasets import load
from odtmip.core.exceptions import OptionError


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_fit_json_is_one_object_with_the_contract(capsys):
    code, out, err = run(capsys, "fit", "monk1", "--depth", "2", "--json")
    assert code == 0
    record = json.loads(out)  # exactly one JSON object on stdout
    for key in ("solver", "status", "objective", "bound", "gap", "misclassifications", "n_samples", "depth",
                "n_branch_nodes", "n_leaves", "seconds", "tree"):
        assert key in record
    assert record["status"] == "optimal" and record["solver"] == "dp"
    # the tree in the JSON re-routes to the reported misclassifications
    X, y = load("monk1")
    data = Dataset(X, y)
    tree = Tree.from_dict(record["tree"])
    assert data.misclassifications(tree) == record["misclassifications"] == record["objective"] == 96
    assert record["depth"] == tree.depth <= 2


def test_fit_plain_output(capsys):
    code, out, _ = run(capsys, "fit", "tic-tac-toe", "--depth", "2")
    assert code == 0
    assert "status: optimal" in out and "training accuracy" in out and "|---" in out
    assert "solver: dp (pairwise engine)  status: optimal" in out and "compiling" not in out  # a small problem
    code, out, _ = run(capsys, "fit", "tic-tac-toe", "--depth", "5")
    assert "solver: dp (compiled engine)  status: optimal" in out


def test_fit_file_with_target_and_format(capsys, tmp_path, rng):
    path = tmp_path / "d.csv"
    X = rng.integers(0, 2, (30, 3))
    y = np.where(X[:, 0] == 1, "yes", "no")
    with open(path, "w") as f:
        f.write("a,b,c,label\n")
        for row, lab in zip(X, y, strict=True):
            f.write(",".join(map(str, row)) + f",{lab}\n")
    code, out, _ = run(capsys, "fit", str(path), "--target", "label", "--depth", "1", "--json")
    assert code == 0 and json.loads(out)["misclassifications"] == 0
    code, out, _ = run(capsys, "fit", str(path), "--target", "label", "--format", "csv", "--depth", "1", "--json")
    assert code == 0


@pytest.mark.parametrize("argv, numeric, optimal_over", [
    # regression: every solver's line said "10 quantile buckets", which the DP and ConTree never search
    ([], "3 columns -> 1 binary columns: 2 numeric (every midpoint), 1 0/1", "every midpoint of 2 numeric column(s)"),
    (["--solver", "contree"], "2 numeric (every midpoint), 1 0/1", "every midpoint of 2 numeric column(s)"),
    (["--numeric", "buckets"], "3 columns -> 21 binary columns: 2 numeric (10 quantile buckets), 1 0/1",
     "the binary columns of the encoding (3 columns -> 21 binary columns"),
    (["--solver", "gunluk"], "3 columns -> 21 binary columns: 2 numeric (10 quantile buckets), 1 0/1",
     "the binary columns of the encoding"),
    (["--solver", "binoct"], "3 columns -> 1 binary columns: 2 numeric (read as numbers by the model), 1 0/1",
     "the binary columns of the encoding; numeric columns read as numbers by the model"),
])
def test_the_data_line_says_how_the_solver_splits_numbers(capsys, tmp_path, argv, numeric, optimal_over):
    path = tmp_path / "d.csv"
    path.write_text("x,z,b,label\n" + "".join(f"{i * 0.37 % 5:.2f},{i * 7 % 13},{i % 2},{'yes' if i % 3 else 'no'}\n"
                                               for i in range(40)))
    code, out, _ = run(capsys, "fit", str(path), "--depth", "1", *argv)
    lines = out.splitlines()
    assert code == 0 and lines[0].endswith(numeric) and "quantile" not in lines[0][:-len(numeric)]
    assert next(line for line in lines if line.startswith("optimal over: ")).startswith(f"optimal over: {optimal_over}")


def test_the_target_is_named_in_both_outputs(capsys, tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a,b,Outcome\n" + "".join(f"{i % 2},{i % 3},{'yes' if i % 2 else 'no'}\n" for i in range(12)))
    code, out, _ = run(capsys, "fit", str(path), "--target", "Outcome", "--depth", "1")
    assert code == 0 and out.startswith(f"data: {path}: 12 samples, 2 classes (target 'Outcome'); ")
    code, out, _ = run(capsys, "fit", "monk1", "--depth", "1", "--json")
    assert code == 0 and json.loads(out)["target"] == "class"
    code, out, _ = run(capsys, "check", "monk1", "--depth", "1", "--json")
    assert code == 0 and json.loads(out)["mip"]["target"] == json.loads(out)["dp"]["target"] == "class"


def test_fit_gunluk_reports_solver_fields(capsys):
    code, out, _ = run(capsys, "fit", "monk1", "--solver", "gunluk", "--depth", "2", "--json")
    record = json.loads(out)
    assert code == 0 and record["status"] == "optimal"
    for key in ("nodes", "build_seconds", "solve_seconds", "warm_start_accepted", "tpr", "tnr"):
        assert key in record
    assert record["warm_start_accepted"] is True


def test_fit_gunluk_specificity_target(capsys):
    code, out, _ = run(capsys, "fit", "monk1", "--solver", "gunluk", "--depth", "1", "--min-specificity", "0.9",
                       "--json")
    record = json.loads(out)
    assert code == 0 and record["tnr"] >= 0.9


def test_check_command(capsys):
    code, out, _ = run(capsys, "check", "monk1", "--depth", "1")
    assert code == 0 and "cross-check: agree" in out


def test_datasets_lists_bundled_sets(capsys):
    code, out, _ = run(capsys, "datasets")
    assert code == 0 and "tic-tac-toe" in out and "monk2" in out


@pytest.mark.parametrize("argv, message", [
    (["fit", "no-such-data"], "not found"),
    (["fit", "monk1", "--format", "xlsx"], "invalid choice"),
    (["fit", "monk1", "--depth", "-1"], "max_depth must be an integer in [0, 20]"),
    (["fit", "monk1", "--depth", "two"], "whole number"),
    (["fit", "monk1", "--time-limit", "0"], "time_limit must be a number > 0"),
    (["fit", "monk1", "--depth", "none"], "needs leaf_penalty > 0"),
    (["fit", "monk1", "--solver", "gunluk", "--depth", "none"], "gunluk needs max_depth"),
    (["fit", "monk1", "--solver", "binoct", "--depth", "none", "--lambda", "0.01"], "binoct needs max_depth"),
    (["fit", "monk1", "--solver", "oct", "--depth", "none"], "oct needs max_depth"),
    (["fit", "iris", "--solver", "oct-h", "--depth", "none"], "oct-h needs max_depth"),
    (["check", "monk1", "--depth", "none"], "gunluk needs max_depth"),
    (["check", "monk1", "--model", "binoct", "--topology", "depth2"], "does not take option(s) topology"),
    (["fit", "monk1", "--solver", "oct", "--warm-start", "cart", "--max-card", "2"], "max_card"),
    (["fit", "monk1", "--solver", "cplex"], "invalid choice"),
    (["fit", "monk1", "--min-leaf", "0"], "min_leaf"),
    (["fit", "monk1", "--solver", "gunluk", "--penalty", "1"], "does not take option(s) penalty"),
    (["fit", "monk1", "--min-specificity", "1.5", "--solver", "gunluk"], "[0, 1]"),
    (["fit", "iris", "--solver", "gunluk"], "two classes"),
    (["fit", "monk1", "--solver", "gunluk", "--topology", "(L (L L))"], "two leaves"),
    (["fit", "monk1", "--target", "nope"], "nope"),
])
def test_bad_input_exits_2_with_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("odtmip: error:") and message in err and err.count("\n") == 1


@pytest.mark.parametrize("content, message", [
    ("a,b,label\n1,2,x\n", "single class"),
    ("a,b,label\n", "no data rows"),
    ("a,b,label\n1,,x\n3,,y\n", "column 'b' has no values (all 2 are missing); drop it (--drop b)"),
])
def test_bad_files_exit_2(capsys, tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    code, _, err = run(capsys, "fit", str(path), "--target", "label")
    assert code == 2 and message in err, err


_ROWS = "".join(f"{i % 2},{i},{'yes' if i % 2 else 'no'}\n" for i in range(12))


@pytest.mark.parametrize("header, argv, message", [
    ("a,class,label", [], "columns 'class' and 'label' could each be the target; name it with --target"),
    ("a,b,when", ["--target", "when"], "target 'when' holds dates"),
    ("a,b,label", ["--drop", "zz"], "cannot drop 'zz': no such column"),
    ("a,b,label", ["--target", "label", "--drop", "label"], "the target 'label' cannot also be dropped (--drop)"),
    ("a,b,label", ["--drop", "label"], "no column is named class, label, target or y"),  # dropped: no candidate
    ("a,b,label", ["--categorical", "zz"], "cannot make categorical 'zz': no such column"),
])
def test_bad_data_options(capsys, tmp_path, header, argv, message):
    path = tmp_path / "d.csv"
    rows = _ROWS if header != "a,b,when" else "".join(f"1,2,2021-03-{i + 1:02d}\n" for i in range(12))
    path.write_text(f"{header}\n{rows}")
    code, out, err = run(capsys, "fit", str(path), "--depth", "1", *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def _lines(*columns, sep=","):
    return "".join(sep.join(map(str, row)) + "\n" for row in zip(*columns, strict=True))


_YES_NO = ["yes" if i % 2 else "no" for i in range(24)]


@pytest.mark.parametrize("header, rows, argv, target", [
    ("id,a,label", _lines([f"u{i}" for i in range(24)], [i % 2 for i in range(24)], _YES_NO), ["--drop", "id"],
     "label"),
    ("a,b,label", _lines(range(24), [i if i % 5 else "n/a" for i in range(24)], _YES_NO), ["--na-values", "n/a"],
     "label"),
    ("a,b,label", _lines(range(24), [i if i % 5 else "x" for i in range(24)], _YES_NO),
     ["--categorical", "b", "--allow-many-levels"], "label"),
    ("a;b;label", _lines(range(24), ["1,5", "2"] * 12, _YES_NO, sep=";"), ["--decimal", ","], "label"),
    ("a,b,price", _lines(range(24), range(24), [f"{i * 1.5 + 0.1:.1f}" for i in range(24)]),
     ["--target", "price", "--classification"], "price"),
])
def test_data_options_that_settle_it(capsys, tmp_path, header, rows, argv, target):
    path = tmp_path / "d.csv"
    path.write_text(f"{header}\n{rows}")
    code, out, err = run(capsys, "fit", str(path), "--depth", "1", "--json", *argv)
    assert code == 0, err
    assert json.loads(out)["target"] == target


def test_missing_numbers_are_encoded_not_refused(capsys, tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("a,b,label\n1,,x\n3,4,y\n5,,x\n7,8,y\n")  # regression: 'numeric column has missing values'
    code, out, _ = run(capsys, "fit", str(path), "--depth", "1", "--json")
    record = json.loads(out)
    assert code == 0 and record["misclassifications"] == 0 and "1 with missing values" in record["encoding"]


@pytest.mark.parametrize("solver, given", [("dp", set()), ("gunluk", {"highs"})])
def test_log_streams_the_solver_log(capsys, monkeypatch, solver, given):
    seen = []

    def fake_solve(data, name, **options):
        seen.append(options)
        raise OptionError("stop here")

    monkeypatch.setattr("odtmip.solving.solvers.solve", fake_solve)
    code, _, _ = run(capsys, "fit", "monk1", "--solver", solver, "--depth", "1", "--log")
    assert code == 2 and set(seen[0]) - {"max_depth"} == given
    assert "highs" not in given or seen[0]["highs"].log is True
    assert logging.getLogger("odtmip").level == logging.DEBUG  # the DP's debug log
    run(capsys, "fit", "monk1", "--depth", "1")
    assert logging.getLogger("odtmip").level == logging.NOTSET


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out == f"odtmip {__version__}\n"


@pytest.mark.parametrize("argv", [["-v", "fit"], ["fit", "-v"], ["--verbose", "fit"], ["fit", "--verbose"]])
def test_verbose_before_or_after_the_subcommand(capsys, caplog, argv):
    with caplog.at_level(logging.DEBUG):
        code, _, _ = run(capsys, *argv, "monk1", "--depth", "1")
    assert code == 0 and "data: 432 samples" in caplog.text
    assert logging.getLogger().level == logging.INFO or any(r.levelno == logging.INFO for r in caplog.records)


@pytest.mark.parametrize("argv, message", [
    (["-v", "fit", "monk1", "--quiet"], "--verbose and --quiet exclude each other"),
    (["fit", "monk1", "-v", "--quiet"], "not allowed with argument"),
])
def test_verbose_and_quiet_exclude_each_other(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_bad_dl85_file(capsys, tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("1 0 1\n0 1\n")
    code, _, err = run(capsys, "fit", str(path), "--format", "dl85")
    assert code == 2 and err.startswith("odtmip: error:")


def test_fit_oct_objective_is_normalised_errors_plus_alpha_splits(capsys):
    code, out, _ = run(capsys, "fit", "monk1", "--solver", "oct", "--depth", "1", "--alpha", "0.05", "--json")
    record = json.loads(out)
    assert code == 0 and record["status"] == "optimal"
    baseline = 216  # monk1: 216 of each class, so L_hat = 216
    expected = record["misclassifications"] / baseline + 0.05 * record["n_branch_nodes"]
    assert record["objective"] == pytest.approx(expected)


def test_dp_and_binoct_report_the_same_sparse_objective(capsys):
    records = []
    for solver in ("dp", "binoct"):
        code, out, _ = run(capsys, "fit", "monk1", "--solver", solver, "--depth", "2", "--lambda", "0.01", "--json")
        assert code == 0
        records.append(json.loads(out))
    for r in records:  # errors/N + lambda x leaves, recomputed from the returned tree
        assert r["status"] == "optimal"
        assert r["objective"] == pytest.approx(r["misclassifications"] / 432 + 0.01 * r["n_leaves"])
    assert records[0]["objective"] == pytest.approx(records[1]["objective"])
    code, out, _ = run(capsys, "fit", "monk1", "--lambda", "0.01", "--depth", "none", "--json")
    record = json.loads(out)  # regression: --depth none solved depth 3 (0.181111) and reported it optimal
    assert code == 0 and record["status"] == "optimal" and record["n_leaves"] == 7
    assert record["objective"] == pytest.approx(0.07, rel=0, abs=1e-12)


@pytest.mark.parametrize("argv, options", [
    ([], {"max_depth": 3}),
    (["--depth", "none", "--lambda", "0.01"], {"max_depth": None, "leaf_penalty": 0.01}),
    (["--time-limit", "5", "--min-leaf", "2", "--depth", "1"], {"max_depth": 1, "time_limit": 5.0, "min_leaf": 2}),
    (["--solver", "gunluk", "--warm-start", "none", "--max-card", "2"],
     {"max_depth": 3, "warm_start": "none", "max_card": 2}),
])
def test_fit_passes_only_the_options_given(capsys, monkeypatch, argv, options):
    seen = []

    def fake_solve(data, solver, **given):
        seen.append(given)
        raise OptionError("stop here")

    monkeypatch.setattr("odtmip.solving.solvers.solve", fake_solve)
    code, _, err = run(capsys, "fit", "monk1", *argv)
    assert code == 2 and "stop here" in err
    limit = seen[0].pop("time_limit", None)  # what is left of the command's limit when the solve starts
    assert limit == options.pop("time_limit", None) or 0 < limit < 5.0
    assert seen == [options] and all(type(seen[0][k]) is type(v) for k, v in options.items())
