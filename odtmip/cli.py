"""The ``odtmip`` command: a thin layer over :mod:`odtmip.datasets`, :class:`~odtmip.data.Dataset` and
:func:`odtmip.solvers.solve`.

Bad input prints one line ``odtmip: error: ...`` to stderr and exits with code 2. With ``--json`` exactly one
JSON object is written to stdout; logs go to stderr. A reader that closes stdout early (``| head``) ends the
command quietly with exit code 141, as a shell reports a process that a broken pipe stopped.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import os
import sys
import warnings

from odtmip import __version__, datasets, deploy, metrics, progress
from odtmip.binarize import NUMERIC_KINDS
from odtmip.check import MODELS
from odtmip.compare import Variant, add_compare_command, grid, run_compare, solve_cell
from odtmip.data import Dataset
from odtmip.exceptions import OdtmipError, OptionError
from odtmip.front import add_front_command, run_front
from odtmip.models import FORMULATIONS, HighsOptions
from odtmip.options import OPTIONS, Boolean, Choices, Interval, Option, validate
from odtmip.results import SolveResult
from odtmip.solvers import SOLVERS, solve

log = logging.getLogger("odtmip")

#: Exit code after a closed stdout: 128 + SIGPIPE, what a shell reports for ``yes | head``.
_BROKEN_PIPE = 141

#: The names of all solver options (odtmip.options); the command line passes on those the user gave.
_ALL_OPTIONS = frozenset(opt.name for declared in OPTIONS.values() for opt in declared)


def _declared(name: str) -> list[tuple[str, Option]]:
    """``(solver, declaration)`` of option ``name`` for every solver that takes it."""
    return [(solver, opt) for solver, declared in OPTIONS.items() for opt in declared if opt.name == name]


def _option_type(declared: list[Option], choices: list[str]):
    """An argparse type for an option declared as ``declared``: the text as the declared kind of number, or as
    text; ``none`` is None where some solver gives None a meaning (and it is no choice of its own). Ranges are
    checked by :func:`odtmip.options.validate` once the solver is known."""
    kinds = {c.kind for opt in declared for c in opt.allowed if isinstance(c, Interval)}
    cast, kind = (float, "a number") if float in kinds else (int, "a whole number") if kinds else (str, "text")
    none = any(opt.none is not None for opt in declared) and "none" not in choices

    def parse(text: str):
        if none and text.strip().lower() == "none":
            return None
        try:
            return cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {kind}{' or none' if none else ''}, got {text!r}") from None

    return parse


def _add_option(p, flag: str, name: str, metavar: str | None = None, **kwargs) -> None:
    """Add ``flag`` for solver option ``name``, with type and help from its declaration; it reaches the solver
    only when given (unless ``kwargs`` has a default)."""
    declared = _declared(name)
    choices = list(dict.fromkeys(v for _, opt in declared for c in opt.allowed if isinstance(c, Choices)
                                 for v in c.values))
    if choices:
        metavar = "{" + ",".join(choices) + "}"
    kwargs.setdefault("help", f"{declared[0][1].doc} ({', '.join(s for s, _ in declared)})")
    kwargs.setdefault("default", argparse.SUPPRESS)
    p.add_argument(flag, dest=name, type=_option_type([opt for _, opt in declared], choices), metavar=metavar,
                   **kwargs)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit code 2 (argparse's usage dump is noise here)
        self.exit(2, f"odtmip: error: {message}\n")


def _add_verbosity(p: argparse.ArgumentParser) -> None:
    """``-v`` and ``--quiet``, accepted before and after the subcommand (SUPPRESS: a subcommand's default must
    not overwrite what was given before it)."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                   help="log to stderr which target and file were taken, the data's encoding, and a progress "
                        "line of long solves every 2 s (also shown when stderr is a terminal)")
    g.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                   help="log errors only (no warnings)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="odtmip", description="Optimal classification trees: a DP and MIP models on HiGHS.")
    parser.add_argument("--version", action="version", version=f"odtmip {__version__}")
    _add_verbosity(parser)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    fit = sub.add_parser("fit", help="fit an optimal tree to a dataset")
    fit.add_argument("data", help="a bundled dataset name (see `odtmip datasets`) or a file path")
    _add_data_options(fit)
    fit.add_argument("--solver", default="dp", choices=sorted(SOLVERS), help="solver (default: dp)")
    _add_option(fit, "--depth", "max_depth", "D", default=3,
                help="maximum depth (default: 3); 'none' for no limit (dp with --lambda or --penalty)")
    _add_option(fit, "--max-nodes", "max_nodes", "N")
    _add_option(fit, "--min-leaf", "min_leaf", "K")
    _add_option(fit, "--penalty", "penalty", "A")
    _add_option(fit, "--time-limit", "time_limit", "S")
    _add_two_class_options(fit)
    _add_option(fit, "--max-gap", "max_gap", "G")
    _add_model_options(fit)
    fit.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    fit.add_argument("--log", action="store_true", help="stream the solver's log to stderr")
    deploy.add_fit_options(fit)
    _add_verbosity(fit)

    chk = sub.add_parser("check", help="solve with a MIP model and with the DP and compare the optima")
    chk.add_argument("data", help="a bundled dataset name (see `odtmip datasets`) or a file path")
    _add_data_options(chk)
    chk.add_argument("--model", default="gunluk", choices=MODELS, help="MIP model (default: gunluk)")
    _add_option(chk, "--depth", "max_depth", "D", default=2, help="balanced depth (default: 2)")
    _add_option(chk, "--time-limit", "time_limit", "S", help="seconds per solve")
    _add_option(chk, "--min-leaf", "min_leaf", "K")
    chk.add_argument("--positive", metavar="LABEL", default=argparse.SUPPRESS,
                     help="the positive class of a target, a label of the data (default: the second label)")
    target = chk.add_mutually_exclusive_group()
    _add_option(target, "--min-specificity", "min_specificity", "T")
    _add_option(target, "--min-sensitivity", "min_sensitivity", "T")
    _add_model_options(chk, constraints=False)
    chk.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    chk.add_argument("--log", action="store_true", help="stream the solvers' logs to stderr")
    _add_verbosity(chk)

    ds = sub.add_parser("datasets", help="list the bundled datasets and the files in the data folder")
    ds.add_argument("--data-dir", help="benchmark data folder (default: $ODTMIP_DATA or ../shared/datasets)")
    ds.add_argument("--json", action="store_true", help="print a JSON list")
    _add_verbosity(ds)
    add_compare_command(sub)
    front = add_front_command(sub)
    _add_data_options(front)
    _add_verbosity(front)
    _add_verbosity(deploy.add_predict_command(sub))
    _add_verbosity(deploy.add_show_command(sub))
    return parser


def _add_two_class_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("two-class objectives (the (FP, FN) front; dp)")
    _add_option(g, "--metric", "metric")
    g.add_argument("--positive", metavar="LABEL", default=argparse.SUPPRESS,
                   help="the positive class, a label of the data (default: the second label in sorted order)")
    _add_option(g, "--max-fp", "max_false_positives", "K")
    _add_option(g, "--max-fn", "max_false_negatives", "K")


def _add_data_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("data options")
    g.add_argument("--target", metavar="COL",
                   help="the label column; default: fixed for bundled sets (class) and dl85/txt files (the first "
                        "value), for CSV/ARFF the one column named class, label, target or y (any case), else an "
                        "error that lists the columns")
    g.add_argument("--classification", action="store_true",
                   help="take the target as class labels even when it looks like a regression target (more than "
                        "20 distinct numbers, some not whole or more than half the rows) or holds dates")
    g.add_argument("--drop", action="append", default=[], metavar="COL", help="leave out column COL (repeatable)")
    g.add_argument("--categorical", action="append", default=[], metavar="COL",
                   help="read column COL as categorical whatever its values (repeatable)")
    g.add_argument("--na-values", action="append", default=[], metavar="TEXT",
                   help="one more missing-value marker in a CSV file, besides '', ?, NA, NaN and nan (repeatable)")
    g.add_argument("--decimal", choices=[".", ","],
                   help="decimal mark of CSV numbers written like 1,5 or 1,234.5 (default: detected, with a warning)")
    g.add_argument("--allow-many-levels", action="store_true",
                   help="accept categorical columns with more than 10 levels and more levels than half the rows "
                        "(default: an error, as for an ID column)")
    g.add_argument("--format", choices=["csv", "arff", "dl85", "txt"], help="file format (default: from the name)")
    g.add_argument("--data-dir", help="benchmark data folder (default: $ODTMIP_DATA or ../shared/datasets)")
    g.add_argument("--numeric", choices=["auto", "buckets", "thresholds"], default="auto",
                   help="encoding of numeric columns: auto (default) = the dp searches every threshold, the MIP "
                        "models use deciles; buckets = deciles for every solver; thresholds = every midpoint as a "
                        "binary column; a column with missing values also gets an 'is missing' column")
    g.add_argument("--n-buckets", type=int, default=10, help="quantile buckets per numeric column (default: 10)")


def _add_model_options(p: argparse.ArgumentParser, constraints: bool = True) -> None:
    g = p.add_argument_group("MIP model options")
    _add_option(g, "--topology", "topology", "T")
    _add_option(g, "--class-weight", "class_weight", "C")
    _add_option(g, "--max-card", "max_card", "K")
    _add_option(g, "--alpha", "alpha", "A")
    _add_option(g, "--lambda", "leaf_penalty", "L")
    if constraints:
        _add_option(g, "--warm-start", "warm_start")
        target = g.add_mutually_exclusive_group()
        _add_option(target, "--min-specificity", "min_specificity", "T")
        _add_option(target, "--min-sensitivity", "min_sensitivity", "T")
    # Every other option a formulation declares, as --its-name (a new formulation's options appear by themselves).
    taken = {action.dest for action in p._actions} | _NO_FLAG
    for name in dict.fromkeys(opt.name for f in FORMULATIONS.values() for opt in f.options):
        if name in taken:
            continue
        declared = _declared(name)
        flag = "--" + name.replace("_", "-")
        if all(isinstance(c, Boolean) for _, opt in declared for c in opt.allowed):
            g.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS,
                           help=f"{declared[0][1].doc} ({', '.join(s for s, _ in declared)})")
        else:
            _add_option(g, flag, name, name.split("_")[-1].upper())


# Options given as Python objects only (odtmip.solve), and those the `check` command sets itself.
_NO_FLAG = {"options", "highs", "warm_start", "min_specificity", "min_sensitivity"}


def _solver_options(args, solver: str) -> dict:
    """The solver options given on the command line (and the default depth), checked for ``solver``; with
    ``--log`` a MIP solver also gets HiGHS settings that echo its log."""
    given = {name: value for name, value in vars(args).items() if name in _ALL_OPTIONS and name != "positive"}
    if args.log and solver not in ("dp", "contree"):
        given["highs"] = HighsOptions(log=True)
    return validate(solver, **given)


def load_dataset(args) -> Dataset:
    """The :class:`Dataset` named by the command-line arguments."""
    X, y = datasets.load(args.data, target=args.target, format=args.format, data_dir=args.data_dir,
                         na_values=args.na_values, decimal=args.decimal, drop=args.drop,
                         categorical=args.categorical)
    X, weights = deploy.split_weight(X, getattr(args, "weight", None), args.data)
    return Dataset(X, y, weights, numeric=args.numeric, n_buckets=args.n_buckets,
                   force_classification=args.classification, allow_many_levels=args.allow_many_levels)


def _positive(args, data: Dataset, solver: str) -> dict:
    """``--positive LABEL`` as the solver takes it: the label for the DP, its class index for a MIP model."""
    if getattr(args, "positive", None) is None:
        return {}
    index = metrics.positive_index(data.classes_, args.positive)
    if not any(opt.name == "positive" for opt in OPTIONS[solver]):
        raise OptionError(f"solver {solver!r} does not take option(s) positive")
    return {"positive": data.classes_[index] if solver == "dp" else index}


def _numeric_splits(data: Dataset, solver: str) -> str | None:
    """How ``solver`` splits the numeric columns of ``data`` where not on their binary columns (the encoding's
    buckets or thresholds), for the ``data:`` line; None where it does, or where there are none."""
    if not any(g.kind in NUMERIC_KINDS for g in data.groups):
        return None
    if solver == "contree" or solver == "dp" and data.every_threshold:
        return "every midpoint"
    return "read as numbers by the model" if solver in FORMULATIONS and FORMULATIONS[solver].reads_numbers else None


def result_record(result: SolveResult, data: Dataset) -> dict:
    """The JSON form of a result: status, objective, bound, gap, recomputed errors, sizes, tree."""
    tree = result.tree
    record = {
        "solver": result.solver,
        "target": data.target,
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
        "split_space": result.stats.get("split_space", _model_splits(data, result.solver)),
        "depth": None if tree is None else tree.depth,
        "n_branch_nodes": None if tree is None else tree.n_branch_nodes,
        "n_leaves": None if tree is None else tree.n_leaves,
        "seconds": result.seconds,
    }
    for key in ("nodes", "build_seconds", "solve_seconds", "compile_seconds", "warm_start_accepted"):
        if key in result.stats:
            record[key] = result.stats[key]
    if tree is not None and data.n_classes == 2:  # recomputed rates, the solve's positive class (default index 1)
        rates = metrics.Confusion.from_labels(data.y, tree.predict_index(data.X), data.sample_weight,
                                              positive=result.stats.get("positive_index", 1))
        record["tpr"], record["tnr"], record["f1"] = rates.sensitivity, rates.specificity, rates.f1
        if "metric_value" in result.stats:
            record[result.stats["metric"]] = result.stats["metric_value"]
    record["stats"] = {k: _finite(v) if isinstance(v, float) else v for k, v in result.stats.items()}
    record["tree"] = None if tree is None else tree.to_dict()
    return record


def _model_splits(data: Dataset, solver: str) -> str:
    """The splits of a MIP model that does not name them: the encoding's binary columns, and the numbers of the
    numeric columns where the model reads them."""
    numeric = _numeric_splits(data, solver)
    return "the binary columns of the encoding" + ("" if numeric is None else f"; numeric columns {numeric}")


def _finite(x):
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


def _cmd_fit(args) -> int:
    options = _solver_options(args, args.solver)
    data = load_dataset(args)
    options.update(_positive(args, data, args.solver))
    described = data.describe(_numeric_splits(data, args.solver))
    log.info("data: %s", described)
    result = solve(data, args.solver, **options)
    record = result_record(result, data)
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
    print(f"solver: {record['solver']}{engine}  status: {record['status']}  time: {result.seconds:.3f} s"
          + (f" ({interpreted:.3f} s of it interpreted, before the compiled kernels took over)" if interpreted else "")
          + (f" (+ {compiled:.3f} s compiling or loading the numba kernels)" if compiled else ""))
    print(f"optimal over: {record['split_space']}")
    if result.tree is not None:
        print(f"training accuracy: {record['accuracy']:.4f}  "
              f"misclassifications: {record['misclassifications']:g} of {data.n_samples}  "
              f"objective: {result.objective:g}  bound: {result.bound:g}")
    if "tpr" in record:
        line = f"sensitivity: {record['tpr']:.4f}  specificity: {record['tnr']:.4f}  f1: {record['f1']:.4f}"
        if "metric_value" in result.stats and result.stats["metric"] != "f1":
            line += f"  {result.stats['metric']}: {result.stats['metric_value']:.4f}"
        print(line)
    return 0


def _cmd_check(args) -> int:
    """One cell of ``odtmip compare``: the model (with the DP's warm start and LP bound) and the DP, the verdict,
    and the comparison's row (sizes, LP and root bounds, nodes, times)."""
    options = _solver_options(args, args.model)
    data = load_dataset(args)
    options.update(_positive(args, data, args.model))
    depth, time_limit = options.pop("max_depth"), options.pop("time_limit", None)
    options.pop("highs", None)  # --log: the cell echoes HiGHS's log itself
    (cell,) = grid({args.data: data}, [Variant(args.model, options)], depths=[depth], time_limit=time_limit)
    row, report, _ = solve_cell(dataclasses.replace(cell, log=args.log), dp_required=True)
    if args.json:
        units = report.problem.in_model_units
        print(json.dumps({"model": report.model, "verdict": report.verdict, "relation": report.relation,
                          "dp_objective": units(report.dp.objective),
                          "dp_deep_objective": units(report.dp_deep.objective),
                          "mip": result_record(report.mip, data), "dp": result_record(report.dp, report.problem.data),
                          "row": {k: _finite(v) if isinstance(v, float) else v for k, v in row.items()}}))
        return 0
    print(f"data: {args.data}: {data.describe(_numeric_splits(data, args.model))}")
    if report.mip.tree is not None:
        print(report.mip.tree.to_text())
    print(report.summary())
    print(f"model size: {row['n_constraints']:,} rows, {row['n_variables']:,} columns ({row['n_binaries']:,} binary), "
          f"{row['n_nonzeros']:,} nonzeros; LP bound {_fmt(row['lp_bound'])}, root bound {_fmt(row['root_bound'])}, "
          f"{row['nodes']} nodes")
    return 0 if report.verdict != "disagree" else 1


def _fmt(x) -> str:
    return "none" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.6g}"


def _cmd_datasets(args) -> int:
    table = datasets.list_datasets(data_dir=args.data_dir)
    if args.json:
        print(table.to_json(orient="records"))
    else:
        print(table.to_string(index=False))
        if not any(table["source"].astype(str).str.contains("/")):
            print("(no benchmark data folder found: set ODTMIP_DATA or pass --data-dir)")
    return 0


def _log_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A Python warning (e.g. unseen categories in ``odtmip predict``) as one log line, which --quiet silences."""
    log.warning("%s", message)


def main(argv=None) -> int:
    """Entry point of the ``odtmip`` console script."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # argparse: --help/--version (0) or a usage error (2, already printed)
        return int(stop.code or 0)
    verbose, quiet = getattr(args, "verbose", False), getattr(args, "quiet", False)
    if verbose and quiet:
        print("odtmip: error: --verbose and --quiet exclude each other", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO if verbose else logging.ERROR if quiet else logging.WARNING,
                        stream=sys.stderr, format="%(name)s: %(message)s")
    log.setLevel(logging.DEBUG if getattr(args, "log", False) else logging.NOTSET)
    # progress lines of long solves (odtmip.progress): on a terminal, or with -v; never with --quiet
    progress.logger.setLevel(logging.INFO if not quiet and (verbose or sys.stderr.isatty()) else logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _log_warning
            code = {"fit": _cmd_fit, "check": _cmd_check, "datasets": _cmd_datasets,
                    "compare": run_compare, "front": run_front, "predict": deploy.run_predict,
                    "show": deploy.run_show}[args.command](args)
        sys.stdout.flush()  # a closed pipe shows here, inside the try, not at interpreter exit
        return code
    except BrokenPipeError:  # the Python docs' recipe: no traceback, and nothing more for stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return _BROKEN_PIPE
    except (OdtmipError, OSError) as err:  # OSError: a file that cannot be read or written
        print(f"odtmip: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
