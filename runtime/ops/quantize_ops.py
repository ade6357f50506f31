"""The op of quantized weights: `dequantize(q, scale, axis)` = `cast(q) * scale`.

    q: int8[K, N], scale: f32[N], axis=1  ->  f32[K, N], element [k, n] = q[k, n] * scale[n]
    q: int8[K, N], scale: f32[],  axis=None (one scale for the whole tensor)

`scale` is one value per index of `axis` of `q` (ONNX's DequantizeLinear with a zero
point of 0). `rt.quantize.weights` writes it; the `quantize` pass folds it into the matmul
that reads it. Its gradient flows to `scale` (an integer `q` has none).
"""
from ..shapes import TensorShape
from . import registry
from .math_ops import apply_checked, cast, reduce_sum

__all__ = ["dequantize", "scale_shape"]


def scale_shape(axis, rank):
    """The shape `scale` takes against a tensor of `rank` dims: its C values at `axis`."""
    return [] if axis is None else [-1 if i == axis else 1 for i in range(rank)]


def _dequantize_kernel(xp, q, scale, axis=None):
    return xp.astype(q, scale.dtype) * xp.reshape(scale, tuple(scale_shape(axis, q.ndim)))


def _dequantize_infer(inputs, axis=None):
    q, scale = inputs
    if not q.dtype.is_integer:
        raise TypeError(f"dequantize: the quantized values must be integers, got {q.dtype.name}")
    if not scale.dtype.is_floating:
        raise TypeError(f"dequantize: the scale must be floating-point, got {scale.dtype.name}")
    if axis is None:
        if scale.shape.rank not in (None, 0):
            raise ValueError(f"dequantize: without an axis the scale is one number, got shape "
                             f"{scale.shape}")
    else:
        rank = q.shape.rank
        if not isinstance(axis, int) or isinstance(axis, bool) or axis < 0 or (
                rank is not None and axis >= rank):
            raise ValueError(f"dequantize: axis {axis!r} is not a dimension of shape {q.shape}")
        channels = None if rank is None else q.shape.dims[axis]
        if scale.shape.rank not in (None, 1) or (
                channels is not None and scale.shape.dims[0] not in (None, channels)):
            raise ValueError(f"dequantize: the scale must have shape [{channels}] (one per "
                             f"index of axis {axis} of {q.shape}), got {scale.shape}")
    return [(TensorShape(q.shape.dims), scale.dtype)]


def _dequantize_grad(op, grad):
    q, scale = op.inputs
    axis = op.attrs.get("axis")
    rank = q.shape.rank
    others = None if axis is None else [i for i in range(rank) if i != axis]
    return [None, reduce_sum(grad * cast(q, scale.dtype), others)]


_DEQUANTIZE = registry.register("dequantize", _dequantize_kernel, _dequantize_infer,
                                grad=_dequantize_grad, fresh=True)


def dequantize(q, scale, axis=None, name=None):
    """`cast(q, scale.dtype) * scale`, `scale` holding one value per index of `axis` of `q`
    (or one for the whole tensor when `axis` is None)."""
    q, scale = registry.convert_to_tensor(q), registry.convert_to_tensor(scale)
    if axis is not None and q.shape.rank is not None and axis < 0:
        axis += q.shape.rank
    attrs = {} if axis is None else {"axis": int(axis)}
    return apply_checked(_DEQUANTIZE, [q, scale], attrs, name)

