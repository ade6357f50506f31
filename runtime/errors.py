"""Error types raised by the runtime.

A kernel that fails while a graph runs raises an `OpError` naming the operation
and the user's source line that created it. The raised class also derives from
the original exception's class when it can, so `except ValueError:` still
catches a numpy ValueError raised inside a graph.
"""
import threading

__all__ = ["OpError", "InvalidArgumentError", "FailedPreconditionError",
           "AssertionFailedError", "OutOfRangeError", "UnimplementedError",
           "LoopIterationLimitError", "loop_limit_exceeded", "program_exception",
           "is_program_exception"]


class OpError(Exception):
    """A failure while running (or building) an operation.

    Attributes: `op` (the Operation, or None eagerly), `message`, `origin`
    (a `traceback_utils.Frame` of the user's source line, or None).
    """

    def __init__(self, message, op=None, origin=None):
        super().__init__(message)
        self.message = message
        self.op = op
        self.origin = origin

    def __str__(self):               # not KeyError's quoted repr of the message
        return self.message


class InvalidArgumentError(OpError, ValueError):
    """An operation received an argument it cannot handle (bad shape, bad value)."""


class FailedPreconditionError(OpError):
    """The runtime is not in a state to run the operation (uninitialized variable)."""


class OutOfRangeError(OpError, IndexError):
    """An index or iteration went past its end."""


class UnimplementedError(OpError, NotImplementedError):
    """The operation is not supported here."""


class AssertionFailedError(InvalidArgumentError, AssertionError):
    """An `rt.Assert` or `rt.debugging.assert_*` check failed."""


class LoopIterationLimitError(OpError, RuntimeError):
    """A tensor loop would run more iterations than `rt.config.set_loop_iteration_limit`
    allows (a runaway loop, most likely)."""


def loop_limit_exceeded(limit, origin=None):
    """The LoopIterationLimitError of a loop past `limit`; `origin` (the loop's user line) is
    shown in the message (a graph loop's error gets its op's line from `op_error`)."""
    message = (f"the loop ran {limit} iterations and its condition still holds: it exceeds "
               f"the loop iteration limit ({limit}). If it is meant to run longer, raise the "
               f"limit with rt.config.set_loop_iteration_limit(n) (None: no limit) or the "
               f"RT_LOOP_LIMIT environment variable.")
    return LoopIterationLimitError(with_location(message, origin), origin=origin)


def with_location(message, origin):
    """`message` followed by the user's source location `origin` and its line, if any."""
    if origin is None:
        return message
    line = origin.line()
    return f"{message}\n  {origin}" + (f"\n    {line}" if line else "")


_combined = {}
_combined_lock = threading.Lock()


def program_exception(exc, note=None):
    """`exc`, an exception the program raises itself (a `raise` op): raised as it is by
    the executors, which wrap other kernels' errors, with `note` (its source lines)."""
    if note and hasattr(exc, "add_note"):
        exc.add_note(note)
    try:
        exc._rt_program_exception = True
    except AttributeError:          # (no attributes: it is wrapped as any other)
        pass
    return exc


def is_program_exception(exc):
    """Whether `exc` is a program's own exception (`program_exception`)."""
    return getattr(exc, "_rt_program_exception", False)


def wrap_kernel_error(exc, message, op=None, origin=None):
    """An OpError for `exc` whose class also derives from type(exc) when possible; a
    program's own exception (`program_exception`) as it is."""
    if isinstance(exc, OpError) or is_program_exception(exc):
        return exc
    cls = type(exc)
    if issubclass(cls, AssertionError):
        err_cls = AssertionFailedError
    else:
        err_cls = _combined_class(cls)
    return err_cls(message, op=op, origin=origin)


def _combined_class(cls):
    if cls is ValueError:
        return InvalidArgumentError
    if cls is IndexError:
        return OutOfRangeError
    with _combined_lock:
        found = _combined.get(cls)
        if found is None:
            try:
                found = type(cls.__name__, (OpError, cls), {"__module__": __name__})
                found("probe")
            except TypeError:      # incompatible layout (e.g. OSError subclasses)
                found = OpError
            _combined[cls] = found
        return found
