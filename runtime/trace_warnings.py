"""Warnings about how graph functions trace: frequent retracing, and why; big unrolled loops.

A function traced again and again is slow in a way nothing else shows. As TensorFlow
does, `RetraceMonitor` warns when a function traced 5 times within its last 10 calls
(at most twice per function), and says what changed since the trace before:

    argument 'n': Python int 3 -> 4: pass a tensor to trace once
    argument 'x': shape (3,) -> (4,): use input_signature with None dimensions or
    reduce_retracing=True

A Python loop (one whose bound is a Python value) runs while tracing, and each
iteration adds its operations to the graph. `counting_iterations` counts them (the
compiler's loop operators call it); when the trace ends, a loop that ran at least
`UNROLLED_LOOP_ITERATIONS` times and added at least `UNROLLED_LOOP_OPS` operations
warns, once per loop:

    loop at train.py:12 ran 5,000 times while tracing and added 20,000 operations:
    make its bound a tensor to get one graph loop

Both are `TracingWarning`s (a UserWarning), reported at the user's line.
"""
import collections
import contextlib
import threading
import warnings

from . import context
from . import traceback_utils

__all__ = ["TracingWarning", "RetraceMonitor", "changed_arguments", "describe_arguments",
           "unrolled_loops_of", "counting_iterations"]

RETRACES_TO_WARN = 5            # traces within ...
RETRACE_WINDOW = 10             # ... this many of a function's last calls
WARNINGS_PER_FUNCTION = 2
UNROLLED_LOOP_ITERATIONS = 1000
UNROLLED_LOOP_OPS = 10000


class TracingWarning(UserWarning):
    """A graph function traces in a way that costs time or memory: it retraced 5 times
    within its last 10 calls (the warning names the argument that changed), or a Python
    loop unrolled into a large graph. A UserWarning, reported at the user's line."""


def _warn(message):
    frame = traceback_utils.user_frame(2)
    if frame is None:
        warnings.warn(message, TracingWarning, stacklevel=3)
    else:
        warnings.warn_explicit(message, TracingWarning, frame.filename, frame.lineno)


# -- retracing ------------------------------------------------------------------------------

class RetraceMonitor:
    """One function's recent traces, by the number of the call that made each."""

    __slots__ = ("_trace_calls", "_warnings")

    def __init__(self):
        self._trace_calls = collections.deque()
        self._warnings = 0

    def traced(self, call, name, reasons):
        """A trace happened at call number `call`; `reasons` say what changed."""
        calls = self._trace_calls
        calls.append(call)
        while calls and call - calls[0] >= RETRACE_WINDOW:
            calls.popleft()
        if len(calls) < RETRACES_TO_WARN or self._warnings >= WARNINGS_PER_FUNCTION:
            return
        self._warnings += 1
        window = f"{len(calls)} of the last {call - calls[0] + 1} calls"
        calls.clear()                   # a second warning needs as many retraces again
        why = "; ".join(reasons) if reasons else (
            "its arguments match a trace that the trace cache dropped "
            "(rt.config.set_trace_cache_size)")
        _warn(f"{window} of '{name}' traced it "
              f"(each trace runs its Python again and builds a new graph). What changed at "
              f"the last trace: {why}.")


def changed_arguments(before, after, names, reduce_retracing=False):
    """What differs between two traces' arguments (`ConcreteFunction.
    structured_input_signature`: TensorSpecs for tensors), one text per argument."""
    (args_before, kwargs_before), (args_after, kwargs_after) = before, after
    found = _Found(reduce_retracing)
    for i, (a, b) in enumerate(zip(args_before, args_after)):
        _compare(a, b, names[i] if i < len(names) else f"args_{i}", found)
    if len(args_before) != len(args_after):
        found.append(f"{len(args_before)} -> {len(args_after)} positional arguments")
    for key in sorted(set(kwargs_before) | set(kwargs_after), key=str):
        if key not in kwargs_before or key not in kwargs_after:
            found.append(f"argument '{key}' {'given' if key in kwargs_after else 'left out'}")
        else:
            _compare(kwargs_before[key], kwargs_after[key], str(key), found)
    return found


class _Found(list):
    """The differences found, and the advice that fits the function's options."""

    def __init__(self, reduce_retracing):
        super().__init__()
        self.shape_advice = ("use input_signature with None dimensions" if reduce_retracing
                             else "use input_signature with None dimensions or "
                                  "reduce_retracing=True")


def _compare(a, b, path, found):
    from .function import TensorSpec
    from .variables import Variable
    if isinstance(a, TensorSpec) and isinstance(b, TensorSpec):
        if a.dtype != b.dtype:
            found.append(f"argument '{path}': dtype {a.dtype.name} -> {b.dtype.name}: give "
                         f"it one dtype to trace once")
        elif a.shape != b.shape:
            found.append(f"argument '{path}': shape {_shape(a)} -> {_shape(b)}: "
                         f"{found.shape_advice}")
    elif isinstance(a, TensorSpec) or isinstance(b, TensorSpec):
        found.append(f"argument '{path}': {_kind(a)} -> {_kind(b)}: pass a tensor every "
                     f"time to trace once")
    elif isinstance(a, Variable) or isinstance(b, Variable):
        if a is not b:
            found.append(f"argument '{path}': {_kind(a)} -> {_kind(b)}: each variable "
                         f"passed is traced for itself")
    elif type(a) is not type(b):
        found.append(f"argument '{path}': {_kind(a)} -> {_kind(b)}")
    elif isinstance(a, (list, tuple)):
        if len(a) != len(b):
            found.append(f"argument '{path}': {type(a).__name__} of {len(a)} -> {len(b)} "
                         f"elements: each length is traced for itself")
        else:
            fields = getattr(type(a), "_fields", None)
            for i, (x, y) in enumerate(zip(a, b)):
                _compare(x, y, f"{path}.{fields[i]}" if fields else f"{path}[{i}]", found)
    elif isinstance(a, dict):
        if set(a) != set(b):
            found.append(f"argument '{path}': keys {sorted(a, key=str)} -> "
                         f"{sorted(b, key=str)}")
        else:
            for k in a:
                _compare(a[k], b[k], f"{path}[{k!r}]", found)
    elif not _same_value(a, b):
        if isinstance(a, (bool, int, float, complex)):
            found.append(f"argument '{path}': Python {type(a).__name__} {a!r} -> {b!r}: "
                         f"pass a tensor to trace once")
        else:
            found.append(f"argument '{path}': {_kind(a)} -> {_kind(b)}: a Python value is "
                         f"fixed in the graph, so each value is traced for itself")


def _same_value(a, b):
    if a is b:
        return True
    try:
        hash(a)
        return bool(a == b)
    except Exception:  # noqa: BLE001 - unhashable or odd __eq__: traced by identity
        return False


def _shape(spec):
    dims = spec.shape.dims
    return "unknown" if dims is None else str(tuple(dims))


def _kind(value):
    """How a message names an argument's value."""
    from .function import TensorSpec
    from .variables import Variable
    if isinstance(value, TensorSpec):
        article = "an" if value.dtype.name[0] in "aeio" else "a"
        return f"{article} {value.dtype.name} tensor of shape {_shape(value)}"
    if isinstance(value, Variable):
        return f"variable '{value.name}'"
    if isinstance(value, (bool, int, float, complex, str, bytes, type(None))):
        return f"Python {type(value).__name__} {value!r:.40}"
    if type(value).__eq__ is object.__eq__:
        return f"a {type(value).__name__} object at {id(value):#x}"
    return f"{type(value).__name__} {value!r:.40}"


def describe_arguments(template):
    """A short text of a trace's arguments (for logs)."""
    args, kwargs = template
    text = ", ".join([_kind(a) if not isinstance(a, (list, tuple, dict)) else
                      f"{type(a).__name__} of {len(a)}" for a in args] +
                     [f"{k}={_kind(v)}" for k, v in kwargs.items()])
    return f"arguments ({text})"


# -- unrolled loops -------------------------------------------------------------------------

class _Traces(threading.local):
    def __init__(self):
        self.loops = []             # per trace in progress: {loop Frame: [iterations, ops]}


_traces = _Traces()
_warned_loops = set()
_warned_lock = threading.Lock()


@contextlib.contextmanager
def unrolled_loops_of(function_name):
    """Around the trace of a graph function: when it succeeds, warn about the Python
    loops that ran many times while it traced and made its graph large."""
    loops = {}
    _traces.loops.append(loops)
    try:
        yield
    finally:
        _traces.loops.pop()
    for where, (iterations, ops) in loops.items():
        if iterations >= UNROLLED_LOOP_ITERATIONS and ops >= UNROLLED_LOOP_OPS:
            with _warned_lock:
                if where in _warned_loops:
                    continue
                _warned_loops.add(where)
            warnings.warn_explicit(
                f"loop at {where.short()} ran {iterations:,} times while tracing and added "
                f"{ops:,} operations: make its bound a tensor to get one graph loop (the "
                f"loop is Python, unrolled into the graph of '{function_name}')",
                TracingWarning, where.filename, where.lineno)


def counting_iterations(body):
    """`body` (a Python loop's body, about to run while a graph function traces), counting
    its calls and the operations each adds to the graph; `body` itself otherwise."""
    loops = _traces.loops
    graph = context.current_graph()
    if not loops or graph is None:
        return body
    where = traceback_utils.user_frame(2)
    if where is None:
        return body
    counts = loops[-1].setdefault(where, [0, 0])

    def iteration(*args):
        if context.current_graph() is not graph:    # a graph loop tracing its body
            return body(*args)
        before = len(graph.ops)
        result = body(*args)
        counts[0] += 1
        counts[1] += len(graph.ops) - before
        return result
    return iteration
