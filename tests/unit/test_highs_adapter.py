"""Tests of the HiGHS adapter (odtmip.models._highs) on small MIPs built here, with known answers."""

import itertools
import math
import pickle
import sys
import time
from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("highspy")
pyo = pytest.importorskip("pyomo.environ")

from odtmip.core.exceptions import OptionError, SolverUnavailableError  # noqa: E402
from odtmip.core.results import Status  # noqa: E402
from odtmip.models import _highs, _highs_read  # noqa: E402
from odtmip.models._compile import compile_model  # noqa: E402
from odtmip.models._highs import (  # noqa: E402
    HighsOptions,
    highs_available,
    lp_relaxation,
    model_statistics,
    require_highs,
    solve,
)

pytestmark = pytest.mark.highs

ONE_THREAD = HighsOptions(threads=1, seed=0)


# ----------------------------------------------------------------------------------------------------
# Small models with known answers


def knapsack(n=20, seed=0, constant=0.0):
    """Random 0-1 knapsack (maximise) and its data."""
    rng = np.random.default_rng(seed)
    w = rng.integers(5, 40, n)
    p = rng.integers(5, 50, n)
    cap = int(w.sum() * 0.4)
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.I, domain=pyo.Binary)
    m.capacity = pyo.Constraint(expr=sum(int(w[i]) * m.x[i] for i in m.I) <= cap)
    m.profit = pyo.Objective(expr=sum(int(p[i]) * m.x[i] for i in m.I) + constant, sense=pyo.maximize)
    return m, w, p, cap


def knapsack_dp(w, p, cap) -> int:
    """Optimal knapsack profit by dynamic programming over capacities."""
    best = np.zeros(cap + 1, dtype=np.int64)
    for wi, pi in zip(w.tolist(), p.tolist(), strict=True):
        best[wi:] = np.maximum(best[wi:], best[: cap + 1 - wi] + pi)
    return int(best[cap])


def covering(n=15, seed=1, constant=0.0):
    """Random 0-1 covering knapsack (minimise cost subject to a weight demand)."""
    rng = np.random.default_rng(seed)
    w = rng.integers(5, 40, n)
    c = rng.integers(5, 50, n)
    demand = int(w.sum() * 0.5)
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, n - 1)
    m.x = pyo.Var(m.I, domain=pyo.Binary)
    m.demand = pyo.Constraint(expr=sum(int(w[i]) * m.x[i] for i in m.I) >= demand)
    m.cost = pyo.Objective(expr=sum(int(c[i]) * m.x[i] for i in m.I) + constant, sense=pyo.minimize)
    return m, w, c, demand


def covering_brute_force(w, c, demand) -> int:
    """Optimal covering cost by enumerating all 2^n choices."""
    choices = np.array(list(itertools.product((0, 1), repeat=len(w))))
    feasible = choices @ w >= demand
    return int((choices @ c)[feasible].min())


def multi_knapsack(n=60, m=8, seed=1):
    """Multi-dimensional knapsack (maximise): needs seconds of branch and bound, so 0.5 s stops it."""
    rng = np.random.default_rng(seed)
    w = rng.integers(10, 100, size=(m, n))
    p = (w.sum(0) / m + rng.integers(0, 30, size=n)).round()
    cap = (w.sum(1) * 0.5).round()
    M = pyo.ConcreteModel()
    M.I = pyo.RangeSet(0, n - 1)
    M.K = pyo.RangeSet(0, m - 1)
    M.x = pyo.Var(M.I, domain=pyo.Binary)
    M.cap = pyo.Constraint(M.K, rule=lambda M, k: sum(float(w[k, i]) * M.x[i] for i in M.I) <= float(cap[k]))
    M.obj = pyo.Objective(expr=sum(float(p[i]) * M.x[i] for i in M.I), sense=pyo.maximize)
    return M, w, cap


def market_split(m=4, n=30, seed=3, planted=False):
    """Market-split instance (Cornuejols & Dawande): equality knapsacks whose feasible points are very hard
    to find. With ``planted=True`` the right-hand sides come from a random 0-1 point, which is returned."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 100, size=(m, n))
    x_star = (rng.random(n) < 0.5).astype(int)
    b = a @ x_star if planted else a.sum(1) // 2
    c = rng.integers(1, 10, size=n)
    M = pyo.ConcreteModel()
    M.I = pyo.RangeSet(0, n - 1)
    M.x = pyo.Var(M.I, domain=pyo.Binary)
    M.split = pyo.Constraint(range(m), rule=lambda M, k: sum(int(a[k, i]) * M.x[i] for i in M.I) == int(b[k]))
    M.obj = pyo.Objective(expr=sum(int(c[i]) * M.x[i] for i in M.I))
    return M, x_star, c


def facility_location(seed=0):
    """Capacitated facility location: binary openings y, continuous assignments x."""
    rng = np.random.default_rng(seed)
    F, C = 5, 12
    f = rng.integers(20, 60, F)
    c = rng.integers(1, 20, (F, C))
    d = rng.integers(1, 5, C)
    cap = rng.integers(8, 20, F)
    m = pyo.ConcreteModel()
    m.F = pyo.RangeSet(0, F - 1)
    m.C = pyo.RangeSet(0, C - 1)
    m.y = pyo.Var(m.F, domain=pyo.Binary)
    m.x = pyo.Var(m.F, m.C, bounds=(0, 1))
    m.serve = pyo.Constraint(m.C, rule=lambda m, j: sum(m.x[i, j] for i in m.F) == 1)
    m.cap = pyo.Constraint(m.F, rule=lambda m, i: sum(int(d[j]) * m.x[i, j] for j in m.C) <= int(cap[i]) * m.y[i])
    m.cost = pyo.Objective(
        expr=sum(int(f[i]) * m.y[i] for i in m.F) + sum(int(c[i, j]) * m.x[i, j] for i in m.F for j in m.C)
    )
    return m


def assert_monotone(trajectory, maximize):
    for (t0, p0, d0), (t1, p1, d1) in itertools.pairwise(trajectory):
        assert t0 <= t1
        if maximize:  # the incumbent rises, the upper bound falls
            assert p0 <= p1 and d0 >= d1
        else:
            assert p0 >= p1 and d0 <= d1


# ----------------------------------------------------------------------------------------------------
# Optimal solves, both senses


def test_knapsack_optimum_matches_dynamic_programming():
    m, w, p, cap = knapsack(n=22, seed=7)
    run = solve(m, ONE_THREAD)
    assert run.status is Status.OPTIMAL and run.stop_reason == "solved"
    assert run.objective == pytest.approx(knapsack_dp(w, p, cap))
    assert run.bound == pytest.approx(run.objective) and run.gap == pytest.approx(0.0, abs=1e-9)
    x = np.array([m.x[i].value for i in m.I])
    assert run.has_solution and set(x.tolist()) <= {0.0, 1.0}  # integer values come back rounded
    assert x @ w <= cap and x @ p == pytest.approx(run.objective)
    assert run.handoff_seconds > 0 and run.solve_seconds > 0 and run.nodes >= 0 and run.lp_iterations >= 0
    assert not run.warm_start_given and run.warm_start_accepted is None


def test_minimisation_matches_brute_force():
    m, w, c, demand = covering()
    run = solve(m, ONE_THREAD)
    assert run.status is Status.OPTIMAL
    assert run.objective == pytest.approx(covering_brute_force(w, c, demand))
    assert pyo.value(m.cost) == pytest.approx(run.objective)
    assert_monotone(run.trajectory, maximize=False)


@pytest.mark.parametrize("make, sense", [(knapsack, "max"), (covering, "min")])
def test_objective_constant_is_included(make, sense):
    plain = solve(make()[0], ONE_THREAD)
    m = make(constant=7.5)[0]
    run = solve(m, ONE_THREAD)
    assert run.objective == pytest.approx(plain.objective + 7.5)
    assert run.bound == pytest.approx(plain.bound + 7.5)
    assert pyo.value(m.component_data_objects(pyo.Objective).__next__()) == pytest.approx(run.objective)


def test_fixed_variables_ranged_rows_and_general_integers():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(-5, 5))
    m.y = pyo.Var(domain=pyo.Binary)
    m.z = pyo.Var(bounds=(0, None))
    m.f = pyo.Var(domain=pyo.Binary)
    m.f.fix(1)
    m.ranged = pyo.Constraint(expr=pyo.inequality(1.5, m.x + m.y + m.z, 3.5))
    m.link = pyo.Constraint(expr=m.x - m.z == 0.5 * m.f)
    m.obj = pyo.Objective(expr=m.x + 2 * m.y - m.z + 10 * m.f, sense=pyo.maximize)
    # z = x - 0.5 >= 0 and 2x + y <= 4 with x integer: x = 1, y = 1, z = 0.5, objective 12.5.
    run = solve(m)
    assert run.status is Status.OPTIMAL and run.objective == pytest.approx(12.5)
    assert (m.x.value, m.y.value, m.z.value, m.f.value) == pytest.approx((1, 1, 0.5, 1))


def test_pure_lp_is_solved_to_optimality():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 4))
    m.y = pyo.Var(bounds=(0, 3))
    m.c = pyo.Constraint(expr=m.x + m.y <= 5)
    m.obj = pyo.Objective(expr=2 * m.x + m.y + 1, sense=pyo.maximize)
    run = solve(m)
    assert run.status is Status.OPTIMAL and run.objective == pytest.approx(10.0)
    assert run.bound == pytest.approx(10.0) and run.gap == 0.0
    assert (m.x.value, m.y.value) == pytest.approx((4.0, 1.0))


def test_model_with_every_variable_fixed_is_solved_without_columns():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.x.fix(1)
    m.c = pyo.Constraint(expr=m.x <= 1)
    m.obj = pyo.Objective(expr=3 * m.x + 1)
    run = solve(m)
    assert run.status is Status.OPTIMAL and run.objective == 4.0 and run.bound == 4.0
    assert run.statistics["n_variables"] == 0


def test_two_objectives_are_rejected():
    m = knapsack(n=5)[0]
    m.other = pyo.Objective(expr=m.x[0])
    with pytest.raises(ValueError, match="2 active objectives"):
        solve(m)


# ----------------------------------------------------------------------------------------------------
# Infeasible and unbounded models


def test_infeasible_model():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.y = pyo.Var(domain=pyo.Binary)
    m.too_much = pyo.Constraint(expr=m.x + m.y >= 3)
    m.obj = pyo.Objective(expr=m.x)
    run = solve(m)
    assert run.status is Status.INFEASIBLE and run.stop_reason == "infeasible"
    assert not run.has_solution and run.objective is None and run.bound is None and run.gap == math.inf
    assert m.x.value is None
    assert lp_relaxation(m) == math.inf


def test_constant_constraint_violated_by_fixed_variables_is_infeasible():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.y = pyo.Var(domain=pyo.Binary)
    m.x.fix(1)
    m.c = pyo.Constraint(expr=m.x <= 0)
    m.obj = pyo.Objective(expr=m.x + m.y, sense=pyo.maximize)
    run = solve(m, warm_start=[(m.y, 1)])
    assert run.status is Status.INFEASIBLE and "trivially infeasible" in run.log
    assert lp_relaxation(m) == -math.inf


def test_unbounded_model():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.y = pyo.Var(domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x - m.y >= 0)
    m.obj = pyo.Objective(expr=m.x, sense=pyo.maximize)
    run = solve(m)
    assert run.status is Status.NO_SOLUTION and run.stop_reason == "unbounded"
    assert lp_relaxation(m) == math.inf


# ----------------------------------------------------------------------------------------------------
# Limits never raise


def test_time_limit_with_incumbent_loads_it():
    m, w, cap = multi_knapsack()
    run = solve(m, HighsOptions(time_limit=0.5, threads=1, seed=0))
    assert run.status is Status.TIME_LIMIT and run.stop_reason == "time_limit"
    assert run.has_solution
    x = np.array([m.x[i].value for i in m.I])
    assert np.all(w @ x <= cap + 1e-6)
    assert pyo.value(m.obj) == pytest.approx(run.objective)
    assert run.bound >= run.objective  # maximise: the dual bound is an upper bound
    assert run.gap == pytest.approx((run.bound - run.objective) / abs(run.objective), rel=1e-6)
    assert run.gap > 0
    assert run.trajectory and run.trajectory[-1][1:] == pytest.approx((run.objective, run.bound))
    assert_monotone(run.trajectory, maximize=True)


def test_time_limit_without_incumbent():
    m = market_split()[0]
    run = solve(m, HighsOptions(time_limit=0.5, threads=1, seed=0))
    assert run.status is Status.TIME_LIMIT and run.stop_reason == "time_limit"
    assert not run.has_solution and run.objective is None and run.gap == math.inf
    assert run.bound is not None and math.isfinite(run.bound)
    assert all(m.x[i].value is None for i in m.I)


@pytest.mark.parametrize(
    "options, reason",
    [
        (HighsOptions(threads=1, mip_rel_gap=0.05), "gap"),
        (HighsOptions(threads=1, extra={"mip_max_nodes": 3}), "node_limit"),
    ],
)
def test_other_limits(options, reason):
    m = multi_knapsack()[0]
    run = solve(m, options)
    assert run.status is Status.TIME_LIMIT and run.stop_reason == reason
    assert run.has_solution and 0 < run.gap


# ----------------------------------------------------------------------------------------------------
# Warm starts


@pytest.fixture(scope="module")
def knapsack_optimum():
    m, *_ = knapsack(n=25, seed=3)
    run = solve(m, ONE_THREAD)
    return run.objective, {i: m.x[i].value for i in m.I}


def test_optimal_start_is_accepted(knapsack_optimum):
    best, x = knapsack_optimum
    m = knapsack(n=25, seed=3)[0]
    run = solve(m, ONE_THREAD, warm_start=[(m.x[i], x[i]) for i in m.I])
    assert run.warm_start_given and run.warm_start_accepted is True
    assert run.warm_start_objective == pytest.approx(best)
    assert run.objective == pytest.approx(best)
    assert run.trajectory[0][1] == pytest.approx(best)  # the start is HiGHS's first incumbent


def test_infeasible_start_is_rejected_and_the_solve_finishes(knapsack_optimum):
    best, _ = knapsack_optimum
    m = knapsack(n=25, seed=3)[0]
    run = solve(m, ONE_THREAD, warm_start=[(m.x[i], 1.0) for i in m.I])
    assert run.warm_start_given and run.warm_start_accepted is False and run.warm_start_objective is None
    assert run.status is Status.OPTIMAL and run.objective == pytest.approx(best)


def test_partial_start_is_completed(knapsack_optimum):
    best, x = knapsack_optimum
    m = knapsack(n=25, seed=3)[0]
    run = solve(m, ONE_THREAD, warm_start=[(m.x[i], x[i]) for i in m.I if i % 2 == 0])
    assert run.warm_start_accepted is True and run.warm_start_objective <= best + 1e-9
    assert run.objective == pytest.approx(best)


def test_partial_start_on_a_hard_mip_keeps_the_trajectory_of_the_main_search():
    m = multi_knapsack()[0]
    solve(m, HighsOptions(time_limit=0.3, threads=1, seed=0))
    x = {i: m.x[i].value for i in m.I}
    m = multi_knapsack()[0]
    run = solve(m, HighsOptions(time_limit=0.5, threads=1, seed=0), warm_start=[(m.x[i], x[i]) for i in m.I if i % 3])
    assert run.warm_start_accepted is True
    # The completion sub-MIP's bounds are not valid for the full model; the main search's points are.
    assert len(run.trajectory) >= 3 and run.trajectory[0][1] >= run.warm_start_objective - 1e-9
    assert run.trajectory[0][2] >= run.bound
    assert_monotone(run.trajectory, maximize=True)


def test_binary_only_start_is_completed_by_an_lp():
    m = facility_location()
    best = solve(m, ONE_THREAD).objective
    y = {i: m.y[i].value for i in m.F}
    m = facility_location()
    run = solve(m, ONE_THREAD, warm_start=[(m.y[i], y[i]) for i in m.F])  # no x values at all
    assert run.warm_start_accepted is True and run.warm_start_objective == pytest.approx(best)
    m = facility_location()
    run = solve(m, ONE_THREAD, warm_start=[(m.y[i], 0.0) for i in m.F])  # nothing open: no LP completion
    assert run.warm_start_accepted is False and run.objective == pytest.approx(best)


def tiny_max():
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, 2)
    m.x = pyo.Var(m.I, domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum(m.x[i] for i in m.I) <= 2)
    m.d = pyo.Constraint(expr=m.x[0] + m.x[2] <= 1)
    m.obj = pyo.Objective(expr=m.x[0] + 2 * m.x[1] + 3 * m.x[2] + 5, sense=pyo.maximize)
    return m


@pytest.mark.parametrize(
    "start, accepted, objective",
    [
        ({0: 1, 1: 0, 2: 0}, True, 6.0),  # full and feasible
        ({0: 1, 1: 1, 2: 1}, False, None),  # full and infeasible
        ({0: 1}, True, 8.0),  # partial, completed with x1 = 1, x2 = 0
        ({0: 1, 2: 1}, False, None),  # partial, violates row d
    ],
)
def test_start_verdict_when_presolve_solves_the_model(start, accepted, objective):
    # HiGHS's presolve solves this model outright, before it looks at any start.
    m = tiny_max()
    run = solve(m, warm_start=[(m.x[i], v) for i, v in start.items()])
    assert run.warm_start_accepted is accepted
    assert run.warm_start_objective == (None if objective is None else pytest.approx(objective))
    assert run.objective == pytest.approx(10.0)


def test_start_pairs_for_fixed_variables_and_none_values_are_skipped():
    m = knapsack(n=6, seed=0)[0]
    m.x[0].fix(0)
    run = solve(m, warm_start=[(m.x[0], 1.0), (m.x[1], None)])
    assert not run.warm_start_given and run.warm_start_accepted is None
    assert m.x[0].value == 0


# ----------------------------------------------------------------------------------------------------
# Solutions injected during the search


def test_more_starts_become_the_incumbent():
    # Feasible points of a market-split instance are very hard to find: the one handed over is the incumbent.
    m, x_star, c = market_split(planted=True)
    run = solve(m, HighsOptions(time_limit=0.5, threads=1, seed=0), more_starts=[[(m.x[i], x_star[i]) for i in m.I]])
    assert run.has_solution and run.objective <= c @ x_star + 1e-9


def test_partial_more_starts_are_completed():
    m, x_star, c = market_split(planted=True)
    partial = [(m.x[i], x_star[i]) for i in m.I if i < 24]  # the last 6 values are found by the completion
    run = solve(m, HighsOptions(time_limit=0.5, threads=1, seed=0), more_starts=[partial])
    assert run.has_solution and run.objective <= c @ x_star + 1e-9


def test_feasible_start_is_plain_linear_algebra():
    m = tiny_max()  # x0 + x1 + x2 <= 2, x0 + x2 <= 1, binary
    comp = compile_model(m)
    col = [comp.col_of[id(m.x[i])] for i in m.I]

    def point(*x):
        v = np.zeros(3)
        v[col] = x
        return v

    assert _highs._feasible_start(comp, point(1, 1, 0)) is not None
    assert _highs._feasible_start(comp, point(1 - 1e-9, 1, 0)).tolist() == point(1, 1, 0).tolist()  # rounded
    assert _highs._feasible_start(comp, point(1, 1, 1)) is None  # row c
    assert _highs._feasible_start(comp, point(1, 0, 1)) is None  # row d
    assert _highs._feasible_start(comp, point(0.5, 0, 0)) is None  # integrality
    assert _highs._feasible_start(comp, point(2, 0, 0)) is None  # bound
    assert _highs._feasible_start(comp, point(1, 1, 0)[:2]) is None  # the wrong length
    assert _highs_read.start_verdict(comp, point(1, 1, 0), 10.0) == (True, 8.0)
    assert _highs_read.start_verdict(comp, point(1, 1, 0), 7.0) == (False, None)  # HiGHS ended worse: not taken
    assert _highs_read.start_verdict(comp, None, 10.0) == (False, None)


# ----------------------------------------------------------------------------------------------------
# LP relaxation and statistics


def test_lp_relaxation_hand_computed_and_model_unchanged():
    m = pyo.ConcreteModel()
    m.a = pyo.Var(domain=pyo.Binary)
    m.b = pyo.Var(domain=pyo.Binary)
    m.c = pyo.Var(domain=pyo.Binary)
    m.weight = pyo.Constraint(expr=5 * m.a + 4 * m.b + 3 * m.c <= 8)
    m.obj = pyo.Objective(expr=10 * m.a + 6 * m.b + 4 * m.c + 1, sense=pyo.maximize)
    # Greedy by ratio: a = 1 (ratio 2), b = 3/4 (ratio 1.5): 10 + 4.5 + 1.
    assert lp_relaxation(m) == pytest.approx(15.5)
    assert lp_relaxation(m, HighsOptions(lp_solver="ipm")) == pytest.approx(15.5, abs=1e-6)
    assert all(v.domain is pyo.Binary and v.value is None for v in (m.a, m.b, m.c))
    assert solve(m).objective == pytest.approx(15.0)  # a + c


def test_lp_relaxation_minimise():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.y = pyo.Var(domain=pyo.NonNegativeIntegers)
    m.c1 = pyo.Constraint(expr=2 * m.x + m.y >= 3)
    m.c2 = pyo.Constraint(expr=m.x + 3 * m.y >= 4)
    m.obj = pyo.Objective(expr=m.x + m.y - 2)
    # Vertex x = 1, y = 1 of both rows: LP value 2 - 2 = 0; the integer optimum is the same point.
    assert lp_relaxation(m) == pytest.approx(0.0, abs=1e-9)
    assert m.x.domain is pyo.NonNegativeIntegers


def test_lp_relaxation_stopped_by_a_limit_is_none():
    # Günlük's balanced depth-3 model of tic-tac-toe: its LP takes thousands of simplex iterations (seconds), never
    # done in a millisecond; a time limit raised a RuntimeError, so a caller lost its MIP run with it
    from odtmip.core.data import Dataset
    from odtmip.core.datasets import load
    from odtmip.models import gunluk

    m = gunluk.build_model(Dataset(*load("tic-tac-toe")), gunluk.make_options(3))
    assert lp_relaxation(m, HighsOptions(time_limit=1e-3)) is None
    assert lp_relaxation(m, HighsOptions(extra={"simplex_iteration_limit": 10})) is None


def test_model_statistics_counts_what_reaches_highs():
    m = pyo.ConcreteModel()
    m.b = pyo.Var(range(3), domain=pyo.Binary)
    m.k = pyo.Var(domain=pyo.Integers, bounds=(0, 9))
    m.z = pyo.Var(range(2), bounds=(0, 1))
    m.fixed = pyo.Var(domain=pyo.Binary)
    m.fixed.fix(1)
    m.unused = pyo.Var()
    m.eq = pyo.Constraint(expr=m.b[0] + m.b[1] + m.b[2] == 1)  # 3 nonzeros
    m.ranged = pyo.Constraint(expr=pyo.inequality(0, m.k - m.z[0] + m.fixed, 5))  # one row, 2 nonzeros
    m.le = pyo.Constraint(expr=m.z[1] <= m.b[0])  # 2 nonzeros
    m.constant = pyo.Constraint(expr=m.fixed <= 1)  # no variable left: not a row
    m.obj = pyo.Objective(expr=m.k + m.z[1])
    assert model_statistics(m) == {
        "n_variables": 6,
        "n_binary": 3,
        "n_integer": 1,
        "n_continuous": 2,
        "n_constraints": 3,
        "n_nonzeros": 7,
    }
    assert solve(m).statistics == model_statistics(m)


# ----------------------------------------------------------------------------------------------------
# Threads, options, log, availability


def test_different_thread_counts_in_one_process():
    # Without resetting HiGHS's global scheduler, the second run would end with model status "Not Set".
    for threads in (2, 1, 2, None):
        m, w, p, cap = knapsack(n=20, seed=11)
        run = solve(m, HighsOptions(threads=threads))
        assert run.status is Status.OPTIMAL and run.objective == pytest.approx(knapsack_dp(w, p, cap))


def test_a_run_on_a_handed_over_model_keys_the_scheduler_by_its_own_threads():
    # to_highs leaves HiGHS's threads at 0 (HiGHS chooses): _run resets the scheduler for that count, so a solve with
    # one thread after it resets it again (keyed by a caller's count of 1 instead, that solve ended "Not Set")
    m, w, p, cap = knapsack(n=20, seed=11)
    solve(m, HighsOptions(threads=2))
    h, _ = _highs.to_highs(m)
    _highs._run(_highs._highspy(), h)
    assert h.getModelStatus().name == "kOptimal"
    run = solve(m, HighsOptions(threads=1))
    assert run.status is Status.OPTIMAL and run.objective == pytest.approx(knapsack_dp(w, p, cap))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"extra": {"no_such_option": 1}}, "unknown HiGHS option"),
        ({"extra": {"time_limit": 3}}, "HighsOptions.time_limit"),
        ({"extra": {"output_flag": False}}, "always captured"),
        ({"extra": {"mip_max_nodes": "many"}}, "takes a int value"),
        ({"extra": {"presolve": "sometimes"}}, "rejected option"),
        ({"time_limit": -1}, "time_limit"),
        ({"threads": 0}, "threads"),
        ({"lp_solver": "pdlp"}, "lp_solver"),
        ({"mip_rel_gap": -0.1}, "mip_rel_gap"),
    ],
)
def test_invalid_options_raise(kwargs, message):
    m = knapsack(n=5)[0]
    with pytest.raises(OptionError, match=message):
        solve(m, HighsOptions(**kwargs))


def test_extra_options_reach_highs():
    m, w, p, cap = knapsack(n=15, seed=5)
    options = HighsOptions(extra={"presolve": "off", "mip_heuristic_effort": 0.2}, lp_solver="simplex")
    run = solve(m, options)
    assert run.objective == pytest.approx(knapsack_dp(w, p, cap))
    h, _ = _highs.to_highs(m, options)
    assert h.getOptions().presolve == "off" and h.getOptions().mip_heuristic_effort == 0.2
    assert h.getOptionValue("mip_lp_solver")[1] == "simplex"


@pytest.mark.parametrize("time_limit", [None, 60.0], ids=["in-process", "child-process"])
def test_log_is_captured_and_goes_to_stderr_only_on_request(capfd, time_limit):
    # capfd reads file descriptors 1 and 2, so it also sees what C code writes there directly.
    run = solve(knapsack(n=10)[0], HighsOptions(time_limit=time_limit))
    out, err = capfd.readouterr()
    assert out == "" and err == "" and "Solving report" in run.log
    run = solve(knapsack(n=10)[0], HighsOptions(log=True, time_limit=time_limit))
    out, err = capfd.readouterr()
    assert out == "" and err == run.log and "Solving report" in run.log
    lp_relaxation(knapsack(n=10)[0])
    _highs.to_highs(knapsack(n=10)[0])
    assert capfd.readouterr() == ("", "")


def test_console_output_of_c_code_is_captured(capfd):
    # What C code writes to descriptor 1 inside the context (as highspy 1.16 does with its banner) lands in the
    # recorder's log; Python's buffered output from before the context is written out first, in order.
    import ctypes

    libc = ctypes.CDLL(None)
    recorder = _highs._Recorder(echo=False)
    print("before", end="")
    with _highs.console_captured(recorder):
        with _highs.console_captured():  # nested: one redirection
            libc.write(1, b"from C\n", 7)
    print("after")
    assert capfd.readouterr().out == "beforeafter\n"
    assert recorder.text == "from C\n"


def test_options_and_results_pickle():
    options = HighsOptions(time_limit=1.0, extra={"presolve": "off"})
    assert pickle.loads(pickle.dumps(options)) == options
    run = solve(knapsack(n=8)[0], options)
    assert pickle.loads(pickle.dumps(run)).objective == run.objective


def test_availability(monkeypatch):
    assert highs_available()
    require_highs()
    monkeypatch.setitem(sys.modules, "highspy", None)  # makes `import highspy` fail
    assert not highs_available()
    with pytest.raises(SolverUnavailableError, match="pip install .highspy"):
        require_highs()
    with pytest.raises(SolverUnavailableError):
        solve(knapsack(n=5)[0])


def test_declared_highspy_range_is_the_one_checked_and_installed():
    tomllib = pytest.importorskip("tomllib")
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    declared = [d for d in pyproject["project"]["dependencies"] if d.startswith("highspy")]
    assert declared == [f"highspy{_highs.HIGHSPY_RANGE}"]
    assert ">=" + ".".join(map(str, _highs.OLDEST_HIGHSPY)) in _highs.HIGHSPY_RANGE
    import highspy

    assert _highs._release(highspy) >= _highs.OLDEST_HIGHSPY


def test_too_old_highspy_is_refused(monkeypatch):
    monkeypatch.setattr(_highs, "_release", lambda module: (1, 14, 0))
    with pytest.raises(SolverUnavailableError, match="highspy 1.14.0 is too old"):
        require_highs()


def test_thread_counts_from_different_python_threads():
    # HiGHS's scheduler, built in one Python thread, fails a run in another unless it is reset for it.
    import threading

    def run(threads, out):
        m, w, p, cap = knapsack(n=20, seed=11)
        r = solve(m, HighsOptions(threads=threads))
        out.append(r.status is Status.OPTIMAL and r.objective == pytest.approx(knapsack_dp(w, p, cap)))

    results = []
    run(2, results)
    worker = threading.Thread(target=run, args=(1, results))
    worker.start()
    worker.join()
    run(1, results)
    assert results == [True, True, True]


# ----------------------------------------------------------------------------------------------------
# A run with a time limit goes to a child process, which is stopped when HiGHS overruns the deadline


def test_a_time_limit_runs_highs_in_a_child_with_the_same_answers(monkeypatch):
    children = []
    run_in_child = _highs._run_in_child
    monkeypatch.setattr(_highs, "_run_in_child", lambda *a: children.append(1) or run_in_child(*a))
    m, w, p, cap = knapsack(n=25, seed=3)
    run = solve(m, HighsOptions(time_limit=60, threads=1))
    assert children == [1]
    assert run.status is Status.OPTIMAL and run.objective == knapsack_dp(w, p, cap) == run.bound
    assert pyo.value(m.profit) == run.objective and run.lp_iterations > 0 and run.handoff_seconds > 0
    assert run.trajectory[-1][1:] == (run.objective, run.bound)
    options = HighsOptions(threads=1, seed=0, extra={"mip_max_nodes": 50})  # deterministic: the same search
    ref = solve(multi_knapsack()[0], options)
    run = solve(multi_knapsack()[0], replace(options, time_limit=60))
    assert (run.status, run.stop_reason, run.objective, run.bound, run.nodes) == (
        ref.status, ref.stop_reason, ref.objective, ref.bound, ref.nodes)
    assert len(children) == 2


def _job(model):
    comp = compile_model(model)
    recorder = _highs._Recorder(echo=False)
    items = _highs._checked_options(_highs._highspy(), HighsOptions(threads=1, seed=0), True, recorder)
    return comp, recorder, _highs.Job(comp.arrays(), items)  # no HiGHS time limit: HiGHS would go on


def test_a_child_that_overruns_the_deadline_is_stopped_with_its_best_solution_and_bound():
    # HiGHS gets no time limit here, as if it did not read its clock; only the parent's deadline stops it.
    m, w, cap = multi_knapsack()
    comp, recorder, job = _job(m)
    t0 = time.perf_counter()
    out = _highs._run_in_child(job, recorder, t0 + 1.0)
    assert time.perf_counter() - t0 < 1.0 + _highs.GRACE + 1.0  # run to the end, it takes far longer
    assert out.stopped and out.model_status == "kTimeLimit" and out.x is not None
    x = _highs._feasible_start(comp, out.x)  # a feasible point of the original model, as the callback reported it
    assert x is not None and np.all(w @ x <= cap)
    # HiGHS sums the objective in floating point (2204.0000000000045 for an incumbent worth 2204 on a loaded machine)
    assert out.objective == pytest.approx(comp.cost @ x, rel=1e-12) and out.dual_bound >= out.objective  # maximise
    assert "had not stopped" in recorder.text


def test_a_stopped_child_without_a_solution_keeps_the_start():
    m, w, cap = multi_knapsack()
    comp, recorder, job = _job(m)
    start = np.zeros(len(comp.columns))  # the empty knapsack: feasible, objective 0
    job.start = start
    out = _highs.stopped_outcome(job, None, [(0.5, 0.0, 5000.0, 0), (0.9, 0.0, 4000.0, 3)], 1.0)
    assert out.x is start and out.objective == 0.0 and out.dual_bound == 4000.0 and out.nodes == 3
    assert out.gap == math.inf  # |0 - 4000| / |0|
    job.start = None
    out = _highs.stopped_outcome(job, None, [], 1.0)
    assert out.x is None and out.dual_bound == math.inf and out.objective == -math.inf


def test_a_child_that_fails_raises_with_the_reason():
    m = knapsack(n=5)[0]
    comp, recorder, job = _job(m)
    job.model.a_index = job.model.a_index + 100  # columns that do not exist
    with pytest.raises(RuntimeError, match="HiGHS failed in its child process"):
        _highs._run_in_child(job, recorder, time.perf_counter() + 30)


def test_a_time_limit_switches_off_the_presolve_rule_that_ignores_the_clock():
    hs = _highs._highspy()

    def rule_off(options, mip=True):
        h = _highs._new_highs(hs, options, mip=mip, recorder=_highs._Recorder(echo=False))
        return h.getOptionValue("presolve_rule_off")[1]

    assert rule_off(HighsOptions(time_limit=5)) == _highs.PRESOLVE_ENUMERATION == 1 << 16
    assert rule_off(HighsOptions()) == 0  # no limit: HiGHS's full presolve
    assert rule_off(HighsOptions(time_limit=5), mip=False) == 0  # an LP has no enumeration
    assert rule_off(HighsOptions(time_limit=5, extra={"presolve_rule_off": 0})) == 0  # the user's choice wins
