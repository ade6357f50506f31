"""The one op registry: each op is declared once, eager and graph mode share it.

An op declaration gives
  kernel(xp, *arrays, **attrs)    -> array (or a list of them, `multi=True`), written once
                                     against the array API standard: `xp` is the namespace
                                     of the device it runs on (numpy on cpu:0, CuPy on
                                     gpu:N, array_api_strict on the strict:N stand-ins)
  numpy= / cupy= / array_api_strict=
                                  per-backend overrides, kernel(*arrays, **attrs), next to
                                     the generic one: numpy's ufuncs (the fast executor calls
                                     them with `out=`), or what the standard lacks. An op
                                     with only a numpy kernel (print, py_function; any kernel
                                     whose first parameter is not `xp`, as written before
                                     devices) runs on cpu:0 wherever it is placed (soft
                                     placement, `runtime.devices`)
  infer(inputs, **attrs)          -> [(TensorShape, DType), ...] from static info
  stateful / effect               -> whether it must never be pruned or reordered
  grad                            -> slot for the gradient function (later issue)

`apply(opdef, inputs, attrs)` runs the kernel at once when executing eagerly (on the
device of the `rt.device` scope, its inputs copied there), or adds an operation to the
current graph, whose output shapes and dtypes come from `infer` (so shape errors surface
while tracing, at the user's line). `opdef.kernel` is the numpy kernel (cpu:0's);
`opdef.kernel_for(device)` any device's.
"""
import functools

import numpy as np

from .. import context
from .. import devices
from .. import dtypes
from .. import traceback_utils
from ..errors import InvalidArgumentError, OpError, wrap_kernel_error
from ..shapes import TensorShape
from ..tensor import EagerTensor, SymbolicTensor, Tensor

__all__ = ["OpDef", "register", "get", "apply", "constant_value", "convert_to_tensor",
           "constant", "eager_tensor", "eager_kernel_error", "leaked_symbolic_error"]

BACKENDS = ("numpy", "cupy", "array_api_strict")
_REGISTRY = {}
tape_hooks = []          # callables(opdef, inputs, attrs, outputs) run after eager ops


class OpDef:
    """The declaration of one op: everything the runtime knows about it, in one place.

    Optional traits: `elementwise` (each output element depends on the same-position
    input elements, numpy broadcasting), `fresh` (the kernel returns new arrays that
    share memory with nothing else; a memory plan may write into them once dead),
    `ufunc` (a numpy ufunc equal to the kernel, called with `out=`; found from the
    kernel when it is one, `quiet` when the kernel wraps it in `np.errstate`),
    `retains_inputs` (a stateful kernel that may keep its input arrays: default, whether
    the op is stateful), `weak_result` ((widest weak kind of the inputs, result dtype)
    -> the result's weak kind: the result stands for a Python number when all inputs do),
    `operator` (source of the op on numpy scalars, "{0} + {1}": the fast executor's
    rank-0 form), `checked` (numpy's scalar `operator` checks integer overflow, warning or
    raising as np.errstate says, where the kernel on arrays wraps silently: the fast
    executor runs graphs holding such rank-0 integer ops quiet), `bool_operator` (the same
    on bools, Python's or numpy's, giving a bool),
    `emit` ((op, operand sources) -> source or None: the fast executor's line for an op
    that is cheaper written out than called), `lower` (the compiled tier's lowering: for
    elementwise ops the source of one element, "np.exp({0})"; else (op, operand sources)
    -> numba-compatible source or None; ops without one split compiled regions), `simd`
    (numpy's loop for arrays is vectorized beyond what a compiled element loop reaches,
    e.g. exp and tanh: the compiled tier lowers the op on arrays of a few hundred elements
    at most; or a function of the loop dtypes giving that, or how many elements),
    `container` (a control-flow op whose inputs feed its sub-graphs, whose ops are placed
    themselves: it copies none of its inputs to its own device).
    """

    __slots__ = ("name", "kernel", "generic", "overrides", "_kernels", "infer", "stateful",
                 "effect", "multi", "grad", "elementwise", "fresh", "ufunc", "quiet",
                 "retains_inputs", "weak_result", "operator", "bool_operator", "emit", "lower",
                 "simd", "container", "checked")

    def __init__(self, name, kernel, infer, stateful=False, effect=None, multi=False,
                 grad=None, elementwise=False, fresh=False, retains_inputs=None,
                 weak_result=None, operator=None, bool_operator=None, emit=None, lower=None,
                 simd=False, container=False, checked=False, numpy=None, cupy=None,
                 array_api_strict=None):
        self.name = name
        self.checked = checked
        kernel, numpy = _generic_and_numpy(name, kernel, numpy)
        self.generic = kernel
        self.overrides = {backend: k for backend, k in
                          zip(BACKENDS, (numpy, cupy, array_api_strict)) if k is not None}
        self.kernel = numpy if numpy is not None else (
            None if kernel is None else functools.partial(kernel, np))
        self._kernels = {devices.CPU: self.kernel}
        self.container = container
        self.infer = infer
        self.stateful = stateful
        self.effect = effect          # None, "read" or "write" of attrs["var"]
        self.multi = multi
        self.grad = grad
        self.elementwise = elementwise    # declared where the op is registered
        self.fresh = fresh
        self.retains_inputs = stateful if retains_inputs is None else retains_inputs
        self.weak_result = weak_result
        self.operator = operator
        self.bool_operator = bool_operator
        self.emit = emit
        self.lower = lower
        self.simd = simd
        wrapped = getattr(self.kernel, "__wrapped__", None)
        self.ufunc, self.quiet = None, False
        if self.elementwise and isinstance(self.kernel, np.ufunc):
            self.ufunc = self.kernel
        elif self.elementwise and isinstance(wrapped, np.ufunc):
            self.ufunc, self.quiet = wrapped, True

    def kernel_for(self, device):
        """The kernel(*arrays, **attrs) running this op on `device` (a Device): its
        backend's override, else the generic kernel given the device's namespace; None
        when there is neither (the op then runs on cpu:0)."""
        found = self._kernels.get(device, False)
        if found is False:
            kernel = self.overrides.get(device.backend)
            if kernel is None and self.generic is not None:
                kernel = functools.partial(self.generic, device.xp)
            found = self._kernels[device] = None if kernel is None else device.wrap(kernel)
        return found

    def __repr__(self):
        return f"<OpDef {self.name}>"


def _generic_and_numpy(name, kernel, numpy):
    """(generic kernel, numpy kernel) of op `name`'s declaration: a kernel whose first
    parameter is `xp` is generic; any other (numpy's ufuncs, kernels written before devices
    existed) is numpy's alone, so the op runs on cpu:0 wherever it is placed."""
    code = getattr(kernel, "__code__", None)
    if kernel is None or (code is not None and code.co_argcount + code.co_kwonlyargcount
                          and code.co_varnames[0] == "xp"):
        return kernel, numpy
    if numpy is not None:
        raise TypeError(f"op {name!r}: its generic kernel {kernel!r} must take the array "
                        f"namespace `xp` first (numpy= is its numpy kernel)")
    return None, kernel


def register(name, kernel, infer, **kwargs):
    """Declare an op; returns its OpDef. Names are unique."""
    if name in _REGISTRY:
        raise ValueError(f"Op {name!r} is already registered")
    opdef = OpDef(name, kernel, infer, **kwargs)
    _REGISTRY[name] = opdef
    return opdef


def get(name):
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"Unknown op type {name!r}") from None


def all_ops():
    return dict(_REGISTRY)


def apply(opdef, inputs, attrs, name=None):
    """Run or record `opdef` on tensors `inputs`; returns a tensor or a list of them."""
    graph = context.current_graph()
    if graph is None:
        return _apply_eager(opdef, inputs, attrs)
    inputs = [graph.capture(t) for t in inputs]
    if opdef.weak_result is None and opdef.elementwise:
        inputs = [_python_float_default(t) for t in inputs]
    try:
        specs = opdef.infer(inputs, **attrs)
    except (ValueError, TypeError, IndexError) as e:
        raise _build_error(opdef, e) from None
    op = graph.create_op(opdef, inputs, attrs, specs, name=name,
                         origin=traceback_utils.user_frame(2))
    rule = opdef.weak_result
    if rule is not None and inputs and op.outputs:
        kinds = [t.weak for t in inputs]
        if None not in kinds:
            out = op.outputs[0]
            out.weak = rule(max(kinds, key=dtypes.KIND_ORDER.index), out.dtype)
    return list(op.outputs) if opdef.multi else (op.outputs[0] if op.outputs else op)


def _python_float_default(t):
    """A traced Python float kept at float64 (a loop variable started from one: Python's
    own arithmetic keeps its precision) meets an elementwise op that is no Python
    arithmetic (`exp`): as a Python float does eagerly, it enters at the default float32."""
    if getattr(t, "weak", None) == "f" and t.dtype == dtypes.float64:
        from . import math_ops
        return math_ops.cast(t, dtypes.float32)
    return t


# Weak-result rules (the `weak_result` trait): (the inputs' widest kind, the result's
# dtype) -> the result's weak kind (`i * 2 + 1` of a loop counter, `i < n_python`).
def arithmetic_weak_result(kind, dtype):
    return "i" if kind == "b" else kind      # True + True is 2


def same_weak_result(kind, dtype):
    return kind


def bool_weak_result(kind, dtype):
    return "b"


def division_weak_result(kind, dtype):
    return "c" if kind == "c" else "f"


_DTYPE_KINDS = {"b": "b", "i": "i", "u": "i", "f": "f", "c": "c"}


def dtype_weak_result(kind, dtype):
    """A weak int meeting a Python float (`i * 0.5`): the number of its new dtype's kind."""
    return _DTYPE_KINDS.get(dtype.np.kind)


def _apply_eager(opdef, inputs, attrs):
    if devices.placing:
        kernel, put = devices.eager_placement(opdef, inputs, attrs)
        try:
            arrays = [put(t._value) for t in inputs]
        except AttributeError:
            raise leaked_symbolic_error(opdef, inputs) from None
    else:
        kernel = opdef.kernel
        try:
            arrays = [t._value for t in inputs]
        except AttributeError:
            raise leaked_symbolic_error(opdef, inputs) from None
    try:
        result = kernel(*arrays, **attrs)
    except OpError:
        raise                # already names its operation (e.g. inside a called graph)
    except Exception as e:   # noqa: BLE001 - re-raised with the op named
        raise eager_kernel_error(opdef, inputs, attrs, e) from e
    if opdef.multi:
        outputs = [eager_tensor(r) for r in result]
    elif result is None:
        return None
    else:
        outputs = eager_tensor(result)
    if tape_hooks:
        for hook in tape_hooks:
            hook(opdef, inputs, attrs, outputs)
    return outputs


def eager_kernel_error(opdef, inputs, attrs, exc):
    """The error an eager op raises for its kernel's `exc`: it names the op, and the
    shape/dtype rule explains a misuse as it does while tracing (naming shapes and
    dtypes); the rule is checked only now, so eager calls do not pay for it."""
    message = _prefixed(opdef, exc)
    try:
        opdef.infer(inputs, **attrs)
    except (ValueError, TypeError, IndexError) as rule:
        message, exc = _prefixed(opdef, rule), rule
    except Exception:    # noqa: BLE001 - the kernel's own error is the one to show
        pass
    return wrap_kernel_error(exc, message)


_DTYPE_OF = dtypes._BY_NP          # numpy dtype -> DType, without as_dtype's checks


def eager_tensor(value):
    """An EagerTensor of a kernel's result (an array of any device, or something numpy
    converts)."""
    if type(value) is not np.ndarray:
        if devices.placing and devices.is_device_array(value):
            return EagerTensor(value, devices.dtype_of(value))
        value = np.asarray(value)
    return EagerTensor(value, _DTYPE_OF.get(value.dtype) or dtypes.as_dtype(value.dtype))


def leaked_symbolic_error(opdef, inputs):
    """The error of an eager op given a symbolic tensor (one that left its trace)."""
    for t in inputs:
        if isinstance(t, SymbolicTensor):
            return TypeError(
                f"{opdef.name}: the symbolic tensor {t.name} is used outside the graph that "
                f"created it (it leaked from a function trace). Return it from the traced "
                f"function instead of storing it.")
    return TypeError(f"{opdef.name}: inputs must be tensors, got {inputs!r}")


def _prefixed(opdef, exc):
    """The message of `exc` starting with the op's name (once)."""
    text = str(exc)
    return text if text.startswith(f"{opdef.name}:") else f"{opdef.name}: {text}"


def _build_error(opdef, exc):
    origin = traceback_utils.user_frame(3)
    where = f"\n  created at {origin}\n    {origin.line()}" if origin is not None else ""
    cls = type(exc) if type(exc) in (ValueError, TypeError, IndexError) else ValueError
    err = cls(f"{_prefixed(opdef, exc)}{where}")
    err.origin = origin
    return err


# -- constants and conversion ------------------------------------------------------

def constant_value(t, _depth=0):
    """The value of `t` if it is known statically, else None: eager, a graph constant, or a
    small pure computation on constants (`rt.shape(x)[1]`, `rt.rank(x) - 1` of a static
    shape), evaluated with its kernel."""
    if isinstance(t, EagerTensor):
        return devices.to_host(t._value)
    if isinstance(t, SymbolicTensor):
        op = t.op
        if op.type == "const":
            return op.attrs["value"]
        if (_depth >= 6 or op.opdef.stateful or not op.inputs or op.control_inputs
                or op.subgraphs()):
            return None                 # not pure, too deep, or owning sub-graphs
        values = []
        for x in op.inputs:
            value = constant_value(x, _depth + 1)
            if value is None or np.size(value) > 1024:
                return None
            values.append(np.asarray(value, x.dtype.np))
        try:
            out = op.opdef.kernel(*values, **op.attrs)
        except Exception:  # noqa: BLE001 - then it is just not known statically
            return None
        out = out[t.index] if op.opdef.multi or len(op.outputs) > 1 else out
        out = np.asarray(out)
        return out if out.dtype == t.dtype.np and tuple(out.shape) == tuple(
            d for d in (t.shape.dims or ())) and t.shape.rank == out.ndim else None
    if isinstance(t, (int, float, bool, list, tuple, np.ndarray, np.generic)):
        return np.asarray(t)
    return None


def _infer_python_dtype(value):
    """TensorFlow's default dtype for a Python value (float32, int32, bool)."""
    if isinstance(value, (bool, int, float, complex)):
        return dtypes.python_scalar_dtype(value)
    kinds = set()
    big = [False]

    def walk(v):
        if isinstance(v, (list, tuple)):
            for item in v:
                walk(item)
        elif isinstance(v, bool):
            kinds.add("b")
        elif isinstance(v, int):
            kinds.add("i")
            if not -2**31 <= v < 2**31:
                big[0] = True
        elif isinstance(v, float):
            kinds.add("f")
        elif isinstance(v, complex):
            kinds.add("c")
        elif isinstance(v, np.generic):
            kinds.add(np.asarray(v).dtype.kind)
        elif isinstance(v, Tensor):
            kinds.add(v.dtype.np.kind)
        else:
            raise TypeError(f"Cannot convert {v!r} of type {type(v).__name__} to a tensor")
    walk(value)
    if "c" in kinds:
        return dtypes.complex64
    if "f" in kinds:
        return dtypes.float32
    if "i" in kinds or "u" in kinds:
        return dtypes.int64 if big[0] else dtypes.int32
    if "b" in kinds:
        return dtypes.bool_
    return dtypes.float32      # empty list


def to_array(value, dtype=None):
    """An ndarray for a Python/numpy value, with TensorFlow's default dtypes."""
    if isinstance(value, np.ndarray):
        arr = value
        if dtype is not None and arr.dtype != dtype.np:
            arr = _cast_checked(arr, dtype)
        elif arr.dtype.kind in "OUS":
            raise TypeError(f"Cannot convert an array of dtype {arr.dtype} to a tensor")
        else:
            dtypes.as_dtype(arr.dtype)   # rejects unsupported dtypes
        return arr
    if isinstance(value, np.generic):
        return to_array(np.asarray(value), dtype)
    if dtype is None:
        dtype = _infer_python_dtype(value)
    elif (dtype.is_integer or dtype.is_bool) and _has_python_float(value):
        # numpy would truncate (1.5 -> 1); TensorFlow refuses, and so do we.
        raise TypeError(f"Cannot convert {value!r} to a tensor of dtype {dtype.name}: it "
                        f"holds Python floats (cast a float tensor explicitly: rt.cast)")
    if isinstance(value, (list, tuple)) and _contains_tensor(value):
        value = _materialize(value)
    try:
        return np.asarray(value, dtype=dtype.np)
    except (OverflowError, ValueError) as e:
        raise TypeError(f"Cannot convert {value!r} to a tensor of dtype {dtype.name}: {e}") from None


def _has_python_float(value):
    if isinstance(value, float):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_python_float(v) for v in value)
    return False


def _cast_checked(arr, dtype):
    return arr.astype(dtype.np)


def _contains_tensor(value):
    if isinstance(value, Tensor):
        return True
    if isinstance(value, (list, tuple)):
        return any(_contains_tensor(v) for v in value)
    return False


def _materialize(value):
    if isinstance(value, (list, tuple)):
        return [_materialize(v) for v in value]
    if isinstance(value, EagerTensor):
        return value._host()
    if isinstance(value, Tensor):
        raise TypeError("internal: symbolic tensor in a constant")
    return value


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """A tensor for `value`: tensors pass through, Python/numpy values become constants.

    `dtype` must match a tensor's dtype (no silent casts); Python values are
    converted to it. `dtype_hint` is used for Python values only when given.
    """
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype != dtype:
            raise TypeError(f"Tensor conversion requested dtype {dtype.name} for a tensor "
                            f"of dtype {value.dtype.name}: {value!r}")
        return value
    conv = getattr(value, "_as_tensor", None)
    if conv is not None:                       # Variables
        t = conv()
        if dtype is not None and t.dtype != dtype:
            raise TypeError(f"Conversion to dtype {dtype.name} of {value!r}")
        return t
    if isinstance(value, (list, tuple)) and _contains_symbolic(value):
        from . import array_ops
        return array_ops.stack([convert_to_tensor(v, dtype, dtype_hint) for v in value])
    if dtype is None and dtype_hint is not None and not isinstance(value, np.ndarray):
        try:
            return constant(value, dtypes.as_dtype(dtype_hint), name=name)
        except TypeError:
            pass
    if dtype is not None and isinstance(value, np.ndarray) and value.dtype != dtype.np:
        if not np.can_cast(value.dtype, dtype.np, "same_kind"):
            raise TypeError(f"Cannot convert a numpy array of dtype {value.dtype} to "
                            f"a tensor of dtype {dtype.name}")
    # Eagerly the tensor may view the caller's array; in a graph it is a constant, taken
    # now (as TensorFlow captures numpy arrays): later changes to the array do not reach
    # the graph, whether or not constant folding ran.
    return constant(value, dtype, name=name, _copy=context.current_graph() is not None)


def _contains_symbolic(value):
    if isinstance(value, SymbolicTensor):
        return True
    if isinstance(value, (list, tuple)):
        return any(_contains_symbolic(v) for v in value)
    conv = getattr(value, "_as_tensor", None)
    return conv is not None and not context.executing_eagerly()


def constant(value, dtype=None, shape=None, name=None, _copy=True):
    """A constant tensor (symbolic `const` op inside a graph, eager otherwise)."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if isinstance(value, Tensor):
        if isinstance(value, SymbolicTensor):
            from . import math_ops
            t = value if dtype is None or value.dtype == dtype else math_ops.cast(value, dtype)
            if shape is not None:
                from . import array_ops
                t = array_ops.reshape(t, shape)
            return t
        value = value._host()
    elif isinstance(value, (list, tuple)) and _contains_symbolic(value):
        return constant(convert_to_tensor(value), dtype, shape, name)   # stacked in the graph
    arr = to_array(value, dtype)
    if _copy and arr is value:
        arr = arr.copy()
    if shape is not None:
        shape = tuple(shape)
        if arr.size == 1 and int(np.prod(shape)) != 1:
            arr = np.broadcast_to(arr.reshape(()), shape).copy()
        else:
            try:
                arr = arr.reshape(shape)
            except ValueError:
                raise TypeError(f"Cannot reshape a constant of {arr.size} elements to "
                                f"shape {list(shape)}") from None
    graph = context.current_graph()
    if graph is None:
        if devices.placing:
            dtype = dtypes.as_dtype(arr.dtype)
            return EagerTensor(devices.for_dtype(dtype).put(arr), dtype)
        return EagerTensor(arr)
    op = graph.create_op(_CONST, [], {"value": arr},
                         [(TensorShape(arr.shape), dtypes.as_dtype(arr.dtype))], name=name,
                         origin=traceback_utils.user_frame(2))
    return op.outputs[0]


def _const_kernel(xp, value):
    return xp.asarray(value, copy=True)          # `value` is numpy's: onto the device


def _host_const_kernel(value):
    return value


def _const_infer(inputs, value):
    return [(TensorShape(value.shape), dtypes.as_dtype(value.dtype))]


def _capture_kernel(xp):
    raise InvalidArgumentError("internal error: a captured value was not fed")


def _placeholder_kernel(xp, shape=None, dtype=None, **_):
    raise InvalidArgumentError(
        f"You must feed a value for this placeholder (dtype {dtype.name}, shape "
        f"{TensorShape(shape)})")


def _placeholder_infer(inputs, shape=None, dtype=None, **_):
    return [(TensorShape(shape), dtype)]


def _no_outputs(inputs, **_):
    return []


def _no_op_kernel(xp, *_, **__):
    return None


_CONST = register("const", _const_kernel, _const_infer, numpy=_host_const_kernel)
register("capture", _capture_kernel, None)
register("placeholder", _placeholder_kernel, _placeholder_infer)
register("no_op", _no_op_kernel, _no_outputs)
