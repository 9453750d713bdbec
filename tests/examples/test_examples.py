"""Every example runs and reproduces the optimum its docstring documents, so teaching code never rots."""

import importlib.util
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.highs
def test_gunluk_teaching_example():
    out = load_example("01_gunluk_teaching").main(verbose=False)
    assert out["lp_value"] == pytest.approx(14)  # the LP relaxation "classifies" all 14 days
    assert out["cold"] == out["warm"] == out["dp"] == 2
    assert out["accepted"] is True


@pytest.mark.highs
@pytest.mark.slow
def test_compare_formulations_example():
    out = load_example("02_compare_formulations").main(verbose=False)
    assert out["optimum"] == {"monk1": 20, "tic-tac-toe": 22}
    assert out["misclassifications"] == {"monk1": [20], "tic-tac-toe": [22]}  # every run ends at the DP's optimum
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


def test_every_example_has_a_test():
    tested = {"01_gunluk_teaching", "02_compare_formulations"}
    assert {p.stem for p in EXAMPLES.glob("[0-9]*.py")} == tested
