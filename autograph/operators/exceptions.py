"""`assert` statements, and `try` statements around the checks a graph makes.

An assert is a Python assert, or a graph assertion for a symbolic test. A `try` runs as
Python while the function is traced; `try_stmt` refuses one whose handlers or `finally`
the checks its body adds to the graph would escape.
"""
import runtime as rt
from runtime import context
from runtime import control_flow as rt_cf
from runtime import traceback_utils
from runtime.errors import AssertionFailedError

from ..errors import StagingError
from .control_flow import _user, is_symbolic


def assert_stmt(expression, message=None):
    """`assert expression, message`. `message`: None, the message itself (a constant), or
    a function computing it, called only when the assertion fails - for a symbolic test,
    in a graph branch that runs only then."""
    if is_symbolic(expression):
        return _graph_assert(rt.reduce_all(expression), message)
    if not expression:
        if message is None:
            raise AssertionError
        raise AssertionError(message() if callable(message) else message)
    return None


def _graph_assert(ok, message):
    """An assertion failing with Python's message (`str(message)`, a tuple's text too)
    when the graph runs with `ok` false."""
    if message is None:
        return rt.Assert(ok, ["Assertion failed"])
    if not callable(message):
        return rt.Assert(ok, [message])
    return rt_cf.cond(ok, lambda: None, lambda: rt.Assert(ok, [_user(message)()]))


# -- try around the checks a graph makes when it runs -------------------------------------

def try_stmt(handled):
    """The record of a `try` statement traced into a graph (`handled()`: the classes its
    handlers catch). Its body's checks (asserts, staged raises) fail when the graph runs,
    after the whole `try` has run as Python: a handler that would catch them, or a
    `finally` block whose operations should run when they fail, is a StagingError."""
    graph = context.current_graph()
    return _TryStatement(graph, handled) if graph is not None else _NO_GRAPH_TRY


def before_finally(record):
    record.before_finally()


def after_finally(record):
    record.after_finally()


class _NoGraphTry:
    """A `try` run eagerly: Python catches everything itself."""

    def before_finally(self):
        pass

    def after_finally(self):
        pass


_NO_GRAPH_TRY = _NoGraphTry()


class _TryStatement:
    def __init__(self, graph, handled):
        self.graph = graph
        self.handled = handled
        self.origin = traceback_utils.user_frame(3)         # the `try` line
        self.start = _Mark(graph)
        self.checks = ()
        self.final = None

    def before_finally(self):
        """Called first in `finally`: the body's (and handlers') checks, refused if a
        handler catches what one raises."""
        self.checks = list(_checks(self.start.ops_since()))
        if self.checks:
            classes = _classes(self.handled())
            for op, raises in self.checks:
                caught = [c for c in classes if issubclass(raises, c)]
                if caught:
                    raise self._error(op, f"so `except {caught[0].__name__}` cannot catch it")
        self.final = _Mark(self.graph)

    def after_finally(self):
        """Called last in `finally`: refused if it staged operations with effects, which
        would not run when a check of the body fails."""
        if not self.checks or self.final is None:
            return
        effects = [op for op in self.final.ops_since() if op.stateful]
        if effects:
            raise self._error(self.checks[0][0], "and the operations the `finally` block "
                              f"adds ({effects[0].type} at {_where(effects[0])}) would not "
                              f"run after it")

    def _error(self, op, consequence):
        source = op.origin.line() if op.origin is not None else ""
        what = f"`{source}`" if source else f"the {op.type} operation"
        return StagingError(
            f"`try` around a check the graph makes when it runs: {what} at {_where(op)} "
            f"raises when the graph runs, after this `try` has run (while the function was "
            f"traced), {consequence}. Test the condition with an `if` on the tensor and do "
            f"there what the handler does, or move the `try` out of the converted "
            f"function (around its call)", self.origin)


class _Mark:
    """A point in a graph's op list: the ops added after it."""

    def __init__(self, graph):
        self.graph = graph
        self.last = graph.ops[-1] if graph.ops else None

    def ops_since(self):
        ops = self.graph.ops
        if self.last is None:
            return list(ops)
        for i in range(len(ops) - 1, -1, -1):
            if ops[i] is self.last:
                return ops[i + 1:]
        return list(ops)


# The checks a graph makes when it runs: op type -> the class it raises (or a function of
# the op giving it).
_CHECKS = {"assert": lambda op: AssertionFailedError,
           "assert_assigned": lambda op: UnboundLocalError,
           "raise": lambda op: op.attrs["exc_type"]}


def _checks(ops):
    """(op, class it raises) of the checks among `ops` and their sub-graphs."""
    for op in ops:
        kind = _CHECKS.get(op.type)
        if kind is not None:
            yield op, kind(op)
        for graph in op.subgraphs():
            yield from _checks(graph.ops)


def _classes(handled):
    """The exception classes of an `except` clause's types (None: a bare `except`)."""
    out = []
    for item in handled:
        if item is None:
            out.append(BaseException)
        elif isinstance(item, tuple):
            out.extend(_classes(item))
        elif isinstance(item, type) and issubclass(item, BaseException):
            out.append(item)
    return out


def _where(op):
    return op.origin.short() if op.origin is not None else "an unknown line"
