"""Pruning: drop the operations nothing needs.

An operation is needed when an output of the graph depends on it (by data or
control edges), or when it is stateful: assignments, print, assertions, random
ops, py_function, or a cond/while/call containing one always run, in program
order (automatic control dependencies made them the graph's control outputs).
Sub-graph inputs (captures) that nothing reads any more are dropped together
with the op inputs that fed them, and so are the values a while loop collects at
every iteration for gradients (`stacks`) when no gradient reads them.

    graph f(x: f32[]) {                          graph f(x: f32[]) {
      unused: f32[] = exp(x)                       const: f32[] = const[value=1.]()
      const: f32[] = const[value=1.]()      ==>    add: f32[] = add(x, const)
      add: f32[] = add(x, const)                   print(x)
      print(x)                                     return add
      return add                                 }
    }
"""
from . import drop_feeds, each_graph, known_op

__all__ = ["run"]

_INPUTS = ("placeholder", "capture")


def run(graph):
    return each_graph(graph, _prune)


def _prune(graph):
    """Prune `graph` until nothing is left to drop (its sub-graphs are pruned already:
    each_graph goes innermost first), so that pruning twice finds nothing the second time."""
    changed = False
    while _prune_once(graph):
        changed = True
    return changed


def _prune_once(graph):
    changed = _drop_dead(graph)
    for loop in _drop_unread_stacks(graph):          # their bodies computed them
        each_graph(loop.attrs["body_graph"], _prune)
        changed = True
    return _drop_unread_feeds(graph) or changed


def _drop_dead(graph):
    roots = list(graph.control_outputs)
    roots += [op for op in graph.ops if op.type in _INPUTS or op.stateful]
    needed = graph.needed_set(graph.outputs, (), roots)
    dead = [op for op in graph.ops if op not in needed] if len(needed) != len(graph.ops) else []
    graph.remove_ops(dead)
    return bool(dead)


def _drop_unread_feeds(graph):
    """Drop sub-graph placeholders nothing in their sub-graph reads."""
    changed = False
    for op in graph.ops:
        subs = op.subgraphs()
        if not subs:
            continue
        unread = set()
        for sub in subs:
            read = {t for o in sub.ops for t in o.inputs}
            read.update(sub.outputs)
            unread.update(t for t in list(sub.inputs) + [i for _, i in sub.captures]
                          if t not in read)
        if unread:
            changed = drop_feeds(op, unread) or changed
    return changed


def _drop_unread_stacks(graph):
    """Drop what a while loop collects at every iteration (`stacks`, kept for gradients:
    its body outputs past the loop variables) when nothing reads the collection; the
    loops whose collections went."""
    loops = [op for op in graph.ops
             if op.type == "while" and known_op(op) and op.attrs.get("stacks")]
    if not loops:
        return []
    read = {t for op in graph.ops for t in op.inputs}
    read.update(graph.outputs)
    changed = []
    for op in loops:
        n, count, body = op.attrs["n_vars"], op.attrs["stacks"], op.attrs["body_graph"]
        pairs = [op.outputs[n + 1 + 2 * k:n + 3 + 2 * k] for k in range(count)]
        keep = [k for k, pair in enumerate(pairs) if any(t in read for t in pair)]
        if len(keep) == count:
            continue
        body.outputs = body.outputs[:n] + [body.outputs[n + k] for k in keep]
        body._changed()
        op.outputs = op.outputs[:n + 1] + tuple(t for k in keep for t in pairs[k])
        for i, t in enumerate(op.outputs):
            t.index = i
        op.attrs = dict(op.attrs, stacks=len(keep))
        changed.append(op)
    if changed:
        graph._changed()
    return changed
