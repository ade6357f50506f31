"""The functional gradient API of the eager-execution seed (tfe.gradients_function, ...).

    def square(x):
        return x ** 2
    rt.gradients_function(square)(3.)        # [6.0]

    x = rt.Variable(2.0)
    def loss(y):
        return (y - x ** 2) ** 2
    rt.implicit_gradients(loss)(7.)          # [(-24.0, x)]
"""
import functools

from ..ops.registry import convert_to_tensor
from ..variables import Variable
from .tape import GradientTape

__all__ = ["gradients_function", "value_and_gradients_function", "implicit_gradients",
           "implicit_value_and_gradients"]


def value_and_gradients_function(f, params=None):
    """A function returning (f(*args), [gradient of f with respect to each argument]).

    params: the indices of the arguments to differentiate (all by default).
    """
    @functools.wraps(f)
    def value_and_grads(*args, **kwargs):
        args = list(args)
        indices = range(len(args)) if params is None else params
        with GradientTape(watch_accessed_variables=False) as tape:
            for i in indices:
                if not isinstance(args[i], Variable):
                    args[i] = convert_to_tensor(args[i])
                tape.watch(args[i])
            value = f(*args, **kwargs)
        return value, tape.gradient(value, [args[i] for i in indices])
    return value_and_grads


def gradients_function(f, params=None):
    """A function returning the gradients of f with respect to its arguments, as a list."""
    return _gradients_only(f, value_and_gradients_function(f, params))


def _gradients_only(f, value_and_grads):
    @functools.wraps(f)
    def grads(*args, **kwargs):
        return value_and_grads(*args, **kwargs)[1]
    return grads


def implicit_value_and_gradients(f):
    """A function returning (f(*args), [(gradient, variable), ...]) for the trainable
    variables f read, in the order it first read them."""
    @functools.wraps(f)
    def value_and_grads(*args, **kwargs):
        with GradientTape() as tape:
            value = f(*args, **kwargs)
        variables = tape.watched_variables()
        if not variables:
            raise ValueError(f"{getattr(f, '__name__', f)!s} read no trainable variables: "
                             f"there is nothing to differentiate implicitly.")
        return value, list(zip(tape.gradient(value, variables), variables))
    return value_and_grads


def implicit_gradients(f):
    """A function returning [(gradient, variable), ...] for the trainable variables f read."""
    return _gradients_only(f, implicit_value_and_gradients(f))
