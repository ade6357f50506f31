"""What generated code calls for the user's function's own frame: `super()`, `locals()`.

Control flow moves statements into generated functions (and conditional expressions
into lambdas), whose frames are not the user's function's: a zero-argument `super()`
or a `locals()` there would see the generated frame. The converter passes what they
need explicitly instead (see converters/call_trees.py).
"""
import sys

from . import variables
from .variables import Undefined


def super_(cls, first_argument, name):
    """Zero-argument `super()`: `super(cls, <the method's first argument>)`, the argument
    (`name`) read when called (`first_argument` is a lambda reading it), as Python reads
    it; deleted, it is Python's error for that (3.11: RuntimeError; 3.12+ reads it as a
    local variable)."""
    try:
        instance = first_argument()
    except NameError:
        if sys.version_info >= (3, 12):
            raise variables.unbound(name) from None
        raise RuntimeError("super(): arg[0] deleted") from None
    return super(cls, instance)


def user_locals(readers, values=None):
    """`locals()` of the user's function: {name: value} of its variables that have a
    value now, in Python's order. `readers`: {name: lambda reading it} for each of the
    function's local, cell and free variables, read where the call stands. `values`: the
    dict to update and return (Python < 3.13 keeps one per call of a function: what `exec`
    writes into it stays), or None for a new one."""
    values = {} if values is None else values
    for name, read in readers.items():
        try:
            value = read()
        except NameError:
            values.pop(name, None)
            continue
        if type(value) is Undefined:
            values.pop(name, None)
        else:
            values[name] = value
    return values


def user_dir(readers, values=None):
    """`dir()` of the user's function: the sorted names of `user_locals(readers)`."""
    return sorted(user_locals(readers, values))


def without_name(names, name):
    """`locals()`, `vars()` or `dir()` of a comprehension in converted code, without
    `name`: the operators' namespace, a free variable there."""
    if isinstance(names, dict):
        return {key: value for key, value in names.items() if key != name}
    return [key for key in names if key != name]
