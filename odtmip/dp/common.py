"""What the DP's engines share: the limits and the checks of their arguments, the tie tolerance, the encoding of
the binary columns as bitsets (merged duplicates and complements), the objective as reported and recomputed by
routing, and the verification of a rebuilt tree. :mod:`odtmip.dp.solver` (the MurTree search),
:mod:`odtmip.dp.pairwise`, :mod:`odtmip.dp.pareto`, :mod:`odtmip.dp.contree` and :mod:`odtmip.dp.reference` import
them from here.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from odtmip.core import progress
from odtmip.core.data import Dataset
from odtmip.core.exceptions import OptionError, VerificationError
from odtmip.core.tree import Tree, branch, is_close, leaf

#: Largest depth accepted (2^20 - 1 node budgets are far beyond any practical search).
MAX_DEPTH_CAP = 20

#: float64 represents every integer of magnitude below this, so sums and comparisons of them are exact.
EXACT_INTEGERS = 2.0**53


# --------------------------------------------------------------------------------------------- checks
def one_blas_thread():
    """A context in which BLAS runs on one thread: the depth-two products (:mod:`odtmip.dp.pairwise`) are small, and
    OpenBLAS's threads, which wait by spinning, made them 100 times slower on a loaded two-core machine (0.9 ms on
    one thread, 91 ms on two, 1 600 x 38 columns, load 6)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1, "blas")


def check_int(name: str, value, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise OptionError(f"{name} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in {low}..{high}"
        raise OptionError(f"{name} must be {bound}, got {value}")
    return int(value)


def check_penalty(penalty, name: str = "penalty") -> float:
    try:
        value = float(penalty)
    except (TypeError, ValueError):
        raise OptionError(f"{name} must be a number, got {penalty!r}") from None
    if not math.isfinite(value) or value < 0:
        raise OptionError(f"{name} must be finite and >= 0, got {penalty!r}")
    return value


def check_penalties(penalty, leaf_penalty) -> tuple[float, float | None]:
    """``penalty`` (per branch node) and ``leaf_penalty`` (per leaf, or None) checked; at most one is given."""
    penalty = check_penalty(penalty)
    if leaf_penalty is None:
        return penalty, None
    if penalty != 0:
        raise OptionError("give either penalty (per branch node, in errors) or leaf_penalty (per leaf, "
                          "as a fraction of the data), not both")
    return penalty, check_penalty(leaf_penalty, "leaf_penalty")


def tie_tolerance(weights: np.ndarray, penalty: float, n_classes: int) -> float:
    """Objectives closer than this are equal in the search (see "Arithmetic" in the module docstring).

    Parameters
    ----------
    weights : float64 array
        Sample weights (ones when unweighted).
    penalty : float
        Objective per branch node, as the search uses it (``leaf_penalty x W`` for the sparse objective).
    n_classes : int
        Number of classes K.

    Returns
    -------
    float
        0 (exact comparisons) for integer weights and penalty with K (W + 3 penalty) < 2^53, W the total
        weight; else the round-off bound ``4 (n + 64) eps max(1, W + 3 penalty)``, n the number of rows.
    """
    total = float(np.sum(weights))  # for non-negative integers: >= 2^53 if and only if the exact sum is
    integral = float(penalty).is_integer() and bool(np.all(weights == np.floor(weights)))
    if integral and n_classes * (total + 3.0 * penalty) < EXACT_INTEGERS:
        return 0.0
    return 4.0 * (len(weights) + 64) * np.finfo(np.float64).eps * max(1.0, total + 3.0 * penalty)


# ------------------------------------------------------------------------------------------ encoding
def pack_columns(M: np.ndarray) -> np.ndarray:
    """Bitsets of the columns of a 0/1 matrix ``M`` (rows x cols): array (cols, ceil(rows/64)) of uint64."""
    n, m = M.shape
    words = max(1, (n + 63) // 64)
    padded = np.zeros((words * 64, m), dtype=np.uint8)
    padded[:n] = M
    packed = np.packbits(padded, axis=0, bitorder="little")  # (words*8, m)
    return np.ascontiguousarray(packed.T).view(np.uint64).reshape(m, words)


@dataclass
class _Encoding:
    """The binary columns the search sees: internal feature k is ``flip[k] XOR`` original column ``orig[k]``."""

    X: np.ndarray  # n x p' uint8, internal columns
    orig: np.ndarray  # int64 (p',)
    flip: np.ndarray  # bool (p',)


def encode_columns(Xb: np.ndarray, merge: bool) -> _Encoding:
    """Drop constant columns, merge duplicates and complements, store each column with its minority as 1.

    Among merged columns the lowest original index is kept, so ties between equal trees still go to the
    first column.
    """
    Xb = np.asarray(Xb, dtype=np.uint8)
    n, p = Xb.shape
    if not merge:
        return _Encoding(np.ascontiguousarray(Xb), np.arange(p, dtype=np.int64), np.zeros(p, dtype=bool))
    ones = Xb.sum(axis=0, dtype=np.int64)
    live = np.flatnonzero((ones > 0) & (ones < n))
    # canonical form: the column, or its complement when its first row is 1 (f and not-f share one form); the
    # first column of each form is kept
    Xl = Xb if len(live) == p else Xb[:, live]
    canon = np.ascontiguousarray(np.packbits(Xl ^ Xl[:1], axis=0).T)
    first: dict[bytes, int] = {}
    for j, form in zip(live, canon, strict=True):
        first.setdefault(form.tobytes(), j)
    orig = np.array(sorted(first.values()), dtype=np.int64)
    flip = 2 * ones[orig] > n
    X = (Xb if len(orig) == p else Xb[:, orig]) ^ flip.astype(np.uint8)[None, :]
    return _Encoding(np.ascontiguousarray(X), orig, flip)


def internal_branch(dataset: Dataset, enc: _Encoding, f: int, absent, present):
    """Branch on internal feature ``f`` of ``enc``: mapped back to the original column of ``dataset`` (the children
    swap if the column was flipped)."""
    split = dataset.split_of(int(enc.orig[f]))
    if enc.flip[f]:
        return branch(split, present, absent)
    return branch(split, absent, present)


def internal_spec(dataset: Dataset, enc: _Encoding, spec):
    """Tree spec of a tree over the internal features of ``enc`` (a class index, or (feature, absent, present))."""
    if isinstance(spec, tuple):
        f, absent, present = spec
        return internal_branch(dataset, enc, f, internal_spec(dataset, enc, absent),
                               internal_spec(dataset, enc, present))
    return leaf(spec)


def reported(value: float, penalty: float, leaf_penalty: float | None, total_weight: float) -> float:
    """A search objective (errors + ``penalty`` x branch nodes) in the reported units: unchanged, or those of
    [OSDT] Eq. 4 with ``leaf_penalty`` (``penalty`` is then leaf_penalty x ``total_weight``)."""
    if leaf_penalty is None:
        return float(value)
    return (float(value) + penalty) / total_weight


def routed_objective(dataset: Dataset, tree: Tree, penalty: float, leaf_penalty: float | None,
                     total_weight: float) -> float:
    """The objective of ``tree`` recomputed by routing ``dataset``, in the units of :func:`reported`."""
    errors = dataset.misclassifications(tree)
    if leaf_penalty is None:
        return float(errors + penalty * tree.n_branch_nodes)
    return errors / total_weight + leaf_penalty * tree.n_leaves


def equivalent_minority(X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> np.ndarray:
    """Rows outside the majority class (by weight) of their group of identical rows of ``X``.

    Their total weight is the equivalent points bound ([OSDT] Proposition B.1): a tree sends all rows of a
    group to one leaf, which can be right for one class only. Ties between classes do not change the weight.
    """
    n = X.shape[0]
    if X.shape[1] == 0:
        group = np.zeros(n, dtype=np.int64)
    else:
        rows = np.ascontiguousarray(np.packbits(X, axis=1))
        group = np.unique(rows, axis=0, return_inverse=True)[1].reshape(-1)
    n_groups = int(group.max()) + 1 if n else 0
    weight = np.bincount(group * n_classes + y, weights=w, minlength=n_groups * n_classes)
    majority = weight.reshape(n_groups, n_classes).argmax(axis=1)
    return y != majority[group]


# ------------------------------------------------------------------------------------------ verification
def verify_tree(dataset: Dataset, tree: Tree, value: float, penalty: float, min_leaf: int, depth: int,
                nodes: int) -> None:
    """Check a search's ``tree`` against its ``value`` (errors + penalty x branch nodes, recomputed by routing
    ``dataset``), the limits ``depth`` and ``nodes`` and ``min_leaf``; :class:`VerificationError` if not."""
    leaves = tree.apply(dataset.raw)
    objective = dataset.misclassifications(tree, leaves) + penalty * tree.n_branch_nodes
    if not is_close(objective, value):
        raise VerificationError(f"search objective {value!r} but the rebuilt tree scores {objective!r}")
    if tree.depth > depth or tree.n_branch_nodes > nodes:
        raise VerificationError(f"rebuilt tree has depth {tree.depth} and {tree.n_branch_nodes} branch nodes; "
                                f"limits are {depth} and {nodes}")
    sizes = np.bincount(leaves, minlength=tree.n_nodes)
    small = [i for i, node in enumerate(tree.nodes) if node.is_leaf and 0 < sizes[i] < min_leaf]
    if small:
        raise VerificationError(f"leaves {small} hold fewer than min_leaf={min_leaf} rows")


def in_threads(count: int, task: Callable[[int], object], report: Callable[[], None]) -> tuple[list, float]:
    """``task(t)`` for t = 0 .. ``count`` - 1: task 0 in this thread, which reports progress through ``report``
    (:mod:`odtmip.core.progress`), the others each in a thread of its own (the kernels they run release the GIL).
    Returns their results and the seconds they took together; an exception of any task is raised here once all have
    ended."""
    results: list = [None] * count
    errors: list = []

    def run(t: int) -> None:
        try:
            results[t] = task(t)
        except BaseException as exc:  # re-raised in the calling thread
            errors.append(exc)

    helpers = [threading.Thread(target=run, args=(t,), daemon=True) for t in range(1, count)]
    t0 = time.perf_counter()
    for thread in helpers:
        thread.start()
    progress._DP_REPORT[0] = report
    try:
        run(0)
    finally:
        for thread in helpers:
            thread.join()
        progress._DP_REPORT[0] = None
    if errors:
        raise errors[0]
    return results, time.perf_counter() - t0
