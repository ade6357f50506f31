"""Builtins that read the calling frame see the user's function in converted code, as in
Python: `locals()`, `vars()`, `dir()`, `globals()`, `eval` and `exec` without namespaces,
zero-argument `super()` (README: "What converts"). Control flow moves statements into
generated functions and lambdas; these calls must not see those frames, nor autograph's.
Reached through another name they cannot know the user's frame: a ConversionError.

PYTEST_DONT_REWRITE: the programs' `assert` must stay Python's (pytest's rewrite adds
variables to their frames).
"""
import sys

import pytest
from equivalence import assert_equivalent

import autograph as ag

G = 0


def locals_at_the_top(a, b=2):
    c = a + b
    return locals()


def locals_in_branches_and_loops(n):
    seen = []
    total = 0
    for i in range(n):
        if i % 2:
            inner = i * 10
            seen.append(sorted(locals()))
        total += i
    return seen, sorted(vars()), dir()


def locals_in_expressions(x):
    y = x + 1
    picked = sorted(locals()) if x > 0 else None
    assert x > -100, locals()
    return picked, (x > 0 and len(dir()))


def locals_of_nested_functions(x):
    outer = x * 2

    def inner(y):
        z = y + outer
        if z > 0:
            return sorted(locals())
        return []
    return inner(1), sorted(locals())[:2]


def locals_in_comprehensions_and_classes(x):
    rows = [sorted(locals()) for _ in range(2)]

    class Body:
        attribute = x
        names = sorted(locals())
    return rows, Body.names


def eval_and_exec_without_namespaces(x):
    y = x * 3
    if y > 0:
        value = eval("x + y")
    else:
        value = eval("[v for v in range(y, 2)]")
    exec("global G; G = x + 100")
    exec("y = -1")                      # writes a snapshot: y stays
    return value, y, G


def exec_then_locals(x):
    """Before 3.13 a function's locals() is one dict per call, which exec writes into: the
    name exec defines is in the next locals(); since 3.13 each locals() is a new dict."""
    exec("def triple(v):\n    return v * 3")
    if x > 0:
        found = locals().get("triple")
        return found(x) if found is not None else "not kept", sorted(locals())
    return None


def eval_with_namespaces(x):
    return eval("x + 1", {"x": 10}), eval("v * 2", None, {"v": x}), exec("pass", {})


def globals_in_branches(x):
    if x > 0:
        found = "G" in globals() and globals() is globals_in_branches.__globals__
    else:
        found = None
    return found


class Base:
    def scale(self, v):
        return v * 10


class Derived(Base):
    def scale(self, v):
        if v > 0:
            return super().scale(v) + 1
        return v

    def after_del(self, v):
        del self
        if v > 0:
            return super().scale(v)
        return v


@pytest.mark.parametrize("f, args", [
    (locals_at_the_top, (1,)), (locals_in_branches_and_loops, (4,)),
    (locals_in_expressions, (3,)), (locals_in_expressions, (-3,)),
    (locals_of_nested_functions, (2,)), (locals_in_comprehensions_and_classes, (1,)),
    (eval_and_exec_without_namespaces, (2,)), (eval_and_exec_without_namespaces, (-2,)),
    (eval_with_namespaces, (4,)), (globals_in_branches, (1,)), (exec_then_locals, (2,)),
    (Derived().scale, (3,)), (Derived().after_del, (-3,))],
    ids=lambda v: getattr(v, "__qualname__", "args"))
def test_frame_builtins_see_the_users_function(f, args):
    global G
    G = 0
    assert_equivalent(f, *args, tensors=False)


def shadowed_super(x):
    super = lambda: "the user's"       # noqa: A001 - a local named like the builtin
    if x > 0:
        return super()
    return None


def test_a_local_named_super_is_called_as_it_is():
    assert_equivalent(shadowed_super, 1, tensors=False)


def test_super_after_del_self_raises_as_in_python():
    error = RuntimeError if sys.version_info < (3, 12) else UnboundLocalError
    assert_equivalent(Derived().after_del, 3, tensors=False, raises=error)


def test_exec_writes_the_users_globals_not_autographs():
    global G
    G = 0
    ag.to_graph(eval_and_exec_without_namespaces)(1)
    assert G == 101
    from autograph import conversion
    assert "G" not in vars(conversion)


def through_another_name(x):
    read = locals
    return read()


def shadowed_then_called(x):
    locals = globals
    return sorted(locals())[:0]


def test_frame_builtins_under_another_name_are_refused():
    with pytest.raises(ag.ConversionError, match=r"locals\(\) called .* other than by its name"):
        ag.to_graph(through_another_name)(1)
    with pytest.raises(ag.ConversionError, match=r"globals\(\)"):
        ag.to_graph(shadowed_then_called)(1)


LOCALS_WITH_AG__ = '''
ag__ = "a global of the user's"


def f(x):
    exec("y = x * 2")
    if x > 0:
        return sorted(locals()), dir(), ag__
    return None
'''


def test_frame_builtins_where_the_user_has_an_ag__():
    from source_files import load
    assert_equivalent(load(LOCALS_WITH_AG__), 3, tensors=False)


def stops_at_a_breakpoint(x):
    y = x + 1
    breakpoint()
    return y * 2


@pytest.mark.parametrize("tensors", [False, True], ids=["python", "tensors"])
def test_breakpoint_stops_in_the_users_function(monkeypatch, tensors):
    seen = []
    monkeypatch.setattr(sys, "breakpointhook", lambda: seen.append(sys._getframe(1)))
    import runtime as rt
    f = ag.convert(stops_at_a_breakpoint)
    result = f(rt.constant(3) if tensors else 3)
    assert int(result) == 8 and len(seen) == 1
    frame = seen[0]             # where pdb.set_trace() would stop: the user's variables
    assert frame.f_code.co_name.endswith("stops_at_a_breakpoint")
    assert set(frame.f_locals) >= {"x", "y"}
