"""odtmip: optimal classification trees from MIP formulations on HiGHS and a MurTree-style DP.

The two engines meet only through :class:`Dataset` and :class:`Tree`; every result is a
:class:`SolveResult` whose objective was recomputed by routing the training data through its tree.

The package is built in layers, each folder importing only from the ones below it: :mod:`odtmip.core` (the data
model), the two engines :mod:`odtmip.dp` and :mod:`odtmip.models`, :mod:`odtmip.solving` (where they meet:
``solve``, the MIP pipeline, ``check``, ``compare``), and the interfaces on top, :mod:`odtmip.cli` and
:mod:`odtmip.estimator` (see ``docs/ARCHITECTURE.md``).
"""

import importlib

__version__ = "0.1.0"

#: The public names, each imported from its module when first used, so that ``import odtmip`` (and ``odtmip
#: --version``) imports neither numpy nor pandas, nor an engine.
_EXPORTS = {
    "Dataset": "odtmip.core.data", "SolveResult": "odtmip.core.results", "Split": "odtmip.core.tree",
    "Status": "odtmip.core.results", "Tree": "odtmip.core.tree", "branch": "odtmip.core.tree",
    "leaf": "odtmip.core.tree", "SOLVERS": "odtmip.solving.solvers", "solve": "odtmip.solving.solvers",
    "compare": "odtmip.solving.compare", "OptimalTreeClassifier": "odtmip.estimator",
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
