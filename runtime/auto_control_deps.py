"""Automatic control dependencies: program order for state, as a pass over a traced graph.

Eagerly, Python statement order is execution order. A graph only orders what
data edges order, so after tracing this pass adds control edges:
- every stateful op (assign, print, assert, random, py_function, or a cond /
  while / call containing one) runs after the previous stateful op;
- a write to a variable runs after every read of it since the previous write;
- a read of a variable runs after the last write to it.
Stateful ops become the graph's control outputs: they always run when the graph
runs (never pruned) and the graph's outputs are ready only after them.
"""

__all__ = ["add_control_dependencies"]


def add_control_dependencies(graph):
    last_stateful = None
    last_write = {}
    pending_reads = {}
    stateful_ops = []
    for op in graph.ops:
        reads, writes, stateful = op.effects()
        if not (reads or writes or stateful):
            continue
        deps = []
        for r in reads | writes:
            w = last_write.get(r)
            if w is not None:
                deps.append(w)
        if stateful or writes:
            if last_stateful is not None:
                deps.append(last_stateful)
            for r in writes:
                deps.extend(pending_reads.pop(r, ()))
                last_write[r] = op
            last_stateful = op
            stateful_ops.append(op)
        else:
            for r in reads:
                pending_reads.setdefault(r, []).append(op)
        data_inputs = {t.op for t in op.inputs}
        for dep in deps:
            if dep not in data_inputs:
                op.add_control_input(dep)
    graph.control_outputs = stateful_ops
    graph._plans.clear()
    return graph
