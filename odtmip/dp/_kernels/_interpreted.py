"""The kernels run by the Python interpreter instead of compiled: the same functions, so the same search and the
same tree, without the seconds numba spends compiling them on a new machine.

Every kernel is a numba dispatcher that keeps the Python function it compiles as ``py_func``. :func:`kernels`
returns, for each kernel module, a namespace of these functions (and of the module's other functions, such as
:func:`~odtmip.dp._kernels._cache.grow_tables`) whose globals name the interpreted functions in place of the
dispatchers, so that no call reaches a dispatcher, which would compile. The two intrinsics are Python functions
with compiled overloads (:func:`~odtmip.dp._kernels._common.popcount`,
:func:`~odtmip.dp._kernels._common.trailing_zeros`). A kernel module may name, in ``INTERPRETED_FORMS``, kernels
the interpreter runs in another form: numpy vector operations in place of loops over words, pairs and points,
computing the same values (the depth-two solver's two phases, :mod:`~odtmip.dp._kernels._depth2`; the depth-two
front solver and the ceiling algebra, :mod:`~odtmip.dp._kernels._pareto`; CART's thresholds of ordered features,
:mod:`~odtmip.dp._kernels._contree`), or Python's integers in place of numpy's
uint64 scalars (the cache's hash, :mod:`~odtmip.dp._kernels._common`). A form reaches the interpreted loops it
replaces as ``LOOPS[name]``, for the cases it leaves to them (real weights, a few points). The forms made the
interpreted search of tic-tac-toe at depth 4 six times faster (4.2 s -> 0.7 s; its first ``odtmip fit`` 5.9 s ->
2.5 s) and its front search at depth 4 four to ten times (F1 24.4 s -> 2.3 s, Matthews correlation 147 s -> 34 s;
the first ``odtmip fit --metric f1 --depth 4`` 24.7 s -> about 4 s).

Both ways compute alike: numba's int64, uint64 and float64 arithmetic is numpy's scalar arithmetic (IEEE doubles
without fast-math; integers wrap), so the interpreter visits the same nodes in the same order, which the tests
check node for node. numpy warns where integers wrap (the cache's hashes), so the solvers run their kernels with
those warnings off. Interpreted, a kernel is some hundred times slower: the solvers use it only until its
compiled form is ready (:func:`compiled_ready`). Meanwhile a second Python process compiles them into numba's disk
cache (:func:`compile_in_background`); once it is done the interpreted search stops, and the solve loads the compiled
kernels and searches again (:func:`interpreted_first`), with what is left of its time limit: a time limit covers
the whole call, so a solve never waits for a compile past it. Where no second process can help (numba's cache
switched off; one core, unless the solve has a time limit), the interpreter gets a time budget per process instead
(each solver's ``INTERPRETED_SECONDS``), after which a solve without a time limit compiles the kernels itself.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import importlib
import os
import subprocess
import sys
import threading
import time
import types

from numba.core.dispatcher import Dispatcher

from odtmip.core import progress
from odtmip.core.exceptions import OptionError
from odtmip.core.options import usable_cores
from odtmip.core.results import SolveResult, Status, stopped_status
from odtmip.dp._kernels import _common

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
    spaces["odtmip.dp._kernels._common"].update(CLOCK_EVERY=1, CLOCK_WORK=1 << 12, clock=_clock)
    # the forms replace their kernels' interpreted loops in every namespace (also where another module imports
    # them); a module's LOOPS keeps its loops for the cases a form leaves to them
    forms = {}  # {id(interpreted loops): their form}
    for space in spaces.values():
        named = space.get("INTERPRETED_FORMS", {})
        if named:
            space["LOOPS"] = {kernel: space[kernel] for kernel in named}
            forms.update({id(space[kernel]): space[form] for kernel, form in named.items()})
    for space in spaces.values():
        space.update({key: forms[id(value)] for key, value in space.items() if id(value) in forms})
    return {name: types.SimpleNamespace(**spaces[mod.__name__]) for name, mod in modules.items()}


def modules(interpreted: bool) -> types.SimpleNamespace:
    """The kernel modules as attributes without the underscore (``.common``, ``.search``, ...): the compiled
    modules, or (``interpreted``) their namespaces of :func:`kernels`."""
    if interpreted:
        return types.SimpleNamespace(**{name[1:]: space for name, space in kernels().items()})
    return types.SimpleNamespace(**{name[1:]: importlib.import_module(f"odtmip.dp._kernels.{name}")
                                    for name in MODULES})


def check_engine(engine: str) -> None:
    """An :class:`~odtmip.core.exceptions.OptionError` unless ``engine`` is one of :data:`ENGINES`."""
    if engine not in ENGINES:
        raise OptionError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}")


def choose(engine: str, warm_up, *dispatchers: Dispatcher) -> bool:
    """Whether a solver runs its kernels interpreted: ``engine`` is ``"interpreted"``, or ``"auto"`` while the
    ``dispatchers`` are not ready compiled (:func:`compiled_ready`; the solver's ``warm_up`` compiles them), on data
    of any size: under a time limit the interpreter answers rather than a compile that would take the limit."""
    check_engine(engine)
    return engine == "interpreted" or engine == "auto" and not compiled_ready(*dispatchers, warm_up=warm_up)


#: Seconds each solver class has searched interpreted in this process: its budget is one per process, so that
#: repeated small solves (a cross-validation) stop interpreting and compile once they have spent it.
_SPENT: dict[type, float] = {}


#: Seconds the interpreter may search while a background compile runs and the solve has no time limit: in effect
#: none (the search stops when the compile is done), but finite, so that the interpreted kernels read the clock.
WHILE_COMPILING = 1e6
#: Seconds a solve waits for a background compile before it stops it and compiles the kernels itself.
WAIT_SECONDS = 600.0

#: The background compiles started: {(process id, warm-up): process} (:func:`compile_in_background`); a forked
#: process, which cannot wait for its parent's children, starts its own, and one stopped unfinished is left out.
_BACKGROUND: dict[tuple[int, str], subprocess.Popen] = {}
#: How many interpreted searches (of any thread) wait for each background compile.
_WAITERS: dict[tuple[int, str], int] = {}
_LOCK = threading.Lock()
#: Per thread, what its running interpreted search waits for (``.value``): (the background compile, the search's
#: time limit, the budget left that applies if the compile fails), or None.
_AWAITED = threading.local()


def _clock() -> float:
    """The interpreted kernels' clock: ``time.perf_counter()``, moved on by the search's time limit once the
    background compile it waits for is done, so that the search stops there as at its deadline; if that compile
    failed, moved on so that the deadline falls where the budget ends."""
    now = time.perf_counter()
    awaited = getattr(_AWAITED, "value", None)
    if awaited is None:
        return now
    proc, limit, budget = awaited
    code = proc.poll()
    if code is None:
        return now
    return now + (limit if code == 0 else limit - min(limit, max(budget, 0.0)))


def _key(warm_up) -> tuple[int, str]:
    return os.getpid(), f"{warm_up.__module__}.{warm_up.__name__}"


def compile_in_background(warm_up, one_core: bool = False) -> subprocess.Popen | None:
    """A second Python process that compiles a solver's kernels into numba's disk cache by calling ``warm_up`` (a
    solver's warm-up, such as :func:`odtmip.dp.contree.warm_up`): the one running or done, else a new one. It
    imports from this process's ``sys.path``, discards its output, and runs in a session of its own (a Ctrl-C
    reaches this process, which stops it). :func:`interpreted_first` stops it when no search waits for it any more,
    as long as the process's interpreted time is within its budget, so that a small fit's compile never takes the
    core of the work that follows (a MIP, a timed run); what it compiled until then stays in the cache.

    None where it cannot help: numba's cache is off (``ODTMIP_NUMBA_CACHE=0``), the machine gives this process one
    core (the compile would slow the interpreter down as much; ``one_core`` starts it all the same, for a solve
    under a time limit, which never compiles in its own process), the interpreter is not a plain Python (a frozen
    application), the process cannot start, or it failed (then a solve without a time limit compiles the kernels
    itself)."""
    key = _key(warm_up)
    with _LOCK:
        proc = _BACKGROUND.get(key)
        if proc is None:
            if (not _common.NUMBA_CACHE or usable_cores() < 2 and not one_core or not sys.executable
                    or getattr(sys, "frozen", False)):
                return None
            code = (f"import sys; sys.path[:] = {sys.path!r}; "
                    f"from {warm_up.__module__} import {warm_up.__name__} as warm_up; warm_up()")
            alone = ({"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.CREATE_NO_WINDOW}
                     if os.name == "nt" else {"start_new_session": True})
            try:
                proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **alone)
            except OSError:
                return None
            _BACKGROUND[key] = proc
            progress.logger.info("compiling %s in a second process while the interpreter searches: the first run "
                                 "in this environment does this once; later runs load them from the numba disk "
                                 "cache", getattr(warm_up, "what", "the kernels"))
    return None if proc.poll() not in (None, 0) else proc


def stop_background(warm_up) -> None:
    """Stop this process's background compile by ``warm_up`` if it still runs (the next one starts anew)."""
    key = _key(warm_up)
    if key in _BACKGROUND and _BACKGROUND[key].poll() is None:
        _kill(_BACKGROUND.pop(key))


def _release(warm_up, stop: bool) -> None:
    """One search less waits for the background compile by ``warm_up``; ``stop`` it if it was the last."""
    key = _key(warm_up)
    with _LOCK:
        _WAITERS[key] -= 1
        if stop and not _WAITERS[key]:
            stop_background(warm_up)


@atexit.register
def _stop_all() -> None:
    for key, proc in _BACKGROUND.items():
        if key[0] == os.getpid() and proc.poll() is None:
            _kill(proc)


def _kill(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait()


def interpreted_first(solver, solve, time_limit: float | None, budget: float, compile_kernels, warm_up):
    """``solve(time_limit)``, a solve of ``solver`` (whose ``_interpreted`` says how it runs its kernels), first
    interpreted when it runs them interpreted under ``engine="auto"``.

    A time limit is a promise about the whole call: the solve never compiles in this process and never waits for a
    compile past it. The interpreter searches until :func:`compile_in_background` has compiled the kernels in a
    second process (by the solver's ``warm_up``) or until the time limit: at the limit its result stands (the best
    tree so far, a valid bound); once the kernels are compiled, ``compile_kernels()`` switches ``solver`` to them
    (loading them from the cache) and ``solve`` runs again with what is left of the time limit. Without a second
    process (numba's cache is off, or it cannot start) the interpreter has the whole time limit.

    Without a time limit, the interpreter searches until the second process has compiled the kernels; without
    one (or if it fails), for what is left of ``budget``, the interpreted seconds the solver's class may spend in
    this process. If it finishes first, it stops that process while those seconds are within ``budget`` (a small
    fit), and leaves it to finish once they are not (many fits, as in a cross-validation: later solves then run
    compiled). A search the interpreter does not finish is abandoned: ``compile_kernels()`` loads or compiles the
    kernels (after waiting for the second process) and ``solve`` runs again.

    A switch loses nothing the interpreter found: when the compiled search stops too, the result keeps the better
    of the two trees and of the two bounds (:func:`keep_the_better`). A result after a switch has
    ``stats["interpreted_seconds"]`` and the seconds compiling or loading the kernels
    (the wait for the second process included) in ``stats["compile_seconds"]``; its ``seconds`` are the whole
    call's, both counted in.
    """
    if not (solver._interpreted and solver.options.engine == "auto"):
        return solve(time_limit)
    t_start = time.perf_counter()
    left = budget - _SPENT.get(type(solver), 0.0)
    background = compile_in_background(warm_up, one_core=time_limit is not None)
    spent = 0.0
    if time_limit is not None or left > 0 or background is not None:
        limit = WHILE_COMPILING if background is not None or time_limit is not None else left
        limit = limit if time_limit is None else min(limit, time_limit)
        awaited = getattr(_AWAITED, "value", None)
        if background is not None:  # a failed compile ends the search where the budget ends (none under a limit)
            _AWAITED.value = (background, limit, limit if time_limit is not None else left)
            with _LOCK:
                _WAITERS[_key(warm_up)] = _WAITERS.get(_key(warm_up), 0) + 1
        try:
            first = solve(limit)
        except BaseException:
            if background is not None:
                _release(warm_up, stop=True)
            raise
        finally:
            _AWAITED.value = awaited
        spent = time.perf_counter() - t_start
        _SPENT[type(solver)] = _SPENT.get(type(solver), 0.0) + spent
        done = first.status is not Status.TIME_LIMIT or first.stop_reason != Status.TIME_LIMIT.value
        if background is not None:  # nobody waits for it any more: stop it while within the budget
            _release(warm_up, stop=done and _SPENT[type(solver)] < budget)
        compiled = background is not None and background.poll() == 0
        if done or time_limit is not None and (not compiled or spent >= time_limit):
            return first  # finished, stopped otherwise (a gap, the memory limit), or at the time limit
    t_wait = time.perf_counter()
    if background is not None and time_limit is None:
        try:
            background.wait(timeout=WAIT_SECONDS)  # what it did not compile (it failed), compile_kernels compiles
        except subprocess.TimeoutExpired:
            stop_background(warm_up)
    waited = time.perf_counter() - t_wait
    compile_seconds = waited + compile_kernels()
    elapsed = time.perf_counter() - t_start
    result = solve(None if time_limit is None else max(time_limit - elapsed, 1e-6))
    if spent:
        result = keep_the_better(first, result)
        result.stats["interpreted_seconds"] = spent
    result.stats["compile_seconds"] = result.stats.get("compile_seconds", 0.0) + compile_seconds
    return dataclasses.replace(result, seconds=time.perf_counter() - t_start)


def keep_the_better(first, second):
    """``second``, the result of a search of the same problem as ``first`` (the interpreter's, abandoned at the
    switch), with ``first``'s tree when it is better and the greater of the two proven bounds (each is valid, so the
    greater is). A finished ``second`` (optimal, infeasible) and a result of another kind (a front) stand as they are.
    """
    if not (isinstance(first, SolveResult) and isinstance(second, SolveResult)) or \
            second.status in (Status.OPTIMAL, Status.INFEASIBLE):
        return second
    tree, objective, stats = second.tree, second.objective, second.stats
    if first.tree is not None and (objective is None or first.objective < objective):
        tree, objective, stats = first.tree, first.objective, {**stats, "tree_found": "interpreted"}
    bound = max(first.bound, second.bound)
    if objective is None:
        return dataclasses.replace(second, bound=bound)
    bound = min(bound, objective)
    limit = Status.MEMORY_LIMIT if second.status is Status.MEMORY_LIMIT else Status.TIME_LIMIT
    return dataclasses.replace(second, status=stopped_status(limit, objective, bound), tree=tree,
                               objective=objective, bound=bound, stats=stats)


#: The calls of :func:`compiled_ready` that found their dispatchers ready, as (warm-up, dispatchers): they stay so
#: (reading ``signatures`` and the disk costs a tenth of a millisecond a kernel, a noticeable part of a small solve).
_READY: set[tuple] = set()


def compiled_ready(*dispatchers: Dispatcher, warm_up=None) -> bool:
    """True when every dispatcher is compiled in this process or has an index in numba's cache on disk (loading
    it then takes well under a second), so that running compiled costs no compile; but not from the disk while a
    second process of this one still compiles them by ``warm_up`` (:func:`compile_in_background`): the cache may
    hold some of the kernels and not yet the others."""
    if (warm_up, dispatchers) in _READY:
        return True
    proc = None if warm_up is None else _BACKGROUND.get(_key(warm_up))
    compiling = proc is not None and proc.poll() is None
    for d in dispatchers:
        if d.signatures:
            continue
        cache_file = getattr(getattr(d, "_cache", None), "_cache_file", None)
        index = getattr(cache_file, "_index_path", None)
        if compiling or index is None or not os.path.exists(index):
            return False
    _READY.add((warm_up, dispatchers))
    return True
