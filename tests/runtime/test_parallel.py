"""Inter-op parallelism: independent heavy ops run at once on a thread pool; small ones
stay on the calling thread; results are those of running one op after another."""
import threading

import numpy as np
import pytest

import runtime as rt
from runtime import codegen_executor, passes
from runtime.passes import parallel
from pass_testing import before_after, check_same_results, expect

MATRIX = rt.TensorSpec([32, 32], rt.float32)


def two_chains(x, y, w):
    a, b = x, y
    for _ in range(2):
        a = rt.matmul(a, w)
    for _ in range(2):
        b = rt.matmul(b, w)
    return a + b, rt.reduce_sum(x) + 1.0


@pytest.fixture
def small_heavy(monkeypatch):
    """Count a 32x32 matmul as heavy (real ones are ~1000x bigger; tests stay fast)."""
    monkeypatch.setattr(parallel, "HEAVY", 1000)
    monkeypatch.setattr(parallel, "PARALLEL_MATMULS", True)     # as with a 1-thread BLAS
    with rt.config.options(inter_op_threads=2):
        yield


def test_independent_chains_interleave_and_run_async(small_heavy):
    before, after = before_after(two_chains, [MATRIX] * 3, ["parallel"])
    assert before == expect("""
        graph two_chains(x: f32[32,32], y: f32[32,32], w: f32[32,32]) {
          matmul: f32[32,32] = matmul(x, w)
          matmul_1: f32[32,32] = matmul(matmul, w)
          matmul_2: f32[32,32] = matmul(y, w)
          matmul_3: f32[32,32] = matmul(matmul_2, w)
          add: f32[32,32] = add(matmul_1, matmul_3)
          reduce_sum: f32[] = reduce_sum[axis=None, keepdims=False](x)
          const: f32[] = const[value=1.]()
          add_1: f32[] = add(reduce_sum, const)
          return (add, add_1)
        }""")
    assert after == expect("""
        graph two_chains(x: f32[32,32], y: f32[32,32], w: f32[32,32]) {
          reduce_sum: f32[] = reduce_sum[axis=None, keepdims=False](x)  [async]
          matmul: f32[32,32] = matmul(x, w)  [async]
          matmul_2: f32[32,32] = matmul(y, w)  [async]
          matmul_1: f32[32,32] = matmul(matmul, w)  [async]
          matmul_3: f32[32,32] = matmul(matmul_2, w)  [async]
          add: f32[32,32] = add(matmul_1, matmul_3)  [async]
          const: f32[] = const[value=1.]()
          add_1: f32[] = add(reduce_sum, const)
          return (add, add_1)
        }""")
    rng = np.random.default_rng(0)
    args = [rt.constant(rng.normal(size=(32, 32)).astype(np.float32)) for _ in range(3)]
    check_same_results(two_chains, *args)


def test_heavy_ops_run_on_pool_threads(small_heavy, monkeypatch, on_cpu):
    threads = []
    kernel = rt.ops.registry.get("matmul").kernel

    def recording(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return kernel(*args, **kwargs)

    graph = passes.optimize(rt.function(two_chains).get_concrete_function(*[MATRIX] * 3).graph,
                            rt.config.PASS_NAMES)
    program = codegen_executor.compile_graph(graph)
    monkeypatch.setitem(program.fn.__globals__, "_k_matmul", recording)
    program.fn([np.eye(32, dtype=np.float32)] * 3)
    assert len(threads) == 4 and all(name.startswith("rt-inter-op") for name in threads)


def test_small_ops_a_single_thread_and_a_threaded_blas_stay_sequential(monkeypatch):
    monkeypatch.setattr(parallel, "PARALLEL_MATMULS", True)
    _, after = before_after(two_chains, [MATRIX] * 3, ["parallel"])      # 32x32: small
    assert "async" not in after
    big = rt.TensorSpec([1024, 1024], rt.float32)
    with rt.config.options(inter_op_threads=1):
        _, after = before_after(two_chains, [big] * 3, ["parallel"])
    assert "async" not in after
    with rt.config.options(inter_op_threads=2):
        _, after = before_after(two_chains, [big] * 3, ["parallel"])
        assert "matmul(x, w)  [async]" in after
        monkeypatch.setattr(parallel, "PARALLEL_MATMULS", False)        # BLAS uses all cores
        _, after = before_after(two_chains, [big] * 3, ["parallel"])
        assert "matmul(x, w)  [async]" not in after


def test_stateful_ops_keep_their_order(small_heavy, capsys):
    def f(x, w):
        rt.print("first")
        a = rt.matmul(x, w)
        rt.print("second")
        b = rt.matmul(w, x)
        rt.print("third")
        return a + b

    _, after = before_after(f, [MATRIX] * 2, ["parallel"])
    lines = [line.split(":")[0].strip() for line in after.splitlines()]
    prints = [line for line in after.splitlines() if "print" in line]
    assert [p.split("'")[1] for p in prints] == ["first", "second", "third"]
    assert lines.index("matmul") < lines.index("add")
    eye = rt.constant(np.eye(32, dtype=np.float32))
    rt.function(f)(eye, eye)
    assert capsys.readouterr().out == "first\nsecond\nthird\n"
