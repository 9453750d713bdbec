"""One solve pipeline for every MIP formulation, one floor above both engines.

:func:`solve_mip` runs a formulation of :data:`odtmip.models.FORMULATIONS` the same way every time:

1. **options**: the user's, checked by the formulation (``make_options``), plus the entry's fixed ones;
   **memory guard**: the model's size, counted before it is built (:attr:`Formulation.size`), gives its estimated
   peak memory (:func:`~odtmip.models.formulation.estimated_memory_gib`); above ``memory_limit`` GiB the call
   stops there with a :class:`~odtmip.core.exceptions.ResourceError`;
2. **budget**: ``time_limit`` covers the whole call from here on (:class:`Budget`): the warm start's DP solves
   (together at most :data:`WARM_START_SHARE` of it, loading the DP's kernels included: a first run on a new
   machine searches interpreted while a second process compiles them, see :mod:`odtmip.dp._kernels._interpreted`;
   the seconds loading or compiling them are also reported as ``stats["compile_seconds"]``), the model build, the
   LP bound, completing the starts and HiGHS, which gets whatever is left. A budget too small to build the model
   in (:data:`BUILD_SECONDS_PER_NONZERO`), or spent by the build, returns the best warm-start tree with status
   ``time_limit``;
3. **warm start**: the DP optimum of the formulation's own DP problems (``"dp"``), the paper's CART tree
   (``"cart"``, where the formulation has one), a given :class:`~odtmip.core.tree.Tree`, or nothing; a DP tree that
   does not fit the model is skipped, a given tree that does not fit is an error. With ``feed_dp`` the other DP
   trees are handed to HiGHS during the search;
4. **LP bound** (``lp_bound=True``), **the HiGHS run** (:func:`odtmip.models._highs.solve`);
5. **verification**: the solution is decoded into a tree whose loss is recomputed by routing the data; a tree
   worse than HiGHS's incumbent is an error (:class:`~odtmip.core.exceptions.VerificationError`);
6. **the bound**: the largest of the loss's trivial bound (:attr:`Formulation.loss_floor`, e.g. 0 errors), HiGHS's
   dual bound and, when the DP start solved the model's own problem, the DP's proven bound (:func:`dp_lower_bound`);
   ``stats["bound_source"]`` says which (``"trivial"``, ``"highs"`` or ``"dp"``). The bound never exceeds the
   objective, so the gap lies in [0, 1]; a tree that meets it is optimal whatever stopped HiGHS
   (:func:`~odtmip.core.results.stopped_status`);
7. **statistics**: model sizes, build / hand-off / solve seconds, nodes, LP iterations, the warm start and its
   verdict, the incumbent/bound trajectory (HiGHS's bound, never below the trivial one), all in the formulation's
   loss units.

This is where the DP hands its trees to a MIP: the formulation modules only describe their DP problems
(:class:`~odtmip.models.formulation.DPProblem`), so ``odtmip.models`` never imports ``odtmip.dp``.
:func:`odtmip.solving.check.check` passes the DP solutions it needs anyway (``dp_solutions``), so the DP runs once.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import replace
from numbers import Real

import numpy as np
import pyomo.environ as pyo

from odtmip.core.data import Dataset
from odtmip.core.exceptions import DataError, OptionError, ResourceError, VerificationError
from odtmip.core.options import MEMORY_LIMIT, memory_text, options_of
from odtmip.core.results import SolveResult, Status, stopped_status
from odtmip.core.tree import Tree
from odtmip.models import FORMULATIONS, _highs
from odtmip.models._highs import HighsOptions
from odtmip.models.constraints import Constraint, check_constraints
from odtmip.models.formulation import DPProblem, Formulation, estimated_memory_gib
from odtmip.models.view import add_dp_rows
from odtmip.solving.constrained import dp_form, dp_tree_under
from odtmip.solving.solvers import solve

logger = logging.getLogger("odtmip.pipeline")  # the name the command prints before its messages

#: The largest share of the time limit the warm start's DP solves take together.
WARM_START_SHARE = 0.25
#: The least time a DP solve of a warm start is given, even when the budget is nearly spent.
MIN_DP_SECONDS = 0.1
#: The share of the time left that the LP relaxation of a proof attempt (``dp_bounds``) may take.
LP_SHARE = 0.5
#: Seconds building a model takes per nonzero, at most, for the time budget's look ahead: a model that would take
#: longer than what is left is not built. MEASURED (2-core machine under a load of 5, N = 2000, depths 2-3):
#: BinOCT 0.6-1.0 us per nonzero (5.3 M nonzeros in 3.1 s), Günlük 0.15-0.2, OCT 0.06-0.08.
BUILD_SECONDS_PER_NONZERO = 1e-6
#: Relative tolerance between HiGHS's numbers and a loss recomputed by routing (as HiGHS's closed gap).
TOLERANCE = 1e-6
#: The values of ``dp_bounds``: no rows, the root's row, the root's and the paths' rows (:mod:`odtmip.models.view`).
DP_BOUNDS = ("none", "root", "paths")
#: The statistics of :func:`~odtmip.models.view.add_dp_rows` in the DP's units, reported in the model's loss units.
ROOT_BOUND_KEYS = ("dp_root_bound_min", "dp_root_bound_max")
#: ``stats["proved_by"]`` of an optimal result, by the source of its bound: HiGHS's branch and bound, the DP's proof
#: of the same problem, the loss's trivial bound (and ``"lp"``: the LP relaxation with the DP's rows).
PROOFS = {"highs": "mip", "dp": "dp", "trivial": "trivial"}


class Budget:
    """The time of one call: ``seconds`` from now (None: no limit)."""

    def __init__(self, seconds: float | None):
        self.start = time.perf_counter()
        self.seconds = seconds
        self.deadline = None if seconds is None else self.start + seconds

    def left(self) -> float | None:
        """Seconds until the deadline (never below 0); None without a limit."""
        return None if self.deadline is None else max(0.0, self.deadline - time.perf_counter())

    def part(self, share: float) -> Budget:
        """A budget for one part of the call: ``share`` of the whole, and never past this budget's deadline."""
        if self.seconds is None:
            return Budget(None)
        return Budget(min(share * self.seconds, self.left()))

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def seconds_left(self) -> float | None:
        """What is left, as a solver's time limit: at least :data:`MIN_DP_SECONDS` (a solver then returns its first
        tree); None without a limit."""
        left = self.left()
        return None if left is None else max(left, MIN_DP_SECONDS)

    def spent(self) -> bool:
        """True when the deadline has passed."""
        return self.deadline is not None and time.perf_counter() >= self.deadline


def formulation(name: str) -> Formulation:
    """The registered formulation called ``name``; an OptionError listing the others when there is none."""
    f = FORMULATIONS.get(name)
    if f is None:
        raise OptionError(f"unknown MIP formulation {name!r}; available: {', '.join(FORMULATIONS)}")
    return f


def refuse_missing_numbers(f: Formulation, data: Dataset) -> None:
    """A DataError when ``f`` reads numbers (:attr:`Formulation.reads_numbers`) and a numeric column has missing
    values."""
    if f.reads_numbers and data.missing_numeric:
        name = data.missing_numeric[0]
        raise DataError(f"{f.name} reads numeric columns as numbers and cannot route missing values (column "
                        f"{name!r} has some); use dp or gunluk, or drop the column (--drop {name})")


def solve_problem(problem: DPProblem, depth: int, time_limit: float | None = None,
                  memory_limit: float | None = MEMORY_LIMIT, threads: int | None = None) -> SolveResult:
    """Solve a formulation's DP problem at ``depth`` with the solver it names (:func:`odtmip.solve`, the DP in its
    units: :meth:`~odtmip.models.formulation.DPProblem.in_model_units` converts), in ``threads`` search threads
    where it takes them (None: its default)."""
    given = {key: value for key, value in (("memory_limit", memory_limit), ("threads", threads))
             if key in options_of(problem.solver)}
    return solve(problem.data, problem.solver, **problem.dp_options(depth), time_limit=time_limit, **given)


def dp_solutions(problems: Sequence[DPProblem], budget: Budget, memory_limit: float | None = MEMORY_LIMIT,
                 refused: list[str] | None = None,
                 threads: int | None = None) -> list[tuple[DPProblem, int, SolveResult]]:
    """Solve each problem at each of its :attr:`~DPProblem.depths` within ``budget``, in order, in ``threads``
    search threads (HiGHS's, so that concurrent runs share the cores as HiGHS does). A problem whose DP would take
    more than ``memory_limit`` is left out; its reason goes to ``refused``."""
    solved = []
    for problem in problems:
        for depth in problem.depths:
            try:
                result = solve_problem(problem, depth, budget.seconds_left(), memory_limit, threads)
            except ResourceError as exc:
                if refused is not None:
                    refused.append(str(exc))
                break  # its other depths have the same columns
            solved.append((problem, depth, result))
    return solved


def dp_lower_bound(solved: Sequence[tuple[DPProblem, int, SolveResult]]) -> float | None:
    """The largest lower bound on the model's optimal loss that the DP solves ``solved`` prove, in the model's units;
    None when none does.

    A DP solve bounds the model from below only when every tree of the model is a tree of the DP's problem with the
    same loss: the problem is ``exact`` (the DP sees all of the model's splits, with its minimum leaf size and
    two-class objective, and :meth:`~DPProblem.in_model_units` maps the DP's objective of a tree to the model's
    loss of it, an increasing map) and it was solved at its ``deep`` depth (no tree of the model is deeper). Then
    model optimum >= DP optimum at ``deep`` >= the DP's proven bound, also the bound of a DP solve stopped by its
    time limit (up to the DP's rounding tolerance, ``stats["tolerance"]``: 0 for integer weights). Neither of the
    other solves bounds the model: at ``shallow`` < ``deep`` the DP's optimum is only an upper bound (every tree of
    depth <= shallow fits the model, not conversely), and a problem that is not ``exact`` searches part of the
    model's splits, so its optimum may lie above the model's.
    """
    bounds = [problem.in_model_units(result.bound) for problem, depth, result in solved
              if problem.exact and depth == problem.deep and result.tree is not None and math.isfinite(result.bound)]
    return max(bounds, default=None)


def solve_mip(name: str, data: Dataset, max_depth: int | None = None, time_limit: float | None = None,
              warm_start: str | Tree | None = "dp", options=None, highs: HighsOptions | None = None,
              lp_bound: bool = False, feed_dp: bool = False, memory_limit: float | None = MEMORY_LIMIT,
              dp_solved: Sequence[tuple[DPProblem, int, SolveResult]] | None = None, dp_bound: bool = True,
              dp_bounds: str = "none", constraints: Sequence[Constraint] | None = None,
              **option_values) -> SolveResult:
    """Solve ``data`` with the MIP formulation ``name`` and return a verified result in its loss units.

    Parameters
    ----------
    name : str
        A key of :data:`odtmip.models.FORMULATIONS`.
    data : Dataset
        Training data.
    max_depth : int, optional
        The tree's depth, as the formulation reads it (Günlük: ``topology="balanced-D"`` unless a topology is
        given).
    time_limit : float, optional
        Seconds for the whole call (see the module docstring); default: ``highs.time_limit``, else no limit. At the
        limit the best tree so far is returned with status ``time_limit``.
    warm_start : "dp", "cart", "none", None or Tree
        What HiGHS starts from (see the module docstring).
    options : the formulation's options object, optional
        Model options; ``option_values`` override its fields.
    highs : HighsOptions, optional
        HiGHS settings (``time_limit`` is replaced by what the budget leaves).
    lp_bound : bool
        Also solve the LP relaxation: ``stats["lp_relaxation"]`` in loss units; None, and the reason in
        ``stats["lp_note"]``, when it did not finish in its time.
    feed_dp : bool
        Hand HiGHS the DP trees after the first during the search as well.
    memory_limit : float or None
        GiB the solve may take: a model whose estimated peak memory is larger is refused before it is built
        (:class:`~odtmip.core.exceptions.ResourceError`); default half of physical memory; None: no guard.
    dp_solved : list of (DPProblem, depth, SolveResult), optional
        The DP solutions of the formulation's warm-start problems, when the caller has them already.
    dp_bound : bool
        Raise the reported bound to the DP's proven bound of the same problem, when the DP start solved it
        (:func:`dp_lower_bound`). :func:`odtmip.solving.check.check` turns it off: it reports what the model proves by
        itself.
    dp_bounds : "none", "root" or "paths"
        Add the rows of :mod:`odtmip.models.view` to the model: the loss is at least the DP's value below the root's
        choice (``"root"``), and below each pair of the root's and a child's choices (``"paths"``, also the root
        row). The values are computed by :func:`odtmip.dp.bounds.split_values` on the formulation's
        ``dp_bound_problem``, within the time limit (``stats["dp_bounds_seconds"]``). The LP relaxation is then
        solved first: when it reaches the best start tree (:func:`lp_proves`) that tree is returned as optimal
        without HiGHS's branch and bound (``stats["proved_by"] = "lp"``). The rows bound the loss only, so they
        stay valid under side constraints.
    constraints : list of odtmip.constraints objects, optional
        Side constraints (:mod:`odtmip.models.constraints`): their rows are added to the model (built with the
        formulation's ``constrained`` options), the warm start is the best DP tree that meets them all (by
        ``holds``), else the DP's tree under those it expresses (:func:`constrained_start`), and the decoded tree
        must meet them all (a :class:`~odtmip.core.exceptions.VerificationError` otherwise). No tree meeting them
        ends with status ``infeasible``.
    """
    f = formulation(name)
    refuse_missing_numbers(f, data)
    opts = f.make_options(max_depth, options, {**option_values, **f.fixed})
    constraints = check_constraints(constraints, data)
    if constraints:
        if f.view is None:
            raise OptionError(f"{name} takes no side constraints")
        opts = f.constrained(opts)
    highs = highs or HighsOptions()
    if f.highs is not None:
        highs = f.highs(data, highs)
    if not (isinstance(warm_start, Tree) or warm_start is None or warm_start in f.warm_starts):
        raise OptionError(f"warm_start must be {', '.join(map(repr, f.warm_starts))} or a Tree, got {warm_start!r}")
    if not (memory_limit is None or isinstance(memory_limit, Real) and not isinstance(memory_limit, bool)
            and memory_limit > 0):
        raise OptionError(f"memory_limit must be a number of GiB > 0 or None (no guard), got {memory_limit!r}")
    stats: dict = {}
    budget = Budget(highs.time_limit if time_limit is None else time_limit)
    bound_problem = _bound_problem(f, data, max_depth, opts, dp_bounds)

    shortcut = f.shortcut(data, opts)
    if shortcut is not None:
        tree, objective, note = shortcut
        return SolveResult(solver=name, status=Status.OPTIMAL, stop_reason="solved", tree=tree, objective=objective,
                           bound=objective, seconds=budget.elapsed(),
                           stats={"warm_start_given": False, "warm_start_accepted": None, "note": note})

    size = f.size(data, max_depth, opts)
    stats["estimated_memory_gib"] = gib = estimated_memory_gib(size)
    if memory_limit is not None and gib > memory_limit:
        raise ResourceError(
            f"the {name} model would need about {memory_text(gib)} ({size['n_constraints']:,} rows, "
            f"{size['n_variables']:,} columns, {size['n_nonzeros']:,} nonzeros), more than memory_limit = "
            f"{memory_limit:g} GiB; use a smaller depth or fewer thresholds/features, or raise memory_limit")

    t = time.perf_counter()
    trees, dp_solved = _start_trees(f, data, max_depth, opts, warm_start, feed_dp, dp_solved, budget, stats,
                                    memory_limit, highs.threads)
    if constraints:
        stats["constraints"] = [c.describe() for c in constraints]
        trees = constrained_start(f, data, max_depth, opts, constraints, trees, warm_start, budget, stats)
    stats["warm_start_seconds"] = time.perf_counter() - t
    floor, dp = f.loss_floor(opts), dp_lower_bound(dp_solved) if dp_bound else None
    values = None if bound_problem is None else _bound_values(bound_problem, dp_bounds, budget, stats)
    left = budget.left()
    if left is not None and left < size["n_nonzeros"] * BUILD_SECONDS_PER_NONZERO:
        # no time left to build the model (a Pyomo build cannot stop half-way): the best start tree is the answer
        return _before_the_model(name, f, data, opts, trees, stats, budget, floor, dp,
                                 f"the time limit left {left:.2f} s, too little to build the model "
                                 f"({size['n_nonzeros']:,} nonzeros)")

    t = time.perf_counter()
    m = f.build(data, max_depth, opts)
    view = f.view(m, data) if constraints or values is not None else None  # one view for both kinds of rows
    if constraints:
        for c in constraints:
            c.rows(m, view, data)
        side = getattr(m, "side", None)  # the view's block (a Custom may add its rows elsewhere)
        stats["constraint_rows"] = 0 if side is None else sum(
            len(rows) for rows in side.component_map(pyo.Constraint).values())
        stats["constraint_variables"] = 0 if side is None else sum(
            len(var) for var in side.component_map(pyo.Var).values())
    if values is not None:
        rows = add_dp_rows(m, view, values, dp_bounds, bound_problem.penalty)
        stats.update(rows, **{key: bound_problem.in_model_units(rows[key]) for key in ROOT_BOUND_KEYS})
    stats["build_seconds"] = time.perf_counter() - t
    stats.update(f.stats(m, opts))
    if budget.spent():
        return _before_the_model(name, f, data, opts, trees, stats, budget, floor, dp,
                                 "the time limit ended while the model was built")
    starts = _embedded(f, m, data, opts, trees, warm_start, stats)
    first = starts[0] if starts and warm_start not in (None, "none") else None
    more = [values for _, values in starts[1:]] if feed_dp else []
    if feed_dp and first is None:
        more = [values for _, values in starts]
    stats["warm_start"] = "tree" if isinstance(warm_start, Tree) else (warm_start or "none")
    stats["warm_start_loss"] = None if first is None else f.loss(data, first[0], opts)

    to_loss = f.to_loss(m)
    if lp_bound or values is not None:
        t, limit = time.perf_counter(), _seconds(budget)
        if values is None:
            lp = _highs.lp_relaxation(m, replace(highs, time_limit=limit), statistics=stats)
        else:
            lp, limit = _proof_lp(m, highs, limit, stats)
        stats["lp_relaxation"] = None if lp is None else to_loss(lp)
        stats["lp_seconds"] = time.perf_counter() - t
        if lp is None:  # the MIP still runs, in what is left of the time
            stats["lp_note"] = ("the LP relaxation stopped at a limit before its optimum"
                                + ("" if limit is None else f" (time limit {limit:.3g} s)"))
        elif values is not None and first is not None and lp_proves(bound_problem, stats["lp_relaxation"],
                                                                    f.loss(data, first[0], opts)) and all(
                c.holds(first[0], data) for c in constraints):  # a Custom row unchecked: no proof
            return _proved_by_lp(name, f, data, opts, first[0], stats, budget)
        if budget.spent():
            return _before_the_model(name, f, data, opts, trees, stats, budget, floor, dp,
                                     "the time limit ended during the LP relaxation")
    run = _highs.solve(m, replace(highs, time_limit=_seconds(budget)), warm_start=None if first is None else first[1],
                       more_starts=more, progress_units=lambda best, dual: (to_loss(best), max(floor, to_loss(dual))))
    return _result(name, f, m, data, opts, run, to_loss, stats, budget, None if first is None else first[0], floor,
                   dp, constraints)


def verify_constraints(name: str, tree: Tree, data: Dataset, constraints, stats: dict) -> None:
    """A VerificationError when ``tree`` breaks a constraint; those without a check (a ``Custom`` without
    ``holds``) are listed in ``stats["constraints_unchecked"]``."""
    unchecked = []
    for c in constraints:
        verdict = c.holds(tree, data)
        if verdict is False:
            raise VerificationError(f"{name}: the decoded tree breaks the side constraint {c.describe()}")
        if verdict is None:
            unchecked.append(c.describe())
    if unchecked:
        stats["constraints_unchecked"] = unchecked


def constrained_start(f: Formulation, data: Dataset, max_depth, opts, constraints, trees: list[Tree], warm_start,
                      budget: Budget, stats: dict) -> list[Tree]:
    """The start trees that meet every constraint (``holds``; a constraint without a check lets a tree pass, HiGHS
    then checks its rows). A given tree must meet them (an OptionError otherwise). When no DP tree does, the DP's tree
    under the constraints it can express (``Forbid``: the columns dropped; ``MinLeafSize``: ``min_leaf``;
    ``Require(at="root")``: the root fixed; :func:`odtmip.solving.constrained.dp_tree_under`) on the formulation's
    ``dp_bound_problem`` starts the model if it meets them all; else there is no start (``stats["warm_start_note"]``).
    """
    def meets(tree: Tree) -> bool:
        return all(c.holds(tree, data) is not False for c in constraints)

    kept = [tree for tree in trees if meets(tree)]
    if isinstance(warm_start, Tree):
        if not kept:
            broken = next(c.describe() for c in constraints if c.holds(warm_start, data) is False)
            raise OptionError(f"the warm-start tree breaks the side constraint {broken}")
        return kept
    if kept or warm_start != "dp" or f.dp_bound_problem is None:
        if trees and not kept:
            stats["warm_start_note"] = "no start tree meets the side constraints; solved without a start"
        return kept
    expressed = [c for c in constraints if c.dp is not None]
    try:
        problem = f.dp_bound_problem(data, max_depth, opts)
    except OptionError:
        problem = None
    tree = None
    if expressed and problem is not None:
        form = dp_form(expressed)
        part = budget.part(WARM_START_SHARE)

        def solve_part(d: Dataset, depth: int, options: dict) -> SolveResult:
            return solve(d, problem.solver, **options, max_depth=depth, time_limit=part.seconds_left())

        dp_options = {k: v for k, v in problem.dp_options(problem.deep).items() if k != "max_depth"}
        tree = dp_tree_under(problem.data, problem.deep, form, dp_options, solve_part)
        stats["warm_start_constrained_dp"] = [c.describe() for c in expressed]
    if tree is not None and meets(tree):
        return [tree]
    stats["warm_start_note"] = "no DP tree meets the side constraints; solved without a start"
    return []


def _bound_problem(f: Formulation, data: Dataset, max_depth, opts, dp_bounds) -> DPProblem | None:
    """The formulation's DP problem behind the bound rows of ``dp_bounds`` (None for ``"none"``); an OptionError
    when the option or the formulation's options leave none."""
    if dp_bounds not in DP_BOUNDS:
        raise OptionError(f"dp_bounds must be one of {', '.join(map(repr, DP_BOUNDS))}, got {dp_bounds!r}")
    if dp_bounds == "none":
        return None
    if f.dp_bound_problem is None:
        raise OptionError(f"{f.name} takes no DP bounds (dp_bounds='none' only): its hyperplane splits have no "
                          "axis-aligned DP problem")
    problem = f.dp_bound_problem(data, max_depth, opts)
    if problem.two_class and dp_bounds == "paths":
        raise OptionError("dp_bounds='paths' is not available with a sensitivity/specificity target (its values come "
                          "from the (fp, fn) fronts of the root's sides only); use dp_bounds='root'")
    if problem.deep < (2 if dp_bounds == "paths" else 1):
        raise OptionError(f"dp_bounds={dp_bounds!r} needs a depth of at least {2 if dp_bounds == 'paths' else 1}, "
                          f"got {problem.deep}")
    return problem


def _bound_values(problem: DPProblem, dp_bounds: str, budget: Budget, stats: dict):
    """The DP's values below each split of ``problem`` (:func:`odtmip.dp.bounds.split_values`) within the budget."""
    from odtmip.dp.bounds import split_values, target_values

    if problem.two_class:
        values = target_values(problem.data, problem.deep, problem.two_class, time_limit=budget.left())
    else:
        values = split_values(problem.data, problem.deep, problem.penalty, problem.min_leaf,
                              paths=dp_bounds == "paths", time_limit=budget.left())
    stats.update(dp_bounds=dp_bounds, dp_bounds_seconds=values.stats["seconds"], dp_bounds_complete=values.complete,
                 dp_bounds_solves=values.stats["solves"], dp_bounds_columns=values.stats["columns"],
                 dp_bounds_optimum=problem.in_model_units(values.optimum))
    return values


def _proof_lp(m, highs: HighsOptions, left: float | None, stats: dict) -> tuple[float | None, float | None]:
    """The LP relaxation of a proof attempt (``dp_bounds``) and the seconds it was given: at most
    :data:`LP_SHARE` of the time ``left`` (HiGHS's search keeps the rest), half of it by the LP solver the options
    name (HiGHS's default: dual simplex), then, if that did not finish, the rest by the other. MEASURED (2 cores,
    load 5-6, with the root's row): dual simplex stalled on OCT (alpha = 0.01) at depth 3 on tic-tac-toe (no
    optimum in 116 s; IPM 5.6 s), IPM took 31 s for OCT at depth 2 on kr-vs-kp (dual simplex 3.9 s); on Günlük's
    model IPM was 1.5-3 times faster (tic-tac-toe, kr-vs-kp at depth 3), on BinOCT's either."""
    first = highs.lp_solver or "simplex"
    share = None if left is None else LP_SHARE * left
    t = time.perf_counter()
    lp = _highs.lp_relaxation(m, replace(highs, lp_solver=first, time_limit=None if share is None else share / 2),
                              statistics=stats)
    if lp is None and share is not None:
        second = "simplex" if first == "ipm" else "ipm"
        rest = max(share - (time.perf_counter() - t), 1e-3)
        lp = _highs.lp_relaxation(m, replace(highs, lp_solver=second, time_limit=rest))
        stats["lp_solver"] = second
    else:
        stats["lp_solver"] = first
    return lp, share


def lp_proves(problem: DPProblem, lp: float, incumbent: float) -> bool:
    """Whether an LP bound ``lp`` proves a tree of loss ``incumbent`` optimal (both in the model's loss units).

    In the DP's units the loss of every tree is errors + penalty x branch nodes; with integer weights and penalty it
    is an integer, so a bound above incumbent - 1 proves it; otherwise the bound must reach the incumbent. Both up to
    :data:`TOLERANCE` of the incumbent (HiGHS's LP tolerances)."""
    lp, incumbent = problem.in_dp_units(lp), problem.in_dp_units(incumbent)
    margin = TOLERANCE * max(1.0, abs(incumbent))
    w = problem.data.weights
    if np.all(w == np.round(w)) and float(problem.penalty).is_integer():
        return lp > incumbent - 1 + margin
    return lp >= incumbent - margin


def _proved_by_lp(name: str, f: Formulation, data: Dataset, opts, tree: Tree, stats: dict,
                  budget: Budget) -> SolveResult:
    """The result of a start tree that the LP relaxation with the DP's rows proved optimal."""
    objective = f.loss(data, tree, opts)
    stats.update(proved_by="lp", bound_source="lp", incumbent="the warm start, proved optimal by the LP bound",
                 nodes=0, warm_start_loss=objective, warm_start_given=False, warm_start_accepted=None)
    return SolveResult(solver=name, status=Status.OPTIMAL, stop_reason="solved", tree=tree, objective=objective,
                       bound=objective, seconds=budget.elapsed(), stats=stats)


def _seconds(budget: Budget) -> float | None:
    """What is left of the budget, as a HiGHS time limit (HiGHS needs a positive one)."""
    left = budget.left()
    return None if left is None else max(left, 1e-3)


def _start_trees(f: Formulation, data: Dataset, max_depth, opts, warm_start, feed_dp: bool, dp_solved,
                 budget: Budget, stats: dict, memory_limit: float | None,
                 threads: int | None) -> tuple[list[Tree], list]:
    """The candidate start trees (the given one, the CART tree, or the DP trees) and the DP solutions, solved here
    within :data:`WARM_START_SHARE` of the budget (in ``threads`` search threads) unless ``dp_solved`` has them. A DP
    start refused by the memory limit falls back to the formulation's CART start, if it has one."""
    if isinstance(warm_start, Tree):
        return [warm_start], dp_solved or []
    if warm_start == "cart":
        trees = [f.cart(data, max_depth, opts)]
    elif warm_start == "dp" or feed_dp:
        refused: list[str] = []
        if dp_solved is None:
            dp_solved = dp_solutions(f.starts(data, max_depth, opts), budget.part(WARM_START_SHARE), memory_limit,
                                     refused, threads)
            # the DP's kernels loaded or compiled for these solves (counted in the budget, as everything is)
            compiled = sum(result.stats.get("compile_seconds", 0.0) for _, _, result in dp_solved)
            if compiled:
                stats["compile_seconds"] = compiled
        trees = [result.tree for _, _, result in dp_solved if result.tree is not None]
        stats["dp_solves"] = len(dp_solved)
        if refused:
            fallback = f.cart is not None and not trees
            stats["warm_start_note"] = (f"DP start left out: {refused[0]}"
                                        + ("; started from CART instead" if fallback else ""))
            logger.warning("%s: %s", f.name, stats["warm_start_note"])
            if fallback:
                trees = [f.cart(data, max_depth, opts)]
        if f.accepts is not None:
            trees = [tree for tree in trees if f.accepts(data, tree, opts)]
    else:
        return [], dp_solved or []
    return trees, dp_solved or []


def _embedded(f: Formulation, m, data: Dataset, opts, trees: list[Tree], warm_start,
              stats: dict) -> list[tuple[Tree, list]]:
    """The start trees that fit the model with their (variable, value) pairs, best (lowest loss) first; a given
    tree that does not fit is an error."""
    if isinstance(warm_start, Tree):
        values = f.embed(m, data, warm_start)
        if values is None:
            raise OptionError(f"the warm-start tree does not fit the {f.name} model (its depth, shape or splits)")
        return [(warm_start, values)]
    fitting = [(tree, f.embed(m, data, tree)) for tree in trees]
    fitting = [(tree, values) for tree, values in fitting if values is not None]
    if trees and not fitting:
        stats["warm_start_note"] = f"no {warm_start} tree fits the model; solved without a start"
    return sorted(fitting, key=lambda start: f.loss(data, start[0], opts))  # stable: ties keep their order


def _before_the_model(name: str, f: Formulation, data: Dataset, opts, trees: list[Tree], stats: dict,
                      budget: Budget, floor: float, dp: float | None, why: str) -> SolveResult:
    """The result of a call whose time limit ended before HiGHS could run (``why``): the best start tree (lowest
    loss), no tree when there was no start; the bound as :func:`_bounded` gives it, from the DP's ``dp`` and the
    trivial ``floor``."""
    stats["incumbent"] = f"the warm start: {why}"
    tree = min(trees, key=lambda t: f.loss(data, t, opts)) if trees else None
    objective = None if tree is None else f.loss(data, tree, opts)
    stats.update(warm_start_loss=objective, warm_start_given=False, warm_start_accepted=None)
    status, bound = _bounded(Status.TIME_LIMIT, objective, {"dp": dp, "trivial": floor}, stats)
    return SolveResult(solver=name, status=status, stop_reason="time_limit", tree=tree, objective=objective,
                       bound=bound, seconds=budget.elapsed(), stats=stats)


def _bounded(status: Status, objective: float | None, known: dict, stats: dict) -> tuple[Status, float]:
    """The status and bound of a result: the bound is the largest of the lower bounds ``known`` by source (None:
    none; ties to the first), named in ``stats["bound_source"]``; a tree that meets it is optimal whatever
    stopped the search, and no bound exceeds the tree's objective."""
    stats["bound_source"] = source = max((s for s, b in known.items() if b is not None), key=known.get)
    bound = known[source]
    if objective is not None:
        status = stopped_status(status, objective, bound, TOLERANCE * max(1.0, abs(objective)))
        bound = objective if status is Status.OPTIMAL else min(bound, objective)
    stats["proved_by"] = PROOFS[source] if status is Status.OPTIMAL else None
    return status, bound


def _result(name: str, f: Formulation, m, data: Dataset, opts, run, to_loss, stats: dict,
            budget: Budget, start: Tree | None, floor: float, dp: float | None, constraints=()) -> SolveResult:
    """Decode and verify HiGHS's incumbent; the bound, status and statistics in loss units. When a limit stopped
    HiGHS before it held any solution, the warm-start tree ``start`` is the best tree so far. The bound is the
    largest of HiGHS's, the DP's ``dp`` (None: none) and the trivial ``floor``, ties to the first (``inf`` when
    HiGHS proved that no tree meets the constraints)."""
    tree = objective = None
    status, stop_reason = run.status, run.stop_reason
    if not run.has_solution and start is not None and status is Status.TIME_LIMIT:
        tree, objective = start, f.loss(data, start, opts)
        stats["incumbent"] = "the warm start (HiGHS stopped before it held a solution)"
    if run.has_solution:
        tree = f.decode(m, data)
        objective = f.loss(data, tree, opts)
        claimed = to_loss(run.objective)
        if objective > claimed + TOLERANCE * max(1.0, abs(claimed)):
            raise VerificationError(f"{name}: the decoded tree's recomputed objective {objective:g} is worse than "
                                    f"the solver's {claimed:g}")
        verify_constraints(name, tree, data, constraints, stats)
    dual = None if run.bound is None or not math.isfinite(run.bound) else to_loss(run.bound)
    known = {"highs": math.inf if status is Status.INFEASIBLE else dual, "dp": dp, "trivial": floor}
    status, bound = _bounded(status, objective, known, stats)
    stats.update(run.statistics)
    if hasattr(opts, "positive"):  # the class the model's rates and targets count as positive
        stats["positive_index"] = opts.positive
    stats.update(
        handoff_seconds=run.handoff_seconds,
        solve_seconds=run.solve_seconds,
        start_seconds=run.start_seconds,
        nodes=run.nodes,
        lp_iterations=run.lp_iterations,
        warm_start_given=run.warm_start_given,
        warm_start_accepted=run.warm_start_accepted,
        warm_start_objective=None if run.warm_start_objective is None else to_loss(run.warm_start_objective),
        trajectory=[(t, to_loss(p) if math.isfinite(p) else None, max(floor, to_loss(d)) if math.isfinite(d) else None)
                    for t, p, d in run.trajectory],
    )
    return SolveResult(solver=name, status=status, stop_reason=stop_reason, tree=tree, objective=objective,
                       bound=bound, seconds=budget.elapsed(), stats=stats)
