"""Equivalence of converted conditionals: if/elif/else, conditional expressions, and/or/not,
chained comparisons and truthiness, with Python values and with tensors as conditions."""
import numpy as np
import pytest
from equivalence import assert_equivalent, cases, static

import runtime as rt


# -- if statements -----------------------------------------------------------------------

def if_only(x):
    if x > 0:
        x = x * 2
    return x


def if_else(x):
    if x > 0:
        y = x + 1
    else:
        y = x - 1
    return y


def elif_chain(x):
    if x < -10:
        y = -2
    elif x < 0:
        y = -1
    elif x == 0:
        y = 0
    elif x < 10:
        y = 1
    else:
        y = 2
    return y


def nested_ifs(x, y):
    if x > 0:
        if y > 0:
            z = 1
        else:
            z = 2
    else:
        if y > 0:
            z = 3
        else:
            z = 4
    return z


def modified_in_one_branch(x):
    y = 10
    if x > 0:
        y = y + x
    return y


def modified_in_else_only(x):
    y = 10
    if x > 0:
        pass
    else:
        y = y - x
    return y


def several_variables(x):
    a, b, c = 1, 2, 3
    if x > 0:
        a = x
        b = a + b
    else:
        c = x * c
    return a, b, c


def unused_temporaries(x):
    t = 5
    if x > 0:
        t = x * 3          # a temporary, not used after the if
        u = t + 1
        x = u
    else:
        t = -x
        x = t - 1
    return x


def temporary_only_in_branch(x):
    if x > 0:
        tmp = x + 100      # defined in one branch only, never used after
        x = tmp - 99
    return x


def branch_without_state(x):
    if x > 0:
        print("positive")
    else:
        print("not positive")
    return x


def if_on_python_bool_with_tensor_body(x, flag):
    if flag:
        x = x + 1
    else:
        x = x - 1
    return x


@pytest.mark.parametrize("f, tensors", cases(
    if_only, if_else, elif_chain, modified_in_one_branch, modified_in_else_only,
    several_variables, unused_temporaries, temporary_only_in_branch, branch_without_state))
@pytest.mark.parametrize("x", [-20, -5, 0, 5, 20])
def test_if_and_elif(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


def other_branch_reads_dead_number(x):
    a = 2
    if x > 0:
        a = a + 1          # a Python number, dead after the if
        r = 1
    else:
        r = a              # must see 2, not the other branch's 3
    a = 0
    return r, a


def other_branch_reads_dead_tensor(x):
    a = x * 0 + 2
    if x > 0:
        a = a + 1
        r = 1
    else:
        r = a
    a = 0
    return r, a


def return_reads_what_other_branch_wrote(x):
    a = 2
    if x > 0:
        a += 1
    else:
        return a
    return -1


def other_branch_reads_deleted_variable(x):
    t = x + 1
    if x > 0:
        del t
        r = 1
    else:
        r = t
    return r


def other_branch_reads_what_a_nested_if_assigns(x):
    c = 0
    if x > 0:
        r = c
    else:
        if x > -5:
            c = x * 2      # dead after the inner if, but read by the outer true branch
        r = 1
    c = 5
    return r, c


def other_branch_reads_what_a_nested_loop_assigns(x):
    c = 0
    if x > 0:
        r = c
    else:
        for i in range(x + 5):
            c = i * 2      # dead after the loop, but read by the outer true branch
        r = 1
    c = 5
    return r, c


@pytest.mark.parametrize("f, tensors", cases(
    other_branch_reads_deleted_variable,
    other_branch_reads_what_a_nested_if_assigns, other_branch_reads_what_a_nested_loop_assigns,
    other_branch_reads_dead_number, other_branch_reads_dead_tensor,
    return_reads_what_other_branch_wrote))
@pytest.mark.parametrize("x", [-1])
def test_branch_reads_variable_the_other_branch_assigns(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


@pytest.mark.parametrize("x, y", [(1, 1), (1, -1), (-1, 1), (-1, -1)])
def test_nested_ifs(x, y, tensors):
    assert_equivalent(nested_ifs, x, y, tensors=tensors)


@pytest.mark.parametrize("flag", [True, False])
def test_python_condition_tensor_values(flag):
    assert_equivalent(if_on_python_bool_with_tensor_body, 3, static(flag))


def return_in_both_branches(x):
    if x > 0:
        return x * 10
    else:
        return -x


def return_in_one_branch(x):
    if x > 0:
        return x * 10
    x = x - 1
    return x


def return_in_nested_if(x, y):
    if x > 0:
        if y > 0:
            return 1
        y = y * 2
    return y


@pytest.mark.parametrize("f, tensors", cases(return_in_both_branches, return_in_one_branch))
@pytest.mark.parametrize("x", [3, -3])
def test_returns_in_branches(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


@pytest.mark.parametrize("x, y", [(3, 2), (3, -2), (-3, 2)])
def test_return_in_nested_if(x, y, tensors):
    assert_equivalent(return_in_nested_if, x, y, tensors=tensors)


# -- logical expressions in conditions -----------------------------------------------------

def and_or_not(x, y):
    if x > 0 and y > 0:
        r = 1
    elif x > 0 or y > 0:
        r = 2
    elif not x < -5:
        r = 3
    else:
        r = 4
    return r


def three_way_and_or(x, y, z):
    if (x > 0 and y > 0) or (z > 0 and not y > 0):
        return x + y + z
    return x - y - z


def tensor_and_python(x, flag):
    if flag and x > 0:
        x = x + 100
    if not flag or x < 0:
        x = x - 1
    return x


@pytest.mark.parametrize("x, y, z", [(1, 1, 1), (1, -1, 1), (-1, 1, -1), (-9, -1, 1),
                                     (-1, -1, -1)])
def test_logical_conditions(x, y, z, tensors):
    assert_equivalent(and_or_not, x, y, tensors=tensors)
    assert_equivalent(three_way_and_or, x, y, z, tensors=tensors)


@pytest.mark.parametrize("x", [-2, 2])
@pytest.mark.parametrize("flag", [True, False])
def test_python_and_tensor_operands(x, flag):
    assert_equivalent(tensor_and_python, x, static(flag))


def lazy_right_operand(x, d):
    # The right operand would fail if evaluated: and/or must stay lazy.
    if x > 0 or d["missing"]:
        x = x + 1
    if x < 0 and d["missing"]:
        x = x - 1
    return x


def test_right_operand_stays_lazy_for_python_values():
    assert_equivalent(lazy_right_operand, 5, static({}), tensors=False)


def and_or_values(x, y):
    # With Python operands and/or return an operand, not a bool.
    return (x and y), (x or y), (not x)


@pytest.mark.parametrize("x, y", [(0, 3), (2, 3), (2, 0)])
def test_and_or_values(x, y):
    assert_equivalent(and_or_values, x, y, tensors=False)


def tensor_and_or_values(x, y):
    a = (x > 0) and (y > 0)
    b = (x > 0) or (y > 0)
    c = not (x > 0)
    return a, b, c


@pytest.mark.parametrize("x, y", [(-1, 3), (2, 3), (2, -1)])
def test_tensor_and_or_values(x, y, tensors):
    assert_equivalent(tensor_and_or_values, x, y, tensors=tensors)


# -- conditional expressions ---------------------------------------------------------------

def conditional_expression(x):
    return x * 2 if x > 0 else -x


def nested_conditional_expression(x):
    return 1 if x > 10 else (2 if x > 0 else (3 if x > -10 else 4))


def conditional_expression_in_condition(x):
    if (x if x > 0 else -x) > 5:
        return 1
    return 0


def conditional_expressions_in_a_loop(n):
    s = 0
    i = 0
    while i < n:
        s += i if i % 2 == 0 else -i
        i += 1
    return s


@pytest.mark.parametrize("f, tensors", cases(
    conditional_expression, nested_conditional_expression,
    conditional_expression_in_condition, conditional_expressions_in_a_loop))
@pytest.mark.parametrize("x", [-20, -3, 0, 3, 20])
def test_conditional_expressions(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


# -- chained comparisons -------------------------------------------------------------------

def chained_comparison(x):
    if 0 < x < 10:
        return 1
    if -10 <= x <= 0 != x:
        return 2
    return 3


def chained_comparison_value(x, y):
    return x < y < 2 * x, -1 < x == y


@pytest.mark.parametrize("x", [-20, -5, 0, 5, 20])
def test_chained_comparisons(x, tensors):
    assert_equivalent(chained_comparison, x, tensors=tensors)
    assert_equivalent(chained_comparison_value, x, 2, tensors=tensors)
    assert_equivalent(chained_comparison_value, x, x, tensors=tensors)


def middle_operand():
    print("evaluated")
    return 5


def chain_evaluates_each_operand_once(x):
    return 0 < middle_operand() < x


def test_chain_evaluates_each_operand_once(tensors):
    assert_equivalent(chain_evaluates_each_operand_once, 7, tensors=tensors)


# -- truthiness of Python values -----------------------------------------------------------

def truthiness(value):
    if value:
        r = 1
    else:
        r = 0
    return r, (1 if value else 0), (not value)


@pytest.mark.parametrize("value", [0, 1, 0.0, 2.5, "", "a", [], [0], (), {}, {"k": 1}, None])
def test_truthiness_of_python_values(value):
    assert_equivalent(truthiness, static(value))


def truthiness_of_tensor(x):
    if x:
        return 1
    return 0


def truthiness_in_while_and_expressions(x):
    n = 0
    while x:
        x = x - 1
        n += 1
    return n, (1 if n else 2)


@pytest.mark.parametrize("x", [True, False, 0, 3])
def test_truthiness_of_scalar_tensors(x, tensors):
    assert_equivalent(truthiness_of_tensor, x, tensors=tensors)


@pytest.mark.parametrize("x", [0, 3])
def test_truthiness_as_loop_condition(x, tensors):
    assert_equivalent(truthiness_in_while_and_expressions, x, tensors=tensors)


def condition_is_tensor_from_python_ints(x, limit):
    # `limit` is Python: the first test is static, the second uses the tensor.
    if limit > 3:
        if x > limit:
            x = x - limit
    return x


@pytest.mark.parametrize("limit", [2, 5])
def test_static_then_tensor_condition(limit):
    assert_equivalent(condition_is_tensor_from_python_ints, 8, static(limit))


def vector_condition_reduced(v):
    if rt.reduce_all(v > 0):
        v = v * 2
    return v


@pytest.mark.parametrize("v", [[1, 2, 3], [1, -2, 3]])
def test_condition_reduced_from_a_vector(v):
    assert_equivalent(vector_condition_reduced, np.array(v))
