"""Liveness: which symbols may still be read after (and before) each statement.

`resolve(node, context, graphs)` needs activity.resolve and, for closures,
reaching_definitions.resolve first. It annotates every statement with
LIVE_VARS_IN (live just before it) and LIVE_VARS_OUT (live just after it, on
any path: fall-through, break, continue), and If/While/For with
LIVE_VARS_IN_BODY (live at the start of the body). Frozensets of QN (statements
with equal sets may share one).

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

_WITH_BODY_ANNOTATION = frozenset(("If", "While", "For", "AsyncFor"))


def resolve(node, context, graphs):
    """Annotates the functions in `node` (see the module docstring); returns node."""
    del context  # Every function in `node` has its graph in `graphs`.
    free_reads = {}  # def node -> the free reads of its scope, computed once
    for graph in graphs.values():
        _annotate(graph, *_solve(graph, free_reads))
    return node


def _solve(graph, free_reads):
    """(symbols, live-in bitset per node position) at the fixed point.

    live_in = (live_out - what the node overwrites) | what it reads, live_out being the
    union of the successors' live_in. Solved up from nothing live: the least fixed
    point, whatever the order of visits; sweeps against program order settle it in about
    one pass per loop nesting level, re-visiting only nodes whose successors changed.
    """
    nodes, _, succs, preds = cfg.numbering(graph)
    symbols = cfg.SymbolBits()
    bits = symbols.bits
    getanno = anno.getanno
    scope_of = activity.cfg_node_scope
    defined_fns = anno.Static.DEFINED_FNS_IN
    gen, written = [], []
    for node in nodes:
        ast_node = node.ast_node
        scope = scope_of(ast_node)
        if scope is not None:
            reads = bits(scope.read)
            written.append(scope.modified | scope.params)
        else:
            reads = 0
            written.append(None)
        for fn_node in getanno(ast_node, defined_fns, ()):
            fn_reads = free_reads.get(fn_node)
            if fn_reads is None:
                fn_reads = free_reads[fn_node] = getanno(fn_node, anno.Static.SCOPE).free_reads
            reads |= bits(fn_reads)
        gen.append(reads)
    over = symbols.owned_bits()
    keep = []  # per node: ~(the bits of what it overwrites)
    for w in written:
        killed = 0
        if w:
            for qn in w:
                killed |= over.get(qn, 0)
        keep.append(~killed)

    n = len(nodes)
    live = [0] * n
    pending = [True] * n
    again = True
    while again:
        again = False
        for i in range(n - 1, -1, -1):
            if not pending[i]:
                continue
            pending[i] = False
            out = 0
            for s in succs[i]:
                out |= live[s]
            new = (out & keep[i]) | gen[i]
            if new != live[i]:
                live[i] = new
                for p in preds[i]:
                    if not pending[p]:
                        pending[p] = True
                        if p > i:  # Already passed in this sweep.
                            again = True
    return symbols, live


def _annotate(graph, symbols, live):
    _, position, _, _ = cfg.numbering(graph)
    frozen = symbols.frozenset
    annos_attr = anno.ANNO_ATTR
    live_in, live_out, live_in_body = (
        anno.Static.LIVE_VARS_IN, anno.Static.LIVE_VARS_OUT, anno.Static.LIVE_VARS_IN_BODY)
    stmt_next, stmt_entry = graph.stmt_next, graph.stmt_entry
    for stmt, entry in stmt_entry.items():
        after = 0
        for n in stmt_next[stmt]:
            after |= live[position[n]]
        values = stmt.__dict__
        annos = values.get(annos_attr)
        if annos is None:
            annos = values[annos_attr] = {}
        annos[live_in], annos[live_out] = frozen(live[position[entry]]), frozen(after)
        if type(stmt).__name__ in _WITH_BODY_ANNOTATION:
            body = stmt.body
            if body:
                annos[live_in_body] = frozen(live[position[stmt_entry[body[0]]]])
