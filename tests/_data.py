"""Small generated datasets shared by several test modules."""

import numpy as np
import pandas as pd

from odtmip import Dataset


def mixed_data(seed, n=20, n_classes=2, max_weight=3):
    """A numeric column with ties, an integer column, a 3-level categorical column and a noisy rule for the labels;
    integer weights 1..max_weight-1 (none when ``max_weight`` is None)."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"x": rng.normal(size=n).round(1), "z": rng.integers(0, 5, n),
                      "c": pd.Categorical(rng.integers(0, 3, n).astype(str))})
    y = ((X["x"] > 0.2) ^ (X["c"] == "1") ^ (rng.random(n) < 0.2)).astype(int).to_numpy()
    if n_classes == 3:
        y = np.where(X["z"] >= 3, 2, y)
    return Dataset(X, y, sample_weight=None if max_weight is None else rng.integers(1, max_weight, n))


#: Two values a threshold must separate, x[0] left and x[1] right: (a + b) / 2 is b for the adjacent doubles and
#: ±inf for the huge ones of one sign.
NARROW_OR_HUGE = {"adjacent": [1e-300, np.nextafter(1e-300, 1)], "huge": [1.6e308, 1.7e308],
                  "huge negative": [-1.7e308, -1.6e308], "widest": [-1.7e308, 1.7e308]}
#: (x, y, depth): data that a tree of that depth classifies without error only if each threshold lies between the
#: two values it separates; three adjacent doubles need the thresholds 1 and the double after it, where
#: (a + b) / 2 rounds to the third value.
SEPARABLE = {**{name: (x, [0, 1], 1) for name, x in NARROW_OR_HUGE.items()},
             "three adjacent": ([1.0, np.nextafter(1.0, 2), np.nextafter(np.nextafter(1.0, 2), 2)], [0, 1, 0], 2)}
