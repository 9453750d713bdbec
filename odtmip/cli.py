"""The ``odtmip`` command: a thin layer over :mod:`odtmip.datasets`, :class:`~odtmip.data.Dataset` and
:func:`odtmip.solvers.solve`.

Bad input prints one line ``odtmip: error: ...`` to stderr and exits with code 2. With ``--json`` exactly one
JSON object is written to stdout; logs go to stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys

from odtmip import datasets, metrics
from odtmip.data import Dataset
from odtmip.exceptions import OdtmipError
from odtmip.results import SolveResult
from odtmip.solvers import SOLVERS, solve

log = logging.getLogger("odtmip")


def _number(cast, low: float, strict: bool = False, high: float | None = None):
    """An argparse type: a finite ``cast`` number >= ``low`` (> when ``strict``) and <= ``high``."""
    kind = "a whole number" if cast is int else "a number"
    if high is not None:
        wanted = f"{kind} in [{low:g}, {high:g}]"
    else:
        wanted = "a positive number" if strict else f"{kind} >= {low:g}"

    def parse(text: str):
        try:
            value = cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {kind}, got {text!r}") from None
        if not math.isfinite(value) or value < low or (strict and value == low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}")
        return value

    return parse


def _depth(text: str):
    """A depth: a whole number >= 0, or ``none`` (no limit; the DP with --lambda)."""
    return None if text.strip().lower() == "none" else _nonnegative_int(text)


_positive_float = _number(float, 0, strict=True)
_nonnegative_int = _number(int, 0)
_nonnegative_float = _number(float, 0)
_fraction = _number(float, 0, high=1)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit code 2 (argparse's usage dump is noise here)
        self.exit(2, f"odtmip: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="odtmip", description="Optimal classification trees: a DP and MIP models on HiGHS.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    fit = sub.add_parser("fit", help="fit an optimal tree to a dataset")
    fit.add_argument("data", help="a bundled dataset name (see `odtmip datasets`) or a file path")
    _add_data_options(fit)
    fit.add_argument("--solver", default="dp", choices=sorted(SOLVERS), help="solver (default: dp)")
    fit.add_argument("--depth", type=_depth, default=3,
                     help="maximum depth (default: 3); 'none' for no limit (dp with --lambda)")
    fit.add_argument("--max-nodes", type=_nonnegative_int, help="maximum number of branch nodes")
    fit.add_argument("--min-leaf", type=_nonnegative_int, help="minimum number of samples in a non-empty leaf")
    fit.add_argument("--penalty", type=_nonnegative_float,
                     help="cost per branch node added to the misclassifications")
    fit.add_argument("--time-limit", type=_positive_float, help="seconds; the best tree so far is returned")
    _add_model_options(fit)
    fit.add_argument("--json", action="store_true", help="print one JSON object on stdout")

    chk = sub.add_parser("check", help="solve with a MIP model and with the DP and compare the optima")
    chk.add_argument("data", help="a bundled dataset name (see `odtmip datasets`) or a file path")
    _add_data_options(chk)
    chk.add_argument("--model", default="gunluk", choices=["gunluk", "binoct", "oct"],
                     help="MIP model (default: gunluk)")
    chk.add_argument("--depth", type=_nonnegative_int, default=2, help="balanced depth (default: 2)")
    chk.add_argument("--time-limit", type=_positive_float, help="seconds per solve")
    chk.add_argument("--min-leaf", type=_nonnegative_int, help="OCT's N_min")
    _add_model_options(chk, constraints=False)
    chk.add_argument("--json", action="store_true", help="print one JSON object on stdout")

    ds = sub.add_parser("datasets", help="list the bundled datasets and the files in the data folder")
    ds.add_argument("--data-dir", help="benchmark data folder (default: $ODTMIP_DATA or ../shared/datasets)")
    ds.add_argument("--json", action="store_true", help="print a JSON list")
    return parser


def _add_data_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", help="target column (CSV/ARFF; default: the last column)")
    p.add_argument("--format", choices=["csv", "arff", "dl85", "txt"], help="file format (default: from the name)")
    p.add_argument("--data-dir", help="benchmark data folder (default: $ODTMIP_DATA or ../shared/datasets)")
    p.add_argument("--numeric", choices=["buckets", "thresholds"], default="buckets",
                   help="encoding of numeric columns (default: buckets = deciles)")
    p.add_argument("--n-buckets", type=int, default=10, help="quantile buckets per numeric column (default: 10)")


def _add_model_options(p: argparse.ArgumentParser, constraints: bool = True) -> None:
    g = p.add_argument_group("MIP model options")
    g.add_argument("--topology", help="tree shape: depth2, depth2.5, depth3, imbalanced, balanced-D or '((L L) L)'")
    g.add_argument("--class-weight", type=_positive_float, help="C: weight of a correct negative (Günlük (8a))")
    g.add_argument("--max-card", type=_nonnegative_int, help="max.card of categorical subsets (Günlük §4.5)")
    g.add_argument("--alpha", type=_nonnegative_float, help="OCT complexity: cost per split, errors counted / L_hat")
    g.add_argument("--lambda", dest="leaf_penalty", type=_nonnegative_float,
                   help="OSDT leaf penalty: objective = errors/N + lambda x leaves (binoct, dp)")
    if constraints:
        g.add_argument("--warm-start", choices=["dp", "cart", "none"],
                       help="start HiGHS from the DP tree (default), a CART tree (oct, oct-h) or nothing")
        target = g.add_mutually_exclusive_group()
        target.add_argument("--min-specificity", type=_fraction, help="maximise sensitivity s.t. TNR >= T")
        target.add_argument("--min-sensitivity", type=_fraction, help="maximise specificity s.t. TPR >= T")


_OPTION_NAMES = {  # command-line dest -> solver option
    "max_nodes": "max_nodes", "min_leaf": "min_leaf", "penalty": "penalty", "topology": "topology",
    "class_weight": "class_weight", "max_card": "max_card", "warm_start": "warm_start",
    "min_specificity": "min_specificity", "min_sensitivity": "min_sensitivity", "alpha": "alpha",
    "leaf_penalty": "leaf_penalty",
}


def _solver_options(args) -> dict:
    return {opt: getattr(args, dest) for dest, opt in _OPTION_NAMES.items() if getattr(args, dest, None) is not None}


def load_dataset(args) -> Dataset:
    """The :class:`Dataset` named by the command-line arguments."""
    X, y = datasets.load(args.data, target=args.target, format=args.format, data_dir=args.data_dir)
    return Dataset(X, y, numeric=args.numeric, n_buckets=args.n_buckets)


def result_record(result: SolveResult, data: Dataset) -> dict:
    """The JSON form of a result: status, objective, bound, gap, recomputed errors, sizes, tree."""
    tree = result.tree
    record = {
        "solver": result.solver,
        "status": result.status.value,
        "stop_reason": result.stop_reason,
        "objective": result.objective,
        "bound": _finite(result.bound),
        "gap": _finite(result.gap),
        "misclassifications": None if tree is None else data.misclassifications(tree),
        "accuracy": None if tree is None else metrics.accuracy(data.y, tree.predict_index(data.X), data.sample_weight),
        "n_samples": data.n_samples,
        "n_features": data.n_features,
        "n_binary_features": data.n_binary,
        "encoding": data.encoder.describe(),
        "depth": None if tree is None else tree.depth,
        "n_branch_nodes": None if tree is None else tree.n_branch_nodes,
        "n_leaves": None if tree is None else tree.n_leaves,
        "seconds": result.seconds,
    }
    for key in ("nodes", "build_seconds", "solve_seconds", "warm_start_accepted"):
        if key in result.stats:
            record[key] = result.stats[key]
    if tree is not None and data.n_classes == 2:  # recomputed rates, class index 1 positive
        rates = metrics.Confusion.from_labels(data.y, tree.predict_index(data.X), data.sample_weight)
        record["tpr"], record["tnr"] = rates.sensitivity, rates.specificity
    record["stats"] = {k: _finite(v) if isinstance(v, float) else v for k, v in result.stats.items()}
    record["tree"] = None if tree is None else tree.to_dict()
    return record


def _finite(x):
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


def _cmd_fit(args) -> int:
    data = load_dataset(args)
    log.info("data: %s", data.describe())
    result = solve(data, args.solver, max_depth=args.depth, time_limit=args.time_limit, **_solver_options(args))
    record = result_record(result, data)
    if args.json:
        print(json.dumps(record))
        return 0
    print(f"data: {args.data}: {data.describe()}")
    if result.tree is not None:
        print(result.tree.to_text())
    print(f"solver: {record['solver']}  status: {record['status']}  time: {result.seconds:.3f} s")
    if result.tree is not None:
        print(f"training accuracy: {record['accuracy']:.4f}  "
              f"misclassifications: {record['misclassifications']:g} of {data.n_samples}  "
              f"objective: {result.objective:g}  bound: {result.bound:g}")
    return 0


def _cmd_check(args) -> int:
    from odtmip.check import check

    data = load_dataset(args)
    report = check(data, args.model, max_depth=args.depth, time_limit=args.time_limit, **_solver_options(args))
    if args.json:
        units = report.problem.in_model_units
        print(json.dumps({"model": report.model, "verdict": report.verdict, "relation": report.relation,
                          "dp_objective": units(report.dp.objective),
                          "dp_deep_objective": units(report.dp_deep.objective),
                          "mip": result_record(report.mip, data), "dp": result_record(report.dp, report.problem.data)}))
        return 0
    print(f"data: {args.data}: {data.describe()}")
    if report.mip.tree is not None:
        print(report.mip.tree.to_text())
    print(report.summary())
    return 0 if report.verdict != "disagree" else 1


def _cmd_datasets(args) -> int:
    table = datasets.list_datasets(data_dir=args.data_dir)
    if args.json:
        print(table.to_json(orient="records"))
    else:
        print(table.to_string(index=False))
        if not any(table["source"].astype(str).str.contains("/")):
            print("(no benchmark data folder found: set ODTMIP_DATA or pass --data-dir)")
    return 0


def main(argv=None) -> int:
    """Entry point of the ``odtmip`` console script."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # argparse: --help (0) or a usage error (2, already printed)
        return int(stop.code or 0)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(name)s: %(message)s")
    try:
        return {"fit": _cmd_fit, "check": _cmd_check, "datasets": _cmd_datasets}[args.command](args)
    except (OdtmipError, FileNotFoundError) as err:
        print(f"odtmip: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
