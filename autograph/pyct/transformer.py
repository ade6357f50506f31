"""Base class for converters: a gast.NodeTransformer with context, block visits and state.

    class LoopCounter(transformer.Base):
        def visit_While(self, node):
            with self.state[_Loop] as loop:   # a fresh _Loop() for this loop
                loop.breaks = 0
                node = self.generic_visit(node)
            return node
        def visit_Break(self, node):
            self.state[_Loop].breaks += 1      # the innermost loop's state
            return node
"""
import collections

import gast

from autograph.pyct import anno
from autograph.pyct import parser
from autograph.pyct import visitor


class EntityInfo(collections.namedtuple(
        "EntityInfo", ("name", "source_code", "source_file", "future_features",
                       "namespace", "code"), defaults=(None,))):
    """What a conversion knows about the function being converted.

    name: its name; source_code: the parsed (dedented) source; source_file: the
    file it came from; future_features: `from __future__` names in effect;
    namespace: the dict of names visible to it (globals and closure); code: its
    code object (the functions nested in it are among its constants), or None.
    """


class Context:
    """Shared by all passes of one conversion: entity info, a Namer, user options."""

    def __init__(self, info, namer, user):
        self.info = info
        self.namer = namer
        self.user = user
        source = info.source_code if info is not None else None
        # Whether the code may bind names with `:=` (converters never add one): if not,
        # the names a function binds are all in its statements' targets.
        self.may_walrus = not source or ":=" in source
        # The node types the parsed code holds (set by the conversion's first look at
        # every node), with markers for a few forms of them (LoopElse, TryFinally,
        # BareAnnotation), or None: a converter for a construct absent from it skips its walk.
        self.node_types = None

    def lacks(self, *node_types):
        """Whether the parsed code is known to hold none of `node_types`."""
        return self.node_types is not None and self.node_types.isdisjoint(node_types)


class LoopElse:
    """Stands in Context.node_types for a `for` loop with an `else:` block (the break
    converter moves every loop's `else:` after it, so it walks code that has one)."""


class TryFinally:
    """Stands in Context.node_types for a `try` with a `finally:` block."""


class BareAnnotation:
    """Stands in Context.node_types for an annotation without a value (`x: int`)."""


class _StateStack:
    """A stack of instances of one class; `with` pushes a new one, attributes read the top."""

    def __init__(self, state_type):
        object.__setattr__(self, "_type", state_type)
        object.__setattr__(self, "_stack", [])

    @property
    def level(self):
        return len(self._stack)

    @property
    def value(self):
        return self._stack[-1]

    @property
    def stack(self):
        """The instances, outermost first."""
        return self._stack

    def enter(self):
        self._stack.append(self._type())
        return self._stack[-1]

    def exit(self):
        return self._stack.pop()

    def __enter__(self):
        return self.enter()

    def __exit__(self, *exc_info):
        self.exit()

    def __getattr__(self, name):
        return getattr(self._stack[-1], name)

    def __setattr__(self, name, value):
        setattr(self._stack[-1], name, value)


class _State:
    """`state[SomeClass]` is the _StateStack of SomeClass, created on first use."""

    def __init__(self):
        self._stacks = {}

    def __getitem__(self, state_type):
        if state_type not in self._stacks:
            self._stacks[state_type] = _StateStack(state_type)
        return self._stacks[state_type]


_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")
# The node types that hold statement lists (all a statements_only pass visits).
_WITH_BLOCKS = frozenset(cls for cls in vars(gast).values() if isinstance(cls, type)
                         and issubclass(cls, gast.AST)
                         and not set(_STATEMENT_LISTS).isdisjoint(cls._fields))
_ANNO_ATTR = anno.ANNO_ATTR
_SKIP = anno.Basic.SKIP_PROCESSING
_ORIGIN = anno.Basic.ORIGIN


class Base(gast.NodeTransformer):
    """A converter pass. Annotations survive visits: nodes are changed in place, and
    nodes a visit returns in place of another get that one's ORIGIN if they lack one.
    Nodes annotated with SKIP_PROCESSING are left as they are.

    A pass that rewrites statements only sets `statements_only = True`: its default
    traversal then follows statement lists and skips expressions (much faster).
    """

    statements_only = False

    def __init__(self, ctx):
        self.ctx = ctx
        self.state = _State()
        cls = type(self)
        self._table = cls.__dict__.get("_dispatch_table")
        if self._table is None:
            self._table = {}
            setattr(cls, "_dispatch_table", self._table)
        self._leaf_types = cls._leaves()

    def visit(self, node):
        node_type = type(node)
        if node_type is list:
            return self.visit_block(node)
        values = node.__dict__
        annos = values.get(_ANNO_ATTR)
        if annos is not None and _SKIP in annos:
            return node
        table = self._table
        method = table.get(node_type, False)
        if method is False:
            method = getattr(type(self), "visit_" + node_type.__name__, None)
            if method is visitor.LEGACY_VISIT_CONSTANT:  # ast's search for visit_Num & co.
                method = None
            table[node_type] = method
        if method is None:
            # No visit method: visit the children in place (the node stays itself).
            if node_type is gast.Constant or (
                    node_type is gast.Name and values.get("annotation") is None):
                return node                          # nothing below it
            if self.statements_only and node_type not in _WITH_BLOCKS:
                return node                          # no statement below it
            return self.generic_visit(node)
        result = method(self, node)
        if result is not node and result is not None and annos is not None \
                and _ORIGIN in annos:
            origin = annos[_ORIGIN]
            for new_node in result if isinstance(result, list) else [result]:
                _set_missing_origin(new_node, origin)
        return result

    def generic_visit(self, node):
        """Visits the children (only statement lists, with statements_only) in place;
        expression contexts and operators (no children) are not visited, nor constants
        and names when the pass has no visit method for them."""
        fields = _STATEMENT_LISTS if self.statements_only else visitor.child_fields(type(node))
        values = node.__dict__
        leaves = self._leaf_types
        for field in fields:
            value = values.get(field)
            if value is None:
                continue
            if type(value) is list:
                if not value:
                    continue
                if isinstance(value[0], gast.stmt):
                    setattr(node, field, self.visit_block(value))
                    continue
                new, changed = [], False
                for item in value:
                    if type(item) in leaves and item.__dict__.get("annotation") is None:
                        new.append(item)
                    elif isinstance(item, gast.AST):
                        result = self.visit(item)
                        if result is not item:
                            changed = True
                            if result is None:
                                continue
                            if type(result) is list:
                                new.extend(result)
                                continue
                        new.append(result)
                    else:
                        new.append(item)
                if changed:
                    value[:] = new
            elif type(value) in leaves and value.__dict__.get("annotation") is None:
                continue
            elif isinstance(value, gast.AST):
                new = self.visit(value)
                if new is not value:
                    if new is None:
                        delattr(node, field)
                    else:
                        setattr(node, field, new)
        return node

    @classmethod
    def _leaves(cls):
        """The node types with nothing below them that this pass has no visit method for
        (constants and names): generic_visit leaves them as they are, unvisited."""
        leaves = cls.__dict__.get("_leaf_types")
        if leaves is None:
            leaves = frozenset(t for t in (gast.Constant, gast.Name) if getattr(
                cls, "visit_" + t.__name__, None) in (None, visitor.LEGACY_VISIT_CONSTANT))
            setattr(cls, "_leaf_types", leaves)
        return leaves

    def visit_block(self, nodes, before_visit=None, after_visit=None):
        """Visits a list of statements, splicing lists that visits return.

        before_visit(): called before each statement. after_visit(node) returns
        (node, destination); a destination that is not None is a list into which
        the following statements go instead of the result (used to move the rest
        of a block under a new statement).
        """
        if nodes is None:
            return None
        results = []
        destination = results
        for node in nodes:
            if before_visit is not None:
                before_visit()
            replacement = self.visit(node)
            new_destination = None
            if after_visit is not None and replacement:
                replacement, new_destination = after_visit(replacement)
            if isinstance(replacement, (list, tuple)):
                destination.extend(replacement)
            elif replacement is not None:
                destination.append(replacement)
            if new_destination is not None:
                destination = new_destination
        return results

    def debug_print(self, node):
        """Prints the code of `node` (handy while writing a converter); returns node."""
        print(parser.unparse(node))
        return node


def _set_missing_origin(node, origin):
    """Give `origin` to the new statements of a generated subtree that have none (and to
    the subtree's root); subtrees whose root has an origin already (moved user code) are
    left as they are. Expressions inside a new statement go without: whoever reads an
    origin (the loader's source map, error messages) takes the nearest enclosing one."""
    if "lineno" in node._attributes and not anno.hasanno(node, _ORIGIN):
        anno.setanno(node, _ORIGIN, origin)
    stack = [node]
    while stack:
        values = stack.pop().__dict__
        for field in _STATEMENT_LISTS:
            block = values.get(field)
            if type(block) is not list:
                continue                    # (a lambda's or an IfExp's body: no statements)
            for child in block:
                annos = child.__dict__.get(_ANNO_ATTR)
                if annos is None or _ORIGIN not in annos:
                    if "lineno" in child._attributes:     # statements, except handlers
                        anno.setanno(child, _ORIGIN, origin)
                    stack.append(child)
