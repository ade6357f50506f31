"""Misuse of converted code gets an error naming the variable or construct and the
user's original file:line (never only generated code)."""
import inspect
import os
import warnings

import pytest

import autograph as ag
import runtime as rt

HERE = os.path.basename(__file__)


def line_of(fn, text):
    """The file line of the first line of `fn` containing `text`."""
    fn = getattr(fn, "python_function", fn)
    lines, first = inspect.getsourcelines(fn)
    for offset, line in enumerate(lines):
        if text in line:
            return first + offset
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def assert_points_at(error, fn, text):
    message = str(error)
    assert f'{HERE}", line {line_of(fn, text)}' in message or \
        f"{HERE}:{line_of(fn, text)}" in message, message


def defined_in_one_branch(x):
    if x > 0:
        y = x * 2
    return y


def test_variable_defined_in_one_branch_of_a_tensor_if():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(defined_in_one_branch)(rt.constant(1.0))
    assert "'y'" in str(info.value) and "true branch" in str(info.value)
    assert_points_at(info.value, defined_in_one_branch, "if x > 0")


def test_the_same_function_with_a_python_condition_is_plain_python():
    assert ag.convert(defined_in_one_branch)(1.0).numpy() == 2.0
    with pytest.raises(UnboundLocalError):
        ag.convert(defined_in_one_branch)(-1.0)


def dtype_changes(x):
    i = rt.constant(0)
    while i < x:
        i = i + 0.5
    return i


def test_loop_variable_changing_dtype():
    # (A Python number would adapt: `i = 0` then `i + 0.5` is a float, as in Python.)
    with pytest.raises(ag.StagingError) as info:
        ag.convert(dtype_changes)(rt.constant(3.0))
    message = str(info.value)
    assert "'i'" in message and "int32" in message and "float32" in message
    assert_points_at(info.value, dtype_changes, "while i < x")


def shape_changes(x):
    v = rt.zeros([1])
    while rt.reduce_sum(v) < x:
        v = rt.concat([v, [1.0]], 0)
    return v


def shape_changes_with_invariant(x):
    v = rt.zeros([1])
    while rt.reduce_sum(v) < x:
        ag.set_loop_options(shape_invariants=[(v, [None])])
        v = rt.concat([v, [1.0]], 0)
    return v


def test_loop_variable_changing_shape_needs_an_invariant():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(shape_changes)(rt.constant(3.0))
    message = str(info.value)
    assert "'v'" in message and "shape_invariants" in message
    assert_points_at(info.value, shape_changes, "while rt.reduce_sum")
    result = ag.convert(shape_changes_with_invariant)(rt.constant(3.0))
    assert result.numpy().tolist() == [0.0, 1.0, 1.0, 1.0]


def generator(x):
    yield x


def test_generators_are_rejected():
    with pytest.raises(ag.ConversionError) as info:
        ag.to_graph(generator)
    assert "yield" in str(info.value)
    assert f"{HERE}:{line_of(generator, 'yield x')}" in str(info.value)


def try_in_tensor_if(x):
    if x > 0:
        try:
            x = x + 1
        except ValueError:
            x = 0
    return x


def test_try_inside_tensor_control_flow():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(try_in_tensor_if)(rt.constant(1.0))
    assert "`try`" in str(info.value)
    assert_points_at(info.value, try_in_tensor_if, "try:")
    assert ag.convert(try_in_tensor_if)(1.0).numpy() == 2.0      # Python condition: fine


def used_after_empty_loop(n):
    for i in range(n):
        y = i * 2
    return y


def test_variable_assigned_only_in_a_tensor_loop_that_ran_zero_times():
    f = ag.convert(used_after_empty_loop)
    assert f(rt.constant(3)).numpy() == 4
    with pytest.raises(UnboundLocalError) as info:
        f(rt.constant(0))
    assert "'y'" in str(info.value)
    assert_points_at(info.value, used_after_empty_loop, "return y")     # as in Python


def bad_reshape(x):
    return rt.reshape(x, [3, 5])


def test_shape_errors_while_tracing_point_at_the_users_line():
    with pytest.raises(ValueError) as info:
        ag.convert(bad_reshape)(rt.constant([1.0, 2.0]))
    assert "reshape" in str(info.value)
    assert_points_at(info.value, bad_reshape, "rt.reshape")


def fails_at_run_time(x, n):
    return rt.reshape(x, rt.stack([n, 2]))


def test_kernel_errors_at_run_time_name_the_op_and_the_users_line():
    f = ag.convert(fails_at_run_time)
    with pytest.raises(ValueError) as info:
        f(rt.constant([1.0, 2.0, 3.0]), rt.constant(2))
    message = str(info.value)
    assert "reshape" in message
    assert_points_at(info.value, fails_at_run_time, "rt.reshape")


def test_unreadable_source_runs_unconverted_with_one_warning():
    namespace = {}
    exec("def made_by_exec(x):\n    return x * 2\n", namespace)  # noqa: S102
    f = ag.convert(namespace["made_by_exec"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert f(rt.constant(2.0)).numpy() == 4.0
        assert f(rt.constant([2.0])).numpy().tolist() == [4.0]
    relevant = [w for w in caught if "could not convert" in str(w.message)]
    assert len(relevant) == 1, [str(w.message) for w in caught]
    assert "made_by_exec" in str(relevant[0].message)


def branches_return_different_structures(x):
    if x > 0:
        y = (x, x)
    else:
        y = x
    return y


def test_branch_outputs_of_different_structure():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(branches_return_different_structures)(rt.constant(1.0))
    assert "structure" in str(info.value) and "y" in str(info.value)
    assert_points_at(info.value, branches_return_different_structures, "if x > 0")


def test_frames_of_generated_code_map_back_to_the_original_lines():
    import traceback

    def divide(x):
        if x > 0:
            x = x / undefined_name  # noqa: F821
        return x

    with pytest.raises(NameError) as info:
        ag.convert(divide)(rt.constant(1.0))
    frames = traceback.extract_tb(info.tb)
    generated = [f for f in frames if f.filename.startswith("<autograph generated")]
    assert generated and generated[-1].line.strip() == "x = x / undefined_name"
    if hasattr(info.value, "__notes__"):          # Python >= 3.11
        note = "\n".join(info.value.__notes__)
        assert f'{HERE}", line {line_of(divide, "undefined_name")}' in note
