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
jumps, as in Python. A jump in `finally` also discards a jump of its `try`: a `return`
there overrides (the last return value is the one returned) and a `break` ends the loop
either way, but a `break` or `continue` cancelling a `return`, or a `continue` cancelling
a `break`, is a ConversionError naming it.
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


class FinallyJumpTransformer(transformer.Base):
    statements_only = True

    def _visit_try(self, node):
        node = self.generic_visit(node)
        final_jumps = _jumps_out_of(node.finalbody)
        if not final_jumps:
            return node
        try_jumps = _jumps_out_of(node.body + node.handlers + node.orelse)
        for final_kind, try_kind in _CANCELS:
            if final_kind in final_jumps and try_kind in try_jumps:
                raise ConversionError(
                    f"a `{final_kind}` in `finally` ({_where(final_jumps[final_kind])}) "
                    f"cancelling the `{try_kind}` of its `try` "
                    f"({_where(try_jumps[try_kind])}) is not supported; move the "
                    f"`{final_kind}` after the try statement")
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
