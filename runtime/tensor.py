"""Tensors: eager ones wrap an array of their device, symbolic ones name an op's output.

Both share `Tensor`, whose Python operators (`+`, `@`, `t[...]`, comparisons)
are installed by `runtime.ops.overloads`, so they dispatch through the one op
registry in either mode.
"""
import numpy as np

from . import devices
from . import dtypes
from .shapes import TensorShape

__all__ = ["Tensor", "EagerTensor", "SymbolicTensor", "is_tensor", "is_symbolic"]


class Tensor:
    """Common base of eager and symbolic tensors: an n-dimensional array of one dtype.

    `.shape` (a `TensorShape`; dims may be None while tracing), `.dtype`, `.ndim`;
    operators `+ - * / // % ** @`, unary `- ~ abs`, elementwise comparisons, `& | ^`
    (logical on bool), `t[...]` (numpy basic slicing, plus tensor indices), `len(t)` and
    iteration over the first dimension. Eager tensors (`EagerTensor`) also have
    `.numpy()` and work with `bool()`, `int()`, `float()` and numpy functions; symbolic
    ones (`SymbolicTensor`, while tracing) have `.name` and `.graph`, and no value.
    """

    __slots__ = ("__weakref__",)
    __array_priority__ = 100     # numpy defers `ndarray + tensor` to Tensor.__radd__

    @property
    def ndim(self):
        """The number of dimensions (None when unknown while tracing)."""
        return self.shape.rank

    def get_shape(self):
        """The static shape, as `.shape`."""
        return self.shape

    def ref(self):
        """A hashable reference to this tensor (tensors hash by identity already)."""
        return self

    __hash__ = object.__hash__

    def __setitem__(self, key, value):
        raise TypeError("rt.Tensor objects are immutable; build a new tensor instead "
                        "(e.g. with rt.where or rt.concat).")


class EagerTensor(Tensor):
    """A tensor with a concrete value computed at once: a numpy array on cpu:0, an array of
    its device's library elsewhere (`runtime.devices`)."""

    __slots__ = ("_value", "_dtype")

    def __init__(self, value, dtype=None):
        # `value` must already be an array of a supported dtype.
        self._value = value
        self._dtype = dtype if dtype is not None else (
            dtypes.as_dtype(value.dtype) if type(value) is np.ndarray else devices.dtype_of(value))

    def _host(self):
        """The value as a numpy array (a copy when it lives on another device)."""
        value = self._value
        return value if type(value) is np.ndarray else devices.to_host(value)

    @property
    def device(self):
        """The name of the device holding the value ("cpu:0", "gpu:0", "strict:1")."""
        return devices.of(self._value).name

    @property
    def dtype(self):
        """The element type, a `DType`."""
        return self._dtype

    @property
    def shape(self):
        """The shape, fully known."""
        return TensorShape(self._value.shape)

    @property
    def ndim(self):
        """The number of dimensions."""
        return self._value.ndim

    @property
    def name(self):
        """Not defined for eager tensors (an AttributeError, as in TensorFlow)."""
        raise AttributeError("Tensor.name is meaningless when executing eagerly.")

    @property
    def op(self):
        """Not defined for eager tensors (an AttributeError, as in TensorFlow)."""
        raise AttributeError("Tensor.op is meaningless when executing eagerly.")

    def numpy(self):
        """The value as a new numpy array (a numpy scalar for 0-d tensors), copied to the
        host from the tensor's device.

        A copy, as in TensorFlow: writing into it never changes this tensor (or the
        variable it was read from).
        """
        value = self._value
        if type(value) is not np.ndarray:
            value = devices.to_host(value)          # a new array already
            return value[()] if value.ndim == 0 else value
        return value[()] if value.ndim == 0 else value.copy()

    def __array__(self, dtype=None, copy=None):
        """For numpy functions: the value itself, read-only, unless a copy is asked for
        (a device's value: copied to the host)."""
        value = self._value
        if type(value) is not np.ndarray:
            value = devices.to_host(value)          # a new array, read-only all the same
            if dtype is not None:
                return value.astype(dtype)
            value.flags.writeable = bool(copy)
            return value
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return value.astype(dtype)
        if copy:
            return value.copy()
        view = value.view()
        view.flags.writeable = False
        return view

    def __bool__(self):
        value = self._value
        return bool(value if type(value) is np.ndarray else devices.to_host(value))

    def __int__(self):
        value = self._value
        return int(value if type(value) is np.ndarray else devices.to_host(value))

    def __float__(self):
        value = self._value
        return float(value if type(value) is np.ndarray else devices.to_host(value))

    def __complex__(self):
        return complex(self._host())

    def __index__(self):
        if not (self._dtype.is_integer or self._dtype.is_bool) or self._value.ndim:
            raise TypeError(f"Only scalar integer tensors can be used as an index, "
                            f"got dtype {self._dtype.name} shape {self.shape}")
        return int(self._host())

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError("len() of a scalar (0-d) tensor")
        return self._value.shape[0]

    def __iter__(self):
        if self._value.ndim == 0:     # raised by iter() itself, as for a 0-d ndarray
            raise TypeError("Cannot iterate over a scalar (0-d) tensor")
        from .ops import registry
        if registry.tape_hooks:       # a recording gradient tape must see rows as ops
            return (self[i] for i in range(self._value.shape[0]))
        dtype, value = self._dtype, self._value
        if type(value) is not np.ndarray:             # rows stay on the device
            return (EagerTensor(value[i, ...], dtype) for i in range(value.shape[0]))
        return (EagerTensor(np.asarray(row), dtype) for row in value)

    def __str__(self):
        return str(self._host())

    def __repr__(self):
        return (f"<rt.Tensor: shape={self.shape}, dtype={self._dtype.name}, "
                f"numpy={numpy_repr(self._host())}>")

    def __format__(self, spec):
        if self._value.ndim == 0:
            return format(self._host()[()], spec)
        return format(str(self), spec)



class NoValueError(AttributeError, ValueError):
    """`.numpy()` of a symbolic tensor: a ValueError, and an AttributeError as in
    TensorFlow (whose graph tensors have no numpy attribute)."""


class SymbolicTensor(Tensor):
    """An output of an operation in a graph; has a static shape and dtype, no value."""

    # weak: None, or the kind ('b', 'i', 'f', 'c') of the Python number this tensor stands
    # for (a loop counter, a loop variable started from 0, `i * 2` of those): it adapts to
    # the dtype of the tensors it meets and prints as that number, as it would eagerly.
    __slots__ = ("op", "index", "_shape", "_dtype", "weak")

    def __init__(self, op, index, shape, dtype):
        self.op = op
        self.index = index
        self._shape = shape
        self._dtype = dtype
        self.weak = None

    @property
    def dtype(self):
        """The element type, a `DType`."""
        return self._dtype

    @property
    def shape(self):
        """The static shape: a `TensorShape` whose dims (or rank) may be None."""
        return self._shape

    def set_shape(self, shape):
        """Refine the static shape (it must be compatible with the inferred one)."""
        self._shape = self._shape.merge_with(shape)

    @property
    def graph(self):
        """The graph this tensor belongs to."""
        return self.op.graph

    @property
    def name(self):
        """`"op_name:output_index"`, unique in its graph."""
        return f"{self.op.name}:{self.index}"

    @property
    def device(self):
        """The name of the device the op making this tensor is placed on."""
        return devices.resolve(self.op.device).name

    def numpy(self):
        """Raises: a symbolic tensor has no value while tracing (use `rt.print`, or
        return the tensor from the function)."""
        raise NoValueError(f"Symbolic tensor {self.name} has no value while tracing; "
                           "its value exists only when the graph runs.")

    def _no_python_value(self, what):
        origin = self.op.origin
        where = f" (created at {origin.short()})" if origin is not None else ""
        from .traceback_utils import at_user_line, in_generated_code
        if what == "bool" and in_generated_code():
            advice = ("This code is converted, but a condition inside a comprehension, a "
                      "generator expression or a lambda stays Python: write it as an `if` "
                      "statement in a `for` loop, or use rt.where / rt.cond.")
        elif what == "bool":
            advice = ("Decorate the function with autograph.convert so Python control flow "
                      "becomes graph control flow, or use rt.cond / rt.while_loop.")
        else:
            advice = ("Its value exists only when the graph runs: keep it a tensor (index a "
                      "tensor, e.g. rt.stack(a_list)[i] or rt.gather, instead of a Python "
                      "list or tuple; rt.cast instead of int() or float()).")
        return TypeError(
            f"Cannot use the symbolic tensor {self.name}{where} as a Python {what} while "
            f"tracing a graph. {advice}{at_user_line(2)}")

    def __bool__(self):
        raise self._no_python_value("bool")

    def __int__(self):
        raise self._no_python_value("int")

    def __float__(self):
        raise self._no_python_value("float")

    def __index__(self):
        raise self._no_python_value("index")

    def __array__(self, dtype=None, copy=None):
        raise self._no_python_value("numpy array")

    def __len__(self):
        shape = self._shape
        if shape.rank is None or shape.rank == 0 or shape[0] is None:
            raise TypeError(f"len() of the symbolic tensor {self.name} is not known while "
                            f"tracing (shape {shape}); use rt.shape(t)[0].")
        return shape[0]

    def __iter__(self):
        shape = self._shape
        if shape.rank is None or shape.rank == 0 or shape[0] is None:
            from .traceback_utils import at_user_line
            raise TypeError(f"Cannot iterate over the symbolic tensor {self.name} of shape "
                            f"{shape} in Python while tracing (its length is known only "
                            f"when the graph runs); decorate the function with "
                            f"autograph.convert to turn the loop into a graph loop.{at_user_line(2)}")
        from .ops import array_ops
        return iter(array_ops.unstack(self, num=shape[0]))

    def __repr__(self):
        return f"<rt.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    def __str__(self):
        return f'Tensor("{self.name}", shape={self._shape}, dtype={self._dtype.name})'


def numpy_repr(value):
    """What TensorFlow shows after `numpy=` in a repr: `array([1, 2], dtype=int32)` or `2.0`."""
    # str of the numpy scalar: a float32 0.1 shows as 0.1 (its .item(), a Python float,
    # would show float64 digits).
    return np.array_repr(value) if value.ndim else str(value[()])


def is_tensor(x):
    """Whether `x` is a tensor (eager or symbolic; not a Variable or numpy array)."""
    return isinstance(x, Tensor)


def is_symbolic(x):
    return isinstance(x, SymbolicTensor)
