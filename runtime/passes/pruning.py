"""Pruning: drop the operations nothing needs.

An operation is needed when an output of the graph depends on it (by data or
control edges), or when it is stateful: assignments, print, assertions, random
ops, py_function, or a cond/while/call containing one always run, in program
order (automatic control dependencies made them the graph's control outputs).
Sub-graph inputs (captures) that nothing reads any more are dropped together
with the op inputs that fed them.

    graph f(x: f32[]) {                          graph f(x: f32[]) {
      unused: f32[] = exp(x)                       const: f32[] = const[value=1.]()
      const: f32[] = const[value=1.]()      ==>    add: f32[] = add(x, const)
      add: f32[] = add(x, const)                   print(x)
      print(x)                                     return add
      return add                                 }
    }
"""
from . import drop_feeds, each_graph

__all__ = ["run"]

_INPUTS = ("placeholder", "capture")


def run(graph):
    return each_graph(graph, _prune)


def _prune(graph):
    changed = _drop_unread_feeds(graph)
    roots = list(graph.control_outputs)
    roots += [op for op in graph.ops if op.stateful or op.type in _INPUTS]
    needed = set(graph.needed_ops(graph.outputs, (), roots))
    dead = [op for op in graph.ops if op not in needed]
    graph.remove_ops(dead)
    return changed or bool(dead)


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
