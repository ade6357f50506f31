"""Fusion: chains of elementwise ops become one `fused` op; results and errors unchanged."""
import os

import numpy as np
import pytest

import runtime as rt
from runtime import passes
from pass_testing import before_after, check_same_results, expect

THIS_FILE = os.path.basename(__file__)


def test_a_chain_becomes_one_op_owning_its_members():
    def f(x, b):
        return rt.tanh(x * x + b)

    before, after = before_after(f, [rt.TensorSpec([1024], rt.float32),
                                     rt.TensorSpec([], rt.float32)], ["fusion"])
    assert before == expect("""
        graph f(x: f32[1024], b: f32[]) {
          multiply: f32[1024] = multiply(x, x)
          add: f32[1024] = add(multiply, b)
          tanh: f32[1024] = tanh(add)
          return tanh
        }""")
    assert after == expect("""
        graph f(x: f32[1024], b: f32[]) {
          tanh: f32[1024] = fused(x, b)
            body fused(x: f32[1024], b: f32[]) {
              multiply: f32[1024] = multiply(x, x)
              add: f32[1024] = add(multiply, b)
              tanh: f32[1024] = tanh(add)
              return tanh
            }
          return tanh
        }""")
    x = np.linspace(-3, 3, 1024, dtype=np.float32)
    check_same_results(f, rt.constant(x), rt.constant(0.5))


def test_a_value_read_twice_or_returned_ends_a_group():
    def f(x):
        a = x * x                                   # read by two ops, and returned
        return (a + 1.0) * (a * 2.0), a

    _, after = before_after(f, [rt.TensorSpec([8], rt.float32)], ["fusion"])
    assert after == expect("""
        graph f(x: f32[8]) {
          multiply: f32[8] = multiply(x, x)
          const: f32[] = const[value=1.]()
          const_1: f32[] = const[value=2.]()
          multiply_2: f32[8] = fused(multiply, const, const_1)
            body fused(multiply: f32[8], const: f32[], const_1: f32[]) {
              add: f32[8] = add(multiply, const)
              multiply_1: f32[8] = multiply(multiply, const_1)
              multiply_2: f32[8] = multiply(add, multiply_1)
              return multiply_2
            }
          return (multiply_2, multiply)
        }""")
    check_same_results(f, rt.constant(np.arange(8, dtype=np.float32)))


def test_scalar_chains_in_a_loop_keep_integer_semantics():
    def f(n):
        return rt.while_loop(lambda n, k: n > 1, lambda n, k: (n // 2 + n % 2 * 7 - 1, k + 1),
                             [n, 0])

    for n in (27, 1000, -5):
        check_same_results(f, rt.constant(n))


@pytest.mark.parametrize("executor", ["fast", "plain"])
def test_a_failing_member_is_named_with_its_own_line(executor):
    @rt.function(input_signature=[rt.TensorSpec([None], rt.float32)] * 2)
    def f(x, y):
        doubled = x * 2.0
        total = doubled + y                             # fails: shapes differ at run time
        return rt.exp(total)

    graph = f.get_concrete_function().graph
    assert "exp: f32[?] = fused(x, const, y)" in str(passes.optimize(graph, ["fusion"]))
    with rt.config.options(executor=executor, optimizations=True):
        with pytest.raises(ValueError) as info:
            f(rt.constant([1.0, 2.0]), rt.constant([1.0, 2.0, 3.0]))
    message = str(info.value)
    assert message.startswith("operation 'add' (add) created at ")
    assert f'{THIS_FILE}", line ' in message and "total = doubled + y" in message
    assert info.value.op.graph is graph                 # the traced op, not a copy
