"""Errors raised by odtmip.

Every error a user can cause is a subclass of ``ValueError`` or ``TypeError`` (a model too large for the memory
allowed: ``MemoryError``) with a one-line message that names the problem; the command line turns them into exit
code 2. All of them also derive from :class:`OdtmipError`.
"""


class OdtmipError(Exception):
    """Base class of the errors odtmip raises on purpose."""


class DataError(OdtmipError, ValueError):
    """The data cannot be used: wrong shape, NaN, a single class, unknown labels, empty input."""


class OptionError(OdtmipError, ValueError):
    """An option has an invalid value (negative depth, unknown solver, conflicting settings)."""


class ResourceError(OdtmipError, MemoryError):
    """A model, the DP's arrays or a binary encoding would need more memory than ``memory_limit`` allows; raised
    before they are built."""


class FormatError(OdtmipError, ValueError):
    """A file cannot be read in the stated or inferred format."""


class SolverUnavailableError(OdtmipError, RuntimeError):
    """A solver odtmip needs is not installed or cannot be started."""


class VerificationError(OdtmipError, RuntimeError):
    """A solver's reported objective differs from the one recomputed by re-routing the data."""


class NoTreeError(OdtmipError, RuntimeError):
    """A solve ended without a tree: a limit stopped it before it found one, or no tree meets the constraints."""


class NotProvenOptimalWarning(UserWarning):
    """A limit stopped a solve before it proved its tree optimal; the best tree found is used."""


class UnseenCategoryWarning(UserWarning):
    """Prediction data holds values of a categorical column that training never saw; their rows go to the "not in"
    branch of every subset split of that column (scikit-learn's ``handle_unknown="ignore"``)."""
