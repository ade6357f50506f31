"""Specification of cfg: one graph per function; nodes are steps, edges are control flow."""
import sys
import textwrap

import pytest

from autograph.pyct import parser
from autograph.pyct.static_analysis import cfg


def graph_of(src):
    node = parser.parse(textwrap.dedent(src))
    return cfg.build(node)[node]


def edges(graph):
    return {(repr(a), repr(b)) for a in graph.index.values() for b in a.next}


def labels(nodes):
    return {repr(n) for n in nodes}


def test_straight_line():
    graph = graph_of("""
        def f(a):
            b = a
            return b
        """)
    assert edges(graph) == {("(a)", "b = a"), ("b = a", "return b")}
    assert repr(graph.entry) == "(a)"
    assert labels(graph.exit) == {"return b"}
    assert graph.error == frozenset()


def test_if_elif_else():
    graph = graph_of("""
        def f(a):
            if a > 0:
                b = 1
            elif a < 0:
                b = 2
            else:
                b = 3
            return b
        """)
    assert edges(graph) == {
        ("(a)", "a > 0"), ("a > 0", "b = 1"), ("a > 0", "a < 0"),
        ("a < 0", "b = 2"), ("a < 0", "b = 3"),
        ("b = 1", "return b"), ("b = 2", "return b"), ("b = 3", "return b")}


def test_if_without_else_falls_through_from_the_test():
    graph = graph_of("""
        def f(a):
            if a:
                a = 1
            return a
        """)
    assert ("a", "return a") in edges(graph)
    if_stmt = next(s for s in graph.stmt_prev if type(s).__name__ == "If")
    assert labels(graph.stmt_prev[if_stmt]) == {"(a)"}
    assert labels(graph.stmt_next[if_stmt]) == {"return a"}
    assert repr(graph.stmt_entry[if_stmt]) == "a"


def test_while_with_break_continue_and_else():
    graph = graph_of("""
        def f(a):
            while a > 0:
                if a == 5:
                    break
                if a == 3:
                    continue
                a = a - 1
            else:
                a = 10
            return a
        """)
    assert edges(graph) == {
        ("(a)", "a > 0"), ("a > 0", "a == 5"), ("a > 0", "a = 10"),
        ("a == 5", "break"), ("a == 5", "a == 3"), ("break", "return a"),
        ("a == 3", "continue"), ("a == 3", "a = a - 1"), ("continue", "a > 0"),
        ("a = a - 1", "a > 0"), ("a = 10", "return a")}
    loop = next(s for s in graph.stmt_next if type(s).__name__ == "While")
    assert labels(graph.stmt_next[loop]) == {"return a"}
    assert labels(graph.stmt_prev[loop]) == {"(a)"}


def test_while_true_only_leaves_by_break():
    graph = graph_of("""
        def f():
            while True:
                break
            return 1
        """)
    assert ("True", "return 1") not in edges(graph)
    assert ("break", "return 1") in edges(graph)


def test_for_loop_binds_its_target_at_each_iteration():
    graph = graph_of("""
        def f(xs):
            for x in xs:
                y = x
            return 0
        """)
    assert edges(graph) == {
        ("(xs)", "xs"), ("xs", "x"), ("x", "y = x"), ("y = x", "xs"), ("xs", "return 0")}


def test_return_and_raise_end_the_flow():
    graph = graph_of("""
        def f(a):
            if a:
                return 1
            raise ValueError()
            b = 2
        """)
    assert labels(graph.exit) == {"return 1", "b = 2"}  # b = 2: the (dead) end
    assert labels(graph.error) == {"raise ValueError()"}
    unreachable = graph.index[next(n for n in graph.index if repr(graph.index[n]) == "b = 2")]
    assert not unreachable.prev


def test_try_except_else_finally():
    graph = graph_of("""
        def f(a):
            try:
                b = a
            except ValueError as e:
                b = 2
            else:
                b = 3
            finally:
                c = 4
            return c
        """)
    assert edges(graph) == {
        ("(a)", "b = a"), ("(a)", "except ValueError as e:"),
        ("b = a", "except ValueError as e:"), ("b = a", "b = 3"),
        ("except ValueError as e:", "b = 2"), ("b = 2", "c = 4"), ("b = 3", "c = 4"),
        ("c = 4", "return c")}


def test_return_inside_try_runs_finally():
    graph = graph_of("""
        def f():
            try:
                return 1
            finally:
                done = True
        """)
    assert ("return 1", "done = True") in edges(graph)
    assert labels(graph.exit) == {"done = True"}


def test_with_items_then_body():
    graph = graph_of("""
        def f(p):
            with open(p) as a, lock:
                b = a.read()
            return b
        """)
    assert edges(graph) == {
        ("(p)", "open(p) as a"), ("open(p) as a", "lock"), ("lock", "b = a.read()"),
        ("b = a.read()", "return b")}


def test_assert_may_raise_and_goes_on():
    graph = graph_of("def f(a):\n    assert a\n    return a")
    assert labels(graph.error) == {"assert a"}
    assert ("assert a", "return a") in edges(graph)


@pytest.mark.skipif(sys.version_info < (3, 10), reason="match needs Python 3.10")
def test_match_cases_are_branches():
    graph = graph_of("""
        def f(command):
            match command:
                case [x]:
                    a = x
                case _:
                    a = 0
            return a
        """)
    assert edges(graph) == {
        ("(command)", "command"), ("command", "case [x]:"), ("case [x]:", "a = x"),
        ("case [x]:", "case _:"), ("case _:", "a = 0"),
        ("a = x", "return a"), ("a = 0", "return a")}


def test_nested_functions_and_lambdas_get_their_own_graphs():
    node = parser.parse(textwrap.dedent("""
        def f(a):
            def g(b):
                return b
            h = lambda c: c + a
            return g(a)
        """))
    graphs = cfg.build(node)
    g, assign = node.body[0], node.body[1]
    assert set(graphs) == {node, g, assign.value}
    assert edges(graphs[node]) == {
        ("(a)", "def g(b):"), ("def g(b):", "h = lambda c: c + a"),
        ("h = lambda c: c + a", "return g(a)")}
    assert edges(graphs[g]) == {("(b)", "return b")}
    assert edges(graphs[assign.value]) == {("(c)", "c + a")}


class _Reachable(cfg.GraphVisitor):

    def init_state(self, node):
        return False

    def visit_node(self, node):
        reached = node is self.graph.entry or any(self.out[p] for p in node.prev)
        changed = reached != self.out[node]
        self.in_[node] = self.out[node] = reached
        return changed


def test_graph_visitor_reaches_a_fixed_point():
    graph = graph_of("""
        def f(a):
            while a:
                a = a - 1
            return a
            a = 2
        """)
    visitor = _Reachable(graph)
    visitor.visit_forward()
    reached = {repr(n) for n, value in visitor.out.items() if value}
    assert reached == {"(a)", "a", "a = a - 1", "return a"}
