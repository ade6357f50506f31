"""Specification of activity: read/modified/bound sets of statements, blocks and functions."""
import sys

import pytest

from autograph.pyct import anno
from autograph.pyct.static_analysis import activity

SCOPE, DEF_SCOPE = anno.Static.SCOPE, anno.Static.DEF_SCOPE


def sets(scope, *names):
    return tuple(sorted(str(q) for q in getattr(scope, name)) for name in names)


def test_assignment_reads_and_writes(analyze, stmt):
    node = analyze("def f(a, b):\n    c = a + b")
    scope = anno.getanno(stmt(node, "c = a + b"), SCOPE)
    assert sets(scope, "read", "modified", "bound") == (["a", "b"], ["c"], ["c"])


def test_augmented_assignment_reads_and_modifies(analyze, stmt):
    node = analyze("def f(a):\n    a += 1\n    a.b *= 2")
    assert sets(anno.getanno(stmt(node, "a += 1"), SCOPE), "read", "modified") == (
        ["a"], ["a"])
    assert sets(anno.getanno(stmt(node, "a.b *= 2"), SCOPE), "read", "modified") == (
        ["a", "a.b"], ["a.b"])


def test_composite_names(analyze, stmt):
    node = analyze("""
        def f(a, x):
            a.b = x
            a.c[0] = a.d.e
            a[x + 1] = 0
            a.append(x)
        """)
    scope = anno.getanno(stmt(node, "a.b = x"), SCOPE)
    assert sets(scope, "read", "modified", "bound") == (["a", "x"], ["a.b"], [])
    scope = anno.getanno(stmt(node, "a.c[0] = a.d.e"), SCOPE)
    assert sets(scope, "read", "modified") == (["a", "a.c", "a.d", "a.d.e"], ["a.c[0]"])
    scope = anno.getanno(stmt(node, "a[x + 1] = 0"), SCOPE)
    assert sets(scope, "read", "modified") == (["a", "x"], ["a"])  # no QN: a changes
    scope = anno.getanno(stmt(node, "a.append(x)"), SCOPE)
    assert sets(scope, "read", "modified", "calls") == (["a", "a.append", "x"], [], ["a.append"])


def test_del_modifies_and_deletes(analyze, stmt):
    node = analyze("def f(a):\n    del a, b.c")
    scope = anno.getanno(stmt(node, "del a, b.c"), SCOPE)
    assert sets(scope, "read", "modified", "deleted") == (["b"], ["a", "b.c"], ["a", "b.c"])


def test_compound_statements_have_block_scopes(analyze, stmt):
    node = analyze("""
        def f(a, xs):
            if a > 0:
                b = 1
            else:
                c = a
            while b < 3:
                b += 1
            for i, x in enumerate(xs):
                total = x
            else:
                done = True
        """)
    if_stmt = stmt(node, "if a > 0:")
    assert sets(anno.getanno(if_stmt, anno.Static.COND_SCOPE), "read") == (["a"],)
    assert sets(anno.getanno(if_stmt, anno.Static.BODY_SCOPE), "modified") == (["b"],)
    assert sets(anno.getanno(if_stmt, anno.Static.ORELSE_SCOPE), "read", "modified") == (
        ["a"], ["c"])
    assert sets(anno.getanno(if_stmt, SCOPE), "read", "modified") == (["a"], ["b", "c"])
    loop = stmt(node, "while b < 3:")
    assert sets(anno.getanno(loop, anno.Static.COND_SCOPE), "read") == (["b"],)
    assert sets(anno.getanno(loop, anno.Static.BODY_SCOPE), "read", "modified") == (
        ["b"], ["b"])
    for_stmt = stmt(node, "for i, x in enumerate(xs):")
    assert sets(anno.getanno(for_stmt, anno.Static.ITERATE_SCOPE), "read", "modified") == (
        ["enumerate", "xs"], ["i", "x"])
    assert sets(anno.getanno(for_stmt, anno.Static.BODY_SCOPE), "read", "modified") == (
        ["x"], ["total"])
    assert sets(anno.getanno(for_stmt, anno.Static.ORELSE_SCOPE), "modified") == (["done"],)


def test_function_scope_params_and_def_statement(analyze, stmt):
    node = analyze("""
        def f(a, *args, k=1, **kwargs):
            global g
            b = a
            @decorate
            def inner(c=default):
                nonlocal b
                b = b + c + free
                return local_only
            return inner
        """)
    scope = anno.getanno(node, SCOPE)
    assert scope is anno.getanno(node, anno.Static.BODY_SCOPE)
    assert scope.isolated
    assert sets(scope, "params") == (["a", "args", "k", "kwargs"],)
    assert sets(scope, "globals", "modified") == (["g"], ["b", "inner"])
    assert sets(anno.getanno(node, anno.Static.ARGS_SCOPE), "params") == (
        ["a", "args", "k", "kwargs"],)
    inner = stmt(node, "@decorate")
    # Where it stands, the def binds `inner`, reads decorators, defaults and the
    # free variables of its body; its own writes stay inside.
    def_scope = anno.getanno(inner, DEF_SCOPE)
    assert sets(def_scope, "read", "modified") == (
        ["b", "decorate", "default", "free", "local_only"], ["inner"])
    inner_scope = anno.getanno(inner, SCOPE)
    assert sets(inner_scope, "nonlocals", "modified", "params") == (["b"], ["b"], ["c"])


def test_lambdas_have_their_own_scope(analyze, stmt):
    node = analyze("def f(y):\n    g = lambda x, d=y: x + z")
    assign = stmt(node, "g = lambda x, d=y: x + z")
    assert sets(anno.getanno(assign, SCOPE), "read", "modified") == (["y", "z"], ["g"])
    lambda_scope = anno.getanno(assign.value, SCOPE)
    assert sets(lambda_scope, "params", "read") == (["d", "x"], ["x", "z"])


def test_comprehension_targets_stay_inside(analyze, stmt):
    node = analyze("def f(xs):\n    ys = [x * k for x in xs if x]\n    s = {i: j for i, j in xs}")
    assign = stmt(node, "ys = [x * k for x in xs if x]")
    assert sets(anno.getanno(assign, SCOPE), "read", "modified") == (["k", "xs"], ["ys"])
    comp_scope = anno.getanno(assign.value, SCOPE)
    assert sets(comp_scope, "modified") == (["x"],)
    assign = stmt(node, "s = {i: j for i, j in xs}")
    assert sets(anno.getanno(assign, SCOPE), "read", "modified") == (["xs"], ["s"])


def test_walrus_in_a_comprehension_binds_outside(analyze, stmt):
    node = analyze("def f(xs):\n    ys = [(last := x) for x in xs]")
    scope = anno.getanno(stmt(node, "ys = [(last := x) for x in xs]"), SCOPE)
    assert sets(scope, "modified") == (["last", "ys"],)


def test_try_and_with(analyze, stmt):
    node = analyze("""
        def f(p):
            with open(p) as fh:
                data = fh.read()
            try:
                v = int(data)
            except ValueError as e:
                v = e
        """)
    with_stmt = stmt(node, "with open(p) as fh:")
    assert sets(anno.getanno(with_stmt, SCOPE), "modified") == (["data", "fh"],)
    item_scope = activity.cfg_node_scope(with_stmt.items[0])
    assert sets(item_scope, "read", "modified") == (["open", "p"], ["fh"])
    try_stmt = stmt(node, "try:")
    assert sets(anno.getanno(try_stmt, SCOPE), "modified") == (["e", "v"],)
    handler_scope = activity.cfg_node_scope(try_stmt.handlers[0])
    assert sets(handler_scope, "read", "modified") == (["ValueError"], ["e"])


def test_imports_bind_names(analyze, stmt):
    node = analyze("def f():\n    import os.path\n    from a import b as c")
    assert sets(anno.getanno(stmt(node, "import os.path"), SCOPE), "bound") == (["os"],)
    assert sets(anno.getanno(stmt(node, "from a import b as c"), SCOPE), "bound") == (["c"],)


@pytest.mark.skipif(sys.version_info < (3, 10), reason="match needs Python 3.10")
def test_match_cases_bind_pattern_names(analyze, stmt):
    node = analyze("""
        def f(p):
            match p:
                case Point(x=px, y=0) if px > limit:
                    r = px
                case [first, *rest]:
                    r = first
                case {"k": v, **others}:
                    r = v
        """)
    match = stmt(node, "match p:")
    scopes = [activity.cfg_node_scope(case) for case in match.cases]
    assert sets(scopes[0], "read", "modified") == (["Point", "limit", "px"], ["px"])
    assert sets(scopes[1], "modified") == (["first", "rest"],)
    assert sets(scopes[2], "modified") == (["others", "v"],)
    assert sets(anno.getanno(match.cases[0], anno.Static.BODY_SCOPE), "modified") == (["r"],)


def test_scope_copy_and_merge():
    a = activity.Scope(None)
    a.read.add("x")
    b = activity.Scope.copy_of(a)
    b.modified.add("y")
    assert b.read == {"x"} and a.modified == set()
    a.merge_from(b)
    assert a.modified == {"y"}
    c = activity.Scope(None)
    c.copy_from(a)
    assert c.read == {"x"} and c.read is not a.read


def test_the_walk_annotates_the_qualified_names_qual_names_would():
    import textwrap

    import gast
    from autograph.pyct import parser, qual_names, visitor
    source = textwrap.dedent("""
        def f(a, b: int, *c, d=k.m, **e):
            x = a.b[0].c + a[b][-1] + a[b.c] + a[f(b)].d + g(a)[1].h
            a.b.c[x], (y, *z) = (u := v), w[1:2]
            del a.b, a[0]
            t: a.t = [q.r for q in a.s if q.ok]
            for i.j in a.items(): lambda p=a.p: p.q + a.r
            y += a.n
            class C(Base.b, key=a.k):
                def m(self, arg=a.d): return self.x
            try: pass
            except E.error as err: raise
            with a.w as (o.p, s): return x.y
        """)
    resolved, analyzed = parser.parse(source), parser.parse(source)
    qual_names.resolve(resolved)
    activity.resolve(analyzed)
    qns = [(type(n).__name__, anno.getanno(n, anno.Basic.QN, None))
           for tree in (resolved, analyzed) for n in visitor.walk(tree)]
    half = len(qns) // 2
    assert qns[:half] == qns[half:]
    assert sum(qn is not None for _, qn in qns[:half]) > 60
