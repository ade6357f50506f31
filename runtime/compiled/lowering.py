"""Lowering: a region of an optimized graph as numba-compatible Python source.

The fast executor's generator (`runtime.codegen_executor`) finds regions, runs of
ops that lower (`why_not(op)` is None: each op's registry entry declares `lower`),
and hands each here. A `while` whose condition and body lower becomes one
function running the whole loop; an elementwise chain (a `fused` op) one loop over
the elements, with no temporaries; `matmul` is np.dot. Every value has one numba
type: rank-0 values are scalars cast to their dtype at each definition (numba
widens int32 arithmetic to int64; the cast wraps it back as numpy arrays do).

    graph f(n: i32[]) {                         def region(_start, _guard, w0, w1):
      while(n, 0)                                   w0 = np.int32(w0); w1 = np.int32(w1)
        cond: not_equal(n, 1)                       it = _start
        body: floordiv(n, 2),           ==>         while True:
              add(steps, 1)                             t = w0 != np.int32(1)
    }                                                   if not t: break
                                                        if it == _guard: raise Fault(0)
                                                        ...
                                                    return (w0, w1,)

Where numpy would raise (an index out of range, shapes that do not broadcast, a loop
past the iteration limit) compiled code raises `helpers.Fault`; the region then runs
in the fast executor, which raises the op's own error naming the user's line.
"""
import numpy as np

from .. import devices
from ..codegen_executor import _Compiler
from ..passes import known_op, memory, subgraph_feeds

__all__ = ["why_not", "lower_region", "RegionSource"]

_DTYPES = {np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                 np.uint16, np.uint32, np.uint64, np.float32, np.float64)}
_STRUCTURE = ("placeholder", "capture", "const", "no_op")
# An op declared `simd` (exp, tanh, ...) costs 10-20 ns an element in a compiled loop
# (libm, one element at a time) against numpy's ~0.3 ns; leaving compiled code for
# numpy and coming back costs a few us (and splits a loop). Up to this many elements
# (known while tracing) the region stays whole.
SIMD_ELEMENTS = 512


def dtype_source(dtype):
    dtype = np.dtype(dtype)
    return "np.bool_" if dtype == np.bool_ else f"np.{dtype.name}"


def loop_dtypes(op):
    """The dtypes an elementwise op computes in: its ufunc's loop, else numpy promotion."""
    ins = [t.dtype.np for t in op.inputs]
    ufunc = op.opdef.ufunc
    if ufunc is not None:
        try:
            return list(ufunc.resolve_dtypes(tuple(ins) + (None,) * ufunc.nout)[:ufunc.nin])
        except (TypeError, ValueError):
            pass
    common = np.result_type(*ins)
    return [common] * len(ins)


def element_template(op):
    """(source template of one element, the operands' dtypes), or (None, None)."""
    lower = op.opdef.lower
    dtypes = loop_dtypes(op)
    if callable(lower):
        lower = lower(dtypes)
    return lower, dtypes


def why_not(op, cache=None):
    """None if `op` (with its sub-graphs) lowers, else why not (for rt.config's report)."""
    if cache is not None and op in cache:
        return cache[op]
    reason = _why_not(op, cache)
    if cache is not None:
        cache[op] = reason
    return reason


def _why_not(op, cache):
    kind = op.type
    if not devices.resolve(op.device).is_host:
        return f"placed on {op.device} (the compiled tier is CPU-only)"
    if kind in _STRUCTURE:
        if kind == "const" and op.attrs["value"].dtype not in _DTYPES:
            return f"a constant of dtype {op.attrs['value'].dtype}"
        return None
    if op.notes and op.notes.get("async"):
        return "runs on the inter-op thread pool"
    for t in op.outputs:
        if t.dtype.np not in _DTYPES:
            return f"dtype {t.dtype.name} has no compiled form"
        if t.shape.rank is None:
            return "an output of unknown rank"
    for t in op.inputs:
        if t.dtype.np not in _DTYPES or t.shape.rank is None:
            return f"an input of dtype {t.dtype.name}, shape {t.shape}"
    if kind in ("while", "cond", "call", "fused"):
        if not known_op(op):
            return f"a {kind} with attributes the compiled tier does not know"
        appends = _appends(op)
        for sub, _ in subgraph_feeds(op):
            for inner in sub.ops:
                if inner in appends:
                    continue
                reason = why_not(inner, cache)
                if reason is not None:
                    return f"its {sub.name} holds {inner.type} ({reason})"
            if kind == "fused" and any(not o.opdef.elementwise for o in sub.ops
                                       if o.type not in _STRUCTURE):
                return "a fused op with a non-elementwise member"
        return None
    if op.opdef.stateful:
        return "stateful (its effects run in program order, in the fast executor)"
    if op.opdef.lower is None:
        return "no lowering declared"
    limit = _simd_limit(op)
    if limit is not None and op.outputs and op.outputs[0].shape.rank and not (
            (op.outputs[0].shape.num_elements() or limit + 1) <= limit):
        return (f"numpy's vectorized loop beats a compiled element loop on more than "
                f"{limit} elements")
    if op.opdef.elementwise:
        if op.attrs and kind != "cast" or op.opdef.multi:
            return "attributes"
        template, _ = element_template(op)
        return None if template is not None else "no lowering for these dtypes"
    try:
        source = op.opdef.lower(op, _Probe(op))
    except (TypeError, ValueError, KeyError, IndexError):
        source = None
    return None if source is not None else "no lowering for these operands"


def _appends(op):
    """The concat and expand_dims ops of a loop's lists that grow by rows (the memory
    plan's accumulators): compiled, each is an append to a growing array."""
    if not (op.notes and op.notes.get("append")):
        return ()
    return {o for cat, grow, _ in memory.accumulators(op).values() for o in (cat, grow)}


def _simd_limit(op):
    """How many elements of `op` at most a compiled element loop computes as fast as numpy's
    vectorized loop (its `simd` trait, for its loop dtypes), or None: any number."""
    simd = op.opdef.simd
    if callable(simd):
        simd = simd(loop_dtypes(op))
    if simd is True:
        return SIMD_ELEMENTS
    return simd or None


def _loop_shape(op):
    """The static shape of the element loop computing `op` (an elementwise or fused op over
    arrays of a known shape), or None."""
    if not (op.opdef.elementwise or op.type == "fused") or not op.outputs:
        return None
    dims = op.outputs[0].shape.dims
    if not dims or any(d is None for d in dims):
        return None
    return tuple(dims)


def _element_item(op):
    """(op, members computed per element, operands, {operand: the tensor feeding it}, the
    member result that is op's) of elementwise or fused `op` in an element loop (a fused
    op's members: its body's ops)."""
    if op.type != "fused":
        return op, [op], list(op.inputs), {}, op.outputs[0]
    (body, pairs), = subgraph_feeds(op)
    return (op, body.ops, list(body.inputs), {t: op.inputs[i] for t, i in pairs},
            body.outputs[0])


class _Probe:
    """A stand-in for the lowerer's operand sources: asks `lower` whether it lowers."""

    def __init__(self, op):
        self.op = op

    def value(self, i):
        return f"x{i}"

    def reduction(self, kind):
        x = self.op.inputs[0]
        if not x.shape.rank or (kind == "mean" and not x.dtype.is_floating):
            return None
        return "r"

    def literal(self, value):
        return repr(value)

    def checked_index(self, index, array, axis):
        return index


class RegionSource:
    """The numba source of one region: `def NAME(PARAMS): ... return (OUTPUTS,)`."""

    def __init__(self, name, source, faults):
        self.name = name
        self.source = source
        self.faults = faults        # fault code -> op


def lower_region(graph, ops, inputs, outputs, loop=False, into=()):
    """The RegionSource computing `outputs` from `inputs` by `ops` (a run of a block).

    A loop region (`ops` one while op) takes (_start, _guard, *loop state, *inputs);
    others (_guard, *inputs, *into); `_guard` is the loop iteration limit (-1: none).
    `into`: outputs computed into arrays the caller passes (of their shapes and dtypes),
    where an element loop makes them (else the region returns arrays of its own).
    """
    return _Lowerer(graph).region(ops, inputs, outputs, loop, into)


class _Lowerer(_Compiler):
    """The codegen executor's generator, emitting numba's subset of Python."""

    def __init__(self, graph):
        super().__init__(graph)
        self.faults = []
        self.params = {}            # tensor -> parameter (array constants of sub-graphs too)
        self.hints = None           # a collecting loop region's parameters: sizes to start at
        self.into = {}              # output -> the parameter holding the array to write

    def fault(self, op):
        self.faults.append(op)
        return f"raise Fault({len(self.faults) - 1})"

    # -- values -----------------------------------------------------------------------------
    def cast(self, source, have, want):
        return source if np.dtype(have) == np.dtype(want) else f"{dtype_source(want)}({source})"

    def scalar_literal(self, value, dtype):
        value = np.asarray(value, dtype)[()]
        if dtype == np.bool_:
            return repr(bool(value))
        if dtype.kind in "iu":
            return f"{dtype_source(dtype)}({int(value)})"
        v = float(value)
        text = ("np.nan" if np.isnan(v) else "np.inf" if v == np.inf else "-np.inf"
                if v == -np.inf else repr(v))
        return f"{dtype_source(dtype)}({text})"

    def assign(self, indent, t, source, op=None):
        """Bind a fresh local to `source` (a scalar cast to t's dtype)."""
        name = self.fresh(t.op.name if len(t.op.outputs) == 1 else f"{t.op.name}_{t.index}")
        if t.shape.rank == 0:
            source = f"{dtype_source(t.dtype.np)}({source})"
        self.emit(indent, f"{name} = {source}", op)
        return name

    # -- the function ---------------------------------------------------------------------
    def region(self, ops, inputs, outputs, loop, into):
        env = {}
        params = []
        for t in inputs:
            env[t] = self.fresh("a_" + t.op.name)
            params.append(env[t])
        self.params = dict(env)
        self.into = {t: self.fresh("o_" + t.op.name) for t in into}
        params += self.into.values()
        head = ["_start", "_guard"] if loop else ["_guard"]
        state = []
        if loop:
            state = [self.fresh(f"s{j}") for j in range(ops[0].attrs["n_vars"])]
            head += state
            if ops[0].attrs.get("stacks") is not None:     # sizes its collections had
                self.hints = [self.fresh("hint") for _ in range(ops[0].attrs["stacks"] + 1)]
        fname = self.fresh("region")
        self.emit(0, f"def {fname}({', '.join(head + params + (self.hints or []))}):")
        pinned = list(zip(inputs, params))
        if loop:
            pinned += list(zip(ops[0].outputs, state))
        for t, name in pinned:
            if t.shape.rank == 0:
                self.emit(1, f"{name} = {dtype_source(t.dtype.np)}(_scalar({name}))")
        if loop:
            self.inline_while(ops[0], env, 1, start="_start", state=state)
        else:
            self.ops(ops, env, 1, set(outputs))
        results = [env[t] for t in outputs]
        self.emit(1, f"return ({', '.join(results)}{',' if results else ''})")
        source = "\n".join(self.lines) + "\n"
        return RegionSource(fname, source, self.faults)

    def block(self, graph, env, indent, top=False, skip=None, appends=None):
        """Emit `graph`'s ops; `skip`: ops emitted otherwise ({op: None}, or a list's
        concat {op: (j, item)}, emitted as `appends(j, item, env)`)."""
        self.ops(graph.ops, env, indent, set(graph.outputs), skip, appends)
        return [env[t] for t in graph.outputs]

    def ops(self, ops, env, indent, kept, skip=None, appends=None):
        """Emit `ops`, but elementwise ops over arrays of one static shape (and fused ops)
        as one loop: the ops reading its results wait until it is emitted, the others
        (pure, as lowered ops are) go first; arrays are made for the results read by
        others or `kept`."""
        readers = {}
        for op in ops:
            for t in op.inputs:
                readers.setdefault(t, set()).add(op)
        group, waiting, shape = [], [], None
        grouped, held = set(), set()        # the outputs of each
        for op in ops:
            loop_shape = _loop_shape(op)
            if loop_shape is not None and (loop_shape != shape or any(
                    t in held for t in op.inputs)):
                self.merged_loop(group, waiting, env, indent, readers, kept, skip, appends)
                group, waiting = [], []
                grouped.clear()
                held.clear()
            if loop_shape is not None:
                group.append(op)
                grouped.update(op.outputs)
                shape = loop_shape
            elif any(t in grouped or t in held for t in op.inputs):
                waiting.append(op)
                held.update(op.outputs)
            else:
                self.emit_op(op, env, indent, skip, appends)
        self.merged_loop(group, waiting, env, indent, readers, kept, skip, appends)

    def emit_op(self, op, env, indent, skip, appends):
        if skip and op in skip:
            if skip[op] is not None:
                appends(*skip[op], env)
        else:
            self.op(op, env, indent)

    def merged_loop(self, group, waiting, env, indent, readers, kept, skip, appends):
        """One element loop computing the ops of `group`, then the ops `waiting` for it
        (see `ops`)."""
        members = set(group)
        keep = {op.outputs[0] for op in group
                if op.outputs[0] in kept or readers.get(op.outputs[0], set()) - members}
        if group:
            self.element_loop([_element_item(op) for op in group], env, indent, keep)
        for op in waiting:
            self.emit_op(op, env, indent, skip, appends)

    def op(self, op, env, indent):
        kind = op.type
        if kind in ("placeholder", "capture") and op.outputs[0] in env:
            return
        if kind == "const":
            value = op.attrs["value"]
            t = op.outputs[0]
            if t in self.params:
                env[t] = self.params[t]
                return
            if value.ndim != 0:
                raise ValueError("internal: an array constant not passed in")
            env[t] = self.scalar_literal(value, value.dtype)
            return
        if kind == "no_op":
            return
        if kind in ("while", "cond", "call", "fused"):
            return getattr(self, f"inline_{kind}")(op, env, indent)
        if op.opdef.elementwise:
            if op.outputs[0].shape.rank == 0:
                env[op.outputs[0]] = self.assign(indent, op.outputs[0],
                                                 self.element(op, env, indent), op)
            else:
                self.element_loop([_element_item(op)], env, indent, {op.outputs[0]})
            return
        if op.opdef.lower is None:
            raise ValueError(f"internal: {op.type} has no lowering")
        source = op.opdef.lower(op, _Operands(self, env, op, indent))
        out = op.outputs[0]
        env[out] = self.assign(indent, out, source, op)

    def element(self, op, env, indent):
        """The source of one element of elementwise `op` (operands from `env`)."""
        template, dtypes = element_template(op)
        args = [self.cast(env[t], t.dtype.np, d) for t, d in zip(op.inputs, dtypes)]
        return template.format(*args, dtype=dtype_source(dtypes[0]) if dtypes else "")

    # -- control flow -------------------------------------------------------------------------
    def sub_env(self, op, env, sub, pairs, loop_vars=None):
        position = {t: k for k, t in enumerate(sub.inputs)}
        return {t: loop_vars[position[t]] if i is None else env[op.inputs[i]]
                for t, i in pairs}

    def inline_call(self, op, env, indent):
        (sub, pairs), = subgraph_feeds(op)
        results = self.block(sub, self.sub_env(op, env, sub, pairs), indent)
        for t, r in zip(op.outputs, results):
            env[t] = r

    def inline_cond(self, op, env, indent):
        (then_g, then_pairs), (else_g, else_pairs) = subgraph_feeds(op)
        names = [self.fresh(f"{op.name}_{t.index}") for t in op.outputs]
        self.emit(indent, f"if {env[op.inputs[0]]}:", op)
        for g, pairs in ((then_g, then_pairs), (else_g, else_pairs)):
            results = self.block(g, self.sub_env(op, env, g, pairs), indent + 1)
            for name, t, r in zip(names, op.outputs, results):
                self.emit(indent + 1, f"{name} = {self.pinned(t, r)}")
            if g is then_g:
                self.emit(indent, "else:", op)
        for t, name in zip(op.outputs, names):
            env[t] = name

    def pinned(self, t, source):
        """`source` as t's numba type (scalars cast: both sides of a join agree)."""
        return f"{dtype_source(t.dtype.np)}({source})" if t.shape.rank == 0 else source

    def inline_while(self, op, env, indent, start=None, state=None):
        (cond_g, cond_pairs), (body_g, body_pairs) = subgraph_feeds(op)
        a = op.attrs
        n = a["n_vars"]
        names = [self.fresh(f"w_{op.name}_{j}") for j in range(n)]
        inits = state or [env[t] for t in op.inputs[:n]]
        for j, name in enumerate(names):
            self.emit(indent, f"{name} = {self.pinned(op.outputs[j], inits[j])}")
        grows = memory.accumulators(op) if _appends(op) else {}
        rows = {j: self.rows(names[j], op.outputs[j], indent) for j in grows}
        hints, self.hints = self.hints, None          # (the region's loop only)
        collections = [self.collection(body_g.outputs[n + k], indent, hints and hints[k + 1],
                                       hints and hints[0])
                       for k in range(a.get("stacks") or 0)]
        it = self.fresh("it")
        self.emit(indent, f"{it} = {start or 0}")
        self.emit(indent, "while True:")
        limit = a["maximum_iterations"]
        if limit is not None:
            bound = env[op.inputs[-1]] if limit == "input" else repr(int(limit))
            self.emit(indent + 1, f"if {it} >= {bound}:")
            self.emit(indent + 2, "break")
        test, = self.block(cond_g, self.sub_env(op, env, cond_g, cond_pairs, names), indent + 1)
        self.emit(indent + 1, f"if not {test}:", op)
        self.emit(indent + 2, "break")
        self.emit(indent + 1, f"if {it} == _guard:", op)
        self.emit(indent + 2, self.fault(op), op)
        body_env = self.sub_env(op, env, body_g, body_pairs, names)
        appends = {}
        for j, (cat, grow, item) in grows.items():
            appends[grow], appends[cat] = None, (j, item)
            body_env[cat.outputs[0]] = names[j]       # the list itself stays as it began
        results = self.block(body_g, body_env, indent + 1,
                             appends=lambda j, item, e: self.append(rows[j], item, e, indent + 1,
                                                                    op),
                             skip=appends)
        for k, collection in enumerate(collections):
            self.collect(collection, body_g.outputs[n + k], results[n + k], it, indent + 1)
        if names:                       # at once: a result may be another loop variable
            values = [self.pinned(op.outputs[j], results[j]) for j in range(n)]
            self.emit(indent + 1, f"{', '.join(names)}, = {', '.join(values)},")
        self.emit(indent + 1, f"{it} += 1")
        for j, (buf, count) in rows.items():
            self.emit(indent, f"{names[j]} = _stacked({names[j]}, {buf}, {count})", op)
        for t, name in zip(op.outputs, names):
            env[t] = name
        if a.get("stacks") is not None:     # the trip count, then each (values, index)
            env[op.outputs[n]] = self.assign(indent, op.outputs[n], it)
            for k, (values, index, size) in enumerate(collections):
                for t, source in ((op.outputs[n + 1 + 2 * k], f"_trimmed({values}, {size})"),
                                  (op.outputs[n + 2 + 2 * k], f"_trimmed({index}, {it})")):
                    env[t] = self.assign(indent, t, source)

    def collection(self, t, indent, size_hint, rows_hint):
        """Locals for a loop's collection of body tensor `t` (gradients read it back):
        its values raveled into one array, an index row [offset, *shape] per iteration,
        the size used; both arrays start at the sizes the last run needed, if known."""
        values, index, size = (self.fresh(f"stack_{t.op.name}"), self.fresh("index"),
                               self.fresh("size"))
        self.emit(indent, f"{values} = np.empty({size_hint or 0}, {dtype_source(t.dtype.np)})")
        self.emit(indent, f"{index} = np.empty(({rows_hint or 0}, {t.shape.rank + 1}), np.int64)")
        self.emit(indent, f"{size} = 0")
        return values, index, size

    def collect(self, collection, t, value, row, indent):
        """Collect iteration `row`'s `value` of body tensor `t`."""
        values, index, size = collection
        count = f"{value}.size" if t.shape.rank else "1"
        self.emit(indent, f"{values}, {index} = _room_for({values}, {index}, {row}, "
                          f"{size} + {count})")
        if t.shape.rank:
            self.emit(indent, f"{values}[{size}:{size} + {count}] = "
                              f"np.ascontiguousarray({value}).reshape(-1)")
        else:
            self.emit(indent, f"{values}[{size}] = {value}")
        self.emit(indent, f"{index}[{row}, 0] = {size}")
        for k in range(t.shape.rank):
            self.emit(indent, f"{index}[{row}, {k + 1}] = {value}.shape[{k}]")
        self.emit(indent, f"{size} += {count}")

    def rows(self, name, t, indent):
        """Locals for the rows a loop appends to its list `name` (a `t`): an array that
        grows by doubling, and the count."""
        buf, count = self.fresh(f"rows_{name}"), self.fresh(f"n_{name}")
        shape = ", ".join(["0"] * t.shape.rank)
        self.emit(indent, f"{buf} = np.empty(({shape},), {dtype_source(t.dtype.np)})")
        self.emit(indent, f"{count} = 0")
        return buf, count

    def append(self, rows, item, env, indent, op):
        """Append row `item` to the loop's growing array `rows` (a row unlike the first:
        a fault, so the fast executor raises concat's error)."""
        buf, count = rows
        value = env[item]
        if item.shape.rank:
            self.emit(indent, f"if {count} and {value}.shape != {buf}.shape[1:]:", op)
            self.emit(indent + 1, self.fault(op), op)
        shape = f"{value}.shape" if item.shape.rank else "()"
        self.emit(indent, f"{buf} = _room({buf}, {count}, {shape})")
        self.emit(indent, f"{buf}[{count}] = {value}")
        self.emit(indent, f"{count} += 1")

    # -- elementwise loops ------------------------------------------------------------------------
    def inline_fused(self, op, env, indent):
        (body, pairs), = subgraph_feeds(op)
        out = op.outputs[0]
        if out.shape.rank == 0:
            inner = self.sub_env(op, env, body, pairs)
            for member in body.ops:
                if member.type not in _STRUCTURE:
                    inner[member.outputs[0]] = self.assign(indent, member.outputs[0],
                                                           self.element(member, inner, indent),
                                                           member)
                else:
                    self.op(member, inner, indent)
            env[out] = inner[body.outputs[0]]
            return
        self.element_loop([_element_item(op)], env, indent, {out})

    def element_loop(self, items, env, indent, keep):
        """One loop over the shape of the items' results (`_element_item`s, one shape),
        computing each item's members per element (each operand element read once, each
        member a local), writing the arrays of the results in `keep`."""
        op = items[0][0]
        out = op.outputs[0]
        rank = out.shape.rank
        produced = {item[0].outputs[0] for item in items}
        outer = list(dict.fromkeys(feeds.get(t, t) for _, _, operands, feeds, _ in items
                                   for t in operands if feeds.get(t, t) not in produced))
        dims = []
        for k in range(rank):
            static = out.shape.dims[k]
            n = self.fresh(f"n{k}")
            dims.append(n)
            sources = []
            for src in outer:
                j = k - (rank - src.shape.rank)
                if j >= 0 and src.shape.dims[j] != 1:
                    sources.append(f"{env[src]}.shape[{j}]")
            if static is not None:
                self.emit(indent, f"{n} = {static}")
                continue
            self.emit(indent, f"{n} = 1")
            for s in sources:
                self.emit(indent, f"{n} = _bdim({n}, {s})", op)
            self.emit(indent, f"if {n} < 0:", op)
            self.emit(indent + 1, self.fault(op), op)
        shape = ", ".join(dims) + ("," if rank == 1 else "")
        results = {}
        for item_op, *_ in items:
            t = item_op.outputs[0]
            if t in keep:
                results[t] = self.fresh(t.op.name)
                self.emit(indent, f"{results[t]} = " + (self.into.get(t) or (
                    f"np.empty(({shape}), {dtype_source(t.dtype.np)})")), item_op)
        index = [self.fresh(f"i{k}") for k in range(rank)]
        reads = {src: self.operand_read(op, src, out, dims, index, env, indent)
                 for src in outer}
        for k in range(rank):
            self.emit(indent + k, f"for {index[k]} in range({dims[k]}):")
        inner_indent = indent + rank
        inner = {}
        for src, read in reads.items():
            if isinstance(read, str):
                inner[src] = read
            else:
                array, parts = read
                inner[src] = self.fresh("e")
                self.emit(inner_indent, f"{inner[src]} = {array}[{', '.join(parts)}]")
        for item_op, members, operands, feeds, root in items:
            for t in operands:
                inner[t] = inner[feeds.get(t, t)]
            for member in members:
                if member.type in _STRUCTURE:
                    if member.type == "const":
                        self.op(member, inner, inner_indent)
                    continue
                inner[member.outputs[0]] = self.assign_element(
                    inner_indent, member.outputs[0],
                    self.element(member, inner, inner_indent), member)
            t = item_op.outputs[0]
            inner[t] = inner[root]
            if t in results:
                self.emit(inner_indent, f"{results[t]}[{', '.join(index)}] = {inner[t]}")
        env.update(results)

    def operand_read(self, op, src, out, dims, index, env, indent):
        """How an element loop over `out`'s shape (sizes `dims`, indices `index`) reads
        operand `src`: a scalar's source, or (its array, an index source per axis)."""
        if src.shape.rank == 0:
            return env[src]
        rank = out.shape.rank
        parts = []
        for j in range(src.shape.rank):
            k = j + rank - src.shape.rank
            d = src.shape.dims[j]
            if d == 1:
                parts.append("0")
            elif d is not None and d == out.shape.dims[k]:
                parts.append(index[k])
            else:
                flag = self.fresh(f"b_{k}")
                self.emit(indent, f"{flag} = 0 if {env[src]}.shape[{j}] == 1 else 1")
                if src.shape.dims[j] is None:
                    self.emit(indent, f"if {flag} and {env[src]}.shape[{j}] != {dims[k]}:",
                              op)
                    self.emit(indent + 1, self.fault(op), op)
                parts.append(f"{index[k]} * {flag}")
        return env[src], parts

    # -- reductions ---------------------------------------------------------------------------
    _COMBINE = {"sum": "{acc} + {x}", "max": "_maximum({acc}, {x})",
                "min": "_minimum({acc}, {x})", "any": "{acc} or {x}", "all": "{acc} and {x}"}

    def reduction(self, op, kind, env, indent):
        x, out = op.inputs[0], op.outputs[0]
        rank = x.shape.rank
        axis = op.attrs["axis"]
        axes = set(range(rank)) if axis is None else set(axis)
        if kind in ("sum", "mean") and x.dtype.is_floating:
            return self.float_sum(op, kind, axes, env, indent)
        acc_dtype = out.dtype.np
        init = {"sum": 0, "any": False, "all": True}.get(kind)
        if init is None:
            init = (-np.inf if kind == "max" else np.inf) if acc_dtype.kind == "f" else (
                np.iinfo(acc_dtype).min if kind == "max" else np.iinfo(acc_dtype).max) \
                if acc_dtype.kind in "iu" else kind == "min"
        src = env[x]
        index = [self.fresh(f"r{k}") for k in range(rank)]
        kept = [("1" if k in axes else f"{src}.shape[{k}]") for k in range(rank)]
        acc = self.fresh(f"acc_{op.name}")
        self.emit(indent, f"{acc} = np.full(({', '.join(kept)},), "
                          f"{self.scalar_literal(init, acc_dtype)}, {dtype_source(acc_dtype)})", op)
        count = self.fresh("count")
        self.emit(indent, f"{count} = 1")
        for k in sorted(axes):
            self.emit(indent, f"{count} *= {src}.shape[{k}]")
        if kind in ("max", "min"):
            self.emit(indent, f"if {count} == 0:", op)
            self.emit(indent + 1, self.fault(op), op)
        for k in range(rank):
            self.emit(indent + k, f"for {index[k]} in range({src}.shape[{k}]):")
        target = f"{acc}[{', '.join('0' if k in axes else index[k] for k in range(rank))}]"
        element = self.cast(f"{src}[{', '.join(index)}]", x.dtype.np, acc_dtype)
        self.emit(indent + rank, f"{target} = {dtype_source(acc_dtype)}("
                                 f"{self._COMBINE[kind].format(acc=target, x=element)})")
        return self.reduced(op, acc, axes, src)

    def reduced(self, op, acc, axes, src):
        """The source of reduction `op`'s result from `acc`, its values (kept axes in C
        order, in an array of the input's rank or a flat one); `src`: the input."""
        x, out = op.inputs[0], op.outputs[0]
        if out.shape.rank == 0:
            return f"{acc}.ravel()[0]"
        keep = [k for k in range(x.shape.rank) if k not in axes or op.attrs["keepdims"]]
        dims = ["1" if k in axes else f"{src}.shape[{k}]" for k in keep]
        return f"{acc}.reshape(({', '.join(dims)},))"

    def float_sum(self, op, kind, axes, env, indent):
        """A float sum (or mean) in numpy's order of additions, so that it rounds as numpy's
        does (`helpers._float_sum`); a mean divides in float64, as np.mean does. Arrays
        not C-contiguous (views whose order numpy's buffered loops decide) fault."""
        x, out = op.inputs[0], op.outputs[0]
        src, rank = env[x], x.shape.rank
        self.emit(indent, f"if not {src}.flags.c_contiguous:", op)
        self.emit(indent + 1, self.fault(op), op)
        size = self.fresh("size")
        self.emit(indent, f"{size} = 1")
        for k in range(rank):
            if k not in axes:
                self.emit(indent, f"{size} *= {src}.shape[{k}]")
        reduced = "(" + "".join(f"{k in axes}, " for k in range(rank)) + ")"
        acc = self.fresh(f"acc_{op.name}")
        self.emit(indent, f"{acc} = _float_sum(np.ascontiguousarray({src}).reshape(-1), "
                          f"{src}.shape, {reduced}, {size}, "
                          f"{self.scalar_literal(-0.0, x.dtype.np)})", op)
        if kind == "mean":
            count = self.fresh("count")
            self.emit(indent, f"{count} = 1")
            for k in sorted(axes):
                self.emit(indent, f"{count} *= {src}.shape[{k}]")
            self.emit(indent, f"{acc} = ({acc}.astype(np.float64) / {count})"
                              f".astype({dtype_source(out.dtype.np)})")
        return self.reduced(op, acc, axes, src)

    def assign_element(self, indent, t, source, op):
        name = self.fresh(t.op.name)
        self.emit(indent, f"{name} = {dtype_source(t.dtype.np)}({source})", op)
        return name


class _Operands:
    """The sources of an op's operands, for its registry entry's `lower`."""

    def __init__(self, lowerer, env, op, indent):
        self.lowerer, self.env, self.op, self.indent = lowerer, env, op, indent

    def reduction(self, kind):
        """A loop reducing operand 0 over the op's `axis` (`keepdims`): kind "sum", "mean",
        "max", "min", "any" or "all"; floats summed as numpy sums them."""
        return self.lowerer.reduction(self.op, kind, self.env, self.indent)

    def value(self, i):
        return self.env[self.op.inputs[i]]

    def literal(self, value):
        return repr(value)

    def checked_index(self, index, array, axis):
        """A local holding `index` into `array`'s `axis` (out of range: a fault)."""
        name = self.lowerer.fresh("ix")
        self.lowerer.emit(self.indent, f"{name} = _index({index}, {array}.shape[{axis}])",
                          self.op)
        self.lowerer.emit(self.indent, f"if {name} < 0:", self.op)
        self.lowerer.emit(self.indent + 1, self.lowerer.fault(self.op), self.op)
        return name
