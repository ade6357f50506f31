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
from autograph.pyct import visitor

PRESERVED_ANNOS = frozenset(anno.Basic) | {anno.Static.ORIG_DEFINITIONS}

# (node type, list field) pairs in which a list replacement is spliced in place.
_SPLICING_FIELDS = frozenset([
    (gast.Tuple, "elts"), (gast.List, "elts"), (gast.Set, "elts"),
    (gast.Call, "args"), (gast.Delete, "targets"), (gast.arguments, "args"),
    (gast.arguments, "posonlyargs"), (gast.arguments, "kwonlyargs"),
])


_parsed = {}
_names_below = {}      # id(a node of a parsed template) -> the names in its subtree


def _parse_template(template):
    """The parsed template, parsed once per template text. Shared: never modify it (the
    replacer builds new nodes as it goes)."""
    nodes = _parsed.get(template)
    if nodes is None:
        nodes = _parsed[template] = parser.parse(textwrap.dedent(template), single_node=False)
        for node in nodes:
            _index_names(node)
    return nodes


def _index_names(node):
    """Records the names that could be placeholders in each subtree of a template node:
    a subtree without any is copied as it is, not visited."""
    names = set()
    values = node.__dict__
    for attr in ("id", "name", "arg"):
        value = values.get(attr)
        if type(value) is str:
            names.add(value)
    names.update(values.get("names") or ())           # global / nonlocal
    for field in node._fields:
        value = values.get(field)
        for child in value if type(value) is list else (value,):
            if isinstance(child, gast.AST):
                names |= _index_names(child)
    names = frozenset(names)
    _names_below[id(node)] = names
    return names


def _clone(node):
    """A copy of a template subtree (template nodes carry no annotations). Contexts and
    operators, which have no fields, are shared."""
    cls = node.__class__
    if cls in _FIELDLESS:
        return node
    new = cls.__new__(cls)
    values = new.__dict__
    for key, value in node.__dict__.items():
        if type(value) is list:
            value = [_clone(v) if isinstance(v, gast.AST) else v for v in value]
        elif isinstance(value, gast.AST):
            value = _clone(value)
        values[key] = value
    return new


_FIELDLESS = visitor.LEAF_TYPES


def replace(template, **replacements):
    """Fills in a template of statements; returns the list of gast statements."""
    if not isinstance(template, str):
        raise ValueError(f"a template is Python source, got {type(template).__name__}")
    namespace = naming.namespace()
    if namespace != naming.NAMESPACE:        # the template's `ag__` is a placeholder then
        replacements[naming.NAMESPACE] = namespace
    key = (template, frozenset(replacements))
    builder = _builders.get(key)
    if builder is None:
        builder = _builders[key] = _Compiler(replacements).compile(_parse_template(template))
    return builder(replacements, _Replacer(replacements))


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

    def visit(self, node):
        names = _names_below.get(id(node))
        if names is not None and names.isdisjoint(self.replacements):
            return _clone(node)             # no placeholder below: a plain copy
        method = _VISITS.get(type(node))
        if method is None:
            method = _VISITS[type(node)] = getattr(
                type(self), "visit_" + type(node).__name__, _Replacer.generic_visit)
        return method(self, node)

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
            return self.generic_visit(node)
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
        declaration = _declaration(self.replacements, node)
        return declaration[0] if declaration else None

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
            if not repl.isidentifier() and not all(
                    part.isidentifier() for part in repl.split(".")):
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


_VISITS = {}


# -- compiled templates ---------------------------------------------------------------------
# What the replacer does for a template and a set of placeholder names is the same every
# time: `_Compiler` writes it once as a Python function building the nodes directly (the
# replacer's visit stays for the rare nodes it has special rules for).

_builders = {}          # (template, placeholder names) -> build(replacements, replacer)


class _Compiler:

    def __init__(self, placeholders):
        self.placeholders = placeholders
        self.constants = []

    def compile(self, nodes):
        items = self._list(nodes, "body", gast.Module)
        source = f"def build(R, r):\n    return {items}\n"
        namespace = {"K": self.constants, "_shallow": _shallow, "_new": _new, "_body": _body,
                     "_as_list": _as_list, "_name_string": _name_string,
                     "_spliced": _spliced, "_declaration": _declaration}
        exec(compile(source, "<template>", "exec"), namespace)  # pylint: disable=exec-used
        return namespace["build"]

    def _constant(self, value):
        self.constants.append(value)
        return f"K[{len(self.constants) - 1}]"

    def _placeholder(self, node):
        return type(node) is gast.Name and node.id in self.placeholders

    def _node(self, node):
        """Code building the copy of `node` (one node)."""
        if _names_below[id(node)].isdisjoint(self.placeholders):
            return self._copy(node)
        if self._placeholder(node):
            return f"r._expression(R[{node.id!r}], {self._constant(node)}.ctx, {node.id!r})"
        if type(node) in _SPECIAL or type(node) is gast.Expr and self._placeholder(node.value):
            return f"r.visit({self._constant(node)})"
        fields = []
        for field in node._fields:
            value = node.__dict__.get(field)
            if type(value) is list:
                code = self._list(value, field, type(node))
                if field == "body":
                    code = f"_body({code})"
            elif isinstance(value, gast.AST):
                code = self._node(value)
            elif field == "name" and value in self.placeholders:
                code = f"_name_string(R[{value!r}], {value!r})"
            else:
                continue                            # (kept from the template node)
            fields.append(f"{field!r}: {code}")
        return f"_new({self._constant(node)}, {{{', '.join(fields)}}})"

    def _list(self, items, field, owner_type):
        """Code building the list of copies of `items` (a field of an `owner_type`)."""
        parts = []
        for item in items:
            if self._placeholder(item) and (owner_type, field) in _SPLICING_FIELDS:
                parts.append(f"*_spliced(r, R[{item.id!r}], {self._constant(item)})")
            elif not isinstance(item, gast.AST):
                parts.append(self._constant(item))
            elif _names_below[id(item)].isdisjoint(self.placeholders):
                parts.append(self._copy(item))
            elif type(item) is gast.Global or type(item) is gast.Nonlocal:
                parts.append(f"*_declaration(R, {self._constant(item)})")
            elif type(item) is gast.Expr and self._placeholder(item.value):
                parts.append(f"*_as_list(r.visit_Expr({self._constant(item)}))")
            elif type(item) in _SPECIAL:
                parts.append(f"*_as_list(r.visit({self._constant(item)}))")
            else:
                parts.append(self._node(item))
        return f"[{', '.join(parts)}]"

    def _copy(self, node):
        """Code building a copy of `node`, a subtree without placeholders (as _clone
        copies it, written out: contexts and operators shared, lists and nodes new)."""
        if type(node) in _FIELDLESS:
            return self._constant(node)
        fields = []
        for field in node._fields:
            value = node.__dict__.get(field)
            if type(value) is list:
                items = ", ".join(self._copy(v) if isinstance(v, gast.AST) else
                                  self._constant(v) for v in value)
                fields.append(f"{field!r}: [{items}]")
            elif isinstance(value, gast.AST):
                fields.append(f"{field!r}: {self._copy(value)}")
        if not fields:
            return f"_shallow({self._constant(node)})"
        return f"_new({self._constant(node)}, {{{', '.join(fields)}}})"


# Nodes with rules of their own (`_Replacer.visit_<type>`), built by the replacer.
_SPECIAL = frozenset((gast.Global, gast.Nonlocal, gast.keyword, gast.arguments))


def _new(template_node, fields):
    """A node like `template_node` (its non-field attributes kept), with `fields`."""
    cls = template_node.__class__
    new = cls.__new__(cls)
    values = new.__dict__
    values.update(template_node.__dict__)
    values.update(fields)
    return new


def _body(statements):
    return statements or [gast.Pass()]


def _declaration(replacements, node):
    """The global or nonlocal statement `node` with its placeholders replaced by names, as
    a list: empty where no name is left."""
    names = []
    for name in node.names:
        repl = replacements.get(name, name)
        if isinstance(repl, (list, tuple)):
            names.extend(_name_string(r, name) for r in repl)
        else:
            names.append(_name_string(repl, name))
    if not names:
        return ()
    new = _shallow(node)
    new.names = names
    return (new,)


def _as_list(result):
    if result is None:
        return []
    return result if isinstance(result, list) else [result]


def _spliced(replacer, repl, node):
    """A placeholder in a list that splices lists: its expressions."""
    if isinstance(repl, (list, tuple)):
        return [replacer._expression(r, node.ctx, node.id) for r in repl]
    return [replacer._expression(repl, node.ctx, node.id)]


def _dotted(name):
    """`a.b.c` as a gast expression, built directly (parsing costs ~40x more)."""
    if name in ("None", "True", "False"):
        return gast.Constant(value={"None": None, "True": True, "False": False}[name],
                             kind=None)
    parts = name.split(".")
    node = ast_util.name_node(parts[0])
    for attr in parts[1:]:
        node = ast_util.attribute_node(node, attr)
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
    node_type = type(node)
    if node_type not in _WITH_CONTEXT:
        return
    node.ctx = _CONTEXTS[type(ctx)]
    if node_type is gast.Tuple or node_type is gast.List:
        for element in node.elts:
            set_ctx(element, ctx)
    elif node_type is gast.Starred:
        set_ctx(node.value, ctx)
    elif node_type is not gast.Name:                 # an attribute or a subscript
        set_ctx(node.value, _LOAD)


_WITH_CONTEXT = frozenset((gast.Name, gast.Attribute, gast.Subscript, gast.Tuple, gast.List,
                           gast.Starred))
# One instance of each context (they have no fields; contexts are replaced, never changed).
_CONTEXTS = {cls: cls() for cls in (gast.Load, gast.Store, gast.Del, gast.Param)}
_LOAD = _CONTEXTS[gast.Load]
