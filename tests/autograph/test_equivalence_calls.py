"""Equivalence of converted call trees: helpers with their own control flow, lambdas,
closures, methods and classes, partials, default/keyword/star arguments, recursion,
converted and unconverted callees."""
import contextlib
import functools
import io

import pytest
from equivalence import assert_equivalent, cases, differences, static

import autograph as ag
import runtime as rt


# -- helper functions, converted recursively -----------------------------------------------

def clamp(x, low, high):
    if x < low:
        return low
    if x > high:
        return high
    return x


def count_down(n):
    steps = 0
    while n > 0:
        n -= 1
        steps += 1
    return steps


def calls_helpers(x):
    y = clamp(x, -5, 5)
    return y, count_down(y + 5)


def helper_in_loop(n):
    s = 0
    for i in range(n):
        s += clamp(i, 2, 4)
    return s


def helper_in_branch(x):
    if x > 0:
        x = clamp(x, 0, 3) * count_down(x)
    else:
        x = -clamp(-x, 0, 3)
    return x


@pytest.mark.parametrize("f, tensors", cases(calls_helpers, helper_in_loop,
                                             helper_in_branch))
@pytest.mark.parametrize("x", [0, 3, 9])
def test_helpers_with_control_flow(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


# -- lambdas -------------------------------------------------------------------------------

def lambdas(x):
    double = lambda v: v * 2                             # noqa: E731
    inc, dec = (lambda v: v + 1), (lambda v: v - 1)      # several on one line
    return double(inc(x)), dec(double(x))


def lambda_with_conditional(x):
    sign = lambda v: 1 if v > 0 else (-1 if v < 0 else 0)   # noqa: E731
    return sign(x), sign(-x)


def lambda_passed_to_helper(x):
    return apply_twice(lambda v: v * 3 + 1, x)


def apply_twice(fn, x):
    return fn(fn(x))


@pytest.mark.parametrize("f, tensors", cases(lambdas, lambda_with_conditional,
                                             lambda_passed_to_helper))
@pytest.mark.parametrize("x", [-2, 0, 5])
def test_lambdas(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


# -- nested functions and closures ---------------------------------------------------------

def reads_enclosing(x):
    offset = 10

    def add(v):
        if v > 0:
            return v + offset
        return v - offset

    return add(x)


def nonlocal_counter(x):
    count = 0

    def bump(v):
        nonlocal count
        count += 1
        return v + 1

    y = bump(x)
    y = bump(y)
    return y, count


def nonlocal_in_tensor_loop(n):
    total = 0

    def add(v):
        nonlocal total
        total = total + v

    i = 0
    while i < n:
        add(i)
        i += 1
    return total


def closure_returned_and_called(x):
    def make_scaler(k):
        def scale(v):
            return v * k
        return scale

    return make_scaler(3)(x), make_scaler(-1)(x)


def closure_appends_to_enclosing_list(x):
    seen = []

    def visit(v):
        seen.append(v)
        return v * 2

    y = visit(visit(x))
    return y, len(seen)


@pytest.mark.parametrize("f, tensors", cases(
    reads_enclosing, nonlocal_counter, nonlocal_in_tensor_loop, closure_returned_and_called,
    closure_appends_to_enclosing_list))
@pytest.mark.parametrize("x", [-3, 0, 4])
def test_nested_functions(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


# -- methods and classes -------------------------------------------------------------------

class Accumulator:
    scale = 2

    def __init__(self, start):
        self.total = start
        self.steps = 0

    def add(self, x):
        if x > 0:
            self.total = self.total + x * self.scale
        else:
            self.steps = self.steps + 1
        return self.total

    def run(self, n):
        i = 0
        while i < n:
            self.total = self.total + i
            self.steps += 1
            i += 1
        return self.total, self.steps

    def __call__(self, x):
        return self.add(x) + 1


def method_with_tensor_if(x):
    acc = Accumulator(10)
    acc.add(x)
    acc.add(-x)
    return acc.total, acc.steps


def method_with_tensor_loop(n):
    acc = Accumulator(0)
    return acc.run(n)


def callable_object(x):
    return Accumulator(1)(x)


def attribute_modified_in_tensor_if(x):
    acc = Accumulator(0)
    if x > 2:
        acc.total = x
    else:
        acc.steps = x
    return acc.total, acc.steps


@pytest.mark.parametrize("f, tensors", cases(method_with_tensor_if, method_with_tensor_loop,
                                             callable_object,
                                             attribute_modified_in_tensor_if))
@pytest.mark.parametrize("x", [0, 3])
def test_methods_and_attributes(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


def method_assigns_attribute_in_tensor_loop(n):
    acc = Accumulator(0)
    i = 0
    while i < n:
        acc.add(i)          # add() assigns acc.total: the loop must carry it
        i += 1
    return acc.total


def method_assigns_attribute_in_tensor_if(x):
    acc = Accumulator(0)
    if x > 1:
        acc.add(x)
    return acc.total


def push(values, v):
    values.append(v)


def helper_appends_in_tensor_loop(n):
    values = []
    for i in range(n):
        push(values, i)     # eagerly n appends; a trace of the body appends once
    return len(values)


@pytest.mark.parametrize("f, tensors", cases(
    method_assigns_attribute_in_tensor_loop,
    method_assigns_attribute_in_tensor_if,
    helper_appends_in_tensor_loop))    # the list grows in place: the caller's state
@pytest.mark.parametrize("x", [0, 3])
def test_callee_mutates_caller_objects_in_tensor_control_flow(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


# -- methods Python calls implicitly: properties, operators, items, `with`, __init__ ---------

class Interval:
    """A value kept between bounds; its property, operators and items have tensor `if`s."""

    def __init__(self, value, low=0):
        if value < low:                     # a tensor `if` in a constructor
            value = low
        self.low = low
        self._value = value

    @property
    def value(self):
        if self._value > 10:
            return self._value - 10
        return self._value

    @value.setter
    def value(self, v):
        if v < self.low:
            print("clamped")
            v = self.low
        self._value = v

    def __add__(self, other):
        print("add")
        return Interval(self._value + (other._value if isinstance(other, Interval) else other))

    __radd__ = __add__

    def __neg__(self):
        return Interval(-self._value, low=-100)

    def __lt__(self, other):
        if self._value < other._value:
            return True
        return False

    def __getitem__(self, i):
        if i > 0:
            return self._value * i
        return self.low

    def __setitem__(self, i, v):
        if i > 0:
            self._value = v * i

    def __enter__(self):
        print("enter")
        if self._value > 1:
            self._value = self._value - 1
        return self

    def __exit__(self, *exc):
        print("exit")
        return False


class Scaled(Interval):
    """Inherits the dunders; overrides the property."""

    @property
    def value(self):
        if self._value > 2:
            return self._value * 2
        return self._value


def property_get_and_set(x):
    box = Interval(x)
    before = box.value
    box.value = x - 5
    return before, box.value


def operators_of_a_user_class(x):
    a, b = Interval(x), Interval(3)
    c = a + b
    d = 1 + -a
    return c.value, d._value, a < b, b < a


def items_of_a_user_class(x):
    box = Interval(x)
    box[x] = x + 1
    return box[1], box[0], box[x]


def user_context_manager(x):
    with Interval(x) as box:
        y = box.value + 1
    return y, box._value


def inherited_operators(x):
    s = Scaled(x) + Scaled(1)
    return s.value, Scaled(x).value


def implicit_calls_in_a_tensor_loop(n):
    total = Interval(0)
    i = 0
    while i < n:
        with Interval(i - 1) as step:
            total.value = total._value + step.value - 1
        i += 1
    return total.value


@pytest.mark.parametrize("f, tensors", cases(property_get_and_set, operators_of_a_user_class,
                                             items_of_a_user_class, user_context_manager,
                                             inherited_operators,
                                             implicit_calls_in_a_tensor_loop))
@pytest.mark.parametrize("x", [-2, 4, 13])
def test_methods_python_calls_implicitly(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


def reads_an_object_passed_in(box, x):
    return box.magnitude + box[x]


def test_methods_python_calls_implicitly_of_an_object_passed_in(tensors):
    class Local:            # named by no module: known by the argument only
        def __init__(self, v):
            self.v = v

        @property
        def magnitude(self):
            if self.v < 0:
                print("negative")
                return -self.v
            return self.v

        def __getitem__(self, i):
            return self.v * 10 if i > 0 else self.v

    convert = rt.constant if tensors else (lambda v: v)
    for v in (-3, 2):
        expected = reads_an_object_passed_in(Local(v), v)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            got = ag.convert(reads_an_object_passed_in)(Local(convert(v)), convert(v))
        assert got == expected and out.getvalue() == ("negative\n" if v < 0 else "")
    for v in (-3, 2):
        assert_equivalent(lambda x: reads_an_object_passed_in(Local(x), x), v,
                          tensors=tensors)


def test_methods_python_calls_implicitly_run_as_written_outside_converted_code(capsys):
    ag.convert(operators_of_a_user_class)(rt.constant(3))
    capsys.readouterr()
    box = Interval(4) + Interval(5)             # plain Python again: prints as it runs
    assert capsys.readouterr().out == "add\n" and box.value == 9
    assert Interval.value.fget.__wrapped__.__name__ == "value"
    with pytest.raises(TypeError, match="bool"):    # traced unconverted: no graph cond
        rt.function(lambda x: Interval(x).value)(rt.constant(1.0))


def test_library_classes_are_left_as_they_are():
    import collections
    before = dict(vars(collections.OrderedDict))
    ag.convert(lambda x: collections.OrderedDict(a=x)["a"] + Interval(x).value)(rt.constant(1))
    assert dict(vars(collections.OrderedDict)) == before


class Counter:
    def __init__(self):
        self.n = 0

    def count_to(self, limit):
        while self.n < limit:
            self.n += 1
        return self.n


@pytest.mark.parametrize("limit", [0, 5])
def test_bound_method_converted_directly(limit, tensors):
    # A fresh object per run: tracing leaves symbolic tensors in the attributes it assigns.
    limit = rt.constant(limit) if tensors else limit
    expected = Counter().count_to(limit)
    for convert in (ag.convert, ag.to_graph):
        assert differences(expected, convert(Counter().count_to)(limit)) == []


class Base:
    def value(self, x):
        return x + 1


class Derived(Base):
    def value(self, x):
        if x > 0:
            return super().value(x) * 10
        return super().value(x)


def calls_super(x):
    return Derived().value(x)


@pytest.mark.parametrize("x", [-1, 2])
def test_super_call(x, tensors):
    assert_equivalent(calls_super, x, tensors=tensors)


# -- functools.partial, defaults, keywords, *args/**kwargs ---------------------------------

def power_sum(x, exponent=2, bias=0):
    result = bias
    for _ in range(exponent):
        result = result + x
    return result


def uses_partial(x):
    cube = functools.partial(power_sum, exponent=3)
    biased = functools.partial(power_sum, bias=100)
    return cube(x), biased(x), biased(x, exponent=1)


def uses_defaults_and_keywords(x):
    return power_sum(x), power_sum(x, 3), power_sum(x, bias=x), power_sum(exponent=1, x=x)


def star_args(*values, **options):
    total = options.get("start", 0)
    for v in values:
        if v > 0:
            total += v
    return total


def calls_star_args(x):
    args = (x, -x, 2 * x)
    kwargs = {"start": 1}
    return star_args(*args), star_args(x, x, **kwargs), star_args(start=x)


@pytest.mark.parametrize("f, tensors", cases(uses_partial, uses_defaults_and_keywords,
                                             calls_star_args))
@pytest.mark.parametrize("x", [-2, 3])
def test_arguments(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


def test_star_args_function_itself(tensors):
    assert_equivalent(star_args, 1, -2, 3, tensors=tensors, kwargs={"start": 10})


def test_keyword_arguments_given_to_converted_function(tensors):
    assert_equivalent(power_sum, 4, tensors=tensors, kwargs={"bias": 1, "exponent": 3})


# -- recursion with a Python depth -----------------------------------------------------------

def repeat_double(x, depth):
    if depth == 0:
        return x
    if x > 100:
        return repeat_double(x - 100, depth - 1)
    return repeat_double(x * 2, depth - 1)


@pytest.mark.parametrize("depth", [0, 3, 6])
def test_recursion_with_python_depth(depth, tensors):
    assert_equivalent(repeat_double, 7, static(depth), tensors=tensors)


# -- converted and unconverted callees -------------------------------------------------------

@ag.convert
def decorated_square_or_negate(x):
    if x > 0:
        return x * x
    return -x


def calls_decorated(x):
    y = decorated_square_or_negate(x)
    return decorated_square_or_negate(y - 10)


@ag.do_not_convert
def python_only(x):
    # Not converted: with a tensor this `if` would fail inside a graph, so it is used on
    # Python values only, which proves the call was left alone.
    if isinstance(x, int):
        return x + 1000
    return x


def calls_do_not_convert(x):
    return python_only(3) + x


def uses_runtime_and_numpy(x):
    import numpy as np
    return rt.maximum(x, 2) + int(np.int32(3)), rt.reduce_sum(rt.stack([x, x]))


@pytest.mark.parametrize("f, tensors", cases(calls_decorated, calls_do_not_convert,
                                             uses_runtime_and_numpy))
@pytest.mark.parametrize("x", [-4, 4])
def test_converted_and_unconverted_callees(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


# -- do_not_convert holds at the top level too, and leaves the user's function alone -------

def sign_of(x):
    if x > 0:
        return 1
    return -1


class Meter:
    @ag.do_not_convert
    def read(self, x):
        if isinstance(x, int):          # a Python `if`, unconverted: Python values only
            return x + 100
        return x

    @ag.do_not_convert
    @staticmethod
    def static_read(x):
        return x if isinstance(x, int) else -1


def test_do_not_convert_wraps_without_touching_the_function():
    plain = ag.do_not_convert(sign_of)
    assert plain is not sign_of and plain.__wrapped__ is sign_of
    assert not hasattr(sign_of, "__ag_do_not_convert__")
    assert plain.__name__ == "sign_of" and plain(3) == 1
    assert ag.do_not_convert()(sign_of)(-2) == -1           # as @ag.do_not_convert()
    assert ag.to_graph(plain) is plain
    assert int(ag.convert(sign_of)(rt.constant(3))) == 1   # the original still converts


def test_convert_of_a_do_not_convert_function_traces_it_unconverted():
    traced = ag.convert(ag.do_not_convert(sign_of))
    assert traced(3) == 1                                   # Python values: plain Python
    with pytest.raises(TypeError, match="ag.convert|autograph.convert"):
        traced(rt.constant(3))                              # a Python `if` on a tensor


def calls_unconverted_methods(x):
    meter = Meter()
    return meter.read(3) + Meter.static_read(4) + meter.static_read(x)


@pytest.mark.parametrize("x", [-4, 4])
def test_do_not_convert_methods_called_from_converted_code(x):
    assert_equivalent(calls_unconverted_methods, x, tensors=False)
