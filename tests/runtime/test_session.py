"""TF1 style: build into rt.Graph, run fetches with rt.Session, feeding any tensor."""
import collections

import numpy as np
import pytest

import runtime as rt

Pair = collections.namedtuple("Pair", "a b")


@pytest.fixture
def graph():
    """A graph with x: f32[?, 2] fed by the tests, and ops built from it."""
    g = rt.Graph()
    with g.as_default():
        x = rt.placeholder(rt.float32, shape=[None, 2], name="x")
        doubled = x * 2.0
        total = rt.reduce_sum(doubled)
    return g, x, doubled, total


def test_run_a_tensor_with_a_feed(graph):
    g, x, doubled, total = graph
    with rt.Session(graph=g) as sess:
        result = sess.run(doubled, feed_dict={x: [[1.0, 2.0]]})
        assert type(result) is np.ndarray and result.tolist() == [[2.0, 4.0]]
        scalar = sess.run(total, {x: np.ones((3, 2))})
        assert isinstance(scalar, np.floating) and scalar == 12.0


def test_nested_fetches_come_back_in_the_same_structure(graph):
    g, x, doubled, total = graph
    with rt.Session(graph=g) as sess:
        result = sess.run({"sum": total, "parts": [x, (doubled, Pair(total, x))]},
                          {x: [[1.0, 1.0]]})
    assert result["sum"] == 4.0
    assert result["parts"][0].tolist() == [[1.0, 1.0]]
    assert isinstance(result["parts"][1], tuple)
    assert type(result["parts"][1][1]) is Pair and result["parts"][1][1].a == 4.0


def test_operations_fetch_as_none_and_names_fetch_tensors_or_operations(graph):
    g, x, doubled, total = graph
    with g.as_default():
        nothing = rt.no_op()
    with rt.Session(graph=g) as sess:
        assert sess.run([total, nothing], {x: [[1.0, 1.0]]})[1] is None
        assert sess.run("x:0", {x: [[3.0, 4.0]]}).tolist() == [[3.0, 4.0]]
        assert sess.run(doubled.op.name, {x: [[3.0, 4.0]]}) is None


def test_the_default_session_graph_is_the_default_graph(graph):
    g, x, doubled, _ = graph
    with g.as_default(), rt.Session() as sess:
        assert sess.graph is g
        assert sess.run(doubled, {x: [[1.0, 0.0]]}).tolist() == [[2.0, 0.0]]


def test_any_tensor_can_be_fed_and_then_its_inputs_are_not_needed(graph):
    g, x, doubled, total = graph
    with rt.Session(graph=g) as sess:
        assert sess.run(total, {doubled: [[1.0, 2.0], [3.0, 4.0]]}) == 10.0


def test_feeding_one_output_of_a_multi_output_op_keeps_the_fed_value():
    g = rt.Graph()
    with g.as_default():
        x = rt.placeholder(rt.float32, [4])
        first, second = rt.split(x, 2)
        combined = first * 10.0 + second
        with rt.Session() as sess:
            feed = {x: [1.0, 2.0, 3.0, 4.0]}
            assert sess.run(combined, feed).tolist() == [13.0, 24.0]
            assert sess.run(combined, {**feed, first: [0.0, 0.0]}).tolist() == [3.0, 4.0]


def test_only_the_ops_a_fetch_needs_run(graph, capsys):
    g, x, doubled, total = graph
    with g.as_default():
        rt.print("never")
        failing = rt.reshape(x, [5])                      # wrong for every feed
        side = rt.print("side effect")
    with rt.Session(graph=g) as sess:
        assert sess.run(doubled, {x: [[1.0, 2.0]]}).tolist() == [[2.0, 4.0]]
        assert capsys.readouterr().out == ""
        sess.run(side)
        assert capsys.readouterr().out == "side effect\n"
        with pytest.raises(ValueError):
            sess.run(failing, {x: [[1.0, 2.0]]})


def test_a_missing_feed_names_the_placeholder(graph):
    g, x, doubled, _ = graph
    with rt.Session(graph=g) as sess:
        with pytest.raises(rt.errors.InvalidArgumentError,
                           match=r"operation 'x' \(placeholder\) .*must feed a value"):
            sess.run(doubled)


def test_feeding_a_wrong_shape_names_the_tensor(graph):
    g, x, doubled, _ = graph
    with rt.Session(graph=g) as sess:
        with pytest.raises(ValueError, match=r"shape \(1, 3\) for Tensor 'x:0', which has "
                                             r"shape \(None, 2\)"):
            sess.run(doubled, {x: [[1.0, 2.0, 3.0]]})


def test_fed_python_values_take_the_tensors_dtype(graph):
    g, x, doubled, _ = graph
    with rt.Session(graph=g) as sess:
        assert sess.run(doubled, {x: [[1, 2]]}).dtype == np.float32


def test_fetching_from_another_graph_or_a_closed_session_is_an_error(graph):
    g, x, doubled, _ = graph
    other = rt.Graph()
    with other.as_default():
        foreign = rt.constant(1.0)
    sess = rt.Session(graph=g)
    with pytest.raises(ValueError, match="not an element of this session's graph"):
        sess.run(foreign)
    with pytest.raises(TypeError, match="Cannot fetch 3"):
        sess.run(3)
    sess.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(doubled, {x: [[1.0, 2.0]]})


def test_placeholders_exist_only_in_graphs():
    with pytest.raises(RuntimeError, match="not compatible with eager execution"):
        rt.placeholder(rt.float32)


def test_ops_added_after_a_run_are_runnable(graph):
    g, x, doubled, _ = graph
    with rt.Session(graph=g) as sess:
        sess.run(doubled, {x: [[1.0, 2.0]]})
        with g.as_default():
            more = doubled + 1.0
        assert sess.run(more, {x: [[1.0, 2.0]]}).tolist() == [[3.0, 5.0]]
