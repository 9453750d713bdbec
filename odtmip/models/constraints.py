"""Side constraints on every MIP formulation: fairness, feature budgets, forced and forbidden splits, leaf sizes and
rows of your own.

Each constraint is a small object with

* ``rows(m, view, data)``: the rows it adds to a built model, written once over the model's
  :class:`~odtmip.models.view.TreeView` (so one class serves Günlük, BinOCT, OCT and OCT-H alike);
* ``holds(tree, data)``: its check of a tree by routing the training rows (True/False; None: not checked);
* ``dp``: what the DP can do to solve under it exactly (drop columns, a minimum leaf size, a fixed root), or None.

``odtmip.solve(data, "gunluk", max_depth=2, constraints=[MaxFeatures(1)])`` adds their rows to the model, starts
HiGHS from the best DP tree that meets them all, and verifies the decoded tree by ``holds``
(:func:`odtmip.solving.pipeline.solve_mip`).

What a tree "uses" is read on its **canonical tree** (:func:`canonical`): routing the training rows through the
tree, a split with an empty side is removed and a subtree whose rows are all predicted one class becomes one leaf.
Two trees that predict the same on the training rows by the same splits have the same canonical tree, so a useless
split (one that no row crosses, or between two leaves of one class) uses no feature, is no required split, and
makes no leaf. Every formulation's decoded tree is canonical.

Fairness is measured with sample weights (unit weights: row counts): for the groups a, b of the protected column,
``|P(pred = positive | a) - P(pred = positive | b)| <= max_gap`` (statistical parity), the same among the positive
rows (equal opportunity, true positive rates) or among the negative rows (predictive equality, false positive
rates). A column with more than two values is held to the gap for every pair of its values. The rows are linear:
with the groups' weights W_a, W_b as constants, ``W_b S_a - W_a S_b <= max_gap W_a W_b`` (and its mirror), S_a the
weight of a's rows predicted positive (:meth:`~odtmip.models.view.TreeView.predicted`); with integer weights both
sides are whole numbers, so the right-hand side is rounded down exactly (``floor(max_gap W_a W_b)`` in rational
arithmetic) and the row and ``holds`` agree to the row. The protected column is not a split candidate unless
``split_on_protected=True``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from numbers import Integral, Real

import numpy as np
import pandas as pd

from odtmip.core.data import Dataset
from odtmip.core.exceptions import DataError, OptionError
from odtmip.core.tables import missing
from odtmip.core.tree import Tree, branch, leaf

__all__ = ["Constraint", "Custom", "EqualOpportunity", "FeatureCosts", "Forbid", "MaxFeatures", "MinLeafSize",
           "PredictiveEquality", "Require", "StatisticalParity", "canonical", "check_constraints", "tree_spec"]


# ============================================================================================ canonical trees
def tree_spec(tree: Tree, node: int = 0):
    """The nested spec (:func:`~odtmip.core.tree.leaf` / :func:`~odtmip.core.tree.branch`) of ``tree`` below
    ``node``."""
    n = tree.nodes[node]
    if n.is_leaf:
        return leaf(n.label)
    return branch(n.split, tree_spec(tree, n.left), tree_spec(tree, n.right))


def canonical(tree: Tree, data: Dataset) -> Tree:
    """The tree the training rows see: splits with an empty side removed, subtrees whose rows are all predicted one
    class made one leaf of that class (a tree no row reaches stays as it is). Predictions on the training rows are
    unchanged; a canonical tree is returned as it is."""
    at = tree.apply(data.raw)
    reached = np.zeros((tree.n_nodes, tree.n_classes), dtype=bool)  # reached[i, k]: a row below i is predicted k
    for i in np.unique(at):
        reached[i, tree.nodes[i].label] = True
    for i in reversed(range(tree.n_nodes)):  # children come after their parent (pre-order)
        n = tree.nodes[i]
        if not n.is_leaf:
            reached[i] = reached[n.left] | reached[n.right]
    changed = False

    def rec(i: int):
        nonlocal changed
        n = tree.nodes[i]
        if n.is_leaf:
            return leaf(n.label)
        classes = np.flatnonzero(reached[i])
        if len(classes) == 1:
            changed = True
            return leaf(int(classes[0]))
        if not reached[n.right].any():
            changed = True
            return rec(n.left)
        if not reached[n.left].any():
            changed = True
            return rec(n.right)
        return branch(n.split, rec(n.left), rec(n.right))

    if not len(at):
        return tree
    spec = rec(0)
    return data.new_tree(spec) if changed else tree


def _used_columns(tree: Tree) -> set[int]:
    return {c for n in tree.nodes if not n.is_leaf for c in n.split.columns}


# ============================================================================================ the base class
class Constraint:
    """A side constraint (see the module docstring). Subclasses set :attr:`name` and write :meth:`rows` and
    :meth:`holds`; :meth:`prepare` checks it against the data once, before anything is built."""

    #: What the DP does to solve under this constraint exactly: ``{"drop": columns}``, ``{"min_leaf": n}``,
    #: ``{"root": column}``; None: the DP cannot express it.
    dp: dict | None = None

    def prepare(self, data: Dataset) -> None:
        """Check the constraint against ``data`` (unknown columns, bad values): DataError / OptionError."""

    def rows(self, m, view, data: Dataset) -> None:
        raise NotImplementedError

    def holds(self, tree: Tree, data: Dataset) -> bool | None:
        raise NotImplementedError

    def key(self, *parts) -> tuple:
        """The index of one of this constraint's rows in ``m.side.constraint_rows``: its :meth:`describe` and
        ``parts``."""
        return (self.describe(), *parts)

    def describe(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return self.describe()


def _column_index(data: Dataset, column) -> int:
    """The raw column ``column`` (a name or a position) of ``data`` as a position; a DataError when it has none."""
    names = data.feature_names
    if isinstance(column, Integral) and not isinstance(column, bool):
        if 0 <= column < len(names):
            return int(column)
        raise DataError(f"column index {column} is out of range: the data has {len(names)} columns")
    if column in names:
        return names.index(column)
    raise DataError(f"unknown column {column!r}; the data's columns are {', '.join(map(str, names))}")


def check_constraints(constraints, data: Dataset) -> list[Constraint]:
    """``constraints`` (None, or a sequence of :class:`Constraint`) as a list, each prepared for ``data``."""
    if constraints is None:
        return []
    if isinstance(constraints, Constraint) or not isinstance(constraints, Sequence):
        raise OptionError(f"constraints must be a list of odtmip.constraints objects, got {constraints!r}")
    out = list(constraints)
    for c in out:
        if not isinstance(c, Constraint):
            raise OptionError(f"constraints must be odtmip.constraints objects (e.g. MaxFeatures(2)), got {c!r}")
        c.prepare(data)
    return out


# ============================================================================================ fairness
class _Fairness(Constraint):
    """A gap between the groups of a protected column in the rate of positive predictions among ``_among`` rows."""

    label = ""

    def __init__(self, column, max_gap: float, positive=None, split_on_protected: bool = False):
        if not (isinstance(max_gap, Real) and not isinstance(max_gap, bool) and 0 <= max_gap <= 1):
            raise OptionError(f"{type(self).__name__}: max_gap must be a number in [0, 1], got {max_gap!r}")
        self.column, self.max_gap, self.positive = column, float(max_gap), positive
        self.split_on_protected = bool(split_on_protected)

    def describe(self) -> str:
        return f"{type(self).__name__}({self.column!r}, {self.max_gap:g})"

    def prepare(self, data: Dataset) -> None:
        self._index = _column_index(data, self.column)
        values = data.column(self._index)
        if missing(values).any():
            raise DataError(f"{self.describe()}: the protected column {self.column!r} has missing values")
        levels = pd.unique(values)
        if len(levels) < 2:
            raise DataError(f"{self.describe()}: the protected column {self.column!r} has a single value")
        if self.positive is None:
            self._pos = 1
        else:
            from odtmip.core.metrics import positive_index

            self._pos = positive_index(data.classes_, self.positive)

    def _among(self, data: Dataset) -> np.ndarray:
        return np.ones(data.n_samples, dtype=bool)

    def _groups(self, data: Dataset) -> list[tuple[object, np.ndarray]]:
        """(value, weights of its rows among ``_among``, 0 elsewhere) for each value of the protected column with
        some weight there."""
        values = data.column(self._index)
        among = self._among(data)
        w = np.asarray(data.weights, dtype=float)
        out = []
        for v in pd.unique(values):
            weights = np.where((values == v) & among, w, 0.0)
            if weights.sum() > 0:
                out.append((v, weights))
        return out

    def _rhs(self, wa: float, wb: float) -> tuple[float, bool]:
        """(right-hand side of W_b S_a - W_a S_b <= ., whether the weights are whole numbers)."""
        whole = float(wa).is_integer() and float(wb).is_integer()
        if whole:
            return float(math.floor(Fraction(str(self.max_gap)) * int(wa) * int(wb))), True
        return self.max_gap * wa * wb, False

    def rows(self, m, view, data: Dataset) -> None:
        if not self.split_on_protected:
            view.used(self._index).fix(0)
        groups = self._groups(data)
        rows = view.side().constraint_rows
        weight = {}
        for v, w in groups:
            weight[v] = view.predicted(self._pos, w, tag=(self.describe(), str(v)))
        for (a, wa), (b, wb) in itertools.combinations(groups, 2):
            total_a, total_b = float(wa.sum()), float(wb.sum())
            rhs, _ = self._rhs(total_a, total_b)
            gap = total_b * weight[a] - total_a * weight[b]
            rows[self.key(str(a), str(b), "<=")] = gap <= rhs
            rows[self.key(str(a), str(b), ">=")] = gap >= -rhs

    def holds(self, tree: Tree, data: Dataset) -> bool:
        self.prepare(data)
        if not self.split_on_protected and self._index in _used_columns(canonical(tree, data)):
            return False
        predicted = tree.predict_index(data.raw) == self._pos
        groups = self._groups(data)
        for (_, wa), (_, wb) in itertools.combinations(groups, 2):
            total_a, total_b = float(wa.sum()), float(wb.sum())
            rhs, whole = self._rhs(total_a, total_b)
            gap = abs(total_b * float(wa[predicted].sum()) - total_a * float(wb[predicted].sum()))
            if gap > rhs + (1e-9 if whole else 1e-6 * max(1.0, rhs)):
                return False
        return True

    def gap(self, tree: Tree, data: Dataset) -> float:
        """The largest gap between two groups' rates for ``tree`` (0 with a single group)."""
        self.prepare(data)
        predicted = tree.predict_index(data.raw) == self._pos
        rates = [float(w[predicted].sum()) / float(w.sum()) for _, w in self._groups(data)]
        return max(rates, default=0.0) - min(rates, default=0.0)


class StatisticalParity(_Fairness):
    """``|P(pred = positive | group a) - P(pred = positive | group b)| <= max_gap`` for every two values a, b of the
    protected ``column`` (weighted rates; see the module docstring). ``positive``: a label of the data (default:
    the second class)."""


class EqualOpportunity(_Fairness):
    """The gap of :class:`StatisticalParity` among the positive rows: true positive rates."""

    def _among(self, data: Dataset) -> np.ndarray:
        return data.y == self._pos


class PredictiveEquality(_Fairness):
    """The gap of :class:`StatisticalParity` among the negative rows: false positive rates."""

    def _among(self, data: Dataset) -> np.ndarray:
        return data.y != self._pos


# ============================================================================================ features
class MaxFeatures(Constraint):
    """The canonical tree's splits read at most ``k`` distinct raw columns."""

    def __init__(self, k: int):
        if not (isinstance(k, Integral) and not isinstance(k, bool) and k >= 0):
            raise OptionError(f"MaxFeatures: k must be a whole number >= 0, got {k!r}")
        self.k = int(k)

    def describe(self) -> str:
        return f"MaxFeatures({self.k})"

    def rows(self, m, view, data: Dataset) -> None:
        view.side().constraint_rows[self.key()] = sum(view.used(c) for c in view.features()) <= self.k

    def holds(self, tree: Tree, data: Dataset) -> bool:
        return len(_used_columns(canonical(tree, data))) <= self.k


class FeatureCosts(Constraint):
    """The costs of the raw columns the canonical tree reads add up to at most ``budget``; a column costs once
    however many nodes test it. ``costs`` maps column names (or positions) to costs >= 0; a column it leaves out
    costs 0."""

    def __init__(self, costs: Mapping, budget: float):
        if not isinstance(costs, Mapping):
            raise OptionError(f"FeatureCosts: costs must map columns to numbers, got {costs!r}")
        for name, cost in costs.items():
            if not (isinstance(cost, Real) and not isinstance(cost, bool) and math.isfinite(cost) and cost >= 0):
                raise OptionError(f"FeatureCosts: the cost of {name!r} must be a number >= 0, got {cost!r}")
        if not (isinstance(budget, Real) and not isinstance(budget, bool) and math.isfinite(budget) and budget >= 0):
            raise OptionError(f"FeatureCosts: budget must be a number >= 0, got {budget!r}")
        self.costs, self.budget = dict(costs), float(budget)

    def describe(self) -> str:
        return f"FeatureCosts(budget={self.budget:g})"

    def prepare(self, data: Dataset) -> None:
        self._cost = {_column_index(data, name): float(cost) for name, cost in self.costs.items()}

    def rows(self, m, view, data: Dataset) -> None:
        costly = [c for c in view.features() if self._cost.get(c, 0.0) > 0]
        if costly:  # else nothing costs anything: every tree is within a budget >= 0
            view.side().constraint_rows[self.key()] = sum(self._cost[c] * view.used(c) for c in costly) <= self.budget

    def holds(self, tree: Tree, data: Dataset) -> bool:
        self.prepare(data)
        spent = sum(self._cost.get(c, 0.0) for c in _used_columns(canonical(tree, data)))
        return spent <= self.budget + 1e-9 * max(1.0, abs(self.budget))


class Forbid(Constraint):
    """No split of the canonical tree reads any of ``columns`` (names or positions)."""

    def __init__(self, columns):
        self.columns = [columns] if isinstance(columns, (str, Integral)) else list(columns)

    def describe(self) -> str:
        return f"Forbid({', '.join(map(repr, self.columns))})"

    def prepare(self, data: Dataset) -> None:
        self._index = sorted({_column_index(data, c) for c in self.columns})
        self.dp = {"drop": set(self._index)}

    def rows(self, m, view, data: Dataset) -> None:
        for c in self._index:
            view.used(c).fix(0)

    def holds(self, tree: Tree, data: Dataset) -> bool:
        self.prepare(data)
        return not _used_columns(canonical(tree, data)) & set(self._index)


class Require(Constraint):
    """The canonical tree splits on ``column``: at its root (``at="root"``) or at any node (``"anywhere"``)."""

    def __init__(self, column, at: str = "anywhere"):
        if at not in ("root", "anywhere"):
            raise OptionError(f"Require: at must be 'root' or 'anywhere', got {at!r}")
        self.column, self.at = column, at

    def describe(self) -> str:
        return f"Require({self.column!r}, at={self.at!r})"

    def prepare(self, data: Dataset) -> None:
        self._index = _column_index(data, self.column)
        self.dp = {"root": self._index} if self.at == "root" else None

    def rows(self, m, view, data: Dataset) -> None:
        rows = view.side().constraint_rows
        nodes = view.nodes[:1] if self.at == "root" else view.nodes
        there = view.side().constraint_choice
        for n in nodes:
            rows[self.key(n, "kept")] = there[self.key(n)] <= view.kept(n)
            rows[self.key(n, "column")] = there[self.key(n)] <= view.uses(n, self._index)
        rows[self.key()] = sum(there[self.key(n)] for n in nodes) >= 1

    def holds(self, tree: Tree, data: Dataset) -> bool:
        self.prepare(data)
        c = canonical(tree, data)
        root = c.nodes[0]
        if self.at == "root":
            return not root.is_leaf and self._index in root.split.columns
        return self._index in _used_columns(c)


# ============================================================================================ leaves
class MinLeafSize(Constraint):
    """Every leaf of the canonical tree holds at least ``n`` training rows (unweighted, as the DP's ``min_leaf``)."""

    def __init__(self, n: int):
        if not (isinstance(n, Integral) and not isinstance(n, bool) and n >= 1):
            raise OptionError(f"MinLeafSize: n must be a whole number >= 1, got {n!r}")
        self.n = int(n)
        self.dp = {"min_leaf": self.n}

    def describe(self) -> str:
        return f"MinLeafSize({self.n})"

    def rows(self, m, view, data: Dataset) -> None:
        rows = view.side().constraint_rows
        for leaf_ in view.leaves:
            rows[self.key(leaf_)] = view.rows_at(leaf_) >= self.n * view.nonempty(leaf_)

    def holds(self, tree: Tree, data: Dataset) -> bool:
        c = canonical(tree, data)
        counts = np.bincount(c.apply(data.raw), minlength=c.n_nodes)
        return all(counts[i] >= self.n for i, node in enumerate(c.nodes) if node.is_leaf and counts[i] > 0)


# ============================================================================================ your own rows
class Custom(Constraint):
    """Rows of your own: ``fn(model, view)`` adds any Pyomo components to the built model (``view``: its
    :class:`~odtmip.models.view.TreeView`). ``holds(tree, data)``, if given, checks a tree; without it the result
    says the constraint was not re-checked (``stats["constraints_unchecked"]``)."""

    def __init__(self, fn: Callable, holds: Callable | None = None, name: str | None = None):
        if not callable(fn) or holds is not None and not callable(holds):
            raise OptionError("Custom: fn (and holds, if given) must be callables")
        self.fn, self._holds, self.name = fn, holds, name or getattr(fn, "__name__", "custom")

    def describe(self) -> str:
        return f"Custom({self.name})"

    def rows(self, m, view, data: Dataset) -> None:
        self.fn(m, view)

    def holds(self, tree: Tree, data: Dataset) -> bool | None:
        return None if self._holds is None else bool(self._holds(tree, data))
