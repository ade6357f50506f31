"""`raise` in converted code: raised while tracing, or when the graph runs.

    raise ValueError(f"negative input {x}")  =>  raise ag__.raised(ValueError(f"..."))

`raised` marks the exception as the program's own. One that leaves a branch of a tensor
`if` (or a tensor loop's body) while it is traced cannot be raised then - the condition
is known only when the graph runs - so the branch stages it (`stage_raise`): a `raise` op
that raises an exception of the same class when the graph runs that branch, its message
holding the values the graph computed, with a note naming the user's lines. Exceptions
the runtime or libraries raise stay errors of the trace.
"""
from runtime import nest
from runtime import traceback_utils
from runtime.ops import exception_ops
from runtime.tensor import SymbolicTensor

from ..errors import StagingError, flagged, frames_note
from .data_structures import TensorList


def raised(exc):
    """The exception of a `raise` statement of converted code, marked as the program's
    (a class is instantiated, as `raise` does)."""
    if isinstance(exc, type) and issubclass(exc, BaseException):
        exc = exc()
    return flagged(exc, "_ag_raised") if isinstance(exc, BaseException) else exc


def is_raised(exc):
    """Whether `exc` was raised by a `raise` statement of converted code."""
    return getattr(exc, "_ag_raised", False)


def stage_raise(exc):
    """A `raise` op for `exc` in the graph being traced: the exception raised by a raise
    statement of converted code, caught where a tensor `if` or loop traced it."""
    frames = traceback_utils.map_traceback(exc.__traceback__)
    attributes = {k: v for k, v in getattr(exc, "__dict__", {}).items()
                  if not k.startswith(("_ag_", "_rt_"))}
    _check_stageable(exc, attributes, frames)
    op = exception_ops.raise_exception(type(exc), exc.args, attributes, frames_note(frames))
    if frames:
        op.origin = frames[-1]
    return op


def _check_stageable(exc, attributes, frames):
    """A StagingError at the raise unless the graph can make `exc` again when it runs."""
    problem = None
    leaves = nest.flatten([list(exc.args), attributes])
    if any(isinstance(v, TensorList) for v in leaves):
        problem = "it holds a list grown in a graph loop"
    else:
        try:
            exception_ops.rebuilt(type(exc), exc.args, attributes)
        except Exception as e:  # noqa: BLE001 - explained to the user
            problem = f"an exception of its class cannot be made from its arguments ({e})"
    if problem is None and any(isinstance(v, SymbolicTensor) for v in _objects_in(leaves)):
        problem = "an object among its arguments holds a tensor the graph computes"
    if problem is not None:
        raise StagingError(
            f"`raise {type(exc).__name__}(...)` under a tensor condition cannot be staged: "
            f"{problem}. The graph raises it when it runs that branch, so it must be an "
            f"exception made of strings, numbers and tensors (nested in lists, tuples, dicts)",
            frames[-1] if frames else None) from exc


def _objects_in(leaves):
    """The attribute values of the plain objects among `leaves` (one level deep)."""
    for leaf in leaves:
        values = getattr(leaf, "__dict__", None)
        if isinstance(values, dict) and not isinstance(leaf, type):
            yield from values.values()
