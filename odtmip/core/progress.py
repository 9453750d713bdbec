"""Progress of long solves: a line every few seconds with the best objective so far, the bound and the gap.

Both engines report through the logger ``odtmip.core.progress`` at level INFO, so a program decides with the standard
``logging`` machinery whether and where the lines go; the ``odtmip`` command shows them on stderr when stderr is a
terminal or ``-v`` is given. The DP and ConTree report from inside their compiled search (:func:`dp_hook`), a MIP
from HiGHS's logging callback; all through one :class:`Reporter`, which keeps the interval.

Example line::

    odtmip.progress: dp  12.0 s  best 41  bound 17  gap 58.5%
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import math
import threading
import time

logger = logging.getLogger("odtmip.progress")

#: Seconds between two progress lines of one solve.
INTERVAL = 2.0

#: Seconds a kernel warm-up may take before :func:`compiling` says that it compiles.
COMPILE_NOTICE_AFTER = 1.0


#: Kernel warm-ups running (their solves report no progress).
_WARMING = [0]


def enabled() -> bool:
    """True when progress lines would be shown (``odtmip.core.progress`` logs at INFO, outside a kernel warm-up)."""
    return _WARMING[0] == 0 and logger.isEnabledFor(logging.INFO)


def _number(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:.6g}"


class Reporter:
    """Writes at most one progress line per ``interval`` seconds (default :data:`INTERVAL`) for one solve named
    ``solver``; ``start`` is the solve's ``time.perf_counter()`` at its start. With ``minimise`` a line never shows a
    worse best tree or a lower bound than an earlier line of the same solve did (a solve that searches again, as
    after the switch from the interpreter to the compiled kernels, keeps what it had shown)."""

    def __init__(self, solver: str, start: float | None = None, interval: float | None = None,
                 minimise: bool = False):
        self.solver = solver
        self.start = time.perf_counter() if start is None else start
        self.interval = INTERVAL if interval is None else interval
        self.next = self.start + self.interval
        self.minimise = minimise
        self.shown: tuple[float | None, float | None] = (None, None)  # the best and the bound of the last line

    def __call__(self, best: float | None, bound: float | None, elapsed: float | None = None) -> None:
        """Report ``best`` (the incumbent's objective; None: none yet) and ``bound`` if the interval passed."""
        now = time.perf_counter()
        if now < self.next or not enabled():
            return
        self.next = now + self.interval
        if self.minimise:
            best, bound = _either(best, self.shown[0], min), _either(bound, self.shown[1], max)
            self.shown = (best, bound)
        elapsed = now - self.start if elapsed is None else elapsed
        gap = "-"
        if best is not None and bound is not None and math.isfinite(best) and math.isfinite(bound):
            gap = f"{100 * abs(best - bound) / max(abs(best), 1e-9):.1f}%"  # either sense of optimisation
        logger.info("%s  %.1f s  best %s  bound %s  gap %s", self.solver, elapsed, _number(best), _number(bound),
                    gap)


def _either(a: float | None, b: float | None, pick) -> float | None:
    """``pick(a, b)``, or the one that is not None (None: nothing known)."""
    return b if a is None else a if b is None else pick(a, b)


@contextlib.contextmanager
def compiling(what: str, after: float | None = None):
    """Says on this logger, once the block has run ``after`` seconds (default :data:`COMPILE_NOTICE_AFTER`), that
    ``what`` is being compiled: numba compiles the kernels at their first use in an environment, which takes tens
    of seconds, and every later process loads them from its disk cache in well under a second."""
    after = COMPILE_NOTICE_AFTER if after is None else after
    timer = threading.Timer(after, logger.info, args=(
        "compiling %s: the first run in this environment does this once; later runs load them from the "
        "numba disk cache", what))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def warm_up(what: str):
    """Decorator of an engine's kernel warm-up ``body`` (solves that use every kernel once): the decorated
    function runs ``body`` once per process, under :func:`compiling` (``what``) and without progress lines, and
    returns the seconds it took; every later call, the body's own solves included, returns 0.0. Solves call it
    before starting their clock, so compile time is reported as ``stats["compile_seconds"]`` and never counted in
    their ``seconds``."""
    def decorate(body):
        @functools.wraps(body)
        def once() -> float:
            if once.started:
                return 0.0
            once.started = True
            t0 = time.perf_counter()
            _WARMING[0] += 1
            try:
                with compiling(what):
                    body()
                    # loading (or compiling) the kernels leaves some hundred thousand new objects of numba's to
                    # the cyclic garbage collector, whose first full pass over them takes about 0.08 s: here, as
                    # part of the load, instead of inside the first solve that allocates a few thousand objects
                    gc.collect()
            finally:
                _WARMING[0] -= 1
            seconds = time.perf_counter() - t0
            logger.debug("%s ready in %.2f s", what, seconds)
            return seconds

        once.started, once.what = False, what
        return once

    return decorate


#: What the DP's compiled search reports on: a callable without arguments set by the running DP or ConTree solve
#: (None: none). The search calls :func:`dp_hook` from compiled code, which cannot hold Python objects.
_DP_REPORT = [None]


def dp_hook() -> None:
    """Called by the compiled search of the DP or ConTree at progress intervals: runs the active solve's report."""
    report = _DP_REPORT[0]
    if report is not None:
        report()
