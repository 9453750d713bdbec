"""odtmip: optimal classification trees from MIP formulations on HiGHS and a MurTree-style DP.

The two engines meet only through :class:`Dataset` and :class:`Tree`; every result is a
:class:`SolveResult` whose objective was recomputed by routing the training data through its tree.
"""

from odtmip.compare import compare
from odtmip.data import Dataset
from odtmip.results import SolveResult, Status
from odtmip.solvers import SOLVERS, solve
from odtmip.tree import Split, Tree, branch, leaf

__version__ = "0.1.0"

__all__ = ["Dataset", "OptimalTreeClassifier", "SOLVERS", "SolveResult", "Split", "Status", "Tree", "branch", "compare",
           "leaf", "solve"]


def __getattr__(name: str):
    # The estimator imports scikit-learn and reads every solver's options (Pyomo): only when it is asked for.
    if name == "OptimalTreeClassifier":
        from odtmip.estimator import OptimalTreeClassifier

        return OptimalTreeClassifier
    raise AttributeError(f"module 'odtmip' has no attribute {name!r}")
