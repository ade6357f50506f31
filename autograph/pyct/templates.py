"""Quasi-quotes: Python source with placeholder names, filled in with AST pieces.

    templates.replace('''
        def fn_name(args):
            nonlocal vars_
            body
        ''', fn_name='if_body', args=[], vars_=[x, y], body=stmts)

A placeholder is a name in the template. It can be replaced by:
  str          a name, or a dotted chain like 'ag__.if_stmt'
  QN           the expression of that qualified name
  gast expr    a copy of it
  list         of statements: spliced where the placeholder is a statement
               (an empty list removes it; a body left empty gets `pass`);
               of expressions/str/QN: spliced into tuple, list and set
               displays, call arguments, `del` targets, parameters and
               global/nonlocal lists (an empty list removes the declaration);
               anywhere else it becomes a tuple
  gast stmt    where the placeholder is a statement
  gast keyword (or list of them) where the placeholder is `placeholder=...`
  gast.arguments  for a whole parameter list: `def f(args)`
Templates call operators as `ag__.name(...)`; the replacer writes the conversion's
namespace name (naming.namespace()) for the `ag__` of the template's text (never for a
replacement: a user's variable may be called `ag__`).
A replacement node is moved into the first place it fills and copied (keeping the
annotations in PRESERVED_ANNOS, ORIGIN among them) into any further ones, so
callers pass nodes they give up, and no node ends up in two places; expression contexts
(Load/Store/Del/Param) are set from where the placeholder stands.
"""
import textwrap

import gast

from autograph.pyct import anno
from autograph.pyct import ast_util
from autograph.pyct import naming
from autograph.pyct import parser
from autograph.pyct import qual_names

PRESERVED_ANNOS = frozenset(anno.Basic) | {anno.Static.ORIG_DEFINITIONS}

# (node type, list field) pairs in which a list replacement is spliced in place.
_SPLICING_FIELDS = frozenset([
    (gast.Tuple, "elts"), (gast.List, "elts"), (gast.Set, "elts"),
    (gast.Call, "args"), (gast.Delete, "targets"), (gast.arguments, "args"),
    (gast.arguments, "posonlyargs"), (gast.arguments, "kwonlyargs"),
])


_parsed = {}


def _parse_template(template):
    """The parsed template, parsed once per template text. Shared: never modify it (the
    replacer builds new nodes as it goes)."""
    nodes = _parsed.get(template)
    if nodes is None:
        nodes = _parsed[template] = parser.parse(textwrap.dedent(template), single_node=False)
    return nodes


def replace(template, **replacements):
    """Fills in a template of statements; returns the list of gast statements."""
    if not isinstance(template, str):
        raise ValueError(f"a template is Python source, got {type(template).__name__}")
    nodes = _parse_template(template)
    return _Replacer(replacements).visit_list(nodes, "body", gast.Module)


def replace_as_expression(template, **replacements):
    """Fills in a template made of one expression; returns the gast expression."""
    nodes = replace(template, **replacements)
    if len(nodes) != 1 or not isinstance(nodes[0], gast.Expr):
        raise ValueError(f"the template is not a single expression:\n{template}")
    return nodes[0].value


def _shallow(node):
    """A new node of the same type whose fields are the same objects (for the replacer
    to overwrite: it never changes the cached template's own nodes)."""
    cls = node.__class__
    new = cls.__new__(cls)
    new.__dict__.update(node.__dict__)
    return new


class _Replacer(gast.NodeTransformer):
    """Builds a filled copy of a cached template. A replacement node is inserted as it is
    the first time it is used and copied after that, so no node ends up in two places."""

    def __init__(self, replacements):
        self.replacements = replacements
        self._used = set()

    def _fresh(self, node):
        if id(node) in self._used:
            return _copy(node)
        self._used.add(id(node))
        return node

    def _placeholder(self, node):
        """The replacement for a placeholder Name node, or None."""
        if isinstance(node, gast.Name) and node.id in self.replacements:
            return self.replacements[node.id]
        return None

    def generic_visit(self, node):
        new = _shallow(node)
        values = new.__dict__
        for field in node._fields:
            value = values.get(field)
            if type(value) is list:
                values[field] = self.visit_list(value, field, type(node))
            elif isinstance(value, gast.AST):
                values[field] = self.visit(value)
        if type(values.get("body")) is list and not new.body:
            new.body = [gast.Pass()]
        return new

    def visit_list(self, items, field, owner_type):
        result = []
        for item in items:
            repl = self._placeholder(item)
            if isinstance(repl, (list, tuple)) and (owner_type, field) in _SPLICING_FIELDS:
                result.extend(self._expression(r, item.ctx, item.id) for r in repl)
                continue
            new = self.visit(item)
            if isinstance(new, list):
                result.extend(new)
            elif new is not None:
                result.append(new)
        return result

    def visit_Name(self, node):
        if node.id not in self.replacements:
            new = self.generic_visit(node)
            if new.id == naming.NAMESPACE:
                new.id = naming.namespace()
            return new
        return self._expression(self.replacements[node.id], node.ctx, node.id)

    def visit_Expr(self, node):
        repl = self._placeholder(node.value)
        if isinstance(repl, gast.stmt):
            repl = [repl]
        if isinstance(repl, (list, tuple)):
            if not all(isinstance(r, gast.stmt) for r in repl):
                raise ValueError(f"template placeholder {node.value.id!r} stands for "
                                 "statements; the list has non-statement items")
            return [self._fresh(r) for r in repl]
        return self.generic_visit(node)

    def visit_FunctionDef(self, node):
        new = self.generic_visit(node)
        if node.name in self.replacements:
            new.name = _name_string(self.replacements[node.name], node.name)
        return new

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_arguments(self, node):
        only = node.args[0] if len(node.args) == 1 else None
        repl = self._placeholder(only)
        if isinstance(repl, gast.arguments):
            if node.posonlyargs or node.kwonlyargs or node.vararg or node.kwarg:
                raise ValueError(f"template placeholder {only.id!r} is replaced by "
                                 "whole arguments; it must be the only parameter")
            return _copy(repl)
        return self.generic_visit(node)

    def visit_Global(self, node):
        names = []
        for name in node.names:
            repl = self.replacements.get(name, name)
            repl = repl if isinstance(repl, (list, tuple)) else [repl]
            names.extend(_name_string(r, name) for r in repl)
        if not names:
            return None
        new = _shallow(node)
        new.names = names
        return new

    visit_Nonlocal = visit_Global

    def visit_keyword(self, node):
        repl = self.replacements.get(node.arg) if node.arg else None
        if isinstance(repl, gast.keyword) or (
                isinstance(repl, (list, tuple)) and all(isinstance(r, gast.keyword) for r in repl)):
            return _copy(list(repl) if isinstance(repl, (list, tuple)) else repl)
        new = self.generic_visit(node)
        if repl is not None:
            new.arg = _name_string(repl, node.arg)
        return new

    def _expression(self, repl, ctx, placeholder):
        if isinstance(repl, str):
            if not all(part.isidentifier() for part in repl.split(".")):
                raise ValueError(f"template placeholder {placeholder!r}: {repl!r} is not a "
                                 "name or dotted name; pass an AST node for expressions")
            new = _dotted(repl)
        elif isinstance(repl, qual_names.QN):
            new = repl.ast()
        elif isinstance(repl, gast.expr):
            new = self._fresh(repl)
        elif isinstance(repl, (list, tuple)):
            new = gast.Tuple(elts=[self._expression(r, ctx, placeholder) for r in repl],
                             ctx=gast.Load())
        else:
            raise ValueError(
                f"template placeholder {placeholder!r} stands for an expression here; "
                f"cannot replace it with {type(repl).__name__} {repl!r} (use a str, QN, "
                "gast expression or a list of them)")
        if isinstance(ctx, gast.Param) and not isinstance(new, gast.Name):
            raise ValueError(f"template placeholder {placeholder!r} is a parameter; "
                             f"{repl!r} is not a simple name")
        set_ctx(new, ctx)
        return new


def _dotted(name):
    """`a.b.c` as a gast expression, built directly (parsing costs ~40x more)."""
    if name in ("None", "True", "False"):
        return gast.Constant(value={"None": None, "True": True, "False": False}[name],
                             kind=None)
    parts = name.split(".")
    node = ast_util.name_node(parts[0])
    for attr in parts[1:]:
        node = gast.Attribute(value=node, attr=attr, ctx=gast.Load())
    return node


def _copy(node):
    return ast_util.copy_clean(node, preserve_annos=PRESERVED_ANNOS)


def _name_string(repl, placeholder):
    if isinstance(repl, str) and repl.isidentifier():
        return repl
    if isinstance(repl, qual_names.QN) and not repl.is_composite():
        return str(repl)
    if isinstance(repl, gast.Name):
        return repl.id
    raise ValueError(f"template placeholder {placeholder!r} must be a simple name; "
                     f"cannot replace it with {type(repl).__name__} {repl!r}")


def set_ctx(node, ctx):
    """Sets the expression context of a target-like expression, recursively.

    Tuples, lists and starred expressions pass `ctx` to their elements; the base
    of an attribute or subscript is always read (Load): in `a.b = 1` only `a.b`
    is stored.
    """
    if not isinstance(node, (gast.Name, gast.Attribute, gast.Subscript, gast.Tuple,
                             gast.List, gast.Starred)):
        return
    node.ctx = type(ctx)()
    if isinstance(node, (gast.Tuple, gast.List)):
        for element in node.elts:
            set_ctx(element, ctx)
    elif isinstance(node, gast.Starred):
        set_ctx(node.value, ctx)
    elif isinstance(node, (gast.Attribute, gast.Subscript)):
        set_ctx(node.value, gast.Load())
