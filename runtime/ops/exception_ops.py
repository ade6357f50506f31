"""The `raise` op: raise a program's own exception when the op runs.

    raise_exception(ValueError, (f"negative input {x}",), {}, note)

records the exception's class, arguments and attributes, tensors among them
(in f-strings too) taken out as inputs, as `rt.print` takes out what it prints. When
the op runs it raises a new exception of that class whose arguments and attributes hold
the values the graph computed (so its text is the one Python gives for them), with
`note` added. The executors raise it as it is (`errors.program_exception`): the caller
catches the class it raised, attributes and all, not a runtime error wrapping it.
"""
from ..errors import program_exception
from . import registry
from .logging_ops import _fill, _no_outputs, _split_tensors   # (print's and Assert's)


def _raise_kernel(*arrays, exc_type, template, note):
    args, attributes = _fill(template, arrays)
    raise program_exception(rebuilt(exc_type, args, attributes), note)


_RAISE = registry.register("raise", None, _no_outputs, stateful=True, retains_inputs=False,
                           numpy=_raise_kernel)


def rebuilt(exc_type, args, attributes):
    """An exception of `exc_type` with these `args` and attributes, made without calling
    its `__init__` (whose parameters need not be its args: `BudgetError(spent, limit)`)."""
    exc = exc_type.__new__(exc_type, *args)
    exc.args = tuple(args)
    if attributes:
        exc.__dict__.update(attributes)
    return exc


def raise_exception(exc_type, args, attributes, note=None, name=None):
    """An op raising an `exc_type` of `args` and `attributes` (a dict), which may hold
    tensors, with `note` added, when it runs; returns the op."""
    template, tensors = _split_tensors([list(args), dict(attributes)])
    return registry.apply(_RAISE, tensors, {"exc_type": exc_type, "template": tuple(template),
                                            "note": note}, name)
