"""Time to proof of constrained trees: statistical parity, a feature limit and a feature budget, per formulation and
depth, with and without the DP's bound rows (``dp_bounds``).

Usage::

    python benchmarks/constraints.py                                   # every set, depths 2-3, every constraint
    python benchmarks/constraints.py --sets compas --depths 2 --constraints parity --time-limit 60
    python benchmarks/constraints.py --odtlearn /path/to/python        # also ODTlearn's FairSPOCT on CBC (parity)

Each run is ``odtmip fit SET --solver S --depth D --dp-bounds B --time-limit T --json`` with the constraint's flags
(``--parity COL:0.05``, ``--max-features 2``, ``--feature-costs FILE --budget 3``) in a fresh process
(:func:`mip_proof.run`). The sets: COMPAS (the OSDT repository's binary version, 6 907 rows; its protected column is
``sex:Female``), MONK's problem 1 (124 training rows) and the tic-tac-toe endgames (958 rows), whose "protected"
columns are stand-ins (``head_shape``, ``middle-middle-square``): they hold the parity rows, nothing more. The costs
file gives column k the cost 1 + (k mod 3). Printed per run: status, loss, bound, who proved it, the rows the
constraints added, the seconds of the whole process; then the proof table per constraint, formulation, depth and
dp_bounds.
Nothing is asserted.

``--odtlearn PYTHON`` runs ODTlearn's FairSPOCT (statistical parity, on CBC) with that interpreter, a separate
environment: it is never a dependency of odtmip.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mip_proof import run, run_script  # noqa: E402 (the benchmarks folder)

#: name -> (the data as ``odtmip fit`` takes it, its target column (None: the file's), the protected column)
SETS = {"compas": ("osdt/compas-binary.csv", "recidivate-within-two-years:1", "sex:Female"),
        "monk1": ("categorical/monks-1-train", None, "head_shape"),
        # every column of the house votes has missing values ('?'), which a protected column may not: tic-tac-toe's
        # centre square (three values: the gap holds for every pair) stands in
        "tic-tac-toe": ("tic-tac-toe", None, "middle-middle-square")}
FORMULATIONS = ("gunluk", "binoct", "oct")
CONSTRAINTS = ("parity", "max-features", "budget")
GAP, MAX_FEATURES, BUDGET = 0.05, 2, 3

ODTLEARN = r"""
import json, sys, time
import numpy as np
import pandas as pd
from odtlearn.fair_oct import FairSPOCT
X = pd.read_csv(sys.argv[1])
y = X.pop("_label").astype("category").cat.codes
protected, depth, limit, gap = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
P = X[[protected]].astype("category").apply(lambda c: c.cat.codes)
X = pd.get_dummies(X.drop(columns=[protected]).astype(str)).astype(int)
t = time.perf_counter()
clf = FairSPOCT(solver="cbc", positive_class=1, depth=depth, _lambda=0, time_limit=limit, fairness_bound=gap,
                verbose=False)
clf.fit(X, y.to_numpy(), protect_feat=P.to_numpy(), legit_factor=np.zeros(len(X), dtype=int))
errors = int((clf.predict(X) != y).sum())
print(json.dumps({"errors": errors, "seconds": time.perf_counter() - t}))
"""


def flags(constraint: str, protected: str, costs: Path) -> list[str]:
    """The command-line flags of one constraint."""
    if constraint == "parity":
        return ["--parity", f"{protected}:{GAP}"]
    if constraint == "max-features":
        return ["--max-features", str(MAX_FEATURES)]
    return ["--feature-costs", str(costs), "--budget", str(BUDGET)]


def costs_file(name: str, folder: Path, data_dir: str | None) -> Path:
    """Column k of the set costs 1 + (k mod 3): a JSON file for ``--feature-costs``."""
    from odtmip.core.datasets import load

    data, target, _ = SETS[name]
    X, _ = load(data, target=target, data_dir=data_dir)
    path = folder / f"{name}-costs.json"
    path.write_text(json.dumps({column: 1 + k % 3 for k, column in enumerate(X.columns)}))
    return path


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    p.add_argument("--depths", nargs="+", type=int, default=[2, 3])
    p.add_argument("--formulations", nargs="+", default=list(FORMULATIONS), choices=list(FORMULATIONS))
    p.add_argument("--constraints", nargs="+", default=list(CONSTRAINTS), choices=list(CONSTRAINTS))
    p.add_argument("--bounds", nargs="+", default=["none", "root"], choices=["none", "root", "paths"])
    p.add_argument("--time-limit", type=float, default=None,
                   help="seconds per run (default: 60 at depth 2, 120 at depth 3)")
    p.add_argument("--data-dir", default=os.environ.get("ODTMIP_DATA"))
    p.add_argument("--odtlearn", metavar="PYTHON", help="an interpreter with odtlearn (FairSPOCT on CBC)")
    args = p.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sets:
            data, target, protected = SETS[name]
            costs = costs_file(name, Path(tmp), args.data_dir)
            for depth in args.depths:
                limit = args.time_limit or (60.0 if depth == 2 else 120.0)
                for constraint in args.constraints:
                    for solver in args.formulations:
                        for bounds in args.bounds:
                            given = flags(constraint, protected, costs) + ([] if target is None else
                                                                           ["--target", target])
                            r = run(data, solver, given, depth, bounds, limit, args.data_dir)
                            rows.append({"set": name, "depth": depth, "constraint": constraint,
                                         "formulation": solver, "dp_bounds": bounds, **r})
                            print(pd.DataFrame([rows[-1]]).to_string(index=False, header=len(rows) == 1), flush=True)
                    if args.odtlearn and constraint == "parity":
                        rows.append({"set": name, "depth": depth, "constraint": constraint,
                                     "formulation": "odtlearn-fairspoct", "dp_bounds": "none",
                                     **_odtlearn(args.odtlearn, name, depth, limit, args.data_dir)})
    df = pd.DataFrame(rows)
    pd.set_option("display.width", 200)
    print("\nAll runs\n" + df.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    df["proved"] = df["status"] == "optimal"
    table = df.groupby(["constraint", "formulation", "depth", "dp_bounds"]).agg(
        runs=("proved", "size"), proved=("proved", "sum"), median_wall=("wall", "median"),
        worst_wall=("wall", "max"))
    print("\nProof table (wall seconds of the whole process)\n" + table.to_string(float_format=lambda x: f"{x:.1f}"))


def _odtlearn(python: str, name: str, depth: int, limit: float, data_dir: str | None) -> dict:
    """ODTlearn's FairSPOCT on CBC in the other environment, on the data as odtmip reads it."""
    from odtmip.core.datasets import load

    data, target, protected = SETS[name]
    X, y = load(data, target=target, data_dir=data_dir)
    return run_script(python, ODTLEARN, X, y, [protected, str(depth), str(limit), str(GAP)], limit)


if __name__ == "__main__":
    main()
