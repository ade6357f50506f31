"""Running shipped graphs as Dask tasks: graphs broadcast once, values scattered once per
call, one task per input, outcomes collected in input order.

Each graph's bytes are scattered to every worker once per client (the future is kept, so
later calls send nothing; a worker that joins later fetches them from a peer). The values
of the variables the graphs read are scattered once per call. Tasks embed their input
arrays, so Dask can rerun a task whose worker died. After the first failure (in input
order), later tasks are cancelled and the failure is raised as a local call raises it; an
interruption (Ctrl-C) of the driver cancels every task.
"""
import collections
import threading
import uuid

from . import worker

__all__ = ["run", "WorkerError"]

GRAPHS_PER_CLIENT = 64
_SENT = "_runtime_distribute_graphs"    # client attribute: OrderedDict(graph key -> future)
_lock = threading.Lock()


class WorkerError(RuntimeError):
    """A task could not run: its workers kept dying (Dask's KilledWorker), or it was
    cancelled or lost outside this call."""


def run(client, calls, label, progress=False):
    """The outcome (a list of arrays) of each call `(Shipped, arrays)`, in order."""
    graphs = _graph_bytes(client, {s.key: s for s, _ in calls})
    values = _scatter_values(client, [s for s, _ in calls])
    prefix = f"{label}-{uuid.uuid4().hex[:12]}"
    futures = client.map(
        worker.run, [s.key for s, _ in calls], [graphs[s.key] for s, _ in calls],
        [s.options for s, _ in calls],
        [[values[v.uid] for v in s.variables] for s, _ in calls],
        [arrays for _, arrays in calls],
        key=[f"{prefix}-{i}" for i in range(len(calls))], pure=False)
    try:
        return _outcomes(client, futures, [s for s, _ in calls], label, progress)
    except BaseException:
        client.cancel([f for f in futures if not f.done()])
        raise


def _graph_bytes(client, by_key):
    """{graph key: future of its bytes on every worker}, scattering those not sent yet."""
    with _lock:
        sent = vars(client).setdefault(_SENT, collections.OrderedDict())   # dies with it
        found = {}
        for key in by_key:
            future = sent.get(key)
            if future is not None and future.status == "finished":
                sent.move_to_end(key)
                found[key] = future
    for key, s in by_key.items():
        if key not in found:
            found[key] = client.scatter(s.data, broadcast=True, hash=False)
            with _lock:
                sent[key] = found[key]
                while len(sent) > GRAPHS_PER_CLIENT:
                    sent.popitem(last=False)
    return found


def _scatter_values(client, shipped):
    """{variable uid: future of its current value}, scattered once, to every worker."""
    variables = {v.uid: v for s in shipped for v in s.variables}
    if not variables:
        return {}
    futures = client.scatter([v.numpy() for v in variables.values()], broadcast=True,
                             hash=False)
    return dict(zip(variables, futures))


def _outcomes(client, futures, shipped, label, progress):
    from distributed import as_completed
    if progress:
        from distributed import progress as progress_bar
        progress_bar(futures, scheduler=client.scheduler.address)
    index = {f.key: i for i, f in enumerate(futures)}
    outcomes = [None] * len(futures)
    first = len(futures)                 # the first failed input so far
    finished = as_completed(futures, loop=client.loop, with_results=True, raise_errors=False)
    for batch in finished.batches():     # results fetched as tasks finish, not in turn
        for future, result in batch:
            i = index[future.key]
            if i >= first:
                continue
            outcomes[i] = result if future.status == "finished" else _task_error(
                future, result, i, label)
            if not isinstance(outcomes[i], list):
                first = i
                client.cancel([f for f in futures[first + 1:] if not f.done()])
    if first < len(futures):
        raise _exception(outcomes[first], shipped[first], first, label)
    return outcomes


def _task_error(future, exc, i, label):
    """The WorkerError of a task that Dask could not run (KilledWorker, cancelled)."""
    if future.status == "cancelled":
        return WorkerError(f"{label}: the task of input {i} was cancelled (its client or "
                           f"cluster closed, or another client cancelled it)")
    return WorkerError(f"{label}: the task of input {i} failed on the cluster: "
                       f"{type(exc).__name__}: {exc}")


def _exception(outcome, shipped, i, label):
    if isinstance(outcome, worker.Failure):
        exc = shipped.error(outcome)
        exc.add_note(f"(raised by a Dask worker running input {i} of {label})")
        return exc
    return outcome
