"""Linear Pyomo model -> arrays: the model as HiGHS will see it, compiled without touching ``highspy``.

:func:`compile_model` turns a linear ``pyo.ConcreteModel`` with at most one objective into a :class:`_Compiled`
record: the matrix row-wise (CSR), row and column bounds, integrality, the objective with its sense and constant,
and the column <-> variable map. :mod:`odtmip.models._highs` hands the record to HiGHS and runs it;
:func:`model_statistics` reports its size.

How the model is read
---------------------
Two sources, one matrix:

* intact :class:`odtmip.models.rows.LinearRows` families (none of their rows deleted, deactivated or given its own
  expression) are taken as the arrays they are, without making any expression (:func:`_array_rows`);
* everything else, the objective included, goes through Pyomo's own ``LinearStandardFormCompiler``
  (``pyomo.repn.plugins.standard_form``, needs scipy; :func:`_standard_form`), with the families deactivated
  meanwhile (:func:`_set_aside`, undone even on error).

The result is the compiler's on the whole model: the same rows in the same order (each family in its place among
the constraints, a ranged row once), the same bounds, objective and integrality, and the columns in the order the
compiler numbers them, i.e. whole ``Var`` components in the order of their first use by a free member (objective
first, then the rows), each in its own order (:func:`_with_families`). Fixed variables are constants and get no
column, nor do variables used nowhere; rows left without a variable are dropped when satisfied, and a violated
one makes the model infeasible before HiGHS runs, named by its constraint (:func:`_assemble`). Where the
compiler's numbering hinges on terms that leave no trace, the column order may differ from the compiler's: a
component whose first use in what the compiler reads is a term that cancels (``x - x``) is placed by its first use
that survives, and a family's term with coefficient 0 numbers its component (as Pyomo 6.10.1's compiler does in a
sum; 6.10.0's does not).

Why the compiler and not a walker of our own: since the per-sample families became ``LinearRows``, only the
objective and a few hundred rows are left for it, and Pyomo's own compiler reads them with Pyomo's semantics by
construction (named expressions, mutable parameters, nonlinear terms and unknown components refused), for a few
hundredths of a second more than the hand-written expression walker it replaced.

Cost on odtmip's Günlük depth-3 model at N = 10 000 (100 317 rows, 1.1 M nonzeros; the families are all but 317
rows), CPU seconds in a warm process: 0.06 s in all (the walker: 0.034 s), of which the compiler on the objective
(40 000 terms) and the 317 other rows 0.037 s, the families and numbering the columns 0.007 s, assembling the
matrix 0.006 s, bounds and integrality 0.008 s; :mod:`odtmip.models._highs` has the whole hand-off. With every
row an ordinary ``Constraint`` rule instead, the compiler takes 1.9 s. The column bounds are resolved once per
distinct (bounds, domain) setting (:func:`_column_bounds`), and Python's cyclic garbage collector is paused while
a model is read (:func:`paused_gc`).
"""

from __future__ import annotations

import contextlib
import gc
import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import cached_property
from itertools import compress
from operator import attrgetter, itemgetter
from typing import NamedTuple

import numpy as np

from odtmip.core.exceptions import SolverUnavailableError
from odtmip.models._highs_run import Arrays

__all__ = ["compile_model", "model_statistics", "paused_gc", "require_scipy"]

_STAT_KEYS = ("n_variables", "n_binary", "n_integer", "n_continuous", "n_constraints", "n_nonzeros")


def require_scipy() -> None:
    """Raise :class:`~odtmip.core.exceptions.SolverUnavailableError` when scipy (which the compiler needs) is
    missing."""
    try:
        import scipy.sparse  # noqa: F401
    except ImportError as exc:
        raise SolverUnavailableError(
            "scipy is not available; odtmip needs it to pass models to HiGHS: `pip install scipy`."
        ) from exc


@contextlib.contextmanager
def paused_gc():
    """Pause Python's cyclic garbage collector while a large model is built or read; restored on exit.

    A Pyomo model is millions of small objects. While they are being created, the collector's thresholds trip
    again and again and each full collection rescans everything alive. Building the Günlük depth-3 model at
    N = 10 000 took 2.1 s of CPU with the collector running and 1.1-1.3 s with it paused. Nothing leaks: objects
    in reference cycles are collected once the collector runs again. Nested use is fine.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass
class _Compiled(Arrays):
    """A Pyomo model as HiGHS sees it: its arrays (:class:`~odtmip.models._highs_run.Arrays`, the matrix row-wise)
    plus the column <-> variable map and the model's statistics."""

    columns: list  # columns[j] is the Pyomo VarData of HiGHS column j
    statistics: dict
    infeasible_reason: str | None = None  # set when a constant constraint is violated

    @cached_property
    def col_of(self) -> dict:
        """id(VarData) -> column index (made when first asked for: only warm starts need it)."""
        return dict(zip(map(id, self.columns), range(len(self.columns)), strict=True))

    def arrays(self) -> Arrays:
        """The arrays alone, without Pyomo's objects: what a HiGHS run in a child process is sent."""
        return Arrays(**{f.name: getattr(self, f.name) for f in fields(Arrays)})


class _Block(NamedTuple):
    """Consecutive rows as arrays: the matrix in CSR (``indptr`` from 0) and the bounds."""

    indptr: np.ndarray
    columns: np.ndarray
    values: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    row_name: Callable[[int], str]  # the name of the constraint of the block's row r


def model_statistics(model) -> dict:
    """Size of a linear Pyomo model as handed to HiGHS (before HiGHS's own presolve).

    Fixed variables, variables that appear in no constraint and no objective, and constant constraints are
    not counted (they never reach HiGHS). A ranged constraint ``lb <= expr <= ub`` counts once.

    Returns
    -------
    dict
        ``n_variables``, ``n_binary`` (integer with bounds within [0, 1]), ``n_integer`` (other integer),
        ``n_continuous``, ``n_constraints`` (rows) and ``n_nonzeros`` (of the constraint matrix). All zero
        when a constant constraint is violated (the model is then infeasible).
    """
    return dict(compile_model(model).statistics)


def compile_model(model, arrays: bool = True) -> _Compiled:
    """Compile a linear Pyomo model to arrays (the matrix row-wise); see the module docstring.

    Parameters
    ----------
    model : pyo.ConcreteModel
        A linear model with at most one active objective.
    arrays : bool, default=True
        Take intact :class:`~odtmip.models.rows.LinearRows` families as arrays. ``False`` hands them to the
        compiler too, row by row through their expressions: the reference the tests compare with.

    Raises
    ------
    ValueError
        More than one active objective, a discrete domain that is not integer, a family whose variables
        changed, or what Pyomo's compiler raises (e.g. a nonlinear term or an unknown component type).
    """
    require_scipy()
    import pyomo.environ as pyo
    from pyomo.core.base import SortComponents

    from odtmip.models.rows import LinearRows

    objectives = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objectives) > 1:
        raise ValueError(f"model {model.name!r} has {len(objectives)} active objectives; HiGHS needs one")
    maximize = bool(objectives) and objectives[0].sense == pyo.maximize
    constraints = list(model.component_objects(pyo.Constraint, active=True, sort=SortComponents.UNSORTED))
    families = [c for c in constraints if isinstance(c, LinearRows) and c.intact()] if arrays else []
    with paused_gc():
        with _set_aside(families):
            part = _standard_form(model)
        if not isinstance(part, str):
            columns, cost, offset, A, row_lower, row_upper, owners = part
            if families:
                columns, cost, blocks = _with_families(columns, cost, A, row_lower, row_upper, owners, families,
                                                       constraints)
            else:
                blocks = [_Block(A.indptr, A.indices, A.data, row_lower, row_upper, lambda r: owners[r].name)]
            part = _assemble(columns, cost, blocks)
    if isinstance(part, str):  # a violated constant constraint
        empty = np.zeros(0)
        return _Compiled(
            cost=empty, offset=0.0, maximize=maximize, col_lower=empty, col_upper=empty, integer=np.zeros(0, bool),
            row_lower=empty, row_upper=empty, a_start=np.zeros(1, np.int32), a_index=np.zeros(0, np.int32),
            a_value=empty, columns=[], statistics=dict.fromkeys(_STAT_KEYS, 0), infeasible_reason=part,
        )
    columns, cost, A, row_lower, row_upper = part
    n = len(columns)
    lb, ub, is_int = _column_bounds(columns)
    binary = is_int & (lb >= 0) & (ub <= 1)
    stats = {
        "n_variables": n,
        "n_binary": int(binary.sum()),
        "n_integer": int((is_int & ~binary).sum()),
        "n_continuous": int((~is_int).sum()),
        "n_constraints": len(row_lower),
        "n_nonzeros": int(A.nnz),
    }
    return _Compiled(
        columns=columns,
        cost=cost,
        offset=offset,
        maximize=maximize,
        col_lower=lb,
        col_upper=ub,
        integer=is_int,
        row_lower=row_lower,
        row_upper=row_upper,
        a_start=np.asarray(A.indptr, dtype=np.int32),
        a_index=np.asarray(A.indices, dtype=np.int32),
        a_value=np.asarray(A.data, dtype=float),
        statistics=stats,
    )


@contextlib.contextmanager
def _set_aside(families):
    """Deactivate the families while the compiler reads the rest of the model; reactivated on exit, even on error.

    Only the components' own flag: their ``deactivate()`` would also make and deactivate every row.
    """
    for family in families:
        family._active = False
    try:
        yield
    finally:
        for family in families:
            family._active = True


def _standard_form(model):
    """(columns, cost, offset, CSR matrix, row_lower, row_upper, the constraint of each row) from Pyomo's
    standard-form compiler, or the compiler's message when a constant constraint is violated."""
    from pyomo.common.errors import InfeasibleConstraintException
    from pyomo.repn.plugins import standard_form
    from pyomo.repn.util import FileDeterminism

    # Pyomo 6.10.0 raises an undefined name there (a NameError) instead of this exception; 6.10.1 fixed it.
    vars(standard_form).setdefault("InfeasibleError", InfeasibleConstraintException)
    try:
        # NONE skips Pyomo's re-sorting of indices (27 % of the compile time). The column and row order
        # is then the construction order of the model's components, which is deterministic.
        repn = standard_form.LinearStandardFormCompiler().write(
            model, mixed_form=True, set_sense=None, file_determinism=FileDeterminism.NONE
        )
    except InfeasibleConstraintException as exc:
        return str(exc)

    # Rows. mixed_form gives one row per constraint, except a ranged constraint (lb < body < ub), which
    # comes as two consecutive rows (<= ub, then >= lb) with the same coefficients: merge them into one.
    A = repn.A.tocsr()
    owners = [row.constraint for row in repn.rows]
    kind = np.fromiter((r.bound_type for r in repn.rows), dtype=np.int8, count=len(repn.rows))
    rhs = np.asarray(repn.rhs, dtype=float)
    row_lower = np.where(kind == 1, -math.inf, rhs)  # bound_type 0: ==, 1: <=, -1: >=
    row_upper = np.where(kind == -1, math.inf, rhs)
    pair = [k for k in np.flatnonzero((kind[:-1] == 1) & (kind[1:] == -1)).tolist() if owners[k] is owners[k + 1]]
    if pair:
        pair = np.asarray(pair)
        row_lower[pair] = rhs[pair + 1]
        keep = np.ones(len(kind), dtype=bool)
        keep[pair + 1] = False
        A, row_lower, row_upper = A[keep], row_lower[keep], row_upper[keep]
        owners = list(compress(owners, keep.tolist()))
    n = len(repn.columns)
    cost = repn.c.toarray()[0].astype(float) if repn.c.shape[0] else np.zeros(n)
    offset = float(repn.c_offset[0]) if len(repn.c_offset) else 0.0
    return repn.columns, cost, offset, A, row_lower, row_upper, owners


def _with_families(columns_c, cost_c, A, row_lower, row_upper, owners, families, constraints):
    """Put the families' rows among the compiler's and number the columns of both as the compiler would have.

    ``columns_c``, ``cost_c``, ``A`` ... ``owners`` are the compiler's reading of the model without the families;
    ``constraints`` are the model's active constraint components in the compiler's order. Returns (columns, cost,
    row blocks in row order), the blocks' columns numbered as ``columns``: whole ``Var`` components in the order
    of their first use by a free member (the index of that term in the objective-then-rows sequence), the members
    of a component that a family uses all numbered (those used nowhere are dropped later).
    """
    from odtmip.models.rows import var_members

    n_c = len(columns_c)
    # Where each family goes: before the first compiler row of a later component.
    rank = {id(c): k for k, c in enumerate(constraints)}
    row_rank = np.fromiter((rank[id(con.parent_component())] for con in owners), np.int64, len(owners))
    at = np.searchsorted(row_rank, [rank[id(f)] for f in families]).tolist()
    sizes = [len(f.indices) for f in families]
    shift = np.zeros(len(owners) + 1, dtype=np.int64)  # terms of the families placed before compiler row k
    np.add.at(shift, at, sizes)
    shift = np.cumsum(shift)[:-1]
    family_start = [A.indptr[p] + s for p, s in zip(at, np.cumsum([0, *sizes[:-1]]).tolist(), strict=True)]

    # First use of every compiler column, then of its component (a run of consecutive columns); the running
    # minimum from the end keeps the compiler's order among its own components whatever cancelled.
    first = np.full(n_c, np.iinfo(np.int64).max)
    np.minimum.at(first, A.indices, np.arange(A.nnz) + np.repeat(shift, np.diff(A.indptr)))
    in_objective = np.flatnonzero(cost_c)
    first[in_objective] = in_objective - n_c  # the objective comes first
    runs = list(_runs(columns_c))
    run_first = np.minimum.accumulate(np.minimum.reduceat(first, [a for a, _, _ in runs])[::-1])[::-1] if runs else []
    groups: dict[int, list] = {}  # id(Var component) -> [component, first use, compiler runs]
    for (a, b, var), key in zip(runs, np.asarray(run_first).tolist(), strict=True):
        group = groups.setdefault(id(var), [var, key, []])
        group[1] = min(group[1], key)
        group[2].append((a, b))
    members: dict[int, tuple[list, np.ndarray]] = {}  # id(Var component) -> (members, fixed?)
    for family, start in zip(families, family_start, strict=True):
        family.check_variables()
        for var in family.variables:
            if id(var) not in members:
                if var.is_reference():
                    raise ValueError(f"{family.name}: variables must be Var components, not references ({var.name})")
                got = var_members(var)
                members[id(var)] = got, np.array(list(map(attrgetter("_fixed"), got)), dtype=bool)
        fixed = np.concatenate([members[id(var)][1] for var in family.variables])
        for var, t in zip(family.variables, _first_uses(family, fixed).tolist(), strict=True):
            if t >= 0:
                group = groups.setdefault(id(var), [var, start + t, []])
                group[1] = min(group[1], start + t)

    # Number the columns: components by first use; a family's component with all its free members.
    columns: list = []
    slot_c = np.empty(n_c, dtype=np.int64)  # the column of each compiler column
    slots: dict[int, np.ndarray] = {}  # id(Var component of a family) -> the column of each member, -1: none
    for var, _, spans in sorted(groups.values(), key=itemgetter(1)):
        if id(var) in members:
            got, fixed = members[id(var)]
            free = ~fixed
            slots[id(var)] = np.where(free, len(columns) + np.cumsum(free) - 1, -1)
            new = got if free.all() else list(compress(got, free.tolist()))
            for a, b in spans:  # the compiler's columns are some of these, in the same order
                if b - a == len(new):
                    slot_c[a:b] = np.arange(len(columns), len(columns) + b - a)
                else:
                    at_of = dict(zip(map(id, new), range(len(columns), len(columns) + len(new)), strict=True))
                    slot_c[a:b] = [at_of[id(v)] for v in columns_c[a:b]]
            columns.extend(new)
        else:
            for a, b in spans:
                slot_c[a:b] = np.arange(len(columns), len(columns) + b - a)
                columns.extend(columns_c[a:b])
    cost = np.zeros(len(columns))
    cost[slot_c] = cost_c

    # The blocks in row order.
    blocks = []
    for family, p, q in zip([*families, None], [0, *at], [*at, len(owners)], strict=True):
        if q > p:  # compiler rows p .. q - 1
            s, e = A.indptr[p], A.indptr[q]
            blocks.append(_Block(A.indptr[p : q + 1] - s, slot_c[A.indices[s:e]], A.data[s:e], row_lower[p:q],
                                 row_upper[p:q], lambda r, p=p: owners[p + r].name))
        if family is not None:
            col = np.concatenate([slots[id(var)] if id(var) in slots else np.full(size, -1)
                                  for var, size in zip(family.variables, family.sizes, strict=True)])
            blocks.append(_array_rows(family, col))
    return columns, cost, blocks


def _runs(columns):
    """(start, end, Var component) of each run of consecutive columns of one component.

    The compiler numbers a component's members together, so a run is at most as long as its component: its end is
    found by bisection, without looking at every column.
    """
    a, n = 0, len(columns)
    while a < n:
        var = columns[a].parent_component()
        lo, hi = a + 1, min(a + len(var), n)
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (mid + 1, hi) if columns[mid].parent_component() is var else (lo, mid)
        yield a, lo, var
        a = lo


def _first_uses(family, fixed: np.ndarray) -> np.ndarray:
    """For each component of ``family.variables``: the index (in CSR order) of the family's first term that is a
    free member of it, -1 when there is none. ``fixed`` flags the members, one component after the other.

    Reads the terms in growing chunks and stops once every component is found (usually in the first row).
    """
    ends = np.cumsum(family.sizes)
    first = np.full(len(ends), -1, dtype=np.int64)
    start, step = 0, 1024
    while start < len(family.indices) and (first < 0).any():
        cols = family.indices[start : start + step]
        component = np.searchsorted(ends, cols, side="right")
        component[fixed[cols]] = len(ends)  # a fixed member numbers nothing
        seen, where = np.unique(component, return_index=True)
        for k, t in zip(seen.tolist(), where.tolist(), strict=True):
            if k < len(ends) and first[k] < 0:
                first[k] = start + t
        start, step = start + step, 4 * step
    return first


def _array_rows(family, col: np.ndarray) -> _Block:
    """All rows of an intact :class:`~odtmip.models.rows.LinearRows` family as one block, without making any
    expression. ``col`` is the column of each member of ``family.variables`` (one component after the other), -1
    for a fixed one: fixed variables are constants, moved to the bounds."""
    term_col = col[family.indices]
    lower, upper = family.lower, family.upper
    fixed_term = term_col < 0

    def row_name(r: int) -> str:
        key = tuple(k[r].item() for k in family.row_keys)
        return family[key[0] if len(key) == 1 else key].name

    if not fixed_term.any():
        return _Block(family.indptr, term_col, family.data, lower, upper, row_name)
    members = family.members()
    used = np.unique(family.indices[fixed_term])
    values = np.array([members[p].value for p in used.tolist()], dtype=float)
    if np.isnan(values).any():
        raise ValueError(f"{family.name}: the fixed variable {members[used[np.isnan(values)][0]].name} has no value")
    term_value = values[np.searchsorted(used, family.indices[fixed_term])]
    row_of_term = np.repeat(np.arange(len(lower)), np.diff(family.indptr))
    shift = np.bincount(row_of_term[fixed_term], weights=family.data[fixed_term] * term_value, minlength=len(lower))
    keep = ~fixed_term
    starts = np.concatenate(([0], np.cumsum(np.bincount(row_of_term[keep], minlength=len(lower)))))
    return _Block(starts, term_col[keep], family.data[keep], lower - shift, upper - shift, row_name)


def _assemble(columns, cost, blocks):
    """(columns, cost, CSR matrix, row_lower, row_upper) from row blocks, or the message naming a violated
    constant row. Terms of one variable in one row are summed, zeros dropped; rows without a variable are dropped
    when satisfied; columns in no row and not in the objective are dropped."""
    import scipy.sparse as sp

    n = len(columns)
    sizes = [len(b.lower) for b in blocks]
    offsets = np.cumsum([0] + [len(b.columns) for b in blocks])
    index = np.int32 if offsets[-1] < 2**31 and n < 2**31 else np.int64  # what HiGHS takes, if it fits
    indptr = np.concatenate([[0]] + [b.indptr[1:] + o for b, o in zip(blocks, offsets[:-1], strict=True)]).astype(index)
    A = sp.csr_array((np.concatenate([np.zeros(0)] + [b.values for b in blocks]),
                      np.concatenate([np.zeros(0, index)] + [b.columns for b in blocks]).astype(index, copy=False),
                      indptr), shape=(sum(sizes), n))  # fmt: skip
    A.sum_duplicates()  # a variable twice in one row
    if not A.data.all():
        A.eliminate_zeros()  # and terms that cancel
    row_lower = np.concatenate([np.zeros(0)] + [b.lower for b in blocks])
    row_upper = np.concatenate([np.zeros(0)] + [b.upper for b in blocks])
    empty = np.diff(A.indptr) == 0
    if empty.any():  # constant rows: dropped when satisfied, an infeasible model otherwise
        violated = np.flatnonzero(empty & ((row_lower > 0) | (row_upper < 0)))
        if len(violated):
            r = int(violated[0])
            b = int(np.searchsorted(np.cumsum(sizes), r, side="right"))
            return f"model contains a trivially infeasible constraint, '{blocks[b].row_name(r - sum(sizes[:b]))}'"
        A, row_lower, row_upper = A[~empty], row_lower[~empty], row_upper[~empty]
    used = (np.bincount(A.indices, minlength=n) > 0) | (cost != 0)
    if not used.all():
        A = A[:, used]
        cost = cost[used]
        columns = list(compress(columns, used.tolist()))
    A.sort_indices()
    return columns, np.asarray(cost, dtype=float), A, row_lower, row_upper


def _column_bounds(columns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower and upper bound (the variable's own, tightened by its domain's) and integrality of every column.

    Variables of one component mostly share their bound settings and domain, so each distinct (lower, upper,
    domain) is resolved once through Pyomo's ``lb`` / ``ub`` / ``is_continuous``: 40 000 columns take about
    0.01 s instead of 0.15 s variable by variable. A missing bound is ``inf``, which is HiGHS's ``kHighsInf``.
    """
    n = len(columns)
    if not n:
        return np.zeros(0), np.zeros(0), np.zeros(0, dtype=bool)
    # The bound settings (None, numbers or Pyomo expressions) and domains, compared by identity: equal settings in
    # different objects only cost an extra lookup, and every object stays alive (held by its variable) meanwhile.
    keys = np.column_stack([np.fromiter(map(id, map(attrgetter(a), columns)), dtype=np.int64, count=n)
                            for a in ("_lb", "_ub", "_domain")])
    if (keys[:, :2] == id(None)).all():  # the usual case: no bounds of the variables' own
        keys = keys[:, 2]
    _, first, which = np.unique(keys, axis=0 if keys.ndim == 2 else None, return_index=True, return_inverse=True)
    resolved = []
    for v in (columns[j] for j in first.tolist()):  # one variable per distinct key
        discrete = not v.is_continuous()
        if discrete and not v.is_integer():
            raise ValueError(f"variable {v.name} has a discrete domain that is not integer; HiGHS cannot model it")
        resolved.append((-math.inf if v.lb is None else v.lb, math.inf if v.ub is None else v.ub, discrete))
    lb, ub, is_int = (np.array(x)[which.ravel()] for x in zip(*resolved, strict=True))
    return lb.astype(float), ub.astype(float), is_int.astype(bool)
