"""Optimal classification trees on numeric columns by dynamic programming with branch-and-bound: ConTree.

The problem ([ConTree] Eq. 2, with a cost per branch node and a minimum leaf size): over the *ordered
features* of a :class:`~odtmip.core.data.Dataset`, find a tree of depth <= ``max_depth`` whose non-empty leaves hold
at least ``min_leaf`` rows (unweighted) and that minimises

    weighted misclassifications + penalty x (branch nodes).

Leaves predict the class of largest weight, ties to the lowest class index. The split space:

* a **numeric** column (a group of kind ``ordinal`` or ``thresholds``, whatever buckets or thresholds its
  encoding chose) splits at every midpoint between consecutive distinct values, ``x > t`` going right
  ([ConTree] Eq. 1); a missing value counts as smaller than every number, as everywhere in odtmip;
* every other binary column (0/1 columns, one-hot levels of categorical columns, ``is missing``
  indicators) is one split, 1 going right.

So the optimum equals that of the MurTree DP (:func:`odtmip.dp.solve_dp`) on the same data encoded with
``numeric="thresholds"`` (all midpoints), without ever building those binary columns: each node keeps its
rows sorted by every feature, and the thresholds of a node are searched by the bounds of [ConTree] §4-5 (see
:mod:`odtmip.dp._kernels._contree`). Every technique is a switch of :class:`ContreeOptions` that does not
change the optimum. With ``min_leaf > 1`` the three pruning rules are off (they rest on monotonicity in the
rows, which a minimum leaf size breaks), so every threshold is evaluated.

Arithmetic as in the DP (:func:`odtmip.dp.common.tie_tolerance`): exact for integer weights and penalty.
Anytime: at depth >= 3 the search starts from a greedy tree (:mod:`odtmip.dp.anytime`: CART's thresholds or a
two-level lookahead down to depth two, the optimal depth-two subtrees below; at depth >= 5 each subtree of depth
three then tries every feature's best threshold above optimal depth-two subtrees), never worse than CART at the same
depth on the same thresholds, and then looks only for strictly better trees. The compiled search reads the
clock every 256 evaluations and, at the deadline, returns the best tree found so far (the greedy tree or a
better root split) with ``Status.TIME_LIMIT`` and a lower bound from the root's threshold search (the
incumbent, once the search is inside the last feature, else the penalty; the SP bound of the intervals left) or,
higher, the bound proven by the bound passes (:attr:`ContreeOptions.bound_passes`, :mod:`odtmip.dp.anytime`):
searches of the root under upper bounds below the best tree, between rounds of the search for the optimum.
A cache that would outgrow ``memory_limit`` stops the search the same way (``Status.MEMORY_LIMIT``). While it
runs, the progress lines of :mod:`odtmip.core.progress` show the best tree so far and the bound proven. Every tree is
verified by routing the training data through it.

References
----------
.. [ConTree] C. E. Briţa, J. G. M. van der Linden, E. Demirović, "Optimal Classification Trees for
   Continuous Feature Data Using Dynamic Programming with Branch-and-Bound", AAAI 2025 (arXiv 2501.07903).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from odtmip.core import progress
from odtmip.core.binarize import NUMERIC_KINDS, BinaryColumn, midpoint, midpoint_thresholds
from odtmip.core.data import Dataset
from odtmip.core.exceptions import DataError, OptionError, ResourceError, VerificationError
from odtmip.core.options import MEMORY_LIMIT, check_switches, check_threads, check_time_limit, memory_text
from odtmip.core.results import SolveResult, Status, stopped_status
from odtmip.core.tables import as_floats
from odtmip.core.tree import Split, branch, leaf
from odtmip.dp._kernels import _cache as kc
from odtmip.dp._kernels import _common as kcommon
from odtmip.dp._kernels import _contree as kcontree
from odtmip.dp._kernels import _interpreted
from odtmip.dp._kernels._contree import (
    I_BOUND,
    I_CODE,
    I_COST,
    I_LEFT,
    I_RIGHT,
    I_TERMINAL,
    N_PRUNED,
    P_INTERVAL,
    P_NEIGHBOURHOOD,
    P_SUBINTERVAL,
    Switches,
    new_work,
    renewed,
)
from odtmip.dp.anytime import (
    CAPPED,
    ENDED,
    PROVED,
    Greedy,
    can_stop,
    grow_greedy,
    ordered_split,
    pass_target,
    rounds_and_passes,
    stopped_for_good,
)
from odtmip.dp.common import MAX_DEPTH_CAP, check_int, check_penalty, in_threads, tie_tolerance, verify_tree

#: Seconds per process the interpreted kernels search under ``engine="auto"`` before ConTree compiles them and starts
#: again, where no second process compiles them meanwhile (numba's cache off; one core without a time limit): about a
#: third of the compile (6-8 s), so work too big for the interpreter costs at most a third more.
INTERPRETED_SECONDS = 2.5


@dataclass(frozen=True)
class ContreeOptions:
    """Switches for the search techniques of [ConTree]. None of them changes the optimum.

    Attributes
    ----------
    depth_two : bool
        Solve depth-two subproblems with the sorting-based routine (Alg. 2, Eq. 13); off: recursion to
        depth-one subproblems.
    neighbourhood : bool
        Neighbourhood pruning (Theorem 1, Corollary 1, Eq. 7-9).
    interval : bool
        Interval shrinking and the zero rules (Theorem 2, Eq. 10).
    subinterval : bool
        Sub-interval pruning (Theorem 3, Eq. 12).
    cache : bool
        Read optima and lower bounds of instance sets from the cache (§6; entries are always written, to
        rebuild the tree).
    upper_bound : bool
        Solve the children under upper bounds (the larger child first, the hybrid bound for the smaller one).
    sort_features : bool
        Search the features in the order of their best single split's Gini impurity on the whole data (the
        authors' ``sort_gini``, at the root only): a good incumbent early lets the bounds prune more.
    greedy : bool
        At depth >= 3, start from the greedy tree of :mod:`odtmip.dp.anytime` (CART's thresholds or a two-level
        lookahead, optimal depth-two subtrees) and search only for strictly better trees: a tree at once when
        stopped early, and an upper bound for the pruning rules.
    bound_passes : bool
        With the greedy tree, a time limit and no ``max_gap``: the search for the optimum in rounds, each followed
        by a search of the root under an upper bound B below the best tree with at most as many search nodes as the
        round before it, which proves objective >= B when it finds no tree
        (:func:`~odtmip.dp.anytime.rounds_and_passes`), so that a search stopped by its time limit reports that
        bound. Needs ``cache`` and ``upper_bound``.
    engine : {"auto", "compiled", "interpreted"}
        Who runs the kernels (:mod:`odtmip.dp._kernels._interpreted`; the same search either way, node for
        node). ``"auto"``: compiled once they are compiled in this process or in numba's cache on disk;
        before that the Python interpreter searches while a second process compiles them into the cache (about
        6 s; without one, for up to :data:`INTERPRETED_SECONDS` per process), then loads them and starts again
        with what is left of the time limit; at the time limit the interpreter's best tree stands, so a time
        limit is never spent waiting for a compile. ``"interpreted"``: the interpreter, to the end.
    """

    depth_two: bool = True
    neighbourhood: bool = True
    interval: bool = True
    subinterval: bool = True
    cache: bool = True
    upper_bound: bool = True
    sort_features: bool = True
    greedy: bool = True
    bound_passes: bool = True
    engine: str = "auto"

    def __post_init__(self):
        _interpreted.check_engine(self.engine)
        check_switches(self)


@dataclass
class OrderedFeatures:
    """The split space of a dataset: ranks of the rows on every ordered feature, and what each split code means."""

    ranks: np.ndarray  # int32 (F, n)
    offsets: np.ndarray  # int64 (F,): codes of feature f are offsets[f] .. offsets[f] + (distinct values - 2)
    tests: list  # per feature: (raw column, its midpoints) of a numeric column, or the Split of a binary column
    n_splits: int  # number of split codes
    numeric: int  # number of numeric columns among the features
    order: np.ndarray  # int32 (F, n): the rows sorted by each feature's rank (stable)

    def decode(self, code: int) -> tuple[int, int]:
        """Feature and rank of split ``code`` (rows of larger rank go right)."""
        f = int(np.searchsorted(self.offsets, code, side="right")) - 1
        return f, int(code - self.offsets[f])

    def reordered(self, order: np.ndarray) -> OrderedFeatures:
        """The same split space with the features in ``order``."""
        sizes = np.diff(np.append(self.offsets, self.n_splits))[order]
        offsets = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
        return OrderedFeatures(np.ascontiguousarray(self.ranks[order]), offsets, [self.tests[f] for f in order],
                               self.n_splits, self.numeric, np.ascontiguousarray(self.order[order]))

    def split(self, code: int) -> Split:
        """The raw split of ``code`` (made on demand: a numeric column has a split per midpoint)."""
        f, r = self.decode(code)
        test = self.tests[f]
        if isinstance(test, Split):
            return test
        return Split("threshold", (test[0],), threshold=float(test[1][r]))


def ordered_features(dataset: Dataset) -> OrderedFeatures:
    """The features ConTree searches (see the module docstring); constant ones are left out."""
    n = dataset.n_samples
    most = sum(1 if group.kind in NUMERIC_KINDS else len(group.members) for group in dataset.groups)
    R = np.empty((most, n), dtype=np.int32)  # filled in place: no list of columns copied into it
    order = np.empty((most, n), dtype=np.int32)
    offsets, tests = [], []
    numeric, n_splits = 0, 0
    for group in dataset.groups:
        if group.kind in NUMERIC_KINDS:
            c = group.column
            v = as_floats(dataset.column(c), c)
            missing = np.isnan(v)
            if missing.all():
                continue
            if missing.any():
                v = np.where(missing, np.min(v[~missing]), v)  # missing: with the smallest value
            o = np.argsort(v, kind="stable")  # one sort gives the order, the ranks and the distinct values
            sv = v[o]
            new = sv[1:] != sv[:-1]
            if not new.any():
                continue
            k = len(offsets)
            R[k, o[0]] = 0
            R[k, o[1:]] = np.cumsum(new)
            order[k] = o
            distinct = sv[np.concatenate(([True], new))]
            mids = midpoint(distinct[:-1], distinct[1:])
            offsets.append(n_splits)
            tests.append((c, mids))
            n_splits += len(mids)
            numeric += 1
            continue
        for j in group.members:
            col = dataset.Xb[:, j].astype(np.int32)
            if col.min() == col.max():
                continue
            k = len(offsets)
            R[k] = col
            order[k] = np.argsort(col, kind="stable")
            offsets.append(n_splits)
            tests.append(dataset.split_of(j))
            n_splits += 1
    if len(offsets) < most:  # constant columns left out
        R, order = R[:len(offsets)].copy(), order[:len(offsets)].copy()
    return OrderedFeatures(R, np.array(offsets, dtype=np.int64), tests, n_splits, numeric, order)


def work_memory_gib(depth: int, n_features: int, n_rows: int, threads: int = 1, shared: bool = False) -> float:
    """GiB of ConTree's arrays for a search of depth ``depth`` in ``threads`` threads before its cache: per thread
    every level's rows sorted by every feature with their ranks, labels and weights (18 bytes a row and feature;
    once if the threads ``shared`` them, at depth two, where each keeps a memo of 64 bytes a row), the per-level
    threshold search (split positions, weights, records, queue: 60 bytes a row) and the instance keys; once the
    features' ranks and row orders (8 bytes a row and feature)."""
    levels, features = max(depth, 1), max(n_features, 1)
    words = (n_rows + 63) // 64
    sorted_rows = 18 * (levels + 1) * features * n_rows
    scratch = levels * (28 * n_rows + 16 * (2 * n_rows + 2)) + 8 * (levels + 1) * words + n_rows
    scratch += 64 * n_rows if shared else 0  # the memo of evaluated thresholds
    size = (1 if shared else threads) * sorted_rows + threads * scratch + 8 * n_features * n_rows
    return size / 2**30


def _table_sizes(words: int) -> tuple[int, int]:
    """Initial (keys, entries) of the cache: at most 64 MiB of keys (the tables grow when full)."""
    keys = 1 << 14
    while keys > 256 and keys * words * 8 > 1 << 26:
        keys >>= 1
    return keys, 2 * keys


@progress.warm_up("the ConTree kernels")
def warm_up() -> float:
    """Compile (or load from the numba cache) the ConTree kernels once per process; returns the seconds it took
    the first time, 0.0 afterwards (:func:`odtmip.core.progress.warm_up`)."""
    rng = np.random.default_rng(0)
    X = rng.random((30, 3))
    y = rng.integers(0, 3, size=30)
    for weights in (None, rng.random(30) + 0.5):
        for options in (ContreeOptions(engine="compiled"),
                        ContreeOptions(depth_two=False, upper_bound=False, engine="compiled")):
            ContreeSolver(Dataset(X, y, weights), options=options).solve(3, time_limit=3600.0)


class ContreeSolver:
    """ConTree bound to one dataset (see the module docstring).

    Parameters
    ----------
    dataset : Dataset
        Training data; its numeric columns are split at every midpoint, its other binary columns as they are.
    min_leaf : int, default=1
        Rows every non-empty leaf must hold.
    penalty : float, default=0.0
        Cost per branch node, in (weighted) misclassifications ([ConTree] 2026 code: ``complexity_cost``).
    options : ContreeOptions, optional
        Technique switches.

    Examples
    --------
    >>> X = np.array([[1.0], [2.0], [3.0], [4.0], [5.0], [6.0]])
    >>> res = ContreeSolver(Dataset(X, [0, 0, 1, 1, 0, 0])).solve(max_depth=2)
    >>> res.status.value, res.objective, res.tree.depth
    ('optimal', 0.0, 2)
    """

    def __init__(self, dataset: Dataset, *, min_leaf: int = 1, penalty: float = 0.0,
                 options: ContreeOptions | None = None, threads: int | None = None):
        self.dataset = dataset
        self.threads = check_threads(threads)
        self.min_leaf = check_int("min_leaf", min_leaf, 1)
        self.penalty = check_penalty(penalty)
        self.options = ContreeOptions() if options is None else options
        if not isinstance(self.options, ContreeOptions):
            raise OptionError(f"options must be a ContreeOptions, got {type(self.options).__name__}")
        if dataset.n_samples > kcontree.ROW_MAX:
            raise ResourceError(f"ConTree takes at most {kcontree.ROW_MAX:,} rows, the data has {dataset.n_samples:,}")
        if dataset.n_classes > kcontree.LABEL_MAX:
            raise DataError(f"ConTree takes at most {kcontree.LABEL_MAX:,} classes, the data has "
                            f"{dataset.n_classes:,}")
        self.features = ordered_features(dataset)
        self._labels = np.ascontiguousarray(dataset.y, dtype=np.int64)
        self._weights = np.ascontiguousarray(dataset.weights, dtype=np.float64)
        self._K = dataset.n_classes
        self._interpreted = _interpreted.choose(self.options.engine, warm_up, kcontree.solve_subtree,
                                                kcontree.cached_split, kcontree.cart_thresholds)
        self._k = _interpreted.modules(self._interpreted)  # the kernel modules it runs
        self._root_cart = None  # CART's best threshold of each feature on all rows (min_leaf 1), as ordered
        if self.options.sort_features and len(self.features.ranks) > 1:
            Y = np.zeros((len(self._labels), self._K))
            Y[np.arange(len(self._labels)), self._labels] = self._weights
            gini, rank = self._k.contree.cart_thresholds(self.features.order, self.features.ranks,
                                                         np.arange(len(self._labels)), Y, Y.sum(axis=0), 1)
            order = np.argsort(-gini, kind="stable")
            self.features = self.features.reordered(order)
            self._root_cart = gini[order], rank[order]
        self._tol = tie_tolerance(self._weights, self.penalty, self._K)
        self._node_limit = kcommon.NO_NODE_LIMIT  # stop as at the deadline after this many search nodes (tests)
        self._works: list = []  # a solve's scratch per thread (_scratch)

    def split_space(self) -> str:
        """One line naming the splits the optimum is over."""
        f = self.features
        return (f"every midpoint of {f.numeric} numeric column(s) and {len(f.ranks) - f.numeric} binary column(s): "
                f"{f.n_splits} splits")

    def solve(self, max_depth: int = 3, time_limit: float | None = None, max_gap: float = 0.0,
              memory_limit: float | None = MEMORY_LIMIT) -> SolveResult:
        """The optimal tree of depth <= ``max_depth`` (at most 20); see the module docstring.

        With ``max_gap`` = g in [0, 1) the root's threshold search only looks for trees below (1 - g) times the
        incumbent (the subproblems stay exact), so the tree returned costs at most 1 / (1 - g) times the optimum.
        ``memory_limit`` (GiB, None: no guard): arrays (:func:`work_memory_gib` and the first cache tables) above
        it are refused with a :class:`~odtmip.core.exceptions.ResourceError`; a cache that would outgrow it stops the
        search.

        Returns a :class:`~odtmip.core.results.SolveResult` (solver ``"contree"``): ``OPTIMAL`` with bound = objective;
        with a gap, the bound (1 - g) x objective (rounded up for integer costs) and ``OPTIMAL`` only when that
        reaches the objective, else ``TIME_LIMIT`` with stop reason ``"gap"``; at the time limit (or the memory
        limit: ``MEMORY_LIMIT``) the best tree found and a lower bound from the root's threshold search (see
        :func:`~odtmip.dp._kernels._contree.stopped_bound`); ``INFEASIBLE`` when the data has fewer rows than
        ``min_leaf``. ``objective`` is recomputed by routing the training data.
        """
        depth = check_int("max_depth", max_depth, 0, MAX_DEPTH_CAP)
        limit = check_time_limit(time_limit)
        gap = check_penalty(max_gap, "max_gap")
        if gap >= 1.0:
            raise OptionError(f"max_gap must be in [0, 1), got {max_gap!r}")
        self._reporter = None  # one for the whole call, made by its first search
        try:
            with np.errstate(over="ignore"):  # the cache's hashes wrap around (numpy warns when interpreted)
                return _interpreted.interpreted_first(self, lambda left: self._solve(depth, left, gap, memory_limit),
                                                      limit, INTERPRETED_SECONDS, self._compile, warm_up)
        finally:
            self._works = []  # the searches' scratch is not kept with the solver

    def _compile(self) -> float:
        """Switch to the compiled kernels; returns the seconds compiling (or loading) them took."""
        self._interpreted = False
        self._k = _interpreted.modules(False)
        return warm_up()

    def _solve(self, depth: int, limit: float | None, gap: float, memory_limit: float | None) -> SolveResult:
        """:meth:`solve` with checked arguments, by the kernels ``self._k`` holds."""
        t0 = time.perf_counter()
        compile_seconds = 0.0 if self._interpreted else warm_up()  # loading the kernels counts in the time limit
        n, F = len(self._labels), len(self.features.ranks)
        stats: dict = {"features": F, "splits": self.features.n_splits, "split_space": self.split_space(),
                       "tolerance": self._tol}
        if compile_seconds:
            stats["compile_seconds"] = compile_seconds
        if n < self.min_leaf:
            return SolveResult("contree", Status.INFEASIBLE, "solved", None, None, math.inf,
                               time.perf_counter() - t0, stats)
        o = self.options
        prune = self.min_leaf == 1
        prm = Switches(self._K, self.min_leaf, self.penalty, self._tol,
                       math.inf if limit is None else t0 + limit, o.depth_two, o.neighbourhood and prune,
                       o.interval and prune, o.subinterval and prune, o.cache, o.upper_bound, gap,
                       progress.INTERVAL if progress.enabled() else math.inf, self._node_limit)
        if self._reporter is None:
            self._reporter = progress.Reporter("contree", t0, minimise=True)
        d = depth if F > 0 else 0
        words = max(1, (n + 63) // 64)
        # threads share the root's features (at depth two without a gap, which one thread's replay cannot follow)
        dealt = self.threads > 1 and not self._interpreted and F >= 2 and (d >= 3 or d == 2 and gap == 0.0)
        stats["threads"] = self.threads if dealt else 1
        self._share = dealt and d == 2 and o.depth_two  # searches at depth two only read the root's sorted rows
        work_gib = work_memory_gib(d, F, n, self.threads if dealt else 1, self._share)
        self._cache = kc.new_tables(words, *_table_sizes(words))
        cache_gib = kc.tables_gib(self._cache)
        if memory_limit is not None and work_gib + cache_gib > memory_limit:
            raise ResourceError(f"ConTree at depth {d} on {n:,} rows x {F} features would take about "
                                f"{memory_text(work_gib + cache_gib)}, more than memory_limit = {memory_limit:g} GiB; "
                                "use fewer rows or features, a smaller depth, or raise memory_limit")
        self._works = []  # each thread's scratch, made by its first search (_scratch)
        greedy = self._greedy(prm, d, stats) if o.greedy and d >= 3 and F > 0 else None
        rows = np.arange(n)
        best = None if greedy is None else (greedy.spec, greedy.cost)  # the best tree known outside the search
        first = best
        self._totals, self._grows = np.zeros(kcommon.N_STATS, dtype=np.int64), 0
        self._pruned = np.zeros(N_PRUNED, dtype=np.int64)
        self._dealt, self._thread_nodes, self._parallel_seconds = dealt, np.zeros(self.threads, dtype=np.int64), 0.0
        self._last_pass_evaluations = 0  # depth-two evaluations of the passes after the threads (not in a memo)
        lb, end = 0.0, None  # the bound proven by the passes; the search that ended the solve
        passes = o.bound_passes and o.cache and o.upper_bound and can_stop(prm.deadline, prm.node_limit)
        if best is not None and gap == 0.0 and passes:
            stats["bound_passes"] = 0

            def search_round(cap: int) -> bool:  # the search for the optimum, for ``cap`` search nodes
                nonlocal best, lb, end
                end = self._search(prm, d, best[1], work_gib, memory_limit, cap, (best[1], lb))
                _, _, st, work, out_of_memory = end
                if not st[kcommon.S_TIMEOUT] or out_of_memory or self._limit_reached(st, prm, cap):
                    return True
                best = self._incumbent(work.incumbent, rows, d, best)
                lb = max(lb, float(work.incumbent[I_BOUND]))
                return False

            def bound_pass(target: float, cap: int) -> str:  # no tree below B: the optimum is >= B
                nonlocal best, lb, end
                end = self._search(prm, d, target, work_gib, memory_limit, cap, shown=(best[1], lb))
                value, exact, st, work, out_of_memory = end
                if out_of_memory or self._limit_reached(st, prm, cap):
                    return ENDED
                # root splits whose children were both solved exactly on the way are trees too
                best = self._incumbent(work.incumbent, rows, d, best)
                if st[kcommon.S_TIMEOUT]:  # at its share of the nodes: the bound of its threshold search so far
                    lb = max(lb, float(work.incumbent[I_BOUND]))
                    return CAPPED
                stats["bound_passes"] += 1
                lb = max(lb, value)
                return ENDED if exact else PROVED

            if not rounds_and_passes(search_round, bound_pass,
                                     lambda first: pass_target(lb, best[1], first, self._tol == 0.0)):
                end = None
        if end is None:
            ub = math.inf if best is None else best[1]
            shown = (ub, lb if "bound_passes" in stats else None)
            end = self._search(prm, d, ub, work_gib, memory_limit, shown=shown)
        value, exact, st, work, out_of_memory = end
        st = self._totals
        stats["engine"] = "interpreted" if self._interpreted else "compiled"
        stats.update(nodes=int(st[kcommon.S_NODES]), depth_two_evaluations=int(st[kcommon.S_DEPTH2]),
                     depth_one_calls=int(st[kcommon.S_DEPTH1]), cache_hits=int(st[kcommon.S_CACHE_HITS]),
                     neighbourhood_prunes=int(self._pruned[P_NEIGHBOURHOOD]),
                     interval_prunes=int(self._pruned[P_INTERVAL]),
                     subinterval_prunes=int(self._pruned[P_SUBINTERVAL]),
                     cache_keys=int(self._cache.used[kc.U_KEYS]), cache_grows=self._grows)
        if self._parallel_seconds:  # the work of each thread where they shared out the root's features
            stats.update(parallel_seconds=self._parallel_seconds, thread_nodes=self._thread_nodes.tolist(),
                         last_pass_evaluations=self._last_pass_evaluations)
        if end[2][kcommon.S_TIMEOUT] or out_of_memory:
            spec, value = self._incumbent(work.incumbent, rows, d, best)
            limit = Status.MEMORY_LIMIT if out_of_memory else Status.TIME_LIMIT
            reason, bound = limit.value, max(lb, float(work.incumbent[I_BOUND]))
            if self._tol == 0.0:  # integer costs
                bound = float(math.ceil(bound))
            status = stopped_status(limit, value, bound, self._tol)  # optimal if the tree meets the bound
        elif exact:
            spec, status, reason = self._build(rows, d), Status.OPTIMAL, "solved"
        elif best is not None:  # no tree beats the best one known: it is optimal
            (spec, value), status, reason = best, Status.OPTIMAL, "solved"
            if best is not first:
                # a round's incumbent, which depends on where the rounds stopped (and on the threads): the first tree
                # as good in the order of one search (one below the next cost up), found mostly in the cache
                up = best[1] + (0.5 if self._tol == 0.0 else 3 * self._tol)
                again, exact, st, _, _ = self._search(prm, d, up, work_gib, memory_limit, shown=(best[1], None))
                if exact and not st[kcommon.S_TIMEOUT]:
                    spec, value = self._build(rows, d), again
        else:
            raise VerificationError("ConTree's root search returned no tree although the leaf is feasible")
        self._works = []  # freed before the verification's arrays
        tree = self.dataset.new_tree(self._tree_spec(spec))
        verify_tree(self.dataset, tree, float(value), self.penalty, self.min_leaf, d, (1 << d) - 1)
        objective = float(self.dataset.misclassifications(tree) + self.penalty * tree.n_branch_nodes)
        if status is Status.OPTIMAL and gap > 0.0 and reason == "solved":
            bound = (1.0 - gap) * objective - self._tol
            if self._tol == 0.0:  # integer costs
                bound = float(math.ceil(bound))
            if bound < objective:
                status, reason = Status.TIME_LIMIT, "gap"
        elif status is Status.OPTIMAL:
            bound = objective
        stats["search_seconds"] = time.perf_counter() - t0
        return SolveResult("contree", status, reason, tree, objective, min(bound, objective),
                           time.perf_counter() - t0, stats)

    def _search(self, prm: Switches, d: int, ub: float, work_gib: float, memory_limit: float | None,
                nodes_cap: int | None = None, shown: tuple | None = None):
        """Run the kernels of ``self._k`` on the whole data below ``ub`` from the tables ``self._cache``, growing
        them while they fill up, stopping after ``nodes_cap`` search nodes or when the nodes of all searches of
        the solve pass ``prm.node_limit``: ``(value, exact, stats array, work, out of memory)``. The statistics,
        pruning counters and cache grows add up in ``self._totals``, ``self._pruned`` and ``self._grows``.
        ``shown``: (objective of the best tree known, proven bound or None) for the progress lines, by default
        (``ub``, None).

        With threads (``self._dealt``) they first share out the root's features (:meth:`_search_threads`); then one
        thread searches the root below ``ub`` on the feature one thread takes its tree from only, as one thread enters
        it (:meth:`_replayed`), and stores it (with a gap, on every feature): it finds the children in the cache, and
        at depth two, where they are not cached, the evaluations the thread that searched that feature kept.
        """
        if time.perf_counter() > prm.deadline:  # already past it (the greedy tree took the time): loading the rows
            st = np.zeros(kcommon.N_STATS, dtype=np.int64)  # would cost more than the search's first node
            st[kcommon.S_TIMEOUT] = 1
            return math.inf, False, st, new_work(d, len(self.features.ranks), 0, self._K), False
        shown = (ub, None) if shown is None else shown
        left = prm.node_limit - int(self._totals[kcommon.S_NODES])
        prm = prm._replace(node_limit=left if nodes_cap is None else min(left, nodes_cap))
        self._scratch(d, self.threads if self._dealt else 1)
        if not self._dealt:
            return self._search_one(prm, d, ub, work_gib, memory_limit, shown)
        shared = self._search_threads(prm, d, ub, work_gib, memory_limit, shown)
        value, exact, st, work, out_of_memory = shared
        if out_of_memory or st[kcommon.S_TIMEOUT]:
            return shared
        prm = prm._replace(node_limit=max(1, prm.node_limit - int(st[kcommon.S_NODES])))
        features, memo = None, None
        if prm.gap == 0.0:  # a gap's bounds are not one thread's: then it searches every feature again
            *features, ub = self._replayed(work.root, ub)
            if d == 2 and self._root_feature(work.incumbent) == features[0]:  # the thread that searched it
                memo = work.memo
        value, exact, last, final, out_of_memory = self._search_one(prm, d, ub, work_gib, memory_limit, shown,
                                                                    features=features, memo=memo)
        self._last_pass_evaluations += int(last[kcommon.S_DEPTH2])
        if last[kcommon.S_TIMEOUT]:  # the threads' best tree and bound stand where the last pass did not finish
            if work.incumbent[I_COST] < final.incumbent[I_COST] - self._tol:
                final.incumbent[:] = work.incumbent
            final.incumbent[I_BOUND] = max(float(final.incumbent[I_BOUND]), float(work.incumbent[I_BOUND]))
        return value, exact, st + last, final, out_of_memory

    def _scratch(self, d: int, threads: int) -> None:
        """Make the scratch of the first ``threads`` threads (``self._works``) that has not been made in this solve:
        every row loaded at level 0, which no search writes, so that later searches reuse it; at depth two with
        threads (``self._share``) thread 0's sorted rows, which the searches only read, are every thread's."""
        n, F = len(self._labels), len(self.features.ranks)
        while len(self._works) < threads:
            shared = self._works[0] if self._works and self._share else None
            work = new_work(d, F, n, self._K, shared)
            if shared is None:
                self._load(work, np.arange(n))
            self._works.append(work)

    def _search_one(self, prm: Switches, d: int, ub: float, work_gib: float, memory_limit: float | None,
                    shown: tuple, thread: int = 0, root: np.ndarray | None = None, features: list | None = None,
                    memo: np.ndarray | None = None):
        """:meth:`_search` in this thread on the scratch of thread ``thread``; with ``root``, one thread's share of
        the root's features dealt out through that shared record (:meth:`_search_threads` runs it in every thread);
        with ``features`` = [a, b], the root on its features a .. b - 1 only, reading the evaluations a thread kept in
        ``memo``."""
        n = len(self._labels)
        out_of_memory = False
        while True:
            work = renewed(self._works[thread], n if root is not None and self._share else 0)
            if root is not None:
                work = work._replace(root=root)
            if memo is not None:
                work = work._replace(memo=memo)
            if features is not None:
                work.root[kc.ROOT_NEXT], work.root[kc.ROOT_END] = features
            st = np.zeros(kcommon.N_STATS, dtype=np.int64)
            if root is None:
                self._cache.used[kc.U_STOP] = 0
                # progress lines (odtmip.core.progress): the best tree so far and the bound proven by earlier passes
                progress._DP_REPORT[0] = lambda: self._reporter(min(float(work.incumbent[I_COST]), shown[0]),  # noqa: B023
                                                                shown[1])
            try:
                value, exact = self._k.contree.solve_subtree(self.features.offsets, work, prm, self._cache, st, 0, n,
                                                             d, ub)
            finally:
                if root is None:
                    progress._DP_REPORT[0] = None
            if root is not None:
                return value, exact, st, work, False
            if not st[kcommon.S_FULL] or st[kcommon.S_TIMEOUT]:
                break
            if not self._grow(work_gib, memory_limit):
                out_of_memory = True
                break
        self._totals += st
        self._pruned = self._pruned + work.pruned
        return value, exact, st, work, out_of_memory

    def _grow(self, work_gib: float, memory_limit: float | None) -> bool:
        """Double the cache's tables, unless that would outgrow ``memory_limit`` (then False)."""
        if memory_limit is not None and work_gib + 2 * kc.tables_gib(self._cache) > memory_limit:
            return False
        self._cache = self._k.cache.grow_tables(self._cache)
        self._grows += 1
        return True

    def _replayed(self, root: np.ndarray, ub: float) -> tuple[int, int, float]:
        """The root's feature range and bound of the one-thread search that returns one thread's tree, from each
        feature's best root tree the threads recorded in ``root``
        (:func:`~odtmip.dp._kernels._contree._share_root`). One thread takes a feature's tree when it costs less than
        the best before it, and each feature's search below the best before it or lower finds that tree's cost. So
        its tree is on the last feature f that lowers the best, and it enters f with the best before f: returns
        ``(f, f + 1, min(ub, that best))``, or ``(0, 0, ub)`` when no feature lowers the leaf's cost."""
        F = len(self.features.ranks)
        best, before, first = math.inf, math.inf, -1
        for f, cost in enumerate(root[kc.N_ROOT:kc.N_ROOT + F]):
            if cost < best - self._tol:
                before, best, first = best, cost, f
        return (first, first + 1, min(ub, before)) if first >= 0 else (0, 0, ub)

    def _root_feature(self, inc: np.ndarray) -> int:
        """The root feature of an incumbent (-1: none)."""
        return self.features.decode(int(inc[I_CODE]))[0] if math.isfinite(inc[I_COST]) else -1

    def _search_threads(self, prm: Switches, d: int, ub: float, work_gib: float, memory_limit: float | None,
                        shown: tuple):
        """The root's features shared out among ``self.threads`` threads (``solve_subtree`` releases the GIL), each
        with its own scratch, one cache shared under its lock, the best root tree shared; each stops at the deadline
        and at its share of ``prm.node_limit``, and one that fills the cache stops them all. Returns what
        :meth:`_search_one` returns for the root as they left it (not stored): the best of their trees (on the lowest
        root feature among equals), their statistics summed, the scratch of the thread that found that tree, with the
        least of their bounds."""
        T, F = self.threads, len(self.features.ranks)
        each = prm._replace(node_limit=-(-prm.node_limit // T))  # each thread's share of the search nodes
        with kc.shared_by_threads(self._cache):
            while True:
                self._cache.used[kc.U_STOP] = 0
                root = kcontree.new_root(True, F)
                root[kc.N_ROOT:] = math.inf  # each feature's best root tree (none yet)
                found, seconds = in_threads(
                    T, lambda t, rt=root: self._search_one(each if t == 0 else each._replace(report_every=math.inf), d,
                                                           ub, work_gib, memory_limit, shown, t, rt),
                    lambda rt=root: self._reporter(min(float(rt[kc.ROOT_COST]), shown[0]), shown[1]))
                self._parallel_seconds += seconds
                sts = [r[2] for r in found]
                st = np.sum(sts, axis=0)
                self._totals += st
                self._thread_nodes += [s[kcommon.S_NODES] for s in sts]
                for r in found:
                    self._pruned = self._pruned + r[3].pruned
                if not any(s[kcommon.S_FULL] for s in sts) or st[kcommon.S_TIMEOUT]:
                    break
                if not self._grow(work_gib, memory_limit):
                    return math.inf, False, st, found[0][3], True
        if any(s[kcommon.S_NODES] > each.node_limit for s in sts):
            st[kcommon.S_NODES] = max(int(st[kcommon.S_NODES]), prm.node_limit + 1)  # a thread stopped at its share
        incumbents = [r[3].incumbent for r in found]
        best = min(range(T), key=lambda t: (float(incumbents[t][I_COST]), self._root_feature(incumbents[t])))
        work = found[best][3]
        bound = min(float(r[3].incumbent[I_BOUND]) for r in found)
        if root[kc.ROOT_NEXT] < F:  # features no thread took cost at least the penalty
            bound = min(bound, max(prm.penalty - prm.tol, 0.0))
        work.incumbent[I_BOUND] = max(0.0, min(bound, float(root[kc.ROOT_COST])))
        exact = [r for r in found if r[1]]
        if exact:
            value = min(r[0] for r in exact)
            return value, True, st, work, False
        return min(r[0] for r in found), False, st, work, False

    def _limit_reached(self, st: np.ndarray, prm: Switches, cap: int) -> bool:
        """Whether a round or pass stopped for good (:func:`~odtmip.dp.anytime.stopped_for_good`), not at its
        ``cap``."""
        return stopped_for_good(st, cap, int(self._totals[kcommon.S_NODES]), prm.node_limit, prm.deadline)

    def _load(self, work, rows: np.ndarray) -> None:
        """Put ``rows`` at the search's level 0 of ``work``: sorted by every feature, with ranks, labels, weights."""
        f, m = self.features, len(rows)
        member = np.zeros(len(self._labels), dtype=bool)
        member[rows] = True
        every = bool(member.all())  # all the rows: each feature's order as it is
        for g in range(len(f.ranks)):
            work.rows[0, g, :m] = f.order[g] if every else f.order[g][member[f.order[g]]]
            work.vals[0, g, :m] = f.ranks[g, work.rows[0, g, :m]]
        if len(f.ranks) == 0:
            work.rows[0, 0, :m] = rows
        work.labs[0, :, :m] = self._labels[work.rows[0, :, :m]]
        work.wts[0, :, :m] = self._weights[work.rows[0, :, :m]]

    # --------------------------------------------------------------- greedy tree
    def _greedy(self, prm: Switches, d: int, stats: dict) -> Greedy | None:
        """The greedy tree of :mod:`odtmip.dp.anytime` at depth ``d``, its depth-two subtrees solved by the search's
        kernels into ``self._cache`` (by the deadline of ``prm``, not its node limit); None if it is the leaf."""
        t0 = time.perf_counter()
        f = self.features
        n, F = len(self._labels), len(f.ranks)
        work = new_work(2, F, n, self._K)
        prm = prm._replace(node_limit=1 << 62)
        st = np.zeros(kcommon.N_STATS, dtype=np.int64)  # one record: the clock is read however small each call is

        def terminal(rows: np.ndarray, r: int):
            if st[kcommon.S_TIMEOUT] or time.perf_counter() > prm.deadline:
                return None
            self._load(work, rows)
            value, exact = self._k.contree.solve_subtree(f.offsets, work, prm, self._cache, st, 0, len(rows), r,
                                                         math.inf)
            if not exact or st[kcommon.S_TIMEOUT] or st[kcommon.S_FULL]:
                return None  # past the deadline, or the cache is full: CART's split
            spec = self._build(rows, r)
            return spec, value, _branch_nodes(spec)

        def thresholds(order, ranks, rows, Y, counts, min_leaf):  # the root's: computed to order the features
            if self._root_cart is not None and min_leaf == 1 and len(rows) == n:
                return self._root_cart
            return self._k.contree.cart_thresholds(order, ranks, rows, Y, counts, min_leaf)

        split, candidates = ordered_split(f.order, f.ranks, f.offsets, self.min_leaf, thresholds)
        g = grow_greedy(self._labels, self._weights, self._K, d, self.min_leaf, self.penalty, self._tol, split,
                        self._right, terminal, candidates=candidates, deadline=prm.deadline)
        stats["greedy_seconds"] = time.perf_counter() - t0
        if g.nodes == 0:
            return None
        stats["greedy_objective"] = g.cost
        return g

    # --------------------------------------------------------------- rebuild
    # Trees are built as (split code, left, right) tuples with class indices as leaves (the specs of
    # odtmip.dp.anytime), and turned into a tree spec by _tree_spec.
    def _counts(self, rows: np.ndarray) -> np.ndarray:
        return np.bincount(self._labels[rows], weights=self._weights[rows], minlength=self._K)

    def _leaf(self, rows: np.ndarray) -> int:
        return int(np.argmax(self._counts(rows)))

    def _right(self, code: int, rows: np.ndarray) -> np.ndarray:
        """Which of ``rows`` the split ``code`` sends right."""
        f, r = self.features.decode(code)
        return self.features.ranks[f, rows] > r

    def _children(self, rows: np.ndarray, code: int) -> tuple[np.ndarray, np.ndarray]:
        right = self._right(code, rows)
        return rows[~right], rows[right]

    def _stump(self, rows: np.ndarray, code: int):
        if code < 0:
            return self._leaf(rows)
        left, right = self._children(rows, code)
        return code, self._leaf(left), self._leaf(right)

    def _build(self, rows: np.ndarray, d: int):
        """The cached optimum of ``rows`` at depth ``d`` (mirrors the search's early exits)."""
        counts = self._counts(rows)
        if d == 0 or len(rows) < 2 * self.min_leaf or counts.sum() - counts.max() <= self._tol:
            return self._leaf(rows)
        key = np.zeros(self._cache.keys.shape[1], dtype=np.uint64)
        np.bitwise_or.at(key, rows >> 6, np.left_shift(np.uint64(1), (rows & 63).astype(np.uint64)))
        code, left_code, right_code, terminal = (int(x) for x in self._k.contree.cached_split(self._cache, key, d))
        if terminal < 0:
            raise VerificationError(f"no cached optimum for a subproblem of {len(rows)} rows at depth {d}")
        return self._split(rows, d, code, left_code, right_code, terminal)

    def _split(self, rows, d, code, left_code, right_code, terminal):
        if code < 0:
            return self._leaf(rows)
        left, right = self._children(rows, code)
        if terminal:
            return code, self._stump(left, left_code), self._stump(right, right_code)
        return code, self._build(left, d - 1), self._build(right, d - 1)

    def _incumbent(self, inc: np.ndarray, rows: np.ndarray, d: int, known: tuple | None):
        """Best tree known when a search stopped, as (spec, objective): the root's incumbent (its children are
        cached optima), the best tree ``known`` before (such a pair) or the leaf."""
        counts = self._counts(rows)
        best = (self._leaf(rows), float(counts.sum() - counts.max()))
        if known is not None:
            best = known
        if math.isfinite(inc[I_COST]) and inc[I_COST] < best[1] - self._tol:
            try:
                spec = self._split(rows, d, int(inc[I_CODE]), int(inc[I_LEFT]), int(inc[I_RIGHT]),
                                   int(inc[I_TERMINAL]))
                return spec, float(inc[I_COST])
            except VerificationError:  # a child's entry was lost to a full cache
                pass
        return best

    def _tree_spec(self, t):
        """Tree spec of a tuple tree."""
        if isinstance(t, tuple):
            return branch(self.features.split(t[0]), self._tree_spec(t[1]), self._tree_spec(t[2]))
        return leaf(t)


def _branch_nodes(t) -> int:
    """Branch nodes of a tuple tree."""
    return 1 + _branch_nodes(t[1]) + _branch_nodes(t[2]) if isinstance(t, tuple) else 0


def solve_contree(dataset: Dataset, max_depth: int = 3, min_leaf: int = 1, penalty: float = 0.0,
                  time_limit: float | None = None, options: ContreeOptions | None = None,
                  max_gap: float = 0.0, memory_limit: float | None = MEMORY_LIMIT,
                  threads: int | None = None) -> SolveResult:
    """Optimal classification tree over every threshold of the numeric columns (ConTree; see the module docstring).

    Parameters
    ----------
    dataset : Dataset
        Training data.
    max_depth : int, default=3
        Largest number of branch nodes on a root-to-leaf path (0: a single leaf); at most 20.
    min_leaf : int, default=1
        Rows every non-empty leaf must hold.
    penalty : float, default=0.0
        Cost per branch node, in units of (weighted) misclassifications.
    time_limit : float, optional
        Seconds for the whole call, sorting the rows by every feature included; at the limit the best tree found is
        returned with ``Status.TIME_LIMIT``.
    options : ContreeOptions, optional
        Technique switches (none changes the optimum).
    max_gap : float, default=0.0
        Relative gap g in [0, 1): the tree costs at most 1 / (1 - g) times the optimum (see
        :meth:`ContreeSolver.solve`).
    memory_limit : float or None, default=half of physical memory
        GiB: larger arrays are refused with a :class:`~odtmip.core.exceptions.ResourceError`; a cache that would
        outgrow it stops the search with ``Status.MEMORY_LIMIT`` and the best tree found. None: no guard.
    threads : int or None, default=None
        Search threads (None: the cores this process may use): from depth 2 (with ``max_gap`` > 0 from depth 3) the
        root's features are shared out among them, from depth 3 each with its own copy of the sorted rows (the
        memory guard counts them all); the tree is the one a single thread returns.

    Examples
    --------
    >>> X = np.array([[0.1, 5.0], [0.2, 3.0], [0.3, 4.0], [0.4, 1.0]])
    >>> res = solve_contree(Dataset(X, [0, 1, 1, 0]), max_depth=1)
    >>> res.objective, res.tree.to_text().splitlines()[0]
    (1.0, '|--- x0 <= 0.15')
    """
    t0 = time.perf_counter()
    limit = check_time_limit(time_limit)
    solver = ContreeSolver(dataset, min_leaf=min_leaf, penalty=penalty, options=options, threads=threads)
    prep = time.perf_counter() - t0
    # the search gets what sorting the rows left (a sliver when nothing: it then returns its first tree)
    result = solver.solve(max_depth, None if limit is None else max(limit - prep, 1e-6), max_gap, memory_limit)
    return replace(result, seconds=time.perf_counter() - t0, stats={**result.stats, "preprocess_seconds": prep})


#: Largest binary matrix (rows x columns, one byte each) :func:`midpoint_columns` builds.
MAX_MIDPOINT_CELLS = 2 * 10**8


def midpoint_columns(dataset: Dataset) -> Dataset:
    """``dataset`` with every numeric column encoded by its midpoints (``x > t``), the other binary columns kept.

    A :class:`~odtmip.core.exceptions.ResourceError` when that matrix would exceed :data:`MAX_MIDPOINT_CELLS` bytes.
    """
    features = ordered_features(dataset)
    cells = dataset.n_samples * features.n_splits
    if cells > MAX_MIDPOINT_CELLS:
        raise ResourceError(f"the DP on every midpoint would need {features.n_splits} binary columns for "
                            f"{dataset.n_samples} rows ({cells / 1e9:.1f} GB); drop max_nodes / leaf_penalty / "
                            f"options (then ConTree solves it) or use numeric='buckets' (--numeric buckets)")
    columns = []
    for g, group in enumerate(dataset.groups):
        if group.kind not in NUMERIC_KINDS:
            columns.extend(dataset.columns[j] for j in group.members)
            continue
        c, name = group.column, group.name
        v = as_floats(dataset.column(c), c)
        columns.extend(BinaryColumn(f"{name}>{t:.6g}", Split("threshold", (c,), threshold=t), g)
                       for t in midpoint_thresholds(v[~np.isnan(v)], None))
    return dataset.derive(columns)
