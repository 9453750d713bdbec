"""Hypothesis strategies for tiny random classification data."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from odtmip.core.data import Dataset

WEIGHTS = ("none", "integer", "real")


@st.composite
def tiny_data(draw, max_rows: int = 30, max_cols: int = 6, classes=(2, 3), weights=WEIGHTS):
    """A Dataset of 0/1 columns with 1..max_rows rows, 1..max_cols columns, K in ``classes``, and weights."""
    n = draw(st.integers(2, max_rows))
    p = draw(st.integers(1, max_cols))
    K = draw(st.sampled_from(classes))
    kind = draw(st.sampled_from(weights))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, p))
    y = rng.integers(0, K, size=n)
    y[:2] = [0, 1]  # at least two classes
    w = None
    if kind == "integer":
        w = rng.integers(1, 5, size=n).astype(float)
    elif kind == "real":
        w = rng.random(n) + 0.05
    return Dataset(X, y, w)


def integral(ds: Dataset) -> bool:
    """True when every weight is an integer, so objectives are exact and node counts comparable."""
    return bool(np.all(ds.weights == np.round(ds.weights)))


@st.composite
def big_integer_data(draw, max_rows: int = 10, max_cols: int = 3, classes=(2, 3), max_weight: int = 10**12):
    """A Dataset with integer weights in 1..``max_weight``, huge and small ones mixed, so that improvements of a few
    units hide under totals near 1e13 (a relative tie tolerance would swallow them)."""
    n = draw(st.integers(2, max_rows))
    p = draw(st.integers(1, max_cols))
    K = draw(st.sampled_from(classes))
    w = draw(st.lists(st.one_of(st.integers(1, 5), st.integers(1, max_weight)), min_size=n, max_size=n))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, p))
    y = rng.integers(0, K, size=n)
    y[:2] = [0, 1]
    return Dataset(X, y, np.array(w, dtype=float))
