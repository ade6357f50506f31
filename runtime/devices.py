"""Devices: where eager tensors live and where each op's kernel runs.

    cpu:0         numpy (always)
    gpu:N         CuPy through array-api-compat, when CuPy imports and sees a GPU (extra `gpu`)
    strict:0, 1   array_api_strict's devices "device1" and "device2": stand-ins for testing
                  (extra `array-api`). They accept only what the array API standard defines
                  and refuse to mix arrays of two devices (even with numpy), so a kernel that
                  relies on numpy, or a copy the runtime forgot, fails there.

A kernel receives the array namespace `xp` of the device it runs on (`ops.registry`):
numpy itself on cpu:0 (numpy 2 implements the standard in its main namespace, so the
numpy path needs no compatibility layer), array-api-compat's CuPy namespace on gpu:N, and
on strict:N array_api_strict with its creation functions bound to that device.

`rt.device(name)` scopes where ops run, eagerly and while tracing; `RT_DEVICE=name` sets
the process default (cpu:0 otherwise). Eager ops copy their inputs to their device, as
TensorFlow's do; graphs get explicit `copy` ops from the placement pass
(`passes/placement.py`). Soft placement: an op without a kernel for its device (a host
op such as print, or a dtype the device lacks: array_api_strict has no float16) runs on
cpu:0, and so does every op of a device this machine lacks (a graph saved with gpu:0
loads and runs on a CPU); `rt.config.set_log_device_placement(True)` logs each decision.

Until a device other than cpu:0 is used (or placements are logged), `placing` is False
and the runtime takes its numpy paths exactly as without devices.
"""
import contextlib
import functools
import re
import sys
import threading
import types

import numpy as np

from . import config                  # (read when called: config imports this module)
from . import context
from . import dtypes

__all__ = ["Device", "device", "get", "canonical", "list_devices", "current", "default",
           "of", "to_host", "CPU"]

placing = False               # a device other than cpu:0 is in use, or placements are logged
_lock = threading.RLock()
_NAME = re.compile(r"^(cpu|gpu|strict):(\d+)$")
_STRICT_DEVICES = ("device1", "device2")     # strict:0, strict:1
_STRICT_API_VERSION = "2024.12"              # what numpy 2.4 implements
_CREATION = ("arange", "asarray", "empty", "eye", "full", "linspace", "ones", "zeros")


class Device:
    """One device: its `name` ("strict:1"), `kind`, `index`, the `backend` library its
    kernels use ("numpy", "cupy", "array_api_strict") and their namespace `xp`."""

    __slots__ = ("name", "kind", "index", "backend", "xp", "native", "unsupported")
    is_host = False

    def __init__(self, kind, index, backend, xp, native=None, unsupported=()):
        self.name = f"{kind}:{index}"
        self.kind = kind
        self.index = index
        self.backend = backend
        self.xp = xp
        self.native = native          # the library's own device object
        self.unsupported = frozenset(unsupported)   # DTypes its arrays cannot hold

    def supports(self, dtype):
        return dtype not in self.unsupported

    def wrap(self, kernel):
        """`kernel`, run where this device's library expects (CuPy: its current device)."""
        return kernel

    def __reduce__(self):             # one object per device: copies and pickles find it
        return get, (self.name,)

    def __repr__(self):
        return f"<rt.Device {self.name}>"


class HostHandle(np.ndarray):
    """A host array standing for state kept on the host (a data set run's key), which lives
    as long as this very array (or a view of it) does: no device copies it (as TensorFlow
    keeps resource handles in host memory); the ops reading it run on the host."""


def _is_handle(value):
    return isinstance(value, HostHandle) or isinstance(getattr(value, "base", None), HostHandle)


class _Cpu(Device):
    __slots__ = ()
    is_host = True

    def holds(self, array):
        return type(array) is np.ndarray

    def put(self, value):
        """`value` as a numpy array (a copy of a device array)."""
        return value if type(value) is np.ndarray else to_host(value)


class _Strict(Device):
    __slots__ = ()

    def holds(self, array):
        return type(array) is _backends["array_api_strict"].array_type and \
            array.device == self.native

    def put(self, value):
        """`value` on this device: a new array unless it is one of this device's (or a
        HostHandle, which stays where it is)."""
        if self.holds(value) or _is_handle(value):
            return value
        strict = _backends["array_api_strict"]
        if type(value) is not strict.array_type:
            value = to_host(value)           # from numpy, CuPy, numpy scalars
        return self.xp.asarray(value, copy=True)


class _Gpu(Device):
    __slots__ = ()

    def holds(self, array):
        return type(array) is _backends["cupy"].array_type and array.device.id == self.index

    def put(self, value):
        cupy = _backends["cupy"].library
        if self.holds(value) or _is_handle(value):
            return value
        if type(value) is not _backends["cupy"].array_type:
            value = to_host(value)
        with cupy.cuda.Device(self.index):     # copies host -> device, or device -> device
            return cupy.array(value, copy=True)

    def wrap(self, kernel):
        if self.index == 0:
            return kernel
        cupy = _backends["cupy"].library

        def on_device(*args, **kwargs):
            with cupy.cuda.Device(self.index):
                return kernel(*args, **kwargs)
        return on_device


class _Backend:
    """An array library other than numpy: its array type, host copies, dtype table."""

    def __init__(self, name, library, array_type, to_host, dtype_table, device_of):
        self.name = name
        self.library = library
        self.array_type = array_type
        self.to_host = to_host
        self.dtypes = dtype_table           # the library's dtype -> DType
        self.device_of = device_of          # array -> our Device


CPU = _Cpu("cpu", 0, "numpy", np)
_devices = {"cpu:0": CPU}          # name -> Device, of the backends loaded so far
_backends = {}                     # name -> _Backend (the non-numpy ones loaded)
_by_type = {}                      # array type -> _Backend
_probed = {"cpu"}                  # kinds whose backend was looked for
_resolved = {}                     # canonical name -> the Device that runs it
_default = [CPU]


# -- names ------------------------------------------------------------------------------------

def canonical(name):
    """The canonical form of a device name: "cpu:0", "gpu:1", "strict:0" ("/GPU:0",
    "/device:GPU:0" and "gpu" are accepted as in TensorFlow); ValueError otherwise."""
    if isinstance(name, Device):
        return name.name
    if not isinstance(name, str):
        raise TypeError(f"A device name is a string like 'cpu:0' or 'gpu:0', got {name!r}")
    text = name.strip().lower()
    for prefix in ("/job:localhost/replica:0/task:0", "/device:", "/"):
        if text.startswith(prefix):
            text = text[len(prefix):]
    if text.startswith("device:"):
        text = text[len("device:"):]
    if ":" not in text:
        text += ":0"
    if not _NAME.match(text):
        raise ValueError(f"Unknown device {name!r}: devices are named cpu:0, gpu:N (a GPU, "
                         f"with CuPy) and strict:N (array_api_strict stand-ins); this "
                         f"machine has {list_devices()}")
    kind, index = text.split(":")
    return f"{kind}:{int(index)}"


def get(name):
    """The Device that runs ops placed on `name`: that device, or cpu:0 when this machine
    lacks it (soft placement)."""
    found = _resolved.get(name)
    if found is not None:
        return found
    with _lock:
        key = canonical(name)
        found = _resolved.get(key)
        if found is None:
            _probe(key.split(":")[0])
            found = _devices.get(key)
            if found is None:
                found = CPU
            elif not found.is_host:
                start_placing()
            _resolved[key] = found
        if isinstance(name, str):
            _resolved[name] = found
        return found


def list_devices():
    """The names of this machine's devices: cpu:0, each GPU CuPy sees (gpu:N), and the
    array_api_strict stand-ins strict:0 and strict:1 when it is installed."""
    with _lock:
        for kind in ("gpu", "strict"):
            _probe(kind)
        order = {"cpu": 0, "gpu": 1, "strict": 2}
        return sorted(_devices, key=lambda n: (order[n.split(":")[0]], int(n.split(":")[1])))


def _probe(kind):
    if kind in _probed:
        return
    _probed.add(kind)
    loader = {"gpu": _load_cupy, "strict": _load_strict}[kind]
    try:
        loader()
    except Exception as e:  # noqa: BLE001 - a missing or broken library: no such device
        _why_missing[kind] = f"{type(e).__name__}: {e}"


_why_missing = {}


def missing_reason(kind):
    """Why this machine has no device of `kind` ("gpu", "strict"): the import or driver
    error met when looking, or None."""
    with _lock:
        _probe(kind)
    return _why_missing.get(kind)


def _load_strict():
    import array_api_strict as strict
    strict.set_array_api_strict_flags(api_version=_STRICT_API_VERSION)
    table = {getattr(strict, d.name): d for d in dtypes._ALL if hasattr(strict, d.name)}
    host = strict.Device("CPU_DEVICE")

    def strict_to_host(array):
        return np.array(array.to_device(host), copy=True)

    backend = _Backend("array_api_strict", strict, type(strict.asarray(0)), strict_to_host, table,
                       lambda array: _strict_devices[array.device])
    unsupported = [d for d in dtypes._ALL if not hasattr(strict, d.name)]
    _strict_devices = {}
    for index, native_name in enumerate(_STRICT_DEVICES):
        native = strict.Device(native_name)
        device = _Strict("strict", index, "array_api_strict", _bound(strict, native), native,
                         unsupported)
        _strict_devices[native] = device
        _devices[device.name] = device
    _register(backend)


def _load_cupy():
    import cupy
    from array_api_compat import cupy as xp           # CuPy's namespace, made standard
    count = cupy.cuda.runtime.getDeviceCount()
    table = {np.dtype(d.np): d for d in dtypes._ALL}
    backend = _Backend("cupy", cupy, cupy.ndarray, cupy.asnumpy, table,
                       lambda array: _devices[f"gpu:{array.device.id}"])
    for index in range(count):
        device = _Gpu("gpu", index, "cupy", xp, cupy.cuda.Device(index))
        _devices[device.name] = device
    _register(backend)


def _register(backend):
    _backends[backend.name] = backend
    _by_type[backend.array_type] = backend


def _bound(xp, native):
    """`xp` as a namespace whose creation functions make arrays on device `native`."""
    names = {k: getattr(xp, k) for k in dir(xp) if not k.startswith("_")}
    for k in _CREATION:
        names[k] = functools.partial(names[k], device=native)
    return types.SimpleNamespace(**names)


# -- arrays -----------------------------------------------------------------------------------

def of(array):
    """The Device holding `array` (numpy arrays and scalars: cpu:0)."""
    backend = _by_type.get(type(array))
    return CPU if backend is None else backend.device_of(array)


def to_host(value):
    """`value` as a numpy array: a device array copied to the host, numpy values as they are."""
    if type(value) is np.ndarray:
        return value
    backend = _by_type.get(type(value))
    return np.asarray(value) if backend is None else backend.to_host(value)


def is_device_array(value):
    """Is `value` an array of a device other than cpu:0?"""
    return type(value) in _by_type


def dtype_of(array):
    """The DType of an array of any device."""
    backend = _by_type.get(type(array))
    if backend is None:
        return dtypes.as_dtype(array.dtype)
    return backend.dtypes[array.dtype]


# -- scopes and the default --------------------------------------------------------------------

@contextlib.contextmanager
def device(name):
    """Ops created inside run on device `name` ("cpu:0", "gpu:0", "strict:1"), eagerly and
    in the graphs traced inside; None: the process default (`RT_DEVICE`, else cpu:0). A
    device this machine lacks runs its ops on cpu:0 (soft placement)."""
    key = None if name is None else canonical(name)
    if key is not None:
        _resolved_logged(key)         # resolved now: a device's first use starts placement
    with context.device_scope(key):
        yield


def _resolved_logged(key):
    """The Device for `key`, saying so (when placements are logged) if it is a stand-in."""
    found = get(key)
    if found.name != key:
        log(f"{key} is not available here ({', '.join(list_devices())}): its ops run on "
            f"{found.name}")
    return found


def current():
    """The Device ops run on here: the innermost `rt.device` scope's, else the default."""
    name = context.device_name()
    return _default[0] if name is None else get(name)


def default():
    """The process default device (`RT_DEVICE`, else cpu:0)."""
    return _default[0]


def resolve(name):
    """The Device for an op's device field (None: the default)."""
    return _default[0] if name is None else get(name)


def set_default(name):
    """Make `name` the default device (`rt.config.set_default_device` says what follows)."""
    _default[0] = _resolved_logged(canonical(name))


# -- placement decisions -------------------------------------------------------------------------

def start_placing():
    """From now on eager ops and graphs go through placement (a device other than cpu:0
    is used, or placements are logged)."""
    global placing
    if not placing:
        placing = True
        changed = getattr(config, "_changed", None)     # (None while config imports us)
        if changed is not None:
            changed()             # graphs compiled so far did not place their feeds


def logging():
    """Are placements logged (`rt.config.set_log_device_placement`)?"""
    return config._state["log_device_placement"]


def log(message):
    if logging():
        print(f"device placement: {message}", file=sys.stderr)


def choose(opdef, device, input_dtypes, attrs, output_dtypes=(), requested=None):
    """(device, kernel, None) of `opdef` on `device`, or (cpu:0, its kernel, why) when the
    device has no kernel for it or lacks one of its dtypes, or when `device` stands for
    the `requested` device name, which this machine lacks (soft placement)."""
    if device.is_host:
        missing = requested is not None and requested != device.name
        return device, opdef.kernel, f"{requested} is not available here" if missing else None
    kernel = opdef.kernel_for(device)
    if kernel is None:
        return CPU, opdef.kernel, f"no kernel for {device.name}"
    if device.unsupported:
        wanted = list(input_dtypes) + list(output_dtypes) + [
            v for v in attrs.values() if isinstance(v, dtypes.DType)]
        for dtype in wanted:
            if dtype in device.unsupported:
                return CPU, opdef.kernel, f"{device.name} has no {dtype.name}"
    return device, kernel, None


def eager_placement(opdef, inputs, attrs):
    """(kernel, put) of an eager op: its kernel on the scope's device (a variable's own, for
    its reads and writes), or on cpu:0 by soft placement, and `put(array)` giving each
    input there (a copy when it is elsewhere)."""
    var = attrs.get("var") if opdef.effect is not None else None
    want = var._device if var is not None else current()
    if opdef.container:           # a call: its graph places what it is fed
        if logging():
            log(f"{opdef.name} on {want.name}")
        return opdef.kernel_for(want), _unmoved
    device, kernel, why = choose(opdef, want, [t.dtype for t in inputs], attrs,
                                 requested=None if var is not None else context.device_name())
    if logging():
        log(f"{opdef.name} on {device.name}" + (f" ({why})" if why else ""))
    return kernel, device.put


def _unmoved(array):
    return array


def for_dtype(dtype, device=None):
    """The device a new value of `dtype` goes to: `device` (default: the current one), or
    cpu:0 when that device cannot hold the dtype."""
    device = current() if device is None else device
    return device if device.supports(dtype) else CPU
