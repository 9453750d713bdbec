"""odtmip.core.options: one declaration per solver, checked by odtmip.solve; None means what the declaration says."""

import doctest
import importlib
import inspect
from dataclasses import fields

import numpy as np
import pytest

import odtmip
from odtmip import Dataset
from odtmip.core import options
from odtmip.core.datasets import load
from odtmip.core.exceptions import OptionError
from odtmip.core.options import OPTIONS, REQUIRED, defaults, memory_text, options_of, validate
from odtmip.dp import solve_contree, solve_dp
from odtmip.dp.pareto import ParetoSolver
from odtmip.models import HighsOptions
from odtmip.solving import solvers

MIP_SOLVERS = ("gunluk", "binoct", "oct", "oct-h")


@pytest.fixture(scope="module")
def monk1():
    return Dataset(*load("monk1"))


@pytest.fixture(scope="module")
def tiny():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 0.0], [4.0, 1.0], [5.0, 0.0]])
    return Dataset(X, [0, 0, 1, 1, 0, 1])


def test_dp_without_a_depth_limit_finds_the_sparse_optimum(monk1):
    # regression: solve() dropped max_depth=None and solved depth 3 (0.181111), reported as optimal
    result = odtmip.solve(monk1, "dp", max_depth=None, leaf_penalty=0.01)
    assert result.optimal and result.tree.n_leaves == 7 and monk1.misclassifications(result.tree) == 0
    assert result.objective == pytest.approx(0.07, rel=0, abs=1e-12)
    assert result.objective == solve_dp(monk1, max_depth=None, leaf_penalty=0.01).objective


def test_dp_without_a_depth_limit_needs_a_penalty(tiny):
    with pytest.raises(OptionError, match="needs leaf_penalty > 0"):
        odtmip.solve(tiny, "dp", max_depth=None)


@pytest.mark.parametrize("solver", MIP_SOLVERS)
def test_mip_solvers_need_a_depth(tiny, solver):
    with pytest.raises(OptionError, match=rf"^{solver} needs max_depth: an integer .* got None; None \(no depth limit"):
        odtmip.solve(tiny, solver, max_depth=None)


@pytest.mark.parametrize("solver", ["binoct", "oct", "oct-h"])
def test_a_missing_required_depth_is_named(tiny, solver):
    with pytest.raises(OptionError, match=rf"^{solver} needs max_depth \([DK]: depth of the complete tree\)"):
        odtmip.solve(tiny, solver)


def test_unknown_solver_and_option(tiny):
    with pytest.raises(OptionError, match="unknown solver 'cart'; available: dp, contree, gunluk, binoct, oct, oct-h"):
        odtmip.solve(tiny, "cart")
    with pytest.raises(OptionError, match=r"solver 'dp' does not take option\(s\) alpha, topology; it takes max_depth"):
        odtmip.solve(tiny, "dp", topology="depth2", alpha=0.1)
    with pytest.raises(OptionError, match=r"'oct-h' does not take option\(s\) hyperplanes"):  # fixed by the solver
        validate("oct-h", max_depth=1, hyperplanes=False)


@pytest.mark.parametrize("solver, name, value, allowed", [
    ("dp", "max_depth", "3", "an integer in [0, 20] or None (no depth limit"),
    ("dp", "max_depth", 2.0, "an integer in [0, 20]"),
    ("dp", "max_depth", True, "an integer in [0, 20]"),
    ("dp", "max_depth", 21, "an integer in [0, 20]"),
    ("dp", "min_leaf", 0, "an integer >= 1"),
    ("dp", "penalty", -0.5, "a number >= 0"),
    ("dp", "leaf_penalty", float("nan"), "a number >= 0 or None (no leaf penalty)"),
    ("dp", "time_limit", 0, "a number > 0 or None (no time limit)"),
    ("dp", "options", {"cache": None}, "a DPOptions or None"),
    ("gunluk", "class_weight", 0, "a number in [0.0001, 10000]"),
    ("gunluk", "strengthen", "yes", "True or False"),
    ("gunluk", "min_specificity", 1.5, "a number in [0, 1] or None (no target)"),
    ("gunluk", "warm_start", "cart", "one of 'dp', 'none' or a Tree or None"),
    ("binoct", "thresholds", "some", "one of 'all', 'boundary'"),
    ("oct", "mu", 1, "a number in (0, 1)"),
    ("oct-h", "scaling", "rank", "'minmax' or None ('minmax')"),
])
def test_a_bad_value_names_the_option_the_value_and_what_is_allowed(solver, name, value, allowed):
    with pytest.raises(OptionError) as err:
        validate(solver, **{name: value})
    message = str(err.value)
    assert message.startswith(f"{solver}: {name} must be {allowed}") and message.endswith(f", got {value!r}")


def test_none_is_passed_where_it_has_a_meaning_and_refused_where_not():
    assert validate("dp", max_depth=None, leaf_penalty=None, time_limit=None, options=None) == {
        "max_depth": None, "leaf_penalty": None, "time_limit": None, "options": None}
    assert validate("binoct", max_depth=2, root_pass_through=None) == {"max_depth": 2, "root_pass_through": None}
    with pytest.raises(OptionError, match=r"^dp needs penalty: a number >= 0, got None$"):
        validate("dp", penalty=None)
    with pytest.raises(OptionError, match=r"binoct needs leaf_penalty: .* None \(no leaf penalty\) is for dp only"):
        validate("binoct", max_depth=2, leaf_penalty=None)


def test_numbers_come_back_as_int_or_float():
    given = validate("dp", max_depth=np.int64(2), penalty=1, min_leaf=np.int32(3))
    assert given == {"max_depth": 2, "penalty": 1.0, "min_leaf": 3}
    assert [type(v) for v in given.values()] == [int, float, int]
    assert type(validate("gunluk", strengthen=np.bool_(False))["strengthen"]) is bool


def test_solvers_registry_is_the_declaration():
    assert list(odtmip.SOLVERS) == list(OPTIONS)
    assert list(odtmip.SOLVERS["binoct"].options) == [opt.name for opt in OPTIONS["binoct"]]
    assert defaults("dp")["max_depth"] == 3 and "max_depth" not in defaults("oct")


# ------------------------------------------------------------------ the declaration against the solvers
#: Keywords of solve_mip that its callers in odtmip pass (check hands over its DP solves), not options of a user's.
PIPELINE_INTERNAL = ("dp_solved", "dp_bound")


def _solver_parameters(solver: str) -> dict:
    """The keywords the solver function takes, with their defaults: its parameters and its options' fields."""
    func = solvers.SOLVERS[solver].load()
    params = {name: p.default for name, p in inspect.signature(func).parameters.items()
              if p.kind is p.POSITIONAL_OR_KEYWORD and name not in ("data", "dataset", *PIPELINE_INTERNAL)}
    if solver not in ("dp", "contree"):  # a MIP options dataclass: its fields are keyword options too
        module, name = options_of(solver)["options"].allowed[0].target.split(":")
        params.update({f.name: f.default for f in fields(getattr(importlib.import_module(module), name))})
        if solver == "oct-h":
            del params["hyperplanes"]  # the oct-h entry fixes it
    else:  # odtmip.solve hands a DP solver the constraints it expresses as data and options (solving.constrained)
        params["constraints"] = None
    return params


@pytest.mark.parametrize("solver", list(OPTIONS))
def test_declared_options_and_defaults_are_the_solvers(solver):
    params = _solver_parameters(solver)
    declared = options_of(solver)
    assert set(declared) == set(params)
    for name, opt in declared.items():
        if params[name] is inspect.Parameter.empty:
            assert opt.default is REQUIRED, name
        elif not (solvers.SOLVERS[solver].mip and name == "max_depth"):
            # the pipeline's max_depth is None by default: each formulation's options say what None means (Günlük:
            # the topology decides, depth2 = balanced-2) or refuse it (BinOCT, OCT: REQUIRED)
            assert opt.default == params[name], name
    required = {name: 1 for name, opt in declared.items() if opt.default is REQUIRED}
    assert validate(solver, **required, **defaults(solver)) == {**required, **defaults(solver)}


def test_the_dp_depth_cap_is_the_solvers():
    from odtmip.dp.common import MAX_DEPTH_CAP

    assert options_of("dp")["max_depth"].allowed[0].high == MAX_DEPTH_CAP


@pytest.mark.parametrize("solver, given", [
    ("dp", {"max_depth": 21}), ("dp", {"min_leaf": 0}), ("dp", {"max_nodes": -1}), ("dp", {"penalty": -0.5}),
    ("dp", {"leaf_penalty": -0.1}), ("dp", {"time_limit": 0}),
    ("gunluk", {"max_depth": 13}), ("gunluk", {"max_depth": 0}), ("gunluk", {"max_card": 0}),
    ("gunluk", {"class_weight": 0}), ("gunluk", {"min_sensitivity": -0.1}), ("gunluk", {"positive": 2}),
    ("gunluk", {"class_weight": 1e308}), ("binoct", {"max_depth": 1, "class_weight": 1e-5}),
    ("oct", {"max_depth": 1, "class_weight": 1e5}),
    ("gunluk", {"warm_start": "cart"}),
    ("binoct", {"max_depth": 0}), ("binoct", {"max_depth": 1, "leaf_penalty": -1}),
    ("binoct", {"max_depth": 1, "bits": "x"}), ("binoct", {"max_depth": 1, "thresholds": "x"}),
    ("binoct", {"max_depth": 1, "warm_start": "cart"}),
    ("oct", {"max_depth": 13}), ("oct", {"max_depth": -1}), ("oct", {"max_depth": 1, "alpha": -1}),
    ("oct", {"max_depth": 1, "min_leaf": 0}), ("oct", {"max_depth": 1, "mu": 1.0}),
    ("oct", {"max_depth": 1, "epsilon_floor": 0}), ("oct", {"max_depth": 1, "complexity": "x"}),
    ("oct", {"max_depth": 1, "scaling": "x"}), ("oct-h", {"max_depth": 1, "scaling": "rank"}),
    ("binoct", {"max_depth": 1, "memory_limit": 0}),
])
def test_what_the_declaration_refuses_the_solver_refuses_too(tiny, solver, given):
    with pytest.raises(OptionError):
        validate(solver, **given)
    with pytest.raises(OptionError):  # the solver function itself, without odtmip.solve
        solvers.SOLVERS[solver].load()(tiny, **given)


@pytest.mark.parametrize("solver, given, message", [
    ("dp", {"penalty": 1.0, "leaf_penalty": 0.1}, "not both"),
    ("gunluk", {"topology": "balanced-13"}, "between 1 and 12"),
    ("gunluk", {"anchors": True, "order_symmetry": True}, "use one of them"),
    ("gunluk", {"min_specificity": 0.5, "min_sensitivity": 0.5}, "not both"),
])
def test_rules_left_to_the_solver_still_raise_through_solve(tiny, solver, given, message):
    assert validate(solver, **given) == given  # each value is allowed on its own
    with pytest.raises(OptionError, match=message):
        odtmip.solve(tiny, solver, **given)


@pytest.mark.parametrize("call", [
    lambda data: odtmip.solve(data, "dp", time_limit=np.inf),
    lambda data: solve_dp(data, 1, time_limit=np.inf),  # regression: the DP's own functions took inf
    lambda data: solve_contree(data, 1, time_limit=np.inf),
    lambda data: ParetoSolver(data).front(1, time_limit=np.inf),  # `odtmip front --time-limit inf`
    lambda data: HighsOptions(time_limit=np.inf),
    lambda data: solve_dp(data, 1, time_limit="5"),
], ids=["solve", "solve_dp", "solve_contree", "front", "HighsOptions", "text"])
def test_one_time_limit_rule_everywhere(tiny, call):
    with pytest.raises(OptionError, match=r"time_limit must be a number > 0 or None \(no time limit\), got (inf|'5')$"):
        call(tiny)


@pytest.mark.parametrize("gib, text", [(0.00001, "0.01 MiB"), (0.0052, "5.3 MiB"), (0.024, "25 MiB"),
                                       (0.999, "1023 MiB"), (1.0, "1.0 GiB"), (75.49, "75.5 GiB")])
def test_memory_sizes_read_in_mib_below_a_gib(gib, text):
    assert memory_text(gib) == text  # "about 0.0 GiB" told nothing


def test_doctests():
    for module in (options, solvers):
        assert doctest.testmod(module).failed == 0


SWITCH_CLASSES = ("odtmip.dp.solver:DPOptions", "odtmip.dp.contree:ContreeOptions", "odtmip.dp.pareto:ParetoOptions",
                  "odtmip.models.gunluk:GunlukOptions", "odtmip.models.binoct:BinOCTOptions",
                  "odtmip.models.oct:OCTOptions")


@pytest.mark.parametrize("path", SWITCH_CLASSES)
def test_every_on_off_switch_of_an_options_class_takes_only_true_or_false(path):
    module, name = path.split(":")
    cls = getattr(importlib.import_module(module), name)
    switches = [f.name for f in fields(cls) if isinstance(f.default, bool)]
    assert switches
    for switch in switches:
        for bad in ("no", 0, 1, None):
            with pytest.raises(OptionError, match=rf"^{switch} must be True or False, got {bad!r}$"):
                cls(**{switch: bad})
        assert getattr(cls(**{switch: np.bool_(False)}), switch) == np.bool_(False)
