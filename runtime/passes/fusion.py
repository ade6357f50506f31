"""Fusion: a chain (or tree) of elementwise ops becomes one `fused` op.

An elementwise op joins its consumer's group when that consumer is its only
reader (it is not an output, a control input or read twice by different ops) and
runs on the same device.
A group of two or more becomes one `fused` op owning a sub-graph of the
members, named after the group's last op. The executors run the body as one
kernel: straight-line code whose temporaries are written in place (`out=`, see
the memory plan), so a five-op chain over big arrays allocates one array, not
five. A failing member is still named in errors, with its own source line.

    graph f(x: f32[1024], b: f32[]) {          graph f(x: f32[1024], b: f32[]) {
      mul: f32[1024] = multiply(x, x)            tanh: f32[1024] = fused(x, b)
      add: f32[1024] = add(mul, b)       ==>       body fused(x: f32[1024], b: f32[]) {
      tanh: f32[1024] = tanh(add)                    mul: f32[1024] = multiply(x, x)
      return tanh                                    add: f32[1024] = add(mul, b)
    }                                                tanh: f32[1024] = tanh(add)
                                                     return tanh
                                                   }
                                                 return tanh
                                               }
"""
from ..graph import Graph, Operation
from ..ops import registry
from ..tensor import SymbolicTensor
from . import each_graph, rename_inputs

__all__ = ["run", "FUSED"]


def _fused_kernel(xp, *arrays, body):
    from ..codegen_executor import compile_graph
    return compile_graph(body).fn(arrays)[0]


def _fused_infer(inputs, body):
    out = body.outputs[0]
    return [(out.shape, out.dtype)]


FUSED = registry.register("fused", _fused_kernel, _fused_infer, fresh=True, container=True)


def run(graph):
    return each_graph(graph, _fuse)


def _fusable(op):
    return (op.opdef.elementwise and len(op.outputs) == 1 and not op.control_inputs
            and not op.stateful)


def _groups(graph):
    """Lists of member ops (graph order), each ending with its root, of 2+ members."""
    readers = {}
    for op in graph.ops:
        for t in op.inputs:
            readers.setdefault(t, set()).add(op)
    outputs = set(graph.outputs)
    controls = {c for op in graph.ops for c in op.control_inputs}
    group_of = {}
    groups = []
    for op in reversed(graph.ops):
        if not _fusable(op):
            continue
        out = op.outputs[0]
        users = readers.get(out, ())
        user = next(iter(users)) if len(users) == 1 else None
        if (user is not None and user in group_of and out not in outputs
                and op not in controls and user.device == op.device):
            group = group_of[user]
        else:
            group = []
            groups.append(group)
        group.append(op)
        group_of[op] = group
    return [list(reversed(g)) for g in groups if len(g) > 1]


def _fuse(graph):
    groups = _groups(graph)
    if not groups:
        return False
    fused_at = {}                        # group root -> the fused op taking its place
    renamed = {}
    members = set()
    for group in groups:
        root = group[-1]
        members.update(group)
        for op in group:
            graph.forget_name(op)
        fused = fused_at[root] = _fused_op(graph, group)
        renamed[root.outputs[0]] = fused.outputs[0]
    ops = []
    for op in graph.ops:
        if op in members:
            op = fused_at.get(op)
            if op is None:
                continue
        rename_inputs(op, renamed)
        ops.append(op)
    graph.ops = ops
    graph.finish_renaming(renamed, members)
    return True


def _fused_op(graph, members):
    """The `fused` op computing the group `members` (graph order, root last)."""
    root = members[-1]
    body = Graph(name="fused", outer_graph=graph)
    body.optimized = True
    inside = {}            # member output -> its copy in the body
    external = []          # outer tensors read by the group, in first-use order
    ph_registry = registry.get("placeholder")
    for op in members:
        inputs = []
        for t in op.inputs:
            if t not in inside:
                ph = body.make_op(ph_registry, [], {"shape": t.shape.dims, "dtype": t.dtype},
                                  [(t.shape, t.dtype)], _ref(t), t.op.origin,
                                  device=root.device)
                body.ops.append(ph)
                inside[t] = ph.outputs[0]
                body.inputs.append(ph.outputs[0])
                external.append(t)
            inputs.append(inside[t])
        copy = Operation(body, op.opdef, body.unique_name(op.name), inputs, dict(op.attrs), [],
                         op.origin, op.device)
        copy.original = op.original or op
        copy.outputs = (SymbolicTensor(copy, 0, op.outputs[0].shape, op.outputs[0].dtype),)
        body.ops.append(copy)
        body._ops_by_name[copy.name] = copy
        inside[op.outputs[0]] = copy.outputs[0]
    body.outputs = [inside[root.outputs[0]]]
    out = root.outputs[0]
    return graph.make_op(FUSED, external, {"body": body}, [(out.shape, out.dtype)], root.name,
                         root.origin, device=root.device)


def _ref(t):
    return t.op.name if len(t.op.outputs) == 1 else f"{t.op.name}_{t.index}"
