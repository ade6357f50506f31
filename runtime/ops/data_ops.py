"""Ops behind `rt.data`: what a pass over a data set needs beyond the general ops.

A data set runs as ordinary values (see runtime/data.py): cursors and seeds are int64
scalars, elements are rows of the tensors it slices, and a `for` over it is a graph loop.

    dataset_gather(params, indices)         rows of params; an index past the end gives a
                                            zero row (what a finished pass stands on)
    dataset_size(*components)               their common first dimension
    dataset_shuffle_reset / dataset_pass_seed
                                            a shuffle's pass counter: start it again (a data
                                            set made inside a graph, each run) / the seed of
                                            the next pass (stateful)
    dataset_shuffle_order(n, seed)          the order a shuffle buffer gives n elements
    dataset_shuffle_draw(seed, t, m)        the t-th draw of that order: an index below m
    dataset_buffer_put / dataset_buffer_take
                                            rows of a shuffle buffer or a batch being built
    dataset_element(has, x)                 x with the data set's static element shape
                                            (zeros of it when the pass has ended)

A shuffle's order follows TensorFlow's buffer: fill it with `buffer_size` elements, emit
one at random, put the next element in its place. The draws of pass p come from a
counter-based stream of the pass seed, so a data set of known length computes its order
at once (`dataset_shuffle_order`) and any other data set draws as it goes
(`dataset_shuffle_draw`), the same order either way.
"""
import threading

import numpy as np

from .. import dtypes
from ..errors import InvalidArgumentError
from ..shapes import TensorShape
from . import registry
from .array_ops import _scatter_infer, shape
from .math_ops import no_gradient
from .registry import apply, convert_to_tensor

__all__ = ["ShuffleState", "gather", "size", "shuffle_reset", "pass_seed", "shuffle_order",
           "shuffle_draw", "buffer_put", "buffer_take", "element"]


def _apply(opdef, inputs, attrs):
    return apply(opdef, [convert_to_tensor(x) for x in inputs], attrs)


# -- rows ------------------------------------------------------------------------------------

def _gather_kernel(params, indices):
    indices = np.asarray(indices)
    n = params.shape[0]
    if indices.ndim == 0:
        return params[int(indices)].copy() if 0 <= indices < n else \
            np.zeros(params.shape[1:], params.dtype)
    inside = (indices >= 0) & (indices < n)
    if inside.all():
        return np.take(params, indices, axis=0)
    out = np.zeros(indices.shape + params.shape[1:], params.dtype)
    out[inside] = np.take(params, indices[inside], axis=0)
    return out


def _gather_infer(inputs):
    params, indices = inputs
    if not indices.dtype.is_integer:
        raise TypeError(f"indices must be integers, got {indices.dtype.name}")
    if params.shape.rank == 0:
        raise ValueError("cannot take rows of a scalar")
    if params.shape.rank is None or indices.shape.rank is None:
        return [(TensorShape(None), params.dtype)]
    return [(TensorShape(indices.shape.dims + params.shape.dims[1:]), params.dtype)]


def _gather_grad_kernel(params_shape, grad, indices):
    out = np.zeros(tuple(int(d) for d in params_shape), grad.dtype)
    indices = np.asarray(indices).reshape(-1)
    rows = grad.reshape((-1,) + out.shape[1:])
    inside = (indices >= 0) & (indices < out.shape[0])
    np.add.at(out, indices[inside], rows[inside])
    return out


def _gather_grad_grad(op, grad):
    return [None, gather(grad, op.inputs[2]), None]


_GATHER_GRAD = registry.register("dataset_gather_grad", _gather_grad_kernel, _scatter_infer,
                                 grad=_gather_grad_grad, fresh=True)


def _gather_grad(op, grad):
    params, indices = op.inputs
    return [apply(_GATHER_GRAD, [shape(params), grad, indices], {}), None]


_GATHER = registry.register("dataset_gather", _gather_kernel, _gather_infer,
                            grad=_gather_grad, fresh=True)


def gather(params, indices):
    """Rows of `params` at `indices` (a scalar or a vector); zeros past the end."""
    return _apply(_GATHER, [params, indices], {})


def _size_kernel(*components, what):
    lengths = [c.shape[0] for c in components]
    if len(set(lengths)) > 1:
        raise InvalidArgumentError(f"{what}: the first dimensions of its tensors differ: "
                                   f"{', '.join(str(c.shape) for c in components)}")
    return np.asarray(lengths[0], np.int64)


def _scalar_int64(inputs, **_):
    return [(TensorShape([]), dtypes.int64)]


_SIZE = registry.register("dataset_size", _size_kernel, _scalar_int64, grad=no_gradient,
                          fresh=True)


def size(components, what):
    """The first dimension the tensors `components` share (checked when the graph runs)."""
    return apply(_SIZE, list(components), {"what": what})


# -- shuffling -------------------------------------------------------------------------------

class ShuffleState:
    """The pass counter of one shuffled data set: pass p's order comes from (seeds, p).

    Without seeds, each start (`reset`, and the data set's creation) draws new ones: the
    order is then not reproducible, as in TensorFlow.
    """

    __slots__ = ("seeds", "reshuffle", "where", "_given", "_passes", "_lock")

    def __init__(self, seeds, reshuffle, where=""):
        self._given = seeds
        self.reshuffle = reshuffle
        self.where = where
        self._lock = threading.Lock()
        self.reset()

    def __deepcopy__(self, memo):
        clone = ShuffleState(self._given, self.reshuffle, self.where)
        with self._lock:
            clone.seeds, clone._passes = self.seeds, self._passes
        return clone

    def reset(self):
        with self._lock:
            self.seeds = self._given if self._given is not None else tuple(
                int(s) for s in np.random.SeedSequence().generate_state(2, np.uint32))
            self._passes = 0

    def next_seed(self):
        """The seed of the next pass (the same one each pass without reshuffling)."""
        with self._lock:
            p = self._passes
            if self.reshuffle:
                self._passes += 1
            seeds = self.seeds
        state = np.random.SeedSequence([*seeds, p]).generate_state(1, np.uint64)
        return state.view(np.int64).reshape(())

    @property
    def cannot_save(self):
        """Why a graph holding this cannot be saved (the saved-graph writer says it)."""
        return (f"it counts the passes over the data set shuffled{self.where}, a Python "
                f"object a saved graph cannot hold: shuffle with "
                f"reshuffle_each_iteration=False, or iterate the data set outside the "
                f"function and pass the batches as arguments")

    def __repr__(self):
        return f"<the pass counter of a shuffled data set{self.where}>"


def _no_outputs(inputs, **_):
    return []


_RESET = registry.register("dataset_shuffle_reset", lambda shuffle: shuffle.reset(),
                           _no_outputs, stateful=True)
_PASS_SEED = registry.register("dataset_pass_seed", lambda shuffle: shuffle.next_seed(),
                               _scalar_int64, stateful=True, fresh=True)


def shuffle_reset(state):
    """Start `state`'s passes again (placed where a graph makes the data set)."""
    return _apply(_RESET, [], {"shuffle": state})


def pass_seed(state):
    """The int64 seed of the next pass of the data set `state` counts."""
    return _apply(_PASS_SEED, [], {"shuffle": state})


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _draws(seed, t, m):
    """Draws number `t` (arrays) of the stream of `seed`: ints uniform below `m` (splitmix64)."""
    t = np.atleast_1d(np.asarray(t, np.int64)).astype(np.uint64)
    z = np.asarray(seed, np.int64).reshape(1).view(np.uint64) + (t + np.uint64(1)) * _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    u = (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    return (u * np.asarray(m, np.float64)).astype(np.int64)


def _order_kernel(n, seed, buffer_size):
    """The buffer of the module doc, on element indices: full, each draw j takes buffer[j]
    and its last element fills the place (the next element, if any, becomes the last)."""
    n = int(n)
    t = np.arange(n)
    draws = _draws(seed, t, np.minimum(buffer_size, n - t)).tolist()
    buffer = list(range(min(buffer_size, n)))
    order, last, following = [0] * n, len(buffer) - 1, len(buffer)
    for t, j in enumerate(draws):
        order[t] = buffer[j]
        if following < n:
            buffer[j], buffer[last] = buffer[last], following
            following += 1
        else:
            buffer[j] = buffer[-1]
            buffer.pop()
            last -= 1
    return np.asarray(order, np.int64)


def _order_infer(inputs, buffer_size):
    return [(TensorShape([None]), dtypes.int64)]


_ORDER = registry.register("dataset_shuffle_order", _order_kernel, _order_infer,
                           grad=no_gradient, fresh=True)


def shuffle_order(n, seed, buffer_size):
    """The order in which a buffer of `buffer_size` emits `n` elements, for pass `seed`."""
    return _apply(_ORDER, [n, seed], {"buffer_size": int(buffer_size)})


def _draw_kernel(seed, t, m):
    return _draws(seed, t, m).reshape(())


_DRAW = registry.register("dataset_shuffle_draw", _draw_kernel, _scalar_int64,
                          grad=no_gradient, fresh=True)


def shuffle_draw(seed, t, m):
    """The t-th draw of pass `seed`'s order: which of the `m` buffered elements comes next."""
    return _apply(_DRAW, [seed, t, m], {})


# -- buffers -----------------------------------------------------------------------------------

def _put_kernel(buffer, i, row, has, capacity, what):
    if not has:
        return buffer
    i = int(i)
    if buffer.shape[0] and buffer.shape[1:] != row.shape:
        raise InvalidArgumentError(
            f"{what}: its elements have different shapes, {buffer.shape[1:]} and "
            f"{row.shape}; only elements of one shape can be buffered (batched) together")
    if i >= buffer.shape[0]:                   # grown by doubling, up to the capacity
        rows = min(capacity, max(2 * buffer.shape[0], i + 1, 8))
        grown = np.zeros((rows,) + row.shape, row.dtype)
        if buffer.shape[0]:
            grown[:buffer.shape[0]] = buffer
        buffer = grown
    else:
        buffer = buffer.copy()
    buffer[i] = row
    return buffer


def _put_infer(inputs, capacity, what):
    buffer, _, row, _ = inputs
    if row.shape.rank is None:
        return [(TensorShape(None), buffer.dtype)]
    return [(TensorShape([None]).concatenate(row.shape), buffer.dtype)]


# (not `fresh`: without an element, a put gives back the buffer it was given; so does a
# take from an empty buffer)
_PUT = registry.register("dataset_buffer_put", _put_kernel, _put_infer, grad=no_gradient)


def buffer_put(buffer, i, row, has, capacity, what):
    """`buffer` (rows; room for up to `capacity`) with row `i` set to `row` if `has`."""
    return _apply(_PUT, [buffer, i, row, has], {"capacity": int(capacity), "what": what})


def _take_kernel(buffer, m, j):
    m, j = int(m), int(j)
    if m <= 0:                                 # nothing buffered: the pass has ended
        return [buffer, np.zeros(buffer.shape[1:], buffer.dtype)]
    row = buffer[j].copy()
    buffer = buffer.copy()
    buffer[j] = buffer[m - 1]
    return [buffer, row]


def _take_infer(inputs):
    buffer = inputs[0]
    row = TensorShape(None) if buffer.shape.rank is None else TensorShape(buffer.shape.dims[1:])
    return [(buffer.shape, buffer.dtype), (row, buffer.dtype)]


_TAKE = registry.register("dataset_buffer_take", _take_kernel, _take_infer, multi=True,
                          grad=no_gradient)


def buffer_take(buffer, m, j):
    """(the buffer without row j, whose place its row m - 1 takes; row j)."""
    return _apply(_TAKE, [buffer, m, j], {})


# -- element shapes --------------------------------------------------------------------------

def _element_kernel(has, x, shape, what):
    if not has:
        dims = [d if d is not None else (x.shape[k] if x.ndim == len(shape) else 0)
                for k, d in enumerate(shape)]
        return np.zeros(dims, x.dtype)
    if x.ndim != len(shape) or any(d is not None and d != n for d, n in zip(shape, x.shape)):
        raise InvalidArgumentError(f"{what}: an element has shape {x.shape}, but the data "
                                   f"set's elements have shape {TensorShape(shape)}")
    return x


def _element_infer(inputs, shape, what):
    return [(TensorShape(shape), inputs[1].dtype)]


def _element_grad(op, grad):
    return [None, grad]


_ELEMENT = registry.register("dataset_element", _element_kernel, _element_infer,
                             grad=_element_grad)


def element(has, x, element_shape, what):
    """`x` as an element of static shape `element_shape` (checked when the graph runs)."""
    return _apply(_ELEMENT, [has, x], {"shape": tuple(element_shape.dims), "what": what})
