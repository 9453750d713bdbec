"""``odtmip fit``: one solver on one dataset; the tree, its status, objective and bound, as text or one JSON object
(``--save`` writes a tree file for ``odtmip predict``)."""

from __future__ import annotations

import argparse
import json
import logging

from odtmip.cli import common
from odtmip.solving.solvers import SOLVERS

log = logging.getLogger("odtmip")


def add_parser(sub) -> argparse.ArgumentParser:
    fit = sub.add_parser("fit", help="fit an optimal tree to a dataset")
    fit.add_argument("data", help="a bundled dataset name (see `odtmip datasets`) or a file path")
    common.add_data_options(fit)
    fit.add_argument("--solver", default="dp", choices=sorted(SOLVERS), help="solver (default: dp)")
    common.add_option(fit, "--depth", "max_depth", "D", default=3,
                      help="maximum depth (default: 3); 'none' for no limit (dp with --lambda or --penalty)")
    common.add_option(fit, "--max-nodes", "max_nodes", "N")
    common.add_option(fit, "--min-leaf", "min_leaf", "K")
    common.add_option(fit, "--penalty", "penalty", "A")
    common.add_option(fit, "--time-limit", "time_limit", "S",
                      help="seconds for the whole command, from its start; at the limit the best tree so far")
    common.add_two_class_options(fit)
    common.add_option(fit, "--max-gap", "max_gap", "G")
    common.add_option(fit, "--threads", "threads", "N")
    common.add_model_options(fit)
    common.add_constraint_options(fit)
    fit.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    fit.add_argument("--log", action="store_true", help="stream the solver's log to stderr")
    fit.add_argument("--save", metavar="FILE", type=common.output_file,
                     help="write the tree and what prediction needs to FILE (JSON), for `odtmip predict` and "
                          "`odtmip show`")
    fit.add_argument("--weight", metavar="COL", help="the sample-weight column (non-negative numbers; left out of "
                                                     "the features)")
    common.add_verbosity(fit)
    fit.set_defaults(run=run)
    return fit


def run(args) -> int:
    from odtmip.core import deploy
    from odtmip.solving.solvers import solve

    data, options = common.data_and_options(args, args.solver)
    described = data.describe(common.numeric_splits(data, args.solver))
    log.info("data: %s", described)
    if "time_limit" in options:  # the command's time limit counts from its start
        options["time_limit"] = common.time_left(args, options["time_limit"])
    result = solve(data, args.solver, **options)
    record = common.result_record(result, data)
    if args.save is not None:
        deploy.save_fit(args.save, result, data, record, options)
    if args.json:
        print(json.dumps(record))
        return 0
    print(f"data: {args.data}: {described}")
    if result.tree is not None:
        print(result.tree.to_text())
    compiled = result.stats.get("compile_seconds", 0.0)
    engine = f" ({result.stats['engine']} engine)" if "engine" in result.stats else ""
    interpreted = result.stats.get("interpreted_seconds")  # set only when the compiled kernels took over
    parts = [f"{interpreted:.3f} s interpreted, before the compiled kernels took over" if interpreted else "",
             f"{compiled:.3f} s compiling or loading the numba kernels" if compiled else ""]
    of_it = "; ".join(part for part in parts if part)
    print(f"solver: {record['solver']}{engine}  status: {record['status']}  time: {result.seconds:.3f} s"
          + (f" (of it {of_it})" if of_it else ""))
    print(f"optimal over: {record['split_space']}")
    if result.stats.get("constraints"):
        unchecked = result.stats.get("constraints_unchecked", [])
        print(f"side constraints: {', '.join(result.stats['constraints'])}"
              + ("" if result.tree is None else " (the tree meets every one" + (
                  f"; not re-checked: {', '.join(unchecked)})" if unchecked else ")")))
    if result.tree is not None:
        print(f"training accuracy: {record['accuracy']:.4f}  "
              f"misclassifications: {record['misclassifications']:g} of {data.n_samples}  "
              f"objective: {result.objective:g}  bound: {result.bound:g}")
    if "tpr" in record:
        line = f"sensitivity: {record['tpr']:.4f}  specificity: {record['tnr']:.4f}  f1: {record['f1']:.4f}"
        if "metric_value" in result.stats and result.stats["metric"] != "f1":
            line += f"  {result.stats['metric']}: {result.stats['metric_value']:.4f}"
        print(line)
    if "dp_bounds" in result.stats:
        print(f"DP bound rows ({result.stats['dp_bounds']}): {result.stats['dp_rows']:,}, values in "
              f"{result.stats['dp_bounds_seconds']:.2f} s; LP bound {common.fmt(result.stats.get('lp_relaxation'))}; "
              f"proved by: {result.stats.get('proved_by') or 'nothing yet'}")
    return 0
