"""The Dask client `rt.distribute` uses when none is given, and the local clusters it starts.

`local_cluster` starts worker processes tuned for this runtime: one thread each (and one
runtime inter-op thread), BLAS libraries on one thread, and glibc's malloc set as it ends
up in a plain Python process. Dask's own default, MALLOC_TRIM_THRESHOLD_=65536, fixes
the mmap threshold at 128 KiB and trims the heap after every large free, which made
tensor loops over arrays above ~128 KiB 2-3x slower on workers than in the driver
(benchmarks/distributed.py); MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_ below are the
values glibc's dynamic thresholds grow to (32 MiB, twice that for trimming).
"""
import atexit
import contextlib
import os
import threading

__all__ = ["default_client", "client_or_default", "local_cluster", "connect",
           "close_default_client", "require_dask", "WORKER_ENVIRONMENT"]

WORKER_ENVIRONMENT = {
    "MALLOC_MMAP_THRESHOLD_": "33554432",
    "MALLOC_TRIM_THRESHOLD_": "67108864",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}

_default = None
_lock = threading.Lock()


def require_dask():
    """ImportError naming the extra when Dask's `distributed` is not installed."""
    try:
        import distributed  # noqa: F401
    except ImportError as e:
        raise ImportError(f"rt.distribute needs the optional extra 'distributed': "
                          f"pip install 'autograph[distributed]' (dask[distributed]) "
                          f"({e})") from None


def machine_cores():
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:                  # not on Linux
        return os.cpu_count() or 1


def local_cluster(n_workers, processes=True, dashboard=False):
    """A LocalCluster on 127.0.0.1: `n_workers` workers of one thread each (processes, or
    threads of this process), tuned as the module docstring says; a dashboard if asked."""
    from distributed import LocalCluster
    where = {"host": "127.0.0.1"} if processes else {}     # threads talk in-process
    with _worker_environment():
        return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=processes,
                            dashboard_address="127.0.0.1:8787" if dashboard else None,
                            **where)


@contextlib.contextmanager
def _worker_environment():
    """While a LocalCluster starts: WORKER_ENVIRONMENT as the environment its nannies set
    before spawning each worker (Dask's "pre-spawn-environ", which they keep for restarts).
    Dask prefers a variable already in this process's environment (an earlier Dask
    cluster may have left MALLOC_TRIM_THRESHOLD_=65536 there), so these are set aside
    meanwhile, and this process's environment is as it was afterwards."""
    import dask
    before = {k: os.environ.get(k) for k in WORKER_ENVIRONMENT}
    for k in WORKER_ENVIRONMENT:
        os.environ.pop(k, None)
    try:
        with dask.config.set({"distributed.nanny.pre-spawn-environ": dict(WORKER_ENVIRONMENT)}):
            yield
    finally:
        for k, value in before.items():
            if value is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = value


def connect(cluster, processes=True):
    """A client of `cluster` (not made Dask's default client); worker processes get one
    runtime inter-op thread."""
    from distributed import Client
    client = Client(cluster, set_as_default=False)
    if processes:
        from .plugin import OneInterOpThread
        client.register_plugin(OneInterOpThread(), name="runtime-one-inter-op-thread")
    return client


def default_client(dashboard=False):
    """The client of a LocalCluster started on first use and reused: one worker process per
    core of this machine, one thread each, on 127.0.0.1, a dashboard only if asked (on the
    first call). Closed when the process exits."""
    global _default
    require_dask()
    with _lock:
        if _default is None or _default.status not in ("running", "connecting", "newly-created"):
            cluster = local_cluster(machine_cores(), dashboard=dashboard)
            _default = connect(cluster)
            # After Dask's own exit handlers are registered, so that this one runs first
            # (the client lets go of its data before the workers stop).
            atexit.unregister(close_default_client)
            atexit.register(close_default_client)
        return _default


def close_default_client():
    """Close the default client and its cluster (at exit; tests)."""
    global _default
    with _lock:
        client, _default = _default, None
    if client is not None:
        cluster = client.cluster
        client.close()
        if cluster is not None:
            cluster.close()



def client_or_default(client):
    """`client` if given, else the Dask client made current in this process (a `Client(...)`
    you created, as `dask.compute` would use), else `default_client()`."""
    if client is not None:
        return client
    from distributed import Client
    try:
        return Client.current(allow_global=True)
    except ValueError:
        return default_client()
