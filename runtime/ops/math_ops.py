"""Math ops: elementwise arithmetic, comparisons, reductions, matmul, cast.

Each op is declared once (`registry.register`) with its kernel, written against the array
API standard (elementwise ops: the standard function of their name, with numpy's ufunc as
the numpy override) and a shape/dtype rule; the public function converts arguments to the one dtype that
`dtypes.lattice_result_type` gives them (Python scalars are weakly typed: `x_int32 + 1`
stays int32; `x_int32 + y_float32` is float32), casting explicitly, and calls
`registry.apply`: every kernel sees inputs of one dtype, in graphs and eagerly.
"""
import functools

import numpy as np

from .. import context
from .. import dtypes
from ..shapes import TensorShape, broadcast
from ..tensor import SymbolicTensor, Tensor
from . import registry
from .registry import apply, convert_to_tensor

# -- helpers shared by elementwise ops ------------------------------------------------


@functools.lru_cache(maxsize=None)
def _probe_dtype(kernel, in_dtypes, attrs_key=()):
    """The result dtype of an elementwise kernel, found by running it on 0-d ones."""
    args = [np.ones((), d.np) for d in in_dtypes]
    with np.errstate(all="ignore"):
        try:
            out = kernel(*args, **dict(attrs_key))
        except (TypeError, ValueError) as e:
            names = ", ".join(d.name for d in in_dtypes)
            raise TypeError(f"unsupported input dtypes ({names}): {e}") from None
    return dtypes.as_dtype(np.asarray(out).dtype)


def elementwise_infer(kernel):
    """Shape rule: numpy broadcasting of all inputs; dtype: the kernel's own promotion."""
    def infer(inputs, **attrs):
        shape = inputs[0].shape
        for t in inputs[1:]:
            shape = broadcast(shape, t.shape)
        key = tuple(sorted(attrs.items())) if attrs else ()
        return [(shape, _probe_dtype(kernel, tuple(t.dtype for t in inputs), key))]
    return infer


def _is_weak(value):
    return _python_kind(value) is not None


def _python_kind(value):
    """The weak kind of a Python number or list of them, else None (tensors, numpy)."""
    if isinstance(value, (Tensor, np.ndarray, np.generic)):
        return None
    return dtypes.weak_kind(value)


def convert_pair(x, y, float_function=False):
    """`convert_all([x, y], float_function)`, at once for two tensors of one dtype."""
    if isinstance(x, Tensor) and isinstance(y, Tensor) and x.dtype == y.dtype and not (
            float_function and _is_exact(x.dtype)):
        return x, y
    return convert_all([x, y], float_function)


def weak_kind_of(value):
    """The kind ('b', 'i', 'f', 'c') of the Python number `value` is or stands for: a
    Python scalar's, or a tensor's SymbolicTensor.weak (a loop variable started from a
    number, a loop counter, arithmetic of those with numbers); None for other tensors,
    variables and numpy values."""
    if isinstance(value, (Tensor, np.ndarray, np.generic)):
        return getattr(value, "weak", None)
    return dtypes.weak_kind(value)          # (None for anything else, variables too)


def checked(opdef, build, *args):
    """`build(*args)`: a check of static arguments run before `apply` (an axis, a perm).

    Its errors name the op and point at the user's line, like shape errors found
    while tracing, in both modes.
    """
    try:
        return build(*args)
    except (ValueError, TypeError, IndexError) as e:
        raise registry._build_error(opdef, e) from None


def apply_checked(opdef, inputs, attrs, name=None):
    """`apply`, running the shape rule eagerly too, for kernels laxer than their rule."""
    if context.executing_eagerly():
        checked(opdef, lambda: opdef.infer(inputs, **attrs))
    return apply(opdef, inputs, attrs, name)


def convert_all(values, float_function=False):
    """Tensors of one dtype for an n-ary op: the promotion rule's (`result_dtype`), cast
    explicitly, so every kernel sees inputs of one dtype. A `float_function` (true
    division, sqrt: see `is_float_function`) of integers or bools computes in float32."""
    values = list(values)
    if not values:
        return []
    first = values[0]
    if isinstance(first, Tensor) and all(
            isinstance(v, Tensor) and v.dtype == first.dtype for v in values[1:]):
        dtype, kinds = first.dtype, None
    else:
        kinds = [_python_kind(v) for v in values]
        dtype = _promoted(values, kinds)
    if float_function and _is_exact(dtype):
        dtype = dtypes.float32
    if kinds is None:
        return values if dtype == first.dtype else [cast(v, dtype) for v in values]
    # Python numbers next to a tensor stand for numbers in a graph (SymbolicTensor.weak);
    # an op of Python numbers only gives a tensor, as eagerly.
    mark_weak = None in kinds
    return [_converted(v, kind, dtype, mark_weak) for v, kind in zip(values, kinds)]


def _converted(value, kind, dtype, mark_weak):
    if kind is not None:
        t = registry.constant(value, dtype, _copy=False)
        if mark_weak and isinstance(t, SymbolicTensor):
            t.weak = kind                           # the Python number it comes from
        return t
    t = convert_to_tensor(value)
    return t if t.dtype == dtype else cast(t, dtype)


def _is_exact(dtype):
    return not (dtype.is_floating or dtype.is_complex)


def is_float_function(kernel, n_inputs, attrs_key=()):
    """Does numpy's `kernel` make floats of int32 inputs (sqrt, true division, mean)? Its
    op then computes in float32 given integers or bools, as JAX and PyTorch do."""
    try:
        return _probe_dtype(kernel, (dtypes.int32,) * n_inputs, attrs_key).is_floating
    except TypeError:
        return False


def result_dtype(values):
    """The dtype `values` promote to (`dtypes.lattice_result_type`): tensors, variables and
    numpy values strongly typed, Python numbers and lists of them weakly typed; Python
    values alone take TensorFlow's defaults (`[0, 0.5]`: float32)."""
    return _promoted(values, [_python_kind(v) for v in values])


def _promoted(values, kinds):
    operands = []
    for value, kind in zip(values, kinds):
        if kind is not None:
            own = (dtypes.python_scalar_dtype(value) if not isinstance(value, (list, tuple))
                   else registry._infer_python_dtype(value))
            operands.append((own, kind))
        elif isinstance(value, Tensor):
            weak = getattr(value, "weak", None)
            operands.append(value.dtype if weak is None else (value.dtype, weak))
        else:
            operands.append(_dtype_of(value))
    return dtypes.lattice_result_type(*operands)[0]


def _dtype_of(value):
    dtype = getattr(value, "dtype", None)     # variables, numpy values
    return dtypes.as_dtype(dtype) if dtype is not None else convert_to_tensor(value).dtype


def _quiet(fn):
    """Kernel wrapper: no numpy warnings for inf/nan results (TensorFlow gives none)."""
    @functools.wraps(fn)
    def kernel(*args, **kwargs):
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    return kernel


# The array API standard's names of the elementwise ops named otherwise here.
_STANDARD_NAMES = {"floordiv": "floor_divide", "mod": "remainder", "invert": "bitwise_invert",
                   "is_nan": "isnan", "is_finite": "isfinite"}


# The standard's elementwise functions taking bools; numpy's others take them too, as 0/1.
_TAKE_BOOLS = frozenset({"equal", "not_equal", "logical_and", "logical_or", "logical_xor",
                         "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
                         "bitwise_invert"})


def _standard(name, numpy_kernel):
    """The generic kernel of an elementwise op: the standard's function of its name. Bools,
    which it may refuse (True + True), go through int8 to the dtype numpy gives (bool)."""
    standard = _STANDARD_NAMES.get(name, name)

    def kernel(xp, *arrays):
        function = getattr(xp, standard)
        if standard in _TAKE_BOOLS or arrays[0].dtype != xp.bool:
            return function(*arrays)
        result = function(*[xp.astype(a, xp.int8) for a in arrays])
        want = _probe_dtype(numpy_kernel, (dtypes.bool_,) * len(arrays)).of(xp)
        return result if result.dtype == want else xp.astype(result, want)
    kernel.__name__ = f"{standard}_kernel"
    return kernel


def _define_unary(name, kernel, grad=None, generic=None, **traits):
    """An elementwise op: `kernel` is numpy's (a ufunc where there is one), `generic` the
    array-API kernel (default: the standard's function named like the op)."""
    opdef = registry.register(name, generic or _standard(name, kernel),
                              elementwise_infer(kernel), grad=grad, elementwise=True,
                              fresh=True, numpy=kernel, **traits)

    float_function = is_float_function(kernel, 1)

    def op(x, name=None):
        if not isinstance(x, Tensor) or float_function and _is_exact(x.dtype):
            x, = convert_all([x], float_function)
        return apply(opdef, [x], {}, name)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise {name}, like numpy" + (
        " (of integers and bools: float32)." if float_function else ".")
    return op


def _define_binary(name, kernel, grad=None, generic=None, **traits):
    """An elementwise op of two tensors (see `_define_unary`)."""
    opdef = registry.register(name, generic or _standard(name, kernel),
                              elementwise_infer(kernel), grad=grad, elementwise=True,
                              fresh=True, numpy=kernel, **traits)

    float_function = is_float_function(kernel, 2)

    def op(x, y, name=None):
        x, y = convert_pair(x, y, float_function)
        return apply(opdef, [x, y], {}, name)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise {name} with numpy broadcasting."
    return op


# -- cast ------------------------------------------------------------------------------

def _cast_kernel(xp, x, dtype):
    return xp.astype(x, dtype.of(xp))


def _numpy_cast(x, dtype):
    return x.astype(dtype.np)


def _cast_infer(inputs, dtype):
    return [(inputs[0].shape, dtype)]


def _cast_grad(op, grad):
    x = op.inputs[0]
    return [cast(grad, x.dtype) if x.dtype.is_floating else None]


_CAST = registry.register("cast", _cast_kernel, _cast_infer, grad=_cast_grad, elementwise=True,
                          fresh=True, weak_result=registry.dtype_weak_result, lower="{0}",
                          numpy=_numpy_cast)


def cast(x, dtype, name=None):
    """Convert `x` to `dtype` (floats to ints truncate toward zero, also Python floats:
    `rt.cast(3.7, rt.int32)` is 3, as in TensorFlow)."""
    dtype = dtypes.as_dtype(dtype)
    if _is_weak(x):
        try:
            return registry.constant(np.asarray(x).astype(dtype.np))
        except (OverflowError, ValueError, TypeError) as e:
            raise TypeError(f"cast: cannot convert {x!r} to {dtype.name}: {e}") from None
    x = convert_to_tensor(x)
    if x.dtype == dtype:
        return x
    return apply(_CAST, [x], {"dtype": dtype}, name)


# -- gradients ---------------------------------------------------------------------------
# One function per differentiable op, written with rt ops so that it runs eagerly (for a
# tape) and symbolically (in graphs) alike: grad(op, *output_grads) returns one gradient,
# or None, per input. `op` has .inputs, .outputs and .attrs of the forward operation.


def no_gradient(op, *grads):
    """The gradient of an op that nothing flows through (stop_gradient, assignments)."""
    return [None] * len(op.inputs)


def unbroadcast(grad, x):
    """`grad` summed back to the shape of `x`, undoing numpy broadcasting."""
    gshape, xshape = grad.shape, x.shape
    if not (gshape.is_fully_defined() and xshape.is_fully_defined()):
        return apply(_SUM_TO, [grad, array_ops.shape(x)], {})
    if gshape == xshape:
        return grad
    lead = gshape.rank - xshape.rank
    axes = list(range(lead)) + [lead + i for i, d in enumerate(xshape.dims)
                                if d == 1 and gshape.dims[lead + i] != 1]
    if axes:
        grad = reduce_sum(grad, axes)
    return array_ops.reshape(grad, xshape.as_list())


def _sum_to_kernel(xp, grad, shape):
    shape = array_ops.int_tuple(shape)
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape)
                                      if d == 1 and grad.shape[lead + i] != 1)
    return xp.reshape(xp.sum(grad, axis=axes, dtype=grad.dtype), shape)


def _sum_to_infer(inputs):
    grad, shape = inputs
    return [(array_ops.shape_tensor_infer(shape), grad.dtype)]


def _sum_to_grad(op, grad):
    return [array_ops.broadcast_to(grad, array_ops.shape(op.inputs[0])), None]


_SUM_TO = registry.register("sum_to", _sum_to_kernel, _sum_to_infer, grad=_sum_to_grad, fresh=True)


def fill_missing(op, grads):
    """The output gradients of a multi-output op, zeros for the outputs that got none."""
    return [array_ops.zeros_like(t) if g is None and t.dtype.is_floating else g
            for g, t in zip(grads, op.outputs)]


def _select(mask, grad):
    """`grad` where `mask` holds, zero elsewhere (broadcast to their common shape)."""
    return array_ops.where(mask, grad, array_ops.zeros_like(grad))


def _zero_grad(op, grad):
    """Piecewise constant ops (sign, floor, ceil, round): zero almost everywhere."""
    return [array_ops.zeros_like(op.inputs[0])]


def _negative_grad(op, grad):
    return [-grad]


def _abs_grad(op, grad):
    return [grad * sign(op.inputs[0])]


def _sqrt_grad(op, grad):
    return [grad / (2 * op.outputs[0])]


def _rsqrt_grad(op, grad):
    y = op.outputs[0]
    return [grad * -0.5 * y * y * y]


def _square_grad(op, grad):
    return [grad * 2 * op.inputs[0]]


def _exp_grad(op, grad):
    return [grad * op.outputs[0]]


def _log_grad(op, grad):
    return [grad / op.inputs[0]]


def _log1p_grad(op, grad):
    return [grad / (1 + op.inputs[0])]


def _sin_grad(op, grad):
    return [grad * cos(op.inputs[0])]


def _cos_grad(op, grad):
    return [-grad * sin(op.inputs[0])]


def _tan_grad(op, grad):
    return [grad * (1 + square(op.outputs[0]))]


def _tanh_grad(op, grad):
    return [grad * (1 - square(op.outputs[0]))]


def _sigmoid_grad(op, grad):
    y = op.outputs[0]
    return [grad * y * (1 - y)]


def _relu_grad(op, grad):
    return [_select(greater(op.inputs[0], 0), grad)]


def _softplus_grad(op, grad):
    return [grad * sigmoid(op.inputs[0])]


def _reciprocal_grad(op, grad):
    return [-grad * square(op.outputs[0])]


def _add_grad(op, grad):
    x, y = op.inputs
    return [unbroadcast(grad, x), unbroadcast(grad, y)]


def _subtract_grad(op, grad):
    x, y = op.inputs
    return [unbroadcast(grad, x), unbroadcast(-grad, y)]


def _multiply_grad(op, grad):
    x, y = op.inputs
    return [_product_sum(grad, y, x), _product_sum(grad, x, y)]


def _product_sum(grad, other, x):
    """`unbroadcast(grad * other, x)`: for a scalar x scaling a whole float array (the
    weight of `x * w`), one dot product, with no temporary array."""
    gshape, oshape, xshape = grad.shape, other.shape, x.shape
    if (gshape.is_fully_defined() and xshape.is_fully_defined() and gshape == oshape
            and xshape.num_elements() == 1 and gshape.num_elements() > 1
            and grad.dtype == other.dtype and grad.dtype.is_floating):
        n = gshape.num_elements()
        row = array_ops.reshape(grad, [1, n])
        column = array_ops.reshape(other, [n, 1])
        return array_ops.reshape(matmul(row, column), xshape.as_list())
    return unbroadcast(grad * other, x)


def _divide_grad(op, grad):
    x, y = op.inputs
    return [unbroadcast(grad / y, x), unbroadcast(-grad * x / square(y), y)]


def _mod_grad(op, grad):
    x, y = op.inputs
    return [unbroadcast(grad, x), unbroadcast(-grad * floordiv(x, y), y)]


def _pow_grad(op, grad):
    x, y = op.inputs
    log_x = array_ops.where(greater(x, 0), log(x), array_ops.zeros_like(x))
    return [unbroadcast(grad * y * pow(x, y - 1), x),
            unbroadcast(grad * op.outputs[0] * log_x, y)]


def _extremum_grad(pick_x):
    """maximum/minimum: the gradient goes to x where `pick_x(x, y)` holds, else to y."""
    def grad_fn(op, grad):
        x, y = op.inputs
        mask = pick_x(x, y)
        return [unbroadcast(_select(mask, grad), x),
                unbroadcast(_select(logical_not(mask), grad), y)]
    return grad_fn


def _squared_difference_grad(op, grad):
    x, y = op.inputs
    d = grad * 2 * (x - y)
    return [unbroadcast(d, x), unbroadcast(-d, y)]


def _clip_grad(op, grad):
    t, lo, hi = op.inputs
    inside = logical_and(greater_equal(t, lo), less_equal(t, hi))
    return [unbroadcast(_select(inside, grad), t), unbroadcast(_select(less(t, lo), grad), lo),
            unbroadcast(_select(greater(t, hi), grad), hi)]


def _add_n_grad(op, grad):
    return [unbroadcast(grad, x) for x in op.inputs]


# -- elementwise -------------------------------------------------------------------------

def _sigmoid_kernel(xp, x):
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    one = x.dtype.type(1) if x.dtype.kind == "f" else 1
    return np.where(x >= 0, one / (one + e), e / (one + e))


def _softplus_kernel(xp, x):
    return xp.logaddexp(0.0, x)


def _softplus(x):
    return np.logaddexp(x.dtype.type(0) if x.dtype.kind == "f" else 0.0, x)


def _relu_kernel(xp, x):
    return xp.maximum(x, 0)


def _relu(x):
    return np.maximum(x, x.dtype.type(0))


def _rsqrt_kernel(xp, x):
    return 1 / xp.sqrt(x)


def _reciprocal_kernel(xp, x):
    """1 / x; of integers, numpy's integer reciprocal (0 unless x is 1 or -1)."""
    if xp.isdtype(x.dtype, "integral"):
        return xp.where(xp.abs(x) == 1, x, xp.zeros_like(x))
    return 1 / x


def _squared_difference_kernel(xp, x, y):
    return xp.square(x - y)


# Traits: `operator`/`bool_operator` (the fast executor's rank-0 source; `checked`: numpy
# checks its integer overflow on scalars), `weak_result`
# (a result standing for a Python number), `lower` (one element in the compiled tier;
# operands arrive cast to the ufunc's loop dtypes, the result is cast to the op's dtype).
_ARITH = registry.arithmetic_weak_result
_BOOL = registry.bool_weak_result

negative = _define_unary("negative", np.negative, _negative_grad, operator="-{0}",
                         checked=True, weak_result=_ARITH, lower="-{0}")
abs = _define_unary("abs", np.abs, _abs_grad, operator="abs({0})",  # noqa: A001 - rt.abs
                    checked=True, weak_result=_ARITH, lower="abs({0})")
sign = _define_unary("sign", np.sign, _zero_grad, lower="np.sign({0})")
sqrt = _define_unary("sqrt", _quiet(np.sqrt), _sqrt_grad, lower="np.sqrt({0})")
rsqrt = _define_unary("rsqrt", _quiet(lambda x: 1 / np.sqrt(x)), _rsqrt_grad,
                      generic=_rsqrt_kernel)
square = _define_unary("square", np.square, _square_grad, weak_result=_ARITH,
                       lower="{0} * {0}")
exp = _define_unary("exp", _quiet(np.exp), _exp_grad, simd=True, lower="np.exp({0})")
log = _define_unary("log", _quiet(np.log), _log_grad, simd=True, lower="np.log({0})")
log1p = _define_unary("log1p", _quiet(np.log1p), _log1p_grad, simd=True, lower="np.log1p({0})")
sin = _define_unary("sin", np.sin, _sin_grad, simd=True, lower="np.sin({0})")
cos = _define_unary("cos", np.cos, _cos_grad, simd=True, lower="np.cos({0})")
tan = _define_unary("tan", np.tan, _tan_grad, simd=True, lower="np.tan({0})")
tanh = _define_unary("tanh", np.tanh, _tanh_grad,
                     simd=lambda dtypes: 4096 if dtypes[0] == np.float32 else True,
                     lower=lambda dtypes: "_tanh32({0})" if dtypes[0] == np.float32
                     else "np.tanh({0})")
sigmoid = _define_unary("sigmoid", _quiet(_sigmoid), _sigmoid_grad, generic=_sigmoid_kernel,
                        simd=True, lower="_sigmoid({0}, {dtype}(1))")
relu = _define_unary("relu", _relu, _relu_grad, generic=_relu_kernel,
                     lower="_maximum({0}, {dtype}(0))")
softplus = _define_unary("softplus", _quiet(_softplus), _softplus_grad, generic=_softplus_kernel,
                         simd=True, lower="np.logaddexp({dtype}(0), {0})")
floor = _define_unary("floor", np.floor, _zero_grad, lower="np.floor({0})")
ceil = _define_unary("ceil", np.ceil, _zero_grad, lower="np.ceil({0})")
round = _define_unary("round", np.round, _zero_grad)  # noqa: A001 - banker's rounding, like TF
reciprocal = _define_unary("reciprocal", _quiet(np.reciprocal), _reciprocal_grad,
                           generic=_reciprocal_kernel)
logical_not = _define_unary("logical_not", np.logical_not, operator="(not {0})",
                            bool_operator="(not {0})", weak_result=_BOOL, lower="not {0}")
invert = _define_unary("invert", np.invert, operator="~{0}", bool_operator="(not {0})",
                       lower=lambda dtypes: "not {0}" if dtypes[0].kind == "b" else "~{0}")
is_nan = _define_unary("is_nan", np.isnan, lower="np.isnan({0})")
is_finite = _define_unary("is_finite", np.isfinite, lower="np.isfinite({0})")


def _binary(symbol, **traits):
    """The traits of an op written `a SYMBOL b` on numpy scalars and in compiled code."""
    return dict(operator=f"{{0}} {symbol} {{1}}", lower=f"{{0}} {symbol} {{1}}", **traits)


def _comparison(symbol):
    return _binary(symbol, bool_operator=f"{{0}} {symbol} {{1}}", weak_result=_BOOL)


def _logical(symbol):
    return dict(bool_operator=f"{{0}} {symbol} {{1}}", weak_result=_BOOL,
                lower=f"{{0}} {symbol} {{1}}")


add = _define_binary("add", np.add, _add_grad, **_binary("+", weak_result=_ARITH, checked=True))
subtract = _define_binary("subtract", np.subtract, _subtract_grad,
                          **_binary("-", weak_result=_ARITH, checked=True))
multiply = _define_binary("multiply", np.multiply, _multiply_grad,
                          **_binary("*", weak_result=_ARITH, checked=True))
divide = _define_binary("divide", _quiet(np.true_divide), _divide_grad,
                        **_binary("/", weak_result=registry.division_weak_result))
floordiv = _define_binary("floordiv", _quiet(np.floor_divide), no_gradient, operator="{0} // {1}",
                          weak_result=_ARITH, lower=lambda dtypes: "_ifloordiv({0}, {1})"
                          if dtypes[0].kind in "iu" else "{0} // {1}")
mod = _define_binary("mod", _quiet(np.mod), _mod_grad, operator="{0} % {1}", weak_result=_ARITH,
                     lower=lambda dtypes: "_imod({0}, {1})" if dtypes[0].kind in "iu"
                     else "{0} % {1}")
pow = _define_binary("pow", _quiet(np.power), _pow_grad, weak_result=_ARITH, simd=True,  # noqa: A001
                     lower=lambda dtypes: "{0} ** {1}" if dtypes[0].kind in "fc" else None)
maximum = _define_binary("maximum", np.maximum, _extremum_grad(lambda x, y: x >= y),
                         weak_result=_ARITH, lower="_maximum({0}, {1})")
minimum = _define_binary("minimum", np.minimum, _extremum_grad(lambda x, y: x <= y),
                         weak_result=_ARITH, lower="_minimum({0}, {1})")
equal = _define_binary("equal", np.equal, **_comparison("=="))
not_equal = _define_binary("not_equal", np.not_equal, **_comparison("!="))
less = _define_binary("less", np.less, **_comparison("<"))
less_equal = _define_binary("less_equal", np.less_equal, **_comparison("<="))
greater = _define_binary("greater", np.greater, **_comparison(">"))
greater_equal = _define_binary("greater_equal", np.greater_equal, **_comparison(">="))
logical_and = _define_binary("logical_and", np.logical_and, **_logical("&"))
logical_or = _define_binary("logical_or", np.logical_or, **_logical("|"))
logical_xor = _define_binary("logical_xor", np.logical_xor, **_logical("^"))
bitwise_and = _define_binary("bitwise_and", np.bitwise_and, **_binary("&", bool_operator="{0} & {1}"))
bitwise_or = _define_binary("bitwise_or", np.bitwise_or, **_binary("|", bool_operator="{0} | {1}"))
bitwise_xor = _define_binary("bitwise_xor", np.bitwise_xor, **_binary("^", bool_operator="{0} ^ {1}"))
squared_difference = _define_binary("squared_difference", lambda x, y: np.square(x - y),
                                    _squared_difference_grad,
                                    generic=_squared_difference_kernel,
                                    lower="({0} - {1}) * ({0} - {1})")

truediv = divide
floor_div = floordiv
floormod = mod


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Clamp `t` to [min, max] elementwise."""
    t, lo, hi = convert_all([t, clip_value_min, clip_value_max])
    return apply(_CLIP, [t, lo, hi], {}, name)


def _clip_kernel(xp, t, lo, hi):
    return xp.minimum(xp.maximum(t, lo), hi)


_NUMPY_CLIP = functools.partial(_clip_kernel, np)
_CLIP = registry.register("clip_by_value", _clip_kernel, elementwise_infer(_NUMPY_CLIP),
                          grad=_clip_grad, elementwise=True, fresh=True,
                          lower="_minimum(_maximum({0}, {1}), {2})")


def add_n(inputs, name=None):
    """Sum of a list of tensors (converted to one dtype, broadcast like numpy)."""
    tensors = convert_all(list(inputs))
    return apply(_ADD_N, tensors, {}, name)


def _add_n_kernel(xp, *xs):
    return functools.reduce(xp.add, xs)


def _add_n_lower(op, src):
    """x0 + x1 + ... (added left to right, as the kernel does) of numbers."""
    if op.outputs[0].dtype.is_bool:
        return None
    return " + ".join(src.value(i) for i in range(len(op.inputs)))


_ADD_N = registry.register("add_n", _add_n_kernel,
                           elementwise_infer(functools.partial(_add_n_kernel, np)),
                           grad=_add_n_grad, lower=_add_n_lower)


# -- reductions ------------------------------------------------------------------------------

def _norm_axis(axis, shape):
    """A sorted tuple of axes of `shape`, non-negative when its rank is known (None: all)."""
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    rank = shape.rank
    out = []
    for a in axes:
        a = int(a)
        if rank is not None:
            if not -rank <= a < rank:
                raise ValueError(f"axis {a} is out of range for a tensor of shape {shape} "
                                 f"(rank {rank})")
            a %= rank
        out.append(a)
    return tuple(sorted(set(out)))


def _reduced_shape(shape, axis, keepdims):
    if shape.rank is None:
        return TensorShape([] if axis is None and not keepdims else None)
    if axis is None:
        return TensorShape([1] * shape.rank if keepdims else [])
    dims = []
    for i, d in enumerate(shape.dims):
        if i in axis:
            if keepdims:
                dims.append(1)
        else:
            dims.append(d)
    return TensorShape(dims)


def _axis_attr(axis, x):
    if isinstance(axis, Tensor):
        value = registry.constant_value(axis)
        if value is None:
            raise TypeError("The axis of a reduction must be known while tracing "
                            "(a Python int or a constant).")
        axis = value.tolist()
    return _norm_axis(axis, x.shape)


def _define_reduction(name, kernel, out_dtype=None, grad=None, lower=None):
    def infer(inputs, axis, keepdims):
        x = inputs[0]
        dtype = out_dtype(x.dtype) if out_dtype else x.dtype
        return [(_reduced_shape(x.shape, axis, keepdims), dtype)]
    opdef = registry.register(name, kernel, infer, grad=grad, fresh=True,
                              lower=lower and (lambda op, src: src.reduction(lower)))
    float_function = is_float_function(opdef.kernel, 1, (("axis", None), ("keepdims", False)))

    def op(input_tensor, axis=None, keepdims=False, name=None):
        x = convert_to_tensor(input_tensor)
        if float_function and _is_exact(x.dtype):
            x = cast(x, dtypes.float32)                      # the mean of integers
        return apply(opdef, [x], {"axis": checked(opdef, _axis_attr, axis, x),
                                  "keepdims": bool(keepdims)}, name)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"{name} over `axis` (all axes when None)."
    return op


def _sum_kernel(xp, x, axis, keepdims):
    if x.dtype == xp.bool:
        x = xp.astype(x, xp.int32)
    return xp.sum(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


def _prod_kernel(xp, x, axis, keepdims):
    if x.dtype == xp.bool:
        x = xp.astype(x, xp.int32)
    return xp.prod(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


def _mean_kernel(xp, x, axis, keepdims):
    return xp.mean(x, axis=axis, keepdims=keepdims)


def _max_kernel(xp, x, axis, keepdims):
    return _of_bools(xp, xp.max, x, axis=axis, keepdims=keepdims)


def _min_kernel(xp, x, axis, keepdims):
    return _of_bools(xp, xp.min, x, axis=axis, keepdims=keepdims)


def _of_bools(xp, function, x, **kwargs):
    """`function(x)`, of bools too (which the standard's max and min refuse) as of 0/1."""
    if x.dtype != xp.bool:
        return function(x, **kwargs)
    return xp.astype(function(xp.astype(x, xp.int8), **kwargs), xp.bool)


def _any_kernel(xp, x, axis, keepdims):
    return xp.any(x, axis=axis, keepdims=keepdims)


def _all_kernel(xp, x, axis, keepdims):
    return xp.all(x, axis=axis, keepdims=keepdims)


def _bool_to_int(dtype):
    return dtypes.int32 if dtype.is_bool else dtype


def _to_bool(_):
    return dtypes.bool_


def _mean_dtype(dtype):
    """numpy's mean: float64 of integers and bools (rt.reduce_mean casts them to float32)."""
    return dtypes.float64 if _is_exact(dtype) else dtype


def _shape_of(x):
    """The shape of `x`: a list when known while tracing, else a shape tensor."""
    return x.shape.as_list() if x.shape.is_fully_defined() else array_ops.shape(x)


def _unreduce(op, value):
    """`value`, shaped like a reduction's output, broadcast back to the input's shape."""
    axis, keepdims = op.attrs["axis"], op.attrs["keepdims"]
    if axis is not None and not keepdims:
        for a in axis:
            value = array_ops.expand_dims(value, a)
    return array_ops.broadcast_to(value, _shape_of(op.inputs[0]))


def _sum_grad(op, grad):
    return [_unreduce(op, grad)]


def _mean_grad(op, grad):
    n, m = op.inputs[0].shape.num_elements(), op.outputs[0].shape.num_elements()
    if n is not None and m is not None:
        count = n // m if m else 1
    else:
        count = (cast(array_ops.size(op.inputs[0]), grad.dtype)
                 / cast(maximum(array_ops.size(op.outputs[0]), 1), grad.dtype))
    return [_unreduce(op, grad) / count]


def _min_max_grad(op, grad):
    """The gradient is shared equally by the elements equal to the extremum."""
    x = op.inputs[0]
    hit = cast(equal(x, _unreduce(op, op.outputs[0])), grad.dtype)
    return [_unreduce(op, grad) * hit / reduce_sum(hit, op.attrs["axis"], keepdims=True)]


def _prod_grad(op, grad):
    """d prod / d x_i is the product of the others, also when some x are zero."""
    x, axis = op.inputs[0], op.attrs["axis"]
    is_zero = equal(x, 0)
    nonzero = array_ops.where(is_zero, array_ops.ones_like(x), x)
    prod_nonzero = reduce_prod(nonzero, axis, keepdims=True)
    zeros = reduce_sum(cast(is_zero, x.dtype), axis, keepdims=True)
    at_zero = _select(equal(zeros, 1), prod_nonzero)
    elsewhere = array_ops.where(equal(zeros, 0), prod_nonzero / nonzero,
                                array_ops.zeros_like(x))
    return [_unreduce(op, grad) * array_ops.where(is_zero, at_zero, elsewhere)]


# (`lower`: the kind of reduction loop the compiled tier writes; floats summed in float64)
reduce_sum = _define_reduction("reduce_sum", _sum_kernel, _bool_to_int, _sum_grad, "sum")
reduce_prod = _define_reduction("reduce_prod", _prod_kernel, _bool_to_int, _prod_grad)
reduce_mean = _define_reduction("reduce_mean", _mean_kernel, _mean_dtype, _mean_grad, "mean")
reduce_max = _define_reduction("reduce_max", _max_kernel, None, _min_max_grad, "max")
reduce_min = _define_reduction("reduce_min", _min_kernel, None, _min_max_grad, "min")
reduce_any = _define_reduction("reduce_any", _any_kernel, _to_bool, None, "any")
reduce_all = _define_reduction("reduce_all", _all_kernel, _to_bool, None, "all")


def _arg_infer(inputs, axis, output_type):
    shape = inputs[0].shape
    if shape.rank is None:
        return [(TensorShape(None), output_type)]
    return [(TensorShape([d for i, d in enumerate(shape.dims) if i != axis]), output_type)]


def _argmax_kernel(xp, x, axis, output_type):
    x = xp.astype(x, xp.int8) if x.dtype == xp.bool else x
    return xp.astype(xp.argmax(x, axis=axis), output_type.of(xp))


def _argmin_kernel(xp, x, axis, output_type):
    x = xp.astype(x, xp.int8) if x.dtype == xp.bool else x
    return xp.astype(xp.argmin(x, axis=axis), output_type.of(xp))


_ARGMAX = registry.register("argmax", _argmax_kernel, _arg_infer, fresh=True)
_ARGMIN = registry.register("argmin", _argmin_kernel, _arg_infer, fresh=True)


def _arg_op(opdef, x, axis, output_type, name):
    x = convert_to_tensor(x)
    axis = checked(opdef, _single_axis, 0 if axis is None else axis, x)
    return apply(opdef, [x], {"axis": axis, "output_type": dtypes.as_dtype(output_type)},
                 name)


def _single_axis(axis, x):
    axes = _axis_attr(axis, x)
    if len(axes) != 1:
        raise ValueError(f"takes a single axis, got {axis}")
    return axes[0]


def argmax(input, axis=None, output_type=dtypes.int64, name=None):  # noqa: A002
    """Index of the largest value along `axis` (default 0), int64 like TensorFlow."""
    return _arg_op(_ARGMAX, input, axis, output_type, name)


def argmin(input, axis=None, output_type=dtypes.int64, name=None):  # noqa: A002
    """Index of the smallest value along `axis` (default 0)."""
    return _arg_op(_ARGMIN, input, axis, output_type, name)


# -- matmul ------------------------------------------------------------------------------------

def _matmul_kernel(xp, a, b, transpose_a=False, transpose_b=False):
    if transpose_a:
        a = xp.matrix_transpose(a)
    if transpose_b:
        b = xp.matrix_transpose(b)
    return xp.matmul(a, b)


def _matmul_infer(inputs, transpose_a=False, transpose_b=False):
    """numpy's matmul rule: a vector operand gains a dimension, dropped from the result."""
    a, b = inputs
    dtype = _probe_dtype(np.add, (a.dtype, b.dtype))
    if a.shape.rank is None or b.shape.rank is None:
        return [(TensorShape(None), dtype)]
    shapes = f"shapes {a.shape} and {b.shape}"
    if a.shape.rank < (2 if transpose_a else 1) or b.shape.rank < (2 if transpose_b else 1):
        raise ValueError(f"matmul needs tensors of rank >= 1 (>= 2 to transpose), got {shapes}")
    ad = list(a.shape.dims) if a.shape.rank > 1 else [1] + list(a.shape.dims)
    bd = list(b.shape.dims) if b.shape.rank > 1 else list(b.shape.dims) + [1]
    if transpose_a:
        ad[-1], ad[-2] = ad[-2], ad[-1]
    if transpose_b:
        bd[-1], bd[-2] = bd[-2], bd[-1]
    k1, k2 = ad[-1], bd[-2]
    if k1 is not None and k2 is not None and k1 != k2:
        raise ValueError(f"matmul: inner dimensions differ, {shapes}"
                         f"{' (transposed)' if transpose_a or transpose_b else ''}")
    try:
        batch = broadcast(TensorShape(ad[:-2]), TensorShape(bd[:-2]))
    except ValueError:
        raise ValueError(f"matmul: batch dimensions do not broadcast, {shapes}") from None
    rows = [ad[-2]] if a.shape.rank > 1 else []
    cols = [bd[-1]] if b.shape.rank > 1 else []
    return [(batch.concatenate(rows + cols), dtype)]


def _matmul_grad(op, grad):
    """Products with the other operand (transposed as the forward product was); a vector
    operand is a one-row (a) or one-column (b) matrix; batch broadcasting is summed."""
    a, b = op.inputs
    ta, tb = op.attrs.get("transpose_a", False), op.attrs.get("transpose_b", False)
    a_vector, b_vector = a.shape.rank == 1, b.shape.rank == 1
    if b_vector:
        b, grad = array_ops.expand_dims(b, -1), array_ops.expand_dims(grad, -1)
    if a_vector:
        a, grad = array_ops.expand_dims(a, 0), array_ops.expand_dims(grad, -2)
    if not ta and not tb:
        ga, gb = matmul(grad, b, transpose_b=True), matmul(a, grad, transpose_a=True)
    elif ta and not tb:
        ga, gb = matmul(b, grad, transpose_b=True), matmul(a, grad)
    elif not ta and tb:
        ga, gb = matmul(grad, b), matmul(grad, a, transpose_a=True)
    else:
        ga = matmul(b, grad, transpose_a=True, transpose_b=True)
        gb = matmul(grad, a, transpose_a=True, transpose_b=True)
    if a_vector:
        ga = array_ops.squeeze(ga, [-2])
    if b_vector:
        gb = array_ops.squeeze(gb, [-1])
    return [unbroadcast(ga, op.inputs[0]), unbroadcast(gb, op.inputs[1])]


def _matmul_emit(op, src):
    if op.attrs:
        return None
    return f"{src.name(np.matmul, 'np_matmul')}({src.array(0)}, {src.array(1)})"


def _matmul_lower(op, src):
    """np.dot (BLAS) of float matrices and vectors in compiled code."""
    a, b = op.inputs
    if a.shape.rank not in (1, 2) or b.shape.rank not in (1, 2) or not a.dtype.is_floating \
            or a.dtype != b.dtype or a.dtype.np.itemsize < 4:
        return None
    x, y = src.value(0), src.value(1)
    if op.attrs.get("transpose_a"):
        x = f"{x}.T"
    if op.attrs.get("transpose_b"):
        y = f"{y}.T"
    return f"np.dot(np.ascontiguousarray({x}), np.ascontiguousarray({y}))"


_MATMUL = registry.register("matmul", _matmul_kernel, _matmul_infer, grad=_matmul_grad,
                            fresh=True, emit=_matmul_emit, lower=_matmul_lower)


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    """Matrix product of the last two dimensions (batched over the leading ones)."""
    a, b = convert_pair(a, b)
    attrs = {}
    if transpose_a:
        attrs["transpose_a"] = True
    if transpose_b:
        attrs["transpose_b"] = True
    return apply(_MATMUL, [a, b], attrs, name)


from . import array_ops  # noqa: E402 - gradients use array ops, which import this module
