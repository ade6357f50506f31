"""Deployment rewrites (`rt.quantize`): a function with its weights stored as int8 or float16.

    q = rt.quantize.weights(model_fn, x, mode="int8")   # an rt.function and example arguments
    q = rt.quantize.weights(concrete_fn, mode="float16")
    q(x)                                  # close to model_fn(x)
    rt.saved.save(q, "model/")            # the weights saved as int8: about 4x smaller
    rt.onnx.export(q, "model.onnx")       # QDQ form: DequantizeLinear(int8, scale), MatMul

The weights are the float32 constants and variables read by matmuls, of at least
`min_elements` elements (smaller ones cost more in scales and run time than they save;
TF-Lite's threshold is the same 1024). int8 is symmetric with one scale per output channel
(`per_channel=False`: one per tensor); float16 casts back to float32 when the graph runs.
The rewrite is the graph pass `runtime.passes.quantize` (its module shows the graphs);
everything else in the graph stays as traced.

Variables are read once, now (as TF-Lite converts a model's variables to constants): the
quantized function holds their values at quantization time, and later assignments do not
reach it. A variable the function itself assigns is left a variable, unquantized.
"""
import warnings

from .function import ConcreteFunction, Function
from .graph import clone_graph
from .passes.quantize import MODES, quantize_weights

__all__ = ["weights", "MIN_ELEMENTS"]

MIN_ELEMENTS = 1024


def weights(fn, *args, mode="int8", per_channel=True, min_elements=MIN_ELEMENTS, **kwargs):
    """A ConcreteFunction computing `fn` with quantized weights (see the module doc).

    `fn` is a ConcreteFunction, or an `rt.function` / `ag.convert` function with example
    arguments `*args, **kwargs` (TensorSpecs too); without them, the trace of its
    input_signature or its only trace.
    """
    if mode not in MODES:
        raise ValueError(f"rt.quantize.weights: mode must be one of {MODES}, got {mode!r}")
    if not isinstance(per_channel, bool):
        raise TypeError(f"rt.quantize.weights: per_channel must be True or False, got "
                        f"{per_channel!r}")
    if isinstance(min_elements, bool) or not isinstance(min_elements, int) or min_elements < 0:
        raise ValueError(f"rt.quantize.weights: min_elements must be an int >= 0, got "
                         f"{min_elements!r}")
    concrete = _concrete(fn, args, kwargs)
    graph = clone_graph(concrete.graph, concrete.graph.outer_graph)
    graph.optimized = False                 # a function of its own: the passes run on it
    done = quantize_weights(graph, mode, per_channel, min_elements)
    if not done:
        warnings.warn(f"rt.quantize.weights: '{concrete.name}' has no weights to quantize "
                      f"(float32 constants or variables of at least {min_elements} elements "
                      f"read only by matmul); it is returned unchanged", stacklevel=2)
    return ConcreteFunction(graph, concrete._output_template, concrete._arg_template,
                            concrete.name)


def _concrete(fn, args, kwargs):
    if isinstance(fn, ConcreteFunction):
        if args or kwargs:
            raise TypeError("rt.quantize.weights: a ConcreteFunction is one trace already; "
                            "give no example arguments")
        return fn
    if isinstance(fn, Function):
        if args or kwargs:
            return fn.get_concrete_function(*args, **kwargs)
        from .saved import concrete_function_of
        return concrete_function_of(fn)
    raise TypeError(f"rt.quantize.weights expects an rt.function or a ConcreteFunction, got "
                    f"{type(fn).__name__} {fn!r:.60}")
