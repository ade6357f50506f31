"""Conditional expressions become `ag__.if_exp`, a graph cond for tensor tests.

    a if x > 0 else b   =>   ag__.if_exp(x > 0, lambda: a, lambda: b, 'a if x > 0 else b')
"""
import gast

from autograph.pyct import anno
from autograph.pyct import parser
from autograph.pyct import templates
from autograph.pyct import transformer
from autograph.pyct import visitor


def record_source_text(node):
    """Annotate each conditional expression in `node` (one, or a tree) with its text as
    written; conversion does it for every one, before converting."""
    for n in visitor.walk(node):
        if isinstance(n, gast.IfExp) and not anno.hasanno(n, anno.Basic.SOURCE_TEXT):
            anno.setanno(n, anno.Basic.SOURCE_TEXT, parser.unparse(n).strip())


class ConditionalExpressionTransformer(transformer.Base):

    def visit_IfExp(self, node):
        node = self.generic_visit(node)
        return templates.replace_as_expression(
            "ag__.if_exp(test, lambda: body, lambda: orelse, expr_repr)",
            test=node.test, body=node.body, orelse=node.orelse,
            expr_repr=gast.Constant(value=anno.getanno(node, anno.Basic.SOURCE_TEXT), kind=None))


def transform(node, ctx):
    return ConditionalExpressionTransformer(ctx).visit(node)
