"""Equivalence of converted loops: while and for with tensor and Python bounds, break,
continue and return at several depths, else clauses, zero-trip loops, loop counters."""
import numpy as np
import pytest
from equivalence import assert_equivalent, cases, static

import runtime as rt


# -- while with tensor conditions ----------------------------------------------------------

def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


def fibonacci(n):
    a, b = 0, 1
    i = 0
    while i < n:
        a, b = b, a + b
        i += 1
    return a


def sum_of_squares_below(limit):
    i = 0
    total = 0
    while i * i < limit:
        total += i * i
        i += 1
    return total, i


@pytest.mark.parametrize("n", [1, 6, 27])
def test_collatz(n, tensors):
    assert_equivalent(collatz, n, tensors=tensors)


@pytest.mark.parametrize("a, b", [(12, 18), (17, 5), (7, 0), (0, 9)])
def test_gcd(a, b, tensors):
    assert_equivalent(gcd, a, b, tensors=tensors)


@pytest.mark.parametrize("n", [0, 1, 2, 10])
def test_fibonacci_and_squares(n, tensors):
    assert_equivalent(fibonacci, n, tensors=tensors)
    assert_equivalent(sum_of_squares_below, n * 10, tensors=tensors)


def float_loop(x):
    s = 0.0
    while x > 0.5:
        x = x / 2.0
        s = s + x
    return s, x


@pytest.mark.parametrize("x", [0.25, 3.0, 100.0])
def test_float_while(x, tensors):
    assert_equivalent(float_loop, x, tensors=tensors)


# -- break and continue --------------------------------------------------------------------

def while_break(n):
    i = 0
    s = 0
    while i < n:
        if s > 20:
            break
        s += i
        i += 1
    return i, s


def while_continue(n):
    i = 0
    s = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        s += i
    return s


def while_break_and_continue(n):
    i = 0
    s = 0
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        if i > 11:
            break
        s += i
    return i, s


def nested_while_break_inner_and_outer(n):
    i = 0
    found = -1
    while i < n:
        j = 0
        while j < n:
            if i * j == 12:
                found = i * 100 + j
                break
            j += 1
        if found >= 0:
            break
        i += 1
    return i, found


def nested_continue_at_two_depths(n):
    s = 0
    i = 0
    while i < n:
        i += 1
        if i == 2:
            continue
        j = 0
        while j < i:
            j += 1
            if j % 2 == 0:
                continue
            s += j
    return s


def break_deep_in_ifs(n):
    i = 0
    while i < n:
        if i > 2:
            if i % 2 == 1:
                if i > 4:
                    break
        i += 1
    return i


def while_true_with_break(n):
    i = 0
    while True:
        i += 1
        if i >= n:
            break
    return i


def while_true_with_return(n):
    total = 0
    while True:
        total += n
        if total > 20:
            return total
        if n <= 0:
            return -1


@pytest.mark.parametrize("f, tensors", cases(while_true_with_break, while_true_with_return))
@pytest.mark.parametrize("n", [-1, 1, 4])
def test_while_true(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


def continue_over_tensor_rows(m):
    total = 0.0
    for row in m:
        if rt.reduce_sum(row) < 0:
            continue
        total += rt.reduce_max(row)
    return total


def test_continue_over_tensor_rows():
    assert_equivalent(continue_over_tensor_rows,
                      np.array([[1.0, 2.0], [-5.0, 1.0], [3.0, 0.5]], np.float32))


@pytest.mark.parametrize("f, tensors", cases(
    while_break, while_continue, while_break_and_continue,
    nested_while_break_inner_and_outer,
    nested_continue_at_two_depths,
    break_deep_in_ifs))
@pytest.mark.parametrize("n", [0, 3, 8, 30])
def test_while_break_and_continue(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


def for_break_continue(n):
    s = 0
    for i in range(n):
        if i % 2 == 0:
            continue
        if i > 7:
            break
        s += i
    return s


def for_nested_break(n):
    count = 0
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            count += 1
    return count


@pytest.mark.parametrize("f, tensors", cases(
    for_break_continue, for_nested_break))
@pytest.mark.parametrize("n", [0, 4, 12])
def test_for_break_continue(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


# -- else clauses --------------------------------------------------------------------------

def while_else(n, stop):
    i = 0
    while i < n:
        if i == stop:
            break
        i += 1
    else:
        i = i + 1000
    return i


def while_else_without_break(n):
    i = 0
    while i < n:
        i += 1
    else:
        i = -i
    return i


def for_else(n, stop):
    r = 0
    for i in range(n):
        if i == stop:
            r = i
            break
    else:
        r = -1
    return r


def for_else_without_break(n):
    s = 0
    for i in range(n):
        s += i
    else:
        s = s * 10
    return s


def nested_loops_with_else(n):
    # The inner else runs whenever the inner loop did not break.
    hits = 0
    for i in range(n):
        j = 0
        while j < 3:
            if i == j:
                break
            j += 1
        else:
            hits += 1
    return hits


@pytest.mark.parametrize("f, tensors", cases(while_else, for_else))
@pytest.mark.parametrize("n, stop", [(0, 0), (5, 2), (5, 7)])
def test_else_clause_and_break(f, n, stop, tensors):
    assert_equivalent(f, n, stop, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(
    while_else_without_break, for_else_without_break,
    nested_loops_with_else))
@pytest.mark.parametrize("n", [0, 5])
def test_else_clause_without_break(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


# -- for over ranges -----------------------------------------------------------------------

def range_one_bound(n):
    s = 0
    for i in range(n):
        s = s * 2 + i
    return s


def range_start_stop_step(a, b, step):
    s = 0
    count = 0
    for i in range(a, b, step):
        s += i
        count += 1
    return s, count


def tensor_bound_python_step(n):
    out = 0
    for i in range(n, -1, -2):
        out = out * 10 + i
    return out


@pytest.mark.parametrize("f, tensors", cases(range_one_bound, tensor_bound_python_step))
@pytest.mark.parametrize("n", [0, 1, 5])
def test_range_one_bound(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


@pytest.mark.parametrize("a, b, step", [(0, 10, 3), (2, 11, 2), (10, 0, -3), (10, 0, -1),
                                        (5, 5, 1), (5, 0, 1), (0, 5, -1), (-3, 4, 2),
                                        (4, -4, -3)])
def test_range_with_steps(a, b, step, tensors):
    assert_equivalent(range_start_stop_step, a, b, step, tensors=tensors)


def for_over_tensor_rows(m):
    total = 0
    for row in m:
        total += rt.reduce_sum(row)
    return total


def for_over_vector_elements(v):
    best = v[0]
    for x in v:
        if x > best:
            best = x
    return best


def enumerate_tensor(v):
    s = 0
    for i, x in enumerate(v):
        s += i * x
    return s


def enumerate_with_start(v):
    s = 0
    for i, x in enumerate(v, 10):
        s += i * x
    return s


def zip_tensors(u, v):
    s = 0
    for a, b in zip(u, v):
        s += a * b
    return s


def int32(*values):
    return np.array(values, np.int32)


@pytest.mark.parametrize("f, args", [
    (for_over_tensor_rows, [np.arange(12, dtype=np.int32).reshape(4, 3)]),
    (for_over_tensor_rows, [np.arange(6.0).reshape(2, 3)]),
    (for_over_vector_elements, [int32(3, 9, 2, 11, 5)]),
    (enumerate_tensor, [int32(5, 6, 7)]),
    (enumerate_with_start, [int32(5, 6, 7)]),
    (zip_tensors, [int32(1, 2, 3), int32(4, 5, 6)]),
    (zip_tensors, [int32(1, 2, 3, 4), int32(4, 5)]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_for_over_tensors(f, args):
    assert_equivalent(f, *args)


def accumulate(v):
    s = 0
    for x in v:
        s += x
    return s


def accumulate_float(v):
    s = 0.0
    for x in v:
        s += x
    return s


@pytest.mark.parametrize("f, v", [
    (accumulate, int32(1, 2, 3)),
    (accumulate_float, np.array([0.5, 2.0], np.float32)),
    (accumulate, np.array([1, 2, 3], np.int64)),
    (accumulate_float, np.array([0.5, 2.0], np.float64)),
], ids=["int32", "float32", "int64", "float64"])
def test_python_number_accumulates_tensor_elements(f, v):
    assert_equivalent(f, v)


def for_over_python_list(x):
    for k in [1, 2, 3]:
        x = x * k
    return x


def for_over_python_tuple_of_tensors(x, y):
    s = 0
    for t in (x, y, x + y):
        s += t
    return s


def for_over_dict(x):
    d = {"a": 1, "b": 2, "c": 3}
    s = x
    for key in d:
        s = s * 10 + d[key]
    for key, value in d.items():
        if key != "b":
            s = s + value
    return s


def for_over_python_list_with_tensor_break(x):
    s = 0
    for k in [1, 2, 3, 4, 5]:
        if s + k > x:
            break
        s += k
    return s


def for_over_python_list_with_tensor_return(x):
    for k in [5, 10, 50]:
        if x < k:
            return k
    return -1


def for_else_over_python_list_with_tensor_break(x):
    found = 0
    for k in (3, 8, 20):
        if x == k:
            found = k
            break
    else:
        found = -1
    return found


def for_over_python_tuple_of_tensors_sum(x):
    return for_over_python_tuple_of_tensors(x, 3)


@pytest.mark.parametrize("f, tensors", cases(
    for_over_python_list, for_over_python_tuple_of_tensors_sum,
    for_over_dict,
    for_over_python_list_with_tensor_break, for_over_python_list_with_tensor_return,
    for_else_over_python_list_with_tensor_break))
@pytest.mark.parametrize("x", [2, 7, 8, 100])
def test_for_over_python_iterables(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


# -- nested loops and returns --------------------------------------------------------------

def nested_for_while(n):
    s = 0
    for i in range(n):
        j = i
        while j > 0:
            s += j
            j -= 2
    return s


def return_in_while(n):
    i = 0
    while i < 100:
        if i * i >= n:
            return i
        i += 1
    return -1


def return_in_nested_loops(n, target):
    for i in range(n):
        for j in range(n):
            if i * j == target:
                return i, j
    return -1, -1


def return_three_deep(n):
    i = 0
    while i < n:
        for j in range(i):
            k = 0
            while k < j:
                if i + j + k == 7:
                    return i * 100 + j * 10 + k
                k += 1
        i += 1
    return 0


def return_in_while_with_else(n):
    i = 0
    while i < n:
        if i == 4:
            return 100
        i += 1
    else:
        i = -i
    return i


def return_when_python_counter_hits(n):
    i = 0
    while i < n:
        if i == 3:
            return 100
        i += 1
    return i


def return_after_loop_in_branch(n):
    s = 0
    for i in range(n):
        s += i
    if s > 10:
        return s
    return -s


def return_in_nested_loops_6(n):
    return return_in_nested_loops(n, 6)


def return_in_nested_loops_7(n):
    return return_in_nested_loops(n, 7)


@pytest.mark.parametrize("f, tensors", cases(
    nested_for_while, return_in_while,
    return_in_nested_loops_6,
    return_in_nested_loops_7,
    return_three_deep,
    return_in_while_with_else,
    return_after_loop_in_branch,
    return_when_python_counter_hits))
@pytest.mark.parametrize("n", [0, 3, 6, 11])
def test_nested_loops_and_returns(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


# -- zero-trip loops, first assignment in the loop, promoted counters ---------------------

def zero_trip_while(n):
    x = 7
    while n > 100:
        x = x + 1
        n = n - 1
    return x


def zero_trip_for(n):
    x = 7
    for i in range(n, 0):
        x = x + i
    return x


@pytest.mark.parametrize("f, tensors", cases(zero_trip_while, zero_trip_for))
@pytest.mark.parametrize("n", [0, 5])
def test_loops_that_run_zero_times(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


def first_assigned_in_while(n):
    i = 0
    while i < n:
        last = i * 10
        i += 1
    return last


def first_assigned_in_for(n):
    for i in range(n):
        square = i * i
    return square, i


@pytest.mark.parametrize("f, tensors", cases(first_assigned_in_while, first_assigned_in_for))
@pytest.mark.parametrize("n", [1, 4])
def test_variable_first_assigned_in_loop(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(first_assigned_in_while, first_assigned_in_for))
def test_variable_first_assigned_in_loop_that_runs_zero_times(f, tensors):
    assert_equivalent(f, 0, tensors=tensors, raises=UnboundLocalError)


def python_counter_promoted(x):
    count = 0           # a Python int that becomes a loop variable
    total = 0.5
    while x > 1:
        x = x // 2
        count += 1
        total = total * 2
    return count, total


def python_counter_in_tensor_for(n):
    c = 0
    for _ in range(n):
        c = c + 1
    print("count", c)
    return c


@pytest.mark.parametrize("f, tensors", cases(python_counter_promoted,
                                             python_counter_in_tensor_for))
@pytest.mark.parametrize("x", [1, 2, 100])
def test_python_counters_promoted_to_tensors(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


def python_loop_over_tensor_values(x):
    # A Python loop (static bound) whose body uses tensors.
    for _ in range(3):
        if x % 2 == 0:
            x = x // 2
        else:
            x = x + 1
    return x


@pytest.mark.parametrize("x", [5, 8])
def test_python_loop_over_tensor_values(x, tensors):
    assert_equivalent(python_loop_over_tensor_values, x, tensors=tensors)


def loop_with_static_arg(x, n):
    for i in range(n):
        x = x + i
    return x


@pytest.mark.parametrize("n", [0, 3])
def test_python_range_bound_with_tensor_values(n):
    assert_equivalent(loop_with_static_arg, 10, static(n))


def loop_over_vector_state(v, n):
    i = 0
    while i < n:
        v = v * 2 + 1
        i += 1
    return v


def test_loop_with_vector_state():
    assert_equivalent(loop_over_vector_state, np.array([1.0, 2.0]), 3)
