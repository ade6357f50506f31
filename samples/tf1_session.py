"""The seed's graph-mode program and its eager three-line equivalent.

TF1 style: a placeholder, a graph, a Session that feeds it. Eager: no
placeholder, no session, the result at once. Then the seed's numpy interplay:
tensors are backed by numpy arrays, work with numpy functions and iterate.

    python samples/tf1_session.py
"""
import numpy as np

import runtime as rt


def graph_mode():
    g = rt.Graph()
    with g.as_default():
        x = rt.placeholder(rt.float32, shape=[1, 1])
        m = rt.matmul(x, x)
        print(m)
        with rt.Session() as sess:
            m_out = sess.run(m, feed_dict={x: [[2.0]]})
    print(m_out)


def eager_mode():
    x = [[2.]]
    m = rt.matmul(x, x)
    print(m)


def numpy_interplay():
    x = rt.constant([1.0, 2.0, 3.0])
    assert type(x.numpy()) == np.ndarray
    squared = np.square(x)
    print(squared)
    for i in x:
        print(i)


if __name__ == "__main__":
    graph_mode()
    eager_mode()
    numpy_interplay()
