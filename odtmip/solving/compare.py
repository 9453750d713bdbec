"""Formulation comparison: a grid of MIP solves, one tidy row per run, resumable and parallel.

:func:`compare` runs every cell of the product *datasets x variants x dp_bounds x depths x warm starts x seeds*,
where a :class:`Variant` is a registered formulation with fixed options (``"gunluk"``, ``"gunluk:strengthen=false"``,
``{"solver": "oct", "alpha": 0.01}``; :func:`ablation` makes a paper's switch-one-option-off set). Each run is a
:func:`odtmip.solving.check.check` when the formulation states a DP equivalent (the DP solved once: its optimum is the
reference and its tree the warm start) and a plain :func:`odtmip.solve` otherwise, always with ``lp_bound=True``.

One row per run (:data:`COLUMNS`) holds, besides the run's key:

* sizes: ``n_variables``, ``n_binaries``, ``n_constraints``, ``n_nonzeros`` (the model as handed to HiGHS);
* the formulation's own units: ``objective``, ``bound`` (what the model proved by itself: HiGHS's dual bound, never
  below the loss's trivial bound), ``gap`` (in [0, 1]), ``lp_bound`` (the LP relaxation; NaN, with the
  reason in ``lp_note``, when it did not finish in its time), ``root_bound`` (the dual bound at the end of HiGHS's
  root node; NaN when the run stopped inside it) and ``root_gap`` (of ``root_bound`` against ``objective``);
* one common unit: ``misclassifications`` (weighted, recomputed by routing the training data through the tree),
  ``accuracy``, and the bounds mapped into the DP's units (``bound_errors``, ``lp_bound_errors``,
  ``root_bound_errors``: weighted misclassifications, plus the DP's penalty per split when the formulation has a
  complexity penalty) through the formulation's :class:`~odtmip.models.formulation.DPProblem`;
* effort: ``seconds`` (the whole call, the LP bound included), ``build_seconds``, ``handoff_seconds``,
  ``solve_seconds``, ``lp_seconds``, ``nodes``, ``lp_iterations``, and ``first_incumbent_seconds``,
  ``best_seconds`` and ``proof_seconds``, counted from the start of the call without the LP bound's solve;
  ``compile_seconds``: the DP kernels' JIT compilation (or loading from numba's cache) that the run triggered,
  counted in none of the other times (0 once the process has them);
* the reference: ``dp_optimum`` (the DP optimum in the formulation's units), ``dp_misclassifications`` (of the DP
  tree), ``dp_status``, ``dp_seconds``, ``verdict`` (``agree``, ``disagree``, ``unproven``) and ``agree``
  (True, False, or None when unproven or without a DP equivalent);
* the DP's bound rows (``dp_bounds``, :mod:`odtmip.models.view`): ``dp_bounds`` (none, root, paths),
  ``dp_bounds_seconds`` (computing their values, apart from the other times), ``dp_rows`` and ``proved_by``
  (``lp``: the LP relaxation with the rows reached the start tree, no branch and bound ran; ``mip``: HiGHS proved
  it; ``dp``/``trivial``: the DP's or the trivial bound met it); ``proof_seconds`` of an LP proof is the whole call;
* ``trajectory``: ``(seconds, primal, dual)`` in the formulation's units, on the HiGHS run's clock.

Runs are stored as they finish, one JSON line each in ``store`` (keyed by dataset, its fingerprint, variant,
options, depth, warm start, seed and time limit); a rerun with the same store skips the finished ones, so an
interrupted comparison (Ctrl-C) resumes where it stopped. Runs go in parallel through joblib (``jobs``), a Dask
cluster (``backend="dask"``, ``scheduler=`` an address or a ``Client``) or Ray (``backend="ray"``); HiGHS gets
``cores // concurrent runs`` threads per run, and so do the DP solves of the run, so the runs never oversubscribe
the machine.

The results render as the papers' tables (:func:`to_markdown`, :func:`to_latex`: one row per dataset and depth, one
column group per variant, the best in bold) and plots (:func:`plot_profile`, Dolan-Moré performance profiles;
:func:`plot_gaps`, gap over time; :func:`plot_bounds`, LP and root bounds against the optimum; the ``plot`` extra).
:func:`save` and :func:`read` write and read ``.csv`` / ``.parquet`` files (and read a store).

``odtmip.compare`` is the function :func:`compare` (exported by the package); import everything else from this
module: ``from odtmip.solving.compare import to_markdown``.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import itertools
import json
import logging
import math
import os
import socket
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from odtmip.core.data import Dataset
from odtmip.core.exceptions import OptionError
from odtmip.core.options import usable_cores
from odtmip.core.results import SolveResult

logger = logging.getLogger("odtmip")

#: Keys of a variant spec that are not model options.
_RUN_KEYS = ("label", "warm_start", "threads", "seed")
#: Options the grid sets for every run, so a variant may not.
_GRID_OPTIONS = ("max_depth", "time_limit", "highs", "lp_bound")
BACKENDS = ("local", "dask", "ray")

#: The columns of a comparison, in order (see the module docstring).
COLUMNS = (
    "key", "dataset", "n_samples", "n_features", "solver", "variant", "options", "depth", "warm_start", "seed",
    "threads", "time_limit",
    "status", "stop_reason", "objective", "misclassifications", "accuracy", "bound", "gap", "bound_errors",
    "seconds", "build_seconds", "handoff_seconds", "solve_seconds", "lp_seconds", "compile_seconds",
    "first_incumbent_seconds", "best_seconds", "proof_seconds",
    "n_variables", "n_binaries", "n_constraints", "n_nonzeros",
    "lp_bound", "lp_bound_errors", "lp_note", "root_bound", "root_bound_errors", "root_gap", "nodes", "lp_iterations",
    "warm_start_accepted", "dp_bounds", "dp_bounds_seconds", "dp_rows", "proved_by",
    "dp_optimum", "dp_misclassifications", "dp_status", "dp_seconds", "verdict", "agree",
    "trajectory", "error",
)  # fmt: skip


# ============================================================================================ the grid
@dataclass(frozen=True)
class Variant:
    """A registered formulation with fixed options: one column group of a comparison.

    Parameters
    ----------
    solver : str
        A key of :data:`odtmip.models.FORMULATIONS`.
    options : dict
        Model options (as :func:`odtmip.solve` takes them), e.g. ``{"strengthen": False}``.
    label : str, optional
        The name in tables; default the spec, e.g. ``"gunluk:strengthen=false"``.
    warm_start, seed : optional
        Override the grid's warm start / HiGHS seed for this variant.
    threads : int, optional
        HiGHS threads of this variant's runs (default: cores // concurrent runs).
    """

    solver: str
    options: Mapping[str, Any] = field(default_factory=dict)
    label: str | None = None
    warm_start: str | None = None
    threads: int | None = None
    seed: int | None = None

    @property
    def name(self) -> str:
        if self.label is not None:
            return self.label
        settings = {**self.options, **{k: getattr(self, k) for k in _RUN_KEYS[1:] if getattr(self, k) is not None}}
        return self.solver + (":" + ",".join(f"{k}={_spec_text(v)}" for k, v in settings.items()) if settings else "")


def _spec_text(value) -> str:
    return "none" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _spec_value(text: str):
    """A value of a variant spec: true/false, none, an int, a float, else the text."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text.strip()


def variant(spec: str | Mapping | Variant) -> Variant:
    """A :class:`Variant` from ``"solver[:key=value,...]"``, a dict with ``solver`` and options, or a Variant.

    The keys ``label``, ``warm_start``, ``threads`` and ``seed`` set the variant's fields; every other key is a
    model option.

    Examples
    --------
    >>> variant("gunluk:strengthen=false,max_card=2").options
    {'strengthen': False, 'max_card': 2}
    >>> variant({"solver": "oct", "alpha": 0.01, "warm_start": "cart"}).name
    'oct:alpha=0.01,warm_start=cart'
    """
    if isinstance(spec, Variant):
        return spec
    if isinstance(spec, str):
        solver, _, rest = spec.partition(":")
        values = {}
        for item in filter(None, (part.strip() for part in rest.split(","))):
            key, eq, text = item.partition("=")
            if not eq:
                raise OptionError(f"variant {spec!r}: expected key=value, got {item!r}")
            values[key.strip()] = _spec_value(text)
    elif isinstance(spec, Mapping):
        values = dict(spec)
        solver = values.pop("solver", None)
        if solver is None:
            raise OptionError(f"a variant dict needs a 'solver' key, got {spec!r}")
    else:
        raise OptionError(f"a variant is a spec string, a dict or a Variant, got {spec!r}")
    taken = sorted(set(values) & set(_GRID_OPTIONS))
    if taken:
        raise OptionError(f"variant {spec!r}: {', '.join(taken)} is set by the grid, not by a variant")
    run = {k: values.pop(k) for k in _RUN_KEYS if k in values}
    return Variant(solver.strip(), values, **run)


def parse_variants(texts: Iterable[str]) -> list[Variant]:
    """Variants from command-line text: comma-separated specs, where a piece ``key=value`` without a solver
    continues the spec before it (``"gunluk,gunluk:strengthen=false,anchors=false,oct"`` is three variants)."""
    specs: list[str] = []
    for text in texts:
        for piece in filter(None, (p.strip() for p in text.split(","))):
            if "=" in piece and ":" not in piece and specs:
                specs[-1] += "," + piece
            else:
                specs.append(piece)
    return [variant(spec) for spec in specs]


def ablation(solver: str, switches: Sequence[str], nothing: bool = True) -> list[Variant]:
    """The solver with every switch on, with each switch off in turn, and (``nothing``) with all of them off:
    the variants of an ablation table such as [GKLMS] Tables 2-3 ("All", "No Anchor", ..., "Nothing")."""
    variants = [Variant(solver)] + [Variant(solver, {s: False}) for s in switches]
    return variants + ([Variant(solver, dict.fromkeys(switches, False))] if nothing and len(switches) > 1 else [])


def with_dp_bounds(variants: Sequence[Variant], values: Sequence[str]) -> list[Variant]:
    """Each variant once per ``dp_bounds`` value (the grid's axis, :mod:`odtmip.models.view`): ``"none"`` keeps it
    as it is, another value adds the option (its name gains ``dp_bounds=...``). A variant that sets ``dp_bounds``
    itself, or whose formulation takes no DP bounds (OCT-H), is kept once."""
    from odtmip.models import FORMULATIONS

    out = []
    for v in variants:
        f = FORMULATIONS.get(v.solver)
        if "dp_bounds" in v.options or f is None or f.dp_bound_problem is None:
            out.append(v)
            continue
        for value in values:
            if value == "none":
                out.append(v)
            else:
                label = None if v.label is None else f"{v.label}:dp_bounds={value}"
                out.append(replace(v, options={**v.options, "dp_bounds": value}, label=label))
    return out


@dataclass(frozen=True)
class Cell:
    """One run of the grid. ``threads`` is what the run uses; only a variant's own ``threads`` enters the key."""

    dataset: str
    data: Dataset = field(repr=False, compare=False)
    fingerprint: str
    variant: Variant
    depth: int
    warm_start: str
    seed: int | None
    time_limit: float | None
    lp_bound: bool = True
    threads: int | None = None
    log: bool = field(default=False, compare=False)  # echo HiGHS's log to stderr (not part of the run's identity)
    # time.perf_counter() at the start of the command that runs the cell in this process (odtmip check): its time
    # limit counts from there, not from the cell's start
    started: float | None = field(default=None, compare=False)

    @property
    def key(self) -> str:
        v = self.variant
        identity = {"dataset": self.dataset, "fingerprint": self.fingerprint, "solver": v.solver, "variant": v.name,
                    "options": v.options, "depth": self.depth, "warm_start": self.warm_start, "seed": self.seed,
                    "threads": v.threads, "time_limit": self.time_limit, "lp_bound": self.lp_bound}
        return hashlib.sha1(json.dumps(identity, sort_keys=True, default=repr).encode()).hexdigest()[:16]


def fingerprint(data: Dataset) -> str:
    """A short hash of the binary encoding, labels and weights: a stored run is reused only for the same data."""
    h = hashlib.sha1()
    for part in (np.ascontiguousarray(data.Xb), data.y, data.weights, np.asarray(data.classes_, dtype=str)):
        h.update(np.ascontiguousarray(part).tobytes())
    h.update("\0".join(c.name for c in data.columns).encode())
    return h.hexdigest()[:16]


def _datasets(datasets) -> dict[str, Dataset]:
    """``{label: Dataset}`` from a name, a Dataset, a sequence of them or a mapping label -> name or Dataset."""
    from odtmip.core.datasets import load

    if isinstance(datasets, (str, os.PathLike, Dataset)):
        datasets = [datasets]
    items = datasets.items() if isinstance(datasets, Mapping) else (
        (str(d) if not isinstance(d, Dataset) else f"data{i}", d) for i, d in enumerate(datasets))
    out = {label: d if isinstance(d, Dataset) else Dataset(*load(d)) for label, d in items}
    if not out:
        raise OptionError("compare needs at least one dataset")
    return out


def grid(datasets, solvers=None, depths: Sequence[int] = (2,), time_limit: float | None = 60.0,
         warm_start: str | Sequence[str] = "dp", seeds: Sequence[int | None] = (None,),
         lp_bound: bool = True, dp_bounds: Sequence[str] = ("none",)) -> list[Cell]:
    """The cells of :func:`compare` in order (dataset, depth, variant, warm start, seed); every variant's options
    are checked here (:func:`odtmip.core.options.validate`), before anything runs."""
    from odtmip.core.options import validate
    from odtmip.models import FORMULATIONS

    variants = [variant(s) for s in (list(FORMULATIONS) if solvers is None else
                                     [solvers] if isinstance(solvers, (str, Variant)) else solvers)]
    variants = with_dp_bounds(variants, [dp_bounds] if isinstance(dp_bounds, str) else dp_bounds)
    names = [v.name for v in variants]
    if len(set(names)) < len(names):
        raise OptionError(f"two variants have the same name: {names}; give them labels")
    warm_starts = [warm_start] if isinstance(warm_start, str) else list(warm_start)
    cells = []
    for label, data in _datasets(datasets).items():
        digest = fingerprint(data)
        for depth in depths:
            for v in variants:
                if v.solver not in FORMULATIONS:
                    raise OptionError(f"unknown MIP formulation {v.solver!r}; available: {', '.join(FORMULATIONS)}")
                for start in [v.warm_start] if v.warm_start is not None else warm_starts:
                    validate(v.solver, max_depth=depth, warm_start=start, time_limit=time_limit, **v.options)
                    cells += [Cell(label, data, digest, v, depth, start, v.seed if v.seed is not None else seed,
                                   time_limit, lp_bound) for seed in ([v.seed] if v.seed is not None else seeds)]
    return cells


# ============================================================================================ one run
def run_cell(cell: Cell) -> dict:
    """Run one cell and return its row (see :data:`COLUMNS`); a failure is a row with ``status="error"``."""
    try:
        return _run(cell)
    except Exception as exc:  # noqa: BLE001  (one failed run must not lose the grid; the row says why)
        logger.warning("compare: %s on %s failed: %s", cell.variant.name, cell.dataset, exc)
        return {**_identity(cell), "status": "error", "error": f"{type(exc).__name__}: {exc}"}


def _identity(cell: Cell) -> dict:
    v = cell.variant
    return {"key": cell.key, "dataset": cell.dataset, "n_samples": cell.data.n_samples,
            "n_features": cell.data.n_binary, "solver": v.solver, "variant": v.name,
            "options": json.dumps(dict(v.options), sort_keys=True, default=repr), "depth": cell.depth,
            "warm_start": cell.warm_start, "seed": cell.seed, "threads": cell.threads, "time_limit": cell.time_limit}


def _run(cell: Cell) -> dict:
    return solve_cell(cell)[0]


def solve_cell(cell: Cell, dp_required: bool = False):
    """Run one cell: ``(row, report, mip)`` with the row of :data:`COLUMNS`, the
    :class:`~odtmip.solving.check.CheckReport` (None when the variant's options leave no DP equivalent, e.g. a
    sensitivity target; with ``dp_required`` that is the :class:`~odtmip.core.exceptions.OptionError` of
    :func:`~odtmip.solving.check.check`, raised before anything is solved) and the MIP's
    :class:`~odtmip.core.results.SolveResult`. ``odtmip check`` is this, for one cell."""
    from odtmip.models import HighsOptions
    from odtmip.solving.check import MODELS, check
    from odtmip.solving.solvers import MIN_SECONDS, solve

    v, data = cell.variant, cell.data
    time_limit = cell.time_limit
    if time_limit is not None and cell.started is not None:
        time_limit = max(time_limit - (time.perf_counter() - cell.started), MIN_SECONDS)
    given = dict(v.options, time_limit=time_limit, warm_start=cell.warm_start, lp_bound=cell.lp_bound,
                 highs=HighsOptions(threads=cell.threads, seed=cell.seed, log=cell.log))
    report = None
    if v.solver in MODELS:
        # options may leave no DP equivalent (e.g. a sensitivity target): then the grid runs the MIP alone
        with contextlib.nullcontext() if dp_required else contextlib.suppress(OptionError):
            report = check(data, v.solver, cell.depth, **given)
    mip = report.mip if report is not None else solve(data, v.solver, max_depth=cell.depth, **given)
    row = {**_identity(cell), **_mip_columns(mip, data)}
    return (row if report is None else {**row, **_dp_columns(report, data, row)}), report, mip


def _number(x) -> float:
    return math.nan if x is None else float(x)


def _mip_columns(mip: SolveResult, data: Dataset) -> dict:
    s = mip.stats
    trajectory = [list(point) for point in s.get("trajectory", [])]
    # the trajectory's clock starts after the build, the warm start and the hand-off; the LP bound is not counted
    offset = sum(s.get(k, 0.0) for k in ("build_seconds", "warm_start_seconds", "handoff_seconds"))
    objective = mip.objective
    wrong = None if mip.tree is None else data.misclassifications(mip.tree)
    first = next((t for t, p, _ in trajectory if p is not None), None)
    best = None
    if objective is not None and trajectory:  # the first point as good as the final tree (else: the end)
        tol = 1e-6 * max(1.0, abs(objective))
        best = next((t for t, p, _ in trajectory if p is not None and p <= objective + tol), trajectory[-1][0])
    root = _root_bound(trajectory, s, mip)
    return {
        "status": mip.status.value, "stop_reason": mip.stop_reason, "objective": _number(objective),
        "misclassifications": _number(wrong),
        "accuracy": math.nan if wrong is None else 1.0 - wrong / float(data.weights.sum()),
        "bound": _number(mip.bound), "gap": mip.gap,
        "seconds": mip.seconds, "build_seconds": _number(s.get("build_seconds")),
        "handoff_seconds": _number(s.get("handoff_seconds")), "solve_seconds": _number(s.get("solve_seconds")),
        "lp_seconds": _number(s.get("lp_seconds")), "compile_seconds": s.get("compile_seconds", 0.0),
        "first_incumbent_seconds": math.nan if first is None else offset + first,
        "best_seconds": math.nan if best is None else offset + best,
        "proof_seconds": math.nan if not mip.optimal else mip.seconds if s.get("proved_by") == "lp"
        else offset + s.get("solve_seconds", mip.seconds),
        "n_variables": s.get("n_variables"), "n_binaries": s.get("n_binary"),
        "n_constraints": s.get("n_constraints"), "n_nonzeros": s.get("n_nonzeros"),
        "lp_bound": _number(s.get("lp_relaxation")), "lp_note": s.get("lp_note"), "root_bound": _number(root),
        "root_gap": math.nan if root is None or objective is None
        else max(0.0, objective - root) / max(abs(objective), 1e-9),
        "nodes": s.get("nodes"), "lp_iterations": s.get("lp_iterations"),
        "warm_start_accepted": s.get("warm_start_accepted"), "trajectory": trajectory,
        "dp_bounds": s.get("dp_bounds", "none"), "dp_bounds_seconds": _number(s.get("dp_bounds_seconds")),
        "dp_rows": s.get("dp_rows", 0), "proved_by": s.get("proved_by"),
    }


def _root_bound(trajectory: list, stats: Mapping, mip: SolveResult) -> float | None:
    """The dual bound at the end of the root node: the trajectory's at ``root_seconds`` (recorded by the HiGHS
    runner when the search branched), else the final bound of a run that got through the root (or needed no
    HiGHS run); None when the run stopped inside the root node."""
    if "root_seconds" in stats:
        return next((d for t, _, d in reversed(trajectory) if t <= stats["root_seconds"]), None)
    through = mip.optimal or stats.get("nodes", 0) > 0
    return mip.bound if through and math.isfinite(mip.bound) else None


def _dp_columns(report, data: Dataset, row: dict) -> dict:
    """The DP reference, the verdict, and the row's bounds in the DP's units."""
    problem, dp = report.problem, report.dp
    return {
        "dp_optimum": _number(problem.in_model_units(dp.objective)),
        "dp_misclassifications": math.nan if dp.tree is None else data.misclassifications(dp.tree),
        "dp_status": dp.status.value,
        "dp_seconds": dp.seconds + (0.0 if report.dp_deep is dp else report.dp_deep.seconds),
        "compile_seconds": report.compile_seconds,
        "verdict": report.verdict, "agree": None if report.verdict == "unproven" else report.agree,
        **{f"{name}_errors": row[name] * problem.scale - problem.offset
           for name in ("bound", "lp_bound", "root_bound")},
    }


# ============================================================================================ running the grid
def compare(datasets, solvers=None, depths: Sequence[int] = (2,), time_limit: float | None = 60.0, *,
            warm_start: str | Sequence[str] = "dp", seeds: Sequence[int | None] = (None,), lp_bound: bool = True,
            dp_bounds: Sequence[str] = ("none",), store: str | os.PathLike | None = None, jobs: int = 1,
            backend: str = "local", scheduler=None, progress: bool = True) -> pd.DataFrame:
    """Run a comparison grid and return one row per run (:data:`COLUMNS`), in grid order.

    Parameters
    ----------
    datasets : str, Dataset, sequence or mapping
        Names for :func:`odtmip.core.datasets.load`, :class:`Dataset` objects (labelled ``data0``, ...), or a mapping
        from label to either.
    solvers : sequence of variant specs, optional
        Formulations and option variants (see :func:`variant`, :func:`ablation`); default every registered
        formulation with its default options.
    depths : sequence of int
        Tree depths (``max_depth``).
    time_limit : float or None
        Seconds per run: the MIP call, and each DP solve of the reference.
    warm_start : str or sequence of str
        ``"dp"``, ``"cart"`` (where a formulation has one) or ``"none"``; several make one run each.
    seeds : sequence of int or None
        HiGHS ``random_seed`` per run; several make one run each.
    lp_bound : bool
        Solve the LP relaxation of each model (the ``lp_bound`` columns).
    dp_bounds : sequence of "none", "root", "paths"
        The DP's bound rows (:mod:`odtmip.models.view`), one run each per variant (see :func:`with_dp_bounds`).
    store : path, optional
        JSON Lines file of finished runs: written as each run finishes, read first so that finished runs are
        skipped (a run that failed is tried again).
    jobs : int
        Concurrent runs (-1: one per core): joblib processes; with ``backend="dask"`` and no ``scheduler`` the
        workers of the local cluster started (an existing cluster runs as many as it has worker threads); with
        ``backend="ray"`` the runs in flight, each reserving its HiGHS threads (the cluster's CPUs // jobs).
    backend : {"local", "dask", "ray"}
        joblib processes, a Dask cluster (``dask[distributed]``) or Ray.
    scheduler : str, distributed.Client or distributed.LocalCluster, optional
        Dask: the scheduler's address or a client/cluster (default: a local cluster of ``jobs`` worker processes;
        keep to worker processes, as HiGHS's thread scheduler is kept per thread and the runner tracks it per
        process). Ray: the address for ``ray.init`` (default: a local Ray, unless one is running).
    progress : bool
        A progress bar with ETA on stderr (tqdm, if installed; else a log line per run at INFO level).

    Returns
    -------
    pandas.DataFrame
        One row per cell; a failed run has ``status="error"`` and the reason in ``error``.
    """
    if backend not in BACKENDS:
        raise OptionError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if not (isinstance(jobs, int) and (jobs >= 1 or jobs == -1)):
        raise OptionError(f"jobs must be a positive integer or -1 (one per core), got {jobs!r}")
    cells = grid(datasets, solvers, depths, time_limit, warm_start, seeds, lp_bound, dp_bounds)
    done = _finished(read_store(store)) if store is not None and Path(store).exists() else {}
    todo = [c for c in cells if c.key not in done]
    logger.info("compare: %d runs, %d stored, %d to go", len(cells), len(cells) - len(todo), len(todo))
    if todo:
        _run_all(todo, done, store, jobs, backend, scheduler, progress)
    return frame([done[c.key] for c in cells if c.key in done])


def _run_all(todo: list[Cell], done: dict, store, jobs, backend, scheduler, progress) -> None:
    """Run ``todo`` on the backend, storing each row as it arrives; Ctrl-C keeps the rows stored so far."""
    runner = {"local": _local, "dask": _dask, "ray": _ray}[backend]
    bar = _progress(len(todo), progress)
    sink = open(store, "a", encoding="utf-8") if store is not None else contextlib.nullcontext()
    finished = 0
    try:
        with sink, contextlib.closing(runner(todo, jobs, scheduler)) as rows:
            for row in rows:
                done[row["key"]] = row
                if store is not None:
                    sink.write(json.dumps(row, default=_jsonable) + "\n")
                    sink.flush()
                finished += 1
                bar(row)
    except KeyboardInterrupt:
        logger.warning("compare interrupted: %d of %d runs finished%s", finished, len(todo),
                       f" and stored in {store}; run again to resume" if store is not None else "")
        raise
    finally:
        bar(None)


def _progress(total: int, enabled: bool):
    """A callback per finished row (None: close): a tqdm bar if tqdm is installed, else a log line."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        tqdm = None
    if tqdm is not None:
        bar = tqdm(total=total, desc="odtmip compare", unit="run", disable=not enabled, file=sys.stderr)

        def update(row):
            if row is None:
                bar.close()
            else:
                bar.set_postfix_str(f"{row['dataset']} d{row['depth']} {row['variant']}: {row['status']}")
                bar.update()
        return update
    count = [0]

    def log(row):
        if row is not None and enabled:
            count[0] += 1
            logger.info("compare %d/%d: %s d%s %s: %s", count[0], total, row["dataset"], row["depth"],
                        row["variant"], row["status"])
    return log


def _optional(module: str, extra: str):
    """Import an optional dependency, or an OptionError naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise OptionError(f"{module} is not installed: pip install 'odtmip[{extra}]'") from exc


def _threaded(cells: list[Cell], threads: int) -> list[Cell]:
    """The cells with HiGHS's threads set: the variant's own, else ``threads``."""
    return [replace(c, threads=c.variant.threads or threads) for c in cells]


def _local(cells: list[Cell], jobs: int, scheduler) -> Iterator[dict]:
    from joblib import Parallel, delayed

    cores = usable_cores()
    jobs = cores if jobs == -1 else min(jobs, len(cells))
    rows = Parallel(n_jobs=jobs, return_as="generator_unordered")(
        delayed(run_cell)(c) for c in _threaded(cells, max(1, cores // jobs)))
    with contextlib.closing(rows):
        yield from rows


def _host() -> tuple[str, int]:
    return socket.gethostname(), usable_cores()


def _dask(cells: list[Cell], jobs: int, scheduler) -> Iterator[dict]:
    distributed = _optional("distributed", "dask")
    Client = distributed.Client

    own = not isinstance(scheduler, Client)
    if scheduler is None:
        client = Client(n_workers=usable_cores() if jobs == -1 else jobs, threads_per_worker=1, processes=True,
                        dashboard_address=None)
    else:
        client = Client(scheduler) if own else scheduler
    futures = []
    try:
        # HiGHS threads: the cores of each host shared by the worker threads on it
        hosts, slots, busy = client.run(_host), client.nthreads(), defaultdict(int)
        for worker, (host, _) in hosts.items():
            busy[host] += slots[worker]
        cores = {host: n for host, n in hosts.values()}
        threads = max(1, min(cores[h] // busy[h] for h in busy))
        futures = [client.submit(run_cell, c, pure=False) for c in _threaded(cells, threads)]
        for future in distributed.as_completed(futures):
            yield future.result()
    finally:
        client.cancel([f for f in futures if not f.done()])
        if own:
            client.close()


def _ray(cells: list[Cell], jobs: int, scheduler) -> Iterator[dict]:
    ray = _optional("ray", "ray")
    own = not ray.is_initialized()
    if own:
        ray.init(address=scheduler, include_dashboard=False, log_to_driver=False, configure_logging=False)
    pending: list = []
    try:
        cpus = int(ray.cluster_resources().get("CPU", 1))
        threads = 1 if jobs == -1 else max(1, cpus // jobs)
        task = ray.remote(num_cpus=threads, max_retries=0)(run_cell)  # each run reserves its HiGHS threads
        queue = iter(_threaded(cells, threads))
        pending = [task.remote(c) for c in itertools.islice(queue, cpus if jobs == -1 else jobs)]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            pending += [task.remote(c) for c in itertools.islice(queue, 1)]
            yield ray.get(ready[0])
    finally:
        for ref in pending:
            ray.cancel(ref)
        if own:
            ray.shutdown()


# ============================================================================================ results
def _jsonable(x):
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, tuple):
        return list(x)
    raise TypeError(f"not JSON serialisable: {x!r}")


def read_store(path: str | os.PathLike) -> list[dict]:
    """The rows of a store, in the order written (a line cut short by a killed run is skipped)."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:
                    logger.warning("%s:%d: not a complete JSON line; skipped", path, number)
    return rows


def _finished(rows: Iterable[dict]) -> dict[str, dict]:
    """The last row of each key, unless that run failed."""
    last = {row["key"]: row for row in rows}
    return {key: row for key, row in last.items() if row.get("status") != "error"}


def frame(rows: Sequence[dict]) -> pd.DataFrame:
    """Rows as a DataFrame with :data:`COLUMNS` (missing values NaN/None)."""
    return pd.DataFrame([{c: row.get(c) for c in COLUMNS} for row in rows], columns=list(COLUMNS))


def save(df: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write ``df`` as ``.csv`` or ``.parquet`` (the trajectory as JSON text); returns the path."""
    path = Path(path)
    flags = {c: df[c].astype("boolean") for c in ("agree", "warm_start_accepted")}
    out = df.assign(trajectory=[json.dumps(t, default=_jsonable) for t in df["trajectory"]], **flags)
    if path.suffix == ".csv":
        out.to_csv(path, index=False)
    elif path.suffix == ".parquet":
        out.to_parquet(path, index=False)
    else:
        raise OptionError(f"cannot write {path.name}: the output is a .csv or .parquet file")
    return path


def read(path: str | os.PathLike) -> pd.DataFrame:
    """A comparison written by :func:`save` (``.csv``, ``.parquet``) or a store (``.jsonl``: its finished runs)."""
    path = Path(path)
    if path.suffix == ".jsonl":
        return frame(list(_finished(read_store(path)).values()))
    df = pd.read_csv(path) if path.suffix == ".csv" else pd.read_parquet(path)
    df["trajectory"] = [json.loads(t) for t in df["trajectory"]]
    return df


# ============================================================================================ tables
def _higher_is_better(column: str) -> bool:
    return column == "accuracy" or "bound" in column


def _groups(df: pd.DataFrame) -> list[str]:
    """The columns that name a column group: the variant, and the warm start when it varies."""
    return ["variant"] + (["warm_start"] if df["warm_start"].nunique() > 1 else [])


def _pivot(df: pd.DataFrame, values: Sequence[str]):
    """(row labels, group labels, {value: matrix}, {value: best mask}): seeds averaged (NaN if any run is NaN)."""
    keys = _groups(df)
    label = df[keys].astype(str).agg(" / ".join, axis=1)
    df = df.assign(_group=label)
    groups = list(dict.fromkeys(label))
    rows = list(dict.fromkeys(zip(df["dataset"], df["depth"], strict=True)))
    tables, best = {}, {}
    for value in values:
        agg = df.groupby(["dataset", "depth", "_group"], sort=False)[value].agg(lambda s: s.mean(skipna=False))
        m = np.array([[agg.get((d, k, g), math.nan) for g in groups] for d, k in rows], dtype=float)
        tables[value] = m
        with warnings.catch_warnings():  # a row without any value has no best
            warnings.simplefilter("ignore", RuntimeWarning)
            extreme = (np.nanmax if _higher_is_better(value) else np.nanmin)(m, axis=1, keepdims=True)
        best[value] = np.isclose(m, extreme, rtol=1e-9, atol=1e-12) & ~np.isnan(m)
    return rows, groups, tables, best


def _fmt(x: float) -> str:
    if math.isnan(x):
        return "-"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if abs(x - round(x)) <= 1e-9 * max(1.0, abs(x)):  # whole numbers, and round-off such as -1e-14
        return str(int(round(x)))
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.2f}" if abs(x) >= 1 else f"{x:.3g}"


def _cells(values, tables, best, i: int, j: int, bold) -> list[str]:
    return [bold(_fmt(tables[v][i, j])) if best[v][i, j] else _fmt(tables[v][i, j]) for v in values]


def to_markdown(df: pd.DataFrame, values: Sequence[str] = ("misclassifications", "proof_seconds")) -> str:
    """A Markdown table: one row per dataset and depth, one column per variant, its cell the ``values`` joined by
    `` / `` (as in [GKLMS] Tables 2-3); per value the best variant of a row in bold (lowest; highest for bounds and
    accuracy). ``-``: no value (e.g. no proof)."""
    rows, groups, tables, best = _pivot(df, values)
    lines = [f"| dataset | depth | {' | '.join(groups)} |", "|---|---:|" + "---:|" * len(groups)]
    for i, (dataset, depth) in enumerate(rows):
        cells = [" / ".join(_cells(values, tables, best, i, j, lambda s: f"**{s}**")) for j in range(len(groups))]
        lines.append(f"| {dataset} | {depth} | {' | '.join(cells)} |")
    return "\n".join([f"Entries: {' / '.join(values)}.", "", *lines]) + "\n"


def _latex_text(s) -> str:
    return str(s).replace("\\", r"\textbackslash{}").replace("_", r"\_").replace("&", r"\&").replace("%", r"\%")


def to_latex(df: pd.DataFrame, values: Sequence[str] = ("misclassifications", "proof_seconds")) -> str:
    """A LaTeX ``tabular`` (booktabs): one row per dataset and depth, a column group per variant with one column
    per value; the best of each value in a row in bold."""
    rows, groups, tables, best = _pivot(df, values)
    k = len(values)
    head = " & ".join(rf"\multicolumn{{{k}}}{{c}}{{{_latex_text(g)}}}" for g in groups)
    rules = " ".join(rf"\cmidrule(lr){{{3 + j * k}-{2 + (j + 1) * k}}}" for j in range(len(groups)))
    sub = " & ".join(_latex_text(v) for v in values)
    lines = [rf"\begin{{tabular}}{{lr{'r' * k * len(groups)}}}", r"\toprule",
             rf" & & {head} \\", rules, rf"dataset & depth & {' & '.join([sub] * len(groups))} \\", r"\midrule"]
    for i, (dataset, depth) in enumerate(rows):
        cells = [c for j in range(len(groups))
                 for c in _cells(values, tables, best, i, j, lambda s: rf"\textbf{{{s}}}")]
        lines.append(rf"{_latex_text(dataset)} & {depth} & {' & '.join(cells)} \\")
    return "\n".join([*lines, r"\bottomrule", r"\end{tabular}"]) + "\n"


# ============================================================================================ plots
def _figure(n_panels: int = 1, width: float = 5.0):
    """A matplotlib Figure with ``n_panels`` axes side by side, each ``width`` inches wide (no pyplot: renders
    with Agg, no display)."""
    fig = _optional("matplotlib.figure", "plot").Figure(figsize=(width * n_panels, 4), layout="constrained")
    return fig, [fig.add_subplot(1, n_panels, i + 1) for i in range(n_panels)]


def _labelled(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(_group=df[_groups(df)].astype(str).agg(" / ".join, axis=1))


def plot_profile(df: pd.DataFrame, column: str = "proof_seconds", path: str | os.PathLike | None = None, ax=None):
    """The Dolan-Moré performance profile of ``column`` (lower is better; NaN: not solved): for each variant the
    share of problems (dataset, depth, seed) it solves within a factor tau of the best variant. Drawn on ``ax``
    when given (e.g. a pyplot figure's), else on a new figure. Returns the figure; saves it to ``path`` when
    given."""
    df = _labelled(df).assign(seed=df["seed"].astype(object).where(df["seed"].notna(), "none").astype(str))
    times = df.pivot_table(index=["dataset", "depth", "seed"], columns="_group", values=column, aggfunc="mean",
                           dropna=False)
    t = times.to_numpy(dtype=float)
    best = np.min(np.where(np.isnan(t), np.inf, t), axis=1, keepdims=True)  # inf: no variant solved it
    with np.errstate(all="ignore"):
        ratios = np.where(np.isnan(t), np.inf, t / best)
    fig, (ax,) = _figure(width=9.0) if ax is None else (ax.figure, (ax,))  # room for the legend beside the axes
    finite = ratios[np.isfinite(ratios)]
    top = max(2.0, float(finite.max()) * 1.1) if finite.size else 2.0
    for j, name in enumerate(times.columns):
        taus = np.sort(ratios[:, j])
        taus = np.concatenate([[1.0], taus[np.isfinite(taus)], [top]])
        share = [np.mean(ratios[:, j] <= tau) for tau in taus]
        ax.step(taus, share, where="post", label=name)
    ax.set(xlim=(1, top), ylim=(0, 1.02), xlabel=f"tau (ratio of {column} to the best)",
           ylabel="share of problems", title="performance profile")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(_optional("matplotlib.ticker", "plot").ScalarFormatter())
    fig.legend(fontsize="small", loc="outside right upper")  # beside the steps, which fill the axes
    return _saved(fig, path)


def _saved(fig, path):
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def plot_gaps(df: pd.DataFrame, path: str | os.PathLike | None = None):
    """The relative gap ``(primal - dual) / |primal|`` over the HiGHS run, one panel per dataset and depth, one line
    per run (1 before the first incumbent or bound)."""
    df = _labelled(df)
    problems = list(dict.fromkeys(zip(df["dataset"], df["depth"], strict=True)))
    fig, axes = _figure(len(problems))
    for ax, (dataset, depth) in zip(axes, problems, strict=True):
        for _, run in df[(df["dataset"] == dataset) & (df["depth"] == depth)].iterrows():
            points = run["trajectory"] or []
            if not points:
                continue
            gaps = [1.0 if p is None or d is None else min(1.0, max(0.0, p - d) / max(abs(p), 1e-9))
                    for _, p, d in points]
            ax.step([t for t, _, _ in points], gaps, where="post", label=run["_group"])
        ax.set(xlabel="seconds (HiGHS run)", ylabel="relative gap", ylim=(-0.02, 1.02),
               title=f"{dataset}, depth {depth}")
        ax.legend(fontsize="small")
    return _saved(fig, path)


def plot_bounds(df: pd.DataFrame, path: str | os.PathLike | None = None):
    """The LP bound (bars) and root bound (triangles) of each variant in the DP's units against the optimum
    (the DP's misclassifications, a black line), per dataset and depth."""
    df = _labelled(df)
    problems = list(dict.fromkeys(zip(df["dataset"], df["depth"], strict=True)))
    groups = list(dict.fromkeys(df["_group"]))
    width = 0.8 / max(1, len(groups))
    fig, (ax,) = _figure()
    for j, g in enumerate(groups):
        runs = df[df["_group"] == g].groupby(["dataset", "depth"])[["lp_bound_errors", "root_bound_errors"]].mean()
        x = np.arange(len(problems)) + (j - (len(groups) - 1) / 2) * width
        lp = [runs["lp_bound_errors"].get(p, math.nan) for p in problems]
        root = [runs["root_bound_errors"].get(p, math.nan) for p in problems]
        bars = ax.bar(x, lp, width, label=f"{g}: LP")
        ax.scatter(x, root, marker="v", color=bars.patches[0].get_facecolor() if bars.patches else None, zorder=3)
    optimum = df.groupby(["dataset", "depth"])["dp_misclassifications"].first()
    for i, p in enumerate(problems):
        ax.hlines(optimum.get(p, math.nan), i - 0.45, i + 0.45, color="black")
    ax.set_xticks(np.arange(len(problems)), [f"{d}\ndepth {k}" for d, k in problems])
    ax.set(ylabel="bound (DP units: misclassifications)", title="LP (bars) and root (v) bounds vs optimum (line)")
    ax.legend(fontsize="small")
    return _saved(fig, path)


def plot_all(df: pd.DataFrame, directory: str | os.PathLike) -> list[Path]:
    """:func:`plot_profile`, :func:`plot_gaps` and :func:`plot_bounds` as PNG files in ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / name for name in ("profile.png", "gaps.png", "bounds.png")]
    for plot, path in zip((plot_profile, plot_gaps, plot_bounds), paths, strict=True):
        plot(df, path=path)
    return paths
