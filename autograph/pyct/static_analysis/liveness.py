"""Liveness: which symbols may still be read after (and before) each statement.

`resolve(node, context, graphs)` needs activity.resolve and, for closures,
reaching_definitions.resolve first. It annotates every statement with
LIVE_VARS_IN (live just before it) and LIVE_VARS_OUT (live just after it, on
any path: fall-through, break, continue), and If/While/For with
LIVE_VARS_IN_BODY (live at the start of the body). Frozensets of QN.

Rules: a read makes a symbol live; a write kills it and the composites it
owns (`a = 1` kills `a.b`); `a.b = 1` kills `a.b` but reads, so keeps live, `a`.
Nothing is live after a return or at the end of a function. Loops are solved
to a fixed point. Closures, conservatively (as TF does): a nested function's
free variables are live wherever its def may have run before (DEFINED_FNS_IN),
since it may be called from there on; a lambda's free variables are live only
where the lambda is written.
"""
from autograph.pyct import anno
from autograph.pyct.static_analysis import activity
from autograph.pyct.static_analysis import cfg


class _Analyzer(cfg.GraphVisitor):

    def init_state(self, node):
        return frozenset()

    def visit_node(self, node):
        live_out = frozenset().union(*(self.in_[n] for n in node.next))
        live_in = live_out
        scope = activity.cfg_node_scope(node.ast_node)
        if scope is not None:
            written = scope.modified | scope.params
            live_in = frozenset(
                qn for qn in live_out if not activity.overwritten(qn, written)) | scope.read
        for fn_node in anno.getanno(node.ast_node, anno.Static.DEFINED_FNS_IN, ()):
            live_in |= anno.getanno(fn_node, anno.Static.SCOPE).free_reads
        self.out[node] = live_out
        changed = live_in != self.in_[node]
        self.in_[node] = live_in
        return changed


def resolve(node, context, graphs):
    """Annotates the functions in `node` (see the module docstring); returns node."""
    del context  # Every function in `node` has its graph in `graphs`.
    for graph in graphs.values():
        analyzer = _Analyzer(graph)
        analyzer.visit_reverse()
        _annotate(graph, analyzer)
    return node


def _annotate(graph, analyzer):
    for stmt, entry in graph.stmt_entry.items():
        anno.setanno(stmt, anno.Static.LIVE_VARS_IN, analyzer.in_[entry])
        live_out = frozenset().union(*(analyzer.in_[n] for n in graph.stmt_next[stmt]))
        anno.setanno(stmt, anno.Static.LIVE_VARS_OUT, live_out)
        body = getattr(stmt, "body", None)
        if type(stmt).__name__ in ("If", "While", "For", "AsyncFor") and body:
            anno.setanno(stmt, anno.Static.LIVE_VARS_IN_BODY, analyzer.in_[graph.stmt_entry[body[0]]])
