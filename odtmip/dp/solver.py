"""Optimal classification trees by dynamic programming and search, after MurTree.

The problem ([MurTree] Eq. 1, extended): over the binary columns of a :class:`~odtmip.core.data.Dataset`,
find a tree of depth <= ``max_depth`` with <= ``max_nodes`` branch nodes, every non-empty leaf holding at
least ``min_leaf`` training rows (counted unweighted), that minimises

    weighted misclassifications + penalty x (branch nodes),

and among the optimal trees one with the fewest branch nodes. Leaves predict the class of largest weight,
ties to the lowest class index.

**Sparse objective** ([OSDT] §2, Eq. 4): with ``leaf_penalty`` = lambda the objective is

    R(T) = (weighted misclassifications) / W + lambda x (number of leaves),

W the total weight, lambda a per-leaf penalty in units of "fraction of the data". Since leaves = branch
nodes + 1, W R(T) = errors + (lambda W) x (branch nodes) + lambda W: the same search with
``penalty = lambda W`` finds it, and the result is reported in OSDT units (``objective`` recomputed by
routing as ``misclassifications / W + lambda x leaves``, ``bound`` converted the same way). With
``max_depth=None`` there is no depth limit; the search is made finite by the leaf-count bound
([OSDT] Theorem C.1): for any known tree T_c (here the optimum of depth <= 2, a warm start) and an optimal
tree T*,

    lambda W L(T*) <= W R(T*) - errors(T*) <= W R(T_c) - E,

E the weight of the rows that no tree can classify correctly (equivalent points, [OSDT] Theorem B.2). So
T* has at most B = floor((W R(T_c) - E) / (lambda W)) - 1 branch nodes, hence depth <= B, and depth <= the
number of usable columns. (Corollary C.2's a-priori bound floor(1/(2 lambda)) is off by one and is not
used.) ``max_depth=None`` needs a positive penalty; the search applies the same bound to every
subproblem, with its own leaf as the known tree.

The search techniques, each switchable in :class:`DPOptions` without changing the optimum, are those of
[MurTree] plus the bounds of [OSDT] §3 and appendices B-C (see :mod:`odtmip.dp._kernels._search` for how
each one acts in the recursion): hierarchical lower bound (Theorem 3.1, the DP's cached and propagated
bounds), lookahead (Lemma 3.2), leaf support (Theorem 3.3), incremental accuracy (Theorem 3.4), leaf
accuracy (Theorem 3.5), equivalent points (Theorem B.2) and the leaf-count bound (Theorem C.1). They need
a positive penalty to prune much, except equivalent points, which also bounds the plain objective.

This module is the orchestration: option checks, preprocessing of the columns, the time limit, growing the
cache, rebuilding the :class:`~odtmip.core.tree.Tree` and the :class:`~odtmip.core.results.SolveResult`. The search
itself is one compiled recursion (:mod:`odtmip.dp._kernels._search`); :mod:`odtmip.dp.reference` is the
readable version of the same recursion. :func:`solve_dp` hands small problems (depth <= 4, an estimated run time
of a few hundredths of a second) to :mod:`odtmip.dp.pairwise`, which solves them in numpy without compiling anything
(:attr:`DPOptions.engine`).

Preprocessing: columns constant on the data are dropped, and duplicate or complementary columns are merged
(a split on f and on not-f is the same split with the children swapped). Each kept column is stored with
its minority value as 1, so that rows have few present features (frequency counting costs
``O(|D| m^2)``, [MurTree] §4.3); the tree is mapped back to the original columns. Rows with identical columns
are grouped once for the equivalent-points bound.

Arithmetic (:func:`tie_tolerance`): objectives are float64, and two objectives closer than a tolerance
``tol`` count as equal (then the smaller tree wins).

* **Exact** (``tol = 0``) when every sample weight (none: all 1) and the penalty per branch node are
  integers and K (W + 3 penalty) < 2^53, W the total weight and K the number of classes. The penalty is
  ``penalty``, or ``leaf_penalty x W`` as computed in float64: a sparse objective is exact only when that
  product is an integer. Every value the search forms is then an integer of magnitude at most
  W + 3 penalty (a subtree's optimum is at most its leaf's errors; a bound adds at most three penalties,
  as for the three-node trees of the depth-two solver), float64 holds such integers exactly, the support
  test W (K-1) / K <= penalty decides exactly while W (K-1) and penalty K are below 2^53, and the floor of
  a correctly rounded quotient in the leaf-count bound is never below the true floor. So the optimum, its
  number of branch nodes and the bound are exact; in ``leaf_penalty`` units the reported values are one
  rounded division away from these.
* Otherwise (real weights or penalty, or integer data beyond that limit, whose sums would round)
  ``tol = 4 (n + 64) eps (W + 3 penalty)``, n the number of rows and eps = 2^-52: a bound on the round-off of
  sums of at most n weights (plus a few more for the penalties and the children's sums of a deep tree), so
  two objectives that differ by more are told apart. The tree is optimal, and the bound a lower bound, up to
  ``tol``.

The tolerance used is reported as ``stats["tolerance"]``.

Anytime behaviour: before the search, a greedy tree (CART's splits or a two-level lookahead, optimal depth-two
bottoms, at depth >= 5 without a node limit optimal depth-three ones as far as the time limit allows,
:mod:`odtmip.dp.anytime`; never worse than CART at the same depth) is the first incumbent and the root's upper
bound. With a time limit the compiled loop reads the clock every 256 search nodes; at the deadline it unwinds
without caching anything from the interrupted loops ([MurTree] §4.6) and the best tree known (the best root
configuration finished so far, the optimum of a shallower depth, or the greedy tree) is returned with
``Status.TIME_LIMIT`` and a lower bound valid at any moment: the root's cached bound, the equivalent points, and
the least bound over all root splits from what the cache knows about their children
(:func:`~odtmip.dp._kernels._search.split_bound`). Progress lines report the same incumbent and bound.

A root split's bound stays low until the search has visited its children, and the search for the optimum visits
the last root split at its end: stopped before, its bound is that of the equivalent points. So at a fixed depth
the search first proves bounds (:attr:`DPOptions.bound_passes`): searches of the root under upper bounds B
below the incumbent visit every root split with little work each and prove objective > B when they find no
tree, so a stopped search reports the last B proven. Searching the whole root at least once costs about as
much as the search for the optimum on wide data at depth >= 5 (about p^(d-2) depth-two subproblems, p columns),
where the bound stays that of the equivalent points until then.

References
----------
.. [MurTree] E. Demirović, A. Lukina, E. Hebrard, J. Chan, J. Bailey, C. Leckie, K. Ramamohanarao,
   P. J. Stuckey, "MurTree: Optimal Classification Trees via Dynamic Programming and Search",
   JMLR 23(26):1-47, 2022 (arXiv 2007.12652). Section numbers are those of
   the arXiv v1 text; algorithm numbers those of the JMLR version.
.. [OSDT] X. Hu, C. Rudin, M. Seltzer, "Optimal Sparse Decision Trees", Advances in Neural Information
   Processing Systems 32 (NeurIPS 2019), with its supplement (appendices B-H).
.. [STreeD] J. van der Linden, M. de Weerdt, E. Demirović, "Necessary and Sufficient Conditions for Optimal
   Decision Trees using Dynamic Programming", NeurIPS 2023 (its solver, pystreed).
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, fields

import numpy as np

from odtmip.core import progress
from odtmip.core.data import Dataset
from odtmip.core.exceptions import OptionError, ResourceError, VerificationError
from odtmip.core.options import MEMORY_LIMIT, check_switches, check_threads, check_time_limit, memory_text
from odtmip.core.results import SolveResult, Status, stopped_status
from odtmip.core.tree import Tree, leaf
from odtmip.dp._kernels import _cache as kc
from odtmip.dp._kernels import _common as kcommon
from odtmip.dp._kernels import _depth2 as kdepth2
from odtmip.dp._kernels import _interpreted
from odtmip.dp._kernels import _search as ksearch
from odtmip.dp._kernels._cache import ROOT_COST, new_root
from odtmip.dp._kernels._common import Data, Params
from odtmip.dp._kernels._depth2 import new_scratch
from odtmip.dp._kernels._search import (
    INC_COST,
    INC_FEATURE,
    INC_LEFT,
    INC_NODES,
    INC_RIGHT,
    NO_BOUND_NODES,
    Search,
    grow_archive,
    new_incumbent,
    new_levels,
)
from odtmip.dp.anytime import (
    CAPPED,
    ENDED,
    PROVED,
    can_stop,
    greedy_tree,
    pass_target,
    rounds_and_passes,
    stopped_for_good,
    terminal_solver,
)
from odtmip.dp.common import (
    MAX_DEPTH_CAP,
    check_int,
    check_penalties,
    encode_columns,
    equivalent_minority,
    in_threads,
    internal_branch,
    internal_spec,
    pack_columns,
    reported,
    routed_objective,
    tie_tolerance,
    verify_tree,
)

logger = logging.getLogger("odtmip")

#: Largest depth the leaf-count bound may leave for a search without a depth limit (budgets stay int64).
UNBOUNDED_DEPTH_CAP = 50
#: First depth of the iterative deepening without a depth limit (its optimum is the first incumbent).
WARM_START_DEPTH = 2

COUNTING = ("auto", "bitset", "frequency")
CACHE_KINDS = ("dataset", "branch", None)
ENGINES = ("auto", "compiled", "interpreted", "pairwise")
#: Seconds per process the search runs interpreted under ``engine="auto"`` before :class:`DPSolver` compiles its kernels
#: and searches again, where no second process compiles them meanwhile (numba's cache off; one core without a time
#: limit): about a third of the compile (about 20 s), so work too big for the interpreter costs at most a third more.
INTERPRETED_SECONDS = 6.0


@dataclass(frozen=True)
class DPOptions:
    """Switches for the search techniques. None of them changes the optimal objective, only the time to find it
    (and, for ``fewest_nodes``, which of the optimal trees is returned).

    Attributes
    ----------
    depth_two : bool
        Solve subproblems of depth <= 2 with the specialised solver ([MurTree] §4); off: plain recursion
        down to the leaves.
    counting : {"auto", "bitset", "frequency"}
        Class counts of the depth-two solver: popcounts on per-feature bitsets (unit weights only) or
        frequency counters ([MurTree] §4.3). ``auto`` takes bitsets for unweighted data.
    incremental : bool
        Update the two frequency counters incrementally ([MurTree] §4.4.3); frequency counting only.
    similarity : bool
        Similarity-based lower bound ([MurTree] §4.5). It is only valid for ``min_leaf = 1`` and is skipped
        otherwise.
    cache : {"dataset", "branch", None}
        Memo key: the instance set (default) or the sorted path literals ([MurTree] §4.6). None: nothing is
        read from the memo during search (entries are still written, to rebuild the tree).
    upper_bound : bool
        Upper-bound propagation with the sibling's cached lower bound subtracted ([MurTree] §4.2 (upper bounds)).
    refined_lb : bool
        Store the refined lower bound of Eq. 15-16 for subproblems found infeasible under their bound.
    skip_degenerate : bool
        Skip splits with an empty side ([MurTree] Prop. 4.2).
    dynamic_order : bool
        Solve first the child whose leaf misclassifies more ([MurTree] §4.7-4.8).
    merge_features : bool
        Drop constant columns and merge duplicate and complementary ones before the search.
    equivalent_points : bool
        Equivalent points bound ([OSDT] Proposition B.1, Theorem B.2): rows with identical columns but
        different labels force errors on every tree; their minority weight bounds every subproblem from below.
    leaf_bound : bool
        Leaf-count bound per subproblem ([OSDT] Theorem C.1 with the subproblem's leaf as the known tree):
        a subproblem whose leaf errs on L and which has E unavoidable errors gets at most
        floor((L - E) / penalty) branch nodes, and so at most that depth. (Without a depth limit the root is
        always bounded this way, from the warm start.) Conversely, an optimum T cached for a smaller budget of
        depth d' bounds the subproblem by min(T, E + (d' + 1) penalty). Needs ``penalty > 0``.
    leaf_support : bool
        Lower bound on node support ([OSDT] Theorem 3.3): a subproblem of weight w with w (K-1)/K <= penalty
        is never split (for two classes: support <= 2 lambda). Needs ``penalty > 0``.
    incremental_accuracy : bool
        Incremental accuracy bound ([OSDT] Theorem 3.4 with the lookahead of Lemma 3.2): a split whose two
        leaves do not beat the incumbent (at most the parent's leaf) needs a child split once more, which
        costs at least penalty + that child's equivalent points; this bounds the split before its
        children are searched.
    leaf_accuracy : bool
        Lower bound on leaf accuracy ([OSDT] Theorem 3.5): every leaf of an optimal tree classifies more
        than ``penalty`` weight correctly, so a split with a child whose majority weight is <= penalty is
        skipped (no leaf below it could qualify), here and in the depth-two solver.
    iterative_deepening : bool
        With a depth limit and a positive penalty, solve the depths 2, 3, ... in turn, each under the best
        tree so far, and stop once the leaf-count bound ([OSDT] Theorem C.1) of that tree leaves no deeper
        tree that could beat it (as [STreeD] does for its cost-complexity objective). Without a depth limit
        the search always runs this way.
    bound_passes : bool
        At a fixed depth (not under ``iterative_deepening``) and with a time limit, prove lower bounds before
        searching for the optimum, so that a search stopped by its time limit reports a useful bound (and progress
        shows it rise; without a limit the search runs straight to the optimum, :func:`~odtmip.dp.anytime.can_stop`):
        the search for the optimum runs in rounds (:data:`~odtmip.dp.anytime.IMPROVE_NODES` search nodes, then
        twice as many each time), each followed by a pass: a search of the root under an upper bound B between
        the bound proven and the best tree (a quarter of the way, then halfway), with at most as many search
        nodes as the round before it (:data:`~odtmip.dp.anytime.PASS_SHARE`; a pass stopped there goes on after
        the next round), until :data:`~odtmip.dp.anytime.MAX_BOUND_PASSES` of them have proved their bound, as
        IDA* raises its bound (:func:`~odtmip.dp.anytime.rounds_and_passes`). A pass that finds no tree proves
        objective > B; what the rounds and passes solve stays in the cache, so each starts where the others left
        off (in total 0-15 % more time). A pass that finds a tree has found the optimum. Needs ``cache`` and
        ``upper_bound``.
    fewest_nodes : bool
        Among the optimal trees return one with the fewest branch nodes (the objective is the pair
        (objective, nodes)). Off: the first optimal tree the search meets, as [STreeD] and DL8.5 return; the
        objective is the same, the tree may have more nodes, and the search can be much faster when many
        trees are optimal (a perfect tree at a generous depth). The only switch that can change the tree.
    engine : {"auto", "compiled", "interpreted", "pairwise"}
        Which engine :func:`solve_dp` runs. ``"compiled"``: the search of :mod:`odtmip.dp._kernels._search`, whose
        techniques the switches above choose; in a new environment it first compiles its kernels (about 20 s,
        once: later processes load them from numba's disk cache). ``"interpreted"``: the same search, node for
        node, with its kernels run by the Python interpreter (:mod:`odtmip.dp._kernels._interpreted`): nothing to
        compile, some hundred times slower. ``"pairwise"``: :mod:`odtmip.dp.pairwise`, in numpy only, for depth
        <= 4 and small data: nothing to compile. ``"auto"``: the pairwise engine for the problems
        :func:`odtmip.dp.pairwise.suits` accepts when every other switch has its default, else the search:
        compiled once its kernels are compiled in this process or in numba's disk cache; before that, interpreted
        while a second process compiles them into the cache (without one, for up to :data:`INTERPRETED_SECONDS`
        per process), then compiled with what is left of the time limit; at the time limit the interpreter's best
        tree stands, so a time limit is never spent waiting for a compile.
        The search and the pairwise engine both return an optimal tree with the fewest branch nodes; where several
        such trees exist they may return different ones. :class:`DPSolver` is always the search.
    """

    depth_two: bool = True
    counting: str = "auto"
    incremental: bool = True
    similarity: bool = True
    cache: str | None = "dataset"
    upper_bound: bool = True
    refined_lb: bool = True
    skip_degenerate: bool = True
    dynamic_order: bool = True
    merge_features: bool = True
    equivalent_points: bool = True
    leaf_bound: bool = True
    leaf_support: bool = True
    incremental_accuracy: bool = True
    leaf_accuracy: bool = True
    iterative_deepening: bool = True
    bound_passes: bool = True
    fewest_nodes: bool = True
    engine: str = "auto"

    def __post_init__(self):
        if self.engine not in ENGINES:
            raise OptionError(f"engine must be one of {ENGINES}, got {self.engine!r}")
        if self.counting not in COUNTING:
            raise OptionError(f"counting must be one of {COUNTING}, got {self.counting!r}")
        if self.cache not in CACHE_KINDS:
            raise OptionError(f"cache must be one of {CACHE_KINDS}, got {self.cache!r}")
        check_switches(self)


#: The switches of :class:`DPOptions` that the kernels read under the same name in their parameters.
_KERNEL_SWITCHES = tuple(f.name for f in fields(DPOptions) if f.name in Params._fields)


def runs_interpreted(dataset: Dataset, options: DPOptions) -> bool:
    """Whether :class:`DPSolver` runs its kernels interpreted (:attr:`DPOptions.engine`)."""
    return _interpreted.choose(options.engine, warm_up, ksearch.solve_node, ksearch.root_bound, ksearch.split_bound,
                               ksearch.optimal_entry, kcommon.row_lists, kcommon.effective_budget, kcommon.cap_budget,
                               kdepth2.solve_terminal)


# ------------------------------------------------------------------------------------------ memory
def estimated_memory_gib(n: int, p: int, n_classes: int, frequency: bool, threads: int = 1) -> float:
    """GiB the DP's arrays take for ``n`` rows, ``p`` binary columns and ``n_classes`` classes, before its cache:
    the column matrix, its encoded copy and the rows' lists of present columns (int64, built from at most
    half of the entries after the minority flip), the bitsets of the columns and, per search thread, of the
    depth-two solver's compacted columns per class, and with ``frequency`` counting the two counters of all column
    pairs (per thread)."""
    words = (n + 63) // 64
    per_thread = 8 * words * p * n_classes
    if frequency:
        per_thread += 2 * 8 * p * p * (n_classes + 1)
    return (12 * n * p + 8 * words * p + threads * per_thread) / 2**30


# ------------------------------------------------------------------------------------------ warm-up
@progress.warm_up("the DP kernels")
def warm_up() -> float:
    """Compile (or load from the numba cache) every kernel once per process; returns the seconds it took the
    first time, 0.0 afterwards (:func:`odtmip.core.progress.warm_up`)."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(40, 5))
    y = rng.integers(0, 2, size=40)
    for counting in ("bitset", "frequency"):
        for weights in (None, rng.random(40) + 0.5):
            if counting == "bitset" and weights is not None:
                continue
            ds = Dataset(X, y, weights)
            options = DPOptions(counting=counting, engine="compiled")
            DPSolver(ds, options=options).solve(max_depth=3, time_limit=3600.0)
            DPSolver(ds, leaf_penalty=0.02, options=options).solve(max_depth=None)
            # a search stopped at its second node: the kernels of a stopped search's bound, compiled here and not
            # inside the first solve that reaches its time limit
            stopped = DPSolver(ds, leaf_penalty=0.02, options=options)
            stopped._params = stopped._params._replace(node_limit=1)
            stopped.solve(max_depth=3)
    kcommon.clock()  # its object-mode block is compiled at the first call (never cached): here, not in a solve
    kcommon.yield_core()  # the same


# ------------------------------------------------------------------------------------------- solver
class DPSolver:
    """A DP solver bound to one dataset, whose cache persists across :meth:`solve` calls.

    Cached optima and lower bounds carry their own (depth, node) budget, so solving again with another
    ``max_depth`` or ``max_nodes`` reuses them ([MurTree] §4.6.3 (incremental solving): tuning over
    growing depth and size).

    Parameters
    ----------
    dataset : Dataset
        The training data; the search uses its binary columns ``dataset.Xb``.
    min_leaf : int, default=1
        Rows (unweighted) every non-empty leaf must hold.
    penalty : float, default=0.0
        Objective added per branch node, in units of (weighted) misclassifications.
    leaf_penalty : float, optional
        lambda of the sparse objective errors / W + lambda x leaves ([OSDT] Eq. 4; W the total weight):
        searched as ``penalty = lambda W`` and reported in these units. Excludes a nonzero ``penalty``.
    options : DPOptions, optional
        Technique switches.
    memory_limit : float or None, default=half of physical memory
        GiB: data whose arrays (:func:`estimated_memory_gib`) would take more is refused with a
        :class:`~odtmip.core.exceptions.ResourceError`; a search whose cache would outgrow it stops and returns its
        best tree with ``Status.MEMORY_LIMIT``. None: no guard.
    threads : int or None, default=None
        Search threads (None: the cores this process may use). At depth >= 3 the root's features are shared out
        among them (:meth:`_run`), with one cache and the best root tree shared; the tree is the one a single
        thread returns. The interpreted engine searches in one thread.

    Examples
    --------
    >>> import numpy as np
    >>> from odtmip.core.data import Dataset
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 3)
    >>> ds = Dataset(X, [0, 1, 1, 0] * 3)
    >>> solver = DPSolver(ds)
    >>> solver.solve(max_depth=1).objective, solver.solve(max_depth=2).objective
    (6.0, 0.0)
    >>> DPSolver(ds, leaf_penalty=0.1).solve(max_depth=None).objective  # 4 leaves, no errors
    0.4
    """

    def __init__(self, dataset: Dataset, *, min_leaf: int = 1, penalty: float = 0.0,
                 leaf_penalty: float | None = None, options: DPOptions | None = None,
                 memory_limit: float | None = MEMORY_LIMIT, threads: int | None = None):
        self.dataset = dataset
        self.threads = check_threads(threads)
        self.min_leaf = check_int("min_leaf", min_leaf, 1)
        penalty, self.leaf_penalty = check_penalties(penalty, leaf_penalty)
        self.total_weight = float(np.sum(dataset.weights))
        if self.leaf_penalty is not None:
            penalty = self.leaf_penalty * self.total_weight
        self.penalty = penalty
        self.options = DPOptions() if options is None else options
        if not isinstance(self.options, DPOptions):
            raise OptionError(f"options must be a DPOptions, got {type(self.options).__name__}")
        if self.options.engine == "pairwise":
            raise OptionError("DPSolver is the MurTree search (compiled or interpreted); engine='pairwise' is an "
                              "option of solve_dp")
        self._interpreted = runs_interpreted(dataset, self.options)
        self._k = _interpreted.modules(self._interpreted)  # the kernel modules it runs
        unit = dataset.sample_weight is None or bool(np.all(dataset.sample_weight == 1.0))
        counting = self.options.counting
        if counting == "bitset" and not unit:
            raise OptionError("counting='bitset' needs unit sample weights; use 'frequency' or 'auto'")
        self._unit = unit
        self._bitset = counting == "bitset" or (counting == "auto" and unit)
        self.memory_limit = memory_limit
        (n, p), K = dataset.Xb.shape, dataset.n_classes
        self._arrays_gib = estimated_memory_gib(n, p, K, frequency=not self._bitset, threads=self.threads)
        if memory_limit is not None and self._arrays_gib > memory_limit:
            raise ResourceError(
                f"the DP on {n:,} rows x {p:,} binary columns ({K} classes"
                f"{', frequency counting' if not self._bitset else ''}) would take about "
                f"{memory_text(self._arrays_gib)}, more than memory_limit = {memory_limit:g} GiB; use fewer columns "
                "(numeric buckets or fewer thresholds), fewer rows, or raise memory_limit")
        self._enc = encode_columns(dataset.Xb, self.options.merge_features)
        self._build_arrays()

    # ------------------------------------------------------------------ arrays
    def _build_arrays(self) -> None:
        ds, enc = self.dataset, self._enc
        n, p = enc.X.shape
        K = ds.n_classes
        self._n, self._p, self._K = n, p, K
        y = np.ascontiguousarray(ds.y, dtype=np.int64)
        wts = np.ascontiguousarray(ds.weights, dtype=np.float64)
        fbits = pack_columns(enc.X)
        W = fbits.shape[1] if p else max(1, (n + 63) // 64)
        if p == 0:
            fbits = np.zeros((0, W), dtype=np.uint64)
        cbits = pack_columns((y[:, None] == np.arange(K)[None, :]).astype(np.uint8))
        rptr, cols = self._k.common.row_lists(enc.X)
        minority = (equivalent_minority(enc.X, y, wts, K) if self.options.equivalent_points
                    else np.zeros(n, dtype=bool))
        self._data = Data(feature_bits=fbits, class_bits=cbits, weights=wts, labels=y, row_start=rptr,
                          row_features=cols,
                          minority_bits=pack_columns(minority[:, None].astype(np.uint8))[0])
        self._W = W
        self._key_words = max(1, (2 * p + 63) // 64) if self.options.cache == "branch" else W
        self._cache = kc.new_tables(self._key_words)
        self._scratch = new_scratch(n, p, W, K, frequency=not self._bitset)
        self._archive = None
        self._helpers: list = []  # the other threads' (archive, scratch), made at their first search
        self._root = np.zeros(W, dtype=np.uint64)
        full = np.ones(n, dtype=np.uint8)[:, None]
        self._root[:] = pack_columns(full)[0]
        self._root_counts = np.zeros(K + 1 + kcommon.CNT_EQUIV)
        self._root_counts[:K] = np.bincount(y, weights=wts, minlength=K)
        self._root_counts[K] = n
        self._root_counts[K + kcommon.CNT_EQUIV] = float(wts[minority].sum())
        self._tol = tie_tolerance(wts, self.penalty, K)
        o = self.options
        switches = {name: bool(getattr(o, name)) for name in _KERNEL_SWITCHES}  # bool: one compiled signature
        switches["similarity"] &= self.min_leaf == 1  # [MurTree] §4.5: only valid for min_leaf = 1
        self._params = Params(
            n_classes=int(K), min_rows=self.min_leaf, cost=kcommon.COST_ERRORS, unit=self._unit, bitset=self._bitset,
            use_cache=o.cache is not None, branch_keys=o.cache == "branch", penalty=float(self.penalty),
            tol=float(self._tol), deadline=math.inf,
            # [OSDT] Theorem 3.5: a leaf of an optimal tree classifies more than the penalty correctly (-1: no test)
            min_correct=float(self.penalty) if o.leaf_accuracy and self.penalty > 0 else -1.0, **switches,
        )

    @property
    def equivalent_points_weight(self) -> float:
        """Weight of the rows no tree classifies correctly ([OSDT] Theorem B.2; 0 when that bound is off)."""
        return float(self._root_counts[self._K + kcommon.CNT_EQUIV])

    def _new_search(self, depth: int, prm: Params) -> Search:
        """The search state for a root of depth budget ``depth``: the archive grows to it and keeps what it holds."""
        self._archive = grow_archive(self._archive, depth, self._W)
        levels = new_levels(depth, self._W, self._key_words, self._K + 1 + kcommon.CNT_EQUIV)
        levels.bits[0, 0] = self._root
        levels.counts[0, 0] = self._root_counts
        st = np.zeros(kcommon.N_STATS, dtype=np.int64)
        st[kcommon.S_NEXT_REPORT] = (np.iinfo(np.int64).max if math.isinf(prm.report_every)
                                     else int((time.perf_counter() + prm.report_every) * 1e6))
        return Search(data=self._data, cache=self._cache, archive=self._archive, scratch=self._scratch,
                      levels=levels, prm=prm, st=st, incumbent=new_incumbent(), root=new_root(False),
                      helping=np.zeros(1, dtype=np.bool_))

    # ------------------------------------------------------------------ solve
    def solve(self, max_depth: int | None = 3, max_nodes: int | None = None,
              time_limit: float | None = None) -> SolveResult:
        """Optimal tree with depth <= ``max_depth`` and <= ``max_nodes`` branch nodes (default 2^d - 1).

        Parameters
        ----------
        max_depth : int or None, default=3
            Depth limit, at most 20; None: no limit, bounded by the leaf-count bound ([OSDT] Theorem C.1,
            see the module docstring), which needs ``leaf_penalty > 0`` (or ``penalty > 0``).
        max_nodes : int, optional
            Branch-node limit.
        time_limit : float, optional
            Seconds; at the limit the best tree found is returned with ``Status.TIME_LIMIT``.

        Returns
        -------
        SolveResult
            ``solver="dp"``; ``objective`` recomputed by routing the data through ``tree`` (in OSDT units
            errors / W + lambda x leaves when ``leaf_penalty`` is set); ``bound`` a proven lower bound in
            the same units; ``stats`` with ``nodes`` (search nodes), ``depth_two_calls``,
            ``cache_entries``, ``depth_bound`` (the depth searched), ``tolerance`` (of objective
            comparisons, 0 when exact; see the module docstring), ``compile_seconds`` (JIT time spent in
            this call, outside ``seconds``) and more.

        Raises
        ------
        OptionError
            Invalid limits, or no depth limit without a positive penalty.
        VerificationError
            The rebuilt tree does not reproduce the DP's objective (a bug).
        """
        unbounded = max_depth is None
        if unbounded:
            if self.penalty <= 0:
                raise OptionError("max_depth=None (no depth limit) needs leaf_penalty > 0 (or penalty > 0): "
                                  "without a price per leaf nothing bounds the tree size")
        else:
            max_depth = check_int("max_depth", max_depth, 0, MAX_DEPTH_CAP)
        node_limit = None if max_nodes is None else check_int("max_nodes", max_nodes, 0)
        limit = check_time_limit(time_limit)
        self._reporter = None  # one for the whole call, made by its first search
        with np.errstate(over="ignore"):  # the cache's hashes wrap around (numpy warns when interpreted)
            return _interpreted.interpreted_first(self, lambda left: self._solve(max_depth, node_limit, left), limit,
                                                  INTERPRETED_SECONDS, self._compile, warm_up)

    def _compile(self) -> float:
        """Switch to the compiled kernels; returns the seconds compiling (or loading) them took."""
        self._interpreted = False
        self._k = _interpreted.modules(False)
        return warm_up()

    def _solve(self, max_depth: int | None, node_limit: int | None, limit: float | None) -> SolveResult:
        """:meth:`solve` with checked arguments, by the kernels ``self._k`` holds."""
        unbounded, depth = max_depth is None, max_depth
        t0 = time.perf_counter()
        compile_seconds = 0.0 if self._interpreted else warm_up()  # loading the kernels counts in the time limit
        stats: dict = {"engine": "interpreted" if self._interpreted else "compiled", "features": self._p,
                       "threads": 1 if self._interpreted else self.threads,
                       "features_raw": int(self.dataset.Xb.shape[1]), "tolerance": self._tol}
        if compile_seconds:
            stats["compile_seconds"] = compile_seconds
        if self.leaf_penalty is not None:
            stats["leaf_penalty"] = self.leaf_penalty
        if self._n < self.min_leaf:
            return SolveResult("dp", Status.INFEASIBLE, "solved", None, None, math.inf,
                               time.perf_counter() - t0, stats)
        prm = self._params._replace(deadline=math.inf if limit is None else t0 + limit,
                                    report_every=progress.INTERVAL if progress.enabled() else math.inf)
        if self._reporter is None:
            self._reporter = progress.Reporter("dp", t0, minimise=True)
        self._totals, self._grows = np.zeros(kcommon.N_STATS, dtype=np.int64), 0
        self._thread_nodes, self._parallel_seconds = np.zeros(self.threads, dtype=np.int64), 0.0
        eq = self.equivalent_points_weight
        # the greedy tree (odtmip.dp.anytime) is the first incumbent and the search's upper bound; ``warm`` holds
        # (spec, objective, nodes, depth budget, node budget) of the best tree known outside the running search
        if unbounded:
            greedy_depth = min(self._p, self._n // self.min_leaf - 1, UNBOUNDED_DEPTH_CAP)
        else:
            greedy_depth = depth
        warm = self._greedy(greedy_depth, node_limit, prm, stats)
        greedy = warm
        ubc, ubn = (warm[1], warm[2]) if warm is not None else (math.inf, NO_BOUND_NODES)
        if unbounded or (self.penalty > 0 and self.options.iterative_deepening):
            # Iterative deepening (as the solver of [STreeD] searches its sparse objective): depths k = 2, 3, ...
            # each under the best tree so far. That tree is the R^c of [OSDT] Theorem C.1: a better tree has at
            # most B branch nodes (:meth:`_leaf_count_bound`), hence depth <= B, so once depth k >= B is solved
            # the best tree is optimal. No tree has a depth above the number of usable columns or
            # rows / min_leaf - 1 either, which bounds a search without a depth limit.
            bound = min(self._p, self._n // self.min_leaf - 1) if unbounded else depth
            if node_limit is not None:
                bound = min(bound, node_limit)
            if warm is not None:
                bound = min(bound, self._leaf_count_bound(warm[1], warm[2]))
            k = min(WARM_START_DEPTH, bound)
            while True:
                nk = (1 << k) - 1 if node_limit is None else min(node_limit, (1 << k) - 1)
                d, n = self._root_budget(k, nk)
                cost, nodes, st, search, out_of_memory = self._run(d, n, ubc, ubn, prm)
                stats["depth_bound"] = bound
                if st[kcommon.S_TIMEOUT] or out_of_memory:
                    # a bound of the root is only valid for the problem at the bound's depth (None: no bound)
                    final = None
                    if bound <= UNBOUNDED_DEPTH_CAP:
                        final = self._root_budget(bound, (1 << bound) - 1 if node_limit is None else node_limit)
                    return self._stopped(d, n, search, warm, stats, t0, eq, final, out_of_memory)
                if math.isfinite(cost):
                    warm = (self._build(self._root, self._root_key(), d, n), cost, nodes, d, n)
                    improved = cost < ubc - self._tol or nodes < ubn
                    ubc, ubn = cost, nodes
                    bound = min(bound, self._leaf_count_bound(cost, nodes))
                else:
                    improved = True  # the best tree beats every tree of depth k: one level deeper
                if k >= bound:
                    break
                # one level deeper while that pays; once it stops improving, prove the incumbent at the bound
                k = k + 1 if improved else bound
                if k > UNBOUNDED_DEPTH_CAP:
                    raise OptionError(f"without a depth limit the leaf-count bound still allows depth {bound} > "
                                      f"{UNBOUNDED_DEPTH_CAP} for leaf_penalty={self.leaf_penalty}; give max_depth or "
                                      "a larger penalty")
            if warm is None:
                raise VerificationError("the search returned no tree although the leaf is feasible")
            spec, cost, nodes, d, n = warm
            stats["depth_bound"], stats["depths_solved"] = max(bound, d), k
        else:
            stats["depth_bound"] = depth
            n = (1 << depth) - 1 if node_limit is None else min(node_limit, (1 << depth) - 1)
            d, n = self._root_budget(min(depth, n), n)
            if warm is not None and self._params.leaf_bound and self.penalty > 0:
                # [OSDT] Theorem C.1 with the greedy tree as T_c: exact, the optimum lies within the smaller budget
                d, n = (int(v) for v in self._k.common.cap_budget(d, n, self._leaf_count_bound(warm[1])))
            if warm is not None and (warm[3] > d or warm[2] > n):
                # beyond the root's effective budget the greedy tree cannot beat the leaf (it does; defensive)
                warm, ubc, ubn = None, math.inf, NO_BOUND_NODES
            settled = False
            if warm is not None and self._passes_apply(prm):
                warm, settled, cost, nodes, search, stop = self._bound_passes(d, n, warm, prm, stats)
                if stop is not None:
                    return self._stopped(d, n, search, warm, stats, t0, eq, (d, n), stop is Status.MEMORY_LIMIT)
                ubc, ubn = warm[1], warm[2]
            # any optimal tree will do: only a strictly better tree than the greedy one is searched for ((c, -1),
            # see odtmip.dp._kernels._search); if there is none, the greedy tree is optimal
            strict = warm is not None and not self.options.fewest_nodes
            if not settled:  # the search for the optimum under the incumbent
                cost, nodes, st, search, out_of_memory = self._run(d, n, ubc, -1 if strict else ubn, prm)
                if st[kcommon.S_TIMEOUT] or out_of_memory:
                    return self._stopped(d, n, search, warm, stats, t0, eq, (d, n), out_of_memory)
            if strict and not math.isfinite(cost) and warm is not greedy:
                # no tree beats a round's incumbent, which depends on where the rounds stopped (and on the threads):
                # the first tree as good in the order of one search, found mostly in the cache
                cost, nodes, st, search, out_of_memory = self._run(d, n, warm[1], NO_BOUND_NODES, prm)
                if st[kcommon.S_TIMEOUT] or out_of_memory:
                    return self._stopped(d, n, search, warm, stats, t0, eq, (d, n), out_of_memory)
            if math.isfinite(cost):
                spec = self._build(self._root, self._root_key(), d, n)
            elif strict:
                spec, cost, nodes = warm[:3]
            else:
                raise VerificationError("the search returned no tree although the leaf is feasible")
        tree = self.dataset.new_tree(spec)
        self._verify(tree, cost, d, n)
        if int(nodes) != tree.n_branch_nodes:
            raise VerificationError(f"DP tree has {int(nodes)} branch nodes, rebuilt tree {tree.n_branch_nodes}")
        objective = self._objective(tree)
        self._add_stats(stats, t0)
        return SolveResult("dp", Status.OPTIMAL, "solved", tree, objective, objective, time.perf_counter() - t0,
                           stats)

    def _passes_apply(self, prm: Params) -> bool:
        """Whether the search for the optimum at a fixed depth starts with bound passes
        (:attr:`DPOptions.bound_passes`; they read the cache and prune by the upper bound), which a limit may stop
        (:func:`~odtmip.dp.anytime.can_stop`)."""
        o = self.options
        return o.bound_passes and o.upper_bound and o.cache is not None and can_stop(prm.deadline, prm.node_limit)

    def _bound_passes(self, d: int, n: int, warm: tuple, prm: Params, stats: dict):
        """The search for a better tree than ``warm`` in rounds, each followed by a bound pass
        (:func:`~odtmip.dp.anytime.rounds_and_passes`, :attr:`DPOptions.bound_passes`).

        Returns the best tree known (as ``warm``), whether the last search settled the optimum (finished under the
        incumbent, or found a tree within a pass's bound) with what it returned (objective, nodes), that search,
        and the status that stopped it (None if none did).
        """
        strict = not self.options.fewest_nodes
        stats["bound_passes"] = 0
        lb, end = -math.inf, None  # end: what the call returns, once a round or pass ended the search

        def improve(search: Search) -> None:  # a root tree the search found is better than ``warm``
            nonlocal warm
            inc = search.incumbent
            if math.isfinite(inc[INC_COST]):
                spec, value = self._incumbent(inc)
                warm = (spec, value, int(inc[INC_NODES]), d, n)

        def search_round(cap: int) -> bool:
            nonlocal lb, end
            cost, nodes, st, search, oom = self._run(d, n, warm[1], -1 if strict else warm[2], prm, nodes_cap=cap)
            stop = self._stop_status(st, oom, prm, cap)
            if not st[kcommon.S_TIMEOUT] or stop is not None:
                end = (warm, stop is None, cost, nodes, search, stop)
                return True  # finished (the optimum, or the incumbent is), or stopped for good
            improve(search)
            lb = max(lb, self._lower_bound(search, d, n))
            end = (warm, False, math.inf, 0, search, None)
            return False

        def bound_pass(target: float, cap: int) -> str:
            nonlocal lb, end
            cost, nodes, st, search, oom = self._run(d, n, target, NO_BOUND_NODES, prm, best=warm[1], nodes_cap=cap)
            stop = self._stop_status(st, oom, prm, cap)
            if stop is not None:
                end = (warm, False, cost, nodes, search, stop)
                return ENDED
            lb = max(lb, self._lower_bound(search, d, n))
            if st[kcommon.S_TIMEOUT]:  # at its share of the nodes: the bound is what its cache knows
                improve(search)
                end = (warm, False, math.inf, 0, search, None)
                return CAPPED
            stats["bound_passes"] += 1
            # the first tree <= B found is optimal: every pass before proved that none is below
            end = (warm, math.isfinite(cost), cost, nodes, search, None)
            return ENDED if math.isfinite(cost) else PROVED

        rounds_and_passes(search_round, bound_pass,
                          lambda first: pass_target(lb, warm[1], first, self._tol == 0.0))
        return end

    def _stop_status(self, st: np.ndarray, out_of_memory: bool, prm: Params, cap: int) -> Status | None:
        """What stopped a round or pass of this call for good (:func:`~odtmip.dp.anytime.stopped_for_good`): the
        memory limit, the deadline or the call's node limit; None: it finished, or stopped at its ``cap``."""
        if out_of_memory:
            return Status.MEMORY_LIMIT
        if stopped_for_good(st, cap, int(self._totals[kcommon.S_NODES]), prm.node_limit, prm.deadline):
            return Status.TIME_LIMIT
        return None

    def _root_budget(self, d: int, n: int) -> tuple[int, int]:
        """The root's budget as the search reduces it (:func:`~odtmip.dp._kernels._common.effective_budget`)."""
        d, n = min(d, n), min(n, (1 << d) - 1)
        d, n = self._k.common.effective_budget(self._root_counts, d, n, self._params)
        return int(d), int(n)

    def _leaf_count_bound(self, value: float, nodes: int | None = None) -> int:
        """Most branch nodes a tree at least as good as ``value`` can have ([OSDT] Theorem C.1):
        floor((value - E) / penalty), E the equivalent-points weight; needs a positive penalty.

        With ``nodes``: most branch nodes of a tree lexicographically better than (``value``, ``nodes``). A
        tree of b >= ``nodes`` branch nodes costs at least E + b penalty and must cost less than ``value``,
        so b < (value - E) / penalty.
        """
        eq, tol = self.equivalent_points_weight, self._tol
        b = int(math.floor((value - eq + tol) / self.penalty))
        if nodes is not None and b >= nodes:
            b = max(nodes - 1, math.ceil((value - eq - tol) / self.penalty) - 1)
        return max(0, b)

    def _greedy(self, depth: int, node_limit: int | None, prm: Params, stats: dict):
        """The greedy tree of :mod:`odtmip.dp.anytime` at depth ``depth``, verified by routing, as ``warm`` of
        :meth:`solve`; None when it is the leaf or has more than ``node_limit`` branch nodes."""
        t0 = time.perf_counter()
        terminal = None
        if self.options.depth_two:
            terminal = terminal_solver(self._data, self._scratch, prm, self._K + 1 + kcommon.CNT_EQUIV,
                                       self._k.depth2.solve_terminal)
        # the last pass trades branch nodes for errors: not under a node limit the tree must meet
        binds = node_limit is not None and node_limit < (1 << depth) - 1
        g = greedy_tree(self._enc.X, self._data.labels, self._data.weights, self._K, depth, self.min_leaf,
                        self.penalty, self._tol, terminal, last_pass=not binds, deadline=prm.deadline)
        stats["greedy_seconds"] = time.perf_counter() - t0
        if g.nodes == 0 or (node_limit is not None and g.nodes > node_limit):
            return None
        spec = internal_spec(self.dataset, self._enc, g.spec)
        n = (1 << g.depth) - 1 if node_limit is None else min(node_limit, (1 << g.depth) - 1)
        self._verify(self.dataset.new_tree(spec), g.cost, g.depth, n)
        stats["greedy_objective"] = self._report(g.cost)
        return spec, g.cost, g.nodes, g.depth, n

    def _run(self, d: int, n: int, ubc: float, ubn: int, prm: Params, best: float | None = None,
             nodes_cap: int | None = None):
        """One search of the root at budget (d, n) under the upper bound (ubc, ubn), growing the cache as needed;
        ``best``: the objective of the best tree known, if above ``ubc`` (a bound pass); ``nodes_cap``: stop
        after that many search nodes. ``prm.node_limit`` limits the search nodes of all searches of a call.

        With several threads and a root that splits into subproblems of depth >= 1 (no depth-two root), the threads
        first share out the root's features (:meth:`_run_threads`); then one thread searches the root under the best
        tree they found, which finds the children in the cache and picks the tree of the one-thread search (the first
        in feature order among the best), and stores the root.

        Returns the optimum (objective, nodes) within the bound (inf if none), the statistics, the search
        state (its root incumbent and levels) and whether the memory limit stopped the search (the cache would
        outgrow it). The statistics and cache grows add up in ``self._totals`` and ``self._grows``.
        """
        left = prm.node_limit - int(self._totals[kcommon.S_NODES])
        prm = prm._replace(node_limit=left if nodes_cap is None else min(left, nodes_cap))
        shown = ubc if best is None else best
        limit = 2 if self.options.depth_two else 1
        if self.threads == 1 or self._interpreted or min(d, n) <= limit or self._p < 2:
            return self._run_one(d, n, ubc, ubn, prm, shown)
        cost, nodes, st, search, out_of_memory = self._run_threads(d, n, ubc, ubn, prm, shown)
        if out_of_memory or st[kcommon.S_TIMEOUT]:
            return cost, nodes, st, search, out_of_memory
        if math.isfinite(cost):  # the optimum: one thread searches the root under it
            ubc, ubn = cost, (nodes if self.options.fewest_nodes else NO_BOUND_NODES)
        prm = prm._replace(node_limit=max(1, prm.node_limit - int(st[kcommon.S_NODES])))
        cost, nodes, last, final, out_of_memory = self._run_one(d, n, ubc, ubn, prm, shown)
        if last[kcommon.S_TIMEOUT] and _better_root(search.incumbent, final.incumbent, self._tol):
            final = final._replace(incumbent=search.incumbent)
        return cost, nodes, st + last, final, out_of_memory

    def _run_one(self, d: int, n: int, ubc: float, ubn: int, prm: Params, shown: float):
        """:meth:`_run` in this thread, ``prm.node_limit`` its search nodes."""
        search = self._new_search(d, prm)
        st = search.st
        while True:
            st[kcommon.S_FULL] = 0
            self._cache.used[kc.U_STOP] = 0
            progress._DP_REPORT[0] = lambda: self._progress(search, d, n, shown)  # noqa: B023 (called in the loop)
            try:
                cost, nodes, _ = self._k.search.solve_node(search, 0, 0, d, n, ubc, ubn)
            finally:
                progress._DP_REPORT[0] = None
            if not st[kcommon.S_FULL]:
                break
            if not self._grow():
                self._totals += st
                return math.inf, 0, st, search, True
            search = search._replace(cache=self._cache)
        self._totals += st
        return float(cost), int(nodes), st, search, False

    def _grow(self) -> bool:
        """Double the cache's tables, unless that would outgrow the memory limit (then False)."""
        grown_gib = self._arrays_gib + 2 * kc.tables_gib(self._cache)
        if self.memory_limit is not None and grown_gib > self.memory_limit:
            return False
        self._cache = self._k.cache.grow_tables(self._cache)
        self._grows += 1
        return True

    def _thread_search(self, t: int, d: int, prm: Params, root: np.ndarray) -> Search:
        """The search state of thread ``t`` (0: this solver's own archive and depth-two arrays; the others keep theirs
        across searches) at a root of depth budget ``d`` shared out through ``root``."""
        search = self._new_search(d, prm)
        if t > 0:
            while len(self._helpers) < t:
                self._helpers.append((None, new_scratch(self._n, self._p, self._W, self._K,
                                                        frequency=not self._bitset)))
            archive, scratch = self._helpers[t - 1]
            archive = grow_archive(archive, d, self._W)
            self._helpers[t - 1] = (archive, scratch)
            search = search._replace(archive=archive, scratch=scratch)
        return search._replace(root=root)

    def _run_threads(self, d: int, n: int, ubc: float, ubn: int, prm: Params, shown: float):
        """The root's features shared out among ``self.threads`` threads (:func:`~odtmip.dp._kernels._search.solve_node`
        releases the GIL): each takes the next feature no thread has taken and searches it under the best root tree
        of all threads, in one cache shared under a lock. Each thread reads the clock and stops at the deadline and
        at its share of ``prm.node_limit``; one that fills the cache stops them all, and the cache grows.

        Returns what :meth:`_run_one` returns, for the root as the threads left it: the best tree they found (not yet
        stored in the cache), their statistics summed, thread 0's search state with the best root incumbent of all.
        """
        T = self.threads
        each = prm._replace(node_limit=-(-prm.node_limit // T))  # each thread's share of the search nodes
        with kc.shared_by_threads(self._cache):
            while True:
                self._cache.used[kc.U_STOP] = 0
                root = new_root(True, self._p)
                searches = [self._thread_search(t, d, each if t == 0 else each._replace(report_every=math.inf), root)
                            for t in range(T)]
                found, seconds = in_threads(
                    T, lambda t, ss=searches: self._k.search.solve_node(ss[t], 0, 0, d, n, ubc, ubn),
                    lambda ss=searches: self._progress(ss[0], d, n, shown))
                self._parallel_seconds += seconds
                self._thread_nodes += [s.st[kcommon.S_NODES] for s in searches]
                st = np.sum([s.st for s in searches], axis=0)
                if not any(s.st[kcommon.S_FULL] for s in searches):
                    break
                self._totals += st
                if not self._grow():
                    return math.inf, 0, st, searches[0], True
        self._totals += st
        if any(s.st[kcommon.S_NODES] > each.node_limit for s in searches):
            st[kcommon.S_NODES] = max(int(st[kcommon.S_NODES]), prm.node_limit + 1)  # a thread stopped at its share
        inc = searches[0].incumbent
        for s in searches[1:]:
            if _better_root(s.incumbent, inc, self._tol):
                inc = s.incumbent
        best = min((r[:2] for r in found if r is not None and math.isfinite(r[0])), default=(math.inf, 0),
                   key=lambda r: (float(r[0]), int(r[1])))
        return float(best[0]), int(best[1]), st, searches[0]._replace(incumbent=inc, st=st), False

    def _lower_bound(self, search: Search, d: int, n: int) -> float:
        """Lower bound on the root's optimum at budget (d, n), valid at any moment of ``search``: its cached bound,
        the equivalent-points weight, and the bound of every root split from its children's cached bounds
        (:func:`~odtmip.dp._kernels._search.split_bound`)."""
        key = self._root_key()
        cached = float(self._k.search.root_bound(search, key, d, n)[0])
        return max(cached, self.equivalent_points_weight, float(self._k.search.split_bound(search, key, d, n)))

    def _progress(self, search: Search, d: int, n: int, ubc: float) -> None:
        """A progress line: the best root tree of this search (or the best tree known before it, ``ubc``) and the
        lower bound of the root at budget (d, n)."""
        best = min(float(search.incumbent[INC_COST]), float(search.root[ROOT_COST]), ubc)  # root: of all threads
        bound = min(self._lower_bound(search, d, n), best)
        self._reporter(self._report(best) if math.isfinite(best) else None, self._report(bound))

    def _stopped(self, d, n, search, warm, stats, t0, eq, final, out_of_memory) -> SolveResult:
        """The best tree known when the deadline passed or the memory limit was reached (the root incumbent of
        ``search`` at the budget (d, n) being searched, ``warm``: the greedy tree or the optimum of a
        shallower depth, or the leaf) and the lower bound of the root at the problem's budget ``final``. A tree
        that meets that bound is optimal (:func:`~odtmip.core.results.stopped_status`), though not proven the one
        with the fewest branch nodes (``stats["fewest_nodes_proven"]``)."""
        spec, value = self._incumbent(search.incumbent)
        limits = (d, n)
        if warm is not None and warm[1] < value - self._tol:
            spec, value, limits = warm[0], warm[1], warm[3:]
        tree = self.dataset.new_tree(spec)
        self._verify(tree, value, *limits)
        lb = eq if final is None else self._lower_bound(search, final[0], final[1])
        self._add_stats(stats, t0)
        limit = Status.MEMORY_LIMIT if out_of_memory else Status.TIME_LIMIT
        status, objective = stopped_status(limit, value, lb, self._tol), self._objective(tree)
        if status is Status.OPTIMAL and self.options.fewest_nodes:
            stats["fewest_nodes_proven"] = False
        bound = objective if status is Status.OPTIMAL else self._report(min(lb, value))
        return SolveResult("dp", status, limit.value, tree, objective, bound, time.perf_counter() - t0, stats)

    def _add_stats(self, stats: dict, t0: float) -> None:
        st = self._totals
        stats.update(
            nodes=int(st[kcommon.S_NODES]),
            depth_two_calls=int(st[kcommon.S_DEPTH2]),
            depth_one_calls=int(st[kcommon.S_DEPTH1]),
            cache_hits=int(st[kcommon.S_CACHE_HITS]),
            similarity_prunes=int(st[kcommon.S_SIM_PRUNE]),
            incremental_updates=int(st[kcommon.S_INCREMENTAL]),
            recounts=int(st[kcommon.S_RECOUNT]),
            budgets_capped=int(st[kcommon.S_CAPPED]),
            equivalent_points_closed=int(st[kcommon.S_EQUIV_CLOSED]),
            leaf_accuracy_skips=int(st[kcommon.S_LEAF_ACC]),
            split_bound_prunes=int(st[kcommon.S_SPLIT_BOUND]),
            cache_keys=int(self._cache.used[kc.U_KEYS]),
            cache_entries=int(self._cache.used[kc.U_ENTRIES]),
            cache_grows=self._grows,
            search_seconds=time.perf_counter() - t0,
        )
        if self._parallel_seconds:  # the work of each thread where they shared out the root's features
            stats.update(parallel_seconds=self._parallel_seconds, thread_nodes=self._thread_nodes.tolist(),
                         root_helps=int(st[kcommon.S_HELPS]))

    # ---------------------------------------------------------------- units
    def _report(self, value: float) -> float:
        return reported(value, self.penalty, self.leaf_penalty, self.total_weight)

    def _objective(self, tree: Tree) -> float:
        return routed_objective(self.dataset, tree, self.penalty, self.leaf_penalty, self.total_weight)

    # --------------------------------------------------------------- rebuild
    def _root_key(self) -> np.ndarray:
        if self.options.cache == "branch":
            return np.zeros(self._key_words, dtype=np.uint64)
        return self._root

    def _child(self, bits: np.ndarray, key: np.ndarray, f: int, right: bool) -> tuple[np.ndarray, np.ndarray]:
        fb = self._data.feature_bits[f]
        child = bits & fb if right else bits & ~fb
        if self.options.cache != "branch":
            return child, child
        lit = 2 * f + int(right)
        ckey = key.copy()
        ckey[lit >> 6] |= np.uint64(1) << np.uint64(lit & 63)
        return child, ckey

    def _rows(self, bits: np.ndarray) -> np.ndarray:
        mask = np.unpackbits(bits.view(np.uint8), bitorder="little")[: self._n].astype(bool)
        return np.flatnonzero(mask)

    def _leaf(self, bits: np.ndarray):
        rows = self._rows(bits)
        counts = np.bincount(self._data.labels[rows], weights=self._data.weights[rows], minlength=self._K)
        return leaf(int(np.argmax(counts)))

    def _branch(self, f: int, absent, present):
        return internal_branch(self.dataset, self._enc, f, absent, present)

    def _split_leaves(self, bits: np.ndarray, key: np.ndarray, f: int):
        left, _ = self._child(bits, key, f, False)
        right, _ = self._child(bits, key, f, True)
        return self._branch(f, self._leaf(left), self._leaf(right))

    def _split_children(self, bits: np.ndarray, key: np.ndarray, f: int, packed_left: int, packed_right: int):
        """Branch on ``f`` with both children rebuilt from the cache at their recorded (packed) budgets."""
        base = kcommon.BUDGET_BASE
        left, lkey = self._child(bits, key, f, False)
        right, rkey = self._child(bits, key, f, True)
        return self._branch(f, self._build(left, lkey, packed_left % base, packed_left // base),
                            self._build(right, rkey, packed_right % base, packed_right // base))

    def _build(self, bits: np.ndarray, key: np.ndarray, d: int, n: int):
        """Tree spec of the cached optimum of ``bits`` at budget (d, n) ([MurTree] Alg. 1 (tree reconstruction))."""
        n_rows = int(sum(int(w).bit_count() for w in bits))
        if d == 0 or n == 0 or n_rows < 2 * self.min_leaf:
            return self._leaf(bits)
        e = int(self._k.search.optimal_entry(self._cache, key, d, n))
        if e < 0:
            raise VerificationError(f"no cached optimum for a subproblem of {n_rows} rows at budget ({d}, {n})")
        ei = self._cache.ints[e]
        f = int(ei[kc.E_FEATURE])
        if f < 0:
            return self._leaf(bits)
        if ei[kc.E_TERMINAL]:
            left, lkey = self._child(bits, key, f, False)
            right, rkey = self._child(bits, key, f, True)
            fl, fr = int(ei[kc.E_FEAT_LEFT]), int(ei[kc.E_FEAT_RIGHT])
            ls = self._split_leaves(left, lkey, fl) if fl >= 0 else self._leaf(left)
            rs = self._split_leaves(right, rkey, fr) if fr >= 0 else self._leaf(right)
            return self._branch(f, ls, rs)
        return self._split_children(bits, key, f, int(ei[kc.E_FEAT_LEFT]), int(ei[kc.E_FEAT_RIGHT]))

    def _incumbent(self, inc: np.ndarray):
        """Best tree known when the deadline passed: the root incumbent ``inc``, or the leaf."""
        leaf_value = float(self._root_counts[: self._K].sum() - self._root_counts[: self._K].max())
        if math.isfinite(inc[INC_COST]) and inc[INC_COST] < leaf_value + self._tol:
            spec = self._split_children(self._root, self._root_key(), int(inc[INC_FEATURE]), int(inc[INC_LEFT]),
                                        int(inc[INC_RIGHT]))
            return spec, float(inc[INC_COST])
        return self._leaf(self._root), leaf_value

    def _verify(self, tree: Tree, value: float, d: int, n: int) -> None:
        verify_tree(self.dataset, tree, value, self.penalty, self.min_leaf, d, n)


def _better_root(inc: np.ndarray, other: np.ndarray, tol: float) -> bool:
    """Whether the root incumbent ``inc`` beats ``other``: a smaller (objective, nodes), or as good on a lower
    feature (the one-thread search meets features in order)."""
    a = (float(inc[INC_COST]), int(inc[INC_NODES]))
    b = (float(other[INC_COST]), int(other[INC_NODES]))
    if not math.isfinite(a[0]):
        return False
    if not math.isfinite(b[0]) or a[0] < b[0] - tol or (abs(a[0] - b[0]) <= tol and a[1] < b[1]):
        return True
    return abs(a[0] - b[0]) <= tol and a[1] == b[1] and inc[INC_FEATURE] < other[INC_FEATURE]
