"""What the peer benchmarks share: the data folder, installed solvers, one run per subprocess, JIT timing.

The scripts beside this file import it (``python benchmarks/<script>.py`` puts this folder on the path).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def data_folder(cli: str | None) -> Path:
    """``--data``, ``$ODTMIP_DATA`` or ``shared/datasets`` beside the repository (:func:`odtmip.datasets.data_dir`).

    Imported here, not at the top: the workers of the C++ peers import this module too, and their memory is
    measured.
    """
    from odtmip.datasets import data_dir
    from odtmip.exceptions import DataError

    try:
        folder = data_dir(cli)
    except DataError as exc:
        sys.exit(str(exc))
    if folder is None:
        sys.exit("benchmark datasets folder not found: pass --data or set ODTMIP_DATA")
    return folder


def dataset_path(folder: Path, name: str) -> Path | None:
    """The DL8.5-format file ``binary/<name>.txt`` (or ``.txt.gz``) in the data folder, None when absent."""
    for cand in (folder / "binary" / f"{name}.txt", folder / "binary" / f"{name}.txt.gz"):
        if cand.exists():
            return cand
    return None


def installed(module: str) -> bool:
    """Whether ``module`` imports, probed in a subprocess so that a failing import cannot disturb this one."""
    return subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode == 0


def run_worker(script: str, solver: str, args: list[str], limit: float) -> dict:
    """``script --worker solver *args`` in a fresh interpreter; its last output line is the JSON result."""
    cmd = [sys.executable, script, "--worker", solver, *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=limit * 3 + 120)
    except subprocess.TimeoutExpired:
        return {"solver": solver, "error": "killed after 3 x the time limit"}
    if proc.returncode != 0:
        return {"solver": solver, "error": proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fresh_compile_seconds() -> float:
    """Compile time of the kernels with numba's disk cache off, in a subprocess."""
    code = "from odtmip.dp import warm_up; print(warm_up())"
    env = dict(os.environ, ODTMIP_NUMBA_CACHE="0")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    return float(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else float("nan")
