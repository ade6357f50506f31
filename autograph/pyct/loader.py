"""Loading generated code: compile source in memory and run it as a fresh module.

Each load gets its own file name, `<autograph generated file N>`, and its source
is registered with linecache, so tracebacks, pdb and inspect.getsource show the
generated lines. Nothing is written to disk.
"""
import ast
import itertools
import linecache
import types

import gast

from autograph.pyct import anno
from autograph.pyct import origin_info
from autograph.pyct import parser

_load_counter = itertools.count(1)


def load_source(source, delete_on_exit=True):
    """Runs `source` as a new module; returns (module, filename).

    `delete_on_exit` is accepted for compatibility with file-based loaders;
    there is no file to delete.
    """
    del delete_on_exit
    number = next(_load_counter)
    filename = f"<autograph generated file {number}>"
    if not source.endswith("\n"):
        source += "\n"
    # An mtime of None tells linecache.checkcache to keep the entry.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = types.ModuleType(f"autograph_generated_{number}")
    module.__file__ = filename
    exec(compile(source, filename, "exec"), module.__dict__)  # pylint: disable=exec-used
    return module, filename


def load_ast(nodes, indentation="    ", include_source_map=False):
    """Prints and loads gast nodes; returns (module, source, source_map or None)."""
    source = parser.unparse(nodes, indentation=indentation)
    module, filename = load_source(source)
    source_map = None
    if include_source_map:
        source_map = origin_info.create_source_map(nodes, source, filename)
    return module, source, source_map


class _NumberingUnparser(ast._Unparser):  # pylint: disable=protected-access
    """ast.unparse that also records the line on which each statement starts."""

    def __init__(self, **kwargs):      # f-string parts are printed by nested instances
        super().__init__(**kwargs)
        self.lines = 1
        self.stmt_lines = {}
        self._pending = None

    def write(self, *text):
        for t in text:
            if "\n" in t:
                self.lines += t.count("\n")
        self._source.extend(text)

    def traverse(self, node):
        if isinstance(node, ast.stmt):
            self._pending = node
        super().traverse(node)

    def fill(self, text=""):
        super().fill(text)
        if self._pending is not None:
            self.stmt_lines[id(self._pending)] = self.lines
            self._pending = None

    def visit(self, node):
        self.lines = 1
        return super().visit(node)


_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")


def load_gast_with_source_map(nodes):
    """Print, compile and run gast statements in one pass; returns
    (module, source, filename, {generated line: ORIGIN of the statement there}).

    The printer records where each statement lands, which gives the source map
    and the line numbers the code is compiled with, with no second parse. Every
    node gets its statement's line, with whole-line columns (so tracebacks show the
    line without carets).
    """
    # A statement without an origin of its own has its enclosing statement's.
    origins = [None]
    stack = [(n, None) for n in nodes]
    while stack:
        node, origin = stack.pop()
        origin = anno.getanno(node, anno.Basic.ORIGIN, origin)
        if isinstance(node, gast.stmt):
            origins.append(origin)
            node.lineno = len(origins) - 1          # an index into origins, for now
        for field in _STATEMENT_LISTS:
            for child in getattr(node, field, None) or ():
                if isinstance(child, gast.AST):
                    stack.append((child, origin))
    located = []
    tree = parser.gast_to_ast(gast.Module(body=list(nodes), type_ignores=[]), located)
    printer = _NumberingUnparser()
    source = printer.visit(tree) + "\n"
    stmt_lines = printer.stmt_lines
    source_lines = source.splitlines()
    source_map = {}
    line, last_stmt = 1, None
    for node, stmt in located:
        if stmt is not last_stmt:
            last_stmt = stmt
            # A docstring is not printed as a statement: it keeps the line before it.
            line = stmt_lines.get(id(stmt), line)
            origin = origins[stmt.lineno] if node is stmt else None
            if origin is not None:
                source_map.setdefault(line, origin)
            text = source_lines[line - 1] if line <= len(source_lines) else ""
            indent, width = len(text) - len(text.lstrip()), len(text)
        node.lineno = node.end_lineno = line
        node.col_offset, node.end_col_offset = indent, width
    number = next(_load_counter)
    filename = f"<autograph generated file {number}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = types.ModuleType(f"autograph_generated_{number}")
    module.__file__ = filename
    exec(compile(tree, filename, "exec"), module.__dict__)  # pylint: disable=exec-used
    return module, source, filename, source_map
