"""rt.Variable: mutable state shared by eager code, graph functions and TF1 sessions."""
import numpy as np
import pytest

import runtime as rt


# -- eager -----------------------------------------------------------------------------------

def test_eager_assign_read_and_update():
    v = rt.Variable([1.0, 2.0], name="v")
    assert v.name == "v:0" and v.dtype == rt.float32 and v.shape == (2,)
    np.testing.assert_array_equal(v.assign([3.0, 4.0]).numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(v.assign_add([1.0, 1.0]).numpy(), [4.0, 5.0])
    np.testing.assert_array_equal(v.assign_sub([2.0, 2.0]).numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(v.read_value().numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(v.numpy(), [2.0, 3.0])


def test_numpy_returns_a_copy_the_variable_does_not_change_under_the_caller():
    v = rt.Variable([1.0, 2.0])
    snapshot = v.numpy()
    v.assign_add([1.0, 1.0])
    np.testing.assert_array_equal(snapshot, [1.0, 2.0])


def test_variables_work_with_tensor_operators_and_python_numbers():
    v = rt.Variable(3)
    assert int(v + 1) == 4 and int(2 * v) == 6 and int(-v) == -3
    assert bool(v > 2) and int(v) == 3 and float(v) == 3.0
    assert [0, 1, 2, 3][v] == 3
    assert np.square(rt.Variable([2.0]))[0] == 4.0


def test_python_values_are_cast_to_the_variables_dtype_but_tensors_are_not():
    v = rt.Variable(1.0)
    v.assign(2)                                   # a Python int fits a float32 variable
    assert v.numpy() == 2.0 and v.dtype == rt.float32
    with pytest.raises(TypeError, match="dtype int32 to variable 'Variable:0' of dtype float32"):
        v.assign(rt.constant(2))


def test_assigning_another_shape_is_an_error():
    v = rt.Variable([1.0, 2.0], name="w")
    with pytest.raises(ValueError, match=r"shape \(3,\) to variable 'w:0' of shape \(2,\)"):
        v.assign([1.0, 2.0, 3.0])


def test_updates_may_broadcast_the_delta_but_never_change_the_shape():
    v = rt.Variable([1.0, 2.0], name="w")
    np.testing.assert_array_equal(v.assign_add(1.0).numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(v.assign_sub(1.0).numpy(), [1.0, 2.0])
    scalar = rt.Variable(1.0, name="s")
    with pytest.raises(ValueError, match=r"add a value of shape \(2,\) to variable 's:0' of "
                                         r"shape \(\)"):
        scalar.assign_add([1.0, 2.0])
    assert scalar.shape == () and scalar.numpy() == 1.0

    @rt.function
    def grow():
        return v.assign_sub([[1.0, 1.0]])

    with pytest.raises(ValueError, match=r"subtract a value of shape \(1, 2\) from variable "
                                         r"'w:0'"):
        grow()
    assert float(rt.function(lambda: v.assign_add(1.0))()[0]) == 2.0


def test_dtype_argument_converts_the_initial_value():
    assert rt.Variable(1, dtype=rt.float64).dtype == rt.float64
    assert rt.Variable(lambda: [1, 2]).numpy().tolist() == [1, 2]   # callable initial value


def test_repr_shows_the_current_value():
    v = rt.Variable(2.0, name="w")
    assert repr(v) == "<rt.Variable 'w:0' shape=() dtype=float32, numpy=2.0>"
    assert str(v) == repr(v)


# -- in graph functions -------------------------------------------------------------------------

def test_assign_read_assign_add_read_give_program_order_results_on_every_call():
    v = rt.Variable(0.0)

    @rt.function
    def f():
        v.assign(2.0)
        a = v.read_value()
        v.assign_add(3.0)
        b = v.read_value()
        c = v * 1.0                    # an operator reads too
        v.assign_sub(1.0)
        return a, b, c, v.read_value()

    for _ in range(3):
        assert [float(t) for t in f()] == [2.0, 5.0, 5.0, 4.0]


def test_updates_accumulate_across_calls():
    v = rt.Variable(0)

    @rt.function
    def step(x):
        v.assign_add(x)
        return v.read_value()

    assert [int(step(rt.constant(2))) for _ in range(3)] == [2, 4, 6]
    assert v.numpy() == 6


def test_a_variable_argument_is_read_when_the_graph_runs():
    @rt.function
    def double(v):
        return v * 2.0

    v = rt.Variable(1.0)
    assert float(double(v)) == 2.0
    v.assign(5.0)
    assert float(double(v)) == 10.0
    assert double.experimental_get_tracing_count() == 1
    assert float(double(rt.Variable(3.0))) == 6.0     # another variable: another trace


def test_variables_created_on_the_first_call_are_lifted_and_created_once():
    class Accumulator:
        def __init__(self):
            self.total = None
            self.created = 0

        @rt.function
        def __call__(self, x):
            if self.total is None:
                self.created += 1
                self.total = rt.Variable(rt.zeros([2]) + 1.0)   # built while tracing
            self.total.assign_add(x)
            return self.total.read_value()

    acc = Accumulator()
    np.testing.assert_array_equal(acc(rt.constant([1.0, 2.0])).numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(acc(rt.constant([1.0, 2.0])).numpy(), [3.0, 5.0])
    assert acc.created == 1
    assert isinstance(acc.total.numpy(), np.ndarray)      # an eager variable


def test_a_lifted_variable_cannot_depend_on_the_functions_inputs():
    @rt.function
    def f(x):
        return rt.Variable(x * 2.0, name="bad")

    with pytest.raises(ValueError, match="variable 'bad' .* depends on the input x"):
        f(rt.constant(1.0))


# -- variables created inside graph functions (TensorFlow's tf.function rule) -------------------

def _line_of(fn, text):
    """'file.py:N' of the line of `fn`'s source holding `text`."""
    import inspect
    import os
    lines, first = inspect.getsourcelines(fn)
    n = next(i for i, line in enumerate(lines) if text in line)
    return f"{os.path.basename(inspect.getsourcefile(fn))}\", line {first + n}"


def test_a_function_creating_a_variable_on_every_call_fails_on_its_first_call():
    @rt.function
    def fn(x):
        return rt.Variable(1.0) + x

    with pytest.raises(ValueError, match="only on its first trace") as info:
        fn(1.0)
    assert _line_of(fn.python_function, "rt.Variable(1.0)") in str(info.value)
    assert "return rt.Variable(1.0) + x" in str(info.value)


def test_appending_a_new_variable_to_outer_state_on_every_call_fails_too():
    state = []

    @rt.function
    def fn(x):
        state.append(rt.Variable(1.0))
        return state[-1] + x

    with pytest.raises(ValueError, match="creates a new variable each time it runs"):
        fn(1.0)


def test_a_variable_created_on_the_first_call_only_is_kept():
    state = []

    @rt.function
    def fn(x):
        if not state:
            state.append(rt.Variable(2.0))
        return state[0] * x

    assert float(fn(rt.constant(1.0))) == 2.0
    assert float(fn(rt.constant(3.0))) == 6.0
    assert len(state) == 1 and fn.experimental_get_tracing_count() == 1


def test_a_variable_created_on_a_later_trace_is_an_error_naming_its_line():
    made = {}

    @rt.function
    def scaled(x, n):
        if n not in made:
            made[n] = rt.Variable(float(n))
        return made[n] * x

    assert float(scaled(rt.constant(2.0), 3)) == 6.0
    assert float(scaled(rt.constant(2.0), 3)) == 6.0           # the same trace
    with pytest.raises(ValueError, match="created while tracing 'scaled' again") as info:
        scaled(rt.constant(2.0), 4)                            # a new Python value: a trace
    assert _line_of(scaled.python_function, "made[n] = rt.Variable") in str(info.value)


def test_each_instance_of_a_class_creates_its_variables_on_its_first_call():
    class Model:
        def __init__(self):
            self.var = None

        @rt.function
        def apply(self, x):
            if self.var is None:
                self.var = rt.Variable(2.0)
            return self.var * x

    m0 = Model()
    assert float(m0.apply(3.0)) == 6.0
    m0.var.assign(3.0)
    assert float(m0.apply(3.0)) == 9.0
    assert float(Model().apply(3.0)) == 6.0


def test_variables_initialized_in_a_nested_call_are_created_once():
    holder = []

    @rt.function
    def add_var(x):
        if not holder:
            holder.append(rt.Variable([1.0, 2.0]))
            holder.append(rt.Variable(3.0))
        return holder[0] + holder[1] + x

    @rt.function
    def wrapper(x):
        return add_var(x)

    np.testing.assert_allclose(wrapper(rt.constant(2.0)).numpy(), [6.0, 7.0])
    holder[1].assign(11.0)
    np.testing.assert_allclose(wrapper(rt.constant(2.0)).numpy(), [14.0, 15.0])
    assert len(holder) == 2


def test_the_first_call_runs_what_the_creating_branch_does_later_calls_do_not():
    class Counter:
        def __init__(self):
            self.v = None

        @rt.function
        def __call__(self):
            if self.v is None:
                self.v = rt.Variable(10)
                self.v.assign(0)               # on the first call only, as in Python
            self.v.assign_add(1)
            return self.v.read_value()

    graph, eager = Counter(), Counter()
    assert [int(graph()) for _ in range(3)] == [1, 2, 3]
    rt.run_functions_eagerly(True)
    try:
        assert [int(eager()) for _ in range(3)] == [1, 2, 3]
    finally:
        rt.run_functions_eagerly(False)


def test_creating_variables_in_a_tf1_graph_is_unaffected():
    g = rt.Graph()
    with g.as_default():
        a, b = rt.Variable(1.0), rt.Variable(2.0)
        with rt.Session() as sess:
            sess.run(rt.global_variables_initializer())
            assert sess.run(a + b) == 3.0


# -- TF1 style ----------------------------------------------------------------------------------

def test_graph_variables_need_the_initializer_and_name_themselves_when_read_before():
    g = rt.Graph()
    with g.as_default():
        w = rt.Variable(3.0, name="weight")
        y = w * 2.0
        with rt.Session() as sess:
            with pytest.raises(rt.errors.FailedPreconditionError,
                               match="uninitialized variable 'weight:0'"):
                sess.run(y)
            sess.run(rt.global_variables_initializer())
            assert sess.run(y) == 6.0
            assert sess.run(w) == 3.0


def test_graph_variable_updates_run_each_time_they_are_fetched():
    g = rt.Graph()
    with g.as_default():
        w = rt.Variable(1.0)
        increment = w.assign_add(1.0)
        with rt.Session() as sess:
            sess.run(w.initializer)
            assert [sess.run(increment) for _ in range(3)] == [2.0, 3.0, 4.0]
            assert sess.run(w) == 4.0
    assert rt.executing_eagerly()
    assert repr(w).startswith("<rt.Variable 'Variable:0' shape=() dtype=float32")


def test_trainable_variables_of_the_default_graph():
    g = rt.Graph()
    with g.as_default():
        a = rt.Variable(1.0)
        rt.Variable(2.0, trainable=False)
        assert rt.trainable_variables() == [a]


def test_ops_taking_a_scalar_value_accept_a_variable_eagerly_and_in_graphs():
    v = rt.Variable(2.0)

    @rt.function
    def filled():
        return rt.fill([2], v)

    np.testing.assert_array_equal(rt.fill([3], v).numpy(), [2.0, 2.0, 2.0])
    v.assign(5.0)
    np.testing.assert_array_equal(filled().numpy(), [5.0, 5.0])
