"""rt.config.set_loop_iteration_limit: a runaway while loop becomes a clear error.

The limit counts the body runs of one loop run (each start of a loop counts from zero);
the loop that would run its body once more than the limit raises LoopIterationLimitError
naming the loop's line, under either executor, optimized or not, and eagerly.
"""
import inspect
import os
import subprocess
import sys

import pytest

import runtime as rt
from runtime.errors import LoopIterationLimitError, OpError

SETTINGS = [{"executor": "fast"}, {"executor": "plain"},
            {"executor": "fast", "optimizations": False},
            {"executor": "plain", "optimizations": False}]
SETTING_IDS = ["fast", "plain", "fast-unoptimized", "plain-unoptimized"]


@pytest.fixture(params=SETTINGS, ids=SETTING_IDS)
def settings(request):
    with rt.config.options(**request.param):
        yield


def count_up(x):
    return rt.while_loop(lambda x: x > 0, lambda x: x + 1, [x])[0]        # runs forever


def count_to(n):
    return rt.while_loop(lambda i: i < n, lambda i: i + 1, [rt.constant(0)])[0]


LOOP_LINE = inspect.getsourcelines(count_up)[1] + 1


def test_the_limit_is_off_by_default_and_checked():
    before = rt.config.get_loop_iteration_limit()
    assert before is None or os.environ.get("RT_LOOP_LIMIT")
    for bad in (-1, 2.5, "10", True):
        with pytest.raises(ValueError):
            rt.config.set_loop_iteration_limit(bad)
    with rt.config.options(loop_iteration_limit=5):
        assert rt.config.get_loop_iteration_limit() == 5
        with rt.config.options(loop_iteration_limit=None):
            assert rt.config.get_loop_iteration_limit() is None
        with rt.config.options(executor="plain"):            # left out: kept
            assert rt.config.get_loop_iteration_limit() == 5
    assert rt.config.get_loop_iteration_limit() == before


def test_the_environment_sets_the_limit():
    code = "import runtime as rt; print(rt.config.get_loop_iteration_limit())"
    for value, expected in (("7", "7"), ("none", "None"), ("", "None")):
        env = dict(os.environ, RT_LOOP_LIMIT=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout
        assert out.strip() == expected


def assert_limit_error(info, limit, line=LOOP_LINE):
    err = info.value
    assert isinstance(err, OpError) and isinstance(err, RuntimeError)
    assert err.origin is not None and err.origin.lineno == line
    message = str(err)
    assert f"loop iteration limit ({limit})" in message
    assert "rt.config.set_loop_iteration_limit(n)" in message and "RT_LOOP_LIMIT" in message
    assert f'{os.path.basename(__file__)}", line {line}' in message
    assert "rt.while_loop(lambda x: x > 0" in message


def test_a_runaway_graph_loop_fails_at_the_limit(settings):
    f = rt.function(count_up)
    with rt.config.options(loop_iteration_limit=1000):
        with pytest.raises(LoopIterationLimitError) as info:
            f(rt.constant(1))
    assert_limit_error(info, 1000)
    assert info.value.op.type == "while"


def test_a_runaway_eager_loop_fails_at_the_limit():
    with rt.config.options(loop_iteration_limit=100):
        with pytest.raises(LoopIterationLimitError) as info:
            count_up(rt.constant(1))
    assert_limit_error(info, 100)


@pytest.mark.parametrize("eager", [False, True], ids=["graph", "eager"])
def test_a_loop_may_run_exactly_the_limit(settings, eager):
    f = count_to if eager else rt.function(count_to)
    with rt.config.options(loop_iteration_limit=10):
        assert int(f(rt.constant(10))) == 10
        with pytest.raises(LoopIterationLimitError):
            f(rt.constant(11))


def test_the_limit_is_read_when_the_loop_starts_not_when_traced(settings):
    f = rt.function(count_to)
    n = rt.constant(50)
    with rt.config.options(loop_iteration_limit=None):
        assert int(f(n)) == 50
        with rt.config.options(loop_iteration_limit=49):
            with pytest.raises(LoopIterationLimitError):
                f(n)
        assert int(f(n)) == 50


def test_each_run_of_a_nested_loop_counts_from_zero(settings):
    @rt.function
    def grid(n):
        def outer(i, total):
            inner = rt.while_loop(lambda j, t: j < n, lambda j, t: (j + 1, t + 1), [0, total])
            return i + 1, inner[1]
        return rt.while_loop(lambda i, t: i < n, outer, [0, 0])[1]

    with rt.config.options(loop_iteration_limit=8):
        assert int(grid(rt.constant(8))) == 64
        with pytest.raises(LoopIterationLimitError):
            grid(rt.constant(9))


def test_maximum_iterations_within_the_limit_ends_the_loop_quietly(settings):
    @rt.function
    def bounded(x, m):
        return rt.while_loop(lambda x: x > 0, lambda x: x + 1, [x], maximum_iterations=m)[0]

    with rt.config.options(loop_iteration_limit=20):
        assert int(bounded(rt.constant(1), rt.constant(20))) == 21
        assert int(bounded(rt.constant(1), 5)) == 6
        with pytest.raises(LoopIterationLimitError):
            bounded(rt.constant(1), rt.constant(21))


def test_a_runaway_loop_inside_a_cond_fails(settings):
    @rt.function
    def f(x):
        return rt.cond(x > 0, lambda: count_up(x), lambda: x)

    with rt.config.options(loop_iteration_limit=30):
        assert int(f(rt.constant(-1))) == -1
        with pytest.raises(LoopIterationLimitError) as info:
            f(rt.constant(1))
    assert_limit_error(info, 30)


def test_loop_gradients_run_under_the_limit(settings):
    @rt.function
    def grad(x, n):
        y = rt.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * x),
                          [0, rt.constant(1.0)])[1]
        return rt.gradients(y, [x])[0]

    with rt.config.options(loop_iteration_limit=4):
        assert float(grad(rt.constant(2.0), rt.constant(4))) == 32.0      # 4 * 2**3
        with pytest.raises(LoopIterationLimitError):
            grad(rt.constant(2.0), rt.constant(5))


def test_sessions_fail_at_the_limit_too():
    g = rt.Graph()
    with g.as_default():
        x = rt.placeholder(rt.int32, shape=[])
        y = count_up(x)
        with rt.Session() as sess, rt.config.options(loop_iteration_limit=10):
            assert int(sess.run(y, feed_dict={x: 0})) == 0
            with pytest.raises(LoopIterationLimitError):
                sess.run(y, feed_dict={x: 1})
