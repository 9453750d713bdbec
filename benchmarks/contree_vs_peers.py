"""odtmip's ConTree against pycontree (and the MurTree DP on every midpoint) on the ConTree datasets.

Usage::

    python benchmarks/contree_vs_peers.py                          # all sets, depths 2 3 4, 600 s per run
    python benchmarks/contree_vs_peers.py --datasets bank raisin --depths 2 3 --time-limit 60
    python benchmarks/contree_vs_peers.py --solvers odtmip pycontree dp   # dp: the MurTree DP on all midpoints

The data are the 16 continuous datasets of [ConTree] §7 in ``<data>/continuous`` (label first, then the
features); the train split is the first ``train_rows`` rows named in ``quantbnb_splits.csv`` (a set without a
row there is reported and skipped). Every run (one solver, one dataset, one depth) is a fresh subprocess, so
the peak resident memory (``ru_maxrss``, imports included) of the C++ peer is measured too. Times are
wall-clock seconds of the solve call only (odtmip: ``solve_contree`` without building the Dataset; pycontree:
``fit``); odtmip's kernels are compiled or loaded before the clock starts, and a fresh compile time (numba
disk cache off) is printed once. The MurTree DP on all midpoints builds one binary column per midpoint, so it
only runs where rows x midpoints stays below ``--dp-cells``.

Every solver minimises training misclassifications at depth d; the script checks that all finished runs report
the same optimum, and prints the time ratio odtmip / pycontree per run and its median per depth. It never
asserts on time.

Anytime quality (``--anytime N``, default 4): for the N sets where odtmip took longest at the deepest depth,
one more odtmip run records its progress (best objective and lower bound over time, the lines of
:mod:`odtmip.core.progress`) next to its greedy first tree and the training errors of CART (scikit-learn, same depth,
same thresholds).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

from _peers import Table, anytime_run, anytime_table, data_folder, fresh_compile_seconds, installed, run_worker

SOLVERS = ("odtmip", "pycontree", "dp")


def train_splits(folder: Path) -> dict[str, tuple[Path, int]]:
    """``{name: (file, train rows)}`` from ``continuous/quantbnb_splits.csv``."""
    out = {}
    with open(folder / "continuous" / "quantbnb_splits.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            name = row["file"].split(".")[0].removesuffix("-train")
            out[name] = (folder / "continuous" / row["file"], int(row["train_rows"]))
    return out


# ----------------------------------------------------------------------------------------------- worker
def worker(solver: str, path: str, rows: int, depth: int, limit: float, dp_cells: float) -> dict:
    """One run in this process; returns seconds, training errors, whether optimality was proven, memory."""
    import resource

    import numpy as np

    A = np.loadtxt(path)[:rows]
    _, y = np.unique(A[:, 0], return_inverse=True)
    X = A[:, 1:]
    out: dict = {"solver": solver}
    if solver in ("odtmip", "dp"):
        from odtmip.core.data import Dataset
        from odtmip.dp import solve_contree, solve_dp
        from odtmip.dp.contree import warm_up as contree_warm_up
        from odtmip.dp.solver import warm_up

        out["load_seconds"] = contree_warm_up() + warm_up()
        if solver == "odtmip":
            ds = Dataset(X, y)
            t0 = time.perf_counter()
            res = solve_contree(ds, depth, time_limit=limit)
        else:
            cells = sum(len(np.unique(X[:, j])) - 1 for j in range(X.shape[1])) * len(y)
            if cells > dp_cells:
                return {"solver": solver, "error": f"skipped: {cells:.2g} cells of binary columns"}
            ds = Dataset(X, y, numeric="thresholds")
            t0 = time.perf_counter()
            res = solve_dp(ds, depth, time_limit=limit)
        out["seconds"] = time.perf_counter() - t0
        out["errors"] = float(res.objective)
        out["optimal"] = res.optimal
    else:
        from pycontree import ConTree

        model = ConTree(max_depth=depth, time_limit=limit, verbose=False)
        t0 = time.perf_counter()
        model.fit(X, y)
        out["seconds"] = time.perf_counter() - t0
        out["errors"] = float((model.predict(X) != y).sum())
        out["optimal"] = out["seconds"] < limit
    out["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return out


def anytime_worker(path: str, rows: int, depth: int, limit: float) -> dict:
    """odtmip's progress over one run, next to CART (:func:`_peers.anytime_run`)."""
    import numpy as np

    from odtmip.core.data import Dataset
    from odtmip.dp import solve_contree
    from odtmip.dp.contree import warm_up

    A = np.loadtxt(path)[:rows]
    _, y = np.unique(A[:, 0], return_inverse=True)
    X = A[:, 1:]
    warm_up()
    return anytime_run(lambda: solve_contree(Dataset(X, y), depth, time_limit=limit), X, y, depth)


# ----------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=None, help="names in <data>/continuous (default: all)")
    parser.add_argument("--depths", nargs="+", type=int, default=[2, 3, 4])
    parser.add_argument("--time-limit", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--data", default=None, help="data folder (default $ODTMIP_DATA or ../shared/datasets)")
    parser.add_argument("--solvers", nargs="+", default=["odtmip", "pycontree"], choices=SOLVERS)
    parser.add_argument("--dp-cells", type=float, default=5e7, help="largest rows x midpoints for the dp")
    parser.add_argument("--anytime", type=int, default=4, metavar="N",
                        help="progress curves of odtmip for the N slowest sets (default 4; 0: none)")
    parser.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        solver, path, rows, depth, limit, cells = args.worker
        if solver == "anytime":
            print(json.dumps(anytime_worker(path, int(rows), int(depth), float(limit))))
        else:
            print(json.dumps(worker(solver, path, int(rows), int(depth), float(limit), float(cells))))
        return 0

    folder = data_folder(args.data)
    splits = train_splits(folder)
    names = args.datasets or sorted(splits)
    solvers = [s for s in args.solvers if installed({"pycontree": "pycontree"}.get(s, "odtmip.dp"))]
    for s in set(args.solvers) - set(solvers):
        print(f"{s}: not installed, skipped")
    if "odtmip" in solvers:
        contree, dp = fresh_compile_seconds("odtmip.dp.contree"), fresh_compile_seconds()
        print(f"odtmip JIT compile (fresh, numba disk cache off): ConTree {contree:.1f} s, MurTree {dp:.1f} s")
    table = Table("pycontree", 1e-3, width=13)
    header = f"{'dataset':<12}{'n':>7}{'d':>3}  " + "".join(f"{s + ' s':>13}{'MB':>7}" for s in solvers)
    header += f"{'errors':>9}{'ratio':>8}"
    print(header)
    print("-" * len(header))
    slowest: list[tuple[float, str, list[str]]] = []  # odtmip's seconds at the deepest depth
    for name in names:
        if name not in splits:
            print(f"{name}: no train split in quantbnb_splits.csv, skipped")
            continue
        path, rows = splits[name]
        for depth in args.depths:
            worker_args = [str(path), str(rows), str(depth), str(args.time_limit), str(args.dp_cells)]
            results = {s: run_worker(__file__, s, worker_args, args.time_limit) for s in solvers}
            table.add(f"{name:<12}{rows:>7}", depth, results)
            if depth == max(args.depths) and "seconds" in results.get("odtmip", {}):
                slowest.append((results["odtmip"]["seconds"], name, worker_args))
    table.summary()
    if "odtmip" in solvers and args.anytime > 0:
        runs = [(name, a) for _, name, a in sorted(slowest, reverse=True)[: args.anytime]]
        anytime_table(__file__, runs, max(args.depths), args.time_limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
