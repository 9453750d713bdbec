"""odtmip's DP on the sparse objective of OSDT against STreeD (pystreed) and GOSDT on binary datasets.

Usage::

    python benchmarks/dp_sparse_vs_peers.py                     # default datasets, lambda 0.01 0.005, depth 4 5
    python benchmarks/dp_sparse_vs_peers.py --datasets anneal vote --lambdas 0.01 --depths 4 --time-limit 30

The objective is R(T) = errors / N + lambda x leaves (Hu, Rudin, Seltzer, "Optimal Sparse Decision Trees",
NeurIPS 2019, Eq. 4) over trees of depth <= d (d branch nodes on the longest path; a single leaf has
depth 0). Conventions of the peers, read from the installed packages:

* odtmip: ``solve_dp(ds, max_depth=d, leaf_penalty=lambda)``, objective reported in these units.
* STreeD (pystreed ``STreeDClassifier(optimization_task="cost-complex-accuracy", cost_complexity=lambda,
  max_depth=d)``): minimises errors + lambda N x (branch nodes) (``GetBranchingCosts`` is
  ``cost_complexity * train size``), i.e. N R(T) - lambda N: the same optimum. ``max_depth`` counts branch
  nodes on a path, as here (it allows 2^d - 1 branch nodes).
* GOSDT (``GOSDTClassifier(regularization=lambda, depth_budget=d, allow_small_reg=True)``): minimises
  errors / N + lambda x leaves; ``depth_budget`` counts a single leaf as depth 0 (the wrapper passes d + 1
  to the C++ core), so it is the same depth.

Each solver's tree is scored the same way, errors / N + lambda x leaves from its own predictions and leaf
count, and the script checks that every run that finished reports the same optimum (to 1e-9). Every run is
a fresh subprocess; times are wall-clock seconds of the solve or ``fit`` call only. odtmip's kernels are
compiled or loaded from numba's disk cache before the clock starts; that load time per worker and a fresh
compile time (numba disk cache off, one extra subprocess) are printed separately. Peers that are not
installed are skipped. It never asserts on time.

The data folder is ``--data``, else ``$ODTMIP_DATA``, else ``shared/datasets`` beside the repository; the
datasets are read from its ``binary`` subfolder (DL8.5 format: label first, then 0/1 features).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import statistics
import sys
import time
import warnings
from pathlib import Path

from _peers import data_folder, dataset_path, fresh_compile_seconds, installed, run_worker

DEFAULT_DATASETS = [
    "anneal", "audiology", "australian-credit", "breast-wisconsin", "diabetes", "german-credit",
    "heart-cleveland", "hepatitis", "hypothyroid", "kr-vs-kp", "lymph", "primary-tumor", "soybean",
    "tic-tac-toe", "vehicle", "vote", "yeast",
]
SOLVERS = ("odtmip", "streed", "gosdt")
AGREE = 1e-9


# ----------------------------------------------------------------------------------------------- worker
def _gosdt_leaves(model) -> int:
    """Leaves of GOSDT's first model, counted in its JSON."""
    tree = json.loads(model.result_.model)[0]
    stack, leaves = [tree], 0
    while stack:
        node = stack.pop()
        if "prediction" in node:
            leaves += 1
        else:
            stack.extend((node["true"], node["false"]))
    return leaves


def worker(solver: str, path: str, lam: float, depth: int, limit: float) -> dict:
    """One run in this process: seconds, OSDT objective of the tree, leaves, whether optimality was proven."""
    import numpy as np

    A = np.loadtxt(path, dtype=np.int64)
    y, X = A[:, 0], A[:, 1:]
    n = len(y)
    out: dict = {"solver": solver}
    if solver == "odtmip":
        from odtmip.core.data import Dataset
        from odtmip.dp import solve_dp, warm_up

        out["load_seconds"] = warm_up()
        ds = Dataset(X, y)
        t0 = time.perf_counter()
        res = solve_dp(ds, max_depth=depth, leaf_penalty=lam, time_limit=limit)
        out["seconds"] = time.perf_counter() - t0
        out["errors"] = float(ds.misclassifications(res.tree))
        out["leaves"] = res.tree.n_leaves
        out["optimal"] = res.optimal
        out["reported"] = res.objective
    elif solver == "streed":
        from pystreed import STreeDClassifier

        model = STreeDClassifier("cost-complex-accuracy", max_depth=depth, cost_complexity=lam, time_limit=limit)
        t0 = time.perf_counter()
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            model.fit(X, y)
        out["seconds"] = time.perf_counter() - t0
        out["errors"] = float((model.predict(X) != y).sum())
        out["leaves"] = int(model.get_n_leaves())
        out["optimal"] = bool(model.fit_result.is_optimal())
    else:
        from gosdt import GOSDTClassifier

        model = GOSDTClassifier(regularization=lam, depth_budget=depth, allow_small_reg=True,
                                time_limit=max(1, int(math.ceil(limit))))
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()) as log:
            model.fit(X.astype(bool), y)
        out["seconds"] = time.perf_counter() - t0
        # the tree's own predict: GOSDTClassifier.predict passes an argument newer scikit-learn rejects
        out["errors"] = float((model.trees_[0].predict(X.astype(bool)) != y).sum())
        out["leaves"] = _gosdt_leaves(model)
        out["optimal"] = str(model.result_.status).endswith("CONVERGED") and "[WARNING]" not in log.getvalue()
    out["objective"] = out["errors"] / n + lam * out["leaves"]
    return out


def available(solver: str) -> bool:
    return installed({"odtmip": "odtmip.dp", "streed": "pystreed", "gosdt": "gosdt"}[solver])


def run(solver: str, path: Path, lam: float, depth: int, limit: float) -> dict:
    return run_worker(__file__, solver, [str(path), repr(lam), str(depth), str(limit)], limit)


# ----------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=DEFAULT_DATASETS, help="names in <data>/binary")
    parser.add_argument("--lambdas", nargs="+", type=float, default=[0.01, 0.005])
    parser.add_argument("--depths", nargs="+", type=int, default=[4, 5])
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per run")
    parser.add_argument("--data", default=None, help="data folder (default $ODTMIP_DATA or ../shared/datasets)")
    parser.add_argument("--solvers", nargs="+", default=list(SOLVERS), choices=SOLVERS)
    parser.add_argument("--worker", nargs=5, metavar=("SOLVER", "PATH", "LAMBDA", "DEPTH", "LIMIT"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        solver, path, lam, depth, limit = args.worker
        print(json.dumps(worker(solver, path, float(lam), int(depth), float(limit))))
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
    peers = [s for s in solvers if s != "odtmip"]
    ratios: dict[tuple, dict[str, list[float]]] = {}
    header = f"{'dataset':<18}{'lambda':>7}{'d':>3} " + "".join(f"{s + ' s':>11}" for s in solvers)
    header += f"{'objective':>11}{'leaves':>7}" + "".join(f"{'/' + s:>9}" for s in peers)
    print(header)
    print("-" * len(header))
    disagreements, load_times = [], []
    for lam in args.lambdas:
        for depth in args.depths:
            ratios[(lam, depth)] = {s: [] for s in peers}
            for name in args.datasets:
                path = dataset_path(folder, name)
                if path is None:
                    print(f"{name}: not found in {folder / 'binary'}")
                    continue
                results = {s: run(s, path, lam, depth, args.time_limit) for s in solvers}
                cells, optima = [], []
                for s in solvers:
                    r = results[s]
                    if "error" in r:
                        cells.append(f"{'ERR':>11}")
                        continue
                    cells.append(f"{r['seconds']:>10.3f}{' ' if r['optimal'] else '*'}")
                    if r["optimal"]:
                        optima.append((r["objective"], r["leaves"]))
                    if "load_seconds" in r:
                        load_times.append(r["load_seconds"])
                quotients = []
                a = results.get("odtmip", {})
                for s in peers:
                    b = results[s]
                    if a.get("optimal") and b.get("optimal"):
                        q = a["seconds"] / max(b["seconds"], 1e-6)
                        ratios[(lam, depth)][s].append(q)
                        quotients.append(f"{q:>9.2f}")
                    else:
                        quotients.append(f"{'-':>9}")
                objective, leaves = (min(optima) if optima else (math.nan, 0))
                mark = ""
                if optima and max(o for o, _ in optima) - objective > AGREE:
                    disagreements.append((name, lam, depth, results))
                    mark = " !"
                print(f"{name:<18}{lam:>7g}{depth:>3} " + "".join(cells) + f"{objective:>11.5f}{leaves:>7}"
                      + "".join(quotients) + mark, flush=True)
    print()
    for (lam, depth), per_peer in ratios.items():
        for s, qs in per_peer.items():
            if qs:
                print(f"lambda {lam:g}, depth {depth}: median time ratio odtmip/{s} = {statistics.median(qs):.2f} "
                      f"over {len(qs)} datasets")
    every = [q for per_peer in ratios.values() for q in per_peer.get("streed", [])]
    if every:
        print(f"all runs: median time ratio odtmip/streed = {statistics.median(every):.2f} over {len(every)} runs")
    if load_times:
        print(f"odtmip kernel load per worker (numba disk cache): median {statistics.median(load_times):.2f} s")
    print("* = time limit reached (not proven optimal); objective = errors / N + lambda x leaves")
    if disagreements:
        print("OPTIMA DISAGREE:")
        for name, lam, depth, results in disagreements:
            print(f"  {name} lambda {lam:g} depth {depth}: {results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
