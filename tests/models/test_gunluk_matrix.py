"""The Günlük model built with Pyomo (routing rows as LinearRows) is row for row the matrix that the build
benchmark assembles independently with numpy, and both give the same LP and MIP values."""

import importlib.util
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def mip_build():
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "mip_build.py"
    spec = importlib.util.spec_from_file_location("mip_build", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pyomo_model_equals_the_direct_numpy_build(mip_build, capsys):
    assert mip_build.check_same_model(n=150, mip_n=80, mip_seconds=60.0)
    out = capsys.readouterr().out
    assert "same rows up to order/sign True" in out and "DIFFER" not in out
