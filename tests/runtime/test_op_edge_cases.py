"""Edge cases of op semantics, eagerly and traced: weak Python scalars, integer division
and overflow, special float values, empty tensors, indexing corners, extreme logits,
the Python protocols of tensors, and the errors users get for bad arguments.

The reference is numpy; where TensorFlow documents other semantics a comment says which
one the runtime follows. Rows of `case` tables run eagerly and inside `rt.function`
(values, dtypes and the shapes inferred while tracing must agree; see op_testing).
Each test is a minimal reproduction of one corner.
"""
import numpy as np
import pytest

import runtime as rt
from op_testing import MODES, case, run, sample

F16, F32, F64 = np.float16, np.float32, np.float64
I8, I32, I64, U8 = np.int8, np.int32, np.int64, np.uint8
BOOL = np.bool_
INT_MIN = np.iinfo(I32).min
INT_MAX = np.iinfo(I32).max
SPEC = rt.TensorSpec

# Kernels are numpy's, which warns on 1/0, log(0), nan casts; those values are the point
# of several rows here.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def a(values, dtype):
    return np.array(values, dtype)


def const(value):
    """A reference function that ignores its inputs (expected values written out)."""
    return lambda *arrays: value


def raises_in(mode, fn, arrays, error, match=None):
    """`fn` on `arrays` raises `error` eagerly, or while tracing or running in a graph."""
    with pytest.raises(error, match=match) as info:
        run(fn, arrays, mode)
    return info.value


def line_of(fn):
    return f"test_op_edge_cases.py:{fn.__code__.co_firstlineno}"


# -- weak Python scalars, constants, comparisons --------------------------------------------------
# Python scalars are weakly typed (TensorFlow/JAX): they take the tensor's dtype unless
# their kind is higher; a float meeting ints gives float32. Expected values are written
# out, so the table does not depend on numpy's own promotion rules (NEP 50 or not).

WEAK_CASES = [
    case("int32+1", lambda x: x + 1, [a([1, 2], I32)], const(a([2, 3], I32))),
    case("int32*1.5", lambda x: x * 1.5, [a([1, 2], I32)], const(a([1.5, 3], F32))),
    case("float16+1.0", lambda x: x + 1.0, [a([1, 2], F16)], const(a([2, 3], F16))),
    case("int64+1", lambda x: x + 1, [a([1, 2], I64)], const(a([2, 3], I64))),
    case("int64+2**40", lambda x: x + 2 ** 40, [a([1], I64)], const(a([2 ** 40 + 1], I64))),
    case("float64*1.5", lambda x: x * 1.5, [a([1, 2], F64)], const(a([1.5, 3], F64))),
    case("uint8*2.5", lambda x: x * 2.5, [a([1, 2], U8)], const(a([2.5, 5], F32))),
    case("int32+True", lambda x: x + True, [a([1, 2], I32)], const(a([2, 3], I32))),
    case("float16+True", lambda x: x + True, [a([1, 2], F16)], const(a([2, 3], F16))),
    case("int32//2.0-floors", lambda x: x // 2.0, [a([-3, 3], I32)], const(a([-2, 1], F32))),
    case("2.5%int32", lambda x: 2.5 % x, [a([-3, 2], I32)], const(a([-0.5, 0.5], F32))),
    case("float16/3", lambda x: x / 3, [a([3, 6], F16)], const(a([1, 2], F16))),
    # true division of ints is float32, as in JAX and PyTorch (numpy: float64)
    case("int8/2-is-float32", lambda x: x / 2, [a([1, 3], I8)], const(a([0.5, 1.5], F32))),
    case("uint8-1-wraps", lambda x: x - 1, [a([0, 3], U8)], const(a([255, 2], U8))),
    # bool tensors: + and * are numpy's logical or/and (TensorFlow has no bool add)
    case("bool+bool", lambda x, y: x + y, [a([1, 0, 0], BOOL), a([1, 1, 0], BOOL)],
         const(a([1, 1, 0], BOOL))),
    case("bool*bool", lambda x, y: x * y, [a([1, 0, 0], BOOL), a([1, 1, 0], BOOL)],
         const(a([1, 0, 0], BOOL))),
    case("bool+True", lambda x: x + True, [a([1, 0], BOOL)], const(a([1, 1], BOOL))),
    case("bool*1.5", lambda x: x * 1.5, [a([1, 0], BOOL)], const(a([1.5, 0], F32))),
    case("bool/bool-is-float32", lambda x, y: x / y, [a([1, 0], BOOL), a([1, 1], BOOL)],
         const(a([1, 0], F32))),
    # comparisons: int tensors against floats compare values, not truncated values
    case("int32==1.5", lambda x: x == 1.5, [a([1, 2], I32)], const(a([0, 0], BOOL))),
    case("int32<2.5", lambda x: x < 2.5, [a([2, 3], I32)], const(a([1, 0], BOOL))),
    case("int32>=float32", lambda x, y: x >= y, [a([1, 2], I32), a([1.5, 1.5], F32)],
         const(a([0, 1], BOOL))),
    case("int32==float32", lambda x, y: x == y, [a([1, 2], I32), a([1.0, 2.5], F32)],
         const(a([1, 0], BOOL))),
    case("bool==1", lambda x: x == 1, [a([1, 0], BOOL)], const(a([1, 0], BOOL))),
    case("nan==nan", lambda x: x == x, [a([np.nan, 1], F32)], const(a([0, 1], BOOL))),
    case("nan!=nan", lambda x: x != x, [a([np.nan, 1], F32)], const(a([1, 0], BOOL))),
]

CONSTANT_CASES = [   # TensorFlow: Python int -> int32, float -> float32, numpy keeps its dtype
    case("constant(3)", lambda: rt.constant(3), [], const(I32(3))),
    case("constant(3.0)", lambda: rt.constant(3.0), [], const(F32(3))),
    case("constant(np.float32)", lambda: rt.constant(F32(2)), [], const(F32(2))),
    case("constant(int64-array)", lambda: rt.constant(np.array([1, 2], I64)), [],
         const(a([1, 2], I64))),
    case("constant(float64-array)", lambda: rt.constant(np.array([1.0, 2.5])), [],
         const(a([1, 2.5], F64))),
    case("constant(int-and-float-list)", lambda: rt.constant([1, 2.5]), [],
         const(a([1, 2.5], F32))),
    case("constant(3,float32)", lambda: rt.constant(3, rt.float32), [], const(F32(3))),
    case("constant(nan)", lambda: rt.constant(float("nan")), [], const(F32(np.nan))),
    case("constant(1e40)-overflows-to-inf", lambda: rt.constant(1e40), [],
         const(F32(np.inf))),
    case("convert_to_tensor(int64-array)", lambda: rt.convert_to_tensor(np.array([3], I64)),
         [], const(a([3], I64))),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", WEAK_CASES + CONSTANT_CASES)
def test_weak_scalars_and_constants(check, mode):
    check(mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [lambda x: x + 2 ** 40, lambda x: x < 2 ** 40,
                                lambda x: rt.equal(x, 2 ** 40), lambda x: x - 2 ** 31],
                         ids=["add", "less", "rt.equal", "sub"])
def test_python_int_too_big_for_int32_is_a_type_error(fn, mode):
    raises_in(mode, fn, [a([1, 2], I32)], TypeError, "int32")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [lambda x: x == 2 ** 40, lambda x: x != 2 ** 40],
                         ids=["==", "!="])
# `x == 2**40` is elementwise like numpy or a TypeError like `x < 2**40`, never the Python
# bool False
def test_equality_with_a_python_int_too_big_for_the_dtype(fn, mode):
    x = a([1, 2, 3], I32)
    try:
        results, _ = run(fn, [x], mode)
    except TypeError:
        return                          # as `x < 2**40` and rt.equal(x, 2**40) do
    got = results[0]
    assert isinstance(got, rt.Tensor), f"a Python {type(got).__name__}, not a tensor"
    want = fn(x.astype(np.int64))       # numpy: elementwise
    assert got.shape == x.shape and got.numpy().tolist() == want.tolist()


# like rt.constant(x) and rt.convert_to_tensor([x, 2]), also while tracing
@pytest.mark.parametrize("mode", MODES)
def test_constant_of_a_list_holding_a_tensor(mode):
    check = case("constant([x,2])", lambda x: rt.constant([x, 2]), [I32(1)],
                 const(a([1, 2], I32))).values[0]
    check(mode)


def test_constant_rejects_unconvertible_values():
    with pytest.raises(TypeError, match="int64"):
        rt.constant(2 ** 63)
    with pytest.raises(TypeError, match="inhomogeneous|sequence"):
        rt.constant([[1, 2], [3]])
    with pytest.raises(TypeError, match="str"):
        rt.constant("a")
    with pytest.raises(TypeError, match="uint8"):
        rt.constant(-1, rt.uint8)


# Python floats meet an int dtype: refused, as a numpy array of floats is
# (test_dtypes_shapes), never truncated; likewise for arguments of traced functions and
# variable assignments. TensorFlow: "Cannot convert 1.5 to EagerTensor of dtype int32".
def test_convert_to_tensor_refuses_a_python_float_for_an_int_dtype():
    with pytest.raises(TypeError):
        rt.convert_to_tensor([1.5, 2.0], dtype=rt.int32)


def test_int_input_signature_refuses_a_python_float():
    f = rt.function(lambda x: x * 2, input_signature=[SPEC([], rt.int32)])
    with pytest.raises((TypeError, ValueError)):
        f(1.5)                                  # not 2, as if 1.5 were 1


def test_int_variable_refuses_python_floats():
    v = rt.Variable([1, 2])
    with pytest.raises(TypeError):
        v.assign([1.5, 2.7])                    # not [1, 2]
    assert v.numpy().tolist() == [1, 2]


# -- integer division, modulo, pow, overflow, special floats --------------------------------------
# floordiv/mod floor like Python (TensorFlow's floordiv/floormod document the same).
# Integer division by zero gives 0 as in numpy (TensorFlow's CPU kernels raise
# "Integer division by zero"); float division by zero gives inf/-inf/nan (IEEE).

ARITH_CASES = [
    case("int32//-2", lambda x: x // -2, [a([7, -7, 6], I32)], const(a([-4, 3, -3], I32))),
    case("-7//int32", lambda x: -7 // x, [a([2, -2], I32)], const(a([-4, 3], I32))),
    case("int32%-3", lambda x: x % -3, [a([-7, 7, 0], I32)], const(a([-1, -2, 0], I32))),
    case("int64-floordiv-mod", lambda x, y: (x // y, x % y), [a([-7, 7], I64), a([2, -2], I64)],
         const((a([-4, -4], I64), a([1, -1], I64)))),
    case("float-floordiv-negative", lambda x, y: x // y, [a([-7.5, 7.5], F32), a([2, -2], F32)],
         const(a([-4, -4], F32))),
    case("int//0-is-0", lambda x, y: x // y, [a([1, -1, 0], I32), a([0, 0, 0], I32)],
         const(a([0, 0, 0], I32))),
    case("int%0-is-0", lambda x, y: x % y, [a([1, -1, 0], I32), a([0, 0, 0], I32)],
         const(a([0, 0, 0], I32))),
    case("int/0-is-inf", lambda x: x / 0, [a([1, -1, 0], I32)],
         const(a([np.inf, -np.inf, np.nan], F32))),
    case("float/0", lambda x, y: x / y, [a([1, -1, 0], F32), a([0, 0, 0], F32)],
         const(a([np.inf, -np.inf, np.nan], F32))),
    case("float//0", lambda x: x // 0.0, [a([1, -1, 0], F32)],
         const(a([np.inf, -np.inf, np.nan], F32))),
    case("float%0-is-nan", lambda x: x % 0.0, [a([1, -1], F32)], const(a([np.nan] * 2, F32))),
    case("float//inf", lambda x: x // float("inf"), [a([7, -7], F32)], const(a([0, -1], F32))),
    case("int-min//-1-wraps", lambda x, y: x // y, [a([INT_MIN], I32), a([-1], I32)],
         const(a([INT_MIN], I32))),
    case("pow-0**0", lambda x, y: x ** y, [a([0, 2], I32), a([0, 0], I32)],
         const(a([1, 1], I32))),
    case("pow-int**2.0-float32", lambda x: x ** 2.0, [a([3], I32)], const(a([9], F32))),
    case("pow-1**-2.0", lambda x: x ** -2.0, [a([1, 2], I32)], const(a([1, 0.25], F32))),
    case("pow-negative-base-fraction-nan", lambda x: x ** 0.5, [a([-4.0, 4.0], F32)],
         const(a([np.nan, 2], F32))),
    case("pow-0.0**-1-inf", lambda x: x ** -1, [a([0.0], F32)], const(a([np.inf], F32))),
    case("pow-nan**0-is-1", lambda x: x ** 0, [a([np.nan], F32)], const(a([1], F32))),
    case("abs-special", rt.abs, [a([-2.5, -0.0, np.nan, -np.inf], F32)],
         const(a([2.5, 0, np.nan, np.inf], F32))),
    case("sign-special", rt.sign, [a([-2.5, 0.0, np.nan, -np.inf, np.inf], F32)],
         const(a([-1, 0, np.nan, -1, 1], F32))),
    case("sign-int", rt.sign, [a([-3, 0, 4], I32)], const(a([-1, 0, 1], I32))),
    case("round-int-keeps-dtype", rt.round, [a([1, -3], I32)], const(a([1, -3], I32))),
    case("round-near-halves", rt.round, [a([2.4999, 2.5001, 3.5, -3.5], F32)],
         const(a([2, 3, 4, -4], F32))),
    case("sqrt-negative-nan", rt.sqrt, [a([-1.0, 0.0, 4.0], F32)], const(a([np.nan, 0, 2], F32))),
    case("log-negative-nan-zero-minus-inf", rt.log, [a([-1.0, 0.0, 1.0], F32)],
         const(a([np.nan, -np.inf, 0], F32))),
    case("exp-overflow-inf", rt.exp, [a([1000.0, -1000.0], F32)], const(a([np.inf, 0], F32))),
    case("float16-overflow-inf", lambda x: x * x, [a([300.0], F16)], const(a([np.inf], F16))),
    # integer overflow wraps around (numpy and TensorFlow alike)
    case("int32-add-overflow", lambda x: x + 1, [a([INT_MAX], I32)], const(a([INT_MIN], I32))),
    case("int32-square-overflow", rt.square, [a([2 ** 16], I32)], const(a([0], I32))),
    case("int32-negative-min", lambda x: -x, [a([INT_MIN], I32)], const(a([INT_MIN], I32))),
    case("int32-abs-min", abs, [a([INT_MIN], I32)], const(a([INT_MIN], I32))),
    case("int8-sum-wraps", rt.reduce_sum, [a([100, 100], I8)], const(I8(-56))),
    case("matmul-int8-wraps", rt.matmul, [np.full((2, 2), 100, I8), np.full((2, 2), 1, I8)],
         const(np.full((2, 2), -56, I8))),
    # algebraic simplification must not change these (x*0, x-x, x/x are not 0 or 1)
    case("nan*0", lambda x: x * 0, [a([np.nan, np.inf, 2], F32)], const(a([np.nan, np.nan, 0],
                                                                         F32))),
    case("inf-inf", lambda x: x - x, [a([np.inf, 1], F32)], const(a([np.nan, 0], F32))),
    case("0/0", lambda x: x / x, [a([0.0, 2], F32)], const(a([np.nan, 1], F32))),
    case("-0.0+0", lambda x: x + 0, [a([-0.0], F32)], const(a([0.0], F32))),
    case("int*1.0-is-float32", lambda x: x * 1.0, [a([1, 2], I32)], const(a([1, 2], F32))),
    case("bool+0-is-int32", lambda x: x + 0, [a([1, 0], BOOL)], const(a([1, 0], I32))),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", ARITH_CASES)
def test_arithmetic_edge_cases(check, mode):
    check(mode)


def test_signed_zeros_survive():
    """-0.0 + 0 is +0.0 but -0.0 - 0.0 is -0.0: simplifying either away changes the bits."""
    for mode in MODES:
        (plus, minus), _ = run(lambda x: (x + 0, x - 0.0), [a([-0.0], F32)], mode)
        assert not np.signbit(plus.numpy()[0]) and np.signbit(minus.numpy()[0]), mode


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", [lambda x: x ** -1, lambda x: rt.pow(x, a([1, -2], I32)),
                                lambda x: 2 ** -x], ids=["x**-1", "pow", "2**-x"])
def test_integer_to_a_negative_integer_power_is_an_error(fn, mode):
    # numpy raises ValueError; TensorFlow: "Integers to negative integer powers are not allowed"
    error = raises_in(mode, fn, [a([2, 1], I32)], ValueError, "negative integer powers")
    assert "pow" in str(error)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn,bad", [(lambda x, y: x - y, "subtract"), (lambda x, y: -x,
                                                                       "negative")],
                         ids=["bool-bool", "-bool"])
def test_bool_subtract_and_negate_are_type_errors(fn, bad, mode):
    # numpy refuses them and points to ^ / ~ (TensorFlow: no bool kernel)
    raises_in(mode, fn, [a([1, 0], BOOL), a([1, 1], BOOL)], TypeError, bad)


# -- broadcasting and reductions, empty tensors ---------------------------------------------------

E = np.zeros((0, 3), F32)
X3 = np.arange(24, dtype=F32).reshape(2, 3, 4)

REDUCE_CASES = [
    case("rank0+rank3", lambda s, x: s + x, [F32(2), X3], lambda s, x: s + x),
    case("size-1-dims", lambda x, y: x * y, [np.ones((2, 1, 4), F32), sample((3, 1))],
         lambda x, y: x * y),
    case("empty+row", lambda e, r: e + r, [E, a([1, 2, 3], F32)], lambda e, r: e + r),
    case("empty-sum", rt.reduce_sum, [E], const(F32(0))),
    case("empty-sum-axis0", lambda e: rt.reduce_sum(e, 0), [E], const(np.zeros(3, F32))),
    case("empty-sum-axis1", lambda e: rt.reduce_sum(e, 1), [E], const(np.zeros(0, F32))),
    case("empty-prod", rt.reduce_prod, [E], const(F32(1))),
    case("empty-mean-nan", rt.reduce_mean, [E], const(F32(np.nan))),
    case("empty-mean-axis0-nan", lambda e: rt.reduce_mean(e, 0), [E],
         const(np.full(3, np.nan, F32))),
    case("empty-max-axis1", lambda e: rt.reduce_max(e, 1), [E], const(np.zeros(0, F32))),
    case("empty-any", rt.reduce_any, [np.zeros(0, BOOL)], const(BOOL(False))),
    case("empty-all", rt.reduce_all, [np.zeros(0, BOOL)], const(BOOL(True))),
    case("empty-argmax-axis1", lambda e: rt.argmax(e, 1), [E], const(np.zeros(0, I64))),
    case("sum-axis-tuple-negative-keepdims", lambda x: rt.reduce_sum(x, (-1, 0), keepdims=True),
         [X3], lambda x: np.sum(x, axis=(2, 0), keepdims=True)),
    case("max-keepdims-all", lambda x: rt.reduce_max(x, keepdims=True), [X3],
         lambda x: np.max(x, keepdims=True)),
    case("mean-float16-no-overflow", rt.reduce_mean, [np.full(1000, 100, F16)],
         const(F16(100))),
    case("max-propagates-nan", rt.reduce_max, [a([1, np.nan, 3], F32)], const(F32(np.nan))),
    case("maximum-propagates-nan", rt.maximum, [a([1, np.nan], F32), a([np.nan, 2], F32)],
         const(a([np.nan, np.nan], F32))),
    case("argmax-ties-first", lambda x: rt.argmax(x, 0), [a([[1, 3], [1, 3]], F32)],
         const(a([0, 0], I64))),
    case("argmax-ties-rows", lambda x: rt.argmax(x, 1), [a([[1, 3, 3], [2, 2, 2]], I32)],
         const(a([1, 0], I64))),
    case("argmax-bool", rt.argmax, [a([0, 1, 1], BOOL)], const(I64(1))),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", REDUCE_CASES)
def test_broadcasting_and_reductions(check, mode):
    check(mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op,axis", [(rt.reduce_max, None), (rt.reduce_min, 0),
                                     (rt.argmax, 0)], ids=["max", "min-axis0", "argmax"])
def test_max_of_an_empty_axis_is_an_error(op, axis, mode):
    # numpy raises (no identity); TensorFlow returns the dtype's lowest/highest value
    error = raises_in(mode, lambda e: op(e, axis), [E], ValueError, "empty|zero-size")
    assert op.__name__ in str(error)


@pytest.mark.parametrize("mode", MODES)
def test_integer_mean_of_an_empty_tensor(mode):
    # the float32 mean, nan as for floats (not INT_MIN, numpy's nan cast to int32)
    (got,), _ = run(rt.reduce_mean, [np.zeros((0, 3), I32)], mode)
    assert got.dtype == rt.float32 and np.isnan(got.numpy())


def test_incompatible_broadcast_fails_while_tracing_at_the_users_line():
    def f(x, y):
        return rt.where(x > 0, x, y)
    with pytest.raises(ValueError, match=r"where.*\(2, 3\).*\(4,\)") as info:
        rt.function(f).get_concrete_function(rt.constant(sample((2, 3))),
                                             rt.constant(sample((4,))))
    where_line = f"test_op_edge_cases.py:{f.__code__.co_firstlineno + 1}"
    assert where_line in str(info.value).replace('", line ', ":"), str(info.value)


# -- indexing -----------------------------------------------------------------------------------

V = np.arange(5, dtype=I32)

INDEX_CASES = [
    case("v[-100:100]", lambda v: v[-100:100], [V], lambda v: v[-100:100]),
    case("v[3:1]-empty", lambda v: v[3:1], [V], lambda v: v[3:1]),
    case("v[4:-6:-1]", lambda v: v[4:-6:-1], [V], lambda v: v[4:-6:-1]),
    case("v[::-2]", lambda v: v[::-2], [V], lambda v: v[::-2]),
    case("v[-1]", lambda v: v[-1], [V], lambda v: v[-1]),
    case("x[1,-1,::-1]", lambda x: x[1, -1, ::-1], [X3], lambda x: x[1, -1, ::-1]),
    case("x[None,...,None]", lambda x: x[None, ..., None], [X3], lambda x: x[None, ..., None]),
    case("scalar[None]", lambda s: s[None], [F32(2)], lambda s: np.asarray(s)[None]),
    case("scalar[...]", lambda s: s[...], [F32(2)], lambda s: s),
    case("empty[::-1]", lambda e: e[::-1], [E], lambda e: e[::-1]),
    case("v[np.int64]", lambda v: v[np.int64(3)], [V], lambda v: v[3]),
    case("v[tensor-int64]", lambda v, i: v[i], [V, I64(3)], lambda v, i: v[i]),
    case("v[tensor-uint8]", lambda v, i: v[i], [V, U8(4)], lambda v, i: v[i]),
    case("v[tensor-negative]", lambda v, i: v[i], [V, I32(-2)], lambda v, i: v[i]),
    case("v[tensor-negative:]", lambda v, i: v[i:], [V, I32(-2)], lambda v, i: v[i:],
         inferred=[None]),
    case("v[:tensor-past-end]", lambda v, i: v[:i], [V, I32(100)], lambda v, i: v[:i],
         inferred=[None]),
    case("v[[-1,0]]", lambda v: v[[-1, 0]], [V], lambda v: v[[-1, 0]]),
    case("v[tensor-vector-negative]", lambda v, i: v[i], [V, a([-1, 0], I32)],
         lambda v, i: v[i]),
    case("v[bool-scalar-tensor]", lambda v, b: v[b], [V, BOOL(True)], lambda v, b: v[None],
         inferred=[None, 5]),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", INDEX_CASES)
def test_indexing(check, mode):
    check(mode)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn,arrays", [
    (lambda v: v[5], [V]), (lambda v: v[-6], [V]), (lambda x: x[0, 0, 4], [X3]),
    (lambda v, i: v[i], [V, I32(7)]), (lambda v, i: v[i], [V, I32(-6)]),
    (lambda v, i: v[i], [V, a([1, 5], I32)]), (lambda v: v[[5]], [V])],
    ids=["5", "-6", "0,0,4", "tensor-7", "tensor--6", "tensor-vector", "list"])
def test_index_out_of_range_is_an_index_error_naming_getitem(fn, arrays, mode):
    error = raises_in(mode, fn, arrays, IndexError, "out of bounds")
    assert "getitem" in str(error)
    if mode == "graph":
        assert line_of(fn) in str(error).replace('", line ', ":"), str(error)


@pytest.mark.parametrize("mode", MODES)
def test_zero_step_is_an_error(mode):
    raises_in(mode, lambda v: v[::0], [V], ValueError, "step cannot be zero")
    raises_in(mode, lambda v, s: v[::s], [V, I32(0)], ValueError, "step cannot be zero")


def test_len_and_iteration_of_traced_tensors():
    @rt.function
    def f(x):
        rows = [rt.reduce_sum(row) for row in x]
        return len(x), rt.stack(rows), x.ndim
    n, sums, ndim = f(rt.constant(X3))
    assert (int(n), int(ndim)) == (2, 3) and n.dtype == rt.int32
    np.testing.assert_array_equal(sums.numpy(), X3.sum(axis=(1, 2)))


def test_shape_and_ndim_of_traced_tensors_with_unknown_dims():
    seen = {}

    @rt.function(input_signature=[SPEC([None, 3]), SPEC(None)])
    def f(x, y):
        seen.update(shape=x.shape, ndim=x.ndim, col=x[:, 0].shape, row=x[0].shape,
                    new=x[None].shape, y_ndim=y.ndim, y_shape=y.shape)
        return rt.shape(x)
    np.testing.assert_array_equal(f(rt.constant(sample((2, 3))), rt.constant(X3)).numpy(),
                                  [2, 3])
    assert seen["shape"].as_list() == [None, 3] and seen["ndim"] == 2
    assert seen["col"].as_list() == [None] and seen["row"].as_list() == [3]
    assert seen["new"].as_list() == [1, None, 3]
    assert seen["y_ndim"] is None and seen["y_shape"].rank is None


@pytest.mark.parametrize("op", [rt.reduce_sum, rt.reduce_mean, rt.reduce_max, rt.reduce_all])
# reducing every axis gives a scalar whatever the rank (TF infers shape ())
def test_full_reduction_of_unknown_rank_is_a_scalar_while_tracing(op):
    dtype = rt.bool_ if op is rt.reduce_all else rt.float32
    concrete = rt.function(op, input_signature=[SPEC(None, dtype)]).get_concrete_function()
    assert concrete.graph.outputs[0].shape == rt.TensorShape([])


# -- gather, one_hot, reshape, joins, tile, squeeze, where, range, cast ----------------------------

M = np.arange(12, dtype=F32).reshape(3, 4)

ARRAY_CASES = [
    # numpy's take: negative indices count from the end (TensorFlow's CPU gather rejects them)
    case("gather-negative", rt.gather, [M, a([-1, 0], I32)], lambda m, i: m[i]),
    case("gather-empty-indices", rt.gather, [M, np.zeros(0, I32)], lambda m, i: m[i]),
    case("one_hot-int64-indices", lambda i: rt.one_hot(i, 3), [a([2, -1, 3], I64)],
         const(a([[0, 0, 1], [0, 0, 0], [0, 0, 0]], F32))),
    case("one_hot-scalar", lambda i: rt.one_hot(i, 3), [I32(1)], const(a([0, 1, 0], F32))),
    case("one_hot-depth-0", lambda i: rt.one_hot(i, 0), [a([0], I32)],
         const(np.zeros((1, 0), F32))),
    case("one_hot-bool", lambda i: rt.one_hot(i, 2, dtype=rt.bool_), [a([1], I32)],
         const(a([[0, 1]], BOOL))),
    case("reshape-empty-minus-one", lambda e: rt.reshape(e, [-1, 3, 1]), [E],
         lambda e: e.reshape(-1, 3, 1)),
    case("stack-weak-float", lambda x: rt.stack([x, 2, 3.5]), [I32(1)],
         const(a([1, 2, 3.5], F32))),
    case("concat-int64-int32", lambda x, y: rt.concat([x, y], 0), [a([1], I64), a([2], I32)],
         const(a([1, 2], I64))),
    case("split-into-1", lambda m: rt.split(m, 1), [M], lambda m: [m]),
    case("tile-zero", lambda m: rt.tile(m, [0, 2]), [M], lambda m: np.tile(m, (0, 2))),
    case("tile-scalar", lambda s: rt.tile(s, []), [F32(2)], lambda s: s),
    case("squeeze-scalar", rt.squeeze, [F32(2)], lambda s: s),
    case("squeeze-all-ones", rt.squeeze, [np.ones((1, 1), F32)], const(F32(1))),
    case("where-three-way-broadcast", rt.where,
         [a([[1], [0]], BOOL), a([1, 2, 3], I32), I32(0)], np.where),
    case("where-python-values", lambda c: rt.where(c, 1, 2.5), [a([1, 0], BOOL)],
         const(a([1, 2.5], F32))),
    case("where-scalar-condition", rt.where, [BOOL(True), a([1, 2], I32), a([3, 4], I32)],
         np.where),
    case("range-negative-delta", lambda: rt.range(10, 0, -3), [], const(a([10, 7, 4, 1], I32))),
    case("range-float-negative-delta", lambda: rt.range(-1.0, -3.0, -0.5), [],
         const(a([-1, -1.5, -2, -2.5], F32))),
    case("range-float-limit", lambda: rt.range(2.5), [], const(a([0, 1, 2], F32))),
    case("range-wrong-direction-empty", lambda: rt.range(0, 5, -1), [], const(np.zeros(0, I32))),
    case("range-negative-limit-empty", lambda: rt.range(-3), [], const(np.zeros(0, I32))),
    case("range-past-int32", lambda: rt.range(2 ** 31 - 1, 2 ** 31 + 1), [],
         const(a([2 ** 31 - 1, 2 ** 31], I64))),
    case("range-float16", lambda: rt.range(0, 1, 0.25, dtype=rt.float16), [],
         const(a([0, 0.25, 0.5, 0.75], F16))),
    case("cast-float-to-bool", lambda x: rt.cast(x, rt.bool_),
         [a([-0.0, 0.0, 0.1, -2, np.nan, np.inf], F32)], const(a([0, 0, 1, 1, 1, 1], BOOL))),
    case("cast-int-to-bool", lambda x: rt.cast(x, rt.bool_), [a([-2, 0, 3], I32)],
         const(a([1, 0, 1], BOOL))),
    case("cast-int-narrowing-wraps", lambda x: rt.cast(x, rt.int8), [a([200, -129], I32)],
         const(a([-56, 127], I8))),
    case("cast-float64-to-float16-inf", lambda x: rt.cast(x, rt.float16), [a([1e6, 1e-8], F64)],
         const(a([np.inf, 0], F16))),
    case("cast-float-to-int64-truncates-toward-zero", lambda x: rt.cast(x, rt.int64),
         [a([-2.7, -0.2, 2.7], F32)], const(a([-2, 0, 2], I64))),
    # numpy's clip with min > max gives max everywhere (TensorFlow: "min must be <= max
    # for correct results"; its kernel gives min)
    case("clip-min-above-max", lambda x: rt.clip_by_value(x, 2.0, 1.0), [a([0, 1.5, 3], F32)],
         const(a([1, 1, 1], F32))),
    case("clip-nan", lambda x: rt.clip_by_value(x, 0.0, 1.0), [a([np.nan, 2], F32)],
         const(a([np.nan, 1], F32))),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", ARRAY_CASES)
def test_array_op_edge_cases(check, mode):
    check(mode)


ARRAY_ERRORS = [   # (what, fn, inputs, error, words in the message)
    ("gather-out-of-range", lambda m: rt.gather(m, [3]), [M], IndexError, ["gather", "3"]),
    ("gather-float-indices", lambda m: rt.gather(m, [1.0]), [M], TypeError, ["gather"]),
    ("reshape-two-minus-ones", lambda m: rt.reshape(m, [-1, -1]), [M], ValueError,
     ["reshape"]),
    ("reshape-zero-dim", lambda m: rt.reshape(m, [0, 12]), [M], ValueError, ["reshape"]),
    ("split-uneven", lambda m: rt.split(m, 3, axis=1), [M], ValueError, ["split", "(3, 4)"]),
    ("split-zero", lambda m: rt.split(m, 0, axis=1), [M], ValueError, ["split"]),
    ("split-two-minus-ones", lambda m: rt.split(m, [-1, -1], axis=1), [M], ValueError,
     ["split"]),
    ("tile-negative", lambda m: rt.tile(m, [-1, 2]), [M], ValueError, ["tile"]),
    ("squeeze-non-1", lambda m: rt.squeeze(m, 0), [M], ValueError, ["squeeze"]),
    ("squeeze-axis-out-of-range", lambda m: rt.squeeze(m, 5), [M], ValueError,
     ["squeeze", "axis 5"]),
    ("concat-scalars", lambda s: rt.concat([s, s], 0), [F32(1)], ValueError, ["concat"]),
    ("concat-nothing", lambda: rt.concat([], 0), [], ValueError, ["concat"]),
    ("stack-nothing", lambda: rt.stack([]), [], ValueError, ["stack"]),
    ("unstack-scalar", rt.unstack, [F32(1)], ValueError, ["unstack"]),
    ("range-zero-delta", lambda: rt.range(0, 5, 0), [], ValueError, ["range", "delta"]),
    ("zeros-negative-dim", lambda: rt.zeros([-1, 2]), [], ValueError, ["negative"]),
    ("where-one-of-x-y", lambda c: rt.where(c, None, 2), [a([1, 0], BOOL)], ValueError,
     ["where"]),
    ("matmul-scalars", lambda s: rt.matmul(s, s), [F32(2)], ValueError, ["matmul"]),
    ("softmax-scalar", rt.nn.softmax, [F32(2)], ValueError, ["softmax", "axis -1"]),
    ("reduce-scalar-axis0", lambda s: rt.reduce_mean(s, 0), [F32(2)], ValueError,
     ["reduce_mean", "axis 0"]),
    ("sparse-xent-negative-label", rt.nn.sparse_softmax_cross_entropy_with_logits,
     [a([-1], I32), a([[1, 2, 3]], F32)], ValueError, ["[0, 3)"]),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("what,fn,arrays,error,words", ARRAY_ERRORS,
                         ids=[row[0] for row in ARRAY_ERRORS])
def test_array_op_errors(what, fn, arrays, error, words, mode):
    message = str(raises_in(mode, fn, arrays, error))
    for word in words:
        assert word in message, (word, message)


# Eager errors name the shapes as the traced shape rules do, not numpy's kernel text.
@pytest.mark.parametrize("fn,arrays,words", [
    (lambda m: rt.squeeze(m, 0), [M], ["(3, 4)"]),
    (lambda s: rt.matmul(s, s), [F32(2)], ["()", "rank"]),
    (lambda m: rt.gather(m, [1.0]), [M], ["indices must be integers"]),
], ids=["squeeze", "matmul-scalars", "gather-float-indices"])
def test_eager_errors_say_what_graph_errors_say(fn, arrays, words):
    message = str(raises_in("eager", fn, arrays, (ValueError, TypeError)))
    for word in words:
        assert word in message, (word, message)


NEGATIVE_SIZES = {   # ValueError eagerly too, where numpy would read -2 as -1 (TF: 'Size 0
    # must be non-negative, not -2') or give an empty (2, 0) one_hot
    "reshape-minus-2": (lambda m: rt.reshape(m, [-2, 6]), [M]),
    "one_hot-depth--1": (lambda i: rt.one_hot(i, -1), [a([0, 1], I32)]),
}


@pytest.mark.parametrize("fn,arrays,mode", [
    pytest.param(*args, mode, id=f"{what}-{mode}")
    for what, args in NEGATIVE_SIZES.items() for mode in MODES])
def test_negative_sizes_are_errors_in_both_modes(fn, arrays, mode):
    raises_in(mode, fn, arrays, ValueError)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn,arrays", [
    (lambda: rt.zeros((2.9,)), []),
    (lambda: rt.fill([1.5], 3), []),
    (lambda i: rt.one_hot(i, 2.5), [a([0, 1], I32)]),
    (lambda m: rt.expand_dims(m, 1.5), [M]),
    (lambda m: rt.transpose(m, [1.5, 0.2]), [M]),
    (lambda m: rt.tile(m, [1.5, 1]), [M]),
    (lambda m: rt.split(m, 4.0, axis=1), [M]),     # not one piece, M itself
    (lambda: rt.random.uniform([2.5], seed=1), []),
], ids=["zeros", "fill", "one_hot-depth", "expand_dims-axis", "transpose-perm",
        "tile-multiples", "split-num", "uniform-shape"])
# never truncated to an int (numpy and TF raise TypeError)
def test_fractional_sizes_and_axes_are_type_errors(fn, arrays, mode):
    raises_in(mode, fn, arrays, TypeError)


@pytest.mark.parametrize("mode", MODES)
# a scalar int tensor is a number of parts, as a Python int is (or an error naming the
# rank, as TF's for a rank-0 num_or_size_splits), never one size
def test_split_into_a_scalar_tensor_number_of_parts(mode):
    try:
        pieces, _ = run(lambda m: rt.split(m, rt.constant(4), axis=1), [M], mode)
    except ValueError as e:
        assert "split" in str(e) and "rank" in str(e).lower(), str(e)
        return
    assert [p.shape for p in pieces] == [(3, 1)] * 4


@pytest.mark.parametrize("mode", MODES)
def test_fractional_reduction_axis_is_a_type_error(mode):
    raises_in(mode, lambda m: rt.reduce_sum(m, 1.0), [M], TypeError, "reduce_sum")


@pytest.mark.parametrize("mode", MODES)
# as TF (uint8/int32/int64 indices only) and rt.gather do
def test_one_hot_refuses_float_indices(mode):
    raises_in(mode, lambda i: rt.one_hot(i, 3), [a([1.0, 1.7], F32)], TypeError)


# Arguments that must be known while tracing: a value computed from a static shape is known
# (rt.shape/rt.rank of a fully defined shape are constants, and so is a getitem or
# subtract of them), as eagerly.
@pytest.mark.parametrize("fn,arrays", [
    (lambda i, x: rt.one_hot(i, rt.shape(x)[1]), [a([0, 2], I32), M]),
    (lambda x: rt.tile(x, [rt.shape(x)[0], 1]), [M]),
    (lambda x: rt.reduce_sum(x, rt.rank(x) - 1), [M]),
    (lambda x: rt.argmax(x, rt.rank(x) - 1), [M]),
    (lambda x: rt.concat([x, x], rt.rank(x) - 1), [M]),
], ids=["one_hot-depth", "tile-multiples", "reduce_sum-axis", "argmax-axis", "concat-axis"])
def test_arguments_computed_from_static_shapes_are_known_while_tracing(fn, arrays):
    (want,), _ = run(fn, arrays, "eager")
    (got,), _ = run(fn, arrays, "graph")
    np.testing.assert_array_equal(got.numpy(), want.numpy())


# -- rt.nn with extreme logits -------------------------------------------------------------

BIG = a([[1000., 0., -1000.]], F32)

NN_CASES = [
    case("softmax_cross_entropy-large-logits",
         lambda z, x: rt.nn.softmax_cross_entropy_with_logits(z, x),
         [a([[0, 0, 1], [1, 0, 0]], F32), np.concatenate([BIG, BIG])],
         const(a([2000, 0], F32))),
    case("sparse_softmax_cross_entropy-large-logits",
         rt.nn.sparse_softmax_cross_entropy_with_logits, [a([2, 0, 1], I32),
                                                         np.concatenate([BIG] * 3)],
         const(a([2000, 0, 1000], F32))),
    case("sigmoid_cross_entropy-large-logits", rt.nn.sigmoid_cross_entropy_with_logits,
         [a([0, 1, 1, 0], F32), a([1000, -1000, 1000, -1000], F32)],
         const(a([1000, 1000, 0, 0], F32))),
    case("log_softmax-float16-large", rt.nn.log_softmax, [a([[60000, 0]], F16)],
         const(a([[0, -60000]], F16))),
    case("softmax-float16-large", rt.nn.softmax, [a([[60000, -60000]], F16)],
         const(a([[1, 0]], F16))),
    case("softmax-1d", rt.nn.softmax, [a([1000, 1000], F32)], const(a([0.5, 0.5], F32))),
    case("softmax-empty-batch", rt.nn.softmax, [E], const(E)),
    case("sigmoid-extremes", rt.sigmoid, [a([-1000, 1000], F32)], const(a([0, 1], F32))),
    case("softplus-extremes", rt.softplus, [a([-1000, 1000], F32)], const(a([0, 1000], F32))),
    case("tanh-extremes", rt.tanh, [a([-1000, 1000], F32)], const(a([-1, 1], F32))),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", NN_CASES)
def test_nn_extreme_values(check, mode):
    check(mode)


# -- Python protocols of eager tensors ------------------------------------------------------

def test_str_repr_and_numpy_of_edge_values():
    empty = rt.constant(E)
    assert str(empty) == str(E) == "[]"
    assert repr(empty) == ("<rt.Tensor: shape=(0, 3), dtype=float32, "
                           "numpy=array([], shape=(0, 3), dtype=float32)>")
    assert repr(rt.constant(True)) == "<rt.Tensor: shape=(), dtype=bool, numpy=True>"
    assert repr(rt.constant(np.int64(3))) == "<rt.Tensor: shape=(), dtype=int64, numpy=3>"
    assert str(rt.constant(np.float64(0.1))) == "0.1"
    weak = rt.constant([1, 2]) + 1
    assert weak.numpy().dtype == np.int32 and (rt.constant([1, 2]) * 1.5).numpy().dtype == F32
    assert type(rt.constant(2.5).numpy()) is np.float32


def test_bool_of_tensors_is_numpys():
    with pytest.raises(ValueError, match="ambiguous"):
        bool(rt.constant([1.0, 2.0]))
    assert bool(rt.constant([3])) is True and bool(rt.constant(-0.0)) is False


def test_int_and_float_of_eager_tensors():
    assert int(rt.constant(3.7)) == 3 and int(rt.constant(-3.7)) == -3     # toward zero
    assert float(rt.constant(7)) == 7.0 and int(rt.constant(True)) == 1
    assert int(rt.constant(np.int64(2 ** 40))) == 2 ** 40
    for conv in (int, float):
        with pytest.raises(TypeError):
            conv(rt.constant([1.0, 2.0]))
        with pytest.raises(TypeError):
            conv(rt.constant([[2.0]]))


def test_numpy_functions_on_tensors_keep_dtypes():
    x = rt.constant([1.5, -2.0])
    assert np.square(x).dtype == F32 and np.abs(x).tolist() == [1.5, 2.0]
    assert np.sum(rt.constant([1, 2], rt.int8)).dtype == np.sum(a([1, 2], I8)).dtype
    mixed = np.array([1.0, 1.0]) + x                 # numpy float64 array meets float32
    assert isinstance(mixed, rt.Tensor) and mixed.dtype == rt.float64


def test_len_iteration_and_ndim_of_eager_edge_tensors():
    empty = rt.constant(E)
    assert len(empty) == 0 and list(empty) == [] and empty.ndim == 2
    assert rt.constant(1.0).ndim == 0 and empty.shape == (0, 3)
