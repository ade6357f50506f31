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

When the `try` jumps too (a `return` in its body, say), a jump in `finally` discards its
jump: a `return` overrides its return value, a `break` ends the loop either way. A
`break` or `continue` there cancelling a `return`, or a `continue` cancelling a `break`,
is a ConversionError naming both lines; and so is a `finally` block whose statements
after a jump (or loops that may return) the converters guard with a flag the `try`'s
jump may have set (`check_lowered`, after the jump converters): they would be skipped.
"""
import gast

from autograph.errors import ConversionError
from autograph.pyct import anno
from autograph.pyct import templates
from autograph.pyct import transformer
from autograph.pyct import visitor

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


def _check_cancels(final_jumps, try_jumps):
    for final_kind, cancelled in _CANCELS:
        if final_kind in final_jumps and cancelled in try_jumps:
            raise ConversionError(
                f"a `{final_kind}` in `finally` ({_where(final_jumps[final_kind])}) "
                f"cancelling the `{cancelled}` of its `try` "
                f"({_where(try_jumps[cancelled])}) is not supported; move the "
                f"`{final_kind}` after the try statement")


class FinallyJumpTransformer(transformer.Base):
    statements_only = True

    def _visit_try(self, node):
        node = self.generic_visit(node)
        final_jumps = _jumps_out_of(node.finalbody)
        if not final_jumps:
            return node
        try_jumps = _jumps_out_of(node.body + node.handlers + node.orelse)
        _check_cancels(final_jumps, try_jumps)
        guarded = node.body
        if node.handlers or node.orelse:
            guarded = [type(node)(body=node.body, handlers=node.handlers,
                                  orelse=node.orelse, finalbody=[])]
        namer = self.ctx.namer
        result = templates.replace(
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
        result[1].finalbody[-1]._ag_pending_check = True
        if try_jumps:
            result[1]._ag_jumps = (final_jumps, try_jumps)       # for check_lowered
        return result

    visit_Try = _visit_try
    if hasattr(gast, "TryStar"):
        visit_TryStar = _visit_try


def transform(node, ctx):
    if not ctx.holds(gast.Try):
        return node
    return FinallyJumpTransformer(ctx).visit(node)


def check_lowered(node, ctx):
    """After the jump converters: refuses a `finally` block that tests a flag its `try`
    may have set (a statement after a jump of its own, or a loop that may return, which
    the `try`'s jump would skip), naming both jumps."""
    if not ctx.holds(gast.Try) or not isinstance(node, gast.FunctionDef):
        return node                                     # (a lambda: no statements)
    generated = ctx.namer.generated_names
    for stmt in visitor.statements([node], into_scopes=True):
        jumps = getattr(stmt, "_ag_jumps", None)
        if jumps is None:
            continue
        set_in_try = {t.id for s in visitor.statements(stmt.body)
                      if type(s) is gast.Assign and _is_true(s.value)
                      for t in s.targets if type(t) is gast.Name and t.id in generated}
        if set_in_try & _names_read(stmt.finalbody):
            (final_kind, final_jump), = list(jumps[0].items())[:1]
            (try_kind, try_jump), = list(jumps[1].items())[:1]
            raise ConversionError(
                f"the `finally` block with a `{final_kind}` at {_where(final_jump)} has "
                f"statements or loops after it that would be skipped once its `try` "
                f"jumped (`{try_kind}` at {_where(try_jump)}); not supported: end the "
                f"`finally` block with the jump, or move it after the try statement")
    return node


def _is_true(node):
    return type(node) is gast.Constant and node.value is True


def _names_read(statements):
    """Names the statements read (loop tests the jump converters keep aside included),
    but for the re-raise of the pending exception: skipped after a jump, as it should."""
    names = set()
    for stmt in statements:
        if _only_pending_check(stmt):
            continue
        expressions = [anno.getanno(stmt, anno.Basic.EXTRA_LOOP_TEST, None)]
        for field, value in gast.iter_fields(stmt):
            if field not in _BLOCKS:
                expressions += value if isinstance(value, list) else [value]
        for expression in expressions:
            if isinstance(expression, gast.AST):
                names.update(n.id for n in visitor.walk(expression)
                             if type(n) is gast.Name and type(n.ctx) is gast.Load)
        if not isinstance(stmt, _SCOPES):
            for field in _BLOCKS:
                for child in getattr(stmt, field, None) or ():
                    names |= _names_read(child.body if isinstance(
                        child, (gast.ExceptHandler, gast.match_case)) else [child])
    return names


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _only_pending_check(stmt):
    """The re-raise statement, or a guard holding only it."""
    if getattr(stmt, "_ag_pending_check", False):
        return True
    return (type(stmt) is gast.If and not stmt.orelse and bool(stmt.body)
            and all(_only_pending_check(s) for s in stmt.body))
