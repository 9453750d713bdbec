"""One view of every model's tree, and the rows the DP's bounds give it (``dp_bounds``).

A formulation's variables differ (Günlük's v[g, k], BinOCT's f[n, f], OCT's a[j, t] and d[t]), but each model
chooses, at every branch node, one of its candidate splits or none. :class:`TreeView` names those choices for the
root and its two children, each with the columns of the formulation's DP problem that stand for its splits, and the
model's loss as a linear expression in the DP's objective units (:class:`~odtmip.models.formulation.DPProblem`:
errors + penalty x branch nodes, the class weight in the row weights).

From the DP's values below each split (:class:`odtmip.dp.bounds.SplitValues`, for the rows of the whole data at
the model's depth d) :func:`add_dp_rows` adds

* ``dp_root_bound`` (``dp_bounds="root"``): one row

      loss >= sum_c LB_c x_c,      LB_c = min over the splits s of choice c of V_d(S, s),

  x_c the root's choice variables (exactly one is 1 in every solution). **Valid**: a tree of the model whose root
  takes choice c splits the rows by one of c's splits s (or, where c allows it, sends every row one way), so it is a
  tree of the DP problem whose root splits on s, of depth <= d: its loss is at least V_d(S, s) (or OPT_{d-1}(S),
  ``below``, which is V_d of a split that sends every row one way); a root that does not split is a leaf, at least
  ``leaf``. The row bounds the loss only: it cuts off no tree of the model, so it stays valid under any constraint
  added to the model.
* ``dp_path_bound`` (``dp_bounds="paths"``, also the root row): for the root's choice c, a child k and k's choice
  c', one row

      loss >= LB(c, k, c') (x_c + x_{k,c'} - 1),

  LB(c, k, c') the least loss of a tree whose root takes c and whose child k takes c': for each split s of c and
  the side a of s that reaches k, V_{d-1}(S_a, s') (or OPT_{d-2}(S_a) where c' allows a split that sends every row
  one way, one leaf of S_a where c' is "no split") plus OPT_{d-1} of the other side plus the penalty; and where
  c may send every row one way, also V_{d-1}(S, s') (every row reaches k) and OPT_{d-1}(S) (none does). **Valid**:
  when both choices are taken the tree is one of those minimised over; otherwise the right-hand side is <= 0 <=
  the loss.

:mod:`odtmip.solving.pipeline` computes the values (the DP's engine) and adds the rows; the brute-force tests
(``tests/models/test_dp_bounds.py``) enumerate every tree of tiny models and check that each one satisfies every
row.

The same view names every branch node's choices (:attr:`TreeView.nodes`, each :class:`Choice` with the raw column
its splits read), the leaves and the rows reaching each (``reach``) and each leaf's class (``label``). From them
its methods write, once for every formulation, the linear expressions a side constraint
(:mod:`odtmip.models.constraints`) reads, adding their variables and linking rows to the model only when asked:

==============================  =====================================================================================
:meth:`TreeView.rows_at`        sum_i w_i r[i, l]: the (weighted) rows reaching leaf l (r the model's routing variables)
:meth:`TreeView.predicted`      sum_l q[l, k]: the weight of the rows (of a subset) predicted k, with the McCormick rows
                                q <= W y[l, k], q <= rows_at(l), q >= rows_at(l) - W (1 - y[l, k]) (y the leaf's class)
:meth:`TreeView.row_predicted`  p[i, k] = 1 iff row i is predicted k: p >= r[i, l] + y[l, k] - 1, sum_k p[i, k] = 1
:meth:`TreeView.row_correct`    p[i, y_i]
:meth:`TreeView.uses`           sum of node n's choices on a raw column
:meth:`TreeView.kept`           binary, 1 only if node n is a split of the canonical tree (rows on both sides, not all
                                of them predicted one class)
:meth:`TreeView.dropped`        binary, 1 only if node n is not (one side empty, or all its rows predicted one class)
:meth:`TreeView.used`           binary, 1 if some node of the canonical tree splits on a raw column
:meth:`TreeView.nonempty`       binary, 1 if a row reaches leaf l
==============================  =====================================================================================

The *canonical tree* of a tree (:func:`odtmip.models.constraints.canonical`) is what routing the training rows
leaves of it: splits with an empty side removed, subtrees whose rows are all predicted one class made one leaf. Every
model's decoded tree and every tree that starts a model have the canonical tree of the model's solution, so side
constraints on features and leaves are stated on it, and the view's rows are exact on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pyomo.environ as pyo

from odtmip.core.exceptions import OptionError
from odtmip.models.rows import linear_sum


@dataclass
class Choice:
    """One choice of a branch node: ``var`` (1 when taken) and the DP columns (``columns``) of its splits.

    ``trivial``: the choice may also send every row to one side (Günlük's empty subset, OCT's threshold outside the
    data). ``leaf``: the choice is "no split" (the node's subtree is one leaf). ``sides[k]``: for child k (0 the
    left, 1 the right) the side of each DP column that reaches it, 0 (column absent), 1 (present) or both
    (``(0, 1)``: the model may put either side there, e.g. a subset or its complement). ``features``: the raw
    columns (indices into the Dataset's columns) its splits read (none for "no split"; several for a hyperplane).
    """

    var: object
    columns: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    trivial: bool = False
    leaf: bool = False
    sides: tuple = ((0,), (1,))
    features: tuple = ()


@dataclass
class TreeView:
    """One built model as a tree: its branch nodes' choices, its leaves, the rows reaching them and their classes,
    and its loss (see the module docstring).

    ``loss`` is a linear expression equal to the model's loss in the DP's units (>= 0 in every solution);
    ``choices[node]`` the choices of every branch node in ``nodes`` (``root`` first; ``children`` the root's left
    and right child, which the DP's path rows read). ``below[node]`` holds the leaves of its left and of its right
    subtree; ``reach[leaf]`` the model's variable of "row i reaches the leaf" for every row i (exact: 1 for the
    leaf the row reaches, 0 elsewhere, in every solution with integral structure); ``label(leaf, k)`` the
    variable (or the constant, when the model fixes it) of "the leaf predicts class k". ``y`` holds the rows'
    classes and ``weights`` their sample weights. ``free_labels``, when given, is called before a side constraint
    reads the labels: it removes rows of the model that fix a leaf's class to its majority (OCT's (21)).
    """

    root: object
    children: tuple
    choices: dict
    loss: object
    model: object = None
    nodes: tuple = ()
    leaves: tuple = ()
    below: dict = field(default_factory=dict)
    reach: dict = field(default_factory=dict)
    label: object = None
    y: np.ndarray | None = None
    weights: np.ndarray | None = None
    n_classes: int = 2
    free_labels: object = None

    # -------------------------------------------------------------------------------- the side rows' vocabulary
    @property
    def n_rows(self) -> int:
        return len(self.y)

    def side(self):
        """The block ``m.side`` that holds the variables and rows the methods below add, made on first use: each
        family a ``Var`` or ``Constraint`` indexed by its key (``m.side.predicted_weight[...]``)."""
        m = self.model
        if not hasattr(m, "side"):
            m.side = pyo.Block()
            b = m.side
            b.predicted_weight = pyo.Var(pyo.Any, dense=False, domain=pyo.NonNegativeReals,
                                         doc="q[l, k, subset]: weight of the subset's rows in leaf l if l predicts k")
            b.predicted_rows = pyo.Constraint(pyo.Any, doc="McCormick rows of q: the product y[l, k] x rows_at(l)")
            b.row_class = pyo.Var(pyo.Any, dense=False, bounds=(0, 1),
                                  doc="p[i, k] = 1: row i is predicted class k")
            b.row_class_rows = pyo.Constraint(pyo.Any, doc="p[i, k] >= r[i, l] + y[l, k] - 1; sum_k p[i, k] = 1")
            b.kept_node = pyo.Var(pyo.Any, dense=False, domain=pyo.Binary,
                                  doc="kept[n] = 1 only if node n splits in the canonical tree")
            b.kept_rows = pyo.Constraint(pyo.Any, doc="kept[n] <= rows on each side of n, <= rows at n not predicted k")
            b.dropped_node = pyo.Var(pyo.Any, dense=False, domain=pyo.Binary,
                                     doc="dropped[n] = 1 only if node n is no split of the canonical tree")
            b.dropped_rows = pyo.Constraint(pyo.Any, doc="dropped[n] <= one side empty + all rows predicted k")
            b.used_column = pyo.Var(pyo.Any, dense=False, domain=pyo.Binary,
                                    doc="used[c] = 1 if a split of the canonical tree reads raw column c")
            b.used_rows = pyo.Constraint(pyo.Any, doc="used[c] >= uses(n, c) - dropped[n] at every node n")
            b.nonempty_leaf = pyo.Var(pyo.Any, dense=False, domain=pyo.Binary, doc="e[l] = 1 if a row reaches l")
            b.nonempty_rows = pyo.Constraint(pyo.Any, doc="rows_at(l) <= N e[l]")
            b.constraint_choice = pyo.Var(pyo.Any, dense=False, domain=pyo.Binary,
                                          doc="binaries of the side constraints (odtmip.models.constraints)")
            b.constraint_rows = pyo.Constraint(pyo.Any, doc="rows of the side constraints, keyed by the constraint")
        return m.side

    def _reach(self, leaf) -> list:
        if leaf not in self.reach:
            raise OptionError(f"the {self.model.name} model has no routing variable of every row at leaf {leaf} "
                              "(its options deleted them)")
        return self.reach[leaf]

    def rows_at(self, leaf, weights=None):
        """sum_i w_i r[i, leaf] (``weights`` an array of one number per row, 0 leaves a row out; default all 1)."""
        w = np.ones(self.n_rows) if weights is None else np.asarray(weights, dtype=float)
        at = np.flatnonzero(w)
        return linear_sum(self._reach(leaf), at, w[at])

    def _labels_read(self) -> None:
        if self.free_labels is not None:
            self.free_labels()
            self.free_labels = None

    def leaf_predicted(self, leaf, k: int, weights=None, tag: str = "all"):
        """The weight (``weights``, default 1 per row) of the rows at ``leaf`` predicted class k: an expression,
        exact in every solution (McCormick rows of the leaf's class and its weight; the sum itself where the model
        fixes the leaf's class). ``tag`` names the weights (one family of rows per tag)."""
        self._labels_read()
        y = self.label(leaf, k)
        if isinstance(y, (int, float)):
            return self.rows_at(leaf, weights) if y else 0.0
        b = self.side()
        key = (leaf, k, tag)
        if key not in b.predicted_weight:
            total = float(np.sum(np.ones(self.n_rows) if weights is None else weights))
            q, at = b.predicted_weight[key], self.rows_at(leaf, weights)
            q.setub(total)
            b.predicted_rows[(*key, "class")] = q <= total * y
            b.predicted_rows[(*key, "rows")] = q <= at
            b.predicted_rows[(*key, "both")] = q >= at - total * (1 - y)
        return b.predicted_weight[key]

    def predicted(self, k: int, weights=None, tag: str = "all", leaves=None):
        """The weight of the rows predicted class k (of the leaves ``leaves``, default all): sum_l q[l, k]."""
        return sum(self.leaf_predicted(leaf, k, weights, tag) for leaf in (self.leaves if leaves is None else leaves))

    def row_predicted(self, i: int, k: int):
        """p[i, k]: 1 iff row i is predicted class k (its rows added on first use, for all classes of row i)."""
        self._labels_read()
        b = self.side()
        if (i, k) not in b.row_class:
            p = {c: b.row_class[i, c] for c in range(self.n_classes)}
            for leaf in self.leaves:
                for c in range(self.n_classes):
                    b.row_class_rows[i, c, leaf] = p[c] >= self._reach(leaf)[i] + self.label(leaf, c) - 1
            b.row_class_rows[i, "one"] = sum(p.values()) == 1
        return b.row_class[i, k]

    def row_correct(self, i: int):
        """1 iff row i is classified correctly."""
        return self.row_predicted(i, int(self.y[i]))

    def uses(self, node, column: int):
        """The sum of node ``node``'s choices whose splits read raw column ``column`` (0 when none does)."""
        return sum(c.var for c in self.choices[node] if column in c.features)

    def features(self) -> list[int]:
        """The raw columns some choice reads, in order."""
        return sorted({f for node in self.nodes for c in self.choices[node] for f in c.features})

    def _side_rows(self, node):
        """(rows left of ``node``, rows right of it, rows at it not predicted k for each class k): expressions."""
        left, right = self.below[node]
        at = [self.rows_at(leaf) for leaf in (*left, *right)]
        return (sum(at[: len(left)]), sum(at[len(left):]),
                [sum(at) - self.predicted(k, leaves=(*left, *right)) for k in range(self.n_classes)])

    def kept(self, node):
        """A binary that is 1 only if ``node`` is a split of the canonical tree: rows reach both of its sides and not
        all of its rows are predicted one class (rows: kept <= each of those counts)."""
        b = self.side()
        if node not in b.kept_node:
            left, right, others = self._side_rows(node)
            b.kept_rows[node, "left"] = b.kept_node[node] <= left
            b.kept_rows[node, "right"] = b.kept_node[node] <= right
            for k, other in enumerate(others):
                b.kept_rows[node, k] = b.kept_node[node] <= other
        return b.kept_node[node]

    def dropped(self, node):
        """A binary that is 1 only if ``node`` is not a split of the canonical tree: one of its sides holds no row,
        or all of its rows are predicted one class (one binary per case; each case's count <= N x (1 - case))."""
        b = self.side()
        if node not in b.dropped_node:
            n = self.n_rows
            left, right, others = self._side_rows(node)
            cases = [(node, "no left"), (node, "no right"), *((node, "all", k) for k in range(self.n_classes))]
            for key, count in zip(cases, (left, right, *others), strict=True):
                b.dropped_rows[key] = count <= n * (1 - b.dropped_node[key])
            b.dropped_rows[node, "some case"] = b.dropped_node[node] <= sum(b.dropped_node[key] for key in cases)
        return b.dropped_node[node]

    def used(self, column: int):
        """A binary that is 1 if a split of the canonical tree reads raw ``column``: used >= uses(n, column) -
        dropped(n) at every node (0 when no choice reads it)."""
        b = self.side()
        if column not in b.used_column:
            for node in self.nodes:
                uses = self.uses(node, column)
                if not isinstance(uses, (int, float)):
                    b.used_rows[column, node] = b.used_column[column] >= uses - self.dropped(node)
            if not any(column in c.features for node in self.nodes for c in self.choices[node]):
                b.used_column[column].fix(0)
        return b.used_column[column]

    def nonempty(self, leaf):
        """A binary that is 1 if a row reaches ``leaf`` (rows_at(leaf) <= N e)."""
        b = self.side()
        if leaf not in b.nonempty_leaf:
            b.nonempty_rows[leaf] = self.rows_at(leaf) <= self.n_rows * b.nonempty_leaf[leaf]
        return b.nonempty_leaf[leaf]


def _least(values) -> float:
    return float(min(values, default=math.inf))


def root_bounds(view: TreeView, values) -> list[float]:
    """LB_c of each of the root's choices, from :class:`odtmip.dp.bounds.SplitValues` ``values``: a choice whose
    splits no tree can take (``min_leaf``, a target), or that has no DP column, gets the optimum OPT_d(S), a bound on
    every tree (0 when no tree meets a target: the model is infeasible)."""
    out = []
    for c in view.choices[view.root]:
        lb = values.leaf if c.leaf else _least(values.root[c.columns])
        if c.trivial:
            lb = min(lb, values.below)
        out.append(lb if math.isfinite(lb) else values.optimum if math.isfinite(values.optimum) else 0.0)
    return out


def path_bound(c, k: int, c2, values, penalty: float) -> float:
    """LB(c, k, c2): the least loss of a tree whose root takes choice ``c`` and whose child ``k`` takes ``c2``."""
    if c.leaf:  # the root does not split: the child does not exist, and the root row holds
        return 0.0
    best = math.inf
    for s in c.columns.tolist():
        for a in c.sides[k]:
            if values.empty[s, a] or values.empty[s, 1 - a]:
                continue  # a split that sends every row one way: below
            if c2.leaf:
                at_k = values.child_leaf[s, a]
            else:
                at_k = _least(values.child_root[s, a, c2.columns])
                if c2.trivial:
                    at_k = min(at_k, values.child_below[s, a])
            best = min(best, at_k + values.child[s, 1 - a] + penalty)
    degenerate = c.trivial or any(values.empty[s].any() for s in c.columns.tolist())
    if degenerate:  # every row to k (its choice on all rows), or none (k empty; OPT_{d-1} on all rows)
        every = values.leaf if c2.leaf else _least(values.root_shallow[c2.columns])
        best = min(best, every, values.below)
    return best


def add_dp_rows(m, view: TreeView, values, mode: str, penalty: float) -> dict:
    """Add the rows of ``mode`` (``"root"`` or ``"paths"``) to the model ``m``; returns their statistics (numbers of
    rows and nonzeros, the least and largest root bound)."""
    root_choices = view.choices[view.root]
    lbs = root_bounds(view, values)
    terms = [(lb, c.var) for lb, c in zip(lbs, root_choices, strict=True) if lb != 0]
    m.dp_root_bound = pyo.Constraint(expr=view.loss >= sum(lb * v for lb, v in terms),
                                     doc="DP bound: loss >= sum_c LB_c x_c over the root's choices "
                                         "(odtmip.models.view)")
    stats = {"dp_rows": 1, "dp_row_nonzeros": len(terms) + _size(view.loss),
             "dp_root_bound_min": min(lbs, default=None), "dp_root_bound_max": max(lbs, default=None)}
    if mode != "paths":
        return stats
    rows = []
    for k, child in enumerate(view.children):
        for ci, c in enumerate(root_choices):
            if c.leaf:
                continue
            for cj, c2 in enumerate(view.choices[child]):
                lb = path_bound(c, k, c2, values, penalty)
                if 0 < lb < math.inf and lb > lbs[ci]:  # no stronger than the root row when lb <= LB_c
                    rows.append((k, ci, cj, lb))
    m.DP_PATHS = pyo.Set(initialize=range(len(rows)), doc="(child, root choice, child choice) of each path row")

    @m.Constraint(m.DP_PATHS, doc="DP bound: loss >= LB(c, k, c') (x_c + x_{k,c'} - 1) (odtmip.models.view)")
    def dp_path_bound(m, r):
        k, ci, cj, lb = rows[r]
        return view.loss >= lb * (root_choices[ci].var + view.choices[view.children[k]][cj].var - 1)

    stats["dp_rows"] += len(rows)
    stats["dp_row_nonzeros"] += len(rows) * (2 + _size(view.loss))
    return stats


def _size(expr) -> int:
    from pyomo.repn import generate_standard_repn

    return len(generate_standard_repn(expr, compute_values=False).linear_vars)
