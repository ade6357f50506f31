"""Graph passes: rewrite a traced graph into one computing the same values with less work.

`optimize(graph)` returns a rewritten copy (the traced graph stays as the user
built it; executors run the copy). The passes, one module each:

    algebraic         x*1, x+0, -(-x), transpose of transpose, reshape chains
    constant_folding  ops whose inputs are all constants run once, while optimizing
    cse               identical pure ops computed once
    pruning           ops nothing needs are dropped (stateful ones always stay)
    fusion            chains of elementwise ops become one `fused` op
    parallel          independent heavy ops marked to run at once on a thread pool
    memory            buffer reuse (numpy `out=`) and frees after each value's last use
    rematerialization loops' gradients recompute cheap values instead of keeping them
                      (off by default: `rt.config.set_rematerialization(True)`; under a
                      memory budget, the cheapest until the planned peak fits)
    quantize          matmul(x, dequantize(q, s)) -> matmul(x, cast(q)) * s, for weights
                      `rt.quantize.weights` quantized (equal up to float32 rounding)
    placement         each op's device, and `copy` ops where values cross devices (not
                      optional: it runs, optimizations on or off, once a device other
                      than cpu:0 is in use)

Pruning, simplification, folding and CSE repeat while folding finds work (pruning first,
so CSE keeps an op that runs; see _ENABLING); then placement; fusion, parallel and memory
come last. Each pass
is one sweep (or a few) over the ops in order: time linear in the graph's size.
Every pass rewrites the graph and every sub-graph it owns (cond branches, loop
bodies, called functions) and returns whether it changed anything.
"""
import contextlib
import functools
import gc
import time

from .. import config
from ..graph import clone_graph

__all__ = ["optimize", "optimize_in_place", "planned_peak", "graphs_in", "each_graph",
           "no_collections", "rename_inputs", "subgraph_feeds", "drop_feeds", "rebuild_inputs",
           "known_op"]

_ROUNDS = 4
# The passes whose rewrites may give the others (or themselves) work in the next round: a
# folded constant can be `x * 1` for algebraic, or feed a sub-graph; rematerialization
# and quantize add ops. Pruning only drops what nothing reads, CSE only merges (once for all: it
# hash-conses in graph order), algebraic renames values to existing ones (in one sweep,
# before folding and CSE run in the same round): none of them makes work for a next round.
_ENABLING = frozenset({"constant_folding", "rematerialization", "quantize"})


def optimize(graph, passes=None, memory_budget=None, timings=None):
    """A copy of `graph` rewritten by `passes` (names; default: those config enables),
    planned within `memory_budget` bytes (default: the function's, else config's)."""
    budget = memory_budget or getattr(graph, "memory_budget", None)
    with no_collections():
        return optimize_in_place(clone_graph(graph, graph.outer_graph), passes, budget,
                                 timings)


def optimize_in_place(graph, passes=None, memory_budget=None, timings=None):
    """Rewrite `graph` (a copy nobody else runs) by the passes; returns it. Over a memory
    budget (`memory_budget`, else config's), loops' gradients recompute values until the
    planned peak fits (`rematerialization.fit`). `timings`, a dict, gains the seconds each
    pass took (benchmarks/scale.py fits how they grow)."""
    with no_collections():
        return _optimize(graph, passes, memory_budget, timings)


@contextlib.contextmanager
def no_collections():
    """No cyclic garbage collection while copying and optimizing (or tracing): the passes
    make and drop many small objects, and a collection in the middle walks every object
    of the program (on a 20,000-op graph, most of the time) to free little; the next one
    frees the dropped ops."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _optimize(graph, passes, memory_budget, timings):
    from . import (algebraic, constant_folding, cse, fusion, memory, parallel, placement,
                   pruning, quantize, rematerialization)
    enabled = config.get_optimizations() if passes is None else frozenset(passes)
    run = _run if timings is None else functools.partial(_timed, timings)
    simplify = [(name, module) for name, module in [
        ("rematerialization", rematerialization), ("pruning", pruning),
        ("algebraic", algebraic), ("quantize", quantize), ("constant_folding", constant_folding),
        ("cse", cse)]
        if name in enabled]
    pruned = False                  # and nothing changed since (pruning twice finds nothing)
    for _ in range(_ROUNDS):
        again = False
        for name, module in simplify:
            found = run(name, module, graph)
            if name == "pruning":
                pruned = True
            elif found:
                pruned = pruned and name == "cse"      # a merged op's inputs stay read
                again = again or name in _ENABLING
        if not again:
            break
    if "pruning" in enabled and not pruned:
        run("pruning", pruning, graph)
    budget = memory_budget or config.get_memory_budget()
    if budget is not None and enabled:
        rematerialization.fit(graph, budget, lambda g: planned_peak(g, enabled))
    run("placement", placement, graph)
    for name, module in [("fusion", fusion), ("parallel", parallel), ("memory", memory)]:
        if name in enabled:
            run(name, module, graph)
    return graph


def _run(name, module, graph):
    return module.run(graph)


def _timed(timings, name, module, graph):
    start = time.perf_counter()
    try:
        return module.run(graph)
    finally:
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - start


def planned_peak(graph, passes):
    """The peak memory the plan of `graph` will hold once the last passes among `passes`
    (pruning, fusion, the memory plan) rewrote it (`memory.planned_peak`; None if unknown)."""
    from . import fusion, memory, parallel, pruning
    copy = clone_graph(graph, graph.outer_graph)
    for name, module in (("pruning", pruning), ("fusion", fusion), ("parallel", parallel)):
        if name in passes:
            module.run(copy)
    if "memory" in passes:
        memory.plan(copy)
    return memory.planned_peak(copy)


def graphs_in(graph):
    """`graph` and every sub-graph nested in it, innermost first."""
    for op in graph.ops:
        for sub in op.subgraphs():
            yield from graphs_in(sub)
    yield graph


def each_graph(graph, rewrite):
    """Apply `rewrite(g) -> bool` to `graph` and all sub-graphs; True if any changed."""
    changed = False
    for g in list(graphs_in(graph)):
        changed = rewrite(g) or changed
    return changed


def rename_inputs(op, renamed):
    """In a sweep over a graph's ops in order: read `renamed[t]` ({old: new}, the values
    earlier ops of the sweep replaced) wherever `op` reads `t`."""
    if renamed:
        for t in op.inputs:
            if t in renamed:
                op.inputs = [renamed.get(x, x) for x in op.inputs]
                return


# -- which op input feeds which sub-graph placeholder ------------------------------------

_KNOWN_ATTRS = {           # op type: (attributes it always has, ones it may have)
    "cond": ({"then_graph", "else_graph", "then_map", "else_map"}, {"n_outputs"}),
    "while": ({"n_vars", "cond_graph", "body_graph", "cond_map", "body_map",
               "maximum_iterations"}, {"stacks"}),
    "call": ({"f"}, set()),
    "fused": ({"body"}, set()),
}


def known_op(op):
    """Is `op` a cond/while/call/fused op whose attributes we know?"""
    known = _KNOWN_ATTRS.get(op.type)
    return known is not None and known[0] <= set(op.attrs) <= known[0] | known[1]


def subgraph_feeds(op):
    """[(sub-graph, [(placeholder tensor, index of the op input feeding it, or None)])].

    None marks a loop variable (fed by the previous iteration). An op of another
    kind, or with attributes we do not know, gives [] (passes then leave it alone).
    """
    attrs = op.attrs
    if not known_op(op):
        return []
    if op.type == "cond":
        return [(attrs[g], [(inner, 1 + i) for (_, inner), i in
                            zip(attrs[g].captures, attrs[m])])
                for g, m in (("then_graph", "then_map"), ("else_graph", "else_map"))]
    if op.type == "while":
        n = attrs["n_vars"]
        out = []
        for g, m in (("cond_graph", "cond_map"), ("body_graph", "body_map")):
            sub = attrs[g]
            feeds = [(t, None) for t in sub.inputs]
            feeds += [(inner, n + i) for (_, inner), i in zip(sub.captures, attrs[m])]
            out.append((sub, feeds))
        return out
    sub = attrs["f" if op.type == "call" else "body"]
    phs = list(sub.inputs) + [inner for _, inner in sub.captures]
    return [(sub, [(t, i) for i, t in enumerate(phs)])]


def drop_feeds(op, unused):
    """Remove the placeholders in `unused` (sub-graph tensors nothing reads) from the
    sub-graphs of `op`, and the op inputs only they read. Loop variables stay."""
    feeds = subgraph_feeds(op)
    source = {t: op.inputs[i] for _, pairs in feeds for t, i in pairs if i is not None}
    changed = False
    for sub, pairs in feeds:
        dropped = {t for t, i in pairs if t in unused and i is not None}
        if dropped:
            changed = True
            sub.inputs = [t for t in sub.inputs if t not in dropped]
            sub.captures = [(o, t) for o, t in sub.captures if t not in dropped]
            sub.remove_ops([t.op for t in dropped])
    if changed:
        rebuild_inputs(op, source)
        op.graph._changed()
    return changed


def rebuild_inputs(op, source):
    """Set `op`'s inputs (and index maps) from what its sub-graphs read now;
    `source[placeholder]` is the op input that feeds it."""
    attrs = op.attrs
    if op.type in ("call", "fused"):
        sub = attrs["f" if op.type == "call" else "body"]
        op.inputs = [source[t] for t in list(sub.inputs) + [i for _, i in sub.captures]]
        return
    if op.type == "cond":
        head, groups = op.inputs[:1], (("then_graph", "then_map"), ("else_graph", "else_map"))
    else:
        head = op.inputs[:attrs["n_vars"]]
        groups = (("cond_graph", "cond_map"), ("body_graph", "body_map"))
    tail = op.inputs[-1:] if attrs.get("maximum_iterations") == "input" else []
    union, index = [], {}
    for g, m in groups:
        positions = []
        for _, inner in attrs[g].captures:
            outer = source[inner]
            if outer not in index:
                index[outer] = len(union)
                union.append(outer)
            positions.append(index[outer])
        attrs[m] = tuple(positions)
    op.inputs = list(head) + union + tail
