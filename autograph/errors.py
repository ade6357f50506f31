"""Errors the compiler raises, each naming the construct and the user's file:line."""
from runtime import traceback_utils


class AutoGraphError(Exception):
    """Base of the compiler's own errors."""


class ConversionError(AutoGraphError):
    """A function cannot be converted (unsupported construct, unreadable source...)."""


class StagingError(AutoGraphError, ValueError, TypeError):
    """Converted code is misused while tracing, e.g. a variable defined in only one
    branch of a tensor `if` and used after it, or a loop variable changing dtype.

    It derives from ValueError and TypeError, the classes TensorFlow raises for
    these mistakes, so existing handlers keep working.
    """

    def __init__(self, message, origin=None):
        self.origin = origin
        if origin is not None:
            line = origin.line()
            message = f"{message}\n  at {origin}" + (f"\n    {line}" if line else "")
        super().__init__(message)


def staging_error(message, skip=2):
    """A StagingError located at the innermost user frame (through source maps)."""
    return StagingError(message, traceback_utils.user_frame(skip))


def mark_user_error(exc):
    """Flag an exception as raised by the user's code (not by a staging check)."""
    try:
        exc._ag_user_error = True
    except AttributeError:
        pass
    return exc


def is_user_error(exc):
    return getattr(exc, "_ag_user_error", False)
