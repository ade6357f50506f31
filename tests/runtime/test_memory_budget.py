"""A memory budget: the planned peak memory of a graph (passes/memory.py) against what
tracemalloc measures, and the rematerialization pass recomputing loops' collected values,
the cheapest first, until the plan fits the budget (rt.config.set_memory_budget,
rt.function(memory_budget=)), with the results of the unbudgeted run."""
import tracemalloc
import warnings

import numpy as np
import pytest

import runtime as rt
from runtime import passes
from runtime.passes.memory import planned_peak, trip_count

STEPS, SIZE = 100, 1 << 14
MB = 2 ** 20
ALL = rt.config.DEFAULT_PASSES


def loop_gradients(x, w):
    def body(i, x):
        y = rt.tanh(x)
        return i + 1, x + y * rt.sin(x) * w
    _, out = rt.while_loop(lambda i, x: i < STEPS, body, [0, x])
    loss = rt.reduce_sum(out)
    return loss, rt.gradients(loss, [w, x])


X = rt.constant(np.linspace(-1, 1, SIZE, dtype=np.float32))
W = rt.constant(np.full(SIZE, 0.01, np.float32))
ONE = STEPS * SIZE * 4             # one value collected over the loop
# The forward loop holds each value it collects once (packed as the iterations run): the plan
# is about 4 * ONE with the 4 values it collects, ONE with 1.


def measured_peak(fn, *args):
    """Bytes tracemalloc sees held at once by one call (after a first call: tracing), under
    an executor that follows the memory plan (the compiled tier's regions allocate as
    numba does, RT_EXECUTOR=compiled: the fast executor's plan is measured)."""
    executor = "plain" if rt.config.get_executor() == "plain" else "fast"
    with rt.config.options(executor=executor):
        fn(*args)
        rt.config.release_buffers()   # (the call allocates all it uses)
        tracemalloc.start()
        try:
            result = fn(*args)
            return tracemalloc.get_traced_memory()[1], result
        finally:
            tracemalloc.stop()


def close(planned, measured):
    """Within 10% (and the few KB of Python objects a call makes besides arrays)."""
    return abs(planned - measured) <= 0.1 * measured + 64 * 1024


def values(result):
    return [t.numpy() for t in rt.nest.flatten(result)]


def stacks(fn, *args):
    """How many values the forward loop of `fn`'s optimized graph collects."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # the tests of warnings look at the call's
        graph = passes.optimize(fn.get_concrete_function(*args).graph,
                                memory_budget=fn.memory_budget)
    return next(op.attrs["stacks"] for op in graph.ops if op.type == "while")


@pytest.fixture(autouse=True)
def optimized():
    with rt.config.options(optimizations=ALL, memory_budget=None):
        yield


# -- the planned peak -------------------------------------------------------------------------

@pytest.mark.parametrize("names", [ALL, ALL | {"rematerialization"},
                                   ALL - {"fusion", "memory"}])
def test_planned_peak_of_a_loop_gradient_is_what_tracemalloc_measures(names, on_cpu):
    f = rt.function(loop_gradients)
    with rt.config.options(optimizations=names):
        measured, _ = measured_peak(f, X, W)
    planned = passes.planned_peak(passes.optimize(f.get_concrete_function(X, W).graph, names),
                                  names)
    assert close(planned, measured)


def test_planned_peak_of_straight_line_code_counts_reuse_and_frees():
    x = rt.constant(np.ones(1 << 20, np.float32))          # 4 MB

    def chain(x):
        a = rt.exp(x)
        b = a * a
        c = rt.sin(b) + a
        return rt.reduce_sum(c * 2.0)
    f = rt.function(chain)
    for names in (ALL, ALL - {"fusion", "memory"}):
        with rt.config.options(optimizations=names):
            measured, _ = measured_peak(f, x)
        graph = passes.optimize(f.get_concrete_function(x).graph, names)
        planned = planned_peak(graph)
        assert close(planned, measured), names


def test_planned_peak_is_unknown_for_unknown_shapes_and_trip_counts():
    f = rt.function(loop_gradients)
    assert planned_peak(f.get_concrete_function(rt.TensorSpec([None]), W).graph) is None

    def counted(x, n):
        return rt.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x * 2.0), [0, x])[1]
    graph = rt.function(counted).get_concrete_function(X, rt.constant(3)).graph
    assert planned_peak(graph) is None


@pytest.mark.parametrize("cond, start, step, n", [
    (lambda i: i < 10, 0, 1, 10), (lambda i: i <= 10, 0, 3, 4), (lambda i: i < 0, 0, 1, 0),
    (lambda i: 7 > i, 2, 2, 3), (lambda i: i > 0, 10, -1, 10), (lambda i: i >= -5, 5, -5, 3),
])
def test_trip_counts_of_counting_loops(cond, start, step, n):
    def f(x):
        return rt.while_loop(lambda i, x: cond(i), lambda i, x: (i + step, x + 1.0),
                             [start, x])
    traced = rt.function(f)
    loop = next(op for op in traced.get_concrete_function(rt.constant(0.0)).graph.ops
                if op.type == "while")
    assert trip_count(loop) == n
    assert traced(rt.constant(0.0))[1].numpy() == n           # x counts the iterations


def test_trip_count_of_a_bounded_loop_and_of_an_unknown_one():
    def f(x, n):
        return rt.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x + 1.0), [0, x],
                             maximum_iterations=5)
    loop = next(op for op in rt.function(f).get_concrete_function(
        rt.constant(0.0), rt.constant(9)).graph.ops if op.type == "while")
    assert trip_count(loop) == 5
    loop.attrs = dict(loop.attrs, maximum_iterations=None)
    assert trip_count(loop) is None


# -- the budget -------------------------------------------------------------------------------

def test_budgets_the_plan_fits_are_kept_and_results_do_not_change(on_cpu):
    reference = values(rt.function(loop_gradients)(X, W))
    unbudgeted, _ = measured_peak(rt.function(loop_gradients), X, W)
    for budget in (7 * ONE // 2, 5 * ONE // 2, 3 * ONE // 2):
        f = rt.function(loop_gradients, memory_budget=int(budget))
        with warnings.catch_warnings():
            warnings.simplefilter("error")          # the plan fits: no warning
            measured, result = measured_peak(f, X, W)
        assert measured <= 1.1 * budget < unbudgeted
        assert all(np.array_equal(a, b) for a, b in zip(values(result), reference))


def test_the_cheapest_values_are_recomputed_first_and_only_as_many_as_needed():
    def count(budget):
        return stacks(rt.function(loop_gradients, memory_budget=budget), X, W)
    assert count(None) == 4                  # x, tanh(x), sin(x), tanh(x) * sin(x)
    assert count(100 * ONE) == 4             # it fits already
    assert count(7 * ONE // 2) == 3            # tanh or sin (one op each) goes first
    assert count(5 * ONE // 2) == 2
    assert count(3 * ONE // 2) == 1            # the product too: only x is kept


def test_over_budget_warns_by_how_much():
    f = rt.function(loop_gradients, memory_budget=ONE // 2)
    with pytest.warns(UserWarning, match=r"memory budget of 3\.1 MB: 'loop_gradients' plans "
                                         r"to hold 6\.\d MB, 3\.\d MB over, after recomputing every "
                                         r"value it can") as caught:
        result = f(X, W)
    assert caught[0].filename == __file__
    assert stacks(f, X, W) == 1
    reference = values(rt.function(loop_gradients)(X, W))
    assert all(np.array_equal(a, b) for a, b in zip(values(result), reference))


def test_an_unknown_peak_recomputes_all_it_can_and_says_so():
    def counted(x, w, n):
        def body(i, x):
            return i + 1, x + rt.tanh(x) * rt.sin(x) * w
        _, out = rt.while_loop(lambda i, x: i < n, body, [0, x])
        return rt.gradients(rt.reduce_sum(out), [x])
    f = rt.function(counted, memory_budget=MB)
    with pytest.warns(UserWarning, match="peak memory of 'counted' is not known before it runs"):
        got = f(X, W, rt.constant(STEPS))
    np.testing.assert_array_equal(got[0].numpy(), rt.function(counted)(X, W, STEPS)[0].numpy())
    assert stacks(f, X, W, rt.constant(STEPS)) == 1


def test_the_configured_budget_and_options_apply_to_every_function(on_cpu):
    f = rt.function(loop_gradients)
    assert stacks(f, X, W) == 4
    with rt.config.options(memory_budget=3 * ONE // 2):
        assert rt.config.get_memory_budget() == 3 * ONE // 2
        assert stacks(f, X, W) == 1
        measured, _ = measured_peak(f, X, W)
        assert measured <= 1.1 * 3 * ONE // 2
    assert rt.config.get_memory_budget() is None
    rt.config.set_memory_budget(5 * ONE // 2)
    try:
        assert stacks(f, X, W) == 2
        own = rt.function(loop_gradients, memory_budget=7 * ONE // 2)
        assert stacks(own, X, W) == 3                 # a function's own budget comes first
    finally:
        rt.config.set_memory_budget(None)


def test_bad_budgets_are_errors():
    for bad in (0, -1, 1.5, True, "1GB"):
        with pytest.raises(ValueError, match="memory budget is None or a number of bytes"):
            rt.config.set_memory_budget(bad)
        with pytest.raises(ValueError, match="memory budget is None or a number of bytes"):
            rt.function(loop_gradients, memory_budget=bad)
    assert rt.config.get_memory_budget() is None


def test_a_method_keeps_its_functions_budget(on_cpu):
    class Model:
        @rt.function(memory_budget=3 * ONE // 2)
        def grads(self, x, w):
            return loop_gradients(x, w)
    model = Model()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        measured, _ = measured_peak(model.grads, X, W)
    assert measured <= 1.1 * 3 * ONE // 2
