"""Binary encodings of raw columns, kept as feature *groups*.

Every binary column is defined by a :class:`~odtmip.core.tree.Split` on one raw column: the column is 1 exactly
where the split's test is true. The binary matrix is computed by the same routing code a
:class:`~odtmip.core.tree.Tree` uses, so a tree learned on binary columns predicts the same on the raw data.

How a raw column is encoded
---------------------------
* **0/1 numeric column** (or bool): passed through as one ``binary`` column (group kind ``binary``).
* **Categorical** (pandas ``category``/``object``/``string`` dtype, or named in ``categorical``): one-hot,
  one column per level seen in training (group kind ``categorical``). Missing values form their own level,
  :data:`MISSING`. A level never seen in training has all its indicators 0 and goes to the left ("not in")
  branch of every subset split. A column that looks like an identifier -- more than :data:`MAX_LEVELS` levels
  and more levels than half the rows -- is a :class:`DataError` (drop it, or pass ``allow_many_levels=True``):
  its subsets would memorise the rows. Levels that differ only in surrounding whitespace are an error too.
* **Other numeric columns**, by ``numeric``:

  - ``"auto"`` (default): binary columns as for ``"buckets"``; the dynamic programs search every threshold of the
    raw column instead (:func:`odtmip.dp.solve_numeric`), the MIP models use the buckets.
  - ``"buckets"``: quantile buckets, deciles unless ``n_buckets`` says otherwise, as in Günlük et
    al.; one indicator per bucket, an ordered group (kind ``ordinal``). Cut points are data values; bucket b
    holds ``edges[b-1] < x <= edges[b]``. A column with few distinct values gets one bucket per value.
  - ``"thresholds"``: features ``x > t`` (kind ``thresholds``) for every midpoint ``t`` between consecutive
    distinct values, or, with ``n_thresholds=k``, the midpoints after the k quantiles of the data.

**Missing values in a numeric column** (NaN): the thresholds or buckets come from the values present, and a
missing value counts as smaller than every number (see :mod:`odtmip.core.tree`): ``x > t`` is false for it and it lies
in bucket 0, so it routes like the lowest values. Next to the column's group comes a group of kind ``missing``
with one column ``x is missing`` (a ``missing`` split), so a tree can also send the missing rows their own way.
A column with no value at all is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from odtmip.core.exceptions import DataError, OptionError, ResourceError
from odtmip.core.options import MEMORY_LIMIT, memory_text
from odtmip.core.tables import as_floats, is_frame, is_number_array, is_series, raw_columns
from odtmip.core.tree import MISSING, Split, _native

NUMERIC_ENCODINGS = ("auto", "buckets", "thresholds")

#: The kinds of the groups of numeric columns that are not 0/1 (ConTree splits their raw column at every midpoint).
NUMERIC_KINDS = ("ordinal", "thresholds")

#: A categorical column with more levels than this and than half the rows is taken for an identifier.
MAX_LEVELS = 10


@dataclass(frozen=True)
class BinaryColumn:
    """One column of the binary matrix: 1 where ``split`` is true."""

    name: str  # e.g. "colour=red", "age>37.5", "age in (30, 40]", "smoker"
    split: Split
    group: int  # index into the encoder's groups


@dataclass(frozen=True)
class Group:
    """The binary columns that come from one raw column.

    ``kind`` is ``binary`` (one pass-through column), ``categorical`` (one-hot levels), ``ordinal``
    (indicators of ordered buckets, low to high), ``thresholds`` (``x > t`` for increasing t) or ``missing``
    (one column: the raw value is missing).
    """

    name: str
    column: int  # raw column index
    kind: str
    members: tuple[int, ...]  # binary column indices, in level / bucket / threshold order
    levels: tuple = ()  # categorical: the levels of the members
    edges: tuple[float, ...] = ()  # ordinal: bucket cut points; thresholds: the thresholds


class Binarizer:
    """Fit an encoding of raw columns into binary columns and groups (see the module docstring).

    Parameters
    ----------
    categorical : sequence of str, optional
        Columns to treat as categorical whatever their dtype.
    numeric : {"auto", "buckets", "thresholds"}
        Encoding of numeric columns that are not 0/1 (``auto``: buckets, see the module docstring).
    n_buckets : int
        Number of quantile buckets (``numeric="buckets"``); 10 gives deciles.
    n_thresholds : int, optional
        Number of quantile thresholds (``numeric="thresholds"``); None uses every midpoint.
    allow_many_levels : bool
        Accept categorical columns that look like identifiers (see the module docstring).
    """

    def __init__(self, categorical: Sequence[str] | None = None, numeric: str = "auto",
                 n_buckets: int = 10, n_thresholds: int | None = None, allow_many_levels: bool = False):
        if numeric not in NUMERIC_ENCODINGS:
            raise OptionError(f"numeric encoding must be one of {NUMERIC_ENCODINGS}, got {numeric!r}")
        if not isinstance(n_buckets, (int, np.integer)) or n_buckets < 2:
            raise OptionError(f"n_buckets must be an integer >= 2, got {n_buckets!r}")
        if n_thresholds is not None and (not isinstance(n_thresholds, (int, np.integer)) or n_thresholds < 1):
            raise OptionError(f"n_thresholds must be a positive integer or None, got {n_thresholds!r}")
        self.categorical = list(categorical or [])
        self.numeric = numeric
        self.n_buckets = int(n_buckets)
        self.n_thresholds = n_thresholds
        self.allow_many_levels = bool(allow_many_levels)

    def fit(self, X, names: Sequence[str] | None = None) -> Binarizer:
        """Choose the encoding of every column of ``X`` (a DataFrame, or a 2-D array of numbers whose columns are
        ``names``); sets ``columns_``, ``groups_``, ``feature_names_``."""
        labels = list(X.columns) if is_frame(X) else list(names)
        unknown = [c for c in self.categorical if c not in labels]
        if unknown:
            raise DataError(f"categorical column(s) {unknown} not in the data")
        self.feature_names_ = [str(c) for c in labels]
        self.columns_: list[BinaryColumn] = []
        self.groups_: list[Group] = []
        columns = [x for _, x in X.items()] if is_frame(X) else list(X.T)
        for c, (name, x) in enumerate(zip(self.feature_names_, columns, strict=True)):
            self._fit_column(c, name, x)
        return self

    def transform(self, X) -> np.ndarray:
        """The binary matrix (uint8, rows x binary columns) of raw data ``X`` (as :meth:`fit` takes it).

        Raises
        ------
        ResourceError
            The matrix would take more than the default ``memory_limit`` (half of physical memory).
        """
        gib = len(X) * len(self.columns_) / 2**30
        if gib > MEMORY_LIMIT:
            raise ResourceError(
                f"the binary columns of {len(X):,} rows x {len(self.columns_):,} splits would take {memory_text(gib)}, "
                f"more than half of physical memory ({MEMORY_LIMIT:g} GiB); encode numeric columns with fewer "
                "thresholds (n_thresholds) or as buckets")
        cols = raw_columns(X)
        out = np.empty((len(self.columns_), len(X)), dtype=np.uint8)  # filled a column at a time: column-major
        for j, col in enumerate(self.columns_):
            out[j] = col.split.goes_right(cols)
        return out.T

    # ---------------------------------------------------------------- per column
    def _fit_column(self, c: int, name: str, x) -> None:
        """Encode column ``c`` (a Series, or a 1-D array of numbers)."""
        if name in self.categorical or not _is_numeric(x):
            self._add_categorical(c, name, x)
            return
        v = as_floats(x, repr(name))
        missing = np.isnan(v)
        if missing.all():
            raise DataError(f"column {name!r} has no values (all {len(v)} are missing); drop it (--drop {name})")
        present = v[~missing]
        if x.dtype == bool or np.isin(present, (0.0, 1.0)).all():
            self._add_group(c, name, "binary", [(name, Split("binary", (c,)))])
        elif self.numeric in ("auto", "buckets"):
            edges = quantile_edges(present, self.n_buckets)
            members = [(f"{name} in {_bucket_text(edges, b)}", Split("bins", (c,), edges=edges, bins=(b,)))
                       for b in range(len(edges) + 1)]
            self._add_group(c, name, "ordinal", members, edges=edges)
        else:
            thresholds = midpoint_thresholds(present, self.n_thresholds)
            members = [(f"{name}>{t:.6g}", Split("threshold", (c,), threshold=t)) for t in thresholds]
            self._add_group(c, name, "thresholds", members, edges=tuple(thresholds))
        if missing.any():
            self._add_group(c, f"{name} is missing", "missing", [(f"{name} is missing", Split("missing", (c,)))])

    def _add_categorical(self, c: int, name: str, x) -> None:
        import pandas as pd

        x = x if is_series(x) else pd.Series(x)
        values = x.astype(object).where(x.notna(), MISSING)
        if isinstance(x.dtype, pd.CategoricalDtype):
            present = set(values)
            levels = [v for v in x.cat.categories if v in present] + ([MISSING] if MISSING in present else [])
        else:
            levels = [v for v in pd.unique(values) if v != MISSING]
            try:
                levels = sorted(levels)
            except TypeError:  # mixed types: keep first-seen order
                pass
            levels += [MISSING] if (values == MISSING).any() else []
        _check_levels(name, [v for v in levels if v != MISSING], values, self.allow_many_levels)
        members = [(f"{name}={v}", Split("subset", (c,), categories=(_native(v),))) for v in levels]
        self._add_group(c, name, "categorical", members, levels=tuple(_native(v) for v in levels))

    def _add_group(self, c, name, kind, members, levels=(), edges=()) -> None:
        g = len(self.groups_)
        start = len(self.columns_)
        for col_name, split in members:
            self.columns_.append(BinaryColumn(col_name, split, g))
        self.groups_.append(Group(name, c, kind, tuple(range(start, len(self.columns_))), levels, tuple(edges)))

    # ------------------------------------------------------------- group splits
    def group_split(self, g: int, members_right: Sequence[int]) -> tuple[Split, bool]:
        """The raw split sending right the rows that have a 1 in any of ``members_right`` (columns of group g).

        Returns ``(split, swap)``; when ``swap`` is True the split's test is the *complement* (rows where it is
        true must go left), which lets a prefix of ordered buckets read as ``x <= t``.
        """
        group = self.groups_[g]
        chosen = sorted(set(members_right))
        if not chosen or not set(chosen) <= set(group.members):
            raise ValueError(f"members_right must be a non-empty subset of group {group.name!r}'s columns")
        if len(chosen) == 1:
            return self.columns_[chosen[0]].split, False
        c = group.column
        if group.kind == "categorical":
            cats = tuple(group.levels[group.members.index(j)] for j in chosen)
            return Split("subset", (c,), categories=cats), False
        if group.kind == "thresholds":  # x > t1 or x > t2 ... is x > min t
            return self.columns_[chosen[0]].split, False
        bins = [group.members.index(j) for j in chosen]
        n_bins = len(group.members)
        contiguous = bins == list(range(bins[0], bins[-1] + 1))
        if contiguous and 0 < bins[0] and bins[-1] == n_bins - 1:  # suffix: x > edges[first-1]
            return Split("threshold", (c,), threshold=group.edges[bins[0] - 1]), False
        if contiguous and bins[0] == 0 and bins[-1] < n_bins - 1:  # prefix: x <= edges[last]
            return Split("threshold", (c,), threshold=group.edges[bins[-1]]), True
        return Split("bins", (c,), edges=group.edges, bins=tuple(bins)), False

    def describe(self, numeric: str | None = None) -> str:
        """One line: how many raw columns became how many binary columns, by kind. ``numeric``: how a solver splits
        the numeric columns when not on their binary columns (e.g. ``"every midpoint"``), which then do not count."""
        kinds = {"binary": "0/1", "categorical": "categorical (one-hot)",
                 "ordinal": f"numeric ({numeric or f'{self.n_buckets} quantile buckets'})",
                 "thresholds": f"numeric ({numeric or 'thresholds'})"}
        counts: dict[str, int] = {}
        for g in self.groups_:
            counts[g.kind] = counts.get(g.kind, 0) + 1
        parts = ", ".join(f"{n} {kinds[k]}" for k, n in counts.items() if k != "missing")
        if "missing" in counts:
            parts += f"; {counts['missing']} with missing values (+1 indicator each)"
        binary = sum(len(g.members) for g in self.groups_ if numeric is None or g.kind not in NUMERIC_KINDS)
        return f"{len(self.feature_names_)} columns{f' -> {binary} binary columns' if binary else ''}: {parts}"


def quantile_edges(v: np.ndarray, n_buckets: int) -> tuple[float, ...]:
    """Cut points (data values) of at most ``n_buckets`` quantile buckets of ``v``; never an empty bucket."""
    distinct = np.unique(v)
    if len(distinct) <= n_buckets:
        return tuple(float(e) for e in distinct[:-1])
    qs = np.quantile(v, np.arange(1, n_buckets) / n_buckets, method="lower")
    edges = np.unique(qs)
    edges = edges[edges < distinct[-1]]
    return tuple(float(e) for e in edges)


def midpoint(a, b) -> np.ndarray:
    """The threshold between values ``a < b`` (elementwise): ``a / 2 + b / 2``, or ``a`` where that is not in
    ``[a, b)``.

    A threshold split sends ``x > t`` right, so ``a <= t < b`` sends a left and b right. ``(a + b) / 2`` breaks
    this twice: it may round to b between adjacent doubles (it does for 1e-300 and the next one) and it overflows
    to ±inf beyond ±9e307. ``a / 2 + b / 2`` never overflows and equals ``(a + b) / 2`` wherever that neither
    overflows nor underflows; where it still misses ``[a, b)`` (it lands on b between adjacent doubles), t = a.
    The result is finite for finite a and b.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    mid = a / 2 + b / 2
    return np.where((a <= mid) & (mid < b), mid, a)


def midpoint_thresholds(v: np.ndarray, k: int | None) -> list[float]:
    """Midpoints between consecutive distinct values (all of them, or those after k quantiles; see
    :func:`midpoint`)."""
    distinct = np.unique(v)
    mids = midpoint(distinct[:-1], distinct[1:])
    if k is None or k >= len(mids):
        return [float(t) for t in mids]
    qs = np.unique(np.quantile(v, np.arange(1, k + 1) / (k + 1), method="lower"))
    pos = np.searchsorted(distinct, qs)  # index of each quantile value among the distinct values
    pos = pos[pos < len(mids)]
    return [float(t) for t in mids[np.unique(pos)]]


def _bucket_text(edges: Sequence[float], b: int) -> str:
    lo = "-inf" if b == 0 else f"{edges[b - 1]:.6g}"
    return f"({lo}, {edges[b]:.6g}]" if b < len(edges) else f"({lo}, inf)"


def _check_levels(name: str, levels: list, values, allow_many: bool) -> None:
    """Refuse the levels of categorical column ``name`` (``values``: its values, a Series) when they look like an
    identifier -- or are numbers but for a few, numbers read as text -- or differ only in surrounding whitespace."""
    if not allow_many and len(levels) > max(MAX_LEVELS, len(values) / 2):
        import pandas as pd

        numbers = pd.to_numeric(pd.Series(levels, dtype=object), errors="coerce")
        strays = [v for v, number in zip(levels, numbers, strict=True) if pd.isna(number)]
        if 2 * len(strays) < len(levels):
            raise DataError(f"column {name!r} holds numbers but also {len(strays)} non-numeric value(s), in "
                            f"{int(values.isin(strays).sum())} row(s) (e.g. {strays[0]!r}), so it reads as text with "
                            f"{len(levels)} distinct values: mark them missing (na_values, --na-values, or replace "
                            "them with NaN) or clean them")
        raise DataError(f"column {name!r} has {len(levels)} distinct values in {len(values)} rows, like an identifier: "
                        f"drop it (--drop {name}) or keep it (--allow-many-levels, allow_many_levels=True)")
    twins = whitespace_twins(levels)
    if twins:
        raise DataError(f"column {name!r} has values that differ only in surrounding whitespace "
                        f"({twins[0]!r} and {twins[1]!r}); strip them")


def whitespace_twins(values) -> tuple | None:
    """Two of the text ``values`` that are equal once stripped of surrounding whitespace, or None."""
    seen: dict[str, str] = {}
    for v in values:
        if isinstance(v, str):
            key = v.strip()
            if key in seen and seen[key] != v:
                return seen[key], v
            seen.setdefault(key, v)
    return None


def _is_numeric(x) -> bool:
    """Whether column ``x`` (a Series or an array) holds numbers (bool included)."""
    if not is_series(x):
        return is_number_array(x)
    import pandas as pd

    return pd.api.types.is_numeric_dtype(x.dtype) or x.dtype == bool
