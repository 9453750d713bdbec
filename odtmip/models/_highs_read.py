"""HiGHS's answer read back in the model's terms: :class:`MipRun`, the status and stop reason of a finished run,
the incumbent/bound trajectory kept monotone, and whether HiGHS took a warm start. The third step of a solve, after
compiling the model (:mod:`odtmip.models._compile`) and running HiGHS (:mod:`odtmip.models._highs_run`), which
:func:`odtmip.models._highs.solve` calls in that order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from odtmip.core.results import Status
from odtmip.models._compile import _Compiled
from odtmip.models._highs_run import Outcome

# Relative tolerance below which HiGHS's primal and dual bounds count as equal (a proven optimum).
_CLOSED_GAP = 1e-6


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
        Pyomo model → HiGHS (:func:`~odtmip.models._compile.compile_model`, then ``passModel``).
    solve_seconds : float
        Completing the starts and the HiGHS run (``Highs.run``), wall clock.
    warm_start_given : bool
        True when the warm start had at least one value for a column HiGHS sees.
    warm_start_accepted : bool or None
        True when the start (completed, if partial) is a feasible point of the model and HiGHS's final incumbent
        is at least as good; False when it could not be completed to a feasible point or HiGHS ended worse
        than it; ``None`` when no start was given. Decided from the start and the solver's state, never from
        its log (see :func:`start_verdict`).
    warm_start_objective : float or None
        Objective of the accepted start (after completion); ``None`` otherwise.
    trajectory : list of (float, float, float)
        ``(seconds, primal bound, dual bound)`` from HiGHS's callbacks, in order, ending with the final
        values. Kept monotone: the primal never worsens and the dual never weakens.
    log : str
        The HiGHS log, with whatever HiGHS wrote to the console (see :func:`console_captured`).
    statistics : dict
        :func:`model_statistics` of the model as handed to HiGHS; when the search went past the root node, also
        ``root_seconds``: the trajectory's time of the last callback point at node count 0, so that the dual bound
        of the trajectory at that time is the root bound (without it, the root bound is the final bound).
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


def mip_status(outcome: Outcome, is_mip: bool) -> tuple[Status, str]:
    """(Status, stop_reason) of a finished run; raise for HiGHS errors."""
    ms = outcome.model_status
    if ms == "kOptimal" and not is_mip:  # an LP: HiGHS's optimum is proven, and mip_* info is unset
        return Status.OPTIMAL, "solved"
    if ms == "kOptimal":
        primal, dual = outcome.objective, outcome.dual_bound
        if abs(primal - dual) <= _CLOSED_GAP * max(1.0, abs(primal)):
            return Status.OPTIMAL, "solved"
        return Status.TIME_LIMIT, "gap"  # stopped by mip_rel_gap / mip_abs_gap
    if ms == "kModelEmpty":  # every variable fixed or unused
        return Status.OPTIMAL, "solved"
    if ms == "kInfeasible":
        return Status.INFEASIBLE, "infeasible"
    if ms == "kUnbounded":
        return Status.NO_SOLUTION, "unbounded"
    if ms == "kTimeLimit":
        return Status.TIME_LIMIT, "time_limit"
    if ms in ("kIterationLimit", "kSolutionLimit"):  # mip_max_nodes, mip_max_leaves, mip_max_improving_sols
        return Status.TIME_LIMIT, "node_limit"
    if ms in ("kInterrupt", "kHighsInterrupt", "kObjectiveBound", "kObjectiveTarget", "kMemoryLimit"):
        return Status.TIME_LIMIT, "interrupted"
    raise RuntimeError(f"HiGHS stopped with model status {ms!r}")


def monotone(points, maximize: bool, final: tuple[float, float, float]) -> list[tuple[float, float, float]]:
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


def run_without_solution(status, reason, comp, handoff, seconds, given, log) -> MipRun:
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


def start_verdict(comp: _Compiled, start: np.ndarray | None, objective: float | None) -> tuple[bool, float | None]:
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
