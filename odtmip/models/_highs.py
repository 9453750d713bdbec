"""HiGHS runner: the only module that touches ``highspy``.

Formulation modules build a linear ``pyo.ConcreteModel`` with one objective (either sense) and call
:func:`solve`, :func:`lp_relaxation` or :func:`model_statistics`. Everything is reported in the model's
own sense; converting to a loss is the formulation's job.

How the model reaches HiGHS
---------------------------
:func:`odtmip.models._compile.compile_model` compiles the model to arrays (the matrix row-wise): intact
:class:`odtmip.models.rows.LinearRows` families as the arrays they are, everything else, the objective included,
through Pyomo's ``LinearStandardFormCompiler`` (see :mod:`odtmip.models._compile`, which also gives
:func:`model_statistics` and :func:`paused_gc`). :func:`odtmip.models._highs_run.pass_model` hands the arrays to
``Highs.passModel``.
This module owns the options, the runs, the warm starts, the status and loading values back through the compiled
column ↔ variable map. Variables that are fixed or appear nowhere get no column; they keep their Pyomo values.

Measured on odtmip's Günlük depth-3 model (``benchmarks/mip_build.py``: fresh process per run, minimum of 7,
wall seconds on a shared 2-core box, highspy 1.16.0, Pyomo 6.10.1). "Build" makes the model, with the per-sample
rows as ``LinearRows``; "hand-off" is the compile and ``passModel``, formerly with a hand-written expression walker
reading the rows besides the families (the objective included), now with Pyomo's compiler; "direct" builds the
same matrix with numpy and passes it to HiGHS:

=========  ==============================  =======  ================  =============  =======
N          rows / columns / nonzeros       build    hand-off: walker  hand-off: now  direct
=========  ==============================  =======  ================  =============  =======
2 000      20 317 / 8 350 / 224 690        0.017 s  0.018 s           0.025 s        0.018 s
10 000     100 317 / 40 350 / 1 120 690    0.077 s  0.076 s           0.094 s        0.076 s
=========  ==============================  =======  ================  =============  =======

A second pair of runs gave 0.017 / 0.023 s and 0.065 / 0.093 s: Pyomo's compiler costs 0.005-0.007 s more at
N = 2 000 and 0.02-0.03 s more at N = 10 000.

Where the hand-off's time goes at N = 10 000 (CPU seconds in a warm process): Pyomo's compiler on the objective
(40 000 terms) and the 317 rows besides the families 0.037 s (the walker read them in about 0.01 s), the families'
arrays and numbering the columns 0.007 s, assembling the matrix 0.006 s, bounds and integrality 0.008 s,
``passModel`` 0.018 s (as for the direct build). ``passModel`` takes the row-wise matrix 2-3x faster than the
column-wise one (HiGHS stores it column-wise either way). With every row an ordinary indexed ``Constraint`` rule
instead, the compiler took 1.9 s of CPU, and the contrib ``set_instance`` route 11.5 s.

Other decisions, each measured
------------------------------
* A fresh ``highspy.Highs`` per call. A re-used object silently warm-starts from its previous solution.
* A MIP with a time limit runs in a child process (:mod:`odtmip.models._highs_run`), which the parent stops when
  HiGHS has not returned shortly after the deadline: HiGHS does not read its clock inside every step (its root
  mod-k cut separator ran 18 s past a 15 s limit on OCT-H), and a time limit is a promise about the whole call.
  Starting the child costs about 0.2 s; the best solution and bound it reported are kept.
* Nothing HiGHS writes reaches the process's stdout: its log goes to a logging callback, and whatever it writes
  to the console itself (highspy 1.16 prints a banner when a ``Highs`` is made) is captured at the file
  descriptor level (:func:`console_captured`). The text lands in :attr:`MipRun.log`, and on stderr when
  ``HighsOptions.log`` is true.
* No decision is read from HiGHS's log, whose wording changes between releases. A partial warm start is
  completed here, in a separate ``Highs`` (:func:`_complete_starts`), and checked by linear algebra
  (:func:`_feasible_start`), so HiGHS only ever receives full, feasible starts; whether it kept one is read
  from its incumbent (:func:`~odtmip.models._highs_read.start_verdict`).
* HiGHS fixes its global thread scheduler at the first run in a process. When the requested ``threads``
  differs from the previous run's, or the run is in another Python thread, we reset it
  (``Highs.resetGlobalScheduler``). Do not run solves concurrently in one process.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import math
import os
import pickle
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any

import numpy as np

from odtmip.core import progress
from odtmip.core.exceptions import OptionError, SolverUnavailableError
from odtmip.core.options import check_time_limit
from odtmip.core.results import Status
from odtmip.models._compile import _Compiled, compile_model, model_statistics, paused_gc, require_scipy
from odtmip.models._highs_read import MipRun, mip_status, monotone, run_without_solution, start_verdict
from odtmip.models._highs_run import (
    GRACE,
    GRACE_FRACTION,
    Job,
    Outcome,
    command,
    feasibility_verdict,
    job_to_wire,
    new_highs,
    pass_model,
    run_job,
    stopped_outcome,
)

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
    """Raise :class:`~odtmip.core.exceptions.SolverUnavailableError` with an install hint when HiGHS (or scipy) is
    missing."""
    _highspy()
    require_scipy()


# ====================================================================================================
# Options and results


@dataclass(frozen=True)
class HighsOptions:
    """Settings of one HiGHS run.

    Parameters
    ----------
    time_limit : float or None, default=None
        Seconds for the whole :func:`solve` call (hand-off, completing the starts, the run); ``None`` means no
        limit. A MIP with a limit runs in a child process that is stopped when HiGHS overruns the limit.
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
        :class:`~odtmip.core.exceptions.OptionError`.
    """

    time_limit: float | None = None
    mip_rel_gap: float | None = 0.0
    threads: int | None = None
    seed: int | None = None
    log: bool = False
    lp_solver: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        check_time_limit(self.time_limit)
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


# ====================================================================================================
# Pyomo model -> HiGHS (the model is compiled to arrays by odtmip.models._compile)


def to_highs(model, options: HighsOptions = HighsOptions(), integer: bool = True):  # noqa: B008
    """Hand ``model`` to a fresh ``highspy.Highs`` exactly as :func:`solve` does, without running it.

    For benchmarks and debugging: returns ``(h, columns)`` where ``columns[j]`` is the Pyomo variable of
    HiGHS column j. The HiGHS log is captured (echoed to stderr when ``options.log`` is true). Threads are
    not touched, so call ``h.run()`` with the ``threads`` of the process's earlier runs.

    Raises
    ------
    ValueError
        A constant constraint is violated (the model is infeasible before HiGHS sees it).
    """
    hs = _highspy()
    comp = compile_model(model)
    if comp.infeasible_reason is not None:
        raise ValueError(f"model {model.name!r} is infeasible: {comp.infeasible_reason}")
    h = _new_highs(hs, options, mip=integer, recorder=_Recorder(echo=options.log))
    pass_model(hs, h, comp, integer=integer)
    return h, comp.columns


# ====================================================================================================
# Highs object set-up


_scheduler_lock = threading.Lock()
_scheduler_user: tuple[int, int | None] | None = None  # (thread, thread count) of the last run; None: none yet


def _use_threads(hs, threads: int | None) -> None:
    """Reset HiGHS's global scheduler unless the last run was in this thread with the same thread count.

    HiGHS builds its scheduler at the first run in a process and then refuses a different ``threads`` (the run
    ends with an error and no solution); a scheduler built from another Python thread fails the same way (seen
    with an in-process Dask cluster). Do not run solves concurrently in one process.
    """
    global _scheduler_user
    with _scheduler_lock:
        user = (threading.get_ident(), threads)
        if user != _scheduler_user:
            hs.Highs.resetGlobalScheduler(True)
            _scheduler_user = user


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


#: HiGHS's ``presolve_rule_off`` bit of its presolve rule 16, "Enumeration" (the same bit in highspy 1.15 and 1.16).
#: That rule does not read the clock: on a large OCT model (8 000 rows, depth 4) it ran for minutes past a 30 s
#: limit. Runs with a time limit switch it off (an ``extra`` ``presolve_rule_off`` given by the user wins).
PRESOLVE_ENUMERATION = 1 << 16


def _option_items(options: HighsOptions, mip: bool) -> list[tuple[str, Any]]:
    """The HiGHS options of a run, as (name, value) pairs."""
    items = []
    if options.time_limit is not None:
        items.append(("time_limit", float(options.time_limit)))
        if mip:  # a limit must hold: leave out the one presolve rule that never reads the clock
            items.append(("presolve_rule_off", PRESOLVE_ENUMERATION))
    if mip and options.mip_rel_gap is not None:
        items.append(("mip_rel_gap", float(options.mip_rel_gap)))
    items.append(("threads", int(options.threads or 0)))  # 0 lets HiGHS choose
    if options.seed is not None:
        items.append(("random_seed", int(options.seed)))
    if options.lp_solver is not None:
        items.append(("mip_lp_solver" if mip else "solver", options.lp_solver))
    return items + list(options.extra.items())


class _Recorder:
    """What a HiGHS run reports as it goes (the sink of :func:`odtmip.models._highs_run.run_job`): the log, the
    callback points, the progress display and the last improving solution."""

    def __init__(self, echo: bool, units: Callable[[float, float], tuple[float, float]] | None = None):
        self.echo = echo
        self.progress = progress.Reporter("highs")
        self.units = units  # (incumbent, dual bound) -> what the progress lines show; None: the model's own
        self.parts: list[str] = []
        self.points: list[tuple[float, float, float, int]] = []  # (seconds, primal, dual, nodes)
        self.incumbent: np.ndarray | None = None  # x of the last improving solution
        self.run_started: float | None = None  # perf_counter() when HiGHS started

    def write(self, message: str) -> None:
        self.parts.append(message)
        if self.echo:
            sys.stderr.write(message)

    def started(self) -> None:
        self.run_started = time.perf_counter()

    def improving(self, seconds: float, objective: float, dual: float, nodes: int, x: np.ndarray) -> None:
        self.points.append((seconds, objective, dual, nodes))
        self.incumbent = x  # HiGHS reports strictly improving solutions only

    def logging(self, seconds: float, primal: float, dual: float, nodes: int) -> None:
        self.points.append((seconds, primal, dual, nodes))
        self.progress(*(self.units(primal, dual) if self.units else (primal, dual)), seconds)

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


def _checked_options(hs, options: HighsOptions, mip: bool, recorder: _Recorder) -> list[tuple[str, Any]]:
    """The run's HiGHS options as (name, value) pairs, each checked on a scratch ``Highs``; raise
    :class:`OptionError` for an unknown option, a value of the wrong type or one HiGHS rejects."""
    with console_captured(recorder):
        scratch = hs.Highs()
    scratch.setOptionValue("output_flag", False)
    items = []
    for name, value in _option_items(options, mip):
        if name in options.extra:
            value = _coerce_option(scratch, hs, name, value)
        if scratch.setOptionValue(name, value) == hs.HighsStatus.kError:
            raise OptionError(f"HiGHS rejected option {name}={value!r}")
        items.append((name, value))
    return items


def _new_highs(hs, options: HighsOptions, mip: bool, recorder: _Recorder):
    """A fresh, silent ``Highs`` with the run's options and the recorder's log callback."""
    items = _checked_options(hs, options, mip, recorder)
    with console_captured(recorder):
        return new_highs(hs, items, recorder.write)


@contextlib.contextmanager
def _highs_turn(hs, threads: int | None, recorder: _Recorder | None = None):
    """Run HiGHS in this process inside: the thread scheduler set for ``threads``, the console captured."""
    with console_captured(recorder):
        _use_threads(hs, threads)
        yield


def _run(hs, h, recorder: _Recorder | None = None) -> None:
    """``h.run()`` with the process's thread scheduler set for ``h``'s own ``threads`` option (0: HiGHS chooses)
    and the console captured."""
    with _highs_turn(hs, int(h.getOptions().threads) or None, recorder):
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
#: HiGHS's default mip_feasibility_tolerance: how feasible the solutions it reports during a run are
_MIP_FEASIBILITY_TOLERANCE = 1e-6


def _feasible_start(comp: _Compiled, x: np.ndarray, tol: float = _START_TOLERANCE) -> np.ndarray | None:
    """``x`` with its integer columns rounded when it satisfies every bound, integrality and row of ``comp``
    within ``tol``; None otherwise. Plain linear algebra: no solver is asked."""
    x = np.asarray(x, dtype=float).copy()
    if x.shape != (len(comp.columns),) or not np.isfinite(x).all():
        return None
    rounded = np.round(x[comp.integer])
    if (np.abs(x[comp.integer] - rounded) > tol).any():
        return None
    x[comp.integer] = rounded
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
            pass_model(hs, h, comp)
            h.setOptionValue("mip_max_nodes", 500)
        lower, upper = comp.col_lower[idx], comp.col_upper[idx]
        h.changeColsBounds(len(idx), idx, val, val)
        h.setOptionValue("time_limit", math.inf if left is None else max(left, 1e-3))
        h.clearSolver()  # no warm start from the previous completion
        _run(hs, h)
        if int(h.getInfo().primal_solution_status) == 2:  # kSolutionStatusFeasible
            out[k] = _feasible_start(comp, np.asarray(h.getSolution().col_value, dtype=float))
        h.changeColsBounds(len(idx), idx, lower, upper)
    return out


# ====================================================================================================
# Solving


def solve(
    model,
    options: HighsOptions = HighsOptions(),  # noqa: B008  (frozen, so a shared default is safe)
    warm_start: Iterable | None = None,
    more_starts: Iterable[Iterable] = (),
    progress_units: Callable[[float, float], tuple[float, float]] | None = None,
) -> MipRun:
    """Solve a linear Pyomo model with HiGHS and load the incumbent into its variables.

    Parameters
    ----------
    model : pyo.ConcreteModel
        A linear model with at most one active objective (minimise or maximise).
    options : HighsOptions, default=HighsOptions()
        Time limit, gap, threads, seed, log and other HiGHS options. The time limit covers the whole call: the
        hand-off, completing the starts and the HiGHS run.
    warm_start : iterable of (VarData, float), optional
        A MIP start, possibly partial (e.g. only the structural binaries). A partial start is completed first
        (the given values fixed, the rest solved; see :func:`_complete_starts`) and HiGHS receives the full,
        verified vector. Pairs for fixed or unused variables, and ``None`` values, are skipped.
    more_starts : iterable of assignments, optional
        Further solutions (each an iterable of ``(VarData, value)`` pairs, full or partial), completed and
        verified the same way and handed to HiGHS during the search, one per poll of its user-solution callback
        (``cbMipUserSolution``), in order.
    progress_units : callable, optional
        ``(incumbent, dual bound) -> (best, bound)``: what the progress lines (:mod:`odtmip.core.progress`) show, e.g.
        the caller's loss; default the model's own values and sense.

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
    comp = compile_model(model)
    starts = [_start_vectors(comp, warm_start if warm_start is not None else ())]
    starts += [_start_vectors(comp, assignment) for assignment in more_starts]
    given = len(starts[0][0]) > 0
    if comp.infeasible_reason is not None:
        log = f"Pyomo found a violated constant constraint before HiGHS ran: {comp.infeasible_reason}\n"
        return run_without_solution(Status.INFEASIBLE, "infeasible", comp, time.perf_counter() - t0, 0.0, given, log)

    recorder = _Recorder(echo=options.log, units=progress_units)
    items = _checked_options(hs, options, mip=True, recorder=recorder)
    handoff = time.perf_counter() - t0  # the compile; HiGHS's passModel is added below

    t1 = time.perf_counter()
    deadline = None if options.time_limit is None else t0 + options.time_limit
    starts = [s if len(s[0]) else None for s in starts]
    completed = _complete_starts(hs, comp, [s for s in starts if s is not None], options, deadline)
    full = iter(completed)
    start, *extra = [None if s is None else next(full) for s in starts]
    start_seconds = time.perf_counter() - t1
    left = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)  # a child takes its start-up off
    job = Job(comp.arrays(), items, start, [x for x in extra if x is not None], left)
    is_mip = bool(comp.integer.any())
    try:
        if deadline is None or not is_mip:  # in this process: no limit, or an LP (HiGHS's simplex reads its clock)
            with _highs_turn(hs, options.threads, recorder):
                outcome = run_job(hs, job, recorder)
        else:  # a limit must hold even where HiGHS does not read its clock
            outcome = _run_in_child(job, recorder, deadline)
    except RuntimeError as exc:
        raise RuntimeError(f"{exc}; log tail:\n{''.join(recorder.parts[-30:])}") from None
    handoff += outcome.handoff_seconds
    solve_seconds = time.perf_counter() - t1 - outcome.handoff_seconds
    if outcome.verdict is not None:  # HiGHS said "unbounded or infeasible"
        if outcome.verdict == "infeasible":
            status, reason = Status.INFEASIBLE, "infeasible"
        else:  # feasible, or still unknown: report what HiGHS could not rule out
            status, reason = Status.NO_SOLUTION, "unbounded"
        return run_without_solution(status, reason, comp, handoff, solve_seconds, given, recorder.text)
    status, reason = mip_status(outcome, is_mip)

    empty = outcome.model_status == "kModelEmpty"
    x = outcome.x
    if outcome.stopped and x is not None:  # a solution the child reported, checked as HiGHS checks its own
        x = _feasible_start(comp, x, _MIP_FEASIBILITY_TOLERANCE)
    has_solution = empty or (x is not None and status not in (Status.INFEASIBLE, Status.NO_SOLUTION))
    objective = bound = None
    gap = math.inf
    if empty:
        objective = bound = comp.offset
        gap = 0.0
    elif has_solution:
        objective = outcome.objective
        gap = outcome.gap if is_mip else (0.0 if status is Status.OPTIMAL else math.inf)
        x[comp.integer] = np.round(x[comp.integer])  # HiGHS may return 0.9999999 for 1
        for var, value in zip(comp.columns, x.tolist(), strict=True):
            var.set_value(value, skip_validation=True)
    if not empty and status not in (Status.INFEASIBLE, Status.NO_SOLUTION):
        if is_mip:
            bound = outcome.dual_bound
        elif status is Status.OPTIMAL:
            bound = objective
        else:  # an LP stopped early: no dual bound is known
            bound = math.inf if comp.maximize else -math.inf

    trajectory = []
    statistics = dict(comp.statistics)
    if bound is not None:
        no_incumbent = -math.inf if comp.maximize else math.inf
        offset = (recorder.run_started or t1) - t1  # the callbacks' clock starts with the run
        final = (outcome.run_seconds + offset, no_incumbent if objective is None else objective, bound)
        points = [(t + offset, p, d) for t, p, d, _ in recorder.points]
        trajectory = monotone(points, comp.maximize, final)
        in_root = [t + offset for t, _, _, nodes in recorder.points if nodes == 0]
        if is_mip and outcome.nodes > 1 and in_root:
            statistics["root_seconds"] = in_root[-1]
    accepted, start_objective = start_verdict(comp, start, objective) if given else (None, None)
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
        nodes=outcome.nodes,
        lp_iterations=outcome.lp_iterations,
        handoff_seconds=handoff,
        solve_seconds=solve_seconds,
        warm_start_given=given,
        warm_start_accepted=accepted,
        warm_start_objective=start_objective,
        trajectory=trajectory,
        log=recorder.text,
        statistics=statistics,
        start_seconds=start_seconds,
    )


def _run_in_child(job: Job, recorder: _Recorder, deadline: float) -> Outcome:
    """Run ``job`` in a child process (:mod:`odtmip.models._highs_run`), reporting to ``recorder`` as it goes; stop
    the child when ``deadline`` has passed by the grace, with the best solution and bound it reported."""
    t0 = time.perf_counter()
    stop_at = deadline + GRACE + GRACE_FRACTION * max(deadline - t0, 0.0)
    child = subprocess.Popen(command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    inbox: queue.SimpleQueue = queue.SimpleQueue()
    reader = threading.Thread(target=_receive, args=(child.stdout, inbox), daemon=True)
    reader.start()
    try:
        with contextlib.suppress(BrokenPipeError):  # a child that died early is reported below
            child.stdin.write(pickle.dumps(job_to_wire(job), protocol=pickle.HIGHEST_PROTOCOL))
            child.stdin.close()
        while True:
            try:
                kind, *args = inbox.get(timeout=max(stop_at - time.perf_counter(), 0.0))
            except queue.Empty:
                seconds = time.perf_counter() - (recorder.run_started or t0)
                recorder.write(f"odtmip: HiGHS had not stopped {stop_at - deadline:.2f} s after the time limit; "
                               f"stopped at {seconds:.2f} s with its last reported solution and bound\n")
                return stopped_outcome(job, recorder.incumbent, recorder.points, seconds)
            if kind == "done":
                return Outcome(**args[0])
            if kind == "error":
                raise RuntimeError(f"HiGHS failed in its child process:\n{args[0]}")
            if kind == "eof":
                raise RuntimeError(f"HiGHS's child process ended without a result (exit code {child.wait()})")
            getattr(recorder, kind)(*args)
    finally:
        child.kill()
        child.wait()
        child.stdout.close()


def _receive(stream, inbox: queue.SimpleQueue) -> None:
    """Move the child's reports from ``stream`` into ``inbox``, then ``("eof",)``."""
    with contextlib.suppress(EOFError, OSError, pickle.UnpicklingError, ValueError):
        while True:
            inbox.put(pickle.load(stream))
    inbox.put(("eof",))


def lp_relaxation(model, options: HighsOptions = HighsOptions(),  # noqa: B008
                  statistics: dict | None = None) -> float | None:
    """Optimal value of the LP relaxation (integrality dropped), in the model's own sense.

    The Pyomo model is not modified: integrality is dropped only in the copy handed to HiGHS.

    Parameters
    ----------
    model : pyo.ConcreteModel
        A linear model with at most one active objective.
    options : HighsOptions, default=HighsOptions()
        ``lp_solver`` sets HiGHS ``solver`` (``"ipm"`` is much faster on large tree models);
        ``mip_rel_gap`` is ignored; ``time_limit`` covers the call (compiling the model, handing it over, the run).
    statistics : dict, optional
        Filled with :func:`model_statistics` of the model (from the same compilation).

    Returns
    -------
    float or None
        The LP optimum including the objective constant. An infeasible relaxation gives ``+inf`` when
        minimising and ``-inf`` when maximising; an unbounded one the opposite infinity. None when a limit (the
        time limit, an iteration limit) stopped HiGHS before the optimum.

    Raises
    ------
    RuntimeError
        HiGHS failed.
    """
    hs = _highspy()
    t0 = time.perf_counter()
    comp = compile_model(model)
    if statistics is not None:
        statistics.update(comp.statistics)
    infeasible = -math.inf if comp.maximize else math.inf
    if comp.infeasible_reason is not None:
        return infeasible
    recorder = _Recorder(echo=options.log)
    h = _new_highs(hs, options, mip=False, recorder=recorder)
    pass_model(hs, h, comp, integer=False)
    if options.time_limit is not None:  # the limit covers the call: compiling and handing over the model count
        h.setOptionValue("time_limit", max(options.time_limit - (time.perf_counter() - t0), 1e-3))
    _run(hs, h, recorder)
    M = hs.HighsModelStatus
    ms = h.getModelStatus()
    if ms == M.kUnboundedOrInfeasible:
        with _highs_turn(hs, options.threads, recorder):
            verdict = feasibility_verdict(hs, h, options.time_limit)
        ms = {"unbounded": M.kUnbounded, "infeasible": M.kInfeasible}.get(verdict, ms)
    if ms == M.kOptimal:
        return float(h.getInfo().objective_function_value)
    if ms == M.kModelEmpty:
        return comp.offset
    if ms == M.kInfeasible:
        return infeasible
    if ms == M.kUnbounded:
        return -infeasible
    if ms in (M.kTimeLimit, M.kIterationLimit):
        return None
    raise RuntimeError(
        f"HiGHS did not solve the LP relaxation (model status {h.modelStatusToString(ms)!r}); log tail:\n"
        + "".join(recorder.parts[-30:])
    )
