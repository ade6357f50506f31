"""`and`, `or`, `not` and chained comparisons keep Python's laziness for tensors too.

    a and b          =>   ag__.and_(lambda: a, lambda: b)
    a or b or c      =>   ag__.or_(lambda: a, lambda: ag__.or_(lambda: b, lambda: c))
    not a            =>   ag__.not_(a)
    a < b <= c       =>   ag__.compare_chain(a, ('Lt', lambda: b), ('LtE', lambda: c))
    x in (1, 2)      =>   ag__.in_(x, (1, 2))          (any elementwise match for tensors)
    x is None        =>   ag__.is_none(x)              (a loop may leave x an optional value)

Operands that bind names (`:=`) are left as they are: a lambda would hide the binding.
"""
import gast

from autograph.pyct import templates
from autograph.pyct import transformer
from autograph.pyct import visitor


def _binds_names(node):
    return any(isinstance(n, gast.NamedExpr) for n in visitor.walk(node))


class LogicalExpressionTransformer(transformer.Base):

    def _may_bind_names(self):
        """Whether an operand may hold a `:=` (none if the scan saw none in the code)."""
        return not self.ctx.lacks(gast.NamedExpr)

    def visit_BoolOp(self, node):
        node = self.generic_visit(node)
        if self._may_bind_names() and any(_binds_names(v) for v in node.values):
            return node
        op = "ag__.and_" if isinstance(node.op, gast.And) else "ag__.or_"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = templates.replace_as_expression(
                f"{op}(lambda: a, lambda: b)", a=value, b=result)
        return result

    def visit_UnaryOp(self, node):
        node = self.generic_visit(node)
        if isinstance(node.op, gast.Not):
            return templates.replace_as_expression("ag__.not_(operand)", operand=node.operand)
        return node

    def visit_Compare(self, node):
        node = self.generic_visit(node)
        if len(node.ops) == 1 and isinstance(node.ops[0], (gast.Is, gast.IsNot)) and \
                isinstance(node.comparators[0], gast.Constant) and \
                node.comparators[0].value is None:
            test = templates.replace_as_expression("ag__.is_none(a)", a=node.left)
            if isinstance(node.ops[0], gast.IsNot):
                test = templates.replace_as_expression("ag__.not_(t)", t=test)
            return test
        if len(node.ops) == 1 and isinstance(node.ops[0], (gast.In, gast.NotIn)):
            test = templates.replace_as_expression("ag__.in_(a, b)", a=node.left,
                                                   b=node.comparators[0])
            if isinstance(node.ops[0], gast.NotIn):
                test = templates.replace_as_expression("ag__.not_(t)", t=test)
            return test
        if len(node.ops) == 1 or self._may_bind_names() and any(
                _binds_names(c) for c in node.comparators):
            return node
        pairs = [templates.replace_as_expression(
            "(op, lambda: operand)", op=gast.Constant(value=type(op).__name__, kind=None),
            operand=comparator) for op, comparator in zip(node.ops, node.comparators)]
        return templates.replace_as_expression(
            "ag__.compare_chain(left, pairs)", left=node.left, pairs=pairs)


def transform(node, ctx):
    return LogicalExpressionTransformer(ctx).visit(node)
