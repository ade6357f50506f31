"""Weight quantization: the weights of matmuls stored as int8 (or float16), and the fold
of their dequantization into the product.

`quantize_weights(graph, mode, ...)` (what `rt.quantize.weights` runs; it changes values by
the rounding of the weights, so it runs only when asked) replaces each weight, a float32
constant or variable read of at least `min_elements` elements that only matmuls read, by
its quantized form (matmul is the runtime's one op with weights; it has no convolution).
int8: symmetric, `q = round(w / scale)` in [-127, 127], one scale per output channel (each
column of `w` in `x @ w` makes one column of the product) or one for the whole tensor;
float16: the weight in float16, cast back to float32.

    graph f(x: f32[?,64]) {
      w: f32[64,256] = read_variable[var=w]()
      y: f32[?,256] = matmul(x, w)
      return y
    }
  ==>
    graph f(x: f32[?,64]) {
      w_q: i8[64,256] = const[value=<int8[64, 256]>]()
      w_scale: f32[256] = const[value=<float32[256]>]()
      w_dq: f32[64,256] = dequantize[axis=1](w_q, w_scale)
      y: f32[?,256] = matmul(x, w_dq)
      return y
    }

`run(graph)` (the `quantize` pass of `runtime.passes`, on by default) folds the scale out
of the product, `matmul(x, dequantize(q, s)) -> matmul(x, cast(q)) * s`: a scale per output
column (or one number) commutes with the product, so the results are those of the graph as
written up to float32 rounding. Constant folding then turns `cast(q)` into a float32
constant when it is small enough (`constant_folding.MAX_BYTES`); a larger one stays int8,
cast when the graph runs.

      y: f32[?,256] = matmul(x, w_dq)
  ==>
      w_dq_cast: f32[64,256] = cast[dtype=float32](w_q)
      y_1: f32[?,256] = matmul(x, w_dq_cast)
      y_2: f32[?,256] = multiply(y_1, w_scale)
"""
import numpy as np

from .. import dtypes
from ..ops import registry
from ..tensor import SymbolicTensor
from . import each_graph, graphs_in

__all__ = ["run", "quantize_weights", "MODES", "channel_axis", "int8_weights"]

MODES = ("int8", "float16")
_NOT_A_WEIGHT = "not a weight"


def channel_axis(op, index):
    """The axis of input `index` of `op` that output channels run along, when `op` is a
    matmul reading a weight there (None: one scale for the whole weight); else _NOT_A_WEIGHT."""
    if op.type != "matmul" or op.control_inputs:
        return _NOT_A_WEIGHT
    rank = op.inputs[index].shape.rank
    if rank is None:
        return _NOT_A_WEIGHT
    if rank < 2:
        return None
    transposed = op.attrs.get("transpose_a" if index == 0 else "transpose_b", False)
    columns = index == 1 and not transposed or index == 0 and transposed
    return rank - 1 if columns else rank - 2


# -- the rewrite rt.quantize.weights asks for ---------------------------------------------------

def quantize_weights(graph, mode, per_channel=True, min_elements=1024):
    """Quantize the weights of `graph` and its sub-graphs in place (see the module doc);
    returns [(weight op name, shape, axis or None)] of those quantized."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    written = {op.attrs["var"] for g in graphs_in(graph) for op in g.ops
               if op.opdef.effect == "write"}
    done, made = [], set()
    for g in list(graphs_in(graph)):
        for weight, axis in _weights(g, min_elements, written).items():
            axis = axis if per_channel and mode == "int8" else None
            new = _replace(g, weight, mode, axis)
            if new is not None:
                made.add(new)
                done.append((weight.op.name, tuple(weight.shape.dims), axis))
    _drop_hidden(graph, made)
    for g in graphs_in(graph):
        for op in g.ops:
            op._effects = None          # variable reads are gone: effects change
        g._changed()
    return done


def _weights(graph, min_elements, written):
    """{weight tensor: its channel axis} of `graph`: float32 constants and reads of variables
    nothing writes, of at least `min_elements` elements, read only by matmuls that agree on
    the channel axis (and not returned: the function would return its rounding)."""
    readers = {}
    for op in graph.ops:
        for i, t in enumerate(op.inputs):
            readers.setdefault(t, []).append(channel_axis(op, i))
    returned = set(graph.visible_outputs)
    found = {}
    for op in graph.ops:
        if op.type not in ("const", "read_variable") or len(op.outputs) != 1:
            continue
        if op.type == "read_variable" and op.attrs["var"] in written:
            continue
        t = op.outputs[0]
        axes = set(readers.get(t, [_NOT_A_WEIGHT]))
        if (t.dtype == dtypes.float32 and t.shape.is_fully_defined()
                and t.shape.num_elements() >= min_elements and t not in returned
                and len(axes) == 1 and _NOT_A_WEIGHT not in axes):
            found[t] = axes.pop()
    return found


def _value(weight):
    op = weight.op
    value = op.attrs["value"] if op.type == "const" else op.attrs["var"].numpy()
    return np.asarray(value, np.float32)


def int8_weights(w, axis):
    """(q int8, scale float32) with w ~= q * scale: symmetric, one scale per index of `axis`
    (one in all when `axis` is None), each the largest |w| it covers over 127."""
    others = tuple(i for i in range(w.ndim) if i != axis) if axis is not None else None
    largest = np.max(np.abs(w), axis=others)
    scale = np.where(largest > 0, largest / 127, 1).astype(np.float32)
    view = scale if axis is None else scale.reshape(
        [-1 if i == axis else 1 for i in range(w.ndim)])
    q = np.clip(np.rint(w / view), -127, 127).astype(np.int8)
    return q, scale


def _replace(graph, weight, mode, axis):
    """Put the quantized form of `weight` in its place and return it; None when its value
    cannot be quantized (inf or nan; float16: beyond its range)."""
    w = _value(weight)
    if not np.all(np.isfinite(w)) or mode == "float16" and np.max(
            np.abs(w), initial=0) > np.finfo(np.float16).max:
        return None
    source = weight.op
    at = graph.ops.index(source) + 1

    def insert(opdef, inputs, attrs, suffix):
        nonlocal at
        op = graph.insert_op(at, opdef, inputs, attrs, opdef.infer(inputs, **attrs),
                             f"{source.name}_{suffix}", source.origin, device=source.device)
        at += 1
        return op

    const = registry.get("const")
    if mode == "int8":
        q, scale = int8_weights(w, axis)
        q_t = insert(const, [], {"value": q}, "q").outputs[0]
        s_t = insert(const, [], {"value": scale}, "scale").outputs[0]
        attrs = {} if axis is None else {"axis": axis}
        new = insert(registry.get("dequantize"), [q_t, s_t], attrs, "dq")
    else:
        half = insert(const, [], {"value": w.astype(np.float16)}, "f16").outputs[0]
        new = insert(registry.get("cast"), [half], {"dtype": dtypes.float32}, "cast")
    graph.replace_op(source, new)
    graph.remove_ops([source])
    return new.outputs[0]


def _drop_hidden(graph, made):
    """Take the quantized weights `made` out of the hidden outputs of `graph` and of the
    functions it calls: those keep variable reads for gradients, and a quantized weight is
    a constant, which a gradient recomputes. A call's outputs follow its function's."""
    kept = {}                                 # function graph -> positions of outputs kept
    for g in list(graphs_in(graph)):          # callees first
        for op in g.ops:
            if op.type == "call" and op.attrs["f"] in kept:
                _renumber(g, op, kept[op.attrs["f"]], made)
        if g.n_visible is None:
            continue
        positions = [i for i, t in enumerate(g.outputs) if i < g.n_visible or t not in made]
        if len(positions) < len(g.outputs):
            kept[g] = positions
            g.outputs = [g.outputs[i] for i in positions]
            g.n_visible = None if len(g.outputs) == g.n_visible else g.n_visible
            g._changed()


def _renumber(graph, call, positions, made):
    """The outputs of `call` at `positions` only (its function dropped the others, which
    are added to `made`: the caller's hidden outputs drop them in turn)."""
    old = call.outputs
    call.outputs = tuple(old[i] if i == j else SymbolicTensor(call, j, old[i].shape, old[i].dtype)
                         for j, i in enumerate(positions))
    graph.replace_uses({old[i]: call.outputs[j] for j, i in enumerate(positions) if i != j})
    made.update(t for i, t in enumerate(old) if i not in set(positions))


# -- the fold (a default pass) -------------------------------------------------------------------

def run(graph):
    return each_graph(graph, _fold_graph)


def _fold_graph(graph):
    changed = False
    for op in list(graph.ops):
        if op.type == "matmul":
            changed = _fold(graph, op) or changed
    return changed


def _foldable(op, index):
    """The dequantize op feeding input `index` of matmul `op`, when its scale commutes with
    the product (it is per output channel, or one number)."""
    dq = op.inputs[index].op
    if dq.type != "dequantize" or dq.control_inputs or op.outputs[0].dtype != dq.outputs[0].dtype:
        return None
    axis = dq.attrs.get("axis")
    return dq if axis is None or axis == channel_axis(op, index) else None


def _fold(graph, op):
    found = [(i, _foldable(op, i)) for i in (0, 1)]
    found = [(i, dq) for i, dq in found if dq is not None]
    if not found:
        return False
    at = graph.ops.index(op)

    def insert(opdef, inputs, attrs, name):
        nonlocal at
        new = graph.insert_op(at, opdef, inputs, attrs, opdef.infer(inputs, **attrs), name,
                              op.origin, device=op.device)
        new.original = op.original or op
        at += 1
        return new.outputs[0]

    inputs, scales = list(op.inputs), []
    for i, dq in found:
        q, scale = dq.inputs
        inputs[i] = insert(registry.get("cast"), [q], {"dtype": scale.dtype}, f"{dq.name}_cast")
        if i == 0 and dq.attrs.get("axis") is not None and op.inputs[1].shape.rank != 1:
            scale = insert(registry.get("reshape"), [scale], {"shape": (-1, 1)},
                           f"{scale.op.name}_column")      # rows of the product
        scales.append(scale)
    product = insert(op.opdef, inputs, dict(op.attrs), op.name)
    for scale in scales:
        product = insert(registry.get("multiply"), [product, scale], {}, op.name)
    graph.replace_op(op, product.op)
    graph.remove_ops([op])
    return True
