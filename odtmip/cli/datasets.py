"""``odtmip datasets``: the bundled datasets and the files of the benchmark data folder."""

from __future__ import annotations

import argparse

from odtmip.cli import common


def add_parser(sub) -> argparse.ArgumentParser:
    ds = sub.add_parser("datasets", help="list the bundled datasets and the files in the data folder")
    ds.add_argument("--data-dir", help="benchmark data folder (default: $ODTMIP_DATA or ../shared/datasets)")
    ds.add_argument("--json", action="store_true", help="print a JSON list")
    common.add_verbosity(ds)
    ds.set_defaults(run=run)
    return ds


def run(args) -> int:
    from odtmip.core import datasets

    table = datasets.list_datasets(data_dir=args.data_dir)
    if args.json:
        print(table.to_json(orient="records"))
    else:
        print(table.to_string(index=False))
        if not any(table["source"].astype(str).str.contains("/")):
            print("(no benchmark data folder found: set ODTMIP_DATA or pass --data-dir)")
    return 0
