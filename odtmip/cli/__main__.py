"""``python -m odtmip.cli``: the ``odtmip`` command."""

from odtmip.cli import run

run()
