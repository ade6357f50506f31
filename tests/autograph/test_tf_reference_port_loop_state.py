"""TensorFlow AutoGraph's reference tests for loop state, ported (tensorflow/python/
autograph/tests/loop_created_variables_test.py, loop_with_variable_type_test.py,
loop_with_variable_type_illegal_cases_test.py, composite_names_in_control_flow_test.py,
basic_list_test.py, datasets_test.py and converters/{control_flow,break_statements,
continue_statements,return_statements,loop_integration,lists}_test.py): variables created
in loops, shape invariants, dtype/shape/structure changes, attributes and items as loop
state, lists grown in loops, jumps in loops that grow lists, data sets and iterators.

The same argument kinds and conventions as test_tf_reference_port_loops.py (whose helpers
this file uses): results equal the plain Python run, lists grown in tensor loops are
compared stacked, misuse raises the documented error naming the variable and the line.
"""
import collections
import contextlib
import io

import numpy as np
import pytest
from equivalence import assert_equivalent, static
from test_tf_reference_port_conditionals import check_error as check
from test_tf_reference_port_loops import (PY_AND_TENSOR,
                                          SEQ_KINDS,
                                          assert_matches_with_unknown_shapes,
                                          assert_python_result_or_staging_error,
                                          assert_same_stacked, i32, product, scalar, seq,
                                          stacked)

import autograph as ag
import runtime as rt


# == loop_created_variables_test ===========================================================

def creates_static_shape(n):
    i = 0
    while i < n:
        v = rt.zeros([1, 2, 3])
        i += 1
    return v


def creates_dynamic_shape(n):
    i = 0
    while i < n:
        v = rt.zeros(rt.stack([1, i, 2]))
        i += 1
    return v


def creates_dynamic_rank(n):
    i = 0
    while i < n:
        v = rt.zeros(rt.range(i))
        i += 1
    return v


def creates_range(n):
    i = 0
    while i < n:
        v = rt.range(i)
        i += 1
    return v


def creates_nested_static_shape(n):
    i = 0
    while i < n:
        v = {"a": rt.zeros([1, 2, 3]), "b": rt.ones([1, 2, 3])}
        i += 1
    return v["a"], v["b"]


def creates_nested_dynamic_shape(n):
    i = 0
    while i < n:
        v = {"a": rt.zeros(rt.stack([1, i])), "b": rt.ones(rt.stack([i, 2]))}
        i += 1
    return v["a"], v["b"]


@pytest.mark.parametrize("f", [
    creates_static_shape, creates_nested_static_shape,
    # The loop gives a variable it creates its shape: any shape of the first iteration's
    # rank, or any rank at all once an iteration changes it.
    creates_dynamic_shape, creates_range, creates_nested_dynamic_shape, creates_dynamic_rank,
])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_loop_creates_a_variable(f, n):
    assert_equivalent(f, n, tensors=True)


@pytest.mark.parametrize("f", [creates_static_shape, creates_dynamic_shape,
                               creates_dynamic_rank, creates_range,
                               creates_nested_static_shape, creates_nested_dynamic_shape])
@pytest.mark.parametrize("n", [1, 2])
def test_loop_creates_a_variable_with_python_bounds(f, n):
    assert_equivalent(f, n, tensors=False)


@pytest.mark.parametrize("f", [creates_static_shape, creates_dynamic_shape,
                               creates_dynamic_rank, creates_range,
                               creates_nested_static_shape, creates_nested_dynamic_shape])
def test_loop_creating_a_variable_runs_zero_times_with_python_bounds(f):
    assert_equivalent(f, 0, tensors=False, raises=UnboundLocalError)


@pytest.mark.parametrize("f, name, read", [
    (creates_static_shape, "'v'", "return v"),
    (creates_nested_static_shape, "'v'", 'return v["a"], v["b"]'),
    (creates_range, "'v'", "return v"),
])
def test_tensor_loop_creating_a_variable_runs_zero_times(f, name, read):
    # As in Python, the read of the variable fails (when the graph runs), at its line.
    with pytest.raises(UnboundLocalError) as info:
        ag.convert(f)(rt.constant(0))
    check(info.value, f, read, name)


# == loop_with_variable_type_test: shape invariants ========================================

def while_growing_vector(n):
    v = rt.constant([0, 0])
    i = 0
    while i < n:
        ag.set_loop_options(shape_invariants=[(v, rt.TensorShape([None]))])
        v = rt.concat((v, [i]), 0)
        i += 1
    return v


def for_growing_vector(items):
    v = rt.constant([0, 0])
    for i in items:
        ag.set_loop_options(shape_invariants=[(v, rt.TensorShape([None]))])
        v = rt.concat((v, [i]), 0)
    return v


def while_growing_rows(n):
    m = rt.constant([[0]])
    i = 0
    while i < n:
        ag.set_loop_options(shape_invariants=[(m, [None, 1])])
        m = rt.concat((m, [[i]]), 0)
        i += 1
    return m


def for_growing_rows(items):
    m = rt.constant([[0]])
    for i in items:
        ag.set_loop_options(shape_invariants=[(m, [None, 1])])
        m = rt.concat((m, [[i]]), 0)
    return m


def while_growing_columns(n):
    m = rt.constant([[0, 0]])
    i = 0
    while i < n:
        ag.set_loop_options(shape_invariants=[(m, [1, None])])
        m = rt.concat((m, [[i]]), 1)
        i += 1
    return m


def for_growing_columns(items):
    m = rt.constant([[0, 0]])
    for i in items:
        ag.set_loop_options(shape_invariants=[(m, [1, None])])
        m = rt.concat((m, [[i]]), 1)
    return m


def _pad_with(m, value):
    """m with a border of `value` (TensorFlow's test uses tf.pad)."""
    k = rt.shape(m)[1]
    m = rt.concat([rt.fill(rt.stack([1, k]), value), m, rt.fill(rt.stack([1, k]), value)], 0)
    rows = rt.shape(m)[0]
    return rt.concat([rt.fill(rt.stack([rows, 1]), value), m,
                      rt.fill(rt.stack([rows, 1]), value)], 1)


def while_growing_matrix(n):
    m = rt.constant([[0, 0], [0, 0]])
    i = 0
    while i < n:
        ag.set_loop_options(shape_invariants=[(m, rt.TensorShape(None))])
        m = _pad_with(m, i)
        i += 1
    return m


def for_growing_matrix(items):
    m = rt.constant([[0, 0], [0, 0]])
    for i in items:
        ag.set_loop_options(shape_invariants=[(m, None)])
        m = _pad_with(m, i)
    return m


def while_growing_inside_if(n):
    v = rt.constant([0, 0])
    i = 0
    if n > 1:
        while i < n:
            ag.set_loop_options(shape_invariants=[(v, [None])])
            v = rt.concat((v, [i]), 0)
            i += 1
    else:
        v = rt.constant([1, 2, 3])
    return v


def for_growing_inside_if(n):
    v = rt.constant([0, 0])
    if n > 1:
        for i in range(n):
            ag.set_loop_options(shape_invariants=[(v, [None])])
            v = rt.concat((v, [i]), 0)
            i += 1
    else:
        v = rt.constant([1, 2, 3])
    return v


Holder = collections.namedtuple("Holder", ["var"])


def for_growing_with_namedtuple_inside_if(n):
    t = Holder(var=rt.constant([0]))
    v = rt.constant([0, 0])
    if n > 1:
        for i in range(n):
            ag.set_loop_options(shape_invariants=[(v, [None])])
            v = rt.concat((v, [i]), 0)
            t = Holder(var=t.var + 1)
            i += 1
    else:
        v = rt.constant([1, 2, 3])
        t = Holder(var=rt.constant([3]))
    return v, t


def while_growing_with_break(n):
    v = rt.constant([0, 0])
    i = 0
    if n > 1:
        while i < n:
            ag.set_loop_options(shape_invariants=[(v, [None])])
            v = rt.concat((v, [i]), 0)
            i += 1
            if i > 3:
                break
    else:
        v = rt.constant([1, 2, 3])
    return v


def for_growing_with_break(n):
    v = rt.constant([0, 0])
    if n > 1:
        for i in range(n):
            ag.set_loop_options(shape_invariants=[(v, [None])])
            v = rt.concat((v, [i]), 0)
            i += 1
            if i > 3:
                break
    else:
        v = rt.constant([1, 2, 3])
    return v


@pytest.mark.parametrize("f", [while_growing_vector, while_growing_rows,
                               while_growing_columns, while_growing_matrix,
                               while_growing_inside_if, for_growing_inside_if,
                               for_growing_with_namedtuple_inside_if,
                               while_growing_with_break, for_growing_with_break])
@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_shape_invariants_with_counters(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


@pytest.mark.parametrize("f", [for_growing_vector, for_growing_rows, for_growing_columns,
                               for_growing_matrix])
@pytest.mark.parametrize("n", [0, 1, 2])
@pytest.mark.parametrize("kind", ["range", "rt.range", "tensor-range", "dataset"])
def test_shape_invariants_over_iterables(f, n, kind):
    items = {"range": lambda: range(n), "rt.range": lambda: rt.range(n),
             "tensor-range": lambda: rt.range(rt.constant(n)),
             "dataset": lambda: rt.data.Dataset.from_tensor_slices(
                 np.arange(n, dtype=np.int32))}[kind]()
    assert_equivalent(f, items, tensors=False)


@pytest.mark.parametrize("f", [for_growing_vector, for_growing_rows, for_growing_matrix])
def test_shape_invariants_over_a_tensor_of_unknown_length(f):
    assert_matches_with_unknown_shapes(f, i32(4, 5, 6))
    assert_matches_with_unknown_shapes(f, i32())


# == loop_with_variable_type_illegal_cases_test ============================================

def while_changes_dtype(n):
    v = rt.constant(0, dtype=rt.int32)
    i = 0
    while i < n:
        v = rt.constant(0, dtype=rt.float32)
        i += 1
    return v


def while_changes_dtype_then_breaks(n):
    v = rt.constant(0, dtype=rt.int32)
    i = 0
    while i < n:
        v = rt.constant(0, dtype=rt.float32)
        i += 1
        break
    return v


def for_changes_dtype(items):
    v = rt.constant(0, dtype=rt.int32)
    for _ in items:
        v = rt.constant(0, dtype=rt.float32)
    return v


def for_changes_dtype_then_breaks(items):
    v = rt.constant(0, dtype=rt.int32)
    for _ in items:
        v = rt.constant(0, dtype=rt.float32)
        break
    return v


def while_changes_shape(n):
    t = rt.constant([1])
    i = 0
    while i < n:
        t = rt.constant([1, 1])
        i += 1
    return t


def for_changes_shape(items):
    t = rt.constant([1])
    for _ in items:
        t = rt.constant([1, 1])
    return t


def while_erases_shape(n):
    t = rt.constant([1])
    i = 0
    while i < n:
        t = rt.range(n)
        i += 1
    return t


def for_erases_shape(items):
    t = rt.constant([1])
    for i in items:
        t = rt.range(i)
    return t


def while_violates_shape_invariant(n):
    t = rt.constant([1])
    i = 0
    while i < n:
        ag.set_loop_options(shape_invariants=[(t, [1])])
        t = rt.range(n)
        i += 1
    return t


def for_violates_shape_invariant(items):
    t = rt.constant([1])
    for i in items:
        ag.set_loop_options(shape_invariants=[(t, [1])])
        t = rt.range(i)
    return t


def while_changes_structure(n):
    s = {"a": rt.constant(0)}
    i = 0
    while i < n:
        s = rt.constant(7.0)
        i += 1
    return s


def for_grows_list_by_concatenation(items):
    s = [rt.constant(0)]
    for _ in items:
        s = s + [rt.constant(0)]
    return s


def tensor_loop_items(kind):
    return {"tensor": lambda: rt.constant(i32(1, 2, 3)),
            "rt.range": lambda: rt.range(rt.constant(3)),
            "dataset": lambda: rt.data.Dataset.from_tensor_slices(i32(1, 2, 3)),
            "unknown-length": None}[kind]


@pytest.mark.parametrize("f", [while_changes_dtype, while_changes_dtype_then_breaks])
def test_while_variable_changing_dtype(f):
    assert_equivalent(f, 2, tensors=False)          # Python bounds: plain Python
    with pytest.raises(ag.StagingError) as info:
        ag.convert(f)(rt.constant(2))
    check(info.value, f, "while i < n", "'v'", "int32", "float32")


@pytest.mark.parametrize("f", [for_changes_dtype, for_changes_dtype_then_breaks])
@pytest.mark.parametrize("kind", ["tensor", "rt.range", "dataset"])
def test_for_variable_changing_dtype(f, kind):
    with pytest.raises(ag.StagingError) as info:
        ag.convert(f)(tensor_loop_items(kind)())
    check(info.value, f, "for _ in items", "'v'", "int32", "float32")


@pytest.mark.parametrize("f", [for_changes_dtype, for_changes_dtype_then_breaks])
def test_for_variable_changing_dtype_over_python_iterables(f):
    # Lists are unrolled: Python's dynamic typing (data sets are graph loops, as in
    # TensorFlow: test_for_variable_changing_dtype).
    assert_equivalent(f, [1, 2, 3], tensors=False)


def test_variable_changing_shape():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(while_changes_shape)(rt.constant(2))
    check(info.value, while_changes_shape, "while i < n", "'t'", "(1,)", "(2,)")
    for kind in ("tensor", "rt.range", "dataset"):
        with pytest.raises(ag.StagingError) as info:
            ag.convert(for_changes_shape)(tensor_loop_items(kind)())
        check(info.value, for_changes_shape, "for _ in items", "'t'", "(1,)", "(2,)")


def test_variable_losing_its_static_shape():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(while_erases_shape)(rt.constant(2))
    check(info.value, while_erases_shape, "while i < n", "'t'", "(1,)", "None")
    with pytest.raises(ag.StagingError) as info:
        ag.convert(for_erases_shape)(rt.constant(i32(1, 2, 3)))
    check(info.value, for_erases_shape, "for i in items", "'t'", "(1,)", "None")


def test_variable_violating_its_shape_invariant():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(while_violates_shape_invariant)(rt.constant(2))
    check(info.value, while_violates_shape_invariant, "while i < n", "'t'")
    with pytest.raises(ag.StagingError) as info:
        ag.convert(for_violates_shape_invariant)(rt.constant(i32(1, 2, 3)))
    check(info.value, for_violates_shape_invariant, "for i in items", "'t'")


def test_variable_changing_structure_with_python_bounds():
    assert_equivalent(while_changes_structure, 2, tensors=False)


# the error names the variable that changed, as other loop errors do
def test_variable_changing_structure():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(while_changes_structure)(rt.constant(2))
    check(info.value, while_changes_structure, "while i < n", "'s'")


@pytest.mark.parametrize("values", [[1, 2, 3], []])
def test_list_grown_by_concatenation_in_a_python_loop(values):
    assert_same_stacked(for_grows_list_by_concatenation, seq(values, "list"))


@pytest.mark.parametrize("values", [
    [1, 2, 3], [4], []])
def test_list_grown_by_concatenation_in_a_tensor_loop(values):
    # TensorFlow: "'s' does not have the same nested structure"; here `s + [x]` on a list
    # in a tensor loop makes a tensor list (README), returned stacked.
    assert_same_stacked(for_grows_list_by_concatenation, seq(values, "tensor"))


@pytest.mark.parametrize("values", [[1, 2, 3], []])
def test_list_grown_by_concatenation_over_an_unknown_length(values):
    tensor = rt.constant(i32(*values))
    f = ag.convert(for_grows_list_by_concatenation,
                   input_signature=[rt.TensorSpec([None], rt.int32)])
    assert np.array_equal(f(tensor).numpy(), stacked(for_grows_list_by_concatenation(tensor)))


# == composite_names_in_control_flow_test (loops) ==========================================

def while_dict_item(x, a, b):
    y = {"a": a, "b": b}
    while x > 0:
        x -= 1
        y["a"] += 1
    return y


def while_list_item(x, a, b):
    y = [a, b]
    while x > 0:
        x -= 1
        y[0] += 1
    return y


def while_state_only_in_dict(a, b):
    y = {"a": a, "b": b}
    while y["b"] <= 10:
        y["a"] += 1
        y["b"] *= 2
    return y


def while_state_only_in_list(a, b):
    y = [a, b]
    while y[1] <= 10:
        y[0] += 1
        y[1] *= 2
    return y


def while_creates_dict_item(b):
    y = {"b": b}
    while y["b"] <= 10:
        y["a"] = y["b"] + 1
        y["b"] *= 2
    return y


def for_dict_item(n, x, a, b):
    y = {"a": a, "b": b}
    for i in range(n):
        x -= 1
        y["a"] += i
    return y


def for_list_item(n, x, a, b):
    y = [a, b]
    for i in range(n):
        x -= 1
        y[0] += i
    return y


def for_state_only_in_dict(n, a, b):
    y = {"a": a, "b": b}
    for _ in range(n):
        y["a"] += 1
    return y


def for_state_only_in_list(n, a, b):
    y = [a, b]
    for _ in range(n):
        y[0] += 1
    return y


def for_creates_dict_item(n, x):
    y = {}
    for i in range(n):
        x -= i
        y["a"] = x
    return y


@pytest.mark.parametrize("f", [while_dict_item, while_list_item])
@pytest.mark.parametrize("x", [0, 1, 2])
@pytest.mark.parametrize("a", [3, 7])
@pytest.mark.parametrize("kind", PY_AND_TENSOR)
def test_while_with_items(f, x, a, kind):
    assert_equivalent(f, scalar(x, kind), a, 0, tensors=False)


@pytest.mark.parametrize("f", [while_state_only_in_dict, while_state_only_in_list])
@pytest.mark.parametrize("b", [3, 4, 5, 6, 11])
@pytest.mark.parametrize("kind", PY_AND_TENSOR)
def test_while_whose_state_is_only_items(f, b, kind):
    assert_equivalent(f, 0, scalar(b, kind), tensors=False)


@pytest.mark.parametrize("b", [5, 10, 11])
def test_while_creating_a_dict_item_with_python_values(b):
    assert_equivalent(while_creates_dict_item, b, tensors=False)


@pytest.mark.parametrize("b", [5, 10])
def test_while_creating_a_dict_item_with_a_tensor(b):
    assert_equivalent(while_creates_dict_item, b, tensors=True)


def test_while_creating_a_dict_item_that_runs_zero_times():
    with pytest.raises(UnboundLocalError) as info:
        ag.convert(while_creates_dict_item)(rt.constant(11))
    check(info.value, while_creates_dict_item, 'while y["b"] <= 10', "y['a']")


@pytest.mark.parametrize("f", [for_dict_item, for_list_item])
@pytest.mark.parametrize("n", [0, 1, 2])
def test_for_with_items(f, n, tensors):
    assert_equivalent(f, n, 1, 1, 1, tensors=tensors)


@pytest.mark.parametrize("f", [for_state_only_in_dict, for_state_only_in_list])
@pytest.mark.parametrize("n", [0, 1, 2])
def test_for_whose_state_is_only_items(f, n, tensors):
    assert_equivalent(f, n, 1, 1, tensors=tensors)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_for_creating_a_dict_item_with_python_values(n):
    assert_equivalent(for_creates_dict_item, n, 0, tensors=False)


@pytest.mark.parametrize("n", [1, 2])
def test_for_creating_a_dict_item_with_a_tensor(n):
    assert_equivalent(for_creates_dict_item, n, 0, tensors=True)


def test_for_creating_a_dict_item_that_runs_zero_times():
    with pytest.raises(UnboundLocalError) as info:
        ag.convert(for_creates_dict_item)(rt.constant(0), 0)
    check(info.value, for_creates_dict_item, "for i in range(n)", "y['a']")


# == converters/control_flow_test (loops) ==================================================

_mixed_global = None


def nested_whiles_with_a_local(n):
    i = 0
    j = 0
    s = 0
    while i < n:
        while j < i:
            j += 3
        u = i + j
        s += u
        i += 1
        j = 0
    return s, i, j, n


def nested_whiles_with_a_global(n):
    global _mixed_global
    i = 0
    j = 0
    _mixed_global = 0
    while i < n:
        while j < i:
            j += 3
        u = i + j
        _mixed_global += u
        i += 1
        j = 0
    return _mixed_global, i, j, n


@pytest.mark.parametrize("f", [nested_whiles_with_a_local, nested_whiles_with_a_global])
@pytest.mark.parametrize("n", [0, 1, 5])
def test_nested_whiles_with_locals_and_globals(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


class Box:
    def __init__(self, value):
        self.x = value


class Inner:
    def __init__(self, y):
        self.y = y


def deep_composite_state(n):
    tc = Box(Inner({"z": Box(n)}))
    if n > 0:
        while n > 0:
            if n < 2:
                tc.x.y["z"].x += 1
            n -= 1
    return n, tc.x.y["z"].x


def attribute_state(n):
    tc = Box(rt.constant(3))
    while n > 0:
        tc.x += 1
        n -= 1
    return n, tc.x


def item_state_with_key_variable(n):
    d = {"a": n}
    k = "a"
    while n > 0:
        d[k] += 1
        n -= 1
    return d[k], n


def item_state_with_literal_key(n):
    d = {"a": n}
    while n > 0:
        d["a"] += 1
        n -= 1
    return d["a"], n


def attribute_initialized_in_loop(n, x):
    tc = Box(None)
    del tc.x
    while n < 5:
        if n == 0:
            tc.sub = x
        else:
            tc.sub = tc.sub + 1
        n += 1
    return tc.sub


def item_initialized_in_loop(n, x):
    d = {}
    k = "subkey"
    while n < 5:
        if n == 0:
            d[k] = x
        else:
            d[k] = d[k] + 1
        n += 1
    return d


def item_with_key_set_in_loop(n, x):
    d = {}
    while n < 5:
        k = "subkey"
        d[k] = x + 1
        n += 1
    return d


def local_object_in_loop(n):
    while n > 0:
        tc = Box(rt.constant(3))
        tc.x = tc.x
        n -= 1
    return n


def local_dict_in_loop(n):
    while n > 0:
        d = {"x": n}
        k = "x"
        d[k] = d[k]
        n -= 1
    return n


Wrapper = collections.namedtuple("Wrapper", ("x",))


def namedtuple_of_list_state(n):
    tc = Wrapper([rt.constant(0)])
    while n > 0:
        tc = Wrapper([rt.constant(3)])
        tc.x[0] = tc.x[0] + 1
        n -= 1
    return tc.x[0]


@pytest.mark.parametrize("f", [deep_composite_state, attribute_state,
                               item_state_with_key_variable, item_state_with_literal_key,
                               local_object_in_loop, local_dict_in_loop,
                               namedtuple_of_list_state])
@pytest.mark.parametrize("n", [0, 1, 5, -2])
def test_composite_loop_state(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


@pytest.mark.parametrize("f", [attribute_initialized_in_loop, item_initialized_in_loop])
def test_composite_initialized_in_a_loop(f):
    assert_equivalent(f, 0, 10, tensors=False)
    assert_equivalent(f, 0, rt.constant(10), tensors=False)     # only x a tensor


def test_composite_initialized_in_a_loop_that_runs_zero_times():
    assert_equivalent(attribute_initialized_in_loop, 6, 10, tensors=False,
                      raises=AttributeError)
    assert_equivalent(item_initialized_in_loop, 6, 10, tensors=False)      # {}


@pytest.mark.parametrize("f, name", [(attribute_initialized_in_loop, "tc.sub"),
                                     (item_initialized_in_loop, "d[k]")])
def test_composite_initialized_in_a_tensor_loop(f, name):
    # TensorFlow: "'tc.subattr' must be defined before the loop". The loop's condition is
    # a tensor, so the else branch (which reads it) is traced with no value for it.
    assert_python_result_or_staging_error(f, (rt.constant(0), 0), name,
                                          ("while n < 5", "if n == 0", "+ 1"))


@pytest.mark.parametrize("n", [0, 4, 6])
def test_item_with_key_set_in_a_loop(n):
    assert_equivalent(item_with_key_set_in_loop, n, 5, tensors=False)


def item_with_literal_key_set_in_loop(n, x):
    d = {}
    while n < 5:
        d["subkey"] = x + 1
        n += 1
    return d


@pytest.mark.parametrize("n", [0, 4])
def test_item_with_literal_key_set_in_a_tensor_loop(n):
    assert_equivalent(item_with_literal_key_set_in_loop, n, 5, tensors=True)


# the key k is assigned in the body; no tensor of the body leaks out
@pytest.mark.parametrize("n", [0, 4])
def test_item_with_key_set_in_a_tensor_loop(n):
    assert_python_result_or_staging_error(item_with_key_set_in_loop,
                                          (rt.constant(n), rt.constant(5)), "d",
                                          ("while n < 5", "d[k] = x + 1"))


def object_created_in_loop(n):
    while n > 0:
        tc = Box([rt.constant(3)])
        tc.x[0] = tc.x[0] + 1
        n -= 1
    return tc.x[0]


def test_object_created_in_a_tensor_loop():
    assert_equivalent(object_created_in_loop, 5, tensors=False)
    # A plain object made in the loop body cannot be loop state of a graph loop.
    with pytest.raises(ag.StagingError) as info:
        ag.convert(object_created_in_loop)(rt.constant(5))
    check(info.value, object_created_in_loop, "while n > 0", "'tc'")


class NotATensorNumber:
    """Adds like a number, but is not a tensor (TensorFlow's TensorIncompatibleNumeric)."""

    def __init__(self, val):
        self.val = val

    def __add__(self, other):
        return NotATensorNumber(self.val + other)


def accumulate(n, s):
    while n > 0:
        n -= 1
        s += n
    return s


def test_loop_dispatches_on_the_condition_only():
    assert ag.convert(accumulate)(5, NotATensorNumber(0)).val == 10
    assert ag.convert(accumulate)(rt.constant(5), 0).numpy() == 10
    with pytest.raises((TypeError, ag.StagingError)):
        ag.convert(accumulate)(rt.constant(5), NotATensorNumber(0))


def sum_and_sum_of_squares(items):
    s1 = 0
    s2 = 0
    for e in items:
        s1 += e
        s2 += e * e
    return s1, s2


@pytest.mark.parametrize("values", [[], [1, 3], [-2, 5, 7]])
def test_for_over_a_vector(values):
    assert_equivalent(sum_and_sum_of_squares, i32(*values), tensors=True)
    assert_matches_with_unknown_shapes(sum_and_sum_of_squares, i32(*values))


def test_iterated_expression_is_evaluated_once():
    calls = []

    def counted(x):
        calls.append(1)
        return x

    def f(n):
        s = 0
        for e in counted(range(n)):
            s += e
        return s

    assert ag.to_graph(f)(5) == 10 and len(calls) == 1
    calls.clear()
    assert ag.convert(f)(rt.constant(5)).numpy() == 10 and len(calls) == 1


def attribute_first_set_in_for(items, x):
    tc = Box(None)
    del tc.x
    for i in items:
        if i == 0:
            tc.x = x
        else:
            tc.x = tc.x + i
    return tc.x


def test_attribute_first_set_in_a_for():
    assert_equivalent(attribute_first_set_in_for, range(5), rt.constant(10), tensors=False)


def test_attribute_first_set_in_a_tensor_for():
    assert_python_result_or_staging_error(
        attribute_first_set_in_for, (rt.constant(i32(0, 1, 2, 3, 4)), 0), "tc.x",
        ("for i in items", "if i == 0", "tc.x = tc.x + i"))


def enumerate_and_add(values):
    z = rt.constant(0)
    for i, x in enumerate(values):
        z = z + x + i
    return z


def comprehension_in_loop_body(items, n):
    s = rt.constant(list(range(n)))
    for _ in items:
        s += rt.constant([a for a in range(n)])
    return s


def test_tuple_unpacking_and_comprehensions_in_for(tensors):
    assert_equivalent(enumerate_and_add, [3, 3], tensors=tensors)
    assert_equivalent(enumerate_and_add, i32(3, 4, 5), tensors=tensors)
    assert_equivalent(comprehension_in_loop_body, i32(1, 2, 3), static(5), tensors=tensors)


def while_else_halving(x):
    while x > 2:
        x /= 2
    else:
        x += 1
    return x


def while_else_with_break(stop):
    x = 8
    while x > 2:
        x /= 2
        if stop:
            break
    else:
        x += 1
    return x


def for_else_sum(items):
    res = 0
    for x in items:
        res += x
    else:
        res += 1
    return res


def for_else_with_break(stop):
    res = 0
    for x in [1, 2, 3]:
        res += x
        if stop:
            break
    else:
        res += 1
    return res


@pytest.mark.parametrize("x", [4, 2, 9.0, 2.0, 16.0])
def test_while_else_halving(x, tensors):
    if tensors and isinstance(x, int):
        # `x /= 2` makes an int32 tensor a float32 one: a loop variable changing dtype.
        with pytest.raises(ag.StagingError) as info:
            ag.convert(while_else_halving)(rt.constant(x))
        check(info.value, while_else_halving, "while x > 2", "'x'", "int32", "float32")
        return
    assert_equivalent(while_else_halving, x, tensors=tensors)


@pytest.mark.parametrize("f", [while_else_with_break, for_else_with_break])
@pytest.mark.parametrize("stop", [True, False])
def test_loop_else_with_break(f, stop, tensors):
    assert_equivalent(f, stop, tensors=tensors)


@pytest.mark.parametrize("values", [[], [1, 2]])
@pytest.mark.parametrize("kind", SEQ_KINDS)
def test_for_else_sum(values, kind):
    assert_equivalent(for_else_sum, seq(values, kind), tensors=False)


# == converters/break_statements_test, continue_statements_test, return_statements_test ====

def break_collects(x):
    v = []
    while x > 0:
        x -= 1
        if x % 2 == 0:
            break
        v.append(x)
    return v


def break_in_for_collects(a):
    v = []
    for x in a:
        x -= 1
        if x % 2 == 0:
            break
        v.append(x)
    return v


def break_nested_collects(x):
    v = []
    u = []
    w = []
    while x > 0:
        x -= 1
        if x % 2 == 0:
            if x % 3 != 0:
                u.append(x)
            else:
                w.append(x)
                break
        v.append(x)
    return v, u, w


def break_in_nested_loops_collects(x):
    v = []
    u = []
    while x > 0:
        x -= 1
        y = x
        while y > 0:
            y -= 1
            if y % 2 == 0:
                break
            u.append(y)
        if x == 0:
            break
        v.append(x)
    return v, u


def break_in_loop_else_collects(x):
    v = []
    u = []
    while x > 0:
        x -= 1
        y = x
        while y > 1:
            break
        else:
            u.append(y)
            break
        v.append(x)
    return v, u


def correlated_breaks(cond):
    lst = []
    while True:
        if cond:
            lst.append(1)
        else:
            break
        if lst[-1] > 0:
            break
    return lst


def continue_collects(x):
    v = []
    while x > 0:
        x -= 1
        if x % 2 == 0:
            continue
        v.append(x)
    return v


def two_continues_collect(x):
    v = []
    while x > 0:
        x -= 1
        if x > 1:
            continue
        if x > 2:
            continue
        v.append(x)
    return v


def continue_in_for_collects(a):
    v = []
    for x in a:
        x -= 1
        if x % 2 == 0:
            continue
        v.append(x)
    return v


def continue_in_with_collects(x):
    v = []
    while x > 0:
        x -= 1
        with contextlib.nullcontext():
            if x % 2 == 0:
                continue
            v.append(x)
        v.append(x)
        with contextlib.nullcontext():
            v.append(x)
        v.append(x)
    return v


def continue_nested_collects(x):
    v = []
    u = []
    w = []
    while x > 0:
        x -= 1
        if x % 2 == 0:
            if x % 3 != 0:
                u.append(x)
            else:
                w.append(x)
                continue
        v.append(x)
    return v, u, w


def return_in_with_in_loop_collects(x):
    v = []
    while x > 0:
        x -= 1
        with contextlib.nullcontext():
            if x % 2 == 0:
                return v
        with contextlib.nullcontext():
            v.append(x)
        v.append(x)
    return v


def guarded_continues_with_side_effects(x):
    def track(y, z):
        y.append(z)
        return z

    u = []
    v = []
    while x > 0:
        x -= 1
        if track(u, x) > 1:
            continue
        if track(u, x) > 2:
            continue
        v.append(x)
    return u, v


@pytest.mark.parametrize("f", [break_collects, break_nested_collects,
                               break_in_nested_loops_collects, break_in_loop_else_collects,
                               continue_collects, two_continues_collect,
                               continue_in_with_collects, continue_nested_collects,
                               return_in_with_in_loop_collects])
@pytest.mark.parametrize("x", [0, 1, 2, 3, 4, 5, 11])
def test_jumps_in_python_loops_that_grow_lists(f, x):
    assert_same_stacked(f, x)


@pytest.mark.parametrize("f", [break_collects, break_nested_collects,
                               break_in_nested_loops_collects, break_in_loop_else_collects,
                               continue_collects, two_continues_collect,
                               continue_in_with_collects, continue_nested_collects])
@pytest.mark.parametrize("x", [0, 1, 2, 3, 4, 5, 11])
def test_jumps_in_tensor_loops_that_grow_lists(f, x):
    assert_same_stacked(f, rt.constant(x))


@pytest.mark.parametrize("x", [0, 3, 4])
def test_return_of_a_list_grown_in_a_tensor_loop(x):
    assert_same_stacked(return_in_with_in_loop_collects, rt.constant(x))


@pytest.mark.parametrize("f, values, kind", product(
    [break_in_for_collects, continue_in_for_collects], [[], [1], [2], [5, 4], [1, 2, 3]],
    ["list", "tensor", "dataset"]))
def test_jumps_in_for_loops_that_grow_lists(f, values, kind):
    assert_same_stacked(f, seq(values, kind))


@pytest.mark.parametrize("f", [break_in_for_collects, continue_in_for_collects])
@pytest.mark.parametrize("values", [[], [1, 2, 3]], ids=str)
def test_jumps_in_for_loops_over_unknown_lengths_that_grow_lists(f, values):
    tensor = rt.constant(i32(*values))
    got = ag.convert(f, input_signature=[rt.TensorSpec([None], rt.int32)])(tensor)
    assert np.array_equal(stacked(f(tensor)), got.numpy())


@pytest.mark.parametrize("f", [break_in_for_collects, continue_in_for_collects])
@pytest.mark.parametrize("values", [[1], [5, 4], [1, 2, 3]], ids=str)
@pytest.mark.parametrize("kind", ["tensors"])
def test_tensor_jumps_in_python_for_loops_that_grow_lists(f, values, kind):
    # A Python loop over tensors: the tensor `if` decides whether the list grows, so its
    # length is known only when the graph runs: it becomes a tensor list (TensorFlow
    # rejects the tensor break/continue inside a Python loop outright).
    assert_same_stacked(f, seq(values, kind))


@pytest.mark.parametrize("cond", [True, False])
def test_correlated_breaks(cond):
    assert_same_stacked(correlated_breaks, cond)


@pytest.mark.parametrize("cond", [True, False])
def test_correlated_breaks_on_a_tensor(cond):
    # `while True` with a tensor `if` deciding whether the list grows: as above.
    assert_same_stacked(correlated_breaks, rt.constant(cond))


@pytest.mark.parametrize("x", [2, 3])
def test_guarded_continues_with_side_effects_in_a_python_loop(x):
    assert_same_stacked(guarded_continues_with_side_effects, x)


@pytest.mark.parametrize("x", [2, 3])
def test_guarded_continues_with_side_effects_in_a_tensor_loop(x):
    assert_same_stacked(guarded_continues_with_side_effects, rt.constant(x))


def return_from_for_over_range(n):
    for _ in range(n):
        return 1


def returns_and_excepts_in_for(a):
    v = []
    for x in a:
        x -= 1
        if x > 100:
            return v
        try:
            raise ValueError("intentional")
        except ValueError:
            return v
        v.append(x)     # noqa: unreachable on purpose
    return v


def continues_and_excepts_in_for(a):
    v = []
    for x in a:
        x -= 1
        if x > 100:
            continue
        try:
            raise ValueError("intentional")
        except ValueError:
            continue
        v.append(x)     # noqa: unreachable on purpose
    return v


@pytest.mark.parametrize("n", [0, 2])
def test_return_from_for_over_range(n):
    assert_equivalent(return_from_for_over_range, n, tensors=False)


def test_return_from_a_tensor_for_that_may_not_run():
    # The loop returns 1 or falls off the end (None): a tensor choosing between a value
    # and None is a StagingError (README).
    with pytest.raises(ag.StagingError) as info:
        ag.convert(return_from_for_over_range)(rt.constant(2))
    check(info.value, return_from_for_over_range, "for _ in range(n)")


@pytest.mark.parametrize("f", [returns_and_excepts_in_for, continues_and_excepts_in_for])
@pytest.mark.parametrize("values", [[], [1], [2], [1, 2, 3]], ids=str)
def test_jumps_and_excepts_in_python_fors(f, values):
    assert_same_stacked(f, values)


# == basic_list_test and converters/lists_test =============================================

def fill_without_annotation(n):
    items = []
    for i in range(n):
        items.append(i)
    return rt.stack(items)


def element_access():
    items = []
    items.append(1)
    items.append(2)
    items.append(3)
    return 2 * items[1]


def element_update():
    items = []
    items.append(1)
    items.append(2)
    items.append(3)
    items[1] = 5
    return rt.stack(items)


def nested_fill(m, n):
    mat = []
    for _ in range(m):
        row = []
        for j in range(n):
            row.append(j)
        mat.append(rt.stack(row))
    return rt.stack(mat)


def read_write_loop(n):
    items = []
    items.append(1)
    items.append(1)
    for i in range(2, n):
        items.append(items[i - 1] + items[i - 2])
        items[i - 2] = -items[i - 2]
    return rt.stack(items)


def pop_in_loop(n):
    items = [1, 2, 3, 4]
    s = 0
    for _ in range(n):
        s += items.pop()
    return items, s


def item_assignment_in_loop(t, n):
    for i in range(n):
        t[i] = i
    return t


def double_pop(items):
    return items.pop().pop()


def stack_of_python_list():
    return rt.stack([1, 2, 3])


def test_lists_without_loops(tensors):
    assert_equivalent(element_access, tensors=tensors)
    assert_equivalent(element_update, tensors=tensors)
    assert_equivalent(stack_of_python_list, tensors=tensors)
    assert_equivalent(double_pop, [1, 2, [1, 2, 3]], tensors=False)


@pytest.mark.parametrize("n", [1, 3, 5])
def test_list_filled_in_a_loop(n, tensors):
    # TensorFlow needs set_element_type for a staged list; here the dtype is taken from
    # the first element appended.
    assert_equivalent(fill_without_annotation, n, tensors=tensors)


@pytest.mark.parametrize("m, n", [(1, 3), (5, 3), (2, 1)])
@pytest.mark.parametrize("kind_m, kind_n", [("py", "py"), ("tensor", "py"),
                                            ("py", "tensor"), ("tensor", "tensor")])
def test_list_of_lists_filled_in_loops(m, n, kind_m, kind_n):
    assert_equivalent(nested_fill, scalar(m, kind_m), scalar(n, kind_n), tensors=False)


@pytest.mark.parametrize("n", [2, 4, 6])
def test_list_read_and_written_in_a_loop(n):
    assert_equivalent(read_write_loop, n, tensors=False)


def test_list_item_assigned_with_a_tensor_index_in_a_tensor_loop():
    # TensorFlow's TensorList supports `l[i] = x` in a graph loop; here only the list
    # operations README lists do, and item assignment says why at the user's line.
    with pytest.raises(TypeError) as info:
        ag.convert(read_write_loop)(rt.constant(4))
    check(info.value, read_write_loop, "items[i - 2] = -items[i - 2]", "index")


@pytest.mark.parametrize("n", [0, 2, 4])
def test_pop_in_a_loop(n, tensors):
    assert_same_stacked(pop_in_loop, rt.constant(n) if tensors else n)


def test_python_list_item_assignment_in_a_loop():
    assert_equivalent(item_assignment_in_loop, static([0] * 10), 10, tensors=False)


def test_stacking_an_empty_list_from_a_python_loop():
    # An empty Python list cannot be stacked (no dtype): a ValueError, as in TensorFlow.
    assert_equivalent(fill_without_annotation, 0, tensors=False, raises=ValueError)
    assert_equivalent(nested_fill, 0, 3, tensors=False, raises=ValueError)


# == datasets_test ==========================================================================

def print_each(ds):
    for e in ds:
        rt.print(e)


def print_each_of_iter(ds):
    for e in iter(ds):
        rt.print(e)


def digits_of(ds):
    s = rt.constant(0, dtype=rt.int64)
    for e in ds:
        s = s * 10 + e
    return s


def digits_of_iter(ds):
    s = rt.constant(0, dtype=rt.int64)
    for e in iter(ds):
        s = s * 10 + e
    return s


def sum_and_product(ds):
    s = rt.constant(0, dtype=rt.int64)
    p = rt.constant(1, dtype=rt.int64)
    for e in ds:
        s += e
        p *= e
    return s, p


def digits_until_large(ds):
    s = rt.constant(0, dtype=rt.int64)
    for e in ds:
        s = s * 10 + e
        if s > 100:
            break
    return s


def resumed_iterator(ds):
    s = rt.constant(0, dtype=rt.int64)
    itr = iter(ds)
    for e in itr:
        s = s * 10 + e
        break
    for e in itr:
        s = s * 10 + e
        break
    for e in itr:
        s = s * 10 + e
    return s


def first_element_by_return(ds):
    y = rt.constant(0, dtype=rt.int64)
    for e in ds:
        y = e
        return y
    return y


def next_of_iter(ds):
    return next(iter(ds))


def two_nexts(ds):
    itr = iter(ds)
    return 10 * next(itr) + next(itr)


def nexts_in_loop(ds, n):
    itr = iter(ds)
    s = rt.constant(0, dtype=rt.int64)
    for _ in range(n):
        s = s * 10 + next(itr)
    return s


def next_until_exhausted_caught(ds, cond):
    itr = iter(ds)
    try:
        while cond:
            next(itr)
    except StopIteration:
        pass
    return 1


def dataset_of(values):
    return rt.data.Dataset.from_tensor_slices(np.array(values, np.int64))


@pytest.mark.parametrize("f", [
    print_each, print_each_of_iter, digits_of, digits_of_iter, sum_and_product,
    digits_until_large, first_element_by_return, next_of_iter, two_nexts,
    resumed_iterator])      # a `break` consumes no further element
@pytest.mark.parametrize("values", [[0, 1, 2, 3, 4, 5, 6], [3, 4]], ids=len)
def test_datasets(f, values):
    # TensorFlow: a return inside a data set loop is NotImplementedError; here the loop
    # over a data set is a graph loop like any tensor loop, and `return` works in it.
    assert_equivalent(f, static(dataset_of(values)), tensors=False)


@pytest.mark.parametrize("f", [print_each, digits_of, sum_and_product, resumed_iterator,
                               first_element_by_return])
def test_empty_dataset(f):
    assert_equivalent(f, static(dataset_of([])), tensors=False)


@pytest.mark.parametrize("n", [0, 3, 7])
def test_next_in_a_loop(n):
    assert_equivalent(nexts_in_loop, static(dataset_of(range(7))), n, tensors=False)


def test_next_past_the_end():
    assert_equivalent(nexts_in_loop, static(dataset_of(range(2))), 3, tensors=False,
                      raises=StopIteration)
    assert_equivalent(next_until_exhausted_caught, static(dataset_of(range(3))), True,
                      tensors=False)


def test_dataset_printing_matches_python_print_text():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ag.convert(print_each)(dataset_of([7, 8]))
    assert out.getvalue() == "7\n8\n"


def sum_of_dataset_made_here(values, limit):
    s = 0
    for e in rt.data.Dataset.from_tensor_slices(values):
        if e > limit:
            break
        s += e
    return s


@pytest.mark.parametrize("values", [[1, 2, 3], [5], [1, 9, 1]], ids=str)
@pytest.mark.parametrize("limit", [0, 4])
def test_dataset_of_the_functions_own_tensor_argument(values, limit, tensors):
    # README: a data set of the function's own tensor arguments yields slices of them.
    assert_equivalent(sum_of_dataset_made_here, i32(*values), limit, tensors=tensors)


# == prints inside loops (TensorFlow's tests print with tf.print in loop bodies) ============

def print_in_while(n):
    i = 0
    while i < n:
        print("step", i, "of", n)
        i += 1
    print("done", i)
    return i


def print_in_for(items):
    total = 0
    for x in items:
        total += x
        rt.print("x =", x, "total =", total)
    return total


def f_string_in_loop_with_break(items):
    for i, x in enumerate(items):
        if x < 0:
            print(f"negative at {i}: {x}")
            break
        print(f"{i}: {x:+d}")
    return i


@pytest.mark.parametrize("n", [0, 1, 3, -1])
def test_print_in_a_while(n, tensors):
    assert_equivalent(print_in_while, n, tensors=tensors)


@pytest.mark.parametrize("values", [[], [4], [1, -2, 3]], ids=str)
@pytest.mark.parametrize("kind", SEQ_KINDS)
def test_print_in_a_for(values, kind):
    assert_equivalent(print_in_for, seq(values, kind), tensors=False)


@pytest.mark.parametrize("values", [[4], [1, -2, 3], [3, 2]], ids=str)
@pytest.mark.parametrize("kind", ["list", "tensor"])
def test_f_string_prints_in_a_loop_with_break(values, kind):
    assert_equivalent(f_string_in_loop_with_break, seq(values, kind), tensors=False)


def test_prints_in_a_loop_over_an_unknown_length():
    assert_matches_with_unknown_shapes(print_in_for, i32(1, -2, 3))
    assert_matches_with_unknown_shapes(print_in_for, i32())
    assert_matches_with_unknown_shapes(f_string_in_loop_with_break, i32(1, -2, 3))
