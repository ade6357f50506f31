"""Common-subexpression elimination: identical pure ops are computed once."""
import numpy as np

import runtime as rt
from pass_testing import before_after, check_same_results, expect

SCALAR = rt.TensorSpec([], rt.float32)
CSE = ["cse", "pruning"]


def test_identical_ops_and_equal_constants_merge_but_not_zero_and_minus_zero():
    def f(x):
        return rt.exp(x) * rt.exp(x) + rt.constant(0.0) + rt.constant(-0.0) + (x + 0.0)

    before, after = before_after(f, [SCALAR], CSE)
    assert before == expect("""
        graph f(x: f32[]) {
          exp: f32[] = exp(x)
          exp_1: f32[] = exp(x)
          multiply: f32[] = multiply(exp, exp_1)
          const: f32[] = const[value=0.]()
          add: f32[] = add(multiply, const)
          const_1: f32[] = const[value=-0.]()
          add_1: f32[] = add(add, const_1)
          const_2: f32[] = const[value=0.]()
          add_2: f32[] = add(x, const_2)
          add_3: f32[] = add(add_1, add_2)
          return add_3
        }""")
    assert after == expect("""
        graph f(x: f32[]) {
          exp: f32[] = exp(x)
          multiply: f32[] = multiply(exp, exp)
          const: f32[] = const[value=0.]()
          add: f32[] = add(multiply, const)
          const_1: f32[] = const[value=-0.]()
          add_1: f32[] = add(add, const_1)
          add_2: f32[] = add(x, const)
          add_3: f32[] = add(add_1, add_2)
          return add_3
        }""")
    check_same_results(f, rt.constant(-0.0))


def test_reads_around_a_write_and_random_ops_stay_apart():
    v = rt.Variable(1.0, name="v")

    def f(x):
        before_write = v.read_value()
        v.assign_add(x)
        after_write = v.read_value()
        return (before_write * 2.0, after_write * 2.0,
                rt.random.uniform([], seed=3), rt.random.uniform([], seed=3))

    _, after = before_after(f, [SCALAR], CSE)
    assert after == expect("""
        graph f(x: f32[]) {
          read_variable: f32[] = read_variable[var=v:0]()
          assign_add: f32[] = assign_add[var=v:0](x) after read_variable
          read_variable_1: f32[] = read_variable[var=v:0]() after assign_add
          const: f32[] = const[value=2.]()
          multiply: f32[] = multiply(read_variable, const)
          multiply_1: f32[] = multiply(read_variable_1, const)
          random_uniform: f32[] = random_uniform[minval=0, maxval=1, dtype=float32, state=RngState, shape=()]() after assign_add
          random_uniform_1: f32[] = random_uniform[minval=0, maxval=1, dtype=float32, state=RngState, shape=()]() after random_uniform
          return (multiply, multiply_1, random_uniform, random_uniform_1)
        }""")
    first, second, _, _ = rt.function(f)(rt.constant(1.5))
    assert (first.numpy(), second.numpy()) == (2.0, 5.0)


def test_inside_a_loop_body():
    def f(n, x):
        return rt.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, rt.sin(y) + rt.sin(y)),
                             [0, x])

    before, after = before_after(f, [rt.TensorSpec([], rt.int32), SCALAR], CSE)
    assert "sin_1: f32[] = sin(arg1)" in before
    assert after == expect("""
        graph f(n: i32[], x: f32[]) {
          const: i32[] = const[value=0]()
          while:0: i32[], while:1: f32[] = while[n_vars=2, cond_map=(0,), body_map=(), maximum_iterations=None](const, x, n)
            cond_graph while_cond(arg0: i32[], arg1: f32[]; captures n: i32[]) {
              less: bool[] = less(arg0, n)
              return less
            }
            body_graph while_body(arg0: i32[], arg1: f32[]) {
              const: i32[] = const[value=1]()
              add: i32[] = add(arg0, const)
              sin: f32[] = sin(arg1)
              add_1: f32[] = add(sin, sin)
              return (add, add_1)
            }
          return (while:0, while:1)
        }""")
    check_same_results(f, rt.constant(3), rt.constant(0.5))
    np.testing.assert_allclose(rt.function(f)(rt.constant(1), rt.constant(0.5))[1].numpy(),
                               2 * np.sin(np.float32(0.5)))
