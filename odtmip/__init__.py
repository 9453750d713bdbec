"""odtmip: optimal classification trees from MIP formulations on HiGHS and a MurTree-style DP.

The two engines meet only through :class:`Dataset` and :class:`Tree`; every result is a
:class:`SolveResult` whose objective was recomputed by routing the training data through its tree.
"""

import importlib
import sys
import types

__version__ = "0.1.0"

#: The public names, each imported from its module when first used, so that ``import odtmip`` (and ``odtmip
#: --version``) imports neither numpy nor pandas, nor an engine.
_EXPORTS = {
    "Dataset": "odtmip.data", "OptimalTreeClassifier": "odtmip.estimator", "SOLVERS": "odtmip.solvers",
    "SolveResult": "odtmip.results", "Split": "odtmip.tree", "Status": "odtmip.results", "Tree": "odtmip.tree",
    "branch": "odtmip.tree", "compare": "odtmip.compare", "leaf": "odtmip.tree", "solve": "odtmip.solvers",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'odtmip' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next look-up finds it here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


class _Package(types.ModuleType):
    """The package, whose ``compare`` stays the function: importing the module ``odtmip.compare`` for the first
    time would otherwise bind the module to that name."""

    def __setattr__(self, name, value):
        if not (name == "compare" and isinstance(value, types.ModuleType)):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
