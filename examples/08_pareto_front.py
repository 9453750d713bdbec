"""
The Pareto front of false positives and false negatives: every constrained tree at once
========================================================================================

Run it with ``python examples/08_pareto_front.py`` (a few seconds). ``07_sensitivity.py`` solves Günlük et al.'s
MIP once per specificity target. Demirović and Stuckey ([DS21], "Optimal decision trees for nonlinear metrics",
AAAI 2021) observe that every such problem, and every metric that only gets better with fewer false positives
and fewer false negatives (accuracy, F1, Matthews correlation, balanced accuracy), is solved by a tree on the
**Pareto front** of (FP, FN) pairs: the trees no other tree beats in both counts. Their dynamic program computes
the whole front in one search, merging the children's fronts at every split.

The script computes the front of depth-2 trees on the 40 MONK's-1 rows of ``07_sensitivity.py``, over the splits
of Günlük's model (every subset of a column's levels, as ``odtmip check`` hands them to the DP), and reads off:

* each specificity target of example 07: the fewest false negatives among the front's points with
  ``TN >= ceil(tau |I-|)`` -- the same numbers the MIP proved there, one solve instead of seven;
* the accuracy optimum (the least FP + FN on the front) and the F1 optimum, which need not be the same tree;

and draws the front in sensitivity/specificity space, the exact counterpart of an ROC curve for optimal trees.

Known results (the test suite checks them): the front is (FP, FN) = (0, 6), (2, 5), (4, 3), (5, 2), (6, 1),
(9, 0); the targets' missed positives are 0, 0, 1, 2, 5, 6, 6 for tau = 0, 0.5, ..., 1.0, as the MIP proved in
example 07, and the DP's constrained solves give the same; min FP + FN on the front, 6, is the DP's accuracy
optimum over the same splits.
"""

import math
from fractions import Fraction

import numpy as np

import odtmip
from odtmip.core.datasets import load
from odtmip.core.metrics import Confusion
from odtmip.dp.pareto import ParetoSolver
from odtmip.solving.check import dp_problem

N, SEED, DEPTH = 40, 0, 2
TARGETS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def main(verbose: bool = True) -> dict:
    """Compute the front and read the constrained optima off it; returns the numbers it prints."""
    say = print if verbose else (lambda *a, **k: None)
    monk1 = odtmip.Dataset(*load("monk1"))
    rows = monk1.subset(np.sort(np.random.default_rng(SEED).choice(monk1.n_samples, N, replace=False)))
    # the splits of Günlük's model: a test "column in S" for every subset S of a column's levels (one binary
    # column each), as odtmip check gives them to the DP; one-hot columns alone would allow fewer trees
    data = dp_problem(rows, "gunluk", DEPTH).data
    negatives = int(np.sum(data.y == 0))
    front = ParetoSolver(data).front(max_depth=DEPTH)
    say(f"data: {data.describe()}; positive class {front.positive!r}; {len(front.points)} Pareto-optimal trees")
    say("   fp   fn    tpr    tnr  nodes")
    for p in front.points:
        say(f"{p.fp:5g}{p.fn:5g}  {p.tpr:.3f}  {p.tnr:.3f}  {p.nodes:5d}")

    # a specificity target tau: TN >= ceil(tau |I-|), i.e. FP <= |I-| - ceil(tau |I-|) (exact, in fractions)
    from_front, from_dp = [], []
    for tau in TARGETS:
        most_fp = negatives - math.ceil(Fraction(str(tau)) * negatives)
        from_front.append(min(p.fn for p in front.points if p.fp <= most_fp))
        from_dp.append(odtmip.solve(data, "dp", max_depth=DEPTH, min_specificity=tau).objective)
    say(f"\nmissed positives per specificity target {TARGETS}:\n  read off the front: {from_front}\n"
        f"  the DP's constrained solves: {from_dp}")

    accuracy = odtmip.solve(data, "dp", max_depth=DEPTH)  # the MurTree DP: least FP + FN
    f1 = odtmip.solve(data, "dp", max_depth=DEPTH, metric="f1")
    best = min(front.points, key=lambda p: p.fp + p.fn)
    say(f"\naccuracy optimum: {accuracy.objective:g} errors (front: {best.fp:g} + {best.fn:g})")
    f1_counts = Confusion.from_labels(data.y, f1.tree.predict_index(data.X))
    say(f"F1 optimum: F1 = {f1_counts.f1:.4f} (FP {f1_counts.fp:g}, FN {f1_counts.fn:g})\n{f1.tree.to_text()}")
    return {"pairs": front.pairs, "from_front": from_front, "from_dp": from_dp,
            "accuracy": accuracy.objective, "front_accuracy": best.fp + best.fn,
            "f1": (f1_counts.fp, f1_counts.fn), "figure": plot(front, best, f1_counts)}


def plot(front, best, f1_counts):
    """The front in sensitivity/specificity space, the accuracy and F1 optima marked."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.8))
    spec = [p.tnr for p in front.points]
    sens = [p.tpr for p in front.points]
    ax.plot(spec, sens, "o-", drawstyle="steps-post", label="Pareto-optimal trees")
    ax.plot(best.tnr, best.tpr, "s", markersize=10, fillstyle="none", label="accuracy optimum")
    ax.plot(f1_counts.specificity, f1_counts.sensitivity, "^", markersize=10, fillstyle="none", label="F1 optimum")
    ax.set_xlabel("specificity (TN / negatives)")
    ax.set_ylabel("sensitivity (TP / positives)")
    ax.set_xlim(-0.05, 1.1)
    ax.set_ylim(-0.05, 1.1)
    ax.legend(fontsize=8, loc="lower left")
    ax.set_title(f"The (FP, FN) front of depth-{DEPTH} trees", fontsize=10)
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    import matplotlib.pyplot as plt

    main()
    plt.show()
