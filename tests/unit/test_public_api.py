"""The public names a user's code and the documentation reach, wherever the modules behind them live."""

import importlib

import pytest

import odtmip

#: (module, attribute): each resolves.
PUBLIC = [
    ("odtmip", "Dataset"), ("odtmip", "Tree"), ("odtmip", "Split"), ("odtmip", "branch"), ("odtmip", "leaf"),
    ("odtmip", "solve"), ("odtmip", "SOLVERS"), ("odtmip", "SolveResult"), ("odtmip", "Status"),
    ("odtmip", "compare"), ("odtmip", "OptimalTreeClassifier"), ("odtmip", "__version__"),
    ("odtmip.dp", "solve_dp"), ("odtmip.dp", "solve_contree"), ("odtmip.dp", "solve_numeric"),
    ("odtmip.dp", "DPSolver"), ("odtmip.dp", "DPOptions"), ("odtmip.dp", "ContreeSolver"),
    ("odtmip.dp", "ParetoSolver"), ("odtmip.dp", "warm_up"),
    ("odtmip.models", "FORMULATIONS"), ("odtmip.models", "HighsOptions"), ("odtmip.models", "lp_relaxation"),
    ("odtmip.models", "model_statistics"), ("odtmip.models", "solve_model"), ("odtmip.models", "DPProblem"),
    ("odtmip.models.gunluk", "build_model"), ("odtmip.models.gunluk", "GunlukOptions"),
    ("odtmip.models.gunluk", "decode_tree"), ("odtmip.models.binoct", "build_model"),
    ("odtmip.models.binoct", "BinOCTOptions"), ("odtmip.models.oct", "build_model"),
    ("odtmip.models.oct", "OCTOptions"),
    ("odtmip.solving.pipeline", "solve_mip"), ("odtmip.solving.check", "check"),
    ("odtmip.solving.compare", "to_markdown"), ("odtmip.solving.compare", "ablation"),
    ("odtmip.solving.select", "select_topology"), ("odtmip.core.datasets", "load"),
    ("odtmip.core.metrics", "Confusion"), ("odtmip.core.deploy", "SavedTree"), ("odtmip.cli", "main"),
]


@pytest.mark.parametrize("module, name", PUBLIC, ids=[f"{m}.{n}" for m, n in PUBLIC])
def test_the_public_name_resolves(module, name):
    assert getattr(importlib.import_module(module), name) is not None


def test_the_package_lists_its_names():
    assert set(odtmip.__all__) <= set(dir(odtmip))
    assert callable(odtmip.compare)  # the function, although a module is named compare too


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'solve_gunluk'"):
        odtmip.solve_gunluk  # noqa: B018
