"""Functions whose source is unavailable or odd: each converts, or runs as it is with one
clear warning, or fails with a clear error.

    source unavailable (REPL, exec)       runs unconverted, one warning; to_graph: ConversionError
    builtins, C functions, numpy, stdlib  called as they are from converted code
    functools.partial                     converted through (given to convert, or called)
    bound methods, callable objects       converted with their instance (also a callable
                                          object bound by types.MethodType)
    staticmethod / classmethod            with @ag.convert above or below them
    decorators above / below @convert     functools.wraps wrappers or plain ones
    nested functions, lambdas in lists    converted where they are called
    recursion                             Python depth: converted; a depth decided by a
                                          tensor: a StagingError naming the recursive call
"""
import code
import functools
import math
import operator
import time
import types
import warnings

import numpy as np
import pytest
from equivalence import assert_equivalent, static

import autograph as ag
import runtime as rt

def unconverted_warnings(caught):
    return [str(w.message) for w in caught if "could not convert" in str(w.message)]


@pytest.fixture
def caught():
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        yield records


# -- source unavailable: the REPL and exec ---------------------------------------------------

def define_in_repl(source, name):
    """`name` defined by typing `source` into an interactive interpreter (`<stdin>`)."""
    interpreter = code.InteractiveInterpreter({"rt": rt})
    assert interpreter.runsource(source + "\n", "<stdin>", "exec") is False
    return interpreter.locals[name]


def define_by_exec(source, name):
    namespace = {"rt": rt}
    exec(source, namespace)  # noqa: S102
    return namespace[name]


@pytest.mark.parametrize("define", [define_in_repl, define_by_exec])
def test_a_function_without_source_runs_unconverted_with_one_warning(define, caught):
    # Named per case: the warning is given once per code object, and code objects equal
    # in all but their file compare equal.
    name = f"triple_{define.__name__}"
    triple = define(f"def {name}(x):\n    return x * 3 + rt.reduce_sum(x)\n", name)
    f = ag.convert(triple)
    assert f(rt.constant(2)).numpy() == 8
    assert f(rt.constant([1, 2])).numpy().tolist() == [6, 9]      # traced again
    messages = unconverted_warnings(caught)
    assert len(messages) == 1 and name in messages[0]
    assert "cannot read the source" in messages[0]


@pytest.mark.parametrize("define", [define_in_repl, define_by_exec])
def test_a_function_without_source_called_from_converted_code(define, caught):
    name = f"double_{define.__name__}"
    double = define(f"def {name}(x):\n    return x * 2\n", name)

    def caller(x):
        total = 0
        for i in range(x):
            total += double(i)
        return total

    assert_equivalent(caller, 4)
    assert_equivalent(caller, 4, tensors=False)
    messages = unconverted_warnings(caught)
    assert len(messages) == 1 and name in messages[0]


def test_unconverted_tensor_control_flow_fails_clearly_after_the_warning(caught):
    sign = define_by_exec("def sign(x):\n    if x > 0:\n        return 1\n    return -1\n",
                          "sign")

    def caller(x):
        return sign(x) * x

    assert int(ag.to_graph(caller)(rt.constant(-3))) == 3     # eagerly Python copes
    with pytest.raises(TypeError, match="as a Python bool while tracing"):
        ag.convert(caller)(rt.constant(-3))
    assert len(unconverted_warnings(caught)) == 1


def test_to_graph_of_a_function_without_source_is_a_conversion_error():
    double = define_by_exec("def double(x):\n    return x * 2\n", "double")
    with pytest.raises(ag.ConversionError, match="cannot read the source of function 'double'"):
        ag.to_graph(double)


# -- builtins and C functions called from converted code --------------------------------------

def uses_builtins(x):
    values = [x, x + 1, 2]
    return (abs(x - 5), max(x, 2), min(x, 2), len(values), sum(values), pow(x, 2),
            math.floor(2.5) + x, operator.add(x, 1), functools.reduce(operator.mul, values),
            [v * 2 for v in map(abs, values)], list(zip(values, "abc"))[1][1],
            isinstance(x, (int, rt.Tensor)), int(np.int32(3)) * x, float(np.sqrt(4.0)))


def builtins_inside_tensor_control_flow(x):
    total = 0
    while total < 20:
        total += max(abs(x), 1) + len([x, x])
    if min(x, 3) > 1:
        total = operator.neg(total)
    return total


@pytest.mark.parametrize("f", [uses_builtins, builtins_inside_tensor_control_flow])
@pytest.mark.parametrize("x", [-2, 4])
def test_builtins_and_c_functions_are_called_as_they_are(f, x, tensors, caught):
    assert_equivalent(f, x, tensors=tensors)
    assert unconverted_warnings(caught) == []


@pytest.mark.parametrize("builtin", [abs, math.fabs, np.negative], ids=["abs", "fabs", "np"])
def test_a_builtin_given_to_convert_runs_as_it_is(builtin):
    # Nothing to convert: eagerly it is the builtin itself.
    assert ag.to_graph(builtin) is builtin
    assert float(ag.to_graph(builtin)(rt.constant(-2.0))) == float(builtin(-2.0))


def test_a_builtin_traced_works_when_it_takes_tensors_or_says_why():
    assert float(ag.convert(abs)(rt.constant(-2.0))) == 2.0      # abs() of a tensor: rt.abs
    with pytest.raises(TypeError, match="symbolic tensor .* as a Python float"):
        ag.convert(math.fabs)(rt.constant(-2.0))              # needs a Python float


# -- functools.partial --------------------------------------------------------------------------

def climb(x, step, limit=10):
    while x < limit:
        x = x + step
    if x % 2 == 0:
        x = x // 2
    return x


def calls_partials(x):
    by_three = functools.partial(climb, step=3)
    to_twenty = functools.partial(by_three, limit=20)        # a partial of a partial
    return by_three(x), to_twenty(x), functools.partial(climb, x, 4)()


@pytest.mark.parametrize("x", [-5, 1, 12])
def test_partials_called_from_converted_code(x, tensors):
    assert_equivalent(calls_partials, x, tensors=tensors)


def test_a_partial_given_to_convert():
    by_three = functools.partial(climb, step=3)
    for convert in (ag.convert, ag.to_graph):
        assert int(convert(by_three)(rt.constant(1))) == 5


# -- methods: bound, static, class; callable objects --------------------------------------------

class Stepper:
    def __init__(self, step):
        self.step = step

    def climb(self, x):
        while x < 10:
            x = x + self.step
        return x

    @ag.convert
    def converted_method(self, x):
        if x > 0:
            return x * self.step
        return -x

    @staticmethod
    @ag.convert
    def static_converted(x):
        if x > 0:
            return x * 2
        return -x

    @classmethod
    @ag.convert
    def class_converted(cls, x):
        if x > 0:
            return x * 3
        return -x

    @staticmethod
    def static_plain(x):
        while x < 10:
            x = x + 4
        return x

    @classmethod
    def class_plain(cls, x):
        return cls(2).climb(x)

    def __call__(self, x):
        if x > 0:
            return self.climb(x)
        return x - self.step


def test_a_bound_method_given_to_convert(tensors):
    x = rt.constant(3) if tensors else 3
    stepper = Stepper(4)
    for convert in (ag.convert, ag.to_graph):
        assert int(convert(stepper.climb)(x)) == 11
        assert int(convert(Stepper.climb)(stepper, x)) == 11        # the function, self given


@pytest.mark.parametrize("x, expected", [(3, 15), (-2, 2)])
def test_convert_on_a_method_through_the_instance_and_the_class(x, expected, tensors):
    x = rt.constant(x) if tensors else x
    stepper = Stepper(5)
    assert int(stepper.converted_method(x)) == expected
    assert int(Stepper.converted_method(stepper, x)) == expected


@pytest.mark.parametrize("x, static_expected, class_expected", [(3, 6, 9), (-2, 2, 2)])
def test_static_and_class_methods_over_convert(x, static_expected, class_expected, tensors):
    x = rt.constant(x) if tensors else x
    for owner in (Stepper, Stepper(1)):
        assert int(owner.static_converted(x)) == static_expected
        assert int(owner.class_converted(x)) == class_expected


def calls_methods(x):
    stepper = Stepper(3)
    return (stepper.climb(x), Stepper.climb(stepper, x), Stepper.static_plain(x),
            stepper.static_plain(x), Stepper.class_plain(x), stepper.class_plain(x),
            stepper(x), Stepper(1)(x))


@pytest.mark.parametrize("x", [-4, 5])
def test_methods_and_callable_objects_called_from_converted_code(x, tensors):
    assert_equivalent(calls_methods, x, tensors=tensors)


class WithConvertOutside:
    @ag.convert
    @staticmethod
    def static(x):
        if x > 0:
            return x * 2
        return -x

    @ag.convert
    @classmethod
    def klass(cls, x):
        if x > 0:
            return x * 3
        return -x


@pytest.mark.parametrize("name, expected", [("static", 6), ("klass", 9)])
def test_convert_over_staticmethod_and_classmethod(name, expected):
    for owner in (WithConvertOutside, WithConvertOutside()):
        assert int(getattr(owner, name)(rt.constant(3))) == expected


def test_a_callable_object_given_to_convert():
    for convert in (ag.convert, ag.to_graph):
        assert int(convert(Stepper(4))(rt.constant(3))) == 11


class Offset:
    """A callable object bound as a method by types.MethodType: called with its owner."""

    def __call__(self, owner, x):
        if x > 0:
            return owner.step + x
        return -x


def calls_a_method_made_of_a_callable_object(x):
    method = types.MethodType(Offset(), Stepper(7))
    return method(x)


@pytest.mark.parametrize("x", [-4, 5])
def test_a_method_made_of_a_callable_object(x, tensors):
    assert_equivalent(calls_a_method_made_of_a_callable_object, x, tensors=tensors)
    method = types.MethodType(Offset(), Stepper(7))
    x = rt.constant(x) if tensors else x
    for convert in (ag.convert, ag.to_graph):
        assert int(convert(method)(x)) == int(method(x))


# -- decorators above and below @ag.convert ----------------------------------------------------

def plus_hundred(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args) + 100
    return wrapper


def times_ten(fn):                      # no functools.wraps
    def wrapper(*args):
        return fn(*args) * 10
    return wrapper


@plus_hundred
@ag.convert
def decorated_above(x):
    if x > 0:
        return x * 2
    return -x


@ag.convert
@plus_hundred
def decorated_below(x):
    if x > 0:
        return x * 2
    return -x


@ag.convert
@times_ten
@plus_hundred
def decorated_below_twice(x):
    while x < 10:
        x = x + 3
    return x


@pytest.mark.parametrize("f, x, expected", [
    (decorated_above, 3, 106), (decorated_above, -2, 102),
    (decorated_below, 3, 106), (decorated_below, -2, 102),
    (decorated_below_twice, 3, 1120), (decorated_below_twice, 11, 1110),
])
def test_decorators_above_and_below_convert(f, x, expected, tensors, caught):
    assert int(f(rt.constant(x) if tensors else x)) == expected
    assert unconverted_warnings(caught) == []
    if isinstance(f, rt.Function):
        trace = f.get_concrete_function(rt.constant(x)).graph
        assert any(op.type in ("cond", "while") for op in trace.ops)   # converted


# -- functions defined inside converted functions, lambdas in containers -------------------------

def defines_helpers(x):
    offset = 2

    def shift(v):
        if v > 0:
            return v + offset
        return v - offset

    def walk(v, n):
        for _ in range(n):
            v = shift(v)
        return v

    total = 0
    i = 0
    while i < 3:
        total += walk(x, i)
        i += 1
    return total, shift(-x)


def lambdas_in_containers(x):
    table = [lambda v: v * 2 if v > 0 else -v, lambda v: v - 1]
    named = {"square": lambda v: v * v, "clip": lambda v, top=3: top if v > top else v}
    pairs = (lambda v: v + 1,)
    results = [f(x) for f in table] + [named[k](x) for k in sorted(named)] + [pairs[0](x)]
    i = 0
    while i < 2:
        x = table[i](x)
        i += 1
    return results, x


@pytest.mark.parametrize("f", [defines_helpers, lambdas_in_containers])
@pytest.mark.parametrize("x", [-3, 4])
def test_nested_functions_and_lambdas_in_containers(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


ROUNDING = {"floor": lambda v: math.floor(2.5) + v, "ceil": lambda v: math.ceil(2.5) - v}


def lambdas_calling_module_functions(x):
    return ROUNDING["floor"](x), ROUNDING["ceil"](x)


def test_two_lambdas_on_one_line_calling_module_functions():
    assert_equivalent(lambdas_calling_module_functions, 1)


# -- recursion -----------------------------------------------------------------------------------

def power_tower(x, depth):
    if depth == 0:
        return x
    if x > 50:
        return power_tower(x - 50, depth - 1) + 1
    return power_tower(x * 2, depth - 1)


@pytest.mark.parametrize("depth", [0, 1, 5])
def test_recursion_with_a_python_depth(depth, tensors):
    assert_equivalent(power_tower, 7, static(depth), tensors=tensors)


def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)


def countdown_with_factorials(n):
    while n > 100:
        n = n - factorial(n)
    return n


@pytest.mark.parametrize("f, line", [
    (factorial, "return n * factorial(n - 1)"),
    (countdown_with_factorials, "return n * factorial(n - 1)"),
])
def test_recursion_whose_depth_is_a_tensor_is_a_clear_staging_error(f, line):
    start = time.perf_counter()
    with pytest.raises(ag.StagingError) as info:
        ag.convert(f)(rt.constant(5))
    assert time.perf_counter() - start < 10
    message = str(info.value)
    assert "maximum recursion depth exceeded while tracing a tensor `if` or loop" in message
    assert f"test_odd_sources.py:" in message and line in message
    assert "Make the recursion depth a Python value" in message


def test_recursion_whose_depth_is_a_tensor_runs_eagerly_and_on_python_values():
    assert int(ag.to_graph(factorial)(rt.constant(5))) == 120      # eager: conditions known
    assert int(ag.convert(factorial)(5)) == 120                      # Python value: unrolled
