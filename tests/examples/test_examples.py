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


def test_every_example_has_a_test():
    tested = {"01_gunluk_teaching"}
    assert {p.stem for p in EXAMPLES.glob("[0-9]*.py")} == tested
