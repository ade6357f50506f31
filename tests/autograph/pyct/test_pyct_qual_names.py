"""Specification of qual_names: QN values and the QN annotations resolve() sets."""
import pytest

from autograph.pyct import anno
from autograph.pyct import parser
from autograph.pyct import qual_names
from autograph.pyct.qual_names import QN, Literal


def test_simple_and_composite_names():
    a = QN("a")
    a_b = QN(a, attr="b")
    a_i = QN(a, subscript=QN("i"))
    a_k = QN(a, subscript=Literal("k"))
    a_0 = QN(a, subscript=QN(Literal(0)))
    assert [str(q) for q in (a, a_b, a_i, a_k, a_0)] == ["a", "a.b", "a[i]", "a['k']", "a[0]"]
    assert not a.is_composite() and a_b.is_composite() and a_i.is_composite()
    assert a_b.has_attr() and not a_b.has_subscript()
    assert a_i.has_subscript() and not a_i.has_attr()
    assert a_b.parent == a and a_b.qn == (a, "b") and a.qn == ("a",)
    with pytest.raises(ValueError):
        _ = a.parent


def test_equality_and_hashing():
    assert QN(QN("a"), attr="b") == QN(QN("a"), attr="b")
    assert len({QN("a"), QN("a"), QN(QN("a"), attr="b")}) == 2
    # a.b, a['b'] and a[b] are three different names; so are a[1] and a[True].
    distinct = {QN(QN("a"), attr="b"), QN(QN("a"), subscript=Literal("b")),
                QN(QN("a"), subscript=QN("b")), QN(QN("a"), subscript=Literal(1)),
                QN(QN("a"), subscript=Literal(True))}
    assert len(distinct) == 5
    assert sorted([QN("b"), QN("a")]) == [QN("a"), QN("b")]


def test_owner_and_support_sets():
    name = qual_names.from_str("a.b[i].c")
    assert {str(q) for q in name.owner_set} == {"a", "a.b", "a.b[i]"}
    assert {str(q) for q in name.support_set} == {"a", "i"}
    assert qual_names.from_str("a[0]").support_set == {QN("a")}
    assert name.root == QN("a")


def test_ssf_is_an_identifier():
    for text, expected in [("a.b", "a_dot_b"), ("a[0]", "a_sub_0"), ("a[i]", "a_sub_i"),
                           ("a['k']", "a_sub_k"), ("a[-1]", "a_sub_neg1"),
                           ("a.b[c.d]", "a_dot_b_sub_c_dot_d")]:
        ssf = qual_names.from_str(text).ssf()
        assert ssf == expected and ssf.isidentifier()


def test_ast_round_trips_through_source():
    for text in ("a", "a.b", "a[i]", "a['k']", "a[0].b"):
        node = qual_names.from_str(text).ast()
        assert parser.unparse(node) == text


def test_resolve_annotates_names_attributes_and_simple_subscripts():
    node = qual_names.resolve(parser.parse("x.y[i] = f(z)[0] + w[i + 1] + v[-1]"))
    target = node.targets[0]
    assert anno.getanno(target, anno.Basic.QN) == qual_names.from_str("x.y[i]")
    assert not anno.hasanno(node.value.left.left, anno.Basic.QN)  # f(z)[0]: not a name
    assert not anno.hasanno(node.value.left.right, anno.Basic.QN)  # w[i + 1]
    assert anno.getanno(node.value.right, anno.Basic.QN) == qual_names.from_str("v[-1]")


def test_from_str_rejects_non_names():
    with pytest.raises(ValueError, match="not a qualified name"):
        qual_names.from_str("f(x)")
