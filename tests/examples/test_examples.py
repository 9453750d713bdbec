"""Every example runs and reproduces the optimum its docstring documents, so teaching code never rots."""

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import odtmip
from odtmip import Status

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_plots(figure, folder: Path) -> None:
    """The example's figure has axes with something drawn, and saves as a PNG."""
    import matplotlib.pyplot as plt

    try:
        assert figure.axes and any(ax.lines or ax.patches or ax.collections for ax in figure.axes)
        figure.savefig(folder / "figure.png", dpi=60)
        assert (folder / "figure.png").stat().st_size > 0
    finally:
        plt.close(figure)


@pytest.mark.highs
def test_gunluk_teaching_example(tmp_path):
    out = load_example("01_gunluk_teaching").main(verbose=False)
    assert_plots(out["figure"], tmp_path)
    assert out["lp_value"] == pytest.approx(14)  # the LP relaxation "classifies" all 14 days
    assert out["cold"] == out["warm"] == out["dp"] == 2
    assert out["accepted"] is True


@pytest.mark.highs
@pytest.mark.slow
def test_compare_formulations_example(tmp_path):
    out = load_example("02_compare_formulations").main(verbose=False)
    assert out["optimum"] == {"monk1": [20], "tic-tac-toe": [22]}  # every formulation's, the DP's over its splits
    # a proof within the time limit depends on the machine: the example asserts bound <= optimum <= misclassifications
    # for every run
    assert "disagree" not in out["verdicts"]
    # [GKLMS] §4.3: the LP relaxation classifies every sample correctly (anchors do not lift it on these samples);
    # BinOCT's and OCT's LP bounds are as trivial
    assert len(out["lp_bound"]) == 12 and all(v == pytest.approx(0, abs=1e-6) for v in out["lp_bound"].values())
    columns, rows, binaries = out["columns"], out["rows"], out["binaries"]
    assert columns["gunluk:delete_variables=false"] - columns["gunluk"] == 200  # (14) halves the 100 x 4 c's
    assert (rows["gunluk:delete_variables=false"], rows["gunluk"]) == (760, 460)
    assert binaries["gunluk"] == 17 and binaries["gunluk:relax=false"] == 69  # Prop. 3: z at the root only
    assert rows["gunluk:strengthen=false"] == rows["gunluk"] == rows["gunluk:anchors=false"] + 6  # one anchor a group
    assert "| monk1 | 2 |" in out["table"]
    assert_plots(out["figure"], tmp_path)


@pytest.mark.highs
@pytest.mark.slow
def test_lp_bound_example(tmp_path):
    out = load_example("03_lp_bound").main(verbose=False)
    assert out["n_samples"] == 40
    # [GKLMS] §4.3: from two levels on the LP relaxation of (8) "classifies" all N samples, anchors or not;
    # at depth 1 it is tight
    assert out["lp"] == {"1": 28, "1+anchors": 28, "2": 40, "2+anchors": 40, "3": 40, "3+anchors": 40}
    assert out["correct"] == {1: 28, 2: 34, 3: 39}  # the DP's optima; each MIP's bound and tree bracket them
    assert out["anchor_rows"] == {1: 0, 2: 6, 3: 18}  # (13): one row per group (6) and anchor node
    assert out["relaxed_value"] == pytest.approx(40)
    # the fractional point behind the bound (z = 1/2, c = 1/2^(depth-1)) satisfies every row, with value N
    assert out["half_point"] == {2: (40, 0), 3: (40, 0)}
    # on tic-tac-toe the anchors lift the bound, a little: 958 -> 14344/15 (the optimum is 676)
    assert out["tic_tac_toe_lp"] == {False: 958, True: pytest.approx(14344 / 15, abs=1e-6)}
    assert_plots(out["figure"], tmp_path)


@pytest.mark.highs
def test_warm_start_example(tmp_path):
    out = load_example("04_warm_start").main(verbose=False)
    assert out["optimum"] == pytest.approx(1 / 40)  # the DP's: one error, L_hat = 40
    # a proof within the time limit depends on the machine, so the example asserts bound <= optimum <= objective
    # for both runs; the warm run starts from the optimum, so its tree is optimal
    assert out["objective"]["dp"] == pytest.approx(1 / 40)
    assert out["misclassified"] == 1
    assert out["accepted"] == {"none": None, "dp": True}  # the DP start is a feasible point HiGHS kept
    assert out["warm_start_objective"] == pytest.approx(1 / 40)  # and it was already optimal
    assert_plots(out["figure"], tmp_path)


@pytest.mark.highs
def test_oct_hole_example():
    out = load_example("05_oct_hole").main(verbose=False)
    assert out["baseline"] == 1
    assert out["unfixed_status"] is Status.OPTIMAL and out["unfixed"] == pytest.approx(0, abs=1e-9)
    assert out["d_root"] == pytest.approx(0)  # the root does not split ...
    assert out["leaves"][0] != out["leaves"][1]  # ... yet the two x = 0 points sit in different leaves
    assert out["fixed_status"] is Status.OPTIMAL and out["fixed"] == pytest.approx(1)


@pytest.mark.highs
def test_binoct_trie_example(tmp_path):
    out = load_example("06_binoct_trie").main(verbose=False)
    assert (out["trie_nodes"], out["trie_depth"]) == (5, 3)
    assert out["exact"] == dict.fromkeys(range(1, 17), True)
    assert out["big_m"] == 4  # rows 1, 4, 5, 6 have x0 in {1, 2}
    assert out["errors"] == {"all": 0, "boundary": 1}
    assert out["loss"]["boundary"] == pytest.approx(1 / 7)
    assert out["verdict"] == {"all": "agree", "boundary": "agree"}
    assert_plots(out["figure"], tmp_path)


@pytest.mark.highs
def test_sensitivity_example(tmp_path):
    out = load_example("07_sensitivity").main(verbose=False)
    assert out["optima"] == [0, 0, 1, 2, 5, 6, 6]  # tau = 0, 0.5, ..., 1.0, the DP's
    assert out["missed"] == out["optima"]  # each MIP starts from the optimum: its tree is optimal, proven or not
    assert out["required"] == [0, 9, 11, 13, 15, 17, 18]  # ceil(18 tau), exact
    assert all(tn >= need for tn, need in zip(out["tn"], out["required"], strict=True))
    assert out["rates"][0] == (0, 1)  # tau = 0: the all-positive tree
    assert_plots(out["figure"], tmp_path)


def test_pareto_front_example(tmp_path):
    out = load_example("08_pareto_front").main(verbose=False)
    assert out["pairs"] == [(0, 6), (2, 5), (4, 3), (5, 2), (6, 1), (9, 0)]
    assert out["from_front"] == out["from_dp"] == [0, 0, 1, 2, 5, 6, 6]  # = example 07's optima
    assert out["accuracy"] == out["front_accuracy"] == 6
    assert out["f1"] in out["pairs"]  # the F1 optimum is a point of the front
    assert_plots(out["figure"], tmp_path)


def test_contree_example(tmp_path):
    out = load_example("09_contree").main(verbose=False)
    assert out["errors"] == {"DP, decile buckets": 98, "CART (greedy)": 33, "ConTree": 22, "DP, every midpoint": 22}
    assert_plots(out["figure"], tmp_path)


@pytest.mark.highs
def test_dp_bounds_example(tmp_path):
    out = load_example("10_dp_bounds").main(verbose=False)
    names = ("gunluk", "binoct", "oct")
    assert all(abs(out["lp_plain"][n]) < 1e-6 for n in names)  # every relaxation: 0 errors
    assert all(out["lp_root"][n] == pytest.approx(96) for n in names)  # with the root's row: the optimum
    assert all(min(out["root_bounds"][n]) == 96 for n in names)
    assert out["proved_by"] == dict.fromkeys(names, "lp") and out["errors"] == dict.fromkeys(names, 96)
    assert out["tic_tac_toe_depth3_lp"] == pytest.approx(216)
    assert_plots(out["figure"], tmp_path)


def test_every_example_has_a_test():
    tested = {"01_gunluk_teaching", "02_compare_formulations", "03_lp_bound", "04_warm_start", "05_oct_hole",
              "06_binoct_trie", "07_sensitivity", "08_pareto_front", "09_contree", "10_dp_bounds",
              "11_fair_tree"}
    assert {p.stem for p in EXAMPLES.glob("[0-9]*.py")} == tested


def test_encodings_page_example():
    """The column names docs/encodings.rst shows for its small example."""
    X = pd.DataFrame({"colour": pd.Categorical(["red", "blue", "green", "red", "blue", None]),
                      "age": [23, 35, np.nan, 51, 44, 30],
                      "smoker": [0, 1, 0, 1, 1, 0]})
    y = ["no", "yes", "no", "yes", "yes", "no"]
    assert [c.name for c in odtmip.Dataset(X, y, n_buckets=3).columns] == [
        "colour=blue", "colour=green", "colour=red", "colour=<missing>",
        "age in (-inf, 30]", "age in (30, 35]", "age in (35, inf)", "age is missing", "smoker"]
    assert [c.name for c in odtmip.Dataset(X, y, numeric="thresholds").columns] == [
        "colour=blue", "colour=green", "colour=red", "colour=<missing>",
        "age>26.5", "age>32.5", "age>39.5", "age>47.5", "age is missing", "smoker"]


@pytest.mark.highs
@pytest.mark.slow
def test_fair_tree_example(tmp_path):
    out = load_example("11_fair_tree").main(verbose=False, depths=(2,))
    assert out["free"][2][0] == 24
    assert out["errors"][2] == [57, 43, 34, 34, 33]  # the proven optima under max_gap = 0, 0.05, ..., 0.2
    assert out["status"][2] == ["optimal"] * 5
    gaps = load_example("11_fair_tree").GAPS
    assert all(g <= bound + 1e-12 for g, bound in zip(out["gaps"][2], gaps, strict=True))
    assert_plots(out["figure"], tmp_path)
