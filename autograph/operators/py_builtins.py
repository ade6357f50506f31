"""Builtins in converted code: Python's own unless a symbolic tensor is involved.

`converted_call` redirects calls of `print`, `len`, `range`, `enumerate`, `zip`,
`abs`, `int`, `float`, `str`, `repr`, `format`, `min`, `max`, `sum`, `sorted`, `any`,
`all` and of the string methods `format` and `join` here. With Python values (and eager
tensors) each behaves exactly like the builtin; with symbolic tensors it builds
the graph equivalent: `print` becomes `rt.print` (so it prints every time the
graph runs), `range(n)` a lazy tensor range a `for` loop iterates in a graph
loop, `len(t)` the static or run-time length.
"""
import builtins
import functools
import operator
import re
import string

import numpy as np

import runtime as rt
from runtime import nest
from runtime.ops import logging_ops
from runtime.ops import registry
from runtime.tensor import EagerTensor, SymbolicTensor, Tensor

from autograph import implicit_calls

from .control_flow import is_symbolic
from .data_structures import StarredList, TensorList


def _any_symbolic(values):
    return any(is_symbolic(v) or (isinstance(v, TensorIterable) and v.is_symbolic())
               or (isinstance(v, TensorList) and is_symbolic(v.tensor))
               or isinstance(v, logging_ops.FormattedString) for v in values)


def _holds_symbolic(value):
    """Whether `value` or a leaf of it (a nested list, tuple, dict, namedtuple or
    dataclass) is known only when the graph runs: what a print or a formatted string of it
    must format at run time."""
    return _any_symbolic([leaf.text if isinstance(leaf, logging_ops.Shown) else leaf
                          for leaf in nest.flatten(value)])


def _needs_staging(value):
    """Whether formatting `value` may need the graph's values: it holds a symbolic tensor
    or an object whose class formats it (its text may show tensors), or a set of those."""
    return _holds_symbolic(value) or any(
        implicit_calls.formats_itself(leaf) or _is_staged_set(leaf)
        or _is_staged_exception(leaf) for leaf in nest.flatten(value))


def print_(*values, sep=" ", end="\n", file=None, flush=False):
    """`print`: at run time of the graph when tracing, immediately when eager."""
    if rt.executing_eagerly():
        builtins.print(*values, sep=sep, end=end, file=file, flush=flush)
        return None
    values = [_text_or_value(v, "s", "") for v in values]
    rt.print(*_printed_as_lists(values), sep=sep, end=end, file=file,
             flush=flush)                              # (runs with the graph, in order)
    return None                                        # what print returns


def _printed_as_lists(value):
    """`value` with its tensor lists (at any depth) as the Python lists they are eagerly."""
    return nest.map_structure(_printed_as_list, value)


def _printed_as_list(value):
    if isinstance(value, TensorList):
        return logging_ops.Rows(value.stack(), value.weak)
    if isinstance(value, StarredList):            # print(*l): the elements, one by one
        return logging_ops.Rows(value.tensor_list.stack(), value.tensor_list.weak,
                                spread=True)
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
    parts = [part if isinstance(part, str) else _text_part(*part) for part in parts]
    if _holds_symbolic([(part[0], part[2]) for part in parts if not isinstance(part, str)]):
        return _formatted_string(parts)
    return logging_ops.format_parts(parts)


def _formatted_string(parts):
    """The FormattedString of format parts whose values hold symbolic tensors."""
    return logging_ops.FormattedString([
        part if isinstance(part, str) else (_printed_as_lists(part[0]), *part[1:])
        for part in parts if part != ""])


def str_format(template, *args, **kwargs):
    """`template.format(*args, **kwargs)` in converted code: Python's string, or, when an
    argument is a symbolic tensor, a FormattedString (see `fstring`)."""
    if not _needs_staging([args, kwargs]):
        return template.format(*args, **kwargs)
    return _formatted(_format_parts(template, args, kwargs, [0]))


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


# A printf-style directive of `template % values` (Python checks the template first).
_PERCENT = re.compile(r"%(?:%|(?:\((?P<key>[^)]*)\))?(?P<flags>[-+ #0]*)(?P<width>\*|\d+)?"
                      r"(?:\.(?P<precision>\*|\d*))?[hlL]?(?P<type>[diouxXeEfFgGcrsa]))")


def percent_format(template, values):
    """`template % values` for a string template in converted code: Python's string, or,
    when a value holds a symbolic tensor, a FormattedString (see `fstring`)."""
    if not _needs_staging(values):
        return template % values
    template % _stand_ins(values)      # Python's errors: too many or too few values, ...
    arguments = iter(values if isinstance(values, tuple) else (values,))
    parts, position = [], 0
    for match in _PERCENT.finditer(template):
        parts.append(template[position:match.start()])
        position = match.end()
        if match.group() == "%%":
            parts.append("%")
            continue
        width = _star(match.group("width"), arguments)
        precision = _star(match.group("precision"), arguments, floor=0)
        key = match.group("key")
        value, kind = _percent_value(values[key] if key is not None else next(arguments),
                                     match.group("type"))
        parts.append((value, "%", _percent_spec(match.group("flags"), width, precision, kind)))
    parts.append(template[position:])
    return _formatted_string(parts)


def _star(field, arguments, floor=None):
    """A directive's width or precision: its digits, the next argument's for `*` (a
    negative precision is 0), or a part formatting a symbolic one when the graph runs."""
    if field != "*":
        return field
    value = next(arguments)
    if not is_symbolic(value):
        value = operator.index(value)
        return str(value if floor is None else builtins.max(value, floor))
    return (value if floor is None else rt.maximum(value, floor), "%", "%d")


def _percent_spec(flags, width, precision, kind):
    """A directive's spec: a string, or a FormattedString with a symbolic `*` value."""
    parts = ["%" + flags, width or "", "" if precision is None else ".", precision or "",
             kind]
    if all(isinstance(part, str) for part in parts):
        return "".join(parts)
    return _formatted_string(parts)


def _percent_value(value, kind):
    """(value, directive type) with a user object's text in place of the object (then
    formatted by `%s`)."""
    text = _text_of(value, kind, "") if kind in "sr" else None
    if text is not None:
        return text, "s"
    return _objects_shown(value), kind


def _stand_ins(values):
    """`values` with eager stand-ins for what is known only when the graph runs: what
    Python's `%` checks the template against, raising the errors it raises eagerly."""
    return nest.map_structure(_stand_in, values)


def _stand_in(value):
    """A list for a tensor list, a string for an object that formats itself; for a
    symbolic tensor, the Python number it stands for (SymbolicTensor.weak) or an eager
    tensor of its dtype and (static) shape."""
    if isinstance(value, TensorList):
        return []
    if implicit_calls.formats_itself(value):
        return ""
    if not is_symbolic(value):
        return value
    weak = getattr(value, "weak", None)
    if weak is not None:
        return {"b": False, "i": 0, "f": 0.0, "c": 0j}[weak]
    shape = [1 if d is None else d for d in value.shape.as_list()] \
        if value.shape.rank is not None else []
    return EagerTensor(np.zeros(shape, value.dtype.np))


def len_(value):
    """`len`: a Python int when known while tracing, else a scalar int32 tensor."""
    if isinstance(value, TensorList):
        n = value.length()                      # int32 standing for the Python int
        return _weak(n, "i") if isinstance(n, SymbolicTensor) else n
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
    """`int(t)` of a symbolic tensor: int32 standing for the Python int (weak, as a loop
    counter is: it prints as the number and adapts to the tensors it meets)."""
    if is_symbolic(x):
        if base is not None:
            raise NotImplementedError("int(tensor, base) is not supported")
        return _weak(rt.cast(x, rt.int32), "i")
    return builtins.int(x) if base is None else builtins.int(x, base)


def float_(x=0.0):
    """`float(t)` of a symbolic tensor: float64 standing for the Python float, which
    prints as Python prints the float of the value (0.3333333432674408 for float32 1/3)."""
    if is_symbolic(x):
        return _weak(rt.cast(x, rt.float64), "f")
    return builtins.float(x)


def _text_or_value(value, conversion, spec):
    """The text of a user object as its class formats it now, while tracing (its
    converted `__str__`...: a print op would format the object when the graph runs,
    after the function has changed it, and its tensors are symbolic); other values as
    they are, with the objects in them shown by their text (see `_objects_shown`)."""
    text = _text_of(value, conversion, spec)
    return _objects_shown(value) if text is None else text


def _text_of(value, conversion, spec):
    """The text of `value` made now, while tracing, where it may show values known only
    when the graph runs: a user object's (implicit_calls.text_of), an exception's whose
    arguments hold such values (see `_exception_text`); None for other values."""
    text = implicit_calls.text_of(value, conversion, spec)
    if text is None and _is_staged_exception(value):
        text = _exception_text(value, conversion, spec)
    return text


def _is_staged_exception(value):
    return isinstance(value, BaseException) and _needs_staging(list(value.args))


def _exception_text(error, conversion, spec):
    """Python's str (or, for conversion "r", repr) of the exception `error` as format parts
    of its arguments (BaseException's and KeyError's: the text of `ValueError(f"{x} is
    rejected")` caught while tracing shows x's value in the graph); None for a class that
    formats its exceptions otherwise, or a conversion or spec Python's text does not take."""
    cls, args = type(error), error.args
    if spec or conversion not in (None, "s", "r"):
        return None
    if conversion == "r":
        if cls.__repr__ is not BaseException.__repr__:
            return None
        return _formatted([cls.__name__ + "(", (args[0], "r", ""), ")"] if len(args) == 1
                          else [cls.__name__, (args, "r", "")])
    if cls.__str__ is KeyError.__str__ and len(args) == 1:
        return _formatted([(args[0], "r", "")])           # KeyError('k') prints 'k'
    if cls.__str__ not in (BaseException.__str__, KeyError.__str__):
        return None
    return _formatted([] if not args else [(args[0], "s", "")] if len(args) == 1
                      else [(args, "r", "")])


def _text_part(value, conversion, spec):
    """A format part (value, conversion, spec) with a user object's text in its place."""
    text = _text_of(value, conversion, spec)
    if text is None:
        return _objects_shown(value), conversion, spec
    return text, None, spec if conversion else ""       # (__format__ took the spec)


def _objects_shown(value):
    """`value`, a nested structure, with the user objects in it (their classes format them)
    replaced by their reprs, made now (as `_text_or_value` makes an object's text): a
    list shows its items' reprs. So are sets holding tensors (not nested structures)."""
    if not nest.is_nested(value):
        return _set_shown(value) if _is_staged_set(value) else value
    leaves = nest.flatten(value)
    shown = [_shown(leaf) for leaf in leaves]
    if all(a is b for a, b in zip(leaves, shown)):
        return value
    return nest.pack_sequence_as(value, shown)


def _shown(leaf):
    if _is_staged_set(leaf):
        return _set_shown(leaf)
    text = _text_of(leaf, "r", "")
    return leaf if text is None else logging_ops.Shown(text)


def _is_staged_set(value):
    return type(value) in (set, frozenset) and _needs_staging(list(value))


def _set_shown(items):
    """A set's repr, its items (in the order the set holds them now) formatted when the
    graph runs."""
    parts = ["frozenset({" if type(items) is frozenset else "{"]
    for i, item in enumerate(items):
        parts += [", "] * (i > 0) + [(_objects_shown(item), "r", "")]
    parts.append("})" if type(items) is frozenset else "}")
    return logging_ops.Shown(_formatted_string(parts))


def _weak(t, kind):
    t.weak = kind
    return t


def str_(*args, **kwargs):
    """`str(t)` of a symbolic tensor (or of a container holding one): a FormattedString,
    printed with the graph's value, as f"{t!s}" is."""
    if len(args) == 1 and not kwargs:
        return _formatted([(args[0], "s", "")])
    return builtins.str(*args, **kwargs)


def format_(value, spec=""):
    """`format(t, spec)` of a symbolic tensor: a FormattedString, as f"{t:spec}" is."""
    return _formatted([(value, None, spec)])


def str_join(separator, iterable):
    """`separator.join(strings)` in converted code: Python's string, or, when a string is a
    FormattedString (an f-string of symbolic tensors), a FormattedString of them all."""
    items = list(iterable)
    if not _any_symbolic(items):
        return separator.join(items)
    parts = []
    for i, item in enumerate(items):
        if i:
            parts.append(separator)
        parts.extend(item.parts if isinstance(item, logging_ops.FormattedString) else [item])
    return logging_ops.FormattedString([p for p in parts if p != ""])


def repr_(x):
    """`repr(t)`: as f"{t!r}" is."""
    return _formatted([(x, "r", "")])


def _reduce_builtin(builtin, reduce, pairwise):
    def fn(*args, **kwargs):
        items = args
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            items = args[0]                     # max([a, b, c]): the items of one list
        if not _any_symbolic(items) or kwargs:
            return builtin(*args, **kwargs)
        if items is args and len(args) == 1:
            return reduce(args[0])
        if not items:
            return builtin(*args)               # (raises Python's ValueError)
        return functools.reduce(pairwise, items)
    fn.__name__ = builtin.__name__ + "_"
    return fn


def sorted_(iterable, /, *, key=None, reverse=False):
    """`sorted` of a list of scalars, some of them symbolic tensors: a sorting network of
    minimum/maximum ops (the values sorted, as Python's sorted gives them); otherwise
    Python's sorted."""
    items = builtins.list(iterable)
    if key is not None or not _any_symbolic(items):
        return builtins.sorted(items, key=key, reverse=reverse)
    items = [rt.convert_to_tensor(x) for x in items]
    for x in items:
        if x.shape.num_elements() != 1:
            raise TypeError(f"sorted() of tensors known only when the graph runs sorts "
                            f"scalars; {getattr(x, 'name', x)} has shape {x.shape}")
    for end in builtins.range(len(items) - 1, 0, -1):          # bubble the largest up
        for i in builtins.range(end):
            items[i], items[i + 1] = rt.minimum(items[i], items[i + 1]), \
                rt.maximum(items[i], items[i + 1])
    return items[::-1] if reverse else items


def _truth_builtin(builtin, combine, reduce):
    """`any` / `all`: Python's, stopping at the first deciding Python value; items that are
    symbolic tensors (a generator of comparisons of a tensor's elements) are combined in
    the graph, a symbolic tensor as the iterable is reduced."""
    decides = builtin is builtins.any

    def fn(iterable):
        if isinstance(iterable, TensorList):
            iterable = iterable.stack()
        if is_symbolic(iterable) and rt.convert_to_tensor(iterable).shape.rank == 1:
            return reduce(rt.cast(iterable, rt.bool))
        pending = []
        for item in iterable:
            if is_symbolic(item):
                pending.append(_scalar_truth(item, builtin))
            elif builtins.bool(item) is decides:
                return decides
        return functools.reduce(combine, pending) if pending else not decides
    fn.__name__ = builtin.__name__ + "_"
    return fn


def _scalar_truth(item, builtin):
    item = rt.convert_to_tensor(item)
    if item.shape.num_elements() not in (1, None):
        raise ValueError(f"{builtin.__name__}(): the truth value of the tensor {item.name} "
                         f"of shape {item.shape} is ambiguous (Python reads each item as "
                         f"a bool): use rt.reduce_any or rt.reduce_all")
    return rt.reshape(rt.cast(item, rt.bool), [])


min_ = _reduce_builtin(builtins.min, rt.reduce_min, rt.minimum)
max_ = _reduce_builtin(builtins.max, rt.reduce_max, rt.maximum)
any_ = _truth_builtin(builtins.any, rt.logical_or, rt.reduce_any)
all_ = _truth_builtin(builtins.all, rt.logical_and, rt.reduce_all)


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
        value = self.start + i * self.step
        if isinstance(value, SymbolicTensor):
            value.weak = "i"                # range yields Python ints, whatever its bounds
        return value

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
    """`zip`: of tensors, a graph-iterable zip (a `for` over it is a graph loop); with a
    Python list or tuple among them, whose length bounds the zip's, Python's zip over the
    tensors' rows (a `for` unrolls), when the tensors' lengths are known while tracing."""
    if _traced_datasets(iterables) and not strict:
        return rt.data.Dataset.zip(*iterables)
    if _any_symbolic(iterables):
        rows = [_static_rows(it) for it in iterables] \
            if any(isinstance(it, (list, tuple)) for it in iterables) else [None]
        if any(r is None for r in rows):
            return TensorZip([_iterable(it) for it in iterables])
        iterables = rows
    if strict:
        return builtins.zip(*iterables, strict=True)
    return builtins.zip(*iterables)


def _static_rows(value):
    """`value` as a Python iterable: a list or tuple as it is, a tensor (or a graph
    iterable) of a length known while tracing as its elements; None otherwise."""
    if isinstance(value, (list, tuple)):
        return value
    found = TensorIterable.of(value) if not isinstance(value, TensorIterable) else value
    if found is None:
        return value
    n = found.length()
    static = registry.constant_value(n) if isinstance(n, Tensor) else n
    if static is None:
        return None
    return [found.element(i) for i in builtins.range(int(static))]


BUILTIN_OVERRIDES = {
    builtins.print: print_, builtins.len: len_, builtins.range: range_,
    builtins.enumerate: enumerate_, builtins.zip: zip_, builtins.abs: abs_,
    builtins.int: int_, builtins.float: float_, builtins.min: min_, builtins.max: max_,
    builtins.sum: sum_, builtins.any: any_, builtins.all: all_, builtins.str: str_,
    builtins.repr: repr_, builtins.format: format_, builtins.sorted: sorted_,
}
STR_METHOD_OVERRIDES = {"format": str_format, "join": str_join}   # "{}".format(x), ", ".join(l)
