"""Variables: mutable state shared by eager code and graphs.

A variable owns an array on the device it was created on (the `rt.device` scope's;
its reads and writes run there too). Reading it in a graph adds a `read_variable` op and
writing adds an `assign*` op; both name the variable, so automatic control
dependencies keep accesses to one variable in program order. A variable created
while tracing a function is created eagerly ("lifted"), so a function can build
its variables on first call; as in TensorFlow, only its first trace may create
any (`creation_rule`, which `rt.function` sets while it traces). Inside a TF1-style
`rt.Graph` a variable starts uninitialized until its `initializer` (or
`global_variables_initializer`) runs.

Each variable has a lock, held by its `assign*` kernels (eagerly and in graphs), so an
update from one thread is never lost to another's: `assign_add` from many threads keeps
every increment. A read sees the value before or after an update, never a mix (an
update makes a new array; it never writes into the one a reader holds).
"""
import contextlib
import itertools
import threading

import numpy as np

from . import context
from . import rollback
from . import devices
from . import dtypes
from .errors import FailedPreconditionError
from .ops import registry
from .ops.math_ops import no_gradient
from .ops.registry import apply, convert_to_tensor
from . import shapes
from .shapes import TensorShape
from .tensor import EagerTensor, SymbolicTensor, Tensor, numpy_repr

__all__ = ["Variable", "global_variables_initializer", "trainable_variables",
           "creation_rule"]

_uids = itertools.count()
_access_hooks = []          # callables(variable) run when a variable is read (gradient tapes)
_hooks_lock = threading.Lock()


def _check_value(var, value):
    if not TensorShape(value.shape).is_subshape_of(var._shape):
        raise ValueError(f"Cannot assign a value of shape {list(value.shape)} to variable "
                         f"'{var.name}' of shape {var._shape}")
    return value


def _read_kernel(xp, var):
    return _value_of(var)


def _value_of(var):
    value = var._value
    if value is None:
        raise FailedPreconditionError(
            f"Attempting to use uninitialized variable '{var.name}'. Run its initializer "
            f"(or rt.global_variables_initializer()) first.")
    return value


def _read_infer(inputs, var):
    return [(var._shape, var.dtype)]


def _assign_kernel(xp, value, var):
    return _stored(var, _check_value(var, xp.asarray(value, dtype=var.dtype.of(xp), copy=True)))


def _numpy_assign(value, var):
    return _stored(var, _check_value(var, np.array(value, dtype=var.dtype.np, copy=True)))


def _stored(var, new):
    lock = var._lock            # so that an assign_add in another thread cannot undo it
    lock.acquire()
    try:
        if rollback.active() is not None:
            _journaled(var, var._value, new)
        var._value = new
    finally:
        lock.release()
    return new


class _Restore(rollback.Entry):
    """Puts a variable back to its value before a failed run, unless another thread wrote
    it after the run did (that write stays)."""

    __slots__ = ("var", "old", "new")

    def __init__(self, var, old):
        self.var, self.old, self.new = var, old, None

    def undo(self):
        with self.var._lock:
            if self.var._value is self.new:
                self.var._value = self.old

    def absorb(self, later):
        self.new = later.new


def _journaled(var, old, new):
    """Note, in the running graph's journal, a write of `new` over `old` (its lock held)."""
    rollback.note(var, _Restore(var, old)).new = new


def _update_kernels(name, verb, prep):
    """The (generic, numpy) kernels of assign_add / assign_sub (`name`: the standard's
    function): a delta may broadcast, the shape stays."""
    numpy_update = getattr(np, name)

    def kernel(xp, delta, var):
        delta = xp.astype(delta, var.dtype.of(xp), copy=False)
        return _updated(var, getattr(xp, name), delta, verb, prep)

    def numpy_kernel(delta, var):
        return _updated(var, numpy_update, delta.astype(var.dtype.np, copy=False), verb, prep)
    return kernel, numpy_kernel


def _updated(var, update, delta, verb, prep):
    lock = var._lock            # read, update and write as one step (acquire and release
    lock.acquire()              # cost half what a `with` statement does)
    try:
        old = _value_of(var)
        new = update(old, delta)
        if new.shape != old.shape:
            raise ValueError(f"Cannot {verb} a value of shape {list(delta.shape)} "
                             f"{prep} variable '{var.name}' of shape {var._shape}")
        if rollback.active() is not None:
            _journaled(var, old, new)
        var._value = new
    finally:
        lock.release()
    return new
    return kernel


def _update_infer(verb, prep):
    def infer(inputs, var):
        delta = inputs[0]
        try:
            fits = shapes.broadcast(var._shape, delta.shape).is_compatible_with(var._shape)
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"Cannot {verb} a value of shape {delta.shape} {prep} variable "
                             f"'{var.name}' of shape {var._shape}")
        return [(var._shape, var.dtype)]
    return infer


def _assign_infer(inputs, var):
    value = inputs[0]
    if not value.shape.is_compatible_with(var._shape) and not (
            var._shape.rank is not None and value.shape.rank is not None
            and value.shape.is_subshape_of(var._shape)):
        raise ValueError(f"Cannot assign a value of shape {value.shape} to variable "
                         f"'{var.name}' of shape {var._shape}")
    return [(var._shape, var.dtype)]


_READ = registry.register("read_variable", _read_kernel, _read_infer, effect="read",
                          numpy=_value_of)
# A read's gradient goes to its variable (the backward pass handles read_variable);
# nothing flows through an assignment.
_ASSIGN = registry.register("assign", _assign_kernel, _assign_infer, stateful=True,
                            effect="write", grad=no_gradient, retains_inputs=False,
                            numpy=_numpy_assign)


def _register_update(op, name, verb, prep):
    kernel, numpy_kernel = _update_kernels(name, verb, prep)
    return registry.register(op, kernel, _update_infer(verb, prep), stateful=True,
                             effect="write", grad=no_gradient, retains_inputs=False,
                             numpy=numpy_kernel)


_ASSIGN_ADD = _register_update("assign_add", "add", "add", "to")
_ASSIGN_SUB = _register_update("assign_sub", "subtract", "subtract", "from")


def _in_function_graph(graph):
    while graph is not None:
        if getattr(graph, "is_function", False):
            return True
        graph = graph.outer_graph
    return False


class _Traces(threading.local):
    def __init__(self):
        self.rules = []         # the CreationRule of each graph function being traced


_traces = _Traces()


class CreationRule:
    """What one trace of a graph function may do about new variables: create them (and
    count them), or refuse, saying why (`refusal`)."""

    __slots__ = ("function", "refusal", "created")

    def __init__(self, function, refusal):
        self.function = function
        self.refusal = refusal
        self.created = 0


@contextlib.contextmanager
def creation_rule(function, refusal=None):
    """While tracing `function`: variables created are counted on the rule yielded, or,
    with a `refusal` text, creating one raises ValueError saying it."""
    rule = CreationRule(function, refusal)
    _traces.rules.append(rule)
    try:
        yield rule
    finally:
        _traces.rules.remove(rule)


def _check_creation(name):
    """A variable is created while tracing: allowed unless a trace in progress refuses."""
    rules = _traces.rules
    for rule in rules:
        if rule.refusal is not None:
            from .traceback_utils import at_user_line
            raise ValueError(
                f"rt.Variable '{name}' created while tracing '{rule.function}' {rule.refusal}. "
                f"A graph function may create variables only on its first trace, which "
                f"keeps them for every later call (TensorFlow's tf.function rule): create "
                f"the variable once, guarded (`if self.v is None: self.v = "
                f"rt.Variable(...)`), or outside the function.{at_user_line(3)}")
    for rule in rules:
        rule.created += 1


def _lift_initial_value(t, name):
    """Evaluate now a symbolic initial value (`rt.Variable(rt.zeros([3]))` while tracing).

    Possible when it does not depend on the traced function's inputs: a variable
    created while tracing is created once, eagerly.
    """
    from .executor import runner_for
    graph = t.op.graph
    for op in graph.needed_ops([t]):
        if op.type in ("placeholder", "capture"):
            raise ValueError(
                f"The initial value of variable '{name}' ({t.name}) depends on the input "
                f"{op.name} of the function being traced. A variable created while tracing "
                f"is created once, eagerly: give it an initial value that does not depend on "
                f"the function's inputs, or create it outside the function.")
    return EagerTensor(runner_for(graph, [t], [], [])([])[0])      # (placed, if need be)


class Variable:
    """A mutable tensor-valued state: `rt.Variable(initial_value, trainable=True)`.

        w = rt.Variable(rt.zeros([3, 1]))
        w.assign_add(rt.ones([3, 1]))        # atomic, also from many threads
        rt.matmul(x, w)                      # reads the current value

    `initial_value` is a value or a function returning one; `dtype` and `shape` default to
    its own. `assign`, `assign_add`, `assign_sub` update it (as graph operations inside a
    graph function, in program order); `read_value()` and the tensor operators read it.
    Trainable variables are watched by `rt.GradientTape`. A graph function may create
    variables on its first trace only (docs/variables.md).
    """

    __array_priority__ = 100

    def __init__(self, initial_value=None, trainable=True, name=None, dtype=None, shape=None):
        if initial_value is None:
            raise ValueError("A Variable needs an initial_value")
        self.uid = next(_uids)
        self._lock = threading.Lock()
        self._name = name or "Variable"
        self.trainable = bool(trainable)
        dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        graph = context.current_graph()
        self.initializer = None
        self._graph = None
        if graph is None or _in_function_graph(graph):
            if graph is not None:
                _check_creation(self._name)
            with context.init_scope():
                value = initial_value() if callable(initial_value) else initial_value
                if isinstance(value, SymbolicTensor):
                    value = _lift_initial_value(value, self._name)
                if isinstance(value, Variable):
                    value = value.read_value()
                t = registry.constant(value, dtype) if not isinstance(value, Tensor) else value
                if dtype is not None and t.dtype != dtype:
                    from .ops.math_ops import cast
                    t = cast(t, dtype)
            self.dtype = t.dtype
            self._device = devices.for_dtype(t.dtype)
            self._value = self._device.put(np.array(t._host(), copy=True))
            self._shape = TensorShape(shape) if shape is not None else TensorShape(
                self._value.shape)
            _check_value(self, self._value)
            self.initial_value = t
        else:
            value = initial_value() if callable(initial_value) else initial_value
            t = convert_to_tensor(value, dtype_hint=dtype)
            if dtype is not None and t.dtype != dtype:
                from .ops.math_ops import cast
                t = cast(t, dtype)
            self.dtype = t.dtype
            self._device = devices.for_dtype(t.dtype)
            self._value = None
            self._shape = TensorShape(shape) if shape is not None else t.shape
            self._graph = graph
            self.initial_value = t
            self.initializer = apply(_ASSIGN, [t], {"var": self},
                                     name=f"{self._name}/assign").op
            graph.variables.append(self)

    # -- identity -------------------------------------------------------------------
    @property
    def name(self):
        """`"NAME:0"` (NAME: the `name` argument, "Variable" by default)."""
        return f"{self._name}:0"

    @property
    def shape(self):
        """The shape, a `TensorShape` (fixed at creation)."""
        return self._shape

    def get_shape(self):
        """The shape, as `.shape`."""
        return self._shape

    @property
    def ndim(self):
        """The number of dimensions."""
        return self._shape.rank

    @property
    def graph(self):
        """The TF1-style graph that owns it, or None for a variable made eagerly."""
        return self._graph

    @property
    def device(self):
        """The name of the device holding the value (where its reads and writes run)."""
        return self._device.name

    def ref(self):
        """A hashable reference to this variable (variables hash by identity already)."""
        return self

    __hash__ = object.__hash__

    def __getstate__(self):             # copies and pickles get a lock of their own
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    # -- reading -------------------------------------------------------------------
    def read_value(self):
        """The current value: a tensor (a `read_variable` op inside a graph)."""
        for hook in _access_hooks:
            hook(self)
        return apply(_READ, [], {"var": self})

    value = read_value
    _as_tensor = read_value

    def numpy(self):
        """The current value as a new numpy array (not while tracing: read_value there)."""
        self._check_not_tracing("numpy()")
        if self._value is None:
            _value_of(self)
        value = self._value
        if type(value) is not np.ndarray:
            value = devices.to_host(value)              # a new array already
            return value[()] if value.ndim == 0 else value
        return value[()] if value.ndim == 0 else value.copy()

    def _check_not_tracing(self, what):
        """While tracing, a variable's current value would be frozen into the graph (the
        next call would not see an assign): refuse, as for a symbolic tensor."""
        if not context.executing_eagerly():
            raise TypeError(
                f"Cannot take the value of variable '{self.name}' as {what} while tracing a "
                f"graph: it would be frozen into the graph. Use the variable in tensor "
                f"operations (or v.read_value()), which read it each time the graph runs.")

    def __array__(self, dtype=None, copy=None):
        self._check_not_tracing("a numpy array")
        value = _value_of(self)
        if type(value) is not np.ndarray:
            value = devices.to_host(value)
            return value.astype(dtype) if dtype is not None else value
        return value.astype(dtype) if dtype is not None else value.copy()

    # -- writing -------------------------------------------------------------------
    def _write(self, opdef, value, name):
        if isinstance(value, (Tensor, Variable)):
            t = convert_to_tensor(value)
            if t.dtype != self.dtype:
                from .traceback_utils import at_user_line
                raise TypeError(f"Cannot assign a tensor of dtype {t.dtype.name} to variable "
                                f"'{self.name}' of dtype {self.dtype.name}{at_user_line(3)}")
        else:       # Python and numpy values convert to the variable's dtype when they fit
            t = convert_to_tensor(value, dtype=self.dtype)
        return apply(opdef, [t], {"var": self}, name)

    def assign(self, value, read_value=True, name=None):
        """Set the value; returns the new value as a tensor."""
        return self._write(_ASSIGN, value, name)

    def assign_add(self, delta, read_value=True, name=None):
        """Add `delta` to the value; returns the new value as a tensor."""
        return self._write(_ASSIGN_ADD, delta, name)

    def assign_sub(self, delta, read_value=True, name=None):
        """Subtract `delta` from the value; returns the new value as a tensor."""
        return self._write(_ASSIGN_SUB, delta, name)

    # -- python protocol ---------------------------------------------------------------
    def _eager(self):
        if not context.executing_eagerly():
            return self.read_value()
        return EagerTensor(_value_of(self), self.dtype)

    def __bool__(self):
        return bool(self._eager())

    def __int__(self):
        return int(self._eager())

    def __float__(self):
        return float(self._eager())

    def __index__(self):
        return self._eager().__index__()

    def __len__(self):
        return len(self._eager())

    def __iter__(self):
        return iter(self.read_value())

    def __format__(self, spec):
        return format(self._eager(), spec)

    def __repr__(self):
        return variable_repr(self, self._value)

    def __str__(self):
        return repr(self)


def variable_repr(var, value):
    """How Python shows `var` when its value is `value` (None: uninitialized)."""
    if value is None:
        return f"<rt.Variable '{var.name}' shape={var.shape} dtype={var.dtype.name}>"
    return (f"<rt.Variable '{var.name}' shape={var.shape} dtype={var.dtype.name}, "
            f"numpy={numpy_repr(devices.to_host(value))}>")


def global_variables_initializer():
    """An op running the initializers of all variables of the default graph."""
    from .control_flow import group
    graph = context.get_default_graph()
    return group(*[v.initializer for v in graph.variables if v.initializer is not None])


def trainable_variables():
    """Trainable variables of the default (TF1-style) graph."""
    return [v for v in context.get_default_graph().variables if v.trainable]
