"""Algebraic simplification: ops that cannot change their input go, bit for bit."""
import numpy as np

import runtime as rt
from pass_testing import before_after, check_same_results, expect

SIMPLIFY = ["algebraic", "pruning"]


def test_identities_transpose_and_reshape_chains():
    def f(x):
        a = x * 1.0
        b = -(-a)
        c = rt.transpose(rt.transpose(b, [1, 0, 2]), [0, 2, 1])
        d = rt.reshape(rt.reshape(c, [-1]), [2, 4, 3])
        return rt.reshape(d, [2, 4, 3])

    before, after = before_after(f, [rt.TensorSpec([4, 2, 3], rt.float32)], SIMPLIFY)
    assert before == expect("""
        graph f(x: f32[4,2,3]) {
          const: f32[] = const[value=1.]()
          multiply: f32[4,2,3] = multiply(x, const)
          negative: f32[4,2,3] = negative(multiply)
          negative_1: f32[4,2,3] = negative(negative)
          transpose: f32[2,4,3] = transpose[perm=(1, 0, 2)](negative_1)
          transpose_1: f32[2,3,4] = transpose[perm=(0, 2, 1)](transpose)
          reshape: f32[24] = reshape[shape=(-1,)](transpose_1)
          reshape_1: f32[2,4,3] = reshape[shape=(2, 4, 3)](reshape)
          reshape_2: f32[2,4,3] = reshape[shape=(2, 4, 3)](reshape_1)
          return reshape_2
        }""")
    assert after == expect("""
        graph f(x: f32[4,2,3]) {
          transpose_1: f32[2,3,4] = transpose[perm=(1, 2, 0)](x)
          reshape_1: f32[2,4,3] = reshape[shape=(2, 4, 3)](transpose_1)
          return reshape_1
        }""")
    x = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    x[0, 0, :] = [-0.0, np.nan, -np.inf]
    check_same_results(f, rt.constant(x))


def test_only_rewrites_that_keep_every_bit_shape_and_dtype():
    def f(x, i):
        return (x + 0.0,                 # kept: -0.0 + 0.0 is +0.0
                x + -0.0, x - 0.0,       # gone
                i + 0, i * 1,            # gone
                x * rt.ones([3, 4]),     # kept: broadcasting changes the shape
                rt.identity(x) / 1.0)    # gone

    before, after = before_after(f, [rt.TensorSpec([4], rt.float32),
                                     rt.TensorSpec([4], rt.int32)], SIMPLIFY)
    assert before == expect("""
        graph f(x: f32[4], i: i32[4]) {
          const: f32[] = const[value=0.]()
          add: f32[4] = add(x, const)
          const_1: f32[] = const[value=-0.]()
          add_1: f32[4] = add(x, const_1)
          const_2: f32[] = const[value=0.]()
          subtract: f32[4] = subtract(x, const_2)
          const_3: i32[] = const[value=0]()
          add_2: i32[4] = add(i, const_3)
          const_4: i32[] = const[value=1]()
          multiply: i32[4] = multiply(i, const_4)
          fill: f32[3,4] = fill[value=1, dtype=float32, shape=(3, 4)]()
          multiply_1: f32[3,4] = multiply(x, fill)
          identity: f32[4] = identity(x)
          const_5: f32[] = const[value=1.]()
          divide: f32[4] = divide(identity, const_5)
          return (add, add_1, subtract, add_2, multiply, multiply_1, divide)
        }""")
    assert after == expect("""
        graph f(x: f32[4], i: i32[4]) {
          const: f32[] = const[value=0.]()
          add: f32[4] = add(x, const)
          fill: f32[3,4] = fill[value=1, dtype=float32, shape=(3, 4)]()
          multiply_1: f32[3,4] = multiply(x, fill)
          return (add, x, x, i, i, multiply_1, x)
        }""")
    x = np.array([-0.0, 0.0, np.nan, 2.5], np.float32)
    results = check_same_results(f, rt.constant(x), rt.constant([1, -2, 3, 4]))
    assert not np.signbit(results[0][0]) and np.signbit(results[1][0])


def test_inside_branches():
    def f(x, flag):
        return rt.cond(flag, lambda: rt.transpose(rt.transpose(x)) * 1.0, lambda: -(-x))

    _, after = before_after(f, [rt.TensorSpec([2, 3], rt.float32),
                                rt.TensorSpec([], rt.bool_)], SIMPLIFY)
    assert after == expect("""
        graph f(x: f32[2,3], flag: bool[]) {
          cond: f32[2,3] = cond[then_map=(0,), else_map=(0,)](flag, x)
            then_graph then(captures x: f32[2,3]) {
              return x
            }
            else_graph else(captures x: f32[2,3]) {
              return x
            }
          return cond
        }""")
    for flag in (True, False):
        check_same_results(f, rt.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
                           rt.constant(flag))
