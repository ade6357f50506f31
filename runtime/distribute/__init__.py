"""Graphs on a Dask cluster (the optional extra `distributed`): map over inputs, and
data-parallel gradients.

    results = rt.distribute.map(f, [(x0,), (x1,), ...])     # f(x0), f(x1), ... on workers
    strategy = rt.distribute.DaskStrategy()
    loss, grads = strategy.value_and_gradients(loss_fn, variables, shards)

Workers run saved graphs (`rt.saved.to_bytes`, loaded with all of `rt.saved`'s checks),
never pickled Python: `f` is traced in the driver once per input signature, each graph
is sent once to each worker, which keeps it compiled under its content hash, and then
inputs and results travel as numpy arrays. The values of the variables a graph reads go
with each call. A kernel error on a worker is raised as a local call raises it (the same
class, op and source line); a function that cannot be saved (`rt.py_function`) is refused
before anything is sent. `client=None` uses the Dask client made current in this process
(one you created with `distributed.Client(...)`), else `default_client()`: a LocalCluster
of this machine, started on first use. The package imports without Dask; its functions
then raise an ImportError naming the extra.
"""
from . import cluster, shipping, tasks
from .cluster import default_client
from .shipping import user_traceback
from .strategy import DaskStrategy
from .tasks import WorkerError

__all__ = ["map", "default_client", "DaskStrategy", "WorkerError"]


@user_traceback
def map(fn, inputs, *, client=None, progress=False):  # noqa: A001 - the API's name
    """[fn(*inputs[0]), fn(*inputs[1]), ...], computed by Dask workers, in order.

    `fn`: an `ag.convert` / `rt.function` function, or a ConcreteFunction. `inputs`: a list
    whose items are argument tuples, or single arguments (an array, a tensor). Results are
    eager tensors in the structure `fn` returns. `client`: a `distributed.Client` of any
    cluster (None: see the module docstring). `progress=True` shows Dask's progress bar.
    Every input is traced (once per signature) and its graph checked before any task is
    submitted.
    """
    cluster.require_dask()
    who = "rt.distribute.map"
    calls = [shipping.bind(fn, item, who) for item in inputs]
    if not calls:
        return []
    outcomes = tasks.run(cluster.client_or_default(client), calls, who, progress)
    return [s.pack(outcome) for (s, _), outcome in zip(calls, outcomes)]
