"""The passes as single sweeps: the same graphs as one edit at a time, on random and
large graphs, and no whole-graph edit per op.

The oracle (pass_reference.py) is the passes as they were: each rewrite one
`replace_uses` / `insert_op` / `remove_ops`, rounds repeated until none finds work.
The text of the optimized graph (names, attributes, notes of the memory plan) must be
the same. Speed itself is measured by benchmarks/scale.py, never here.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import runtime as rt
from runtime import passes
from runtime.graph import Graph
from pass_testing import check_same_results, text
import pass_reference
from test_differential import INPUTS, input_values, interpret, programs

F32 = rt.float32
ALL = rt.config.DEFAULT_PASSES | {"rematerialization"}


def optimized_both_ways(graph, enabled):
    return (text(passes.optimize(graph, enabled)),
            text(pass_reference.optimize(graph, enabled)))


def _specs():
    return [rt.TensorSpec(list(s), rt.bool_ if d == "bool" else getattr(rt, d))
            for s, d in INPUTS]


def _with_gradients(f):
    """`f`'s outputs and the gradients of the sum of its float outputs."""
    def g(*inputs):
        outputs = f(*inputs)
        floats = [o for o in outputs if o.dtype.is_floating]
        if not floats:
            return outputs
        loss = rt.add_n([rt.reduce_sum(o) for o in floats])
        sources = [x for x in inputs if x.dtype.is_floating]
        return tuple(outputs) + tuple(d for d in rt.gradients(loss, sources) if d is not None)
    return g


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(program=programs(), gradients=st.booleans(), threads=st.sampled_from([1, 2]))
def test_random_graphs_optimize_as_one_edit_at_a_time(program, gradients, threads):
    steps, outputs = program
    note(f"steps={steps!r}\noutputs={outputs!r}")
    # (on cpu:0: the edit-at-a-time reference has no placement pass)
    with rt.config.options(inter_op_threads=threads, default_device="cpu:0"):
        var = rt.Variable(np.arange(12, dtype=np.float32).reshape(3, 4) / 10)
        f = interpret(steps, outputs, var)
        if gradients:
            f = _with_gradients(f)
        graph = rt.function(f).get_concrete_function(*_specs()).graph
        saved = passes.parallel.HEAVY, passes.parallel.PARALLEL_MATMULS
        passes.parallel.HEAVY, passes.parallel.PARALLEL_MATMULS = 10, True   # some async
        try:
            for enabled in (rt.config.DEFAULT_PASSES, ALL):
                new, old = optimized_both_ways(graph, enabled)
                assert new == old
        finally:
            passes.parallel.HEAVY, passes.parallel.PARALLEL_MATMULS = saved


def unrolled(x, n):
    """n steps of `x * 1.0001 + 0.5`: four ops each, their constants all equal."""
    for _ in range(n):
        x = x * 1.0001 + 0.5
    return x


def test_cse_on_a_large_graph_merges_what_one_merge_at_a_time_does():
    def f(x, y):
        a, b = unrolled(x, 300), unrolled(x, 300)        # the same chain twice
        return a + b, unrolled(y, 200) * a
    graph = rt.function(f).get_concrete_function(
        rt.TensorSpec([4], F32), rt.TensorSpec([4], F32)).graph
    new, old = optimized_both_ways(graph, ["cse", "pruning"])
    assert new == old
    merged = passes.optimize(graph, ["cse", "pruning"])
    # Two constants and the chain of x once: 2 + 2 * 300 ops, the chain of y: 2 * 200.
    assert sum(op.type == "const" for op in merged.ops) == 2
    assert sum(op.type == "multiply" for op in merged.ops) == 300 + 200 + 1
    keys = [passes.cse._key(op) for op in merged.ops]
    keys = [k for k in keys if k is not None]
    assert len(keys) == len(set(keys))                   # nothing left to merge
    x, y = np.linspace(-1, 1, 4, dtype=np.float32), np.ones(4, np.float32)
    check_same_results(f, rt.constant(x), rt.constant(y))


def test_control_inputs_of_merged_ops_follow_them_in_merge_order():
    v = rt.Variable(1.0)          # outside: only a first trace may create variables

    def f(x):
        a, b = rt.exp(x), rt.sin(x)
        a2, b2 = rt.exp(x), rt.sin(x)
        with rt.control_dependencies([b2, a2]):
            v.assign_add(x)
        return a + b + a2 + b2
    graph = rt.function(f).get_concrete_function(rt.TensorSpec([], F32)).graph
    new, old = optimized_both_ways(graph, ["cse", "pruning"])
    assert new == old
    assert "assign_add[var=" in new and "after exp, sin" in new


def test_folding_a_long_chain_of_constants_in_one_sweep():
    def f(x):
        c = rt.constant(1.0)
        for k in range(500):
            c = c * 1.001 + k
        return x + c
    graph = rt.function(f).get_concrete_function(rt.TensorSpec([], F32)).graph
    new, old = optimized_both_ways(graph, rt.config.DEFAULT_PASSES)
    assert new == old
    folded = passes.optimize(graph, ["constant_folding", "pruning"])
    assert [op.type for op in folded.ops] == ["placeholder", "const", "add"]


def test_fusing_many_groups_keeps_each_in_its_place(on_cpu):
    def f(x, y):
        for _ in range(100):                 # a group per step: its matmul splits them
            x = rt.matmul(rt.tanh(x * 2.0 + 1.0), y)
        return x
    spec = rt.TensorSpec([3, 3], F32)
    graph = rt.function(f).get_concrete_function(spec, spec).graph
    new, old = optimized_both_ways(graph, rt.config.DEFAULT_PASSES)
    assert new == old
    assert new.count("= fused(") == 100
    m = np.eye(3, dtype=np.float32) * 0.5
    check_same_results(f, rt.constant(m), rt.constant(m))


WHOLE_GRAPH_EDITS = ("insert_op", "remove_ops", "replace_uses", "replace_op", "needed_ops",
                     "needed_set")


@pytest.mark.parametrize("enabled", [rt.config.DEFAULT_PASSES, ALL], ids=["default", "remat"])
def test_no_pass_scans_the_whole_graph_once_per_op(monkeypatch, enabled):
    """Optimizing twice the ops makes no more whole-graph edits (each scans every op)."""
    counts = {}
    for name in WHOLE_GRAPH_EDITS:
        method = getattr(Graph, name)

        def counted(self, *args, _method=method, _name=name, **kwargs):
            counts[_name] = counts.get(_name, 0) + 1
            return _method(self, *args, **kwargs)
        monkeypatch.setattr(Graph, name, counted)

    def edits(n):
        def f(x, n_steps):
            y = unrolled(x, n)
            z = rt.while_loop(lambda i, v: i < n_steps, lambda i, v: (i + 1, rt.tanh(v) * 0.5),
                              [0, y])[1]
            return rt.gradients(rt.reduce_sum(z), [x])[0] + unrolled(x, n)
        graph = rt.function(f).get_concrete_function(
            rt.TensorSpec([4], F32), rt.TensorSpec([], rt.int32)).graph
        counts.clear()
        passes.optimize(graph, enabled)
        return dict(counts)

    assert edits(200) == edits(400)


def test_rematerialized_loop_gradients_as_one_insert_at_a_time():
    def f(x, w):
        def body(i, x):                       # the gradients need tanh, sin and products
            y = rt.tanh(x)
            return i + 1, x + y * rt.sin(x) * w + rt.sigmoid(x) * y
        _, out = rt.while_loop(lambda i, x: i < 5, body, [0, x])
        loss = rt.reduce_sum(out)
        first = rt.gradients(loss, [w, x])
        return loss, first, rt.gradients(rt.reduce_sum(first[1] * first[0]), [x])
    spec = rt.TensorSpec([None], F32)
    graph = rt.function(f).get_concrete_function(spec, spec).graph
    new, old = optimized_both_ways(graph, ALL)
    assert new == old
    assert "= sin(stack_get" in new                       # recomputed in a backward body
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    check_same_results(f, rt.constant(x), rt.constant(x[::-1] * 0.5))
