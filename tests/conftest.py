"""Shared fixtures: a seed, and the benchmark data folder (tests that need it skip when it is absent)."""

import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np
import pytest

NO_DATA = "benchmark datasets folder not found (set ODTMIP_DATA)"


def pytest_report_header(config):
    """The versions of the solver stack this run uses (CI runs the suite at both ends of the declared ranges)."""
    found = []
    for name in ("highspy", "pyomo", "numpy", "numba", "pandas", "scikit-learn"):
        try:
            found.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            found.append(f"{name} missing")

    return "odtmip stack: " + ", ".join(found)


def shared_data_dir() -> Path | None:
    """$ODTMIP_DATA, else ../shared/datasets beside the repository, else None."""
    env = os.environ.get("ODTMIP_DATA")
    if env:
        return Path(env) if Path(env).is_dir() else None
    candidate = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
    return candidate if candidate.is_dir() else None


@pytest.fixture
def seed() -> int:
    """The seed of randomised tests (scikit-learn style): 42."""
    return 42


@pytest.fixture
def rng(seed) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The benchmark data folder; skips the test when it is absent."""
    path = shared_data_dir()
    if path is None:
        pytest.skip(NO_DATA)
    return path


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels():
    """Compile (or load from numba's cache) the DP kernels once, so no single test carries the JIT time."""
    from odtmip.dp import warm_up

    warm_up()
