"""Run-time switches: which executor runs graphs, which passes optimize them, threads.

    rt.config.set_executor("plain")        # debugging: the op-by-op executor
    rt.config.set_optimizations(False)     # run graphs exactly as traced
    rt.config.set_inter_op_threads(1)      # no inter-op parallelism
    rt.config.set_rematerialization(True)  # loops' gradients: recompute, keep less

"fast" (the default) compiles each graph once into straight-line Python source
that calls the kernels directly (`runtime.codegen_executor`); "plain" walks a
plan of steps (`runtime.executor.Plan`). Both run the graph the passes of
`runtime.passes` made (unless optimizations are off) and give identical results.
"""
import contextlib
import os

__all__ = ["set_executor", "get_executor", "set_optimizations", "get_optimizations",
           "set_rematerialization", "set_inter_op_threads", "get_inter_op_threads", "options"]

EXECUTORS = ("fast", "plain")
PASS_NAMES = ("algebraic", "constant_folding", "cse", "pruning", "fusion", "parallel", "memory",
              "rematerialization")
DEFAULT_PASSES = frozenset(PASS_NAMES) - {"rematerialization"}    # it trades time for memory

_state = {
    "executor": "fast",
    "passes": DEFAULT_PASSES,
    "threads": None,            # None: os.cpu_count()
    "version": 0,               # one number per combination of settings: graphs keep
}                               # what they compiled under each
_versions = {}


def _changed():
    key = (_state["executor"], _state["passes"], _state["threads"])
    _state["version"] = _versions.setdefault(key, len(_versions))


def set_executor(name):
    """Select the executor that runs graphs: "fast" (compiled) or "plain" (step by step)."""
    if name not in EXECUTORS:
        raise ValueError(f"Unknown executor {name!r}; choose one of {EXECUTORS}")
    _state["executor"] = name
    _changed()


def get_executor():
    return _state["executor"]


def set_optimizations(enabled=True):
    """Turn graph passes on (True: `DEFAULT_PASSES`), off (False), or name the ones to run
    (an iterable of `PASS_NAMES`)."""
    if enabled is True:
        passes = DEFAULT_PASSES
    elif enabled is False or enabled is None:
        passes = frozenset()
    else:
        passes = frozenset(enabled)
        unknown = passes - set(PASS_NAMES)
        if unknown:
            raise ValueError(f"Unknown passes {sorted(unknown)}; known: {PASS_NAMES}")
    _state["passes"] = passes
    _changed()


def get_optimizations():
    """The names of the passes that run, a frozenset."""
    return _state["passes"]


def set_rematerialization(enabled=True):
    """Recompute cheap forward values of loops in their gradients instead of keeping one
    per iteration (less memory, more compute; off by default)."""
    passes = _state["passes"] | {"rematerialization"} if enabled else \
        _state["passes"] - {"rematerialization"}
    set_optimizations(passes)


def set_inter_op_threads(n):
    """Threads for independent heavy ops (None: one per core; 0 or 1: none)."""
    _state["threads"] = None if n is None else int(n)
    _changed()


def get_inter_op_threads():
    n = _state["threads"]
    return (os.cpu_count() or 1) if n is None else n


@contextlib.contextmanager
def options(executor=None, optimizations=None, inter_op_threads=False):
    """Temporarily change settings: `with rt.config.options(executor="plain"): ...`."""
    saved = dict(_state)
    try:
        if executor is not None:
            set_executor(executor)
        if optimizations is not None:
            set_optimizations(optimizations)
        if inter_op_threads is not False:
            set_inter_op_threads(inter_op_threads)
        yield
    finally:
        _state.update(saved)


_changed()

# CI runs the suites under each setting: RT_EXECUTOR=plain, RT_OPTIMIZE=0 (or pass names).
if os.environ.get("RT_EXECUTOR"):
    set_executor(os.environ["RT_EXECUTOR"])
if os.environ.get("RT_OPTIMIZE"):
    _value = os.environ["RT_OPTIMIZE"]
    set_optimizations(_value not in ("0", "false", "no") if _value in (
        "0", "1", "false", "true", "no", "yes") else _value.split(","))
