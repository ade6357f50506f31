"""Equivalence of print (text and order), assert, and the builtins the compiler maps
(len abs int float min max range enumerate zip isinstance) on tensors and Python values."""
import numpy as np
import pytest
from equivalence import assert_equivalent, cases, static

import runtime as rt


# -- print -------------------------------------------------------------------------------

def print_values(x):
    print("x is", x, 2, 0.5, True, None, "end")
    print(x, x + 1, sep=", ", end=";\n")
    print()
    print("no newline", end="")
    print(" then more", x * 2)
    return x


def print_in_branches(x):
    print("before")
    if x > 0:
        print("positive", x)
    elif x < 0:
        print("negative", -x)
    else:
        print("zero")
    print("after", x)
    return x


def print_in_loop(n):
    i = 0
    while i < n:
        print("iteration", i, "of", n)
        if i % 2 == 0:
            print("  even", i)
        i += 1
    print("done")
    return i


def print_in_for_with_break(n):
    for i in range(n):
        if i > 2:
            print("break at", i)
            break
        print("i =", i, end=" | ")
    print("loop over")
    return n


def print_structures(x):
    print([x, x + 1], (x,), {"k": x})
    print("a", "b", sep="")
    return x


def print_vectors(v):
    print("vector", v, v * 2)
    for row in v:
        print("element", row)
    return v


@pytest.mark.parametrize("f, tensors", cases(print_values, print_in_branches, print_in_loop,
                                             print_in_for_with_break, print_structures))
@pytest.mark.parametrize("x", [-2, 0, 4])
def test_print(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


def test_print_vectors():
    assert_equivalent(print_vectors, np.array([1, 2, 3], np.int32))
    assert_equivalent(print_vectors, np.array([0.5, -1.25]))


def print_formatted_python_values(x, k):
    # Formatting happens in Python (eagerly or while tracing): only Python values in it.
    print(f"k={k}!", f"{k:>4}|", "{}-{}".format(k, k + 1), "%d%%" % k, x)
    return x


@pytest.mark.parametrize("f, tensors", cases(
    print_formatted_python_values))
def test_print_formatted_python_values(f, tensors):
    assert_equivalent(f, 3, static(7), tensors=tensors)


def print_in_helper_and_loop(n):
    i = 0
    while i < n:
        report(i)
        i += 1
    return i


def report(i):
    if i == 1:
        print("one")
    else:
        print("value", i)


@pytest.mark.parametrize("n", [0, 3])
def test_print_in_helper_called_in_loop(n, tensors):
    assert_equivalent(print_in_helper_and_loop, n, tensors=tensors)


# -- assert ------------------------------------------------------------------------------

def asserts(x):
    assert x > -100
    assert x < 100, "x is too big"
    assert x * 0 == 0, ("message", x)
    print("checked", x)
    return x + 1


def asserts_in_loop(n):
    i = 0
    while i < n:
        assert i < 10, "i stays below 10"
        i += 1
    return i


@pytest.mark.parametrize("f, tensors", cases(asserts, asserts_in_loop))
@pytest.mark.parametrize("x", [0, 5])
def test_passing_asserts(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


@pytest.mark.parametrize("f, x", [(asserts, 150), (asserts, -150), (asserts_in_loop, 12)],
                         ids=["message", "no-message", "in-loop"])
def test_failing_asserts(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors, raises=AssertionError)


def print_then_fail(x):
    print("before the assert", x)
    assert x < 0, "x must be negative"
    print("not reached")
    return x


def test_failing_assert_after_print():
    # Tensor arguments only: with a Python argument the assert fails while tracing,
    # before the graph (and its print) ever runs, as in any staged program.
    assert_equivalent(print_then_fail, 3, raises=AssertionError)


# -- builtins ----------------------------------------------------------------------------

def len_of_values(v):
    return len(v), len([1, 2, 3]), len("abcd")


def abs_int_float(x):
    return abs(x), abs(-x), int(x), float(x), int(x / 2), float(x) / 4


def min_max(x, y):
    return min(x, y), max(x, y), min(x, 3), max(x, y, 0), min(7, 2), max([1, 5, 2])


def range_builtin(n):
    total = 0
    for i in range(1, n):
        total += i
    return total, len(range(4)), list(range(3))


def isinstance_checks(x):
    if isinstance(x, rt.Tensor):
        kind = 1
    elif isinstance(x, int):
        kind = 2
    else:
        kind = 3
    return kind, isinstance(x, (int, rt.Tensor)), isinstance("s", str)


@pytest.mark.parametrize("f, tensors", cases(abs_int_float, range_builtin, isinstance_checks))
@pytest.mark.parametrize("x", [-7, 4])
def test_builtins_on_numbers(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


@pytest.mark.parametrize("x, y", [(1, 2), (5, -3)])
def test_min_max(x, y, tensors):
    assert_equivalent(min_max, x, y, tensors=tensors)


def test_len():
    assert_equivalent(len_of_values, np.array([4, 5, 6, 7], np.int32))
    assert_equivalent(len_of_values, static([4, 5, 6, 7]))


def reductions_of_vectors(v):
    return min(v), max(v), sum(v), len(v)


def test_builtins_reduce_vectors():
    assert_equivalent(reductions_of_vectors, np.array([3, -1, 8, 2], np.int32))
    assert_equivalent(reductions_of_vectors, np.array([0.5, 4.0]))


def enumerate_and_zip_python(n):
    s = 0
    for i, (a, b) in enumerate(zip([1, 2, 3], [10, 20, 30])):
        s += i * a * b + n
    return s


def int_float_of_float(x):
    return int(x), float(x), abs(x)


@pytest.mark.parametrize("x", [2.75, -2.75])
def test_int_float_of_float(x, tensors):
    assert_equivalent(int_float_of_float, x, tensors=tensors)


def test_enumerate_and_zip_of_python_lists(tensors):
    assert_equivalent(enumerate_and_zip_python, 2, tensors=tensors)
