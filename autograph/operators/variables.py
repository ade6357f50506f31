"""Markers for symbols without a value, and loads that check for them.

Before a converted `if` or loop, a symbol that may not be defined yet is set to
`Undefined('x')`; reading it through `ld` raises the error Python would. The
return-value slot starts as `UndefinedReturnValue()`; `ret` turns it into None.
"""
import sys


class Undefined:
    """The value of symbol `symbol_name` before any assignment."""

    __slots__ = ("symbol_name",)

    def __init__(self, symbol_name):
        self.symbol_name = symbol_name

    def __repr__(self):
        return f"<undefined {self.symbol_name}>"

    def __bool__(self):
        raise _unbound(self.symbol_name)


class UndefinedReturnValue:
    """The return value of a function before a `return` ran."""

    __slots__ = ()

    def __repr__(self):
        return "<no return value>"


def _unbound(name):
    if sys.version_info >= (3, 11):
        return UnboundLocalError(
            f"cannot access local variable '{name}' where it is not associated with a value")
    return UnboundLocalError(f"local variable '{name}' referenced before assignment")


def ld(value):
    """Load a symbol that may be Undefined: raise as Python would."""
    if type(value) is Undefined:
        raise _unbound(value.symbol_name)
    return value


def ret(value):
    """The function's return value: None if no `return` ran."""
    if type(value) is UndefinedReturnValue:
        return None
    return value


def is_undefined(value):
    return type(value) in (Undefined, UndefinedReturnValue)


def ldu(load, name):
    """Load a symbol that may be unbound (a name, or an attribute or item that may not
    exist yet): its value, or Undefined(name)."""
    try:
        return load()
    except (NameError, AttributeError, KeyError, IndexError):
        return Undefined(name)


def match_value(subject, value):
    """A `case <value>:` test: equality (elementwise for tensors)."""
    return subject == value


def match_singleton(subject, value):
    """A `case None/True/False:` test: identity, or equality for tensors."""
    from runtime.tensor import Tensor
    if isinstance(subject, Tensor):
        return subject == value
    return subject is value
