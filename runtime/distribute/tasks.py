"""Running shipped graphs as Dask tasks: each graph installed once per worker, variable
values scattered once per call, one task per input, outcomes collected in input order.

A graph new to this client is installed on every worker (`Client.run` of
`worker.install`, which sends its bytes to each of them once) before its tasks are
submitted; the client remembers where it installed what. A task that lands on a worker
without its graph (a worker that joined or restarted since, or dropped it) comes back
`Missing`: the graph is installed there and the task submitted again. The values of the
variables the graphs read are scattered once per call, to every worker. Tasks embed their
input arrays, so Dask can rerun a task whose worker died. After the first failure (in
input order), later tasks are cancelled and the failure is raised as a local call raises
it; an interruption (Ctrl-C) of the driver cancels every task.
"""
import collections
import threading
import uuid

from . import worker

__all__ = ["run", "WorkerError"]

GRAPHS_PER_CLIENT = 256
RESUBMISSIONS = 5                       # of one input, to workers that lack its graph
_INSTALLED = "_runtime_distribute_graphs"   # client attribute: {graph key: {worker address}}
_lock = threading.Lock()


class WorkerError(RuntimeError):
    """A task could not run: its workers kept dying (Dask's KilledWorker), or it was
    cancelled or lost outside this call."""


class _Tasks:
    """The tasks of one call: one per input, resubmitted when their worker lacks the graph."""

    def __init__(self, client, calls, label):
        self.client = client
        self.calls = calls
        self.label = label
        self.prefix = f"{label}-{uuid.uuid4().hex[:12]}"
        self.values = _scatter_values(client, [s for s, _ in calls])
        self.index = {}                 # future key -> input index
        self.tries = collections.Counter()
        self.reinstalled = set()        # (graph key, worker address) installed again

    def submit(self, inputs):
        """Futures of the tasks of `inputs` (indices), submitted together."""
        keys = []
        for i in inputs:
            self.tries[i] += 1
            keys.append(f"{self.prefix}-{i}" + (f"-{self.tries[i]}" if self.tries[i] > 1
                                                 else ""))
        futures = self.client.map(
            worker.run, [self.calls[i][0].key for i in inputs],
            [[self.values[v.uid] for v in self.calls[i][0].variables] for i in inputs],
            [self.calls[i][1] for i in inputs], key=keys, pure=False)
        self.index.update((f.key, i) for f, i in zip(futures, inputs))
        return futures


def run(client, calls, label, progress=False):
    """The outcome (a list of arrays) of each call `(Shipped, arrays)`, in order."""
    with _lock:
        installed = vars(client).get(_INSTALLED, {})
        new = {s.key: s for s, _ in calls if not installed.get(s.key)}
    if new:                             # workers that joined since get the others lazily
        _install(client, new, _workers(client))
    tasks = _Tasks(client, calls, label)
    futures = tasks.submit(range(len(calls)))
    live = set(futures)
    try:
        return _outcomes(tasks, futures, live, progress)
    except BaseException:
        client.cancel([f for f in live if not f.done()])
        raise


def _workers(client):
    return set(client.scheduler_info()["workers"])


def _install(client, by_key, addresses):
    """Install each graph of `by_key` on those of `addresses` this client has not."""
    with _lock:
        installed = vars(client).setdefault(_INSTALLED, collections.OrderedDict())
        todo = {}
        for key in by_key:
            have = installed.setdefault(key, set())
            installed.move_to_end(key)
            if addresses - have:
                todo[key] = addresses - have
        while len(installed) > GRAPHS_PER_CLIENT:
            installed.popitem(last=False)
    for key, missing in todo.items():
        s = by_key[key]
        done = client.run(worker.install, key, s.data, s.options, workers=sorted(missing),
                          on_error="return")
        with _lock:
            installed.setdefault(key, set()).update(
                address for address, result in done.items() if result == key)


def _scatter_values(client, shipped):
    """{variable uid: future of its current value}, scattered once, to every worker."""
    variables = {v.uid: v for s in shipped for v in s.variables}
    if not variables:
        return {}
    futures = client.scatter([v.numpy() for v in variables.values()], broadcast=True,
                             hash=False)
    return dict(zip(variables, futures))


def _outcomes(tasks, futures, live, progress):
    from distributed import as_completed
    client, n = tasks.client, len(tasks.calls)
    if progress:
        from distributed import progress as progress_bar
        progress_bar(futures, scheduler=client.scheduler.address)
    outcomes = [None] * n
    first = n                            # the first failed input so far
    finished = as_completed(futures, loop=client.loop, with_results=True, raise_errors=False)
    for batch in finished.batches():     # results fetched as tasks finish, not in turn
        missing = []
        for future, result in batch:
            live.discard(future)
            i = tasks.index[future.key]
            if i >= first:
                continue
            if future.status == "finished" and isinstance(result, worker.Missing):
                missing.append((i, result.address))
                continue
            if future.status in ("pending", "lost"):    # its result died with a worker
                live.add(future)                        # before it came: Dask reruns it
                finished.add(future)
                continue
            outcomes[i] = result if future.status == "finished" else _task_error(
                future, i, tasks.label)
            if not isinstance(outcomes[i], list):
                first = i
                client.cancel([f for f in live if tasks.index[f.key] > first])
        for future in _resubmit(tasks, [(i, a) for i, a in missing if i < first]):
            live.add(future)
            finished.add(future)
    if first < n:
        raise _exception(outcomes[first], tasks.calls[first][0], first, tasks.label)
    return outcomes


def _resubmit(tasks, missing):
    """Install the graphs of the `missing` (input, worker address) and submit them again."""
    if not missing:
        return []
    addresses = {a for _, a in missing if a is not None} or _workers(tasks.client)
    by_key = {tasks.calls[i][0].key: tasks.calls[i][0] for i, _ in missing}
    gone = {(key, a) for key in by_key for a in addresses} - tasks.reinstalled
    tasks.reinstalled |= gone           # tasks that ran before this still report Missing
    with _lock:                         # what this client installed there is gone
        installed = vars(tasks.client).setdefault(_INSTALLED, collections.OrderedDict())
        for key, address in gone:
            installed.get(key, set()).discard(address)
    _install(tasks.client, by_key, addresses)
    for i, _ in missing:
        if tasks.tries[i] > RESUBMISSIONS:
            raise WorkerError(f"{tasks.label}: the task of input {i} ran {tasks.tries[i]} "
                              f"times on workers that did not hold its graph")
    return tasks.submit([i for i, _ in missing])


def _task_error(future, i, label):
    """The WorkerError of a task that Dask could not run (KilledWorker, cancelled)."""
    if future.status == "cancelled":
        return WorkerError(f"{label}: the task of input {i} was cancelled (its client or "
                           f"cluster closed, or another client cancelled it)")
    exc = future.exception()
    return WorkerError(f"{label}: the task of input {i} failed on the cluster: "
                       f"{type(exc).__name__}: {exc}")


def _exception(outcome, shipped, i, label):
    if isinstance(outcome, worker.Failure):
        exc = shipped.error(outcome)
        exc.add_note(f"(raised by a Dask worker running input {i} of {label})")
        return exc
    return outcome
