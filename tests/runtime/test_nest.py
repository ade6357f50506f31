"""Nested structures: flattened depth first (dicts by sorted key) and rebuilt from a template."""
import collections

import pytest

from runtime import nest

Point = collections.namedtuple("Point", "x y")


def test_flatten_is_depth_first_and_none_is_a_leaf():
    assert nest.flatten([1, (2, None), [[3]]]) == [1, 2, None, 3]
    assert nest.flatten(5) == [5]
    assert nest.flatten([]) == []


def test_dicts_flatten_by_sorted_key_whatever_their_insertion_order():
    assert nest.flatten({"b": 2, "a": 1}) == [1, 2]
    assert nest.flatten({"a": 1, "b": 2}) == [1, 2]


def test_pack_sequence_as_rebuilds_tuples_lists_dicts_and_namedtuples():
    structure = {"z": Point(1, [2, 3]), "a": (4,)}
    packed = nest.pack_sequence_as(structure, ["a0", "x", "y0", "y1"])
    assert packed == {"z": Point("x", ["y0", "y1"]), "a": ("a0",)}
    assert type(packed["z"]) is Point
    assert list(packed) == ["z", "a"]          # the template's key order is kept


def test_dict_subclasses_keep_their_type():
    ordered = nest.pack_sequence_as(collections.OrderedDict(b=1, a=2), ["a", "b"])
    assert type(ordered) is collections.OrderedDict and list(ordered.items()) == [
        ("b", "b"), ("a", "a")]
    counts = nest.pack_sequence_as(collections.defaultdict(int, k=1), [5])
    assert counts["k"] == 5 and counts["missing"] == 0


def test_pack_sequence_as_checks_the_number_of_leaves():
    with pytest.raises(ValueError, match="2 leaves but 3 values"):
        nest.pack_sequence_as([1, 2], [1, 2, 3])


def test_map_structure_applies_to_corresponding_leaves():
    assert nest.map_structure(lambda a, b: a + b, (1, [2]), (10, [20])) == (11, [22])
    with pytest.raises(ValueError, match="differ"):
        nest.map_structure(lambda a, b: a, (1, 2), (1,))


def test_same_structure_distinguishes_namedtuples_and_dict_keys():
    assert nest.same_structure((1, [2]), (3, [4]))
    assert nest.same_structure([1, 2], (1, 2))            # lists and tuples alike
    assert not nest.same_structure(Point(1, 2), (1, 2))
    assert not nest.same_structure({"a": 1}, {"b": 1})
    assert not nest.same_structure([1], 1)


def test_flatten_up_to_keeps_the_deeper_parts_whole():
    assert nest.flatten_up_to([None, None], [[1, 2], {"k": 3}]) == [[1, 2], {"k": 3}]
    assert nest.flatten_up_to({"a": None, "b": (None,)}, {"b": (2,), "a": [1]}) == [[1], 2]
    with pytest.raises(ValueError, match=r"Expected the structure \[\*, \*\], got \[\*\]"):
        nest.flatten_up_to(["spec", "spec"], [1])


def test_structure_str_describes_shapes_of_structures_for_error_messages():
    assert nest.structure_str((1, [2, None], {"k": 3})) == "(*, [*, None], {'k': *})"
    assert nest.structure_str(Point(1, 2)) == "Point(*, *)"
    assert nest.structure_str((1,)) == "(*,)"


def test_packing_leaves_no_reference_cycles():
    """Rebuilding a structure (every graph function's result) frees its values as soon as
    the result goes, not when the cycle collector next runs."""
    import gc
    import weakref

    class Leaf:
        pass
    leaf = Leaf()
    gone = weakref.ref(leaf)
    gc.disable()
    try:
        packed = nest.pack_sequence_as({"a": [1, (2, 3)], "b": 4}, [leaf, 1, 2, 3])
        assert packed == {"a": [leaf, (1, 2)], "b": 3}
        del packed, leaf
        assert gone() is None
    finally:
        gc.enable()
