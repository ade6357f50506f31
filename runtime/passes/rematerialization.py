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
from . import (each_graph, graphs_in, known_op, pruning, rebuild_inputs, rename_inputs,
               subgraph_feeds)

__all__ = ["run", "fit"]


def run(graph):
    return each_graph(graph, _rematerialize)


def _rematerialize(graph):
    loops = [op for op in graph.ops
             if op.type == "while" and known_op(op) and op.attrs.get("stacks")]
    if not loops:
        return False
    readers = _readers(graph)     # once for all loops
    changed = False
    for loop in loops:
        changed = _loop(graph, loop, readers) or changed
    return changed


def _readers(graph):
    """{tensor: {op of `graph` reading it: its place in the graph}}."""
    readers = {}
    for i, op in enumerate(graph.ops):
        for t in op.inputs:
            readers.setdefault(t, {})[op] = i
    return readers


MAX_OPS = 4                       # the most ops recomputed for one collected value


def _loop(graph, loop, readers):
    found = _candidates(graph, loop, readers)
    if not found or len(_missing(loop, found)) >= len(found):
        return False
    _apply(graph, loop, found)
    return True


def _candidates(graph, loop, readers=None):
    """{k: (readers, sources)}: the collections k of `loop` that can be recomputed in the
    backward loops reading them (see `_stack_readers`) from the loop variables `sources`.
    `readers`: {tensor: {op of `graph` reading it: its place}} (made if not given)."""
    if readers is None:
        readers = _readers(graph)
    n, body = loop.attrs["n_vars"], loop.attrs["body_graph"]
    loop_vars = set(body.inputs)
    captured = {inner for _, inner in body.captures}
    found = {}
    for k, t in enumerate(body.outputs[n:]):
        if t in loop_vars:
            continue
        sources = _sources(t, loop_vars, captured)
        backward = _stack_readers(graph, loop, k, readers) if sources is not None else None
        if backward:
            found[k] = (backward, sources)
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
    recomputed = {}               # backward loop -> [(its stack_get, the tensor it reads)]
    for k, (readers, _) in chosen.items():
        for backward, gets in readers:
            recomputed.setdefault(backward, []).extend(
                (get, body.outputs[n + k]) for get in gets)
    for backward, gets in recomputed.items():
        _recompute(loop, backward, gets, stacked)
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


def _stack_readers(graph, loop, k, readers):
    """[(backward while op, [its stack_get ops of stack k])] when only such ops read
    the collection k of `loop`, else None. `readers`: {tensor: {op reading it: its place
    in the graph}}."""
    n = loop.attrs["n_vars"]
    values, index = loop.outputs[n + 1 + 2 * k], loop.outputs[n + 2 + 2 * k]
    if any(t is values or t is index for t in graph.outputs):
        return None
    users = {**readers.get(values, {}), **readers.get(index, {})}
    found = []
    for op in sorted(users, key=users.__getitem__):
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


def _recompute(loop, backward, gets, stacked):
    """Replace each (stack_get op, forward body tensor it reads) of `gets` in `backward`'s
    body by the ops computing that tensor, recomputed there from collected loop variables
    (placed just before the stack_get, which goes)."""
    n, fbody = loop.attrs["n_vars"], loop.attrs["body_graph"]
    body = backward.attrs["body_graph"]
    feeds = {t: backward.inputs[i] for _, pairs in subgraph_feeds(backward)
             for t, i in pairs if i is not None}
    fcaptures = {inner: loop.inputs[n + i] for (_, inner), i in
                 zip(fbody.captures, loop.attrs["body_map"])}
    placeholders = _Placeholders(body, feeds)
    before, renamed, replaced = {}, {}, {}
    for get, tensor in gets:
        made, ops = {}, before.setdefault(get, [])

        def make(opdef, inputs, attrs, like, name, origin):
            op = body.make_op(opdef, inputs, attrs, [(like.shape, like.dtype)], name, origin,
                              device=like.op.device)
            ops.append(op)
            return op

        def value(x):
            if x in made:
                return made[x]
            if x.op.type == "const":
                result = make(registry.get("const"), [], dict(x.op.attrs), x, x.op.name,
                              x.op.origin).outputs[0]
            elif x in fcaptures:
                result = placeholders.get(fcaptures[x])
            elif x in stacked and x is not tensor:
                k = stacked[x]
                pair = [placeholders.get(loop.outputs[n + 1 + 2 * k + j]) for j in (0, 1)]
                dims = None if x.shape.rank is None else tuple(x.shape.dims)
                result = make(registry.get("stack_get"), pair + [get.inputs[2]],
                              {"shape": dims}, x, "stack_get", get.origin).outputs[0]
            else:
                op = x.op
                inputs = [value(i) for i in op.inputs]
                like = get.outputs[0] if x is tensor else x
                copy = make(op.opdef, inputs, dict(op.attrs), like, op.name, op.origin)
                copy.original = op.original or op
                result = copy.outputs[0]
            made[x] = result
            return result

        result = value(tensor)
        renamed[get.outputs[0]] = result
        replaced[get] = result.op
        body.forget_name(get)
    ops = []
    for i, op in enumerate(body.ops):
        if i == placeholders.count:
            ops.extend(placeholders.made)
        ops.extend(before[op] if op in replaced else (op,))
    if len(body.ops) <= placeholders.count:
        ops.extend(placeholders.made)
    for op in ops:
        rename_inputs(op, renamed)
        if op.control_inputs and any(c in replaced for c in op.control_inputs):
            controls = [c for c in op.control_inputs if c not in replaced]
            for c in op.control_inputs:
                if c in replaced and replaced[c] is not op and replaced[c] not in controls:
                    controls.append(replaced[c])
            op.control_inputs = controls
    body.ops = ops
    body.finish_renaming(renamed)
    rebuild_inputs(backward, feeds)
    backward.graph._changed()


class _Placeholders:
    """The placeholders of `body` by the outer tensor feeding them (`feeds`: {placeholder:
    outer tensor}); one made for an outer tensor that feeds none goes at the place
    `count` (after as many ops as there are placeholders)."""

    def __init__(self, body, feeds):
        self.body, self.feeds = body, feeds
        self.count = len(body.inputs) + len(body.captures)
        self.made = []
        self.by_outer = {}
        for t, source in feeds.items():
            if t.op.graph is body:
                self.by_outer.setdefault(source, t)

    def get(self, outer):
        inner = self.by_outer.get(outer)
        if inner is None:
            op = self.body.make_op(registry.get("capture"), [], {}, [(outer.shape, outer.dtype)],
                                   outer.op.name, outer.op.origin)
            self.made.append(op)
            inner = self.by_outer[outer] = op.outputs[0]
            self.body.captures.append((outer, inner))
            self.feeds[inner] = outer
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
