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
        "chained_aug", "comprehensions", "slicing", "conditional_import", "membership"]
# Programs whose tensor-dependent branches hold Python objects (strings, functions): the
# same only with Python arguments (with tensors they are StagingErrors by design).
PYTHON_ONLY = ["fstrings", "nested_def_in_branch", "string_ops"]


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
    with pytest.raises(ag.StagingError):
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
    assert defined == set(BOTH) | set(PYTHON_ONLY)
