"""Optimizers (`rt.optimizers`): update variables from their gradients.

    opt = rt.optimizers.SGD(0.1, momentum=0.9)
    opt.apply_gradients(zip(grads, variables))
    opt.minimize(loss_fn, variables)           # a tape, its gradients, one update

The updates are variable assignments, so a step works eagerly and inside a traced
training step alike. Slots (momentum, Adam's moments) and the step counter are
variables created on first use: inside a trace they are created once, eagerly.
A graph function creates variables on its first trace only, so an optimizer first
used by a later trace (a second optimizer passed to one step function) needs
`opt.build(variables)` beforehand, as in Keras.
"""
import numpy as np

from .gradients import GradientTape
from .ops import math_ops
from .variables import Variable

__all__ = ["Optimizer", "SGD", "Adam"]


class Optimizer:
    """Base class: `_update(grad, var)` assigns the new value of one variable."""

    def __init__(self, learning_rate, name):
        self.learning_rate = learning_rate
        self.name = name
        self._slots = {}
        self._iterations = None

    @property
    def iterations(self):
        """The number of `apply_gradients` calls so far (an int64 variable)."""
        if self._iterations is None:
            self._iterations = Variable(np.int64(0), trainable=False,
                                        name=f"{self.name}/iterations")
        return self._iterations

    slot_names = ()         # the slots `_update` keeps per variable

    def build(self, var_list):
        """Create the step counter and the slots of each variable of `var_list` now."""
        self.iterations          # noqa: B018 - created on first access
        for var in var_list:
            for slot in self.slot_names:
                self.get_slot(var, slot)

    def get_slot(self, var, slot):
        """The optimizer's `slot` variable for `var` (zeros shaped like it at first)."""
        key = (var, slot)
        found = self._slots.get(key)
        if found is None:
            found = self._slots[key] = Variable(np.zeros(var.shape.as_list(), var.dtype.np),
                                                trainable=False, name=f"{var._name}/{slot}")
        return found

    def _hyper(self, value, dtype):
        value = value() if callable(value) else value
        return math_ops.cast(value, dtype)

    def apply_gradients(self, grads_and_vars):
        """Update each variable from its gradient (pairs with a None gradient are skipped)."""
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise ValueError("apply_gradients: no gradient was given for any variable")
        step = self.iterations
        for grad, var in pairs:
            if not var.dtype.is_floating:
                raise TypeError(f"Cannot optimize variable '{var.name}' of dtype "
                                f"{var.dtype.name}")
            self._update(grad, var)
        return step.assign_add(1)

    def minimize(self, loss, var_list, tape=None):
        """Compute the gradients of `loss` (a callable, or a tensor recorded by `tape`) with
        respect to `var_list` and apply them; returns the loss."""
        if callable(loss):
            with GradientTape() as tape:
                value = loss()
        elif tape is None:
            raise ValueError("minimize: give a callable loss, or the tape that recorded it")
        else:
            value = loss
        if callable(var_list):
            var_list = var_list()
        var_list = list(var_list)
        self.apply_gradients(zip(tape.gradient(value, var_list), var_list))
        return value

    def _update(self, grad, var):
        raise NotImplementedError


class SGD(Optimizer):
    """Gradient descent, with momentum (`velocity = momentum * velocity - lr * grad`) and
    Nesterov's variant (`var += momentum * velocity - lr * grad`) as in Keras."""

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD"):
        super().__init__(learning_rate, name)
        if not 0 <= momentum <= 1:
            raise ValueError(f"momentum must be in [0, 1], got {momentum}")
        self.momentum = momentum
        self.nesterov = nesterov
        self.slot_names = ("momentum",) if momentum else ()

    def _update(self, grad, var):
        step = self._hyper(self.learning_rate, var.dtype) * grad
        if not self.momentum:
            return var.assign_sub(step)
        velocity = self.get_slot(var, "momentum")
        new_velocity = velocity.assign(self.momentum * velocity - step)
        if self.nesterov:
            return var.assign_add(self.momentum * new_velocity - step)
        return var.assign_add(new_velocity)


class Adam(Optimizer):
    """Adam (Kingma & Ba) as in Keras: bias-corrected step size, epsilon added to sqrt(v)."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 name="Adam"):
        super().__init__(learning_rate, name)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    slot_names = ("m", "v")

    def _update(self, grad, var):
        t = math_ops.cast(self.iterations + 1, var.dtype)
        b1, b2 = self.beta_1, self.beta_2
        lr = self._hyper(self.learning_rate, var.dtype) * math_ops.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        m = self.get_slot(var, "m")
        v = self.get_slot(var, "v")
        m_new = m.assign(b1 * m + (1 - b1) * grad)
        v_new = v.assign(b2 * v + (1 - b2) * math_ops.square(grad))
        return var.assign_sub(lr * m_new / (math_ops.sqrt(v_new) + self.epsilon))

