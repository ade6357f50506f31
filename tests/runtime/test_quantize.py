"""rt.quantize.weights: the weights of matmuls stored as int8 or float16, the dequantize op,
the fold of its scale into the product, saved graphs and ONNX export of the result."""
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import autograph as ag
import runtime as rt
from runtime import passes
from runtime.ops.quantize_ops import dequantize
from runtime.passes.quantize import int8_weights

from pass_testing import text


def weights(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


W = weights(64, 32)
X = weights(5, 64, seed=1)


def dense(x):
    return rt.matmul(x, W)


def concrete(fn, *specs):
    return rt.function(fn).get_concrete_function(*specs)


def quantized(fn, *specs, **options):
    return rt.quantize.weights(concrete(fn, *specs), **options)


def ops_of(graph):
    return [op.type for g in passes.graphs_in(graph) for op in g.ops]


def without_passes(fn, *args):
    with rt.config.options(optimizations=False):
        return fn(*args).numpy()


# -- the dequantize op ------------------------------------------------------------------------

def test_dequantize_multiplies_each_channel_by_its_scale():
    q = np.array([[1, -2, 3], [127, 0, -127]], np.int8)
    scale = np.array([0.5, 2.0, 0.25], np.float32)
    np.testing.assert_array_equal(dequantize(q, scale, axis=1).numpy(), q * scale)
    np.testing.assert_array_equal(dequantize(q, scale[:2], axis=0).numpy(), q * scale[:2, None])
    np.testing.assert_array_equal(dequantize(q, np.float32(0.5)).numpy(), q * np.float32(0.5))
    assert dequantize(q, scale, axis=-1).dtype == rt.float32


def test_dequantize_shape_rule_names_what_is_wrong():
    q = np.zeros((2, 3), np.int8)
    with pytest.raises(ValueError, match=r"dequantize: the scale must have shape \[3\]"):
        dequantize(q, np.ones(2, np.float32), axis=1)
    with pytest.raises(ValueError, match="dequantize: axis 2 is not a dimension"):
        dequantize(q, np.ones(3, np.float32), axis=2)
    with pytest.raises(ValueError, match="without an axis the scale is one number"):
        dequantize(q, np.ones(3, np.float32))
    with pytest.raises(TypeError, match="quantized values must be integers"):
        dequantize(np.zeros((2, 3), np.float32), np.ones(3, np.float32), axis=1)

    @rt.function
    def traced(q):
        return dequantize(q, np.ones(2, np.float32), axis=1)
    with pytest.raises(ValueError, match=r"dequantize: the scale must have shape \[3\]"):
        traced(q)


def test_dequantize_gradient_flows_to_the_scale_not_the_integers():
    q = rt.constant(np.array([[1, -2, 3], [4, 5, -6]], np.int8))
    scale = rt.constant(np.array([0.5, 2.0, 0.25], np.float32))
    with rt.GradientTape() as tape:
        tape.watch(scale)
        y = rt.reduce_sum(dequantize(q, scale, axis=1) * rt.constant([[1.0], [2.0]]))
    np.testing.assert_allclose(tape.gradient(y, scale).numpy(), [9.0, 8.0, -9.0])
    with rt.GradientTape() as tape:
        tape.watch(scale)
        y = rt.reduce_sum(dequantize(q, scale[0]))
    np.testing.assert_allclose(tape.gradient(y, scale).numpy(), [5.0, 0.0, 0.0])


# -- int8 arithmetic ----------------------------------------------------------------------------

def test_int8_weights_are_symmetric_with_a_scale_per_channel():
    w = np.array([[0.5, -2.0, 0.0], [-1.0, 1.0, 0.0]], np.float32)
    q, scale = int8_weights(w, 1)
    np.testing.assert_allclose(scale, [1.0 / 127, 2.0 / 127, 1.0])       # zeros: scale 1
    np.testing.assert_array_equal(q, [[64, -127, 0], [-127, 64, 0]])
    q, scale = int8_weights(w, None)
    assert scale.shape == () and scale == np.float32(2.0 / 127)
    np.testing.assert_array_equal(q, [[32, -127, 0], [-64, 64, 0]])


def test_rounding_error_is_at_most_half_a_step_and_per_channel_is_finer():
    w = weights(64, 32) * np.linspace(0.01, 3, 32, dtype=np.float32)    # channels differ
    q, scale = int8_weights(w, 1)
    error = np.abs(q * scale - w)
    assert np.all(error <= scale / 2 + 1e-7)
    q1, scale1 = int8_weights(w, None)
    per_tensor = np.abs(q1 * scale1 - w)
    assert np.all(error.max(axis=0) <= per_tensor.max(axis=0) + 1e-7)
    assert error.mean() < per_tensor.mean() / 2


# -- the rewrite --------------------------------------------------------------------------------

def test_int8_rewrite_of_a_constant_weight():
    q = quantized(dense, rt.TensorSpec([None, 64]))
    assert text(q.graph).splitlines() == [
        "graph dense(x: f32[?,64]) {",
        "  const_q: i8[64,32] = const[value=<int8[64, 32]>]()",
        "  const_scale: f32[32] = const[value=<float32[32]>]()",
        "  const_dq: f32[64,32] = dequantize[axis=1](const_q, const_scale)",
        "  matmul: f32[?,32] = matmul(x, const_dq)",
        "  return matmul",
        "}"]
    q_value, scale = (q.graph.get_operation_by_name(n).attrs["value"]
                      for n in ("const_q", "const_scale"))
    want_q, want_scale = int8_weights(W, 1)
    np.testing.assert_array_equal(q_value, want_q)
    np.testing.assert_array_equal(scale, want_scale)
    np.testing.assert_allclose(q(X).numpy(), X @ (want_q * want_scale), rtol=1e-5, atol=1e-5)


def test_the_traced_function_is_left_as_it_was():
    c = concrete(dense, rt.TensorSpec([None, 64]))
    before = text(c.graph)
    rt.quantize.weights(c)
    assert text(c.graph) == before
    np.testing.assert_array_equal(c(X).numpy(), X @ W)


def test_per_tensor_and_float16_rewrites():
    q = quantized(dense, rt.TensorSpec([None, 64]), per_channel=False)
    assert "  const_dq: f32[64,32] = dequantize(const_q, const_scale)" in text(q.graph)
    assert q.graph.get_operation_by_name("const_scale").attrs["value"].shape == ()
    h = quantized(dense, rt.TensorSpec([None, 64]), mode="float16")
    assert text(h.graph).splitlines()[1:3] == [
        "  const_f16: f16[64,32] = const[value=<float16[64, 32]>]()",
        "  const_cast: f32[64,32] = cast[dtype=float32](const_f16)"]
    np.testing.assert_allclose(h(X).numpy(), X @ W.astype(np.float16).astype(np.float32),
                               rtol=1e-5, atol=1e-5)


def test_weights_of_either_operand_and_transposed_take_their_output_channel_axis():
    def f(x, y):
        return (rt.matmul(x, W.T, transpose_b=True), rt.matmul(W.T, y),
                rt.matmul(W, y, transpose_a=True))
    y = weights(64, 3, seed=2)
    q = quantized(f, rt.TensorSpec([None, 64]), rt.TensorSpec([64, 3]))
    axes = [op.attrs.get("axis") for op in q.graph.ops if op.type == "dequantize"]
    assert axes == [0, 0, 1]
    with rt.config.options(optimizations=False):
        unfolded = [t.numpy() for t in q(X, y)]
    for got, exact, want in zip(q(X, y), unfolded, (X @ W, W.T @ y, W.T @ y)):
        np.testing.assert_allclose(got.numpy(), exact, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got.numpy(), want, atol=0.02 * np.abs(want).max())


def test_what_is_not_a_weight_is_left_alone():
    def f(x, z):
        y = rt.matmul(x, W) + weights(32)                           # a bias: read by add
        computed = rt.matmul(x, rt.constant(weights(64, 8)) * 1.0)  # not a constant
        shared = rt.constant(weights(8, 8))
        both = rt.matmul(z, shared) + shared[0]                     # read by getitem too
        small = rt.matmul(z, weights(8, 2))                         # under min_elements
        return y, computed, both, small, rt.matmul(x, weights(64, 64, seed=3))
    specs = rt.TensorSpec([None, 64]), rt.TensorSpec([None, 8])
    with pytest.warns(UserWarning, match="no weights to quantize"):
        rt.quantize.weights(concrete(f, *specs), min_elements=10 ** 6)
    q = quantized(f, *specs, min_elements=32)
    assert [op.outputs[0].shape.as_list() for op in q.graph.ops if op.type == "dequantize"] \
        == [[64, 32], [64, 64]]
    z = weights(3, 8, seed=9)
    for got, want in zip(q(X, z)[1:4], concrete(f, *specs)(X, z)[1:4]):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_a_weight_the_function_returns_is_not_quantized():
    def f(x):
        w = rt.constant(W)
        return rt.matmul(x, w), w
    with pytest.warns(UserWarning, match="no weights to quantize"):
        q = quantized(f, rt.TensorSpec([None, 64]))
    np.testing.assert_array_equal(q(X)[1].numpy(), W)


def test_variables_are_read_now_and_assigned_ones_stay_variables():
    v = rt.Variable(W)
    counter = rt.Variable(weights(64, 64, seed=4))

    @rt.function(input_signature=[rt.TensorSpec([None, 64])])
    def f(x):
        counter.assign(counter * 1.0)
        return rt.matmul(x, v) + rt.reduce_sum(rt.matmul(x, counter))

    q = rt.quantize.weights(f)
    reads = [op.attrs["var"] for op in q.graph.ops if op.type == "read_variable"]
    assert v not in reads and counter in reads
    before = q(X).numpy()
    v.assign(W * 2)
    np.testing.assert_array_equal(q(X).numpy(), before)     # the value at quantization time
    assert not np.allclose(f(X).numpy(), before)


def test_a_function_with_example_arguments_or_its_only_trace():
    f = rt.function(dense)
    q = rt.quantize.weights(f, rt.TensorSpec([None, 64]), mode="float16")
    assert isinstance(q, rt.ConcreteFunction)
    scale = np.abs(X @ W).max()
    np.testing.assert_allclose(q(X).numpy(), X @ W, atol=1e-3 * scale)
    np.testing.assert_allclose(rt.quantize.weights(f)(X).numpy(), X @ W, atol=0.02 * scale)
    converted = ag.convert(dense)
    q = rt.quantize.weights(converted, X)
    np.testing.assert_allclose(q(X).numpy(), X @ W, atol=0.02 * scale)


def test_bad_arguments_are_named():
    c = concrete(dense, rt.TensorSpec([None, 64]))
    with pytest.raises(ValueError, match=r"mode must be one of \('int8', 'float16'\)"):
        rt.quantize.weights(c, mode="int4")
    with pytest.raises(ValueError, match="min_elements must be an int >= 0"):
        rt.quantize.weights(c, min_elements=-1)
    with pytest.raises(TypeError, match="per_channel must be True or False"):
        rt.quantize.weights(c, per_channel="yes")
    with pytest.raises(TypeError, match="give no example arguments"):
        rt.quantize.weights(c, X)
    with pytest.raises(TypeError, match="expects an rt.function or a ConcreteFunction"):
        rt.quantize.weights(dense)
    with pytest.raises(ValueError, match="traces"):
        rt.quantize.weights(rt.function(dense))


def test_weights_inside_loops_and_called_functions():
    v = rt.Variable(weights(16, 16, seed=5) * 0.3)

    @rt.function
    def cell(h):
        return rt.tanh(rt.matmul(h, v))

    @ag.convert
    def rnn(h, n):
        for _ in range(n):
            h = cell(h) + rt.matmul(h, W[:16, :16] * np.float32(0.1))
        return h

    h = weights(3, 16, seed=6)
    c = rnn.get_concrete_function(rt.TensorSpec([None, 16]), rt.constant(4))
    q = rt.quantize.weights(c, min_elements=100)
    assert ops_of(q.graph).count("dequantize") == 2 and "read_variable" not in ops_of(q.graph)
    np.testing.assert_allclose(q(h, 4).numpy(), c(h, 4).numpy(), atol=0.02)
    np.testing.assert_allclose(q(h, 4).numpy(), without_passes(q, h, 4), rtol=1e-5, atol=1e-5)


def test_the_hidden_outputs_for_gradients_drop_the_quantized_reads():
    v, b = rt.Variable(W), rt.Variable(weights(32))

    @rt.function
    def inner(x):
        return rt.matmul(x, v) + b

    @rt.function
    def outer(x):
        return inner(x) * 2.0

    c = outer.get_concrete_function(rt.TensorSpec([None, 64]))
    assert len(c.graph.hidden_outputs) == 2
    q = rt.quantize.weights(c)
    call = next(op for op in q.graph.ops if op.type == "call")
    assert len(q.graph.hidden_outputs) == 1 and len(call.outputs) == 2
    assert call.attrs["f"].hidden_outputs[0].op.attrs["var"] is b
    x = rt.constant(X)
    with rt.GradientTape() as tape:
        tape.watch(x)
        y = rt.reduce_sum(q(x) ** 2)
    gx, gb = tape.gradient(y, [x, b])
    q_value, scale = int8_weights(W, 1)
    dq = q_value * scale
    out = 2 * (X @ dq + b.numpy())
    np.testing.assert_allclose(gx.numpy(), 4 * out @ dq.T, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(gb.numpy(), 4 * out.sum(axis=0), rtol=1e-4, atol=1e-3)


# -- the fold -----------------------------------------------------------------------------------

def test_the_fold_moves_the_scale_after_the_product():
    q = quantized(dense, rt.TensorSpec([None, 64]))
    folded = text(passes.optimize(q.graph, ["quantize", "pruning"]))
    assert folded.splitlines() == [
        "graph dense(x: f32[?,64]) {",
        "  const_q: i8[64,32] = const[value=<int8[64, 32]>]()",
        "  const_scale: f32[32] = const[value=<float32[32]>]()",
        "  const_dq_cast: f32[64,32] = cast[dtype=float32](const_q)",
        "  matmul_1: f32[?,32] = matmul(x, const_dq_cast)",
        "  matmul_2: f32[?,32] = multiply(matmul_1, const_scale)",
        "  return matmul_2",
        "}"]


def test_folded_equals_dequantize_then_matmul_to_float32_rounding():
    for options in ({}, {"per_channel": False}):
        q = quantized(dense, rt.TensorSpec([None, 64]), **options)
        q_value, scale = int8_weights(W, 1 if options == {} else None)
        exact = X.astype(np.float64) @ (q_value * scale.astype(np.float64))
        folded, unfolded = q(X).numpy(), without_passes(q, X)
        eps = np.finfo(np.float32).eps * np.abs(X).sum(axis=1, keepdims=True) * np.abs(
            q_value * scale).max() * 4
        assert np.all(np.abs(folded - exact) <= eps)
        assert np.all(np.abs(unfolded - exact) <= eps)
        assert np.all(np.abs(folded - unfolded) <= 2 * eps)


def test_large_weights_stay_int8_in_the_optimized_graph():
    big = weights(1024, 512)

    def f(x):
        return rt.matmul(x, big)
    q = quantized(f, rt.TensorSpec([None, 1024]))
    optimized = passes.optimize(q.graph, rt.config.DEFAULT_PASSES)
    consts = {op.outputs[0].dtype for op in optimized.ops if op.type == "const"}
    assert rt.int8 in consts and "cast" in ops_of(optimized)
    small = passes.optimize(quantized(dense, rt.TensorSpec([None, 64])).graph,
                            rt.config.DEFAULT_PASSES)
    assert {op.outputs[0].dtype for op in small.ops if op.type == "const"} == {rt.float32}


def test_the_quantized_graph_draws_its_dequantize_ops():
    dot = rt.viz.to_dot(quantized(dense, rt.TensorSpec([None, 64])).graph)
    assert "dequantize" in dot and "i8[64,32]" in dot


# -- saved graphs ---------------------------------------------------------------------------------

def test_saved_quantized_graphs_keep_int8_and_float16_arrays(tmp_path):
    big = weights(256, 256)

    def f(x):
        return rt.matmul(x, big)
    c = concrete(f, rt.TensorSpec([None, 256]))
    sizes = {}
    for name, fn in [("float32", c), ("int8", rt.quantize.weights(c)),
                     ("float16", rt.quantize.weights(c, mode="float16"))]:
        path = tmp_path / name
        rt.saved.save(fn, str(path))
        sizes[name] = sum(os.path.getsize(path / n) for n in os.listdir(path))
        with np.load(path / "arrays.npz") as arrays:
            kinds = {arrays[k].dtype.name for k in arrays.files}
        assert {"float32": "float32", "int8": "int8", "float16": "float16"}[name] in kinds
        loaded = rt.saved.load(str(path))
        x = weights(3, 256, seed=7)
        np.testing.assert_array_equal(loaded(x).numpy(), fn(x).numpy())
        assert text(loaded.graph) == text(fn.graph)
    assert sizes["float32"] / sizes["int8"] > 3.5
    assert sizes["float32"] / sizes["float16"] > 1.9


def test_loading_a_quantized_graph_needs_only_the_runtime(tmp_path):
    path = str(tmp_path / "q")
    q = quantized(dense, rt.TensorSpec([None, 64]))
    rt.saved.save(q, path)
    doc = json.loads((tmp_path / "q" / "graph.json").read_text())
    assert not doc.get("op_modules")
    np.save(str(tmp_path / "x.npy"), X)
    code = ("import sys, numpy as np, runtime as rt\n"
            "f = rt.saved.load(sys.argv[1])\n"
            "np.save(sys.argv[2], f(np.load(sys.argv[3])).numpy())\n"
            "assert 'runtime.quantize' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code, path, str(tmp_path / "y.npy"),
                    str(tmp_path / "x.npy")], check=True)
    np.testing.assert_array_equal(np.load(str(tmp_path / "y.npy")), q(X).numpy())


# -- ONNX -----------------------------------------------------------------------------------------

def onnx_outputs(fn, args, path, level="basic"):
    ort = pytest.importorskip("onnxruntime")
    model = rt.onnx.export(fn, str(path))
    options = ort.SessionOptions()
    # Extended optimizations replace DequantizeLinear + MatMul by an int8 product that
    # also quantizes the activations; the basic level runs the QDQ graph as written.
    options.graph_optimization_level = {
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}[level]
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    feeds = {i.name: np.asarray(a) for i, a in zip(session.get_inputs(), args)}
    return model, session.run(None, feeds)


def test_onnx_export_writes_qdq_form(tmp_path):
    onnx = pytest.importorskip("onnx")
    q = quantized(dense, rt.TensorSpec([None, 64]))
    model, (got,) = onnx_outputs(q, [X], tmp_path / "q.onnx")
    onnx.checker.check_model(model)
    nodes = [n.op_type for n in model.graph.node]
    assert nodes[:2] == ["DequantizeLinear", "MatMul"]
    dq = model.graph.node[0]
    assert {a.name: onnx.helper.get_attribute_value(a) for a in dq.attribute} == {"axis": 1}
    initializers = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    assert initializers[dq.input[0]].dtype == np.int8
    assert initializers[dq.input[0]].shape == (64, 32)
    assert initializers[dq.input[1]].dtype == np.float32
    assert initializers[dq.input[2]].dtype == np.int8 and not initializers[dq.input[2]].any()
    assert model.opset_import[0].version >= 13
    np.testing.assert_allclose(got, q(X).numpy(), rtol=1e-5, atol=1e-5)


def test_onnx_per_tensor_and_float16(tmp_path):
    onnx = pytest.importorskip("onnx")
    q = quantized(dense, rt.TensorSpec([None, 64]), per_channel=False)
    model, (got,) = onnx_outputs(q, [X], tmp_path / "t.onnx")
    dq = model.graph.node[0]
    assert dq.op_type == "DequantizeLinear" and not dq.attribute
    np.testing.assert_allclose(got, q(X).numpy(), rtol=1e-5, atol=1e-5)
    h = quantized(dense, rt.TensorSpec([None, 64]), mode="float16")
    model, (got,) = onnx_outputs(h, [X], tmp_path / "h.onnx")
    assert [n.op_type for n in model.graph.node][:2] == ["Cast", "MatMul"]
    initializers = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    assert initializers[model.graph.node[0].input[0]].dtype == np.float16
    np.testing.assert_allclose(got, h(X).numpy(), rtol=1e-5, atol=1e-5)


def test_onnx_quantized_file_is_smaller(tmp_path):
    pytest.importorskip("onnx")
    big = weights(256, 256)

    def f(x):
        return rt.matmul(x, big)
    c = concrete(f, rt.TensorSpec([None, 256]))
    rt.onnx.export(c, str(tmp_path / "f.onnx"))
    rt.onnx.export(rt.quantize.weights(c), str(tmp_path / "q.onnx"))
    assert os.path.getsize(tmp_path / "f.onnx") > 3.5 * os.path.getsize(tmp_path / "q.onnx")


def test_onnx_weights_in_loops_are_initializers_read_from_the_body(tmp_path):
    pytest.importorskip("onnx")
    w = W[:32, :32] * np.float32(0.2)

    @ag.convert
    def loop(h, n):
        for _ in range(n):
            h = rt.tanh(rt.matmul(h, w))      # a constant of the loop's body
        return h
    q = rt.quantize.weights(loop, rt.TensorSpec([None, 32]), rt.constant(3))
    assert ops_of(q.graph).count("dequantize") == 1
    h = weights(2, 32, seed=8)
    _, (got,) = onnx_outputs(q, [h, np.int32(3)], tmp_path / "l.onnx")
    np.testing.assert_allclose(got, q(h, 3).numpy(), rtol=1e-5, atol=1e-5)


def test_warnings_are_not_raised_for_a_function_with_weights():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quantized(dense, rt.TensorSpec([None, 64]))
