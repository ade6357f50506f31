"""The fast executor: a graph compiled once into straight-line Python source.

    graph f(x: f32[4], n: i32[]) {                def f(_feeds):
      mul: f32[4] = multiply(x, x)                    x, n = _feeds
      tanh: f32[4] = tanh(mul)                        try:
      const: i32[] = const[value=2]()                     mul = _np_multiply(x, x)
      mod: i32[] = mod(n, const)            ==>           tanh = _np_tanh(mul, mul)
      return (tanh, mod)                                  mod = n % _c_const
    }                                                     return [tanh, _nd(mod)]
                                                      except ... (errors name the op)

Every op is one line calling its kernel, numpy's ufunc (with `out=` where the
memory plan says so), the source its registry entry gives (`emit`) or, between
scalars, the operator it declares (`operator`, `bool_operator`); a cond is an `if`,
a while loop a `for` over a counter (one compare per iteration checks rt.config's
loop iteration limit), a call's or fused op's body is inlined; values are
local variables, deleted after their last use. Rank-0 values stay numpy scalars
between elementwise ops (numpy's scalar arithmetic costs a tenth of a ufunc
call on 0-d arrays) and become 0-d arrays before any other kernel and at the end;
rank-0 bools may be Python bools (constants, `not`, `&` of those: a converted loop's
break flag costs what Python's `not` does), made numpy bools before any operator
that is not a bool operator.
Ops the `parallel` pass marked `async` are submitted to a thread pool; the first
reader of their result waits for it. An op placed on another device than cpu:0 is one
call of its device's kernel (`opdef.kernel_for`): no ufunc, operator or emitted numpy
there, its values (rank 0 too) that device's arrays, its constants put there once,
when compiling.

A failing op is found from the line of the generated source that raised; the
error is the one the plain executor raises (`executor.op_error`). The source is
in `linecache` (tracebacks and pdb show it) and on `Program.source`.
"""
import builtins
import functools
import itertools
import keyword
import linecache
import threading

import numpy as np

from . import config
from . import devices
from . import traceback_utils
from .errors import OpError, loop_limit_exceeded
from .executor import op_error
from .ops import array_ops
from .passes import graphs_in, known_op, memory, subgraph_feeds
from .passes.placement import device_of

__all__ = ["compile_graph", "Program"]

_lock = threading.Lock()
_counter = itertools.count(1)


# -- numpy error state: one switch per call instead of one per quiet kernel ------------------

try:
    from numpy._core._ufunc_config import _extobj_contextvar as _errstate_var
    from numpy._core._ufunc_config import _make_extobj
    _quiet_on = functools.partial(_errstate_var.set, _make_extobj(all="ignore"))

    _quiet_off = _errstate_var.reset
    _errstate_now = _errstate_var.get
    _errstate_set = _errstate_var.set
except (ImportError, AttributeError, TypeError):     # older numpy: a per-thread setting
    def _quiet_on():
        return np.seterr(all="ignore")

    def _quiet_off(saved):
        np.seterr(**saved)

    _errstate_now = np.geterr

    def _errstate_set(saved):
        return np.seterr(**saved)


def _concat_rows(first, rows):
    """concat([first, expand_dims(r0, 0), expand_dims(r1, 0), ...], axis 0), at once."""
    if not rows:
        return first
    # (an empty start whose row shape was unknown when traced drops out, as in concat)
    return np.concatenate(array_ops.without_empty_mismatch([first] + [r[None] for r in rows],
                                                           0), axis=0)


_pool = {"executor": None, "threads": 0}


def _submit_fn(threads):
    """The `submit` of a thread pool with `threads` workers (made on first use)."""
    with _lock:
        if _pool["executor"] is None or _pool["threads"] != threads:
            from concurrent.futures import ThreadPoolExecutor
            if _pool["executor"] is not None:
                _pool["executor"].shutdown(wait=False)
            _pool["executor"] = ThreadPoolExecutor(threads, thread_name_prefix="rt-inter-op")
            _pool["threads"] = threads
        return _pool["executor"].submit


# -- programs --------------------------------------------------------------------------------

class Program:
    """A compiled graph: `fn(feed_values) -> list of output arrays`."""

    __slots__ = ("fn", "source", "graph", "filename")

    def __init__(self, fn, source, graph, filename):
        self.fn = fn
        self.source = source
        self.graph = graph
        self.filename = filename

    def __repr__(self):
        return f"<Program {self.filename}>"


def compile_graph(graph, jit=False):
    """The Program of `graph` (compiled on first use; recompiled if the graph changes);
    with `jit`, its lowerable regions run compiled by numba (`runtime.compiled`).

    Source Python cannot compile (loops nested past its limit of 20 blocks) leaves the
    graph to the plain executor.
    """
    key = "program-jit" if jit else "program"
    program = graph._plans.get(key)
    if program is None:
        try:
            program = _Compiler(graph, jit).compile()
        except (SyntaxError, RecursionError, MemoryError):
            from .executor import plan_for
            program = Program(plan_for(graph).run, None, graph, None)
        graph._plans[key] = program
    return program


class _Const:
    """A constant operand: a namespace name for the array, another for its scalar."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class _Compiler:
    def __init__(self, graph, jit=False):
        self.graph = graph
        self.jit = jit                  # compile lowerable regions (runtime.compiled)
        self.in_region = 0              # emitting a region's fast-executor path
        self.why_not = {}               # op -> why it does not lower (None: it does)
        self.lines = []
        self.line_ops = {}
        self.ns = {"_nd": np.asarray, "_bool_": np.bool_, "_OpError": OpError,
                   "_concat_rows": _concat_rows,
                   "_count": itertools.count, "_loop_guard": _loop_guard,
                   "_loop_limit_exceeded": loop_limit_exceeded}
        self.global_names = {}          # id(object) -> namespace name
        self.used = set(self.ns)
        self.quiet = False
        self.quiet_outside = False      # a quiet op emitted outside any region's fallback
        self.user_code = False
        self.wanted = {}                # tensor -> the local it must be bound to
        self.slots = {}                 # tensor -> the source of the array to compute it into
        self.arrays = set()             # locals of rank-0 values that hold 0-d arrays
        self.placed = devices.placing   # ops may be on devices other than cpu:0

    # -- names -----------------------------------------------------------------------
    def fresh(self, base):
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base).lstrip("_")
        if not base or base[0].isdigit():
            base = "v" + base
        if keyword.iskeyword(base) or hasattr(builtins, base):
            base += "_"
        name, i = base, 1
        while name in self.used:
            name = f"{base}_{i}"
            i += 1
        self.used.add(name)
        return name

    def glob(self, obj, base, key=None):
        """A namespace name bound to `obj` (one per object, or per `key`)."""
        key = id(obj) if key is None else key
        name = self.global_names.get(key)
        if name is None:
            name = "_" + self.fresh(base)
            self.ns[name] = obj
            self.global_names[key] = name
        return name

    def literal(self, value):
        """Source for an attribute value: itself when Python prints it back exactly."""
        if type(value) in (bool, int, str, type(None)):
            return repr(value)
        if type(value) is float and np.isfinite(value):
            return repr(value)
        if type(value) is tuple and all(type(v) in (bool, int, str, type(None)) for v in value):
            return repr(value)
        return self.glob(value, "a")

    # -- emitting --------------------------------------------------------------------------
    def emit(self, indent, text, op=None):
        self.lines.append("    " * indent + text)
        if op is not None:
            self.line_ops[len(self.lines)] = op

    def on_host(self, t):
        """Is `t` a numpy value (rank 0: maybe a numpy scalar or a Python bool)?"""
        return not self.placed or device_of(t).is_host

    def ref(self, env, t, scalar_ok):
        """The expression for tensor `t` as an operand (`scalar_ok`: for elementwise use)."""
        r = env[t]
        if not self.on_host(t):
            if isinstance(r, _Const):           # put on its device once, here
                device = device_of(t)
                return self.glob(device.put(r.value), "c_" + t.op.name,
                                 (device.name, id(r.value)))
            return r
        if isinstance(r, _Const):
            v = r.value
            if scalar_ok and v.ndim == 0 and v.dtype == np.bool_:
                return repr(bool(v))
            if scalar_ok and v.ndim == 0:
                return self.glob(v[()], "c_" + t.op.name, ("scalar", id(v)))
            return self.glob(v, "c_" + t.op.name)
        if not scalar_ok and (t.shape.rank is None or t.shape.rank == 0) and \
                r not in self.arrays:
            return f"_nd({r})"
        return r

    def compile(self):
        graph = self.graph
        name = self.fresh(graph.name)
        feeds = list(graph.inputs) + [inner for _, inner in graph.captures]
        env = {}
        params = []
        for t in feeds:
            env[t] = self.fresh(t.op.name)
            params.append(env[t])
        self.quiet = any(_quiet(op) for g in graphs_in(graph) for op in g.ops)
        self.emit(0, f"def {name}(_feeds):")
        if params:
            self.emit(1, f"{', '.join(params)}{',' if len(params) == 1 else ''} = _feeds")
        scalars = [env[t] for t in feeds if t.shape.rank == 0 and self.on_host(t)]
        if scalars:                       # 0-d arrays in, numpy scalars from here on
            comma = "," if len(scalars) == 1 else ""
            self.emit(1, f"{', '.join(scalars)}{comma} = "
                         f"{', '.join(s + '[()]' for s in scalars)}{comma}")
        header = len(self.lines)
        outputs = self.block(graph, env, 2, top=True)
        body = self.lines[header:]
        self.lines = self.lines[:header]
        shift = 0
        lazy = self.quiet and not self.quiet_outside    # quiet only in regions' fallbacks
        if self.quiet:
            self.emit(1, "_quiet = None" if lazy else "_quiet = _quiet_on()")
            self.ns.update(_quiet_on=_quiet_on, _quiet_off=_quiet_off)
            shift = 1
        if self.user_code:
            self.emit(1, "_caller_errstate = _errstate_now()")
            self.ns.update(_errstate_now=_errstate_now, _errstate_set=_errstate_set)
            shift += 1
        self.emit(1, "try:")
        shift += 1
        self.line_ops = {k + shift: v for k, v in self.line_ops.items()}
        self.lines.extend(body)
        self.emit(2, f"return [{', '.join(outputs)}]")
        self.emit(1, "except _OpError as _e:")
        self.emit(2, "if _e.op is not None:")
        self.emit(3, "raise")
        self.emit(2, "raise _fail(_e)")
        self.emit(1, "except Exception as _e:")
        self.emit(2, "raise _fail(_e)")
        if self.quiet:
            self.emit(1, "finally:")
            if lazy:
                self.emit(2, "if _quiet is not None:")
            self.emit(2 + lazy, "_quiet_off(_quiet)")
        source = "\n".join(self.lines) + "\n"
        filename = f"<rt graph {graph.name} #{graph.id}.{next(_counter)}>"
        line_ops = self.line_ops
        self.ns["_fail"] = lambda exc: _fail(exc, line_ops)
        code = compile(source, filename, "exec")
        exec(code, self.ns)  # noqa: S102 - our own generated source
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        traceback_utils.register_source_map(filename, {})      # library code, not the user's
        return Program(self.ns[name], source, graph, filename)

    def block(self, graph, env, indent, top=False, skip=None):
        """Emit the ops of `graph` (`env` binds its fed placeholders); output expressions."""
        free_after = memory.frees(graph)
        mine = set()                    # locals this block made (the ones it may delete)
        futures = {}
        start = len(self.lines)
        live = _live_ops(graph)
        regions = self.regions(graph, skip, live) if self.jit and not self.in_region else {}
        done = set()                    # ops emitted in a region
        for op in graph.ops:
            if op in done or (live is not None and op not in live):
                continue
            members = regions[op][0] if op in regions else (op,)    # (a region reads all)
            waits = [t for m in members for t in m.inputs if t in futures] + [
                t for m in members for c in m.control_inputs for t in c.outputs if t in futures]
            for t in dict.fromkeys(waits):          # an input read twice is awaited once
                self.emit(indent, f"{env[t]} = {futures.pop(t)}.result()", t.op)
            if op in regions:
                run, loop = regions[op]
                done.update(run)
                self.region(graph, run, loop, env, indent, mine, futures, free_after)
                for member in run:
                    self.free(free_after, member, env, indent, mine, futures)
                continue
            if skip and op in skip:
                statement = skip[op]
                if statement:
                    self.emit(indent, statement(env), op)
            else:
                self.op(op, env, indent, mine, futures)
            self.free(free_after, op, env, indent, mine, futures)
        for t in list(futures):
            self.emit(indent, f"{env[t]} = {futures.pop(t)}.result()", t.op)
        if len(self.lines) == start:
            self.emit(indent, "pass")
        return [self.ref(env, t, not top) if t in env else None for t in graph.outputs]

    def free(self, free_after, op, env, indent, mine, futures, only=None):
        """`del` the locals whose last use is `op` (of those in `only`, if given)."""
        dead = [t for t in free_after.get(op, ()) if t in mine and t not in futures
                and (only is None or t in only)]
        if dead:
            self.emit(indent, f"del {', '.join(dict.fromkeys(env[t] for t in dead))}")
            mine.difference_update(dead)

    # -- compiled regions (runtime.compiled) -------------------------------------------------
    def regions(self, graph, skip, live):
        """{first op: (ops, is a loop)} of the regions of `graph`'s block worth compiling:
        maximal runs of lowerable ops (of `live`, when not None); a lowerable while is a
        region of its own."""
        from .compiled import lowering, not_lowered
        found, run = {}, []

        def flush():        # worth a call into compiled code: element or scalar work
            if any(o.type in ("cond", "fused", "call") for o in run) or sum(
                    o.opdef.elementwise or all(t.shape.rank == 0 for t in o.outputs)
                    for o in run if o.type != "const") >= 3:
                found[run[0]] = (list(run), False)
            run.clear()
        for op in graph.ops:
            if op.type in ("placeholder", "capture") or (live is not None and op not in live):
                continue                    # fed: bound before any op runs; or dead
            reason = ("appends rows of a loop" if skip and op in skip
                      else lowering.why_not(op, self.why_not))
            if reason is not None:
                flush()
                not_lowered(self.graph.name, op.original or op, reason)
            elif op.type == "while":
                flush()
                found[op] = ([op], True)
            else:
                run.append(op)
        flush()
        return found

    def region(self, graph, run, loop, env, indent, mine, futures, free_after):
        """Emit `run`: its compiled function's call, and its ops for when that gives None."""
        from . import compiled
        from .compiled import lowering
        members = set(run)
        for op in run:
            if op.type == "const":
                self.op(op, env, indent, mine, futures)
        produced = {t for op in run for t in op.outputs if op.type != "const"}
        n = run[0].attrs["n_vars"] if loop else 0     # a loop's state comes first, as is
        inputs = list(dict.fromkeys(
            [t for op in run if op.type != "const" for t in op.inputs[n:] if t not in produced]
            + _array_constants(run)))
        read_after = {t for op in graph.ops if op not in members for t in op.inputs}
        returned = set(graph.outputs) - read_after if graph is self.graph else set()
        read_after.update(graph.outputs)
        outputs = list(run[0].outputs) if loop else [t for t in produced if t in read_after]
        outputs.sort(key=lambda t: (run.index(t.op), t.index))
        into = [] if loop else [t for t in outputs if t in self.slots]
        lowered = lowering.lower_region(graph, run, inputs, outputs, loop, into)
        first = run[0].original or run[0]
        where = f" at {first.origin.short()}" if first.origin is not None else ""
        stacks = run[0].attrs.get("stacks") if loop else None
        region = compiled.Region(lowered, loop,
                                 f"{len(run)} ops from {first.type} {first.name}{where}",
                                 self.graph.name, None if stacks is None else (n, stacks))
        r = self.glob(region, "region")
        args = [self.glob(t.op.attrs["value"], "c_" + t.op.name) if t.op.type == "const"
                else self.ref(env, t, True) for t in inputs]
        inits = [self.ref(env, t, True) for t in run[0].inputs[:n]]
        v = self.fresh("v")
        slots = [self.slots[t] for t in into]
        self.emit(indent, f"{v} = {r}.run({', '.join(inits + args + slots)})", run[0])
        self.emit(indent, f"if {v} is None:", run[0])
        if self.quiet and _holds_quiet(run):
            self.emit(indent + 1, "if _quiet is None:")
            self.emit(indent + 2, "_quiet = _quiet_on()")
        self.in_region += 1
        arrays = [t for t in outputs if t in returned and t.shape.rank == 0]
        if loop and stacks is None:
            self.inline_while(run[0], env, indent + 1, mine, switch=(r, v, args))
            self.returned_arrays(arrays, env, indent + 1)
            self.emit(indent, f"if {v} is not None:", run[0])
        else:
            internal = produced - set(outputs)
            for op in run:
                if op.type != "const":
                    self.op(op, env, indent + 1, mine, futures)
                    self.free(free_after, op, env, indent + 1, mine, futures, internal)
            self.returned_arrays(arrays, env, indent + 1)
            self.emit(indent, "else:", run[0])
        self.in_region -= 1
        if outputs:
            results = [self.compiled_result(t, f"{v}[{i}]", read_after, returned)
                       for i, t in enumerate(outputs)]
            self.emit(indent + 1, f"{', '.join(env[t] for t in outputs)}, = "
                                  f"{', '.join(results)},")
        else:
            self.emit(indent + 1, "pass")

    def returned_arrays(self, ts, env, indent):
        """Make the rank-0 values `ts`, which the program only returns, 0-d arrays where
        the fast executor computed them (as the compiled path does), once."""
        if ts:
            names = [env[t] for t in ts]
            self.emit(indent, f"{', '.join(names)}, = "
                              f"{', '.join(f'_nd({name})' for name in names)},")
            self.arrays.update(names)

    def compiled_result(self, t, source, read_after, returned):
        """A compiled region's result `source` as the fast executor keeps `t`: a rank-0
        number (a Python scalar from numba) as a numpy scalar of its dtype, if read (as
        the 0-d array the program returns, if only returned)."""
        if t.shape.rank != 0 or t not in read_after:
            return source
        if t in returned:
            return f"_nd({source}, {self.glob(t.dtype.np, 'dt_' + t.dtype.np.name)})"
        if t.dtype.is_bool:
            return source
        return f"{self.glob(t.dtype.np.type, '_np_' + t.dtype.np.name)}({source})"

    def bind(self, env, mine, t):
        name = self.wanted.pop(t, None) or self.fresh(
            t.op.name if len(t.op.outputs) == 1 else f"{t.op.name}_{t.index}")
        env[t] = name
        mine.add(t)
        return name

    def op(self, op, env, indent, mine, futures):
        kind = op.type
        if not self.in_region and _quiet(op):
            self.quiet_outside = True
        if kind in ("placeholder", "capture") and op.outputs[0] in env:
            return
        if kind == "const":
            env[op.outputs[0]] = _Const(op.attrs["value"])
            return
        if kind == "no_op":
            return
        inline = getattr(self, f"inline_{kind}", None)
        if inline is not None and known_op(op) and (
                "stacks" not in op.attrs or not self.placed or devices.resolve(op.device).is_host):
            return inline(op, env, indent, mine)
        if op.notes and op.notes.get("async"):
            out = op.outputs[0]
            args = [self.ref(env, t, False) for t in op.inputs] + self.attrs(op)
            future = self.fresh(f"f_{op.name}")
            self.bind(env, mine, out)
            futures[out] = future
            submit = self.glob(_submit_fn(_threads()), "submit", "submit")
            kernel = self.glob(self.kernel(op), "k_" + kind)
            self.emit(indent, f"{future} = {submit}({kernel}, {', '.join(args)})", op)
            return
        expr = None
        numpy = not self.placed or devices.resolve(op.device).is_host  # else: call kernel
        if numpy and op.opdef.elementwise and len(op.outputs) == 1:
            expr = self.elementwise(op, env)
        elif numpy and op.opdef.emit is not None:
            expr = op.opdef.emit(op, _Operands(self, env, op))
        if expr is None:
            expr = self.call(op, env)
        if op.opdef.retains_inputs and self.quiet:       # user code: the caller's errstate
            self.user_code = True
            target = self.targets(op, env, mine)
            self.emit(indent, "_saved = _errstate_set(_caller_errstate)", op)
            self.emit(indent, "try:")
            self.emit(indent + 1, f"{target}{expr}", op)
            self.emit(indent, "finally:")
            self.emit(indent + 1, "_quiet_off(_saved)")
            return
        self.emit(indent, f"{self.targets(op, env, mine)}{expr}", op)

    def targets(self, op, env, mine):
        outs = op.outputs
        if not outs:
            return ""
        names = [self.bind(env, mine, t) for t in outs]
        if op.opdef.multi:
            return f"{', '.join(names)}, *_ = "
        return f"{names[0]} = "

    def attrs(self, op):
        return [f"{k}={self.literal(v)}" for k, v in op.attrs.items()]

    def kernel(self, op):
        """The kernel running `op` on its device."""
        if not self.placed:
            return op.opdef.kernel
        return op.opdef.kernel_for(devices.resolve(op.device))

    def call(self, op, env):
        operand = self.numpy_scalar if op.opdef.elementwise else (
            lambda env, t: self.ref(env, t, False))
        args = [operand(env, t) for t in op.inputs] + self.attrs(op)
        return f"{self.glob(self.kernel(op), 'k_' + op.type)}({', '.join(args)})"

    def elementwise(self, op, env):
        d = op.opdef
        if op.attrs or d.multi:
            return None
        args = [self.ref(env, t, True) for t in op.inputs]
        if op.outputs[0].shape.rank == 0:
            if d.bool_operator and all(t.dtype.is_bool for t in op.inputs):
                return d.bool_operator.format(*args)
            if d.operator:
                return d.operator.format(*[f"_bool_({a})" if t.dtype.is_bool else a
                                           for a, t in zip(args, op.inputs)])
        if d.ufunc is None:
            return None
        donor = op.notes.get("reuse") if op.notes else None
        if op.outputs[0] in self.slots:
            args.append(f"out={self.slots[op.outputs[0]]}")
        elif donor is not None:
            args.append(f"out={env[donor]}")      # (by position is deprecated in numpy 2.4)
        return f"{self.glob(d.ufunc, '_np_' + d.ufunc.__name__)}({', '.join(args)})"

    def numpy_scalar(self, env, t):
        """The expression for `t` where a numpy value is needed (a Python bool is not)."""
        r = self.ref(env, t, True)
        return f"_bool_({r})" if t.dtype.is_bool and t.shape.rank == 0 and self.on_host(
            t) else r

    # -- control flow and bodies, inlined ---------------------------------------------------------
    def sub_env(self, op, env, sub, pairs, loop_vars=None):
        """The environment of sub-graph `sub`: its placeholders bound to what feeds them."""
        position = {t: k for k, t in enumerate(sub.inputs)}
        return {t: loop_vars[position[t]] if i is None else env[op.inputs[i]]
                for t, i in pairs}

    def block_into(self, graph, env, indent, names):
        """Emit `graph`'s ops so that its outputs end up in the locals `names`: the op
        making an output assigns it there directly (nothing else keeps it alive)."""
        for t, name in zip(graph.outputs, names):
            if t not in self.wanted and t.op.graph is graph and t.op.type not in (
                    "placeholder", "capture", "const"):
                self.wanted[t] = name
        results = self.block(graph, env, indent)
        for t in graph.outputs:
            self.wanted.pop(t, None)
        for name, r in zip(names, results):
            if r != name:
                self.emit(indent, f"{name} = {r}")

    def inline_cond(self, op, env, indent, mine):
        (then_g, then_pairs), (else_g, else_pairs) = subgraph_feeds(op)
        pred = self.ref(env, op.inputs[0], True)
        names = [self.bind(env, mine, t) for t in op.outputs]     # maybe fewer (n_outputs)
        self.emit(indent, f"if {pred}:", op)
        self.block_into(then_g, self.sub_env(op, env, then_g, then_pairs), indent + 1, names)
        self.emit(indent, "else:", op)
        self.block_into(else_g, self.sub_env(op, env, else_g, else_pairs), indent + 1, names)

    def inline_call(self, op, env, indent, mine):
        (sub, pairs), = subgraph_feeds(op)
        names = [self.bind(env, mine, t) for t in op.outputs]
        self.block_into(sub, self.sub_env(op, env, sub, pairs), indent, names)

    inline_fused = inline_call

    def inline_while(self, op, env, indent, mine, switch=None):
        (cond_g, cond_pairs), (body_g, body_pairs) = subgraph_feeds(op)
        a = op.attrs
        n = a["n_vars"]
        names = [self.bind(env, mine, t) for t in op.outputs]
        grows = memory.accumulators(op) if op.notes and op.notes.get("append") else {}
        inits = [self.ref(env, t, True) for t in op.inputs[:n]]
        if n:
            comma = "," if n == 1 else ""
            self.emit(indent, f"{', '.join(names[:n])}{comma} = {', '.join(inits)}{comma}", op)
        rows = {j: self.fresh(f"rows_{names[j]}") for j in grows}
        for j, r in rows.items():
            self.emit(indent, f"{r} = []")
        stacks = self.collections(op, indent)
        owners = self.lend(op, stacks[2:])
        guard, i = self.fresh("guard"), self.fresh("i")
        if switch is not None:
            region, v, args = switch
            self.emit(indent, f"{guard} = {region}.guard(0)", op)
        else:
            self.emit(indent, f"{guard} = _loop_guard()", op)
        limit = a["maximum_iterations"]
        if limit is None:
            self.emit(indent, f"for {i} in _count():", op)
        else:
            bound = (self.ref(env, op.inputs[-1], True) if limit == "input"
                     else repr(int(limit)))
            self.emit(indent, f"for {i} in range(int({bound})):", op)
        loop_vars = names[:n]
        test, = self.block(cond_g, self.sub_env(op, env, cond_g, cond_pairs, loop_vars),
                           indent + 1)
        self.emit(indent + 1, f"if not {test}:", op)
        self.emit(indent + 2, "break")
        self.emit(indent + 1, f"if {i} == {guard}:", op)
        if switch is None:
            self.emit(indent + 2, f"raise _loop_limit_exceeded({guard})", op)
        else:        # into the compiled loop with this state, or on in this one
            grown = {j: self.fresh(f"grown_{names[j]}") for j in rows}
            for j, g in grown.items():
                self.emit(indent + 2, f"{g} = _concat_rows({names[j]}, {rows[j]})", grows[j][0])
            state = ", ".join([grown.get(j, name) for j, name in enumerate(names)] + args)
            self.emit(indent + 2, f"{v} = {region}.switch({i}, {state})", op)
            self.emit(indent + 2, f"if {v} is not None:", op)
            self.emit(indent + 3, "break")
            self.emit(indent + 2, f"{guard} = {region}.guard({i} + 1)", op)
        skip = {}
        for j, (cat, grow, item) in grows.items():
            skip[cat] = None
            skip[grow] = (lambda e, r=rows[j], item=item:
                          f"{r}.append({self.numpy_scalar(e, item)})")
        results = self.block(body_g, self.sub_env(op, env, body_g, body_pairs, loop_vars),
                             indent + 1, skip=skip)
        if stacks:
            for k, stack in enumerate(stacks[2:]):
                self.emit(indent + 1, f"{stack}.append({results[n + k]})", op)
            self.emit(indent + 1, f"{stacks[1]} = {i} + 1")
        keep = [j for j in range(n) if j not in grows]
        if keep:
            lhs = ", ".join(names[j] for j in keep)
            rhs = ", ".join(results[j] for j in keep)
            comma = "," if len(keep) == 1 else ""
            self.emit(indent + 1, f"{lhs}{comma} = {rhs}{comma}")
        for j, r in rows.items():       # (a failure here is the append's: its concat's)
            self.emit(indent, f"{names[j]} = _concat_rows({names[j]}, {r})", grows[j][0])
            self.emit(indent, f"del {r}")
        for j, stack in owners.items():
            self.emit(indent, f"{names[j]} = {stack}.own({names[j]})")
        if stacks:
            self.emit(indent, f"{', '.join(names[n:])}, = {stacks[0]}("
                              f"{n}, [{', '.join(stacks[2:])}], {stacks[1]})", op)
            self.emit(indent, f"del {', '.join(stacks[1:])}")
            self.arrays.add(names[n])       # the trip count: a 0-d array

    def lend(self, op, stacks):
        """Have the body of collecting loop `op` compute the values its collections take
        into them (`_Collection.slot`), where an elementwise or fused op of the body makes
        them (over a static shape). {loop variable: the collection to `own` its final
        value} for loop variables whose next value is one of those."""
        body, n = op.attrs["body_graph"], op.attrs["n_vars"]
        owners = {}
        for t, stack in zip(body.outputs[n:], stacks):
            if t in self.slots or not self.lendable(t, body):
                continue
            dtype = self.glob(t.dtype.np, "dt_" + t.dtype.np.name)
            self.slots[t] = f"{stack}.slot({dtype}, {tuple(t.shape.dims)})"
            if t.op.type == "fused":
                self.slots[t.op.attrs["body"].outputs[0]] = self.slots[t]
            owners.update((j, stack) for j in range(n) if body.outputs[j] is t)
        return owners

    def lendable(self, t, body):
        """Can `t`, made by an op of `body`, be computed into an array given (`lend`)?"""
        op = t.op
        return (op.graph is body and (op.type == "fused" or op.opdef.elementwise)
                and len(op.outputs) == 1 and t.shape.rank and t.shape.is_fully_defined()
                and t.dtype.np.kind in "biufc" and self.on_host(t))

    def collections(self, op, indent):
        """For while `op` collecting body values for its gradient: emit its collections
        and trip count; [the name of the function giving its outputs after its loop
        variables from (n_vars, collections, trips), the trip count's, each collection's]."""
        count = op.attrs.get("stacks")
        if count is None:
            return []
        from .control_flow import collected_outputs, loop_collections
        body = op.attrs["body_graph"]
        start = self.glob(functools.partial(loop_collections, np, body), "collections")
        done = self.glob(functools.partial(collected_outputs, np, body), "collected")
        trips = self.fresh("trips")
        stacks = [self.fresh(f"stack_{k}") for k in range(count)]
        self.emit(indent, f"{', '.join(stacks)}, = {start}({count})", op)
        self.emit(indent, f"{trips} = 0")
        return [done, trips] + stacks


def _quiet(op):
    """Whether `op` runs quiet: its kernel ignores numpy's error state, or it is a rank-0
    integer op whose numpy scalar operator would check overflow its kernel does not."""
    d = op.opdef
    return d.quiet or d.checked and op.outputs[0].shape.rank == 0 and (
        op.outputs[0].dtype.is_integer)


def _holds_quiet(ops):
    """Whether one of `ops`, or of the ops in their sub-graphs, runs quiet."""
    return any(_quiet(op) or any(_quiet(inner) for sub in op.subgraphs()
                                 for g in graphs_in(sub) for inner in g.ops)
               for op in ops)


def _live_ops(graph):
    """The ops running `graph` needs (what its outputs, control outputs and stateful ops
    depend on, as the pruning pass keeps), or None when that is every op (a pruned graph):
    an unoptimized graph runs no check nothing reads, as the plain executor."""
    roots = list(graph.control_outputs) + [op for op in graph.ops if op.stateful]
    needed = graph.needed_set(graph.outputs, (), roots)
    return None if len(needed) == len(graph.ops) else needed


def _array_constants(ops):
    """The array constants `ops` and their sub-graphs read (compiled code takes them as
    arguments; scalars are written into its source)."""
    found = []
    for op in ops:
        if op.type == "const" and op.attrs["value"].ndim:
            found.append(op.outputs[0])
        for sub in op.subgraphs():
            found.extend(_array_constants(sub.ops))
    return found


class _Operands:
    """The sources of an op's operands, for its registry entry's `emit`."""

    __slots__ = ("compiler", "env", "op")

    def __init__(self, compiler, env, op):
        self.compiler, self.env, self.op = compiler, env, op

    def array(self, i):
        """Operand i as an array (a rank-0 value as a 0-d array)."""
        return self.compiler.ref(self.env, self.op.inputs[i], False)

    def scalar(self, i):
        """Operand i, a rank-0 value as a numpy scalar (or Python bool)."""
        return self.compiler.ref(self.env, self.op.inputs[i], True)

    def literal(self, value):
        return self.compiler.literal(value)

    def name(self, obj, base):
        """A name in the generated code's namespace bound to `obj`."""
        return self.compiler.glob(obj, base)


def _threads():
    return config.get_inter_op_threads()


def _loop_guard():
    """The iteration index at which a graph loop fails: the loop limit (-1: never)."""
    limit = config.get_loop_iteration_limit()
    return -1 if limit is None else limit


def _fail(exc, line_ops):
    """The plain executor's error for `exc`, naming the op whose line raised it."""
    tb = exc.__traceback__
    op = line_ops.get(tb.tb_lineno) if tb is not None else None
    if op is None:
        return exc
    err = op_error(op, exc)
    if err is not exc:
        err.__cause__ = exc
    return err
