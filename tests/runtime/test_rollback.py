"""A graph call that fails leaves the state it wrote as it was before the call: variables
(assigned at the top level, in a branch, in a loop, in a called function), random
generators, TF1 sessions' runs; with every executor. Eager code is not undone."""
import numpy as np
import pytest

import autograph as ag
import runtime as rt
from runtime import config
from runtime.ops.random_ops import get_global_seed

EXECUTORS = [
    pytest.param({"executor": "plain"}, id="plain"),
    pytest.param({"executor": "fast"}, id="fast"),
    pytest.param({"executor": "fast", "optimizations": False}, id="fast-unoptimized"),
    pytest.param({"executor": "compiled", "compile_policy": "always"}, id="compiled"),
]


@pytest.fixture(params=EXECUTORS)
def executor(request):
    settings = request.param
    if settings["executor"] == "compiled":
        pytest.importorskip("numba")
    with config.options(**settings):
        yield


def test_an_update_before_a_failing_assertion_is_undone(executor):
    v = rt.Variable([1.0, 2.0])

    @rt.function
    def deposit(amount):
        v.assign_add(amount)
        v.assign(v * 2.0)
        rt.debugging.assert_non_negative(amount)
        return v.read_value()

    with pytest.raises(AssertionError):
        deposit(rt.constant([1.0, -1.0]))
    assert v.numpy().tolist() == [1.0, 2.0]
    assert deposit(rt.constant([1.0, 1.0])).numpy().tolist() == [4.0, 6.0]


def scaled_rows(v, x, n):
    """Assigns `v` in every iteration, then gathers past the end of `x` when n > len(x)."""
    def body(i, acc):
        with rt.control_dependencies([v.assign_add(1.0)]):
            return i + 1, acc + rt.gather(x, i)
    return rt.while_loop(lambda i, acc: i < n, body, [rt.constant(0), rt.constant(0.0)])[1]


def test_updates_of_earlier_loop_iterations_are_undone(executor):
    v = rt.Variable(10.0)
    f = rt.function(lambda x, n: scaled_rows(v, x, n))
    x = rt.constant([1.0, 2.0, 3.0])
    with pytest.raises(rt.errors.OpError):
        f(x, rt.constant(5))
    assert float(v.numpy()) == 10.0
    assert float(f(x, rt.constant(2))) == 3.0
    assert float(v.numpy()) == 12.0


def test_updates_in_a_tensor_if_and_a_called_function_are_undone(executor):
    v = rt.Variable(0.0)
    w = rt.Variable([0.0, 0.0])

    @rt.function
    def inner(x):
        w.assign(x)
        return x

    @ag.convert
    def step(x, k):
        if k > 0:
            v.assign_add(5.0)
        else:
            v.assign_sub(5.0)
        inner(x)
        return x[k]                       # out of range for k >= 2

    with pytest.raises((IndexError, rt.errors.OpError)):
        step(rt.constant([1.0, 2.0]), rt.constant(7))
    assert float(v.numpy()) == 0.0 and w.numpy().tolist() == [0.0, 0.0]
    assert float(step(rt.constant([1.0, 2.0]), rt.constant(1))) == 2.0
    assert float(v.numpy()) == 5.0 and w.numpy().tolist() == [1.0, 2.0]


def noise_then_check():
    """A new graph function drawing seeded noise, then asserting its argument >= 0."""
    @rt.function
    def noisy(x):
        noise = rt.random.uniform([3], seed=5)
        rt.debugging.assert_non_negative(x)
        return noise
    return noisy


def test_a_failed_call_does_not_advance_a_random_generator(executor):
    seed = get_global_seed()
    try:
        rt.random.set_seed(1)
        noisy = noise_then_check()
        with pytest.raises(AssertionError):
            noisy(rt.constant(-1.0))
        after_failure = [noisy(rt.constant(1.0)).numpy() for _ in range(2)]
        rt.random.set_seed(1)
        fresh = noise_then_check()
        expected = [fresh(rt.constant(1.0)).numpy() for _ in range(2)]
        np.testing.assert_array_equal(after_failure, expected)
        assert not np.array_equal(*expected)          # (each call draws new numbers)
    finally:
        rt.random.set_seed(seed)


def test_a_graph_call_error_caught_by_a_py_function_undoes_that_call_only(executor):
    v = rt.Variable(0.0)

    @rt.function
    def risky(x):
        v.assign_add(100.0)
        rt.debugging.assert_non_negative(x)
        return x

    def try_risky(x):
        try:
            risky(x)
        except AssertionError:
            return np.float32(-1.0)
        return np.float32(1.0)

    @rt.function
    def outer(x):
        v.assign_add(1.0)
        return rt.py_function(try_risky, [x], rt.float32)

    assert float(outer(rt.constant(-1.0))) == -1.0
    assert float(v.numpy()) == 1.0         # the outer call's update stays, risky's is undone
    assert float(outer(rt.constant(1.0))) == 1.0
    assert float(v.numpy()) == 102.0


def test_a_failed_session_run_undoes_its_assignments(executor):
    graph = rt.Graph()
    with graph.as_default():
        v = rt.Variable(3.0)
        x = rt.placeholder(rt.float32, [])
        update = v.assign_add(x)
        with rt.control_dependencies([update]):
            checked = rt.debugging.assert_non_negative(x)
        with rt.control_dependencies([checked]):
            result = v.read_value()
        init = rt.global_variables_initializer()
    with rt.Session(graph=graph) as sess:
        sess.run(init)
        with pytest.raises(AssertionError):
            sess.run(result, {x: -1.0})
        assert sess.run(v) == 3.0
        assert sess.run(result, {x: 2.0}) == 5.0


def test_eager_updates_before_an_eager_error_stay():
    v = rt.Variable(1.0)
    v.assign_add(1.0)
    with pytest.raises(AssertionError):
        rt.debugging.assert_non_negative(rt.constant(-1.0))
    assert float(v.numpy()) == 2.0
