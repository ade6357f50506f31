"""The trained classifier of samples/quantize_mlp.py, quantized: its files shrink, its
accuracy and logits stay, int8 per channel is closer than per tensor, and onnxruntime runs
the exported QDQ models with our results."""
import os
import runpy

import numpy as np
import pytest

import runtime as rt

SAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "samples", "quantize_mlp.py")


@pytest.fixture(scope="module")
def sample():
    return runpy.run_path(SAMPLE)


@pytest.fixture(scope="module")
def trained(sample):
    """(the sample's namespace, its quantized variants, test points, labels)"""
    model = sample["train"]()
    fns = sample["variants"](model)
    fns["int8 per tensor"] = rt.quantize.weights(fns["float32"], per_channel=False)
    x, labels = sample["make_data"](2000, seed=1)
    return sample, fns, x, labels


def logits(trained, name):
    _, fns, x, _ = trained
    return fns[name](x).numpy()


def test_saved_files_shrink(trained):
    sample, fns, _, _ = trained
    sizes = {name: sample["saved_size"](fns[name]) for name in ("float32", "float16", "int8")}
    assert sizes["float32"] / sizes["int8"] >= 3.5
    assert sizes["float32"] / sizes["float16"] >= 1.9


def test_accuracy_stays(trained):
    sample, _, _, labels = trained
    accuracy = {name: sample["accuracy"](logits(trained, name), labels)
                for name in ("float32", "float16", "int8")}
    assert accuracy["float32"] > 0.9                       # a trained classifier
    assert accuracy["float32"] - accuracy["int8"] <= 0.01
    assert accuracy["float32"] - accuracy["float16"] <= 0.001


@pytest.mark.parametrize("name", ["float16", "int8", "int8 per tensor"])
def test_logits_point_the_same_way(trained, name):
    reference, got = logits(trained, "float32").ravel(), logits(trained, name).ravel()
    cosine = reference @ got / (np.linalg.norm(reference) * np.linalg.norm(got))
    assert cosine >= 0.999


def test_per_channel_error_is_no_larger_than_per_tensor(trained):
    reference = logits(trained, "float32")
    per_channel = np.abs(logits(trained, "int8") - reference)
    per_tensor = np.abs(logits(trained, "int8 per tensor") - reference)
    assert per_channel.mean() <= per_tensor.mean()
    assert per_channel.max() <= per_tensor.max()


@pytest.mark.parametrize("name", ["float16", "int8"])
def test_onnxruntime_runs_the_exported_quantized_models(trained, name, tmp_path):
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    _, fns, x, _ = trained
    path = str(tmp_path / f"{name}.onnx")
    model = rt.onnx.export(fns[name], path)
    onnx.checker.check_model(model)
    types = [n.op_type for n in model.graph.node]
    assert types.count("DequantizeLinear" if name == "int8" else "Cast") == 3
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    got, = session.run(None, {session.get_inputs()[0].name: x})
    np.testing.assert_allclose(got, logits(trained, name), rtol=1e-4, atol=1e-4)
