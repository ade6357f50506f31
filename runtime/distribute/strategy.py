"""Synchronous data-parallel training on Dask: one gradient task per shard, averaged.

    strategy = rt.distribute.DaskStrategy()
    loss, grads = strategy.value_and_gradients(loss_fn, variables, [(x0, y0), (x1, y1)])
    optimizer.apply_gradients(zip(grads, variables))

The graph of `loss_and_gradients(*shard)` (loss_fn under a GradientTape, then the
gradients w.r.t. `variables`) is traced once per shard signature and shipped once; each
step sends the variables' current values once, runs one task per shard and averages the
losses and gradients weighted by shard size (the leading dimension of a shard's first
array), adding them up in shard order, so that a step's result does not depend on which
worker finished first. For a loss that is a mean over its batch, the result is the
full-batch loss and gradient.
"""
import numpy as np

from .. import nest
from ..function import function
from ..gradients import GradientTape
from ..tensor import EagerTensor
from ..variables import Variable
from . import cluster, shipping, tasks

__all__ = ["DaskStrategy"]

WHO = "DaskStrategy.value_and_gradients"


class DaskStrategy:
    """Data-parallel gradients on the workers of `client` (None: `client_or_default`, when
    first used)."""

    def __init__(self, client=None):
        self._client = client
        self._functions = {}        # (id of loss_fn, variable uids) -> (loss_fn, Function)

    @property
    def client(self):
        """The Dask client the tasks go to (the one given, else `client_or_default`'s)."""
        return cluster.client_or_default(self._client)

    @shipping.user_traceback
    def value_and_gradients(self, loss_fn, variables, shards):
        """(mean loss, [mean gradient of each variable, None where the loss does not
        depend on it]) over `shards`, a list of argument tuples of `loss_fn` (or single
        arrays), weighted by their sizes."""
        cluster.require_dask()
        variables = _checked_variables(variables)
        shards = list(shards)
        if not shards:
            raise ValueError(f"{WHO}: no shards given")
        sizes = [_shard_size(shard, i) for i, shard in enumerate(shards)]
        fn = self._gradient_function(loss_fn, variables)
        calls = [shipping.bind(fn, shard, WHO) for shard in shards]
        outcomes = tasks.run(self.client, calls, WHO)
        results = [s.pack(outcome) for (s, _), outcome in zip(calls, outcomes)]
        loss = _weighted_mean([r[0] for r in results], sizes)
        grads = [_weighted_mean([r[1][j] for r in results], sizes)
                 for j in range(len(variables))]
        return loss, grads

    def _gradient_function(self, loss_fn, variables):
        key = (id(loss_fn), tuple(v.uid for v in variables))
        found = self._functions.get(key)
        if found is None:
            def loss_and_gradients(*shard):
                with GradientTape() as tape:
                    loss = loss_fn(*shard)
                return loss, tape.gradient(loss, variables)

            name = getattr(loss_fn, "__name__", "loss_fn")
            found = self._functions[key] = (loss_fn, function(
                loss_and_gradients, name=f"{name}_and_gradients", reduce_retracing=True))
        return found[1]


def _checked_variables(variables):
    variables = list(variables)
    for i, v in enumerate(variables):
        if not isinstance(v, Variable):
            raise TypeError(f"{WHO}: variables[{i}] is {type(v).__name__} {v!r:.60}, not an "
                            f"rt.Variable")
    return variables


def _shard_size(shard, i):
    """The leading dimension of the shard's first argument that has one."""
    args = shard if type(shard) is tuple else (shard,)
    for leaf in nest.flatten(list(args)):
        shape = np.shape(leaf)
        if shape:
            return shape[0]
    raise ValueError(f"{WHO}: shard {i} has no array argument with a leading (batch) "
                     f"dimension to weight its loss and gradients by")


def _weighted_mean(values, sizes):
    """sum(n_i * v_i) / sum(n_i), added in order; None if every v_i is None (a None among
    arrays counts as zeros)."""
    total, dtype = None, None
    for value, n in zip(values, sizes):
        if value is None:
            continue
        array = value.numpy()
        dtype = array.dtype
        term = array.astype(np.promote_types(dtype, np.float32), copy=False) * n
        total = term if total is None else total + term
    if total is None:
        return None
    return EagerTensor(np.asarray(total / sum(sizes)).astype(dtype, copy=False))
