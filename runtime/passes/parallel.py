"""Inter-op parallelism: independent heavy ops run at once on a thread pool.

numpy releases the GIL inside big matmuls, reductions and elementwise loops, so
two such ops that do not depend on each other can run on two cores. A cost
model (`cost`: about one unit per multiply-add or element touched, from static
shapes) marks an op heavy above `HEAVY`; small ops stay on the calling thread,
where a hop to the pool would cost more than it saves. Matmuls count only when the
BLAS runs each on one thread (OPENBLAS_NUM_THREADS=1 and the like): a multithreaded
BLAS already uses every core for one matmul. A heavy op with another
heavy op independent of it is marked `async`: the executor submits it and
waits for its result where the first reader needs it. The graph is reordered
(a topological order; stateful ops keep their order) so independent chains
interleave:

    a1 = matmul(x, w)                             a1 = matmul(x, w)   [async]
    a2 = matmul(a1, w)                            b1 = matmul(y, w)   [async]
    b1 = matmul(y, w)                     ==>     a2 = matmul(a1, w)  [async]
    b2 = matmul(b1, w)                            b2 = matmul(b1, w)  [async]
"""
import heapq
import os

from .. import config
from . import each_graph

__all__ = ["run", "cost", "HEAVY"]

HEAVY = 1 << 23                   # ~8M multiply-adds: about a millisecond
PARALLEL_MATMULS = None           # None: only when the BLAS runs one thread per matmul


def run(graph):
    if config.get_inter_op_threads() <= 1:
        return False
    matmuls = _blas_single_threaded()
    return each_graph(graph, lambda g: _schedule(g, matmuls))


def _elements(t):
    shape = t.shape
    return shape.num_elements() if shape.is_fully_defined() else None


def _blas_single_threaded():
    """Does one matmul use one core? A multithreaded BLAS (the default) already spreads
    each over all of them: running two at once would only make them compete."""
    if PARALLEL_MATMULS is not None:
        return PARALLEL_MATMULS
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        value = os.environ.get(name, "").strip()
        if value.isdigit():
            return int(value) <= 1
    return (os.cpu_count() or 1) <= 1


def cost(op, matmuls=None):
    """Work of `op` in multiply-adds or elements touched; 0 when not known statically
    (or for a matmul, when the BLAS parallelizes it already; `matmuls`: whether it
    does not, when known)."""
    if op.type == "matmul":
        if not (_blas_single_threaded() if matmuls is None else matmuls):
            return 0
        a, b = op.inputs
        n_out = _elements(op.outputs[0])
        if n_out is None or a.shape.rank is None or a.shape.dims[-1] is None:
            return 0
        k = a.shape.dims[-2] if op.attrs.get("transpose_a") and a.shape.rank > 1 \
            else a.shape.dims[-1]
        return n_out * (k or 0)
    if op.type.startswith("reduce_") or op.type in (
            "softmax", "log_softmax", "softmax_cross_entropy_with_logits"):
        return _elements(op.inputs[0]) or 0
    if op.opdef.elementwise or op.type == "fused":
        n = _elements(op.outputs[0]) or 0
        return n * (len(op.attrs["body"].ops) if op.type == "fused" else 1)
    return 0


def _parallel_ops(graph, matmuls):
    """Heavy ops that have at least one heavy op independent of them: neither among
    their ancestors nor among their descendants (bitmasks over the heavy ops)."""
    heavy = [op for op in graph.ops if len(op.outputs) == 1 and cost(op, matmuls) >= HEAVY
             and not op.stateful and not op.subgraphs()]
    if len(heavy) < 2:
        return set()
    bit = {op: 1 << i for i, op in enumerate(heavy)}
    deps = {op: [t.op for t in op.inputs] + list(op.control_inputs) for op in graph.ops}
    ancestors = {}                        # op -> the heavy ops it depends on
    for op in graph.ops:
        mask = 0
        for dep in deps[op]:
            mask |= ancestors.get(dep, 0) | bit.get(dep, 0)
        ancestors[op] = mask
    descendants = {op: 0 for op in graph.ops}    # op -> the heavy ops depending on it
    for op in reversed(graph.ops):
        below = descendants[op] | bit.get(op, 0)
        for dep in deps[op]:
            if dep in descendants:
                descendants[dep] |= below
    return {op for op in heavy
            if ancestors[op].bit_count() + descendants[op].bit_count() < len(heavy) - 1}


def _schedule(graph, matmuls):
    parallel = _parallel_ops(graph, matmuls)
    if not parallel:
        return False
    for op in parallel:
        op.notes = dict(op.notes or {}, **{"async": True})
    graph.ops = _interleave(graph.ops, parallel)
    graph._changed()
    return True


def _interleave(ops, first):
    """A topological order of `ops` starting the ops in `first` as early as possible;
    otherwise the original order (ops with effects keep theirs)."""
    position = {op: i for i, op in enumerate(ops)}
    deps = {op: {t.op for t in op.inputs if t.op in position} |
            {c for c in op.control_inputs if c in position} for op in ops}
    previous = None
    for op in ops:                        # state: program order, as traced
        r, w, stateful = op.effects()
        if r or w or stateful:
            if previous is not None:
                deps[op].add(previous)
            previous = op
    users = {op: [] for op in ops}
    for op, ds in deps.items():
        for d in ds:
            users[d].append(op)
    level = {}                  # how many of `first` lie on the longest path to an op
    for op in ops:
        level[op] = max((level[d] + (d in first) for d in deps[op]), default=0)

    def key(op):                # `first` ops early, chains side by side, else as traced
        return (op not in first, level[op], position[op])

    waiting = {op: len(ds) for op, ds in deps.items()}
    ready = [(key(op), position[op], op) for op in ops if not waiting[op]]
    heapq.heapify(ready)
    order = []
    while ready:
        op = heapq.heappop(ready)[2]
        order.append(op)
        for user in users[op]:
            waiting[user] -= 1
            if not waiting[user]:
                heapq.heappush(ready, (key(user), position[user], user))
    return order
