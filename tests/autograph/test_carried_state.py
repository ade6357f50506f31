"""State a tensor `if` or loop carries without the user naming it, in programs written as
users write them: immutable values rebuilt in a loop, nested lists of counters, variables
a loop or its `else` assigns, None before a loop, lists grown under a tensor `break`, a zip
of a Python list with a tensor, Python floats carried through a loop, a depth-first search
over a list used as a stack, attributes of the standard library's namespaces. Each
converted run (traced, and run op by op) must give the eager run's values and printed text
(see equivalence.py)."""
import argparse
import collections
import types

import numpy as np
import pytest
from equivalence import assert_equivalent, static

import autograph as ag
import runtime as rt

Config = collections.namedtuple("Config", "x step")


def namedtuple_replaced_in_a_loop(x, n):
    st = Config(x=x, step=0)
    i = 0
    while i < n:
        st = st._replace(x=st.x + 1, step=st.step + 1)
        i += 1
    print("config", st.x, st.step)
    return st


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_namedtuple_replaced_in_a_tensor_loop_is_rebuilt(n, tensors):
    assert_equivalent(namedtuple_replaced_in_a_loop, 1.5, n, tensors=tensors)


def confusion_matrix(labels, predictions, k):
    cm = [[0] * k for _ in range(k)]
    for y, p in zip(labels, predictions):
        for i in range(k):
            for j in range(k):
                if y == i and p == j:
                    cm[i][j] += 1
    print("confusion", cm)
    return cm


@pytest.mark.parametrize("labels, predictions", [
    ([0, 1, 2, 1], [0, 2, 2, 1]), ([1], [0]), ([2, 2, 2], [2, 2, 2])])
def test_a_nested_list_of_python_counters_in_a_tensor_loop(labels, predictions, tensors):
    assert_equivalent(confusion_matrix, np.array(labels, np.int32),
                      np.array(predictions, np.int32), static(3), tensors=tensors)


def is_prime(n):
    for d in range(2, n):
        if n % d == 0:
            ok = False
            break
    else:
        ok = True
    return ok


@pytest.mark.parametrize("n", [2, 3, 9, 13, 21])
def test_a_variable_assigned_by_a_break_or_the_loops_else(n, tensors):
    # Every path leaving the loop assigns `ok`: the `if` in the loop assigns it in one
    # branch only, which a graph loop carries as an optional value.
    assert_equivalent(is_prime, n, tensors=tensors)


def largest(v):
    best = None
    for x in v:
        if best is None or x > best:
            best = x
    print("largest", best)
    return best


@pytest.mark.parametrize("v", [[3.0, -1.0, 7.0, 2.0], [-5.0, -2.0, -9.0], [4.0]])
def test_none_before_a_loop_is_typed_by_its_first_assignment(v, tensors):
    assert_equivalent(largest, np.array(v, np.float32), tensors=tensors)


def test_none_after_a_loop_that_never_assigned_it_fails_where_it_is_read():
    f = ag.convert(largest, input_signature=[rt.TensorSpec([None], rt.float32)])
    assert f(rt.constant([1.0, 3.0])).numpy() == 3.0
    with pytest.raises(UnboundLocalError, match="'best' is None here"):
        f(rt.constant(np.zeros([0], np.float32)))


class Counter:
    def __init__(self):
        self.count = 0

    def tick(self):
        self.count += 1


def largest_positive(v, counter):
    best = None
    for x in v:
        if x > 0:
            counter.tick()
            if best is None or x > best:
                best = x
    print("largest positive", best, "of", counter.count)
    return best, counter.count


@pytest.mark.parametrize("v", [[3.0, -1.0, 7.0, 2.0], [-5.0, 2.0, -9.0]])
def test_none_before_a_loop_assigned_in_a_nested_if_with_a_counting_method(v, tensors):
    # `best` is assigned in the inner `if` of one branch only: the loop types it from that
    # assignment all the same, and carries the attribute tick() changes.
    assert_equivalent(largest_positive, np.array(v, np.float32), Counter(), tensors=tensors)


def collect_until_large(x):
    out = []
    for i in range(3):
        out.append(x * i)
        if x * i > 2.0:
            break
    print("collected", rt.stack(out))
    return rt.stack(out)


@pytest.mark.parametrize("x", [0.5, 1.5, 3.0])
def test_a_python_loop_appending_then_breaking_on_a_tensor(x, tensors):
    # How long the list grows is decided by the tensor: it becomes a tensor list.
    assert_equivalent(collect_until_large, x, tensors=tensors)


def labelled_sum(v):
    total = 0.0
    for name, x in zip(["a", "b"], v):
        print(name, x)
        total += x
    return total


@pytest.mark.parametrize("v", [[1.0, 2.0, 3.0], [4.0], [0.5, -0.5]])
def test_a_zip_of_a_python_list_and_a_tensor_unrolls(v, tensors):
    assert_equivalent(labelled_sum, np.array(v, np.float32), tensors=tensors)


def decayed_rate(n):
    lr = 0.1
    for _ in range(n):
        lr *= 0.9
    print("lr", lr)
    return lr


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_python_float_carried_through_a_tensor_loop_keeps_its_precision(n, tensors):
    assert_equivalent(decayed_rate, n, tensors=tensors)


def reachable_count(adj, start):
    n = adj.shape[0]
    visited = rt.zeros([n], rt.int32)
    stack = [start]
    count = 0
    while stack:
        node = stack.pop()
        if visited[node] == 0:
            visited = visited + rt.one_hot(node, n, dtype=rt.int32)
            count += 1
            for j in range(n):
                if adj[node, j] > 0:
                    stack.append(j)
    print("reached", count)
    return count


GRAPHS = {
    "path": [[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 0]],
    "cycle": [[0, 1, 0], [0, 0, 1], [1, 0, 0]],
    "island": [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]],
}


@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("start", [0, 2])
def test_a_depth_first_search_over_a_list_used_as_a_stack(graph, start, tensors):
    adj = rt.constant(np.array(GRAPHS[graph], np.int32))
    assert_equivalent(reachable_count, adj, static(start), tensors=tensors)


def rate_used_by_tensors(n):
    lr = 0.5
    for _ in range(n):
        lr *= 0.9
    return rt.exp(lr), lr * rt.constant(2.0), lr


@pytest.mark.parametrize("n", [0, 2])
def test_a_python_float_from_a_tensor_loop_meets_tensors_as_eagerly(n):
    # Carried at float64, it still enters an op as a Python float does: float32 for `exp`,
    # the dtype of the float32 tensor it multiplies; alone it prints as Python's float.
    expected = rate_used_by_tensors(rt.constant(n))
    got = ag.convert(rate_used_by_tensors)(rt.constant(n))
    assert [t.dtype for t in got[:2]] == [t.dtype for t in expected[:2]] == [rt.float32] * 2
    np.testing.assert_allclose([t.numpy() for t in got[:2]],
                               [t.numpy() for t in expected[:2]], rtol=1e-6)
    assert str(got[2].numpy()) == str(expected[2])


def namespace_totals(v, make):
    s = make(total=0.0, steps=0, last=None)
    for x in v:
        if x > 0:
            s.total += x
            s.last = x
        s.steps += 1
    print("namespace", s.total, s.steps)
    return s.total, s.steps


@pytest.mark.parametrize("make", [types.SimpleNamespace, argparse.Namespace],
                         ids=["SimpleNamespace", "argparse.Namespace"])
@pytest.mark.parametrize("v", [[1.0, -2.0, 3.0], [-1.0]])
def test_the_standard_librarys_attribute_namespaces_carry_state(v, make, tensors):
    assert_equivalent(namespace_totals, np.array(v, np.float32), static(make), tensors=tensors)
