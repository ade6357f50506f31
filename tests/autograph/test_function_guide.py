"""The behaviours TensorFlow's tf.function guide and the eager-execution articles describe,
written as users write them, against `ag.convert` and `rt.function`:

- tracing: one trace per input signature (shapes and dtypes of tensors, values of Python
  arguments), `input_signature` with unknown dimensions, keyword arguments and defaults,
  nested structures (tuples, dicts, namedtuples) as arguments and results;
- Python side effects (print, list appends, globals, closures, iterators) happen while
  tracing only; `rt.print` runs on every call. In converted code `print` is `rt.print`
  (README, "What converts"), so it prints on every call, as the same code does eagerly;
- variables made outside and assigned inside (loops, branches), state across calls;
- methods holding variables and `rt.layers.Dense`, converted functions calling converted
  functions, closures, lambdas, `functools.partial`, recursion on a Python depth;
- the seeds' examples with converted code (tests/runtime/test_seeds.py has them as
  written): a converted function fed through placeholders in a Session, printing tensor
  elements, nested graph functions printing, the gradient functions without eager mode;
- `get_concrete_function` and the graph's text form;
- errors: an incompatible input_signature, a symbolic tensor used as a Python bool without
  conversion, a Python exception raised while tracing (type kept, the user's line named).

The reference is the same Python run eagerly and what TensorFlow documents; where the
README documents a deliberate difference, the README.
"""
import collections
import contextlib
import functools
import inspect
import io
import os
import sys
import traceback

import numpy as np
import pytest
from equivalence import assert_equivalent, cases, differences, static

import autograph as ag
import runtime as rt

HERE = os.path.basename(__file__)


def f32(*values):
    return np.array(values, np.float32)


def line_of(fn, text):
    """The file line of the first line of `fn`'s source containing `text`."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def full_text(error):
    """The traceback of `error` as printed, notes included."""
    return "".join(traceback.format_exception(type(error), error, error.__traceback__))


# -- tracing and retracing -------------------------------------------------------------

def test_one_trace_per_shape_and_dtype_not_per_value():
    traces = []

    @ag.convert
    def clipped_mean(x):
        traces.append(x.shape)
        m = rt.reduce_mean(x)
        if m > 1:
            m = m - 1
        return m

    assert float(clipped_mean(rt.constant([1.0, 2.0]))) == 0.5
    assert float(clipped_mean(rt.constant([4.0, 2.0]))) == 2.0
    assert len(traces) == 1                           # new values: the same graph
    assert float(clipped_mean(rt.constant([1.0, 2.0, 6.0]))) == 2.0
    assert len(traces) == 2                           # a new shape retraces
    assert int(clipped_mean(rt.constant([3, 5]))) == 3
    assert len(traces) == 3                           # a new dtype retraces
    clipped_mean(rt.constant([7.0, 9.0]))
    clipped_mean(np.array([7.0, 9.0], np.float32))    # numpy arrays are traced like tensors
    assert len(traces) == 3
    assert clipped_mean.experimental_get_tracing_count() == 3


def test_python_arguments_are_traced_per_value_and_per_type():
    traces = []

    @ag.convert
    def repeat_add(x, times):
        traces.append(times)
        for _ in range(times):
            x = x + 1
        return x

    x = rt.constant(1)
    assert int(repeat_add(x, 2)) == 3
    assert int(repeat_add(x, 2)) == 3
    assert int(repeat_add(rt.constant(10), 2)) == 12
    assert traces == [2]
    assert int(repeat_add(x, 3)) == 4
    assert traces == [2, 3]
    # the same loop on a tensor count is one graph loop for every count
    assert int(repeat_add(x, rt.constant(5))) == 6
    assert int(repeat_add(x, rt.constant(7))) == 8
    assert len(traces) == 3
    # 1 and 1.0 and True are equal in Python, but they are different Python arguments
    @ag.convert
    def scale(x, k):
        traces.append(type(k))
        return x * k

    for k in (1.0, 2.0, 1.0, True, 1, True):
        assert float(scale(rt.constant(3.0), k)) == 3.0 * k
    assert traces[3:] == [float, float, bool, int]
    assert scale.experimental_get_tracing_count() == 4


def newton_step_count(a, tol):
    x = a
    steps = 0
    while abs(x * x - a) > tol:
        x = (x + a / x) / 2.0
        steps += 1
    return x, steps


def hinge(score, margin=1.0, *, scale=1.0):
    loss = margin - score
    if loss < 0:
        loss = loss * 0.0
    return loss * scale


@pytest.mark.parametrize("f, args, kwargs", [
    (newton_step_count, (10.0, 1e-3), {}),
    (hinge, (0.25,), {}),
    (hinge, (0.25, 2.0), {"scale": 3.0}),
    (hinge, (4.0,), {"margin": 2.0}),
], ids=["newton", "hinge-defaults", "hinge-keywords", "hinge-negative"])
def test_python_scalars_and_tensors_give_the_same_results(f, args, kwargs, tensors):
    assert_equivalent(f, *args, kwargs=kwargs, tensors=tensors)


def test_keyword_arguments_and_defaults_share_one_trace():
    traces = []

    @ag.convert
    def affine(x, w=2.0, b=0.0):
        traces.append(1)
        return x * w + b

    x = rt.constant([1.0, 2.0])
    results = [affine(x), affine(x, 2.0), affine(x=x), affine(x, b=0.0), affine(x, w=2.0, b=0.0)]
    for r in results:
        np.testing.assert_array_equal(r.numpy(), [2.0, 4.0])
    assert len(traces) == 1
    np.testing.assert_array_equal(affine(x, b=1.0).numpy(), [3.0, 5.0])
    assert len(traces) == 2
    # tensors for the defaults: one trace for all their values
    affine(x, rt.constant(3.0), rt.constant(1.0))
    np.testing.assert_array_equal(affine(x, rt.constant(4.0), rt.constant(1.0)).numpy(),
                                  [5.0, 9.0])
    assert len(traces) == 3


Point = collections.namedtuple("Point", ["x", "y"])
Stats = collections.namedtuple("Stats", ["total", "count", "label"])


def summarize(points, weights):
    total = 0.0
    count = 0
    for p in points:
        d = p.x * weights["x"] + p.y * weights["y"]
        if d > 0:
            total += d
            count += 1
    return {"stats": Stats(total, count, "weighted"), "first": (points[0].x, [points[0].y])}


def test_nested_structures_as_arguments_and_results(tensors):
    points = (Point(1.0, 2.0), Point(-3.0, 1.0), Point(0.5, 0.5))
    result = assert_equivalent(summarize, points, {"x": 1.0, "y": 0.5}, tensors=tensors)
    assert result["stats"].label == "weighted"


def test_nested_structures_of_tensors_trace_once_for_new_values():
    converted = ag.convert(summarize)
    for scale in (1.0, 2.0, -1.0):
        points = tuple(Point(rt.constant(scale * a), rt.constant(b))
                       for a, b in [(1.0, 2.0), (-3.0, 1.0)])
        weights = {"y": rt.constant(0.5), "x": rt.constant(1.0)}     # key order is free
        got = converted(points, weights)
        want = summarize(points, weights)
        assert not differences(want, got), differences(want, got)
        assert isinstance(got["stats"], Stats) and isinstance(got["first"][1], list)
    assert converted.experimental_get_tracing_count() == 1


# a dict subclass's tensors are arguments, not constants captured by the first trace
def test_an_ordered_dict_of_tensors_is_an_argument_like_a_dict():
    @ag.convert
    def total(params):
        s = 0.0
        for name in params:
            s += rt.reduce_sum(params[name])
        return s

    params = collections.OrderedDict([("w", rt.constant([1.0, 2.0])), ("b", rt.constant(0.5))])
    assert float(total(params)) == 3.5
    params["b"] = rt.constant(10.0)
    assert float(total(params)) == 13.0


def test_input_signature_with_unknown_dimensions_traces_once():
    traces = []

    @ag.convert(input_signature=[rt.TensorSpec([None, None], rt.float32),
                                 rt.TensorSpec([None], rt.int32)])
    def masked_row_sums(m, keep):
        traces.append(m.shape)
        out = []
        for i in range(len(m)):
            if keep[i] > 0:
                out.append(rt.reduce_sum(m[i]))
            else:
                out.append(0.0)
        return rt.stack(out)

    got = masked_row_sums(rt.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
                          rt.constant([1, 0, 1]))
    np.testing.assert_array_equal(got.numpy(), [3.0, 0.0, 11.0])
    got = masked_row_sums([[1.0, 1.0, 1.0]], [1])           # Python lists are converted
    np.testing.assert_array_equal(got.numpy(), [3.0])
    assert traces == [rt.TensorShape([None, None])]
    assert masked_row_sums.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("bad", [
    rt.constant([1, 2, 3]),                 # int32 for float32
    rt.constant([[1.0, 2.0]]),              # rank 2 for rank 1
    rt.constant(1.0),                       # a scalar
], ids=["dtype", "rank", "scalar"])
def test_input_signature_rejects_incompatible_tensors(bad):
    @ag.convert(input_signature=[rt.TensorSpec([None], rt.float32)])
    def next_collatz(x):
        return rt.where(x > 1.0, x * 0.5, x * 3.0 + 1.0)

    np.testing.assert_array_equal(next_collatz(rt.constant([4.0, 1.0])).numpy(), [2.0, 4.0])
    with pytest.raises((TypeError, ValueError), match=r"TensorSpec\(shape=\(None,\)"):
        next_collatz(bad)
    assert next_collatz.experimental_get_tracing_count() == 1


# TensorFlow binds keywords to their parameters first
def test_input_signature_accepts_keyword_arguments():
    @ag.convert(input_signature=[rt.TensorSpec([None], rt.float32),
                                 rt.TensorSpec([], rt.float32)])
    def shift(x, by):
        return x + by

    np.testing.assert_array_equal(shift(rt.constant([1.0]), by=rt.constant(2.0)).numpy(), [3.0])
    np.testing.assert_array_equal(shift(x=rt.constant([1.0]), by=2.0).numpy(), [3.0])


# -- Python side effects ------------------------------------------------------------------

def test_python_print_in_rt_function_runs_only_while_tracing(capsys):
    @rt.function
    def f(x):
        print("Traced with", x)
        rt.print("Executed with", x)
        return x + 1

    f(rt.constant(1))
    f(rt.constant(2))
    f(rt.constant([1, 2]))
    assert capsys.readouterr().out == (
        'Traced with Tensor("x:0", shape=(), dtype=int32)\n'
        "Executed with 1\n"
        "Executed with 2\n"
        'Traced with Tensor("x:0", shape=(2,), dtype=int32)\n'
        "Executed with [1 2]\n")


def test_print_in_converted_code_prints_on_every_call_like_eager_code(capsys):
    def report(x, label):
        print(label, "got", x)
        if x > 0:
            print("positive:", x * 2)
        return x

    converted = ag.convert(report)
    for value in (3, -1, 5):
        report(rt.constant(value), "eager")
        eager = capsys.readouterr().out
        converted(rt.constant(value), "eager")
        assert capsys.readouterr().out == eager
    assert converted.experimental_get_tracing_count() == 1


def fit_line_with_log(xs, ys, steps):
    w = 0.0
    for step in range(steps):
        loss = rt.reduce_mean(rt.square(w * xs - ys))
        grad = rt.reduce_mean(2.0 * (w * xs - ys) * xs)
        w = w - 0.1 * grad
        if step % 2 == 0:
            print(f"step {step:02d}: loss {loss:.3f}, w={w:.4f}")
    return w


def test_f_strings_in_print_show_the_values_of_each_step(tensors):
    # README: f-strings in print are printed with the values the graph computes
    assert_equivalent(fit_line_with_log, f32(1.0, 2.0, 3.0), f32(2.0, 4.1, 5.9), 5,
                      tensors=tensors)


# the sys.stderr current at each call, as Python's print uses, not the one seen while tracing
def test_print_to_a_stream_uses_the_stream_of_each_call():
    @ag.convert
    def warn(x):
        print("warning:", x, file=sys.stderr)
        return x

    first, second = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(first):
        warn(rt.constant(1))
    with contextlib.redirect_stderr(second):
        warn(rt.constant(2))
    assert (first.getvalue(), second.getvalue()) == ("warning: 1\n", "warning: 2\n")


def test_list_appends_and_globals_change_only_while_tracing():
    global calls_seen
    calls_seen = 0
    seen = []

    @ag.convert
    def double(x):
        global calls_seen
        calls_seen += 1
        seen.append(x)
        return x * 2

    for value in (1.0, 2.0, 3.0):
        assert float(double(rt.constant(value))) == 2 * value
    assert calls_seen == 1 and len(seen) == 1
    assert isinstance(seen[0], rt.SymbolicTensor)
    double(rt.constant([1.0]))
    assert calls_seen == 2


calls_seen = 0
OFFSET = 1


def test_globals_and_closures_are_read_while_tracing():
    global OFFSET
    OFFSET = 1

    @ag.convert
    def add_offset(x):
        return x + OFFSET

    x = rt.constant(1)
    assert int(add_offset(x)) == 2
    OFFSET = 100
    assert int(add_offset(x)) == 2                   # the trace keeps the value it read
    assert int(add_offset(rt.constant([1]))[0]) == 101    # a new trace reads it again

    class Linear:
        def __init__(self):
            self.weight, self.bias = 2.0, 0.0

    @ag.convert
    def evaluate(model, x):
        return model.weight * x + model.bias

    model = Linear()
    assert float(evaluate(model, rt.constant(10.0))) == 20.0
    model.bias = 5.0                                  # a Python attribute: no retrace
    assert float(evaluate(model, rt.constant(10.0))) == 20.0
    assert float(evaluate(Linear(), rt.constant(10.0))) == 20.0


def test_next_on_a_python_iterator_is_frozen_in_the_trace(capsys):
    @ag.convert
    def consume_next(iterator):
        rt.print("Value:", next(iterator))

    iterator = iter([1, 2, 3])
    for _ in range(3):
        consume_next(iterator)
    assert capsys.readouterr().out == "Value: 1\n" * 3


def test_py_function_runs_its_python_on_every_call():
    external = []

    def side_effect(x):
        print("Python side effect")
        external.append(x)

    for decorate in (rt.function, ag.convert):
        external.clear()

        @decorate
        def f(x):
            rt.py_function(side_effect, inp=[x], Tout=[])

        f(1)
        f(1)
        f(1)
        assert len(external) == 3
        assert isinstance(external[0], rt.Tensor) and external[0].numpy() == 1


def test_run_functions_eagerly_runs_the_python_every_call(capsys):
    traces = []

    @ag.convert
    def halve_while_even(n):
        traces.append(1)
        while n % 2 == 0:
            n = n // 2
        print("odd part", n)
        return n

    rt.run_functions_eagerly(True)
    try:
        assert int(halve_while_even(rt.constant(12))) == 3
        assert int(halve_while_even(rt.constant(40))) == 5
        assert len(traces) == 2 and halve_while_even.experimental_get_tracing_count() == 0
    finally:
        rt.run_functions_eagerly(False)
    assert int(halve_while_even(rt.constant(12))) == 3
    assert int(halve_while_even(rt.constant(40))) == 5
    assert len(traces) == 3
    assert capsys.readouterr().out == "odd part 3\nodd part 5\n" * 2


# -- variables ----------------------------------------------------------------------------

def test_a_variable_made_outside_keeps_state_across_calls():
    balance = rt.Variable(0.0)

    def apply_transactions(amounts, fee):
        for a in amounts:
            if a > 0:
                balance.assign_add(a)
            else:
                balance.assign_sub(fee)
        return balance.read_value()

    converted = ag.convert(apply_transactions)
    expected = 0.0
    for amounts in ([1.0, -2.0, 3.0], [5.0, 5.0], [-1.0]):
        got = converted(rt.constant(f32(*amounts)), 0.5)
        expected += sum(a if a > 0 else -0.5 for a in amounts)
        assert float(got) == expected
        assert float(balance.numpy()) == expected          # read after the call
    assert converted.experimental_get_tracing_count() == 3        # three lengths


variable = rt.Variable(1.0)


def reads_see_earlier_writes(x):
    variable.assign(1.5)
    old = variable.read_value()
    if x > 0:
        variable.assign(variable * x)
    else:
        variable.assign(old - 1.0)
    new = variable.read_value()
    doubled = variable * 2.0
    variable.assign_add(old)
    return old, new, doubled, variable.read_value()


def running_max_in_variable(xs):
    variable.assign(-100.0)
    gains = []
    for x in xs:
        before = variable.read_value()
        if x > before:
            variable.assign(x)
        gains.append(variable - before)
    return rt.stack(gains), variable.read_value()


def doubling_until(limit):
    variable.assign(1.0)
    steps = 0
    while variable < limit:
        variable.assign(variable * 2.0)
        steps += 1
    return steps, variable + 0.0


@pytest.mark.parametrize("f, args", [
    (reads_see_earlier_writes, (3.0,)),
    (reads_see_earlier_writes, (-3.0,)),
    (running_max_in_variable, (f32(1.0, 3.0, 2.0, 5.0),)),
    (doubling_until, (100.0,)),
], ids=["write-then-read-positive", "write-then-read-negative", "running-max", "doubling"])
def test_reads_and_writes_of_a_variable_keep_program_order(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


def test_a_variable_created_on_the_first_call_only():
    class Count:
        def __init__(self):
            self.count = None

        @ag.convert
        def __call__(self):
            if self.count is None:
                self.count = rt.Variable(0)
            return self.count.assign_add(1)

    c = Count()
    assert [int(c()) for _ in range(3)] == [1, 2, 3]
    assert int(c.count.numpy()) == 3


def test_a_variable_created_on_every_call_is_an_error_where_eager_code_makes_a_new_one():
    def accumulate(x):
        v = rt.Variable(1.0)
        v.assign_add(x)
        return v.read_value()

    assert [float(accumulate(x)) for x in (1.0, 2.0, 2.0)] == [2.0, 3.0, 3.0]
    converted = ag.convert(accumulate)
    with pytest.raises(ValueError, match="created while tracing 'accumulate' a second time") \
            as info:
        converted(rt.constant(1.0))
    message = str(info.value)
    assert "v = rt.Variable(1.0)" in message and "test_function_guide.py" in message
    assert "if self.v is None" in message            # how to create it once


def test_variables_made_on_the_first_call_agree_with_eager_from_the_first_call():
    class Running:
        def __init__(self):
            self.total = None

        def __call__(self, x):
            if self.total is None:
                self.total = rt.Variable(rt.zeros([2]) + 1.0)
                print("made the total")
            self.total.assign_add(x)
            return self.total.read_value()

    xs = [rt.constant(f32(1.0, 2.0)), rt.constant(f32(0.5, 0.5)), rt.constant(f32(-1.0, 0.0))]
    eager = Running()
    expected = [eager(x).numpy() for x in xs]
    converted = Running()
    converted.__call__ = ag.convert(converted.__call__)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        got = [converted.__call__(x).numpy() for x in xs]
    np.testing.assert_array_equal(got, expected)
    assert out.getvalue() == "made the total\n"      # the first call only, as eagerly
    assert converted.__call__.experimental_get_tracing_count() == 1


def test_a_python_flag_is_checked_while_tracing_the_variable_assigned_every_call():
    class Model:
        def __init__(self):
            self.v = rt.Variable(0)
            self.counter = 0

        @ag.convert
        def __call__(self):
            if self.counter == 0:
                self.counter += 1
                self.v.assign_add(1)
            return self.v

    m = Model()
    assert [int(m()) for _ in range(3)] == [1, 2, 3]
    assert m.counter == 1


def numpy_value_of_variable(x, v):
    return x * v.numpy()


def numpy_sum_of_variable(x, v):
    return x * np.sum(v)


# Each call sees the variable's value, or tracing refuses numpy() as TensorFlow does inside a
# graph (and as a symbolic tensor refuses __array__).
@pytest.mark.parametrize("f", [numpy_value_of_variable, numpy_sum_of_variable])
def test_a_variables_numpy_value_is_not_frozen_into_the_trace(f):
    v = rt.Variable([1.0, 2.0])
    converted = ag.convert(f)

    def two_calls():
        first = converted(rt.constant(1.0), v).numpy()
        v.assign([5.0, 5.0])
        return first, converted(rt.constant(1.0), v).numpy()

    try:
        first, second = two_calls()
    except (TypeError, ValueError, AttributeError, NotImplementedError):
        return                              # refusing it while tracing, as TensorFlow does
    np.testing.assert_array_equal(first, f(rt.constant(1.0), rt.Variable([1.0, 2.0])).numpy())
    np.testing.assert_array_equal(second, f(rt.constant(1.0), v).numpy())


def test_variables_passed_as_arguments():
    @ag.convert
    def decay(var, rate, steps):
        for _ in range(steps):
            if var > 1.0:
                var.assign(var * rate)
        return var.read_value()

    a, b = rt.Variable(10.0), rt.Variable(100.0)
    assert float(decay(a, 0.5, rt.constant(3))) == 1.25
    assert float(decay(b, 0.5, rt.constant(3))) == 12.5
    assert float(decay(a, 0.5, rt.constant(3))) == 0.625
    assert (float(a.numpy()), float(b.numpy())) == (0.625, 12.5)


# -- methods, layers, calls ------------------------------------------------------------------

class GatedDense:
    """A model holding a layer and a variable, with a converted method."""

    def __init__(self):
        rt.random.set_seed(7)
        self.dense = rt.layers.Dense(2)
        self.calls = rt.Variable(0)

    def forward(self, x):
        self.calls.assign_add(1)
        self.clipped = 0                # a Python attribute counted in a tensor `if`
        y = self.dense(x)
        for i in range(len(y)):
            if rt.reduce_sum(y[i]) < 0:
                self.clipped += 1
        if rt.reduce_sum(y) > 0:
            y = rt.relu(y)
        return y, self.clipped

    __call__ = ag.convert(forward)


def test_a_converted_method_with_a_dense_layer_matches_eager():
    x = rt.constant([[1.0, 2.0, 3.0], [-1.0, 0.5, -2.0]])
    converted = GatedDense()
    got = [converted(x)]                   # the layer takes its weights on its first call
    plain = GatedDense()
    want = [plain.forward(x)]
    got.append(converted(x))
    want.append(plain.forward(x))
    assert not differences(want, got), differences(want, got)
    assert int(converted.calls.numpy()) == int(plain.calls.numpy()) == 2
    np.testing.assert_allclose(converted.dense.kernel.numpy(), plain.dense.kernel.numpy())


def train_step(layer, opt, x, y):
    with rt.GradientTape() as tape:
        loss = rt.reduce_mean(rt.square(layer(x) - y))
    grads = tape.gradient(loss, layer.trainable_variables)
    opt.apply_gradients(zip(grads, layer.trainable_variables))
    return loss


def test_a_training_step_retraces_for_a_new_batch_size_and_keeps_training():
    batches = [(f32([1.0, 2.0]), f32([1.0])),
               (f32([1.0, 2.0], [0.0, 1.0], [2.0, 0.0]), f32([1.0], [0.0], [2.0]))] * 2
    losses = {}
    for name, step in (("eager", train_step), ("converted", ag.convert(train_step))):
        rt.random.set_seed(0)
        layer, opt = rt.layers.Dense(1), rt.optimizers.Adam(0.1)
        losses[name] = [float(step(layer, opt, rt.constant(x), rt.constant(y)))
                        for x, y in batches]
        losses[name + " kernel"] = layer.kernel.numpy()
    np.testing.assert_allclose(losses["converted"], losses["eager"], rtol=1e-5)
    np.testing.assert_allclose(losses["converted kernel"], losses["eager kernel"], rtol=1e-5)


class Recurrent:
    def __init__(self):
        rt.random.set_seed(1)
        self.cell = rt.layers.Dense(3, activation=rt.tanh)

    def run(self, xs):
        h = rt.zeros([1, 3])
        for x in xs:                           # the layer is built inside the loop body
            h = self.cell(rt.concat([x, h], 1))
        return h

    converted_run = ag.convert(run)


def test_a_layer_first_called_inside_a_tensor_loop():
    xs = rt.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 1, 3))
    want = Recurrent().run(xs)
    model = Recurrent()
    for _ in range(2):
        np.testing.assert_allclose(model.converted_run(xs).numpy(), want.numpy(), rtol=1e-5)


@ag.convert
def absolute(x):
    if x >= 0:
        return x
    return -x


@ag.convert
def manhattan(p, q):
    total = 0.0
    for a, b in zip(p, q):
        total += absolute(a - b)
    return total


def test_converted_functions_calling_converted_functions():
    p, q = rt.constant([1.0, -2.0, 3.0]), rt.constant([0.0, 2.0, 5.0])
    assert float(manhattan(p, q)) == 7.0
    assert float(manhattan([1.0, 2.0], [3.0, 1.0])) == 3.0      # unrolled, Python lists
    text = str(manhattan.get_concrete_function(p, q).graph)
    assert "call(" in text and "absolute" in text              # the callee is one call op
    assert f"{HERE}:{line_of(absolute.python_function, 'if x >= 0')}" in text


class Shape:
    def __init__(self, k):
        self.k = rt.Variable(k)

    @ag.convert
    def area(self, x):
        return self.magnitude(x) * self.k

    @ag.convert
    def magnitude(self, x):
        if x > 0:
            return x
        return -x


class Square(Shape):
    @ag.convert
    def area(self, x):
        a = super().area(x)
        while a > 10.0:
            a = a / 2.0
        return a


def test_converted_methods_calling_each_other_and_super():
    s = Shape(2.0)
    assert float(s.area(rt.constant(-3.0))) == 6.0
    s.k.assign(5.0)                                   # a variable: read on every call
    assert float(s.area(rt.constant(-3.0))) == 15.0
    assert float(Square(5.0).area(rt.constant(-3.0))) == 7.5
    assert float(Square(1.0).area(rt.constant(4.0))) == 4.0


def make_scaler(scale):
    s = rt.constant(scale)

    @ag.convert
    def scaled(x):
        if x > 0:
            return x * s
        return x
    return scaled


def closures_and_lambdas(x, k):
    bias = 0.5
    shift = lambda v: v + bias
    pick = lambda v: v * k if v > 0 else -v
    add_two = functools.partial(lambda a, b: a + b, 2.0)
    return add_two(shift(pick(x))), [pick(v) for v in (x, -x)]


def partial_of_a_converted_function(x, w):
    affine = functools.partial(weighted, w=w)
    return affine(x, b=1.0), affine(-x, b=-1.0)


def weighted(x, w, b):
    if b > 0:
        return x * w + b
    return x * w


def test_closures_over_tensors_make_their_own_graphs():
    assert float(make_scaler(2.0)(rt.constant(3.0))) == 6.0
    assert float(make_scaler(5.0)(rt.constant(3.0))) == 15.0
    assert float(make_scaler(5.0)(rt.constant(-3.0))) == -3.0


@pytest.mark.parametrize("f, args", [
    (closures_and_lambdas, (1.5, 3.0)),
    (closures_and_lambdas, (-1.5, 3.0)),
    (partial_of_a_converted_function, (2.0, 3.0)),
], ids=["lambdas-positive", "lambdas-negative", "partial"])
def test_closures_lambdas_and_partials(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


def test_converted_lambdas_partials_and_callable_objects():
    absval = ag.convert(lambda x: x if x > 0 else -x)
    assert int(absval(rt.constant(-3))) == 3
    inc, dec = ag.convert(lambda x: x + 1), ag.convert(lambda x: x - 1)
    assert (int(inc(rt.constant(1))), int(dec(rt.constant(1)))) == (2, 0)
    triple = ag.convert(functools.partial(weighted, w=rt.constant(3.0)))
    assert float(triple(rt.constant(2.0), b=rt.constant(1.0))) == 7.0
    assert float(triple(rt.constant(2.0), b=rt.constant(-1.0))) == 6.0

    class Thresholded:
        def __init__(self):
            self.w = rt.Variable([1.0, -1.0])

        def __call__(self, x):
            y = rt.reduce_sum(self.w * x)
            if y > 0:
                y = y * 10.0
            return y

    model = Thresholded()
    converted = ag.convert(model)
    assert float(converted(rt.constant([3.0, 1.0]))) == 20.0
    assert float(converted(rt.constant([1.0, 3.0]))) == -2.0
    model.w.assign([2.0, 2.0])
    assert float(converted(rt.constant([1.0, 3.0]))) == 80.0


K = 3


SCALERS = [lambda v, k=k: v * k if v > 0 else v for k in range(3)]


def apply_scalers(x):
    out = []
    for scale in SCALERS:
        out.append(scale(x))
    return out


# a lambda converted on its own has no enclosing scope for its defaults to be read in
def test_a_converted_lambda_with_a_default_read_from_a_name():
    scale = ag.convert(lambda x, k=K: x * k)
    assert int(scale(rt.constant(2))) == 6


@pytest.mark.parametrize("f, tensors", cases(apply_scalers))
def test_lambdas_with_loop_defaults_called_from_converted_code(f, tensors):
    assert_equivalent(f, 2, tensors=tensors)
    assert_equivalent(f, -2, tensors=tensors)


def power(x, n):
    if n == 0:
        return rt.ones_like(x)
    if n % 2 == 0:
        half = power(x, n // 2)
        return half * half
    return x * power(x, n - 1)


def nested_sum(tree, x):
    if isinstance(tree, (list, tuple)):
        total = 0.0
        for child in tree:
            total += nested_sum(child, x)
        return total
    if x > tree:
        return x - tree
    return tree * 1.0


@pytest.mark.parametrize("f, args", [
    (power, (1.5, static(10))),
    (nested_sum, (static([1.0, [2.0, [3.0, 4.0]], 5.0]), 3.5)),
], ids=["power", "nested-sum"])
def test_recursion_on_a_python_depth(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


def test_recursion_inside_a_converted_function_is_one_trace():
    converted = ag.convert(power)
    assert float(converted(rt.constant(2.0), 10)) == 1024.0
    assert converted.experimental_get_tracing_count() == 1
    assert float(converted(rt.constant(3.0), 10)) == 59049.0
    assert converted.experimental_get_tracing_count() == 1


# -- the seeds' examples, converted (tests/runtime/test_seeds.py has them as written) ---------

def test_a_converted_function_inside_a_session_graph():
    @ag.convert
    def sum_until(xs, limit):
        s = 0.0
        for x in xs:
            if s + x > limit:
                break
            s += x
        return s

    g = rt.Graph()
    with g.as_default():
        xs = rt.placeholder(rt.float32, shape=[None])
        limit = rt.placeholder(rt.float32, shape=[])
        total = sum_until(xs, limit)
        w = rt.Variable(2.0)
        scaled = total * w
        with rt.Session() as sess:
            sess.run(rt.global_variables_initializer())
            out = sess.run({"total": total, "both": (total, scaled)},
                           feed_dict={xs: [1.0, 2.0, 3.0, 4.0], limit: 7.0})
            assert float(out["total"]) == 6.0 and float(out["both"][1]) == 12.0
            assert float(sess.run(total, feed_dict={xs: [5.0, 1.0], limit: 2.0})) == 0.0
    assert float(sum_until(rt.constant([1.0, 2.0, 3.0, 4.0]), rt.constant(7.0))) == 6.0


def test_printing_the_elements_of_a_tensor_in_converted_code(capsys):
    @ag.convert
    def print_cells(m):
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                print(m[i, j])
        for row in m:
            print(np.square(row.shape[0]), row)

    for m in (rt.constant([[0.25, 0.5], [0.75, 1.0]]), rt.constant([[-1.5, 2.0], [3.0, 4.5]])):
        print_cells.python_function(m)
        eager = capsys.readouterr().out
        print_cells(m)
        assert capsys.readouterr().out == eager
    assert eager == "-1.5\n2.0\n3.0\n4.5\n4 [-1.5  2. ]\n4 [3.  4.5]\n"
    assert print_cells.experimental_get_tracing_count() == 1


class Affine:
    @rt.function
    def __call__(self, a, x, v):
        print("tracing Affine")
        return rt.matmul(a, x) + v


class Wrapper:
    def __init__(self):
        self.affine = Affine()

    @rt.function
    def __call__(self, v):
        a = rt.constant([[10, 10], [11.0, 1.0]])
        x = rt.constant([[1.0, 0.0], [0.0, 1.0]])
        y = self.affine(a, x, v)
        print("PRINT: ", y)                 # while tracing: the symbolic tensor
        rt.print("RT-PRINT: ", y)           # on every call: the value
        return y


def test_nested_graph_functions_print_while_tracing_and_when_running(capsys):
    v = rt.Variable(12.0)
    f = Wrapper()
    np.testing.assert_array_equal(f(v).numpy(), [[22.0, 22.0], [23.0, 13.0]])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "tracing Affine"
    assert out[1].startswith('PRINT:  Tensor("') and "shape=(2, 2)" in out[1]
    assert out[2:] == ["RT-PRINT:  [[22. 22.]", " [23. 13.]]"]
    v.assign(0.0)
    np.testing.assert_array_equal(f(v).numpy(), [[10.0, 10.0], [11.0, 1.0]])
    assert capsys.readouterr().out == "RT-PRINT:  [[10. 10.]\n [11.  1.]]\n"


def square(x):
    return x ** 2


def test_the_gradient_apis_work_without_eager_execution_too():
    g = rt.Graph()
    with g.as_default():
        x = rt.placeholder(rt.float32, shape=[])
        (dx,) = rt.gradients_function(square)(x)
        value, (dx2,) = rt.value_and_gradients_function(square)(x)
        w = rt.Variable(2.0)

        def loss(y):
            return (y - w ** 2) ** 2

        [(dw, var)] = rt.implicit_gradients(loss)(x)
        assert var is w
        with rt.Session() as sess:
            sess.run(rt.global_variables_initializer())
            assert [float(r) for r in sess.run([dx, value, dx2], feed_dict={x: 3.0})] == \
                [6.0, 9.0, 6.0]
            assert float(sess.run(dw, feed_dict={x: 7.0})) == -24.0


def test_gradients_of_converted_functions():
    grad = rt.gradients_function(ag.convert(square))
    assert float(grad(rt.constant(3.0))[0]) == 6.0

    @ag.convert
    def power_then_shrink(x, n):
        y = rt.ones_like(x)
        i = 0
        while i < n:
            y = y * x
            i += 1
        if y > 100.0:
            y = y / 10.0
        return y

    for x, want in [(2.0, 12.0), (5.0, 7.5)]:             # d/dx x^3, then (x^3 / 10)'
        g = rt.gradients_function(power_then_shrink)(rt.constant(x), rt.constant(3))
        assert float(g[0]) == want and g[1] is None
    w = rt.Variable(2.0)

    @ag.convert
    def loss(y):
        return (y - w ** 2) ** 2

    [(g, var)] = rt.implicit_gradients(loss)(7.0)
    assert float(g) == -24.0 and var is w


# not the Python float's digits (numpy=0.10000000149011612)
def test_eager_tensor_reprs_show_float32_digits():
    # TensorFlow: <tf.Tensor: shape=(), dtype=float32, numpy=0.1>; str() already agrees
    assert repr(rt.constant(0.1)) == "<rt.Tensor: shape=(), dtype=float32, numpy=0.1>"
    third = rt.constant(1.0) / 3.0
    assert str(third) == "0.33333334"
    assert repr(third) == "<rt.Tensor: shape=(), dtype=float32, numpy=0.33333334>"


def test_only_the_operations_a_graph_needs_run():
    def unused_gather(x):
        rt.gather(x, [1])                   # out of range for a 1-element x; result unused
        return x

    with pytest.raises(IndexError):
        unused_gather(rt.constant([0.0]))               # eagerly every op runs
    # a graph prunes what its results do not need (the default passes; RT_OPTIMIZE=0 runs
    # every op, which TensorFlow also allows: "do not rely on an error being raised")
    with rt.config.options(optimizations=True):
        for graph_fn in (rt.function(unused_gather), ag.convert(unused_gather)):
            np.testing.assert_array_equal(graph_fn(rt.constant([0.0])).numpy(), [0.0])


def test_gradients_through_graph_functions_of_variables():
    @rt.function
    def add(a, b):
        return a + b

    @rt.function
    def dense_layer(x, w, b):
        return add(rt.matmul(x, w), b)

    v = rt.Variable(1.0)
    with rt.GradientTape() as tape:
        result = add(v, 1.0)
    assert float(tape.gradient(result, v)) == 1.0
    np.testing.assert_array_equal(dense_layer(rt.ones([3, 2]), rt.ones([2, 2]),
                                              rt.ones([2])).numpy(), np.full((3, 2), 3.0))


def squared_error_step(w, x, y, optimizer):
    with rt.GradientTape() as tape:
        loss = rt.reduce_sum(rt.square(w * x - y))
    gradients = tape.gradient(loss, [w])
    optimizer.apply_gradients(zip(gradients, [w]))
    return loss


def test_one_step_function_with_two_optimizers():
    runs = {}
    converted = ag.convert(squared_error_step)
    for name, step in (("eager", squared_error_step), ("converted", converted)):
        fast, slow = rt.optimizers.Adam(learning_rate=1e-2), rt.optimizers.Adam(learning_rate=1e-3)
        w, x, y = rt.Variable(2.0), rt.constant([-1.0]), rt.constant([2.0])
        fast.build([w])         # the second trace may create no variables: slots made now
        slow.build([w])
        runs[name] = [float(step(w, x, y, opt)) for opt in (fast, slow, fast, slow)]
        runs[name].append(float(w.numpy()))
    np.testing.assert_allclose(runs["converted"], runs["eager"], rtol=1e-6)


def test_an_optimizer_first_used_by_a_later_trace_must_be_built_first():
    step = ag.convert(squared_error_step)
    w, x, y = rt.Variable(2.0), rt.constant([-1.0]), rt.constant([2.0])
    step(w, x, y, rt.optimizers.Adam())
    with pytest.raises(ValueError, match="rt.Variable 'Adam/iterations' created while "
                       "tracing 'squared_error_step' again") as info:
        step(w, x, y, rt.optimizers.Adam())          # a new optimizer: a second trace
    assert "only on its first trace" in str(info.value)


def tanh_until_small(x):
    while rt.reduce_sum(x) > 1:
        rt.print(x)
        x = rt.tanh(x)
    return x


def test_a_printing_tensor_loop_prints_what_eager_code_prints():
    rt.random.set_seed(11)
    assert_equivalent(tanh_until_small, rt.random.uniform([5]))


# -- get_concrete_function and the graph's text ------------------------------------------------

def test_concrete_functions_and_the_graph_as_text():
    @ag.convert
    def relu_sum(x, bias):
        y = rt.matmul(x, x)
        if rt.reduce_sum(y) > bias:
            y = rt.relu(y - bias)
        return y

    vector_spec = rt.TensorSpec([None, None], rt.float32)
    concrete = relu_sum.get_concrete_function(vector_spec, rt.TensorSpec([], rt.float32))
    assert relu_sum.get_concrete_function(vector_spec, rt.TensorSpec([], rt.float32)) \
        is concrete
    a = rt.constant([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(concrete(a, rt.constant(10.0)).numpy(),
                                  [[0.0, 0.0], [5.0, 12.0]])
    assert relu_sum.get_concrete_function(a, rt.constant(1.0)) is not concrete
    text = str(concrete.graph)
    for op in ("matmul", "reduce_sum", "cond", "relu", "greater"):
        assert op in text, text
    fn = relu_sum.python_function
    for source in ("rt.matmul(x, x)", "if rt.reduce_sum", "rt.relu(y - bias)"):
        assert f"{HERE}:{line_of(fn, source)}" in text, text
    with pytest.raises((TypeError, ValueError)):
        concrete(rt.constant([1.0, 2.0]), rt.constant(1.0))    # rank 1 for [None, None]


def test_a_concrete_function_for_an_unknown_rank_and_a_python_argument():
    @ag.convert
    def pow_(a, b):
        return a ** b

    square_fn = pow_.get_concrete_function(a=rt.TensorSpec(None, rt.float32), b=2)
    assert float(square_fn(rt.constant(10.0))) == 100.0
    np.testing.assert_array_equal(square_fn(rt.constant([1.0, 3.0])).numpy(), [1.0, 9.0])


# dtypes too, not structure only: a float32 spec does not get the int32 trace
def test_get_concrete_function_checks_specs_against_the_input_signature():
    @rt.function(input_signature=(rt.TensorSpec(shape=[None], dtype=rt.int32),))
    def next_collatz(x):
        return rt.where(x % 2 == 0, x // 2, 3 * x + 1)

    concrete = next_collatz.get_concrete_function(rt.TensorSpec([None], rt.int32))
    assert concrete is next_collatz.get_concrete_function()
    with pytest.raises((TypeError, ValueError)):
        next_collatz.get_concrete_function(rt.TensorSpec([None], rt.float32))


# -- errors -------------------------------------------------------------------------------------

def branch_on_tensor(x):
    if x > 0:
        return x
    return -x


def loop_on_tensor(x):
    while x < 10:
        x = x + 1
    return x


def and_on_tensors(x):
    return x > 0 and x < 5


@pytest.mark.parametrize("f, text", [
    (branch_on_tensor, "if x > 0"),
    (loop_on_tensor, "while x < 10"),
    (and_on_tensors, "return x > 0"),
], ids=["if", "while", "and"])
def test_a_symbolic_tensor_as_a_python_bool_without_conversion(f, text):
    with pytest.raises(TypeError) as info:
        rt.function(f)(rt.constant(1))
    message = str(info.value)
    assert "autograph.convert" in message and "rt.cond" in message, message
    assert f"{HERE}:{line_of(f, text)}" in message, message
    assert int(ag.convert(f)(rt.constant(1))) == int(f(rt.constant(1)))


def test_an_unconverted_callee_says_to_convert_it():
    @ag.convert(recursive=False)
    def outer(x):
        return branch_on_tensor(x) + 1

    with pytest.raises(TypeError, match="autograph.convert"):
        outer(rt.constant(-2))
    assert int(ag.convert(outer.python_function)(rt.constant(-2))) == 3


class ConfigError(Exception):
    pass


def lookup(table, key):
    return table[key]


def scaled_by_table(x, key):
    table = {"a": 1.0, "b": 2.0}
    if x > 0:
        x = x * lookup(table, key)
    return x


def check_steps(xs, n):
    for x in xs:
        if n > 2:
            raise ConfigError(f"n too big: {n}")
    return xs


@pytest.mark.parametrize("f, args, error, text", [
    (scaled_by_table, (rt.constant(1.0), "c"), KeyError, "return table[key]"),
    (check_steps, (rt.constant([1, 2]), 3), ConfigError, "raise ConfigError"),
], ids=["key-error", "own-exception"])
def test_a_python_exception_keeps_its_type_and_names_the_users_line(f, args, error, text):
    with pytest.raises(error) as info:
        ag.convert(f)(*args)
    frames = full_text(info.value)
    where = lookup if error is KeyError else f
    assert f'{HERE}", line {line_of(where, text)}' in frames, frames


def test_a_tensor_leaked_from_a_trace_is_a_clear_error():
    leaked = []

    @ag.convert
    def leaky(a):
        leaked.append(a + 1)
        return a + 2

    assert int(leaky(rt.constant(1))) == 3
    with pytest.raises(TypeError, match="outside the graph"):
        leaked[0] + 1


def test_a_leaked_tensor_has_no_numpy_like_tensorflows_graph_tensors():
    # The guide's leaky_function: `x.numpy()` on the leaked tensor, catching AttributeError
    leaked = []

    @ag.convert
    def leaky(a):
        leaked.append(a + 1)
        return a + 2

    leaky(rt.constant(1))
    with pytest.raises(AttributeError):
        leaked[0].numpy()


def test_a_list_grown_in_a_tensor_loop_can_be_returned():
    @ag.convert
    def squares(n):
        out = []
        for i in range(n):
            out.append(i * i)
        return out

    got = squares(rt.constant(4))
    values = got.numpy() if isinstance(got, rt.Tensor) else [int(v) for v in got]
    assert list(values) == [0, 1, 4, 9]
