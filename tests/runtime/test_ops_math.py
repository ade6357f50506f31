"""Math ops against numpy, eagerly and traced: elementwise ops with broadcasting,
reductions, argmax/argmin, matmul, cast, clip_by_value and add_n.

Every row of a table runs twice (eager, graph); in graph mode the shape and dtype
inferred while tracing must equal the result's (see op_testing.case).
"""
import numpy as np
import pytest

import runtime as rt
from op_testing import MATH_OPS, MODES, case, named_rows, sample

F16, F32, F64 = np.float16, np.float32, np.float64
I8, I32, I64, U8 = np.int8, np.int32, np.int64, np.uint8
BOOL = np.bool_
SPEC = rt.TensorSpec

# -- elementwise unary ----------------------------------------------------------------

UNARY = {   # op: (numpy reference, dtypes, kind of sample values)
    "negative": (np.negative, [F32, I32, I8], "any"),
    "abs": (np.abs, [F32, I32, F16], "any"),
    "sign": (np.sign, [F32, I32], "any"),
    "sqrt": (np.sqrt, [F32, F64, F16, I32], "positive"),
    "rsqrt": (lambda x: 1 / np.sqrt(x), [F32, F64], "positive"),
    "square": (np.square, [F32, I32], "any"),
    "exp": (np.exp, [F32, F64, F16], "any"),
    "log": (np.log, [F32, F64], "positive"),
    "log1p": (np.log1p, [F32, F64], "positive"),
    "sin": (np.sin, [F32, F64], "any"),
    "cos": (np.cos, [F32, F64], "any"),
    "tan": (np.tan, [F32, F64], "any"),
    "tanh": (np.tanh, [F32, F64, F16], "any"),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), [F32, F64, F16], "any"),
    "relu": (lambda x: np.maximum(x, 0), [F32, I32, F16], "any"),
    "softplus": (lambda x: np.log1p(np.exp(x)), [F32, F64, F16], "any"),
    "floor": (np.floor, [F32, F64], "any"),
    "ceil": (np.ceil, [F32, F64], "any"),
    "round": (np.round, [F32, F64], "any"),
    "reciprocal": (lambda x: 1 / x, [F32, F64], "nonzero"),
    "is_nan": (np.isnan, [F32, F64], "any"),
    "is_finite": (np.isfinite, [F32, F16], "any"),
    "logical_not": (np.logical_not, [BOOL], "any"),
    "invert": (np.invert, [I32, U8, I8], "any"),
}

SPECIAL = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.5], F32)
HALVES = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5], F32)


def float_of_ints(ref, dtype, n_inputs=1):
    """float32 where numpy's `ref` makes floats of integers (sqrt, true division: the
    runtime's default float, where numpy gives float64), else None (the reference's)."""
    ints = np.dtype(dtype).kind in "biu"
    return F32 if ints and np.asarray(ref(*[np.ones(2, dtype)] * n_inputs)).dtype.kind == "f" \
        else None


UNARY_CASES = [
    case(f"{op}-{np.dtype(dt).name}", getattr(rt, op), [sample((2, 3), dt, kind)], ref,
         float_of_ints(ref, dt))
    for op, (ref, dts, kind) in UNARY.items() for dt in dts
] + [
    case("round-half-to-even", rt.round, [HALVES], lambda x: np.array([-2, -2, -0., 0, 2, 2],
                                                                     F32)),
    case("is_nan-special", rt.is_nan, [SPECIAL], np.isnan),
    case("is_finite-special", rt.is_finite, [SPECIAL], np.isfinite),
    case("sigmoid-extremes", rt.sigmoid, [np.array([-100., 0., 100.], F32)],
         lambda x: np.array([0., .5, 1.], F32)),
    case("softplus-extremes", rt.softplus, [np.array([-100., 0., 100.], F32)],
         lambda x: np.array([np.exp(-100.), np.log(2.), 100.], F32)),
    case("relu-scalar", rt.relu, [np.float32(-2.0)], lambda x: np.float32(0)),
    case("exp-scalar", rt.exp, [np.float64(1.0)], np.exp),
]

# -- elementwise binary, with broadcasting ------------------------------------------------

NUMERIC = [F32, I32]
BINARY = {   # op: (numpy reference, dtypes, sample kinds of x and y by dtype kind)
    "add": (np.add, NUMERIC + [U8], {}),
    "subtract": (np.subtract, NUMERIC + [I8], {}),
    "multiply": (np.multiply, NUMERIC + [F16], {}),
    "divide": (np.true_divide, NUMERIC + [I8], {"f": ("any", "nonzero"),
                                                "i": ("any", "nonzero")}),
    "floordiv": (np.floor_divide, NUMERIC, {"f": ("any", "nonzero"), "i": ("any", "nonzero")}),
    "mod": (np.mod, NUMERIC, {"f": ("any", "nonzero"), "i": ("any", "nonzero")}),
    "pow": (np.power, NUMERIC, {"f": ("positive", "any"), "i": ("any", "small")}),
    "maximum": (np.maximum, NUMERIC, {}),
    "minimum": (np.minimum, NUMERIC, {}),
    "squared_difference": (lambda x, y: np.square(x - y), NUMERIC, {}),
    "equal": (np.equal, NUMERIC + [BOOL], {}),
    "not_equal": (np.not_equal, NUMERIC, {}),
    "less": (np.less, NUMERIC, {}),
    "less_equal": (np.less_equal, NUMERIC, {}),
    "greater": (np.greater, NUMERIC, {}),
    "greater_equal": (np.greater_equal, NUMERIC, {}),
    "logical_and": (np.logical_and, [BOOL], {}),
    "logical_or": (np.logical_or, [BOOL], {}),
    "logical_xor": (np.logical_xor, [BOOL], {}),
    "bitwise_and": (np.bitwise_and, [I32, U8], {}),
    "bitwise_or": (np.bitwise_or, [I32, U8], {}),
    "bitwise_xor": (np.bitwise_xor, [I32, U8], {}),
}
BROADCASTS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3)), ((2, 1), (1, 3)),
              ((), (2, 3)), ((2, 3), ())]


def _binary_args(op, dtype, x_shape, y_shape):
    x_kind, y_kind = BINARY[op][2].get(np.dtype(dtype).kind, ("any", "any"))
    return [sample(x_shape, dtype, x_kind, seed=1), sample(y_shape, dtype, y_kind, seed=2)]


def _binary_case(op, dtype, x_shape, y_shape):
    name = f"{op}-{np.dtype(dtype).name}-{x_shape}-{y_shape}".replace(" ", "")
    ref = BINARY[op][0]
    return case(name, getattr(rt, op), _binary_args(op, dtype, x_shape, y_shape), ref,
                float_of_ints(ref, dtype, 2))


BINARY_CASES = [
    _binary_case(op, dts[0], xs, ys) for op, (_, dts, _) in BINARY.items()
    for xs, ys in BROADCASTS
] + [
    _binary_case(op, dt, (2, 3), (2, 3)) for op, (_, dts, _) in BINARY.items() for dt in dts[1:]
] + [
    case("floordiv-negative-floors", rt.floordiv, [np.array([-7, 7, -7], I32),
                                                   np.array([2, -2, -2], I32)],
         lambda x, y: np.array([-4, -4, 3], I32)),
    case("mod-sign-of-divisor", rt.mod, [np.array([-7, 7, -7.5], F32),
                                         np.array([2, -2, -2], F32)],
         lambda x, y: np.array([1, -1, -1.5], F32)),
    case("divide-int32-is-float32", rt.divide, [np.array([1, 3], I32), np.array([2, 2], I32)],
         lambda x, y: np.array([0.5, 1.5], F32)),
    case("pow-weak-float-exponent", lambda x: rt.pow(x, 0.5), [np.array([4., 9.], F32)],
         lambda x: np.array([2., 3.], F32)),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", UNARY_CASES + BINARY_CASES)
def test_elementwise(check, mode):
    check(mode)


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_incompatible_shapes_fail_while_tracing(op):
    dtype = BINARY[op][1][0]
    x, y = _binary_args(op, dtype, (2, 3), (4,))

    def f(a, b):
        return getattr(rt, op)(a, b)
    with pytest.raises(ValueError) as info:
        rt.function(f).get_concrete_function(rt.constant(x), rt.constant(y))
    message = str(info.value)
    assert op in message and "(2, 3)" in message and "(4,)" in message, message
    with pytest.raises(ValueError):
        f(rt.constant(x), rt.constant(y))


def test_aliases_are_the_same_ops():
    assert rt.truediv is rt.divide
    assert rt.floormod is rt.mod


# -- reductions ------------------------------------------------------------------------------

def _mean_ref(x, axis, keepdims):
    mean = np.mean(x, axis=axis, keepdims=keepdims)
    # The mean of integers is float32 (JAX's; TensorFlow's keeps the integer dtype).
    return mean.astype(F32) if x.dtype.kind in "biu" else mean


REDUCTIONS = {   # op: (reference(x, axis, keepdims), dtypes)
    "reduce_sum": (lambda x, a, k: np.sum(x, axis=a, keepdims=k, dtype=x.dtype),
                   [F32, I32, I8, F16]),
    "reduce_prod": (lambda x, a, k: np.prod(x, axis=a, keepdims=k, dtype=x.dtype), [F32, I32]),
    "reduce_mean": (_mean_ref, [F32, I32, F64]),
    "reduce_max": (lambda x, a, k: np.max(x, axis=a, keepdims=k), [F32, I32]),
    "reduce_min": (lambda x, a, k: np.min(x, axis=a, keepdims=k), [F32, I32]),
    "reduce_any": (lambda x, a, k: np.any(x, axis=a, keepdims=k), [BOOL]),
    "reduce_all": (lambda x, a, k: np.all(x, axis=a, keepdims=k), [BOOL]),
}
AXES = [None, 0, 1, -1, (0, 2), (-1, 0), ()]


def _reduction_case(op, dtype, axis, keepdims, shape=(2, 3, 4)):
    ref = REDUCTIONS[op][0]
    kind = "small" if op == "reduce_prod" else "any"
    return case(f"{op}-{np.dtype(dtype).name}-axis{axis}-keepdims{keepdims}".replace(" ", ""),
                lambda x: getattr(rt, op)(x, axis=axis, keepdims=keepdims),
                [sample(shape, dtype, kind)], lambda x: ref(x, axis, keepdims))


REDUCTION_CASES = [
    _reduction_case(op, dt, axis, keepdims) for op, (_, dts) in REDUCTIONS.items()
    for axis in AXES for keepdims in (False, True) for dt in dts[:1]
] + [
    _reduction_case(op, dt, axis, False) for op, (_, dts) in REDUCTIONS.items()
    for dt in dts[1:] for axis in (None, 1)
] + [
    case("reduce_sum-axis-list", lambda x: rt.reduce_sum(x, [0, -1]), [sample((2, 3, 4))],
         lambda x: np.sum(x, axis=(0, 2))),
    case("reduce_sum-axis-tensor", lambda x: rt.reduce_sum(x, rt.constant(1)),
         [sample((2, 3))], lambda x: np.sum(x, axis=1)),
    case("reduce_sum-bool-counts-int32", rt.reduce_sum, [sample((2, 3), BOOL)],
         lambda x: np.sum(x), I32),
    case("reduce_mean-bool-float32", rt.reduce_mean, [np.array([True, True, False])],
         lambda x: np.float32(2 / 3)),
    case("reduce_max-scalar", rt.reduce_max, [np.float32(3.0)], lambda x: x),
    case("reduce_any-int", lambda x: rt.reduce_any(x, 1), [sample((2, 3), I32)],
         lambda x: np.any(x, axis=1)),
]

# The mean of integers is their float32 mean: [-1, -2] averages to -1.5 (TensorFlow's
# integer mean truncates to -1).
INT_MEANS = [([1, 2], 1.5), ([-1, -2], -1.5), ([3, 4, 4], 11 / 3), ([-3, -4, -4], -11 / 3),
             ([7], 7)]
INT_MEAN_CASES = [
    case(f"reduce_mean-int-is-float32-{values}".replace(" ", ""), rt.reduce_mean,
         [np.array(values, I32)], lambda x, want=want: np.float32(want))
    for values, want in INT_MEANS
]

ARG_CASES = [
    case(f"{op}-{np.dtype(dt).name}-axis{axis}", lambda x, op=op, axis=axis:
         getattr(rt, op)(x, axis=axis),
         [sample((2, 3, 4), dt, seed=3)],
         lambda x, ref=ref, axis=axis: ref(x, axis=0 if axis is None else axis).astype(I64))
    for op, ref in [("argmax", np.argmax), ("argmin", np.argmin)]
    for dt in (F32, I32) for axis in (None, 0, 1, -1)
] + [
    case("argmax-output_type-int32", lambda x: rt.argmax(x, 1, output_type=rt.int32),
         [sample((2, 3))], lambda x: np.argmax(x, 1).astype(I32)),
    case("argmin-first-of-ties", lambda x: rt.argmin(x, -1),
         [np.array([[2, 1, 1], [0, 0, 5]], I32)], lambda x: np.array([1, 0], I64)),
    case("argmax-vector", rt.argmax, [np.array([1., 5., 2.], F32)], lambda x: np.int64(1)),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", REDUCTION_CASES + INT_MEAN_CASES + ARG_CASES)
def test_reductions(check, mode):
    check(mode)


@pytest.mark.parametrize("op", ["reduce_sum", "reduce_max", "argmax"])
def test_reduction_axis_out_of_range(op):
    x = rt.constant(sample((2, 3)))
    with pytest.raises(ValueError, match=r"(?s)axis 2.*\(2, 3\)"):
        getattr(rt, op)(x, axis=2)
    with pytest.raises(ValueError, match=r"(?s)axis -3.*\(2, 3\)"):
        rt.function(lambda t: getattr(rt, op)(t, axis=-3)).get_concrete_function(x)


# -- matmul, cast, clip_by_value, add_n ----------------------------------------------------

MATMUL_CASES = [
    case("matmul-f32", rt.matmul, [sample((2, 3)), sample((3, 4), seed=1)], np.matmul),
    case("matmul-i32", rt.matmul, [sample((2, 3), I32), sample((3, 4), I32, seed=1)],
         np.matmul),
    case("matmul-f32-f64-promotes", rt.matmul, [sample((2, 3)), sample((3, 2), F64, seed=1)],
         np.matmul),
    case("matmul-transpose_a", lambda a, b: rt.matmul(a, b, transpose_a=True),
         [sample((3, 2)), sample((3, 4), seed=1)], lambda a, b: a.T @ b),
    case("matmul-transpose_b", lambda a, b: rt.matmul(a, b, transpose_b=True),
         [sample((2, 3)), sample((4, 3), seed=1)], lambda a, b: a @ b.T),
    case("matmul-batched", rt.matmul, [sample((2, 2, 3)), sample((2, 3, 4), seed=1)],
         np.matmul),
    case("matmul-broadcast-batch", rt.matmul, [sample((2, 1, 2, 3)), sample((3, 3, 4), seed=1)],
         np.matmul),
    case("matmul-batch-with-matrix", rt.matmul, [sample((2, 2, 3)), sample((3, 4), seed=1)],
         np.matmul),
    case("matmul-vector-matrix", rt.matmul, [sample((3,)), sample((3, 4), seed=1)], np.matmul),
    case("matmul-matrix-vector", rt.matmul, [sample((2, 3)), sample((3,), seed=1)], np.matmul),
    case("matmul-operator", lambda a, b: a @ b, [sample((2, 3)), sample((3, 2), seed=1)],
         np.matmul),
]

CAST_CASES = [
    case(f"cast-{np.dtype(src).name}-to-{np.dtype(dst).name}",
         lambda x, dst=dst: rt.cast(x, dst), [sample((2, 3), src)],
         lambda x, dst=dst: x.astype(dst))
    for src, dst in [(F32, I32), (F32, F16), (F32, BOOL), (I32, F32), (I32, I8), (BOOL, F32),
                     (BOOL, I32), (F64, F32), (I32, I32)]
] + [
    case("cast-truncates-toward-zero", lambda x: rt.cast(x, "int32"),
         [np.array([-1.7, -0.5, 0.5, 1.7], F32)], lambda x: np.array([-1, 0, 0, 1], I32)),
    case("cast-python-value", lambda: rt.cast(1.5, rt.float64), [], lambda: np.float64(1.5)),
]

CLIP_CASES = [
    case("clip_by_value-scalars", lambda x: rt.clip_by_value(x, -1.0, 1.0), [sample((2, 3))],
         lambda x: np.clip(x, -1, 1)),
    case("clip_by_value-int", lambda x: rt.clip_by_value(x, 0, 3), [sample((2, 3), I32)],
         lambda x: np.clip(x, 0, 3)),
    case("clip_by_value-tensor-bounds", rt.clip_by_value,
         [sample((2, 3)), np.array([-1., 0., 1.], F32), np.float32(2.0)], np.clip),
]

ADD_N_CASES = [
    case("add_n-three", lambda a, b, c: rt.add_n([a, b, c]),
         [sample((2, 3)), sample((2, 3), seed=1), sample((2, 3), seed=2)],
         lambda a, b, c: a + b + c),
    case("add_n-one", lambda a: rt.add_n([a]), [sample((2, 3), I32)], lambda a: a),
    case("add_n-weak-scalar", lambda a, b: rt.add_n([a, b, 1]),
         [sample((2, 3), I32), sample((2, 3), I32, seed=1)], lambda a, b: a + b + 1),
    case("add_n-broadcasts", lambda a, b: rt.add_n([a, b]),
         [np.float32(1.0), sample((2, 3))], lambda a, b: a + b),
    case("add_n-int8", lambda a, b: rt.add_n([a, b]),
         [sample((3,), I8), sample((3,), I8, seed=1)], lambda a, b: a + b),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", MATMUL_CASES + CAST_CASES + CLIP_CASES + ADD_N_CASES)
def test_matmul_cast_clip_add_n(check, mode):
    check(mode)


@pytest.mark.parametrize("a_shape,b_shape,kwargs", [
    ((2, 3), (4, 5), {}), ((2, 3), (2, 3), {}), ((3, 2), (3, 4), {"transpose_b": True}),
    ((2, 2, 3), (3, 3, 4), {})])
def test_matmul_incompatible_shapes(a_shape, b_shape, kwargs):
    a, b = rt.constant(sample(a_shape)), rt.constant(sample(b_shape))
    with pytest.raises(ValueError, match="matmul") as info:
        rt.function(lambda x, y: rt.matmul(x, y, **kwargs)).get_concrete_function(a, b)
    assert str(rt.TensorShape(a_shape)) in str(info.value)
    assert str(rt.TensorShape(b_shape)) in str(info.value)
    with pytest.raises(ValueError):
        rt.matmul(a, b, **kwargs)


# -- unknown dimensions while tracing ------------------------------------------------------

UNKNOWN_DIM_CASES = [
    case("relu-[None,3]", rt.relu, [sample((2, 3))], lambda x: np.maximum(x, 0),
         inferred=[None, 3], signature=[SPEC([None, 3])]),
    case("add-[None,3]-(3,)", rt.add, [sample((2, 3)), sample((3,))], np.add,
         inferred=[None, 3], signature=[SPEC([None, 3]), SPEC([3])]),
    case("multiply-[None,1]-[1,None]", rt.multiply, [sample((2, 1)), sample((1, 3))],
         np.multiply, inferred=[None, None], signature=[SPEC([None, 1]), SPEC([1, None])]),
    case("add-unknown-rank", rt.add, [sample((2, 3)), sample((3,))], np.add,
         inferred=None, signature=[SPEC(None), SPEC([3])]),
    case("greater-[None]-scalar", lambda x: x > 0, [sample((4,))], lambda x: x > 0,
         inferred=[None], signature=[SPEC([None])]),
    case("reduce_sum-axis1-[None,3]", lambda x: rt.reduce_sum(x, 1), [sample((2, 3))],
         lambda x: np.sum(x, 1), inferred=[None], signature=[SPEC([None, 3])]),
    case("reduce_max-keepdims-[None,3]", lambda x: rt.reduce_max(x, 0, keepdims=True),
         [sample((2, 3))], lambda x: np.max(x, 0, keepdims=True), inferred=[1, 3],
         signature=[SPEC([None, 3])]),
    case("reduce_mean-all-[None,3]", rt.reduce_mean, [sample((2, 3))], np.mean,
         inferred=[], signature=[SPEC([None, 3])]),
    case("reduce_sum-unknown-rank", lambda x: rt.reduce_sum(x, -1), [sample((2, 3))],
         lambda x: np.sum(x, -1), inferred=None, signature=[SPEC(None)]),
    case("argmax-[None,3]", lambda x: rt.argmax(x, 0), [sample((2, 3))],
         lambda x: np.argmax(x, 0), inferred=[3], signature=[SPEC([None, 3])]),
    case("matmul-[None,3]-[3,4]", rt.matmul, [sample((2, 3)), sample((3, 4))], np.matmul,
         inferred=[None, 4], signature=[SPEC([None, 3]), SPEC([3, 4])]),
    case("cast-[None,3]", lambda x: rt.cast(x, rt.int32), [sample((2, 3))],
         lambda x: x.astype(I32), inferred=[None, 3], signature=[SPEC([None, 3])]),
]


@pytest.mark.parametrize("check", UNKNOWN_DIM_CASES)
def test_unknown_dims_while_tracing(check):
    check("graph")


def test_unknown_rank_stays_unknown():
    concrete = rt.function(rt.add, input_signature=[SPEC(None), SPEC([3])]) \
        .get_concrete_function()
    assert concrete.graph.outputs[0].shape.rank is None


# -- coverage of the table ---------------------------------------------------------------------

def _ops_in(cases):
    names = set()
    for param in cases:
        names.add(param.id.split("-")[0])
    return names


def test_every_math_op_is_in_a_table():
    tables = (UNARY_CASES + BINARY_CASES + REDUCTION_CASES + ARG_CASES + MATMUL_CASES
              + CAST_CASES + CLIP_CASES + ADD_N_CASES)
    covered = _ops_in(tables) | {"truediv", "floormod"}
    assert set(MATH_OPS) <= covered, sorted(set(MATH_OPS) - covered)
    assert all(callable(getattr(rt, op)) for op in MATH_OPS)


# -- errors point at the user's line ----------------------------------------------------------

TRACE_ERRORS = [   # (what, fn, input shapes, words the message must contain)
    ("operator", lambda a, b: a + b, [(2, 3), (4,)], ["add", "(2, 3)", "(4,)"]),
    ("matmul", lambda a, b: rt.matmul(a, b), [(2, 3), (4, 5)], ["matmul", "(2, 3)", "(4, 5)"]),
    ("reduce-axis", lambda a: rt.reduce_sum(a, 3), [(2, 3)], ["reduce_sum", "(2, 3)"]),
    ("reshape", lambda a: rt.reshape(a, [4]), [(2, 3)], ["reshape", "(2, 3)", "[4]"]),
    ("concat", lambda a, b: rt.concat([a, b], 1), [(2, 3), (3, 3)],
     ["concat", "(2, 3)", "(3, 3)"]),
    ("getitem", lambda a: a[:, 5], [(2, 3)], ["getitem", "(2, 3)"]),
]


def _trace_error(fn, shapes):
    with pytest.raises((ValueError, IndexError)) as info:
        rt.function(fn).get_concrete_function(*[rt.constant(sample(s)) for s in shapes])
    return info.value


@pytest.mark.parametrize("fn,shapes,words", named_rows(TRACE_ERRORS))
def test_trace_errors_name_the_op_the_shapes_and_the_line(fn, shapes, words):
    error = _trace_error(fn, shapes)
    message = str(error)
    for word in words:
        assert word in message, (word, message)
    line = fn.__code__.co_firstlineno
    assert error.origin.short() == f"test_ops_math.py:{line}"
    assert "test_ops_math.py" in message and str(line) in message, message


# Trace errors locate the user's line the way every multi-line error here does: as a
# traceback entry (`File "...", line N, in f`, which editors and IDEs link to), followed by
# the line's text.
def test_trace_error_message_locates_the_line_as_a_traceback_entry():
    fn, shapes = TRACE_ERRORS[0][1:3]
    message = str(_trace_error(fn, shapes))
    assert f'test_ops_math.py", line {fn.__code__.co_firstlineno}, in ' in message, message
