"""DTypes, TensorShapes, dtype promotion and the tensor operators, eagerly and traced.

Promotion between tensors (and numpy values) follows JAX's lattice (every pair of dtypes:
tests/runtime/test_promotion.py); Python scalars and lists are weakly typed as in
TensorFlow and JAX: they take the other operand's dtype unless their kind is higher (a
float meeting ints gives float32), and on their own they get TensorFlow's defaults
(float32, int32, int64 for big ints, bool).
"""
import operator

import numpy as np
import pytest

import runtime as rt
from op_testing import ARRAY_OPS, MATH_OPS, MODES, NN_OPS, RANDOM_OPS, case, sample
from runtime.ops import array_ops, math_ops
from runtime.shapes import broadcast

F16, F32, F64, C64 = np.float16, np.float32, np.float64, np.complex64
I8, I16, I32, I64, U8, U16, U64 = (np.int8, np.int16, np.int32, np.int64, np.uint8,
                                   np.uint16, np.uint64)
BOOL = np.bool_


def _name(dtype):
    return np.dtype(dtype).name


# -- DType -------------------------------------------------------------------------------------

@pytest.mark.parametrize("value,expected", [
    (np.float32, rt.float32), (np.dtype("int64"), rt.int64), ("float16", rt.float16),
    ("bool", rt.bool_), ("bool_", rt.bool_), ("double", rt.float64), ("half", rt.float16),
    (float, rt.float32), (int, rt.int32), (bool, rt.bool_), (complex, rt.complex64),
    (rt.uint8, rt.uint8), (np.bool_, rt.bool_), ("int8", rt.int8), ("float", rt.float32),
    ("int", rt.int32)])
def test_as_dtype(value, expected):
    assert rt.as_dtype(value) is expected


@pytest.mark.parametrize("value", ["float128x", np.str_, object, "object", None])
def test_as_dtype_rejects(value):
    with pytest.raises(TypeError):
        rt.as_dtype(value)


def test_dtype_properties():
    assert rt.float16.is_floating and not rt.float16.is_integer
    assert rt.uint8.is_integer and rt.uint8.is_unsigned and not rt.int8.is_unsigned
    assert rt.bool_.is_bool and not rt.bool_.is_numeric
    assert rt.complex64.is_complex and rt.complex64.is_numeric
    assert (rt.int8.min, rt.int8.max) == (-128, 127)
    assert rt.float16.max == 65504.0
    assert rt.bool_.name == "bool" and rt.float32.name == "float32"
    assert repr(rt.bool_) == "rt.bool_" and str(rt.float32) == "rt.float32"
    assert rt.int32.short_name == "i32" and rt.bool_.short_name == "bool"
    assert rt.float32.as_numpy_dtype is np.float32 and rt.float32.np == np.dtype("float32")


def test_dtype_equality_and_hash():
    assert rt.float32 == np.float32 and rt.float32 == "float32" and rt.float32 != rt.float64
    assert rt.int32 != "not a dtype" and not (rt.int32 == object())
    assert {rt.float32: 1}[rt.as_dtype("float32")] == 1


# -- TensorShape ---------------------------------------------------------------------------------

def test_tensor_shape_queries():
    s = rt.TensorShape([None, 3])
    assert s.rank == s.ndims == 2 and s.dims == (None, 3) and len(s) == 2
    assert not s.is_fully_defined() and s.num_elements() is None
    assert s.as_list() == [None, 3] and list(s) == [None, 3]
    assert s[1] == 3 and s[1:] == rt.TensorShape([3])
    assert rt.TensorShape([2, 3]).num_elements() == 6 and rt.TensorShape([]).num_elements() == 1
    assert rt.TensorShape(4) == [4] and rt.TensorShape((2, 3)) == (2, 3)
    assert rt.TensorShape(np.array([2, 3])) == [2, 3]


def test_unknown_rank_shape():
    s = rt.TensorShape(None)
    assert s.rank is None and s.dims is None and not s.is_fully_defined() and not s
    assert s[0] is None and s[1:] == rt.TensorShape(None)
    with pytest.raises(ValueError):
        s.as_list()
    with pytest.raises(ValueError):
        len(s)


@pytest.mark.parametrize("dims,text,short", [
    ([None, 3], "(None, 3)", "[?,3]"), ([], "()", "[]"), ([5], "(5,)", "[5]"),
    (None, "<unknown>", "[*]")])
def test_tensor_shape_text(dims, text, short):
    assert str(rt.TensorShape(dims)) == text and rt.TensorShape(dims).short() == short


@pytest.mark.parametrize("a,b,compatible,merged", [
    ([None, 3], [2, 3], True, [2, 3]), ([None, 3], [2, 4], False, None),
    (None, [2, 3], True, [2, 3]), ([2], [2, 1], False, None), ([None], [None], True, [None]),
    ([], [], True, [])])
def test_compatibility_and_merge(a, b, compatible, merged):
    a, b = rt.TensorShape(a), rt.TensorShape(b)
    assert a.is_compatible_with(b) is compatible and b.is_compatible_with(a) is compatible
    if compatible:
        assert a.merge_with(b) == rt.TensorShape(merged)
    else:
        with pytest.raises(ValueError, match="not compatible"):
            a.merge_with(b)


def test_most_specific_compatible_shape_and_subshape():
    a, b = rt.TensorShape([2, 3]), rt.TensorShape([4, 3])
    assert a.most_specific_compatible_shape(b) == [None, 3]
    assert a.most_specific_compatible_shape([2]) == rt.TensorShape(None)
    assert a.is_subshape_of([None, 3]) and not rt.TensorShape([None, 3]).is_subshape_of(a)
    assert a.concatenate([4]) == [2, 3, 4] and (a + rt.TensorShape(None)).rank is None


@pytest.mark.parametrize("dims,error", [([-1], ValueError), ([2.5], TypeError),
                                        (["a"], TypeError)])
def test_tensor_shape_rejects(dims, error):
    with pytest.raises(error):
        rt.TensorShape(dims)


@pytest.mark.parametrize("a,b,expected", [
    ([2, 3], [3], [2, 3]), ([2, 1], [1, 3], [2, 3]), ([], [2, 3], [2, 3]),
    ([None, 3], [3], [None, 3]), ([None, 1], [1, 4], [None, 4]), ([None], [1], [None]),
    ([None], [5], [5]), ([None], [None], [None]), (None, [3], None), ([1], [], [1])])
def test_broadcast(a, b, expected):
    assert broadcast(a, b) == rt.TensorShape(expected)
    assert broadcast(b, a) == rt.TensorShape(expected)


def test_broadcast_incompatible_names_the_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3\) and \(4,\)"):
        broadcast([2, 3], [4])


# -- promotion between tensors and numpy values (every pair of dtypes: test_promotion.py) ------

PROMOTION_CASES = [
    case("int32*float32", operator.mul, [sample((2,), I32), sample((2,), F32, seed=1)],
         np.multiply, F32),
    case("uint8*int8", operator.mul, [sample((2,), U8), sample((2,), I8, seed=1)],
         np.multiply),
    case("float16*float64", operator.mul, [sample((2,), F16), sample((2,), F64, seed=1)],
         np.multiply),
    case("int32<float32", operator.lt, [sample((3,), I32), sample((3,), F32, seed=1)],
         np.less),
    case("tensor+numpy-array", lambda x: x + np.array([1, 2, 3], I8), [sample((3,), I32)],
         lambda x: x + np.array([1, 2, 3], I8)),
    case("numpy-array+tensor", lambda x: np.array([1, 2, 3], I64) + x, [sample((3,), I32)],
         lambda x: np.array([1, 2, 3], I64) + x),
    case("numpy-scalar-is-strong", lambda x: x + np.float32(1), [sample((3,), F16)],
         lambda x: x + np.float32(1)),
    case("numpy-int64-scalar-is-strong", lambda x: x * np.int64(2), [sample((3,), I32)],
         lambda x: x * np.int64(2)),
    case("numpy-scalar-on-the-left", lambda x: np.float32(2) * x, [sample((3,), I32)],
         lambda x: np.float32(2) * x, F32),            # numpy: float64
    case("numpy-float64-scalar-is-strong", lambda x: x * np.float64(2), [sample((3,), I32)],
         lambda x: x * np.float64(2)),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", PROMOTION_CASES)
def test_promotion_between_tensors(check, mode):
    check(mode)


# -- weak Python scalars ---------------------------------------------------------------------------

def _weak_case(text, fn, dtype, want_dtype, ref=None):
    """`fn(x)` on x of `dtype` has `want_dtype`; values as numpy computes them in float64."""
    def reference(x):
        return (ref or fn)(x.astype(F64) if np.dtype(dtype).kind != "b" else x)
    return case(f"{_name(dtype)}:{text}", fn, [sample((2, 3), dtype, "positive")], reference,
                want_dtype)


WEAK_CASES = [
    _weak_case("x+1", lambda x: x + 1, I32, I32),
    _weak_case("1+x", lambda x: 1 + x, I32, I32),
    _weak_case("x*2.5", lambda x: x * 2.5, F16, F16),
    _weak_case("2.5*x", lambda x: 2.5 * x, F16, F16),
    _weak_case("x*2.5", lambda x: x * 2.5, I32, F32),
    _weak_case("x*2.5", lambda x: x * 2.5, I64, F32),
    _weak_case("x+1", lambda x: x + 1, BOOL, I32, lambda x: x.astype(I32) + 1),
    _weak_case("x&True", lambda x: x & True, BOOL, BOOL),
    _weak_case("x+1", lambda x: x + 1, U8, U8),
    _weak_case("x-1", lambda x: x - 1, I8, I8),
    _weak_case("x+1", lambda x: x + 1, F64, F64),
    _weak_case("x/2", lambda x: x / 2, F16, F16),
    _weak_case("x/2", lambda x: x / 2, I32, F32),             # numpy: float64
    _weak_case("x//2", lambda x: x // 2, I32, I32),
    _weak_case("x%2.5", lambda x: x % 2.5, I32, F32),
    _weak_case("2-x", lambda x: 2 - x, I32, I32),
    _weak_case("2-x", lambda x: 2 - x, F16, F16),
    _weak_case("2**x", lambda x: 2 ** x, I32, I32),
    _weak_case("2.0**x", lambda x: 2.0 ** x, I32, F32),
    _weak_case("x**2", lambda x: x ** 2, F16, F16),
    _weak_case("[1,2,3]+x", lambda x: [1, 2, 3] + x, I32, I32),
    _weak_case("x*(1,2,3)", lambda x: x * (1, 2, 3), F16, F16),
    _weak_case("[1.5,2,3]+x", lambda x: [1.5, 2, 3] + x, I32, F32),
    _weak_case("x+1j", lambda x: x + 1j, F32, C64),
    _weak_case("x*1j", lambda x: x * 1j, F64, np.complex128),
    _weak_case("x<2", lambda x: x < 2, F16, BOOL),
    _weak_case("x==2.5", lambda x: x == 2.5, I32, BOOL),
    _weak_case("maximum(x,1)", lambda x: rt.maximum(x, 1), U8, U8, lambda x: np.maximum(x, 1)),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", WEAK_CASES)
def test_python_scalars_are_weak(check, mode):
    check(mode)


def test_python_scalar_too_big_for_the_tensor_dtype():
    with pytest.raises((TypeError, OverflowError)):
        rt.constant([1, 2], rt.int8) + 1000


@pytest.mark.parametrize("value,dtype", [
    (1.0, rt.float32), (1, rt.int32), ([1, 2], rt.int32), (True, rt.bool_),
    (2 ** 40, rt.int64), ([1, 2 ** 40], rt.int64), (-2 ** 31, rt.int32), (2 ** 31, rt.int64),
    ([1, 2.0], rt.float32), ([True, 1], rt.int32), ([[1.0], [2.0]], rt.float32),
    (1j, rt.complex64), ([], rt.float32), (np.float64(1), rt.float64),
    (np.array([1], I8), rt.int8), (np.array(1.0, F16), rt.float16), (np.int64(3), rt.int64)])
@pytest.mark.parametrize("mode", MODES)
def test_constant_default_dtypes(value, dtype, mode):
    def make():
        return rt.constant(value), rt.convert_to_tensor(value)
    results = make() if mode == "eager" else rt.function(make)()
    for t in results:
        assert t.dtype == dtype
        assert_values_equal(t.numpy(), np.asarray(value, dtype.np))


def assert_values_equal(got, want):
    np.testing.assert_array_equal(np.asarray(got), want)
    assert np.asarray(got).dtype == want.dtype


def test_constant_with_dtype_and_shape():
    assert rt.constant(1, dtype=rt.float16).dtype == rt.float16
    np.testing.assert_array_equal(rt.constant(5, shape=[2, 2]).numpy(), np.full((2, 2), 5))
    np.testing.assert_array_equal(rt.constant([1, 2, 3, 4], shape=(2, 2)).numpy(),
                                  [[1, 2], [3, 4]])
    with pytest.raises(TypeError):
        rt.convert_to_tensor(rt.constant(1), dtype=rt.float32)
    with pytest.raises(TypeError):
        rt.convert_to_tensor(np.array([1.5]), dtype=rt.int32)


# -- operators ------------------------------------------------------------------------------------

BINARY_OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul,
                    "/": operator.truediv, "//": operator.floordiv, "%": operator.mod,
                    "**": operator.pow, "<": operator.lt, "<=": operator.le, ">": operator.gt,
                    ">=": operator.ge, "==": operator.eq, "!=": operator.ne}
BITWISE_OPERATORS = {"&": operator.and_, "|": operator.or_, "^": operator.xor}


def _operator_args(symbol, dtype):
    kinds = {"/": "nonzero", "//": "nonzero", "%": "nonzero"}
    y_kind = "small" if symbol == "**" else kinds.get(symbol, "any")
    x_kind = "positive" if symbol == "**" and np.dtype(dtype).kind == "f" else "any"
    return [sample((2, 3), dtype, x_kind, seed=1), sample((3,), dtype, y_kind, seed=2)]


OPERATOR_CASES = [
    case(f"x{symbol}y-{_name(dt)}", fn, _operator_args(symbol, dt), fn,
         F32 if symbol == "/" else None)         # int32 / int32: float32 (numpy: float64)
    for symbol, fn in BINARY_OPERATORS.items() for dt in (I32, F32)
] + [
    case(f"x{symbol}y-{_name(dt)}", fn, _operator_args(symbol, dt), fn)
    for symbol, fn in BITWISE_OPERATORS.items() for dt in (BOOL, I32, U8)
] + [
    case(f"{symbol}x-{_name(dt)}", fn, [sample((2, 3), dt)], fn)
    for symbol, fn in [("-", operator.neg), ("abs", abs), ("+", operator.pos)]
    for dt in (I32, F32)
] + [
    case(f"~x-{_name(dt)}", operator.invert, [sample((2, 3), dt)], operator.invert)
    for dt in (BOOL, I32, U8)
] + [
    case("x@y", operator.matmul, [sample((2, 3)), sample((3, 2), seed=1)], operator.matmul),
    case("x@y-int", operator.matmul, [sample((2, 3), I32), sample((3,), I32, seed=1)],
         operator.matmul),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", OPERATOR_CASES)
def test_operators(check, mode):
    check(mode)


@pytest.mark.parametrize("symbol", ["+", "*", "<", "&"])
def test_operators_leave_unknown_types_to_python(symbol):
    op = {**BINARY_OPERATORS, **BITWISE_OPERATORS}[symbol]
    with pytest.raises(TypeError):
        op(rt.constant([1, 2]), object())
    with pytest.raises(TypeError):
        op(object(), rt.constant([1, 2]))


def test_equality_with_other_types_is_python_equality():
    x = rt.constant([1, 2])
    assert (x == None) is False and (x != "a") is True  # noqa: E711

# -- every op is covered by some table --------------------------------------------------------

def test_every_exported_op_is_listed_for_testing():
    """A new op in runtime/__init__.py must join one of the tables (op_testing lists)."""
    listed = set(MATH_OPS + ARRAY_OPS)
    exported = {name for name in dir(rt) if getattr(getattr(rt, name), "__module__", None)
                in (math_ops.__name__, array_ops.__name__) and callable(getattr(rt, name))}
    assert exported <= listed, sorted(exported - listed)
    assert set(vars(rt.nn)) - {"relu", "sigmoid", "tanh", "softplus"} == set(NN_OPS)
    assert set(vars(rt.random)) == set(RANDOM_OPS)
