"""A `break`, `continue` or `return` in `finally` discards the exception in flight.

    try:                               pending_ = None
        work()                         try:
    finally:                  =>           work()
        return 0                       except BaseException as caught_:
                                           pending_ = caught_
                                       finally:
                                           return 0
                                           if pending_ is not None:
                                               raise pending_

The jump converters that run next turn jumps into flags and skip what follows a jump
instead of jumping, so Python would re-raise the exception after the `finally` block;
caught and re-raised only when the block ends normally, it is discarded when the block
jumps, as in Python.

When the `try` jumps too (a `return` in its body, say), its flag is set while `finally`
runs, and the converters would skip what follows a statement of `finally` that may jump,
and the loops in it that may return. So then the `finally` block must jump at its top
level (`return 2`, or `break`, with what comes before it jumping nowhere), which discards
the `try`'s jump: a `return` overrides its return value, a `break` ends the loop either
way. A `break` or `continue` there cancelling a `return`, a `continue` cancelling a
`break`, and a jump inside a statement of the `finally` block (an `if`, a loop) after a
`try` that jumps are ConversionErrors naming both lines.
"""
import gast

from autograph.errors import ConversionError
from autograph.pyct import anno
from autograph.pyct import templates
from autograph.pyct import transformer

_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef, gast.Lambda)
_LOOPS = (gast.For, gast.While, gast.AsyncFor)


def _jumps_out_of(statements):
    """{kind: first statement} of the jumps ('break', 'continue', 'return') that leave
    `statements`: returns, and breaks and continues not inside a loop of their own."""
    found = {}
    stack = [(s, False) for s in reversed(statements)]
    while stack:
        node, in_loop = stack.pop()
        if isinstance(node, gast.Return):
            found.setdefault("return", node)
        elif isinstance(node, (gast.Break, gast.Continue)) and not in_loop:
            found.setdefault(type(node).__name__.lower(), node)
        if isinstance(node, _SCOPES):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                looped = in_loop or (field == "body" and isinstance(node, _LOOPS))
                stack.extend((child, looped) for child in reversed(block))
    return found


def _where(node):
    origin = anno.getanno(node, anno.Basic.ORIGIN, None)
    return f"{origin.loc.filename}:{origin.loc.lineno}" if origin is not None else "?"


# (a jump in `finally`, a jump of its `try` it would cancel): the pairs the flags the jump
# converters use cannot express.
_CANCELS = (("break", "return"), ("continue", "return"), ("continue", "break"))


def _check_both_jump(final, try_jumps):
    """Refuses a `finally` block that jumps after a `try` that jumps, but for the case the
    jump converters keep exact (see the module docstring)."""
    try_kind, try_jump = next(iter(try_jumps.items()))
    first = next(s for s in final if _jumps_out_of([s]))
    if not isinstance(first, (gast.Return, gast.Break, gast.Continue)):
        kind, jump = next(iter(_jumps_out_of([first]).items()))
        raise ConversionError(
            f"a `{kind}` inside a statement of `finally` ({_where(jump)}) after a `try` "
            f"that jumps (`{try_kind}` at {_where(try_jump)}) is not supported; end the "
            f"`finally` block with the `{kind}`, or move it after the try statement")
    kind = type(first).__name__.lower()
    for final_kind, cancelled in _CANCELS:
        if kind == final_kind and cancelled in try_jumps:
            raise ConversionError(
                f"a `{kind}` in `finally` ({_where(first)}) cancelling the `{cancelled}` "
                f"of its `try` ({_where(try_jumps[cancelled])}) is not supported; move "
                f"the `{kind}` after the try statement")


class FinallyJumpTransformer(transformer.Base):
    statements_only = True

    def _visit_try(self, node):
        node = self.generic_visit(node)
        if not _jumps_out_of(node.finalbody):
            return node
        try_jumps = _jumps_out_of(node.body + node.handlers + node.orelse)
        if try_jumps:
            _check_both_jump(node.finalbody, try_jumps)
        guarded = node.body
        if node.handlers or node.orelse:
            guarded = [type(node)(body=node.body, handlers=node.handlers,
                                  orelse=node.orelse, finalbody=[])]
        namer = self.ctx.namer
        return templates.replace(
            """
            pending = None
            try:
                guarded
            except BaseException as caught:
                pending = caught
            finally:
                final
                if pending is not None:
                    raise pending
            """, pending=namer.new_symbol("pending_", ()),
            caught=namer.new_symbol("caught_", ()), guarded=guarded, final=node.finalbody)

    visit_Try = _visit_try
    if hasattr(gast, "TryStar"):
        visit_TryStar = _visit_try


def transform(node, ctx):
    return FinallyJumpTransformer(ctx).visit(node)
