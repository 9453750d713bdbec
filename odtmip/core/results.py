"""What a solve returns, shared by both engines (``odtmip.dp`` and ``odtmip.models``).

A result separates *what was proved* (:class:`Status`) from *why the search stopped* (``stop_reason``).
Every objective is a loss to minimise; a model that maximises (e.g. correct classifications) converts
inside its own module, so that DP and MIP objectives compare number for number.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class Status(enum.Enum):
    """What a solve proved."""

    OPTIMAL = "optimal"  # a tree is returned and proven optimal
    TIME_LIMIT = "time_limit"  # a limit stopped the proof; ``tree`` is the best found (may be None)
    MEMORY_LIMIT = "memory_limit"  # the memory limit stopped the proof; ``tree`` is the best found
    INFEASIBLE = "infeasible"  # proven: no tree meets the constraints
    NO_SOLUTION = "no_solution"  # the search stopped before any tree was found


@dataclass(frozen=True)
class SolveResult:
    """The outcome of one solve.

    Attributes
    ----------
    solver : str
        Name of the solver, e.g. ``"dp"`` or ``"gunluk"``.
    status : Status
        What was proved.
    stop_reason : str
        ``"solved"``, ``"time_limit"``, ``"memory_limit"``, ``"node_limit"``, ``"gap"`` or ``"interrupted"``.
    tree : Tree or None
        The best tree found; ``None`` when no tree was found.
    objective : float or None
        The objective of ``tree`` recomputed by routing the training data through it; ``None`` without a
        tree.
    bound : float
        Best proven lower bound on the objective: never below the loss's trivial bound (the least loss any tree
        can have: 0 for (weighted) errors), never above ``objective``, equal to it when optimal; ``inf`` when
        no tree meets the constraints (``Status.INFEASIBLE``).
    seconds : float
        Wall-clock time of the whole call.
    stats : Mapping[str, Any]
        Solver statistics (nodes, cache entries, build and solve seconds, model sizes, ...).
    """

    solver: str
    status: Status
    stop_reason: str
    tree: Any
    objective: float | None
    bound: float
    seconds: float
    stats: Mapping[str, Any] = field(default_factory=dict)

    @property
    def optimal(self) -> bool:
        """True when the returned tree is proven optimal."""
        return self.status is Status.OPTIMAL

    @property
    def gap(self) -> float:
        """Relative gap ``(objective - bound) / max(|objective|, 1e-9)``; ``inf`` without a tree, 0 if optimal. It lies
        in [0, 1], since the bound lies between the trivial bound (>= 0 for every loss here) and the objective."""
        if self.objective is None or not math.isfinite(self.bound):
            return math.inf
        if self.status is Status.OPTIMAL:
            return 0.0
        return max(0.0, self.objective - self.bound) / max(abs(self.objective), 1e-9)


def stopped_status(limit: Status, objective: float, bound: float, tol: float = 0.0) -> Status:
    """What a search that ``limit`` stopped proved about its best tree, of loss ``objective``: that it is optimal
    when it meets the lower bound the search proved (``objective <= bound + tol``, ``tol`` the solver's rounding
    tolerance), else nothing (``limit``). The result's ``stop_reason`` still names the limit."""
    return Status.OPTIMAL if objective <= bound + tol else limit
