"""Load classification data sets as raw ``(X, y)`` pairs.

Every loader returns the data *as stored*: ``X`` is a :class:`pandas.DataFrame` with the original column names
and ``y`` a :class:`pandas.Series` named after the label column (``"class"`` when the format has no names).
Nothing is encoded or binarised here; :mod:`odtmip.core.data` does that.

Which column is the target
--------------------------
Nothing is guessed from a column's position. The target is ``target`` when given (a name or a position);
otherwise the format fixes it -- the first value of a dl85/txt line, ``"class"`` for bundled sets -- or, in ARFF
and CSV files, it is the one column named (case-insensitively) one of :data:`TARGET_NAMES`. With no such
column, or several, :func:`load` raises a :class:`DataError` that lists the columns. The chosen name is
``y.name`` (the command line prints it).

Sources
-------
Bundled, no files and no network needed (see :data:`BUNDLED_DATASETS`):

* ``"breast-cancer"``, ``"iris"``, ``"wine"``: the copies shipped with scikit-learn
  (``sklearn.datasets.load_breast_cancer`` etc.). Features are floats with scikit-learn's column names; ``y`` is
  named ``"class"`` and holds the class names (``"malignant"``/``"benign"``, the iris species, ``"class_0"``...)
  as a ``category`` in scikit-learn's class order. ``"breast-cancer"`` is the *Diagnostic* Wisconsin data (WDBC),
  not the *Original* data of the benchmark files ``breast-wisconsin``/``breast-w``.
* ``"tic-tac-toe"``: **generated** from the rules of the game. Starting from the empty board, x and o move in
  turn, x first; a game ends as soon as a player has three in a row or the board is full. The 958 distinct
  end boards are the rows (626 with an x line: ``"positive"``; the others, including the 16 full boards
  without a line and the boards where o won, ``"negative"``). This is the UCI Tic-Tac-Toe Endgame set.
  Columns ``top-left-square`` ... ``bottom-right-square`` (row by row), values ``x``/``o``/``b`` (blank) as a
  ``category`` with categories ``["x", "o", "b"]``; ``y`` is a ``category`` with categories
  ``["positive", "negative"]``. Row order: the boards x won (626), then those o won (316), then the full
  boards without a line (16), each group sorted lexicographically over the squares in column order with
  ``x < o < b``; this reproduces the row order of the UCI file.
* ``"monk1"``, ``"monk2"``, ``"monk3"``: **generated** from the defining rules of the MONK's problems
  (Thrun et al., 1991). The rows are all 432 combinations of the attributes ``a1`` in {1,2,3}, ``a2`` in
  {1,2,3}, ``a3`` in {1,2}, ``a4`` in {1,2,3}, ``a5`` in {1,2,3,4}, ``a6`` in {1,2} (``category`` columns with
  integer categories), in lexicographic order with ``a1`` varying slowest (the order of the UCI test files).
  ``y`` (int, 1 = in the concept):

  - monk1: ``a1 == a2`` or ``a5 == 1`` (216 positive);
  - monk2: exactly two of the six attributes take their first value 1 (142 positive);
  - monk3: (``a5 == 3`` and ``a4 == 1``) or (``a5 != 4`` and ``a2 != 3``) (228 positive).

  These 432-instance sets equal the published *test* sets ``monks-N.test``. **Not** generated: the published
  random *training* subsets (124, 169 and 122 instances), and the 5 % label noise of monk3's training set (the
  test set has none). Load the training sets from files (``categorical/monks-N-train.arff`` or
  ``osdt/monkN-train.csv`` in the benchmark folder).

A bundled name may also be written ``"bundled:iris"``. A file that exists is loaded even when it is named like a
bundled set (e.g. ``./iris``; logged at INFO level): a path that exists always wins.

Files, read by :func:`load` or the readers below:

* ``dl85`` (:func:`read_dl85`): DL8.5/MurTree text, one instance per line, whitespace-separated numbers, no
  header, label first, features 0/1. ``X`` has int8 columns ``f0, f1, ...``; ``y`` (``"class"``) is int64.
* ``txt`` (:func:`read_txt`): the same layout with real features (ConTree/Quant-BnB files). ``X`` has float64
  columns ``f0, f1, ...``; ``y`` is int64 when every label is a whole number, float64 otherwise.
* ``arff`` (:func:`read_arff`): Weka ARFF, dense only (sparse ARFF is rejected with :class:`FormatError`).
* ``csv`` (:func:`read_csv`): a header row and a sniffed delimiter (``,``, ``;``, tab or whitespace); the
  values are typed as described under "CSV typing".

Any file may be gzip-compressed (detected from its first bytes, whatever its name). Text is decoded as UTF-8
(a byte order mark is dropped); a file that is not valid UTF-8 is decoded as Latin-1. A file whose first 8 KiB
hold a NUL byte or more than 1 % control bytes is binary data, not text: a :class:`FormatError`.

The benchmark folder (``../shared/datasets`` next to the repository, or ``$ODTMIP_DATA``; see
:func:`data_dir`) holds the sub-folders ``binary/``, ``categorical/``, ``continuous/`` and ``osdt/`` and a
``manifest.csv`` with measured row, feature and class counts; :func:`list_datasets` shows them.

CSV typing
----------
Every value is stripped of surrounding whitespace (``"yes "`` is ``"yes"``). A value equal to one of
:data:`MISSING_MARKERS` (``''``, ``?``, ``NA``, ``NaN``, ``nan``) or to one of the ``na_values`` given is
missing. Then each column is, in this order:

1. text, if named in ``categorical``: a ``category`` column;
2. numbers, if every value present is a number: int64 (no missing value, all whole) or float64 (NaN missing);
3. bool, if every value is ``True``/``False`` (any case) and none is missing;
4. numbers written with a decimal comma (``1,5`` or ``1.234,5``) or with ``,`` between thousands
   (``1,234.5``), when every value fits one of these conventions: read as numbers, with a logged warning.
   A value that fits both (``1,234``: 1.234 or 1234?) takes the convention the file's other columns show, and
   is a :class:`DataError` when none does (``decimal=`` decides: ``","`` or ``"."``); columns that show both
   conventions are an error too;
5. otherwise text -- unless more than half of the values present are numbers: then the others are strays
   (``n/a``, ``unknown``) and the column is a :class:`DataError` that names it, counts them and shows one;
   mark them missing (``na_values``) or keep the column as text (``categorical``).

Text columns become ``category`` with the sorted distinct values as categories.

Missing values
--------------
ARFF ``?`` (unquoted) and the CSV markers above become a missing value: ``NaN`` in numeric columns, a missing
entry (not a category) in ``category`` columns. Rows with missing values, including a missing label, are kept;
:class:`~odtmip.core.data.Dataset` encodes missing feature values and refuses missing labels. An ARFF nominal value
that its ``@attribute`` line does not declare is a :class:`FormatError`. DL8.5/txt files have no missing-value
marker.

Dropping and typing columns
---------------------------
``drop`` removes columns before anything else (they are neither typed nor considered as the target);
``categorical`` makes columns ``category`` columns whatever their values (numbers stay as written in CSV files).
A name that is not a column is a :class:`DataError` listing the columns.

Errors
------
:class:`~odtmip.core.exceptions.DataError` for a missing file or folder, empty data, an unknown or undecidable target
column, an ambiguous name, or a column typing refuses; :class:`~odtmip.core.exceptions.FormatError` for a file that
cannot be parsed in its format; :class:`~odtmip.core.exceptions.OptionError` for an invalid argument (unknown
``format``, a ``target`` the format does not allow, ``na_values``/``decimal`` for a file that is not CSV).
"""

from __future__ import annotations

import csv
import gzip
import io
import itertools
import logging
import os
import warnings
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from odtmip.core.exceptions import DataError, FormatError, OptionError

__all__ = [
    "BUNDLED_DATASETS",
    "FORMATS",
    "MISSING_MARKERS",
    "TARGET_NAMES",
    "data_dir",
    "list_datasets",
    "load",
    "read_arff",
    "read_csv",
    "read_dl85",
    "read_txt",
]

log = logging.getLogger("odtmip.datasets")  # the name the command prints before its messages

PathLike = str | os.PathLike[str]

#: Accepted values of ``format`` in :func:`load`.
FORMATS: tuple[str, ...] = ("dl85", "txt", "arff", "csv")

#: Sub-folders of the data directory searched for a bare name, in this order.
_SEARCH_FOLDERS: tuple[str, ...] = ("binary", "categorical", "continuous", "osdt")

_KINDS: tuple[str, ...] = ("binary", "categorical", "continuous", "osdt", "mixed")

#: Data-file extensions (after an optional trailing ``.gz``) and the format each implies
#: (``None``: dl85 or txt, decided from the values).
_EXTENSIONS: dict[str, str | None] = {".txt": None, ".arff": "arff", ".csv": "csv"}

_LABEL = "class"

#: Column names (compared case-insensitively) taken as the target of an ARFF or CSV file without ``target``.
TARGET_NAMES: tuple[str, ...] = ("class", "label", "target", "y")

#: CSV values that are missing (after stripping); ``na_values`` adds to them.
MISSING_MARKERS: tuple[str, ...] = ("", "?", "NA", "NaN", "nan")

#: Prefix naming a bundled set explicitly, e.g. ``"bundled:iris"``.
BUNDLED_PREFIX = "bundled:"


# ----------------------------------------------------------------------------------------------------------
# Data directory
# ----------------------------------------------------------------------------------------------------------


def data_dir(path: PathLike | None = None) -> Path | None:
    """Locate the benchmark data directory.

    Parameters
    ----------
    path : str or path-like, optional
        An explicit directory; it must exist.

    Returns
    -------
    pathlib.Path or None
        The first of: ``path``; the environment variable ``ODTMIP_DATA`` (when set and non-empty);
        ``shared/datasets`` in the folder that contains the repository (located from this file), in the parent
        of the working directory, or in the working directory. ``None`` when neither argument nor variable is
        given and no default folder exists.

    Raises
    ------
    DataError
        When ``path`` or ``ODTMIP_DATA`` names something that is not an existing directory.
    """
    if path is not None:
        return _existing_dir(Path(path).expanduser(), "data directory")
    env = os.environ.get("ODTMIP_DATA")
    if env:
        return _existing_dir(Path(env).expanduser(), "ODTMIP_DATA")
    candidates = (
        Path(__file__).resolve().parents[3] / "shared" / "datasets",
        Path.cwd().parent / "shared" / "datasets",
        Path.cwd() / "shared" / "datasets",
    )
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    return None


_find_data_dir = data_dir  # reachable inside functions whose ``data_dir`` parameter shadows the name


def _existing_dir(path: Path, what: str) -> Path:
    if not path.exists():
        raise DataError(f"{what} {path} does not exist")
    if not path.is_dir():
        raise DataError(f"{what} {path} is not a directory")
    return path


# ----------------------------------------------------------------------------------------------------------
# Low-level helpers
# ----------------------------------------------------------------------------------------------------------


#: The first bytes of a file that show whether it is text: binary data (an image, a spreadsheet, random bytes) holds a
#: NUL byte or more than 1 % of _CONTROL, bytes that text does not hold (tab, newline, vertical tab, form feed,
#: carriage return and the old end-of-file mark 0x1a are text).
_SNIFF = 8192
_CONTROL = bytes([*range(1, 9), *range(14, 26), *range(27, 32), 127])


def _read_text(path: PathLike) -> str:
    """Return the decoded text of a (possibly gzipped) file; missing file -> DataError."""
    p = Path(path)
    if not p.exists():
        raise DataError(f"file not found: {p}")
    if p.is_dir():
        raise DataError(f"{p} is a directory, not a data file")
    raw = p.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise FormatError(f"{p}: corrupt gzip data ({exc})") from None
    head = raw[:_SNIFF]
    if b"\0" in head or len(head) - len(head.translate(None, _CONTROL)) > len(head) / 100:
        raise FormatError(f"{p} is not a text data file (binary data, e.g. an image, a spreadsheet or UTF-16 "
                          "text); odtmip reads CSV, ARFF and DL8.5/txt text files, optionally gzipped")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _split_name(name: str) -> tuple[str, str, bool]:
    """Split a file name into (stem, data extension, gzipped); the extension is '' when unknown."""
    gz = name.lower().endswith(".gz")
    base = name[:-3] if gz else name
    lower = base.lower()
    for ext in _EXTENSIONS:
        if lower.endswith(ext) and len(base) > len(ext):
            return base[: -len(ext)], ext, gz
    return base, "", gz


def _short_list(items: Sequence[Any], limit: int = 20) -> str:
    shown = ", ".join(str(item) for item in items[:limit])
    if len(items) > limit:
        shown += f", ... ({len(items)} in all)"
    return shown


def _named_target(columns: list, path: PathLike) -> str:
    """The one column named like a target (:data:`TARGET_NAMES`); a DataError listing the columns otherwise."""
    found = [c for c in columns if str(c).strip().lower() in TARGET_NAMES]
    if len(found) == 1:
        log.info("%s: target %r, the column named like a label (--target chooses another)", path, found[0])
        return found[0]
    if found:
        names = ", ".join(repr(c) for c in found[:-1]) + f" and {found[-1]!r}"
        raise DataError(f"{path}: columns {names} could each be the target; name it with --target "
                        f"(columns: {_short_list(columns)})")
    raise DataError(f"{path}: no column is named {', '.join(TARGET_NAMES[:-1])} or {TARGET_NAMES[-1]}; name the "
                    f"target with --target (columns: {_short_list(columns)})")


def _check_columns(names: Sequence[str], columns: list, what: str, path: PathLike) -> None:
    unknown = [name for name in names if name not in columns]
    if unknown:
        raise DataError(f"cannot {what} {unknown[0]!r}: no such column in {path} (columns: {_short_list(columns)})")


def _drop(frame: pd.DataFrame, drop: Sequence[str], target: str | int | None, path: PathLike) -> pd.DataFrame:
    if isinstance(target, str) and target in drop:
        raise DataError(f"the target {target!r} cannot also be dropped (--drop)")
    _check_columns(drop, list(frame.columns), "drop", path)
    return frame.drop(columns=list(drop))


def _select(
    frame: pd.DataFrame, target: str | int | None, path: PathLike, fixed: str | None = None,
    drop: Sequence[str] = (), categorical: Sequence[str] = (),
) -> tuple[pd.DataFrame, pd.Series]:
    """Drop columns, make ``categorical`` ones ``category`` and split off the target (``target``, else
    ``fixed``, else the column named like a target)."""
    frame = _drop(frame, drop, fixed if target is None else target, path)
    _check_columns(categorical, list(frame.columns), "make categorical", path)
    for name in categorical:
        if not isinstance(frame[name].dtype, pd.CategoricalDtype):
            frame[name] = frame[name].astype("category")
    if target is None:
        target = fixed if fixed is not None else _named_target(list(frame.columns), path)
    return _split_target(frame, target, path)


def _split_target(frame: pd.DataFrame, target: str | int, path: PathLike) -> tuple[pd.DataFrame, pd.Series]:
    """Split ``frame`` into features and the target column (a name or a position)."""
    columns = list(frame.columns)
    if isinstance(target, bool) or not isinstance(target, str | int | np.integer):
        raise OptionError(f"target must be a column name or position, got {target!r}")
    if isinstance(target, str):
        if target not in columns:
            raise DataError(f"target column {target!r} not found in {path}; available columns: {_short_list(columns)}")
        name = target
    else:
        position = int(target)
        if not -len(columns) <= position < len(columns):
            raise DataError(f"target position {position} out of range for {path}, which has {len(columns)} columns")
        name = columns[position]
    if len(columns) < 2:
        raise DataError(f"{path} has no feature columns besides the target {name!r}")
    y = frame[name]
    X = frame.drop(columns=[name])
    return X, y


def _require_rows(frame: pd.DataFrame, path: PathLike) -> None:
    if len(frame) == 0:
        raise DataError(f"{path} contains no data rows")


# ----------------------------------------------------------------------------------------------------------
# DL8.5 / txt: label first, whitespace separated, no header
# ----------------------------------------------------------------------------------------------------------


def _parse_label_first(path: PathLike, binary: bool | None) -> tuple[pd.DataFrame, pd.Series]:
    """The one parser behind :func:`read_dl85`, :func:`read_txt` and ``.txt`` inference.

    ``binary=True`` requires 0/1 features and whole-number labels; ``False`` reads real features;
    ``None`` gives the binary layout when every feature is 0/1 and the labels are whole numbers.
    """
    text = _read_text(path)
    rows: list[list[str]] = []
    line_numbers: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if fields:
            rows.append(fields)
            line_numbers.append(number)
    if not rows:
        raise DataError(f"{path} contains no data rows")
    width = len(rows[0])
    for fields, number in zip(rows, line_numbers, strict=True):
        if len(fields) != width:
            raise FormatError(f"{path}, line {number}: {len(fields)} values where line {line_numbers[0]} has {width}")
    if width < 2:
        raise DataError(f"{path} has a label column but no feature columns")
    try:
        values = np.array(rows, dtype=np.float64)
    except ValueError:
        for fields, number in zip(rows, line_numbers, strict=True):
            for token in fields:
                try:
                    float(token)
                except ValueError:
                    raise FormatError(f"{path}, line {number}: {token!r} is not a number") from None
        raise  # pragma: no cover - numpy and float() disagree
    labels, features = values[:, 0], values[:, 1:]

    feature_ok = (features == 0) | (features == 1)
    label_ok = np.isfinite(labels) & (labels == np.round(labels))
    if binary is None:
        binary = bool(feature_ok.all() and label_ok.all())
    elif binary:
        bad_rows = np.flatnonzero(~feature_ok.all(axis=1))
        if bad_rows.size:
            row = int(bad_rows[0])
            col = int(np.flatnonzero(~feature_ok[row])[0])
            raise FormatError(
                f"{path}, line {line_numbers[row]}: feature f{col} = {rows[row][col + 1]!r} is not 0 or 1"
            )
        bad_labels = np.flatnonzero(~label_ok)
        if bad_labels.size:
            row = int(bad_labels[0])
            raise FormatError(f"{path}, line {line_numbers[row]}: label {rows[row][0]!r} is not a whole number")

    names = [f"f{j}" for j in range(features.shape[1])]
    if binary:
        X = pd.DataFrame(features.astype(np.int8), columns=names)
    else:
        X = pd.DataFrame(features, columns=names)
    if label_ok.all():
        y = pd.Series(labels.astype(np.int64), name=_LABEL)
    else:
        y = pd.Series(labels, name=_LABEL)
    return X, y


def read_dl85(path: PathLike) -> tuple[pd.DataFrame, pd.Series]:
    """Read a DL8.5/MurTree binary data file.

    One instance per line: the label, then the 0/1 features, separated by whitespace, no header. The file
    may be gzip-compressed.

    Parameters
    ----------
    path : str or path-like
        The file.

    Returns
    -------
    X : pandas.DataFrame
        int8 0/1 columns ``f0, f1, ...``.
    y : pandas.Series
        int64 labels named ``"class"``.

    Raises
    ------
    DataError
        File not found, no data rows, or no feature column.
    FormatError
        Rows of different length, a non-numeric token, a feature other than 0/1 or a label that is not a
        whole number (the message names the line).
    """
    return _parse_label_first(path, binary=True)


def read_txt(path: PathLike) -> tuple[pd.DataFrame, pd.Series]:
    """Read a label-first, whitespace-separated file with real-valued features (ConTree/Quant-BnB layout).

    Parameters
    ----------
    path : str or path-like
        The file, optionally gzip-compressed.

    Returns
    -------
    X : pandas.DataFrame
        float64 columns ``f0, f1, ...``.
    y : pandas.Series
        Labels named ``"class"``: int64 when all are whole numbers, float64 otherwise.

    Raises
    ------
    DataError
        File not found, no data rows, or no feature column.
    FormatError
        Rows of different length or a non-numeric token.
    """
    return _parse_label_first(path, binary=False)


# ----------------------------------------------------------------------------------------------------------
# ARFF
# ----------------------------------------------------------------------------------------------------------

_NUMERIC_TYPES = frozenset({"numeric", "real", "integer"})
_TEXT_TYPES = frozenset({"string", "date"})


def _split_fields(line: str, where: str) -> list[str | None]:
    """Split a comma-separated ARFF line; quotes (' or ") are removed, an unquoted ``?`` becomes None."""
    if "'" not in line and '"' not in line:
        return [None if (f := field.strip()) == "?" else f for field in line.split(",")]
    fields: list[str | None] = []
    i, n = 0, len(line)
    while True:
        while i < n and line[i] in " \t":
            i += 1
        if i < n and line[i] in "'\"":
            quote = line[i]
            i += 1
            chars: list[str] = []
            while i < n and line[i] != quote:
                if line[i] == "\\" and i + 1 < n:
                    i += 1
                chars.append(line[i])
                i += 1
            if i >= n:
                raise FormatError(f"{where}: unterminated quote")
            i += 1
            value: str | None = "".join(chars)
            while i < n and line[i] in " \t":
                i += 1
            if i < n and line[i] != ",":
                raise FormatError(f"{where}: unexpected text after a quoted value")
        else:
            start = i
            while i < n and line[i] != ",":
                i += 1
            value = line[start:i].strip()
            if value == "?":
                value = None
        fields.append(value)
        if i >= n:
            return fields
        i += 1  # the comma


def _parse_attribute(rest: str, where: str) -> tuple[str, str, list[str] | None]:
    """Parse what follows ``@attribute``: returns (name, kind, categories)."""
    rest = rest.strip()
    if not rest:
        raise FormatError(f"{where}: @attribute without a name")
    if rest[0] in "'\"":
        quote = rest[0]
        end = 1
        while end < len(rest) and rest[end] != quote:
            end += 2 if rest[end] == "\\" else 1
        if end >= len(rest):
            raise FormatError(f"{where}: unterminated quote in attribute name")
        name = rest[1:end].replace("\\" + quote, quote)
        spec = rest[end + 1 :].strip()
    else:
        end = 0
        while end < len(rest) and not rest[end].isspace() and rest[end] != "{":
            end += 1
        name, spec = rest[:end], rest[end:].strip()
    if not spec:
        raise FormatError(f"{where}: attribute {name!r} has no type")
    if spec.startswith("{"):
        close = spec.rfind("}")
        if close < 0:
            raise FormatError(f"{where}: nominal list of attribute {name!r} has no closing brace")
        values = _split_fields(spec[1:close], where)
        if any(v is None or v == "" for v in values):
            raise FormatError(f"{where}: nominal list of attribute {name!r} has an empty or '?' value")
        categories = [v for v in values if v is not None]
        if len(set(categories)) != len(categories):
            raise FormatError(f"{where}: nominal list of attribute {name!r} repeats a value")
        return name, "nominal", categories
    kind = spec.split()[0].lower()
    if kind in _NUMERIC_TYPES:
        return name, "numeric", None
    if kind in _TEXT_TYPES:
        return name, "string", None
    raise FormatError(f"{where}: attribute {name!r} has unsupported type {spec.split()[0]!r}")


def read_arff(
    path: PathLike, target: str | int | None = None, *, drop: Sequence[str] = (), categorical: Sequence[str] = ()
) -> tuple[pd.DataFrame, pd.Series]:
    """Read a dense ARFF file.

    Handles ``%`` comment lines, case-insensitive ``@relation``/``@attribute``/``@data``, quoted names and
    values (single or double quotes, backslash escapes), and nominal lists such as ``{ 'n', 'y'}``.

    Parameters
    ----------
    path : str or path-like
        The file, optionally gzip-compressed.
    target : str or int, optional
        The label attribute, by name or position. Default: the one attribute named (in any case) ``class``,
        ``label``, ``target`` or ``y``. Files whose label has another name (e.g. SPECT's first attribute
        ``OVERALL_DIAGNOSIS``) need ``target``.
    drop, categorical : sequence of str
        Attributes to leave out, and attributes to return as ``category`` whatever their type.

    Returns
    -------
    X : pandas.DataFrame
        Nominal attributes as ``category`` with the declared categories in declared order (quotes removed,
        values kept as strings, so ``{1,2,3}`` gives categories ``"1", "2", "3"``); numeric, real and integer
        attributes as float64; string and date attributes as strings.
    y : pandas.Series
        The target attribute, with the same typing, named after it.

    Raises
    ------
    DataError
        File not found, no attributes, no data rows, an unknown column, or no target given or named as such.
    FormatError
        Malformed header or data line, sparse ARFF, an unsupported attribute type, a wrong number of values,
        a non-numeric value in a numeric attribute, or a nominal value not declared (the message names the
        line and attribute).
    """
    text = _read_text(path)
    attributes: list[tuple[str, str, list[str] | None]] = []
    rows: list[list[str | None]] = []
    row_lines: list[int] = []
    in_data = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        where = f"{path}, line {number}"
        if not in_data:
            keyword = line.split(None, 1)[0].lower()
            if keyword == "@relation":
                continue
            if keyword.startswith("@attribute"):
                attributes.append(_parse_attribute(line[len("@attribute") :], where))
            elif keyword == "@data":
                if not attributes:
                    raise FormatError(f"{where}: @data before any @attribute")
                in_data = True
            else:
                raise FormatError(f"{where}: expected @relation, @attribute or @data, got {line[:40]!r}")
            continue
        if line.startswith("{"):
            raise FormatError(f"{where}: sparse ARFF data is not supported")
        fields = _split_fields(line, where)
        if len(fields) != len(attributes):
            raise FormatError(f"{where}: {len(fields)} values, expected {len(attributes)} attributes")
        rows.append(fields)
        row_lines.append(number)
    if not in_data:
        if not attributes:
            raise DataError(f"{path} is empty or has no ARFF header")
        raise FormatError(f"{path}: no @data section")
    if not rows:
        raise DataError(f"{path} contains no data rows")

    names = [name for name, _, _ in attributes]
    if len(set(names)) != len(names):
        duplicates = sorted({n for n in names if names.count(n) > 1})
        raise FormatError(f"{path}: attribute names repeated: {_short_list(duplicates)}")
    columns: dict[str, Any] = {}
    for index, ((name, kind, categories), values) in enumerate(zip(attributes, zip(*rows, strict=True), strict=True)):
        if kind == "numeric":
            try:
                columns[name] = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
            except ValueError:
                for row, value in enumerate(values):
                    try:
                        float(value if value is not None else "nan")
                    except ValueError:
                        raise FormatError(
                            f"{path}, line {row_lines[row]}: {value!r} in numeric attribute {name!r} is not a number"
                        ) from None
                raise  # pragma: no cover
        elif kind == "nominal":
            assert categories is not None
            declared = set(categories)
            for row, value in enumerate(values):
                if value is not None and value not in declared:
                    raise FormatError(
                        f"{path}, line {row_lines[row]}: value {value!r} of attribute {name!r} "
                        f"(column {index + 1}) is not declared"
                    )
            columns[name] = pd.Categorical(values, categories=categories)
        else:
            columns[name] = pd.array(values, dtype=object)
    frame = pd.DataFrame(columns)
    return _select(frame, target, path, drop=drop, categorical=categorical)


# ----------------------------------------------------------------------------------------------------------
# CSV
# ----------------------------------------------------------------------------------------------------------


def _sniff_delimiter(header: str) -> str:
    """Pick the delimiter from the header line: the most frequent of ``;``, tab, ``,``; else whitespace."""
    counts = {sep: header.count(sep) for sep in (",", ";", "\t")}
    best = max(counts, key=lambda sep: counts[sep])
    if counts[best] > 0:
        return best
    if len(header.split()) > 1:
        return r"\s+"
    return ","


_PLAIN = r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?"
#: Decimal mark -> (a number written with it and an optional thousands separator, that separator).
_CONVENTIONS: dict[str, tuple[str, str]] = {
    ",": (r"[+-]?(\d{1,3}(\.\d{3})+|\d+)(,\d+)?", "."),
    ".": (r"[+-]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?", ","),
}
_CONVENTION_TEXT = {",": "a decimal comma", ".": "',' between thousands"}
_BOOLS = {"true": True, "false": False}


def _numeric(numbers: np.ndarray, missing: np.ndarray) -> pd.Series:
    """The numbers of the values present as a column: int64/float64 as read, float64 with NaN if any is missing."""
    if not missing.any():
        return pd.Series(numbers)
    out = np.full(len(missing), np.nan)
    out[~missing] = numbers
    return pd.Series(out)


def _text(values: np.ndarray, missing: np.ndarray) -> pd.Series:
    """Text values as a ``category`` column with the sorted distinct values as categories."""
    present = values[~missing]
    return pd.Series(pd.Categorical(np.where(missing, None, values), categories=sorted(set(present))))


def _plain_numbers(present: np.ndarray) -> np.ndarray | None:
    numbers = pd.to_numeric(present, errors="coerce")
    return numbers if np.isfinite(numbers).all() else None


def _read_with(present: np.ndarray, mark: str) -> np.ndarray | None:
    """The values as numbers written with decimal mark ``mark`` (and its thousands separator), or None."""
    pattern, thousands = _CONVENTIONS[mark]
    values = pd.Series(present, dtype=object)
    if not values.str.fullmatch(pattern).all():
        return None
    return values.str.replace(thousands, "", regex=False).str.replace(mark, ".", regex=False).astype(float).to_numpy()


def _refuse_strays(name: str, present: np.ndarray) -> None:
    """Raise when more than half of the text values of column ``name`` are numbers."""
    values = pd.Series(present, dtype=object)
    plain = values.str.fullmatch(_PLAIN)
    number = plain | values.str.fullmatch(_CONVENTIONS[","][0]) | values.str.fullmatch(_CONVENTIONS["."][0])
    if 2 * int(number.sum()) <= len(values):
        return
    keep = f"keep the column as text with --categorical {name}"
    strays = values[~number]
    if len(strays):
        raise DataError(f"column {name!r}: {len(strays)} of {len(values)} values are not numbers (e.g. "
                        f"{strays.iloc[0]!r}); clean them, mark them missing with --na-values, or {keep}")
    raise DataError(f"column {name!r} writes its numbers in more than one way (e.g. {values[plain].iloc[0]!r} and "
                    f"{values[~plain].iloc[0]!r}); write them one way, or {keep}")


def _type_csv(
    frame: pd.DataFrame, path: PathLike, markers: set[str], decimal: str | None, categorical: Sequence[str]
) -> pd.DataFrame:
    """Type the text columns of a CSV file (see "CSV typing" in the module docstring)."""
    typed: dict[str, pd.Series] = {}
    pending: dict[str, tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]] = {}  # read with a convention
    for name in frame.columns:
        values = frame[name].astype(object).fillna("").str.strip().to_numpy(dtype=object)
        missing = np.isin(values, list(markers))
        present = values[~missing]
        if name in categorical:
            typed[name] = _text(values, missing)
            continue
        numbers = _plain_numbers(present)
        if numbers is not None:
            typed[name] = _numeric(numbers, missing)
            continue
        if not missing.any() and all(v.lower() in _BOOLS for v in present):
            typed[name] = pd.Series([_BOOLS[v.lower()] for v in values], dtype=bool)
            continue
        readings = {mark: _read_with(present, mark) for mark in ((decimal,) if decimal else _CONVENTIONS)}
        readings = {mark: numbers for mark, numbers in readings.items() if numbers is not None}
        if readings:
            pending[name] = (present, missing, readings)
            continue
        _refuse_strays(name, present)
        typed[name] = _text(values, missing)
    settled = {name: next(iter(r)) for name, (_, _, r) in pending.items() if len(r) == 1}
    if len(set(settled.values())) > 1:
        comma, point = (next(n for n, m in settled.items() if m == mark) for mark in (",", "."))
        raise DataError(f"{path}: column {comma!r} has numbers with a decimal comma but column {point!r} has ',' "
                        "between thousands; choose with --decimal , or --decimal .")
    for name, (present, missing, readings) in pending.items():
        if len(readings) > 1 and not settled:
            at = int(np.flatnonzero(readings[","] != readings["."])[0])
            raise DataError(f"{path}: column {name!r}: {present[at]!r} reads as {readings[','][at]:.15g} with a "
                            f"decimal comma and as {readings['.'][at]:.15g} with ',' between thousands; choose with "
                            "--decimal , or --decimal .")
        mark = next(iter(readings)) if len(readings) == 1 else next(iter(settled.values()))
        typed[name] = _numeric(readings[mark], missing)
        if decimal is None:
            at = int(np.flatnonzero(~pd.Series(present, dtype=object).str.fullmatch(_PLAIN))[0])
            log.warning("%s: column %r has numbers with %s: %r read as %.15g (--decimal chooses)", path, name,
                        _CONVENTION_TEXT[mark], present[at], readings[mark][at])
    return pd.DataFrame({name: typed[name] for name in frame.columns})


def read_csv(
    path: PathLike, target: str | int | None = None, *, na_values: Sequence[str] = (), decimal: str | None = None,
    drop: Sequence[str] = (), categorical: Sequence[str] = (),
) -> tuple[pd.DataFrame, pd.Series]:
    """Read a delimited text file with a header row.

    The delimiter is taken from the header line: the most frequent of ``,``, ``;`` and tab, or runs of
    whitespace when none occurs. A UTF-8 byte order mark is dropped. The values are typed as the module
    documentation describes ("CSV typing").

    Parameters
    ----------
    path : str or path-like
        The file, optionally gzip-compressed.
    target : str or int, optional
        The label column, by name or position; default the one column named (in any case) ``class``,
        ``label``, ``target`` or ``y``.
    na_values : sequence of str
        Values that are missing, besides :data:`MISSING_MARKERS`.
    decimal : {",", "."}, optional
        The decimal mark of numbers that are not plain (``1,5``, ``1.234,5``, ``1,234.5``); default: detected.
    drop, categorical : sequence of str
        Columns to leave out, and columns to keep as text (``category``) whatever their values.

    Returns
    -------
    X : pandas.DataFrame
        Numeric columns as int64 (whole numbers, none missing) or float64; ``True``/``False`` columns as bool;
        text columns as ``category`` with the sorted distinct values as categories.
    y : pandas.Series
        The target column, typed the same way, named after it.

    Raises
    ------
    DataError
        File not found, no header, no data rows, an unknown column, no target given or named as such (the
        message lists the columns), or a column with stray non-numbers or undecidable number formats.
    FormatError
        A line with more fields than the header.
    OptionError
        ``decimal`` other than ``","`` or ``"."``.
    """
    if decimal not in (None, ",", "."):
        raise OptionError(f"decimal must be ',' or '.', got {decimal!r}")
    text = _read_text(path)
    header = next((line for line in text.splitlines() if line.strip()), None)
    if header is None:
        raise DataError(f"{path} is empty")
    sep = _sniff_delimiter(header)
    frame = _parse_csv(text, sep, path)  # pandas' C parser types the numbers
    _require_rows(frame, path)
    names = [str(c).strip() for c in frame.columns]
    twice = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if twice is not None:
        raise DataError(f"{path}: two columns are named {twice!r}")
    position = {name: i for i, name in enumerate(names)}
    frame.columns = names
    frame = _drop(frame, drop, target, path)
    _check_columns(categorical, list(frame.columns), "make categorical", path)
    markers = set(MISSING_MARKERS) | {str(v).strip() for v in na_values}
    # a column of finite numbers is numbers as read, unless a missing marker is itself a number ("-999"); the others
    # are read again as text and typed by the rules above
    quick = not np.isfinite(pd.to_numeric(np.array(sorted(markers), dtype=object), errors="coerce")).any()
    numbers = [name for name in frame.columns if quick and name not in categorical and _finite_numbers(frame[name])]
    rest = [name for name in frame.columns if name not in numbers]
    if rest:
        texts = _parse_csv(text, sep, path, usecols=[position[name] for name in rest])
        texts.columns = rest
        texts = _type_csv(texts, path, markers, decimal, categorical)
        frame = pd.DataFrame({name: frame[name] if name in numbers else texts[name] for name in frame.columns})
    return _select(frame, target, path)


def _parse_csv(text: str, sep: str | None, path: PathLike, usecols: list[int] | None = None) -> pd.DataFrame:
    """The CSV ``text``: every column typed by pandas, or the columns at ``usecols`` as text."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)  # more fields than names: pandas drops some
            return pd.read_csv(io.StringIO(text), sep=sep, dtype=None if usecols is None else str, usecols=usecols,
                               keep_default_na=False, na_filter=False, index_col=False, skipinitialspace=True,
                               skip_blank_lines=True)
    except pd.errors.EmptyDataError:
        raise DataError(f"{path} is empty") from None
    except pd.errors.ParserError as exc:
        message = " ".join(str(exc).split())
        raise FormatError(f"{path}: {message}") from None
    except pd.errors.ParserWarning:
        raise FormatError(f"{path}: the data lines have more fields than the header names") from None


def _finite_numbers(column: pd.Series) -> bool:
    """Whether pandas read ``column`` as int64 or float64 numbers, all finite."""
    return column.dtype in (np.int64, np.float64) and bool(np.isfinite(column.to_numpy()).all())


# ----------------------------------------------------------------------------------------------------------
# Bundled and generated data sets
# ----------------------------------------------------------------------------------------------------------

_TTT_SQUARES = tuple(
    f"{row}-{col}-square" for row in ("top", "middle", "bottom") for col in ("left", "middle", "right")
)
_TTT_VALUES = ("x", "o", "b")
_TTT_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def _has_line(board: tuple[str, ...], player: str) -> bool:
    return any(board[a] == board[b] == board[c] == player for a, b, c in _TTT_LINES)


def _tic_tac_toe_end_boards() -> list[tuple[str, ...]]:
    """All distinct boards at which a game (x first, alternate moves) ends."""
    seen: set[tuple[str, ...]] = set()
    ends: list[tuple[str, ...]] = []
    stack: list[tuple[str, ...]] = [("b",) * 9]
    while stack:
        board = stack.pop()
        if board in seen:
            continue
        seen.add(board)
        if _has_line(board, "x") or _has_line(board, "o") or "b" not in board:
            ends.append(board)
            continue
        player = "x" if board.count("x") == board.count("o") else "o"
        for square, value in enumerate(board):
            if value == "b":
                stack.append(board[:square] + (player,) + board[square + 1 :])
    return ends


def _tic_tac_toe() -> pd.DataFrame:
    rank = {value: i for i, value in enumerate(_TTT_VALUES)}

    def order(board: tuple[str, ...]) -> tuple[int, list[int]]:
        outcome = 0 if _has_line(board, "x") else 1 if _has_line(board, "o") else 2
        return outcome, [rank[value] for value in board]

    boards = sorted(_tic_tac_toe_end_boards(), key=order)
    frame = pd.DataFrame(boards, columns=list(_TTT_SQUARES)).astype(pd.CategoricalDtype(list(_TTT_VALUES)))
    labels = ["positive" if _has_line(board, "x") else "negative" for board in boards]
    frame[_LABEL] = pd.Categorical(labels, categories=["positive", "negative"])
    return frame


_MONK_DOMAINS: tuple[tuple[int, ...], ...] = ((1, 2, 3), (1, 2, 3), (1, 2), (1, 2, 3), (1, 2, 3, 4), (1, 2))


def _monk1(a: tuple[int, ...]) -> bool:
    return a[0] == a[1] or a[4] == 1


def _monk2(a: tuple[int, ...]) -> bool:
    return sum(value == 1 for value in a) == 2


def _monk3(a: tuple[int, ...]) -> bool:
    return (a[4] == 3 and a[3] == 1) or (a[4] != 4 and a[1] != 3)


def _monk(rule: Callable[[tuple[int, ...]], bool]) -> pd.DataFrame:
    instances = list(itertools.product(*_MONK_DOMAINS))
    names = [f"a{i}" for i in range(1, 7)]
    frame = pd.DataFrame(
        {
            name: pd.Categorical([a[i] for a in instances], categories=list(domain))
            for i, (name, domain) in enumerate(zip(names, _MONK_DOMAINS, strict=True))
        }
    )
    frame[_LABEL] = np.array([int(rule(a)) for a in instances], dtype=np.int64)
    return frame


def _sklearn(loader_name: str) -> pd.DataFrame:
    from sklearn import datasets as skd

    bunch = getattr(skd, loader_name)(as_frame=True)
    frame = bunch.data.copy()
    frame[_LABEL] = pd.Categorical.from_codes(
        np.asarray(bunch.target), categories=[str(name) for name in bunch.target_names]
    )
    return frame


#: name -> (source, kind, rows, features, classes, builder)
_BUNDLED: dict[str, tuple[str, str, int, int, int, Callable[[], pd.DataFrame]]] = {
    "breast-cancer": ("scikit-learn", "continuous", 569, 30, 2, lambda: _sklearn("load_breast_cancer")),
    "iris": ("scikit-learn", "continuous", 150, 4, 3, lambda: _sklearn("load_iris")),
    "wine": ("scikit-learn", "continuous", 178, 13, 3, lambda: _sklearn("load_wine")),
    "tic-tac-toe": ("generated", "categorical", 958, 9, 2, _tic_tac_toe),
    "monk1": ("generated", "categorical", 432, 6, 2, lambda: _monk(_monk1)),
    "monk2": ("generated", "categorical", 432, 6, 2, lambda: _monk(_monk2)),
    "monk3": ("generated", "categorical", 432, 6, 2, lambda: _monk(_monk3)),
}

#: Names :func:`load` accepts without any file.
BUNDLED_DATASETS: tuple[str, ...] = tuple(_BUNDLED)


# ----------------------------------------------------------------------------------------------------------
# load and list
# ----------------------------------------------------------------------------------------------------------


def _check_format(format: str | None) -> str | None:
    if format is None:
        return None
    if not isinstance(format, str) or format.strip().lower() not in FORMATS:
        raise OptionError(f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    return format.strip().lower()


def _infer_format(path: Path) -> str | None:
    """Format from the extension; ``None`` for ``.txt`` (dl85 or txt, decided from the values)."""
    _, ext, _ = _split_name(path.name)
    if not ext:
        raise FormatError(
            f"cannot infer the format of {path} from its name; use a .txt, .arff or .csv name "
            f"(optionally .gz) or pass format= one of {', '.join(FORMATS)}"
        )
    return _EXTENSIONS[ext]


def _find_by_stem(root: Path, relative: Path) -> list[Path]:
    """Files under ``root`` whose name without data extensions equals ``relative.name``."""
    if relative.parent != Path("."):
        folders = [root / relative.parent]
    else:
        folders = [root / folder for folder in _SEARCH_FOLDERS]
    matches = []
    for folder in folders:
        if not folder.is_dir():
            continue
        for entry in sorted(folder.iterdir()):
            stem, ext, _ = _split_name(entry.name)
            if ext and stem == relative.name and entry.is_file():
                matches.append(entry)
    return matches


def _resolve_source(source: PathLike, data_dir_arg: PathLike | None) -> Path:
    path = Path(source).expanduser()
    if path.is_file():
        return path
    if path.exists():
        raise DataError(f"{path} is a directory, not a data file")
    root = None if path.is_absolute() else _find_data_dir(data_dir_arg)
    if root is not None:
        candidate = root / path
        if candidate.is_file():
            return candidate
        matches = _find_by_stem(root, path)
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            found = [m.relative_to(root).as_posix() for m in matches]
            raise DataError(f"name {str(source)!r} is ambiguous in {root}; use one of: {', '.join(found)}")
    where = f"no such file in data directory {root}" if root is not None else "no data directory found"
    if path.is_absolute():
        where = "no such file"
    raise DataError(
        f"dataset {str(source)!r} not found: not a bundled name ({', '.join(BUNDLED_DATASETS)}), "
        f"not an existing file, {where} (set ODTMIP_DATA or pass data_dir)"
    )


def _bundled_name(source: PathLike) -> str | None:
    """The bundled set ``source`` names (``"iris"`` when no file ``iris`` exists, or ``"bundled:iris"``)."""
    if not isinstance(source, str):
        return None
    if source.startswith(BUNDLED_PREFIX):
        name = source[len(BUNDLED_PREFIX) :]
        if name not in _BUNDLED:
            raise DataError(f"no bundled data set {name!r}; the bundled sets are {', '.join(BUNDLED_DATASETS)}")
        return name
    if source not in _BUNDLED:
        return None
    if Path(source).expanduser().is_file():
        log.info("%s: loading the file %s, not the bundled data set (write %s%s for that)", source,
                 Path(source).resolve(), BUNDLED_PREFIX, source)
        return None
    return source


def _label_first_target(target: str | int | None, path: Path) -> None:
    if target is None or (not isinstance(target, bool) and target in (0, "0", _LABEL)):
        return
    raise OptionError(f"target={target!r} is invalid for {path}: the label of a dl85/txt file is column 0")


def load(
    source: PathLike,
    target: str | int | None = None,
    format: str | None = None,
    data_dir: PathLike | None = None,
    *,
    na_values: Sequence[str] = (),
    decimal: str | None = None,
    drop: Sequence[str] = (),
    categorical: Sequence[str] = (),
) -> tuple[pd.DataFrame, pd.Series]:
    """Load a data set by bundled name, file path or name in the benchmark folder.

    ``source`` is resolved in this order:

    1. ``"bundled:NAME"``: the bundled set NAME (:data:`BUNDLED_DATASETS`);
    2. an existing file (absolute or relative to the working directory), even when it is named like a
       bundled set (logged at INFO level);
    3. a bundled name (only when ``source`` is a ``str``);
    4. a path relative to the data directory (see :func:`data_dir`), e.g. ``"binary/anneal.txt"``;
    5. a name without extensions, e.g. ``"anneal"``, searched in the ``binary``, ``categorical``,
       ``continuous`` and ``osdt`` sub-folders, or ``"binary/mushroom"`` searched in one sub-folder. A name
       that matches several files is an error listing them.

    Parameters
    ----------
    source : str or path-like
        What to load.
    target : str or int, optional
        Label column by name or position for ARFF/CSV files and bundled sets. Default: ``"class"`` for bundled
        sets, the first value of a dl85/txt line, and for ARFF/CSV files the one column named (in any case)
        ``class``, ``label``, ``target`` or ``y`` -- with none or several, a :class:`DataError` lists the
        columns. For dl85/txt files only ``None``, ``0`` or ``"class"`` are accepted.
    format : {"dl85", "txt", "arff", "csv"}, optional
        File format; default from the extension: ``.arff[.gz]`` arff, ``.csv[.gz]`` csv, ``.txt[.gz]`` dl85
        when every feature is 0/1 and every label a whole number, txt otherwise. Ignored for bundled names.
    data_dir : str or path-like, optional
        The benchmark folder; default :func:`data_dir`'s search. Only consulted when ``source`` is not a
        bundled name or an existing file.
    na_values, decimal : optional
        CSV files only: extra missing-value markers and the decimal mark (see :func:`read_csv`).
    drop : sequence of str
        Columns to leave out (before typing and before the target is chosen).
    categorical : sequence of str
        Columns to return as ``category`` whatever their values.

    Returns
    -------
    X : pandas.DataFrame
        Raw features (see the module documentation for the typing of each source).
    y : pandas.Series
        Labels.

    Raises
    ------
    OptionError
        Unknown ``format``, a ``target`` the format does not allow, or ``na_values``/``decimal`` for a source
        that is not a CSV file.
    DataError
        Not found, ambiguous name, empty data, an unknown column, no target given or named as such, a column
        CSV typing refuses, or a bad ``data_dir``/``ODTMIP_DATA``.
    FormatError
        The file cannot be parsed, or its format cannot be inferred from its name.
    """
    fmt = _check_format(format)
    bundled = _bundled_name(source)
    path = None if bundled is not None else _resolve_source(source, data_dir)
    if path is not None and fmt is None:
        try:
            fmt = _infer_format(path)
        except FormatError as exc:
            if source not in _BUNDLED:
                raise
            raise FormatError(f"{exc}; for the bundled set write {BUNDLED_PREFIX}{source}") from None
    if fmt == "csv" and bundled is None:
        return read_csv(path, target, na_values=na_values, decimal=decimal, drop=drop, categorical=categorical)
    if na_values or decimal is not None:
        raise OptionError(f"na_values and decimal are for CSV files; {bundled or path} is not one")
    if bundled is not None:
        return _select(_BUNDLED[bundled][-1](), target, bundled, _LABEL, drop, categorical)
    if fmt == "arff":
        return read_arff(path, target, drop=drop, categorical=categorical)
    _label_first_target(target, path)
    X, y = _parse_label_first(path, {"dl85": True, "txt": False, None: None}[fmt])
    return _select(pd.concat([y, X], axis=1), None, path, _LABEL, drop, categorical)


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def _kind_of(relative: str, collection: str | None) -> str:
    if collection in _KINDS:
        return collection
    folder = relative.split("/", 1)[0] if "/" in relative else ""
    return folder if folder in _SEARCH_FOLDERS else "mixed"


def list_datasets(data_dir: PathLike | None = None) -> pd.DataFrame:
    """List the bundled data sets and the files of the benchmark folder.

    Parameters
    ----------
    data_dir : str or path-like, optional
        The benchmark folder; default :func:`data_dir`'s search. Without a folder only bundled sets are
        listed.

    Returns
    -------
    pandas.DataFrame
        One row per data set, bundled names first, with columns ``name`` (accepted by :func:`load`: the file
        name without extensions, prefixed by its folder when that name is not unique), ``source``
        (``"generated"``, ``"scikit-learn"`` or the path relative to the folder), ``kind`` (``"binary"``,
        ``"categorical"``, ``"continuous"``, ``"osdt"`` or ``"mixed"``) and ``rows``, ``features``,
        ``classes`` (nullable integers). For files the counts come from ``manifest.csv`` (columns ``file``,
        ``rows``, ``features``, ``classes``, ``collection``) when it exists; otherwise the sub-folders are
        scanned for data files and the counts are missing. No data file is opened.

    Raises
    ------
    DataError
        When ``data_dir`` or ``ODTMIP_DATA`` names a missing directory.
    """
    records: list[dict[str, Any]] = [
        {"name": name, "source": source, "kind": kind, "rows": rows, "features": feats, "classes": classes}
        for name, (source, kind, rows, feats, classes, _) in _BUNDLED.items()
    ]
    root = _find_data_dir(data_dir)
    files: list[dict[str, Any]] = []
    if root is not None:
        manifest = root / "manifest.csv"
        if manifest.is_file():
            with manifest.open(newline="", encoding="utf-8-sig") as handle:
                for row in csv.DictReader(handle):
                    relative = (row.get("file") or "").strip()
                    if not relative:
                        continue
                    files.append(
                        {
                            "source": relative,
                            "kind": _kind_of(relative, (row.get("collection") or "").strip() or None),
                            "rows": _int_or_none(row.get("rows")),
                            "features": _int_or_none(row.get("features")),
                            "classes": _int_or_none(row.get("classes")),
                        }
                    )
        else:
            for folder in _SEARCH_FOLDERS:
                directory = root / folder
                if not directory.is_dir():
                    continue
                for entry in sorted(directory.iterdir()):
                    if entry.is_file() and _split_name(entry.name)[1]:
                        relative = f"{folder}/{entry.name}"
                        files.append(
                            {"source": relative, "kind": folder, "rows": None, "features": None, "classes": None}
                        )
    stems = [_split_name(Path(f["source"]).name)[0] for f in files]
    folders = [Path(f["source"]).parent.as_posix() for f in files]
    stem_count = Counter(list(_BUNDLED) + stems)
    folder_stem_count = Counter(zip(folders, stems, strict=True))
    for record, stem, folder in zip(files, stems, folders, strict=True):
        if folder not in _SEARCH_FOLDERS:
            name = record["source"]
        elif stem_count[stem] == 1:
            name = stem
        elif folder_stem_count[folder, stem] == 1:
            name = f"{folder}/{stem}"
        else:
            name = record["source"]
        records.append({"name": name, **record})
    table = pd.DataFrame.from_records(records, columns=["name", "source", "kind", "rows", "features", "classes"])
    for column in ("rows", "features", "classes"):
        table[column] = table[column].astype("Int64")
    return table
