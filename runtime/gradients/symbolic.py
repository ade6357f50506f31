"""Symbolic gradients: `rt.gradients(ys, xs)` adds the backward pass to the current graph.

`backprop` is the walk every graph gradient uses (rt.gradients, a tape inside a traced
function, the backward body of a loop or branch of a cond): it keeps the operations on
a path from the sources to `ys`, then runs the shared backward pass over them.
"""
from .. import context
from .. import nest
from ..ops import array_ops
from ..ops.registry import convert_to_tensor
from ..tensor import SymbolicTensor, Tensor
from ..variables import Variable
from .backprop import OpView, backward, differentiable, identity

__all__ = ["gradients", "backprop", "seen_in"]


def backprop(ops, ys, grad_ys, sources, value_of=identity, recorded=None):
    """Gradients of `ys` (seeded by `grad_ys`) with respect to each of `sources`.

    ops: the forward operations (one graph, creation order); sources: forward tensors,
    Variables or None; value_of: maps a forward tensor to the tensor to use where the
    gradient is built (identity in the forward graph and graphs inside it); recorded: if
    given, only these operations are differentiated (a tape's). Returns one gradient or
    None per source.
    """
    tensors = [s for s in sources if isinstance(s, Tensor)]
    variables = {s for s in sources if isinstance(s, Variable)}
    entries = [OpView(op, value_of) for op in _between(ops, ys, tensors, variables, recorded)]
    seeds = {}
    for y, g in zip(ys, grad_ys):
        if g is not None and differentiable(y):
            seeds.setdefault(id(y), []).append(g)
    grad_of, variable_grads = backward(entries, seeds)
    return [None if s is None else variable_grads.get(s) if isinstance(s, Variable)
            else grad_of(s) for s in sources]


def _between(ops, ys, tensors, variables, recorded):
    """The operations of `ops` on a path from the sources to `ys`, in order."""
    reached = {id(t) for t in tensors}
    forward = []
    for op in ops:
        if recorded is not None and op not in recorded:
            continue
        if any(id(t) in reached for t in op.inputs) or (variables and
                                                         op.effects()[0] & variables):
            forward.append(op)
            reached.update(id(t) for t in op.outputs if differentiable(t))
    needed = {id(y) for y in ys}
    between = []
    for op in reversed(forward):
        if any(id(t) in needed for t in op.outputs):
            between.append(op)
            needed.update(id(t) for t in op.inputs)
    between.reverse()
    return between


def seen_in(graph, t):
    """`t` as `graph` sees it: itself, the placeholder capturing it, or None if unused."""
    if isinstance(t, Variable):
        return t
    if not isinstance(t, SymbolicTensor):
        return None
    if t.op.graph is graph:
        return t
    outer = seen_in(graph.outer_graph, t) if graph.outer_graph is not None else None
    return next((inner for o, inner in graph.captures if o is outer), None) \
        if outer is not None else None


def targets_and_seeds(ys, grad_ys):
    """Flat target tensors and their seeds (ones when not given)."""
    grad_ys = [None] * len(nest.flatten(ys)) if grad_ys is None else \
        nest.flatten_up_to(ys, grad_ys)
    ys = [t if isinstance(t, Tensor) else convert_to_tensor(t) for t in nest.flatten(ys)]
    return ys, [array_ops.ones_like(y) if g is None else convert_to_tensor(g, dtype=y.dtype)
                for y, g in zip(ys, grad_ys)]


def gradients(ys, xs, grad_ys=None):
    """The symbolic gradients of sum(ys) with respect to each of `xs`, as a list.

    Works inside a graph (a traced function, a TF1 graph): the backward pass is added to
    the current graph, through cond, while_loop and graph-function calls. `xs` may be
    tensors or variables; an x that ys do not depend on gets None. `grad_ys` seeds the
    gradients of `ys` (ones by default).
    """
    graph = context.current_graph()
    if graph is None:
        raise RuntimeError("rt.gradients builds graph operations and works inside a graph "
                           "(a traced function); use rt.GradientTape when executing eagerly.")
    ys, grad_ys = targets_and_seeds(ys, grad_ys)
    forward = _forward_graph(ys)
    sources = [seen_in(forward, x) for x in nest.flatten(xs)]
    return backprop(forward.ops, ys, grad_ys, sources)


def _forward_graph(ys):
    graphs = {id(y.op.graph): y.op.graph for y in ys if isinstance(y, SymbolicTensor)}
    if len(graphs) != 1 or len(ys) != sum(isinstance(y, SymbolicTensor) for y in ys):
        raise ValueError("gradients: the targets must be symbolic tensors of one graph")
    return graphs.popitem()[1]
