"""``odtmip compare``: every formulation variant on every dataset and depth (with the DP as reference), as a table
(:func:`odtmip.solving.compare.compare`), written as CSV/Parquet, Markdown, LaTeX and plots."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from odtmip.cli import common
from odtmip.core.exceptions import OptionError


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("compare", help="compare MIP formulations on datasets and depths",
                       description="Run every formulation variant on every dataset and depth (with the DP as "
                                   "reference) and tabulate the runs.")
    p.add_argument("data", nargs="+", help="bundled dataset names or file paths")
    p.add_argument("--solvers", nargs="+", default=None, metavar="SPEC",
                   help="variants, comma-separated: solver[:key=value,...], e.g. "
                        "gunluk,gunluk:strengthen=false,binoct,oct (default: every formulation)")
    p.add_argument("--depth", nargs="+", type=int, default=[2], metavar="D", help="depths (default: 2)")
    p.add_argument("--time-limit", type=float, default=60.0, metavar="S",
                   help="seconds per run, each run whole (default: 60)")
    p.add_argument("--warm-start", nargs="+", default=["dp"], choices=("dp", "cart", "none"),
                   help="warm starts, one run each (default: dp)")
    p.add_argument("--seeds", nargs="+", type=int, default=[None], metavar="N", help="HiGHS seeds, one run each")
    p.add_argument("--dp-bounds", nargs="+", default=["none"], choices=("none", "root", "paths"),
                   help="the DP's bound rows, one run each per variant (default: none)")
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="concurrent runs (-1: one per core)")
    p.add_argument("--backend", default="local", metavar="{local,dask,ray}", help="local (joblib), dask or ray")
    p.add_argument("--scheduler", metavar="ADDR", help="Dask scheduler or Ray cluster address")
    p.add_argument("--store", metavar="FILE.jsonl", type=common.output_file,
                   help="finished runs, one JSON line each; a rerun skips them (default: --output with .jsonl)")
    p.add_argument("--output", metavar="FILE", type=common.output_file, help="the table of runs, .csv or .parquet")
    p.add_argument("--markdown", metavar="FILE", type=common.output_file, help="write the Markdown table here")
    p.add_argument("--latex", metavar="FILE", type=common.output_file, help="write the LaTeX table here")
    p.add_argument("--plot-dir", metavar="DIR", help="write profile.png, gaps.png and bounds.png here")
    p.add_argument("--values", nargs="+", default=["misclassifications", "proof_seconds"], metavar="COL",
                   help="the columns of the tables, columns of the table of runs (default: misclassifications "
                        "proof_seconds)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    common.add_verbosity(p)
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Run the grid, write the outputs, print the Markdown table. Exit code 1 when a run disagrees with the DP or
    failed, else 0."""
    from odtmip.solving.compare import COLUMNS, compare, parse_variants, plot_all, save, to_latex, to_markdown

    unknown = [name for name in args.values if name not in COLUMNS]
    if unknown:
        raise OptionError(f"--values {' '.join(unknown)}: not a column of the table; the columns are "
                          f"{', '.join(COLUMNS)}")
    solvers = None if args.solvers is None else parse_variants(args.solvers)
    output = None if args.output is None else Path(args.output)
    if output is not None and output.suffix not in (".csv", ".parquet"):
        raise OptionError(f"--output {output.name}: write a .csv or .parquet file")
    store = args.store if args.store is not None else None if output is None else output.with_suffix(".jsonl")
    df = compare(args.data, solvers, args.depth, args.time_limit, warm_start=args.warm_start, seeds=args.seeds,
                 dp_bounds=args.dp_bounds, store=store, jobs=args.jobs, backend=args.backend, scheduler=args.scheduler,
                 progress=not args.no_progress)
    if output is not None:
        save(df, output)
    for path, render in ((args.markdown, to_markdown), (args.latex, to_latex)):
        if path is not None:
            Path(path).write_text(render(df, args.values), encoding="utf-8")
    if args.plot_dir is not None:
        plot_all(df, args.plot_dir)
    print(to_markdown(df, args.values), end="")
    failed = int((df["status"] == "error").sum())
    disagree = int((df["verdict"] == "disagree").sum())
    if failed or disagree:
        print(f"odtmip compare: {failed} run(s) failed, {disagree} disagree with the DP", file=sys.stderr)
    return 1 if failed or disagree else 0
