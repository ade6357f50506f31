"""Graphs: operations wired by symbolic tensors, and their readable text form.

A `Graph` holds operations in creation order (which is a topological order).
Sub-graphs (function bodies, cond branches, loop bodies) name an `outer_graph`;
a tensor of an enclosing graph used inside becomes a *capture*: a placeholder
in the sub-graph, fed by an extra input of the operation that owns it.
Every operation records the user's source frame that created it, and the device
name of the `rt.device` scope it was created in (None: the default device), which the
placement pass resolves (`passes/placement.py`).
"""
import collections
import contextlib
import itertools

import numpy as np

from . import context
from . import devices
from . import traceback_utils
from .tensor import EagerTensor, SymbolicTensor

__all__ = ["Graph", "Operation"]

_graph_ids = itertools.count()
_NO_GRAPHS = ()                   # the sub-graphs of most operations


class Operation:
    """One node of a graph: an op type applied to input tensors with attributes."""

    __slots__ = ("graph", "type", "name", "inputs", "attrs", "outputs", "control_inputs",
                 "origin", "opdef", "notes", "original", "device", "_effects", "_subgraphs",
                 "__weakref__")

    def __init__(self, graph, opdef, name, inputs, attrs, control_inputs, origin, device=None):
        self.graph = graph
        self.opdef = opdef
        self.type = opdef.name
        self.name = name
        self.inputs = inputs
        self.attrs = attrs
        self.control_inputs = control_inputs
        self.origin = origin
        self.outputs = ()
        self.notes = None             # annotations of passes (memory plan), shown in text
        self.original = None          # in a copy made for passes: the traced op it copies
        self.device = device          # a device name ("strict:1"), or None: the default
        self._effects = None
        self._subgraphs = None        # (the attrs dict they were found in, [graphs])

    # -- effects on state, used by automatic control dependencies and pruning --
    def subgraphs(self):
        """The graphs this operation owns or calls (cond branches, loop bodies, functions)."""
        attrs, found = self.attrs, self._subgraphs
        if found is None or found[0] is not attrs:      # attrs are replaced, not edited
            graphs = [g for g in attrs.values() if isinstance(g, Graph)]
            found = self._subgraphs = (attrs, graphs) if graphs else (attrs, _NO_GRAPHS)
        return found[1]

    def effects(self):
        """(resources read, resources written, stateful?) including sub-graphs."""
        if self._effects is None:
            effect = self.opdef.effect
            reads, writes = set(), set()
            if effect is not None:
                resource = self.attrs["var"]
                (writes if effect == "write" else reads).add(resource)
            stateful = self.opdef.stateful
            for g in self.subgraphs():
                r, w, s = g.effects()
                reads |= r
                writes |= w
                stateful = stateful or s
            self._effects = (frozenset(reads), frozenset(writes), stateful)
        return self._effects

    @property
    def stateful(self):
        """Whether the op has effects (variable updates, printing, random numbers),
        itself or in its sub-graphs: such ops always run, in program order."""
        return self.effects()[2]

    def add_control_input(self, op):
        """Make this op run after `op`."""
        if op is not self and op not in self.control_inputs:
            self.control_inputs.append(op)

    def __repr__(self):
        where = f" at {self.origin.short()}" if self.origin is not None else ""
        return f"<rt.Operation '{self.name}' type={self.type}{where}>"

    def describe(self):
        """'op add_3 (add) created at model.py:12 in step' for error messages."""
        text = f"operation '{self.name}' ({self.type})"
        if self.origin is not None:
            text += f" created at {self.origin.filename}:{self.origin.lineno} in {self.origin.name}"
        return text


class Graph:
    """A dataflow graph. Ops are added to it while it is the default graph."""

    def __init__(self, name="graph", outer_graph=None):
        self.name = name
        self.id = next(_graph_ids)
        self.outer_graph = outer_graph
        self.ops = []
        self._names = {}
        self._ops_by_name = {}
        self.inputs = []              # placeholders fed by the caller, in order
        self.captures = []            # (outer tensor, inner placeholder)
        self._capture_map = {}        # id(outer tensor) -> inner placeholder
        self._keepalive = []          # captured eager tensors (their ids are keys)
        self.outputs = []             # flat output tensors
        self.n_visible = None         # a function's outputs past this many are hidden:
                                      # its random values, kept for its gradient
        self.control_outputs = []     # stateful ops that must run whenever the graph runs
        self.variables = []           # variables created in this graph (TF1 style)
        self._control_stack = []
        self.seed = None
        self._random_ops = 0
        self._effects = None
        self._plans = {}              # executors' compiled forms, dropped on every change
        self.optimized = False        # made by the passes: run as it is
        self.device = None            # a function's: the device its results are wanted on

    @property
    def visible_outputs(self):
        """The outputs a caller sees (a function's hidden ones left out; see n_visible)."""
        return self.outputs if self.n_visible is None else self.outputs[:self.n_visible]

    @property
    def hidden_outputs(self):
        """The values kept for the function's gradient (random values, variable reads)."""
        return [] if self.n_visible is None else self.outputs[self.n_visible:]

    # -- building ------------------------------------------------------------
    def as_default(self):
        """Context manager: ops created inside are added to this graph."""
        return context.graph_scope(self)

    def unique_name(self, base):
        """`base`, or `base_1`, `base_2`, ... when taken: a new op name of this graph."""
        count = self._names.get(base)
        if count is None:
            self._names[base] = 1
            if base not in self._ops_by_name:
                return base
            count = 1
        while True:
            name = f"{base}_{count}"
            count += 1
            if name not in self._ops_by_name:
                self._names[base] = count
                return name

    def create_op(self, opdef, inputs, attrs, output_specs, name=None, origin=None):
        """Add an operation; `inputs` must already belong to this graph."""
        control = []
        for deps in self._control_stack:
            for dep in deps:
                if dep.graph is self and dep not in control:
                    control.append(dep)
        return self.insert_op(len(self.ops), opdef, inputs, attrs, output_specs, name,
                              origin if origin is not None else traceback_utils.user_frame(2),
                              control, context.device_name())

    # -- editing (graph passes) -------------------------------------------------------
    # A pass rewrites a graph in one sweep over `ops` (a topological order): it renames
    # the inputs of each op as it reaches it (`passes.rename_inputs`), makes new ops with
    # `make_op`, sets the new `ops` list once, then `finish_renaming` renames the graph's
    # outputs. Each edit below (insert_op, remove_ops, replace_uses) scans the whole
    # graph: fine once per pass, quadratic once per op.
    def make_op(self, opdef, inputs, attrs, output_specs, name, origin, control_inputs=(),
                device=None):
        """A new operation of this graph (named uniquely), not yet placed in `ops`."""
        op = Operation(self, opdef, self.unique_name(name or opdef.name), inputs, attrs,
                       list(control_inputs), origin, device)
        op.outputs = tuple(SymbolicTensor(op, i, shape, dtype)
                           for i, (shape, dtype) in enumerate(output_specs))
        self._ops_by_name[op.name] = op
        return op

    def insert_op(self, position, opdef, inputs, attrs, output_specs, name, origin,
                  control_inputs=(), device=None):
        """Add an operation at `position` of `ops` (which must stay a topological order)."""
        op = self.make_op(opdef, inputs, attrs, output_specs, name, origin, control_inputs,
                          device)
        self.ops.insert(position, op)
        self._changed()
        return op

    def forget_name(self, op):
        """Free the name of `op` (a pass dropping it) for the op taking its place."""
        if self._ops_by_name.get(op.name) is op:
            del self._ops_by_name[op.name]

    def finish_renaming(self, renamed, removed=()):
        """After a sweep that renamed its ops' inputs: rename the graph's outputs by
        `renamed` ({old tensor: new tensor}) and drop the `removed` ops from control
        inputs."""
        if renamed:
            get = renamed.get
            self.outputs = [get(t, t) for t in self.outputs]
        if removed:
            for op in self.ops:
                if op.control_inputs and any(c in removed for c in op.control_inputs):
                    op.control_inputs = [c for c in op.control_inputs if c not in removed]
        self._changed()

    def remove_ops(self, ops):
        """Drop operations (nothing left may use their outputs)."""
        ops = set(ops)
        if not ops:
            return
        self.ops = [op for op in self.ops if op not in ops]
        for op in ops:
            self.forget_name(op)
        self.finish_renaming({}, ops)

    def replace_uses(self, replacements):
        """Rewire every use (op inputs, outputs) of tensors: `{old tensor: new tensor}`."""
        if not replacements:
            return
        get = replacements.get
        for op in self.ops:
            if any(t in replacements for t in op.inputs):
                op.inputs = [get(t, t) for t in op.inputs]
        self.outputs = [get(t, t) for t in self.outputs]
        self._changed()

    def replace_op(self, old, new):
        """Make `new` stand for `old`: its outputs and its place as a control input."""
        self.replace_uses(dict(zip(old.outputs, new.outputs)))
        for op in self.ops:
            if old in op.control_inputs:
                op.control_inputs = [c for c in op.control_inputs if c is not old]
                op.add_control_input(new)
        self.control_outputs = [new if c is old else c for c in self.control_outputs]

    def _changed(self):
        self._effects = None
        self._plans.clear()

    def needed_ops(self, fetches, feeds=(), targets=()):
        """The operations computing `fetches` (and running `targets`) when `feeds` are
        given, in graph order."""
        needed = self.needed_set(fetches, feeds, targets)
        return [op for op in self.ops if op in needed]

    def needed_set(self, fetches, feeds=(), targets=()):
        """The set of `needed_ops`."""
        fed = {id(t) for t in feeds}
        needed = set()
        stack = [t.op for t in fetches if id(t) not in fed] + list(targets)
        while stack:
            op = stack.pop()
            if op in needed:
                continue
            needed.add(op)
            for t in op.inputs:
                if t.op not in needed and (not fed or id(t) not in fed):
                    stack.append(t.op)
            # A control input whose every output is fed has nothing left to run.
            if op.control_inputs:
                stack.extend(c for c in op.control_inputs if c not in needed and not (
                    c.outputs and fed and all(id(t) in fed for t in c.outputs)))
        for op in needed:
            if op.graph is not self:
                raise ValueError(f"{op.describe()} is not in graph '{self.name}'")
        return needed

    def capture(self, tensor):
        """The tensor to use in this graph for `tensor` (maybe from another graph)."""
        if isinstance(tensor, SymbolicTensor):
            graph = tensor.op.graph
            if graph is self:
                return tensor
            found = self._capture_map.get(id(tensor))
            if found is not None:
                return found
            if not self._is_inner_of(graph):
                origin = tensor.op.origin
                where = f" (created at {origin.short()})" if origin is not None else ""
                raise ValueError(
                    f"Tensor {tensor.name}{where} belongs to graph '{graph.name}' "
                    f"#{graph.id}, which is neither this graph '{self.name}' #{self.id} nor "
                    f"one enclosing it. A symbolic tensor cannot leave the function trace "
                    f"or branch that created it (was it stored in a Python object or global "
                    f"during tracing?).")
            from .ops import registry
            op = self.create_op(registry.get("capture"), [], {}, [(tensor.shape, tensor.dtype)],
                                name=tensor.op.name, origin=tensor.op.origin)
            inner = op.outputs[0]
            inner.weak = tensor.weak
            self.captures.append((tensor, inner))
            self._capture_map[id(tensor)] = inner
            return inner
        if isinstance(tensor, EagerTensor):
            found = self._capture_map.get(id(tensor))
            if found is not None:
                return found
            from .ops import registry
            op = self.create_op(registry.get("const"), [], {"value": tensor._host()},
                                [(tensor.shape, tensor.dtype)], origin=None)
            inner = op.outputs[0]
            self._keepalive.append(tensor)
            self._capture_map[id(tensor)] = inner
            return inner
        raise TypeError(f"Expected a tensor, got {type(tensor).__name__}: {tensor!r}")

    def _is_inner_of(self, graph):
        g = self.outer_graph
        while g is not None:
            if g is graph:
                return True
            g = g.outer_graph
        return False

    @contextlib.contextmanager
    def control_dependencies(self, ops):
        """Ops created inside the `with` block run after `ops` (None: clear them), as
        `rt.control_dependencies`."""
        if ops is None:                  # clears the dependencies, as in TensorFlow
            saved, self._control_stack = self._control_stack, []
            try:
                yield
            finally:
                self._control_stack = saved
            return
        self._control_stack.append(ops)
        try:
            yield
        finally:
            self._control_stack.pop()

    # -- queries ---------------------------------------------------------------
    def get_operation_by_name(self, name):
        """The op named `name` (KeyError if none)."""
        try:
            return self._ops_by_name[name]
        except KeyError:
            raise KeyError(f"No operation named '{name}' in graph '{self.name}'") from None

    def get_tensor_by_name(self, name):
        """The tensor named `"op_name:index"`."""
        op_name, _, index = name.rpartition(":")
        if not op_name:
            raise ValueError(f"Tensor names look like 'op:0', got {name!r}")
        return self.get_operation_by_name(op_name).outputs[int(index)]

    def get_operations(self):
        """The ops of this graph (not of its sub-graphs), in the order they were made."""
        return list(self.ops)

    def effects(self):
        """Union of the effects of all ops: (reads, writes, stateful?)."""
        if self._effects is None:
            reads, writes, stateful = set(), set(), False
            for op in self.ops:
                r, w, s = op.effects()
                reads |= r
                writes |= w
                stateful = stateful or s
            self._effects = (frozenset(reads), frozenset(writes), stateful)
        return self._effects

    def __repr__(self):
        return f"<rt.Graph '{self.name}' with {len(self.ops)} ops>"

    def __str__(self):
        return "\n".join(format_graph(self))


# -- copies ----------------------------------------------------------------------------

def clone_graph(graph, outer_graph=None, feeds=None, fetches=None, targets=(), _tensors=None):
    """A copy of `graph` (sub-graphs copied too) that passes may rewrite freely.

    Operations keep their names, attributes (stateful objects such as random
    generators are shared, not copied) and source lines. With `feeds`/`fetches`/
    `targets`, the copy holds only what computes the fetches: fed tensors become
    its inputs, fetches its outputs, targets its control outputs (TF1 sessions).
    """
    new = Graph(graph.name, outer_graph)
    new.is_function = getattr(graph, "is_function", False)
    new.seed = graph.seed
    new.n_visible = graph.n_visible if feeds is None else None
    new.optimized = True
    new.device = graph.device
    # old tensor -> new tensor; a sub-graph's map reads its enclosing graphs' (captures)
    tensors = {} if _tensors is None else collections.ChainMap({}, _tensors)
    ops = {}                                            # old op -> new op
    if feeds is None:
        keep = graph.ops
    else:
        keep = graph.needed_ops(fetches, feeds, targets)
        kept = set(keep)
        for t in feeds:
            name = f"{t.op.name}_fed" if t.op in kept else t.op.name
            ph = new.insert_op(len(new.ops), _registry().get("placeholder"), [],
                               {"shape": t.shape.dims, "dtype": t.dtype},
                               [(t.shape, t.dtype)], name, t.op.origin, device=t.op.device)
            tensors[t] = ph.outputs[0]
            new.inputs.append(ph.outputs[0])
    for op in keep:
        attrs = {k: clone_graph(v, new, _tensors=tensors) if isinstance(v, Graph) else v
                 for k, v in op.attrs.items()}
        copy = Operation(new, op.opdef, op.name, [tensors[t] for t in op.inputs], attrs,
                         [ops[c] for c in op.control_inputs if c in ops], op.origin, op.device)
        copy.original = op.original or op
        copy.outputs = tuple(SymbolicTensor(copy, i, t.shape, t.dtype)
                             for i, t in enumerate(op.outputs))
        for t, c in zip(op.outputs, copy.outputs):
            if t not in tensors:                # a fed output keeps its placeholder
                tensors[t] = c
        ops[op] = copy
        new.ops.append(copy)
        new._ops_by_name[copy.name] = copy
    if feeds is None:
        new.inputs = [tensors[t] for t in graph.inputs]
        new.captures = [(tensors.get(outer, outer), tensors[inner])
                        for outer, inner in graph.captures]
        new.outputs = [tensors[t] for t in graph.outputs]
        new.control_outputs = [ops[op] for op in graph.control_outputs]
    else:
        new.outputs = [tensors[t] for t in fetches]
        new.control_outputs = [ops[op] for op in targets]
    return new


def _registry():
    from .ops import registry
    return registry


# -- text form ---------------------------------------------------------------------

def _type_str(t):
    return f"{t.dtype.short_name}{t.shape.short()}"


def _attr_str(value):
    if isinstance(value, np.ndarray):
        if value.size <= 6:
            return np.array2string(value, separator=",").replace("\n", "")
        return f"<{value.dtype}{list(value.shape)}>"
    if isinstance(value, Graph):
        return None
    if isinstance(value, (str, int, float, bool, tuple, list, type(None))):
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    name = getattr(value, "name", None)
    if not isinstance(name, str) and callable(value):
        name = getattr(value, "__name__", None)          # py_function's Python function
    return name if isinstance(name, str) else type(value).__name__


def _tensor_ref(t):
    op = t.op
    return op.name if len(op.outputs) == 1 else f"{op.name}:{t.index}"


def _notes_str(notes):
    """The annotations of passes: `reuse a; free b, c` (the memory plan), and others."""
    parts = []
    for key, value in notes.items():
        if isinstance(value, (list, tuple)):
            if not value:
                continue
            value = ", ".join(_tensor_ref(v) if hasattr(v, "op") else str(v) for v in value)
        elif hasattr(value, "op"):
            value = _tensor_ref(value)
        parts.append(key if value is True else f"{key} {value}")
    return "; ".join(parts)


def format_graph(graph, indent="", header=None):
    """Lines of a graph's text form: a short program, one line per operation."""
    params = ", ".join(f"{_tensor_ref(t)}: {_type_str(t)}" for t in graph.inputs)
    if graph.captures:
        caps = ", ".join(f"{_tensor_ref(inner)}: {_type_str(inner)}"
                         for _, inner in graph.captures)
        params = f"{params}; captures {caps}" if params else f"captures {caps}"
    lines = [f"{indent}{header or 'graph ' + graph.name}({params}) {{"]
    body = indent + "  "
    default_device = devices.default().name
    hidden = {"placeholder", "capture"}
    for op in graph.ops:
        if op.type in hidden and (any(op is t.op for t in graph.inputs)
                                  or any(op is inner.op for _, inner in graph.captures)):
            continue
        outs = ", ".join(f"{_tensor_ref(t)}: {_type_str(t)}" for t in op.outputs)
        args = [_tensor_ref(t) for t in op.inputs]
        attrs = []
        for key, value in op.attrs.items():
            text = _attr_str(value)
            if text is not None:
                attrs.append(f"{key}={text}")
        call = op.type
        if attrs:
            call += "[" + ", ".join(attrs) + "]"
        call += "(" + ", ".join(args) + ")"
        if op.control_inputs:
            call += " after " + ", ".join(c.name for c in op.control_inputs)
        if op.device is not None and op.device != default_device and op.type != "copy":
            call += f" @{op.device}"
        if op.notes:
            call += f"  [{_notes_str(op.notes)}]"
        line = f"{body}{outs} = {call}" if outs else f"{body}{call}"
        if op.origin is not None:
            line = f"{line:<60}  # {op.origin.short()}"
        lines.append(line)
        for key, value in op.attrs.items():
            if isinstance(value, Graph):
                lines.extend(format_graph(value, body + "  ", header=f"{key} {value.name}"))
    visible = graph.visible_outputs
    outs = ", ".join(_tensor_ref(t) for t in visible)
    line = f"{body}return ({outs})" if len(visible) != 1 else f"{body}return {outs}"
    if graph.hidden_outputs:
        kept = ", ".join(_tensor_ref(t) for t in graph.hidden_outputs)
        line = f"{line:<60}  # and, for gradients, {kept}"
    lines.append(line)
    lines.append(indent + "}")
    return lines

