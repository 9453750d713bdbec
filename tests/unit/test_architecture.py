"""The import contract of docs/ARCHITECTURE.md, read from the source files' import statements.

* the folders are layers: ``odtmip/core`` (the data model), the engines ``odtmip/dp`` and ``odtmip/models`` (with
  ``odtmip/constraints.py``, the public name of ``odtmip.models.constraints``),
  ``odtmip/solving`` (where they meet), and the interfaces ``odtmip/cli`` and ``odtmip/estimator.py``; no module
  imports from a layer above its own, and no modules import each other in a circle (lazy imports count);
* nothing under ``odtmip/dp`` imports Pyomo or highspy (the DP installs and runs without the MIP stack);
* only the HiGHS runner (``odtmip/models/_highs.py``) imports ``highspy``;
* nothing under ``odtmip/models`` imports ``odtmip.dp``: the engines meet one floor up (``odtmip.solving.pipeline``);
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


#: The layers, lowest first; a module may import from its own layer and the ones below.
LAYERS = {"odtmip.core": 0, "odtmip.dp": 1, "odtmip.models": 1, "odtmip.constraints": 1, "odtmip.solving": 2,
          "odtmip.cli": 3, "odtmip.estimator": 3}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> int | None:
    """The layer of an odtmip module (None: the package itself)."""
    return next((n for prefix, n in LAYERS.items() if starts(module, prefix)), None)


def import_graph() -> dict[str, set[str]]:
    """``{module: the odtmip modules it imports}`` at any depth; ``from package import module`` imports that module
    (not the package), ``from module import name`` the module."""
    modules = {module_name(p): p for p in sources(PACKAGE)}
    graph = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                targets.update(f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in modules
                               else node.module for alias in node.names)
        graph[name] = {target for target in targets if target in modules and target != name}
    return graph


def test_every_module_has_a_layer():
    assert [m for m in import_graph() if m != "odtmip" and layer(m) is None] == []


def test_no_import_climbs_a_layer():
    climbing = {module: sorted(t for t in targets if t != "odtmip" and layer(t) > layer(module))
                for module, targets in import_graph().items() if module != "odtmip"}
    assert {m: t for m, t in climbing.items() if t} == {}


def test_the_modules_import_each_other_in_no_circle():
    graph = import_graph()
    circles = []
    index, low, stack, on_stack = {}, {}, [], set()

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    assert circles == []


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
    module = f.build.__module__
    assert module.startswith("odtmip.models.") and module == f.decode.__module__ == f.embed.__module__
    assert f.name == name
