"""Constant folding: an op whose inputs are all constants runs once, while optimizing.

Its outputs become `const` ops (same name, same source line). Stateful ops,
variable reads and ops owning sub-graphs never fold; neither does an op whose
kernel fails or warns on these inputs (it fails at run time, as it would have,
and only if it runs), nor one whose result is large (over `MAX_BYTES`: a big
constant costs memory for as long as the graph lives). A constant fed into a
cond branch, loop body or called function becomes a constant inside it, so
folding continues there.

    graph f(x: f32[]) {                          graph f(x: f32[]) {
      const: f32[] = const[value=2.]()             mul: f32[] = const[value=6.]()
      const_1: f32[] = const[value=3.]()   ==>     add: f32[] = add(x, mul)
      mul: f32[] = multiply(const, const_1)        return add
      add: f32[] = add(x, mul)                   }
      return add
    }
"""
import warnings

import numpy as np

from ..dtypes import as_dtype
from ..ops import registry
from ..shapes import TensorShape
from . import each_graph, subgraph_feeds

__all__ = ["run", "MAX_BYTES"]

MAX_BYTES = 1 << 20
_NEVER = frozenset({"const", "placeholder", "capture", "no_op"})


def run(graph):
    return each_graph(graph, _fold_into_subgraphs) | each_graph(graph, _fold)


def _is_const(t):
    return t.op.type == "const"


def _foldable(op):
    return (op.type not in _NEVER and op.outputs and not op.stateful and not op.effects()[0]
            and not op.subgraphs() and all(_is_const(t) for t in op.inputs))


def _evaluate(op):
    """The op's output arrays, or None when it fails, warns or gives something unexpected."""
    values = [t.op.attrs["value"] for t in op.inputs]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with np.errstate(all="raise"):
                result = op.opdef.kernel(*values, **op.attrs)
    except Exception:  # noqa: BLE001 - left to fail at run time, naming its line
        return None
    results = list(result) if op.opdef.multi else [result]
    if len(results) != len(op.outputs):
        return None
    arrays = [r if type(r) is np.ndarray else np.asarray(r) for r in results]
    for a, t in zip(arrays, op.outputs):
        if a.dtype != t.dtype.np or not t.shape.is_compatible_with(a.shape):
            return None
    if sum(a.nbytes for a in arrays) > MAX_BYTES:
        return None
    return arrays


def _fold(graph):
    changed = False
    for op in list(graph.ops):
        if not _foldable(op):
            continue
        arrays = _evaluate(op)
        if arrays is None:
            continue
        position = graph.ops.index(op)
        graph.remove_ops([op])
        consts = [_insert_const(graph, position + i, a, op.name, op.origin)
                  for i, a in enumerate(arrays)]
        graph.replace_uses(dict(zip(op.outputs, consts)))
        changed = True
    return changed


def _insert_const(graph, position, value, name, origin):
    op = graph.insert_op(position, registry.get("const"), [], {"value": value},
                         [(TensorShape(value.shape), as_dtype(value.dtype))], name, origin)
    return op.outputs[0]


def _fold_into_subgraphs(graph):
    """A constant fed to a sub-graph becomes a constant inside it."""
    changed = False
    for op in graph.ops:
        for sub, pairs in subgraph_feeds(op):
            replacements = {}
            for ph, i in pairs:
                if i is None or not _is_const(op.inputs[i]):
                    continue
                source = op.inputs[i].op
                if _is_read(ph, sub):
                    replacements[ph] = _insert_const(
                        sub, sub.ops.index(ph.op) + 1, source.attrs["value"], source.name,
                        source.origin)
            if replacements:
                sub.replace_uses(replacements)
                changed = True
    return changed


def _is_read(tensor, graph):
    return any(t is tensor for o in graph.ops for t in o.inputs) or any(
        t is tensor for t in graph.outputs)
