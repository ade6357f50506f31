"""Specification of StatementState and discovery (autograph/operators/state.py): the slots a
statement carries, and what a Snapshot finds a trace changed among the places the body
functions reach. (The static half: tests/autograph/pyct/test_pyct_state.py.)"""
import collections

import numpy as np
import pytest

import runtime as rt
from autograph.operators import state
from autograph.operators.data_structures import TensorList
from autograph.operators.state import (AttributeSlot, CellSlot, GlobalSlot, ItemSlot,
                                       Snapshot, StatementState)
from autograph.operators.variables import Undefined

COUNTER = 0


class Box:
    def __init__(self, **values):
        self.__dict__.update(values)


class Slotted:
    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a


Config = collections.namedtuple("Config", "x step")


def changed(snapshot, known=()):
    """The labels (and kinds) of what changed since the snapshot."""
    return sorted((slot.label, kind) for slot, kind in snapshot.changes(set(known)))


# -- slots ------------------------------------------------------------------------------------

def test_a_cell_slot_reads_and_writes_a_closure_variable():
    x = 1

    def body():
        nonlocal x
        x = 2

    slot = StatementState.of_names(body, ("x",)).slots[0]
    assert isinstance(slot, CellSlot) and slot.get() == 1
    slot.set(5)
    assert x == 5
    slot.unbind()
    assert type(slot.get()) is Undefined and slot.get().symbol_name == "x"


def test_a_global_slot_names_a_module_variable():
    def body():
        global COUNTER
        COUNTER = COUNTER + 1

    slot = StatementState.of_names(body, ("COUNTER",)).slots[0]
    assert isinstance(slot, GlobalSlot) and slot.get() == 0
    slot.set(3)
    assert COUNTER == 3
    slot.set(0)


def test_a_name_the_body_does_not_declare_is_an_internal_error():
    def body():
        pass

    with pytest.raises(AssertionError, match="neither nonlocal nor global"):
        StatementState.of_names(body, ("nowhere",))


def test_attribute_and_item_slots_hold_the_place_not_the_value():
    box, d = Box(a=1), {"k": 2}
    a, k = AttributeSlot("box.a", box, "a"), ItemSlot("d['k']", d, "k")
    a.set(10)
    k.set(20)
    assert (box.a, d["k"]) == (10, 20)
    a.set(Undefined("box.a"))                   # no value: the attribute is removed
    k.set(Undefined("d['k']"))
    assert not hasattr(box, "a") and "k" not in d
    assert type(a.get()) is Undefined and type(k.get()) is Undefined
    assert a.key() == AttributeSlot("other label", box, "a").key()


def test_an_attribute_slot_bypasses_setattr_and_knows_slots():
    class Frozen:
        def __setattr__(self, name, value):
            raise AttributeError("frozen")

    frozen = Frozen()
    AttributeSlot("f.v", frozen, "v").set(1)        # restoring a place is no assignment
    assert frozen.v == 1
    slotted = Slotted(1)
    AttributeSlot("s.a", slotted, "a").set(2)
    assert slotted.a == 2


def test_state_values_assign_and_extend():
    x, y = 1, 2

    def body():
        nonlocal x, y
        x = y = 0

    s = StatementState.of_names(body, ("x", "y"), n_outputs=1)
    assert s.names == ("x", "y") and s.n_outputs == 1 and s.values() == (1, 2)
    s.assign((3, 4))
    assert (x, y) == (3, 4)
    box = Box(a=0)
    grown = s.extended([AttributeSlot("box.a", box, "a")])
    assert grown.names == ("x", "box.a", "y") and grown.n_outputs == 2   # outputs first
    assert s.names == ("x", "y")                                          # (immutable)


# -- discovery ----------------------------------------------------------------------------------

def test_nothing_mutable_within_reach_takes_no_snapshot():
    x = rt.constant(1.0)
    n = 3

    def body():
        return x * n + np.float32(2.0)

    assert Snapshot.of([body]) is None


def test_a_helper_writing_a_closure_variable_through_a_dict_is_found():
    total = 0

    def add(k):
        nonlocal total
        total += k

    ops = {"add": add}

    def body():
        ops["add"](1)

    snapshot = Snapshot.of([body], state.assigned_cells(body))
    body()
    assert changed(snapshot) == [("total", "value")]
    snapshot.restore()
    assert total == 0


def test_the_cells_the_body_assigns_itself_are_the_converters():
    i = 0
    seen = []

    def body():
        nonlocal i
        i += 1
        seen.append(i)

    snapshot = Snapshot.of([body], state.assigned_cells(body))
    assert state.assigned_cells(body) == {"i"}
    body()
    assert changed(snapshot) == [("seen", "length")]     # `i` is static state already


def test_attributes_of_reachable_objects_are_found_and_restored():
    model = Box(clock=Box(t=0.0), name="m")

    def body():
        model.clock.t = model.clock.t + 1.0
        model.created = True

    snapshot = Snapshot.of([body])
    body()
    assert changed(snapshot) == [("model.clock.t", "value"), ("model.created", "value")]
    snapshot.restore()
    assert model.clock.t == 0.0 and not hasattr(model, "created")


def test_items_of_nested_lists_and_dicts_are_found():
    cm = [[0, 0], [0, 0]]
    metrics = {"hits": 0, "sums": {"a": 0}}

    def body():
        cm[1][0] += 1
        metrics["sums"]["a"] += 2

    snapshot = Snapshot.of([body])
    body()
    assert changed(snapshot) == [("cm[1][0]", "value"), ("metrics['sums']['a']", "value")]
    snapshot.restore()
    assert cm == [[0, 0], [0, 0]] and metrics["sums"]["a"] == 0


def test_a_grown_list_is_found_as_its_holder():
    box = Box(items=[1])
    values = []

    def body():
        box.items.append(2)
        values.append(3)

    snapshot = Snapshot.of([body])
    body()
    assert changed(snapshot) == [("box.items", "length"), ("values", "length")]
    snapshot.restore()
    assert box.items == [1] and values == []


def test_a_list_inside_a_tuple_is_held_by_the_tuples_holder():
    pair = ([], 3)              # the tuple is rebuilt, never assigned into

    def body():
        pair[0].append(1)

    snapshot = Snapshot.of([body])
    body()
    assert changed(snapshot) == [("pair", "length")]


def test_a_namedtuple_replaced_is_a_new_value_of_its_place():
    holder = Box(cfg=Config(x=1, step=0))

    def body():
        holder.cfg = holder.cfg._replace(step=1)

    snapshot = Snapshot.of([body])
    body()
    assert changed(snapshot) == [("holder.cfg", "value")]


def test_a_tensor_list_grown_in_place_is_found_as_its_holder():
    with rt.Graph().as_default():
        tl = TensorList(rt.zeros([0]), "u")
        box = Box(u=tl)

        def body():
            box.u.append(rt.constant(1.0))

        snapshot = Snapshot.of([body])
        body()
        assert changed(snapshot) == [("box.u", "length")]
        snapshot.restore()
        assert tl.tensor.shape.dims[0] == 0


def test_known_slots_are_not_reported():
    box = Box(a=0)

    def body():
        box.a = 1

    snapshot = Snapshot.of([body])
    body()
    assert changed(snapshot, {AttributeSlot("box.a", box, "a").key()}) == []


def test_library_objects_are_not_looked_into():
    rng = np.random.default_rng(0)
    layer = rt.layers.Dense(2)

    def body():
        return rng, layer

    assert Snapshot.of([body]) is None
