"""Input pipelines (`rt.data`): in-memory data sets a Python `for` loop iterates.

    data = rt.data.Dataset.from_tensor_slices((features, labels))
    for x, y in data.shuffle(100, seed=1).batch(32):
        ...                        # x, y: tensors of up to 32 rows

Elements are eager tensors (constants of the graph when iterated while tracing: a
converted function unrolls a loop over a data set, so keep those small). A data set
made inside a traced function from its symbolic arguments yields slices of them (graph
operations); their first dimension must be known while tracing. `shuffle`
is TensorFlow's: a buffer of `buffer_size` elements, each draw replaced by the next
element; each pass draws anew, reproducibly from `seed` (or the global seed).
"""
import numpy as np

from . import nest
from .ops import array_ops
from .ops import random_ops
from .ops.registry import constant
from .tensor import Tensor, is_symbolic

__all__ = ["Dataset"]


class Dataset:
    """A finite sequence of elements (nests of arrays), iterated as tensors."""

    def __init__(self, elements, length):
        self._elements = elements      # () -> iterator over nests of numpy arrays
        self._length = length

    @staticmethod
    def from_tensor_slices(tensors):
        """The slices of `tensors` (a nest of arrays sharing their first dimension)."""
        arrays = [t if is_symbolic(t) else np.asarray(t.numpy() if isinstance(t, Tensor) else t)
                  for t in nest.flatten(tensors)]
        if not arrays or any(a.ndim == 0 for a in arrays):
            raise ValueError("from_tensor_slices needs arrays with a first dimension")
        for a in arrays:
            if is_symbolic(a) and a.shape[0] is None:
                raise ValueError(
                    f"from_tensor_slices: the first dimension of {a.name} is unknown while "
                    f"tracing (shape {a.shape}); a data set of a function's arguments needs "
                    f"it known (trace with concrete shapes, or iterate rt.range(rt.shape(t)"
                    f"[0]) and index)")
        n = len(arrays[0])
        if any(len(a) != n for a in arrays):
            raise ValueError(f"from_tensor_slices: first dimensions differ: "
                             f"{[a.shape for a in arrays]}")

        def elements():
            for i in range(n):
                yield nest.pack_sequence_as(tensors, [a[i] for a in arrays])
        return Dataset(elements, n)

    def shuffle(self, buffer_size, seed=None):
        """The elements in a random order (see the module); a new order each pass."""
        if buffer_size < 1:
            raise ValueError(f"shuffle: buffer_size must be positive, got {buffer_size}")
        if seed is None:
            seed = random_ops.get_global_seed()
        passes = np.random.default_rng(seed)
        source = self._elements

        def elements():
            rng = np.random.default_rng(passes.integers(2 ** 63))
            buffer = []
            for element in source():
                buffer.append(element)
                if len(buffer) == buffer_size:
                    yield _take(buffer, rng)
            while buffer:
                yield _take(buffer, rng)
        return Dataset(elements, self._length)

    def batch(self, batch_size, drop_remainder=False):
        """Consecutive elements stacked in groups of `batch_size` (the last may be short)."""
        if batch_size < 1:
            raise ValueError(f"batch: batch_size must be positive, got {batch_size}")
        source = self._elements

        def elements():
            group = []
            for element in source():
                group.append(element)
                if len(group) == batch_size:
                    yield _stack(group)
                    group = []
            if group and not drop_remainder:
                yield _stack(group)
        full, rest = divmod(self._length, batch_size)
        return Dataset(elements, full + (1 if rest and not drop_remainder else 0))

    def __iter__(self):
        for element in self._elements():
            yield nest.map_structure(lambda v: v if is_symbolic(v) else constant(v), element)

    def __len__(self):
        return self._length

    def __repr__(self):
        return f"<rt.data.Dataset of {self._length} elements>"


def _take(buffer, rng):
    """Remove and return a random element of `buffer` (its last element fills the hole)."""
    i = int(rng.integers(len(buffer)))
    buffer[i], buffer[-1] = buffer[-1], buffer[i]
    return buffer.pop()


def _stack(group):
    def stack(*rows):
        if any(is_symbolic(r) for r in rows):
            return array_ops.stack(list(rows))
        return np.stack(rows)
    return nest.map_structure(stack, *group)
