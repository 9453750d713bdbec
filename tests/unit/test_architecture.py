"""The import contract of docs/ARCHITECTURE.md, read from the source files' import statements.

* nothing under ``odtmip/dp`` imports Pyomo or highspy (the DP installs and runs without the MIP stack);
* only the HiGHS runner (``odtmip/models/_highs.py``) imports ``highspy``;
* nothing under ``odtmip/models`` imports ``odtmip.dp``: the engines meet one floor up (``odtmip.pipeline``);
* the examples import no private module (a name starting with ``_``);
* every registered formulation is a module of its own under ``odtmip/models`` that ends with its record.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "odtmip"


def imported_modules(path: Path) -> set[str]:
    """Every module named by an import statement of the file, at any depth (lazy imports included)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def sources(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def offending(files: list[Path], forbidden) -> dict[str, list[str]]:
    found = {}
    for path in files:
        bad = sorted(name for name in imported_modules(path) if forbidden(name))
        if bad:
            found[str(path.relative_to(ROOT))] = bad
    return found


def starts(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_the_dp_never_imports_the_mip_stack():
    assert offending(sources(PACKAGE / "dp"), lambda n: starts(n, "pyomo", "highspy", "odtmip.models")) == {}


def test_only_the_highs_runner_imports_highspy():
    runner = {PACKAGE / "models" / "_highs.py", PACKAGE / "models" / "_highs_run.py"}
    files = [p for p in sources(PACKAGE) if p not in runner]
    assert offending(files, lambda n: starts(n, "highspy")) == {}


def test_the_child_process_half_of_the_runner_needs_no_odtmip():
    # The child runs _highs_run.py as a script: importing odtmip there would cost 1.5 s per run (or fail).
    imported = imported_modules(PACKAGE / "models" / "_highs_run.py")
    assert {n.split(".")[0] for n in imported} <= {"__future__", "dataclasses", "math", "numpy", "os", "pickle",
                                                   "sys", "tempfile", "time", "traceback", "typing", "highspy"}


def test_the_models_never_import_the_dp():
    assert offending(sources(PACKAGE / "models"), lambda n: starts(n, "odtmip.dp")) == {}


def test_examples_import_no_private_module():
    def private(name: str) -> bool:
        return starts(name, "odtmip") and any(part.startswith("_") for part in name.split("."))

    assert offending(sources(ROOT / "examples"), private) == {}


def test_the_checker_sees_lazy_imports(tmp_path):
    # the contract covers imports inside functions too (the DP is imported lazily where it is used)
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from odtmip.dp import solve_dp\n    import highspy\n")
    assert {"odtmip.dp", "odtmip.dp.solve_dp", "highspy"} <= imported_modules(probe)


@pytest.mark.parametrize("name", ["gunluk", "binoct", "oct", "oct-h"])
def test_every_formulation_is_registered_from_its_own_module(name):
    from odtmip.models import FORMULATIONS

    f = FORMULATIONS[name]
    module = f.solve.__module__
    assert module.startswith("odtmip.models.") and module == f.build.__module__ == f.decode.__module__
    assert f.name == name
