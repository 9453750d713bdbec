"""Two-class objectives shared by the MIP formulations: a class weight C, and a floor on specificity or sensitivity
([GKLMS] §4.6 with the corrected (15)), written once over a model's misclassified weight per class.

A formulation hands :func:`add_error_objective` a function ``class_error(k)``: a linear expression that is at least
the weight of the class-k rows its tree misclassifies, and equal to it when minimised (BinOCT's ``sum_l e[l, k]``,
OCT's per-leaf class errors from :func:`add_class_errors`). With the positive class p and the negative class q,
FN = class_error(p) and FP = class_error(q), and the helper adds

* ``specificity_target``: ``FP <= |I-| - ceil(tau |I-|)`` (``TN >= ceil(tau |I-|)``, the corrected (15)); the objective
  is FN (maximise sensitivity, (16));
* ``sensitivity_target``: ``FN <= |I+| - ceil(tau |I+|)``; the objective is FP;
* without a target: the objective FN + C x FP (C of [GKLMS] (8a): a correct negative counts C times).

Unlike [GKLMS], whose (15) counts rows, the targets here count sample weight (the same for unit weights), as the
DP's targets do (:func:`odtmip.dp.pareto.solve_pareto`), so that :func:`dp_view` states the DP problem with the
same optimum: the DP's (fp, fn) front under the same cap, or the DP on data with the negatives weighted by C.

References
----------
.. [GKLMS] O. Günlük, J. Kalagnanam, M. Li, M. Menickelly, K. Scheinberg, "Optimal decision trees for categorical
   data via integer programming", Journal of Global Optimization 81 (2021) 233-260.
"""

from __future__ import annotations

import math

import numpy as np
import pyomo.environ as pyo

from odtmip.core.data import Dataset
from odtmip.core.exceptions import DataError, OptionError
from odtmip.core.metrics import count_target
from odtmip.core.options import CLASS_WEIGHT
from odtmip.core.tree import Tree


def check_options(options) -> None:
    """The rules of :data:`odtmip.core.options.TARGET_OPTIONS` that tie fields together (called by the options
    dataclasses)."""
    if not CLASS_WEIGHT.accepts(options.class_weight):
        raise OptionError(f"class_weight must be {CLASS_WEIGHT}, got {options.class_weight!r}")
    if options.min_specificity is not None and options.min_sensitivity is not None:
        raise OptionError("give min_specificity or min_sensitivity, not both")
    for name in ("min_specificity", "min_sensitivity"):
        tau = getattr(options, name)
        if tau is not None and not 0 <= tau <= 1:
            raise OptionError(f"{name} must lie in [0, 1], got {tau!r}")
    if options.positive not in (0, 1):
        raise OptionError(f"positive must be a class index, 0 or 1, got {options.positive!r}")


def constrained(options) -> bool:
    """A specificity or sensitivity target is set."""
    return options.min_specificity is not None or options.min_sensitivity is not None


def active(options) -> bool:
    """The objective is not plain misclassification: a target or a class weight other than 1."""
    return constrained(options) or options.class_weight != 1.0


def _two_class(y: np.ndarray, n_classes: int) -> None:
    if n_classes != 2:
        raise DataError(f"a class weight or a sensitivity/specificity target needs two classes, the data has "
                        f"{n_classes}")


def caps(y: np.ndarray, weights: np.ndarray, options) -> tuple[float, float]:
    """(largest FP, largest FN) the target allows (inf: no cap), from the class weights."""
    pos = y == options.positive
    if options.min_specificity is not None:
        negatives = float(weights[~pos].sum())
        return negatives - count_target(options.min_specificity, negatives), math.inf
    if options.min_sensitivity is not None:
        positives = float(weights[pos].sum())
        return math.inf, positives - count_target(options.min_sensitivity, positives)
    return math.inf, math.inf


def add_error_objective(m, class_error, y: np.ndarray, weights: np.ndarray, n_classes: int, options):
    """Add the target row (if any) to ``m`` and return the error term of the objective: FN with a specificity
    target, FP with a sensitivity target, else FN + C x FP (see the module docstring)."""
    _two_class(y, n_classes)
    fn, fp = class_error(options.positive), class_error(1 - options.positive)
    fp_cap, fn_cap = caps(y, weights, options)
    if options.min_specificity is not None:
        m.specificity_target = pyo.Constraint(expr=fp <= fp_cap, doc="[GKLMS] (15), corrected: TN >= ceil(tau |I-|)")
        return fn
    if options.min_sensitivity is not None:
        m.sensitivity_target = pyo.Constraint(expr=fn <= fn_cap,
                                              doc="[GKLMS] (15) mirrored, corrected: TP >= ceil(tau |I+|)")
        return fp
    return fn + options.class_weight * fp


def add_class_errors(m, leaves, N_k, c, total: float, n_classes: int):
    """Variables ``e_class[k, t]`` >= the weight of class k misclassified in leaf t, from the model's class weight
    in the leaf ``N_k[k, t]`` and its label variable ``c[k, t]``: e >= N_k - W c, e >= 0 (equal when minimised).
    Returns ``class_error(k)`` for :func:`add_error_objective`."""
    m.e_class = pyo.Var(range(n_classes), leaves, domain=pyo.NonNegativeReals,
                        doc="e_class[k,t]: weight of class k misclassified in leaf t")

    @m.Constraint(range(n_classes), leaves, doc="class-k weight in leaf t is an error unless t predicts k")
    def class_errors(m, k, t):
        return m.e_class[k, t] >= N_k[k, t] - total * c[k, t]

    return lambda k: sum(m.e_class[k, t] for t in leaves)


def tree_errors(data: Dataset, tree: Tree, options) -> float:
    """The error term of a tree, recomputed by routing: FN, FP or FN + C x FP as :func:`add_error_objective`."""
    _two_class(data.y, data.n_classes)
    predicted = tree.predict_index(data.raw) == options.positive
    pos = data.y == options.positive
    fn = float(data.weights[pos & ~predicted].sum())
    fp = float(data.weights[~pos & predicted].sum())
    if options.min_specificity is not None:
        return fn
    if options.min_sensitivity is not None:
        return fp
    return fn + options.class_weight * fp


def meets_target(data: Dataset, tree: Tree, options) -> bool:
    """Whether ``tree`` meets the target exactly as the model's row states it (always, without a target)."""
    if not constrained(options):
        return True
    predicted = tree.predict_index(data.raw) == options.positive
    pos = data.y == options.positive
    fp_cap, fn_cap = caps(data.y, data.weights, options)
    return (float(data.weights[~pos & predicted].sum()) <= fp_cap + 1e-9
            and float(data.weights[pos & ~predicted].sum()) <= fn_cap + 1e-9)


def dp_view(data: Dataset, derived: Dataset, options) -> tuple[Dataset, dict]:
    """The DP problem behind these options on the model's columns ``derived``: (dataset, two-class options of
    :func:`odtmip.solve` for the DP). A target: the front's optimum under the same cap ({"min_specificity": tau,
    "positive": label}); a class weight: the negatives' weights multiplied by C."""
    if constrained(options):
        name = "min_specificity" if options.min_specificity is not None else "min_sensitivity"
        return derived, {name: getattr(options, name), "positive": data.classes_[options.positive]}
    if options.class_weight != 1.0:
        _two_class(data.y, data.n_classes)
        boost = np.where(data.y != options.positive, options.class_weight, 1.0)
        return derived.reweighted(boost * data.weights), {}
    return derived, {}


def bound_view(data: Dataset, derived: Dataset, options) -> tuple[Dataset, dict]:
    """The DP's problem behind the bound rows (``dp_bounds``, :mod:`odtmip.models.view`) on the model's columns
    ``derived``: :func:`dp_view` (a target: the DP's two-class options, whose values come from the (fp, fn) fronts,
    :func:`odtmip.dp.bounds.target_values`; a class weight: in the row weights)."""
    return dp_view(data, derived, options)
