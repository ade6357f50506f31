"""reaching_definitions and liveness solve on int bitsets, for speed. Here they are checked
against the plain formulation (frozensets of QN, cfg.GraphVisitor's worklist, the
transfer functions recomputed on every visit; what the modules did before) on programs
with every kind of control flow."""
import textwrap

import pytest

from autograph.pyct import anno
from autograph.pyct import parser
from autograph.pyct.static_analysis import activity
from autograph.pyct.static_analysis import cfg
from autograph.pyct.static_analysis import liveness
from autograph.pyct.static_analysis import reaching_definitions

PROGRAMS = {
    "loops_break_continue_else": """
        def f(a, n):
            i = 0
            while i < n:
                if a[i] > 0:
                    i += 1
                    continue
                for j in range(i):
                    if j == 3:
                        break
                    a.b = j
                else:
                    del a.b
                i = i + 2
            else:
                k = 1
            return i, k
        """,
    "try_finally_returns_and_raises": """
        def f(x):
            y = 0
            try:
                y = x.compute()
                if y:
                    return y
                z = 1
            except ValueError as e:
                z = e
                raise
            except Exception:
                del y
            else:
                w = z
            finally:
                v = x
            return v, w
        """,
    "closures_lambdas_comprehensions": """
        def f(a, *args, k=1, **kw):
            total = 0
            def g(b):
                nonlocal total
                total = total + b + a
                return total
            h = lambda c: c + total + k
            ys = [g(y) for y in args if (t := y)]
            with open(a) as fh, kw.get('x') as q:
                d = {u: h(u) for u in fh}
            while True:
                total -= 1
                if total < 0:
                    break
            return d, ys, t, q
        """,
    "composites_and_deletes": """
        def f(a, i):
            a.x = 1
            a.x.y = a.x
            b = a.x.y
            a[i] = b
            a[0] = a[i]
            del a.x
            c = a.x.y
            a = None
            return b, c
        """,
    "match_and_global": """
        def f(p):
            global G
            match p:
                case [x, *rest] if x:
                    G = x
                case {'k': v, **others}:
                    G = v
                case Point(x=0) as pt:
                    G = pt
                case _:
                    G = None
            return G
        """,
    "unreachable_code": """
        def f(a):
            return a
            while a:
                a = a - 1
            b = a
            return b
        """,
    "nested_defs_and_classes": """
        def f(a):
            class C:
                def m(self, q):
                    return q + a
            @dec(a)
            async def g(b=a):
                async for z in b:
                    await z
                async with b as c:
                    return c
            return C, g
        """,
}


class _Liveness(cfg.GraphVisitor):

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


class _Defined(cfg.GraphVisitor):
    """(maybe defined, must be defined (None: not computed yet), def nodes run)."""

    def init_state(self, node):
        return (frozenset(), None, frozenset())

    def merge(self, nodes):
        maybe, must, fns = frozenset(), None, frozenset()
        for node in nodes:
            out = self.out[node]
            maybe |= out[0]
            if out[1] is not None:
                must = out[1] if must is None else must & out[1]
            fns |= out[2]
        return maybe, (frozenset() if not nodes else must), fns

    def visit_node(self, node):
        maybe, must, fns = self.in_[node] = self.merge(node.prev)
        scope = activity.cfg_node_scope(node.ast_node)
        if scope is not None:
            written = scope.modified | scope.params
            created = written - scope.deleted
            maybe = frozenset(q for q in maybe if not activity.overwritten(q, written)) | created
            if must is not None:
                must = frozenset(
                    q for q in must if not activity.overwritten(q, written)) | created
        if type(node.ast_node).__name__ in ("FunctionDef", "AsyncFunctionDef"):
            fns = fns | {node.ast_node}
        out = (maybe, must, fns)
        changed = out != self.out[node]
        self.out[node] = out
        return changed


@pytest.mark.parametrize("names", [True, False])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_bitset_solutions_equal_the_plain_ones(name, names):
    node = parser.parse(textwrap.dedent(PROGRAMS[name]))
    activity.resolve(node)
    graphs = cfg.build(node)
    reaching_definitions.resolve(node, None, graphs, names=names)
    liveness.resolve(node, None, graphs)
    checked = 0
    for fn, graph in graphs.items():
        defined = _Defined(graph)
        defined.visit_forward()
        for ast_node, cfg_node in graph.index.items():
            if not anno.hasanno(ast_node, anno.Static.DEFINED_VARS_IN):
                continue
            maybe, must, fns = defined.in_[cfg_node]
            assert anno.getanno(ast_node, anno.Static.DEFINED_VARS_IN) == (must or frozenset())
            assert anno.getanno(ast_node, anno.Static.MAYBE_DEFINED_VARS_IN) == maybe
            assert anno.getanno(ast_node, anno.Static.DEFINED_FNS_IN) == fns
            checked += 1
        for stmt, prev in graph.stmt_prev.items():
            if stmt not in graph.index and anno.hasanno(stmt, anno.Static.DEFINED_VARS_IN):
                maybe, must, fns = defined.merge(prev)
                assert anno.getanno(stmt, anno.Static.DEFINED_VARS_IN) == (must or frozenset())
                assert anno.getanno(stmt, anno.Static.MAYBE_DEFINED_VARS_IN) == maybe
                assert anno.getanno(stmt, anno.Static.DEFINED_FNS_IN) == fns
                checked += 1
        live = _Liveness(graph)
        live.visit_reverse()
        for stmt, entry in graph.stmt_entry.items():
            assert anno.getanno(stmt, anno.Static.LIVE_VARS_IN) == live.in_[entry]
            assert anno.getanno(stmt, anno.Static.LIVE_VARS_OUT) == frozenset().union(
                *(live.in_[n] for n in graph.stmt_next[stmt]))
            if type(stmt).__name__ in ("If", "While", "For", "AsyncFor"):
                assert anno.getanno(stmt, anno.Static.LIVE_VARS_IN_BODY) == live.in_[
                    graph.stmt_entry[stmt.body[0]]]
            checked += 1
    assert checked > 10
