"""One epoch over `from_tensor_slices((x, y)).shuffle(N).batch(64)`: N=2048 rows of 16
float32 features, 32 batches, each a linear-regression SGD step.

Variants: the whole epoch in one converted function (the `for` over the data set is a
graph loop), a Python loop over the data set calling a converted step per batch (as
samples/mlp_classifier.py does), the same loop eagerly, and numpy (a permutation and
slices, the step written out). A second workload only iterates (sum of each batch).
A third iterates rows of 256 float32 pulled element by element (through a `filter` that
keeps every row) through `shuffle(B)` and `batch(64)`, at two buffer sizes: its buffer's
cost per element should not grow with B. A fourth is the shuffle order of a pass over N indices alone.
Reported (no target): what a pass over a data set costs next to numpy's slicing.
"""
import numpy as np

import autograph as ag
import runtime as rt
from harness import Report, main, medians
from runtime.ops import data_ops

N, FEATURES, BATCH, WIDE = 2048, 16, 64, 256


def arrays():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(N, FEATURES)).astype(np.float32)
    y = (x @ rng.normal(size=(FEATURES, 1))).astype(np.float32)
    return x, y


def step(w, xb, yb):
    with rt.GradientTape() as tape:
        loss = rt.reduce_mean(rt.square(rt.matmul(xb, w) - yb))
    w.assign_sub(0.01 * tape.gradient(loss, w))
    return loss


def epoch(data, w):
    loss = rt.constant(0.0)
    for xb, yb in data:
        loss = step(w, xb, yb)
    return loss


def total(data):
    s = rt.constant(0.0)
    for xb, yb in data:
        s += rt.reduce_sum(xb) + rt.reduce_sum(yb)
    return s


def pulled(buffer_size):
    """N rows of WIDE float32 through a filter that keeps them all (so they are pulled
    element by element), shuffled and batched."""
    x = np.random.default_rng(2).normal(size=(N, WIDE)).astype(np.float32)
    rows = rt.data.Dataset.from_tensor_slices((x, x[:, :1])).filter(lambda a, b: b[0] == b[0])
    return rows.shuffle(buffer_size, seed=1).batch(BATCH)


def measure(quick=False):
    x, y = arrays()
    data = rt.data.Dataset.from_tensor_slices((x, y)).shuffle(N, seed=1).batch(BATCH)
    w = rt.Variable(np.zeros([FEATURES, 1], np.float32))
    w_np = np.zeros([FEATURES, 1], np.float32)
    rng = np.random.default_rng(1)
    converted_epoch, converted_step = ag.convert(epoch), ag.convert(step)
    converted_total = ag.convert(total)

    def numpy_train():
        order = rng.permutation(N)
        for start in range(0, N, BATCH):
            rows = order[start:start + BATCH]
            xb, yb = x[rows], y[rows]
            grad = 2 * xb.T @ (xb @ w_np - yb) / len(rows)
            w_np[...] -= 0.01 * grad

    def numpy_total():
        order = rng.permutation(N)
        s = np.float32(0)
        for start in range(0, N, BATCH):
            rows = order[start:start + BATCH]
            s += x[rows].sum() + y[rows].sum()
        return s

    repeat = 5 if quick else 15
    train = Report(f"training epoch, {N // BATCH} batches of {BATCH}x{FEATURES}", "reported")
    train.values.update(medians({
        "one converted function": lambda: converted_epoch(data, w),
        "Python loop, converted step": lambda: [converted_step(w, xb, yb) for xb, yb in data],
        "eager": lambda: epoch(data, w),
        "numpy": numpy_train,
    }, repeat=repeat))
    iterate = Report(f"iteration only, {N // BATCH} batches", "reported")
    iterate.values.update(medians({
        "converted loop": lambda: converted_total(data),
        "eager loop": lambda: total(data),
        "numpy": numpy_total,
    }, repeat=repeat))
    pulled_rows = Report(f"filter -> shuffle(B) -> batch({BATCH}), iteration only, "
                         f"{N} rows of {WIDE}", "reported", baseline="B=256, converted loop")
    sets = {b: pulled(b) for b in (256, N)}
    pulled_rows.values.update(medians({
        f"B={b}, {kind}": (lambda fn=fn, d=d: fn(d))
        for b, d in sets.items()
        for kind, fn in (("converted loop", converted_total), ("eager loop", total))},
        repeat=max(3, repeat // 3)))
    order = Report(f"the shuffle order of a pass over {N} indices (one op, eager)", "reported",
                   baseline="numpy permutation")
    seed = rt.constant(7, rt.int64)
    order.values.update(medians({
        "dataset_shuffle_order": lambda: data_ops.shuffle_order(N, seed, N),
        "numpy permutation": lambda: rng.permutation(N),
    }, repeat=repeat))
    return [train, iterate, pulled_rows, order]


if __name__ == "__main__":
    main(measure)
