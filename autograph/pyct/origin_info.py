"""Origins: which line of the user's file each node, and each generated line, came from.

`resolve` annotates a freshly parsed tree with anno.Basic.ORIGIN. Converters keep
those annotations on the code they generate (templates copy them, and
transformer.Base gives replacement nodes their original's origin).
`create_source_map` then maps every line of the printed, generated code back to
a line of the original file.
"""
import ast
import collections
import io
import linecache
import tokenize

import gast

from autograph.pyct import anno
from autograph.pyct import ast_util
from autograph.pyct import parser
from autograph.pyct import visitor

Location = collections.namedtuple("Location", ("filename", "lineno", "col_offset"))
LineLocation = collections.namedtuple("LineLocation", ("filename", "lineno"))


class OriginInfo(collections.namedtuple(
        "OriginInfo", ("loc", "function_name", "source_code_line"))):
    """Where a node came from: Location, enclosing function name, the line's text."""

    @property
    def line_loc(self):
        return LineLocation(self.loc.filename, self.loc.lineno)

    @property
    def comment(self):
        """The text of a comment at the end of the line, or None (computed on demand)."""
        return _comments_by_line(self.source_code_line.strip()).get(1)

    def as_frame(self):
        """(filename, lineno, function name, source line), as in traceback.extract_stack."""
        return (self.loc.filename, self.loc.lineno, self.function_name,
                self.source_code_line)

    def __str__(self):
        return f"{self.loc.filename}:{self.loc.lineno}:{self.loc.col_offset}"


def resolve(node, source, context_filepath, context_lineno, context_col_offset=0):
    """Annotates `node` and all below it with ORIGIN.

    `node` was parsed from `source`, whose first line is line `context_lineno`
    of `context_filepath`, and whose text was dedented by `context_col_offset`.
    """
    for _ in annotated_nodes(node, source, context_filepath, context_lineno,
                             context_col_offset):
        pass
    return node


def annotated_nodes(node, source, context_filepath, context_lineno, context_col_offset=0,
                    located=None):
    """`resolve`, as a generator of (node, innermost function or lambda around it or None)
    for every node it annotates: a caller that looks at every node needs no walk of its
    own. `located`: the node types to annotate, all by default."""
    source_lines = source.splitlines()
    n_lines = len(source_lines)
    new = tuple.__new__             # the namedtuples, built without their argument parsing
    attr, key = anno.ANNO_ATTR, anno.Basic.ORIGIN
    located_types = None if located is None else _types_of(located)
    known_fields, child_fields, ast_type = visitor.known_child_fields, visitor.child_fields, \
        gast.AST
    stack = [(node, None)]
    pop, push = stack.pop, stack.append
    while stack:
        n, function = pop()
        cls = type(n)
        values = n.__dict__
        lineno = values.get("lineno")
        if lineno is not None and (located_types is None or cls in located_types):
            loc = new(Location, (context_filepath, context_lineno + lineno - 1,
                                 values["col_offset"] + context_col_offset))
            line = source_lines[lineno - 1] if lineno <= n_lines else ""
            name = None if function is None else getattr(function, "name", "<lambda>")
            annos = values.get(attr)
            if annos is None:
                values[attr] = {key: new(OriginInfo, (loc, name, line))}
            else:
                annos[key] = new(OriginInfo, (loc, name, line))
        yield n, function
        if cls in _FUNCTIONS_AND_LAMBDAS:
            function = n
        # (visitor.children's nodes, pushed in its order)
        for field in known_fields.get(cls) or child_fields(cls):
            value = values.get(field)
            if value is None:
                continue
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast_type):
                        push((item, function))
            elif isinstance(value, ast_type):
                push((value, function))


_FUNCTIONS_AND_LAMBDAS = frozenset((gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda))
_NODE_TYPES = tuple(cls for cls in vars(gast).values()
                    if isinstance(cls, type) and issubclass(cls, gast.AST))
_located_types = {}


def _types_of(classes):
    """The gast node types that are instances of `classes` (a tuple), as a set."""
    types = _located_types.get(classes)
    if types is None:
        types = _located_types[classes] = frozenset(
            cls for cls in _NODE_TYPES if issubclass(cls, classes))
    return types


def resolve_entity(node, source, entity):
    """Like resolve, for a tree that parser.parse_entity(entity) returned."""
    _, parsed_source, filename, first_lineno = parser.parse_entity_with_origin(entity)
    if parsed_source != source:
        raise ValueError(f"the source given for {entity!r} is not the one parse_entity gives")
    return resolve_parsed(node, source, filename, first_lineno)


def resolve_parsed(node, source, filename, first_lineno):
    """Like resolve, for what parser.parse_entity_with_origin returned (no second parse)."""
    for _ in annotated_parsed_nodes(node, source, filename, first_lineno):
        pass
    return node


def annotated_parsed_nodes(node, source, filename, first_lineno, located=None):
    """resolve_parsed, as a generator like annotated_nodes."""
    file_line = linecache.getline(filename, first_lineno)
    first_line = source.splitlines()[0] if source else ""
    col_offset = _indent_width(file_line) - _indent_width(first_line)
    return annotated_nodes(node, source, filename, first_lineno, col_offset, located)


# What conversion reads origins of: statements (the source map, errors at a statement),
# and the expressions a converter may report or stand a statement for.
CONVERSION_LOCATED = (gast.stmt, gast.ExceptHandler, gast.match_case, gast.Lambda,
                      gast.Yield, gast.YieldFrom, gast.Await, gast.Call)


def _indent_width(line):
    return len(line) - len(line.lstrip())


def _comments_by_line(source):
    comments = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = token.string[1:].strip()
    except (tokenize.TokenError, SyntaxError):
        pass
    return comments


def create_source_map(nodes, code, filepath):
    """{LineLocation(filepath, line of code): OriginInfo} for generated `code`.

    `code` is what parser.unparse(nodes) printed. It is parsed again and walked
    alongside `nodes`; a generated node without ORIGIN takes the origin of its
    nearest annotated ancestor. Each line maps to the origin of the outermost
    node that starts on it.
    """
    nodes = list(nodes) if isinstance(nodes, (list, tuple)) else [nodes]
    reparsed = parser.ast_to_gast(ast.parse(code)).body
    if len(nodes) == 1 and isinstance(nodes[0], gast.expr) and len(reparsed) == 1:
        reparsed = [reparsed[0].value]
    inherited = {}
    for node in nodes:
        _inherit_origins(node, inherited)
    source_map = {}
    for before, after in ast_util.parallel_walk(nodes, reparsed, strict=False):
        origin = inherited.get(id(before))
        lineno = getattr(after, "lineno", None)
        if origin is None or lineno is None:
            continue
        source_map.setdefault(LineLocation(filepath, lineno), origin)
    return source_map


def _inherit_origins(root, inherited):
    stack = [(root, None)]
    while stack:
        node, origin = stack.pop()
        origin = anno.getanno(node, anno.Basic.ORIGIN, origin)
        inherited[id(node)] = origin
        stack.extend((child, origin) for child in visitor.children(node))
