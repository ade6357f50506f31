"""Values that stand for Python numbers in a graph (SymbolicTensor.weak): a loop counter,
a loop variable started from a Python number, arithmetic of those with Python numbers, and
what loops and branches make of them. Eagerly these are Python ints and floats: they adapt
to the dtype of the tensors they meet and print as numbers; converted code must agree."""
import contextlib
import io

import numpy as np
import pytest

import autograph as ag
import runtime as rt


def derived_counter(x, n):
    total = x
    for i in range(n):
        j = i * 2 + 1
        total = total + x * j
    return total


def counter_after_loop(x, n):
    k = 0
    for i in range(n):
        k = i
    return x * k


def counter_from_branches(x, n):
    k = 0
    i = 0
    while i < n:
        if i % 2 == 0:
            k = k + i
        else:
            k = k - 1
        i += 1
    return x * k


def python_float_loop_variable(x, n):
    step = 0.5
    t = 0.0
    for _ in range(n):
        t = t + step
    return x * t


@pytest.mark.parametrize("f", [derived_counter, counter_after_loop, counter_from_branches,
                               python_float_loop_variable])
@pytest.mark.parametrize("n", [0, 1, 4])
def test_a_python_number_in_a_tensor_loop_keeps_the_dtype_it_meets(f, n):
    expected = f(np.float32(1.5), n)
    got = ag.convert(f)(rt.constant(1.5), rt.constant(n))
    assert got.dtype == rt.float32
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)


def test_a_strong_integer_tensor_promotes_as_eagerly():
    def f(x, k):
        return x * k
    got = ag.convert(f)(rt.constant(1.5), rt.constant(np.int32(2)))
    assert got.dtype == f(rt.constant(1.5), rt.constant(np.int32(2))).dtype == rt.float32


def halving_counter(x, n):
    total = 0
    for i in range(n):
        total = total + i / 2           # a Python float: x's dtype wins
    return x * total, x * total + rt.sqrt(n)        # the root of an int32 tensor: float32


@pytest.mark.parametrize("dtype", [rt.float16, rt.float32, rt.float64])
@pytest.mark.parametrize("n", [0, 1, 4])
def test_float_functions_of_a_counter_agree_with_eager(dtype, n):
    x = rt.constant([1.5, -2.0], dtype)
    expected = halving_counter(x, rt.constant(n))
    got = ag.convert(halving_counter)(x, rt.constant(n))
    assert [t.dtype for t in got] == [t.dtype for t in expected] == [dtype, rt.float32
                                                                     if dtype != rt.float64
                                                                     else rt.float64]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-3)


def printing(n):
    acc = [0, 0.0]
    for i in range(n):
        j = i * 3
        acc[0] += j
        acc[1] = acc[1] + 0.5
        print("i:", [i, j], (i, i < 2), {"half": i / 2})
    print("acc", acc, acc[0])
    return n


def printed(fn, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn(*args)
    return out.getvalue()


@pytest.mark.parametrize("n", [0, 3])
def test_numbers_in_printed_containers_print_as_python_does(n):
    assert printed(ag.convert(printing), rt.constant(n)) == printed(printing, n)


def lists_grown_in_loop(n, x):
    xs = []
    ys = []
    for i in range(n):
        xs.append(i * 2)
        ys.append(x * i)        # a float32 tensor eagerly too (x * a Python int)
    print("xs", xs, "ys", ys)
    return n


@pytest.mark.parametrize("n", [0, 3])
def test_a_list_grown_in_a_tensor_loop_prints_as_the_python_list(n):
    expected = printed(lists_grown_in_loop, n, rt.constant(1.5))
    assert printed(ag.convert(lists_grown_in_loop), rt.constant(n), rt.constant(1.5)) == expected
