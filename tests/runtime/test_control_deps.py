"""Side effects in graphs: stateful ops run in program order, are never pruned, and outputs
wait for them (automatic control dependencies); rt.print, rt.Assert, rt.py_function;
explicit rt.control_dependencies, rt.group and rt.no_op."""
import contextlib
import io

import numpy as np
import pytest

import runtime as rt


def printed(fn, *args):
    """What `fn(*args)` writes to stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn(*args)
    return out.getvalue()


# -- automatic control dependencies -------------------------------------------------------------

def test_unused_stateful_ops_still_run_in_program_order(capsys):
    v = rt.Variable(0)
    seen = []

    @rt.function
    def f(x):
        rt.print("first", x)
        v.assign(10)                                              # result unused
        rt.py_function(lambda: seen.append(int(v.numpy())), [], None)
        rt.debugging.assert_equal(v, 10)
        rt.random.uniform([2])                                    # result unused
        rt.print("last", v.read_value())
        return x + 1

    assert int(f(rt.constant(1))) == 2
    assert int(f(rt.constant(2))) == 3
    assert capsys.readouterr().out == "first 1\nlast 10\nfirst 2\nlast 10\n"
    assert seen == [10, 10]
    graph = f.get_concrete_function(rt.TensorSpec([], rt.int32)).graph
    assert [op.type for op in graph.control_outputs] == [
        "print", "assign", "py_function", "assert", "random_uniform", "print"]


def test_stateful_ops_are_chained_by_control_edges():
    v = rt.Variable(0.0)

    @rt.function
    def f():
        rt.print("a")
        v.assign(1.0)
        rt.print("b")

    graph = f.get_concrete_function().graph
    first, second = [op for op in graph.ops if op.type == "print"]
    assign, = [op for op in graph.ops if op.type == "assign"]
    assert assign.control_inputs == [first] and second.control_inputs == [assign]


def test_a_read_waits_for_the_previous_write_and_the_next_write_for_the_read():
    v = rt.Variable(1.0)

    @rt.function
    def f():
        v.assign(2.0)
        before = v.read_value()
        v.assign(3.0)
        return before

    graph = f.get_concrete_function().graph
    first, second = [op for op in graph.ops if op.type == "assign"]
    read, = [op for op in graph.ops if op.type == "read_variable"]
    assert first in read.control_inputs and read in second.control_inputs
    assert float(f()) == 2.0 and v.numpy() == 3.0


def test_state_in_branches_and_loops_is_ordered_with_the_outer_program(capsys):
    v = rt.Variable(0)

    @rt.function
    def f(n):
        v.assign(1)
        a = rt.cond(n > 0, lambda: v.read_value() * 10, lambda: v.read_value())
        v.assign(2)

        def body(i):
            rt.print("iteration", i)
            v.assign_add(i)
            return i + 1

        rt.while_loop(lambda i: i < n, body, [0])
        rt.print("end", v.read_value())
        return a

    assert int(f(rt.constant(3))) == 10
    assert v.numpy() == 5
    assert capsys.readouterr().out == "iteration 0\niteration 1\niteration 2\nend 5\n"


def test_state_inside_a_nested_function_is_ordered_with_the_caller(capsys):
    v = rt.Variable(1)

    @rt.function
    def bump():
        rt.print("bump")
        v.assign_add(1)

    @rt.function
    def f():
        before = v.read_value()
        bump()
        rt.print("after", v.read_value())
        return before

    assert int(f()) == 1
    assert capsys.readouterr().out == "bump\nafter 2\n"


def test_random_ops_draw_new_numbers_on_each_call_even_when_unused_elsewhere():
    @rt.function
    def f():
        return rt.random.uniform([3])

    assert not np.array_equal(f().numpy(), f().numpy())


# -- rt.print ------------------------------------------------------------------------------------

def test_print_at_run_time_matches_pythons_print_of_the_eager_values():
    v = rt.Variable([1.0, 2.0], name="v")

    def program(out, x, n, flag):
        out(x, n, flag)
        out("x =", x, "n:", n, sep="|", end="!\n")
        out([x, {"k": n, "b": flag}], (n,), None, 1.5)
        out(x * 0.1, n // 2, flag & False)
        out()
        out(v)
        out(rt.zeros([0]))

    args = (rt.constant([[1.5, 2.0], [3.0, 4.0]]), rt.constant(7), rt.constant(True))
    expected = printed(program, print, *args)
    assert printed(rt.function(lambda *a: program(rt.print, *a)), *args) == expected
    assert printed(program, rt.print, *args) == expected              # rt.print eagerly


def test_print_happens_at_run_time_not_while_tracing():
    @rt.function
    def f(x):
        rt.print("value", x)
        return x

    assert printed(f.get_concrete_function, rt.TensorSpec([], rt.int32)) == ""
    assert printed(f, rt.constant(4)) == "value 4\n"
    assert printed(f, rt.constant(5)) == "value 5\n"


def test_print_to_a_file():
    out = io.StringIO()
    rt.function(lambda x: rt.print("x", x, file=out))(rt.constant(1))
    assert out.getvalue() == "x 1\n"


# -- assertions ----------------------------------------------------------------------------------

def test_failed_assertion_raises_an_assertion_error_at_once_when_eager():
    with pytest.raises(AssertionError, match="bad value: \\[1 2\\]"):
        rt.Assert(rt.constant(False), ["bad value:", rt.constant([1, 2])])
    rt.Assert(rt.constant(True), ["never shown"])
    with pytest.raises(AssertionError, match="x == y did not hold"):
        rt.debugging.assert_equal(rt.constant(1), 2)


@pytest.mark.parametrize("check, good, bad", [
    (rt.debugging.assert_positive, [1.0], [-1.0]),
    (rt.debugging.assert_non_negative, [0.0], [-1.0]),
    (rt.debugging.assert_negative, [-1.0], [0.0]),
    (lambda x: rt.debugging.assert_less(x, 1.0), [0.0], [1.0]),
    (lambda x: rt.debugging.assert_greater_equal(x, 1.0), [1.0], [0.5]),
], ids=["positive", "non_negative", "negative", "less", "greater_equal"])
def test_graph_assertions_fail_on_the_call_whose_data_fails(check, good, bad):
    @rt.function
    def f(x):
        check(x)
        return x

    f(rt.constant(good))
    with pytest.raises(AssertionError) as info:
        f(rt.constant(bad))
    assert isinstance(info.value, rt.errors.OpError)
    assert "test_control_deps.py" in str(info.value)     # the line that made the assert
    f(rt.constant(good))
    assert f.experimental_get_tracing_count() == 1


def test_assert_message_holds_the_data():
    @rt.function
    def f(x):
        rt.debugging.assert_positive(x, message="x must be positive")
        return x

    with pytest.raises(AssertionError, match="x must be positive .* x = -2.0"):
        f(rt.constant(-2.0))


# -- py_function ---------------------------------------------------------------------------------

def test_py_function_runs_python_on_eager_tensors_inside_a_graph():
    def numpy_sort(t):
        assert rt.executing_eagerly()
        return np.sort(t.numpy())

    @rt.function
    def f(x):
        return rt.py_function(numpy_sort, [x * 2], rt.float32) + 1.0

    np.testing.assert_array_equal(f(rt.constant([3.0, 1.0, 2.0])).numpy(), [3.0, 5.0, 7.0])
    assert "py_function[func=numpy_sort" in str(f.get_concrete_function(
        rt.TensorSpec([3], rt.float32)).graph)


def test_py_function_with_several_outputs():
    @rt.function
    def f(x):
        low, high = rt.py_function(lambda t: (t - 1, t + 1), [x], [rt.int32, rt.int32])
        return low * high

    assert int(f(rt.constant(3))) == 8


def test_py_function_returning_the_wrong_number_of_values_names_itself():
    def two(t):
        return t, t

    f = rt.function(lambda x: rt.py_function(two, [x], [rt.int32]))
    with pytest.raises(ValueError, match="py_function two returned 2 values, Tout lists 1"):
        f(rt.constant(1))


# -- explicit control: TF1 graphs ----------------------------------------------------------------

def test_control_dependencies_group_and_no_op_in_a_session():
    g = rt.Graph()
    with g.as_default():
        w = rt.Variable(1.0)
        increment = w.assign_add(1.0)
        with rt.control_dependencies([increment]):
            after = w.read_value() * 1.0
        plain = w.read_value() * 1.0
        both = rt.group(increment, w.assign_add(10.0))
        with rt.Session() as sess:
            sess.run(rt.global_variables_initializer())
            assert sess.run(plain) == 1.0                 # no dependency: nothing else runs
            assert sess.run(after) == 2.0
            assert sess.run(both) is None
            assert sess.run(w) == 13.0
            assert sess.run(rt.no_op()) is None
    assert both.type == "no_op" and len(both.control_inputs) == 2


def test_control_dependencies_none_clears_the_outer_ones():
    g = rt.Graph()
    with g.as_default():
        a = rt.no_op(name="a")
        with rt.control_dependencies([a]):
            with rt.control_dependencies(None):
                free = rt.constant(1.0)
            bound = rt.constant(2.0)
    assert free.op.control_inputs == [] and bound.op.control_inputs == [a]


def test_control_dependencies_group_and_no_op_eagerly_do_nothing():
    with rt.control_dependencies([rt.constant(1.0)]):
        assert float(rt.constant(2.0)) == 2.0
    assert rt.group(rt.constant(1.0)) is None
    assert rt.no_op() is None


def test_a_control_dependency_on_a_function_input_needs_nothing_run():
    @rt.function
    def f(x):
        with rt.control_dependencies([x]):
            y = x + 1
        return y

    assert int(f(rt.constant(3))) == 4
