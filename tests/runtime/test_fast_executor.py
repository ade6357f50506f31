"""The fast executor: each graph compiled once to Python source; results, printed text and
errors identical to the plain executor's."""
import numpy as np
import pytest

import runtime as rt
from runtime import codegen_executor, passes
from pass_testing import check_same_results


def _program(f, *args):
    graph = passes.optimize(f.get_concrete_function(*args).graph, rt.config.PASS_NAMES)
    return codegen_executor.compile_graph(graph)


def test_a_graph_compiles_once_into_straight_line_source(on_cpu):
    @rt.function
    def f(x, n):
        def body(i, acc):
            acc = rt.cond(acc > 100.0, lambda: acc / 2.0, lambda: acc * x)
            return i + 1, acc
        return rt.while_loop(lambda i, acc: i < n, body, [0, x])[1]

    args = (rt.constant(3.0), rt.constant(10))
    f(*args)
    graph = f.get_concrete_function(*args).graph
    run = graph._plans[rt.config._state["version"]]
    f(*args)
    assert graph._plans[rt.config._state["version"]] is run           # not compiled again
    source = _program(f, *args).source
    assert "in _count():" in source and "if not " in source and "else:" in source
    assert "less = while_0 < n" in source                         # scalars: operators
    check_same_results(f, *args)


def test_a_converted_loops_break_flag_stays_a_python_bool(on_cpu):
    import autograph as ag

    def first_multiple(n, k):
        i = 1
        while i < n:
            if i % k == 0:
                break
            i += 1
        return i

    f = ag.convert(first_multiple)
    args = (rt.constant(50), rt.constant(7))
    assert int(f(*args)) == 7
    source = _program(f, *args).source
    assert "(not while_" in source and "~" not in source      # Python's not, a Python bool
    assert " = True" in source or "True," in source
    check_same_results(f, *args)


def test_a_python_bool_scalar_reaches_a_kernel_with_attributes_as_a_numpy_bool():
    # `not` gives a Python bool; cast (elementwise, with a dtype attribute) calls its kernel
    f = rt.function(lambda x: rt.cast(rt.logical_not(x > 0), rt.int64))
    assert [int(f(rt.constant(v))) for v in (1, -1)] == [0, 1]
    check_same_results(f, rt.constant(-1))


def test_identical_results_on_integer_edge_cases():
    def f(x, y):
        return x // y, x % y, x * y, -x, abs(x), x // 0, x % 0

    for x, y in [(7, -2), (-7, 2), (2**31 - 1, 2), (-2**31, -1), (0, 5)]:
        check_same_results(f, rt.constant(x), rt.constant(y))
    for a, b in [(7.5, -2.0), (-0.0, 0.0), (np.inf, 3.0), (1e38, 10.0)]:
        check_same_results(lambda x, y: (x / y, x // y, x % y, x ** y), rt.constant(a),
                           rt.constant(b))


def test_an_error_from_a_scalar_operator_is_the_plain_executors_error():
    def f(x, y):
        return x ** y                                  # integers to a negative power

    messages = []
    for executor in ("fast", "plain"):
        with rt.config.options(executor=executor):
            with pytest.raises(ValueError) as info:
                rt.function(f)(rt.constant(2), rt.constant(-1))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("operation 'pow' (pow) created at ")


def test_printed_text_and_side_effects_in_order(capsys):
    v = rt.Variable(0, name="counter")

    def f(n):
        def body(i):
            v.assign_add(i)
            rt.print("step", i, v)
            return i + 1
        return rt.while_loop(lambda i: i < n, body, [0])

    printed = []
    for executor in ("plain", "fast"):
        v.assign(0)
        with rt.config.options(executor=executor):
            rt.function(f)(rt.constant(3))
        printed.append(capsys.readouterr().out)
    assert printed[0] == printed[1]
    assert printed[1].splitlines()[-1].startswith("step 2 <rt.Variable 'counter:0'")


def test_nested_functions_are_inlined_and_run_once_each_call():
    calls = []

    @rt.function
    def inner(x):
        rt.py_function(lambda t: calls.append(1) or t, [x], rt.float32)
        return x * 2.0

    @rt.function
    def outer(x):
        return inner(x) + inner(x + 1.0)

    assert outer(rt.constant(1.0)).numpy() == 6.0
    assert len(calls) == 2
    assert "def " not in _program(outer, rt.constant(1.0)).source.split("def ", 2)[1]


def test_a_session_runs_with_the_fast_executor():
    g = rt.Graph()
    with g.as_default():
        x = rt.placeholder(rt.float32, [None])
        y = rt.reduce_sum(rt.exp(x) * 2.0 + 1.0)
        w = rt.Variable(1.0)
        update = w.assign_add(y)
        init = rt.global_variables_initializer()
    results = []
    for executor in ("plain", "fast"):
        with rt.config.options(executor=executor), rt.Session(graph=g) as sess:
            sess.run(init)
            results.append((sess.run(y, {x: [0.0, 1.0]}), sess.run(update, {x: [0.0]})))
    assert results[0] == results[1]


def test_the_switch():
    assert rt.config.get_executor() in rt.config.EXECUTORS
    with pytest.raises(ValueError, match="Unknown executor"):
        rt.config.set_executor("turbo")
    with pytest.raises(ValueError, match="Unknown passes"):
        rt.config.set_optimizations(["folding"])
    before = (rt.config.get_executor(), rt.config.get_optimizations())
    with rt.config.options(executor="plain", optimizations=False):
        assert rt.config.get_executor() == "plain" and not rt.config.get_optimizations()
    assert (rt.config.get_executor(), rt.config.get_optimizations()) == before


def test_loops_nested_past_pythons_block_limit_run_on_the_plain_executor():
    def nested(x):
        def level(depth, x):
            if depth == 0:
                return x + 1.0
            return rt.while_loop(lambda i, y: i < 1, lambda i, y: (i + 1, level(depth - 1, y)),
                                 [0, x])[1]
        return level(25, x)                      # Python allows 20 nested blocks

    assert rt.function(nested)(rt.constant(1.0)).numpy() == 2.0


@pytest.mark.parametrize("executor", ["plain", "fast"])
@pytest.mark.parametrize("optimizations", [True, False], ids=["optimized", "as traced"])
def test_a_failing_check_nothing_reads_does_not_run_optimized_or_not(executor, optimizations):
    from runtime.ops import logging_ops

    @rt.function
    def f(x):
        logging_ops.assert_assigned(x > 0, x, "x was never assigned")   # value unread
        y = x * 2.0
        rt.print("y", y)
        return y

    with rt.config.options(executor=executor, optimizations=optimizations):
        assert float(f(rt.constant(-1.0))) == -2.0
        checked = rt.function(lambda x: logging_ops.assert_assigned(x > 0, x, "unassigned"))
        with pytest.raises(UnboundLocalError, match="unassigned"):
            checked(rt.constant(-1.0))
