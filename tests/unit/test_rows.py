"""LinearRows: constraint families given as arrays behave as ordinary Pyomo constraints and reach HiGHS unchanged."""

import io
import pickle

import numpy as np
import pyomo.environ as pyo
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odtmip.models import _highs
from odtmip.models._compile import compile_model
from odtmip.models.rows import LinearRows, RowData, var_members
from tests.unit.test_highs_reader import assert_same_compile


def small_model():
    """x[0..2] binary, y[a, b] in [0, 4]; rows 'ordered' (array form) and an ordinary constraint."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, 2)
    m.x = pyo.Var(m.I, domain=pyo.Binary)
    m.y = pyo.Var(["a", "b"], bounds=(0, 4))
    # ordered[0]:  x[0] - x[1] <= 0;  ordered[1]: -1 <= 2 x[1] - x[2] + y[b] <= 3;  ordered[2]: x[0] + y[a] == 1
    m.ordered = LinearRows(m.I, keys=([0, 1, 2],), variables=[m.x, m.y],
                           rows=[0, 0, 1, 1, 1, 2, 2], cols=[0, 1, 1, 2, 4, 0, 3],
                           coefs=[1, -1, 2, -1, 1, 1, 1], lower=[-np.inf, -1, 1], upper=[0, 3, 1])
    m.budget = pyo.Constraint(expr=m.y["a"] + m.y["b"] <= 3)
    m.obj = pyo.Objective(expr=m.x[0] + m.x[1] + m.x[2] - m.y["b"], sense=pyo.maximize)
    return m


def plain_twin():
    """small_model() written with ordinary Pyomo constraints."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, 2)
    m.x = pyo.Var(m.I, domain=pyo.Binary)
    m.y = pyo.Var(["a", "b"], bounds=(0, 4))
    m.ordered = pyo.Constraint(m.I, rule=lambda m, i: [
        m.x[0] - m.x[1] <= 0, pyo.inequality(-1, 2 * m.x[1] - m.x[2] + m.y["b"], 3), m.x[0] + m.y["a"] == 1][i])
    m.budget = pyo.Constraint(expr=m.y["a"] + m.y["b"] <= 3)
    m.obj = pyo.Objective(expr=m.x[0] + m.x[1] + m.x[2] - m.y["b"], sense=pyo.maximize)
    return m


def test_rows_read_as_ordinary_constraints():
    m = small_model()
    assert len(m.ordered) == 3 and list(m.ordered.keys()) == [0, 1, 2]
    assert str(m.ordered[0].expr) == "x[0] - x[1]  <=  0.0"
    assert str(m.ordered[1].body) == "2.0*x[1] - x[2] + y[b]" and (m.ordered[1].lb, m.ordered[1].ub) == (-1, 3)
    assert m.ordered[2].equality and not m.ordered[1].equality
    for v, value in zip(var_members(m.x) + var_members(m.y), [1, 0, 1, 0.5, 2], strict=True):
        v.set_value(value)
    assert [pyo.value(m.ordered[i].body) for i in range(3)] == [1, 1, 1.5]
    out = io.StringIO()
    m.ordered.pprint(ostream=out)
    assert "2.0*x[1] - x[2] + y[b]" in out.getvalue()


def test_same_arrays_as_the_compiler_and_as_ordinary_constraints():
    m, twin = small_model(), plain_twin()
    assert_same_compile(m)
    ours, theirs = compile_model(m), compile_model(twin)
    for name in ("cost", "col_lower", "col_upper", "integer", "row_lower", "row_upper", "a_start", "a_index",
                 "a_value"):
        np.testing.assert_array_equal(getattr(ours, name), getattr(theirs, name), err_msg=name)
    assert _highs.lp_relaxation(m) == pytest.approx(_highs.lp_relaxation(twin))


def test_untouched_rows_are_never_made():
    m = small_model()
    _highs.solve(m)
    assert m.ordered.__dict__["_row_objects"] is None  # handed to HiGHS as arrays
    m.ordered[1]  # the first look makes them
    assert isinstance(m.ordered.__dict__["_row_objects"][1], RowData)
    assert_same_compile(m)


def test_fixed_variables_move_to_the_bounds():
    m = small_model()
    m.x[1].fix(1)
    m.y["b"].fix(2.5)
    assert_same_compile(m)
    m.x[0].fix(0)
    m.y["a"].fix(0)  # ordered[2] becomes 0 == 1: infeasible before HiGHS runs
    reason = compile_model(m).infeasible_reason
    assert reason is not None and "ordered[2]" in reason


def test_deactivated_deleted_and_replaced_rows():
    m = small_model()
    m.ordered[0].deactivate()
    del m.ordered[2]
    m.ordered[1].set_value(m.x[1] + m.y["a"] >= 1)  # now an ordinary row
    assert not isinstance(m.ordered[1], RowData)
    assert str(m.ordered[1].expr) == "1  <=  x[1] + y[a]"
    assert not m.ordered.intact()
    assert_same_compile(m)
    twin = plain_twin()
    twin.ordered[0].deactivate()
    del twin.ordered[2]
    twin.ordered[1].set_value(twin.x[1] + twin.y["a"] >= 1)
    assert _highs.lp_relaxation(m) == pytest.approx(_highs.lp_relaxation(twin))
    m.ordered.deactivate()  # the whole family
    assert compile_model(m).statistics["n_constraints"] == 1


def test_clone_pickle_and_lp_file(tmp_path):
    m = small_model()
    value = _highs.solve(m).objective
    for copy in (m.clone(), pickle.loads(pickle.dumps(m))):
        assert copy.ordered.variables[0] is copy.x
        assert str(copy.ordered[1].body) == str(m.ordered[1].body)
        assert _highs.solve(copy).objective == pytest.approx(value)
    m.write(str(tmp_path / "m.lp"), io_options={"symbolic_solver_labels": True})
    text = (tmp_path / "m.lp").read_text()
    assert "ordered(1)" in text and "y(b)" in text


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"rows": [0, 5]}, "row numbers"),
    ({"rows": [-1, 0]}, "row numbers"),
    ({"cols": [0, 9]}, "column numbers"),
    ({"coefs": [1.0, np.nan]}, "finite"),
    ({"lower": 2, "upper": 1}, "lower <= upper"),
    ({"upper": np.inf}, "finite lower or upper"),
    ({"rows": [0.0, 1.0]}, "integer"),
    ({"keys": ([0, 1], [0])}, "keys"),
    ({"coefs": [1.0]}, "same length"),
])
def test_bad_arrays_are_named(kwargs, message):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2))
    args = dict(keys=([0, 1],), variables=[m.x], rows=[0, 1], cols=[0, 1], coefs=[1.0, 1.0], upper=1)
    with pytest.raises(ValueError, match=message):
        LinearRows(**(args | kwargs))


def test_variables_must_be_components_and_keys_distinct():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(2))
    with pytest.raises(TypeError, match="Var components"):
        LinearRows(keys=([0],), variables=[m.x[0]], rows=[0], cols=[0], coefs=[1.0])
    m.twice = LinearRows(keys=([0, 0],), variables=[m.x], rows=[0, 1], cols=[0, 1], coefs=[1.0, 1.0], upper=1)
    with pytest.raises(ValueError, match="not distinct"):
        len(m.twice)


def test_variables_that_change_their_members_are_caught():
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(6), dense=False)
    m.x[0], m.x[1]  # noqa: B018  (made in order)
    m.r = LinearRows(keys=([0],), variables=[m.x], rows=[0, 0], cols=[0, 1], coefs=[1.0, 1.0], upper=1)
    m.o = pyo.Objective(expr=m.x[0])
    m.x[5]  # noqa: B018  (a new member)
    with pytest.raises(ValueError, match="had 2 members"):
        compile_model(m)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.data())
def test_random_families_match_ordinary_constraints(data):
    """Any family (duplicate terms, cancelling terms, empty rows, unsorted rows) equals its rule-based twin."""
    n_vars = data.draw(st.integers(1, 5))
    n_rows = data.draw(st.integers(1, 5))
    terms = data.draw(st.lists(st.tuples(st.integers(0, n_rows - 1), st.integers(0, n_vars - 1),
                                         st.sampled_from([-2.0, -1.0, 0.5, 1.0, 3.0])), max_size=12))
    bounds = data.draw(st.lists(st.sampled_from([(-np.inf, 0.0), (-np.inf, 2.0), (-3.0, 0.0), (-3.0, 2.0), (0.0, 0.0),
                                                 (0.0, np.inf), (-3.0, np.inf)]), min_size=n_rows, max_size=n_rows))
    rows, cols, coefs = (list(t) for t in zip(*terms, strict=True)) if terms else ([], [], [])

    def build(as_arrays: bool):
        m = pyo.ConcreteModel()
        m.x = pyo.Var(range(n_vars), bounds=(-1, 1))
        lower, upper = (np.array(b) for b in zip(*bounds, strict=True))
        if as_arrays:
            m.r = LinearRows(range(n_rows), keys=(np.arange(n_rows),), variables=[m.x], rows=rows, cols=cols,
                             coefs=coefs, lower=lower, upper=upper)
        else:
            def rule(m, r):
                body = sum((a * m.x[j] for i, j, a in terms if i == r), start=0 * m.x[0])
                lo, up = (None if not np.isfinite(b) else float(b) for b in (lower[r], upper[r]))
                return (lo, body, up)
            m.r = pyo.Constraint(range(n_rows), rule=rule)
        m.o = pyo.Objective(expr=sum(m.x.values()))
        return m

    ours, twin = build(True), build(False)
    assert_same_compile(ours)
    a, b = compile_model(ours), compile_model(twin)
    assert a.infeasible_reason is None or b.infeasible_reason is not None
    if a.infeasible_reason is None:
        for name in ("row_lower", "row_upper", "a_start", "a_index", "a_value", "cost"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.data())
def test_random_interleaved_families_match_the_compiler(data):
    """Families and ordinary rows in any order, some in a sub-block, sharing components with fixed members: the same
    rows, columns (in the same order), bounds and objective as the compiler reading the families' expressions."""
    m = pyo.ConcreteModel()
    m.b = pyo.Block()
    variables = []
    for k in range(data.draw(st.integers(1, 3))):
        var = pyo.Var(range(data.draw(st.integers(1, 3))), bounds=(-1, 2), domain=data.draw(
            st.sampled_from([pyo.Reals, pyo.Integers])))
        m.add_component(f"v{k}", var)
        variables.append(var)
        for x in var.values():
            fixed = data.draw(st.sampled_from([None, None, None, 0, 1, -1]))
            if fixed is not None:
                x.fix(fixed)
    members = [x for var in variables for x in var.values()]
    for k in range(data.draw(st.integers(1, 5))):
        block = data.draw(st.sampled_from([m, m, m.b]))
        if data.draw(st.booleans()):
            used = data.draw(st.lists(st.sampled_from(variables), min_size=1, max_size=3, unique_by=id))
            size = sum(len(var) for var in used)
            n_rows = data.draw(st.integers(1, 3))
            terms = data.draw(st.lists(st.tuples(st.integers(0, n_rows - 1), st.integers(0, size - 1),
                                                 st.sampled_from([-1.0, 1.0, 2.0])), max_size=8))
            rows, cols, coefs = (list(t) for t in zip(*terms, strict=True)) if terms else ([], [], [])
            upper = data.draw(st.lists(st.sampled_from([0.0, 5.0, np.inf]), min_size=n_rows, max_size=n_rows))
            lower = [-5.0 if u == np.inf else data.draw(st.sampled_from([-np.inf, -5.0, u])) for u in upper]
            block.add_component(f"f{k}", LinearRows(range(n_rows), keys=(np.arange(n_rows),), variables=used,
                                                    rows=rows, cols=cols, coefs=coefs, lower=lower, upper=upper))
        else:
            x, y = data.draw(st.sampled_from(members)), data.draw(st.sampled_from(members))
            a = 2 if x is y else data.draw(st.sampled_from([-1, 1, 2]))  # no cancelling terms (see _compile)
            block.add_component(f"c{k}", pyo.Constraint(expr=pyo.inequality(-20, x + a * y, 20)))
    if data.draw(st.booleans()):
        m.o = pyo.Objective(expr=sum(data.draw(st.sampled_from(variables)).values()))
    ours, reference = compile_model(m), compile_model(m, arrays=False)
    if ours.infeasible_reason is None or reference.infeasible_reason is None:  # several rows may be violated
        assert_same_compile(m)
