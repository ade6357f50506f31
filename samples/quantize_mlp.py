"""Weight quantization of a trained classifier: the MLP of mlp_classifier.py, wider (two
hidden ReLU layers of 512, so that its weights are most of its file), trained on the same
points-in-a-circle task, then quantized to float16 and to int8 (`rt.quantize.weights`).
Prints, for float32 / float16 / int8, the size of the saved graph, the accuracy on a test
set and the largest difference of the logits from float32's.

    python samples/quantize_mlp.py [--dump]
"""
import math
import os
import sys
import tempfile

import numpy as np

import autograph as ag
import runtime as rt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlp_classifier  # noqa: E402 - the classifier's task and step

make_data = mlp_classifier.make_data
# A graph function of its own: its first trace creates this model's variables (a graph
# function creates variables on its first trace only, so mlp_classifier.train_step, once
# traced for that sample's model, cannot make new ones)
train_step = ag.convert(mlp_classifier.train_step.python_function)

HIDDEN = (512, 512)


def glorot_normal(seed):
    """Normal with variance 2 / (fan_in + fan_out) (Keras' glorot_normal)."""
    def init(shape, dtype):
        return rt.random.normal(shape, stddev=math.sqrt(2.0 / (shape[-2] + shape[-1])),
                                dtype=dtype, seed=seed)
    return init


class WideMLP:
    def __init__(self, hidden=HIDDEN, classes=2):
        self.layers = [rt.layers.Dense(units, activation="relu",
                                       kernel_initializer=glorot_normal(1 + i))
                       for i, units in enumerate(hidden)]
        self.layers.append(rt.layers.Dense(classes,
                                           kernel_initializer=glorot_normal(len(hidden) + 1)))

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    @property
    def variables(self):
        return [v for layer in self.layers for v in layer.trainable_variables]


def train(epochs=5):
    """The classifier trained on mlp_classifier's 400 points (Adam, batches of 40)."""
    rt.random.set_seed(0)
    x, labels = make_data()
    model, optimizer = WideMLP(), rt.optimizers.Adam(0.003)
    batches = rt.data.Dataset.from_tensor_slices((x, labels)).shuffle(400, seed=0).batch(40)
    for _ in range(epochs):
        for bx, by in batches:
            train_step(model, optimizer, bx, by)
    return model


def variants(model):
    """{"float32": the model's forward function, "float16": ..., "int8": ...}, each a
    ConcreteFunction of a batch of points."""
    forward = rt.function(lambda x: model(x), input_signature=[rt.TensorSpec([None, 2])])
    float32 = forward.get_concrete_function()
    return {"float32": float32,
            "float16": rt.quantize.weights(float32, mode="float16"),
            "int8": rt.quantize.weights(float32, mode="int8")}


def saved_size(fn):
    """Bytes of the directory `rt.saved.save(fn, ...)` writes."""
    with tempfile.TemporaryDirectory() as path:
        rt.saved.save(fn, path)
        return sum(os.path.getsize(os.path.join(path, name)) for name in os.listdir(path))


def accuracy(logits, labels):
    return float(np.mean(np.argmax(logits, axis=1) == labels))


def main(argv):
    if "--dump" in argv:
        print(ag.to_code(train_step))
        return
    model = train()
    x, labels = make_data(2000, seed=1)                 # test points
    fns = variants(model)
    reference = fns["float32"](x).numpy()
    print(f"{'weights':<8} {'saved size':>12} {'accuracy':>9} {'largest difference':>19}")
    for name, fn in fns.items():
        logits = fn(x).numpy()
        print(f"{name:<8} {saved_size(fn):>10} B {accuracy(logits, labels):>9.4f} "
              f"{np.max(np.abs(logits - reference)):>19.2e}")


if __name__ == "__main__":
    main(sys.argv[1:])
