"""Errors name the operation at fault and show the user's source line that created it."""
import os

import numpy as np
import pytest

import runtime as rt
from runtime import errors

THIS_FILE = os.path.basename(__file__)


def line_of(source_text):
    """The line number of the line of this file that reads `source_text` (stripped)."""
    with open(__file__) as f:
        for lineno, line in enumerate(f, 1):
            if line.strip() == source_text:
                return lineno
    raise AssertionError(f"{source_text!r} not in {__file__}")


def assert_points_at(error, source_text):
    """The message shows this file, the line of `source_text`, and the text itself."""
    message = str(error)
    assert f'{THIS_FILE}", line {line_of(source_text)}' in message, message
    assert source_text in message, message


# -- kernels failing while a graph runs -----------------------------------------------------------

def test_a_matmul_of_incompatible_fed_shapes_names_the_op_and_the_users_line():
    g = rt.Graph()
    with g.as_default():
        a = rt.placeholder(rt.float32, [None, None])
        b = rt.placeholder(rt.float32, [None, None])
        product = rt.matmul(a, b)
    with rt.Session(graph=g) as sess:
        with pytest.raises(ValueError) as info:                 # catchable as ValueError
            sess.run(product, {a: np.ones((2, 3)), b: np.ones((2, 3))})
    assert isinstance(info.value, errors.InvalidArgumentError)
    assert "operation 'matmul' (matmul)" in str(info.value)
    assert_points_at(info.value, "product = rt.matmul(a, b)")
    assert info.value.op is product.op
    assert info.value.origin.lineno == line_of("product = rt.matmul(a, b)")


def test_a_reshape_that_does_not_fit_the_run_time_shape_inside_a_function():
    @rt.function(input_signature=[rt.TensorSpec([None], rt.float32)])
    def square(x):
        return rt.reshape(x, [2, 2])

    assert square(rt.constant([1.0, 2.0, 3.0, 4.0])).shape == (2, 2)
    with pytest.raises(ValueError, match="operation 'reshape'") as info:
        square(rt.constant([1.0, 2.0, 3.0]))
    assert_points_at(info.value, "return rt.reshape(x, [2, 2])")
    assert isinstance(info.value.__cause__, ValueError)       # numpy's own error


def test_errors_inside_nested_functions_and_branches_point_at_the_inner_line():
    @rt.function(input_signature=[rt.TensorSpec([None], rt.float32)])
    def inner(x):
        return rt.reshape(x, [3])

    @rt.function(input_signature=[rt.TensorSpec([None], rt.float32)])
    def outer(x):
        return rt.cond(rt.reduce_sum(x) > 0, lambda: inner(x), lambda: x * 2.0)

    assert outer(rt.constant([-1.0, -2.0])).shape == (2,)
    with pytest.raises(ValueError) as info:
        outer(rt.constant([1.0, 2.0]))
    assert_points_at(info.value, "return rt.reshape(x, [3])")


def test_an_error_in_a_while_body_points_at_the_body():
    def body(i, acc):
        return i + 1, rt.reshape(acc, [2])

    f = rt.function(lambda n, v: rt.while_loop(lambda i, acc: i < n, body, (0, v)),
                    input_signature=[rt.TensorSpec([], rt.int32),
                                     rt.TensorSpec([None], rt.float32)])
    f(rt.constant(3), rt.constant([1.0, 2.0]))
    with pytest.raises(ValueError) as info:
        f(rt.constant(3), rt.constant([1.0, 2.0, 3.0]))
    assert_points_at(info.value, "return i + 1, rt.reshape(acc, [2])")


def test_python_errors_from_py_function_keep_their_class():
    class Custom(Exception):
        pass

    def lookup(t):
        raise KeyError("missing key")

    def custom(t):
        raise Custom("custom failure")

    for func, cls, text in [(lookup, KeyError, "'missing key'"),
                            (custom, Custom, "custom failure")]:
        f = rt.function(lambda x: rt.py_function(func, [x], rt.int32))
        with pytest.raises(cls) as info:
            f(rt.constant(1))
        assert isinstance(info.value, errors.OpError)
        message = str(info.value)
        assert message.startswith("operation 'py_function' (py_function) created at ")
        assert f"failed: {text}\n" in message             # readable, not a quoted repr
        assert type(info.value.__cause__) is cls


def test_a_failing_assertion_is_an_assertion_error_naming_its_line():
    @rt.function
    def positive(x):
        rt.debugging.assert_positive(x)
        return x

    with pytest.raises(AssertionError) as info:
        positive(rt.constant(-1.0))
    assert_points_at(info.value, "rt.debugging.assert_positive(x)")


# -- errors while tracing and eagerly ------------------------------------------------------------

def test_a_shape_error_surfaces_while_tracing_at_the_users_line():
    @rt.function
    def f(x):
        return rt.matmul(x, x)

    with pytest.raises(ValueError) as info:
        f.get_concrete_function(rt.TensorSpec([2, 3], rt.float32))
    assert str(info.value).startswith("matmul: ")
    assert not str(info.value).startswith("matmul: matmul:")
    assert_points_at(info.value, "return rt.matmul(x, x)")


def test_eager_kernel_errors_name_the_op():
    with pytest.raises(ValueError, match="^matmul: ") as info:
        rt.matmul(rt.constant([[1.0, 2.0]]), rt.constant([[1.0, 2.0]]))
    assert isinstance(info.value, errors.InvalidArgumentError)


def test_reading_an_uninitialized_variable_is_a_failed_precondition_naming_it():
    g = rt.Graph()
    with g.as_default():
        w = rt.Variable(1.0, name="w")
        y = w + 1.0
    with rt.Session(graph=g) as sess:
        with pytest.raises(errors.FailedPreconditionError, match="variable 'w:0'") as info:
            sess.run(y)
    assert_points_at(info.value, "y = w + 1.0")


def test_wrapped_classes_are_made_once_per_original_class():
    first = errors.wrap_kernel_error(KeyError("a"), "a")
    second = errors.wrap_kernel_error(KeyError("b"), "b")
    assert type(first) is type(second)
    assert isinstance(first, KeyError) and isinstance(first, errors.OpError)
    assert type(errors.wrap_kernel_error(ValueError("v"), "v")) is errors.InvalidArgumentError
    assert type(errors.wrap_kernel_error(AssertionError(), "a")) is errors.AssertionFailedError
