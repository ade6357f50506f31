"""State shared between threads: a variable's updates are atomic (none is lost, eagerly or in
a graph), and one function first called from many threads with many signatures traces each
signature once and gives every thread its right result, under both executors."""
import sys
import threading

import numpy as np
import pytest

import runtime as rt


@pytest.fixture
def switch_often():
    """Threads switch every microsecond, so a read-modify-write race shows at once."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def run_threads(n, work):
    """Run work(i) in n threads started together; the exceptions they raised."""
    barrier, errors = threading.Barrier(n), []

    def run(i):
        try:
            barrier.wait()
            work(i)
        except Exception as e:  # noqa: BLE001 - reported by the caller
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_eight_threads_of_eager_assign_add_keep_every_increment(switch_often):
    v = rt.Variable(0.0)

    def work(_):
        for _ in range(1000):
            v.assign_add(1.0)

    assert run_threads(8, work) == []
    assert v.numpy() == 8000.0


def test_eager_assign_sub_and_vector_updates_from_threads_keep_every_update(switch_often):
    v = rt.Variable(np.zeros(3, np.int64))
    w = rt.Variable(4000, dtype=rt.int32)

    def work(i):
        for _ in range(500):
            v.assign_add([1, i, 2])
            w.assign_sub(1)

    assert run_threads(8, work) == []
    np.testing.assert_array_equal(v.numpy(), [4000, 500 * sum(range(8)), 8000])
    assert w.numpy() == 0


def test_graph_calls_from_threads_keep_every_update(switch_often):
    v = rt.Variable(0.0)

    @rt.function
    def step(x):
        v.assign_add(x)
        v.assign_add(x)
        return v.read_value()

    step(rt.constant(0.0))

    def work(_):
        for _ in range(200):
            step(rt.constant(1.0))

    assert run_threads(8, work) == []
    assert v.numpy() == 8 * 200 * 2


def test_assign_from_threads_leaves_one_of_the_values_whole(switch_often):
    v = rt.Variable(np.zeros(1000))
    values = [np.full(1000, float(i)) for i in range(8)]
    seen = []

    def work(i):
        for _ in range(200):
            v.assign(values[i])
            seen.append(v.numpy())

    assert run_threads(8, work) == []
    for value in seen + [v.numpy()]:
        assert np.all(value == value[0]) and value[0] in range(8)


def test_a_variable_copied_or_pickled_gets_its_own_lock():
    import copy
    import pickle
    v = rt.Variable([1.0, 2.0])
    for other in (copy.deepcopy(v), pickle.loads(pickle.dumps(v))):
        assert other._lock is not v._lock
        other.assign_add([1.0, 1.0])
        np.testing.assert_array_equal(other.numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


@pytest.mark.parametrize("executor", ["fast", "plain"])
def test_sixteen_threads_first_calling_one_function_with_eight_signatures(executor,
                                                                         switch_often):
    traced = []

    def scaled_total(x, k):
        traced.append((x.shape, k))
        total = rt.constant(0.0)
        for _ in range(5):
            total = total + rt.reduce_sum(x * k)
        return total

    f = rt.function(scaled_total)
    signatures = [(np.arange(n, dtype=np.float32), k) for n in (1, 2, 3, 4) for k in (2, 3)]
    results = [[] for _ in range(16)]

    def work(i):
        for j in range(len(signatures)):
            x, k = signatures[(i + j) % len(signatures)]
            results[i].append((x, k, f(rt.constant(x), k).numpy()))

    with rt.config.options(executor=executor):
        assert run_threads(16, work) == []
    for per_thread in results:
        assert len(per_thread) == 8
        for x, k, value in per_thread:
            assert value == 5 * float(np.sum(x * k))
    assert sorted(traced, key=str) == sorted(
        [(rt.TensorShape([len(x)]), k) for x, k in signatures], key=str)
    assert len(f.concrete_functions) == 8
