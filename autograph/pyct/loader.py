"""Loading generated code: compile source in memory and run it as a fresh module.

Each load gets its own file name, `<autograph generated file N>`, and its source
is registered with linecache, so tracebacks, pdb and inspect.getsource show the
generated lines. Nothing is written to disk.
"""
import ast
import itertools
import linecache
import os
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


# Set AUTOGRAPH_CHECK_LINES=1 (the test suite does) to check every predicted line
# against a parse of the printed source.
_CHECK_LINES = os.environ.get("AUTOGRAPH_CHECK_LINES", "") not in ("", "0")


def load_gast_with_source_map(nodes):
    """Print, compile and run gast statements; returns
    (module, source, filename, {generated line: ORIGIN of the statement there}).

    The source is compiled as printed (so the code's lines are the printed lines by
    construction). The source map comes from `statement_lines`, which knows where
    ast.unparse puts each statement; a multi-line string (the only thing that moves
    later lines) is detected by the line count and handled by parsing the printed text.
    """
    source = parser.GastPrinter().visit(gast.Module(body=list(nodes), type_ignores=[])) + "\n"
    lines = source.splitlines(True)
    located, last_line = statement_lines(nodes)
    if last_line != len(lines) or _CHECK_LINES:
        parsed = _parsed_lines(nodes, source)
        if _CHECK_LINES and last_line == len(lines) and parsed != located:
            raise AssertionError(f"predicted statement lines {located} differ from the "
                                 f"printed ones {parsed}:\n{source}")
        located = parsed
    source_map = {}
    for line, origin in located:
        if origin is not None:
            source_map.setdefault(line, origin)
    number = next(_load_counter)
    filename = f"<autograph generated file {number}>"
    linecache.cache[filename] = (len(source), None, lines, filename)
    module = types.ModuleType(f"autograph_generated_{number}")
    module.__file__ = filename
    exec(compile(source, filename, "exec"), module.__dict__)  # pylint: disable=exec-used
    return module, source, filename, source_map


def statement_lines(nodes):
    """([(line, ORIGIN) for each statement, in order], number of lines) of the source that
    ast.unparse prints for the gast statements `nodes` as a module, assuming no string
    in them is printed over several lines. A statement without an ORIGIN has its
    enclosing statement's.

    ast.unparse starts every statement on a new line (`fill`), puts an empty line before
    each def and class but the first thing printed (`maybe_newline`), a line per
    decorator, and prints `elif` for an `else:` holding only an `if`.
    """
    located = []
    last = _number_block(nodes, None, 0, located)
    return located, max(last, 1)


_DEFINITIONS = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)


def _number_block(body, origin, line, located):
    """Numbers the statements of `body`, printed after line `line`; returns the last line."""
    getanno, origin_key = anno.getanno, anno.Basic.ORIGIN
    for node in body:
        node_type = type(node)
        if node_type in _DEFINITIONS:
            if line:
                line += 1                    # the empty line before a def or class
            line += len(node.decorator_list)
        line += 1
        stmt_origin = getanno(node, origin_key, origin)
        located.append((line, stmt_origin))
        if node_type is gast.If:
            line = _number_block(node.body, stmt_origin, line, located)
            orelse = node.orelse
            while len(orelse) == 1 and type(orelse[0]) is gast.If:    # elif
                elif_node = orelse[0]
                line += 1
                elif_origin = getanno(elif_node, origin_key, stmt_origin)
                located.append((line, elif_origin))
                line = _number_block(elif_node.body, elif_origin, line, located)
                orelse = elif_node.orelse
            if orelse:
                line = _number_block(orelse, stmt_origin, line + 1, located)
            continue
        if node_type is gast.Match:
            for case in node.cases:
                line = _number_block(case.body, stmt_origin, line + 1, located)
            continue
        values = node.__dict__
        inner = values.get("body")
        if type(inner) is not list:          # a simple statement
            continue
        line = _number_block(inner, stmt_origin, line, located)
        for handler in values.get("handlers", ()):
            line += 1
            handler_origin = getanno(handler, origin_key, stmt_origin)
            located.append((line, handler_origin))
            line = _number_block(handler.body, handler_origin, line, located)
        if values.get("orelse"):
            line = _number_block(node.orelse, stmt_origin, line + 1, located)
        if values.get("finalbody"):
            line = _number_block(node.finalbody, stmt_origin, line + 1, located)
    return line


def _parsed_lines(nodes, source):
    """statement_lines' list read from a parse of the printed `source` (exact, slower)."""
    parsed = ast.parse(source)
    located = []
    _pair_blocks(nodes, parsed.body, None, located)
    return located


def _pair_blocks(body, parsed_body, origin, located):
    getanno, origin_key = anno.getanno, anno.Basic.ORIGIN
    for node, parsed in zip(body, parsed_body):
        stmt_origin = getanno(node, origin_key, origin)
        located.append((parsed.lineno, stmt_origin))
        if type(node) is gast.If:
            _pair_blocks(node.body, parsed.body, stmt_origin, located)
            orelse, parsed_orelse = node.orelse, parsed.orelse
            while len(orelse) == 1 and type(orelse[0]) is gast.If:    # elif
                elif_node, parsed_elif = orelse[0], parsed_orelse[0]
                elif_origin = getanno(elif_node, origin_key, stmt_origin)
                located.append((parsed_elif.lineno, elif_origin))
                _pair_blocks(elif_node.body, parsed_elif.body, elif_origin, located)
                orelse, parsed_orelse = elif_node.orelse, parsed_elif.orelse
            _pair_blocks(orelse, parsed_orelse, stmt_origin, located)
            continue
        if type(node) is gast.Match:
            for case, parsed_case in zip(node.cases, parsed.cases):
                _pair_blocks(case.body, parsed_case.body, stmt_origin, located)
            continue
        values = node.__dict__
        if type(values.get("body")) is not list:
            continue
        _pair_blocks(node.body, parsed.body, stmt_origin, located)
        for handler, parsed_handler in zip(values.get("handlers", ()), parsed.__dict__.get(
                "handlers", ())):
            handler_origin = getanno(handler, origin_key, stmt_origin)
            located.append((parsed_handler.lineno, handler_origin))
            _pair_blocks(handler.body, parsed_handler.body, handler_origin, located)
        _pair_blocks(values.get("orelse") or (), parsed.__dict__.get("orelse") or (),
                     stmt_origin, located)
        _pair_blocks(values.get("finalbody") or (), parsed.__dict__.get("finalbody") or (),
                     stmt_origin, located)
