"""The dynamic-programming engine: provably optimal trees on binary columns, after MurTree.

``solve_dp(dataset, max_depth=...)`` solves once; :class:`DPSolver` keeps its cache across solves (tuning
over depth and size); :class:`ParetoSolver` finds the (fp, fn) Pareto front of two-class trees ([DS21]);
:class:`DPOptions` switches the search techniques; :mod:`odtmip.dp.reference` is the
slow, readable version used as a test oracle; :mod:`odtmip.dp.pairwise` solves small problems in numpy only, so
that they need no compiled kernel (``solve_dp`` picks it for them).
``solve_dp(dataset, max_depth=None, leaf_penalty=lam)`` gives the optimal sparse tree of OSDT (errors / W + lam x
leaves, any depth). ``solve_contree`` (ConTree) searches every threshold of numeric columns directly, without binary
columns; ``solve_numeric`` (the ``"dp"`` solver) picks between them.
"""

from odtmip.dp.contree import ContreeOptions, ContreeSolver, solve_contree
from odtmip.dp.pareto import ParetoFront, ParetoOptions, ParetoSolver
from odtmip.dp.solve import solve_dp, solve_numeric
from odtmip.dp.solver import DPOptions, DPSolver, warm_up

__all__ = ["ContreeOptions", "ContreeSolver", "DPOptions", "DPSolver", "ParetoFront", "ParetoOptions", "ParetoSolver",
           "solve_contree", "solve_dp", "solve_numeric", "warm_up"]
