"""`assert` statements: a Python assert, or an `rt.Assert` op for a symbolic test."""
import runtime as rt

from .control_flow import is_symbolic


def assert_stmt(expression, message_fn=None):
    """`assert expression, message`; the message is computed only when needed."""
    if is_symbolic(expression):
        message = message_fn() if message_fn is not None else "Assertion failed"
        data = list(message) if isinstance(message, (list, tuple)) else [message]
        return rt.Assert(rt.reduce_all(expression), data)
    if not expression:
        if message_fn is None:
            raise AssertionError
        raise AssertionError(message_fn())
    return None
