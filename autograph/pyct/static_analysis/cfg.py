"""Control-flow graphs, one per function, and what dataflow analyses over them use: a
fixed-point visitor, and the numbering and symbol bitsets the analyses here solve on.

A CFG node is one step that runs as a unit:
  a simple statement (assignments, expressions, return, raise, break, pass,
  and nested def/class statements, which are one step here and get a graph of
  their own);
  the function's `arguments` (the graph's entry, where parameters are bound);
  the test of an `if`/`while`; the `iter` of a `for` (the loop head, where
  the loop ends or goes on) and its `target` (binding the next item, first
  step of each iteration); each `withitem`; each
  `ExceptHandler` (binding `as e`); a match's subject and each `match_case`
  (pattern and guard); a lambda's body expression.

Approximations: any node of a try body may raise into each handler (and the
handlers may also be entered before the body ran); returns inside try/finally go
through the finally block; break/continue ignore finally; `while True` has no
false edge; a match falls through unless the last case is `case _:`/`case x:`
without a guard.
"""
import collections
import heapq
import itertools

import gast

from autograph.pyct import anno
from autograph.pyct import parser
from autograph.pyct import visitor


class Node:
    """A CFG node: `next`, `prev` (sets of Node), `ast_node` (the step it stands for)."""

    __slots__ = ("ast_node", "next", "prev")

    def __init__(self, ast_node):
        self.ast_node = ast_node
        self.next = set()
        self.prev = set()

    def __repr__(self):
        node = self.ast_node
        if isinstance(node, gast.arguments):
            return f"({parser.unparse(node)})"
        return parser.unparse(node).split("\n")[0].strip()


class Graph(collections.namedtuple("Graph", (
        "entry", "exit", "error", "index", "stmt_prev", "stmt_next", "stmt_entry"))):
    """A function's CFG.

    entry: the Node of the function's arguments. exit: Nodes after which the
    function returns (return statements, the fall-through end). error: Nodes
    that may raise out of the function (raise, assert). index: {ast node: Node},
    in creation order. stmt_prev / stmt_next: {statement: frozenset of Nodes}
    outside the statement that control comes from / goes to (stmt_next includes
    break and continue targets outside it). stmt_entry: {statement: its first Node}.
    """

    def __repr__(self):
        lines = [f"{node!r} -> {sorted(map(repr, node.next))}" for node in self.index.values()]
        return "Graph(\n  " + "\n  ".join(lines) + "\n)"


def build(node):
    """{FunctionDef, AsyncFunctionDef or Lambda node: Graph} for every function in node
    (outer ones first; those activity.resolve found, when it ran on `node`)."""
    functions = anno.getanno(node, anno.Static.FUNCTIONS, None)
    if functions is None:
        functions = _functions(node)
    else:
        anno.delanno(node, anno.Static.FUNCTIONS)     # (it holds the node: a cycle)
    return {fn: _Builder().build(fn) for fn in functions}


def release(graphs):
    """Breaks the graphs' cycles (nodes linking each other) once they are no longer used,
    so they are freed as they go, not by the cyclic garbage collector."""
    for graph in graphs.values():
        for node in graph.index.values():
            node.next = node.prev = None


_FUNCTION_TYPES = frozenset((gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda))
_NO_FUNCTIONS = visitor.LEAF_TYPES | {gast.Constant}  # Node types that hold none.


def _functions(node):
    """The functions in `node`, in the order of visitor.walk (which this is, pruned of
    what cannot hold a function: one walk per conversion, so it is worth being fast)."""
    found = []
    stack = [node]
    pop, push = stack.pop, stack.append
    known_fields, child_fields = visitor.known_child_fields, visitor.child_fields
    skip, function_types = _NO_FUNCTIONS, _FUNCTION_TYPES
    ast_type, name_type, list_type = gast.AST, gast.Name, list
    while stack:
        n = pop()
        cls = type(n)
        if cls in function_types:
            found.append(n)
        values = n.__dict__
        fields = known_fields.get(cls)
        for field in fields if fields is not None else child_fields(cls):
            value = values.get(field)
            if value is None:
                continue
            for child in value if type(value) is list_type else (value,):
                child_type = type(child)
                if child_type is name_type:  # Only its annotation may hold one.
                    if child.annotation is not None:
                        push(child.annotation)
                elif child_type not in skip and isinstance(child, ast_type):
                    push(child)
    return found


_visitors = {}  # statement type -> _Builder.visit_<type> or None
_EMPTY = frozenset()


class _Loop:

    def __init__(self, head):
        self.head = head
        self.breaks = set()


class _Builder:

    def __init__(self):
        self.index = {}
        self.nodes = []  # In creation order: a statement's Nodes are a contiguous run.
        self.frontier = set()  # Nodes that fall through to the next node added.
        # statement -> [first, end, entry]: positions in self.nodes of its Nodes and of
        # its first Node (None while it has none).
        self.spans = {}
        self.exits = set()
        self.errors = set()
        self.loops = []
        self.try_bodies = []  # positions where the enclosing try bodies' Nodes start
        self.finally_returns = []  # sets of returns that must run a finally block

    def build(self, fn):
        entry = self.add_node(fn.args)
        if isinstance(fn, gast.Lambda):
            self.add_node(fn.body)
        else:
            self.visit_block(fn.body)
        self.exits |= self.frontier
        nodes = self.nodes
        stmt_prev, stmt_next, stmt_entry = {}, {}, {}
        for stmt, (first, end, entry_at) in self.spans.items():
            if end - first == 1:
                node = nodes[first]
                prev, next_ = node.prev, node.next
                prev = frozenset(prev) if node not in prev else frozenset(prev) - {node}
                next_ = frozenset(next_) if node not in next_ else frozenset(next_) - {node}
            else:
                run = nodes[first:end]
                inside = set(run)
                prev = _EMPTY.union(*[n.prev for n in run]).difference(inside)
                next_ = _EMPTY.union(*[n.next for n in run]).difference(inside)
            stmt_prev[stmt] = prev
            stmt_next[stmt] = next_
            if entry_at is not None:
                stmt_entry[stmt] = nodes[entry_at]
        return Graph(entry, frozenset(self.exits), frozenset(self.errors), self.index,
                     stmt_prev, stmt_next, stmt_entry)

    def add_node(self, ast_node):
        node = Node(ast_node)
        if self.frontier:
            node_prev = node.prev
            for prev in self.frontier:  # _connect(prev, node)
                prev.next.add(node)
                node_prev.add(prev)
        self.frontier = {node}
        self.index[ast_node] = node
        self.nodes.append(node)
        return node

    def visit_block(self, stmts):
        nodes, spans = self.nodes, self.spans
        for stmt in stmts:
            first = len(nodes)
            span = spans.get(stmt)
            if span is None:  # (Entered in program order: so are the dicts of build.)
                span = spans[stmt] = [first, first, None]
            else:  # The same statement object again: its last Nodes, its first entry.
                span[0] = first
            cls = type(stmt)
            try:
                visitor = _visitors[cls]
            except KeyError:
                visitor = _visitors[cls] = getattr(_Builder, "visit_" + cls.__name__, None)
            if visitor is None:
                self.add_node(stmt)
            else:
                visitor(self, stmt)
            end = span[1] = len(nodes)
            if span[2] is None and end > first:
                span[2] = first

    def _leave(self, node):
        """Ends the straight-line flow after `node` (return, raise, break, continue)."""
        self.frontier = set()
        return node

    def visit_Return(self, stmt):
        node = self._leave(self.add_node(stmt))
        if self.finally_returns:
            self.finally_returns[-1].add(node)
        else:
            self.exits.add(node)

    def visit_Raise(self, stmt):
        node = self._leave(self.add_node(stmt))
        if not self.try_bodies:
            self.errors.add(node)

    def visit_Assert(self, stmt):
        node = self.add_node(stmt)
        if not self.try_bodies:
            self.errors.add(node)

    def visit_Break(self, stmt):
        self.loops[-1].breaks.add(self._leave(self.add_node(stmt)))

    def visit_Continue(self, stmt):
        _connect(self._leave(self.add_node(stmt)), self.loops[-1].head)

    def visit_If(self, stmt):
        test = self.add_node(stmt.test)
        self.visit_block(stmt.body)
        body_end = self.frontier
        self.frontier = {test}
        self.visit_block(stmt.orelse)
        self.frontier |= body_end

    def _loop(self, stmt, head, always_true=False):
        loop = _Loop(head)
        self.loops.append(loop)
        self.visit_block(stmt.body)
        self.loops.pop()
        for node in self.frontier:
            _connect(node, head)
        self.frontier = set() if always_true else {head}
        self.visit_block(stmt.orelse)
        self.frontier |= loop.breaks

    def visit_While(self, stmt):
        always_true = isinstance(stmt.test, gast.Constant) and bool(stmt.test.value)
        self._loop(stmt, self.add_node(stmt.test), always_true)

    def visit_For(self, stmt):
        head = self.add_node(stmt.iter)
        self.add_node(stmt.target)  # Binds the next item; skipped when exhausted.
        self._loop(stmt, head)

    visit_AsyncFor = visit_For

    def visit_With(self, stmt):
        for item in stmt.items:
            self.add_node(item)
        self.visit_block(stmt.body)

    visit_AsyncWith = visit_With

    def visit_Try(self, stmt):
        before = self.frontier
        self.try_bodies.append(len(self.nodes))
        returns = set()
        if stmt.finalbody:
            self.finally_returns.append(returns)
        self.visit_block(stmt.body)
        body_nodes = set(self.nodes[self.try_bodies.pop():])
        self.visit_block(stmt.orelse)
        ends = self.frontier
        for handler in stmt.handlers:
            self.frontier = before | body_nodes
            self.add_node(handler)
            self.visit_block(handler.body)
            ends = ends | self.frontier
        if stmt.finalbody:
            self.finally_returns.pop()
            raising = body_nodes if not stmt.handlers else set()
            self.frontier = ends | returns | raising
            self.visit_block(stmt.finalbody)
            if returns:
                self.exits |= self.frontier
            if raising:
                self.errors |= self.frontier
            if not ends:
                self.frontier = set()
        else:
            self.frontier = ends

    visit_TryStar = visit_Try

    def visit_Match(self, stmt):
        self.add_node(stmt.subject)
        ends = set()
        for case in stmt.cases:
            case_node = self.add_node(case)
            self.visit_block(case.body)
            ends |= self.frontier
            self.frontier = {case_node}
        last = stmt.cases[-1]
        irrefutable = (type(last.pattern).__name__ == "MatchAs"
                       and last.pattern.pattern is None and last.guard is None)
        self.frontier = ends if irrefutable else ends | self.frontier


def _connect(prev, node):
    prev.next.add(node)
    node.prev.add(prev)


def numbering(graph):
    """(nodes, position, successors, predecessors) of a graph: its Nodes in creation
    (program) order, {Node: position}, and per position the positions of the Node's
    successors and predecessors. Made on first use and kept on the graph (graphs are
    not changed once built), for the dataflow analyses, which work on positions."""
    numbered = graph.__dict__.get("_numbering")
    if numbered is None:
        nodes = list(graph.index.values())
        position = {node: i for i, node in enumerate(nodes)}
        succs = [[position[s] for s in node.next] for node in nodes]
        preds = [[position[p] for p in node.prev] for node in nodes]
        numbered = graph.__dict__["_numbering"] = (nodes, position, succs, preds)
    return numbered


_BITS_AS_BYTES = bytes.maketrans(b"01", b"\x00\x01")


class SymbolBits:
    """Sets of symbols (QN) as int bitsets, one bit per symbol, for a dataflow fixed point:
    union, intersection and difference are single int operations. `frozenset(bits)`
    converts back, once per distinct set (equal sets share one frozenset)."""

    def __init__(self):
        self.bit = {}  # QN -> 1 << its position
        self.symbols = []  # position -> QN
        self._frozen = {0: frozenset()}

    def bits(self, qns):
        """The bitset of `qns`, giving new symbols the next positions."""
        bit, out = self.bit, 0
        for qn in qns:
            b = bit.get(qn)
            if b is None:
                b = bit[qn] = 1 << len(self.symbols)
                self.symbols.append(qn)
            out |= b
        return out

    def frozenset(self, bits):
        """The frozenset of the symbols in `bits` (one object per distinct set)."""
        frozen = self._frozen.get(bits)
        if frozen is None:
            # bin() lists bit positions high to low; reversed and made 0/1 bytes, it
            # selects the symbols at C speed.
            frozen = self._frozen[bits] = frozenset(itertools.compress(
                self.symbols, bin(bits)[:1:-1].encode().translate(_BITS_AS_BYTES)))
        return frozen

    def owned_bits(self):
        """{QN: bits of the known symbols that writing QN overwrites}: itself and the
        composites it owns (as activity.overwritten)."""
        over = {}
        for qn, bit in self.bit.items():
            over[qn] = over.get(qn, 0) | bit
            if qn.is_composite():
                for owner in qn.owner_set:
                    over[owner] = over.get(owner, 0) | bit
        return over


class GraphVisitor:
    """Runs a dataflow analysis to a fixed point (with sets as Python objects; liveness
    and reaching_definitions solve on bitsets instead, see numbering and SymbolBits).

    Subclasses define init_state(node) and visit_node(node), which updates
    self.in_[node] / self.out[node] and returns whether its result changed.
    Every node is visited at least once; a change re-queues the node's
    successors (forward) or predecessors (reverse).
    """

    def __init__(self, graph):
        self.graph = graph
        self.in_ = {}
        self.out = {}

    def init_state(self, node):
        raise NotImplementedError

    def visit_node(self, node):
        raise NotImplementedError

    def reset(self):
        for node in self.graph.index.values():
            self.in_[node] = self.init_state(node)
            self.out[node] = self.init_state(node)

    def _visit(self, forward):
        """A worklist that always takes the earliest node in program order (the latest,
        for a backward analysis). Nodes are built in program order, so a loop's body
        comes between its head and what follows it: a loop settles before the code after
        it is visited again, instead of every change rippling through the whole function."""
        self.reset()
        nodes = list(self.graph.index.values())
        rank = {node: i for i, node in enumerate(nodes if forward else reversed(nodes))}
        worklist = [(r, node_id, node) for node_id, (node, r) in enumerate(rank.items())]
        heapq.heapify(worklist)
        ids = {node: node_id for node_id, (node, _) in enumerate(rank.items())}
        queued = set(rank)
        while worklist:
            _, _, node = heapq.heappop(worklist)
            queued.discard(node)
            if self.visit_node(node):
                for neighbour in node.next if forward else node.prev:
                    if neighbour not in queued:
                        queued.add(neighbour)
                        heapq.heappush(worklist, (rank[neighbour], ids[neighbour], neighbour))

    def visit_forward(self):
        self._visit(forward=True)

    def visit_reverse(self):
        self._visit(forward=False)
