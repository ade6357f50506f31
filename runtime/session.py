"""TF1-style graph mode: `rt.Graph`, `rt.placeholder`, `rt.Session.run(fetches, feed_dict)`.

Inside `with graph.as_default():` ops build into that graph; `Session.run`
computes only what the fetches need (no automatic control dependencies here,
as in TensorFlow 1), feeding placeholders (or any tensor) from `feed_dict`.
"""
import numpy as np

from . import context
from . import devices
from . import dtypes
from . import nest
from . import config
from .executor import runner_for
from .graph import Operation
from .ops import registry
from .shapes import TensorShape
from .tensor import EagerTensor, SymbolicTensor
from .variables import Variable

__all__ = ["placeholder", "Session"]


def placeholder(dtype, shape=None, name=None):
    """A graph input that `Session.run` must feed (not available eagerly)."""
    graph = context.current_graph()
    if graph is None:
        raise RuntimeError("rt.placeholder() is not compatible with eager execution; build "
                           "it inside `with rt.Graph().as_default():`")
    dtype = dtypes.as_dtype(dtype)
    shape = TensorShape(shape)
    op = graph.create_op(registry.get("placeholder"), [], {"shape": shape.dims, "dtype": dtype},
                         [(shape, dtype)], name=name or "placeholder")
    return op.outputs[0]


class Session:
    """Runs fetches of a graph: `with rt.Session() as sess: sess.run(m, {x: value})`."""

    def __init__(self, graph=None):
        self.graph = graph if graph is not None else context.get_default_graph()
        self._closed = False
        self._plans = {}
        self._reads = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Release the session: later `run` calls raise (done by `with rt.Session()`)."""
        self._closed = True

    def _fetch_tensor(self, item):
        if isinstance(item, str):
            if ":" in item:
                return self.graph.get_tensor_by_name(item)
            return self.graph.get_operation_by_name(item)
        if isinstance(item, Variable):
            read = self._reads.get(item.uid)
            if read is None:
                with self.graph.as_default():
                    read = self._reads[item.uid] = item.read_value()
            return read
        if isinstance(item, (SymbolicTensor, Operation)):
            if item.graph is not self.graph:
                raise ValueError(f"Fetch {item!r} is not an element of this session's graph")
            return item
        raise TypeError(f"Cannot fetch {item!r} of type {type(item).__name__}; fetch tensors, "
                        f"operations or their names")

    def run(self, fetches, feed_dict=None):
        """Values of `fetches` (any nesting of tensors/ops/names) as numpy values."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        leaves = [self._fetch_tensor(f) for f in nest.flatten(fetches)]
        feeds, feed_values = [], []
        for key, value in (feed_dict or {}).items():
            t = self._fetch_tensor(key)
            if not isinstance(t, SymbolicTensor):
                raise TypeError(f"Cannot feed {key!r}: feed_dict keys must be tensors")
            arr = np.asarray(value._host() if isinstance(value, EagerTensor) else value)
            arr = registry.to_array(arr, t.dtype) if arr.dtype != t.dtype.np else arr
            if not TensorShape(arr.shape).is_subshape_of(t.shape):
                raise ValueError(f"Cannot feed value of shape {arr.shape} for Tensor "
                                 f"'{t.name}', which has shape {t.shape}")
            feeds.append(t)
            feed_values.append(arr)
        tensors = [t for t in leaves if isinstance(t, SymbolicTensor)]
        ops = [t for t in leaves if isinstance(t, Operation)]
        key = (tuple(id(t) for t in tensors), tuple(id(o) for o in ops),
               tuple(id(t) for t in feeds), len(self.graph.ops), config._state["version"])
        run = self._plans.get(key)
        if run is None:
            run = self._plans[key] = runner_for(self.graph, tensors, feeds, ops)
        values = iter(run(feed_values))
        results = [None if isinstance(t, Operation) else _to_numpy(next(values))
                   for t in leaves]
        return nest.pack_sequence_as(fetches, results) if nest.is_nested(fetches) else results[0]


def _to_numpy(value):
    value = devices.to_host(value)
    return value[()] if value.ndim == 0 else value

