"""The installed ``odtmip`` executable in a subprocess: with ``--json`` stdout is exactly one JSON value.

In-process tests (test_cli.py) cannot see what a solver library prints to the process's stdout from C code
(highspy 1.16 prints a banner when a ``Highs`` is made); these runs can.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from odtmip import __version__
from odtmip.core.deploy import SavedTree
from odtmip.core.tree import Split, Tree, branch, leaf

pytestmark = pytest.mark.slow

_SCRIPT = Path(sys.executable).with_name("odtmip")
ODTMIP = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "odtmip.cli"]


#: Seconds a run may take: generous, for a loaded machine whose first run also compiles the DP's kernels.
TIMEOUT = 600


def run(*argv: str) -> subprocess.CompletedProcess:
    done = subprocess.run([*ODTMIP, *argv], capture_output=True, text=True, timeout=TIMEOUT)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def one_json_value(stdout: str):
    """The one JSON value that is the whole of ``stdout`` (one line, nothing before or after)."""
    assert stdout.endswith("\n") and stdout.count("\n") == 1, stdout
    return json.loads(stdout)


@pytest.mark.parametrize("solver, data, depth", [
    ("dp", "monk1", "2"), ("gunluk", "monk1", "1"), ("binoct", "monk1", "1"), ("oct", "monk1", "1"),
    ("oct-h", "iris", "1"),  # OCT-H needs numeric columns
])
def test_fit_json_is_one_object(solver, data, depth):
    done = run("fit", data, "--solver", solver, "--depth", depth, "--time-limit", "5", "--json")
    assert done.returncode == 0, done.stderr
    record = one_json_value(done.stdout)
    assert isinstance(record, dict) and record["solver"] == solver and record["tree"] is not None


@pytest.mark.parametrize("model", ["gunluk", "binoct", "oct"])
def test_check_json_is_one_object(model):
    done = run("check", "monk1", "--model", model, "--depth", "1", "--time-limit", "5", "--json")
    assert done.returncode == 0, done.stderr
    record = one_json_value(done.stdout)
    # the whole command has 5 s: whether the proofs fit in them depends on the machine, the verdict's kind does not
    assert isinstance(record, dict) and record["model"] == model and record["verdict"] in ("agree", "unproven")


def test_datasets_json_is_one_list():
    done = run("datasets", "--json")
    assert done.returncode == 0, done.stderr
    table = one_json_value(done.stdout)
    assert isinstance(table, list) and {"monk1", "iris"} <= {row["name"] for row in table}


def test_no_depth_limit_reaches_the_dp():
    # regression: --depth none was dropped and depth 3 solved (0.181111), reported as optimal
    done = run("fit", "monk1", "--solver", "dp", "--lambda", "0.01", "--depth", "none", "--json")
    assert done.returncode == 0, done.stderr
    record = one_json_value(done.stdout)
    assert record["status"] == "optimal" and record["objective"] == pytest.approx(0.07, rel=0, abs=1e-12)


@pytest.mark.parametrize("solver", ["gunluk", "binoct"])
def test_no_depth_limit_is_an_error_for_a_mip(solver):
    done = run("fit", "monk1", "--solver", solver, "--lambda" if solver == "binoct" else "--max-card", "1",
               "--depth", "none", "--json")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"odtmip: error: {solver} needs max_depth") and done.stderr.count("\n") == 1


# ------------------------------------------------------------------------------------------------------
# No silent data guesses, and a command that behaves in a shell: tiny CSV files, the DP at depth 1 (test_cli.py
# has the other data cases, in-process). The runs start together (one module fixture) to share the start-up time.
# ------------------------------------------------------------------------------------------------------

_N = 12
_A = [i % 2 for i in range(_N)]
_LABELS = ["yes" if a else "no" for a in _A]


def _csv(header: str, *columns, sep: str = ",") -> str:
    return header + "\n" + "".join(sep.join(map(str, row)) + "\n" for row in zip(*columns, strict=True))


_FILES = {
    "outcome.csv": _csv("a,b,outcome", _A, range(_N), _LABELS),
    "label.csv": _csv("a,b,Label", _A, range(_N), _LABELS),
    "price.csv": _csv("a,price", [i % 2 for i in range(30)], [f"{1.5 * i + 0.25:.2f}" for i in range(30)]),
    "age.csv": _csv("a,age,label", _A, [20 + i if i not in (3, 7) else "n/a" for i in range(_N)], _LABELS),
    "spaces.csv": _csv("a,label", _A, [f"{lab} " if i % 3 else lab for i, lab in enumerate(_LABELS)]),
    "id.csv": _csv("id,a,label", [f"user{i}" for i in range(_N)], _A, _LABELS),
    "comma.csv": _csv("a;b;label", _A, [f"{i},5" for i in range(_N)], _LABELS, sep=";"),
    "thousands.csv": _csv("a;b;label", _A, [f"{1000 + i:,}" for i in range(_N)], _LABELS, sep=";"),
    "missing.csv": _csv("a,b,label", _A, ["" if i % 4 == 0 else i for i in range(_N)], _LABELS),
    "monk1": _csv("a,label", _A, _LABELS),  # named like a bundled set
    "tree.json": json.dumps(SavedTree(Tree(branch(Split("binary", (0,)), leaf(0), leaf(1)), ["a"], ["no", "yes"]),
                                      {"a": "binary"}, "label").to_dict()),
}

_ERRORS = {  # argv (--depth 1 is added) -> the one line on stderr
    "no-target": (["fit", "outcome.csv"], "outcome.csv: no column is named class, label, target or y; name the "
                                          "target with --target (columns: a, b, outcome)"),
    "regression": (["fit", "price.csv", "--target", "price"],
                   "target 'price' has 30 distinct numeric values (not all whole numbers): a regression target, not "
                   "class labels; choose the label column (--target), or pass --classification "
                   "(force_classification=True) to use each value as a class"),
    "stray": (["fit", "age.csv"], "column 'age': 2 of 12 values are not numbers (e.g. 'n/a'); clean them, mark them "
                                  "missing with --na-values, or keep the column as text with --categorical age"),
    "id": (["fit", "id.csv"], "column 'id' has 12 distinct values in 12 rows, like an identifier: drop it (--drop id) "
                              "or keep it (--allow-many-levels, allow_many_levels=True)"),
    "thousands": (["fit", "thousands.csv"], "thousands.csv: column 'b': '1,000' reads as 1 with a decimal comma and as "
                                            "1000 with ',' between thousands; choose with --decimal , or --decimal ."),
    "bundled-unknown": (["fit", "bundled:monk9"], "no bundled data set 'monk9'; the bundled sets are breast-cancer, "
                                                  "iris, wine, tic-tac-toe, monk1, monk2, monk3"),
    "missing-binoct": (["fit", "missing.csv", "--solver", "binoct"],
                       "binoct reads numeric columns as numbers and cannot route missing values (column 'b' has some); "
                       "use dp or gunluk, or drop the column (--drop b)"),
    "verbose-quiet": (["-v", "fit", "label.csv", "--quiet"], "--verbose and --quiet exclude each other"),
    "class-weight": (["fit", "label.csv", "--solver", "gunluk", "--class-weight", "1e308"],  # was a traceback
                     "gunluk: class_weight must be a number in [0.0001, 10000], got 1e+308"),
}

_REFUSED = {  # argv as given -> the start of the one line on stderr: refused as the command line is read
    "plot-format": (["front", "label.csv", "--depth", "1", "--plot", "front.txt"],
                    "argument --plot: cannot draw into front.txt: name the file with the extension of a format "
                    "matplotlib writes (avif, eps, "),
    "png-format": (["show", "tree.json", "--png", "tree"], "argument --png: cannot draw into tree: name the file "),
    "output-folder": (["predict", "tree.json", "label.csv", "--output", "nodir/p.csv"],
                      "argument --output: cannot write nodir/p.csv: folder 'nodir' does not exist"),
    "save-folder": (["fit", "label.csv", "--depth", "1", "--save", "label.csv/tree.json"],
                    "argument --save: cannot write label.csv/tree.json: folder 'label.csv' is not a folder"),
}

_FITS = {  # argv (--depth 1 --json is added) -> target, rows
    "spaces": (["fit", "spaces.csv"], "label", _N),
    "comma": (["fit", "comma.csv"], "label", _N),
    "comma-quiet": (["fit", "comma.csv", "--quiet"], "label", _N),
    "missing": (["fit", "missing.csv"], "label", _N),
    "local-file": (["fit", "monk1", "--format", "csv", "-v"], "label", _N),
    "bundled": (["-v", "fit", "bundled:monk1"], "class", 432),
    "log": (["fit", "label.csv", "--solver", "gunluk", "--log"], "Label", _N),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    """Every run of _ERRORS and _FITS, ``--version``, and a fit whose reader closes stdout at once, by name."""
    folder = tmp_path_factory.mktemp("cli")
    for name, text in _FILES.items():
        (folder / name).write_text(text)
    argvs = {name: [*argv, "--depth", "1"] for name, (argv, _) in _ERRORS.items()}
    argvs |= {name: argv for name, (argv, _) in _REFUSED.items()}
    argvs |= {name: [*argv, "--depth", "1", "--json"] for name, (argv, _, _) in _FITS.items()}
    argvs |= {"version": ["--version"], "closed-pipe": ["fit", "label.csv", "--depth", "1", "--json"]}
    pipeline = " ".join([*ODTMIP, "fit", "label.csv", "--depth", "1", "--json"]) + " | head -c 10"
    commands = {name: [*ODTMIP, *argv] for name, argv in argvs.items()} | {"head": pipeline}
    names = list(commands)
    # one run first, alone: a fresh install compiles the DP's kernels into numba's cache, which the others load
    subprocess.run(commands["closed-pipe"], cwd=folder, capture_output=True, timeout=TIMEOUT)
    width = max(2, os.cpu_count() or 2)  # as many at a time as there are cores: more only queue for them
    done = {}
    for at in range(0, len(names), width):
        procs = {name: subprocess.Popen(commands[name], shell=name == "head", cwd=folder, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True) for name in names[at : at + width]}
        if "closed-pipe" in procs:
            procs["closed-pipe"].stdout.close()  # the reader is gone before the first byte is written
        for name, proc in procs.items():
            if name == "closed-pipe":
                out, err = "", proc.stderr.read()
                proc.wait(timeout=TIMEOUT)
            else:
                out, err = proc.communicate(timeout=TIMEOUT)
            done[name] = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    return done


@pytest.mark.parametrize("name", list(_ERRORS))
def test_bad_data_is_one_line_and_exit_2(runs, name):
    done = runs[name]
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"odtmip: error: {_ERRORS[name][1]}\n")


@pytest.mark.parametrize("name", list(_REFUSED))
def test_bad_output_files_are_refused_before_any_work(runs, name):
    # regression: matplotlib's ValueError (unknown format) after the solve, pandas's OSError (no such folder)
    pytest.importorskip("matplotlib")  # without it: "drawing needs matplotlib"
    done = runs[name]
    assert (done.returncode, done.stdout) == (2, "") and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"odtmip: error: {_REFUSED[name][1]}")


@pytest.mark.parametrize("name", list(_FITS))
def test_fits_name_their_target(runs, name):
    done = runs[name]
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    record = one_json_value(done.stdout)
    _, target, rows = _FITS[name]
    assert (record["target"], record["n_samples"], record["status"]) == (target, rows, "optimal")
    assert len(record["tree"]["classes"]) == 2  # "yes " is "yes"


def test_what_the_fits_log(runs):
    assert runs["comma"].stderr == ("odtmip.datasets: comma.csv: column 'b' has numbers with a decimal comma: '0,5' "
                                    "read as 0.5 (--decimal chooses)\n")
    assert runs["comma-quiet"].stderr == "" and runs["spaces"].stderr == ""
    assert "1 with missing values (+1 indicator each)" in one_json_value(runs["missing"].stdout)["encoding"]
    local = runs["local-file"].stderr  # -v after the subcommand
    assert "monk1: loading the file" in local and "not the bundled data set (write bundled:monk1 for that)" in local
    assert "target 'label', the column named like a label" in local and "odtmip: data: 12 samples" in local
    assert "odtmip: data: 432 samples, 2 classes (target 'class')" in runs["bundled"].stderr  # -v before it
    assert "Running HiGHS" in runs["log"].stderr


def test_version(runs):
    done = runs["version"]
    assert (done.returncode, done.stdout, done.stderr) == (0, f"odtmip {__version__}\n", "")


def test_closed_stdout_ends_quietly(runs):
    assert (runs["closed-pipe"].returncode, runs["closed-pipe"].stderr) == (141, "")
    assert (runs["head"].stdout, runs["head"].stderr) == ('{"solver":', "")


def test_dp_bounds_prove_by_the_lp_and_bad_values_are_one_line():
    # no time limit: the LP relaxation runs to its end on any machine, and with the root's row it is the optimum
    done = run("fit", "tic-tac-toe", "--solver", "binoct", "--depth", "2", "--dp-bounds", "root", "--json")
    assert done.returncode == 0, done.stderr
    record = one_json_value(done.stdout)
    assert record["status"] == "optimal" and record["misclassifications"] == 282
    assert record["stats"]["proved_by"] == "lp" and record["stats"]["dp_rows"] == 1
    for argv, words in ((["--solver", "oct-h", "--dp-bounds", "root"], "dp_bounds"),
                        (["--solver", "binoct", "--dp-bounds", "all"], "dp_bounds must be one of")):
        done = run("fit", "iris", "--depth", "1", *argv)
        assert done.returncode != 0 and done.stdout == "", done.stdout
        assert words in done.stderr and done.stderr.count("\n") <= 3, done.stderr
