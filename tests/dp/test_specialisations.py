"""What the first run in an environment compiles, and when. Every kernel compiles once per record type, and a
recursive kernel calls itself from one place (see :mod:`odtmip.dp._kernels._common`): a literal argument would make
numba compile its callee again, and every recursive call site is typed once more, which costs first-run time and
nothing else. Each engine's warm-up compiles what its solves run and no more, before their clock starts."""

import ast
import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import odtmip.dp._kernels as kernels
from odtmip.core.data import Dataset
from odtmip.core.results import Status
from odtmip.dp import DPOptions, solve_contree, solve_dp

# In a fresh process: each engine's warm-up, then that engine's solves over its options, limits, weights and stops;
# the kernels each warm-up compiled, those its solves compiled after it, and every kernel's signatures.
_PROBE = """
import json, numba
import numpy as np
from odtmip.core.data import Dataset
from odtmip.dp import ContreeOptions, DPOptions, ParetoOptions, solve_contree, solve_dp
import odtmip.dp.contree as C, odtmip.dp.pareto as P, odtmip.dp.solver as S
from odtmip.dp._kernels import _cache, _common, _contree, _depth2, _pareto, _search

def signatures():  # each kernel under the module that defines it
    out = {}
    for mod in (_cache, _common, _contree, _depth2, _pareto, _search):
        for name in dir(mod):
            d = getattr(mod, name)
            if isinstance(d, numba.core.registry.CPUDispatcher) and d.py_func.__module__ == mod.__name__:
                out[f"{mod.__name__.rsplit('.', 1)[1]}.{name}"] = [[str(a) for a in sig] for sig in d.signatures]
    return out

rng = np.random.default_rng(0)
X = rng.integers(0, 2, size=(120, 7))
y = (X[:, 0] ^ X[:, 1] | (rng.random(120) < 0.2)).astype(int)
data = [Dataset(X, y), Dataset(X, y, rng.random(120) + 0.5)]
Xc = rng.random((80, 3))
numeric = [Dataset(Xc, rng.integers(0, 3, 80)), Dataset(Xc, rng.integers(0, 2, 80), rng.random(80) + 0.5)]

def pareto_solves():
    for ds in data:
        for metric in ("f1", "mcc"):
            solve_dp(ds, 3, metric=metric)
        solve_dp(ds, 3, min_sensitivity=0.8)
        solve_dp(ds, 3, metric="f1", pareto_options=ParetoOptions(depth_two=False, lookahead=False))
        solve_dp(ds, 5, metric="f1", time_limit=1e-3)

def dp_solves():
    compiled = DPOptions(engine="compiled")  # (small problems go to the pairwise engine, which compiles nothing)
    for ds in data:
        solve_dp(ds, 4, options=compiled)
        solve_dp(ds, 3, max_nodes=4, min_leaf=5, options=compiled)
        solve_dp(ds, None, leaf_penalty=0.01)
        solve_dp(ds, 6, time_limit=1e-3)
        for options in (DPOptions(cache="branch"), DPOptions(cache=None), DPOptions(counting="frequency"),
                        DPOptions(depth_two=False, similarity=False, fewest_nodes=False)):
            solve_dp(ds, 3, options=options)

def contree_solves():
    for ds in numeric:
        solve_contree(ds, 3)
        solve_contree(ds, 2, threads=2)
        solve_contree(ds, 2, min_leaf=3, penalty=0.01)
        solve_contree(ds, 4, time_limit=1e-3)
        solve_contree(ds, 3, options=ContreeOptions(depth_two=False, cache=False))

out = {}
for engine, warm_up, solves in (("pareto", P._warm_up_pareto, pareto_solves), ("dp", S.warm_up, dp_solves),
                                ("contree", C.warm_up, contree_solves)):
    warm_up()
    before = signatures()
    out[engine + " warm-up"] = sorted(name for name, sigs in before.items() if sigs)
    solves()
    out[engine + " solves"] = sorted(name for name, sigs in signatures().items() if sigs != before[name])
out["signatures"] = signatures()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def probe() -> dict:
    # a fresh compile (the disk cache off): a kernel loaded from the cache does not type its callees again
    env = dict(os.environ, ODTMIP_NUMBA_CACHE="0")
    proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_every_kernel_compiles_once_per_record_type(probe):
    signatures = probe["signatures"]
    assert len(signatures) > 100  # the probe saw the kernels
    repeated = {name: sigs for name, sigs in signatures.items() if len(sigs) > 1}
    # the clock check reads each engine's own parameter record: one signature per record type
    clock = repeated.pop("_common.check_clock", [])
    assert len({sig[1].split("(")[0] for sig in clock}) == len(clock)
    assert repeated == {}, "compiled more than once (a literal argument?): " + ", ".join(
        f"{name} {[s for sig in sigs for s in sig if 'Literal' in s]}" for name, sigs in repeated.items())


@pytest.mark.parametrize("engine", ["pareto", "dp", "contree"])
def test_a_solve_compiles_nothing_its_warm_up_did_not(probe, engine):
    # so no solve compiles inside its clock, whatever its options, weights or stop
    assert probe[engine + " solves"] == []


def test_a_front_search_does_not_compile_the_dp_search(probe):
    # each engine compiles what it runs: the Pareto front needs the DP's encoding, not its search
    first = set(probe["pareto warm-up"])
    assert "_pareto.solve_front" in first
    assert not {"_search.solve_node", "_search.split_bound"} & first
    assert not any(name.startswith(("_depth2.", "_contree.")) for name in first)


def test_recursive_kernels_call_themselves_once():
    calls = {}
    for path in Path(kernels.__file__).parent.glob("*.py"):
        for fn in ast.walk(ast.parse(path.read_text())):
            if isinstance(fn, ast.FunctionDef):
                n = sum(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == fn.name
                        for c in ast.walk(fn))
                if n:
                    calls[f"{path.stem}.{fn.name}"] = n
    assert set(calls) == {"_search.solve_node", "_contree.solve_subtree", "_pareto.solve_front"}
    assert all(n == 1 for n in calls.values()), calls


@pytest.mark.parametrize("module, name, solve, numeric", [
    ("odtmip.dp.solver", "warm_up", lambda ds, **kw: solve_dp(ds, 2, options=DPOptions(engine="compiled"), **kw),
     False),
    ("odtmip.dp.pareto", "_warm_up_pareto", lambda ds, **kw: solve_dp(ds, 2, metric="f1", **kw), False),
    ("odtmip.dp.contree", "warm_up", lambda ds, **kw: solve_contree(ds, 2, **kw), True),
])
def test_compile_time_is_reported_and_counted_in_the_call(module, name, solve, numeric, monkeypatch):
    # a time limit covers the whole call: loading (or compiling) the kernels is part of the call's seconds, and is
    # reported as compile_seconds too
    mod = importlib.import_module(module)
    getattr(mod, name)()  # this process's kernels, compiled or loaded
    calls = []

    def first_run() -> float:  # a first run: one second of loading the kernels, once
        calls.append(1)
        if len(calls) > 1:
            return 0.0
        time.sleep(1.0)
        return 1.0

    monkeypatch.setattr(mod, name, first_run)
    rng = np.random.default_rng(3)
    X = rng.random((40, 2)) if numeric else rng.integers(0, 2, size=(40, 3))
    t0 = time.perf_counter()
    res = solve(Dataset(X, (X[:, 0] > 0.5).astype(int) ^ (rng.random(40) < 0.1)), time_limit=600.0)
    assert res.status is Status.OPTIMAL and res.stats["compile_seconds"] == 1.0
    assert 1.0 <= res.seconds <= time.perf_counter() - t0  # the load is the call's time


def _is_kernel(fn: ast.FunctionDef) -> str | None:
    """``"internal"`` for a kernel compiled with ``**INTERNAL`` (no Python wrapper), ``"kernel"`` for another
    kernel, None for a Python function."""
    for d in fn.decorator_list:
        text = ast.unparse(d)
        if text.startswith("njit"):
            return "internal" if "INTERNAL" in text else "kernel"
    return None


def test_internal_kernels_are_never_called_from_python():
    # numba builds an INTERNAL kernel no Python wrapper: a call from Python would crash the interpreter, not raise
    root = Path(__file__).parents[2]  # the project's source tree, also when the package is installed elsewhere
    internal = {fn.name for path in (root / "odtmip" / "dp" / "_kernels").glob("*.py")
                for fn in ast.walk(ast.parse(path.read_text()))
                if isinstance(fn, ast.FunctionDef) and _is_kernel(fn) == "internal"}
    assert len(internal) > 40
    # a module's interpreter forms (INTERPRETED_FORMS) run only among the interpreted kernels, where each kernel
    # they call is a Python function
    forms = {value.value for path in (root / "odtmip" / "dp" / "_kernels").glob("*.py")
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "INTERPRETED_FORMS" for t in node.targets)
             for value in node.value.values}
    assert forms == {"_compact_numpy", "_pairs_binary_numpy", "_hash_key_ints", "_depth_two_front_numpy",
                     "_subtract_numpy", "_allowed_numpy", "_infeasible_merge_numpy", "_maximal_numpy",
                     "_class_weights_numpy", "_removed_weights_numpy", "_class_counts_bits", "_weight_minus_bits",
                     "_masked_weight_bits", "_cart_thresholds_numpy"}
    called = set()

    def visit(node, in_kernel):
        if isinstance(node, ast.FunctionDef):
            in_kernel = _is_kernel(node) is not None or node.name in forms
        if not in_kernel and isinstance(node, (ast.Name, ast.Attribute)):
            called.add((node.id if isinstance(node, ast.Name) else node.attr, str(path.relative_to(root))))
        for child in ast.iter_child_nodes(node):
            visit(child, in_kernel)

    files = [p for folder in ("odtmip", "tests", "benchmarks", "examples") for p in (root / folder).rglob("*.py")]
    assert len(files) > 50
    for path in files:
        visit(ast.parse(path.read_text()), False)
    assert sorted((name, where) for name, where in called if name in internal) == []
