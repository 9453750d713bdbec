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
* **hand-off**: :func:`odtmip.models._highs.to_highs`, i.e. the adapter's compile + ``Highs.passModel``, the
  same path :func:`odtmip.models._highs.solve` takes before ``Highs.run``;
* **direct**: the same matrix built with numpy straight from the Dataset (``prepare`` included, so both paths
  start from the same object) and passed to HiGHS: a measuring stick, not library code. Both paths hand HiGHS
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
from collections import Counter

import numpy as np
import pandas as pd

DEFAULT_SIZES = (500, 1000, 2000, 5000, 10000)
LARGE_N = 5000  # the target is for large N; below, a fixed ~5 ms of making Pyomo components weighs in


# ------------------------------------------------------------------------------------------------ data
def make_dataset(n: int, groups: int = 10, levels: int = 4, depth: int = 3, noise: float = 0.1, seed: int = 0):
    """Categorical data with labels from a planted depth-``depth`` tree and ``noise`` label noise."""
    from odtmip import Dataset

    rng = np.random.default_rng(seed)
    cat = rng.integers(0, levels, size=(n, groups))
    n_nodes = 2**depth - 1
    node_group = rng.integers(0, groups, size=n_nodes + 1)  # heap numbering, node 1 is the root
    goes_left = rng.random((n_nodes + 1, levels)) < 0.5
    goes_left[:, 0], goes_left[:, 1] = True, False  # every planted split is non-trivial
    leaf_label = rng.integers(0, 2, size=2 ** (depth + 1))
    node = np.ones(n, dtype=np.int64)
    for _ in range(depth):
        left = goes_left[node, cat[np.arange(n), node_group[node]]]
        node = 2 * node + (~left).astype(np.int64)
    y = leaf_label[node]
    flip = rng.random(n) < noise
    y = np.where(flip, rng.integers(0, 2, size=n), y)
    names = [f"level{v}" for v in range(levels)]
    X = pd.DataFrame({f"f{g}": pd.Categorical.from_codes(cat[:, g], categories=names) for g in range(groups)})
    return Dataset(X, y)


# ------------------------------------------------------------------------------------ direct numpy build
def direct_arrays(data, topology: str = "depth3") -> dict:
    """The Günlük model with default options as column-wise arrays, assembled with numpy.

    Same variables and rows as ``build_model(data, GunlukOptions(topology=topology))``: v[g,k] and z[j,k] at
    leaf-adjacent nodes in [0, 1] (Proposition 3), other z binary, c[i,b] in [0, 1] for the correct (i, b)
    pairs only (14); rows (1), (2), (11), (12) (skipped when they hold no c) and (13). Objective (8a) with
    the sample weights, maximised. Returns the arrays plus ``keys`` (a name per column) for the checks.
    """
    import scipy.sparse as sp

    from odtmip.models.gunluk import GunlukOptions, prepare
    from odtmip.models.topology import Topology

    options = GunlukOptions(topology=topology)
    gd = prepare(data, options)
    topo = Topology.parse(topology)
    n, n_groups, n_cols = gd.n_samples, len(gd.groups), len(gd.columns)
    nodes, leaves = topo.nodes, topo.leaves
    n_nodes = len(nodes)
    node_pos = {k: t for t, k in enumerate(nodes)}
    group_of = np.array([c.group for c in gd.columns])
    pos_leaves = [b for b in leaves if b % 2 == 0]
    neg_leaves = [b for b in leaves if b % 2 == 1]
    positive = gd.positive

    # Columns: v[g,k] (g-major), z[j,k] (j-major), c[i,b] (i-major, leaves of i's class left to right).
    ov, oz = 0, n_groups * n_nodes
    oc = oz + n_cols * n_nodes
    per_sample = np.where(positive, len(pos_leaves), len(neg_leaves))
    c_start = oc + np.concatenate([[0], np.cumsum(per_sample)[:-1]])
    n_var = oc + int(per_sample.sum())
    rank = {b: r for r, b in enumerate(pos_leaves)} | {b: r for r, b in enumerate(neg_leaves)}

    def v_col(g, k):
        return ov + np.asarray(g) * n_nodes + node_pos[k]

    def z_col(j, k):
        return oz + np.asarray(j) * n_nodes + node_pos[k]

    rows, cols, vals, lower, upper = [], [], [], [], []
    n_row = 0

    def add_rows(count, row_offsets, col_idx, values, lo, hi):
        nonlocal n_row
        rows.append(n_row + row_offsets)
        cols.append(col_idx)
        vals.append(values)
        lower.append(np.full(count, lo, dtype=float))
        upper.append(np.full(count, hi, dtype=float))
        n_row += count

    groups = np.arange(n_groups)
    columns = np.arange(n_cols)
    for k in nodes:  # (1): sum_g v[g,k] = 1
        add_rows(1, np.zeros(n_groups, np.int64), v_col(groups, k), np.ones(n_groups), 1.0, 1.0)
    for k in nodes:  # (2): z[j,k] - v[g(j),k] <= 0
        r = np.arange(n_cols)
        add_rows(n_cols, np.concatenate([r, r]), np.concatenate([z_col(columns, k), v_col(group_of, k)]),
                 np.concatenate([np.ones(n_cols), -np.ones(n_cols)]), -np.inf, 0.0)
    below = {k: ([], []) for k in nodes}
    for b, (lt, rt) in topo.paths.items():
        for k in lt:
            below[k][0].append(b)
        for k in rt:
            below[k][1].append(b)
    for side, (sign, rhs) in enumerate(((-1.0, 0.0), (1.0, 1.0))):  # (11): c - L <= 0, (12): c + L <= 1
        for k in nodes:
            for is_pos, class_leaves in ((True, pos_leaves), (False, neg_leaves)):
                terms = [b for b in below[k][side] if b in class_leaves]
                if not terms:
                    continue
                samples = np.flatnonzero(positive == is_pos)
                m = len(samples)
                r = np.arange(m)
                c_idx = c_start[samples][:, None] + np.array([rank[b] for b in terms])[None, :]
                z_idx = z_col(gd.active[samples], k)
                add_rows(m, np.concatenate([np.repeat(r, len(terms)), np.repeat(r, n_groups)]),
                         np.concatenate([c_idx.ravel(), z_idx.ravel()]),
                         np.concatenate([np.ones(c_idx.size), np.full(z_idx.size, sign)]), -np.inf, rhs)
    for k in topo.anchor_nodes():  # (13): z[first column of g, k] - v[g,k] = 0
        first = np.array([grp.columns[0] for grp in gd.groups])
        r = np.arange(n_groups)
        add_rows(n_groups, np.concatenate([r, r]), np.concatenate([z_col(first, k), v_col(groups, k)]),
                 np.concatenate([np.ones(n_groups), -np.ones(n_groups)]), 0.0, 0.0)

    A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n_row, n_var))
    cost = np.zeros(n_var)
    c_weight = np.where(positive, 1.0, options.class_weight) * gd.weights
    cost[oc:] = np.repeat(c_weight, per_sample)
    is_int = np.zeros(n_var, dtype=bool)
    integer_nodes = [k for k in nodes if not topo.leaf_adjacent(k)]  # Proposition 3 relaxes the others
    for k in integer_nodes:
        is_int[z_col(columns, k)] = True

    def keys():  # names matching the Pyomo variables, for the checks only
        out = [None] * n_var
        for g in range(n_groups):
            for k in nodes:
                out[int(v_col(g, k))] = ("v", (g, k))
        for j in range(n_cols):
            for k in nodes:
                out[int(z_col(j, k))] = ("z", (j, k))
        for i in range(n):
            for b in pos_leaves if positive[i] else neg_leaves:
                out[int(c_start[i]) + rank[b]] = ("c", (i, b))
        return out

    return dict(A=A, cost=cost, lower=np.zeros(n_var), upper=np.ones(n_var), is_int=is_int,
                row_lower=np.concatenate(lower), row_upper=np.concatenate(upper), keys=keys)


def direct_highs(data, topology: str = "depth3"):
    """Direct build: numpy arrays -> a fresh ``highspy.Highs`` (log off), no Pyomo. Returns (h, arrays)."""
    import highspy

    arr = direct_arrays(data, topology)
    A = arr["A"]
    inf = highspy.kHighsInf
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    status = h.passModel(
        A.shape[1], A.shape[0], A.nnz, int(highspy.MatrixFormat.kRowwise), int(highspy.ObjSense.kMaximize), 0.0,
        arr["cost"], arr["lower"], arr["upper"],
        np.where(np.isinf(arr["row_lower"]), -inf, arr["row_lower"]),
        np.where(np.isinf(arr["row_upper"]), inf, arr["row_upper"]),
        A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data.astype(float),
        arr["is_int"].astype(np.int32),
    )  # fmt: skip
    if status == highspy.HighsStatus.kError:
        raise RuntimeError("HiGHS rejected the direct model")
    return h, arr


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


# ------------------------------------------------------------------------------------------------ checks
def _lp_of(h) -> dict:
    """The model held by ``h`` as plain arrays (HiGHS's own copy, after the hand-off)."""
    lp = h.getLp()
    return dict(start=np.asarray(lp.a_matrix_.start_), index=np.asarray(lp.a_matrix_.index_),
                value=np.asarray(lp.a_matrix_.value_), row_lower=np.asarray(lp.row_lower_),
                row_upper=np.asarray(lp.row_upper_), cost=np.asarray(lp.col_cost_),
                col_lower=np.asarray(lp.col_lower_), col_upper=np.asarray(lp.col_upper_),
                integrality=[int(t) for t in lp.integrality_], sense=int(lp.sense_), offset=float(lp.offset_))


def _canonical(h, keys) -> tuple[Counter, dict, dict]:
    """Rows as a multiset of ((name, coef) ..., lower, upper), sign-normalised; columns' bounds and costs."""
    lp = _lp_of(h)
    n_row = len(lp["row_lower"])
    terms: list[list] = [[] for _ in range(n_row)]
    for j in range(len(lp["cost"])):
        for p in range(lp["start"][j], lp["start"][j + 1]):
            terms[lp["index"][p]].append((keys[j], float(lp["value"][p])))
    rows: Counter = Counter()
    for r in range(n_row):
        t = sorted(terms[r])
        lo, hi = float(lp["row_lower"][r]), float(lp["row_upper"][r])
        if hi >= 1e30 or (lo == hi and t and t[0][1] < 0):  # write >= rows (and equalities) as <= / positive
            t, lo, hi = [(k, -v) for k, v in t], -hi, -lo
        rows[(tuple(t), lo, hi)] += 1
    integrality = lp["integrality"] or [0] * len(keys)
    cols = {keys[j]: (float(lp["col_lower"][j]), float(lp["col_upper"][j]), integrality[j] == 1, float(lp["cost"][j]))
            for j in range(len(keys))}
    return rows, cols, dict(sense=lp["sense"], offset=lp["offset"])


def _solve_value(h, lp_only: bool, time_limit: float) -> tuple[str, float]:
    h.setOptionValue("threads", 1)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("mip_rel_gap", 0.0)
    if lp_only:
        h.setOptionValue("solve_relaxation", True)
        h.setOptionValue("solver", "ipm")
    h.run()
    return h.modelStatusToString(h.getModelStatus()), float(h.getInfo().objective_function_value)


def _same_rows(data, topology: str, label: str):
    """Build both paths; print and return (all equal, h_pyomo, h_direct)."""
    h_py, columns, *_ = pyomo_highs(data, topology)
    h_dx, arr = direct_highs(data, topology)
    py_keys = [(v.parent_component().name, v.index()) for v in columns]
    sizes = [(h.getNumRow(), h.getNumCol(), h.getNumNz()) for h in (h_py, h_dx)]
    rows_py, cols_py, obj_py = _canonical(h_py, py_keys)
    rows_dx, cols_dx, obj_dx = _canonical(h_dx, arr["keys"]())
    same = [sizes[0] == sizes[1], rows_py == rows_dx, cols_py == cols_dx, obj_py == obj_dx]
    print(f"check {label}: (rows, cols, nonzeros) pyomo {sizes[0]}, direct {sizes[1]}; same size {same[0]}, "
          f"same rows up to order/sign {same[1]}, same column bounds/integrality/costs {same[2]}, "
          f"same sense/offset {same[3]}")
    return all(same), h_py, h_dx


def check_same_model(n: int, mip_n: int, mip_seconds: float) -> bool:
    """Compare the two paths on small N; prints what matched. Returns True when everything matched.

    depth3 at N=``n``: rows, columns, objective and the LP-relaxation value. The depth-3 MIP takes minutes to
    prove optimal even at N=50, so the MIP optimum is compared on the depth2 topology at N=``mip_n``.
    """
    same, h_py, h_dx = _same_rows(make_dataset(n), "depth3", f"depth3 N={n}")
    lp = [_solve_value(h, True, 120.0) for h in (h_py, h_dx)]
    same_lp = lp[0][0] == lp[1][0] == "Optimal" and abs(lp[0][1] - lp[1][1]) <= 1e-6 * max(1.0, abs(lp[0][1]))
    print(f"  LP relaxation: pyomo {lp[0]}, direct {lp[1]}: {'same' if same_lp else 'DIFFER'}")
    same_small, h_py, h_dx = _same_rows(make_dataset(mip_n, seed=1), "depth2", f"depth2 N={mip_n}")
    mip = [_solve_value(h, False, mip_seconds) for h in (h_py, h_dx)]
    same_mip = mip[0][0] == mip[1][0] == "Optimal" and abs(mip[0][1] - mip[1][1]) <= 1e-6
    print(f"  MIP optimum: pyomo {mip[0]}, direct {mip[1]}: {'same' if same_mip else 'DIFFER'}")
    return same and same_lp and same_small and same_mip


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
