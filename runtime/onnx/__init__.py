"""ONNX export (the optional `onnx` extra): a graph function as a standard ONNX model.

    rt.onnx.export(f, "f.onnx", x)                  # f traced on example arguments
    rt.onnx.export(f, "f.onnx", input_signature=[rt.TensorSpec([None, 3])])
    rt.onnx.export(f.get_concrete_function(x), "f.onnx")
    onnxruntime.InferenceSession("f.onnx").run(None, {"x": x_value})

Each op maps to standard ONNX operators (opset 17, see `ops.CONVERTERS`); `cond`
becomes `If`, `while` becomes `Loop` (its condition is computed before the loop and
at the end of each body), and a nested function call is inlined. Sub-graphs read
captured tensors from the enclosing scope by name. The graph's constants are the
model's initializers, and so are variables, holding their current values (an inference
snapshot). Quantized weights (`rt.quantize.weights`) are written in QDQ form: int8
initializers, `DequantizeLinear` (per-channel `axis`), then the `MatMul`; float16 ones as
float16 initializers and a `Cast`. Ops with no ONNX
equivalent (print, assert, random, assign, py_function) raise `ExportError` listing
every one of them with its source line. Model inputs and outputs are named after the
graph's inputs and outputs.
"""
import numpy as np

try:
    import onnx
    from onnx import helper, numpy_helper
except ImportError as e:                      # pragma: no cover - depends on the extra
    raise ImportError("rt.onnx needs the optional extra: pip install 'autograph[onnx]' "
                      f"(the onnx package; onnxruntime to run models) ({e})") from None

from ..files import write_file
from ..function import Function
from ..graph import Graph
from .ops import CONVERTERS, OPSET, UNSUPPORTED_CASES

__all__ = ["export", "to_model", "concrete_function", "ExportError", "supported_ops"]


class ExportError(ValueError):
    """The graph uses ops ONNX cannot express; the message lists them."""


def supported_ops():
    """The names of the runtime ops that export to ONNX, sorted."""
    return sorted(CONVERTERS)


def _elem_type(dtype):
    return helper.np_dtype_to_tensor_dtype(dtype.np)


def _value_info(name, t, keep_shape=True):
    dims = None
    if keep_shape and t.shape.dims is not None:
        dims = [d if d is not None else f"{name}_d{i}" for i, d in enumerate(t.shape.dims)]
    return helper.make_tensor_value_info(name, _elem_type(t.dtype), dims)


class Emitter:
    """Emits the ONNX nodes of graphs; tensor names are unique across the whole model."""

    def __init__(self):
        self.nodes = []
        self.initializers = []
        self.used = set()

    def fresh(self, base):
        base = base.replace(":", "_")
        name, i = base, 0
        while name in self.used:
            i += 1
            name = f"{base}_{i}"
        self.used.add(name)
        return name

    def node(self, op_type, inputs, n_outputs=1, name="n", **attrs):
        outputs = [self.fresh(f"{name}") for _ in range(n_outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outputs,
                                           name=self.fresh(f"{name}/{op_type}"), **attrs))
        return outputs if n_outputs != 1 else outputs[0]

    def const(self, value, name="const"):
        out = self.fresh(name)
        self.nodes.append(helper.make_node(
            "Constant", [], [out], name=self.fresh(f"{name}/Constant"),
            value=numpy_helper.from_array(np.asarray(value), name=out)))
        return out

    def initializer(self, value, name="const"):
        """A model initializer holding `value` (sub-graphs read it from the outer scope)."""
        out = self.fresh(name)
        self.initializers.append(numpy_helper.from_array(np.asarray(value), name=out))
        return out

    def ints(self, values, name="ints"):
        return self.const(np.asarray(values, dtype=np.int64), name)

    def cast(self, name, dtype):
        return self.node("Cast", [name], name=name, to=_elem_type(dtype))

    def emit(self, graph, bindings):
        """Emit `graph`'s ops into self.nodes; `bindings` maps id(tensor) -> ONNX name for its
        inputs and captures. Returns the ONNX names of the graph's outputs."""
        names = dict(bindings)
        for op in graph.ops:
            if op.type in ("placeholder", "capture"):
                continue
            ins = [names[id(t)] for t in op.inputs]
            outs = CONVERTERS[op.type](self, op, ins)
            outs = [outs] if isinstance(outs, str) else list(outs)
            for t, name in zip(op.outputs, outs):
                names[id(t)] = name
        return [names[id(t)] for t in graph.outputs]

    def subgraph(self, graph, name, inputs, bindings, out_types, outputs_of=None):
        """A GraphProto: `graph` emitted in a new scope, and its output names. `inputs` are
        the ValueInfos it takes, `out_types` the DTypes of its outputs;
        `outputs_of(emitter, outs) -> [names]` may add nodes after the graph's own."""
        outer_nodes, self.nodes = self.nodes, []
        try:
            outs = self.emit(graph, bindings)
            if outputs_of is not None:
                outs = outputs_of(self, outs)
            # A sub-graph's outputs must be made inside it: pass each through an Identity.
            finals = [self.node("Identity", [o], name=f"{name}_out") for o in outs]
            nodes = self.nodes
        finally:
            self.nodes = outer_nodes
        return helper.make_graph(nodes, self.fresh(name), inputs, [
            helper.make_tensor_value_info(n, _elem_type(d), None)
            for n, d in zip(finals, out_types)]), finals


def _unsupported(graph, found):
    for op in graph.ops:
        where = f" at {op.origin.short()}" if op.origin is not None else ""
        if op.type not in CONVERTERS and op.type not in ("placeholder", "capture"):
            found.append(f"{op.type} ('{op.name}'{where})")
        elif op.type in UNSUPPORTED_CASES:
            case = UNSUPPORTED_CASES[op.type](op)
            if case:
                found.append(f"{op.type} with {case} ('{op.name}'{where})")
        for sub in op.attrs.values():
            if isinstance(sub, Graph):
                _unsupported(sub, found)
    return found


def concrete_function(fn, example_args=(), input_signature=None):
    """The ConcreteFunction to export for `fn`: itself if it is one; for an `rt.function`
    (or `autograph.convert`) its trace on the example arguments, or on `input_signature`
    (TensorSpecs), or its own input_signature's, or its one trace so far."""
    if not isinstance(fn, Function):
        if example_args or input_signature is not None:
            raise TypeError("example arguments and input_signature are for an rt.function; "
                            "a ConcreteFunction is already traced")
        return fn
    if example_args and input_signature is not None:
        raise TypeError("give either example arguments or an input_signature, not both")
    if input_signature is not None:
        return fn.get_concrete_function(*input_signature)
    if example_args or fn.input_signature is not None:
        return fn.get_concrete_function(*example_args)
    traces = fn.concrete_functions
    if len(traces) == 1:
        return traces[0]
    raise TypeError(f"Exporting {fn!r} needs its arguments: rt.onnx.export(fn, path, "
                    f"*example_args) or input_signature=[rt.TensorSpec(shape, dtype), ...] "
                    f"(it has {len(traces)} traces)")


def to_model(concrete, *example_args, input_signature=None, opset=OPSET):
    """The onnx.ModelProto of a graph function (see `concrete_function`), a
    ConcreteFunction or a function-like Graph."""
    concrete = concrete_function(concrete, example_args, input_signature)
    graph = getattr(concrete, "graph", concrete)
    if not isinstance(graph, Graph):
        raise TypeError(f"Expected a ConcreteFunction or a Graph, got {concrete!r}")
    bad = _unsupported(graph, [])
    if bad:
        raise ExportError(f"Cannot export '{graph.name}' to ONNX: {len(bad)} operation(s) have "
                          f"no ONNX equivalent: {', '.join(bad)}. Supported ops: "
                          f"{', '.join(supported_ops())}")
    if graph.captures:
        raise ExportError(f"Cannot export '{graph.name}': it captures tensors of another graph")
    em = Emitter()
    inputs, bindings = [], {}
    for t in graph.inputs:
        name = em.fresh(t.op.name)
        bindings[id(t)] = name
        inputs.append(_value_info(name, t))
    outs = em.emit(graph, bindings)
    outputs = []
    for i, (t, name) in enumerate(zip(graph.visible_outputs, outs)):
        final = em.node("Identity", [name], name=f"output_{i}")
        outputs.append(_value_info(final, t))
    onnx_graph = helper.make_graph(em.nodes, graph.name, inputs, outputs,
                                   initializer=em.initializers)
    model = helper.make_model(onnx_graph, producer_name="autograph-runtime",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 8)
    onnx.checker.check_model(model)
    return model


def export(fn, path, *example_args, input_signature=None, opset=OPSET):
    """Write the ONNX model of `fn` to `path`; returns the model. `fn` is a ConcreteFunction,
    or an rt.function traced on `example_args` or `input_signature` (see
    `concrete_function`)."""
    model = to_model(fn, *example_args, input_signature=input_signature, opset=opset)
    write_file(path, model.SerializeToString())
    return model

