"""The kernels run by the Python interpreter instead of compiled: the same functions, so the same search and the
same tree, without the seconds numba spends compiling them on a new machine.

Every kernel is a numba dispatcher that keeps the Python function it compiles as ``py_func``. :func:`kernels`
returns, for each kernel module, a namespace of these functions (and of the module's other functions, such as
:func:`~odtmip.dp._kernels._cache.grow_tables`) whose globals name the interpreted functions in place of the
dispatchers, so that no call reaches a dispatcher, which would compile. The two intrinsics are Python functions
with compiled overloads (:func:`~odtmip.dp._kernels._common.popcount`,
:func:`~odtmip.dp._kernels._common.trailing_zeros`).

Both ways compute alike: numba's int64, uint64 and float64 arithmetic is numpy's scalar arithmetic (IEEE doubles
without fast-math; integers wrap), so the interpreter visits the same nodes in the same order, which the tests
check node for node. numpy warns where integers wrap (the cache's hashes), so the solvers run their kernels with
those warnings off. Interpreted, a kernel is some hundred times slower: the solvers use it only until its
compiled form is ready (:func:`compiled_ready`), and only within a time budget per process (each solver's
``INTERPRETED_SECONDS``), after which they compile and search again (:func:`interpreted_first`).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import os
import time
import types

from numba.core.dispatcher import Dispatcher

from odtmip.exceptions import OptionError
from odtmip.results import Status

#: The kernel modules, in the order they import each other.
MODULES = ("_common", "_cache", "_depth2", "_search", "_contree", "_pareto")
#: Who runs a solver's kernels (the ``engine`` of ContreeOptions and ParetoOptions; DPOptions adds "pairwise").
ENGINES = ("auto", "compiled", "interpreted")


@functools.cache
def kernels() -> dict[str, types.SimpleNamespace]:
    """``{module name: namespace}`` of the interpreted kernels of :data:`MODULES` (built once per process)."""
    modules = {name: importlib.import_module(f"odtmip.dp._kernels.{name}") for name in MODULES}
    spaces = {mod.__name__: dict(vars(mod)) for mod in modules.values()}
    twins: dict[int, types.FunctionType] = {}

    def twin(value):
        f = value.py_func if isinstance(value, Dispatcher) else value
        if not isinstance(f, types.FunctionType) or f.__module__ not in spaces:
            return value  # numpy, numba, constants, classes, the intrinsics' Python functions
        if id(f) not in twins:
            twins[id(f)] = types.FunctionType(f.__code__, spaces[f.__module__], f.__name__, f.__defaults__,
                                              f.__closure__)
            twins[id(f)].__doc__ = f.__doc__
        return twins[id(f)]

    for space in spaces.values():
        for key, value in list(space.items()):
            space[key] = twin(value)
    # read the clock at every node and every few thousand word operations: interpreted, 256 nodes can take seconds
    spaces["odtmip.dp._kernels._common"].update(CLOCK_EVERY=1, CLOCK_WORK=1 << 12)
    return {name: types.SimpleNamespace(**spaces[mod.__name__]) for name, mod in modules.items()}


def modules(interpreted: bool) -> types.SimpleNamespace:
    """The kernel modules as attributes without the underscore (``.common``, ``.search``, ...): the compiled
    modules, or (``interpreted``) their namespaces of :func:`kernels`."""
    if interpreted:
        return types.SimpleNamespace(**{name[1:]: space for name, space in kernels().items()})
    return types.SimpleNamespace(**{name[1:]: importlib.import_module(f"odtmip.dp._kernels.{name}")
                                    for name in MODULES})


def check_engine(engine: str) -> None:
    """An :class:`~odtmip.exceptions.OptionError` unless ``engine`` is one of :data:`ENGINES`."""
    if engine not in ENGINES:
        raise OptionError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}")


def choose(engine: str, cells: int, max_cells: int, *dispatchers: Dispatcher) -> bool:
    """Whether a solver runs its kernels interpreted: ``engine`` is ``"interpreted"``, or ``"auto"`` while the
    ``dispatchers`` are not ready compiled (:func:`compiled_ready`) and the data has at most ``max_cells``
    rows x columns (a search node of the interpreter scans them)."""
    check_engine(engine)
    return engine == "interpreted" or (engine == "auto" and cells <= max_cells and not compiled_ready(*dispatchers))


#: Seconds each solver class has searched interpreted in this process: its budget is one per process, so that
#: repeated small solves (a cross-validation) stop interpreting and compile once they have spent it.
_SPENT: dict[type, float] = {}


def interpreted_first(solver, solve, time_limit: float | None, budget: float, compile_kernels):
    """``solve(time_limit)``, a solve of ``solver`` (whose ``_interpreted`` says how it runs its kernels), first
    interpreted while the solver's class has some of its ``budget`` seconds per process left, when it runs them
    interpreted under ``engine="auto"``.

    The interpreter gets what is left of the budget, and at most a quarter of ``time_limit``. A search it does not
    finish in that time is abandoned: ``compile_kernels()`` switches ``solver`` to the compiled kernels, compiling
    them (it returns the seconds that took), and ``solve`` runs again with the rest of ``time_limit`` (so a time
    limit still gets at least three quarters of it compiled, as without the interpreter). The result then has
    ``stats["interpreted_seconds"]`` (counted in its ``seconds``, the compile is not) and the compile time in
    ``stats["compile_seconds"]``. Once the budget is spent, the solve compiles at once.
    """
    if not (solver._interpreted and solver.options.engine == "auto"):
        return solve(time_limit)
    left = budget - _SPENT.get(type(solver), 0.0)
    spent = 0.0
    if left > 0:
        t0 = time.perf_counter()
        first = solve(left if time_limit is None else min(left, time_limit / 4))
        spent = time.perf_counter() - t0
        _SPENT[type(solver)] = _SPENT.get(type(solver), 0.0) + spent
        if first.status is not Status.TIME_LIMIT or first.stop_reason != Status.TIME_LIMIT.value:
            return first  # finished, or stopped otherwise (a relative gap, the memory limit)
    compile_seconds = compile_kernels()
    result = solve(None if time_limit is None else max(time_limit - spent, 0.0))
    if spent:
        result.stats["interpreted_seconds"] = spent
    if compile_seconds:
        result.stats["compile_seconds"] = result.stats.get("compile_seconds", 0.0) + compile_seconds
    return dataclasses.replace(result, seconds=result.seconds + spent)


def compiled_ready(*dispatchers: Dispatcher) -> bool:
    """True when every dispatcher is compiled in this process or has an index in numba's cache on disk (loading
    it then takes well under a second), so that running compiled costs no compile."""
    for d in dispatchers:
        if d.signatures:
            continue
        cache_file = getattr(getattr(d, "_cache", None), "_cache_file", None)
        index = getattr(cache_file, "_index_path", None)
        if index is None or not os.path.exists(index):
            return False
    return True
