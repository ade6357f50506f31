"""rt.function: trace once per input signature, run the graph on every call."""
import collections
import gc
import os
import threading
import weakref

import numpy as np
import pytest

import runtime as rt

THIS_FILE = os.path.basename(__file__)


@pytest.fixture
def eager_functions():
    """Run every rt.function's Python eagerly for one test, then restore tracing."""
    rt.run_functions_eagerly(True)
    try:
        yield
    finally:
        rt.run_functions_eagerly(False)


def traced_counter(fn):
    """`fn` as an rt.function, plus the list of argument tuples it was traced with."""
    traces = []

    def python_function(*args, **kwargs):
        traces.append(args)
        return fn(*args, **kwargs)

    return rt.function(python_function), traces


# -- trace caching ----------------------------------------------------------------------------

def test_traces_once_per_shape_and_dtype_and_never_on_a_cache_hit():
    double, traces = traced_counter(lambda x: x * 2)
    np.testing.assert_array_equal(double(rt.constant([1.0, 2.0])).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(double(rt.constant([3.0, 4.0])).numpy(), [6.0, 8.0])
    assert len(traces) == 1
    double(rt.constant([1.0, 2.0, 3.0]))           # new shape
    double(rt.constant([1, 2]))                    # new dtype
    double(rt.constant([5, 6]))
    assert len(traces) == 3
    assert double.experimental_get_tracing_count() == 3


def test_python_arguments_are_part_of_the_signature_by_value():
    scale, traces = traced_counter(lambda x, k: x * k)
    assert float(scale(rt.constant(1.0), 2)) == 2.0
    assert float(scale(rt.constant(1.0), 2)) == 2.0
    assert float(scale(rt.constant(1.0), 3)) == 3.0
    assert float(scale(rt.constant(1.0), 3.0)) == 3.0   # a float is not the int 3
    assert len(traces) == 3


def test_a_python_side_effect_happens_once_per_new_signature(capsys):
    log = []

    @rt.function
    def f(x):
        log.append("traced")
        print("tracing f")
        return x + 1

    for _ in range(3):
        f(rt.constant(1))
    assert log == ["traced"]
    assert capsys.readouterr().out == "tracing f\n"
    f(rt.constant([1, 2]))
    f(rt.constant([3, 4]))
    assert log == ["traced", "traced"]
    assert capsys.readouterr().out == "tracing f\n"


class Config:
    """An unhashable Python argument: traces are keyed by the object itself."""
    __hash__ = None

    def __init__(self, scale):
        self.scale = scale


def test_unhashable_python_arguments_are_keyed_by_identity_even_after_they_die():
    scale, traces = traced_counter(lambda x, config: x * config.scale)
    config = Config(2)
    assert int(scale(rt.constant(1), config)) == 2
    assert int(scale(rt.constant(1), config)) == 2
    assert len(traces) == 1
    for factor in range(3, 13):                   # new objects may reuse a dead one's id
        assert int(scale(rt.constant(1), Config(factor))) == factor


def test_numpy_arrays_are_traced_like_tensors():
    add_one, traces = traced_counter(lambda a: a + 1)
    np.testing.assert_array_equal(add_one(np.array([1.0, 2.0])).numpy(), [2.0, 3.0])
    add_one(np.array([5.0, 6.0]))
    assert len(traces) == 1


def test_keyword_arguments_and_defaults_share_the_positional_trace():
    log = []

    @rt.function
    def f(x, n=2, *, scale=1.0):
        log.append((n, scale))
        return x * n * scale

    x = rt.constant([1.0, 2.0])
    np.testing.assert_array_equal(f(x).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(f(x, 2).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(f(x, n=2).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(f(n=3, x=x).numpy(), [3.0, 6.0])
    np.testing.assert_array_equal(f(x, scale=0.5).numpy(), [1.0, 2.0])
    assert log == [(2, 1.0), (3, 1.0), (2, 0.5)]


def test_tensors_in_dicts_and_keyword_arguments_reach_their_own_parameters():
    @rt.function
    def f(d, *, scale, bias):
        return (d["x"] - d["y"]) * scale + bias

    args = ({"y": rt.constant(2.0), "x": rt.constant(10.0)},)      # not in sorted order
    kwargs = {"scale": rt.constant(3.0), "bias": rt.constant(100.0)}
    assert float(f(*args, **kwargs)) == 124.0
    assert float(f({"x": rt.constant(10.0), "y": rt.constant(2.0)}, **kwargs)) == 124.0
    assert f.experimental_get_tracing_count() == 1
    cf = f.get_concrete_function(*args, **kwargs)
    assert float(cf(*args, **kwargs)) == 124.0


def test_missing_arguments_name_the_function():
    @rt.function
    def add(x, y):
        return x + y

    with pytest.raises(TypeError, match=r"add\(\): missing a required argument: 'y'"):
        add(rt.constant(1.0))


# -- input_signature -----------------------------------------------------------------------

def test_input_signature_with_an_unknown_dimension_traces_once_for_all_lengths():
    log = []

    @rt.function(input_signature=[rt.TensorSpec([None], rt.float32)])
    def total(x):
        log.append(x.shape)
        return rt.reduce_sum(x)

    assert float(total(rt.constant([1.0, 2.0]))) == 3.0
    assert float(total(rt.constant([1.0, 2.0, 3.0]))) == 6.0
    assert float(total([1.0, 2.0, 3.0, 4.0])) == 10.0        # a Python list is converted
    assert log == [rt.TensorShape([None])]


def test_input_signature_rejects_a_wrong_dtype_or_shape_clearly():
    @rt.function(input_signature=[rt.TensorSpec([None], rt.float32)])
    def total(x):
        return rt.reduce_sum(x)

    with pytest.raises(ValueError, match=r"total: argument 0 has dtype int32 .*"
                                         r"TensorSpec\(shape=\(None,\), dtype=rt.float32\)"):
        total(rt.constant([1, 2]))
    with pytest.raises(ValueError, match=r"shape \(1, 2\)"):
        total(rt.constant([[1.0, 2.0]]))
    with pytest.raises(TypeError, match="do not match the input_signature"):
        total(rt.constant([1.0]), rt.constant([2.0]))


def test_input_signature_may_be_nested():
    @rt.function(input_signature=[(rt.TensorSpec([None]), rt.TensorSpec([]))])
    def scale(pair):
        x, s = pair
        return x * s

    assert scale((rt.constant([1.0, 2.0]), rt.constant(3.0))).numpy().tolist() == [3.0, 6.0]
    assert scale(([1.0, 2.0, 3.0], 2.0)).numpy().tolist() == [2.0, 4.0, 6.0]
    assert str(scale.get_concrete_function().graph).startswith(
        "graph scale(pair_0: f32[?], pair_1: f32[]) {")
    with pytest.raises(TypeError, match=r"Expected the structure \(\*, \*\), got \*"):
        scale(rt.constant([1.0]))


def test_input_signature_get_concrete_function_is_the_one_general_trace():
    @rt.function(input_signature=[rt.TensorSpec([None], rt.float32),
                                  rt.TensorSpec([], rt.int32)])
    def scale(x, n):
        return x * rt.cast(n, rt.float32)

    cf = scale.get_concrete_function(rt.constant([1.0, 2.0]), rt.constant(2))
    assert cf.graph.inputs[0].shape == rt.TensorShape([None])
    assert scale.get_concrete_function() is cf
    np.testing.assert_array_equal(scale([1.0, 2.0, 3.0], 2).numpy(), [2.0, 4.0, 6.0])
    assert scale.experimental_get_tracing_count() == 1


# -- get_concrete_function and the graph's text form --------------------------------------------

def test_get_concrete_function_with_tensor_specs():
    @rt.function
    def affine(x, b):
        return x * 2.0 + b

    cf = affine.get_concrete_function(rt.TensorSpec([None, 3], rt.float32),
                                      rt.TensorSpec([], rt.float32))
    assert [t.shape for t in cf.inputs] == [rt.TensorShape([None, 3]), rt.TensorShape([])]
    assert cf.outputs[0].shape == rt.TensorShape([None, 3])
    np.testing.assert_array_equal(cf(rt.constant([[1.0, 2.0, 3.0]]), rt.constant(1.0)).numpy(),
                                  [[3.0, 5.0, 7.0]])
    assert affine.get_concrete_function(rt.TensorSpec([None, 3]), rt.TensorSpec([])) is cf


def test_a_concrete_function_checks_its_arguments():
    @rt.function
    def add(x, y):
        return x + y

    cf = add.get_concrete_function(rt.TensorSpec([None], rt.float32),
                                   rt.TensorSpec([], rt.float32))
    with pytest.raises(ValueError, match="add: tensor argument 0 has dtype int32"):
        cf(rt.constant([1, 2]), rt.constant(1.0))
    with pytest.raises(TypeError, match="expected 2 tensor arguments, got 1"):
        cf(rt.constant([1.0]))


def test_the_graph_prints_as_a_short_program_with_user_lines():
    @rt.function
    def affine(x):
        y = rt.matmul(x, x)
        return y + 1.0

    cf = affine.get_concrete_function(rt.TensorSpec([2, 2], rt.float32))
    text = str(cf.graph)
    matmul_line = affine.python_function.__code__.co_firstlineno + 2   # y = rt.matmul(x, x)
    assert text.splitlines()[0] == "graph affine(x: f32[2,2]) {"
    assert "matmul: f32[2,2] = matmul(x, x)" in text
    assert "add: f32[2,2] = add(matmul, const)" in text
    assert f"# {THIS_FILE}:{matmul_line}" in text
    assert f"# {THIS_FILE}:{matmul_line + 1}" in text      # the line of `y + 1.0`
    assert text.splitlines()[-2:] == ["  return add", "}"]
    assert [op.type for op in cf.graph.ops] == ["placeholder", "matmul", "const", "add"]


# -- structures ------------------------------------------------------------------------------

Pair = collections.namedtuple("Pair", "first second")


def test_nested_structures_as_arguments_and_results():
    log = []

    @rt.function
    def f(d, t, p):
        log.append(1)
        return {"sum": d["x"] + d["y"], "list": [t[0] * 2, t[1]], "pair": Pair(p.first + 1,
                                                                               p.second)}

    result = f({"y": rt.constant(2.0), "x": rt.constant(1.0)}, (rt.constant(3), 4),
               Pair(rt.constant(5.0), "label"))
    assert set(result) == {"sum", "list", "pair"}
    assert float(result["sum"]) == 3.0
    assert [int(v) for v in result["list"]] == [6, 4]       # the Python 4 came back a tensor
    assert type(result["pair"]) is Pair and result["pair"].second == "label"
    assert float(result["pair"].first) == 6.0
    f({"x": rt.constant(7.0), "y": rt.constant(8.0)}, (rt.constant(9), 4),
      Pair(rt.constant(1.0), "label"))
    assert len(log) == 1


def test_results_may_hold_none_python_values_variables_and_operations():
    v = rt.Variable(1.0)

    @rt.function
    def f(x):
        update = rt.group(v.assign_add(1.0))
        return None, "text", x, x, v, update

    none, text, a, b, value, update = f(rt.constant(3.0))
    assert none is None and text == "text" and update is None
    assert float(a) == float(b) == 3.0
    assert float(value) == 2.0 and v.numpy() == 2.0


def test_closures_over_eager_tensors_are_captured_as_constants():
    c = rt.constant(5.0)

    @rt.function
    def f():
        return c * 2

    assert float(f()) == 10.0
    assert [op.type for op in f.get_concrete_function().graph.ops].count("const") == 2


# -- methods -------------------------------------------------------------------------------

class Counter:
    def __init__(self, step):
        self.step = step
        self.traces = 0

    @rt.function
    def advance(self, x):
        self.traces += 1
        return x + self.step


def test_methods_bind_to_their_instance_and_each_instance_traces_separately():
    a, b = Counter(1), Counter(10)
    assert int(a.advance(rt.constant(1))) == 2
    assert int(b.advance(rt.constant(1))) == 11
    assert int(a.advance(rt.constant(5))) == 6
    assert (a.traces, b.traces) == (1, 1)
    # Like Python's bound methods, `a.advance` is a new object each time, over the one
    # per-instance function that holds the traces.
    assert a.advance._function is a.advance._function
    assert a.advance._function is not b.advance._function
    assert isinstance(Counter.advance, rt.Function) and isinstance(a.advance, rt.Function)
    assert Counter.advance.__get__(a)._function is a.advance._function   # owner optional


def test_a_bound_method_does_not_keep_its_instance_alive():
    c = Counter(1)
    c.advance(rt.constant(1))
    ref = weakref.ref(c)
    del c
    gc.collect()
    assert ref() is None


def test_a_method_of_a_temporary_instance_works():
    assert int(Counter(1).advance(rt.constant(1))) == 2
    advance = Counter(5).advance             # a bound method keeps its instance, as in Python
    gc.collect()
    assert int(advance(rt.constant(1))) == 6


def test_unhashable_instances_get_their_own_traces_too():
    class Unhashable(Counter):
        __hash__ = None

    a, b = Unhashable(1), Unhashable(2)
    assert int(a.advance(rt.constant(0))) == 1 and int(b.advance(rt.constant(0))) == 2
    assert (a.traces, b.traces) == (1, 1)


def test_methods_get_concrete_function_through_the_instance():
    c = Counter(3)
    cf = c.advance.get_concrete_function(rt.TensorSpec([], rt.int32))
    assert int(cf(rt.constant(4))) == 7


# -- nested functions ------------------------------------------------------------------------

def test_a_nested_graph_function_is_one_call_operation_in_the_caller():
    @rt.function
    def inner(x):
        return x * x + 1.0

    @rt.function
    def outer(x):
        return inner(x) * 2.0

    assert float(outer(rt.constant(3.0))) == 20.0
    cf = outer.get_concrete_function(rt.TensorSpec([], rt.float32))
    assert [op.type for op in cf.graph.ops] == ["placeholder", "call", "const", "multiply"]
    call = cf.graph.ops[1]
    assert [op.type for op in call.attrs["f"].ops] == [
        "placeholder", "multiply", "const", "add"]
    assert "f inner(x: f32[]) {" in str(cf.graph)


def test_a_nested_function_capturing_the_callers_tensors():
    @rt.function
    def outer(x):
        @rt.function
        def inner(y):
            return x + y
        return inner(rt.constant(1.0)) + inner(rt.constant(2.0))

    assert float(outer(rt.constant(10.0))) == 23.0
    assert float(outer(rt.constant(20.0))) == 43.0


# -- running functions eagerly ----------------------------------------------------------------

def test_run_functions_eagerly_runs_the_python_on_every_call(eager_functions, capsys):
    @rt.function
    def f(x):
        print("running, eagerly:", rt.executing_eagerly())
        return x + 1

    assert int(f(rt.constant(1))) == 2
    assert int(f(rt.constant(1))) == 2
    assert capsys.readouterr().out == "running, eagerly: True\n" * 2
    assert f.experimental_get_tracing_count() == 0


def test_run_functions_eagerly_is_off_by_default():
    assert not rt.functions_run_eagerly()


# -- threads -----------------------------------------------------------------------------------

def test_threads_share_one_function_and_each_signature_is_traced_once():
    log = []

    @rt.function
    def total(x):
        log.append(x.shape)
        y = x
        for _ in range(10):
            y = y + 1.0
        return rt.reduce_sum(y)

    failures = []

    def worker(n):
        try:
            for _ in range(30):
                result = total(rt.constant(np.ones(n, np.float32)))
                assert float(result) == 11.0 * n, result
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            failures.append(e)

    threads = [threading.Thread(target=worker, args=(2 + i % 2,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert sorted(log, key=str) == [rt.TensorShape([2]), rt.TensorShape([3])]


def test_optimized_graph_is_the_graph_that_runs_under_the_current_settings(on_cpu):
    @rt.function
    def f(x):
        unused = x * 3.0                            # noqa: F841 - pruned
        return (x + 1.0) * 2.0

    concrete = f.get_concrete_function(rt.constant(1.0))
    with rt.config.options(optimizations=True):
        optimized = concrete.optimized_graph
        assert optimized is not concrete.graph and optimized is concrete.optimized_graph
        assert len(optimized.ops) < len(concrete.graph.ops)
        assert float(concrete(rt.constant(1.0))) == 4.0
    with rt.config.options(optimizations=False):
        assert concrete.optimized_graph is concrete.graph
