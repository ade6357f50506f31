"""The loop iteration limit on converted code: a runaway tensor loop fails naming its line.

Converted and traced (either executor), converted and run eagerly (`ag.to_graph`,
`rt.run_functions_eagerly`), the loop that would run its body more than
`rt.config.set_loop_iteration_limit(n)` times raises LoopIterationLimitError; loops
within the limit, and loops on Python values (plain Python, unrolled), are unaffected.
"""
import contextlib
import inspect
import os
import time

import pytest
from equivalence import assert_equivalent, static

import autograph as ag
import runtime as rt
from runtime.errors import LoopIterationLimitError


def runaway(x):
    y = x * 2
    while x > 0:
        x = x + 1
    return x + y


def runaway_for(n):
    total = 0
    for i in range(n):
        total += i % 3
    return total


def count_while(x, n):
    i = 0
    while i < n:
        x = x + i
        i += 1
    return x


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, line in enumerate(lines) if text in line)


@contextlib.contextmanager
def functions_eagerly():
    rt.run_functions_eagerly(True)
    try:
        yield
    finally:
        rt.run_functions_eagerly(False)


MODES = {
    "graph-fast": lambda f: (ag.convert(f), rt.config.options(executor="fast")),
    "graph-plain": lambda f: (ag.convert(f), rt.config.options(executor="plain")),
    "to_graph-eager": lambda f: (ag.to_graph(f), contextlib.nullcontext()),
    "functions-eagerly": lambda f: (ag.convert(f), functions_eagerly()),
}


# Eagerly, `for` over range(an eager tensor) is Python iteration: bounded, never limited.
RUNAWAY = [(runaway, 1, "while x > 0:", mode) for mode in MODES] + [
    (runaway_for, 10 ** 9, "for i in range(n):", mode) for mode in ("graph-fast", "graph-plain")]


@pytest.mark.parametrize("fn, arg, loop_text, mode", RUNAWAY)
def test_a_runaway_tensor_loop_fails_quickly_naming_its_line(fn, arg, loop_text, mode):
    f, scope = MODES[mode](fn)
    start = time.perf_counter()
    with scope, rt.config.options(loop_iteration_limit=500):
        with pytest.raises(LoopIterationLimitError) as info:
            f(rt.constant(arg))
    assert time.perf_counter() - start < 10
    message = str(info.value)
    line = line_of(fn, loop_text)
    assert f'{os.path.basename(__file__)}", line {line}, in {fn.__name__}' in message
    assert loop_text in message and "(500)" in message
    assert "rt.config.set_loop_iteration_limit" in message
    assert info.value.origin.lineno == line


def test_an_eager_for_loop_over_a_tensor_range_is_not_limited():
    with rt.config.options(loop_iteration_limit=3):
        assert int(ag.to_graph(runaway_for)(rt.constant(10))) == 9


@pytest.mark.parametrize("n", [0, 7, 8])
def test_loops_within_the_limit_are_unaffected(n, tensors):
    with rt.config.options(loop_iteration_limit=8):
        assert_equivalent(count_while, 4, n, tensors=tensors)


def test_the_limit_never_applies_to_python_valued_loops(tensors):
    # `n` stays a Python int: the loop is plain Python (unrolled while tracing).
    with rt.config.options(loop_iteration_limit=3):
        assert_equivalent(count_while, 4, static(50), tensors=tensors)


@pytest.mark.parametrize("mode", MODES)
def test_one_iteration_past_the_limit_fails(mode):
    f, scope = MODES[mode](count_while)
    with scope, rt.config.options(loop_iteration_limit=8):
        assert int(f(rt.constant(4), rt.constant(8))) == 4 + 28
        with pytest.raises(LoopIterationLimitError):
            f(rt.constant(4), rt.constant(9))
