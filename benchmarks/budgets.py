"""Whole-call budgets: every solver x data of 10^3 to 10^5 rows under one time limit, as a user runs it.

Usage::

    python benchmarks/budgets.py                                  # all solvers, 1e3 1e4 1e5 rows, 10 s, depth 3
    python benchmarks/budgets.py --solvers dp oct --rows 1000 8000 --time-limit 30 --depth 4

Each run is the real ``odtmip fit FILE --solver S --depth D --time-limit L --json`` in a subprocess, on a generated
CSV file (12 numeric columns, labels from a noisy rule; numeric columns as decile buckets). Printed per run: the
status, the objective and bound it reports, the wall time of the process minus the start-up of a process that
imports the solver stack, loads the DP's compiled kernels and reads and encodes the data (once per file), the
peak resident memory of the process, and whether ``wall - start-up <= 1.1 x limit + 1 s`` holds. A refused run
(the memory guard: exit code 2 with its one-line reason) counts as within the budget when it is refused in time.
Nothing is asserted; the table is the result.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

SOLVERS = ("dp", "gunluk", "binoct", "oct", "oct-h")
ODTMIP = [sys.executable, "-m", "odtmip.cli"]

#: A process that starts as ``fit`` does without solving: imports the solver stack (Pyomo, HiGHS), loads the DP's
#: compiled kernels, reads and encodes the file.
STARTUP = """
import sys
import odtmip.models
from odtmip import datasets
from odtmip.data import Dataset
from odtmip.dp.solver import warm_up
warm_up()
X, y = datasets.load(sys.argv[1])
Dataset(X, y, numeric="buckets")
"""


def write_data(folder: Path, n: int, seed: int = 0) -> Path:
    """``n`` rows of 12 standard-normal columns; the class is x0 + x1 x2 + noise > 0."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 12))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(size=n) > 0).astype(int)
    frame = pd.DataFrame(X.round(4), columns=[f"x{i}" for i in range(12)])
    frame["class"] = y
    path = folder / f"rows{n}.csv"
    frame.to_csv(path, index=False)
    return path


def timed(cmd: list[str]) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall seconds, peak resident MiB, the finished process) of ``cmd``; the peak is that child's (``os.wait4``:
    the largest of it and the processes it waited for, such as the child process of a time-limited HiGHS run), the
    output read by two threads meanwhile."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with ThreadPoolExecutor(2) as pool:
        out, err = pool.submit(proc.stdout.read), pool.submit(proc.stderr.read)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        done = subprocess.CompletedProcess(cmd, proc.returncode, out.result(), err.result())
    return wall, usage.ru_maxrss / 1024, done


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--solvers", nargs="+", default=list(SOLVERS))
    ap.add_argument("--rows", nargs="+", type=int, default=[1000, 10000, 100000])
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--depth", type=int, default=3)
    args = ap.parse_args(argv)
    limit = args.time_limit
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.rows:
            path = write_data(Path(tmp), n)
            startup, _, _ = timed([sys.executable, "-c", STARTUP, str(path)])
            for solver in args.solvers:
                cmd = ODTMIP + ["fit", str(path), "--solver", solver, "--depth", str(args.depth),
                                "--numeric", "buckets", "--time-limit", str(limit), "--json"]
                wall, peak, done = timed(cmd)
                row = {"rows": n, "solver": solver, "limit": limit, "startup": round(startup, 2),
                       "wall": round(wall, 2), "over_startup": round(wall - startup, 2), "peak_mib": round(peak)}
                if done.returncode == 0:
                    res = json.loads(done.stdout)
                    row.update(status=res["status"], objective=res["objective"], bound=res["bound"])
                else:
                    row.update(status=f"exit {done.returncode}", objective=None, bound=None,
                               reason=done.stderr.strip().splitlines()[-1][:100] if done.stderr.strip() else "")
                row["within"] = row["over_startup"] <= 1.1 * limit + 1.0
                rows.append(row)
                print(json.dumps(row), flush=True)
    table = pd.DataFrame(rows)
    cols = ["rows", "solver", "status", "objective", "bound", "limit", "startup", "wall", "over_startup",
            "peak_mib", "within"]
    print()
    print(table[cols].to_markdown(index=False) if _has_tabulate() else table[cols].to_string(index=False))
    print(f"\nwithin limit x 1.1 + 1 s beyond start-up: {int(table['within'].sum())} of {len(table)} runs")


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
