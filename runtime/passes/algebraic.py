"""Algebraic simplification: rewrite operations that cannot change their input.

Only rewrites that give the same bits: `x*1`, `x/1`, `x-0` and `x+0` (integers;
for floats only `x + -0.0`, since `-0.0 + 0.0` is `+0.0`) when broadcasting
changes neither shape nor dtype; `-(-x)`; `not not b`; `identity(x)`;
`stop_gradient(x)` (graphs run forward only: gradients were built while tracing);
a transpose of a transpose becomes one transpose (or none); a reshape of a
reshape becomes one reshape, and a reshape to the shape `x` already has, none.

    graph f(x: f32[2,3]) {                         graph f(x: f32[2,3]) {
      const: f32[] = const[value=1.]()               neg: f32[2,3] = negative(x)
      mul: f32[2,3] = multiply(x, const)     ==>     return neg
      neg: f32[2,3] = negative(mul)                }
      t: f32[3,2] = transpose[perm=None](neg)
      t_1: f32[2,3] = transpose[perm=None](t)
      return t_1
    }
"""
import numpy as np

from . import each_graph, rename_inputs

__all__ = ["run"]


def run(graph):
    return each_graph(graph, _simplify_graph)


def _simplify_graph(graph):
    """One sweep in graph order; an op whose value is an existing tensor is read as that
    tensor by the ops after it (pruning drops the op)."""
    changed = False
    renamed = {}
    for op in graph.ops:
        rename_inputs(op, renamed)
        rule = _RULES.get(op.type)
        if rule is None or op.control_inputs:
            continue
        result = rule(op)
        if result is True:                  # rewritten in place
            changed = True
        elif result is not None:            # the op's value is this existing tensor
            renamed[op.outputs[0]] = result
            changed = True
    if changed:
        graph.finish_renaming(renamed)
    return changed


# -- helpers ----------------------------------------------------------------------------

def _const(t):
    return t.op.attrs["value"] if t.op.type == "const" else None


def _same_type(t, out):
    """Is `t` interchangeable with `out`: same dtype, and a shape broadcasting kept?"""
    return t.dtype == out.dtype and (
        t.shape.is_fully_defined() and t.shape == out.shape or t is out)


def _other_if_const(op, test):
    """The non-constant operand x of a binary op whose other operand c passes test(c),
    when x op c has x's shape and dtype (c broadcasts into x without changing it)."""
    out = op.outputs[0]
    a, b = op.inputs
    for x, c_tensor, c_first in ((a, b, False), (b, a, True)):
        c = _const(c_tensor)
        if c is None or not test(c, c_first, x):
            continue
        keeps_shape = (c.size == 1 and x.shape.rank is not None and c.ndim <= x.shape.rank
                       and x.shape == out.shape)
        if x.dtype == out.dtype and (keeps_shape or _same_type(x, out)):
            return x
    return None


def _all(c, value):
    if c.size == 1 and c.dtype.kind in "biufc":
        return c.item() == value            # a scalar: no array comparison (same answer)
    return c.size > 0 and bool(np.all(c == value))


# -- rules ------------------------------------------------------------------------------

def _multiply(op):
    return _other_if_const(op, lambda c, first, x: _all(c, 1))


def _divide(op):
    return _other_if_const(op, lambda c, first, x: not first and _all(c, 1))


def _is_zero_keeping(c, x):
    """x + c == x bit for bit: any zero for integers, only -0.0 for floats."""
    if not _all(c, 0):
        return False
    if c.dtype.kind in "fc" or x.dtype.np.kind in "fc":
        return c.dtype.kind == "f" and bool(np.all(np.signbit(c)))
    return c.dtype.kind in "iu"


def _add(op):
    return _other_if_const(op, lambda c, first, x: _is_zero_keeping(c, x))


def _subtract(op):
    # x - 0.0 keeps -0.0 (x - -0.0 would not); integers: any zero.
    return _other_if_const(op, lambda c, first, x: not first and _all(c, 0) and (
        c.dtype.kind in "iu" or c.dtype.kind == "f" and not np.any(np.signbit(c))))


def _involution(op):
    """f(f(x)) == x for negative and logical_not."""
    inner = op.inputs[0].op
    if inner.type == op.type and not inner.control_inputs:
        x = inner.inputs[0]
        if x.dtype == op.outputs[0].dtype:         # not (not 2) is a bool, not 2
            return x
    return None


def _pass_through(op):
    return op.inputs[0]


def _perm(perm, rank):
    return tuple(range(rank))[::-1] if perm is None else tuple(perm)


def _transpose(op):
    inner = op.inputs[0].op
    x = inner.inputs[0] if inner.type == "transpose" else None
    rank = op.outputs[0].shape.rank
    if x is None or rank is None or inner.control_inputs:
        return None
    p1, p2 = _perm(inner.attrs["perm"], rank), _perm(op.attrs["perm"], rank)
    combined = tuple(p1[i] for i in p2)
    if combined == tuple(range(rank)):
        return x
    op.inputs = [x]
    op.attrs = {**op.attrs, "perm": combined}
    return True


def _reshape(op):
    out = op.outputs[0]
    x = op.inputs[0]
    if len(op.inputs) != 1:                  # a shape computed at run time
        return None
    if out.shape.is_fully_defined() and x.shape == out.shape:
        return x
    inner = x.op
    if inner.type == "reshape" and not inner.control_inputs:
        op.inputs = [inner.inputs[0]]
        if inner.inputs[0].shape.is_fully_defined() and inner.inputs[0].shape == out.shape:
            return inner.inputs[0]
        return True
    return None


_RULES = {
    "multiply": _multiply, "divide": _divide, "add": _add, "subtract": _subtract,
    "negative": _involution, "logical_not": _involution,
    "identity": _pass_through, "stop_gradient": _pass_through,
    "transpose": _transpose, "reshape": _reshape,
}
