"""rt.nn ops against numpy (eagerly and traced), and rt.random's seed semantics.

Random ops follow TensorFlow: a global seed (rt.random.set_seed) and an op seed fix
the sequence an op draws. Eagerly, calls with the same op seed continue one sequence;
a graph op owns its generator, so each call of a function draws new numbers, and a
program that sets the same seeds draws the same numbers on every run.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import runtime as rt
from op_testing import MODES, NN_OPS, case, named_rows, run, sample

F16, F32, F64, I32, I64 = np.float16, np.float32, np.float64, np.int32, np.int64
SPEC = rt.TensorSpec


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def np_sigmoid_xent(z, x):
    p = 1 / (1 + np.exp(-x.astype(F64)))
    return (-(z * np.log(p) + (1 - z) * np.log(1 - p))).astype(x.dtype)


LABELS = np_softmax(sample((2, 3), seed=5))
BIG = np.array([[1000., 0., -1000.], [-5., 5., 0.]], F32)

NN_CASES = [
    case("softmax", rt.nn.softmax, [sample((2, 3))], np_softmax),
    case("softmax-axis0", lambda x: rt.nn.softmax(x, axis=0), [sample((2, 3))],
         lambda x: np_softmax(x, 0)),
    case("softmax-3d-axis1", lambda x: rt.nn.softmax(x, 1), [sample((2, 3, 2), F64)],
         lambda x: np_softmax(x, 1)),
    case("softmax-f16", rt.nn.softmax, [sample((4,), F16)], np_softmax),
    case("softmax-large-logits", rt.nn.softmax, [BIG], np_softmax),
    case("log_softmax", rt.nn.log_softmax, [sample((2, 3))], lambda x: np.log(np_softmax(x))),
    case("log_softmax-axis0", lambda x: rt.nn.log_softmax(x, 0), [sample((2, 3), F64)],
         lambda x: np.log(np_softmax(x, 0))),
    case("log_softmax-large-logits", rt.nn.log_softmax, [BIG[:1]],
         lambda x: np.array([[0., -1000., -2000.]], F32)),
    case("softmax_cross_entropy_with_logits",
         lambda z, x: rt.nn.softmax_cross_entropy_with_logits(labels=z, logits=x),
         [LABELS, sample((2, 3))], lambda z, x: -np.sum(z * np.log(np_softmax(x)), -1)),
    case("softmax_cross_entropy_with_logits-axis0",
         lambda z, x: rt.nn.softmax_cross_entropy_with_logits(z, x, axis=0),
         [LABELS.astype(F64), sample((2, 3), F64)],
         lambda z, x: -np.sum(z * np.log(np_softmax(x, 0)), 0)),
    case("softmax_cross_entropy_with_logits-python-labels",
         lambda x: rt.nn.softmax_cross_entropy_with_logits([[0., 1., 0.]], x),
         [sample((1, 3))], lambda x: -np.log(np_softmax(x))[:, 1]),
    case("sparse_softmax_cross_entropy_with_logits",
         lambda z, x: rt.nn.sparse_softmax_cross_entropy_with_logits(labels=z, logits=x),
         [np.array([2, 0], I32), sample((2, 3))],
         lambda z, x: -np.log(np_softmax(x))[np.arange(2), z]),
    case("sparse_softmax_cross_entropy_with_logits-int64-3d",
         rt.nn.sparse_softmax_cross_entropy_with_logits,
         [np.array([[2, 0], [1, 1]], I64), sample((2, 2, 3), F64)],
         lambda z, x: -np.take_along_axis(np.log(np_softmax(x)), z[..., None], -1)[..., 0]),
    case("sigmoid_cross_entropy_with_logits",
         lambda z, x: rt.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
         [sample((2, 3), kind="positive") / 3, sample((2, 3))], np_sigmoid_xent),
    case("sigmoid_cross_entropy_with_logits-f64", rt.nn.sigmoid_cross_entropy_with_logits,
         [np.array([0., 1., .5]), np.array([-2., 3., 0.])], np_sigmoid_xent),
    case("sigmoid_cross_entropy_with_logits-python-labels",
         lambda x: rt.nn.sigmoid_cross_entropy_with_logits([1, 0], x),
         [np.array([40., -40.], F32)], lambda x: np.array([0., 0.], F32)),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", NN_CASES)
def test_nn_ops(check, mode):
    check(mode)


NN_UNKNOWN_DIM_CASES = [
    case("softmax-[None,3]", rt.nn.softmax, [sample((2, 3))], np_softmax, inferred=[None, 3],
         signature=[SPEC([None, 3])]),
    case("log_softmax-unknown-rank", rt.nn.log_softmax, [sample((2, 3))],
         lambda x: np.log(np_softmax(x)), inferred=None, signature=[SPEC(None)]),
    case("softmax_cross_entropy_with_logits-[None,3]",
         rt.nn.softmax_cross_entropy_with_logits, [LABELS, sample((2, 3))],
         lambda z, x: -np.sum(z * np.log(np_softmax(x)), -1), inferred=[None],
         signature=[SPEC([None, 3]), SPEC([None, 3])]),
    case("sparse_softmax_cross_entropy_with_logits-[None]",
         rt.nn.sparse_softmax_cross_entropy_with_logits,
         [np.array([2, 0], I32), sample((2, 3))],
         lambda z, x: -np.log(np_softmax(x))[np.arange(2), z], inferred=[None],
         signature=[SPEC([None], rt.int32), SPEC([None, 3])]),
    case("sigmoid_cross_entropy_with_logits-[None,3]",
         rt.nn.sigmoid_cross_entropy_with_logits, [LABELS, sample((2, 3))], np_sigmoid_xent,
         inferred=[2, 3], signature=[SPEC([2, None]), SPEC([None, 3])]),
]


@pytest.mark.parametrize("check", NN_UNKNOWN_DIM_CASES)
def test_nn_unknown_dims_while_tracing(check):
    check("graph")


NN_ERRORS = [   # (what, fn, inputs, error, words in the message)
    ("softmax-int", rt.nn.softmax, [np.array([1, 2], I32)], TypeError, ["softmax", "int32"]),
    ("log_softmax-int", rt.nn.log_softmax, [np.array([1, 2], I32)], TypeError, ["int32"]),
    ("xent-shapes", rt.nn.softmax_cross_entropy_with_logits, [LABELS, sample((2, 4))],
     ValueError, ["(2, 3)", "(2, 4)"]),
    ("xent-int-logits", rt.nn.softmax_cross_entropy_with_logits,
     [np.eye(2, dtype=I32), np.eye(2, dtype=I32)], TypeError, ["int32"]),
    ("sparse-float-labels", rt.nn.sparse_softmax_cross_entropy_with_logits,
     [np.array([1., 0.], F32), sample((2, 3))], TypeError, ["labels", "float32"]),
    ("sparse-shapes", rt.nn.sparse_softmax_cross_entropy_with_logits,
     [np.array([1, 0, 1], I32), sample((2, 3))], ValueError, ["(3,)", "(2, 3)"]),
    ("sigmoid-xent-shapes", rt.nn.sigmoid_cross_entropy_with_logits,
     [sample((3,)), sample((2, 4))], ValueError, ["(3,)", "(2, 4)"]),
    ("softmax-axis", lambda x: rt.nn.softmax(x, axis=2), [sample((2, 3))], ValueError,
     ["softmax", "axis 2", "(2, 3)"]),
    ("xent-axis", lambda z, x: rt.nn.softmax_cross_entropy_with_logits(z, x, axis=-3),
     [LABELS, sample((2, 3))], ValueError, ["softmax_cross_entropy", "axis -3", "(2, 3)"]),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn,arrays,error,words", named_rows(NN_ERRORS))
def test_nn_errors(fn, arrays, error, words, mode):
    with pytest.raises(error) as info:
        run(fn, arrays, mode)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


@pytest.mark.parametrize("mode", MODES)
def test_integer_labels_promote_to_the_logits_dtype(mode):
    labels, logits = np.array([1, 0], I32), sample((2,))
    (got,), _ = run(rt.nn.sigmoid_cross_entropy_with_logits, [labels, logits], mode)
    want = rt.nn.sigmoid_cross_entropy_with_logits(labels.astype(np.float32), logits)
    assert got.dtype == rt.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_sparse_labels_out_of_range_fail_when_run(mode):
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        run(rt.nn.sparse_softmax_cross_entropy_with_logits,
            [np.array([3, 0], I32), sample((2, 3))], mode)


def test_nn_namespace_reexports_activations():
    assert rt.nn.relu is rt.relu and rt.nn.sigmoid is rt.sigmoid
    assert rt.nn.tanh is rt.tanh and rt.nn.softplus is rt.softplus
    assert set(NN_OPS) <= set(vars(rt.nn))


# -- random ops: shapes, dtypes, ranges -------------------------------------------------------

@pytest.fixture(autouse=True)
def _no_global_seed():
    """Each test starts and ends without a global seed (set_seed is process-wide)."""
    rt.random.set_seed(None)
    yield
    rt.random.set_seed(None)


def _values(fn, mode, *arrays, signature=None):
    """[(value, static (shape, dtype) or None)] of `fn` run in `mode`."""
    results, static = run(fn, list(arrays), mode, signature)
    return [(r.numpy(), None if static is None else static[i]) for i, r in enumerate(results)]


RANDOM_DRAWS = [   # (what, fn, dtype, low, high): values in [low, high)
    ("uniform", lambda: rt.random.uniform([2, 3], seed=1), F32, 0, 1),
    ("uniform-range", lambda: rt.random.uniform((4,), -2.0, 3.0, seed=1), F32, -2, 3),
    ("uniform-f64", lambda: rt.random.uniform([3], dtype=rt.float64, seed=1), F64, 0, 1),
    ("uniform-f16", lambda: rt.random.uniform([3], dtype="float16", seed=1), F16, 0, 1),
    ("uniform-int", lambda: rt.random.uniform([5], 2, 6, dtype=rt.int32, seed=1), I32, 2, 6),
    ("uniform-int64", lambda: rt.random.uniform([5], -3, 0, dtype=rt.int64, seed=1), I64, -3, 0),
    ("normal", lambda: rt.random.normal([2, 2], seed=1), F32, -np.inf, np.inf),
    ("normal-f64", lambda: rt.random.normal([3], 5.0, 0.1, rt.float64, seed=1), F64, 4, 6),
    ("truncated_normal", lambda: rt.random.truncated_normal([6], seed=1), F32, -2, 2.0001),
    ("truncated_normal-mean-stddev",
     lambda: rt.random.truncated_normal([6], mean=10, stddev=0.5, seed=1), F32, 9, 11.0001),
    ("uniform-scalar", lambda: rt.random.uniform([], seed=1), F32, 0, 1),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn,dtype,low,high", named_rows(RANDOM_DRAWS))
def test_random_values_shapes_dtypes(fn, dtype, low, high, mode):
    (value, static), = _values(fn, mode)
    assert value.dtype == dtype and np.all(value >= low) and np.all(value < high), value
    if static is not None:
        assert static == (rt.TensorShape(value.shape), rt.as_dtype(dtype))


@pytest.mark.parametrize("op", [rt.random.uniform, rt.random.normal,
                                rt.random.truncated_normal])
@pytest.mark.parametrize("mode", MODES)
def test_random_shape_from_a_tensor(op, mode):
    (value, static), = _values(lambda s: op(s, seed=2), mode, np.array([2, 3], I32))
    assert value.shape == (2, 3)
    if static is not None:
        assert static[0] == rt.TensorShape([None, None])


def test_random_shape_from_a_traced_shape():
    f = rt.function(lambda x: rt.random.uniform(rt.shape(x), seed=3),
                    input_signature=[SPEC([None, 3])])
    assert f.get_concrete_function().graph.outputs[0].shape == rt.TensorShape([None, None])
    assert f(rt.zeros([4, 3])).shape == (4, 3)


def test_uniform_int_needs_maxval():
    with pytest.raises(ValueError, match="maxval"):
        rt.random.uniform([2], dtype=rt.int32)


def test_float16_uniform_stays_below_maxval():
    # Drawn as float32 values just below 1, many round up to 1.0 in float16.
    values = rt.random.uniform([20000], dtype=rt.float16, seed=4).numpy()
    assert values.max() < 1 and values.min() >= 0


# -- random ops: seeds ----------------------------------------------------------------------------

def _draws(n=3, **kwargs):
    return rt.random.uniform([n], **kwargs).numpy()


def test_eager_calls_with_one_op_seed_continue_one_sequence():
    rt.random.set_seed(1)
    a, b = _draws(seed=7), _draws(seed=7)
    c = _draws(seed=8)
    assert not np.array_equal(a, b) and not np.array_equal(a, c)
    rt.random.set_seed(1)
    np.testing.assert_array_equal(_draws(seed=7), a)
    np.testing.assert_array_equal(_draws(seed=7), b)
    np.testing.assert_array_equal(_draws(seed=8), c)


def test_global_seed_alone_makes_the_op_sequence_reproducible():
    rt.random.set_seed(5)
    first = [_draws(), rt.random.normal([2]).numpy(), _draws()]
    assert not np.array_equal(first[0], first[2])
    rt.random.set_seed(5)
    second = [_draws(), rt.random.normal([2]).numpy(), _draws()]
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def test_another_global_seed_gives_other_numbers():
    rt.random.set_seed(1)
    a = _draws(seed=7)
    rt.random.set_seed(2)
    assert not np.array_equal(a, _draws(seed=7))


def test_without_seeds_numbers_differ():
    assert not np.array_equal(_draws(8), _draws(8))


def _sampler():
    return rt.function(lambda: (rt.random.uniform([3], seed=1), rt.random.uniform([3], seed=1),
                                rt.random.normal([2])))


def test_graph_op_draws_new_numbers_on_each_call():
    rt.random.set_seed(3)
    f = _sampler()
    first, second = [[t.numpy() for t in f()] for _ in range(2)]
    for a, b in zip(first, second):
        assert not np.array_equal(a, b)
    # Two ops with the same op seed in one graph draw the same numbers (as in TensorFlow).
    np.testing.assert_array_equal(first[0], first[1])
    rt.random.set_seed(3)
    g = _sampler()
    for want in (first, second):
        for got, a in zip(g(), want):
            np.testing.assert_array_equal(got.numpy(), a)


def test_graph_and_eager_ops_with_the_same_seeds_agree():
    rt.random.set_seed(9)
    eager = _draws(seed=2)
    rt.random.set_seed(9)
    np.testing.assert_array_equal(rt.function(lambda: rt.random.uniform([3], seed=2))().numpy(),
                                  eager)


def test_ops_traced_again_for_the_same_call_sites_continue_their_sequences():
    """(A `while` test traced before its graph loop and in it: one call site.)"""
    from runtime.ops import random_ops

    def draws():
        return rt.random.uniform([2], seed=4), rt.random.uniform([2])

    def twice():
        with random_ops.recording_generators() as sites:
            first = draws()
        with random_ops.reusing_generators(sites):
            again = draws()
        return first + again + (rt.random.uniform([2], seed=4),)   # the last: its own

    rt.random.set_seed(6)
    eager = [_draws(2, seed=4), _draws(2, seed=4)]
    rt.random.set_seed(6)
    a0, b0, a1, b1, other = [t.numpy() for t in rt.function(twice)()]
    np.testing.assert_array_equal(a0, eager[0])
    np.testing.assert_array_equal(a1, eager[1])
    np.testing.assert_array_equal(other, eager[0])
    assert not np.array_equal(b0, b1)


PROGRAM = textwrap.dedent("""
    import runtime as rt
    rt.random.set_seed(1234)
    f = rt.function(lambda: rt.random.normal([3], seed=2))
    print(rt.random.uniform([3], seed=1).numpy().tolist(), f().numpy().tolist(),
          f().numpy().tolist(), rt.random.truncated_normal([2]).numpy().tolist())
""")


def test_same_seeds_give_the_same_numbers_in_every_run_of_a_program():
    runs = [subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                           check=True, env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout
            for seed in (1, 2)]
    assert runs[0] == runs[1] and runs[0].strip()


# -- random ops: statistics (fixed seeds) ---------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_random_statistics(mode):
    rt.random.set_seed(11)

    def draw():
        return (rt.random.uniform([10000], seed=1), rt.random.normal([10000], seed=2),
                rt.random.truncated_normal([10000], seed=3),
                rt.random.uniform([10000], 0, 4, dtype=rt.int32, seed=4),
                rt.random.normal([10000], mean=3.0, stddev=2.0, seed=5))
    (u, _), (n, _), (t, _), (k, _), (m, _) = _values(draw, mode)
    assert abs(u.mean() - 0.5) < 0.02 and abs(u.std() - np.sqrt(1 / 12)) < 0.02
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1) < 0.05
    assert abs(t.mean()) < 0.05 and abs(t.std() - 0.8796) < 0.03 and np.abs(t).max() <= 2
    assert set(np.unique(k)) == {0, 1, 2, 3} and abs(k.mean() - 1.5) < 0.05
    assert abs(m.mean() - 3) < 0.1 and abs(m.std() - 2) < 0.1
