"""Dtype promotion: the documented table, JAX's lattice, and every op path following it.

`runtime/dtypes.py` promotes as JAX does (its 'standard' lattice, PyTorch agrees where both
have the types): an integer meeting a float takes the float's dtype, uint8 + int8 is int16,
uint64 with a signed integer is the default float. Where JAX's result is a weak (Python)
type our defaults are TensorFlow's: int32, float32, complex64 (JAX with x64 gives the 64-bit
ones). Float functions of integers and bools (sqrt, exp, true division, mean) give float32.
The tables below are the documentation (README "Dtypes"); the ops are checked against them
eagerly and traced, and the lattice against JAX where jax is installed.
"""
import os

import numpy as np
import pytest

import runtime as rt
from op_testing import MODES, case, run, sample
from runtime import dtypes

SHORT = {"b1": "bool", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
         "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "f16": "float16",
         "f32": "float32", "f64": "float64", "c64": "complex64", "c128": "complex128"}

# Tensor (row) with tensor (column).
TABLE = """
      b1   u8  u16  u32  u64   i8  i16  i32  i64  f16  f32  f64  c64 c128
b1    b1   u8  u16  u32  u64   i8  i16  i32  i64  f16  f32  f64  c64 c128
u8    u8   u8  u16  u32  u64  i16  i16  i32  i64  f16  f32  f64  c64 c128
u16  u16  u16  u16  u32  u64  i32  i32  i32  i64  f16  f32  f64  c64 c128
u32  u32  u32  u32  u32  u64  i64  i64  i64  i64  f16  f32  f64  c64 c128
u64  u64  u64  u64  u64  u64  f32  f32  f32  f32  f16  f32  f64  c64 c128
i8    i8  i16  i32  i64  f32   i8  i16  i32  i64  f16  f32  f64  c64 c128
i16  i16  i16  i32  i64  f32  i16  i16  i32  i64  f16  f32  f64  c64 c128
i32  i32  i32  i32  i64  f32  i32  i32  i32  i64  f16  f32  f64  c64 c128
i64  i64  i64  i64  i64  f32  i64  i64  i64  i64  f16  f32  f64  c64 c128
f16  f16  f16  f16  f16  f16  f16  f16  f16  f16  f16  f32  f64  c64 c128
f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f32  f64  c64 c128
f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64 c128 c128
c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64  c64 c128  c64 c128
c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128 c128
"""

# Tensor (row) with a Python bool, int, float, complex (weakly typed).
WEAK_TABLE = """
      bool  int float complex
b1      b1  i32   f32   c64
u8      u8   u8   f32   c64
u16    u16  u16   f32   c64
u32    u32  u32   f32   c64
u64    u64  u64   f32   c64
i8      i8   i8   f32   c64
i16    i16  i16   f32   c64
i32    i32  i32   f32   c64
i64    i64  i64   f32   c64
f16    f16  f16   f16   c64
f32    f32  f32   f32   c64
f64    f64  f64   f64  c128
c64    c64  c64   c64   c64
c128  c128 c128  c128  c128
"""

PYTHON_VALUES = {"bool": True, "int": 2, "float": 1.5, "complex": 1j}


def _parse(text):
    header, *rows = text.strip().splitlines()
    columns = header.split()
    return {row.split()[0]: dict(zip(columns, row.split()[1:])) for row in rows}


PAIRS = _parse(TABLE)
WEAK = _parse(WEAK_TABLE)
NAMES = list(PAIRS)


def dt(short):
    return rt.as_dtype(SHORT[short])


def weak_operand(value):
    """The lattice operand of a Python value: its own dtype and its weak kind."""
    return dtypes.python_scalar_dtype(value), dtypes.weak_kind(value)


# -- the lattice --------------------------------------------------------------------------------

@pytest.mark.parametrize("a", NAMES)
def test_tensors_promote_as_the_table_says(a):
    for b in NAMES:
        assert dtypes.lattice_result_type(dt(a), dt(b)) == (dt(PAIRS[a][b]), None), (a, b)
        assert dtypes.result_type(dt(a), dt(b)) == dt(PAIRS[a][b])


@pytest.mark.parametrize("a", NAMES)
def test_python_numbers_adapt_as_the_table_says(a):
    for kind, value in PYTHON_VALUES.items():
        got = dtypes.lattice_result_type(dt(a), weak_operand(value))
        assert got == (dt(WEAK[a][kind]), None), (a, kind)


def test_the_join_is_commutative_associative_and_idempotent():
    strong = [dt(n) for n in NAMES]
    weak = [weak_operand(v) for v in PYTHON_VALUES.values()]
    join = dtypes.lattice_result_type
    for x in strong + weak:
        assert join(x, x) == join(x)
        for y in strong + weak:
            assert join(x, y) == join(y, x)
            for z in strong + weak:
                assert join(x, y, z) == join(z, x, y) == join(y, z, x)
    # Step by step (a binary op's result is a strong tensor) equals the n-ary join, except
    # where uint64 meets a signed integer: the lattice joins them at the weak float, which
    # float16 would win against, but the tensor they give is float32.
    no_u64 = [d for d in strong if d != rt.uint64]
    for x in no_u64:
        for y in no_u64:
            for z in no_u64:
                assert join(join(x, y)[0], z) == join(x, join(y, z)[0]) == join(x, y, z)


def test_a_result_from_tensors_is_strong():
    # JAX's bool + 1 is a weak int that uint8 would win against; ours is int32, as the
    # eager tensor `bool_tensor + 1` is (eager tensors are never weak)
    assert dtypes.lattice_result_type(rt.bool_, weak_operand(1)) == (rt.int32, None)
    assert dtypes.lattice_result_type(rt.uint64, rt.int8) == (rt.float32, None)


@pytest.mark.parametrize("values,expected", [
    ((1, 2), (rt.int32, "i")), ((1, 2.5), (rt.float32, "f")), ((True, 1), (rt.int32, "i")),
    ((2 ** 40, 1), (rt.int64, "i")), ((1.5, 1j), (rt.complex64, "c")),
    ((True, False), (rt.bool_, "b"))])
def test_python_numbers_alone_stay_weak(values, expected):
    assert dtypes.lattice_result_type(*[weak_operand(v) for v in values]) == expected


def test_a_traced_value_standing_for_a_number_adapts_like_one():
    # a loop counter of dtype int64 (SymbolicTensor.weak == "i"): int8 wins, as for `1`
    assert dtypes.lattice_result_type((rt.int64, "i"), rt.int8) == (rt.int8, None)
    assert dtypes.lattice_result_type((rt.int64, "i"), (rt.float32, "f")) == (rt.float32, "f")
    assert dtypes.lattice_result_type((rt.float64, "f"), rt.int32) == (rt.float32, None)


def test_the_lattice_is_jax_standard_promotion():
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    jax = pytest.importorskip("jax")
    defaults = {"int64": rt.int32, "float64": rt.float32, "complex128": rt.complex64}
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)      # JAX's 64-bit types, as ours
    try:
        operands = [(np.dtype(SHORT[n]), dt(n)) for n in NAMES] + [
            (v, weak_operand(v)) for v in PYTHON_VALUES.values()]
        for jax_a, ours_a in operands:
            for jax_b, ours_b in operands:
                want, weak = jax.dtypes.result_type(jax_a, jax_b, return_weak_type_flag=True)
                want = defaults[want.name] if weak else rt.as_dtype(want)
                assert dtypes.lattice_result_type(ours_a, ours_b)[0] == want, (jax_a, jax_b)
    finally:
        jax.config.update("jax_enable_x64", previous)


# -- ops follow the table, eagerly and traced ------------------------------------------------------

def _kind(short):
    return "positive" if short.startswith("u") else "any"


ADD_CASES = [
    case(f"{a}+{b}", lambda x, y: x + y, [sample((2, 3), SHORT[a], _kind(a)),
                                          sample((3,), SHORT[b], _kind(b), seed=1)],
         np.add, SHORT[PAIRS[a][b]])
    for a in NAMES for b in NAMES
]

WEAK_CASES = [
    case(f"{a}*{kind}", lambda x, v=value: x * v, [sample((3,), SHORT[a], _kind(a))],
         lambda x, v=value: np.multiply(x, v), SHORT[WEAK[a][kind]])
    for a in NAMES for kind, value in PYTHON_VALUES.items()
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", ADD_CASES + WEAK_CASES)
def test_arithmetic_follows_the_tables(check, mode):
    check(mode)


MIXED_OPS = {
    "where": lambda c, x, y: rt.where(c, x, y),
    "maximum": lambda c, x, y: rt.maximum(x, y),
    "matmul": lambda c, x, y: rt.matmul(rt.reshape(x, [1, 3]), rt.reshape(y, [3, 1])),
    "concat": lambda c, x, y: rt.concat([x, y], 0),
    "stack": lambda c, x, y: rt.stack([x, y]),
    "add_n": lambda c, x, y: rt.add_n([x, y, x]),
    "clip_by_value": lambda c, x, y: rt.clip_by_value(y, x, x + 2),
    "squared_difference": lambda c, x, y: rt.squared_difference(x, y),
    "less": lambda c, x, y: x < y,
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(MIXED_OPS))
@pytest.mark.parametrize("a,b", [("i32", "f32"), ("i64", "f16"), ("u8", "i8"), ("b1", "f32")])
def test_other_ops_of_several_operands_promote_alike(name, a, b, mode):
    fn = MIXED_OPS[name]
    arrays = [np.array([True, False, True]), sample((3,), SHORT[a], _kind(a)),
              sample((3,), SHORT[b], _kind(b), seed=1)]
    (got,), _ = run(fn, arrays, mode)
    want = rt.bool_ if name == "less" else dt(PAIRS[a][b])
    assert got.dtype == want
    same = [np.asarray(x).astype(dt(PAIRS[a][b]).np) for x in arrays[1:]]
    np.testing.assert_allclose(got.numpy(), fn(arrays[0], *[rt.constant(x) for x in same]),
                               rtol=2e-3)


FLOAT_FUNCTIONS = {
    "sqrt": rt.sqrt, "rsqrt": rt.rsqrt, "exp": rt.exp, "log": rt.log, "log1p": rt.log1p,
    "sin": rt.sin, "cos": rt.cos, "tan": rt.tan, "tanh": rt.tanh, "sigmoid": rt.sigmoid,
    "softplus": rt.softplus, "divide": lambda x: x / x, "truediv-by-2": lambda x: x / 2,
    "reduce_mean": rt.reduce_mean, "reduce_mean-axis": lambda x: rt.reduce_mean(x, 0),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(FLOAT_FUNCTIONS))
def test_float_functions_of_integers_and_bools_are_float32(name, mode):
    fn = FLOAT_FUNCTIONS[name]
    for short, want in [("b1", "f32"), ("u8", "f32"), ("i8", "f32"), ("i16", "f32"),
                        ("i32", "f32"), ("i64", "f32"), ("u64", "f32"), ("f16", "f16"),
                        ("f64", "f64")]:
        x = np.array([1, 2, 3]).astype(SHORT[short]) if short != "b1" else np.array([True] * 3)
        (got,), static = run(fn, [x], mode)
        assert got.dtype == dt(want), (name, short)
        if static:
            assert static[0][1] == dt(want)
        want_value = fn(rt.constant(x.astype(SHORT[want]))).numpy()
        np.testing.assert_allclose(got.numpy(), want_value, rtol=1e-3)


@pytest.mark.parametrize("name", ["floor", "ceil", "round", "abs", "sign", "square", "relu",
                                  "negative"])
def test_integer_functions_of_integers_keep_the_dtype(name):
    x = rt.constant([1, -2, 3], rt.int8)
    assert getattr(rt, name)(x).dtype == rt.int8


@pytest.mark.parametrize("mode", MODES)
def test_python_numbers_alone_become_default_tensors(mode):
    def f():
        return rt.exp(1), rt.sqrt(2.0), rt.add(1, 2), rt.add(1, 2.5), rt.divide(3, 2)
    results = f() if mode == "eager" else rt.function(f)()
    assert [t.dtype for t in results] == [rt.float32, rt.float32, rt.int32, rt.float32,
                                          rt.float32]
    np.testing.assert_allclose([t.numpy() for t in results], [np.e, np.sqrt(2), 3, 3.5, 1.5],
                               rtol=1e-6)


def test_the_mean_of_integers_is_the_float_mean():
    assert rt.reduce_mean(rt.constant([1, 2])).numpy() == np.float32(1.5)
    assert rt.reduce_mean(rt.constant([-1, -2]), keepdims=True).numpy().tolist() == [-1.5]
    assert rt.reduce_mean(rt.constant([True, True, False, False])).numpy() == np.float32(0.5)


# -- cast ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("value,dtype,expected", [
    (3.7, rt.int32, 3), (-3.7, rt.int32, -3), ([1.5, -2.5, 0.9], rt.int64, [1, -2, 0]),
    (2.0, rt.uint8, 2), (-1, rt.uint8, 255), (300, rt.uint8, 44), (0.5, rt.bool_, True),
    (0.0, rt.bool_, False), (3, rt.float16, 3.0), (0.1, rt.float64, 0.1),
    (True, rt.float32, 1.0)])
def test_cast_of_python_values_converts_as_tensorflow(value, dtype, expected, mode):
    got = rt.cast(value, dtype) if mode == "eager" else rt.function(
        lambda: rt.cast(value, dtype))()
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.numpy(), np.asarray(expected, dtype.np))


def test_cast_of_a_float_tensor_truncates_toward_zero():
    got = rt.cast(rt.constant([3.7, -3.7, 0.5]), rt.int32)
    assert got.numpy().tolist() == [3, -3, 0]


def test_cast_of_a_python_value_that_no_dtype_holds_is_a_type_error():
    with pytest.raises(TypeError, match="cast"):
        rt.cast(2 ** 80, rt.int32)


# -- graphs carry the casts ---------------------------------------------------------------------------

def _mixed(x, n, b):
    return (x + n) * rt.sqrt(n) + rt.reduce_mean(n) + x * b + n / n


MIXED_ARGS = (rt.constant([1.5, 2.5]), rt.constant([1, 4]), rt.constant([True, False]))


def test_a_graph_holds_explicit_casts_so_every_kernel_sees_one_dtype():
    graph = rt.function(_mixed).get_concrete_function(*MIXED_ARGS).graph
    for op in graph.ops:
        if op.opdef.elementwise and op.type != "cast" and len(op.inputs) > 1:
            assert len({t.dtype for t in op.inputs}) == 1, op
    casts = [op for op in graph.ops if op.type == "cast"]
    assert {(op.inputs[0].dtype, op.outputs[0].dtype) for op in casts} == {
        (rt.int32, rt.float32), (rt.bool_, rt.float32)}
    assert graph.outputs[0].dtype == rt.float32


EXECUTORS = ["fast", "plain", "compiled"]


def _executor(name):
    if name == "compiled":
        pytest.importorskip("numba")
    return rt.config.options(executor=name)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_executors_agree_with_eager(executor):
    want = _mixed(*MIXED_ARGS)
    with _executor(executor):
        got = rt.function(_mixed)(*MIXED_ARGS)
    assert got.dtype == want.dtype == rt.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_onnx_export_gives_the_same_dtypes(tmp_path):
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    concrete = rt.function(_mixed).get_concrete_function(*MIXED_ARGS)
    path = str(tmp_path / "mixed.onnx")
    rt.onnx.export(concrete, path)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {i.name: a.numpy() for i, a in zip(session.get_inputs(), MIXED_ARGS)}
    got, = session.run(None, feeds)
    want = concrete(*MIXED_ARGS).numpy()
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)


# -- gradients come back in the input's dtype -------------------------------------------------------

def _mixed_precision_loss(h, w, n):
    return rt.reduce_sum(rt.tanh(h * w) + w / n + rt.sqrt(h) * n)


MIXED_PRECISION = (rt.constant([0.5, 2.0], rt.float16), rt.constant([1.5, -1.0]),
                   rt.constant([2, 3]))


def _expected_gradients():
    h, w, n = [t.numpy().astype(np.float64) for t in MIXED_PRECISION]
    t = np.tanh(h * w)
    return [(1 - t * t) * w + n / (2 * np.sqrt(h)), (1 - t * t) * h + 1 / n]


def test_gradients_of_promoted_inputs_are_in_the_inputs_dtypes_on_a_tape():
    h, w, n = MIXED_PRECISION
    with rt.GradientTape() as tape:
        tape.watch([h, w, n])
        loss = _mixed_precision_loss(h, w, n)
    gh, gw, gn = tape.gradient(loss, [h, w, n])
    assert (gh.dtype, gw.dtype, gn) == (rt.float16, rt.float32, None)
    want_h, want_w = _expected_gradients()
    np.testing.assert_allclose(gh.numpy(), want_h, rtol=2e-3)
    np.testing.assert_allclose(gw.numpy(), want_w, rtol=1e-5)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_gradients_of_promoted_inputs_are_in_the_inputs_dtypes_in_a_graph(executor):
    @rt.function
    def grads(h, w, n):
        return rt.gradients(_mixed_precision_loss(h, w, n), [h, w])

    with _executor(executor):
        gh, gw = grads(*MIXED_PRECISION)
    assert (gh.dtype, gw.dtype) == (rt.float16, rt.float32)
    want_h, want_w = _expected_gradients()
    np.testing.assert_allclose(gh.numpy(), want_h, rtol=2e-3)
    np.testing.assert_allclose(gw.numpy(), want_w, rtol=1e-5)


def test_the_gradient_of_a_cast_casts_back():
    x = rt.constant([1.0, 2.0], rt.float16)
    with rt.GradientTape() as tape:
        tape.watch(x)
        y = rt.cast(x, rt.float64) * 3.0
    g = tape.gradient(y, x)
    assert g.dtype == rt.float16 and g.numpy().tolist() == [3.0, 3.0]
