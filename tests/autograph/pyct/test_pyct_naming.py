"""Specification of naming.Namer: fresh names never clash."""
import pytest

from autograph.pyct import naming
from autograph.pyct import qual_names


def test_root_is_used_as_is_when_free():
    assert naming.Namer({}).new_symbol("retval_", []) == "retval_"


def test_clashes_with_globals_locals_and_earlier_names_get_a_suffix():
    namer = naming.Namer({"do_return", "ag__"})
    assert namer.new_symbol("do_return", []) == "do_return_1"
    assert namer.new_symbol("do_return", ["do_return_2"]) == "do_return_3"
    assert namer.new_symbol("x", [qual_names.QN("x")]) == "x_1"
    assert namer.new_symbol("x", []) == "x"
    assert namer.new_symbol("x", []) == "x_2"


def test_numbered_roots_continue_their_numbering():
    namer = naming.Namer({"loop_1"})
    assert namer.new_symbol("loop_1", []) == "loop_2"


def test_reserved_composite_names_reserve_their_parts():
    name = qual_names.from_str("a.b")
    namer = naming.Namer({})
    assert namer.new_symbol("a", [name]) == "a_1"
    assert namer.new_symbol("a_dot_b", [name]) == "a_dot_b_1"


def test_rejects_other_reserved_types():
    with pytest.raises(ValueError):
        naming.Namer({}).new_symbol("a", [1])
