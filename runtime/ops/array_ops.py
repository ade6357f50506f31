"""Array ops: shapes, reshaping, joining and splitting, indexing, constructors.

Shape arguments that are known while tracing (Python ints, eager tensors, graph
constants) become attributes, so output shapes are static; a shape computed at
run time becomes an input and the output dims are unknown.
"""
import builtins
import math

import numpy as np

from .. import devices
from .. import dtypes
from ..shapes import TensorShape, broadcast
from ..tensor import SymbolicTensor, Tensor
from . import registry
from .math_ops import _norm_axis, apply_checked, cast, checked, convert_all, result_dtype
from .math_ops import (_select, _shape_of, fill_missing, logical_not, no_gradient, reduce_sum,
                       unbroadcast)
from .registry import apply, constant, constant_value, convert_to_tensor

# -- shape arguments --------------------------------------------------------------------


def as_int(value, what="a size"):
    """A Python int for an integer argument; a float (even 2.0) is a TypeError, as in numpy
    and TensorFlow (int() would truncate 2.9 to 2 silently)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, np.integer, np.ndarray, Tensor)):
        if isinstance(value, (bool, np.bool_)):
            return int(value)
        raise TypeError(f"{what} must be an integer, got {value!r}")
    if isinstance(value, (np.ndarray, Tensor)):
        kind = (value.dtype if isinstance(value, np.ndarray) else value.dtype.np).kind
        if kind not in "iub":
            raise TypeError(f"{what} must be an integer, got {value!r}")
    return int(value)


def _shape_arg(shape):
    """(static dims tuple or None, dynamic int tensor or None) for a shape argument."""
    if isinstance(shape, TensorShape):
        return tuple(shape.as_list()), None
    if isinstance(shape, (list, tuple)):
        known = [constant_value(d) if isinstance(d, SymbolicTensor) else d for d in shape]
        if all(d is not None for d in known):
            return tuple(as_int(d, "a dimension") for d in known), None
    if isinstance(shape, (int, np.integer, float)):
        return (as_int(shape, "a dimension"),), None
    value = constant_value(shape) if isinstance(shape, Tensor) else None
    if value is not None:
        return tuple(as_int(d, "a dimension") for d in np.ravel(value)), None
    t = convert_to_tensor(shape) if not isinstance(shape, (list, tuple)) else stack(
        [cast(d, dtypes.int32) for d in shape])
    if not t.dtype.is_integer:
        raise TypeError(f"A shape must be integers, got dtype {t.dtype.name}")
    return None, t


def int_tuple(array):
    """The ints of a 1-D integer array of any device (a shape or sizes given at run time)."""
    return tuple(int(d) for d in np.ravel(devices.to_host(array)))


def _dynamic_shape_infer(shape_tensor):
    """Static knowledge of a run-time shape tensor: its rank when its length is known, and
    the dims that are constants when it was stacked from scalars (`[n, 8]`: [None, 8])."""
    n = shape_tensor.shape[0] if shape_tensor.shape.rank == 1 else None
    if n is None:
        return TensorShape(None)
    op = getattr(shape_tensor, "op", None)
    if op is not None and op.type == "stack" and len(op.inputs) == n:
        dims = []
        for t in op.inputs:
            value = constant_value(t)
            if op.type == "stack" and t.op.type == "cast":     # [rt.shape(x)[0], 8] casts
                value = constant_value(t.op.inputs[0])
            dims.append(int(value) if value is not None and np.ndim(value) == 0 and
                        value >= 0 else None)
        return TensorShape(dims)
    return TensorShape([None] * n)


def shape_tensor_infer(shape_tensor):
    """The shape a shape tensor gives: its value when constant, else `_dynamic_shape_infer`."""
    value = constant_value(shape_tensor)
    if value is not None:
        return TensorShape([int(d) for d in np.ravel(value)])
    return _dynamic_shape_infer(shape_tensor)


# -- reshape / transpose / expand / squeeze ------------------------------------------------

def _reshape_kernel(xp, x, *dynamic, shape=None):
    return xp.reshape(x, int_tuple(dynamic[0]) if dynamic else shape)


def _reshape_infer(inputs, shape=None):
    x = inputs[0]
    if shape is None:
        return [(_dynamic_shape_infer(inputs[1]), x.dtype)]
    if list(shape).count(-1) > 1:
        raise ValueError(f"reshape: at most one -1 in the new shape, got {list(shape)}")
    total = x.shape.num_elements()
    known = 1
    for d in shape:
        if d != -1:
            known *= d
    if -1 in shape:
        if total is None:
            dims = [None if d == -1 else d for d in shape]
        else:
            if known == 0 or total % known:
                raise ValueError(f"reshape: cannot reshape a tensor of shape {x.shape} "
                                 f"({total} elements) into {list(shape)}")
            dims = [total // known if d == -1 else d for d in shape]
        return [(TensorShape(dims), x.dtype)]
    if total is not None and total != known:
        raise ValueError(f"reshape: cannot reshape a tensor of shape {x.shape} ({total} "
                         f"elements) into {list(shape)} ({known} elements)")
    return [(TensorShape(shape), x.dtype)]


def _reshape_grad(op, grad):
    return [reshape(grad, _shape_of(op.inputs[0]))] + [None] * (len(op.inputs) - 1)


def _reshape_emit(op, src):
    if len(op.inputs) != 1:
        return None
    return f"{src.name(np.reshape, 'np_reshape')}({src.array(0)}, {src.literal(op.attrs['shape'])})"


def _reshape_lower(op, src):
    if len(op.inputs) != 1 or not op.inputs[0].shape.rank:
        return None
    return f"np.ascontiguousarray({src.value(0)}).reshape({src.literal(op.attrs['shape'])})"


_RESHAPE = registry.register("reshape", _reshape_kernel, _reshape_infer, grad=_reshape_grad,
                             emit=_reshape_emit, lower=_reshape_lower)


def reshape(tensor, shape, name=None):
    """`tensor` with a new shape of the same number of elements (one dim may be -1)."""
    x = convert_to_tensor(tensor)
    static, dynamic = _shape_arg(shape)
    if static is not None:
        if any(d < -1 for d in static) or static.count(-1) > 1:
            raise ValueError(f"reshape: a shape has sizes >= 0 and at most one -1, got "
                             f"{list(static)}")
        return apply(_RESHAPE, [x], {"shape": static}, name)
    return apply(_RESHAPE, [x, dynamic], {}, name)


def _transpose_kernel(xp, x, perm):
    return xp.permute_dims(x, tuple(builtins.range(x.ndim))[::-1] if perm is None else perm)


def _transpose_infer(inputs, perm):
    x = inputs[0]
    if x.shape.rank is None:
        return [(TensorShape(None), x.dtype)]
    if perm is None:
        return [(TensorShape(x.shape.dims[::-1]), x.dtype)]
    if sorted(perm) != list(builtins.range(x.shape.rank)):
        raise ValueError(f"perm {list(perm)} is not a permutation of the "
                         f"{x.shape.rank} dims of shape {x.shape}")
    return [(TensorShape([x.shape.dims[p] for p in perm]), x.dtype)]


def _transpose_grad(op, grad):
    perm = op.attrs["perm"]
    return [transpose(grad, None if perm is None else [int(p) for p in np.argsort(perm)])]


def _transpose_emit(op, src):
    return (f"{src.name(np.transpose, 'np_transpose')}({src.array(0)}, "
            f"{src.literal(op.attrs['perm'])})")


def _transpose_lower(op, src):
    if not op.inputs[0].shape.rank:
        return None
    perm = op.attrs["perm"]
    return f"{src.value(0)}.T" if perm is None else f"{src.value(0)}.transpose({perm!r})"


_TRANSPOSE = registry.register("transpose", _transpose_kernel, _transpose_infer,
                               grad=_transpose_grad, emit=_transpose_emit, lower=_transpose_lower)


def transpose(a, perm=None, name=None):
    """Permute dimensions (reverse them when `perm` is None)."""
    x = convert_to_tensor(a)
    if perm is not None:
        perm = checked(_TRANSPOSE, _perm_attr, perm, x.shape)
    return apply(_TRANSPOSE, [x], {"perm": perm}, name)


def _perm_attr(perm, shape):
    value = constant_value(perm) if isinstance(perm, Tensor) else perm
    if value is None:
        raise TypeError("perm must be known while tracing")
    return tuple(_rank_axis(as_int(p, "perm"), shape) for p in np.ravel(value))


def _expand_dims_kernel(xp, x, axis):
    return xp.expand_dims(x, axis=axis)


def _expand_dims_infer(inputs, axis):
    x = inputs[0]
    if x.shape.rank is None:
        return [(TensorShape(None), x.dtype)]
    dims = list(x.shape.dims)
    dims.insert(axis, 1)
    return [(TensorShape(dims), x.dtype)]


def _expand_dims_emit(op, src):
    return (f"{src.name(np.expand_dims, 'np_expand_dims')}({src.array(0)}, "
            f"{src.literal(op.attrs['axis'])})")


_EXPAND_DIMS = registry.register("expand_dims", _expand_dims_kernel, _expand_dims_infer,
                                 grad=_reshape_grad, emit=_expand_dims_emit)


def expand_dims(input, axis, name=None):  # noqa: A002
    """Insert a dimension of size 1 at `axis`."""
    x = convert_to_tensor(input)
    axis = checked(_EXPAND_DIMS, _rank_axis, _static_int(axis, "axis"), x.shape, 1)
    return apply(_EXPAND_DIMS, [x], {"axis": axis}, name)


def _static_int(value, what):
    """A Python int for an argument that must be known while tracing."""
    if isinstance(value, float):
        return as_int(value, what)
    known = constant_value(value)
    if known is None:
        raise TypeError(f"{what} must be known while tracing (a Python value or a constant)")
    return as_int(np.asarray(known)[()] if np.ndim(known) == 0 else known, what)


def _squeeze_kernel(xp, x, axis):
    if axis is None:
        axis = tuple(i for i, d in enumerate(x.shape) if d == 1)
    return xp.squeeze(x, axis=axis)


def _squeeze_infer(inputs, axis):
    x = inputs[0]
    if x.shape.rank is None:
        return [(TensorShape(None), x.dtype)]
    if axis is None:
        if None in x.shape.dims:
            return [(TensorShape(None), x.dtype)]
        return [(TensorShape([d for d in x.shape.dims if d != 1]), x.dtype)]
    for a in axis:
        if x.shape.dims[a] not in (1, None):
            raise ValueError(f"squeeze: dimension {a} of shape {x.shape} is not 1")
    return [(TensorShape([d for i, d in enumerate(x.shape.dims) if i not in axis]), x.dtype)]


_SQUEEZE = registry.register("squeeze", _squeeze_kernel, _squeeze_infer, grad=_reshape_grad)


def squeeze(input, axis=None, name=None):  # noqa: A002
    """Remove dimensions of size 1 (all of them, or those in `axis`)."""
    x = convert_to_tensor(input)
    return apply(_SQUEEZE, [x], {"axis": checked(_SQUEEZE, _norm_axis, axis, x.shape)}, name)


# -- shape / size / rank ------------------------------------------------------------------

def _shape_kernel(xp, x, out_type):
    return xp.asarray(x.shape, dtype=out_type.of(xp))


def _shape_infer(inputs, out_type):
    rank = inputs[0].shape.rank
    return [(TensorShape([rank]), out_type)]


def _size_kernel(xp, x, out_type):
    return xp.asarray(math.prod(x.shape), dtype=out_type.of(xp))


def _rank_kernel(xp, x):
    return xp.asarray(x.ndim, dtype=xp.int32)


def _scalar_infer(dtype):
    def infer(inputs, out_type=None):
        return [(TensorShape([]), dtype or out_type)]
    return infer


_SHAPE = registry.register("shape", _shape_kernel, _shape_infer, fresh=True)
_SIZE = registry.register("size", _size_kernel, _scalar_infer(None), fresh=True)
_RANK = registry.register("rank", _rank_kernel, _scalar_infer(dtypes.int32), fresh=True)


def shape(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """The shape of `input` as a 1-D int tensor (a constant when known while tracing)."""
    x = convert_to_tensor(input)
    out_type = dtypes.as_dtype(out_type)
    if isinstance(x, SymbolicTensor) and x.shape.is_fully_defined():
        return constant(np.array(x.shape.as_list(), dtype=out_type.np), name=name)
    return apply(_SHAPE, [x], {"out_type": out_type}, name)


def size(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """The number of elements of `input` as a scalar int tensor."""
    x = convert_to_tensor(input)
    out_type = dtypes.as_dtype(out_type)
    if isinstance(x, SymbolicTensor) and x.shape.is_fully_defined():
        return constant(np.array(x.shape.num_elements(), dtype=out_type.np), name=name)
    return apply(_SIZE, [x], {"out_type": out_type}, name)


def rank(input, name=None):  # noqa: A002
    """The number of dimensions of `input` as a scalar int32 tensor."""
    x = convert_to_tensor(input)
    if isinstance(x, SymbolicTensor) and x.shape.rank is not None:
        return constant(np.array(x.shape.rank, dtype=np.int32), name=name)
    return apply(_RANK, [x], {}, name)


# -- concat / stack / unstack / split / tile ---------------------------------------------

def _concat_kernel(xp, *xs, axis):
    return xp.concat(list(without_empty_mismatch(xs, axis)), axis=axis)


def without_empty_mismatch(xs, axis):
    """`xs` less the arrays with nothing along `axis` whose other dims differ from the
    rest's: the empty start of a list grown in a graph loop, whose row shape was unknown
    while tracing (numpy would refuse to join them; they add nothing)."""
    if len(xs) > 1 and any(x.shape[axis] == 0 for x in xs):
        kept = [x for x in xs if x.shape[axis] != 0]
        if kept and any(x.shape != kept[0].shape[:axis] + (0,) + kept[0].shape[axis + 1:]
                        for x in xs if x.shape[axis] == 0):
            return kept
    return xs


def _concat_infer(inputs, axis):
    ranks = {t.shape.rank for t in inputs} - {None}
    if len(ranks) > 1:
        raise ValueError(f"concat: inputs have different ranks: "
                         f"{[str(t.shape) for t in inputs]}")
    dtype = inputs[0].dtype
    if not ranks:
        return [(TensorShape(None), dtype)]
    rank = ranks.pop()
    dims = [None] * rank
    total = 0
    for t in inputs:
        if t.shape.rank is None:
            total = None
            continue
        for i, d in enumerate(t.shape.dims):
            if i == axis:
                total = None if total is None or d is None else total + d
            elif d is not None:
                if dims[i] is not None and dims[i] != d:
                    raise ValueError(f"concat: dimension {i} differs between inputs: "
                                     f"{[str(t.shape) for t in inputs]}")
                dims[i] = d
    dims[axis] = total
    return [(TensorShape(dims), dtype)]


def _concat_grad(op, grad):
    """Pieces of `grad` as long as each input along the axis (split, or slices at run time)."""
    axis = op.attrs["axis"]
    sizes = [t.shape[axis] if t.shape.rank is not None else None for t in op.inputs]
    if None not in sizes:
        return split(grad, sizes, axis)
    pieces, start = [], 0
    for t, n in zip(op.inputs, sizes):
        stop = start + (n if n is not None else shape(t)[axis])
        pieces.append(grad[(slice(None),) * axis + (slice(start, stop),)])
        start = stop
    return pieces


_CONCAT = registry.register("concat", _concat_kernel, _concat_infer, grad=_concat_grad, fresh=True)


def _rank_axis(axis, shape, extra=0, known_rank=False):
    """`axis` of `shape` (plus `extra` new dims) as a non-negative int."""
    axis = _static_int(axis, "axis") if isinstance(axis, Tensor) else as_int(axis, "axis")
    rank = shape.rank
    if rank is None and known_rank:
        raise ValueError(f"needs a tensor of known rank, got shape {shape}")
    if rank is None:
        if axis < 0:
            raise ValueError(f"a negative axis ({axis}) needs a known rank")
        return axis
    if not -(rank + extra) <= axis < rank + extra:
        raise ValueError(f"axis {axis} is out of range for a tensor of shape {shape}"
                         f"{' plus a new dimension' if extra else ''}")
    return axis % (rank + extra)


def _known_shape(tensors):
    """The shape of the first tensor of known rank (for axis arguments)."""
    return next((t.shape for t in tensors if t.shape.rank is not None), TensorShape(None))


def concat(values, axis, name=None):
    """Join tensors along an existing axis."""
    tensors = convert_all(list(values))
    if not tensors:
        raise ValueError("concat needs at least one tensor")
    if len(tensors) == 1:
        return identity(tensors[0])
    axis = checked(_CONCAT, _rank_axis, axis, _known_shape(tensors))
    return apply(_CONCAT, tensors, {"axis": axis}, name)


def _stack_kernel(xp, *xs, axis):
    return xp.stack(list(xs), axis=axis)


def _stack_infer(inputs, axis):
    shape = inputs[0].shape
    for t in inputs[1:]:
        if not shape.is_compatible_with(t.shape):
            raise ValueError(f"stack: shapes differ: {[str(t.shape) for t in inputs]}")
        shape = shape.merge_with(t.shape)
    if shape.rank is None:
        return [(TensorShape(None), inputs[0].dtype)]
    dims = list(shape.dims)
    dims.insert(axis, len(inputs))
    return [(TensorShape(dims), inputs[0].dtype)]


def _stack_grad(op, grad):
    return unstack(grad, num=len(op.inputs), axis=op.attrs["axis"])


_STACK = registry.register("stack", _stack_kernel, _stack_infer, grad=_stack_grad, fresh=True)


def stack(values, axis=0, name=None):
    """Join tensors of the same shape along a new axis.

    `values` may also be a list-like object that is already stacked (it converts
    to one tensor whose first dimension indexes its elements, like the compiler's
    tensor lists grown in graph loops).
    """
    as_tensor = getattr(values, "_as_tensor", None)
    if as_tensor is not None and not isinstance(values, (list, tuple)):
        stacked = as_tensor()
        if axis == 0:
            return identity(stacked, name=name) if name else stacked
        axis = checked(_STACK, _rank_axis, axis, stacked.shape[1:], 1, True)
        rank = stacked.shape.rank
        perm = list(builtins.range(1, axis + 1)) + [0] + list(builtins.range(axis + 1, rank))
        return transpose(stacked, perm, name=name)
    tensors = convert_all(list(values))
    if not tensors:
        raise ValueError("stack needs at least one tensor")
    axis = checked(_STACK, _rank_axis, axis, _known_shape(tensors), 1)
    return apply(_STACK, tensors, {"axis": axis}, name)


def _unstack_kernel(xp, x, num, axis):
    _check_unstack(x, num, axis)
    lead = (slice(None),) * axis
    return [x[lead + (i, ...)] for i in builtins.range(num)]


def _numpy_unstack(x, num, axis):
    _check_unstack(x, num, axis)
    return [np.take(x, i, axis=axis) for i in builtins.range(num)]


def _check_unstack(x, num, axis):
    if x.shape[axis] != num:      # known only at run time when traced with an unknown dim
        raise ValueError(f"expected {num} values along dimension {axis}, got shape "
                         f"{TensorShape(x.shape)}")


def _unstack_infer(inputs, num, axis):
    x = inputs[0]
    dims = list(x.shape.dims)
    del dims[axis]
    return [(TensorShape(dims), x.dtype)] * num


def _unstack_grad(op, *grads):
    return [stack(fill_missing(op, grads), axis=op.attrs["axis"])]


_UNSTACK = registry.register("unstack", _unstack_kernel, _unstack_infer, multi=True,
                             grad=_unstack_grad, numpy=_numpy_unstack)


def unstack(value, num=None, axis=0, name=None):
    """Split a tensor into a list of tensors along `axis` (its size must be known)."""
    x = convert_to_tensor(value)
    num, axis = checked(_UNSTACK, _unstack_attrs, num, axis, x.shape)
    return apply(_UNSTACK, [x], {"num": num, "axis": axis}, name)


def _unstack_attrs(num, axis, shape):
    axis = _rank_axis(axis, shape, known_rank=True)
    n = shape[axis]
    if num is None:
        if n is None:
            raise ValueError(f"cannot infer the number of outputs from shape {shape}; "
                             f"pass num=")
        num = n
    elif n is not None and n != num:
        raise ValueError(f"num={num} but dimension {axis} of shape {shape} has size {n}")
    return num, axis


def _split_kernel(xp, x, sizes, axis):
    _check_split(sizes, axis, TensorShape(x.shape))
    lead, parts, start = (slice(None),) * axis, [], 0
    for size in sizes:
        parts.append(x[lead + (slice(start, start + size), ...)])
        start += size
    return parts


def _check_split(sizes, axis, shape):
    dim = shape[axis]
    if dim is not None and sum(sizes) != dim:
        raise ValueError(f"sizes {list(sizes)} do not add up to dimension {axis} of "
                         f"shape {shape}")


def _split_infer(inputs, sizes, axis):
    x = inputs[0]
    _check_split(sizes, axis, x.shape)
    out = []
    for s in sizes:
        d = list(x.shape.dims)
        d[axis] = s
        out.append((TensorShape(d), x.dtype))
    return out


def _split_grad(op, *grads):
    return [concat(fill_missing(op, grads), op.attrs["axis"])]


_SPLIT = registry.register("split", _split_kernel, _split_infer, multi=True, grad=_split_grad)


def split(value, num_or_size_splits, axis=0, num=None, name=None):
    """Split along `axis` into equal parts (an int) or parts of the given sizes."""
    x = convert_to_tensor(value)
    sizes, axis = checked(_SPLIT, _split_attrs, num_or_size_splits, axis, x.shape)
    return apply(_SPLIT, [x], {"sizes": sizes, "axis": axis}, name)


def _split_attrs(num_or_size_splits, axis, shape):
    axis = _rank_axis(axis, shape, known_rank=True)
    dim = shape[axis]
    if isinstance(num_or_size_splits, Tensor) and num_or_size_splits.shape.rank == 0:
        raise ValueError(f"split: num_or_size_splits must be a Python int (a number of "
                         f"parts) or a 1-D list of sizes; a rank-0 tensor is neither")
    if isinstance(num_or_size_splits, (int, np.integer, float)):
        n = as_int(num_or_size_splits, "split: the number of parts")
        if dim is None:
            raise ValueError(f"splitting into equal parts needs a known dimension "
                             f"{axis}, got shape {shape}")
        if n <= 0 or dim % n:
            raise ValueError(f"dimension {axis} of shape {shape} does not split into {n} "
                             f"equal parts")
        return (dim // n,) * n, axis
    value = (constant_value(num_or_size_splits) if isinstance(num_or_size_splits, Tensor)
             else num_or_size_splits)
    if value is None:
        raise TypeError("split: the sizes must be known while tracing")
    sizes = [as_int(v, "split: a size") for v in np.ravel(value)]
    if sizes.count(-1) == 1:
        if dim is None:
            raise ValueError(f"a -1 size needs a known dimension {axis}, got shape {shape}")
        sizes[sizes.index(-1)] = dim - (sum(sizes) + 1)
    _check_split(sizes, axis, shape)
    return tuple(sizes), axis


def _tile_kernel(xp, x, multiples):
    _check_multiples(multiples, TensorShape(x.shape))
    return xp.tile(x, multiples)


def _check_multiples(multiples, shape):
    if shape.rank is not None and len(multiples) != shape.rank:
        raise ValueError(f"multiples {list(multiples)} must have one entry per dimension "
                         f"of shape {shape}")


def _tile_infer(inputs, multiples):
    x = inputs[0]
    _check_multiples(multiples, x.shape)
    if x.shape.rank is None:
        return [(TensorShape([None] * len(multiples)), x.dtype)]
    return [(TensorShape([None if d is None else d * m for d, m in zip(x.shape.dims, multiples)]),
             x.dtype)]


def _tile_grad(op, grad):
    """Sum over the copies: `grad` reshaped to [m0, d0, m1, d1, ...], summed over the m's."""
    x, multiples = op.inputs[0], op.attrs["multiples"]
    if x.shape.is_fully_defined():
        pairs = [n for m, d in zip(multiples, x.shape.as_list()) for n in (m, d)]
    else:
        pairs = reshape(stack([constant(np.array(multiples, np.int32)), shape(x)], axis=1), [-1])
    return [reduce_sum(reshape(grad, pairs), list(builtins.range(0, 2 * len(multiples), 2)))]


_TILE = registry.register("tile", _tile_kernel, _tile_infer, grad=_tile_grad, fresh=True)


def tile(input, multiples, name=None):  # noqa: A002
    """Repeat `input` `multiples[i]` times along each dimension i."""
    x = convert_to_tensor(input)
    static, dynamic = _shape_arg(multiples)
    if static is None:
        raise TypeError("tile: multiples must be known while tracing")
    return apply(_TILE, [x], {"multiples": static}, name)


# -- gather / one_hot / where ------------------------------------------------------------

def _take(xp, params, indices, axis, batch_dims=0):
    """`_batched_take` in the array API standard, where `take` takes a 1-D index: the
    batch dimensions are folded into the gathered one ([B, A, G, R] -> [(B G), A, R])
    and each batch's indices offset into its block."""
    b = batch_dims
    batch, indices_shape = params.shape[:b], indices.shape[b:]
    moved = xp.moveaxis(params, axis, b)                    # [B, G, A, R]
    g, rest = moved.shape[b], moved.shape[b + 1:]
    n_batch = math.prod(batch)
    given = xp.reshape(indices, (n_batch, math.prod(indices_shape)))
    index = xp.where(given < 0, given + g, given)           # numpy's take: from the end too
    outside = (index < 0) | (index >= g)
    if bool(xp.any(outside)):
        bad = int(given[outside][0])
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {g}")
    offsets = xp.reshape(xp.arange(n_batch, dtype=index.dtype) * g, (n_batch, 1))
    taken = xp.take(xp.reshape(moved, (n_batch * g,) + rest),
                    xp.reshape(index + offsets, (-1,)), axis=0)
    taken = xp.reshape(taken, batch + indices_shape + rest)     # [B, I, A, R]
    n_index, n_between = len(indices_shape), axis - b
    order = (list(range(b)) + list(range(b + n_index, b + n_index + n_between))
             + list(range(b, b + n_index)) + list(range(b + n_index + n_between, taken.ndim)))
    return xp.permute_dims(taken, tuple(order))


def _gather_kernel(xp, params, indices, axis, batch_dims=0):
    return _take(xp, params, indices, axis, batch_dims)


def _numpy_gather(params, indices, axis, batch_dims=0):
    return _batched_take(params, indices, axis, batch_dims)


def _batched_take(params, indices, axis, batch_dims):
    """numpy `take` along `axis`, separately for each index of the first `batch_dims`
    dimensions (which params and indices share): [B, A, G, R] at [B, I] -> [B, A, I, R]."""
    if not batch_dims:
        return np.take(params, indices, axis=axis)
    b, n_index = batch_dims, indices.ndim - batch_dims
    moved = np.moveaxis(params, axis, b)                    # [B, G, A, R]
    grids = tuple(np.arange(d).reshape((1,) * k + (d,) + (1,) * (b - k - 1 + n_index))
                  for k, d in enumerate(params.shape[:b]))
    taken = moved[grids + (indices,)]                       # [B, I, A, R]
    n_between = axis - b
    order = (list(range(b)) + list(range(b + n_index, b + n_index + n_between))
             + list(range(b, b + n_index)) + list(range(b + n_index + n_between, taken.ndim)))
    return taken.transpose(order)


def _gather_infer(inputs, axis, batch_dims=0):
    params, indices = inputs
    if not indices.dtype.is_integer:
        raise TypeError(f"gather: indices must be integers, got {indices.dtype.name}")
    if params.shape.rank is None or indices.shape.rank is None:
        return [(TensorShape(None), params.dtype)]
    dims = params.shape.dims
    batch = TensorShape(dims[:batch_dims])
    if not batch.is_compatible_with(indices.shape.dims[:batch_dims]):
        raise ValueError(f"gather: with batch_dims={batch_dims}, params (shape "
                         f"{params.shape}) and indices (shape {indices.shape}) must agree "
                         f"on their first {batch_dims} dimensions")
    index_dims = indices.shape.dims[batch_dims:]
    return [(TensorShape(dims[:axis] + index_dims + dims[axis + 1:]), params.dtype)]


def _scatter_add(shape, positions, values):
    """Zeros of `shape` plus each of `values` at its flat position (repeats add up)."""
    size = int(np.prod(shape))
    flat = np.bincount(positions.ravel(), weights=values.ravel(), minlength=size)
    return flat.reshape(tuple(int(d) for d in shape)).astype(values.dtype)


def _positions(shape):
    return np.arange(int(np.prod(shape))).reshape(tuple(int(d) for d in shape))


_COMPARISONS = 1 << 22          # elements of one chunk's position comparison


def _standard_scatter_add(xp, shape, positions, values):
    """`_scatter_add` in the array API standard (which has no scatter): each output
    element sums the values whose position is its own, found by comparing the positions
    with a chunk of output positions at a time."""
    positions, values = xp.reshape(positions, (-1,)), xp.reshape(values, (-1,))
    size, n = math.prod(shape), positions.shape[0]
    chunk = builtins.max(1, _COMPARISONS // builtins.max(n, 1))
    zeros = xp.zeros_like(values)
    parts = []
    for start in builtins.range(0, size, chunk):
        targets = xp.arange(start, builtins.min(size, start + chunk), dtype=positions.dtype)
        hit = xp.expand_dims(targets, axis=1) == xp.expand_dims(positions, axis=0)
        parts.append(xp.sum(xp.where(hit, values, zeros), axis=1, dtype=values.dtype))
    flat = xp.concat(parts) if parts else xp.zeros((0,), dtype=values.dtype)
    return xp.reshape(flat, shape)


def _cupy_scatter_add(xp, shape, positions, values):
    """`_scatter_add` on a GPU: cupyx.scatter_add's atomic additions."""
    import cupyx
    flat = xp.zeros(math.prod(shape), dtype=values.dtype)
    cupyx.scatter_add(flat, xp.reshape(positions, (-1,)), xp.reshape(values, (-1,)))
    return xp.reshape(flat, shape)


def _standard_positions(xp, shape):
    return xp.reshape(xp.arange(math.prod(shape), dtype=xp.int64), shape)


def _on_cupy(generic):
    """A CuPy override: the generic kernel given array-api-compat's CuPy namespace."""
    def kernel(*arrays, **attrs):
        from array_api_compat import cupy as xp
        return generic(xp, *arrays, **attrs)
    return kernel


def _gather_grad_kernel(scatter):
    """gather's gradient kernel, adding the gradient up with `scatter`."""
    def kernel(xp, shape, grad, indices, axis, batch_dims=0):
        shape = int_tuple(shape)
        positions = _take(xp, _standard_positions(xp, shape), indices, axis, batch_dims)
        return scatter(xp, shape, positions, grad)
    return kernel


def _numpy_gather_grad(shape, grad, indices, axis, batch_dims=0):
    return _scatter_add(shape, _batched_take(_positions(shape), indices, axis, batch_dims),
                        grad)


def _scatter_infer(inputs, **_):
    """gather_grad and getitem_grad: inputs (shape, grad, ...) give a tensor of that shape."""
    return [(shape_tensor_infer(inputs[0]), inputs[1].dtype)]


def _gather_grad_grad(op, grad):
    return [None, gather(grad, op.inputs[2], op.attrs["axis"],
                         op.attrs.get("batch_dims", 0)), None]


_GATHER_GRAD = registry.register("gather_grad", _gather_grad_kernel(_standard_scatter_add),
                                 _scatter_infer, grad=_gather_grad_grad, fresh=True,
                                 numpy=_numpy_gather_grad,
                                 cupy=_on_cupy(_gather_grad_kernel(_cupy_scatter_add)))


def _gather_grad(op, grad):
    params, indices = op.inputs
    return [apply(_GATHER_GRAD, [shape(params), grad, indices], dict(op.attrs)), None]


_GATHER = registry.register("gather", _gather_kernel, _gather_infer, grad=_gather_grad, fresh=True,
                           numpy=_numpy_gather)


def gather(params, indices, axis=None, batch_dims=0, name=None):
    """Elements of `params` along `axis` at `indices` (numpy `take`).

    batch_dims=k: the first k dimensions of params and indices are batch dimensions,
    taken element by element (TF's gather); `axis` (at least k) defaults to k.
    """
    params = convert_to_tensor(params)
    indices = convert_to_tensor(indices)
    batch_dims = checked(_GATHER, _batch_dims, batch_dims, indices.shape)
    axis = checked(_GATHER, _rank_axis, batch_dims if axis is None else axis, params.shape)
    if axis < batch_dims:
        raise registry._build_error(_GATHER, ValueError(
            f"batch_dims ({batch_dims}) must be at most axis ({axis})"))
    attrs = {"axis": axis, "batch_dims": batch_dims} if batch_dims else {"axis": axis}
    return apply(_GATHER, [params, indices], attrs, name)


def _batch_dims(batch_dims, indices_shape):
    """`batch_dims` as a non-negative int (a negative one counts from indices' rank)."""
    batch_dims = as_int(batch_dims, "batch_dims")
    rank = indices_shape.rank
    if batch_dims < 0:
        if rank is None:
            raise ValueError("a negative batch_dims needs indices of known rank")
        batch_dims += rank
    if batch_dims < 0 or (rank is not None and batch_dims > rank):
        raise ValueError(f"batch_dims must be in [-{rank}, {rank}] for indices of shape "
                         f"{indices_shape}, got {batch_dims}")
    return batch_dims


def _one_hot_kernel(xp, indices, depth, on_value, off_value, axis, dtype):
    hot = xp.expand_dims(indices, axis=-1) == xp.arange(depth, dtype=indices.dtype)
    if axis != -1:
        hot = xp.moveaxis(hot, -1, axis)
    native = dtype.of(xp)
    return xp.where(hot, xp.asarray(python_value(on_value, dtype), dtype=native),
                    xp.asarray(python_value(off_value, dtype), dtype=native))


def python_value(value, dtype):
    """`value` as the Python number of `dtype`'s kind (what the standard's creation
    functions take for a value of that dtype)."""
    if dtype.is_bool:
        return bool(value)
    if dtype.is_integer:
        return int(value)
    return complex(value) if dtype.is_complex else float(value)


def _one_hot_infer(inputs, depth, on_value, off_value, axis, dtype):
    shape = inputs[0].shape
    if shape.rank is None:
        return [(TensorShape(None), dtype)]
    dims = list(shape.dims)
    dims.insert(len(dims) if axis == -1 else axis, depth)
    return [(TensorShape(dims), dtype)]


_ONE_HOT = registry.register("one_hot", _one_hot_kernel, _one_hot_infer, fresh=True)


def one_hot(indices, depth, on_value=None, off_value=None, axis=-1, dtype=None, name=None):
    """One-hot vectors of length `depth` (indices out of range give all `off_value`).

    The dtype is `dtype`, else that of `on_value`/`off_value` when given, else float32.
    """
    indices = convert_to_tensor(indices)
    if not indices.dtype.is_integer:
        raise TypeError(f"one_hot: indices must be integers, got {indices.dtype.name}")
    given = [v for v in (on_value, off_value) if v is not None]
    if dtype is None:
        dtype = result_dtype(given) if given else dtypes.float32
    dtype = dtypes.as_dtype(dtype)
    on = 1 if on_value is None else static_scalar(on_value, "on_value")
    off = 0 if off_value is None else static_scalar(off_value, "off_value")
    depth = _static_int(depth, "depth")
    if depth < 0:
        raise ValueError(f"one_hot: depth must be >= 0, got {depth}")
    axis = checked(_ONE_HOT, _rank_axis, axis, indices.shape, 1) if axis != -1 else -1
    return apply(_ONE_HOT, [indices], {"depth": depth, "on_value": on, "off_value": off,
                                       "axis": axis, "dtype": dtype}, name)


def static_scalar(value, what):
    """A Python scalar for an argument that must be known while tracing."""
    v = constant_value(value)
    if v is None:
        raise TypeError(f"{what} must be known while tracing (a Python value or a constant)")
    return v.item()


def _where_kernel(xp, cond, x, y):
    return xp.where(cond, x, y)


def _where_infer(inputs):
    cond, x, y = inputs
    if not cond.dtype.is_bool:
        raise TypeError(f"where: the condition must be bool, got {cond.dtype.name}")
    if x.dtype != y.dtype:
        raise TypeError(f"where: x and y have different dtypes {x.dtype.name} and "
                        f"{y.dtype.name}")
    return [(broadcast(broadcast(cond.shape, x.shape), y.shape), x.dtype)]


def _where_grad(op, grad):
    cond, x, y = op.inputs
    return [None, unbroadcast(_select(cond, grad), x),
            unbroadcast(_select(logical_not(cond), grad), y)]


_WHERE = registry.register("where", _where_kernel, _where_infer, grad=_where_grad,
                           elementwise=True, fresh=True, lower="{1} if {0} else {2}")


def _argwhere_kernel(xp, cond):
    if cond.ndim == 0:
        return xp.zeros((int(bool(cond)), 0), dtype=xp.int64)
    return xp.stack([xp.astype(i, xp.int64) for i in xp.nonzero(cond)], axis=1)


def _numpy_argwhere(cond):
    return np.argwhere(cond).astype(np.int64)


def _argwhere_infer(inputs):
    rank = inputs[0].shape.rank
    return [(TensorShape([None, rank]), dtypes.int64)]


_ARGWHERE = registry.register("argwhere", _argwhere_kernel, _argwhere_infer, fresh=True,
                              numpy=_numpy_argwhere)


def where(condition, x=None, y=None, name=None):
    """Elementwise choice `x if condition else y`; with one argument, true coordinates."""
    condition = convert_to_tensor(condition)
    if x is None and y is None:
        return apply(_ARGWHERE, [condition], {}, name)
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    x, y = convert_all([x, y])
    return apply_checked(_WHERE, [condition, x, y], {}, name)


# -- constructors --------------------------------------------------------------------------

def _fill_kernel(xp, *dynamic, shape=None, value, dtype):
    return xp.full(int_tuple(dynamic[0]) if dynamic else shape, python_value(value, dtype),
                   dtype=dtype.of(xp))


def _fill_infer(inputs, shape=None, value=None, dtype=None):
    if shape is None:
        return [(_dynamic_shape_infer(inputs[0]), dtype)]
    return [(TensorShape(shape), dtype)]


_FILL = registry.register("fill", _fill_kernel, _fill_infer, fresh=True)


def _filled(shape, value, dtype, name):
    static, dynamic = _shape_arg(shape)
    attrs = {"value": value, "dtype": dtype}
    if static is not None:
        if builtins.any(d < 0 for d in static):
            raise ValueError(f"A shape cannot have negative dimensions: {list(static)}")
        attrs["shape"] = static
        return apply(_FILL, [], attrs, name)
    return apply(_FILL, [dynamic], attrs, name)


def zeros(shape, dtype=dtypes.float32, name=None):
    """A tensor of zeros."""
    return _filled(shape, 0, dtypes.as_dtype(dtype), name)


def ones(shape, dtype=dtypes.float32, name=None):
    """A tensor of ones."""
    return _filled(shape, 1, dtypes.as_dtype(dtype), name)


def fill(dims, value, name=None):
    """A tensor of shape `dims` filled with the scalar `value`."""
    if not isinstance(value, (Tensor, bool, int, float, complex, np.ndarray, np.generic)):
        value = convert_to_tensor(value)          # a Variable, a nested list
    if isinstance(value, Tensor):
        v = constant_value(value)
        if v is None:
            t = convert_to_tensor(value)
            return _broadcast_to(t, dims, name)
        return _filled(dims, v.item(), value.dtype, name)
    dtype = registry._infer_python_dtype(value) if not isinstance(
        value, (np.ndarray, np.generic)) else dtypes.as_dtype(np.asarray(value).dtype)
    return _filled(dims, value, dtype, name)


def _broadcast_to_kernel(xp, x, *dynamic, shape=None):
    return xp.asarray(xp.broadcast_to(x, int_tuple(dynamic[0]) if dynamic else shape),
                      copy=True)


def _broadcast_to_infer(inputs, shape=None):
    x = inputs[0]
    target = _dynamic_shape_infer(inputs[1]) if shape is None else TensorShape(shape)
    if not broadcast(x.shape, target).is_compatible_with(target):
        raise ValueError(f"cannot broadcast a tensor of shape {x.shape} to shape {target}")
    return [(target, x.dtype)]


def _broadcast_to_grad(op, grad):
    return [unbroadcast(grad, op.inputs[0])] + [None] * (len(op.inputs) - 1)


_BROADCAST_TO = registry.register("broadcast_to", _broadcast_to_kernel, _broadcast_to_infer,
                                  grad=_broadcast_to_grad, fresh=True)


def _broadcast_to(t, shape, name=None):
    static, dynamic = _shape_arg(shape)
    if static is not None:
        return apply(_BROADCAST_TO, [t], {"shape": static}, name)
    return apply(_BROADCAST_TO, [t, dynamic], {}, name)


def broadcast_to(input, shape, name=None):  # noqa: A002
    """`input` broadcast to `shape` (numpy rules)."""
    return _broadcast_to(convert_to_tensor(input), shape, name)


def zeros_like(input, dtype=None, name=None):  # noqa: A002
    """Zeros of the shape (and dtype, unless given) of `input`."""
    return _filled_like(input, 0, dtype, name)


def ones_like(input, dtype=None, name=None):  # noqa: A002
    """Ones of the shape (and dtype, unless given) of `input`."""
    return _filled_like(input, 1, dtype, name)


def _like_kernel(xp, x, value, dtype):
    return xp.full(x.shape, python_value(value, dtype), dtype=dtype.of(xp))


def _like_infer(inputs, value, dtype):
    return [(inputs[0].shape, dtype)]


_FILL_LIKE = registry.register("fill_like", _like_kernel, _like_infer, grad=no_gradient, fresh=True)


def _filled_like(input, value, dtype, name):  # noqa: A002
    x = convert_to_tensor(input)
    dtype = x.dtype if dtype is None else dtypes.as_dtype(dtype)
    if x.shape.is_fully_defined() and isinstance(x, SymbolicTensor):
        return _filled(x.shape.as_list(), value, dtype, name)
    return apply(_FILL_LIKE, [x], {"value": value, "dtype": dtype}, name)


def _range_kernel(xp, start, limit, delta, dtype):
    start, limit, delta = (float(v) if xp.isdtype(v.dtype, "real floating") else int(v)
                           for v in (start, limit, delta))
    if delta == 0:
        raise ValueError("range: delta must not be zero")
    return xp.arange(start, limit, delta, dtype=dtype.of(xp))


def _numpy_range(start, limit, delta, dtype):
    if delta == 0:
        raise ValueError("range: delta must not be zero")
    return np.arange(start, limit, delta, dtype=dtype.np)


def _range_infer(inputs, dtype):
    values = [constant_value(t) for t in inputs]
    if builtins.all(v is not None for v in values):
        return [(TensorShape([_range_length(*values)]), dtype)]
    return [(TensorShape([None]), dtype)]


def _range_length(start, limit, delta):
    """len(np.arange(start, limit, delta)), computed as numpy does, without the array."""
    with np.errstate(all="ignore"):
        return builtins.max(0, int(np.ceil((limit - start) / delta)))


_RANGE = registry.register("range", _range_kernel, _range_infer, grad=no_gradient, fresh=True,
                           numpy=_numpy_range)


def range(start, limit=None, delta=1, dtype=None, name=None):  # noqa: A001
    """Like Python's range (also for floats): [start, limit) in steps of `delta`."""
    if limit is None:
        start, limit = 0, start
    start, limit, delta = convert_all([start, limit, delta])
    out_dtype = dtypes.as_dtype(dtype) if dtype is not None else start.dtype
    if registry.constant_value(delta) is not None and not np.all(constant_value(delta)):
        raise ValueError("range: delta must not be zero")
    return apply(_RANGE, [start, limit, delta], {"dtype": out_dtype}, name)


# -- identity ----------------------------------------------------------------------------

def _identity_kernel(xp, x):
    return x


def _same_infer(inputs, **_):
    return [(inputs[0].shape, inputs[0].dtype)]


def _identity_grad(op, grad):
    return [grad]


def _identity_emit(op, src):
    return src.array(0)


def _identity_lower(op, src):
    return src.value(0)


_IDENTITY = registry.register("identity", _identity_kernel, _same_infer, grad=_identity_grad,
                              weak_result=registry.same_weak_result, emit=_identity_emit,
                              lower=_identity_lower)
_STOP_GRADIENT = registry.register("stop_gradient", _identity_kernel, _same_infer,
                                   grad=no_gradient, emit=_identity_emit, lower=_identity_lower)


def identity(input, name=None):  # noqa: A002
    """The same value (a new graph node inside a graph)."""
    return apply(_IDENTITY, [convert_to_tensor(input)], {}, name)


def stop_gradient(input, name=None):  # noqa: A002
    """The same value, through which no gradient flows."""
    return apply(_STOP_GRADIENT, [convert_to_tensor(input)], {}, name)


# -- copy: a value moved to another device (made by the placement pass) -------------------

def _copy_kernel(xp, x, to):
    return devices.get(to).put(x)


def _host_copy_kernel(x, to):
    return devices.to_host(x)


COPY = registry.register("copy", _copy_kernel, _same_infer, grad=_identity_grad,
                         numpy=_host_copy_kernel)


# -- indexing: t[...] --------------------------------------------------------------------

def _index_from_spec(spec, dynamic):
    out = []
    for item in spec:
        kind = item[0]
        if kind == "i":
            out.append(item[1])
        elif kind == "t":
            out.append(dynamic[item[1]])
        elif kind == "s":
            out.append(slice(*(int(dynamic[v[1]]) if isinstance(v, tuple) else v
                               for v in item[1:])))
        elif kind == "n":
            out.append(None)
        else:
            out.append(Ellipsis)
    return tuple(out)


def _getitem_kernel(xp, x, *dynamic, spec):
    index = _basic_index(_index_from_spec(spec, dynamic), x.shape)
    if index is not None:
        return x[index]
    positions = _host_positions(spec, dynamic, x.shape)
    taken = xp.take(xp.reshape(x, (-1,)), xp.asarray(np.ravel(positions)), axis=0)
    return xp.reshape(taken, positions.shape)


def _host_positions(spec, dynamic, shape):
    """The flat positions numpy's indexing of an array of `shape` selects (advanced
    indexing, which the standard covers only in part, done on the host's positions)."""
    index = _index_from_spec(spec, [devices.to_host(d) for d in dynamic])
    return np.asarray(_positions(shape)[index])


def _basic_index(index, shape):
    """`index` in the standard's terms (ints, in-bounds slices, None, one ellipsis, which
    it needs where numpy indexes the dims left out whole), or None when it holds an array."""
    index = tuple(int(k) if _is_scalar_index(k) else k for k in index)
    if any(not (k is None or k is Ellipsis or isinstance(k, (int, slice))) for k in index):
        return None
    consumed = sum(1 for k in index if isinstance(k, (int, slice)))
    out, dim = [], 0
    for k in index:
        if k is Ellipsis:
            dim += len(shape) - consumed
        elif isinstance(k, slice):
            k = _bounded(k, shape[dim])
            dim += 1
        elif k is not None:
            dim += 1
        out.append(k)
    return tuple(out) if Ellipsis in out else tuple(out) + (Ellipsis,)


def _is_scalar_index(k):
    return hasattr(k, "shape") and not isinstance(k, slice) and len(k.shape) == 0 and \
        devices.dtype_of(k).is_integer


def _bounded(k, size):
    """Slice `k` of a dimension of `size` with its bounds inside it (numpy clips them; the
    standard leaves bounds outside unspecified)."""
    start, stop, step = k.indices(size)
    if not len(builtins.range(start, stop, step)):
        return slice(0, 0, 1)
    return slice(start, None if stop < 0 or stop >= size else stop, step)


def _numpy_getitem(x, *dynamic, spec):
    return np.asarray(x[_index_from_spec(spec, dynamic)])


def _getitem_infer(inputs, spec):
    """numpy's indexing rule on static shapes.

    Once an index is an array (an int tensor of rank >= 1, or a bool mask), integer
    indices are array indices too: their dims are replaced by the broadcast shape of
    all array indices, in place when they are adjacent, else in front.
    """
    x, dynamic = inputs[0], inputs[1:]
    tensors = {i: dynamic[item[1]] for i, item in enumerate(spec) if item[0] == "t"}
    for t in tensors.values():
        if not (t.dtype.is_integer or t.dtype.is_bool):
            raise TypeError(f"Tensor indices must be integers, got {t.dtype.name}")
    if x.shape.rank is None or builtins.any(t.shape.rank is None for t in tensors.values()):
        return [(TensorShape(None), x.dtype)]
    has_array = builtins.any(t.dtype.is_bool or t.shape.rank for t in tensors.values())
    advanced = [i for i, item in enumerate(spec)
                if i in tensors or (has_array and item[0] == "i")]

    def width(i):          # how many dims of x the i-th index consumes
        t = tensors.get(i)
        if t is not None and t.dtype.is_bool:
            return t.shape.rank
        return 1 if spec[i][0] in "its" else 0

    dims = list(x.shape.dims)
    consumed = builtins.sum(width(i) for i in builtins.range(len(spec)))
    if consumed > len(dims):
        raise IndexError(f"too many indices ({consumed}) for a tensor of shape {x.shape}")
    index_shape = TensorShape([])
    for i in advanced:
        t = tensors.get(i)
        part = TensorShape([] if t is None else [None] if t.dtype.is_bool else t.shape)
        try:
            index_shape = broadcast(index_shape, part)
        except ValueError:
            raise IndexError(f"index arrays do not broadcast together: {index_shape} and "
                             f"{part}") from None
    in_place = advanced == list(builtins.range(advanced[0], advanced[-1] + 1)) \
        if advanced else True
    out, pos = [], 0
    for i, item in enumerate(spec):
        kind, n = item[0], width(i)
        if kind == "e":
            n = len(dims) - consumed
            out.extend(dims[pos:pos + n])
        elif kind == "n":
            out.append(1)
        elif kind == "s":
            out.append(_slice_length(item[1:], dims[pos]))
        elif kind == "i":
            d = dims[pos]
            if d is not None and not -d <= item[1] < d:
                raise IndexError(f"index {item[1]} is out of bounds for dimension {pos} "
                                 f"with size {d} (shape {x.shape})")
        elif tensors[i].dtype.is_bool and not tensors[i].shape.is_compatible_with(
                dims[pos:pos + n]):
            raise IndexError(f"a boolean index of shape {tensors[i].shape} does not match "
                             f"dimensions {pos}.. of shape {x.shape}")
        if advanced and in_place and i == advanced[0]:
            out.extend(index_shape.dims)
        pos += n
    out.extend(dims[pos:])
    if not in_place:
        out = list(index_shape.dims) + out
    return [(TensorShape(out), x.dtype)]


def _slice_length(parts, dim):
    """The length of dimension `dim` sliced by (start, stop, step), None when unknown."""
    if dim is None or builtins.any(isinstance(v, tuple) for v in parts):
        return None
    return len(builtins.range(*slice(*parts).indices(dim)))


def _getitem_grad_kernel(scatter):
    """getitem's gradient kernel, adding the gradient up with `scatter`."""
    def kernel(xp, shape, grad, *dynamic, spec):
        shape = int_tuple(shape)
        positions = xp.asarray(np.ravel(_host_positions(spec, dynamic, shape)))
        return scatter(xp, shape, positions, grad)
    return kernel


def _numpy_getitem_grad(shape, grad, *dynamic, spec):
    positions = np.asarray(_positions(shape)[_index_from_spec(spec, dynamic)])
    return _scatter_add(shape, positions, grad)


def _getitem_grad_grad(op, grad):
    dynamic = list(op.inputs[2:])
    return [None, apply(_GETITEM, [grad] + dynamic, dict(op.attrs))] + [None] * len(dynamic)


_GETITEM_GRAD = registry.register("getitem_grad", _getitem_grad_kernel(_standard_scatter_add),
                                  _scatter_infer, grad=_getitem_grad_grad, fresh=True,
                                  numpy=_numpy_getitem_grad,
                                  cupy=_on_cupy(_getitem_grad_kernel(_cupy_scatter_add)))


def _getitem_grad(op, grad):
    """`grad` added into zeros shaped like the input, at the indexed positions."""
    dynamic = list(op.inputs[1:])
    return [apply(_GETITEM_GRAD, [shape(op.inputs[0]), grad] + dynamic, dict(op.attrs))] + \
        [None] * len(dynamic)


def _getitem_emit(op, src):
    """`_nd(x[(index,)])`: numpy's own indexing, written out."""
    parts = []
    for item in op.attrs["spec"]:
        kind = item[0]
        if kind == "i":
            parts.append(repr(int(item[1])))
        elif kind == "t":
            parts.append(src.scalar(1 + item[1]))
        elif kind == "s":
            bounds = [f"{src.scalar(1 + v[1])}.item()" if isinstance(v, tuple) else repr(v)
                      for v in item[1:]]
            parts.append(f"slice({', '.join(bounds)})")
        elif kind == "n":
            parts.append("None")
        else:
            parts.append("...")
    x = src.scalar(0)
    if op.inputs[0].shape.rank in (None, 0):
        x = f"_nd({x})"
    return f"_nd({x}[({', '.join(parts)}{',' if parts else ''})])"


def _getitem_lower(op, src):
    """Static ints and slices, and rank-0 int tensors (bounds checked: a fault)."""
    x = op.inputs[0]
    if not x.shape.rank or x.shape.rank < sum(1 for item in op.attrs["spec"] if item[0] in "its"):
        return None
    parts = []
    for axis, item in enumerate(op.attrs["spec"]):
        kind = item[0]
        if kind == "i":
            parts.append(repr(int(item[1])))
        elif kind == "s" and not any(isinstance(v, tuple) for v in item[1:]):
            parts.append(":".join("" if v is None else repr(v) for v in item[1:]))
        elif kind == "t" and op.inputs[1 + item[1]].shape.rank == 0 and \
                op.inputs[1 + item[1]].dtype.is_integer:
            parts.append(src.checked_index(src.value(1 + item[1]), src.value(0), axis))
        else:
            return None
    return f"{src.value(0)}[{', '.join(parts)}{',' if len(parts) == 1 else ''}]"


_GETITEM = registry.register("getitem", _getitem_kernel, _getitem_infer, grad=_getitem_grad,
                             emit=_getitem_emit, lower=_getitem_lower, numpy=_numpy_getitem)


def getitem(tensor, key):
    """numpy basic indexing (ints, slices, None, ...), plus integer tensor indices."""
    x = convert_to_tensor(tensor)
    if not isinstance(key, tuple):
        key = (key,)
    spec, dynamic = [], []

    def dyn(value):
        t = convert_to_tensor(value)
        dynamic.append(t)
        return ("t", len(dynamic) - 1)

    def bound(v):
        if v is None or isinstance(v, (int, np.integer)):
            return None if v is None else int(v)
        value = constant_value(v) if isinstance(v, Tensor) else None
        if value is not None and value.ndim == 0:
            return int(value)
        return dyn(v)

    for k in key:
        if k is None:
            spec.append(("n",))
        elif k is Ellipsis:
            spec.append(("e",))
        elif isinstance(k, (bool, np.bool_)):
            raise TypeError("Boolean scalars are not valid tensor indices")
        elif isinstance(k, (int, np.integer)):
            spec.append(("i", int(k)))
        elif isinstance(k, slice):
            spec.append(("s", bound(k.start), bound(k.stop), bound(k.step)))
        elif isinstance(k, (Tensor, list, np.ndarray)):
            value = constant_value(k) if isinstance(k, Tensor) else None
            if value is not None and value.ndim == 0 and value.dtype.kind in "iu":
                spec.append(("i", int(value)))
            else:
                spec.append(dyn(k))
        else:
            k2 = getattr(k, "_as_tensor", None)
            if k2 is None:
                raise TypeError(f"Invalid tensor index {k!r} of type {type(k).__name__}")
            spec.append(dyn(k2()))
    if builtins.sum(1 for s in spec if s[0] == "e") > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    return apply(_GETITEM, [x] + dynamic, {"spec": tuple(spec)})

