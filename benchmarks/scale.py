"""ConTree at scale: generated numeric data of 10^4 to 10^6 rows, odtmip against pycontree and STreeD.

Usage::

    python benchmarks/scale.py                                   # rows 1e4 1e5 1e6, 10 columns, depths 2 3
    python benchmarks/scale.py --rows 10000 200000 --columns 50 --depths 2 --time-limit 120 --plot scale.png

The data (``--columns`` normal columns rounded to 3 decimals, two classes from a noisy rule of three columns, seed 0)
are generated once per size into a temporary folder (deleted at the end, never in the repository) as a ``.npy``
file that every run reads. Every run (solver, rows, depth) is a fresh subprocess (:func:`_peers.run_worker`):

* ``odtmip-1``, ``odtmip-N``: ``solve_contree`` with one thread and with all the cores this process may use, with
  no time limit, so that it searches straight for the optimum as the peers do (under a time limit it would also
  prove bounds for a stop on the way; a run past 3 x ``--time-limit`` is stopped and reported);
* ``pycontree``: ``ConTree(max_depth=d).fit``;
* ``streed``: ``STreeDClassifier`` with its own binariser (``n_thresholds`` quantile thresholds per column, default
  5): another problem, over fewer thresholds, so its errors may be higher.

Per run the table gives the solve call's seconds (``solve s``: the data in memory, kernels loaded), the whole
process's seconds (interpreter, imports, reading the file, the solve; ``proc s``) and its peak resident memory
(``ru_maxrss``, MB), the training errors, the ratios of odtmip (one thread) to pycontree, and odtmip's speed-up
from all threads (one thread's solve seconds over theirs). A size whose arrays
would exceed odtmip's memory guard (``--memory-limit``, GiB, default half of physical memory) is refused before
anything large is allocated, with the estimate (``refused``), never a crash. ``--plot FILE`` draws the whole-process
seconds against the rows on log-log axes (matplotlib). It never asserts on time.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _peers import installed, run_worker

SOLVERS = ("odtmip-1", "odtmip-N", "pycontree", "streed")


def generate(rows: int, columns: int, folder: Path) -> Path:
    """The data of ``rows`` x ``columns`` (module docstring) as ``folder/scale-<rows>x<columns>.npy``, label first."""
    import numpy as np

    path = folder / f"scale-{rows}x{columns}.npy"
    if not path.exists():
        rng = np.random.default_rng(0)
        X = rng.normal(size=(rows, columns)).round(3)
        y = (X[:, 0] + 0.5 * X[:, 1] ** 2 - 0.7 * X[:, 2] + rng.normal(size=rows) > 0.3).astype(float)
        np.save(path, np.column_stack([y, X]))
    return path


# ----------------------------------------------------------------------------------------------- worker
def worker(solver: str, path: str, depth: int, limit: float, memory_limit: float) -> dict:
    """One run in this process: seconds of the solve, training errors, whether proven optimal, peak memory."""
    import resource

    import numpy as np

    A = np.load(path)
    y, X = A[:, 0].astype(np.int64), A[:, 1:]
    del A
    out: dict = {"solver": solver}
    if solver.startswith("odtmip"):
        from odtmip.core.data import Dataset
        from odtmip.core.exceptions import ResourceError
        from odtmip.dp.contree import solve_contree, warm_up

        warm_up()
        threads = 1 if solver == "odtmip-1" else None
        t0 = time.perf_counter()
        try:
            res = solve_contree(Dataset(X, y), depth, memory_limit=memory_limit, threads=threads)
        except ResourceError as exc:
            return {"solver": solver, "error": f"refused: {exc}"}
        out.update(seconds=time.perf_counter() - t0, errors=float(res.objective), optimal=res.optimal,
                   search_seconds=res.stats.get("search_seconds", math.nan))
    elif solver == "pycontree":
        from pycontree import ConTree

        model = ConTree(max_depth=depth, time_limit=limit, verbose=False)
        t0 = time.perf_counter()
        model.fit(X, y)
        out.update(seconds=time.perf_counter() - t0, errors=float((model.predict(X) != y).sum()))
        out["optimal"] = out["seconds"] < limit
    else:
        import warnings

        from pystreed import STreeDClassifier

        model = STreeDClassifier(max_depth=depth, time_limit=limit)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
        out.update(seconds=time.perf_counter() - t0, errors=float((model.predict(X) != y).sum()))
        out["optimal"] = out["seconds"] < limit
    out["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return out


def plot(results: dict, file: str) -> None:
    """Whole-process seconds against rows, log-log, one line per (solver, depth)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    for (solver, depth), points in sorted(results.items()):
        points = sorted((n, r["process_seconds"]) for n, r in points.items() if "seconds" in r)
        if points:
            ax.plot(*zip(*points, strict=True), marker="o", label=f"{solver}, depth {depth}")
    ax.set(xscale="log", yscale="log", xlabel="rows", ylabel="seconds (whole process)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(file, dpi=120)


# ----------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    from odtmip.core.options import MEMORY_LIMIT

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="+", type=int, default=[10**4, 10**5, 10**6])
    parser.add_argument("--columns", type=int, default=10)
    parser.add_argument("--depths", nargs="+", type=int, default=[2, 3])
    parser.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=SOLVERS)
    parser.add_argument("--time-limit", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--memory-limit", type=float, default=MEMORY_LIMIT, help="odtmip's memory guard, GiB")
    parser.add_argument("--plot", metavar="FILE", help="write the log-log plot of time against rows to FILE")
    parser.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        solver, path, depth, limit, memory = args.worker
        print(json.dumps(worker(solver, path, int(depth), float(limit), float(memory))))
        return 0

    modules = {"pycontree": "pycontree", "streed": "pystreed"}
    solvers = [s for s in args.solvers if installed(modules.get(s, "odtmip"))]
    for s in set(args.solvers) - set(solvers):
        print(f"{s}: not installed, skipped")
    header = (f"{'rows':>9}{'cols':>5}{'d':>3}  {'solver':<10}{'solve s':>9}{'proc s':>8}{'MB':>7}{'errors':>9}"
              f"{'load':>6}")
    print(header)
    print("-" * len(header))
    results: dict = {}
    ratios: list[dict] = []  # odtmip-1 / pycontree per (rows, depth)
    speedups: list[float] = []  # odtmip-1 / odtmip-N (solve seconds) per (rows, depth)
    with tempfile.TemporaryDirectory(prefix="odtmip-scale-") as tmp:
        for rows in args.rows:
            path = generate(rows, args.columns, Path(tmp))
            for depth in args.depths:
                for s in solvers:
                    t0 = time.perf_counter()
                    r = run_worker(__file__, s, [str(path), str(depth), str(args.time_limit), str(args.memory_limit)],
                                   args.time_limit)
                    r["process_seconds"] = time.perf_counter() - t0
                    results.setdefault((s, depth), {})[rows] = r
                    if "error" in r:
                        print(f"{rows:>9}{args.columns:>5}{depth:>3}  {s:<10}{r['error']}", flush=True)
                        continue
                    mark = " " if r["optimal"] else "*"
                    print(f"{rows:>9}{args.columns:>5}{depth:>3}  {s:<10}{r['seconds']:>8.2f}{mark}"
                          f"{r['process_seconds']:>8.2f}{r['max_rss_mb']:>7.0f}{r['errors']:>9.0f}"
                          f"{os.getloadavg()[0]:>6.2f}", flush=True)
                ours, theirs = results.get(("odtmip-1", depth), {}).get(rows), results.get(("pycontree", depth),
                                                                                          {}).get(rows)
                every = results.get(("odtmip-N", depth), {}).get(rows)
                if ours and every and "seconds" in ours and "seconds" in every:
                    speedups.append(ours["seconds"] / every["seconds"])
                    print(f"{'':>17}odtmip-1 / odtmip-N: solve {speedups[-1]:.2f}", flush=True)
                if ours and theirs and "seconds" in ours and "seconds" in theirs:
                    ratio = {"solve": ours["seconds"] / theirs["seconds"],
                             "whole process": ours["process_seconds"] / theirs["process_seconds"],
                             "peak memory": ours["max_rss_mb"] / theirs["max_rss_mb"]}
                    ratios.append(ratio)
                    print(f"{'':>17}odtmip-1 / pycontree: " + ", ".join(f"{k} {v:.2f}" for k, v in ratio.items()),
                          flush=True)
    if ratios:
        print(f"\nodtmip-1 / pycontree over {len(ratios)} runs: " + "; ".join(
            f"{k} median {statistics.median(r[k] for r in ratios):.2f}, worst {max(r[k] for r in ratios):.2f}"
            for k in ratios[0]))
    if speedups:
        print(f"odtmip-1 / odtmip-N over {len(speedups)} runs: solve median {statistics.median(speedups):.2f}, "
              f"worst {min(speedups):.2f}")
    if args.plot:
        plot(results, args.plot)
        print(f"plot: {args.plot}")
    print("* not proven optimal within the time limit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
