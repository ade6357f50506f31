"""Common-subexpression elimination: identical pure operations are computed once.

Two operations are identical when they have the same type, the same input
tensors, equal attributes, the same control inputs and the same device; equal small constants
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

from . import each_graph, rename_inputs

__all__ = ["run"]

_MAX_CONST_BYTES = 1 << 16
_NEVER = frozenset({"placeholder", "capture", "no_op"})


def run(graph):
    return each_graph(graph, _merge)


def _merge(graph):
    """One sweep in graph order: each op, its inputs already renamed to the ops kept, is
    looked up by its key among those seen before it (hash-consing)."""
    seen = {}
    merged = {}                  # duplicate op -> the first op of its key (in merge order)
    renamed = {}                 # duplicate's output -> the first's
    order = {}                   # duplicate op -> when it merged
    for op in graph.ops:
        rename_inputs(op, renamed)
        if merged and op.control_inputs:
            _rename_control_inputs(op, merged, order)
        key = _key(op)
        if key is None:
            continue
        first = seen.setdefault(key, op)
        if first is not op:
            merged[op] = first
            order[op] = len(order)
            renamed.update(zip(op.outputs, first.outputs))
    if not merged:
        return False
    graph.control_outputs = [merged.get(c, c) for c in graph.control_outputs]
    graph.ops = [op for op in graph.ops if op not in merged]
    for op in merged:
        graph.forget_name(op)
    graph.finish_renaming(renamed)
    return True


def _rename_control_inputs(op, merged, order):
    """A control input merged away becomes the op it merged into, which goes last (in the
    order the merges happened)."""
    gone = [c for c in op.control_inputs if c in merged]
    if not gone:
        return
    controls = [c for c in op.control_inputs if c not in merged]
    for c in sorted(gone, key=order.__getitem__):
        first = merged[c]
        if first is not op and first not in controls:
            controls.append(first)
    op.control_inputs = controls


def _key(op):
    if op.type in _NEVER:
        return None
    reads, _, stateful = op.effects()
    if stateful or reads or op.subgraphs():
        return None
    attrs = _attrs_key(op.attrs)
    if attrs is None:
        return None
    return (op.type, tuple(map(id, op.inputs)), attrs,
            tuple(map(id, op.control_inputs)) if op.control_inputs else (), op.device)


def _attrs_key(attrs):
    if not attrs:
        return ()
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
