"""Every solver behind one call: ``odtmip.solve(dataset, solver=..., **options)``.

:data:`SOLVERS` maps a solver's name to a :class:`SolverSpec`: the function that runs it, a summary and its
options (declared once, see :mod:`odtmip.options`). The DP is one entry; every MIP formulation comes from
:data:`odtmip.models.FORMULATIONS`, read on first use so that ``import odtmip`` does not import Pyomo. The
command line and the estimator both go through :func:`solve`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
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


_DP = SolverSpec("dp", "odtmip.dp:solve_numeric",
                 "dynamic programming: MurTree on binary columns, ConTree on every threshold of numeric columns")
_CONTREE = SolverSpec("contree", "odtmip.dp:solve_contree",
                      "ConTree: DP over every threshold of the numeric columns (exact, anytime)")


class _Solvers(Mapping):
    """``{name: SolverSpec}``: the DP, ConTree, then every registered MIP formulation (its ``solve_<name>``)."""

    def _table(self) -> dict[str, SolverSpec]:
        from odtmip.models import FORMULATIONS

        mips = {name: SolverSpec(name, f"{f.solve.__module__}:{f.solve.__name__}", f.summary)
                for name, f in FORMULATIONS.items()}
        return {"dp": _DP, "contree": _CONTREE, **mips}

    def __getitem__(self, name: str) -> SolverSpec:
        return self._table()[name]

    def __iter__(self):
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


#: Every solver, by name.
SOLVERS: Mapping[str, SolverSpec] = _Solvers()


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
