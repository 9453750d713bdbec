"""The data model both engines share: :class:`Dataset`.

A Dataset keeps the raw columns (for routing and verification), the labels as class indices ``0..K-1``
with the original labels in ``classes_``, optional sample weights, and the binary encoding with its feature
groups (see :mod:`odtmip.core.binarize`). Raw columns given as a DataFrame stay one; numbers given as an array (and
labels given as an array of numbers) stay arrays, and pandas is not loaded for them (:mod:`odtmip.core.tables`).

The labels must look like class labels; each of these is a :class:`DataError` naming the target: no labels at
all, a missing label, a single class, labels that differ only in surrounding whitespace, dates, and a
*regression target* -- numeric labels with more than :data:`MAX_NUMERIC_CLASSES` distinct values of which some
are not whole numbers or which are more than half the rows. ``force_classification=True`` (``--classification``)
takes dates and numbers as class labels all the same.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from odtmip.core.binarize import Binarizer, BinaryColumn, Group, whitespace_twins
from odtmip.core.exceptions import DataError
from odtmip.core.tables import column, is_frame, is_number_array, is_series, missing
from odtmip.core.tree import MISSING, Split, Tree, _native

if TYPE_CHECKING:
    import pandas as pd

#: A numeric target with more distinct values than this may be a regression target (see the module docstring).
MAX_NUMERIC_CLASSES = 20

_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d*)?)?)?|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}")


class Dataset:
    """Training data for an optimal tree.

    Parameters
    ----------
    X : pandas.DataFrame or array-like of shape (n_samples, n_features)
        Raw features. DataFrame columns keep their names and dtypes; an array gets names ``x0, x1, ...``
        (or ``feature_names``); an array of numbers is kept as an array (a copy), without pandas. Object/string/
        category columns are categorical.
    y : array-like of shape (n_samples,)
        Labels of any hashable type; mapped to ``0..K-1`` in sorted order of ``classes_``. A Series's name is
        kept as :attr:`target`.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weights (integer or real). None means every row weighs 1.
    feature_names : sequence of str, optional
        Names for the columns of an array ``X``.
    categorical : sequence of str, optional
        Columns to treat as categorical whatever their dtype.
    numeric : {"auto", "buckets", "thresholds"}
        Encoding of numeric columns that are not 0/1 (see :mod:`odtmip.core.binarize`). ``auto`` (default): quantile
        buckets for the MIP models, every threshold for the DP (:attr:`every_threshold`).
    n_buckets, n_thresholds : int
        Parameters of that encoding.
    force_classification : bool
        Take ``y`` as class labels even when it looks like a regression target or like dates.
    allow_many_levels : bool
        Accept categorical columns that look like identifiers (see :mod:`odtmip.core.binarize`).

    Attributes
    ----------
    raw : pandas.DataFrame or numpy.ndarray
        The raw columns as kept: a DataFrame, or a 2-D array of numbers; what :meth:`Tree.apply
        <odtmip.core.tree.Tree.apply>` routes.
    target : str or None
        The name of the label column (``y.name``), for messages and reports.
    named_columns : bool
        ``X`` was a DataFrame with text column names (scikit-learn's "fitted with feature names").

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"colour": ["red", "blue", "red", "green"], "age": [30, 40, 50, 60]})
    >>> ds = Dataset(X, ["yes", "no", "yes", "no"], numeric="thresholds")
    >>> [c.name for c in ds.columns]
    ['colour=blue', 'colour=green', 'colour=red', 'age>35', 'age>45', 'age>55']
    >>> ds.classes_.tolist(), ds.y.tolist()
    (['no', 'yes'], [1, 0, 1, 0])
    """

    def __init__(self, X, y, sample_weight=None, *, feature_names: Sequence[str] | None = None,
                 categorical: Sequence[str] | None = None, numeric: str = "auto", n_buckets: int = 10,
                 n_thresholds: int | None = None, force_classification: bool = False,
                 allow_many_levels: bool = False):
        name = y.name if is_series(y) else None
        self.target = None if name is None else str(name)
        self.named_columns = is_frame(X) and all(isinstance(c, str) for c in X.columns)
        self.raw, self._names = _as_table(X, feature_names, self.target)
        self.y, self.classes_ = encode_labels(y, len(self.raw), force_classification)
        self.sample_weight = _check_weights(sample_weight, len(self.raw))
        self.encoder = Binarizer(categorical, numeric, n_buckets, n_thresholds, allow_many_levels).fit(self.raw,
                                                                                                       self._names)
        self._Xb: np.ndarray | None = None  # the binary matrix, made when first read (ConTree reads raw columns)
        self._frame: pd.DataFrame | None = None  # the raw columns as a DataFrame, when kept as an array

    @property
    def X(self) -> pd.DataFrame:
        """The raw columns as a DataFrame (made on first use when they are kept as an array: :attr:`raw`)."""
        if is_frame(self.raw):
            return self.raw
        if self._frame is None:
            import pandas as pd

            self._frame = pd.DataFrame({n: self.raw[:, c] for c, n in enumerate(self._names)},
                                       index=pd.RangeIndex(len(self.raw)))
        return self._frame

    @property
    def Xb(self) -> np.ndarray:
        """The binary columns as a (n_samples, n_binary) uint8 matrix (made on first use)."""
        if self._Xb is None:
            self._Xb = self.encoder.transform(self.raw)
        return self._Xb

    def column(self, c: int) -> np.ndarray:
        """Raw column ``c`` as a 1-D array."""
        return column(self.raw, c)

    # ------------------------------------------------------------------ sizes
    @property
    def n_samples(self) -> int:
        return len(self.y)

    @property
    def n_features(self) -> int:
        """Number of raw columns."""
        return len(self._names)

    @property
    def n_binary(self) -> int:
        """Number of binary columns."""
        return len(self.columns)

    @property
    def n_classes(self) -> int:
        return len(self.classes_)

    @property
    def feature_names(self) -> list[str]:
        return list(self._names)

    @property
    def missing_numeric(self) -> list[str]:
        """The numeric columns with missing values (each has an ``is missing`` column, see
        :mod:`odtmip.core.binarize`)."""
        return [self.feature_names[g.column] for g in self.groups if g.kind == "missing"]

    @property
    def every_threshold(self) -> bool:
        """True when the DP should search every threshold of the numeric columns (``numeric="auto"``) rather than
        their binary columns (an explicit ``"buckets"`` or ``"thresholds"``)."""
        return self.encoder.numeric == "auto" and any(g.kind == "ordinal" for g in self.groups)

    @property
    def columns(self) -> list[BinaryColumn]:
        """The binary columns, each with the raw split it encodes."""
        return self.encoder.columns_

    @property
    def groups(self) -> list[Group]:
        return self.encoder.groups_

    @property
    def levels(self) -> dict[str, tuple]:
        """The values of each categorical column, missing values aside: what its trees compare prediction data
        with (:meth:`odtmip.core.tree.Tree.check_input`)."""
        return {self.feature_names[g.column]: tuple(v for v in g.levels if v != MISSING)
                for g in self.groups if g.kind == "categorical"}

    @property
    def weights(self) -> np.ndarray:
        """Sample weights as an array (ones when none were given)."""
        return np.ones(self.n_samples) if self.sample_weight is None else self.sample_weight

    # ------------------------------------------------------------ tree helpers
    def split_of(self, j: int) -> Split:
        """The raw split binary column ``j`` encodes."""
        return self.columns[j].split

    def new_tree(self, spec) -> Tree:
        """A :class:`Tree` over this data's raw columns with leaf counts from the training rows."""
        tree = Tree(spec, self.feature_names, self.classes_, levels=self.levels, named_columns=self.named_columns)
        return tree.fit_counts(self.raw, self.y, self.sample_weight)

    def derive(self, columns: Sequence[BinaryColumn]) -> Dataset:
        """A copy over the same raw data and labels whose binary columns are ``columns``.

        Used to give the DP exactly the splits a MIP model allows (e.g. one column per subset of a group).
        """
        new = copy.copy(self)
        new.encoder = copy.copy(self.encoder)
        new.encoder.columns_ = list(columns)
        if new.encoder.numeric == "auto":  # the given columns are the split space (see every_threshold)
            new.encoder.numeric = "buckets"
        new._Xb = None
        return new

    def subset(self, rows) -> Dataset:
        """The rows ``rows`` (indices or a boolean mask) with this data's encoding (e.g. one fold of a CV)."""
        rows = np.flatnonzero(rows) if np.asarray(rows).dtype == bool else np.asarray(rows, dtype=np.int64)
        if len(rows) == 0:
            raise DataError("a subset needs at least one row")
        new = copy.copy(self)
        new.raw = self.raw.iloc[rows].reset_index(drop=True) if is_frame(self.raw) else self.raw[rows]
        new._frame = None
        new.y = self.y[rows]
        new.sample_weight = None if self.sample_weight is None else self.sample_weight[rows]
        new._Xb = None if self._Xb is None else self._Xb[rows]
        return new

    def reweighted(self, sample_weight) -> Dataset:
        """A copy with other sample weights (e.g. a class weight folded in)."""
        new = copy.copy(self)
        new.sample_weight = _check_weights(sample_weight, self.n_samples)
        return new

    def misclassifications(self, tree: Tree, leaves: np.ndarray | None = None) -> float:
        """Weighted count of training rows ``tree`` misclassifies, by routing the raw data through it (or from
        ``leaves``, the leaf each row reaches, ``tree.apply(self.raw)``, when the caller has routed them)."""
        leaves = tree.apply(self.raw) if leaves is None else leaves
        wrong = tree.labels_at(leaves) != self.y
        return float(self.weights[wrong].sum())

    def describe(self, numeric: str | None = None) -> str:
        """One line on the size, the target and the encoding; ``numeric`` as in
        :meth:`odtmip.core.binarize.Binarizer.describe` (how a solver splits numeric columns, if not on their binary
        columns)."""
        target = "" if self.target is None else f" (target {self.target!r})"
        return f"{self.n_samples} samples, {self.n_classes} classes{target}; " + self.encoder.describe(numeric)


def encode_labels(y, n_rows: int | None = None, force_classification: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Map labels of any hashable type to ``0..K-1``; returns ``(codes, classes)``.

    Raises :class:`DataError` for a length mismatch, an empty target, missing labels, a single class, or labels
    that are not class labels (see the module docstring; ``force_classification`` accepts dates and numbers).
    """
    name = f"target {str(y.name)!r}" if is_series(y) and y.name is not None else "y"
    if is_number_array(y):  # numbers: an array, without pandas
        y = np.ravel(y)
    elif not is_series(y):  # a Series keeps mixed types apart (numpy would turn 1 into "1")
        import pandas as pd

        y = pd.Series(np.ravel(y) if isinstance(y, np.ndarray) else list(y))
    if n_rows is not None and len(y) != n_rows:
        raise DataError(f"X has {n_rows} rows but y has {len(y)} labels")
    if len(y) == 0:
        raise DataError("the data is empty (no rows)")
    refuse_missing_labels(y, name)
    if not force_classification:
        _refuse_non_labels(y, name)
    try:
        classes, codes = np.unique(np.asarray(y), return_inverse=True)
    except TypeError:
        raise DataError("labels mix incomparable types (e.g. numbers and strings)") from None
    if len(classes) < 2:
        raise DataError(f"{name} has a single class ({_native(classes[0])!r}); a classification tree needs at "
                        "least two")
    twins = whitespace_twins(classes)
    if twins:
        raise DataError(f"{name} has labels that differ only in surrounding whitespace ({twins[0]!r} and "
                        f"{twins[1]!r}); strip them")
    return codes.astype(np.int64).ravel(), classes


def refuse_missing_labels(y, name: str = "y") -> None:
    """A DataError when labels ``y`` (a Series or an array of numbers) are missing: all of them (the wrong column?)
    or some (counted)."""
    absent = missing(y)
    if absent.all():
        raise DataError(f"{name} has no labels (all {len(y)} values are missing); choose the label column (--target)")
    if absent.any():
        raise DataError(f"{name} has {int(absent.sum())} missing label(s); drop those rows first")


def _refuse_non_labels(y, name: str) -> None:
    """Raise when ``y`` (a Series or an array of numbers, no missing values) holds dates or looks like a regression
    target."""
    force = "or pass --classification (force_classification=True) to use each value as a class"
    if is_number_array(y):
        dates, numeric = False, y.dtype.kind != "b"
    else:
        import pandas as pd

        values = y.to_numpy()
        dates = pd.api.types.is_datetime64_any_dtype(y.dtype) or all(
            isinstance(v, str) and _DATE.fullmatch(v.strip()) for v in values)
        numeric = pd.api.types.is_numeric_dtype(y.dtype) and not pd.api.types.is_bool_dtype(y.dtype)
        if dates:
            raise DataError(f"{name} holds dates (e.g. {str(values[0])!r}), not class labels; choose the label "
                            f"column (--target), {force}")
    if not numeric:
        return
    numbers = np.asarray(y, dtype=float)
    distinct = np.unique(numbers)
    fractional = not np.array_equal(distinct, np.round(distinct))
    if len(distinct) > MAX_NUMERIC_CLASSES and (fractional or len(distinct) > len(y) / 2):
        kind = "not all whole numbers" if fractional else f"in {len(y)} rows"
        raise DataError(f"{name} has {len(distinct)} distinct numeric values ({kind}): a regression target, not "
                        f"class labels; choose the label column (--target), {force}")


def _as_table(X, feature_names, target=None) -> tuple[pd.DataFrame | np.ndarray, list[str]]:
    """``X`` as a table and its unique column names: a DataFrame as it is (index reset), an array of numbers as a
    2-D array (a copy, column-major: its columns are read one at a time), any other array as a DataFrame (an object
    column of numbers numeric); ``target`` (the name of a Series ``y``) for messages."""
    if is_frame(X):
        table = X.reset_index(drop=True)
        if feature_names is not None:
            raise DataError("feature_names is only for array input; a DataFrame keeps its column names")
        names = [str(c) for c in X.columns]
    else:
        A = np.asarray(X)
        if A.ndim != 2:
            raise DataError(f"X must be 2-D (samples x features), got shape {A.shape}")
        names = [str(n) for n in feature_names] if feature_names is not None else [f"x{c}" for c in range(A.shape[1])]
        if len(names) != A.shape[1]:
            raise DataError(f"{len(names)} feature names for {A.shape[1]} columns")
        if is_number_array(A):
            table = np.array(A, order="F")
        else:
            import pandas as pd

            table = pd.DataFrame({n: A[:, c] for c, n in enumerate(names)}, index=pd.RangeIndex(A.shape[0]))
            for n in names:  # an object array of numbers stays numeric
                if table[n].dtype == object:
                    converted = pd.to_numeric(table[n], errors="coerce")
                    if converted.notna().sum() == table[n].notna().sum():
                        table[n] = converted
    if table.shape[0] == 0:
        raise DataError("the data is empty (no rows)")
    if table.shape[1] == 0:
        if not is_frame(X):
            where = f"an array of shape {np.shape(X)}"
        elif target is not None:
            where = f"a DataFrame without columns: only the target {target!r} was given"
        else:
            where = "a DataFrame without columns"
        raise DataError(f"X has {table.shape[0]} rows but no feature columns ({where}); a tree needs at least one")
    if len(set(names)) != len(names):
        raise DataError("feature names must be unique")
    return table, names


def _check_weights(w, n: int) -> np.ndarray | None:
    if w is None:
        return None
    try:
        w = np.asarray(w, dtype=float).ravel()
    except (TypeError, ValueError):
        raise DataError("sample_weight must be numeric") from None
    if len(w) != n:
        raise DataError(f"sample_weight has {len(w)} entries for {n} rows")
    if not np.isfinite(w).all():
        raise DataError("sample_weight has NaN or infinite entries")
    if (w < 0).any():
        raise DataError("sample_weight has negative entries")
    with np.errstate(over="ignore"):  # an overflow is the error below, not a warning
        total = w.sum()
    if total <= 0:
        raise DataError("sample_weight sums to zero")
    if not np.isfinite(total):
        raise DataError(f"sample_weight sums to more than the largest float ({np.finfo(float).max:.3g}); scale the "
                        "weights down")
    return w
