"""How each runtime op is written in standard ONNX operators (opset 17).

A converter is `fn(emitter, op, input_names) -> output name(s)`; it emits nodes with
`emitter.node(onnx_type, inputs, **attrs)`, constants with `emitter.const(array)`.
`UNSUPPORTED_CASES` names, per op, the attribute cases that have no translation.
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from .. import dtypes

OPSET = 17
_MAX = np.iinfo(np.int64).max


def _same(onnx_type):
    """An op whose inputs are cast to the output dtype first (divide: ints -> float)."""
    def convert(em, op, ins):
        out = op.outputs[0].dtype
        ins = [em.cast(n, out) if t.dtype != out else n for n, t in zip(ins, op.inputs)]
        return em.node(onnx_type, ins, name=op.name)
    return convert


def _plain(onnx_type):
    return lambda em, op, ins: em.node(onnx_type, ins, name=op.name)


def _negated(onnx_type):
    return lambda em, op, ins: em.node("Not", [em.node(onnx_type, ins, name=op.name)],
                                       name=op.name)


def _chain(*onnx_types):
    """Unary ops applied one after the other."""
    def convert(em, op, ins):
        x = ins[0]
        for t in onnx_types:
            x = em.node(t, [x], name=op.name)
        return x
    return convert


def _scalar(em, value, dtype, name):
    return em.const(np.asarray(value, dtype=dtype.np), name)


def _floordiv(em, op, ins):
    a, b = ins
    if op.outputs[0].dtype.is_floating:
        return em.node("Floor", [em.node("Div", [a, b], name=op.name)], name=op.name)
    rem = em.node("Mod", [a, b], name=op.name, fmod=0)        # Python's sign rule
    return em.node("Div", [em.node("Sub", [a, rem], name=op.name), b], name=op.name)


def _mod(em, op, ins):
    a, b = ins
    if not op.outputs[0].dtype.is_floating:
        return em.node("Mod", [a, b], name=op.name, fmod=0)
    quotient = em.node("Floor", [em.node("Div", [a, b], name=op.name)], name=op.name)
    return em.node("Sub", [a, em.node("Mul", [quotient, b], name=op.name)], name=op.name)


def _square(em, op, ins):
    return em.node("Mul", [ins[0], ins[0]], name=op.name)


def _squared_difference(em, op, ins):
    d = em.node("Sub", ins, name=op.name)
    return em.node("Mul", [d, d], name=op.name)


def _log1p(em, op, ins):
    one = _scalar(em, 1, op.inputs[0].dtype, f"{op.name}_one")
    return em.node("Log", [em.node("Add", [ins[0], one], name=op.name)], name=op.name)


def _is_finite(em, op, ins):
    bad = em.node("Or", [em.node("IsNaN", ins, name=op.name),
                         em.node("IsInf", ins, name=op.name)], name=op.name)
    return em.node("Not", [bad], name=op.name)


def _clip(em, op, ins):
    x, lo, hi = ins
    return em.node("Max", [em.node("Min", [x, hi], name=op.name), lo], name=op.name)


def _add_n(em, op, ins):
    total = ins[0]
    for x in ins[1:]:
        total = em.node("Add", [total, x], name=op.name)
    return total if len(ins) > 1 else em.node("Identity", ins, name=op.name)


def _cast(em, op, ins):
    return em.cast(ins[0], op.attrs["dtype"])


# -- reductions --------------------------------------------------------------------------------

def _axes(axis):
    return None if axis is None else [axis] if isinstance(axis, int) else list(axis)


def _reduction(onnx_type, via=None):
    """Reduce over `axis`; `via`: a dtype to compute in (bools: any/all as int max/min)."""
    def convert(em, op, ins):
        out = op.outputs[0].dtype
        x = ins[0]
        work = via or out
        if op.inputs[0].dtype != work:
            x = em.cast(x, work)
        axes = _axes(op.attrs["axis"])
        keep = int(op.attrs["keepdims"])
        if axes == []:                                # numpy: no axes, no reduction
            y = em.node("Identity", [x], name=op.name)
        elif onnx_type == "ReduceSum":                # opset 13+: axes is an input
            y = em.node("ReduceSum", [x] + ([] if axes is None else [em.ints(axes)]),
                        name=op.name, keepdims=keep)
        else:
            attrs = {} if axes is None else {"axes": axes}
            y = em.node(onnx_type, [x], name=op.name, keepdims=keep, **attrs)
        return em.cast(y, out) if work != out else y
    return convert


def _arg(onnx_type):
    def convert(em, op, ins):
        x, axis = ins[0], op.attrs["axis"]
        if axis is None:
            x, axis = em.node("Reshape", [x, em.ints([-1])], name=op.name), 0
        y = em.node(onnx_type, [x], name=op.name, axis=axis, keepdims=0)
        out = op.attrs["output_type"]
        return em.cast(y, out) if out != dtypes.int64 else y
    return convert


# -- arrays ------------------------------------------------------------------------------------

def _matmul(em, op, ins):
    a, b = ins
    for i, flag in ((0, "transpose_a"), (1, "transpose_b")):
        if op.attrs.get(flag):
            rank = op.inputs[i].shape.rank
            perm = list(range(rank - 2)) + [rank - 1, rank - 2]
            name = em.node("Transpose", [ins[i]], name=op.name, perm=perm)
            a, b = (name, b) if i == 0 else (a, name)
    return em.node("MatMul", [a, b], name=op.name)


def _transpose(em, op, ins):
    perm = op.attrs["perm"]
    attrs = {} if perm is None else {"perm": list(perm)}
    return em.node("Transpose", ins, name=op.name, **attrs)


def _shape_input(em, op, ins):
    """The target shape of reshape / broadcast_to: the static attr or the int64 input."""
    if "shape" in op.attrs and op.attrs["shape"] is not None:
        return em.ints(op.attrs["shape"])
    return em.cast(ins[1], dtypes.int64)


def _reshape(em, op, ins):
    return em.node("Reshape", [ins[0], _shape_input(em, op, ins)], name=op.name, allowzero=1)


def _broadcast_to(em, op, ins):
    return em.node("Expand", [ins[0], _shape_input(em, op, ins)], name=op.name)


def _expand_dims(em, op, ins):
    return em.node("Unsqueeze", [ins[0], em.ints([op.attrs["axis"]])], name=op.name)


def _squeeze(em, op, ins):
    axes = _axes(op.attrs["axis"])
    return em.node("Squeeze", ins + ([] if axes is None else [em.ints(axes)]), name=op.name)


def _shape(em, op, ins):
    return em.cast(em.node("Shape", ins, name=op.name), op.attrs["out_type"])


def _size(em, op, ins):
    return em.cast(em.node("Size", ins, name=op.name), op.outputs[0].dtype)


def _rank(em, op, ins):
    rank = em.node("Size", [em.node("Shape", ins, name=op.name)], name=op.name)
    return em.cast(rank, dtypes.int32)


def _concat(em, op, ins):
    return em.node("Concat", ins, name=op.name, axis=op.attrs["axis"])


def _stack(em, op, ins):
    axes = em.ints([op.attrs["axis"]])
    parts = [em.node("Unsqueeze", [x, axes], name=op.name) for x in ins]
    return em.node("Concat", parts, name=op.name, axis=op.attrs["axis"])


def _unstack(em, op, ins):
    axis, n = op.attrs["axis"], len(op.outputs)
    parts = em.node("Split", [ins[0], em.ints([1] * n)], n_outputs=n, name=op.name, axis=axis)
    parts = [parts] if n == 1 else parts
    return [em.node("Squeeze", [p, em.ints([axis])], name=op.name) for p in parts]


def _split(em, op, ins):
    sizes = op.attrs["sizes"]
    parts = em.node("Split", [ins[0], em.ints(sizes)], n_outputs=len(sizes), name=op.name,
                    axis=op.attrs["axis"])
    return [parts] if len(sizes) == 1 else parts


def _tile(em, op, ins):
    return em.node("Tile", [ins[0], em.ints(op.attrs["multiples"])], name=op.name)


def _gather(em, op, ins):
    return em.node("Gather", ins, name=op.name, axis=op.attrs["axis"])


def _one_hot(em, op, ins):
    a = op.attrs        # onnxruntime implements int64 indices and depth with float values
    values = np.array([a["off_value"], a["on_value"]], dtype=np.float32)
    y = em.node("OneHot", [em.cast(ins[0], dtypes.int64), em.ints(a["depth"]), em.const(values)],
                name=op.name, axis=a["axis"])
    return em.cast(y, a["dtype"]) if a["dtype"] != dtypes.float32 else y


def _fill(em, op, ins):
    a = op.attrs
    if a.get("shape") is not None:
        return em.const(np.full(a["shape"], a["value"], dtype=a["dtype"].np), op.name)
    value = np.full([1], a["value"], dtype=a["dtype"].np)
    return em.node("ConstantOfShape", [em.cast(ins[0], dtypes.int64)], name=op.name,
                   value=numpy_helper.from_array(value))


def _fill_like(em, op, ins):
    a = op.attrs
    value = _scalar(em, a["value"], a["dtype"], op.name)
    return em.node("Expand", [value, em.node("Shape", ins, name=op.name)], name=op.name)


def _range(em, op, ins):
    out = op.attrs["dtype"]
    ins = [em.cast(n, out) if t.dtype != out else n for n, t in zip(ins, op.inputs)]
    return em.node("Range", ins, name=op.name)


def _softmax(onnx_type):
    return lambda em, op, ins: em.node(onnx_type, ins, name=op.name, axis=op.attrs["axis"])


def _getitem(em, op, ins):
    """numpy basic indexing as Slice (slices), Gather (ints, scalar tensors), Unsqueeze."""
    x, dynamic = ins[0], ins[1:]
    spec = op.attrs["spec"]
    consumed = sum(1 for item in spec if item[0] in "its")
    items = []
    for item in spec:
        if item[0] == "e":
            items.extend([("s", None, None, None)] * (op.inputs[0].shape.rank - consumed))
        else:
            items.append(item)
    axis = 0
    for item in items:
        kind = item[0]
        if kind == "n":
            x = em.node("Unsqueeze", [x, em.ints([axis])], name=op.name)
            axis += 1
        elif kind == "i":
            x = em.node("Gather", [x, em.const(np.int64(item[1]))], name=op.name, axis=axis)
        elif kind == "t":
            x = em.node("Gather", [x, dynamic[item[1]]], name=op.name, axis=axis)
        else:
            if any(v is not None for v in item[1:]):
                x = _slice(em, op, x, axis, item[1:], dynamic)
            axis += 1
    return x if x != ins[0] else em.node("Identity", [x], name=op.name)


def _slice(em, op, x, axis, bounds, dynamic):
    start, stop, step = bounds
    backwards = isinstance(step, int) and step < 0
    defaults = (_MAX if backwards else 0, -_MAX if backwards else _MAX, 1)

    def part(value, default):
        if value is None:
            return em.ints([default])
        if isinstance(value, tuple):           # ("t", i): a tensor bound
            v = em.cast(dynamic[value[1]], dtypes.int64)
            return em.node("Reshape", [v, em.ints([1])], name=op.name)
        return em.ints([value])
    starts, ends, steps = (part(v, d) for v, d in zip((start, stop, step), defaults))
    return em.node("Slice", [x, starts, ends, em.ints([axis]), steps], name=op.name)


def _getitem_unsupported(op):
    for item in op.attrs["spec"]:
        if item[0] == "t":
            t = op.inputs[1 + item[1]]
            if t.dtype.is_bool or t.shape.rank != 0:
                return "an array or boolean index"
        if item[0] == "e" and op.inputs[0].shape.rank is None:
            return "'...' on a tensor of unknown rank"
        if item[0] == "s" and isinstance(item[3], tuple):
            return "a tensor slice step"
    return None


def _matmul_unsupported(op):
    transposed = op.attrs.get("transpose_a") or op.attrs.get("transpose_b")
    if transposed and any(t.shape.rank is None for t in op.inputs):
        return "a transpose of unknown rank"
    return None


# -- state and sub-graphs ----------------------------------------------------------------------

def _const(em, op, ins):
    return em.initializer(op.attrs["value"], op.name)


def _read_variable(em, op, ins):
    return em.initializer(np.asarray(op.attrs["var"].numpy()), op.name)   # a snapshot


def _dequantize(em, op, ins):
    """DequantizeLinear (opset 13: per-axis scales) with a zero point of 0."""
    q, scale = op.inputs
    zero = em.initializer(np.zeros(scale.shape.as_list(), q.dtype.np), f"{op.name}_zero_point")
    axis = op.attrs.get("axis")
    attrs = {} if axis is None else {"axis": axis}
    return em.node("DequantizeLinear", ins + [zero], name=op.name, **attrs)


def _call(em, op, ins):
    f = op.attrs["f"]
    k = len(f.inputs)
    bindings = {id(ph): v for ph, v in zip(f.inputs, ins[:k])}
    bindings.update({id(inner): v for (_, inner), v in zip(f.captures, ins[k:])})
    return em.emit(f, bindings)


def _captured(graph, mapping, available):
    return {id(inner): available[i] for (_, inner), i in zip(graph.captures, mapping)}


def _cond(em, op, ins):
    branches = []
    for key, map_key in (("then_graph", "then_map"), ("else_graph", "else_map")):
        g = op.attrs[key]
        body, _ = em.subgraph(g, f"{op.name}_{key}", [], _captured(g, op.attrs[map_key], ins[1:]),
                              [t.dtype for t in op.outputs],
                              outputs_of=lambda em_, outs: outs[:len(op.outputs)])
        branches.append(body)
    outs = em.node("If", [ins[0]], n_outputs=len(op.outputs), name=op.name,
                   then_branch=branches[0], else_branch=branches[1])
    return [outs] if len(op.outputs) == 1 else outs


def _while(em, op, ins):
    a = op.attrs
    n = a["n_vars"]
    init, rest = ins[:n], ins[n:]
    limit = a["maximum_iterations"]
    if limit == "input":
        trip, rest = em.cast(rest[-1], dtypes.int64), rest[:-1]
    else:
        trip = "" if limit is None else em.const(np.int64(limit), f"{op.name}_limit")
    cond_graph, body_graph = a["cond_graph"], a["body_graph"]

    def condition(values):
        bindings = {id(ph): v for ph, v in zip(cond_graph.inputs, values)}
        bindings.update(_captured(cond_graph, a["cond_map"], rest))
        return em.emit(cond_graph, bindings)[0]

    iteration = em.fresh(f"{op.name}_iteration")
    cond_in = em.fresh(f"{op.name}_cond")
    carried = [em.fresh(f"{op.name}_{ph.op.name}") for ph in body_graph.inputs]
    inputs = [helper.make_tensor_value_info(iteration, TensorProto.INT64, []),
              helper.make_tensor_value_info(cond_in, TensorProto.BOOL, [])]
    inputs += [helper.make_tensor_value_info(c, helper.np_dtype_to_tensor_dtype(ph.dtype.np),
                                             None) for c, ph in zip(carried, body_graph.inputs)]
    bindings = {id(ph): c for ph, c in zip(body_graph.inputs, carried)}
    bindings.update(_captured(body_graph, a["body_map"], rest))
    first = condition(init)
    body, _ = em.subgraph(body_graph, f"{op.name}_body", inputs, bindings,
                          [dtypes.bool_] + [t.dtype for t in body_graph.outputs[:n]],
                          outputs_of=lambda em_, outs: [condition(outs[:n])] + outs[:n])
    outs = em.node("Loop", [trip, first] + init, n_outputs=n, name=op.name, body=body)
    return [outs] if n == 1 else outs


CONVERTERS = {
    "const": _const, "read_variable": _read_variable, "dequantize": _dequantize,
    "call": _call, "cond": _cond,
    "while": _while, "no_op": lambda em, op, ins: [],
    "identity": _plain("Identity"), "stop_gradient": _plain("Identity"), "cast": _cast,
    "add": _same("Add"), "subtract": _same("Sub"), "multiply": _same("Mul"),
    "divide": _same("Div"), "pow": _same("Pow"), "maximum": _same("Max"),
    "minimum": _same("Min"), "floordiv": _floordiv, "mod": _mod,
    "squared_difference": _squared_difference, "add_n": _add_n, "clip_by_value": _clip,
    "equal": _plain("Equal"), "not_equal": _negated("Equal"), "less": _plain("Less"),
    "less_equal": _plain("LessOrEqual"), "greater": _plain("Greater"),
    "greater_equal": _plain("GreaterOrEqual"), "logical_and": _plain("And"),
    "logical_or": _plain("Or"), "logical_xor": _plain("Xor"), "logical_not": _plain("Not"),
    "negative": _plain("Neg"), "abs": _plain("Abs"), "sign": _plain("Sign"),
    "sqrt": _plain("Sqrt"), "rsqrt": _chain("Sqrt", "Reciprocal"), "square": _square,
    "exp": _plain("Exp"), "log": _plain("Log"), "log1p": _log1p, "sin": _plain("Sin"),
    "cos": _plain("Cos"), "tan": _plain("Tan"), "tanh": _plain("Tanh"),
    "sigmoid": _plain("Sigmoid"), "relu": _plain("Relu"), "softplus": _plain("Softplus"),
    "floor": _plain("Floor"), "ceil": _plain("Ceil"), "round": _plain("Round"),
    "reciprocal": _plain("Reciprocal"), "is_nan": _plain("IsNaN"), "is_finite": _is_finite,
    "reduce_sum": _reduction("ReduceSum"), "reduce_mean": _reduction("ReduceMean"),
    "reduce_prod": _reduction("ReduceProd"), "reduce_max": _reduction("ReduceMax"),
    "reduce_min": _reduction("ReduceMin"),
    "reduce_any": _reduction("ReduceMax", dtypes.int32),
    "reduce_all": _reduction("ReduceMin", dtypes.int32),
    "argmax": _arg("ArgMax"), "argmin": _arg("ArgMin"), "matmul": _matmul,
    "transpose": _transpose, "reshape": _reshape, "broadcast_to": _broadcast_to,
    "expand_dims": _expand_dims, "squeeze": _squeeze, "shape": _shape, "size": _size,
    "rank": _rank, "concat": _concat, "stack": _stack, "unstack": _unstack, "split": _split,
    "tile": _tile, "gather": _gather, "one_hot": _one_hot, "where": _plain("Where"),
    "fill": _fill, "fill_like": _fill_like, "range": _range, "getitem": _getitem,
    "softmax": _softmax("Softmax"), "log_softmax": _softmax("LogSoftmax"),
}

def _while_unsupported(op):
    if op.attrs.get("stacks") is not None:
        return "values collected per iteration for gradients"
    return None


def _dequantize_unsupported(op):
    q, scale = op.inputs
    if q.dtype.np not in (np.int8, np.uint8) or scale.dtype.np != np.float32:
        return "values other than int8 or uint8, or a scale other than float32"
    if not scale.shape.is_fully_defined():
        return "a scale of unknown shape"
    return None


UNSUPPORTED_CASES = {"getitem": _getitem_unsupported, "matmul": _matmul_unsupported,
                     "while": _while_unsupported, "dequantize": _dequantize_unsupported,
                     "gather": lambda op: "batch_dims" if op.attrs.get("batch_dims") else None}
