"""A Dask worker plugin for the worker processes of `local_cluster`: the runtime runs
independent ops of a graph on one thread there (the worker's one task thread is the
process's share of the machine)."""
from distributed import WorkerPlugin

__all__ = ["OneInterOpThread"]


class OneInterOpThread(WorkerPlugin):
    idempotent = True

    def setup(self, worker):
        from .. import config
        config.set_inter_op_threads(1)
