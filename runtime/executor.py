"""Running graphs: the plain executor, and the switch between it and the fast one.

`run_graph(graph, feed_values)` runs a function-like graph (inputs, then
captures) the way `runtime.config` says: on the graph the passes optimized
(`runtime.passes`), with the fast executor (`runtime.codegen_executor`, source
compiled once per graph) or the plain one below. `runner_for` does the same for
TF1 sessions' fetches and feeds.

The plain executor: a `Plan` is computed once per (graph, fetches, feeds): the
needed operations in creation (topological) order, a slot per tensor, and for
each step the slots whose last consumer it is, which are released right after
it runs. Kernels run in an eager scope (a py_function inside a graph runs
eagerly). A failing kernel raises an error naming the operation and the user's
source line that made it (`op_error`, shared by both executors). A run that fails
puts back the state it wrote (variables, random generators: `runtime.rollback`).
"""
import collections
import threading

import numpy as np

from . import config
from . import context
from . import devices
from . import rollback
from .errors import OpError, is_program_exception, with_location, wrap_kernel_error

__all__ = ["Plan", "Step", "run_graph", "function_runner", "plan_for", "runner_for", "op_error",
           "optimized_graph"]

_plan_lock = threading.Lock()


class Step(collections.namedtuple("Step", "op kernel ins outs attrs multi frees host")):
    """One op of a plan: its input and output slots, the slots freed after it runs, and
    whether it runs on the host (its kernel is numpy's: rank-0 results may be numpy
    scalars, made arrays; a device's results are its arrays)."""

    __slots__ = ()


class Plan:
    """A schedule for computing `fetches` from `feeds` in `graph`."""

    __slots__ = ("graph", "steps", "n_slots", "feed_slots", "fetch_slots", "ops")

    def __init__(self, graph, fetches, feeds, extra_ops=()):
        fed = {id(t) for t in feeds}
        ops = graph.needed_ops(fetches, feeds, extra_ops)

        slots = {}

        def slot(t):
            s = slots.get(id(t))
            if s is None:
                s = slots[id(t)] = len(slots)
            return s

        self.feed_slots = [slot(t) for t in feeds]
        steps = []
        last_use = {}
        for i, op in enumerate(ops):
            ins = [slot(t) for t in op.inputs]
            for s in ins:
                last_use[s] = i
            # An output that is also fed keeps its fed value: the op's result is discarded.
            outs = [slot(t) if id(t) not in fed else _discard_slot(slots) for t in op.outputs]
            device = devices.resolve(op.device)
            steps.append(Step(op, op.opdef.kernel_for(device), ins, outs, op.attrs,
                              op.opdef.multi, [], device.is_host))
        self.fetch_slots = [slot(t) for t in fetches]
        keep = set(self.fetch_slots)
        for s, i in last_use.items():
            if s not in keep:
                steps[i].frees.append(s)
        # Outputs nobody reads are dropped right after their op runs.
        for step in steps:
            for s in step.outs:
                if s not in last_use and s not in keep:
                    step.frees.append(s)
        self.steps = steps
        self.n_slots = len(slots)
        self.graph = graph
        self.ops = ops

    def run(self, feed_values):
        values = [None] * self.n_slots
        for s, v in zip(self.feed_slots, feed_values):
            values[s] = v
        step = None
        context.push(None)
        try:
            for step in self.steps:
                op, kernel, ins, outs, attrs, multi, frees, host = step
                result = kernel(*[values[s] for s in ins], **attrs)
                if outs:
                    if multi:
                        for s, r in zip(outs, result):
                            values[s] = r if type(r) is np.ndarray or not host else \
                                np.asarray(r)
                    else:
                        values[outs[0]] = (result if type(result) is np.ndarray or not host
                                           else np.asarray(result))
                for s in frees:
                    values[s] = None
        except OpError as e:
            if e.op is None and step is not None:
                raise op_error(step.op, e) from e
            raise
        except Exception as e:  # noqa: BLE001 - re-raised naming the operation
            error = op_error(step.op, e)
            if error is e:
                raise
            raise error from e
        finally:
            context.pop()
        return [values[s] for s in self.fetch_slots]


def _discard_slot(slots):
    """A fresh slot nobody reads (so it is freed as soon as it is written)."""
    key = ("discard", len(slots))
    slots[key] = len(slots)
    return slots[key]


def op_error(op, exc):
    """The error a failing kernel raises: it names `op` (the traced op, when `op` is a
    pass's copy of it) and shows the user's line."""
    if is_program_exception(exc):
        return exc
    op = op.original or op
    text = with_location(f"{op.describe()} failed: {exc}", op.origin)
    if isinstance(exc, OpError):
        return type(exc)(text, op=op, origin=op.origin)
    return wrap_kernel_error(exc, text, op=op, origin=op.origin)


def plan_for(graph, fetches=None, feeds=None):
    """The (cached) plan computing a graph's outputs from its inputs and captures."""
    key = None
    if fetches is None:
        plans = graph._plans
        plan = plans.get(None)
        if plan is not None:
            return plan
        fetches = graph.outputs
        feeds = list(graph.inputs) + [inner for _, inner in graph.captures]
        plan = Plan(graph, fetches, feeds, graph.control_outputs)
        with _plan_lock:
            plans[key] = plan
        return plan
    return Plan(graph, fetches, feeds or [])


def run_graph(graph, feed_values):
    """Run a function-like graph: feed inputs then captures, return its flat outputs."""
    run = graph._plans.get(config._state["version"])
    if run is None:
        run = function_runner(graph)
    return run(feed_values)


def function_runner(graph):
    """How `run_graph` runs `graph` under the current settings (kept until they change):
    a function of the feed values returning the output values. (A lazily compiled
    graph's first run: the plain plan of the graph as traced, not kept.)"""
    version = config._state["version"]
    jit = getattr(graph, "jit_compile", False)
    if _first_run_interpreted(graph, version, jit):
        run = _undone_on_error(plan_for(graph).run, graph.ops)
        return _placing_feeds(run, list(graph.inputs) + [t for _, t in graph.captures]) \
            if devices.placing else run
    target = optimized_graph(graph)
    run = _undone_on_error(_runner(target, jit), graph.ops)
    if devices.placing:
        run = _placing_feeds(run, list(target.inputs) + [t for _, t in target.captures])
    graph._plans[version] = run
    return run


def _undone_on_error(run, ops):
    """`run`, undoing the state it wrote if it fails (`runtime.rollback`), when one of
    `ops` is stateful (counting the ops of its branches, loop bodies, called functions)."""
    if any(op.stateful for op in ops):
        return rollback.undone_on_error(run)
    return run


def _placing_feeds(run, placeholders):
    """`run`, given each fed value on the device of the placeholder it feeds."""
    puts = [devices.resolve(t.op.device).put for t in placeholders]
    return lambda values: run([put(v) for put, v in zip(puts, values)])


def _first_run_interpreted(graph, version, jit):
    """Is this the first run of `graph` under these settings, to run step by step as
    traced (rt.config.set_lazy_compile): the fast executor's, of a small loop-free graph
    whose ops all run on cpu:0 (one that needs placing runs as the placement pass says)?"""
    if not config._state["lazy_compile"] or jit or config.get_executor() != "fast":
        return False
    key = ("interpreted", version)
    if key in graph._plans:
        return False
    graph._plans[key] = True
    from .passes import placement
    return _small_and_loop_free(graph) and not placement.needed(graph)


def _small_and_loop_free(graph):
    """No `while` in `graph` or its sub-graphs, whose values (shapes known while tracing)
    total at most config.LAZY_ELEMENTS elements."""
    from .passes import graphs_in
    total = 0
    for g in graphs_in(graph):
        for op in g.ops:
            if op.type == "while":
                return False
            for t in op.outputs:
                n = t.shape.num_elements()
                if n is None:
                    return False
                total += n
    return total <= config.LAZY_ELEMENTS


def optimized_graph(graph):
    """`graph` as the passes rewrite it under the current settings (kept per setting);
    `graph` itself when it is already optimized, or optimizations are off and every op
    runs on cpu:0 (else only the placement pass runs)."""
    from .passes import placement
    if graph.optimized or not (config.get_optimizations() or placement.needed(graph)):
        return graph
    from . import passes
    key = ("optimized", config._state["version"])
    target = graph._plans.get(key)
    if target is None:
        target = graph._plans[key] = passes.optimize(graph)
    return target


def _runner(graph, jit_compile=False):
    """The executor config names; "compiled" also for a jit_compile graph (unless the
    plain one is asked for), the fast one instead when numba is missing."""
    executor = config.get_executor()
    if executor == "plain":
        return plan_for(graph).run
    from .codegen_executor import compile_graph
    if executor == "compiled" or jit_compile:
        from . import compiled
        if compiled.available():
            return compile_graph(graph, jit=True).fn
        compiled.warn_unavailable()
    return compile_graph(graph).fn


def runner_for(graph, fetches, feeds, targets):
    """A function of the feed values returning the fetches' values (TF1 sessions)."""
    from . import passes
    from .passes import placement
    if config.get_executor() == "plain" and not (config.get_optimizations()
                                                 or placement.needed(graph)):
        plan = Plan(graph, fetches, feeds, targets)
        return _undone_on_error(plan.run, plan.ops)
    from .graph import clone_graph
    program = clone_graph(graph, graph.outer_graph, feeds, fetches, targets)
    run = _undone_on_error(_runner(passes.optimize_in_place(program)), program.ops)
    return _placing_feeds(run, program.inputs) if devices.placing else run
