"""The ``odtmip`` command: one module per command (``fit``, ``check``, ``front``, ``compare``, ``predict`` and
``show``, ``datasets``) over :mod:`odtmip.cli.common`, which they share; each adds its parser and runs with
``run(args)``, importing the engines it needs only then, so that the parser is built at once.

Bad input prints one line ``odtmip: error: ...`` to stderr and exits with code 2. With ``--json`` exactly one
JSON object is written to stdout; logs go to stderr. A reader that closes stdout early (``| head``) ends the
command quietly with exit code 141, as a shell reports a process that a broken pipe stopped. A time limit counts
from the command's start: for the console script, the process's start.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
import time
import warnings

from odtmip import __version__
from odtmip.cli import check, common, compare, datasets, fit, front, predict
from odtmip.core import progress
from odtmip.core.exceptions import OdtmipError

log = logging.getLogger("odtmip")

#: Exit code after a closed stdout: 128 + SIGPIPE, what a shell reports for ``yes | head``.
_BROKEN_PIPE = 141


def build_parser() -> common.Parser:
    parser = common.Parser(prog="odtmip", description="Optimal classification trees: a DP and MIP models on HiGHS.")
    parser.add_argument("--version", action="version", version=f"odtmip {__version__}")
    common.add_verbosity(parser)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=common.Parser)
    for command in (fit, check, datasets, compare, front):
        command.add_parser(sub)
    predict.add_parsers(sub)
    return parser


def _log_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A Python warning (e.g. unseen categories in ``odtmip predict``) as one log line, which --quiet silences."""
    log.warning("%s", message)


def main(argv=None, started: float | None = None) -> int:
    """The ``odtmip`` command with the arguments ``argv`` (default: the process's); ``started`` is the command's
    start on the clock of ``time.perf_counter()`` (default: now), from which a time limit counts."""
    started = time.perf_counter() if started is None else started
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # argparse: --help/--version (0) or a usage error (2, already printed)
        return int(stop.code or 0)
    args.started = started
    verbose, quiet = getattr(args, "verbose", False), getattr(args, "quiet", False)
    if verbose and quiet:
        print("odtmip: error: --verbose and --quiet exclude each other", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO if verbose else logging.ERROR if quiet else logging.WARNING,
                        stream=sys.stderr, format="%(name)s: %(message)s")
    log.setLevel(logging.DEBUG if getattr(args, "log", False) else logging.NOTSET)
    # progress lines of long solves (odtmip.core.progress): on a terminal, or with -v; never with --quiet
    progress.logger.setLevel(logging.INFO if not quiet and (verbose or sys.stderr.isatty()) else logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _log_warning
            code = args.run(args)
        sys.stdout.flush()  # a closed pipe shows here, inside the try, not at interpreter exit
        return code
    except BrokenPipeError:  # the Python docs' recipe: no traceback, and nothing more for stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return _BROKEN_PIPE
    except (OdtmipError, OSError) as err:  # OSError: a file that cannot be read or written
        print(f"odtmip: error: {err}", file=sys.stderr)
        return 2


def run() -> None:
    """The ``odtmip`` console script: :func:`main` from the process's start (a time limit counts from there), then
    a quick exit. Once the answer is written, Python's teardown of numba's and LLVM's objects would take another
    0.2-0.6 s of the command's time; the exit handlers still run (a background compile is stopped, logs are
    flushed), the teardown is skipped."""
    code = main(started=common.process_start())
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # a reader that left; stdout already replaced or closed
        pass
    # the interpreter's own order at exit: threads first (joblib's worker processes are stopped by a hook that
    # threading runs then; without it, multiprocessing's exit handler waits for them forever), then the handlers
    threading._shutdown()
    atexit._run_exitfuncs()
    os._exit(code)
