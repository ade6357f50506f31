"""rt.viz.to_dot: Graphviz DOT text of a graph, sub-graphs as clusters, source lines on nodes."""
import os
import re
import shutil

import pytest

import runtime as rt

THIS_FILE = os.path.basename(__file__)


def loop_and_branch(x, n):
    def body(i, acc):
        return i + 1, rt.cond(acc > 10.0, lambda: acc, lambda: acc * x)
    _, out = rt.while_loop(lambda i, acc: i < n, body, [0, rt.constant(1.0)])
    return out


@pytest.fixture
def concrete():
    return rt.function(loop_and_branch).get_concrete_function(rt.constant(2.0), rt.constant(3))


def test_nodes_show_op_dtype_shape_and_source_line(concrete):
    dot = rt.viz.to_dot(concrete.graph)
    assert dot.startswith('digraph "loop_and_branch" {') and dot.rstrip().endswith("}")
    line = loop_and_branch.__code__.co_firstlineno + 3
    assert re.search(rf'label="while\\ni32\[\], f32\[\]\\n{THIS_FILE}:{line}"', dot)
    assert re.search(rf'label="multiply\\nf32\[\]\\n{THIS_FILE}:{line - 1}"', dot)
    assert 'label="x (placeholder)\\nf32[]' in dot


def test_cond_and_while_sub_graphs_are_clusters(concrete):
    dot = rt.viz.to_dot(concrete)              # a ConcreteFunction works too
    labels = re.findall(r'subgraph (cluster\d+) \{\n\s*label="([^"]*)"', dot)
    assert [label for _, label in labels] == [
        "while: cond_graph while_cond", "while: body_graph while_body",
        "cond: then_graph then", "cond: else_graph else"]
    for cluster, _ in labels:                  # each linked to the op owning it
        assert f"lhead={cluster}]" in dot
    assert dot.count("{") == dot.count("}")


def test_edges_carry_tensor_types_and_control_dependencies_are_dashed():
    v = rt.Variable(1.0)

    def f(x):
        v.assign_add(x)
        return v.read_value() * 2.0
    dot = rt.viz.to_dot(rt.function(f).get_concrete_function(rt.constant(1.0)))
    assert re.search(r'n\d+ -> n\d+ \[label="f32\[\]"\];', dot)
    assert re.search(r"n\d+ -> n\d+ \[style=dashed\];", dot)


def test_names_with_quotes_are_escaped():
    g = rt.Graph(name='say "hi"\\')
    with g.as_default():
        rt.constant(1.0, name='c"1')
    dot = rt.viz.to_dot(g)
    assert 'digraph "say \\"hi\\"\\\\" {' in dot and 'label="c\\"1 (const)' in dot


def test_rejects_what_is_not_a_graph():
    with pytest.raises(TypeError, match="Graph or a ConcreteFunction"):
        rt.viz.to_dot(42)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_render_runs_dot(concrete, tmp_path):
    out = rt.viz.render(concrete, str(tmp_path / "g.svg"))
    assert "<svg" in open(out).read()
