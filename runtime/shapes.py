"""TensorShape: a static shape whose rank or dimensions may be unknown (None).

Eager tensors always have fully known shapes; symbolic tensors built while
tracing may have unknown dimensions (a placeholder of shape [None, 3]) or an
unknown rank. `broadcast` implements numpy broadcasting over such shapes.
"""

__all__ = ["TensorShape", "as_shape", "broadcast"]


class TensorShape:
    """An immutable, possibly partially known shape."""

    __slots__ = ("_dims",)

    def __init__(self, dims):
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        else:
            if isinstance(dims, int):
                dims = (dims,)
            self._dims = tuple(_as_dim(d) for d in dims)

    # -- queries -------------------------------------------------------------
    @property
    def dims(self):
        """The dimensions as a tuple (None for unknown ones), or None for an unknown rank."""
        return self._dims

    @property
    def rank(self):
        """The number of dimensions, or None when unknown (also `ndims`)."""
        return None if self._dims is None else len(self._dims)

    ndims = rank

    def is_fully_defined(self):
        """Whether the rank and every dimension are known."""
        return self._dims is not None and None not in self._dims

    def num_elements(self):
        """The number of elements, or None unless fully defined."""
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d
        return n

    def as_list(self):
        """The dimensions as a list (None for unknown ones); an unknown rank raises ValueError."""
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def as_tuple(self):
        """The dimensions as a tuple (None for unknown ones), or None for an unknown rank."""
        return self._dims

    # -- relations -----------------------------------------------------------
    def is_compatible_with(self, other):
        """Whether the two shapes could be the same: equal ranks and equal dimensions
        where both are known (an unknown rank is compatible with every shape)."""
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def merge_with(self, other):
        """The most specific shape compatible with both; ValueError if incompatible."""
        other = as_shape(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def most_specific_compatible_shape(self, other):
        """The most specific shape that both shapes are instances of (the join)."""
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return TensorShape(None)
        return TensorShape([a if a == b else None for a, b in zip(self._dims, other._dims)])

    def is_subshape_of(self, general):
        """True if every known dim of `general` equals the same dim here."""
        general = as_shape(general)
        if general._dims is None:
            return True
        if self._dims is None or len(self._dims) != len(general._dims):
            return False
        return all(g is None or g == s for s, g in zip(self._dims, general._dims))

    # -- python protocol -----------------------------------------------------
    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank.")
        return len(self._dims)

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            if isinstance(key, slice):
                return TensorShape(None)
            return None
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def __eq__(self, other):
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self):
        return hash(self._dims)

    def __add__(self, other):
        return self.concatenate(other)

    def concatenate(self, other):
        """This shape's dimensions followed by `other`'s (also `shape + other`)."""
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def __bool__(self):
        return self._dims is not None

    def __repr__(self):
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({list(self._dims)})"

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]},)"
        return "(" + ", ".join(str(d) for d in self._dims) + ")"

    def short(self):
        """Compact form for graph text: [2,3], [?,3], [*] for unknown rank."""
        if self._dims is None:
            return "[*]"
        return "[" + ",".join("?" if d is None else str(d) for d in self._dims) + "]"


def _as_dim(d):
    if d is None:
        return None
    if hasattr(d, "value") and not isinstance(d, int):   # Dimension-like objects
        d = d.value
    try:
        d = int(d.__index__())
    except AttributeError:
        raise TypeError(f"Dimension must be an int or None, got {d!r}") from None
    if d < 0:
        raise ValueError(f"Dimension {d} must be >= 0")
    return d


def as_shape(shape):
    if isinstance(shape, TensorShape):
        return shape
    return TensorShape(shape)


def broadcast(a, b):
    """Numpy broadcasting of two static shapes; ValueError when incompatible."""
    a, b = as_shape(a), as_shape(b)
    if a._dims is None or b._dims is None:
        return TensorShape(None)
    x, y = a._dims, b._dims
    n = max(len(x), len(y))
    x = (1,) * (n - len(x)) + x
    y = (1,) * (n - len(y)) + y
    out = []
    for i, j in zip(x, y):
        if i == 1:
            out.append(j)
        elif j == 1:
            out.append(i)
        elif i is None:
            out.append(j)
        elif j is None or i == j:
            out.append(i)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting: {a} and {b}")
    return TensorShape(out)
