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
           "_index", "_float_sum", "_tanh32", "_room", "_stacked", "_room_for",
           "_trimmed"]


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
def _exp_nonpositive(y):
    """exp(y) for float64 y in [-19, 0], to about 1e-13: exp(y / 64) ** 64, Taylor to
    degree 10; arithmetic only (no loop, no libm), so that loops calling it vectorize."""
    z = y * 0.015625
    p = 1.0 + z * (1.0 + z * (1 / 2 + z * (1 / 6 + z * (1 / 24 + z * (1 / 120 + z * (
        1 / 720 + z * (1 / 5040 + z * (1 / 40320 + z * (1 / 362880 + z * (1 / 3628800))))))))))
    p = p * p
    p = p * p
    p = p * p
    p = p * p
    p = p * p
    return p * p


@njit(inline="always")
def _tanh32(x):
    """tanh of a float32, correctly rounded but for float64's 1e-13 (numpy's vectorized
    float32 tanh is within 1 ulp of that): float64 arithmetic that vectorizes, where
    libm's tanhf, one element at a time, costs numba's loops 5-10x numpy's. (Beyond 9.5,
    tanh rounds to 1.)"""
    d = np.float64(x)
    a = abs(d)
    t = _exp_nonpositive(-2.0 * (a if a < 9.5 else 9.5))
    s = d * d
    r = a * (1.0 + s * (-1 / 3 + s * (2 / 15 + s * (-17 / 315 + s * (62 / 2835))))) \
        if a < 0.01 else (1.0 - t) / (1.0 + t)
    r = np.copysign(r, d)
    return np.float32(r if d == d else d)


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


@njit
def _pairwise(a, start, n, zero):
    """numpy's pairwise sum of a[start:start + n] (its order of float additions, in a's
    dtype: blocks of 128 as 8 running sums, halves above that); `zero` is -0.0."""
    if n < 8:
        res = zero
        for i in range(start, start + n):
            res += a[i]
        return res
    if n <= 128:
        r0, r1, r2, r3 = a[start], a[start + 1], a[start + 2], a[start + 3]
        r4, r5, r6, r7 = a[start + 4], a[start + 5], a[start + 6], a[start + 7]
        i = start + 8
        stop = start + n - n % 8
        while i < stop:
            r0 += a[i]
            r1 += a[i + 1]
            r2 += a[i + 2]
            r3 += a[i + 3]
            r4 += a[i + 4]
            r5 += a[i + 5]
            r6 += a[i + 6]
            r7 += a[i + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < start + n:
            res += a[i]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return _pairwise(a, start, half, zero) + _pairwise(a, start + half, n - half, zero)


@njit
def _float_sum(flat, shape, reduced, size, zero):
    """np.sum of a C-contiguous float array (`flat`, its elements; `shape`) over the axes
    `reduced` (a bool per axis) as numpy adds: its innermost run of reduced axes summed
    pairwise, each such block added to a zero-started sum in C order; or, when the
    innermost axis is kept, its innermost run of kept axes added elementwise, in C order.
    The `size` sums, kept axes in C order."""
    acc = np.zeros(size, flat.dtype)
    if flat.size == 0:
        return acc
    k, block, inner = len(shape), 1, 1
    while k > 0 and (reduced[k - 1] or shape[k - 1] == 1):
        block *= shape[k - 1]
        k -= 1
    if block == 1:
        while k > 0 and (not reduced[k - 1] or shape[k - 1] == 1):
            inner *= shape[k - 1]
            k -= 1
    strides = np.zeros(k + 1, np.int64)      # each outer axis's step in `acc` (0: reduced)
    scale = inner
    for axis in range(k - 1, -1, -1):
        if not reduced[axis]:
            strides[axis] = scale
            scale *= shape[axis]
    index = np.zeros(k + 1, np.int64)
    o, step = 0, block * inner
    for p in range(flat.size // step):
        if block > 1:
            acc[o] += _pairwise(flat, p * step, block, zero)
        else:
            for j in range(inner):
                acc[o + j] += flat[p * step + j]
        axis = k - 1                          # the next outer position, odometer-wise
        while axis >= 0:
            index[axis] += 1
            o += strides[axis]
            if index[axis] < shape[axis]:
                break
            o -= strides[axis] * shape[axis]
            index[axis] = 0
            axis -= 1
    return acc

@njit
def _room(rows, n, row_shape):
    """`rows` (a loop's appended rows, n of them) with room for one more row of
    `row_shape`: itself, or a copy twice as long (at least 8 rows)."""
    if n < rows.shape[0]:
        return rows
    grown = np.empty((max(8, 2 * n),) + row_shape, rows.dtype)
    if n:
        grown[:n] = rows[:n]
    return grown


@njit
def _stacked(first, rows, n):
    """`first` followed by rows[:n] along axis 0 (the fast executor's _concat_rows: an
    empty `first` adds nothing)."""
    if n == 0:
        return np.ascontiguousarray(first)
    if first.shape[0] == 0:
        return rows[:n].copy()
    out = np.empty((first.shape[0] + n,) + rows.shape[1:], rows.dtype)
    out[:first.shape[0]] = first
    out[first.shape[0]:] = rows[:n]
    return out


@njit
def _room_for(values, index, row, end):
    """A loop collection's (values, index) with room for values up to `end` and index row
    `row`: themselves, or copies half as long again (at least 8 rows)."""
    if end > values.shape[0]:
        grown = np.empty(max(end, values.shape[0] + (values.shape[0] >> 1)), values.dtype)
        grown[:values.shape[0]] = values
        values = grown
    if row >= index.shape[0]:
        rows = np.empty((max(8, row + (row >> 1) + 1), index.shape[1]), index.dtype)
        rows[:index.shape[0]] = index
        index = rows
    return values, index


@njit
def _trimmed(a, n):
    """The first n rows of `a` (`a` itself when it has n)."""
    return a if a.shape[0] == n else a[:n].copy()
