"""One tree type for every solver's answer.

A :class:`Tree` is a binary classification tree whose branch nodes test the **raw** columns of the data
(the columns a user passed in, before any binarisation), so that a tree learned on binary columns reads and
predicts in terms of the original features. Each branch node holds a :class:`Split`; a row for which the
split's test is **true goes to the right child**, otherwise to the left child (MurTree's convention:
left = feature absent). Leaves carry a class index and the (weighted) class counts of the training rows that
reached them.

Split kinds
-----------
==============  ==========================================================================================
``binary``      column is 0/1 (or bool); true when the value is 1.
``subset``      categorical column; true when the value is one of ``categories``. A value never seen in
                training is in no subset, so it goes left (the rule of a one-hot column that is 0);
                :meth:`Tree.predict` warns about such values (see "Prediction data" below).
``threshold``   numeric column; true when ``x > threshold`` (text: ``age <= 37.5`` on the left branch).
``bins``        numeric column cut into buckets by ``edges``: bucket b holds ``edges[b-1] < x <= edges[b]``
                (bucket 0 everything ``<= edges[0]``, the last bucket everything above the last edge); true
                when the row's bucket is in ``bins``. Used for subsets of quantile buckets.
``hyperplane``  numeric columns ``columns`` with ``weights`` a; true when ``a . x >= threshold``
                (OCT-H: ``a . x < b`` goes left).
``missing``     any column; true when the value is missing (NaN, None, ``pd.NA``). The encoding of a numeric
                column with missing values adds this test as a column of its own.
==============  ==========================================================================================

Missing values
--------------
In ``binary``, ``threshold`` and ``bins`` tests a missing value counts as **smaller than every number**: ``x = 1``
and ``x > t`` are false (it goes left, and ``age <= 37.5`` reads true for it), and it lies in bucket 0. A
``subset`` test sees it as the level :data:`MISSING`. A ``hyperplane`` cannot weigh a missing value: routing one
through it is a :class:`~odtmip.core.exceptions.DataError`.

Prediction data
---------------
A tree made from a :class:`~odtmip.core.data.Dataset` knows the values each categorical column took in training
(:attr:`Tree.levels`) and whether its columns had names. :meth:`Tree.predict` and :meth:`Tree.predict_proba` first
compare the data with that (:meth:`Tree.check_input`), as scikit-learn's ``OneHotEncoder(handle_unknown="ignore")``
and its feature-name check do: values never seen in training give an
:class:`~odtmip.core.exceptions.UnseenCategoryWarning` naming the column and counting them, a column of several distinct
values none of which was seen (the wrong column, or codes for text) is a :class:`~odtmip.core.exceptions.DataError`, and
an array given to a tree fitted on named columns warns. Only the columns the splits test are compared (the others
cannot change a prediction); missing values are never unseen; numeric columns are not compared. :meth:`Tree.apply`
and :meth:`Tree.predict_index` route without comparing (the solvers route their training data with them).
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from odtmip.core.exceptions import DataError, UnseenCategoryWarning
from odtmip.core.tables import as_floats, is_frame, missing

SPLIT_KINDS = ("binary", "subset", "threshold", "bins", "hyperplane", "missing")
MISSING = "<missing>"  # the level a missing categorical value takes


def bucket_index(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bucket of each value: b such that ``edges[b-1] < x <= edges[b]`` (0 below, len(edges) above; 0 for NaN)."""
    buckets = np.searchsorted(np.asarray(edges, dtype=float), values, side="left")
    return np.where(np.isnan(values), 0, buckets)


@dataclass(frozen=True)
class Split:
    """The test at a branch node; rows for which it is true go right.

    Parameters
    ----------
    kind : str
        One of ``binary``, ``subset``, ``threshold``, ``bins``, ``hyperplane``, ``missing``.
    columns : tuple of int
        Raw column index (one; several for ``hyperplane``).
    threshold : float, optional
        ``threshold``: true when ``x > threshold``; ``hyperplane``: true when ``a . x >= threshold``.
    categories : tuple, optional
        ``subset``: the values sent right.
    edges, bins : tuple, optional
        ``bins``: bucket cut points and the buckets sent right.
    weights : tuple of float, optional
        ``hyperplane``: the coefficients a, one per column.
    """

    kind: str
    columns: tuple[int, ...]
    threshold: float | None = None
    categories: tuple = ()
    edges: tuple[float, ...] = ()
    bins: tuple[int, ...] = ()
    weights: tuple[float, ...] = ()

    def __post_init__(self):
        if self.kind not in SPLIT_KINDS:
            raise ValueError(f"unknown split kind {self.kind!r}; expected one of {SPLIT_KINDS}")
        if self.kind == "hyperplane":
            if len(self.weights) != len(self.columns) or not self.columns:
                raise ValueError("a hyperplane split needs one weight per column")
        elif len(self.columns) != 1:
            raise ValueError(f"a {self.kind} split tests exactly one column")
        if self.kind in ("threshold", "hyperplane") and self.threshold is None:
            raise ValueError(f"a {self.kind} split needs a threshold")

    @property
    def column(self) -> int:
        """The tested column (single-column splits)."""
        return self.columns[0]

    def goes_right(self, columns: Sequence[np.ndarray] | Mapping[int, np.ndarray]) -> np.ndarray:
        """Boolean mask of the rows sent right; ``columns[c]`` is raw column c as a 1-D array (a mapping needs only
        the columns the split tests)."""
        if self.kind == "hyperplane":
            total = np.zeros(len(columns[self.columns[0]]))
            for c, a in zip(self.columns, self.weights, strict=True):
                x = as_floats(columns[c], c)
                if np.isnan(x).any():
                    raise DataError(f"column {c} has missing values (NaN); a hyperplane split cannot route them")
                total += a * x
            return total >= self.threshold
        x = columns[self.column]
        if self.kind == "missing":
            return missing(x)
        if self.kind == "binary":
            return as_floats(x, self.column) == 1.0
        if self.kind == "subset":
            import pandas as pd

            values = pd.Series(x, dtype=object)
            values = values.where(values.notna(), MISSING)
            return values.isin(list(self.categories)).to_numpy(dtype=bool)
        if self.kind == "threshold":
            return as_floats(x, self.column) > self.threshold
        return np.isin(bucket_index(as_floats(x, self.column), np.array(self.edges)), self.bins)

    def describe(self, names: Sequence[str], right: bool) -> str:
        """The condition of the right branch (``right=True``) or the left one, in words."""
        name = names[self.column] if self.kind != "hyperplane" else None
        if self.kind == "binary":
            return f"{name} = {1 if right else 0}"
        if self.kind == "subset":
            cats = ", ".join(str(c) for c in self.categories)
            return f"{name} {'in' if right else 'not in'} {{{cats}}}"
        if self.kind == "threshold":
            return f"{name} {'>' if right else '<='} {_fmt(self.threshold)}"
        if self.kind == "bins":
            return f"{name} {'in' if right else 'not in'} {_intervals(self.edges, self.bins)}"
        if self.kind == "missing":
            return f"{name} is {'' if right else 'not '}missing"
        terms = " + ".join(f"{_fmt(a)}*{names[c]}" for c, a in zip(self.columns, self.weights, strict=True))
        return f"{terms} {'>=' if right else '<'} {_fmt(self.threshold)}"

    def to_dict(self) -> dict:
        """JSON-ready form; only the fields the kind uses."""
        d: dict[str, Any] = {"kind": self.kind, "columns": [int(c) for c in self.columns]}
        if self.threshold is not None:
            d["threshold"] = float(self.threshold)
        if self.categories:
            d["categories"] = [_native(c) for c in self.categories]
        if self.edges:
            d["edges"] = [float(e) for e in self.edges]
            d["bins"] = [int(b) for b in self.bins]
        if self.weights:
            d["weights"] = [float(w) for w in self.weights]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Split:
        """Inverse of :meth:`to_dict`."""
        return cls(
            kind=d["kind"],
            columns=tuple(d["columns"]),
            threshold=d.get("threshold"),
            categories=tuple(d.get("categories", ())),
            edges=tuple(d.get("edges", ())),
            bins=tuple(d.get("bins", ())),
            weights=tuple(d.get("weights", ())),
        )


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def _intervals(edges: Sequence[float], bins: Sequence[int]) -> str:
    parts = []
    for b in sorted(bins):
        lo = "-inf" if b == 0 else _fmt(edges[b - 1])
        hi = "inf" if b == len(edges) else _fmt(edges[b])
        parts.append(f"({lo}, {hi}]" if b < len(edges) else f"({lo}, {hi})")
    return " U ".join(parts)


def _native(v):
    """A JSON-native scalar (numpy scalars become Python ones)."""
    return v.item() if isinstance(v, np.generic) else v


@dataclass
class Node:
    """One node of a :class:`Tree`: a branch (``split`` set) or a leaf (``split`` is None)."""

    split: Split | None = None
    left: int = -1
    right: int = -1
    label: int = -1  # class index at a leaf
    counts: np.ndarray | None = field(default=None, repr=False)  # weighted class counts at a leaf

    @property
    def is_leaf(self) -> bool:
        return self.split is None


class Tree:
    """A classification tree over raw columns (see the module docstring for the split rules).

    Build one with :func:`leaf` and :func:`branch`::

        >>> t = Tree(branch(Split("threshold", (0,), threshold=2.5), leaf(0), leaf(1)),
        ...          feature_names=["age"], classes=["no", "yes"])
        >>> t.predict(np.array([[1.0], [4.0]])).tolist()
        ['no', 'yes']

    Parameters
    ----------
    root : _Spec
        Nested specification from :func:`leaf` / :func:`branch`.
    feature_names : sequence of str
        Names of the raw columns the splits index.
    classes : sequence
        The original class labels; leaf labels index into it.
    levels : mapping of str to sequence, optional
        The values each categorical column took in training, missing values aside (see "Prediction data" in the
        module docstring); a column left out is not compared.
    named_columns : bool
        The tree was fitted on a DataFrame with named columns: predicting from an array warns.
    """

    def __init__(self, root: _Spec, feature_names: Sequence[str], classes: Sequence, *,
                 levels: Mapping[str, Sequence] | None = None, named_columns: bool = False):
        self.feature_names = [str(n) for n in feature_names]
        self.classes = list(_native(c) for c in classes)
        self.levels = {str(name): tuple(_native(v) for v in values) for name, values in (levels or {}).items()}
        self.named_columns = bool(named_columns)
        self.nodes: list[Node] = []
        self._flatten(root)
        for node in self.nodes:
            if node.split is not None and max(node.split.columns) >= len(self.feature_names):
                raise ValueError(f"split tests column {max(node.split.columns)} but there are only "
                                 f"{len(self.feature_names)} features")
            if node.is_leaf and not 0 <= node.label < len(self.classes):
                raise ValueError(f"leaf label {node.label} is not a class index (0..{len(self.classes) - 1})")
        unknown = sorted(set(self.levels) - set(self.feature_names))
        if unknown:
            raise ValueError(f"levels of column(s) {unknown} that are not features")

    def _flatten(self, spec: _Spec) -> int:
        i = len(self.nodes)
        if spec.split is None:
            counts = None if spec.counts is None else np.asarray(spec.counts, dtype=float)
            self.nodes.append(Node(label=int(spec.label), counts=counts))
            return i
        self.nodes.append(Node(split=spec.split))
        left = self._flatten(spec.left)
        right = self._flatten(spec.right)
        self.nodes[i].left, self.nodes[i].right = left, right
        return i

    # ----------------------------------------------------------------- shape
    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @property
    def n_leaves(self) -> int:
        return sum(node.is_leaf for node in self.nodes)

    @property
    def n_branch_nodes(self) -> int:
        return self.n_nodes - self.n_leaves

    @property
    def depth(self) -> int:
        """Largest number of branch nodes on a root-to-leaf path (a single leaf has depth 0)."""

        def d(i: int) -> int:
            node = self.nodes[i]
            return 0 if node.is_leaf else 1 + max(d(node.left), d(node.right))

        return d(0)

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    # --------------------------------------------------------------- routing
    def _tested(self) -> list[int]:
        """The raw columns the splits test, in order."""
        return sorted({c for node in self.nodes if node.split is not None for c in node.split.columns})

    def _columns(self, X, used: Sequence[int] | None = None) -> dict[int, np.ndarray]:
        """The raw columns ``used`` of ``X`` (default: those the splits test), by position (DataFrame columns by
        name, else a 2-D array's columns by position)."""
        if used is None:
            used = self._tested()
        if is_frame(X):
            absent = [n for n in self.feature_names if n not in X.columns]
            if absent and X.shape[1] == len(self.feature_names) and not any(
                n in X.columns for n in self.feature_names
            ):
                return {c: X.iloc[:, c].to_numpy() for c in used}
            if absent:
                raise DataError(f"data lacks the tree's feature column(s) {absent[:5]}")
            return {c: X[self.feature_names[c]].to_numpy() for c in used}
        A = np.asarray(X)
        if A.dtype.kind in "US":  # strings: keep them as Python objects for subset tests
            A = A.astype(object)
        if A.ndim != 2:
            raise DataError(f"expected a 2-D array of samples x features, got shape {A.shape}")
        if A.shape[1] != len(self.feature_names):
            raise DataError(f"expected {len(self.feature_names)} feature columns, got {A.shape[1]}")
        return {c: A[:, c] for c in used}

    def apply(self, X) -> np.ndarray:
        """Index (into ``self.nodes``) of the leaf each row of ``X`` reaches."""
        cols = self._columns(X)
        n = X.shape[0] if hasattr(X, "shape") else len(X)
        out = np.empty(n, dtype=np.int64)
        stack = [(0, np.arange(n))]
        while stack:
            i, rows = stack.pop()
            node = self.nodes[i]
            if node.is_leaf:
                out[rows] = i
                continue
            right = node.split.goes_right({c: cols[c][rows] for c in node.split.columns})  # only its columns
            stack.append((node.left, rows[~right]))
            stack.append((node.right, rows[right]))
        return out

    def predict_index(self, X) -> np.ndarray:
        """Class index (0..K-1) predicted for each row."""
        return self.labels_at(self.apply(X))

    def labels_at(self, nodes: np.ndarray) -> np.ndarray:
        """Class index of each of ``nodes`` (indices into ``self.nodes``, such as :meth:`apply` gives)."""
        return np.array([node.label for node in self.nodes])[nodes]

    def predict(self, X) -> np.ndarray:
        """Original class label predicted for each row (``X`` compared with the training data first:
        :meth:`check_input`)."""
        self.check_input(X)
        return np.asarray(self.classes)[self.predict_index(X)]

    def predict_proba(self, X) -> np.ndarray:
        """Class frequencies of the training rows in each row's leaf (needs :meth:`fit_counts`; ``X`` compared with
        the training data first: :meth:`check_input`)."""
        self.check_input(X)
        return self.leaf_proba()[self.apply(X)]

    def leaf_proba(self) -> np.ndarray:
        """The class frequencies of the training rows at each node, shape (n_nodes, n_classes); rows of branch nodes
        are 0 (index it with :meth:`apply`)."""
        proba = np.zeros((self.n_nodes, self.n_classes))
        for i, node in enumerate(self.nodes):
            if node.is_leaf:
                if node.counts is None:
                    raise ValueError("leaf counts are not set; call fit_counts on training data first")
                total = node.counts.sum()
                proba[i] = node.counts / total if total > 0 else np.eye(self.n_classes)[node.label]
        return proba

    def check_input(self, X, feature_names: bool = True) -> None:
        """Compare prediction data ``X`` with the training data (see "Prediction data" in the module docstring).

        Warns ``UserWarning`` when ``X`` is an array and the tree was fitted on named columns (unless
        ``feature_names`` is False: a caller that checked the names itself), and
        :class:`~odtmip.core.exceptions.UnseenCategoryWarning` for each categorical column a split tests that has
        values training never saw. Raises :class:`~odtmip.core.exceptions.DataError` for such a column of several
        distinct values none of which training saw. Columns no split tests cannot change a prediction and are not
        compared.
        """
        if feature_names and self.named_columns and not is_frame(X):
            warnings.warn("X does not have valid feature names, but Tree was fitted with feature names", UserWarning,
                          stacklevel=3)
        names = {c: self.feature_names[c] for c in self._tested() if self.feature_names[c] in self.levels}
        columns = self._columns(X, list(names))
        for c, name in names.items():  # categorical columns: text, which pandas compares
            import pandas as pd

            seen = self.levels[name]
            values = pd.Series(columns[c], dtype=object).dropna()
            unseen = values[~values.isin(seen)]
            if unseen.empty:
                continue
            distinct = pd.unique(unseen)
            if len(distinct) > 1 and len(distinct) == values.nunique():
                known = ", ".join(map(repr, seen[:5])) + (", ..." if len(seen) > 5 else "")
                raise DataError(f"column {name!r}: none of its {len(distinct)} distinct values was seen in training "
                                f"(e.g. {distinct[0]!r}; training saw {known}): the wrong column, or other codes "
                                f"for the same values?")
            warnings.warn(f"column {name!r} has {len(distinct)} value(s) never seen in training, in {len(unseen)} of "
                          f"{len(columns[c])} rows (e.g. {distinct[0]!r}); they go to the 'not in' branch of its "
                          f"splits", UnseenCategoryWarning, stacklevel=3)

    def fit_counts(self, X, y: np.ndarray, sample_weight: np.ndarray | None = None) -> Tree:
        """Store at every leaf the weighted class counts of the rows of ``(X, y)`` reaching it."""
        y = np.asarray(y, dtype=np.int64)
        w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        leaves = self.apply(X)
        for i, node in enumerate(self.nodes):
            if node.is_leaf:
                at = leaves == i
                node.counts = np.bincount(y[at], weights=w[at], minlength=self.n_classes).astype(float)
        return self

    # ---------------------------------------------------------------- export
    def to_dict(self) -> dict:
        """JSON-ready dictionary; :meth:`from_dict` inverts it exactly."""
        nodes = []
        for node in self.nodes:
            if node.is_leaf:
                d: dict[str, Any] = {"label": node.label}
                if node.counts is not None:
                    d["counts"] = [float(c) for c in node.counts]
            else:
                d = {"split": node.split.to_dict(), "left": node.left, "right": node.right}
            nodes.append(d)
        d = {"feature_names": list(self.feature_names), "classes": list(self.classes), "nodes": nodes}
        if self.levels:
            d["levels"] = {name: list(values) for name, values in self.levels.items()}
        if self.named_columns:
            d["named_columns"] = True
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Tree:
        """Rebuild a tree from :meth:`to_dict` output (or its JSON text parsed)."""
        nodes = d["nodes"]

        def spec(i: int) -> _Spec:
            n = nodes[i]
            if "split" not in n:
                return leaf(n["label"], n.get("counts"))
            return branch(Split.from_dict(n["split"]), spec(n["left"]), spec(n["right"]))

        return cls(spec(0), d["feature_names"], d["classes"], levels=d.get("levels"),
                   named_columns=d.get("named_columns", False))

    def to_json(self, **kwargs) -> str:
        """JSON text of :meth:`to_dict`."""
        return json.dumps(self.to_dict(), **kwargs)

    def __eq__(self, other) -> bool:
        return isinstance(other, Tree) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"Tree(depth={self.depth}, branch_nodes={self.n_branch_nodes}, leaves={self.n_leaves})"

    def to_text(self, decimals: int = 3) -> str:
        """Readable text, one line per branch condition and leaf, in the style of scikit-learn's export_text."""
        lines: list[str] = []

        def walk(i: int, indent: str) -> None:
            node = self.nodes[i]
            if node.is_leaf:
                lines.append(f"{indent}class: {self.classes[node.label]}{self._leaf_note(node, decimals)}")
                return
            for child, right in ((node.left, False), (node.right, True)):
                lines.append(f"{indent}|--- {node.split.describe(self.feature_names, right)}")
                walk(child, indent + "|   ")

        if self.nodes[0].is_leaf:
            lines.append(f"class: {self.classes[self.nodes[0].label]}{self._leaf_note(self.nodes[0], decimals)}")
        else:
            walk(0, "")
        return "\n".join(lines)

    def _leaf_note(self, node: Node, decimals: int) -> str:
        if node.counts is None:
            return ""
        total = node.counts.sum()
        right = node.counts[node.label]
        fmt = (lambda v: str(int(v))) if np.all(node.counts == np.round(node.counts)) else (
            lambda v: f"{v:.{decimals}f}"
        )
        return f"  ({fmt(right)}/{fmt(total)})"

    def __str__(self) -> str:
        return self.to_text()

    def to_dot(self) -> str:
        """Graphviz DOT source (left edge = condition false)."""
        out = ["digraph Tree {", 'node [shape=box, style="rounded", fontname="helvetica"];']
        for i, node in enumerate(self.nodes):
            if node.is_leaf:
                text = f"class = {self.classes[node.label]}"
                if node.counts is not None:
                    text += "\\ncounts = [" + ", ".join(_fmt(c) for c in node.counts) + "]"
            else:
                text = node.split.describe(self.feature_names, right=True).replace('"', '\\"')
            out.append(f'{i} [label="{text}"];')
        for i, node in enumerate(self.nodes):
            if not node.is_leaf:
                out.append(f'{i} -> {node.left} [label="no"];')
                out.append(f'{i} -> {node.right} [label="yes"];')
        out.append("}")
        return "\n".join(out)

    def plot(self, ax=None):
        """Draw the tree with matplotlib (install the ``plot`` extra). Returns the axes."""
        try:
            import matplotlib.pyplot as plt
        except ImportError:  # pragma: no cover - depends on the environment
            raise ImportError("Tree.plot needs matplotlib: pip install 'odtmip[plot]'") from None
        if ax is None:
            _, ax = plt.subplots(figsize=(max(4, 2.2 * self.n_leaves), 1.6 * (self.depth + 1)))
        x_of: dict[int, float] = {}
        next_x = [0.0]

        def place(i: int, depth: int) -> None:
            node = self.nodes[i]
            if node.is_leaf:
                x_of[i] = next_x[0]
                next_x[0] += 1.0
            else:
                place(node.left, depth + 1)
                place(node.right, depth + 1)
                x_of[i] = (x_of[node.left] + x_of[node.right]) / 2

        place(0, 0)
        depth_of = {0: 0}
        for i, node in enumerate(self.nodes):
            if not node.is_leaf:
                depth_of[node.left] = depth_of[node.right] = depth_of[i] + 1
        for i, node in enumerate(self.nodes):
            x, y = x_of[i], -depth_of[i]
            if node.is_leaf:
                text = f"{self.classes[node.label]}{self._leaf_note(node, 2)}"
            else:
                text = node.split.describe(self.feature_names, right=True)
                for child, lab in ((node.left, "no"), (node.right, "yes")):
                    cx, cy = x_of[child], -depth_of[child]
                    ax.plot([x, cx], [y, cy], color="0.5", zorder=1)
                    ax.text((x + cx) / 2, (y + cy) / 2, lab, fontsize=8, color="0.3", ha="center")
            ax.text(x, y, text, ha="center", va="center", fontsize=9, zorder=2,
                    bbox={"boxstyle": "round", "fc": "white" if node.is_leaf else "0.92", "ec": "0.4"})
        ax.set_axis_off()
        ax.set_xlim(-0.7, max(next_x[0] - 0.3, 0.7))
        ax.set_ylim(-self.depth - 0.6, 0.6)
        return ax


@dataclass
class _Spec:
    """Nested tree specification built by :func:`leaf` and :func:`branch`."""

    split: Split | None
    left: _Spec | None = None
    right: _Spec | None = None
    label: int = -1
    counts: Any = None


def leaf(label: int, counts: Sequence[float] | None = None) -> _Spec:
    """A leaf predicting class index ``label``."""
    return _Spec(split=None, label=int(label), counts=counts)


def branch(split: Split, left: _Spec, right: _Spec) -> _Spec:
    """A branch node: rows where ``split`` is false go to ``left``, the others to ``right``."""
    return _Spec(split=split, left=left, right=right)


def is_close(a: float, b: float) -> bool:
    """Objective equality used when checking a solver's number against the re-routed one."""
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)
