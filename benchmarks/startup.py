"""Start-up: the wall time of short commands, whole process, beside ``python -c pass`` and ``import pystreed``.

Usage::

    python benchmarks/startup.py                 # 7 runs of each command
    python benchmarks/startup.py --repeat 15

Each command runs ``--repeat`` times in a fresh process, after one run that is not counted (it fills the
operating system's file cache and, for the fit, numba's kernel cache: "warm kernels"). Printed per command: the
median and worst wall time, the ratio of the median to ``python -c pass`` and to ``import pystreed`` (when the
``bench`` extra is installed), and the project's target where it has one. Nothing is asserted; the table is the
result (which modules each command loads is a test: tests/unit/test_startup.py).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

PYTHON = sys.executable
_SCRIPT = Path(PYTHON).with_name("odtmip")
ODTMIP = [str(_SCRIPT)] if _SCRIPT.exists() else [shutil.which("odtmip") or "odtmip"]

#: (label, command, target seconds or None)
COMMANDS = [
    ("python -c pass", [PYTHON, "-c", "pass"], None),
    ("import pystreed", [PYTHON, "-c", "import pystreed"], None),
    ("import odtmip", [PYTHON, "-c", "import odtmip"], None),
    ("odtmip --version", [*ODTMIP, "--version"], 0.3),
    ("odtmip fit --help", [*ODTMIP, "fit", "--help"], None),
    ("odtmip fit monk1 --depth 3", [*ODTMIP, "fit", "monk1", "--depth", "3"], 1.5),
    ("odtmip fit monk1 --solver gunluk --depth 2", [*ODTMIP, "fit", "monk1", "--solver", "gunluk", "--depth", "2",
                                                    "--time-limit", "60"], None),
]


def wall(cmd: list[str]) -> float | None:
    """Seconds ``cmd`` took, or None when it failed (pystreed not installed)."""
    t0 = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0 if done.returncode == 0 else None


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    times = {}
    for label, cmd, _ in COMMANDS:
        if wall(cmd) is None:
            times[label] = None
            continue
        runs = [wall(cmd) for _ in range(args.repeat)]
        times[label] = None if None in runs else runs
    base = statistics.median(times["python -c pass"])
    peer = times["import pystreed"] and statistics.median(times["import pystreed"])
    print(f"{'command':44} {'median':>8} {'worst':>8} {'/ pass':>8} {'/ pystreed':>11} {'target':>8}")
    for label, _, target in COMMANDS:
        runs = times[label]
        if runs is None:
            print(f"{label:44} {'(not installed or failed)':>28}")
            continue
        median, worst = statistics.median(runs), max(runs)
        ratio = f"{median / peer:11.2f}" if peer else f"{'-':>11}"
        goal = "" if target is None else f"<= {target:g} s {'met' if median <= target else 'MISSED'}"
        print(f"{label:44} {median:8.3f} {worst:8.3f} {median / base:8.1f} {ratio} {goal:>8}")


if __name__ == "__main__":
    main()
