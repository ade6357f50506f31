"""Execution context: eager by default, graph-building inside a graph scope.

The context is a per-thread stack of graphs. An empty stack (or a `None` pushed
by `init_scope`/the executor) means eager execution: ops run their kernels at
once. A graph on top means ops are added to that graph instead. Each thread also
has the device name of its innermost `rt.device` scope (`runtime.devices`).
"""
import contextlib
import threading

__all__ = ["executing_eagerly", "get_default_graph", "init_scope",
           "run_functions_eagerly", "functions_run_eagerly"]


class _ThreadState(threading.local):
    def __init__(self):
        self.stack = []           # Graph objects, or None for an eager scope
        self.device = None        # the innermost `rt.device` scope's device name, or None


_state = _ThreadState()
_run_functions_eagerly = False


def current_graph():
    """The graph ops are being added to, or None when executing eagerly."""
    stack = _state.stack
    return stack[-1] if stack else None


def executing_eagerly():
    """True when ops run at once (not while building a graph)."""
    stack = _state.stack
    return not stack or stack[-1] is None


@contextlib.contextmanager
def graph_scope(graph):
    """Make `graph` the one new ops are added to (None: execute eagerly)."""
    stack = _state.stack
    stack.append(graph)
    try:
        yield graph
    finally:
        stack.pop()


def device_name():
    """The device name of the innermost `rt.device` scope (None: the default device)."""
    return _state.device


@contextlib.contextmanager
def device_scope(name):
    """Ops created inside (eagerly or in a graph) are placed on device `name`."""
    state = _state
    saved, state.device = state.device, name
    try:
        yield
    finally:
        state.device = saved


def push(graph):
    _state.stack.append(graph)


def pop():
    _state.stack.pop()


def init_scope():
    """Leave every graph scope: code inside runs eagerly (used to create variables)."""
    return graph_scope(None)


_global_default_graph = None


def get_default_graph():
    """The graph of the innermost `as_default()` scope, else a global graph (TF1 style)."""
    graph = current_graph()
    if graph is not None:
        return graph
    global _global_default_graph
    if _global_default_graph is None:
        from .graph import Graph
        _global_default_graph = Graph()
    return _global_default_graph


def reset_default_graph():
    """Forget the global default graph (TF1 style): the next one is a new, empty graph."""
    global _global_default_graph
    _global_default_graph = None


def run_functions_eagerly(run_eagerly):
    """With True, every graph function runs its Python code eagerly (for debugging)."""
    global _run_functions_eagerly
    _run_functions_eagerly = bool(run_eagerly)


def functions_run_eagerly():
    """Whether `rt.run_functions_eagerly(True)` is in force."""
    return _run_functions_eagerly
