"""The gradient of a graph-function call: a call of the function's gradient graph.

The gradient graph of a traced function (built once per function graph) recomputes the
function's forward operations from its inputs, then runs the backward pass over them:

    inputs:  the function's inputs and captures, then a gradient per float output
    outputs: the gradients of the inputs that have one, then of the variables read inside

Recomputing keeps a call one operation (a tape saved only its inputs and outputs) and
lets the same gradient serve eager tapes and graphs. Side effects are not repeated:
operations without outputs (print, assert) are left out, and an assignment's value is
read back from its variable (no gradient flows through an assignment). Random ops and
py_functions are not run again either: a traced function returns every value it drew as
hidden outputs (graph.n_visible; see function.drawn_values), which the gradient graph is
fed, so a dropout mask is the one the forward pass drew. A function it calls is
recomputed by its "replay" copy, whose drawn values are inputs. A cond or while whose
sub-graphs draw outputs their draws too (a cond each branch's, a loop their values at
every iteration, stacked); its copy gets sub-graphs that read them instead of drawing
(a loop's copy counts its iterations to read iteration i's), recursively for conds,
loops and calls inside. A cond or while without draws is copied as it is. (A draw in
a loop's condition is still drawn again.)
"""
import collections
import threading
import weakref

from .. import context
from .. import dtypes
from ..control_flow import _capture_inputs, stack_get, stack_position
from ..function import _CALL, _placeholder, drawn_values, variable_read
from ..graph import Graph, clone_graph
from ..shapes import TensorShape
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
        reads = [(ph, variable_read(t)) for ph, t in zip(hidden, f.hidden_outputs)]
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


def inline(graph, feeds, hidden=()):
    """Copy `graph`'s operations into the current graph, its inputs then captures fed by
    `feeds`, its hidden outputs (drawn values and variable reads) by `hidden`; returns its
    outputs there. Side effects are left out (see the module)."""
    value = dict(zip(list(graph.inputs) + [c for _, c in graph.captures], feeds))
    value.update(zip(graph.hidden_outputs, hidden))
    _copy_ops(graph, value)
    return [value[t] for t in graph.outputs]


def _copy_ops(graph, value):
    """Copy `graph`'s operations into the current graph, `value` mapping its tensors to
    their copies; an op whose outputs are all known is left out, unless an output of a
    cond or while: one known already is the forward value of draws inside it (see
    function.drawn_values): the op is copied with sub-graphs that read them, and its
    copy's outputs are used (a cond's draw of one branch may be the other's value)."""
    for op in graph.ops:
        replayed = op.type in _REPLAYED and any(t in value for t in op.outputs)
        if not op.outputs or (not replayed and all(t in value for t in op.outputs)):
            continue
        if op.type == "call" and op.attrs["f"].n_visible is not None and all(
                t in value or variable_read(t) is not None
                for t in op.outputs[op.attrs["f"].n_visible:]):
            outs = _replayed_call(op, value)
        elif replayed:
            outs = _REPLAYED[op.type](op, value)
        elif op.opdef.effect == "write":
            var = op.attrs["var"]
            outs = [array_ops.stop_gradient(var.read_value())]
        else:
            outs = _copied(op, value)
        for t, v in zip(op.outputs, outs):
            value[t] = v


def _replayed_call(op, value):
    """A call of `op`'s function's replay, fed the values it drew; a variable it read
    and that is not known is read again (inside a cond or loop: its gradient flows)."""
    inner = op.attrs["f"]
    k = inner.n_visible
    inputs = [value[t] for t in op.inputs] + [
        value[t] if t in value else variable_read(t).read_value() for t in op.outputs[k:]]
    return registry.apply(_CALL, inputs, {"f": _replay(inner)}, name=op.name)


def _copied(op, value):
    """A copy of `op`; a cond or while gets its own copy of its sub-graphs (its gradient
    adds outputs to them)."""
    target = context.current_graph()
    attrs = {k: clone_graph(v, target, _tensors=value)
             if isinstance(v, Graph) and op.type != "call" else v
             for k, v in op.attrs.items()}
    return _create(op, [value[t] for t in op.inputs], attrs)


def _create(op, inputs, attrs):
    target = context.current_graph()
    inputs = [target.capture(t) for t in inputs]
    copy = target.create_op(op.opdef, inputs, attrs, op.opdef.infer(inputs, **attrs),
                            name=op.name, origin=op.origin)
    copy.device = op.device or copy.device      # where the function placed it
    return copy.outputs


def _replayed_cond(op, value):
    """A copy of cond `op` whose branches read the forward values of their draws."""
    then_graph, else_graph = (_replayed_branch(op, side, value) for side in ("then", "else"))
    captures, (then_map, else_map) = _capture_inputs([then_graph, else_graph])
    attrs = dict(op.attrs, then_graph=then_graph, else_graph=else_graph,
                 then_map=then_map, else_map=else_map)
    return _create(op, [value[op.inputs[0]]] + captures, attrs)


def _replayed_branch(op, side, value):
    branch = op.attrs[f"{side}_graph"]
    known = {t: value[out] for t, out in zip(branch.outputs, op.outputs) if out in value}
    draws = [t for t in drawn_values(branch) if t in known]
    copy = _subgraph_like(branch)
    with context.graph_scope(copy):
        inner = _captured(branch, copy, value)
        inner.update((t, copy.capture(known[t])) for t in draws)
        _copy_ops(branch, inner)
        copy.outputs = [inner[t] for t in branch.outputs]
    return copy


def _replayed_while(op, value):
    """A copy of while `op` whose body reads the forward values of its draws at each
    iteration: it counts its iterations in one more loop variable, after the others."""
    n, body = op.attrs["n_vars"], op.attrs["body_graph"]
    stacked = {}
    for t in body.outputs[n:]:
        k = stack_position(op, t)
        if k is not None and op.outputs[k] in value:
            stacked[t] = (value[op.outputs[k]], value[op.outputs[k + 1]])
    count_spec = (TensorShape([]), dtypes.int32)
    copy = _subgraph_like(body)
    with context.graph_scope(copy):
        copy.inputs = [_placeholder_like(t) for t in body.inputs] + [
            _placeholder(*count_spec, "iteration")]
        i = copy.inputs[n]
        inner = _captured(body, copy, value)
        inner.update(zip(body.inputs, copy.inputs))
        for t, (values, index) in stacked.items():
            inner[t] = stack_get(copy.capture(values), copy.capture(index), i, t)
        _copy_ops(body, inner)
        copy.outputs = ([inner[t] for t in body.outputs[:n]]
                        + [math_ops.add(i, registry.constant(1, dtypes.int32))]
                        + [inner[t] for t in body.outputs[n:]])
    target = context.current_graph()
    loop_cond = clone_graph(op.attrs["cond_graph"], target, _tensors=value)
    with context.graph_scope(loop_cond):
        loop_cond.inputs = list(loop_cond.inputs) + [_placeholder(*count_spec, "iteration")]
    captures, (cond_map, body_map) = _capture_inputs([loop_cond, copy])
    inputs = ([value[t] for t in op.inputs[:n]] + [registry.constant(0, dtypes.int32)]
              + captures)
    if op.attrs["maximum_iterations"] == "input":
        inputs.append(value[op.inputs[-1]])
    attrs = dict(op.attrs, n_vars=n + 1, cond_graph=loop_cond, body_graph=copy,
                 cond_map=cond_map, body_map=body_map)
    outs = _create(op, inputs, attrs)
    return outs[:n] + outs[n + 1:]


_REPLAYED = {"cond": _replayed_cond, "while": _replayed_while}


def _subgraph_like(graph):
    copy = Graph(name=graph.name, outer_graph=context.current_graph())
    copy.seed, copy.device = graph.seed, graph.device
    return copy


def _captured(graph, copy, value):
    """`graph`'s tensors mapped to `copy`'s, starting with its captures (read from the
    enclosing graphs' maps, `value`)."""
    inner = collections.ChainMap({}, value)
    for outer, t in graph.captures:
        inner[t] = copy.capture(value[outer])
    return inner


def _placeholder_like(t):
    p = context.current_graph().create_op(t.op.opdef, [], dict(t.op.attrs),
                                          [(t.shape, t.dtype)], name=t.op.name).outputs[0]
    p.weak = t.weak
    return p


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
