"""Markers for symbols without a value, and loads that check for them.

Before a converted `if` or loop, a symbol that may not be defined yet is set to
`Undefined('x')`; reading it through `ld` raises the error Python would. The
return-value slot starts as `UndefinedReturnValue()`; `ret` turns it into None.

After a tensor loop, a variable the loop may or may not have assigned (first assigned
in it, or None before it) holds an *optional* value: a tensor registered here with a
flag tensor saying whether it holds a value when the graph runs (operators/state.py).
`ld` turns a read of it into a check of the flag, `is_none` tests it.
"""
import sys
import weakref


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
    """Load a symbol that may be Undefined: raise as Python would. An optional value
    (see register_optional) is checked when the graph runs."""
    if type(value) is Undefined:
        raise unbound(value.symbol_name)
    if _optional:
        return checked(value)
    return value


def is_none(value):
    """`value is None`; for an optional value, whether it holds none when the graph runs."""
    if value is None:
        return True
    if type(value) is Undefined:
        raise unbound(value.symbol_name)
    if _optional:
        found = optional_of(value)
        if found is not None:
            from runtime.ops import math_ops
            return math_ops.logical_not(found[0])
    return False


# -- optional values ---------------------------------------------------------------------------
# id(tensor) -> (weak reference to it, flag, name, absent): `absent` is None or Undefined,
# what the variable holds when the flag is false. (Keyed by id: a tensor's == is elementwise.)
_optional = {}


def _leaves(value):
    from runtime import nest
    from runtime.tensor import Tensor
    from .data_structures import TensorList
    if isinstance(value, Tensor):
        return (value,)
    if isinstance(value, TensorList):
        return (value.tensor,)
    if isinstance(value, (tuple, list, dict)):
        return tuple(leaf for v in nest.flatten(value) for leaf in _leaves(v))
    return ()


def register_optional(value, flag, name, absent):
    """Mark the tensors of `value` as holding a value only where `flag` holds."""
    for t in _leaves(value):
        key = id(t)
        ref = weakref.ref(t, lambda dead, key=key: _optional.get(key, (None,))[0] is dead
                          and _optional.pop(key))
        _optional[key] = (ref, flag, name, absent)
    return value


def optional_of(value):
    """(flag, name, absent) if `value` is an optional value, else None."""
    for t in _leaves(value):
        found = _optional.get(id(t))
        if found is not None and found[0]() is t:
            return found[1:]
    return None


def checked(value):
    """`value` with each optional tensor in it checked to hold a value (at run time)."""
    from runtime import nest
    from runtime.ops import logging_ops
    from runtime.tensor import Tensor
    from .data_structures import TensorList

    def check(v):
        if isinstance(v, TensorList):
            return TensorList(check(v.tensor), v.name, v.weak)
        if not isinstance(v, Tensor):
            return v
        found = optional_of(v)
        if found is None:
            return v
        flag, name, absent = found
        if absent is None:
            message = (f"'{name}' is None here: it was None before a tensor loop that did not "
                       f"assign it (it ran zero times, or no iteration reached the "
                       f"assignment), and a graph value cannot be None")
        else:
            message = (f"'{name}' is used after a tensor loop that never assigned it (it ran "
                       f"zero times, or no iteration reached the assignment)")
        checked = logging_ops.assert_assigned(flag, v, message)
        checked.weak = getattr(v, "weak", None)
        return register_optional(checked, flag, name, absent)

    if isinstance(value, (Tensor, TensorList)):
        return check(value)
    if isinstance(value, (tuple, list, dict)) and optional_of(value) is not None:
        return nest.map_structure(check, value)
    return value


def ret(value):
    """The function's return value: None if no `return` ran."""
    if type(value) is UndefinedReturnValue:
        return None
    return value


def is_undefined(value):
    return type(value) in (Undefined, UndefinedReturnValue)


def match_value(subject, value):
    """A `case <value>:` test: equality (elementwise for tensors)."""
    return subject == value


def match_singleton(subject, value):
    """A `case None/True/False:` test: identity, or equality for tensors."""
    from runtime.tensor import Tensor
    if isinstance(subject, Tensor):
        return subject == value
    return subject is value
