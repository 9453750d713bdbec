"""The MIP engine: Pyomo models of the published formulations, solved with HiGHS.

:data:`FORMULATIONS` lists them, one :class:`~odtmip.models.formulation.Formulation` record per solver name; the
solver registry (``odtmip.SOLVERS``), ``odtmip check`` and the command line read it. A formulation module holds
the mathematics (see :mod:`odtmip.models.formulation` for what it supplies and how to add one);
:mod:`odtmip.solving.pipeline` solves any of them. Also here: the LP relaxation and size of any linear Pyomo model, and
the HiGHS settings, and :func:`solve_model`, which solves any linear Pyomo model (a formulation's model with
rows of your own added or deactivated) with HiGHS and loads the incumbent into its variables.
"""

from odtmip.models import binoct, gunluk, oct
from odtmip.models._highs import HighsOptions, lp_relaxation, model_statistics
from odtmip.models._highs import solve as solve_model
from odtmip.models._highs_read import MipRun
from odtmip.models.formulation import DPProblem, Formulation

#: Every MIP formulation, by solver name.
FORMULATIONS: dict[str, Formulation] = {
    "gunluk": gunluk.FORMULATION,
    "binoct": binoct.FORMULATION,
    "oct": oct.FORMULATION,
    "oct-h": oct.FORMULATION_H,
}

__all__ = ["FORMULATIONS", "DPProblem", "Formulation", "HighsOptions", "MipRun", "lp_relaxation", "model_statistics",
           "solve_model"]
