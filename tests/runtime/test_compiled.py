"""The compiled tier (runtime.compiled): regions of graphs compiled by numba.

Each test runs a program under the compiled tier and checks it against the fast
executor (or eager Python): values and dtypes, printed text, errors naming the op and
the user's line, and what `rt.config.compiled_regions()` reports. Compiled regions are
cached on disk (one directory per test session) so reruns do not recompile.
"""
import io
import contextlib
import os
import subprocess
import sys
import textwrap
import types
import warnings

import numpy as np
import pytest

import autograph as ag
import runtime as rt
from runtime import compiled
from test_saved_samples import sample  # noqa: E402 - tests/runtime is on sys.path

pytest.importorskip("numba")


@pytest.fixture(autouse=True)
def compile_everything(tmp_path_factory):
    """Compile every region before its first run, into this session's cache directory
    (RT_COMPILE_CACHE's when set, so CI shares one), on cpu:0 (the tier is CPU-only:
    graphs on other devices do not lower; see test_devices.py), with the passes on."""
    saved, saved_device = dict(rt.config._state), rt.config.get_default_device()
    rt.config.set_default_device("cpu:0")
    cache = os.environ.get("RT_COMPILE_CACHE") or str(tmp_path_factory.getbasetemp() / "jit")
    rt.config.set_compile_cache_dir(cache)
    rt.config.set_compile_policy("always")
    rt.config.set_optimizations(True)       # regions form in optimized graphs (fusion
    #                                         groups, the memory plan's growing rows)
    if rt.config.get_executor() == "plain":    # (RT_EXECUTOR=plain runs jit_compile graphs
        rt.config.set_executor("fast")         # step by step: these tests are of the tier)
    try:
        yield
    finally:
        rt.config._state.update(saved)
        rt.config.set_default_device(saved_device)


def regions_of(name):
    return [r for r in rt.config.compiled_regions() if r["graph"] == name]


def region_states(*names):
    """The states of the regions (not the ops left out) of graphs named `names`."""
    return {r["state"] for name in names for r in regions_of(name) if r["region"] is not None}


def run_both(fn, *args):
    """fn's results under the fast executor and under the compiled tier."""
    with rt.config.options(executor="fast"):
        fast = rt.nest.map_structure(np.asarray, rt.function(fn)(*args))
    with rt.config.options(executor="compiled"):
        jit = rt.nest.map_structure(np.asarray, rt.function(fn)(*args))
    return fast, jit


def assert_same(a, b):
    for x, y in zip(rt.nest.flatten(a), rt.nest.flatten(b)):
        assert x.dtype == y.dtype and x.shape == y.shape
        assert x.tobytes() == y.tobytes(), (x, y)


@ag.convert(jit_compile=True)
def collatz_steps(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@ag.convert(jit_compile=True)
def count_primes(n):
    count = 0
    i = 2
    while i < n:
        j = 2
        is_prime = True
        while j * j <= i:
            if i % j == 0:
                is_prime = False
                break
            j += 1
        if is_prime:
            count += 1
        i += 1
    return count


def test_a_converted_scalar_loop_becomes_one_compiled_loop():
    assert int(collatz_steps(rt.constant(27))) == 111
    loops = [r for r in regions_of("collatz_steps") if r["kind"] == "loop"]
    assert loops and all(r["state"] == "compiled" for r in loops)


def test_nested_loops_with_break_compile_and_count_like_python():
    def primes(n):
        return sum(all(i % j for j in range(2, int(i ** 0.5) + 1)) for i in range(2, n))
    assert int(count_primes(rt.constant(500))) == primes(500)
    assert any(r["kind"] == "loop" and r["state"] == "compiled"
               for r in regions_of("count_primes"))


def test_jit_compile_of_rt_function_uses_the_compiled_tier_under_the_fast_executor():
    @rt.function(jit_compile=True)
    def scaled(x, n):
        return rt.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x * 1.5 + 1.0),
                             [0, x])[1]

    x = np.linspace(-1, 1, 5, dtype=np.float32)
    got = scaled(rt.constant(x), rt.constant(4))
    want = x
    for _ in range(4):
        want = want * np.float32(1.5) + np.float32(1.0)
    assert got.numpy().tobytes() == want.tobytes()
    assert any(r["state"] == "compiled" for r in regions_of("scaled"))


def test_integer_overflow_wraps_and_division_by_zero_gives_numpys_zero():
    def f(a, b, n):
        def body(i, acc, q, r):
            return i + 1, acc * a + 7, q + a // b, r + a % b
        return rt.while_loop(lambda i, *_: i < n, body, [0, a, a - a, a - a])[1:]

    for dtype in (np.int32, np.int64, np.uint8):
        args = [rt.constant(np.array(v, dtype)) for v in (123457, 0, 40)] if dtype != np.uint8 \
            else [rt.constant(np.array(v, dtype)) for v in (201, 0, 40)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fast, jit = run_both(f, *args)
        assert_same(fast, jit)


def test_elementwise_chains_broadcast_and_keep_dtypes():
    def f(x, row, k):
        a = rt.tanh(x * 0.5 + row) * x - x * x / 3.0
        b = rt.where(a > 0.0, a, -a) + rt.cast(k, rt.float32)
        c = rt.cast(x * 10.0, rt.int32) // 3 + k
        return b, c, rt.maximum(a, 0.0), rt.minimum(x, row)

    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    row = np.array([-0.0, 0.0, np.nan, 2.0], np.float32)
    fast, jit = run_both(f, x, row, np.int32(5))
    for a, b in zip(fast, jit):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=2e-6, equal_nan=True)
        assert np.array_equal(np.signbit(a), np.signbit(b))


def test_elementwise_ops_of_one_shape_run_as_one_loop_whatever_reads_them_between():
    """Fused groups that fusion keeps apart (a result with two readers) and the ops
    reading them in between: the element ops of one shape become one compiled loop, the
    reduction waits for it, and only the arrays read outside the loop are made."""
    def f(x, t, w):
        d = x * 0.1 * (1.0 - t * t)       # read twice: a fused group of its own
        s = rt.reduce_sum(d)
        g = x + d * w
        return s, g, rt.cast(g > 0.0, rt.int32) * 2 + rt.cast(d < 0.0, rt.int32)

    rng = np.random.default_rng(7)
    x, t = (rng.normal(size=500).astype(np.float32) for _ in range(2))
    before = set(compiled._regions)
    fast, jit = run_both(f, x, t, np.float32(0.7))
    assert_same(fast, jit)
    region, = [r for r in compiled._regions if r not in before]
    assert region.source.count(" in range(") == 1, region.source
    assert region.source.count("np.empty(") == 3        # d, g and the int32 result


AXES = (None, 0, 1, 2, (0, 1), (0, 2), (1, 2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_sums_and_means_round_as_numpys_pairwise_sums(dtype):
    """Compiled reductions add in numpy's order (pairwise over the innermost run of
    reduced axes), so float32 sums agree with numpy's bit for bit, over every axis set."""
    def f(x):
        y = x * 0.5 + x                  # a fused op: the reductions join its region
        return ([rt.reduce_sum(y, axis=a) for a in AXES]
                + [rt.reduce_mean(y, axis=a, keepdims=True) for a in (None, 1, (0, 2))])

    rng = np.random.default_rng(3)
    for shape in [(3, 5, 300), (2, 140, 9), (1, 1, 7), (4, 0, 3)]:
        x = (rng.normal(size=shape) * 10.0 ** rng.uniform(-3, 3, size=shape)).astype(dtype)
        y = x * dtype(0.5) + x
        fast, jit = run_both(f, x)
        assert_same(jit, [np.sum(y, axis=a) for a in AXES]
                    + [np.mean(y, axis=a, keepdims=True) for a in (None, 1, (0, 2))])
        assert_same(fast, jit)
    assert region_states("f") == {"compiled"}


def test_sums_of_views_run_in_the_fast_executor_and_agree():
    """A transposed or sliced input (not C-contiguous: numpy's buffered loops decide its
    order of additions) makes the compiled region give up: the fast executor sums it."""
    def g(t):
        u = t * 0.5 + t
        return rt.reduce_sum(rt.transpose(u), axis=0), rt.reduce_sum(u[:, 1:]), u

    t = np.random.default_rng(4).normal(size=(300, 9)).astype(np.float32)
    u = t * np.float32(0.5) + t
    fast, jit = run_both(g, t)
    assert_same(jit, [np.sum(u.T, axis=0), np.sum(u[:, 1:]), u])
    assert_same(fast, jit)


def test_matmul_in_a_loop_lowers_to_np_dot():
    def f(h, w, n):
        return rt.while_loop(lambda i, h: i < n,
                             lambda i, h: (i + 1, rt.tanh(rt.matmul(h, w) + 0.1)), [0, h])[1]

    rng = np.random.default_rng(0)
    h = rng.normal(size=(4, 8)).astype(np.float32)
    w = (rng.normal(size=(8, 8)) * 0.3).astype(np.float32)
    fast, jit = run_both(f, h, w, np.int32(6))
    np.testing.assert_allclose(fast, jit, rtol=1e-5, atol=1e-6)
    with rt.config.options(executor="compiled"):
        g = rt.function(f)
        g(h, w, np.int32(6))
    assert any(r["kind"] == "loop" and r["state"] == "compiled" for r in regions_of("f"))


def test_a_loop_that_prints_is_not_compiled_and_the_report_says_why():
    @ag.convert(jit_compile=True)
    def noisy(n):
        total = 0
        for i in range(n):
            total += i * i
            print("step", i)
        return total

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = noisy(rt.constant(3))
    assert int(result) == 5 and out.getvalue() == "step 0\nstep 1\nstep 2\n"
    reasons = [r["reason"] for r in regions_of("noisy") if r["state"] == "not lowered"]
    assert any("print" in reason for reason in reasons), reasons


def test_the_report_keeps_the_latest_ops_left_out_when_it_is_full(monkeypatch):
    monkeypatch.setattr(compiled, "_NOT_LOWERED_KEPT", 2)
    monkeypatch.setattr(compiled, "_not_lowered", {})

    @ag.convert(jit_compile=True)
    def noisy_late(n):
        for i in range(n):
            print("step", i)
        return n

    for i in range(3):
        op = types.SimpleNamespace(type="add", name=f"add_{i}", origin=None)
        compiled.not_lowered("filler", op, "an earlier graph's op")
    with contextlib.redirect_stdout(io.StringIO()):
        noisy_late(rt.constant(1))
    assert len(compiled._not_lowered) == 2
    assert any("print" in (r["reason"] or "") for r in regions_of("noisy_late"))


def test_a_failing_index_in_compiled_code_raises_the_ops_error_at_the_users_line():
    @ag.convert(jit_compile=True)
    def pick(x, n):
        total = 0.0
        i = 0
        while i < n:
            total += x[i]
            i += 1
        return total

    x = rt.constant(np.arange(4, dtype=np.float32))
    assert float(pick(x, rt.constant(4))) == 6.0
    with pytest.raises(rt.errors.OpError) as info:
        pick(x, rt.constant(6))
    assert "test_compiled.py" in str(info.value) and "getitem" in str(info.value)


def test_the_loop_iteration_limit_names_the_loop_in_compiled_code():
    with rt.config.options(loop_iteration_limit=50):
        with pytest.raises(rt.errors.LoopIterationLimitError) as info:
            count_primes(rt.constant(10**6))
    assert "test_compiled.py" in str(info.value)


def test_without_numba_jit_compile_warns_once_and_runs_the_fast_executor(monkeypatch):
    monkeypatch.setattr(compiled, "available", lambda: False)
    monkeypatch.setattr(compiled, "_warned", [])

    @rt.function(jit_compile=True)
    def double(x):
        return x * 2

    with pytest.warns(RuntimeWarning, match="'jit' extra"):
        assert int(double(rt.constant(3))) == 6
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert int(double(rt.constant(4))) == 8


def test_a_region_numba_cannot_compile_falls_back_and_is_reported(monkeypatch):
    def broken(region):
        raise RuntimeError("numba is broken today")
    monkeypatch.setattr(compiled, "_function", broken)

    @rt.function(jit_compile=True)
    def loop(n):
        return rt.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), [0, 0])[1]

    assert int(loop(rt.constant(5))) == 10
    failed = [r for r in regions_of("loop") if r["state"] == "failed"]
    assert failed and "numba is broken today" in failed[0]["reason"]


def test_the_hot_policy_compiles_after_some_calls_or_moves_a_running_loop_over():
    @rt.function(jit_compile=True)
    def summed(n):
        return rt.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i * 3), [0, 0])[1]

    with rt.config.options(compile_policy="hot"):
        rt.config.set_compile_policy(calls=3, loop_iterations=100, background=False)
        assert int(summed(rt.constant(10))) == 135
        assert int(summed(rt.constant(10))) == 135
        assert all(r["state"] == "cold" for r in regions_of("summed") if r["kind"] == "loop")
        assert int(summed(rt.constant(10))) == 135
        assert any(r["state"] == "compiled" for r in regions_of("summed"))

        @rt.function(jit_compile=True)
        def long_sum(n):
            return rt.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), [0, 0])[1]

        assert int(long_sum(rt.constant(1000))) == 499500     # moved over at iteration 100
        assert any(r["state"] == "compiled" for r in regions_of("long_sum"))


DYNAMIC_RNN = sample("dynamic_rnn")


def rnn(*args):
    """samples/dynamic_rnn.py: `outputs.append(h)` in a converted `for x in xs`."""
    with rt.config.options(executor="compiled"):
        return DYNAMIC_RNN.rnn(*args)


def rnn_data(steps):
    rng = np.random.default_rng(0)
    return [rng.normal(size=(steps, 4, 8)).astype(np.float32),
            np.zeros((4, 8), np.float32), (rng.normal(size=(8, 8)) * 0.5).astype(np.float32),
            (rng.normal(size=(8, 8)) * 0.5).astype(np.float32),
            rng.normal(size=8).astype(np.float32)]


def rnn_numpy(xs, h, w_x, w_h, b):
    outputs = []
    for x in xs:
        h = np.tanh(x @ w_x + h @ w_h + b)
        outputs.append(h)
    return h, np.stack(outputs)


def assert_within_an_ulp(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    ulps = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
    assert ulps.max(initial=0) <= 1, ulps.max()


def test_a_loop_appending_to_a_list_compiles_whole():
    """`outputs.append(h)` in a tensor loop: the compiled loop appends to an array that
    grows; tanh of float32 arrays stays in compiled code (within an ulp of numpy's)."""
    for steps in (0, 1, 7, 40):
        got = rnn(*[rt.constant(a) for a in rnn_data(steps)])
        if steps:
            h, outputs = rnn_numpy(*rnn_data(steps))
            for a, b in zip(got, (h, outputs)):
                np.testing.assert_allclose(a.numpy(), b, rtol=3e-6, atol=1e-6)
        else:
            assert got[1].shape == (0, 4, 8)
    loops = [r for r in regions_of("rnn") if r["kind"] == "loop"]
    assert loops and {r["state"] for r in loops} == {"compiled"}


def test_float32_tanh_in_compiled_loops_is_within_an_ulp_of_numpys():
    def f(x):
        return rt.tanh(x * 1.0001)

    rng = np.random.default_rng(5)
    for scale in (1e-4, 0.01, 0.3, 1.0, 4.0, 30.0):     # (arrays that stay compiled)
        x = rng.normal(size=4000).astype(np.float32) * np.float32(scale)
        x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40]
        fast, jit = run_both(f, x)
        assert np.array_equal(np.isnan(fast), np.isnan(jit))
        assert np.array_equal(np.signbit(fast), np.signbit(jit))
        keep = ~np.isnan(fast)
        assert_within_an_ulp(jit[keep], fast[keep])
    assert region_states("f") == {"compiled"}


def test_appends_of_scalars_and_to_a_started_list_and_rows_that_change_shape():
    def scalars(n):
        def body(i, acc):
            return i + 1, rt.concat([acc, rt.expand_dims(rt.cast(i, rt.float32) * 0.5, 0)], 0)
        return rt.while_loop(lambda i, acc: i < n, body,
                             [0, rt.zeros([0])], shape_invariants=[None, [None]])[1]

    def started(start, n):
        def body(i, acc):
            row = start[0] * rt.cast(i, rt.float32)
            return i + 1, rt.concat([acc, rt.expand_dims(row, 0)], 0)
        return rt.while_loop(lambda i, acc: i < n, body, [0, start],
                             shape_invariants=[None, [None, 3]])[1]

    def ragged(x, n):
        def body(i, acc):
            row = rt.cond(i < 1, lambda: x[:2] * 2.0, lambda: x[:3] * 3.0)  # 2, then 3
            return i + 1, rt.concat([acc, rt.expand_dims(row, 0)], 0)
        return rt.while_loop(lambda i, acc: i < n, body, [0, rt.zeros([0, 1])],
                             shape_invariants=[None, [None, None]])[1]

    for fn, args in ((scalars, (np.int32(5),)), (scalars, (np.int32(0),)),
                     (started, (np.arange(6, dtype=np.float32).reshape(2, 3), np.int32(4))),
                     (ragged, (np.arange(4, dtype=np.float32), np.int32(1)))):
        fast, jit = run_both(fn, *args)
        assert_same(fast, jit)
    assert region_states("ragged", "started") == {"compiled"}
    errors = []
    for executor in ("fast", "compiled"):
        with rt.config.options(executor=executor), pytest.raises(rt.errors.OpError) as info:
            rt.function(ragged)(np.arange(4, dtype=np.float32), np.int32(3))
        errors.append(str(info.value))
    assert errors[0] == errors[1] and "must match" in errors[0]


def test_a_running_loop_with_appends_moves_into_its_compiled_loop():
    with rt.config.options(compile_policy="hot"):
        rt.config.set_compile_policy(calls=1000, loop_iterations=10, background=False)
        got = rnn(*[rt.constant(a) for a in rnn_data(50)])
    h, outputs = rnn_numpy(*rnn_data(50))
    np.testing.assert_allclose(got[1].numpy(), outputs, rtol=3e-6, atol=1e-6)
    assert any(r["state"] == "compiled" for r in regions_of("rnn"))


def tape_over_loop(step):
    """A converted function giving [loss, d loss/dx, d loss/dw] by a GradientTape over a
    tensor loop `y = step(y, w)`, `steps` times from y = x."""
    @ag.convert
    def grads(x, w, steps):
        with rt.GradientTape() as tape:
            tape.watch(x)
            tape.watch(w)
            y = x
            i = 0
            while i < steps:
                y = step(y, w)
                i += 1
            loss = rt.reduce_sum(y * y)
        return [loss] + tape.gradient(loss, [x, w])
    return grads


def assert_gradients_agree(grads, size, trip_counts):
    """`grads` (a `tape_over_loop`) under the compiled tier, against the fast executor."""
    args = (rt.constant(np.linspace(-1, 1, size, dtype=np.float32)), rt.constant(0.7))
    for steps in trip_counts:
        with rt.config.options(executor="fast"):
            fast = [t.numpy() for t in grads(*args, rt.constant(steps))]
        with rt.config.options(executor="compiled"):
            jit = [t.numpy() for t in grads(*args, rt.constant(steps))]
        for a, b in zip(fast, jit):
            np.testing.assert_allclose(a, b, rtol=1e-5)


def test_loop_gradients_compile_both_loops_and_agree():
    """A GradientTape over a tensor loop: the forward loop collects what the backward loop
    reads (one buffer per value, rows [offset, *shape]); both loops compile."""
    assert_gradients_agree(tape_over_loop(lambda y, w: y + 0.1 * rt.tanh(y * w)), 64,
                           (0, 1, 30))
    loops = [r for r in regions_of("grads") if r["kind"] == "loop"]
    assert len(loops) >= 2 and {r["state"] for r in loops} == {"compiled"}


def test_a_value_a_region_computes_for_the_gradient_is_written_into_its_collection():
    """A loop over float32 arrays too large to compile whole (numpy's tanh is faster
    there): the compiled region of its body computing `u`, which the gradient reads,
    writes it straight into the loop's collection; the gradients agree."""
    def step(y, w):
        u = y * w + 0.5
        return rt.tanh(u) * u

    before = set(compiled._regions)
    assert_gradients_agree(tape_over_loop(step), 5000, (0, 3, 12, 5))
    into = [r for r in compiled._regions if r not in before and not r.loop
            and "o_" in r.source.splitlines()[0]]
    assert into, "no region computed into an array given"


def test_a_region_waits_for_inter_op_results_any_of_its_ops_reads(monkeypatch):
    """Heavy matmuls run on the inter-op thread pool (async); a compiled region that
    reads their results, not in its first op, waits for them first."""
    from runtime.passes import parallel
    monkeypatch.setattr(parallel, "PARALLEL_MATMULS", True)

    def f(a, b, c):
        x, y = rt.matmul(a, b), rt.matmul(b, c)
        n = rt.reduce_sum(a[0]) * 2.0 + 1.0
        return rt.reduce_sum(x) * n + rt.reduce_sum(y) * n - n

    rng = np.random.default_rng(0)
    args = [rng.normal(size=(256, 256)).astype(np.float32) for _ in range(3)]
    with rt.config.options(inter_op_threads=2):
        g = rt.function(f)
        fast, jit = run_both(f, *args)
        with rt.config.options(executor="compiled"):
            graph = g.get_concrete_function(*args).optimized_graph
    assert sum(bool(op.notes and op.notes.get("async")) for op in graph.ops) == 2
    np.testing.assert_allclose(jit, fast, rtol=1e-5)
    assert region_states("f") == {"compiled"}


def test_a_second_process_loads_compiled_regions_from_the_disk_cache(tmp_path):
    script = textwrap.dedent("""
        import runtime as rt
        from runtime import compiled
        rt.config.set_compile_cache_dir(%r)
        rt.config.set_compile_policy("always")

        @rt.function(jit_compile=True)
        def tri(n):
            return rt.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), [0, 0])[1]

        assert int(tri(rt.constant(100))) == 4950
        regions = [r for r in compiled._regions if r.fn is not None]
        print(sum(sum(r.fn.stats.cache_hits.values()) for r in regions),
              sum(sum(r.fn.stats.cache_misses.values()) for r in regions))
    """ % str(tmp_path))
    env = {k: v for k, v in os.environ.items() if k not in ("RT_EXECUTOR", "RT_DEVICE")}
    first = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           env=env)
    second = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=env)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    hits, misses = map(int, second.stdout.split())
    assert hits >= 1 and misses == 0
