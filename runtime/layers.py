"""Layers (`rt.layers`): objects owning variables, created on their first call.

    dense = rt.layers.Dense(10, activation="relu")
    y = dense(x)                  # creates dense.kernel [x.shape[-1], 10] and dense.bias
    dense.trainable_variables     # [kernel, bias]

A layer first called while a function is traced creates its variables then, once
and eagerly (variables made while tracing are lifted), so a converted training step
can build its model on its first call.
"""
import math

import numpy as np

from . import dtypes
from .ops import math_ops
from .ops import nn_ops
from .ops import random_ops
from .ops.registry import convert_to_tensor
from .variables import Variable

__all__ = ["Layer", "Dense"]

_ACTIVATIONS = {None: None, "linear": None, "relu": math_ops.relu, "tanh": math_ops.tanh,
                "sigmoid": math_ops.sigmoid, "softplus": math_ops.softplus,
                "softmax": nn_ops.softmax}


class Layer:
    """Base class: `build(input_shape)` creates the variables, `call(inputs)` computes."""

    def __init__(self, name=None, dtype=dtypes.float32):
        self.name = name or type(self).__name__.lower()
        self.dtype = dtypes.as_dtype(dtype)
        self.built = False
        self._variables = []

    def add_weight(self, name, shape, initializer, trainable=True):
        """A new variable of this layer, its value made by `initializer(shape, dtype)`."""
        var = Variable(lambda: initializer(shape, self.dtype), trainable=trainable,
                       name=f"{self.name}/{name}")
        self._variables.append(var)
        return var

    @property
    def variables(self):
        """The variables this layer created (empty until its first call)."""
        return list(self._variables)

    @property
    def trainable_variables(self):
        """Its variables that are trainable: what an optimizer updates."""
        return [v for v in self._variables if v.trainable]

    def __call__(self, inputs):
        inputs = convert_to_tensor(inputs, dtype_hint=self.dtype)
        if inputs.dtype.is_floating and inputs.dtype != self.dtype:
            inputs = math_ops.cast(inputs, self.dtype)       # computes in its own dtype
        if not self.built:
            self.build(inputs.shape)
            self.built = True
        return self.call(inputs)

    def build(self, input_shape):
        """Create the variables (with `add_weight`) for inputs of `input_shape`; called
        once, on the first call. Subclasses override it."""

    def call(self, inputs):
        """The layer's computation on `inputs` (a tensor). Subclasses override it."""
        raise NotImplementedError


def glorot_uniform(seed=None):
    """Uniform in +-sqrt(6 / (fan_in + fan_out)) (Keras' default for kernels)."""
    def init(shape, dtype):
        limit = math.sqrt(6.0 / (shape[-2] + shape[-1]))
        return random_ops.uniform(shape, -limit, limit, dtype=dtype, seed=seed)
    return init


def zeros(shape, dtype):
    return np.zeros(shape, dtype.np)


class Dense(Layer):
    """`activation(inputs @ kernel + bias)`; the kernel is [last input dimension, units]."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=zeros, seed=None, name=None, dtype=dtypes.float32):
        super().__init__(name, dtype)
        if activation not in _ACTIVATIONS and not callable(activation):
            raise ValueError(f"Dense: unknown activation {activation!r}; use one of "
                             f"{sorted(k for k in _ACTIVATIONS if k)} or a function")
        self.units = int(units)
        self.activation = _ACTIVATIONS.get(activation, activation) \
            if not callable(activation) else activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer or glorot_uniform(seed)
        self.bias_initializer = bias_initializer
        self.kernel = self.bias = None

    def build(self, input_shape):
        """Create `kernel` [last input dimension, units] and `bias` [units]."""
        last = input_shape[-1] if input_shape.rank else None
        if last is None:
            raise ValueError(f"Dense: the last dimension of the inputs must be known, got "
                             f"shape {input_shape}")
        self.kernel = self.add_weight("kernel", [last, self.units], self.kernel_initializer)
        if self.use_bias:
            self.bias = self.add_weight("bias", [self.units], self.bias_initializer)

    def call(self, inputs):
        """`activation(inputs @ kernel + bias)`."""
        outputs = math_ops.matmul(inputs, self.kernel)
        if self.use_bias:
            outputs = outputs + self.bias
        return self.activation(outputs) if self.activation is not None else outputs
