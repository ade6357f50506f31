"""Rematerialization: recompute cheap forward values in a loop's backward pass.

A while loop's gradient needs values of its forward body at every iteration, so the
forward loop collects them (`stacks`): T copies each for T iterations. A collected
value a few cheap elementwise ops away from the loop's variables (and its captures and
constants) is recomputed in the backward body from the collected loop variables
instead, and its own collection goes (pruning drops it once nothing reads it). This
trades compute for memory, so it is off by default:
`rt.config.set_optimizations(rt.config.DEFAULT_PASSES | {"rematerialization"})`.
Loop variables are collected anew only when that replaces more collections than it adds.

Under a memory budget (`rt.config.set_memory_budget(bytes)`, `rt.function(...,
memory_budget=)`), `fit` recomputes instead only what the plan needs: the cheapest
collections first, until the graph's planned peak (`memory.planned_peak`) is within the
budget, warning when it cannot be.

    forward body (x):                             forward body (x):
      y = tanh(x);  z = sin(x)                      y = tanh(x);  z = sin(x)
      return (x + y * z, x, y, z)       ==>         return (x + y * z, x)       stacks=1
    backward body (i):                            backward body (i):
      x_i = stack_get(x, i)                         x_i = stack_get(x, i)
      y_i = stack_get(y, i)                         y_i = tanh(x_i)
      z_i = stack_get(z, i)                         z_i = sin(x_i)
"""
import warnings

from .. import traceback_utils
from ..ops import registry
from ..shapes import TensorShape
from ..tensor import SymbolicTensor
from . import each_graph, graphs_in, known_op, pruning, rebuild_inputs, subgraph_feeds

__all__ = ["run", "fit"]


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
    found = _candidates(graph, loop)
    if not found or len(_missing(loop, found)) >= len(found):
        return False
    _apply(graph, loop, found)
    return True


def _candidates(graph, loop):
    """{k: (readers, sources)}: the collections k of `loop` that can be recomputed in the
    backward loops reading them (see `_stack_readers`) from the loop variables `sources`."""
    n, body = loop.attrs["n_vars"], loop.attrs["body_graph"]
    loop_vars = set(body.inputs)
    captured = {inner for _, inner in body.captures}
    found = {}
    for k, t in enumerate(body.outputs[n:]):
        if t in loop_vars:
            continue
        sources = _sources(t, loop_vars, captured)
        readers = _stack_readers(graph, loop, k) if sources is not None else None
        if readers:
            found[k] = (readers, sources)
    return found


def _missing(loop, chosen):
    """The loop variables recomputing the collections `chosen` needs collected anew."""
    n, body = loop.attrs["n_vars"], loop.attrs["body_graph"]
    stacked = set(body.outputs[n:])
    return {x for _, sources in chosen.values() for x in sources if x not in stacked}


def _apply(graph, loop, chosen):
    """Recompute the collections `chosen` ({k: (readers, sources)}) of `loop`."""
    n, body = loop.attrs["n_vars"], loop.attrs["body_graph"]
    stacked = {t: k for k, t in enumerate(body.outputs[n:])}
    for x in _missing(loop, chosen):
        stacked[x] = _add_stack(loop, x)
    for k, (readers, _) in chosen.items():
        for backward, gets in readers:
            for get in gets:
                _recompute(loop, backward, get, body.outputs[n + k], stacked)
    graph._changed()


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


# -- a memory budget: recompute only what the plan needs to fit -----------------------------------

def fit(graph, budget, planned_peak):
    """Recompute collected loop values of `graph` (and its sub-graphs), the cheapest first
    (fewest elements computed per byte no longer kept), until `planned_peak(graph)` is
    at most `budget` bytes or nothing more can be recomputed; then warn if it is over, or
    unknown. Returns whether it changed the graph."""
    changed = False
    peak = planned_peak(graph)
    while peak is None or peak > budget:
        step = _cheapest(graph)
        if step is None:
            break
        _apply(*step)
        pruning.run(graph)             # drops the collections nothing reads now
        changed = True
        peak = planned_peak(graph)
    if peak is None:
        _warn(f"memory budget of {_mb(budget)}: the peak memory of '{graph.name}' is not "
              f"known before it runs (a loop's trip count or a shape is not fixed by the "
              f"graph); it recomputes every value it can")
    elif peak > budget:
        _warn(f"memory budget of {_mb(budget)}: '{graph.name}' plans to hold {_mb(peak)}, "
              f"{_mb(peak - budget)} over, after recomputing every value it can")
    return changed


def _warn(message):
    """A UserWarning at the user's line that runs the graph."""
    frame = traceback_utils.user_frame()
    if frame is None:
        warnings.warn(message, stacklevel=3)
    else:
        warnings.warn_explicit(message, UserWarning, frame.filename, frame.lineno)


def _mb(size):
    return f"{size / 2**20:.1f} MB"


def _cheapest(graph):
    """(graph, loop, chosen) recomputing which saves bytes at the least cost: one collection
    (or, when each alone would need a new collection as large, all of the loop's); None when
    nothing left saves memory."""
    best, best_score = None, None
    for g in graphs_in(graph):
        for loop in g.ops:
            if loop.type != "while" or not known_op(loop) or not loop.attrs.get("stacks"):
                continue
            found = _candidates(g, loop)
            options = [{k: found[k]} for k in found] + ([found] if len(found) > 1 else [])
            for chosen in options:
                score = _score(loop, chosen)
                if score is not None and (best_score is None or score < best_score):
                    best, best_score = (g, loop, chosen), score
    return best


def _score(loop, chosen):
    """Elements computed per element no longer kept, per iteration; None if nothing is saved."""
    n, body = loop.attrs["n_vars"], loop.attrs["body_graph"]
    saved = sum(_elements(body.outputs[n + k]) for k in chosen)
    saved -= sum(_elements(x) for x in _missing(loop, chosen))
    if saved <= 0:
        return None
    loop_vars = set(body.inputs)
    return sum(_cost(body.outputs[n + k], loop_vars) for k in chosen) / saved


def _elements(t):
    return t.shape.num_elements() if t.shape.is_fully_defined() else 1


def _cost(t, loop_vars):
    """Elements the ops recomputing `t` compute (see `_sources`)."""
    total, stack, seen = 0, [t], set()
    while stack:
        x = stack.pop()
        if x in seen or x in loop_vars or x.op.type in ("const", "capture"):
            continue
        seen.add(x)
        total += _elements(x)
        stack.extend(x.op.inputs)
    return total
