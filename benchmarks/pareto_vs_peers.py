"""The (fp, fn) front DP against its peers: F1-optimal trees against STreeD's ``f1-score`` task (pystreed), the
constrained DP against the Günlük sensitivity MIP (time to proof), and the front sizes of [DS21] Table 1.

Usage::

    python benchmarks/pareto_vs_peers.py f1 --depths 2 3 4 --time-limit 600      # F1 vs pystreed
    python benchmarks/pareto_vs_peers.py target --time-limit 600                 # min_specificity: DP vs Günlük
    python benchmarks/pareto_vs_peers.py table1 --time-limit 600                 # front sizes at depth 4

Every run is a fresh subprocess (``_peers.run_worker``). Times are wall-clock seconds of the solve call; odtmip's
kernels are compiled or loaded from numba's disk cache before the clock starts. The F1 runs check that both
solvers report the same optimum (F1 recomputed from the predictions); the target runs that the DP's optimum is
the MIP's proven optimum. Nothing here asserts on time; ratios are odtmip / peer (below 1: odtmip faster).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings

from _peers import data_folder, dataset_path, installed, run_worker

F1_DATASETS = ["anneal", "australian-credit", "breast-wisconsin", "diabetes", "german-credit", "heart-cleveland",
               "hepatitis", "ionosphere", "kr-vs-kp", "lymph", "primary-tumor", "soybean", "tic-tac-toe", "vote"]
#: [DS21] Table 1: the size of the depth-4 front (the sets of that table that are in the DL8.5 folder).
TABLE1 = {"anneal": 63, "australian-credit": 54, "breast-wisconsin": 8, "diabetes": 122, "german-credit": 185,
          "heart-cleveland": 27, "kr-vs-kp": 72, "yeast": 296}
TARGET_RUNS = [("tic-tac-toe", 2, 0.9), ("heart-cleveland", 2, 0.9), ("vote", 2, 0.95), ("breast-wisconsin", 2, 0.9)]


# ----------------------------------------------------------------------------------------------- worker
def _load(path: str):
    import numpy as np

    A = np.loadtxt(path, dtype=np.int64)
    return A[:, 1:], A[:, 0]


def worker(kind: str, path: str, depth: int, limit: float, extra: str) -> dict:
    """One run in this process: ``kind`` is odtmip-f1, streed-f1, odtmip-target, gunluk-target or odtmip-front."""
    X, y = _load(path)
    out: dict = {"solver": kind}
    if kind == "streed-f1":
        from pystreed import STreeDClassifier
        from sklearn.metrics import f1_score

        model = STreeDClassifier(optimization_task="f1-score", max_depth=depth, time_limit=limit, cost_complexity=0.0)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
        out["seconds"] = time.perf_counter() - t0
        out["value"] = float(f1_score(y, model.predict(X)))
        out["optimal"] = out["seconds"] < limit
        return out
    import odtmip
    import odtmip.core.options
    from odtmip.dp import warm_up
    from odtmip.dp.pareto import ParetoSolver, _warm_up_pareto

    data = odtmip.Dataset(X, y)
    odtmip.core.options.options_of("dp")  # odtmip.solve reads the solver registry (and imports Pyomo) once per process
    if kind == "gunluk-target":
        t0 = time.perf_counter()
        res = odtmip.solve(data, "gunluk", max_depth=depth, min_specificity=float(extra), time_limit=limit)
    else:
        out["load_seconds"] = warm_up() + _warm_up_pareto()
        t0 = time.perf_counter()
        if kind == "odtmip-front":
            front = ParetoSolver(data).front(depth, time_limit=limit)
            out.update(seconds=time.perf_counter() - t0, value=len(front.points),
                       optimal=front.status.value == "optimal")
            return out
        two_class = {"metric": "f1"} if kind == "odtmip-f1" else {"min_specificity": float(extra)}
        res = odtmip.solve(data, "dp", max_depth=depth, time_limit=limit, **two_class)
    out["seconds"] = time.perf_counter() - t0
    out["optimal"] = res.optimal
    out["value"] = None if res.objective is None else (1 - res.objective if kind == "odtmip-f1" else res.objective)
    out["bound"] = res.bound
    return out


def run(kind: str, path, depth: int, limit: float, extra: str = "-") -> dict:
    return run_worker(__file__, kind, [str(path), str(depth), str(limit), extra], limit)


def _fmt(r: dict) -> str:
    if "error" in r:
        return f"error: {r['error']}"
    return f"{r['seconds']:.3f}{'' if r['optimal'] else '*'}"


# ----------------------------------------------------------------------------------------------- parts
def f1_part(folder, names, depths, limit) -> None:
    """F1-optimal trees: odtmip vs pystreed; equal optima and the time ratio."""
    if not installed("pystreed"):
        print("pystreed: not installed (pip install pystreed), F1 comparison skipped")
        return
    print(f"{'dataset':<20}{'d':>2}{'odtmip s':>11}{'streed s':>11}{'ratio':>8}  F1 (odtmip / streed)")
    ratios: dict[int, list[float]] = {d: [] for d in depths}
    for name in names:
        path = dataset_path(folder, name)
        if path is None:
            print(f"{name:<20}  not in {folder}/binary")
            continue
        for d in depths:
            ours, peer = run("odtmip-f1", path, d, limit), run("streed-f1", path, d, limit)
            ratio = ""
            if "error" not in ours and "error" not in peer and ours["optimal"] and peer["optimal"]:
                same = abs(ours["value"] - peer["value"]) < 1e-9
                r = ours["seconds"] / max(peer["seconds"], 1e-6)
                ratios[d].append(r)
                ratio = f"{r:8.2f}"
                values = f"{ours['value']:.6f} / {peer['value']:.6f}{'' if same else '  DIFFERENT OPTIMA'}"
            else:
                ratio, values = f"{'-':>8}", "(not both proven)"
            print(f"{name:<20}{d:>2}{_fmt(ours):>11}{_fmt(peer):>11}{ratio}  {values}", flush=True)
    for d, rs in ratios.items():
        if rs:
            print(f"depth {d}: median ratio odtmip/streed {statistics.median(rs):.2f} over {len(rs)} datasets")
    print("(* = time limit reached; ratio < 1: odtmip faster)")


def target_part(folder, limit) -> None:
    """Maximise sensitivity s.t. specificity >= tau: the DP against the Günlük MIP, time to proof."""
    print(f"{'dataset':<20}{'d':>2}{'tau':>6}{'dp s':>10}{'gunluk s':>11}  missed positives (dp / gunluk, bound)")
    for name, d, tau in TARGET_RUNS:
        path = dataset_path(folder, name)
        if path is None:
            continue
        ours, mip = run("odtmip-target", path, d, limit, str(tau)), run("gunluk-target", path, d, limit, str(tau))
        if "error" in ours or "error" in mip:
            print(f"{name:<20}{d:>2}{tau:>6}  {ours.get('error', '')} {mip.get('error', '')}")
            continue
        print(f"{name:<20}{d:>2}{tau:>6}{_fmt(ours):>10}{_fmt(mip):>11}  {ours['value']:g} / {mip['value']:g}, "
              f"{mip['bound']:g}", flush=True)
    print("(* = time limit reached before the proof)")


def table1_part(folder, limit) -> None:
    """The depth-4 front sizes of [DS21] Table 1."""
    print(f"{'dataset':<20}{'front':>7}{'paper':>7}{'seconds':>10}")
    for name, paper in TABLE1.items():
        path = dataset_path(folder, name)
        if path is None:
            continue
        r = run("odtmip-front", path, 4, limit)
        if "error" in r:
            print(f"{name:<20}  error: {r['error']}")
            continue
        print(f"{name:<20}{r['value']:>7}{paper:>7}{_fmt(r):>10}", flush=True)
    print("(* = time limit reached: the points found so far, not the front)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", nargs="?", choices=("f1", "target", "table1", "all"), default="all")
    parser.add_argument("--datasets", nargs="+", default=F1_DATASETS, help="names in <data>/binary (F1 part)")
    parser.add_argument("--depths", nargs="+", type=int, default=[2, 3, 4])
    parser.add_argument("--time-limit", type=float, default=600.0, help="seconds per run")
    parser.add_argument("--data", default=None, help="data folder (default $ODTMIP_DATA or ../shared/datasets)")
    parser.add_argument("--worker", nargs=5, metavar=("KIND", "PATH", "DEPTH", "LIMIT", "EXTRA"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        kind, path, depth, limit, extra = args.worker
        print(json.dumps(worker(kind, path, int(depth), float(limit), extra)))
        return 0
    folder = data_folder(args.data)
    if args.part in ("f1", "all"):
        f1_part(folder, args.datasets, args.depths, args.time_limit)
    if args.part in ("target", "all"):
        target_part(folder, args.time_limit)
    if args.part in ("table1", "all"):
        table1_part(folder, args.time_limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
