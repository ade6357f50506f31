"""What a trace that raised still does: the prints it staged before the failure.

Python run eagerly prints, then raises. Traced, its prints became graph ops, and a trace
that raises (an exception on Python values, one re-raised after a `print` in a handler)
makes a graph that never runs: the prints would be lost. So when the outermost trace of a
call fails, the prints it staged before the failure run on the call's own values, then
the error is raised:

    @rt.function
    def f(x):
        rt.print("x is", x)
        raise ValueError("bad")      # prints "x is 2.0", then raises ValueError

Only prints and checks (asserts, staged raises: a failing one is the error eager code
would have raised first) run, with what they read, in program order up to the first op
with another effect (a variable update, a random number): the failed call has no effects
but its prints. An error whose class sets `runs_staged_prints = False` (the compiler's
refusals: the program did not run) runs nothing.
"""
from . import devices
from .executor import Plan
from .passes import placement
from .tensor import EagerTensor

_EMITTED = frozenset({"print", "assert", "raise"})


def remember(exc, graph):
    """Note on `exc` the graph its trace had staged when it raised (the outermost trace
    notes it last)."""
    try:
        exc._rt_failed_trace = graph
    except AttributeError:
        pass


def run_staged_prints(exc, tensors):
    """Run the prints the failed trace noted on `exc` staged, fed the call's `tensors`
    (eager: an outermost call), unless they read values the call did not give."""
    graph = getattr(exc, "_rt_failed_trace", None)
    if graph is None:
        return
    del exc._rt_failed_trace
    if not getattr(exc, "runs_staged_prints", True):
        return                  # the program was refused, not run (a compiler's error)
    if len(tensors) != len(graph.inputs) or not all(
            type(t) is EagerTensor for t in tensors):
        return
    outer = [t for t, _ in graph.captures]
    if not all(hasattr(t, "_value") for t in outer):
        return
    targets = _effects_before_failure(graph)
    if not targets:
        return
    placement.run(graph)        # (ops of a device without their kernel run on cpu:0)
    feeds = list(graph.inputs) + [inner for _, inner in graph.captures]
    values = [t._value for t in tensors] + [t._value for t in outer]
    if devices.placing:
        values = [devices.resolve(t.op.device).put(v) for t, v in zip(feeds, values)]
    plan = Plan(graph, [], feeds, targets)
    try:
        plan.run(values)
    except Exception as e:
        raise e from None       # a check failing first: the error eager code raises


def _effects_before_failure(graph):
    targets = []
    for op in graph.ops:
        if not op.stateful:
            continue
        if not _only_emits(op):
            break
        targets.append(op)
    return targets


def _only_emits(op):
    """Whether the op's effects are prints and checks only (its sub-graphs' too)."""
    if op.type in _EMITTED:
        return True
    if op.opdef.stateful:
        return False
    return all(_only_emits(inner) for graph in op.subgraphs() for inner in graph.ops
               if inner.stateful)
