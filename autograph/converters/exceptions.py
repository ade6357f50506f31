"""Raise statements mark the program's exceptions; try statements note the graph's checks.

    raise ValueError(f"bad {x}")   =>   raise ag__.raised(ValueError(f"bad {x}"))

A raise that leaves a branch of a tensor `if` (or a tensor loop's body) while it is traced
becomes a `raise` op of the graph (operators/raises.py). A bare `raise` re-raises an
exception already marked (or one the program did not raise: left as it is).

    try:                                  try_1 = ag__.try_stmt(lambda: (KeyError,))
        body                              try:
    except KeyError:               =>         body
        handler                           except KeyError:
    finally:                                  handler
        final                             finally:
                                              ag__.before_finally(try_1)
                                              final
                                              ag__.after_finally(try_1)

A `try` runs as Python while the function is traced; the checks its body adds to the
graph (asserts, staged raises) fail only when the graph runs. `try_stmt` refuses a
`try` whose handlers would catch them, or whose `finally` adds operations that would not
run after them (operators/exceptions.py).
"""
import gast

from autograph.pyct import ast_util
from autograph.pyct import templates
from autograph.pyct import transformer


class RaiseTransformer(transformer.Base):
    statements_only = True

    def visit_Raise(self, node):
        node = self.generic_visit(node)
        if node.exc is None:
            return node
        node.exc = templates.replace_as_expression("ag__.raised(exc)", exc=node.exc)
        return node

    def _visit_try(self, node):
        node = self.generic_visit(node)
        record = self.ctx.namer.new_symbol("try_", ())
        handled = [ast_util.copy_clean(h.type) if h.type is not None
                   else gast.Constant(value=None, kind=None) for h in node.handlers]
        start = templates.replace("record = ag__.try_stmt(lambda: (handled,))",
                                  record=record, handled=handled)
        node.finalbody = (templates.replace("ag__.before_finally(record)", record=record)
                          + node.finalbody
                          + (templates.replace("ag__.after_finally(record)", record=record)
                             if node.finalbody else []))
        return start + [node]

    visit_Try = _visit_try
    if hasattr(gast, "TryStar"):
        visit_TryStar = _visit_try


_TRY_TYPES = tuple(getattr(gast, n) for n in ("Try", "TryStar") if hasattr(gast, n))


def transform(node, ctx):
    if ctx.lacks(gast.Raise, *_TRY_TYPES):
        return node                 # nothing to convert: skip the walk
    return RaiseTransformer(ctx).visit(node)
