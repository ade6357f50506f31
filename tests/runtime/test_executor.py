"""The plain executor: runs the needed ops in order and frees each value after its last use."""
import weakref

import numpy as np

import runtime as rt
from runtime.executor import Plan, plan_for


def test_an_intermediate_is_freed_once_its_last_consumer_has_run(on_cpu):
    refs, alive_later = [], []

    def remember(t):                       # the last consumer of `doubled`
        refs.append(weakref.ref(t._value))
        return t + 1.0

    def check(t):                          # runs after it: is `doubled` still alive?
        alive_later.append(refs[-1]() is not None)
        return t

    @rt.function
    def chain(x):
        doubled = x * 2.0
        plus_one = rt.py_function(remember, [doubled], rt.float32)
        return rt.py_function(check, [plus_one], rt.float32)

    np.testing.assert_array_equal(chain(rt.constant([1.0, 2.0])).numpy(), [3.0, 5.0])
    assert alive_later == [False]

    @rt.function
    def chain_reusing(x):                  # `doubled` is used again at the end: kept
        doubled = x * 2.0
        plus_one = rt.py_function(remember, [doubled], rt.float32)
        return rt.py_function(check, [plus_one], rt.float32) + doubled

    np.testing.assert_array_equal(chain_reusing(rt.constant([1.0, 2.0])).numpy(), [5.0, 9.0])
    assert alive_later == [False, True]


def _ops_by_name(plan):
    return {step.op.name: step for step in plan.steps}


def test_plan_steps_free_each_slot_after_its_last_reader(on_cpu):
    g = rt.Graph()
    with g.as_default():
        x = rt.placeholder(rt.float32, [2], name="x")
        a = rt.exp(x, name="a")
        b = rt.sin(a, name="b")
        c = rt.add(b, a, name="c")
        d = rt.negative(c, name="d")
    plan = Plan(g, [d], [x])
    steps = _ops_by_name(plan)
    slot = {t.name: s for t, s in zip([x, a, b, c], [plan.feed_slots[0]]
                                      + [steps[n].outs[0] for n in "abc"])}
    assert steps["a"].frees == [slot["x:0"]]                   # x is last read by a
    assert steps["b"].frees == []                              # a is read again by c
    assert sorted(steps["c"].frees) == sorted([slot["a:0"], slot["b:0"]])
    assert steps["d"].frees == [slot["c:0"]]
    assert plan.fetch_slots == [steps["d"].outs[0]]           # the fetched value is kept
    np.testing.assert_allclose(plan.run([np.zeros(2, np.float32)])[0],
                               -(np.sin(1.0) + 1.0) * np.ones(2))


def test_outputs_nobody_reads_are_dropped_right_away():
    g = rt.Graph()
    with g.as_default():
        x = rt.placeholder(rt.float32, [4], name="x")
        first, second = rt.split(x, 2, name="split")
        result = first * 2.0
    steps = _ops_by_name(Plan(g, [result], [x]))
    unused_slot = steps["split"].outs[1]
    assert unused_slot in steps["split"].frees


def test_a_plan_holds_only_the_ops_the_fetches_need():
    g = rt.Graph()
    with g.as_default():
        x = rt.placeholder(rt.float32, [], name="x")
        needed = x + 1.0
        rt.print("unneeded")
        unneeded = x * 3.0
    plan = Plan(g, [needed], [x])
    assert [op.type for op in plan.ops] == ["const", "add"]
    assert unneeded.op not in plan.ops


def test_a_function_graph_plan_is_made_once_and_includes_its_side_effects():
    @rt.function
    def f(x):
        rt.print("side", x)
        return x + 1

    graph = f.get_concrete_function(rt.TensorSpec([], rt.int32)).graph
    plan = plan_for(graph)
    assert plan_for(graph) is plan
    assert "print" in [op.type for op in plan.ops]


def test_kernels_run_eagerly_even_inside_a_graph():
    modes = []

    def record(t):
        modes.append(rt.executing_eagerly())
        return t

    f = rt.function(lambda x: rt.py_function(record, [x], rt.int32))
    f(rt.constant(1))
    assert modes == [True]
