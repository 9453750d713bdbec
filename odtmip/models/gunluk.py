"""Günlük et al. categorical-subset model: the IP (8) of [GKLMS] and its options.

A decision node k picks one feature group g (``v``) and a subset of that group's one-hot columns (``z``);
samples having a selected column go **left**. The tree shape (topology) is fixed in advance, and so are the
leaf labels: leaves are numbered left to right and the even ones are positive ([GKLMS] §2), so every
leaf-adjacent node has a negative leaf on the left and a positive one on the right. Trivial splits (empty or
full subsets) let the fixed shape represent every smaller tree.

Equations -> components
-----------------------
=====================  ==================================================================
(1)                    ``one_group_per_node``
(2)                    ``subset_within_group``
(3), (4)               :func:`left_indicator` L(i,k); R(i,k) = 1 - L(i,k); both inline in the rows
(5), (6)               ``left_path``, ``right_path`` (used when ``strengthen=False``)
(7)                    ``one_leaf_per_sample`` (only without (14))
(8a)                   ``correct`` (objective, maximised)
(11), (12)             ``left_branch``, ``right_branch`` (``strengthen=True``, replace (5)-(6))
(13)                   ``anchor``
(14)                   ``c`` is indexed by the correct (sample, leaf) pairs only
§4.4 ordinal groups    ``w_order``, ``order_down``, ``order_up``
§4.5 max.card          ``w_card``, ``card_small``, ``card_large``
(15) corrected, (16)   ``specificity_target`` / ``sensitivity_target``, objective ``true_positives``
                       / ``true_negatives``
side constraints       (14) and Prop. 3 off (every c[i, b], with (7)): c is "sample i reaches leaf b"
                       for the :class:`~odtmip.models.view.TreeView`; the constraints' rows in ``m.side``
=====================  ==================================================================

Side constraints (:mod:`odtmip.models.constraints`) read the routing of every sample, which (14) deletes for
the incorrect (sample, leaf) pairs; the model is then built with ``delete_variables=False`` and ``relax=False``
(Proposition 3 is proved for (8) alone). MEASURED on monk1 (432 rows, 6 groups), balanced depth 2: 1 788 rows,
933 columns, 12 228 nonzeros become 3 084, 1 797 and 20 868 (depth 3: 4 464 / 1 889 / 31 420 become 6 624 /
3 617 / 50 428); a parity row pair on a1 adds 24 rows, 15 columns and 10 401 nonzeros, MaxFeatures(2) 34 rows,
21 columns and 6 999 nonzeros (``m.side``: sums over the c's of each leaf).

The per-sample families (5)-(7), (11)-(12) are :class:`~odtmip.models.rows.LinearRows`: their rows are kept
as arrays and become expressions when looked at, so ``m.left_branch[i, k]`` prints and behaves like any other
constraint while a model with 100 000 such rows builds in a tenth of a second.

Deviations from the paper
-------------------------
* **(15) is corrected**: the printed right-hand side ``ceil((1 - 0.95)|I-|)`` counts true negatives, so it only
  guarantees a specificity of 5 %. We impose ``TN >= ceil(tau |I-|)`` (and the mirror ``TP >= ceil(tau |I+|)``)
  computed in exact rational arithmetic.
* Proposition 3's relaxation (continuous v, and z at leaf-adjacent nodes) is applied only where it is proved:
  not with ordinal w-constraints, max.card or a sensitivity/specificity target.
* odtmip reports every objective as a **loss** (weighted misclassifications, or missed positives/negatives for
  constrained fits), recomputed by routing the data through the decoded tree; the Pyomo model itself keeps the
  paper's maximisation (8a) so it reads like the paper.
* Sample weights multiply the terms of (8a); the class weight C multiplies the negatives' terms.

Known optimum of the bundled example: on the generated tic-tac-toe endgame data the balanced depth-2 model and
the DP both find 282 misclassifications (676 of 958 correct).

References
----------
.. [GKLMS] O. Günlük, J. Kalagnanam, M. Li, M. Menickelly, K. Scheinberg, "Optimal decision trees for
   categorical data via integer programming", Journal of Global Optimization 81 (2021) 233–260.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from fractions import Fraction

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr import LinearExpression

from odtmip.core.binarize import BinaryColumn
from odtmip.core.data import Dataset
from odtmip.core.exceptions import DataError, OptionError
from odtmip.core.options import GUNLUK_OPTIONS, check_switches
from odtmip.core.tables import raw_columns
from odtmip.core.tree import Tree, branch, leaf
from odtmip.models import rates
from odtmip.models._highs import paused_gc
from odtmip.models.formulation import DPProblem, Formulation, merge_options
from odtmip.models.rows import LinearRows, linear_sum, var_members
from odtmip.models.topology import Topology
from odtmip.models.view import Choice, TreeView


@dataclass(frozen=True)
class GunlukOptions:
    """Options of the [GKLMS] model; each one can be toggled and none changes the optimum unless noted.

    Attributes
    ----------
    topology : str
        A named topology (``depth2``, ``depth2.5``, ``depth3``, ``imbalanced``, ``balanced-D``) or a shape
        such as ``"((L L) (L L))"``; see :mod:`odtmip.models.topology`.
    strengthen : bool
        Use (11)–(12) instead of (5)–(6), [GKLMS] §4.3.1.
    anchors : bool
        Symmetry breaking (13) at non-leaf-adjacent nodes with symmetric subtrees, §4.3.2.
    delete_variables : bool
        Define c only for correct (sample, leaf) pairs (14), §4.3.3.
    relax : bool
        Proposition 3, §4.3.4: v continuous, z continuous at leaf-adjacent nodes (only where valid).
    ordinal : bool
        Ordinal w-constraints for numeric bucket groups, §4.4 (False treats buckets as categories).
    order_symmetry : bool
        Alternative symmetry breaking of §4.4/§4.5: w = 1 at anchor nodes; not with ``anchors``.
    max_card : int or None
        max.card, §4.5: subsets of a categorical group hold at most ``max_card`` or at least
        ``|J(g)| - max_card`` columns.
    class_weight : float
        C in (8a): one correct negative counts as C correct positives.
    min_specificity, min_sensitivity : float or None
        §4.6 with the corrected (15): maximise TP s.t. ``TN >= ceil(tau |I-|)``, or the mirror. At most one.
    positive : int
        Index (into ``Dataset.classes_``) of the positive class.
    feature_selection : bool
        Keep only the groups a CART tree (scikit-learn, default settings) uses on 90 % of the data, §5.
    """

    topology: str = "depth2"
    strengthen: bool = True
    anchors: bool = True
    delete_variables: bool = True
    relax: bool = True
    ordinal: bool = True
    order_symmetry: bool = False
    max_card: int | None = None
    class_weight: float = 1.0
    min_specificity: float | None = None
    min_sensitivity: float | None = None
    positive: int = 1
    feature_selection: bool = False
    random_state: int = 0

    def __post_init__(self):
        check_switches(self)
        if self.anchors and self.order_symmetry:
            raise OptionError("anchors and order_symmetry break the same symmetry; use one of them ([GKLMS] §4.4)")
        if self.max_card is not None and (not isinstance(self.max_card, int) or self.max_card < 1):
            raise OptionError(f"max_card must be a positive integer, got {self.max_card!r}")
        rates.check_options(self)  # class weight, targets, positive
        Topology.parse(self.topology)  # fail early on a bad shape

    @property
    def constrained(self) -> bool:
        return self.min_specificity is not None or self.min_sensitivity is not None


def exact_target(tau: float, n: int) -> int:
    """ceil(tau * n) in exact arithmetic (0.07 * 100 is 7.000000000000001 in binary floating point)."""
    return math.ceil(Fraction(str(tau)) * n)


# ------------------------------------------------------------------------------------------- data
@dataclass
class GunlukColumn:
    """A one-hot column j of the model: its group, and the Dataset binary column it stands for."""

    group: int
    source: int  # Dataset binary column
    negated: bool  # True: the column is 1 where the Dataset column is 0 (second column of a 0/1 feature)


@dataclass
class GunlukGroup:
    """A group g of the model and where it came from in the Dataset."""

    name: str
    kind: str  # "categorical", "ordinal" (w-constraints apply) or "binary" (two columns: x=1, x=0)
    columns: list[int]
    source_group: int


@dataclass
class GunlukData:
    """The index sets and data a of [GKLMS] §1, derived from a :class:`Dataset`."""

    groups: list[GunlukGroup]
    columns: list[GunlukColumn]
    active: np.ndarray  # active[i, g] = the column of group g that sample i has (one-hot)
    positive: np.ndarray  # boolean: i in I+
    weights: np.ndarray

    @property
    def n_samples(self) -> int:
        return len(self.positive)


def prepare(data: Dataset, options: GunlukOptions) -> GunlukData:
    """Groups and one-hot columns of the model for ``data`` (binary and threshold columns become 2-value groups)."""
    if data.n_classes != 2:
        raise DataError(f"the Günlük model is for two classes; the data has {data.n_classes}")
    if options.positive not in (0, 1):
        raise OptionError(f"positive must be a class index, 0 or 1, got {options.positive!r}")
    keep = set(range(len(data.groups)))
    if options.feature_selection:
        keep = cart_selected_groups(data, options.random_state)
    groups: list[GunlukGroup] = []
    columns: list[GunlukColumn] = []
    for dg, group in enumerate(data.groups):
        if dg not in keep:
            continue
        if group.kind in ("categorical", "ordinal"):
            kind = "ordinal" if group.kind == "ordinal" and options.ordinal else "categorical"
            blocks = [(group.name, kind, [(m, False) for m in group.members])]
        else:  # a 0/1 column (or threshold feature) is a 2-value group: (x = 1, x = 0)
            blocks = [(data.columns[m].name, "binary", [(m, False), (m, True)]) for m in group.members]
        for name, kind, cols in blocks:
            g = len(groups)
            idx = list(range(len(columns), len(columns) + len(cols)))
            columns.extend(GunlukColumn(g, m, neg) for m, neg in cols)
            groups.append(GunlukGroup(name, kind, idx, dg))
    active = np.empty((data.n_samples, len(groups)), dtype=np.int64)
    for g, group in enumerate(groups):
        onehot = np.column_stack([_column_values(data, columns[j]) for j in group.columns])
        if not (onehot.sum(axis=1) == 1).all():
            raise DataError(f"group {group.name!r} is not one-hot on every row ([GKLMS] §1 needs exactly one "
                            "active column per group)")
        active[:, g] = np.asarray(group.columns)[onehot.argmax(axis=1)]
    return GunlukData(groups, columns, active, data.y == options.positive, data.weights)


def _column_values(data: Dataset, col: GunlukColumn) -> np.ndarray:
    x = data.Xb[:, col.source].astype(np.int64)
    return 1 - x if col.negated else x


def cart_selected_groups(data: Dataset, random_state: int = 0) -> set[int]:
    """Dataset groups used by a CART tree grown on 90 % of the data ([GKLMS] §5 feature selection)."""
    from sklearn.model_selection import train_test_split
    from sklearn.tree import DecisionTreeClassifier

    rows = np.arange(data.n_samples)
    train, _ = train_test_split(rows, train_size=0.9, random_state=random_state, stratify=data.y)
    cart = DecisionTreeClassifier(random_state=random_state).fit(data.Xb[train], data.y[train])
    used = cart.tree_.feature[cart.tree_.feature >= 0]
    selected = {data.columns[j].group for j in used}
    return selected or {0}


def equivalent_columns(data: Dataset, gd: GunlukData, options: GunlukOptions,
                       max_levels: int = 10) -> tuple[list[BinaryColumn], bool, list[int]]:
    """Binary columns over which a depth-limited tree search sees the same splits as the model.

    Returns ``(columns, exact, owners)``, ``owners[j]`` the model's group of column j. A 0/1 group gives its
    column; an ordinal group the thresholds between consecutive buckets (both orientations are the same split with
    children swapped); a categorical group one column per subset up to complement (with max.card: the subsets of at
    most max.card levels). A categorical group with more than ``max_levels`` levels gets its one-hot columns only,
    and ``exact`` is then False: the search sees a subset of the model's splits (still a valid warm start).
    """
    columns: list[BinaryColumn] = []
    owners: list[int] = []
    exact = True
    for g, group in enumerate(gd.groups):
        owners.extend([g - 1] * (len(columns) - len(owners)))  # the columns of the group before
        source = data.groups[group.source_group]
        if group.kind == "binary":
            j = gd.columns[group.columns[0]].source
            columns.append(data.columns[j])
            continue
        members = list(source.members)
        if group.kind == "ordinal":
            subsets = [members[t:] for t in range(1, len(members))]
        else:
            size = len(members)
            largest = size // 2 if options.max_card is None else min(options.max_card, size // 2)
            if size > max_levels:
                subsets, exact = [[j] for j in members], False
            else:  # each split once: subsets of at most half the levels (complements are the same split)
                subsets = [list(c) for r in range(1, largest + 1) for c in itertools.combinations(members, r)
                           if 2 * r < size or members[0] in c]
        for subset in subsets:
            split, _ = data.encoder.group_split(group.source_group, subset)
            name = " | ".join(data.columns[j].name for j in subset)
            columns.append(BinaryColumn(name, split, group.source_group))
    owners.extend([len(gd.groups) - 1] * (len(columns) - len(owners)))
    return columns, exact, owners


# ------------------------------------------------------------------------------------------- model
def build_model(data: Dataset, options: GunlukOptions = GunlukOptions()) -> pyo.ConcreteModel:
    """Build the IP (8) of [GKLMS] with the chosen options. Returns a ``pyo.ConcreteModel``.

    The model keeps a reference to its data preparation (``m.gdata``) and topology (``m.topology``) so that
    :func:`decode_tree` and :func:`warm_start_values` can map between trees and variables.
    """
    gd = prepare(data, options)
    topo = Topology.parse(options.topology)
    m = pyo.ConcreteModel(name="gunluk")
    m.gdata, m.topology, m.options = gd, topo, options
    with paused_gc():  # the model is mostly small objects: collecting while they are made doubles the build time
        _add_index_sets(m, gd, topo, options)
        _add_split_variables(m, gd, topo, options)
        _add_routing(m, gd, topo, options)
        if options.anchors:
            _add_anchors(m, gd, topo)
        if any(g.kind == "ordinal" for g in gd.groups):
            _add_ordinal_order(m, gd, topo, options)
        if options.max_card is not None:
            _add_max_card(m, gd, topo, options)
        _add_objective(m, gd, options)
    return m


def model_size(data: Dataset, options: GunlukOptions = GunlukOptions()) -> dict:  # noqa: B008
    """``n_constraints``, ``n_variables`` and ``n_nonzeros`` of :func:`build_model`'s model as handed to HiGHS
    (what :func:`~odtmip.models.model_statistics` says: fixed and unused variables dropped), counted from
    :func:`prepare` and the topology without building the model."""
    gd = prepare(data, options)
    topo = Topology.parse(options.topology)
    G, J, K, anchors = len(gd.groups), len(gd.columns), len(topo.nodes), len(topo.anchor_nodes())
    n_pos = int(gd.positive.sum())
    even = np.asarray(topo.leaves) % 2 == 0
    # the samples by the leaves they have a c at: all, or with (14) a positive's even and a negative's odd ones
    kinds = [(n_pos, even), (gd.n_samples - n_pos, ~even)] if options.delete_variables else \
        [(gd.n_samples, np.ones(len(even), dtype=bool))]
    cols = G * K + J * K + sum(n * int(has.sum()) for n, has in kinds)  # v, z, c
    rows = K + J * K  # (1): the G v's of a node; (2): z[j,k] <= v[g(j),k]
    nnz = G * K + 2 * J * K
    if options.anchors:  # (13): z[first column of g, k] = v[g,k] at the anchor nodes
        rows, nnz = rows + G * anchors, nnz + 2 * G * anchors
    at = {b: p for p, b in enumerate(topo.leaves)}
    below = {k: ([], []) for k in topo.nodes}  # the leaves below the left / right branch of k
    for b, path in topo.paths.items():
        for side in (0, 1):
            for k in path[side]:
                below[k][side].append(at[b])
    for n, has in kinds:  # a routing row: its c's and the G z's of L(i, k); none without a c
        if options.strengthen:  # (11), (12): per sample, node and branch, the c's of the leaves below it
            c_terms = [int(has[leaves].sum()) for pair in below.values() for leaves in pair]
        else:  # (5), (6): per sample, leaf and turn of the leaf's path, its c
            c_terms = [1 for b, path in topo.paths.items() if has[at[b]] for side in (0, 1) for _ in path[side]]
        rows += n * sum(t > 0 for t in c_terms)
        nnz += n * sum(t + G for t in c_terms if t)
    if not options.delete_variables:  # (7): a sample's |B| c's
        rows, nnz = rows + gd.n_samples, nnz + gd.n_samples * len(even)
    if options.constrained:  # (15) corrected: the c's of the negatives at odd leaves (mirrored: positives, even)
        terms = (gd.n_samples - n_pos) * int((~even).sum()) if options.min_specificity is not None else \
            n_pos * int(even.sum())
        rows, nnz = rows + bool(terms), nnz + terms
    free_w = K - (anchors if options.order_symmetry else 0)  # order_symmetry fixes w = 1 at anchor nodes: no column
    for group in gd.groups:
        n_cols = len(group.columns)
        if group.kind == "ordinal" and n_cols > 1:  # §4.4 order_down, order_up: per step and node z, z and a free w
            rows, nnz, cols = rows + 2 * (n_cols - 1) * K, nnz + 2 * (n_cols - 1) * (2 * K + free_w), cols + free_w
        if options.max_card is not None and group.kind == "categorical" and n_cols > options.max_card:
            rows, nnz, cols = rows + 2 * K, nnz + 2 * (n_cols * K + free_w), cols + free_w  # §4.5: the z's, a free w
    return {"n_constraints": int(rows), "n_variables": int(cols), "n_nonzeros": int(nnz)}


def relaxation_applies(options: GunlukOptions, gd: GunlukData) -> bool:
    """Proposition 3 holds for (8) (+ (13)) only: not with w-constraints, max.card or a target (15)."""
    has_order = any(g.kind == "ordinal" for g in gd.groups)
    has_card = options.max_card is not None and any(
        g.kind == "categorical" and len(g.columns) > options.max_card for g in gd.groups)
    return options.relax and not (has_order or has_card or options.constrained)


def _add_index_sets(m, gd: GunlukData, topo: Topology, options: GunlukOptions) -> None:
    # The per-sample sets wrap Python lists (SetOf): building a Set of 10 000s of members costs more than the
    # model's variables.
    m.SAMPLES = pyo.RangeSet(0, gd.n_samples - 1, doc="I: samples")
    m.POS = pyo.SetOf(np.flatnonzero(gd.positive).tolist(), doc="I+: positive samples")
    m.NEG = pyo.SetOf(np.flatnonzero(~gd.positive).tolist(), doc="I-: negative samples")
    m.NODES = pyo.Set(initialize=topo.nodes, doc="K: decision nodes (pre-order)")
    m.LEAVES = pyo.Set(initialize=topo.leaves, doc="B: leaves (left to right)")
    m.POS_LEAVES = pyo.Set(initialize=[b for b in topo.leaves if b % 2 == 0], doc="B+: positive (even) leaves")
    m.NEG_LEAVES = pyo.Set(initialize=[b for b in topo.leaves if b % 2 == 1], doc="B-: negative (odd) leaves")
    m.GROUPS = pyo.Set(initialize=range(len(gd.groups)), doc="G: feature groups")
    m.COLUMNS = pyo.Set(initialize=range(len(gd.columns)), doc="J: one-hot columns (features)")
    leaves = np.asarray(topo.leaves)
    if options.delete_variables:  # (14): only correct (sample, leaf) pairs
        has = (leaves % 2 == 0)[None, :] == gd.positive[:, None]
    else:
        has = np.ones((gd.n_samples, len(leaves)), dtype=bool)
    samples, leaf_at = np.nonzero(has)  # sample by sample, leaves left to right
    m.PAIRS = pyo.SetOf(list(zip(samples.tolist(), leaves[leaf_at].tolist(), strict=True)),
                        doc="(i, b) pairs that have a routing variable c")
    # pair_of[i, l]: position of c[i, leaves[l]] in m.c (the order of m.PAIRS), -1 where (14) deleted it
    m.pair_of = np.full(has.shape, -1, dtype=np.int64)
    m.pair_of[samples, leaf_at] = np.arange(len(samples))


def _add_split_variables(m, gd: GunlukData, topo: Topology, options: GunlukOptions) -> None:
    relax = relaxation_applies(options, gd)
    integer_z = {k: not (relax and topo.leaf_adjacent(k)) for k in topo.nodes}
    m.v = pyo.Var(m.GROUPS, m.NODES, domain=pyo.UnitInterval if relax else pyo.Binary,
                  doc="v[g,k] = 1: group g is used for branching at node k")
    m.z = pyo.Var(m.COLUMNS, m.NODES, domain=pyo.Binary, doc="z[j,k] = 1: column j is selected (goes left) at k")
    for k in topo.nodes:
        if not integer_z[k]:
            for j in m.COLUMNS:
                m.z[j, k].domain = pyo.UnitInterval

    @m.Constraint(m.NODES, doc="[GKLMS] (1): exactly one group per decision node")
    def one_group_per_node(m, k):
        return sum(m.v[g, k] for g in m.GROUPS) == 1

    @m.Constraint(m.COLUMNS, m.NODES, doc="[GKLMS] (2): only columns of the chosen group may be selected")
    def subset_within_group(m, j, k):
        return m.z[j, k] <= m.v[gd.columns[j].group, k]


def left_indicator(m, i: int, k: int):
    """L(i, k) of [GKLMS] (3): sum_j a_j^i z_j^k, which is 1 iff sample i goes left at node k (Proposition 1).

    R(i, k) = 1 - L(i, k) is (4). The routing rows below contain these sums inline.
    """
    return LinearExpression([m.z[j, k] for j in m.gdata.active[i].tolist()])


def _add_routing(m, gd: GunlukData, topo: Topology, options: GunlukOptions) -> None:
    """The per-sample rows (5)-(7) or (11)-(12), as :class:`LinearRows` families (one row per sample and node).

    Every routing row reads  sum of some c[i, b]  +/-  L(i, k)  <= rhs. The rows are assembled with numpy for
    all samples at once: at N = 10 000 they are 100 000 rows, and a rule per row would dominate the build.
    """
    m.c = pyo.Var(m.PAIRS, domain=pyo.UnitInterval if options.delete_variables else pyo.Binary,
                  doc="c[i,b] = 1: sample i is routed to leaf b")
    # the columns of the routing rows: every c, then z[j, k] at len(m.c) + j * |K| + (position of k in K)
    variables = [m.c, m.z]
    node_at = {k: t for t, k in enumerate(topo.nodes)}
    leaf_at = {b: t for t, b in enumerate(topo.leaves)}
    z_col = len(m.c) + gd.active * len(topo.nodes)  # + node position: the z of sample i's active columns

    def routing_rows(index, templates, sign: int, rhs: float, doc: str):
        """Rows  sum_{b in S} c[i, b] + sign * L(i, k) <= rhs  for every sample i and template (key, k, S),
        skipping rows without a c; keyed (i, *key), sample by sample. The terms are written template by template
        into their places, without padding (the templates of a deep topology differ in length by powers of two)."""
        n_z = z_col.shape[1]
        c_of = [m.pair_of[:, [leaf_at[b] for b in leaves]] for _, _, leaves in templates]  # -1: deleted by (14)
        n_c = np.column_stack([(c >= 0).sum(axis=1) for c in c_of])  # n_c[i, t]: the c's of row (i, t)
        has_row = n_c > 0
        samples, template = np.nonzero(has_row)  # the rows, sample by sample
        length = np.where(has_row, n_c + n_z, 0)
        start = np.cumsum(length).reshape(length.shape) - length  # the first term of row (i, t): its c's, its z's
        cols = np.empty(int(length.sum()), dtype=np.int32)
        coefs = np.full(len(cols), float(sign))
        for t, (c, (_, k, _)) in enumerate(zip(c_of, templates, strict=True)):
            is_c = c >= 0
            at = (start[:, t, None] + np.cumsum(is_c, axis=1) - 1)[is_c]
            cols[at], coefs[at] = c[is_c], 1.0
            row = has_row[:, t]
            cols[(start[row, t] + n_c[row, t])[:, None] + np.arange(n_z)] = z_col[row] + node_at[k]
        key_parts = zip(*(key for key, _, _ in templates), strict=True)
        keys = (samples, *(np.asarray(part)[template] for part in key_parts))
        return LinearRows(index, keys=keys, variables=variables, cols=cols, coefs=coefs, upper=rhs, doc=doc,
                          rows=np.repeat(np.arange(len(samples)), length[has_row]))

    if options.strengthen:
        below = {k: ([], []) for k in topo.nodes}  # leaves below the left / right branch of k
        for b, (lt, rt) in topo.paths.items():
            for k in lt:
                below[k][0].append(b)
            for k in rt:
                below[k][1].append(b)
        m.left_branch = routing_rows(m.SAMPLES * m.NODES, [((k,), k, below[k][0]) for k in topo.nodes], -1, 0,
                                     "[GKLMS] (11): sum_{b left of k} c[i,b] <= L(i,k)")
        m.right_branch = routing_rows(m.SAMPLES * m.NODES, [((k,), k, below[k][1]) for k in topo.nodes], +1, 1,
                                      "[GKLMS] (12): sum_{b right of k} c[i,b] <= 1 - L(i,k)")
    else:
        turns = [[((b, k), k, [b]) for b in topo.leaves for k in topo.paths[b][side]] for side in (0, 1)]
        m.left_path = routing_rows(m.PAIRS * m.NODES, turns[0], -1, 0,
                                   "[GKLMS] (5): c[i,b] <= L(i,k) where b's path turns left at k")
        m.right_path = routing_rows(m.PAIRS * m.NODES, turns[1], +1, 1,
                                    "[GKLMS] (6): c[i,b] <= 1 - L(i,k) where b's path turns right at k")

    if not options.delete_variables:
        pairs = m.pair_of.ravel()
        m.one_leaf_per_sample = LinearRows(
            m.SAMPLES, keys=(np.arange(gd.n_samples),), variables=variables, rows=pairs // len(topo.leaves), cols=pairs,
            coefs=np.ones(len(pairs)), lower=1, upper=1, doc="[GKLMS] (7): every sample reaches exactly one leaf")


def _add_anchors(m, gd: GunlukData, topo: Topology) -> None:
    nodes = topo.anchor_nodes()
    m.ANCHOR_NODES = pyo.Set(initialize=nodes, doc="non-leaf-adjacent nodes with symmetric subtrees")

    @m.Constraint(m.GROUPS, m.ANCHOR_NODES, doc="[GKLMS] (13): the anchor column of g goes left when g is used")
    def anchor(m, g, k):
        return m.z[gd.groups[g].columns[0], k] == m.v[g, k]


def _add_ordinal_order(m, gd: GunlukData, topo: Topology, options: GunlukOptions) -> None:
    ordinal = [g for g, grp in enumerate(gd.groups) if grp.kind == "ordinal"]
    m.ORDINAL = pyo.Set(initialize=ordinal, doc="numeric (bucket) groups with ordinal constraints")
    m.w_order = pyo.Var(m.ORDINAL, m.NODES, domain=pyo.Binary,
                        doc="w[g,k] = 0: buckets up to a cut go left; 1: buckets from a cut go left")
    steps = [(g, t, k) for g in ordinal for t in range(len(gd.groups[g].columns) - 1) for k in topo.nodes]

    @m.Constraint(steps, doc="[GKLMS] §4.4: z non-increasing along the buckets unless w = 1")
    def order_down(m, g, t, k):
        cols = gd.groups[g].columns
        return m.z[cols[t], k] >= m.z[cols[t + 1], k] - m.w_order[g, k]

    @m.Constraint(steps, doc="[GKLMS] §4.4: z non-decreasing along the buckets unless w = 0")
    def order_up(m, g, t, k):
        cols = gd.groups[g].columns
        return m.z[cols[t + 1], k] >= m.z[cols[t], k] - (1 - m.w_order[g, k])

    if options.order_symmetry:
        for g in ordinal:
            for k in topo.anchor_nodes():
                m.w_order[g, k].fix(1)


def _add_max_card(m, gd: GunlukData, topo: Topology, options: GunlukOptions) -> None:
    q = options.max_card
    big = [g for g, grp in enumerate(gd.groups) if grp.kind == "categorical" and len(grp.columns) > q]
    m.CARD_GROUPS = pyo.Set(initialize=big, doc="categorical groups with more than max.card columns")
    m.w_card = pyo.Var(m.CARD_GROUPS, m.NODES, domain=pyo.Binary,
                       doc="w[g,k] = 1: at most max.card columns selected; 0: at least |J(g)| - max.card")

    @m.Constraint(m.CARD_GROUPS, m.NODES, doc="[GKLMS] §4.5: small subset when w = 1")
    def card_small(m, g, k):
        cols = gd.groups[g].columns
        return sum(m.z[j, k] for j in cols) <= q + (len(cols) - q) * (1 - m.w_card[g, k])

    @m.Constraint(m.CARD_GROUPS, m.NODES, doc="[GKLMS] §4.5: large subset when w = 0")
    def card_large(m, g, k):
        cols = gd.groups[g].columns
        return sum(m.z[j, k] for j in cols) >= (len(cols) - q) - (len(cols) - q) * m.w_card[g, k]

    if options.order_symmetry:
        for g in big:
            for k in topo.anchor_nodes():
                m.w_card[g, k].fix(1)


def _add_objective(m, gd: GunlukData, options: GunlukOptions) -> None:
    c = var_members(m.c)  # in the order of m.PAIRS
    samples, leaf_at = np.nonzero(m.pair_of >= 0)  # (i, b) of every c, in the same order
    sample_pos, leaf = gd.positive[samples], np.asarray(m.topology.leaves)[leaf_at]
    tp_at = np.flatnonzero(sample_pos & (leaf % 2 == 0))  # positives reaching a positive leaf
    tn_at = np.flatnonzero(~sample_pos & (leaf % 2 == 1))  # negatives reaching a negative leaf
    w = gd.weights[samples]
    if options.min_specificity is not None:
        m.tn_target = exact_target(options.min_specificity, len(m.NEG))
        m.specificity_target = pyo.Constraint(expr=linear_sum(c, tn_at, np.ones(len(tn_at))) >= m.tn_target,
                                              doc="[GKLMS] (15), corrected: TN >= ceil(tau |I-|)")
        m.true_positives = pyo.Objective(expr=linear_sum(c, tp_at, w[tp_at]), sense=pyo.maximize,
                                         doc="[GKLMS] (16): true positives")
    elif options.min_sensitivity is not None:
        m.tp_target = exact_target(options.min_sensitivity, len(m.POS))
        m.sensitivity_target = pyo.Constraint(expr=linear_sum(c, tp_at, np.ones(len(tp_at))) >= m.tp_target,
                                              doc="[GKLMS] (15) mirrored, corrected: TP >= ceil(tau |I+|)")
        m.true_negatives = pyo.Objective(expr=linear_sum(c, tn_at, w[tn_at]), sense=pyo.maximize,
                                         doc="[GKLMS] (16) mirrored: true negatives")
    else:
        at = np.concatenate((tp_at, tn_at))
        m.correct = pyo.Objective(expr=linear_sum(c, at, np.concatenate((w[tp_at], options.class_weight * w[tn_at]))),
                                  sense=pyo.maximize,
                                  doc="[GKLMS] (8a): correctly classified samples, negatives weighted by C")


def loss_offset(m) -> float:
    """The constant that turns the model's maximised objective into odtmip's loss: loss = offset - value."""
    gd, options = m.gdata, m.options
    pos = float(gd.weights[gd.positive].sum())
    neg = float(gd.weights[~gd.positive].sum())
    if options.min_specificity is not None:
        return pos
    if options.min_sensitivity is not None:
        return neg
    return pos + options.class_weight * neg


def loss(data: Dataset, tree: Tree, options: GunlukOptions) -> float:
    """odtmip's loss for ``tree``, recomputed by routing: weighted errors with negatives weighted by C, or the
    weight of missed positives (negatives) for a specificity (sensitivity) target."""
    predicted_pos = tree.predict_index(data.raw) == options.positive
    pos = data.y == options.positive
    w = data.weights
    fn = float(w[pos & ~predicted_pos].sum())
    fp = float(w[~pos & predicted_pos].sum())
    if options.min_specificity is not None:
        return fn
    if options.min_sensitivity is not None:
        return fp
    return fn + options.class_weight * fp


# ------------------------------------------------------------------------------------ decode / start
def decode_tree(m, data: Dataset) -> Tree:
    """The tree the model's current variable values describe (z rounded; v taken as the group of the subset).

    Where Proposition 3 made a leaf-adjacent node's variables continuous, its group and subset are instead
    chosen exactly for the samples that reach it (each column goes to the leaf where its samples count more).
    By Proposition 3 the model's best choice there is integral, so this never scores worse than the solver's
    values, and it stays correct when a heuristic incumbent is not a vertex. Nodes whose subset is empty or
    holds every column of the group send all samples one way and are removed; sibling leaves with the same
    class are merged. Predictions on any data are unchanged by both.
    """
    gd, topo, options = m.gdata, m.topology, m.options
    neg_class, pos_class = 1 - options.positive, options.positive
    relaxed = relaxation_applies(options, gd)
    # what sending a sample to the negative (left) / positive (right) leaf of a pair earns, as in (8a)
    earn_left = np.where(gd.positive, 0.0, options.class_weight * gd.weights)
    earn_right = np.where(gd.positive, gd.weights, 0.0)

    def choose(k, rows):
        if relaxed and topo.leaf_adjacent(k):
            return _best_leaf_split(gd, rows, earn_left, earn_right)
        g = max(m.GROUPS, key=lambda g: pyo.value(m.v[g, k]))
        return g, [j for j in gd.groups[g].columns if pyo.value(m.z[j, k]) > 0.5]

    def build(child, rows):
        kind, idx = child
        if kind == "leaf":
            return leaf(pos_class if idx % 2 == 0 else neg_class)
        g, selected = choose(idx, rows)
        cols = gd.groups[g].columns
        goes_left = np.isin(gd.active[:, g], selected)
        left, right = (build(c, r) for c, r in zip(topo.children[idx], (rows & goes_left, rows & ~goes_left),
                                                       strict=True))
        if not selected:  # nothing goes left
            return right
        if len(selected) == len(cols):  # everything goes left
            return left
        split, swap = _raw_split(data, gd, g, [j for j in cols if j not in selected])
        return _merge(branch(split, right, left) if swap else branch(split, left, right))

    return data.new_tree(build(("node", 1), np.ones(gd.n_samples, dtype=bool)))


def _best_leaf_split(gd: GunlukData, rows: np.ndarray, earn_left: np.ndarray, earn_right: np.ndarray):
    """The group and left subset that earn most at a leaf-adjacent node for the samples ``rows``."""
    best, best_value = (0, []), -np.inf
    for g, group in enumerate(gd.groups):
        cols = np.asarray(group.columns)
        at = gd.active[rows, g]
        left = np.bincount(np.searchsorted(cols, at), weights=earn_left[rows], minlength=len(cols))
        right = np.bincount(np.searchsorted(cols, at), weights=earn_right[rows], minlength=len(cols))
        value = np.maximum(left, right).sum()
        if value > best_value + 1e-12:
            best, best_value = (g, cols[left > right].tolist()), value
    return best


def _raw_split(data: Dataset, gd: GunlukData, g: int, right_columns: list[int]):
    """The raw split sending the samples that have one of ``right_columns`` right; returns (split, swap)."""
    group = gd.groups[g]
    if group.kind == "binary":  # columns (x = 1, x = 0)
        col = gd.columns[right_columns[0]]
        return data.split_of(col.source), col.negated
    return data.encoder.group_split(group.source_group, [gd.columns[j].source for j in right_columns])


def _merge(spec):
    """Replace a branch whose two children are leaves of one class by that leaf."""
    if spec.left.split is None and spec.right.split is None and spec.left.label == spec.right.label:
        return leaf(spec.left.label)
    return spec


@dataclass
class _Embedding:
    v: dict = field(default_factory=dict)  # (g, k) -> value
    z: dict = field(default_factory=dict)  # (j, k) -> value


def _group_subset(data: Dataset, gd: GunlukData, split, raw_cols) -> tuple[int, set[int]] | None:
    """A model group g and the columns of g whose samples ``split`` sends right, if that reproduces the
    split's partition of the training rows exactly; else None."""
    goes_right = split.goes_right(raw_cols)
    for g, group in enumerate(gd.groups):
        if data.groups[group.source_group].column not in split.columns:
            continue
        right = {j for j in group.columns if goes_right[gd.active[:, g] == j].any()}
        if np.array_equal(np.isin(gd.active[:, g], list(right)), goes_right):
            return g, right
    return None


def warm_start_values(m, data: Dataset, tree: Tree) -> list | None:
    """(variable, value) pairs for v and z that reproduce ``tree`` in the model's topology, or None.

    Each split of ``tree`` must partition the training rows like some group's subset does (true for trees
    over ``data``'s binary columns or over subsets of a group), and the tree must fit in the topology, possibly
    after swapping children (complementing a subset). A leaf above the topology's leaves sends its samples down
    trivial splits (every column left, or none) to a leaf of its class; the other subtree of a trivial split gets
    no sample, but (1) still has each of its nodes branch on one group, so it takes trivial splits too (a single
    leaf is such a tree: it fits every topology). Routing variables c are left to HiGHS, which completes a
    partial start by solving an LP.
    """
    gd, topo, options = m.gdata, m.topology, m.options
    raw_cols = raw_columns(data.raw)
    emb = _Embedding()

    def trivial(k: int, all_left: bool) -> tuple[int, set[int]] | None:
        """The first group whose trivial split at node k (every column left, or none) the options allow."""
        splits = ((g, set(group.columns) if all_left else set()) for g, group in enumerate(gd.groups))
        return next(((g, selected) for g, selected in splits if _allowed(m, k, g, selected)), None)

    def place_leaf(label, child) -> bool:
        """Send every sample to a leaf of class ``label`` below ``child`` with trivial splits."""
        kind, idx = child
        if kind == "leaf":
            return (label == options.positive) == (idx % 2 == 0)
        left, right = topo.children[idx]
        for side_child, all_left in ((left, True), (right, False)):
            split = trivial(idx, all_left)
            if split is not None and place_leaf(label, side_child):
                _set_split(emb, gd, idx, *split)
                return True
        return False

    def place(node_index: int, child) -> bool:
        node = tree.nodes[node_index]
        if node.is_leaf:
            return place_leaf(node.label, child)
        kind, k = child
        found = None if kind == "leaf" else _group_subset(data, gd, node.split, raw_cols)
        if found is None:
            return False
        g, right = found
        left_child, right_child = topo.children[k]
        # the model sends selected columns left: keep the tree's orientation, or swap it (complement)
        for (a, b), selected in (((node.left, node.right), set(gd.groups[g].columns) - right),
                                 ((node.right, node.left), right)):
            if not _allowed(m, k, g, selected):
                continue
            saved = (dict(emb.v), dict(emb.z))
            if place(a, left_child) and place(b, right_child):
                _set_split(emb, gd, k, g, selected)
                return True
            emb.v, emb.z = saved
        return False

    if not place(0, ("node", 1)):
        return None
    placed = {k for _, k in emb.v}
    for k in [k for k in topo.nodes if k not in placed]:  # no sample reaches k: (1) asks for a group all the same
        split = trivial(k, True) or trivial(k, False)
        if split is None:
            return None
        _set_split(emb, gd, k, *split)
    values = [(m.v[g, k], emb.v.get((g, k), 0.0)) for g in m.GROUPS for k in m.NODES]
    values += [(m.z[j, k], emb.z.get((j, k), 0.0)) for j in m.COLUMNS for k in m.NODES]
    return values


def _allowed(m, k: int, g: int, selected: set[int]) -> bool:
    """Whether node k may use group g with the columns ``selected`` (sent left) under the model's options."""
    gd, options = m.gdata, m.options
    group = gd.groups[g]
    cols = group.columns
    pattern = [j in selected for j in cols]
    at_anchor = k in m.topology.anchor_nodes()
    if options.anchors and at_anchor and cols[0] not in selected:  # (13)
        return False
    if group.kind == "ordinal":  # §4.4: a prefix (w = 0) or a suffix (w = 1) goes left
        prefix, suffix = pattern == sorted(pattern, reverse=True), pattern == sorted(pattern)
        if not (suffix or (prefix and not (options.order_symmetry and at_anchor))):
            return False
    if options.max_card is not None and group.kind == "categorical" and len(cols) > options.max_card:
        small = len(selected) <= options.max_card  # §4.5: w = 1
        large = len(selected) >= len(cols) - options.max_card
        if not (small or (large and not (options.order_symmetry and at_anchor))):
            return False
    return True


def _set_split(emb: _Embedding, gd: GunlukData, k: int, g: int, selected: set[int]) -> None:
    emb.v[(g, k)] = 1.0
    for j in gd.groups[g].columns:
        emb.z[(j, k)] = 1.0 if j in selected else 0.0


# ------------------------------------------------------------------------------------------- solve
def make_options(max_depth: int | None = None, options: GunlukOptions | None = None, **values) -> GunlukOptions:
    """``options`` (default: all defaults) with ``values`` replacing fields; ``max_depth`` D stands for
    ``topology="balanced-D"`` unless a topology is given. Unknown names are an :class:`OptionError`."""
    if max_depth is not None and "topology" not in values:
        values["topology"] = f"balanced-{max_depth}"
    return merge_options(GunlukOptions, options, values, "Günlük")


def _dp_data(data: Dataset, options: GunlukOptions) -> tuple[Dataset, int, int, bool]:
    """The DP's view of the model: (the model's splits as binary columns, the class weight folded into the
    sample weights; the shallowest and deepest leaf's depth; whether the columns are all of the model's splits)."""
    gd = prepare(data, options)
    topo = Topology.parse(options.topology)
    columns, exact, _ = equivalent_columns(data, gd, options)
    weights = np.where(data.y != options.positive, options.class_weight, 1.0) * data.weights
    depths = [len(lt) + len(rt) for lt, rt in topo.paths.values()]
    return data.derive(columns).reweighted(weights), min(depths), max(depths), exact


def dp_starts(data: Dataset, options: GunlukOptions) -> list[DPProblem]:
    """The DP problems whose trees start the model ([GKLMS] §5 starts from CART; the DP does better).

    Without a target: :func:`dp_equivalent`, solved at the topology's full depth (when that tree fits, it is the
    model's optimum, since DP(deep) <= model) and at its shallowest leaf's (a full tree of that depth always
    fits). With a sensitivity/specificity target and unit weights: the best tree under the target, from the DP's
    (fp, fn) front (:func:`_target_problem`, the model's optimum when it fits); with other weights a sweep of
    weights on the class whose rate is constrained, at the shallowest depth. Only trees that meet the target
    start the model (:func:`meets_target`).
    """
    derived, shallow, deep, exact = _dp_data(data, options)
    if not options.constrained:
        return [DPProblem(derived, shallow, deep, exact)]
    if data.sample_weight is None or np.all(data.sample_weight == 1):
        return [_target_problem(data, options)]
    neg = data.y != options.positive
    problems = []
    for c in (1.0, 2.0, 4.0, 8.0, 16.0, 64.0, 1024.0):
        boost = np.where(neg, c, 1.0) if options.min_specificity is not None else np.where(neg, 1.0, c)
        problems.append(DPProblem(derived.reweighted(boost * data.weights), shallow, shallow, exact=False))
    return problems


def _target_problem(data: Dataset, options: GunlukOptions) -> DPProblem:
    """The DP problem with the optimum of the model with a target: the (fp, fn) front's best point under the same
    cap (:func:`odtmip.dp.pareto.solve_pareto`), over the model's splits. The DP's targets count weight and (15)
    counts rows, so this holds for unit weights only."""
    if not (data.sample_weight is None or np.all(data.sample_weight == 1)):
        raise OptionError("the DP's sensitivity/specificity targets count sample weight, (15) counts rows: "
                          "no DP equivalent for weighted data")
    derived, shallow, deep, exact = _dp_data(data, replace(options, class_weight=1.0))
    name = "min_specificity" if options.min_specificity is not None else "min_sensitivity"
    target = {name: getattr(options, name), "positive": data.classes_[options.positive]}
    return DPProblem(derived, shallow, deep, exact, two_class=target)


def meets_target(data: Dataset, tree: Tree, options: GunlukOptions) -> bool:
    """Whether ``tree`` meets the sensitivity/specificity target (always, without one), exactly as (15)-(16)."""
    if not options.constrained:
        return True
    predicted_pos = tree.predict_index(data.raw) == options.positive
    pos = data.y == options.positive
    if options.min_specificity is not None:
        return int((~pos & ~predicted_pos).sum()) >= exact_target(options.min_specificity, int((~pos).sum()))
    return int((pos & predicted_pos).sum()) >= exact_target(options.min_sensitivity, int(pos.sum()))


def dp_equivalent(data: Dataset, options: GunlukOptions) -> tuple[Dataset, int, int, bool]:
    """The DP problem that brackets this model's optimum: ``(dataset, shallow, deep, exact)``.

    The DP runs over :func:`equivalent_columns` with the class weight folded into the sample weights. Every
    tree of depth <= ``shallow`` fits the topology and every tree the topology represents has depth <=
    ``deep``, so DP(deep) <= model <= DP(shallow); for a balanced topology ``shallow == deep`` and the optima
    are equal. ``exact`` is False when the DP sees only part of the model's splits (large groups), in which
    case only model <= DP(shallow) holds.
    """
    if options.constrained:
        raise OptionError("a sensitivity/specificity target's DP problem is a front search (_target_problem)")
    return _dp_data(data, options)


def dp_bound_problem(data: Dataset, options: GunlukOptions) -> DPProblem:
    """The DP problem whose values below each split bound the model's loss (``dp_bounds``,
    :mod:`odtmip.models.view`): :func:`dp_equivalent`, whose trees are the model's trees (labels aside) with the
    same loss (with a target: :func:`_target_problem`, unit weights). An OptionError when its columns are not all of
    the model's splits."""
    problem = _target_problem(data, options) if options.constrained else DPProblem(*dp_equivalent(data, options))
    if not problem.exact:
        raise OptionError("dp_bounds: a categorical group has more than 10 levels, so the DP sees only its one-level "
                          "splits and its values bound nothing; use dp_bounds='none', or max_card")
    return problem


def tree_view(m, data: Dataset) -> TreeView:
    """Every node's choices (v[g, k]: group g, any subset of it, trivial or complemented; the raw column of g), the
    leaves with their fixed classes (even leaves positive) and the rows reaching them (c[i, b], when (14) kept
    every pair), and the loss (offset - (8a)) in the DP's units (:mod:`odtmip.models.view`)."""
    gd, topo, options = m.gdata, m.topology, m.options
    owners = np.asarray(equivalent_columns(data, gd, options)[2], dtype=np.int64)
    root = topo.nodes[0]
    children = tuple(idx for kind, idx in topo.children[root] if kind == "node")
    raw = [data.groups[group.source_group].column for group in gd.groups]
    choices = {k: [Choice(m.v[g, k], np.flatnonzero(owners == g), trivial=True, sides=((0, 1), (0, 1)),
                          features=(raw[g],)) for g in m.GROUPS] for k in topo.nodes}
    below = {k: ([], []) for k in topo.nodes}
    for b, path in topo.paths.items():
        for side in (0, 1):
            for k in path[side]:
                below[k][side].append(b)
    reach = {} if options.delete_variables else {b: [m.c[i, b] for i in range(gd.n_samples)] for b in topo.leaves}

    def label(b, k):
        return 1.0 if (k == options.positive) == (b % 2 == 0) else 0.0

    objective = next(m.component_data_objects(pyo.Objective, active=True))  # (8a), or (16) with a target
    loss = loss_offset(m) - objective.expr
    return TreeView(root, children, choices, loss, model=m, nodes=tuple(topo.nodes), leaves=tuple(topo.leaves),
                    below={k: (tuple(lt), tuple(rt)) for k, (lt, rt) in below.items()}, reach=reach, label=label,
                    y=np.asarray(data.y), weights=np.asarray(data.weights, dtype=float), n_classes=2)


# ------------------------------------------------------------------------------------------- registry


def _stats(m, options: GunlukOptions) -> dict:
    stats = {"topology": str(m.topology)}
    if options.constrained:
        stats["target"] = getattr(m, "tn_target", None) or getattr(m, "tp_target", None)
    return stats


def _to_loss(m):
    offset = loss_offset(m)
    return lambda value: offset - value  # (8a) is maximised


FORMULATION = Formulation(
    name="gunluk",
    options=GUNLUK_OPTIONS,
    make_options=lambda max_depth, options, values: make_options(max_depth, options, **values),
    build=lambda data, max_depth, options: build_model(data, options),
    decode=decode_tree,
    embed=warm_start_values,
    loss=loss,
    to_loss=_to_loss,
    dp_problem=lambda data, max_depth, options: (_target_problem(data, options) if options.constrained
                                                 else DPProblem(*dp_equivalent(data, options))),
    dp_starts=lambda data, max_depth, options: dp_starts(data, options),
    accepts=meets_target,
    stats=_stats,
    size=lambda data, max_depth, options: model_size(data, options),
    dp_bound_problem=lambda data, max_depth, options: dp_bound_problem(data, options),
    view=tree_view,
    constrained=lambda options: replace(options, relax=False, delete_variables=False),
)
