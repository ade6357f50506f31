"""Specification of liveness: LIVE_VARS_IN / LIVE_VARS_OUT on statements."""
from autograph.pyct import anno
from autograph.pyct import parser
from autograph.pyct import qual_names
from autograph.pyct.static_analysis import activity
from autograph.pyct.static_analysis import cfg
from autograph.pyct.static_analysis import liveness

LIVE_IN = anno.Static.LIVE_VARS_IN
LIVE_OUT = anno.Static.LIVE_VARS_OUT


def test_straight_line(analyze, stmt, names):
    node = analyze("""
        def f(a):
            b = a + 1
            c = b * 2
            return c
        """)
    assert names(stmt(node, "b = a + 1"), LIVE_IN) == ["a"]
    assert names(stmt(node, "b = a + 1"), LIVE_OUT) == ["b"]
    assert names(stmt(node, "c = b * 2"), LIVE_OUT) == ["c"]
    assert names(stmt(node, "return c"), LIVE_OUT) == []  # nothing after a return


def test_variable_used_after_a_loop_is_live_out_of_it(analyze, stmt, names):
    node = analyze("""
        def f(n):
            total = 0
            i = 0
            while i < n:
                tmp = i * 2
                total = total + tmp
                i = i + 1
            return total
        """)
    loop = stmt(node, "while i < n:")
    assert names(loop, LIVE_OUT) == ["total"]
    assert names(loop, LIVE_IN) == ["i", "n", "total"]
    assert names(loop, anno.Static.LIVE_VARS_IN_BODY) == ["i", "n", "total"]
    # tmp is only used inside the body: never live around the loop.
    assert "tmp" not in names(stmt(node, "i = i + 1"), LIVE_OUT)
    # Around the back edge, i and total stay live.
    assert names(stmt(node, "i = i + 1"), LIVE_OUT) == ["i", "n", "total"]


def test_for_target_is_not_live_before_the_loop(analyze, stmt, names):
    node = analyze("""
        def f(xs):
            s = 0
            for x in xs:
                s = s + x
            return s
        """)
    assert names(stmt(node, "for x in xs:"), LIVE_IN) == ["s", "xs"]
    assert names(stmt(node, "for x in xs:"), LIVE_OUT) == ["s"]


def test_if_branches(analyze, stmt, names):
    node = analyze("""
        def f(a, b):
            if a:
                c = b
            else:
                c = 0
                return c
            return c + a
        """)
    if_stmt = stmt(node, "if a:")
    assert names(if_stmt, LIVE_IN) == ["a", "b"]
    assert names(if_stmt, LIVE_OUT) == ["a", "c"]
    assert names(if_stmt, anno.Static.LIVE_VARS_IN_BODY) == ["a", "b"]
    assert names(stmt(node, "c = 0"), LIVE_OUT) == ["c"]


def test_break_and_continue_targets_are_successors(analyze, stmt, names):
    node = analyze("""
        def f(n):
            while n:
                if n == 3:
                    found = n
                    break
                n = n - 1
            return found
        """)
    inner_if = stmt(node, "if n == 3:")
    assert names(inner_if, LIVE_OUT) == ["found", "n"]


def test_composites(analyze, stmt, names):
    node = analyze("""
        def f(a):
            a.b = 1
            return a.b
        """)
    # a.b = 1 kills a.b but reads a, so the owner stays live.
    assert names(stmt(node, "a.b = 1"), LIVE_IN) == ["a"]
    assert names(stmt(node, "a.b = 1"), LIVE_OUT) == ["a", "a.b"]
    node = analyze("""
        def f(a, c):
            x = a.b
            a = c
            return a.b
        """)
    # Assigning a kills a.b too.
    assert names(stmt(node, "x = a.b"), LIVE_OUT) == ["c"]


def test_closure_variables_stay_live_where_the_function_may_be_called(analyze, stmt, names):
    node = analyze("""
        def f(c):
            x = 1
            def g():
                return x
            if c:
                x = 2
            return g()
        """)
    assert "x" in names(stmt(node, "def g():"), LIVE_IN)
    assert "x" in names(stmt(node, "if c:"), LIVE_OUT)
    assert "x" in names(stmt(node, "x = 2"), LIVE_OUT)


def test_nested_function_statements_have_their_own_liveness(analyze, stmt, names):
    node = analyze("""
        def f():
            def g(y):
                z = y
                return z
            return g
        """)
    assert names(stmt(node, "z = y"), LIVE_IN) == ["y"]
    assert names(stmt(node, "z = y"), LIVE_OUT) == ["z"]


def test_extra_loop_test_is_read_at_the_loop_head(stmt, names):
    node = parser.parse("def f(xs):\n    for x in xs:\n        break_ = x > 3\n    return 0")
    for_stmt = node.body[0]
    extra_test = qual_names.resolve(parser.parse_expression("not break_"))
    anno.setanno(for_stmt, anno.Basic.EXTRA_LOOP_TEST, extra_test)
    activity.resolve(node)
    liveness.resolve(node, None, cfg.build(node))
    assert names(stmt(node, "break_ = x > 3"), LIVE_OUT) == ["break_", "xs"]
    assert qual_names.QN("break_") in anno.getanno(for_stmt, anno.Static.ITERATE_SCOPE).read
    assert "break_" in names(for_stmt, LIVE_IN)
