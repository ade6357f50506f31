"""Memory plan: write results into dead buffers (numpy `out=`), free values after last use.

Annotates operations (shown in the graph's text form, followed by the fast executor):
  free a, b      the values whose last reader this op is: dropped right after it
  reuse a        an elementwise op writes its result into `a`'s array (`out=a`)
  donate a       a fused op may write into the array of input `a` (dead after it)
  append 1       a while loop whose loop variable 1 only grows by one row per
                 iteration (`outputs.append(h)` in a converted loop) keeps a list
                 of rows and concatenates once, after the loop, instead of copying
                 the growing array every iteration

Reuse and appends are numpy's (ops on cpu:0). An array may be reused only when this
graph made it (an op declared `fresh`: never a constant, an input, a variable's array,
or a value a py_function saw or an async op still reads) and every value that may view
it (reshape, transpose, getitem, identity... anything not `fresh` may alias its inputs)
is dead.

    graph f(x: f32[1024]) {                        graph f(x: f32[1024]) {
      exp: f32[1024] = exp(x)                        exp: f32[1024] = exp(x)  [free x]
      mul: f32[1024] = multiply(exp, exp)  ==>       mul: f32[1024] = multiply(exp, exp)  [reuse exp]
      return mul                                     return mul
    }                                              }
"""
from .. import devices
from . import each_graph, subgraph_feeds

__all__ = ["run", "plan", "frees", "accumulators", "planned_peak", "trip_count"]


def run(graph):
    plan(graph)
    return False


def plan(graph, owned_inputs=(), escaping=()):
    """Annotate `graph` and its sub-graphs (see the module docstring); `owned_inputs`
    are placeholders whose arrays the graph may overwrite (a fused op's donations);
    `escaping` are values kept past the graph's run (rows a loop appends)."""
    for op in graph.ops:
        op.notes = {"async": True} if op.notes and op.notes.get("async") else None
    last = _last_uses(graph)
    for t in graph.outputs:
        last[t] = len(graph.ops)                    # outputs live past the end
    store = _Storage(graph, owned_inputs, last)
    store._escape(escaping)
    free_after = frees_after(graph, last)
    for i, op in enumerate(graph.ops):
        if free_after.get(op):
            _note(op, "free", free_after[op])
        if op.type == "fused":
            donated = store.donations(op.inputs, i)
            if donated:
                _note(op, "donate", donated)
            body = op.attrs["body"]
            ids = {id(t) for t in donated}
            plan(body, {ph for ph, x in zip(body.inputs, op.inputs) if id(x) in ids})
            continue
        out = op.outputs[0] if len(op.outputs) == 1 else None
        if out is not None and op.opdef.ufunc is not None and _static(out) and _on_host(op):
            donor = next((t for t in op.inputs if store.reusable(t, i) and _static(t)
                          and t.shape == out.shape and t.dtype == out.dtype), None)
            if donor is not None:
                _note(op, "reuse", donor)
                store.merge(out, donor)
        appended = ()
        if op.type == "while" and op.notes and op.notes.get("append"):
            # The rows a loop appends stay in its list of rows: never overwritten.
            appended = [item for _, _, item in accumulators(op).values()]
        for sub in op.subgraphs():
            plan(sub, escaping=appended if sub is op.attrs.get("body_graph") else ())
    return graph


class _Storage:
    """Which arrays each value of a graph may share memory with (a union-find of buffers).

    Every `fresh` op output gets a buffer of its own, owned by the graph; any other
    output may view its inputs' buffers and some outside array (a constant, an input,
    a variable's value). A buffer dies after the last reader of any value viewing it.
    """

    def __init__(self, graph, owned_inputs, last):
        self.parent, self.maker, self.owned, self.death = {}, {}, {}, {}
        self.escaped = set()
        self.views = {}
        for t in list(graph.inputs) + [inner for _, inner in graph.captures]:
            self._new(t, t in owned_inputs)
        rows = {}
        for i, op in enumerate(graph.ops):
            if op.type == "while" and _on_host(op):
                found = accumulators(op)
                if found:
                    _note(op, "append", tuple(sorted(found)))
                    rows.update({item: i for _, _, item in found.values()})
            if op.opdef.retains_inputs or (op.notes and op.notes.get("async")):
                self._escape(op.inputs)
            for t in op.outputs:
                if t in self.views:
                    continue
                if op.opdef.fresh:
                    self._new(t, True)
                else:
                    self._new(t, False)
                    self.views[t] |= set().union(*[self.views.get(x, ()) for x in op.inputs])
        self._escape(rows)
        for t, bs in self.views.items():
            for b in bs:
                self.death[b] = max(self.death.get(b, -1), last.get(t, -1))

    def _new(self, t, owned):
        b = len(self.parent)
        self.parent[b], self.maker[b], self.owned[b] = b, t, owned
        self.views[t] = {b}

    def _escape(self, tensors):
        self.escaped.update(b for t in tensors for b in self.views.get(t, ()))

    def find(self, b):
        while self.parent[b] != b:
            b = self.parent[b]
        return b

    def roots(self, t):
        return {self.find(b) for b in self.views.get(t, ())}

    def donations(self, inputs, i):
        """The `inputs` of op `i` it may write into: reusable, and sharing no buffer with
        another of its inputs."""
        roots = [self.roots(x) for x in inputs]
        holders = {}                   # buffer -> the inputs viewing it
        for x, bs in zip(inputs, roots):
            for b in bs:
                holders.setdefault(b, set()).add(id(x))
        return [t for t, bs in zip(inputs, roots)
                if self.reusable(t, i) and all(len(holders[b]) == 1 for b in bs)]

    def reusable(self, t, i):
        """Is `t` the graph's own array, dead after op `i`, viewed by nothing alive?"""
        roots = self.roots(t)
        if len(roots) != 1:
            return False
        b, = roots
        return (self.maker[b] is t and self.owned[b] and b not in self.escaped
                and self.death[b] == i)

    def merge(self, out, donor):
        """`out` is written into `donor`'s array: one buffer from now on."""
        b, o = self.find(next(iter(self.views[donor]))), self.find(next(iter(self.views[out])))
        self.parent[o] = b
        self.maker[b] = out
        self.death[b] = max(self.death[b], self.death[o])
        if o in self.escaped:
            self.escaped.add(b)


def _on_host(op):
    """Does `op` run on cpu:0 (numpy arrays: `out=` and growing lists of rows)?"""
    return devices.resolve(op.device).is_host


def _static(t):
    """Is `t` an array worth writing into: a known shape of two elements or more?
    (numpy takes three times as long to write into a 1-element `out` as to allocate.)"""
    return t.shape.is_fully_defined() and t.shape.num_elements() > 1


def _note(op, key, value):
    if op.notes is None:
        op.notes = {}
    op.notes[key] = value


def _last_uses(graph):
    last = {}
    for i, op in enumerate(graph.ops):
        for t in op.inputs:
            last[t] = i
    return last


def frees(graph, order=None):
    """{op: [tensors to drop after it]} for running `order` (default graph.ops)."""
    ops = graph.ops if order is None else order
    last = {}
    for i, op in enumerate(ops):
        for t in op.inputs:
            last[t] = i
    for t in graph.outputs:
        last[t] = len(ops)
    return frees_after(graph, last, ops)


def frees_after(graph, last, ops=None):
    ops = graph.ops if ops is None else ops
    out = {}
    for t, i in last.items():
        if i < len(ops):
            out.setdefault(ops[i], []).append(t)
    kept = set(graph.outputs)
    for op in ops:
        for t in op.outputs:
            if t not in last and t not in kept:
                out.setdefault(op, []).append(t)
    return out


def accumulators(op):
    """{loop variable index: (concat op, expand_dims op, appended tensor)} of a while op
    whose loop variable only grows by `concat([var, expand_dims(item, 0)], 0)` (and is
    read by nothing else: no other op, nor the body's results, e.g. collected for a
    gradient)."""
    feeds = subgraph_feeds(op)
    if op.type != "while" or not feeds:
        return {}
    cond_graph, body = op.attrs["cond_graph"], op.attrs["body_graph"]
    readers = _readers(body)
    cond_readers = _readers(cond_graph)
    found = {}
    for j in range(op.attrs["n_vars"]):
        out, var = body.outputs[j], body.inputs[j]
        cat = out.op
        if (cat.type != "concat" or cat.attrs.get("axis") != 0 or len(cat.inputs) != 2
                or cat.inputs[0] is not var):
            continue
        grow = cat.inputs[1].op
        if grow.type != "expand_dims" or grow.attrs.get("axis") != 0:
            continue
        if (readers.get(var) != [cat] or readers.get(out, []) != []
                or any(t is var or t is grow.outputs[0] for t in body.outputs)
                or readers.get(grow.outputs[0]) != [cat]
                or sum(1 for t in body.outputs if t is out) != 1
                or cond_readers.get(cond_graph.inputs[j])
                or cat.control_inputs or grow.control_inputs):
            continue
        found[j] = (cat, grow, grow.inputs[0])
    return found


def _readers(graph):
    readers = {}
    for op in graph.ops:
        for t in op.inputs:
            users = readers.setdefault(t, [])
            if not any(u is op for u in users):
                users.append(op)
    return readers


# -- the planned peak: what a memory budget is checked against -----------------------------------

def planned_peak(graph):
    """The most bytes of arrays the run of `graph` (planned as above) holds at once, besides
    its inputs, constants and variables; None when it depends on what only the run knows
    (a shape not known statically, a loop whose trip count is not a constant).

    Each array an op makes (a `fresh` one, or a result of a loop, branch or call) lives
    until the last reader of any value viewing it; one written into a dead array (`reuse`,
    `donate`) takes no new memory. A loop holds every iteration's collected value once
    (packed as the iterations run into the arrays it outputs) besides one iteration's peak
    of its body; a branch or call adds its body's peak.
    """
    return _Peak({}).of(graph)


class _Peak:
    """The planned peak of graphs; `known` holds int values found statically (loop counters,
    trip counts)."""

    def __init__(self, known):
        self.known = known

    def of(self, graph):
        last = _last_uses(graph)
        for t in graph.outputs:
            last[t] = len(graph.ops)
        store = _Storage(graph, (), last)
        own = {t: b for b, t in store.maker.items()}
        for op in graph.ops:
            notes = op.notes or {}
            donors = ([notes["reuse"]] if "reuse" in notes else []) + list(notes.get("donate", ()))
            for donor in donors[:1]:
                store.merge(op.outputs[0], donor)
        peak = live = 0
        dying = {}                              # op index: sizes of the arrays freed after it
        for i, op in enumerate(graph.ops):
            made = self.made(op)
            if made is None:
                return None
            extra, outputs = made
            for t, size in zip(op.outputs, outputs):
                b = own[t]
                root = store.find(b)
                if root != b or not (op.opdef.fresh or op.subgraphs()):
                    continue                # written into a donor's array, or a view
                if size is None:
                    return None
                live += size
                dying.setdefault(max(store.death.get(root, i), i), []).append(size)
            peak = max(peak, live + extra)
            live -= sum(dying.pop(i, ()))
        return peak

    def made(self, op):
        """(transient bytes while `op` runs, [bytes of each output]), or None if unknown."""
        sizes = [_bytes(t) for t in op.outputs]
        if op.type == "while" and op.subgraphs():
            return self.loop(op, sizes)
        peaks = [self.of(g) for g in op.subgraphs()]
        if any(p is None for p in peaks):
            return None
        return max(peaks, default=0), sizes

    def loop(self, op, sizes):
        n, body = op.attrs["n_vars"], op.attrs["body_graph"]
        trips = trip_count(op, self.known)
        if trips is None:
            return None
        inner = _Peak(self.known).of(body)
        if inner is None:
            return None
        stacks = op.attrs.get("stacks") or 0
        if op.attrs.get("stacks") is not None:
            self.known[op.outputs[n]] = trips
        collected = []
        for t in body.outputs[n:n + stacks]:
            size = _bytes(t)
            if size is None:
                return None
            collected += [trips * size, trips * (t.shape.rank + 1) * 8]
        sizes = sizes[:len(sizes) - len(collected)] + collected
        return inner, sizes


def _bytes(t):
    shape = t.shape
    if not shape.is_fully_defined():
        return None
    return shape.num_elements() * t.dtype.np.itemsize


# -- trip counts of counting loops ----------------------------------------------------------------

_COUNTS = {                      # comparison: (counter keeps looping while, rounding)
    "less": lambda start, bound, step: -(-(bound - start) // step),
    "less_equal": lambda start, bound, step: (bound - start) // step + 1,
    "greater": lambda start, bound, step: -(-(start - bound) // step),
    "greater_equal": lambda start, bound, step: (start - bound) // step + 1,
}
_SWAPPED = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
            "greater_equal": "less_equal"}


def trip_count(op, known=None):
    """How many times while `op` runs its body, when it is a counting loop the graph fixes
    (`i < 500` from a constant start, a constant step), or its `maximum_iterations`; else None."""
    known = {} if known is None else known
    limit = op.attrs.get("maximum_iterations")
    count = _counted(op, known)
    if isinstance(limit, int) and not isinstance(limit, bool):
        return limit if count is None else min(count, limit)
    return count


def _counted(op, known):
    cond_graph, body = op.attrs["cond_graph"], op.attrs["body_graph"]
    test = cond_graph.outputs[0].op if cond_graph.outputs else None
    if test is None or test.type not in _COUNTS or len(test.inputs) != 2:
        return None
    outer = dict(zip([inner for _, inner in cond_graph.captures],
                     [op.inputs[op.attrs["n_vars"] + i] for i in op.attrs["cond_map"]]))
    kind, (a, b) = test.type, test.inputs
    if b in cond_graph.inputs:
        kind, (a, b) = _SWAPPED[kind], (b, a)
    if a not in cond_graph.inputs:
        return None
    j = cond_graph.inputs.index(a)
    bound = _static_int(outer.get(b, b), known)
    start = _static_int(op.inputs[j], known)
    step = _step(body, j)
    if None in (bound, start, step) or step == 0:
        return None
    if kind.startswith("greater"):
        step = -step
    if step <= 0:
        return None
    return max(0, _COUNTS[kind](start, bound, step))


def _step(body, j):
    """The constant `body` adds to loop variable j each iteration (subtracting: negative)."""
    out = body.outputs[j].op
    if out.type not in ("add", "subtract") or body.inputs[j] not in out.inputs:
        return None
    other = out.inputs[1] if out.inputs[0] is body.inputs[j] else out.inputs[0]
    if out.type == "subtract" and other is out.inputs[0]:
        return None
    step = _static_int(other, {})
    return None if step is None else (step if out.type == "add" else -step)


_ARITHMETIC = {"add": lambda a, b: a + b, "subtract": lambda a, b: a - b,
               "multiply": lambda a, b: a * b}


def _static_int(t, known):
    """The integer value of scalar `t` known before the graph runs, else None."""
    if t in known:
        return known[t]
    op = t.op
    if op.type == "const":
        value = op.attrs["value"]
        return int(value) if value.ndim == 0 and value.dtype.kind in "iu" else None
    if op.type in _ARITHMETIC and len(op.inputs) == 2:
        a, b = (_static_int(x, known) for x in op.inputs)
        return None if a is None or b is None else _ARITHMETIC[op.type](a, b)
    return None
