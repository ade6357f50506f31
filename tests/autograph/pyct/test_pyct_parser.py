"""Specification of parser: functions, methods and lambdas in, gast trees out."""
import functools
import sys
import inspect

import gast
import pytest

from autograph.pyct import parser


def plain_function(x):
    return x + 1


def outer():
    def nested(y):
        return y * 2
    return nested


def decorator(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)
    return wrapper


@decorator
def decorated(x):
    return x


class Holder:

    def method(self, x):
        return x - 1

    @staticmethod
    def static(x):
        return x

    def with_unindented_string(self):
        text = """first
second line at column 0"""
        return text


first_lambda, second_lambda = lambda x: x + 1, lambda x: x * 2
twin_lambdas = [lambda a: a, lambda a: a]
spanning_lambda = (lambda x:
                   x + 1)
lambda_in_call = dict(key=
    lambda y: y - 1)


def make_closures(k):
    return lambda x: x + k, lambda x: x * k


def test_parses_a_plain_function():
    node, source = parser.parse_entity(plain_function)
    assert isinstance(node, gast.FunctionDef)
    assert node.name == "plain_function"
    assert source.startswith("def plain_function(x):")


def test_parses_methods_bound_or_not():
    for entity in (Holder.method, Holder().method, Holder.static):
        node, source = parser.parse_entity(entity)
        assert isinstance(node, gast.FunctionDef)
        assert not source[0].isspace()  # dedented


def test_parses_a_nested_function():
    node, _ = parser.parse_entity(outer())
    assert node.name == "nested"


def test_decorators_stay_in_the_node():
    node, _ = parser.parse_entity(decorated.__wrapped__)
    assert node.name == "decorated"
    assert [d.id for d in node.decorator_list] == ["decorator"]


def test_a_wrapper_is_parsed_as_itself_not_as_what_it_wraps():
    # The wrapper is the code that runs when `decorated` is called.
    node, _ = parser.parse_entity(decorated)
    assert node.name == "wrapper"


def test_dedent_keeps_multiline_strings_intact():
    node, source = parser.parse_entity(Holder.with_unindented_string)
    assert "\nsecond line at column 0" in source
    namespace = {}
    exec(parser.unparse(node), namespace)
    assert namespace["with_unindented_string"](None) == "first\nsecond line at column 0"


def test_dedent_block():
    assert parser.dedent_block("    a = 1\n    if a:\n        b = 2\n") == (
        "a = 1\nif a:\n    b = 2\n")
    assert parser.dedent_block('    s = """x\n  y"""\n') == 's = """x\n  y"""\n'


def test_two_lambdas_on_one_line_are_told_apart_by_their_code():
    first, source = parser.parse_entity(first_lambda)
    second, _ = parser.parse_entity(second_lambda)
    assert parser.unparse(first) == "lambda x: x + 1"
    assert parser.unparse(second) == "lambda x: x * 2"
    assert "first_lambda, second_lambda" in source


def test_lambdas_with_closures_are_told_apart():
    add, multiply = make_closures(3)
    assert parser.unparse(parser.parse_entity(add)[0]) == "lambda x: x + k"
    assert parser.unparse(parser.parse_entity(multiply)[0]) == "lambda x: x * k"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="needs code positions (3.11+)")
def test_identical_lambdas_on_one_line_are_told_apart_by_their_columns():
    first, second = (parser.parse_entity(f)[0] for f in twin_lambdas)
    assert first.col_offset < second.col_offset


@pytest.mark.skipif(sys.version_info >= (3, 11), reason="3.11+ tells them apart")
def test_identical_lambdas_on_one_line_are_ambiguous_before_3_11():
    with pytest.raises(ValueError, match=r"test_pyct_parser.py:\d+: found 2 identical"):
        parser.parse_entity(twin_lambdas[0])


def test_lambda_spanning_lines():
    node, source = parser.parse_entity(spanning_lambda)
    assert parser.unparse(node) == "lambda x: x + 1"
    assert source.startswith("spanning_lambda = (lambda x:")


def test_lambda_cut_by_inspect_is_widened_to_its_statement():
    node, source, _, first_lineno = parser.parse_entity_with_origin(lambda_in_call["key"])
    assert parser.unparse(node) == "lambda y: y - 1"
    assert source.startswith("lambda_in_call = dict(key=")
    assert first_lineno == lambda_in_call["key"].__code__.co_firstlineno - 1


def test_origin_is_the_file_and_first_line():
    _, _, filename, first_lineno = parser.parse_entity_with_origin(Holder.method)
    assert filename == __file__
    assert first_lineno == inspect.getsourcelines(Holder.method)[1]


def test_source_unavailable():
    namespace = {}
    exec("def made_by_exec():\n    return 1\n", namespace)
    with pytest.raises(parser.SourceUnavailableError, match="could not get the source"):
        parser.parse_entity(namespace["made_by_exec"])
    with pytest.raises(parser.SourceUnavailableError, match="not a Python function"):
        parser.parse_entity(len)
    assert issubclass(parser.SourceUnavailableError, ValueError)


def test_parse_and_parse_expression():
    assert isinstance(parser.parse("x = 1"), gast.Assign)
    nodes = parser.parse("from __future__ import annotations\nx = 1\ny = 2",
                         preamble_len=1, single_node=False)
    assert [type(n) for n in nodes] == [gast.Assign, gast.Assign]
    with pytest.raises(ValueError, match="exactly one statement"):
        parser.parse("x = 1\ny = 2")
    assert isinstance(parser.parse_expression(" a.b(c) "), gast.Call)


def test_unparse_nodes_lists_and_markers():
    statements = parser.parse("if a:\n    b = 1\nc = 2", single_node=False)
    assert parser.unparse(statements) == "if a:\n    b = 1\nc = 2"
    assert parser.unparse(parser.parse_expression("a+b")) == "a + b"
    assert parser.unparse(statements[1], include_encoding_marker=True) == (
        "# coding=utf-8\nc = 2")


# -- the fast paths agree with the slow ones ------------------------------------------------
# parse_entity finds a def's lines by indentation (inspect tokenizes the block) and falls
# back to inspect whenever those lines do not parse as that one def.

def header_closed_at_def_indent(
    a,
    b,
):
    return a + b


@functools.lru_cache(
    maxsize=None)
def multi_line_decorator(x):
    return x


def comment_at_column_0_inside(x):
    y = x + 1
# a comment at column 0 does not end the block
    return y


def string_continued_at_column_0(x):
    s = "abc\
def"
    return s + str(x)


def bracket_continued_at_column_0(x):
    y = (x +
1)
    return y


def followed_by_code_at_the_same_indent(x):
    return x


AFTER = 1


class Methods:

    def first(self):
        text = '''kept
    as written'''
        return text

    def second(self):
        return 2


@pytest.mark.parametrize("fn", [
    plain_function, outer(), Holder.method, Holder.static, Holder.with_unindented_string,
    header_closed_at_def_indent, multi_line_decorator.__wrapped__, comment_at_column_0_inside,
    string_continued_at_column_0, bracket_continued_at_column_0,
    followed_by_code_at_the_same_indent, Methods.first, Methods.second, decorated],
    ids=lambda f: f.__name__)
def test_the_source_found_is_what_inspect_finds(fn):
    node, source, filename, first_lineno = parser.parse_entity_with_origin(fn)
    lines, inspect_first = inspect.getsourcelines(fn.__code__)
    assert first_lineno == inspect_first and filename == fn.__code__.co_filename
    assert node.name == fn.__code__.co_name
    assert source.rstrip() == parser.dedent_block("".join(lines)).rstrip()


def test_own_converters_match_gasts():
    import ast
    import autograph.converters.control_flow as sample
    sources = [inspect.getsource(sample), inspect.getsource(parser),
               "try:\n    pass\nexcept E as e:\n    x: int = 1\n"
               "def f(a, /, b: int = 1, *c, d, e=2, **g) -> None:\n    nonlocal q\n"
               "async def h():\n    async for i in j:\n        await k\n"
               "    async with m as n:\n        yield\nclass C(B, metaclass=M):\n    pass\n"
               "lambda *a, **k: (x := 1)\n[i for i in j if i]\n{**a}\nf'{x!r:>{w}}'\n"]
    if sys.version_info >= (3, 10):
        sources.append("match p:\n    case [1, *r] | {'k': v} if v:\n        pass\n"
                       "    case C(a, b=c) as d:\n        pass\n")
    for source in sources:
        tree = ast.parse(source)
        ours, theirs = parser.ast_to_gast(tree), gast.ast_to_gast(tree)
        assert gast.dump(ours, include_attributes=True) == gast.dump(
            theirs, include_attributes=True)
        assert ast.dump(parser.gast_to_ast(ours), include_attributes=True) == ast.dump(
            gast.gast_to_ast(theirs), include_attributes=True)


# -- printing: the loader prints gast trees themselves (parser.GastPrinter) -------------------

_PRINTED = '''
def f(a, b: int = 1, *args: str, c, d=2, **kwargs: float):
    """A docstring
    over two lines."""
    x = 1 .real + a.b.c(a, *args, k=1, **kwargs)
    y = a[1, 2] + a[1:2, ::3] + a[(1, 2)][-1]
    z = (lambda q, r=3: q + r)(x) if x and not y or -x ** 2 else None
    w = f"{x!r:>{y}} {'s'!s}" + 'it\\'s' + "tab\\t" + b"bytes" + 1.5e300 * 2j
    try:
        pass
    except (ValueError, TypeError) as error:
        raise RuntimeError("no") from error
    finally:
        del x
    with open(a) as (p, q), open(b):
        for i, (j, k) in enumerate(q, start=1):
            while i < j:
                i += 1
            else:
                continue
    match a:
        case [1, *rest] if rest:
            return {**kwargs, "k": [i async for i in y] if False else {v for v in y}}
        case {"k": v, **others} | Point(x=0, y=v) as found:
            global g
            return (yield from found)
    return ...


@decorator(1)
def g(x) -> int:
    def inner():
        """Its docstring."""
        nonlocal x, y
        global a, b
        a = b = x, y = 1, 2
        (lambda: x)()
        h(lambda: None, lambda q, *r: q, key=lambda: (yield))
        return
    z: int = lambda: 0 if x else lambda: 1
    yield


def h(a, b, c):
    a = (a - b) - c, a - (b - c), a ** b ** c, (a ** b) ** c, -(a + b) * c, (a + b) @ c % 2
    b = (a < b) + 1, a < b < c, (a < b) < c, not a == b, a is not None, a not in b, (a,)
    c = (), (1,), a[()], a[b,], a[(b, c)], a[b][c:], (a, b)[0], [(a, b)], {(a,): (b,)}
    obj.m(1, k=2)(3), obj.a.b(1), (a + b).m(), obj.m(*a, **b), f(a)(b).c(d)
    return a << b >> c | a & b ^ c, (a or b) + c, a if (b, c) else (c, b), -a ** -b
'''


def test_gast_trees_print_as_ast_unparse_prints_them():
    import ast
    tree = parser.parse(_PRINTED, single_node=False)

    class Plain(ast._Unparser):     # ast.unparse, for trees without positions
        def get_type_comment(self, node):
            return None

    expected = Plain().visit(parser.gast_to_ast(gast.Module(body=tree, type_ignores=[]),
                                                positions=False))
    assert parser.GastPrinter().visit(gast.Module(body=tree, type_ignores=[])) == expected
    assert parser.unparse(tree) == expected

