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
