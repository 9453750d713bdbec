"""BinOCT: the binary linear program of [VZ19] for a complete tree of fixed depth, and its regularised form
RBinOCT of [HRS19] Appendix J.

Every internal node n of a complete tree of depth K picks one feature (``f``) and, through a few binary
digits (``t``), one of that feature's candidate thresholds τ_0 < … < τ_{T_f-1}: rows with value ≤ τ go
**left**, the others right (odtmip's ``Split("threshold", ...)`` is true for x > τ, so it reads the same
way). The threshold index is not one binary per threshold but a path in a trie that halves the index range
at every level, so a node needs only B ≈ log2 T_max bits, and the split constraints are one big-M row per
trie node: "if f is chosen and the bits select a threshold above (below) this range, the rows of the range
may not go right (left)". Rows enter only as coefficients, so the model does not grow with rows × leaves ×
depth like OCT's routing constraints. Leaves choose a class (``p``) and count the misclassified weight
(``e``). RBinOCT adds α_l (leaf l is non-empty) and the penalty λ per non-empty leaf, making the optimum the
OSDT objective restricted to depth ≤ K.

Candidate thresholds (``thresholds``)
-------------------------------------
* ``"all"`` (default): every midpoint between consecutive distinct values of each numeric raw column. A
  categorical raw column becomes one 0/1 feature per level (one feature for a two-level column, whose second
  indicator is the complement of the first) with the single threshold 0.5; it decodes to a subset split
  ``column in {level}``. With ``"all"`` nothing is lost: the model sees every threshold split of a numeric
  column and every one-level-versus-rest split of a categorical one.
* ``"boundary"``: the reference code's shortcut — drop the midpoint between two consecutive values when both
  values occur in rows of one single class, the same class. It is exact for one split but **lossy at depth
  ≥ 2**: on X = [(3,2),(1,3),(0,3),(3,0),(2,0),(2,3),(1,1)], y = [1,0,0,0,1,1,1] the depth-2 optimum has 0
  errors with all midpoints (root x1 ≤ 1.5, then x0 ≤ 2.5 and x0 ≤ 1.5) but 1 error with boundary points,
  because x1 ≤ 1.5 lies between two values (1 and 2) that are both pure class 1.

Features without a candidate threshold (constant, or every gap dropped) are left out: a chosen feature with no
split constraints would let rows be routed freely.

Threshold-index trie and bits
-----------------------------
The indices 0..T-1 are halved recursively: a range [a, c] with c > a has the lower half [a, m] and the upper
half [m+1, c], m = a + ⌊(c-a)/2⌋; its depth is ⌈log2 T⌉. **Bit t[n,k] = 1 means "lower half at trie level
k"** (the reference code's semantics, the complement of the trie label). :func:`split_conditions` lists the
constraints of one feature and is checked exhaustively in the tests: for every bit vector the rows forced
left / right are exactly {V < τ_j} / {V > τ_j} for the decoded j (:func:`decode_index`).

Node numbering: heap order (root 1, children 2n and 2n+1), leaves 0..2^K-1 from left to right. (The reference
code numbers internal nodes in-order; only the names differ.)

Equations -> components
-----------------------
================================  ====================================================================
[VZ19] / [HRS19] (27)             component
================================  ====================================================================
objective                         ``misclassification_and_leaves`` = (1/W)·Σ e + λ·Σ α (see units below)
Σ_f f_{n,f} = 1                   ``one_feature_per_node`` (on the right spine with the pass-through:
                                  ``feature_or_pass_through``)
Σ_l l_{r,l} = 1                   ``one_leaf_per_row``
Σ_c p_{l,c} = 1                   ``one_class_per_leaf``
split rows, lower range (R_ν)     ``lower_range_not_right``  (rows τ_a < V < τ_{m+1}, bits select j > m)
split rows, upper range (L_ν)     ``upper_range_not_left``   (rows τ_m < V < τ_c,     bits select j ≤ m)
split rows, min / max (M″)        ``outside_thresholds``     (V > τ_max not left, V < τ_min not right)
Σ_{r∈c} w_r l_{r,l} − M‴p ≤ e     ``leaf_errors``
(28) Σ_r l_{r,l} ≤ R·α_l          ``non_empty_leaf`` (λ > 0 only)
root pass-through                 ``s``, ``feature_or_pass_through``, ``pass_through_single_leaf``
surplus-bit symmetry fix          ``unused_bits_off``
class weight / rate target        objective FN + C FP, or ``missed`` with ``specificity_target`` /
                                  ``sensitivity_target`` over Σ_l e[l, k] (:mod:`odtmip.models.rates`)
side constraints                  the root pass-through s (the single leaf is a tree of the model); the
                                  rows of :mod:`odtmip.models.constraints` in ``m.side`` over l, p and f
================================  ====================================================================

Under side constraints the model has the root pass-through whatever λ (one column, one row; MEASURED on monk1 at
depth 2: 492 rows, 1 789 columns, 29 490 nonzeros become 493 / 1 790 / 30 789); a leaf's predicted weight is a
McCormick product of p[l, k] and Σ_r w_r l[r, l] (:meth:`odtmip.models.view.TreeView.leaf_predicted`): a parity
row pair adds 84 rows, 35 columns and 20 939 nonzeros there.

``one_leaf_per_row`` and the three split-row families are :class:`~odtmip.models.rows.LinearRows` (rows kept
as arrays, expressions made when looked at): the split rows hold up to N x (leaves) terms each, 3.2 M nonzeros
at N = 10 000 and depth 3, and building them term by term took 4 s where the arrays take 0.6 s.

Units of λ
----------
λ (``leaf_penalty``) is OSDT's: a fraction of the data per leaf. The printed (27) adds λΣα to a count of
errors, which makes λ = 0.007 meaningless; the appendix says λ is "the same as that of OSDT" and reports the
OSDT tree, so the objective here is the normalised one, (1/W)·Σ_{l,c} e_{l,c} + λ·Σ_l α_l with W the total
sample weight. odtmip's loss for any tree is therefore ``weighted errors / W + λ · leaves`` (:func:`loss`),
also for λ = 0 (an error *fraction*). The DP minimises ``weighted errors + penalty · branch nodes``; with
``penalty = λW`` (:func:`dp_equivalent`) and leaves = branch nodes + 1, ``loss = DP objective / W + λ``
(:func:`dp_objective_to_loss`).

Deviations from the paper
-------------------------
* The split constraints are the reference code's (SiccoVerwer/binoct), not the printed schematic ones, whose
  pairing of ranges with branches does not reproduce a working model; each is written as "rows of the range in
  the blocked branch ≤ M · (number of unmet activation conditions)", which is the code's row rearranged. Big-Ms
  are the per-constraint row counts; M‴ is the weight of class c (sample weights enter the error terms only).
* Objective normalised by the total weight W (see units above).
* **Root pass-through** (``root_pass_through``, default: on when λ > 0): a binary s meaning "the tree is a
  single leaf". Below the root a node can always pass its rows on by repeating an ancestor's test, but every
  candidate threshold lies strictly inside its feature's range, so a node holding *all* rows always cuts them
  in two non-empty parts; without s, RBinOCT cannot represent the single-leaf tree and returns a worse
  objective whenever that tree is optimal ([HRS19] §J; shown in the tests). With s = 1 the nodes of the
  right spine 1, 3, 7, …, 2^K − 1 choose no feature (so their split constraints are off) and every row goes to
  the rightmost leaf. Switching off only the root (Σ_f f_root + s = 1 with the left subtree empty) is not
  enough for K ≥ 2: node 3 would then hold all rows and still have to cut them.
* Surplus-bit symmetry fix (``surplus_bit_fix``, default on): the bits beyond ⌈log2 T_f⌉ decode nothing for
  feature f, so they are fixed to 0 when f is chosen: t[n,i] + Σ_{f: ⌈log2 T_f⌉ ≤ i} f[n,f] (+ s on the spine)
  ≤ 1, i.e. t ≤ 1 − f summed over the features (at most one is chosen, so it is the same integer set
  with a tighter LP). The reference code has this block, unreachable.
* Bits per node: B = ⌈log2 T_max⌉ by default (the trie depth; ``bits="trie"``); ``bits="reference"`` uses the
  reference code's 1 + ⌊log2 T_max⌋, one surplus bit when T_max is a power of two.
* Not reproduced: CPLEX branching priorities, solution polishing, CART thresholds added to the candidate set,
  CART MIP starts and the iterative deep mode. The start here is the DP optimum over the model's own
  candidate thresholds.
* Multi-class is native (one p per class), as in the paper.

Known optimum: the boundary counterexample above at depth 2 has loss 0 with all midpoints and 1/7 (one error)
with ``thresholds="boundary"``; with λ = 0.2 the single leaf (3 errors of 7) is optimal, loss 3/7 + 0.2 ≈ 0.629,
and without the pass-through the model's optimum is worse, 2/7 + 2·0.2 ≈ 0.686 (two leaves). On scikit-learn's iris
(``odtmip.core.datasets.load("iris")``) at depth 2 with all midpoints (119 thresholds), BinOCT and the DP both find
6 misclassifications of 150 (loss 0.04, about 6 s with the DP warm start); with λ = 0.01 the optimum is a
3-leaf tree with 6 errors, loss 0.04 + 3·0.01 = 0.07 (about 35 s).

References
----------
.. [VZ19] S. Verwer, Y. Zhang, "Learning optimal classification trees using a binary linear program
   formulation", Proceedings of AAAI 2019. Reference code: github.com/SiccoVerwer/binoct.
.. [HRS19] X. Hu, C. Rudin, M. Seltzer, "Optimal Sparse Decision Trees", NeurIPS 2019, Appendix J
   (regularised BinOCT, formulation (27)–(28)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pyomo.environ as pyo

from odtmip.core.binarize import BinaryColumn, midpoint_thresholds
from odtmip.core.data import Dataset
from odtmip.core.exceptions import DataError, OptionError
from odtmip.core.options import BINOCT_OPTIONS, check_switches
from odtmip.core.tables import as_floats, raw_columns
from odtmip.core.tree import Split, Tree, branch, leaf
from odtmip.models import rates
from odtmip.models.formulation import DPProblem, Formulation, merge_options
from odtmip.models.rows import LinearRows, linear_sum, var_members
from odtmip.models.view import Choice, TreeView

THRESHOLD_MODES = ("all", "boundary")
BIT_MODES = ("trie", "reference")


@dataclass(frozen=True)
class BinOCTOptions:
    """Options of the BinOCT / RBinOCT model.

    Attributes
    ----------
    leaf_penalty : float
        λ of [HRS19] (27): added per non-empty leaf, in units of the fraction of the (weighted) data, as in
        OSDT. 0 gives plain BinOCT [VZ19].
    thresholds : {"all", "boundary"}
        Candidate thresholds: every midpoint, or the reference code's class-boundary shortcut
        (lossy at depth ≥ 2; see the module docstring).
    root_pass_through : bool or None
        Binary s meaning "the tree is a single leaf" (the right spine splits on nothing, every row reaches
        the last leaf), without which RBinOCT cannot represent that tree ([HRS19] §J; odtmip addition, see
        the module docstring). None: on exactly when ``leaf_penalty > 0`` (with λ = 0 a split never costs
        anything, so it is not needed).
    bits : {"trie", "reference"}
        Bits per node: ⌈log2 T_max⌉ (the trie depth) or the reference code's 1 + ⌊log2 T_max⌋.
    surplus_bit_fix : bool
        Fix the bits a chosen feature does not use to 0 (symmetry breaking; [VZ19] reference code).
    class_weight, min_specificity, min_sensitivity, positive
        Two-class objectives (:mod:`odtmip.models.rates`): FN + C x FP, or FN (FP) under a specificity
        (sensitivity) floor; a target needs ``leaf_penalty = 0``.
    """

    leaf_penalty: float = 0.0
    thresholds: str = "all"
    root_pass_through: bool | None = None
    bits: str = "trie"
    surplus_bit_fix: bool = True
    class_weight: float = 1.0
    min_specificity: float | None = None
    min_sensitivity: float | None = None
    positive: int = 1

    def __post_init__(self):
        check_switches(self)
        rates.check_options(self)
        if rates.constrained(self) and self.leaf_penalty > 0:
            raise OptionError("a sensitivity/specificity target needs leaf_penalty = 0 (its objective is FN or FP)")
        lam = self.leaf_penalty
        if isinstance(lam, bool) or not isinstance(lam, (int, float, np.floating, np.integer)) \
                or not math.isfinite(lam) or lam < 0:
            raise OptionError(f"leaf_penalty must be a finite number >= 0, got {lam!r}")
        if self.thresholds not in THRESHOLD_MODES:
            raise OptionError(f"thresholds must be one of {THRESHOLD_MODES}, got {self.thresholds!r}")
        if self.bits not in BIT_MODES:
            raise OptionError(f"bits must be one of {BIT_MODES}, got {self.bits!r}")
        if self.root_pass_through not in (None, True, False):
            raise OptionError(f"root_pass_through must be True, False or None, got {self.root_pass_through!r}")

    @property
    def pass_through(self) -> bool:
        """Whether the model has the root pass-through (``root_pass_through``, or λ > 0 when it is None)."""
        return self.leaf_penalty > 0 if self.root_pass_through is None else bool(self.root_pass_through)


# ------------------------------------------------------------------------------------ threshold trie
@dataclass(frozen=True)
class TrieNode:
    """A node ν of a feature's threshold-index trie: the range [low, high] split into [low, mid] and
    [mid+1, high], reached from the root by ``prefix`` (0 = lower half, 1 = upper half at each level)."""

    prefix: tuple[int, ...]
    low: int
    mid: int
    high: int

    @property
    def level(self) -> int:
        return len(self.prefix)


@dataclass(frozen=True)
class SplitCondition:
    """One split constraint of a feature, on *gaps*: a row whose value lies between τ_{g-1} and τ_g has gap g
    (gap 0 below τ_0, gap T above τ_{T-1}), and it goes left under threshold j iff g ≤ j.

    If the feature is chosen, every bit in ``zero_bits`` is 0 and every bit in ``one_bits`` is 1, then rows
    with a gap in ``not_left`` (inclusive range) may not go left and rows with a gap in ``not_right`` may not
    go right. ``kind`` is ``"R"`` (R_ν, lower range), ``"L"`` (L_ν, upper range) or ``"MinMax"``; ``node`` is
    the trie node index (None for MinMax).
    """

    kind: str
    node: int | None
    not_left: tuple[int, int] | None
    not_right: tuple[int, int] | None
    zero_bits: tuple[int, ...]
    one_bits: tuple[int, ...]


def trie_depth(n_thresholds: int) -> int:
    """⌈log2 T⌉: the number of bits that identify one of T thresholds (0 for T = 1)."""
    return (n_thresholds - 1).bit_length()


def threshold_trie(n_thresholds: int) -> list[TrieNode]:
    """The T − 1 internal nodes of the trie over indices 0..T-1, in pre-order ([VZ19] bin(f))."""
    nodes: list[TrieNode] = []

    def visit(low: int, high: int, prefix: tuple[int, ...]) -> None:
        if high <= low:
            return
        mid = low + (high - low) // 2
        nodes.append(TrieNode(prefix, low, mid, high))
        visit(low, mid, prefix + (0,))
        visit(mid + 1, high, prefix + (1,))

    visit(0, n_thresholds - 1, ())
    return nodes


def trie_arrays(n_thresholds: int) -> tuple[np.ndarray, ...]:
    """The nodes of :func:`threshold_trie` as arrays, level by level (for counting at 10^5 thresholds): ``low``,
    ``mid``, ``high``, ``level``, the number of upper-half (1) and lower-half (0) steps of the prefix, and the
    bitmasks of the levels of those steps."""
    low, high = np.array([0]), np.array([n_thresholds - 1])
    ups = downs = up_mask = down_mask = np.array([0])
    parts = []
    level = 0
    while True:
        inner = high > low
        low, high, ups, downs, up_mask, down_mask = (a[inner] for a in (low, high, ups, downs, up_mask, down_mask))
        if not low.size:
            break
        mid = low + (high - low) // 2
        parts.append((low, mid, high, np.full(low.size, level), ups, downs, up_mask, down_mask))
        bit = 1 << level  # children: the lower half [low, mid] (prefix bit 0), the upper half [mid+1, high] (1)
        low, high = np.concatenate((low, mid + 1)), np.concatenate((mid, high))
        ups, downs = np.concatenate((ups, ups + 1)), np.concatenate((downs + 1, downs))
        up_mask, down_mask = np.concatenate((up_mask, up_mask | bit)), np.concatenate((down_mask | bit, down_mask))
        level += 1
    if not parts:
        return tuple(np.zeros(0, dtype=np.int64) for _ in range(8))
    return tuple(np.concatenate(column) for column in zip(*parts, strict=True))


def decode_index(bits, n_thresholds: int) -> int:
    """The threshold index the bits select: follow the trie, bit 1 = lower half ([VZ19] reference code)."""
    low, high, k = 0, n_thresholds - 1, 0
    while high > low:
        mid = low + (high - low) // 2
        if bits[k] >= 0.5:
            high = mid
        else:
            low = mid + 1
        k += 1
    return low


def encode_index(j: int, n_thresholds: int) -> tuple[int, ...]:
    """The bits on index j's trie path (inverse of :func:`decode_index`); later bits are free.

    >>> [encode_index(j, 4) for j in range(4)]
    [(1, 1), (1, 0), (0, 1), (0, 0)]
    >>> decode_index((1, 0), 4), decode_index((0,), 3)
    (1, 2)
    """
    if not 0 <= j < n_thresholds:
        raise ValueError(f"threshold index {j} out of range 0..{n_thresholds - 1}")
    low, high, bits = 0, n_thresholds - 1, []
    while high > low:
        mid = low + (high - low) // 2
        lower = j <= mid
        bits.append(1 if lower else 0)
        low, high = (low, mid) if lower else (mid + 1, high)
    return tuple(bits)


def split_conditions(n_thresholds: int) -> list[SplitCondition]:
    """The split constraints of a feature with T thresholds: (R_ν), (L_ν) for every trie node ν and (MinMax),
    as the [VZ19] reference code generates them (the paper's printed form is schematic).

    * (R_ν), active when bit k = 0 (index in the upper half, j ≥ m+1) and every bit i < k where ν's prefix
      took the upper half is 0: rows with τ_a < V < τ_{m+1} (gaps a+1..m+1) may not go right.
    * (L_ν), active when bit k = 1 (j ≤ m) and every bit i < k where the prefix took the lower half is 1:
      rows with τ_m < V < τ_c (gaps m+1..c) may not go left.
    * (MinMax), always active: gap T (above the largest threshold) not left, gap 0 not right.
    """
    out: list[SplitCondition] = []
    for q, nu in enumerate(threshold_trie(n_thresholds)):
        k = nu.level
        upper = tuple(i for i, b in enumerate(nu.prefix) if b == 1)
        lower = tuple(i for i, b in enumerate(nu.prefix) if b == 0)
        out.append(SplitCondition("R", q, None, (nu.low + 1, nu.mid + 1), upper + (k,), ()))
        out.append(SplitCondition("L", q, (nu.mid + 1, nu.high), None, (), lower + (k,)))
    out.append(SplitCondition("MinMax", None, (n_thresholds, n_thresholds), (0, 0), (), ()))
    return out


# ------------------------------------------------------------------------------------------- data
@dataclass(eq=False)
class BinOCTFeature:
    """A feature f of the model: values V_r^f (one per row) and candidate thresholds τ_0 < … < τ_{T_f-1}.

    ``level`` is None for a numeric raw column; for a categorical one it is the level whose 0/1 indicator
    this feature is (threshold 0.5, decoded as ``column in {level}``).
    """

    name: str
    column: int
    values: np.ndarray
    thresholds: tuple[float, ...]
    level: object = None
    level_split: Split | None = None

    @property
    def n_thresholds(self) -> int:
        return len(self.thresholds)

    def split(self, j: int) -> Split:
        """The raw split of threshold j: true (right) for V > τ_j."""
        if self.level_split is not None:
            return self.level_split
        return Split("threshold", (self.column,), threshold=float(self.thresholds[j]))

    def goes_right(self, j: int) -> np.ndarray:
        return self.values > self.thresholds[j]


@dataclass(eq=False)
class BinOCTData:
    """What the model is built from: features, row gaps, labels, weights, the complete tree's shape."""

    features: list[BinOCTFeature]
    gaps: list[np.ndarray]  # gaps[f][r]: number of thresholds of f below V_r^f
    y: np.ndarray
    weights: np.ndarray
    n_classes: int
    depth: int
    n_bits: int
    pass_through: bool

    @property
    def n_rows(self) -> int:
        return len(self.y)

    @property
    def n_leaves(self) -> int:
        return 2**self.depth

    @property
    def nodes(self) -> list[int]:
        return list(range(1, self.n_leaves))

    @property
    def spine(self) -> list[int]:
        """The root's right spine 1, 3, 7, …, 2^K − 1: the nodes the pass-through switches off."""
        return [2**k - 1 for k in range(1, self.depth + 1)]

    def leaves_below(self, h: int) -> list[int]:
        """Leaves (0..L-1) below heap node h (h ≥ L is leaf h − L itself)."""
        d = self.depth - (h.bit_length() - 1)
        first = (h << d) - self.n_leaves
        return list(range(first, first + (1 << d)))


def candidate_thresholds(values: np.ndarray, y: np.ndarray, mode: str) -> list[float]:
    """Midpoints between consecutive distinct values; ``"boundary"`` drops those between two values that
    each occur only with one and the same class ([VZ19] reference code)."""
    mids = midpoint_thresholds(values, None)
    if mode == "all" or not mids:
        return mids
    distinct = np.unique(values)
    labels = [set(np.unique(y[values == v]).tolist()) for v in distinct]
    return [t for k, t in enumerate(mids)
            if not (len(labels[k]) == 1 and labels[k] == labels[k + 1])]


def candidate_features(data: Dataset, options: BinOCTOptions) -> list[BinOCTFeature]:
    """The model's features with their candidate thresholds; features without any are left out."""
    features: list[BinOCTFeature] = []
    for group in data.groups:
        c = group.column
        if group.kind == "categorical":
            members = group.members[:1] if len(group.members) == 2 else group.members
            for j in members:
                values = data.Xb[:, j].astype(float)
                ts = candidate_thresholds(values, data.y, options.thresholds)
                if ts:
                    features.append(BinOCTFeature(data.columns[j].name, c, values, tuple(ts),
                                                  level=group.levels[group.members.index(j)],
                                                  level_split=data.columns[j].split))
        else:
            values = as_floats(data.column(c), c)
            ts = candidate_thresholds(values, data.y, options.thresholds)
            if ts:
                features.append(BinOCTFeature(group.name, c, values, tuple(ts)))
    return features


def prepare(data: Dataset, max_depth: int, options: BinOCTOptions) -> BinOCTData:
    """Features, gaps and the tree shape of the model for ``data`` at depth ``max_depth``."""
    if isinstance(max_depth, bool) or not isinstance(max_depth, (int, np.integer)) or max_depth < 1:
        raise OptionError(f"max_depth must be an integer >= 1 for BinOCT, got {max_depth!r}")
    features = candidate_features(data, options)
    if not features:
        raise DataError("no feature has a candidate threshold (every column is constant"
                        + (", or every gap lies between values of one class)" if options.thresholds == "boundary"
                           else ")"))
    t_max = max(f.n_thresholds for f in features)
    n_bits = trie_depth(t_max) if options.bits == "trie" else 1 + int(math.floor(math.log2(t_max)))
    gaps = [np.searchsorted(np.asarray(f.thresholds), f.values, side="left") for f in features]
    return BinOCTData(features, gaps, np.asarray(data.y), np.asarray(data.weights, dtype=float), data.n_classes,
                      int(max_depth), n_bits, options.pass_through)


# ------------------------------------------------------------------------------------------- model
def build_model(data: Dataset, max_depth: int, options: BinOCTOptions = BinOCTOptions()) -> pyo.ConcreteModel:  # noqa: B008
    """Build BinOCT ([VZ19]; with λ > 0 RBinOCT, [HRS19] (27)–(28)) for a complete tree of depth ``max_depth``.

    The model keeps its data preparation as ``m.bdata`` and its options as ``m.options``, which
    :func:`decode_tree` and :func:`warm_start_values` use.
    """
    bd = prepare(data, max_depth, options)
    m = pyo.ConcreteModel(name="binoct")
    m.bdata, m.options = bd, options
    _add_index_sets(m, bd)
    _add_split_variables(m, bd)  # f, t; one feature per node
    _add_routing(m, bd)  # l; one leaf per row; (R_ν), (L_ν), (MinMax)
    l_vars = var_members(m.l)  # for the sums over rows below, built in one step (linear_sum)
    _add_predictions(m, bd, l_vars)  # p, e; one class per leaf; leaf errors
    if bd.pass_through:
        _add_root_pass_through(m, bd, l_vars)  # s: the single-leaf tree
    if options.leaf_penalty > 0:
        _add_leaf_activity(m, bd, l_vars)  # α, (28)
    if options.surplus_bit_fix:
        _add_surplus_bit_fix(m, bd)
    _add_objective(m, bd, options)
    return m


def model_size(data: Dataset, max_depth: int, options: BinOCTOptions = BinOCTOptions()) -> dict:  # noqa: B008
    """``n_constraints``, ``n_variables`` and ``n_nonzeros`` of :func:`build_model`'s model as handed to HiGHS
    (what :func:`~odtmip.models.model_statistics` says: unused variables and zero terms dropped), counted from
    :func:`prepare` without building the model."""
    bd = prepare(data, max_depth, options)
    N, F, C, B, K, L = bd.n_rows, len(bd.features), bd.n_classes, bd.n_bits, bd.depth, bd.n_leaves
    nodes, spine = L - 1, K if bd.pass_through else 0
    cols = nodes * F + N * L + 2 * L * C + bd.pass_through  # f, l, p, e, s; t below
    rows = nodes + N + L + L * C  # one feature per node (on the spine: or s); one leaf per row; one class per leaf;
    nnz = nodes * F + spine + N * L + L * C  # leaf errors (their terms below)
    # (R_ν), (L_ν), (MinMax) at every node for each condition that blocks M > 0 rows: their l's on the blocked side
    # (2^(K-d-1) leaves at a node of depth d: K 2^(K-1) per row over all nodes), f[n,f] and the condition's bits
    # (the conditions of split_conditions, counted over trie_arrays: R_ν holds its prefix's upper-half levels and
    # its own as zero bits, L_ν the lower-half levels and its own as one bits, MinMax none)
    used = 0  # bitmask of the bits some split row holds
    for feat, gaps in zip(bd.features, bd.gaps, strict=True):
        T = feat.n_thresholds
        in_gap = np.concatenate(([0], np.cumsum(np.bincount(gaps, minlength=T + 1))))
        low, mid, high, level, ups, downs, up_mask, down_mask = trie_arrays(T)
        big_r = in_gap[mid + 2] - in_gap[low + 1]  # R_ν: gaps low+1..mid+1 not right
        big_l = in_gap[high + 1] - in_gap[mid + 1]  # L_ν: gaps mid+1..high not left
        big_minmax = int(in_gap[T + 1] - in_gap[T] + in_gap[1] - in_gap[0])  # gap T not left, gap 0 not right
        r, lft = big_r > 0, big_l > 0
        rows += nodes * (int(r.sum()) + int(lft.sum()) + bool(big_minmax))
        nnz += (int(big_r.sum()) + int(big_l.sum()) + big_minmax) * K * 2 ** (K - 1)
        nnz += nodes * (int((2 + ups[r]).sum()) + int((2 + downs[lft]).sum()) + bool(big_minmax))
        own = np.left_shift(1, level)
        used |= int(np.bitwise_or.reduce(np.concatenate(((up_mask | own)[r], (down_mask | own)[lft])), initial=0))
    bits = (used >> np.arange(B)) & 1 == 1  # the bits some split row holds
    for c in range(C):  # leaf errors: the l's of the class-c rows of nonzero weight, p (M‴ = their weight), e
        w = bd.weights[bd.y == c]
        nnz += L * (int(np.count_nonzero(w)) + bool(w.sum()) + 1)
    if bd.pass_through:  # pass_through_single_leaf: the l's outside the last leaf, and s
        rows, nnz = rows + 1, nnz + N * (L - 1) + 1
    if options.leaf_penalty > 0:  # (28) non_empty_leaf: a leaf's N l's and α; the α's
        rows, nnz, cols = rows + L, nnz + L * (N + 1), cols + L
    if rates.constrained(options):  # the target row: e[l, k] of every leaf
        rows, nnz = rows + 1, nnz + L
    idle = np.zeros(B, dtype=np.int64)  # idle[i]: the features whose trie depth is <= i
    for feat in bd.features:
        idle[trie_depth(feat.n_thresholds):] += 1
    fixed_bits = np.zeros(B, dtype=np.int64)  # unused_bits_off rows (n, i) of bit i: at every node, or the spine's
    if options.surplus_bit_fix:  # t[n,i], the idle f[n,f]'s (and s on the spine)
        fixed_bits += np.where(idle > 0, nodes, spine)
        rows, nnz = rows + int(fixed_bits.sum()), nnz + int(((1 + idle) * fixed_bits).sum()) + B * spine
    cols += int(np.where(bits, nodes, fixed_bits).sum())  # t[n,i] held by a split row or by unused_bits_off
    return {"n_constraints": int(rows), "n_variables": int(cols), "n_nonzeros": int(nnz)}


def _add_index_sets(m, bd: BinOCTData) -> None:
    m.NODES = pyo.Set(initialize=bd.nodes, doc="n: internal nodes (heap order: root 1, children 2n, 2n+1)")
    m.LEAVES = pyo.Set(initialize=range(bd.n_leaves), doc="l: leaves, left to right")
    m.ROWS = pyo.Set(initialize=range(bd.n_rows), doc="r: training rows")
    m.FEATURES = pyo.Set(initialize=range(len(bd.features)), doc="f: features with a candidate threshold")
    m.BITS = pyo.Set(initialize=range(bd.n_bits), doc="bit positions of the threshold index (trie levels)")
    m.CLASSES = pyo.Set(initialize=range(bd.n_classes), doc="c: classes")


def _add_split_variables(m, bd: BinOCTData) -> None:
    m.f = pyo.Var(m.NODES, m.FEATURES, domain=pyo.Binary, doc="f[n,f] = 1: node n splits on feature f")
    m.t = pyo.Var(m.NODES, m.BITS, domain=pyo.Binary,
                  doc="t[n,k] = 1: node n's threshold index lies in the lower half at trie level k")
    nodes = [n for n in bd.nodes if not (bd.pass_through and n in bd.spine)]

    @m.Constraint(nodes, doc="[VZ19]: every internal node splits on exactly one feature")
    def one_feature_per_node(m, n):
        return sum(m.f[n, f] for f in m.FEATURES) == 1


def _add_root_pass_through(m, bd: BinOCTData, l_vars: list) -> None:
    m.SPINE = pyo.Set(initialize=bd.spine, doc="the root's right spine 1, 3, 7, ... (switched off by s)")
    m.s = pyo.Var(domain=pyo.Binary,
                  doc="s = 1: the tree is a single leaf; the spine does not split, every row reaches the last leaf")

    @m.Constraint(m.SPINE, doc="[VZ19] one feature per node, on the right spine: one feature or the "
                               "pass-through (odtmip addition for [HRS19] §J)")
    def feature_or_pass_through(m, n):
        return sum(m.f[n, f] for f in m.FEATURES) + m.s == 1

    others = [lf for lf in range(bd.n_leaves) if lf != bd.n_leaves - 1]
    at = _l_at(bd, m.ROWS, others)
    m.pass_through_single_leaf = pyo.Constraint(
        expr=linear_sum(l_vars, at, np.ones(len(at))) <= bd.n_rows * (1 - m.s),
        doc="pass-through: with s = 1 every row reaches the rightmost leaf (odtmip addition)")


def _add_routing(m, bd: BinOCTData) -> None:
    m.l = pyo.Var(m.ROWS, m.LEAVES, domain=pyo.UnitInterval,
                  doc="l[r,l] = 1: row r reaches leaf l (integral once f and t are)")

    # The rows below hold up to N x |leaves| terms each; they are assembled with numpy as LinearRows (see
    # odtmip.models.rows). Columns: l[r, lf], then f[n, f], then t[n, i], each in its index order.
    n_l, n_f = len(m.l), len(m.f)
    node_at = {n: q for q, n in enumerate(bd.nodes)}
    rows = np.arange(bd.n_rows)
    m.one_leaf_per_row = LinearRows(
        m.ROWS, keys=(rows,), variables=[m.l], rows=np.repeat(rows, bd.n_leaves), cols=np.arange(n_l),
        coefs=np.ones(n_l), lower=1, upper=1, doc="[VZ19]: every row reaches exactly one leaf")

    # rows by (feature, gap)
    rows_in_gap = [[np.flatnonzero(g == k) for k in range(feat.n_thresholds + 1)]
                   for feat, g in zip(bd.features, bd.gaps, strict=True)]
    left_leaves = {n: bd.leaves_below(2 * n) for n in bd.nodes}
    right_leaves = {n: bd.leaves_below(2 * n + 1) for n in bd.nodes}
    conditions = {f: split_conditions(feat.n_thresholds) for f, feat in enumerate(bd.features)}

    def rows_of(f, gap_range) -> np.ndarray:
        if gap_range is None:
            return np.zeros(0, dtype=np.int64)
        lo, hi = gap_range
        return np.concatenate(rows_in_gap[f][lo : hi + 1])

    def condition_rows(index, conds, doc: str) -> LinearRows:
        """For every node n and condition c of feature f (``conds``: (key, f, c), the row's index being (n, *key)):
            entering + M f[n,f] - M sum_{i in zero bits} t[n,i] + M sum_{i in one bits} t[n,i] <= M (1 + |one bits|),
        i.e. entering <= M * unmet, where entering counts the blocked rows reaching the leaves on their blocked
        side and M (the minimised big-M) is the number of blocked rows; conditions with M = 0 are left out.
        Assembled for all conditions of a node at once (arrays of the blocked rows and their conditions)."""
        blocked = [(key, f, c, rows_of(f, c.not_left), rows_of(f, c.not_right)) for key, f, c in conds]
        blocked = [b for b in blocked if len(b[3]) + len(b[4])]
        k = len(blocked)
        feats = np.array([f for _, f, *_ in blocked], dtype=np.int64)
        big_m = np.array([len(bl) + len(br) for *_, bl, br in blocked], dtype=float)
        left_rows, left_of = _flatten([bl for *_, bl, _ in blocked])  # blocked rows and their condition
        right_rows, right_of = _flatten([br for *_, br in blocked])
        zero_bits, zero_of = _flatten([np.array(c.zero_bits, dtype=np.int64) for _, _, c, *_ in blocked])
        one_bits, one_of = _flatten([np.array(c.one_bits, dtype=np.int64) for _, _, c, *_ in blocked])
        n_one = np.bincount(one_of, minlength=k)
        parts = []  # (rows, cols, coefs) blocks, in each row's term order: entering left, right, f, zero, one bits
        for q, n in enumerate(bd.nodes):
            first = q * k  # the node's rows, n-major as Pyomo iterates (NODES, ...)
            for rows_, of, leaves in ((left_rows, left_of, left_leaves[n]), (right_rows, right_of, right_leaves[n])):
                leaves = np.asarray(leaves, dtype=np.int64)
                parts.append((np.repeat(first + of, len(leaves)),
                              (rows_[:, None] * bd.n_leaves + leaves[None, :]).ravel(), np.ones(len(of) * len(leaves))))
            parts.append((first + np.arange(k), n_l + node_at[n] * len(m.FEATURES) + feats, big_m))
            parts.append((first + zero_of, n_l + n_f + node_at[n] * bd.n_bits + zero_bits, -big_m[zero_of]))
            parts.append((first + one_of, n_l + n_f + node_at[n] * bd.n_bits + one_bits, big_m[one_of]))
        rows, cols, coefs = (np.concatenate([part[i] for part in parts]) for i in range(3))
        order = np.argsort(rows, kind="stable")
        keys = [(n, *key) for n in bd.nodes for key, *_ in blocked]
        return LinearRows(*index, keys=tuple(np.array(part) for part in zip(*keys, strict=True)) or (np.zeros(0),),
                          variables=[m.l, m.f, m.t], rows=rows[order], cols=cols[order].astype(np.int64),
                          coefs=coefs[order], upper=np.tile(big_m * (1 + n_one), len(bd.nodes)), doc=doc)

    cond_of = {(f, c.node, c.kind): c for f in m.FEATURES for c in conditions[f]}
    m.TRIE = pyo.Set(initialize=[(f, c.node) for f in m.FEATURES for c in conditions[f] if c.kind == "R"],
                     dimen=2, doc="(f, ν): the nodes ν of feature f's threshold-index trie, bin(f)")
    m.lower_range_not_right = condition_rows(
        (m.NODES, m.TRIE), [((f, q), f, cond_of[f, q, "R"]) for f, q in m.TRIE],
        "[VZ19] (R_ν), reference code: threshold in the upper half of ν => rows with τ_low < V < τ_{mid+1} "
        "may not go right")
    m.upper_range_not_left = condition_rows(
        (m.NODES, m.TRIE), [((f, q), f, cond_of[f, q, "L"]) for f, q in m.TRIE],
        "[VZ19] (L_ν), reference code: threshold in the lower half of ν => rows with τ_mid < V < τ_high "
        "may not go left")
    m.outside_thresholds = condition_rows(
        (m.NODES, m.FEATURES), [((f,), f, cond_of[f, None, "MinMax"]) for f in m.FEATURES],
        "[VZ19] (MinMax): rows above the largest threshold may not go left, rows below the smallest may not go "
        "right")


def _flatten(arrays: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The arrays one after the other, and for each element the index of its array."""
    sizes = [len(a) for a in arrays]
    flat = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)
    return flat.astype(np.int64, copy=False), np.repeat(np.arange(len(arrays)), sizes)


def _l_at(bd: BinOCTData, rows, leaves) -> np.ndarray:
    """Positions of l[r, lf] (r in ``rows``, lf in ``leaves``) among the members of ``m.l``, indexed ROWS x LEAVES."""
    rows = rows.astype(np.int64, copy=False) if isinstance(rows, np.ndarray) else np.fromiter(rows, dtype=np.int64)
    leaves = np.asarray(leaves, dtype=np.int64)
    return (rows[:, None] * bd.n_leaves + leaves[None, :]).ravel()


def _add_predictions(m, bd: BinOCTData, l_vars: list) -> None:
    m.p = pyo.Var(m.LEAVES, m.CLASSES, domain=pyo.Binary, doc="p[l,c] = 1: leaf l predicts class c")
    m.e = pyo.Var(m.LEAVES, m.CLASSES, domain=pyo.NonNegativeReals,
                  doc="e[l,c]: weight of the class-c rows in leaf l that are misclassified")
    rows_of_class = [np.flatnonzero(bd.y == c) for c in range(bd.n_classes)]

    @m.Constraint(m.LEAVES, doc="[VZ19]: every leaf predicts exactly one class")
    def one_class_per_leaf(m, lf):
        return sum(m.p[lf, c] for c in m.CLASSES) == 1

    @m.Constraint(m.LEAVES, m.CLASSES, doc="[VZ19]: class-c weight in leaf l counts as error unless l predicts c "
                                           "(M''' = weight of class c)")
    def leaf_errors(m, lf, c):
        rows = rows_of_class[c]
        big_m = float(bd.weights[rows].sum())
        return linear_sum(l_vars, _l_at(bd, rows, [lf]), bd.weights[rows]) - big_m * m.p[lf, c] <= m.e[lf, c]


def _add_leaf_activity(m, bd: BinOCTData, l_vars: list) -> None:
    m.alpha = pyo.Var(m.LEAVES, domain=pyo.Binary, doc="α[l] = 1: leaf l is non-empty (pays λ)")

    @m.Constraint(m.LEAVES, doc="[HRS19] (28): a leaf reached by any row is non-empty")
    def non_empty_leaf(m, lf):
        return linear_sum(l_vars, _l_at(bd, m.ROWS, [lf]), np.ones(bd.n_rows)) <= bd.n_rows * m.alpha[lf]


def _add_surplus_bit_fix(m, bd: BinOCTData) -> None:
    depth_of = [trie_depth(feat.n_thresholds) for feat in bd.features]
    index = [(n, i) for n in bd.nodes for i in range(bd.n_bits)
             if any(d <= i for d in depth_of) or (bd.pass_through and n in bd.spine)]

    @m.Constraint(index, doc="[VZ19] reference code (unreachable there): bits beyond ⌈log2 T_f⌉ of the chosen "
                             "feature f (all bits of the spine under the pass-through) are 0")
    def unused_bits_off(m, n, i):
        idle = sum(m.f[n, f] for f in m.FEATURES if depth_of[f] <= i)
        if bd.pass_through and n in bd.spine:
            idle += m.s
        return m.t[n, i] + idle <= 1


def _add_objective(m, bd: BinOCTData, options: BinOCTOptions) -> None:
    total = float(bd.weights.sum())
    if rates.active(options):  # FN (FP) under a target, else FN + C FP; the target row
        errors = rates.add_error_objective(m, lambda k: sum(m.e[lf, k] for lf in m.LEAVES), bd.y, bd.weights,
                                           bd.n_classes, options)
        if rates.constrained(options):
            m.missed = pyo.Objective(expr=errors, sense=pyo.minimize,
                                     doc="[GKLMS] (16): missed positives (negatives) under the target")
            return
        errors = errors / total
    else:
        errors = sum(m.e[lf, c] for lf in m.LEAVES for c in m.CLASSES) / total
    leaves = options.leaf_penalty * sum(m.alpha[lf] for lf in m.LEAVES) if options.leaf_penalty > 0 else 0
    m.misclassification_and_leaves = pyo.Objective(
        expr=errors + leaves, sense=pyo.minimize,
        doc="[HRS19] (27), normalised: (1/W) Σ e + λ Σ α (λ = 0: BinOCT [VZ19], as an error fraction)")


# ------------------------------------------------------------------------------------ decode / start
def loss(data: Dataset, tree: Tree, options: BinOCTOptions) -> float:
    """odtmip's loss for ``tree``, recomputed by routing: weighted errors / total weight + λ · leaves (errors: FN +
    C FP with a class weight); with a sensitivity/specificity target the missed weight (:mod:`~odtmip.models.rates`)."""
    if rates.constrained(options):
        return rates.tree_errors(data, tree, options)
    errors = rates.tree_errors(data, tree, options) if rates.active(options) else data.misclassifications(tree)
    return errors / float(data.weights.sum()) + options.leaf_penalty * tree.n_leaves


def loss_floor(options: BinOCTOptions) -> float:
    """The least loss of any tree: λ, for its one leaf at least (errors are >= 0; under a target, whose loss is the
    missed weight, λ = 0). The model's objective agrees: every row reaches a leaf, so with N >= 1 rows (28) sets
    some α_l = 1 and (27) is >= λ."""
    return options.leaf_penalty


def _merge(spec):
    """Replace a branch whose two children are leaves of one class by that leaf (predictions unchanged)."""
    if spec.left.split is None and spec.right.split is None and spec.left.label == spec.right.label:
        return leaf(spec.left.label)
    return spec


def _value(var) -> float:
    """A variable's value; 0 for one HiGHS never saw (it appears in no constraint, so it is free)."""
    return 0.0 if var.value is None else float(var.value)


def decode_tree(m, data: Dataset) -> Tree:
    """The tree the current values of f, t (and s) describe, with the labels p of the leaves reached.

    Following the bits (t = 1: lower half) gives each node's threshold index. A node that sends all its
    training rows one way (the root pass-through, a repeated ancestor test, an empty subtree) is replaced by
    the child that gets them, and sibling leaves of one class are merged; predictions on the training data are
    unchanged, and every leaf of the result is non-empty.
    """
    bd: BinOCTData = m.bdata
    n_leaves = bd.n_leaves

    def build(h: int, rows: np.ndarray):
        if h >= n_leaves:
            lf = h - n_leaves
            return leaf(max(range(bd.n_classes), key=lambda c: _value(m.p[lf, c])))
        if bd.pass_through and h in bd.spine and _value(m.s) > 0.5:
            return build(2 * h + 1, rows)
        f = max(range(len(bd.features)), key=lambda f: _value(m.f[h, f]))
        feat = bd.features[f]
        j = decode_index([_value(m.t[h, i]) for i in range(bd.n_bits)], feat.n_thresholds)
        right = feat.values[rows] > feat.thresholds[j]
        if not right.any():
            return build(2 * h, rows)
        if right.all():
            return build(2 * h + 1, rows)
        return _merge(branch(feat.split(j), build(2 * h, rows[~right]), build(2 * h + 1, rows[right])))

    return data.new_tree(build(1, np.arange(bd.n_rows)))


def _match_split(bd: BinOCTData, split: Split, goes_right: np.ndarray, rows: np.ndarray):
    """(f, j, swapped): a candidate split inducing ``split``'s partition of ``rows`` (children swapped when
    ``swapped``), or None."""
    for f, feat in enumerate(bd.features):
        for j in range(feat.n_thresholds):
            if feat.split(j) == split:
                return f, j, False
    want = goes_right[rows]
    for swapped in (False, True):
        for f, feat in enumerate(bd.features):
            for j in range(feat.n_thresholds):
                if np.array_equal(feat.goes_right(j)[rows], want ^ swapped):
                    return f, j, swapped
    return None


def _one_sided(bd: BinOCTData, rows: np.ndarray):
    """(f, j, right): a candidate split sending all of ``rows`` to one side (``right``), or None."""
    for f, feat in enumerate(bd.features):
        gaps = bd.gaps[f][rows]
        if gaps.max() < feat.n_thresholds:  # all at or below some threshold: τ_{max gap} sends them left
            return f, int(gaps.max()), False
        if gaps.min() > 0:  # all above τ_{min gap - 1}: right
            return f, int(gaps.min()) - 1, True
    return None


def warm_start_values(m, data: Dataset, tree: Tree) -> list | None:
    """(variable, value) pairs for every variable of ``m`` that reproduce ``tree``, or None if it does not fit.

    Each split of ``tree`` must partition the rows reaching it like one of the model's candidate splits (true
    for DP trees over :func:`dp_equivalent`'s columns), and the tree may be at most as deep as the model.
    Shallower leaves are padded to the full depth with a test that sends all their rows one way (for a DP
    tree: an ancestor's test repeated), leaving the other subtree empty; a single-leaf tree uses the root
    pass-through when the model has it, else any root split with both sides predicting the leaf's class.
    """
    bd: BinOCTData = m.bdata
    n_leaves = bd.n_leaves
    raw = raw_columns(data.raw)
    split_at: dict[int, tuple[int, int]] = {}
    leaf_rows: dict[int, np.ndarray] = {}
    leaf_label: dict[int, int] = {}
    state = {"s": 0}
    empty = np.zeros(0, dtype=np.int64)

    def fill(h: int, rows: np.ndarray, label: int) -> None:
        """Put every row of ``rows`` into one leaf of class ``label`` below heap node h."""
        if h >= n_leaves:
            leaf_rows[h - n_leaves], leaf_label[h - n_leaves] = rows, label
            return
        one_sided = _one_sided(bd, rows) if len(rows) else (0, 0, False)
        if one_sided is not None:
            f, j, right = one_sided
            split_at[h] = (f, j)
            fill(2 * h + right, rows, label)
            fill(2 * h + (not right), empty, label)
        elif bd.pass_through and h in bd.spine and (h == 1 or state["s"]):  # the single-leaf tree
            state["s"] = 1
            fill(2 * h + 1, rows, label)
            fill(2 * h, empty, label)
        else:  # the root without a pass-through: any split, both sides predicting ``label``
            split_at[h] = (0, 0)
            right = bd.features[0].goes_right(0)[rows]
            fill(2 * h, rows[~right], label)
            fill(2 * h + 1, rows[right], label)

    def place(i: int, h: int, rows: np.ndarray) -> bool:
        node = tree.nodes[i]
        if node.is_leaf:
            fill(h, rows, node.label)
            return True
        if h >= n_leaves:
            return False  # the tree is deeper than the model
        goes_right = node.split.goes_right(raw)
        found = _match_split(bd, node.split, goes_right, rows)
        if found is None:
            return False
        f, j, swapped = found
        split_at[h] = (f, j)
        right = bd.features[f].goes_right(j)[rows]
        left_child, right_child = (node.right, node.left) if swapped else (node.left, node.right)
        return place(left_child, 2 * h, rows[~right]) and place(right_child, 2 * h + 1, rows[right])

    if not place(0, 1, np.arange(bd.n_rows)):
        return None

    values: list = []
    for n in bd.nodes:
        f_n, j_n = (None, 0) if state["s"] and n in bd.spine else split_at.get(n, (None, 0))
        bits = () if f_n is None else encode_index(j_n, bd.features[f_n].n_thresholds)
        values += [(m.f[n, f], 1.0 if f == f_n else 0.0) for f in m.FEATURES]
        values += [(m.t[n, i], float(bits[i]) if i < len(bits) else 0.0) for i in m.BITS]
    if bd.pass_through:
        values.append((m.s, float(state["s"])))
    w = bd.weights
    for lf in range(n_leaves):
        rows = leaf_rows[lf]
        in_leaf = np.zeros(bd.n_rows, dtype=bool)
        in_leaf[rows] = True
        values += [(m.l[r, lf], 1.0 if in_leaf[r] else 0.0) for r in m.ROWS]
        for c in m.CLASSES:
            predicted = c == leaf_label[lf]
            values.append((m.p[lf, c], 1.0 if predicted else 0.0))
            values.append((m.e[lf, c], 0.0 if predicted else float(w[rows][bd.y[rows] == c].sum())))
        if hasattr(m, "alpha"):
            values.append((m.alpha[lf], 1.0 if len(rows) else 0.0))
    return values


# ------------------------------------------------------------------------------------------- solve
def make_options(options: BinOCTOptions | None = None, **values) -> BinOCTOptions:
    """``options`` (default: all defaults) with ``values`` replacing fields; unknown names are an error."""
    return merge_options(BinOCTOptions, options, values, "BinOCT")


def dp_equivalent(data: Dataset, options: BinOCTOptions) -> tuple[Dataset, float]:
    """The DP problem with this model's optimum: ``(dataset, penalty)``.

    The dataset's binary columns are exactly the model's candidate splits (one column per feature and
    threshold) and ``penalty = λ·W`` per branch node (W = total weight). For a tree without empty leaves,
    leaves = branch nodes + 1, so W · loss = DP objective + λW, i.e. ``loss = DP objective / W + λ``
    (:func:`dp_objective_to_loss`); the DP at depth K then has the optimum of BinOCT(K) (λ = 0) or of RBinOCT(K)
    with the root pass-through.
    """
    columns: list[BinaryColumn] = []
    group_of = {g.column: i for i, g in enumerate(data.groups)}
    for feat in candidate_features(data, options):
        if feat.level_split is not None:
            columns.append(BinaryColumn(feat.name, feat.level_split, group_of[feat.column]))
            continue
        for j, t in enumerate(feat.thresholds):
            columns.append(BinaryColumn(f"{feat.name}>{t:.6g}", feat.split(j), group_of[feat.column]))
    if not columns:
        raise DataError("no feature has a candidate threshold")
    return data.derive(columns), options.leaf_penalty * float(data.weights.sum())


def dp_objective_to_loss(value: float, data: Dataset, options: BinOCTOptions) -> float:
    """The loss (errors/W + λ·leaves) of a DP tree from its objective under :func:`dp_equivalent`."""
    return value / float(data.weights.sum()) + options.leaf_penalty


# ------------------------------------------------------------------------------------------- registry


def _dp_problem(data: Dataset, max_depth: int, options: BinOCTOptions) -> DPProblem:
    """:func:`dp_equivalent` at depth K; W x loss = DP objective + lambda W (:func:`dp_objective_to_loss`)."""
    derived, penalty = dp_equivalent(data, options)
    derived, two_class = rates.dp_view(data, derived, options)
    if two_class:  # the loss is the DP's objective, the missed weight under the target
        return DPProblem(derived, max_depth, max_depth, two_class=two_class)
    weight = float(data.weights.sum())
    if options.thresholds == "all":  # every midpoint and level: ConTree's splits, without a column per midpoint
        every_midpoint, _ = rates.dp_view(data, data, options)  # with the class weight, as derived has it
        return DPProblem(every_midpoint, max_depth, max_depth, penalty=penalty, offset=options.leaf_penalty * weight,
                         scale=weight, solver="contree")
    return DPProblem(derived, max_depth, max_depth, penalty=penalty, offset=options.leaf_penalty * weight,
                     scale=weight)


def dp_bound_problem(data: Dataset, max_depth: int, options: BinOCTOptions) -> DPProblem:
    """The DP problem whose values below each split bound the model's loss (``dp_bounds``,
    :mod:`odtmip.models.view`): :func:`dp_equivalent`'s columns (one per feature and threshold), penalty lambda W."""
    derived, penalty = dp_equivalent(data, options)
    view, two_class = rates.bound_view(data, derived, options)
    if two_class:  # the loss is the missed weight under the target, as the DP's
        return DPProblem(view, max_depth, max_depth, two_class=two_class)
    weight = float(data.weights.sum())
    return DPProblem(view, max_depth, max_depth, penalty=penalty, offset=options.leaf_penalty * weight, scale=weight)


def tree_view(m, data: Dataset) -> TreeView:
    """Every node's choices (f[n, f]: feature f at any of its thresholds, rows <= the threshold left; the raw column
    of f; the pass-through s at the root: one leaf), the leaves with their classes p[l, k] and rows l[r, l], and the
    loss W x (27) - lambda W in the DP's units (:func:`dp_objective_to_loss`; a tree whose leaves are all non-empty
    costs its DP objective)."""
    bd: BinOCTData = m.bdata
    ends = np.cumsum([1 if f.level_split is not None else f.n_thresholds for f in bd.features])
    columns = [np.arange(end - size, end) for end, size in zip(ends, np.diff(ends, prepend=0), strict=True)]

    def choices(n: int) -> list[Choice]:
        out = [Choice(m.f[n, f], columns[f], features=(feat.column,)) for f, feat in enumerate(bd.features)]
        return out + [Choice(m.s, leaf=True)] if bd.pass_through and n == 1 else out

    weight = float(bd.weights.sum())
    loss = (weight * m.misclassification_and_leaves.expr - m.options.leaf_penalty * weight  # DPProblem.in_dp_units
            if hasattr(m, "misclassification_and_leaves") else m.missed.expr)  # a target: the missed weight
    return TreeView(1, (2, 3) if bd.depth > 1 else (), {n: choices(n) for n in bd.nodes}, loss, model=m,
                    nodes=tuple(bd.nodes), leaves=tuple(range(bd.n_leaves)),
                    below={n: (tuple(bd.leaves_below(2 * n)), tuple(bd.leaves_below(2 * n + 1))) for n in bd.nodes},
                    reach={lf: [m.l[r, lf] for r in range(bd.n_rows)] for lf in range(bd.n_leaves)},
                    label=lambda lf, k: m.p[lf, k], y=bd.y, weights=bd.weights, n_classes=bd.n_classes)


def _make_options(max_depth, options, values) -> BinOCTOptions:
    if max_depth is None:
        raise OptionError("binoct needs a depth (max_depth): the depth K of the complete tree")
    return make_options(options, **values)


def _stats(m, options: BinOCTOptions) -> dict:
    bd: BinOCTData = m.bdata
    return {"n_features": len(bd.features), "n_thresholds": sum(f.n_thresholds for f in bd.features),
            "bits": bd.n_bits, "thresholds": options.thresholds, "leaf_penalty": options.leaf_penalty,
            "root_pass_through": bd.pass_through}


FORMULATION = Formulation(
    name="binoct",
    options=BINOCT_OPTIONS,
    make_options=_make_options,
    build=build_model,
    decode=decode_tree,
    embed=warm_start_values,
    loss=loss,
    to_loss=lambda m: lambda value: value,  # the model's objective is the loss
    loss_floor=loss_floor,
    dp_problem=_dp_problem,
    accepts=rates.meets_target,
    reads_numbers=True,
    stats=_stats,
    size=model_size,
    dp_bound_problem=dp_bound_problem,
    view=tree_view,
    constrained=lambda options: replace(options, root_pass_through=True),
)
