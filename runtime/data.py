"""Input pipelines (`rt.data`): data sets that run eagerly and inside graphs alike.

    data = rt.data.Dataset.from_tensor_slices((features, labels))
    for x, y in data.shuffle(100, seed=1).batch(32):
        ...                        # x, y: tensors of up to 32 rows

A data set is a description of a pipeline; a pass over it runs as ordinary ops on a few
values (cursors, the pass's seed, buffers): `_start()` gives the state a pass begins with,
`_next(state)` the next state, whether there was an element, and the element. Iterated
eagerly, those ops run at once; a `for` over a data set in a converted function is one
graph loop whose loop variables are that state, so the graph does not grow with the data
and every run makes a new pass. Both ways run the same ops: the same elements in the same
order under a seed.

Data sets whose elements are computed from an index (slices, `range`, and `batch`, `zip`,
`enumerate`, `take`, `skip`, `shuffle`, `map`, `shard` and `concatenate` of them) are
*random access*: a pass is a cursor over `_get(ctx, i, valid)` (`ctx`: what the pass
computed first, such as a shuffle's order; `valid`: whether i is an element, as past the
end no user function may run). The others (`filter`, `repeat`, `unbatch`, `cache`,
`padded_batch`, `flat_map`, `interleave`, `from_generator`, and what is built on them)
pull element by element (`_pull_start`, `_pull`). After its end, a pass keeps answering
"no element" and runs nothing. `Iteration` lays a pass out as the loop variables of
autograph's `for`.

`shuffle` is TensorFlow's: a buffer of `buffer_size` elements, each draw replaced by the
next element, a new order on every pass (`reshuffle_each_iteration=True`), reproducible
from its seeds (`seed` and the global seed, as random ops). A data set made inside a traced
function starts its passes again on every call, as the same data set made anew by each
eager call does: what it keeps across passes (a shuffle's pass counter, a cache) is kept
per run of the graph (`_new_run`). `map` and `filter` functions are converted by autograph
(when it is imported) and traced once, on the element signature; a `flat_map` or
`interleave` function twice (see `_Opened`). `prefetch` does nothing: elements are
computed when the loop asks for them.
"""
import collections
import contextlib
import copy
import functools
import itertools
import os
import threading

import numpy as np

from . import context
from . import dtypes
from . import nest
from .control_flow import cond, while_loop
from .errors import InvalidArgumentError
from .function import Function, TensorSpec
from .graph import Graph
from .ops import array_ops
from .ops import data_ops
from .ops import logging_ops
from .ops import math_ops
from .ops import random_ops
from .ops.registry import constant, constant_value, convert_to_tensor
from .shapes import TensorShape
from .tensor import SymbolicTensor, Tensor
from .traceback_utils import at_user_line, user_frame

__all__ = ["Dataset", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]

AUTOTUNE = -1                 # accepted where TensorFlow takes it (nothing is tuned here)
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2
_INT64_MAX = np.iinfo(np.int64).max

# How `map` and `filter` call the user's function: autograph installs its converter when
# imported (the runtime never imports the compiler); without it, functions run as written.
_function_converter = None


def set_function_converter(converter):
    """`converter(func) -> callable`, applied to the functions given to `map` and `filter`."""
    global _function_converter
    _function_converter = converter


class Dataset:
    """A finite or infinite sequence of elements (nests of tensors); see the module.

    Subclasses give `element_spec`, `_cardinality`, and random access (`_begin`, `_size`,
    `_get`), pulling (`_pull_start`, `_pull`), or both (`random_access` says which runs).
    """

    what = "data set"          # what errors call it
    random_access = False      # elements by index: _begin() -> ctx, _size(ctx), _get(...)
    vectorized = False         # _get takes a vector of indices too (no user code runs)
    element_spec = None        # a nest of TensorSpec
    _cardinality = UNKNOWN_CARDINALITY

    # -- sources ------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors):
        """The slices of `tensors` along their first dimension (a tuple or dict of tensors
        sharing it; a list is one tensor, as in TensorFlow)."""
        return _Slices(tensors)

    @staticmethod
    def from_tensors(tensors):
        """One element: `tensors` (a tuple or dict of tensors; a list is one tensor)."""
        return _Slices(nest.map_structure(lambda t: array_ops.expand_dims(t, 0),
                                          _normalized(tensors)))

    @staticmethod
    def range(*args, output_type=dtypes.int64, name=None):
        """`range(stop)`, `range(start, stop[, step])` as a data set of scalars."""
        return _Range(*args, dtype=output_type)

    @staticmethod
    def zip(*datasets):
        """Elements of several data sets side by side, as long as the shortest; one nest of
        data sets (`zip((a, b))`) gives elements of its structure."""
        structure = datasets[0] if len(datasets) == 1 and not isinstance(
            datasets[0], Dataset) else tuple(datasets)
        return _Zip(structure)

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None,
                       output_signature=None):
        """The elements a Python generator yields, called through `rt.py_function` (so a
        graph calls it when it runs: such a graph cannot be saved). `generator(*args)`
        makes a new iterator for each pass; `output_signature` (a nest of TensorSpec)
        says what each element is."""
        return _FromGenerator(generator, _signature(output_signature, output_types,
                                                    output_shapes), args)

    # -- transformations ---------------------------------------------------------------
    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """`map_func(element)` for each element (a tuple is passed as arguments)."""
        return _Map(self, map_func)

    def filter(self, predicate, name=None):
        """The elements for which `predicate(element)` is a true scalar bool."""
        return _Filter(self, predicate)

    def take(self, count, name=None):
        """The first `count` elements (all of them when count is -1)."""
        return _Take(self, count)

    def skip(self, count, name=None):
        """The elements after the first `count` (none when count is -1)."""
        return _Skip(self, count)

    def repeat(self, count=None, name=None):
        """The elements `count` times over (forever when None or -1); each repetition is a
        new pass (a shuffle inside reshuffles)."""
        return _Repeat(self, count)

    def enumerate(self, start=0, name=None):
        """(index, element) pairs, the index an int64 counting from `start`."""
        return _Zip((_Range(start, None), self))

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None,
              deterministic=None, name=None):
        """Consecutive elements stacked in groups of `batch_size` (the last may be short,
        unless `drop_remainder`)."""
        return _Batch(self, batch_size, drop_remainder)

    def unbatch(self, name=None):
        """The rows of each element (the inverse of `batch`)."""
        return _Unbatch(self)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None, name=None):
        """The elements in random order through a buffer of `buffer_size` (see the module)."""
        return _Shuffle(self, buffer_size, seed, reshuffle_each_iteration is not False)

    def prefetch(self, buffer_size, name=None):
        """This data set (elements are computed when asked for; nothing runs ahead)."""
        return self

    def concatenate(self, dataset, name=None):
        """The elements of this data set, then those of `dataset` (elements of the same
        structure and dtypes; a dimension that differs between the two becomes unknown)."""
        return _Concatenate(self, dataset)

    def shard(self, num_shards, index, name=None):
        """The elements whose position modulo `num_shards` is `index` (one worker's part)."""
        return _Shard(self, num_shards, index)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False, name=None):
        """Consecutive elements in groups of `batch_size`, each component padded (with its
        `padding_values`, default 0) to its `padded_shapes` (None or -1 dims, and all dims
        when not given: the largest in the batch)."""
        return _PaddedBatch(self, batch_size, padded_shapes, padding_values, drop_remainder)

    def cache(self, filename="", name=None):
        """The same elements, kept in memory by the first pass that runs to its end; later
        passes read them instead of running the pipeline before `cache` again. With a
        `filename`, also written to that file (numpy's .npz), which a pass reads instead
        when it exists, in a later program too."""
        return _Cache(self, filename)

    def flat_map(self, map_func, name=None):
        """The elements of the data sets `map_func(element)` returns, one after another."""
        return _Interleave(self, map_func, 1, 1, "flat_map")

    def interleave(self, map_func, cycle_length=None, block_length=None,
                   num_parallel_calls=None, deterministic=None, name=None):
        """The elements of the data sets `map_func(element)` returns, `block_length` at a time
        from each of `cycle_length` open ones in turn (the next element opens a new one when
        one ends); None or AUTOTUNE `cycle_length`: the number of CPUs, as TensorFlow."""
        return _Interleave(self, map_func, cycle_length, block_length, "interleave")

    def apply(self, transformation_func):
        """`transformation_func(self)`, a data set."""
        dataset = transformation_func(self)
        if not isinstance(dataset, Dataset):
            raise TypeError(f"apply: the transformation must return a data set, got "
                            f"{dataset!r:.80}")
        return dataset

    def reduce(self, initial_state, reduce_func, name=None):
        """The state `reduce_func(state, element)` leaves after every element, starting from
        `initial_state` (in a converted function: one graph loop)."""
        return _reduce(self, initial_state, reduce_func)

    # -- what it is ----------------------------------------------------------------------
    def cardinality(self):
        """The number of elements as an int64 tensor: INFINITE_CARDINALITY (-1) or
        UNKNOWN_CARDINALITY (-2) when it is not known without running the pipeline."""
        return constant(self._cardinality, dtypes.int64)

    def __len__(self):
        n = self._cardinality
        if n == INFINITE_CARDINALITY:
            raise TypeError("The data set is infinite: it has no len()")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The length of the data set is unknown (it filters, reads a "
                            "generator, or slices tensors of unknown length); count its "
                            "elements in a loop")
        return n

    def __deepcopy__(self, memo):
        """A copy with pass counters (shuffles), caches and generator iterators of its own,
        at the same point; tensors and traced functions are shared (they never change)."""
        clone = copy.copy(self)
        memo[id(self)] = clone
        for key, value in vars(self).items():
            if any(isinstance(v, (Dataset, data_ops.ShuffleState, data_ops.CacheState))
                   for v in [value] + nest.flatten(value)):
                setattr(clone, key, copy.deepcopy(value, memo))
        return clone

    def __bool__(self):
        return True            # (not len(): an unknown length is no reason to fail `if ds:`)

    def __repr__(self):
        n = {INFINITE_CARDINALITY: "infinitely many", UNKNOWN_CARDINALITY: "an unknown "
             "number of"}.get(self._cardinality, self._cardinality)
        return f"<rt.data.Dataset of {n} elements: {self.element_spec}>"

    # -- iteration -----------------------------------------------------------------------
    def __iter__(self):
        """Elements as tensors: eager ones, or, while tracing, the graph ops of each element
        (then the number of elements must be known: a `for` statement in a converted
        function is a graph loop instead)."""
        if context.executing_eagerly():
            return self._eager_elements()
        return self._traced_elements()

    def as_numpy_iterator(self):
        """The elements as nests of numpy values (eagerly)."""
        for element in self:
            yield nest.map_structure(lambda t: t.numpy(), element)

    def _eager_elements(self):
        # (an iterator made eagerly stays eager where it is resumed: in a trace, its
        # elements are constants)
        with context.init_scope():
            state = self._start()
        while True:
            with context.init_scope():
                state, has, element = self._next(state)
                if not bool(has):
                    return
            yield element

    def _traced_elements(self):
        n = self._cardinality
        if n < 0:
            many = "infinitely many" if n == INFINITE_CARDINALITY else "an unknown number of"
            raise TypeError(
                f"A data set of {many} elements cannot be iterated by Python while tracing "
                f"(a comprehension, list(), iter(), or a loop in a function that autograph "
                f"does not convert): only a `for` statement in a function converted by "
                f"autograph.convert becomes a graph loop over it.{at_user_line(2)}")
        state = self._start()
        for _ in range(n):
            state, _, element = self._next(state)
            yield element

    # -- passes: random access gives a cursor, the others pull -------------------------
    def _start(self):
        """The state a pass begins with."""
        if not self.random_access:
            return self._pull_start()
        ctx = self._begin()
        return (ctx, _int64(self._size(ctx)), _int64(0))

    def _next(self, state):
        """(the next state, whether there is an element, the element)."""
        if not self.random_access:
            return self._pull(state)
        ctx, n, i = state
        valid = i < n
        element = self._get(ctx, i, valid)
        return (ctx, n, i + 1), valid, _conform(valid, element, self.element_spec, self)

    def _pull_start(self):
        raise NotImplementedError

    def _pull(self, state):
        raise NotImplementedError

    def _begin(self):
        return ()

    def _size(self, ctx):
        raise NotImplementedError

    def _get(self, ctx, i, valid):
        raise NotImplementedError


# -- sources ------------------------------------------------------------------------------

class _Slices(Dataset):
    what = "from_tensor_slices"
    random_access = vectorized = True

    def __init__(self, tensors):
        self.structure = _normalized(tensors)
        self.components = nest.flatten(self.structure)
        if not self.components or any(t.shape.rank == 0 for t in self.components):
            raise ValueError("from_tensor_slices needs tensors with a first dimension, got "
                             f"{_shapes(self.structure)}")
        firsts = {t.shape[0] for t in self.components} - {None}
        if len(firsts) > 1:
            raise ValueError(f"from_tensor_slices: the first dimensions differ: "
                             f"{_shapes(self.structure)}")
        self._static_size = firsts.pop() if firsts and None not in (
            t.shape[0] for t in self.components) else None
        self._cardinality = UNKNOWN_CARDINALITY if self._static_size is None else \
            self._static_size
        self.element_spec = nest.map_structure(
            lambda t: TensorSpec(t.shape.dims[1:] if t.shape.rank else None, t.dtype),
            self.structure)

    def _size(self, ctx):
        if self._static_size is not None:
            return self._static_size
        return data_ops.size(self.components, "from_tensor_slices")

    def _get(self, ctx, i, valid):
        return nest.pack_sequence_as(self.structure,
                                     [data_ops.gather(t, i) for t in self.components])


class _Range(Dataset):
    what = "range"
    random_access = vectorized = True

    def __init__(self, *args, dtype=dtypes.int64):
        if not 1 <= len(args) <= 3:
            raise TypeError(f"range takes 1 to 3 arguments, got {len(args)}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (tuple(args) + (1,))[:3]
        self.dtype = dtypes.as_dtype(dtype)
        self.start, self.stop, self.step = (_int64(v) if v is not None else None
                                            for v in (start, stop, step))
        known = [None if v is None else _static_int(v) for v in (start, stop, step)]
        if known[2] == 0:
            raise ValueError("range: step must not be zero")
        self.element_spec = TensorSpec([], self.dtype)
        if stop is None:
            self._cardinality = INFINITE_CARDINALITY
        elif None not in known:
            self._cardinality = len(range(*known))

    def _size(self, ctx):
        if self.stop is None:
            return _INT64_MAX
        if self._cardinality >= 0:
            return self._cardinality
        step = self.step
        n = (self.stop - self.start + step - math_ops.sign(step)) // step
        return math_ops.maximum(n, 0)

    def _get(self, ctx, i, valid):
        value = self.start + i * self.step
        return value if self.dtype == dtypes.int64 else math_ops.cast(value, self.dtype)


# The iterators of passes over generator data sets, by handle: kept module-wide, so the
# data set a flat_map function makes again to pull from finds what its first making started.
_ITERATORS = {}
_HANDLES = itertools.count(1)
_ITERATORS_LOCK = threading.Lock()


class _FromGenerator(Dataset):
    """A Python generator read through py_function: each pass calls `generator(*args)`; its
    iterator is kept in `_ITERATORS` by handle (an int64 loop value) until it finishes."""
    what = "from_generator"

    _LIVE = 64           # iterators a data set keeps at most (a pass left by `break` never
                         # finishes)

    def __init__(self, generator, signature, args):
        if not callable(generator):
            raise TypeError(f"from_generator needs a callable that returns an iterator, got "
                            f"{generator!r}")
        self.generator = generator
        self.args = () if args is None else tuple(convert_to_tensor(a) for a in args)
        self.element_spec = signature
        self.specs = nest.flatten(signature)
        self._live = collections.deque()
        name = getattr(generator, "__qualname__", type(generator).__name__)
        self._name = f"Dataset.from_generator({name})"

    def __deepcopy__(self, memo):
        clone = copy.copy(self)
        clone._live = collections.deque()
        return clone

    def _pull_start(self):
        handle = logging_ops.py_function(_named(self._new_iterator, f"{self._name}: start"),
                                         list(self.args), dtypes.int64)
        return (array_ops.reshape(handle, []),)

    def _pull(self, state):
        handle, = state
        outs = logging_ops.py_function(_named(self._next_value, f"{self._name}: next"), [handle],
                                       [dtypes.bool_] + [s.dtype for s in self.specs])
        has = array_ops.reshape(outs[0], [])
        element = nest.pack_sequence_as(self.element_spec, list(outs[1:]))
        return state, has, _conform(has, element, self.element_spec, self)

    def _new_iterator(self, *args):
        iterator = iter(self.generator(*[a.numpy() for a in args]))
        with _ITERATORS_LOCK:
            handle = next(_HANDLES)
            _ITERATORS[handle] = iterator
            self._live.append(handle)
            while len(self._live) > self._LIVE:
                old = self._live.popleft()
                if old in _ITERATORS:
                    _ITERATORS[old] = None            # dropped: see _next_value
        return np.asarray(handle, np.int64)

    def _next_value(self, handle):
        handle = int(handle)
        with _ITERATORS_LOCK:
            if handle not in _ITERATORS:
                return self._ended()
            iterator = _ITERATORS[handle]
        if iterator is None:
            raise RuntimeError(f"{self._name}: more than {self._LIVE} passes over it are "
                               f"unfinished; the oldest was dropped and cannot go on")
        try:
            value = next(iterator)
        except StopIteration:
            with _ITERATORS_LOCK:
                _ITERATORS.pop(handle, None)
                if handle in self._live:
                    self._live.remove(handle)
            return self._ended()
        return [np.asarray(True)] + self._checked(value)

    def _ended(self):
        return [np.asarray(False)] + [np.zeros([d or 0 for d in s.shape.dims or ()], s.dtype.np)
                                      for s in self.specs]

    def _checked(self, value):
        try:
            leaves = nest.flatten_up_to(self.element_spec, _as_tuples(value))
        except (ValueError, TypeError):
            raise TypeError(f"{self._name}: the generator yielded {value!r:.80}, which does not "
                            f"have the structure of output_signature "
                            f"{self.element_spec}") from None
        out = []
        for k, (leaf, spec) in enumerate(zip(leaves, self.specs)):
            try:
                array = np.asarray(leaf.numpy() if isinstance(leaf, Tensor) else leaf)
                if array.dtype != spec.dtype.np and not np.can_cast(array.dtype, spec.dtype.np,
                                                                    "same_kind"):
                    raise TypeError(array.dtype)
                array = array.astype(spec.dtype.np)
            except (TypeError, ValueError) as e:
                raise TypeError(f"{self._name}: the generator yielded {leaf!r:.60} for "
                                f"component {k}, which output_signature declares "
                                f"{spec.dtype.name} ({e})") from None
            if not spec.shape.is_compatible_with(array.shape):
                raise ValueError(f"{self._name}: the generator yielded a value of shape "
                                 f"{array.shape} for component {k}, which output_signature "
                                 f"declares of shape {spec.shape}")
            out.append(array)
        return out


# -- transformations ----------------------------------------------------------------------

class _Zip(Dataset):
    what = "zip"
    def __init__(self, structure):
        self.structure = structure
        self.datasets = nest.flatten(structure)
        if not self.datasets or not all(isinstance(d, Dataset) for d in self.datasets):
            raise TypeError(f"zip takes data sets, got {structure!r:.80}")
        self.random_access = all(d.random_access for d in self.datasets)
        self.vectorized = all(d.vectorized for d in self.datasets)
        self.element_spec = nest.pack_sequence_as(
            structure, [d.element_spec for d in self.datasets])
        self._cardinality = _shortest([d._cardinality for d in self.datasets])

    def _begin(self):
        ctxs = tuple(d._begin() for d in self.datasets)
        return ctxs, tuple(_int64(d._size(c)) for d, c in zip(self.datasets, ctxs))

    def _size(self, ctx):
        sizes = ctx[1]
        n = sizes[0]
        for m in sizes[1:]:
            n = math_ops.minimum(n, m)
        return n

    def _get(self, ctx, i, valid):
        return nest.pack_sequence_as(self.structure, [
            d._get(c, i, valid) for d, c in zip(self.datasets, ctx[0])])

    def _pull_start(self):
        return tuple(d._start() for d in self.datasets)

    def _pull(self, state):
        pulled = [d._next(s) for d, s in zip(self.datasets, state)]
        has = pulled[0][1]
        for _, h, _ in pulled[1:]:
            has = math_ops.logical_and(has, h)
        return (tuple(p[0] for p in pulled), has,
                nest.pack_sequence_as(self.structure, [p[2] for p in pulled]))


class _Map(Dataset):
    what = "map"
    def __init__(self, source, func):
        self.source = source
        self.random_access = source.random_access
        self._cardinality = source._cardinality
        self.function = _traced(func, source.element_spec, "map")
        outputs = self.function.structured_outputs
        self.element_spec = nest.map_structure(lambda t: TensorSpec(t.shape, t.dtype), outputs)

    def _call(self, valid, element):
        # The function runs for real elements only (a pass's end stands on zeros).
        return cond(valid, lambda: _call(self.function, element),
                    lambda: _zeros(self.element_spec))

    def _begin(self):
        ctx = self.source._begin()
        return ctx, _int64(self.source._size(ctx))

    def _size(self, ctx):
        return ctx[1]

    def _get(self, ctx, i, valid):
        return self._call(valid, self.source._get(ctx[0], i, valid))

    def _pull_start(self):
        return self.source._start()

    def _pull(self, state):
        state, has, element = self.source._next(state)
        return state, has, _conform(has, self._call(has, element), self.element_spec, self)


class _Filter(Dataset):
    what = "filter"
    def __init__(self, source, predicate):
        self.source = source
        self.element_spec = source.element_spec
        self.function = _traced(predicate, source.element_spec, "filter")
        out = self.function.structured_outputs
        if not (isinstance(out, Tensor) and out.dtype.is_bool and out.shape.rank in (0, None)):
            raise TypeError(f"filter: the predicate must return a scalar bool tensor, got "
                            f"{out!r}")
        if source._cardinality == INFINITE_CARDINALITY:
            self._cardinality = INFINITE_CARDINALITY

    def _pull_start(self):
        return self.source._start()

    def _pull(self, state):
        def looking(found, state, has, element):
            return math_ops.logical_and(has, math_ops.logical_not(found))

        def pull(found, state, has, element):
            state, has, element = self.source._next(state)
            keep = cond(has, lambda: _call(self.function, element), lambda: False)
            return keep, state, has, element

        found, state, _, element = while_loop(
            looking, pull, (_bool(False), state, _bool(True), _zeros(self.element_spec)))
        return state, found, element


class _Take(Dataset):
    what = "take"
    def __init__(self, source, count):
        self.source, self.count = source, _int64(count)
        self.random_access, self.vectorized = source.random_access, source.vectorized
        self.element_spec = source.element_spec
        k = _static_int(count)
        n = source._cardinality
        if k is not None:
            self._cardinality = n if k < 0 else k if n == INFINITE_CARDINALITY else \
                UNKNOWN_CARDINALITY if n == UNKNOWN_CARDINALITY else min(n, k)

    def _wanted(self, k):
        return math_ops.logical_or(self.count < 0, k < self.count)

    def _begin(self):
        ctx = self.source._begin()
        n = _int64(self.source._size(ctx))
        return ctx, array_ops.where(self.count < 0, n, math_ops.minimum(n, self.count))

    def _size(self, ctx):
        return ctx[1]

    def _get(self, ctx, i, valid):
        return self.source._get(ctx[0], i, valid)

    def _pull_start(self):
        return (_int64(0), self.source._start())

    def _pull(self, state):
        k, inner = state

        def more():
            inner_next, has, element = self.source._next(inner)
            return (k + 1, inner_next), has, element

        return cond(self._wanted(k), more,
                    lambda: ((k, inner), False, _zeros(self.element_spec)))


class _Skip(Dataset):
    what = "skip"
    def __init__(self, source, count):
        self.source, self.count = source, _int64(count)
        self.random_access, self.vectorized = source.random_access, source.vectorized
        self.element_spec = source.element_spec
        k, n = _static_int(count), source._cardinality
        if k is not None:
            self._cardinality = 0 if k < 0 else n if n < 0 else max(n - k, 0)

    def _begin(self):
        ctx = self.source._begin()
        n = _int64(self.source._size(ctx))
        offset = array_ops.where(self.count < 0, n, math_ops.minimum(n, self.count))
        return ctx, n - offset, offset

    def _size(self, ctx):
        return ctx[1]

    def _get(self, ctx, i, valid):
        return self.source._get(ctx[0], i + ctx[2], valid)

    def _pull_start(self):
        return (self.count, self.source._start())

    def _pull(self, state):

        def skipping(left, inner, has):
            return math_ops.logical_and(has, math_ops.not_equal(left, 0))

        def pull(left, inner, has):
            inner, has, _ = self.source._next(inner)
            return left - 1, inner, has

        left, inner, _ = while_loop(skipping, pull, (state[0], state[1], _bool(True)))
        inner, has, element = self.source._next(inner)
        return (left, inner), has, element


class _Repeat(Dataset):
    what = "repeat"
    def __init__(self, source, count):
        self.source = source
        self.count = _int64(-1 if count is None else count)
        self.element_spec = source.element_spec
        k, n = _static_int(self.count), source._cardinality
        if k is not None:
            self._cardinality = (0 if n == 0 or k == 0 else UNKNOWN_CARDINALITY
                                 if n == UNKNOWN_CARDINALITY else INFINITE_CARDINALITY
                                 if k < 0 or n == INFINITE_CARDINALITY else n * k)

    def _pull_start(self):
        return (_int64(1), self.source._start())

    def _pull(self, state):
        done, inner = state
        inner, has, element = self.source._next(inner)

        def again():
            fresh, has, element = self.source._next(self.source._start())
            return (done + 1, fresh), has, element

        more = math_ops.logical_and(math_ops.logical_not(has), math_ops.logical_or(
            self.count < 0, done < self.count))
        return cond(more, again, lambda: ((done, inner), has, element))


class _Batch(Dataset):
    what = "batch"
    def __init__(self, source, batch_size, drop_remainder):
        size = _static_int(batch_size)
        if size is None or size < 1:
            raise ValueError(f"batch: batch_size must be a positive int, got {batch_size!r}")
        self.source, self.size, self.drop = source, size, bool(drop_remainder)
        self.random_access = source.vectorized
        self.element_spec = nest.map_structure(
            lambda s: TensorSpec(_with_head([size if self.drop else None], s.shape),
                                 s.dtype), source.element_spec)
        n = source._cardinality
        self._cardinality = n if n < 0 else n // size if self.drop else -(-n // size)

    def _begin(self):
        ctx = self.source._begin()
        return ctx, _int64(self.source._size(ctx))

    def _size(self, ctx):
        n = ctx[1]
        return n // self.size if self.drop else (n + self.size - 1) // self.size

    def _get(self, ctx, i, valid):
        start = i * self.size
        if self.drop:
            rows = start + constant(np.arange(self.size, dtype=np.int64))
        else:
            rows = array_ops.range(start, math_ops.minimum(start + self.size, ctx[1]))
        return self.source._get(ctx[0], rows, valid)

    def _pull_start(self):
        return self.source._start()

    def _pull(self, state):

        k, rows, state, _ = _fill(self.source, state, self._buffers(), _int64(0), _bool(True),
                                  self.size, self.what, self._puts())
        has = k >= self.size if self.drop else k > 0
        rows = rows if self.drop else [r[:k] for r in rows]
        element = nest.pack_sequence_as(self.source.element_spec, rows)
        return state, has, _conform(has, element, self.element_spec, self)

    def _buffers(self):
        return _empty_rows(self.source.element_spec)

    def _puts(self):
        return None


class _PaddedBatch(_Batch):
    """A batch whose rows are padded to shapes the batch makes; always filled element by
    element (its elements may differ in shape)."""
    what = "padded_batch"
    def __init__(self, source, batch_size, padded_shapes, padding_values, drop_remainder):
        _Batch.__init__(self, source, batch_size, drop_remainder)
        self.random_access = False
        specs = nest.flatten(source.element_spec)
        self.shapes = [_padded_shape(s, p) for s, p in zip(specs, _per_component(
            source.element_spec, padded_shapes, "padded_shapes"))]
        self.pads = [_padding(s, v) for s, v in zip(specs, _per_component(
            source.element_spec, padding_values, "padding_values"))]
        head = [self.size if self.drop else None]
        self.element_spec = nest.pack_sequence_as(source.element_spec, [
            TensorSpec(_with_head(head, shape), s.dtype) for s, shape in zip(specs, self.shapes)])

    def _buffers(self):
        return [_relaxed(constant(np.zeros([0] + [d or 0 for d in shape.dims], s.dtype.np)),
                         _with_head([None], shape))
                for s, shape in zip(nest.flatten(self.source.element_spec), self.shapes)]

    def _puts(self):
        return [functools.partial(_padded_put, pad=pad, shape=shape)
                for pad, shape in zip(self.pads, self.shapes)]


def _padded_put(buffer, i, row, has, capacity, what, pad, shape):
    return data_ops.padded_put(buffer, i, row, has, pad, capacity, shape, what)


def _per_component(spec, value, what):
    """`value` per component: a nest of the element's structure; None, or (for padding
    values) one value, stands for every component."""
    n = len(nest.flatten(spec))
    if value is None or (what == "padding_values" and not nest.is_nested(value)):
        return [value] * n
    try:
        return nest.flatten_up_to(spec, value)
    except ValueError:
        raise ValueError(f"padded_batch: {what} must have the structure of the elements, "
                         f"{nest.structure_str(spec)}, got {value!r:.80}") from None


def _padded_shape(spec, padded):
    """The shape a component is padded to: `padded` (dims None or -1: the batch's largest),
    or, when not given, the component's own shape with its unknown dims the batch's largest."""
    if padded is None:
        if spec.shape.rank is None:
            raise ValueError("padded_batch: padded_shapes must be given when a component's "
                             "rank is unknown")
        return spec.shape
    if isinstance(padded, Tensor):
        padded = padded.numpy().tolist()
    dims = [padded] if isinstance(padded, (int, np.integer)) else list(
        padded.dims if isinstance(padded, TensorShape) else padded)
    if not all(d is None or isinstance(d, (int, np.integer)) for d in dims):
        raise ValueError(f"padded_batch: padded_shapes must have the structure of the "
                         f"elements, {spec}, got {padded!r:.80}")
    shape = TensorShape([None if d is None or d == -1 else int(d) for d in dims])
    own = spec.shape
    if own.rank is not None and (own.rank != shape.rank or any(
            d is not None and n is not None and n > d for d, n in zip(shape.dims, own.dims))):
        raise ValueError(f"padded_batch: the padded shape {shape} does not fit the component "
                         f"shape {own}")
    return shape


def _padding(spec, value):
    """The scalar padding value of a component: 0 (False) by default."""
    if value is None:
        return constant(np.zeros((), spec.dtype.np))
    if isinstance(value, Tensor):
        if value.dtype != spec.dtype or value.shape.rank not in (0, None):
            raise TypeError(f"padded_batch: a padding value must be a scalar of the "
                            f"component's dtype {spec.dtype.name}, got {value!r:.80}")
        return value
    return constant(value, spec.dtype)


class _Unbatch(Dataset):
    what = "unbatch"
    def __init__(self, source):
        self.source = source
        if any(s.shape.rank == 0 for s in nest.flatten(source.element_spec)):
            raise ValueError(f"unbatch: the elements must have a first dimension, got "
                             f"{source.element_spec}")
        self.element_spec = nest.map_structure(
            lambda s: TensorSpec(None if s.shape.rank is None else s.shape.dims[1:], s.dtype),
            source.element_spec)
        n = source._cardinality
        rows = {s.shape[0] if s.shape.rank else None
                for s in nest.flatten(source.element_spec)}
        if n == INFINITE_CARDINALITY:
            self._cardinality = n
        elif n >= 0 and len(rows) == 1 and None not in rows:
            self._cardinality = n * rows.pop()

    def _pull_start(self):
        return (self.source._start(), _empty_rows(self.element_spec), _int64(0), _int64(0))

    def _pull(self, state):
        def exhausted(inner, has, batch, i, n):
            return math_ops.logical_and(has, i >= n)

        def pull(inner, has, batch, i, n):
            inner, has, element = self.source._next(inner)
            batch = nest.flatten(element)
            return inner, has, batch, _int64(0), data_ops.size(batch, "unbatch")

        inner, batch, i, n = state
        inner, has, batch, i, n = while_loop(exhausted, pull, (inner, _bool(True), batch, i, n))
        element = nest.pack_sequence_as(self.element_spec,
                                        [data_ops.gather(b, i) for b in batch])
        return (inner, batch, i + 1, n), has, _conform(has, element, self.element_spec, self)


class _Shuffle(Dataset):
    what = "shuffle"
    def __init__(self, source, buffer_size, seed, reshuffle):
        size = _static_int(buffer_size)
        if size is None or size < 1:
            raise ValueError(f"shuffle: buffer_size must be a positive int, got "
                             f"{buffer_size!r}")
        self.source, self.buffer_size = source, size
        self.element_spec = source.element_spec
        self._cardinality = source._cardinality
        self.random_access = (source.random_access and
                              source._cardinality != INFINITE_CARDINALITY)
        self.vectorized = self.random_access and source.vectorized
        frame = user_frame()
        where = f" at {frame.short()}" if frame is not None else ""
        self.state = data_ops.ShuffleState(random_ops.op_seeds(seed), reshuffle, where)
        self._run = _new_run(self.state) if reshuffle else None

    def _pass_seed(self):
        if self.state.reshuffle:
            return data_ops.pass_seed(self.state, _this_run(self._run))
        return constant(self.state.next_seed())     # one order: a constant of the graph

    def _begin(self):
        ctx = self.source._begin()
        n = _int64(self.source._size(ctx))
        order = data_ops.shuffle_order(n, self._pass_seed(), self.buffer_size)
        return ctx, n, order

    def _size(self, ctx):
        return ctx[1]

    def _get(self, ctx, i, valid):
        return self.source._get(ctx[0], data_ops.gather(ctx[2], i), valid)

    def _pull_start(self):
        return (self._pass_seed(), _int64(0), _int64(0),
                _empty_rows(self.element_spec), self.source._start(), _bool(True))

    def _pull(self, state):
        seed, t, m, rows, inner, more = state

        m, rows, inner, more = _fill(self.source, inner, rows, m, more, self.buffer_size,
                                     "shuffle")
        has = m > 0
        j = data_ops.shuffle_draw(seed, t, m)
        taken = [data_ops.buffer_take(r, m, j) for r in rows]
        step = math_ops.cast(has, dtypes.int64)
        element = nest.pack_sequence_as(self.element_spec, [row for _, row in taken])
        return ((seed, t + step, m - step, [r for r, _ in taken], inner, more), has,
                _conform(has, element, self.element_spec, self))


class _Concatenate(Dataset):
    what = "concatenate"
    def __init__(self, first, second):
        if not isinstance(second, Dataset):
            raise TypeError(f"concatenate takes a data set, got {second!r:.80}")
        self.first, self.second = first, second
        self.element_spec = _joined_spec(first.element_spec, second.element_spec,
                                         "concatenate")
        counts = (first._cardinality, second._cardinality)
        self._cardinality = (INFINITE_CARDINALITY if INFINITE_CARDINALITY in counts else
                             UNKNOWN_CARDINALITY if UNKNOWN_CARDINALITY in counts else
                             sum(counts))
        self.random_access = (first.random_access and second.random_access and
                              INFINITE_CARDINALITY not in counts)
        # (a vector of indices takes rows of both, then picks: the rows must be alike)
        self.vectorized = self.random_access and first.vectorized and second.vectorized and all(
            a.shape.is_fully_defined() and a.shape == b.shape for a, b in zip(
                nest.flatten(first.element_spec), nest.flatten(second.element_spec)))

    def _begin(self):
        first, second = self.first._begin(), self.second._begin()
        return (first, second, _int64(self.first._size(first)),
                _int64(self.second._size(second)))

    def _size(self, ctx):
        return ctx[2] + ctx[3]

    def _get(self, ctx, i, valid):
        first, second, n, _ = ctx
        if self.vectorized:
            return _picked(i < n, self.first._get(first, i, valid),
                           self.second._get(second, i - n, valid))
        return cond(i < n, lambda: self.first._get(first, i, valid),
                    lambda: self.second._get(second, i - n, valid))

    def _pull_start(self):
        return (_bool(False), self.first._start(), self.second._start())

    def _pull(self, state):
        in_second, first, second = state

        def from_second(first):
            second_next, has, element = self.second._next(second)
            return (_bool(True), first, second_next), has, element

        def from_first():
            first_next, has, element = self.first._next(first)
            return cond(has, lambda: ((_bool(False), first_next, second), has, element),
                        lambda: from_second(first_next))

        state, has, element = cond(in_second, lambda: from_second(first), from_first)
        return state, has, _conform(has, element, self.element_spec, self)


class _Shard(Dataset):
    what = "shard"
    def __init__(self, source, num_shards, index):
        shards, index = _static_int(num_shards), _static_int(index)
        if shards is None or index is None:
            raise TypeError("shard: num_shards and index must be known while tracing "
                            "(Python ints or constants)")
        if shards < 1:
            raise InvalidArgumentError(f"shard: num_shards must be positive, got {shards}")
        if not 0 <= index < shards:
            raise InvalidArgumentError(f"shard: index must be in [0, num_shards), got index "
                                       f"{index} with num_shards {shards}")
        self.source, self.shards, self.index = source, shards, index
        self.random_access, self.vectorized = source.random_access, source.vectorized
        self.element_spec = source.element_spec
        n = source._cardinality
        self._cardinality = n if n < 0 else n // shards + (index < n % shards)

    def _begin(self):
        ctx = self.source._begin()
        return ctx, _int64(self.source._size(ctx))

    def _size(self, ctx):
        n = ctx[1]
        return n // self.shards + math_ops.cast(self.index < n % self.shards, dtypes.int64)

    def _get(self, ctx, i, valid):
        return self.source._get(ctx[0], i * self.shards + self.index, valid)

    def _pull_start(self):
        return (_int64(0), self.source._start())

    def _pull(self, state):

        def looking(found, position, inner, has, element):
            return math_ops.logical_and(has, math_ops.logical_not(found))

        def pull(found, position, inner, has, element):
            inner, has, element = self.source._next(inner)
            mine = math_ops.equal(position % self.shards, self.index)
            return math_ops.logical_and(has, mine), position + 1, inner, has, element

        found, position, inner, _, element = while_loop(
            looking, pull, (_bool(False), state[0], state[1], _bool(True),
                            _zeros(self.element_spec)))
        return (position, inner), found, element


class _Cache(Dataset):
    """The first pass that runs to its end fills the cache as it pulls; a pass beginning
    after that reads the cache, and does not start the pipeline before it at all."""
    what = "cache"
    def __init__(self, source, filename):
        if isinstance(filename, Tensor):
            filename = filename.numpy()
        if isinstance(filename, bytes):
            filename = filename.decode()
        if not isinstance(filename, (str, os.PathLike)):
            raise TypeError(f"cache: filename must be a path, got {filename!r:.80}")
        self.source = source
        self.element_spec, self._cardinality = source.element_spec, source._cardinality
        frame = user_frame()
        self.store = data_ops.CacheState(
            f" at {frame.short()}" if frame is not None else "", os.fspath(filename) or None,
            tuple((None if s.shape.rank is None else tuple(s.shape.dims), s.dtype.np)
                  for s in nest.flatten(self.element_spec)))
        self._run = _new_run(self.store)

    def _pull_start(self):
        run = _this_run(self._run)
        complete, n, writer = data_ops.cache_begin(self.store, run)
        return (complete, n, _int64(0), writer, _unless(complete, self.source._start))

    def _pull(self, state):
        complete, n, i, writer, inner = state
        run = _this_run(self._run)

        def read():
            has = i < n
            element = nest.pack_sequence_as(self.element_spec,
                                            data_ops.cache_get(self.store, i, run))
            return (complete, n, i + math_ops.cast(has, dtypes.int64), writer, inner), has, \
                element

        def fill():
            inner_next, has, element = self.source._next(inner)
            data_ops.cache_put(self.store, has, writer, nest.flatten(element), run)
            return (complete, n, i, writer, inner_next), has, element

        state, has, element = cond(complete, read, fill)
        return state, has, _conform(has, element, self.element_spec, self)


class _Opened:
    """The data sets `func` makes from elements of `spec` (flat_map, interleave), each run by
    two functions traced once: `start(element)` begins a pass over the data set made from
    an element and gives a *slot*: (the element, the pass's state, the keys of the runs of
    the data sets it made, see `_new_run`); `next(slot)` gives (the slot after the next
    pull, whether there was an element, the element)."""

    def __init__(self, func, spec, what):
        if not callable(func):
            raise TypeError(f"{what} needs a function, got {func!r:.80}")
        call = _function_converter(func) if _function_converter is not None else func
        made = []

        def make(element):
            dataset = call(*element) if type(element) is tuple else call(element)
            if not isinstance(dataset, Dataset):
                raise TypeError(f"{what}: the function must return a data set, got "
                                f"{dataset!r:.80}")
            return dataset

        def start(element):
            with _runs_context(made=[]) as keys:
                dataset = make(element)
            made.append(dataset)
            return element, _loose(dataset._start()), tuple(keys)

        def pull(slot):
            element, state, keys = slot
            with _runs_context(given=list(keys)):
                dataset = make(element)
            state, has, inner = dataset._next(state)
            return (element, _loose(state), keys), has, _conform(
                has, inner, self.element_spec, dataset)

        name = getattr(func, "__name__", what).replace("<", "").replace(">", "")
        self.start = _concrete(start, f"{what}_{name}_start", spec)
        self.element_spec = made[0].element_spec
        self.slot_spec = _specs(self.start.structured_outputs)
        self.next = _concrete(pull, f"{what}_{name}_next", self.slot_spec)

    def closed(self):
        """A slot holding nothing (zeros; never pulled from)."""
        return _zeros(self.slot_spec)


class _Interleave(Dataset):
    """TensorFlow's interleave: a cycle of `cycle_length` slots; the current slot gives
    `block_length` elements in turn (then the next slot does), opens the data set of the
    next input element when it holds none, and is passed over when the input has ended."""
    what = "interleave"
    def __init__(self, source, func, cycle_length, block_length, what):
        self.what = what
        self.cycle = _positive(os.cpu_count() or 1 if cycle_length in (None, AUTOTUNE)
                               else cycle_length, "cycle_length", what)
        self.block = _positive(1 if block_length is None else block_length, "block_length",
                               what)
        self.source = source
        self.opened = _Opened(func, source.element_spec, what)
        self.element_spec = self.opened.element_spec
        if source._cardinality == 0:
            self._cardinality = 0

    def _pull_start(self):
        slots = tuple((_bool(False), self.opened.closed()) for _ in range(self.cycle))
        return (self.source._start(), _bool(True), _int64(0), _int64(0), slots)

    def _pull(self, state):
        def looking(found, outer, more, c, b, slots, element):
            any_open = functools.reduce(math_ops.logical_or, [is_open for is_open, _ in slots])
            return math_ops.logical_and(math_ops.logical_not(found),
                                        math_ops.logical_or(more, any_open))

        def step(found, outer, more, c, b, slots, element):
            # The slot at c (where the cycle stood when the step began) acts; the others
            # keep their state.
            scalars, new_slots = (found, outer, more, c, b), []
            for k, slot in enumerate(slots):
                args = scalars + (slot, element)
                if self.cycle == 1:
                    result = self._act(*args)
                else:
                    result = cond(math_ops.equal(c, k), lambda a=args: self._act(*a),
                                  lambda a=args: a)
                *scalars, slot, element = result
                scalars = tuple(scalars)
                new_slots.append(slot)
            return scalars + (tuple(new_slots), element)

        found, *state, element = while_loop(
            looking, step, (_bool(False),) + tuple(state) + (_zeros(self.element_spec),))
        return tuple(state), found, element

    def _act(self, found, outer, more, c, b, slot, element):
        """One step of the cycle at the current slot `slot` = (open?, slot)."""
        is_open, held = slot

        def pull():
            held_next, has, inner = self.opened.next(held)
            b_next = b + 1
            turn = math_ops.logical_or(math_ops.logical_not(has), b_next >= self.block)
            return (has, outer, more, array_ops.where(turn, (c + 1) % self.cycle, c),
                    array_ops.where(turn, _int64(0), b_next), (has, held_next), inner)

        def open_next():
            outer_next, has, element_in = self.source._next(outer)
            opened = cond(has, lambda: self.opened.start(element_in), lambda: held)
            return _bool(False), outer_next, has, c, b, (has, opened), element

        def pass_over():
            return _bool(False), outer, more, (c + 1) % self.cycle, _int64(0), slot, element

        return cond(is_open, pull, lambda: cond(more, open_next, pass_over))


def _reduce(dataset, initial_state, reduce_func):
    """Dataset.reduce: the function traced once on (state, element) specs, the state's shapes
    relaxed until the function keeps them (as TensorFlow does); a loop over the pass."""
    state = _normalized(initial_state)
    weak = nest.map_structure(lambda v: isinstance(v, (bool, int, float)), initial_state) \
        if nest.same_structure(initial_state, state) else None
    spec = _specs(state)
    flat = nest.flatten(spec)
    for _ in range(2 + len(flat) + sum(s.shape.rank or 0 for s in flat)):   # each may change
        function = _traced(reduce_func, (spec, dataset.element_spec), "reduce")
        new = _specs(function.structured_outputs)
        relaxed = _relaxed_state(spec, new, weak)
        if relaxed == spec:
            break
        spec = relaxed
    state = nest.map_structure(lambda t, s: _relaxed(math_ops.cast(t, s.dtype), s.shape),
                               state, spec)
    iteration = Iteration(dataset)

    def more(values, state):
        return iteration.has(values)

    def step(values, state):
        state = function(state, iteration.element(values))
        return iteration.advance(values), nest.map_structure(
            lambda t, s: _relaxed(t, s.shape), _lists_as_tuples(state), spec)

    return while_loop(more, step, (iteration.initial, state))[1]


def _relaxed_state(spec, new, weak):
    """The state spec after one more trace of a reduce function: dims it changed unknown (a
    dtype changes only where the initial state was a Python number)."""
    if not nest.same_structure(spec, new):
        raise TypeError(f"reduce: the function must return the structure of the initial "
                        f"state, {nest.structure_str(spec)}, got {nest.structure_str(new)}")
    weak = nest.flatten(weak) if weak is not None else [False] * len(nest.flatten(spec))
    out = []
    for s, n, python in zip(nest.flatten(spec), nest.flatten(new), weak):
        if s.dtype != n.dtype and not python:
            raise TypeError(f"reduce: the function must keep the state's dtypes: "
                            f"{s.dtype.name} in the initial state, {n.dtype.name} returned")
        out.append(TensorSpec(s.shape.most_specific_compatible_shape(n.shape), n.dtype))
    return nest.pack_sequence_as(spec, out)


def _fill(source, inner, rows, count, more, capacity, what, puts=None):
    """Pull elements of `source` (from state `inner`) into the buffers `rows` (one per
    component, `count` rows used) until they hold `capacity` or the source has ended (`more`
    false); returns (count, rows, inner, more). `puts`: each component's put (default
    data_ops.buffer_put)."""
    puts = puts or [data_ops.buffer_put] * len(rows)

    def filling(count, rows, inner, more):
        return math_ops.logical_and(more, count < capacity)

    def pull(count, rows, inner, more):
        inner, has, element = source._next(inner)
        rows = [put(r, count, x, has, capacity, what)
                for put, r, x in zip(puts, rows, nest.flatten(element))]
        return count + math_ops.cast(has, dtypes.int64), rows, inner, has

    return while_loop(filling, pull, (count, rows, inner, more))


# -- the loop over a data set in a converted function -------------------------------------

class Iteration:
    """A pass over `dataset` as the flat loop variables of a graph loop (autograph's `for`):
    `initial` is (has an element, *state, *element) after the first pull; `advance` pulls
    the next element (`go_on`: whether the loop goes on, when a `break` may end it)."""

    def __init__(self, dataset):
        self.dataset = dataset
        state, has, element = dataset._next(dataset._start())
        self._state, self._element = state, element
        self.initial = self._flat(state, has, element)

    def _flat(self, state, has, element):
        return (_bool(has),) + tuple(nest.flatten(state)) + tuple(nest.flatten(element))

    def _split(self, values):
        n = len(nest.flatten(self._state))
        state = nest.pack_sequence_as(self._state, list(values[1:1 + n]))
        return values[0], state, nest.pack_sequence_as(self._element, list(values[1 + n:]))

    def has(self, values):
        return values[0]

    def element(self, values):
        return self._split(values)[2]

    def advance(self, values, go_on=None):
        _, state, element = self._split(values)
        if go_on is None or go_on is True:
            return self._flat(*self.dataset._next(state))
        if go_on is False:
            return self._flat(state, False, element)
        return cond(go_on, lambda: self._flat(*self.dataset._next(state)),
                    lambda: self._flat(state, False, element))


# -- helpers --------------------------------------------------------------------------------

def _with_head(head, shape):
    """`shape` with the dims `head` in front (unknown rank stays unknown)."""
    return TensorShape(None) if shape.rank is None else TensorShape(list(head) + list(shape.dims))


_runs = threading.local()       # what _new_run does while a flat_map function is traced


def _new_run(owner):
    """Made inside a graph, a data set is made anew by each run of it: the key of the run
    (a tensor) for what it keeps per run (see data_ops.Runs); else None. (While the start
    function of a flat_map or interleave is traced, the keys made are kept, and its next
    function, which makes the same data sets again, takes them as inputs: see _Opened.)"""
    if context.executing_eagerly():
        return None
    given = getattr(_runs, "given", None)
    if given is not None:
        return given.pop(0)
    key = data_ops.start_run(owner)
    made = getattr(_runs, "made", None)
    if made is not None:
        made.append(key)
    return key


@contextlib.contextmanager
def _runs_context(made=None, given=None):
    """Within: the keys of new runs are appended to `made`, or taken from `given`."""
    saved = getattr(_runs, "made", None), getattr(_runs, "given", None)
    _runs.made, _runs.given = made, given
    try:
        yield made
    finally:
        _runs.made, _runs.given = saved


def _this_run(run):
    """The key `run` where the graph being built runs it (the graph that made the data
    set, or one inside it); else None: elsewhere the data set keeps one state."""
    graph = context.current_graph()
    if run is None or graph is None:
        return None
    return run if graph is run.graph or graph._is_inner_of(run.graph) else None


def _int64(value):
    if isinstance(value, Tensor):
        return value if value.dtype == dtypes.int64 else math_ops.cast(value, dtypes.int64)
    return constant(value, dtypes.int64)


def _bool(value):
    return value if isinstance(value, Tensor) else constant(bool(value))


def _static_int(value):
    """A Python int for an int argument known now, else None (a tensor known at run time)."""
    if isinstance(value, Tensor):
        if isinstance(value, SymbolicTensor):
            value = constant_value(value)
            if value is None:
                return None
        else:
            value = value.numpy()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer,
                                                                    np.ndarray)):
        raise TypeError(f"expected an integer, got {value!r}")
    return int(value)


def _shortest(counts):
    finite = [n for n in counts if n >= 0]
    if UNKNOWN_CARDINALITY in counts:
        return min(finite) if finite and min(finite) == 0 else UNKNOWN_CARDINALITY
    return min(finite) if finite else INFINITE_CARDINALITY


def _normalized(value):
    """Tuples, namedtuples and dicts are structure; anything else (a list too) one tensor."""
    if isinstance(value, tuple):
        children = [_normalized(v) for v in value]
        return type(value)(*children) if nest.is_namedtuple(value) else tuple(children)
    if isinstance(value, dict):
        return type(value)((k, _normalized(v)) for k, v in value.items())
    if isinstance(value, Tensor):
        return value
    return constant(value) if not isinstance(value, Tensor) and not hasattr(
        value, "_as_tensor") else convert_to_tensor(value)


def _as_tuples(value):
    """A generator's element with its lists as tuples (structure, as TensorFlow reads it)."""
    if isinstance(value, list):
        return tuple(value)
    return value


def _shapes(structure):
    return nest.map_structure(lambda t: tuple(t.shape.dims or ()), structure)


def _zeros(spec):
    """Zeros of each component's shape (unknown dims: 0): what a pass past its end holds."""
    def zeros(s):
        dims = [d or 0 for d in s.shape.dims] if s.shape.rank is not None else [0]
        return _relaxed(constant(np.zeros(dims, s.dtype.np)), s.shape)
    return nest.map_structure(zeros, spec)


def _empty_rows(spec):
    """For each component, no rows of its shape: the start of a buffer or batch."""
    def empty(s):
        dims = [0] + [d or 0 for d in s.shape.dims] if s.shape.rank is not None else [0]
        shape = _with_head([None], s.shape)
        return _relaxed(constant(np.zeros(dims, s.dtype.np)), shape)
    return [empty(s) for s in nest.flatten(spec)]


def _relaxed(t, shape):
    """`t` with static shape `shape` (less known), so it can start a loop variable."""
    if context.executing_eagerly() or shape.rank is None or t.shape == shape:
        return t
    return data_ops.element(constant(True), t, shape, "data set")


def _conform(has, element, spec, dataset):
    """The element with the static shapes of `spec` (a loop variable keeps its shape)."""
    if context.executing_eagerly():
        return element
    what = dataset.what

    def conform(t, s):
        t = convert_to_tensor(t)
        if s.shape.rank is None or t.shape == s.shape:
            return t
        return data_ops.element(_bool(has), t, s.shape, what)
    return nest.map_structure(conform, element, spec)


def _specs(structure):
    """TensorSpecs of the tensors in `structure`."""
    return nest.map_structure(lambda t: TensorSpec(t.shape, t.dtype), structure)


def _loose(structure):
    """The tensors of `structure` with every dim unknown (their ranks kept): a state that
    may change shape from pull to pull."""
    def loose(t):
        t = convert_to_tensor(t)
        rank = t.shape.rank
        return t if rank is None else _relaxed(t, TensorShape([None] * rank))
    return nest.map_structure(loose, structure)


def _joined_spec(a, b, what):
    """The element spec of elements of specs `a` or `b`: same structure and dtypes; a dim
    that differs unknown."""
    if not nest.same_structure(a, b):
        raise TypeError(f"{what}: the data sets' elements differ in structure: "
                        f"{nest.structure_str(a)} and {nest.structure_str(b)}")

    def joined(x, y):
        if x.dtype != y.dtype:
            raise TypeError(f"{what}: the data sets' elements differ in dtype: {a} and {b}")
        return TensorSpec(x.shape.most_specific_compatible_shape(y.shape), x.dtype)
    return nest.map_structure(joined, a, b)


def _picked(take_first, first, second):
    """`first` where `take_first` (a scalar, or one bool per row), else `second`."""
    def pick(x, y):
        mask = take_first
        if mask.shape.rank == 1:
            mask = array_ops.reshape(mask, [-1] + [1] * (x.shape.rank - 1))
        return array_ops.where(mask, x, y)
    return nest.map_structure(pick, first, second)


def _spec_of(make):
    """The specs of what `make()` gives, built in a scratch graph inside the one being built
    (so it may use its tensors): none of it becomes part of the program."""
    scratch = Graph(name="scratch", outer_graph=context.current_graph())
    with scratch.as_default():
        return _specs(nest.map_structure(convert_to_tensor, make()))


def _unless(skip, make):
    """`make()` (a pass's state) when `skip` is false, else zeros shaped like it (eagerly:
    None), without running any of `make`."""
    if context.executing_eagerly():
        return None if bool(skip) else make()
    spec = _spec_of(make)
    return cond(skip, lambda: _zeros(spec), make)


def _positive(value, name, what):
    n = _static_int(value)
    if n is None or n < 1:
        raise ValueError(f"{what}: {name} must be a positive int, got {value!r}")
    return n


def _concrete(func, name, spec):
    """`func(x)` traced once on `x` of specs `spec` (a ConcreteFunction), with no flat_map
    start function's run keys in effect."""
    def traced(x):
        with _runs_context():
            return func(x)
    traced.__name__ = traced.__qualname__ = name
    return Function(traced).get_concrete_function(spec)


def _signature(output_signature, output_types, output_shapes):
    if output_signature is not None:
        leaves = nest.flatten(output_signature)
        if not leaves or not all(isinstance(s, TensorSpec) for s in leaves):
            raise TypeError(f"from_generator: output_signature must be a nest of "
                            f"rt.TensorSpec, got {output_signature!r:.80}")
        return output_signature
    if output_types is None:
        raise TypeError("from_generator needs output_signature (a nest of rt.TensorSpec), "
                        "or output_types")
    types = nest.flatten(output_types)
    shapes = [None] * len(types) if output_shapes is None else nest.flatten_up_to(
        output_types, output_shapes)
    return nest.pack_sequence_as(output_types,
                                 [TensorSpec(s, t) for t, s in zip(types, shapes)])


def _named(func, name):
    """`func` under `name` (what errors and a refused save call the py_function)."""
    def call(*args):
        return func(*args)
    call.__name__ = call.__qualname__ = name
    return call


def _traced(func, spec, what):
    """`func` (converted by autograph when it is imported) traced once on elements of `spec`:
    a ConcreteFunction whose results are tensors."""
    if not callable(func):
        raise TypeError(f"{what} needs a function, got {func!r:.80}")
    call = _function_converter(func) if _function_converter is not None else func

    def element_function(*args):
        with _runs_context():
            result = call(*args)
        return nest.map_structure(convert_to_tensor, _lists_as_tuples(result))

    name = getattr(func, "__name__", what)
    element_function.__name__ = f"{what}_{name}".replace("<", "").replace(">", "")
    function = Function(element_function)
    args = spec if type(spec) is tuple else (spec,)
    return function.get_concrete_function(*args)


def _lists_as_tuples(value):
    if isinstance(value, list):
        return tuple(_lists_as_tuples(v) for v in value)
    if isinstance(value, tuple) and not nest.is_namedtuple(value):
        return tuple(_lists_as_tuples(v) for v in value)
    return value


def _call(function, element):
    """Call a traced map/filter function on an element (a tuple gives its arguments)."""
    args = element if type(element) is tuple else (element,)
    return function(*args)
