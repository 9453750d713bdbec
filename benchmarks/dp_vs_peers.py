"""odtmip's DP against STreeD (pystreed) and DL8.5 (pydl8.5) on the binary DL8.5-format datasets.

Usage::

    python benchmarks/dp_vs_peers.py                       # default datasets, depths 2 3 4, 600 s per run
    python benchmarks/dp_vs_peers.py --datasets anneal vehicle --depths 3 4 --time-limit 60

Every run (one solver, one dataset, one depth) is a fresh subprocess, so peak memory can be measured for the
C++ solvers too: the worker reports ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` (peak resident set of
the whole process, imports included, so it has a baseline of the interpreter plus numpy/numba or the
extension module; tracemalloc would miss C++ allocations). Times are wall-clock seconds of the solve call
only: ``solve_dp`` (including odtmip's column preprocessing, excluding the Dataset construction) and
``fit`` for the peers (including their own data conversion). odtmip's kernels are compiled or loaded from
the numba disk cache before the clock starts; the load time per worker and a fresh compile time (numba
disk cache off, one extra subprocess) are printed separately.

All solvers minimise training misclassifications at the given depth with the full node budget
(2^d - 1); the script checks that every finished run reports the same optimum. It never asserts on time.
Peers that are not installed are reported as such and skipped.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

from _peers import Table, data_folder, dataset_path, fresh_compile_seconds, installed, run_worker

DEFAULT_DATASETS = [
    "anneal", "audiology", "australian-credit", "breast-wisconsin", "diabetes", "german-credit",
    "heart-cleveland", "hepatitis", "hypothyroid", "kr-vs-kp", "lymph", "primary-tumor", "soybean",
    "tic-tac-toe", "vehicle", "vote", "yeast",
]
SOLVERS = ("odtmip", "streed", "dl85")


# ----------------------------------------------------------------------------------------------- worker
def worker(solver: str, path: str, depth: int, limit: float) -> dict:
    """One run in this process; returns seconds, training errors, whether optimality was proven, memory."""
    import resource

    import numpy as np

    A = np.loadtxt(path, dtype=np.int64)
    y, X = A[:, 0], A[:, 1:]
    out: dict = {"solver": solver}
    if solver == "odtmip":
        from odtmip.data import Dataset
        from odtmip.dp import solve_dp, warm_up

        out["load_seconds"] = warm_up()
        ds = Dataset(X, y)
        t0 = time.perf_counter()
        res = solve_dp(ds, depth, time_limit=limit)
        out["seconds"] = time.perf_counter() - t0
        out["errors"] = float(res.objective)
        out["optimal"] = res.optimal
    elif solver == "streed":
        from pystreed import STreeDClassifier

        model = STreeDClassifier(max_depth=depth, time_limit=limit, cost_complexity=0.0)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
        out["seconds"] = time.perf_counter() - t0
        out["errors"] = float((model.predict(X) != y).sum())
        out["optimal"] = out["seconds"] < limit
    else:
        from pydl85 import DL85Classifier

        model = DL85Classifier(max_depth=depth, time_limit=limit)
        t0 = time.perf_counter()
        model.fit(X, y)
        out["seconds"] = time.perf_counter() - t0
        out["errors"] = float((model.predict(X) != y).sum())
        out["optimal"] = not getattr(model, "timeout_", False)
    out["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return out


def available(solver: str) -> bool:
    return installed({"odtmip": "odtmip.dp", "streed": "pystreed", "dl85": "pydl85"}[solver])


def run(solver: str, path: Path, depth: int, limit: float) -> dict:
    return run_worker(__file__, solver, [str(path), str(depth), str(limit)], limit)


# ----------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=DEFAULT_DATASETS, help="names in <data>/binary")
    parser.add_argument("--depths", nargs="+", type=int, default=[2, 3, 4])
    parser.add_argument("--time-limit", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--data", default=None, help="data folder (default $ODTMIP_DATA or ../shared/datasets)")
    parser.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=SOLVERS)
    parser.add_argument("--worker", nargs=4, metavar=("SOLVER", "PATH", "DEPTH", "LIMIT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        solver, path, depth, limit = args.worker
        print(json.dumps(worker(solver, path, int(depth), float(limit))))
        return 0

    folder = data_folder(args.data)
    solvers = []
    for s in args.solvers:
        if available(s):
            solvers.append(s)
        else:
            print(f"{s}: not installed, skipped")
    if "odtmip" in solvers:
        print(f"odtmip JIT compile (fresh, numba disk cache off): {fresh_compile_seconds():.1f} s")
    table = Table("streed", 1e-6)
    header = f"{'dataset':<20}{'d':>3}  " + "".join(f"{s + ' s':>11}{'MB':>7}" for s in solvers)
    header += f"{'errors':>9}{'ratio':>8}"
    print(header)
    print("-" * len(header))
    for name in args.datasets:
        path = dataset_path(folder, name)
        if path is None:
            print(f"{name}: not found in {folder / 'binary'}")
            continue
        for depth in args.depths:
            table.add(f"{name:<20}", depth, {s: run(s, path, depth, args.time_limit) for s in solvers})
    table.summary()
    return 0


if __name__ == "__main__":
    sys.exit(main())
