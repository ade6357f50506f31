"""Side-effecting ops: print, assertions, and calls of arbitrary Python (py_function).

All are stateful: inside a graph they are never pruned and run in program order.
`rt.print` prints, when it runs, exactly what Python's print shows for the
eager values (nested lists, dicts and tuples of tensors included).
"""
import sys

import numpy as np

from .. import context
from .. import dtypes
from .. import nest
from ..errors import AssertionFailedError
from ..shapes import TensorShape
from ..tensor import EagerTensor, Tensor
from ..variables import Variable, variable_repr
from . import math_ops
from . import registry
from .registry import apply, convert_to_tensor


class FormattedString(str):
    """An f-string whose values include tensors (what converted code makes of
    `f"loss {loss:.3f}"`): the text Python gives while tracing, and, printed by
    `rt.print`, the text of the values the graph computes.

    `parts`: literal strings and (value, conversion, format spec) triples, conversion
    being None, "s", "r" or "a" (as in f-strings and str.format), "%" for a printf-style
    spec such as "%5.2f" (the `%` operator on strings), or "choice": the spec is a tuple of
    strings, the value the index of the one shown (ChosenText).
    """

    def __new__(cls, parts):
        self = super().__new__(cls, format_parts(parts, tracing=True))
        self.parts = tuple(parts)
        return self

    def __reduce__(self):                 # copies and pickles are plain strings
        return (str, (str(self),))

    def __add__(self, other):             # "loss: " + str(x), f"{x}" + " units"
        if not isinstance(other, str):
            return NotImplemented
        return FormattedString(self.parts + _parts_of(other))

    def __radd__(self, other):
        if not isinstance(other, str):
            return NotImplemented
        return FormattedString(_parts_of(other) + self.parts)


class ChosenText(FormattedString):
    """One of several strings, chosen when the graph runs by an int32 tensor: what a tensor
    `if` (or `a if c else b`) makes of branches that give different strings. It prints
    and formats as the string chosen; `==` and `!=` with a string are bool tensors."""

    def __new__(cls, index, choices):
        self = super().__new__(cls, ((index, "choice", tuple(choices)),))
        self.index, self.choices = index, tuple(choices)
        return self

    def __eq__(self, other):
        if not isinstance(other, str):
            return NotImplemented
        if isinstance(other, FormattedString) or not self.plain():
            raise TypeError("comparing a string chosen by a tensor condition with a string "
                            "formatted from tensors is not supported in a graph: compare the "
                            "chosen string with constant strings")
        hits = [math_ops.equal(self.index, k) for k, choice in enumerate(self.choices)
                if choice == other]
        if not hits:
            return convert_to_tensor(False)
        result = hits[0]
        for hit in hits[1:]:
            result = math_ops.logical_or(result, hit)
        return result

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else math_ops.logical_not(equal)

    def __hash__(self):
        raise TypeError(
            f"a string chosen by a tensor condition (one of {len(self.choices)}: "
            f"{', '.join(repr(str(c)) for c in self.choices[:4])}) is known only when the "
            f"graph runs, so it cannot be a dict key or set member while tracing: key by "
            f"the condition's outcome, or decide with a Python condition")

    def plain(self):
        """Whether every choice is a constant string (none formats tensors)."""
        return all(type(choice) is str for choice in self.choices)


class Shown:
    """An object's text where a container shows it: the repr of a user object in a printed
    list, made while tracing (a FormattedString when it formats tensors)."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return str(self.text)

    __str__ = __repr__


def _parts_of(string):
    return string.parts if isinstance(string, FormattedString) else (string,)


def format_parts(parts, tracing=False):
    """The text of f-string parts (see FormattedString), as Python formats them. While
    `tracing`, a symbolic tensor that a format spec does not apply to shows as it is."""
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
            continue
        value, conversion, spec = part
        if conversion == "choice":              # ChosenText: spec holds the strings
            out.append("|".join(map(str, spec)) if tracing and not isinstance(value, (
                np.ndarray, np.generic, EagerTensor)) else str(spec[int(value)]))
            continue
        try:
            if conversion == "%":
                out.append(spec % (value,))
                continue
            if conversion is not None:
                value = {"s": str, "r": repr, "a": ascii}[conversion](value)
            out.append(format(value, spec))
        except (TypeError, ValueError):
            if not tracing:
                raise
            out.append(str(value))
    return "".join(out)


def with_tensors(template, tensors):
    """Undo `_split_tensors`: `template`'s values with `tensors` (graph tensors) in its
    slots, its FormattedTemplates FormattedStrings again."""
    def tensor(slot):
        if slot.rows:
            return Rows(tensors[slot.index], slot.weak, spread=slot.rows == "spread")
        if slot.weak is not None:
            tensors[slot.index].weak = slot.weak
        return tensors[slot.index]

    return _filled(template, tensor, lambda parts: FormattedString(tuple(parts)))


def _filled(template, slot_value, formatted):
    """`template` (see `_split_tensors`) with `slot_value(slot)` for each TemplateSlot and
    `formatted(parts)` for each FormattedTemplate, its parts' values and specs filled."""
    def leaf_value(leaf):
        if isinstance(leaf, TemplateSlot):
            return slot_value(leaf)
        if isinstance(leaf, Shown):
            return Shown(leaf_value(leaf.text))
        if isinstance(leaf, FormattedTemplate):
            return formatted([part if isinstance(part, str) else
                              (fill(part[0]), part[1], fill(part[2])) for part in leaf.parts])
        return leaf

    def fill(structure):
        return nest.map_structure(leaf_value, structure)

    return fill(template)


def _split_tensors(values):
    """(template structure, tensors): tensor leaves of `values` taken out, in order.

    A variable becomes a read of its value; its slot remembers the variable. The
    tensors of a FormattedString are taken out too, also where its values are nested
    structures holding tensors (it prints their values).
    """
    tensors = []

    def slot(leaf):
        tensors.append(convert_to_tensor(leaf))
        return TemplateSlot(len(tensors) - 1, leaf if isinstance(leaf, Variable) else None,
                            getattr(leaf, "weak", None))

    def leaf_template(leaf):
        if isinstance(leaf, Rows):
            rows = slot(leaf.tensor)
            rows.weak, rows.rows = leaf.weak, "spread" if leaf.spread else True
            return rows
        if isinstance(leaf, (Tensor, Variable)):
            return slot(leaf)
        if isinstance(leaf, Shown):
            return Shown(leaf_template(leaf.text))
        if isinstance(leaf, FormattedString):       # its values and specs made templates
            return FormattedTemplate(tuple(
                part if isinstance(part, str) else
                (template(part[0]), part[1], template(part[2])) for part in leaf.parts))
        return leaf

    def template(structure):
        return nest.map_structure(leaf_template, structure)

    return template(values), tensors


class FormattedTemplate:
    """A FormattedString in a print template, its tensors replaced by TemplateSlots."""

    __slots__ = ("parts",)

    def __init__(self, parts):
        self.parts = parts

    def __repr__(self):
        return f"f{format_parts(self.parts)!r}"


class TemplateSlot:
    """Where the i-th tensor of a print/assert goes in its values (and the variable it
    reads, so the value prints as Python prints a variable; or the kind of Python number
    the tensor stands for, SymbolicTensor.weak, so it prints as that number)."""

    __slots__ = ("index", "variable", "weak", "rows")

    def __init__(self, index, variable=None, weak=None):
        self.index = index
        self.variable = variable
        self.weak = weak
        self.rows = False           # True: printed as the list of its rows, "spread": as
                                    # its rows, each one of print's values (see Rows)

    def __repr__(self):
        return f"${self.index}"


class Rows:
    """A tensor that prints as the Python list of its rows: what a list grown in a graph
    loop (stored stacked) is eagerly. `weak`: the kind of Python number every row stands
    for (SymbolicTensor.weak), or None (rows print as tensors). `spread`: one of print's
    values standing for its rows, each printed as a value of its own (`print(*l)`),
    separated by `sep`."""

    __slots__ = ("tensor", "weak", "spread")

    def __init__(self, tensor, weak=None, spread=False):
        self.tensor = tensor
        self.weak = weak
        self.spread = spread


class _VariableValue(EagerTensor):
    """A variable's value when an op runs, shown as Python shows the variable itself."""

    __slots__ = ("_variable",)

    def __init__(self, variable, value):
        super().__init__(value, variable.dtype)
        self._variable = variable

    def __repr__(self):
        return variable_repr(self._variable, self._value)

    __str__ = __repr__


def _fill(template, arrays):
    def value(slot):
        array = arrays[slot.index]
        if slot.rows:
            return [python_number(row) if slot.weak is not None and np.ndim(row) == 0
                    else EagerTensor(np.asarray(row)) for row in array]
        if slot.variable is not None:
            return _VariableValue(slot.variable, array)
        if slot.weak is not None and np.ndim(array) == 0:
            return python_number(array)
        return EagerTensor(array)

    return _filled(template, value, format_parts)


def python_number(array):
    """The Python number a 0-d array holds; a float as its dtype's shortest text reads
    (float32 0.1 is 0.1, as Python would print the number it stands for)."""
    value = np.asarray(array)
    if value.dtype.kind == "f":
        return float(str(value))
    return value.item()


def _spread(template, values):
    """Print's values, the rows of each "spread" slot (see Rows) in its place."""
    out = []
    for item, value in zip(template, values):
        if isinstance(item, TemplateSlot) and item.rows == "spread":
            out.extend(value)
        else:
            out.append(value)
    return out


def _print_kernel(*arrays, template, sep, end, file, flush=False):
    values = _spread(template, _fill(template, arrays))
    if file is None or file == "stdout":        # the streams of the moment it runs
        file = sys.stdout
    elif file == "stderr":
        file = sys.stderr
    print(*values, sep=sep, end=end, file=file, flush=flush)


def _no_outputs(inputs, **_):
    return []


# Host ops: their kernels are numpy's alone (on another device they run on cpu:0).
_PRINT = registry.register("print", None, _no_outputs, stateful=True, retains_inputs=False,
                           numpy=_print_kernel)


def print_(*values, sep=" ", end="\n", file=None, flush=False, name=None):
    """Print `values` when this op runs, as Python's print shows their eager values (and
    then flush the stream, if `flush`)."""
    template, tensors = _split_tensors(list(values))
    if file is sys.stdout or file is sys.__stdout__:
        file = None                 # named, not held: redirections at run time apply
    elif file is sys.stderr or file is sys.__stderr__:
        file = "stderr"
    attrs = {"template": tuple(template), "sep": sep, "end": end, "file": file}
    if flush:
        attrs["flush"] = True           # (absent when false: saved graphs stay as they were)
    return apply(_PRINT, tensors, attrs, name)


def _assert_kernel(condition, *arrays, template, summarize):
    if np.all(condition):
        return None
    parts = []
    for item in _fill(template, arrays):
        if isinstance(item, EagerTensor):
            value = item._value
            if summarize is not None and value.size > summarize:
                value = value.ravel()[:summarize]
            parts.append(str(value))
        else:
            parts.append(str(item))
    raise AssertionFailedError("assertion failed: " + " ".join(parts))


_ASSERT = registry.register("assert", None, _no_outputs, stateful=True, retains_inputs=False,
                            numpy=_assert_kernel)


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TensorFlow's name
    """Raise AssertionFailedError (an AssertionError) listing `data` if `condition` is false."""
    condition = convert_to_tensor(condition)
    if not condition.dtype.is_bool:
        raise TypeError(f"Assert: the condition must be bool, got {condition.dtype.name}")
    template, tensors = _split_tensors(list(data))
    return apply(_ASSERT, [condition] + tensors, {"template": tuple(template),
                                                  "summarize": summarize}, name)


def _make_assert(compare, relation):
    def assert_fn(x, y, message=None, summarize=None, name=None):
        x, y = math_ops.convert_pair(x, y)
        ok = math_ops.reduce_all(compare(x, y))
        data = ([message] if message else []) + [
            f"Condition x {relation} y did not hold elementwise: x =", x, "y =", y]
        return Assert(ok, data, summarize=summarize, name=name)
    assert_fn.__doc__ = (f"Raise an AssertionFailedError (an AssertionError) at run time "
                         f"unless `x {relation} y` holds elementwise (numpy broadcasting); "
                         f"`message` comes first in the error.")
    return assert_fn


def _make_sign_assert(compare, relation):
    def assert_fn(x, message=None, summarize=None, name=None):
        x = convert_to_tensor(x)
        ok = math_ops.reduce_all(compare(x, math_ops.cast(0, x.dtype)))
        data = ([message] if message else []) + [
            f"Condition x {relation} 0 did not hold elementwise: x =", x]
        return Assert(ok, data, summarize=summarize, name=name)
    assert_fn.__doc__ = (f"Raise an AssertionFailedError (an AssertionError) at run time "
                         f"unless `x {relation} 0` holds elementwise; `message` comes first "
                         f"in the error.")
    return assert_fn


class debugging:  # noqa: N801 - a namespace, as `rt.debugging`
    """Assertions that raise at run time (`rt.debugging.assert_equal(x, y)`, ...)."""
    Assert = staticmethod(Assert)
    assert_equal = staticmethod(_make_assert(math_ops.equal, "=="))
    assert_none_equal = staticmethod(_make_assert(math_ops.not_equal, "!="))
    assert_less = staticmethod(_make_assert(math_ops.less, "<"))
    assert_less_equal = staticmethod(_make_assert(math_ops.less_equal, "<="))
    assert_greater = staticmethod(_make_assert(math_ops.greater, ">"))
    assert_greater_equal = staticmethod(_make_assert(math_ops.greater_equal, ">="))
    assert_positive = staticmethod(_make_sign_assert(math_ops.greater, ">"))
    assert_negative = staticmethod(_make_sign_assert(math_ops.less, "<"))
    assert_non_negative = staticmethod(_make_sign_assert(math_ops.greater_equal, ">="))
    assert_non_positive = staticmethod(_make_sign_assert(math_ops.less_equal, "<="))


def _assert_assigned_kernel(xp, flag, value, message):
    if not bool(flag):
        raise UnboundLocalError(message)
    return value


def _assert_assigned_infer(inputs, message):
    return [(inputs[1].shape, inputs[1].dtype)]


# Not stateful: when nothing reads the value, the check is pruned with it.
_ASSERT_ASSIGNED = registry.register("assert_assigned", _assert_assigned_kernel,
                                     _assert_assigned_infer)


def assert_assigned(flag, value, message, name=None):
    """`value` if `flag` holds when the graph runs, else UnboundLocalError(message).

    The compiler uses it for a variable first assigned inside a graph loop: it has a
    value after the loop only if the loop ran."""
    return apply(_ASSERT_ASSIGNED, [convert_to_tensor(flag), convert_to_tensor(value)],
                 {"message": message}, name)


# -- py_function -------------------------------------------------------------------------

def _py_function_kernel(*arrays, func, tout, single):
    with context.init_scope():
        result = func(*[EagerTensor(a) for a in arrays])
    if not tout:
        return []
    results = [result] if single else list(result if isinstance(result, (list, tuple))
                                           else [result])
    if len(results) != len(tout):
        raise ValueError(f"py_function {getattr(func, '__name__', func)} returned "
                         f"{len(results)} values, Tout lists {len(tout)}")
    out = []
    name = getattr(func, "__name__", func)
    for k, (value, dtype) in enumerate(zip(results, tout)):
        if value is None:
            raise TypeError(f"py_function {name} returned None for its result {k}, which "
                            f"Tout declares {dtype.name}")
        arr = value._host() if isinstance(value, EagerTensor) else np.asarray(value)
        if arr.dtype != dtype.np and not np.can_cast(arr.dtype, dtype.np, "same_kind"):
            raise TypeError(f"py_function {name} returned {arr.dtype} for its result {k}, "
                            f"which Tout declares {dtype.name} (cast it in the function)")
        out.append(arr.astype(dtype.np, copy=False))
    return out


def _py_function_infer(inputs, func, tout, single):
    return [(TensorShape(None), dtype) for dtype in tout]


def _py_function_grad(op, *grads):
    """The gradient of a py_function: another py_function that runs `func` again under a
    tape (TensorFlow's py_function is differentiable the same way, once)."""
    from ..gradients.tape import GradientTape     # gradients import this module
    func, xs = op.attrs["func"], list(op.inputs)
    wrt = [i for i, x in enumerate(xs) if x.dtype.is_floating]
    diff = [k for k, t in enumerate(op.outputs) if t.dtype.is_floating]
    seeds = [g for k, g in enumerate(math_ops.fill_missing(op, grads)) if k in diff]
    if not wrt or not diff:
        return [None] * len(xs)

    def backward(*args):
        ins, dys = args[:len(xs)], args[len(xs):]
        with GradientTape() as tape:
            for i in wrt:
                tape.watch(ins[i])
            ys = func(*ins)
        ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
        got = tape.gradient([ys[k] for k in diff], [ins[i] for i in wrt],
                            output_gradients=list(dys))
        return [math_ops.multiply(ins[i], 0) if g is None else g for i, g in zip(wrt, got)]

    outs = py_function(backward, xs + seeds, [xs[i].dtype for i in wrt])
    result = [None] * len(xs)
    for i, g in zip(wrt, outs):
        result[i] = g
    return result


_PY_FUNCTION = registry.register("py_function", None, _py_function_infer, stateful=True,
                                 multi=True, grad=_py_function_grad, numpy=_py_function_kernel)


def py_function(func, inp, Tout, name=None):  # noqa: N803 - TensorFlow's name
    """Call the Python function `func` on eager tensors, also from inside a graph."""
    single = Tout is not None and not isinstance(Tout, (list, tuple))
    tout = () if Tout is None else tuple(dtypes.as_dtype(t) for t in
                                         ([Tout] if single else Tout))
    tensors = [convert_to_tensor(x) for x in inp]
    outs = apply(_PY_FUNCTION, tensors, {"func": func, "tout": tout, "single": single},
                 name or "py_function")
    if single:
        return outs[0]
    return outs if tout else None
