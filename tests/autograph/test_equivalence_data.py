"""Equivalence of converted code over data structures: lists grown in Python and tensor
loops, pop, namedtuples and dicts as arguments and results, dict items and object
attributes modified in tensor control flow."""
import collections

import numpy as np
import pytest
from equivalence import assert_equivalent, cases, static

import runtime as rt

Point = collections.namedtuple("Point", ["x", "y"])


# -- lists -------------------------------------------------------------------------------

def list_creation(x):
    values = [x, x + 1, x * 2]
    empty = []
    return values, empty, len(values)


def append_in_tensor_loop_then_stack(n):
    squares = []
    i = 0
    while i < n:
        squares.append(i * i)
        i += 1
    return rt.stack(squares)


def append_in_tensor_for_then_convert(n):
    values = []
    for i in range(n):
        values.append(i * 10)
    return rt.convert_to_tensor(values)


def append_to_list_with_elements(n):
    values = [100]
    for i in range(n):
        values.append(i)
    return rt.stack(values)


def append_in_python_loop(x):
    values = []
    for k in range(3):
        values.append(x + k)
    return values, rt.stack(values)


def append_in_tensor_branch(x):
    values = [x]
    if x > 0:
        values.append(x * 2)
    else:
        values.append(-x)
    return rt.stack(values)


def pop_from_list(x):
    values = [x, x + 1, x + 2]
    last = values.pop()
    first = values.pop(0)
    values.pop()
    return last, first, values


def pop_in_tensor_loop(n):
    values = [1, 2, 3, 4, 5, 6]
    i = 0
    total = 0
    while i < n:
        last = values.pop()
        total += last
        i += 1
    return total, rt.stack(values)


def pop_inside_expression_in_tensor_loop(n):
    values = [1, 2, 3, 4, 5, 6]
    i = 0
    total = 0
    while i < n:
        total += values.pop()
        i += 1
    return total


@pytest.mark.parametrize("f, tensors", cases(
    list_creation, append_in_python_loop, pop_from_list,
    append_in_tensor_branch))
@pytest.mark.parametrize("x", [-2, 3])
def test_lists(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(
    append_in_tensor_loop_then_stack, append_in_tensor_for_then_convert,
    append_to_list_with_elements, pop_in_tensor_loop, pop_inside_expression_in_tensor_loop))
@pytest.mark.parametrize("n", [1, 4])
def test_lists_in_tensor_loops(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


def append_vectors(n):
    rows = []
    for i in range(n):
        rows.append(rt.fill([3], i))
    return rt.stack(rows)


@pytest.mark.parametrize("n", [1, 3])
def test_append_vectors_in_tensor_loop(n, tensors):
    assert_equivalent(append_vectors, n, tensors=tensors)


# -- namedtuples -------------------------------------------------------------------------

def namedtuple_argument(p):
    if p.x > p.y:
        return Point(p.y, p.x)
    return p


def namedtuple_in_loop(p, n):
    i = 0
    while i < n:
        p = Point(p.x + p.y, p.x)
        i += 1
    return p


def namedtuple_replace(p):
    q = p._replace(x=p.x * 10)
    return q, q.x + q.y


@pytest.mark.parametrize("f, tensors", cases(namedtuple_argument, namedtuple_replace))
@pytest.mark.parametrize("p", [Point(1, 2), Point(5, -1)])
def test_namedtuples(f, p, tensors):
    assert_equivalent(f, p, tensors=tensors)


@pytest.mark.parametrize("n", [0, 5])
def test_namedtuple_loop_state(n, tensors):
    assert_equivalent(namedtuple_in_loop, Point(1, 1), n, tensors=tensors)


# -- dicts -------------------------------------------------------------------------------

def dict_argument_and_result(d):
    out = {"sum": d["a"] + d["b"]}
    if d["a"] > d["b"]:
        out["max"] = d["a"]
    else:
        out["max"] = d["b"]
    return out


def dict_item_modified_in_loop(n):
    d = {"count": 0, "total": 0}
    i = 0
    while i < n:
        d["count"] += 1
        d["total"] = d["total"] + i
        i += 1
    return d


def dict_item_modified_in_tensor_if(d):
    if d["a"] > 0:
        d["a"] = d["a"] * 2
    else:
        d["b"] = -d["b"]
    return d


def nested_structures(d):
    pair = (d["a"], [d["b"], Point(d["a"], d["b"])])
    return {"pair": pair, "points": [Point(1, 2), Point(d["a"], 0)]}


@pytest.mark.parametrize("f, tensors", cases(
    dict_item_modified_in_tensor_if, nested_structures,
    dict_argument_and_result))
@pytest.mark.parametrize("d", [{"a": 3, "b": 1}, {"a": -3, "b": 7}])
def test_dicts(f, d, tensors):
    assert_equivalent(f, d, tensors=tensors)


@pytest.mark.parametrize("n", [0, 4])
def test_dict_item_loop_state(n, tensors):
    assert_equivalent(dict_item_modified_in_loop, n, tensors=tensors)


def dict_of_python_values_in_tensor_loop(n, table):
    s = 0
    i = 0
    while i < n:
        s += table["step"]
        i += 1
    return s


@pytest.mark.parametrize("n", [0, 3])
def test_dict_of_python_values_read_in_tensor_loop(n, tensors):
    assert_equivalent(dict_of_python_values_in_tensor_loop, n, static({"step": 5}),
                      tensors=tensors)


# -- objects passed in ------------------------------------------------------------------

class Box:
    def __init__(self, value):
        self.value = value


def attribute_of_argument_in_tensor_loop(box, n):
    i = 0
    while i < n:
        box.value = box.value * 2
        i += 1
    return box.value


@pytest.mark.parametrize("n", [0, 3])
def test_attribute_of_argument_in_tensor_loop(n, tensors):
    assert_equivalent(attribute_of_argument_in_tensor_loop, static(Box(1)), n, tensors=tensors)


def attribute_created_in_tensor_if(x):
    box = Box(0)
    if x > 0:
        box.extra = x
    else:
        box.extra = -x
    return box.extra + box.value


@pytest.mark.parametrize("x", [-3, 3])
def test_attribute_created_in_tensor_if(x, tensors):
    assert_equivalent(attribute_created_in_tensor_if, x, tensors=tensors)


def vector_arguments(v, w):
    if rt.reduce_sum(v) > rt.reduce_sum(w):
        return v - w
    return w - v


def test_vector_arguments():
    assert_equivalent(vector_arguments, np.array([1.0, 2.0]), np.array([0.5, 0.25]))
    assert_equivalent(vector_arguments, np.array([1, 2]), np.array([5, 6]))
