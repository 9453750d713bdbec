"""``odtmip predict`` and ``odtmip show``: a tree file written by ``odtmip fit --save`` (:mod:`odtmip.core.deploy`)
labels new data, or is printed as text or Graphviz DOT, or drawn."""

from __future__ import annotations

import argparse
import sys

from odtmip.cli import common


def add_parsers(sub) -> None:
    """``odtmip predict`` (run by :func:`run`) and ``odtmip show`` (:func:`run_show`)."""
    p = sub.add_parser("predict", help="label data with a saved tree (odtmip fit --save)",
                       description="Label every row of DATA with the tree in TREE; one CSV row per data row.")
    p.add_argument("tree", metavar="TREE", help="a tree file written by `odtmip fit ... --save TREE`")
    p.add_argument("data", metavar="DATA", help="a bundled dataset name or a file path (read as `odtmip fit` does)")
    p.add_argument("--output", metavar="FILE", type=common.output_file, help="write the CSV here (default: stdout)")
    p.add_argument("--proba", action="store_true", help="also one column proba_<label> per class")
    g = p.add_argument_group("reading DATA")
    g.add_argument("--format", choices=["csv", "arff", "dl85", "txt"], help="file format (default: from the name)")
    g.add_argument("--data-dir", help="benchmark data folder (default: $ODTMIP_DATA or ../shared/datasets)")
    g.add_argument("--na-values", action="append", default=[], metavar="TEXT", help="one more CSV missing-value marker")
    g.add_argument("--decimal", choices=[".", ","], help="decimal mark of CSV numbers (default: detected)")
    common.add_verbosity(p)
    p.set_defaults(run=run)
    p = sub.add_parser("show", help="print a saved tree as text or Graphviz DOT, or draw it as PNG")
    p.add_argument("tree", metavar="TREE", help="a tree file written by `odtmip fit ... --save TREE`")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--dot", action="store_true", help="print Graphviz DOT source instead of text")
    how.add_argument("--png", metavar="FILE", type=common.image_file,
                     help="draw the tree into FILE with matplotlib (the plot extra)")
    common.add_verbosity(p)
    p.set_defaults(run=run_show)


def run(args: argparse.Namespace) -> int:
    """``odtmip predict``: write the predictions (and probabilities) as CSV."""
    import numpy as np
    import pandas as pd

    from odtmip.core.deploy import SavedTree

    saved = SavedTree.read(args.tree)
    X = read_data(saved, args)
    tree = saved.tree
    tree.check_input(X)
    leaves = tree.apply(X)
    out = pd.DataFrame({saved.target or "prediction": np.asarray(tree.classes)[tree.labels_at(leaves)]})
    if args.proba:
        proba = tree.leaf_proba()[leaves]
        for k, label in enumerate(tree.classes):
            out[f"proba_{label}"] = proba[:, k]
    out.to_csv(args.output if args.output is not None else sys.stdout, index=False, lineterminator="\n")
    return 0


def run_show(args: argparse.Namespace) -> int:
    """``odtmip show``: the tree as text (with what the file says about its fit), as DOT, or drawn to a PNG."""
    from odtmip.core.deploy import SavedTree

    saved = SavedTree.read(args.tree)
    if args.dot:
        print(saved.tree.to_dot())
    elif args.png is not None:
        _draw(saved.tree, args.png)
    else:
        print(saved.describe())
        print(saved.tree.to_text())
    return 0


def _draw(tree, path) -> None:
    import matplotlib  # installed: --png is an image_file, which needs it

    matplotlib.use("Agg")  # a file, never a window
    import matplotlib.pyplot as plt

    ax = tree.plot()
    ax.figure.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(ax.figure)


def read_data(saved, args):
    """The tree's columns of the data ``args.data``, read as ``odtmip fit`` reads it."""
    import pandas as pd

    from odtmip.core import datasets

    def read(categorical):
        # target=0 only splits the first column off; it is put back, so the data need not hold the target at all
        rest, first = datasets.load(args.data, target=0, format=args.format, data_dir=args.data_dir,
                                    na_values=args.na_values, decimal=args.decimal, categorical=categorical)
        return pd.concat([first, rest], axis=1)

    frame = read(())
    levels = saved.tree.levels  # absent from the files of an odtmip that did not record them: read as text then
    text = [name for name, kind in saved.features.items() if kind == "categorical" and name in frame.columns
            and not isinstance(frame[name].dtype, pd.CategoricalDtype)
            and (name not in levels or any(isinstance(v, str) for v in levels[name]))]
    if text:  # read those as text again, as `odtmip fit --categorical` did
        frame = read(text)
    return saved.columns_of(frame, args.data)
