"""rt.distribute on Dask LocalClusters: `map` gives what local calls give (values, dtypes,
structure, errors), `DaskStrategy` gives full-batch gradients, faults change no result.

One cluster of 2 worker processes (real transfers between processes) and one of 2 worker
threads (fast) serve the whole module; tests that need neither run without the extra.
"""
import importlib.util
import os
import signal
import subprocess
import sys
import threading
import time
import traceback

import numpy as np
import pytest

import autograph as ag
import runtime as rt
from runtime import nest

HAVE_DASK = importlib.util.find_spec("distributed") is not None
needs_dask = pytest.mark.skipif(not HAVE_DASK, reason="the optional extra 'distributed' "
                                "(dask[distributed]) is not installed")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def running_cluster(processes):
    """A client of a 2-worker LocalCluster tuned as default_client()'s, closed after use."""
    pytest.importorskip("distributed")
    import dask
    from runtime.distribute import cluster
    # A LocalCluster drops a worker that died and is not back within the lost-worker
    # timeout (15 s): on a loaded machine a killed worker's restart takes longer than that.
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "300s"}):
        local = cluster.local_cluster(2, processes=processes)
        client = cluster.connect(local, processes=processes)
        try:
            client.wait_for_workers(2, timeout=120)
            yield client
        finally:
            client.close()
            local.close()


@pytest.fixture(scope="module")
def process_client():
    yield from running_cluster(processes=True)


@pytest.fixture(scope="module")
def thread_client():
    yield from running_cluster(processes=False)


@pytest.fixture(params=["process_client", "thread_client"])
def client(request):
    return request.getfixturevalue(request.param)


def assert_same(local, remote):
    """Same structure, and tensors of the same dtype and values (bit for bit)."""
    nest.assert_same_structure(local, remote)
    for a, b in zip(nest.flatten(local), nest.flatten(remote)):
        if isinstance(a, rt.Tensor):
            assert isinstance(b, rt.Tensor) and a.dtype == b.dtype, (a, b)
            np.testing.assert_array_equal(a.numpy(), b.numpy())
        else:
            assert a == b


# -- without Dask ----------------------------------------------------------------------------

def test_the_package_imports_without_dask_and_names_the_extra():
    code = (
        "import sys; sys.modules['distributed'] = None; sys.modules['dask'] = None\n"
        "import runtime as rt\n"
        "assert 'distribute' not in dir(rt) and 'distribute' not in rt.__all__\n"
        "f = rt.function(lambda x: x + 1)\n"
        "for call in (lambda: rt.distribute.map(f, [1.0]), rt.distribute.default_client,\n"
        "             lambda: rt.distribute.DaskStrategy().value_and_gradients(f, [], [1.0])):\n"
        "    try:\n"
        "        call()\n"
        "    except ImportError as e:\n"
        "        print(e)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    assert all("optional extra 'distributed'" in line and "autograph[distributed]" in line
               for line in lines)


@needs_dask
def test_dir_shows_distribute_with_the_extra_and_star_imports_leave_it_out():
    assert "distribute" in dir(rt) and "distribute" not in rt.__all__
    assert sorted(rt.distribute.__all__) == ["DaskStrategy", "WorkerError", "default_client",
                                             "map"]


# -- map -------------------------------------------------------------------------------------

@ag.convert
def mixed(x, k=3, mode="dict"):
    acc = rt.zeros_like(x)
    i = 0
    while i < k:                    # a graph loop when k is a tensor, unrolled when an int
        acc = acc + x * rt.cast(i + 1, x.dtype)
        i += 1
    if mode == "pair":
        return acc, rt.reduce_sum(acc)
    return {"acc": acc, "max": rt.reduce_max(acc), "mode": mode}


def mixed_inputs(n=50):
    """Argument tuples (and single arrays) of many signatures: shapes, dtypes, tensor or
    Python loop bounds, Python strings."""
    rng = np.random.default_rng(0)
    shapes = [(3,), (2, 4), (5,)]
    dtypes = [np.float32, np.float64, np.int32]
    items = []
    for i in range(n):
        x = (rng.normal(size=shapes[i % 3]) * 10).astype(dtypes[(i // 3) % 3])
        kind = i % 5
        if kind == 0:
            items.append(x)                                       # one argument
        elif kind == 1:
            items.append((rt.constant(x), rt.constant(i % 4)))    # tensor loop bound
        elif kind == 2:
            items.append((x, i % 3, "pair"))                      # Python bound, tuple out
        elif kind == 3:
            items.append((rt.constant(x), rt.constant(2), "pair"))
        else:
            items.append((x, 2))
    return items


@needs_dask
def test_map_equals_local_calls_on_50_inputs_of_mixed_signatures(client):
    inputs = mixed_inputs()
    expected = [mixed(*item) if type(item) is tuple else mixed(item) for item in inputs]
    results = rt.distribute.map(mixed, inputs, client=client)
    assert len(results) == len(inputs)
    for local, remote in zip(expected, results):
        assert_same(local, remote)


def _count_graph_loads(client):
    from runtime.distribute import worker
    return client.run(worker.loaded_graphs)


def counting_graphs_sent(client, monkeypatch):
    """The list to which (graph bytes, workers) is appended for each graph `client` sends."""
    from runtime.distribute import worker
    sent = []
    run = client.run

    def counting_run(func, *args, **kwargs):
        if func is worker.install:
            sent.append((args[1], len(kwargs["workers"])))
        return run(func, *args, **kwargs)

    monkeypatch.setattr(client, "run", counting_run)
    return sent


@needs_dask
def test_each_graph_is_sent_once_and_loaded_once_per_worker(process_client, monkeypatch):
    from runtime.distribute import shipping

    @rt.function
    def double(x):
        return x * 2.0

    sent = counting_graphs_sent(process_client, monkeypatch)
    inputs = [np.full(4, i, np.float32) for i in range(12)]
    first = rt.distribute.map(double, inputs, client=process_client)
    assert [(type(data), n) for data, n in sent] == [(bytes, 2)]   # once, to each worker
    time.sleep(2.5)             # Dask's memory manager runs (it drops copies of its data)
    second = rt.distribute.map(double, inputs, client=process_client)
    assert len(sent) == 1                                           # nothing sent again
    for a, b, x in zip(first, second, inputs):
        np.testing.assert_array_equal(a.numpy(), x * 2)
        np.testing.assert_array_equal(b.numpy(), x * 2)
    key = shipping.bind(double, inputs[0], "")[0].key
    loads = _count_graph_loads(process_client)
    assert len(loads) == 2 and all(counts.get(key, 0) <= 1 for counts in loads.values())
    assert sum(counts.get(key, 0) for counts in loads.values()) >= 1


@needs_dask
def test_a_worker_without_the_graph_gets_it_and_runs_the_task(process_client, monkeypatch):
    """A worker that restarted or joined, or dropped the graph, since it was installed."""
    from runtime.distribute import worker

    @rt.function
    def triple(x):
        return x * 3.0

    inputs = [np.full(2, i, np.float32) for i in range(6)]
    rt.distribute.map(triple, inputs, client=process_client)
    process_client.run(lambda: worker._graphs.clear())          # as a new worker would be
    sent = counting_graphs_sent(process_client, monkeypatch)
    results = rt.distribute.map(triple, inputs, client=process_client)
    for x, y in zip(inputs, results):
        np.testing.assert_array_equal(y.numpy(), x * 3)
    assert 1 <= len(sent) and sum(n for _, n in sent) <= 2      # at most once per worker


@needs_dask
def test_map_takes_concrete_functions_signatures_methods_and_reads_current_variables(client):
    w = rt.Variable(np.array([1.0, 2.0, 3.0], np.float32), name="w")

    @rt.function(input_signature=[rt.TensorSpec([None, 3])])
    def project(x):
        return rt.matmul(x, rt.reshape(w, [3, 1]))

    class Model:
        def __init__(self):
            self.bias = rt.Variable(10.0)

        @ag.convert
        def __call__(self, x):
            return rt.reduce_sum(x) + self.bias

    xs = [np.ones((i + 1, 3), np.float32) for i in range(4)]
    for x, y in zip(xs, rt.distribute.map(project, xs, client=client)):
        assert_same(project(x), y)
    w.assign([0.0, 0.0, 1.0])                      # the next call sends the new value
    for x, y in zip(xs, rt.distribute.map(project, xs, client=client)):
        np.testing.assert_array_equal(y.numpy(), np.ones((len(x), 1)))
    concrete = project.get_concrete_function()
    assert_same(rt.distribute.map(concrete, [xs[0]], client=client)[0], concrete(xs[0]))
    model = Model()
    assert_same(rt.distribute.map(model, [xs[1]], client=client)[0], model(xs[1]))
    assert rt.distribute.map(project, [], client=client) == []


def test_workers_compute_on_aligned_writeable_arrays():
    """Arrays unpickled from a network frame may be unaligned or read-only; numpy's matmul
    then skips BLAS and rounds otherwise than a local call does."""
    from runtime.distribute import shipping, worker

    @rt.function
    def project(x, w):
        return rt.matmul(rt.transpose(x), rt.matmul(x, w))    # as in x's gradient

    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(25, 4)), rng.normal(size=(4, 1))
    unaligned = np.frombuffer(b"\0" * 4 + x.tobytes(), dtype=np.float64, offset=4)
    unaligned = unaligned.reshape(x.shape)
    assert not unaligned.flags.aligned and not unaligned.flags.writeable
    ready = worker.usable(unaligned)
    assert ready.flags.aligned and ready.flags.writeable and worker.usable(ready) is ready
    shipped, arrays = shipping.bind(project, (x, w), "test")
    worker.install(shipped.key, shipped.data, shipped.options)
    result = worker.run(shipped.key, [], [unaligned, w])
    np.testing.assert_array_equal(result[0], project(x, w).numpy())


@needs_dask
def test_workers_run_a_graph_with_its_functions_options(thread_client):
    from runtime.distribute import shipping, worker

    @rt.function(jit_compile=True, memory_budget=2**30)
    def scaled(x):
        return x * 3.0

    x = np.arange(4, dtype=np.float32)
    assert_same(rt.distribute.map(scaled, [x], client=thread_client)[0], scaled(x))
    loaded = worker._graphs[shipping.bind(scaled, x, "")[0].key].function   # worker threads
    assert loaded.graph.jit_compile is True and loaded.graph.memory_budget == 2**30


@needs_dask
def test_progress_shows_dasks_bar(thread_client, capsys):
    results = rt.distribute.map(mixed, [np.ones(3, np.float32)] * 3, client=thread_client,
                                progress=True)
    assert len(results) == 3
    assert "100% Completed" in capsys.readouterr().out


# -- errors ----------------------------------------------------------------------------------

@ag.convert
def pick(x, i):
    return rt.gather(x * 2.0, i)


@needs_dask
def test_a_kernel_error_is_raised_as_a_local_call_raises_it(client):
    x = rt.constant([1.0, 2.0])
    with pytest.raises(rt.errors.OutOfRangeError) as local:
        pick(x, rt.constant(7))
    inputs = [(x, rt.constant(i)) for i in (0, 1, 7, 9, 1)]
    with pytest.raises(rt.errors.OutOfRangeError) as remote:
        rt.distribute.map(pick, inputs, client=client)
    error = remote.value
    assert str(error) == str(local.value)           # the first failing input, index 2
    assert isinstance(error, IndexError)
    assert "in pick failed: index 7 is out of bounds" in str(error)
    assert error.origin == local.value.origin and error.origin.filename == __file__
    assert error.op is not None and error.op.type == "gather"
    assert "input 2 of rt.distribute.map" in "".join(error.__notes__)
    # The user's frames, and the one that raised, as for a local call: no Dask frames
    frames = traceback.extract_tb(error.__traceback__)
    assert len(frames) == len(traceback.extract_tb(local.value.__traceback__))
    assert not any("distributed" in frame.filename for frame in frames)


class NotToBeUsed:
    """A client that fails any use: errors must come before anything is sent."""

    def __getattr__(self, name):
        raise AssertionError(f"the client was used ({name})")


def test_an_unsavable_function_is_refused_before_anything_is_sent():
    pytest.importorskip("distributed")

    @ag.convert
    def uses_python(x):
        y = rt.py_function(np.sort, [x], rt.float32)
        return y * 2.0

    inputs = [np.ones(3, np.float32)] * 3
    with pytest.raises(rt.saved.SaveError) as e:
        rt.distribute.map(uses_python, inputs, client=NotToBeUsed())
    message = str(e.value)
    assert "rt.distribute.map" in message and "py_function" in message
    assert f"{__file__}:" in message and "uses_python" in message


def test_a_function_assigning_variables_is_refused_before_anything_is_sent():
    pytest.importorskip("distributed")
    counter = rt.Variable(0.0, name="counter")

    @rt.function
    def count(x):
        counter.assign_add(1.0)
        return x

    with pytest.raises(ValueError, match="assigns variable 'counter:0'") as e:
        rt.distribute.map(count, [1.0, 2.0], client=NotToBeUsed())
    assert f"{__file__}:" in str(e.value)
    with pytest.raises(ValueError, match="assigns variable 'counter:0'"):
        rt.distribute.DaskStrategy(NotToBeUsed()).value_and_gradients(
            lambda x: count(x) * 2.0, [counter], [np.ones(2, np.float32)])


# -- faults ----------------------------------------------------------------------------------

@ag.convert
def spin(x, n):
    i = 0
    while i < n:
        x = rt.sin(x) + 1.0
        i += 1
    return x


def spin_steps(seconds):
    """Loop steps that take about `seconds` in this process."""
    x, n = rt.constant(np.ones(4)), 2000
    spin(x, rt.constant(n))
    start = time.perf_counter()
    spin(x, rt.constant(n))
    per_step = (time.perf_counter() - start) / n
    return max(200, int(seconds / per_step))


def our_tasks(client, prefix="rt.distribute.map"):
    """{worker address: [keys of rt.distribute tasks it is processing]}."""
    return {worker: [k for k in keys if str(k).startswith(prefix)]
            for worker, keys in client.processing().items()}


def wait_until(condition, timeout=60):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def executing(client, prefix):
    """{worker address: (its PID, [keys starting with `prefix` it is running now])}, as the
    workers themselves see it (the scheduler's `processing` also lists tasks a worker has
    queued or just finished)."""
    def running(dask_worker):
        return os.getpid(), [str(ts.key) for ts in dask_worker.state.executing]

    return {worker: (pid, [k for k in keys if k.startswith(prefix)])
            for worker, (pid, keys) in client.run(running).items()}


def killing_a_worker(client, call, prefix="rt.distribute.map"):
    """call()'s result (or the error it raised), with a worker process running one of its
    tasks (keys starting with `prefix`) killed (SIGKILL) while it runs; waits until the
    nanny has started a new one."""
    outcome = {}

    def run():
        try:
            outcome["result"] = call()
        except Exception as e:  # noqa: BLE001 - returned to the test
            outcome["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    try:
        victims = []
        wait_until(lambda: victims.extend(
            pid for pid, keys in executing(client, prefix).values() if keys) or victims)
        pid = victims[0]
        os.kill(pid, signal.SIGKILL)
    finally:
        thread.join(timeout=300)
    assert not thread.is_alive()
    client.wait_for_workers(2, timeout=120)
    assert pid not in client.run(os.getpid).values()
    return outcome


@needs_dask
def test_a_worker_killed_mid_map_changes_no_result(process_client):
    n = spin_steps(0.25)
    inputs = [(rt.constant(np.full(4, float(i))), rt.constant(n)) for i in range(8)]
    expected = [spin(*args) for args in inputs]
    outcome = killing_a_worker(
        process_client, lambda: rt.distribute.map(spin, inputs, client=process_client))
    for local, remote in zip(expected, outcome["result"]):
        assert_same(local, remote)


@needs_dask
def test_a_worker_killed_mid_training_step_changes_no_result(process_client):
    w = rt.Variable(np.linspace(0.5, 1.5, 4), name="w")

    @ag.convert
    def slow_loss(x, n):
        y = x * w
        i = 0
        while i < n:
            y = rt.sin(y) + 1.0
            i += 1
        return rt.reduce_mean(y)

    n = rt.constant(spin_steps(0.1))
    shards = [(np.full((3, 4), float(i)), n) for i in range(6)]
    strategy = rt.distribute.DaskStrategy(process_client)
    loss, grads = strategy.value_and_gradients(slow_loss, [w], shards)
    outcome = killing_a_worker(
        process_client, lambda: strategy.value_and_gradients(slow_loss, [w], shards),
        prefix="DaskStrategy")
    again_loss, again_grads = outcome["result"]
    assert again_loss.numpy() == loss.numpy()
    np.testing.assert_array_equal(again_grads[0].numpy(), grads[0].numpy())


@needs_dask
def test_a_task_whose_workers_keep_dying_raises_worker_error(process_client):
    def allow(failures, dask_scheduler):
        previous, dask_scheduler.allowed_failures = dask_scheduler.allowed_failures, failures
        return previous

    n = spin_steps(1.0)         # long enough that the kill lands in a task on a loaded machine
    inputs = [(rt.constant(np.full(4, float(i))), rt.constant(n)) for i in range(4)]
    previous = process_client.run_on_scheduler(allow, 0)    # the first death is too many
    try:
        for _ in range(3):      # a kill that lands as its task ends is no failure: again
            outcome = killing_a_worker(
                process_client, lambda: rt.distribute.map(spin, inputs, client=process_client))
            if "error" in outcome:
                break
            for args, remote in zip(inputs, outcome["result"]):
                assert_same(spin(*args), remote)
    finally:
        process_client.run_on_scheduler(allow, previous)
    error = outcome["error"]
    assert isinstance(error, rt.distribute.WorkerError)
    assert "failed on the cluster: KilledWorker" in str(error)


@needs_dask
def test_ctrl_c_in_the_driver_cancels_outstanding_tasks(thread_client):
    n = spin_steps(0.3)
    inputs = [(rt.constant(np.full(4, float(i))), rt.constant(n)) for i in range(10)]

    def interrupt_once_running():
        wait_until(lambda: any(our_tasks(thread_client).values()))
        os.kill(os.getpid(), signal.SIGINT)

    interrupter = threading.Thread(target=interrupt_once_running)
    interrupter.start()
    with pytest.raises(KeyboardInterrupt):
        rt.distribute.map(spin, inputs, client=thread_client)
    interrupter.join()
    # Cancelled: the scheduler forgets every task of the map (the running ones finish
    # their kernel and are dropped), far sooner than the ~1.5 s the rest would take.
    wait_until(lambda: not thread_client.run_on_scheduler(_map_tasks_on_scheduler), 20)


def _map_tasks_on_scheduler(dask_scheduler):
    return [k for k in dask_scheduler.tasks if str(k).startswith("rt.distribute.map")]


# -- data-parallel gradients -----------------------------------------------------------------

def regression_problem(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(60, 4))
    y = rng.normal(size=(60, 1))
    w = rt.Variable(rng.normal(size=(4, 1)), name="w")
    b = rt.Variable(np.zeros(1), name="b")
    unused = rt.Variable(np.ones(2), name="unused")
    scale = rt.Variable(np.float64(0.5), name="scale", trainable=False)

    @ag.convert
    def loss_fn(x, y):
        h = rt.matmul(x, w) + b
        steps = rt.constant(0)
        while steps < 2:                            # a graph loop in the loss
            h = rt.tanh(h) * scale
            steps += 1
        return rt.reduce_mean(rt.square(h - y))

    return x, y, [w, b, unused], scale, loss_fn


def full_batch(loss_fn, variables, x, y):
    with rt.GradientTape() as tape:
        loss = loss_fn(x, y)
    return loss, tape.gradient(loss, variables)


@needs_dask
def test_gradients_over_shards_equal_full_batch_gradients(client):
    x, y, variables, scale, loss_fn = regression_problem()
    strategy = rt.distribute.DaskStrategy(client)
    shards = [(x[:25], y[:25]), (x[25:45], y[25:45]), (x[45:], y[45:])]   # unequal sizes
    for _ in range(2):                      # the second step: the values assigned since
        loss, grads = strategy.value_and_gradients(loss_fn, variables, shards)
        want_loss, want_grads = full_batch(loss_fn, variables, x, y)
        assert loss.dtype == rt.float64
        np.testing.assert_allclose(loss.numpy(), want_loss.numpy(), rtol=1e-12)
        assert grads[2] is None and want_grads[2] is None
        for got, want in zip(grads[:2], want_grads[:2]):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-15)
        again = strategy.value_and_gradients(loss_fn, variables, shards)
        assert again[0].numpy() == loss.numpy()                 # deterministic
        np.testing.assert_array_equal(again[1][0].numpy(), grads[0].numpy())
        scale.assign(0.8)                   # read by the loss, not differentiated
        variables[0].assign_sub(0.1 * grads[0])


@needs_dask
def test_data_parallel_training_follows_single_process_training(client):
    x, y, variables, _, loss_fn = regression_problem(seed=1)
    local_values = [v.numpy() for v in variables]
    trained = variables[:2]
    strategy = rt.distribute.DaskStrategy(client)
    opt = rt.optimizers.SGD(0.1)
    for _ in range(3):
        _, grads = strategy.value_and_gradients(loss_fn, trained, [(x[:30], y[:30]),
                                                                     (x[30:], y[30:])])
        opt.apply_gradients(zip(grads, trained))
    distributed_values = [v.numpy() for v in trained]
    for v, value in zip(variables, local_values):
        v.assign(value)
    opt = rt.optimizers.SGD(0.1)
    for _ in range(3):
        _, grads = full_batch(loss_fn, trained, x, y)
        opt.apply_gradients(zip(grads, trained))
    for got, want in zip(distributed_values, trained):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-12)


@needs_dask
def test_strategy_errors_name_the_shard_and_the_variables():
    strategy = rt.distribute.DaskStrategy(NotToBeUsed())
    w = rt.Variable(1.0)
    with pytest.raises(TypeError, match=r"variables\[1\] is ndarray"):
        strategy.value_and_gradients(lambda x: x * w, [w, np.ones(2)], [np.ones(2)])
    with pytest.raises(ValueError, match="shard 1 has no array argument"):
        strategy.value_and_gradients(lambda x: x * w, [w], [np.ones(2), 3.0])
    with pytest.raises(ValueError, match="no shards"):
        strategy.value_and_gradients(lambda x: x * w, [w], [])


# -- the default client ----------------------------------------------------------------------

@needs_dask
def test_the_default_client_is_a_tuned_local_cluster_started_once(monkeypatch):
    from runtime.distribute import cluster
    monkeypatch.setattr(cluster, "machine_cores", lambda: 1)      # one process is enough
    # as an earlier Dask LocalCluster with Dask's defaults leaves this process's environment
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    client = rt.distribute.default_client()
    try:
        assert rt.distribute.default_client() is client
        info = client.scheduler_info()
        assert info["address"].startswith("tcp://127.0.0.1:")
        assert not _serves_the_dashboard(info)
        workers = info["workers"]
        assert len(workers) == 1 and [w["nthreads"] for w in workers.values()] == [1]
        env = client.run(lambda: {k: os.environ.get(k) for k in cluster.WORKER_ENVIRONMENT})
        assert list(env.values()) == [cluster.WORKER_ENVIRONMENT]
        assert os.environ["MALLOC_TRIM_THRESHOLD_"] == "65536"      # this process's, kept
        assert "MALLOC_MMAP_THRESHOLD_" not in os.environ
        assert list(client.run(lambda: rt.config.get_inter_op_threads()).values()) == [1]
        assert_same(rt.distribute.map(mixed, [np.ones(3)])[0], mixed(np.ones(3)))
    finally:
        cluster.close_default_client()
    assert client.status == "closed"


def _serves_the_dashboard(scheduler_info):
    """Whether the scheduler's HTTP server (it always has one, for health checks) serves
    Dask's dashboard pages."""
    import urllib.error
    import urllib.request
    port = scheduler_info.get("services", {}).get("dashboard")
    if port is None:
        return False
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=30)
    except urllib.error.HTTPError as e:
        return e.code != 404
    return True


@needs_dask
def test_client_none_uses_the_dask_client_made_current(thread_client):
    from distributed import Client
    from runtime.distribute import cluster
    with Client(thread_client.scheduler.address) as current:
        assert cluster.client_or_default(None) is current
    assert cluster.client_or_default(thread_client) is thread_client


# -- samples ---------------------------------------------------------------------------------

def _sample(name):
    import runpy
    return runpy.run_path(os.path.join(ROOT, "samples", name), run_name="sample")


@needs_dask
def test_sample_distributed_map(process_client, capsys):
    predictions = _sample("distributed_map.py")["main"](client=process_client)
    out = capsys.readouterr().out
    assert "same as one process: True" in out
    assert len(predictions) > 0


@needs_dask
def test_sample_distributed_training_reaches_the_single_process_accuracy(process_client,
                                                                        capsys):
    sample = _sample("distributed_training.py")
    distributed, single = sample["main"](client=process_client, epochs=4)
    assert abs(distributed - single) <= 0.01
