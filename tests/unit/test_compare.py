"""odtmip.compare: the grid, one row per run agreeing with the DP, resumption, the backends, tables and plots."""

import argparse
import doctest
import importlib
import json
import math

import numpy as np
import pandas as pd
import pytest

import odtmip
from odtmip import Dataset
from odtmip.core.exceptions import OptionError
from odtmip.solving.compare import (
    COLUMNS,
    Variant,
    ablation,
    compare,
    frame,
    parse_variants,
    plot_all,
    read,
    read_store,
    save,
    to_latex,
    to_markdown,
    variant,
)

pytestmark = pytest.mark.highs

# odtmip.compare is the function; the module, for monkeypatching its runner
MODULE = importlib.import_module("odtmip.solving.compare")

# Columns that do not depend on timing or on the backend (the grid's runs all finish with a proof).
DETERMINISTIC = ["dataset", "variant", "depth", "status", "objective", "misclassifications", "n_variables",
                 "n_binaries", "n_constraints", "n_nonzeros", "lp_bound", "dp_optimum", "verdict"]


def tiny(seed=0, n=30) -> Dataset:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.integers(0, 2, n), "b": rng.integers(0, 2, n),
                      "c": pd.Categorical(rng.integers(0, 3, n).astype(str))})
    y = (X["a"] ^ (X["c"] == "1") ^ (rng.random(n) < 0.2)).astype(int)
    return Dataset(X, y)


GRID = {"datasets": {"tiny": tiny()}, "solvers": ["gunluk", "binoct"], "depths": [1, 2], "time_limit": 30.0,
        "progress": False}


@pytest.fixture(scope="module")
def local_rows():
    return compare(**GRID)


def test_every_proven_run_agrees_with_the_dp(local_rows):
    df = local_rows
    assert list(df.columns) == list(COLUMNS) and len(df) == 4
    assert df[["variant", "depth"]].values.tolist() == [["gunluk", 1], ["binoct", 1], ["gunluk", 2], ["binoct", 2]]
    assert (df["status"] == "optimal").all() and df["agree"].tolist() == [True] * 4
    assert (df["misclassifications"] == df["dp_misclassifications"]).all()
    assert np.allclose(df["objective"], df["dp_optimum"])
    # one common unit: Günlük counts errors, BinOCT errors / N; both map back to the same misclassifications
    for depth in (1, 2):
        gunluk, binoct = df[df["depth"] == depth].itertuples()
        assert binoct.objective == pytest.approx(gunluk.objective / 30)
        assert binoct.bound_errors == pytest.approx(gunluk.bound_errors) == gunluk.misclassifications
    tol = 1e-6
    assert (df["lp_bound"] <= df["objective"] + tol).all() and (df["root_bound"] <= df["objective"] + tol).all()
    assert (df["lp_bound_errors"] <= df["root_bound_errors"] + tol).all()
    assert (df["first_incumbent_seconds"] <= df["best_seconds"] + 1e-9).all()
    assert (df["best_seconds"] <= df["proof_seconds"] + 1e-9).all() and (df["proof_seconds"] <= df["seconds"]).all()
    assert (df[["n_variables", "n_constraints", "n_nonzeros"]] > 0).all().all() and (df["threads"] >= 1).all()
    assert all(run[-1][1] == pytest.approx(obj) for run, obj in zip(df["trajectory"], df["objective"], strict=True))


def test_the_function_is_exported():
    assert odtmip.compare is compare and "compare" in odtmip.__all__


def test_doctests():
    assert doctest.testmod(MODULE).failed == 0


def test_a_rerun_recomputes_nothing(tmp_path, monkeypatch):
    calls = []
    real = MODULE.run_cell

    def counting(cell):
        calls.append((cell.variant.name, cell.depth))
        return real(cell)

    monkeypatch.setattr(MODULE, "run_cell", counting)
    store = tmp_path / "runs.jsonl"
    grid = dict(GRID, depths=[1])
    first = compare(**grid, store=store)
    assert len(calls) == 2 and len(read_store(store)) == 2
    second = compare(**grid, store=store)
    assert len(calls) == 2  # nothing recomputed
    pd.testing.assert_frame_equal(first.drop(columns="trajectory"), second.drop(columns="trajectory"))
    with open(store, "a") as f:  # a run killed while writing leaves half a line; a failed run is tried again
        f.write('{"key": "cut sho')
    failed = dict(read_store(store)[0], status="error")
    with open(store, "a") as f:
        f.write("\n" + json.dumps(failed) + "\n")
    third = compare(**dict(grid, depths=[1, 2]), store=store)
    assert calls[2:] == [(failed["variant"], 1), ("gunluk", 2), ("binoct", 2)]
    assert len(third) == 4 and (third["status"] == "optimal").all()
    assert read(store)["key"].tolist() == third["key"].tolist()


def test_variant_specs():
    assert variant("gunluk:strengthen=false,anchors=false") == Variant("gunluk", {"strengthen": False,
                                                                                  "anchors": False})
    v = variant({"solver": "oct", "alpha": 0.01, "warm_start": "cart", "seed": 3})
    assert (v.options, v.warm_start, v.seed, v.name) == ({"alpha": 0.01}, "cart", 3,
                                                          "oct:alpha=0.01,warm_start=cart,seed=3")
    assert [v.name for v in parse_variants(["gunluk,gunluk:strengthen=false,anchors=false,binoct", "oct"])] == [
        "gunluk", "gunluk:strengthen=false,anchors=false", "binoct", "oct"]
    assert [v.name for v in ablation("gunluk", ["anchors", "relax"])] == [
        "gunluk", "gunluk:anchors=false", "gunluk:relax=false", "gunluk:anchors=false,relax=false"]
    with pytest.raises(OptionError, match="set by the grid"):
        variant("gunluk:max_depth=3")
    with pytest.raises(OptionError, match="key=value"):
        variant("gunluk:strengthen")


@pytest.mark.parametrize("solvers, message", [
    (["nope"], "unknown MIP formulation 'nope'"),
    (["gunluk:strengthen=maybe"], "strengthen"),
    (["gunluk", "gunluk"], "same name"),
])
def test_bad_variants_fail_before_anything_runs(solvers, message, monkeypatch):
    monkeypatch.setattr(MODULE, "run_cell", lambda cell: pytest.fail("ran"))
    with pytest.raises(OptionError, match=message):
        compare({"tiny": tiny()}, solvers, [1], progress=False)


@pytest.mark.slow
def test_the_dask_backend_gives_the_same_rows(local_rows):
    distributed = pytest.importorskip("distributed")
    # worker processes: HiGHS keeps its thread scheduler per thread, which the runner tracks per process
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        df = compare(**GRID, backend="dask", scheduler=cluster)
    pd.testing.assert_frame_equal(df[DETERMINISTIC], local_rows[DETERMINISTIC])
    assert (df["threads"] == 1).all()  # two worker threads share this host's cores


@pytest.mark.slow
def test_the_ray_backend_gives_the_same_rows(local_rows):
    pytest.importorskip("ray")
    df = compare(**GRID, backend="ray", jobs=2)
    pd.testing.assert_frame_equal(df[DETERMINISTIC], local_rows[DETERMINISTIC])


@pytest.mark.slow
def test_joblib_processes_give_the_same_rows(local_rows):
    df = compare(**GRID, jobs=2)
    pd.testing.assert_frame_equal(df[DETERMINISTIC], local_rows[DETERMINISTIC])


def test_an_lp_bound_out_of_time_leaves_the_run_standing():
    # the LP relaxation of Günlük's depth-3 model of tic-tac-toe needs seconds; stopped by the run's time limit it
    # raised, and the whole run was an error row (also seen on kr-vs-kp and breast-w, and OCT on kr-vs-kp)
    from odtmip.core.datasets import load

    df = compare({"tic-tac-toe": Dataset(*load("tic-tac-toe"))}, ["gunluk"], [3], time_limit=0.2, progress=False)
    (row,) = df.to_dict("records")
    assert row["status"] == "time_limit" and row["error"] is None
    assert math.isnan(row["lp_bound"]) and math.isnan(row["lp_bound_errors"])
    assert row["lp_note"].startswith("the LP relaxation stopped at a limit before its optimum (time limit")
    assert row["objective"] == row["misclassifications"] == row["dp_misclassifications"]  # the DP start stands
    assert 0.0 <= row["bound"] <= row["objective"] and 0.0 <= row["gap"] <= 1.0


def test_a_failed_run_is_a_row():
    df = compare({"tiny": tiny()}, ["gunluk:memory_limit=1e-9"], [1], progress=False)
    assert df["status"].tolist() == ["error"] and df["error"][0].startswith("ResourceError: the gunluk model")


# ---------------------------------------------------------------------------------------------- tables, plots
def made_up() -> pd.DataFrame:
    """Two datasets x three variants, without solving (numbers chosen so that each column has a clear best)."""
    rows = []
    for dataset, base in (("monk1", 96), ("tic-tac-toe", 120)):
        for k, name in enumerate(("gunluk", "binoct", "oct")):
            proven = k < 2
            rows.append({"dataset": dataset, "depth": 2, "variant": name, "warm_start": "dp", "seed": None,
                         "status": "optimal" if proven else "time_limit", "misclassifications": base + (k == 2),
                         "proof_seconds": 1.5 + k if proven else math.nan, "lp_bound_errors": [0.5, 0, 0][k],
                         "root_bound_errors": [0.8, 0.1, 0][k], "dp_misclassifications": base,
                         "trajectory": [[0.1, base + 10.0, None], [0.5, base + 1.0, 0.5 * base],
                                        [1.5 + k, base + (k == 2), base if proven else 0.6 * base]]})
    return frame(rows)


def test_markdown_marks_the_best_in_bold():
    text = to_markdown(made_up())
    assert text.splitlines()[0] == "Entries: misclassifications / proof_seconds."
    assert "| dataset | depth | gunluk | binoct | oct |" in text
    assert "| monk1 | 2 | **96** / **1.50** | **96** / 2.50 | 97 / - |" in text
    bounds = to_markdown(made_up(), ["lp_bound_errors"])  # the highest bound is the best
    assert "| tic-tac-toe | 2 | **0.5** | 0 | 0 |" in bounds


def test_latex_has_a_column_group_per_variant():
    text = to_latex(made_up())
    assert r"\multicolumn{2}{c}{gunluk} & \multicolumn{2}{c}{binoct} & \multicolumn{2}{c}{oct} \\" in text
    assert r"\cmidrule(lr){3-4} \cmidrule(lr){5-6} \cmidrule(lr){7-8}" in text
    assert r"tic-tac-toe & 2 & \textbf{120} & \textbf{1.50} & \textbf{120} & 2.50 & 121 & - \\" in text


def test_the_plots_write_pngs(tmp_path):
    pytest.importorskip("matplotlib")
    paths = plot_all(made_up(), tmp_path / "plots")
    assert [p.name for p in paths] == ["profile.png", "gaps.png", "bounds.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_save_and_read_back(local_rows, tmp_path, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    back = read(save(local_rows, tmp_path / f"runs{suffix}"))
    assert back["trajectory"].tolist() == local_rows["trajectory"].tolist()
    pd.testing.assert_frame_equal(back[DETERMINISTIC], local_rows[DETERMINISTIC], check_dtype=False)
    with pytest.raises(OptionError, match=".csv or .parquet"):
        save(local_rows, tmp_path / "runs.xlsx")


def test_the_command(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from odtmip.cli import compare as command

    parser = argparse.ArgumentParser()
    command.add_parser(parser.add_subparsers(dest="command"))
    out = tmp_path / "runs.csv"
    args = parser.parse_args(["compare", "monk1", "--solvers", "gunluk,gunluk:anchors=false", "--depth", "1",
                              "--time-limit", "20", "--output", str(out), "--markdown", str(tmp_path / "t.md"),
                              "--latex", str(tmp_path / "t.tex"), "--plot-dir", str(tmp_path / "plots"),
                              "--no-progress"])
    assert args.run(args) == 0
    printed = capsys.readouterr().out
    assert "| monk1 | 1 | **108** / " in printed and printed == (tmp_path / "t.md").read_text()
    assert read(out)["variant"].tolist() == ["gunluk", "gunluk:anchors=false"]
    assert (tmp_path / "runs.jsonl").exists() and (tmp_path / "t.tex").read_text().startswith(r"\begin{tabular}")
    assert len(list((tmp_path / "plots").glob("*.png"))) == 3


# ---------------------------------------------------------------------------------------------- the root bound
def market_split(n=10, seed=1):
    """A small market-split MIP that HiGHS solves by branching (25 nodes with one thread and seed 0)."""
    import pyomo.environ as pyo

    a = np.random.default_rng(seed).integers(0, 30, (2, n))
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Binary)
    m.s = pyo.Var(range(2), range(2), domain=pyo.NonNegativeReals)
    m.c = pyo.Constraint(range(2), rule=lambda m, i: sum(int(a[i, j]) * m.x[j] for j in range(n))
                         + m.s[i, 0] - m.s[i, 1] == int(a[i].sum() // 2))
    m.obj = pyo.Objective(expr=sum(m.s[i, k] for i in range(2) for k in range(2)))
    return m


def test_the_runner_records_when_the_root_ended():
    from odtmip.models._highs import HighsOptions, solve

    run = solve(market_split(), HighsOptions(threads=1, seed=0))
    assert run.nodes > 1 and run.objective == pytest.approx(2)
    root = run.statistics["root_seconds"]
    assert run.trajectory[0][0] <= root < run.trajectory[-1][0]
    at_root = [d for t, _, d in run.trajectory if t <= root][-1]
    assert at_root < run.bound  # the search closed the gap after the root
    assert "root_seconds" not in solve(market_split(n=14, seed=0)).statistics  # solved in the root


def test_the_check_command_is_one_cell_of_compare(tmp_path, capsys):
    from odtmip.cli import main

    data = tiny()
    path = tmp_path / "tiny.csv"
    data.X.assign(label=data.y).to_csv(path, index=False)
    assert main(["check", str(path), "--model", "binoct", "--depth", "2", "--time-limit", "30", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    row = out["row"]
    from odtmip.core.datasets import load

    (ref,) = compare({str(path): Dataset(*load(str(path)))}, ["binoct"], depths=[2], time_limit=30.0,
                     progress=False).to_dict("records")
    assert row["key"] == ref["key"]  # the same cell of the grid: same data, variant, depth, warm start, limit
    assert set(COLUMNS) - {"error"} <= set(row)  # every column of a comparison ("error": failed runs only)
    assert {c: row[c] for c in DETERMINISTIC} == {c: ref[c] for c in DETERMINISTIC}
    assert out["verdict"] == row["verdict"] == "agree"


# ---------------------------------------------------------------------------------------------- the DP's bound rows
def test_dp_bounds_is_an_axis_of_the_grid_and_the_rows_make_the_lp_exact():
    df = compare({"tiny": tiny()}, ["gunluk", "binoct"], depths=[2], time_limit=30.0, dp_bounds=("none", "root"),
                 progress=False)
    assert df["variant"].tolist() == ["gunluk", "gunluk:dp_bounds=root", "binoct", "binoct:dp_bounds=root"]
    assert df["dp_bounds"].tolist() == ["none", "root", "none", "root"]
    bounded = df[df["dp_bounds"] == "root"]
    assert (bounded["proved_by"] == "lp").all() and (bounded["dp_rows"] == 1).all()
    assert (bounded["dp_bounds_seconds"] >= 0).all() and (bounded["nodes"] == 0).all()
    # the LP relaxation with the row is the DP's optimum, in both units
    assert np.allclose(bounded["lp_bound"], bounded["dp_optimum"], atol=1e-6)
    plain = df[df["dp_bounds"] == "none"]
    assert (plain["lp_bound_errors"].to_numpy() < bounded["lp_bound_errors"].to_numpy()).all()
    assert df["agree"].all() and (bounded["proof_seconds"] <= bounded["seconds"]).all()


def test_a_variant_that_sets_dp_bounds_itself_is_kept_once():
    from odtmip.solving.compare import with_dp_bounds

    variants = with_dp_bounds([variant("binoct:dp_bounds=paths"), variant("oct"), variant("oct-h")], ["none", "root"])
    assert [v.name for v in variants] == ["binoct:dp_bounds=paths", "oct", "oct:dp_bounds=root", "oct-h"]
