"""Errors the compiler raises, each naming the construct and the user's file:line; warnings
raised by converted code are shown at the user's file:line too."""
import functools
import warnings

from runtime import traceback_utils


class AutoGraphError(Exception):
    """Base of the compiler's own errors."""

    runs_staged_prints = False      # a refused trace prints nothing (runtime/failed_trace.py)


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
    return flagged(exc, "_ag_user_error")


def flagged(exc, flag):
    """`exc` with the attribute `flag` set True, if it takes attributes."""
    try:
        setattr(exc, flag, True)
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
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename.startswith("<autograph generated"):
            frame = traceback_utils.map_frame(code.co_filename, tb.tb_lineno, code.co_name)
            if frame is not None:
                frames.append(frame)
        tb = tb.tb_next
    if frames:
        try:
            exc._ag_frames_noted = True
        except AttributeError:
            return
        exc.add_note(frames_note(frames))


def frames_note(frames):
    """The note listing user frames (innermost last) with their source lines, or None."""
    if not frames:
        return None
    lines = []
    for frame in frames:
        text = frame.line()
        lines.append(f"  {frame}" + (f"\n    {text}" if text else ""))
    return "In the converted code (original source lines):\n" + "\n".join(lines)


def _at_the_users_line(show):
    """`warnings._showwarnmsg`, moving a warning raised by generated code (numpy's divide
    by zero on Python values while tracing, a `warnings.warn` there) to the user's line
    that the source map gives, and one attributed to the compiler's or runtime's own code
    to the innermost user line calling it; recorded warnings
    (`catch_warnings(record=True)`) too."""
    @functools.wraps(show)
    def showwarnmsg(msg):
        frame = traceback_utils.map_frame(msg.filename, msg.lineno, None)
        if frame is None and not traceback_utils.is_generated(msg.filename):
            # the library's own line (converted code's `warnings.warn` is called by
            # converted_call): the innermost user line of the stack warning it
            frame = traceback_utils.user_frame(2)
        if frame is not None and (frame.filename, frame.lineno) != (msg.filename, msg.lineno):
            msg.filename, msg.lineno, msg.line = frame.filename, frame.lineno, None
        return show(msg)
    showwarnmsg._ag_users_line = True
    return showwarnmsg


# (the interpreter calls the warnings module's `_showwarnmsg` with each warning shown or
# recorded; catch_warnings keeps it, replacing what it calls)
if hasattr(warnings, "_showwarnmsg") and \
        not getattr(warnings._showwarnmsg, "_ag_users_line", False):
    warnings._showwarnmsg = _at_the_users_line(warnings._showwarnmsg)
