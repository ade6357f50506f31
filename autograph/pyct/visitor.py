"""A faster gast.NodeVisitor for the analyses' whole-tree walks."""
import gast

LEAVES = (gast.expr_context, gast.operator, gast.unaryop, gast.boolop, gast.cmpop)


class NodeVisitor(gast.NodeVisitor):
    """gast.NodeVisitor with its dispatch cached per node type and a tighter default
    traversal (no generators; contexts and operators, which have no children, are not
    visited). Same semantics for visitors that define no visit_<context or operator>."""

    def visit(self, node):
        cls = type(self)
        table = cls.__dict__.get("_dispatch_table")
        if table is None:
            table = {}
            setattr(cls, "_dispatch_table", table)
        method = table.get(type(node))
        if method is None:
            method = getattr(cls, "visit_" + type(node).__name__, cls.generic_visit)
            table[type(node)] = method
        return method(self, node)

    def generic_visit(self, node):
        for child in children(node):
            self.visit(child)


def children(node):
    """The child nodes of `node` (as ast.iter_child_nodes), without contexts and operators
    (which have no children and no annotations), as a list."""
    out = []
    values = node.__dict__
    for field in node._fields:
        value = values.get(field)
        if type(value) is list:
            for item in value:
                if isinstance(item, gast.AST) and not isinstance(item, LEAVES):
                    out.append(item)
        elif isinstance(value, gast.AST) and not isinstance(value, LEAVES):
            out.append(value)
    return out


def walk(node):
    """Every node under `node`, itself included (as ast.walk, in another order), without
    contexts and operators."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(children(n))
