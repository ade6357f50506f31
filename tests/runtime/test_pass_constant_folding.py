"""Constant folding: ops on constants run once while optimizing, with the same results."""
import warnings

import numpy as np

import runtime as rt
from pass_testing import before_after, check_same_results, expect

SCALAR = rt.TensorSpec([], rt.float32)
FOLD = ["constant_folding", "pruning"]


def test_a_chain_of_ops_on_constants_becomes_one_constant():
    def f(x):
        k = rt.constant(2.0) * 3.0
        return x + rt.sqrt(k)

    before, after = before_after(f, [SCALAR], FOLD)
    assert before == expect("""
        graph f(x: f32[]) {
          const: f32[] = const[value=2.]()
          const_1: f32[] = const[value=3.]()
          multiply: f32[] = multiply(const, const_1)
          sqrt: f32[] = sqrt(multiply)
          add: f32[] = add(x, sqrt)
          return add
        }""")
    assert after == expect("""
        graph f(x: f32[]) {
          sqrt: f32[] = const[value=2.4494898]()
          add: f32[] = add(x, sqrt)
          return add
        }""")
    check_same_results(f, rt.constant(0.25))


def test_a_constant_fed_into_a_branch_folds_inside_it():
    def f(x, flag):
        k = rt.constant(4.0)
        return rt.cond(flag, lambda: x * rt.sqrt(k), lambda: x)

    before, after = before_after(f, [SCALAR, rt.TensorSpec([], rt.bool_)], FOLD)
    assert before == expect("""
        graph f(x: f32[], flag: bool[]) {
          const: f32[] = const[value=4.]()
          cond: f32[] = cond[then_map=(0, 1), else_map=(1,)](flag, const, x)
            then_graph then(captures const: f32[], x: f32[]) {
              sqrt: f32[] = sqrt(const)
              multiply: f32[] = multiply(x, sqrt)
              return multiply
            }
            else_graph else(captures x: f32[]) {
              return x
            }
          return cond
        }""")
    assert after == expect("""
        graph f(x: f32[], flag: bool[]) {
          cond: f32[] = cond[then_map=(0,), else_map=(0,)](flag, x)
            then_graph then(captures x: f32[]) {
              sqrt: f32[] = const[value=2.]()
              multiply: f32[] = multiply(x, sqrt)
              return multiply
            }
            else_graph else(captures x: f32[]) {
              return x
            }
          return cond
        }""")
    for flag in (True, False):
        check_same_results(f, rt.constant(3.0), rt.constant(flag))


def test_an_op_that_fails_on_its_constants_fails_at_run_time_and_only_if_it_runs():
    def f(flag):
        labels, logits = rt.constant([5]), rt.constant([[1.0, 2.0]])     # label 5 of 2
        return rt.cond(flag, lambda: rt.nn.sparse_softmax_cross_entropy_with_logits(
            labels, logits), lambda: rt.constant([0.0]))

    _, after = before_after(f, [rt.TensorSpec([], rt.bool_)], FOLD)
    assert "= sparse_softmax_cross_entropy_with_logits(const" in after     # not folded
    np.testing.assert_equal(rt.function(f)(rt.constant(False)).numpy(), [0.0])
    try:
        rt.function(f)(rt.constant(True))
    except ValueError as e:
        assert "operation 'sparse_softmax_cross_entropy_with_logits'" in str(e)
    else:
        raise AssertionError("the failing op did not run")


def test_big_results_ops_that_warn_and_stateful_ops_are_not_folded():
    def f(x):
        big = rt.ones([512, 1024]) * 2.0            # 2 MB: computed when the graph runs
        overflow = rt.constant(3e38) * 10.0         # numpy warns: left to warn at run time
        noise = rt.random.uniform([], seed=1)       # stateful: new numbers every run
        return rt.reduce_sum(big) + x + overflow + noise

    _, after = before_after(f, [SCALAR], FOLD)
    assert after == expect("""
        graph f(x: f32[]) {
          fill: f32[512,1024] = fill[value=1, dtype=float32, shape=(512, 1024)]()
          const: f32[] = const[value=2.]()
          multiply: f32[512,1024] = multiply(fill, const)
          const_1: f32[] = const[value=3.e+38]()
          const_2: f32[] = const[value=10.]()
          multiply_1: f32[] = multiply(const_1, const_2)
          random_uniform: f32[] = random_uniform[minval=0, maxval=1, dtype=float32, state=RngState, shape=()]()
          reduce_sum: f32[] = reduce_sum[axis=None, keepdims=False](multiply)
          add: f32[] = add(reduce_sum, x)
          add_1: f32[] = add(add, multiply_1)
          add_2: f32[] = add(add_1, random_uniform)
          return add_2
        }""")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert rt.function(f)(rt.constant(1.0)).numpy() == np.inf
