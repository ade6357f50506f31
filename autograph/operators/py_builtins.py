"""Builtins in converted code: Python's own unless a symbolic tensor is involved.

`converted_call` redirects calls of `print`, `len`, `range`, `enumerate`, `zip`,
`abs`, `int`, `float`, `min`, `max` and `sum` here. With Python values (and eager
tensors) each behaves exactly like the builtin; with symbolic tensors it builds
the graph equivalent: `print` becomes `rt.print` (so it prints every time the
graph runs), `range(n)` a lazy tensor range a `for` loop iterates in a graph
loop, `len(t)` the static or run-time length.
"""
import builtins
import re
import string

import runtime as rt
from runtime import nest
from runtime.ops import logging_ops
from runtime.ops import registry
from runtime.tensor import SymbolicTensor, Tensor

from .control_flow import is_symbolic
from .data_structures import TensorList


def _any_symbolic(values):
    return any(is_symbolic(v) or (isinstance(v, TensorIterable) and v.is_symbolic())
               or (isinstance(v, TensorList) and is_symbolic(v.tensor)) for v in values)


def print_(*values, sep=" ", end="\n", file=None, flush=False):
    """`print`: at run time of the graph when tracing, immediately when eager."""
    if rt.executing_eagerly():
        builtins.print(*values, sep=sep, end=end, file=file, flush=flush)
        return None
    values = nest.map_structure(_printed_as_list, list(values))
    rt.print(*values, sep=sep, end=end, file=file)    # (runs with the graph, in order)
    return None                                        # what print returns


def _printed_as_list(value):
    """A tensor list prints as the Python list it is eagerly."""
    if isinstance(value, TensorList):
        return logging_ops.Rows(value.stack(), value.weak)
    return value


_CONVERSIONS = {-1: None, 115: "s", 114: "r", 97: "a"}


def fstring(*parts):
    """An f-string (`f"step {i}: {loss:.3f}"` in converted code): Python's string, or,
    when a value is a symbolic tensor, an rt FormattedString, whose text `print` (a graph
    print) shows with the values the graph computes, as Python would eagerly.

    `parts`: literal strings and (value, conversion code, format spec) triples.
    """
    return _formatted([part if isinstance(part, str) else
                       (part[0], _CONVERSIONS[part[1]], part[2]) for part in parts])


def _formatted(parts):
    """Python's string for format parts (see logging_ops.FormattedString), or, when a
    value is a symbolic tensor, the FormattedString a graph print formats again."""
    if _any_symbolic([part[0] for part in parts if not isinstance(part, str)]):
        return logging_ops.FormattedString(parts)
    return logging_ops.format_parts(parts)


def str_format(template, args, kwargs):
    """`template.format(*args, **kwargs)` in converted code: Python's string, or, when an
    argument is a symbolic tensor, a FormattedString (see `fstring`)."""
    if not _any_symbolic(list(args) + list(kwargs.values())):
        return template.format(*args, **kwargs)
    return logging_ops.FormattedString(_format_parts(template, args, kwargs, [0]))


def _format_parts(template, args, kwargs, counter):
    formatter = string.Formatter()
    parts = []
    for literal, field, spec, conversion in formatter.parse(template):
        if literal:
            parts.append(literal)
        if field is None:
            continue
        if field == "" or field[0] in ".[":          # automatic numbering
            field = f"{counter[0]}{field}"
            counter[0] += 1
        value, _ = formatter.get_field(field, args, kwargs)
        if spec and "{" in spec:                      # a nested field: `{:{width}}`
            spec = _formatted(_format_parts(spec, args, kwargs, counter))
        parts.append((value, conversion, spec or ""))
    return parts


_PERCENT = re.compile(r"%(?:\((?P<key>[^)]*)\))?(?P<spec>[-+ #0]*(?:\d+)?(?:\.\d+)?[hlL]?"
                      r"(?P<type>[diouxXeEfFgGcrsa%]))")


def percent_format(template, values):
    """`template % values` for a string template in converted code: Python's string, or,
    when a value is a symbolic tensor, a FormattedString (see `fstring`)."""
    leaves = (list(values.values()) if isinstance(values, dict) else
              list(values) if isinstance(values, tuple) else [values])
    if not _any_symbolic(leaves):
        return template % values
    parts, position, index = [], 0, 0
    for match in _PERCENT.finditer(template):
        parts.append(template[position:match.start()])
        position = match.end()
        if match.group("type") == "%":
            parts.append("%")
            continue
        if match.group("key") is not None:
            value = values[match.group("key")]
        elif isinstance(values, tuple):
            value, index = values[index], index + 1
        else:
            value = values
        parts.append((value, "%", "%" + match.group("spec")))
    parts.append(template[position:])
    return logging_ops.FormattedString([p for p in parts if p != ""])


def len_(value):
    """`len`: a Python int when known while tracing, else a scalar int32 tensor."""
    if isinstance(value, TensorList):
        return value.length()
    if isinstance(value, rt.Variable):
        value = value.read_value() if not rt.executing_eagerly() else value
    if isinstance(value, SymbolicTensor):
        shape = value.shape
        if shape.rank == 0:
            raise TypeError(f"len() of a scalar tensor {value.name}")
        if shape.rank is not None and shape[0] is not None:
            return shape[0]
        return rt.shape(value)[0]
    return builtins.len(value)


def abs_(x):
    return rt.abs(x) if is_symbolic(x) else builtins.abs(x)


def int_(x, base=None):
    if is_symbolic(x):
        if base is not None:
            raise NotImplementedError("int(tensor, base) is not supported")
        return rt.cast(x, rt.int32)
    return builtins.int(x) if base is None else builtins.int(x, base)


def float_(x=0.0):
    return rt.cast(x, rt.float32) if is_symbolic(x) else builtins.float(x)


def _reduce_builtin(builtin, reduce, pairwise):
    def fn(*args, **kwargs):
        if not _any_symbolic(args) or kwargs:
            return builtin(*args, **kwargs)
        if len(args) == 1:
            return reduce(args[0])
        result = args[0]
        for other in args[1:]:
            result = pairwise(result, other)
        return result
    fn.__name__ = builtin.__name__ + "_"
    return fn


min_ = _reduce_builtin(builtins.min, rt.reduce_min, rt.minimum)
max_ = _reduce_builtin(builtins.max, rt.reduce_max, rt.maximum)


def sum_(iterable, start=0):
    if _any_symbolic([iterable]):
        t = iterable.stack() if isinstance(iterable, TensorList) else iterable
        return rt.reduce_sum(t, axis=0) + start
    return builtins.sum(iterable, start)


# -- iteration -------------------------------------------------------------------------------

class TensorIterable:
    """What a `for` loop iterates in a graph: a length and the element at index i."""

    @staticmethod
    def of(value):
        """The graph-iterable view of `value`, or None for Python iteration."""
        if isinstance(value, TensorIterable):
            return value if value.is_symbolic() else None
        if isinstance(value, TensorList):
            value = value.stack()
        if isinstance(value, rt.Variable) and not rt.executing_eagerly():
            value = value.read_value()
        if isinstance(value, SymbolicTensor):
            return _Rows(value)
        return None

    def is_symbolic(self):
        raise NotImplementedError

    def length(self):
        raise NotImplementedError

    def element(self, i):
        raise NotImplementedError

    def __iter__(self):
        """Python iteration (a comprehension, list(), unpacking) while tracing: possible
        when the length is known then (zip/enumerate of tensors of static length)."""
        n = self.length()
        static = registry.constant_value(n) if isinstance(n, Tensor) else n
        if static is None:
            raise TypeError(
                f"{type(self).__name__[6:].lower() or 'this'}() of tensors whose length is "
                f"known only when the graph runs cannot be iterated by Python while tracing "
                f"(a comprehension, list(), unpacking, a call): only a `for` statement over "
                f"it becomes a graph loop. Write it as a `for` loop appending to a list.")
        return (self.element(i) for i in builtins.range(int(static)))


class _Rows(TensorIterable):
    """The rows (first-dimension slices) of a tensor."""

    def __init__(self, tensor):
        if tensor.shape.rank == 0:
            raise TypeError(f"Cannot iterate over the scalar tensor {tensor.name}")
        self.tensor = tensor

    def is_symbolic(self):
        return is_symbolic(self.tensor)

    def length(self):
        return len_(self.tensor)

    def element(self, i):
        return self.tensor[i]

    def __iter__(self):
        return iter(self.tensor)


class TensorRange(TensorIterable):
    """`range(start, stop, step)` with tensor bounds, never materialized."""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step

    def is_symbolic(self):
        return _any_symbolic([self.start, self.stop, self.step])

    def length(self):
        d = self.stop - self.start
        step = self.step
        if not is_symbolic(step) and not isinstance(step, Tensor):
            if step == 0:
                raise ValueError("range() arg 3 must not be zero")
            n = (d + step - (1 if step > 0 else -1)) // step
        else:
            # (a stateful check: it runs, and fails, whenever the graph runs)
            rt.debugging.assert_none_equal(step, 0, message="range() arg 3 must not be zero")
            n = (d + step - rt.sign(step)) // step
        return rt.maximum(n, 0)

    def element(self, i):
        if type(self.start) is int and self.start == 0 and type(self.step) is int \
                and self.step == 1:
            return i        # the counter itself: weak like the Python int it stands for
        return self.start + i * self.step

    def __iter__(self):
        if self.is_symbolic():
            bound = next(b for b in (self.start, self.stop, self.step) if is_symbolic(b))
            raise TypeError(
                f"range() with the bound {bound.name}, a tensor known only when the graph "
                f"runs, cannot be iterated by Python while tracing (a comprehension, list(), "
                f"unpacking, a call): only a `for` statement over it becomes a graph loop. "
                f"Write the comprehension as a `for` loop appending to a list.")
        return iter(builtins.range(self.start, self.stop, self.step))

    def __reversed__(self):
        last = self.start + (self.length() - 1) * self.step
        return TensorRange(last, self.start - self.step, -self.step)


class TensorEnumerate(TensorIterable):
    def __init__(self, inner, start):
        self.inner, self.start = inner, start

    def is_symbolic(self):
        return True

    def length(self):
        return self.inner.length()

    def element(self, i):
        index = i if type(self.start) is int and self.start == 0 else self.start + i
        return (index, self.inner.element(i))


class TensorZip(TensorIterable):
    def __init__(self, inners):
        self.inners = inners

    def is_symbolic(self):
        return True

    def length(self):
        lengths = [it.length() for it in self.inners]
        result = lengths[0]
        for n in lengths[1:]:
            result = rt.minimum(result, n)
        return result

    def element(self, i):
        return tuple(it.element(i) for it in self.inners)


def range_(*args):
    """`range`: lazy tensor range when a bound is a symbolic tensor, else Python's."""
    if not _any_symbolic(args):
        return builtins.range(*args)
    if len(args) == 1:
        start, stop, step = 0, args[0], 1
    elif len(args) == 2:
        (start, stop), step = args, 1
    else:
        start, stop, step = args
    return TensorRange(start, stop, step)


def _iterable(value):
    """A TensorIterable for a symbolic value, or a Python list/array converted to one."""
    found = TensorIterable.of(value)
    if found is not None:
        return found
    if isinstance(value, builtins.range):
        return TensorRange(value.start, value.stop, value.step)
    return _Rows(rt.convert_to_tensor(value))


def _traced_datasets(iterables):
    """Whether these are data sets iterated while tracing (a graph loop, not Python's)."""
    return (bool(iterables) and all(isinstance(it, rt.data.Dataset) for it in iterables)
            and not rt.executing_eagerly())


def enumerate_(iterable, start=0):
    if _traced_datasets([iterable]):
        return iterable.enumerate(start)
    if _any_symbolic([iterable]):
        return TensorEnumerate(_iterable(iterable), start)
    return builtins.enumerate(iterable, start)


def zip_(*iterables, strict=False):
    if _traced_datasets(iterables) and not strict:
        return rt.data.Dataset.zip(*iterables)
    if _any_symbolic(iterables):
        return TensorZip([_iterable(it) for it in iterables])
    if strict:
        return builtins.zip(*iterables, strict=True)
    return builtins.zip(*iterables)


BUILTIN_OVERRIDES = {
    builtins.print: print_, builtins.len: len_, builtins.range: range_,
    builtins.enumerate: enumerate_, builtins.zip: zip_, builtins.abs: abs_,
    builtins.int: int_, builtins.float: float_, builtins.min: min_, builtins.max: max_,
    builtins.sum: sum_,
}
