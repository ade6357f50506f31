"""Qualified names (QN): the symbols that analyses track, like `a`, `a.b`, `a[i]`, `a['k']`.

A QN is immutable and hashable. `resolve(node)` puts a QN annotation
(`anno.Basic.QN`) on every Name, and on every Attribute or Subscript whose value
chain is made only of names, attributes and constant-or-name subscripts.
"""
import weakref

import gast

from autograph.pyct import anno
from autograph.pyct import parser
from autograph.pyct import visitor


class Literal:
    """A constant used as a subscript: the `0` in `a[0]`, the `'k'` in `a['k']`."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return (isinstance(other, Literal) and type(self.value) is type(other.value)
                and self.value == other.value)

    def __hash__(self):
        return hash((Literal, self.value))

    def __str__(self):
        return repr(self.value)

    __repr__ = __str__


class QN:
    """A qualified name: QN('a'), QN(QN('a'), attr='b'), QN(QN('a'), subscript=QN('i')).

    QNs are interned: equal names are one object, so sets and dicts of QNs hash and
    compare them by identity, at C speed (the analyses do so thousands of times per
    conversion).
    """

    __slots__ = ("_parent", "_base", "_attr", "_subscript", "_key", "__weakref__")

    def __new__(cls, base, attr=None, subscript=None):
        if attr is None and subscript is None:
            if not isinstance(base, (str, Literal)):
                raise ValueError(f"a simple QN needs a str or Literal, got {base!r}")
            key = base if type(base) is str else ("literal", base)
        else:
            if attr is not None and subscript is not None:
                raise ValueError("a QN has an attribute or a subscript, not both")
            if not isinstance(base, QN):
                raise ValueError(f"a composite QN needs a QN as base, got {base!r}")
            if attr is not None:
                key = ("attr", base, attr)
            else:
                if isinstance(subscript, Literal):
                    subscript = QN(subscript)
                if not isinstance(subscript, QN):
                    raise ValueError(f"a subscript must be a QN or Literal, got {subscript!r}")
                key = ("sub", base, subscript)
        ref = _interned_refs.get(key)       # (the weak dict's own dict: no method call)
        if ref is not None:
            qn = ref()
            if qn is not None:
                return qn
        qn = object.__new__(cls)
        qn._key = key
        if attr is None and subscript is None:
            qn._parent = qn._attr = qn._subscript = None
            qn._base = base
        else:
            qn._parent, qn._base, qn._attr, qn._subscript = base, None, attr, subscript
        return _interned.setdefault(key, qn)

    def __reduce__(self):
        if self._parent is None:
            return QN, (self._base,)
        return QN, (self._parent, self._attr, self._subscript)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def is_composite(self):
        return self._parent is not None

    def has_attr(self):
        return self._attr is not None

    def has_subscript(self):
        return self._subscript is not None

    def is_literal(self):
        return isinstance(self._base, Literal)

    @property
    def parent(self):
        if self._parent is None:
            raise ValueError(f"{self} is a simple name and has no parent")
        return self._parent

    @property
    def attr(self):
        return self._attr

    @property
    def subscript(self):
        return self._subscript

    @property
    def qn(self):
        """('a',) for a simple name, (parent QN, 'b') or (parent QN, subscript QN)."""
        if self._parent is None:
            return (self._base,)
        return (self._parent, self._attr if self._attr is not None else self._subscript)

    @property
    def root(self):
        """The simple name this QN hangs from: `a` for `a.b[i]`."""
        return self if self._parent is None else self._parent.root

    @property
    def owner_set(self):
        """All proper prefixes: {a, a.b} for `a.b.c`."""
        owners = set()
        qn = self
        while qn._parent is not None:
            qn = qn._parent
            owners.add(qn)
        return owners

    @property
    def support_set(self):
        """The simple names this QN depends on: {a, i} for `a[i]`, {a} for `a.b[0]`."""
        if self._parent is None:
            return set() if self.is_literal() else {self}
        support = set(self._parent.support_set)
        if self._subscript is not None:
            support |= self._subscript.support_set
        return support

    def ssf(self):
        """A valid Python identifier for this name: `a_dot_b`, `a_sub_0`, `a_sub_i`."""
        if self._parent is None:
            return _identifier_piece(self._base)
        if self._attr is not None:
            return f"{self._parent.ssf()}_dot_{self._attr}"
        return f"{self._parent.ssf()}_sub_{self._subscript.ssf()}"

    def ast(self):
        """A gast expression (Load context) that evaluates this name."""
        if self._parent is None:
            if self.is_literal():
                return gast.Constant(value=self._base.value, kind=None)
            return gast.Name(id=self._base, ctx=gast.Load(), annotation=None,
                             type_comment=None)
        if self._attr is not None:
            return gast.Attribute(value=self._parent.ast(), attr=self._attr,
                                  ctx=gast.Load())
        return gast.Subscript(value=self._parent.ast(), slice=self._subscript.ast(),
                              ctx=gast.Load())

    def __str__(self):
        if self._parent is None:
            return str(self._base)
        if self._attr is not None:
            return f"{self._parent}.{self._attr}"
        return f"{self._parent}[{self._subscript}]"

    __repr__ = __str__

    def __lt__(self, other):
        return str(self) < str(other)


# Every QN ever made, by its key: a simple name's str, ("literal", Literal) or
# ("attr"|"sub", parent QN, attribute str | subscript QN). Weak values: a QN no tree or
# analysis holds any more goes away.
_interned = weakref.WeakValueDictionary()
_interned_refs = _interned.data


def _identifier_piece(base):
    if isinstance(base, str):
        return base
    text = str(base.value)
    text = text.replace("-", "neg").replace(".", "_")
    return "".join(c if c.isalnum() or c == "_" else "_" for c in text)


def subscript_qn(node):
    """The QN of a subscript index (resolved), or None if it is not a name or a constant
    (or an attribute or subscript with a QN)."""
    if isinstance(node, gast.Constant):
        return QN(Literal(node.value))
    if (isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub)
            and isinstance(node.operand, gast.Constant)
            and isinstance(node.operand.value, (int, float))):
        return QN(Literal(-node.operand.value))
    return anno.getanno(node, anno.Basic.QN, None)


def _resolve(node, children=visitor.children, key=anno.Basic.QN, attr=anno.ANNO_ATTR):
    """Annotates the subtree of `node`; returns its QN (None if it has none)."""
    node_type = type(node)
    if node_type is gast.Name:
        if node.annotation is not None:
            _resolve(node.annotation)
        annos = node.__dict__.get(attr)
        if annos is not None:               # resolved before (a second analysis)
            qn = annos.get(key)
            if qn is not None and qn._base == node.id:
                return qn
        qn = QN(node.id)
    elif node_type is gast.Attribute:
        base = _resolve(node.value)
        if base is None:
            return None
        qn = QN(base, attr=node.attr)
    elif node_type is gast.Subscript:
        base = _resolve(node.value)
        index = _resolve(node.slice)
        if base is None:
            return None
        if type(node.slice) is not gast.Name:
            index = subscript_qn(node.slice)
        if index is None:
            return None
        qn = QN(base, subscript=index)
    else:
        for child in children(node):
            _resolve(child)
        return None
    annos = node.__dict__.get(attr)
    if annos is None:
        node.__dict__[attr] = {key: qn}
    else:
        annos[key] = qn
    return qn


def resolve(node):
    """Annotates `node` and everything below it with anno.Basic.QN; returns `node`."""
    if isinstance(node, (list, tuple)):
        for n in node:
            _resolve(n)
    else:
        _resolve(node)
    return node


def from_str(qn_str):
    """The QN of a Python expression such as 'a.b[0]'."""
    node = resolve(parser.parse_expression(qn_str))
    qn = anno.getanno(node, anno.Basic.QN, None)
    if qn is None:
        raise ValueError(f"{qn_str!r} is not a qualified name")
    return qn
