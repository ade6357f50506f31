"""`rt.GradientTape`: record what is computed, then differentiate it.

Executing eagerly, a recording tape keeps every op that reads a watched tensor or
variable (the registry calls its hook after each eager op); `gradient` runs the shared
backward pass over those records. A call of a graph function is one record; its
gradient is the function's gradient graph. Inside a graph (a traced function) the graph
already holds the ops: the tape notes which ones were built while it recorded, and
`gradient` adds their symbolic backward pass to the graph.

Trainable floating-point variables are watched when read (`watch_accessed_variables`).
A persistent tape asked for a gradient while it still records records the backward
pass too, so its result can be differentiated again (second derivatives). `jacobian`
and `batch_jacobian` take one backward pass per element of the target (per element of
one example, for a batch): a Python loop eagerly, one graph `while` loop in a graph.
"""
import contextlib
import threading
import weakref

from .. import context
from .. import nest
from .. import variables as variables_module
from ..graph import Graph
from ..ops import array_ops
from ..ops import math_ops
from ..ops import registry
from ..ops.registry import convert_to_tensor
from ..tensor import EagerTensor, Tensor
from ..variables import Variable
from .backprop import backward, differentiable, identity
from .symbolic import backprop, seen_in, targets_and_seeds

__all__ = ["GradientTape"]


class _Record:
    """One eager op as the tape saw it; also the op-like its gradient function gets."""

    __slots__ = ("opdef", "inputs", "attrs", "outputs")
    value_of = staticmethod(identity)

    def __init__(self, opdef, inputs, attrs, outputs):
        self.opdef = opdef
        self.inputs = inputs
        self.attrs = attrs
        self.outputs = outputs

    @property
    def op(self):
        return self

    @property
    def type(self):
        return self.opdef.name

    @property
    def device(self):
        """The device the op ran on (its gradient's ops run there too)."""
        return self.outputs[0].device if self.outputs else None


class _Active(threading.local):
    def __init__(self):
        self.tapes = []


_active = _Active()
_hooks = {"users": 0, "lock": threading.Lock()}


def _on_op(opdef, inputs, attrs, outputs):
    for tape in _active.tapes:
        tape._record(opdef, inputs, attrs, outputs)


def _on_read(variable):
    for tape in _active.tapes:
        tape._accessed(variable)


def _hook(install):
    """Count the recording tapes; the hooks are installed only while there is one."""
    with _hooks["lock"]:
        _hooks["users"] += 1 if install else -1
        users = _hooks["users"]
        if install and users == 1:
            registry.tape_hooks.append(_on_op)
            variables_module._access_hooks.append(_on_read)
        elif not install and users == 0:
            registry.tape_hooks.remove(_on_op)
            variables_module._access_hooks.remove(_on_read)


def _variables_read(attrs):
    """The variables read inside the graphs an op owns (a function call, say), in the
    order the graphs read them (as eager code would watch them: watched_variables and
    implicit_gradients list them in that order)."""
    found = {}
    for g in attrs.values():
        if isinstance(g, Graph):
            found.update(dict.fromkeys(_reads_in_order(g)))
    return found


_read_orders = weakref.WeakKeyDictionary()


def _reads_in_order(graph):
    order = _read_orders.get(graph)
    if order is None:
        found = {}
        for op in graph.ops:
            if op.opdef.effect == "read" and op.attrs.get("var") is not None:
                found.setdefault(op.attrs["var"])
            for sub in op.subgraphs():
                found.update(dict.fromkeys(_reads_in_order(sub)))
        order = _read_orders[graph] = tuple(found)
    return order


class GradientTape:
    """Records operations to differentiate: `with rt.GradientTape() as tape: ...`.

    persistent: `gradient` may be called more than once.
    watch_accessed_variables: trainable variables read while recording are watched.
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._records = []
        self._watched = {}         # id(tensor) -> tensor the gradient can flow from
        self._variables = {}       # watched variables, in the order first watched
        self._spans = []           # [graph, first op, end] built while recording in a graph
        self._recording = False
        self._used = False

    def __enter__(self):
        self._start()
        return self

    def __exit__(self, *exc):
        self._stop()

    def _start(self):
        _hook(True)
        _active.tapes.append(self)
        self._recording = True
        graph = context.current_graph()
        if graph is not None:
            self._spans.append([graph, len(graph.ops), None])

    def _stop(self):
        if self._spans and self._spans[-1][2] is None:
            self._spans[-1][2] = len(self._spans[-1][0].ops)
        _active.tapes.remove(self)
        self._recording = False
        _hook(False)

    @contextlib.contextmanager
    def stop_recording(self):
        """Operations inside this block are not recorded."""
        if not self._recording:
            raise RuntimeError("stop_recording: the tape is not recording")
        self._stop()
        try:
            yield
        finally:
            self._start()

    def reset(self):
        """Forget everything recorded so far."""
        self._records, self._watched, self._variables = [], {}, {}
        self._spans = [[g, len(g.ops), None] for g, _, end in self._spans[-1:] if end is None]

    # -- watching ---------------------------------------------------------------------
    def watch(self, tensor):
        """Differentiate with respect to `tensor` (a tensor, variable or nest of them)."""
        for t in nest.flatten(tensor):
            if isinstance(t, Variable):
                self._variables.setdefault(t)
            elif isinstance(t, Tensor):
                if differentiable(t):
                    self._watched[id(t)] = t
            else:
                raise TypeError(f"GradientTape.watch expects tensors or variables, got {t!r}")

    def watched_variables(self):
        """The variables watched, in the order they were first watched."""
        return list(self._variables)

    def _accessed(self, variable):
        if (self._recording and self._watch_accessed and variable.trainable
                and variable.dtype.is_floating):
            self._variables.setdefault(variable)

    def _record(self, opdef, inputs, attrs, outputs):
        if not self._recording:
            return
        outputs = outputs if isinstance(outputs, list) else [outputs]
        if opdef.name == "read_variable":
            hit = attrs["var"] in self._variables
        else:
            hit = any(id(t) in self._watched for t in inputs)
            for var in _variables_read(attrs):
                self._accessed(var)
                hit = hit or var in self._variables
        if hit:
            self._records.append(_Record(opdef, list(inputs), attrs, outputs))
            for t in outputs:
                if differentiable(t):
                    self._watched[id(t)] = t

    # -- differentiating ---------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        """The gradients of sum(target) with respect to `sources`, in their structure.

        target and sources may be nests; a source the target does not depend on gets
        None (zeros with unconnected_gradients="zero").
        """
        self._check_usable()
        with self._backward_pass():
            targets, seeds = targets_and_seeds(target, output_gradients)
            flat = nest.flatten(sources)
            grads = self._flat_gradient(targets, seeds, flat)
            if unconnected_gradients == "zero":
                grads = [array_ops.zeros_like(s) if g is None else g
                         for g, s in zip(grads, flat)]
        self._used_once()
        return nest.pack_sequence_as(sources, grads)

    def jacobian(self, target, sources, unconnected_gradients="none",
                 parallel_iterations=None, experimental_use_pfor=True):
        """The jacobian of `target` with respect to each of `sources` (in their structure):
        for a source `x`, a tensor of shape `target.shape + x.shape` whose element
        [i..., j...] is d target[i...] / d x[j...]; None where `target` does not depend on
        `x` (zeros with unconnected_gradients="zero")."""
        del parallel_iterations, experimental_use_pfor     # TensorFlow's tuning knobs
        self._check_usable()
        with self._backward_pass():
            target = convert_to_tensor(target)
            flat = nest.flatten(sources)
            count = array_ops.size(target)

            def row(i):
                seed = math_ops.cast(math_ops.equal(array_ops.range(count), i), target.dtype)
                return self._flat_gradient([target], [array_ops.reshape(
                    seed, array_ops.shape(target))], flat)

            rows = _rows(row, count, flat, batch=False)
            out = [None if r is None else array_ops.reshape(r, array_ops.concat(
                [array_ops.shape(target), array_ops.shape(s)], 0))
                for r, s in zip(rows, flat)]
            out = self._unconnected(out, flat, unconnected_gradients,
                                    lambda s: array_ops.concat([array_ops.shape(target),
                                                                array_ops.shape(s)], 0))
        self._used_once()
        return nest.pack_sequence_as(sources, out)

    def batch_jacobian(self, target, source, unconnected_gradients="none",
                       parallel_iterations=None, experimental_use_pfor=True):
        """The jacobian of each example: `target` [b, m...] and `source` [b, n...], whose
        examples do not depend on each other's, give [b, m..., n...] with element
        [k, i..., j...] = d target[k, i...] / d source[k, j...]."""
        del parallel_iterations, experimental_use_pfor
        self._check_usable()
        with self._backward_pass():
            target = convert_to_tensor(target)
            if target.shape.rank == 0 or getattr(source, "shape", None) is not None and \
                    source.shape.rank == 0:
                raise ValueError("batch_jacobian needs a target and a source with a batch "
                                 "(first) dimension")
            per_example = array_ops.size(target) // array_ops.shape(target)[0]

            def row(i):
                seed = math_ops.cast(math_ops.equal(array_ops.range(per_example), i),
                                     target.dtype)
                seed = array_ops.reshape(seed, array_ops.shape(target)[1:])
                return self._flat_gradient([target], [array_ops.zeros_like(target) + seed],
                                           [source])

            [stacked] = _rows(row, per_example, [source], batch=True)
            shape = array_ops.concat([array_ops.shape(target),
                                      array_ops.shape(source)[1:]], 0)
            out = None if stacked is None else array_ops.reshape(stacked, shape)
            [out] = self._unconnected([out], [source], unconnected_gradients, lambda s: shape)
        self._used_once()
        return out

    def _check_usable(self):
        if self._used:
            raise RuntimeError("A non-persistent GradientTape can compute gradients only "
                               "once; use GradientTape(persistent=True).")

    @contextlib.contextmanager
    def _backward_pass(self):
        """A non-persistent tape stops recording for the backward pass; a persistent one
        records it (its gradients can be differentiated again)."""
        pause = self._recording and not self._persistent
        if pause:
            self._stop()
        try:
            yield
        finally:
            if pause:
                self._start()

    def _used_once(self):
        if not self._persistent:
            self._used = True
            self._records, self._watched = [], {}

    @staticmethod
    def _unconnected(grads, sources, unconnected_gradients, shape_of):
        if unconnected_gradients != "zero":
            return grads
        return [array_ops.zeros(shape_of(s), s.dtype) if g is None else g
                for g, s in zip(grads, sources)]

    def _flat_gradient(self, targets, seeds, flat):
        if all(isinstance(t, EagerTensor) for t in targets):
            return self._eager_gradient(targets, seeds, flat)
        return self._graph_gradient(targets, seeds, flat)

    def _eager_gradient(self, targets, seeds, sources):
        seeded = {}
        for y, g in zip(targets, seeds):
            if differentiable(y):
                seeded.setdefault(id(y), []).append(g)
        grad_of, variable_grads = backward(list(self._records), seeded)
        return [(variable_grads.get(s) if s in self._variables else None)
                if isinstance(s, Variable) else
                grad_of(s) if isinstance(s, Tensor) and id(s) in self._watched else None
                for s in sources]

    def _graph_gradient(self, targets, seeds, sources):
        graph = targets[0].op.graph
        spans = [(start, end) for g, start, end in self._spans if g is graph]
        recorded = None
        if spans:
            recorded = {op for start, end in spans for op in graph.ops[start:end]}
            if self._watch_accessed:
                # Variables read inside functions called while recording (a call traced
                # before the tape existed reads nothing while this graph is traced).
                for op in graph.ops:
                    if op in recorded:
                        for var in _variables_read(op.attrs):
                            if var.trainable and var.dtype.is_floating:
                                self._variables.setdefault(var)
        flat = [None if isinstance(s, Variable) and s not in self._variables else
                seen_in(graph, s) for s in sources]
        flat = [s if s is None or isinstance(s, Variable) or recorded is None
                or id(s) in self._watched or s.op in recorded else None for s in flat]
        return backprop(graph.ops, targets, seeds, flat, recorded=recorded)


def _rows(row, count, sources, batch):
    """Each source's gradients of the target's elements 0 .. count-1, stacked on axis 0
    (on axis 1 for a `batch`): `row(i)` gives element i's gradients (None where there is
    none). A Python loop eagerly; a graph `while` loop while tracing."""
    if isinstance(count, EagerTensor):
        rows = [row(i) for i in range(int(count))]
        return [None if all(r[k] is None for r in rows) else array_ops.stack(
            [array_ops.zeros_like(s) if r[k] is None else r[k] for r in rows],
            axis=1 if batch else 0) for k, s in enumerate(sources)]
    from ..control_flow import while_loop
    connected = [g is not None for g in row(0)]         # traced once to see which exist
    picks = [k for k, c in enumerate(connected) if c]
    if not picks:
        return [None] * len(sources)

    def body(i, *accumulated):
        grads = row(i)
        hot = math_ops.cast(math_ops.equal(array_ops.range(count), i), grads[picks[0]].dtype)
        out = []
        for k, acc in zip(picks, accumulated):
            g = grads[k] if grads[k] is not None else array_ops.zeros_like(sources[k])
            rank = g.shape.rank
            hot_k = array_ops.reshape(hot, [1, -1] + [1] * (rank - 1) if batch
                                      else [-1] + [1] * rank)
            out.append(acc + hot_k * array_ops.expand_dims(g, 1 if batch else 0))
        return [i + 1] + out

    initial = []
    for k in picks:
        shape_k = array_ops.shape(sources[k])
        dims = array_ops.concat([shape_k[:1], array_ops.reshape(count, [1]), shape_k[1:]], 0) \
            if batch else array_ops.concat([array_ops.reshape(count, [1]), shape_k], 0)
        initial.append(array_ops.zeros(dims, sources[k].dtype))
    results = while_loop(lambda i, *_: i < count, body, [convert_to_tensor(0)] + initial)
    stacked = dict(zip(picks, results[1:]))
    return [stacked.get(k) for k in range(len(sources))]
