"""Nested structures of tuples, lists, dicts, namedtuples and dataclasses, flattened and rebuilt.

Dicts flatten in sorted-key order (so equal-keyed dicts match whatever their
insertion order) and are rebuilt in the key order of the template structure.
A dataclass instance flattens its fields in declaration order and is rebuilt as a
shallow copy of the template with the new field values (other attributes kept).
"""
import collections
import copy
import dataclasses

__all__ = ["is_nested", "flatten", "flatten_up_to", "pack_sequence_as", "map_structure",
           "assert_same_structure"]


def is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def is_dataclass_instance(x):
    return dataclasses.is_dataclass(x) and not isinstance(x, type)


def is_nested(x):
    return isinstance(x, (list, tuple, dict)) or is_dataclass_instance(x)


def _sorted_keys(d):
    try:
        return sorted(d)
    except TypeError:
        return list(d)


def _children(x):
    if isinstance(x, dict):
        return [x[k] for k in _sorted_keys(x)]
    if is_dataclass_instance(x):
        return [getattr(x, f.name) for f in dataclasses.fields(x)]
    return list(x)


def flatten(structure):
    """The leaves of `structure`, depth first (None is a leaf)."""
    out = []
    _flatten_into(structure, out)
    return out


def _flatten_into(x, out):
    if isinstance(x, (list, tuple)):
        for item in x:
            _flatten_into(item, out)
    elif is_nested(x):
        for child in _children(x):
            _flatten_into(child, out)
    else:
        out.append(x)


def flatten_up_to(shallow, structure):
    """The parts of `structure` at the leaves of `shallow` (they may be nested themselves).

    `flatten_up_to([a, b], [[1, 2], 3]) == [[1, 2], 3]`; raises ValueError when
    `structure` does not have `shallow`'s structure down to its leaves.
    """
    if not is_nested(shallow):
        return [structure]
    if (not is_nested(structure) or isinstance(shallow, dict) != isinstance(structure, dict)
            or (isinstance(shallow, dict) and set(shallow) != set(structure))
            or is_dataclass_instance(shallow) != is_dataclass_instance(structure)
            or len(_children(shallow)) != len(_children(structure))):
        raise ValueError(f"Expected the structure {structure_str(shallow)}, got "
                         f"{structure_str(structure)}")
    out = []
    for s, x in zip(_children(shallow), _children(structure)):
        out.extend(flatten_up_to(s, x))
    return out


def _rebuild_dataclass(template, children):
    result = copy.copy(template)
    for field, value in zip(dataclasses.fields(template), children):
        object.__setattr__(result, field.name, value)      # (frozen ones too)
    return result


def _rebuild(template, children):
    if is_dataclass_instance(template):
        return _rebuild_dataclass(template, children)
    if isinstance(template, dict):
        by_key = dict(zip(_sorted_keys(template), children))
        result = {k: by_key[k] for k in template}
        if type(template) is dict:
            return result
        if isinstance(template, collections.defaultdict):
            return type(template)(template.default_factory, result)
        return type(template)(result)
    if is_namedtuple(template):
        return type(template)(*children)
    if isinstance(template, tuple):
        return tuple(children) if type(template) is tuple else type(template)(children)
    return list(children) if type(template) is list else type(template)(children)


def pack_sequence_as(structure, flat_sequence):
    """Rebuild `structure` with its leaves replaced, in order, by `flat_sequence`."""
    flat = list(flat_sequence)
    expected = len(flatten(structure))
    if expected != len(flat):
        raise ValueError(f"The structure has {expected} leaves but {len(flat)} values "
                         f"were given")
    return _packed(structure, iter(flat))


def _packed(x, leaves):
    """`x` rebuilt with its leaves taken in order from the iterator `leaves` (a module
    function, not a recursive closure: that would be a reference cycle holding the values
    until the garbage collector runs)."""
    if is_nested(x):
        return _rebuild(x, [_packed(c, leaves) for c in _children(x)])
    return next(leaves)


def map_structure(fn, *structures):
    """Apply `fn` to corresponding leaves of same-structured arguments."""
    first = structures[0]
    for other in structures[1:]:
        assert_same_structure(first, other)
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(first, [fn(*leaves) for leaves in zip(*flats)])


def structure_str(x):
    """A short description of a structure's shape, for error messages."""
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {structure_str(x[k])}" for k in _sorted_keys(x)) + "}"
    if is_namedtuple(x) or is_dataclass_instance(x):
        return type(x).__name__ + "(" + ", ".join(structure_str(c) for c in _children(x)) + ")"
    if isinstance(x, tuple):
        return "(" + ", ".join(structure_str(c) for c in x) + ("," if len(x) == 1 else "") + ")"
    if isinstance(x, list):
        return "[" + ", ".join(structure_str(c) for c in x) + "]"
    return "None" if x is None else "*"


def same_structure(a, b):
    if is_nested(a) != is_nested(b):
        return False
    if not is_nested(a):
        return True
    if isinstance(a, dict) != isinstance(b, dict):
        return False
    if isinstance(a, dict):
        if set(a) != set(b):
            return False
    elif is_dataclass_instance(a) or is_dataclass_instance(b):
        if type(a) is not type(b):
            return False
    elif len(a) != len(b) or is_namedtuple(a) != is_namedtuple(b) or (
            is_namedtuple(a) and type(a) is not type(b)):
        return False
    return all(same_structure(x, y) for x, y in zip(_children(a), _children(b)))


def assert_same_structure(a, b):
    if not same_structure(a, b):
        raise ValueError(f"The two structures differ: {structure_str(a)} vs {structure_str(b)}")


class Slot:
    """Marks where the i-th flat tensor goes when a structure is rebuilt (function and
    cond results keep their Python values and structure, with Slots for tensors)."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def __repr__(self):
        return f"<tensor {self.index}>"


class Choice(Slot):
    """A Slot whose tensor is the index of the string a tensor condition chose among
    `choices` (logging_ops.ChosenText): the rebuilt structure holds that string."""

    __slots__ = ("choices",)

    def __init__(self, index, choices):
        super().__init__(index)
        self.choices = tuple(choices)

    def chosen(self, index):
        return self.choices[int(index)]

    def __repr__(self):
        return f"<one of {self.choices!r}: tensor {self.index}>"
