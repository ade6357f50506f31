"""The fields of gast node types that may hold child nodes, for the analyses' walks."""
import gast

from autograph.pyct import visitor

# Fields that only ever hold names, strings, numbers, contexts or operators.
_SCALAR_FIELDS = frozenset((
    "id", "ctx", "op", "ops", "attr", "kind", "type_comment", "simple", "is_async",
    "level", "module", "conversion", "asname", "kwd_attrs", "tag", "lineno"))

# Contexts and operators: nodes without children or annotations (visitor.LEAVES).
LEAF_TYPES = frozenset(cls for cls in vars(gast).values()
                       if isinstance(cls, type) and issubclass(cls, visitor.LEAVES))

known_child_fields = {}  # What child_fields returned, by node type.


def child_fields(cls):
    """The fields of node type `cls` that may hold child nodes, in `_fields` order."""
    fields = known_child_fields.get(cls)
    if fields is None:
        fields = known_child_fields[cls] = tuple(
            f for f in cls._fields if f not in _SCALAR_FIELDS)
    return fields
