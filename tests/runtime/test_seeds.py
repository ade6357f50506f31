"""The seeds' examples, as they are written there (with `rt` for `tf`)."""
import numpy as np

import runtime as rt


def test_tf1_matmul_through_a_placeholder_and_a_session():
    g = rt.Graph()
    with g.as_default():
        x = rt.placeholder(rt.float32, shape=[1, 1])
        m = rt.matmul(x, x)
        assert str(m) == 'Tensor("matmul:0", shape=(1, 1), dtype=float32)'
        with rt.Session() as sess:
            m_out = sess.run(m, feed_dict={x: [[2.0]]})
    assert m_out.tolist() == [[4.0]]


def test_the_same_eagerly_in_three_lines(capsys):
    x = [[2.]]                      # No need for placeholders!
    m = rt.matmul(x, x)
    print(m)                        # No sessions!
    assert capsys.readouterr().out == "[[4.]]\n"
    assert str(m) == "[[4.]]"


def test_tensors_are_backed_by_numpy_arrays_and_iterable(capsys):
    x = rt.constant([1.0, 2.0, 3.0])
    assert type(x.numpy()) == np.ndarray
    squared = np.square(x)          # Tensors are compatible with NumPy functions
    assert squared.tolist() == [1.0, 4.0, 9.0]
    for i in x:                     # Tensors are iterable
        print(i)
    assert capsys.readouterr().out == "1.0\n2.0\n3.0\n"


class F1:
    @rt.function
    def __call__(self, a, x, v):
        return rt.matmul(a, x) + v


class F2:
    @rt.function
    def __call__(self, v):
        a = rt.constant([[10, 10], [11., 1.]])
        x = rt.constant([[1., 0.], [0., 1.]])
        f = F1()
        y = f(a, x, v)
        return y


def test_nested_graph_functions_give_the_eager_value():
    v = rt.Variable(12.)
    f = F2()
    t = f(v)
    eager = rt.matmul(rt.constant([[10, 10], [11., 1.]]), rt.constant([[1., 0.], [0., 1.]])) + v
    np.testing.assert_array_equal(t.numpy(), eager.numpy())
    assert t.numpy().tolist() == [[22., 22.], [23., 13.]]
    graph = F2.__call__.__get__(f).get_concrete_function(v).graph
    assert [op.type for op in graph.ops] == ["const", "const", "call"]
    v.assign(1.)                    # the graph reads the variable when it runs
    assert f(v).numpy().tolist() == [[11., 11.], [12., 2.]]


def test_an_eager_random_tensor_is_one_consistent_snapshot():
    x = rt.random.uniform([2, 2])
    seen = [[float(x[i, j]) for j in range(x.shape[1])] for i in range(x.shape[0])]
    assert seen == x.numpy().tolist()
    assert float(x[0, 0]) == seen[0][0]          # reading again: the same value


def test_in_a_graph_each_session_run_reruns_the_random_op():
    g = rt.Graph()
    with g.as_default():
        x = rt.random.uniform([2, 2])
        with rt.Session() as sess:
            first = [sess.run(x[0, 0]) for _ in range(3)]
            whole, corner = sess.run([x, x[0, 0]])     # one run: one consistent draw
    assert len(set(first)) == 3
    assert whole[0, 0] == corner


def test_op_seeds_make_the_graph_sequence_reproducible():
    def draws():
        g = rt.Graph()
        with g.as_default():
            x = rt.random.uniform([2], seed=7)
            with rt.Session() as sess:
                return [sess.run(x).tolist() for _ in range(2)]

    first, second = draws()
    assert first != second                       # each run draws new numbers...
    assert draws() == [first, second]            # ...the same ones in a fresh graph
