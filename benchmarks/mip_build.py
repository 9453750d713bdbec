"""Cost of building the Günlük depth-3 MIP in Pyomo and handing it to HiGHS, against a direct numpy build.

Usage::

    python benchmarks/mip_build.py                          # N = 500 1000 2000 5000 10000, one run each
    python benchmarks/mip_build.py --sizes 2000 10000 --repeat 3 --solve-seconds 10
    python benchmarks/mip_build.py --check-only             # only the model-equality checks

Data (:func:`make_dataset`): 10 categorical columns with 4 levels each, i.e. d = 40 one-hot columns in 10
groups, two classes, labels from a planted depth-3 tree with 10 % label noise, as a :class:`odtmip.Dataset`
built from pandas categorical columns. Model: ``odtmip.models.gunluk.build_model(data,
GunlukOptions(topology="depth3"))``, i.e. rows (1), (2), (11), (12), (13) of [GKLMS] and variables v, z, c.

Timed, each in a fresh subprocess per (N, path, repeat) so that runs do not share caches or memory:

* **build**: ``build_model`` (includes the model's data preparation, :func:`odtmip.models.gunluk.prepare`);
* **hand-off**: :func:`odtmip.models._highs.to_highs`, i.e. the compile to arrays
  (:func:`odtmip.models._compile.compile_model`) + ``Highs.passModel``, the same path
  :func:`odtmip.models._highs.solve` takes before ``Highs.run``;
* **direct**: the same matrix built with numpy straight from the Dataset (``prepare`` included, so both paths
  start from the same object) and passed to HiGHS: a measuring stick, not library code
  (``tests/models/gunluk_direct.py``, the test suite's oracle). Both paths hand HiGHS
  the matrix row-wise, which ``passModel`` takes 2-3x faster than column-wise (it stores it column-wise either
  way);
* optionally a short HiGHS run of both (``--solve-seconds``), reported but not compared.

The target (build + hand-off at most twice the direct build) is judged at N >= 5000: at small N both take
milliseconds and the Pyomo path's fixed cost of making the model's components (about 5 ms) weighs in.
Imports happen before the clock starts. Times are wall clock; "CPU ratio" is the same ratio in process CPU
time, which other jobs on a shared machine disturb less. With ``--repeat`` > 1 the minimum of the repeats is
shown. Nothing is asserted on time. Peak memory is the worker's peak resident set size during the timed part
(the whole process: interpreter, imports, data, model and HiGHS's copy): on Linux the kernel's mark is reset
after the imports and the data (``/proc/self/clear_refs``), elsewhere it is ``ru_maxrss`` of the whole run.
"base MB" is the resident size after the imports and the data, before either build.

Before timing, the script checks that the two paths give the same model: on depth3 at N = ``--check-n``, the
same rows, columns and nonzeros, the same rows up to order and sign (matched through variable names), the same
column bounds, integrality and objective, and the same LP-relaxation value; on depth2 at N = ``--check-mip-n``
the same again plus the same MIP optimum (the depth-3 MIP takes minutes to prove optimal even at N = 50).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

# The direct numpy build and the model-equality checks are the test suite's oracle; the benchmark uses the same.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "models"))
from gunluk_direct import check_same_model, direct_highs, make_dataset  # noqa: E402

DEFAULT_SIZES = (500, 1000, 2000, 5000, 10000)
LARGE_N = 5000  # the target is for large N; below, a fixed ~5 ms of making Pyomo components weighs in


# ------------------------------------------------------------------------------------------------ data
def pyomo_highs(data, topology: str = "depth3"):
    """The library path: build_model, then the adapter's hand-off.

    Returns (h, columns, model, (build, hand-off) wall seconds, (build, hand-off) CPU seconds).
    """
    from odtmip.models._highs import HighsOptions, to_highs
    from odtmip.models.gunluk import GunlukOptions, build_model

    t0, c0 = time.perf_counter(), time.process_time()
    m = build_model(data, GunlukOptions(topology=topology))
    t1, c1 = time.perf_counter(), time.process_time()
    h, columns = to_highs(m, HighsOptions())
    t2, c2 = time.perf_counter(), time.process_time()
    return h, columns, m, (t1 - t0, t2 - t1), (c1 - c0, c2 - c1)


# ------------------------------------------------------------------------------------------------ worker
def worker(path: str, n: int, solve_seconds: float) -> dict:
    """One timed run of one path in this (fresh) process."""
    import highspy  # noqa: F401  (imports outside the clock)
    import pyomo.environ  # noqa: F401
    import scipy.sparse  # noqa: F401

    import odtmip.models.gunluk  # noqa: F401

    data = make_dataset(n)
    gc.collect()
    reset = _reset_peak()
    out: dict = {"path": path, "n": n, "base_mb": _rss_mb()}
    if path == "pyomo":
        h, _, _, (build, handoff), (build_cpu, handoff_cpu) = pyomo_highs(data)
        out.update(build=build, handoff=handoff, total=build + handoff, total_cpu=build_cpu + handoff_cpu)
    else:
        t, c = time.perf_counter(), time.process_time()
        h, _ = direct_highs(data)
        out.update(total=time.perf_counter() - t, total_cpu=time.process_time() - c)
    out.update(rows=h.getNumRow(), cols=h.getNumCol(), nnz=h.getNumNz())
    if solve_seconds > 0:
        h.setOptionValue("time_limit", solve_seconds)
        h.setOptionValue("mip_rel_gap", 0.0)
        h.setOptionValue("threads", 1)
        t = time.perf_counter()
        h.run()
        info = h.getInfo()
        out.update(solve=time.perf_counter() - t, status=h.modelStatusToString(h.getModelStatus()),
                   objective=info.objective_function_value, bound=info.mip_dual_bound)
    out["peak_mb"] = _peak_mb() if reset else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB
    return out


def _rss_mb() -> float:
    """Current resident set size (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        return 0.0


def _reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark (VmHWM) so that the imports' own peak does not count (Linux only)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def run_worker(path: str, n: int, solve_seconds: float) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", path, str(n), str(solve_seconds)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"worker {path} N={n} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument("--repeat", type=int, default=1, help="fresh processes per (N, path); the minimum is shown")
    parser.add_argument("--solve-seconds", type=float, default=0.0, help="HiGHS time limit of a short run (0: skip)")
    parser.add_argument("--check-n", type=int, default=300, help="N of the model-equality check (0: skip)")
    parser.add_argument("--check-mip-n", type=int, default=200, help="N of the MIP-optimum check (depth2)")
    parser.add_argument("--check-mip-seconds", type=float, default=120.0)
    parser.add_argument("--check-only", action="store_true")
    parser.add_argument("--json", help="also write the raw runs to this file")
    parser.add_argument("--worker", nargs=3, metavar=("PATH", "N", "SOLVE_SECONDS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        path, n, solve_seconds = args.worker
        print(json.dumps(worker(path, int(n), float(solve_seconds))))
        return 0

    from importlib.metadata import version

    print(f"Python {sys.version.split()[0]}, Pyomo {version('pyomo')}, highspy {version('highspy')}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    if args.check_n:
        same = check_same_model(args.check_n, args.check_mip_n, args.check_mip_seconds)
        print(f"same model: {'yes' if same else 'NO'}\n")
        if args.check_only:
            return 0 if same else 1

    runs = []
    header = (f"{'N':>6} {'rows':>8} {'cols':>7} {'nonzeros':>9} {'build s':>8} {'hand-off s':>10} {'Pyomo s':>8} "
              f"{'direct s':>8} {'ratio':>6} {'CPU ratio':>9} {'Pyomo MB':>8} {'direct MB':>9} {'base MB':>7}")
    print(header)
    worst = 0.0
    for n in args.sizes:
        by_path = {p: [run_worker(p, n, args.solve_seconds) for _ in range(args.repeat)] for p in ("pyomo", "direct")}
        runs += by_path["pyomo"] + by_path["direct"]
        py, dx = by_path["pyomo"], by_path["direct"]
        if {(r["rows"], r["cols"], r["nnz"]) for r in py + dx} != {(py[0]["rows"], py[0]["cols"], py[0]["nnz"])}:
            print(f"N={n}: the two paths gave models of different sizes: {py[0]} vs {dx[0]}")
        build, handoff = min(r["build"] for r in py), min(r["handoff"] for r in py)
        total, direct = min(r["total"] for r in py), min(r["total"] for r in dx)
        ratio = total / direct
        cpu_ratio = min(r["total_cpu"] for r in py) / min(r["total_cpu"] for r in dx)
        if n >= LARGE_N:
            worst = max(worst, ratio)
        print(f"{n:>6} {py[0]['rows']:>8} {py[0]['cols']:>7} {py[0]['nnz']:>9} {build:>8.3f} {handoff:>10.3f} "
              f"{total:>8.3f} {direct:>8.3f} {ratio:>6.1f} {cpu_ratio:>9.1f} {max(r['peak_mb'] for r in py):>8.0f} "
              f"{max(r['peak_mb'] for r in dx):>9.0f} {min(r['base_mb'] for r in py + dx):>7.0f}", flush=True)
        if args.solve_seconds > 0:
            for r in (py[0], dx[0]):
                print(f"{'':>6}   {r['path']:>6} run {r['solve']:.1f} s: {r['status']}, objective {r['objective']:g}, "
                      f"bound {r['bound']:g}")
    verdict = "holds" if worst <= 2.0 else "does NOT hold"
    print(f"\ntarget 'at large N, Pyomo build + hand-off <= 2 x direct build': {verdict} "
          f"(worst ratio {worst:.1f} for N >= {LARGE_N})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
