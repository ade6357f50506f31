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
`enumerate`, `take`, `skip`, `shuffle` and `map` of them) are *random access*: a pass is
a cursor over `_get(ctx, i, valid)` (`ctx`: what the pass computed first, such as a
shuffle's order; `valid`: whether i is an element, as past the end no user function may
run). The others (`filter`, `repeat`, `unbatch`, `from_generator`, and what is built on
them) pull element by element. After its end, a pass keeps answering "no element" and
runs nothing. `Iteration` lays a pass out as the loop variables of autograph's `for`.

`shuffle` is TensorFlow's: a buffer of `buffer_size` elements, each draw replaced by the
next element, a new order on every pass (`reshuffle_each_iteration=True`), reproducible
from its seeds (`seed` and the global seed, as random ops). A data set made inside a traced
function starts its passes again on every call, as the same data set made anew by each
eager call does. `map` and `filter` functions are converted by autograph (when it is
imported) and traced once, on the element signature. `prefetch` does nothing: elements
are computed when the loop asks for them.
"""
import copy
import itertools
import threading

import numpy as np

from . import context
from . import dtypes
from . import nest
from .control_flow import cond, while_loop
from .function import Function, TensorSpec
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

    Subclasses give `element_spec`, `_cardinality` and either random access (`_begin`,
    `_size`, `_get`) or `_start`/`_next`.
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
        """A copy with pass counters (shuffles) and generator iterators of its own, at the
        same point; tensors and traced functions are shared (they never change)."""
        clone = copy.copy(self)
        memo[id(self)] = clone
        for key, value in vars(self).items():
            if any(isinstance(v, (Dataset, data_ops.ShuffleState))
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

    # -- passes: random access gives a cursor ------------------------------------------
    def _start(self):
        ctx = self._begin()
        return (ctx, _int64(self._size(ctx)), _int64(0))

    def _next(self, state):
        ctx, n, i = state
        valid = i < n
        element = self._get(ctx, i, valid)
        return (ctx, n, i + 1), valid, _conform(valid, element, self.element_spec, self)

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


class _FromGenerator(Dataset):
    """A Python generator read through py_function: each pass calls `generator(*args)`; its
    iterators are kept here by handle (an int64 loop value) until they finish."""
    what = "from_generator"

    _LIVE = 64           # iterators kept at most (a pass left by `break` never finishes)

    def __init__(self, generator, signature, args):
        if not callable(generator):
            raise TypeError(f"from_generator needs a callable that returns an iterator, got "
                            f"{generator!r}")
        self.generator = generator
        self.args = () if args is None else tuple(convert_to_tensor(a) for a in args)
        self.element_spec = signature
        self.specs = nest.flatten(signature)
        self._iterators = {}
        self._handles = itertools.count(1)
        self._lock = threading.Lock()
        name = getattr(generator, "__qualname__", type(generator).__name__)
        self._name = f"Dataset.from_generator({name})"

    def __deepcopy__(self, memo):
        clone = copy.copy(self)
        clone._iterators, clone._handles = {}, itertools.count(1)
        clone._lock = threading.Lock()
        return clone

    def _start(self):
        handle = logging_ops.py_function(_named(self._new_iterator, f"{self._name}: start"),
                                         list(self.args), dtypes.int64)
        return (array_ops.reshape(handle, []),)

    def _next(self, state):
        handle, = state
        outs = logging_ops.py_function(_named(self._pull, f"{self._name}: next"), [handle],
                                       [dtypes.bool_] + [s.dtype for s in self.specs])
        has = array_ops.reshape(outs[0], [])
        element = nest.pack_sequence_as(self.element_spec, list(outs[1:]))
        return state, has, _conform(has, element, self.element_spec, self)

    def _new_iterator(self, *args):
        iterator = iter(self.generator(*[a.numpy() for a in args]))
        with self._lock:
            handle = next(self._handles)
            self._iterators[handle] = iterator
            live = [h for h, it in self._iterators.items() if it is not None]
            for old in live[:-self._LIVE]:
                self._iterators[old] = None           # dropped: see _pull
        return np.asarray(handle, np.int64)

    def _pull(self, handle):
        handle = int(handle)
        with self._lock:
            if handle not in self._iterators:
                return self._ended()
            iterator = self._iterators[handle]
        if iterator is None:
            raise RuntimeError(f"{self._name}: more than {self._LIVE} passes over it are "
                               f"unfinished; the oldest was dropped and cannot go on")
        try:
            value = next(iterator)
        except StopIteration:
            with self._lock:
                self._iterators.pop(handle, None)
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

    def _start(self):
        if self.random_access:
            return Dataset._start(self)
        return tuple(d._start() for d in self.datasets)

    def _next(self, state):
        if self.random_access:
            return Dataset._next(self, state)
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

    def _start(self):
        return Dataset._start(self) if self.random_access else self.source._start()

    def _next(self, state):
        if self.random_access:
            return Dataset._next(self, state)
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

    def _start(self):
        return self.source._start()

    def _next(self, state):
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

    def _start(self):
        if self.random_access:
            return Dataset._start(self)
        return (_int64(0), self.source._start())

    def _next(self, state):
        if self.random_access:
            return Dataset._next(self, state)
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

    def _start(self):
        if self.random_access:
            return Dataset._start(self)
        return (self.count, self.source._start())

    def _next(self, state):
        if self.random_access:
            return Dataset._next(self, state)

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

    def _start(self):
        return (_int64(1), self.source._start())

    def _next(self, state):
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

    def _start(self):
        return Dataset._start(self) if self.random_access else self.source._start()

    def _next(self, state):
        if self.random_access:
            return Dataset._next(self, state)

        k, rows, state, _ = _fill(self.source, state, _empty_rows(self.source.element_spec),
                                  _int64(0), _bool(True), self.size, "batch")
        has = k >= self.size if self.drop else k > 0
        rows = rows if self.drop else [r[:k] for r in rows]
        element = nest.pack_sequence_as(self.source.element_spec, rows)
        return state, has, _conform(has, element, self.element_spec, self)


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

    def _start(self):
        return (self.source._start(), _empty_rows(self.element_spec), _int64(0), _int64(0))

    def _next(self, state):
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
        if reshuffle and not context.executing_eagerly():
            data_ops.shuffle_reset(self.state)     # each run of this graph: a new data set

    def _pass_seed(self):
        if self.state.reshuffle:
            return data_ops.pass_seed(self.state)
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

    def _start(self):
        if self.random_access:
            return Dataset._start(self)
        return (self._pass_seed(), _int64(0), _int64(0),
                _empty_rows(self.element_spec), self.source._start(), _bool(True))

    def _next(self, state):
        if self.random_access:
            return Dataset._next(self, state)
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


def _fill(source, inner, rows, count, more, capacity, what):
    """Pull elements of `source` (from state `inner`) into the buffers `rows` (one per
    component, `count` rows used) until they hold `capacity` or the source has ended (`more`
    false); returns (count, rows, inner, more)."""
    def filling(count, rows, inner, more):
        return math_ops.logical_and(more, count < capacity)

    def pull(count, rows, inner, more):
        inner, has, element = source._next(inner)
        rows = [data_ops.buffer_put(r, count, x, has, capacity, what)
                for r, x in zip(rows, nest.flatten(element))]
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
