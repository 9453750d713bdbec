"""Metrics from confusion counts agree with scikit-learn's implementations, weighted and unweighted."""

import math

import numpy as np
import pytest
from sklearn import metrics as skm

from odtmip.core import metrics


@pytest.fixture
def labels(rng):
    y = rng.integers(0, 2, 200)
    p = np.where(rng.random(200) < 0.8, y, 1 - y)
    w = rng.integers(1, 5, 200).astype(float)
    return y, p, w


@pytest.mark.parametrize("weighted", [False, True])
def test_binary_metrics_match_scikit_learn(labels, weighted):
    y, p, w = labels
    w = w if weighted else None
    c = metrics.Confusion.from_labels(y, p, w)
    assert c.n == pytest.approx(len(y) if w is None else w.sum())
    assert metrics.accuracy(y, p, w) == pytest.approx(skm.accuracy_score(y, p, sample_weight=w))
    assert metrics.balanced_accuracy(y, p, w) == pytest.approx(skm.balanced_accuracy_score(y, p, sample_weight=w))
    assert metrics.sensitivity(y, p, w) == pytest.approx(skm.recall_score(y, p, sample_weight=w))
    assert metrics.specificity(y, p, w) == pytest.approx(skm.recall_score(y, p, pos_label=0, sample_weight=w))
    assert metrics.precision(y, p, w) == pytest.approx(skm.precision_score(y, p, sample_weight=w))
    assert metrics.f1(y, p, w) == pytest.approx(skm.f1_score(y, p, sample_weight=w))
    assert metrics.mcc(y, p, w) == pytest.approx(skm.matthews_corrcoef(y, p, sample_weight=w))
    if w is None:  # scikit-learn's Fowlkes-Mallows is a clustering score without weights
        assert metrics.fowlkes_mallows(y, p) == pytest.approx(
            math.sqrt(skm.precision_score(y, p) * skm.recall_score(y, p)))
    assert metrics.misclassifications(y, p, w) == pytest.approx(c.fp + c.fn)


def test_multiclass_confusion_and_accuracy(rng):
    y = rng.integers(0, 3, 100)
    p = rng.integers(0, 3, 100)
    assert np.array_equal(metrics.confusion_matrix(y, p, 3), skm.confusion_matrix(y, p))
    assert metrics.accuracy(y, p) == pytest.approx(skm.accuracy_score(y, p))
    assert metrics.balanced_accuracy(y, p) == pytest.approx(skm.balanced_accuracy_score(y, p))


def test_zero_denominators_give_zero():
    c = metrics.Confusion(tp=0, fp=0, tn=5, fn=0)
    assert (c.sensitivity, c.precision, c.f1, c.mcc, c.fowlkes_mallows) == (0.0, 0.0, 0.0, 0.0, 0.0)
    assert c.specificity == 1.0 and c.accuracy == 1.0


def test_positive_class_choice():
    y, p = [0, 0, 1, 2], [0, 1, 1, 2]
    c = metrics.Confusion.from_labels(y, p, positive=2)
    assert (c.tp, c.fp, c.tn, c.fn) == (1, 0, 3, 0)


def test_round_off_below_zero_gives_no_math_domain_error():
    """Counts derived from real weights (tp = P - fn) can come out as -1e-17; the metrics treat them as 0."""
    c = metrics.Confusion(tp=-1e-17, fp=2.0, tn=3.0, fn=0.0)
    assert c.mcc == pytest.approx(0.0) and c.fowlkes_mallows == 0.0
