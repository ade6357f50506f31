"""A two-layer perceptron learns a class boundary no line can draw (the label is whether
a point lies inside a circle), with a training step converted by autograph: the Dense
layers create their variables while the step is first traced, Adam updates them.
Prints the loss of every epoch and the final training accuracy.

    python samples/mlp_classifier.py [--dump]
"""
import sys

import numpy as np

import autograph as ag
import runtime as rt


def make_data(n=400, seed=0):
    """Points in [-1, 1]^2, labelled 1 inside the circle of radius 0.8 (about half)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, 2)).astype(np.float32)
    return x, (np.linalg.norm(x, axis=1) < 0.8).astype(np.int32)


class MLP:
    def __init__(self, hidden=32, classes=2):
        self.hidden = rt.layers.Dense(hidden, activation="tanh", seed=1)
        self.out = rt.layers.Dense(classes, seed=2)

    def __call__(self, x):
        return self.out(self.hidden(x))

    @property
    def variables(self):
        return self.hidden.trainable_variables + self.out.trainable_variables


@ag.convert
def train_step(model, optimizer, x, labels):
    with rt.GradientTape() as tape:
        logits = model(x)
        loss = rt.reduce_mean(rt.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
    grads = tape.gradient(loss, model.variables)
    optimizer.apply_gradients(zip(grads, model.variables))
    return loss


def accuracy(model, x, labels):
    return float(np.mean(np.argmax(model(x).numpy(), axis=1) == labels))


def main(argv):
    if "--dump" in argv:
        print(ag.to_code(train_step))
        return
    rt.random.set_seed(0)                   # the layers' initial weights
    x, labels = make_data()
    model, optimizer = MLP(), rt.optimizers.Adam(0.05)
    batches = rt.data.Dataset.from_tensor_slices((x, labels)).shuffle(400, seed=0).batch(40)
    for epoch in range(1, 41):
        losses = [float(train_step(model, optimizer, bx, by)) for bx, by in batches]
        print(f"epoch {epoch:2d}: loss {np.mean(losses):.4f}")
    print(f"training accuracy: {accuracy(model, x, labels):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
