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

    def _use(self, *_):
        raise unbound(self.symbol_name)

    # Equal for the same symbol: a symbol both branches of a tensor `if` leave without a
    # value (`del x` in each) is the same Python value, not two values to merge.
    def __eq__(self, other):
        return type(other) is Undefined and other.symbol_name == self.symbol_name

    def __hash__(self):
        return hash((Undefined, self.symbol_name))

    # Using it at all is reading a variable without a value: Python's UnboundLocalError
    # (naming it), not a TypeError about this class.
    __bool__ = __len__ = __iter__ = __call__ = __getitem__ = __index__ = __int__ = \
        __float__ = __neg__ = __pos__ = __abs__ = __invert__ = _use
    __add__ = __radd__ = __iadd__ = __sub__ = __rsub__ = __isub__ = __mul__ = __rmul__ = \
        __imul__ = __truediv__ = __rtruediv__ = __itruediv__ = __floordiv__ = \
        __rfloordiv__ = __ifloordiv__ = __mod__ = __rmod__ = __imod__ = __pow__ = \
        __rpow__ = __ipow__ = __matmul__ = __rmatmul__ = __imatmul__ = __lt__ = __le__ = \
        __gt__ = __ge__ = __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _use


class UndefinedReturnValue:
    """The return value of a function before a `return` ran."""

    __slots__ = ()

    def __repr__(self):
        return "<no return value>"


def unbound(name):
    """Python's UnboundLocalError for a converted variable read without a value (its
    `name` says which)."""
    if sys.version_info >= (3, 11):
        message = (f"cannot access local variable '{name}' where it is not associated "
                   f"with a value")
    else:
        message = f"local variable '{name}' referenced before assignment"
    return UnboundLocalError(message, name=name)


def ld(value):
    """Load a symbol that may be Undefined: raise as Python would."""
    if type(value) is Undefined:
        raise unbound(value.symbol_name)
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


def write_back(owner, key, value, is_attribute):
    """Set `owner.key` (attribute) or `owner[key]` (item) to `value` unless it holds it
    already or `value` is Undefined: the write-back of state a called method may have
    changed (`clock.t` around `clock.tick()`), which must not touch read-only attributes
    it did not change (`x.shape`)."""
    if type(value) is Undefined:
        return
    try:
        current = getattr(owner, key) if is_attribute else owner[key]
    except (AttributeError, KeyError, IndexError, TypeError):
        current = _NOTHING
    if current is value:
        return
    if is_attribute:
        setattr(owner, key, value)
    else:
        owner[key] = value


_NOTHING = object()


def match_value(subject, value):
    """A `case <value>:` test: equality (elementwise for tensors)."""
    return subject == value


def match_singleton(subject, value):
    """A `case None/True/False:` test: identity, or equality for tensors."""
    from runtime.tensor import Tensor
    if isinstance(subject, Tensor):
        return subject == value
    return subject is value
