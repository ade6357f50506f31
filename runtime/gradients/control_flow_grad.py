"""Gradients of cond and while_loop: backward sub-graphs built from the forward ones.

cond: a backward cond on the same predicate; each branch runs the backward pass of
its forward branch and outputs the gradients of the cond's float captures and of the
variables the branches read (zeros for those it does not use). A forward value the
backward branch needs becomes an extra output of the forward cond.

while: the forward loop also outputs its trip count and, per body tensor the backward
pass needs, its value at every iteration (stacked by the loop's kernel). A backward loop
runs that many times, from the last iteration to the first: its body runs the backward
pass of the forward body on the values of iteration i, carrying the gradients of the
loop variables and summing those of the captures and variables.

Backward sub-graphs see the forward tensors through a `_ValueOf` map (see backprop.py),
so loops and conds nest: a cond inside a loop exposes a value, which the loop stacks.
Gradients of gradients flow back into those extra outputs: an exposed value is a branch
output like the others, and a collected value seeds its body tensor at every iteration.
"""
from .. import context
from ..control_flow import cond, expose_branch_value, loop_stack, loop_trip_count
from ..control_flow import stack_get, while_loop
from ..ops import array_ops
from ..ops import registry
from ..shapes import TensorShape
from .backprop import GradientList, differentiable
from .symbolic import backprop


class _ValueOf:
    """Maps forward tensors of a sub-graph to tensors of the backward graph `home`.

    Captures map to the owning op's inputs (through the enclosing map `outer`), constants
    are copied, and any other tensor is handed to `fetch` (an exposed or stacked value).
    Each tensor is mapped once, with its ops built in `home`.
    """

    def __init__(self, graph, op_inputs, outer, fetch):
        self.home = context.current_graph()
        self._captures = {id(inner): op_inputs[j] for j, (_, inner) in enumerate(graph.captures)}
        self._outer = outer
        self._fetch = fetch
        self._cache = {}

    def __call__(self, t):
        value = self._cache.get(id(t))
        if value is None:
            with self.home.as_default():
                value = self._cache[id(t)] = self._resolve(t)
        return value

    def _resolve(self, t):
        captured = self._captures.get(id(t))
        if captured is not None:
            return self._outer(captured)
        if t.op.type == "const":
            return registry.constant(t.op.attrs["value"])
        return self._fetch(t)


def _float_variables(graphs):
    reads = set().union(*(g.effects()[0] for g in graphs))
    return sorted((v for v in reads if v.dtype.is_floating), key=lambda v: v.uid)


def _zeros_like_variable(var):
    if var.shape.is_fully_defined():
        return array_ops.zeros(var.shape.as_list(), var.dtype)
    return array_ops.zeros_like(var.read_value())


def _or_zeros(grads, like):
    """The gradients, zeros shaped like `like(i)` for the i-th when it is None."""
    return [array_ops.zeros_like(like(i)) if g is None else g for i, g in enumerate(grads)]


# -- cond -------------------------------------------------------------------------------------

def _cond_grad(op, *grads):
    forward, outer = op.op, op.value_of
    captures = forward.inputs[1:]
    float_caps = [j for j, t in enumerate(captures) if differentiable(t)]
    variables = _float_variables(forward.subgraphs())
    if not float_caps and not variables:
        return [None] * len(forward.inputs)

    def branch(side):
        graph = forward.attrs[f"{side}_graph"]
        union_index = forward.attrs[f"{side}_map"]
        # Output k is graph.outputs[k], exposed values included (a gradient of one is a
        # gradient of a gradient); the other branch's zeros in their place lead nowhere.
        seeded = [(graph.outputs[k], g) for k, g in enumerate(grads) if g is not None]

        def backward_branch():
            value_of = _ValueOf(graph, [captures[j] for j in union_index], outer,
                                lambda t: outer(expose_branch_value(forward, side, t)))
            inner = {union_index[j]: c for j, (_, c) in enumerate(graph.captures)}
            found = backprop(graph.ops, [y for y, _ in seeded], [g for _, g in seeded],
                             [inner.get(j) for j in float_caps] + variables, value_of)
            return (_or_zeros(found[:len(float_caps)], lambda i: outer(captures[float_caps[i]]))
                    + [_zeros_like_variable(v) if g is None else g
                       for g, v in zip(found[len(float_caps):], variables)])
        return backward_branch

    outs = cond(outer(forward.inputs[0]), branch("then"), branch("else"))
    input_grads = [None] * len(forward.inputs)
    for j, g in zip(float_caps, outs):
        input_grads[1 + j] = g
    return GradientList(input_grads, dict(zip(variables, outs[len(float_caps):])))


# -- while ------------------------------------------------------------------------------------

def _fit(t, shape):
    """`t` with a static shape within `shape` (a loop invariant): reshaped when less known."""
    if shape.rank is None or t.shape.is_subshape_of(shape):
        return t
    dims = [-1 if d is None else d for d in shape.dims]
    return array_ops.reshape(t, dims) if dims.count(-1) <= 1 else t


def _while_grad(op, *grads):
    forward, outer = op.op, op.value_of
    n, body, body_map = (forward.attrs[k] for k in ("n_vars", "body_graph", "body_map"))
    # A gradient of a collected value (a gradient of a gradient) seeds that body tensor at
    # every iteration: it is packed like the values, so their index reads it.
    collected = [(body.outputs[n + k], g, forward.outputs[n + 2 + 2 * k])
                 for k, g in enumerate(grads[n + 1::2]) if g is not None]
    loop_vars = [k for k in range(n) if differentiable(body.inputs[k])]
    cap_inputs = [forward.inputs[n + i] for i in body_map]
    float_caps = [j for j, t in enumerate(cap_inputs) if differentiable(t)]
    variables = _float_variables([body])
    count = outer(loop_trip_count(forward))
    start = [_fit(g, body.inputs[k].shape) for g, k in zip(
        _or_zeros([grads[k] for k in loop_vars], lambda i: outer(forward.outputs[loop_vars[i]])),
        loop_vars)]
    sums = ([array_ops.zeros_like(outer(cap_inputs[j])) for j in float_caps]
            + [_zeros_like_variable(v) for v in variables])
    invariants = ([TensorShape([])] + [body.inputs[k].shape for k in loop_vars]
                  + [t.shape for t in sums])

    def backward_body(i, *state):
        def stacked(t):
            values, index = loop_stack(forward, t)
            return stack_get(outer(values), outer(index), i, t)
        value_of = _ValueOf(body, cap_inputs, outer, stacked)
        sources = ([body.inputs[k] for k in loop_vars]
                   + [body.captures[j][1] for j in float_caps] + variables)
        seeds = [(t, stack_get(g, outer(index), i, t)) for t, g, index in collected]
        found = backprop(body.ops, [body.outputs[k] for k in loop_vars] + [t for t, _ in seeds],
                         list(state[:len(loop_vars)]) + [g for _, g in seeds], sources,
                         value_of)
        carried = [_fit(t, body.inputs[k].shape) for t, k in zip(
            _or_zeros(found[:len(loop_vars)], lambda i: value_of(body.inputs[loop_vars[i]])),
            loop_vars)]
        summed = [s if g is None else _fit(s + g, s.shape)
                  for s, g in zip(state[len(loop_vars):], found[len(loop_vars):])]
        return [i - 1] + carried + summed

    outs = while_loop(lambda i, *_: i >= 0, backward_body, [count - 1] + start + sums,
                      shape_invariants=invariants)
    input_grads = [None] * len(forward.inputs)
    for k, g in zip(loop_vars, outs[1:]):
        input_grads[k] = g
    cap_grads = outs[1 + len(loop_vars):]
    for j, g in zip(float_caps, cap_grads):
        input_grads[n + body_map[j]] = g
    return GradientList(input_grads, dict(zip(variables, cap_grads[len(float_caps):])))


def _assert_assigned_grad(op, grad):
    """The compiler's guard on a variable first assigned in a tensor loop passes it on."""
    return [None, grad]


registry.get("cond").grad = _cond_grad
registry.get("while").grad = _while_grad
registry.get("assert_assigned").grad = _assert_assigned_grad
