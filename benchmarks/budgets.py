"""Whole-call time limits: every kind of run under one time limit, as a user runs it, with a cold kernel cache, on
a quiet machine and beside a CPU-bound load.

Usage::

    python benchmarks/budgets.py                                 # every run, 10 s, quiet and loaded
    python benchmarks/budgets.py --runs dp gunluk --time-limit 5 --load 0 4

Each run is the real ``odtmip ... --time-limit L`` in a fresh process whose numba cache folder is new and empty
(``NUMBA_CACHE_DIR``: the first run on a new machine, which must not wait for a compile), on generated CSV files
where the limit binds (12 numeric columns, labels from a noisy rule). Timed is the whole process, from its start to
its exit: the interpreter's start, imports, reading and typing the data, the encoding, the kernels, the search or
the model, verification and output. With ``--load N`` the script starts N CPU-bound processes first (each stops by
itself after ``--load-seconds``, and all are stopped when the runs end). Printed per run: status, objective,
bound, wall time, peak resident memory and whether the wall time meets the target, ``L x 1.1 + 1 s`` on a quiet
machine and ``L x 1.5 + 2 s`` under load. Nothing is asserted; the table is the result.
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

ODTMIP = [sys.executable, "-m", "odtmip.cli"]

#: name -> (rows of the data, the command's arguments after the data file); each binds at a limit of a few seconds
RUNS = {
    "dp": (10_000, ["fit", "--depth", "5", "--numeric", "buckets"]),
    "contree": (10_000, ["fit", "--solver", "contree", "--depth", "3"]),
    "metric": (10_000, ["fit", "--metric", "f1", "--depth", "4", "--numeric", "buckets"]),
    "front": (10_000, ["front", "--depth", "4", "--numeric", "buckets"]),
    "gunluk": (2_000, ["fit", "--solver", "gunluk", "--depth", "3", "--numeric", "buckets"]),
    "binoct": (2_000, ["fit", "--solver", "binoct", "--depth", "3", "--numeric", "buckets"]),
    "oct": (2_000, ["fit", "--solver", "oct", "--depth", "3", "--numeric", "buckets"]),
    "check": (2_000, ["check", "--model", "gunluk", "--depth", "3", "--numeric", "buckets"]),
    "compare": (2_000, ["compare", "--solvers", "gunluk", "--depth", "3", "--no-progress"]),
}


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


def timed(cmd: list[str], env: dict) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall seconds, peak resident MiB, the finished process) of ``cmd``; the peak is that child's (``os.wait4``:
    the largest of it and the processes it waited for), the output read by two threads meanwhile."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    with ThreadPoolExecutor(2) as pool:
        out, err = pool.submit(proc.stdout.read), pool.submit(proc.stderr.read)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        done = subprocess.CompletedProcess(cmd, proc.returncode, out.result(), err.result())
    return wall, usage.ru_maxrss / 1024, done


def start_load(n: int, seconds: float) -> list[subprocess.Popen]:
    """``n`` CPU-bound processes, each stopping by itself after ``seconds``."""
    spin = f"import time\nend = time.time() + {seconds}\nwhile time.time() < end:\n    pass"
    return [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(n)]


def outcome(name: str, done: subprocess.CompletedProcess) -> dict:
    """Status, objective and bound from a run's JSON (or Markdown, for compare)."""
    if done.returncode not in (0, 1):
        lines = done.stderr.strip().splitlines()
        return {"status": f"exit {done.returncode}", "reason": lines[-1][:100] if lines else ""}
    if name == "compare":
        return {"status": "done"}
    res = json.loads(done.stdout)
    if name == "check":
        res = res["mip"]
    if name == "front":
        return {"status": res["status"], "objective": len(res["front"]), "bound": None}
    return {"status": res["status"], "objective": res["objective"], "bound": res["bound"]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", nargs="+", default=list(RUNS), choices=list(RUNS))
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--load", nargs="+", type=int, default=[0, 4], help="CPU-bound processes beside the runs")
    ap.add_argument("--load-seconds", type=float, default=1800.0)
    args = ap.parse_args(argv)
    limit = args.time_limit
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        files = {n: write_data(Path(tmp), n) for n in {RUNS[name][0] for name in args.runs}}
        for load in args.load:
            spinners = start_load(load, args.load_seconds)
            target = limit * 1.1 + 1.0 if load == 0 else limit * 1.5 + 2.0
            try:
                for name in args.runs:
                    n, argv_ = RUNS[name]
                    cache = Path(tempfile.mkdtemp(dir=tmp))  # a new machine's empty kernel cache
                    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
                    cmd = [*ODTMIP, argv_[0], str(files[n]), *argv_[1:], "--time-limit", str(limit)]
                    if name != "compare":
                        cmd.append("--json")
                    wall, peak, done = timed(cmd, env)
                    row = {"run": name, "rows": n, "load": load, "limit": limit, **outcome(name, done),
                           "wall": round(wall, 2), "peak_mib": round(peak), "target": round(target, 1),
                           "within": wall <= target}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
            finally:
                for p in spinners:
                    p.kill()
                    p.wait()
    table = pd.DataFrame(rows)
    cols = [c for c in ["run", "rows", "load", "status", "objective", "bound", "limit", "wall", "target", "within",
                        "peak_mib", "reason"] if c in table]
    print()
    print(table[cols].to_string(index=False))
    for load, part in table.groupby("load"):
        print(f"load {load}: {int(part['within'].sum())} of {len(part)} runs within the target; "
              f"wall / limit median {np.median(part['wall'] / limit):.2f}, worst {np.max(part['wall'] / limit):.2f}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
