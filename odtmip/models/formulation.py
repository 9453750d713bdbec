"""What a formulation module supplies, as one record: the :class:`Formulation` protocol.

A formulation module holds mathematics only: its options, how to build the Pyomo model, how to read a tree out
of a solution and write a tree in as a start, its objective in odtmip's loss units, and which DP problem has the
same optimum (:class:`DPProblem`, a description: no module under ``odtmip.models`` imports the DP, nor the floor
above that solves it). It ends with one :class:`Formulation` record naming those functions, and
``odtmip.models.FORMULATIONS`` lists the records. Everything around them (options from the user, the time budget,
warm starts, the LP bound, the HiGHS run, verification, statistics) is done once, by
:func:`odtmip.solving.pipeline.solve_mip`, which ``odtmip.solve(data, "<name>", ...)`` calls.

Adding a formulation
--------------------
1. Write ``odtmip/models/<name>.py`` after ``gunluk.py``: module docstring with references and an equation ->
   component table; an options dataclass; ``build_model`` and ``model_size`` (its size, counted without building
   it); ``decode_tree``; ``warm_start_values``; ``loss``; ``dp_equivalent`` (or none); ``dp_bound_problem`` and
   ``tree_view`` for the DP's bound rows (or none, :mod:`odtmip.models.view`); and at the end its
   ``FORMULATION = Formulation(...)``.
2. Declare its options in :mod:`odtmip.core.options` (a tuple of :class:`~odtmip.core.options.Option` and an entry of
   ``OPTIONS``), name it in ``SOLVERS`` (:mod:`odtmip.solving.solvers`: a summary, whether ``odtmip check``
   compares it with the DP) and add one line to ``FORMULATIONS`` in ``odtmip/models/__init__.py``:
   these tables import no engine, so that the command line starts at once. ``odtmip.solve``, ``odtmip check``, the
   command line's ``--solver`` and ``--model`` choices and the option checks all follow from them
   (``tests/models/test_pipeline.py`` holds the three together).
3. Tests: the model against brute force on tiny data and against the DP (``tests/crosscheck``); the
   import-contract test (``tests/unit/test_architecture.py``) covers the new module by itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from odtmip.core.data import Dataset
from odtmip.core.exceptions import OptionError
from odtmip.core.tree import Tree


def merge_options(cls, options, values: dict, model: str):
    """``options`` (default ``cls()``) with ``values`` replacing its fields; unknown names are an OptionError."""
    options = options or cls()
    unknown = sorted(set(values) - {f.name for f in fields(cls)})
    if unknown:
        raise OptionError(f"unknown {model} option(s): {', '.join(unknown)}")
    return replace(options, **values) if values else options


@dataclass(frozen=True)
class DPProblem:
    """A DP problem that a MIP model is started from or checked against, described (not solved).

    ``data`` holds the model's candidate splits as binary columns (and its weights), solved by the solver named
    ``solver``; with ``"contree"`` the splits are every midpoint of ``data``'s numeric columns and its other binary
    columns (the same problem, without building a column per midpoint); every tree of depth <=
    ``shallow`` fits the model and every tree of the model has depth <= ``deep``; ``exact`` is False when the DP
    sees only part of the model's splits (then only model <= DP(shallow) is implied). The model's objective of a
    tree is ``(DP objective + offset) / scale``. ``two_class`` holds the DP's two-class options (a metric, a
    sensitivity/specificity target, the positive label) when the model has such an objective.
    """

    data: Dataset
    shallow: int
    deep: int
    exact: bool = True
    penalty: float = 0.0
    min_leaf: int = 1
    offset: float = 0.0
    scale: float = 1.0
    two_class: Mapping = field(default_factory=dict)
    solver: str = "dp"

    @property
    def depths(self) -> list[int]:
        """The depths a warm start solves it at: the deep one first (its tree, if it fits, is the model's optimum)."""
        return sorted({self.deep, self.shallow}, reverse=True)

    def dp_options(self, depth: int) -> dict:
        """The DP's options for this problem at ``depth``."""
        return {"max_depth": depth, "penalty": self.penalty, "min_leaf": self.min_leaf, **self.two_class}

    def in_model_units(self, dp_objective: float | None) -> float | None:
        return None if dp_objective is None else (dp_objective + self.offset) / self.scale

    def in_dp_units(self, loss: float) -> float:
        """The inverse of :meth:`in_model_units`: a model's loss in the DP's objective units."""
        return loss * self.scale - self.offset



# Peak resident memory of one solve per nonzero, row and column of the model as handed to HiGHS: the Pyomo model
# with its LinearRows arrays, the compiled arrays, HiGHS's copy, its presolve, the LP's factor and workspace,
# heuristics' sub-MIPs. MEASURED (highspy 1.16.0, Pyomo 6.10.1, 2-core Linux box): the resident size of a fresh
# process above its size after the imports and the data, sampled every 0.1 s (VmHWM through solve_mip), over the
# build, the hand-off and a HiGHS run that got past presolve into the LP (150 s limit), 0.37-1.9 M nonzeros:
# Günlük on the categorical data of benchmarks/mip_build.py (N = 2000, depth 4-5) and monk1 (balanced-7, -8),
# BinOCT on monk1 (depth 5-6) and 4 integer columns of 50 values (N = 1000, depth 4-5), OCT on 4 integer columns of
# 20 values (N = 2000, depth 3-4) and monk1 (depth 4-5), OCT-H on the former (depth 3-4); without a warm start, and
# through solve_mip with the DP start (Günlük) and with OCT's IPM. The peaks ran from 310 (BinOCT) to 1 870 (OCT,
# many short rows) bytes per nonzero. The least constants above every peak are 630 per nonzero and 6 100 per row
# or column (the runs cannot tell rows from columns apart); rounded up below, every measured peak is at most 0.89
# of the estimate (median 0.51). Building and handing off take 65-80 bytes per nonzero of it; the rest is HiGHS.
# A long tree search grows beyond the estimate: BinOCT on monk1 at depth 4 (0.22 M nonzeros) went from 190 MB
# to 640 MB in 10 minutes.
BYTES_PER_NONZERO = 700
BYTES_PER_ROW = 7000
BYTES_PER_COLUMN = 7000


def estimated_memory_gib(size: dict) -> float:
    """GiB a solve of a model of ``size`` (:attr:`Formulation.size`) takes at its peak, by the constants above."""
    return (size["n_nonzeros"] * BYTES_PER_NONZERO + size["n_constraints"] * BYTES_PER_ROW
            + size["n_variables"] * BYTES_PER_COLUMN) / 2**30


def _no_shortcut(data: Dataset, options) -> None:
    return None


def _no_loss(options) -> float:
    return 0.0


def _same(options):
    return options


@dataclass(frozen=True)
class Formulation:
    """One MIP formulation as the pipeline sees it: its name and the functions of its module.

    Attributes
    ----------
    name : str
        The solver's name (``odtmip.solve(data, name)``, ``odtmip fit --solver name``).
    options : tuple of odtmip.core.options.Option
        The options a user may give, declared once (see :mod:`odtmip.core.options`).
    make_options : callable
        ``(max_depth, options, values) -> options object``: the model's options from the user's (``options`` is a
        given options object or None; ``values`` override its fields). Raises OptionError.
    build : callable
        ``(data, max_depth, options) -> pyo.ConcreteModel`` with one objective.
    decode : callable
        ``(m, data) -> Tree``: the tree of the solution loaded in the model's variables.
    embed : callable
        ``(m, data, tree) -> list of (VarData, value)`` or None when the tree does not fit the model: a warm start,
        possibly partial (the runner completes it).
    loss : callable
        ``(data, tree, options) -> float``: odtmip's objective of a tree, recomputed by routing the data.
    to_loss : callable
        ``(m) -> (value -> loss)``: the model's objective value in loss units; monotone, so that HiGHS's dual
        bound maps to a lower bound on the loss.
    loss_floor : callable
        ``(options) -> float``: the least loss any tree can have, a lower bound known without solving; every
        reported bound is at least this. Default 0: a loss of (weighted) errors, or of errors plus penalties.
    dp_problem : callable or None
        ``(data, max_depth, options) -> DPProblem`` with the model's optimum (``odtmip check``); raises OptionError
        when the options leave no DP equivalent. None: the formulation has none.
    dp_starts : callable or None
        ``(data, max_depth, options) -> list of DPProblem``: the DP problems whose trees start the model, best
        first; None: ``[dp_problem(...)]``.
    accepts : callable or None
        ``(data, tree, options) -> bool``: whether a DP tree is a feasible start (e.g. meets a sensitivity target);
        None: every tree that fits the model.
    cart : callable or None
        ``(data, max_depth, options) -> Tree``: the paper's CART start (``warm_start="cart"``), if it has one.
    stats : callable
        ``(m, options) -> dict``: statistics of the built model for the result (sizes of its sets, ...).
    size : callable
        ``(data, max_depth, options) -> dict`` with ``n_constraints``, ``n_variables`` and ``n_nonzeros``: the
        model's size as handed to HiGHS (what :func:`~odtmip.models.model_statistics` says of the built model),
        counted from the formulation's data preparation *before* building it; the pipeline's memory guard reads
        it (:func:`estimated_memory_gib`).
    highs : callable or None
        ``(data, highs_options) -> highs_options``: defaults the formulation needs (e.g. IPM for large N).
    shortcut : callable
        ``(data, options) -> (Tree, objective, note) or None``: an answer without a model, when the model is
        undefined on the data (OCT's L_hat = 0).
    dp_bound_problem : callable or None
        ``(data, max_depth, options) -> DPProblem`` over binary columns whose trees are the model's trees with the same
        loss (``exact``): the DP's values below each of its splits bound the model's loss (``dp_bounds``,
        :mod:`odtmip.models.view`); raises OptionError when the options leave none. None: the formulation takes no
        DP bounds (OCT-H: hyperplane splits).
    view : callable or None
        ``(m, data) -> TreeView``: every branch node's choices (the root's and its children's each with its columns
        of ``dp_bound_problem``'s data), the leaves, the rows reaching them and their classes, and the model's loss
        in the DP's units: the vocabulary of the DP's bound rows and of the side constraints
        (:mod:`odtmip.models.constraints`). None: the formulation takes no side constraints.
    constrained : callable
        ``(options) -> options``: the options a model with side constraints is built with (e.g. Günlük keeps every
        routing variable and drops Proposition 3's relaxation, which only the plain model allows); default: the same.
    fixed : dict
        Options this entry always sets (``oct-h`` is OCT with ``hyperplanes=True``).
    reads_numbers : bool
        The model reads numeric columns as numbers, not through the binary encoding, so it cannot route a missing
        value the way the encoding does (:mod:`odtmip.core.tree`): data with missing numbers is refused.
    """

    name: str
    options: tuple
    make_options: Callable[..., Any]
    build: Callable[..., Any]
    decode: Callable[..., Tree]
    embed: Callable[..., list | None]
    loss: Callable[..., float]
    to_loss: Callable[..., Callable[[float], float]]
    dp_problem: Callable[..., DPProblem] | None
    stats: Callable[..., dict]
    size: Callable[..., dict]
    dp_starts: Callable[..., list[DPProblem]] | None = None
    accepts: Callable[..., bool] | None = None
    cart: Callable[..., Tree] | None = None
    highs: Callable[..., Any] | None = None
    loss_floor: Callable[..., float] = _no_loss
    shortcut: Callable[..., Any] = _no_shortcut
    dp_bound_problem: Callable[..., DPProblem] | None = None
    view: Callable[..., Any] | None = None
    constrained: Callable[..., Any] = _same
    fixed: dict = field(default_factory=dict)
    reads_numbers: bool = False

    @property
    def warm_starts(self) -> tuple[str, ...]:
        """The named warm starts this formulation offers."""
        return ("dp", "cart", "none") if self.cart is not None else ("dp", "none")

    def starts(self, data: Dataset, max_depth: int | None, options) -> list[DPProblem]:
        """The DP problems of a ``"dp"`` warm start, best first."""
        if self.dp_starts is not None:
            return self.dp_starts(data, max_depth, options)
        return [] if self.dp_problem is None else [self.dp_problem(data, max_depth, options)]
