"""The installed ``odtmip`` executable in a subprocess: with ``--json`` stdout is exactly one JSON value.

In-process tests (test_cli.py) cannot see what a solver library prints to the process's stdout from C code
(highspy 1.16 prints a banner when a ``Highs`` is made); these runs can.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

_SCRIPT = Path(sys.executable).with_name("odtmip")
ODTMIP = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "odtmip.cli"]


def run(*argv: str) -> subprocess.CompletedProcess:
    done = subprocess.run([*ODTMIP, *argv], capture_output=True, text=True, timeout=120)
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
    assert isinstance(record, dict) and record["model"] == model and record["verdict"] == "agree"


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
