"""Cross-check: solve one problem with a MIP model and with the DP, and say whether the optima agree.

Each formulation states which DP problem has the same optimum (``ARCHITECTURE.md``, "Equivalences"): the DP
over exactly the model's candidate splits, with the model's penalty and minimum leaf size, and an affine map
from the DP's objective to the model's units (:class:`DPProblem`). When the model's tree shape is not a
balanced tree (Günlük's ``depth2.5`` or ``imbalanced``), the DP brackets it: DP(deepest leaf) <= model <=
DP(shallowest leaf). A verdict is only given when the solves it rests on are proven optimal.
"""

from __future__ import annotations

from dataclasses import dataclass

from odtmip.data import Dataset
from odtmip.exceptions import OptionError
from odtmip.results import SolveResult
from odtmip.solvers import solve

MODELS = ("gunluk", "binoct", "oct")


@dataclass(frozen=True)
class DPProblem:
    """The DP problem a MIP model is checked against.

    ``data`` holds the model's candidate splits as binary columns (and its weights); every tree of depth <=
    ``shallow`` fits the model and every tree of the model has depth <= ``deep``; ``exact`` is False when the
    DP sees only part of the model's splits (then only model <= DP(shallow) is implied). The model's
    objective of a tree is ``(DP objective + offset) / scale``.
    """

    data: Dataset
    shallow: int
    deep: int
    exact: bool = True
    penalty: float = 0.0
    min_leaf: int = 1
    offset: float = 0.0
    scale: float = 1.0

    def in_model_units(self, dp_objective: float | None) -> float | None:
        return None if dp_objective is None else (dp_objective + self.offset) / self.scale

    def solve(self, depth: int, time_limit: float | None) -> SolveResult:
        return solve(self.data, "dp", max_depth=depth, penalty=self.penalty, min_leaf=self.min_leaf,
                     time_limit=time_limit)


def dp_problem(data: Dataset, model: str, max_depth: int | None = None, **options) -> DPProblem:
    """The DP problem with the same optimum as ``model`` on ``data`` (``options``: the model's options)."""
    if model == "gunluk":
        from odtmip.models import gunluk

        derived, shallow, deep, exact = gunluk.dp_equivalent(data, gunluk.make_options(max_depth, **options))
        return DPProblem(derived, shallow, deep, exact)
    if max_depth is None:
        raise OptionError(f"checking {model} needs a depth")
    if model == "binoct":
        from odtmip.models import binoct

        opts = binoct.make_options(**options)
        derived, penalty = binoct.dp_equivalent(data, opts)
        weight = float(data.weights.sum())  # RBinOCT = (errors + lambda W branch nodes + lambda W) / W
        return DPProblem(derived, max_depth, max_depth, penalty=penalty, offset=opts.leaf_penalty * weight,
                         scale=weight)
    if model == "oct":
        from odtmip.models import oct as oct_model

        opts = oct_model.make_options(**options)
        if opts.hyperplanes:
            raise OptionError("OCT-H has no DP equivalent (hyperplane splits); check the axis-aligned OCT")
        derived, penalty, min_leaf = oct_model.dp_equivalent(data, opts)
        exact = not oct_model.prepare(data, opts).floored
        baseline = oct_model.baseline_error(data)  # OCT = (errors + alpha L_hat splits) / L_hat
        return DPProblem(derived, max_depth, max_depth, exact, penalty, min_leaf, scale=baseline or 1.0)
    raise OptionError(f"check supports the models {', '.join(MODELS)} (got {model!r})")


@dataclass(frozen=True)
class CheckReport:
    """The outcome of :func:`check`.

    ``verdict`` is ``"agree"``, ``"disagree"`` or ``"unproven"`` (a limit stopped a solve before its proof).
    ``dp`` is the DP solve at the shallow depth and ``dp_deep`` the one at the deep depth (the same object for
    balanced shapes), both in the DP's own units; ``problem.in_model_units`` converts them.
    """

    model: str
    mip: SolveResult
    dp: SolveResult
    dp_deep: SolveResult
    problem: DPProblem
    verdict: str

    @property
    def relation(self) -> str:
        """``"equal"`` when the optima must be equal, ``"bracket"`` when the DP only bounds the model."""
        p = self.problem
        return "equal" if p.shallow == p.deep and p.exact else "bracket"

    @property
    def agree(self) -> bool:
        return self.verdict == "agree"

    def summary(self) -> str:
        """A few lines for people, every objective in the model's units."""
        units = self.problem.in_model_units
        lines = [f"DP optimum: {_fmt(units(self.dp.objective))} ({self.dp.status.value}, {self.dp.seconds:.2f} s)"]
        if self.dp_deep is not self.dp:
            lines.append(f"DP at the topology's full depth: {_fmt(units(self.dp_deep.objective))} "
                         f"({self.dp_deep.status.value})")
        mip = self.mip
        lines.append(f"{self.model} model: {_fmt(mip.objective)} ({mip.status.value}, bound {_fmt(mip.bound)}, "
                     f"{mip.seconds:.2f} s, warm start accepted: {mip.stats.get('warm_start_accepted')})")
        bracket = " (DP deep <= model <= DP shallow)" if self.relation == "bracket" else ""
        lines.append(f"cross-check: {self.verdict}{bracket}")
        return "\n".join(lines)


def _fmt(x) -> str:
    return "none" if x is None else f"{x:.6g}"


def check(data: Dataset, model: str = "gunluk", **options) -> CheckReport:
    """Solve ``data`` with MIP ``model`` (warm-started from the DP) and with the DP; compare the optima.

    ``options`` are passed to ``odtmip.solve(data, model, ...)`` as given: ``max_depth`` (binoct and oct need
    it; without it Günlük's ``topology`` decides), ``time_limit`` (also for each DP solve) and the model's
    options (the fields of ``GunlukOptions``, ``BinOCTOptions`` or ``OCTOptions``).
    """
    time_limit = options.get("time_limit")
    problem = dp_problem(data, model, **{name: value for name, value in options.items() if name != "time_limit"})
    mip = solve(data, model, **options)
    dp = problem.solve(problem.shallow, time_limit)
    dp_deep = dp if problem.deep == problem.shallow else problem.solve(problem.deep, time_limit)
    return CheckReport(model, mip, dp, dp_deep, problem, _verdict(mip, dp, dp_deep, problem))


def _verdict(mip: SolveResult, dp: SolveResult, dp_deep: SolveResult, problem: DPProblem) -> str:
    """``disagree`` when a proof contradicts an inequality the equivalence implies; ``agree`` when all solves
    are proven and both inequalities hold (for a balanced shape they force equality); else ``unproven``."""
    shallow = problem.in_model_units(dp.objective)
    deep = problem.in_model_units(dp_deep.objective)
    if mip.objective is None or shallow is None:
        return "unproven"
    tol = 1e-6 * max(1.0, abs(shallow))
    # the model represents every tree of depth <= shallow, so its proven optimum cannot be worse than a DP tree
    if mip.optimal and mip.objective > shallow + tol:
        return "disagree"
    # every tree of the model has depth <= deep over splits the DP sees (when exact): none beats the DP optimum
    if problem.exact and dp_deep.optimal and deep is not None and mip.objective < deep - tol:
        return "disagree"
    return "agree" if mip.optimal and dp.optimal and dp_deep.optimal else "unproven"
