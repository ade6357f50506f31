"""Specification of ast_util: clean copies, renaming, matching, unpacking, parallel walks."""
import gast
import pytest

from autograph.pyct import anno
from autograph.pyct import ast_util
from autograph.pyct import parser
from autograph.pyct import qual_names
from autograph.pyct.qual_names import QN


def test_copy_clean_drops_annotations_except_the_preserved():
    node = parser.parse("x = y")
    anno.setanno(node, anno.Basic.ORIGIN, "o")
    anno.setanno(node, anno.Basic.SKIP_PROCESSING, True)
    copied = ast_util.copy_clean(node, preserve_annos={anno.Basic.ORIGIN})
    assert copied is not node and copied.value is not node.value
    assert parser.unparse(copied) == "x = y"
    assert anno.keys(copied) == {anno.Basic.ORIGIN}
    assert anno.keys(ast_util.copy_clean(node)) == frozenset()
    assert copied.lineno == node.lineno


def test_rename_symbols():
    node = parser.parse("""
        def f(a):
            nonlocal b
            a.c = b + a.c.d
            return f
        """)
    ast_util.rename_symbols(node, {QN("a"): QN("z"), QN("b"): QN("w"),
                                   qual_names.from_str("z.c"): QN("unused"),
                                   QN("f"): QN("g")})
    assert parser.unparse(node) == (
        "def g(z):\n    nonlocal w\n    z.c = w + z.c.d\n    return g")


def test_rename_composite_to_simple():
    node = parser.parse("a.b = a.b + 1")
    ast_util.rename_symbols(node, {qual_names.from_str("a.b"): QN("a_dot_b")})
    assert parser.unparse(node) == "a_dot_b = a_dot_b + 1"
    assert isinstance(node.targets[0].ctx, gast.Store)


def test_keywords_to_dict():
    call = parser.parse_expression("f(a=1, b=x)")
    assert parser.unparse(ast_util.keywords_to_dict(call.keywords)) == "{'a': 1, 'b': x}"


def test_matches():
    node = parser.parse_expression("ag__.foo(x, y)")
    assert ast_util.matches(node, "ag__.foo(_, _)")
    assert ast_util.matches(node, "_.foo(x, _)")
    assert not ast_util.matches(node, "ag__.foo(_)")
    assert not ast_util.matches(node, "ag__.bar(_, _)")


def test_apply_to_single_assignments():
    def pairs(src):
        assign = parser.parse(src)
        seen = []
        ast_util.apply_to_single_assignments(
            assign.targets, assign.value,
            lambda t, v: seen.append((parser.unparse(t), parser.unparse(v))))
        return seen

    assert pairs("a, b = c, d") == [("a", "c"), ("b", "d")]
    assert pairs("a, b = c") == [("a", "c[0]"), ("b", "c[1]")]
    assert pairs("a = b, c") == [("a", "(b, c)")]
    assert pairs("(a, (b, c)) = d") == [("a", "d[0]"), ("b", "d[1][0]"), ("c", "d[1][1]")]
    assert pairs("a, *b = c") == [("(a, *b)", "c")]


def test_parallel_walk():
    one = parser.parse("x = f(y)")
    two = parser.parse("a = g(b)")
    pairs = list(ast_util.parallel_walk(one, two))
    assert [type(a).__name__ for a, _ in pairs] == [
        "Assign", "Name", "Store", "Call", "Name", "Load", "Name", "Load"]
    assert all(type(a) is type(b) for a, b in pairs)
    with pytest.raises(ValueError):
        list(ast_util.parallel_walk(one, parser.parse("x = 1")))
    loose = list(ast_util.parallel_walk(one, parser.parse("x = 1"), strict=False))
    assert (type(loose[-1][0]), type(loose[-1][1])) == (gast.Call, gast.Constant)
