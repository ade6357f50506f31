"""Graph functions: `rt.function` traces Python into a graph once per input signature.

Calling a `Function` computes a key from its arguments (shape and dtype of each
tensor, value of each Python argument, identity of each variable), traces the
Python function into a `ConcreteFunction` on the first call with that key, and
runs its graph. Inside another graph, the call becomes one `call` operation
that owns the callee's graph. Python side effects happen only while tracing.

Variables follow TensorFlow's rule: only a function's first trace may create them
(they are created eagerly and kept). A first trace that created variables is
followed by a second one, as later calls will run it, which must create none: a
function creating a variable on every call fails on its first call, and otherwise
its graph and its Python agree from the first call on. Traces are kept in a cache
of `rt.config.get_trace_cache_size()` entries (least recently used dropped first);
frequent retracing warns, naming the argument that changed (`trace_warnings`), and
`reduce_retracing=True` traces with the dimensions that changed left unknown.
Errors raised through a call lose the runtime's and compiler's frames from their
tracebacks (`rt.config.set_traceback_filtering`).
"""
import collections
import functools
import inspect
import logging
import threading
import types
import weakref

import numpy as np

from . import config
from . import control_flow
from . import context
from . import devices
from . import dtypes
from . import failed_trace
from . import nest
from . import trace_warnings
from . import traceback_utils
from .auto_control_deps import add_control_dependencies
from .errors import OpError
from .executor import function_runner, run_graph
from .graph import Graph, Operation
from .ops import logging_ops, registry
from .ops.registry import apply, convert_to_tensor
from .passes import no_collections
from .shapes import TensorShape
from .tensor import EagerTensor, SymbolicTensor, Tensor
from .variables import Variable, creation_rule

__all__ = ["function", "Function", "ConcreteFunction", "TensorSpec"]

_log = logging.getLogger(__name__)


class TensorSpec:
    """Describes a tensor argument: `rt.TensorSpec(shape, dtype)`; dims may be None."""

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape=None, dtype=dtypes.float32, name=None):
        self.shape = TensorShape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, t, name=None):
        """The spec of tensor `t`: its shape and dtype."""
        return cls(t.shape, t.dtype, name)

    def is_compatible_with(self, t):
        """Whether tensor `t` fits: the same dtype, and its shape matches where known."""
        return self.dtype == t.dtype and self.shape.is_compatible_with(t.shape)

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __repr__(self):
        name = f", name={self.name!r}" if self.name else ""
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype!r}{name})"


# -- the call operation ------------------------------------------------------------------

def _call_kernel(xp, *arrays, f):
    return run_graph(f, arrays)


def _call_infer(inputs, f):
    return [(t.shape, t.dtype) for t in f.outputs]      # hidden outputs too


_CALL = registry.register("call", _call_kernel, _call_infer, multi=True, container=True,
                          numpy=lambda *arrays, f: run_graph(f, arrays))


def _placeholder(spec_shape, dtype, name):
    op = context.current_graph().create_op(
        registry.get("placeholder"), [], {"shape": spec_shape.dims, "dtype": dtype},
        [(spec_shape, dtype)], name=name)
    return op.outputs[0]


class ConcreteFunction:
    """One trace of a Python function: a graph plus how to map arguments and results.

    Call it like the Python function (with tensors matching the trace's signature; Python
    arguments must equal the traced values). `graph` is the graph as traced,
    `optimized_graph` the one that runs; both print as a readable program.
    """

    def __init__(self, graph, output_template, arg_template, name):
        self.graph = graph
        self._output_template = output_template
        self._arg_template = arg_template      # (args, kwargs) with TensorSpec leaves
        self.name = name
        self._single = type(output_template) is nest.Slot
        self._single_dtype = (graph.outputs[output_template.index].dtype if self._single
                              else None)       # the one result's DType, as traced
        self._single_index = output_template.index if self._single else None
        self._single_np = self._single_dtype._np if self._single else None
        self._captures = []                   # the captured outer tensors (cached)
        self._call_attrs = {"f": graph}
        self._last_call = 0                   # the Function's call count when last used

    @property
    def inputs(self):
        """The graph's input placeholders, one per tensor argument (flattened)."""
        return list(self.graph.inputs)

    @property
    def outputs(self):
        """The graph's output tensors (flattened)."""
        return list(self.graph.visible_outputs)

    @property
    def structured_outputs(self):
        """The outputs in the structure the Python function returned."""
        return nest.pack_sequence_as(
            self._output_template,
            [logging_ops.ChosenText(self.graph.outputs[leaf.index], leaf.choices)
             if isinstance(leaf, nest.Choice) else self.graph.outputs[leaf.index]
             if isinstance(leaf, nest.Slot) else leaf
             for leaf in nest.flatten(self._output_template)])

    @property
    def structured_input_signature(self):
        """`(args, kwargs)` as traced, with a TensorSpec for each tensor argument."""
        return self._arg_template

    @property
    def optimized_graph(self):
        """The graph that runs: `graph` as the passes rewrite it under the current
        `rt.config` settings (`graph` itself when optimizations are off)."""
        from .executor import optimized_graph
        return optimized_graph(self.graph)

    def _call_flat(self, tensors):
        """Run on flat input tensors (eager or symbolic); returns the structured result."""
        if not registry.tape_hooks and context.current_graph() is None:
            return self._call_eager(tensors)
        outs = apply(_CALL, list(tensors) + self._capture_list(), self._call_attrs,
                     name=self.name)
        return self._structured(outs)

    def _call_eager(self, tensors, arrays=None):
        """What a `call` op does eagerly (outside graphs and tapes, so nothing records it),
        without the op: the graph's runner called on the arrays (`arrays`: the tensors',
        when the caller has them), the results wrapped. While devices are placing, the op
        itself runs (it places the call, logs it)."""
        if devices.placing:
            return self._structured(apply(_CALL, list(tensors) + self._capture_list(),
                                          self._call_attrs, name=self.name))
        graph = self.graph
        run = graph._plans.get(config._state["version"]) or function_runner(graph)
        try:
            if arrays is None:
                arrays = [t._value for t in tensors]
            if graph.captures:
                arrays += [t._value for t in self._capture_list()]
            outs = run(arrays)
        except OpError:
            raise
        except Exception as e:  # noqa: BLE001 - re-raised naming the call, as the op does
            inputs = [*tensors, *self._capture_list()]
            if any(not hasattr(t, "_value") for t in inputs):    # a symbolic tensor leaked
                raise registry.leaked_symbolic_error(_CALL, inputs) from None
            raise registry.eager_kernel_error(_CALL, inputs, self._call_attrs, e) from e
        index = self._single_index
        if index is not None:
            v = outs[index]
            if type(v) is np.ndarray and v.dtype is self._single_np:    # (numpy's own dtype)
                return EagerTensor(v, self._single_dtype)
            return registry.eager_tensor(v)
        return self._structured(list(map(registry.eager_tensor, outs)))

    def _capture_list(self):
        """The captured outer tensors, fed after the inputs."""
        captures = self._captures
        if len(captures) != len(self.graph.captures):
            captures = self._captures = [outer for outer, _ in self.graph.captures]
        return captures

    def _structured(self, outs):
        """The result's structure, holding `outs` (the flat results)."""
        if self._single:
            return outs[self._output_template.index]
        leaves = [leaf.chosen(outs[leaf.index]) if isinstance(leaf, nest.Choice) else
                  outs[leaf.index] if isinstance(leaf, nest.Slot) else leaf
                  for leaf in nest.flatten(self._output_template)]
        return nest.pack_sequence_as(self._output_template, leaves)

    def __call__(self, *args, **kwargs):
        """Call with the arguments of the trace, or with just its tensor arguments.

        Python arguments are fixed by the trace; values given for them are ignored.
        """
        template = self._arg_template
        try:
            pairs = zip(nest.flatten(template),
                        nest.flatten_up_to(template, (tuple(args), kwargs)))
            given = [value for spec, value in pairs if isinstance(spec, TensorSpec)]
        except ValueError:
            given = self._given_by_name(args, kwargs)
        specs = self.graph.inputs
        if len(given) != len(specs):
            raise TypeError(f"{self.name}: expected {len(specs)} tensor arguments, got "
                            f"{len(given)}")
        tensors = []
        for i, (value, ph) in enumerate(zip(given, specs)):
            t = value if isinstance(value, Tensor) else convert_to_tensor(
                value, dtype_hint=ph.dtype)
            if t.dtype != ph.dtype or not t.shape.is_compatible_with(ph.shape):
                raise ValueError(f"{self.name}: tensor argument {i} has dtype {t.dtype.name} "
                                 f"and shape {t.shape}, but the trace expects dtype "
                                 f"{ph.dtype.name} and shape {ph.shape}")
            tensors.append(t)
        return self._call_flat(tensors)

    def _given_by_name(self, args, kwargs):
        """Tensor arguments given in another form than traced: positional ones in order,
        keyword ones at the input named like them (never in alphabetical order)."""
        given = [leaf for leaf in nest.flatten(list(args))
                 if isinstance(leaf, (Tensor, np.ndarray, int, float))]
        if not kwargs:
            return given
        names = [ph.op.name for ph in self.graph.inputs]
        unknown = sorted(set(kwargs) - set(names[len(given):]))
        if unknown:
            raise TypeError(f"{self.name}: unexpected keyword arguments {unknown}; its tensor "
                            f"arguments are {names}")
        return given + [kwargs[n] for n in names[len(given):] if n in kwargs]

    def __repr__(self):
        return f"<ConcreteFunction {self.name} ({len(self.graph.ops)} ops)>"


# -- signature keys -----------------------------------------------------------------------

class _Unhashable:
    """Key part for an argument we can only compare by identity."""

    __slots__ = ("ref", "__weakref__")

    def __init__(self, obj):
        self.ref = id(obj)

    def __eq__(self, other):
        return isinstance(other, _Unhashable) and other.ref == self.ref

    def __hash__(self):
        return hash(self.ref)


def _encode(x, tensors):
    """A hashable key part for argument `x`; tensor leaves are appended to `tensors`."""
    t = type(x)
    if t is EagerTensor:                        # the common cases first: calls are hot
        tensors.append(x)
        return (x._dtype, x._value.shape)
    if t is tuple or t is list:
        return (t,) + tuple([_encode(v, tensors) for v in x])
    if isinstance(x, EagerTensor):
        tensors.append(x)
        return (x._dtype, x._value.shape)
    if isinstance(x, SymbolicTensor):
        tensors.append(x)
        return (x._dtype, x._shape.dims)
    if isinstance(x, np.ndarray):
        t = EagerTensor(registry.to_array(x))
        tensors.append(t)
        return (t._dtype, x.shape)
    if isinstance(x, Variable):
        return ("variable", x.uid)
    t = type(x)
    if t is tuple or t is list:
        return (t,) + tuple(_encode(v, tensors) for v in x)
    if isinstance(x, dict):             # OrderedDict, defaultdict too: by content
        return (t,) + tuple((k, _encode(x[k], tensors)) for k in nest._sorted_keys(x))
    if isinstance(x, tuple) and hasattr(t, "_fields"):
        return (t,) + tuple(_encode(v, tensors) for v in x)
    if isinstance(x, TensorSpec):
        tensors.append(x)
        return (x.dtype, x.shape.dims)
    try:
        hash(x)
    except TypeError:
        return (t, _Unhashable(x))
    return (t, x)


def _key(args, kwargs, tensors):
    """The trace cache key of a call: its arguments' (`_encode`), and the `rt.device`
    scope it is made in (a function traced in one scope is traced again in another)."""
    key = (_encode(args, tensors), _encode(kwargs, tensors) if kwargs else None)
    device = context.device_name()
    return key if device is None else key + (device,)


def _signature_key():
    """The trace cache key of a function with an input_signature: one trace per scope."""
    device = context.device_name()
    return "signature" if device is None else ("signature", device)


_thread = context._state      # the per-thread context: read directly on the dispatch fast path


def _direct_key(args):
    """(the dispatch cache's key of positional arguments, their arrays), or (None, None)
    unless all are eager tensors. The key: the `rt.device` scope's name and each one's
    dtype (its name: names DTypes one to one, and hashes faster) and shape."""
    key, arrays = (_thread.device,), []
    for a in args:
        if type(a) is not EagerTensor:
            return None, None
        value = a._value
        key += (a._dtype.name, value.shape)
        arrays.append(value)
    return key, arrays


def _replace_tensors(x, fn):
    """`x` with each tensor-like leaf replaced by fn(leaf, path).

    Leaves are visited in `_encode`'s (and nest.flatten's) order: dicts by sorted key.
    """
    def walk(v, path):
        if isinstance(v, (Tensor, np.ndarray, TensorSpec)):
            return fn(v, path)
        t = type(v)
        if t is tuple or t is list:
            return t(walk(c, f"{path}_{i}") for i, c in enumerate(v))
        if isinstance(v, dict):
            replaced = {k: walk(v[k], f"{path}_{k}") for k in nest._sorted_keys(v)}
            return _same_kind_of_dict(v, [(k, replaced[k]) for k in v])
        if isinstance(v, tuple) and hasattr(t, "_fields"):
            return t(*(walk(c, f"{path}_{f}") for f, c in zip(t._fields, v)))
        return v
    return walk(x, "")


def _same_kind_of_dict(like, items):
    """A dict of `like`'s type (an OrderedDict stays one; a defaultdict keeps its factory)
    holding `items`."""
    if type(like) is dict:
        return dict(items)
    if isinstance(like, collections.defaultdict):
        out = collections.defaultdict(like.default_factory)
        out.update(items)
        return out
    try:
        return type(like)(items)
    except TypeError:
        return dict(items)


def _reusable(concrete):
    """Whether a trace may serve later calls: not if it captured tensors of the graph
    being traced around it (a nested function using its caller's values)."""
    return not any(isinstance(outer, SymbolicTensor) for outer, _ in concrete.graph.captures)


def _spec_of(v):
    """The TensorSpec of a tensor-like argument (a TensorSpec stays as it is)."""
    if isinstance(v, TensorSpec):
        return v
    return TensorSpec.from_tensor(v if isinstance(v, Tensor) else EagerTensor(
        registry.to_array(v)))


def _output_leaf(x):
    if isinstance(x, Tensor):
        return context.current_graph().capture(x)
    if isinstance(x, Variable):
        return x.read_value()
    as_tensor = getattr(x, "_as_tensor", None)
    if as_tensor is not None:           # a list grown in a graph loop: its stacked tensor
        return context.current_graph().capture(as_tensor())
    if isinstance(x, Operation):
        return None
    if isinstance(x, (bool, int, float, complex, np.generic, np.ndarray)):
        return registry.constant(x)
    return x


def trace_into_graph(python_function, args, kwargs, name, arg_names):
    """Trace `python_function` on placeholders; returns a ConcreteFunction."""
    with no_collections():          # (tracing makes thousands of objects that stay)
        return _trace_into_graph(python_function, args, kwargs, name, arg_names)


def _shown_choice(choice):
    """A choice of a ChosenText as an error message shows it: an f-string's literal text
    with `{...}` where it formats a tensor."""
    if type(choice) is str:
        return repr(choice)
    return repr("".join(p if isinstance(p, str) else "{...}" for p in choice.parts))


def _trace_into_graph(python_function, args, kwargs, name, arg_names):
    graph = Graph(name=name, outer_graph=context.current_graph())
    graph.is_function = True
    graph.device = context.device_name()         # results go where the function is called
    with graph.as_default():
        def to_placeholder(v, path):
            spec = _spec_of(v)
            ph = _placeholder(spec.shape, spec.dtype, spec.name or path.lstrip("_") or "arg")
            graph.inputs.append(ph)
            return ph

        p_args = [
            _replace_tensors(a, lambda v, p, n=n: to_placeholder(v, n + p))
            for a, n in zip(args, arg_names)]
        p_kwargs = _replace_tensors(kwargs, to_placeholder)
        with trace_warnings.unrolled_loops_of(name):
            try:
                result = python_function(*p_args, **p_kwargs)
            except Exception as e:
                failed_trace.remember(e, graph)     # its prints still run (_lookup)
                raise
        leaves = [_output_leaf(x) for x in nest.flatten(result)]
        outputs, template_leaves = [], []
        for leaf in leaves:
            if isinstance(leaf, logging_ops.ChosenText):       # the string, when it runs
                if not leaf.plain():
                    raise TypeError(
                        f"{name} returns a string formatted from tensors and chosen by a "
                        f"tensor condition (one of "
                        f"{' or '.join(_shown_choice(c) for c in leaf.choices)}): print it "
                        f"in the function, or return the tensors and format them outside")
                template_leaves.append(nest.Choice(len(outputs), leaf.choices))
                outputs.append(leaf.index)
            elif isinstance(leaf, Tensor):
                template_leaves.append(nest.Slot(len(outputs)))
                outputs.append(leaf)
            else:
                template_leaves.append(leaf)
        graph.outputs = outputs
        hidden = _replayed_values(graph)
        if hidden:
            graph.outputs = outputs + hidden
            graph.n_visible = len(outputs)
        template = nest.pack_sequence_as(result, template_leaves)
    add_control_dependencies(graph)
    arg_template = _replace_tensors((tuple(args), kwargs), lambda v, p: v if isinstance(
        v, TensorSpec) else TensorSpec.from_tensor(convert_to_tensor(v)))
    return ConcreteFunction(graph, template, arg_template, name)


def _replayed_values(graph):
    """The values a gradient must not recompute: variable reads at the top level of
    `graph` and every value drawn in it (`drawn_values`). They become hidden outputs of
    the function, which its gradient is fed (see gradients/function_grad.py): a dropout
    mask differentiated is the mask the forward pass drew, and a variable has the value
    the forward pass read, even if it was assigned since."""
    hidden = []
    for op in graph.ops:
        if op.opdef.effect == "read":
            hidden.extend(op.outputs)
        elif op.type == "call":
            hidden.extend(_hidden_of_call(op))
        else:
            hidden.extend(_drawn_by(op, True))
    return hidden


def _hidden_of_call(op):
    inner = op.attrs["f"]
    return list(op.outputs[inner.n_visible:]) if inner.n_visible is not None else []


def variable_read(t):
    """The variable whose read `t` (a hidden output) is, looking into called functions."""
    op = t.op
    if op.opdef.effect == "read":
        return op.attrs["var"]
    if op.type == "call":
        return variable_read(op.attrs["f"].outputs[t.index])
    return None


def drawn_values(graph, expose=False):
    """The tensors of `graph` that hold every value drawn in it: outputs of random ops
    and py_functions, those of the functions it calls (their hidden outputs other than
    variable reads), and for a cond or while
    whose sub-graphs draw, the op's outputs giving their draws (a cond's: each branch's,
    zeros from the other branch; a loop's: their values at every iteration, stacked).
    With `expose` those outputs are added where missing, else only existing ones count."""
    return [t for op in graph.ops for t in _drawn_by(op, expose)]


def _drawn_by(op, expose):
    if op.type == "call":           # (a read is read again: it has a gradient)
        return [t for t in _hidden_of_call(op) if variable_read(t) is None]
    if op.type == "cond":
        return [t for side in ("then", "else")
                for t in _branch_draws(op, side, expose)]
    if op.type == "while":
        return [t for draw in drawn_values(op.attrs["body_graph"], expose)
                for t in _loop_draws(op, draw, expose)]
    if op.opdef.stateful and op.opdef.effect is None and op.outputs and op.opdef.grad is None:
        return list(op.outputs)
    return []


def _branch_draws(op, side, expose):
    branch = op.attrs[f"{side}_graph"]
    found = []
    for t in drawn_values(branch, expose):
        if expose:
            found.append(control_flow.expose_branch_value(op, side, t))
            continue
        k = next((k for k, out in enumerate(branch.outputs) if out is t), len(op.outputs))
        found.extend(op.outputs[k:k + 1])
    return found


def _loop_draws(op, t, expose):
    if expose:
        return list(control_flow.loop_stack(op, t))
    k = control_flow.stack_position(op, t)
    return [] if k is None else list(op.outputs[k:k + 2])


def _bind_weakly(func, instance, owner):
    """`func` bound to `instance` like a method, but holding `instance` by a weak reference."""
    method = func.__get__(instance, owner)
    if not isinstance(method, types.MethodType) or method.__self__ is not instance:
        return method                       # staticmethod, classmethod, or a callable object
    ref = weakref.ref(instance)
    unbound = method.__func__

    def weak_method(*args, **kwargs):
        obj = ref()
        if obj is None:
            raise ReferenceError(
                f"{unbound.__qualname__}: the instance this method was bound to no longer "
                f"exists; keep a reference to the object while calling its rt.function "
                f"methods.")
        return unbound(obj, *args, **kwargs)

    functools.update_wrapper(weak_method, unbound)    # __wrapped__: source lookups work
    weak_method.unbound_function = unbound             # what it calls (for ag.to_code)
    try:                                    # inspect.signature must not list `self`
        weak_method.__signature__ = inspect.signature(method)
    except (TypeError, ValueError):
        pass
    return weak_method


# -- Function -------------------------------------------------------------------------------

class Function:
    """A Python function traced into graphs per input signature (see `rt.function`).

    Calling it finds (or makes) the trace for the arguments and runs its graph.
    `python_function` is the function as given (for `ag.convert`: the unconverted one).
    """

    def __init__(self, python_function, input_signature=None, name=None, _tracer=None,
                 jit_compile=False, memory_budget=None, reduce_retracing=False):
        if not callable(python_function):
            raise TypeError(f"rt.function expects a callable (a function or method), got "
                            f"{type(python_function).__name__} {python_function!r:.60}")
        _check_input_signature(input_signature)
        self.python_function = python_function
        self._name = name or getattr(python_function, "__name__", "function")
        self.input_signature = (None if input_signature is None
                                else tuple(nest.flatten(input_signature)))
        self._signature_structure = input_signature
        self.reduce_retracing = bool(reduce_retracing)
        self._cache = {}                    # signature key -> ConcreteFunction
        self._direct = {}                   # _direct_key -> ConcreteFunction (see _lookup)
        self._general = {}                  # reduce_retracing: shape-free key -> (specs, trace)
        self._calls = 0                     # calls so far (traces remember when they ran last)
        self._traces = 0                    # traces made (the first may create variables)
        self._last_template = None          # the arguments of the last trace, as specs
        self._retraces = trace_warnings.RetraceMonitor()
        self._lock = threading.RLock()
        self._bound = weakref.WeakKeyDictionary()
        self._bound_strong = {}
        self._tracer = _tracer              # autograph passes the converted function here
        self.jit_compile = bool(jit_compile)    # its graphs run in the compiled tier
        self.memory_budget = config.check_memory_budget(memory_budget)   # bytes, or None
        self._sig = None
        self._fast_arity = None
        functools.update_wrapper(self, python_function, updated=())
        self._init_signature(python_function)

    def _init_signature(self, fn):
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            return
        self._sig = sig
        params = list(sig.parameters.values())
        plain = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
        if plain:
            self._fast_arity = len(params)
        self._arg_names = [p.name for p in params]

    # -- method binding ------------------------------------------------------------
    def __get__(self, instance, owner=None):
        """`obj.method`: a BoundFunction over the Function made once per `obj` (its own
        traces), which refers to `obj` weakly, so the cache never keeps `obj` alive."""
        if instance is None:
            return self
        return BoundFunction(self._bound_to(instance, owner), instance)

    def _bound_to(self, instance, owner):
        """The per-instance Function (cached; it refers to the instance weakly)."""
        try:
            bound = self._bound.get(instance)
        except TypeError:                   # unhashable instance: keyed by id while alive
            bound = self._bound_strong.get(id(instance))
        if bound is not None:
            return bound
        with self._lock:
            try:
                bound = self._bound.get(instance)
            except TypeError:
                bound = self._bound_strong.get(id(instance))
            if bound is None:
                method = _bind_weakly(self.python_function, instance, owner)
                tracer = _bind_weakly(self._tracer, instance, owner) if self._tracer else None
                bound = type(self)(method, self._signature_structure, self._name, tracer,
                                   self.jit_compile, memory_budget=self.memory_budget,
                                   reduce_retracing=self.reduce_retracing)
                try:
                    self._bound[instance] = bound
                except TypeError:
                    self._bound_strong[id(instance)] = bound
                    weakref.finalize(instance, self._bound_strong.pop, id(instance), None)
        return bound

    # -- calling ---------------------------------------------------------------------
    def _canonicalize(self, args, kwargs):
        if not kwargs and self._fast_arity == len(args):
            return args, {}
        if self._sig is None:
            return args, kwargs
        try:
            bound = self._sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self._name}(): {e}") from None
        bound.apply_defaults()
        return bound.args, bound.kwargs

    def _arg_names_for(self, args):
        """The parameter name of each positional argument; `args_i` from `*args` on."""
        names = []
        for name in getattr(self, "_arg_names", []):
            if self._sig.parameters[name].kind not in (inspect.Parameter.POSITIONAL_ONLY,
                                                       inspect.Parameter.POSITIONAL_OR_KEYWORD):
                break
            names.append(name)
        return [names[i] if i < len(names) else f"args_{i}" for i in range(len(args))]

    def _check_signature_structure(self, args, kwargs):
        """The arguments at the input_signature's TensorSpecs, flat. Keyword arguments
        are bound to their parameters first (`f(x, by=t)` as `f(x, t)`)."""
        if kwargs:
            if self._sig is None:
                raise TypeError(f"{self._name}: functions with an input_signature take "
                                f"positional arguments only")
            try:
                bound = self._sig.bind(*args, **kwargs)
            except TypeError as e:
                raise TypeError(f"{self._name}(): {e}") from None
            if bound.kwargs:
                raise TypeError(f"{self._name}: the input_signature covers positional "
                                f"parameters; {sorted(bound.kwargs)} are keyword-only")
            args = bound.args
        try:
            return nest.flatten_up_to(list(self._signature_structure), list(args))
        except ValueError as e:
            raise TypeError(f"{self._name}: the arguments do not match the input_signature "
                            f"{self._signature_structure}: {e}") from None

    def _apply_signature(self, args, kwargs):
        """The arguments as tensors, checked against the input_signature."""
        flat = self._check_signature_structure(args, kwargs)
        tensors = []
        for i, (value, spec) in enumerate(zip(flat, self.input_signature)):
            t = value if isinstance(value, Tensor) else convert_to_tensor(
                value, dtype_hint=spec.dtype)
            if t.dtype != spec.dtype or not t.shape.is_compatible_with(spec.shape):
                raise ValueError(
                    f"{self._name}: argument {i} has dtype {t.dtype.name} and shape {t.shape}, "
                    f"which does not match the input_signature {spec}")
            tensors.append(t)
        return tensors

    def _lookup(self, args, kwargs):
        """(the trace to run, the flat tensors to feed it); a call that found its trace in
        the cache, given eager tensors only, is remembered for the dispatch cache."""
        if self.input_signature is not None:
            tensors = self._apply_signature(args, kwargs)
            concrete = self._cache.get(_signature_key())
            if concrete is None:
                return self._tracing(tensors, self._signature_concrete), tensors
            self._remember_direct(args, kwargs, args, tensors, concrete)
            return concrete, tensors
        given = args
        args, kwargs = self._canonicalize(args, kwargs)
        tensors = []
        key = _key(args, kwargs, tensors)
        self._calls = calls = self._calls + 1
        concrete = self._cache.get(key)
        if concrete is None:
            return self._tracing(tensors, self._trace_with_key, key, args, kwargs)[0], tensors
        concrete._last_call = calls
        self._remember_direct(given, kwargs, args, tensors, concrete)
        return concrete, tensors

    @staticmethod
    def _tracing(tensors, trace, *args):
        """`trace(*args)` for a call fed `tensors`; if it raises, the prints it staged run
        first, as the Python run eagerly would have printed them (failed_trace.py)."""
        try:
            return trace(*args)
        except Exception as e:
            failed_trace.run_staged_prints(e, tensors)
            raise

    # A JAX-style dispatch cache for the common call: eager tensors only, positionally,
    # outside graphs and tapes. Its key (each argument's dtype and shape) costs a fraction
    # of `_encode`'s, and the trace it finds is called directly (`_call_eager`).
    _DIRECT_LIMIT = 256

    def _remember_direct(self, given, kwargs, args, tensors, concrete):
        """Keep `concrete` for calls like this one, if it was given eager tensors only, as
        the trace's inputs in order (no Python values, defaults or nesting)."""
        if kwargs or args is not given or len(tensors) != len(given):
            return
        for t, a in zip(tensors, given):
            if t is not a or type(a) is not EagerTensor:
                return
        if len(self._direct) >= self._DIRECT_LIMIT:
            self._direct.clear()
        self._direct[_direct_key(given)[0]] = concrete

    def _trace_with_key(self, key, args, kwargs):
        """(the trace to run now, the trace kept for `key`): they differ on a first trace
        that created variables, whose second trace is what later calls run."""
        with self._lock:
            concrete = self._cache.get(key)
            if concrete is not None:
                return concrete, concrete
            if self.reduce_retracing and key != _signature_key():
                now, kept = self._general_trace(args, kwargs)
            else:
                now, kept = self._trace(args, kwargs)
            if _reusable(kept):
                self._keep(key, kept)
            return now, kept

    def _trace(self, args, kwargs):
        """Trace on `args` (TensorSpecs stand for tensors): (trace to run now, trace to keep)."""
        fn = self._tracer if self._tracer is not None else self.python_function
        names = self._arg_names_for(args)
        refusal = None if self._traces == 0 else (
            "again, for arguments unlike those of its earlier traces")
        with creation_rule(self._name, refusal) as rule:
            now = self._traced(fn, args, kwargs, names)
        self._traces += 1
        self._note_retrace(now.structured_input_signature, names)
        if not rule.created:
            return now, now
        with creation_rule(self._name, "a second time, as its later calls will run: it "
                           "creates a new variable each time it runs"):
            kept = self._traced(fn, args, kwargs, names)
        return now, kept

    def _traced(self, fn, args, kwargs, names):
        concrete = trace_into_graph(fn, list(args), kwargs, self._name, names)
        concrete.graph.jit_compile = self.jit_compile
        if self.memory_budget is not None:
            concrete.graph.memory_budget = self.memory_budget   # read by the passes
        return concrete

    def _note_retrace(self, template, names):
        """Count a trace; a frequent retracer warns, saying which argument changed."""
        previous, self._last_template = self._last_template, template
        reasons = [] if previous is None else trace_warnings.changed_arguments(
            previous, template, names, self.reduce_retracing)
        self._retraces.traced(self._calls, self._name, reasons)

    def _general_trace(self, args, kwargs):
        """reduce_retracing: the first trace for each structure and Python values is
        exact; a later one whose tensors differ in shape traces with the dimensions that
        differ unknown, and serves every call it is compatible with."""
        template = _replace_tensors((tuple(args), kwargs), lambda v, p: _spec_of(v))
        specs = [leaf for leaf in nest.flatten(template) if isinstance(leaf, TensorSpec)]
        shapeless = _replace_tensors(template, lambda spec, p: TensorSpec(
            None if spec.shape.rank is None else [None] * spec.shape.rank, spec.dtype))
        structure = (_encode(shapeless[0], []), _encode(shapeless[1], []))
        entry = self._general.get(structure)
        if entry is not None:
            general, concrete = entry
            if all(g.shape.is_compatible_with(s.shape) for g, s in zip(general, specs)):
                return concrete, concrete
            specs = [TensorSpec(g.shape.most_specific_compatible_shape(s.shape), s.dtype,
                                s.name) for g, s in zip(general, specs)]
            relaxed = iter(specs)
            args, kwargs = _replace_tensors(template, lambda spec, p: next(relaxed))
        now, kept = self._trace(args, kwargs)
        if _reusable(kept):
            self._general[structure] = (specs, kept)
        return now, kept

    def _keep(self, key, concrete):
        """Cache `concrete` for `key`; beyond rt.config's trace cache size, the least
        recently used trace goes (logged)."""
        concrete._last_call = self._calls
        self._cache[key] = concrete
        limit = config.get_trace_cache_size()
        while limit is not None and len(self._cache) > max(limit, 1):
            old_key = min(self._cache, key=lambda k: self._cache[k]._last_call)
            dropped = self._cache.pop(old_key)
            self._direct = {k: c for k, c in list(self._direct.items()) if c is not dropped}
            self._general = {k: v for k, v in self._general.items() if v[1] is not dropped}
            _log.warning("rt.function '%s': its trace cache is full (%d traces, "
                         "rt.config.set_trace_cache_size); dropped the least recently "
                         "used trace, for %s", self._name, limit,
                         trace_warnings.describe_arguments(dropped.structured_input_signature))

    def __call__(self, *args, **kwargs):
        try:
            if self._direct and not kwargs:        # the dispatch cache (see _lookup)
                key, arrays = _direct_key(args)
                concrete = self._direct.get(key)
                stack = _thread.stack       # eager, and graph functions run their graphs
                if (concrete is not None and not registry.tape_hooks
                        and (not stack or stack[-1] is None)
                        and not context._run_functions_eagerly):
                    self._calls = concrete._last_call = self._calls + 1
                    return concrete._call_eager(args, arrays)
            if context.functions_run_eagerly():
                fn = self._tracer if self._tracer is not None else self.python_function
                return fn(*args, **kwargs)
            concrete, tensors = self._lookup(args, kwargs)
            return concrete._call_flat(tensors)
        except Exception as e:  # noqa: BLE001 - the same error, its traceback filtered
            if config.get_traceback_filtering():
                raise traceback_utils.filtered(e)  # internal frames hidden: see rt.config
            raise

    def get_concrete_function(self, *args, **kwargs):
        """The ConcreteFunction for these arguments (TensorSpecs allowed), tracing if new.

        With an input_signature, the arguments may be omitted; given ones are checked.
        """
        if self.input_signature is not None:
            if args or kwargs:
                if any(not isinstance(leaf, TensorSpec) for leaf in nest.flatten(list(args))):
                    self._apply_signature(args, kwargs)
                else:
                    given = self._check_signature_structure(args, kwargs)
                    for i, (spec, want) in enumerate(zip(given, self.input_signature)):
                        if spec.dtype != want.dtype or not spec.shape.is_compatible_with(
                                want.shape):
                            raise ValueError(
                                f"{self._name}: argument {i} is {spec}, which does not "
                                f"match the input_signature {want}")
            return self._signature_concrete(kept=True)
        args, kwargs = self._canonicalize(args, kwargs)
        key = _key(args, kwargs, [])
        return self._cache.get(key) or self._trace_with_key(key, args, kwargs)[1]

    def _signature_concrete(self, kept=False):
        """The one trace of a function with an input_signature (on a first trace that
        created variables: the first to run now, unless `kept`)."""
        key = _signature_key()
        concrete = self._cache.get(key)
        if concrete is None:
            args = nest.pack_sequence_as(list(self._signature_structure),
                                         list(self.input_signature))
            now, kept_trace = self._trace_with_key(key, args, {})
            concrete = kept_trace if kept else now
        return concrete

    def experimental_get_tracing_count(self):
        """How many times the Python function was traced (a first trace that created
        variables and its second trace count once)."""
        return self._traces

    @property
    def concrete_functions(self):
        """The traces kept in the cache, each once."""
        return list({id(c): c for c in self._cache.values()}.values())

    def __repr__(self):
        return f"<rt.function {self._name}>"


class BoundFunction(Function):
    """`obj.method` for a graph-function method: the per-instance Function, which holds
    `obj` weakly (so its cache never keeps `obj` alive), plus a strong reference to
    `obj` for as long as this object lives — `Model().call(x)` works."""

    def __init__(self, function, instance):      # pylint: disable=super-init-not-called
        self._function = function
        self._instance = instance

    def __call__(self, *args, **kwargs):
        try:
            return self._function(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - the same error, its traceback filtered
            if config.get_traceback_filtering():
                raise traceback_utils.filtered(e)  # internal frames hidden: see rt.config
            raise

    def get_concrete_function(self, *args, **kwargs):
        return self._function.get_concrete_function(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._function, name)

    def __repr__(self):
        return repr(self._function)


def _check_input_signature(signature):
    """An input_signature is a list or tuple whose leaves are TensorSpecs."""
    if signature is None:
        return
    if not isinstance(signature, (list, tuple)):
        raise TypeError(f"input_signature must be a list or tuple of TensorSpecs (one per "
                        f"argument), got {type(signature).__name__}: write [{signature!r}]")
    for leaf in nest.flatten(list(signature)):
        if not isinstance(leaf, TensorSpec):
            raise TypeError(f"input_signature holds TensorSpecs, got {leaf!r} (for a dtype "
                            f"alone: rt.TensorSpec(None, {leaf!r}))")


def function(func=None, *, input_signature=None, name=None, jit_compile=False,
             memory_budget=None, reduce_retracing=False):
    """Decorator: trace `func` into a graph per input signature and run the graph.

        @rt.function
        def f(x, n):
            return x * n

        f(rt.constant([1.0, 2.0]), 3)     # traced once for (float32 (2,), Python 3)

    The input signature is each tensor argument's dtype and shape and each Python
    argument's value; a new signature traces again (`f.experimental_get_tracing_count()`),
    and frequent retracing warns (`rt.TracingWarning`). The function is not converted:
    use `ag.convert` for Python control flow on tensors. Returns a `Function`.

    `input_signature`: a list of `rt.TensorSpec` (None for unknown dimensions): one trace
    for every matching input, and inputs that do not match are refused.
    `jit_compile=True`: its graphs run in the compiled tier (numba, the `jit` extra).
    `memory_budget` (bytes): its graphs recompute loops' collected values until their
    planned peak memory fits (see `rt.config.set_memory_budget`). `reduce_retracing`:
    after a retrace caused by tensor shapes, trace with the dimensions that differed
    unknown (one graph for all lengths, say).
    """
    if func is None:
        return functools.partial(function, input_signature=input_signature, name=name,
                                 jit_compile=jit_compile, memory_budget=memory_budget,
                                 reduce_retracing=reduce_retracing)
    if isinstance(func, Function):
        return func
    return Function(func, input_signature=input_signature, name=name, jit_compile=jit_compile,
                    memory_budget=memory_budget, reduce_retracing=reduce_retracing)
