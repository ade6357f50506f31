"""What converted functions say about how they trace: retracing (which argument changed,
and how) and Python loops unrolled into very large graphs (TF AutoGraph warns too)."""
import inspect
import os
import warnings

import numpy as np
import pytest

import autograph as ag
import runtime as rt
from runtime import trace_warnings


def messages(record):
    return [str(w.message) for w in record if issubclass(w.category, rt.TracingWarning)]


def line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


# -- retracing -------------------------------------------------------------------------------

@ag.convert
def collatz_steps(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def test_a_python_int_retraces_a_converted_function_and_it_says_so():
    with pytest.warns(rt.TracingWarning) as record:
        results = [int(collatz_steps(n)) for n in range(1, 6)]
    assert results == [0, 1, 7, 2, 5]
    [message] = messages(record)
    assert "of 'collatz_steps' traced it" in message
    assert "argument 'n': Python int 4 -> 5: pass a tensor to trace once" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error", rt.TracingWarning)
        for n in (6, 7, 27):
            collatz_steps(rt.constant(n))       # a tensor: one trace for every value


def test_converted_reduce_retracing_makes_one_graph_for_every_length():
    @ag.convert(reduce_retracing=True)
    def clipped_total(x, limit):
        total = 0.0
        for v in x:
            if v > limit:
                v = limit
            total += v
        return total

    with warnings.catch_warnings():
        warnings.simplefilter("error", rt.TracingWarning)
        got = [float(clipped_total(rt.constant(np.arange(n, dtype=np.float32)), 2.0))
               for n in range(1, 9)]
    assert got == [sum(min(v, 2.0) for v in range(n)) for n in range(1, 9)]
    assert clipped_total.experimental_get_tracing_count() == 2


# -- Python loops unrolled while tracing -------------------------------------------------------

def polynomial_steps(x):
    for _ in range(3000):                    # a Python bound: 3,000 copies of the body
        x = x * 0.5 + 1.0
    return x


def test_a_python_loop_unrolled_into_a_large_graph_warns_once_naming_its_line():
    converted = ag.convert(polynomial_steps)
    with pytest.warns(rt.TracingWarning) as record:
        result = converted(rt.constant(0.0))
    assert float(result) == pytest.approx(2.0)
    [message] = messages(record)
    where = f"{os.path.basename(__file__)}:{line_of(polynomial_steps, 'for _ in range')}"
    assert message.startswith(f"loop at {where} ran 3,000 times while tracing and added ")
    assert "operations: make its bound a tensor to get one graph loop" in message
    ops = int(message.split("added ")[1].split(" operations")[0].replace(",", ""))
    assert ops >= trace_warnings.UNROLLED_LOOP_OPS
    assert record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error", rt.TracingWarning)
        converted(rt.constant([0.0, 1.0]))          # a new trace: the loop warned already


def doubling_while(x, n):
    i = 0
    while i < n:
        x = x * 2.0 - 1.0
        i += 1
    return x


def test_a_python_while_loop_unrolled_warns_too():
    with pytest.warns(rt.TracingWarning) as record:
        ag.convert(doubling_while)(rt.constant(1.0), 2500)
    [message] = messages(record)
    assert f":{line_of(doubling_while, 'while i < n')} ran 2,500 times while tracing" in message


def test_a_tensor_bound_or_a_short_python_loop_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", rt.TracingWarning)
        assert float(ag.convert(doubling_while)(rt.constant(1.0), rt.constant(2500))) == 1.0
        assert float(ag.convert(doubling_while)(rt.constant(3.0), 10)) == 2.0 ** 11 + 1
        assert float(doubling_while(rt.constant(1.0), 2500)) == 1.0     # eager: no graph
