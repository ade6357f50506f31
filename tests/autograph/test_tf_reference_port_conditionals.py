"""TensorFlow AutoGraph's reference tests (tensorflow/python/autograph/tests/*_test.py and
converters/*_test.py), ported: conditionals, conditional expressions, early returns,
composite names in `if`, logical expressions, calls (user functions, lambdas, namedtuples,
numpy, print, builtins), assert, annotations, slices and generators.

Each program is rewritten in this project's API and run with Python values and with
tensors (eager for the plain run, symbolic inside the trace): the converted-and-traced
result and printed text must equal the plain Python run (`assert_equivalent`). Where
TensorFlow raises because a graph cannot express the program, this project raises the
documented error naming the variable and the user's line. Where TensorFlow deviates from
Python and this project follows Python (README.md), the port follows this project; each
such place says so. Loops are in test_tf_reference_port_loops.py.
"""
import collections
import contextlib
import os
import unittest.mock

import numpy as np
import pytest
from equivalence import assert_equivalent, differences, static
from test_errors import line_of     # tests/autograph is on sys.path (conftest.py)

import autograph as ag
import runtime as rt


# Names of generated code and of the compiler's machinery: never in a user's error.
INTERNAL_NAMES = ("ag__", "retval_", "do_return", "loop_body", "while_body", "while_cond",
                  "if_body", "else_body", "get_state", "set_state", "extra_test")


def shown(error):
    """What the user sees of `error`: its message and its notes."""
    return "\n".join([str(error)] + list(getattr(error, "__notes__", ())))


def check_error(error, fn, text, *names):
    """`error` names each of `names`, shows the line of `fn` containing `text` (as
    `file", line N` or `file:N`; `text` may be a tuple of acceptable lines) and no
    compiler-internal name."""
    here = os.path.basename(fn.__code__.co_filename)
    seen = shown(error)
    for name in names:
        assert name in str(error), seen
    texts = text if isinstance(text, tuple) else (text,)
    lines = [line_of(fn, t) for t in texts]
    assert any(f'{here}", line {n}' in seen or f"{here}:{n}" in seen for n in lines), seen
    for internal in INTERNAL_NAMES:
        assert internal not in seen, seen


def kind_of(value, kind):
    """A scalar as a Python value (`py`) or as a tensor (`tensor`)."""
    return rt.constant(value) if kind == "tensor" else value


PY_AND_TENSOR = ["py", "tensor"]


# == cond_basic_test: if / if-else with 0, 1, 2 variables, imbalanced lifetimes =============

def bump_counter_if(flag, counter):
    counter.assign(0)
    if flag:
        counter.assign_add(1)
    return counter.read_value()


def bump_counter_if_else(flag, counter):
    counter.assign(0)
    if flag:
        counter.assign_add(1)
    else:
        counter.assign_add(2)
    return counter.read_value()


@pytest.mark.parametrize("f", [bump_counter_if, bump_counter_if_else])
@pytest.mark.parametrize("flag", [True, False])
def test_if_without_variables_changes_a_variable(f, flag, tensors):
    """Only side effects on an rt.Variable in the branches (no local variable changes)."""
    flag = rt.constant(flag) if tensors else flag
    want = f(flag, rt.Variable(0))
    for run in (ag.convert(f), ag.to_graph(f)):
        counter = rt.Variable(0)
        got = run(flag, counter)
        assert not differences(want, got), (want, got)
        assert counter.numpy() == want.numpy()


def if_one_variable(n):
    i = 0
    if i < n:
        i += 1
    return i


def if_else_one_variable(n):
    i = 0
    if i < n:
        i += 1
    else:
        i += 2
    return i


def if_two_variables(n):
    i, j = 0, 1
    if i < n:
        i += 1
        j *= 10
    return i, j


def if_else_two_variables(n):
    i, j = 0, 1
    if i < n:
        i += 1
        j *= 10
    else:
        i += 2
        j *= 20
    return i, j


@pytest.mark.parametrize("f", [if_one_variable, if_else_one_variable, if_two_variables,
                               if_else_two_variables])
@pytest.mark.parametrize("n", [0, 1, -3])
def test_if_with_variables(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


def created_in_if(c):
    if c:
        i = 1
    return i


def created_in_both(c):
    if c:
        i = 1
    else:
        i = 2
    return i


def created_in_else(c):
    if c:
        pass
    else:
        i = 2
    return i


def deleted_in_if(c):
    i = 1
    if c:
        del i
    return i


def deleted_in_both(c):
    i = 1
    if c:
        del i
    else:
        del i
    return i


def deleted_in_else(c):
    i = 2
    if c:
        pass
    else:
        del i
    return i


@pytest.mark.parametrize("f, c", [(created_in_if, True), (created_in_else, False),
                                  (deleted_in_if, False), (deleted_in_else, True)])
def test_imbalanced_lifetime_on_the_path_taken_is_legal_in_python(f, c):
    assert_equivalent(f, c, tensors=False)


@pytest.mark.parametrize("f, c", [(created_in_if, False), (created_in_else, True),
                                  (deleted_in_if, True), (deleted_in_else, False),
                                  (deleted_in_both, True), (deleted_in_both, False)])
def test_imbalanced_lifetime_on_the_path_taken_is_unbound_in_python(f, c):
    assert_equivalent(f, c, tensors=False, raises=UnboundLocalError)


@pytest.mark.parametrize("c", [True, False])
def test_created_in_both_branches(c, tensors):
    assert_equivalent(created_in_both, c, tensors=tensors)


@pytest.mark.parametrize("f, missing_in", [
    (created_in_if, "false branch"), (created_in_else, "true branch"),
    (deleted_in_if, "true branch"), (deleted_in_else, "false branch")])
@pytest.mark.parametrize("c", [True, False])
def test_imbalanced_lifetime_under_a_tensor_condition_is_a_staging_error(f, missing_in, c):
    with pytest.raises(ag.StagingError) as info:
        ag.convert(f)(rt.constant(c))
    check_error(info.value, f, "if c:", "'i'")
    # The message says which branch leaves it unset ("assign 'i' ... in both branches").
    assert "branch" in str(info.value)


# Python raises UnboundLocalError; the error names 'i', not '<undefined i>' values that differ
@pytest.mark.parametrize("c", [True, False])
def test_variable_deleted_in_both_branches_of_a_tensor_if(c):
    with pytest.raises((UnboundLocalError, ag.StagingError)) as info:
        ag.convert(deleted_in_both)(rt.constant(c))
    assert "'i'" in str(info.value)
    assert "<undefined" not in str(info.value) and "differs" not in str(info.value)


def none_in_if(c):
    i, j = 0, 1
    if c:
        i = None
        j = 2
    return i, j


def none_in_both(c):
    if c:
        i = None
        j = 1
    else:
        i = None
        j = 2
    return i, j


def none_in_else(c):
    i, j = 1, 1
    if c:
        pass
    else:
        i = None
        j = 2
    return i, j


@pytest.mark.parametrize("f", [none_in_if, none_in_both, none_in_else])
@pytest.mark.parametrize("c", [True, False])
def test_none_values_with_a_python_condition(f, c):
    assert_equivalent(f, c, tensors=False)


@pytest.mark.parametrize("f", [none_in_if, none_in_else])
@pytest.mark.parametrize("c", [True, False])
def test_none_in_one_branch_of_a_tensor_if_is_a_staging_error(f, c):
    with pytest.raises(ag.StagingError) as info:
        ag.convert(f)(rt.constant(c))
    check_error(info.value, f, "if c:", "'i'", "None")


@pytest.mark.parametrize("c", [True, False])
def test_none_in_both_branches_of_a_tensor_if(c):
    # TensorFlow rejects this too ("'i' is None"); here None on both sides is the same
    # Python value whatever the condition, so Python's result is kept.
    assert_equivalent(none_in_both, c, tensors=True)


def local_in_if(c):
    i = 0
    if c:
        j = 1
        i = j + 1
    return i


def local_in_else(c):
    i = 0
    if c:
        j = 1
    else:
        j = 2
        i = j + 1
    return i


def locally_modified(c):
    i = 0
    j = 2
    if c:
        j = j + 1
        i = j + 1
    return i


@pytest.mark.parametrize("f", [local_in_if, local_in_else, locally_modified])
@pytest.mark.parametrize("c", [True, False])
def test_branch_local_variables(f, c, tensors):
    assert_equivalent(f, c, tensors=tensors)


def return_inside_nested_if(c1, c2):
    if c1:
        if c2:
            return 1
    return 2


@pytest.mark.parametrize("c1, c2", [(True, True), (True, False), (False, True),
                                    (False, False)])
def test_return_in_nested_if_without_else(c1, c2, tensors):
    # TensorFlow raises "must also have a return" for tensor conditions; this project
    # joins the paths (both return a number), as Python does.
    assert_equivalent(return_inside_nested_if, c1, c2, tensors=tensors)


def two_ifs_in_a_row(n1, n2):
    s = 0
    i = 0
    if i < n1:
        s = s * 10 + i
        i += 1
    i = 0
    if i < n2:
        s = s * 10 + i
        i += 1
    return s


def two_if_elses_in_a_row(n1, n2):
    s = 0
    i = 0
    if i < n1:
        s = s * 10 + i
        i += 1
    else:
        s = s * 11 + i
        i += 2
    i = 0
    if i < n2:
        s = s * 10 + i + 3
        i += 1
    else:
        s = s * 11 + i + 5
        i += 2
    return s, i


def if_inside_if(n1, n2):
    i = 0
    total = 0
    if i < n1:
        j = 0
        s = 0
        if j < n2:
            s = s * 10 + i * j + 7
            j += 1
        total = total * 1000 + s
        i += 1
    return total, i


def if_else_inside_if_else(n1, n2):
    i = 0
    total = 0
    if i < n1:
        j = 0
        s = 0
        if j < n2:
            s = s * 10 + i * j + 1
            j += 1
        else:
            s = s * 11 + i * j + 2
            j += 2
        total = total * 1000 + s
        i += 1
    else:
        j = 0
        s = 0
        if j < n2:
            s = s * 12 + i * j + 3
            j += 3
        else:
            s = s * 13 + i * j + 4
            j += 4
        total = total * 2000 + s
        i += 1
    return total, i, j


@pytest.mark.parametrize("f", [two_ifs_in_a_row, two_if_elses_in_a_row, if_inside_if,
                               if_else_inside_if_else])
@pytest.mark.parametrize("n1, n2", [(0, 0), (0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize("kind1, kind2", [("py", "tensor"), ("tensor", "py"),
                                          ("tensor", "tensor")])
def test_composed_ifs_with_mixed_argument_kinds(f, n1, n2, kind1, kind2):
    assert_equivalent(f, kind_of(n1, kind1), kind_of(n2, kind2), tensors=False)


@pytest.mark.parametrize("f", [two_ifs_in_a_row, if_else_inside_if_else])
@pytest.mark.parametrize("n1, n2", [(0, 0), (1, 1)])
def test_composed_ifs_with_python_arguments(f, n1, n2):
    assert_equivalent(f, n1, n2, tensors=False)


# == basic_ifexp_test: conditional expressions ==============================================

def ifexps_in_branches(x):
    if x > 0:
        x = -x if x < 5 else x
    else:
        x = -2 * x if x < 5 else 1
    if x > 0:
        x = -x if x < 5 else x
    else:
        x = (3 * x) if x < 5 else x
    return x


def several_ifexps_in_branches(x):
    if x > 0:
        x = -x if x < 5 else x
        y = 2 * x if x < 5 else x
        z = -y if y < 5 else y
    else:
        x = 2 * x if x < 5 else x
        y = -x if x < 5 else x
        z = -y if y < 5 else y
    return x, y, z


def nested_ifexp(x):
    return x * x if x > 0 else x if x != 0 else 1


def ifexp_on_truthiness(x):
    return 1 if x else 0


@pytest.mark.parametrize("f", [ifexps_in_branches, several_ifexps_in_branches,
                               nested_ifexp, ifexp_on_truthiness])
@pytest.mark.parametrize("x", [-1, 0, 1, 5, 7])
def test_conditional_expressions(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


def ifexp_with_different_structures(x):
    parts = rt.unstack(x) if rt.size(x) > 0 else []
    return x * 2 + 1, len(parts)


def test_ifexp_choosing_between_different_structures():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(ifexp_with_different_structures)(rt.constant([1.0]))
    check_error(info.value, ifexp_with_different_structures, "if rt.size(x) > 0")


# == nested_control_flow_test: ifs inside ifs ===============================================

def independent_ifs(x, y):
    z = 0
    if x > 0:
        if y > 0:
            z = x + y
    return z


def dependent_inner_if(x):
    y = 0
    if x > 0:
        y = -2 * x
        if y > 0:
            x = -3 * x
    else:
        y = 4 * x
    return x, y


def dependent_imbalanced_inner_if(x):
    y = 0
    if x > 0:
        if x < 3:
            y = -2 * x
            x = -3 * x
    return x, y


@pytest.mark.parametrize("x, y", [(-1, -1), (-1, 1), (1, -1), (1, 1)])
@pytest.mark.parametrize("kind_x, kind_y", [("py", "tensor"), ("tensor", "py"),
                                            ("tensor", "tensor"), ("py", "py")])
def test_independent_ifs(x, y, kind_x, kind_y):
    assert_equivalent(independent_ifs, kind_of(x, kind_x), kind_of(y, kind_y),
                      tensors=False)


@pytest.mark.parametrize("f", [dependent_inner_if, dependent_imbalanced_inner_if])
@pytest.mark.parametrize("x", [-1, 1, 4])
def test_dependent_inner_ifs(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


def _raise_value_error():
    raise ValueError("used for control flow")


def local_change_masked_by_exception(x):
    y = 0
    if x > 0:
        try:
            if x > 1:
                _raise_value_error()
            y = 1
        except ValueError:
            pass
        if y == 0:
            y = 2
    return y


@pytest.mark.parametrize("x", [-1, 0, 1, 2])
def test_if_with_change_masked_by_an_exception(x):
    # Python conditions only (TensorFlow: with a tensor the behaviour is undefined; this
    # project documents try inside a tensor `if` as a StagingError).
    assert_equivalent(local_change_masked_by_exception, x, tensors=False)


def test_try_inside_a_tensor_if_is_a_staging_error():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(local_change_masked_by_exception)(rt.constant(2))
    check_error(info.value, local_change_masked_by_exception, "try:")


_global_counter = None


def modify_global_in_nested_if(x):
    y = 0
    if x > 0:
        if x > 0:
            global _global_counter
            if _global_counter is None:
                _global_counter = 1
            else:
                _global_counter += 1
            y += _global_counter
    return y


@pytest.mark.parametrize("x, want_y, want_global", [(1, 1, 1), (0, 0, None)])
def test_global_modified_in_nested_if(x, want_y, want_global):
    global _global_counter
    _global_counter = None
    assert ag.convert(modify_global_in_nested_if)(x).numpy() == want_y
    assert _global_counter == want_global
    _global_counter = None


# == converters/control_flow_test (if): composite outputs, unbalanced, globals =============

class Pair:
    def __init__(self, a, b):
        self.a = a
        self.b = b


def attributes_set_in_branches(n, obj):
    obj.a = 0
    obj.b = 0
    if n > 0:
        obj.a = -n
    else:
        obj.b = 2 * n
    return obj.a, obj.b


def attribute_set_in_one_branch(obj, condition):
    z = 5
    if condition:
        obj.a = 7
        obj.b = 11
        z = 13
    return obj.a, obj.b, z


def reassigned_in_one_branch(n):
    if n > 0:
        n = 3
    return n


def raises_in_branch(n):
    if n > 0:
        n = n + 1
        raise ValueError("positive")
    return n


@pytest.mark.parametrize("n", [1, -1])
def test_attributes_set_in_branches(n, tensors):
    assert_equivalent(attributes_set_in_branches, n, static(Pair(0, 0)), tensors=tensors)


@pytest.mark.parametrize("condition", [True, False])
def test_attributes_set_in_one_branch(condition, tensors):
    assert_equivalent(attribute_set_in_one_branch, static(Pair(2, 3)), condition,
                      tensors=tensors)


@pytest.mark.parametrize("n", [2, -3])
def test_reassigned_in_one_branch(n, tensors):
    assert_equivalent(reassigned_in_one_branch, n, tensors=tensors)


def test_raise_in_a_branch_taken_and_not_taken():
    assert_equivalent(raises_in_branch, -3, tensors=False)
    assert_equivalent(raises_in_branch, 1, tensors=False, raises=ValueError)


_unaffected = 3


def global_set_in_branch(i):
    global _unaffected
    if i == 0:
        _unaffected = i - 1
    return _unaffected


def test_global_set_in_a_branch():
    global _unaffected
    _unaffected = 3
    assert ag.convert(global_set_in_branch)(1).numpy() == 3
    assert ag.convert(global_set_in_branch)(0).numpy() == -1
    assert _unaffected == -1
    _unaffected = 3


def nonlocal_set_in_branch(i):
    def inner():
        nonlocal n
        if i == 0:
            n = i - 1

    n = 3
    inner()
    return n


def defined_in_except_then_if(i):
    try:
        raise ValueError()
    except ValueError:
        x = 1
    if i == 0:
        x = i - 1
    return x


@pytest.mark.parametrize("f", [nonlocal_set_in_branch, defined_in_except_then_if])
@pytest.mark.parametrize("i", [0, 1])
def test_names_from_other_scopes_in_an_if(f, i, tensors):
    assert_equivalent(f, i, tensors=tensors)


# == early_return_test and converters/return_statements_test ================================

def return_with_default(x):
    if x > 0:
        rt.print("x", x)
        return x
    return x * x


def return_depends_on_local(c):
    t = rt.constant(1)
    if c:
        return t
    t = rt.stack([t, t])
    return rt.reduce_sum(t)


def return_possibly_undefined(x):
    if x > 0:
        if x < 5:
            return x
    else:
        return x * x * x


def returns_in_nested_ifs(x):
    if x > 0:
        if x < 5:
            return x
        else:
            return x * x
    else:
        return x * x * x


def return_only_in_else_then_default(x):
    if x < 0:
        x *= x
    else:
        return x
    return x


def maybe_return_before_loop(c1, c2, n):
    if c1:
        if c2:
            return 1
    for _ in range(n):
        pass
    return 2


def returns_in_context_managers(x):
    with contextlib.nullcontext():
        if x > 0:
            if x < 5:
                with contextlib.nullcontext():
                    return x
            else:
                return x * x
        else:
            return x * x * x


def unreachable_final_return(x):
    with contextlib.nullcontext():
        if x > 0:
            if x < 5:
                with contextlib.nullcontext():
                    return x
            else:
                return x * x
        else:
            return x * x * x
    return x * x * x * x


def return_with_default_in_context_manager(x):
    with contextlib.nullcontext():
        if x > 0:
            return 1
        return 0


def inner_function_with_returns(x):
    def inner(y):
        if y > 0:
            return y * y
        else:
            return y
    return inner(x)


def superfluous_returns():
    value = 1
    return value
    value = 2      # noqa: F841 - unreachable on purpose
    return value


def bare_returns(n):
    if n > 4:
        return
    return


@pytest.mark.parametrize("x", [0, 1, 3])
def test_return_with_default_and_print(x, tensors):
    assert_equivalent(return_with_default, x, tensors=tensors)


@pytest.mark.parametrize("c", [True, False])
def test_return_depends_on_local(c, tensors):
    assert_equivalent(return_depends_on_local, c, tensors=tensors)


@pytest.mark.parametrize("x", [0, 3, 5])
def test_return_possibly_undefined_with_python_values(x):
    assert_equivalent(return_possibly_undefined, x, tensors=False)


@pytest.mark.parametrize("x", [0, 3, 5])
def test_return_possibly_undefined_with_a_tensor_is_a_staging_error(x):
    with pytest.raises(ag.StagingError) as info:
        ag.convert(return_possibly_undefined)(rt.constant(x))
    # The inner `if` (no else) or the outer one, whose true branch may then return None.
    check_error(info.value, return_possibly_undefined, ("if x < 5:", "if x > 0:"))
    assert "None" in str(info.value)


@pytest.mark.parametrize("f", [returns_in_nested_ifs, return_only_in_else_then_default,
                               returns_in_context_managers, unreachable_final_return,
                               return_with_default_in_context_manager,
                               inner_function_with_returns])
@pytest.mark.parametrize("x", [-2, 0, 3, 6])
def test_early_returns(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


@pytest.mark.parametrize("c1, c2", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("n", [0, 2])
def test_possible_return_before_loop(c1, c2, n, tensors):
    assert_equivalent(maybe_return_before_loop, c1, c2, n, tensors=tensors)


def test_superfluous_and_bare_returns():
    assert_equivalent(superfluous_returns, tensors=False)
    assert_equivalent(bare_returns, 4, tensors=False)
    assert_equivalent(bare_returns, 5, tensors=False)


def return_in_try_with_finally(x):
    try:
        if x > 0:
            return 1
        else:
            return 0
    finally:
        x = x + 1


def return_with_default_in_try_with_finally(x):
    try:
        if x > 0:
            return 1
        return 0
    finally:
        x = x + 1


def return_in_finally(x):
    try:
        return 2
    finally:
        if x > 0:
            return 1        # noqa: B012 - overrides the try's return, on purpose
        else:
            return 0        # noqa: B012


def return_with_default_in_finally(x):
    try:
        return 2
    finally:
        if x > 0:
            return 1        # noqa: B012
        return 0            # noqa: B012


def return_in_finally_default_in_try(x):
    try:
        if x > 0:
            return 0
    finally:
        return 1            # noqa: B012


def _raising_helper():
    raise ValueError()


def raise_during_return_caught():
    try:
        return _raising_helper()
    except ValueError:
        pass
    return 1


def raise_during_return_caught_in_tail(c):
    if c:
        return 2
    try:
        return _raising_helper()
    except ValueError:
        pass
    return 1


@pytest.mark.parametrize("f", [return_in_try_with_finally,
                               return_with_default_in_try_with_finally, return_in_finally,
                               return_with_default_in_finally,
                               return_in_finally_default_in_try])
@pytest.mark.parametrize("x", [0, 1])
def test_returns_and_try(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


# A `return g()` whose g() raises into an `except` has not returned: the function goes on
# to `return 1`.
def test_raise_during_return_caught():
    assert_equivalent(raise_during_return_caught, tensors=False)


def test_raise_during_return_caught_in_tail_when_the_if_returns(tensors):
    assert_equivalent(raise_during_return_caught_in_tail, True, tensors=tensors)


def test_raise_during_return_caught_in_tail(tensors):
    assert_equivalent(raise_during_return_caught_in_tail, False, tensors=tensors)


# == composite_names_in_control_flow_test (if) ==============================================

def dict_item_in_both_branches(a):
    x = {"a": a}
    if x["a"] > 0:
        x["b"] = 1
    else:
        x["b"] = -1
    return x


def list_item_in_both_branches(a):
    x = [a, 0]
    if x[0] > 0:
        x[1] = 1
    else:
        x[1] = -1
    return x


def dict_item_created_in_if(a):
    x = {"a": a}
    if x["a"] > 0:
        x["b"] = 1
    return x


def dict_item_created_in_else(a):
    x = {"a": a}
    if x["a"] > 0:
        pass
    else:
        x["b"] = 1
    return x


def nested_dict_item_created_in_if(a):
    x = {"a": {"a": a}}
    if x["a"]["a"] > 0:
        x["a"]["b"] = 1
    return x


def nested_dict_item_created_in_else(a):
    x = {"a": {"a": a}}
    if x["a"]["a"] > 0:
        pass
    else:
        x["a"]["b"] = 1
    return x


def missing_key_written_in_both(a):
    x = {"a": {"a": a}}
    if x["a"]["a"] > 0:
        x["b"]["a"] = 1
    else:
        x["b"]["a"] = -1
    return x


def missing_key_written_in_if(a):
    x = {"a": {"a": a}}
    if x["a"]["a"] > 0:
        x["b"]["a"] = 1
    return x


@pytest.mark.parametrize("f", [dict_item_in_both_branches, list_item_in_both_branches])
@pytest.mark.parametrize("a", [0, 1])
def test_items_set_in_both_branches(f, a, tensors):
    assert_equivalent(f, a, tensors=tensors)


@pytest.mark.parametrize("f", [dict_item_created_in_if, dict_item_created_in_else,
                               nested_dict_item_created_in_if,
                               nested_dict_item_created_in_else])
@pytest.mark.parametrize("a", [0, 1])
def test_item_created_in_one_branch_with_python_values(f, a):
    assert_equivalent(f, a, tensors=False)


@pytest.mark.parametrize("f, name", [
    (dict_item_created_in_if, "x['b']"), (dict_item_created_in_else, "x['b']"),
    (nested_dict_item_created_in_if, "x['a']['b']"),
    (nested_dict_item_created_in_else, "x['a']['b']")])
@pytest.mark.parametrize("a", [0, 1])
def test_item_created_in_one_branch_of_a_tensor_if(f, name, a):
    with pytest.raises(ag.StagingError) as info:
        ag.convert(f)(rt.constant(a))
    check_error(info.value, f, "if x[", name)


@pytest.mark.parametrize("f, a", [(missing_key_written_in_both, 0),
                                  (missing_key_written_in_both, 1),
                                  (missing_key_written_in_if, 1)])
def test_writing_into_a_missing_key_raises_key_error(f, a, tensors):
    assert_equivalent(f, a, tensors=tensors, raises=KeyError)


def test_writing_into_a_missing_key_in_a_branch_not_taken():
    # Python never runs the branch; a tensor condition traces both branches, so the
    # KeyError shows up while tracing (as in TensorFlow).
    assert_equivalent(missing_key_written_in_if, 0, tensors=False)
    with pytest.raises(KeyError, match="'b'"):
        ag.convert(missing_key_written_in_if)(rt.constant(0))


# == logical_expression_test and converters/logical_expressions_test ========================

def ors(x, y, z):
    return x or y or z


def ors_with_call(x, y, z):
    later = lambda: z       # noqa: E731
    return x or y or later()


def ands(x, y, z):
    return x and y and z


def mixed_and_or(x, y, z):
    return x or y or z and y and z


def and_or_not(a, b, c):
    return (a or b) and (a or b or c) and not c


@pytest.mark.parametrize("f", [ors, ors_with_call, ands, mixed_and_or, and_or_not])
@pytest.mark.parametrize("x, y, z", [(False, True, False), (False, False, False),
                                     (True, True, True), (True, False, True),
                                     (False, False, True)])
def test_boolean_operators(f, x, y, z, tensors):
    assert_equivalent(f, x, y, z, tensors=tensors)


def two_comparisons(x, y, z):
    return x < y and y < z


def chained_comparison(a, b, c, d):
    return a < b == c > d


def equality(x, y):
    return x == y


def inequality(x, y):
    return x != y


def chained_equality(x, y, z):
    return x == y == z


def membership(a, b):
    return a in b


@pytest.mark.parametrize("x, y, z", [(1, 2, 3), (2, 1, 3), (3, 2, 1), (3, 1, 2), (1, 3, 2),
                                     (2, 3, 1)])
def test_comparisons_joined_by_and(x, y, z, tensors):
    assert_equivalent(two_comparisons, x, y, z, tensors=tensors)


@pytest.mark.parametrize("d", [1, 3])
def test_chained_comparison_with_first_operand_a_tensor(d):
    assert_equivalent(chained_comparison, rt.constant(1), 2, 2, d, tensors=False)


@pytest.mark.parametrize("f, args", [
    (equality, (1, 1)), (equality, (1, 2)), (inequality, (1, 1)), (inequality, (1, 2)),
    (chained_equality, (1, 1, 2)), (chained_equality, (1, 1, 1))])
def test_equality(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


def test_membership_of_python_values():
    assert_equivalent(membership, static("a"), static(("a",)), tensors=True)
    assert_equivalent(membership, static("c"), static(("a",)), tensors=True)


# == call_to_user_function_test ============================================================

def cube(x):
    return x * x * x


def eleven_minus(x):
    return -1 * x + 11


def pick(n):
    if n == 1:
        return cube
    return eleven_minus


def static_calls(x):
    return cube(x) + eleven_minus(x)


def calls_through_a_factory(x):
    f = pick(1)
    a = f(x)
    f = pick(2)
    return a + f(x)


def call_of_a_parameter(f, x):
    return f(x)


def call_through_a_variable(x):
    f = cube
    a = f(x)
    f = eleven_minus
    return a + f(x)


def call_of_a_runtime_op_through_a_variable(x):
    f = rt.identity
    return f(x)


def call_with_keyword(f, x):
    return f(x=x)


@pytest.mark.parametrize("f, args", [
    (static_calls, (1,)), (calls_through_a_factory, (2,)),
    (call_of_a_parameter, (static(cube), 3)), (call_through_a_variable, (-2,)),
    (call_of_a_runtime_op_through_a_variable, (4,)), (call_with_keyword, (static(cube), 2)),
], ids=lambda v: getattr(v, "__name__", None))
def test_calls_to_user_functions(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


# == call_to_lambda_function_test, call_to_named_tuple_test ================================

def inline_lambda(x):
    g = lambda x: x * x if x > 0 else -x       # noqa: E731
    return g(x)


def external_lambda(x, g):
    return g(x)


Point = collections.namedtuple("Point", ("a", "b"))


def inline_namedtuple(x):
    nt = collections.namedtuple("Inline", ("a", "b"))
    return nt(a=1, b=x)


def external_namedtuple(x, nt):
    return nt(a=1, b=x)


class Counter(collections.namedtuple("Counter", ("a",))):
    def plus_one(self):
        return self.a + 1


def namedtuple_subclass(x):
    return Counter(x).plus_one()


@pytest.mark.parametrize("x", [1, -2])
def test_inline_lambda(x, tensors):
    assert_equivalent(inline_lambda, x, tensors=tensors)


@pytest.mark.parametrize("x", [0, 1])
def test_lambda_argument(x, tensors):
    assert_equivalent(external_lambda, x, static(lambda v: v == 0), tensors=tensors)


def test_namedtuples(tensors):
    # The namedtuple class is made anew on every call: compare its name and fields.
    x = rt.constant(1) if tensors else 1
    want = inline_namedtuple(x)
    for run in (ag.convert(inline_namedtuple), ag.to_graph(inline_namedtuple)):
        got = run(x)
        assert type(got).__name__ == "Inline" and got._fields == ("a", "b")
        assert not differences(tuple(want), tuple(got)), (want, got)
    assert_equivalent(external_namedtuple, 1, static(Point), tensors=tensors)
    assert_equivalent(namedtuple_subclass, 1, tensors=tensors)


# == call_to_numpy_function_test, call_to_tf_api_test ======================================

def numpy_random_draw():
    np.random.seed(1)
    return 2 * np.random.binomial(1, 0.5, size=(10,)) - 1


def runtime_constant_times(x):
    return x * rt.constant(2)


def test_numpy_call():
    assert_equivalent(numpy_random_draw, tensors=False)


def test_runtime_api_call(tensors):
    assert_equivalent(runtime_constant_times, 1, tensors=tensors)


# == call_to_print_function_test ============================================================

def lone_print(x):
    print(x)


def print_several_values(x):
    print("x is", x)


def two_runtime_prints(x, y):
    rt.print("x is", x)
    rt.print("y is", y)


def print_with_python_values(x):
    print("x is", x, {"foo": "bar"})


def print_in_if(x):
    if x == 0:
        print(x)


def runtime_print(x):
    rt.print(x)


@pytest.mark.parametrize("f", [lone_print, print_several_values, print_with_python_values,
                               runtime_print])
@pytest.mark.parametrize("x", [1, np.array([1, 2, 3], np.int32), 2.5])
def test_prints(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


@pytest.mark.parametrize("x, y", [(1, 2), (np.array([1, 2, 3], np.int32), 4)])
def test_two_runtime_prints(x, y, tensors):
    assert_equivalent(two_runtime_prints, x, y, tensors=tensors)


@pytest.mark.parametrize("x", [0, 1])
def test_print_in_if(x, tensors):
    assert_equivalent(print_in_if, x, tensors=tensors)


def test_print_runs_every_time_the_graph_runs():
    f = ag.convert(print_several_values)
    x = rt.constant(3)
    for _ in range(2):
        with contextlib.redirect_stdout(__import__("io").StringIO()) as out:
            f(x)
        assert out.getvalue() == "x is 3\n"


# == call_to_builtin_function_test ==========================================================

def dict_builtin(x):
    return dict(foo=x)


def dict_shadowed(x):
    def fake_dict(x):
        return x

    dict = fake_dict        # noqa: A001 - shadows the builtin on purpose
    return dict(x)


def dict_returned_by_a_call(x):
    def get():
        return dict

    d = get()
    return d(foo=x)


def len_builtin(x):
    return len(x)


def len_shadowed(x):
    def fake_len(x):
        return x

    len = fake_len          # noqa: A001
    return len(x)


def len_returned_by_a_call(x):
    def get():
        return len

    n = get()
    return n(x)


def list_of_range_of_len(x):
    return list(range(len(x)))


def nested_casts(x):
    return float(int(x))


def len_of_a_mock():
    return len(unittest.mock.MagicMock())


@pytest.mark.parametrize("f, arg", [
    (dict_builtin, 1), (dict_shadowed, 1), (dict_returned_by_a_call, 1),
    (len_builtin, [1, 2]), (len_shadowed, [1, 2]), (len_returned_by_a_call, [1, 2]),
    (list_of_range_of_len, []), (list_of_range_of_len, [1, 2, 3]),
    (len_builtin, np.array([1, 2], np.int32)),
    (list_of_range_of_len, np.array([4, 5, 6], np.int32)),
    (nested_casts, 2.7),
], ids=lambda v: getattr(v, "__name__", None))
def test_builtin_calls(f, arg, tensors):
    assert_equivalent(f, arg, tensors=tensors)


def test_len_of_a_mock():
    assert_equivalent(len_of_a_mock, tensors=False)


# == converters/list_comprehensions_test ====================================================

def squares(values):
    return [e * e for e in values]


def flattened_squares(values):
    return [e * e for sub in values for e in sub]


def filtered_squares(values):
    return [e * e for e in values if e > 1]


@pytest.mark.parametrize("f, arg", [
    (squares, []), (squares, [1, 2, 3]), (flattened_squares, []),
    (flattened_squares, [[1], [2], [3]]), (filtered_squares, [])])
def test_list_comprehensions(f, arg, tensors):
    assert_equivalent(f, arg, tensors=tensors)


@pytest.mark.parametrize("arg", [[1, 2, 3], np.array([1, 2, 3], np.int32)])
def test_list_comprehensions_over_a_tensor(arg, tensors):
    assert_equivalent(squares, arg, tensors=tensors)


def test_filtered_list_comprehension_with_python_values():
    # (A numpy array argument is a tensor inside the trace, as in TensorFlow.)
    assert_equivalent(filtered_squares, [1, 2, 3], tensors=False)


# comprehensions stay Python; the message says so, not to decorate the (converted) function
def test_filtered_list_comprehension_over_symbolic_tensors_says_to_use_a_loop():
    with pytest.raises(TypeError) as info:
        ag.convert(filtered_squares)(rt.constant(np.array([1, 2, 3], np.int32)))
    check_error(info.value, filtered_squares, "if e > 1")
    assert "`for` loop" in str(info.value) and "Decorate" not in str(info.value)
    assert "autograph.convert" not in str(info.value)
    assert "comprehension" in str(info.value) and "for" in str(info.value)


# == assertion_test, type_annotations_test, generator_test ==================================

def positive(x):
    assert x > 0
    return x


@pytest.mark.parametrize("x", [1, 5])
def test_passing_assert(x, tensors):
    assert_equivalent(positive, x, tensors=tensors)


@pytest.mark.parametrize("x", [0, -1])
def test_failing_assert(x, tensors):
    assert_equivalent(positive, x, tensors=tensors, raises=AssertionError)


def pure_declaration():
    n: int      # noqa: F842 - a declaration only
    return 1


def annotated_assignments(x):
    y: int = x + 1
    z: float
    if y > 0:
        z = 1.0
    else:
        z = -1.0
    return y, z


def test_type_annotations(tensors):
    assert_equivalent(pure_declaration, tensors=tensors)
    assert_equivalent(annotated_assignments, 2, tensors=tensors)
    assert_equivalent(annotated_assignments, -5, tensors=tensors)


def yields_once():
    yield 1


def yields_in_for(n):
    for i in range(n):
        yield i


def yields_in_while(n):
    i = 0
    while i < n:
        i += 1
        yield i


@pytest.mark.parametrize("f, args, line", [(yields_once, (), "yield 1"),
                                           (yields_in_for, ([],), "yield i"),
                                           (yields_in_while, (0,), "yield i")])
def test_generators_are_a_conversion_error(f, args, line):
    with pytest.raises(ag.ConversionError) as info:
        ag.convert(f)(*args)
    check_error(info.value, f, line)
    assert "yield" in str(info.value) or "generator" in str(info.value)


def sums_a_generator(n):
    return sum(yields_in_for(n)) + sum(yields_in_while(n))


@pytest.mark.parametrize("n", [0, 3])
def test_generators_called_from_converted_code_run_unconverted(n):
    assert_equivalent(sums_a_generator, n, tensors=False)


# == ext_slice_test =========================================================================

def extended_slices(m):
    return m[:, :], m[0, :], m[:, 0]


def new_axes(m):
    return m[:, None] - m[None, :]


def slice_of_a_call(g, m):
    return g(m)[:, None] - g(m)[None, :]


EYE = np.eye(3, dtype=np.float32)


def test_extended_slices(tensors):
    assert_equivalent(extended_slices, EYE, tensors=tensors)
    assert_equivalent(new_axes, EYE, tensors=tensors)
    assert_equivalent(slice_of_a_call, static(lambda v: v), EYE, tensors=tensors)


# == converters/arg_defaults_test, call_trees_test, functions_test ==========================

def inner_lambda_with_default():
    return (lambda x=7: x)()


def inner_function_with_default():
    def inner(a=3):
        return a
    return inner()


def returns_inner_function_with_default():
    def inner(a=3):
        return a
    return inner


def defaults_and_varargs(a, b=1, *c):
    return a, b, c


def add_three(a, b, c):
    return a + b * 10 + c * 100


def forwards_args_and_kwargs(f, a, *args, **kwargs):
    return f(a, *args, **kwargs) + 5


def forwards_starargs_only():
    args = [1, 2, 3]
    return add_three(*args) + 11


def forwards_keywords(f, a, b, **kwargs):
    return f(a, b=b, **kwargs) + 5


def call_in_argument(f, g):
    return f(g(7) + 7) + 3


class Calculator:
    def __init__(self, k):
        self.k = k

    def method(self, a):
        return self.helper(a) + 1

    def helper(self, a):
        if a > 0:
            return a * self.k
        return -a


def documented(n):
    """Adds one.

    Second paragraph.
    """
    a = 1
    n += a
    return n


@pytest.mark.parametrize("f, args", [
    (inner_lambda_with_default, ()), (inner_function_with_default, ()),
    (defaults_and_varargs, (1,)), (defaults_and_varargs, (1, 2, 3, 4)),
    (forwards_args_and_kwargs, (static(add_three), 1, 2, 3)),
    (forwards_args_and_kwargs, (static(add_three), 1, static({"b": 4, "c": 5}))),
    (forwards_starargs_only, ()),
    (forwards_keywords, (static(add_three), 1, 2, static({"c": 3}))),
    (call_in_argument, (static(lambda x: x * 2), static(lambda x: x - 1))),
], ids=lambda v: getattr(v, "__name__", None))
def test_defaults_and_argument_forwarding(f, args, tensors):
    if args and isinstance(args[-1], static) and isinstance(args[-1].value, dict):
        kwargs = args[-1].value
        assert_equivalent(f, *args[:-1], kwargs=kwargs, tensors=tensors)
    else:
        assert_equivalent(f, *args, tensors=tensors)


def test_returned_inner_function_keeps_its_default():
    want = returns_inner_function_with_default()()
    assert ag.to_graph(returns_inner_function_with_default)()() == want
    assert ag.convert(returns_inner_function_with_default)()() == want


@pytest.mark.parametrize("a", [3, -2])
def test_method_calling_a_method(a, tensors):
    calc = Calculator(4)
    x = rt.constant(a) if tensors else a
    want = calc.method(x)
    for fn in (ag.convert(Calculator.method), ag.to_graph(Calculator.method)):
        assert not differences(want, fn(calc, x))
    assert not differences(want, ag.convert(calc.method)(x))


def test_docstring_is_kept():
    assert ag.to_graph(documented).__doc__ == documented.__doc__
    assert ag.convert(documented).__doc__ == documented.__doc__
    assert_equivalent(documented, 1, tensors=True)


# == converters/variables_test: del ========================================================

def del_then_read(x):
    del x
    return x


def del_item(items):
    del items[0]
    return items


def del_slice(items):
    del items[0:2]
    return items


class TwoFields:
    def __init__(self):
        self.a = 1
        self.b = 2


def del_attribute(obj):
    del obj.a
    return hasattr(obj, "a"), obj.b


def del_packed(a, b):
    del [a, b]
    return a


def del_nested_packed(a, b, c):
    del [a, (b, c)]
    return c


def del_mixed_then_read_deleted(a, b, c):
    del a, b, c[0]
    a = 1
    return a, b, c


def del_mixed_then_reassign(a, b, c):
    del a, b, c[0]
    a = 1
    b = 2
    return a, b, c


@pytest.mark.parametrize("f, args", [
    (del_then_read, (1,)), (del_packed, (1, 2)), (del_nested_packed, (1, 2, 3)),
    (del_mixed_then_read_deleted, (1, 2, [1, 2]))], ids=lambda v: getattr(v, "__name__", None))
def test_reading_a_deleted_name_is_unbound(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors, raises=UnboundLocalError)


@pytest.mark.parametrize("f, args", [
    (del_item, ([1, 2],)), (del_slice, ([1, 2, 3],)), (del_attribute, (static(TwoFields()),)),
    (del_mixed_then_reassign, (1, 2, [1, 2]))], ids=lambda v: getattr(v, "__name__", None))
def test_del_of_items_attributes_and_names(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


def test_reading_a_deleted_name_says_which():
    with pytest.raises(UnboundLocalError, match="'b'"):
        ag.convert(del_mixed_then_read_deleted)(1, 2, [1, 2])


# == converters/directives_test =============================================================

def loop_options_outside_a_loop(x):
    ag.set_loop_options(maximum_iterations=3)
    return x


def loop_options_first_in_body(n):
    i = 0
    while i < n:
        ag.set_loop_options(maximum_iterations=100)
        i += 1
    return i


def test_loop_options_outside_a_loop_is_a_conversion_error():
    with pytest.raises(ag.ConversionError) as info:
        ag.convert(loop_options_outside_a_loop)(1)
    check_error(info.value, loop_options_outside_a_loop, "ag.set_loop_options")


@pytest.mark.parametrize("n", [0, 5])
def test_loop_options_that_do_not_bind(n, tensors):
    assert_equivalent(loop_options_first_in_body, n, tensors=tensors)
