"""The gradient of a graph-function call: a call of the function's gradient graph.

The gradient graph of a traced function (built once per function graph) recomputes the
function's forward operations from its inputs, then runs the backward pass over them:

    inputs:  the function's inputs and captures, then a gradient per float output
    outputs: the gradients of the inputs that have one, then of the variables read inside

Recomputing keeps a call one operation (a tape saved only its inputs and outputs) and
lets the same gradient serve eager tapes and graphs. Side effects are not repeated:
operations without outputs (print, assert) are left out, and an assignment's value is
read back from its variable (no gradient flows through an assignment). Random ops and
py_functions are not run again either: a traced function returns their values as hidden
outputs (graph.n_visible; see function.py), which the gradient graph is fed, so a dropout
mask is the one the forward pass drew. A function it calls is recomputed by its "replay"
copy, whose random values are inputs. (Random ops inside cond/while bodies still draw
anew.)
"""
import threading
import weakref

from .. import context
from ..function import _CALL, _placeholder
from ..graph import Graph, clone_graph
from ..ops import array_ops
from ..ops import math_ops
from ..ops import registry
from .backprop import GradientList, differentiable
from .symbolic import backprop

__all__ = ["inline"]

_cache = weakref.WeakKeyDictionary()     # function graph -> _GradientGraph
_lock = threading.RLock()        # a gradient graph may need those of the functions it calls


class _GradientGraph:
    __slots__ = ("graph", "input_positions", "variables")

    def __init__(self, graph, input_positions, variables):
        self.graph = graph
        self.input_positions = input_positions   # which call input each gradient is for
        self.variables = variables


def _call_grad(op, *grads):
    f = op.attrs["f"]
    gradient_graph = _gradient_graph(f)
    n = len(f.visible_outputs)
    seeds = [g for g, t in zip(math_ops.fill_missing(op, grads)[:n], op.outputs[:n])
             if differentiable(t)]
    outs = registry.apply(_CALL, list(op.inputs) + seeds + list(op.outputs[n:]),
                          {"f": gradient_graph.graph})
    input_grads = [None] * len(op.inputs)
    for position, g in zip(gradient_graph.input_positions, outs):
        input_grads[position] = g
    n = len(gradient_graph.input_positions)
    return GradientList(input_grads, dict(zip(gradient_graph.variables, outs[n:])))


def _gradient_graph(f):
    with _lock:
        found = _cache.get(f)
        if found is None:
            found = _cache[f] = _build(f)
        return found


def _inlined(f):
    """In the current (new) graph: placeholders for `f`'s inputs and captures (feeds) and
    for its hidden outputs, and `f`'s outputs computed from them."""
    feeds = [_placeholder(t.shape, t.dtype, t.op.name)
             for t in list(f.inputs) + [inner for _, inner in f.captures]]
    hidden = [_placeholder(t.shape, t.dtype, f"replayed_{k}")
              for k, t in enumerate(f.hidden_outputs)]
    return feeds, hidden, inline(f, feeds, hidden)


def _build(f):
    graph = Graph(name=f"{f.name}_grad")
    graph.is_function = True
    with context.graph_scope(graph):
        feeds, hidden, outputs = _inlined(f)
        float_outputs = [k for k, t in enumerate(f.visible_outputs) if differentiable(t)]
        seeds = [_placeholder(f.outputs[k].shape, f.outputs[k].dtype, f"grad_{k}")
                 for k in float_outputs]
        positions = [i for i, t in enumerate(feeds) if differentiable(t)]
        variables = sorted((v for v in f.effects()[0] if v.dtype.is_floating),
                           key=lambda v: v.uid)
        # A variable read at the top level (here or in a function called) is fed its
        # forward value (a hidden output): its gradient is that placeholder's.
        reads = [(ph, _variable_read(t)) for ph, t in zip(hidden, f.hidden_outputs)]
        reads = [(ph, v) for ph, v in reads if v is not None and v.dtype.is_floating]
        grads = backprop(graph.ops, [outputs[k] for k in float_outputs], seeds,
                         [feeds[i] for i in positions] + variables + [ph for ph, _ in reads])
        input_grads = [(i, g) for i, g in zip(positions, grads) if g is not None]
        by_variable = dict(zip(variables, grads[len(positions):len(positions) + len(variables)]))
        for (_, v), g in zip(reads, grads[len(positions) + len(variables):]):
            if g is not None:
                by_variable[v] = g if by_variable.get(v) is None else math_ops.add(
                    by_variable[v], g)
        variable_grads = [(v, by_variable[v]) for v in variables
                          if by_variable.get(v) is not None]
    graph.inputs = feeds + seeds + hidden
    graph.outputs = [g for _, g in input_grads + variable_grads]
    return _GradientGraph(graph, [i for i, _ in input_grads], [v for v, _ in variable_grads])


def _variable_read(t):
    """The variable whose read `t` (a hidden output) is, looking into called functions."""
    op = t.op
    if op.opdef.effect == "read":
        return op.attrs["var"]
    if op.type == "call":
        return _variable_read(op.attrs["f"].outputs[t.index])
    return None


def inline(graph, feeds, hidden=()):
    """Copy `graph`'s operations into the current graph, its inputs then captures fed by
    `feeds`, its hidden outputs (random values) by `hidden`; returns its outputs there.
    Side effects are left out (see the module). A cond or while gets its own copy of its
    sub-graphs: its gradient adds outputs to them."""
    target = context.current_graph()
    value = dict(zip(list(graph.inputs) + [c for _, c in graph.captures], feeds))
    value.update(zip(graph.hidden_outputs, hidden))
    for op in graph.ops:
        if not op.outputs or all(t in value for t in op.outputs):
            continue
        if op.type == "call" and op.attrs["f"].n_visible is not None:
            inner = op.attrs["f"]           # its random values are known: replay it
            k = inner.n_visible
            inputs = [value[t] for t in list(op.inputs) + list(op.outputs[k:])]
            outs = registry.apply(_CALL, inputs, {"f": _replay(inner)}, name=op.name)
            for t, v in zip(op.outputs[:k], outs):
                value[t] = v
            continue
        if op.opdef.effect == "write":
            var = op.attrs["var"]
            outs = [array_ops.stop_gradient(var.read_value())]
        else:
            inputs = [value[t] for t in op.inputs]
            # gradients extend cond/while's sub-graphs: each gets a copy reading the copies
            attrs = {k: clone_graph(v, target, _tensors=value)
                     if isinstance(v, Graph) and op.type != "call" else v
                     for k, v in op.attrs.items()}
            copy = target.create_op(op.opdef, inputs, attrs, op.opdef.infer(inputs, **attrs),
                                    name=op.name, origin=op.origin)
            copy.device = op.device or copy.device      # where the function placed it
            outs = copy.outputs
        for t, v in zip(op.outputs, outs):
            value[t] = v
    return [value[t] for t in graph.outputs]


_replays = weakref.WeakKeyDictionary()     # function graph -> its replay graph


def _replay(f):
    """`f` as a function of its inputs, captures and hidden outputs (its random values),
    returning its visible outputs: recomputing it draws nothing."""
    with _lock:
        found = _replays.get(f)
        if found is None:
            graph = Graph(name=f"{f.name}_replay")
            graph.is_function = True
            with context.graph_scope(graph):
                feeds, hidden, outputs = _inlined(f)
            graph.inputs = feeds + hidden
            graph.outputs = outputs[:len(f.visible_outputs)]
            found = _replays[f] = graph
        return found


registry.get("call").grad = _call_grad
