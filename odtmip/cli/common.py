"""What the commands share: the parser class, ``-v``/``--quiet``, solver options as flags (from their declarations
in :mod:`odtmip.core.options`), the data options and :func:`load_dataset`, the command's clock, and the JSON record of
a result.

Nothing here imports an engine: a command imports numba, Pyomo or scikit-learn when it runs, so that the parser is
built at once (``odtmip --version``, ``odtmip fit --help``).
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from odtmip.core.exceptions import OptionError
from odtmip.core.options import OPTIONS, Boolean, Choices, Interval, Option, validate
from odtmip.solving.solvers import MIN_SECONDS, MIP_SOLVERS

if TYPE_CHECKING:
    from odtmip.core.data import Dataset
    from odtmip.core.results import SolveResult

#: The names of all solver options (odtmip.core.options); the command line passes on those the user gave.
_ALL_OPTIONS = frozenset(opt.name for declared in OPTIONS.values() for opt in declared)


def _declared(name: str) -> list[tuple[str, Option]]:
    """``(solver, declaration)`` of option ``name`` for every solver that takes it."""
    return [(solver, opt) for solver, declared in OPTIONS.items() for opt in declared if opt.name == name]


def _option_type(declared: list[Option], choices: list[str]):
    """An argparse type for an option declared as ``declared``: the text as the declared kind of number, or as
    text; ``none`` is None where some solver gives None a meaning (and it is no choice of its own). Ranges are
    checked by :func:`odtmip.core.options.validate` once the solver is known."""
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


def add_option(p, flag: str, name: str, metavar: str | None = None, **kwargs) -> None:
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


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit code 2 (argparse's usage dump is noise here)
        self.exit(2, f"odtmip: error: {message}\n")


def add_verbosity(p: argparse.ArgumentParser) -> None:
    """``-v`` and ``--quiet``, accepted before and after the subcommand (SUPPRESS: a subcommand's default must
    not overwrite what was given before it)."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                   help="log to stderr which target and file were taken, the data's encoding, and a progress "
                        "line of long solves every 2 s (also shown when stderr is a terminal)")
    g.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                   help="log errors only (no warnings)")


def add_two_class_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("two-class objectives (the (FP, FN) front; dp)")
    add_option(g, "--metric", "metric")
    g.add_argument("--positive", metavar="LABEL", default=argparse.SUPPRESS,
                   help="the positive class, a label of the data (default: the second label in sorted order)")
    add_option(g, "--max-fp", "max_false_positives", "K")
    add_option(g, "--max-fn", "max_false_negatives", "K")


def add_data_options(p: argparse.ArgumentParser) -> None:
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


def add_model_options(p: argparse.ArgumentParser, constraints: bool = True) -> None:
    g = p.add_argument_group("MIP model options")
    add_option(g, "--topology", "topology", "T")
    add_option(g, "--class-weight", "class_weight", "C")
    add_option(g, "--max-card", "max_card", "K")
    add_option(g, "--alpha", "alpha", "A")
    add_option(g, "--lambda", "leaf_penalty", "L")
    if constraints:
        add_option(g, "--warm-start", "warm_start")
        target = g.add_mutually_exclusive_group()
        add_option(target, "--min-specificity", "min_specificity", "T")
        add_option(target, "--min-sensitivity", "min_sensitivity", "T")
    # Every other option a formulation declares, as --its-name (a new formulation's options appear by themselves).
    taken = {action.dest for action in p._actions} | _NO_FLAG
    for name in dict.fromkeys(opt.name for solver in MIP_SOLVERS for opt in OPTIONS[solver]):
        if name in taken:
            continue
        declared = _declared(name)
        flag = "--" + name.replace("_", "-")
        if all(isinstance(c, Boolean) for _, opt in declared for c in opt.allowed):
            g.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS,
                           help=f"{declared[0][1].doc} ({', '.join(s for s, _ in declared)})")
        else:
            add_option(g, flag, name, name.split("_")[-1].upper())


def add_constraint_options(p: argparse.ArgumentParser) -> None:
    """The side constraints (:mod:`odtmip.constraints`) as flags; :func:`constraint_options` reads them."""
    g = p.add_argument_group("side constraints (MIP models; the dp takes --forbid and --min-leaf)")
    g.add_argument("--max-features", type=int, metavar="K", help="the tree reads at most K distinct columns")
    g.add_argument("--forbid", action="append", default=[], metavar="COL", help="no split on column COL (repeatable)")
    g.add_argument("--require", action="append", default=[], metavar="COL[@root]",
                   help="the tree splits on column COL somewhere (COL@root: at its root) (repeatable)")
    for flag, kind in (("--parity", "statistical parity"), ("--equal-opportunity", "equal opportunity (true positive "
                       "rates)"), ("--predictive-equality", "predictive equality (false positive rates)")):
        g.add_argument(flag, action="append", default=[], metavar="COL:GAP",
                       help=f"{kind}: the groups of column COL differ by at most GAP (0..1) (repeatable)")
    g.add_argument("--feature-costs", metavar="FILE",
                   help="a JSON object or a two-column CSV (column, cost) of the columns' costs, with --budget")
    g.add_argument("--budget", type=float, metavar="B", help="the costs of the columns the tree reads add up to <= B")


_FAIRNESS = {"parity": "StatisticalParity", "equal_opportunity": "EqualOpportunity",
             "predictive_equality": "PredictiveEquality"}


def constraint_options(args, solver: str) -> list:
    """The side constraints the command line gives (:func:`add_constraint_options`; ``--min-leaf`` for a model without
    a ``min_leaf`` option is ``MinLeafSize``), as :mod:`odtmip.constraints` objects; an OptionError for bad input."""
    given = [getattr(args, name, None) for name in ("max_features", "forbid", "require", *_FAIRNESS, "feature_costs",
                                                     "budget")]
    min_leaf = getattr(args, "min_leaf", None) is not None and "min_leaf" not in _option_names(solver)
    if not (min_leaf or any(value not in (None, []) for value in given)):
        return []  # no import of the models (a dp fit loads nothing of the MIP stack)
    from odtmip import constraints as sc

    out = []
    if getattr(args, "max_features", None) is not None:
        out.append(sc.MaxFeatures(args.max_features))
    out += [sc.Forbid(col) for col in getattr(args, "forbid", [])]
    for text in getattr(args, "require", []):
        column, at, where = text.rpartition("@") if "@" in text else (text, "", "anywhere")
        if where not in ("root", "anywhere") or not column:
            raise OptionError(f"--require {text}: expected COL or COL@root")
        out.append(sc.Require(column, at=where))
    for dest, name in _FAIRNESS.items():
        for text in getattr(args, dest, []):
            column, colon, gap = text.rpartition(":")
            try:
                value = float(gap)
            except ValueError:
                value = None
            if not colon or not column or value is None or not 0 <= value <= 1:
                raise OptionError(f"--{dest.replace('_', '-')} {text}: expected COL:GAP with GAP a number in [0, 1]")
            out.append(getattr(sc, name)(column, value))
    costs, budget = getattr(args, "feature_costs", None), getattr(args, "budget", None)
    if (costs is None) != (budget is None):
        raise OptionError("--feature-costs and --budget go together")
    if costs is not None:
        out.append(sc.FeatureCosts(read_costs(costs), budget))
    if min_leaf:
        out.append(sc.MinLeafSize(args.min_leaf))
    return out


def _option_names(solver: str) -> set[str]:
    return {opt.name for opt in OPTIONS[solver]}


def read_costs(path: str) -> dict:
    """The costs file of ``--feature-costs``: a JSON object, or CSV lines ``column,cost`` (a header line allowed)."""
    import csv
    import json

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise OptionError(f"--feature-costs {path}: cannot read it ({exc.strerror or exc})") from None
    if text.lstrip().startswith("{"):
        try:
            costs = json.loads(text)
        except json.JSONDecodeError as exc:
            raise OptionError(f"--feature-costs {path}: not a JSON object ({exc.msg}, line {exc.lineno})") from None
    else:
        rows = [row for row in csv.reader(text.splitlines()) if row and any(cell.strip() for cell in row)]
        costs = {}
        for k, row in enumerate(rows):
            if len(row) != 2:
                raise OptionError(f"--feature-costs {path}: line {k + 1} has {len(row)} fields, expected column,cost")
            try:
                costs[row[0].strip()] = float(row[1])
            except ValueError:
                if k:  # only the first line may be a header
                    raise OptionError(f"--feature-costs {path}: line {k + 1}: {row[1]!r} is not a number") from None
    if not isinstance(costs, dict) or not all(isinstance(v, (int, float)) for v in costs.values()):
        raise OptionError(f"--feature-costs {path}: expected a column -> cost mapping of numbers")
    return costs


# Options given as Python objects only (odtmip.solve), and those the `check` command sets itself.
_NO_FLAG = {"options", "highs", "warm_start", "min_specificity", "min_sensitivity", "constraints"}


def solver_options(args, solver: str) -> dict:
    """The solver options given on the command line (and the default depth), checked for ``solver``; with
    ``--log`` a MIP solver also gets HiGHS settings that echo its log."""
    given = {name: value for name, value in vars(args).items() if name in _ALL_OPTIONS and name != "positive"}
    if "min_leaf" in given and not {"min_leaf"} <= _option_names(solver) and "constraints" in _option_names(solver):
        del given["min_leaf"]  # the side constraint MinLeafSize (constraint_options)
    if args.log and solver in MIP_SOLVERS:
        from odtmip.models import HighsOptions

        given["highs"] = HighsOptions(log=True)
    return validate(solver, **given)


def process_start() -> float:
    """When this process started, on the clock of ``time.perf_counter()`` (Linux: its start time in
    ``/proc/self/stat``, so that the interpreter's start and every import count); elsewhere now."""
    now = time.perf_counter()
    try:
        with open("/proc/self/stat") as f:
            start = int(f.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
        return now - max(time.clock_gettime(time.CLOCK_BOOTTIME) - start, 0.0)
    except (OSError, ValueError, IndexError, AttributeError):
        return now


def time_left(args, limit: float | None) -> float | None:
    """What is left now of a time limit the command was given: it counts from the command's start."""
    return None if limit is None else max(limit - (time.perf_counter() - args.started), MIN_SECONDS)


def load_dataset(args) -> Dataset:
    """The :class:`Dataset` named by the command-line arguments."""
    from odtmip.core import datasets, deploy
    from odtmip.core.data import Dataset

    X, y = datasets.load(args.data, target=args.target, format=args.format, data_dir=args.data_dir,
                         na_values=args.na_values, decimal=args.decimal, drop=args.drop,
                         categorical=args.categorical)
    X, weights = deploy.split_weight(X, getattr(args, "weight", None), args.data)
    return Dataset(X, y, weights, numeric=args.numeric, n_buckets=args.n_buckets,
                   force_classification=args.classification, allow_many_levels=args.allow_many_levels)


def data_and_options(args, solver: str) -> tuple[Dataset, dict]:
    """The dataset the command names and the options it gives ``solver``, checked (``--positive`` as the solver
    takes it)."""
    options = solver_options(args, solver)
    constraints = constraint_options(args, solver)
    data = load_dataset(args)
    options.update(positive_option(args, data, solver))
    if constraints:
        options["constraints"] = constraints
    return data, options


def positive_option(args, data: Dataset, solver: str) -> dict:
    """``--positive LABEL`` as the solver takes it: the label for the DP, its class index for a MIP model."""
    if getattr(args, "positive", None) is None:
        return {}
    from odtmip.core.metrics import positive_index

    index = positive_index(data.classes_, args.positive)
    if not any(opt.name == "positive" for opt in OPTIONS[solver]):
        raise OptionError(f"solver {solver!r} does not take option(s) positive")
    return {"positive": data.classes_[index] if solver == "dp" else index}


def numeric_splits(data: Dataset, solver: str) -> str | None:
    """How ``solver`` splits the numeric columns of ``data`` where not on their binary columns (the encoding's
    buckets or thresholds), for the ``data:`` line; None where it does, or where there are none."""
    from odtmip.core.binarize import NUMERIC_KINDS

    if not any(g.kind in NUMERIC_KINDS for g in data.groups):
        return None
    if solver == "contree" or solver == "dp" and data.every_threshold:
        return "every midpoint"
    if solver in MIP_SOLVERS:
        from odtmip.models import FORMULATIONS

        if FORMULATIONS[solver].reads_numbers:
            return "read as numbers by the model"
    return None


def model_splits(data: Dataset, solver: str) -> str:
    """The splits of a MIP model that does not name them: the encoding's binary columns, and the numbers of the
    numeric columns where the model reads them."""
    numeric = numeric_splits(data, solver)
    return "the binary columns of the encoding" + ("" if numeric is None else f"; numeric columns {numeric}")


def result_record(result: SolveResult, data: Dataset) -> dict:
    """The JSON form of a result: status, objective, bound, gap, recomputed errors, sizes, tree."""
    from odtmip.core import metrics

    tree = result.tree
    record = {
        "solver": result.solver,
        "target": data.target,
        "status": result.status.value,
        "stop_reason": result.stop_reason,
        "objective": result.objective,
        "bound": finite(result.bound),
        "gap": finite(result.gap),
        "misclassifications": None if tree is None else data.misclassifications(tree),
        "accuracy": None if tree is None else metrics.accuracy(data.y, tree.predict_index(data.raw),
                                                               data.sample_weight),
        "n_samples": data.n_samples,
        "n_features": data.n_features,
        "n_binary_features": data.n_binary,
        "encoding": data.encoder.describe(),
        "split_space": result.stats.get("split_space", model_splits(data, result.solver)),
        "depth": None if tree is None else tree.depth,
        "n_branch_nodes": None if tree is None else tree.n_branch_nodes,
        "n_leaves": None if tree is None else tree.n_leaves,
        "seconds": result.seconds,
    }
    for key in ("nodes", "build_seconds", "solve_seconds", "compile_seconds", "warm_start_accepted"):
        if key in result.stats:
            record[key] = result.stats[key]
    if tree is not None and data.n_classes == 2:  # recomputed rates, the solve's positive class (default index 1)
        rates = metrics.Confusion.from_labels(data.y, tree.predict_index(data.raw), data.sample_weight,
                                              positive=result.stats.get("positive_index", 1))
        record["tpr"], record["tnr"], record["f1"] = rates.sensitivity, rates.specificity, rates.f1
        if "metric_value" in result.stats:
            record[result.stats["metric"]] = result.stats["metric_value"]
    record["stats"] = {k: finite(v) if isinstance(v, float) else v for k, v in result.stats.items()}
    record["tree"] = None if tree is None else tree.to_dict()
    return record


def finite(x):
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


def fmt(x) -> str:
    return "none" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.6g}"


# ------------------------------------------------------------------ files the commands write
def output_file(text: str) -> str:
    """An argparse type for a file a command writes: its folder must exist, so that a missing one is refused when
    the command line is read, before any work."""
    folder = Path(text).parent
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write {text}: folder {str(folder)!r} "
                                         f"{'is not a folder' if folder.exists() else 'does not exist'}")
    return text


def image_file(text: str) -> str:
    """An argparse type for a file matplotlib draws into: :func:`output_file`, named with the extension of an image
    format matplotlib writes (matplotlib picks the format by it)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise argparse.ArgumentTypeError("drawing needs matplotlib: pip install 'odtmip[plot]'") from None
    formats = Figure().canvas.get_supported_filetypes()
    if Path(text).suffix.lower().lstrip(".") not in formats:
        raise argparse.ArgumentTypeError(f"cannot draw into {text}: name the file with the extension of a format "
                                         f"matplotlib writes ({', '.join(sorted(formats))})")
    return output_file(text)
