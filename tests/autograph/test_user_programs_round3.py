"""User programs, round 3: plain Python the way researchers write it - loops with break,
continue and early returns, containers, classes, closures, generators, try/with, f-strings,
recursion, *args/**kwargs - each run eagerly, converted-and-traced and converted-eagerly
(`assert_equivalent`) with Python and with tensor arguments: results and printed text equal.

Programs are grouped by category; `@given(...)` lists the argument tuples each is run with.
"""
import collections
import contextlib
import dataclasses
import functools
import itertools
import traceback

import numpy as np
import pytest
from equivalence import assert_equivalent, static

import autograph as ag
import runtime as rt

PROGRAMS = []


def given(*arg_sets):
    """Register a program with the argument tuples it is checked with."""
    def register(f):
        f.arg_sets = arg_sets
        PROGRAMS.append(f)
        return f
    return register


# -- loops: break, continue, else, early return --------------------------------------------

@given((10,), (1,), (0,))
def gcd_with_tuple_swap(n):
    a, b = n + 12, 18
    while b != 0:
        a, b = b, a % b
    return a


@given((5,), (0,))
def nested_loops_inner_break_counts(n):
    pairs = 0
    for i in range(n):
        for j in range(n):
            if j > i:
                break
            pairs += 1
    return pairs


@given((7,), (3,))
def while_continue_after_increment(n):
    i = 0
    odd_sum = 0
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        odd_sum += i
    return odd_sum, i


@given((4,), (9,))
def early_return_from_nested_loop(n):
    for i in range(1, n):
        for j in range(1, n):
            if i * j == 12:
                return i, j
    return -1, -1


@given((6,), (2,))
def for_else_without_break(n):
    total = 0
    for i in range(n):
        if i > 10:
            break
        total += i
    else:
        total = -total
    return total


@given((3,), (8,))
def while_true_with_return(n):
    k = 1
    while True:
        k *= 2
        if k > n:
            return k


@given((5,),)
def enumerate_with_start(n):
    weighted = 0
    for pos, value in enumerate(range(n), start=1):
        weighted += pos * value
    return weighted


@given((np.array([3, 1, 4, 1, 5], np.int32), np.array([2, 7, 1, 8, 2], np.int32)),)
def zip_running_max_of_products(u, v):
    best = 0
    for a, b in zip(u, v):
        p = a * b
        if p > best:
            best = p
    return best


@given((6,), (1,))
def reversed_range(n):
    digits = []
    for i in reversed(range(n)):
        digits.append(i)
    print(digits)
    return len(digits)


@given((10, 2), (3, 5))
def range_with_negative_step(hi, lo):
    total = 0
    for i in range(hi, lo, -2):
        total += i
    return total


@given((np.array([1.0, -2.0, 3.0, -4.0], np.float32),),)
def range_len_of_tensor(v):
    s = 0.0
    for i in range(len(v)):
        if v[i] < 0:
            continue
        s += v[i]
    return s


@given((5,), (0,))
def loop_variable_read_after_loop(n):
    last = -1
    for i in range(n):
        last = i * i
    return last


@given((20,), (1,))
def while_else_with_break(n):
    i = 2
    while i * i <= n:
        if n % i == 0:
            found = i
            break
        i += 1
    else:
        found = n
    return found


@given((4,),)
def three_level_nesting_with_continue(n):
    count = 0
    for i in range(n):
        for j in range(n):
            if (i + j) % 2 == 1:
                continue
            for k in range(n):
                if k == j:
                    break
                count += 1
    return count


@given((np.array([0.5, 1.5, -0.5, 2.5], np.float32), 1.0),)
def first_index_above(v, threshold):
    for i, x in enumerate(v):
        if x > threshold:
            return i
    return -1


# -- builtins ------------------------------------------------------------------------------

@given((3.5, 0.0, 2.0), (-1.0, 0.0, 2.0))
def clamp_with_min_max(x, lo, hi):
    return min(max(x, lo), hi)


@given((2, 3, 4),)
def sum_and_max_of_list(a, b, c):
    values = [a * 2, b + 1, c - 3]
    return sum(values), max(values), min(values)


@given((np.array([1.0, 2.0, 3.0], np.float32),),)
def sum_of_generator_over_tensor(v):
    return sum(x * x for x in v)


@given((7, 3), (-7, 2))
def divmod_floor_semantics(a, b):
    q, r = divmod(a, b)
    return q, r, a // b, a % b


@given((2.5,), (-3.5,))
def abs_and_round(x):
    return abs(x), round(x * 2)


@given((np.array([1, -2, 3], np.int32),),)
def any_and_all_of_comparisons(v):
    return any(x < 0 for x in v), all(x < 5 for x in v)


@given((3,),)
def sorted_keys_and_values(n):
    scores = {"c": n, "a": n * 2, "b": n + 1}
    ordered = []
    for key in sorted(scores):
        ordered.append(scores[key])
    return ordered


# -- containers ------------------------------------------------------------------------------

@given((1, 2, 3),)
def star_unpacking(x, y, z):
    first, *rest = [x, y, z]
    *init, last = (x, y, z)
    return first, rest, init, last


@given((static(4),), (static(0),))
def dict_get_and_setdefault(n):
    counts = {}
    for i in range(n):
        key = "even" if i % 2 == 0 else "odd"
        counts[key] = counts.get(key, 0) + 1
    groups = {}
    groups.setdefault("all", []).append(n)
    return counts, groups


Point = collections.namedtuple("Point", "x y")


@given((3.0, 4.0),)
def namedtuple_replace_in_loop(x, y):
    p = Point(x, y)
    for _ in range(3):
        p = p._replace(x=p.x + 1.0)
    return p, p.x * p.y


@given((5,),)
def namedtuple_replace_in_tensor_loop(n):
    p = Point(0, 1)
    i = 0
    while i < n:
        p = p._replace(x=p.x + p.y, y=p.x)
        i += 1
    return p


@dataclasses.dataclass
class Stats:
    count: int = 0
    total: float = 0.0


@given((np.array([1.0, 2.0, 4.0], np.float32),),)
def dataclass_state_in_loop(v):
    s = Stats()
    for x in v:
        s.count += 1
        s.total += x
    return s.total / s.count


@given((static(3),),)
def list_of_lists_matrix(n):
    grid = [[0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            grid[i][j] = i * n + j
    return [row[-1] for row in grid], grid[-1][:2]


@given((5,), (2,))
def list_pop_and_insert(n):
    stack = [1, 2, 3]
    stack.insert(0, n)
    top = stack.pop()
    stack.append(top * n)
    return stack, len(stack)


@given((np.array([3.0, 1.0, 2.0], np.float32),),)
def dict_of_tensors_comprehension(v):
    stats = {name: fn(v) for name, fn in [("sum", rt.reduce_sum), ("max", rt.reduce_max)]}
    return stats


@given((2,),)
def nested_comprehension_with_condition(n):
    return [i * j + n for i in range(3) for j in range(3) if i != j]


@given((static(4),),)
def set_and_frozenset_membership(n):
    seen = set()
    for i in range(6):
        seen.add(i % n)
    return len(seen), 0 in seen, frozenset(seen) == frozenset(range(min(n, 6)))


@given((np.array([1.0, 2.0], np.float32), 3.0),)
def tuple_concatenation(v, s):
    t = (v[0],)
    t = t + (v[1], s)
    return t, len(t)


@given((6,), (1,))
def list_grown_in_tensor_loop_then_stacked(n):
    squares = []
    for i in range(n):
        squares.append(i * i)
    return rt.stack(squares) if squares else rt.constant([], rt.int32)


# -- printing and f-strings ----------------------------------------------------------------

@given((2.5, 3),)
def print_with_sep_and_end(x, n):
    print("x", x, "n", n, sep="|", end=";\n")
    print(x, n)
    return x


@given((1.23456, 4),)
def fstring_specs_in_tensor_loop(x, n):
    for i in range(n):
        print(f"step {i:02d}: {x * i:8.3f}|{i:<3}|")
    return x


@given((3.0, 4),)
def print_tuple_and_dict_of_values(x, n):
    print((x, n))
    print({"x": x, "n": n})
    print([x, n])
    return n


@given((3.0,),)
def fstring_debug_specifier(x):
    y = x * 2
    print(f"{y=}")
    return y


@given((2, 5.5),)
def percent_and_format(n, x):
    print("n=%d x=%.2f" % (n, x))
    print("{} and {:.1f}".format(n, x))
    print("{b}-{a}".format(a=n, b=x))
    return n


@given((3,),)
def print_star_of_python_list(n):
    items = [n, n + 1, n * 2]
    print(*items, sep=", ")
    return items


@given((np.array([1.0, 2.0], np.float32),),)
def print_array_and_bool(v):
    print(v)
    print(v > 1.5)
    print(rt.reduce_sum(v) > 2.0)
    return v


@given((2.0,),)
def fstring_nested_width(x):
    width = 8
    print(f"[{x:>{width}.2f}]")
    return x


@given((4,), (0,))
def print_in_tensor_if_branches(n):
    if n > 2:
        print("big", n)
    else:
        print("small", n)
    print("done")
    return n


# -- exceptions and with ---------------------------------------------------------------------

@given((3,), (0,))
def try_except_on_python_values(n):
    table = {1: "one", 2: "two"}
    try:
        name = table[len(table) + 1]
    except KeyError as e:
        name = f"missing {e}"
    return name, n


@given((5,),)
def try_finally_prints_on_return(n):
    try:
        return n * 2
    finally:
        print("cleanup")


@given((2,),)
def raise_and_catch_custom_error(n):
    class Invalid(ValueError):
        pass

    def check(k):
        if k > 1:
            raise Invalid(f"too big: {k}")
        return k

    try:
        check(2)
    except ValueError as e:
        print("caught", e)
    return n


class Timer:
    def __init__(self, name):
        self.name = name
        self.log = []

    def __enter__(self):
        self.log.append("enter " + self.name)
        return self

    def __exit__(self, *exc):
        self.log.append("exit " + self.name)
        return False


@given((3,),)
def with_user_context_manager(n):
    with Timer("outer") as t:
        with Timer("inner") as u:
            y = n * 2
    return y, t.log, u.log


@contextlib.contextmanager
def tagged(tag):
    print("<" + tag + ">")
    yield tag.upper()
    print("</" + tag + ">")


def with_contextmanager_generator(x):
    with tagged("b") as t:
        y = x * 3
        print(t, y)
    return y


@given((static(4),),)
def exception_in_loop_caught_per_item(n):
    errors = 0
    total = 0
    for s in ["1", "x", "3", "", "5"][:n]:
        try:
            total += int(s)
        except ValueError:
            errors += 1
    return total, errors


@given((-2.0,), (3.0,))
def try_else_branch(x):
    try:
        r = 1.0 / 2.0
    except ZeroDivisionError:
        r = 0.0
    else:
        r = r + 1.0
    finally:
        r = r * 2
    return x * r


# -- generators -----------------------------------------------------------------------------

def countdown_gen(k):
    while k > 0:
        yield k
        k -= 1


@given((4,), (1,))
def user_generator_in_loop(n):
    acc = 0
    for k in countdown_gen(3):
        acc = acc * n + k
    return acc


def pairs_gen(items):
    for i in range(len(items) - 1):
        yield items[i], items[i + 1]


@given((np.array([1.0, 4.0, 9.0], np.float32),),)
def generator_of_pairs_over_tensor(v):
    diffs = []
    for a, b in pairs_gen(v):
        diffs.append(b - a)
    return diffs


@given((3,),)
def itertools_product_and_chain(n):
    total = 0
    for a, b in itertools.product(range(2), range(3)):
        total += a * b + n
    merged = list(itertools.chain([1, 2], [n]))
    return total, merged


@given((5,),)
def generator_expression_to_list(n):
    return list(i * n for i in range(4) if i != 2)


# -- closures, global, nonlocal ---------------------------------------------------------------

@given((5,), (0,))
def nonlocal_counter_in_tensor_loop(n):
    calls = 0

    def tick(x):
        nonlocal calls
        calls += 1
        return x + calls

    total = 0
    for i in range(n):
        total = tick(total)
    return total, calls


_GLOBAL_STEPS = 0


def _bump_global(k):
    global _GLOBAL_STEPS
    _GLOBAL_STEPS += k
    return _GLOBAL_STEPS


@given((3,),)
def global_counter_in_python_loop(n):
    global _GLOBAL_STEPS
    _GLOBAL_STEPS = 0
    for k in [1, 2, 3]:
        _bump_global(k)
    return _GLOBAL_STEPS * n


@given((2,),)
def closures_capturing_with_default(n):
    fns = [lambda x, i=i: x * i for i in range(4)]
    return [f(n) for f in fns]


@given((np.array([1.0, -2.0, 3.0], np.float32),),)
def map_filter_reduce(v):
    pos = list(filter(lambda x: x > 0, [1.0, -2.0, 3.0]))
    doubled = list(map(lambda x: x * 2, pos))
    return functools.reduce(lambda a, b: a + b, [v[0], v[1], v[2]]), doubled


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        print("call", fn.__name__)
        return fn(*args, **kwargs)
    return wrapper


@logged
def _scaled(x, factor=2):
    if x > 0:
        return x * factor
    return -x


@given((3.0,), (-1.0,))
def user_decorator_around_helper(x):
    return _scaled(x) + _scaled(x, factor=3)


@given((4,),)
def closure_reading_updated_variable(n):
    scale = 1

    def apply(x):
        return x * scale

    out = []
    for i in range(3):
        scale = i + n
        out.append(apply(i))
    return out


# -- classes --------------------------------------------------------------------------------

class Affine:
    def __init__(self, w, b=0.0):
        self.w, self.b = w, b

    def __call__(self, x):
        return x * self.w + self.b


@given((2.0,),)
def callable_object_in_loop(x):
    layers = [Affine(2.0), Affine(0.5, 1.0), Affine(-1.0)]
    for layer in layers:
        x = layer(x)
    return x


class Base:
    def __init__(self, scale):
        self.scale = scale

    def apply(self, x):
        return x * self.scale

    def describe(self):
        return type(self).__name__


class Shifted(Base):
    def __init__(self, scale, shift):
        super().__init__(scale)
        self.shift = shift

    def apply(self, x):
        y = super().apply(x)
        if y > 0:
            y = y + self.shift
        return y


@given((1.5,), (-1.5,))
def inheritance_and_super(x):
    m = Shifted(2.0, 10.0)
    return m.apply(x), m.describe()


class Accumulator:
    def __init__(self):
        self.total = 0
        self.steps = 0

    def add(self, x):
        if x > 0:
            self.total += x
        self.steps += 1
        return self


@given((np.array([3, -1, 4, -1, 5], np.int32),),)
def method_mutating_self_in_tensor_loop(v):
    acc = Accumulator()
    for x in v:
        acc.add(x)
    return acc.total, acc.steps


class Bag:
    def __init__(self, items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


@given((2.0,),)
def custom_container_protocol(x):
    bag = Bag([x, x * 2, x * 3])
    total = 0.0
    for item in bag:
        total += item
    return total, len(bag), bag[-1]


@dataclasses.dataclass
class Config:
    rate: float = 0.1
    tags: list = dataclasses.field(default_factory=list)


@given((5,),)
def dataclass_default_factory(n):
    c = Config()
    for i in range(3):
        c.tags.append(i * n)
    return c.rate * n, c.tags


class Vec:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __add__(self, other):
        return Vec(self.x + other.x, self.y + other.y)

    def norm2(self):
        return self.x * self.x + self.y * self.y


@given((1.0, 2.0),)
def operator_overloading(a, b):
    v = Vec(a, b) + Vec(b, a)
    return v.norm2()


class Counter3:
    count = 0

    @classmethod
    def make(cls):
        cls.count += 1
        return cls()

    @staticmethod
    def double(x):
        return 2 * x if x > 0 else 0


@given((4,), (-1,))
def classmethod_and_staticmethod(n):
    Counter3.count = 0
    Counter3.make()
    Counter3.make()
    return Counter3.double(n), Counter3.count


# -- recursion and helpers --------------------------------------------------------------------

def _fib(k):
    if k < 2:
        return k
    return _fib(k - 1) + _fib(k - 2)


@given((2.0,),)
def recursion_with_python_depth_times_tensor(x):
    return _fib(7) * x


def _is_even(k):
    return True if k == 0 else _is_odd(k - 1)


def _is_odd(k):
    return False if k == 0 else _is_even(k - 1)


@given((3,),)
def mutual_recursion(n):
    return _is_even(6), _is_odd(5), n


def _sign(x):
    if x > 0:
        return 1
    if x < 0:
        return -1
    return 0


@given((np.array([2, -3, 0, 5], np.int32),),)
def helper_with_early_returns_in_loop(v):
    total = 0
    for x in v:
        total += _sign(x)
    return total


def _power(base, exp):
    if exp == 0:
        return 1.0
    half = _power(base, exp // 2)
    return half * half * (base if exp % 2 else 1.0)


@given((1.5,),)
def recursive_fast_power(x):
    return _power(x, 5)


# -- arguments ------------------------------------------------------------------------------

def _total(*values, scale=1, **extras):
    s = 0
    for v in values:
        s += v
    for k in sorted(extras):
        s += extras[k]
    return s * scale


@given((1, 2, 3),)
def star_args_and_kwargs(a, b, c):
    return _total(a, b, c), _total(a, scale=2, bonus=c), _total(*[a, b], **{"z": c})


@given((3.0,),)
def keyword_only_with_defaults(x):
    def step(v, *, lr=0.1, momentum=0.0):
        return v - lr * v + momentum

    return step(x), step(x, lr=0.5), step(x, momentum=1.0, lr=0.0)


@given((2,), (5,))
def default_argument_evaluated_once(n):
    def add_item(item, into=[]):
        into.append(item)
        return len(into)

    a = add_item(n)
    b = add_item(n + 1)
    return a, b


@given((4,),)
def args_forwarding_through_partial(n):
    def lin(a, b, x):
        return a * x + b

    f = functools.partial(lin, 2, b=1)
    return f(x=n), f(n, b=0) if False else f(x=n + 1)


# -- conditionals and expressions ------------------------------------------------------------

@given((5,), (15,), (-1,))
def chained_comparison(x):
    if 0 <= x < 10:
        return 1, x
    return 2, x


@given((2.0, None), (2.0, 3.0))
def optional_default(x, y):
    y = y if y is not None else 1.0
    return x * y


@given((3,), (-3,))
def nested_ternary(x):
    return 1 if x > 0 else (-1 if x < 0 else 0)


@given((3, 4),)
def isinstance_dispatch(a, b):
    def describe(v):
        if isinstance(v, (list, tuple)):
            return len(v)
        return v

    return describe([a, b]), describe(a)


@given((0.5,), (-0.5,))
def bool_ops_short_circuit(x):
    calls = []

    def check(v):
        calls.append(v)
        return v > 0

    ok = check(x) and check(x * 2)
    return ok, len(calls)


@given((static(7),),)
def walrus_in_comprehension(n):
    return [y for i in range(n) if (y := i * i) % 2 == 1]


@given((3,), (0,))
def if_assigns_different_tuples(n):
    if n > 1:
        a, b = n, n * 2
    else:
        a, b = -n, 0
    return a + b


@given((np.array([1.0, 2.0, 3.0], np.float32),),)
def string_keys_built_from_loop(v):
    out = {}
    for i in range(3):
        out[f"w{i}"] = v[i] * 2
    return out


# -- more programs: strings of tensors, builtins, state, helpers ------------------------

@given((2,), (7,))
def in_tuple_of_values(x):
    if x in (1, 2, 3):
        return x * 10
    return x

@given((2.0,),)
def str_concat_of_tensor(x):
    print("value: " + str(x * 2))
    return x

@given((2.0,),)
def repr_of_tensor(x):
    print("r", repr(x + 1))
    return x

@given((1.0,),)
def float_of_tensor_printed(x):
    y = float(x / 3)
    print(y)
    return y

@given((7,),)
def int_of_tensor_printed(x):
    y = int(x / 2)
    print(y, [y], y + 1)
    return y

@given((3,),)
def print_end_in_loop(n):
    for i in range(n):
        print(i, end=" ")
    print()
    return n

@given((12345, 0.25),)
def fstring_more_specs(n, x):
    print(f"{n:,} {n:+d} {x:e} {x:%} {x:+.3g} {n:x} {n:#o} {n:_}")
    return n

@given((3.0,),)
def fstring_repr_conversion(x):
    name = "loss"
    print(f"{name!r}: {x!s} {x!r}")
    return x

@given((3.0,), (-3.0,))
def nested_structure_from_tensor_if(x):
    if x > 0:
        out = (x, (x * 2, {"k": x + 1}))
    else:
        out = (-x, (x, {"k": x - 1}))
    return out

@given((5,),)
def return_inside_with_in_loop(n):
    class Ctx:
        def __enter__(self): return self
        def __exit__(self, *a): return False
    for i in range(n):
        with Ctx():
            if i == 3:
                return i
    return -1

@given((4,),)
def lambda_in_tensor_loop(n):
    f = lambda v: v * 2 + 1
    s = 0
    for i in range(n):
        s = f(s)
    return s

@given((3,),)
def closure_defined_in_tensor_loop(n):
    s = 0
    for i in range(n):
        def add(v, k=i):
            return v + k
        s = add(s)
    return s

@given((5,),)
def break_in_try_in_python_loop(n):
    total = 0
    for i in [1, 2, 3, 4]:
        try:
            if i == 3:
                break
            total += i * n
        finally:
            total += 1
    return total

@given((2.0,),)
def python_float_state_printed(x):
    lr = 0.1
    for i in range(3):
        lr *= 0.9
        print("lr", lr)
    return x * lr

@given((3,),)
def python_float_in_tensor_loop_printed(n):
    lr = 0.1
    i = 0
    while i < n:
        lr *= 0.9
        i += 1
    print("lr", lr, "i", i)
    return lr

@given((4,),)
def int_state_true_division(n):
    half = n / 2
    print(half, n // 2, n % 3, -n // 3)
    return half

@given((5,),)
def list_membership_and_index(n):
    items = [3, 5, 7]
    found = n in items
    return found, items.index(7), items.count(3)

@given((3,),)
def while_list_nonempty(n):
    queue = [1, 2, 3]
    out = 0
    while queue:
        out = out * n + queue.pop(0)
    return out

@given((2.0,),)
def del_variable_then_reassign(x):
    tmp = x * 2
    y = tmp + 1
    del tmp
    tmp = y * 3
    return tmp

@given((np.array([3.0, 1.0, 2.0], np.float32),),)
def enumerate_list_of_tensors(v):
    items = [v[0], v[1], v[2]]
    best_i, best = 0, items[0]
    for i, t in enumerate(items):
        if t < best:
            best_i, best = i, t
    return best_i, best

@given((3,), (-2,))
def helper_returns_none_or_value(n):
    def maybe(k):
        if k > 0:
            return k * 2
        return None
    r = maybe(3)
    return r, n

@given((4,),)
def sum_list_comprehension_of_tensor_range(n):
    total = 0
    for i in range(n):
        total += sum([i, 1, 2])
    return total

@given((np.array([1.0, 2.0, 3.0], np.float32),),)
def min_max_of_list_with_key(v):
    pairs = [(1, "a"), (0, "b")]
    return min(pairs)[1], max(pairs, key=lambda p: p[0])[1], max(v[0], v[2], v[1])

@given((6,),)
def early_return_in_while_with_else(n):
    i = 0
    while i < n:
        if i * i > 10:
            return i
        i += 1
    else:
        return -i
    return 0

@given((np.array([[1, 2], [3, 4]], np.int32),),)
def nested_for_over_2d_tensor(m):
    total = 0
    for row in m:
        for x in row:
            if x % 2 == 0:
                total += x
    return total

@given((4,),)
def print_in_nested_tensor_loops(n):
    for i in range(n):
        for j in range(i):
            print(i, j)
    return n

@given((2.5,),)
def print_mixed_python_and_tensor(x):
    print("x is", x, "and", 3, "and", [1, 2], None, True)
    return x

@given((3,),)
def recursion_tensor_value_python_depth(n):
    def tri(k, acc):
        if k == 0:
            return acc
        return tri(k - 1, acc + k * n)
    return tri(4, 0)

@given((1.0, 2.0),)
def kwargs_dict_unpack(a, b):
    def f(x, y, **rest):
        return x - y + len(rest)
    opts = {"y": b, "z": 1}
    return f(a, **opts), f(y=a, x=b)

SCALE = 3


@given((3,),)
def global_read_in_tensor_loop(n):
    s = 0
    for i in range(n):
        s += SCALE * i
    return s

@given((3.0,),)
def class_attribute_counter_in_tensor_if(x):
    class C:
        hits = 0
    if x > 0:
        C.hits += 1
    return C.hits

@given((4,),)
def string_accumulated_in_python_loop(n):
    s = ""
    for c in "abc":
        s += c.upper()
    return s, n

@given((5,),)
def assert_in_tensor_loop(n):
    for i in range(n):
        assert i < 10, f"too many {i}"
    return n


@given((3.0, 1.0, 2.0),)
def sorted_list_of_tensors(a, b, c):
    return sorted([a, b, c]), sorted([a, c], reverse=True)

State = collections.namedtuple("State", "step total")


@given((3,),)
def namedtuple_from_tensor_loop(n):
    s = State(0, 0)
    for i in range(n):
        s = State(s.step + 1, s.total + i)
    return s

@given((3.0,),)
def print_sep_fstring_mixed(x):
    print(f"{x:.1f}", str(x), sep=" | ")
    return x

@given((2.5,),)
def string_multiplication_and_fstring(x):
    print("=" * 10)
    print(f"{'val':<6}{x:>6.2f}")
    return x

@given((3,),)
def max_with_python_and_tensor(n):
    return max(n, 2), min(1, n), max([n, 0, 5])

@given((np.array([1.0, 2.0, 3.0], np.float32),),)
def dict_items_loop_with_tensors(v):
    params = {"a": v[0], "b": v[1]}
    total = 0.0
    for name, value in params.items():
        print(name, value)
        total += value
    return total

@given((4,),)
def tensor_while_with_python_list_read(n):
    table = [10, 20, 30, 40, 50]
    i = 0
    s = 0
    while i < n:
        s += i
        i += 1
    return s + table[2]

@given((5.0,),)
def method_chain_returning_self(x):
    class B:
        def __init__(self):
            self.v = 0.0

        def add(self, k):
            self.v += k
            return self
    return B().add(x).add(1.0).v

@given((3,), (0,))
def print_list_grown_in_python_loop(n):
    out = []
    for i in [1, 2]:
        out.append(i * n)
    print(out, len(out))
    return out

@given((4,),)
def string_format_of_loop_counter(n):
    for i in range(n):
        print("{}/{}".format(i + 1, n), "%d%%" % (i * 25))
    return n

# -- generators called from converted code: their calls converted, their prints in order ------

def noisy_gen(n):
    for i in range(n):
        print("yield", i)
        yield i


def printing_generator_in_loop(x):
    for i in noisy_gen(3):
        print("got", i)
        x = x + i
    return x


@pytest.mark.parametrize("f, args", [(printing_generator_in_loop, (2.0,)),
                                     (with_contextmanager_generator, (2.0,))])
def test_generator_prints_keep_their_order(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


def clipped(v):
    if v > 2:                       # a helper the generator calls: converted
        return 2 * v
    return v


def scaled_steps(x, n):
    for i in range(n):
        y = clipped(x * i)
        print(f"step {i}: {y}")     # a tensor formatted when the graph runs
        yield y
    yield from (x, -x)


def sum_of_generated(x):
    total = 0.0
    for y in scaled_steps(x, 3):
        print("sum", total)
        total = total + y
    return total


class Recorder:
    def __init__(self):
        self.events = 0

    @contextlib.contextmanager
    def section(self, name, x):
        print("open", name, x)
        self.events += 1
        yield x * 2
        print("close", name)

    def values(self, x):
        for k in (1, 2):
            print("value", k * x)
            yield k * x


def methods_that_are_generators(x):
    r = Recorder()
    with r.section("a", x) as y:
        print("inside", y)
        total = sum(v for v in r.values(y))
    return total, r.events


@pytest.mark.parametrize("f", [sum_of_generated, methods_that_are_generators])
@pytest.mark.parametrize("x", [0.5, 3.0])
def test_generators_reached_from_converted_code(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


def test_a_generator_called_from_plain_python_runs_as_written(capsys):
    ag.convert(sum_of_generated)(rt.constant(1.0))
    capsys.readouterr()
    assert list(scaled_steps(1.0, 2)) == [0.0, 1.0, 1.0, -1.0]
    assert capsys.readouterr().out == "step 0: 0.0\nstep 1: 1.0\n"


# -- Python semantics a graph cannot stage: an error naming the construct and the line --------

def string_chosen_by_a_tensor(n):
    counts = {}
    for i in range(n):
        key = "even" if i % 2 == 0 else "odd"
        counts[key] = counts.get(key, 0) + 1
    return counts


def string_returned_by_a_tensor_if(x):
    if 0 <= x < 10:
        return "digit"
    return "other"


def python_list_indexed_by_a_tensor(n):
    acc = [0, 0]
    for i in range(n):
        acc[i % 2] += i
    return acc


def comprehension_over_a_tensor_range(n):
    return [y for i in range(n) if (y := i * i) % 2 == 1]


def python_list_sliced_by_a_tensor(n):
    total = 0
    for s in ["1", "2", "3"][:n]:
        total += int(s)
    return total


def numpy_function_of_a_tensor(n):
    return np.square(n) + 1


UNSTAGEABLE = [
    (string_chosen_by_a_tensor, TypeError, "counts[key] = counts.get(key, 0) + 1"),
    (python_list_indexed_by_a_tensor, TypeError, "acc[i % 2] += i"),
    (comprehension_over_a_tensor_range, TypeError, "return [y for i in range(n)"),
    (python_list_sliced_by_a_tensor, TypeError, 'for s in ["1", "2", "3"][:n]:'),
    (numpy_function_of_a_tensor, TypeError, "return np.square(n) + 1"),
]


@pytest.mark.parametrize("x", [3, 12, -1])
def test_a_string_returned_by_a_tensor_if_is_the_python_string(x):
    assert_equivalent(string_returned_by_a_tensor_if, x, tensors=True)


@pytest.mark.parametrize("f, error, line", UNSTAGEABLE, ids=[u[0].__name__ for u in UNSTAGEABLE])
def test_unstageable_programs_name_their_line(f, error, line):
    assert_equivalent(f, 3, tensors=False)              # plain Python values: as Python
    with pytest.raises(error) as info:
        ag.convert(f)(rt.constant(3))
    text = "".join(traceback.format_exception(info.value))
    assert __file__ in text and line in text, text


# -- the check ------------------------------------------------------------------------------

def _params():
    for f in PROGRAMS:
        for k, args in enumerate(f.arg_sets):
            for tensors in (False, True):
                yield pytest.param(f, args, tensors,
                                   id=f"{f.__name__}-{k}-{'tensor' if tensors else 'python'}")


@pytest.mark.parametrize("f, args, tensors", list(_params()))
def test_program(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


def test_at_least_sixty_programs():
    assert len(PROGRAMS) >= 60
