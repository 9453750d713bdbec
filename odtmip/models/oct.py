"""Bertsimas & Dunn's Optimal Classification Trees: the MIP (24) of [BD17] (OCT) and its hyperplane variant OCT-H.

The tree is the complete binary tree of depth D in heap numbering: node t has children 2t (left) and 2t + 1
(right); the branch nodes T_B = {1, ..., 2^D - 1} may split (d_t = 1) and the leaves T_L = {2^D, ..., 2^{D+1} - 1}
predict a class. Every raw column becomes one or more features x_j in [0, 1] (see *Features*); at a splitting
node t a point goes **left iff a_t . x < b_t** and right otherwise. Variables keep the paper's symbols: a, b, d
(splits), z (point i in leaf t), l (leaf non-empty), c (leaf label), L (misclassified weight of a leaf);
OCT-H adds a_hat (``|a|``) and s (feature used).

Features
--------
* A numeric column (0/1 columns included) with r >= 2 distinct training values is one feature. OCT replaces
  each value by its rank scaled to [0, 1] (``scaling="rank"``, the default), so every gap between consecutive
  values is 1/(r - 1) and the epsilon of the strict inequality stays far above solver tolerances (see
  *Deviations*). OCT-H needs an affine map to read its
  hyperplanes on the original scale, so it uses min-max scaling (``scaling="minmax"``, also available for OCT).
* A categorical column with r >= 2 levels gives one 0/1 feature per level; a split on level v reads
  ``column in {v}`` (right). OCT-H rejects categorical columns (a hyperplane over one-hot indicators is no
  :class:`~odtmip.core.tree.Split`): encode them as 0/1 numeric columns yourself, or use OCT.
* Constant columns are dropped (their epsilon is undefined).
* Decoded thresholds are on the **original** scale: a cut between the scaled values u_k < u_{k+1} becomes
  ``Split("threshold", threshold=midpoint(v_k, v_{k+1}))`` (true = x > threshold goes right,
  :func:`odtmip.core.binarize.midpoint`), exactly the thresholds of :func:`odtmip.core.binarize.midpoint_thresholds`. A
  hyperplane ``a . x_scaled < b`` is mapped back through the min-max map to ``Split("hyperplane", columns,
  threshold, weights)`` (true = ``w . x >= threshold`` goes right).

Equations -> components
-----------------------
=========================  ===========================================================================
(objective of (24))        ``penalised_error``: (1/L_hat) sum_t L_t + alpha sum_t d_t (OCT-H: alpha sum s_jt)
(2)                        ``one_feature_if_split``
(3)                        ``threshold_only_if_split`` (b >= 0 is the bound of ``b``)
(5)                        ``split_only_below_split``
(6)                        ``point_only_in_nonempty_leaf`` (per point: :class:`~odtmip.models.rows.LinearRows`)
(7)                        ``min_points_in_leaf``
(8)                        ``one_leaf_per_point`` (per point: ``LinearRows``)
(13)                       ``left_branch_strict`` (per point, leaf and ancestor: ``LinearRows``)
(14)                       ``right_branch`` (per point, leaf and ancestor: ``LinearRows``)
(16), (17)                 ``N``, ``N_k`` (Expressions: weight of the points / of class k in leaf t)
(18)                       ``one_label_per_nonempty_leaf``
(20), (21)                 ``error_lower``, ``error_upper``
(22)                       the bound L >= 0
d = 0 fix (deviation)      ``no_split_sends_all_right``
OCT-H                      ``a_hat_upper_a``, ``a_hat_lower_a``, ``l1_norm_if_split``, ``a_within_s``,
                           ``minus_a_within_s``, ``s_only_if_split``, ``some_feature_if_split``,
                           ``threshold_only_if_split``, ``minus_threshold_only_if_split``,
                           ``left_branch_margin``, ``right_branch_hyperplane``
class weight, rate target  ``e_class``, ``class_errors``; objective (FN + C FP) / L_hat, or ``missed`` with
                           ``specificity_target`` / ``sensitivity_target`` (:mod:`odtmip.models.rates`)
side constraints           (21) ``error_upper`` deactivated once a constraint reads the leaves' classes (a fair
                           tree may label a leaf against its majority); rows in ``m.side`` over z, c, a (OCT-H:
                           s) and d (:mod:`odtmip.models.constraints`)
=========================  ===========================================================================

The per-point families are :class:`~odtmip.models.rows.LinearRows` (rows kept as arrays, expressions made
when looked at): at N = 10 000 and depth 3 the model has 330 000 rows, built and handed to HiGHS in 0.8 s
(10.5 + 2.9 s with a rule per row).

Deviations from the paper
-------------------------
* **The d = 0 hole is closed** by ``no_split_sends_all_right``: l_t <= d_m for every leaf t and every ancestor
  m whose *left* branch lies on the path to t. As transcribed, a node with d_m = 0 has a_m = 0 and b_m = 0,
  and then (13) and (14) hold for z_it = 1 on either side, so points could be routed freely below a node that
  does not split, at no complexity cost (with d_1 = 0 and 2^D >= K every data set would reach objective 0).
  The paper's intent is "no split: everybody goes right". We state it directly: the leaves left of a
  non-splitting node are empty, and with (6) z_it <= l_t <= d_m. One row per (leaf, ancestor) instead of one
  per (point, leaf, ancestor), and it tightens the LP; Bo Tang's alternative (adding (1 + eps_max)(1 - d_m)
  to the left side of (13)) acts only through the big-M rows. The row is added to OCT-H too, where the margin
  mu already implies it, because it is valid and tightens the LP. The hole-detector test deactivates it.
* **Scaling.** [BD17] normalise features min-max; OCT here defaults to ranks. A monotone map allows the same
  partitions of the training rows, so the optimum is unchanged, and thresholds are decoded on the original
  scale either way.
* **Epsilon.** (13) reads a_m . (x_i + eps) <= b_m + (1 + eps_max)(1 - z_it) with eps_j the smallest gap
  between consecutive distinct scaled values of feature j. After the rank transform eps_j = 1/(r_j - 1); a
  one-hot feature has eps_j = 1. eps_j is floored at ``epsilon_floor`` (default 1e-4): HiGHS's integrality
  and feasibility tolerances (~1e-6) relax (13) by a few 1e-6, which must stay well below eps_j / 2, the margin
  used to decode a cut. With the rank transform the floor only bites for columns with more than 10 001
  distinct values; with ``scaling="minmax"`` it may forbid cuts between values closer than the floor, and the
  model's optimum can then be worse than the DP's over all midpoints (``m.odata.floored`` says whether it
  happened). Points are always re-routed through the decoded tree to score it.
* **L_hat** = (total weight) - (largest class weight): the baseline *error* of the single leaf, so that the
  root-only tree has normalised loss 1 and alpha >= 1 makes any split unprofitable. If L_hat = 0 (all the
  weight is on one class) :func:`solve_oct` returns the single leaf without building a model.
* **Weights.** N_t and N_kt are *weighted* sums, so L_t is the misclassified weight and the big-M of (20)/(21)
  is the total weight W. N_min in (7) counts *rows* (as the DP's ``min_leaf`` and CART's ``min_samples_leaf``).
* **Class weight and rate targets** (:mod:`odtmip.models.rates`): (21) makes every leaf predict its (weighted)
  majority class, which is no longer optimal once a negative costs C or a sensitivity/specificity floor holds.
  There L and (20)-(22) are left out and the objective reads per-class errors e_class[k, t] >= N_kt - W c_kt.
* **OCT-H**: a in [-1, 1]^p, ``a_hat >= |a|``, sum_j a_hat_jt <= d_t, s binary with -s <= a <= s,
  s <= d, sum_j s >= d, -d <= b <= d; routing a . x >= b - 2(1 - z) (right) and a . x + mu <= b + (2 + mu)(1 - z)
  (left), mu = 0.005. The complexity term is alpha sum s_jt (features used, ``complexity="features"``, the
  paper's choice) or alpha sum d_t (``complexity="splits"``). Decoded hyperplanes keep coefficients with
  ``|a_j| > 1e-7`` and cut at b - mu/2 (midway in the margin), so solver round-off cannot move a training point;
  where the map to the original scale rounds that cut onto a training score (adjacent doubles), the threshold
  moves between the scores of the two sides (:func:`odtmip.core.binarize.midpoint`).
* **Decoding** sends everybody right at d_t = 0 nodes, removes splits that send every training row to one
  side, and merges sibling leaves with the same label. None of these changes a training prediction and each
  removes a split, so the recomputed objective is never worse than the solver's (better when a time limit
  stopped HiGHS at a tree with such splits). The decoded tree has no empty leaf.
* The paper warm-starts with CART; odtmip's default start is the DP optimum over all midpoint thresholds
  (``warm_start="dp"``), which is already the OCT optimum for axis-aligned splits (:func:`dp_equivalent`);
  ``warm_start="cart"`` gives the paper's start (scikit-learn CART of depth D with min_samples_leaf = N_min,
  pruned with the same alpha).

Known optimum of the bundled example: on 20 rows of each iris class (``odtmip.core.datasets.load("iris")``, rows
0-19, 50-69 and 100-119: 60 rows, 4 numeric columns, L_hat = 40), OCT at depth 2 makes 1 error with two splits
on petal length (2.5 and 4.95): objective 1/40 = 0.025 with alpha = 0 and 0.045 with alpha = 0.01. HiGHS
proves both from the DP start (about 1 s and 4 s), and the DP over all midpoint thresholds agrees.

References
----------
.. [BD17] Dimitris Bertsimas, Jack Dunn, "Optimal classification trees", Machine Learning 106 (2017) 1039–1082.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from numbers import Integral, Real

import numpy as np
import pyomo.environ as pyo

from odtmip.core.binarize import BinaryColumn, midpoint
from odtmip.core.data import Dataset
from odtmip.core.exceptions import DataError, OptionError
from odtmip.core.options import OCT_H_OPTIONS, OCT_OPTIONS, check_switches
from odtmip.core.tables import raw_columns
from odtmip.core.tree import Split, Tree, branch, leaf
from odtmip.models import rates
from odtmip.models._highs import HighsOptions
from odtmip.models.formulation import DPProblem, Formulation, merge_options
from odtmip.models.rows import LinearRows, linear_sum, var_members
from odtmip.models.view import Choice, TreeView

#: From this many training rows :func:`solve_oct` asks HiGHS for IPM on LPs unless ``highs.lp_solver`` is set
#: (the root LP of these models takes seconds with dual simplex at N = 500, see ``pyomo_highs.md``).
IPM_FROM_ROWS = 2000

#: Coefficients of a decoded hyperplane below this magnitude are dropped (solver noise, far below mu / 2).
_ZERO_COEFFICIENT = 1e-7


@dataclass(frozen=True)
class OCTOptions:
    """Options of the [BD17] model.

    Attributes
    ----------
    alpha : float
        Complexity parameter alpha >= 0 of (24): objective = (weighted errors) / L_hat + alpha x (splits), [BD17]
        §3.1. alpha >= 1 always gives the single leaf.
    min_leaf : int
        N_min of (7): rows every non-empty leaf must hold (>= 1).
    hyperplanes : bool
        OCT-H, [BD17] §4: split on a . x < b over all numeric columns.
    mu : float
        OCT-H margin mu of the strict inequality (0.005 in [BD17] §4), in scaled units (0 < mu < 1).
    complexity : {"features", "splits"}
        OCT-H complexity term: alpha x (features used over all splits, sum s_jt, [BD17] §4) or alpha x
        (splits, sum d_t). OCT always counts splits.
    scaling : {"rank", "minmax"} or None
        Feature scaling: None picks "rank" for OCT and "minmax" for OCT-H (which needs an affine map).
    epsilon_floor : float
        Lower bound on each feature's epsilon (see the module's *Deviations*), 0 < epsilon_floor < 1.
    class_weight, min_specificity, min_sensitivity, positive
        Two-class objectives (:mod:`odtmip.models.rates`): (FN + C x FP) / L_hat, or FN (FP) under a specificity
        (sensitivity) floor; a target needs ``alpha = 0``.
    """

    alpha: float = 0.0
    min_leaf: int = 1
    hyperplanes: bool = False
    mu: float = 0.005
    complexity: str = "features"
    scaling: str | None = None
    epsilon_floor: float = 1e-4
    class_weight: float = 1.0
    min_specificity: float | None = None
    min_sensitivity: float | None = None
    positive: int = 1

    def __post_init__(self):
        rates.check_options(self)
        if rates.constrained(self) and self.alpha > 0:
            raise OptionError("a sensitivity/specificity target needs alpha = 0 (its objective is FN or FP)")
        if not (_is_real(self.alpha) and self.alpha >= 0):
            raise OptionError(f"alpha must be a finite number >= 0, got {self.alpha!r}")
        if not (isinstance(self.min_leaf, Integral) and not isinstance(self.min_leaf, bool) and self.min_leaf >= 1):
            raise OptionError(f"min_leaf (N_min) must be an integer >= 1, got {self.min_leaf!r}")
        check_switches(self)
        if not (_is_real(self.mu) and 0 < self.mu < 1):
            raise OptionError(f"mu must lie in (0, 1), got {self.mu!r}")
        if self.complexity not in ("features", "splits"):
            raise OptionError(f"complexity must be 'features' or 'splits', got {self.complexity!r}")
        if self.scaling not in (None, "rank", "minmax"):
            raise OptionError(f"scaling must be 'rank', 'minmax' or None, got {self.scaling!r}")
        if self.hyperplanes and self.scaling == "rank":
            raise OptionError("OCT-H needs scaling='minmax': a hyperplane in ranks is no hyperplane in the data")
        if not (_is_real(self.epsilon_floor) and 0 < self.epsilon_floor < 1):
            raise OptionError(f"epsilon_floor must lie in (0, 1), got {self.epsilon_floor!r}")

    @property
    def scale(self) -> str:
        """The scaling in use: ``scaling``, or its default for OCT / OCT-H."""
        return self.scaling or ("minmax" if self.hyperplanes else "rank")

    @property
    def solver_name(self) -> str:
        return "oct-h" if self.hyperplanes else "oct"


def _is_real(x) -> bool:
    return isinstance(x, Real) and not isinstance(x, bool) and math.isfinite(x)


def make_options(options: OCTOptions | None = None, **values) -> OCTOptions:
    """``options`` (default: all defaults) with ``values`` replacing fields.

    Unknown names are an :class:`OptionError`.
    """
    return merge_options(OCTOptions, options, values, "OCT")


# ------------------------------------------------------------------------------------------- data
@dataclass
class OCTFeature:
    """A feature x_j of the model and the raw column it comes from."""

    name: str
    column: int  # raw column index
    level: object = None  # categorical: the level this 0/1 feature indicates; None for a numeric column
    values: np.ndarray = field(default=None, repr=False)  # numeric: sorted distinct training values
    scaled: np.ndarray = field(default=None, repr=False)  # their images in [0, 1]
    epsilon: float = 1.0  # smallest gap between consecutive scaled values (floored)
    lo: float = 0.0  # min-max map x_scaled = (x - lo) / span (scaling "minmax")
    span: float = 1.0

    @property
    def numeric(self) -> bool:
        return self.level is None


@dataclass
class OCTData:
    """The data of [BD17] §3 derived from a :class:`Dataset`: scaled features, epsilons, weights, L_hat."""

    features: list[OCTFeature]
    X: np.ndarray  # n x p scaled feature values
    y: np.ndarray
    weights: np.ndarray
    n_classes: int
    baseline: float  # L_hat = total weight - largest class weight
    floored: bool  # True when some feature's epsilon was raised to epsilon_floor

    @property
    def n_samples(self) -> int:
        return len(self.y)

    @property
    def epsilon(self) -> np.ndarray:
        return np.array([f.epsilon for f in self.features], dtype=float)

    @property
    def normaliser(self) -> float:
        """L_hat, or 1 when the data are pure (L_hat = 0)."""
        return self.baseline if self.baseline > 0 else 1.0


def baseline_error(data: Dataset) -> float:
    """L_hat of [BD17] (24), read as the baseline error: total weight minus the largest class weight."""
    class_weight = np.bincount(data.y, weights=data.weights, minlength=data.n_classes)
    return float(class_weight.sum() - class_weight.max())


def prepare(data: Dataset, options: OCTOptions) -> OCTData:
    """The features of the model for ``data`` (see the module docstring)."""
    cols = raw_columns(data.raw)
    kind = {g.column: g for g in data.groups}
    features: list[OCTFeature] = []
    values: list[np.ndarray] = []
    floored = False
    for c, name in enumerate(data.feature_names):
        group = kind.get(c)
        if group is not None and group.kind == "categorical":
            if options.hyperplanes:
                raise DataError(f"OCT-H needs numeric columns for its hyperplanes; column {name!r} is categorical. "
                                "Encode it as 0/1 numeric columns, or use OCT (hyperplanes=False)")
            onehot = [(v, Split("subset", (c,), categories=(v,)).goes_right(cols).astype(float))
                      for v in group.levels]
            onehot = [(v, x) for v, x in onehot if 0 < x.sum() < len(x)]  # a single level is constant
            for v, x in onehot:
                features.append(OCTFeature(f"{name}={v}", c, level=v, epsilon=1.0))
                values.append(x)
            continue
        x = np.asarray(cols[c], dtype=float)
        distinct = np.unique(x)
        if len(distinct) < 2:
            continue  # constant: dropped
        if options.scale == "rank":
            scaled_distinct = np.arange(len(distinct)) / (len(distinct) - 1)
            scaled = np.searchsorted(distinct, x) / (len(distinct) - 1)
            lo, span = 0.0, 1.0
        else:
            lo, span = float(distinct[0]), float(distinct[-1] - distinct[0])
            scaled_distinct = (distinct - lo) / span
            scaled = (x - lo) / span
        gap = float(np.diff(scaled_distinct).min())
        floored |= gap < options.epsilon_floor
        features.append(OCTFeature(name, c, values=distinct, scaled=scaled_distinct,
                                   epsilon=max(gap, options.epsilon_floor), lo=lo, span=span))
        values.append(scaled)
    X = np.column_stack(values) if values else np.zeros((data.n_samples, 0))
    return OCTData(features, X, data.y, data.weights, data.n_classes, baseline_error(data), floored)


@dataclass(frozen=True)
class Heap:
    """The complete binary tree of depth D in heap numbering."""

    depth: int

    @property
    def branch_nodes(self) -> list[int]:
        """T_B = {1, ..., 2^D - 1}."""
        return list(range(1, 2**self.depth))

    @property
    def leaves(self) -> list[int]:
        """T_L = {2^D, ..., 2^{D+1} - 1}."""
        return list(range(2**self.depth, 2 ** (self.depth + 1)))

    def is_leaf(self, t: int) -> bool:
        return t >= 2**self.depth

    def left_ancestors(self, t: int) -> list[int]:
        """A_L(t): ancestors whose left branch lies on the path from the root to t."""
        out = []
        while t > 1:
            if t % 2 == 0:
                out.append(t // 2)
            t //= 2
        return out

    def right_ancestors(self, t: int) -> list[int]:
        """A_R(t): ancestors whose right branch lies on the path from the root to t."""
        out = []
        while t > 1:
            if t % 2 == 1:
                out.append(t // 2)
            t //= 2
        return out


def _check_depth(max_depth) -> int:
    if not isinstance(max_depth, Integral) or isinstance(max_depth, bool) or not 0 <= max_depth <= 12:
        raise OptionError(f"max_depth must be an integer between 0 and 12, got {max_depth!r}")
    return int(max_depth)


# ------------------------------------------------------------------------------------------- model
def build_model(data: Dataset, max_depth: int, options: OCTOptions = OCTOptions()) -> pyo.ConcreteModel:  # noqa: B008
    """Build the MIP (24) of [BD17] (or OCT-H) for ``data`` at depth ``max_depth``. Returns a ``pyo.ConcreteModel``.

    The model keeps its data preparation (``m.odata``), tree (``m.heap``) and options (``m.options``) so that
    :func:`decode_tree` and :func:`warm_start_values` can map between trees and variables.
    """
    od = prepare(data, options)
    heap = Heap(_check_depth(max_depth))
    m = pyo.ConcreteModel(name=options.solver_name)
    m.odata, m.heap, m.options = od, heap, options
    _add_index_sets(m, od, heap)
    if options.hyperplanes:
        _add_hyperplane_variables(m)  # a, a_hat, s, b, d of OCT-H
    else:
        _add_split_variables(m)  # a, b, d with (2), (3)
    _add_tree_structure(m, heap)  # (5) and the d = 0 fix
    _add_leaf_variables(m, od, options)  # z, l, c with (6), (7), (8), (16)-(18)
    if options.hyperplanes:
        _add_hyperplane_routing(m, od, heap, options)  # OCT-H routing
    else:
        _add_routing(m, od, heap)  # (13), (14)
    if not rates.active(options):  # (21) forces majority labels; a class weight or a target has its own errors
        _add_leaf_errors(m, od)  # L with (20)-(22)
    _add_objective(m, od, options)
    return m


def model_size(data: Dataset, max_depth: int, options: OCTOptions = OCTOptions()) -> dict:  # noqa: B008
    """``n_constraints``, ``n_variables`` and ``n_nonzeros`` of :func:`build_model`'s model as handed to HiGHS
    (what :func:`~odtmip.models.model_statistics` says: zero terms dropped), counted from :func:`prepare` without
    building the model."""
    od = prepare(data, options)
    D = _check_depth(max_depth)
    N, p, K, TB, TL = od.n_samples, len(od.features), od.n_classes, 2**D - 1, 2**D
    turns = D * 2 ** (D - 1) if D else 0  # (leaf t, ancestor m in A_L(t)) pairs; as many with m in A_R(t)
    x_terms = int(np.count_nonzero(od.X))  # the a-terms x_ij a_jm of N routing rows (zero coordinates drop out)
    if options.hyperplanes:
        cols = 3 * p * TB + 2 * TB  # a, a_hat, s; b, d
        rows = 5 * p * TB + 4 * TB  # a_hat >= a, a_hat >= -a, a <= s, -s <= a, s <= d; the next four per node:
        nnz = 10 * p * TB + 2 * (p + 1) * TB + 2 * 2 * TB  # l1_norm_if_split, some_feature_if_split, +-b <= d
        left = x_terms + 2 * N  # left_branch_margin: a_m . x_i, b_m, z_it
    else:
        cols = p * TB + 2 * TB  # a; b, d
        rows = 2 * TB  # (2): the p a's and d; (3): b, d
        nnz = (p + 1) * TB + 2 * TB
        left = N * (p + 2)  # (13): a_m . (x_i + eps) with eps > 0, b_m, z_it
    cols += N * TL + TL + K * TL + (0 if rates.active(options) else TL)  # z, l, c, L
    rows += max(TB - 1, 0) + turns  # (5): d_t, d_parent; the d = 0 fix: l_t, d_m
    nnz += 2 * max(TB - 1, 0) + 2 * turns
    rows, nnz = rows + 2 * N * turns, nnz + turns * (left + x_terms + 2 * N)  # (13) (left margin); (14) (right)
    rows, nnz = rows + N + N * TL, nnz + N * TL + 2 * N * TL  # (8): a point's z's; (6): z_it, l_t
    rows, nnz = rows + 2 * TL, nnz + TL * (N + 1) + TL * (K + 1)  # (7): N z's and l_t; (18): K c's and l_t
    for k in range(0 if rates.active(options) else K):  # (20), (21): L_t, c_kt and N_t - N_kt, the z's of other
        # classes' points of nonzero weight
        rows, nnz = rows + 2 * TL, nnz + 2 * TL * (int(np.count_nonzero(od.weights[od.y != k])) + 2)
    if rates.active(options):  # class_errors: e_class, c and the z's of the class's points of nonzero weight
        cols, rows = cols + K * TL, rows + K * TL
        nnz += sum(TL * (int(np.count_nonzero(od.weights[od.y == k])) + 2) for k in range(K))
        if rates.constrained(options):  # the target row: one e_class per leaf
            rows, nnz = rows + 1, nnz + TL
    return {"n_constraints": int(rows), "n_variables": int(cols), "n_nonzeros": int(nnz)}


def _add_index_sets(m, od: OCTData, heap: Heap) -> None:
    m.SAMPLES = pyo.RangeSet(0, od.n_samples - 1, doc="i: training points 1..n")
    m.FEATURES = pyo.Set(initialize=range(len(od.features)), doc="j: features 1..p, scaled to [0, 1]")
    m.CLASSES = pyo.Set(initialize=range(od.n_classes), doc="k: classes 1..K")
    m.BRANCH_NODES = pyo.Set(initialize=heap.branch_nodes, doc="T_B: branch nodes 1..2^D - 1")
    m.LEAVES = pyo.Set(initialize=heap.leaves, doc="T_L: leaves 2^D..2^{D+1} - 1")


def _add_split_variables(m) -> None:
    m.a = pyo.Var(m.FEATURES, m.BRANCH_NODES, domain=pyo.Binary, doc="a[j,t] = 1: node t splits on feature j")
    m.b = pyo.Var(m.BRANCH_NODES, bounds=(0, 1), doc="b[t]: threshold of node t (left iff a_t . x < b_t)")
    m.d = pyo.Var(m.BRANCH_NODES, domain=pyo.Binary, doc="d[t] = 1: node t applies a split")

    @m.Constraint(m.BRANCH_NODES, doc="[BD17] (2): one feature at a splitting node, none otherwise")
    def one_feature_if_split(m, t):
        return sum(m.a[j, t] for j in m.FEATURES) == m.d[t]

    @m.Constraint(m.BRANCH_NODES, doc="[BD17] (3): 0 <= b_t <= d_t")
    def threshold_only_if_split(m, t):
        return m.b[t] <= m.d[t]


def _add_hyperplane_variables(m) -> None:
    m.a = pyo.Var(m.FEATURES, m.BRANCH_NODES, bounds=(-1, 1), doc="a[j,t]: coefficient of feature j at node t")
    m.a_hat = pyo.Var(m.FEATURES, m.BRANCH_NODES, bounds=(0, 1), doc="a_hat[j,t] >= |a[j,t]|")
    m.s = pyo.Var(m.FEATURES, m.BRANCH_NODES, domain=pyo.Binary, doc="s[j,t] = 1: feature j is used at node t")
    m.b = pyo.Var(m.BRANCH_NODES, bounds=(-1, 1), doc="b[t]: threshold of node t (left iff a_t . x < b_t)")
    m.d = pyo.Var(m.BRANCH_NODES, domain=pyo.Binary, doc="d[t] = 1: node t applies a split")

    @m.Constraint(m.FEATURES, m.BRANCH_NODES, doc="[BD17] §4 (OCT-H): a_hat >= a")
    def a_hat_upper_a(m, j, t):
        return m.a_hat[j, t] >= m.a[j, t]

    @m.Constraint(m.FEATURES, m.BRANCH_NODES, doc="[BD17] §4 (OCT-H): a_hat >= -a")
    def a_hat_lower_a(m, j, t):
        return m.a_hat[j, t] >= -m.a[j, t]

    @m.Constraint(m.BRANCH_NODES, doc="[BD17] §4 (OCT-H): sum_j a_hat_jt <= d_t")
    def l1_norm_if_split(m, t):
        return sum(m.a_hat[j, t] for j in m.FEATURES) <= m.d[t]

    @m.Constraint(m.FEATURES, m.BRANCH_NODES, doc="[BD17] §4 (OCT-H): a_jt <= s_jt")
    def a_within_s(m, j, t):
        return m.a[j, t] <= m.s[j, t]

    @m.Constraint(m.FEATURES, m.BRANCH_NODES, doc="[BD17] §4 (OCT-H): -s_jt <= a_jt")
    def minus_a_within_s(m, j, t):
        return -m.s[j, t] <= m.a[j, t]

    @m.Constraint(m.FEATURES, m.BRANCH_NODES, doc="[BD17] §4 (OCT-H): s_jt <= d_t")
    def s_only_if_split(m, j, t):
        return m.s[j, t] <= m.d[t]

    @m.Constraint(m.BRANCH_NODES, doc="[BD17] §4 (OCT-H): sum_j s_jt >= d_t")
    def some_feature_if_split(m, t):
        return sum(m.s[j, t] for j in m.FEATURES) >= m.d[t]

    @m.Constraint(m.BRANCH_NODES, doc="[BD17] §4 (OCT-H): b_t <= d_t")
    def threshold_only_if_split(m, t):
        return m.b[t] <= m.d[t]

    @m.Constraint(m.BRANCH_NODES, doc="[BD17] §4 (OCT-H): -d_t <= b_t")
    def minus_threshold_only_if_split(m, t):
        return -m.d[t] <= m.b[t]


def _add_tree_structure(m, heap: Heap) -> None:
    inner = [t for t in heap.branch_nodes if t > 1]
    m.INNER_BRANCH_NODES = pyo.Set(initialize=inner, doc="T_B without the root")

    @m.Constraint(m.INNER_BRANCH_NODES, doc="[BD17] (5): a node splits only if its parent does")
    def split_only_below_split(m, t):
        return m.d[t] <= m.d[t // 2]

    pairs = [(t, a) for t in heap.leaves for a in heap.left_ancestors(t)]
    m.l = pyo.Var(m.LEAVES, domain=pyo.Binary, doc="l[t] = 1: leaf t contains points")

    @m.Constraint(pairs, doc="d = 0 fix (see module docstring): leaves left of a non-splitting node are empty")
    def no_split_sends_all_right(m, t, ancestor):
        return m.l[t] <= m.d[ancestor]


def _add_leaf_variables(m, od: OCTData, options: OCTOptions) -> None:
    w, y, n, leaves = od.weights, od.y, od.n_samples, m.heap.leaves
    m.z = pyo.Var(m.SAMPLES, m.LEAVES, domain=pyo.Binary, doc="z[i,t] = 1: point i is in leaf t")
    m.c = pyo.Var(m.CLASSES, m.LEAVES, domain=pyo.Binary, doc="c[k,t] = 1: leaf t predicts class k")
    z = var_members(m.z)  # z[i, t] is z[i * |T_L| + (position of t in T_L)]
    in_leaf = {t: np.arange(n) * len(leaves) + p for p, t in enumerate(leaves)}  # positions of z[:, t]

    @m.Expression(m.LEAVES, doc="[BD17] (16): N_t, the (weighted) points in leaf t")
    def N(m, t):
        return linear_sum(z, in_leaf[t], w)

    @m.Expression(m.CLASSES, m.LEAVES, doc="[BD17] (17): N_kt, the (weighted) points of class k in leaf t")
    def N_k(m, k, t):
        return linear_sum(z, in_leaf[t][y == k], w[y == k])

    # The per-point rows (8) and (6), assembled with numpy (see odtmip.models.rows).
    points = np.arange(n)
    m.one_leaf_per_point = LinearRows(
        m.SAMPLES, keys=(points,), variables=[m.z], rows=np.repeat(points, len(leaves)), cols=np.arange(len(z)),
        coefs=np.ones(len(z)), lower=1, upper=1, doc="[BD17] (8): every point is in exactly one leaf")
    m.point_only_in_nonempty_leaf = LinearRows(  # z[i, t] - l[t] <= 0, row i * |T_L| + (position of t)
        m.SAMPLES, m.LEAVES, keys=(np.repeat(points, len(leaves)), np.tile(leaves, n)), variables=[m.z, m.l],
        rows=np.repeat(np.arange(len(z)), 2), cols=np.column_stack([np.arange(len(z)), len(z) + np.tile(
            np.arange(len(leaves)), n)]).ravel(), coefs=np.tile([1.0, -1.0], len(z)), upper=0,
        doc="[BD17] (6): points only in non-empty leaves")

    @m.Constraint(m.LEAVES, doc="[BD17] (7): a non-empty leaf holds at least N_min points (rows)")
    def min_points_in_leaf(m, t):
        return linear_sum(z, in_leaf[t], np.ones(n)) >= options.min_leaf * m.l[t]

    @m.Constraint(m.LEAVES, doc="[BD17] (18): a non-empty leaf predicts one class")
    def one_label_per_nonempty_leaf(m, t):
        return sum(m.c[k, t] for k in m.CLASSES) == m.l[t]


def _branch_rows(m, od: OCTData, ancestors, coef_x: np.ndarray, coef_z: float, lower: float, upper: float,
                 doc: str) -> LinearRows:
    """Routing rows  lower <= sum_j coef_x[i, j] a[j, m] - b[m] + coef_z z[i, t] <= upper  for every point i,
    leaf t and ancestor m of t in ``ancestors(t)``, keyed (i, t, m); terms with coef_x = 0 are left out.

    Assembled with numpy for all points at once (see :mod:`odtmip.models.rows`): these rows are most of the
    model, N x D rows per leaf.
    """
    heap, n, p = m.heap, od.n_samples, coef_x.shape[1]
    node_at = {t: q for q, t in enumerate(heap.branch_nodes)}
    leaf_at = {t: q for q, t in enumerate(heap.leaves)}
    pairs = [(t, a) for t in heap.leaves for a in heap.branch_nodes if a in ancestors(t)]  # in index order
    n_a, n_b = len(m.a), len(m.b)  # columns: a[j, m] at j |T_B| + (position of m), then b, then z
    # cols[i, q]: the columns of row (i, pairs[q]); rows point by point, as Pyomo iterates the index
    cols = np.empty((n, len(pairs), p + 2), dtype=np.int64)
    coefs = np.empty((n, len(pairs), p + 2))
    for q, (t, a) in enumerate(pairs):
        cols[:, q, :p] = np.arange(p) * len(heap.branch_nodes) + node_at[a]
        cols[:, q, p] = n_a + node_at[a]
        cols[:, q, p + 1] = n_a + n_b + np.arange(n) * len(heap.leaves) + leaf_at[t]
        coefs[:, q, :p] = coef_x
        coefs[:, q, p] = -1.0
        coefs[:, q, p + 1] = coef_z
    keep = coefs != 0
    rows, _ = np.nonzero(keep.reshape(n * len(pairs), p + 2))
    leaf, ancestor = (np.tile([pair[e] for pair in pairs], n) for e in (0, 1))
    return LinearRows(m.SAMPLES, m.LEAVES, m.BRANCH_NODES, keys=(np.repeat(np.arange(n), len(pairs)), leaf, ancestor),
                      variables=[m.a, m.b, m.z], rows=rows, cols=cols[keep], coefs=coefs[keep], lower=lower,
                      upper=upper, doc=doc)


def _add_routing(m, od: OCTData, heap: Heap) -> None:
    X, eps = od.X, od.epsilon
    eps_max = float(eps.max()) if len(eps) else 0.0
    # (13) a.(x_i + eps) <= b + (1 + eps_max)(1 - z)  <=>  a.(x_i + eps) - b + (1 + eps_max) z <= 1 + eps_max
    m.left_branch_strict = _branch_rows(
        m, od, heap.left_ancestors, X + eps, 1 + eps_max, -np.inf, 1 + eps_max,
        "[BD17] (13): a_m . (x_i + eps) <= b_m + (1 + eps_max)(1 - z_it), m in A_L(t)")
    # (14) a.x_i >= b - (1 - z)  <=>  a.x_i - b - z >= -1
    m.right_branch = _branch_rows(m, od, heap.right_ancestors, X, -1.0, -1.0, np.inf,
                                  "[BD17] (14): a_m . x_i >= b_m - (1 - z_it), m in A_R(t)")


def _add_hyperplane_routing(m, od: OCTData, heap: Heap, options: OCTOptions) -> None:
    X, mu = od.X, options.mu
    # a.x + mu <= b + (2 + mu)(1 - z)  <=>  a.x - b + (2 + mu) z <= 2
    m.left_branch_margin = _branch_rows(m, od, heap.left_ancestors, X, 2 + mu, -np.inf, 2.0,
                                        "[BD17] §4 (OCT-H): a_m . x_i + mu <= b_m + (2 + mu)(1 - z_it), m in A_L(t)")
    # a.x >= b - 2(1 - z)  <=>  a.x - b - 2 z >= -2
    m.right_branch_hyperplane = _branch_rows(m, od, heap.right_ancestors, X, -2.0, -2.0, np.inf,
                                             "[BD17] §4 (OCT-H): a_m . x_i >= b_m - 2(1 - z_it), m in A_R(t)")


def _add_leaf_errors(m, od: OCTData) -> None:
    W = float(od.weights.sum())  # big-M n of (20)/(21): N_t <= W
    m.L = pyo.Var(m.LEAVES, domain=pyo.NonNegativeReals, doc="L[t] >= 0 ((22)): misclassified weight in leaf t")

    @m.Constraint(m.CLASSES, m.LEAVES, doc="[BD17] (20): L_t >= N_t - N_kt - W(1 - c_kt)")
    def error_lower(m, k, t):
        return m.L[t] >= m.N[t] - m.N_k[k, t] - W * (1 - m.c[k, t])

    @m.Constraint(m.CLASSES, m.LEAVES, doc="[BD17] (21): L_t <= N_t - N_kt + W c_kt")
    def error_upper(m, k, t):
        return m.L[t] <= m.N[t] - m.N_k[k, t] + W * m.c[k, t]


def _add_objective(m, od: OCTData, options: OCTOptions) -> None:
    if rates.active(options):  # per-class errors: FN (FP) under a target, else FN + C FP
        class_error = rates.add_class_errors(m, m.LEAVES, m.N_k, m.c, float(od.weights.sum()), od.n_classes)
        errors = rates.add_error_objective(m, class_error, od.y, od.weights, od.n_classes, options)
        if rates.constrained(options):
            m.missed = pyo.Objective(expr=errors, sense=pyo.minimize,
                                     doc="[GKLMS] (16): missed positives (negatives) under the target")
            return
        errors = errors / od.normaliser
    else:
        errors = sum(m.L[t] for t in m.LEAVES) / od.normaliser
    if options.hyperplanes and options.complexity == "features":
        size = sum(m.s[j, t] for j in m.FEATURES for t in m.BRANCH_NODES)
    else:
        size = sum(m.d[t] for t in m.BRANCH_NODES)
    m.penalised_error = pyo.Objective(expr=errors + options.alpha * size, sense=pyo.minimize,
                                      doc="[BD17] (24): (1/L_hat) sum_t L_t + alpha x (splits or features used)")


# ------------------------------------------------------------------------------------------- loss
def complexity(tree: Tree, options: OCTOptions) -> int:
    """What alpha multiplies: branch nodes, or for OCT-H with ``complexity="features"`` the columns used."""
    if options.hyperplanes and options.complexity == "features":
        return sum(len(n.split.columns) for n in tree.nodes if not n.is_leaf)
    return tree.n_branch_nodes


def loss(data: Dataset, tree: Tree, options: OCTOptions) -> float:
    """odtmip's loss for ``tree``: (weighted errors) / L_hat + alpha x complexity, recomputed by routing.

    L_hat is :func:`baseline_error` (1 if the data are pure). This is the model's objective (24).
    """
    if rates.constrained(options):  # the missed weight under the target (odtmip.models.rates)
        return rates.tree_errors(data, tree, options)
    L_hat = baseline_error(data)
    errors = rates.tree_errors(data, tree, options) if rates.active(options) else data.misclassifications(tree)
    return errors / (L_hat if L_hat > 0 else 1.0) + options.alpha * complexity(tree, options)


# ------------------------------------------------------------------------------------ decode / start
def node_splits(m, data: Dataset) -> dict:
    """The split each branch node of the model applies, on the original scale.

    Returns ``{t: Split}``, or ``{t: "left"}`` / ``{t: "right"}`` for a node that sends every training
    point one way (d_t = 0 sends everybody right). A cut is placed midway in the margin of (13) (eps_j / 2,
    OCT-H: mu / 2), so tolerance-sized violations of (13) and (14) cannot move a training point.
    """
    od, options = m.odata, m.options
    cols = raw_columns(data.raw)
    out: dict = {}
    for t in m.heap.branch_nodes:
        if pyo.value(m.d[t]) < 0.5:
            out[t] = "right"
            continue
        b = float(pyo.value(m.b[t]))
        if options.hyperplanes:
            out[t] = _hyperplane_split(od, m, t, b, options, cols)
            continue
        j = max(m.FEATURES, key=lambda j: pyo.value(m.a[j, t]))
        f = od.features[j]
        cut = b - f.epsilon / 2  # left iff x_scaled < cut
        if not f.numeric:
            out[t] = "right" if cut <= 0 else ("left" if cut > 1 else
                                               Split("subset", (f.column,), categories=(f.level,)))
            continue
        k = int(np.searchsorted(f.scaled, cut, side="left"))  # scaled values < cut go left
        if k == 0:
            out[t] = "right"
        elif k == len(f.values):
            out[t] = "left"
        else:
            out[t] = Split("threshold", (f.column,), threshold=float(midpoint(f.values[k - 1], f.values[k])))
    return out


def _hyperplane_split(od: OCTData, m, t: int, b: float, options: OCTOptions, cols):
    """OCT-H node t as ``Split("hyperplane")`` on the original scale (see :func:`node_splits`)."""
    a = {j: float(pyo.value(m.a[j, t])) for j in m.FEATURES}
    used = [j for j in m.FEATURES if abs(a[j]) > _ZERO_COEFFICIENT]
    cut = b - options.mu / 2  # left iff a . x_scaled < cut
    if not used:
        return "left" if 0 < cut else "right"
    # a . (x - lo) / span >= cut  <=>  sum_j a_j (u / span_j) x_j >= u cut + sum_j a_j (u / span_j) lo_j for u > 0;
    # u = the smallest span keeps u / span_j <= 1 (a_j / span_j overflows for a span below 1e-308)
    feats = [od.features[j] for j in used]
    unit = min(f.span for f in feats)
    weights = np.array([a[j] * (unit / f.span) for j, f in zip(used, feats, strict=True)])
    threshold = unit * cut + sum(w * f.lo for w, f in zip(weights, feats, strict=True))
    scale = float(np.abs(weights).max())  # a positive multiple is the same split: largest |weight| = 1 reads best
    split = Split("hyperplane", tuple(f.column for f in feats), threshold=float(threshold / scale),
                  weights=tuple(float(v) for v in weights / scale))
    right = split.goes_right(cols)
    scaled_right = od.X[:, used] @ np.array([a[j] for j in used]) >= cut
    if (right != scaled_right).any() and scaled_right.any() and not scaled_right.all():
        split = _between_scores(split, cols, scaled_right)
        right = split.goes_right(cols)
    return "right" if right.all() else ("left" if not right.any() else split)


def _between_scores(split: Split, cols, right: np.ndarray) -> Split:
    """``split`` with its threshold between the training scores ``w . x`` of the rows that go left and right (as
    ``right`` says), when the scores separate them: on the original scale the mapped threshold can round onto a
    training score (adjacent doubles). Otherwise ``split`` unchanged."""
    scores = sum(w * np.asarray(cols[c], dtype=float) for c, w in zip(split.columns, split.weights, strict=True))
    low, high = scores[~right].max(), scores[right].min()
    if not low < high:
        return split
    # w . x >= t goes right, so low < t <= high: midpoint's a <= t < b mirrored
    return replace(split, threshold=float(-midpoint(-high, -low)))


def route(m, data: Dataset, splits: dict | None = None) -> np.ndarray:
    """The model leaf (heap index) each training row reaches through the decoded splits of :func:`node_splits`.

    Compare with :func:`assignment` (the leaves the solver chose, z) to check epsilon and tolerances.
    """
    splits = node_splits(m, data) if splits is None else splits
    cols = raw_columns(data.raw)
    node = np.ones(data.n_samples, dtype=np.int64)
    for _ in range(m.heap.depth):
        nxt = np.empty_like(node)
        for t in np.unique(node):
            rows = node == t
            split = splits[int(t)]
            if isinstance(split, str):
                right = np.full(int(rows.sum()), split == "right")
            else:
                right = split.goes_right([c[rows] for c in cols])
            nxt[rows] = 2 * t + right.astype(np.int64)
        node = nxt
    return node


def assignment(m) -> np.ndarray:
    """The leaf (heap index) of each training row in the model's current solution: the t with z_it = 1."""
    leaves = m.heap.leaves
    z = np.array([[pyo.value(m.z[i, t]) for t in leaves] for i in m.SAMPLES]).reshape(len(m.SAMPLES), len(leaves))
    return np.asarray(leaves)[z.argmax(axis=1)]


def decode_tree(m, data: Dataset) -> Tree:
    """The tree of the model's current values, on the original scale (see the module's *Deviations*).

    d_t = 0 nodes send everybody right; splits sending every training row to one side are removed; sibling
    leaves with one label are merged. Training predictions are those of the model's (a, b, c), and the tree
    has no more splits (OCT-H: used features) than the model counts, so :func:`loss` never exceeds the model's
    objective for a solution whose routing matches z.
    """
    heap = m.heap
    splits = node_splits(m, data)
    labels = {}
    for t in heap.leaves:
        scores = [pyo.value(m.c[k, t]) for k in m.CLASSES]
        labels[t] = int(np.argmax(scores))

    def build(t):
        if heap.is_leaf(t):
            return leaf(labels[t])
        split = splits[t]
        if split == "right":
            return build(2 * t + 1)
        if split == "left":
            return build(2 * t)
        return branch(split, build(2 * t), build(2 * t + 1))

    return data.new_tree(simplify(data, build(1)))


def simplify(data: Dataset, spec, prune_penalty: float | None = None, options: OCTOptions | None = None):
    """A tree spec equal to ``spec`` on the training rows, without splits that leave one side empty and with
    same-label sibling leaves merged.

    With ``prune_penalty`` (in units of weighted errors per unit of :func:`complexity`), also replace a subtree
    by the majority leaf when that costs no more: cost-complexity pruning, used for the CART start.
    """
    cols = raw_columns(data.raw)
    y, w, K = data.y, data.weights, data.n_classes
    features_count = options is not None and options.hyperplanes and options.complexity == "features"

    def units(split) -> int:
        return len(split.columns) if features_count else 1

    def rec(spec, rows):
        counts = np.bincount(y[rows], weights=w[rows], minlength=K)
        if spec.split is None:
            return leaf(spec.label), float(counts.sum() - counts[spec.label])
        right = np.zeros(len(y), dtype=bool)
        right[rows] = spec.split.goes_right([c[rows] for c in cols])
        left = rows & ~right
        right &= rows
        if not right.any():
            return rec(spec.left, rows)
        if not left.any():
            return rec(spec.right, rows)
        (ls, lc), (rs, rc) = rec(spec.left, left), rec(spec.right, right)
        if ls.split is None and rs.split is None and ls.label == rs.label:
            return leaf(ls.label), lc + rc
        keep = lc + rc + (0.0 if prune_penalty is None else prune_penalty * units(spec.split))
        if prune_penalty is not None:
            as_leaf = float(counts.sum() - counts.max())
            if as_leaf <= keep:
                return leaf(int(np.argmax(counts))), as_leaf
        return branch(spec.split, ls, rs), keep

    return rec(spec, np.ones(len(y), dtype=bool))[0]


@dataclass
class _Embedding:
    """Values of a tree placed in the complete depth-D tree."""

    d: dict = field(default_factory=dict)  # t -> 0/1
    a: dict = field(default_factory=dict)  # (j, t) -> value
    b: dict = field(default_factory=dict)  # t -> value
    leaf_of: np.ndarray | None = None  # heap leaf of each training row
    label: dict = field(default_factory=dict)  # non-empty heap leaf -> class
    free_labels: bool = False  # the model lets a leaf predict any class (no (21)): keep the tree's labels


def warm_start_values(m, data: Dataset, tree: Tree) -> list | None:
    """(variable, value) pairs for every variable of the model that reproduce ``tree``, or None.

    A branch node of ``tree`` is placed at heap node t if some feature (OCT-H: some direction) sends the training
    rows reaching t to the same sides with the model's strict margin (eps_j, or mu); the children may be swapped
    (a split ``colour not in {red}`` is the feature ``colour=red`` with children exchanged). A leaf of ``tree`` at
    a branch node t sets d_t = 0 and continues to the right child (left subtree empty, d = 0 fix). Splits that
    send every reaching row one way are skipped. Leaf labels are the weighted majority of the reaching rows
    (as (21) requires), or the tree's under a class weight or a target (where (21) is not in the model). Returns
    None when the tree is deeper than the model or a split has no counterpart.
    """
    od, heap, options = m.odata, m.heap, m.options
    cols = raw_columns(data.raw)
    emb = _Embedding(leaf_of=np.zeros(od.n_samples, dtype=np.int64),
                     free_labels=rates.active(options) or getattr(m, "labels_free", False))
    ok = _place(tree, 0, 1, np.ones(od.n_samples, dtype=bool), emb, od, heap, options, cols)
    if not ok:
        return None
    return _start_pairs(m, emb)


def _place(tree: Tree, node: int | None, t: int, rows: np.ndarray, emb: _Embedding, od: OCTData, heap: Heap,
           options: OCTOptions, cols) -> bool:
    """Place tree node ``node`` (None: nothing, an empty subtree) at heap node ``t`` for the training ``rows``."""
    spec = None if node is None else tree.nodes[node]
    if heap.is_leaf(t):
        if spec is not None and not spec.is_leaf:
            right = spec.split.goes_right([c[rows] for c in cols])
            if right.all() or not right.any():  # a split that does not split these rows
                return _place(tree, spec.right if right.all() else spec.left, t, rows, emb, od, heap, options, cols)
            return False  # too deep
        if rows.any():
            emb.leaf_of[rows] = t
            counts = np.bincount(od.y[rows], weights=od.weights[rows], minlength=od.n_classes)
            keep = spec is not None and (emb.free_labels or counts[spec.label] == counts.max())
            prefer = spec.label if keep else int(np.argmax(counts))  # (21) needs the majority, a target may not
            emb.label[t] = prefer
        return True
    if spec is None or spec.is_leaf:
        emb.d[t] = 0
        return (_place(tree, None, 2 * t, np.zeros_like(rows), emb, od, heap, options, cols)
                and _place(tree, node, 2 * t + 1, rows, emb, od, heap, options, cols))
    right = np.zeros_like(rows)
    right[rows] = spec.split.goes_right([c[rows] for c in cols])
    left = rows & ~right
    if not left.any() or not right.any():
        return _place(tree, spec.right if not left.any() else spec.left, t, rows, emb, od, heap, options, cols)
    found = _find_cut(od, options, spec.split, left, right)
    if found is None:
        return False
    coefficients, b, swapped = found
    emb.d[t] = 1
    emb.b[t] = b
    for j, value in coefficients.items():
        emb.a[(j, t)] = value
    (l_node, l_rows), (r_node, r_rows) = ((spec.left, left), (spec.right, right))
    if swapped:
        (l_node, l_rows), (r_node, r_rows) = (r_node, r_rows), (l_node, l_rows)
    return (_place(tree, l_node, 2 * t, l_rows, emb, od, heap, options, cols)
            and _place(tree, r_node, 2 * t + 1, r_rows, emb, od, heap, options, cols))


def _find_cut(od: OCTData, options: OCTOptions, split: Split, left: np.ndarray, right: np.ndarray):
    """Coefficients a (dict j -> value), threshold b and whether the children swap, such that the model's
    routing sends ``left`` rows left and ``right`` rows right (or the reverse, swapped); None if impossible."""
    X = od.X
    own = [j for j, f in enumerate(od.features) if f.column in split.columns]
    others = [j for j in range(len(od.features)) if j not in own]
    if options.hyperplanes and split.kind == "hyperplane":
        by_column = {f.column: j for j, f in enumerate(od.features)}
        if all(c in by_column for c in split.columns):
            a = np.zeros(len(od.features))
            for c, weight in zip(split.columns, split.weights, strict=True):
                a[by_column[c]] = weight * od.features[by_column[c]].span  # direction in scaled units
            norm = np.abs(a).sum()
            if norm > 0:
                cut = _margin_cut(X @ (a / norm), left, right, options.mu)
                if cut is not None:
                    return {j: float(a[j] / norm) for j in np.flatnonzero(a)}, cut, False
        return None
    for j in own + others:
        if options.hyperplanes:
            for sign in (1.0, -1.0):
                cut = _margin_cut(sign * X[:, j], left, right, options.mu)
                if cut is not None:
                    return {j: sign}, cut, False
        else:
            eps = od.features[j].epsilon
            for swapped in (False, True):
                lo, hi = (right, left) if swapped else (left, right)
                cut = _margin_cut(X[:, j], lo, hi, eps)
                if cut is not None:
                    return {j: 1.0}, cut, swapped
    return None


def _margin_cut(values: np.ndarray, left: np.ndarray, right: np.ndarray, margin: float) -> float | None:
    """b = min of ``values`` on the right rows if every left row's value + margin <= b, else None."""
    b = float(values[right].min())
    return b if float(values[left].max()) + margin <= b + 1e-12 else None


def _start_pairs(m, emb: _Embedding) -> list:
    od, options = m.odata, m.options
    values: list = []
    for t in m.BRANCH_NODES:
        values.append((m.d[t], float(emb.d.get(t, 0))))
        values.append((m.b[t], float(emb.b.get(t, 0.0))))
        for j in m.FEATURES:
            a = emb.a.get((j, t), 0.0)
            values.append((m.a[j, t], a))
            if options.hyperplanes:
                values.append((m.a_hat[j, t], abs(a)))
                values.append((m.s[j, t], 1.0 if a != 0 else 0.0))
    for t in m.LEAVES:
        rows = emb.leaf_of == t
        label = emb.label.get(t)
        values.append((m.l[t], 1.0 if label is not None else 0.0))
        for k in m.CLASSES:
            values.append((m.c[k, t], 1.0 if label == k else 0.0))
        if not rates.active(options):
            error = 0.0 if label is None else float(od.weights[rows & (od.y != label)].sum())
            values.append((m.L[t], error))
        for i in m.SAMPLES:
            values.append((m.z[i, t], 1.0 if rows[i] else 0.0))
    return values


def cart_tree(data: Dataset, max_depth: int, options: OCTOptions, random_state: int = 0) -> Tree:
    """The paper's warm start: scikit-learn CART of depth D with min_samples_leaf = N_min on the model's
    scaled features, mapped to raw-column splits and pruned with the same alpha (:func:`simplify`)."""
    from sklearn.tree import DecisionTreeClassifier

    od = prepare(data, options)
    majority = int(np.argmax(np.bincount(od.y, weights=od.weights, minlength=od.n_classes)))
    if max_depth == 0 or not od.features:
        return data.new_tree(leaf(majority))
    cart = DecisionTreeClassifier(max_depth=max_depth, min_samples_leaf=options.min_leaf, random_state=random_state)
    cart.fit(od.X, od.y, sample_weight=od.weights)
    inner = cart.tree_
    classes = cart.classes_

    def build(n):
        if inner.children_left[n] < 0:
            return leaf(int(classes[int(np.argmax(inner.value[n][0]))]))
        f = od.features[inner.feature[n]]
        thr = float(inner.threshold[n])  # CART: left iff x_scaled <= thr
        if f.numeric:
            k = int(np.searchsorted(f.scaled, thr, side="right"))  # values going left
            k = min(max(k, 1), len(f.values) - 1)
            split = Split("threshold", (f.column,), threshold=float(midpoint(f.values[k - 1], f.values[k])))
        else:
            split = Split("subset", (f.column,), categories=(f.level,))
        return branch(split, build(inner.children_left[n]), build(inner.children_right[n]))

    penalty = options.alpha * od.normaliser
    return data.new_tree(simplify(data, build(0), prune_penalty=penalty, options=options))


# ------------------------------------------------------------------------------------------- DP
def dp_equivalent(data: Dataset, options: OCTOptions = OCTOptions()) -> tuple[Dataset, float, int]:  # noqa: B008
    """The DP problem whose optimum is L_hat x the OCT optimum: ``(dataset, penalty, min_leaf)``.

    The dataset's binary columns are every midpoint threshold ``x > t`` of each numeric column and one
    ``column in {v}`` per level of each categorical column; penalty = alpha x L_hat per branch node; min_leaf =
    N_min. Then ``solve_dp(dataset, D, penalty=penalty, min_leaf=min_leaf).objective == L_hat x OCT(D)`` for
    axis-aligned OCT, as long as no epsilon was floored (``prepare(data, options).floored``).

    For OCT-H only thresholds whose scaled gap is at least mu are kept: the DP then searches the axis-aligned
    trees OCT-H can represent, an upper bound (used as its warm start).
    """
    columns, penalty, min_leaf = dp_columns(data, options)
    return data.derive(columns), penalty, min_leaf


def dp_columns(data: Dataset, options: OCTOptions = OCTOptions()) -> tuple[list[BinaryColumn], float, int]:  # noqa: B008
    """The binary columns of :func:`dp_equivalent`'s dataset (not built: ConTree searches them on the raw columns),
    its penalty and minimum leaf size."""
    od = prepare(data, options)  # raises for OCT-H on categorical data
    group_of = {g.column: gi for gi, g in enumerate(data.groups)}
    columns: list[BinaryColumn] = []
    for f in od.features:
        g = group_of.get(f.column, 0)
        name = data.feature_names[f.column]
        if not f.numeric:
            columns.append(BinaryColumn(f.name, Split("subset", (f.column,), categories=(f.level,)), g))
            continue
        gaps = np.diff(f.scaled)
        for k in range(len(f.values) - 1):
            if options.hyperplanes and gaps[k] < options.mu:
                continue
            t = float(midpoint(f.values[k], f.values[k + 1]))
            columns.append(BinaryColumn(f"{name}>{t:.6g}", Split("threshold", (f.column,), threshold=t), g))
    return columns, options.alpha * od.normaliser, options.min_leaf


# ------------------------------------------------------------------------------------------- solve
# ------------------------------------------------------------------------------------------- registry


def _make_options(max_depth, options, values) -> OCTOptions:
    _check_depth(max_depth)
    return make_options(options, **values)


def _dp_starts(data: Dataset, max_depth: int, options: OCTOptions) -> list[DPProblem]:
    """:func:`dp_equivalent` at depth D: OCT's own optimum (solved by ConTree on the raw columns), and for OCT-H
    the best axis-aligned tree it can represent (an upper bound); nothing when no column has a threshold (HiGHS
    finds the single leaf)."""
    columns, penalty, min_leaf = dp_columns(data, options)
    if not columns or rates.constrained(options) and min_leaf > 1:
        return []
    if options.hyperplanes or rates.constrained(options):  # OCT-H's thresholds; a target: the front on the columns
        view, two_class = rates.dp_view(data, data.derive(columns), options)
        return [DPProblem(view, max_depth, max_depth, exact=False, penalty=penalty, min_leaf=min_leaf,
                          two_class=two_class)]
    raw, _ = rates.dp_view(data, data, options)  # a class weight: as row weights
    return [DPProblem(raw, max_depth, max_depth, exact=False, penalty=penalty, min_leaf=min_leaf, solver="contree")]


def _dp_problem(data: Dataset, max_depth: int, options: OCTOptions) -> DPProblem:
    """L_hat x OCT(D) = the DP optimum of :func:`dp_equivalent` (axis-aligned OCT; exact unless an epsilon was
    floored)."""
    if options.hyperplanes:
        raise OptionError("OCT-H has no DP equivalent (hyperplane splits); check the axis-aligned OCT")
    columns, penalty, min_leaf = dp_columns(data, options)
    exact = not prepare(data, options).floored
    if rates.constrained(options):  # the loss is the DP's objective, the missed weight under the target
        if min_leaf > 1:
            raise OptionError("the DP's sensitivity/specificity targets have no minimum leaf size (N_min)")
        view, two_class = rates.dp_view(data, data.derive(columns), options)
        return DPProblem(view, max_depth, max_depth, exact, two_class=two_class)
    # ConTree searches the same splits (every midpoint, every level) without a column per midpoint; a class
    # weight as row weights
    raw, _ = rates.dp_view(data, data, options)
    return DPProblem(raw, max_depth, max_depth, exact, penalty, min_leaf, scale=baseline_error(data) or 1.0,
                     solver="contree")


def dp_bound_problem(data: Dataset, max_depth: int, options: OCTOptions) -> DPProblem:
    """The DP problem whose values below each split bound the model's loss (``dp_bounds``,
    :mod:`odtmip.models.view`): :func:`dp_equivalent` (every midpoint, every level; penalty alpha L_hat, N_min).
    An OptionError where its trees are not the model's: a floored epsilon, hyperplanes, a target with N_min."""
    if options.hyperplanes:
        raise OptionError("dp_bounds: OCT-H's hyperplane splits have no axis-aligned DP problem; use dp_bounds='none'")
    if prepare(data, options).floored:
        raise OptionError("dp_bounds: an epsilon was raised to epsilon_floor, so the model cannot make every "
                          "midpoint split the DP makes; use dp_bounds='none' or a smaller epsilon_floor")
    derived, penalty, min_leaf = dp_equivalent(data, options)
    view, two_class = rates.bound_view(data, derived, options)
    if two_class:  # the loss is the missed weight under the target, as the DP's (whose fronts have no N_min)
        if min_leaf > 1:
            raise OptionError("dp_bounds: the DP's sensitivity/specificity fronts have no minimum leaf size (N_min)")
        return DPProblem(view, max_depth, max_depth, two_class=two_class)
    return DPProblem(view, max_depth, max_depth, penalty=penalty, min_leaf=min_leaf,
                     scale=baseline_error(data) or 1.0)


def tree_view(m, data: Dataset) -> TreeView:
    """Every node's choices (a[j, t]: feature j at any threshold, or none that separates the rows; OCT-H: s[j, t],
    feature j in the hyperplane, several at once; 1 - d[t]: no split, the subtree is one leaf), the leaves with their
    classes c[k, t] and points z[i, t], and the loss L_hat x (24) in the DP's units. A side constraint that reads the
    classes frees them (``free_labels``): (21) makes every leaf predict its majority, which a fairness row may
    forbid, so it is deactivated and ``L`` stays the error of the leaf's class by (20) (``m.labels_free``)."""
    od: OCTData = m.odata
    ends = np.cumsum([len(f.values) - 1 if f.numeric else 1 for f in od.features])
    columns = [np.arange(end - size, end) for end, size in zip(ends, np.diff(ends, prepend=0), strict=True)]
    split = m.s if m.options.hyperplanes else m.a

    def choices(t: int) -> list[Choice]:
        return [Choice(split[j, t], columns[j], trivial=True, features=(od.features[j].column,))
                for j in m.FEATURES] + [Choice(1 - m.d[t], leaf=True)]

    def free_labels():
        if hasattr(m, "error_upper"):
            m.error_upper.deactivate()
        m.labels_free = True

    heap = m.heap
    nodes = [t for t in (1, 2, 3) if t in m.BRANCH_NODES]
    loss = od.normaliser * m.penalised_error.expr if hasattr(m, "penalised_error") else m.missed.expr

    def below(t: int) -> tuple:
        shift = heap.depth - t.bit_length()  # leaf lf lies below child (lf >> shift) of t
        return tuple(lf for lf in heap.leaves if lf >> shift == 2 * t), tuple(lf for lf in heap.leaves
                                                                             if lf >> shift == 2 * t + 1)

    return TreeView(1, tuple(nodes[1:]), {t: choices(t) for t in heap.branch_nodes}, loss, model=m,
                    nodes=tuple(heap.branch_nodes), leaves=tuple(heap.leaves),
                    below={t: below(t) for t in heap.branch_nodes},
                    reach={t: [m.z[i, t] for i in range(od.n_samples)] for t in heap.leaves},
                    label=lambda t, k: m.c[k, t], y=od.y, weights=od.weights, n_classes=od.n_classes,
                    free_labels=free_labels)


def _highs(data: Dataset, highs: HighsOptions) -> HighsOptions:
    """HiGHS's interior point method for the root LP from :data:`IPM_FROM_ROWS` rows (much faster there)."""
    return replace(highs, lp_solver="ipm") if data.n_samples >= IPM_FROM_ROWS and highs.lp_solver is None else highs


def _shortcut(data: Dataset, options: OCTOptions):
    """L_hat = 0: all the weight is on one class, so its single leaf is optimal with objective 0 (and (24) is
    undefined)."""
    if baseline_error(data) > 0:
        return None
    majority = int(np.argmax(np.bincount(data.y, weights=data.weights, minlength=data.n_classes)))
    return data.new_tree(leaf(majority)), 0.0, "L_hat = 0 (all weight on one class): single leaf, no model built"


def _stats(m, options: OCTOptions) -> dict:
    return {"baseline": m.odata.baseline, "scaling": options.scale, "epsilon_floored": m.odata.floored,
            "n_features": len(m.odata.features)}


_SHARED = dict(
    make_options=_make_options,
    build=build_model,
    decode=decode_tree,
    embed=warm_start_values,
    loss=loss,
    to_loss=lambda m: lambda value: value,  # (24) is the loss
    dp_starts=_dp_starts,
    accepts=rates.meets_target,
    cart=cart_tree,
    highs=_highs,
    shortcut=_shortcut,
    stats=_stats,
    size=model_size,
    reads_numbers=True,  # raw values and scaled ranks, not the binary encoding
)
FORMULATION = Formulation(
    name="oct",
    options=OCT_OPTIONS, dp_problem=_dp_problem, dp_bound_problem=dp_bound_problem, view=tree_view, **_SHARED,
)
FORMULATION_H = Formulation(
    name="oct-h",
    options=OCT_H_OPTIONS, dp_problem=None, view=tree_view, fixed={"hyperplanes": True}, **_SHARED,
)
