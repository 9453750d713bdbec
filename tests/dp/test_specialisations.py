"""Every kernel compiles once per record type, and a recursive kernel calls itself from one place (see
:mod:`odtmip.dp._kernels._common`): a literal argument would make numba compile its callee again, and every
recursive call site is typed once more, which costs first-run time and nothing else."""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import odtmip.dp._kernels as kernels

_PROBE = """
import json, numba
import odtmip.dp.contree as C, odtmip.dp.pareto as P, odtmip.dp.solver as S
from odtmip.dp._kernels import _cache, _common, _contree, _depth2, _pareto, _search
S.warm_up(); C.warm_up(); P._warm_up_pareto()
out, seen = {}, set()
for mod in (_cache, _common, _contree, _depth2, _pareto, _search):
    for name in dir(mod):
        d = getattr(mod, name)
        if isinstance(d, numba.core.registry.CPUDispatcher) and id(d) not in seen:
            seen.add(id(d))
            out[f"{mod.__name__.rsplit('.', 1)[1]}.{name}"] = [[str(a) for a in sig] for sig in d.signatures]
print(json.dumps(out))
"""


def test_every_kernel_compiles_once_per_record_type():
    # a fresh compile (the disk cache off): a kernel loaded from the cache does not type its callees again
    env = dict(os.environ, ODTMIP_NUMBA_CACHE="0")
    proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    signatures = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(signatures) > 100  # the probe saw the kernels
    repeated = {name: sigs for name, sigs in signatures.items() if len(sigs) > 1}
    # the clock check reads each engine's own parameter record: one signature per record type
    clock = repeated.pop("_common.check_clock", [])
    assert len({sig[1].split("(")[0] for sig in clock}) == len(clock)
    assert repeated == {}, "compiled more than once (a literal argument?): " + ", ".join(
        f"{name} {[s for sig in sigs for s in sig if 'Literal' in s]}" for name, sigs in repeated.items())


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
