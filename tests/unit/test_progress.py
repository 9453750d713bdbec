"""Progress lines of long solves (odtmip.core.progress): from the DP's compiled search, from HiGHS's callback, and the
command's choice of when to show them."""

import logging
import time

import numpy as np
import pytest

from odtmip.cli import main
from odtmip.core import progress
from odtmip.core.data import Dataset
from odtmip.dp import ContreeOptions, DPOptions, solve_contree, solve_dp
from odtmip.dp.contree import ContreeSolver


@pytest.fixture
def every_time(monkeypatch):
    """Report at every chance (interval 0) instead of every 2 s."""
    monkeypatch.setattr(progress, "INTERVAL", 0.0)


def _lines(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "odtmip.progress"]


def _search_lines(caplog):
    """The progress lines of a compiled search, without the notice a solve that runs first in a new environment
    (tests run in random order) may give while numba compiles the kernels."""
    return [line for line in _lines(caplog) if not line.startswith("compiling ")]


def _hard(rng):
    X = rng.integers(0, 2, size=(300, 25))
    y = (X[:, 0] ^ X[:, 1] ^ (X[:, 2] & X[:, 3]) ^ (rng.random(300) < 0.15)).astype(int)
    return Dataset(X, y)


def test_the_dp_reports_its_best_tree_and_bound_from_inside_the_search(rng, every_time, caplog):
    ds = _hard(rng)
    with caplog.at_level(logging.INFO, logger="odtmip.progress"):
        res = solve_dp(ds, 4, options=DPOptions(engine="compiled"))
    lines = _search_lines(caplog)
    assert lines and all(line.startswith("dp  ") for line in lines)
    best = [float(line.split(" best ")[1].split()[0]) for line in lines if " best -" not in line]
    bounds = [float(line.split(" bound ")[1].split()[0]) for line in lines]
    assert best and min(best) >= res.objective  # an incumbent is a tree: never below the optimum
    assert max(bounds) <= res.objective  # a bound never above it


@pytest.mark.parametrize("threads", [1, 2])
def test_contree_reports_its_best_tree_and_proven_bound_from_inside_the_search(rng, every_time, caplog, threads):
    X = rng.random((300, 5)).round(3)
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.4) ^ (rng.random(300) < 0.2)).astype(int)
    for passes in (True, False):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="odtmip.progress"):
            # a time limit, never reached, keeps the bound passes (a search nothing can stop runs without them)
            res = solve_contree(Dataset(X, y), 3, time_limit=3600.0, threads=threads,
                                options=ContreeOptions(bound_passes=passes, engine="compiled"))
        lines = _search_lines(caplog)
        assert lines and all(line.startswith("contree  ") for line in lines)
        best = [float(line.split(" best ")[1].split()[0]) for line in lines]
        # the first incumbent is the greedy tree (or, in two threads, a better one another thread found before the
        # first line), and every later one a tree at least as good as the one before
        first = best[0] == res.stats["greedy_objective"] if threads == 1 else best[0] <= res.stats["greedy_objective"]
        assert first and best == sorted(best, reverse=True)
        assert best[-1] >= res.objective
        shown = [line.split(" bound ")[1].split()[0] for line in lines]
        if not passes:  # nothing is proven while the search for the optimum runs
            assert set(shown) == {"-"}
            continue
        # the bound the passes proved (0 before the first): never above the optimum, never falling
        bounds = [float(b) for b in shown]
        assert bounds == sorted(bounds) and bounds[-1] <= res.objective


def test_a_minimising_reporter_never_shows_a_worse_tree_or_a_lower_bound(every_time, caplog):
    """A solve that searches again (after the switch from the interpreter to the compiled kernels) starts from the
    greedy tree and a zero bound; its lines keep the best tree and the bound shown before."""
    minimising, plain = progress.Reporter("dp", minimise=True), progress.Reporter("dp")
    for reporter in (minimising, plain):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="odtmip.progress"):
            for best, bound in ((None, None), (42.0, 0.0), (41.0, 3.0), (42.0, None), (None, 1.0), (40.0, 4.0)):
                reporter(best, bound)
        shown = [(line.split(" best ")[1].split()[0], line.split(" bound ")[1].split()[0]) for line in _lines(caplog)]
        if reporter is minimising:
            assert shown == [("-", "-"), ("42", "0"), ("41", "3"), ("41", "3"), ("41", "3"), ("40", "4")]
        else:
            assert shown == [("-", "-"), ("42", "0"), ("41", "3"), ("42", "-"), ("-", "1"), ("40", "4")]


@pytest.mark.parametrize("engine", ["dp", "contree"])
def test_each_solve_of_a_solver_reports_from_its_own_start(rng, engine):
    """The reporter that keeps a solve's lines from going back lives for one call: a second solve of the same solver
    starts its own (else it would show the first solve's trees)."""
    from odtmip.dp.solver import DPSolver

    ds = _hard(rng)
    solver = DPSolver(ds, options=DPOptions(engine="compiled")) if engine == "dp" else ContreeSolver(
        ds, options=ContreeOptions(engine="compiled"))
    solver.solve(3)
    first = solver._reporter
    solver.solve(2)
    assert first is not None and solver._reporter is not first and solver._reporter.shown == (None, None)


def test_the_solves_of_a_kernel_warm_up_report_nothing(every_time, caplog):
    @progress.warm_up("test kernels")
    def warm_up():
        progress.Reporter("dp")(5.0, 1.0)

    with caplog.at_level(logging.INFO, logger="odtmip.progress"):
        warm_up()
        progress.Reporter("dp")(5.0, 1.0)
    # the solves' lines only: a loaded machine may also log a compile notice (a timer of an earlier test)
    solves = [line for line in _lines(caplog) if line.startswith("dp  ")]
    assert [line.split("  ", 2)[2] for line in solves] == ["best 5  bound 1  gap 80.0%"]


def test_no_progress_lines_unless_asked(rng, every_time, caplog):
    with caplog.at_level(logging.WARNING, logger="odtmip.progress"):
        solve_dp(_hard(rng), 4)
    assert _lines(caplog) == []


def test_the_mip_reports_highs_incumbent_and_dual_bound(caplog):
    from odtmip.models._highs import _Recorder

    rec = _Recorder(echo=False)
    rec.progress = progress.Reporter("highs", interval=0.0)
    with caplog.at_level(logging.INFO, logger="odtmip.progress"):
        rec.logging(1.25, 5.0, 3.0, 7)  # HiGHS's cbMipLogging: seconds, primal bound, dual bound, nodes
        rec.logging(1.25, float("inf"), 3.0, 7)  # no incumbent yet
    assert _lines(caplog) == ["highs  1.2 s  best 5  bound 3  gap 40.0%", "highs  1.2 s  best -  bound 3  gap -"]
    assert rec.points[0] == (1.25, 5.0, 3.0, 7)
    # in the caller's units: Günlük's correct count of 958 rows as errors, the bound never below 0 errors
    caplog.clear()
    errors = _Recorder(echo=False, units=lambda best, dual: (958 - best, max(0.0, 958 - dual)))
    errors.progress = progress.Reporter("highs", interval=0.0)
    with caplog.at_level(logging.INFO, logger="odtmip.progress"):
        errors.logging(1.25, 742.0, 3832.0, 7)
    assert _lines(caplog) == ["highs  1.2 s  best 216  bound 0  gap 100.0%"]
    assert errors.points == [(1.25, 742.0, 3832.0, 7)]  # the trajectory keeps the model's own numbers


@pytest.mark.parametrize(("flags", "shown"), [(["-v"], True), ([], False), (["--quiet"], False)])
def test_the_command_shows_progress_with_verbose_only_off_a_terminal(rng, every_time, capsys, monkeypatch,
                                                                    tmp_path, flags, shown):
    ds = _hard(rng)
    path = tmp_path / "d.csv"
    np.savetxt(path, np.column_stack([ds.Xb, ds.y]), fmt="%d", delimiter=",",
               header=",".join([f"x{j}" for j in range(25)] + ["class"]), comments="")
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])  # let the command configure logging afresh ...
    level = root.level
    try:
        assert main(["fit", str(path), "--depth", "4", "--json", *flags]) == 0
    finally:
        root.setLevel(level)  # ... and leave no level behind (a later test's WARNING records would not reach caplog)
    err = capsys.readouterr().err
    assert ("odtmip.progress: dp  " in err) is shown


def test_a_block_that_outlasts_the_notice_delay_says_it_compiles(caplog):
    with caplog.at_level(logging.INFO, logger="odtmip.progress"):
        with progress.compiling("the test kernels", after=0.0):
            waited = time.perf_counter()
            while not _lines(caplog) and time.perf_counter() - waited < 30.0:  # the notice comes from a timer thread
                time.sleep(0.01)
        with progress.compiling("the quick kernels", after=3600.0):
            pass  # loaded from the disk cache: nothing to say
    lines = _lines(caplog)
    assert len(lines) == 1 and lines[0].startswith("compiling the test kernels: the first run in this environment")


def test_warm_up_runs_its_body_once_and_returns_its_seconds():
    runs, body = [], []

    @progress.warm_up("the test kernels")
    def warm():
        """Doc of the body."""
        start = time.perf_counter()
        runs.append(warm())  # a solve inside the body warms up again: nothing to do
        body.append(time.perf_counter() - start)

    first = warm()
    assert runs == [0.0] and first >= body[0]  # the seconds cover the whole body
    assert warm() == 0.0 and runs == [0.0]
    assert warm.__doc__ == "Doc of the body." and warm.__name__ == "warm"


def test_warm_up_ends_with_one_garbage_collection(monkeypatch):
    # the objects a kernel load leaves are collected with the load, not in the first solve's clock
    events = []
    monkeypatch.setattr(progress.gc, "collect", lambda: events.append("collect"))

    @progress.warm_up("the test kernels")
    def warm():
        events.append("body")

    warm()
    warm()
    assert events == ["body", "collect"]


@pytest.mark.parametrize("module, name, what", [
    ("odtmip.dp.solver", "warm_up", "the DP kernels"),
    ("odtmip.dp.contree", "warm_up", "the ConTree kernels"),
    ("odtmip.dp.pareto", "_warm_up_pareto", "the Pareto-front kernels"),
])
def test_every_kernel_warm_up_says_when_it_compiles(module, name, what, monkeypatch):
    import contextlib
    import importlib

    warm_up = getattr(importlib.import_module(module), name)
    warm_up()  # the kernels of this process: already compiled or loaded
    monkeypatch.setattr(warm_up, "started", False)  # as in a new process
    said = []

    @contextlib.contextmanager
    def compiling(name, after=None):
        said.append(name)
        yield

    monkeypatch.setattr(progress, "compiling", compiling)
    warm_up()
    assert said == [what]
