"""The DP's entry points, which pick the engine for a problem: :func:`solve_dp` (the MurTree search, compiled or
interpreted, its pairwise engine for small problems in numpy, or the (fp, fn) front for a two-class metric or
target) and :func:`solve_numeric`, the ``"dp"`` solver (ConTree over every threshold of the numeric columns when it
can, else :func:`solve_dp`)."""

from __future__ import annotations

import time
from dataclasses import replace

from odtmip.core.data import Dataset
from odtmip.core.exceptions import OptionError, ResourceError
from odtmip.core.options import MEMORY_LIMIT, check_threads, check_time_limit, memory_text
from odtmip.core.results import SolveResult
from odtmip.dp import pairwise, solver
from odtmip.dp.common import MAX_DEPTH_CAP, check_int, check_penalties
from odtmip.dp.contree import midpoint_columns, solve_contree
from odtmip.dp.pairwise import solve_pairwise
from odtmip.dp.pareto import solve_pareto
from odtmip.dp.solver import DPOptions, DPSolver


def _runs_pairwise(dataset: Dataset, max_depth, options, memory_limit: float | None) -> bool:
    """Whether :func:`solve_dp` runs the pairwise engine (:attr:`DPOptions.engine`)."""
    options = DPOptions() if options is None else options
    if not isinstance(options, DPOptions) or options.engine in ("compiled", "interpreted"):
        return False
    if max_depth is not None:
        max_depth = check_int("max_depth", max_depth, 0, MAX_DEPTH_CAP)
    if options.engine == "pairwise":
        if max_depth is None or max_depth > pairwise.MAX_DEPTH:
            raise OptionError(f"engine='pairwise' needs max_depth <= {pairwise.MAX_DEPTH}, got {max_depth}")
        (n, p), K = dataset.Xb.shape, dataset.n_classes
        gib = pairwise.estimated_memory_gib(n, p, K)
        if memory_limit is not None and gib > memory_limit:
            raise ResourceError(f"the pairwise engine on {n:,} rows x {p:,} binary columns ({K} classes) would take "
                                f"about {memory_text(gib)}, more than memory_limit = {memory_limit:g} GiB; use the "
                                "compiled engine (engine='auto' or 'compiled')")
        return True
    defaults = replace(options, engine="compiled") == DPOptions(engine="compiled")
    return defaults and pairwise.suits(dataset, max_depth, memory_limit)


def solve_dp(dataset: Dataset, max_depth: int | None = 3, max_nodes: int | None = None, min_leaf: int = 1,
             penalty: float = 0.0, time_limit: float | None = None, options: DPOptions | None = None,
             leaf_penalty: float | None = None, memory_limit: float | None = MEMORY_LIMIT, metric=None,
             min_sensitivity: float | None = None, min_specificity: float | None = None,
             max_false_positives: float | None = None, max_false_negatives: float | None = None, positive=None,
             pareto_options=None, threads: int | None = None) -> SolveResult:
    """Optimal classification tree by MurTree-style dynamic programming (see the module docstring).

    Parameters
    ----------
    dataset : Dataset
        Training data (its binary columns are searched).
    max_depth : int or None, default=3
        Largest number of branch nodes on a root-to-leaf path (0: a single leaf); at most 20. None: no depth
        limit (needs ``leaf_penalty > 0`` or ``penalty > 0``; the leaf-count bound of [OSDT] Theorem C.1
        bounds the search).
    max_nodes : int, optional
        Largest number of branch nodes; default and cap 2^max_depth - 1.
    min_leaf : int, default=1
        Rows every non-empty leaf must hold.
    penalty : float, default=0.0
        Objective per branch node, in units of (weighted) misclassifications.
    time_limit : float, optional
        Seconds for the whole call, the preprocessing of the columns included; at the limit the best tree
        found is returned with ``Status.TIME_LIMIT``.
    options : DPOptions, optional
        Technique switches (none changes the optimum).
    leaf_penalty : float, optional
        lambda >= 0: minimise the sparse objective of [OSDT] Eq. 4, errors / W + lambda x leaves (W the
        total weight); ``objective`` and ``bound`` are then in these units. Excludes a nonzero ``penalty``.
    memory_limit : float or None, default=half of physical memory
        GiB the arrays and the cache may take (see :class:`DPSolver`); None: no guard.
    metric, min_sensitivity, min_specificity, max_false_positives, max_false_negatives, positive, pareto_options
        Two-class objectives from the (fp, fn) Pareto front: maximise a metric (``"f1"``, ``"mcc"``, ``"fmi"``,
        ``"balanced-accuracy"``, ``"accuracy"`` or a callable on :class:`~odtmip.core.metrics.Confusion`), under a
        sensitivity/specificity floor or caps on the false positives/negatives, with ``positive`` the positive
        class label; see :func:`odtmip.dp.pareto.solve_pareto`. Not with ``min_leaf``, ``penalty`` or
        ``leaf_penalty``.
    threads : int or None, default=None
        Search threads (None: the cores this process may use); the tree is the one a single thread returns (see
        :class:`DPSolver`, and :class:`~odtmip.dp.pareto.ParetoSolver` for the front of the two-class objectives).
        ``stats["threads"]`` says how many searched.

    Returns
    -------
    SolveResult
        See :meth:`DPSolver.solve`; ``seconds`` and ``stats["preprocess_seconds"]`` include the preprocessing.

    Examples
    --------
    >>> import numpy as np
    >>> from odtmip.core.data import Dataset
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 3)
    >>> res = solve_dp(Dataset(X, [0, 1, 1, 0] * 3), max_depth=2)
    >>> res.status.value, res.objective, res.tree.n_branch_nodes
    ('optimal', 0.0, 3)

    The two-point example of [OSDT] §C (Corollary C.2 would allow one leaf only):

    >>> res = solve_dp(Dataset(np.array([[0], [1]]), [0, 1]), max_depth=None, leaf_penalty=0.3)
    >>> res.tree.n_leaves, round(res.objective, 12)
    (2, 0.6)
    """
    two_class = {"metric": metric, "min_sensitivity": min_sensitivity, "min_specificity": min_specificity,
                 "max_false_positives": max_false_positives, "max_false_negatives": max_false_negatives,
                 "positive": positive, "pareto_options": pareto_options}
    threads = check_threads(threads)  # the (fp, fn) front below searches in one thread
    if any(value is not None for value in two_class.values()):
        clash = (("min_leaf", min_leaf != 1), ("penalty", penalty != 0), ("options", options is not None),
                 ("leaf_penalty", leaf_penalty is not None), ("max_depth=None", max_depth is None))
        given = [name for name, on in clash if on]
        if given:
            raise OptionError(f"{', '.join(given)} cannot be combined with a metric, a sensitivity/specificity target "
                              f"or a positive class (the (fp, fn) front search)")
        two_class["options"] = two_class.pop("pareto_options")
        return solve_pareto(dataset, max_depth, max_nodes, time_limit, threads=threads, **two_class)
    limit = check_time_limit(time_limit)
    if _runs_pairwise(dataset, max_depth, options, memory_limit):
        min_leaf = check_int("min_leaf", min_leaf, 1)
        if max_nodes is not None:
            max_nodes = check_int("max_nodes", max_nodes, 0)
        penalty, leaf_penalty = check_penalties(penalty, leaf_penalty)
        return solve_pairwise(dataset, max_depth, max_nodes, min_leaf, penalty, leaf_penalty, limit)
    checked = DPOptions() if options is None else options  # DPSolver refuses anything else
    t0 = time.perf_counter()
    if isinstance(checked, DPOptions) and solver.runs_interpreted(dataset, checked):
        compile_seconds = 0.0
    else:
        compile_seconds = solver.warm_up()  # loading the kernels counts in the time limit (the solve below reports 0)
    search = DPSolver(dataset, min_leaf=min_leaf, penalty=penalty, leaf_penalty=leaf_penalty, options=options,
                      memory_limit=memory_limit, threads=threads)
    prep = time.perf_counter() - t0
    # the search gets what the preprocessing left (a sliver when nothing: it then returns its first tree)
    left = None if limit is None else max(limit - prep, 1e-6)
    result = search.solve(max_depth=max_depth, max_nodes=max_nodes, time_limit=left)
    stats = {**result.stats, "preprocess_seconds": prep}
    if compile_seconds:
        stats["compile_seconds"] = compile_seconds
    return replace(result, seconds=result.seconds + prep, stats=stats)


def solve_numeric(dataset: Dataset, max_depth: int | None = 3, max_nodes: int | None = None, min_leaf: int = 1,
                  penalty: float = 0.0, time_limit: float | None = None, options: DPOptions | None = None,
                  leaf_penalty: float | None = None, memory_limit: float | None = MEMORY_LIMIT, metric=None,
                  min_sensitivity: float | None = None, min_specificity: float | None = None,
                  max_false_positives: float | None = None, max_false_negatives: float | None = None, positive=None,
                  pareto_options=None, threads: int | None = None) -> SolveResult:
    """The ``"dp"`` solver: :func:`~odtmip.dp.solve_dp`'s problem, over every threshold of the numeric columns when
    the dataset asks for it (:attr:`~odtmip.core.data.Dataset.every_threshold`, the default ``numeric="auto"``).

    Then ConTree solves it when it can (a depth limit, no node limit below 2^max_depth - 1, no leaf penalty, no
    :class:`~odtmip.dp.DPOptions`, no two-class metric or target), else the MurTree DP (or its Pareto front) on
    binary columns at every midpoint. Otherwise the MurTree DP on the dataset's own binary columns (explicit buckets
    or thresholds). ``stats["split_space"]`` names the splits the optimum is over. Parameters as for
    :func:`~odtmip.dp.solve_dp`.
    """
    two_class = {"metric": metric, "min_sensitivity": min_sensitivity, "min_specificity": min_specificity,
                 "max_false_positives": max_false_positives, "max_false_negatives": max_false_negatives,
                 "positive": positive, "pareto_options": pareto_options}
    dp = {"max_depth": max_depth, "max_nodes": max_nodes, "min_leaf": min_leaf, "penalty": penalty,
          "time_limit": time_limit, "options": options, "leaf_penalty": leaf_penalty, "memory_limit": memory_limit,
          "threads": threads, **two_class}
    if not dataset.every_threshold:
        res = solve_dp(dataset, **dp)
        res.stats["split_space"] = f"the binary columns of the encoding ({dataset.encoder.describe()})"
        return res
    full = max_depth is not None and (max_nodes is None or max_nodes >= (1 << min(max_depth, 62)) - 1)
    if full and leaf_penalty is None and options is None and all(v is None for v in two_class.values()):
        return solve_contree(dataset, max_depth, min_leaf, penalty, time_limit, memory_limit=memory_limit,
                             threads=threads)
    res = solve_dp(midpoint_columns(dataset), **dp)
    res.stats["split_space"] = "every midpoint of the numeric columns, as binary columns"
    return res
