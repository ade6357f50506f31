"""Data-parallel training on a Dask cluster: the two-layer perceptron of mlp_classifier.py,
each batch of 40 points split in two shards whose gradients two workers compute
(`rt.distribute.DaskStrategy`); the driver averages them and applies Adam. The same model
is then trained in this process alone, from the same initial weights on the same batches:
both reach the same accuracy (the gradients of the two shards, weighted by their sizes,
are the full batch's).

    python samples/distributed_training.py [--dump]

Without a client, it uses `rt.distribute.default_client()`: a LocalCluster of this
machine's cores (a script that starts one needs the `if __name__ == "__main__":` guard).
"""
import os
import sys

import numpy as np

import autograph as ag
import runtime as rt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlp_classifier  # noqa: E402 - the classifier, its data and its training step

SHARDS = 2


def new_model():
    rt.random.set_seed(0)                   # the layers' initial weights, as in mlp_classifier
    model = mlp_classifier.MLP()
    model(np.zeros((1, 2), np.float32))     # creates the variables (the strategy reads them)
    return model


def batches():
    x, labels = mlp_classifier.make_data()
    return rt.data.Dataset.from_tensor_slices((x, labels)).shuffle(400, seed=0).batch(40)


def train_data_parallel(strategy, epochs):
    model, optimizer = new_model(), rt.optimizers.Adam(0.05)

    @ag.convert
    def loss_fn(x, labels):
        logits = model(x)
        return rt.reduce_mean(rt.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))

    for epoch in range(1, epochs + 1):
        losses = []
        for bx, by in batches():
            shards = [(x, y) for x, y in zip(np.array_split(bx.numpy(), SHARDS),
                                             np.array_split(by.numpy(), SHARDS))]
            loss, grads = strategy.value_and_gradients(loss_fn, model.variables, shards)
            optimizer.apply_gradients(zip(grads, model.variables))
            losses.append(float(loss))
        if epoch % 10 == 0 or epoch == epochs:
            print(f"epoch {epoch:2d}: loss {np.mean(losses):.4f}")
    return model


def train_single_process(epochs):
    model, optimizer = new_model(), rt.optimizers.Adam(0.05)
    step = ag.convert(mlp_classifier.train_step.python_function)   # its own traces
    for _ in range(epochs):
        for bx, by in batches():
            step(model, optimizer, bx, by)
    return model


def main(client=None, epochs=40):
    """(data-parallel accuracy, single-process accuracy) on the training points."""
    x, labels = mlp_classifier.make_data()
    strategy = rt.distribute.DaskStrategy(client)
    distributed = mlp_classifier.accuracy(train_data_parallel(strategy, epochs), x, labels)
    single = mlp_classifier.accuracy(train_single_process(epochs), x, labels)
    print(f"training accuracy: data-parallel {distributed:.3f}, one process {single:.3f}")
    return distributed, single


if __name__ == "__main__":
    if "--dump" in sys.argv[1:]:
        print(ag.to_code(mlp_classifier.train_step))
    else:
        main()
