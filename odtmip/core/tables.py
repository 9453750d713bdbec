"""Raw tables as a Dataset keeps them: a pandas DataFrame, or a 2-D array of numbers that never loads pandas.

Importing pandas costs about 75 MB of memory (it loads pyarrow when that is installed) and a third of a second. Numeric
data given as a numpy array -- the large data ConTree searches -- stays an array, and pandas objects are recognised
without importing pandas: nothing is a DataFrame or a Series while pandas is not loaded. Code that needs pandas for
text, categories or missing values imports it where it does.
"""

from __future__ import annotations

import sys

import numpy as np

from odtmip.core.exceptions import DataError

#: The numpy dtype kinds of numbers (bool, signed and unsigned integers, floats).
NUMBER_KINDS = "biuf"


def is_frame(X) -> bool:
    """Whether ``X`` is a pandas DataFrame (False while pandas is not loaded, when none can exist)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(X, pd.DataFrame)


def is_series(y) -> bool:
    """Whether ``y`` is a pandas Series (False while pandas is not loaded)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(y, pd.Series)


def is_number_array(a) -> bool:
    """Whether ``a`` is a numpy array of numbers (a table or a column kept without pandas)."""
    return isinstance(a, np.ndarray) and a.dtype.kind in NUMBER_KINDS


def column(X, c: int) -> np.ndarray:
    """Column ``c`` of a table ``X`` (DataFrame or 2-D array) as a 1-D array."""
    return X.iloc[:, c].to_numpy() if is_frame(X) else X[:, c]


def raw_columns(X) -> list[np.ndarray]:
    """The columns of a table ``X`` as 1-D arrays (the form :meth:`Split.goes_right
    <odtmip.core.tree.Split.goes_right>` takes)."""
    return [column(X, c) for c in range(X.shape[1])]


def missing(x) -> np.ndarray:
    """Boolean mask of the missing values (NaN, None, ``pd.NA``) of a column ``x`` (array or Series)."""
    if is_number_array(x):
        return np.isnan(x) if x.dtype.kind == "f" else np.zeros(len(x), dtype=bool)
    import pandas as pd

    return np.asarray(pd.isna(x), dtype=bool)


def as_floats(x, column: int | str) -> np.ndarray:
    """A column ``x`` (array or Series) as floats, a missing value (None, ``pd.NA``) as NaN; a DataError naming
    ``column`` when it holds other than numbers."""
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        pass
    import pandas as pd

    values = pd.Series(x, dtype=object)
    try:
        return values.where(values.notna(), np.nan).to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise DataError(f"column {column} must be numeric for this split") from None
