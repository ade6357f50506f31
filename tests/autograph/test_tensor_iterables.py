"""zip/enumerate/range of graph tensors outside `for` statements (comprehensions,
generator expressions, reversed), compared with the same Python run on numpy values."""
import numpy as np
import pytest

import autograph as ag
import runtime as rt


def dot_by_generator(x, w):
    return sum(a * b for a, b in zip(x, w))


def powers_by_comprehension(x):
    return rt.stack([v ** k for k, v in enumerate(x)])


def countdown(n):
    out = []
    for k in reversed(range(n)):
        out.append(k)
    return rt.stack(out) if out else rt.zeros([0], rt.int32)


def odd_countdown(n):
    out = []
    for k in reversed(range(1, n, 2)):
        out.append(k)
    return rt.stack(out) if out else rt.zeros([0], rt.int32)


def test_zip_and_enumerate_of_static_length_tensors_iterate_in_comprehensions():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    assert ag.convert(dot_by_generator)(rt.constant(x), rt.constant(x)).numpy() == 14.0
    np.testing.assert_allclose(ag.convert(powers_by_comprehension)(rt.constant(x)).numpy(),
                               [1.0, 2.0, 9.0])


@pytest.mark.parametrize("f, n", [(countdown, 3), (countdown, 1), (odd_countdown, 8),
                                  (odd_countdown, 2)])
def test_reversed_range_of_a_tensor_bound(f, n):
    expected = list(reversed(range(n))) if f is countdown else list(reversed(range(1, n, 2)))
    assert ag.convert(f)(rt.constant(n)).numpy().tolist() == expected


def zip_of_unknown_length(x):
    return [a for a, in zip(x)]


def test_zip_of_tensors_of_unknown_length_in_a_comprehension_explains_itself():
    f = ag.convert(zip_of_unknown_length, input_signature=[rt.TensorSpec([None], rt.float32)]) \
        if "input_signature" in ag.convert.__code__.co_varnames else None
    if f is None:
        pytest.skip("convert takes no input_signature")
    with pytest.raises(TypeError, match="only a `for` statement"):
        f(rt.constant([1.0]))
