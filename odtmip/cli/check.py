"""``odtmip check``: one cell of ``odtmip compare``: a MIP model (with the DP's warm start and LP bound) and the DP
on the same problem, the verdict, and the comparison's row (sizes, LP and root bounds, nodes, times)."""

from __future__ import annotations

import argparse
import dataclasses
import json

from odtmip.cli import common
from odtmip.solving.solvers import CHECKED_MODELS


def add_parser(sub) -> argparse.ArgumentParser:
    chk = sub.add_parser("check", help="solve with a MIP model and with the DP and compare the optima")
    chk.add_argument("data", help="a bundled dataset name (see `odtmip datasets`) or a file path")
    common.add_data_options(chk)
    chk.add_argument("--model", default="gunluk", choices=CHECKED_MODELS, help="MIP model (default: gunluk)")
    common.add_option(chk, "--depth", "max_depth", "D", default=2, help="balanced depth (default: 2)")
    common.add_option(chk, "--time-limit", "time_limit", "S",
                      help="seconds for the whole command, from its start (the DP solves take at most a quarter, "
                           "the model the rest)")
    common.add_option(chk, "--min-leaf", "min_leaf", "K")
    chk.add_argument("--positive", metavar="LABEL", default=argparse.SUPPRESS,
                     help="the positive class of a target, a label of the data (default: the second label)")
    target = chk.add_mutually_exclusive_group()
    common.add_option(target, "--min-specificity", "min_specificity", "T")
    common.add_option(target, "--min-sensitivity", "min_sensitivity", "T")
    common.add_model_options(chk, constraints=False)
    common.add_constraint_options(chk)
    chk.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    chk.add_argument("--log", action="store_true", help="stream the solvers' logs to stderr")
    common.add_verbosity(chk)
    chk.set_defaults(run=run)
    return chk


def run(args) -> int:
    from odtmip.solving.compare import Variant, grid, solve_cell

    data, options = common.data_and_options(args, args.model)
    depth, time_limit = options.pop("max_depth"), options.pop("time_limit", None)
    options.pop("highs", None)  # --log: the cell echoes HiGHS's log itself
    (cell,) = grid({args.data: data}, [Variant(args.model, options)], depths=[depth], time_limit=time_limit)
    # the cell's time limit counts from the command's start
    row, report, _ = solve_cell(dataclasses.replace(cell, log=args.log, started=args.started), dp_required=True)
    if args.json:
        units = report.problem.in_model_units
        print(json.dumps({"model": report.model, "verdict": report.verdict, "relation": report.relation,
                          "dp_objective": units(report.dp.objective),
                          "dp_deep_objective": units(report.dp_deep.objective),
                          "mip": common.result_record(report.mip, data),
                          "dp": common.result_record(report.dp, report.problem.data),
                          "row": {k: common.finite(v) if isinstance(v, float) else v for k, v in row.items()}}))
        return 0
    print(f"data: {args.data}: {data.describe(common.numeric_splits(data, args.model))}")
    if report.mip.tree is not None:
        print(report.mip.tree.to_text())
    print(report.summary())
    print(f"model size: {row['n_constraints']:,} rows, {row['n_variables']:,} columns ({row['n_binaries']:,} binary), "
          f"{row['n_nonzeros']:,} nonzeros; LP bound {common.fmt(row['lp_bound'])}"
          + (f" ({row['lp_note']})" if row.get("lp_note") else "")
          + f", root bound {common.fmt(row['root_bound'])}, {row['nodes']} nodes")
    if row["dp_bounds"] != "none":
        print(f"DP bound rows ({row['dp_bounds']}): {row['dp_rows']:,} rows, values in "
              f"{row['dp_bounds_seconds']:.2f} s; proved by: {row['proved_by'] or 'nothing yet'}")
    return 0 if report.verdict != "disagree" else 1
