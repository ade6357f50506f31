"""The public surface: `__all__` and `dir()` of runtime and autograph show the API (API.md),
not the modules behind it; the TensorFlow names users reach for first exist."""
import importlib
import importlib.util
import subprocess
import sys
import types

import numpy as np
import pytest

import autograph as ag
import runtime as rt

API_MD_RUNTIME = """
float16 float32 float64 int8 int32 int64 uint8 bool_ as_dtype constant convert_to_tensor
Tensor TensorShape add subtract multiply divide floordiv mod pow negative abs sign sqrt square
exp log sin cos tanh sigmoid relu softplus maximum minimum floor ceil round clip_by_value equal
not_equal less less_equal greater greater_equal logical_and logical_or logical_not where
reduce_sum reduce_mean reduce_max reduce_min reduce_prod reduce_any reduce_all argmax argmin
matmul transpose reshape shape size rank expand_dims squeeze concat stack unstack split tile
gather one_hot cast zeros ones zeros_like ones_like fill range identity stop_gradient nn random
print Assert debugging py_function Variable cond while_loop control_dependencies group no_op
executing_eagerly function TensorSpec ConcreteFunction run_functions_eagerly Graph placeholder
Session global_variables_initializer GradientTape gradients gradients_function
value_and_gradients_function implicit_gradients implicit_value_and_gradients optimizers layers
data config errors saved viz summary bool newaxis math
""".split()
INTERNAL = ["executor", "context", "traceback_utils", "graph", "tensor", "ops", "variables",
            "control_flow", "session", "shapes", "nest", "dtypes", "auto_control_deps",
            "trace_warnings"]


def test_runtime_all_lists_the_api_and_every_name_exists():
    assert set(API_MD_RUNTIME) <= set(rt.__all__)
    assert [n for n in rt.__all__ if not hasattr(rt, n)] == []
    assert len(rt.__all__) == len(set(rt.__all__))


def test_dir_shows_the_api_not_the_internal_modules():
    shown = dir(rt)
    assert "GradientTape" in shown and "math" in shown
    assert ("onnx" in shown) == (importlib.util.find_spec("onnx") is not None)
    for name in shown:                          # every name shown can be looked up
        getattr(rt, name)
    assert not set(INTERNAL) & set(shown)
    for name in INTERNAL:                       # still importable by their full names
        assert isinstance(importlib.import_module(f"runtime.{name}"), types.ModuleType)
    assert dir(ag) == sorted(ag.__all__ + ["__version__"])
    assert "conversion" not in dir(ag) and importlib.import_module("autograph.conversion")


def test_star_imports_give_the_api_without_the_optional_extras():
    code = ("from runtime import *; from autograph import *; import sys\n"
            "assert GradientTape and convert and 'runtime.onnx' not in sys.modules\n"
            "print(float(math.sqrt(constant(9.0))))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "3.0\n"


def test_tensorflow_names_bool_and_newaxis():
    assert rt.bool is rt.bool_ and rt.constant([True]).dtype == rt.bool
    assert rt.cast(rt.constant([0, 2]), rt.bool).numpy().tolist() == [False, True]
    x = rt.constant([1.0, 2.0, 3.0])
    assert x[rt.newaxis].shape == (1, 3) and x[:, rt.newaxis].shape == (3, 1)

    @rt.function
    def columns(v):
        return v[:, rt.newaxis] * v[rt.newaxis, :]

    np.testing.assert_array_equal(columns(x).numpy(), np.outer([1, 2, 3], [1, 2, 3]))


@pytest.mark.parametrize("name", [
    "abs", "add", "add_n", "argmax", "argmin", "ceil", "cos", "divide", "equal", "exp", "floor",
    "floordiv", "floormod", "greater", "greater_equal", "is_finite", "is_nan", "less",
    "less_equal", "log", "log1p", "logical_and", "logical_not", "logical_or", "logical_xor",
    "maximum", "minimum", "mod", "multiply", "negative", "not_equal", "pow", "reciprocal",
    "reduce_all", "reduce_any", "reduce_max", "reduce_mean", "reduce_min", "reduce_prod",
    "reduce_sum", "round", "rsqrt", "sigmoid", "sign", "sin", "softplus", "sqrt", "square",
    "squared_difference", "subtract", "tan", "tanh", "truediv"])
def test_rt_math_has_the_tf_math_names_of_the_ops(name):
    assert getattr(rt.math, name) is getattr(rt, name)


def test_rt_math_softmax_is_the_nn_one():
    assert rt.math.softmax is rt.nn.softmax and rt.math.log_softmax is rt.nn.log_softmax
    np.testing.assert_allclose(rt.math.reduce_sum(rt.math.softmax(rt.constant([1.0, 2.0]))),
                               1.0, rtol=1e-6)
