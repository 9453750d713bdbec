"""Every solver behind one call: ``odtmip.solve(dataset, solver=..., **options)``.

:data:`SOLVERS` maps a solver's name to a :class:`SolverSpec`: the function that runs it and a summary; its
options are declared in :mod:`odtmip.options`. The command line and the estimator both go through
:func:`solve`, so a new solver is one entry here and one in :data:`odtmip.options.OPTIONS`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from odtmip.data import Dataset
from odtmip.options import Option, options_of, validate
from odtmip.results import SolveResult


@dataclass(frozen=True)
class SolverSpec:
    """A solver: ``module:function`` to call with ``(dataset, **options)``, and a one-line summary."""

    name: str
    target: str
    summary: str

    @property
    def options(self) -> dict[str, Option]:
        """The options the solver takes, by name (:func:`odtmip.options.options_of`)."""
        return options_of(self.name)

    def load(self) -> Callable[..., SolveResult]:
        module, func = self.target.split(":")
        return getattr(importlib.import_module(module), func)


SOLVERS: dict[str, SolverSpec] = {spec.name: spec for spec in (
    SolverSpec("dp", "odtmip.dp:solve_dp", "MurTree-style dynamic programming on binary columns (exact, anytime)"),
    SolverSpec("gunluk", "odtmip.models.gunluk:solve_gunluk",
               "Günlük et al. categorical-subset MIP on HiGHS, warm-started from the DP"),
    SolverSpec("binoct", "odtmip.models.binoct:solve_binoct",
               "Verwer & Zhang BinOCT, or regularised BinOCT with a leaf penalty, on HiGHS, warm-started from the DP"),
    SolverSpec("oct", "odtmip.models.oct:solve_oct",
               "Bertsimas & Dunn OCT (axis-aligned) on HiGHS, with the d = 0 fix, warm-started from the DP"),
    SolverSpec("oct-h", "odtmip.models.oct:solve_oct_h", "Bertsimas & Dunn OCT-H (hyperplane splits) on HiGHS"),
)}


def solve(dataset: Dataset, solver: str = "dp", **options) -> SolveResult:
    """Solve ``dataset`` with the named solver.

    Every option is checked against the solver's declaration (:func:`odtmip.options.validate`) and passed on
    as given: None is passed where it has a declared meaning (``max_depth=None`` is no depth limit for the DP)
    and is an :class:`~odtmip.exceptions.OptionError` where it has none (every MIP model needs a depth).

    Examples
    --------
    >>> import numpy as np
    >>> data = Dataset(np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 3), [0, 1, 1, 0] * 3)
    >>> round(solve(data, "dp", max_depth=None, leaf_penalty=0.1).objective, 12)  # 4 leaves, no errors
    0.4
    """
    given = validate(solver, **options)
    return SOLVERS[solver].load()(dataset, **given)
