"""The public API: convert, to_graph, to_code, do_not_convert, set_loop_options."""
import functools
import inspect
import types
import warnings

import runtime as rt

from autograph import conversion
from autograph import errors
from autograph import implicit_calls
from autograph.errors import ConversionError


def _function_of(entity):
    if isinstance(entity, rt.Function):
        return entity.python_function
    return entity


def to_graph(func, recursive=True):
    """The converted Python function (not traced): control flow dispatches at run time.

    Functions, lambdas and methods are converted; a `functools.partial` converts its
    function, a callable object its `__call__`, staticmethod/classmethod objects their
    function (and stay static/class methods); builtins and other C callables, which
    have no Python source, are returned as they are.
    """
    func = _function_of(func)
    options = conversion.ConversionOptions(recursive=recursive)
    if conversion.is_unconverted(func):
        return func
    if isinstance(func, staticmethod):
        return staticmethod(to_graph(func.__func__, recursive))
    if isinstance(func, classmethod):
        return classmethod(to_graph(func.__func__, recursive))
    if isinstance(func, functools.partial):
        return functools.partial(to_graph(func.func, recursive), *func.args, **func.keywords)
    if inspect.ismethod(func):
        if not inspect.isfunction(func.__func__):      # types.MethodType(callable, owner)
            return types.MethodType(to_graph(func.__func__, recursive), func.__self__)
        return _convert_function(func.__func__, options).__get__(func.__self__)
    if inspect.isfunction(func):
        return _convert_function(func, options)
    call = getattr(type(func), "__call__", None)
    if not inspect.isclass(func) and inspect.isfunction(call):
        return _convert_function(call, options).__get__(func)
    if callable(func):
        return func                     # a builtin or C function: nothing to convert
    raise TypeError(f"to_graph expects a callable, got {func!r}")


def _convert_function(fn, options):
    """`fn` converted; a generator function is refused by name (converted code calls
    generators with only their calls converted, but a graph function cannot be one)."""
    if inspect.isgeneratorfunction(fn):
        conversion.reject_generator(fn)
    return _noting_original_lines(conversion.convert(fn, options))


def _noting_original_lines(converted):
    """`converted`, whose exceptions get a note listing the user's lines they passed
    (`errors.add_original_frames_note`), as through `ag.convert`. Its frame is named as
    the user's function, as the converted code's are."""
    @functools.wraps(converted)
    def call(*args, **kwargs):
        try:
            return converted(*args, **kwargs)
        except Exception as e:
            errors.add_original_frames_note(e)
            raise
    code = converted.__code__
    call.__code__ = call.__code__.replace(co_name=code.co_name, co_qualname=code.co_qualname)
    return call


def to_code(func, recursive=False):
    """The Python source generated for `func`, as a string (`func` alone: the functions it
    calls appear as `ag__.converted_call(...)`; the CLI's `--dump --recursive` shows them)."""
    func = _function_of(func)
    # obj.method of a graph-function method: the method's code, not the binding's
    func = getattr(func, "unbound_function", func)
    if inspect.ismethod(func):
        func = func.__func__
    return conversion.generated_source(func, conversion.ConversionOptions(recursive=recursive))


def _converted_or_original(func, recursive):
    """The converted function; with one warning, the original if it cannot be converted."""
    try:
        return to_graph(func, recursive=recursive)
    except ConversionError as e:
        if "cannot read the source" not in str(e):
            raise
        conversion.warn_unconverted(func, str(e))
        return func


def convert(func=None, *, recursive=True, input_signature=None, jit_compile=False,
            reduce_retracing=False):
    """Decorator: convert `func`'s control flow, trace it per input signature, run graphs.

        @ag.convert
        def collatz(n):
            steps = 0
            while n != 1:                 # a tensor n: a graph while loop
                n = n // 2 if n % 2 == 0 else 3 * n + 1
                steps += 1
            return steps

        collatz(rt.constant(27))

    The result is an `rt.Function` (`.python_function`: `func` unconverted,
    `.get_concrete_function(*args)`: the trace for those arguments). `recursive=True`
    converts the user functions `func` calls too. `input_signature` and
    `reduce_retracing` as for `rt.function`; `jit_compile=True` runs its graphs in the
    compiled tier (numba: the `jit` extra).
    """
    if func is None:
        return functools.partial(convert, recursive=recursive, input_signature=input_signature,
                                 jit_compile=jit_compile, reduce_retracing=reduce_retracing)
    if isinstance(func, (staticmethod, classmethod)):      # @ag.convert above @staticmethod
        return type(func)(convert(func.__func__, recursive=recursive,
                                  input_signature=input_signature, jit_compile=jit_compile,
                                  reduce_retracing=reduce_retracing))
    original = _function_of(func)
    if not callable(original):
        raise TypeError(f"ag.convert expects a function (or another callable), got "
                        f"{type(original).__name__} {original!r:.60}")
    state = {}

    def traced(*args, **kwargs):
        converted = state.get("fn")
        if converted is None:
            converted = state["fn"] = _converted_or_original(original, recursive)
        if recursive:
            implicit_calls.prepare_values(args)
            implicit_calls.prepare_values(kwargs.values())
        return converted(*args, **kwargs)

    functools.update_wrapper(traced, original)
    function = rt.Function(original, input_signature=input_signature, _tracer=traced,
                           jit_compile=jit_compile, reduce_retracing=reduce_retracing)
    function._ag_converted = True
    return function


def do_not_convert(func=None):
    """`func`, wrapped so that it runs as it is: converted code calls it unconverted, and
    `ag.convert` / `to_graph` leave it so (as TensorFlow's, a wrapper: the user's function
    itself is not changed). Usable as a decorator, with or without parentheses."""
    if func is None:
        return do_not_convert
    if isinstance(func, (staticmethod, classmethod)):
        return type(func)(do_not_convert(func.__func__))
    if conversion.is_unconverted(func):
        return func

    @functools.wraps(func)
    def unconverted(*args, **kwargs):
        return func(*args, **kwargs)

    unconverted.__ag_do_not_convert__ = True
    return unconverted


def set_loop_options(maximum_iterations=None, shape_invariants=None):
    """Loop directive: put it first in a loop body.

    `maximum_iterations`: the graph loop stops after that many iterations.
    `shape_invariants=[(var, shape)]`: the shapes (None dims for those that change) of
    loop variables whose shape changes across iterations.
    The compiler reads it (and removes it) when it converts the loop; a call that runs is
    one the compiler did not see there, and warns that it has no effect.
    """
    del maximum_iterations, shape_invariants
    warnings.warn("ag.set_loop_options ran as a function call and has no effect: it is a "
                  "directive for the compiler, read only as the first statement of a loop "
                  "body in a converted function (ag.convert / ag.to_graph)",
                  stacklevel=2)


def _dataset_function(func):
    """How `rt.data` calls a `map` or `filter` function: converted, as converted code calls
    a user function (library functions as they are)."""
    @functools.wraps(func)
    def call(*args):
        return conversion.converted_call(func, args, None)
    return call


rt.data.set_function_converter(_dataset_function)
