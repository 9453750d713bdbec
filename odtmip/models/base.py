"""What every formulation shares: solve a built model with HiGHS, decode, verify, report.

A formulation module supplies the built Pyomo model and three callables: ``decode(m) -> Tree``,
``loss(tree) -> float`` (odtmip's objective, recomputed by routing the data) and ``to_loss(value)`` (the
model's own objective value turned into that loss). :func:`solve_model` does the rest, so each formulation
reports status, bound, gap, statistics and the verified tree the same way.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import fields, replace

from odtmip.exceptions import OptionError, VerificationError
from odtmip.models import _highs
from odtmip.models._highs import HighsOptions
from odtmip.results import SolveResult, Status
from odtmip.tree import Tree


def merge_options(cls, options, values: dict, model: str):
    """``options`` (default ``cls()``) with ``values`` replacing its fields; unknown names are an OptionError."""
    options = options or cls()
    unknown = sorted(set(values) - {f.name for f in fields(cls)})
    if unknown:
        raise OptionError(f"unknown {model} option(s): {', '.join(unknown)}")
    return replace(options, **values) if values else options


def solve_model(
    name: str,
    m,
    *,
    decode: Callable[[object], Tree],
    loss: Callable[[Tree], float],
    to_loss: Callable[[float], float],
    highs: HighsOptions,
    warm_start=None,
    build_seconds: float = 0.0,
    lp_bound: bool = False,
    extra_stats: dict | None = None,
    started: float | None = None,
    more_starts: list | None = None,
) -> SolveResult:
    """Solve ``m`` with HiGHS and return a verified :class:`SolveResult` in odtmip's loss sense.

    ``to_loss`` must be decreasing or increasing consistently with the model's sense (for a maximised model,
    ``to_loss(value) = offset - value``), so HiGHS's dual bound maps to a lower bound on the loss.
    A decoded tree whose recomputed loss is worse than HiGHS's incumbent (beyond round-off) raises
    :class:`VerificationError`; a better one (possible when continuous variables were rounded) is reported.
    ``more_starts`` are further assignments (lists of (variable, value) pairs) handed to HiGHS during the
    search, one per poll of its user-solution callback (see :func:`odtmip.models._highs.solve`).
    """
    started = time.perf_counter() if started is None else started
    stats: dict = {}
    if lp_bound:
        t = time.perf_counter()
        stats["lp_relaxation"] = to_loss(_highs.lp_relaxation(m, highs))
        stats["lp_seconds"] = time.perf_counter() - t
    run = _highs.solve(m, highs, warm_start=warm_start, more_starts=more_starts or ())
    stats.update(run.statistics)
    tree = objective = None
    if run.has_solution:
        tree = decode(m)
        objective = loss(tree)
        claimed = to_loss(run.objective)
        if objective > claimed + 1e-6 * max(1.0, abs(claimed)):
            raise VerificationError(
                f"{name}: the decoded tree's recomputed objective {objective:g} is worse than the solver's "
                f"{claimed:g}")
    bound = -math.inf if run.bound is None or not math.isfinite(run.bound) else to_loss(run.bound)
    if objective is not None:
        bound = min(bound, objective)
    status = run.status
    if status is Status.OPTIMAL and objective is not None:
        bound = objective
    stats.update(
        build_seconds=build_seconds,
        handoff_seconds=run.handoff_seconds,
        solve_seconds=run.solve_seconds,
        start_seconds=run.start_seconds,
        nodes=run.nodes,
        lp_iterations=run.lp_iterations,
        warm_start_given=run.warm_start_given,
        warm_start_accepted=run.warm_start_accepted,
        warm_start_objective=None if run.warm_start_objective is None else to_loss(run.warm_start_objective),
        trajectory=[(t, to_loss(p) if math.isfinite(p) else None, to_loss(d) if math.isfinite(d) else None)
                    for t, p, d in run.trajectory],
    )
    stats.update(extra_stats or {})
    return SolveResult(solver=name, status=status, stop_reason=run.stop_reason, tree=tree, objective=objective,
                       bound=bound, seconds=time.perf_counter() - started, stats=stats)
