"""What compiled regions call: numba functions with numpy's semantics where numba's differ.

The generated modules of the compiled tier (`runtime.compiled.lowering`) import
these names. `Fault` is raised by compiled code where numpy would raise or warn in
a way compiled code cannot (an index out of range, shapes that do not broadcast, a
loop past its iteration limit): the region then runs in the fast executor, which
raises the op's own error.
"""
import numpy as np
from numba import njit, types
from numba.extending import overload

__all__ = ["Fault", "_scalar", "_maximum", "_minimum", "_sigmoid", "_ifloordiv", "_imod", "_bdim",
           "_index"]


class Fault(Exception):
    """Compiled code gives up; args[0] is the code of the op that did."""


def _scalar(value):
    """A rank-0 value as a scalar: a 0-d array's element, a scalar itself."""
    return value[()] if isinstance(value, np.ndarray) else value


@overload(_scalar, inline="always")
def _scalar_overload(value):
    if isinstance(value, types.Array):
        return lambda value: value[()]
    return lambda value: value


@njit(inline="always")
def _maximum(a, b):
    """np.maximum: NaN wins; equal values (0.0 and -0.0) give b."""
    return a if (a > b or a != a) else b


@njit(inline="always")
def _minimum(a, b):
    return a if (a < b or a != a) else b


@njit(inline="always")
def _sigmoid(x, one):
    e = np.exp(-abs(x))
    return one / (one + e) if x >= 0 else e / (one + e)


@njit(inline="always")
def _ifloordiv(a, b):
    """Integer a // b as numpy: 0 for b == 0 and MIN // -1 wrapping (no trap)."""
    if b == -1:
        return -a
    return a // b


@njit(inline="always")
def _imod(a, b):
    if b == -1:
        return a - a
    return a % b


@njit(inline="always")
def _bdim(n, d):
    """The broadcast of dimension sizes n and d (-1: they do not broadcast)."""
    if d == 1 or d == n:
        return n
    if n == 1:
        return d
    return -1


@njit(inline="always")
def _index(i, n):
    """Index i into a dimension of size n as numpy takes it (-1: out of range)."""
    if i < 0:
        i += n
    return i if 0 <= i < n else -1
