"""Start-up: which heavy libraries ``import odtmip`` and each command load, in a fresh interpreter (modules, never
seconds: ``benchmarks/startup.py`` measures the seconds).

``odtmip --version`` and ``odtmip fit --help`` answer from the tables of solvers and options, which import no
engine; a DP fit loads numba and nothing of the MIP stack, scikit-learn or matplotlib; a MIP fit loads Pyomo and
HiGHS too. Numbers given as numpy arrays are solved without pandas (about 75 MB of memory, with pyarrow).
"""

import json
import subprocess
import sys

import pytest

#: The libraries a command should load only when it needs them.
HEAVY = ("numpy", "pandas", "numba", "scipy", "pyomo", "highspy", "sklearn", "matplotlib", "joblib")

PROBE = """
import json, sys
{code}
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.__stderr__)
"""


def loaded(code: str) -> set[str]:
    """The heavy modules a fresh interpreter holds after running ``code``."""
    done = subprocess.run([sys.executable, "-c", PROBE.format(code=code, heavy=HEAVY)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def command(*argv: str) -> str:
    """Code that runs ``odtmip ARGV`` in the probing interpreter (``--help`` and ``--version`` exit)."""
    return f"from odtmip.cli import main\ntry:\n    main({list(argv)!r})\nexcept SystemExit:\n    pass"


def test_import_odtmip_loads_no_heavy_library():
    assert loaded("import odtmip") == set()


@pytest.mark.parametrize("argv", [["--version"], ["fit", "--help"], ["check", "--help"], ["--help"]])
def test_the_version_and_the_help_load_no_heavy_library(argv):
    assert loaded(command(*argv)) == set()


def test_the_public_names_load_what_they_need():
    assert loaded("from odtmip import Tree, Dataset, solve, SOLVERS") == {"numpy"}


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["dp", "contree"])
def test_a_solve_on_arrays_of_numbers_loads_no_pandas(solver):
    code = ("import numpy as np\nfrom odtmip import Dataset, solve\n"
            "X = np.random.default_rng(0).normal(size=(60, 3)).round(1)\n"
            f"res = solve(Dataset(X, (X[:, 0] > 0.2).astype(int)), {solver!r}, max_depth=2)\n"
            "assert res.optimal and res.objective == 0 and res.tree.predict(X).tolist() == (X[:, 0] > 0.2).tolist()")
    assert "pandas" not in loaded(code)


@pytest.mark.slow
def test_a_dp_fit_loads_numba_and_nothing_of_the_mip_stack():
    assert loaded(command("fit", "monk1", "--depth", "2", "--json")) == {"numpy", "pandas", "numba", "scipy"}


@pytest.mark.slow
@pytest.mark.highs
def test_a_mip_fit_loads_pyomo_and_highs():
    used = loaded(command("fit", "monk1", "--solver", "gunluk", "--depth", "1", "--json"))
    assert {"pyomo", "highspy", "numba"} <= used and not {"sklearn", "matplotlib", "joblib"} & used
