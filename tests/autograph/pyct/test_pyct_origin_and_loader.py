"""Specification of origin_info and loader: generated lines map back to user lines,
and generated code shows up in tracebacks."""
import inspect
import linecache
import traceback

import gast

from autograph.pyct import anno
from autograph.pyct import loader
from autograph.pyct import origin_info
from autograph.pyct import parser
from autograph.pyct import templates
from autograph.pyct import transformer


def sample(x):
    y = x * 2  # doubled
    if y > 3:
        y = y - 1
    return y


class Holder:

    def method(self):
        return 1


def file_line(fn, text):
    """The line number, in this file, of the line of fn's source containing text."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_resolve_points_at_file_lines_with_comments_and_function_names():
    node, source = parser.parse_entity(sample)
    origin_info.resolve_entity(node, source, sample)
    assign, if_stmt, ret = node.body
    origin = anno.getanno(assign, anno.Basic.ORIGIN)
    assert origin.loc == origin_info.Location(__file__, file_line(sample, "x * 2"), 4)
    assert origin.function_name == "sample"
    assert origin.source_code_line == "    y = x * 2  # doubled"
    assert origin.comment == "doubled"
    assert anno.getanno(ret.value, anno.Basic.ORIGIN).loc.lineno == file_line(sample, "return")
    assert origin.as_frame()[:3] == (__file__, origin.loc.lineno, "sample")


def test_resolve_entity_adds_back_the_dedented_columns():
    node, source = parser.parse_entity(Holder.method)
    origin_info.resolve_entity(node, source, Holder.method)
    ret = node.body[0]
    assert anno.getanno(ret, anno.Basic.ORIGIN).loc.col_offset == 8


class _IfToCall(transformer.Base):
    """A toy converter: `if c: body` -> `def if_body(): body` + `ag__.if_stmt(c, if_body)`."""

    def visit_If(self, node):
        return templates.replace("""
            def if_body():
                body
            ag__.if_stmt(cond, if_body)
            """, body=node.body, cond=node.test)


def test_source_map_maps_generated_lines_to_original_lines():
    node, source = parser.parse_entity(sample)
    origin_info.resolve_entity(node, source, sample)
    node = _IfToCall(ctx=None).visit(node)
    module, code, source_map = loader.load_ast(node, include_source_map=True)
    filename = module.__file__
    expected = {
        "def sample(x):": "def sample(x):",
        "y = x * 2": "y = x * 2",
        "def if_body():": "if y > 3:",  # generated: takes the origin of the if
        "y = y - 1": "y = y - 1",
        "ag__.if_stmt(y > 3, if_body)": "if y > 3:",
        "return y": "return y",
    }
    for lineno, line in enumerate(code.splitlines(), start=1):
        if not line.strip():
            continue  # ast.unparse puts blank lines around nested defs
        origin = source_map[origin_info.LineLocation(filename, lineno)]
        original = expected[line.strip()]
        assert origin.loc.filename == __file__
        assert origin.loc.lineno == file_line(sample, original), line


def test_load_source_runs_a_module_with_a_unique_file_name():
    module, filename = loader.load_source("def f(a):\n    return a + 1\n")
    assert module.f(1) == 2
    assert filename.startswith("<autograph generated file")
    _, other = loader.load_source("x = 1")
    assert other != filename


def test_generated_code_shows_in_tracebacks_and_inspect():
    module, filename = loader.load_source("def fails():\n    raise ValueError('boom')\n")
    linecache.checkcache()  # what traceback does; must not drop our entry
    try:
        module.fails()
    except ValueError:
        text = traceback.format_exc()
    assert f'File "{filename}", line 2, in fails' in text
    assert "raise ValueError('boom')" in text
    assert inspect.getsource(module.fails).startswith("def fails():")


def test_load_ast_without_source_map():
    node = parser.parse("def g():\n    return 3")
    module, source, source_map = loader.load_ast(node)
    assert module.g() == 3 and source == "def g():\n    return 3" and source_map is None


def test_source_map_of_a_lambda():
    node = parser.parse_expression("lambda a: a + 1")
    origin_info.resolve(node, "lambda a: a + 1", "user.py", 10)
    code = parser.unparse(node)
    source_map = origin_info.create_source_map(node, code, "gen.py")
    assert source_map[origin_info.LineLocation("gen.py", 1)].loc == (
        origin_info.Location("user.py", 10, 0))
    assert isinstance(node, gast.Lambda)


_LAYOUTS = '''
import os
x = 1

@decorator
@other(1)
def f(a, *args, b=2, **kw):
    """A docstring."""
    def g():
        pass
    if a:
        pass
    elif b:
        x = 1
    elif kw:
        pass
    else:
        if x:
            pass
    while a:
        break
    else:
        a = 2
    for i in a:
        continue
    else:
        pass
    try:
        pass
    except ValueError as e:
        pass
    except:
        pass
    else:
        pass
    finally:
        pass
    with a as b, c:
        class C(B):
            y = 1
            def m(self):
                return 1
    match a:
        case 1 | 2:
            pass
        case {"k": v} if v:
            pass
        case _:
            pass
    return lambda: (yield)
'''


def test_predicted_statement_lines_match_a_parse_of_the_printed_code():
    nodes = parser.parse(_LAYOUTS, single_node=False)
    source = parser.unparse(nodes) + "\n"
    predicted, last = loader.statement_lines(nodes)
    assert last == len(source.splitlines())
    assert [line for line, _ in predicted] == [
        line for line, _ in loader._parsed_lines(nodes, source)]
    assert len(predicted) > 30


def test_multi_line_strings_are_located_by_parsing_the_printed_code():
    nodes = parser.parse('def f():\n    """Two\n    lines."""\n    x = 1\n    return x\n',
                         single_node=False)
    for n in gast.walk(nodes[0]):
        if isinstance(n, gast.stmt):
            anno.setanno(n, anno.Basic.ORIGIN, n.lineno)
    module, source, _, source_map = loader.load_gast_with_source_map(nodes)
    assert source.splitlines()[source_map and 4 - 1].strip() == "x = 1"
    assert source_map == {1: 1, 2: 2, 4: 4, 5: 5}
    assert module.f() == 1
