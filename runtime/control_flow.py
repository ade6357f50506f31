"""Functional control flow: `cond` and `while_loop` own their sub-graphs.

Eagerly (a Python bool or an eager tensor as the predicate) both are plain
Python. While tracing, each branch / the loop condition and body are traced
once into sub-graphs; tensors of enclosing graphs they use become captures,
fed by extra inputs of the `cond` / `while` operation. Outputs are checked:
same structure, same dtypes, and for loops, shapes within their invariants.
"""
import contextlib
import math
import sys
import threading
import weakref

import numpy as np

from . import config
from . import context
from . import dtypes
from . import nest
from . import traceback_utils
from .auto_control_deps import add_control_dependencies
from .errors import loop_limit_exceeded
from .executor import run_graph
from .graph import Graph, Operation
from .ops import array_ops
from .ops import logging_ops, math_ops
from .ops.math_ops import cast, weak_kind_of
from .ops import registry
from .ops.registry import apply, convert_to_tensor
from .shapes import TensorShape
from .tensor import EagerTensor, SymbolicTensor, Tensor
from .variables import Variable

__all__ = ["cond", "while_loop", "control_dependencies", "group", "no_op"]

_NUMBERS = (bool, int, float, complex, np.generic)


def _is_tensorlike(x):
    return isinstance(x, (Tensor, Variable))


def _describe(names, i, what="output"):
    """How errors call output i: its name quoted, a description (has spaces) as it is."""
    if names and i < len(names) and names[i]:
        return names[i] if " " in names[i] else f"'{names[i]}'"
    return f"{what} {i}"


# -- sub-graph tracing ---------------------------------------------------------------------

def _trace_subgraph(fn, name, inputs_specs=(), input_names=None, weak_kinds=None):
    """Trace fn(*placeholders) into a new sub-graph; returns (graph, result).

    `weak_kinds[i]` ('i', 'f', ...) marks placeholder i as standing for a Python number
    (weakly typed: a branch pairing it with a tensor of a wider dtype casts it).
    """
    graph = Graph(name=name, outer_graph=context.current_graph())
    with graph.as_default():
        phs = []
        for i, (shape, dtype) in enumerate(inputs_specs):
            attrs = {"shape": shape.dims, "dtype": dtype}
            if weak_kinds and weak_kinds[i]:
                attrs["weak_kind"] = weak_kinds[i]
            op = graph.create_op(registry.get("placeholder"), [], attrs,
                                 [(shape, dtype)],
                                 name=input_names[i] if input_names else f"arg{i}")
            op.outputs[0].weak = attrs.get("weak_kind")
            phs.append(op.outputs[0])
        graph.inputs = phs
        result = fn(*phs)
    return graph, result


def _finish_subgraph(graph, outputs):
    with graph.as_default():
        graph.outputs = [graph.capture(convert_to_tensor(t)) for t in outputs]
    add_control_dependencies(graph)


def _capture_inputs(graphs):
    """The union of the graphs' captured outer tensors and, per graph, indices into it."""
    union, index, maps = [], {}, []
    for g in graphs:
        m = []
        for outer, _ in g.captures:
            i = index.get(id(outer))
            if i is None:
                i = index[id(outer)] = len(union)
                union.append(outer)
            m.append(i)
        maps.append(tuple(m))
    return union, maps


# -- cond ----------------------------------------------------------------------------------

def _cond_kernel(xp, pred, *captures, then_graph, else_graph, then_map, else_map,
                 n_outputs=None):
    if pred:
        outputs = run_graph(then_graph, [captures[i] for i in then_map])
    else:
        outputs = run_graph(else_graph, [captures[i] for i in else_map])
    return outputs if n_outputs is None else outputs[:n_outputs]


def _cond_infer(inputs, then_graph, else_graph, then_map, else_map, n_outputs=None):
    return [(a.shape.most_specific_compatible_shape(b.shape), a.dtype)
            for a, b in zip(then_graph.outputs, else_graph.outputs)][:n_outputs]


_COND = registry.register("cond", _cond_kernel, _cond_infer, multi=True, container=True)


def _static_pred(pred):
    """A Python bool if `pred` is known without running a graph, else None."""
    if isinstance(pred, (bool, np.bool_)):
        return bool(pred)
    if isinstance(pred, EagerTensor):
        return bool(pred)
    if isinstance(pred, Variable) and context.executing_eagerly():
        return bool(pred)
    if not isinstance(pred, Tensor) and not isinstance(pred, Variable):
        return bool(pred)
    return None


def cond(pred, true_fn=None, false_fn=None, name=None):
    """`true_fn()` if pred else `false_fn()`; a graph `cond` op when pred is symbolic."""
    with _located("cond"):
        return cond_with_names(pred, true_fn, false_fn, name=name)


@contextlib.contextmanager
def _located(what):
    """Errors of the checks of `what` (messages starting "what:") name the user's line that
    called it (the compiler adds its own: this is for rt.cond / rt.while_loop called
    directly)."""
    try:
        yield
    except (TypeError, ValueError) as e:
        message = str(e)
        where = traceback_utils.at_user_line(3)
        if not message.startswith(f"{what}:") or not where or "\n  at " in message:
            raise
        located = type(e)(f"{message}{where}")
        raise located.with_traceback(e.__traceback__) from None


def cond_with_names(pred, true_fn, false_fn, names=None, name=None, missing=None):
    """`cond` whose error messages call the outputs by `names` (used by the compiler).

    `missing(value) -> bool` marks placeholder outputs (the compiler's undefined
    return value): one missing in a single branch takes zeros of the other
    branch's tensor (the program never reads it on that path); missing in both,
    it passes through.
    """
    if true_fn is None or false_fn is None:
        raise TypeError("cond needs both true_fn and false_fn")
    for what, fn in (("true_fn", true_fn), ("false_fn", false_fn)):
        if not callable(fn):
            raise TypeError(f"cond: {what} must be a callable (a function returning the "
                            f"branch's value), got {type(fn).__name__}")
    static = _static_pred(pred) if context.executing_eagerly() or not isinstance(
        pred, (Tensor, Variable)) else None
    if static is not None:
        return true_fn() if static else false_fn()
    pred = convert_to_tensor(pred)
    if not pred.dtype.is_bool or pred.shape.rank not in (0, None):
        raise TypeError(f"cond: the predicate must be a scalar bool tensor, got dtype "
                        f"{pred.dtype.name} and shape {pred.shape}")
    then_graph, then_result = _trace_subgraph(lambda: true_fn(), "then")
    else_graph, else_result = _trace_subgraph(lambda: false_fn(), "else")
    if missing is not None:
        then_result, else_result = _fill_missing(then_result, else_result, missing,
                                                 then_graph, else_graph)
    if not nest.same_structure(then_result, else_result):
        raise ValueError(
            f"cond: true_fn and false_fn must return the same structure, got "
            f"{nest.structure_str(then_result)} and {nest.structure_str(else_result)}"
            + _names_note(names))
    then_flat, else_flat = nest.flatten(then_result), nest.flatten(else_result)
    outputs_then, outputs_else, template, weak = [], [], [], []
    for i, (a, b) in enumerate(zip(then_flat, else_flat)):
        if _texts_differ(a, b):
            a_outs, b_outs, choices = _chosen_text_outputs(a, b, then_graph, else_graph)
            template.append(_Texts(len(outputs_then), len(a_outs), choices))
            outputs_then.extend(a_outs)
            outputs_else.extend(b_outs)
            weak.extend([None] * len(a_outs))
            continue
        kinds = (weak_kind_of(a), weak_kind_of(b))
        a, b = _unify_branch_values(a, b, then_graph, else_graph, _describe(names, i))
        if a is None and b is None:
            template.append(None)
            continue
        if not isinstance(a, Tensor):
            template.append(a)           # the same Python value from both branches
            continue
        template.append(nest.Slot(len(outputs_then)))
        outputs_then.append(a)
        outputs_else.append(b)
        weak.append(None if None in kinds else max(kinds, key=dtypes.KIND_ORDER.index))
    _finish_subgraph(then_graph, outputs_then)
    _finish_subgraph(else_graph, outputs_else)
    captures, (then_map, else_map) = _capture_inputs([then_graph, else_graph])
    outs = apply(_COND, [pred] + captures,
                 {"then_graph": then_graph, "else_graph": else_graph,
                  "then_map": then_map, "else_map": else_map}, name)
    for out, kind in zip(outs, weak):       # a Python number from both branches still is
        out.weak = kind
    flat = [leaf.value(outs) if isinstance(leaf, _Texts) else outs[leaf.index]
            if isinstance(leaf, nest.Slot) else leaf for leaf in template]
    return nest.pack_sequence_as(then_result, flat)


def _texts_differ(a, b):
    """Whether branch values `a` and `b` are strings (or f-strings of tensors, or strings
    an inner tensor condition chose) that differ: the cond outputs which one it took."""
    if not (_choosable(a) and _choosable(b)) or a is b:
        return False
    return not (type(a) is str and type(b) is str and a == b)


def _choosable(value):
    return type(value) is str or isinstance(value, logging_ops.FormattedString)


class _Texts:
    """Where a cond's outputs hold the string its branch gave: the index of its choice,
    then the tensors the choices format (each choice a string or a FormattedTemplate
    numbering them from 0, and how many it takes)."""

    __slots__ = ("start", "count", "choices")

    def __init__(self, start, count, choices):
        self.start, self.count, self.choices = start, count, choices

    def value(self, outs):
        tensors = outs[self.start + 1:self.start + self.count]
        texts, used = [], 0
        for choice, n in self.choices:
            texts.append(logging_ops.with_tensors(choice, tensors[used:used + n]))
            used += n
        return logging_ops.ChosenText(outs[self.start], texts)


def _chosen_text_outputs(a, b, then_graph, else_graph):
    """Each branch's outputs for a string chosen between `a` and `b`: the int32 index of
    its choice (a's choices first; an inner condition's choices are flattened in), then the
    tensors of every choice's f-string, zeros where the other branch's; and the choices."""
    def split(value, graph):
        choices = value.choices if isinstance(value, logging_ops.ChosenText) else (value,)
        with graph.as_default():
            parts = [logging_ops._split_tensors(choice) for choice in choices]
        return [(t, len(ts)) for t, ts in parts], [t for _, ts in parts for t in ts]

    def index(value, graph, offset):
        with graph.as_default():
            if not isinstance(value, logging_ops.ChosenText):
                return registry.constant(np.int32(offset))
            return math_ops.add(value.index, np.int32(offset)) if offset else value.index
    a_choices, a_tensors = split(a, then_graph)
    b_choices, b_tensors = split(b, else_graph)
    with else_graph.as_default():
        a_zeros = [_zeros_like_value(t) for t in a_tensors]
    with then_graph.as_default():
        b_zeros = [_zeros_like_value(t) for t in b_tensors]
    a_outs = [index(a, then_graph, 0)] + a_tensors + b_zeros
    b_outs = [index(b, else_graph, len(a_choices))] + a_zeros + b_tensors
    return a_outs, b_outs, a_choices + b_choices


def _names_note(names):
    return f" (outputs: {', '.join(names)})" if names else ""


def _fill_missing(a, b, missing, then_graph, else_graph):
    """Replace a missing value (or structure) of one branch by zeros shaped like the other's."""
    a_missing, b_missing = missing(a), missing(b)
    if a_missing and not b_missing:
        with then_graph.as_default():
            return nest.map_structure(_zeros_like_value, b), b
    if b_missing and not a_missing:
        with else_graph.as_default():
            return a, nest.map_structure(_zeros_like_value, a)
    if (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b)
            and not a_missing):
        pairs = [_fill_missing(x, y, missing, then_graph, else_graph) for x, y in zip(a, b)]
        return (nest._rebuild(a, [p[0] for p in pairs]),
                nest._rebuild(b, [p[1] for p in pairs]))
    return a, b


def _zeros_like_value(value):
    """A constant zero shaped like `value` (unknown dims become 0): never read."""
    if isinstance(value, (Tensor, Variable)) or isinstance(value, _NUMBERS):
        t = value if isinstance(value, Tensor) else convert_to_tensor(value)
        dims = [0 if d is None else d for d in (t.shape.dims or ())]
        return registry.constant(np.zeros(dims, t.dtype.np))
    return value


def _unify_branch_values(a, b, then_graph, else_graph, what):
    """Make a pair of branch outputs tensors of one dtype, or equal Python values.

    An operation (`rt.print(...)`, `rt.group(...)`) counts as None: it runs anyway.
    """
    a = None if isinstance(a, Operation) else a
    b = None if isinstance(b, Operation) else b
    if isinstance(a, Variable):
        with then_graph.as_default():
            a = a.read_value()
    if isinstance(b, Variable):
        with else_graph.as_default():
            b = b.read_value()
    a_t, b_t = isinstance(a, Tensor), isinstance(b, Tensor)
    if not a_t and not b_t:
        if a is None and b is None:
            return None, None
        if _values_equal(a, b):
            return a, b
        if not (isinstance(a, _NUMBERS) and isinstance(b, _NUMBERS)):
            raise ValueError(
                f"cond: {what} is {a!r} in the true branch and {b!r} in the false "
                f"branch; a value that differs between the branches of a tensor "
                f"condition must be a tensor (or number).")
        dtype = _join_python_dtypes(a, b)
        with then_graph.as_default():
            a = registry.constant(a, dtype)
        with else_graph.as_default():
            b = registry.constant(b, dtype)
        return a, b
    if a is None or b is None:
        raise ValueError(
            f"cond: {what} is {'None' if a is None else 'a tensor'} in the true branch but "
            f"{'None' if b is None else 'a tensor'} in the false branch")
    if not a_t:
        a = _python_to_branch_tensor(a, b.dtype, then_graph, what, "true")
    if not b_t:
        b = _python_to_branch_tensor(b, a.dtype, else_graph, what, "false")
    if a.dtype != b.dtype:
        # A loop variable that started as a Python number is weakly typed: the other
        # branch's dtype wins where weak typing allows (the loop then retraces with it).
        kind_a, kind_b = weak_kind_of(a), weak_kind_of(b)
        if kind_b and dtypes.weak_result(kind_b, a.dtype) == a.dtype:
            with else_graph.as_default():
                return a, cast(b, a.dtype)
        if kind_a and dtypes.weak_result(kind_a, b.dtype) == b.dtype:
            with then_graph.as_default():
                return cast(a, b.dtype), b
        raise TypeError(f"cond: {what} has dtype {a.dtype.name} in the true branch but "
                        f"{b.dtype.name} in the false branch")
    return a, b


def _values_equal(a, b):
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b) if not isinstance(a, np.ndarray) else np.array_equal(a, b)
    except Exception:  # noqa: BLE001 - objects with odd __eq__ count as different
        return a is b


def _join_python_dtypes(a, b):
    da = registry._infer_python_dtype(a) if not isinstance(a, np.generic) else \
        dtypes.as_dtype(np.asarray(a).dtype)
    db = registry._infer_python_dtype(b) if not isinstance(b, np.generic) else \
        dtypes.as_dtype(np.asarray(b).dtype)
    return dtypes.result_type(da, db) if da.np.kind == db.np.kind else (
        dtypes.float32 if {da.np.kind, db.np.kind} <= set("biuf") else dtypes.complex64)


def _python_to_branch_tensor(value, dtype, graph, what, branch):
    if not isinstance(value, _NUMBERS) and not isinstance(value, (list, tuple, np.ndarray)):
        raise ValueError(f"cond: {what} is {value!r} in the {branch} branch but a tensor in "
                         f"the other branch")
    kind = dtypes.weak_kind(value)
    target = dtypes.weak_result(kind, dtype) if kind is not None else dtype
    if target != dtype:
        raise TypeError(f"cond: {what} is the Python value {value!r} in the {branch} branch, "
                        f"which does not fit the dtype {dtype.name} of the other branch")
    with graph.as_default():
        return registry.constant(value, dtype)


# -- while_loop -----------------------------------------------------------------------------

def _while_kernel(xp, *args, n_vars, cond_graph, body_graph, cond_map, body_map,
                  maximum_iterations, stacks=None):
    values = list(args[:n_vars])
    rest = args[n_vars:]
    if maximum_iterations == "input":
        limit, rest = int(rest[-1]), rest[:-1]
    else:
        limit = maximum_iterations
    cond_caps = [rest[i] for i in cond_map]
    body_caps = [rest[i] for i in body_map]
    stacked = loop_collections(xp, body_graph, stacks or 0)
    guard = config.get_loop_iteration_limit()
    i = 0
    while limit is None or i < limit:
        if not run_graph(cond_graph, values + cond_caps)[0]:
            break
        if i == guard:
            raise loop_limit_exceeded(guard)     # the executor adds the op and its line
        outputs = run_graph(body_graph, values + body_caps)
        values = outputs[:n_vars]
        for stack, value in zip(stacked, outputs[n_vars:]):
            stack.append(value)
        i += 1
    if stacks is None:
        return values
    return values + collected_outputs(xp, body_graph, n_vars, stacked, i)


def _while_infer(inputs, n_vars, cond_graph, body_graph, stacks=None, **_):
    specs = [(t.shape, t.dtype) for t in body_graph.inputs]
    if stacks is not None:
        specs.append((TensorShape([]), dtypes.int32))
        for t in body_graph.outputs[n_vars:n_vars + stacks]:
            specs.extend(_stack_specs(t))
    return specs


_WHILE = registry.register("while", _while_kernel, _while_infer, multi=True, container=True)


def while_loop(cond, body, loop_vars, shape_invariants=None, maximum_iterations=None,
               name=None):
    """Repeat `loop_vars = body(*loop_vars)` while `cond(*loop_vars)`."""
    with _located("while_loop"):
        return while_loop_with_names(cond, body, loop_vars, shape_invariants,
                                     maximum_iterations, name=name)


def _is_symbolic_anywhere(values):
    return any(isinstance(v, SymbolicTensor) or (isinstance(v, Variable)
                                                 and not context.executing_eagerly())
               for v in nest.flatten(values))


def _eager_loop(cond, body, loop_vars, maximum_iterations):
    values = loop_vars
    single = not isinstance(loop_vars, (list, tuple))
    limit = None if maximum_iterations is None else int(maximum_iterations)
    guard = config.get_loop_iteration_limit()
    i = 0
    while limit is None or i < limit:
        if not (cond(values) if single else cond(*values)):
            break
        if i == guard:
            raise loop_limit_exceeded(guard, traceback_utils.user_frame())
        if single:
            values = body(values)
        else:
            result = body(*values)
            if not isinstance(result, (list, tuple)):
                result = [result]
            if len(result) != len(values):
                raise ValueError(f"while_loop: the body must return the structure of the "
                                 f"loop variables, {len(values)} values, got {len(result)}")
            values = type(loop_vars)(result) if type(loop_vars) in (list, tuple) else result
        i += 1
    return values


def while_loop_with_names(cond, body, loop_vars, shape_invariants=None,
                          maximum_iterations=None, names=None, name=None, adapt_numbers=False):
    """`while_loop` whose errors call the loop variables by `names` (used by the compiler).

    With `adapt_numbers`, a loop variable that starts as a Python number takes the
    dtype the body gives it when weak typing allows (`0` then `+ x_int64`: int64),
    as the same Python code does eagerly.
    """
    if not callable(cond) or not callable(body):
        raise TypeError("while_loop: cond and body must be callable")
    static_limit = (registry.constant_value(maximum_iterations)
                    if maximum_iterations is not None else None)
    if static_limit is not None and np.ndim(static_limit) == 0 and static_limit < 0:
        raise ValueError(f"while_loop: maximum_iterations must be >= 0, got "
                         f"{int(static_limit)}")
    if context.executing_eagerly():
        return _eager_loop(cond, body, loop_vars, maximum_iterations)
    single = not isinstance(loop_vars, (list, tuple))
    structure = [loop_vars] if single else list(loop_vars)
    flat_values = nest.flatten(structure)
    flat_init = [_loop_var_tensor(v, _describe(names, i, "loop variable"))
                 for i, v in enumerate(flat_values)]
    invariants = _invariants(shape_invariants, structure, flat_init, single, names)
    specs = [(shape, t.dtype) for shape, t in zip(invariants, flat_init)]
    weak = [weak_kind_of(v) for v in flat_values] if adapt_numbers else None
    traced = _trace_loop(cond, body, structure, single, specs, names, weak)
    retyped = _weak_retyping(traced, weak, specs) if adapt_numbers else None
    for _ in range(len(flat_values)):
        if not retyped:
            break
        # A Python number adapts to the dtype the body gives it (as `0 + x_int64` would):
        # start from that dtype and trace again, until no number changes (`a, b = b, b + x`
        # passes a dtype on one variable per trace).
        body_outputs = traced[2]
        for i, dtype in retyped.items():
            value = flat_values[i]
            flat_init[i] = (cast(value, dtype) if isinstance(value, Tensor)
                            else registry.constant(value, dtype))
            specs[i] = (specs[i][0], dtype)
            # still a number when the body keeps it one (`0` then `+ 0.5`), else a tensor
            weak[i] = getattr(body_outputs[i], "weak", None)
        traced = _trace_loop(cond, body, structure, single, specs, names, weak)
        retyped = _weak_retyping(traced, weak, specs)
    cond_graph, body_graph, outputs = traced
    _check_loop_outputs(outputs, specs, names)
    _finish_subgraph(body_graph, outputs)
    captures, (cond_map, body_map) = _capture_inputs([cond_graph, body_graph])
    inputs = flat_init + captures
    attrs = {"n_vars": len(flat_init), "cond_graph": cond_graph, "body_graph": body_graph,
             "cond_map": cond_map, "body_map": body_map, "maximum_iterations": None}
    if maximum_iterations is not None:
        static = registry.constant_value(maximum_iterations)
        if static is not None:
            attrs["maximum_iterations"] = int(static)
        else:
            attrs["maximum_iterations"] = "input"
            inputs.append(convert_to_tensor(maximum_iterations))
    outs = apply(_WHILE, inputs, attrs, name)
    if weak:
        # A variable that stands for a Python number through every iteration still does.
        for i, (kind, t) in enumerate(zip(weak, outputs)):
            if kind is not None and getattr(t, "weak", None) is not None:
                outs[i].weak = max(kind, t.weak, key=dtypes.KIND_ORDER.index)
    result = nest.pack_sequence_as(structure, outs)
    return result[0] if single else (tuple(result) if isinstance(loop_vars, tuple) else result)


def _trace_loop(cond, body, structure, single, specs, names, weak_kinds=None):
    """Trace cond and body on placeholders of `specs`; (cond graph, body graph, outputs)."""
    def call_with(fn):
        def traced(*phs):
            packed = nest.pack_sequence_as(structure, list(phs))
            return fn(*packed)
        return traced

    arg_names = _placeholder_names(names, len(specs))
    cond_graph, cond_result = _trace_subgraph(call_with(cond), "while_cond", specs, arg_names,
                                              weak_kinds)
    cond_result = _loop_condition(cond_result, cond_graph)
    _finish_subgraph(cond_graph, [cond_result])
    body_graph, body_result = _trace_subgraph(call_with(body), "while_body", specs, arg_names,
                                              weak_kinds)
    if single or not isinstance(body_result, (list, tuple)):
        body_result = [body_result]
    if not nest.same_structure(_as_lists(structure), _as_lists(list(body_result))):
        changed = [k for k, (a, b) in enumerate(zip(structure, body_result))
                   if not nest.same_structure(_as_lists(a), _as_lists(b))]
        if names and len(names) == len(structure) == len(body_result) and changed:
            k = changed[0]
            raise ValueError(
                f"while_loop: {_describe(names, k, 'loop variable')} is "
                f"{nest.structure_str(structure[k])} before the loop but "
                f"{nest.structure_str(body_result[k])} after an iteration; a loop variable "
                f"must keep its structure (the same nesting of lists, tuples and dicts, "
                f"with tensors at the same places)")
        raise ValueError(
            f"while_loop: the body must return the structure of the loop variables "
            f"{nest.structure_str(structure)}, got {nest.structure_str(body_result)}"
            + _names_note(names))
    with body_graph.as_default():
        outputs = [_body_output(value, dtype, _describe(names, i, "loop variable"))
                   for i, (value, (_, dtype)) in enumerate(
                       zip(nest.flatten(list(body_result)), specs))]
    return cond_graph, body_graph, outputs


def _placeholder_names(names, n):
    """Identifier-like names for loop-variable placeholders (arg<i> when unnamed)."""
    out = []
    for i in range(n):
        name = names[i] if names and i < len(names) and names[i] else ""
        name = "".join(c if c.isalnum() or c == "_" else "_" for c in name).strip("_")
        out.append(name or f"arg{i}")
    return out


def _weak_retyping(traced, weak, specs):
    """{index: dtype} for loop variables standing for Python numbers (`weak`: their kinds)
    whose body output has the dtype weak typing gives them (e.g. 0 then int64): they start
    with that dtype; or whose body output is a tensor of their own dtype (a Python float
    kept at float64 plus a float64 tensor): they are that tensor from the second iteration
    on, traced as one."""
    _, _, outputs = traced
    retyped = {}
    for i, (kind, t, (_, dtype)) in enumerate(zip(weak, outputs, specs)):
        if kind is None:
            continue
        if t.dtype == dtype:
            if dtype == dtypes.float64 and getattr(t, "weak", None) is None:
                retyped[i] = dtype
            continue
        if dtypes.weak_result(kind, t.dtype) == t.dtype:
            retyped[i] = t.dtype
    return retyped


def _check_loop_outputs(outputs, specs, names):
    for i, (t, (shape, dtype)) in enumerate(zip(outputs, specs)):
        what = _describe(names, i, "loop variable")
        if t.dtype != dtype:
            raise TypeError(
                f"while_loop: {what} has dtype {dtype.name} before the loop but "
                f"{t.dtype.name} after an iteration; a loop variable must keep its dtype "
                f"(cast it before the loop or inside the body).")
        if not t.shape.is_subshape_of(shape):
            raise ValueError(
                f"while_loop: {what} has shape {shape} before the loop but {t.shape} "
                f"after an iteration. Give it a shape invariant with unknown (None) "
                f"dimensions: shape_invariants= in rt.while_loop, or "
                f"autograph.set_loop_options(shape_invariants=[(var, shape)]) as the "
                f"first statement of the loop body.")


def _as_lists(x):
    """Structure with tuples and lists made alike (a body may return either)."""
    if isinstance(x, (list, tuple)) and not nest.is_namedtuple(x):
        return [_as_lists(v) for v in x]
    if isinstance(x, dict):
        return {k: _as_lists(v) for k, v in x.items()}
    return x


def _loop_var_tensor(value, what):
    if isinstance(value, Variable):
        return value.read_value()
    if isinstance(value, Tensor):
        return value
    if isinstance(value, _NUMBERS) or isinstance(value, (np.ndarray, list)):
        return convert_to_tensor(value)
    raise TypeError(f"while_loop: {what} is {value!r} of type {type(value).__name__}; loop "
                    f"variables of a graph loop must be tensors or numbers")


def _body_output(value, dtype, what):
    if isinstance(value, Variable):
        return value.read_value()
    if isinstance(value, Tensor):
        kind = getattr(value, "weak", None)     # standing for a Python number: adapts
        if kind is not None and value.dtype != dtype and \
                dtypes.weak_result(kind, dtype) == dtype:
            return cast(value, dtype)
        return value
    if isinstance(value, _NUMBERS):
        kind = dtypes.weak_kind(value) if not isinstance(value, np.generic) else None
        if kind is not None and dtypes.weak_result(kind, dtype) == dtype:
            return registry.constant(value, dtype)
        return convert_to_tensor(value)
    raise TypeError(f"while_loop: the body returned {value!r} for {what}; expected a tensor")


def _loop_condition(result, graph):
    with graph.as_default():
        if isinstance(result, (bool, np.bool_)):
            result = registry.constant(bool(result))
        t = convert_to_tensor(result)
    if not t.dtype.is_bool or t.shape.rank not in (0, None):
        raise TypeError(f"while_loop: cond must return a scalar bool, got dtype "
                        f"{t.dtype.name} and shape {t.shape}")
    return t


def _invariants(shape_invariants, structure, flat_init, single, names):
    if shape_invariants is None:
        return [t.shape for t in flat_init]
    inv_structure = [shape_invariants] if single else list(shape_invariants)
    flat = []

    def leaves(x):
        if x is None or isinstance(x, TensorShape):
            flat.append(x)
        elif isinstance(x, (list, tuple)) and all(
                d is None or isinstance(d, (int, np.integer)) for d in x):
            flat.append(TensorShape(x))
        elif nest.is_nested(x):
            for v in nest._children(x):
                leaves(v)
        else:
            flat.append(TensorShape(x))
    leaves(inv_structure)
    if len(flat) != len(flat_init):
        raise ValueError(f"while_loop: {len(flat)} shape invariants for {len(flat_init)} "
                         f"loop variables")
    out = []
    for i, (inv, t) in enumerate(zip(flat, flat_init)):
        if inv is None:
            out.append(t.shape)
            continue
        if not t.shape.is_subshape_of(inv):
            raise ValueError(f"while_loop: the shape invariant {inv} of "
                             f"{_describe(names, i, 'loop variable')} does not hold for its "
                             f"initial shape {t.shape}")
        out.append(inv)
    return out


# -- what gradients need: forward values of sub-graphs as extra outputs ------------------------
# A gradient of a cond or while op needs values computed inside its sub-graphs. It asks
# for them here: the value becomes one more output of the sub-graph (so graph copies and
# passes keep it) and the op gains an output. A cond's other branch outputs zeros in its
# place (never read). A loop's body outputs beyond its loop variables are collected at
# every iteration: the loop also outputs its trip count and, per collected tensor, the
# values packed as (1-D values, index rows [offset, *shape]), so shapes may change from
# one iteration to the next; `stack_get` reads iteration i back (its gradient, `stack_put`,
# writes one back into zeros of that layout). The op's attributes
# count its outputs (`n_outputs`, `stacks`), as copies of an op share sub-graphs.


def _add_output(op, shape, dtype):
    op.outputs = op.outputs + (SymbolicTensor(op, len(op.outputs), shape, dtype),)
    op.graph._plans.clear()


def _add_subgraph_output(graph, tensor):
    graph.outputs = list(graph.outputs) + [tensor]
    graph._plans.clear()
    return len(graph.outputs) - 1


def expose_branch_value(op, side, tensor):
    """The output of cond `op` giving `tensor` of its "then" or "else" branch."""
    mine = op.attrs[f"{side}_graph"]
    other = op.attrs["else_graph" if side == "then" else "then_graph"]
    k = next((k for k, t in enumerate(mine.outputs) if t is tensor), None)
    if k is None:
        with other.as_default():
            dims = None if tensor.shape.rank is None else [d or 0 for d in tensor.shape.dims]
            unused = registry.constant(np.zeros(dims or [0], tensor.dtype.np)) if dims is None \
                else array_ops.zeros(dims, tensor.dtype)
        _add_subgraph_output(other, unused)
        k = _add_subgraph_output(mine, tensor)
    pairs = list(zip(op.attrs["then_graph"].outputs, op.attrs["else_graph"].outputs))
    while len(op.outputs) <= k:
        a, b = pairs[len(op.outputs)]
        _add_output(op, a.shape.most_specific_compatible_shape(b.shape), a.dtype)
    op.attrs = dict(op.attrs, n_outputs=len(op.outputs))
    return op.outputs[k]


def loop_trip_count(op):
    """The output of while `op` counting its iterations (added once)."""
    if op.attrs.get("stacks") is None:
        op.attrs = dict(op.attrs, stacks=0)
        _add_output(op, TensorShape([]), dtypes.int32)
    return op.outputs[op.attrs["n_vars"]]


def loop_stack(op, tensor):
    """The outputs (values, index) of while `op` holding body `tensor` at every iteration."""
    loop_trip_count(op)
    n, body = op.attrs["n_vars"], op.attrs["body_graph"]
    k = next((k for k, t in enumerate(body.outputs[n:]) if t is tensor), None)
    if k is None:
        k = _add_subgraph_output(body, tensor) - n
    while op.attrs["stacks"] <= k:
        for shape, dtype in _stack_specs(body.outputs[n + op.attrs["stacks"]]):
            _add_output(op, shape, dtype)
        op.attrs = dict(op.attrs, stacks=op.attrs["stacks"] + 1)
    return op.outputs[n + 1 + 2 * k], op.outputs[n + 2 + 2 * k]


def stack_position(op, tensor):
    """Where the outputs (values, index) of while `op` stacking body `tensor` start, or
    None when it is not stacked."""
    n, body = op.attrs["n_vars"], op.attrs["body_graph"]
    k = next((k for k, t in enumerate(body.outputs[n:]) if t is tensor), None)
    if k is None or k >= (op.attrs.get("stacks") or 0):
        return None
    return n + 1 + 2 * k


def _stack_specs(t):
    rank = t.shape.rank
    return [(TensorShape([None]), t.dtype),
            (TensorShape([None, None if rank is None else rank + 1]), dtypes.int64)]


class _Spares:
    """The buffers a loop's collections were packed into, kept with its body graph for its
    next runs. A fresh buffer's pages are zeroed by the kernel as they are first written (for
    a loop gradient's tens of MB, a third of the run), and whether malloc keeps freed memory
    warm for the next run hangs on its trim thresholds; a buffer kept here is reused once
    nothing but this list refers to it (the values packed into it, and every view of them,
    are gone). At most `keep` unused ones stay after a run: one per collection."""

    __slots__ = ("buffers", "lock", "__weakref__")

    SMALLEST = 1 << 18        # bytes: smaller buffers come warm from malloc anyway

    def __init__(self):
        self.buffers, self.lock = [], threading.Lock()
        _ALL_SPARES.add(self)

    def take(self, size, dtype):
        """An unused buffer of `dtype` holding `size` to twice `size` elements, or a new one
        (kept when it is big enough to be worth it)."""
        buffers = self.buffers
        with self.lock:
            best = None
            for k in range(len(buffers)):
                if (buffers[k].dtype == dtype and size <= buffers[k].size <= 2 * size
                        and _unused(buffers, k)
                        and (best is None or buffers[k].size < buffers[best].size)):
                    best = k
            if best is not None:
                return buffers[best]
            buffer = np.empty(size, dtype)
            if buffer.nbytes >= self.SMALLEST:
                buffers.append(buffer)
            return buffer

    def clear(self):
        with self.lock:
            self.buffers.clear()

    def trim(self, keep):
        """Drop unused buffers but the `keep` largest."""
        buffers = self.buffers
        with self.lock:
            unused = sorted((k for k in range(len(buffers)) if _unused(buffers, k)),
                            key=lambda k: buffers[k].nbytes, reverse=True)
            for k in sorted(unused[keep:], reverse=True):
                del buffers[k]


_ALL_SPARES = weakref.WeakSet()


def release_buffers():
    """Drop the buffers every loop keeps for its next run (`rt.config.release_buffers`)."""
    for spares in list(_ALL_SPARES):
        spares.clear()


def _unused(buffers, k):
    """Whether the list `buffers` holds the only reference to its k-th array (the other one
    counted is getrefcount's argument)."""
    return sys.getrefcount(buffers[k]) == 2


class _Collection:
    """A loop's values of one body tensor, packed as they come: each iteration's array is
    raveled into one buffer, so the collection is held once, not as a list of arrays and
    then their concatenation. The buffer starts at the size the loop's last run needed
    (`hint`) and grows by a quarter when that is too little (numpy's realloc may copy it);
    `pack(t)` trims it and gives (values, index rows [offset, *shape]). Arrays of another
    device are kept as a list and joined there by `pack` (`xp`, the loop's namespace).

    A value may be computed into the buffer in the first place: `slot` lends the part of
    the buffer the next value appended will occupy, and appending that very array then
    copies nothing. (A value lent and kept beyond the loop, as its final loop variable,
    is copied out by `own`, so that it does not hold the buffer.)"""

    __slots__ = ("buffer", "size", "rows", "arrays", "hint", "xp", "lent", "lenders", "spares")

    def __init__(self, xp, hint=0, spares=None):
        self.buffer, self.size, self.rows, self.hint, self.xp = None, 0, [], hint, xp
        self.spares = spares          # the loop's _Spares (buffers kept from its last runs)
        self.arrays = None            # values of other kinds (strings): joined at the end
        self.lent = {}                # offset -> the view lent there, not appended yet
        self.lenders = set()          # ids of the buffers views were lent from

    def append(self, value):
        if self.lent and self.lent.pop(self.size, None) is value:
            self.rows.append((self.size,) + value.shape)
            self.size += value.size
            return
        if self.xp is not np:
            self.rows.append((self.size,) + tuple(value.shape))
            if self.arrays is None:
                self.arrays = []
            self.arrays.append(self.xp.reshape(value, (-1,)))
            self.size += math.prod(value.shape)
            return
        value = np.asarray(value)
        self.rows.append((self.size,) + value.shape)
        if self.arrays is None and value.dtype.kind in "biufc" and (
                self.buffer is None or value.dtype == self.buffer.dtype):
            end = self.size + value.size
            if self.buffer is None:
                self.buffer = self._new(max(end, self.hint, 1), value.dtype)
            elif end > self.buffer.size:
                self._grow(end, value.size)
            self.buffer[self.size:end] = value.ravel()
            self.size = end
            return
        if self.arrays is None:
            self.arrays = [] if self.buffer is None else [self.buffer[:self.size]]
        self.arrays.append(value.ravel())
        self.size += value.size

    def _new(self, size, dtype):
        return np.empty(size, dtype) if self.spares is None else self.spares.take(size, dtype)

    def _grow(self, end, step):
        size = end + max(self.buffer.size >> 2, step)
        if id(self.buffer) not in self.lenders and self.spares is None:
            self.buffer.resize(size, refcheck=False)
            return
        buffer = self._new(size, self.buffer.dtype)     # (views lent keep the old one)
        buffer[:self.size] = self.buffer[:self.size]
        self.buffer = buffer
        self.lent.clear()

    def slot(self, dtype, shape):
        """An array of `shape` and `dtype` to compute a value into: the part of the buffer
        the next value appended will occupy, or a new array."""
        if self.xp is not np or self.arrays is not None or (
                self.buffer is not None and self.buffer.dtype != dtype):
            return np.empty(shape, dtype)
        start = self.size
        end = start + math.prod(shape)
        if self.buffer is None:
            self.buffer = self._new(max(end, self.hint, 1), dtype)
        elif end > self.buffer.size:
            self._grow(end, end - self.size)
        self.lenders.add(id(self.buffer))
        view = self.lent[start] = self.buffer[start:end].reshape(shape)
        return view

    def own(self, value):
        """`value`, copied if it is a view of a buffer this collection lent from (or of an
        array at the address of one that died since: an id is all this keeps)."""
        base = getattr(value, "base", None)
        if base is not None and id(base) in self.lenders:
            return value.copy()
        return value

    def pack(self, t):
        xp, rank = self.xp, t.shape.rank or 0
        if not self.rows:
            return (xp.zeros((0,), dtype=t.dtype.of(xp)),
                    xp.zeros((0, rank + 1), dtype=xp.int64))
        index = np.array(self.rows, np.int64).reshape(len(self.rows), -1)
        if xp is not np:
            return xp.concat(self.arrays), xp.asarray(index, copy=True)
        if self.arrays is not None:
            return np.concatenate(self.arrays), index
        if self.spares is not None:
            return self.buffer[:self.size], index
        self.buffer.resize(self.size, refcheck=False)    # (views lent are dead by now)
        return self.buffer, index


def loop_collections(xp, body_graph, count):
    """Empty collections for a run of the loop with body `body_graph`, sized as the last
    run's were (kept with the graph's compiled forms, dropped when it changes)."""
    hints = body_graph._plans.get("collection sizes") or ()
    spares = _loop_spares(body_graph) if xp is np and _SPARES_WORK else None
    return [_Collection(xp, hints[k] if k < len(hints) else 0, spares) for k in range(count)]


# (an array's reference count tells whether it is in use on CPython with a GIL)
_SPARES_WORK = sys.implementation.name == "cpython" and getattr(
    sys, "_is_gil_enabled", lambda: True)()


def _loop_spares(body_graph):
    spares = body_graph._plans.get("collection buffers")
    if spares is None:
        spares = body_graph._plans.setdefault("collection buffers", _Spares())
    return spares


def collected_outputs(xp, body_graph, n_vars, stacked, trips):
    """The outputs a collecting loop gives after its loop variables: its trip count, then
    each collection's (values, index); the sizes are remembered for the next run."""
    body_graph._plans["collection sizes"] = [c.size for c in stacked]
    if stacked and stacked[0].spares is not None:
        stacked[0].spares.trim(len(stacked))
    return [xp.asarray(trips, dtype=xp.int32)] + [
        part for stack, t in zip(stacked, body_graph.outputs[n_vars:]) for part in stack.pack(t)]


def _stack_get_kernel(xp, values, index, i, shape):
    row = index[int(i), ...]
    start, *dims = (int(row[k]) for k in range(row.shape[0]))
    return xp.reshape(values[start:start + math.prod(dims)], tuple(dims))


def _numpy_stack_get(values, index, i, shape):
    start, *dims = index[int(i)].tolist()
    return values[start:start + math.prod(dims)].reshape(dims)


def _stack_get_infer(inputs, shape):
    return [(TensorShape(shape), inputs[0].dtype)]


def _stack_put_kernel(xp, values, index, i, grad):
    """Zeros shaped like the packed `values`, with `grad` as iteration i's value."""
    out = xp.zeros_like(values)
    start = int(index[int(i), 0])
    out[start:start + math.prod(grad.shape)] = xp.reshape(grad, (-1,))
    return out


def _stack_put_infer(inputs):
    return [(inputs[0].shape, inputs[0].dtype)]


def _stack_put_grad(op, grad):
    return [None, None, None, stack_get(grad, op.inputs[1], op.inputs[2], op.inputs[3])]


_STACK_PUT = registry.register("stack_put", _stack_put_kernel, _stack_put_infer,
                               grad=_stack_put_grad, fresh=True)


def _stack_get_grad(op, grad):
    values, index, i = op.inputs
    return [apply(_STACK_PUT, [values, index, i, grad], {}), None, None]


def _stack_get_lower(op, src):
    """values[start:start + size].reshape(dims), from index row i (checked: a fault)."""
    row = src.checked_index(src.value(2), src.value(1), 0)
    start = f"{src.value(1)}[{row}, 0]"
    dims = [str(d) if d is not None else f"{src.value(1)}[{row}, {k + 1}]"
            for k, d in enumerate(op.attrs["shape"])]
    if not dims:
        return f"{src.value(0)}[{start}]"
    size = " * ".join(dims)
    return f"{src.value(0)}[{start}:{start} + {size}].reshape(({', '.join(dims)},))"


_STACK_GET = registry.register("stack_get", _stack_get_kernel, _stack_get_infer,
                               grad=_stack_get_grad, numpy=_numpy_stack_get,
                               lower=_stack_get_lower)


def stack_get(values, index, i, like):
    """Iteration `i`'s value of a loop stack (values, index) of body tensor `like`."""
    dims = None if like.shape.rank is None else tuple(like.shape.dims)
    return apply(_STACK_GET, [values, index, i], {"shape": dims})


# -- control dependencies -------------------------------------------------------------------

def _as_ops(items):
    ops = []
    for item in nest.flatten(list(items)):
        if item is None or isinstance(item, (EagerTensor, Variable)):
            continue
        if isinstance(item, SymbolicTensor):
            ops.append(item.op)
        elif isinstance(item, Operation):
            ops.append(item)
        else:
            raise TypeError(f"control_dependencies: expected operations or tensors, got "
                            f"{item!r}")
    return ops


def control_dependencies(control_inputs):
    """Ops created inside the `with` block run after `control_inputs` (graphs only)."""
    graph = context.current_graph()
    if graph is None:
        return contextlib.nullcontext()
    return graph.control_dependencies(None if control_inputs is None
                                      else _as_ops(control_inputs))


def no_op(name=None):
    """An operation that does nothing (a place to hang control dependencies)."""
    return apply(registry.get("no_op"), [], {}, name)


def group(*inputs, name=None):
    """One operation that runs after all of `inputs` (None when executing eagerly)."""
    if context.executing_eagerly():
        return None
    graph = context.current_graph()
    with graph.control_dependencies(_as_ops(inputs)):
        return no_op(name=name or "group")
