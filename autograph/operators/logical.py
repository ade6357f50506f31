"""`and`, `or`, `not` and chained comparisons with Python's laziness kept.

The right-hand side comes as a function: it runs only if Python would run it,
and becomes the false/true branch of a graph cond when the left side is a
symbolic tensor.
"""
import operator

import runtime as rt

from .control_flow import as_condition, is_symbolic, staged_cond, truth
from .state import StatementState


def and_(a_fn, b_fn):
    """`a and b`: b is evaluated only if a is true."""
    a = a_fn()
    if is_symbolic(a):
        return staged_cond(truth(a), b_fn, lambda: a, StatementState((), 0),
                           "`and` expression", "the result of `and`", reach=(b_fn,))
    return b_fn() if a else a


def or_(a_fn, b_fn):
    """`a or b`: b is evaluated only if a is false."""
    a = a_fn()
    if is_symbolic(a):
        return staged_cond(truth(a), lambda: a, b_fn, StatementState((), 0),
                           "`or` expression", "the result of `or`", reach=(b_fn,))
    return a if a else b_fn()


def in_(element, container):
    """`element in container`; for a symbolic element or container, any elementwise match."""
    if is_symbolic(element) or is_symbolic(container):
        if isinstance(container, (list, tuple, set, frozenset)):
            if not container:
                return False
            return rt.reduce_any(rt.stack([rt.equal(element, item) for item in container]))
        return rt.reduce_any(rt.equal(container, element))
    return element in container


def not_(a):
    """`not a`: elementwise logical not for symbolic tensors."""
    a = as_condition(a)
    if is_symbolic(a):
        return rt.logical_not(truth(a))
    return not a


_COMPARE = {
    "Eq": operator.eq, "NotEq": operator.ne, "Lt": operator.lt, "LtE": operator.le,
    "Gt": operator.gt, "GtE": operator.ge, "Is": operator.is_, "IsNot": operator.is_not,
    "In": lambda a, b: in_(a, b), "NotIn": lambda a, b: not_(in_(a, b)),
}


def compare_chain(left, *comparisons):
    """`left op1 b op2 c ...`: each operand evaluated at most once, lazily, as Python does.

    `comparisons` are (op name, function returning the operand) pairs.
    """
    op, right_fn = comparisons[0]
    right = right_fn()
    result = _COMPARE[op](left, right)
    if len(comparisons) == 1:
        return result
    return and_(lambda: result, lambda: compare_chain(right, *comparisons[1:]))
