"""Random ops (`rt.random`) with TensorFlow's seed semantics.

A global seed (`rt.random.set_seed`) and an op seed together fix the sequence
an op produces. Each graph op owns its generator, so every run of a graph
draws new numbers, reproducibly from the seeds; eagerly, calls with the same
op seed continue one sequence. Without any seed, numbers are not reproducible.
Code traced twice for the same call sites (a `while` test before a graph loop and in
it) can have its second trace's ops take the first's generators (`recording_generators`,
`reusing_generators`): they continue one sequence, as the calls do eagerly.
"""
import contextlib
import itertools
import threading

import numpy as np

from .. import context
from .. import rollback
from .. import devices
from .. import dtypes
from ..shapes import TensorShape
from . import registry
from .array_ops import _dynamic_shape_infer, _shape_arg, static_scalar
from .registry import apply

_DEFAULT_GLOBAL_SEED = 87654321
_lock = threading.Lock()
_global = {"seed": None, "counter": itertools.count(), "eager_states": {}}


class RngState:
    """The generator behind one random op (created on first use)."""

    __slots__ = ("seeds", "_gen")

    def __init__(self, seeds):
        self.seeds = seeds
        self._gen = None

    @property
    def generator(self):
        """The generator, about to draw (in a graph run, noted so a failed run undoes it)."""
        if rollback.active() is not None:
            rollback.note(self, _Redraw(self))
        if self._gen is None:
            self._gen = np.random.default_rng(list(self.seeds) if self.seeds else None)
        return self._gen

    def __repr__(self):
        return f"seed{self.seeds}" if self.seeds else "unseeded"


class _Redraw(rollback.Entry):
    """Puts a generator back where it was before a failed run drew from it."""

    __slots__ = ("rng", "gen", "position")

    def __init__(self, rng):
        self.rng, self.gen = rng, rng._gen
        self.position = None if rng._gen is None else rng._gen.bit_generator.state

    def undo(self):
        self.rng._gen = self.gen
        if self.gen is not None:
            self.gen.bit_generator.state = self.position


def set_seed(seed):
    """Set the global random seed: later random ops become reproducible."""
    with _lock:
        _global["seed"] = None if seed is None else int(seed)
        _global["counter"] = itertools.count()
        _global["eager_states"] = {}


def get_global_seed():
    return _global["seed"]


def op_seeds(op_seed):
    """(global seed, op seed) fixing what a random op draws (TensorFlow's rule), or None
    when neither seed is set: an op without a seed takes the next of a counter (per graph
    while tracing), a seed without a global seed pairs with a default one."""
    graph = context.current_graph()
    global_seed = _global["seed"]
    if graph is not None and graph.seed is not None:
        global_seed = graph.seed
    if global_seed is None and op_seed is None:
        return None
    if op_seed is None:
        if graph is not None:
            graph._random_ops += 1
            op_seed = graph._random_ops
        else:
            op_seed = next(_global["counter"])
    if global_seed is None:
        global_seed = _DEFAULT_GLOBAL_SEED
    return (global_seed, int(op_seed))


class _Sites(threading.local):
    recorded = None     # a list noting (op seed, generator) of the graph ops created
    reused = None       # an iterator of such pairs whose generators they take


_sites = _Sites()


@contextlib.contextmanager
def recording_generators():
    """Gives a list noting, in order, the op seeds and generators of the graph random ops
    created inside (see `reusing_generators`)."""
    saved, _sites.recorded = _sites.recorded, []
    try:
        yield _sites.recorded
    finally:
        _sites.recorded = saved


@contextlib.contextmanager
def reusing_generators(generators):
    """The graph random ops created inside take, in order, the generators noted by
    `recording_generators` (the same code traced again: the same call sites, which give
    the same op seeds)."""
    saved, _sites.reused = _sites.reused, iter(generators)
    try:
        yield
    finally:
        _sites.reused = saved


def _graph_state(op_seed):
    """The generator of a graph op given `op_seed`: a new one, or the one noted for the
    same call site (`reusing_generators`: the same op seed, in the same order)."""
    site = next(_sites.reused, None) if _sites.reused is not None else None
    if site is not None and site[0] == op_seed:
        state = site[1]
    else:
        state = RngState(op_seeds(op_seed))
    if _sites.recorded is not None:
        _sites.recorded.append((op_seed, state))
    return state


def _state_for(op_seed):
    if context.current_graph() is not None:
        return _graph_state(op_seed)
    seeds = op_seeds(op_seed)
    if seeds is None:
        return RngState(None)
    with _lock:
        states = _global["eager_states"]
        state = states.get(seeds)
        if state is None:
            state = states[seeds] = RngState(seeds)
        return state


def _uniform_kernel(*dynamic, shape=None, minval, maxval, dtype, state):
    shape = tuple(dynamic[0]) if dynamic else shape
    gen = state.generator
    if dtype.is_integer:
        return gen.integers(minval, maxval, size=shape, dtype=dtype.np)
    work = np.float64 if dtype == dtypes.float64 else np.float32
    values = (gen.random(shape, dtype=work) * (maxval - minval) + minval).astype(dtype.np)
    # Rounding (to float16, or of a scaled value) can reach maxval: keep [minval, maxval).
    return np.minimum(values, np.nextafter(dtype.np.type(maxval), dtype.np.type(minval)))


def _normal_kernel(*dynamic, shape=None, mean, stddev, dtype, state):
    shape = tuple(dynamic[0]) if dynamic else shape
    work = np.float64 if dtype == dtypes.float64 else np.float32
    values = state.generator.standard_normal(shape, dtype=work)
    return (values * stddev + mean).astype(dtype.np)


def _truncated_normal_kernel(*dynamic, shape=None, mean, stddev, dtype, state):
    shape = tuple(dynamic[0]) if dynamic else shape
    gen = state.generator
    values = gen.standard_normal(shape)
    bad = np.abs(values) > 2
    while bad.any():
        values[bad] = gen.standard_normal(int(bad.sum()))
        bad = np.abs(values) > 2
    return (values * stddev + mean).astype(dtype.np)


def _random_infer(inputs, shape=None, dtype=None, **_):
    if shape is None:
        return [(_dynamic_shape_infer(inputs[0]), dtype)]
    return [(TensorShape(shape), dtype)]


def _drawn_on_host(numpy_kernel):
    """The generic kernel of a random op: the numbers its generator draws on the host,
    put on the device (so a seed gives the same numbers on every device)."""
    def kernel(xp, *dynamic, **attrs):
        values = numpy_kernel(*[devices.to_host(d) for d in dynamic], **attrs)
        return xp.asarray(values, copy=True)
    return kernel


def _register_random(name, numpy_kernel):
    return registry.register(name, _drawn_on_host(numpy_kernel), _random_infer, stateful=True,
                             fresh=True, numpy=numpy_kernel)


_UNIFORM = _register_random("random_uniform", _uniform_kernel)
_NORMAL = _register_random("random_normal", _normal_kernel)
_TRUNCATED = _register_random("truncated_normal", _truncated_normal_kernel)


def _random(opdef, shape, attrs, seed, name):
    static, dynamic = _shape_arg(shape)
    attrs["state"] = _state_for(seed)
    if static is not None:
        attrs["shape"] = static
        return apply(opdef, [], attrs, name)
    return apply(opdef, [dynamic], attrs, name)


def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Uniform values in [minval, maxval) (maxval defaults to 1 for floats)."""
    dtype = dtypes.as_dtype(dtype)
    if maxval is None:
        if dtype.is_integer:
            raise ValueError("uniform: integer dtypes need an explicit maxval")
        maxval = 1
    return _random(_UNIFORM, shape, {"minval": static_scalar(minval, "minval"),
                                     "maxval": static_scalar(maxval, "maxval"), "dtype": dtype},
                   seed, name)


def normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normally distributed values."""
    return _random(_NORMAL, shape, {"mean": static_scalar(mean, "mean"),
                                    "stddev": static_scalar(stddev, "stddev"),
                                    "dtype": dtypes.as_dtype(dtype)}, seed, name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal values redrawn until within two standard deviations of the mean."""
    return _random(_TRUNCATED, shape, {"mean": static_scalar(mean, "mean"),
                                       "stddev": static_scalar(stddev, "stddev"),
                                       "dtype": dtypes.as_dtype(dtype)}, seed, name)
