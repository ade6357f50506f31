"""Directives: `ag.set_loop_options(...)` at the top of a loop body becomes loop metadata.

    while i < n:                                 while i < n:       # DIRECTIVES on the
        ag.set_loop_options(                 =>      i += 1         # While node: {
            maximum_iterations=100)                                 #  maximum_iterations: 100}
        i += 1

The control-flow converter passes the options to `while_stmt` / `for_stmt`.
A call anywhere else (outside a loop, after other statements of the body) or with an
unknown option is a ConversionError naming its line, as in TensorFlow. The directive is
recognized by what its name refers to: a global or free variable, or a name that an
`import` in the function binds (`import autograph as ag`, `from autograph import
set_loop_options as slo`), of modules already imported.
"""
import sys

import gast

from autograph.pyct import anno
from autograph.pyct import parser
from autograph.pyct import transformer

LOOP_OPTIONS = "set_loop_options"
# Passed along with the options: the text of each shape invariant's variable.
INVARIANT_NAMES = "shape_invariant_names"
_KNOWN_OPTIONS = ("maximum_iterations", "shape_invariants", "parallel_iterations",
                  "swap_memory")


def _resolve(node, namespace):
    """The object a Name/Attribute chain names in `namespace`, or None."""
    if isinstance(node, gast.Name):
        return namespace.get(node.id)
    if isinstance(node, gast.Attribute):
        owner = _resolve(node.value, namespace)
        return getattr(owner, node.attr, None) if owner is not None else None
    return None


def _imported_names(node, namespace):
    """{name: module or object} for the names the imports in `node` bind (anywhere in it),
    as far as the modules are imported already (conversion imports nothing)."""
    package = namespace.get("__package__") or ""
    bound = {}
    for n in gast.walk(node):
        if isinstance(n, gast.Import):
            for alias in n.names:
                if alias.asname:
                    bound[alias.asname] = sys.modules.get(alias.name)
                else:
                    root = alias.name.partition(".")[0]
                    bound[root] = sys.modules.get(root)
        elif isinstance(n, gast.ImportFrom):
            module = _module_named(n.module or "", n.level, package)
            for alias in n.names:
                value = getattr(module, alias.name, None) if module is not None else None
                bound[alias.asname or alias.name] = value
    return bound


def _module_named(name, level, package):
    if level:
        parts = package.split(".") if package else []
        if level - 1 > len(parts):
            return None
        base = ".".join(parts[:len(parts) - (level - 1)])
        name = f"{base}.{name}".strip(".") if name else base
    return sys.modules.get(name)


class DirectiveTransformer(transformer.Base):
    """Moves leading `set_loop_options` calls of loop bodies into DIRECTIVES annotations."""

    statements_only = True

    def __init__(self, ctx, names):
        super().__init__(ctx)
        self.names = names

    def _is_loop_options(self, stmt):
        if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)):
            return False
        from autograph import api  # the directive function itself
        return _resolve(stmt.value.func, self.names) is api.set_loop_options

    def _visit_loop(self, node):
        options = {}
        while node.body and self._is_loop_options(node.body[0]):
            call = node.body.pop(0).value
            if call.args:
                raise _error(call, "set_loop_options takes keyword arguments only")
            for kw in call.keywords:
                if kw.arg not in _KNOWN_OPTIONS:
                    raise _error(call, f"set_loop_options has no option {kw.arg!r} (it "
                                       f"takes {', '.join(_KNOWN_OPTIONS)})")
                if kw.arg == "maximum_iterations" and _negative_literal(kw.value):
                    raise _error(call, "set_loop_options: maximum_iterations must be >= 0")
            options.update({kw.arg: kw.value for kw in call.keywords})
            names = _invariant_names(options.get("shape_invariants"))
            if names is not None:
                options[INVARIANT_NAMES] = names
        node = self.generic_visit(node)
        if not node.body:
            node.body = [gast.Pass()]
        if options:
            anno.setanno(node, anno.Basic.DIRECTIVES, {LOOP_OPTIONS: options})
        return node

    visit_While = visit_For = _visit_loop

    def visit_Expr(self, node):
        if self._is_loop_options(node):
            raise _error(node.value, "set_loop_options must be the first statement of the "
                                     "body of the loop it configures")
        return node


def _invariant_names(node):
    """The source text of each variable in a literal `shape_invariants=[(v, shape), ...]`
    (for messages), as a gast tuple of strings; None if it is not such a literal."""
    if not isinstance(node, (gast.List, gast.Tuple)):
        return None
    names = []
    for pair in node.elts:
        if not (isinstance(pair, gast.Tuple) and len(pair.elts) == 2):
            return None
        names.append(gast.Constant(value=parser.unparse(pair.elts[0]).strip(), kind=None))
    return gast.Tuple(elts=names, ctx=gast.Load())


def _negative_literal(node):
    return (isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub)
            and isinstance(node.operand, gast.Constant)
            and isinstance(node.operand.value, (int, float)) and node.operand.value > 0)


def _error(call, message):
    from autograph.errors import ConversionError
    origin = anno.getanno(call, anno.Basic.ORIGIN, None)
    where = f" at {origin.loc.filename}:{origin.loc.lineno}" if origin else ""
    return ConversionError(f"{message}{where}")


def transform(node, ctx):
    namespace = ctx.info.namespace or {}
    if "import" in (ctx.info.source_code or "import"):
        namespace = {**namespace, **_imported_names(node, namespace)}
    return DirectiveTransformer(ctx, namespace).visit(node)
