"""DType objects and dtype promotion: the one rule every op's operands follow.

A `DType` wraps a numpy dtype. Promotion is JAX's type lattice (PyTorch agrees where both
have the types), not numpy's: an integer meeting a float takes the float's dtype
(int32 + float32 is float32, int64 + float16 is float16), uint8 + int8 is int16, and
uint64 with a signed integer is the default float. Python numbers are *weakly typed*:
`x_int32 + 1` stays int32, `x_float16 * 2.5` stays float16, and a Python float meeting an
integer tensor gives the default float, float32 (as does a float function of integers:
`rt.sqrt(x_int32)`, `x_int32 / y_int32`, `rt.reduce_mean(x_int32)`).
"""
import numpy as np

__all__ = ["DType", "as_dtype", "result_type", "lattice_result_type"]


class DType:
    """A tensor element type, e.g. `rt.float32`."""

    __slots__ = ("_np", "name")

    def __init__(self, np_dtype):
        self._np = np.dtype(np_dtype)
        self.name = "bool" if self._np == np.bool_ else self._np.name

    @property
    def as_numpy_dtype(self):
        """The numpy scalar type (`np.float32` for `rt.float32`)."""
        return self._np.type

    @property
    def np(self):
        """The numpy dtype object."""
        return self._np

    @property
    def is_floating(self):
        """float16, float32, float64."""
        return self._np.kind == "f"

    @property
    def is_complex(self):
        """complex64, complex128."""
        return self._np.kind == "c"

    @property
    def is_integer(self):
        """Signed or unsigned integers."""
        return self._np.kind in "iu"

    @property
    def is_unsigned(self):
        """uint8 ... uint64."""
        return self._np.kind == "u"

    @property
    def is_bool(self):
        """bool."""
        return self._np.kind == "b"

    @property
    def is_numeric(self):
        """Integers, floats and complex numbers (not bool)."""
        return self._np.kind in "iufc"

    @property
    def min(self):
        """The smallest value (the most negative finite one for floats; False for bool)."""
        if self.is_floating:
            return float(np.finfo(self._np).min)
        if self.is_integer:
            return int(np.iinfo(self._np).min)
        return False

    @property
    def max(self):
        """The largest finite value (True for bool)."""
        if self.is_floating:
            return float(np.finfo(self._np).max)
        if self.is_integer:
            return int(np.iinfo(self._np).max)
        return True

    def of(self, xp):
        """This dtype in the array namespace `xp` (numpy's, CuPy's, array_api_strict's)."""
        return getattr(xp, self.name)

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


# -- the promotion lattice ----------------------------------------------------------------
# JAX's lattice (jax._src.dtypes._type_promotion_lattice, 'standard' promotion): each type
# and the types directly above it. "i*", "f*", "c*" are Python ints, floats and complex
# numbers (weak types): below every tensor type of their kind, so the tensor's dtype wins.
# A Python bool is the bool type. Two types promote to their least upper bound.

_LATTICE = {
    "bool": ["i*"],
    "i*": ["uint8", "int8"],
    "uint8": ["int16", "uint16"], "uint16": ["int32", "uint32"],
    "uint32": ["int64", "uint64"], "uint64": ["f*"],
    "int8": ["int16"], "int16": ["int32"], "int32": ["int64"], "int64": ["f*"],
    "f*": ["float16", "c*"], "float16": ["float32"], "float32": ["float64", "complex64"],
    "float64": ["complex128"],
    "c*": ["complex64"], "complex64": ["complex128"], "complex128": [],
}
_WEAK_NODE = {"b": "bool", "i": "i*", "f": "f*", "c": "c*"}
_WEAK_DEFAULT = {"i*": "int32", "f*": "float32", "c*": "complex64"}


def _upper_bounds(node):
    above = {node}
    for parent in _LATTICE[node]:
        above |= _upper_bounds(parent)
    return above


def _least_upper_bound(a, b):
    common = _ABOVE[a] & _ABOVE[b]
    return next(n for n in common if common <= _ABOVE[n])


_ABOVE = {node: frozenset(_upper_bounds(node)) for node in _LATTICE}
_JOIN = {(a, b): _least_upper_bound(a, b) for a in _LATTICE for b in _LATTICE}


def lattice_result_type(*operands):
    """The (dtype, weak) that operands promote to, as JAX's `lattice_result_type`.

    Each operand is a DType (a tensor or numpy value) or a pair (DType, kind): a value
    standing for a Python number of weak kind 'b', 'i', 'f' or 'c' (a Python scalar with
    the dtype it gets alone, or a traced tensor marked weak). Among strong operands the
    lattice decides; weak ones adapt to them (a join at a weak type gives that kind's
    default: int32, float32, complex64). `weak` is the result's kind when every operand is
    weak (their dtypes joined: `2 ** 40 + 1` is int64), else None: unlike JAX, a result
    from tensors is never weak (our eager tensors never are).
    """
    joined = own = kind = None
    strong = False
    for operand in operands:
        if type(operand) is DType:
            node, strong = operand.name, True
        else:
            dtype, weak = operand
            node = _WEAK_NODE[weak]
            own = dtype.name if own is None else _JOIN[own, dtype.name]
            kind = max(kind or weak, weak, key=_KIND_ORDER.index)
        joined = node if joined is None else _JOIN[joined, node]
    if joined is None:
        raise TypeError("lattice_result_type needs at least one operand")
    if not strong:
        return _BY_NAME[own], kind
    return _BY_NAME[_WEAK_DEFAULT.get(joined, joined)], None


def weak_result(kind, strong):
    """The dtype a weakly typed Python value of `kind` takes next to dtype `strong`."""
    return lattice_result_type((python_kind_dtype(kind), kind), strong)[0]


def python_kind_dtype(kind):
    """The dtype a Python number of weak kind `kind` gets on its own."""
    return {"b": bool_, "i": int32, "f": float32, "c": complex64}[kind]


def result_type(*dtypes):
    """The dtype strongly typed `dtypes` promote to (the lattice; see lattice_result_type)."""
    return lattice_result_type(*[as_dtype(d) for d in dtypes])[0]
