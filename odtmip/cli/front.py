"""``odtmip front``: the Pareto front of (false positives, false negatives) over trees of bounded depth, with a tree
for every point ([DS21], :class:`odtmip.dp.pareto.ParetoSolver`), as a table, JSON or a plot in
sensitivity/specificity space beside the CART tree and the accuracy-optimal tree of the same depth.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING

from odtmip.cli import common
from odtmip.core.exceptions import OptionError

if TYPE_CHECKING:
    from odtmip.core.data import Dataset
    from odtmip.dp.pareto import ParetoFront


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("front", help="the Pareto front of (false positives, false negatives) of optimal trees",
                       description="Every Pareto-optimal (FP, FN) pair of trees of depth <= D, each with a tree "
                                   "(two-class data).")
    p.add_argument("data", help="a bundled dataset name (see `odtmip datasets`) or a file path")
    p.add_argument("--depth", type=int, default=3, metavar="D", help="maximum depth (default: 3)")
    p.add_argument("--max-nodes", type=int, metavar="N", help="maximum branch nodes (default: 2^D - 1)")
    p.add_argument("--positive", metavar="LABEL", help="the positive class (default: the second label in sorted order)")
    p.add_argument("--time-limit", type=float, metavar="S",
                   help="seconds for the whole command, from its start; at the limit the trees found so far")
    common.add_option(p, "--threads", "threads", "N",
                      help="search threads (default: the cores this process may use); the front and its trees are "
                           "those of one thread")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--plot", metavar="FILE", type=common.image_file,
                   help="draw the front in sensitivity/specificity space to FILE (.png, .pdf)")
    common.add_data_options(p)
    common.add_verbosity(p)
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    """``odtmip front``: solve the front, print it (table or JSON), draw it if asked."""
    from odtmip.dp.pareto import ParetoSolver

    data = common.load_dataset(args)
    solver = ParetoSolver(data, positive=args.positive, threads=getattr(args, "threads", None))
    front = solver.front(args.depth, args.max_nodes, time_limit=common.time_left(args, args.time_limit))
    if args.plot:
        plot_front(front, data, args.depth, args.plot)
    if args.json:
        print(json.dumps(front_record(front)))
        return 0
    print(f"data: {args.data}: {data.describe()}")
    print(f"positive class: {front.positive}  status: {front.status.value}  points: {len(front.points)}  "
          f"time: {front.seconds:.3f} s")
    print(f"{'fp':>10} {'fn':>10} {'tpr':>7} {'tnr':>7} {'f1':>7} {'nodes':>5}")
    for p in front.points:
        print(f"{p.fp:10g} {p.fn:10g} {p.tpr:7.4f} {p.tnr:7.4f} {p.confusion.f1:7.4f} {p.tree.n_branch_nodes:5d}")
    return 0


def front_record(front: ParetoFront) -> dict:
    """The JSON form: ``{"front": [{"fp", "fn", "tpr", "tnr", "tree"}, ...], "status", ...}``."""
    positive = front.positive
    return {
        "front": [{"fp": p.fp, "fn": p.fn, "tpr": p.tpr, "tnr": p.tnr, "tree": p.tree.to_dict()} for p in front.points],
        "status": front.status.value,
        "stop_reason": front.stop_reason,
        "positive": positive if isinstance(positive, (str, int, float, bool)) else str(positive),
        "seconds": front.seconds,
        "lower_bound": [[a, b] for a, b in front.bound.tolist()],
        "stats": {k: v for k, v in front.stats.items() if not (isinstance(v, float) and not math.isfinite(v))},
    }


def reference_rates(data: Dataset, depth: int, positive_index: int) -> dict[str, tuple[float, float]]:
    """(specificity, sensitivity) on the training data of scikit-learn's CART and of the accuracy-optimal tree
    (the DP) at ``depth``, both over the binary columns."""
    from sklearn.tree import DecisionTreeClassifier

    from odtmip.dp.pareto import confusion
    from odtmip.solving.solvers import solve

    w = data.weights
    P, N = float(w[data.y == positive_index].sum()), float(w[data.y != positive_index].sum())

    def rates(pred):
        actual = data.y == positive_index
        c = confusion(float(w[pred & ~actual].sum()), float(w[~pred & actual].sum()), P, N)
        return c.specificity, c.sensitivity

    cart = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(data.Xb, data.y, sample_weight=w)
    best = solve(data, "dp", max_depth=depth).tree
    return {"CART": rates(cart.predict(data.Xb) == positive_index),
            "accuracy-optimal": rates(best.predict_index(data.raw) == positive_index)}


def plot_front(front: ParetoFront, data: Dataset, depth: int, path: str) -> None:
    """Draw the front's trees as (specificity, sensitivity) points, with the CART and accuracy-optimal trees."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise OptionError("--plot needs matplotlib: pip install 'odtmip[plot]'") from None
    positive_index = list(data.classes_).index(front.positive)
    fig = Figure(figsize=(5.5, 5), layout="constrained")
    ax = fig.add_subplot()
    spec = [p.tnr for p in front.points]
    sens = [p.tpr for p in front.points]
    ax.step(spec, sens, where="post", color="0.6", linewidth=1)
    ax.plot(spec, sens, "o", color="C0", label=f"Pareto-optimal trees ({len(front.points)})")
    markers = (("s", "C3"), ("*", "C1"))
    for (name, (x, y)), (marker, color) in zip(reference_rates(data, depth, positive_index).items(), markers,
                                               strict=True):
        ax.plot([x], [y], marker, color=color, markersize=12, markerfacecolor="none", markeredgewidth=1.8, label=name)
    ax.set_xlabel("specificity (true negative rate)")
    ax.set_ylabel(f"sensitivity (true positive rate), positive = {front.positive}")
    status = "" if front.status.value == "optimal" else f" ({front.status.value}: not proven)"
    ax.set_title(f"optimal trees of depth <= {depth}{status}")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left")
    fig.savefig(path)
