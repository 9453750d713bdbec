"""The (FP, FN) Pareto front of optimal trees, and the trees that optimise a nonlinear metric, after [DS21].

For two-class data with a positive class, every tree T has a pair (fp(T), fn(T)): the weight of negatives it
predicts positive and of positives it predicts negative. :meth:`ParetoSolver.front` returns the Pareto front
PF(D, d, n) of these pairs over trees of depth <= d with <= n branch nodes, one tree per point, by the
bi-objective dynamic program of [DS21] Eq. 3::

    PF(D, 0, .) = nd({(|D-|, 0), (0, |D+|)})                                        (the two leaves)
    PF(D, d, n) = nd( PF(D, 0, 0) u  U_{f, i} Merge(PF(D(not f), d-1, i), PF(D(f), d-1, n-1-i)) )

with Merge(A, B) = nd({a + b}) ([DS21] Def. 2). Every metric that is monotone in (fp, fn) (no better when
either grows: F1, Matthews correlation, Fowlkes-Mallows, balanced accuracy, accuracy, sensitivity under a
specificity floor, ...) has an optimum on this front ([DS21] §3), so :func:`best_point` picks it from the front.

Search techniques, each switchable in :class:`ParetoOptions` without changing the front ([DS21] §4-5, in the
*ceiling* form: a call gets a ceiling U, an antichain of points, and returns exactly PF(D, d, n) n Down(U)):

* **depth two**: subproblems of depth <= 2 by the specialised solver (:func:`~odtmip.dp._kernels._pareto.
  depth_two_front`, [DS21] §3), fronts of the four-cell leaf counts of every feature pair;
* **upper bounding (A)**: the first child of a split is solved under U minus the second child's lower bound,
  the second under U minus the first child's front (Eq. 4); after each split the node's ceiling drops to the
  region no point found so far strictly dominates (closed corners: a point equal to one found stays allowed, so
  every point keeps the fewest branch nodes of any tree reaching it);
* **infeasibility lower bound (B)**: a subproblem searched to the end under a ceiling U stores the lower bound
  nd(front found u minimal points outside Down(U)), met with what it had, and later calls whose ceiling lies
  below that bound return at once;
* **lookahead (C)**: a split is skipped when the merge of its children's lower bounds (Eq. 5) has no point under
  the ceiling;
* **similarity (D)**: a child's lower bound also comes from the last two row sets solved at the same budget,
  moved by the positive and negative weight removed (Eq. 6);
* **cache**: complete fronts (and bounds) by row set and budget.

The search runs compiled (:func:`~odtmip.dp._kernels._pareto.solve_front`, one numba function that calls itself,
like the MurTree search of :mod:`odtmip.dp._kernels._search`); fronts and bounds are kept in array tables that
persist across calls (:class:`~odtmip.dp._kernels._pareto.FrontStore`), grown by Python when full.

Anytime: the clock is read every few hundred subproblems (:func:`~odtmip.dp._kernels._common.check_clock`) and,
inside the depth-two solver, after about a million points built; at the deadline the search unwinds without
storing anything from interrupted subproblems, and the root returns the points found so far with
``Status.TIME_LIMIT`` and a valid lower-bound set (the found points and, for every split not finished, the merge
of its children's lower bounds).

Arithmetic: integer weights are exact (``tol = 0``, "strictly better" means one unit less); with real weights
comparisons use the round-off tolerance of :func:`~odtmip.dp.common.tie_tolerance` and the bounds use closed
regions (sound, slightly weaker).

References
----------
.. [DS21] E. Demirović, P. J. Stuckey, "Optimal Decision Trees for Nonlinear Metrics", AAAI-21,
   35(5):3733-3741 (arXiv 2009.06921).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, partial

import numpy as np

from odtmip.core import progress
from odtmip.core.data import Dataset
from odtmip.core.exceptions import DataError, OptionError, VerificationError
from odtmip.core.metrics import Confusion, count_target, positive_index
from odtmip.core.options import check_switches, check_threads, check_time_limit
from odtmip.core.results import SolveResult, Status, stopped_status
from odtmip.core.tree import Tree, leaf
from odtmip.dp._kernels import _common as kc
from odtmip.dp._kernels import _interpreted
from odtmip.dp._kernels import _pareto as kp
from odtmip.dp._kernels._cache import U_STOP, new_root, shared_by_threads
from odtmip.dp._kernels._search import grow_archive
from odtmip.dp.common import MAX_DEPTH_CAP, check_int, in_threads
from odtmip.dp.solver import DPOptions, DPSolver

#: The lower bound that says nothing.
NO_BOUND = np.zeros((1, 2))
#: Seconds per process the front search runs interpreted under ``engine="auto"`` before it compiles its kernels and
#: searches again, where no second process compiles them meanwhile (numba's cache off; one core without a time limit):
#: about a third of the compile (about 20 s), so work too big for the interpreter costs at most a third more.
INTERPRETED_SECONDS = 6.0

#: The named metrics (to maximise), each a function of the confusion counts.
METRICS: dict[str, Callable[[Confusion], float]] = {
    "f1": lambda c: c.f1,
    "mcc": lambda c: c.mcc,
    "fmi": lambda c: c.fowlkes_mallows,
    "balanced-accuracy": lambda c: c.balanced_accuracy,
    "accuracy": lambda c: c.accuracy,
}


@dataclass(frozen=True)
class ParetoOptions:
    """Switches for the techniques of the front search ([DS21] §4-5); none of them changes the front.

    Attributes
    ----------
    depth_two : bool
        Specialised solver for subproblems of depth <= 2 ([DS21] §3).
    upper_bound : bool
        (A) child ceilings from the sibling (Eq. 4) and the node's ceiling tightened by its points.
    infeasibility_lb : bool
        (B) lower bounds stored by subproblems searched to the end under a ceiling.
    lookahead : bool
        (C) skip a split whose children's lower bounds merge (Eq. 5) to nothing under the ceiling.
    similarity : bool
        (D) similarity lower bound from row sets solved before at the same budget (Eq. 6).
    cache : bool
        Read stored fronts and bounds of row sets (each subproblem is solved from scratch otherwise).
    merge_features : bool
        Drop constant columns and merge duplicate and complementary ones before the search.
    engine : {"auto", "compiled", "interpreted"}
        Who runs the kernels (:mod:`odtmip.dp._kernels._interpreted`; the same search either way, node for
        node). ``"auto"``: compiled once they are compiled in this process or in numba's cache on disk; before
        that the Python interpreter searches while a second process compiles them into the cache (about 20 s;
        without one, for up to :data:`INTERPRETED_SECONDS` per process), then loads them and searches again with
        what is left of the time limit; at the time limit the interpreter's front stands, so a time limit is
        never spent waiting for a compile. ``"interpreted"``: the interpreter, to the end.
    """

    depth_two: bool = True
    upper_bound: bool = True
    infeasibility_lb: bool = True
    lookahead: bool = True
    similarity: bool = True
    cache: bool = True
    merge_features: bool = True
    engine: str = "auto"

    def __post_init__(self):
        _interpreted.check_engine(self.engine)
        check_switches(self)


def confusion(fp: float, fn: float, positives: float, negatives: float) -> Confusion:
    """The confusion counts of a pair (fp, fn); tp and tn are clamped at 0 against round-off of real weights."""
    return Confusion(tp=max(0.0, positives - fn), fp=fp, tn=max(0.0, negatives - fp), fn=fn)


@dataclass(frozen=True)
class FrontPoint:
    """One point of a front: its weights of false positives and false negatives and a tree that has them (built,
    and checked by routing the data, when first asked for)."""

    fp: float
    fn: float
    positives: float  # weight of the positive rows
    negatives: float  # weight of the negative rows
    nodes: int  # branch nodes of the tree: the fewest of any tree with this (fp, fn) within the budget
    build: Callable[[], Tree] = field(repr=False, compare=False)

    @cached_property
    def tree(self) -> Tree:
        return self.build()

    @property
    def confusion(self) -> Confusion:
        return confusion(self.fp, self.fn, self.positives, self.negatives)

    @property
    def tpr(self) -> float:
        """Sensitivity (true positive rate)."""
        return self.confusion.sensitivity

    @property
    def tnr(self) -> float:
        """Specificity (true negative rate)."""
        return self.confusion.specificity


@dataclass(frozen=True)
class ParetoFront:
    """A front of (fp, fn) points and how far it is proven.

    ``points`` are sorted by fp ascending (fn strictly descending). With ``Status.OPTIMAL`` they are the Pareto
    front; with ``Status.TIME_LIMIT`` they are trees found so far and every tree's pair is >= some point of
    ``bound`` (a (k, 2) array; equal to the points when optimal).
    """

    points: tuple[FrontPoint, ...]
    status: Status
    stop_reason: str
    bound: np.ndarray
    positive: object  # the positive class label
    seconds: float
    stats: dict = field(default_factory=dict)

    @property
    def pairs(self) -> list[tuple[float, float]]:
        return [(p.fp, p.fn) for p in self.points]


class ParetoSolver:
    """The (fp, fn) front search on one two-class dataset; stored fronts and bounds persist across calls.

    Parameters
    ----------
    dataset : Dataset
        Two-class training data (its binary columns are searched).
    positive : label, optional
        The positive class, a label of ``dataset.classes_`` (default: the second label in sorted order).
    options : ParetoOptions, optional
        Technique switches.
    threads : int or None, default=None
        Search threads (None: the cores this process may use). At depth >= 3 (>= 2 without the depth-two solver)
        the root's features are dealt out among them, which share one store (:meth:`_front_threads`); the front and
        every point's tree are those of one thread. The interpreted engine searches in one thread.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 2)
    >>> solver = ParetoSolver(Dataset(X, [0, 0, 1, 1, 0, 1, 1, 1]))
    >>> solver.front(max_depth=1).pairs  # a leaf predicting 1, the split on the first column, a leaf predicting 0
    [(0.0, 1.0), (3.0, 0.0)]
    """

    def __init__(self, dataset: Dataset, positive=None, options: ParetoOptions | None = None,
                 threads: int | None = None):
        self.threads = check_threads(threads)
        if dataset.n_classes != 2:
            raise DataError(f"the (fp, fn) front needs two classes, the data has {dataset.n_classes}: "
                            f"{', '.join(map(str, dataset.classes_))}")
        self.options = ParetoOptions() if options is None else options
        if not isinstance(self.options, ParetoOptions):
            raise OptionError(f"pareto options must be a ParetoOptions, got {type(self.options).__name__}")
        self.dataset = dataset
        self.positive_index = positive_index(dataset.classes_, positive)
        label = dataset.classes_[self.positive_index]
        self.positive = label.item() if isinstance(label, np.generic) else label  # a plain Python label
        self._interpreted = runs_interpreted(dataset, self.options)
        self._kp = _interpreted.modules(self._interpreted).pareto  # the kernels it runs
        # the MurTree solver's encoding of the columns and its bitsets (and its tree building)
        engine = "interpreted" if self._interpreted else "compiled"
        self._dp = DPSolver(dataset, options=DPOptions(merge_features=self.options.merge_features, engine=engine))
        self._feature_bits = self._dp._data.feature_bits
        is_pos = (dataset.y == self.positive_index).astype(np.uint8)
        self._pos_bits = self._dp._data.class_bits[self.positive_index]  # rows of the positive class
        self._tol = self._dp._tol
        p = self._feature_bits.shape[0]
        self._counts = (np.zeros(p), np.zeros(p), np.zeros((p, p)), np.zeros((p, p)))  # depth-two work arrays
        self.positives = float(dataset.weights[is_pos == 1].sum())
        self.negatives = float(dataset.weights[is_pos == 0].sum())
        self._store = kp.new_store(self._feature_bits.shape[1])  # fronts and bounds by row set and budget
        self._helpers: list[tuple] = []  # the other threads' depth-two work arrays, made at their first search
        o = self.options
        self._params = kp.ParetoParams(
            depth_two=bool(o.depth_two), upper_bound=bool(o.upper_bound), infeasibility_lb=bool(o.infeasibility_lb),
            lookahead=bool(o.lookahead), similarity=bool(o.similarity), use_cache=bool(o.cache),
            unit=bool(self._dp._unit), tol=float(self._tol),
            step=0.0 if self._tol > 0 else 1.0)  # "strictly better": one unit for integer weights

    # ------------------------------------------------------------------ public
    def front(self, max_depth: int = 3, max_nodes: int | None = None, time_limit: float | None = None,
              ceiling=None) -> ParetoFront:
        """PF(D, max_depth, max_nodes), or its part under ``ceiling`` (points (fp, fn), inf allowed: only pairs
        <= one of them are wanted), with a tree for every point.

        Raises
        ------
        OptionError
            Invalid limits or ceiling.
        """
        depth = check_int("max_depth", max_depth, 0, MAX_DEPTH_CAP)
        nodes = (1 << depth) - 1 if max_nodes is None else min(check_int("max_nodes", max_nodes, 0), (1 << depth) - 1)
        limit = check_time_limit(time_limit)
        U = np.array([[math.inf, math.inf]]) if ceiling is None else _ceiling(ceiling)
        with np.errstate(over="ignore"):  # the store's hashes wrap around (numpy warns when interpreted)
            return _interpreted.interpreted_first(self, lambda left: self._front(depth, nodes, left, U), limit,
                                                  INTERPRETED_SECONDS, self._compile, _warm_up_pareto)

    def _compile(self) -> float:
        """Switch to the compiled kernels; returns the seconds compiling (or loading) them took."""
        self._interpreted = False
        self._kp = kp
        return _warm_up_pareto()

    def _front(self, depth: int, nodes: int, limit: float | None, U: np.ndarray) -> ParetoFront:
        """:meth:`front` with checked arguments, by the kernels ``self._kp`` holds."""
        kern = self._kp
        t0 = time.perf_counter()
        compile_seconds = 0.0 if self._interpreted else _warm_up_pareto()  # loading counts in the time limit
        d = min(depth, nodes)
        n = min(nodes, (1 << d) - 1)
        prm = self._params if limit is None else self._params._replace(deadline=t0 + limit)
        Umax = kern.maximal(U, self._tol)
        if not self._dealt(d):
            search = self._search(d, n, prm)
            while True:
                search.st[kc.S_FULL] = self._store.cache.used[U_STOP] = 0
                search.done[:] = False
                P, complete = kern.solve_front(search, 0, 0, d, n, Umax)
                if not search.st[kc.S_FULL]:
                    break
                self._store = kern.grow_store(self._store)
                search = search._replace(store=self._store)
            searches, st, more = [search], search.st, {}
        else:
            P, complete, searches, seconds = self._front_threads(d, n, prm, Umax)
            st = np.sum([s.st for s in searches], axis=0)
            more = {"parallel_seconds": seconds, "thread_nodes": [int(s.st[kc.S_NODES]) for s in searches]}
        if complete:
            bound = P[:, :2].copy()
        elif d <= 2 and self.options.depth_two or d == 0:
            bound = NO_BOUND.copy()
        else:  # the splits no thread finished bound the root (Eq. 5), by each thread's archive; the meet of those
            done = np.logical_or.reduce([s.done for s in searches])
            bound = kern.root_bound(searches[0]._replace(done=done), d, n, P)
            for s in searches[1:]:
                bound = kern.meet(bound, kern.root_bound(s._replace(done=done), d, n, P), self._tol)
        points = tuple(self._point(row) for row in P)
        stats = {"subproblems": int(st[kc.S_NODES]), "merges": int(st[kp.S_MERGES]),
                 "depth_two_calls": int(st[kc.S_DEPTH2]), "cache_hits": int(st[kc.S_CACHE_HITS]),
                 "lookahead_prunes": int(st[kp.S_LOOKAHEAD]), "bound_prunes": int(st[kp.S_BOUND_PRUNES]),
                 "features": int(self._feature_bits.shape[0]), "tolerance": self._tol, "front_size": len(points),
                 "engine": "interpreted" if self._interpreted else "compiled",
                 "threads": 1 if self._interpreted else self.threads, **more}
        if compile_seconds:
            stats["compile_seconds"] = compile_seconds
        status = Status.OPTIMAL if complete else Status.TIME_LIMIT
        return ParetoFront(points, status, "solved" if complete else "time_limit", bound, self.positive,
                           time.perf_counter() - t0, stats)

    def _search(self, d: int, n: int, prm: kp.ParetoParams, t: int = 0) -> kp.FrontSearch:
        """The state of one search of the root at budget (d, n) in thread ``t``: the store, its depth-two work arrays
        (thread 0: the solver's own; the others keep theirs across calls), a fresh similarity archive (one slot per
        budget), the recursion path's rows with the root's at level 0, fresh statistics, the root not dealt out."""
        W = self._feature_bits.shape[1]
        levels = np.zeros((d + 2, 2, W), dtype=np.uint64)
        levels[0, 0] = self._dp._root
        slots = (n + 1) * (d + 1)
        counts = self._counts
        if t > 0:
            while len(self._helpers) < t:
                p = self._feature_bits.shape[0]
                self._helpers.append((np.zeros(p), np.zeros(p), np.zeros((p, p)), np.zeros((p, p))))
            counts = self._helpers[t - 1]
        return kp.FrontSearch(data=self._dp._data, pos_bits=self._pos_bits, store=self._store,
                              archive=grow_archive(None, slots - 1, W),
                              levels=levels, counts=counts,
                              done=np.zeros((self._feature_bits.shape[0], max(n, 1)), dtype=np.bool_), prm=prm,
                              st=np.zeros(kp.N_PARETO_STATS, dtype=np.int64), root=new_root(False))

    def _dealt(self, d: int) -> bool:
        """Whether a search of depth budget ``d`` deals the root's features out to threads: several threads, the
        compiled kernels, a root above the depth-two solver, two features or more."""
        return self.threads > 1 and not self._interpreted and d > (2 if self.options.depth_two else 1) and \
            self._feature_bits.shape[0] > 1

    def _front_threads(self, d: int, n: int, prm: kp.ParetoParams, U: np.ndarray):
        """The root's features dealt out among ``self.threads`` threads (``solve_front`` releases the GIL), sharing
        the store (under its lock), each with its own archive and work arrays, each under ``U`` and reading the clock;
        each stops at its share of ``prm.node_limit``. One that fills the store stops them all; it grows and all
        search again.

        The root's front is nd of the union of the threads' fronts (Eq. 3 is an nd over a union), taken in the
        order one thread would find them: the leaf, then the root features ascending (a stable sort), so that
        :func:`~odtmip.dp._kernels._pareto.nondominated`, which keeps the fewest nodes and then the first of equal
        points, keeps the tree one thread keeps. Returns (front, complete, the threads' searches, their seconds
        together). After a stop, a thread stopped by a full store (its split points may name rows it could not keep)
        counts as having found only the leaves and finished no split."""
        T = self.threads
        each = prm._replace(node_limit=-(-prm.node_limit // T))  # each thread's share of the subproblems
        searches = [self._search(d, n, each, t) for t in range(T)]
        seconds = 0.0
        with shared_by_threads(self._store.cache):
            while True:
                root = new_root(True)
                self._store.cache.used[U_STOP] = 0
                for t, s in enumerate(searches):
                    s.st[kc.S_FULL] = 0
                    s.done[:] = False
                    searches[t] = s._replace(store=self._store, root=root)
                found, took = in_threads(T, lambda t: kp.solve_front(searches[t], 0, 0, d, n, U), lambda: None)
                seconds += took
                full = [t for t, s in enumerate(searches) if s.st[kc.S_FULL]]
                if not full or any(s.st[kc.S_TIMEOUT] for s in searches):
                    break
                self._store = kp.grow_store(self._store)
        fronts = [P for P, _ in found]
        for t in full:  # stopped by a full store: its leaves stand, its splits count as not searched
            searches[t].done[:] = False
            fronts[t] = fronts[t][fronts[t][:, kp.P_KIND] == kp.KIND_LEAF]
        # the threads' fronts, the leaf first, then by root feature
        F = np.concatenate(fronts)
        F = kp.nondominated(np.ascontiguousarray(F[np.argsort(F[:, kp.P_FEATURE], kind="stable")]), self._tol)
        complete = not full and all(found[t][1] for t in range(T))
        return F, complete, searches, seconds

    # ------------------------------------------------------------------ trees
    def _point(self, row: np.ndarray) -> FrontPoint:
        return FrontPoint(float(row[kp.P_FP]), float(row[kp.P_FN]), self.positives, self.negatives,
                          int(row[kp.P_NODES]), partial(self._tree, row.copy()))

    def _tree(self, row: np.ndarray) -> Tree:
        """The tree of a front row, checked: routing the data through it gives the row's (fp, fn)."""
        tree = self.dataset.new_tree(self._spec(row))
        predicted = tree.predict_index(self.dataset.raw) == self.positive_index
        actual = self.dataset.y == self.positive_index
        w = self.dataset.weights
        fp, fn = float(w[predicted & ~actual].sum()), float(w[~predicted & actual].sum())
        if abs(fp - row[kp.P_FP]) > self._tol + 1e-9 * self.negatives or \
                abs(fn - row[kp.P_FN]) > self._tol + 1e-9 * self.positives:
            raise VerificationError(f"front point ({row[kp.P_FP]!r}, {row[kp.P_FN]!r}) but its tree has "
                                    f"({fp!r}, {fn!r})")
        return tree

    def _label(self, positive) -> int:
        return self.positive_index if positive else 1 - self.positive_index

    def _spec(self, row: np.ndarray):
        """The tree of a front row ([DS21] keeps one per point; rebuilt through the merges that made it)."""
        kind, f = int(row[kp.P_KIND]), int(row[kp.P_FEATURE])
        if kind == kp.KIND_LEAF:
            return leaf(self._label(row[kp.P_A] == 1))
        if kind == kp.KIND_TERMINAL:
            labels = int(row[kp.P_C])
            return self._dp._branch(f, self._terminal_child(int(row[kp.P_A]), labels & 3),
                                    self._terminal_child(int(row[kp.P_B]), labels >> 2))
        rows = self._store.rows
        return self._dp._branch(f, self._spec(rows[int(row[kp.P_A])]), self._spec(rows[int(row[kp.P_B])]))

    def _terminal_child(self, g: int, labels: int):
        if g < 0:
            return leaf(self._label(labels & 1))
        return self._dp._branch(g, leaf(self._label(labels & 1)), leaf(self._label(labels & 2)))


def _ceiling(points) -> np.ndarray:
    U = np.asarray(points, dtype=float).reshape(-1, 2)
    if len(U) == 0 or np.isnan(U).any() or (U < 0).any():
        raise OptionError(f"a ceiling is a non-empty list of (fp, fn) points >= 0 (inf allowed), got {points!r}")
    return np.ascontiguousarray(U)


def runs_interpreted(dataset: Dataset, options: ParetoOptions) -> bool:
    """Whether :class:`ParetoSolver` runs its kernels interpreted (:attr:`ParetoOptions.engine`)."""
    return _interpreted.choose(options.engine, _warm_up_pareto, kp.solve_front, kp.maximal, kp.root_bound, kp.allowed,
                               kc.row_lists)


@progress.warm_up("the Pareto-front kernels")
def _warm_up_pareto() -> float:
    """Compile (or load) the front kernels once per process; returns the seconds it took the first time, 0.0
    afterwards (:func:`odtmip.core.progress.warm_up`)."""
    rng = np.random.default_rng(0)
    compiled = ParetoOptions(engine="compiled")
    for w in (None, rng.random(30) + 0.5):
        ds = Dataset(rng.integers(0, 2, size=(30, 4)), np.r_[0, 1, rng.integers(0, 2, 28)], w)
        ParetoSolver(ds, options=compiled, threads=1).front(max_depth=3, ceiling=[(5, 5)], time_limit=3600.0)
        ParetoSolver(ds, options=compiled, threads=1).front(max_depth=3, max_nodes=2)
        # stopped at its second subproblem: a stopped search's bound
        stopped = ParetoSolver(ds, options=compiled, threads=1)
        stopped._params = stopped._params._replace(node_limit=1)
        stopped.front(max_depth=3)


# ============================================================================================ objectives
@dataclass(frozen=True)
class Objective:
    """What to pick from the front: the allowed region (a ceiling on (fp, fn)) and the loss to minimise there.

    ``metric`` (a name of :data:`METRICS` or a callable ``Confusion -> float`` that is no better when fp or fn
    grows) is maximised as the loss ``1 - metric``. Without a metric the loss is fn when only fp is capped
    (maximise sensitivity s.t. specificity), fp when only fn is capped, and fp + fn otherwise.
    """

    fp_cap: float = math.inf
    fn_cap: float = math.inf
    metric: str | Callable | None = None

    @property
    def ceiling(self) -> np.ndarray:
        return np.array([[self.fp_cap, self.fn_cap]])

    @property
    def name(self) -> str:
        if self.metric is not None:
            return self.metric if isinstance(self.metric, str) else getattr(self.metric, "__name__", "metric")
        if math.isinf(self.fn_cap) and not math.isinf(self.fp_cap):
            return "false-negatives"
        if math.isinf(self.fp_cap) and not math.isinf(self.fn_cap):
            return "false-positives"
        return "misclassifications"

    def strict(self, value: float, positives: float, negatives: float) -> bool:
        """Whether the loss grows strictly with fp and with fn around the optimum ``value``, so that no tree of
        optimal loss is dominated: F1 above 0, accuracy, misclassifications, balanced accuracy with both classes."""
        return (self.metric == "f1" and value < 1.0) or self.metric == "accuracy" or self.name == "misclassifications" \
            or (self.metric == "balanced-accuracy" and positives > 0 and negatives > 0)

    def optimal_region(self, value: float) -> np.ndarray:
        """A ceiling whose region holds every tree of loss ``value`` (the optimum) within the caps: {(cap,
        value)} for FN under an fp cap, {(value, cap)} for FP under an fn cap, else the caps. A loss summed from
        real weights can fall a rounding below 0; the region starts at 0 then."""
        if self.name == "false-negatives":
            return np.array([[self.fp_cap, max(value, 0.0)]])
        if self.name == "false-positives":
            return np.array([[max(value, 0.0), self.fn_cap]])
        return self.ceiling

    def loss(self, fp: float, fn: float, positives: float, negatives: float) -> float:
        if self.metric is None:
            name = self.name
            return fn if name == "false-negatives" else fp if name == "false-positives" else fp + fn
        c = confusion(fp, fn, positives, negatives)
        value = METRICS[self.metric](c) if isinstance(self.metric, str) else self.metric(c)
        value = float(value)
        if not math.isfinite(value):
            raise OptionError(f"the metric {self.name} returned {value!r} for tp={c.tp:g}, fp={c.fp:g}, "
                              f"tn={c.tn:g}, fn={c.fn:g}; it must return a finite number")
        return 1.0 - value


def objective_of(dataset: Dataset, positive_at: int, metric=None, min_sensitivity: float | None = None,
                 min_specificity: float | None = None, max_false_positives: float | None = None,
                 max_false_negatives: float | None = None) -> Objective:
    """The :class:`Objective` of the options: specificity >= tau caps fp at ``|I-| - ceil(tau |I-|)``, sensitivity >=
    tau caps fn at ``|I+| - ceil(tau |I+|)`` (weights), and the explicit caps on fp and fn."""
    if isinstance(metric, str) and metric not in METRICS:
        raise OptionError(f"unknown metric {metric!r}; available: {', '.join(METRICS)} or a callable")
    if metric is not None and not isinstance(metric, str) and not callable(metric):
        raise OptionError(f"metric must be a name ({', '.join(METRICS)}) or a callable, got {metric!r}")
    is_pos = dataset.y == positive_at
    positives, negatives = float(dataset.weights[is_pos].sum()), float(dataset.weights[~is_pos].sum())
    fp_cap = fn_cap = math.inf
    for name, tau in (("min_sensitivity", min_sensitivity), ("min_specificity", min_specificity)):
        if tau is not None and not 0 <= tau <= 1:
            raise OptionError(f"{name} must lie in [0, 1], got {tau!r}")
    for name, cap in (("max_false_positives", max_false_positives), ("max_false_negatives", max_false_negatives)):
        if cap is not None and not cap >= 0:
            raise OptionError(f"{name} must be >= 0, got {cap!r}")
    if min_specificity is not None:
        fp_cap = negatives - count_target(min_specificity, negatives)
    if min_sensitivity is not None:
        fn_cap = positives - count_target(min_sensitivity, positives)
    if max_false_positives is not None:
        fp_cap = min(fp_cap, float(max_false_positives))
    if max_false_negatives is not None:
        fn_cap = min(fn_cap, float(max_false_negatives))
    return Objective(fp_cap, fn_cap, metric)


def best_point(front: ParetoFront, objective: Objective) -> FrontPoint | None:
    """The point of least loss among those within the objective's caps (None if there is none); ties to the
    first (least fp)."""
    inside = [p for p in front.points if p.fp <= objective.fp_cap + 1e-9 and p.fn <= objective.fn_cap + 1e-9]
    if not inside:
        return None
    return min(inside, key=lambda p: objective.loss(p.fp, p.fn, p.positives, p.negatives))


def solve_pareto(dataset: Dataset, max_depth: int = 3, max_nodes: int | None = None,
                 time_limit: float | None = None, metric=None, min_sensitivity: float | None = None,
                 min_specificity: float | None = None, max_false_positives: float | None = None,
                 max_false_negatives: float | None = None, positive=None,
                 options: ParetoOptions | None = None, threads: int | None = None) -> SolveResult:
    """Optimal tree for a metric monotone in (fp, fn), under caps on fp and fn, from the front of [DS21].

    The front under the caps' ceiling is searched once; its point of least loss (:class:`Objective`) is optimal
    ([DS21] §3: a monotone metric has an optimum on the front). Among optimal trees one with the fewest branch
    nodes is returned: every front point carries the fewest nodes of its pair, which settles it when no optimal
    tree is dominated (:meth:`Objective.strict`); otherwise the least node budget whose front still reaches the
    optimum is found by bisection (the optimum only improves with the budget). The result's ``objective`` is the
    loss (``1 - metric``, or the weight of false negatives / false positives / both, see :class:`Objective`)
    recomputed by routing; ``stats`` adds the metric, ``tpr``, ``tnr``, the caps and the front's size. A cap no
    tree meets gives ``Status.INFEASIBLE`` (proven). With a time limit the best tree found is returned with a
    valid bound. ``threads``: search threads of the front (:class:`ParetoSolver`; None: the usable cores).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 3)
    >>> data = Dataset(X, [0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 1])
    >>> res = solve_pareto(data, max_depth=2, min_specificity=1.0)  # no false positive allowed
    >>> res.status.value, res.stats["tnr"], round(res.stats["tpr"], 3)
    ('optimal', 1.0, 0.5)
    """
    checked = ParetoOptions() if options is None or not isinstance(options, ParetoOptions) else options
    t0 = time.perf_counter()
    if runs_interpreted(dataset, checked):
        compile_seconds = 0.0
    else:  # loading the kernels counts in the time limit, as in solve_dp (the front below reports 0)
        compile_seconds = _warm_up_pareto()
    solver = ParetoSolver(dataset, positive=positive, options=options, threads=threads)
    goal = objective_of(dataset, solver.positive_index, metric, min_sensitivity, min_specificity,
                        max_false_positives, max_false_negatives)
    limit = check_time_limit(time_limit)
    deadline = math.inf if limit is None else t0 + limit
    left = None if limit is None else max(deadline - time.perf_counter(), 1e-6)
    front = solver.front(max_depth, max_nodes, time_limit=left, ceiling=goal.ceiling)
    stats = dict(front.stats, metric=goal.name, positive=solver.positive, positive_index=solver.positive_index,
                 fp_cap=goal.fp_cap, fn_cap=goal.fn_cap)
    if compile_seconds:
        stats["compile_seconds"] = compile_seconds + front.stats.get("compile_seconds", 0.0)
    best = best_point(front, goal)

    def loss(fp: float, fn: float) -> float:
        return goal.loss(fp, fn, solver.positives, solver.negatives)

    inside = front.bound[solver._kp.allowed(front.bound, goal.ceiling, 1e-9)]
    bound = min((loss(a, b) for a, b in inside), default=math.inf)
    if best is None:
        status = Status.INFEASIBLE if front.status is Status.OPTIMAL else Status.NO_SOLUTION
        return SolveResult("dp", status, front.stop_reason, None, None, bound, time.perf_counter() - t0, stats)
    value = loss(best.fp, best.fn)
    status = stopped_status(front.status, value, bound, 1e-12)  # a stopped front whose best point meets its bound
    if status is not front.status:
        stats["fewest_nodes_proven"] = False
    elif front.status is Status.OPTIMAL:
        if goal.strict(value, solver.positives, solver.negatives):  # the optima are front points, each with its
            optima = [p for p in front.points if loss(p.fp, p.fn) <= value + 1e-12]  # fewest nodes
            best, stats["fewest_nodes_proven"] = min(optima, key=lambda p: p.nodes), True
        else:
            best, stats["fewest_nodes_proven"] = _fewest_nodes(solver, goal, best, value, max_depth,
                                                               goal.optimal_region(value), deadline)
        bound = value
    stats.update(tpr=best.tpr, tnr=best.tnr, f1=best.confusion.f1, fp=best.fp, fn=best.fn)
    if goal.metric is not None:
        stats["metric_value"] = 1.0 - value
    return SolveResult("dp", status, front.stop_reason, best.tree, loss(best.fp, best.fn), min(bound, value),
                       time.perf_counter() - t0, stats)


def _fewest_nodes(solver: ParetoSolver, goal: Objective, best: FrontPoint, value: float, depth: int,
                  region: np.ndarray, deadline: float) -> tuple[FrontPoint, bool]:
    """The optimum with the fewest branch nodes: bisection on the node budget (the best loss under a budget never
    rises with it), each budget's front searched under ``region``, a ceiling that holds every optimal tree.
    Returns it and whether the search finished before the deadline."""
    low, high = 0, best.tree.n_branch_nodes  # the optimum is reached with ``high`` nodes
    while low < high:
        mid = (low + high) // 2
        left = deadline - time.perf_counter()
        if left <= 0:
            return best, False
        front = solver.front(depth, mid, time_limit=None if math.isinf(left) else left, ceiling=region)
        if front.status is not Status.OPTIMAL:
            return best, False
        point = best_point(front, goal)
        if point is not None and goal.loss(point.fp, point.fn, point.positives, point.negatives) <= value + 1e-12:
            best, high = point, min(mid, point.tree.n_branch_nodes)
        else:
            low = mid + 1
    return best, True
