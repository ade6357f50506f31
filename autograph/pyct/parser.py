"""Parsing: function and lambda objects, or source text, into gast trees; and printing back.

`parse_entity(fn)` reads a function's source with `inspect`, dedents it and parses
it with gast. `parse_entity_with_origin(fn)` also says where that source sits in
its file, for source maps. `unparse(node)` prints gast trees with `ast.unparse`.
"""
import ast
import inspect
import io
import linecache
import textwrap
import types
import tokenize

import gast

from autograph.pyct import visitor


class SourceUnavailableError(ValueError):
    """The source code of a function could not be found (REPL, exec, builtins...)."""


def parse_entity(entity, future_features=()):
    """Parses a function, method or lambda; returns (node, source).

    `node` is the gast FunctionDef/AsyncFunctionDef (decorators left in place) or
    the gast Lambda; `source` is the dedented text that was parsed. For a lambda,
    that is the whole statement around it.
    `future_features` is accepted for callers that track `from __future__`
    imports; none of those supported by Python 3.9+ changes how code parses.
    """
    node, source, _, _ = parse_entity_with_origin(entity, future_features)
    return node, source


def parse_entity_with_origin(entity, future_features=()):
    """Like parse_entity; returns (node, source, filename, first_lineno).

    `first_lineno` is the 1-based line of `filename` on which `source` starts:
    line k of `source` is line `first_lineno + k - 1` of the file.
    """
    del future_features  # See parse_entity.
    fn = _function_of(entity)
    filename = fn.__code__.co_filename
    if fn.__code__.co_name != "<lambda>":
        found = _parse_by_indentation(fn)
        if found is not None:
            return found
    lines, first_lineno = _source_lines(fn)
    if fn.__code__.co_name == "<lambda>":
        return _parse_lambda(fn, lines, first_lineno, filename)
    source = dedent_block("".join(lines))
    module = _parse_source(source, filename, first_lineno)
    node = module.body[0]
    if not isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
        raise ValueError(f"{filename}:{first_lineno}: expected a function definition "
                         f"for {entity!r}, found {type(node).__name__}")
    return node, source, filename, first_lineno


def parse(src, preamble_len=0, single_node=True):
    """Parses statements; returns the single statement, or the list of statements.

    The first `preamble_len` statements (e.g. future imports) are dropped.
    """
    nodes = _gast_parse(textwrap.dedent(src)).body[preamble_len:]
    if not single_node:
        return nodes
    if len(nodes) != 1:
        raise ValueError(f"expected exactly one statement, found {len(nodes)} in:\n{src}")
    return nodes[0]


def parse_expression(src):
    """Parses one expression; returns the gast expression node."""
    return _gast_parse(src.strip(), mode="eval").body


def unparse(node, indentation="    ", include_encoding_marker=False):
    """Prints a gast node, or a list of them, as Python source (via ast.unparse)."""
    if indentation != "    ":
        raise ValueError("ast.unparse always indents with four spaces")
    nodes = list(node) if isinstance(node, (list, tuple)) else [node]
    if nodes and all(isinstance(n, gast.stmt) for n in nodes):
        nodes = [gast.Module(body=nodes, type_ignores=[])]
    elif nodes and all(isinstance(n, ast.stmt) for n in nodes):
        nodes = [ast.Module(body=nodes, type_ignores=[])]
    code = "\n".join((GastPrinter if isinstance(n, gast.AST) else Printer)().visit(n)
                      for n in nodes)
    if include_encoding_marker:
        code = "# coding=utf-8\n" + code
    return code


class Printer(ast._Unparser):  # pylint: disable=protected-access
    """ast.unparse for trees without source positions (it reads a statement's line only
    to look up `# type: ignore` comments, which generated code does not have). Its
    brackets and blocks are plain objects, not generator context managers, and its visits
    are dispatched by type: the same text, about a third faster."""

    _dispatch = {}
    _unparser = {name: value for name, value in vars(ast._Unparser).items()
                 if isinstance(value, types.FunctionType)}     # (what overrides fall back to)

    def get_type_comment(self, node):
        comment = node.__dict__.get("type_comment")
        return None if comment is None else f" # type: {comment}"

    def traverse(self, node):
        if type(node) is list:
            for item in node:
                self.traverse(item)
            return
        method = self._dispatch.get(type(node))
        if method is None:
            method = self._dispatch[type(node)] = getattr(
                type(self), "visit_" + type(node).__name__, ast.NodeVisitor.generic_visit)
        method(self, node)

    # The commonest nodes, printed as the unparser prints them, without its precedence
    # bookkeeping where it cannot matter (a name or an attribute of one).
    def visit_Constant(self, node):
        value = node.value
        if type(value) in _PLAIN_CONSTANTS and node.kind is None and not (
                type(value) is str and getattr(self, "_avoid_backslashes", False)):
            self._source.append(repr(value))
        else:
            self._unparser["visit_Constant"](self, node)

    def visit_Attribute(self, node):
        if type(node.value) in _NAMES:
            self._source.extend((node.value.id, ".", node.attr))
        else:
            self._unparser["visit_Attribute"](self, node)

    def visit_Call(self, node):
        func = node.func
        if type(func) in _NAMES:
            self._source.extend((func.id, "("))
        elif type(func) in _ATTRIBUTES and type(func.value) in _NAMES:    # ag__.if_stmt(
            self._source.extend((func.value.id, ".", func.attr, "("))
        else:
            self._unparser["visit_Call"](self, node)
            return
        comma = False
        for e in node.args + node.keywords:
            if comma:
                self._source.append(", ")
            comma = True
            self.traverse(e)
        self._source.append(")")

    def visit_BinOp(self, node):
        operator, precedence, left, right = _BINARY[type(node.op)]
        source, precedences = self._source, self._precedences
        parens = precedences.get(node, _TEST) > precedence
        if parens:
            source.append("(")
        precedences[node.left] = left
        self.traverse(node.left)
        source.append(operator)
        precedences[node.right] = right
        self.traverse(node.right)
        if parens:
            source.append(")")

    def visit_Compare(self, node):
        source, precedences = self._source, self._precedences
        parens = precedences.get(node, _TEST) > _CMP
        if parens:
            source.append("(")
        precedences[node.left] = _CMP_OPERAND
        for comparator in node.comparators:
            precedences[comparator] = _CMP_OPERAND
        self.traverse(node.left)
        for op, comparator in zip(node.ops, node.comparators):
            source.append(_COMPARISONS[type(op)])
            self.traverse(comparator)
        if parens:
            source.append(")")

    def visit_Tuple(self, node):
        elts = node.elts
        parens = not elts or self._precedences.get(node, _TEST) > _TUPLE
        if parens:
            self._source.append("(")
        self._items(elts)
        if parens:
            self._source.append(")")

    def _items(self, items):
        """The unparser's items_view(traverse, items): one item gets a trailing comma."""
        source = self._source
        if len(items) == 1:
            self.traverse(items[0])
            source.append(",")
            return
        for i, item in enumerate(items):
            if i:
                source.append(", ")
            self.traverse(item)

    def visit_Subscript(self, node):
        self._precedences[node.value] = _ATOM
        self.traverse(node.value)
        self._source.append("[")
        index = node.slice
        if type(index) in _TUPLES and index.elts:
            self._items(index.elts)          # a non-empty tuple needs no parentheses
        else:
            self.traverse(index)
        self._source.append("]")

    # Statements, as the unparser prints them, with its fill() and precedence marks
    # written out; a def with decorators, a return annotation or type parameters, and
    # a lambda with parameters, go the unparser's way.
    def fill(self, text=""):
        source = self._source
        if source:
            source.append("\n")
        source.append("    " * self._indent + text)

    def visit_FunctionDef(self, node):
        if node.decorator_list or node.returns is not None or \
                getattr(node, "type_params", None) or \
                getattr(node, "type_comment", None) is not None:
            self._unparser["visit_FunctionDef"](self, node)
            return
        source = self._source
        if source:
            source.append("\n")                      # the empty line before a def
        self.fill("def " + node.name)
        source.append("(")
        self.traverse(node.args)
        source.append("):")
        self._indent += 1
        self._write_docstring_and_traverse_body(node)
        self._indent -= 1

    def visit_Assign(self, node):
        self.fill()
        precedences, source = self._precedences, self._source
        for target in node.targets:
            precedences[target] = _TUPLE
            self.traverse(target)
            source.append(" = ")
        self.traverse(node.value)
        type_comment = self.get_type_comment(node)
        if type_comment:
            source.append(type_comment)

    def visit_Expr(self, node):
        self.fill()
        self._precedences[node.value] = _YIELD
        self.traverse(node.value)

    def visit_Global(self, node):
        self.fill("global " + ", ".join(node.names))

    def visit_Nonlocal(self, node):
        self.fill("nonlocal " + ", ".join(node.names))

    def visit_Return(self, node):
        self.fill("return")
        if node.value:
            self._source.append(" ")
            self.traverse(node.value)

    def visit_Lambda(self, node):
        args = node.args
        if args.posonlyargs or args.args or args.vararg or args.kwonlyargs or args.kwarg:
            self._unparser["visit_Lambda"](self, node)
            return
        parens = self._precedences.get(node, _TEST) > _TEST
        source = self._source
        source.append("(lambda: " if parens else "lambda: ")
        self._precedences[node.body] = _TEST
        self.traverse(node.body)
        if parens:
            source.append(")")

    def block(self, *, extra=None):
        self.write(":")
        if extra:
            self.write(extra)
        return _Block(self)

    def delimit(self, start, end):
        return _Delimit(self, start, end)

    def delimit_if(self, start, end, condition):
        return _Delimit(self, start, end) if condition else _NOTHING

    def require_parens(self, precedence, node):
        if self._precedences.get(node, ast._Precedence.TEST) > precedence:
            return _Delimit(self, "(", ")")
        return _NOTHING


def _accepting_gast(cls):
    """`cls` (a subclass of ast._Unparser) with its methods, and the unparser's, rebound
    to a copy of the ast module's namespace in which each node class is the pair (ast
    class, gast class): their `isinstance` tests then hold for gast nodes too."""
    namespace = dict(vars(ast))
    for name, value in vars(ast).items():
        twin = getattr(gast, name, None)
        if isinstance(value, type) and issubclass(value, ast.AST) and twin is not None:
            namespace[name] = (value, twin)
    overridden = {name for klass in cls.__mro__[:cls.__mro__.index(ast._Unparser)]
                  for name in vars(klass)}
    rebound = {name: _rebound(value, namespace) if value.__code__.co_filename == ast.__file__
               else value for name, value in cls._unparser.items()}
    methods = {name: value for name, value in rebound.items() if name not in overridden}
    methods["_dispatch"] = {}
    methods["_unparser"] = rebound
    return type("Gast" + cls.__name__, (cls,), methods)


def _shallow_copy(node):
    new = type(node).__new__(type(node))
    new.__dict__.update(node.__dict__)
    return new


def _rebound(fn, namespace):
    new = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__,
                             fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


class _GastDifferences(Printer):
    """What gast spells differently from ast: parameters are Names in a Param context
    (with their annotation), an except handler's name is a Name."""

    def visit_Name(self, node):
        self._source.append(node.id)
        if type(node.ctx) is gast.Param and node.annotation is not None:
            self.write(": ")
            self.traverse(node.annotation)

    def visit_arguments(self, node):
        if node.vararg is not None or node.kwarg is not None:
            # (the unparser reads `*args` and `**kwargs` as ast.arg fields)
            node = _shallow_copy(node)
            for field in ("vararg", "kwarg"):
                name = getattr(node, field)
                if name is not None:
                    setattr(node, field, types.SimpleNamespace(
                        arg=name.id, annotation=name.annotation))
        ast._Unparser.visit_arguments(self, node)

    def visit_ExceptHandler(self, node):
        self.fill("except")
        if node.type:
            self.write(" ")
            self.traverse(node.type)
        if node.name:
            self.write(" as ")
            self.write(node.name.id)
        with self.block():
            self.traverse(node.body)


_PLAIN_CONSTANTS = frozenset((int, bool, str, type(None)))
_TUPLE, _YIELD, _TEST = ast._Precedence.TUPLE, ast._Precedence.YIELD, ast._Precedence.TEST
_ATOM, _CMP = ast._Precedence.ATOM, ast._Precedence.CMP
_CMP_OPERAND = _CMP.next()
_NAMES = frozenset((ast.Name, gast.Name))
_TUPLES = frozenset((ast.Tuple, gast.Tuple))
_ATTRIBUTES = frozenset((ast.Attribute, gast.Attribute))


def _operator_table(names, entry):
    """{ast and gast class of each operator named in `names`: entry(its text)}."""
    return {getattr(module, name): entry(text) for name, text in names.items()
            for module in (ast, gast)}


def _binary_entry(operator):
    """(text, precedence, left operand's, right operand's) as the unparser computes them."""
    precedence = ast._Unparser.binop_precedence[operator]
    if operator in ast._Unparser.binop_rassoc:
        return f" {operator} ", precedence, precedence.next(), precedence
    return f" {operator} ", precedence, precedence, precedence.next()


_BINARY = _operator_table(ast._Unparser.binop, _binary_entry)
_COMPARISONS = _operator_table(ast._Unparser.cmpops, lambda text: f" {text} ")


class _Block:
    __slots__ = ("printer",)

    def __init__(self, printer):
        self.printer = printer
        printer._indent += 1

    def __enter__(self):
        return None

    def __exit__(self, *exc_info):
        self.printer._indent -= 1


class _Delimit:
    __slots__ = ("printer", "end")

    def __init__(self, printer, start, end):
        printer._source.append(start)
        self.printer, self.end = printer, end

    def __enter__(self):
        return None

    def __exit__(self, *exc_info):
        self.printer._source.append(self.end)


class _Nothing:
    __slots__ = ()

    def __enter__(self):
        return None

    def __exit__(self, *exc_info):
        return None


_NOTHING = _Nothing()


# -- gast -> ast ---------------------------------------------------------------------------
# gast's own converter builds every node through its validating constructor from a dict
# of visited fields; this one copies fields straight into fresh ast nodes, ~3x faster.
# gast differs from ast (3.9+) in two places only: parameters are Names in a Param
# context (ast.arg in ast) and an except handler's name is a Name (a str in ast).

_CONTEXTS = {gast.Load: ast.Load(), gast.Store: ast.Store(), gast.Del: ast.Del()}
_specs = {}


def _spec(gast_type):
    target = getattr(ast, gast_type.__name__)
    fields = tuple(f for f in gast_type._fields if f in target._fields)
    missing = tuple(f for f in target._fields if f not in gast_type._fields)
    return target, fields, missing, target._attributes


_gast_specs = {}


def _gast_spec(ast_type):
    """(gast class, fields that may hold nodes, {field gast has and ast lacks: default})."""
    target = getattr(gast, ast_type.__name__)
    node_fields = tuple(f for f in target._fields if f in ast_type._fields
                        and f not in _AST_LEAF_FIELDS)
    missing = {f: ([] if f == "type_params" else None)
               for f in target._fields if f not in ast_type._fields}
    return target, node_fields, missing


# Fields whose values are never nodes to convert (strings, numbers, constants); contexts
# are nodes, but shared singletons in ast (converted by type).
_AST_LEAF_FIELDS = frozenset(("id", "attr", "kind", "type_comment", "conversion",
                              "is_async", "simple", "level", "module", "arg", "asname",
                              "kwd_attrs", "rest"))


_GAST_CONTEXTS = {ast.Load: gast.Load, ast.Store: gast.Store, ast.Del: gast.Del}
_GAST_NAME = gast.Name
# Contexts and operators have no fields: one gast instance of each serves every parsed
# node (converters replace a context, never change one).
_SHARED_LEAVES = {getattr(ast, cls.__name__): cls() for cls in visitor.LEAF_TYPES
                  if isinstance(getattr(ast, cls.__name__, None), type)}
_GAST_OPERATORS = {}


def ast_to_gast(node):
    """The gast equivalent of a standard-library ast tree (what gast.ast_to_gast gives,
    several times faster: fields and positions are copied straight into fresh nodes)."""
    if type(node) is list:
        return [ast_to_gast(n) for n in node]
    node_type = type(node)
    if node_type is ast.Name:
        values = node.__dict__
        new = _GAST_NAME.__new__(_GAST_NAME)
        new_values = new.__dict__
        new_values.update(values)           # fields and positions
        new_values["ctx"] = _SHARED_LEAVES[type(values["ctx"])]
        new_values["annotation"] = new_values["type_comment"] = None
        return new
    if node_type is ast.arg:
        values = node.__dict__
        annotation = values["annotation"]
        new = gast.Name(values["arg"], gast.Param(),
                        None if annotation is None else ast_to_gast(annotation),
                        values["type_comment"])
        _copy_position(values, new.__dict__)
        return new
    spec = _gast_specs.get(node_type)
    if spec is None:
        spec = _gast_specs[node_type] = _gast_spec(node_type)
    target, node_fields, missing = spec
    new = target.__new__(target)
    values = new.__dict__
    values.update(node.__dict__)            # fields and positions
    for field in node_fields:
        value = values.get(field)
        if value is None:
            continue
        if type(value) is list:
            if value:
                values[field] = [(_SHARED_LEAVES.get(type(v)) or ast_to_gast(v))
                                 if isinstance(v, ast.AST) else v for v in value]
            else:
                values[field] = []
        elif isinstance(value, ast.AST):
            leaf = _SHARED_LEAVES.get(type(value))
            values[field] = leaf if leaf is not None else ast_to_gast(value)
    if missing:
        values.update(missing)
        if "type_params" in missing:
            values["type_params"] = []
    if node_type is ast.ExceptHandler and node.name is not None:
        values["name"] = gast.Name(node.name, gast.Store(), None, None)
    return new


_POSITIONS = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def _copy_position(values, new_values):
    for attr in _POSITIONS:
        value = values.get(attr)
        if value is not None:
            new_values[attr] = value


def _gast_parse(source, mode="exec"):
    return ast_to_gast(ast.parse(source, mode=mode))


def gast_to_ast(node, positions=True):
    """The standard-library ast equivalent of a gast tree (a fresh tree).

    With positions=False the source positions are not copied (a tree only printed).
    """
    if type(node) is list:
        return [gast_to_ast(n, positions) for n in node]
    node_type = type(node)
    values = node.__dict__
    if node_type is gast.Name:
        if type(values["ctx"]) is gast.Param:
            annotation = values["annotation"]
            new = ast.arg(arg=values["id"], annotation=None if annotation is None else
                          gast_to_ast(annotation, positions), type_comment=values["type_comment"])
        else:
            new = ast.Name(id=values["id"], ctx=_CONTEXTS[type(values["ctx"])])
        if positions:
            _copy_position(values, new.__dict__)
        return new
    spec = _specs.get(node_type)
    if spec is None:
        spec = _specs[node_type] = _spec(node_type)
    target, fields, missing, _ = spec
    new = target.__new__(target)
    new_values = new.__dict__
    for field in fields:
        value = values.get(field)
        if value is not None:
            if type(value) is list:
                value = [gast_to_ast(v, positions) if isinstance(v, gast.AST) else v
                         for v in value] if value else []
            elif isinstance(value, gast.AST):
                ctx = _CONTEXTS.get(type(value))
                value = ctx if ctx is not None else gast_to_ast(value, positions)
        new_values[field] = value
    for field in missing:                   # e.g. type_params on older gast versions
        new_values[field] = [] if field == "type_params" else None
    if node_type is gast.ExceptHandler and values["name"] is not None:
        new_values["name"] = values["name"].id
    if positions:
        _copy_position(values, new_values)
    return new


def dedent_block(source):
    """Removes the first line's indentation from every line, keeping strings intact.

    Unlike textwrap.dedent, this leaves the inside of multi-line strings alone:
    their lines may be indented less than the code (which defeats textwrap) and
    their whitespace is part of the string's value. Falls back to textwrap.dedent
    when the text cannot be tokenized (e.g. a cut-off expression).
    """
    lines = source.splitlines(keepends=True)
    first = next((line for line in lines if line.strip()), "")
    indent = first[:len(first) - len(first.lstrip())]
    if not indent:
        return source
    if not any(marker in source for marker in ('"""', "'''", "\\\n", "\\\r")):
        protected = ()             # no token can span lines: nothing to tokenize
    else:
        try:
            protected = _lines_inside_tokens(source)
        except (tokenize.TokenError, SyntaxError):
            return textwrap.dedent(source)
    result = []
    for lineno, line in enumerate(lines, start=1):
        if lineno not in protected:
            n = 0
            while n < len(indent) and n < len(line) and line[n] == indent[n]:
                n += 1
            line = line[n:]
        result.append(line)
    return "".join(result)


def _lines_inside_tokens(source):
    """Line numbers that start inside a multi-line token (strings, f-string parts)."""
    protected = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        (start_row, _), (end_row, _) = token.start, token.end
        if end_row > start_row:
            protected.update(range(start_row + 1, end_row + 1))
    return protected


def _function_of(entity):
    # No inspect.unwrap: a decorator's wrapper is the function that runs, so its own
    # source is the one to convert (the wrapped function is converted when it is called).
    fn = getattr(entity, "__func__", entity)
    if not hasattr(fn, "__code__"):
        raise SourceUnavailableError(
            f"{entity!r} is not a Python function: only functions, methods and "
            "lambdas written in Python can be converted")
    return fn


def _parse_by_indentation(fn):
    """The fast way to a def's source: from its first line (decorators included), every
    line indented deeper than it (blank and comment lines too). inspect tokenizes the
    whole block to find its end, which costs several times the parse. Returns None
    (the caller asks inspect) unless the lines parse as one def of the same name:
    a block cut short inside a string or bracket does not parse.
    """
    code = fn.__code__
    filename = code.co_filename
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, getattr(fn, "__globals__", None))
    start = code.co_firstlineno - 1
    if not 0 <= start < len(lines):
        return None
    first = lines[start]
    indent = len(first) - len(first.lstrip())
    end = start
    while end < len(lines) and lines[end].lstrip().startswith("@"):
        end += 1                                    # decorators (one line each)
    end += 1                                        # the def line
    while end < len(lines):
        line = lines[end]
        stripped = line.lstrip()
        if stripped and not stripped.startswith("#") and len(line) - len(stripped) <= indent:
            break
        end += 1
    block = lines[start:end]
    source = dedent_block("".join(block))
    try:
        module = _gast_parse(source)
    except SyntaxError:
        return None
    node = module.body[0] if len(module.body) == 1 else None
    if not isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)) or \
            node.name != code.co_name:
        return None
    return node, source, filename, start + 1


def _source_lines(fn):
    try:
        # The code object, not the function: getsourcelines would follow __wrapped__.
        lines, first_lineno = inspect.getsourcelines(fn.__code__)
    except (OSError, TypeError) as e:
        raise SourceUnavailableError(
            f"could not get the source code of {fn!r} ({e}). Functions must be "
            "defined in a file (not in the interactive shell, exec or eval) for "
            "their source to be available") from e
    return lines, max(first_lineno, 1)


def _parse_source(source, filename, first_lineno):
    try:
        return _gast_parse(source)
    except SyntaxError as e:
        lineno = first_lineno + (e.lineno or 1) - 1
        raise ValueError(f"{filename}:{lineno}: could not parse the source of the "
                         f"function ({e.msg}):\n{source}") from e


# Lambdas: inspect gives the line(s) around the lambda; find the one we want.

def _parse_lambda(fn, lines, first_lineno, filename):
    code = fn.__code__
    source = dedent_block("".join(lines))
    try:
        candidates = _lambdas_like(code, _gast_parse(source), first_lineno)
    except SyntaxError:
        candidates = []
    if not candidates:
        # inspect cut a multi-line expression: widen to the enclosing statement.
        source, first_lineno = _enclosing_statement(filename, code.co_firstlineno)
        tree = _parse_source(source, filename, first_lineno)
        candidates = _lambdas_like(code, tree, first_lineno)
    if len(candidates) > 1:
        shift = _indent(lines[0]) - _indent(source.splitlines()[0]) if lines else 0
        by_column = [n for n in candidates if _spans_code_columns(n, code, shift, first_lineno)]
        if len(by_column) == 1:
            candidates = by_column
    if len(candidates) > 1:
        candidates = [n for n in candidates if _same_code(n, code)]
    if len(candidates) != 1:
        found = "no lambda" if not candidates else f"{len(candidates)} identical lambdas"
        raise ValueError(
            f"{filename}:{code.co_firstlineno}: found {found} matching {fn!r}; "
            "put each lambda on its own line, or use a def")
    return candidates[0], source, filename, first_lineno


def _indent(line):
    return len(line) - len(line.lstrip())


def _spans_code_columns(lambda_node, code, shift, first_lineno):
    """Whether the lambda's body covers the columns code's instructions come from
    (Python >= 3.11 records them; earlier versions cannot tell this way)."""
    positions = getattr(code, "co_positions", None)
    if positions is None:
        return False
    body = lambda_node.body
    line = body.lineno + first_lineno - 1
    start = body.col_offset + shift
    end = body.end_col_offset + shift if body.end_lineno == body.lineno else None
    columns = [col for lineno, _, col, end_col in positions()      # (RESUME spans nothing)
               if lineno == line and col is not None and end_col is not None and end_col > col]
    if not columns:
        return False
    return start <= min(columns) and (end is None or max(columns) <= end)


def _lambdas_like(code, tree, first_lineno):
    """The lambdas in `tree` on code's first line with code's argument names."""
    return [n for n in gast.walk(tree)
            if isinstance(n, gast.Lambda)
            and n.lineno + first_lineno - 1 == code.co_firstlineno
            and _lambda_arg_names(n) == _code_arg_names(code)]


def _lambda_arg_names(node):
    args = node.args
    names = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    names += [a.id for a in (args.vararg, args.kwarg) if a is not None]
    return tuple(names)


def _code_arg_names(code):
    count = (code.co_argcount + code.co_kwonlyargcount
             + bool(code.co_flags & inspect.CO_VARARGS)
             + bool(code.co_flags & inspect.CO_VARKEYWORDS))
    return code.co_varnames[:count]


def _same_code(lambda_node, code):
    """Whether compiling `lambda_node` (with code's closure) gives code's bytecode."""
    cells = "".join(f"    {name} = None\n" for name in code.co_freevars)
    wrapper = f"def _wrapper():\n{cells}    return ({unparse(lambda_node)})\n"
    try:
        module_code = compile(wrapper, "<lambda candidate>", "exec")
    except SyntaxError:
        return False
    wrapper_code = next(c for c in module_code.co_consts if inspect.iscode(c))
    candidate = next(c for c in wrapper_code.co_consts if inspect.iscode(c))
    return _code_signature(candidate) == _code_signature(code)


def _code_signature(code):
    consts = tuple(_code_signature(c) if inspect.iscode(c) else (type(c), c)
                   for c in code.co_consts)
    return (code.co_code, code.co_names, code.co_varnames, code.co_freevars, consts)


def _enclosing_statement(filename, lineno):
    """(dedented source, first line) of the smallest statement around `lineno`."""
    file_lines = linecache.getlines(filename)
    try:
        module = ast.parse("".join(file_lines))
    except SyntaxError:
        return _parseable_window(file_lines, lineno)
    best = None
    for stmt in ast.walk(module):
        if not isinstance(stmt, ast.stmt) or not stmt.lineno <= lineno <= stmt.end_lineno:
            continue
        has_lambda = any(isinstance(n, ast.Lambda) and n.lineno == lineno
                         for n in ast.walk(stmt))
        span = stmt.end_lineno - stmt.lineno
        if has_lambda and (best is None or span < best.end_lineno - best.lineno):
            best = stmt
    if best is None:
        raise SourceUnavailableError(f"{filename}:{lineno}: no lambda found on this line")
    source = "".join(file_lines[best.lineno - 1:best.end_lineno])
    return dedent_block(source), best.lineno


def _parseable_window(file_lines, lineno, reach=30):
    """The smallest window of lines around `lineno` that parses (file has errors)."""
    for size in range(1, 2 * reach):
        for before in range(0, min(size, lineno)):
            start = lineno - before
            chunk = dedent_block("".join(file_lines[start - 1:start - 1 + size]))
            try:
                ast.parse(chunk)
            except SyntaxError:
                continue
            return chunk, start
    raise SourceUnavailableError(f"could not find the statement around line {lineno}")


GastPrinter = _accepting_gast(_GastDifferences)
