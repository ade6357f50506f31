"""`break` becomes a flag that also ends the loop; `else:` runs when it stayed unset.

    while i < n:                      break_ = False
        if f(i):                      while ag__.not_(break_) and i < n:
            break           =>            if f(i):
        i += 1                                break_ = True
    else:                                     continue      # then lowered by continue_statements
        g()                               i += 1
                                      if not break_:
                                          g()

For a `for` loop the flag is an extra loop test (anno EXTRA_LOOP_TEST) instead.
A loop without `break` keeps its `else:` as plain statements after the loop.

A `while` test that binds names (`while (n := n - 1) > 0:`) or calls a function defined
in the converted one (which may assign its variables) is evaluated at the top of the body
instead, `while True:` / `if not (test): <else>; break`, so that what it binds
is an ordinary assignment in the loop body, carried as loop state like any other.
"""
import gast

from autograph.pyct import anno
from autograph.pyct import ast_util
from autograph.pyct import templates
from autograph.pyct import transformer
from autograph.pyct import visitor


class _Loop:
    def __init__(self):
        self.flag = None
        self.used = False


class BreakTransformer(transformer.Base):
    statements_only = True

    def __init__(self, ctx):
        super().__init__(ctx)
        self._defs = []

    def visit_Break(self, node):
        loop = self.state[_Loop]
        loop.used = True
        return templates.replace("flag = True\ncontinue", flag=loop.flag)

    def _visit_loop(self, node):
        if isinstance(node, gast.While) and (
                (not self.ctx.lacks(gast.NamedExpr) and _binds_names(node.test) or
                 _calls_any(node.test, self._local_defs()))) and \
                not _jumps_out_of(node.orelse):
            exit_ = templates.replace("if not test:\n    orelse\n    break", test=node.test,
                                      orelse=node.orelse)
            node.test = gast.Constant(value=True, kind=None)
            node.body, node.orelse = exit_ + node.body, []
        with self.state[_Loop] as loop:
            loop.flag = self.ctx.namer.new_symbol("break_", ())
            node.body = self.visit_block(node.body)
            used, flag = loop.used, loop.flag
        orelse = self.visit_block(node.orelse)
        node.orelse = []
        if isinstance(node, gast.While):
            node.test = self.visit(node.test)
        else:
            node.iter = self.visit(node.iter)
        if not used:
            self.ctx.namer.generated_names.discard(flag)
            return [node] + orelse
        if isinstance(node, gast.While):
            node.test = templates.replace_as_expression("not flag and test", flag=flag,
                                                        test=node.test)
        else:
            extra = templates.replace_as_expression("not flag", flag=flag)
            existing = anno.getanno(node, anno.Basic.EXTRA_LOOP_TEST, None)
            if existing is not None:
                extra = templates.replace_as_expression("a and b", a=extra, b=existing)
            anno.setanno(node, anno.Basic.EXTRA_LOOP_TEST, extra)
        result = templates.replace("flag = False", flag=flag) + [node]
        if orelse:
            result += templates.replace("if not flag:\n    orelse", flag=flag, orelse=orelse)
        return result

    visit_While = visit_For = _visit_loop

    def visit_FunctionDef(self, node):
        with self.state[_Loop]:         # a break never crosses a function
            self._defs.append({n.name for n in ast_util.own_body_symbols(node, self.ctx.may_walrus)[2]})
            try:
                return self.generic_visit(node)
            finally:
                self._defs.pop()

    def _local_defs(self):
        """Names of functions defined in the function being converted (they may assign
        its variables through nonlocal: a loop test calling one moves into the body)."""
        return self._defs[-1] if self._defs else set()

    visit_AsyncFunctionDef = visit_FunctionDef


def _binds_names(node):
    return any(isinstance(n, gast.NamedExpr) for n in visitor.walk(node))


def _calls_any(node, names):
    return bool(names) and any(
        isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in names
        for n in visitor.walk(node))


def _jumps_out_of(statements):
    """Whether a loop's `else:` has a break/continue of an enclosing loop (it could not
    move into the loop's own body)."""
    stack = list(statements)
    while stack:
        n = stack.pop()
        if isinstance(n, (gast.Break, gast.Continue)):
            return True
        if not isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef,
                              gast.While, gast.For, gast.AsyncFor, gast.expr)):
            stack.extend(visitor.children(n))
    return False


def transform(node, ctx):
    if ctx.lacks(gast.Break, gast.While, transformer.LoopElse):
        return node                 # nothing to lower or move: skip the walk
    return BreakTransformer(ctx).visit(node)
