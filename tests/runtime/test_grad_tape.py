"""GradientTape, the functional gradient API of the seed, rt.gradients in graphs, and
gradients through graph-function calls (recorded as one op by an eager tape)."""
import numpy as np
import pytest

import autograph as ag
import runtime as rt


def values(grads):
    return [None if g is None else np.asarray(g).tolist() for g in grads]


# -- the seed's examples -------------------------------------------------------------------

def square(x):
    return x ** 2


def test_seed_gradients_function():
    assert float(square(3.)) == 9.0
    grads = rt.gradients_function(square)(3.)
    assert len(grads) == 1 and float(grads[0]) == 6.0


def test_seed_implicit_gradients():
    x = rt.Variable(2.0)

    def loss(y):
        return (y - x ** 2) ** 2

    assert float(loss(7.)) == 9.0
    [(grad, var)] = rt.implicit_gradients(loss)(7.)
    assert var is x and float(grad) == -24.0


def test_value_and_gradients_functions():
    value, grads = rt.value_and_gradients_function(lambda a, b: a * b * b)(2., 3.)
    assert float(value) == 18.0 and values(grads) == [9.0, 12.0]
    assert values(rt.gradients_function(lambda a, b: a * b * b, params=[1])(2., 3.)) == [12.0]
    w = rt.Variable([1.0, 2.0])
    value, pairs = rt.implicit_value_and_gradients(lambda: rt.reduce_sum(w * w))()
    assert float(value) == 5.0 and values([pairs[0][0]]) == [[2.0, 4.0]] and pairs[0][1] is w


def test_implicit_gradients_needs_a_variable():
    with pytest.raises(ValueError, match="no trainable variables"):
        rt.implicit_gradients(square)(3.)


# -- GradientTape ----------------------------------------------------------------------------

def test_nested_targets_and_sources():
    x, y = rt.constant(2.0), rt.constant([1.0, 3.0])
    with rt.GradientTape() as tape:
        tape.watch({"x": x, "y": [y]})
        targets = [x * x, {"sum": rt.reduce_sum(y * x)}]
    grads = tape.gradient(targets, {"x": x, "y": [y]})
    assert float(grads["x"]) == 4.0 + 4.0 and grads["y"][0].numpy().tolist() == [2.0, 2.0]


def test_output_gradients_weight_the_targets():
    x = rt.constant([1.0, 2.0])
    with rt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert tape.gradient(y, x, output_gradients=[10.0, 1.0]).numpy().tolist() == [20.0, 4.0]


def test_trainable_variables_are_watched_when_read():
    w, frozen = rt.Variable(3.0), rt.Variable(5.0, trainable=False)
    with rt.GradientTape() as tape:
        y = w * frozen
    assert tape.watched_variables() == [w]
    assert values(tape.gradient(y, [w, frozen])) == [5.0, None]


def test_watch_accessed_variables_false():
    w, v = rt.Variable(3.0), rt.Variable(4.0)
    with rt.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(v)
        y = w * v
    assert values(tape.gradient(y, [w, v])) == [None, 3.0]


def test_persistent_tape_and_single_use():
    x = rt.constant(3.0)
    with rt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y, z = x * x, x * x * x
    assert float(tape.gradient(y, x)) == 6.0 and float(tape.gradient(z, x)) == 27.0
    with rt.GradientTape() as once:
        once.watch(x)
        y = x * x
    once.gradient(y, x)
    with pytest.raises(RuntimeError, match="persistent"):
        once.gradient(y, x)


def test_stop_recording_and_stop_gradient():
    x = rt.constant(2.0)
    with rt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with tape.stop_recording():
            hidden = x * x
        y = x * hidden + rt.stop_gradient(x * x) * x
    assert float(tape.gradient(y, x)) == 4.0 + 4.0
    assert tape.gradient(hidden, x) is None


def test_unconnected_gradients():
    x, y = rt.constant(1.0), rt.constant(2.0)
    with rt.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        z = x * 3.0
    assert tape.gradient(z, y) is None
    assert float(tape.gradient(z, y, unconnected_gradients="zero")) == 0.0


def test_higher_order_with_nested_tapes():
    x = rt.constant(2.0)
    with rt.GradientTape() as outer:
        outer.watch(x)
        with rt.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
        dy = inner.gradient(y, x)
    assert float(dy) == 12.0 and float(outer.gradient(dy, x)) == 12.0


def test_a_persistent_tapes_gradient_taken_while_recording_is_recorded():
    x = rt.constant(3.0)
    with rt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x * x
        dy_dx = tape.gradient(y, x)              # still recording: recorded too
    assert float(dy_dx) == 27.0 and float(tape.gradient(dy_dx, x)) == 18.0


def test_second_derivatives_through_one_persistent_tape_in_a_function():
    @rt.function
    def curvature(x):
        with rt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = rt.sin(x) * x
            dy = tape.gradient(y, x)
        return dy, tape.gradient(dy, x)

    x = np.array([0.5, 1.0, 2.0], np.float32)
    dy, d2y = curvature(rt.constant(x))
    np.testing.assert_allclose(dy.numpy(), np.cos(x) * x + np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(d2y.numpy(), 2 * np.cos(x) - x * np.sin(x), rtol=1e-6)


def test_a_non_persistent_tape_does_not_record_its_own_gradient():
    x = rt.constant(3.0)
    with rt.GradientTape() as outer:
        outer.watch(x)
        with rt.GradientTape() as tape:
            tape.watch(x)
            y = x * x
            dy = tape.gradient(y, x)             # recorded by `outer`, not by `tape`
    assert float(outer.gradient(dy, x)) == 2.0


# -- jacobians -------------------------------------------------------------------------------

def elementwise_and_matmul(x, w):
    with rt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = rt.square(x) * 2.0
        z = rt.matmul(rt.reshape(x, [1, 3]), w)
    return tape.jacobian(y, x), tape.jacobian(z, [x, w]), tape.jacobian(y, w)


@pytest.mark.parametrize("mode", ["eager", "graph"])
def test_jacobians_of_an_elementwise_op_and_a_matmul(mode):
    x, w = np.array([1.0, 2.0, 3.0], np.float32), np.arange(6, dtype=np.float32).reshape(3, 2)
    fn = elementwise_and_matmul if mode == "eager" else rt.function(elementwise_and_matmul)
    dy_dx, (dz_dx, dz_dw), unconnected = fn(rt.constant(x), rt.Variable(w))
    np.testing.assert_allclose(dy_dx.numpy(), np.diag(4.0 * x))
    assert dz_dx.shape == (1, 2, 3) and dz_dw.shape == (1, 2, 3, 2)
    np.testing.assert_allclose(dz_dx.numpy()[0], w.T)
    expected = np.zeros((1, 2, 3, 2), np.float32)
    for j in range(2):
        expected[0, j, :, j] = x
    np.testing.assert_allclose(dz_dw.numpy(), expected)
    assert unconnected is None


def test_a_jacobian_through_a_graph_loop_and_cond_matches_eager():
    def f(x, n):
        with rt.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(n):
                y = y * x
            if rt.reduce_sum(y) > 0:
                y = rt.sin(y) * 2.0
        return tape.jacobian(y, x)

    x = rt.constant([0.5, 1.0, 1.5])
    eager = f(x, rt.constant(3))
    np.testing.assert_allclose(ag.convert(f)(x, rt.constant(3)).numpy(), eager.numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(np.diag(eager.numpy()), 8 * np.cos(x.numpy() ** 4) *
                               x.numpy() ** 3, rtol=1e-5)


def dense_tanh(x, w):
    with rt.GradientTape() as tape:
        tape.watch(x)
        y = rt.tanh(rt.matmul(x, w))
    return tape.batch_jacobian(y, x)


def test_batch_jacobian_is_the_per_example_block_of_the_jacobian():
    rng = np.random.default_rng(0)
    x = rt.constant(rng.random((4, 3), np.float32))
    w = rt.constant(rng.random((3, 2), np.float32))
    per_example = dense_tanh(x, w)
    assert per_example.shape == (4, 2, 3)
    with rt.GradientTape() as tape:
        tape.watch(x)
        y = rt.tanh(rt.matmul(x, w))
    full = tape.jacobian(y, x).numpy()
    np.testing.assert_allclose(per_example.numpy(), [full[b, :, b, :] for b in range(4)],
                               rtol=1e-6)
    traced = rt.function(dense_tanh, input_signature=[rt.TensorSpec([None, 3]),
                                                      rt.TensorSpec([3, 2])])
    np.testing.assert_allclose(traced(x, w).numpy(), per_example.numpy(), rtol=1e-6)


def test_a_non_persistent_tape_gives_one_jacobian():
    x = rt.constant([1.0, 2.0])
    with rt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), [[2.0, 0.0], [0.0, 4.0]])
    with pytest.raises(RuntimeError, match="persistent"):
        tape.jacobian(y, x)


def test_unconnected_jacobians_can_be_zeros():
    x, other = rt.constant([1.0, 2.0]), rt.constant([[1.0, 2.0, 3.0]])
    with rt.GradientTape() as tape:
        tape.watch([x, other])
        y = x * 3.0
    zeros = tape.jacobian(y, other, unconnected_gradients="zero")
    assert zeros.shape == (2, 1, 3) and not zeros.numpy().any()


def test_reset_forgets_the_records():
    x = rt.constant(2.0)
    with rt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        tape.reset()
        tape.watch(x)
        z = x * 5.0
    assert float(tape.gradient(z, x)) == 5.0


# -- graphs: rt.gradients and tapes inside traced functions ------------------------------------

def test_gradients_needs_a_graph():
    with pytest.raises(RuntimeError, match="GradientTape"):
        rt.gradients(rt.constant(1.0), rt.constant(1.0))


def test_gradients_in_a_function_with_grad_ys_and_variables():
    w = rt.Variable([[1.0, 2.0], [3.0, 4.0]])

    @rt.function
    def grads(x):
        y = rt.matmul(x, w)
        return rt.gradients(y, [x, w], grad_ys=rt.constant([[1.0, 0.0]]))

    gx, gw = grads(rt.constant([[1.0, 1.0]]))
    assert gx.numpy().tolist() == [[1.0, 3.0]] and gw.numpy().tolist() == [[1.0, 0.0]] * 2


def test_tape_inside_a_traced_function_matches_eager():
    w = rt.Variable([0.5, -1.0])

    def step(x):
        with rt.GradientTape() as tape:
            tape.watch(x)
            with tape.stop_recording():
                scale = rt.reduce_sum(x)
            y = rt.reduce_sum(rt.tanh(x * w) * scale)
        return tape.gradient(y, [x, w])

    x = rt.constant([0.3, 0.7])
    for got, want in zip(rt.function(step)(x), step(x)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_gradients_in_a_tf1_session():
    graph = rt.Graph()
    with graph.as_default():
        p = rt.placeholder(rt.float32, [2])
        v = rt.Variable([1.0, 3.0])
        gv, gp = rt.gradients(rt.reduce_sum(p * v * v), [v, p])
        init = rt.global_variables_initializer()
    with rt.Session(graph=graph) as sess:
        sess.run(init)
        assert values(sess.run([gv, gp], {p: [1.0, 2.0]})) == [[2.0, 12.0], [1.0, 9.0]]


# -- graph-function calls under an eager tape --------------------------------------------------

def test_function_call_is_one_recorded_op_with_a_gradient(capsys):
    w = rt.Variable([2.0, 3.0])

    @rt.function
    def inner(x):
        return x * w

    @rt.function
    def outer(x):
        rt.print("forward")
        return rt.reduce_sum(inner(x) * x)

    x = rt.constant([1.0, 4.0])
    with rt.GradientTape() as tape:
        tape.watch(x)
        y = outer(x)
    assert [r.type for r in tape._records] == ["call"]
    gx, gw = tape.gradient(y, [x, w])
    assert gx.numpy().tolist() == [4.0, 24.0] and gw.numpy().tolist() == [1.0, 16.0]
    assert capsys.readouterr().out == "forward\n"      # the recompute prints nothing


def test_gradients_through_a_nested_call_in_a_graph():
    @rt.function
    def inner(x):
        return rt.sin(x) * x

    @rt.function
    def grad(x):
        return rt.gradients(inner(x) * 2.0, x)[0]

    x = np.array([0.5, 1.5])
    expected = 2 * (np.cos(x) * x + np.sin(x))
    np.testing.assert_allclose(grad(rt.constant(x)).numpy(), expected)


def test_call_gradient_graph_is_built_once():
    from runtime.gradients import function_grad

    @rt.function
    def f(x):
        return x * x

    x = rt.constant(3.0)
    for _ in range(3):
        with rt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        assert float(tape.gradient(y, x)) == 6.0
    assert function_grad._cache.get(f.get_concrete_function(x).graph) is not None
    assert sum(1 for g in function_grad._cache if g is f.get_concrete_function(x).graph) == 1


def test_call_gradient_leaves_the_traced_function_as_it_was():
    @ag.convert
    def f(x):
        if x > 0:
            y = rt.sin(x) * x
        else:
            y = x
        for _ in rt.range(3):
            y = rt.tanh(y) * x
        return y

    def shape_of(graph):
        return [(op.type, len(op.outputs), [len(g.outputs) for g in op.subgraphs()])
                for op in graph.ops]

    x = rt.constant(0.5)
    graph = f.get_concrete_function(x).graph
    before = shape_of(graph)
    with rt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    tape.gradient(y, x)
    assert shape_of(graph) == before
