"""Fitted trees as files, for the commands around them (:mod:`odtmip.cli.predict`): ``odtmip fit --save FILE
--weight COLUMN``, ``odtmip predict`` and ``odtmip show``.

A tree file is one JSON object (:class:`SavedTree`) that holds everything prediction needs, so that a tree fitted
once can label new data anywhere odtmip is installed::

    {"format": "odtmip-tree", "version": 1,
     "target": "class",                                   # the label column's name (None when unknown)
     "features": [{"name": "a1", "kind": "categorical"},  # every raw column the tree was fitted on, in order:
                  {"name": "age", "kind": "numeric"}],    #   "binary", "categorical" or "numeric"
     "fit": {"solver": "dp", "status": "optimal", "stop_reason": "solved", "objective": 0.0, "bound": 0.0,
             "gap": 0.0, "seconds": 0.01, "n_samples": 432, "options": {"max_depth": 2}},
     "tree": {...}}                                       # odtmip.Tree.to_dict(): splits, class labels, leaf counts,
                                                          #   the categorical columns' training values

``version`` grows when the layout changes; a file of a newer version is refused with a message, never misread.

``odtmip predict`` reads new data with the same reader as ``odtmip fit`` (a categorical column whose training values
were text is read as text again, even when its values look like numbers), takes the tree's columns by name -- a
missing one is an error that names it; extra columns, the target among them, are ignored -- compares the
categorical values with the training data's (:meth:`odtmip.core.tree.Tree.check_input`: a warning for values never seen,
an error for a column none of whose values was seen) and writes one CSV row per data row: the predicted
label in a column named after the target (``prediction`` when the target is unknown) and, with ``--proba``, one
column ``proba_<label>`` per class holding the weighted class frequencies of the training rows in the row's leaf.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from odtmip import __version__
from odtmip.core.data import Dataset
from odtmip.core.exceptions import DataError, FormatError
from odtmip.core.results import SolveResult
from odtmip.core.tree import Tree

__all__ = ["FORMAT", "KINDS", "VERSION", "SavedTree", "save_fit", "split_weight"]

FORMAT = "odtmip-tree"
VERSION = 1

#: The kind of a raw column as a tree file records it, by the kind of its feature group (odtmip.core.binarize).
KINDS = {"binary": "binary", "categorical": "categorical", "ordinal": "numeric", "thresholds": "numeric"}


# ============================================================================================ the tree file
@dataclass(frozen=True)
class SavedTree:
    """A fitted tree with what prediction needs (see the module docstring for the file layout).

    Attributes
    ----------
    tree : Tree
        The tree over the raw columns, with the class labels and the leaves' training class counts.
    features : dict of str to str
        Every raw column the tree was fitted on, in order, with its kind: ``"binary"``, ``"categorical"`` or
        ``"numeric"``.
    target : str or None
        The name of the label column; None when the labels had no name.
    fit : dict
        How the tree was found: solver, status, stop reason, objective, bound, gap, seconds, rows, options.
    """

    tree: Tree
    features: dict[str, str]
    target: str | None
    fit: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of_fit(cls, tree: Tree, data: Dataset, fit: dict[str, Any]) -> SavedTree:
        """``tree`` as fitted on ``data``; ``fit`` says how (see the attribute)."""
        kinds = {data.feature_names[g.column]: KINDS[g.kind] for g in data.groups if g.kind in KINDS}
        return cls(tree, {name: kinds[name] for name in data.feature_names}, data.target, fit)

    def to_dict(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "odtmip": __version__, "target": self.target,
                "features": [{"name": name, "kind": kind} for name, kind in self.features.items()],
                "fit": self.fit, "tree": self.tree.to_dict()}

    def save(self, path) -> None:
        """Write the tree file ``path``."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def read(cls, path) -> SavedTree:
        """Read a tree file; :class:`FormatError` when it is not one, or is of a newer version."""
        try:
            d = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise FormatError(f"{path} is not a tree file (not JSON: {exc.msg} at line {exc.lineno})") from None
        except UnicodeDecodeError:
            raise FormatError(f"{path} is not a tree file (not UTF-8 text)") from None
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise FormatError(f"{path} is not a tree file (write one with `odtmip fit ... --save FILE`)")
        version = d.get("version")
        if version is None:
            raise FormatError(f"{path} has no tree file version: not written by `odtmip fit --save`, or edited since")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise FormatError(f"{path}: a damaged tree file (its version {version!r} is not a version number)")
        if version > VERSION:
            raise FormatError(f"{path} has tree file version {version}; this odtmip ({__version__}) reads versions up "
                              f"to {VERSION}: upgrade odtmip")
        try:
            features = {f["name"]: f["kind"] for f in d["features"]}
            tree = Tree.from_dict(d["tree"])
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise FormatError(f"{path}: a damaged tree file ({type(exc).__name__}: {exc})") from None
        if list(features) != tree.feature_names or not set(features.values()) <= set(KINDS.values()):
            raise FormatError(f"{path}: a damaged tree file (its features do not match its tree)")
        return cls(tree, features, d.get("target"), d.get("fit", {}))

    def columns_of(self, frame: pd.DataFrame, source) -> pd.DataFrame:
        """The tree's columns of ``frame`` by name, checked against their kinds (a missing column, or text where the
        tree was fitted on numbers, is a :class:`DataError` naming the column)."""
        missing = [name for name in self.features if name not in frame.columns]
        if missing:
            raise DataError(f"{source} lacks the tree's column(s) {', '.join(map(repr, missing))} "
                            f"(it has: {', '.join(map(str, frame.columns))})")
        for name, kind in self.features.items():
            column = frame[name]
            if kind != "categorical" and not (pd.api.types.is_numeric_dtype(column) or column.dtype == bool):
                example = column.dropna().iloc[0] if column.notna().any() else None
                fitted_on = "0/1 values" if kind == "binary" else "numbers"
                raise DataError(f"column {name!r} of {source} holds text (e.g. {example!r}); the tree was fitted "
                                f"on it as {fitted_on}")
        return frame[list(self.features)]

    def describe(self) -> str:
        """Lines on the target, the classes, the features and the fit, for ``odtmip show``."""
        fit = self.fit
        lines = [f"target: {self.target}   classes: {', '.join(map(str, self.tree.classes))}",
                 "features: " + ", ".join(f"{name} ({kind})" for name, kind in self.features.items())]
        if fit:
            lines.append(f"fit: solver {fit.get('solver')}, {fit.get('status')}, objective {fit.get('objective')}, "
                         f"bound {fit.get('bound')}, {fit.get('n_samples')} samples")
        return "\n".join(lines)


# ============================================================================================ fit --weight/--save
def split_weight(X: pd.DataFrame, column: str | None, source) -> tuple[pd.DataFrame, np.ndarray | None]:
    """``X`` without the weight column ``column``, and that column's values as weights (None: no column).

    A missing column, text, missing values, negative or infinite values and weights that sum to zero are each a
    :class:`DataError` naming the column (rows are numbered from 1, the first data row).
    """
    if column is None:
        return X, None
    if column not in X.columns:
        raise DataError(f"weight column {column!r} not found in {source} (its feature columns: "
                        f"{', '.join(map(str, X.columns))}; the target cannot be the weight)")
    values = X[column]
    name = f"weight column {column!r}"
    if not pd.api.types.is_numeric_dtype(values) or values.dtype == bool:
        example = values.dropna().iloc[0] if values.notna().any() else None
        raise DataError(f"{name} must hold numbers; it holds {example!r}")
    w = values.to_numpy(dtype=float, na_value=np.nan)
    for bad, what in ((np.isnan(w), "missing values"), (np.isinf(w), "infinite values"), (w < 0, "negative values")):
        if bad.any():
            rows = np.flatnonzero(bad) + 1
            raise DataError(f"{name} has {len(rows)} {what}, first in data row {rows[0]} of {source}")
    if w.sum() == 0:
        raise DataError(f"{name} is zero in every row")
    return X.drop(columns=[column]), w


#: What a tree file keeps of the fit's JSON record (odtmip.cli.common.result_record).
_FIT_KEYS = ("solver", "status", "stop_reason", "objective", "bound", "gap", "misclassifications", "accuracy",
             "n_samples", "seconds", "encoding")


def save_fit(path, result: SolveResult, data: Dataset, record: dict, options: dict) -> None:
    """``odtmip fit --save path``: the tree file of ``result``, with the fit's JSON ``record`` and solver ``options``
    (those JSON holds: numbers, text, True/False)."""
    if result.tree is None:
        raise DataError(f"{result.solver} found no tree ({result.status.value}); there is nothing to save")
    fit = {key: record[key] for key in _FIT_KEYS}
    fit["options"] = {name: value for name, value in options.items() if isinstance(value, (bool, int, float, str))}
    SavedTree.of_fit(result.tree, data, fit).save(path)
