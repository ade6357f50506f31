"""Retracing, as a TensorFlow user meets it: warnings that say which argument changed and
how, `reduce_retracing=True`, and the bounded trace cache (rt.config.set_trace_cache_size)."""
import logging
import warnings

import numpy as np
import pytest

import runtime as rt


def tracing_warnings(record):
    return [str(w.message) for w in record if issubclass(w.category, rt.TracingWarning)]


# -- retrace warnings -------------------------------------------------------------------------

def test_a_python_int_argument_retracing_every_call_warns_naming_it():
    @rt.function
    def scale(x, n):
        return x * n

    with pytest.warns(rt.TracingWarning) as record:
        for n in range(5):
            scale(rt.constant(2.0), n)
    [message] = tracing_warnings(record)
    assert "5 of the last 5 calls of 'scale' traced it" in message
    assert "argument 'n': Python int 3 -> 4: pass a tensor to trace once" in message
    assert record[0].filename == __file__           # reported at the user's call


def test_changing_shapes_warn_with_the_two_ways_out():
    @rt.function
    def total(x):
        return rt.reduce_sum(x)

    with pytest.warns(rt.TracingWarning) as record:
        for n in range(5):
            total(rt.zeros([n]))
    [message] = tracing_warnings(record)
    assert ("argument 'x': shape (3,) -> (4,): use input_signature with None dimensions or "
            "reduce_retracing=True") in message


def test_a_changed_dtype_and_a_nested_argument_are_named():
    @rt.function
    def first(pair):
        return pair[0] + 1

    with pytest.warns(rt.TracingWarning) as record:
        for dtype in (rt.int32, rt.int64, rt.float32, rt.float64, rt.int8):
            first((rt.constant(1, dtype), 2))
    [message] = tracing_warnings(record)
    assert "argument 'pair[0]': dtype float64 -> int8" in message


def test_calls_that_hit_the_cache_never_warn_and_rare_retraces_do_not_either():
    @rt.function
    def double(x):
        return x * 2

    with warnings.catch_warnings():
        warnings.simplefilter("error", rt.TracingWarning)
        for _ in range(20):
            double(rt.constant([1.0, 2.0]))
        for n in range(1, 6):                   # a new shape every 11th call: fine
            double(rt.zeros([n]))
            for _ in range(10):
                double(rt.zeros([n]))


def test_a_function_warns_at_most_twice():
    @rt.function
    def plus(x, n):
        return x + n

    with pytest.warns(rt.TracingWarning) as record:
        for n in range(40):
            plus(rt.constant(1), n)
    assert len(tracing_warnings(record)) == 2


# -- reduce_retracing -------------------------------------------------------------------------

def test_reduce_retracing_traces_the_changed_dimensions_unknown_once():
    @rt.function(reduce_retracing=True)
    def row_sums(x):
        return rt.reduce_sum(x, axis=1)

    for n in range(1, 7):
        np.testing.assert_array_equal(row_sums(rt.ones([n, 3])).numpy(), [3.0] * n)
    assert row_sums.experimental_get_tracing_count() == 2
    shapes = sorted(str(c.graph.inputs[0].shape) for c in row_sums.concrete_functions)
    assert shapes == sorted([str(rt.TensorShape([1, 3])), str(rt.TensorShape([None, 3]))])


def test_reduce_retracing_still_traces_each_python_value_and_rank():
    @rt.function(reduce_retracing=True)
    def scaled(x, k):
        return x * k

    for n in (2, 3, 4):
        scaled(rt.ones([n]), 2)
    scaled(rt.ones([5]), 3)                 # a new Python value: its own (exact) trace
    scaled(rt.ones([2, 2]), 2)              # a new rank: its own trace
    assert float(rt.reduce_sum(scaled(rt.ones([7]), 3))) == 21.0
    assert scaled.experimental_get_tracing_count() == 5


def test_reduce_retracing_with_a_dtype_change_traces_that_dtype():
    @rt.function(reduce_retracing=True)
    def neg(x):
        return -x

    neg(rt.zeros([2]))
    neg(rt.zeros([3]))
    assert neg(rt.zeros([4], rt.int32)).dtype == rt.int32
    assert neg.experimental_get_tracing_count() == 3


# -- the trace cache -------------------------------------------------------------------------

@pytest.fixture
def cache_of_two():
    before = rt.config.get_trace_cache_size()
    rt.config.set_trace_cache_size(2)
    yield
    rt.config.set_trace_cache_size(before)


def test_the_least_recently_used_trace_is_dropped_and_logged(cache_of_two, caplog):
    traced = []

    @rt.function
    def offset(x, k):
        traced.append(k)
        return x + k

    x = rt.constant(1)
    with caplog.at_level(logging.WARNING, logger="runtime.function"):
        offset(x, 1)
        offset(x, 2)
        offset(x, 1)                        # 1 is now the most recently used
        offset(x, 3)                        # drops 2
    assert traced == [1, 2, 3] and len(offset.concrete_functions) == 2
    assert "rt.function 'offset': its trace cache is full (2 traces" in caplog.text
    assert "Python int 2" in caplog.text
    offset(x, 1)                            # still kept
    offset(x, 2)                            # traced again
    assert traced == [1, 2, 3, 2]
    assert int(offset(x, 2)) == 3


def test_the_cache_size_setting_is_checked():
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="trace cache size"):
            rt.config.set_trace_cache_size(bad)
    assert rt.config.get_trace_cache_size() == 128


def test_no_bound_keeps_every_trace():
    with rt.config.options(), warnings.catch_warnings():
        rt.config.set_trace_cache_size(None)
        warnings.simplefilter("ignore", rt.TracingWarning)

        @rt.function
        def f(x, k):
            return x * k

        for k in range(200):
            f(rt.constant(1), k)
        assert len(f.concrete_functions) == 200
    assert rt.config.get_trace_cache_size() == 128
