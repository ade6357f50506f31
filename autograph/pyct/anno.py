"""Annotations: extra facts attached to AST nodes (qualified names, scopes, origins).

Annotations live in a per-node dict stored under `ANNO_ATTR`; it is not one of
the node's `_fields`, so AST walkers and `ast.unparse` never see it.
`copy.deepcopy` copies it along with the node; `ast_util.copy_clean` drops it
except for the keys it is asked to keep.
"""
import enum

import gast

from autograph.pyct import visitor

ANNO_ATTR = "_ag_anno"


class _Key(enum.Enum):
    """An enum whose members print as their name, for readable debug output."""

    def __repr__(self):
        return self.name

    # Members are unique: hash by identity (Enum's own __hash__ is a Python-level call,
    # and annotations are looked up thousands of times per conversion).
    __hash__ = object.__hash__


class Basic(_Key):
    """Annotations that converters set and read."""

    QN = "the qualified name (qual_names.QN) of a Name, Attribute or Subscript"
    SKIP_PROCESSING = "converters leave this node alone"
    UNCONVERTED = "a function of the user's that runs as written (generators, async def)"
    WRITTEN = "a def or lambda the user wrote (not one a converter made)"
    INDENT_BLOCK_REMAINDER = (
        "(block, remaining statements): statements after this one move into block")
    ORIGIN = "origin_info.OriginInfo: where this node came from in user code"
    DIRECTIVES = "dict of directive function -> its arguments (e.g. set_loop_options)"
    EXTRA_LOOP_TEST = "an extra expression that also ends a loop (break, return)"
    SOURCE_TEXT = "the user's source text of an expression, as written (for messages)"


class Static(_Key):
    """Annotations set by static analysis (see static_analysis/)."""

    SCOPE = "activity.Scope of a statement, or the own scope of a function/lambda/class"
    DEF_SCOPE = "activity.Scope of a def/class statement within its enclosing block"
    ARGS_SCOPE = "activity.Scope of a function's arguments"
    COND_SCOPE = "activity.Scope of the test of an if/while"
    BODY_SCOPE = "activity.Scope of the body of a compound statement or function"
    ITERATE_SCOPE = "activity.Scope of a for loop's target and iterated value"
    ORELSE_SCOPE = "activity.Scope of an else branch"
    CFG_NODE_SCOPE = "activity.Scope of a part of a statement that is one CFG node"
    DEFINITIONS = "tuple of reaching_definitions.Definition reaching a Name"
    ORIG_DEFINITIONS = "DEFINITIONS as first computed, kept across rewrites"
    DEFINED_FNS_IN = "frozenset of local def nodes that may have run before a statement"
    DEFINED_VARS_IN = "frozenset of QN defined on every path into a statement"
    MAYBE_DEFINED_VARS_IN = "frozenset of QN defined on some path into a statement"
    LIVE_VARS_IN = "frozenset of QN live just before a statement"
    LIVE_VARS_OUT = "frozenset of QN live just after a statement"
    LIVE_VARS_IN_BODY = "frozenset of QN live at the start of an if/while/for body"


_NO_DEFAULT = object()


def _annos(node):
    return node.__dict__.get(ANNO_ATTR)


def getanno(node, key, default=_NO_DEFAULT):
    annos = _annos(node)
    if annos is not None and key in annos:
        return annos[key]
    if default is _NO_DEFAULT:
        raise KeyError(f"{type(node).__name__} node has no annotation {key!r}")
    return default


def hasanno(node, key):
    annos = _annos(node)
    return annos is not None and key in annos


def setanno(node, key, value):
    annos = _annos(node)
    if annos is None:
        annos = {}
        setattr(node, ANNO_ATTR, annos)
    annos[key] = value


def delanno(node, key):
    annos = _annos(node)
    del annos[key]
    if not annos:
        delattr(node, ANNO_ATTR)


def copyanno(from_node, to_node, key):
    if hasanno(from_node, key):
        setanno(to_node, key, getanno(from_node, key))


def keys(node):
    """The annotation keys set on `node`."""
    return frozenset(_annos(node) or ())


def dup(node, copy_map):
    """Copies annotations, on `node` and all below it, to new keys: {from_key: to_key}."""
    for n in visitor.walk(node):
        for from_key, to_key in copy_map.items():
            if hasanno(n, from_key):
                setanno(n, to_key, getanno(n, from_key))
