"""Programs using every kind of Python statement and expression (issue 7's table), for
tests/autograph/test_constructs.py. Kept in their own module: conversion reads their
source, and module-level names (G) are part of some programs."""
import functools
import runtime as rt
import autograph as ag

G = 0

def walrus(x):
    if (y := x * 2) > 3:
        y = y + 1
    return y

def fstrings(x):
    s = f"value {x}"
    if x > 0:
        s = f"pos {x!r:>5}"
    return s

def starred(x):
    a, *rest = [x, x + 1, x + 2]
    first, second = rest
    return a + first + second

def aug_attr(x):
    class Box:
        pass
    b = Box()
    b.v = 0
    d = {"k": 1}
    for i in range(3):
        b.v += x
        d["k"] *= 2
    return b.v, d["k"]

def comprehensions(x):
    sq = [i * i for i in range(4)]
    ev = {i: i % 2 == 0 for i in range(3)}
    gen = sum(i for i in range(5))
    return sq, ev, gen, x

def lambda_defaults(x):
    f = lambda a, b=2, *c, d=3, **e: a + b + d
    return f(x)

def global_nonlocal(x):
    global G
    G = 1
    count = 0
    def inc():
        nonlocal count
        count += 1
    inc(); inc()
    return count + G + x

def decorated(x):
    @functools.lru_cache(maxsize=None)
    def sq(v):
        return v * v
    return sq(3) + x

def try_finally(x):
    out = 0
    try:
        out = x + 1
    except ValueError as e:
        out = -1
    else:
        out = out + 1
    finally:
        out = out * 2
    return out

def with_stmt(x):
    with rt.control_dependencies([rt.print("before")]):
        y = x + 1
    return y

def deleting(x):
    y = x + 1
    z = y * 2
    del y
    return z

def class_in_function(x):
    class P:
        def __init__(self, v):
            self.v = v
        def get(self):
            if self.v > 0:
                return self.v
            return -self.v
    return P(x).get()

def while_else_return(x):
    i = 0
    while i < x:
        i += 1
        if i > 10:
            return -1
    else:
        i = i * 10
    return i

def assert_msg(x):
    assert x > -100, f"bad {x}"
    return x

def multiple_targets(x):
    a = b = x + 1
    (c, d), e = (a, b), x
    return a + b + c + d + e

def slicing(x):
    v = [1, 2, 3, 4]
    v[1:3] = [9, 9]
    return v[::-1], x

def conditional_import(x):
    import math
    if x > 0:
        r = math.pi
    else:
        r = 0.0
    return r

def yield_from_helper(x):
    def gen():
        yield 1
        yield 2
    return sum(gen()) + x

def nested_def_in_branch(x):
    if x > 0:
        def h(v):
            return v + 1
    else:
        def h(v):
            return v - 1
    return h(x)

def string_ops(x):
    names = ["a", "b"]
    out = "-".join(names)
    if x > 0:
        out = out.upper()
    return out, x

def async_fn(x):
    async def inner():
        return 1
    return x

def star_args_call(x):
    def f(*a, **k):
        return len(a) + len(k)
    args = (1, 2)
    kw = {"k": 1}
    return f(*args, x, **kw)

def chained_aug(x):
    s = 0
    for i in range(3):
        s += i
        s -= 1
        s *= 2
        s //= 1
    return s + x


def membership(x):
    if x in (1, 2, 5):
        return 10
    if x not in [7]:
        return 20
    return 30


# -- issue 13: odd but legal Python ---------------------------------------------------------

def defaults_holding_functions(x, opt=lambda z: z + 1, *, pick=[lambda: 1, lambda: 2],
                               kind=type("Kind", (), {"v": 5}),
                               squares=[i * i for i in range(3)]) -> (lambda: int)():
    @functools.lru_cache(maxsize=None)
    @(lambda fn: fn)
    def helper(v, inc=lambda w: w * 2) -> (lambda: "annotation")():
        class Local:
            k = inc(v)
        return Local.k
    return opt(x) + pick[1]() + kind.v + helper(x) + squares[2]

def generated_names_as_user_names(x):
    ag__ = 5
    loop_body, break_, retval_, do_return = 1, 2, 3, 4
    for itr in range(3):
        if itr == 1:
            break_ += ag__
            break
        loop_body += itr
    return x + ag__ + loop_body + break_ + retval_ + do_return

def nested_generator_with_control_flow(x):
    def evens(n):
        for i in range(n):
            if i % 2:
                continue
            yield i
        if n > 3:
            yield from [100]
    return sum(evens(5)) + x

def nested_async_with_await(x):
    import asyncio
    async def inner(v):
        if v > 0:
            await asyncio.sleep(0)
            return v * 2
        return -v
    return asyncio.run(inner(3)) + x

def jumps_in_finally(x):
    out = []
    for i in range(4):
        try:
            if i == 1:
                raise ValueError(i)
            out.append(i)
        finally:
            if i < 2:
                continue
            out.append(-i)
            break
    return out, x

def return_in_finally(x):
    def swallow():
        try:
            raise KeyError("lost")
        finally:
            return 7
    def overrides():
        try:
            return 1
        finally:
            return 2
    return swallow() + overrides() + x

def declarations_and_docstrings(x):
    def documented():
        f"not a docstring {x}"
        return 1
    def plain():
        f"not a docstring either"
        return 2
    def annotated():
        t: int
        if x > 0:
            return t
        return 0
    try:
        annotated()
        result = "bound"
    except UnboundLocalError as e:
        result = type(e).__name__
    return documented.__doc__, plain.__doc__, documented() + plain(), result
