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
    """``--data``, ``$ODTMIP_DATA`` or ``shared/datasets`` beside the repository
    (:func:`odtmip.core.datasets.data_dir`).

    Imported here, not at the top: the workers of the C++ peers import this module too, and their memory is
    measured.
    """
    from odtmip.core.datasets import data_dir
    from odtmip.core.exceptions import DataError

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


#: The workers' environment: Python writes and reads its bytecode caches (``__pycache__``) there, as for an installed
#: package, whose ``.pyc`` files pip writes, even where ``PYTHONDONTWRITEBYTECODE`` is set: otherwise every worker
#: compiles odtmip's modules from source (0.3 s of a whole-process time, and 3-6 ms of the first solve, which
#: imports a module or two), while the peers' installed modules load compiled.
WORKER_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def run_worker(script: str, solver: str, args: list[str], limit: float) -> dict:
    """``script --worker solver *args`` in a fresh interpreter (:data:`WORKER_ENV`); its last output line is the
    JSON result."""
    cmd = [sys.executable, script, "--worker", solver, *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=limit * 3 + 120, env=WORKER_ENV)
    except subprocess.TimeoutExpired:
        return {"solver": solver, "error": "killed after 3 x the time limit"}
    if proc.returncode != 0:
        return {"solver": solver, "error": proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fresh_compile_seconds(module: str = "odtmip.dp") -> float:
    """Compile time of ``module``'s kernels (its ``warm_up``) with numba's disk cache off, in a subprocess.

    A second subprocess then fills the disk cache, so the timed workers load the kernels instead of compiling
    them (the first worker would otherwise pay the compile in its whole-process time).
    """
    code = f"from {module} import warm_up; print(warm_up())"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, ODTMIP_NUMBA_CACHE="0"))
    subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return float(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else float("nan")



#: Seconds between two progress points of an anytime run.
ANYTIME_INTERVAL = 0.5


def anytime_run(solve, X, y, depth: int) -> dict:
    """Run ``solve()`` (an odtmip solve of ``X``, ``y`` at ``depth``) recording its progress lines
    (:mod:`odtmip.core.progress`) every :data:`ANYTIME_INTERVAL` seconds: ``points`` (seconds, best objective, lower
    bound; None where the line shows none), the final result, its greedy first tree, and the training errors of
    CART (scikit-learn) at the same depth on the same columns."""
    import logging

    from sklearn.tree import DecisionTreeClassifier

    from odtmip.core import progress

    points = []

    class Points(logging.Handler):
        def emit(self, record):  # the arguments of progress.Reporter's line: solver, seconds, best, bound, gap
            _, seconds, best, bound, _ = record.args
            points.append((seconds, float(best) if best != "-" else None, float(bound) if bound != "-" else None))

    progress.INTERVAL = ANYTIME_INTERVAL
    progress.logger.addHandler(Points())
    progress.logger.setLevel(logging.INFO)
    progress.logger.propagate = False
    res = solve()
    cart = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y)
    return {"points": points, "seconds": res.seconds, "objective": res.objective, "bound": res.bound,
            "greedy": res.stats.get("greedy_objective"), "cart": float((cart.predict(X) != y).sum())}


def anytime_table(script: str, runs: list[tuple[str, list[str]]], depth: int, limit: float) -> None:
    """Print, for each (name, worker arguments) of ``runs``, the anytime worker of ``script``: odtmip's best
    objective and bound over time (the points where either changes), its greedy first tree, and CART's errors."""
    print(f"\nanytime quality at depth {depth} (odtmip's best objective / lower bound over time; CART's errors)")
    for name, args in runs:
        r = run_worker(script, "anytime", args, limit)
        if "error" in r:
            print(f"{name}: {r['error']}")
            continue
        steps = [p for i, p in enumerate(r["points"]) if i == 0 or p[1:] != r["points"][i - 1][1:]]  # changes only
        curve = "  ".join(f"{t:.1f}s {b if b is not None else '-'}/{lb if lb is not None else '-'}"
                          for t, b, lb in steps)
        print(f"{name:<20} CART {r['cart']:g}  greedy {r['greedy']}  final {r['objective']:g}/{r['bound']:g} "
              f"at {r['seconds']:.1f}s")
        print(f"{'':<20} {curve or '(finished before the first progress line)'}")


class Table:
    """The printed comparison: one row per run set (label, depth), then medians of the time ratio odtmip / ``peer``.

    Each row has every solver's time (``*``: not finished, a failed run shows the start of its error) and peak
    memory, the optima of the finished runs (``!`` when they disagree) and the ratio when both finished (times
    below ``floor`` count as ``floor``).
    """

    def __init__(self, peer: str, floor: float, width: int = 11):
        self.peer, self.floor, self.width = peer, floor, width
        self.ratios: dict[int, list[float]] = {}
        self.load_times: list[float] = []
        self.disagreements: list = []

    def add(self, label: str, depth: int, results: dict[str, dict]) -> None:
        w = self.width
        cells, errors = [], set()
        for r in results.values():
            if "error" in r:
                cells.append(f"{r['error'][:w - 1]:>{w}}{'':>7}")
                continue
            cells.append(f"{r['seconds']:>{w - 1}.3f}{' ' if r['optimal'] else '*'}{r['max_rss_mb']:>7.0f}")
            if r["optimal"]:
                errors.add(r["errors"])
            if "load_seconds" in r:
                self.load_times.append(r["load_seconds"])
        a, b = results.get("odtmip", {}), results.get(self.peer, {})
        ratio = ""
        if a.get("optimal") and b.get("optimal"):
            q = a["seconds"] / max(b["seconds"], self.floor)
            self.ratios.setdefault(depth, []).append(q)
            ratio = f"{q:.2f}"
        err = "/".join(f"{e:g}" for e in sorted(errors)) if errors else "-"
        if len(errors) > 1:
            self.disagreements.append((label, depth, results))
            err += " !"
        print(f"{label}{depth:>3}  " + "".join(cells) + f"{err:>9}{ratio:>8}", flush=True)

    def summary(self) -> None:
        import statistics

        print()
        for depth, qs in sorted(self.ratios.items()):
            print(f"depth {depth}: median time ratio odtmip/{self.peer} = {statistics.median(qs):.2f}, "
                  f"max {max(qs):.2f} over {len(qs)} datasets")
        if self.load_times:
            load = statistics.median(self.load_times)
            print(f"odtmip kernel load per worker (numba disk cache): median {load:.2f} s")
        print(f"* = time limit reached (not proven optimal); MB = peak RSS of the worker process; times below "
              f"{self.floor:g} s count as {self.floor:g} s in the ratio")
        if self.disagreements:
            print("OPTIMA DISAGREE:")
            for label, depth, results in self.disagreements:
                print(f"  {label.strip()} depth {depth}: {results}")
