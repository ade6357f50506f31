"""`continue` becomes a flag; the rest of the loop body runs only while it is unset.

    while i < n:                      while i < n:
        i += 1                            continue_ = False
        if i % 2:           =>            i += 1
            continue                      if i % 2:
        s += i                                continue_ = True
                                          if not continue_:
                                              s += i
"""
import gast

from autograph.converters import guards
from autograph.pyct import templates


class ContinueTransformer(guards.GuardingTransformer):
    statements_only = True

    def visit_Continue(self, node):
        flag = self.record_jump()
        return templates.replace("flag = True", flag=flag)

    def _visit_loop(self, node):
        flag = self.ctx.namer.new_symbol("continue_", ())
        node.body, used = self.visit_block_guarded(node.body, flag, is_target=True)
        if used and not self.last_flag_read():
            # Every continue ended up as an if/else (see guards.py): the flag is unused.
            node.body = guards.drop_assignments(node.body, flag) or [gast.Pass()]
            used = False
        if used:
            node.body = templates.replace("flag = False", flag=flag) + node.body
        else:
            self.ctx.namer.generated_names.discard(flag)
        if node.orelse:
            node.orelse, _ = self.visit_block_guarded(node.orelse)
        if isinstance(node, gast.While):
            node.test = self.visit(node.test)
        else:
            node.iter = self.visit(node.iter)
        return node

    visit_While = visit_For = _visit_loop

    def visit_FunctionDef(self, node):
        with self.state[guards._Block] as block:
            block.is_target = True          # a continue never crosses a function
            node.body, _ = self.visit_block_guarded(node.body)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef


def transform(node, ctx):
    if ctx.lacks(gast.Continue, gast.Break, gast.While):  # (lowered breaks continue)
        return node                 # nothing to convert: skip the walk
    return ContinueTransformer(ctx).visit(node)
