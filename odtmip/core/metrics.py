"""Metrics from (weighted) confusion counts.

All functions take class indices (``0..K-1``) and optional sample weights. The binary metrics (sensitivity,
specificity, precision, F1, MCC, Fowlkes–Mallows) treat class ``positive`` (default 1) as the positive class;
a ratio whose denominator is zero is 0.0 (the convention of scikit-learn's ``zero_division=0``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from odtmip.core.exceptions import DataError
from odtmip.core.tree import _native


def confusion_matrix(y_true, y_pred, n_classes: int | None = None, sample_weight=None) -> np.ndarray:
    """Weighted K x K matrix; entry (t, p) sums the weights of rows with true class t predicted p."""
    y_true = np.asarray(y_true, dtype=np.int64)
    y_pred = np.asarray(y_pred, dtype=np.int64)
    if y_true.shape != y_pred.shape:
        raise DataError(f"y_true has {len(y_true)} entries but y_pred has {len(y_pred)}")
    k = int(max(y_true.max(initial=0), y_pred.max(initial=0)) + 1) if n_classes is None else n_classes
    w = np.ones(len(y_true)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    out = np.zeros((k, k))
    np.add.at(out, (y_true, y_pred), w)
    return out


@dataclass(frozen=True)
class Confusion:
    """Binary confusion counts (weighted): true/false positives and negatives."""

    tp: float
    fp: float
    tn: float
    fn: float

    @classmethod
    def from_labels(cls, y_true, y_pred, sample_weight=None, positive: int = 1) -> Confusion:
        """Counts with class ``positive`` as the positive class and every other class negative."""
        t = np.asarray(y_true) == positive
        p = np.asarray(y_pred) == positive
        w = np.ones(len(t)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        return cls(tp=float(w[t & p].sum()), fp=float(w[~t & p].sum()),
                   tn=float(w[~t & ~p].sum()), fn=float(w[t & ~p].sum()))

    @property
    def n(self) -> float:
        return self.tp + self.fp + self.tn + self.fn

    @property
    def misclassifications(self) -> float:
        return self.fp + self.fn

    @property
    def accuracy(self) -> float:
        return _ratio(self.tp + self.tn, self.n)

    @property
    def sensitivity(self) -> float:
        """True positive rate TP / (TP + FN), also called recall."""
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def specificity(self) -> float:
        """True negative rate TN / (TN + FP)."""
        return _ratio(self.tn, self.tn + self.fp)

    @property
    def precision(self) -> float:
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def balanced_accuracy(self) -> float:
        return (self.sensitivity + self.specificity) / 2

    @property
    def f1(self) -> float:
        return _ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn)

    @property
    def mcc(self) -> float:
        """Matthews correlation coefficient."""
        # max(0, .): counts derived from real weights (tn = N - fp) can be -1e-17 by round-off
        den = math.sqrt(max(0.0, (self.tp + self.fp) * (self.tp + self.fn) * (self.tn + self.fp) * (self.tn + self.fn)))
        return _ratio(self.tp * self.tn - self.fp * self.fn, den)

    @property
    def fowlkes_mallows(self) -> float:
        """Geometric mean of precision and sensitivity."""
        return math.sqrt(max(0.0, self.precision * self.sensitivity))


def misclassifications(y_true, y_pred, sample_weight=None) -> float:
    """Weighted number of wrong predictions."""
    wrong = np.asarray(y_true) != np.asarray(y_pred)
    return float(wrong.sum() if sample_weight is None else np.asarray(sample_weight, dtype=float)[wrong].sum())


def accuracy(y_true, y_pred, sample_weight=None) -> float:
    """Weighted fraction of correct predictions (any number of classes)."""
    total = len(y_true) if sample_weight is None else float(np.sum(sample_weight))
    return 1.0 - _ratio(misclassifications(y_true, y_pred, sample_weight), total)


def balanced_accuracy(y_true, y_pred, sample_weight=None) -> float:
    """Mean per-class recall over the classes present in ``y_true`` (any number of classes)."""
    cm = confusion_matrix(y_true, y_pred, sample_weight=sample_weight)
    support = cm.sum(axis=1)
    present = support > 0
    return float(np.mean(np.diag(cm)[present] / support[present]))


def _binary(name: str):
    def metric(y_true, y_pred, sample_weight=None, positive: int = 1) -> float:
        return getattr(Confusion.from_labels(y_true, y_pred, sample_weight, positive), name)

    metric.__name__ = name
    metric.__doc__ = f"{name.replace('_', ' ').capitalize()} with class ``positive`` as positive (see Confusion)."
    return metric


sensitivity = _binary("sensitivity")
specificity = _binary("specificity")
precision = _binary("precision")
f1 = _binary("f1")
mcc = _binary("mcc")
fowlkes_mallows = _binary("fowlkes_mallows")


def _ratio(a: float, b: float) -> float:
    return float(a / b) if b > 0 else 0.0


def positive_index(classes, positive=None) -> int:
    """Index in ``classes`` (two labels) of the positive class ``positive``, a label; None: the second label.

    A label also matches by its text (``"1"`` names the class ``1``), so command-line values work. Raises
    :class:`~odtmip.core.exceptions.DataError` for more than two classes or a label that is not a class.
    """
    labels = list(classes)
    if len(labels) != 2:
        raise DataError(f"a positive class needs two-class data; the data has {len(labels)} classes: "
                        f"{', '.join(map(str, labels))}")
    if positive is None:
        return 1
    for i, label in enumerate(labels):
        if (type(label) is type(positive) and label == positive) or str(label) == str(positive):
            return i
    raise DataError(f"positive label {positive!r} is not a class; the classes are "
                    f"{', '.join(repr(_native(label)) for label in labels)}")


def count_target(tau: float, total: float) -> float:
    """The least weight a rate ``tau`` of ``total`` needs: ceil(tau x total) exactly (rational arithmetic) for an
    integer total, as the corrected (15) of Günlük et al. (``TN >= ceil(tau |I-|)``); tau x total otherwise.

    >>> count_target(0.07, 100), 0.07 * 100  # binary floating point would ask for 8
    (7.0, 7.000000000000001)
    """
    if float(total).is_integer():
        return float(math.ceil(Fraction(str(tau)) * int(total)))
    return tau * total
