"""Reaching definitions: which assignments may reach each name; which symbols are defined.

`resolve(node, context, graphs)` needs activity.resolve first, and annotates:
  every Name               DEFINITIONS: tuple of the Definitions that may reach
                           it (Load), or the one it creates (Store, Param);
                           ORIG_DEFINITIONS: the same, set only the first time
  every statement, and     DEFINED_VARS_IN: frozenset of QN defined on EVERY
  every CFG node's AST       path to it (definitely defined; what converters
  node (if tests, ...)       need to know which variables exist before a block)
                           MAYBE_DEFINED_VARS_IN: defined on SOME path
                           DEFINED_FNS_IN: local def nodes that may have run
Parameters are defined at the function's entry. Globals and closure variables
are not definitions of the function: they never appear in DEFINED_VARS_IN. A
free name in a nested function gets the definitions that reach the nested def
statement (Python binds late, so a later assignment may also be seen; this is
an approximation). For a loop, "into the statement" means from before the loop,
not around the back edge. `del x` undefines x; assigning `a` undefines `a.b`.
Nodes with equal sets may share one frozenset.

`maybe_unbound_reads(fn_node, scope)` then says which locals a function may read unbound.
"""
import gast

from autograph.pyct import anno
from autograph.pyct import ast_util
from autograph.pyct import qual_names
from autograph.pyct import visitor
from autograph.pyct.static_analysis import activity
from autograph.pyct.static_analysis import cfg


class Definition:
    """One definition of a symbol, compared by identity.

    param_of: the function node when this is a parameter. directives: free for
    converters (e.g. loop options attached to a variable).
    """

    def __init__(self):
        self.param_of = None
        self.directives = {}

    def __repr__(self):
        kind = "param" if self.param_of is not None else "def"
        return f"Definition({kind}, {id(self):#x})"


_FUNCTION_DEFS = (gast.FunctionDef, gast.AsyncFunctionDef)


class _Analyzer:
    """The fixed point of one function's graph, its sets as int bitsets (see cfg.SymbolBits).

    State after each node (by position): must (the symbols defined on every path to its
    end; None while not computed yet, the top of the lattice), maybe (the symbols defined
    on some path), fns (the def nodes that may have run) and, with `names`, defs (the
    Definitions that may reach its end; without names no Definitions are made, as none
    would be seen). Transfer: must, maybe = (in - what the node overwrites) | what it
    creates, must staying None; defs likewise with Definitions; fns = in | the node if it
    is a def. Starting from None musts and empty others, any order of visits reaches the
    same fixed point (greatest for must, least for the others): sweeps in program order
    settle it in about one pass per loop nesting level, re-visiting only the nodes whose
    predecessors changed. maybe is the symbols of defs (a write kills all definitions of
    what it overwrites, and makes one per symbol it creates), kept as its own bitset.
    """

    def __init__(self, graph, fn_node, definition_factory, names):
        self.graph = graph
        nodes, self.position, succs, self.preds = cfg.numbering(graph)
        self.symbols = symbols = cfg.SymbolBits()  # The symbols nodes create.
        self.definitions = definitions = cfg.SymbolBits()  # In the order made.
        self.fns = fns = cfg.SymbolBits()
        self.generated = generated = {}  # (Node, QN) -> Definition
        self.defs_of = defs_of = {}  # QN -> bits of its Definitions
        gen_defs, gen_symbols, gen_fns, written = [], [], [], []
        scope_of = activity.cfg_node_scope
        symbol_bits = symbols.bits
        for node in nodes:
            ast_node = node.ast_node
            scope = scope_of(ast_node)
            defs = 0
            if scope is not None:
                params = scope.params
                w = scope.modified | params
                created = w - scope.deleted
                written.append(w)
                gen_symbols.append(symbol_bits(created))
                if names:
                    for qn in created:
                        definition = definition_factory()
                        if qn in params:
                            definition.param_of = fn_node
                        generated[(node, qn)] = definition
                        bit = definitions.bits((definition,))
                        defs |= bit
                        defs_of[qn] = defs_of.get(qn, 0) | bit
            else:
                written.append(None)
                gen_symbols.append(0)
            gen_defs.append(defs)
            gen_fns.append(fns.bits((ast_node,)) if isinstance(ast_node, _FUNCTION_DEFS) else 0)
        # Writing w overwrites w and the composites it owns, and all their definitions.
        over_symbols = symbols.owned_bits()
        over_defs = {}
        for qn, bits in defs_of.items():
            over_defs[qn] = over_defs.get(qn, 0) | bits
            if qn.is_composite():
                for owner in qn.owner_set:
                    over_defs[owner] = over_defs.get(owner, 0) | bits
        keep_defs, keep_symbols = [], []
        for w in written:
            killed_defs = killed_symbols = 0
            if w:
                for qn in w:
                    killed_symbols |= over_symbols.get(qn, 0)
                    if names:
                        killed_defs |= over_defs.get(qn, 0)
            keep_defs.append(~killed_defs)
            keep_symbols.append(~killed_symbols)

        n = len(nodes)
        preds = self.preds
        self.out = out = ([None] * n, [0] * n, [0] * n, [0] * n)  # must, maybe, fns, defs
        out_must, out_maybe, out_fns, out_defs = out
        pending = [True] * n
        merge = self._merge
        again = True
        while again:
            again = False
            for i in range(n):
                if not pending[i]:
                    continue
                pending[i] = False
                must, maybe, fns_in, defs = merge(preds[i], out)
                keep, gen = keep_symbols[i], gen_symbols[i]
                if must is not None:
                    must = (must & keep) | gen
                maybe = (maybe & keep) | gen
                fns_in |= gen_fns[i]
                defs = (defs & keep_defs[i]) | gen_defs[i]
                if (maybe != out_maybe[i] or must != out_must[i] or fns_in != out_fns[i]
                        or defs != out_defs[i]):
                    out_must[i], out_maybe[i], out_fns[i], out_defs[i] = must, maybe, fns_in, defs
                    for s in succs[i]:
                        if not pending[s]:
                            pending[s] = True
                            if s < i:  # Already passed in this sweep.
                                again = True
        self._in = {}  # Node -> the state into it
        self._annotations = {}  # state -> the three annotation values

    @staticmethod
    def _merge(positions, out):
        """(must, maybe, fns, defs) after any of the nodes at `positions`: the intersection
        of must (None if all are None), the union of the others."""
        if not positions:
            return 0, 0, 0, 0
        out_must, out_maybe, out_fns, out_defs = out
        must = None
        maybe = fns = defs = 0
        for p in positions:
            m = out_must[p]
            if m is not None:
                must = m if must is None else must & m
            maybe |= out_maybe[p]
            fns |= out_fns[p]
            defs |= out_defs[p]
        return must, maybe, fns, defs

    def state_in(self, node):
        """The state into the Node `node`."""
        state = self._in.get(node)
        if state is None:
            state = self._in[node] = self._merge(self.preds[self.position[node]], self.out)
        return state

    def state_after(self, nodes):
        """The state after any of the Nodes `nodes`."""
        position = self.position
        return self._merge([position[n] for n in nodes], self.out)

    def annotate(self, ast_node, state):
        """DEFINED_VARS_IN, MAYBE_DEFINED_VARS_IN and DEFINED_FNS_IN of a state."""
        values = self._annotations.get(state)
        if values is None:
            must, maybe, fns, _ = state
            frozen = self.symbols.frozenset
            values = self._annotations[state] = (
                frozen(must or 0), frozen(maybe), self.fns.frozenset(fns))
        node_values = ast_node.__dict__
        annos = node_values.get(anno.ANNO_ATTR)
        if annos is None:
            annos = node_values[anno.ANNO_ATTR] = {}
        annos[_DEFINED], annos[_MAYBE_DEFINED], annos[_DEFINED_FNS] = values

    def definitions_of(self, defs, qn):
        """The frozenset of the Definitions of `qn` in the bits `defs`, or None if none."""
        bits = defs & self.defs_of.get(qn, 0)
        return self.definitions.frozenset(bits) if bits else None

    def definitions_dict(self, defs):
        """{QN: frozenset of its Definitions} of the bits `defs`."""
        found = {}
        for qn, bits in self.defs_of.items():
            bits &= defs
            if bits:
                found[qn] = self.definitions.frozenset(bits)
        return found


_DEFINED, _MAYBE_DEFINED, _DEFINED_FNS = (anno.Static.DEFINED_VARS_IN,
                                          anno.Static.MAYBE_DEFINED_VARS_IN,
                                          anno.Static.DEFINED_FNS_IN)


def resolve(node, context, graphs, definition_factory=Definition, names=True):
    """Annotates `node` (see the module docstring); `graphs` from cfg.build(node).

    With names=False only statements are annotated (no DEFINITIONS on names, no
    Definitions made, and lambdas inside expressions are not analyzed): all the
    converters need, faster.
    """
    del context
    if names:
        _Annotator(graphs, definition_factory).visit(node)
    elif not isinstance(node, gast.expr):
        _StatementAnnotator(graphs, definition_factory).walk(node, None)
    return node


class _StatementAnnotator:
    """The annotation walk with names=False: as _Annotator's, but visiting no expression
    (so no names, and no lambdas), which leaves few nodes to walk."""

    def __init__(self, graphs, definition_factory):
        self.graphs = graphs
        self.definition_factory = definition_factory

    def walk(self, node, analyzer):
        cls = type(node)
        if analyzer is not None:
            graph = analyzer.graph
            cfg_node = graph.index.get(node)
            if cfg_node is not None:
                analyzer.annotate(node, analyzer.state_in(cfg_node))
            elif isinstance(node, gast.stmt) and node in graph.stmt_prev:
                analyzer.annotate(node, analyzer.state_after(graph.stmt_prev[node]))
        if cls in _FUNCTION_DEFS_SET:
            # (Its decorators, defaults and annotations are expressions.)
            analyzer = _Analyzer(self.graphs[node], node, self.definition_factory, False)
            self.walk(node.args, analyzer)
            for stmt in node.body:
                self.walk(stmt, analyzer)
            return
        walk = self.walk
        values = node.__dict__
        for field in _ANNOTATED_FIELDS:
            value = values.get(field)
            if type(value) is list:
                for child in value:
                    walk(child, analyzer)


_FUNCTION_DEFS_SET = frozenset(_FUNCTION_DEFS)
# The fields that may hold what the walk annotates (statements, with items, except
# handlers, match cases): the others hold expressions, or nodes that hold nothing else
# (parameters, keywords, aliases, patterns).
_ANNOTATED_FIELDS = ("items", "body", "handlers", "orelse", "finalbody", "cases")


class _Annotator(ast_util.NodeVisitor):
    """Annotates statements, CFG nodes and names (names=True)."""

    def __init__(self, graphs, definition_factory):
        self.graphs = graphs
        self.definition_factory = definition_factory
        self.analyzer = None
        self.cfg_node = None
        self.local_names = frozenset()
        self.closure_defs = {}

    def visit(self, node):
        analyzer = self.analyzer
        if analyzer is None:
            return super().visit(node)
        graph = analyzer.graph
        cfg_node = graph.index.get(node)
        if cfg_node is None:
            if isinstance(node, gast.stmt) and node in graph.stmt_prev:
                analyzer.annotate(node, analyzer.state_after(graph.stmt_prev[node]))
            return super().visit(node)
        # A statement that is one CFG node gets the state into that node.
        outer_cfg_node, self.cfg_node = self.cfg_node, cfg_node
        analyzer.annotate(node, analyzer.state_in(cfg_node))
        super().visit(node)
        self.cfg_node = outer_cfg_node
        return None

    def visit_Name(self, node):
        qn = anno.getanno(node, anno.Basic.QN, None)
        if self.cfg_node is None or qn is None:
            return
        if isinstance(node.ctx, gast.Load):
            defs = self.analyzer.definitions_of(self.analyzer.state_in(self.cfg_node)[3], qn)
            if defs is None and qn.root not in self.local_names:
                defs = self.closure_defs.get(qn)
            definitions = tuple(defs or ())
        elif isinstance(node.ctx, (gast.Store, gast.Param)):
            definition = self.analyzer.generated.get((self.cfg_node, qn))
            definitions = (definition,) if definition is not None else ()
        else:
            return
        anno.setanno(node, anno.Static.DEFINITIONS, definitions)
        if not anno.hasanno(node, anno.Static.ORIG_DEFINITIONS):
            anno.setanno(node, anno.Static.ORIG_DEFINITIONS, definitions)

    def visit_FunctionDef(self, node):
        for part in activity.signature_parts(node):
            self.visit(part)
        saved = (self.analyzer, self.cfg_node, self.local_names, self.closure_defs)
        if self.cfg_node is not None:
            self.closure_defs = {**self.closure_defs, **self.analyzer.definitions_dict(
                self.analyzer.state_in(self.cfg_node)[3])}
        self.analyzer = _Analyzer(self.graphs[node], node, self.definition_factory, True)
        self.cfg_node = None
        self.local_names = anno.getanno(node, anno.Static.SCOPE).local_names
        self.visit(node.args)
        if isinstance(node, gast.Lambda):
            self.visit(node.body)
        else:
            for stmt in node.body:
                self.visit(stmt)
        self.analyzer, self.cfg_node, self.local_names, self.closure_defs = saved

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef

    def visit_arguments(self, node):
        # Defaults and annotations were visited where the function is defined.
        for arg in node.posonlyargs + node.args + node.kwonlyargs + [node.vararg, node.kwarg]:
            if arg is not None:
                self.visit(arg)


def maybe_unbound_reads(fn_node, scope):
    """Locals of the function (names) that its own statements may read while they are
    unbound (not defined on every path to the statement; `del x` reads x). Needs
    DEFINED_VARS_IN (`resolve`) and the function's activity.Scope `scope`."""
    local = scope.local_names
    found = set()
    getanno, defined_key, scope_key = anno.getanno, anno.Static.DEFINED_VARS_IN, \
        anno.Static.SCOPE
    # The locals each DEFINED_VARS_IN set lacks, by the set's id (statements in one state
    # share their set; `kept` holds the sets, so that no id is reused meanwhile).
    unbound_in, kept = {}, []
    for stmt in visitor.statements(fn_node.body):
        defined = getanno(stmt, defined_key, None)
        if defined is None:
            continue
        unbound = unbound_in.get(id(defined))
        if unbound is None:
            unbound = unbound_in[id(defined)] = local.difference(defined)
            kept.append(defined)
        if not unbound:
            continue
        # What the whole statement reads (its blocks too: more than its own reads) says
        # cheaply whether it may read one; only then are its expressions walked.
        stmt_scope = getanno(stmt, scope_key, None)
        if stmt_scope is not None and unbound.isdisjoint(stmt_scope.read) and \
                unbound.isdisjoint(stmt_scope.deleted):
            continue
        for name in _names_read_by(stmt):
            if qual_names.QN(name) in unbound:
                found.add(name)
    return found


def _names_read_by(stmt):
    """The names a statement's own expressions read (not its blocks', nor those read in
    lambdas and comprehensions, scopes of their own); augmented targets too."""
    stack = [value for field, value in gast.iter_fields(stmt)
             if field not in ("body", "orelse", "finalbody", "handlers", "cases")]
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
        yield stmt.target.id
    while stack:
        n = stack.pop()
        if isinstance(n, list):
            stack.extend(n)
        elif isinstance(n, gast.Name):
            if isinstance(n.ctx, (gast.Load, gast.Del)):    # (`del x` reads it first)
                yield n.id
        elif isinstance(n, (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp)):
            stack.append(n.generators[0].iter)
        elif isinstance(n, gast.AST) and not isinstance(n, (gast.Lambda, gast.stmt)):
            stack.extend(value for _, value in gast.iter_fields(n))
