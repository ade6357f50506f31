"""Devices: `rt.device` scopes, eager copies, the placement pass's copy ops, soft placement,
and kernels written once against the array API.

The stand-ins strict:0 and strict:1 (array_api_strict's "device1" and "device2") refuse
arrays of another device, numpy's included: a copy the runtime forgot fails. The tests
set cpu:0 as the default device (whatever RT_DEVICE says) and name the devices they use;
tests of a GPU (gpu:0, CuPy) skip where CuPy sees none.
"""
import io
import json
import os
import subprocess
import sys
import textwrap
import threading
import contextlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import autograph as ag
import runtime as rt
from runtime import devices
from runtime.ops import registry
from pass_testing import expect, text

pytest.importorskip("array_api_strict")
pytestmark = pytest.mark.usefixtures("on_cpu")

X = np.arange(6, dtype=np.float32).reshape(2, 3) / 4 - 0.5


@contextlib.contextmanager
def placements_logged():
    """Capture what `rt.config.set_log_device_placement(True)` prints (stderr)."""
    log = io.StringIO()
    rt.config.set_log_device_placement(True)
    try:
        with contextlib.redirect_stderr(log):
            yield log
    finally:
        rt.config.set_log_device_placement(False)


# -- names and the list of devices -------------------------------------------------------------

def test_this_machine_lists_cpu_and_the_two_stand_ins():
    names = rt.config.list_devices()
    assert names[0] == "cpu:0" and {"strict:0", "strict:1"} <= set(names)
    assert all(n == "cpu:0" or n.startswith(("gpu:", "strict:")) for n in names)


@pytest.mark.parametrize("given,canonical", [
    ("cpu:0", "cpu:0"), ("CPU", "cpu:0"), ("/GPU:1", "gpu:1"), ("/device:GPU:0", "gpu:0"),
    ("strict:01", "strict:1"), ("/job:localhost/replica:0/task:0/device:CPU:0", "cpu:0")])
def test_device_names_read_as_in_tensorflow(given, canonical):
    assert devices.canonical(given) == canonical


@pytest.mark.parametrize("bad", ["tpu:0", "gpu0", "gpu:-1", ""])
def test_an_unknown_device_name_is_a_value_error_naming_it(bad):
    with pytest.raises(ValueError, match=f"Unknown device {bad!r}"):
        with rt.device(bad):
            pass


# -- eager ops: on their scope's device, inputs copied there -----------------------------------

def test_eager_ops_run_on_their_scopes_device_and_copy_their_inputs():
    x = rt.constant(X)                                   # cpu:0
    with rt.device("strict:0"):
        y = rt.tanh(x) * 2.0
    with rt.device("strict:1"):
        z = y + x                                        # from strict:0 and cpu:0
    w = z - 1.0                                          # outside any scope: the default
    assert (x.device, y.device, z.device, w.device) == ("cpu:0", "strict:0", "strict:1", "cpu:0")
    np.testing.assert_allclose(w.numpy(), np.tanh(X) * 2 + X - 1, rtol=1e-6)


def test_device_tensors_read_like_cpu_ones():
    with rt.device("strict:1"):
        t = rt.constant([[1.5, 2.0], [3.0, -4.0]])
        s = rt.constant(7)
    cpu = rt.constant([[1.5, 2.0], [3.0, -4.0]])
    assert (str(t), repr(t)) == (str(cpu), repr(cpu))
    assert isinstance(t.numpy(), np.ndarray) and np.asarray(t).tolist() == cpu.numpy().tolist()
    assert np.square(t).tolist() == np.square(cpu).tolist()          # __array__: to the host
    assert (int(s), float(s), f"{s:03d}", [r.device for r in t]) == (7, 7.0, "007",
                                                                     ["strict:1"] * 2)
    assert t._value.device == devices.get("strict:1").native    # the device's own array


def test_a_kernel_given_arrays_of_two_devices_fails_so_copies_are_needed():
    with rt.device("strict:0"):
        a = rt.constant([1.0, 2.0])
    with rt.device("strict:1"):
        b = rt.constant([1.0, 2.0])
    add = registry.get("add").kernel_for(devices.get("strict:1"))
    with pytest.raises(ValueError, match="different devices"):
        add(a._value, b._value)
    with pytest.raises(Exception):
        np.add(a._value, 1.0)                               # nor numpy, without a copy
    with rt.device("strict:1"):
        assert (a + b).numpy().tolist() == [2.0, 4.0]       # the op copies `a`


def test_device_scopes_belong_to_their_thread():
    seen = []
    with rt.device("strict:1"):
        thread = threading.Thread(target=lambda: seen.append(rt.constant(1.0).device))
        thread.start()
        thread.join()
        seen.append(rt.constant(1.0).device)
    assert seen == ["cpu:0", "strict:1"]


# -- graphs: devices recorded while tracing, copies made by the placement pass ------------------

def split_work(x):
    with rt.device("strict:1"):
        y = x * 2.0
    with rt.device("strict:0"):
        z = y + x
    return rt.tanh(z)


def test_traced_ops_record_their_scope_and_placement_adds_the_copies():
    concrete = rt.function(split_work).get_concrete_function(rt.TensorSpec([3]))
    assert text(concrete.graph) == expect("""
        graph split_work(x: f32[3]) {
          const: f32[] = const[value=2.]() @strict:1
          multiply: f32[3] = multiply(x, const) @strict:1
          add: f32[3] = add(multiply, x) @strict:0
          tanh: f32[3] = tanh(add)
          return tanh
        }""")
    with rt.config.options(optimizations=False):
        placed = concrete.optimized_graph
    assert text(placed) == expect("""
        graph split_work(x: f32[3]) {
          const: f32[] = const[value=2.]() @strict:1
          x_to_strict1: f32[3] = copy[to='strict:1'](x)
          multiply: f32[3] = multiply(x_to_strict1, const) @strict:1
          multiply_to_strict0: f32[3] = copy[to='strict:0'](multiply)
          x_to_strict0: f32[3] = copy[to='strict:0'](x)
          add: f32[3] = add(multiply_to_strict0, x_to_strict0) @strict:0
          add_to_cpu0: f32[3] = copy[to='cpu:0'](add)
          tanh: f32[3] = tanh(add_to_cpu0)
          return tanh
        }""")
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    for executor in ("fast", "plain"):
        for optimizations in (True, False):
            with rt.config.options(executor=executor, optimizations=optimizations):
                got = concrete(rt.constant(x))
            assert got.device == "cpu:0"
            np.testing.assert_allclose(got.numpy(), np.tanh(3 * x), rtol=1e-6)


def test_a_constant_read_on_two_devices_is_made_on_each_not_copied():
    def f(x):
        c = rt.constant([1.0, 2.0, 3.0])
        with rt.device("strict:1"):
            y = x * c
        return y + c
    placed = rt.function(f).get_concrete_function(rt.TensorSpec([3])).optimized_graph
    assert [op.type for op in placed.ops].count("copy") == 2          # x there, y back
    assert sorted(op.device for op in placed.ops if op.type == "const") == ["cpu:0", "strict:1"]


def test_a_function_traced_in_a_scope_is_traced_again_in_another_and_returns_there():
    f = rt.function(lambda x: rt.exp(x) + 1.0)
    x = rt.constant([0.0, 1.0])
    results = []
    for name in ("strict:0", "strict:1", None, "strict:0"):
        with rt.device(name):
            results.append(f(x))
    assert [r.device for r in results] == ["strict:0", "strict:1", "cpu:0", "strict:0"]
    assert f.experimental_get_tracing_count() == 3
    for r in results:
        np.testing.assert_allclose(r.numpy(), np.exp([0.0, 1.0]) + 1, rtol=1e-6)


@pytest.mark.parametrize("signature", [None, [rt.TensorSpec([2], rt.float32)]])
def test_repeated_calls_run_where_they_are_made_not_where_an_earlier_call_ran(signature):
    """Calls with the same arguments, repeated (the dispatch cache's calls), in one scope
    and then another, and after the default device changed."""
    f = rt.function(lambda x: rt.exp(x) + 1.0, input_signature=signature)
    x = rt.constant([0.0, 1.0])
    devices_seen = []
    for name in (None, None, "strict:1", "strict:1", None, None):
        with rt.device(name):
            devices_seen.append(f(x).device)
    assert devices_seen == ["cpu:0"] * 2 + ["strict:1"] * 2 + ["cpu:0"] * 2
    assert f.experimental_get_tracing_count() == 2
    with rt.config.options(default_device="strict:0"):
        got = [f(x), f(x)]
    assert [r.device for r in got] == ["strict:0", "strict:0"]
    np.testing.assert_allclose(got[1].numpy(), np.exp([0.0, 1.0]) + 1, rtol=1e-6)
    assert f(x).device == "cpu:0"


def test_variables_live_where_they_were_made_and_their_updates_run_there():
    with rt.device("strict:1"):
        v = rt.Variable([1.0, 2.0])
    w = rt.Variable([10.0, 20.0])
    opt = rt.optimizers.SGD(0.5)

    @rt.function
    def step(x):
        with rt.GradientTape() as tape:
            with rt.device("strict:0"):
                loss = rt.reduce_sum(v * x + w)
        opt.apply_gradients(zip(tape.gradient(loss, [v, w]), [v, w]))
        return loss

    assert (v.device, w.device) == ("strict:1", "cpu:0")
    loss = step(rt.constant([3.0, 4.0]))
    assert float(loss) == 41.0
    assert v.numpy().tolist() == [-0.5, 0.0] and w.numpy().tolist() == [9.5, 19.5]
    assert v.device == "strict:1" and v.read_value().device == "strict:1"


def test_gradient_ops_run_on_the_device_of_the_op_they_differentiate():
    @rt.function
    def grad(x):
        with rt.device("strict:1"):
            y = rt.reduce_sum(rt.tanh(x))
        return rt.gradients(y, [x])[0]
    graph = grad.get_concrete_function(rt.TensorSpec([2])).graph
    tanh_grads = [op for op in graph.ops if op.type in ("square", "subtract")]
    assert tanh_grads and {op.device for op in tanh_grads} == {"strict:1"}
    np.testing.assert_allclose(grad(rt.constant([0.0, 1.0])).numpy(),
                               1 - np.tanh([0.0, 1.0]) ** 2, rtol=1e-6)


def test_control_flow_with_bodies_on_other_devices():
    @ag.convert
    def f(x, n):
        total = rt.zeros_like(x)
        i = 0
        while i < n:
            with rt.device("strict:1"):
                step = rt.tanh(x * rt.cast(i, rt.float32))
            if rt.reduce_sum(step) > 0:
                with rt.device("strict:0"):
                    total += step
            else:
                total -= 1.0
            i += 1
        return total

    x = rt.constant(X)

    def eager(x, n):
        total = np.zeros_like(X)
        for i in range(n):
            step = np.tanh(X * i)
            total = total + step if step.sum() > 0 else total - 1
        return total

    for executor in ("fast", "plain"):
        with rt.config.options(executor=executor):
            np.testing.assert_allclose(f(x, rt.constant(4)).numpy(), eager(X, 4), rtol=1e-6)


def test_a_loop_gradient_keeps_its_iterations_values_on_the_loops_device():
    @rt.function
    def grad(x):
        with rt.device("strict:1"):
            with rt.GradientTape() as tape:
                tape.watch(x)
                y = rt.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, rt.sin(v) * v),
                                  [rt.constant(0), x])[1]
                loss = rt.reduce_sum(y)
            return tape.gradient(loss, x)

    def numeric(x, eps=1e-3):
        def f(v):
            for _ in range(3):
                v = np.sin(v) * v
            return v.sum()
        return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(3)])

    x = np.array([0.3, -0.7, 1.1])
    with rt.device("strict:1"):
        got = grad(rt.constant(x.astype(np.float32)))
    assert got.device == "strict:1"
    np.testing.assert_allclose(got.numpy(), numeric(x), rtol=2e-3)


def test_a_tf1_session_places_its_graph_and_fetches_to_the_host():
    g = rt.Graph()
    with g.as_default():
        p = rt.placeholder(rt.float32, [2])
        with rt.device("strict:1"):
            v = rt.Variable([1.0, 2.0])
            y = p * v
        z = rt.reduce_sum(y)
        with rt.Session() as sess:
            sess.run(rt.global_variables_initializer())
            got_y, got_z = sess.run([y, z], feed_dict={p: [3.0, 4.0]})
    assert isinstance(got_y, np.ndarray) and got_y.tolist() == [3.0, 8.0]
    assert float(got_z) == 11.0 and v.device == "strict:1"


# -- soft placement ------------------------------------------------------------------------------

def test_a_host_op_runs_on_the_cpu_and_says_so_when_placements_are_logged(capsys):
    @rt.function
    def f(x):
        with rt.device("strict:1"):
            y = x + 1.0
            rt.print("y is", y)
        return y

    with placements_logged() as log:
        result = f(rt.constant([1.0, 2.0]))
    assert capsys.readouterr().out == "y is [2. 3.]\n"
    assert result.device == "cpu:0"
    assert log.getvalue().splitlines() == [
        "device placement: call on cpu:0",
        "device placement: graph f: copy x:0 to strict:1",
        "device placement: graph f: print (print) on cpu:0 (no kernel for strict:1)",
        "device placement: graph f: copy add:0 to cpu:0"]
    placed = f.get_concrete_function(rt.TensorSpec([2])).optimized_graph
    printed = [op for op in placed.ops if op.type == "print"][0]
    assert printed.device == "cpu:0" and printed.inputs[0].op.type == "copy"


def test_eager_soft_placement_is_logged_only_when_asked(capsys):
    with rt.device("strict:0"):
        x = rt.constant([1.0, 2.0])
        half = rt.cast(x, rt.float16)            # array_api_strict has no float16
        assert half.device == "cpu:0" and half.dtype == rt.float16
        with placements_logged() as log:
            rt.cast(x, rt.float16)
            rt.exp(x)
        rt.exp(x)
    assert log.getvalue().splitlines() == [
        "device placement: cast on cpu:0 (strict:0 has no float16)",
        "device placement: exp on strict:0"]
    assert capsys.readouterr().err == ""


def test_an_op_declared_with_a_numpy_kernel_alone_runs_on_the_host():
    opdef = registry.get("test_devices_numpy_only") if "test_devices_numpy_only" in \
        registry.all_ops() else registry.register(
            "test_devices_numpy_only", lambda x: np.cumsum(x),     # written before devices
            lambda inputs: [(inputs[0].shape, inputs[0].dtype)])
    assert opdef.kernel_for(devices.get("strict:1")) is None
    with rt.device("strict:1"):
        x = rt.constant([1.0, 2.0, 3.0])
        y = registry.apply(opdef, [x], {})
        z = y * 2.0
    assert (y.device, z.device) == ("cpu:0", "strict:1")
    assert z.numpy().tolist() == [2.0, 6.0, 12.0]


def test_a_device_this_machine_lacks_runs_its_ops_on_the_cpu():
    if "gpu:0" in rt.config.list_devices():
        pytest.skip("this machine has a GPU")
    with placements_logged() as log:
        with rt.device("gpu:0"):
            y = rt.constant([1.0, 4.0]) ** 0.5
    assert y.device == "cpu:0" and y.numpy().tolist() == [1.0, 2.0]
    assert log.getvalue().splitlines() == [
        f"device placement: gpu:0 is not available here "
        f"({', '.join(rt.config.list_devices())}): its ops run on cpu:0",
        "device placement: pow on cpu:0 (gpu:0 is not available here)"]


def test_the_compiled_tier_leaves_ops_on_other_devices_to_the_fast_executor():
    pytest.importorskip("numba")

    @rt.function(jit_compile=True)
    def f(x):
        with rt.device("strict:1"):
            y = x * 2.0 + 1.0
        return y

    with rt.config.options(executor="compiled", compile_policy="always"):
        np.testing.assert_allclose(f(rt.constant(X)).numpy(), X * 2 + 1)
    reasons = [r.get("reason") or "" for r in rt.config.compiled_regions()]
    assert any("placed on strict:1 (the compiled tier is CPU-only)" in r for r in reasons)


def test_a_handle_to_host_state_is_never_copied_and_a_shuffled_pass_keeps_its_state():
    key = devices.HostHandle((1,), np.int64)
    key[0] = 7
    view = np.asarray(key)                          # (a view keeps the handle alive)
    for name in ("strict:0", "strict:1"):
        assert devices.get(name).put(key) is key and devices.get(name).put(view) is view

    def make():
        return rt.data.Dataset.range(3).interleave(
            lambda n: rt.data.Dataset.range(3 * n, 3 * n + 3).shuffle(3, seed=1).repeat(2),
            cycle_length=3)

    def one_pass(data):
        seen = rt.zeros([0], rt.int64)
        for x in data:
            ag.set_loop_options(shape_invariants=[(seen, [None])])
            seen = rt.concat([seen, rt.reshape(x, [-1])], 0)
        return seen

    want = one_pass(make()).numpy().tolist()
    with rt.device("strict:1"):
        converted = ag.convert(one_pass)
        data = make()
        assert [converted(data).numpy().tolist() for _ in range(3)] == [want] * 3


# -- kernels: generic, with per-backend overrides -------------------------------------------------

def test_numpy_runs_its_ufuncs_and_other_devices_the_generic_kernel():
    add = registry.get("add")
    assert add.kernel is np.add and add.ufunc is np.add
    strict = devices.get("strict:0")
    assert add.kernel_for(devices.CPU) is np.add
    assert add.kernel_for(strict).func is add.generic
    assert add.kernel_for(strict).args == (strict.xp,)
    gather_grad = registry.get("gather_grad")
    assert set(gather_grad.overrides) == {"numpy", "cupy"}


def test_creation_kernels_make_arrays_on_their_own_device():
    with rt.device("strict:1"):
        made = [rt.zeros([2]), rt.ones([2], rt.int32), rt.range(3), rt.one_hot([0, 1], 2),
                rt.fill([2], 5), rt.random.uniform([2], seed=3), rt.shape(rt.zeros([2, 1]))]
    assert {t.device for t in made} == {"strict:1"}


# -- saved graphs keep devices as hints ------------------------------------------------------------

def gpu_model(x):
    with rt.device("gpu:0"):
        y = rt.matmul(x, x, transpose_b=True)
    return rt.reduce_sum(y, axis=1)


def test_a_graph_saved_with_gpu_ops_loads_and_runs_on_a_machine_without_one(tmp_path):
    concrete = rt.function(gpu_model).get_concrete_function(rt.TensorSpec([2, 3]))
    rt.saved.save(concrete, str(tmp_path / "m"))
    doc = json.loads((tmp_path / "m" / "graph.json").read_text())
    assert [op.get("device") for op in doc["graph"]["ops"] if op["type"] == "matmul"] == \
        ["gpu:0"]
    code = f"""
        import numpy as np, runtime as rt
        g = rt.saved.load({str(tmp_path / "m")!r})
        y = g(np.arange(6, dtype=np.float32).reshape(2, 3))
        print(y.device, y.numpy().tolist(), [op.device for op in g.graph.ops
                                              if op.type == "matmul"])
    """
    env = {k: v for k, v in os.environ.items() if k != "RT_DEVICE"}
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, env=env, check=True).stdout
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    device = "gpu:0" if "gpu:0" in rt.config.list_devices() else "cpu:0"
    assert out.split(" ", 1) == [device, f"{(x @ x.T).sum(axis=1).tolist()} ['gpu:0']\n"]


def test_a_saved_device_hint_must_be_a_device_name(tmp_path):
    concrete = rt.function(gpu_model).get_concrete_function(rt.TensorSpec([2, 3]))
    rt.saved.save(concrete, str(tmp_path / "m"))
    path = tmp_path / "m" / "graph.json"
    path.write_text(path.read_text().replace('"gpu:0"', '"quantum:0"'))
    with pytest.raises(rt.saved.LoadError, match="'device' must be a device name"):
        rt.saved.load(str(tmp_path / "m"))


# -- the default device -----------------------------------------------------------------------------

def test_rt_device_sets_the_default_device_of_a_process():
    code = """
        import runtime as rt
        x = rt.constant([1.0, 2.0]) * 3.0
        f = rt.function(lambda x: x + 1.0)
        print(rt.config.get_default_device(), x.device, f(x).device, float(rt.reduce_sum(x)))
    """
    env = dict(os.environ, RT_DEVICE="strict:1")
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, env=env, check=True).stdout
    assert out == "strict:1 strict:1 strict:1 9.0\n"
    env["RT_DEVICE"] = "tpu:0"
    failed = subprocess.run([sys.executable, "-c", "import runtime"], capture_output=True,
                            text=True, env=env)
    assert failed.returncode != 0 and "RT_DEVICE='tpu:0'" in failed.stderr


def test_set_default_device_moves_graphs_already_traced_on_their_next_call():
    f = rt.function(lambda x: rt.exp(x))
    x = rt.constant([0.0])
    assert f(x).device == "cpu:0"
    with rt.config.options(default_device="strict:0"):
        assert f(x).device == "strict:0"
        assert rt.constant(1.0).device == "strict:0"
    assert f(x).device == "cpu:0" and f.experimental_get_tracing_count() == 1


# -- any placement computes what the cpu computes ---------------------------------------------------

STEPS = ["add", "multiply", "tanh", "matmul", "transpose", "maximum", "where", "cond", "while",
         "gather", "getitem", "concat_split", "reduce"]
DEVICES = [None, "cpu:0", "strict:0", "strict:1"]


def run_program(steps, a, b, scoped):
    values = [a, b]
    for kind, i, j, device in steps:
        x, y = values[i % len(values)], values[j % len(values)]
        with rt.device(device if scoped else None):
            values.append(_apply(kind, x, y, device if scoped else None))
    return rt.add_n(values[2:]) if len(values) > 2 else a + b


def _apply(kind, x, y, device):
    if kind in ("add", "multiply", "maximum"):
        return getattr(rt, kind)(x, y)
    if kind == "tanh":
        return rt.tanh(x)
    if kind == "matmul":
        return rt.matmul(x, y) / 3.0
    if kind == "transpose":
        return rt.transpose(x)
    if kind == "where":
        return rt.where(x > y, x, y * 0.5)
    if kind == "cond":
        return rt.cond(rt.reduce_sum(x) > 0, lambda: x * 2.0, lambda: y - 1.0)
    if kind == "while":
        inner = "strict:1" if device != "strict:1" else "strict:0"

        def body(i, v):
            with rt.device(inner):
                v = v * 0.5 + y
            return i + 1, v
        return rt.while_loop(lambda i, v: i < 2, body, [rt.constant(0), x])[1]
    if kind == "gather":
        return rt.gather(x, rt.constant([2, 0, 1]))
    if kind == "getitem":
        return rt.concat([x[1:], y[:1]], axis=0)
    if kind == "concat_split":
        return rt.split(rt.concat([x, y], axis=1), 2, axis=1)[1]
    return rt.broadcast_to(rt.reduce_mean(x, axis=1, keepdims=True), [3, 3])


programs = st.lists(st.tuples(st.sampled_from(STEPS), st.integers(0, 9), st.integers(0, 9),
                              st.sampled_from(DEVICES)), min_size=1, max_size=6)


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(steps=programs, gradients=st.booleans())
def test_any_placement_computes_what_the_cpu_computes(steps, gradients):
    rng = np.random.default_rng(len(steps))
    a, b = (rng.uniform(-1, 1, (3, 3)).astype(np.float32) for _ in range(2))

    def program(x, y, scoped):
        if not gradients:
            return run_program(steps, x, y, scoped)
        with rt.GradientTape() as tape:
            tape.watch([x, y])
            out = rt.reduce_sum(run_program(steps, x, y, scoped))
        return [out] + tape.gradient(out, [x, y], unconnected_gradients="zero")

    with rt.config.options(default_device="cpu:0"):
        want = [np.asarray(t) for t in rt.nest.flatten(
            program(rt.constant(a), rt.constant(b), False))]
        for executor, optimizations in [("fast", True), ("plain", True), ("fast", False)]:
            with rt.config.options(executor=executor, optimizations=optimizations):
                f = rt.function(lambda x, y: program(x, y, True))
                for mode in ("graph", "eager"):
                    x, y = rt.constant(a), rt.constant(b)
                    got = f(x, y) if mode == "graph" else program(x, y, True)
                    for g, w in zip(rt.nest.flatten(got), want, strict=True):
                        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-5, atol=2e-6,
                                                   err_msg=f"{executor} {mode}")


# -- a GPU (CuPy), where there is one ------------------------------------------------------------------

def test_the_gpu_check_says_cleanly_that_no_gpu_was_found():
    env = {k: v for k, v in os.environ.items() if k != "RT_DEVICE"}
    script = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "gpu_check.py")
    if "gpu:0" in rt.config.list_devices():
        pytest.skip("this machine has a GPU: run benchmarks/gpu_check.py")
    result = subprocess.run([sys.executable, script], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("No GPU found: gpu:0 is not a device of this machine")
    assert "Nothing was measured." in result.stdout and result.stderr == ""


def test_the_gpu_check_runs_its_op_suite_on_a_stand_in():
    script = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "gpu_check.py")
    result = subprocess.run([sys.executable, script, "--device", "strict:1", "--quick"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "checks agree with cpu:0" in result.stdout and "FAILED" not in result.stdout
    assert "| 512x512 float32 matmul | raw |" in result.stdout


def test_ops_on_a_gpu_match_numpy():
    if "gpu:0" not in rt.config.list_devices():
        pytest.skip(f"no GPU: {devices.missing_reason('gpu') or 'CuPy sees none'}")
    x = rt.constant(X)
    with rt.device("gpu:0"):
        y = rt.nn.softmax(rt.matmul(x, x, transpose_b=True)) + rt.reduce_sum(x)
    assert y.device == "gpu:0"
    e = np.exp(X @ X.T - (X @ X.T).max(axis=1, keepdims=True))
    np.testing.assert_allclose(y.numpy(), e / e.sum(axis=1, keepdims=True) + X.sum(),
                               rtol=1e-5)
