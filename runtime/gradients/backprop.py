"""The backward pass shared by tapes and graphs: gradients flow from outputs to inputs.

Each op declares its gradient beside its kernel (`OpDef.grad`):

    grad(op, *output_grads) -> one gradient (or None) per input

`op` is op-like: `.inputs`, `.outputs`, `.attrs`. For a tape it is the recorded eager
op; in a graph it is an `OpView` of the forward operation, whose tensors are mapped by
`value_of` into the graph where the gradient is built (a loop's backward body reads the
forward values the loop stacked, a branch's the values its cond exposed). The gradient
of an op owning sub-graphs (call, cond, while) also gives the gradients of the variables
read inside them (`GradientList.variable_grads`).

A gradient's ops run on the device of the op they differentiate (TensorFlow colocates
them so), whichever `rt.device` scope asks for the gradient.

Gradients are keyed by the forward tensors (their ids: every entry holds its tensors, so
ids stay unique while a backward pass runs); only floating-point tensors get one, of
their own dtype.
"""
from .. import context
from .. import devices
from ..ops import math_ops

__all__ = ["GradientList", "OpView", "backward", "differentiable"]


class GradientList(list):
    """Input gradients plus `variable_grads` {Variable: gradient} of variables read inside."""

    def __init__(self, grads, variable_grads):
        super().__init__(grads)
        self.variable_grads = variable_grads


def identity(t):
    return t


class _Mapped:
    """A sequence of forward tensors, each mapped by `value_of` when first used."""

    __slots__ = ("tensors", "value_of")

    def __init__(self, tensors, value_of):
        self.tensors = tensors
        self.value_of = value_of

    def __len__(self):
        return len(self.tensors)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self.value_of(t) for t in self.tensors[i]]
        return self.value_of(self.tensors[i])

    def __iter__(self):
        return (self.value_of(t) for t in self.tensors)


class OpView:
    """A forward graph operation as its gradient function sees it where the gradient is built."""

    __slots__ = ("op", "value_of")

    def __init__(self, op, value_of=identity):
        self.op = op
        self.value_of = value_of

    @property
    def type(self):
        return self.op.type

    @property
    def opdef(self):
        return self.op.opdef

    @property
    def attrs(self):
        return self.op.attrs

    @property
    def inputs(self):
        return _Mapped(self.op.inputs, self.value_of)

    @property
    def outputs(self):
        return _Mapped(self.op.outputs, self.value_of)


def differentiable(t):
    return t.dtype.is_floating


def _total(pending, t):
    """The sum of the gradients gathered for forward tensor `t` (None when it has none)."""
    grads = pending.get(id(t))
    if not grads:
        return None
    if len(grads) > 1:
        grads[:] = [_sum(grads)]
    return grads[0]


def _sum(grads):
    """The sum of gradients (two of them: one `add`, which fuses with its neighbours and
    adds in place; more: one `add_n`)."""
    return math_ops.add(*grads) if len(grads) == 2 else math_ops.add_n(grads)


def _colocated(grad_fn, forward, entry, grads):
    """`grad_fn(entry, *grads)`, its ops placed on the forward op's device (as TensorFlow
    colocates gradients with their ops), wherever the gradient is asked for."""
    device = forward.device if devices.placing else None
    if device is None:
        return grad_fn(entry, *grads)
    with context.device_scope(device):
        return grad_fn(entry, *grads)


def backward(entries, seeds):
    """Propagate `seeds` {id(forward tensor): [gradient]} back through `entries`.

    `entries` are op-likes in forward (execution) order; `entry.op` is the forward
    operation (the entry itself for a tape) whose tensors key the gradients. Returns
    (a function giving the total gradient of a forward tensor, or None; {Variable: gradient}).
    """
    pending = {key: list(grads) for key, grads in seeds.items()}
    variable_grads = {}
    for entry in reversed(entries):
        forward = entry.op
        grads = [_total(pending, t) for t in forward.outputs]
        if all(g is None for g in grads):
            continue
        if forward.type == "read_variable":
            variable_grads.setdefault(forward.attrs["var"], []).append(grads[0])
            continue
        grad_fn = forward.opdef.grad
        if grad_fn is None:
            where = forward.describe() if hasattr(forward, "describe") else repr(forward.type)
            raise LookupError(f"No gradient defined for {where}")
        input_grads = _colocated(grad_fn, forward, entry, grads)
        for t, g in zip(forward.inputs, input_grads):
            if g is not None and differentiable(t):
                if g.dtype != t.dtype:          # an op promoted a mixed-precision input
                    g = math_ops.cast(g, t.dtype)
                pending.setdefault(id(t), []).append(g)
        for var, g in getattr(input_grads, "variable_grads", {}).items():
            if g is not None:
                variable_grads.setdefault(var, []).append(g)
    return (lambda t: _total(pending, t)), {
        var: grads[0] if len(grads) == 1 else _sum(grads)
        for var, grads in variable_grads.items()}
