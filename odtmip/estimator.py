"""The scikit-learn estimator: :class:`OptimalTreeClassifier`, every solver of :data:`odtmip.SOLVERS` behind
``fit``/``predict``.

The estimator's parameters are ``solver``, ``class_weight``, the encoding of numeric columns (``numeric``,
``n_thresholds``, ``n_buckets``) and **every option any solver declares** (:data:`odtmip.core.options.OPTIONS`): the
signature and the class's Parameters section are generated from that declaration, so a new solver's options become
parameters by themselves, and each value is checked by :func:`odtmip.core.options.validate` when ``fit`` runs (never in
``__init__``; a bad value is a ``ValueError`` naming the option, the value and what is allowed).

How the data is encoded
-----------------------
``fit`` builds one :class:`~odtmip.core.data.Dataset` and calls :func:`odtmip.solve` on it, so a fit is exactly
``odtmip.solve(Dataset(X, y, sample_weight, numeric=..., n_thresholds=..., n_buckets=...), solver, **options)``.

* **numpy arrays and other array-likes** must be numeric (as in scikit-learn; a string array is an error). A
  column of 0s and 1s is one binary feature; any other column is encoded by ``numeric``. With the default
  ``numeric="auto"`` the DP searches ``x <= t`` for every midpoint t between consecutive distinct training
  values (by ConTree, without a column per midpoint), which realises every partition of the training rows an
  axis-aligned threshold can make: the fit is then optimal over **all trees of univariate threshold splits** (the
  split space of CART) within the depth and size limits; the MIP formulations get decile buckets there (their
  own models). ``numeric="thresholds"`` gives every solver one binary column per midpoint (or per quantile
  threshold, ``n_thresholds``). NaN is a missing value (routed as smaller than every
  number, with an extra ``is missing`` split), except for the formulations that read the raw numbers (``binoct``,
  ``oct``, ``oct-h``), which refuse it; infinite values are an error. Every distinct value adds a binary column,
  and the DP's work grows with their square: on large continuous data ``n_thresholds=k`` keeps the k quantile
  thresholds of each column, and the fit is exact over those.
* **pandas DataFrames** keep their dtypes: ``category``, ``object`` and ``string`` columns become categorical
  feature groups (subset splits; a level not seen in training goes left, with an
  :class:`~odtmip.core.exceptions.UnseenCategoryWarning`, and a column none of whose values training saw is an error:
  :meth:`odtmip.core.tree.Tree.check_input`), numeric columns are encoded as above, and ``feature_names_in_`` holds the
  column names. ``predict`` then needs the same columns (by name, in the same order, as scikit-learn checks).

Rows with zero sample weight are left out before encoding, so that fitting with integer weights is fitting on
repeated rows (the thresholds come from the rows that count).

Examples
--------
>>> import numpy as np
>>> from odtmip import OptimalTreeClassifier
>>> X = np.array([[0.5, 1.0], [1.5, 0.0], [2.5, 1.0], [3.5, 0.0]] * 3)
>>> clf = OptimalTreeClassifier(max_depth=2).fit(X, [0, 0, 1, 1] * 3)
>>> clf.predict([[0.0, 0.0], [3.0, 1.0]]).tolist(), clf.objective_, clf.optimal_
([0, 1], 0.0, True)
>>> print(clf.tree_)
|--- x0 <= 2
|   class: 0  (6/6)
|--- x0 > 2
|   class: 1  (6/6)
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_consistent_length, check_is_fitted, column_or_1d, validate_data

from odtmip.core.binarize import NUMERIC_ENCODINGS
from odtmip.core.data import Dataset, refuse_missing_labels
from odtmip.core.exceptions import NotProvenOptimalWarning, NoTreeError, OptionError
from odtmip.core.options import OPTIONS, REQUIRED, validate
from odtmip.core.results import Status
from odtmip.core.tree import _native
from odtmip.models import FORMULATIONS
from odtmip.solving.solvers import SOLVERS, solve

__all__ = ["OptimalTreeClassifier"]

#: The parameters that are not solver options, with their defaults. ``class_weight`` is scikit-learn's and takes the
#: place of the Günlük model's option of that name: its C is ``class_weight={negative: C, positive: 1}``.
_OWN = {"solver": "dp", "max_depth": 3, "class_weight": None, "numeric": "auto", "n_thresholds": None,
        "n_buckets": 10}

#: Passed to the solvers that declare it, and ignored by the others (scikit-learn's convention for a seed).
_SEED = "random_state"

#: Besides the solvers' values, False is scikit-learn's "fit afresh", which is what every solver does by default.
_WARM_START = "warm_start"


def _option_names() -> list[str]:
    """Every option name some solver declares, in declaration order (the DP's first), without ``_OWN``'s."""
    return [name for name in dict.fromkeys(opt.name for declared in OPTIONS.values() for opt in declared)
            if name not in _OWN]


def _option_doc(name: str) -> str:
    """The numpydoc entry of solver option ``name``: its meaning, then per solver what it allows and its default."""
    takers = [(solver, opt) for solver, declared in OPTIONS.items() for opt in declared if opt.name == name]
    docs = list(dict.fromkeys(opt.doc for _, opt in takers))
    lines = [f"{name} : option of {', '.join(solver for solver, _ in takers)}, default=None"]
    if len(docs) == 1:
        lines.append(f"    {docs[0][0].upper()}{docs[0][1:]}.")
    rules: dict[str, list[str]] = {}
    for solver, opt in takers:
        default = "required" if opt.default is REQUIRED else f"default {opt.default!r}"
        if opt.default is None and opt.none is not None:
            default += f" ({opt.none})"
        meaning = "" if len(docs) == 1 else f"{opt.doc}; "
        rules.setdefault(f"{meaning}{' or '.join(map(str, opt.allowed))}; {default}", []).append(f"``{solver}``")
    lines += [f"    {', '.join(solvers)}: {rule}." for rule, solvers in rules.items()]
    elsewhere = _ELSEWHERE.get(name, "Giving it for a solver that does not take it is an error.")
    lines.append(f"    None: the solver's default{_NONE_TOO.get(name, '')}. {elsewhere}")
    return "\n".join("    " + line for line in lines)


#: What the docstring adds on None, and on giving an option to a solver without it, for the two special options.
_NONE_TOO = {_WARM_START: ", and so is False (scikit-learn's fresh fit)"}
_ELSEWHERE = {_SEED: "A solver without a seed ignores it (scikit-learn's convention)."}


#: Every parameter of the estimator with its default, in the order of the signature.
_PARAMETERS = {**_OWN, **dict.fromkeys(_option_names())}


def _signature() -> inspect.Signature:
    """``__init__(self, *, solver="dp", max_depth=3, ..., <every option>=None)``, read by scikit-learn's get_params."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    return inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
                             + [inspect.Parameter(name, keyword, default=d) for name, d in _PARAMETERS.items()])


class OptimalTreeClassifier(ClassifierMixin, BaseEstimator):
    """An optimal classification tree from any odtmip solver, as a scikit-learn classifier.

    Parameters
    ----------
    solver : str, default="dp"
        A key of :data:`odtmip.SOLVERS`: ``"dp"`` (MurTree-style dynamic programming) or a MIP formulation
        (``"gunluk"``, ``"binoct"``, ``"oct"``, ``"oct-h"``, ...).
    max_depth : int or None, default=3
        Largest number of branch nodes on a root-to-leaf path (the solver's ``max_depth`` option). None: no depth
        limit, for the DP with ``leaf_penalty`` or ``penalty`` > 0 only.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, as in scikit-learn: multiplied into the sample weights, for every solver.
    numeric : {"auto", "thresholds", "buckets"}, default="auto"
        Encoding of numeric columns that are not 0/1 (see the module docstring and :mod:`odtmip.core.binarize`):
        ``auto``, every threshold for the DP (ConTree) and decile buckets for the MIP formulations.
    n_thresholds : int or None, default=None
        ``numeric="thresholds"``: the number of quantile thresholds per column; None: every midpoint (exact over
        all threshold splits).
    n_buckets : int, default=10
        ``numeric="buckets"``: the number of quantile buckets per column.
{options}

    Attributes
    ----------
    tree_ : Tree
        The fitted tree over the raw columns, with the weighted class counts of the training rows at its leaves.
    result_ : SolveResult
        The solver's whole answer.
    status_ : Status
        What the solve proved: ``Status.OPTIMAL``, or ``Status.TIME_LIMIT`` when a limit stopped it first.
    optimal_ : bool
        True when ``tree_`` is proven optimal.
    objective_ : float
        The objective of ``tree_`` on the training data, in the solver's units (recomputed by routing).
    bound_ : float
        Best proven lower bound on the objective.
    gap_ : float
        Relative gap between ``objective_`` and ``bound_`` (0 when optimal).
    stats_ : dict
        Solver statistics (nodes, seconds, model sizes, ...).
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of the features seen in ``fit``; only when ``X`` had string column names.

    Warns
    -----
    NotProvenOptimalWarning
        When a limit stopped the solver before it proved the tree optimal (the best tree found is kept).

    Notes
    -----
    ``predict`` returns the leaf's label: the class of largest training weight in the leaf, ties to the lowest
    index in ``classes_``. ``predict_proba`` returns the leaf's weighted class frequencies, so its argmax is
    ``predict``'s answer whenever the solver labels leaves by majority (the DP does; a MIP model may label an
    empty or tied leaf otherwise).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.model_selection import cross_val_score
    >>> X, y = load_iris(return_X_y=True, as_frame=True)
    >>> clf = OptimalTreeClassifier(max_depth=2).fit(X, y)
    >>> clf.status_.value, clf.objective_, round(clf.score(X, y), 3)  # 6 errors: the optimum at depth 2
    ('optimal', 6.0, 0.96)
    >>> print(clf.tree_)  # one of the optimal trees (ConTree's; the DP on all midpoints picks one of 2 splits)
    |--- petal length (cm) <= 4.45
    |   |--- petal length (cm) <= 2.45
    |   |   class: 0  (50/50)
    |   |--- petal length (cm) > 2.45
    |   |   class: 1  (29/29)
    |--- petal length (cm) > 4.45
    |   |--- petal width (cm) <= 1.65
    |   |   class: 1  (19/23)
    |   |--- petal width (cm) > 1.65
    |   |   class: 2  (46/48)
    >>> cross_val_score(OptimalTreeClassifier(max_depth=2), X, y, cv=5).round(3).tolist()
    [0.933, 0.967, 0.867, 0.933, 1.0]
    """

    def __init__(self, **params):  # the signature scikit-learn sees is _signature()
        unknown = sorted(set(params) - set(_PARAMETERS))
        if unknown:
            raise TypeError(f"OptimalTreeClassifier got unexpected keyword argument(s) {', '.join(unknown)}")
        for name, default in _PARAMETERS.items():
            setattr(self, name, params.get(name, default))

    # ------------------------------------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None):
        """Fit an optimal tree to ``(X, y)``.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            Training data (see the module docstring for how columns are encoded).
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; None: every row weighs 1.

        Returns
        -------
        self : OptimalTreeClassifier
        """
        options = self._solver_options()
        if y is not None:  # scikit-learn's words would be of NaN or of a regression target
            refuse_missing_labels(pd.Series(np.asarray(y, dtype=object).ravel()))
        if isinstance(X, pd.DataFrame):  # kept as it is, for its dtypes (categorical columns)
            X = self._checked_frame(X, reset=True)
            y = column_or_1d(y, warn=True)
            check_consistent_length(X, y)
        else:
            X, y = validate_data(self, X, y, ensure_all_finite=self._finite_or_nan())
        check_classification_targets(y)
        weights = self._weights(y, sample_weight)
        if weights is not None and (weights == 0).any():  # weight 0 is absence (see the module docstring)
            keep = np.flatnonzero(weights)
            X = X.iloc[keep] if isinstance(X, pd.DataFrame) else X[keep]
            y, weights = y[keep], weights[keep]
        self.classes_ = np.unique(y)
        if len(self.classes_) < 2:
            raise ValueError(f"y has one class ({_native(self.classes_[0])!r}); a classification tree needs at "
                             "least two")
        data = Dataset(X, y, weights, numeric=self.numeric, n_thresholds=self.n_thresholds,
                       n_buckets=self.n_buckets, force_classification=True)
        result = solve(data, self.solver, **options)
        if result.tree is None:
            raise NoTreeError(f"{self.solver} found no tree ({result.status.value}, stopped by "
                              f"{result.stop_reason}); raise time_limit or relax the constraints")
        if result.status is not Status.OPTIMAL:
            warnings.warn(f"{self.solver} stopped ({result.stop_reason}) before proving the tree optimal "
                          f"(gap {result.gap:.1%}); the best tree found is kept. Raise time_limit or lower max_depth",
                          NotProvenOptimalWarning, stacklevel=2)
        self.result_ = result
        self.tree_ = result.tree
        self.status_ = result.status
        self.optimal_ = result.optimal
        self.objective_ = result.objective
        self.bound_ = result.bound
        self.gap_ = result.gap
        self.stats_ = dict(result.stats)
        return self

    def _solver_options(self) -> dict:
        """The solver options among the parameters (None: not given), checked against the declaration."""
        if not isinstance(self.solver, str) or self.solver not in SOLVERS:
            raise OptionError(f"solver must be one of {', '.join(map(repr, SOLVERS))}, got {self.solver!r}")
        if self.numeric not in NUMERIC_ENCODINGS:
            raise OptionError(f"numeric must be one of {NUMERIC_ENCODINGS}, got {self.numeric!r}")
        declared = OPTIONS[self.solver]
        takes = {opt.name for opt in declared}
        given = {name: getattr(self, name) for name in _option_names() if getattr(self, name) is not None}
        if _SEED not in takes:
            given.pop(_SEED, None)
        if given.get(_WARM_START) is False:  # scikit-learn's "fit afresh" is what every solver does by default
            del given[_WARM_START]
        elif given.get(_WARM_START) is True:
            raise OptionError("warm_start=True (scikit-learn's reuse of the previous fit) is not supported; pass "
                              "the previous tree instead: warm_start=clf.tree_")
        refused = sorted(set(given) - takes)
        if refused:
            raise OptionError(f"solver {self.solver!r} does not take {', '.join(refused)}; "
                              f"it takes {', '.join(opt.name for opt in declared)}")
        return validate(self.solver, max_depth=self.max_depth, **given)

    def _weights(self, y: np.ndarray, sample_weight) -> np.ndarray | None:
        """The sample weights with ``class_weight`` folded in (None: every row weighs 1)."""
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=float)
            if sample_weight.shape != y.shape:
                raise ValueError(f"sample_weight has shape {sample_weight.shape}; expected {y.shape}, one per row")
            if not np.isfinite(sample_weight).all() or (sample_weight < 0).any():
                raise ValueError("sample_weight must be finite and non-negative")
            if sample_weight.sum() == 0:
                raise ValueError("every sample weight is zero")
        if self.class_weight is None:
            return sample_weight
        by_class = compute_sample_weight(self.class_weight, y)
        return by_class if sample_weight is None else by_class * sample_weight

    # -------------------------------------------------------------------------------------------- predict
    def _checked(self, X):
        """``X`` for prediction, checked against the fit as scikit-learn does (a DataFrame is kept as it is), and
        its categorical values against the training data's (:meth:`odtmip.core.tree.Tree.check_input`)."""
        check_is_fitted(self)
        if isinstance(X, pd.DataFrame):
            X = self._checked_frame(X, reset=False)
        else:
            X = validate_data(self, X, reset=False, ensure_all_finite=self._finite_or_nan())
        self.tree_.check_input(X, feature_names=False)  # validate_data has compared the names
        return X

    def _checked_frame(self, X: pd.DataFrame, reset: bool) -> pd.DataFrame:
        """A DataFrame's names and width checked (and set, ``reset``) as scikit-learn does; numbers may be missing
        but not infinite, as in an array."""
        validate_data(self, X, reset=reset, skip_check_array=True)
        for name in X.columns:
            column = X[name]
            if (pd.api.types.is_numeric_dtype(column) and column.dtype != bool
                    and np.isinf(column.to_numpy(dtype=float, na_value=np.nan)).any()):
                raise ValueError(f"Input X column {name!r} contains infinity")
        return X

    def predict(self, X) -> np.ndarray:
        """The class label of the leaf each row of ``X`` reaches.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)
            The same columns as in ``fit``.

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        X = self._checked(X)
        return self.classes_.take(self.tree_.predict_index(X))

    def predict_proba(self, X) -> np.ndarray:
        """The weighted class frequencies of the training rows in the leaf each row of ``X`` reaches.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        X = self._checked(X)
        return self.tree_.leaf_proba()[self.tree_.apply(X)]

    def apply(self, X) -> np.ndarray:
        """The index (into ``tree_.nodes``) of the leaf each row of ``X`` reaches.

        Parameters
        ----------
        X : {array-like, DataFrame} of shape (n_samples, n_features)

        Returns
        -------
        leaves : ndarray of shape (n_samples,)
        """
        X = self._checked(X)
        return self.tree_.apply(X)

    def _finite_or_nan(self):
        """What ``validate_data`` lets through: NaN too, where the solver routes missing values."""
        return "allow-nan" if self.__sklearn_tags__().input_tags.allow_nan else True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # A missing value routes as the smallest number (odtmip.core.tree), except in the formulations that read the raw
        # numbers (binoct, oct, oct-h), which refuse it.
        formulation = FORMULATIONS.get(self.solver) if isinstance(self.solver, str) else None
        tags.input_tags.allow_nan = formulation is None or not formulation.reads_numbers
        return tags


OptimalTreeClassifier.__init__.__signature__ = _signature()
OptimalTreeClassifier.__doc__ = OptimalTreeClassifier.__doc__.replace(
    "{options}", "\n".join(_option_doc(name) for name in _option_names()))
