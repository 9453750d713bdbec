"""The options of every solver, declared once as data (scikit-learn's ``_parameter_constraints`` is the model).

:data:`OPTIONS` maps a solver's name to its :class:`Option` s: name, allowed values, default, what None means
(or that None is not allowed) and a one-line doc. :func:`validate` checks options against that declaration for
:func:`odtmip.solve`, the command line and any estimator; :func:`options_of` and :func:`defaults` list them.

Rules that tie several options or the data together stay with the solver, which raises
:class:`~odtmip.core.exceptions.OptionError` too: ``max_depth=None`` without a positive ``penalty`` or
``leaf_penalty`` (DP), ``penalty`` with ``leaf_penalty`` (DP), ``anchors`` with ``order_symmetry`` and
``min_specificity`` with ``min_sensitivity`` (Günlük), a topology's shape, and what the ``options`` object
holds. The values allowed here are the ones the solvers accept: ``tests/unit/test_options.py`` checks the
defaults and the range edges against them.

Examples
--------
>>> validate("dp", max_depth=None, leaf_penalty=0.01)
{'max_depth': None, 'leaf_penalty': 0.01}
>>> validate("gunluk", max_depth=None)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
odtmip.core.exceptions.OptionError: gunluk needs max_depth: an integer in [1, 12], got None; None (no depth limit...
>>> defaults("binoct")["leaf_penalty"]
0.0
"""

from __future__ import annotations

import importlib
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from numbers import Integral, Real

from odtmip.core.exceptions import OptionError

__all__ = ["BINOCT_OPTIONS", "CLASS_WEIGHT", "CONSTRAINTS", "CONTREE_OPTIONS", "DP_OPTIONS", "GUNLUK_OPTIONS",
           "MEMORY_LIMIT", "MIN_LEAF", "OCT_H_OPTIONS", "OCT_OPTIONS", "OPTIONS", "REQUIRED", "TARGET_OPTIONS",
           "THREADS", "TIME_LIMIT", "Boolean", "Choices", "Instance", "Interval", "Option", "check_threads",
           "check_time_limit", "defaults", "memory_text", "mip_options", "options_of", "physical_memory_gib",
           "validate"]


# ============================================================================================ constraints
def _is_bool(value) -> bool:
    """True for Python's and numpy's booleans (numpy is imported when a value is checked: the tables need none)."""
    import numpy as np

    return isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class Interval:
    """A number of ``kind`` (``int`` or ``float``; floats finite) between ``low`` and ``high`` (None: open end).

    ``closed`` is ``"both"``, ``"left"``, ``"right"`` or ``"neither"``, as in scikit-learn's ``Interval``.
    """

    kind: type
    low: float | None = None
    high: float | None = None
    closed: str = "both"

    def accepts(self, value) -> bool:
        if _is_bool(value):
            return False
        if self.kind is int:
            if not isinstance(value, Integral):
                return False
        elif not (isinstance(value, Real) and math.isfinite(value)):
            return False
        left = self.low is None or value > self.low or (value == self.low and self.closed in ("both", "left"))
        right = self.high is None or value < self.high or (value == self.high and self.closed in ("both", "right"))
        return left and right

    def normalise(self, value):
        return self.kind(value)

    def __str__(self) -> str:
        noun = "an integer" if self.kind is int else "a number"
        lo, hi = (None if x is None else f"{x:g}" for x in (self.low, self.high))
        if lo is not None and hi is not None:
            opening = "[" if self.closed in ("both", "left") else "("
            closing = "]" if self.closed in ("both", "right") else ")"
            return f"{noun} in {opening}{lo}, {hi}{closing}"
        if lo is not None:
            return f"{noun} {'>=' if self.closed in ('both', 'left') else '>'} {lo}"
        if hi is not None:
            return f"{noun} {'<=' if self.closed in ('both', 'right') else '<'} {hi}"
        return noun


@dataclass(frozen=True)
class Choices:
    """One of the strings ``values``."""

    values: tuple[str, ...]

    def accepts(self, value) -> bool:
        return isinstance(value, str) and value in self.values

    def normalise(self, value):
        return value

    def __str__(self) -> str:
        return ("one of " if len(self.values) > 1 else "") + ", ".join(map(repr, self.values))


@dataclass(frozen=True)
class Boolean:
    """True or False."""

    def accepts(self, value) -> bool:
        return _is_bool(value)

    def normalise(self, value):
        return bool(value)

    def __str__(self) -> str:
        return "True or False"


def check_switches(options) -> None:
    """An :class:`~odtmip.core.exceptions.OptionError` for the first field of the dataclass instance ``options`` whose
    default is True or False and whose value is not (``"no"`` or ``0`` would otherwise switch silently)."""
    for f in fields(options):
        value = getattr(options, f.name)
        if isinstance(f.default, bool) and not Boolean().accepts(value):
            raise OptionError(f"{f.name} must be True or False, got {value!r}")


@dataclass(frozen=True)
class Instance:
    """An instance of the class ``target`` (``"module:Class"``, imported only when a value is checked)."""

    target: str

    def accepts(self, value) -> bool:
        module, name = self.target.split(":")
        return isinstance(value, getattr(importlib.import_module(module), name))

    def normalise(self, value):
        return value

    def __str__(self) -> str:
        return "a " + self.target.split(":")[1]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: The default of an option that must be given.
REQUIRED = _Required()


@dataclass(frozen=True)
class Option:
    """One option of a solver.

    Attributes
    ----------
    name : str
        Keyword of the option.
    allowed : tuple
        Constraints (:class:`Interval`, :class:`Choices`, :class:`Boolean`, :class:`Instance`); a value must
        meet one of them.
    default : object
        Value the solver uses when the option is not given; :data:`REQUIRED` when it must be given.
    none : str or None
        What the value None means; None: None is not allowed.
    doc : str
        One line for people (help texts, error messages).
    """

    name: str
    allowed: tuple
    default: object
    none: str | None
    doc: str

    @property
    def description(self) -> str:
        """The allowed values in words, e.g. ``"an integer in [0, 20] or None (no depth limit)"``."""
        words = " or ".join(map(str, self.allowed))
        return words if self.none is None else f"{words} or None ({self.none})"


# ============================================================================================ declaration
# Every solver's options are declared here, as data that imports no engine (``odtmip fit --help`` reads them
# without importing numba or Pyomo); a formulation's Formulation record names its tuple.
TIME_LIMIT = Option("time_limit", (Interval(float, 0, None, "neither"),), None, "no time limit",
                    "seconds; at the limit the best tree so far is returned")
MIN_LEAF = Option("min_leaf", (Interval(int, 1),), 1, None, "rows (unweighted) every non-empty leaf must hold")


def check_time_limit(time_limit) -> float | None:
    """``time_limit`` by the rule of :data:`TIME_LIMIT` (seconds, finite and > 0; None: no limit), as a float, for
    the functions that take it without :func:`validate`: one rule, one message."""
    if time_limit is not None and not TIME_LIMIT.allowed[0].accepts(time_limit):
        raise OptionError(f"time_limit must be {TIME_LIMIT.description}, got {time_limit!r}")
    return None if time_limit is None else float(time_limit)


def physical_memory_gib() -> float:
    """The machine's physical memory in GiB (``os.sysconf``); 8 where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (AttributeError, ValueError, OSError):
        return 8.0


def memory_text(gib: float) -> str:
    """A memory size of ``gib`` GiB for messages: GiB from 1 GiB up, MiB below (never "0.0 GiB")."""
    if gib >= 1:
        return f"{gib:.1f} GiB"
    mib = gib * 1024
    return f"{mib:.0f} MiB" if mib >= 10 else f"{mib:.2g} MiB"


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system says, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


THREADS = Option("threads", (Interval(int, 1),), None, "the cores this process may use",
                 "search threads: the root's subproblems are shared out among them, sharing the cache and the best "
                 "tree (the same tree as one thread)")


def check_threads(threads) -> int:
    """``threads`` by the rule of :data:`THREADS` (a positive integer; None: :func:`usable_cores`), as an int, for the
    solvers that take it without :func:`validate`."""
    if threads is None:
        return usable_cores()
    if not THREADS.allowed[0].accepts(threads):
        raise OptionError(f"threads must be {THREADS.description}, got {threads!r}")
    return int(threads)


#: The default ``memory_limit`` of every solver: half of physical memory, in GiB (rounded down to 0.1).
MEMORY_LIMIT = int(physical_memory_gib() * 5) / 10

MEMORY = Option("memory_limit", (Interval(float, 0, None, "neither"),), MEMORY_LIMIT, "no memory guard",
                "GiB a solve may take, estimated before the large arrays are allocated (a MIP larger than that is "
                "refused; the DP stops growing its cache and returns its best tree); default: half of physical "
                "memory")


CONSTRAINTS = Option("constraints", (Instance("builtins:list"), Instance("builtins:tuple")), None,
                     "no side constraints",
                     "side constraints (odtmip.constraints: fairness, feature budgets, forced and forbidden splits, "
                     "leaf sizes, rows of your own); the DP solvers take those they express exactly")


def mip_options(options_class: str, warm_starts: tuple[str, ...], dp_bounds: bool = True) -> tuple[Option, ...]:
    """The options every MIP formulation takes (the pipeline's, :func:`odtmip.solving.pipeline.solve_mip`): time limit,
    warm start, its options object, HiGHS settings, LP bound, feeding the DP's other trees, the memory guard, and
    (``dp_bounds``) the DP's bound rows."""
    bounds = ("none", "root", "paths") if dp_bounds else ("none",)
    return (
        TIME_LIMIT,
        Option("warm_start", (Choices(warm_starts), Instance("odtmip.core.tree:Tree")), "dp",
               "no warm start, as 'none'",
               "HiGHS starts from the DP optimum over the model's splits ('dp'), a CART tree ('cart'; oct, oct-h), "
               "a given Tree, or nothing ('none')"),
        Option("options", (Instance(options_class),), None, f"the default {options_class.split(':')[1]}()",
               "model options; the keyword options override its fields"),
        Option("highs", (Instance("odtmip.models._highs:HighsOptions"),), None, "the default HighsOptions()",
               "HiGHS settings (the time limit comes from time_limit)"),
        Option("lp_bound", (Boolean(),), False, None,
               "also solve the LP relaxation and report it in stats['lp_relaxation']"),
        Option("feed_dp", (Boolean(),), False, None, "hand HiGHS the other DP start trees during the search"),
        MEMORY,
        CONSTRAINTS,
        Option("dp_bounds", (Choices(bounds),), "none", None,
               "rows from the DP's values below each split: the loss is at least the value of the root's choice "
               "('root'), and of each pair of the root's and a child's choices ('paths'); then the LP may prove the "
               "start optimal" if dp_bounds else
               "'none' only: hyperplane splits have no axis-aligned DP bound"),
    )


#: The options of the DP (``odtmip.dp.solve_dp``).
DP_OPTIONS: tuple[Option, ...] = (
    Option("max_depth", (Interval(int, 0, 20),), 3, "no depth limit, with leaf_penalty > 0 or penalty > 0",
           "largest number of branch nodes on a root-to-leaf path (0: a single leaf)"),
    Option("max_nodes", (Interval(int, 0),), None, "2^max_depth - 1", "largest number of branch nodes"),
    MIN_LEAF,
    Option("penalty", (Interval(float, 0),), 0.0, None,
           "cost per branch node added to the (weighted) misclassifications"),
    Option("leaf_penalty", (Interval(float, 0),), None, "no leaf penalty",
           "lambda: minimise errors / W + lambda x leaves (OSDT), W the total weight; not with a penalty"),
    TIME_LIMIT,
    MEMORY,
    THREADS,
    Option("options", (Instance("odtmip.dp.solver:DPOptions"),), None, "the default DPOptions()",
           "search technique switches (none changes the optimum)"),
    # two-class objectives from the (fp, fn) Pareto front (odtmip.dp.pareto)
    Option("metric", (Choices(("f1", "mcc", "fmi", "balanced-accuracy", "accuracy")),
                      Instance("collections.abc:Callable")), None, "minimise misclassifications",
           "maximise this metric of the confusion counts (two classes; a callable must be monotone in fp, fn)"),
    Option("min_specificity", (Interval(float, 0, 1),), None, "no target",
           "maximise sensitivity (or the metric) s.t. TNR >= T (TN >= ceil(T x negatives))"),
    Option("min_sensitivity", (Interval(float, 0, 1),), None, "no target",
           "maximise specificity (or the metric) s.t. TPR >= T (TP >= ceil(T x positives))"),
    Option("max_false_positives", (Interval(float, 0),), None, "no cap",
           "minimise false negatives (or the metric) s.t. FP <= K (weights)"),
    Option("max_false_negatives", (Interval(float, 0),), None, "no cap",
           "minimise false positives (or the metric) s.t. FN <= K (weights)"),
    Option("positive", (Instance("builtins:object"),), None, "the second label in sorted order",
           "the positive class: a label of the data"),
    Option("pareto_options", (Instance("odtmip.dp.pareto:ParetoOptions"),), None, "the default ParetoOptions()",
           "front-search technique switches (none changes the front)"),
    CONSTRAINTS,
)

#: The options of ConTree (``odtmip.dp.solve_contree``).
CONTREE_OPTIONS: tuple[Option, ...] = (
    Option("max_depth", (Interval(int, 0, 20),), 3, None,
           "largest number of branch nodes on a root-to-leaf path (0: a single leaf)"),
    MIN_LEAF,
    Option("penalty", (Interval(float, 0),), 0.0, None,
           "cost per branch node added to the (weighted) misclassifications"),
    TIME_LIMIT,
    Option("max_gap", (Interval(float, 0, 1, "left"),), 0.0, None,
           "relative gap g: the tree costs at most 1/(1-g) times the optimum (0: exact)"),
    MEMORY,
    THREADS,
    Option("options", (Instance("odtmip.dp.contree:ContreeOptions"),), None, "the default ContreeOptions()",
           "search technique switches (none changes the optimum)"),
    CONSTRAINTS,
)


#: The class weights C the formulations take. C is a ratio of the two classes' costs, and HiGHS decides with
#: tolerances of 1e-9 to 1e-6 relative to the objective's coefficients: near a ratio of 1e6 it no longer tells one
#: row of the cheap class from rounding, and its claimed optimum fails the check by routing (monk1, depth 2:
#: Günlük's at C = 1e9, BinOCT's at C = 1e-5); the DP's sums of weights lose whole rows near C = 1e16 and C x weight
#: overflows near 1e308. The range keeps two orders of magnitude from the first failures; a useful ratio of costs
#: is far inside it.
CLASS_WEIGHT = Interval(float, 1e-4, 1e4)

#: The options of every formulation that takes the two-class objectives (fields of its options dataclass,
#: :mod:`odtmip.models.rates`).
TARGET_OPTIONS: tuple[Option, ...] = (
    Option("class_weight", (CLASS_WEIGHT,), 1.0, None,
           "C: a misclassified negative costs C (objective FN + C FP)"),
    Option("min_specificity", (Interval(float, 0, 1),), None, "no target",
           "minimise FN s.t. TNR >= T (TN >= ceil(T x negatives), weights), [GKLMS] §4.6"),
    Option("min_sensitivity", (Interval(float, 0, 1),), None, "no target",
           "minimise FP s.t. TPR >= T (TP >= ceil(T x positives), weights), [GKLMS] §4.6"),
    Option("positive", (Interval(int, 0, 1),), 1, None,
           "index of the positive class among the Dataset's sorted labels"),
)

#: The options of Günlük et al.'s model (``odtmip.models.gunluk``).
GUNLUK_OPTIONS: tuple[Option, ...] = (
    Option("max_depth", (Interval(int, 1, 12),), 2, None,
           "D: the tree is topology balanced-D (ignored when a topology is given)"),
    *mip_options("odtmip.models.gunluk:GunlukOptions", ("dp", "none")),
    Option("topology", (Instance("builtins:str"),), "depth2", None,
           "tree shape: depth2, depth2.5, depth3, imbalanced, balanced-D or a shape such as '((L L) (L L))'"),
    Option("strengthen", (Boolean(),), True, None, "(11)-(12) instead of (5)-(6), [GKLMS] §4.3.1"),
    Option("anchors", (Boolean(),), True, None, "symmetry breaking (13), [GKLMS] §4.3.2"),
    Option("delete_variables", (Boolean(),), True, None,
           "routing variables only for correct (sample, leaf) pairs (14), [GKLMS] §4.3.3"),
    Option("relax", (Boolean(),), True, None,
           "Proposition 3: v, and z at leaf-adjacent nodes, continuous where valid, [GKLMS] §4.3.4"),
    Option("ordinal", (Boolean(),), True, None, "numeric bucket groups split as thresholds, [GKLMS] §4.4"),
    Option("order_symmetry", (Boolean(),), False, None,
           "the w = 1 symmetry breaking of [GKLMS] §4.4-4.5 (instead of anchors)"),
    Option("max_card", (Interval(int, 1),), None, "no limit", "max.card of categorical subsets, [GKLMS] §4.5"),
    Option("class_weight", (CLASS_WEIGHT,), 1.0, None,
           "C of [GKLMS] (8a): weight of a correct negative"),
    Option("min_specificity", (Interval(float, 0, 1),), None, "no target",
           "maximise sensitivity s.t. TNR >= T, [GKLMS] §4.6 (corrected (15))"),
    Option("min_sensitivity", (Interval(float, 0, 1),), None, "no target",
           "maximise specificity s.t. TPR >= T, [GKLMS] §4.6 (corrected (15))"),
    Option("positive", (Interval(int, 0, 1),), 1, None,
           "index of the positive class among the Dataset's sorted labels"),
    Option("feature_selection", (Boolean(),), False, None,
           "keep only the groups a CART tree uses on 90 percent of the data, [GKLMS] §5"),
    Option("random_state", (Interval(int, 0, 2**32 - 1),), 0, None, "seed of the CART feature selection"),
)

#: The options of BinOCT (``odtmip.models.binoct``).
BINOCT_OPTIONS: tuple[Option, ...] = (
    Option("max_depth", (Interval(int, 1),), REQUIRED, None, "K: depth of the complete tree"),
    *mip_options("odtmip.models.binoct:BinOCTOptions", ("dp", "none")),
    Option("leaf_penalty", (Interval(float, 0),), 0.0, None,
           "lambda: errors / W + lambda x non-empty leaves (RBinOCT); 0: plain BinOCT"),
    Option("thresholds", (Choices(("all", "boundary")),), "all", None,
           "candidate thresholds: every midpoint, or the reference code's class-boundary shortcut"),
    Option("root_pass_through", (Boolean(),), None, "on exactly when leaf_penalty > 0",
           "binary s that makes the single leaf representable"),
    Option("bits", (Choices(("trie", "reference")),), "trie", None,
           "bits per node: the trie depth, or the reference code's 1 + floor(log2 T_max)"),
    Option("surplus_bit_fix", (Boolean(),), True, None, "fix the bits a chosen feature does not use to 0"),
    *TARGET_OPTIONS,
)

_OCT_SHARED = (
    Option("alpha", (Interval(float, 0),), 0.0, None,
           "complexity alpha: objective = errors / L_hat + alpha x splits (OCT-H: x features used)"),
    Option("min_leaf", MIN_LEAF.allowed, 1, None, "N_min: rows (unweighted) every non-empty leaf must hold"),
    Option("mu", (Interval(float, 0, 1, "neither"),), 0.005, None,
           "OCT-H margin of the strict inequality, in scaled units"),
    Option("complexity", (Choices(("features", "splits")),), "features", None,
           "OCT-H complexity term: features used over all splits, or splits"),
    Option("epsilon_floor", (Interval(float, 0, 1, "neither"),), 1e-4, None,
           "lower bound on each feature's epsilon (strict inequalities)"),
    *TARGET_OPTIONS,
)

#: The options of OCT (``odtmip.models.oct``).
OCT_OPTIONS: tuple[Option, ...] = (
    Option("max_depth", (Interval(int, 0, 12),), REQUIRED, None, "D: depth of the complete tree"),
    *mip_options("odtmip.models.oct:OCTOptions", ("dp", "cart", "none")),
    *_OCT_SHARED,
    Option("scaling", (Choices(("rank", "minmax")),), None, "'rank'",
           "feature scaling: ranks, or min-max (an affine map)"),
    Option("hyperplanes", (Boolean(),), False, None, "OCT-H: hyperplane splits (the solver oct-h)"),
)
#: The options of OCT-H (``odtmip.models.oct`` with hyperplane splits).
OCT_H_OPTIONS: tuple[Option, ...] = (
    Option("max_depth", (Interval(int, 0, 12),), REQUIRED, None, "D: depth of the complete tree"),
    *mip_options("odtmip.models.oct:OCTOptions", ("dp", "cart", "none"), dp_bounds=False),
    *_OCT_SHARED,
    Option("scaling", (Choices(("minmax",)),), None, "'minmax'",
           "feature scaling: min-max (a hyperplane in ranks is no hyperplane in the data)"),
)

#: The options of each solver, by solver name: the DP, ConTree and every MIP formulation of
#: :data:`odtmip.models.FORMULATIONS` (whose records name the same tuples).
OPTIONS: Mapping[str, tuple[Option, ...]] = {
    "dp": DP_OPTIONS, "contree": CONTREE_OPTIONS, "gunluk": GUNLUK_OPTIONS, "binoct": BINOCT_OPTIONS,
    "oct": OCT_OPTIONS, "oct-h": OCT_H_OPTIONS,
}


# ============================================================================================ checks
def options_of(solver: str) -> dict[str, Option]:
    """The options of ``solver`` by name, in declaration order."""
    declared = OPTIONS.get(solver)
    if declared is None:
        raise OptionError(f"unknown solver {solver!r}; available: {', '.join(OPTIONS)}")
    return {opt.name: opt for opt in declared}


def defaults(solver: str) -> dict:
    """The default of every option of ``solver`` that has one (required options are left out)."""
    return {name: opt.default for name, opt in options_of(solver).items() if opt.default is not REQUIRED}


def validate(solver: str, **options) -> dict:
    """``options`` checked against the declaration of ``solver``; returns them with numbers as int or float.

    Raises
    ------
    OptionError
        An unknown solver or option (the message lists the solver's options), a required option missing, None
        where None has no meaning, or a value of the wrong type or range (the message names the option, the
        value and what is allowed).
    """
    declared = options_of(solver)
    unknown = sorted(set(options) - set(declared))
    if unknown:
        raise OptionError(f"solver {solver!r} does not take option(s) {', '.join(unknown)}; "
                          f"it takes {', '.join(declared)}")
    checked = {name: _check(solver, declared[name], value) for name, value in options.items()}
    for opt in declared.values():
        if opt.default is REQUIRED and opt.name not in options:
            raise OptionError(f"{solver} needs {opt.name} ({opt.doc}): {opt.description}")
    return checked


def _check(solver: str, opt: Option, value):
    if value is None:
        if opt.none is not None:
            return None
        elsewhere = [(name, opts[opt.name].none) for name, opts in ((s, options_of(s)) for s in OPTIONS)
                     if opt.name in opts and opts[opt.name].none is not None]
        hint = f"; None ({elsewhere[0][1]}) is for {', '.join(s for s, _ in elsewhere)} only" if elsewhere else ""
        raise OptionError(f"{solver} needs {opt.name}: {opt.description}, got None{hint}")
    for constraint in opt.allowed:
        if constraint.accepts(value):
            return constraint.normalise(value)
    raise OptionError(f"{solver}: {opt.name} must be {opt.description}, got {value!r}")
