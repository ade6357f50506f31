"""Automatic differentiation: tapes (eager), symbolic gradients (graphs), functional API.

Each op's gradient is declared beside its kernel (runtime/ops); this package holds the
backward pass (backprop), the tape, `rt.gradients`, and the gradients of the ops that own
sub-graphs: function calls (function_grad) and cond / while_loop (control_flow_grad).
"""
from . import control_flow_grad  # noqa: F401 - registers the cond and while gradients
from . import function_grad  # noqa: F401 - registers the call gradient
from .functional import (gradients_function, implicit_gradients, implicit_value_and_gradients,
                         value_and_gradients_function)
from .symbolic import gradients
from .tape import GradientTape

__all__ = ["GradientTape", "gradients", "gradients_function", "value_and_gradients_function",
           "implicit_gradients", "implicit_value_and_gradients"]
