"""Each formulation's size, counted before the model is built (``Formulation.size``), is the size of the built model
as handed to HiGHS (``model_statistics``): rows, columns and nonzeros, exactly, over topologies, options and data."""

import numpy as np
import pandas as pd
import pytest
from _data import mixed_data

from odtmip import Dataset
from odtmip.models import FORMULATIONS, model_statistics

KEYS = ("n_constraints", "n_variables", "n_nonzeros")


def edge_data(n_classes=2, seed=3, n=24):
    """A 5-value numeric column, a 0/1 column, a constant column (a one-bucket ordinal group), a 4-level
    categorical column; some weights 0."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.integers(0, 5, n).astype(float), "b": np.repeat([0.0, 1.0], [n // 2, n - n // 2]),
                      "k": np.full(n, 3.0), "c": pd.Categorical(rng.integers(0, 4, n).astype(str))})
    return Dataset(X, rng.integers(0, n_classes, n), sample_weight=rng.integers(0, 3, n))


DATA = {
    "mixed": lambda: mixed_data(0, n=15, max_weight=None),
    "weighted": lambda: mixed_data(1, n=22),
    "edge": edge_data,
    "thresholds": lambda: Dataset(edge_data().X, edge_data().y, numeric="thresholds"),
    "3 classes": lambda: edge_data(n_classes=3),
    "numeric": lambda: Dataset(edge_data().X[["a", "b", "k"]], edge_data().y, sample_weight=edge_data().sample_weight),
}


def sizes(name, data, depth, **values):
    """(the formulation's size, the built model's statistics) for these options."""
    f = FORMULATIONS[name]
    opts = f.make_options(depth, None, {**values, **f.fixed})
    built = model_statistics(f.build(data, depth, opts))
    return f.size(data, depth, opts), {key: built[key] for key in KEYS}


GUNLUK = [
    {}, {"topology": "depth2.5"}, {"topology": "imbalanced"}, {"topology": "balanced-3"}, {"topology": "balanced-1"},
    {"strengthen": False}, {"delete_variables": False}, {"strengthen": False, "delete_variables": False},
    {"anchors": False}, {"relax": False}, {"ordinal": False}, {"max_card": 1},
    {"max_card": 2, "topology": "imbalanced"},
    {"anchors": False, "order_symmetry": True, "max_card": 1, "topology": "depth3"},
    {"min_specificity": 0.6}, {"min_sensitivity": 0.8, "delete_variables": False, "topology": "depth2.5"},
    {"strengthen": False, "min_specificity": 0.5, "ordinal": False, "max_card": 1, "topology": "imbalanced"},
]


@pytest.mark.parametrize("values, data", [(values, data) for k, values in enumerate(GUNLUK)
                                          for data in ("edge", ("mixed", "weighted", "thresholds")[k % 3])], ids=str)
def test_gunluk_size_is_the_built_models(values, data):
    size, built = sizes("gunluk", DATA[data](), None, **values)
    assert size == built


BINOCT = [
    {"leaf_penalty": lam, "thresholds": thresholds, "bits": bits}
    for lam in (0.0, 0.05) for thresholds in ("all", "boundary") for bits in ("trie", "reference")
] + [{"root_pass_through": True}, {"leaf_penalty": 0.05, "root_pass_through": False}, {"surplus_bit_fix": False},
     {"bits": "reference", "surplus_bit_fix": False, "leaf_penalty": 0.1},
     {"min_specificity": 0.7}, {"min_sensitivity": 0.6, "positive": 0}, {"class_weight": 2.5, "leaf_penalty": 0.05}]


@pytest.mark.parametrize("values, depth, data", [
    (values, depth, data) for k, values in enumerate(BINOCT)
    for depth, data in ((1 + k % 3, "weighted"), (1 + (k + 1) % 3, "edge"), (2, "3 classes"))
    if data != "3 classes" or not {"min_specificity", "min_sensitivity", "class_weight"} & set(values)], ids=str)
def test_binoct_size_is_the_built_models(values, depth, data):
    size, built = sizes("binoct", DATA[data](), depth, **values)
    assert size == built


@pytest.mark.parametrize("data", ["edge", "3 classes"])
@pytest.mark.parametrize("depth", [0, 1, 2, 3])
@pytest.mark.parametrize("values", [{}, {"alpha": 0.1}, {"min_leaf": 3},
                                    {"alpha": 0.05, "min_leaf": 2, "scaling": "minmax"}, {"min_specificity": 0.7},
                                    {"class_weight": 3.0, "alpha": 0.1, "positive": 0}], ids=str)
def test_oct_size_is_the_built_models(data, depth, values):
    if data == "3 classes" and {"min_specificity", "class_weight"} & set(values):
        pytest.skip("class weights and targets are two-class objectives")
    size, built = sizes("oct", DATA[data](), depth, **values)
    assert size == built


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
@pytest.mark.parametrize("values", [{}, {"alpha": 0.1, "complexity": "splits"}, {"min_leaf": 2, "mu": 0.01}], ids=str)
def test_oct_h_size_is_the_built_models(depth, values):
    size, built = sizes("oct-h", DATA["numeric"](), depth, **values)
    assert size == built
