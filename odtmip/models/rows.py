"""Linear constraint families given as arrays, inside an ordinary Pyomo model.

The per-sample rows of a decision-tree MIP (a few per data point and tree node) are most of the model: at
N = 10 000 the Günlük depth-3 model has 100 000 of them with 1.1 M nonzeros. Written as Pyomo rules, each
row becomes an expression tree of Python objects, and building and reading those trees costs over ten times
more than assembling the same matrix with numpy. :class:`LinearRows` keeps such a family as arrays
(lower <= A x <= upper, A in compressed sparse rows) while staying a normal indexed ``Constraint``:

* every row has its index (``m.left_branch[i, k]``) and its expression, made when asked for: printing,
  ``pprint``, ``value(...)``, writing an LP file and Pyomo's own solver interfaces all work as usual;
* a row can be deactivated, deleted, or given a new expression with ``set_value`` (it then becomes an
  ordinary ``ConstraintData``);
* the model can be cloned and pickled;
* :mod:`odtmip.models._compile` hands intact families to HiGHS as arrays, without making any expression.

Columns refer to whole ``Var`` components: with ``variables=[m.c, m.z]``, column ``p`` is the ``p``-th member of
``m.c`` (in its iteration order) when ``p < len(m.c)``, else member ``p - len(m.c)`` of ``m.z``. The components
must keep the members they had when the rows were made (checked whenever the rows are read).

The row data follows Pyomo's own pattern for rows made on demand (``TemplateConstraintData``): the slot that
normally holds the expression holds the row number until an expression is set.

Example::

    m.x = pyo.Var(range(3), domain=pyo.Binary)
    # rows "x[0] - x[1] <= 0" and "x[1] - x[2] <= 0", indexed 0 and 1
    m.ordered = LinearRows(pyo.RangeSet(0, 1), keys=([0, 1],), variables=[m.x],
                           rows=[0, 0, 1, 1], cols=[0, 1, 1, 2], coefs=[1, -1, 1, -1], upper=0)
"""

from __future__ import annotations

import weakref

import numpy as np
from pyomo.core.base.constraint import ConstraintData, IndexedConstraint
from pyomo.core.base.var import Var
from pyomo.core.expr import LinearExpression
from pyomo.core.expr.numeric_expr import MonomialTermExpression
from pyomo.core.expr.relational_expr import EqualityExpression, InequalityExpression, RangedExpression


def var_members(var) -> list:
    """The members of a ``Var`` component in its iteration order (``list(var.values())``), read straight from
    Pyomo's member dict when that holds them in the same order (10x faster for 10 000s of members)."""
    data = var._data
    if data.__class__ is dict and var.index_set().isfinite() and list(data) == list(var.index_set()):
        return list(data.values())
    return list(var.values())


def linear_sum(variables, cols, coefs) -> LinearExpression:
    """``sum_p coefs[p] * variables[cols[p]]`` as one Pyomo ``LinearExpression`` (unit coefficients stay bare)."""
    cols, coefs = np.asarray(cols, dtype=np.int64).tolist(), np.asarray(coefs, dtype=float).tolist()
    return LinearExpression([variables[j] if a == 1 else MonomialTermExpression((a, variables[j]))
                             for j, a in zip(cols, coefs, strict=True)])


class RowData(ConstraintData):
    """One row of a :class:`LinearRows` family; its expression is made from the arrays each time it is asked for."""

    __slots__ = ()

    def __init__(self, component, index, row: int):
        # The inlined constructors of ConstraintData and ComponentData, as in Pyomo's TemplateConstraintData.
        self._component = component
        self._active = True
        self._index = index
        self._expr = row  # the row number, until set_value gives this row an expression of its own

    @property
    def expr(self):
        lower, body, upper = self.to_bounded_expression()
        if lower is None:
            return InequalityExpression((body, upper), False)
        if upper is None:
            return InequalityExpression((lower, body), False)
        if lower == upper:
            return EqualityExpression((body, upper))
        return RangedExpression((lower, body, upper), (False, False))

    def to_bounded_expression(self, evaluate_bounds=False):
        comp = self.parent_component()
        r = self._expr
        lo, up = comp.lower[r], comp.upper[r]
        sl = slice(comp.indptr[r], comp.indptr[r + 1])
        body = linear_sum(comp.members(), comp.indices[sl], comp.data[sl])
        return (None if lo == -np.inf else float(lo)), body, (None if up == np.inf else float(up))

    def set_value(self, expr):
        # From now on an ordinary row (the same switch as Pyomo's TemplateDataMixin.set_value).
        self.__class__ = ConstraintData
        return self.set_value(expr)


class LinearRows(IndexedConstraint):
    """An indexed Pyomo ``Constraint`` whose rows ``lower[r] <= sum_j A[r, j] x_j <= upper[r]`` are arrays.

    The row objects (:class:`RowData`) are made the first time anything looks at the rows (indexing, iterating,
    printing, writing); handing an untouched family to HiGHS makes none, which saves a third of the build.

    Parameters
    ----------
    *index
        The Pyomo sets the family is indexed by, as for ``Constraint`` (e.g. ``m.SAMPLES, m.NODES``). Indices of
        these sets without a row are simply absent, as with ``Constraint.Skip``.
    keys : tuple of array-like
        The index of every row, one array per index position: row ``r`` is ``m.name[keys[0][r], keys[1][r]]``.
        The rows' indices must be distinct (checked when the row objects are made). Give the rows in the order
        Pyomo iterates the index sets, as the writers and :mod:`odtmip.models._compile` then list them alike.
    variables : sequence of Var components
        The variables the columns refer to: the members of these components, one component after the other.
    rows, cols, coefs : array-like
        The nonzeros: ``coefs[p]`` times column ``cols[p]`` is a term of row ``rows[p]``. Terms keep their given
        order within a row.
    lower, upper : float or array-like
        Row bounds; ``-inf`` / ``inf`` for none (but not both). Equal bounds make an equality.
    doc : str
        As for any Pyomo component.
    """

    def __init__(self, *index, keys, variables, rows, cols, coefs, lower=-np.inf, upper=np.inf, doc=None):
        super().__init__(*index, doc=doc)
        keys = tuple(np.asarray(k) for k in keys)
        n_rows = len(keys[0]) if keys else 0
        if not keys or any(k.shape != (n_rows,) for k in keys):
            raise ValueError("keys must be one 1-d array per index position, all of the same length")
        rows, cols, coefs = np.asarray(rows), np.asarray(cols), np.asarray(coefs, dtype=float)
        rows, cols = (a.astype(np.int64) if a.size == 0 else a for a in (rows, cols))
        if not (np.issubdtype(rows.dtype, np.integer) and np.issubdtype(cols.dtype, np.integer)):
            raise ValueError("rows and cols must be integer arrays")
        if not (rows.shape == cols.shape == coefs.shape and rows.ndim == 1):
            raise ValueError("rows, cols and coefs must be 1-d arrays of the same length")
        try:
            counts = np.bincount(rows, minlength=n_rows)
        except ValueError:  # a negative row number
            counts = np.zeros(n_rows + 1)
        if len(counts) > n_rows:
            raise ValueError(f"row numbers must lie in [0, {n_rows}), the number of keys")
        variables = tuple(variables)
        if not all(isinstance(v, Var) for v in variables):
            raise TypeError("variables must be Pyomo Var components (e.g. [m.c, m.z]), not their members")
        size = sum(len(v) for v in variables)
        if len(cols) and (cols.min() < 0 or cols.max() >= size):
            raise ValueError(f"column numbers must lie in [0, {size}), the number of members of the variables")
        if not np.isfinite(coefs).all():
            raise ValueError("coefficients must be finite")
        self.lower = np.broadcast_to(np.asarray(lower, dtype=float), (n_rows,)).copy()
        self.upper = np.broadcast_to(np.asarray(upper, dtype=float), (n_rows,)).copy()
        if (self.lower > self.upper).any() or np.isnan(self.lower).any() or np.isnan(self.upper).any():
            raise ValueError("every row needs lower <= upper")
        if ((self.lower == -np.inf) & (self.upper == np.inf)).any():
            raise ValueError("every row needs a finite lower or upper bound")
        if len(rows) > 1 and (rows[1:] < rows[:-1]).any():  # CSR: row by row, terms in their given order
            order = np.argsort(rows, kind="stable")
            cols, coefs = cols[order], coefs[order]
        self.indptr = np.concatenate(([0], np.cumsum(counts)))
        self.indices = cols
        self.data = coefs
        self.variables = variables
        self.sizes = [len(v) for v in variables]
        self.row_keys = keys
        self._members = None

    # Pyomo keeps an indexed component's members in the dict ``_data``; here it is made on first use.
    @property
    def _data(self):
        made = self.__dict__["_row_objects"]
        if made is None:
            made = self.__dict__["_row_objects"] = self._make_rows()
        return made

    @_data.setter
    def _data(self, value):
        self.__dict__["_row_objects"] = value

    def construct(self, data=None):
        if self._constructed:
            return
        self._constructed = True
        if self._anonymous_sets is not None:
            for s in self._anonymous_sets:
                s.construct()
        self.__dict__["_row_objects"] = None  # made by the first look at the rows

    def _make_rows(self) -> dict:
        columns = [k.tolist() for k in self.row_keys]
        keys = columns[0] if len(columns) == 1 else zip(*columns, strict=True)
        ref = weakref.ref(self)
        made = {key: RowData(ref, key, r) for r, key in enumerate(keys)}
        if len(made) != len(self.lower):
            raise ValueError(f"{self.name}: the row indices are not distinct")
        return made

    def check_variables(self) -> None:
        """Raise when a component of ``variables`` gained or lost members (the columns would shift)."""
        for v, size in zip(self.variables, self.sizes, strict=True):
            if len(v) != size:
                raise ValueError(f"{self.name}: variable {v.name} had {size} members when the rows were made and "
                                 f"has {len(v)} now; make the rows again")

    def members(self) -> list:
        """The VarData of every column: the members of ``variables``, one component after the other."""
        self.check_variables()
        if self._members is None:
            self._members = [x for v in self.variables for x in var_members(v)]
        return self._members

    def intact(self) -> bool:
        """True when every row is still given by the arrays and active (none deleted, deactivated or reset)."""
        made = self.__dict__["_row_objects"]
        if made is None:
            return True
        return len(made) == len(self.lower) and set(map(type, made.values())) <= {RowData} and all(
            d._active for d in made.values())
