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


def add_original_frames_note(exc):
    """Note on an exception raised through generated code: the user's lines it ran.

    Tracebacks show generated code (linecache has it); the note lists the same
    frames at the lines of the original source, once per exception.
    """
    if getattr(exc, "_ag_frames_noted", False) or not hasattr(exc, "add_note"):
        return
    tb = exc.__traceback__
    lines = []
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename.startswith("<autograph generated"):
            frame = traceback_utils.map_frame(code.co_filename, tb.tb_lineno, code.co_name)
            if frame is not None:
                text = frame.line()
                lines.append(f"  {frame}" + (f"\n    {text}" if text else ""))
        tb = tb.tb_next
    if lines:
        try:
            exc._ag_frames_noted = True
        except AttributeError:
            return
        exc.add_note("In the converted code (original source lines):\n" + "\n".join(lines))
