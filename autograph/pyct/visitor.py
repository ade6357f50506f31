"""A faster gast.NodeVisitor for the analyses' whole-tree walks."""
import ast

import gast

LEAVES = (gast.expr_context, gast.operator, gast.unaryop, gast.boolop, gast.cmpop)

# Fields that never hold a child node worth visiting: contexts and operators (no
# children, no annotations), and names, strings and numbers.
_LEAF_FIELDS = frozenset(("ctx", "op", "ops", "id", "attr", "kind", "type_comment",
                          "conversion", "is_async", "simple", "level", "module",
                          "kwd_attrs", "rest", "asname"))
_child_fields = {}
known_child_fields = _child_fields      # what child_fields returned, by node type

# The contexts' and operators' classes themselves (a set, for `type(n) in LEAF_TYPES`).
LEAF_TYPES = frozenset(cls for cls in vars(gast).values()
                       if isinstance(cls, type) and issubclass(cls, LEAVES))


def child_fields(node_type):
    """The fields of `node_type` that may hold child nodes (or lists of them)."""
    fields = _child_fields.get(node_type)
    if fields is None:
        excluded = set(_LEAF_FIELDS)
        if node_type is gast.Constant:
            excluded.add("value")
        if node_type is not gast.ExceptHandler:     # gast's handler name is a Name
            excluded.add("name")
        if node_type in (gast.Global, gast.Nonlocal):
            excluded.add("names")
        fields = _child_fields[node_type] = tuple(
            f for f in node_type._fields if f not in excluded)
    return fields


LEGACY_VISIT_CONSTANT = getattr(ast.NodeVisitor, "visit_Constant", None)


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
            if method is LEGACY_VISIT_CONSTANT:    # ast's search for visit_Num & co.
                method = cls.generic_visit
            table[type(node)] = method
        return method(self, node)

    def generic_visit(self, node):
        for child in children(node):
            self.visit(child)


def children(node):
    """The child nodes of `node` (as ast.iter_child_nodes), without contexts and operators
    (which have no children and no annotations), as a list."""
    fields = _child_fields.get(type(node))
    if fields is None:
        fields = child_fields(type(node))
    out = []
    values = node.__dict__
    for field in fields:
        value = values.get(field)
        if value is None:
            continue
        if type(value) is list:
            for item in value:
                if isinstance(item, gast.AST):
                    out.append(item)
        elif isinstance(value, gast.AST):
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


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
_SCOPES = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)


def statements(nodes, into_scopes=False):
    """Every statement in the statement list `nodes` and the blocks nested in them
    (except handlers and match cases themselves), entering nested defs and classes only
    with into_scopes."""
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if isinstance(n, gast.stmt):
            yield n
            if not into_scopes and isinstance(n, _SCOPES):
                continue
        values = n.__dict__
        for field in _BLOCKS:
            block = values.get(field)
            if block:
                stack.extend(block)
