"""Assert statements become `ag__.assert_stmt`, an `rt.Assert` op for tensor tests.

    assert x > 0, f'x={x}'   =>   ag__.assert_stmt(x > 0, lambda: f'x={x}')
    assert x > 0, 'bad'      =>   ag__.assert_stmt(x > 0, 'bad')

A message other than a constant is a function: evaluated only when the assertion fails.
"""
import gast

from autograph.pyct import templates
from autograph.pyct import transformer


class AssertTransformer(transformer.Base):
    statements_only = True

    def visit_Assert(self, node):
        node = self.generic_visit(node)
        if node.msg is None:
            return templates.replace("ag__.assert_stmt(test, None)", test=node.test)
        if isinstance(node.msg, gast.Constant):
            return templates.replace("ag__.assert_stmt(test, msg)", test=node.test,
                                     msg=node.msg)
        return templates.replace("ag__.assert_stmt(test, lambda: msg)", test=node.test,
                                 msg=node.msg)


def transform(node, ctx):
    if ctx.lacks(gast.Assert):
        return node                 # nothing to convert: skip the walk
    return AssertTransformer(ctx).visit(node)
