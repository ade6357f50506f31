"""Ops behind `rt.data`: what a pass over a data set needs beyond the general ops.

A data set runs as ordinary values (see runtime/data.py): cursors and seeds are int64
scalars, elements are rows of the tensors it slices, and a `for` over it is a graph loop.

    dataset_gather(params, indices)         rows of params; an index past the end gives a
                                            zero row (what a finished pass stands on)
    dataset_size(*components)               their common first dimension
    dataset_run                             a new run of a data set made inside a graph:
                                            the key of what it keeps per run (stateful)
    dataset_pass_seed                       the seed of a shuffle's next pass (stateful)
    dataset_shuffle_order(n, seed)          the order a shuffle buffer gives n elements
    dataset_shuffle_draw(seed, t, m)        the t-th draw of that order: an index below m
    dataset_buffer_put / dataset_buffer_take
                                            rows of a shuffle buffer or a batch being built
    dataset_padded_put                      a row of a padded batch being built
    dataset_cache_begin / _put / _get       a cache: a pass begins (reading or filling
                                            it), an element is added, an element is read
    dataset_element(has, x)                 x with the data set's static element shape
                                            (zeros of it when the pass has ended)

A shuffle's order follows TensorFlow's buffer: fill it with `buffer_size` elements, emit
one at random, put the next element in its place. The draws of pass p come from a
counter-based stream of the pass seed, so a data set of known length computes its order
at once (`dataset_shuffle_order`) and any other data set draws as it goes
(`dataset_shuffle_draw`), the same order either way.
"""
import itertools
import os
import threading
import weakref

import numpy as np

from .. import devices
from .. import rollback
from .. import dtypes
from ..errors import InvalidArgumentError
from ..shapes import TensorShape
from . import registry
from .array_ops import _scatter_infer, shape
from .math_ops import no_gradient
from .registry import apply, convert_to_tensor

__all__ = ["ShuffleState", "CacheState", "gather", "size", "start_run", "pass_seed",
           "shuffle_order", "shuffle_draw", "buffer_put", "buffer_take", "padded_put",
           "cache_begin", "cache_put", "cache_get", "element"]


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


# -- state per run of a graph ------------------------------------------------------------------

class _Runs:
    """What a data set made inside a graph keeps per run of that graph (each run makes the
    data set anew, as each eager call of the function does): `dataset_run` starts a run of
    its owner (a ShuffleState or CacheState), giving the key (an int64 vector) of a new
    state, which the ops of that data set read and which lives as long as the key array
    does. Concurrent runs so never share a pass counter or a cache."""

    def __init__(self):
        self._states = {}
        self._count = itertools.count(1)
        self._lock = threading.Lock()

    def start(self, owner):
        state = owner.run_state()
        with self._lock:
            k = next(self._count)
            self._states[k] = state
        key = devices.HostHandle((1,), np.int64)       # owns its memory: its views keep
        key[0] = k                                      # it alive; no device copies it
        weakref.finalize(key, self._states.pop, k, None)
        return key

    def state(self, key):
        return self._states[int(key[0])]


_RUNS = _Runs()


def _run_infer(inputs, owner):
    return [(TensorShape([1]), dtypes.int64)]


_RUN = registry.register("dataset_run", lambda owner: _RUNS.start(owner), _run_infer,
                         stateful=True, fresh=True, grad=no_gradient)


def start_run(owner):
    """The key of a new run of `owner` (the ShuffleState or CacheState of a data set made
    inside the graph being built; placed where the graph makes it)."""
    return _apply(_RUN, [], {"owner": owner})


# -- shuffling -------------------------------------------------------------------------------

class ShuffleState:
    """The passes of one shuffled data set: pass p's order comes from (seeds, p).

    Passes are counted once for the data set (eager passes, and graphs that did not make
    it), and per run of the graph that made it (`run_state`). Without seeds, each count
    starts from new ones: the order is then not reproducible, as in TensorFlow.
    """

    __slots__ = ("reshuffle", "where", "_given", "_shared", "_lock")

    def __init__(self, seeds, reshuffle, where=""):
        self._given = seeds
        self.reshuffle = reshuffle
        self.where = where
        self._lock = threading.Lock()
        self._shared = self.run_state()

    def __deepcopy__(self, memo):
        clone = ShuffleState(self._given, self.reshuffle, self.where)
        with self._lock:
            clone._shared = list(self._shared)
        return clone

    def run_state(self):
        """A count of passes: [seeds, passes made]."""
        seeds = self._given if self._given is not None else tuple(
            int(s) for s in np.random.SeedSequence().generate_state(2, np.uint32))
        return [seeds, 0]

    def next_seed(self, run=None):
        """The seed of the next pass (the same one each pass without reshuffling), counted
        for the data set or, given a run's key, for that run."""
        count = self._shared if run is None else _RUNS.state(run)
        with self._lock:
            seeds, p = count
            if self.reshuffle:
                rollback.note(count, _Recount(count, p))
                count[1] += 1
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


class _Recount(rollback.Entry):
    """Puts a pass count back where it was before a failed run began a pass."""

    __slots__ = ("count", "passes")

    def __init__(self, count, passes):
        self.count, self.passes = count, passes

    def undo(self):
        self.count[1] = self.passes


_PASS_SEED = registry.register("dataset_pass_seed",
                               lambda *run, shuffle: shuffle.next_seed(*run),
                               _scalar_int64, stateful=True, fresh=True)


def pass_seed(state, run=None):
    """The int64 seed of the next pass of the data set `state` counts (in the run whose
    key is `run`, when given)."""
    return _apply(_PASS_SEED, [] if run is None else [run], {"shuffle": state})


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
    """The buffer of the module doc on element indices, computed at once (no step by step).

    Step t takes slot j[t] of the m[t] = min(k, n - t) buffered elements and emits what it
    holds; the last slot's element then moves into slot j[t], and the next element, while
    there is one, takes the last slot (else the last slot goes). So a slot holds what the
    latest earlier step taking it moved there (or its first element), and what a step
    moves is what the last slot holds: while elements come, the one that came last; after
    that, what the latest earlier step taking that slot moved there: chains of earlier
    steps, followed by pointer jumping.
    """
    n = int(n)
    k = min(int(buffer_size), n)
    if n == 0:
        return np.zeros(0, np.int64)
    t = np.arange(n)
    last = np.minimum(k, n - t) - 1                 # the last slot at step t
    j = _draws(seed, t, last + 1)
    previous, latest = _previous_takes(j, k)
    draining = t > n - k
    moved_value = np.where(draining, last, t + k - 1)   # chain ends: what they move
    d = np.flatnonzero(draining)
    before = latest[last[d]]                        # the last take of the slot (maybe t)
    before = np.where(before == d, previous[d], before)
    chain = t.copy()
    chain[d] = np.where(before >= 0, before, d)
    while True:
        further = chain[chain]
        if np.array_equal(further, chain):
            break
        chain = further
    moved = moved_value[chain]
    return np.where(j == last, moved,
                    np.where(previous >= 0, moved[np.maximum(previous, 0)], j))


def _previous_takes(j, k):
    """(for each step, the latest earlier step taking the same slot, else -1; for each of
    the k slots, the latest step taking it, else -1), by a stable radix sort on slots."""
    by_slot = np.argsort(j.astype(np.uint16), kind="stable")
    if k > 1 << 16:
        by_slot = by_slot[np.argsort((j[by_slot] >> 16).astype(np.uint16), kind="stable")]
    slots = j[by_slot]
    same = slots[1:] == slots[:-1]
    previous = np.full(len(j), -1)
    previous[by_slot[1:][same]] = by_slot[:-1][same]
    latest = np.full(k, -1)
    ends = np.flatnonzero(np.append(~same, True))
    latest[slots[ends]] = by_slot[ends]
    return previous, latest


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

# A buffer (a shuffle's elements, a batch being filled) is written in place: a put or take
# gives back the array it was given, and a pass reads each buffer value once, in the op
# that comes next, so nothing else sees the write (the memory plan treats a put's result
# as its input: neither op is `fresh`). Only arrays allocated here are written: a buffer
# starts as a constant of no rows, which the first put replaces.
_OWNED = weakref.WeakValueDictionary()          # id -> a buffer allocated here


def _owned(array):
    return _OWNED.get(id(array)) is array


def _allocated(shape, like, fill=0):
    """A new buffer of `shape` holding `fill`, with `like` (a buffer) copied into its corner."""
    buffer = np.full(shape, fill, like.dtype)
    buffer[tuple(slice(0, n) for n in like.shape)] = like
    _OWNED[id(buffer)] = buffer
    return buffer


def _more_rows(buffer, i, capacity):
    """How many rows a buffer holding row i has: grown by doubling, up to the capacity."""
    rows = buffer.shape[0]
    return rows if i < rows else min(capacity, max(2 * rows, i + 1, 8))


def _put_kernel(buffer, i, row, has, capacity, what):
    if not has:
        return buffer
    i = int(i)
    if buffer.shape[0] and buffer.shape[1:] != row.shape:
        raise InvalidArgumentError(
            f"{what}: its elements have different shapes, {buffer.shape[1:]} and "
            f"{row.shape}; only elements of one shape can be buffered (batched) together")
    if i >= buffer.shape[0] or not _owned(buffer):
        buffer = _allocated((_more_rows(buffer, i, capacity),) + row.shape,
                            buffer.reshape((-1,) + row.shape))
    buffer[i] = row
    return buffer


def _put_infer(inputs, capacity, what):
    buffer, _, row, _ = inputs
    if row.shape.rank is None:
        return [(TensorShape(None), buffer.dtype)]
    return [(TensorShape([None]).concatenate(row.shape), buffer.dtype)]


_PUT = registry.register("dataset_buffer_put", _put_kernel, _put_infer, grad=no_gradient)


def buffer_put(buffer, i, row, has, capacity, what):
    """`buffer` (rows; room for up to `capacity`) with row `i` set to `row` if `has`."""
    return _apply(_PUT, [buffer, i, row, has], {"capacity": int(capacity), "what": what})


def _take_kernel(buffer, m, j):
    m, j = int(m), int(j)
    if m <= 0:                                 # nothing buffered: the pass has ended
        return [buffer, np.zeros(buffer.shape[1:], buffer.dtype)]
    if not _owned(buffer):
        buffer = _allocated(buffer.shape, buffer)
    row = buffer[j].copy()
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


def _padded_put_kernel(buffer, i, row, has, pad, capacity, shape, what):
    """`buffer` with row i set to `row` padded with `pad` to `shape` (None: the largest
    extent of the rows so far): a put that grows the rows it holds as elements come."""
    if not has:
        return buffer
    i = int(i)
    if row.ndim != len(shape) or any(d is not None and n > d for d, n in zip(shape, row.shape)):
        raise InvalidArgumentError(
            f"{what}: an element has shape {row.shape}, which does not fit the padded shape "
            f"{TensorShape(shape)}")
    dims = tuple(d if d is not None else max(n, b)
                 for d, n, b in zip(shape, row.shape, buffer.shape[1:]))
    if i >= buffer.shape[0] or dims != buffer.shape[1:] or not _owned(buffer):
        buffer = _allocated((_more_rows(buffer, i, capacity),) + dims, buffer, pad)
    buffer[(i,) + tuple(slice(0, n) for n in row.shape)] = row
    return buffer


def _padded_put_infer(inputs, capacity, shape, what):
    return [(TensorShape([None] + list(shape)), inputs[0].dtype)]


_PADDED_PUT = registry.register("dataset_padded_put", _padded_put_kernel, _padded_put_infer,
                                grad=no_gradient)


def padded_put(buffer, i, row, has, pad, capacity, padded_shape, what):
    """`buffer` with row `i` set to `row` padded (with the scalar `pad`) to `padded_shape`
    (a TensorShape: its unknown dims are the largest of the rows put), if `has`."""
    return _apply(_PADDED_PUT, [buffer, i, row, has, pad],
                  {"capacity": int(capacity), "shape": tuple(padded_shape.dims), "what": what})


# -- caching ------------------------------------------------------------------------------------

class _Filling:
    """The elements a cache holds, and which pass may add to them (the last to begin)."""

    __slots__ = ("elements", "complete", "writer")

    def __init__(self):
        self.elements, self.complete, self.writer = [], False, 0


class CacheState:
    """The elements of a cached data set: those of the first pass that ran to its end (a
    pass beginning before that replaces what unfinished ones put), kept once for the data
    set and per run of the graph that made it (`run_state`); with a file, also written
    there when complete, and read from there by a pass beginning while none is (in a later
    program too)."""

    __slots__ = ("where", "path", "specs", "_shared", "_lock")

    def __init__(self, where="", path=None, specs=()):
        self.where = where
        self.path = path
        self.specs = specs                 # ((dims or None, numpy dtype), ...)
        self._shared = _Filling()
        self._lock = threading.Lock()

    def __deepcopy__(self, memo):
        clone = CacheState(self.where, self.path, self.specs)
        if self._shared.complete:
            clone._shared = self._shared        # complete: never changes again
        return clone

    @staticmethod
    def run_state():
        return _Filling()

    def _filling(self, run):
        return self._shared if not run else _RUNS.state(run[0])

    def begin(self, *run):
        """[complete?, the number of elements, the writer number of a pass that fills]."""
        filling = self._filling(run)
        with self._lock:
            if not filling.complete and self.path and os.path.exists(self.path):
                filling.elements, filling.complete = self._read(), True
            if filling.complete:
                return [np.asarray(True), np.asarray(len(filling.elements), np.int64),
                        np.asarray(0, np.int64)]
            filling.writer += 1
            filling.elements = []
            return [np.asarray(False), np.asarray(0, np.int64),
                    np.asarray(filling.writer, np.int64)]

    def put(self, has, writer, *rest, keyed):
        run, components = (rest[:1], rest[1:]) if keyed else ((), rest)
        filling = self._filling(run)
        with self._lock:
            if filling.complete or int(writer) != filling.writer:
                return
            if has:
                filling.elements.append([np.array(c) for c in components])
                return
            filling.complete = True
            elements = filling.elements
        if self.path:
            self._write(elements)

    def get(self, i, *run):
        filling = self._filling(run)
        i = int(i)
        if filling.complete and 0 <= i < len(filling.elements):
            return list(filling.elements[i])
        return [np.zeros([d or 0 for d in shape or (0,)], dtype) for shape, dtype in self.specs]

    def _write(self, elements):
        """The elements as one .npz: per component, the values raveled end to end, and the
        rank and dims of each element (written to a new file, then renamed over the old)."""
        arrays = {"count": np.asarray(len(elements), np.int64),
                  "components": np.asarray(len(self.specs), np.int64)}
        for j, (_, dtype) in enumerate(self.specs):
            parts = [e[j] for e in elements]
            arrays[f"values{j}"] = np.concatenate(
                [p.ravel() for p in parts] + [np.zeros(0, dtype)]).astype(dtype)
            arrays[f"ranks{j}"] = np.asarray([p.ndim for p in parts], np.int64)
            arrays[f"dims{j}"] = np.asarray([d for p in parts for d in p.shape], np.int64)
        temporary = f"{self.path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(temporary, "wb") as f:
            np.savez(f, **arrays)
        os.replace(temporary, self.path)

    def _read(self):
        try:
            with np.load(self.path, allow_pickle=False) as stored:
                arrays = {k: stored[k] for k in stored.files}
            return _elements_of(arrays, self.specs)
        except (OSError, ValueError, KeyError) as e:
            raise InvalidArgumentError(
                f"cache: the file {self.path!r} does not hold elements of the data set "
                f"cached{self.where} ({e}); remove it to cache the data set again") from None

    @property
    def cannot_save(self):
        """Why a graph holding this cannot be saved (the saved-graph writer says it)."""
        return (f"it keeps the elements of the data set cached{self.where} in Python, which a "
                f"saved graph cannot hold: drop the cache() from the pipeline, or iterate the "
                f"data set outside the function and pass the batches as arguments")

    def __repr__(self):
        return f"<the cache of a data set{self.where}>"


def _elements_of(arrays, specs):
    """The elements a cache file holds (see CacheState._write), checked against `specs`."""
    n = int(arrays["count"])
    if int(arrays["components"]) != len(specs):
        raise ValueError(f"its elements have {int(arrays['components'])} components, not "
                         f"{len(specs)}")
    columns = []
    for j, (shape, dtype) in enumerate(specs):
        values, ranks, dims = arrays[f"values{j}"], arrays[f"ranks{j}"], arrays[f"dims{j}"]
        if values.dtype != np.dtype(dtype) or len(ranks) != n:
            raise ValueError(f"component {j} holds {len(ranks)} {values.dtype} values, not "
                             f"{n} {np.dtype(dtype)}")
        shapes = np.split(dims, np.cumsum(ranks)[:-1]) if n else []
        sizes = [int(np.prod(s)) for s in shapes]
        if sum(sizes) != values.size or (shape is not None and any(
                len(s) != len(shape) or any(d is not None and d != k for d, k in zip(shape, s))
                for s in shapes)):
            raise ValueError(f"component {j} does not have the shape {shape}")
        starts = np.cumsum([0] + sizes)
        columns.append([values[a:a + k].reshape(tuple(s))
                        for a, k, s in zip(starts, sizes, shapes)])
    return [list(element) for element in zip(*columns)] if columns else [[]] * n


def _no_outputs(inputs, **_):
    return []


def _begin_infer(inputs, cache):
    return [(TensorShape([]), dtypes.bool_), (TensorShape([]), dtypes.int64),
            (TensorShape([]), dtypes.int64)]


def _cache_get_infer(inputs, cache):
    return [(TensorShape(shape), dtypes.as_dtype(dtype)) for shape, dtype in cache.specs]


# Stateful, all three: what they read and write lives in the CacheState (never folded,
# merged or reordered), and the arrays a put keeps are never reused by the memory plan.
_CACHE_BEGIN = registry.register("dataset_cache_begin",
                                 lambda *run, cache: cache.begin(*run), _begin_infer,
                                 multi=True, stateful=True, grad=no_gradient)
_CACHE_PUT = registry.register("dataset_cache_put",
                               lambda *args, cache, keyed: cache.put(*args, keyed=keyed),
                               _no_outputs, stateful=True, grad=no_gradient)
_CACHE_GET = registry.register("dataset_cache_get",
                               lambda i, *run, cache: cache.get(i, *run),
                               _cache_get_infer, multi=True, stateful=True,
                               grad=no_gradient)


def cache_begin(cache, run=None):
    """A pass begins: (complete?, its number of elements, the writer number to fill it)."""
    return _apply(_CACHE_BEGIN, [] if run is None else [run], {"cache": cache})


def cache_put(cache, has, writer, components, run=None):
    """Add an element (or, when not `has`, complete the cache) if `writer` still fills it."""
    keyed = [] if run is None else [run]
    return _apply(_CACHE_PUT, [has, writer] + keyed + list(components),
                  {"cache": cache, "keyed": bool(keyed)})


def cache_get(cache, i, run=None):
    """The components of cached element i (zeros past the end)."""
    return _apply(_CACHE_GET, [i] + ([] if run is None else [run]), {"cache": cache})


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
