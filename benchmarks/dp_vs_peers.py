"""odtmip's DP against STreeD (pystreed) and DL8.5 (pydl8.5) on the binary DL8.5-format datasets.

Usage::

    python benchmarks/dp_vs_peers.py                       # every set in <data>/binary, depths 2-5, 600 s per run
    python benchmarks/dp_vs_peers.py --datasets anneal vehicle --depths 3 4 --time-limit 60 --anytime 0

Every run (one solver, one dataset, one depth) is a fresh subprocess, so peak memory can be measured for the
C++ solvers too: the worker reports ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` (peak resident set of
the whole process, imports included, so it has a baseline of the interpreter plus numpy/numba or the
extension module; tracemalloc would miss C++ allocations). Two times per run:

* **in-process**: wall-clock seconds of the solve call only: ``solve_dp`` (including odtmip's column
  preprocessing, excluding the Dataset construction) and ``fit`` for the peers (including their own data
  conversion); odtmip's kernels are compiled or loaded from the numba disk cache before the clock starts;
* **whole-process**: wall-clock seconds of the worker subprocess, start to exit (the interpreter, imports,
  reading the data, loading odtmip's kernels from the numba disk cache, the solve).

The load time per worker and a fresh compile time (numba disk cache off, one extra subprocess) are printed
separately. Per depth the summary gives the median and the worst odtmip/STreeD ratio of both times over the
sets both solved.

Anytime quality (``--anytime N``, default 4): for the N sets where odtmip took longest at the deepest depth,
one more odtmip run records its progress (best objective and lower bound over time, the lines of
:mod:`odtmip.core.progress`) next to the training errors of CART (scikit-learn, same depth, same columns).

All solvers minimise training misclassifications at the given depth with the full node budget
(2^d - 1); the script checks that every finished run reports the same optimum. It never asserts on time.
The peers return the first optimal tree they find, so odtmip runs with ``DPOptions(fewest_nodes=False)``, the
same problem; ``--fewest-nodes`` times odtmip's default instead, which also proves that no optimal tree has
fewer branch nodes (much more work where many trees are perfect: mushroom, segment, lymph at depth 5).
Peers that are not installed are reported as such and skipped.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

from _peers import (
    anytime_run,
    anytime_table,
    data_folder,
    dataset_path,
    fresh_compile_seconds,
    installed,
    run_worker,
)

SOLVERS = ("odtmip", "streed", "dl85")


# ----------------------------------------------------------------------------------------------- worker
def worker(solver: str, path: str, depth: int, limit: float) -> dict:
    """One run in this process; returns seconds, training errors, whether optimality was proven, memory."""
    import resource

    import numpy as np

    A = np.loadtxt(path, dtype=np.int64)
    y, X = A[:, 0], A[:, 1:]
    out: dict = {"solver": solver}
    if solver in ("odtmip", "odtmip-fewest"):
        from odtmip.core.data import Dataset
        from odtmip.dp import DPOptions, solve_dp, warm_up

        out["load_seconds"] = warm_up()
        ds = Dataset(X, y)
        t0 = time.perf_counter()
        res = solve_dp(ds, depth, time_limit=limit, options=DPOptions(fewest_nodes=solver == "odtmip-fewest"))
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


def anytime_worker(path: str, depth: int, limit: float) -> dict:
    """odtmip's progress over one run, next to CART (:func:`_peers.anytime_run`)."""
    import numpy as np

    from odtmip.core.data import Dataset
    from odtmip.dp import solve_dp, warm_up

    A = np.loadtxt(path, dtype=np.int64)
    y, X = A[:, 0], A[:, 1:]
    warm_up()
    return anytime_run(lambda: solve_dp(Dataset(X, y), depth, time_limit=limit), X, y, depth)


def available(solver: str) -> bool:
    return installed({"odtmip": "odtmip.dp", "streed": "pystreed", "dl85": "pydl85"}[solver])


def run(solver: str, path: Path, depth: int, limit: float) -> dict:
    """One run in a worker process, with the process's wall-clock seconds as ``process_seconds``."""
    t0 = time.perf_counter()
    out = run_worker(__file__, solver, [str(path), str(depth), str(limit)], limit)
    out["process_seconds"] = time.perf_counter() - t0
    return out


def _ratio_summary(label: str, ratios: list[tuple[float, str]]) -> str:
    worst = max(ratios)
    return (f"{label} median {statistics.median(q for q, _ in ratios):.2f}, worst {worst[0]:.2f} ({worst[1]})")


# ----------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=None, help="names in <data>/binary (default: all)")
    parser.add_argument("--depths", nargs="+", type=int, default=[2, 3, 4, 5])
    parser.add_argument("--time-limit", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--data", default=None, help="data folder (default $ODTMIP_DATA or ../shared/datasets)")
    parser.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=SOLVERS)
    parser.add_argument("--anytime", type=int, default=4, metavar="N",
                        help="progress curves of odtmip for the N slowest sets (default 4; 0: none)")
    parser.add_argument("--fewest-nodes", action="store_true",
                        help="odtmip also minimises branch nodes among optimal trees (its default; peers do not)")
    parser.add_argument("--worker", nargs=4, metavar=("SOLVER", "PATH", "DEPTH", "LIMIT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        solver, path, depth, limit = args.worker
        work = anytime_worker(path, int(depth), float(limit)) if solver == "anytime" else worker(
            solver, path, int(depth), float(limit))
        print(json.dumps(work))
        return 0

    folder = data_folder(args.data)
    if args.datasets is None:
        args.datasets = sorted(p.name.split(".")[0] for p in (folder / "binary").glob("*.txt*"))
    solvers = []
    for s in args.solvers:
        if available(s):
            solvers.append(s)
        else:
            print(f"{s}: not installed, skipped")
    if "odtmip" in solvers:
        print(f"odtmip JIT compile (fresh, numba disk cache off): {fresh_compile_seconds():.1f} s")
    ratios: dict[int, list[tuple[float, str]]] = {d: [] for d in args.depths}
    process_ratios: dict[int, list[tuple[float, str]]] = {d: [] for d in args.depths}
    slowest: list[tuple[float, str, Path]] = []  # odtmip's seconds at the deepest depth
    header = f"{'dataset':<20}{'d':>2}  " + "".join(f"{s + ' s':>11}{'proc s':>8}{'MB':>7}" for s in solvers)
    header += f"{'errors':>9}{'ratio':>7}{'proc':>6}"
    print(header)
    print("-" * len(header))
    disagreements = []
    load_times = []
    for name in args.datasets:
        path = dataset_path(folder, name)
        if path is None:
            print(f"{name}: not found in {folder / 'binary'}")
            continue
        for depth in args.depths:
            results = {s: run("odtmip-fewest" if s == "odtmip" and args.fewest_nodes else s, path, depth,
                              args.time_limit) for s in solvers}
            cells, errors = [], set()
            for s in solvers:
                r = results[s]
                if "error" in r:
                    cells.append(f"{'ERR':>11}{'':>15}")
                    continue
                mark = "" if r["optimal"] else "*"
                cells.append(f"{r['seconds']:>10.3f}{mark or ' '}{r['process_seconds']:>8.2f}{r['max_rss_mb']:>7.0f}")
                if r["optimal"]:
                    errors.add(r["errors"])
                if "load_seconds" in r:
                    load_times.append(r["load_seconds"])
            ratio = ""
            a, b = results.get("odtmip", {}), results.get("streed", {})
            if depth == max(args.depths) and "seconds" in a:
                slowest.append((a["seconds"], name, path))
            if a.get("optimal") and b.get("optimal"):
                q = a["seconds"] / max(b["seconds"], 1e-6)
                qp = a["process_seconds"] / max(b["process_seconds"], 1e-6)
                ratios[depth].append((q, name))
                process_ratios[depth].append((qp, name))
                ratio = f"{q:>7.2f}{qp:>6.2f}"
            err = "/".join(f"{e:g}" for e in sorted(errors)) if errors else "-"
            if len(errors) > 1:
                disagreements.append((name, depth, results))
                err += " !"
            print(f"{name:<20}{depth:>2}  " + "".join(cells) + f"{err:>9}{ratio:>13}", flush=True)
    print()
    for depth in args.depths:
        if ratios[depth]:
            print(f"depth {depth}, odtmip/STreeD over {len(ratios[depth])} sets: "
                  f"{_ratio_summary('in-process', ratios[depth])}; "
                  f"{_ratio_summary('whole-process', process_ratios[depth])}")
    if load_times:
        print(f"odtmip kernel load per worker (numba disk cache): median {statistics.median(load_times):.2f} s")
    print("* = time limit reached (not proven optimal); MB = peak RSS of the worker process")
    if disagreements:
        print("OPTIMA DISAGREE:")
        for name, depth, results in disagreements:
            print(f"  {name} depth {depth}: {results}")
    if "odtmip" in solvers and args.anytime > 0:
        runs = [(name, [str(path), str(max(args.depths)), str(args.time_limit)])
                for _, name, path in sorted(slowest, reverse=True)[: args.anytime]]
        anytime_table(__file__, runs, max(args.depths), args.time_limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
