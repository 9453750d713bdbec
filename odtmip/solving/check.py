"""Cross-check: solve one problem with a MIP model and with the DP, and say whether the optima agree.

Each formulation states which DP problem has the same optimum (``ARCHITECTURE.md``, "Equivalences"): the DP
over exactly the model's candidate splits, with the model's penalty and minimum leaf size, and an affine map
from the DP's objective to the model's units (:class:`DPProblem`). When the model's tree shape is not a
balanced tree (Günlük's ``depth2.5`` or ``imbalanced``), the DP brackets it: DP(deepest leaf) <= model <=
DP(shallowest leaf). A verdict is only given when the solves it rests on are proven optimal.

With side constraints (:mod:`odtmip.models.constraints`) the DP solves the same problem where it expresses them
exactly (``Forbid``: the columns' splits dropped; ``MinLeafSize``: ``min_leaf``), and the optima must be equal as
without them; under any other constraint the DP solves the unconstrained problem, whose optimum bounds the
constrained model's from below (``relation == "bound"``): DP <= model.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from odtmip.core.data import Dataset
from odtmip.core.exceptions import OptionError
from odtmip.core.options import validate
from odtmip.core.results import SolveResult, Status
from odtmip.models import FORMULATIONS
from odtmip.models.constraints import check_constraints
from odtmip.models.formulation import DPProblem
from odtmip.solving.constrained import EXACT, dp_form, without_columns
from odtmip.solving.pipeline import WARM_START_SHARE, Budget, refuse_missing_numbers, solve_mip, solve_problem
from odtmip.solving.solvers import CHECKED_MODELS

#: The formulations that state a DP equivalent (read from the solver table, which imports no engine).
MODELS = CHECKED_MODELS
# Options of the solve pipeline, not of a model.
_PIPELINE_OPTIONS = ("time_limit", "warm_start", "highs", "lp_bound", "feed_dp", "memory_limit", "dp_bounds",
                     "constraints")


def _checkable(model: str):
    """The formulation ``model``, when it states a DP equivalent."""
    f = FORMULATIONS.get(model)
    if f is None or f.dp_problem is None:
        raise OptionError(f"check supports the models {', '.join(MODELS)} (got {model!r})")
    return f


def dp_problem(data: Dataset, model: str, max_depth: int | None = None, options=None, **values) -> DPProblem:
    """The DP problem with the same optimum as ``model`` on ``data`` (``options`` / ``values``: the model's)."""
    f = _checkable(model)
    values = {name: value for name, value in values.items() if name not in _PIPELINE_OPTIONS}
    return f.dp_problem(data, max_depth, f.make_options(max_depth, options, {**values, **f.fixed}))


@dataclass(frozen=True)
class CheckReport:
    """The outcome of :func:`check`.

    ``verdict`` is ``"agree"``, ``"disagree"`` or ``"unproven"`` (a limit stopped a solve before its proof).
    ``dp`` is the DP solve at the shallow depth and ``dp_deep`` the one at the deep depth (the same object for
    balanced shapes), both in the DP's own units; ``problem.in_model_units`` converts them.
    """

    model: str
    mip: SolveResult
    dp: SolveResult
    dp_deep: SolveResult
    problem: DPProblem
    verdict: str
    bound_only: bool = False

    @property
    def relation(self) -> str:
        """``"equal"`` when the optima must be equal, ``"bracket"`` when the DP brackets the model, ``"bound"`` when
        the DP solved the problem without side constraints it cannot express (DP <= model)."""
        p = self.problem
        if self.bound_only:
            return "bound"
        return "equal" if p.shallow == p.deep and p.exact else "bracket"

    @property
    def agree(self) -> bool:
        return self.verdict == "agree"

    @property
    def compile_seconds(self) -> float:
        """Seconds the DP kernels took to compile (or load from numba's cache) in this check, counted in the
        solves' ``seconds``."""
        solves = {id(r): r for r in (self.dp, self.dp_deep, self.mip)}.values()
        return sum(r.stats.get("compile_seconds", 0.0) for r in solves)

    def summary(self) -> str:
        """A few lines for people, every objective in the model's units."""
        units = self.problem.in_model_units
        lines = [f"DP optimum: {_fmt(units(self.dp.objective))} ({self.dp.status.value}, {self.dp.seconds:.2f} s)"]
        if self.compile_seconds:
            lines.append(f"DP kernels compiled (or loaded from numba's cache) in {self.compile_seconds:.2f} s "
                         "of that")
        if self.dp_deep is not self.dp:
            lines.append(f"DP at the topology's full depth: {_fmt(units(self.dp_deep.objective))} "
                         f"({self.dp_deep.status.value})")
        mip = self.mip
        lines.append(f"{self.model} model: {_fmt(mip.objective)} ({mip.status.value}, bound {_fmt(mip.bound)}, "
                     f"{mip.seconds:.2f} s, warm start accepted: {mip.stats.get('warm_start_accepted')})")
        bracket = {"bracket": " (DP deep <= model <= DP shallow)",
                   "bound": " (DP without the side constraints <= model)"}.get(self.relation, "")
        lines.append(f"cross-check: {self.verdict}{bracket}")
        return "\n".join(lines)


def _fmt(x) -> str:
    return "none" if x is None else f"{x:.6g}"


def check(data: Dataset, model: str = "gunluk", max_depth: int | None = None, time_limit: float | None = None,
          **options) -> CheckReport:
    """Solve ``data`` with MIP ``model`` (warm-started from the DP) and with the DP; compare the optima.

    ``max_depth`` (binoct and oct need it; without it Günlük's ``topology`` decides), ``time_limit`` and
    ``options`` are checked as ``odtmip.solve`` checks them. ``time_limit`` covers the whole check: the DP solves
    share :data:`~odtmip.solving.pipeline.WARM_START_SHARE` of it, as a warm start does, and the MIP gets the rest. The
    DP problem is solved once: its trees are also the MIP's warm start (unless ``warm_start`` says otherwise). The
    MIP's bound and status are what the model proves by itself (without the DP's bound,
    :func:`~odtmip.solving.pipeline.dp_lower_bound`), so that a verdict never rests on the DP alone.
    """
    budget = Budget(time_limit)
    refuse_missing_numbers(_checkable(model), data)
    problem = dp_problem(data, model, max_depth, **options)
    constraints = check_constraints(options.get("constraints"), data)
    exact = all(c.dp is not None and set(c.dp) <= set(EXACT["dp"]) for c in constraints)
    if constraints and exact:  # the DP's own problem under them: Forbid, MinLeafSize
        form = dp_form(constraints)
        problem = replace(problem, min_leaf=max(problem.min_leaf, form["min_leaf"]))
        if form["drop"]:
            problem = replace(problem, data=without_columns(problem.data, form["drop"]), solver="dp")
    given = validate(model, **({} if max_depth is None else {"max_depth": max_depth}),
                     **({} if time_limit is None else {"time_limit": time_limit}), **options)
    share = budget.part(WARM_START_SHARE)
    threads = getattr(options.get("highs"), "threads", None)  # HiGHS's threads, so concurrent checks share the cores
    dp = solve_problem(problem, problem.shallow, share.seconds_left(), threads=threads)
    dp_deep = dp if problem.deep == problem.shallow else solve_problem(problem, problem.deep, share.seconds_left(),
                                                                       threads=threads)
    solved = [(problem, depth, result) for depth, result in ((problem.deep, dp_deep), (problem.shallow, dp))]
    warm = given.get("warm_start", "dp") == "dp" or given.get("feed_dp", False)
    if time_limit is not None:
        given["time_limit"] = budget.seconds_left()
    mip = solve_mip(model, data, dp_solved=solved[: len(problem.depths)] if warm else None, dp_bound=False, **given)
    bound_only = bool(constraints) and not exact
    return CheckReport(model, mip, dp, dp_deep, problem, _verdict(mip, dp, dp_deep, problem, bound_only), bound_only)


def _verdict(mip: SolveResult, dp: SolveResult, dp_deep: SolveResult, problem: DPProblem,
             bound_only: bool = False) -> str:
    """``disagree`` when a proof contradicts an inequality the equivalence implies; ``agree`` when all solves
    are proven and both inequalities hold (for a balanced shape they force equality); else ``unproven``. With
    ``bound_only`` (side constraints the DP does not express) only DP(deep) <= model is implied."""
    if bound_only:
        deep = problem.in_model_units(dp_deep.objective)
        if mip.status is Status.INFEASIBLE:
            return "agree"  # the constraints cut off every tree; the DP's problem has none
        if mip.objective is None or deep is None:
            return "unproven"
        if problem.exact and dp_deep.optimal and mip.objective < deep - 1e-6 * max(1.0, abs(deep)):
            return "disagree"
        return "agree" if mip.optimal and dp_deep.optimal and problem.exact else "unproven"
    if Status.INFEASIBLE in (mip.status, dp.status, dp_deep.status):  # a target no tree meets
        if mip.status is dp.status is dp_deep.status:
            return "agree"
        # a proof that no tree meets the target against a tree that meets it
        return "disagree" if mip.objective is not None or dp.objective is not None else "unproven"
    shallow = problem.in_model_units(dp.objective)
    deep = problem.in_model_units(dp_deep.objective)
    if mip.objective is None or shallow is None:
        return "unproven"
    tol = 1e-6 * max(1.0, abs(shallow))
    # the model represents every tree of depth <= shallow, so its proven optimum cannot be worse than a DP tree
    if mip.optimal and mip.objective > shallow + tol:
        return "disagree"
    # every tree of the model has depth <= deep over splits the DP sees (when exact): none beats the DP optimum
    if problem.exact and dp_deep.optimal and deep is not None and mip.objective < deep - tol:
        return "disagree"
    return "agree" if mip.optimal and dp.optimal and dp_deep.optimal else "unproven"
