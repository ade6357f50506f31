"""Python operators on tensors and variables, routed through the op registry."""
import numpy as np

from .. import dtypes
from ..tensor import Tensor
from ..variables import Variable
from . import array_ops
from . import math_ops


_OPERAND_TYPES = (Tensor, Variable, np.ndarray, np.generic, bool, int, float, complex,
                  list, tuple)


def _binary(op, reverse=False):
    """An operator method; operands we cannot convert get NotImplemented (Python's rule)."""
    if reverse:
        def method(self, other):
            if not isinstance(other, _OPERAND_TYPES):
                return NotImplemented
            return op(other, self)
    else:
        def method(self, other):
            if not isinstance(other, _OPERAND_TYPES):
                return NotImplemented
            return op(self, other)
    return method


def _convertible(other):
    return isinstance(other, _OPERAND_TYPES)


def _compare_equal(compare, self, other):
    if not _convertible(other):
        return NotImplemented
    try:
        return compare(self, other)
    except (TypeError, ValueError):
        pass
    if type(other) is int and self.dtype.is_integer and -2**63 <= other < 2**63:
        # A Python int beyond the dtype (x_int32 == 2**40): compared exactly, elementwise,
        # as numpy does.
        return compare(math_ops.cast(self, dtypes.int64), other)
    return NotImplemented


def _eq(self, other):
    return _compare_equal(math_ops.equal, self, other)


def _ne(self, other):
    return _compare_equal(math_ops.not_equal, self, other)


def _logical(logical, bitwise):
    def op(x, y):
        x, y = math_ops.convert_pair(x, y)
        if x.dtype.is_bool and y.dtype.is_bool:
            return logical(x, y)
        return bitwise(x, y)
    return op


_and = _logical(math_ops.logical_and, math_ops.bitwise_and)
_or = _logical(math_ops.logical_or, math_ops.bitwise_or)
_xor = _logical(math_ops.logical_xor, math_ops.bitwise_xor)


def _invert(self):
    x = math_ops.convert_to_tensor(self)
    return math_ops.logical_not(x) if x.dtype.is_bool else math_ops.invert(x)


def _matmul(x, y):
    return math_ops.matmul(x, y)


def _divmod(x, y):
    """`divmod(x, y)`: (x // y, x % y), as numpy's divmod gives."""
    return math_ops.floordiv(x, y), math_ops.mod(x, y)


def _round(self, ndigits=None):
    """`round(t)` / `round(t, n)`: half to even, as Python and numpy round; the tensor's
    dtype is kept (numpy arrays do the same)."""
    x = math_ops.convert_to_tensor(self)
    if x.dtype.is_integer or x.dtype.is_bool:
        return x if ndigits is None or ndigits >= 0 else _round_integer(x, ndigits)
    if not ndigits:
        return math_ops.round(x)
    scale = 10.0 ** ndigits
    return math_ops.round(x * scale) / scale


def _round_integer(x, ndigits):
    scale = 10 ** -ndigits
    return math_ops.cast(math_ops.round(math_ops.cast(x, dtypes.float64) / scale) * scale,
                         x.dtype)


_OPERATORS = {
    "add": math_ops.add, "sub": math_ops.subtract, "mul": math_ops.multiply,
    "truediv": math_ops.divide, "floordiv": math_ops.floordiv, "mod": math_ops.mod,
    "pow": math_ops.pow, "matmul": _matmul, "and": _and, "or": _or, "xor": _xor,
    "divmod": _divmod,
}


def _install(cls):
    for name, op in _OPERATORS.items():
        setattr(cls, f"__{name}__", _binary(op))
        setattr(cls, f"__r{name}__", _binary(op, reverse=True))
    cls.__lt__ = _binary(math_ops.less)
    cls.__le__ = _binary(math_ops.less_equal)
    cls.__gt__ = _binary(math_ops.greater)
    cls.__ge__ = _binary(math_ops.greater_equal)
    cls.__eq__ = _eq
    cls.__ne__ = _ne
    cls.__neg__ = lambda self: math_ops.negative(self)
    cls.__pos__ = lambda self: self
    cls.__abs__ = lambda self: math_ops.abs(self)
    cls.__round__ = _round
    cls.__invert__ = _invert
    cls.__getitem__ = array_ops.getitem
    cls.__hash__ = object.__hash__


_install(Tensor)
_install(Variable)
