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
"""
import collections

import gast

from autograph.pyct import anno
from autograph.pyct import ast_util
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


# defs: {QN: frozenset of Definition}; must: frozenset of QN, or None for "not
# computed yet" (the top of the lattice); fns: frozenset of def nodes.
_State = collections.namedtuple("_State", ("defs", "must", "fns"))


class _Analyzer(cfg.GraphVisitor):

    def __init__(self, graph, fn_node, definition_factory):
        super().__init__(graph)
        self.fn_node = fn_node
        self.definition_factory = definition_factory
        self.generated = {}  # (Node, QN) -> Definition, made once

    def init_state(self, node):
        return _State({}, None, frozenset())

    def merge(self, nodes):
        """The state after any of `nodes`: union of definitions, intersection of must.

        States are never changed in place, so one predecessor's state is shared as is.
        """
        if len(nodes) == 1:
            return self.out[next(iter(nodes))]
        defs, must, fns = {}, None, frozenset()
        for node in nodes:
            out = self.out[node]
            for qn, qn_defs in out.defs.items():
                defs[qn] = defs.get(qn, frozenset()) | qn_defs
            if out.must is not None:
                must = out.must if must is None else must & out.must
            fns |= out.fns
        if not nodes:
            must = frozenset()
        return _State(defs, must, fns)

    def _definition(self, node, qn, scope):
        key = (node, qn)
        if key not in self.generated:
            definition = self.definition_factory()
            if qn in scope.params:
                definition.param_of = self.fn_node
            self.generated[key] = definition
        return self.generated[key]

    def visit_node(self, node):
        state = self.in_[node] = self.merge(node.prev)
        defs, must, fns = state
        scope = activity.cfg_node_scope(node.ast_node)
        if scope is not None:
            written = scope.modified | scope.params
            created = written - scope.deleted
            if written:
                defs = _without(defs, written)
                if must is not None:
                    must = frozenset(_without(dict.fromkeys(must), written))
            for qn in created:
                defs[qn] = frozenset([self._definition(node, qn, scope)])
            if must is not None:
                must = must | created
        if isinstance(node.ast_node, (gast.FunctionDef, gast.AsyncFunctionDef)):
            fns = fns | {node.ast_node}
        out = _State(defs, must, fns)
        changed = out != self.out[node]
        self.out[node] = out
        return changed


def _without(symbols, written):
    """A copy of the dict `symbols` without what writing `written` overwrites."""
    kept = dict(symbols)
    for qn in written:
        kept.pop(qn, None)
    for qn in [qn for qn in kept if qn.is_composite()]:
        if activity.overwritten(qn, written):
            del kept[qn]
    return kept


def resolve(node, context, graphs, definition_factory=Definition, names=True):
    """Annotates `node` (see the module docstring); `graphs` from cfg.build(node).

    With names=False only statements are annotated (no DEFINITIONS on names, and
    lambdas inside expressions are not analyzed): all the converters need, faster.
    """
    del context
    _Annotator(graphs, definition_factory, names).visit(node)
    return node


def _annotate_defined(ast_node, state):
    anno.setanno(ast_node, anno.Static.DEFINED_VARS_IN, state.must or frozenset())
    anno.setanno(ast_node, anno.Static.MAYBE_DEFINED_VARS_IN, frozenset(state.defs))
    anno.setanno(ast_node, anno.Static.DEFINED_FNS_IN, state.fns)


class _Annotator(ast_util.NodeVisitor):

    def __init__(self, graphs, definition_factory, names=True):
        self.graphs = graphs
        self.definition_factory = definition_factory
        self.names = names
        self.analyzer = None
        self.cfg_node = None
        self.local_names = frozenset()
        self.closure_defs = {}

    def visit(self, node):
        if not self.names and isinstance(node, gast.expr):
            return None
        graph = self.analyzer.graph if self.analyzer is not None else None
        if graph is None:
            return super().visit(node)
        if isinstance(node, gast.stmt) and node in graph.stmt_prev:
            _annotate_defined(node, self.analyzer.merge(graph.stmt_prev[node]))
        if node not in graph.index:
            return super().visit(node)
        outer_cfg_node, self.cfg_node = self.cfg_node, graph.index[node]
        _annotate_defined(node, self.analyzer.in_[self.cfg_node])
        super().visit(node)
        self.cfg_node = outer_cfg_node
        return None

    def visit_Name(self, node):
        qn = anno.getanno(node, anno.Basic.QN, None)
        if self.cfg_node is None or qn is None:
            return
        if isinstance(node.ctx, gast.Load):
            defs = self.analyzer.in_[self.cfg_node].defs.get(qn)
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
            self.closure_defs = {**self.closure_defs, **self.analyzer.in_[self.cfg_node].defs}
        self.analyzer = _Analyzer(self.graphs[node], node, self.definition_factory)
        self.analyzer.visit_forward()
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
