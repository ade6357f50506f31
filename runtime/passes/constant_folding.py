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
from . import each_graph, rename_inputs, subgraph_feeds

__all__ = ["run", "MAX_BYTES"]

MAX_BYTES = 1 << 20
_NEVER = frozenset({"const", "placeholder", "capture", "no_op"})


def run(graph):
    return each_graph(graph, _fold_into_subgraphs) | each_graph(graph, _fold)


def _is_const(t):
    return t.op.type == "const"


def _foldable(op):
    for t in op.inputs:
        if t.op.type != "const":
            return False
    reads, _, stateful = op.effects()
    return (op.type not in _NEVER and op.outputs and not stateful and not reads
            and not op.subgraphs())


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
    """One sweep in graph order: a folded op's consts take its place (and name), and the
    ops after it read them, so chains of constant ops fold in one sweep."""
    renamed, ops, folded = {}, [], set()
    for op in graph.ops:
        rename_inputs(op, renamed)
        arrays = _evaluate(op) if _foldable(op) else None
        if arrays is None:
            ops.append(op)
            continue
        graph.forget_name(op)
        consts = [_const_op(graph, a, op.name, op.origin, op.device) for a in arrays]
        ops.extend(consts)
        renamed.update(zip(op.outputs, (c.outputs[0] for c in consts)))
        folded.add(op)
    if not folded:
        return False
    graph.ops = ops
    graph.finish_renaming(renamed, folded)
    return True


def _const_op(graph, value, name, origin, device):
    return graph.make_op(registry.get("const"), [], {"value": value},
                         [(TensorShape(value.shape), as_dtype(value.dtype))], name, origin,
                         device=device)


def _fold_into_subgraphs(graph):
    """A constant fed to a sub-graph becomes a constant inside it (after its placeholder)."""
    changed = False
    for op in graph.ops:
        for sub, pairs in subgraph_feeds(op):
            read = None
            replacements = {}
            for ph, i in pairs:
                if i is None or not _is_const(op.inputs[i]):
                    continue
                if read is None:
                    read = {id(t) for o in sub.ops for t in o.inputs}
                    read.update(id(t) for t in sub.outputs)
                if id(ph) in read:
                    source = op.inputs[i].op
                    replacements[ph] = _const_op(sub, source.attrs["value"], source.name,
                                                 source.origin, source.device).outputs[0]
            if replacements:
                after = {ph.op: c.op for ph, c in replacements.items()}
                sub.ops = [x for o in sub.ops for x in ((o, after[o]) if o in after else (o,))]
                sub.replace_uses(replacements)
                changed = True
    return changed
