"""Training programs written the way users write them (with TensorFlow in mind): gradient
tapes inside converted functions with Python control flow on tensors, converted functions
differentiated by an eager tape (the call-op gradient), `rt.gradients` in traced code, the
functional gradient API, random ops differentiated, losses in converted code, and training
loops (Dense models, a model class whose `__call__` holds control flow, SGD with momentum
and Nesterov, Adam, `apply_gradients` and `minimize`, `rt.data` pipelines) run eagerly and
converted with the same losses.

References are eager execution, central finite differences in float64
(`grad_testing.numeric_gradient`) and TensorFlow's documented behaviour. Bugs found are
strict xfails whose reason names the module and the diagnosis.
"""
import os
import sys

import numpy as np
import pytest

import autograph as ag
import runtime as rt
from runtime.ops.random_ops import get_global_seed

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "runtime"))
from equivalence import assert_equivalent  # noqa: E402
from grad_testing import FLOW_MODES, check_flow_gradients, numeric_gradient  # noqa: E402

F64 = rt.float64


@pytest.fixture(autouse=True)
def _keep_the_global_seed():
    """Tests here set the global random seed; later tests see the one they started with."""
    seed = get_global_seed()
    yield
    rt.random.set_seed(seed)


def values(tensors):
    return [None if t is None else np.asarray(t.numpy() if hasattr(t, "numpy") else t)
            for t in tensors]


def assert_all_close(got, want, rtol=1e-7, atol=1e-9):
    got, want = values(got), values(want)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        if w is None:
            assert g is None, f"gradient {i}: expected None, got {g!r}"
        else:
            assert g is not None, f"gradient {i}: got None, expected {w!r}"
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"gradient {i}")


def variable_gradient(loss, var):
    """Central differences of loss() (eager) with respect to the float64 variable `var`."""
    base = np.array(var.numpy(), dtype=np.float64)

    def at(value):
        var.assign(value)
        return loss()
    try:
        return numeric_gradient(at, [base], 0)
    finally:
        var.assign(base)


# -- 1. Python control flow on tensors: a tape inside the converted function, an eager tape
#       around a call of it, and plain eager code, each against finite differences ----------

def first_rows_until_saturated(xs, w):
    """`for` over a tensor's rows, leaving early when the state saturates."""
    h = rt.zeros([2], F64)
    for row in xs:
        h = rt.tanh(h * w + row)
        if rt.reduce_max(h) > 0.9:
            break
    return rt.reduce_sum(h)


def every_other_row(xs, w):
    """enumerate() over a tensor, `continue` on odd steps."""
    s = rt.constant(0.0, F64)
    for i, row in enumerate(xs):
        if i % 2 == 1:
            continue
        s = s * 1.1 + rt.reduce_sum(row * w)
    return s


def paired_hinge(xs, ys):
    """zip() of two tensors, a tensor `if` per pair."""
    total = rt.constant(0.0, F64)
    for a, b in zip(xs, ys):
        d = a - b
        if rt.reduce_sum(d) < 0:
            d = -d * 0.5
        total += rt.reduce_sum(d * d)
    return total


def newton_sqrt(a):
    """The trip count depends on the value being differentiated."""
    x = a
    while rt.abs(x * x - a) > 1e-12:
        x = 0.5 * (x + a / x)
    return x


def staircase(x, n):
    """An inner `while True` with `break`, an outer loop left early on a tensor."""
    total = x * 0.0
    for i in rt.range(n):
        j = 0
        while True:
            total = total + rt.sin(x) * rt.cast(j + 1, F64)
            j += 1
            if j >= i:
                break
        if rt.reduce_sum(total) > 5.0:
            break
    return rt.reduce_sum(total * x)


def return_from_nested_if(x, n):
    i = 0
    y = x
    while i < n:
        if rt.reduce_sum(y) > 2.0:
            if rt.reduce_max(y) > 1.5:
                return rt.reduce_sum(y * 3.0)
            y = y * 0.9
        y = y * 1.4
        i += 1
    return rt.reduce_sum(y)


def embedding_bag(table, ids, n):
    """Rows gathered by tensor indices (repeated ids add up), weighted by the step."""
    s = rt.constant(0.0, F64)
    for i in rt.range(n):
        s = s + rt.reduce_sum(rt.tanh(rt.gather(table, ids[i])) * rt.cast(i + 1, F64))
    return s


def adjacent_products(x, n):
    """Slices by a loop counter: x[i] * x[i + 1]."""
    s = x[0] * 0.0
    i = 0
    while i < n:
        s = s + x[i] * x[i + 1]
        i += 1
    return rt.reduce_sum(s)


def scaled_history(x, n):
    """A list grown in a tensor loop, stacked afterwards."""
    outs = []
    h = x
    for i in rt.range(n):
        h = rt.sin(h) + x
        outs.append(h * rt.cast(i, F64))
    return rt.reduce_sum(rt.stack(outs))


_rng = np.random.default_rng(11)
ROWS = np.array([[0.1, 0.2], [0.5, 0.6], [0.9, 1.5], [0.2, 0.1]])

FLOW_CASES = [
    ("rows-break", first_rows_until_saturated, [ROWS, np.array([0.8, 1.1])]),
    ("rows-no-break", first_rows_until_saturated, [ROWS * 0.1, np.array([0.8, 1.1])]),
    ("enumerate-continue", every_other_row, [_rng.normal(size=(5, 3)), np.array([0.3, -0.2, 0.9])]),
    ("zip-if", paired_hinge, [_rng.normal(size=(5, 3)), _rng.normal(size=(5, 3))]),
    ("newton-sqrt", newton_sqrt, [np.array(2.0)]),
    ("staircase", staircase, [np.array([0.3, 0.6]), np.array(5)]),
    ("return-nested-if-hit", return_from_nested_if, [np.array([0.9, 0.5]), np.array(6)]),
    ("return-nested-if-miss", return_from_nested_if, [np.array([0.2, 0.1]), np.array(2)]),
    ("embedding-bag", embedding_bag, [_rng.normal(size=(5, 3)), np.array([1, 3, 1, 0], np.int32),
                                      np.array(4)]),
    ("adjacent-products", adjacent_products, [_rng.normal(size=(5, 2)), np.array(3)]),
    ("scaled-history", scaled_history, [np.array([0.5, 0.8]), np.array(3)]),
]


@pytest.mark.parametrize("mode", FLOW_MODES)
@pytest.mark.parametrize("fn, args", [pytest.param(fn, args, id=name)
                                      for name, fn, args in FLOW_CASES])
def test_gradients_through_python_control_flow(fn, args, mode):
    check_flow_gradients(fn, args, mode)


def test_a_tape_inside_a_converted_function_matches_the_eager_tape():
    """The whole gradient computation converted: a data-dependent loop under the tape."""
    def grow(x):
        while rt.reduce_sum(x) < 10.0:
            x = x * 1.5 + 0.1
        return rt.reduce_sum(x * x)

    def grads(x):
        with rt.GradientTape() as tape:
            tape.watch(x)
            y = grow(x)
        return tape.gradient(y, x)

    x = np.array([0.3, 0.7])
    eager = grads(rt.constant(x))
    converted = ag.convert(grads)(rt.constant(x))
    assert_all_close([converted], [eager])
    np.testing.assert_allclose(eager.numpy(), numeric_gradient(grow, [x], 0), rtol=1e-6)


def rnn_preactivations(xs, w):
    """An RNN keeping its pre-activations: z goes into a list, then through tanh."""
    h = rt.zeros([2], F64)
    pre = []
    for x in xs:
        z = h * w + x
        pre.append(z)
        h = rt.tanh(z)
    return rt.stack(pre), h


def rows_then_update(x, n):
    """Minimal: a row appended, then read by an elementwise update of another variable."""
    h = x
    rows = []
    for _ in rt.range(n):
        row = x + 1.0
        rows.append(row)
        h = h * row + 0.5
    return rt.stack(rows), h


# The memory plan must not let a later op of the body write over an appended row's array;
# each configuration is set explicitly, so the test means the same under
# RT_EXECUTOR/RT_OPTIMIZE.
CONFIGURATIONS = [
    pytest.param("fast", rt.config.DEFAULT_PASSES, id="default"),
    pytest.param("fast", rt.config.DEFAULT_PASSES - {"memory"}, id="no-memory-plan"),
    pytest.param("plain", rt.config.DEFAULT_PASSES, id="plain"),
]


@pytest.mark.parametrize("executor, passes", CONFIGURATIONS)
@pytest.mark.parametrize("fn, args", [
    pytest.param(rnn_preactivations, (np.arange(6.0).reshape(3, 2) / 4, np.array([0.5, -1.0])),
                 id="rnn-preactivations"),
    pytest.param(rows_then_update, (np.ones(2), 3), id="minimal"),
])
def test_rows_appended_in_a_tensor_loop_keep_their_values(fn, args, executor, passes):
    with rt.config.options(executor=executor, optimizations=passes):
        assert_equivalent(fn, *args)


def test_gradients_through_appended_preactivations():
    def loss(xs, w):
        pre, h = rnn_preactivations(xs, w)
        return rt.reduce_sum(pre * rt.constant([1.0, -1.0], F64)) + rt.reduce_sum(h)

    for mode in FLOW_MODES:
        check_flow_gradients(loss, [np.arange(6.0).reshape(3, 2) / 4, np.array([0.5, -1.0])],
                             mode)


# -- 2. converted functions under an eager tape (one call op, its gradient) ------------------

@ag.convert
def sum_count_double(x, n):
    """Several outputs: a float loop result, an int count, and a plain float."""
    s = rt.constant(0.0, F64)
    count = 0
    for i in rt.range(n):
        s = s + rt.sin(x) * rt.cast(i, F64)
        count += 1
    return s, count, x * 2.0


def test_differentiating_some_outputs_of_a_converted_function():
    x = rt.constant(0.5, F64)
    with rt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        s, count, double = sum_count_double(x, rt.constant(3))
    assert int(count) == 3
    assert float(tape.gradient(s, x)) == pytest.approx(3 * np.cos(0.5))
    assert float(tape.gradient(double, x)) == 2.0
    assert tape.gradient(count, x) is None                       # an int output
    assert float(tape.gradient([s, double], x)) == pytest.approx(3 * np.cos(0.5) + 2.0)


SHIFT = rt.Variable(np.array([0.5, -0.3]), name="shift")


@ag.convert
def shift_or_scale(x):
    if rt.reduce_sum(x) > 0:
        return x * SHIFT
    return x - SHIFT


@ag.convert
def repeated_shift(x, n):
    y = x
    for _ in rt.range(n):
        y = shift_or_scale(y) + 0.1
    return rt.reduce_sum(y * y)


def repeated_shift_eagerly(x, n):
    y = x
    for _ in range(int(n)):
        y = shift_or_scale.python_function(y) + 0.1
    return rt.reduce_sum(y * y)


@pytest.mark.parametrize("x", [[0.4, 0.9], [-0.4, -0.9]], ids=["scale", "shift"])
def test_nested_converted_calls_reading_a_variable(x):
    def grads(fn):
        t = rt.constant(np.array(x))
        with rt.GradientTape() as tape:
            tape.watch(t)
            y = fn(t, rt.constant(3))
        return tape.gradient(y, [t, SHIFT])

    want = grads(repeated_shift_eagerly)
    assert_all_close(grads(repeated_shift), want)
    np.testing.assert_allclose(
        want[1].numpy(),
        variable_gradient(lambda: repeated_shift_eagerly(rt.constant(np.array(x)), 3), SHIFT),
        rtol=1e-6)


def test_a_variable_passed_as_an_argument_and_by_keyword():
    def uses(v, x):
        if rt.reduce_sum(x) > 0:
            return rt.reduce_sum(v * x)
        return rt.reduce_sum(v - x)

    converted = ag.convert(uses)
    for call in (uses, converted, lambda v, x: converted(x=x, v=v)):
        v = rt.Variable(np.array([1.0, 2.0]))
        with rt.GradientTape() as tape:
            y = call(v, rt.constant(np.array([3.0, 4.0])))
        assert tape.gradient(y, v).numpy().tolist() == [3.0, 4.0]


def test_output_gradients_and_inputs_returned_unchanged():
    @ag.convert
    def square_twice(x):
        for _ in rt.range(2):
            x = x * x
        return x

    @ag.convert
    def passthrough(x, y):
        return x, y * 2.0, x

    x = rt.constant(np.array([1.0, 2.0]))
    with rt.GradientTape() as tape:
        tape.watch(x)
        y = square_twice(x)
    got = tape.gradient(y, x, output_gradients=rt.constant(np.array([10.0, 1.0])))
    assert got.numpy().tolist() == [40.0, 32.0]

    a, b = rt.constant(2.0), rt.constant(3.0)
    with rt.GradientTape() as tape:
        tape.watch([a, b])
        p, q, r = passthrough(a, b)
        z = p * q + r
    assert [float(g) for g in tape.gradient(z, [a, b])] == [7.0, 4.0]


PENALTY_W = rt.Variable(np.array([0.7, -1.3]), name="penalty_w")


def gradient_penalty(x):
    """A tape inside the function (WGAN-GP style); the caller differentiates the result."""
    with rt.GradientTape() as tape:
        tape.watch(x)
        y = rt.reduce_sum(rt.sin(x) * PENALTY_W)
        if rt.reduce_sum(x) > 0:
            y = y * 2.0
    g = tape.gradient(y, x)
    return rt.reduce_sum(g * g)


@pytest.mark.parametrize("how", ["eager", "converted-call", "all-converted"])
def test_second_order_gradient_penalty(how):
    x = np.array([0.4, 0.9])
    w = PENALTY_W.numpy()
    want = [-8 * w ** 2 * np.cos(x) * np.sin(x), 8 * w * np.cos(x) ** 2]

    def outer(x):
        with rt.GradientTape() as tape:
            tape.watch(x)
            p = (ag.convert(gradient_penalty) if how == "converted-call" else gradient_penalty)(x)
        return tape.gradient(p, [x, PENALTY_W])

    got = (ag.convert(outer) if how == "all-converted" else outer)(rt.constant(x))
    assert_all_close(got, want, rtol=1e-10)


def quadratic_loss(w, x, y):
    return rt.reduce_mean(rt.square(rt.tanh(rt.reduce_sum(x * w, 1)) - y))


def adapted_loss(w, x, y, n):
    """MAML's inner loop: n gradient steps from w, the loss after them."""
    fast = w
    for _ in rt.range(n):
        with rt.GradientTape() as inner:
            inner.watch(fast)
            loss = quadratic_loss(fast, x, y)
        fast = fast - 0.5 * inner.gradient(loss, fast)
    return quadratic_loss(fast, x, y)


@pytest.mark.parametrize("mode", FLOW_MODES)
def test_meta_gradient_through_inner_gradient_steps(mode):
    x = np.array([[0.5, -1.0], [1.5, 0.3], [-0.7, 0.8]])
    y = np.array([1.0, -2.0, 0.5])
    args = [np.array([0.3, -0.2]), x, y, np.array(3)]
    want = numeric_gradient(adapted_loss, args, 0)
    tensors = [rt.constant(a) for a in args]

    def meta(w, x, y, n):
        with rt.GradientTape() as outer:
            outer.watch(w)
            loss = (ag.convert(adapted_loss) if mode == "converted-call" else adapted_loss)(
                w, x, y, n)
        return outer.gradient(loss, w)

    got = (ag.convert(meta) if mode == "converted" else meta)(*tensors)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-8)


def test_unconnected_and_integer_inputs_of_a_call_get_none():
    @ag.convert
    def part(x, y, n):
        return x * 2.0 + rt.cast(rt.cast(y, rt.int32), rt.float32) * rt.cast(n, rt.float32)

    x, y, z, n = rt.constant(2.0), rt.constant(3.0), rt.constant(1.0), rt.constant(2)
    with rt.GradientTape(persistent=True) as tape:
        tape.watch([x, y, z, n])
        r = part(x, y, n)
    assert values(tape.gradient(r, [x, y, z, n])) == [2.0, None, None, None]
    zero = tape.gradient(r, [x, y, z], unconnected_gradients="zero")
    assert values(zero) == [2.0, 0.0, 0.0]


def _gradient_after_reassigning(call):
    v = rt.Variable(3.0, dtype=F64)
    x = rt.constant(2.0, F64)
    with rt.GradientTape() as tape:
        tape.watch(x)
        y = call(x, v)
    v.assign(10.0)                      # after the forward pass, before the gradient
    return [float(g) for g in tape.gradient(y, [x, v])]


def test_gradient_uses_forward_values_of_variables_eagerly():
    assert _gradient_after_reassigning(lambda x, v: x * v) == [3.0, 2.0]


def test_call_gradient_uses_forward_values_of_variables():
    """Not [10.0, 2.0], the variable's value when the gradient is taken."""
    assert _gradient_after_reassigning(ag.convert(lambda x, v: x * v)) == [3.0, 2.0]


def _persistent_tape_with_a_step_between(convert):
    """Two losses on one persistent tape; the first gradient is applied before the second is
    taken (the second must still be the gradient at the forward values)."""
    w = rt.Variable(np.array([1.0, 2.0]))
    u = rt.Variable(np.array([0.5, -0.5]))

    def model(x):
        return rt.reduce_sum(rt.tanh(x * w) * u)

    model = ag.convert(model) if convert else model
    optimizer = rt.optimizers.SGD(0.5)
    x = rt.constant(np.array([0.3, 0.8]))
    with rt.GradientTape(persistent=True) as tape:
        first = model(x)
        second = model(x) ** 2
    optimizer.apply_gradients(zip(tape.gradient(first, [u]), [u]))
    return tape.gradient(second, w).numpy()


def test_persistent_tape_with_an_optimizer_step_between_gradients_eagerly():
    x, w, u = np.array([0.3, 0.8]), np.array([1.0, 2.0]), np.array([0.5, -0.5])
    y = np.sum(np.tanh(x * w) * u)
    want = 2 * y * u * x / np.cosh(x * w) ** 2
    np.testing.assert_allclose(_persistent_tape_with_a_step_between(False), want)


def test_persistent_tape_with_an_optimizer_step_between_gradients_of_calls():
    np.testing.assert_allclose(_persistent_tape_with_a_step_between(True),
                               _persistent_tape_with_a_step_between(False))


def _stateful_scale_twice(convert):
    """A function that counts its calls in a variable and scales by it, called twice."""
    calls = rt.Variable(0.0, dtype=F64, trainable=False)

    def scaled(x):
        calls.assign_add(1.0)
        return rt.reduce_sum(x * x) / calls

    scaled = ag.convert(scaled) if convert else scaled
    x = rt.constant(np.array([1.0, 2.0]))
    with rt.GradientTape() as tape:
        tape.watch(x)
        y = scaled(x) + scaled(x)
    return float(y), tape.gradient(y, x).numpy().tolist()


def test_function_updating_its_state_eagerly():
    assert _stateful_scale_twice(False) == (7.5, [3.0, 6.0])     # 2x (1/1 + 1/2)


def test_converted_function_updating_its_state():
    """Each call's gradient divides by that call's count, not both by the final count 2."""
    assert _stateful_scale_twice(True) == (7.5, [3.0, 6.0])


def log_huber(x, m):
    """TensorFlow's py_function example."""
    if rt.abs(x) <= m:
        return x ** 2
    return m ** 2 * (1 - 2 * rt.log(m) + rt.log(x ** 2))


# TensorFlow's py_function is documented as once-differentiable.
def test_py_function_is_differentiable():
    x, m = rt.constant(1.0), rt.constant(2.0)
    with rt.GradientTape() as tape:
        tape.watch([x, m])
        y = rt.py_function(func=log_huber, inp=[x, m], Tout=rt.float32)
    assert float(tape.gradient(y, x)) == 2.0


def test_py_function_inside_a_converted_function_under_a_tape():
    """The py_function's gradient (2.0) adds to x * x's (6.0)."""
    @ag.convert
    def f(x):
        return rt.py_function(lambda t: t * 2.0, [x], rt.float32) + x * x

    x = rt.constant(3.0)
    with rt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert float(tape.gradient(y, x)) == 8.0


# -- 3. rt.gradients in traced code, persistent tapes, watch, stop_gradient, None ------------

def test_gradients_through_explicit_cond_and_while_with_a_variable():
    v = rt.Variable(2.0, dtype=F64)

    @rt.function
    def graph_grads(x, n):
        def body(i, y):
            return i + 1, rt.cond(y > 5.0, lambda: y * 0.5 + v, lambda: y * v)
        _, y = rt.while_loop(lambda i, y: i < n, body, [0, x])
        return rt.gradients(y, [x, v])

    def eager_grads(x, n):
        with rt.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(n):
                y = y * 0.5 + v if y > 5.0 else y * v
        return tape.gradient(y, [x, v])

    for x0 in (1.5, 0.2):
        got = graph_grads(rt.constant(x0, F64), rt.constant(4))
        assert_all_close(got, eager_grads(rt.constant(x0, F64), 4))


def test_gradients_inside_converted_loops_and_branches():
    @ag.convert
    def per_step(x, n):
        total = rt.zeros_like(x)
        for i in rt.range(n):
            y = rt.reduce_sum(rt.sin(x * rt.cast(i + 1, F64)))
            total = total + rt.gradients(y, x)[0]
        return total

    @ag.convert
    def by_branch(x):
        if rt.reduce_sum(x) > 0:
            g = rt.gradients(rt.reduce_sum(x * x * x), x)[0]
        else:
            g = rt.gradients(rt.reduce_sum(rt.exp(x)), x)[0]
        return g

    x = np.array([0.5, -0.4])
    np.testing.assert_allclose(per_step(rt.constant(x), rt.constant(3)).numpy(),
                               sum((i + 1) * np.cos(x * (i + 1)) for i in range(3)))
    np.testing.assert_allclose(by_branch(rt.constant(x)).numpy(), 3 * x ** 2)
    np.testing.assert_allclose(by_branch(rt.constant(-x)).numpy(), np.exp(-x))


def test_gradients_of_a_converted_call_inside_a_converted_function():
    v = rt.Variable(np.array([0.3, 0.6]))

    @ag.convert
    def unroll(x, n):
        for _ in rt.range(n):
            x = rt.tanh(x * v) + 0.1
        return x

    @ag.convert
    def graph_grads(x, n):
        return rt.gradients(rt.reduce_sum(unroll(x, n) ** 2), [x, v])

    def eager_grads(x, n):
        with rt.GradientTape() as tape:
            tape.watch(x)
            y = rt.reduce_sum(unroll.python_function(x, n) ** 2)
        return tape.gradient(y, [x, v])

    x, n = rt.constant(np.array([0.5, -0.4])), rt.constant(3)
    assert_all_close(graph_grads(x, n), eager_grads(x, n))


def persistent_branches(x):
    with rt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        if rt.reduce_sum(x) > 0:
            z = y * x
        else:
            z = y
    return tape.gradient(y, x), tape.gradient(z, x), tape.gradient(z, y)


def stop_gradient_in_loop(x, n):
    with rt.GradientTape() as tape:
        tape.watch(x)
        y = x
        for _ in rt.range(n):
            y = rt.stop_gradient(y) * x + y
    return tape.gradient(y, x)


def watch_intermediate(x):
    h = x * 3.0
    with rt.GradientTape() as tape:
        tape.watch(h)
        y = h * h
        if h > 0:
            y = y + h
    return tape.gradient(y, [h, x])


def loss_outside_the_tape(x, w):
    with rt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        h = x * w
        inside = rt.reduce_sum(h * h)
    outside = rt.reduce_sum(h * h)              # not recorded: no gradient, as in TensorFlow
    return tape.gradient(outside, [x]) + tape.gradient(inside, [x])


def integer_sources(x, n):
    with rt.GradientTape() as tape:
        tape.watch([x, n])
        y = x * rt.cast(n, x.dtype)
        if n > 1:
            y = y * x
    return tape.gradient(y, [x, n])


TAPE_CASES = [
    ("persistent", persistent_branches, [np.array([1.0, 2.0])], [[2.0, 4.0], [3.0, 12.0],
                                                                  [1.0, 2.0]]),
    ("persistent-else", persistent_branches, [np.array([-1.0, -2.0])],
     [[-2.0, -4.0], [-2.0, -4.0], [1.0, 1.0]]),
    ("stop-gradient", stop_gradient_in_loop, [np.array(2.0), np.array(3)], [27.0]),
    ("watch-intermediate", watch_intermediate, [np.array(2.0)], [13.0, None]),
    ("loss-outside-tape", loss_outside_the_tape, [np.array([1.0, 2.0]), np.array([3.0, -1.0])],
     [None, [18.0, 4.0]]),
    ("integer-source", integer_sources, [np.array(1.5), np.array(2, np.int32)], [6.0, None]),
]


@pytest.mark.parametrize("converted", [False, True], ids=["eager", "converted"])
@pytest.mark.parametrize("fn, args, want", [pytest.param(f, a, w, id=n)
                                            for n, f, a, w in TAPE_CASES])
def test_tape_features_inside_converted_functions(fn, args, want, converted):
    got = (ag.convert(fn) if converted else fn)(*[rt.constant(a) for a in args])
    got = got if isinstance(got, (list, tuple)) else [got]
    assert_all_close(got, want)


def test_integer_and_unconnected_sources_in_graphs_are_none():
    @rt.function
    def grads(x, n, unused):
        return rt.gradients(x * rt.cast(n, rt.float32), [x, n, unused])

    got = grads(rt.constant(3.0), rt.constant(2), rt.constant(1.0))
    assert values(got) == [2.0, None, None]


# -- 4. the functional gradient API on functions with control flow --------------------------

def until_ten(x, y):
    while x < 10.0:
        x = x * y
    if y > 2.0:
        return x + y
    return x * y


@pytest.mark.parametrize("converted", [False, True], ids=["eager", "converted"])
def test_gradients_function_with_control_flow(converted):
    f = ag.convert(until_ten) if converted else until_ten
    args = [np.array(1.5), np.array(1.7)]
    tensors = [rt.constant(a) for a in args]
    want = [numeric_gradient(until_ten, args, i) for i in range(2)]
    assert_all_close(rt.gradients_function(f)(*tensors), want, rtol=1e-6)
    value, grads = rt.value_and_gradients_function(f)(*tensors)
    assert float(value) == pytest.approx(float(until_ten(*tensors)))
    assert_all_close(grads, want, rtol=1e-6)
    assert_all_close(rt.gradients_function(f, params=[1])(*tensors), want[1:], rtol=1e-6)


W_IMPLICIT = rt.Variable(np.array([0.5, 1.5]), name="w_implicit")
B_IMPLICIT = rt.Variable(0.1, dtype=F64, name="b_implicit")


def branchy_loss(x, n):
    h = x
    for _ in rt.range(n):
        if rt.reduce_sum(h) > 1.0:
            h = h * W_IMPLICIT
        else:
            h = h + W_IMPLICIT + B_IMPLICIT
    return rt.reduce_sum(h)


@pytest.mark.parametrize("how", ["eager", "converted", "inside-converted"])
def test_implicit_gradients_with_control_flow(how):
    x, n = rt.constant(np.array([0.2, 0.3])), rt.constant(4)
    want = [variable_gradient(lambda: branchy_loss(x, n), v) for v in (W_IMPLICIT, B_IMPLICIT)]
    if how == "inside-converted":
        runs = [ag.convert(lambda x, n: rt.implicit_value_and_gradients(branchy_loss)(x, n))(
            x, n)]
    else:
        f = ag.convert(branchy_loss) if how == "converted" else branchy_loss
        runs = [rt.implicit_value_and_gradients(f)(x, n) for _ in range(2)]  # traced, cached
        runs.append((runs[0][0], rt.implicit_gradients(f)(x, n)))
    for value, pairs in runs:
        assert float(value) == pytest.approx(float(branchy_loss(x, n)))
        assert len(pairs) == 2
        if how != "inside-converted":
            assert {id(v) for _, v in pairs} == {id(W_IMPLICIT), id(B_IMPLICIT)}
        by_shape = sorted(pairs, key=lambda pair: -len(pair[0].shape))   # w's, then b's
        assert_all_close([g for g, _ in by_shape], want, rtol=1e-6)


READ_ORDER = [5, 2, 7, 0, 3, 6, 1, 4]


def _watched_in_read_order(converted):
    variables = [rt.Variable(float(i), name=f"ordered_{i}") for i in range(8)]

    def loss(x):
        total = x
        for i in READ_ORDER:
            total = total + variables[i] * x
        return total

    loss = ag.convert(loss) if converted else loss
    orders = []
    for _ in range(2):                                    # the tracing call, a cached call
        orders.append([variables.index(v) for _, v in rt.implicit_gradients(loss)(
            rt.constant(1.0))])
        with rt.GradientTape() as tape:
            loss(rt.constant(1.0))
        orders.append([variables.index(v) for v in tape.watched_variables()])
    return orders


def test_implicit_gradients_list_variables_in_read_order_eagerly():
    assert _watched_in_read_order(False) == [READ_ORDER] * 4


def test_implicit_gradients_list_variables_in_read_order_through_a_call():
    """The cached call too, not in set-iteration order."""
    assert _watched_in_read_order(True) == [READ_ORDER] * 4


def test_implicit_gradients_of_a_layer_built_by_the_first_call():
    def make(converted):
        rt.random.set_seed(2)
        layer = rt.layers.Dense(3, activation="relu", dtype=F64)

        def loss(x, n):
            h = layer(x)
            for _ in rt.range(n):
                if rt.reduce_sum(h) > 1.0:
                    h = h * 0.5
                else:
                    h = h + 0.25
            return rt.reduce_sum(h * h)
        return ag.convert(loss) if converted else loss

    x = rt.constant(np.array([[1.0, -0.5], [0.3, 0.8]]))
    eager, converted = (rt.implicit_value_and_gradients(make(c))(x, rt.constant(3))
                        for c in (False, True))
    assert float(eager[0]) == pytest.approx(float(converted[0]), rel=1e-12)
    assert [v.name for _, v in converted[1]] == ["dense/kernel:0", "dense/bias:0"]
    assert_all_close([g for g, _ in converted[1]], [g for g, _ in eager[1]])


# -- 5. random ops differentiated: the gradient uses the forward pass's draws ---------------

@ag.convert
def dropout_loss(x, rate):
    keep = rt.random.uniform(rt.shape(x), seed=3, dtype=F64) >= rate
    mask = rt.cast(keep, F64) / (1.0 - rate)
    h = x * mask
    if rt.reduce_sum(h) > 0:
        loss = rt.reduce_sum(h * h)
    else:
        loss = rt.reduce_sum(h)
    return loss, mask


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["square", "sum"])
def test_dropout_in_a_converted_function_under_an_eager_tape(sign):
    x = rt.constant(sign * np.arange(1.0, 9.0))
    for _ in range(3):                              # a new mask each call
        with rt.GradientTape() as tape:
            tape.watch(x)
            loss, mask = dropout_loss(x, 0.5)
        m = mask.numpy()
        want = 2 * x.numpy() * m * m if sign > 0 else m
        np.testing.assert_allclose(tape.gradient(loss, x).numpy(), want)


def noise_history(x, n):
    """Multiplicative noise drawn in a tensor loop; the draws are returned in a list."""
    h = x
    noises = []
    for _ in rt.range(n):
        noise = rt.random.uniform([4], seed=7, dtype=F64) + 0.5
        noises.append(noise)
        h = h * noise * 2.0 + 0.5
    return rt.reduce_sum(h), rt.stack(noises)


@pytest.mark.parametrize("converted", [False, True], ids=["eager", "converted"])
def test_noise_drawn_in_a_loop_under_a_tape_inside_the_function(converted):
    def grads(x, n):
        with rt.GradientTape() as tape:
            tape.watch(x)
            y, noises = noise_history(x, n)
        return tape.gradient(y, x), noises

    g, noises = (ag.convert(grads) if converted else grads)(rt.constant(np.ones(4)),
                                                             rt.constant(3))
    assert np.all((noises.numpy() >= 0.5) & (noises.numpy() < 1.5))
    np.testing.assert_allclose(g.numpy(), np.prod(2 * noises.numpy(), axis=0))


@ag.convert
def noise_product(x, n):
    """The same noise, its running product carried instead of a list."""
    h = x
    product = rt.ones([4], F64)
    for _ in rt.range(n):
        noise = rt.random.uniform([4], seed=7, dtype=F64) + 0.5
        product = product * noise
        h = h * noise * 2.0 + 0.5
    return rt.reduce_sum(h), product


def test_noise_drawn_in_a_loop_of_a_converted_function_under_an_eager_tape():
    x = rt.constant(np.ones(4))
    with rt.GradientTape() as tape:
        tape.watch(x)
        y, product = noise_product(x, rt.constant(3))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 8 * product.numpy())


@ag.convert
def dropout_when_training(x, training):
    if training:
        mask = rt.cast(rt.random.uniform([6], seed=3, dtype=F64) >= 0.5, F64) * 2.0
    else:
        mask = rt.ones([6], F64)
    return rt.reduce_sum(x * x * mask), mask


def test_dropout_off_in_a_tensor_if_under_an_eager_tape():
    x = rt.constant(np.arange(1.0, 7.0))
    with rt.GradientTape() as tape:
        tape.watch(x)
        y, mask = dropout_when_training(x, rt.constant(False))
    assert mask.numpy().tolist() == [1.0] * 6
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * x.numpy())


def test_dropout_in_a_tensor_if_under_an_eager_tape():
    """Minimal: a `training` flag given as a tensor puts the mask in a cond branch; the
    gradient multiplies by a mask drawn again (zeros where the forward mask kept)."""
    x = rt.constant(np.arange(1.0, 7.0))
    for _ in range(3):
        with rt.GradientTape() as tape:
            tape.watch(x)
            y, mask = dropout_when_training(x, rt.constant(True))
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), 2 * x.numpy() * mask.numpy())


# -- 6. losses inside converted code, against finite differences ---------------------------

def sequence_loss(logits, labels, n):
    """Per-step sparse cross entropy up to n steps, plus a sigmoid term on the last one."""
    total = rt.constant(0.0, F64)
    for t in rt.range(n):
        step = rt.nn.sparse_softmax_cross_entropy_with_logits(labels[t], logits[t])
        total += rt.reduce_mean(step)
    probs = rt.cast(labels[n - 1] > 0, F64)
    return total + rt.reduce_sum(rt.nn.sigmoid_cross_entropy_with_logits(
        probs, logits[n - 1][:, 0]))


def distillation_loss(student, teacher, temperature):
    """Soft labels from a teacher (differentiated too), a tensor `if` on the temperature."""
    soft = rt.nn.softmax(teacher / temperature)
    loss = rt.reduce_mean(rt.nn.softmax_cross_entropy_with_logits(soft, student / temperature))
    if temperature > 1.0:
        loss = loss * temperature * temperature
    return loss


def class_axis_first(logits, labels):
    return rt.reduce_sum(rt.nn.softmax_cross_entropy_with_logits(labels, logits, axis=0)
                         * rt.constant([1.0, 2.0, 3.0], F64))


_P = _rng.uniform(size=(4, 3))
LOSS_CASES = [
    ("sequence-int32", sequence_loss, [_rng.normal(size=(3, 2, 4)) * 3,
                                       np.array([[0, 3], [1, 2], [2, 2]], np.int32),
                                       np.array(3, np.int32)]),
    ("sequence-int64", sequence_loss, [_rng.normal(size=(3, 2, 4)) * 3,
                                       np.array([[0, 3], [1, 0], [2, 2]], np.int64),
                                       np.array(2, np.int32)]),
    ("distillation-hot", distillation_loss, [_rng.normal(size=(2, 4)) * 2,
                                             _rng.normal(size=(2, 4)) * 2, np.array(2.5)]),
    ("distillation-cold", distillation_loss, [_rng.normal(size=(2, 4)) * 2,
                                              _rng.normal(size=(2, 4)) * 2, np.array(0.5)]),
    ("axis-0", class_axis_first, [_rng.normal(size=(4, 3)), _P / _P.sum(0)]),
]


@pytest.mark.parametrize("mode", FLOW_MODES)
@pytest.mark.parametrize("fn, args", [pytest.param(f, a, id=n) for n, f, a in LOSS_CASES])
def test_loss_gradients_in_converted_code(fn, args, mode):
    check_flow_gradients(fn, args, mode)


def test_loss_gradients_stay_finite_for_large_logits():
    @ag.convert
    def loss(logits):
        return (rt.reduce_sum(rt.nn.sparse_softmax_cross_entropy_with_logits(
            rt.constant([1]), logits)) + rt.reduce_sum(rt.nn.sigmoid_cross_entropy_with_logits(
                rt.constant([[1.0, 0.0, 1.0]], F64), logits)))

    logits = rt.constant(np.array([[1000.0, -1000.0, 0.0]]))
    with rt.GradientTape() as tape:
        tape.watch(logits)
        y = loss(logits)
    assert np.isfinite(float(y))
    assert tape.gradient(y, logits).numpy().tolist() == [[1.0, -1.0, -0.5]]


# -- 7. training loops: converted steps give the eager steps' losses ------------------------

class GatedMLP:
    """Dense layers in a Python list (residual after the first), a tensor `if` rescaling
    large activations, a Python flag, and a data-dependent `while` before the head."""

    def __init__(self, depth, seed=10):
        self.hidden = [rt.layers.Dense(6, activation="tanh", seed=seed + i)
                       for i in range(depth)]
        self.head = rt.layers.Dense(3, seed=seed + 100)
        self.temperature = rt.Variable(1.0, name="temperature")

    def __call__(self, x, training=False):
        h = x
        for i, layer in enumerate(self.hidden):
            out = layer(h)
            h = out if i == 0 else h + out
            if rt.reduce_max(rt.abs(h)) > 2.0:
                h = h / rt.reduce_max(rt.abs(h))
        if training:
            h = h * self.temperature
        k = 0
        while rt.reduce_mean(h * h) < 0.05 and k < 3:
            h = h * 2.0
            k += 1
        return self.head(h)

    @property
    def trainable_variables(self):
        return [v for layer in self.hidden + [self.head] for v in layer.trainable_variables] \
            + [self.temperature]


class ConvertedCallMLP(GatedMLP):
    """The same model with a converted `__call__` (an eager step records one call op)."""

    __call__ = ag.convert(GatedMLP.__call__)


class SingleDense:
    def __init__(self):
        self.layer = rt.layers.Dense(3, seed=5)

    def __call__(self, x, training=False):
        return self.layer(x)

    @property
    def trainable_variables(self):
        return self.layer.trainable_variables


def classification_step(model, optimizer, x, labels):
    with rt.GradientTape() as tape:
        logits = model(x, training=True)
        loss = rt.reduce_mean(rt.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
    variables = model.trainable_variables
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    return loss


def minimize_step(model, optimizer, x, labels):
    def loss():
        logits = model(x, training=True)
        return rt.reduce_mean(rt.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
    return optimizer.minimize(loss, model.trainable_variables)


OPTIMIZERS = {
    "sgd": lambda: rt.optimizers.SGD(0.2),
    "momentum": lambda: rt.optimizers.SGD(0.1, momentum=0.9),
    "nesterov": lambda: rt.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
    "adam": lambda: rt.optimizers.Adam(0.02),
}


def training_losses(make_model, make_optimizer, step, steps=20, build=False):
    """Losses of `steps` steps over a shuffled, batched data set (iterated eagerly).
    build: call the model once first (its variables exist before the first step)."""
    rt.random.set_seed(0)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(40, 4)).astype(np.float32)
    labels = (x[:, 0] > 0).astype(np.int32) + (x[:, 1] > 0.5).astype(np.int32)
    model, optimizer = make_model(), make_optimizer()
    if build:
        model(rt.constant(x[:1]))
    data = rt.data.Dataset.from_tensor_slices((x, labels)).shuffle(40, seed=3).batch(10)
    losses = []
    while len(losses) < steps:
        for bx, by in data:
            losses.append(float(step(model, optimizer, bx, by)))
    return np.array(losses[:steps]), model, optimizer


MODELS = {"dense": SingleDense, "mlp": lambda: GatedMLP(3)}


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
@pytest.mark.parametrize("model", sorted(MODELS))
def test_converted_training_step_matches_eager(model, optimizer):
    make_model, make_optimizer = MODELS[model], OPTIMIZERS[optimizer]
    eager, eager_model, _ = training_losses(make_model, make_optimizer, classification_step)
    converted_step = ag.convert(classification_step)
    graph, graph_model, graph_opt = training_losses(make_model, make_optimizer, converted_step)
    np.testing.assert_allclose(graph, eager, rtol=1e-5)
    assert eager[-5:].mean() < eager[:5].mean()
    assert int(graph_opt.iterations.numpy()) == 20
    for got, want in zip(graph_model.trainable_variables, eager_model.trainable_variables):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("optimizer", ["nesterov", "adam"])
def test_model_with_a_converted_call_trained_eagerly(optimizer):
    """An eager step differentiates the model's converted `__call__` (a call op with
    conds, a while loop and variables read inside)."""
    eager, _, _ = training_losses(lambda: GatedMLP(3), OPTIMIZERS[optimizer],
                                  classification_step)
    called, _, _ = training_losses(lambda: ConvertedCallMLP(3), OPTIMIZERS[optimizer],
                                   classification_step)
    np.testing.assert_allclose(called, eager, rtol=1e-5)


@pytest.mark.parametrize("optimizer", ["momentum", "adam"])
def test_minimize_in_a_converted_step_matches_eager(optimizer):
    """minimize(loss_fn, var_list) on a model built beforehand (the list is read before the
    loss runs, as in Keras)."""
    def losses(step):
        return training_losses(lambda: GatedMLP(2), OPTIMIZERS[optimizer], step, build=True)[0]

    eager = losses(minimize_step)
    np.testing.assert_allclose(losses(ag.convert(minimize_step)), eager, rtol=1e-5)
    np.testing.assert_allclose(losses(classification_step), eager, rtol=1e-6)
    assert eager[-5:].mean() < eager[:5].mean()


def test_eager_and_converted_steps_share_optimizer_slots():
    """Slots made eagerly are used by the trace and the other way round."""
    def run(pattern):
        rt.random.set_seed(4)
        hidden = rt.layers.Dense(2, activation="tanh", dtype=F64)
        head = rt.layers.Dense(1, dtype=F64)
        optimizer = rt.optimizers.Adam(0.05)

        def step(x, y):
            with rt.GradientTape() as tape:
                loss = rt.reduce_mean(rt.square(head(hidden(x)) - y))
            variables = hidden.trainable_variables + head.trainable_variables
            optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
            return loss

        converted = ag.convert(step)
        rng = np.random.default_rng(0)
        x, y = rt.constant(rng.normal(size=(8, 3))), rt.constant(rng.normal(size=(8, 1)))
        return [float((converted if c == "c" else step)(x, y)) for c in pattern]

    reference = run("eeeeeeee")
    for pattern in ("eeeecccc", "cccceeee", "ecececec"):
        np.testing.assert_allclose(run(pattern), reference, rtol=1e-12)


def test_data_set_of_arguments_shuffled_and_batched_inside_the_step():
    """The converted function slices its own arguments (graph ops), in the same shuffled
    order the eager function draws, with a step per batch."""
    def epoch(xs, ys, w, optimizer):
        loss = rt.constant(0.0, F64)
        for x, y in rt.data.Dataset.from_tensor_slices((xs, ys)).shuffle(8, seed=3).batch(3):
            with rt.GradientTape() as tape:
                loss = rt.reduce_mean(rt.square(rt.reduce_sum(x * w, 1) - y))
            optimizer.apply_gradients([(tape.gradient(loss, w), w)])
        return loss

    def run(fn):
        w, optimizer = rt.Variable(np.zeros(2)), rt.optimizers.Adam(0.1)
        rng = np.random.default_rng(1)
        xs = rng.normal(size=(8, 2))
        ys = xs @ np.array([0.5, -1.0])
        losses = [float(fn(rt.constant(xs), rt.constant(ys), w, optimizer)) for _ in range(3)]
        return losses + w.numpy().tolist() + [int(optimizer.iterations.numpy())]

    want = run(epoch)
    np.testing.assert_allclose(run(ag.convert(epoch)), want, rtol=1e-12)
    assert want[2] < want[0] and want[-1] == 9


def _orders_of_two_passes(converted):
    data = rt.data.Dataset.from_tensor_slices(np.arange(6.0)).shuffle(6, seed=1)

    def visit():
        seen = []
        for x in data:
            seen.append(x)
        return rt.stack(seen)

    visit = ag.convert(visit) if converted else visit
    return [visit().numpy().tolist() for _ in range(2)]


def test_each_pass_over_a_captured_data_set_reshuffles_eagerly():
    first, second = _orders_of_two_passes(False)
    assert sorted(first) == sorted(second) == list(range(6)) and first != second


def test_each_call_of_a_converted_function_reshuffles_a_captured_data_set():
    """Each call makes a new pass over the captured data set: a new order, as each eager
    call makes (the loop is a graph loop, not the first pass unrolled)."""
    assert _orders_of_two_passes(True) == _orders_of_two_passes(False)


def _epochs_over_a_captured_data_set(converted):
    w = rt.Variable(0.0, dtype=F64)
    optimizer = rt.optimizers.SGD(0.05)
    xs = np.linspace(-1, 1, 8)
    data = rt.data.Dataset.from_tensor_slices((xs, 3 * xs + np.sin(5 * xs)))
    data = data.shuffle(8, seed=4).batch(3)

    def epoch():
        total = 0.0
        for x, y in data:
            with rt.GradientTape() as tape:
                loss = rt.reduce_mean(rt.square(x * w - y))
            optimizer.apply_gradients([(tape.gradient(loss, w), w)])
            total += loss
        return total

    epoch = ag.convert(epoch) if converted else epoch
    return [float(epoch()) for _ in range(3)]


def test_epochs_over_a_captured_shuffled_data_set_match_eager():
    np.testing.assert_allclose(_epochs_over_a_captured_data_set(True),
                               _epochs_over_a_captured_data_set(False), rtol=1e-12)


def accumulation_run(container, converted, steps=(6, 3, 6, 4)):
    """Per-example gradients summed over a tensor loop in a `container` (list or tuple) of
    tensors, averaged and clipped, then one momentum step; the losses and weights."""
    w = rt.Variable(np.array([[0.5], [-0.5]]))
    b = rt.Variable(np.array([0.1]))
    variables = container((w, b))
    optimizer = rt.optimizers.SGD(0.1, momentum=0.9)

    def step(xs, ys, n):
        acc = container(rt.zeros_like(v) for v in variables)
        total = rt.constant(0.0, F64)
        for i in rt.range(n):
            with rt.GradientTape() as tape:
                pred = rt.matmul(xs[i:i + 1], w) + b
                loss = rt.reduce_sum(rt.square(pred - ys[i:i + 1]))
            acc = container(a + g for a, g in zip(acc, tape.gradient(loss, variables)))
            total += loss
        acc = [rt.clip_by_value(a / rt.cast(n, F64), -1.0, 1.0) for a in acc]
        optimizer.apply_gradients(zip(acc, variables))
        return total

    step = ag.convert(step) if converted else step
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(6, 2))
    ys = xs @ np.array([[1.0], [2.0]]) + 0.5
    losses = [float(step(rt.constant(xs), rt.constant(ys), rt.constant(n))) for n in steps]
    return losses + w.numpy().ravel().tolist() + b.numpy().tolist()


def test_gradient_accumulation_in_a_tuple_matches_eager():
    want = accumulation_run(tuple, False)
    np.testing.assert_allclose(accumulation_run(tuple, True), want, rtol=1e-12)
    assert accumulation_run(list, False) == want and want[2] < want[0]


# A list the loop body only reassigns is carried as a nested structure, as in TensorFlow.
def test_gradient_accumulation_in_a_list_matches_eager():
    np.testing.assert_allclose(accumulation_run(list, True), accumulation_run(list, False),
                               rtol=1e-12)


def test_a_list_reassigned_in_a_tensor_loop():
    """Minimal: the list holds elements of shapes (2,) and ()."""
    @ag.convert
    def add_ones(a, b, n):
        acc = [a, b]
        for _ in rt.range(n):
            acc = [x + 1.0 for x in acc]
        return acc

    got = add_ones(rt.constant([1.0, 2.0]), rt.constant(1.0), rt.constant(3))
    assert values(got)[0].tolist() == [4.0, 5.0] and float(got[1]) == 4.0


@pytest.mark.parametrize("converted", [False, True], ids=["eager", "converted"])
def test_training_until_converged_in_a_tensor_while(converted):
    """Early stopping: a `while` on the loss and a step budget, Adam applied in the body."""
    w = rt.Variable(np.zeros(2))
    optimizer = rt.optimizers.Adam(0.2)

    def fit(x, y, tol, max_steps):
        loss = rt.constant(np.inf, F64)
        step = 0
        while loss > tol and step < max_steps:
            with rt.GradientTape() as tape:
                loss = rt.reduce_mean(rt.square(rt.reduce_sum(x * w, 1) - y))
            optimizer.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
            step += 1
        return loss, step

    rng = np.random.default_rng(3)
    x = rng.normal(size=(10, 2))
    y = x @ np.array([1.0, -0.5])
    loss, steps = (ag.convert(fit) if converted else fit)(
        rt.constant(x), rt.constant(y), rt.constant(1e-3), rt.constant(200))
    assert float(loss) <= 1e-3 and int(steps) == 46 == int(optimizer.iterations.numpy())


@pytest.mark.parametrize("converted", [False, True], ids=["eager", "converted"])
def test_epochs_in_a_tensor_loop_with_clipping_by_global_norm(converted):
    w = rt.Variable(np.zeros((2, 1)))
    b = rt.Variable(np.zeros(1))
    optimizer = rt.optimizers.SGD(0.1, momentum=0.5)
    rng = np.random.default_rng(2)
    xs = rng.normal(size=(12, 2))
    data = rt.data.Dataset.from_tensor_slices((xs, xs @ np.array([[1.5], [-0.7]]) + 0.2))
    data = data.batch(4)

    def fit(epochs, max_norm):
        last = rt.constant(0.0, F64)
        for _ in rt.range(epochs):
            for x, y in data:
                with rt.GradientTape() as tape:
                    loss = rt.reduce_mean(rt.square(rt.matmul(x, w) + b - y))
                grads = tape.gradient(loss, [w, b])
                norm = rt.sqrt(sum(rt.reduce_sum(g * g) for g in grads))
                if norm > max_norm:
                    grads = [g * (max_norm / norm) for g in grads]
                optimizer.apply_gradients(zip(grads, [w, b]))
                last = loss
        return last

    loss = (ag.convert(fit) if converted else fit)(rt.constant(5), rt.constant(1.0, F64))
    assert float(loss) == pytest.approx(0.02041119813174734, rel=1e-9)
    np.testing.assert_allclose(w.numpy().ravel(), [1.0423712467799133, -0.44672289049635533],
                               rtol=1e-9)


@pytest.mark.parametrize("converted", [False, True], ids=["eager", "converted"])
def test_an_optimizer_step_only_in_one_branch(converted):
    w = rt.Variable(np.array([2.0, -1.0]))
    optimizer = rt.optimizers.Adam(0.1)

    def step(x, flag):
        if flag > 0:
            with rt.GradientTape() as tape:
                loss = rt.reduce_sum(rt.square(w - x))
            optimizer.apply_gradients([(tape.gradient(loss, w), w)])
        else:
            loss = rt.reduce_sum(w * 0.0)
        return loss

    step = ag.convert(step) if converted else step
    x = rt.constant(np.array([0.0, 1.0]))
    losses = [float(step(x, rt.constant(k))) for k in (1, 0, 1, 1)]
    assert losses[1] == 0.0 and int(optimizer.iterations.numpy()) == 3
    assert losses[0] == 8.0 and losses[3] < losses[2] < losses[0]


def test_a_learning_rate_variable_decayed_between_converted_steps():
    def run(converted):
        w = rt.Variable(np.array([2.0, -1.0]))
        lr = rt.Variable(0.1, dtype=F64, trainable=False)
        optimizer = rt.optimizers.SGD(lr, momentum=0.5)

        def step(x):
            with rt.GradientTape() as tape:
                loss = rt.reduce_sum(rt.square(w - x))
            optimizer.apply_gradients([(tape.gradient(loss, w), w)])
            return loss

        step = ag.convert(step) if converted else step
        losses = []
        for _ in range(4):
            losses.append(float(step(rt.constant(np.array([0.0, 0.0])))))
            lr.assign(lr * 0.5)
        return losses + w.numpy().tolist()

    want = run(False)
    np.testing.assert_allclose(run(True), want, rtol=1e-12)
    assert want[:2] == [5.0, pytest.approx(3.2)]


def test_minimize_with_a_callable_var_list():
    """Keras: pass var_list as a callable when the loss creates the model's variables."""
    rt.random.set_seed(0)
    layer = rt.layers.Dense(1)
    optimizer = rt.optimizers.SGD(0.1)
    x, y = rt.constant([[1.0, 2.0]]), rt.constant([[1.0]])
    first = float(optimizer.minimize(lambda: rt.reduce_mean(rt.square(layer(x) - y)),
                                     lambda: layer.trainable_variables))
    second = float(optimizer.minimize(lambda: rt.reduce_mean(rt.square(layer(x) - y)),
                                      lambda: layer.trainable_variables))
    assert second < first and int(optimizer.iterations.numpy()) == 2
