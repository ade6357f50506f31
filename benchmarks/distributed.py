"""rt.distribute on a LocalCluster of 2 worker processes (the optional extra `distributed`).

- speed-up: `rt.distribute.map` of a CPU-bound converted function (a tensor loop of 2,000
  steps on 4,096 float64) over 16 partitions on 2 workers, against 16 calls in this
  process. Target: >= 1.6x on 2 cores.
- per-task overhead: a map of a one-op function over 200 one-element inputs, per input,
  next to one local call of it.
- worker environment: one task of a tensor loop (100 steps) over 1 MiB arrays, on a worker of
  `default_client()`'s tuning, on a worker started with Dask's defaults
  (MALLOC_TRIM_THRESHOLD_=65536), and in this process.
- bytes shipped: the graph's bytes sent per map (to each worker on the first, then never
  again), the loads of the graph on each worker (one each), and the input bytes per map.

    python benchmarks/distributed.py [--quick]
"""
import os
import pickle
import sys
import time

# This file's name is Dask's package's: look for modules in its folder (harness) last, so
# that `import distributed` here and in the worker processes finds Dask's.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE] + [_HERE]

import numpy as np  # noqa: E402

import autograph as ag  # noqa: E402
import runtime as rt  # noqa: E402
from harness import Report, main, medians  # noqa: E402

PARTITIONS = 16


@ag.convert
def simulate(x, steps):
    """A CPU-bound loop on a 4,096-element float64 state (32 KiB)."""
    i = 0
    while i < steps:
        x = rt.sin(x) * 0.9 + rt.cos(x * 1.1) * 0.1
        i += 1
    return rt.reduce_sum(x)


@ag.convert
def add_one(x):
    return x + 1.0


def clusters():
    """(tuned 2-worker client, Dask-default 1-worker client, their clusters)."""
    from distributed import Client, LocalCluster
    from runtime.distribute import cluster
    tuned_cluster = cluster.local_cluster(2)
    tuned = cluster.connect(tuned_cluster)
    plain_cluster = LocalCluster(n_workers=1, threads_per_worker=1, host="127.0.0.1",
                                 dashboard_address=None)            # Dask's own defaults
    plain = Client(plain_cluster, set_as_default=False)
    tuned.wait_for_workers(2)
    return tuned, plain, [tuned_cluster, plain_cluster]


def speedup(client, quick):
    steps = rt.constant(500 if quick else 2000)
    inputs = [(rt.constant(np.full(4096, i / PARTITIONS)), steps) for i in range(PARTITIONS)]
    local = [simulate(*args) for args in inputs]
    remote = rt.distribute.map(simulate, inputs, client=client)
    assert all(float(a) == float(b) for a, b in zip(local, remote))
    report = Report(f"map of a converted tensor loop over {PARTITIONS} partitions",
                    ">= 1.6x faster on 2 workers (2 cores)", baseline="one process")
    report.values.update(medians({
        "one process": lambda: [simulate(*args) for args in inputs],
        "rt.distribute.map, 2 workers": lambda: rt.distribute.map(simulate, inputs,
                                                                  client=client),
    }, repeat=2 if quick else 5, number=1))
    ratio = report.values["one process"] / report.values["rt.distribute.map, 2 workers"]
    report.notes.append(f"speed-up: {ratio:.2f}x (load average while measuring: "
                        f"{os.getloadavg()[0]:.1f})")
    local_cpus = cpus_used(lambda: [simulate(*args) for args in inputs])
    worker_cpus = cpus_used(lambda: rt.distribute.map(simulate, inputs, client=client), client)
    report.notes.append(f"CPUs used: {local_cpus:.2f} by one process, {worker_cpus:.2f} by the "
                        f"2 workers together (CPU seconds per second of one run; 2.00 would be "
                        f"both cores all the time)")
    return report


def cpus_used(run, client=None):
    """CPU seconds per wall-clock second that `run()` got: of this process, or of
    `client`'s worker processes."""
    def cpu():
        return (time.process_time() if client is None
                else sum(client.run(time.process_time).values()))
    start_cpu, start = cpu(), time.perf_counter()
    run()
    wall = time.perf_counter() - start
    return (cpu() - start_cpu) / wall


def overhead(client, quick):
    n = 50 if quick else 200
    inputs = [np.ones(1, np.float32)] * n
    one = inputs[0]
    report = Report("per-task overhead (x + 1 on one element)", "reported",
                    baseline="local call")
    times = medians({
        "local call": lambda: add_one(one),
        "rt.distribute.map of 1 input": lambda: rt.distribute.map(add_one, [one],
                                                                   client=client),
        f"rt.distribute.map of {n} inputs": lambda: rt.distribute.map(add_one, inputs,
                                                                      client=client),
    }, repeat=3 if quick else 7, number=1)
    report.add("local call", times["local call"])
    report.add("rt.distribute.map of 1 input", times["rt.distribute.map of 1 input"])
    report.add(f"per input, map of {n}", times[f"rt.distribute.map of {n} inputs"] / n)
    return report


def environment(tuned, plain, quick):
    size = (1 << 20) // 8                                   # 1 MiB of float64
    steps = rt.constant(40 if quick else 100)
    x = rt.constant(np.linspace(0, 1, size))
    report = Report("one task: tensor loop over 1 MiB arrays", "worker as fast as the driver",
                    baseline="in the driver")
    report.values.update(medians({
        "in the driver": lambda: simulate(x, steps),
        "worker, default_client() tuning": lambda: rt.distribute.map(simulate, [(x, steps)],
                                                                      client=tuned),
        "worker, Dask's default environment": lambda: rt.distribute.map(
            simulate, [(x, steps)], client=plain),
    }, repeat=3 if quick else 7, number=1))
    return report


def bytes_shipped(client):
    """The graph bytes `rt.distribute.map` sends per map call, and the input bytes."""
    from runtime.distribute import shipping, worker
    sent = []
    run = client.run

    def counting(func, *args, **kwargs):
        if func is worker.install:
            sent.append(len(args[1]) * len(kwargs["workers"]))
        return run(func, *args, **kwargs)

    client.run = counting
    try:
        @ag.convert
        def loop(x, steps):                 # a new function: its graph is not sent yet
            i = 0
            while i < steps:
                x = rt.tanh(x) + 0.5
                i += 1
            return x

        inputs = [(rt.constant(np.full(1024, float(i))), rt.constant(10)) for i in range(16)]
        per_map = []
        for _ in range(3):
            del sent[:]
            rt.distribute.map(loop, inputs, client=client)
            per_map.append(sum(sent))
            time.sleep(2.5)         # Dask's memory manager runs between them
    finally:
        del client.run
    loads = client.run(worker.loaded_graphs)
    key = shipping.bind(loop, inputs[0], "")[0].key
    input_bytes = sum(len(pickle.dumps(t.numpy(), protocol=5)) for args in inputs
                      for t in args)
    report = Report("bytes sent by 3 maps of 16 inputs", "graph once per worker",
                    baseline="inputs, per map", unit="B")
    report.add("inputs, per map", input_bytes)
    for i, n in enumerate(per_map, 1):
        report.add(f"graph bytes sent, map {i}", n)
    report.notes.append(f"graph: {len(shipping.bind(loop, inputs[0], '')[0].data):,} bytes, "
                        f"sent to each of the {len(loads)} workers on the first map; loads "
                        "of it per worker: "
                        + ", ".join(str(counts.get(key, 0)) for counts in loads.values()))
    return report


def measure(quick=False):
    tuned, plain, started = clusters()
    try:
        return [speedup(tuned, quick), overhead(tuned, quick),
                environment(tuned, plain, quick), bytes_shipped(tuned)]
    finally:
        for client in (tuned, plain):
            client.close()
        for cluster in started:
            cluster.close()


if __name__ == "__main__":
    main(measure)
