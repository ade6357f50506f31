"""rt.onnx.export: ONNX models of our graphs give our results in onnxruntime (optional extra)."""
import numpy as np
import pytest

import runtime as rt

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from test_saved import many_ops  # noqa: E402 - after the skips
from test_saved_samples import sample_functions  # noqa: E402


def run_onnx(concrete, args, tmp_path):
    path = str(tmp_path / "model.onnx")
    model = rt.onnx.export(concrete, path)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feeds = {i.name: np.asarray(a) for i, a in zip(session.get_inputs(), args)}
    return model, session.run(None, feeds)


def assert_matches(concrete, args, tmp_path, atol=1e-5):
    model, got = run_onnx(concrete, args, tmp_path)
    want = [t.numpy() for t in rt.nest.flatten(concrete(*args))]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == np.shape(w)
        np.testing.assert_allclose(g, w, atol=atol)
    return model


def node_types(graph):
    types = set()
    for node in graph.node:
        types.add(node.op_type)
        for attr in node.attribute:
            if attr.g.node:
                types |= node_types(attr.g)
    return types


@pytest.mark.parametrize("name", ["collatz", "beam_search", "dynamic_rnn"])
def test_samples_with_supported_ops_match_in_onnxruntime(name, tmp_path):
    concrete, args = sample_functions()[name]
    arrays = [np.asarray(a) for a in args]
    model = assert_matches(concrete, arrays, tmp_path)
    assert "Loop" in node_types(model.graph)
    if name == "beam_search":                  # another path: the early return
        assert_matches(concrete, arrays[:2] + [np.float32(-50.0)], tmp_path)


def test_cond_becomes_if_and_while_becomes_loop(tmp_path):
    def f(x, n):
        _, y = rt.while_loop(lambda i, y: i < n, lambda i, y: (
            i + 1, rt.cond(rt.reduce_sum(y) > 10.0, lambda: y - 1.0, lambda: y * x)), [0, x])
        return y

    concrete = rt.function(f).get_concrete_function(rt.constant([1.0, 2.0]),
                                                    rt.constant(0))
    for n in (0, 1, 5):
        model = assert_matches(concrete, [np.array([1.0, 2.0], np.float32), np.int32(n)],
                               tmp_path)
    assert {"If", "Loop"} <= node_types(model.graph)


def test_many_ops(tmp_path):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    concrete = rt.function(many_ops).get_concrete_function(x, rt.constant(4))
    assert_matches(concrete, [x, np.int32(4)], tmp_path)
    assert_matches(concrete, [x - 3, np.int32(1)], tmp_path)


_V = rt.Variable([1.0, -1.0, 0.5])


def more_ops(a, i, n):
    v = _V
    parts = rt.unstack(a, axis=1)
    lo, hi = rt.constant(-1.0), rt.constant(1.5)
    return [i // 3, i % 3, i // -3, i % -3, a // 0.7, a % 0.7,           # Python's signs
            rt.squeeze(rt.expand_dims(a, 0)), rt.reduce_any(a > 1.0, axis=0),
            rt.reduce_all(a > -5.0), rt.reduce_prod(a, axis=1), rt.reduce_mean(a),
            rt.reduce_min(a, axis=[0, 1], keepdims=True), rt.argmin(a, axis=0),
            rt.range(0, n, 2), rt.fill(rt.stack([n, 2]), 7), rt.zeros_like(a[:, :n]),
            rt.broadcast_to(parts[0][:, None], [2, 3]), rt.shape(a[:n]), rt.size(a[:n]),
            rt.cast(a, rt.int32), rt.clip_by_value(a, lo, hi), rt.where(a > 0, a, -a),
            rt.sign(a), rt.rsqrt(rt.abs(a) + 1), rt.log1p(rt.abs(a)),
            rt.is_finite(a / 0.0), a[n - 2:n, ::-1], a[..., 1], a[i % 2],
            rt.add_n([a, a, a]), rt.transpose(a), rt.matmul(a, a, transpose_a=True),
            rt.tile(a, [2, 1]), v * a[0], rt.concat(parts, 0), rt.nn.log_softmax(a)]


def test_more_ops_and_python_division_semantics(tmp_path):
    a = np.array([[1.5, -2.25, 3.0], [-0.5, 4.0, 2.5]], np.float32)
    concrete = rt.function(more_ops).get_concrete_function(a, rt.constant(7), rt.constant(2))
    assert_matches(concrete, [a, np.int32(7), np.int32(2)], tmp_path)
    assert_matches(concrete, [a, np.int32(-7), np.int32(1)], tmp_path)


def test_unknown_dimensions_become_symbolic(tmp_path):
    f = rt.function(lambda x: rt.reduce_sum(x * 2.0, axis=1),
                    input_signature=[rt.TensorSpec([None, 3], rt.float32)])
    concrete = f.get_concrete_function()
    for rows in (1, 4):
        assert_matches(concrete, [np.ones((rows, 3), np.float32)], tmp_path)


def test_nested_functions_are_inlined(tmp_path):
    inner = rt.function(lambda a: a * 2.0 + 1.0)
    concrete = rt.function(lambda x: inner(x) - inner(-x)).get_concrete_function(
        rt.constant([1.0, 2.0]))
    model = assert_matches(concrete, [np.array([1.0, 2.0], np.float32)], tmp_path)
    assert "call" not in node_types(model.graph)


def test_unsupported_ops_are_listed_with_their_lines(tmp_path):
    concrete, _ = sample_functions()["nested_functions"]
    with pytest.raises(rt.onnx.ExportError,
                       match=r"1 operation\(s\) .*: print \('print' at nested_functions\.py:26\)"):
        rt.onnx.export(concrete, str(tmp_path / "m.onnx"))

    def f(x):
        return rt.random.uniform([2], seed=1) + rt.py_function(np.sort, [x], rt.float32) + x[x > 0]
    concrete = rt.function(f).get_concrete_function(rt.constant([1.0, 2.0]))
    with pytest.raises(rt.onnx.ExportError) as info:
        rt.onnx.export(concrete, str(tmp_path / "m.onnx"))
    message = str(info.value)
    for part in ("random_uniform ('random_uniform' at test_onnx.py:",
                 "py_function ('py_function' at test_onnx.py:",
                 "getitem with an array or boolean index"):
        assert part in message


def test_a_gradient_through_cond_exports_and_one_through_while_is_listed(tmp_path):
    def through_cond(x):
        return rt.gradients(rt.cond(x > 1.0, lambda: x * x, lambda: -x), x)

    concrete = rt.function(through_cond).get_concrete_function(rt.constant(2.0))
    for value in (2.0, 0.5):
        assert_matches(concrete, [np.array(value, np.float32)], tmp_path)

    def through_while(x):
        return rt.gradients(rt.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x),
                                          [0, x])[1], x)

    concrete = rt.function(through_while).get_concrete_function(rt.constant(2.0))
    with pytest.raises(rt.onnx.ExportError, match="while with values collected per iteration"):
        rt.onnx.export(concrete, str(tmp_path / "m.onnx"))


# -- exporting a graph function (not only a ConcreteFunction) ----------------------------------

def scaled_relu(x):
    return rt.relu(x) * 2.0


def run_file(path, feeds):
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return session.run(None, dict(zip([i.name for i in session.get_inputs()], feeds)))


def test_a_function_exports_traced_on_example_arguments(tmp_path):
    path = str(tmp_path / "f.onnx")
    x = np.array([-1.0, 2.0], np.float32)
    rt.onnx.export(rt.function(scaled_relu), path, rt.constant(x))
    np.testing.assert_allclose(run_file(path, [x])[0], [0.0, 4.0])


def test_a_function_exports_on_an_input_signature_with_unknown_dimensions(tmp_path):
    import autograph as ag
    path = str(tmp_path / "f.onnx")
    rt.onnx.export(ag.convert(scaled_relu), path,
                   input_signature=[rt.TensorSpec([None], rt.float32)])
    for n in (1, 4):
        x = np.linspace(-1, 1, n).astype(np.float32)
        np.testing.assert_allclose(run_file(path, [x])[0], np.maximum(x, 0) * 2.0)


def test_a_function_with_its_own_signature_or_one_trace_needs_no_arguments(tmp_path):
    signed = rt.function(scaled_relu, input_signature=[rt.TensorSpec([3])])
    assert rt.onnx.to_model(signed).graph.input[0].type.tensor_type.shape.dim[0].dim_value == 3
    traced = rt.function(scaled_relu)
    traced(rt.constant([1.0]))
    assert rt.onnx.to_model(traced).graph.input[0].type.tensor_type.shape.dim[0].dim_value == 1


def test_a_function_without_arguments_to_trace_on_says_what_to_give(tmp_path):
    with pytest.raises(TypeError, match=r"export\(fn, path, \*example_args\) or "
                                        r"input_signature="):
        rt.onnx.export(rt.function(scaled_relu), str(tmp_path / "f.onnx"))
    concrete = rt.function(scaled_relu).get_concrete_function(rt.constant([1.0]))
    with pytest.raises(TypeError, match="already traced"):
        rt.onnx.export(concrete, str(tmp_path / "f.onnx"), rt.constant([1.0]))
