"""Specification of reaching_definitions: DEFINITIONS on names, DEFINED_VARS_IN
(defined on every path) and MAYBE_DEFINED_VARS_IN (on some path) on statements."""
import gast

from autograph.pyct import anno
from autograph.pyct import parser
from autograph.pyct.static_analysis import activity
from autograph.pyct.static_analysis import cfg
from autograph.pyct.static_analysis import reaching_definitions

DEFINED = anno.Static.DEFINED_VARS_IN
MAYBE = anno.Static.MAYBE_DEFINED_VARS_IN


def loads(node, name):
    return [n for n in gast.walk(node) if isinstance(n, gast.Name) and n.id == name
            and isinstance(n.ctx, gast.Load)]


def stores(node, name):
    return [n for n in gast.walk(node) if isinstance(n, gast.Name) and n.id == name
            and isinstance(n.ctx, (gast.Store, gast.Param))]


def test_parameters_are_defined_at_entry(analyze, stmt, names):
    node = analyze("def f(a, *b, c=1, **d):\n    return a")
    assert names(stmt(node, "return a"), DEFINED) == ["a", "b", "c", "d"]
    param, = stores(node, "a")
    definition, = anno.getanno(param, anno.Static.DEFINITIONS)
    assert definition.param_of is node
    assert anno.getanno(loads(node, "a")[0], anno.Static.DEFINITIONS) == (definition,)


def test_defined_on_one_branch_only_is_maybe_defined(analyze, stmt, names):
    node = analyze("""
        def f(a):
            if a:
                x = 1
                both = 1
            else:
                both = 2
            return x, both
        """)
    ret = stmt(node, "return (x, both)")
    assert names(ret, DEFINED) == ["a", "both"]
    assert names(ret, MAYBE) == ["a", "both", "x"]
    both_read, = loads(ret, "both")
    assert len(anno.getanno(both_read, anno.Static.DEFINITIONS)) == 2
    assert names(stmt(node, "if a:"), DEFINED) == ["a"]
    assert names(stmt(node, "x = 1"), DEFINED) == ["a"]
    assert names(stmt(node, "both = 1"), DEFINED) == ["a", "x"]


def test_loops_may_not_run(analyze, stmt, names):
    node = analyze("""
        def f(xs):
            n = 0
            for x in xs:
                n = n + x
                last = x
            while n > 0:
                n = n - 1
                inner = n
            return n
        """)
    ret = stmt(node, "return n")
    assert names(ret, DEFINED) == ["n", "xs"]
    assert names(ret, MAYBE) == ["inner", "last", "n", "x", "xs"]
    # Into the loop statement means from before it, not around the back edge.
    assert names(stmt(node, "for x in xs:"), MAYBE) == ["n", "xs"]
    assert names(stmt(node, "while n > 0:"), DEFINED) == ["n", "xs"]
    n_in_body = loads(stmt(node, "n = n + x"), "n")[0]
    assert len(anno.getanno(n_in_body, anno.Static.DEFINITIONS)) == 2  # n = 0, n = n + x


def test_del_and_reassigning_an_owner_undefine(analyze, stmt, names):
    node = analyze("""
        def f(a):
            a.b = 1
            x = 1
            del x
            a = 2
            return a
        """)
    assert names(stmt(node, "del x"), DEFINED) == ["a", "a.b", "x"]
    assert names(stmt(node, "a = 2"), DEFINED) == ["a", "a.b"]
    assert names(stmt(node, "return a"), DEFINED) == ["a"]


def test_break_paths_join_after_the_loop(analyze, stmt, names):
    node = analyze("""
        def f():
            while True:
                found = 1
                break
            return found
        """)
    assert names(stmt(node, "return found"), DEFINED) == ["found"]


def test_try_except(analyze, stmt, names):
    node = analyze("""
        def f():
            try:
                v = g()
            except ValueError as e:
                v = None
            return v
        """)
    assert names(stmt(node, "v = None"), DEFINED) == ["e"]
    assert names(stmt(node, "return v"), DEFINED) == ["v"]
    assert names(stmt(node, "return v"), MAYBE) == ["e", "v"]


def test_globals_and_closures_are_not_local_definitions(analyze, stmt, names):
    node = analyze("""
        def f(a):
            b = a
            def g(c):
                return b + c + glob
            b = 3
            return g
        """)
    inner_return = stmt(node, "return b + c + glob")
    assert names(inner_return, DEFINED) == ["c"]
    b_read, = loads(inner_return, "b")
    # A free name takes the definitions reaching the def statement (b = a).
    b_def, = anno.getanno(b_read, anno.Static.DEFINITIONS)
    first_b_store = stores(stmt(node, "b = a"), "b")[0]
    assert anno.getanno(first_b_store, anno.Static.DEFINITIONS) == (b_def,)
    glob_read, = loads(inner_return, "glob")
    assert anno.getanno(glob_read, anno.Static.DEFINITIONS) == ()
    assert anno.getanno(stmt(node, "return g"), anno.Static.DEFINED_FNS_IN) == {
        stmt(node, "def g(c):")}


def test_compound_statements_are_annotated(analyze, stmt, names):
    node = analyze("""
        def f(a):
            with a as b:
                c = b
            return c
        """)
    assert names(stmt(node, "with a as b:"), DEFINED) == ["a"]
    assert names(stmt(node, "return c"), DEFINED) == ["a", "b", "c"]


def test_orig_definitions_are_kept_and_factories_are_used():
    class Tagged(reaching_definitions.Definition):
        pass

    node = parser.parse("def f(a):\n    return a")
    activity.resolve(node)
    graphs = cfg.build(node)
    reaching_definitions.resolve(node, None, graphs, definition_factory=Tagged)
    read, = loads(node, "a")
    first = anno.getanno(read, anno.Static.DEFINITIONS)
    assert isinstance(first[0], Tagged)
    reaching_definitions.resolve(node, None, graphs)
    assert anno.getanno(read, anno.Static.ORIG_DEFINITIONS) == first
    assert anno.getanno(read, anno.Static.DEFINITIONS) != first


def test_maybe_unbound_reads(analyze):
    node = analyze("""
        def f(a, flag):
            if flag:
                x = 1
            y = 2
            t: int
            if a:
                del a
            return x, y, [x for _ in (t,)], lambda: t
        """)
    scope = anno.getanno(node, anno.Static.SCOPE)
    # x may be unbound at the return; t too (the comprehension's first iterable is read
    # there; not what the comprehension and the lambda read, in scopes of their own);
    # `del a` reads a (defined), and a may be unbound after it (not read then)
    assert reaching_definitions.maybe_unbound_reads(node, scope) == {"x", "t"}
