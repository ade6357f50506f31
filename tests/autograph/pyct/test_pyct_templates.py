"""Specification of templates: placeholders filled with names, nodes and lists."""
import gast
import pytest

from autograph.pyct import anno
from autograph.pyct import parser
from autograph.pyct import qual_names
from autograph.pyct import templates


def code(nodes):
    return parser.unparse(nodes)


def ctx_of(node):
    return type(node.ctx).__name__


def test_names_strings_dotted_strings_and_qns():
    nodes = templates.replace("result = fn(arg)", result="y", fn="ag__.if_stmt",
                              arg=qual_names.from_str("a.b[0]"))
    assert code(nodes) == "y = ag__.if_stmt(a.b[0])"
    assert ctx_of(nodes[0].targets[0]) == "Store"
    assert ctx_of(nodes[0].value.func) == "Load"


def test_expression_nodes_are_moved_once_then_copied_so_they_can_be_used_twice():
    value = parser.parse_expression("x + 1")
    nodes = templates.replace("a = v\nb = v", v=value)
    assert code(nodes) == "a = x + 1\nb = x + 1"
    assert nodes[0].value is value and nodes[1].value is not nodes[0].value


def test_statement_lists_are_spliced_into_bodies():
    body = parser.parse("x = 1\ny = x", single_node=False)
    nodes = templates.replace("""
        if cond:
            body
        else:
            orelse
        """, cond="c", body=body, orelse=[])
    assert code(nodes) == "if c:\n    x = 1\n    y = x"  # an empty else disappears
    nodes = templates.replace("while c:\n    body", body=[])
    assert code(nodes) == "while c:\n    pass"  # an empty body gets `pass`


def test_function_name_parameters_nonlocal_and_body():
    body = parser.parse("x = x + 1", single_node=False)
    nodes = templates.replace("""
        def fn_name(args):
            nonlocal vars_
            body
        """, fn_name="if_body", args=["a", qual_names.QN("b")], vars_=["x", "y"], body=body)
    assert code(nodes) == "def if_body(a, b):\n    nonlocal x, y\n    x = x + 1"
    assert [ctx_of(a) for a in nodes[0].args.args] == ["Param", "Param"]


def test_empty_nonlocal_list_removes_the_declaration():
    nodes = templates.replace("def f():\n    nonlocal vars_\n    return 1", vars_=[])
    assert code(nodes) == "def f():\n    return 1"


def test_whole_arguments_replacement():
    arguments = parser.parse("def g(a, b=1, *c): pass").args
    nodes = templates.replace("def f(args):\n    pass", args=arguments)
    assert code(nodes) == "def f(a, b=1, *c):\n    pass"


def test_lists_of_expressions_splice_into_tuples_and_calls():
    names = ["a", qual_names.from_str("b.c")]
    assert code(templates.replace("f(x, args)", args=names)) == "f(x, a, b.c)"
    assert code(templates.replace("t = (x, elts)", elts=names)) == "t = (x, a, b.c)"
    nodes = templates.replace("targets = f()", targets=names)
    assert code(nodes) == "a, b.c = f()"


def test_store_context_reaches_into_tuples_but_not_attribute_bases():
    nodes = templates.replace("target = 1", target=parser.parse_expression("(a.b, [c[i], *d])"))
    tuple_node = nodes[0].targets[0]
    attribute, inner = tuple_node.elts
    assert ctx_of(tuple_node) == ctx_of(attribute) == ctx_of(inner) == "Store"
    assert ctx_of(attribute.value) == "Load"  # only a.b is stored, a is read
    subscript, starred = inner.elts
    assert ctx_of(subscript) == "Store" and ctx_of(subscript.value) == "Load"
    assert ctx_of(starred) == ctx_of(starred.value) == "Store"


def test_del_context():
    nodes = templates.replace("del target", target=["a", "b"])
    assert code(nodes) == "del a, b"
    assert [ctx_of(t) for t in nodes[0].targets] == ["Del", "Del"]


def test_annotations_on_replacements_are_kept():
    value = parser.parse_expression("x")
    anno.setanno(value, anno.Basic.ORIGIN, "origin")
    anno.setanno(value, anno.Static.LIVE_VARS_IN, "stale analysis")
    moved, copied = templates.replace_as_expression("f(v, v)", v=value).args
    assert moved is value                      # the first use moves the node as it is
    assert anno.getanno(copied, anno.Basic.ORIGIN) == "origin"
    assert not anno.hasanno(copied, anno.Static.LIVE_VARS_IN)


def test_single_statement_replacement_and_keywords():
    statement = parser.parse("return 1")
    assert code(templates.replace("if c:\n    stmt", stmt=statement)) == "if c:\n    return 1"
    keywords = parser.parse_expression("f(a=1, b=2)").keywords
    assert code(templates.replace("g(x, extra=None)", extra=keywords)) == "g(x, a=1, b=2)"
    assert code(templates.replace("g(name=1)", name="other")) == "g(other=1)"


def test_replace_as_expression():
    node = templates.replace_as_expression("ag__.and_(lambda: a, lambda: b)", a="x", b="y")
    assert isinstance(node, gast.Call)
    assert code(node) == "ag__.and_(lambda: x, lambda: y)"
    with pytest.raises(ValueError, match="not a single expression"):
        templates.replace_as_expression("x = 1")


def test_clear_errors_for_bad_replacements():
    with pytest.raises(ValueError, match="placeholder 'x'.*int"):
        templates.replace("y = x", x=1)
    with pytest.raises(ValueError, match="not a name or dotted name"):
        templates.replace("y = x", x="a + b")
    with pytest.raises(ValueError, match="must be a simple name"):
        templates.replace("def f(): pass", f=qual_names.from_str("a.b"))
    with pytest.raises(ValueError, match="stands for statements"):
        templates.replace("body", body=[parser.parse_expression("x")])
    with pytest.raises(ValueError, match="is a parameter"):
        templates.replace("def f(a): pass", a=parser.parse_expression("x + 1"))


def test_filling_a_template_never_changes_the_cached_template():
    template = """
        def fn_name(args):
            nonlocal vars_
            body
        """
    first = templates.replace(template, fn_name="one", args=["a"], vars_=["x"],
                              body=parser.parse("x = a", single_node=False))
    first[0].body.append(parser.parse("y = 2"))
    first[0].args.args[0].id = "changed"
    second = templates.replace(template, fn_name="two", args=[], vars_=[],
                               body=parser.parse("pass", single_node=False))
    assert parser.unparse(second) == "def two():\n    pass"
    assert parser.unparse(templates.replace(template, fn_name="three", args=["b"],
                                            vars_=["z"], body=[])) == (
        "def three(b):\n    nonlocal z")
