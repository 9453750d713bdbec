"""odtmip with one search thread against several: the DP and the (FP, FN) front on the binary sets, ConTree on the
continuous sets.

Usage::

    python benchmarks/threads.py --engine dp --datasets german-credit ionosphere --depths 5
    python benchmarks/threads.py --engine contree --datasets fault --depths 3 --threads 1 2
    python benchmarks/threads.py --engine front --datasets ionosphere german-credit --depths 4

Every run (one set, one depth, one thread count) is a fresh subprocess (:func:`_peers.run_worker`); the time is the
wall-clock seconds of the solve call (``solve_dp`` / ``solve_contree`` / ``ParetoSolver.front``, kernels loaded
before the clock starts). Per (set, depth) the table gives the seconds per thread count, the ratio t(1 thread) /
t(most threads), whether the objective and the tree agree (they must; for the front: every point and its tree), and
the work model of the run with the most threads:

* ``par s``: seconds the threads searched the root's features together (``stats["parallel_seconds"]``), the rest of
  the call being one thread's (the greedy first tree, the preprocessing, the pass that stores the root, depth-two
  roots);
* ``balance``: the search nodes of the busiest thread over the mean (``stats["thread_nodes"]``);
* ``model N``: the speed-up t(1 thread) / t(N) this predicts on N cores, Amdahl's law with the parallel part's work
  taken as ``T x par s`` (T threads, lock waits and imbalance included): t(N) = serial + T par / N.

The summary gives the median and the worst ratio. It never asserts on time; on a busy machine the ratios fall, so
the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
from pathlib import Path

from _peers import data_folder, dataset_path, run_worker


# ----------------------------------------------------------------------------------------------- worker
def worker(engine: str, path: str, rows: int, depth: int, limit: float, threads: int) -> dict:
    """One run in this process: seconds, objective, a fingerprint of the tree, the threads' statistics."""
    import time

    import numpy as np

    from odtmip.core.data import Dataset

    if engine == "dp":
        from odtmip.dp import DPOptions, solve_dp, warm_up

        A = np.loadtxt(path, dtype=np.int64)
        warm_up()
        ds = Dataset(A[:, 1:], A[:, 0])
        t0 = time.perf_counter()
        # the peers' problem (dp_vs_peers.py): the first optimal tree, not the one with the fewest nodes
        res = solve_dp(ds, depth, time_limit=limit, options=DPOptions(fewest_nodes=False), threads=threads)
    elif engine == "front":
        from odtmip.dp.pareto import ParetoSolver, _warm_up_pareto

        A = np.loadtxt(path, dtype=np.int64)
        _warm_up_pareto()
        ds = Dataset(A[:, 1:], A[:, 0])
        t0 = time.perf_counter()
        front = ParetoSolver(ds, threads=threads).front(depth, time_limit=limit)
        seconds = time.perf_counter() - t0
        points = json.dumps([(p.fp, p.fn, p.nodes, p.tree.to_json()) for p in front.points])
        return {"seconds": seconds, "objective": len(front.points), "optimal": front.status.value == "optimal",
                "tree": hashlib.sha1(points.encode()).hexdigest()[:10],
                "parallel_seconds": front.stats.get("parallel_seconds", 0.0),
                "thread_nodes": front.stats.get("thread_nodes", []), "threads": front.stats.get("threads", 1)}
    else:
        from odtmip.dp.contree import solve_contree, warm_up

        A = np.loadtxt(path)[:rows]
        _, y = np.unique(A[:, 0], return_inverse=True)
        warm_up()
        ds = Dataset(A[:, 1:], y)
        t0 = time.perf_counter()
        res = solve_contree(ds, depth, time_limit=limit, threads=threads)
    seconds = time.perf_counter() - t0
    tree = hashlib.sha1(res.tree.to_json().encode()).hexdigest()[:10] if res.tree is not None else "-"
    return {"seconds": seconds, "objective": res.objective, "optimal": res.optimal, "tree": tree,
            "parallel_seconds": res.stats.get("parallel_seconds", 0.0),
            "thread_nodes": res.stats.get("thread_nodes", []), "threads": res.stats.get("threads", 1)}


def _model(run: dict, cores: int) -> float:
    """Seconds predicted on ``cores`` cores from a run with T threads (module docstring): the serial part as measured,
    the parallel part's work T x par s shared by the cores (its balance as in the run)."""
    par = run["parallel_seconds"]
    return max(0.0, run["seconds"] - par) + max(1, run["threads"]) * par / cores


# ----------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", choices=("dp", "contree", "front"), default="dp")
    parser.add_argument("--datasets", nargs="+", default=[],
                        help="set names (binary sets for dp and front, continuous ones for contree)")
    parser.add_argument("--depths", nargs="+", type=int, default=[5])
    parser.add_argument("--threads", nargs="+", type=int, default=[1, len(os.sched_getaffinity(0))])
    parser.add_argument("--time-limit", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--data", default=None, help="data folder (default $ODTMIP_DATA or ../shared/datasets)")
    parser.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        engine, path, rows, depth, limit, threads = args.worker
        print(json.dumps(worker(engine, path, int(rows), int(depth), float(limit), int(threads))))
        return 0

    folder = data_folder(args.data)
    if args.engine == "contree":
        sys.path.insert(0, str(Path(__file__).parent))
        from contree_vs_peers import train_splits

        splits = train_splits(folder)
    counts = sorted(set(args.threads))
    most = counts[-1]
    header = (f"{'dataset':<18}{'d':>2}" + "".join(f"{f't{k} s':>9}" for k in counts)
              + f"{'ratio':>7}{'same':>6}{'par s':>8}{'balance':>8}{'model 4':>8}{'model 8':>8}{'load':>6}")
    print(header)
    print("-" * len(header))
    ratios: list[tuple[float, str]] = []
    for name in args.datasets:
        if args.engine in ("dp", "front"):
            path, rows = dataset_path(folder, name), 0
        else:
            path, rows = splits.get(name, (None, 0))
        if path is None:
            print(f"{name}: not found")
            continue
        for depth in args.depths:
            runs = {k: run_worker(__file__, args.engine, [str(path), str(rows), str(depth), str(args.time_limit),
                                                          str(k)], args.time_limit) for k in counts}
            if any("error" in r for r in runs.values()):
                print(f"{name:<18}{depth:>2}  " + "; ".join(f"{k}: {r['error']}" for k, r in runs.items()
                                                           if "error" in r))
                continue
            cells = "".join(f"{runs[k]['seconds']:>8.2f}{' ' if runs[k]['optimal'] else '*'}" for k in counts)
            one, top = runs[counts[0]], runs[most]
            same = len({(r["objective"], r["tree"]) for r in runs.values() if r["optimal"]}) <= 1
            ratio = one["seconds"] / max(top["seconds"], 1e-9)
            if one["optimal"] and top["optimal"]:
                ratios.append((ratio, f"{name} d{depth}"))
            nodes = top["thread_nodes"]
            balance = max(nodes) / (sum(nodes) / len(nodes)) if nodes and sum(nodes) else float("nan")
            models = [one["seconds"] / _model(top, c) for c in (4, 8)]
            print(f"{name:<18}{depth:>2}{cells}{ratio:>7.2f}{'yes' if same else 'NO':>6}"
                  f"{top['parallel_seconds']:>8.2f}{balance:>8.2f}{models[0]:>8.2f}{models[1]:>8.2f}"
                  f"{os.getloadavg()[0]:>6.2f}", flush=True)
    if ratios:
        worst = min(ratios)
        print(f"\nt(1) / t({most}) over {len(ratios)} runs: median {statistics.median(q for q, _ in ratios):.2f}, "
              f"worst {worst[0]:.2f} ({worst[1]})  (* not proven within the time limit)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
