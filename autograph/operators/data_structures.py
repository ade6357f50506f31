"""Python lists in converted code, and tensor lists for lists grown in graph loops.

`l.append(x)` is converted to `l = ag__.list_append(l, x)`. On a Python list that
is plain `append`. A list that a graph loop grows cannot stay a Python list (the
body is traced once), so the loop carries it as a `TensorList`: its elements
stacked in one tensor along a first dimension of unknown size. After the loop
it behaves like the list stacked back (`rt.stack(l)`, `l[i]`, `len(l)`, `for`).
"""
import numpy as np

import runtime as rt
from runtime import dtypes
from runtime import traceback_utils
from runtime.ops import math_ops
from runtime.ops import registry
from runtime.tensor import Tensor

from ..errors import staging_error


def _weak_of(value):
    """The kind of Python number `value` is or stands for (math_ops.weak_kind_of; a
    tensor list's elements'), or None."""
    if isinstance(value, TensorList):
        return value.weak
    return None if isinstance(value, (list, tuple)) else math_ops.weak_kind_of(value)


def _weak_of_all(values):
    """The widest kind if every value is or stands for a Python number, else None."""
    return _widest([_weak_of(v) for v in values])


def _widest(kinds):
    if not kinds or None in kinds:
        return None
    return max(kinds, key=dtypes.KIND_ORDER.index)


class TensorList:
    """A list of same-shaped tensors, stored stacked: `tensor[i]` is element i."""

    __slots__ = ("tensor", "name", "weak")

    def __init__(self, tensor, name="list", weak=None):
        self.tensor = tensor
        self.name = name            # the user's name for it, for errors
        self.weak = weak            # the kind of Python number every element stands for
                                    # (see SymbolicTensor.weak), for printing; or None

    @classmethod
    def from_list(cls, items, name="list"):
        try:
            return cls(rt.stack([registry.convert_to_tensor(x) if not isinstance(x, Tensor)
                                 else x for x in items]), name, _weak_of_all(items))
        except (TypeError, ValueError) as e:
            raise staging_error(
                f"the list '{name}' is changed inside a tensor loop, so it becomes a tensor "
                f"list, but its elements are not tensors of one shape and dtype: {e}",
                skip=5) from None

    @classmethod
    def empty_like(cls, element, name="list"):
        check_list_element(element, name)
        t = element if isinstance(element, Tensor) else registry.convert_to_tensor(element)
        dims = [0] + [0 if d is None else d for d in (t.shape.dims or ())]
        with rt.init_scope():
            return cls(rt.constant(np.zeros(dims, t.dtype.np)), name, _weak_of(element))

    def growing_shape(self):
        """The shape invariant of the stacked tensor: any number of elements."""
        shape = self.tensor.shape
        if shape.rank is None:
            return rt.TensorShape(None)
        return rt.TensorShape([None] + list(shape.dims[1:]))

    def element_like(self):
        """A zero tensor shaped like one element."""
        dims = [0 if d is None else d for d in self.tensor.shape.dims[1:]]
        with rt.init_scope():
            return rt.zeros(dims, self.tensor.dtype)

    # -- list operations ----------------------------------------------------------------
    def append(self, x):
        """Append in place, as on a Python list (a helper's `l.append(x)` is seen by its
        caller); returns the list."""
        check_list_element(x, self.name)
        element_weak = _weak_of(x)
        dtype = self.tensor.dtype
        kind = dtypes.weak_kind(x) if not isinstance(x, Tensor) else None
        fits = dtypes.weak_result(kind, dtype) == dtype if kind is not None else True
        if fits:
            x = registry.convert_to_tensor(x, dtype_hint=dtype)
        if not fits or x.dtype != dtype:
            got = f"the Python value {x!r}" if not fits else f"a {x.dtype.name} tensor"
            raise staging_error(
                f"the list '{self.name}' is grown in a tensor loop or tensor `if`, "
                f"so it is a tensor list of {dtype.name} elements (the dtype of its first "
                f"element), and "
                f"{got} is appended to it. In a graph all elements of a list need one "
                f"dtype: start the list with elements of the dtype you append, or cast "
                f"(rt.cast).", skip=3)
        self._check_rows(x.shape, x.dtype)
        self.tensor = rt.concat([self.tensor, rt.expand_dims(x, 0)], 0)
        self.weak = _widest([self.weak, element_weak])
        return self

    def copy(self):
        return TensorList(self.tensor, self.name, self.weak)

    # Other ways of growing a list, in place as on a Python list (`l.extend(xs)`,
    # `l += xs`, `l.insert(i, x)`) or into a new one (`l + xs`).
    def extend(self, items):
        if isinstance(items, TensorList) or isinstance(items, Tensor):
            rows = items.tensor if isinstance(items, TensorList) else items
            self._check_rows(rows.shape[1:], rows.dtype)
            self.tensor = rt.concat([self.tensor, rows], 0)     # (`l += l` too)
            self.weak = _weak_of_all([self, items])
            return
        for item in items:
            self.append(item)

    def _check_rows(self, shape, dtype):
        """A StagingError naming the list for elements of another shape or dtype."""
        own = self.tensor.shape[1:] if self.tensor.shape.rank is not None else None
        if dtype != self.tensor.dtype:
            raise staging_error(
                f"the list '{self.name}' is grown in a tensor loop or tensor `if`, "
                f"so it is a tensor list "
                f"of {self.tensor.dtype.name} elements, and {dtype.name} elements are added "
                f"to it (cast them: rt.cast)", skip=4)
        if own is not None and shape.rank is not None and not own.is_compatible_with(shape):
            raise staging_error(
                f"the list '{self.name}' is grown in a tensor loop or tensor `if`, "
                f"so it is a tensor list "
                f"whose elements all have one shape, {own}, and an element of shape {shape} "
                f"is added to it", skip=4)

    def __iadd__(self, items):
        self.extend(items)
        return self

    def __add__(self, items):
        grown = self.copy()
        grown.extend(items)
        return grown

    def insert(self, i, x):
        t = self.tensor
        one = TensorList(t[:0], self.name, self.weak).append(x)
        self.tensor = rt.concat([t[:i], one.tensor, t[i:]], 0)
        self.weak = one.weak

    def pop(self, i=None):
        """Remove and return element i (the last by default), in place."""
        t = self.tensor
        if i is None or (isinstance(i, int) and i == -1):
            self.tensor = t[:-1]
            return t[-1]
        self.tensor = rt.concat([t[:i], t[i + 1:]], 0)
        return t[i]

    def stack(self):
        return self.tensor

    _as_tensor = stack

    def length(self):
        n = self.tensor.shape[0]
        return n if n is not None else rt.shape(self.tensor)[0]

    def __len__(self):
        n = self.tensor.shape[0]
        if n is None:
            raise TypeError("len() of a tensor list grown in a graph loop is known only when "
                            "the graph runs; use ag's len() in converted code or rt.shape")
        return n

    def __getitem__(self, i):
        return self.tensor[i]

    def __iter__(self):
        if self.tensor.shape[0] is None:
            raise self.unpacking_error()
        return iter(self.tensor)

    def unpacking_error(self):
        """The TypeError of unpacking or iterating this list by Python while tracing, at
        the user's line, when its length is known only when the graph runs."""
        return TypeError(
            f"the list '{self.name}' is grown in a tensor loop or tensor `if`, so its "
            f"length is known only when the graph runs: Python cannot unpack it "
            f"(`*{self.name}` in a call other than print's, `a, b = {self.name}`) or iterate "
            f"it (list(), a comprehension) while tracing. A `for` statement over it is a "
            f"graph loop, and print({self.name}) and print(*{self.name}) print it."
            f"{traceback_utils.at_user_line(2)}")

    def __repr__(self):
        return f"TensorList({self.tensor!r})"


class StarredList:
    """`*l` in a call's arguments, `l` a tensor list whose length is known only when the
    graph runs: one argument standing for all its elements. `print` prints them (see
    py_builtins.print_); any other callee gets the list's unpacking error."""

    __slots__ = ("tensor_list",)

    def __init__(self, tensor_list):
        self.tensor_list = tensor_list


def starred(value):
    """What `*value` in a call's arguments unpacks (`f(*ag__.starred(l))` in converted
    code): `value` as it is, except a tensor list of run-time length, which becomes one
    StarredList."""
    if isinstance(value, TensorList) and value.tensor.shape[0] is None:
        return (StarredList(value),)
    return value


def check_unpacked(args):
    """Raise the unpacking error of a tensor list starred into a call's `args` (a callee
    other than print cannot take a list of run-time length as its arguments)."""
    for arg in args:
        if type(arg) is StarredList:
            raise arg.tensor_list.unpacking_error()


_ELEMENT_TYPES = (Tensor, rt.Variable, np.ndarray, np.generic, bool, int, float, complex)


def check_list_element(x, name):
    """Raise unless `x` can be an element of a tensor list (names the list)."""
    if isinstance(x, (tuple, list, dict)):
        raise staging_error(
            f"the list '{name}' is grown in a tensor loop or tensor `if`, "
            f"so it becomes a tensor list, "
            f"whose elements must be tensors (or numbers); this one is a {type(x).__name__}. "
            f"Append rt.stack([...]) of the values, or keep one list per value.", skip=4)
    if not isinstance(x, _ELEMENT_TYPES):
        raise staging_error(
            f"the list '{name}' is grown in a tensor loop or tensor `if`, "
            f"so it becomes a tensor list, "
            f"whose elements must be tensors (or numbers); this one is a "
            f"{type(x).__name__}. Only tensors can be collected in a graph "
            f"loop: build such a list in a Python loop (over a range of a Python number).",
            skip=4)


def new_list(iterable=None):
    """`[]` / `list(x)` in converted code: a Python list."""
    return [] if iterable is None else list(iterable)


def list_append(target, element):
    """`target.append(element)` (in place, a tensor list too), returning the list."""
    target.append(element)
    return target


def list_extend(target, items):
    """`target.extend(items)` (in place), returning the list."""
    target.extend(items)
    return target


def list_insert(target, i, element):
    """`target.insert(i, element)` (in place), returning the list."""
    target.insert(i, element)
    return target


def list_pop(target, i=None):
    """`target.pop(i)`, returning (the list, the removed element)."""
    return target, (target.pop() if i is None else target.pop(i))


def list_stack(target, axis=0):
    """The elements of a list or tensor list stacked into one tensor."""
    if isinstance(target, TensorList):
        t = target.stack()
        if axis == 0:
            return t
        rank = t.shape.rank
        axis %= rank
        return rt.transpose(t, list(range(1, axis + 1)) + [0] + list(range(axis + 1, rank)))
    return rt.stack(target, axis=axis)


def is_tensor_list(value):
    return isinstance(value, TensorList)

