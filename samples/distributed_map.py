"""Batch inference on a Dask cluster: a trained classifier (the perceptron of
mlp_classifier.py, trained in this process) labels 8 partitions of 20,000 points each, one
task per partition
(`rt.distribute.map`). The converted function is traced once, sent to each worker once as
a saved graph (no Python code, no pickle), with the model's weights; results come back
in order, equal to running it in this process.

    python samples/distributed_map.py [--dump]

Without a client, it uses `rt.distribute.default_client()`: a LocalCluster of this
machine's cores (a script that starts one needs the `if __name__ == "__main__":` guard).
"""
import os
import sys

import numpy as np

import autograph as ag
import runtime as rt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import distributed_training  # noqa: E402 - the classifier, trained in one process
import mlp_classifier  # noqa: E402 - the classifier's data

PARTITIONS = 8
ROWS = 20_000


def classifier(model):
    @ag.convert
    def classify(x):
        """Labels, and how many points the model is sure about (p > 0.9)."""
        probabilities = rt.nn.softmax(model(x))
        sure = 0
        if rt.reduce_max(probabilities) > 0.9:
            sure = rt.reduce_sum(rt.cast(rt.reduce_max(probabilities, axis=1) > 0.9, rt.int32))
        return rt.argmax(probabilities, axis=1), sure
    return classify


def main(client=None):
    """The (labels, sure) of each partition."""
    classify = classifier(distributed_training.train_single_process(epochs=40))
    partitions = [mlp_classifier.make_data(ROWS, seed=100 + i) for i in range(PARTITIONS)]
    results = rt.distribute.map(classify, [x for x, _ in partitions], client=client)
    right = sum(int(np.sum(labels.numpy() == truth))
                for (labels, _), (_, truth) in zip(results, partitions))
    sure = sum(int(s) for _, s in results)
    print(f"{PARTITIONS} partitions of {ROWS} points: accuracy {right / (PARTITIONS * ROWS):.3f}, "
          f"{sure} labelled with p > 0.9")
    same = all(np.array_equal(labels.numpy(), classify(x)[0].numpy()) and int(s) == int(
        classify(x)[1]) for (labels, s), (x, _) in zip(results, partitions))
    print(f"same as one process: {same}")
    return results


if __name__ == "__main__":
    if "--dump" in sys.argv[1:]:
        print(ag.to_code(classifier(mlp_classifier.MLP())))
    else:
        main()
