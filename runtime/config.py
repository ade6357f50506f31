"""Run-time switches: which executor runs graphs, which passes optimize them, threads.

    rt.config.set_executor("plain")        # debugging: the op-by-op executor
    rt.config.set_optimizations(False)     # run graphs exactly as traced
    rt.config.set_inter_op_threads(1)      # no inter-op parallelism
    rt.config.set_rematerialization(True)  # loops' gradients: recompute, keep less
    rt.config.set_loop_iteration_limit(10**6)   # a runaway tensor loop fails instead
    rt.config.set_trace_cache_size(32)     # traces kept per graph function (LRU)
    rt.config.set_traceback_filtering(False)    # tracebacks show the runtime's frames
    rt.config.set_memory_budget(2**30)     # graphs recompute values to plan within 1 GiB
    rt.config.set_lazy_compile(False)      # the fast executor compiles before a first run
    rt.config.set_default_device("gpu:0")  # ops outside rt.device scopes run there
    rt.config.set_log_device_placement(True)    # print where each op runs, and why
    rt.config.release_buffers()            # free what loops keep for their next run

"fast" (the default) compiles each graph once into straight-line Python source
that calls the kernels directly (`runtime.codegen_executor`); "plain" walks a
plan of steps (`runtime.executor.Plan`). Both run the graph the passes of
`runtime.passes` made (unless optimizations are off) and give identical results.
Lazy compiling (on by default) spares a graph run once the cost of its passes and
source: the first run of a loop-free graph of at most `LAZY_ELEMENTS` elements
(all its values together, known while tracing) runs step by step on the graph as
traced (the plain executor, whose results are the same); its second run optimizes
and compiles it. Graphs with loops, or bigger ones, compile before their first run.
"compiled" is the fast executor with its lowerable regions compiled by numba
(`runtime.compiled`; the `jit` extra), as `rt.function(jit_compile=True)` asks for
one function: when regions compile is `set_compile_policy`'s to say,
`compiled_regions()` reports what was compiled and why the rest was not.

The loop iteration limit (None by default) applies to every tensor loop: graph
`while` ops under both executors, `rt.while_loop` run eagerly, and a converted
`while` whose condition is an eager tensor. A loop about to run its body once
more than the limit raises `rt.errors.LoopIterationLimitError` naming the loop's
line. It is read when a loop starts, so changing it needs no retracing.

The memory budget (None by default) bounds the planned peak memory of each graph the
passes optimize (`passes.memory.planned_peak`): over it, the rematerialization pass
recomputes loops' collected values, the cheapest first, until the plan fits, and warns
by how much it is over when it cannot. `rt.function(..., memory_budget=)` sets one for
the graphs of one function.

A loop that collects values for its gradient (or a list grown in it) packs them into
buffers it keeps for its next run (at most one per collection, freed with the graph):
memory the process has just written is warm, where a fresh buffer's pages are zeroed by
the kernel as they are first touched. `release_buffers()` drops them all now.
"""
import contextlib
import os

from . import devices

__all__ = ["set_executor", "get_executor", "set_optimizations", "get_optimizations",
           "set_rematerialization", "set_inter_op_threads", "get_inter_op_threads",
           "set_loop_iteration_limit", "get_loop_iteration_limit", "set_memory_budget",
           "get_memory_budget", "options", "set_compile_policy", "get_compile_policy",
           "set_compile_cache_dir", "get_compile_cache_dir", "compiled_regions",
           "set_trace_cache_size", "get_trace_cache_size", "set_traceback_filtering",
           "get_traceback_filtering", "set_lazy_compile", "get_lazy_compile", "list_devices",
           "set_log_device_placement", "get_log_device_placement", "set_default_device",
           "get_default_device", "release_buffers"]

EXECUTORS = ("fast", "plain", "compiled")
COMPILE_POLICIES = ("hot", "always", "never")
PASS_NAMES = ("algebraic", "constant_folding", "cse", "pruning", "fusion", "parallel", "memory",
              "rematerialization", "quantize")
DEFAULT_PASSES = frozenset(PASS_NAMES) - {"rematerialization"}    # it trades time for memory

_state = {
    "executor": "fast",
    "passes": DEFAULT_PASSES,
    "threads": None,            # None: os.cpu_count()
    "loop_limit": None,         # None: tensor loops may run forever
    "trace_cache_size": 128,    # traces each graph function keeps (None: all)
    "traceback_filtering": True,    # errors through graph functions hide our frames
    "compile_policy": {"policy": "hot", "calls": 50, "loop_iterations": 5000,
                       "background": True},
    "compile_cache": None,      # None: the user cache dir
    "memory_budget": None,      # None: graphs keep what their gradients need
    "lazy_compile": True,       # the fast executor interprets a small graph's first run
    "log_device_placement": False,  # print where each op runs (runtime.devices)
    "version": 0,               # one number per combination of settings: graphs keep
}                               # what they compiled under each
_versions = {}


def _changed():
    key = (_state["executor"], _state["passes"], _state["threads"], _state["memory_budget"],
           devices.placing, devices.default().name)
    _state["version"] = _versions.setdefault(key, len(_versions))


def set_executor(name):
    """Select the executor that runs graphs: "fast" (generated Python), "plain" (step by
    step) or "compiled" (the fast one with regions compiled by numba)."""
    if name not in EXECUTORS:
        raise ValueError(f"Unknown executor {name!r}; choose one of {EXECUTORS}")
    _state["executor"] = name
    _changed()


def get_executor():
    """The executor that runs graphs: "fast", "plain" or "compiled"."""
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
    """How many threads run independent heavy ops (see set_inter_op_threads)."""
    n = _state["threads"]
    return (os.cpu_count() or 1) if n is None else n


def set_loop_iteration_limit(n):
    """Fail a tensor loop that would run its body more than `n` times (None: no limit).

    Guards tests and services against runaway loops; a loop's own bound is
    `maximum_iterations` (`rt.while_loop`, `autograph.set_loop_options`).
    """
    if n is not None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"The loop iteration limit must be None or an int >= 0, got {n!r}")
    _state["loop_limit"] = n


def get_loop_iteration_limit():
    """The most iterations a tensor loop may run, or None (no limit)."""
    return _state["loop_limit"]


def set_compile_policy(policy=None, *, calls=None, loop_iterations=None, background=None):
    """When the compiled tier compiles a region: "hot" (once entered `calls` times, or a
    loop once it made `loop_iterations` iterations in one run; on a background thread
    unless `background=False`), "always" (before its first run, on the calling thread)
    or "never". Arguments left out keep their setting."""
    current = dict(_state["compile_policy"])
    if policy is not None:
        if policy not in COMPILE_POLICIES:
            raise ValueError(f"Unknown compile policy {policy!r}; choose one of "
                             f"{COMPILE_POLICIES}")
        current["policy"] = policy
    for key, value in (("calls", calls), ("loop_iterations", loop_iterations)):
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{key} must be an int >= 1, got {value!r}")
            current[key] = value
    if background is not None:
        current["background"] = bool(background)
    _state["compile_policy"] = current


def get_compile_policy():
    """{"policy", "calls", "loop_iterations", "background"} (see set_compile_policy)."""
    return _state["compile_policy"]


LAZY_ELEMENTS = 1 << 20


def set_lazy_compile(enabled=True):
    """Whether the fast executor runs the first run of a small loop-free graph step by
    step and compiles it for its second (see the module docstring); off: it compiles
    every graph before its first run (RT_LAZY_COMPILE=0)."""
    _state["lazy_compile"] = bool(enabled)


def get_lazy_compile():
    """Whether the fast executor compiles graphs lazily (see set_lazy_compile)."""
    return _state["lazy_compile"]


def set_compile_cache_dir(path):
    """Where compiled regions are cached on disk (None: the user cache dir)."""
    _state["compile_cache"] = None if path is None else os.fspath(path)


def get_compile_cache_dir():
    """The directory compiled regions are cached in: the one set (set_compile_cache_dir,
    or RT_COMPILE_CACHE), else `autograph-runtime/compiled` in the user cache directory
    (XDG_CACHE_HOME, or ~/.cache)."""
    path = _state["compile_cache"]
    if path is not None:
        return path
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "autograph-runtime", "compiled")


def compiled_regions():
    """A list of dicts, one per region of the compiled tier (its graph, ops, "state":
    compiled, cold, pending, compiling, failed; "reason" when it failed) and one per op
    left to the fast executor (state "not lowered", the reason)."""
    from . import compiled
    return compiled.report()


def release_buffers():
    """Free the buffers loops keep for their next run (those a result still refers to are
    freed with it)."""
    from . import control_flow
    control_flow.release_buffers()


def check_memory_budget(nbytes):
    """`nbytes` if it is a memory budget (None, or an int of bytes > 0), else ValueError."""
    if nbytes is not None and (isinstance(nbytes, bool) or not isinstance(nbytes, int)
                               or nbytes <= 0):
        raise ValueError(f"A memory budget is None or a number of bytes > 0, got {nbytes!r}")
    return nbytes


def set_memory_budget(nbytes):
    """Plan every graph to hold at most `nbytes` bytes at once, recomputing loops' collected
    values as needed (None: no budget). See the module docstring."""
    _state["memory_budget"] = check_memory_budget(nbytes)
    _changed()


def get_memory_budget():
    """The memory budget in bytes, or None."""
    return _state["memory_budget"]


def set_trace_cache_size(n):
    """Keep at most `n` traces per graph function (None: no bound); beyond it the least
    recently used trace is dropped (and logged), to be traced again if called again."""
    if n is not None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"The trace cache size must be None or an int >= 1, got {n!r}")
    _state["trace_cache_size"] = n


def get_trace_cache_size():
    """The most traces a graph function keeps, or None (no bound)."""
    return _state["trace_cache_size"]


def set_traceback_filtering(enabled=True):
    """Whether tracebacks of errors raised through `rt.function`/`autograph.convert`
    calls leave out the runtime's and compiler's own frames (on by default; TF's
    `tf.debugging.disable_traceback_filtering` is `set_traceback_filtering(False)`)."""
    _state["traceback_filtering"] = bool(enabled)


def get_traceback_filtering():
    """Whether tracebacks leave out the library's frames (see set_traceback_filtering)."""
    return _state["traceback_filtering"]


def list_devices():
    """The names of this machine's devices: "cpu:0", "gpu:N" for each GPU CuPy sees (extra
    `gpu`), and the array_api_strict stand-ins "strict:0", "strict:1" (extra `array-api`)."""
    return devices.list_devices()


def set_default_device(name):
    """Run ops outside any `rt.device` scope on device `name` ("cpu:0", "gpu:0",
    "strict:0"; None: cpu:0), as `RT_DEVICE=name` does for a whole process. Graphs
    already traced run there too from their next call (their ops without a scope are
    placed again)."""
    devices.set_default("cpu:0" if name is None else name)
    _changed()


def get_default_device():
    """The name of the device ops outside `rt.device` scopes run on."""
    return devices.default().name


def set_log_device_placement(enabled=True):
    """Print (to stderr) the device each op runs on, eagerly and when a graph is placed,
    and why an op runs on cpu:0 instead of its scope's device (soft placement)."""
    _state["log_device_placement"] = bool(enabled)
    if enabled:
        devices.start_placing()


def get_log_device_placement():
    """Whether placements are printed (`set_log_device_placement`)."""
    return _state["log_device_placement"]


@contextlib.contextmanager
def options(executor=None, optimizations=None, inter_op_threads=False,
            loop_iteration_limit=False, memory_budget=False, compile_policy=None,
            default_device=None):
    """Temporarily change settings: `with rt.config.options(executor="plain"): ...`.

    `inter_op_threads`, `loop_iteration_limit` and `memory_budget` take None as a
    setting; leave them out (False) to keep the current one.
    """
    saved = dict(_state)
    saved_device = devices.default().name
    try:
        if default_device is not None:
            set_default_device(default_device)
        if executor is not None:
            set_executor(executor)
        if optimizations is not None:
            set_optimizations(optimizations)
        if inter_op_threads is not False:
            set_inter_op_threads(inter_op_threads)
        if loop_iteration_limit is not False:
            set_loop_iteration_limit(loop_iteration_limit)
        if compile_policy is not None:
            set_compile_policy(compile_policy)
        if memory_budget is not False:
            set_memory_budget(memory_budget)
        yield
    finally:
        _state.update(saved)
        if devices.default().name != saved_device:
            devices.set_default(saved_device)


_changed()

# CI runs the suites under each setting: RT_EXECUTOR=plain, RT_OPTIMIZE=0 (or pass names);
# RT_LOOP_LIMIT=n turns runaway tensor loops of a test run into errors.
if os.environ.get("RT_EXECUTOR"):
    set_executor(os.environ["RT_EXECUTOR"])
if os.environ.get("RT_OPTIMIZE"):
    _value = os.environ["RT_OPTIMIZE"]
    set_optimizations(_value not in ("0", "false", "no") if _value in (
        "0", "1", "false", "true", "no", "yes") else _value.split(","))
if os.environ.get("RT_LOOP_LIMIT", "").strip().lower() not in ("", "none"):
    set_loop_iteration_limit(int(os.environ["RT_LOOP_LIMIT"]))
# RT_COMPILE_POLICY=always compiles every region of the compiled tier at once (tests);
# RT_COMPILE_CACHE=dir keeps compiled regions there.
if os.environ.get("RT_COMPILE_POLICY"):
    set_compile_policy(os.environ["RT_COMPILE_POLICY"])
if os.environ.get("RT_COMPILE_CACHE"):
    set_compile_cache_dir(os.environ["RT_COMPILE_CACHE"])
if os.environ.get("RT_LAZY_COMPILE"):
    set_lazy_compile(os.environ["RT_LAZY_COMPILE"].strip().lower() not in ("0", "false", "no"))
# RT_DEVICE=strict:0 runs every op outside an rt.device scope on that device (CI's run of the
# suites on the array_api_strict stand-in; RT_DEVICE=gpu:0 on a GPU machine).
if os.environ.get("RT_DEVICE", "").strip():
    try:
        set_default_device(os.environ["RT_DEVICE"].strip())
    except (TypeError, ValueError) as _e:
        raise ValueError(f"RT_DEVICE={os.environ['RT_DEVICE']!r}: {_e}") from None
