"""The kernels run by the Python interpreter (odtmip.dp._kernels._interpreted) search exactly as compiled: the same
nodes, the same cache, the same tree, in ConTree, the MurTree search and the (fp, fn) front; engine="auto"
interprets until a second process has compiled the kernels (or, without one, within a budget), then loads or
compiles them and searches again."""

import json
import math
import os
import subprocess
import sys
import time
import types

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer

from odtmip.core.data import Dataset
from odtmip.core.exceptions import OptionError
from odtmip.core.results import SolveResult, Status
from odtmip.dp import contree, pareto, solver
from odtmip.dp._kernels import _common, _pareto
from odtmip.dp._kernels import _interpreted as interp
from odtmip.dp.contree import ContreeOptions, ContreeSolver
from odtmip.dp.pareto import ParetoOptions, ParetoSolver, solve_pareto
from odtmip.dp.solve import solve_dp
from odtmip.dp.solver import DPOptions, DPSolver
from tests.dp.strategies import tiny_data

SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
COMPILED, INTERPRETED = ContreeOptions(engine="compiled"), ContreeOptions(engine="interpreted")
NEEDS_CACHE = pytest.mark.skipif(not _common.NUMBA_CACHE, reason="numba's disk cache is off (ODTMIP_NUMBA_CACHE=0)")


@st.composite
def numeric_problem(draw):
    """Numeric columns with ties, K = 2-3, no / integer / real weights, and the solver's settings."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n, p, K = draw(st.integers(2, 40)), draw(st.integers(1, 4)), draw(st.sampled_from([2, 3]))
    X = rng.integers(0, draw(st.integers(2, 9)), size=(n, p)) * 0.5 + rng.random(p)
    y = rng.integers(0, K, size=n)
    y[:2] = [0, 1]
    w = draw(st.sampled_from([None, "integer", "real"]))
    if w == "integer":
        w = rng.integers(1, 5, size=n).astype(float)
    elif w == "real":
        w = rng.random(n) + 0.25
    switches = {name: draw(st.booleans()) for name in ("depth_two", "upper_bound", "neighbourhood", "cache")}
    return (Dataset(X, y, w, numeric="thresholds"), draw(st.integers(0, 4)),
            {"min_leaf": draw(st.sampled_from([1, 1, 2])), "penalty": draw(st.sampled_from([0.0, 0.0, 1.0, 0.75]))},
            switches)


@settings(max_examples=150, **SETTINGS)
@given(numeric_problem())
def test_interpreted_contree_searches_node_for_node_as_compiled(problem):
    ds, depth, kwargs, switches = problem
    a = ContreeSolver(ds, options=ContreeOptions(engine="compiled", **switches), threads=1, **kwargs).solve(depth)
    b = ContreeSolver(ds, options=ContreeOptions(engine="interpreted", **switches), **kwargs).solve(depth)
    assert (a.stats["engine"], b.stats["engine"]) == ("compiled", "interpreted")
    assert b.objective == a.objective and b.tree.to_text() == a.tree.to_text()
    for key in ("nodes", "depth_two_evaluations", "depth_one_calls", "cache_hits", "cache_keys",
                "neighbourhood_prunes", "interval_prunes", "subinterval_prunes"):
        assert b.stats[key] == a.stats[key], key


@settings(max_examples=300, **SETTINGS)
@given(st.integers(0, 2**64 - 1))
def test_the_bit_counts_agree_with_python_integers(x):
    assert _common.popcount(np.uint64(x)) == bin(x).count("1")
    if x:
        assert _common.trailing_zeros(np.uint64(x)) == (x & -x).bit_length() - 1


def test_no_interpreted_function_reaches_a_compiled_kernel():
    from numba.core.dispatcher import Dispatcher

    for name, space in interp.kernels().items():
        for key, value in vars(space).items():
            assert not isinstance(value, Dispatcher), f"{name}.{key}"
            if isinstance(value, types.FunctionType) and value.__module__.startswith("odtmip.dp._kernels"):
                assert not any(isinstance(g, Dispatcher) for g in value.__globals__.values()), f"{name}.{key}"


def iris_like(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)).round(1)
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int) + (X[:, 3] > 1)
    return Dataset(X, y, numeric="thresholds")


def test_auto_interprets_until_the_kernels_are_ready_and_then_compiles_within_the_budget(monkeypatch):
    ds = iris_like()
    reference = ContreeSolver(ds, options=COMPILED, threads=1).solve(3)
    monkeypatch.setattr(interp, "compiled_ready", lambda *kernels, warm_up=None: False)
    a_new_process(monkeypatch, contree, 60.0)
    first = ContreeSolver(ds, threads=1).solve(3)  # a new machine: the interpreter, within its budget
    assert first.stats["engine"] == "interpreted" and "interpreted_seconds" not in first.stats
    assert first.tree.to_text() == reference.tree.to_text() and first.stats["nodes"] == reference.stats["nodes"]
    a_new_process(monkeypatch, contree, 1e-9)  # a search longer than the budget: compile, search again
    again = ContreeSolver(ds, threads=1).solve(3)
    assert again.stats["engine"] == "compiled" and again.stats["interpreted_seconds"] > 0.0
    assert again.tree.to_text() == reference.tree.to_text() and again.stats["nodes"] == reference.stats["nodes"]
    assert again.status is Status.OPTIMAL and again.bound == again.objective == reference.objective
    third = ContreeSolver(ds, threads=1).solve(3)  # the process spent its budget: compiled at once
    assert third.stats["engine"] == "compiled" and "interpreted_seconds" not in third.stats
    monkeypatch.undo()
    assert ContreeSolver(ds, threads=1).solve(3).stats["engine"] == "compiled"  # compiled in this process by now


def a_new_process(monkeypatch, module, budget):
    """No interpreted time spent yet, no second process to compile the kernels (one core), and ``module``'s budget
    set to ``budget`` seconds."""
    no_background(monkeypatch)
    monkeypatch.setattr(module, "INTERPRETED_SECONDS", budget)


def no_background(monkeypatch):
    monkeypatch.setattr(interp, "_SPENT", {})
    monkeypatch.setattr(interp, "compile_in_background", lambda warm_up, one_core=False: None)


class PolicyProbe:
    """A solver as :func:`~odtmip.dp._kernels._interpreted.interpreted_first` sees it: interpreted until it compiles
    (7 s); a solve finishes when it has no time limit or one of at least ``needs`` seconds, or runs compiled. An
    interpreted solve marks ``background`` (a :class:`Compiling`) done when given: the kernels compiled meanwhile."""

    def __init__(self, needs: float, background=None):
        self._interpreted, self.options, self.needs, self.calls = True, types.SimpleNamespace(engine="auto"), needs, []
        self.background = background

    def solve(self, limit):
        self.calls.append((self._interpreted, limit))
        if self._interpreted and self.background is not None:
            self.background.done = True
        done = not self._interpreted or limit is None or limit >= self.needs
        status = Status.OPTIMAL if done else Status.TIME_LIMIT
        return SolveResult("probe", status, status.value, None, None, 0.0, 0.5, {})

    def compile(self) -> float:
        self._interpreted = False
        return 7.0

    def run(self, time_limit, budget=6.0):
        return interp.interpreted_first(self, self.solve, time_limit, budget, self.compile, a_warm_up_that_fails)


def test_without_a_second_process_a_time_limit_is_the_interpreter_s_and_no_limit_gets_the_budget(monkeypatch):
    no_background(monkeypatch)
    quick = PolicyProbe(needs=0.1)
    res = quick.run(None)
    assert quick.calls == [(True, 6.0)] and res.status is Status.OPTIMAL and "compile_seconds" not in res.stats
    quick = PolicyProbe(needs=0.1)
    assert quick.run(2.0).status is Status.OPTIMAL and quick.calls == [(True, 2.0)]
    slow = PolicyProbe(needs=30.0)
    res = slow.run(20.0)  # the whole time limit interpreted: a compile here would take it
    assert slow.calls == [(True, 20.0)] and res.status is Status.TIME_LIMIT and "compile_seconds" not in res.stats
    monkeypatch.setattr(interp, "_SPENT", {})
    slow = PolicyProbe(needs=10.0)
    slow.run(None)  # the process's budget, then compiled without a limit
    assert slow.calls == [(True, 6.0), (False, None)]
    monkeypatch.setattr(interp, "_SPENT", {PolicyProbe: 6.0})
    spent = PolicyProbe(needs=0.1)
    res = spent.run(None)  # the budget is spent: compiled at once
    assert spent.calls == [(False, None)] and "interpreted_seconds" not in res.stats
    spent = PolicyProbe(needs=0.1)
    assert spent.run(20.0).status is Status.OPTIMAL and spent.calls == [(True, 20.0)]  # a limit: never compiled here
    asked = PolicyProbe(needs=10.0)
    asked.options.engine = "interpreted"
    assert asked.run(5.0).status is Status.TIME_LIMIT and asked.calls == [(True, 5.0)]  # the interpreter, to the end


class Compiling:
    """A second process compiling the kernels, as :func:`~odtmip.dp._kernels._interpreted.interpreted_first` sees
    it: running until waited for (then done), or ``done`` from the start; its exit code ``code``."""

    def __init__(self, done=False, code=0):
        self.done, self.waited, self.code = done, False, code

    def poll(self):
        return self.code if self.done else None

    def wait(self, timeout=None):
        self.done = self.waited = True
        return 0


def test_the_interpreter_searches_until_the_second_process_has_compiled_or_the_time_limit(monkeypatch):
    monkeypatch.setattr(interp, "_SPENT", {PolicyProbe: 6.0})  # the budget does not apply
    background = Compiling()
    monkeypatch.setattr(interp, "compile_in_background", lambda warm_up, one_core=False: background)
    quick = PolicyProbe(needs=100.0)
    res = quick.run(None)  # no time limit: the interpreter until the kernels are compiled (it finishes first)
    assert quick.calls == [(True, interp.WHILE_COMPILING)] and res.status is Status.OPTIMAL
    assert "compile_seconds" not in res.stats and not background.waited
    slow = PolicyProbe(needs=30.0)
    res = slow.run(20.0)  # still compiling at the time limit: the interpreter's result stands, nothing waits
    assert slow.calls == [(True, 20.0)] and res.status is Status.TIME_LIMIT and not background.waited
    assert "compile_seconds" not in res.stats
    background = Compiling()
    monkeypatch.setattr(interp, "compile_in_background", lambda warm_up, one_core=False: background)
    slow = PolicyProbe(needs=30.0, background=background)
    res = slow.run(20.0)  # compiled meanwhile: loaded, and the rest of the time limit compiled
    (first, second) = slow.calls
    assert first == (True, 20.0) and second[0] is False and 0 < second[1] <= 20.0 - res.stats["interpreted_seconds"]
    assert not background.waited and res.stats["compile_seconds"] >= 7.0 and res.status is Status.OPTIMAL


class StoppedTwice(PolicyProbe):
    """Both searches stopped: the interpreter's, at the switch, with ``interpreted`` (tree, objective, bound), and
    the compiled one, with what is left of the limit, with ``compiled``."""

    def __init__(self, interpreted, compiled, status=Status.TIME_LIMIT):
        super().__init__(needs=math.inf, background=Compiling())
        self.found, self.status = {True: interpreted, False: compiled}, status

    def solve(self, limit):
        self.calls.append((self._interpreted, limit))
        self.background.done = True
        tree, objective, bound = self.found[self._interpreted]
        status = Status.TIME_LIMIT if self._interpreted else self.status
        return SolveResult("probe", status, status.value, tree, objective, bound, 0.5, {"nodes": len(self.calls)})


@pytest.mark.parametrize("interpreted, compiled, kept", [
    (("I", 3.0, 1.0), ("C", 5.0, 2.0), ("I", 3.0, 2.0, Status.TIME_LIMIT)),  # the interpreter's tree, compiled bound
    (("I", 5.0, 2.0), ("C", 3.0, 1.0), ("C", 3.0, 2.0, Status.TIME_LIMIT)),  # the compiled tree, interpreter's bound
    (("I", 3.0, 3.0), ("C", 4.0, 1.0), ("I", 3.0, 3.0, Status.OPTIMAL)),  # together they prove the interpreter's tree
    (("I", 4.0, 1.0), ("C", 4.0, 1.0), ("C", 4.0, 1.0, Status.TIME_LIMIT)),  # a tie: the compiled search's tree
    (("I", 4.0, 1.0), (None, None, 0.0), ("I", 4.0, 1.0, Status.TIME_LIMIT)),  # the compiled search found none
])
def test_a_switch_to_the_compiled_kernels_keeps_the_interpreter_s_best_tree_and_bound(monkeypatch, interpreted,
                                                                                      compiled, kept):
    monkeypatch.setattr(interp, "_SPENT", {StoppedTwice: 6.0})
    probe = StoppedTwice(interpreted, compiled)
    monkeypatch.setattr(interp, "compile_in_background", lambda warm_up, one_core=False: probe.background)
    res = probe.run(20.0)
    assert [engine for engine, _ in probe.calls] == [True, False]
    assert (res.tree, res.objective, res.bound, res.status) == kept and res.stop_reason == "time_limit"
    assert res.stats["interpreted_seconds"] > 0.0 and res.stats["nodes"] == 2  # the compiled search's statistics
    assert res.stats.get("tree_found") == ("interpreted" if kept[0] == "I" and compiled[0] != "I" else None)


def test_a_switch_keeps_the_memory_limit_of_the_compiled_search_and_a_finished_one_stands(monkeypatch):
    monkeypatch.setattr(interp, "_SPENT", {StoppedTwice: 6.0})
    probe = StoppedTwice(("I", 3.0, 1.0), ("C", 5.0, 2.0), status=Status.MEMORY_LIMIT)
    monkeypatch.setattr(interp, "compile_in_background", lambda warm_up, one_core=False: probe.background)
    res = probe.run(20.0)
    assert (res.tree, res.objective, res.bound, res.status) == ("I", 3.0, 2.0, Status.MEMORY_LIMIT)
    probe = StoppedTwice(("I", 4.0, 1.0), ("C", 4.0, 4.0), status=Status.OPTIMAL)
    monkeypatch.setattr(interp, "compile_in_background", lambda warm_up, one_core=False: probe.background)
    res = probe.run(20.0)  # proven optimal: it stands as it is
    assert (res.tree, res.objective, res.bound, res.status) == ("C", 4.0, 4.0, Status.OPTIMAL)


def test_the_interpreted_search_stops_when_the_second_process_has_compiled_the_kernels(monkeypatch):
    ds = iris_like()
    reference = ContreeSolver(ds, options=COMPILED, threads=1).solve(3)
    monkeypatch.setattr(interp, "compiled_ready", lambda *kernels, warm_up=None: False)
    a_new_process(monkeypatch, contree, 1e-9)  # a budget the interpreter would spend at once
    background = Compiling()
    monkeypatch.setattr(interp, "compile_in_background", lambda warm_up, one_core=False: background)
    first = ContreeSolver(ds, threads=1).solve(3)  # still compiling: the interpreter, to the end, whatever the budget
    assert first.stats["engine"] == "interpreted" and not background.waited
    assert first.tree.to_text() == reference.tree.to_text() and first.stats["nodes"] == reference.stats["nodes"]
    background.done = True  # compiled: the interpreter stops at its first look at the clock, and the compiled
    again = ContreeSolver(ds, threads=1).solve(3)  # kernels search again
    assert again.stats["engine"] == "compiled" and again.stats["interpreted_seconds"] > 0.0
    assert again.tree.to_text() == reference.tree.to_text() and again.stats["nodes"] == reference.stats["nodes"]
    assert again.status is Status.OPTIMAL and again.bound == again.objective == reference.objective
    assert getattr(interp._AWAITED, "value", None) is None and interp._clock() < 1e8  # the clock again


def test_a_time_limit_never_waits_for_the_compile(monkeypatch):
    X, y = load_breast_cancer(return_X_y=True)
    ds = Dataset(X, y, numeric="thresholds")  # depth 3: 2 s compiled, minutes interpreted
    monkeypatch.setattr(interp, "compiled_ready", lambda *kernels, warm_up=None: False)
    a_new_process(monkeypatch, contree, 60.0)
    background = Compiling()
    monkeypatch.setattr(interp, "compile_in_background", lambda warm_up, one_core=False: background)
    res = ContreeSolver(ds).solve(3, time_limit=0.4)  # the real clock: interpreted to the limit, still compiling
    assert res.stats["engine"] == "interpreted" and not background.waited and "compile_seconds" not in res.stats
    assert res.status is Status.TIME_LIMIT and res.tree is not None and res.bound <= res.objective


def test_if_the_second_process_fails_the_interpreter_gets_its_budget(monkeypatch):
    ds = iris_like()
    reference = ContreeSolver(ds, options=COMPILED, threads=1).solve(3)
    monkeypatch.setattr(interp, "compiled_ready", lambda *kernels, warm_up=None: False)
    a_new_process(monkeypatch, contree, 60.0)
    monkeypatch.setattr(interp, "compile_in_background", lambda warm_up, one_core=False: Compiling(done=True, code=1))
    first = ContreeSolver(ds, threads=1).solve(3)  # within the budget: the interpreter, to the end
    assert first.stats["engine"] == "interpreted" and first.tree.to_text() == reference.tree.to_text()
    assert interp._SPENT[ContreeSolver] > 0.0
    a_new_process(monkeypatch, contree, 1e-9)
    monkeypatch.setattr(interp, "compile_in_background", lambda warm_up, one_core=False: Compiling(done=True, code=1))
    again = ContreeSolver(ds, threads=1).solve(3)  # beyond it: compiled (here, in this process)
    assert again.stats["engine"] == "compiled" and again.stats["interpreted_seconds"] > 0.0
    assert again.tree.to_text() == reference.tree.to_text() and again.status is Status.OPTIMAL


@NEEDS_CACHE
@pytest.mark.parametrize("warm_up", [solver.warm_up, contree.warm_up, pareto._warm_up_pareto])
def test_the_second_process_compiles_each_engine_once_per_process(monkeypatch, warm_up):
    warm_up()  # compiled in this process's cache first, so that the second process only loads them
    monkeypatch.setattr(interp, "_BACKGROUND", {})
    proc = interp.compile_in_background(warm_up)
    assert proc is interp.compile_in_background(warm_up) and proc.wait() == 0
    assert interp.compile_in_background(warm_up) is proc  # done: the compiled kernels are on disk


@NEEDS_CACHE
def test_kernels_still_compiling_in_the_second_process_are_not_ready(monkeypatch):
    ds = iris_like()
    contree.warm_up()
    background = Compiling()  # it may have written some kernels to the cache, not all
    monkeypatch.setattr(interp, "_BACKGROUND", {interp._key(contree.warm_up): background})
    kernel = contree.kcontree.solve_subtree
    assert kernel.signatures  # compiled in this process: ready whatever a second process does
    assert interp.compiled_ready(kernel, warm_up=contree.warm_up) and not ContreeSolver(ds)._interpreted
    on_disk = type("OnDisk", (), {"signatures": [], "_cache": kernel._cache})()  # as in a new process
    assert interp.compiled_ready(on_disk) and not interp.compiled_ready(on_disk, warm_up=contree.warm_up)
    assert interp.choose("auto", contree.warm_up, on_disk) and not interp.choose("auto", solver.warm_up, on_disk)
    background.done = True
    assert not interp.choose("auto", contree.warm_up, on_disk)


def a_warm_up_that_fails():
    raise RuntimeError("no compiler")


def test_the_second_process_starts_only_where_it_helps(monkeypatch):
    monkeypatch.setattr(interp, "_BACKGROUND", {})
    failed = interp.compile_in_background(a_warm_up_that_fails)
    assert failed.wait() != 0 and interp.compile_in_background(a_warm_up_that_fails) is None
    monkeypatch.setattr(interp, "_BACKGROUND", {})
    monkeypatch.setattr(_common, "NUMBA_CACHE", False)  # a second process's compile would not reach this one
    assert interp.compile_in_background(contree.warm_up) is None
    monkeypatch.setattr(_common, "NUMBA_CACHE", True)
    monkeypatch.setattr(interp, "usable_cores", lambda: 1)  # it would take the interpreter's core ...
    assert interp.compile_in_background(contree.warm_up) is None and interp._BACKGROUND == {}
    one_core = interp.compile_in_background(a_warm_up_that_fails, one_core=True)  # ... unless a time limit says
    assert one_core is not None and one_core.wait() != 0  # the solve may not compile in its own process


def a_process_that_compiles_forever():
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])


def test_the_second_process_is_stopped_when_no_search_waits_for_it(monkeypatch):
    ds = iris_like()
    monkeypatch.setattr(interp, "compiled_ready", lambda *kernels, warm_up=None: False)
    monkeypatch.setattr(interp, "_SPENT", {})
    monkeypatch.setattr(interp, "_WAITERS", {})
    running = a_process_that_compiles_forever()
    monkeypatch.setattr(interp, "_BACKGROUND", {interp._key(contree.warm_up): running})
    res = ContreeSolver(ds).solve(3)  # the interpreter finishes first: the compile would take the next work's core
    assert res.stats["engine"] == "interpreted" and running.wait(timeout=10) != 0 and interp._BACKGROUND == {}
    running = a_process_that_compiles_forever()
    monkeypatch.setattr(interp, "_BACKGROUND", {interp._key(contree.warm_up): running})
    solver = ContreeSolver(ds)
    solver._greedy = None  # an error inside the search (here: the greedy tree's) stops it too
    with pytest.raises(TypeError):
        solver.solve(3)
    assert running.wait(timeout=10) != 0 and interp._BACKGROUND == {}


def test_the_second_process_is_left_to_finish_once_the_budget_is_spent_or_another_search_waits(monkeypatch):
    ds = iris_like()
    monkeypatch.setattr(interp, "compiled_ready", lambda *kernels, warm_up=None: False)
    key = interp._key(contree.warm_up)
    for spent, waiting in ((contree.INTERPRETED_SECONDS, 0), (0.0, 1)):
        monkeypatch.setattr(interp, "_SPENT", {ContreeSolver: spent})  # many small fits: later ones run compiled
        monkeypatch.setattr(interp, "_WAITERS", {key: waiting})  # a search of another thread still waits
        running = a_process_that_compiles_forever()
        monkeypatch.setattr(interp, "_BACKGROUND", {key: running})
        try:
            assert ContreeSolver(ds, threads=1).solve(3).stats["engine"] == "interpreted"
            assert running.poll() is None and interp._BACKGROUND == {key: running}
            assert interp._WAITERS == {key: waiting}
        finally:
            running.kill()
            running.wait()


def test_a_second_process_still_compiling_at_exit_is_stopped(monkeypatch):
    running = a_process_that_compiles_forever()
    elsewhere = Compiling()  # started by the process this one was forked from: not this process's to stop
    monkeypatch.setattr(interp, "_BACKGROUND", {(os.getpid(), "odtmip.dp.solver.warm_up"): running,
                                                (os.getpid() + 1, "odtmip.dp.solver.warm_up"): elsewhere})
    interp._stop_all()
    assert running.poll() is not None and not elsewhere.waited


def test_a_time_limit_inside_the_interpreter_returns_its_best_tree_and_a_bound():
    ds = iris_like(seed=1)
    optimum = ContreeSolver(ds, options=COMPILED, threads=1).solve(3).objective
    for nodes in (0, 1, 5, 40):
        solver = ContreeSolver(ds, options=INTERPRETED)
        solver._node_limit = nodes
        res = solver.solve(3)
        assert res.status is Status.TIME_LIMIT and res.stats["engine"] == "interpreted"
        assert res.bound <= optimum <= res.objective


def test_the_engine_option_is_checked():
    for options in (ContreeOptions, ParetoOptions):
        with pytest.raises(OptionError, match="engine must be one of 'auto', 'compiled', 'interpreted'"):
            options(engine="numpy")


# ------------------------------------------------------------------------------------------ the MurTree search
SEARCH_KEYS = ("nodes", "depth_two_calls", "depth_one_calls", "cache_hits", "cache_entries", "similarity_prunes",
               "recounts", "budgets_capped", "split_bound_prunes")


@settings(max_examples=150, **SETTINGS)
@given(tiny_data(max_rows=40, max_cols=6), st.integers(0, 4), st.sampled_from(["auto", "frequency"]),
       st.sampled_from([{}, {"min_leaf": 2}, {"leaf_penalty": 0.03}, {"penalty": 1.0}]), st.booleans(),
       st.booleans())
def test_the_interpreted_search_visits_the_nodes_of_the_compiled_one(ds, depth, counting, kwargs, similarity,
                                                                      fewest):
    switches = {"counting": counting, "similarity": similarity, "fewest_nodes": fewest}
    max_depth = None if depth == 0 and "leaf_penalty" in kwargs else depth
    a = DPSolver(ds, options=DPOptions(engine="compiled", **switches), threads=1, **kwargs).solve(max_depth)
    b = DPSolver(ds, options=DPOptions(engine="interpreted", **switches), **kwargs).solve(max_depth)
    assert (a.stats["engine"], b.stats["engine"]) == ("compiled", "interpreted")
    assert b.objective == a.objective and b.tree.to_text() == a.tree.to_text()
    for key in SEARCH_KEYS:
        assert b.stats[key] == a.stats[key], key


def test_the_search_interprets_until_its_kernels_are_ready_then_compiles_within_the_budget(monkeypatch):
    ds = Dataset(np.random.default_rng(4).integers(0, 2, size=(80, 8)), np.random.default_rng(5).integers(0, 3, 80))
    reference = DPSolver(ds, options=DPOptions(engine="compiled", similarity=False), threads=1).solve(3)
    monkeypatch.setattr(interp, "compiled_ready", lambda *kernels, warm_up=None: False)
    a_new_process(monkeypatch, solver, 60.0)
    first = solve_dp(ds, 3, options=DPOptions(similarity=False))  # a switch set: not the pairwise engine
    assert first.stats["engine"] == "interpreted" and "compile_seconds" not in first.stats
    assert first.tree.to_text() == reference.tree.to_text() and first.stats["nodes"] == reference.stats["nodes"]
    a_new_process(monkeypatch, solver, 1e-9)
    again = DPSolver(ds, options=DPOptions(similarity=False), threads=1).solve(3)
    assert again.stats["engine"] == "compiled" and again.stats["interpreted_seconds"] > 0.0
    assert again.status is Status.OPTIMAL and again.objective == again.bound == reference.objective
    assert again.tree.to_text() == reference.tree.to_text()
    small = solve_dp(ds, 2, options=DPOptions(engine="interpreted"))  # asked for: not the pairwise engine
    assert small.stats["engine"] == "interpreted" and small.objective == solve_dp(ds, 2).objective
    stopped = DPSolver(ds, options=DPOptions(engine="interpreted"))
    stopped._params = stopped._params._replace(node_limit=3)
    res = stopped.solve(3)
    assert res.status is Status.TIME_LIMIT and res.stats["engine"] == "interpreted"
    assert res.bound <= reference.objective <= res.objective


# ------------------------------------------------------------------------------------------ the (fp, fn) front
@settings(max_examples=100, **SETTINGS)
@given(tiny_data(max_rows=40, max_cols=6, classes=(2,)), st.integers(0, 3), st.booleans(), st.booleans())
def test_the_interpreted_front_search_visits_the_subproblems_of_the_compiled_one(ds, depth, similarity, lookahead):
    switches = {"similarity": similarity, "lookahead": lookahead}
    a = ParetoSolver(ds, options=ParetoOptions(engine="compiled", **switches), threads=1).front(depth)
    b = ParetoSolver(ds, options=ParetoOptions(engine="interpreted", **switches)).front(depth)
    assert (a.stats["engine"], b.stats["engine"]) == ("compiled", "interpreted")
    assert b.pairs == a.pairs and [p.tree.to_text() for p in b.points] == [p.tree.to_text() for p in a.points]
    for key in ("subproblems", "merges", "depth_two_calls", "cache_hits", "lookahead_prunes", "bound_prunes"):
        assert b.stats[key] == a.stats[key], key
    for goal in ({"metric": "f1"}, {"min_sensitivity": 0.8}):
        f = solve_pareto(ds, depth, options=ParetoOptions(engine="compiled"), threads=1, **goal)
        g = solve_pareto(ds, depth, options=ParetoOptions(engine="interpreted"), **goal)
        assert g.status is f.status and g.objective == f.objective
        assert (g.tree is None and f.tree is None) or g.tree.to_text() == f.tree.to_text()


def test_the_front_interprets_until_its_kernels_are_ready_then_compiles_within_the_budget(monkeypatch):
    rng = np.random.default_rng(6)
    ds = Dataset(rng.integers(0, 2, size=(80, 6)), rng.integers(0, 2, 80))
    reference = solve_pareto(ds, 3, metric="f1", options=ParetoOptions(engine="compiled"))
    monkeypatch.setattr(interp, "compiled_ready", lambda *kernels, warm_up=None: False)
    a_new_process(monkeypatch, pareto, 60.0)
    first = solve_pareto(ds, 3, metric="f1")
    assert first.stats["engine"] == "interpreted" and "compile_seconds" not in first.stats
    assert first.tree.to_text() == reference.tree.to_text() and first.objective == reference.objective
    a_new_process(monkeypatch, pareto, 1e-9)
    again = solve_pareto(ds, 3, metric="f1")
    assert again.stats["engine"] == "compiled" and again.stats["interpreted_seconds"] > 0.0
    assert again.status is Status.OPTIMAL and again.tree.to_text() == reference.tree.to_text()


@pytest.mark.parametrize("args, solver, objective", [
    (["iris"], "contree", 1),  # every threshold of the numeric columns, depth 3: ConTree
    (["monk2", "--depth", "4"], "dp", 142),  # the MurTree search
    (["tic-tac-toe", "--depth", "4"], "dp", 137),  # ... with the numpy forms of the depth-two solver
    (["tic-tac-toe", "--metric", "f1"], "dp", pytest.approx(0.155028, abs=1e-6)),  # the front, depth 3
    (["tic-tac-toe", "--metric", "f1", "--depth", "4"], "dp", pytest.approx(0.106129, abs=1e-6)),  # numpy forms
])
def test_a_first_fit_of_a_small_dataset_compiles_nothing(tmp_path, args, solver, objective):
    # A new environment: numba's disk cache is empty. The CLI's fit runs the kernels interpreted, so it compiles
    # none; the second process that was compiling them is stopped when the fit is done.
    out, cache, _ = first_fit(tmp_path, args)
    assert out["objective"] == objective and out["status"] == "optimal" and out["solver"] == solver
    assert out["stats"]["engine"] == "interpreted" and "compile_seconds" not in out["stats"]
    written = sorted(cache.rglob("*"))
    time.sleep(1.0)
    assert sorted(cache.rglob("*")) == written  # nobody compiles into the cache any more


@NEEDS_CACHE
@pytest.mark.skipif(interp.usable_cores() < 2, reason="one core: no second process (the budget applies)")
def test_a_first_fit_too_big_for_the_interpreter_uses_the_kernels_compiled_meanwhile(tmp_path):
    # breast-cancer at depth 3 takes ConTree 2 s compiled, minutes interpreted: the interpreter searches while a
    # second process compiles the kernels into the cache; then this one loads them and searches again.
    out, cache, log = first_fit(tmp_path, ["breast-cancer", "-v"])
    assert out["objective"] == 9 and out["status"] == "optimal" and out["solver"] == "contree"
    assert out["stats"]["engine"] == "compiled" and out["stats"]["interpreted_seconds"] > 0.0
    assert any(cache.rglob("_contree.solve_subtree-*.nbi"))  # compiled by the second process
    assert "compiling the ConTree kernels in a second process while the interpreter searches" in log


def first_fit(tmp_path, args):
    """``odtmip fit ARGS --json`` in a new process with an empty numba cache: its JSON, the cache folder and its
    standard error."""
    cache = tmp_path / "numba"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    proc = subprocess.run([sys.executable, "-m", "odtmip.cli", "fit", *args, "--json"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), cache, proc.stderr


@settings(max_examples=120, **SETTINGS)
@given(st.integers(0, 2**32 - 1), st.integers(4, 300), st.integers(1, 12), st.sampled_from([1, 1, 2, 5]),
       st.sampled_from([0.0, 0.0, 0.5]), st.integers(2, 3))
def test_the_interpreters_numpy_forms_of_the_depth_two_solver_give_the_compiled_arrays(seed, n, p, min_leaf,
                                                                                       penalty, K):
    # _compact and the two-class _pairs_binary run as numpy matrix operations when interpreted: on rows of several
    # words, any subset of them, a minimum leaf size and a penalty that makes the tolerance positive, every array
    # of the scratch record and every result equals the compiled kernels' (K = 3 checks _compact alone)
    from odtmip.dp._kernels import _depth2

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, p))
    y = (X[:, 0] ^ (rng.random(n) < 0.3)).astype(int) if K == 2 else rng.integers(0, K, size=n)
    y[:min(n, K)] = np.arange(min(n, K))
    s = DPSolver(Dataset(X, y), min_leaf=min_leaf, penalty=penalty, options=DPOptions(counting="bitset"))
    data, prm = s._data, s._params
    rows = np.flatnonzero(rng.random(n) < rng.uniform(0.2, 1.0))
    D = np.zeros(data.feature_bits.shape[1], dtype=np.uint64)
    for r in rows:
        D[r >> 6] |= np.uint64(1) << np.uint64(r & 63)
    cnt = np.zeros(K + 1 + _common.CNT_EQUIV)
    cnt[:K] = np.bincount(data.labels[rows], minlength=K)
    cnt[K] = len(rows)
    out = []
    for solve in (_depth2.solve_terminal, interp.kernels()["_depth2"].solve_terminal):
        scr = s._scratch._replace(**{f: np.zeros_like(a) for f, a in s._scratch._asdict().items()})
        stats = np.zeros(_common.N_STATS, dtype=np.int64)
        solve(data, scr, prm, stats, D, cnt, True)
        out.append((scr, stats))
    (a, sa), (b, sb) = out
    sa[_common.S_WORK] = sb[_common.S_WORK] = 0  # word operations counted for the clock, by the loops only
    assert (prm.tol > 0) == (penalty == 0.5) and np.array_equal(sa, sb)
    for field in a._fields:
        assert np.array_equal(getattr(a, field), getattr(b, field)), field


@settings(max_examples=120, **SETTINGS)
@given(st.integers(0, 2**32 - 1), st.integers(2, 300), st.integers(1, 12), st.integers(1, 2), st.integers(1, 3),
       st.integers(0, 40), st.sampled_from([None, 1, 30]))
def test_the_interpreters_numpy_form_of_the_depth_two_front_solver_gives_the_loops_front(seed, n, p, depth, nodes,
                                                                                        stop, block):
    # With unit weights depth_two_front runs as numpy operations when interpreted: on rows of several words and any
    # subset of them, its front, completeness, statistics and work arrays equal the compiled kernel's; with a
    # deadline already past and the clock read once about 4 p stop word operations are counted, the interpreted
    # loops and the form stop at the same root with the same front; also when the form takes the roots a few at a
    # time (``block`` candidate points: one root, or a few) and counts the rows 7 at a time
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, p)) * (rng.random(p) < 0.9)  # some columns constant
    y = (X[:, 0] ^ (rng.random(n) < 0.3)).astype(int)
    y[:2] = [0, 1]
    s = ParetoSolver(Dataset(X, y))
    rows = np.flatnonzero(rng.random(n) < rng.uniform(0.2, 1.0))
    D = np.zeros(s._dp._data.feature_bits.shape[1], dtype=np.uint64)
    for r in rows:
        D[r >> 6] |= np.uint64(1) << np.uint64(r & 63)
    spaces, clock_work = interp.kernels()["_pareto"], interp.kernels()["_common"].CLOCK_WORK
    assert spaces.depth_two_front is spaces._depth_two_front_numpy
    features = s._counts[0].shape[0]  # the solver's binary columns (constant ones left out)
    space = spaces.depth_two_front.__globals__
    default = space["_BLOCK_POINTS"], space["_BLOCK_ROWS"]
    if block is not None:
        space["_BLOCK_POINTS"], space["_BLOCK_ROWS"] = block, 7
    try:
        out = forms_and_loops(s, D, depth, nodes, clock_work - 4 * features * stop)
    finally:
        space["_BLOCK_POINTS"], space["_BLOCK_ROWS"] = default
    for (F, complete, stats, counts), (G, done, stats2, counts2) in (out[:2], out[2:]):
        assert complete == done and np.array_equal(stats, stats2)
        assert F.shape == G.shape and np.array_equal(F, G)
        assert all(np.array_equal(a, b) for a, b in zip(counts, counts2, strict=True))
    assert out[0][1] and (stop > 0 or features == 0 or not out[2][1])  # stop = 0: at the first root


def forms_and_loops(s, D, depth, nodes, work):
    """(front, complete, statistics, work arrays) of depth_two_front on the rows ``D`` of the ParetoSolver ``s``:
    compiled and in its numpy form, then the interpreted loops and the form with a deadline already past and
    ``work`` word operations counted."""
    data, out, spaces = s._dp._data, [], interp.kernels()["_pareto"]
    for solve, deadline in ((_pareto.depth_two_front, np.inf), (spaces.depth_two_front, np.inf),
                            (spaces.LOOPS["depth_two_front"], 0.0), (spaces.depth_two_front, 0.0)):
        stats = np.zeros(_pareto.N_PARETO_STATS, dtype=np.int64)
        stats[_common.S_WORK] = 0 if deadline == np.inf else work
        counts = [np.zeros_like(a) for a in s._counts]
        F, complete = solve(D, s._pos_bits, data.weights, True, data.row_start, data.row_features, depth, nodes,
                            0.0, deadline, stats, *counts)
        out.append((F, complete, stats, counts))
    return out


@settings(max_examples=200, **SETTINGS)
@given(st.integers(0, 2**32 - 1), st.integers(0, 12), st.integers(0, 12), st.sampled_from([0.0, 1e-9, 0.5]),
       st.booleans())
def test_the_interpreters_numpy_forms_of_the_ceiling_algebra_give_the_compiled_arrays(seed, k, m, tol, integral):
    # subtract and allowed as numpy operations: ceilings with infinite coordinates, points on their corners and just
    # beyond them within the tolerance
    rng = np.random.default_rng(seed)

    def draw(size):
        return rng.integers(0, 8, size=size).astype(float) if integral else rng.random(size) * 8

    U = draw((k, 2))
    U[rng.random((k, 2)) < 0.15] = np.inf
    U = _pareto.maximal(U, tol) if k else U
    corners = U[np.isfinite(U).all(axis=1)]
    S = np.concatenate((draw((m, 2)), corners + rng.random(corners.shape) * tol))  # some beyond a u within tol
    S = _pareto.minimal(S, tol) if S.shape[0] else S
    P = np.concatenate((draw((m, 2)), corners))
    spaces = interp.kernels()["_pareto"]
    assert (spaces.subtract, spaces.allowed) == (spaces._subtract_numpy, spaces._allowed_numpy)
    assert (spaces.maximal, spaces.infeasible_merge) == (spaces._maximal_numpy, spaces._infeasible_merge_numpy)
    assert np.array_equal(spaces.subtract(U, S, tol), _pareto.subtract(U, S, tol))
    assert np.array_equal(spaces.allowed(P, U, tol), _pareto.allowed(P, U, tol))
    assert np.array_equal(spaces.maximal(P, tol), _pareto.maximal(P, tol))
    assert np.array_equal(spaces.minimal(P, tol), _pareto.minimal(P, tol))
    for L1, L2 in ((S, P), (P[:1], S), (S, S[:0])):
        assert spaces.infeasible_merge(L1, L2, U, tol) == _pareto.infeasible_merge(L1, L2, U, tol)


@settings(max_examples=100, **SETTINGS)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6))
def test_the_interpreters_forms_of_hashes_and_class_weights_give_the_loops_values(seed, words):
    # the cache's hash in Python's integers and the class weights and counts by counting bits: the interpreted
    # loops' values
    rng = np.random.default_rng(seed)
    a, b, pos = (rng.integers(0, 2**63, size=words, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, size=words,
                                                                                                 dtype=np.uint64)
                 for _ in range(3))
    common, spaces = interp.kernels()["_common"], interp.kernels()["_pareto"]
    # the kernels' names in the interpreter's namespaces (INTERNAL kernels are named only in kernels) are the forms,
    # also where another module imports the kernel
    assert vars(common)["hash_key"] is vars(interp.kernels()["_cache"])["hash_key"] is common._hash_key_ints
    assert vars(spaces)["class_weights"] is spaces._class_weights_numpy
    assert vars(spaces)["removed_weights"] is spaces._removed_weights_numpy
    with np.errstate(over="ignore"):  # the loops' uint64 products wrap, as the solvers let them
        assert common._hash_key_ints(a) == common.LOOPS["hash_key"](a) and type(common._hash_key_ints(a)) is np.uint64
    weights = np.ones(64 * words)
    assert spaces._class_weights_numpy(a, pos, weights, True) == spaces.LOOPS["class_weights"](a, pos, weights, True)
    assert (spaces._removed_weights_numpy(a, b, pos, weights, True)
            == spaces.LOOPS["removed_weights"](a, b, pos, weights, True))
    # the MurTree search's: class counts (K = 3, classes a partition of the rows), the weights of a and not b and of
    # a and b
    classes = np.stack((~(b | pos), b & ~pos, pos))
    out, out2 = np.zeros(4), np.zeros(4)
    common._class_counts_bits(a, classes, weights, None, 3, True, out)
    common.LOOPS["class_counts"](a, classes, weights, None, 3, True, out2)
    assert out.tolist() == out2.tolist() and out[3] == sum(int(w).bit_count() for w in a)
    assert common._weight_minus_bits(a, b, weights, True) == common.LOOPS["weight_minus"](a, b, weights, True)
    assert common._masked_weight_bits(a, b, weights, True) == common.LOOPS["masked_weight"](a, b, weights, True)


def test_row_lists_count_more_than_255_columns_of_a_row_when_interpreted():
    # interpreted, a Python int plus a uint8 stays uint8 (NumPy 2): a row with 300 columns counted 44
    X = np.zeros((3, 620), dtype=np.uint8)
    X[0, :300], X[2, ::2] = 1, 1
    start, features = interp.kernels()["_common"].row_lists(X)
    assert start.tolist() == [0, 300, 300, 610] and features.tolist() == list(range(300)) + list(range(0, 620, 2))
    assert all(np.array_equal(a, b) for a, b in zip(_common.row_lists(X), (start, features), strict=True))


def test_the_interpreted_front_keeps_the_compiled_trees_of_equal_points_and_an_empty_ceiling():
    # equal (fp, fn, nodes) points: both sort stably, so both keep the same tree (numba's quicksort and numpy's
    # ordered ties differently); a child whose ceiling is empty (no lookahead, a sensitivity floor) stores nothing
    # from it (interpreted this raised IndexError, compiled it read past the array)
    ties = Dataset(np.array([[1, 0, 1, 0, 0], [0, 1, 1, 1, 1], [0, 1, 0, 1, 1], [1, 0, 0, 1, 0], [0, 0, 1, 1, 1],
                             [0, 0, 0, 0, 1], [0, 0, 1, 0, 0], [1, 1, 0, 1, 0], [0, 0, 1, 1, 1], [0, 1, 1, 1, 0],
                             [1, 0, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 1], [0, 0, 0, 1, 0], [0, 1, 1, 1, 0],
                             [1, 0, 0, 0, 1], [1, 0, 0, 1, 0], [0, 1, 1, 1, 1], [1, 0, 0, 1, 1], [1, 1, 1, 1, 1],
                             [0, 0, 1, 1, 1], [1, 1, 0, 1, 0], [0, 0, 1, 0, 1], [1, 0, 0, 1, 0], [0, 0, 1, 0, 0]]),
                   [0, 1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1, 1, 0, 0, 1, 1, 0])
    a, b = (ParetoSolver(ties, options=ParetoOptions(engine=engine)).front(3) for engine in ("compiled", "interpreted"))
    assert a.pairs == b.pairs and [p.tree.to_text() for p in a.points] == [p.tree.to_text() for p in b.points]
    empty = Dataset(np.array([[1, 0, 0, 0, 1, 0], [0, 0, 1, 0, 0, 1], [0, 1, 0, 0, 0, 1], [0, 1, 1, 0, 1, 0],
                              [0, 1, 0, 0, 0, 0], [1, 1, 1, 1, 0, 0], [0, 1, 0, 0, 1, 1], [1, 1, 0, 0, 0, 1],
                              [1, 1, 1, 1, 0, 1], [0, 0, 0, 1, 1, 0], [1, 1, 1, 0, 0, 1], [0, 0, 0, 1, 0, 0],
                              [0, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 1], [1, 0, 0, 1, 1, 0], [0, 0, 0, 0, 0, 1],
                              [1, 1, 0, 1, 1, 0], [0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 1, 0], [1, 0, 0, 1, 0, 1],
                              [0, 0, 1, 1, 1, 0]]),
                    [0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 1, 1, 0, 0, 1, 0, 1, 0, 1, 0, 0])
    f, g = (solve_pareto(empty, 4, min_sensitivity=0.95, options=ParetoOptions(engine=engine, lookahead=False))
            for engine in ("compiled", "interpreted"))
    assert (f.status, f.objective, f.tree.to_text()) == (g.status, g.objective, g.tree.to_text())


@settings(max_examples=150, **SETTINGS)
@given(st.integers(0, 2**32 - 1), st.integers(1, 60), st.integers(1, 4), st.integers(2, 4), st.integers(1, 4),
       st.booleans(), st.booleans())
def test_the_interpreters_numpy_form_of_carts_thresholds_gives_the_compiled_arrays(seed, n, p, K, min_leaf, real,
                                                                                    subset):
    # CART's best threshold of each ordered feature (the greedy tree's splits and ConTree's feature order): the same
    # running sums in the same order, so the same floats, ties to the lowest threshold and to -inf alike
    from odtmip.dp._kernels import _contree

    rng = np.random.default_rng(seed)
    ranks = rng.integers(0, rng.integers(1, 6), size=(p, n))  # many ties, some constant features
    order = np.argsort(ranks, axis=1, kind="stable")
    rows = np.sort(rng.choice(n, size=rng.integers(1, n + 1), replace=False)) if subset else np.arange(n)
    weights = rng.random(len(rows)) + 0.5 if real else np.ones(len(rows))
    Y = np.zeros((len(rows), K))
    Y[np.arange(len(rows)), rng.integers(0, K, size=len(rows))] = weights
    args = (order, ranks, rows, Y, Y.sum(axis=0), min_leaf)
    spaces = interp.kernels()["_contree"]
    assert vars(spaces)["cart_thresholds"] is spaces._cart_thresholds_numpy
    (p1, r1), (p2, r2) = _contree.cart_thresholds(*args), spaces._cart_thresholds_numpy(*args)
    assert p1.tolist() == p2.tolist() and r1.tolist() == r2.tolist()
