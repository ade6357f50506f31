"""The driver's side of a graph run on workers: a trace as saved-graph bytes, its arguments
as numpy arrays, and its results and errors back in the form a local call gives them.

A trace that reads variables is shipped inside a graph that takes their values as its first
inputs and assigns them before calling the trace, so workers always run on the driver's
current values (sent with each `map` call or training step), never on the values of the
day the graph was shipped:

    with_values(values, tensors):   assign(v1, values[0]); ...; call(trace, tensors)

A trace that assigns variables is refused: each worker would update its own copy.
"""
import functools
import io
import threading
import weakref
import zipfile

from .. import config, nest, traceback_utils
from ..function import BoundFunction, ConcreteFunction, Function, TensorSpec, function
from ..saved import MAX_BYTES, SaveError, to_bytes
from ..tensor import EagerTensor
from .worker import graph_key, usable

__all__ = ["Shipped", "shipped", "bind", "user_traceback"]

_prepared = weakref.WeakKeyDictionary()      # ConcreteFunction -> Shipped
_wrappers = weakref.WeakKeyDictionary()      # ConcreteFunction given by the user -> Function
_lock = threading.Lock()


class Shipped:
    """A trace made ready for the workers: the bytes of its graph and what to send with it."""

    def __init__(self, concrete, variables, data):
        # The trace's graph and results' structure (not the trace: this is cached under it)
        self.graph = graph = concrete.graph
        self.template = concrete._output_template
        self.variables = variables          # read by it; their values are the first inputs
        self.data = data
        self.options = {"max_bytes": max(MAX_BYTES, _array_bytes(data)),
                        "jit_compile": bool(getattr(graph, "jit_compile", False)),
                        "memory_budget": getattr(graph, "memory_budget", None)}
        self.key = graph_key(data, self.options)

    def pack(self, arrays):
        """The trace's result, in its structure, from the arrays a worker returned."""
        template = self.template
        arrays = iter(arrays)
        leaves = [leaf.chosen(next(arrays)) if isinstance(leaf, nest.Choice) else
                  EagerTensor(usable(next(arrays))) if isinstance(leaf, nest.Slot) else leaf
                  for leaf in nest.flatten(template)]
        return nest.pack_sequence_as(template, leaves)

    def error(self, failure):
        """The exception a local call raises, from a worker's `Failure`."""
        op = None
        if failure.op_name is not None:
            op = _find_op(self.graph, failure.op_name, failure.origin)
        return failure.exception(op)


def shipped(concrete, who):
    """The `Shipped` form of `concrete` (made once per trace); `who` ("rt.distribute.map")
    names the caller in errors. Raises, before anything is sent, if it cannot be shipped."""
    with _lock:
        found = _prepared.get(concrete)
    if found is None:
        found = _prepare(concrete, who)
        with _lock:
            _prepared[concrete] = found
    return found


def _prepare(concrete, who):
    reads, writes, _ = concrete.graph.effects()
    if writes:
        op = _writer(concrete.graph)
        raise ValueError(
            f"{who}: '{concrete.name}' assigns variable '{op.attrs['var'].name}' "
            f"({op.describe()}). Functions run on workers may read variables but not "
            f"assign them: each worker would update its own copy, and the update would be "
            f"lost. Update the variable in the driver, from the results.")
    variables = sorted(reads, key=lambda v: v.uid)
    graph = _with_values(concrete, variables) if variables else concrete
    try:
        data = to_bytes(graph)
    except SaveError as e:
        raise SaveError(f"{who}: workers run '{concrete.name}' as a saved graph (no Python "
                        f"code is sent to them), and it cannot be saved. {e}") from None
    return Shipped(concrete, variables, data)


def _with_values(concrete, variables):
    """The trace of with_values(values, tensors) (see the module docstring)."""
    def with_values(values, tensors):
        for variable, value in zip(variables, values):
            variable.assign(value)
        return concrete._call_flat(tensors)

    value_specs = [TensorSpec(v.shape, v.dtype) for v in variables]
    input_specs = [TensorSpec(t.shape, t.dtype) for t in concrete.graph.inputs]
    return function(with_values, name=concrete.name).get_concrete_function(
        value_specs, input_specs)


def _writer(graph):
    """The innermost operation of `graph` that assigns a variable."""
    for op in graph.ops:
        if op.effects()[1]:
            for sub in op.subgraphs():
                if sub.effects()[1]:
                    return _writer(sub)
            return op
    return None


def _find_op(graph, name, origin):
    """The operation called `name` (created at `origin`) in `graph` or its sub-graphs."""
    for op in graph.ops:
        where = op.origin
        if op.name == name and (origin is None or (
                where is not None and (where.filename, where.lineno) == tuple(origin[:2]))):
            return op
        for sub in op.subgraphs():
            found = _find_op(sub, name, origin)
            if found is not None:
                return found
    return None


def _array_bytes(data):
    """The uncompressed size of the arrays in `to_bytes` data (its .npz directory)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return sum(info.file_size for info in archive.infolist())


# -- arguments ------------------------------------------------------------------------------

def bind(fn, item, who):
    """(Shipped, [ndarray]): the trace of `fn` for input `item` (an argument tuple, or one
    argument) and its tensor arguments, in the order of the trace's inputs."""
    args = item if type(item) is tuple else (item,)
    fn = _function_of(fn, who)
    concrete = fn.get_concrete_function(*args)
    _, tensors = fn._lookup(args, {})
    return shipped(concrete, who), [t._host() for t in tensors]


def _function_of(fn, who):
    if not isinstance(fn, (Function, ConcreteFunction)) and isinstance(
            getattr(fn, "__call__", None), Function):
        fn = fn.__call__                    # an object whose __call__ is a graph function
    if isinstance(fn, BoundFunction):
        return fn._function
    if isinstance(fn, Function):
        return fn
    if isinstance(fn, ConcreteFunction):
        with _lock:
            wrapper = _wrappers.get(fn)
            if wrapper is None:
                trace = weakref.ref(fn)         # the wrapper must not keep its key alive
                wrapper = _wrappers[fn] = function(
                    lambda *args, **kwargs: trace()(*args, **kwargs), name=fn.name)
        return wrapper
    raise TypeError(f"{who} expects a graph function (ag.convert, rt.function), a "
                    f"ConcreteFunction, or an object whose __call__ is a graph function; got "
                    f"{type(fn).__name__} {fn!r:.60}")


def user_traceback(func):
    """Errors raised to the user show their frames, not this package's (as a graph
    function call's do; see rt.config.set_traceback_filtering)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - the same error, its traceback filtered
            if config.get_traceback_filtering():
                raise traceback_utils.filtered(e)
            raise
    return wrapper
