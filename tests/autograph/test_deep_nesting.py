"""Deep nesting: 50 nested tensor `if`s, loops nested as deep as CPython allows (20; 21 on
3.13), and both together convert, trace and run correctly, in time about linear in the depth.

The loops' generated graph nests 20 `while` ops: the fast executor's Python source for it
would pass CPython's limit of 20 nested blocks, so that graph runs on the plain executor.
"""
import time

import pytest
from equivalence import assert_equivalent
from source_files import load

import autograph as ag
import runtime as rt
from autograph import conversion

def _deepest_loop_nest():
    """How many nested `for` loops this CPython compiles (20 up to 3.12, 21 from 3.13):
    past it, "too many statically nested blocks"."""
    def compiles(depth):
        body = "".join("    " * (d + 1) + f"for i{d} in range(1):\n" for d in range(depth))
        try:
            compile(f"def f():\n{body}{'    ' * (depth + 1)}pass\n", "<probe>", "exec")
            return True
        except SyntaxError:
            return False
    return next(depth for depth in range(1, 100) if not compiles(depth + 1))


MAX_STATIC_BLOCKS = _deepest_loop_nest()


def nested_ifs(depth, salt=0):
    """`def f(x)`: `depth` nested tensor `if`s, each adding to y and printing at the bottom."""
    lines = ["def f(x):", f"    y = x * 0 + {salt}"]
    for d in range(depth):
        indent = "    " * (d + 1)
        lines += [f"{indent}if x > {d}:", f"{indent}    y = y + {d + 1}"]
        if d % 10 == 9:
            lines += [f"{indent}else:", f"{indent}    y = y - 1"]
    lines.append("    " * (depth + 1) + "print('deepest', y)")
    lines.append("    return y")
    return "\n".join(lines) + "\n"


def nested_loops(depth, inner=()):
    """`def f(n)`: `depth` nested loops, `for` and `while` in turn, each iterating
    1 + n // (level + 1) times; `inner` lines (already indented by one level) innermost."""
    lines = ["def f(n):", "    total = 0"]
    for d in range(depth):
        indent = "    " * (d + 1)
        if d % 2 == 0:
            lines.append(f"{indent}for i{d} in range(1 + n // {d + 1}):")
        else:
            lines += [f"{indent}j{d} = 0", f"{indent}while j{d} < 1 + n // {d + 1}:",
                      f"{indent}    j{d} += 1"]
    body_indent = "    " * depth
    lines += [body_indent + line for line in (inner or ("    total += 1",))]
    lines.append("    return total")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("x", [-1, 7, 30, 60])
def test_fifty_nested_tensor_ifs(x, tensors):
    assert_equivalent(load(nested_ifs(50)), x, tensors=tensors)


def test_loops_nest_as_deep_as_cpython_allows():
    load(nested_loops(MAX_STATIC_BLOCKS))
    with pytest.raises(SyntaxError, match="too many statically nested blocks"):
        load(nested_loops(MAX_STATIC_BLOCKS + 1))


@pytest.mark.parametrize("n", [0, 1, 2])
def test_twenty_nested_tensor_loops(n, tensors):
    f = load(nested_loops(MAX_STATIC_BLOCKS))
    assert assert_equivalent(f, n, tensors=tensors) == {0: 1, 1: 2, 2: 6}[n]


def test_fifty_levels_of_loops_and_ifs():
    ifs = nested_ifs(30).splitlines()[2:-2]          # the `if` lines of a 30-deep nest
    inner = [line.replace("x > ", "total + n > ").replace("y = y", "total = total")
             for line in ifs]
    f = load(nested_loops(MAX_STATIC_BLOCKS, inner))
    for n in (0, 1, 2):
        assert_equivalent(f, n)


def _best_time(fn, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _conversion_time(depth):
    def once():                     # new text each time: the caches would answer otherwise
        conversion.convert(load(nested_ifs(depth, salt=next(_salts))),
                           conversion.ConversionOptions())
    return _best_time(once)


def _trace_time(depth):
    def once():
        ag.convert(load(nested_ifs(depth, salt=next(_salts))))(rt.constant(depth // 2))
    return _best_time(once)


_salts = iter(range(10 ** 6))


@pytest.mark.parametrize("measure", [_conversion_time, _trace_time])
def test_time_grows_about_linearly_with_the_depth(measure):
    # Four times deeper takes about four times longer; quadratic growth would be 16x.
    ratio = measure(40) / measure(10)
    assert ratio < 9, f"depth 40 took {ratio:.1f}x as long as depth 10"
