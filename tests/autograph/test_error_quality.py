"""Audit of the errors users cause: each realistic mistake must raise the documented
exception type, name the user's variable or construct, show the user's `file:line` (this
file, not generated code), mention no compiler-internal name, and leave nothing half-done
(a second call with good inputs works, no variable is left changed, no broken trace cached).

Tests marked `xfail(strict=True)` pin problems found by the audit; each reason names the
module at fault. (tests/autograph/test_errors.py and tests/runtime/test_runtime_errors.py
cover the basic cases; these are the ones they do not.)
"""
import os
import warnings

import pytest

import autograph as ag
import runtime as rt
from runtime import errors as rt_errors
from test_errors import line_of     # tests/autograph is on sys.path (conftest.py)

HERE = os.path.basename(__file__)

# Names of generated code and of the compiler's machinery: never in a user's error.
INTERNAL_NAMES = ("ag__", "retval_", "do_return", "loop_body", "while_body", "while_cond",
                  "if_body", "else_body", "get_state", "set_state", "extra_test",
                  "autograph generated", "UndefinedReturnValue", "_FirstAssignedInLoop")


def shown(error):
    """What the user sees of `error`: its message and its notes."""
    return "\n".join([str(error)] + list(getattr(error, "__notes__", ())))


def points_at(error, fn, text):
    """Whether the error shows this file at the line of `fn` containing `text`."""
    line = line_of(fn, text)
    seen = shown(error)
    return f'{HERE}", line {line}' in seen or f"{HERE}:{line}" in seen


def check(error, fn, text, *names):
    """The message names `names`, shows the user's line `text` of `fn`, and nothing internal."""
    message = str(error)
    for name in names:
        assert name in message, message
    assert points_at(error, fn, text), shown(error)
    for internal in INTERNAL_NAMES:
        assert internal not in shown(error), shown(error)


def scalar(value, dtype=None):
    return rt.constant(value, dtype=dtype)


VECTOR = [rt.TensorSpec([None], rt.float32)]


# == staging errors (while tracing) =============================================================

def assigned_in_if_inside_loop(x, n):
    for i in range(n):
        if x > 0:
            y = x * 2.0
    return y


def test_a_variable_set_in_one_branch_inside_a_loop_fails_where_python_does():
    # The loop carries `y` as an optional value: read after a loop that never assigned
    # it, it fails when the graph runs, at the read, as Python's UnboundLocalError does.
    f = ag.convert(assigned_in_if_inside_loop)
    assert f(scalar(1.0), scalar(3)).numpy() == 2.0
    for _ in range(2):                               # the second call: the same error
        with pytest.raises(UnboundLocalError) as info:
            f(scalar(-1.0), scalar(3))
        check(info.value, assigned_in_if_inside_loop, "return y", "'y'")
    assert f(1.0, 3).numpy() == 2.0                  # Python arguments: plain Python
    assert rt.executing_eagerly()


def last_row(xs):
    for x in xs:
        last = x
    return last


def test_a_variable_first_assigned_in_a_loop_over_a_tensor():
    f = ag.convert(last_row, input_signature=VECTOR)
    assert f(rt.constant([1.0, 2.0])).numpy() == 2.0
    with pytest.raises(UnboundLocalError) as info:
        f(rt.constant([], dtype=rt.float32))
    check(info.value, last_row, "return last", "'last'", "zero times")
    assert f(rt.constant([3.0])).numpy() == 3.0      # the same trace, good input again


def float32_to_float64(n):
    total = rt.constant(1.0)
    for i in range(n):
        total = rt.cast(total, rt.float64) * 2.0
    return total


def test_a_loop_variable_going_from_float32_to_float64():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(float32_to_float64)(scalar(3))
    check(info.value, float32_to_float64, "for i in range(n)", "'total'", "float32",
          "float64")
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


def item_becomes_float(n):
    d = {"count": rt.constant(0)}
    i = 0
    while i < n:
        d["count"] = d["count"] / 2
        i += 1
    return d


class Holder:
    pass


def attribute_becomes_float(n):
    h = Holder()
    h.count = rt.constant(0)
    i = 0
    while i < n:
        h.count = h.count / 2
        i += 1
    return h.count


def test_dict_items_and_attributes_changing_dtype_in_a_loop_are_named():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(item_becomes_float)(scalar(3))
    check(info.value, item_becomes_float, "while i < n", "count", "int32")
    with pytest.raises(ag.StagingError) as info:
        ag.convert(attribute_becomes_float)(scalar(3))
    check(info.value, attribute_becomes_float, "while i < n", "h.count", "int32")


def doubling(n):
    acc = rt.zeros([2])
    for i in range(n):
        acc = rt.concat([acc, acc], 0)
    return acc


def test_a_for_loop_variable_changing_shape_without_invariants():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(doubling)(scalar(3))
    check(info.value, doubling, "for i in range(n)", "'acc'", "shape_invariants", "(2,)")


def list_per_branch(x):
    if x > 0:
        items = [x]
    else:
        items = [x, x]
    return items


def dict_per_branch(x):
    if x > 0:
        d = {"pos": x}
    else:
        d = {"neg": x}
    return d


class Box:
    def __init__(self, value):
        self.value = value


def object_per_branch(x):
    if x > 0:
        box = Box(x)
    else:
        box = Box(-x)
    return box.value


def none_in_else(x):
    if x > 0:
        y = x
    else:
        y = None
    return y


@pytest.mark.parametrize("fn,name,what", [
    (list_per_branch, "items", "structure"),
    (dict_per_branch, "d", "structure"),
    (object_per_branch, "'box'", "tensor"),
    (none_in_else, "'y'", "None"),
], ids=["list", "dict", "object", "None"])
def test_python_values_that_differ_between_the_branches_of_a_tensor_if(fn, name, what):
    f = ag.convert(fn)
    with pytest.raises(ag.StagingError) as info:
        f(scalar(1.0))
    check(info.value, fn, "if x > 0", name, what)
    f(1.0)                                           # Python condition: fine


def none_then_loop(n):
    best = None
    i = 0
    while i < n:
        best = rt.cast(i, rt.float32)
        i += 1
    return best


def string_in_loop(n):
    label = "start"
    i = 0
    while i < n:
        label = label + "."
        i += 1
    return label


def tuple_shrinks(n):
    state = (rt.constant(0.0), rt.constant(1.0))
    i = 0
    while i < n:
        state = (state[0] + 1.0,)
        i += 1
    return state


@pytest.mark.parametrize("fn,names", [
    (string_in_loop, ("'label'", "str")),
    (tuple_shrinks, ("state", "structure")),
], ids=["str", "tuple"])
def test_python_values_changed_by_a_tensor_loop(fn, names):
    with pytest.raises(ag.StagingError) as info:
        ag.convert(fn)(scalar(3))
    check(info.value, fn, "while i < n", *names)


def test_none_before_a_tensor_loop_that_assigns_it_fails_only_where_it_is_read_as_none():
    # `best` is typed from its first assignment; after a loop that ran zero times it is
    # still None, which a graph value cannot be: reading it fails when the graph runs.
    f = ag.convert(none_then_loop)
    assert f(scalar(3)).numpy() == 2.0
    with pytest.raises(UnboundLocalError) as info:
        f(scalar(0))
    check(info.value, none_then_loop, "return best", "'best'", "None")


def mixed_list(n):
    sizes = []
    i = 0
    while i < n:
        sizes.append(i)
        sizes.append(0.5)
        i += 1
    return rt.stack(sizes)


def test_a_tensor_list_given_an_element_of_another_dtype():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(mixed_list)(scalar(3))
    check(info.value, mixed_list, "sizes.append(0.5)", "'sizes'", "int32")


def grows_rows_of_two_widths(n):
    rows = [rt.zeros([2])]
    i = 0
    while i < n:
        rows.append(rt.zeros([3]))
        i += 1
    return rt.stack(rows)


# a StagingError naming the list and both element shapes, not the internal concat's error
def test_a_tensor_list_given_an_element_of_another_shape():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(grows_rows_of_two_widths)(scalar(3))
    check(info.value, grows_rows_of_two_widths, "rows.append", "'rows'", "(2,)", "(3,)")
    assert "concat" not in str(info.value)


def list_extended_by_itself(n):
    items = [rt.constant(1.0)]
    i = 0
    while i < n:
        items += items
        i += 1
    return rt.stack(items)


# README documents `l += xs` as supported; a refusal must name the list and not advise
# autograph.convert inside a converted function
def test_a_list_extended_by_itself_in_a_tensor_loop():
    f = ag.convert(list_extended_by_itself)
    try:
        result = f(scalar(2))
    except ag.StagingError as e:                     # refused clearly: acceptable too
        check(e, list_extended_by_itself, "items += items", "'items'")
        assert "autograph.convert" not in str(e)
    else:
        assert result.numpy().tolist() == [1.0, 1.0, 1.0, 1.0]


@ag.do_not_convert
def pick(ready, value):
    if ready:
        return value
    return -value


def calls_unconverted_helper(x):
    ready = x > 0
    return pick(ready, x) * 2.0


def test_a_tensor_used_as_a_python_bool_in_unconverted_code_is_a_type_error():
    with pytest.raises(TypeError) as info:
        ag.convert(calls_unconverted_helper)(scalar(1.0))
    message = str(info.value)
    assert "bool" in message and "autograph.convert" in message and "rt.cond" in message
    assert not isinstance(info.value, ag.StagingError)


# the line that used it (`if ready:` in the unconverted helper), not where it was created
def test_a_tensor_used_as_a_python_bool_names_the_line_that_used_it():
    with pytest.raises(TypeError) as info:
        ag.convert(calls_unconverted_helper)(scalar(1.0))
    assert points_at(info.value, pick, "if ready:"), shown(info.value)


def try_in_tensor_loop(n):
    total = 0
    for i in range(n):
        try:
            total += i
        except ValueError:
            total = -1
    return total


def test_try_inside_a_tensor_loop():
    f = ag.convert(try_in_tensor_loop)
    with pytest.raises(ag.StagingError) as info:
        f(scalar(3))
    check(info.value, try_in_tensor_loop, "try:", "`try`")
    assert f(3).numpy() == 3                         # a Python bound: plain Python


def yields_steps(x):
    for i in range(3):
        yield x * i


async def coroutine(x):
    return x


def test_generators_and_async_functions_given_to_convert():
    f = ag.convert(yields_steps)
    for _ in range(2):                               # not cached as "unconvertible: run it"
        with pytest.raises(ag.ConversionError) as info:
            f(scalar(1.0))
        check(info.value, yields_steps, "yield x * i", "yields_steps", "yield")
    with pytest.raises(ag.ConversionError) as info:
        ag.convert(coroutine)(scalar(1.0))
    check(info.value, coroutine, "async def", "coroutine", "async")


def sum_rows(xs):
    total = 0.0
    for row in xs:
        total = total + row
    return total


def test_iterating_a_tensor_of_unknown_length_in_python_code():
    assert ag.convert(sum_rows, input_signature=VECTOR)(rt.constant([1.0, 2.0])).numpy() == 3.0
    with pytest.raises(TypeError) as info:
        rt.function(sum_rows, input_signature=VECTOR)(rt.constant([1.0, 2.0]))
    assert "autograph.convert" in str(info.value) and "(None,)" in str(info.value)


def test_iterating_a_tensor_of_unknown_length_names_the_loop():
    with pytest.raises(TypeError) as info:
        rt.function(sum_rows, input_signature=VECTOR)(rt.constant([1.0, 2.0]))
    assert points_at(info.value, sum_rows, "for row in xs"), shown(info.value)


def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)


def test_recursion_decided_by_a_tensor():
    f = ag.convert(factorial)
    for _ in range(2):
        with pytest.raises(ag.StagingError) as info:
            f(scalar(5))
        check(info.value, factorial, "return n * factorial", "recurs")
    assert f(5).numpy() == 120


def first_positive_as_int(xs):
    for x in xs:
        if x > 0:
            return rt.cast(x, rt.int32)
    return xs[0]


# the error points at a return statement, not at the `def` line
def test_returns_of_different_dtypes_in_and_after_a_loop():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(first_positive_as_int)(rt.constant([1.0, -2.0]))
    assert "int32" in str(info.value) and "float32" in str(info.value)
    assert (points_at(info.value, first_positive_as_int, "return rt.cast")
            or points_at(info.value, first_positive_as_int, "return xs[0]")), str(info.value)


def returns_only_in_loop(n):
    i = 0
    while i < n:
        if i > 2:
            return i
        i += 1


# the error points at the loop or the return, not at the `def` line
def test_a_function_returning_only_inside_a_tensor_loop():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(returns_only_in_loop)(scalar(5))
    assert "None" in str(info.value)
    assert (points_at(info.value, returns_only_in_loop, "while i < n")
            or points_at(info.value, returns_only_in_loop, "return i")), str(info.value)


# == errors when the graph runs =================================================================

def add_then_scale(a, b):
    total = a + b
    return total * 2.0


def test_a_broadcast_failure_known_only_at_run_time():
    f = ag.convert(add_then_scale, input_signature=VECTOR * 2)
    with pytest.raises(rt_errors.InvalidArgumentError) as info:
        f(rt.constant([1.0, 2.0]), rt.constant([1.0, 2.0, 3.0]))
    assert isinstance(info.value, ValueError)
    check(info.value, add_then_scale, "total = a + b", "'add'", "(2,)", "(3,)")
    assert f(rt.constant([1.0, 2.0]), rt.constant([1.0, 1.0])).numpy().tolist() == [4.0, 6.0]


def branchy_broadcast(a, b):
    if rt.reduce_sum(a) > 0:
        r = a + b
    else:
        r = a - b
    return r


def test_a_run_time_failure_in_the_branch_taken_names_that_branch():
    f = ag.convert(branchy_broadcast, input_signature=VECTOR * 2)
    with pytest.raises(ValueError) as info:
        f(rt.constant([-1.0, -2.0]), rt.constant([1.0, 2.0, 3.0]))
    check(info.value, branchy_broadcast, "r = a - b", "'subtract'")
    assert f(rt.constant([1.0, 2.0]), rt.constant([1.0, 1.0])).numpy().tolist() == [2.0, 3.0]


def windows(params, idx, n):
    total = rt.constant(0.0)
    i = 0
    while i < n:
        total += rt.reduce_sum(rt.gather(params, idx + i))
        i += 1
    return total


def test_a_gather_out_of_range_inside_a_loop():
    f = ag.convert(windows)
    params = rt.constant([1.0, 2.0, 3.0])
    with pytest.raises(IndexError) as info:
        f(params, rt.constant([0, 1]), scalar(3))
    assert isinstance(info.value, rt_errors.OpError)
    check(info.value, windows, "rt.gather(params", "'gather'", "index 3")
    assert f(params, rt.constant([0, 1]), scalar(2)).numpy() == 8.0


# OutOfRangeError (documented 'an index went past its end') or TensorFlow's
# InvalidArgumentError
def test_a_gather_out_of_range_is_a_documented_error_class():
    with pytest.raises(rt_errors.OpError) as info:
        ag.convert(windows)(rt.constant([1.0]), rt.constant([0, 1]), scalar(1))
    assert isinstance(info.value, (rt_errors.OutOfRangeError,
                                   rt_errors.InvalidArgumentError)), type(info.value)


def bounded_steps(n):
    total = rt.constant(0)
    for i in rt.range(n):
        rt.Assert(i < 3, ["step too large:", i])
        total += i
    return total


def checked_steps(n):
    total = rt.constant(0)
    for i in range(n):
        assert i < 3, f"step {i} is too large"
        total += i
    return total


def test_assertions_failing_inside_a_loop():
    f = ag.convert(bounded_steps)
    with pytest.raises(AssertionError) as info:
        f(scalar(5))
    assert isinstance(info.value, rt_errors.AssertionFailedError)
    check(info.value, bounded_steps, "rt.Assert(i < 3", "step too large: 3")
    assert f(scalar(3)).numpy() == 3
    g = ag.convert(checked_steps)
    with pytest.raises(AssertionError) as info:
        g(scalar(5))
    check(info.value, checked_steps, "assert i < 3", "step 3 is too large")
    assert g(scalar(2)).numpy() == 1


def checked_ratio(a, b):
    q = a / b
    rt.Assert(rt.reduce_all(rt.is_finite(q)), ["q is not finite:", q])
    return q


def test_a_nan_caught_by_an_assertion():
    f = ag.convert(checked_ratio)
    with pytest.raises(AssertionError) as info:
        f(rt.constant([0.0, 1.0]), rt.constant([0.0, 2.0]))
    check(info.value, checked_ratio, "rt.Assert(rt.reduce_all", "q is not finite", "nan")
    assert f(rt.constant([1.0]), rt.constant([2.0])).numpy().tolist() == [0.5]


@pytest.mark.skipif(not hasattr(rt.debugging, "assert_all_finite"),
                    reason="rt.debugging.assert_all_finite does not exist")
def test_assert_all_finite_names_the_users_line():
    def ratio(a, b):
        q = a / b
        rt.debugging.assert_all_finite(q, "q is not finite")
        return q

    f = ag.convert(ratio)
    with pytest.raises(AssertionError) as info:
        f(rt.constant([0.0]), rt.constant([0.0]))
    check(info.value, ratio, "assert_all_finite", "q is not finite")
    assert f(rt.constant([1.0]), rt.constant([2.0])).numpy().tolist() == [0.5]


def strict_double(t):
    if t.numpy() < 0:
        raise ValueError("negative input to strict_double")
    return t * 2.0


def through_python(x):
    y = rt.py_function(strict_double, [x], rt.float32)
    return y + 1.0


def test_a_failing_py_function_then_a_good_call():
    f = ag.convert(through_python)
    with pytest.raises(ValueError) as info:
        f(scalar(-1.0))
    check(info.value, through_python, "rt.py_function(strict_double", "py_function",
          "negative input to strict_double")
    assert f(scalar(2.0)).numpy() == 5.0


def rows_from(params, idx, n):
    rows = []
    i = 0
    while i < n:
        rows.append(rt.gather(params, idx + i))
        i += 1
    return rt.stack(rows)


def test_a_failed_run_of_a_loop_growing_a_list_leaves_no_stale_buffers():
    f = ag.convert(rows_from)
    params = rt.constant([1.0, 2.0, 3.0, 4.0])
    expected = [[1.0, 2.0], [2.0, 3.0], [3.0, 4.0]]
    assert f(params, rt.constant([0, 1]), scalar(3)).numpy().tolist() == expected
    with pytest.raises(IndexError) as info:
        f(params, rt.constant([0, 1]), scalar(4))
    check(info.value, rows_from, "rows.append(rt.gather", "'gather'")
    assert f(params, rt.constant([0, 1]), scalar(3)).numpy().tolist() == expected
    assert f.experimental_get_tracing_count() == 1


def rows_of_growing_width(n):
    rows = []
    i = 0
    while i < n:
        rows.append(rt.zeros([i + 1]))
        i += 1
    return rt.stack(rows)


def rows_of_growing_width_in_a_for(n):
    rows = []
    for i in range(n):
        if i > 0:
            rows.append(rt.ones([i]) * 2.0)
    return rt.stack(rows)


@pytest.mark.parametrize("program, line", [
    (rows_of_growing_width, "rows.append(rt.zeros"),
    (rows_of_growing_width_in_a_for, "rows.append(rt.ones([i]) * 2.0)")])
@pytest.mark.parametrize("settings", [
    {"executor": "fast", "optimizations": True},
    {"executor": "plain", "optimizations": True},
    {"executor": "compiled", "optimizations": True, "compile_policy": "always"}],
    ids=["fast", "plain", "compiled"])
def test_a_run_time_failure_in_a_memory_planned_loop_names_the_inner_op(
        program, line, settings, on_cpu):
    with rt.config.options(**settings):
        with pytest.raises(ValueError) as info:
            ag.convert(program)(scalar(3))
    check(info.value, program, line)
    assert "operation 'while'" not in str(info.value), str(info.value)


def loop_with_tensor_step(n, step):
    total = 0
    for i in range(0, n, step):
        total += i
    return total


# an error, as Python's 'range() arg 3 must not be zero' and TensorFlow's 'Requires
# delta != 0', never zero iterations
def test_range_with_a_zero_tensor_step_in_a_converted_loop():
    with pytest.raises(ValueError) as info:
        ag.convert(loop_with_tensor_step)(scalar(3), scalar(0))
    check(info.value, loop_with_tensor_step, "for i in range(0, n, step)", "zero")


def graph_range(step):
    return rt.range(0, 3, step)


# the message eager calls give, with no numpy warning
def test_rt_range_with_a_zero_delta_at_run_time():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError) as info:
            rt.function(graph_range)(scalar(0))
    check(info.value, graph_range, "rt.range(0, 3, step)", "delta", "zero")
    assert not caught, [str(w.message) for w in caught]


# == state after an error ========================================================================

def test_a_graph_run_failing_after_a_variable_update_then_a_good_call():
    v = rt.Variable(rt.zeros([2]), name="balance")

    def deposit(amount):
        v.assign_add(amount)
        rt.debugging.assert_non_negative(amount)
        return v.read_value()

    f = ag.convert(deposit)
    with pytest.raises(AssertionError) as info:
        f(rt.constant([1.0, -1.0]))
    check(info.value, deposit, "assert_non_negative(amount)")
    assert v.numpy().tolist() == [0.0, 0.0]          # the failed call's update undone
    assert f(rt.constant([1.0, 2.0])).numpy().tolist() == [1.0, 2.0]


def test_a_failed_graph_run_rolls_back_its_variable_updates():
    v = rt.Variable(rt.zeros([2]), name="balance")

    def deposit(amount):
        v.assign_add(amount)
        rt.debugging.assert_non_negative(amount)
        return v.read_value()

    with pytest.raises(AssertionError):
        ag.convert(deposit)(rt.constant([1.0, -1.0]))
    assert v.numpy().tolist() == [0.0, 0.0]


def test_assigning_a_wrong_shape_leaves_the_variable_unchanged():
    w = rt.Variable(rt.zeros([2]), name="weights")

    def store(x):
        w.assign(x)
        return w.read_value()

    with pytest.raises(ValueError) as info:           # known while tracing
        ag.convert(store)(rt.constant([1.0, 2.0, 3.0]))
    check(info.value, store, "w.assign(x)", "weights", "(3,)", "(2,)")
    assert w.numpy().tolist() == [0.0, 0.0]
    f = ag.convert(store, input_signature=VECTOR)     # known only at run time
    with pytest.raises(rt_errors.InvalidArgumentError) as info:
        f(rt.constant([1.0, 2.0, 3.0]))
    check(info.value, store, "w.assign(x)", "weights", "'assign'")
    assert w.numpy().tolist() == [0.0, 0.0]
    assert f(rt.constant([1.0, 2.0])).numpy().tolist() == [1.0, 2.0]


def test_assigning_a_wrong_dtype_in_a_converted_function():
    w = rt.Variable(rt.zeros([2]), name="weights")

    def store(x):
        w.assign(x)
        return w.read_value()

    with pytest.raises(TypeError) as info:
        ag.convert(store)(rt.constant([1, 2]))
    check(info.value, store, "w.assign(x)", "weights", "int32", "float32")
    assert w.numpy().tolist() == [0.0, 0.0]


# in rt.function code too, as the wrong-shape error does
def test_assigning_a_wrong_dtype_names_the_line():
    w = rt.Variable(rt.zeros([2]), name="weights")

    def store(x):
        w.assign(x)
        return w.read_value()

    with pytest.raises(TypeError) as info:
        rt.function(store)(rt.constant([1, 2]))
    check(info.value, store, "w.assign(x)", "weights")


def test_a_failed_first_trace_creates_variables_once_and_caches_nothing():
    layer = rt.layers.Dense(2)
    fail = {"now": True}

    def step(x):
        y = layer(x)
        if fail["now"]:
            raise RuntimeError("a bug after the layer was built")
        return y

    f = ag.convert(step)
    with pytest.raises(RuntimeError) as info:
        f(rt.ones([1, 3]))
    assert points_at(info.value, step, "raise RuntimeError")
    assert f.experimental_get_tracing_count() == 0
    fail["now"] = False
    assert f(rt.ones([1, 3])).shape == (1, 2)
    assert len(layer.trainable_variables) == 2
    assert rt.executing_eagerly()


def test_a_failed_trace_inside_a_tape_leaves_the_tape_working():
    w = rt.Variable(2.0)

    def loss(x):
        if x > 0:
            value = w * x
        return value

    with rt.GradientTape() as tape:
        with pytest.raises(ag.StagingError):
            ag.convert(loss)(scalar(1.0))
        y = w * 5.0
    assert tape.gradient(y, w).numpy() == 5.0
    assert rt.executing_eagerly()


# == API misuse ==================================================================================

# refused at once, not at the first call
def test_convert_of_a_non_callable():
    with pytest.raises(TypeError, match="convert"):
        ag.convert(5)


def test_rt_function_of_a_non_callable():
    with pytest.raises(TypeError, match="function"):
        rt.function("step")


def add(x, y):
    return x + y


def test_an_input_signature_that_is_not_a_list():
    with pytest.raises(TypeError, match="input_signature"):
        ag.convert(add, input_signature=rt.TensorSpec([], rt.float32))


def test_an_input_signature_of_dtypes():
    with pytest.raises(TypeError, match="TensorSpec"):
        ag.convert(add, input_signature=[rt.float32, rt.float32])(scalar(1.0), scalar(2.0))


def test_arguments_that_do_not_match_the_input_signature():
    f = ag.convert(add, input_signature=[rt.TensorSpec([], rt.float32)] * 2)
    with pytest.raises(TypeError, match="input_signature"):
        f(scalar(1.0))
    with pytest.raises(ValueError) as info:
        f(scalar(1), scalar(2))
    assert "argument 0" in str(info.value) and "int32" in str(info.value)
    assert f(scalar(1.0), scalar(2.0)).numpy() == 3.0


def test_a_concrete_function_called_with_the_wrong_tensors():
    cf = ag.convert(add).get_concrete_function(rt.TensorSpec([], rt.float32),
                                               rt.TensorSpec([], rt.float32))
    with pytest.raises(TypeError, match="expected 2 tensor arguments, got 1"):
        cf(scalar(1.0))
    with pytest.raises(TypeError, match="expected 2 tensor arguments, got 3"):
        cf(scalar(1.0), scalar(1.0), scalar(1.0))
    with pytest.raises(ValueError) as info:
        cf(scalar(1), scalar(2))
    assert "int32" in str(info.value) and "float32" in str(info.value)
    with pytest.raises(ValueError):
        cf(rt.constant([1.0]), scalar(2.0))
    assert cf(scalar(1.0), scalar(2.0)).numpy() == 3.0


def minus(y, x):
    return y - x


# keywords bind by parameter name (not in sorted-key order); unknown names are refused
def test_a_concrete_function_called_with_keywords():
    cf = rt.function(minus).get_concrete_function(rt.TensorSpec([], rt.float32),
                                                  rt.TensorSpec([], rt.float32))
    assert cf(y=scalar(5.0), x=scalar(1.0)).numpy() == 4.0
    with pytest.raises(TypeError, match="'a'"):
        cf(a=scalar(5.0), b=scalar(1.0))


def cond_with_tensors(x):
    return rt.cond(x > 0, x, -x)


# named as while_loop names cond and body: 'true_fn ... callable'
def test_rt_cond_given_tensors_instead_of_functions():
    with pytest.raises(TypeError) as info:
        rt.function(cond_with_tensors)(scalar(1.0))
    assert "true_fn" in str(info.value) and "callable" in str(info.value), str(info.value)


def cond_of_two_structures(x):
    return rt.cond(x > 0, lambda: (x, x), lambda: x)


def cond_of_two_dtypes(x):
    return rt.cond(x > 0, lambda: x, lambda: rt.cast(x, rt.float32))


def loop_of_two_structures(n):
    return rt.while_loop(lambda i, s: i < n, lambda i, s: i + 1, [0, 0.0])


def loop_changing_dtype(n):
    return rt.while_loop(lambda i: i < n, lambda i: i + 0.5, [rt.constant(0)])


RUNTIME_MISUSE = [
    (cond_of_two_structures, ValueError, "rt.cond(x > 0", "structure"),
    (cond_of_two_dtypes, TypeError, "rt.cond(x > 0", "float32"),
    (loop_of_two_structures, ValueError, "rt.while_loop", "structure"),
    (loop_changing_dtype, TypeError, "rt.while_loop", "float32"),
]
RUNTIME_MISUSE_IDS = ["cond-structure", "cond-dtype", "while-structure", "while-dtype"]


@pytest.mark.parametrize("fn,cls,line,word", RUNTIME_MISUSE, ids=RUNTIME_MISUSE_IDS)
def test_rt_cond_and_while_loop_misuse_in_graphs(fn, cls, line, word):
    with pytest.raises(cls) as info:
        rt.function(fn)(scalar(3))
    assert word in str(info.value)


# Structure and dtype errors while tracing plain rt.function code carry the user's
# file:line, as converted code's do.
@pytest.mark.parametrize("fn,cls,line,word", RUNTIME_MISUSE, ids=RUNTIME_MISUSE_IDS)
def test_rt_cond_and_while_loop_misuse_names_the_line(fn, cls, line, word):
    with pytest.raises(cls) as info:
        rt.function(fn)(scalar(3))
    check(info.value, fn, line)


# eagerly the message the graph path gives, not Python's 'missing 1 required positional
# argument'
def test_rt_while_loop_body_of_another_structure_eagerly():
    with pytest.raises(ValueError, match="structure"):
        rt.while_loop(lambda i, s: i < 3, lambda i, s: i + 1, [0, 0.0])


def loop_with_negative_bound(n):
    return rt.while_loop(lambda i: i < n, lambda i: i + 1, [0], maximum_iterations=-1)


# a ValueError naming it (graph and eager), never zero iterations
def test_rt_while_loop_with_a_negative_maximum_iterations():
    with pytest.raises(ValueError, match="maximum_iterations"):
        rt.function(loop_with_negative_bound)(scalar(3))
    with pytest.raises(ValueError, match="maximum_iterations"):
        rt.while_loop(lambda i: i < 3, lambda i: i + 1, [0], maximum_iterations=-1)


def options_outside_a_loop(x):
    ag.set_loop_options(maximum_iterations=3)
    return x * 2.0


def options_not_first(x):
    i = 0
    while i < x:
        i += 1
        ag.set_loop_options(maximum_iterations=2)
    return i


def options_misspelled(x):
    i = 0
    while i < x:
        ag.set_loop_options(max_iterations=2)
        i += 1
    return i


def options_negative(x):
    i = 0
    while i < x:
        ag.set_loop_options(maximum_iterations=-1)
        i += 1
    return i


# set_loop_options outside a loop or not first in the body, a misspelled option and
# maximum_iterations=-1 are errors naming the directive's line, never ignored.
@pytest.mark.parametrize("fn", [
    options_outside_a_loop, options_not_first, options_misspelled, options_negative,
])
def test_misused_set_loop_options(fn):
    with pytest.raises((ag.ConversionError, ag.StagingError, TypeError, ValueError)) as info:
        ag.convert(fn)(scalar(5))
    assert "_iterations" in str(info.value) or "set_loop_options" in str(info.value)
    check(info.value, fn, "ag.set_loop_options")


def options_through_a_local_import(n):
    import autograph as graphs
    v = rt.zeros([1])
    i = 0
    while i < n:
        graphs.set_loop_options(shape_invariants=[(v, [None])])
        v = rt.concat([v, v], 0)
        i += 1
    return v


def options_imported_by_name(n):
    from autograph import set_loop_options as loop_options
    v = rt.zeros([1])
    for i in range(n):
        loop_options(shape_invariants=[(v, [None])])
        v = rt.concat([v, v], 0)
    return v


@pytest.mark.parametrize("fn", [options_through_a_local_import, options_imported_by_name])
def test_set_loop_options_through_local_imports_and_aliases(fn):
    assert ag.convert(fn)(scalar(3)).shape == (8,)


def test_set_loop_options_that_runs_warns_it_has_no_effect():
    with pytest.warns(UserWarning, match="set_loop_options ran as a function call and has "
                                          "no effect"):
        options_imported_by_name(2)            # plain Python: the directive is a call


def invariant_of_an_unchanged_value(n):
    i = 0
    v = rt.zeros([1])
    while i < n:
        ag.set_loop_options(shape_invariants=[(v, [None])])
        i += 1
    return i


def test_a_shape_invariant_for_a_value_the_loop_does_not_change():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(invariant_of_an_unchanged_value)(scalar(3))
    check(info.value, invariant_of_an_unchanged_value, "while i < n", "'v'")


def invariant_not_a_pair(n):
    i = 0
    v = rt.zeros([1])
    while i < n:
        ag.set_loop_options(shape_invariants=[v, [None]])
        v = rt.concat([v, v], 0)
        i += 1
    return v


# shape_invariants=[v, [None]] (not (var, shape) pairs): named, not Python's 'not enough
# values to unpack'
def test_shape_invariants_that_are_not_pairs():
    with pytest.raises((ag.StagingError, TypeError, ValueError)) as info:
        ag.convert(invariant_not_a_pair)(scalar(2))
    assert "shape_invariants" in str(info.value), str(info.value)


def float_as_int(x):
    return rt.py_function(lambda t: t.numpy() * 2.5, [x], rt.int32)


def returns_nothing(x):
    return rt.py_function(lambda t: None, [x], rt.float32)


# an error as in TensorFlow, never a silent cast (2.5 declared int32 is not 2)
def test_a_py_function_returning_another_dtype_than_tout():
    with pytest.raises((TypeError, ValueError)) as info:
        ag.convert(float_as_int)(scalar(1.0))
    check(info.value, float_as_int, "rt.py_function", "py_function")


# None for a float32 Tout is an error, not nan
def test_a_py_function_returning_none():
    with pytest.raises((TypeError, ValueError)) as info:
        ag.convert(returns_nothing)(scalar(1.0))
    check(info.value, returns_nothing, "rt.py_function", "None")
