"""The compiled tier: regions of a graph run as machine code compiled by numba.

    rt.config.set_executor("compiled")         # every graph (or RT_EXECUTOR=compiled)
    @rt.function(jit_compile=True)             # one function (ag.convert takes it too)
    rt.config.compiled_regions()               # what was compiled, and why not the rest

The fast executor's generator (`runtime.codegen_executor`) splits each graph into
regions, maximal runs of ops whose registry entries declare a lowering; a lowerable
`while` is a region of its own (the whole loop in one compiled function). The
program calls each region's `Region.run`, which returns its results, or None: then
the same ops run right there in the fast executor (not compiled yet, numba failed
on them, or the compiled code met a value it leaves to numpy's error). Values pass
between the two as they are (arrays are not copied).

Compile policy (`rt.config.set_compile_policy`): a function called once should not
pay a compile that costs more than it saves. numba needs 0.3-0.7 s to start in a
process and 0.2-1 s to compile a region; a region loaded from the disk cache costs
a few ms. So by default ("hot") a region is compiled once it has been entered
`calls` times (50), and a loop region also once one run of it has made
`loop_iterations` iterations (5,000); compiling happens on a background thread
while the fast executor goes on, and a running loop moves into the compiled loop,
with its state, when that is ready. "always" compiles every region before its first
run, on the calling thread (tests; the numbers then do not matter); "never" keeps
everything in the fast executor. Compiled code is cached on disk, keyed by a hash of
its source (the graph's content, lowered), under `rt.config.get_compile_cache_dir()`
(default: the user cache dir; RT_COMPILE_CACHE), so another process loads it.
"""
import functools
import hashlib
import importlib.util
import os
import sys
import threading
import types
import warnings
import weakref

import numpy as np

from .. import config
from ..errors import loop_limit_exceeded

__all__ = ["available", "Region", "report", "warn_unavailable"]

_lock = threading.RLock()
_regions = weakref.WeakSet()
_not_lowered = {}                    # (graph name, op name) -> report entry, oldest first
_NOT_LOWERED_KEPT = 10000            # the most recent ones are kept
_warned = []
_HEADER = ("import numpy as np\nfrom numba import njit\n"
           "from runtime.compiled.helpers import *  # noqa: F401,F403\n\n")
_JIT = 'njit(cache=True, error_model="numpy", nogil=True)'


def available():
    """Is numba installed (without importing it)?"""
    return importlib.util.find_spec("numba") is not None


def warn_unavailable():
    """Warn once that jit_compile needs the `jit` extra; the fast executor runs instead."""
    if not _warned:
        _warned.append(True)
        warnings.warn("jit_compile needs numba, which is not installed: install the 'jit' "
                      "extra (pip install 'autograph[jit]'); running the fast executor "
                      "instead", RuntimeWarning, stacklevel=4)


# -- regions ---------------------------------------------------------------------------------

class Region:
    """One compiled region of a program: its source, its state, its numba function."""

    def __init__(self, lowered, loop, description, graph_name, collects=None):
        self.name = lowered.name
        self.source = lowered.source
        self.faults = lowered.faults
        self.loop = loop
        # A loop collecting values for its gradient: (its n_vars, how many it collects);
        # its function takes the sizes they had last time (iterations, then each one's).
        self.collects = collects
        self.hints = () if collects is None else (0,) * (collects[1] + 1)
        self.description = description
        self.graph_name = graph_name
        self.fn = None
        self.state = "cold"             # cold, pending, compiled, failed
        self.reason = None
        self.calls = 0
        self.no_switch = False
        with _lock:
            _regions.add(self)
        if config.get_compile_policy()["policy"] == "always":
            self.state = "pending"

    # -- the program's calls ---------------------------------------------------------------
    def run(self, *args):
        """The region's results computed by its compiled function, or None. (Scalars come
        back as Python scalars: the program makes them numpy scalars of their dtypes.)"""
        self.no_switch = False
        args += self.hints
        if self.fn is None:
            sample = ((0, -1) if self.loop else (-1,)) + args
            if not self._due(sample, calls=True):
                return None
        return self._collected(self._call((0,) + args if self.loop else args))

    def _collected(self, out):
        """`out`, having noted the sizes of a collecting loop's collections for next time."""
        if self.collects is not None and out is not None:
            n, k = self.collects
            self.hints = (int(out[n]),) + tuple(out[n + 1 + 2 * s].shape[0] for s in range(k))
        return out

    def guard(self, i):
        """The iteration at which the fast executor's loop calls `switch` next (-1: never):
        the loop iteration limit, or a moment to move into the compiled loop."""
        limit = _limit()
        if self.no_switch or self.state == "failed":
            return limit
        policy = config.get_compile_policy()
        if policy["policy"] == "never":
            return limit
        at = i + (policy["loop_iterations"] if self.state == "cold" else 256)
        return at if limit < 0 or at < limit else limit

    def switch(self, i, *args):
        """In iteration i of the fast executor's loop: the loop's final values computed by
        the compiled loop from here, or None (the loop goes on). At the iteration limit,
        the loop's error."""
        limit = _limit()
        if i == limit:
            raise loop_limit_exceeded(limit)
        if self.fn is None and not self._due((i, -1) + args, calls=False):
            return None
        return self._call((i,) + args)

    # -- compiling ---------------------------------------------------------------------------
    def _due(self, sample, calls):
        """Compile if the policy says so now (`sample`: arguments of the numba function,
        for their types); is the function ready?"""
        policy = config.get_compile_policy()
        if policy["policy"] == "never" or self.state in ("failed", "compiling"):
            return False
        if calls:
            self.calls += 1
        if self.state == "cold":
            if calls and self.calls < policy["calls"]:
                return False
            self.state = "pending"
        if policy["background"] and policy["policy"] != "always":
            self.state = "compiling"
            _background(self, sample)
            return False
        self._compile(sample)
        return self.fn is not None

    def _compile(self, sample):
        try:
            numba = _numba()
            fn = _function(self)
            fn.compile(tuple(numba.typeof(a) for a in sample))
        except Exception as e:  # noqa: BLE001 - numba's errors are many; the region falls back
            self.state, self.reason = "failed", f"numba: {type(e).__name__}: {_first_line(e)}"
            return
        self.fn, self.state, self.reason = fn, "compiled", None
        self.run = self._compiled_run()     # the program's calls go straight to it

    def _compiled_run(self):
        """`run` once compiled: the compiled function called with the loop iteration
        limit of the moment."""
        fn, limits, fault = self.fn, config._state, _fault_type()
        entry = _scalar_entry(fn)
        direct = entry is not None
        entry = entry or fn
        loop = self.loop                # a loop region starts at iteration 0

        def run(*args):
            self.no_switch = False
            limit = limits["loop_limit"]
            limit = -1 if limit is None else limit
            args = (0, limit, *args) if loop else (limit, *args)
            try:
                try:
                    return entry(*args)
                except (TypeError, ValueError, OverflowError):
                    if not direct:
                        raise
                return fn(*args)      # not the types it was compiled for: dispatch
            except fault:
                self.no_switch = True
                return None
            except Exception as e:  # noqa: BLE001 - e.g. numba compiling for new types
                self._give_up(e)
                return None

        if self.collects is None:
            return run
        return lambda *args: self._collected(run(*args, *self.hints))

    def _call(self, args):
        """Call the compiled function (a loop region's args start with its iteration)."""
        guard = _limit()
        try:
            if self.loop:
                out = self.fn(args[0], guard, *args[1:])
            else:
                out = self.fn(guard, *args)
        except _fault_type():
            self.no_switch = True
            return None
        except Exception as e:  # noqa: BLE001 - e.g. numba compiling for new argument types
            self._give_up(e)
            return None
        return out

    def _give_up(self, exc):
        """The compiled function failed (not a fault): the fast executor runs from now on."""
        self.fn, self.state = None, "failed"
        self.reason = f"numba: {type(exc).__name__}: {_first_line(exc)}"
        self.__dict__.pop("run", None)
    def report(self):
        return {"graph": self.graph_name, "region": self.name,
                "kind": "loop" if self.loop else "ops", "ops": self.description,
                "state": self.state, "reason": self.reason}

    def __repr__(self):
        return f"<Region {self.name} of {self.graph_name}: {self.state}>"


def _scalar_entry(fn):
    """The compiled machine code of numba dispatcher `fn` as a Python callable, when `fn`
    has one compiled signature, of scalars only: called without numba's dispatch (which
    types every argument, ~0.2 us), it converts each argument to its scalar type. Else
    None. (An array argument is not checked as dispatch checks it, so those dispatch.)"""
    numba = _numba()
    overloads = getattr(fn, "overloads", {})
    if len(overloads) != 1:
        return None
    (signature, compiled), = overloads.items()
    if not all(isinstance(t, (numba.types.Integer, numba.types.Float, numba.types.Boolean))
               for t in signature):
        return None
    return getattr(compiled, "entry_point", None)


def _limit():
    limit = config.get_loop_iteration_limit()
    return -1 if limit is None else limit


def _first_line(exc):
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else ""


def not_lowered(graph_name, op, reason):
    """Record that `op` runs in the fast executor, and why (rt.config's report)."""
    where = f" at {op.origin.short()}" if op.origin is not None else ""
    with _lock:
        _not_lowered.pop((graph_name, op.name), None)
        if len(_not_lowered) >= _NOT_LOWERED_KEPT:
            del _not_lowered[next(iter(_not_lowered))]          # the oldest goes first
        _not_lowered[(graph_name, op.name)] = {
            "graph": graph_name, "region": None, "kind": "op",
            "ops": f"{op.type} {op.name}{where}", "state": "not lowered", "reason": reason}


def report():
    """Every region made so far (compiled or not, and why) and every op left out."""
    with _lock:
        entries = [r.report() for r in list(_regions)] + list(_not_lowered.values())
    return entries


# -- numba, modules on disk --------------------------------------------------------------------

_state = {"numba": None, "worker": None, "queue": []}


def _numba():
    if _state["numba"] is None:
        import numba
        _state["numba"] = numba
    return _state["numba"]


def _fault_type():
    from .helpers import Fault
    return Fault


def cache_dir():
    path = config.get_compile_cache_dir()
    os.makedirs(path, exist_ok=True)
    return path


def _function(region):
    """The numba dispatcher of `region`, from a module file named by its source's hash."""
    source = _HEADER + region.source + f"\n{region.name} = {_JIT}({region.name})\n"
    # (numba's cache of a module knows that module's source, not the helpers' it inlines)
    digest = hashlib.sha256(source.encode() + _helpers_digest()).hexdigest()[:24]
    name = f"rt_region_{digest}"
    with _lock:
        module = sys.modules.get(name)
        if module is None:
            path = os.path.join(cache_dir(), name + ".py")
            if not os.path.exists(path):
                tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
                with open(tmp, "w") as f:
                    f.write(source)
                os.replace(tmp, path)
            module = types.ModuleType(name)
            module.__file__ = path
            sys.modules[name] = module
            try:
                exec(compile(source, path, "exec"), module.__dict__)  # noqa: S102 - ours
            except BaseException:
                del sys.modules[name]
                raise
    return getattr(module, region.name)


@functools.lru_cache(maxsize=None)
def _helpers_digest():
    """A digest of the helpers compiled regions call (a new version: new cache files)."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "helpers.py"),
              "rb") as f:
        return hashlib.sha256(f.read()).digest()


def _background(region, sample):
    """Compile `region` on the compile thread (started on first use)."""
    with _lock:
        _state["queue"].append((region, sample))
        if _state["worker"] is None or not _state["worker"].is_alive():
            worker = threading.Thread(target=_work, name="rt-compile", daemon=True)
            _state["worker"] = worker
            worker.start()


def _work():
    while True:
        with _lock:
            if not _state["queue"]:
                _state["worker"] = None
                return
            region, sample = _state["queue"].pop(0)
        region._compile(sample)


def wait():
    """Block until the compile thread has nothing left (benchmarks, tests)."""
    while True:
        with _lock:
            worker = _state["worker"]
        if worker is None:
            return
        worker.join()
