"""Every solver behind one call: ``odtmip.solve(dataset, solver=..., **options)``.

:data:`SOLVERS` maps a solver's name to a :class:`SolverSpec`: the function that runs it and the options it
accepts. The command line and the estimator both go through :func:`solve`, so a new solver is one entry here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from odtmip.data import Dataset
from odtmip.exceptions import OptionError
from odtmip.results import SolveResult


@dataclass(frozen=True)
class SolverSpec:
    """A solver: ``module:function`` to call with ``(dataset, **options)`` and the options it takes."""

    target: str
    options: tuple[str, ...]
    summary: str

    def load(self) -> Callable[..., SolveResult]:
        module, func = self.target.split(":")
        return getattr(importlib.import_module(module), func)


_OCT_OPTIONS = ("max_depth", "time_limit", "warm_start", "options", "highs", "lp_bound", "alpha", "min_leaf", "mu",
                "complexity", "scaling", "epsilon_floor")

SOLVERS: dict[str, SolverSpec] = {
    "dp": SolverSpec(
        "odtmip.dp:solve_dp",
        ("max_depth", "max_nodes", "min_leaf", "penalty", "time_limit", "options", "leaf_penalty"),
        "MurTree-style dynamic programming on binary columns (exact, anytime)",
    ),
    "gunluk": SolverSpec(
        "odtmip.models.gunluk:solve_gunluk",
        ("max_depth", "time_limit", "warm_start", "options", "highs", "lp_bound", "topology", "strengthen",
         "anchors", "delete_variables", "relax", "ordinal", "order_symmetry", "max_card", "class_weight",
         "min_specificity", "min_sensitivity", "positive", "feature_selection", "random_state"),
        "Günlük et al. categorical-subset MIP on HiGHS, warm-started from the DP",
    ),
    "binoct": SolverSpec(
        "odtmip.models.binoct:solve_binoct",
        ("max_depth", "time_limit", "warm_start", "options", "highs", "lp_bound", "leaf_penalty", "thresholds",
         "root_pass_through", "bits", "surplus_bit_fix"),
        "Verwer & Zhang BinOCT, or regularised BinOCT with a leaf penalty, on HiGHS, warm-started from the DP",
    ),
    "oct": SolverSpec(
        "odtmip.models.oct:solve_oct",
        _OCT_OPTIONS + ("hyperplanes",),
        "Bertsimas & Dunn OCT (axis-aligned) on HiGHS, with the d = 0 fix, warm-started from the DP",
    ),
    "oct-h": SolverSpec(
        "odtmip.models.oct:solve_oct_h",
        _OCT_OPTIONS,
        "Bertsimas & Dunn OCT-H (hyperplane splits) on HiGHS",
    ),
}


def solve(dataset: Dataset, solver: str = "dp", **options) -> SolveResult:
    """Solve ``dataset`` with the named solver; options the solver does not take are an error.

    Options whose value is None are dropped, so callers can pass every option they know.
    """
    spec = SOLVERS.get(solver)
    if spec is None:
        raise OptionError(f"unknown solver {solver!r}; available: {', '.join(SOLVERS)}")
    given = {k: v for k, v in options.items() if v is not None}
    unknown = sorted(set(given) - set(spec.options))
    if unknown:
        raise OptionError(f"solver {solver!r} does not take option(s) {', '.join(unknown)}")
    return spec.load()(dataset, **given)
