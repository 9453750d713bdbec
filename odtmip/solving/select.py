"""Model selection that solves models: the topology of Günlük et al.'s model by cross-validation ([GKLMS] §5).

References
----------
.. [GKLMS] O. Günlük, J. Kalagnanam, M. Li, M. Menickelly, K. Scheinberg, "Optimal decision trees for categorical
   data via integer programming", Journal of Global Optimization 81 (2021) 233-260.
"""

from __future__ import annotations

import numpy as np

from odtmip.core.data import Dataset
from odtmip.core.exceptions import OptionError
from odtmip.solving.pipeline import solve_mip


def select_topology(data: Dataset, candidates=("depth2", "depth2.5", "depth3", "imbalanced"), folds: int = 5,
                    time_limit: float | None = None, random_state: int = 0, **option_values):
    """Pick the topology with the best mean validation accuracy over stratified folds ([GKLMS] §5, Table 13).

    Returns ``(best, scores)`` where ``scores[topology]`` is the list of per-fold validation accuracies. Ties
    go to the earlier candidate (list smaller shapes first). Each fold's model is warm-started from the DP and
    limited to ``time_limit`` seconds; the encoding of ``data`` is shared by all folds.
    """
    from sklearn.model_selection import StratifiedKFold

    if not candidates:
        raise OptionError("select_topology needs at least one candidate topology")
    if folds < 2:
        raise OptionError(f"folds must be >= 2, got {folds}")
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=random_state)
    scores: dict[str, list[float]] = {t: [] for t in candidates}
    for train, test in splitter.split(np.zeros(data.n_samples), data.y):
        fit, held_out = data.subset(train), data.subset(test)
        for topology in candidates:
            result = solve_mip("gunluk", fit, time_limit=time_limit, topology=topology, **option_values)
            if result.tree is None:
                scores[topology].append(0.0)
                continue
            correct = result.tree.predict_index(held_out.raw) == held_out.y
            scores[topology].append(float(held_out.weights[correct].sum() / held_out.weights.sum()))
    best = max(candidates, key=lambda t: (np.mean(scores[t]), -candidates.index(t)))
    return best, scores
