"""Placement: each op gets the device it runs on, and an explicit `copy` where a value
crosses devices, so that no kernel ever sees an array of another device.

    def f(x):                               graph f(x: f32[3]) {
        with rt.device("strict:1"):           x_to_strict1: f32[3] = copy[to='strict:1'](x)
            y = x * 2             ==>         mul: f32[3] = multiply(x_to_strict1, const) @strict:1
        return y + 1                          mul_to_cpu0: f32[3] = copy[to='cpu:0'](mul)
                                              add: f32[3] = add(mul_to_cpu0, const_1)
                                              return add
                                            }

- An op runs on its device: the `rt.device` scope it was traced in, else the default
  (`RT_DEVICE`); a variable's reads and writes on the variable's. On cpu:0 instead when
  that device has no kernel for it or lacks one of its dtypes (soft placement, logged by
  `rt.config.set_log_device_placement`). A value's device is its op's, or cpu:0 for a
  dtype its op's device cannot hold (a float16 result of a loop on strict:0).
- Every input of an op is copied to the op's device, once per device for all its
  readers; a constant is made again on each device that reads it (nothing to copy).
- Control flow: a cond, while, call or fused op does not move its inputs. The
  placeholders of its sub-graphs take the devices of the values fed to them (copies
  happen inside, where ops need them), except a loop's variables, which live on the
  loop's device (their initial values and each iteration's results are copied there). A
  branch's, loop body's or called function's results are copied to the device of the op
  that owns it; a function's results to the device it is called on.

Runs once per optimized graph, when some op of it runs elsewhere than cpu:0 (`needed`):
otherwise nothing changes.
"""
from .. import devices
from ..ops import registry
from ..ops.array_ops import COPY
from . import graphs_in, subgraph_feeds

__all__ = ["run", "needed", "device_of"]


def run(graph):
    """Place `graph` (a function's: its results go to the device it is called on)."""
    if not needed(graph):
        return False
    out = devices.resolve(graph.device) if getattr(graph, "is_function", False) else None
    _Placer(graph).place(out, {})
    return True


def needed(graph):
    """Does some op of `graph` (or of its sub-graphs) run elsewhere than cpu:0?"""
    if not devices.placing:
        return False
    if not devices.resolve(graph.device).is_host:
        return True
    for g in graphs_in(graph):
        for op in g.ops:
            var = op.attrs.get("var") if op.opdef.effect is not None else None
            device = var._device if var is not None else devices.resolve(op.device)
            if not device.is_host:
                return True
    return False


def device_of(t):
    """The device a placed tensor lives on."""
    return devices.for_dtype(t.dtype, devices.resolve(t.op.device))


class _Placer:
    """One graph's placement: its ops' devices, the copies it made, in one sweep."""

    def __init__(self, graph):
        self.graph = graph
        self.ops = []
        self.moved = {}             # (tensor, device) -> the tensor there

    def place(self, out, feeds):
        """Place every op; `feeds` {placeholder: device} of a sub-graph's fed values;
        the results go to device `out` (None: where they are)."""
        graph = self.graph
        for op in graph.ops:
            if op.type in ("placeholder", "capture"):
                device = feeds.get(op.outputs[0]) or _holding(op)
            elif op.type == "const":
                device = _holding(op)
            elif op.opdef.container:
                device = self.container(op)
            else:
                device = self.regular(op)
            op.device = device.name
            self.ops.append(op)
        if out is not None:
            graph.outputs = [self.on(t, out) for t in graph.outputs]
        graph.ops = self.ops
        graph._changed()

    def regular(self, op):
        var = op.attrs.get("var") if op.opdef.effect is not None else None
        want = var._device if var is not None else devices.resolve(op.device)
        device, _, why = devices.choose(op.opdef, want, [t.dtype for t in op.inputs], op.attrs,
                                        [t.dtype for t in op.outputs],
                                        None if var is not None else op.device)
        if why is not None:
            _log(self.graph, f"{op.name} ({op.type}) on {device.name} ({why})")
        op.inputs = [self.on(t, device) for t in op.inputs]
        return device

    def container(self, op):
        """A control-flow op's device (its results'), its sub-graphs placed."""
        device = devices.resolve(op.device)
        if op.type == "while":
            n = op.attrs["n_vars"]
            op.inputs = [self.on(t, devices.for_dtype(t.dtype, device)) if i < n else t
                         for i, t in enumerate(op.inputs)]
        for sub, pairs in subgraph_feeds(op):
            feeds = {t: device_of(op.inputs[i]) if i is not None else
                     devices.for_dtype(t.dtype, device) for t, i in pairs}
            results = None if sub is op.attrs.get("cond_graph") else device
            _Placer(sub).place(results, feeds)
        return device

    def on(self, t, device):
        """`t` on `device`: itself, or its copy there (made once), or for a constant, the
        same constant made there."""
        device = devices.for_dtype(t.dtype, device)
        if device_of(t) is device:
            return t
        found = self.moved.get((t, device))
        if found is None:
            source = t.op
            if source.type == "const":
                op = self.graph.make_op(registry.get("const"), [], dict(source.attrs),
                                        [(t.shape, t.dtype)], source.name, source.origin,
                                        device=device.name)
            else:
                name = f"{source.name}_to_{device.kind}{device.index}"
                op = self.graph.make_op(COPY, [t], {"to": device.name}, [(t.shape, t.dtype)],
                                        name, source.origin, device=device.name)
                if devices.logging():
                    _log(self.graph, f"copy {t.name} to {device.name}")
            self.ops.append(op)
            found = self.moved[(t, device)] = op.outputs[0]
        return found


def _holding(op):
    """The device of an op making one value (a constant, a placeholder): its own, unless
    that device cannot hold the value's dtype."""
    return devices.for_dtype(op.outputs[0].dtype, devices.resolve(op.device))


def _log(graph, message):
    devices.log(f"graph {graph.name}: {message}")
