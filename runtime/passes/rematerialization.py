"""Rematerialization: recompute cheap forward values in a loop's backward pass.

A while loop's gradient needs values of its forward body at every iteration, so the
forward loop collects them (`stacks`): T copies each for T iterations. A collected
value a few cheap elementwise ops away from the loop's variables (and its captures and
constants) is recomputed in the backward body from the collected loop variables
instead, and its own collection goes (pruning drops it once nothing reads it). This
trades compute for memory, so it is off by default:
`rt.config.set_optimizations(rt.config.DEFAULT_PASSES | {"rematerialization"})`.
Loop variables are collected anew only when that replaces more collections than it adds.

    forward body (x):                             forward body (x):
      y = tanh(x);  z = sin(x)                      y = tanh(x);  z = sin(x)
      return (x + y * z, x, y, z)       ==>         return (x + y * z, x)       stacks=1
    backward body (i):                            backward body (i):
      x_i = stack_get(x, i)                         x_i = stack_get(x, i)
      y_i = stack_get(y, i)                         y_i = tanh(x_i)
      z_i = stack_get(z, i)                         z_i = sin(x_i)
"""
from ..ops import registry
from ..shapes import TensorShape
from ..tensor import SymbolicTensor
from . import each_graph, known_op, rebuild_inputs, subgraph_feeds

__all__ = ["run"]


def run(graph):
    return each_graph(graph, _rematerialize)


def _rematerialize(graph):
    changed = False
    for loop in list(graph.ops):
        if loop.type == "while" and known_op(loop) and loop.attrs.get("stacks"):
            changed = _loop(graph, loop) or changed
    return changed


MAX_OPS = 4                       # the most ops recomputed for one collected value


def _loop(graph, loop):
    n, body = loop.attrs["n_vars"], loop.attrs["body_graph"]
    stacked = {t: k for k, t in enumerate(body.outputs[n:])}
    loop_vars = set(body.inputs)
    captured = {inner for _, inner in body.captures}
    plans, needed = {}, set()
    for t, k in stacked.items():
        if t in loop_vars:
            continue
        sources = _sources(t, loop_vars, captured)
        readers = _stack_readers(graph, loop, k) if sources is not None else None
        if readers:
            plans[k] = readers
            needed |= sources
    missing = [x for x in needed if x not in stacked]
    if not plans or len(missing) >= len(plans):
        return False
    for x in missing:
        stacked[x] = _add_stack(loop, x)
    for k, readers in plans.items():
        for backward, gets in readers:
            for get in gets:
                _recompute(loop, backward, get, body.outputs[n + k], stacked)
    graph._changed()
    return True


def _sources(t, loop_vars, captured):
    """The loop variables `t` is computed from by at most MAX_OPS cheap elementwise ops
    (on loop variables, captures and constants); None if it is not."""
    sources, count, stack = set(), 0, [t]
    while stack:
        x = stack.pop()
        if x in loop_vars:
            sources.add(x)
        elif x in captured or x.op.type == "const":
            continue
        else:
            op = x.op
            count += 1
            if (count > MAX_OPS or not op.opdef.elementwise or op.stateful
                    or op.control_inputs or len(op.outputs) != 1):
                return None
            stack.extend(op.inputs)
    return sources


def _stack_readers(graph, loop, k):
    """[(backward while op, [its stack_get ops of stack k])] when only such ops read
    the collection k of `loop`, else None."""
    n = loop.attrs["n_vars"]
    values, index = loop.outputs[n + 1 + 2 * k], loop.outputs[n + 2 + 2 * k]
    if any(t is values or t is index for t in graph.outputs):
        return None
    found = []
    for op in graph.ops:
        uses = [i for i, t in enumerate(op.inputs) if t is values or t is index]
        if not uses:
            continue
        if op.type != "while" or not known_op(op):
            return None
        gets = _gets_in(op, values, index)
        if gets is None:
            return None
        found.append((op, gets))
    return found or None


def _gets_in(backward, values, index):
    """The stack_get ops of `backward`'s body reading (values, index), when nothing else
    (its condition included) reads them."""
    placeholders = set()
    for sub, pairs in subgraph_feeds(backward):
        mine = {t for t, i in pairs if i is not None and (
            backward.inputs[i] is values or backward.inputs[i] is index)}
        if mine and sub is not backward.attrs["body_graph"]:
            if any(x in mine for op in sub.ops for x in op.inputs):
                return None
        if sub is backward.attrs["body_graph"]:
            placeholders = mine
    body = backward.attrs["body_graph"]
    gets = []
    for op in body.ops:
        reads = [x for x in op.inputs if x in placeholders]
        if not reads:
            continue
        if op.type != "stack_get" or len(op.inputs) != 3 or op.inputs[2] in placeholders:
            return None
        gets.append(op)
    if any(t in placeholders for t in body.outputs):
        return None
    return gets


def _add_stack(loop, tensor):
    """Collect `tensor` (a loop variable of the body) at every iteration; its index k."""
    n, body = loop.attrs["n_vars"], loop.attrs["body_graph"]
    body.outputs = list(body.outputs) + [tensor]
    body._changed()
    k = loop.attrs["stacks"]
    rank = tensor.shape.rank
    specs = [(TensorShape([None]), tensor.dtype),
             (TensorShape([None, None if rank is None else rank + 1]), _int64())]
    loop.outputs = loop.outputs + tuple(
        SymbolicTensor(loop, len(loop.outputs) + i, shape, dtype)
        for i, (shape, dtype) in enumerate(specs))
    loop.attrs = dict(loop.attrs, stacks=k + 1)
    assert len(loop.outputs) == n + 1 + 2 * (k + 1)
    return k


def _int64():
    from ..dtypes import int64
    return int64


def _recompute(loop, backward, get, tensor, stacked):
    """Replace `get` (a stack_get in `backward`'s body) by the ops computing the forward
    body's `tensor`, recomputed there from collected loop variables."""
    n, fbody = loop.attrs["n_vars"], loop.attrs["body_graph"]
    body = backward.attrs["body_graph"]
    feeds = {t: backward.inputs[i] for _, pairs in subgraph_feeds(backward)
             for t, i in pairs if i is not None}
    fcaptures = {inner: loop.inputs[n + i] for (_, inner), i in
                 zip(fbody.captures, loop.attrs["body_map"])}
    made = {}

    def insert(opdef, inputs, attrs, like, name, origin):
        op = body.insert_op(body.ops.index(get), opdef, inputs, attrs,
                            [(like.shape, like.dtype)], name, origin)
        return op

    def value(x):
        if x in made:
            return made[x]
        if x.op.type == "const":
            result = insert(registry.get("const"), [], dict(x.op.attrs), x, x.op.name,
                            x.op.origin).outputs[0]
        elif x in fcaptures:
            result = _capture(body, feeds, fcaptures[x])
        elif x in stacked and x is not tensor:
            k = stacked[x]
            pair = [_capture(body, feeds, loop.outputs[n + 1 + 2 * k + j]) for j in (0, 1)]
            dims = None if x.shape.rank is None else tuple(x.shape.dims)
            result = insert(registry.get("stack_get"), pair + [get.inputs[2]],
                            {"shape": dims}, x, "stack_get", get.origin).outputs[0]
        else:
            op = x.op
            inputs = [value(i) for i in op.inputs]
            like = get.outputs[0] if x is tensor else x
            copy = insert(op.opdef, inputs, dict(op.attrs), like, op.name, op.origin)
            copy.original = op.original or op
            result = copy.outputs[0]
        made[x] = result
        return result

    body.replace_op(get, value(tensor).op)
    body.remove_ops([get])
    rebuild_inputs(backward, feeds)
    backward.graph._changed()


def _capture(body, feeds, outer):
    """The placeholder of `body` fed by the outer tensor `outer` (made if new)."""
    for t, source in feeds.items():
        if source is outer and t.op.graph is body:
            return t
    op = body.insert_op(len(body.inputs) + len(body.captures), registry.get("capture"), [], {},
                        [(outer.shape, outer.dtype)], outer.op.name, outer.op.origin)
    inner = op.outputs[0]
    body.captures.append((outer, inner))
    feeds[inner] = outer
    return inner
