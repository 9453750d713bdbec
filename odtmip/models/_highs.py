"""HiGHS adapter: the only module that touches ``highspy`` or Pyomo internals.

Formulation modules build a linear ``pyo.ConcreteModel`` with one objective (either sense) and call
:func:`solve`, :func:`lp_relaxation` or :func:`model_statistics`. Everything is reported in the model's
own sense; converting to a loss is the formulation's job.

How the model reaches HiGHS
---------------------------
:func:`_read_linear` reads the model straight into arrays (the matrix row-wise), which go to
``Highs.passModel``: intact :class:`odtmip.models.rows.LinearRows` families as they are, every other active
constraint by walking its expression tree (sums, negations, products and quotients by constants, named
``Expression`` components, variables, constants). Any model it does not handle (other expression nodes, e.g.
nonlinear ones, or component types such as SOS constraints or export suffixes) goes through Pyomo's
``LinearStandardFormCompiler`` (``pyomo.repn.plugins.standard_form``, needs scipy) instead; both give the same
rows and columns in the same order. This module therefore owns the column ↔ variable map, bounds, integrality,
the objective sense and constant, and loading values back. Variables that are fixed or appear nowhere get no
column; they keep their Pyomo values. Python's cyclic garbage collector is paused while a model is read
(:func:`paused_gc`).

Measured on odtmip's Günlük depth-3 model (``benchmarks/mip_build.py``: fresh process per run, minimum of 7,
wall seconds on a shared 2-core box, highspy 1.15.1, Pyomo 6.10.1). "Rules" is the same model with every row an
indexed ``Constraint`` rule and this reader walking the expressions; "arrays" is the model as built now, with
the per-sample rows as ``LinearRows``; "direct" builds the same matrix with numpy and passes it to HiGHS:

=========  ==============================  ===================  ====================  =========
N          rows / columns / nonzeros       rules: build + hand  arrays: build + hand  direct
=========  ==============================  ===================  ====================  =========
2 000      20 317 / 8 350 / 224 690        0.15 + 0.15 s        0.015 + 0.013 s       0.015 s
10 000     100 317 / 40 350 / 1 120 690    0.76 + 0.83 s        0.062 + 0.055 s       0.063 s
=========  ==============================  ===================  ====================  =========

Where the remaining time goes at N = 10 000: making the 40 000 Pyomo variables c (0.015 s), the routing rows'
arrays (0.02 s), walking the objective and numbering the columns (0.01 s), bounds and integrality (0.007 s),
``passModel`` (0.016 s, as for the direct build). ``passModel`` takes the row-wise matrix 2-3x faster than the
column-wise one (HiGHS stores it column-wise either way). Pyomo's standard-form compiler took 1.9 s of CPU on
the rule-built model, and the contrib ``set_instance`` route 11.5 s.

Other decisions, each measured
------------------------------
* A fresh ``highspy.Highs`` per call. A re-used object silently warm-starts from its previous solution.
* Nothing HiGHS writes reaches the process's stdout: its log goes to a logging callback, and whatever it writes
  to the console itself (highspy 1.16 prints a banner when a ``Highs`` is made) is captured at the file
  descriptor level (:func:`console_captured`). The text lands in :attr:`MipRun.log`, and on stderr when
  ``HighsOptions.log`` is true.
* No decision is read from HiGHS's log, whose wording changes between releases. A partial warm start is
  completed here, in a separate ``Highs`` (:func:`_complete_starts`), and checked by linear algebra
  (:func:`_feasible_start`), so HiGHS only ever receives full, feasible starts; whether it kept one is read
  from its incumbent (:func:`_start_verdict`).
* HiGHS fixes its global thread scheduler at the first run in a process. When the requested ``threads``
  differs from the previous run's, we reset it (``Highs.resetGlobalScheduler``). Do not run solves with
  different thread counts concurrently in one process.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import logging
import math
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from numbers import Integral, Real
from operator import attrgetter
from typing import Any

import numpy as np

from odtmip.exceptions import OptionError, SolverUnavailableError
from odtmip.results import Status

__all__ = [
    "HighsOptions",
    "MipRun",
    "highs_available",
    "lp_relaxation",
    "model_statistics",
    "paused_gc",
    "require_highs",
    "solve",
    "to_highs",
]

logger = logging.getLogger("odtmip")

HIGHSPY_RANGE = ">=1.15.0,<1.17"  # as pyproject.toml declares it (a test holds the two together)
INSTALL_HINT = f"HiGHS is not available: install it with `pip install 'highspy{HIGHSPY_RANGE}'`."

# Options that HighsOptions sets through its own fields, or that this adapter must control itself.
_RESERVED = {
    "time_limit": "HighsOptions.time_limit",
    "mip_rel_gap": "HighsOptions.mip_rel_gap",
    "threads": "HighsOptions.threads",
    "random_seed": "HighsOptions.seed",
    "mip_lp_solver": "HighsOptions.lp_solver",
    "solver": "HighsOptions.lp_solver",
    "output_flag": "HighsOptions.log (the log is always captured)",
    "log_to_console": "HighsOptions.log (the log is always captured)",
}
_LP_SOLVERS = ("choose", "simplex", "ipm")

# Relative tolerance below which HiGHS's primal and dual bounds count as equal (a proven optimum).
_CLOSED_GAP = 1e-6


# ====================================================================================================
# Availability


# The oldest highspy odtmip supports (the lower end of HIGHSPY_RANGE; .ci/run tests both ends of the range).
OLDEST_HIGHSPY = (1, 15, 0)


def _highspy():
    """Import and return ``highspy``, or raise :class:`SolverUnavailableError`."""
    try:
        import highspy
    except ImportError as exc:
        raise SolverUnavailableError(INSTALL_HINT) from exc
    version = _release(highspy)
    if version is not None and version < OLDEST_HIGHSPY:
        raise SolverUnavailableError(f"highspy {'.'.join(map(str, version))} is too old for odtmip. {INSTALL_HINT}")
    return highspy


def _release(module) -> tuple[int, ...] | None:
    """The installed distribution's release numbers, e.g. (1, 16, 0); None when they cannot be read."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        text = version(module.__name__)
    except PackageNotFoundError:
        return None
    numbers = []
    for part in text.split(".")[:3]:
        digits = "".join(itertools.takewhile(str.isdigit, part))
        if not digits:
            break
        numbers.append(int(digits))
    return tuple(numbers) or None


def highs_available() -> bool:
    """True when ``highspy`` and scipy (needed to hand a model to HiGHS) can be imported."""
    try:
        require_highs()
    except SolverUnavailableError:
        return False
    return True


def require_highs() -> None:
    """Raise :class:`~odtmip.exceptions.SolverUnavailableError` with an install hint when HiGHS is missing."""
    _highspy()
    try:
        import scipy.sparse  # noqa: F401  (Pyomo's standard-form compiler needs it)
    except ImportError as exc:
        raise SolverUnavailableError(
            "scipy is not available; odtmip needs it to pass models to HiGHS: `pip install scipy`."
        ) from exc


# ====================================================================================================
# Options and results


@dataclass(frozen=True)
class HighsOptions:
    """Settings of one HiGHS run.

    Parameters
    ----------
    time_limit : float or None, default=None
        Seconds of HiGHS run time (the hand-off is not counted); ``None`` means no limit.
    mip_rel_gap : float or None, default=0.0
        HiGHS ``mip_rel_gap``. odtmip's default 0 asks for a proof (HiGHS's own default, 1e-4, lets a tree model
        with an objective near N stop one sample short); ``None`` keeps HiGHS's default. A run that stops on a
        positive gap is reported as ``Status.TIME_LIMIT`` with ``stop_reason="gap"``.
    threads : int or None, default=None
        HiGHS ``threads``; ``None`` lets HiGHS choose.
    seed : int or None, default=None
        HiGHS ``random_seed``.
    log : bool, default=False
        Echo the HiGHS log to stderr. The log is captured in :attr:`MipRun.log` either way.
    lp_solver : {"choose", "simplex", "ipm"} or None, default=None
        LP algorithm: HiGHS ``mip_lp_solver`` in :func:`solve`, ``solver`` in :func:`lp_relaxation`.
        IPM solves the root LP of the tree models much faster than dual simplex at large N.
    extra : Mapping[str, Any], default={}
        Any other HiGHS option, by its HiGHS name. Unknown names and invalid values raise
        :class:`~odtmip.exceptions.OptionError`.
    """

    time_limit: float | None = None
    mip_rel_gap: float | None = 0.0
    threads: int | None = None
    seed: int | None = None
    log: bool = False
    lp_solver: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.time_limit is not None and not (_is_real(self.time_limit) and self.time_limit > 0):
            raise OptionError(f"time_limit must be a positive number of seconds or None, got {self.time_limit!r}")
        if self.mip_rel_gap is not None and not (_is_real(self.mip_rel_gap) and self.mip_rel_gap >= 0):
            raise OptionError(f"mip_rel_gap must be a number >= 0 or None, got {self.mip_rel_gap!r}")
        if self.threads is not None and not (_is_int(self.threads) and self.threads >= 1):
            raise OptionError(f"threads must be an integer >= 1 or None, got {self.threads!r}")
        if self.seed is not None and not (_is_int(self.seed) and 0 <= self.seed <= 2**31 - 1):
            raise OptionError(f"seed must be an integer in [0, 2**31 - 1] or None, got {self.seed!r}")
        if self.lp_solver is not None and self.lp_solver not in _LP_SOLVERS:
            raise OptionError(f"lp_solver must be one of {_LP_SOLVERS} or None, got {self.lp_solver!r}")
        if not isinstance(self.extra, Mapping):
            raise OptionError(f"extra must be a mapping of HiGHS option names to values, got {self.extra!r}")
        for name in self.extra:
            if name in _RESERVED:
                raise OptionError(f"HiGHS option {name!r} cannot go in extra; use {_RESERVED[name]}")
        # A private copy, so that later changes to the caller's dict do not leak in (and it still pickles,
        # which joblib workers need; a MappingProxyType would not).
        object.__setattr__(self, "extra", dict(self.extra))


def _is_real(x) -> bool:
    return isinstance(x, Real) and not isinstance(x, bool) and math.isfinite(x)


def _is_int(x) -> bool:
    return isinstance(x, Integral) and not isinstance(x, bool)


@dataclass
class MipRun:
    """What one HiGHS MIP run found, in the model's own objective sense.

    Attributes
    ----------
    status : Status
        ``OPTIMAL`` (primal and dual bounds meet), ``TIME_LIMIT`` (any limit stopped the proof: time, gap,
        node or solution limit, interruption; with or without an incumbent), ``INFEASIBLE``, or
        ``NO_SOLUTION`` (the model is unbounded).
    stop_reason : str
        ``"solved"``, ``"time_limit"``, ``"gap"``, ``"node_limit"``, ``"interrupted"``, ``"infeasible"`` or
        ``"unbounded"``.
    has_solution : bool
        True when the incumbent's values were loaded into the Pyomo variables (integer variables rounded).
    objective : float or None
        Incumbent objective including the constant; ``None`` without an incumbent.
    bound : float or None
        Best dual bound (``±inf`` when HiGHS has none yet); ``None`` when the model is infeasible or
        unbounded.
    gap : float
        HiGHS ``mip_gap`` = |objective − bound| / |objective|; ``inf`` without an incumbent.
    nodes, lp_iterations : int
        Branch-and-bound nodes and LP iterations (simplex + IPM) of the run.
    handoff_seconds : float
        Pyomo model → HiGHS (standard-form compile, arrays, ``passModel``).
    solve_seconds : float
        Completing the starts and the HiGHS run (``Highs.run``), wall clock.
    warm_start_given : bool
        True when the warm start had at least one value for a column HiGHS sees.
    warm_start_accepted : bool or None
        True when the start (completed, if partial) is a feasible point of the model and HiGHS's final incumbent
        is at least as good; False when it could not be completed to a feasible point or HiGHS ended worse
        than it; ``None`` when no start was given. Decided from the start and the solver's state, never from
        its log (see :func:`_start_verdict`).
    warm_start_objective : float or None
        Objective of the accepted start (after completion); ``None`` otherwise.
    trajectory : list of (float, float, float)
        ``(seconds, primal bound, dual bound)`` from HiGHS's callbacks, in order, ending with the final
        values. Kept monotone: the primal never worsens and the dual never weakens.
    log : str
        The HiGHS log, with whatever HiGHS wrote to the console (see :func:`console_captured`).
    statistics : dict
        :func:`model_statistics` of the model as handed to HiGHS.
    start_seconds : float
        Completing and verifying the warm starts (part of ``solve_seconds``).
    """

    status: Status
    stop_reason: str
    has_solution: bool
    objective: float | None
    bound: float | None
    gap: float
    nodes: int
    lp_iterations: int
    handoff_seconds: float
    solve_seconds: float
    warm_start_given: bool
    warm_start_accepted: bool | None
    warm_start_objective: float | None
    trajectory: list[tuple[float, float, float]]
    log: str
    statistics: dict = field(default_factory=dict)
    start_seconds: float = 0.0


# ====================================================================================================
# Pyomo model -> HiGHS


@dataclass
class _Compiled:
    """A Pyomo model as HiGHS sees it: arrays (the matrix row-wise) plus the column <-> variable map."""

    columns: list  # columns[j] is the Pyomo VarData of HiGHS column j
    col_of: dict  # id(VarData) -> column index
    cost: np.ndarray
    offset: float  # objective constant, including the contribution of fixed variables
    maximize: bool
    col_lower: np.ndarray
    col_upper: np.ndarray
    is_int: np.ndarray  # bool per column
    row_lower: np.ndarray
    row_upper: np.ndarray
    a_start: np.ndarray  # the matrix row-wise (CSR), int32 / float64: HiGHS's passModel takes it 2-3x faster
    a_index: np.ndarray
    a_value: np.ndarray
    statistics: dict
    infeasible_reason: str | None = None  # set when Pyomo already found a violated constant constraint

    def pass_to(self, hs, h, integer: bool = True) -> None:
        """Load the model into ``h``; ``integer=False`` passes the LP relaxation."""
        integrality = self.is_int.astype(np.int32) if integer else np.zeros(len(self.columns), np.int32)
        status = h.passModel(
            len(self.columns),
            len(self.row_lower),
            len(self.a_value),
            int(hs.MatrixFormat.kRowwise),
            int(hs.ObjSense.kMaximize if self.maximize else hs.ObjSense.kMinimize),
            self.offset,
            self.cost,
            self.col_lower,
            self.col_upper,
            self.row_lower,
            self.row_upper,
            self.a_start,
            self.a_index,
            self.a_value,
            integrality,  # 1 = HighsVarType.kInteger, 0 = kContinuous
        )
        if status == hs.HighsStatus.kError:
            raise RuntimeError("HiGHS rejected the model (see the log for the reason)")


@contextlib.contextmanager
def paused_gc():
    """Pause Python's cyclic garbage collector while a large model is built or read; restored on exit.

    A Pyomo model is millions of small objects. While they are being created, the collector's thresholds trip
    again and again and each full collection rescans everything alive. Building the Günlük depth-3 model at
    N = 10 000 took 2.1 s of CPU with the collector running and 1.1-1.3 s with it paused. Nothing leaks: objects
    in reference cycles are collected once the collector runs again. Nested use is fine.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_STAT_KEYS = ("n_variables", "n_binary", "n_integer", "n_continuous", "n_constraints", "n_nonzeros")


def _compile(model, reader: str = "auto") -> _Compiled:
    """Compile a linear Pyomo model to arrays (the matrix row-wise).

    ``reader="auto"`` reads the rows with :func:`_read_linear` and falls back to Pyomo's standard-form
    compiler for any model that reader does not handle; ``"pyomo"`` always uses the compiler. Both give the
    same rows and columns in the same order.
    """
    require_highs()
    hs = _highspy()
    import pyomo.environ as pyo

    objectives = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objectives) > 1:
        raise ValueError(f"model {model.name!r} has {len(objectives)} active objectives; HiGHS needs one")
    maximize = bool(objectives) and objectives[0].sense == pyo.maximize
    with paused_gc():
        raw = _read_linear(model, objectives[0] if objectives else None) if reader == "auto" else None
        if raw is None:
            raw = _standard_form(model, hs.kHighsInf)
    if isinstance(raw, str):  # Pyomo found a violated constant constraint
        empty = np.zeros(0)
        return _Compiled(
            [], {}, empty, 0.0, maximize, empty, empty, np.zeros(0, bool), empty, empty,
            np.zeros(1, np.int32), np.zeros(0, np.int32), empty, dict.fromkeys(_STAT_KEYS, 0), raw,
        )  # fmt: skip
    columns, cost, offset, A, row_lower, row_upper, col_of = raw
    n = len(columns)
    inf = hs.kHighsInf
    lb, ub, is_int = _column_bounds(columns, inf)

    binary = is_int & (lb >= 0) & (ub <= 1)
    stats = {
        "n_variables": n,
        "n_binary": int(binary.sum()),
        "n_integer": int((is_int & ~binary).sum()),
        "n_continuous": int((~is_int).sum()),
        "n_constraints": len(row_lower),
        "n_nonzeros": int(A.nnz),
    }
    return _Compiled(
        columns=columns,
        col_of=col_of or dict(zip(map(id, columns), range(n), strict=True)),
        cost=cost,
        offset=offset,
        maximize=maximize,
        col_lower=lb,
        col_upper=ub,
        is_int=is_int,
        row_lower=row_lower,
        row_upper=row_upper,
        a_start=np.asarray(A.indptr, dtype=np.int32),
        a_index=np.asarray(A.indices, dtype=np.int32),
        a_value=np.asarray(A.data, dtype=float),
        statistics=stats,
    )


def _column_bounds(columns, inf: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower and upper bound (the variable's own, tightened by its domain's) and integrality of every column.

    Variables of one component mostly share their bound settings and domain, so each distinct (lower, upper,
    domain) is resolved once through Pyomo's ``lb`` / ``ub`` / ``is_continuous``: 40 000 columns take about
    0.01 s instead of 0.15 s variable by variable.
    """
    n = len(columns)
    if not n:
        return np.zeros(0), np.zeros(0), np.zeros(0, dtype=bool)
    # The bound settings (None, numbers or Pyomo expressions) and domains, compared by identity: equal settings in
    # different objects only cost an extra lookup, and every object stays alive (held by its variable) meanwhile.
    keys = np.column_stack([np.fromiter(map(id, map(attrgetter(a), columns)), dtype=np.int64, count=n)
                            for a in ("_lb", "_ub", "_domain")])
    if (keys[:, :2] == id(None)).all():  # the usual case: no bounds of the variables' own
        keys = keys[:, 2]
    _, first, which = np.unique(keys, axis=0 if keys.ndim == 2 else None, return_index=True, return_inverse=True)
    resolved = []
    for v in (columns[j] for j in first.tolist()):  # one variable per distinct key
        discrete = not v.is_continuous()
        if discrete and not v.is_integer():
            raise ValueError(f"variable {v.name} has a discrete domain that is not integer; HiGHS cannot model it")
        resolved.append((-inf if v.lb is None else v.lb, inf if v.ub is None else v.ub, discrete))
    lb, ub, is_int = (np.array(x)[which.ravel()] for x in zip(*resolved, strict=True))
    return lb.astype(float), ub.astype(float), is_int.astype(bool)


def _standard_form(model, inf: float):
    """(columns, cost, offset, CSR matrix, row_lower, row_upper, None) from Pyomo's standard-form compiler, or the
    compiler's message when a constant constraint is violated."""
    from pyomo.common.errors import InfeasibleConstraintException
    from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler
    from pyomo.repn.util import FileDeterminism

    try:
        # NONE skips Pyomo's re-sorting of indices (27 % of the compile time). The column and row order
        # is then the construction order of the model's components, which is deterministic.
        repn = LinearStandardFormCompiler().write(
            model, mixed_form=True, set_sense=None, file_determinism=FileDeterminism.NONE
        )
    except InfeasibleConstraintException as exc:
        return str(exc)

    # Rows. mixed_form gives one row per constraint, except a ranged constraint (lb < body < ub), which
    # comes as two consecutive rows (<= ub, then >= lb) with the same coefficients: merge them into one.
    A = repn.A
    kind = np.fromiter((r.bound_type for r in repn.rows), dtype=np.int8, count=len(repn.rows))
    rhs = np.asarray(repn.rhs, dtype=float)
    row_lower = np.where(kind == 1, -inf, rhs)  # bound_type 0: ==, 1: <=, -1: >=
    row_upper = np.where(kind == -1, inf, rhs)
    pair = [k for k in np.flatnonzero((kind[:-1] == 1) & (kind[1:] == -1)).tolist()
            if repn.rows[k].constraint is repn.rows[k + 1].constraint]  # fmt: skip
    if pair:
        pair = np.asarray(pair)
        row_lower[pair] = rhs[pair + 1]
        keep = np.ones(len(kind), dtype=bool)
        keep[pair + 1] = False
        A, row_lower, row_upper = A.tocsr()[keep], row_lower[keep], row_upper[keep]
    A = A.tocsr()
    A.eliminate_zeros()
    A.sort_indices()
    n = len(repn.columns)
    cost = repn.c.toarray()[0].astype(float) if repn.c.shape[0] else np.zeros(n)
    offset = float(repn.c_offset[0]) if len(repn.c_offset) else 0.0
    return repn.columns, cost, offset, A, row_lower, row_upper, None


class _NotHandled(Exception):
    """:func:`_read_linear` met something it does not read; the standard-form compiler takes over."""


def _read_linear(model, objective):
    """Read a linear model's rows straight from its constraint expressions and array families (a fast path for
    the compiler).

    Returns what :func:`_standard_form` returns (its last item, here, the id(VarData) -> column map, or None
    when unused columns were dropped), with the same rows and columns in the same order: rows in
    ``component_data_objects`` order (a ranged row once), columns in order of first use, where a variable's
    first use numbers every member of its ``Var`` component; fixed variables are constants; columns used
    nowhere and satisfied constant rows are dropped (a violated one gives the compiler's message). Returns
    ``None`` (so the caller runs the compiler) when the model holds a component type or an expression node this
    reader does not know: it reads only sums, negations, products and quotients by constants, named
    expressions, variables and constants.

    One difference: a fixed variable is always a constant here, whereas the compiler keeps it as a column
    (removed later, leaving an empty row) once another member of its ``Var`` has been numbered; a row of
    fixed variables is therefore always a constant row here.

    An intact :class:`~odtmip.models.rows.LinearRows` family is taken as one block of arrays; one with rows
    deleted, deactivated or given their own expression is read row by row. Its columns are numbered like any
    other's: whole ``Var`` components, in the order of their first use.

    Why: the compiler walks every expression with a general visitor and re-derives each constraint's bounds.
    On the Günlük depth-3 model at N = 10 000 (100 317 rows, 1.1 M nonzeros) built with rules, it took 1.9 s
    of CPU against 0.7 s here (same process); with the routing rows as arrays this reader takes 0.03 s.
    """
    import scipy.sparse as sp
    from pyomo.common.numeric_types import native_numeric_types, native_types
    from pyomo.core.base.constraint import Constraint
    from pyomo.core.base.var import VarData
    from pyomo.core.expr import numeric_expr as ne
    from pyomo.core.expr.relational_expr import EqualityExpression, InequalityExpression, RangedExpression
    from pyomo.repn.util import SortComponents

    from odtmip.models.rows import LinearRows, var_members

    if _unknown_components(model):
        return None
    unsorted = SortComponents.UNSORTED
    col_of: dict[int, int] = {}  # id(VarData) -> provisional column (every member of a used Var component)
    columns: list = []
    named: dict[int, tuple[list, list, float]] = {}  # id(named expression) -> its (columns, coefficients, constant)
    idx: list[int] = []  # the terms: objective first, then row by row
    val: list[float] = []
    add_idx, add_val = idx.append, val.append
    numbers = native_numeric_types
    sums = (ne.LinearExpression, ne.SumExpression)
    monomial, negation = ne.MonomialTermExpression, ne.NegationExpression
    product, division = ne.ProductExpression, ne.DivisionExpression

    def number(e) -> float:
        if e.__class__ in numbers:
            return e
        if e.__class__ in native_types or e.is_potentially_variable():
            raise _NotHandled(e)
        return e()  # a Param, or an expression of Params and numbers

    member_columns: dict[int, np.ndarray] = {}  # id(Var component) -> column of each member, -1 if fixed
    member_lists: dict[int, tuple[list, np.ndarray]] = {}  # id(Var component) -> (members, fixed?)

    def members_of(var) -> tuple[list, np.ndarray]:
        """The members of a ``Var`` component in its own order, and which of them are fixed."""
        got = member_lists.get(id(var))
        if got is None:
            members = var_members(var)
            got = member_lists[id(var)] = members, np.array(list(map(attrgetter("_fixed"), members)), dtype=bool)
        return got

    def number_members(var) -> np.ndarray:
        """Number the members of a whole ``Var`` component at its first use, in its own order, as the compiler
        does (fixed members are constants and get no column); return the column of each member (-1: fixed)."""
        cols = member_columns.get(id(var))
        if cols is None:
            members, fixed = members_of(var)
            free = ~fixed
            cols = np.where(free, len(columns) + np.cumsum(free) - 1, -1).astype(np.int32)
            new = members if free.all() else [w for w, f in zip(members, free.tolist(), strict=True) if f]
            col_of.update(zip(map(id, new), range(len(columns), len(columns) + len(new)), strict=True))
            columns.extend(new)
            member_columns[id(var)] = cols
        return cols

    def column(v) -> int | None:
        """The column of variable ``v`` (numbering its component at first use); None when ``v`` is fixed."""
        if not isinstance(v, VarData):
            raise _NotHandled(v)
        j = col_of.get(id(v))
        if j is not None or v.fixed:
            return j
        number_members(v.parent_component())
        if id(v) not in col_of:  # not a member of its own component (never seen in Pyomo)
            raise _NotHandled(v)
        return col_of[id(v)]

    def var_term(v, mult) -> float:
        """Record mult * v; return its constant part (mult * value when v is fixed)."""
        j = column(v)
        if j is None:
            if v.value is None:
                raise _NotHandled(v)  # the compiler reports a fixed variable without a value
            return mult * v.value
        add_idx(j)
        add_val(mult)
        return 0

    def walk_terms(args, mult) -> float:
        """walk() for the terms of a sum, one by one."""
        const = 0
        for a in args:
            j = col_of.get(id(a))  # a free variable seen before: the common case
            if j is not None:
                add_idx(j)
                add_val(mult)
            elif a.__class__ is monomial:
                coef, v = a._args_
                j = col_of.get(id(v))
                if j is not None and coef.__class__ in numbers:
                    add_idx(j)
                    add_val(mult * coef)
                else:
                    const += var_term(v, mult * number(coef))
            elif a.__class__ in numbers:
                const += mult * a
            else:
                const += walk(a, mult)
        return const

    def walk(e, mult) -> float:
        """Append the terms of mult * e to idx / val; return its constant."""
        cls = e.__class__
        if cls in numbers:
            return mult * e
        if cls in sums:
            const = 0
            args = e._args_
            if len(args) != e._nargs:
                args = args[: e._nargs]
            for at in range(0, len(args), 256):  # a chunk of variables seen before: all at once
                chunk = args[at : at + 256]
                js = list(map(col_of.get, map(id, chunk)))
                if None not in js:
                    idx.extend(js)
                    val.extend([mult] * len(js))
                else:
                    const += walk_terms(chunk, mult)
            return const
        if cls is monomial:
            coef, v = e._args_
            return var_term(v, mult * number(coef))
        if cls is negation:
            return walk(e._args_[0], -mult)
        if cls in native_types:
            raise _NotHandled(e)
        if e.is_named_expression_type():  # read once, then copied wherever it is used
            cached = named.get(id(e))
            if cached is None:
                start = len(idx)
                const = walk(e.expr, 1)
                named[id(e)] = idx[start:], val[start:], const
                if mult != 1:
                    val[start:] = [mult * x for x in val[start:]]
            else:
                n_idx, n_val, const = cached
                idx.extend(n_idx)
                val.extend(n_val if mult == 1 else [-x for x in n_val] if mult == -1 else [mult * x for x in n_val])
            return mult * const
        if not e.is_potentially_variable():
            return mult * e()
        if e.is_variable_type():
            return var_term(e, mult)
        if cls is product:
            a, b = e._args_
            if a.__class__ in numbers or not a.is_potentially_variable():
                return walk(b, mult * number(a))
            if b.__class__ in numbers or not b.is_potentially_variable():
                return walk(a, mult * number(b))
        if cls is division:
            a, b = e._args_
            if b.__class__ in numbers or not b.is_potentially_variable():
                return walk(a, mult / number(b))
        raise _NotHandled(e)

    def constant(e) -> bool:
        return e.__class__ in native_types or not e.is_potentially_variable()

    def bound(e) -> float:
        return e if e.__class__ in numbers else (None if e is None else number(e))

    blocks: list[tuple] = []  # per run of rows: (starts, columns, values, lower, upper, constraints)

    def add_array_rows(rows) -> None:
        """All rows of an intact :class:`LinearRows` family as one block, without making any expression."""
        rows.check_variables()
        sizes = rows.sizes
        if not all(id(var) in member_columns for var in rows.variables):
            # number the components in the order of their first use by a free member, as the compiler does
            fixed = np.concatenate([members_of(var)[1] for var in rows.variables])
            of_term = np.searchsorted(np.cumsum(sizes), rows.indices, side="right")
            of_term[fixed[rows.indices]] = -1
            first_use = [(np.argmax(of_term == k), k) for k in range(len(sizes)) if (of_term == k).any()]
            for _, k in sorted(first_use):
                number_members(rows.variables[k])
        col = np.concatenate([member_columns[id(var)] if id(var) in member_columns else np.full(size, -1)
                              for var, size in zip(rows.variables, sizes, strict=True)])
        term_col = col[rows.indices]
        lower, upper = rows.lower, rows.upper
        fixed_term = term_col < 0
        if not fixed_term.any():
            blocks.append((rows.indptr, term_col, rows.data, lower, upper, rows))
            return
        # fixed variables are constants: move them to the bounds
        members = rows.members()
        used = np.unique(rows.indices[fixed_term])
        values = np.array([members[p].value for p in used.tolist()], dtype=float)
        if np.isnan(values).any():
            raise _NotHandled(rows)  # a fixed variable without a value: the compiler reports it
        term_value = values[np.searchsorted(used, rows.indices[fixed_term])]
        row_of_term = np.repeat(np.arange(len(lower)), np.diff(rows.indptr))
        shift = np.bincount(row_of_term[fixed_term], weights=rows.data[fixed_term] * term_value, minlength=len(lower))
        keep = ~fixed_term
        starts = np.concatenate(([0], np.cumsum(np.bincount(row_of_term[keep], minlength=len(lower)))))
        blocks.append((starts, term_col[keep], rows.data[keep], lower - shift, upper - shift, rows))

    def flush(starts, lower, upper, rows) -> None:
        """The rows read from expressions so far as one block."""
        if rows:
            s0 = starts[0]
            blocks.append((np.asarray(starts) - s0, np.asarray(idx[s0:], dtype=np.int32),
                           np.asarray(val[s0:], dtype=float), np.asarray(lower, dtype=float),
                           np.asarray(upper, dtype=float), list(rows)))
            del idx[s0:], val[s0:]
            del starts[1:], lower[:], upper[:], rows[:]

    inf = math.inf
    try:
        offset = 0.0
        if objective is not None:
            offset = walk(objective.expr, 1)
        starts = [len(idx)]  # idx / val keep the objective's terms; rows go to blocks
        lower: list[float] = []
        upper: list[float] = []
        rows: list = []  # the constraint of each row
        for comp in model.component_objects(Constraint, active=True, sort=unsorted):
            if isinstance(comp, LinearRows) and comp.intact():
                flush(starts, lower, upper, rows)
                add_array_rows(comp)
                continue
            for con in comp.values(unsorted):
                if not con.active:
                    continue
                e = con.expr
                cls = e.__class__
                # The same (lower, body, upper) split as ConstraintData.to_bounded_expression.
                if cls is InequalityExpression or cls is EqualityExpression:
                    lhs, rhs = e._args_
                    equality = cls is EqualityExpression
                    if constant(rhs):
                        lo, ub = (bound(rhs) if equality else None), bound(rhs)
                        const = walk(lhs, 1)
                    elif constant(lhs):
                        lo, ub = bound(lhs), (bound(lhs) if equality else None)
                        const = walk(rhs, 1)
                    else:
                        lo, ub = (0 if equality else None), 0
                        const = walk(lhs, 1) + walk(rhs, -1)
                elif cls is RangedExpression:
                    lhs, body, rhs = e._args_
                    if not (constant(lhs) and constant(rhs)):
                        raise _NotHandled(e)
                    lo, ub = bound(lhs), bound(rhs)
                    const = walk(body, 1)
                else:
                    raise _NotHandled(e)
                if lo is None and ub is None:  # no bound at all: no row (as the compiler)
                    del idx[starts[-1] :], val[starts[-1] :]
                    continue
                starts.append(len(idx))
                rows.append(con)
                lower.append(-inf if lo is None else lo - const)
                upper.append(inf if ub is None else ub - const)
        flush(starts, lower, upper, rows)
    except (_NotHandled, ArithmeticError, AttributeError, RecursionError, TypeError, ValueError):
        return None  # the compiler reads it, or raises its own error

    n = len(columns)
    obj_index, obj_values = np.asarray(idx, dtype=np.int64), np.asarray(val, dtype=float)
    sizes = [len(b[3]) for b in blocks]
    offsets = np.cumsum([0] + [len(b[1]) for b in blocks])
    index = np.int32 if offsets[-1] < 2**31 and n < 2**31 else np.int64  # what HiGHS takes, if it fits
    indptr = np.concatenate([[0]] + [b[0][1:] + o for b, o in zip(blocks, offsets[:-1], strict=True)]).astype(index)
    A = sp.csr_array((np.concatenate([np.zeros(0)] + [b[2] for b in blocks]),
                      np.concatenate([np.zeros(0, index)] + [b[1] for b in blocks]).astype(index, copy=False), indptr),
                     shape=(sum(sizes), n))
    A.sum_duplicates()  # a variable twice in one row
    if not A.data.all():
        A.eliminate_zeros()  # and terms that cancel
    row_lower = np.concatenate([np.zeros(0)] + [b[3] for b in blocks])
    row_upper = np.concatenate([np.zeros(0)] + [b[4] for b in blocks])
    empty = np.diff(A.indptr) == 0
    if empty.any():  # constant rows: dropped when satisfied, an infeasible model otherwise (as the compiler)
        violated = np.flatnonzero(empty & ((row_lower > 0) | (row_upper < 0)))
        if len(violated):
            r = int(violated[0])
            b = int(np.searchsorted(np.cumsum(sizes), r, side="right"))
            r -= sum(sizes[:b])
            owner = blocks[b][5]
            name = owner[r].name if isinstance(owner, list) else owner[list(owner.keys())[r]].name
            return f"model contains a trivially infeasible constraint, '{name}'"
        A, row_lower, row_upper = A[~empty], row_lower[~empty], row_upper[~empty]
    cost = np.bincount(obj_index, weights=obj_values, minlength=n).astype(float)
    used = (np.bincount(A.indices, minlength=n) > 0) | (cost != 0)
    if not used.all():
        A = A[:, used]
        cost = cost[used]
        columns = [v for v, keep in zip(columns, used.tolist(), strict=True) if keep]
        col_of = None  # numbered again by the caller
    A.sort_indices()
    return columns, cost, float(offset), A, row_lower, row_upper, col_of


def _unknown_components(model) -> bool:
    """True when the model holds an active component the standard-form compiler would reject or warn about."""
    from pyomo.core.base import (
        Block,
        Constraint,
        Expression,
        ExternalFunction,
        Objective,
        Param,
        RangeSet,
        Set,
        Suffix,
        Var,
    )
    from pyomo.network import Port
    from pyomo.repn.util import categorize_valid_components

    component_map, unknown = categorize_valid_components(
        model,
        active=True,
        valid={Block, Constraint, Var, Param, Expression, ExternalFunction, Set, RangeSet, Port},
        targets={Suffix, Objective},
    )
    return bool(unknown or component_map[Suffix])


def to_highs(model, options: HighsOptions = HighsOptions(), integer: bool = True):  # noqa: B008
    """Hand ``model`` to a fresh ``highspy.Highs`` exactly as :func:`solve` does, without running it.

    For benchmarks and debugging: returns ``(h, columns)`` where ``columns[j]`` is the Pyomo variable of
    HiGHS column j. The HiGHS log is captured (echoed to stderr when ``options.log`` is true). Threads are
    not touched, so call ``h.run()`` with the ``threads`` of the process's earlier runs.

    Raises
    ------
    ValueError
        Pyomo found a constant constraint violated (the model is infeasible before HiGHS sees it).
    """
    hs = _highspy()
    comp = _compile(model)
    if comp.infeasible_reason is not None:
        raise ValueError(f"model {model.name!r} is infeasible: {comp.infeasible_reason}")
    h = _new_highs(hs, options, mip=integer, recorder=_Recorder(echo=options.log))
    comp.pass_to(hs, h, integer=integer)
    return h, comp.columns


def model_statistics(model) -> dict:
    """Size of a linear Pyomo model as handed to HiGHS (before HiGHS's own presolve).

    Fixed variables, variables that appear in no constraint and no objective, and constant constraints are
    not counted (they never reach HiGHS). A ranged constraint ``lb <= expr <= ub`` counts once.

    Returns
    -------
    dict
        ``n_variables``, ``n_binary`` (integer with bounds within [0, 1]), ``n_integer`` (other integer),
        ``n_continuous``, ``n_constraints`` (rows) and ``n_nonzeros`` (of the constraint matrix). All zero
        when Pyomo already finds a constant constraint violated (the model is then infeasible).
    """
    return dict(_compile(model).statistics)


# ====================================================================================================
# Highs object set-up


_scheduler_lock = threading.Lock()
_scheduler_threads: int | None = -1  # thread count of the last run in this process; -1: none yet


def _use_threads(hs, threads: int | None) -> None:
    """Reset HiGHS's global scheduler when the requested thread count differs from the last run's.

    HiGHS builds its scheduler at the first run in a process and then refuses a different ``threads``
    (the run ends with an error and no solution).
    """
    global _scheduler_threads
    with _scheduler_lock:
        if threads != _scheduler_threads:
            hs.Highs.resetGlobalScheduler(True)
            _scheduler_threads = threads


def _coerce_option(h, hs, name: str, value):
    """Check an ``extra`` option against HiGHS and convert the value to the option's type."""
    status, kind = h.getOptionType(name)
    if status == hs.HighsStatus.kError:
        raise OptionError(f"unknown HiGHS option {name!r}")
    kinds = hs.HighsOptionType
    if kind == kinds.kBool and isinstance(value, (bool, np.bool_)):
        return bool(value)
    if kind == kinds.kInt and _is_int(value):
        return int(value)
    if kind == kinds.kDouble and isinstance(value, Real) and not isinstance(value, bool):
        return float(value)
    if kind == kinds.kString and isinstance(value, str):
        return value
    raise OptionError(f"HiGHS option {name!r} takes a {kind.name[1:].lower()} value, got {value!r}")


def _option_items(options: HighsOptions, mip: bool) -> list[tuple[str, Any]]:
    """The HiGHS options of a run, as (name, value) pairs."""
    items = []
    if options.time_limit is not None:
        items.append(("time_limit", float(options.time_limit)))
    if mip and options.mip_rel_gap is not None:
        items.append(("mip_rel_gap", float(options.mip_rel_gap)))
    items.append(("threads", int(options.threads or 0)))  # 0 lets HiGHS choose
    if options.seed is not None:
        items.append(("random_seed", int(options.seed)))
    if options.lp_solver is not None:
        items.append(("mip_lp_solver" if mip else "solver", options.lp_solver))
    return items + list(options.extra.items())


class _Recorder:
    """HiGHS callbacks: log capture, trajectory, further solutions fed during the search."""

    def __init__(self, echo: bool):
        self.echo = echo
        self.parts: list[str] = []
        self.points: list[tuple[float, float, float]] = []
        self.pending: list[np.ndarray] = []  # full, verified column vectors, handed over one per poll

    def write(self, message: str) -> None:
        self.parts.append(message)
        if self.echo:
            sys.stderr.write(message)

    def on_log(self, e) -> None:
        self.write(e.message)

    def on_improving(self, e) -> None:
        d = e.data_out
        self.points.append((d.running_time, d.objective_function_value, d.mip_dual_bound))

    def on_mip_log(self, e) -> None:
        d = e.data_out
        self.points.append((d.running_time, d.mip_primal_bound, d.mip_dual_bound))

    def on_user_solution(self, e) -> None:
        if self.pending:
            e.data_in.setSolution(self.pending.pop(0))

    @property
    def text(self) -> str:
        return "".join(self.parts)


_console_lock = threading.Lock()
_console_users = 0
_console_saved: tuple[int, Any] | None = None  # (the real stdout's descriptor, the file that replaces it)


@contextlib.contextmanager
def console_captured(recorder: _Recorder | None = None):
    """Keep C code from writing to the process's standard output while HiGHS is in use.

    HiGHS writes some lines straight to file descriptor 1, whatever its options say (highspy 1.16 prints its
    banner when a ``Highs`` is constructed), which would corrupt ``odtmip ... --json``. Inside this context
    descriptor 1 points to a temporary file; on exit it is restored and what was written goes to ``recorder``'s log
    (and to stderr when the recorder echoes). Python's own ``sys.stdout`` is flushed first, so nothing it buffered
    is lost. Nested and concurrent use share one redirection, which the last one out restores; then only that one
    receives the text. The same technique as Pyomo's own HiGHS interface (``capture_output(capture_fd=True)``).
    """
    global _console_users, _console_saved
    with _console_lock:
        if _console_users == 0:
            sys.stdout.flush()
            sink = tempfile.TemporaryFile()
            real = os.dup(1)
            os.dup2(sink.fileno(), 1)
            _console_saved = (real, sink)
        _console_users += 1
    try:
        yield
    finally:
        with _console_lock:
            _console_users -= 1
            if _console_users == 0:
                real, sink = _console_saved
                _console_saved = None
                os.dup2(real, 1)
                os.close(real)
                sink.seek(0)
                text = sink.read().decode(errors="replace")
                sink.close()
                if text:
                    logger.debug("HiGHS console output: %s", text.strip())
                    if recorder is not None:
                        recorder.write(text)


def _new_highs(hs, options: HighsOptions, mip: bool, recorder: _Recorder):
    """A fresh, silent ``Highs`` with the run's options and the recorder's log callback."""
    with console_captured(recorder):
        h = hs.Highs()
    h.setOptionValue("log_to_console", False)  # HiGHS would print to stdout
    h.setOptionValue("output_flag", False)  # quiet while options are checked
    items = []
    for name, value in _option_items(options, mip):
        if name in options.extra:
            value = _coerce_option(h, hs, name, value)
        items.append((name, value))
    for name, value in items:
        if h.setOptionValue(name, value) == hs.HighsStatus.kError:
            raise OptionError(f"HiGHS rejected option {name}={value!r}")
    h.cbLogging.subscribe(recorder.on_log)
    h.setOptionValue("output_flag", True)
    return h


def _run(hs, h, threads: int | None, recorder: _Recorder | None = None) -> None:
    """``h.run()`` with the process's thread scheduler set for ``threads`` and the console captured."""
    with console_captured(recorder):
        _use_threads(hs, threads)
        h.run()


# ====================================================================================================
# Warm starts


def _start_vectors(comp: _Compiled, assignment: Iterable) -> tuple[np.ndarray, np.ndarray, bool]:
    """(column indices, values, covers every column) of an assignment of ``(VarData, value)`` pairs.

    Pairs whose variable has no HiGHS column (fixed, or used nowhere) or whose value is ``None`` are
    skipped; a later pair for the same variable overrides an earlier one.
    """
    values: dict[int, float] = {}
    for var, value in assignment:
        j = comp.col_of.get(id(var))
        if j is not None and value is not None:
            values[j] = float(value)
    idx = np.fromiter(values.keys(), dtype=np.int32, count=len(values))
    val = np.fromiter(values.values(), dtype=float, count=len(values))
    order = np.argsort(idx)
    idx, val = idx[order], val[order]
    return idx, val, len(values) == len(comp.columns) and len(values) > 0


# Largest violation of a row, a bound or integrality that a start may have: HiGHS's default
# primal_feasibility_tolerance (1e-7), below its mip_feasibility_tolerance (1e-6), so HiGHS accepts what passes here.
_START_TOLERANCE = 1e-7


def _feasible_start(comp: _Compiled, x: np.ndarray) -> np.ndarray | None:
    """``x`` with its integer columns rounded when it satisfies every bound, integrality and row of ``comp``
    within :data:`_START_TOLERANCE`; None otherwise. Plain linear algebra: no solver is asked."""
    tol = _START_TOLERANCE
    x = np.asarray(x, dtype=float).copy()
    if x.shape != (len(comp.columns),) or not np.isfinite(x).all():
        return None
    rounded = np.round(x[comp.is_int])
    if (np.abs(x[comp.is_int] - rounded) > tol).any():
        return None
    x[comp.is_int] = rounded
    if (x < comp.col_lower - tol).any() or (x > comp.col_upper + tol).any():
        return None
    rows = np.repeat(np.arange(len(comp.row_lower)), np.diff(comp.a_start))
    activity = np.bincount(rows, weights=comp.a_value * x[comp.a_index], minlength=len(comp.row_lower))
    if (activity < comp.row_lower - tol).any() or (activity > comp.row_upper + tol).any():
        return None
    return x


def _complete_starts(hs, comp: _Compiled, starts: list, options: HighsOptions, deadline: float | None) -> list:
    """Full, verified column vectors for ``starts`` (``(idx, val, full)`` each); None where a start cannot be
    completed to a feasible point (or the deadline passed first).

    A partial start is completed the way HiGHS completes one internally, but here, in a separate ``Highs``: the
    given columns are fixed at their values and the rest of the model is solved (an LP when every integer column is
    given; otherwise a sub-MIP of at most 500 nodes, HiGHS's ``mip_max_start_nodes``). HiGHS then only ever
    receives full starts, so its callbacks and bounds all belong to the main search, and whether a start was
    feasible is decided by :func:`_feasible_start`, never by the solver's log.
    """
    out: list = [None] * len(starts)
    h = None
    for k, (idx, val, full) in enumerate(starts):
        if full:
            out[k] = _feasible_start(comp, val)
            continue
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left <= 0:
            break
        if h is None:
            quiet = HighsOptions(threads=options.threads, seed=options.seed)
            h = _new_highs(hs, quiet, mip=True, recorder=_Recorder(echo=False))
            comp.pass_to(hs, h)
            h.setOptionValue("mip_max_nodes", 500)
        lower, upper = comp.col_lower[idx], comp.col_upper[idx]
        h.changeColsBounds(len(idx), idx, val, val)
        h.setOptionValue("time_limit", math.inf if left is None else max(left, 1e-3))
        h.clearSolver()  # no warm start from the previous completion
        _run(hs, h, options.threads)
        if int(h.getInfo().primal_solution_status) == 2:  # kSolutionStatusFeasible
            out[k] = _feasible_start(comp, np.asarray(h.getSolution().col_value, dtype=float))
        h.changeColsBounds(len(idx), idx, lower, upper)
    return out


# ====================================================================================================
# Solving


def _mip_status(hs, h, is_mip: bool) -> tuple[Status, str]:
    """(Status, stop_reason) of a finished run; raise for HiGHS errors."""
    M = hs.HighsModelStatus
    ms = h.getModelStatus()
    if ms == M.kOptimal and not is_mip:  # an LP: HiGHS's optimum is proven, and mip_* info is unset
        return Status.OPTIMAL, "solved"
    if ms == M.kOptimal:
        info = h.getInfo()
        primal, dual = info.objective_function_value, info.mip_dual_bound
        if abs(primal - dual) <= _CLOSED_GAP * max(1.0, abs(primal)):
            return Status.OPTIMAL, "solved"
        return Status.TIME_LIMIT, "gap"  # stopped by mip_rel_gap / mip_abs_gap
    if ms == M.kModelEmpty:  # every variable fixed or unused
        return Status.OPTIMAL, "solved"
    if ms == M.kInfeasible:
        return Status.INFEASIBLE, "infeasible"
    if ms == M.kUnbounded:
        return Status.NO_SOLUTION, "unbounded"
    if ms == M.kTimeLimit:
        return Status.TIME_LIMIT, "time_limit"
    if ms in (M.kIterationLimit, M.kSolutionLimit):  # mip_max_nodes, mip_max_leaves, mip_max_improving_sols
        return Status.TIME_LIMIT, "node_limit"
    if ms in (M.kInterrupt, M.kHighsInterrupt, M.kObjectiveBound, M.kObjectiveTarget, M.kMemoryLimit):
        return Status.TIME_LIMIT, "interrupted"
    raise RuntimeError(f"HiGHS stopped with model status {h.modelStatusToString(ms)!r}")


def _feasibility_verdict(hs, h, seconds_left: float | None, threads: int | None) -> str:
    """``"unbounded"``, ``"infeasible"`` or ``"unknown"`` after HiGHS said "unbounded or infeasible".

    Re-runs with a zero objective, which cannot be unbounded: a feasible point then means unbounded.
    """
    n = h.getNumCol()
    h.changeColsCost(n, np.arange(n, dtype=np.int32), np.zeros(n))
    if seconds_left is not None:
        h.setOptionValue("time_limit", max(seconds_left, 1e-3))
    _run(hs, h, threads)
    ms = h.getModelStatus()
    if ms in (hs.HighsModelStatus.kOptimal, hs.HighsModelStatus.kModelEmpty):
        return "unbounded"
    if ms == hs.HighsModelStatus.kInfeasible:
        return "infeasible"
    return "unknown"


def _monotone(points, maximize: bool, final: tuple[float, float, float]) -> list[tuple[float, float, float]]:
    """Running best of the callback points, then the final values.

    The primal never worsens and the dual never weakens; a point that changes neither is dropped.
    """
    better, weaker = (max, min) if maximize else (min, max)
    primal = -math.inf if maximize else math.inf
    dual = math.inf if maximize else -math.inf
    out: list[tuple[float, float, float]] = []
    for t, p, d in [*points, final]:
        primal, dual = better(primal, p), weaker(dual, d)
        if not out or (out[-1][1], out[-1][2]) != (primal, dual):
            out.append((float(t), float(primal), float(dual)))
    if out[-1][0] < final[0]:
        out.append((float(final[0]), out[-1][1], out[-1][2]))
    return out


def _set_start(hs, h, x: np.ndarray) -> None:
    """Hand HiGHS a full MIP start (a value for every column)."""
    sol = hs.HighsSolution()
    sol.col_value = x
    sol.value_valid = True
    if h.setSolution(sol) == hs.HighsStatus.kError:
        raise RuntimeError("HiGHS rejected the warm start")


def _run_without_solution(status, reason, comp, handoff, seconds, given, log) -> MipRun:
    """The MipRun of an infeasible or unbounded model: no solution, no bound."""
    return MipRun(
        status=status,
        stop_reason=reason,
        has_solution=False,
        objective=None,
        bound=None,
        gap=math.inf,
        nodes=0,
        lp_iterations=0,
        handoff_seconds=handoff,
        solve_seconds=seconds,
        warm_start_given=given,
        warm_start_accepted=False if given else None,
        warm_start_objective=None,
        trajectory=[],
        log=log,
        statistics=dict(comp.statistics),
    )


def solve(
    model,
    options: HighsOptions = HighsOptions(),  # noqa: B008  (frozen, so a shared default is safe)
    warm_start: Iterable | None = None,
    more_starts: Iterable[Iterable] = (),
) -> MipRun:
    """Solve a linear Pyomo model with HiGHS and load the incumbent into its variables.

    Parameters
    ----------
    model : pyo.ConcreteModel
        A linear model with at most one active objective (minimise or maximise).
    options : HighsOptions, default=HighsOptions()
        Time limit, gap, threads, seed, log and other HiGHS options. The time limit covers completing the
        starts and the HiGHS run (not the hand-off).
    warm_start : iterable of (VarData, float), optional
        A MIP start, possibly partial (e.g. only the structural binaries). A partial start is completed first
        (the given values fixed, the rest solved; see :func:`_complete_starts`) and HiGHS receives the full,
        verified vector. Pairs for fixed or unused variables, and ``None`` values, are skipped.
    more_starts : iterable of assignments, optional
        Further solutions (each an iterable of ``(VarData, value)`` pairs, full or partial), completed and
        verified the same way and handed to HiGHS during the search, one per poll of its user-solution callback
        (``cbMipUserSolution``), in order.

    Returns
    -------
    MipRun
        Status, bounds, statistics and timings. A time limit never raises: the incumbent, if any, is
        loaded and ``status`` is ``Status.TIME_LIMIT``.

    Raises
    ------
    SolverUnavailableError
        HiGHS or scipy is missing.
    OptionError
        An unknown HiGHS option or an invalid value.
    RuntimeError
        HiGHS failed (a model, presolve or solve error).
    """
    hs = _highspy()
    t0 = time.perf_counter()
    comp = _compile(model)
    starts = [_start_vectors(comp, warm_start if warm_start is not None else ())]
    starts += [_start_vectors(comp, assignment) for assignment in more_starts]
    given = len(starts[0][0]) > 0
    if comp.infeasible_reason is not None:
        log = f"Pyomo found a violated constant constraint before HiGHS ran: {comp.infeasible_reason}\n"
        return _run_without_solution(Status.INFEASIBLE, "infeasible", comp, time.perf_counter() - t0, 0.0, given, log)

    recorder = _Recorder(echo=options.log)
    h = _new_highs(hs, options, mip=True, recorder=recorder)
    try:
        comp.pass_to(hs, h)
    except RuntimeError as exc:
        raise RuntimeError(f"{exc}:\n{recorder.text}") from None
    handoff = time.perf_counter() - t0

    t1 = time.perf_counter()
    deadline = None if options.time_limit is None else t1 + options.time_limit
    starts = [s if len(s[0]) else None for s in starts]
    completed = _complete_starts(hs, comp, [s for s in starts if s is not None], options, deadline)
    full = iter(completed)
    start, *extra = [None if s is None else next(full) for s in starts]
    start_seconds = time.perf_counter() - t1
    if start is not None:
        _set_start(hs, h, start)
    if options.time_limit is not None:  # completing the starts took part of the limit
        h.setOptionValue("time_limit", max(options.time_limit - start_seconds, 1e-3))
    h.cbMipImprovingSolution.subscribe(recorder.on_improving)
    h.cbMipLogging.subscribe(recorder.on_mip_log)
    recorder.pending = [x for x in extra if x is not None]
    if recorder.pending:
        h.cbMipUserSolution.subscribe(recorder.on_user_solution)

    t2 = time.perf_counter()
    _run(hs, h, options.threads, recorder)
    if h.getModelStatus() == hs.HighsModelStatus.kUnboundedOrInfeasible:
        left = None if deadline is None else deadline - time.perf_counter()
        if _feasibility_verdict(hs, h, left, options.threads) == "infeasible":
            status, reason = Status.INFEASIBLE, "infeasible"
        else:  # feasible, or still unknown: report what HiGHS could not rule out
            status, reason = Status.NO_SOLUTION, "unbounded"
        seconds = time.perf_counter() - t1
        return _run_without_solution(status, reason, comp, handoff, seconds, given, recorder.text)
    solve_seconds = time.perf_counter() - t1
    is_mip = bool(comp.is_int.any())
    try:
        status, reason = _mip_status(hs, h, is_mip)
    except RuntimeError as exc:
        raise RuntimeError(f"{exc}; log tail:\n{''.join(recorder.parts[-30:])}") from None

    info = h.getInfo()
    empty = h.getModelStatus() == hs.HighsModelStatus.kModelEmpty
    has_solution = empty or (
        int(info.primal_solution_status) == 2 and status not in (Status.INFEASIBLE, Status.NO_SOLUTION)
    )  # 2 = kSolutionStatusFeasible
    objective = bound = None
    gap = math.inf
    if empty:
        objective = bound = comp.offset
        gap = 0.0
    elif has_solution:
        objective = float(info.objective_function_value)
        gap = float(info.mip_gap) if is_mip else (0.0 if status is Status.OPTIMAL else math.inf)
        x = np.asarray(h.getSolution().col_value, dtype=float)
        x[comp.is_int] = np.round(x[comp.is_int])  # HiGHS may return 0.9999999 for 1
        for var, value in zip(comp.columns, x.tolist(), strict=True):
            var.set_value(value, skip_validation=True)
    if not empty and status not in (Status.INFEASIBLE, Status.NO_SOLUTION):
        if is_mip:
            bound = float(info.mip_dual_bound)
        elif status is Status.OPTIMAL:
            bound = objective
        else:  # an LP stopped early: no dual bound is known
            bound = math.inf if comp.maximize else -math.inf

    trajectory = []
    if bound is not None:
        no_incumbent = -math.inf if comp.maximize else math.inf
        final = (h.getRunTime() + (t2 - t1), no_incumbent if objective is None else objective, bound)
        points = [(t + (t2 - t1), p, d) for t, p, d in recorder.points]
        trajectory = _monotone(points, comp.maximize, final)
    accepted, start_objective = _start_verdict(comp, start, objective) if given else (None, None)
    logger.debug(
        "HiGHS: %s (%s), objective %s, bound %s, hand-off %.2f s, run %.2f s, start accepted %s",
        status.value, reason, objective, bound, handoff, solve_seconds, accepted,
    )  # fmt: skip
    return MipRun(
        status=status,
        stop_reason=reason,
        has_solution=has_solution,
        objective=objective,
        bound=bound,
        gap=gap,
        nodes=max(0, int(info.mip_node_count)),
        lp_iterations=max(0, int(info.simplex_iteration_count)) + max(0, int(info.ipm_iteration_count)),
        handoff_seconds=handoff,
        solve_seconds=solve_seconds,
        warm_start_given=given,
        warm_start_accepted=accepted,
        warm_start_objective=start_objective,
        trajectory=trajectory,
        log=recorder.text,
        statistics=dict(comp.statistics),
        start_seconds=start_seconds,
    )


def _start_verdict(comp: _Compiled, start: np.ndarray | None, objective: float | None) -> tuple[bool, float | None]:
    """(accepted, objective) of a warm start, from the start itself and the run's incumbent.

    A verified feasible start becomes HiGHS's incumbent (HiGHS tests it with tolerances no tighter than
    :data:`_START_TOLERANCE`); since an incumbent only improves, the final incumbent is then at least as good as the
    start's objective. A final incumbent that is worse (or none at all) means HiGHS did not take the start.
    """
    if start is None:
        return False, None
    value = float(comp.cost @ start + comp.offset)
    slack = 1e-6 * max(1.0, abs(value))
    if objective is None or (objective < value - slack if comp.maximize else objective > value + slack):
        return False, None
    return True, value


def lp_relaxation(model, options: HighsOptions = HighsOptions()) -> float:  # noqa: B008
    """Optimal value of the LP relaxation (integrality dropped), in the model's own sense.

    The Pyomo model is not modified: integrality is dropped only in the copy handed to HiGHS.

    Parameters
    ----------
    model : pyo.ConcreteModel
        A linear model with at most one active objective.
    options : HighsOptions, default=HighsOptions()
        ``lp_solver`` sets HiGHS ``solver`` (``"ipm"`` is much faster on large tree models);
        ``mip_rel_gap`` is ignored.

    Returns
    -------
    float
        The LP optimum including the objective constant. An infeasible relaxation gives ``+inf`` when
        minimising and ``-inf`` when maximising; an unbounded one the opposite infinity.

    Raises
    ------
    RuntimeError
        HiGHS stopped before solving the LP (e.g. on the time limit), or failed.
    """
    hs = _highspy()
    comp = _compile(model)
    infeasible = -math.inf if comp.maximize else math.inf
    if comp.infeasible_reason is not None:
        return infeasible
    recorder = _Recorder(echo=options.log)
    h = _new_highs(hs, options, mip=False, recorder=recorder)
    comp.pass_to(hs, h, integer=False)
    _run(hs, h, options.threads, recorder)
    M = hs.HighsModelStatus
    ms = h.getModelStatus()
    if ms == M.kUnboundedOrInfeasible:
        ms = {"unbounded": M.kUnbounded, "infeasible": M.kInfeasible}.get(
            _feasibility_verdict(hs, h, options.time_limit, options.threads), ms
        )
    if ms == M.kOptimal:
        return float(h.getInfo().objective_function_value)
    if ms == M.kModelEmpty:
        return comp.offset
    if ms == M.kInfeasible:
        return infeasible
    if ms == M.kUnbounded:
        return -infeasible
    raise RuntimeError(
        f"HiGHS did not solve the LP relaxation (model status {h.modelStatusToString(ms)!r}); log tail:\n"
        + "".join(recorder.parts[-30:])
    )
