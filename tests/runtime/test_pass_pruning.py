"""Pruning drops operations nothing needs; stateful operations always stay."""
import numpy as np

import runtime as rt
from pass_testing import before_after, check_same_results, expect

SCALAR = rt.TensorSpec([], rt.float32)


def test_an_unused_op_goes_and_a_print_stays(on_cpu):
    def f(x):
        rt.exp(x)                               # nothing reads it
        rt.print("x is", x)                     # stateful: always runs
        return x + 1.0

    before, after = before_after(f, [SCALAR], ["pruning"])
    assert before == expect("""
        graph f(x: f32[]) {
          exp: f32[] = exp(x)
          print[template=('x is', $0), sep=' ', end='\\n', file=None](x)
          const: f32[] = const[value=1.]()
          add: f32[] = add(x, const)
          return add
        }""")
    assert after == expect("""
        graph f(x: f32[]) {
          print[template=('x is', $0), sep=' ', end='\\n', file=None](x)
          const: f32[] = const[value=1.]()
          add: f32[] = add(x, const)
          return add
        }""")


def test_inside_a_branch_and_a_capture_only_the_dead_op_read():
    def f(x, y, flag):
        def yes():
            rt.exp(y)                           # the only reader of y in the branch
            return x * 2.0
        return rt.cond(flag, yes, lambda: x)

    before, after = before_after(f, [SCALAR, SCALAR, rt.TensorSpec([], rt.bool_)],
                                 ["pruning"])
    assert before == expect("""
        graph f(x: f32[], y: f32[], flag: bool[]) {
          cond: f32[] = cond[then_map=(0, 1), else_map=(1,)](flag, y, x)
            then_graph then(captures y: f32[], x: f32[]) {
              exp: f32[] = exp(y)
              const: f32[] = const[value=2.]()
              multiply: f32[] = multiply(x, const)
              return multiply
            }
            else_graph else(captures x: f32[]) {
              return x
            }
          return cond
        }""")
    assert after == expect("""
        graph f(x: f32[], y: f32[], flag: bool[]) {
          cond: f32[] = cond[then_map=(0,), else_map=(0,)](flag, x)
            then_graph then(captures x: f32[]) {
              const: f32[] = const[value=2.]()
              multiply: f32[] = multiply(x, const)
              return multiply
            }
            else_graph else(captures x: f32[]) {
              return x
            }
          return cond
        }""")
    for flag in (True, False):
        check_same_results(f, rt.constant(1.5), rt.constant(2.0), rt.constant(flag))


def test_a_variable_update_in_a_loop_body_stays_though_nothing_reads_it():
    v = rt.Variable(0.0, name="v")

    def f(n):
        def body(i):
            v.assign_add(1.0)                   # its value is unused: it still runs
            rt.exp(rt.cast(i, rt.float32))      # unused and pure: goes
            return i + 1
        return rt.while_loop(lambda i: i < n, body, [0])

    before, after = before_after(f, [rt.TensorSpec([], rt.int32)], ["pruning"])
    assert "exp" in before
    assert after == expect("""
        graph f(n: i32[]) {
          const: i32[] = const[value=0]()
          while: i32[] = while[n_vars=1, cond_map=(0,), body_map=(), maximum_iterations=None](const, n)
            cond_graph while_cond(arg0: i32[]; captures n: i32[]) {
              less: bool[] = less(arg0, n)
              return less
            }
            body_graph while_body(arg0: i32[]) {
              const: f32[] = const[value=1.]()
              assign_add: f32[] = assign_add[var=v:0](const)
              const_1: i32[] = const[value=1]()
              add: i32[] = add(arg0, const_1)
              return add
            }
          return while
        }""")
    for executor in ("fast", "plain"):
        v.assign(0.0)
        with rt.config.options(executor=executor):
            rt.function(f)(rt.constant(3))
        assert v.numpy() == 3.0


def test_a_function_graph_keeps_its_inputs_even_unused():
    def f(x, unused):
        return x * 3.0

    _, after = before_after(f, [SCALAR, SCALAR], ["pruning"])
    assert after.startswith("graph f(x: f32[], unused: f32[]) {")
    np.testing.assert_equal(rt.function(f)(rt.constant(2.0), rt.constant(5.0)).numpy(), 6.0)


def test_values_a_loop_collects_for_gradients_that_no_gradient_reads_are_not_collected():
    def f(x, w):
        def body(i, x):
            return i + 1, x + rt.tanh(x) * w
        _, out = rt.while_loop(lambda i, x: i < 5, body, [0, x])
        loss = rt.reduce_sum(out)
        return loss, rt.gradients(loss, [w])[0]          # reads tanh(x) only

    spec = rt.TensorSpec([3], rt.float32)
    graph = rt.function(f).get_concrete_function(spec, spec).graph
    loop = next(op for op in graph.ops if op.type == "while")
    assert loop.attrs["stacks"] == 3                     # x, tanh(x), tanh(x) * w
    before, after = before_after(f, [spec, spec], ["pruning"])
    assert "stacks=3" in before and "stacks=1" in after
    assert "      return (add, add_1, tanh)" in after
    check_same_results(f, rt.constant([0.1, 0.2, 0.3]), rt.constant([1.0, 2.0, 3.0]))
