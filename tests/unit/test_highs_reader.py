"""The compile of the HiGHS hand-off (LinearRows families as arrays, the rest through Pyomo's standard-form compiler)
gives exactly the arrays of the compiler on the whole model, on every formulation's model variants and on hand-made
models with fixed variables, constants, ranges and families in sub-blocks."""

import numpy as np
import pandas as pd
import pyomo.environ as pyo
import pytest

from odtmip import Dataset
from odtmip.models import binoct, gunluk, oct
from odtmip.models._compile import compile_model
from odtmip.models.rows import LinearRows

ARRAYS = ("cost", "col_lower", "col_upper", "integer", "row_lower", "row_upper", "a_start", "a_index", "a_value")


def assert_same_compile(m):
    """The families as arrays and through the compiler, row by row: the same rows, columns, bounds and objective."""
    ours, pyomos = compile_model(m), compile_model(m, arrays=False)
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(ours, name), getattr(pyomos, name), err_msg=name)
    assert [id(v) for v in ours.columns] == [id(v) for v in pyomos.columns]
    assert (ours.offset, ours.maximize, ours.statistics, ours.infeasible_reason) == (
        pyomos.offset, pyomos.maximize, pyomos.statistics, pyomos.infeasible_reason)


@pytest.fixture(scope="module")
def mixed():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.integers(0, 5, 60),
                      "c": pd.Categorical(rng.choice(list("xyz"), 60)), "d": rng.integers(0, 2, 60)})
    return Dataset(X, rng.integers(0, 2, 60), sample_weight=rng.uniform(0.5, 2, 60), n_buckets=4)


@pytest.mark.parametrize("topology", ["depth2", "depth2.5", "depth3", "imbalanced"])
@pytest.mark.parametrize("options", [{}, {"strengthen": False}, {"anchors": False, "order_symmetry": True},
                                     {"delete_variables": False}, {"relax": False}, {"max_card": 1},
                                     {"min_specificity": 0.8}, {"min_sensitivity": 0.7}, {"class_weight": 2.5}])
def test_gunluk_variants(mixed, topology, options):
    assert_same_compile(gunluk.build_model(mixed, gunluk.GunlukOptions(topology=topology, **options)))


@pytest.mark.parametrize("leaf_penalty", [0.0, 0.05])
def test_binoct(mixed, leaf_penalty):
    assert_same_compile(binoct.build_model(mixed, 2, binoct.BinOCTOptions(leaf_penalty=leaf_penalty)))


@pytest.mark.parametrize("options", [{}, {"alpha": 0.1, "min_leaf": 3}])
def test_oct(mixed, options):
    assert_same_compile(oct.build_model(mixed, 2, oct.OCTOptions(**options)))


def test_oct_h():
    rng = np.random.default_rng(1)
    data = Dataset(rng.normal(size=(30, 3)), rng.integers(0, 2, 30))
    assert_same_compile(oct.build_model(data, 1, oct.OCTOptions(hyperplanes=True)))


def test_hand_made_model_with_fixed_variables_ranges_and_constants():
    m = pyo.ConcreteModel()
    m.x = pyo.Var([1, 2, 3], bounds=(-2, 5), domain=pyo.Integers)
    m.y = pyo.Var()
    m.p = pyo.Param(initialize=3, mutable=True)
    m.x[2].fix(1)
    m.e = pyo.Expression(expr=2 * (m.x[1] + m.y) - m.x[2])
    m.c1 = pyo.Constraint(expr=pyo.inequality(-1, m.e + m.p * m.x[3], 7))
    m.c2 = pyo.Constraint(expr=3 <= m.x[1] - m.x[3] / 2)
    m.c3 = pyo.Constraint(expr=m.x[1] + m.y == m.x[3] - 1)
    m.c4 = pyo.Constraint(expr=m.x[2] <= 4)  # only a fixed variable: a satisfied constant row
    m.c5 = pyo.Constraint(expr=m.y + m.x[1] - m.y <= 2 * m.p)  # y cancels
    m.c6 = pyo.Constraint(expr=-(m.x[1] + m.x[1]) >= -8)
    m.o = pyo.Objective(expr=m.x[1] - 2 * m.y + 4 + m.e, sense=pyo.minimize)
    assert_same_compile(m)
    m.c7 = pyo.Constraint(expr=m.x[2] >= 4)  # violated constant row: infeasible before HiGHS runs
    assert "'c7'" in compile_model(m).infeasible_reason
    del m.c7
    m.k = pyo.Var(initialize=1)
    m.k.fix()
    m.c8 = pyo.Constraint(expr=m.k >= 4)  # k is numbered nowhere: the compiler itself finds the row violated
    assert "'c8'" in compile_model(m).infeasible_reason


def interleaved():
    """Families between ordinary rows and in a sub-block, using components before, after and only in them, with
    fixed members, a member used only by a family, a row left constant by fixing and terms that cancel."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), bounds=(0, 1))
    m.u = pyo.Var(range(4), domain=pyo.Binary)
    m.z = pyo.Var(["a", "b", "c"], bounds=(-1, 2))
    m.w = pyo.Var(range(2), domain=pyo.Integers, bounds=(0, 5))
    m.u[1].fix(1)
    m.z["b"].fix(0.5)
    m.c1 = pyo.Constraint(expr=m.x[0] + m.x[1] <= 1)
    # u first used here (u[3] nowhere else), z by a fixed member only; in row 1 x[1] - x[1] cancels, row 2 is
    # constant (0.5 <= 1)
    m.f1 = LinearRows(range(3), keys=([0, 1, 2],), variables=[m.z, m.u, m.x],
                      rows=[0, 0, 0, 1, 1, 1, 2], cols=[4, 6, 1, 3, 8, 8, 1], coefs=[1, 2, 1, -1, 1, -1, 1],
                      lower=[-np.inf, 0, -np.inf], upper=[3, 0, 1])
    m.c2 = pyo.Constraint(expr=pyo.inequality(0, m.u[0] + m.z["c"] - m.w[1], 4))  # z, w first used here
    m.b = pyo.Block()
    m.b.f2 = LinearRows(range(2), keys=([0, 1],), variables=[m.w, m.z], rows=[0, 0, 1], cols=[0, 2, 1],
                        coefs=[3, -1, 1], lower=[1, 0], upper=[1, 5])
    m.b.c3 = pyo.Constraint(expr=m.z["a"] + m.x[2] >= -1)
    m.c4 = pyo.Constraint(expr=m.u[2] == m.x[2])
    m.o = pyo.Objective(expr=m.x[1] + m.u[0], sense=pyo.maximize)
    return m


def test_families_take_their_place_among_the_rows_and_columns():
    m = interleaved()
    comp = compile_model(m)
    assert m.f1.__dict__["_row_objects"] is None and m.b.f2.__dict__["_row_objects"] is None  # read as arrays
    # whole components by first use: x (objective), u (f1), z and w (c2; z's use in f1 is by a fixed member)
    assert [v.name for v in comp.columns] == ["x[0]", "x[1]", "x[2]", "u[0]", "u[2]", "u[3]", "z[a]", "z[c]",
                                              "w[0]", "w[1]"]
    assert comp.statistics["n_constraints"] == 8  # c1, f1[0], f1[1], c2, c4, f2 (2 rows), c3
    assert_same_compile(m)


def test_families_are_restored_when_the_compiler_fails():
    m = interleaved()
    m.c5 = pyo.Constraint(expr=m.x[0] * m.x[1] <= 1)
    with pytest.raises(ValueError, match="nonlinear"):
        compile_model(m)
    assert m.f1.active and m.b.f2.active and m.f1.__dict__["_row_objects"] is None
    del m.c5
    assert_same_compile(m)
