"""Specification of anno: annotations are invisible to AST tools and copy with the node."""
import copy

import gast
import pytest

from autograph.pyct import anno
from autograph.pyct import parser


def test_set_get_has_del():
    node = parser.parse_expression("x")
    assert not anno.hasanno(node, anno.Basic.QN)
    assert anno.getanno(node, anno.Basic.QN, None) is None
    with pytest.raises(KeyError):
        anno.getanno(node, anno.Basic.QN)
    anno.setanno(node, anno.Basic.QN, "value")
    assert anno.getanno(node, anno.Basic.QN) == "value"
    assert anno.keys(node) == {anno.Basic.QN}
    anno.delanno(node, anno.Basic.QN)
    assert not anno.hasanno(node, anno.Basic.QN)


def test_annotations_are_not_fields_and_survive_deepcopy():
    node = parser.parse("x = 1")
    anno.setanno(node, anno.Basic.SKIP_PROCESSING, True)
    assert anno.ANNO_ATTR not in node._fields
    assert parser.unparse(node) == "x = 1"
    assert anno.getanno(copy.deepcopy(node), anno.Basic.SKIP_PROCESSING) is True


def test_copyanno_and_dup():
    node = parser.parse("x = y")
    anno.setanno(node.value, anno.Basic.ORIGIN, "here")
    other = gast.Name(id="z", ctx=gast.Load(), annotation=None, type_comment=None)
    anno.copyanno(node.value, other, anno.Basic.ORIGIN)
    assert anno.getanno(other, anno.Basic.ORIGIN) == "here"
    anno.dup(node, {anno.Basic.ORIGIN: anno.Basic.DIRECTIVES})
    assert anno.getanno(node.value, anno.Basic.DIRECTIVES) == "here"
    assert repr(anno.Static.SCOPE) == "SCOPE"
