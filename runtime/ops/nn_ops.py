"""Neural-network ops (`rt.nn`): softmax and the usual losses, numerically stable."""
from .. import devices
from ..shapes import TensorShape
from . import array_ops
from . import registry
from .math_ops import _norm_axis, apply_checked, cast, checked, convert_pair, equal, exp
from .math_ops import reduce_sum
from .math_ops import relu, sigmoid, softplus, tanh  # noqa: F401 - rt.nn names
from .registry import convert_to_tensor


def _softmax_kernel(xp, x, axis):
    shifted = x - xp.max(x, axis=axis, keepdims=True)
    e = xp.exp(shifted)
    return e / xp.sum(e, axis=axis, keepdims=True)


def _log_softmax_kernel(xp, x, axis):
    shifted = x - xp.max(x, axis=axis, keepdims=True)
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=axis, keepdims=True))


def _check_logits(logits):
    if not logits.dtype.is_floating:
        raise TypeError(f"expects floating-point logits, got {logits.dtype.name}")


def _float_same_infer(inputs, axis):
    x = inputs[0]
    _check_logits(x)
    _norm_axis(axis, x.shape)
    return [(x.shape, x.dtype)]


def _softmax_grad(op, grad):
    y = op.outputs[0]
    return [y * (grad - reduce_sum(grad * y, op.attrs["axis"], keepdims=True))]


def _log_softmax_grad(op, grad):
    y = op.outputs[0]
    return [grad - exp(y) * reduce_sum(grad, op.attrs["axis"], keepdims=True)]


_SOFTMAX = registry.register("softmax", _softmax_kernel, _float_same_infer, grad=_softmax_grad, fresh=True)
_LOG_SOFTMAX = registry.register("log_softmax", _log_softmax_kernel, _float_same_infer,
                                 grad=_log_softmax_grad, fresh=True)


def softmax(logits, axis=-1, name=None):
    """exp(logits) / sum(exp(logits)) along `axis`."""
    return apply_checked(_SOFTMAX, [convert_to_tensor(logits)], {"axis": int(axis)}, name)


def log_softmax(logits, axis=-1, name=None):
    """logits - log(sum(exp(logits))) along `axis`."""
    return apply_checked(_LOG_SOFTMAX, [convert_to_tensor(logits)], {"axis": int(axis)},
                         name)


def _xent_kernel(xp, labels, logits, axis):
    return -xp.sum(labels * _log_softmax_kernel(xp, logits, axis), axis=axis)


def _drop_axis_infer(inputs, axis):
    labels, logits = inputs
    shape = _same_shape_labels(labels, logits)
    if shape.rank is None:
        return [(TensorShape(None), logits.dtype)]
    dims = list(shape.dims)
    del dims[axis]
    return [(TensorShape(dims), logits.dtype)]


def _xent_grad(op, grad):
    labels, logits = op.inputs
    axis = op.attrs["axis"]
    grad = array_ops.expand_dims(grad, axis)
    log_probs = log_softmax(logits, axis)          # once: the softmax is its exp
    return [-grad * log_probs, grad * (exp(log_probs) - labels)]


_XENT = registry.register("softmax_cross_entropy_with_logits", _xent_kernel, _drop_axis_infer,
                          grad=_xent_grad, fresh=True)


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """Cross entropy between `labels` (a distribution) and softmax(`logits`), per example."""
    labels, logits = convert_pair(labels, logits)
    axis, = checked(_XENT, _norm_axis, int(axis), logits.shape)
    return apply_checked(_XENT, [labels, logits], {"axis": axis}, name)


def _sparse_xent_kernel(xp, labels, logits):
    logp = _log_softmax_kernel(xp, logits, -1)
    n = logits.shape[-1]
    if bool(xp.any((labels < 0) | (labels >= n))):
        raise ValueError(f"labels must be in [0, {n}), got {devices.to_host(labels)}")
    index = xp.astype(xp.expand_dims(labels, axis=-1), xp.int64)
    return -xp.take_along_axis(logp, index, axis=-1)[..., 0]


def _sparse_xent_infer(inputs):
    labels, logits = inputs
    if not labels.dtype.is_integer:
        raise TypeError(f"labels must be integers, got {labels.dtype.name}")
    _check_logits(logits)
    if logits.shape.rank is not None and labels.shape.rank is not None:
        if labels.shape.rank != logits.shape.rank - 1 or not labels.shape.is_compatible_with(
                logits.shape[:-1]):
            raise ValueError(f"labels shape {labels.shape} must equal logits shape "
                             f"{logits.shape} without its last dimension")
        return [(labels.shape.merge_with(logits.shape[:-1]), logits.dtype)]
    return [(labels.shape, logits.dtype)]


def _sparse_xent_grad(op, grad):
    labels, logits = op.inputs
    classes = array_ops.range(array_ops.shape(logits)[-1])
    hot = cast(equal(array_ops.expand_dims(labels, -1), classes), logits.dtype)
    return [None, array_ops.expand_dims(grad, -1) * (softmax(logits) - hot)]


_SPARSE_XENT = registry.register("sparse_softmax_cross_entropy_with_logits",
                                 _sparse_xent_kernel, _sparse_xent_infer, grad=_sparse_xent_grad, fresh=True)


def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None):
    """Cross entropy of integer class `labels` against softmax(`logits`), per example."""
    return apply_checked(_SPARSE_XENT, [convert_to_tensor(labels), convert_to_tensor(logits)],
                         {}, name)


def _sigmoid_xent_kernel(xp, labels, logits):
    return (xp.maximum(logits, 0) - logits * labels
            + xp.log1p(xp.exp(-xp.abs(logits))))


def _sigmoid_xent_infer(inputs):
    labels, logits = inputs
    return [(_same_shape_labels(labels, logits), logits.dtype)]


def _same_shape_labels(labels, logits):
    """The shape of labels and logits, which must have one float dtype and one shape."""
    _check_logits(logits)
    if labels.dtype != logits.dtype:
        raise TypeError(f"labels ({labels.dtype.name}) and logits ({logits.dtype.name}) "
                        f"must have the same dtype")
    if not labels.shape.is_compatible_with(logits.shape):
        raise ValueError(f"labels shape {labels.shape} and logits shape {logits.shape} differ")
    return logits.shape.merge_with(labels.shape)


def _sigmoid_xent_grad(op, grad):
    labels, logits = op.inputs
    return [-grad * logits, grad * (sigmoid(logits) - labels)]


_SIGMOID_XENT = registry.register("sigmoid_cross_entropy_with_logits", _sigmoid_xent_kernel,
                                  _sigmoid_xent_infer, grad=_sigmoid_xent_grad, fresh=True)


def sigmoid_cross_entropy_with_logits(labels, logits, name=None):
    """Elementwise logistic loss of `labels` in [0, 1] against `logits`."""
    labels, logits = convert_pair(labels, logits)
    return apply_checked(_SIGMOID_XENT, [labels, logits], {}, name)
