"""Training utilities: optimizers against numpy references, Dense layers, and a
converted training step (with a graph loop) giving the eager step's losses."""
import numpy as np
import pytest

import autograph as ag
import runtime as rt

C = np.array([0.5, -2.0, 1.0])


def run_steps(optimizer, steps=3, traced=False):
    """Minimize sum(w * C) + sum(w^2)/2 from w = 1 (gradient C + w); returns w per step."""
    w = rt.Variable(np.ones(3))

    def step():
        with rt.GradientTape() as tape:
            loss = rt.reduce_sum(w * C) + rt.reduce_sum(w * w) / 2
        optimizer.apply_gradients([(tape.gradient(loss, w), w)])

    step = rt.function(step) if traced else step
    history = []
    for _ in range(steps):
        step()
        history.append(w.numpy())
    return history


def reference(update, steps=3):
    """w per step of a numpy update(w, grad, state, t) -> (w, state)."""
    w, state, history = np.ones(3), None, []
    for t in range(1, steps + 1):
        w, state = update(w, C + w, state, t)
        history.append(w)
    return history


def sgd(lr, momentum=0.0, nesterov=False):
    def update(w, g, v, t):
        v = np.zeros(3) if v is None else v
        v = momentum * v - lr * g
        return (w + momentum * v - lr * g if nesterov else w + v), v
    return update


def adam(lr, b1=0.9, b2=0.999, eps=1e-7):
    def update(w, g, state, t):
        m, v = (np.zeros(3), np.zeros(3)) if state is None else state
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        step = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        return w - step * m / (np.sqrt(v) + eps), (m, v)
    return update


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("make, update", [
    (lambda: rt.optimizers.SGD(0.1), sgd(0.1)),
    (lambda: rt.optimizers.SGD(0.1, momentum=0.9), sgd(0.1, 0.9)),
    (lambda: rt.optimizers.SGD(0.1, momentum=0.9, nesterov=True), sgd(0.1, 0.9, True)),
    (lambda: rt.optimizers.SGD(lambda: 0.1), sgd(0.1)),
    (lambda: rt.optimizers.Adam(0.1), adam(0.1)),
    (lambda: rt.optimizers.Adam(0.01, beta_1=0.5, beta_2=0.9, epsilon=1e-3),
     adam(0.01, 0.5, 0.9, 1e-3)),
], ids=["sgd", "momentum", "nesterov", "callable-lr", "adam", "adam-hyper"])
def test_optimizer_updates_match_numpy(make, update, traced):
    optimizer = make()
    for got, want in zip(run_steps(optimizer, traced=traced), reference(update)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert int(optimizer.iterations.numpy()) == 3


def test_minimize_and_slots():
    w = rt.Variable([3.0, -1.0])
    opt = rt.optimizers.SGD(0.25, momentum=0.5)
    loss = opt.minimize(lambda: rt.reduce_sum(w * w), [w])
    assert float(loss) == 10.0 and w.numpy().tolist() == [1.5, -0.5]
    assert opt.get_slot(w, "momentum").numpy().tolist() == [-1.5, 0.5]
    with rt.GradientTape() as tape:
        value = rt.reduce_sum(w * w)
    opt.minimize(value, [w], tape=tape)              # velocity -1.5, 0.5 again
    assert w.numpy().tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="no gradient"):
        opt.apply_gradients([(None, w)])


def test_dense_creates_its_variables_on_first_call():
    rt.random.set_seed(3)
    layer = rt.layers.Dense(4, activation="relu")
    assert layer.variables == []
    y = layer(np.ones((2, 3), np.float32))
    assert y.shape == (2, 4) and np.all(y.numpy() >= 0)
    kernel, bias = layer.trainable_variables
    assert kernel.shape == (3, 4) and bias.numpy().tolist() == [0.0] * 4
    assert np.all(np.abs(kernel.numpy()) <= np.sqrt(6 / 7))
    layer(np.ones((5, 3), np.float32))
    assert layer.variables == [kernel, bias]
    with pytest.raises(ValueError, match="activation"):
        rt.layers.Dense(2, activation="swish")


def test_dense_computes_in_its_dtype():
    layer = rt.layers.Dense(2)
    with rt.GradientTape() as tape:
        y = rt.reduce_sum(layer(np.ones((3, 4))))           # float64 data, float32 layer
    assert y.dtype == rt.float32
    assert [g.dtype for g in tape.gradient(y, layer.trainable_variables)] == [rt.float32] * 2


def test_dense_inside_a_converted_function_is_built_once():
    layer = rt.layers.Dense(2, use_bias=False, kernel_initializer=lambda s, d: np.ones(s, d.np))

    @ag.convert
    def apply(x):
        return layer(x) * 2.0

    x = rt.constant([[1.0, 2.0]])
    assert apply(x).numpy().tolist() == [[6.0, 6.0]]
    layer.kernel.assign([[1.0, 0.0], [0.0, 1.0]])
    assert apply(x).numpy().tolist() == [[2.0, 4.0]]
    assert len(layer.variables) == 1 and apply.experimental_get_tracing_count() == 1


# -- a converted training step with a graph loop gives the eager step's losses ----------------

class SequenceModel:
    """Reads the first n steps of a sequence (a tensor loop), classifies the last state."""

    def __init__(self):
        self.cell = rt.layers.Dense(8, activation="tanh", seed=11)
        self.head = rt.layers.Dense(3, seed=12)

    def __call__(self, xs, n):
        h = rt.zeros([xs.shape[1], 8])
        for t in rt.range(n):
            h = self.cell(rt.concat([xs[t], h], 1))
        return self.head(h)

    @property
    def variables(self):
        return self.cell.trainable_variables + self.head.trainable_variables


def train_step(model, optimizer, xs, n, labels):
    with rt.GradientTape() as tape:
        logits = model(xs, n)
        loss = rt.reduce_mean(rt.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
    grads = tape.gradient(loss, model.variables)
    optimizer.apply_gradients(zip(grads, model.variables))
    return loss


def losses_of(step, steps=20):
    rt.random.set_seed(0)
    rng = np.random.default_rng(0)
    model, optimizer = SequenceModel(), rt.optimizers.Adam(0.05)
    losses = []
    for i in range(steps):
        n = 2 + i % 3                           # the trip count changes from step to step
        xs = rng.normal(size=(4, 4, 2)).astype(np.float32)
        labels = (np.sum(xs[:n, :, 0], axis=0) > 0).astype(np.int64) + (xs[n - 1, :, 1] > 1)
        losses.append(float(step(model, optimizer, rt.constant(xs), rt.constant(n),
                                  rt.constant(labels))))
    return losses


def test_converted_training_step_matches_the_eager_step():
    converted = ag.convert(train_step)
    eager, graph = losses_of(train_step), losses_of(converted)
    np.testing.assert_allclose(graph, eager, rtol=1e-5)
    assert eager[-1] < eager[0] and converted.experimental_get_tracing_count() == 1
    loops = [op for op in converted.concrete_functions[0].graph.ops if op.type == "while"]
    assert len(loops) == 2                       # the model's loop and its backward loop


def test_a_training_loop_inside_a_converted_function():
    """The loop is a graph loop (n is a tensor): each iteration records a tape and applies
    Adam, whose slots are created while the loop body is traced."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3
    w, b = rt.Variable(np.zeros((3, 1), np.float32)), rt.Variable(0.0)
    optimizer = rt.optimizers.Adam(0.1)

    @ag.convert
    def train(x, y, n):
        loss = 0.0
        for _ in rt.range(n):
            with rt.GradientTape() as tape:
                loss = rt.reduce_mean(rt.square(rt.matmul(x, w) + b - y))
            optimizer.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
        return loss

    assert float(train(x, y, rt.constant(300))) < 1e-8
    np.testing.assert_allclose(w.numpy().ravel(), [1.0, -2.0, 0.5], atol=1e-4)
    assert int(optimizer.iterations.numpy()) == 300
