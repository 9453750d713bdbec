"""The DP under side constraints it can express (:mod:`odtmip.models.constraints`): ``Forbid`` drops the columns'
splits, ``MinLeafSize`` is the DP's ``min_leaf``; both exactly, so ``odtmip.solve(data, "dp", constraints=[...])``
takes them and ``odtmip check`` expects the MIP's optimum to equal the DP's. ``Require(column, at="root")`` fixes the
root's split to each of the column's binary columns in turn and solves both sides one level shallower: the MIP
pipeline's warm start uses it, but it is no exact DP (the best sides may predict one class, and then the root is no
split of the canonical tree), so the ``"dp"`` solver refuses it, as it refuses every other constraint.
"""

from __future__ import annotations

from dataclasses import replace

from odtmip.core.data import Dataset
from odtmip.core.exceptions import OptionError, VerificationError
from odtmip.core.results import SolveResult
from odtmip.core.tree import branch
from odtmip.models.constraints import check_constraints, tree_spec

#: The DP solvers and the side constraints each expresses exactly (by the keys of ``Constraint.dp``).
EXACT = {"dp": ("drop", "min_leaf"), "contree": ("min_leaf",)}


def dp_form(constraints) -> dict:
    """What the DP does under ``constraints``, merged: ``drop`` (raw columns), ``min_leaf``, ``root`` (a raw column);
    an OptionError naming the first constraint the DP cannot express."""
    form: dict = {"drop": set(), "min_leaf": 1, "root": None}
    for c in constraints:
        if c.dp is None:
            raise OptionError(f"the DP cannot express {c.describe()}; use a MIP formulation (gunluk, binoct, oct)")
        form["drop"] |= c.dp.get("drop", set())
        form["min_leaf"] = max(form["min_leaf"], c.dp.get("min_leaf", 1))
        if "root" in c.dp:
            if form["root"] not in (None, c.dp["root"]):
                return {**form, "root": -1}  # two different roots: no tree
            form["root"] = c.dp["root"]
    return form


def without_columns(data: Dataset, drop: set) -> Dataset:
    """``data`` over its binary columns that read none of the raw columns ``drop`` (every midpoint of its numeric
    columns where the DP searches them all)."""
    if data.every_threshold:
        from odtmip.dp.contree import midpoint_columns

        data = midpoint_columns(data)
    if not drop:
        return data
    return data.derive([c for c in data.columns if not set(c.split.columns) & drop])


def dp_problem(data: Dataset, solver: str, constraints, options: dict) -> tuple[Dataset, str, dict, list]:
    """``odtmip.solve(data, "dp" | "contree", constraints=[...])`` as a DP problem without constraints: ``(data,
    solver, options, constraints)``, the data without the forbidden columns' splits and ``min_leaf`` raised; an
    OptionError for a constraint the solver does not express exactly (:data:`EXACT`)."""
    constraints = check_constraints(constraints, data)
    form = dp_form(constraints)
    unsupported = [c.describe() for c in constraints if set(c.dp) - set(EXACT[solver])]
    if unsupported:
        raise OptionError(f"the {solver} solver takes {' and '.join(EXACT[solver])} constraints only "
                          f"({'Forbid, MinLeafSize' if solver == 'dp' else 'MinLeafSize'}); not {unsupported[0]}: "
                          "use a MIP formulation (gunluk, binoct, oct)")
    options = {**options, "min_leaf": max(options.get("min_leaf", 1), form["min_leaf"])}
    if form["drop"]:
        data, solver = without_columns(data, form["drop"]), "dp"
    return data, solver, options, constraints


def verified(result: SolveResult, data: Dataset, constraints) -> SolveResult:
    """``result`` with the constraints in its statistics, after checking that its tree meets them all."""
    if result.tree is not None and any(c.holds(result.tree, data) is False for c in constraints):
        raise VerificationError(f"{result.solver}: the DP's tree breaks a constraint it expresses exactly")
    return replace(result, stats={**result.stats, "constraints": [c.describe() for c in constraints]})


def dp_tree_under(data: Dataset, depth: int, form: dict, dp_options: dict, solve_problem):
    """The DP's best tree on ``data``'s binary columns under ``form`` (:func:`dp_form`) at ``depth``, or None.
    ``solve_problem(data, depth, options)`` solves one DP problem (a SolveResult); with a fixed root each split of
    the root's column is tried, its two sides solved one level shallower."""
    data = without_columns(data, form["drop"])
    options = {**dp_options, "min_leaf": max(dp_options.get("min_leaf", 1), form["min_leaf"])}
    if form["root"] is None:
        return solve_problem(data, depth, options).tree
    if depth < 1 or form["root"] < 0:
        return None
    best = None
    for j, column in enumerate(data.columns):
        if form["root"] not in column.split.columns:
            continue
        right = data.Xb[:, j] == 1
        if right.all() or not right.any():
            continue
        sides = [solve_problem(data.subset(rows), depth - 1, options) for rows in (~right, right)]
        if any(side.tree is None for side in sides):
            continue
        total = sum(side.objective for side in sides) + options.get("penalty", 0.0)
        if best is None or total < best[0] - 1e-12:
            spec = branch(column.split, tree_spec(sides[0].tree), tree_spec(sides[1].tree))
            best = (total, data.new_tree(spec))
    return None if best is None else best[1]
