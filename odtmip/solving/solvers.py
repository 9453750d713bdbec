"""Every solver behind one call: ``odtmip.solve(dataset, solver=..., **options)``.

:data:`SOLVERS` maps a solver's name to a :class:`SolverSpec`: the function that runs it, a summary and its
options (declared once, see :mod:`odtmip.core.options`): the DP, ConTree, and every MIP formulation of
:data:`odtmip.models.FORMULATIONS` (a test holds the two tables together). The table names modules and functions,
so that ``import odtmip`` and the command line's parser import no engine. The command line and the estimator both
go through :func:`solve`.
"""

from __future__ import annotations

import functools
import importlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from odtmip.core.options import Option, options_of, validate

if TYPE_CHECKING:
    from odtmip.core.data import Dataset
    from odtmip.core.results import SolveResult


#: The function that solves every MIP formulation, by its name (:func:`odtmip.solving.pipeline.solve_mip`).
MIP = "odtmip.solving.pipeline:solve_mip"


@dataclass(frozen=True)
class SolverSpec:
    """A solver: ``module:function`` to call with ``(dataset, **options)`` (:data:`MIP`, for a MIP formulation:
    ``solve_mip(name, dataset, **options)``), a one-line summary, and whether ``odtmip check`` compares it with the
    DP (``checked``: it has a DP equivalent)."""

    name: str
    target: str
    summary: str
    checked: bool = False

    @property
    def mip(self) -> bool:
        """True for a MIP formulation of :data:`odtmip.models.FORMULATIONS`."""
        return self.target == MIP

    @property
    def options(self) -> dict[str, Option]:
        """The options the solver takes, by name (:func:`odtmip.core.options.options_of`)."""
        return options_of(self.name)

    def load(self) -> Callable[..., SolveResult]:
        module, func = self.target.split(":")
        run = getattr(importlib.import_module(module), func)
        return functools.partial(run, self.name) if self.mip else run


#: The time limit a solver gets when the call has spent its own before the search (it returns its first tree).
MIN_SECONDS = 1e-3


def _spec(name: str, target: str, summary: str, checked: bool = False) -> tuple[str, SolverSpec]:
    return name, SolverSpec(name, target, summary, checked)


#: Every solver, by name: the DP, ConTree, then every MIP formulation of :data:`odtmip.models.FORMULATIONS`, named
#: here so that reading the table imports neither engine.
SOLVERS: Mapping[str, SolverSpec] = dict([
    _spec("dp", "odtmip.dp:solve_numeric",
          "dynamic programming: MurTree on binary columns, ConTree on every threshold of numeric columns"),
    _spec("contree", "odtmip.dp:solve_contree",
          "ConTree: DP over every threshold of the numeric columns (exact, anytime)"),
    _spec("gunluk", MIP,
          "Günlük et al. categorical-subset MIP on HiGHS, warm-started from the DP", checked=True),
    _spec("binoct", MIP,
          "Verwer & Zhang BinOCT, or regularised BinOCT with a leaf penalty, on HiGHS, warm-started from the DP",
          checked=True),
    _spec("oct", MIP,
          "Bertsimas & Dunn OCT (axis-aligned) on HiGHS, with the d = 0 fix, warm-started from the DP", checked=True),
    _spec("oct-h", MIP, "Bertsimas & Dunn OCT-H (hyperplane splits) on HiGHS"),
])

#: The MIP formulations, and those ``odtmip check`` compares with the DP.
MIP_SOLVERS: tuple[str, ...] = tuple(name for name, spec in SOLVERS.items() if spec.mip)
CHECKED_MODELS: tuple[str, ...] = tuple(name for name, spec in SOLVERS.items() if spec.checked)


def solve(dataset: Dataset, solver: str = "dp", **options) -> SolveResult:
    """Solve ``dataset`` with the named solver.

    Every option is checked against the solver's declaration (:func:`odtmip.core.options.validate`) and passed on
    as given: None is passed where it has a declared meaning (``max_depth=None`` is no depth limit for the DP)
    and is an :class:`~odtmip.core.exceptions.OptionError` where it has none (every MIP model needs a depth).

    ``time_limit`` covers the whole call, from here: importing the solver's engine (numba, Pyomo and HiGHS),
    loading or compiling its kernels, building a model, the search and the verification. The result's ``seconds``
    are the whole call's.

    Examples
    --------
    >>> import numpy as np
    >>> from odtmip import Dataset
    >>> data = Dataset(np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 3), [0, 1, 1, 0] * 3)
    >>> round(solve(data, "dp", max_depth=None, leaf_penalty=0.1).objective, 12)  # 4 leaves, no errors
    0.4
    """
    t0 = time.perf_counter()
    given = validate(solver, **options)
    constraints = None if SOLVERS[solver].mip else given.pop("constraints", None)
    if constraints:  # the DP under the constraints it expresses exactly (Forbid, MinLeafSize)
        from odtmip.solving.constrained import dp_problem, verified

        dataset, solver, given, constraints = dp_problem(dataset, solver, constraints, given)
    run = SOLVERS[solver].load()  # the engine's import counts in the time limit
    if given.get("time_limit") is not None:
        given["time_limit"] = max(given["time_limit"] - (time.perf_counter() - t0), MIN_SECONDS)
    result = run(dataset, **given)
    if constraints:
        result = verified(result, dataset, constraints)
    return replace(result, seconds=time.perf_counter() - t0)
