"""DType objects and dtype promotion.

A `DType` wraps a numpy dtype. Promotion follows numpy's rules between tensors,
while Python scalars are *weakly typed* (as in TensorFlow and JAX): `x_int32 + 1`
stays int32, `x_float16 * 2.5` stays float16, and only a Python float meeting an
integer or bool tensor changes kind (to the default float, float32).
"""
import numpy as np

__all__ = ["DType", "as_dtype", "result_type"]


class DType:
    """A tensor element type, e.g. `rt.float32`."""

    __slots__ = ("_np", "name")

    def __init__(self, np_dtype):
        self._np = np.dtype(np_dtype)
        self.name = "bool" if self._np == np.bool_ else self._np.name

    @property
    def as_numpy_dtype(self):
        return self._np.type

    @property
    def np(self):
        """The numpy dtype object."""
        return self._np

    @property
    def is_floating(self):
        return self._np.kind == "f"

    @property
    def is_complex(self):
        return self._np.kind == "c"

    @property
    def is_integer(self):
        return self._np.kind in "iu"

    @property
    def is_unsigned(self):
        return self._np.kind == "u"

    @property
    def is_bool(self):
        return self._np.kind == "b"

    @property
    def is_numeric(self):
        return self._np.kind in "iufc"

    @property
    def min(self):
        if self.is_floating:
            return float(np.finfo(self._np).min)
        if self.is_integer:
            return int(np.iinfo(self._np).min)
        return False

    @property
    def max(self):
        if self.is_floating:
            return float(np.finfo(self._np).max)
        if self.is_integer:
            return int(np.iinfo(self._np).max)
        return True

    @property
    def short_name(self):
        """Compact name used in the text form of graphs: f32, i32, bool."""
        return _SHORT.get(self.name, self.name)

    def __eq__(self, other):
        if isinstance(other, DType):
            return self._np == other._np
        try:
            return self._np == as_dtype(other)._np
        except TypeError:
            return False

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self._np)

    def __repr__(self):
        return "rt." + ("bool_" if self.name == "bool" else self.name)

    __str__ = __repr__


_SHORT = {
    "float16": "f16", "float32": "f32", "float64": "f64",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "complex64": "c64", "complex128": "c128",
}

float16 = DType(np.float16)
float32 = DType(np.float32)
float64 = DType(np.float64)
int8 = DType(np.int8)
int16 = DType(np.int16)
int32 = DType(np.int32)
int64 = DType(np.int64)
uint8 = DType(np.uint8)
uint16 = DType(np.uint16)
uint32 = DType(np.uint32)
uint64 = DType(np.uint64)
complex64 = DType(np.complex64)
complex128 = DType(np.complex128)
bool_ = DType(np.bool_)

_ALL = [float16, float32, float64, int8, int16, int32, int64, uint8, uint16,
        uint32, uint64, complex64, complex128, bool_]
_BY_NP = {d.np: d for d in _ALL}
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update({"bool_": bool_, "float": float32, "int": int32, "double": float64,
                 "half": float16})


def as_dtype(value):
    """Return the `DType` for a DType, numpy dtype or type, or a name like 'float32'."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        found = _BY_NAME.get(value)
        if found is None:
            raise TypeError(f"Unknown dtype name {value!r}")
        return found
    if value is float:
        return float32
    if value is int:
        return int32
    if value is bool:
        return bool_
    if value is complex:
        return complex64
    if value is None:            # numpy reads None as float64; a missing dtype is an error
        raise TypeError("Cannot interpret None as a dtype")
    try:
        np_dtype = np.dtype(value)
    except TypeError:
        raise TypeError(f"Cannot interpret {value!r} as a dtype") from None
    found = _BY_NP.get(np_dtype)
    if found is None:
        raise TypeError(f"Unsupported dtype {np_dtype} (supported: "
                        f"{', '.join(d.name for d in _ALL)})")
    return found


def python_scalar_dtype(value):
    """The dtype a Python scalar gets on its own (TensorFlow defaults)."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int32 if -2**31 <= value < 2**31 else int64
    if isinstance(value, float):
        return float32
    if isinstance(value, complex):
        return complex64
    raise TypeError(f"Not a Python scalar: {value!r}")


KIND_ORDER = _KIND_ORDER = "biufc"


def weak_kind(value):
    """The kind ('b', 'i', 'f', 'c') of a Python scalar or nested list of them, else None."""
    if isinstance(value, bool):
        return "b"
    if isinstance(value, int):
        return "i"
    if isinstance(value, float):
        return "f"
    if isinstance(value, complex):
        return "c"
    if isinstance(value, (list, tuple)) and value:
        kinds = [weak_kind(v) for v in value]
        if None in kinds:
            return None
        return max(kinds, key=_KIND_ORDER.index)
    return None


def weak_result(kind, strong):
    """The dtype a weakly typed Python value of `kind` takes next to dtype `strong`."""
    strong_kind = strong.np.kind
    if _KIND_ORDER.index(kind) <= _KIND_ORDER.index(strong_kind) or (
            kind == "i" and strong_kind == "u"):
        return strong
    if kind == "i":          # int scalar meets a bool tensor
        return int32
    if kind == "f":          # float scalar meets a bool/int tensor
        return float32
    return complex128 if strong == float64 else complex64


def result_type(*dtypes):
    """Numpy promotion between strongly typed dtypes."""
    return as_dtype(np.result_type(*[as_dtype(d).np for d in dtypes]))
