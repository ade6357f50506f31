"""Every differentiable op's gradient against central finite differences (float64), on
small random shapes with broadcasting, eagerly (tape) and in graphs (rt.gradients),
with static and with unknown dimensions. See grad_testing.check_gradients.
"""
import numpy as np
import pytest

import runtime as rt
from grad_testing import MODES, grad_case
from op_testing import sample
from runtime.ops import registry

_rng = np.random.default_rng(7)


def x(shape, kind="any", seed=0):
    """Float64 sample values; `kind` as op_testing.sample (nonzero: away from kinks)."""
    return sample(shape, np.float64, kind, seed)


def random_shape(max_rank=3):
    return tuple(int(d) for d in _rng.integers(1, 4, size=_rng.integers(0, max_rank + 1)))


def broadcast_pairs():
    """(shape, shape) pairs: equal, a row against a matrix, size-1 dims, a scalar, random."""
    a = random_shape()
    return [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), (a, a[1:])]


UNARY = {   # op: kind of sample values (nonzero keeps kinks and poles away)
    "negative": "any", "abs": "nonzero", "sign": "nonzero", "sqrt": "positive",
    "rsqrt": "positive", "square": "any", "exp": "any", "log": "positive",
    "log1p": "positive", "sin": "any", "cos": "any", "tanh": "any", "sigmoid": "any",
    "relu": "nonzero", "softplus": "any", "floor": "nonzero", "ceil": "nonzero",
    "round": "nonzero", "reciprocal": "nonzero",
}

BINARY = {  # op: (kind of x, kind of y); "any" puts a 0 first, so max/min use "nonzero" (no tie)
    "add": ("any", "any"), "subtract": ("any", "any"), "multiply": ("any", "any"),
    "divide": ("any", "nonzero"), "maximum": ("nonzero", "nonzero"),
    "minimum": ("nonzero", "nonzero"),
    "squared_difference": ("any", "any"), "pow": ("positive", "any"),
    "mod": ("nonzero", "nonzero"),
}

ELEMENTWISE = [
    grad_case(f"{op}-{shape}", getattr(rt, op), [x(shape, kind)])
    for op, kind in UNARY.items() for shape in [random_shape()]
] + [
    grad_case("tan", rt.tan, [x((2, 3)) * 0.4]),
] + [
    grad_case(f"{op}-{sa}-{sb}", getattr(rt, op), [x(sa, ka, 1), x(sb, kb, 2)])
    for op, (ka, kb) in BINARY.items() for sa, sb in broadcast_pairs()
] + [
    grad_case("clip_by_value", lambda t, lo, hi: rt.clip_by_value(t, lo, hi),
              [x((2, 3), seed=3), np.array(-1.05), np.array([0.5, 1.1, 2.2])]),
    grad_case("add_n", lambda a, b, c: rt.add_n([a, b, c]),
              [x((2, 3)), x((3,), seed=1), x((), seed=2)]),
]

REDUCTIONS = [
    grad_case(f"{op}-axis{axis}-keepdims{keep}",
              lambda t, op=op, axis=axis, keep=keep: getattr(rt, op)(t, axis, keepdims=keep),
              [x((2, 3, 2), "nonzero", seed=4)])
    for op in ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"]
    for axis, keep in [(None, False), (0, False), (-1, True), ((0, 2), False)]
] + [
    grad_case("reduce_prod-with-zeros", lambda t: rt.reduce_prod(t, 1),
              [np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 1.5], [1.0, 2.0, -0.5]])]),
    grad_case("reduce_max-ties", lambda t: rt.reduce_max(t, 1),
              [np.array([[1.0, 2.0, 2.0], [0.5, -1.0, 0.25]])]),
]

MATMUL = [
    grad_case("matmul", rt.matmul, [x((2, 3)), x((3, 4), seed=1)]),
    grad_case("matmul-batch-broadcast", rt.matmul, [x((2, 2, 3)), x((1, 3, 2), seed=1)]),
    grad_case("matmul-batch-matrix", rt.matmul, [x((2, 2, 3)), x((3, 2), seed=1)]),
    grad_case("matmul-vector-matrix", rt.matmul, [x((3,)), x((3, 2), seed=1)]),
    grad_case("matmul-matrix-vector", rt.matmul, [x((2, 3)), x((3,), seed=1)]),
    grad_case("matmul-vector-vector", rt.matmul, [x((3,)), x((3,), seed=1)]),
] + [
    grad_case(f"matmul-ta{ta}-tb{tb}",
              lambda a, b, ta=ta, tb=tb: rt.matmul(a, b, transpose_a=ta, transpose_b=tb),
              [x((3, 2) if ta else (2, 3)), x((4, 3) if tb else (3, 4), seed=1)])
    for ta, tb in [(True, False), (False, True), (True, True)]
]

ARRAYS = [
    grad_case("reshape", lambda t: rt.reshape(t, [3, 2]), [x((2, 3))]),
    grad_case("reshape-flat", lambda t: rt.reshape(t, [-1]), [x((2, 3))]),
    grad_case("transpose", lambda t: rt.transpose(t, [1, 2, 0]), [x((2, 3, 2))]),
    grad_case("transpose-reverse", rt.transpose, [x((2, 3))]),
    grad_case("expand_dims", lambda t: rt.expand_dims(t, 1), [x((2, 3))]),
    grad_case("squeeze", rt.squeeze, [x((2, 1, 3))], dynamic=False),
    grad_case("squeeze-axis", lambda t: rt.squeeze(t, [1]), [x((2, 1, 3))]),
    grad_case("concat-0", lambda a, b: rt.concat([a, b], 0), [x((1, 3)), x((2, 3), seed=1)]),
    grad_case("concat-1", lambda a, b, c: rt.concat([a, b, c], 1),
              [x((2, 1)), x((2, 3), seed=1), x((2, 2), seed=2)]),
    grad_case("stack", lambda a, b: rt.stack([a, b], axis=1), [x((2, 3)), x((2, 3), seed=1)]),
    grad_case("unstack", lambda t: rt.unstack(t, num=3, axis=1), [x((2, 3))]),
    grad_case("unstack-one-used", lambda t: rt.unstack(t, num=3)[1] * 2.0, [x((3, 2))]),
    grad_case("split", lambda t: rt.split(t, [1, 2], axis=1), [x((2, 3))]),
    grad_case("tile", lambda t: rt.tile(t, [2, 1, 3]), [x((2, 3, 1))]),
    grad_case("gather", lambda t: rt.gather(t, [2, 0, 2]), [x((3, 2))]),
    grad_case("gather-axis1", lambda t: rt.gather(t, [[1, 1], [0, 2]], axis=1), [x((2, 3))]),
    grad_case("gather-batch_dims", lambda t: rt.gather(t, [[1, 1, 0], [2, 0, 2]], axis=2,
                                                        batch_dims=1), [x((2, 4, 3))]),
    grad_case("where", lambda c, a, b: rt.where(c, a, b),
              [np.array([[True, False, True], [False, False, True]]), x((2, 3)), x((3,), seed=1)]),
    grad_case("broadcast_to", lambda t: rt.broadcast_to(t, [2, 3]), [x((3,))]),
    grad_case("identity", rt.identity, [x((2, 3))]),
    grad_case("getitem-slices", lambda t: t[1:, ::2], [x((3, 4))]),
    grad_case("getitem-int-newaxis", lambda t: t[None, ..., 0], [x((2, 3))]),
    grad_case("getitem-repeated-rows", lambda t: t[[0, 0, 2]], [x((3, 2))]),
    grad_case("getitem-tensor-index", lambda t, i: t[i], [x((3, 2)), np.array(2)]),
    grad_case("sum_to", lambda g: registry.apply(registry.get("sum_to"),
                                                 [g, rt.constant([2, 1])], {}), [x((3, 2, 4))]),
]

LABELS = np.array([[0.2, 0.3, 0.5], [0.9, 0.05, 0.05]])
NN = [
    grad_case("softmax", rt.nn.softmax, [x((2, 3))]),
    grad_case("softmax-axis0", lambda t: rt.nn.softmax(t, axis=0), [x((2, 3))]),
    grad_case("log_softmax", rt.nn.log_softmax, [x((2, 3))]),
    grad_case("softmax_cross_entropy", lambda labels, logits:
              rt.nn.softmax_cross_entropy_with_logits(labels, logits), [LABELS, x((2, 3))]),
    grad_case("softmax_cross_entropy-axis0", lambda labels, logits:
              rt.nn.softmax_cross_entropy_with_logits(labels, logits, axis=0),
              [LABELS.T, x((3, 2))]),
    grad_case("sparse_softmax_cross_entropy", lambda labels, logits:
              rt.nn.sparse_softmax_cross_entropy_with_logits(labels, logits),
              [np.array([2, 0]), x((2, 3))]),
    grad_case("sigmoid_cross_entropy", lambda labels, logits:
              rt.nn.sigmoid_cross_entropy_with_logits(labels, logits),
              [np.array([[0.0, 1.0, 0.3], [1.0, 0.5, 0.0]]), x((2, 3))]),
]

CASES = ELEMENTWISE + REDUCTIONS + MATMUL + ARRAYS + NN


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", CASES)
def test_gradient_matches_finite_differences(check, mode):
    check(mode)


# Ops whose outputs carry a gradient (a float output computed from float inputs); each
# must have a gradient function, and the table above must exercise it.
DIFFERENTIABLE = """negative abs sign sqrt rsqrt square exp log log1p sin cos tan tanh sigmoid
    relu softplus floor ceil round reciprocal add subtract multiply divide mod pow maximum
    minimum squared_difference clip_by_value add_n reduce_sum reduce_mean reduce_max
    reduce_min reduce_prod matmul reshape transpose expand_dims squeeze concat stack unstack
    split tile gather where broadcast_to identity getitem sum_to softmax log_softmax
    softmax_cross_entropy_with_logits sparse_softmax_cross_entropy_with_logits
    sigmoid_cross_entropy_with_logits""".split()


def test_every_differentiable_op_has_a_gradient_and_a_row():
    missing = [name for name in DIFFERENTIABLE if registry.get(name).grad is None]
    assert not missing
    covered = set()
    for param in CASES:
        fn, arrays = param.values[0].args[0], param.values[0].args[1]
        concrete = rt.function(fn).get_concrete_function(*arrays)
        covered.update(op.type for op in concrete.graph.ops)
    assert set(DIFFERENTIABLE) - covered == set()


@pytest.mark.parametrize("fn", [
    lambda t: rt.floordiv(t, 2.0), rt.stop_gradient, rt.zeros_like,
    lambda t: rt.cast(rt.argmax(t, 0), rt.float64), lambda t: rt.cast(t > 0, rt.float64),
], ids=["floordiv", "stop_gradient", "zeros_like", "argmax", "comparison"])
def test_no_gradient_flows(fn):
    t = rt.constant([1.5, -2.0])
    with rt.GradientTape() as tape:
        tape.watch(t)
        y = rt.reduce_sum(fn(t))
    assert tape.gradient(y, t) is None


def test_cast_gradient_is_cast_back():
    t = rt.constant([1.5, -2.0], rt.float64)
    with rt.GradientTape() as tape:
        tape.watch(t)
        y = rt.reduce_sum(rt.cast(t, rt.float32) * 3.0)
    g = tape.gradient(y, t)
    assert g.dtype == rt.float64 and g.numpy().tolist() == [3.0, 3.0]


def test_a_gradient_has_its_inputs_dtype_under_promotion():
    a, b = rt.constant([1.0, 2.0], rt.float32), rt.constant([3.0, 4.0], rt.float64)
    with rt.GradientTape() as tape:
        tape.watch([a, b])
        y = rt.reduce_sum(a * b)
    ga, gb = tape.gradient(y, [a, b])
    assert (ga.dtype, gb.dtype) == (rt.float32, rt.float64)


def test_integer_inputs_get_no_gradient():
    a, b = rt.constant([1.0, 2.0]), rt.constant([3, 4])
    with rt.GradientTape() as tape:
        tape.watch([a, b])
        y = rt.reduce_sum(rt.gather(a, b - 3) * 2.0)
    ga, gb = tape.gradient(y, [a, b])
    assert ga.numpy().tolist() == [2.0, 2.0] and gb is None


_NO_GRADIENT = registry.register(
    "test_op_without_gradient", lambda x: x * 2, lambda inputs: [(inputs[0].shape,
                                                                   inputs[0].dtype)])


def test_missing_gradient_is_an_error():
    t = rt.constant([1.0, 2.0])
    with rt.GradientTape() as tape:
        tape.watch(t)
        y = registry.apply(_NO_GRADIENT, [t], {})
    with pytest.raises(LookupError, match="test_op_without_gradient"):
        tape.gradient(y, t)


def test_py_function_is_differentiable_once():
    t = rt.constant([1.0, 2.0])
    with rt.GradientTape() as tape:
        tape.watch(t)
        y = rt.py_function(lambda v: v * v * 3.0, [t], rt.float32)
    np.testing.assert_allclose(tape.gradient(y, t).numpy(), [6.0, 12.0])
