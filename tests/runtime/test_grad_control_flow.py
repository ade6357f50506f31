"""Gradients through cond and while_loop: data-dependent trip counts, trip counts known
only at run time, nested loops, conds inside loops and loops inside conds, tensor lists.

Each function is differentiated three ways (see grad_testing.flow_gradients: an eager
tape over Python control flow, a tape inside the autograph-converted function, an eager
tape around a call of the converted function), each against central differences.
"""
import numpy as np
import pytest

import autograph as ag
import runtime as rt
from grad_testing import FLOW_MODES, check_flow_gradients, numeric_gradient


def grow_until(x):
    """The trip count depends on the data."""
    y = x
    while rt.reduce_sum(y * y) < 20.0:
        y = y * 1.3 + rt.sin(x)
    return rt.reduce_sum(y)


def power_loop(x, n):
    """n iterations, known only when the graph runs; x is a loop-invariant capture."""
    y = x
    for _ in rt.range(n):
        y = rt.tanh(y) * x
    return rt.reduce_sum(y)


def nested_loops(x, w, n):
    """An inner loop whose trip count is the outer index, a cond inside, a tensor list."""
    h = x
    outs = []
    for i in rt.range(n):
        j = 0
        while j < i:
            if rt.reduce_sum(h) > 0.5:
                h = rt.tanh(rt.matmul(h, w)) + x
            else:
                h = h * 1.5 - 0.1
            j += 1
        outs.append(h)
    return rt.reduce_sum(rt.stack(outs) ** 2) + rt.reduce_sum(h)


def loop_in_branch(x, n):
    if rt.reduce_sum(x) > 0:
        for _ in rt.range(n):
            x = x * rt.cos(x)
    else:
        x = x * 2.0
    return rt.reduce_sum(x * x)


def early_break(x, n):
    y = x
    for _ in rt.range(n):
        if rt.reduce_max(y) > 3.0:
            break
        y = y * 1.7 + 0.1
    return rt.reduce_sum(y * y)


def first_assigned_in_loop(x, n):
    """y exists only if the loop ran (converted code guards it with assert_assigned)."""
    for i in rt.range(n):
        y = rt.sin(x) * rt.cast(i + 1, x.dtype)
    return rt.reduce_sum(y)


def rnn(xs, h, w_x, w_h):
    """A dynamic RNN: the loop variable list grows (its shape changes every iteration)."""
    outputs = []
    for x in xs:
        h = rt.tanh(rt.matmul(x, w_x) + rt.matmul(h, w_h))
        outputs.append(h)
    return rt.reduce_sum(rt.stack(outputs) * rt.reduce_mean(xs))


def capped_loop(x, limit):
    """rt.while_loop with maximum_iterations given as a tensor."""
    _, y = rt.while_loop(lambda i, y: True, lambda i, y: (i + 1, y * x + 1.0),
                         [0, rt.ones_like(x)], maximum_iterations=limit)
    return rt.reduce_sum(y)


def branch_of_matmuls(a, b):
    if rt.reduce_mean(a) > 0:
        c = rt.matmul(a, b)
    else:
        c = rt.matmul(b, a) * 2.0
    return rt.reduce_sum(rt.sigmoid(c))


_rng = np.random.default_rng(3)
X = np.array([[0.3, 0.4], [-0.2, 0.6]])
W = np.array([[0.5, -0.2], [0.1, 0.3]])

CASES = [
    ("grow_until", grow_until, [np.array([0.3, 0.5])]),
    ("power_loop-0", power_loop, [np.array([0.4, -0.8]), np.array(0)]),
    ("power_loop-4", power_loop, [np.array([0.4, -0.8]), np.array(4)]),
    ("nested_loops-1", nested_loops, [X, W, np.array(1)]),
    ("nested_loops-4", nested_loops, [X, W, np.array(4)]),
    ("loop_in_branch-then", loop_in_branch, [np.array([0.5, 0.9]), np.array(3)]),
    ("loop_in_branch-else", loop_in_branch, [np.array([-0.5, 0.2]), np.array(3)]),
    ("early_break", early_break, [np.array([0.5, 1.0]), np.array(6)]),
    ("first_assigned_in_loop", first_assigned_in_loop, [np.array([0.5, 1.0]), np.array(3)]),
    ("rnn", rnn, [_rng.normal(size=(4, 2, 3)) * 0.5, np.zeros((2, 2)),
                  _rng.normal(size=(3, 2)), _rng.normal(size=(2, 2))]),
    ("capped_loop", capped_loop, [np.array([0.5, -1.2]), np.array(3)]),
    ("branch_of_matmuls-then", branch_of_matmuls, [X + 1.0, W]),
    ("branch_of_matmuls-else", branch_of_matmuls, [X - 1.0, W]),
]


@pytest.mark.parametrize("mode", FLOW_MODES)
@pytest.mark.parametrize("fn, args", [pytest.param(fn, args, id=name)
                                      for name, fn, args in CASES])
def test_gradient_through_control_flow(fn, args, mode):
    check_flow_gradients(fn, args, mode)


# -- variables read inside loops and branches ---------------------------------------------

def test_variable_gradients_through_loops_agree():
    w = rt.Variable(W, name="w")
    v = rt.Variable(np.array([0.2, -0.3]), name="v")

    def loss(x, n):
        h = x
        for i in rt.range(n):
            if rt.reduce_sum(h) > 0.0:
                h = rt.tanh(rt.matmul(h, w)) + v
            else:
                h = h * v
        return rt.reduce_sum(h * h)

    def grads(x, n):
        with rt.GradientTape() as tape:
            y = loss(x, n)
        return tape.gradient(y, [w, v])

    x, n = rt.constant(X), rt.constant(3)
    eager = grads(x, n)
    converted = ag.convert(grads)(x, n)
    with rt.GradientTape() as tape:
        y = ag.convert(loss)(x, n)
    called = tape.gradient(y, [w, v])
    for want, got1, got2 in zip(eager, converted, called):
        np.testing.assert_allclose(got1.numpy(), want.numpy(), rtol=1e-10)
        np.testing.assert_allclose(got2.numpy(), want.numpy(), rtol=1e-10)


def test_cond_gradient_with_gradients_and_variables():
    v = rt.Variable(3.0)

    @rt.function
    def grads(x):
        y = rt.cond(x > 0, lambda: x * v * v, lambda: x - v)
        return rt.gradients(y, [x, v])

    assert [float(g) for g in grads(rt.constant(2.0))] == [9.0, 12.0]
    assert [float(g) for g in grads(rt.constant(-2.0))] == [1.0, -1.0]


def test_second_order_through_cond():
    @ag.convert
    def branchy(x):
        if x > 0:
            y = x * x * x
        else:
            y = x * x
        return y

    @rt.function
    def d2(x):
        g = rt.gradients(branchy(x), x)[0]
        return g, rt.gradients(g, x)[0]

    assert [float(t) for t in d2(rt.constant(2.0))] == [12.0, 12.0]
    assert [float(t) for t in d2(rt.constant(-2.0))] == [-4.0, 2.0]


def first_order(x, n):
    with rt.GradientTape() as tape:
        tape.watch(x)
        y = nested_loops(x, rt.constant(W), n)
    return tape.gradient(y, x)


def second_order(x, n):
    """d/dx of a weighted sum of d nested_loops / dx: through both loops and the cond."""
    with rt.GradientTape() as tape:
        tape.watch(x)
        g = first_order(x, n)
        s = rt.reduce_sum(g * rt.constant([[1.0, -0.5], [0.25, 2.0]], rt.float64))
    return tape.gradient(s, x)


@pytest.mark.parametrize("mode", FLOW_MODES[:2])
def test_second_order_through_nested_loops(mode):
    n = np.array(4)
    got = (second_order if mode == "eager" else ag.convert(second_order))(
        rt.constant(X), rt.constant(n)).numpy()

    def weighted_first_order(x, n):
        return rt.reduce_sum(first_order(x, n) * rt.constant([[1.0, -0.5], [0.25, 2.0]],
                                                             rt.float64))
    np.testing.assert_allclose(got, numeric_gradient(weighted_first_order, [X, n], 0),
                               rtol=1e-5, atol=1e-6)


def test_loop_forward_runs_once_and_stacks_per_iteration():
    @rt.function
    def grads(x, n):
        y = rt.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, rt.sin(y) * x), [0, x])[1]
        return y, rt.gradients(y, x)[0]

    concrete = grads.get_concrete_function(rt.constant(0.5), rt.constant(3))
    loops = [op for op in concrete.graph.ops if op.type == "while"]
    assert len(loops) == 2                     # the forward loop (stacking) and the backward
    forward = loops[0]
    assert forward.attrs["stacks"] >= 1 and len(forward.outputs) == 2 + 1 + 2 * forward.attrs["stacks"]
    y, g = grads(rt.constant(0.5), rt.constant(3))
    eps = 1e-3
    fd = (np.sin(np.sin(np.sin(0.5 + eps) * (0.5 + eps)) * (0.5 + eps)) * (0.5 + eps)
          - np.sin(np.sin(np.sin(0.5 - eps) * (0.5 - eps)) * (0.5 - eps)) * (0.5 - eps)) / (2 * eps)
    assert float(g) == pytest.approx(fd, rel=1e-4)


# -- random values a function drew are the ones its gradient uses -------------------------

def _dropout_model(w):
    @rt.function
    def dropout(x):
        mask = rt.cast(rt.random.uniform([8], seed=3) > 0.5, rt.float32)
        return x * mask, mask

    @rt.function
    def model(x):
        h, mask = dropout(x * w)
        return rt.reduce_sum(h * w), mask
    return model


@pytest.mark.parametrize("where", ["eager tape", "tape in a graph", "rt.gradients"])
def test_a_dropout_mask_is_the_same_in_the_gradient(where):
    rt.random.set_seed(1)
    try:
        w = rt.Variable(np.ones(8, np.float32))
        model = _dropout_model(w)
        x = rt.constant(np.arange(8, dtype=np.float32))
        model(x)                                  # traced before any tape exists
        if where == "eager tape":
            with rt.GradientTape() as tape:
                y, mask = model(x)
            g = tape.gradient(y, w)
        elif where == "tape in a graph":
            @rt.function
            def step(x):
                with rt.GradientTape() as tape:
                    y, mask = model(x)
                return tape.gradient(y, w), mask
            g, mask = step(x)
        else:
            @rt.function
            def step(x):
                y, mask = model(x)
                return rt.gradients(y, [w])[0], mask
            g, mask = step(x)
        assert 0 < mask.numpy().sum() < 8
        np.testing.assert_allclose(g.numpy(), 2 * x.numpy() * mask.numpy())
    finally:
        rt.random.set_seed(None)


def test_hidden_random_outputs_are_not_results_and_survive_saving(tmp_path):
    @rt.function
    def noisy(x):
        return x + rt.random.normal([3], seed=5)

    concrete = noisy.get_concrete_function(rt.constant(np.zeros(3, np.float32)))
    assert len(concrete.outputs) == 1 and len(concrete.graph.outputs) == 2
    assert "# and, for gradients," in str(concrete.graph)
    rt.saved.save(concrete, str(tmp_path / "m"))
    loaded = rt.saved.load(str(tmp_path / "m"))
    assert loaded(rt.constant(np.zeros(3, np.float32))).shape == (3,)


# -- values drawn inside a cond or loop are the ones the gradient uses ------------------------
# A converted function's call gradient recomputes it (gradients/function_grad.py): draws in
# its cond and while sub-graphs are fed the forward pass's values, as TensorFlow's gradient
# uses the forward pass's. Each case runs under every executor, graph passes on and off.

F64 = rt.float64
SETTINGS = [dict(executor="plain", optimizations=False), dict(executor="fast"),
            dict(executor="compiled", compile_policy="always")]


@pytest.fixture(params=SETTINGS, ids=["plain-unoptimized", "fast", "compiled"])
def setting(request):
    rt.random.set_seed(11)
    try:
        with rt.config.options(**request.param):
            yield
    finally:
        rt.random.set_seed(None)


def _noise(shape):
    return rt.random.uniform(shape, dtype=F64) + 0.5


def dropout_if(x, training):
    if training:
        mask = rt.cast(rt.random.uniform([6], dtype=F64) >= 0.5, F64) * 2.0
    else:
        mask = rt.ones([6], F64)
    return rt.reduce_sum(x * x * mask), mask


def noise_loop(x, n):
    """tanh(h * noise) n times; the noises come back (a list grown in the loop)."""
    h = x
    noises = []
    for _ in rt.range(n):
        noise = _noise([4])
        noises.append(noise)
        h = rt.tanh(h * noise) + 0.1 * h
    return rt.reduce_sum(h), rt.stack(noises) if noises else rt.zeros([0, 4], F64)


def _noise_loop_numpy(x, noises):
    h = np.asarray(x)
    for noise in noises:
        h = np.tanh(h * noise) + 0.1 * h
    return h.sum()


def noise_if_in_loop(x, n):
    """Even iterations scale by fresh noise, odd ones by 2: a cond inside the loop."""
    h = x
    scale = rt.ones([4], F64)
    for i in rt.range(n):
        if i % 2 == 0:
            s = _noise([4])
        else:
            s = rt.constant(2.0, F64) * rt.ones([4], F64)
        scale = scale * s
        h = h * s
    return rt.reduce_sum(h * h), scale


def _tape_gradient(f, *args):
    x = args[0]
    with rt.GradientTape() as tape:
        tape.watch(x)
        y, drawn = f(*args)
    return tape.gradient(y, x), drawn


def _graph_gradient(f, *args):
    @rt.function
    def step(*args):
        y, drawn = f(*args)
        return rt.gradients(y, [args[0]])[0], drawn
    return step(*args)


WAYS = {"eager tape": _tape_gradient, "rt.gradients": _graph_gradient}


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("training", [True, False])
def test_dropout_in_a_tensor_if(setting, way, training):
    f = ag.convert(dropout_if)
    x = rt.constant(np.arange(1.0, 7.0))
    for _ in range(3):                        # new masks each call, each its gradient's
        g, mask = WAYS[way](f, x, rt.constant(training))
        np.testing.assert_allclose(g.numpy(), 2 * x.numpy() * mask.numpy())
    assert training or mask.numpy().tolist() == [1.0] * 6


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("n", [0, 1, 4])
def test_noise_drawn_in_a_loop(setting, way, n):
    f = ag.convert(noise_loop)
    x = rt.constant(np.linspace(-1.0, 1.0, 4))
    g, noises = WAYS[way](f, x, rt.constant(n))
    noises = noises.numpy()
    assert noises.shape == (n, 4)
    expected = numeric_gradient(lambda x: _noise_loop_numpy(x, noises), [x.numpy()], 0)
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("way", WAYS)
def test_noise_drawn_in_a_cond_inside_a_loop(setting, way):
    f = ag.convert(noise_if_in_loop)
    x = rt.constant(np.array([0.5, -1.0, 2.0, 1.5]))
    g, scale = WAYS[way](f, x, rt.constant(5))
    scale = scale.numpy()
    assert np.all(scale != 8.0)                 # three noises drawn, two doublings
    np.testing.assert_allclose(g.numpy(), 2 * x.numpy() * scale ** 2)


@pytest.mark.parametrize("flag", [True, False])
def test_a_drawn_branch_value_leaves_the_other_branch_differentiable(setting, flag):
    """The draw is output k of one branch; the other branch's output k depends on x."""
    @ag.convert
    def f(x, flag):
        if flag:
            s = rt.random.normal([4], dtype=F64)
        else:
            s = x * x
        return rt.reduce_sum(x * s), s

    x = rt.constant(np.array([0.5, -1.0, 2.0, 1.5]))
    g, s = _tape_gradient(f, x, rt.constant(flag))
    np.testing.assert_allclose(g.numpy(), s.numpy() if flag else 3 * x.numpy() ** 2)


def _loop_calling(step):
    """A converted loop: `h, noise = step(h)` n times; sum(h) and the noises' product."""
    @ag.convert
    def f(x, n):
        h = x
        product = rt.ones([4], F64)
        for _ in rt.range(n):
            h, noise = step(h)
            product = product * noise
        return rt.reduce_sum(h), product
    return f


def test_noise_drawn_by_a_function_called_in_a_loop(setting):
    @rt.function
    def jitter(h):
        noise = _noise([4])
        return h * noise, noise

    f = _loop_calling(jitter)
    g, product = _tape_gradient(f, rt.constant(np.ones(4)), rt.constant(3))
    np.testing.assert_allclose(g.numpy(), product.numpy())


def test_a_function_called_in_a_loop_reads_its_variable_again(setting):
    """It draws and reads a variable: the gradient of the variable still flows."""
    w = rt.Variable(np.array([0.5, -1.0, 2.0, 1.5]))
    v = rt.Variable(np.full(4, 3.0))

    @rt.function
    def cell(h):
        noise = _noise([4])
        return h * noise * w, noise

    @rt.function
    def scale(h):
        return h * v

    def step(h):
        h, noise = cell(h)
        return scale(h), noise

    f = _loop_calling(step)
    x = rt.constant(np.ones(4))
    with rt.GradientTape() as tape:
        y, product = f(x, rt.constant(3))
    gw, gv = tape.gradient(y, [w, v])
    # y = sum(x * product * (w v)^3): d/dw = 3 w^2 v^3 product, d/dv = 3 v^2 w^3 product
    p, w0, v0 = product.numpy(), w.numpy(), v.numpy()
    np.testing.assert_allclose(gw.numpy(), 3 * w0 ** 2 * v0 ** 3 * p)
    np.testing.assert_allclose(gv.numpy(), 3 * v0 ** 2 * w0 ** 3 * p)


def test_noise_drawn_in_nested_loops(setting):
    def step(h):                    # converted with its caller: a loop in the loop
        product = rt.ones([4], F64)
        for _ in rt.range(2):
            noise = _noise([4])
            product = product * noise
            h = h * noise
        return h, product

    f = _loop_calling(step)
    g, product = _tape_gradient(f, rt.constant(np.ones(4)), rt.constant(3))
    np.testing.assert_allclose(g.numpy(), product.numpy())


def test_loops_without_draws_keep_no_hidden_outputs():
    f = ag.convert(power_loop)
    graph = rt.function(f).get_concrete_function(
        rt.constant(np.ones(3)), rt.constant(2)).graph
    assert graph.n_visible is None
    (loop,) = [op for op in graph.ops if op.type == "while"]
    assert loop.attrs.get("stacks") is None


# -- what a loop keeps for its gradient: each value once ---------------------------------------

def _loop_gradients(x, w, steps):
    def body(i, y):
        return i + 1, y + 0.1 * rt.tanh(y * w)          # the gradient reads y and tanh
    _, out = rt.while_loop(lambda i, y: i < steps, body, [0, x])
    loss = rt.reduce_sum(out)
    return loss, rt.gradients(loss, [x, w])


@pytest.mark.parametrize("executor", ["fast", "plain"])
def test_a_loop_holds_what_its_gradient_reads_once(executor, on_cpu):
    import tracemalloc
    steps, size = 200, 4096
    x = rt.constant(np.linspace(-1, 1, size, dtype=np.float32))
    w = rt.constant(np.float32(0.5))
    f = rt.function(_loop_gradients)
    with rt.config.options(executor=executor, optimizations=True):    # pruned: 2 values
        f(x, w, rt.constant(steps))
        rt.config.release_buffers()                      # (the run's own, not last run's)
        tracemalloc.start()
        try:
            f(x, w, rt.constant(steps))
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.reset_peak()
            f(x, w, rt.constant(steps))                  # the buffers kept are reused
            peak_reusing = tracemalloc.get_traced_memory()[1]
            held = tracemalloc.get_traced_memory()[0]
            rt.config.release_buffers()
            released = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
    collected = 2 * steps * size * 4                     # y and tanh, every iteration
    assert collected <= peak < 1.25 * collected          # a list and its concatenation: 2x
    assert peak_reusing - held < 0.1 * collected
    assert held - released >= collected


def test_a_kept_buffer_is_reused_only_once_nothing_refers_to_it():
    """A loop's collections are packed into buffers kept for its next run; values packed
    there (or a view of them) that are still held keep their buffer from being reused."""
    import types
    from runtime import control_flow
    from runtime.shapes import TensorShape
    row = TensorShape([4096])
    body = types.SimpleNamespace(_plans={}, outputs=[types.SimpleNamespace(shape=row)])

    def run(start):
        (stack,) = control_flow.loop_collections(np, body, 1)
        for k in range(100):
            stack.append(np.full(4096, start + k, np.float32))
        _, values, index = control_flow.collected_outputs(np, body, 0, [stack], 100)
        return values, index
    first, _ = run(0)
    row_7 = control_flow._numpy_stack_get(*run(1000), 7, shape=(4096,))   # a view, kept
    third, _ = run(2000)
    assert not np.shares_memory(first, third) and not np.shares_memory(row_7, third)
    assert (first.reshape(100, 4096)[:, 0] == np.arange(100)).all()
    assert (row_7 == 1007).all()
    freed = {id(first.base), id(third.base)}
    del first, third
    fourth, _ = run(3000)                                # a buffer nothing refers to
    assert id(fourth.base) in freed and fourth.base is not row_7.base
    assert (row_7 == 1007).all() and (fourth.reshape(100, 4096)[5] == 3005).all()
    assert len(body._plans["collection buffers"].buffers) <= 3
    rt.config.release_buffers()
    assert (fourth.reshape(100, 4096)[99] == 3099).all()


def test_collections_grow_shrink_and_change_shape_between_runs():
    def f(x, n):
        def body(i, y):                                  # y grows by a row per iteration
            return i + 1, rt.concat([y, rt.sin(y[-1:])], 0)
        _, out = rt.while_loop(lambda i, y: i < n, body, [0, x],
                               shape_invariants=[rt.TensorShape([]), rt.TensorShape([None, 3])])
        return rt.gradients(rt.reduce_sum(rt.tanh(out)), [x])[0]
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    g = rt.function(f)

    def expected(n):
        with rt.GradientTape() as tape:
            y = rt.constant(x)
            tape.watch(y)
            out = y
            for _ in range(n):
                out = rt.concat([out, rt.sin(out[-1:])], 0)
            loss = rt.reduce_sum(rt.tanh(out))
        return tape.gradient(loss, y).numpy()
    for n in (5, 40, 3, 0, 40):                          # the size of the last run is a hint
        np.testing.assert_allclose(g(rt.constant(x), rt.constant(n)).numpy(), expected(n),
                                   rtol=1e-5, atol=1e-6)


def test_collected_values_made_in_place_survive_growth_and_results_stay_their_own():
    """The loop computes the values its gradient reads straight into their collections
    (here tanh's output, which is also the next loop variable): runs that grow the
    collections past the last run's size agree with an eager tape, a result returned
    earlier is not memory a later run reuses, and the loop's result does not hold the
    collection it was computed in."""
    import gc
    import tracemalloc

    def f(x, n):
        _, h = rt.while_loop(lambda i, h: i < n, lambda i, h: (i + 1, rt.tanh(h * 1.1)),
                             [0, x])
        return h, rt.gradients(rt.reduce_sum(h), [x])[0]
    x = np.linspace(-2, 2, 64, dtype=np.float32)
    g = rt.function(f)

    def expected(n):
        with rt.GradientTape() as tape:
            h = rt.constant(x)
            tape.watch(h)
            start = h
            for _ in range(n):
                h = rt.tanh(h * 1.1)
            loss = rt.reduce_sum(h)
        return h.numpy(), tape.gradient(loss, start).numpy()
    kept = []
    for n in (5, 40, 3, 0, 60, 1):                       # the size of the last run is a hint
        h, dx = g(rt.constant(x), rt.constant(n))
        want_h, want_dx = expected(n)
        np.testing.assert_allclose(h.numpy(), want_h, rtol=1e-6)
        np.testing.assert_allclose(dx.numpy(), want_dx, rtol=1e-5, atol=1e-7)
        kept.append((h, h.numpy().copy()))
    for h, value in kept:
        assert np.array_equal(h.numpy(), value)
    g(rt.constant(x), rt.constant(2000))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        results = g(rt.constant(x), rt.constant(2000))
        gc.collect()                                    # (cycles the run left: not held)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(results) == 2 and held < 32 * 1024     # (the collection: 2000 x 256 B)
