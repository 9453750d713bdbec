"""The direct expression reader of the HiGHS hand-off gives exactly the arrays of Pyomo's standard-form compiler,
on every formulation's model variants and on hand-made models with fixed variables, constants and ranges."""

import numpy as np
import pandas as pd
import pyomo.environ as pyo
import pytest
import scipy.sparse as sp

from odtmip import Dataset
from odtmip.models import _highs, binoct, gunluk, oct

ARRAYS = ("cost", "col_lower", "col_upper", "is_int", "row_lower", "row_upper", "a_start", "a_index", "a_value")


def _without_empty_rows(c):
    """The compiler may keep rows that lost every variable to fixing; the reader drops them (they are checked)."""
    if c.infeasible_reason is not None or not len(c.row_lower):
        return c
    A = sp.csr_array((c.a_value, c.a_index, c.a_start), shape=(len(c.row_lower), len(c.columns)))
    keep = np.diff(A.indptr) > 0
    assert ((c.row_lower[~keep] <= 0) & (c.row_upper[~keep] >= 0)).all()
    B = A[keep]
    B.sort_indices()
    c.row_lower, c.row_upper = c.row_lower[keep], c.row_upper[keep]
    c.a_start, c.a_index, c.a_value = B.indptr.astype(np.int32), B.indices.astype(np.int32), B.data
    c.statistics = dict(c.statistics, n_constraints=int(keep.sum()))
    return c


def assert_same_compile(m):
    ours, pyomos = _highs._compile(m, "auto"), _without_empty_rows(_highs._compile(m, "pyomo"))
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
    assert _highs._compile(m, "auto").infeasible_reason is not None
