"""A long run stays interruptible and recoverable: Ctrl-C in a long graph loop leaves the
function usable, an interrupted trace leaves nothing cached, a failing op in a loop names the
user's line, and the variable updates that ran before a failing op are undone."""
import _thread
import os
import threading

import numpy as np
import pytest

import autograph as ag
import runtime as rt


def counting_loop(n):
    return rt.while_loop(lambda i, acc: i < n, lambda i, acc: (i + 1, acc + 2.0),
                         [rt.constant(0), rt.constant(0.0)])


def interrupt_soon(seconds=0.5):
    """Ctrl-C for the main thread (as a terminal sends it) in `seconds`."""
    timer = threading.Timer(seconds, _thread.interrupt_main)
    timer.start()
    return timer


@pytest.mark.parametrize("executor", ["fast", "plain"])
def test_ctrl_c_in_a_long_graph_loop_leaves_the_function_usable(executor):
    v = rt.Variable(0)

    @rt.function
    def run(n):
        i, total = counting_loop(n)
        v.assign_add(i)
        return i, total

    with rt.config.options(executor=executor, loop_iteration_limit=None):
        run(rt.constant(3))
        timer = interrupt_soon()
        try:
            with pytest.raises(KeyboardInterrupt):
                run(rt.constant(2**31 - 1))        # minutes of iterations
        finally:
            timer.cancel()
        i, total = run(rt.constant(5))
    assert (int(i), float(total)) == (5, 10.0)
    assert int(v.numpy()) == 8                     # the interrupted call never assigned
    assert run.experimental_get_tracing_count() == 1
    assert rt.executing_eagerly()


def test_ctrl_c_while_tracing_caches_nothing_and_the_next_call_traces_again():
    interrupt = [True]

    @rt.function
    def double(x):
        y = x * 2.0
        if interrupt[0]:
            raise KeyboardInterrupt
        return y

    with pytest.raises(KeyboardInterrupt):
        double(rt.constant(1.0))
    assert double.concrete_functions == [] and double.experimental_get_tracing_count() == 0
    assert rt.executing_eagerly() and rt.constant(1.0) * 2.0 == 2.0
    interrupt[0] = False
    assert float(double(rt.constant(1.0))) == 2.0
    assert double.experimental_get_tracing_count() == 1


def test_ctrl_c_while_tracing_a_converted_function_caches_nothing():
    interrupt = [True]

    def stop_now():
        if interrupt[0]:
            raise KeyboardInterrupt

    @ag.convert
    def total(x):
        s = 0.0
        for v in x:
            stop_now()
            s += v
        return s

    with pytest.raises(KeyboardInterrupt):
        total(rt.constant([1.0, 2.0]))
    assert total.experimental_get_tracing_count() == 0
    interrupt[0] = False
    assert float(total(rt.constant([1.0, 2.0]))) == 3.0


def loop_reading_past_the_end(x, n, v):
    def body(i, acc):
        with rt.control_dependencies([v.assign_add(1)]):
            return i + 1, acc + rt.gather(x, i)          # fails once i reaches len(x)
    return rt.while_loop(lambda i, acc: i < n, body, [rt.constant(0), rt.constant(0.0)])[1]


GATHER_LINE = "return i + 1, acc + rt.gather(x, i)          # fails once i reaches len(x)"


@pytest.mark.parametrize("executor", ["fast", "plain"])
def test_a_failing_op_in_a_loop_names_the_users_line_and_earlier_updates_are_undone(executor):
    v = rt.Variable(0)
    f = rt.function(lambda x, n: loop_reading_past_the_end(x, n, v))
    x = rt.constant([1.0, 2.0, 3.0])
    with rt.config.options(executor=executor):
        with pytest.raises(rt.errors.OpError) as info:
            f(x, rt.constant(10))
        assert int(v.numpy()) == 0        # iterations 0-3 updated it before the failure
        message = str(info.value)
        assert f"{os.path.basename(__file__)}" in message and GATHER_LINE in message
        assert float(f(x, rt.constant(3))) == 6.0           # still usable
    assert int(v.numpy()) == 3


def test_a_failing_op_in_a_loaded_graph_names_the_saved_line(tmp_path):
    v = rt.Variable(0)
    f = rt.function(lambda x, n: loop_reading_past_the_end(x, n, v))
    x = rt.constant([1.0, 2.0, 3.0])
    rt.saved.save(f.get_concrete_function(x, rt.constant(1)), str(tmp_path / "loop"))
    loaded = rt.saved.load(str(tmp_path / "loop"))
    with pytest.raises(rt.errors.OpError) as info:
        loaded(x, rt.constant(10))
    assert GATHER_LINE in str(info.value)
    np.testing.assert_array_equal(loaded.variables[0].numpy(), 0)     # its updates undone
    assert int(v.numpy()) == 0
