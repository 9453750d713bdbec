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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pyomo.environ as pyo


@dataclass
class Choice:
    """One choice of a branch node: ``var`` (1 when taken) and the DP columns (``columns``) of its splits.

    ``trivial``: the choice may also send every row to one side (Günlük's empty subset, OCT's threshold outside the
    data). ``leaf``: the choice is "no split" (the node's subtree is one leaf). ``sides[k]``: for child k (0 the
    left, 1 the right) the side of each DP column that reaches it, 0 (column absent), 1 (present) or both
    (``(0, 1)``: the model may put either side there, e.g. a subset or its complement).
    """

    var: object
    columns: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    trivial: bool = False
    leaf: bool = False
    sides: tuple = ((0,), (1,))


@dataclass
class TreeView:
    """The root's and its children's choices and the loss of one built model (see the module docstring).

    ``loss`` is a linear expression equal to the model's loss in the DP's units (>= 0 in every solution);
    ``choices[node]`` the choices of ``root`` and of ``children`` (its left and right child).
    """

    root: object
    children: tuple
    choices: dict
    loss: object


def _least(values) -> float:
    return float(min(values, default=math.inf))


def root_bounds(view: TreeView, values) -> list[float]:
    """LB_c of each of the root's choices, from :class:`odtmip.dp.bounds.SplitValues` ``values``: a choice whose
    splits no tree can take (``min_leaf``), or that has no DP column, gets the optimum OPT_d(S), a bound on every
    tree."""
    out = []
    for c in view.choices[view.root]:
        lb = values.leaf if c.leaf else _least(values.root[c.columns])
        if c.trivial:
            lb = min(lb, values.below)
        out.append(lb if math.isfinite(lb) else values.optimum)
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
