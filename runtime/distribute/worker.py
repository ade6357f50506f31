"""What runs on a Dask worker: saved graphs installed once per worker, tasks run on arrays.

The driver installs a graph on each worker once (`install(key, graph, options)`, through
`Client.run`): `graph` is the bytes of `rt.saved.to_bytes`, `options` plain data
(`max_bytes` for the loader; the trace's `jit_compile` and `memory_budget`, which a saved
graph does not hold) and `key` the `graph_key` of both. The worker keeps at most
CACHE_SIZE graphs, each loaded by `rt.saved.from_bytes` (with all of its checks) when its
first task runs, then kept compiled. A task is `run(key, values, arrays)`: `values` the
variable values and `arrays` the tensor arguments, in the order of the graph's inputs. It
returns the tensors the function returns, as numpy arrays in `nest.flatten` order; a
`Failure` describing the error a kernel raised (the driver raises it as the same error a
local call gives, see `Failure.exception`); or `Missing` when this worker does not hold
the graph (it joined, restarted or dropped it since), and the driver installs it and runs
the task again. Nothing here needs Dask, and nothing the user wrote is unpickled: only
bytes and arrays come in.
"""
import builtins
import collections
import hashlib
import importlib
import json
import threading

import numpy as np

from .. import errors, nest
from ..saved import from_bytes
from ..tensor import EagerTensor, Tensor

__all__ = ["install", "run", "graph_key", "usable", "Failure", "Missing", "CACHE_SIZE",
           "loaded_graphs"]

CACHE_SIZE = 256
_graphs = collections.OrderedDict()     # key -> _Graph, least recently used first
_loads = collections.Counter()          # key -> times loaded in this process
_lock = threading.Lock()


class _Graph:
    __slots__ = ("data", "options", "function", "lock")

    def __init__(self, data, options):
        self.data = data
        self.options = options
        self.function = None                # loaded by its first task
        self.lock = threading.Lock()


def graph_key(graph, options):
    """The SHA-256 (hex) of a graph's bytes and its options."""
    return hashlib.sha256(graph + json.dumps(options, sort_keys=True).encode()).hexdigest()


def install(key, graph, options):
    """Keep `graph` (bytes) with its `options` under `key` (checked) for later tasks."""
    if graph_key(graph, options) != key:        # a cache entry holds what its key says
        raise ValueError("rt.distribute: a graph does not match its key")
    with _lock:
        if key not in _graphs:
            _graphs[key] = _Graph(graph, options)
        _graphs.move_to_end(key)
        while len(_graphs) > CACHE_SIZE:
            _graphs.popitem(last=False)
    return key


def run(key, values, arrays):
    """Run the graph installed under `key` on `values` + `arrays`."""
    try:
        fn = _function(key)
        if fn is None:
            return Missing.here()
        tensors = [EagerTensor(usable(a)) for a in list(values) + list(arrays)]
        result = fn._call_flat(tensors)
        return [leaf.numpy() for leaf in nest.flatten(result) if isinstance(leaf, Tensor)]
    except Exception as e:  # noqa: BLE001 - every error goes back to the driver as data
        return Failure.of(e)


def usable(array):
    """`array` as numpy's own kernels expect it: aligned (an array unpickled from a
    network frame may not be, and numpy's matmul may then skip BLAS and round otherwise)
    and writeable. Copied only if needed."""
    return np.require(array, requirements=["ALIGNED", "WRITEABLE"])


def _function(key):
    """The loaded function of graph `key` (loaded now if it is not yet), None if absent."""
    with _lock:
        entry = _graphs.get(key)
        if entry is None:
            return None
        _graphs.move_to_end(key)
    with entry.lock:                    # one load per graph, however many task threads
        if entry.function is None:
            fn = from_bytes(entry.data, max_bytes=entry.options["max_bytes"],
                            source="the graph sent by rt.distribute")
            fn.graph.jit_compile = entry.options["jit_compile"]
            if entry.options["memory_budget"] is not None:
                fn.graph.memory_budget = entry.options["memory_budget"]
            entry.function = fn
            with _lock:
                _loads[key] += 1
        return entry.function


def loaded_graphs():
    """{key: times loaded} in this process (run on workers by benchmarks and tests)."""
    with _lock:
        return dict(_loads)


class Missing:
    """The outcome of a task whose worker does not hold its graph."""

    def __init__(self, address):
        self.address = address          # the worker's, or None when not known

    @classmethod
    def here(cls):
        try:
            from distributed import get_worker
            return cls(get_worker().address)
        except (ImportError, ValueError):
            return cls(None)


class Failure:
    """An error raised on a worker, as data: its class (the qualified names of its MRO),
    message, and the operation and user source line it names."""

    def __init__(self, kinds, message, op_name, origin):
        self.kinds = kinds              # [(module, qualname), ...], most specific first
        self.message = message
        self.op_name = op_name
        self.origin = origin            # (filename, lineno, function name) or None

    @classmethod
    def of(cls, exc):
        op = getattr(exc, "op", None) if isinstance(exc, errors.OpError) else None
        origin = getattr(exc, "origin", None) if isinstance(exc, errors.OpError) else None
        return cls([(k.__module__, k.__qualname__) for k in type(exc).__mro__], str(exc),
                   getattr(op, "name", None),
                   None if origin is None else (origin.filename, origin.lineno, origin.name))

    def exception(self, op=None):
        """The exception to raise in the driver: the worker's class when it is the
        runtime's or a builtin one (an OpError's class also derives from the kernel's
        builtin exception class, as a local call's does), else a RuntimeError naming it."""
        from ..traceback_utils import Frame
        origin = None if self.origin is None else Frame(*self.origin)
        classes = [c for c in (_known_class(m, q) for m, q in self.kinds) if c is not None]
        if errors.OpError in classes:
            cls = classes[0]
            builtin = _first_builtin(classes)
            if cls is errors.OpError and builtin is not None:   # OpError and a builtin class
                cls = errors._combined_class(builtin)
            return cls(self.message, op=op, origin=origin)
        for cls in classes:
            try:
                return cls(self.message)
            except TypeError:               # a constructor taking other arguments
                continue
        module, name = self.kinds[0]
        return RuntimeError(f"{module}.{name}: {self.message}")


def _known_class(module, qualname):
    """The exception class `module.qualname` if it is the runtime's or a builtin, else None
    (nothing else is imported on the word of a worker)."""
    if module == "builtins":
        found = getattr(builtins, qualname, None)
    elif (module == "runtime" or module.startswith("runtime.")) and "." not in qualname:
        try:
            found = getattr(importlib.import_module(module), qualname, None)
        except ImportError:
            return None
    else:
        return None
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def _first_builtin(classes):
    for cls in classes:
        if cls.__module__ == "builtins" and cls not in (Exception, BaseException):
            return cls
    return None
