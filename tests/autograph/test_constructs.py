"""Every Python construct a user may write is converted with Python's semantics kept, or
rejected with a ConversionError naming it (docs: the constructs table in README.md)."""
import inspect

import pytest
from equivalence import assert_equivalent, static

import autograph as ag
import constructs_programs as programs

# Programs that behave the same converted, with Python and with tensor arguments.
BOTH = ["walrus", "starred", "aug_attr", "lambda_defaults", "global_nonlocal", "decorated",
        "try_finally", "with_stmt", "deleting", "class_in_function", "while_else_return",
        "assert_msg", "multiple_targets", "yield_from_helper", "async_fn", "star_args_call",
        "chained_aug", "comprehensions", "slicing", "conditional_import", "membership",
        "string_ops"]
# Programs whose tensor-dependent branches hold Python objects (f-strings of tensors,
# functions): the same only with Python arguments (with tensors they are StagingErrors).
PYTHON_ONLY = ["fstrings", "nested_def_in_branch"]
# Odd but legal Python (issue 13): Python arguments; a tensor argument would make their
# Python-valued branches StagingErrors or their lists carry tensors.
ODD = ["defaults_holding_functions", "generated_names_as_user_names",
       "nested_generator_with_control_flow", "nested_async_with_await", "jumps_in_finally",
       "return_in_finally", "declarations_and_docstrings"]


@pytest.mark.parametrize("name", ODD)
def test_odd_but_legal_python(name):
    assert_equivalent(getattr(programs, name), 3, tensors=False)


@pytest.mark.parametrize("name", BOTH)
@pytest.mark.parametrize("tensors", [False, True], ids=["python", "tensor"])
def test_construct_keeps_python_semantics(name, tensors):
    assert_equivalent(getattr(programs, name), 3, tensors=tensors)


@pytest.mark.parametrize("name", PYTHON_ONLY)
def test_construct_with_python_arguments(name):
    assert_equivalent(getattr(programs, name), static(3), tensors=False)


@pytest.mark.parametrize("name", PYTHON_ONLY)
def test_python_objects_differing_between_tensor_branches_are_staging_errors(name):
    import runtime as rt
    # (an f-string of tensors a tensor `if` chooses prints in the graph, but a graph
    # function cannot return it: a TypeError naming the function)
    error = TypeError if name == "fstrings" else ag.StagingError
    with pytest.raises(error, match="fstrings returns a string formatted" if name == "fstrings"
                       else None):
        ag.convert(getattr(programs, name))(rt.constant(3))


def a_generator(x):
    yield x


async def a_coroutine(x):
    return x


def test_generators_and_async_functions_are_rejected_by_name():
    with pytest.raises(ag.ConversionError, match="generator .*yield"):
        ag.to_graph(a_generator)
    with pytest.raises(ag.ConversionError, match="async"):
        ag.to_graph(a_coroutine)


def test_every_program_here_is_covered():
    defined = {name for name, f in inspect.getmembers(programs, inspect.isfunction)
               if f.__module__ == programs.__name__}
    assert defined == set(BOTH) | set(PYTHON_ONLY) | set(ODD)


NAMESPACE_TAKEN = '''
import math as ag__
ag___1 = 10


def f(x, ag___2=1):
    if x > 0:
        x = ag__.floor(x * 2.5)
    for i in range(2):
        x += ag___1 + ag___2
    return x
'''


def test_generated_code_never_captures_a_users_ag__():
    """The operators' namespace takes a name the module, closure and function leave free."""
    from source_files import load
    f = load(NAMESPACE_TAKEN)
    assert_equivalent(f, 3, tensors=False)
    code = ag.to_code(f)
    assert "ag___3.for_stmt(" in code and "converted_call(ag__.floor," in code


def continue_in_finally_cancelling_a_break(n):
    for i in range(n):
        try:
            break
        finally:
            continue
    return n


def break_in_finally_cancelling_a_return(n):
    for i in range(n):
        try:
            return i
        finally:
            break
    return -1


@pytest.mark.parametrize("f, jump, cancelled", [
    (continue_in_finally_cancelling_a_break, "continue", "break"),
    (break_in_finally_cancelling_a_return, "break", "return")])
def test_a_jump_in_finally_cancelling_another_jump_is_refused_by_name(f, jump, cancelled):
    lines, first = inspect.getsourcelines(f)
    jump_line = first + next(k for k, line in enumerate(lines) if line.strip() == jump)
    with pytest.raises(ag.ConversionError,
                       match=f"`{jump}` in `finally` .*test_constructs.py:{jump_line}.*"
                             f"`{cancelled}` of its `try`"):
        ag.to_graph(f)


def statements_after_a_jump_in_finally(n):
    try:
        return 1
    finally:
        for i in range(n):              # stopped by the try's return flag: refused
            if i > 0:
                return 2
        print("after")


def test_a_finally_block_guarded_by_its_trys_jump_is_refused_by_name():
    lines, first = inspect.getsourcelines(statements_after_a_jump_in_finally)
    return_line = first + next(k for k, line in enumerate(lines) if "return 2" in line)
    with pytest.raises(ag.ConversionError,
                       match=f"`finally` block with a `return` at .*:{return_line} has "
                             f"statements or loops after it"):
        ag.to_graph(statements_after_a_jump_in_finally)
