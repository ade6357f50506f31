"""Common-subexpression elimination: identical pure operations are computed once.

Two operations are identical when they have the same type, the same input
tensors, equal attributes and the same control inputs; equal small constants
count as identical too. Stateful ops, variable reads and ops owning sub-graphs
are never merged. The first of a group stays; the others' users read it.

    graph f(x: f32[]) {                          graph f(x: f32[]) {
      exp: f32[] = exp(x)                          exp: f32[] = exp(x)
      exp_1: f32[] = exp(x)                 ==>    add: f32[] = add(exp, exp)
      add: f32[] = add(exp, exp_1)                 return add
      return add                                 }
    }
"""
import numpy as np

from . import each_graph

__all__ = ["run"]

_MAX_CONST_BYTES = 1 << 16
_NEVER = frozenset({"placeholder", "capture", "no_op"})


def run(graph):
    return each_graph(graph, _merge)


def _merge(graph):
    seen = {}
    duplicates = []
    for op in graph.ops:
        key = _key(op)
        if key is None:
            continue
        first = seen.setdefault(key, op)
        if first is not op:
            graph.replace_op(op, first)
            duplicates.append(op)
    graph.remove_ops(duplicates)
    return bool(duplicates)


def _key(op):
    if op.type in _NEVER or op.stateful or op.effects()[0] or op.subgraphs():
        return None
    attrs = _attrs_key(op.attrs)
    if attrs is None:
        return None
    return (op.type, tuple(id(t) for t in op.inputs), attrs,
            tuple(id(c) for c in op.control_inputs))


def _attrs_key(attrs):
    try:
        return tuple(sorted((k, _value_key(v)) for k, v in attrs.items()))
    except _Unkeyable:
        return None


class _Unkeyable(Exception):
    pass


def _value_key(v):
    """A hashable key equal for equal attribute values (type included: 1 != 1.0 != True)."""
    if isinstance(v, np.ndarray):
        if v.nbytes > _MAX_CONST_BYTES or v.dtype.kind not in "biufc":
            raise _Unkeyable
        return ("array", v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, np.generic):
        return ("scalar", v.dtype.str, v.tobytes())
    if isinstance(v, (tuple, list)):
        return (type(v),) + tuple(_value_key(x) for x in v)
    if isinstance(v, float):                 # bits: -0.0 is not 0.0, nan equals nan
        return (float, v.hex())
    if isinstance(v, complex):
        return (complex, v.real.hex(), v.imag.hex())
    try:
        hash(v)
    except TypeError:
        raise _Unkeyable from None
    return (type(v), v)
