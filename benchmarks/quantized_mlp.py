"""Inference time of quantized MLPs (`rt.quantize.weights`) against float32.

Two models: the trained classifier of samples/quantize_mlp.py (2-512-512-2) on its 2,000
test points, whose weights are small enough (<= 1 MB) for constant folding to turn the
int8 weights back into float32 constants once, so only the scale multiply is added; and a
784-2048-2048-10 MLP on a batch of 128, whose 16 MB middle weight stays int8 in the
optimized graph and is cast to float32 on every call. Reported, no target.
"""
import numpy as np

import runtime as rt
from harness import Report, main, medians, sample


def variants(float32):
    return {"float32": float32,
            "float16": rt.quantize.weights(float32, mode="float16"),
            "int8": rt.quantize.weights(float32, mode="int8"),
            "int8, one scale per tensor": rt.quantize.weights(float32, per_channel=False)}


def large_mlp(sizes=(784, 2048, 2048, 10)):
    rng = np.random.default_rng(0)
    params = [(rng.normal(size=(a, b)).astype(np.float32) * np.float32(np.sqrt(2 / a)),
               np.zeros(b, np.float32)) for a, b in zip(sizes[:-1], sizes[1:])]

    def forward(x):
        for i, (w, b) in enumerate(params):
            x = rt.matmul(x, w) + b
            x = rt.relu(x) if i < len(params) - 1 else x
        return x
    return rt.function(forward, input_signature=[rt.TensorSpec([None, sizes[0]])])


def measure(quick=False):
    report = Report("MLP inference with quantized weights", "reported",
                    baseline="sample 2-512-512-2, 2000 points: float32")
    classifier = sample("quantize_mlp")
    model = classifier.train()
    points, _ = classifier.make_data(2000, seed=1)
    batch = np.random.default_rng(1).normal(size=(128, 784)).astype(np.float32)
    timed = {}
    for name, fn in variants(classifier.variants(model)["float32"]).items():
        timed[f"sample 2-512-512-2, 2000 points: {name}"] = lambda fn=fn: fn(points)
    for name, fn in variants(large_mlp().get_concrete_function()).items():
        timed[f"784-2048-2048-10, batch 128: {name}"] = lambda fn=fn: fn(batch)
    report.values.update(medians(timed, repeat=5 if quick else 15))
    report.notes.append("ratios are to the sample's float32; compare the large MLP's rows "
                        "with its own float32 row")
    return report


if __name__ == "__main__":
    main(measure)
