"""An independent build of the Günlük model: the matrix assembled with numpy straight from the Dataset, no Pyomo.

A test oracle (``tests/models/test_gunluk_matrix.py`` checks that the Pyomo model is row for row this matrix) and
the measuring stick of ``benchmarks/mip_build.py``, which imports it from here.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd


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

    from odtmip.models._highs import console_captured

    arr = direct_arrays(data, topology)
    A = arr["A"]
    inf = highspy.kHighsInf
    with console_captured():  # highspy >= 1.16 prints a banner on stdout
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
    import highspy

    from odtmip.models._highs import _run

    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("mip_rel_gap", 0.0)
    if lp_only:
        h.setOptionValue("solve_relaxation", True)
        h.setOptionValue("solver", "ipm")
    h.setOptionValue("threads", 1)
    _run(highspy, h)  # with HiGHS's process-wide scheduler reset when needed
    return h.modelStatusToString(h.getModelStatus()), float(h.getInfo().objective_function_value)


def _same_rows(data, topology: str, label: str):
    """Build both paths; print and return (all equal, h_pyomo, h_direct)."""
    from odtmip.models._highs import to_highs
    from odtmip.models.gunluk import GunlukOptions, build_model

    m = build_model(data, GunlukOptions(topology=topology))  # held while its columns are named below
    h_py, columns = to_highs(m)
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
