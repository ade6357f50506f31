"""A dynamic RNN: `for x in xs` over a tensor of time steps becomes one graph loop;
the outputs list grown in the loop is carried as a tensor list and stacked back.

    python samples/dynamic_rnn.py [--dump]
"""
import sys

import numpy as np

import autograph as ag
import runtime as rt


@ag.convert
def rnn(xs, h, w_x, w_h, b):
    outputs = []
    for x in xs:
        h = rt.tanh(rt.matmul(x, w_x) + rt.matmul(h, w_h) + b)
        outputs.append(h)
    return h, rt.stack(outputs)


def main(argv):
    if "--dump" in argv:
        print(ag.to_code(rnn))
        return
    rng = np.random.default_rng(0)
    steps, batch, inputs, hidden = 20, 4, 3, 8
    xs = rng.normal(size=(steps, batch, inputs)).astype(np.float32)
    h0 = np.zeros((batch, hidden), np.float32)
    w_x = (rng.normal(size=(inputs, hidden)) * 0.5).astype(np.float32)
    w_h = (rng.normal(size=(hidden, hidden)) * 0.5).astype(np.float32)
    b = np.zeros(hidden, np.float32)
    h, outputs = rnn(xs, h0, w_x, w_h, b)
    expected = h0
    for x in xs:
        expected = np.tanh(x @ w_x + expected @ w_h + b)
    print("final state matches numpy:", np.allclose(h.numpy(), expected, atol=1e-5))
    print("outputs shape:", outputs.shape)


if __name__ == "__main__":
    main(sys.argv[1:])
