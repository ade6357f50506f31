"""runtime: a numpy-backed dataflow runtime, eager by default, with traced graphs.

    import runtime as rt
    x = rt.constant([[2.0]])
    rt.matmul(x, x)                 # eager: runs at once, like numpy

    @rt.function                    # traced once per input signature into a graph
    def f(x):
        return rt.matmul(x, x) + 1

Below: tensors, dtypes and ops; variables, control flow and graph functions; gradients.
Modules: `rt.config` (executors, optimizations, limits), `rt.errors`, `rt.data`
(datasets), `rt.layers`, `rt.optimizers`, `rt.saved` (saved graphs), `rt.onnx` (ONNX
export, the `onnx` extra), `rt.summary` (TensorBoard), `rt.viz` (Graphviz),
`rt.quantize`. The user guide is docs/README.md in the source tree.
"""
import types as _types

from . import config
from . import dtypes
from . import errors
from . import nest
from .context import executing_eagerly, get_default_graph, init_scope, reset_default_graph
from .context import run_functions_eagerly, functions_run_eagerly
from .devices import device
from .dtypes import (DType, as_dtype, bool_, complex64, complex128, float16, float32, float64,
                     int8, int16, int32, int64, uint8, uint16, uint32, uint64)
from .shapes import TensorShape
from .tensor import Tensor, EagerTensor, SymbolicTensor, is_tensor
from .graph import Graph, Operation
from .ops import overloads as _overloads  # noqa: F401 - installs Tensor operators
from .ops.registry import constant, convert_to_tensor
from .ops.math_ops import (
    abs, add, add_n, argmax, argmin, bitwise_and, bitwise_or, bitwise_xor, cast, ceil,
    clip_by_value, cos, divide, equal, exp, floor, floordiv, floormod, greater, greater_equal,
    invert, is_finite, is_nan, less, less_equal, log, log1p, logical_and, logical_not,
    logical_or, logical_xor, matmul, maximum, minimum, mod, multiply, negative, not_equal, pow,
    reciprocal, reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min, reduce_prod,
    reduce_sum, relu, round, rsqrt, sigmoid, sign, sin, softplus, sqrt, square,
    squared_difference, subtract, tan, tanh, truediv)
from .ops.array_ops import (
    broadcast_to, concat, expand_dims, fill, gather, identity, one_hot, ones, ones_like, range,
    rank, reshape, shape, size, split, squeeze, stack, stop_gradient, tile, transpose, unstack,
    where, zeros, zeros_like)
from .ops.logging_ops import Assert, debugging, print_ as print, py_function
from .ops import nn_ops as _nn_ops
from .ops import random_ops as _random_ops
from .variables import Variable, global_variables_initializer, trainable_variables
from .control_flow import cond, control_dependencies, group, no_op, while_loop
from .function import ConcreteFunction, Function, TensorSpec, function
from .trace_warnings import TracingWarning
from .session import Session, placeholder
from .gradients import (GradientTape, gradients, gradients_function, implicit_gradients,
                        implicit_value_and_gradients, value_and_gradients_function)
from . import data, layers, optimizers  # noqa: E402 - rt.data, rt.layers, rt.optimizers

nn = _types.SimpleNamespace(
    softmax=_nn_ops.softmax, log_softmax=_nn_ops.log_softmax,
    softmax_cross_entropy_with_logits=_nn_ops.softmax_cross_entropy_with_logits,
    sparse_softmax_cross_entropy_with_logits=_nn_ops.sparse_softmax_cross_entropy_with_logits,
    sigmoid_cross_entropy_with_logits=_nn_ops.sigmoid_cross_entropy_with_logits,
    relu=relu, sigmoid=sigmoid, tanh=tanh, softplus=softplus)
"""Neural-network ops (`tf.nn`'s names): `softmax`, `log_softmax`,
`softmax_cross_entropy_with_logits`, `sparse_softmax_cross_entropy_with_logits`,
`sigmoid_cross_entropy_with_logits`, and `relu`, `sigmoid`, `tanh`, `softplus`."""

random = _types.SimpleNamespace(
    uniform=_random_ops.uniform, normal=_random_ops.normal,
    truncated_normal=_random_ops.truncated_normal, set_seed=_random_ops.set_seed)
"""Random numbers with TensorFlow's seed semantics: `uniform(shape, minval, maxval, ...)`,
`normal(shape, mean, stddev, ...)`, `truncated_normal`, each with `seed=`, and
`set_seed(seed)` (the global seed)."""

# TensorFlow's names: tf.bool, tf.newaxis, and tf.math for the math ops there are
bool = bool_  # noqa: A001 - shadows the builtin inside this module only, as tf.bool
"""`rt.bool_`, by TensorFlow's name."""
newaxis = None
"""`t[rt.newaxis]` inserts a dimension of size 1, as numpy's and TensorFlow's newaxis."""
math = _types.SimpleNamespace(
    abs=abs, add=add, add_n=add_n, argmax=argmax, argmin=argmin, ceil=ceil, cos=cos,
    divide=divide, equal=equal, exp=exp, floor=floor, floordiv=floordiv, floormod=floormod,
    greater=greater, greater_equal=greater_equal, is_finite=is_finite, is_nan=is_nan,
    less=less, less_equal=less_equal, log=log, log1p=log1p, log_softmax=_nn_ops.log_softmax,
    logical_and=logical_and, logical_not=logical_not, logical_or=logical_or,
    logical_xor=logical_xor, maximum=maximum, minimum=minimum, mod=mod, multiply=multiply,
    negative=negative, not_equal=not_equal, pow=pow, reciprocal=reciprocal,
    reduce_all=reduce_all, reduce_any=reduce_any, reduce_max=reduce_max,
    reduce_mean=reduce_mean, reduce_min=reduce_min, reduce_prod=reduce_prod,
    reduce_sum=reduce_sum, round=round, rsqrt=rsqrt, sigmoid=sigmoid, sign=sign, sin=sin,
    softmax=_nn_ops.softmax, softplus=softplus, sqrt=sqrt, square=square,
    squared_difference=squared_difference, subtract=subtract, tan=tan, tanh=tanh,
    truediv=truediv)
"""The math ops under `tf.math`'s names (`rt.math.reduce_sum is rt.reduce_sum`), with
`softmax` and `log_softmax` from `rt.nn`."""

__version__ = "0.1.0.dev0"

# The public API (API.md): what `dir(rt)`, `from runtime import *` and API references show.
# The modules behind it (rt.executor, rt.context, ...) stay importable by their full names.
__all__ = [
    # dtypes, shapes, tensors
    "DType", "as_dtype", "bool", "bool_", "complex64", "complex128", "float16", "float32",
    "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "TensorShape", "Tensor", "EagerTensor", "SymbolicTensor", "is_tensor", "constant",
    "convert_to_tensor", "newaxis",
    # ops
    "abs", "add", "add_n", "argmax", "argmin", "bitwise_and", "bitwise_or", "bitwise_xor",
    "cast", "ceil", "clip_by_value", "cos", "divide", "equal", "exp", "floor", "floordiv",
    "floormod", "greater", "greater_equal", "invert", "is_finite", "is_nan", "less",
    "less_equal", "log", "log1p", "logical_and", "logical_not", "logical_or", "logical_xor",
    "matmul", "maximum", "minimum", "mod", "multiply", "negative", "not_equal", "pow",
    "reciprocal", "reduce_all", "reduce_any", "reduce_max", "reduce_mean", "reduce_min",
    "reduce_prod", "reduce_sum", "relu", "round", "rsqrt", "sigmoid", "sign", "sin",
    "softplus", "sqrt", "square", "squared_difference", "subtract", "tan", "tanh", "truediv",
    "broadcast_to", "concat", "expand_dims", "fill", "gather", "identity", "one_hot", "ones",
    "ones_like", "range", "rank", "reshape", "shape", "size", "split", "squeeze", "stack",
    "stop_gradient", "tile", "transpose", "unstack", "where", "zeros", "zeros_like",
    "Assert", "debugging", "print", "py_function", "nn", "random", "math",
    # state, control flow, graphs and functions
    "Variable", "global_variables_initializer", "trainable_variables", "cond", "while_loop",
    "control_dependencies", "group", "no_op", "Graph", "Operation", "get_default_graph",
    "reset_default_graph", "init_scope", "executing_eagerly", "run_functions_eagerly",
    "functions_run_eagerly", "function", "Function", "ConcreteFunction", "TensorSpec",
    "TracingWarning", "Session", "placeholder", "device",
    # gradients and training
    "GradientTape", "gradients", "gradients_function", "value_and_gradients_function",
    "implicit_gradients", "implicit_value_and_gradients", "optimizers", "layers", "data",
    # configuration, errors, files
    "config", "errors", "saved", "viz", "summary", "quantize",
]

_LAZY_SUBMODULES = ("saved", "viz", "onnx", "summary", "quantize", "distribute")
# Shown by dir() when their optional extra is installed: {module: the package it needs}
_EXTRA_SUBMODULES = {"onnx": "onnx", "distribute": "distributed"}


def __getattr__(name):
    """`rt.saved`, `rt.viz`, `rt.onnx`, `rt.summary`, `rt.quantize`, `rt.distribute`:
    imported on first use (fast `import`)."""
    if name in _LAZY_SUBMODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    """The public API; `rt.onnx` and `rt.distribute` too when their optional extras are
    installed (they are left out of `__all__`: a star import would import them, and they
    need the `onnx` and Dask packages)."""
    import importlib.util
    extra = [module for module, package in _EXTRA_SUBMODULES.items()
             if importlib.util.find_spec(package) is not None]
    return sorted(__all__ + extra + ["__version__"])
