"""Memory plan: results go into dead arrays the graph made, values are freed after last use.

Never written into: inputs, constants, variables' arrays, arrays a live view still
shows, arrays a py_function saw.
"""
import tracemalloc

import numpy as np

import runtime as rt
from pass_testing import before_after, check_same_results, expect


def test_a_dead_intermediate_takes_the_next_result(on_cpu):
    def f(x):
        e = rt.exp(x)
        return e * e

    before, after = before_after(f, [rt.TensorSpec([1024], rt.float32)], ["memory"])
    assert before == expect("""
        graph f(x: f32[1024]) {
          exp: f32[1024] = exp(x)
          multiply: f32[1024] = multiply(exp, exp)
          return multiply
        }""")
    assert after == expect("""
        graph f(x: f32[1024]) {
          exp: f32[1024] = exp(x)  [free x]
          multiply: f32[1024] = multiply(exp, exp)  [free exp; reuse exp]
          return multiply
        }""")
    check_same_results(f, rt.constant(np.linspace(-2, 2, 1024, dtype=np.float32)))


def test_inputs_variables_and_arrays_seen_through_views_are_never_written(on_cpu):
    v = rt.Variable(np.ones(4, np.float32), name="v")

    def f(x):
        viewed = rt.reshape(rt.exp(x), [2, 2])      # exp's array lives on in the view
        other = rt.sin(rt.exp(x))                   # sin may write into the second exp
        return rt.reshape(viewed, [4]) + other, v.read_value() * 2.0, x * 3.0

    _, after = before_after(f, [rt.TensorSpec([4], rt.float32)], ["memory"])
    # (The read value is kept to the end: a hidden output, for the function's gradient.)
    assert after == expect("""
        graph f(x: f32[4]) {
          exp: f32[4] = exp(x)
          reshape: f32[2,2] = reshape[shape=(2, 2)](exp)  [free exp]
          exp_1: f32[4] = exp(x)
          sin: f32[4] = sin(exp_1)  [free exp_1; reuse exp_1]
          reshape_1: f32[4] = reshape[shape=(4,)](reshape)  [free reshape]
          add: f32[4] = add(reshape_1, sin)  [free reshape_1, sin; reuse sin]
          read_variable: f32[4] = read_variable[var=v:0]()
          const: f32[] = const[value=2.]()
          multiply: f32[4] = multiply(read_variable, const)  [free const]
          const_1: f32[] = const[value=3.]()
          multiply_1: f32[4] = multiply(x, const_1)  [free x, const_1]
          return (add, multiply, multiply_1)
        }""")
    x = np.array([0.0, 1.0, 2.0, 3.0], np.float32)
    results = check_same_results(f, rt.constant(x))
    np.testing.assert_array_equal(results[0], np.exp(x) + np.sin(np.exp(x)))
    np.testing.assert_array_equal(v.numpy(), np.ones(4, np.float32))


def test_arrays_a_py_function_saw_are_not_reused():
    seen = []

    def keep(t):
        seen.append(t)
        return t

    def f(x):
        e = rt.exp(x)
        rt.py_function(keep, [e], rt.float32)
        return e * 2.0                              # must not write into what keep holds

    _, after = before_after(f, [rt.TensorSpec([3], rt.float32)], ["memory"])
    assert "reuse" not in after
    for executor in ("fast", "plain"):
        seen.clear()
        with rt.config.options(executor=executor):
            rt.function(f)(rt.constant([0.0, 1.0, 2.0]))
        np.testing.assert_array_equal(seen[0].numpy(), np.exp(np.float32([0.0, 1.0, 2.0])))


def test_a_loop_growing_a_tensor_by_rows_appends_them(on_cpu):
    def f(xs):
        def body(i, rows):
            return i + 1, rt.concat([rows, rt.expand_dims(rt.sin(xs[i]), 0)], 0)
        return rt.while_loop(lambda i, rows: i < 4, body, [0, rt.zeros([0, 3])],
                             shape_invariants=[None, [None, 3]])[1]

    _, after = before_after(f, [rt.TensorSpec([4, 3], rt.float32)], ["memory"])
    assert "[append 1; free const, fill, xs, while:0]" in after
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(check_same_results(f, rt.constant(xs))[0], np.sin(xs))


def test_a_growing_tensor_read_otherwise_in_the_loop_is_not_appended(on_cpu):
    """Here the loop also hands the tensor, as it was, to another loop variable: no rows
    may be appended apart (that variable would see the tensor's first value)."""
    def f(n):
        def body(i, rows, before):
            row = rt.expand_dims(rt.cast(i, rt.float32), 0)
            return i + 1, rt.concat([rows, row], 0), rows
        return rt.while_loop(lambda i, rows, before: i < n, body,
                             [0, rt.zeros([0]), rt.zeros([0])],
                             shape_invariants=[None, [None], [None]])[1:]

    _, after = before_after(f, [rt.TensorSpec([], rt.int32)], ["memory"])
    assert "append" not in after
    rows, before = check_same_results(f, rt.constant(4))
    np.testing.assert_array_equal(before, [0.0, 1.0, 2.0])


def test_an_elementwise_chain_peaks_at_one_array_beyond_its_input(on_cpu):
    @rt.function
    def chain(x):
        a = x * 2.0
        b = a + 1.0
        c = rt.sin(b)
        d = c * c
        return d - 0.5

    x = rt.constant(np.ones(1 << 18, np.float32))          # 1 MB
    with rt.config.options(optimizations=True):
        chain(x)                                            # traced and compiled
        tracemalloc.start()
        try:
            chain(x)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 1.5 * x.numpy().nbytes                   # numpy's own chain: 2 to 5 MB
