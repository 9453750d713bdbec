"""Sphinx configuration of the odtmip documentation: ``sphinx-build -W -b html docs docs/_build/html``."""

import re

import odtmip

project = "odtmip"
author = "odtmip developers"
copyright = "odtmip developers"  # noqa: A001 (Sphinx's name)
release = version = odtmip.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip"]
root_doc = "index"

# numpydoc-style docstrings throughout, read by napoleon.
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": True}
autosummary_generate = False

# The teaching gallery: every examples/NN_*.py is executed and rendered with its output and figures.
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/\d\d_",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
}

html_theme = "furo"
html_title = f"odtmip {release}"
html_static_path: list[str] = []
myst_heading_anchors = 3

# Each module's docstring keeps its own "References" list, so one paper is cited in several modules, and not
# every listed reference is cited in the text: Sphinx's citation checks would flag both.
suppress_warnings = ["ref.citation"]


def _counting_write(write):
    """Make a text stream's ``write`` return the number of characters written, as ``io.TextIOBase.write`` does."""

    def counted(self, data):
        write(self, data)
        return len(data)

    return counted


# sphinx-gallery captures an example's output with a stream whose write() returns None; Pyomo's pprint (used by
# every gallery script) adds up the return values of write(). The capture stream is private to sphinx-gallery, so
# the patch is guarded: if the class goes away or starts to return a count, nothing changes.
try:
    from sphinx_gallery.gen_rst import _LoggingTee
except ImportError:  # pragma: no cover
    _LoggingTee = None
if _LoggingTee is not None and not getattr(_LoggingTee.write, "_counts", False):
    _LoggingTee.write = _counting_write(_LoggingTee.write)
    _LoggingTee.write._counts = True


def _equation_numbers_are_text(app, what, name, obj, options, lines):
    """The formulation modules' equation tables start cells with a paper's equation number, ``(1)``, which
    docutils would read as an enumerated list. Escape the parenthesis (only the rendering changes) and take one
    space from the gap between the columns, so that the table's columns stay where they were."""
    for i, line in enumerate(lines):
        match = re.match(r"^(\(\d+[a-z]?\)(?:\s.*?)??)( {3,})(\S.*)$", line)
        if match:
            lines[i] = "\\" + match[1] + match[2][1:] + match[3]


def setup(app):
    app.connect("autodoc-process-docstring", _equation_numbers_are_text)
