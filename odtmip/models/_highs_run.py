"""One HiGHS MIP run from arrays, in this process or in a child process that can be stopped.

Why a child process
-------------------
HiGHS reads its clock between the steps of its search, not inside every step. On OCT-H (1 000 rows of 12 numeric
columns as deciles, depth 3, ``time_limit=15``) the root LP ended at 13 s and HiGHS's mod-k cut separator
(``HighsModkSeparator``, Gaussian elimination over GF(k)) then ran until 31.6 s; ``cbMipInterrupt`` is not polled
there either. A Python thread cannot stop C code, so :func:`odtmip.models._highs.solve` runs every MIP that has a
time limit here, in a child: the child streams the log, each callback's bounds and every improving solution back
as they come, and the parent stops it when the deadline has passed by :data:`GRACE` (plus
:data:`GRACE_FRACTION` of the time left), keeping the best solution and the best bound the child reported.

This module imports only the standard library, numpy and highspy, so the child starts in about 0.2 s (importing
odtmip would take 1.5 s): the parent runs the file as a script (:func:`command`).

Protocol (plain pickled dicts and tuples, so that neither side needs the other's module under the same name): the
parent writes one :class:`Job` (:func:`job_to_wire`) to the child's stdin; the child writes one tuple per report
to its stdout, named by the sink method it stands for (see :func:`run_job`): ``("write", text)``, ``("started",)``,
``("improving", seconds, objective, dual bound, nodes, x)``, ``("logging", seconds, primal bound, dual bound,
nodes)``, and at the end ``("done", fields of the Outcome)`` or ``("error", traceback)``. Whatever C code writes to
the child's file descriptor 1 goes into the log instead (sent when the run ends: a child stopped at the deadline
loses it).
"""

from __future__ import annotations

import math
import os
import pickle
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Seconds the parent waits past the deadline before it stops the child (HiGHS, which does read its clock between
#: steps, normally returns on its own within this), plus :data:`GRACE_FRACTION` of the time left when it starts.
GRACE = 0.5
GRACE_FRACTION = 0.02


@dataclass
class Arrays:
    """A linear model as HiGHS takes it: the matrix row-wise (CSR) and the bounds; ``integer`` per column."""

    cost: np.ndarray
    offset: float  # objective constant, including the contribution of fixed variables
    maximize: bool
    col_lower: np.ndarray
    col_upper: np.ndarray
    integer: np.ndarray  # bool per column
    row_lower: np.ndarray
    row_upper: np.ndarray
    a_start: np.ndarray  # the matrix row-wise (CSR), int32 / float64: HiGHS's passModel takes it 2-3x faster
    a_index: np.ndarray
    a_value: np.ndarray


@dataclass
class Job:
    """One MIP run: the model, HiGHS options as checked (name, value) pairs, a full verified start, further
    solutions to hand over during the search (one per poll of ``cbMipUserSolution``), and the time limit."""

    model: Arrays
    options: list[tuple[str, Any]]
    start: np.ndarray | None = None
    more_starts: list[np.ndarray] = field(default_factory=list)
    time_limit: float | None = None


@dataclass
class Outcome:
    """What a run ended with, read from HiGHS's status and info (never from its log)."""

    model_status: str  # a HighsModelStatus member name, e.g. "kTimeLimit"
    objective: float
    dual_bound: float
    gap: float
    nodes: int
    lp_iterations: int
    run_seconds: float  # HiGHS's own run time
    handoff_seconds: float  # passModel
    x: np.ndarray | None = None  # HiGHS's solution when it holds a feasible one
    verdict: str | None = None  # after "unbounded or infeasible": "unbounded", "infeasible" or "unknown"
    stopped: bool = False  # the parent stopped the child at the deadline


def new_highs(hs, options: list[tuple[str, Any]], write) -> Any:
    """A fresh ``Highs`` that prints nothing, with ``options`` set and its log going to ``write(text)``.

    Raises ValueError naming the first option HiGHS rejects.
    """
    h = hs.Highs()
    h.setOptionValue("log_to_console", False)  # HiGHS would print to stdout
    h.setOptionValue("output_flag", False)  # quiet while the options are set
    for name, value in options:
        if h.setOptionValue(name, value) == hs.HighsStatus.kError:
            raise ValueError(f"HiGHS rejected option {name}={value!r}")
    h.cbLogging.subscribe(lambda e: write(e.message))
    h.setOptionValue("output_flag", True)
    return h


def pass_model(hs, h, m: Arrays, integer: bool = True) -> None:
    """Load ``m`` into ``h`` (``Highs.passModel``, the matrix row-wise); ``integer=False`` passes the LP
    relaxation. Raises RuntimeError when HiGHS rejects the model."""
    integrality = m.integer.astype(np.int32) if integer else np.zeros(len(m.cost), np.int32)
    status = h.passModel(
        len(m.cost),
        len(m.row_lower),
        len(m.a_value),
        int(hs.MatrixFormat.kRowwise),
        int(hs.ObjSense.kMaximize if m.maximize else hs.ObjSense.kMinimize),
        m.offset,
        m.cost,
        m.col_lower,
        m.col_upper,
        m.row_lower,
        m.row_upper,
        m.a_start,
        m.a_index,
        m.a_value,
        integrality,  # 1 = HighsVarType.kInteger, 0 = kContinuous
    )
    if status == hs.HighsStatus.kError:
        raise RuntimeError("HiGHS rejected the model (see the log for the reason)")


def set_start(hs, h, x: np.ndarray) -> None:
    """Hand HiGHS a full MIP start (a value for every column)."""
    sol = hs.HighsSolution()
    sol.col_value = x
    sol.value_valid = True
    if h.setSolution(sol) == hs.HighsStatus.kError:
        raise RuntimeError("HiGHS rejected the warm start")


def feasibility_verdict(hs, h, seconds_left: float | None) -> str:
    """``"unbounded"``, ``"infeasible"`` or ``"unknown"`` after HiGHS said "unbounded or infeasible".

    Re-runs with a zero objective, which cannot be unbounded: a feasible point then means unbounded.
    """
    n = h.getNumCol()
    h.changeColsCost(n, np.arange(n, dtype=np.int32), np.zeros(n))
    if seconds_left is not None:
        h.setOptionValue("time_limit", max(seconds_left, 1e-3))
    h.run()
    ms = h.getModelStatus()
    if ms in (hs.HighsModelStatus.kOptimal, hs.HighsModelStatus.kModelEmpty):
        return "unbounded"
    if ms == hs.HighsModelStatus.kInfeasible:
        return "infeasible"
    return "unknown"


def run_job(hs, job: Job, sink) -> Outcome:
    """Run ``job`` and report to ``sink`` as it goes: ``sink.write(text)`` for the log, ``sink.started()`` just
    before HiGHS starts, ``sink.improving(seconds, objective, dual bound, nodes, x)`` for each improving solution,
    ``sink.logging(seconds, primal bound, dual bound, nodes)`` at HiGHS's log lines. The caller sets up the process
    (threads, console) around it."""
    t0 = time.perf_counter()
    h = new_highs(hs, job.options, sink.write)
    pass_model(hs, h, job.model)
    handoff = time.perf_counter() - t0
    if job.start is not None:
        set_start(hs, h, job.start)

    def on_improving(e):
        d = e.data_out
        x = np.array(d.mip_solution, dtype=float)
        sink.improving(d.running_time, d.objective_function_value, d.mip_dual_bound, d.mip_node_count, x)

    def on_logging(e):
        d = e.data_out
        sink.logging(d.running_time, d.mip_primal_bound, d.mip_dual_bound, d.mip_node_count)

    pending = list(job.more_starts)

    def on_user_solution(e):
        if pending:
            e.data_in.setSolution(pending.pop(0))

    h.cbMipImprovingSolution.subscribe(on_improving)
    h.cbMipLogging.subscribe(on_logging)
    if pending:
        h.cbMipUserSolution.subscribe(on_user_solution)
    if job.time_limit is not None:  # what is left of it after the hand-off
        h.setOptionValue("time_limit", max(job.time_limit - (time.perf_counter() - t0), 1e-3))
    sink.started()
    h.run()
    run_seconds = h.getRunTime()
    verdict = None
    if h.getModelStatus() == hs.HighsModelStatus.kUnboundedOrInfeasible:
        left = None if job.time_limit is None else job.time_limit - (time.perf_counter() - t0)
        verdict = feasibility_verdict(hs, h, left)
    info = h.getInfo()
    feasible = int(info.primal_solution_status) == 2  # kSolutionStatusFeasible
    return Outcome(
        model_status=h.getModelStatus().name,
        objective=float(info.objective_function_value),
        dual_bound=float(info.mip_dual_bound),
        gap=float(info.mip_gap),
        nodes=max(0, int(info.mip_node_count)),
        lp_iterations=max(0, int(info.simplex_iteration_count)) + max(0, int(info.ipm_iteration_count)),
        run_seconds=run_seconds,
        handoff_seconds=handoff,
        x=np.asarray(h.getSolution().col_value, dtype=float) if feasible else None,
        verdict=verdict,
    )


def stopped_outcome(job: Job, incumbent: np.ndarray | None, points: list, seconds: float) -> Outcome:
    """The :class:`Outcome` of a child stopped at the deadline: its last improving solution ``incumbent`` (else the
    start, which HiGHS holds as its incumbent) and the best dual bound of its ``points`` ``(seconds, primal, dual,
    nodes)``. The objective is recomputed from x."""
    m = job.model
    x = incumbent if incumbent is not None else job.start
    objective = float(m.cost @ x + m.offset) if x is not None else (-math.inf if m.maximize else math.inf)
    duals = [d for _, _, d, _ in points if not math.isnan(d)]
    dual = (min(duals) if m.maximize else max(duals)) if duals else (math.inf if m.maximize else -math.inf)
    if objective == dual:
        gap = 0.0
    else:  # HiGHS's mip_gap: |primal - dual| / |primal|
        gap = abs(objective - dual) / abs(objective) if x is not None and objective != 0 else math.inf
    return Outcome(
        model_status="kTimeLimit",
        objective=objective,
        dual_bound=dual,
        gap=gap,
        nodes=max((n for *_, n in points), default=0),
        lp_iterations=0,  # the callbacks report none before the end
        run_seconds=seconds,
        handoff_seconds=0.0,
        x=x,
        stopped=True,
    )


def command() -> list[str]:
    """The command that starts a child: this file as a script, without its folder on ``sys.path``."""
    code = "import runpy, sys; del sys.path[0]; runpy.run_path(sys.argv[1], run_name='__main__')"
    return [sys.executable, "-c", code, os.path.abspath(__file__)]


def job_to_wire(job: Job) -> dict:
    """``job`` as plain data (the child runs this file as ``__main__``, so it cannot unpickle :class:`Job`)."""
    return {**vars(job), "model": vars(job.model)}


def job_from_wire(data: dict) -> Job:
    return Job(**{**data, "model": Arrays(**data["model"])})


class _Channel:
    """The child's end: every report is a pickled tuple on the original stdout."""

    def __init__(self, stream):
        self.stream = stream

    def send(self, *message) -> None:
        pickle.dump(message, self.stream, protocol=pickle.HIGHEST_PROTOCOL)
        self.stream.flush()

    def write(self, text: str) -> None:
        self.send("write", text)

    def started(self) -> None:
        self.send("started")

    def improving(self, seconds, objective, dual, nodes, x) -> None:
        self.send("improving", seconds, objective, dual, nodes, x)

    def logging(self, seconds, primal, dual, nodes) -> None:
        self.send("logging", seconds, primal, dual, nodes)


def _child() -> int:
    started = time.perf_counter()
    channel = _Channel(os.fdopen(os.dup(1), "wb"))
    console = tempfile.TemporaryFile()
    os.dup2(console.fileno(), 1)  # C code's own prints (from the import on) go to the log, never into the channel
    try:
        import highspy  # before the job is read: the import overlaps the parent's pickling

        job = job_from_wire(pickle.load(sys.stdin.buffer))
        if job.time_limit is not None:  # the parent set it as it sent the job: the start-up here counts too
            job.time_limit -= time.perf_counter() - started
        outcome = run_job(highspy, job, channel)
    except BaseException:  # reported to the parent, which raises it
        channel.send("error", traceback.format_exc())
        return 1
    finally:
        console.seek(0)
        text = console.read().decode(errors="replace")
        if text:
            channel.write(text)
    channel.send("done", vars(outcome))
    return 0


if __name__ == "__main__":
    sys.exit(_child())
