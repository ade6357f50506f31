"""Linear regression, the eager-execution seed's example: fit y = x @ w + b by gradient
descent. First eagerly (a GradientTape per step, op by op), then with the same training
step converted by autograph (each step runs as one graph); both recover the weights
that generated the data and give the same losses.

    python samples/linear_regression.py [--dump]
"""
import sys

import numpy as np

import autograph as ag
import runtime as rt

TRUE_W = np.array([[2.0], [-3.4], [0.5]], np.float32)
TRUE_B = 4.2


def make_data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    y = (x @ TRUE_W + TRUE_B + rng.normal(scale=0.01, size=(n, 1))).astype(np.float32)
    return x, y


class Model:
    def __init__(self):
        self.w = rt.Variable(np.zeros((3, 1), np.float32), name="w")
        self.b = rt.Variable(0.0, name="b")
        self.variables = [self.w, self.b]

    def __call__(self, x):
        return rt.matmul(x, self.w) + self.b


def loss_fn(model, x, y):
    return rt.reduce_mean(rt.square(model(x) - y))


def train_step(model, optimizer, x, y):
    with rt.GradientTape() as tape:
        loss = loss_fn(model, x, y)
    grads = tape.gradient(loss, model.variables)
    optimizer.apply_gradients(zip(grads, model.variables))
    return loss


def fit(step, epochs=20):
    """Train a new model with `step`; returns it and the loss of every step."""
    x, y = make_data()
    model, optimizer = Model(), rt.optimizers.SGD(0.1, momentum=0.5)
    batches = rt.data.Dataset.from_tensor_slices((x, y)).shuffle(200, seed=1).batch(20)
    losses = []
    for _ in range(epochs):
        for bx, by in batches:
            losses.append(float(step(model, optimizer, bx, by)))
    return model, losses


def main(argv):
    if "--dump" in argv:
        print(ag.to_code(train_step))
        return
    eager_model, eager_losses = fit(train_step)
    graph_model, graph_losses = fit(ag.convert(train_step))
    for name, model, losses in [("eager", eager_model, eager_losses),
                                ("converted", graph_model, graph_losses)]:
        w = ", ".join(f"{v:.3f}" for v in model.w.numpy().ravel())
        print(f"{name:>9}: w = [{w}], b = {float(model.b.numpy()):.3f}, "
              f"final loss {losses[-1]:.6f}")
    recovered = all(np.allclose(m.w.numpy(), TRUE_W, atol=1e-2)
                    and abs(float(m.b.numpy()) - TRUE_B) < 1e-2
                    for m in (eager_model, graph_model))
    print("recovered the generating weights:", recovered)
    print("same losses eagerly and converted:", np.allclose(eager_losses, graph_losses,
                                                            rtol=1e-5, atol=1e-7))


if __name__ == "__main__":
    main(sys.argv[1:])
