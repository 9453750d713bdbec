"""Cross-check: solve one problem with a MIP model and with the DP, and say whether the optima agree.

Each formulation states which DP problem has the same optimum (``ARCHITECTURE.md``, "Equivalences"). When the
model's tree shape is not a balanced tree, the DP brackets it instead: DP(deepest leaf) <= model <=
DP(shallowest leaf). A verdict is only given when the solves it rests on are proven optimal.
"""

from __future__ import annotations

from dataclasses import dataclass

from odtmip.data import Dataset
from odtmip.exceptions import OptionError
from odtmip.results import SolveResult
from odtmip.solvers import solve


@dataclass(frozen=True)
class CheckReport:
    """The outcome of :func:`check`.

    ``verdict`` is ``"agree"``, ``"disagree"`` or ``"unproven"`` (a limit stopped a solve before its proof).
    ``dp`` is the DP solve at the shallow depth; ``dp_deep`` the one at the deep depth (same object when the
    shape is balanced).
    """

    model: str
    mip: SolveResult
    dp: SolveResult
    dp_deep: SolveResult
    verdict: str
    relation: str  # "equal" or "bracket"

    @property
    def agree(self) -> bool:
        return self.verdict == "agree"

    def summary(self) -> str:
        """Two or three lines for people."""
        lines = [f"DP optimum: {self.dp.objective:g} ({self.dp.status.value}, {self.dp.seconds:.2f} s)"]
        if self.dp_deep is not self.dp:
            lines.append(f"DP at the topology's full depth: {self.dp_deep.objective:g} ({self.dp_deep.status.value})")
        mip = self.mip
        start = mip.stats.get("warm_start_accepted")
        lines.append(f"{self.model} model: {_fmt(mip.objective)} ({mip.status.value}, bound {_fmt(mip.bound)}, "
                     f"{mip.seconds:.2f} s, warm start accepted: {start})")
        lines.append(f"cross-check: {self.verdict}" + (" (DP deep <= model <= DP shallow)"
                                                      if self.relation == "bracket" else ""))
        return "\n".join(lines)


def _fmt(x) -> str:
    return "none" if x is None else f"{x:g}"


def check(data: Dataset, model: str = "gunluk", max_depth: int | None = None, time_limit: float | None = None,
          **options) -> CheckReport:
    """Solve ``data`` with MIP ``model`` (warm-started from the DP) and with the DP; compare the optima.

    ``options`` are the model's options (for ``gunluk``: the fields of ``GunlukOptions``).
    """
    from odtmip.models import gunluk

    if model != "gunluk":
        raise OptionError(f"check supports the models: gunluk (got {model!r})")
    opts = gunluk.make_options(max_depth, **options)
    derived, shallow, deep, exact = gunluk.dp_equivalent(data, opts)
    mip = gunluk.solve_gunluk(data, options=opts, time_limit=time_limit)
    dp = solve(derived, "dp", max_depth=shallow, time_limit=time_limit)
    dp_deep = dp if deep == shallow else solve(derived, "dp", max_depth=deep, time_limit=time_limit)
    relation = "equal" if deep == shallow and exact else "bracket"
    return CheckReport(model, mip, dp, dp_deep, _verdict(mip, dp, dp_deep, exact), relation)


def _verdict(mip: SolveResult, dp: SolveResult, dp_deep: SolveResult, exact: bool) -> str:
    """``disagree`` when a proof contradicts an inequality the equivalence implies; ``agree`` when all solves
    are proven and both inequalities hold (for a balanced shape they force equality); else ``unproven``."""
    if mip.objective is None or dp.objective is None:
        return "unproven"
    tol = 1e-6 * max(1.0, abs(dp.objective))
    # the model represents every tree of depth <= shallow, so its proven optimum cannot be worse than a DP tree
    if mip.optimal and mip.objective > dp.objective + tol:
        return "disagree"
    # every tree of the model has depth <= deep over splits the DP sees (when exact): none beats the DP optimum
    if exact and dp_deep.optimal and mip.objective < dp_deep.objective - tol:
        return "disagree"
    return "agree" if mip.optimal and dp.optimal and dp_deep.optimal else "unproven"
