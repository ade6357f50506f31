"""Small helpers over gast trees: clean copies, renaming, pattern matching, parallel walks."""
import gast

from autograph.pyct import anno
from autograph.pyct import naming
from autograph.pyct import parser
from autograph.pyct import qual_names
from autograph.pyct import visitor


NodeVisitor = visitor.NodeVisitor


# -- building the statements generated code is made of (faster than templates) -----------

def name_node(name, ctx=None):
    """A gast Name (Load unless `ctx`), built directly (gast's constructor checks its
    arguments: several times slower)."""
    node = _NAME.__new__(_NAME)
    node.__dict__.update(id=name, ctx=ctx or _LOAD, annotation=None, type_comment=None)
    return node


def constant_node(value):
    """A gast Constant, built directly."""
    node = _CONSTANT.__new__(_CONSTANT)
    node.__dict__.update(value=value, kind=None)
    return node


def tuple_node(elements):
    """A tuple display (Load) of the gast expressions `elements`, built directly."""
    node = _TUPLE.__new__(_TUPLE)
    node.__dict__.update(elts=elements, ctx=_LOAD)
    return node


def attribute_node(value, attr):
    """`value.attr` (Load), built directly."""
    node = _ATTRIBUTE.__new__(_ATTRIBUTE)
    node.__dict__.update(value=value, attr=attr, ctx=_LOAD)
    return node


_NAME, _ATTRIBUTE, _CONSTANT, _TUPLE = gast.Name, gast.Attribute, gast.Constant, gast.Tuple
_LOAD = gast.Load()


def function_def(name, params, body, nonlocals=(), globals_=()):
    """`def name(params): nonlocal ...; global ...; body` (params: names)."""
    declared = ([gast.Nonlocal(names=list(nonlocals))] if nonlocals else []) + (
        [gast.Global(names=list(globals_))] if globals_ else [])
    return gast.FunctionDef(name=name, args=arguments(*params),
                            body=declared + (body or [gast.Pass()]),
                            decorator_list=[], returns=None, type_comment=None,
                            type_params=[])


def after_docstring(body, statements):
    """`statements` put first in the statement list `body`, after its docstring if any."""
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[:1] + statements + body[1:]
    return statements + body


def arguments(*names):
    """A parameter list of plain positional `names`."""
    return gast.arguments(args=[name_node(n, gast.Param()) for n in names], posonlyargs=[],
                          vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                          defaults=[])


def ag_call(function, args):
    """`ag__.function(*args)` as an expression (`ag__`: naming.namespace())."""
    return gast.Call(func=gast.Attribute(value=name_node(naming.namespace()), attr=function,
                                         ctx=gast.Load()), args=list(args), keywords=[])


def copy_clean(node, preserve_annos=None):
    """Deep-copies a node (or list of nodes), dropping annotations but `preserve_annos`.

    Kept annotation values are shared with the original, not copied.
    """
    return _copy(node, frozenset(preserve_annos or ()))


def _copy(node, preserve):
    if isinstance(node, list):
        return [_copy(n, preserve) for n in node]
    if isinstance(node, tuple):
        return tuple(_copy(n, preserve) for n in node)
    if not isinstance(node, gast.AST):
        return node
    # Copying the instance dict (fields and location attributes) is much faster than
    # calling the node constructor, which validates every field.
    cls = node.__class__
    new_node = cls.__new__(cls)
    fields = new_node.__dict__
    for key, value in node.__dict__.items():
        if key == anno.ANNO_ATTR:
            continue
        fields[key] = _copy(value, preserve) if isinstance(value, (list, gast.AST)) else value
    annos = node.__dict__.get(anno.ANNO_ATTR)
    if annos and preserve:
        kept = {k: v for k, v in annos.items() if k in preserve}
        if kept:
            fields[anno.ANNO_ATTR] = kept
    return new_node


class _SymbolRenamer(gast.NodeTransformer):

    def __init__(self, name_map):
        self.name_map = name_map

    def _rename(self, node):
        qn = anno.getanno(node, anno.Basic.QN, None)
        if qn not in self.name_map:
            return self.generic_visit(node)
        new_qn = self.name_map[qn]
        new_node = new_qn.ast()
        new_node.ctx = node.ctx
        if isinstance(node, gast.Name) and isinstance(new_node, gast.Name):
            new_node.annotation, new_node.type_comment = node.annotation, node.type_comment
        gast.copy_location(new_node, node)
        for key in anno.keys(node):
            anno.copyanno(node, new_node, key)
        anno.setanno(new_node, anno.Basic.QN, new_qn)
        return new_node

    visit_Name = visit_Attribute = visit_Subscript = _rename

    def _rename_strings(self, names):
        return [str(self.name_map.get(qual_names.QN(n), n)) for n in names]

    def visit_Global(self, node):
        node.names = self._rename_strings(node.names)
        return node

    visit_Nonlocal = visit_Global

    def visit_FunctionDef(self, node):
        node.name = self._rename_strings([node.name])[0]
        return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef


def rename_symbols(node, name_map):
    """Renames symbols in place, {QN: QN}, including def names and nonlocal lists."""
    qual_names.resolve(node)
    renamer = _SymbolRenamer(name_map)
    if isinstance(node, list):
        return [renamer.visit(n) for n in node]
    return renamer.visit(node)


def keywords_to_dict(keywords):
    """gast keyword nodes -> a gast Dict expression {'name': value}."""
    return gast.Dict(keys=[gast.Constant(value=kw.arg, kind=None) for kw in keywords],
                     values=[kw.value for kw in keywords])


def matches(node, pattern):
    """Whether `node` has the shape of `pattern` (source or node); `_` matches anything."""
    if isinstance(pattern, str):
        pattern = parser.parse_expression(pattern)
    return _matches(node, pattern)


def _matches(node, pattern):
    if isinstance(pattern, gast.Name) and pattern.id == "_":
        return True
    if pattern == "_":
        return True
    if isinstance(pattern, list):
        return (isinstance(node, list) and len(node) == len(pattern)
                and all(_matches(n, p) for n, p in zip(node, pattern)))
    if not isinstance(pattern, gast.AST):
        return node == pattern
    if type(node) is not type(pattern):
        return False
    return all(_matches(getattr(node, f, None), getattr(pattern, f, None))
               for f in pattern._fields if f != "ctx")


def apply_to_single_assignments(targets, values, apply_fn):
    """Calls apply_fn(target, value) for each single assignment in an unpacking.

    `a, b = c, d` gives (a, c), (b, d); `a, b = c` gives (a, c[0]), (b, c[1]);
    `a = b, c` gives (a, (b, c)). Starred targets are passed whole.
    """
    if not isinstance(targets, (list, tuple)):
        targets = [targets]
    for target in targets:
        unpackable = (isinstance(target, (gast.Tuple, gast.List))
                      and not any(isinstance(e, gast.Starred) for e in target.elts))
        if not unpackable:
            apply_fn(target, values)
            continue
        for i, element in enumerate(target.elts):
            if isinstance(values, (gast.Tuple, gast.List)) and len(values.elts) == len(target.elts):
                value = values.elts[i]
            else:
                value = gast.Subscript(value=values, slice=gast.Constant(value=i, kind=None),
                                       ctx=gast.Load())
            apply_to_single_assignments(element, value, apply_fn)


def parallel_walk(node, other, strict=True):
    """Yields (n, o) pairs of two trees of the same shape, in pre-order.

    With strict=False, a pair whose types or list lengths differ is yielded but
    not descended into; with strict=True that raises ValueError.
    """
    stack = [(node, other)]
    while stack:
        n, o = stack.pop()
        if isinstance(n, list) or isinstance(o, list):
            if not (isinstance(n, list) and isinstance(o, list) and len(n) == len(o)):
                if strict:
                    raise ValueError(f"lists differ: {n!r} vs {o!r}")
                continue
            stack.extend(reversed(list(zip(n, o))))
            continue
        if not isinstance(n, gast.AST) or not isinstance(o, gast.AST):
            continue
        yield n, o
        if type(n) is not type(o):
            if strict:
                raise ValueError(f"node types differ: {type(n).__name__} vs {type(o).__name__}")
            continue
        children = [(getattr(n, f, None), getattr(o, f, None)) for f in n._fields]
        stack.extend(reversed(children))


_OWN_SCOPES = (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)
_BINDING_CTX = (gast.Store, gast.Del)
_FUNCTION_DEFS = (gast.FunctionDef, gast.AsyncFunctionDef)
_STATEMENT_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def own_body_symbols(fn_node, walrus=True):
    """(names bound, names declared nonlocal, nested function defs) of a function's own
    body, nested functions not entered.

    With walrus=False (the caller knows the code has no `:=`) only the places where
    statements bind names are looked at (targets, handler names, imports, defs), not
    every expression: much faster, same result."""
    args = fn_node.args
    bound = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs
             + [args.vararg, args.kwarg] if a is not None}
    declared, nested = set(), []
    stack = list(fn_node.body)
    while stack:
        n = stack.pop()
        n_type = type(n)
        if n_type in _FUNCTION_DEFS:
            bound.add(n.name)
            nested.append(n)
            continue
        if n_type is gast.ClassDef:
            bound.add(n.name)
            continue
        if n_type is gast.Nonlocal:
            declared.update(n.names)
            continue
        if n_type is gast.Import or n_type is gast.ImportFrom:
            for alias in n.names:
                bound.add((alias.asname or alias.name).partition(".")[0])
            continue
        values = n.__dict__
        if walrus:
            expressions = [values[f] for f in visitor.child_fields(n_type)
                           if f not in _STATEMENT_BLOCKS and values.get(f) is not None]
        else:
            expressions = [t for t in (values.get("targets") or (values.get("target"),))
                           if t is not None]
            if n_type is gast.With or n_type is gast.AsyncWith:
                expressions += [item.optional_vars for item in n.items
                                if item.optional_vars is not None]
            elif n_type is gast.ExceptHandler and n.name is not None:
                expressions.append(n.name)
        _bound_in(expressions, bound)
        for field in _STATEMENT_BLOCKS:
            block = values.get(field)
            if block:
                stack.extend(block)
    return bound, declared, nested


def _bound_in(expressions, bound):
    """Adds the names the expressions (lists of them, too) store or delete to `bound`,
    not entering lambdas and comprehensions (scopes of their own)."""
    stack = list(expressions)
    while stack:
        n = stack.pop()
        if type(n) is list:
            stack.extend(n)
        elif type(n) is gast.Name:
            if isinstance(n.ctx, _BINDING_CTX):
                bound.add(n.id)
        elif isinstance(n, gast.AST) and not isinstance(n, _OWN_SCOPES):
            stack.extend(visitor.children(n))


def bound_names(fn_node, walrus=True):
    """Simple names the function's own body (not nested functions) assigns."""
    return own_body_symbols(fn_node, walrus)[0]
