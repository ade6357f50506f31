"""Array ops against numpy, eagerly and traced: reshaping, joining and splitting,
gather/one_hot/where, constructors, range, and `t[...]` indexing.

Every row of a table runs twice (eager, graph); in graph mode the shape and dtype
inferred while tracing must equal the result's (see op_testing.case).
"""
import numpy as np
import pytest

import runtime as rt
from op_testing import ARRAY_OPS, MODES, case, graph_op_types, named_rows, run, sample

F32, F64, I32, I64 = np.float32, np.float64, np.int32, np.int64
SPEC = rt.TensorSpec
X = np.arange(24, dtype=I32).reshape(2, 3, 4)
M = sample((2, 3))

RESHAPE_CASES = [
    case("transpose-default", rt.transpose, [X], np.transpose),
    case("transpose-perm", lambda x: rt.transpose(x, (1, 0, 2)), [X],
         lambda x: np.transpose(x, (1, 0, 2))),
    case("transpose-negative-perm", lambda x: rt.transpose(x, [-1, 0, 1]), [X],
         lambda x: np.transpose(x, (2, 0, 1))),
    case("transpose-tensor-perm", lambda x: rt.transpose(x, rt.constant([1, 0])), [M],
         lambda x: x.T),
    case("reshape-flat", lambda x: rt.reshape(x, [6]), [M], lambda x: x.reshape(6)),
    case("reshape-minus-one", lambda x: rt.reshape(x, (3, -1)), [M], lambda x: x.reshape(3, -1)),
    case("reshape-only-minus-one", lambda x: rt.reshape(x, [-1]), [X], np.ravel),
    case("reshape-to-scalar", lambda x: rt.reshape(x, []), [np.ones((1, 1), F32)],
         lambda x: x.reshape(())),
    case("reshape-empty", lambda x: rt.reshape(x, [-1, 3]), [np.ones((0, 3), F32)],
         lambda x: x.reshape(-1, 3)),
    case("reshape-TensorShape", lambda x: rt.reshape(x, rt.TensorShape([3, 2])), [M],
         lambda x: x.reshape(3, 2)),
    case("reshape-run-time-shape", rt.reshape, [X, np.array([4, -1], I32)],
         lambda x, s: x.reshape(4, -1), inferred=[None, None]),
    case("reshape-dims-from-tensors", lambda x, n: rt.reshape(x, [n, -1]),
         [X, np.int32(6)], lambda x, n: x.reshape(6, -1), inferred=[None, None]),
    case("expand_dims-0", lambda x: rt.expand_dims(x, 0), [M], lambda x: x[None]),
    case("expand_dims-1", lambda x: rt.expand_dims(x, 1), [M], lambda x: x[:, None]),
    case("expand_dims--1", lambda x: rt.expand_dims(x, -1), [M], lambda x: x[..., None]),
    case("expand_dims--3", lambda x: rt.expand_dims(x, -3), [M], lambda x: x[None]),
    case("squeeze-all", rt.squeeze, [np.ones((1, 2, 1, 3), F32)], np.squeeze),
    case("squeeze-axis", lambda x: rt.squeeze(x, 0), [np.ones((1, 2, 1, 3), F32)],
         lambda x: np.squeeze(x, 0)),
    case("squeeze-negative-axes", lambda x: rt.squeeze(x, [0, -2]), [np.ones((1, 2, 1, 3), F32)],
         lambda x: np.squeeze(x, (0, 2))),
    case("broadcast_to-row", lambda x: rt.broadcast_to(x, [2, 3]), [sample((3,))],
         lambda x: np.broadcast_to(x, (2, 3))),
    case("broadcast_to-column", lambda x: rt.broadcast_to(x, (2, 2, 3)), [sample((2, 1))],
         lambda x: np.broadcast_to(x, (2, 2, 3))),
    case("broadcast_to-scalar", lambda x: rt.broadcast_to(x, [2, 2]), [np.int32(7)],
         lambda x: np.full((2, 2), 7, I32)),
    case("broadcast_to-run-time-shape", rt.broadcast_to, [sample((3,)), np.array([2, 3], I32)],
         lambda x, s: np.broadcast_to(x, (2, 3)), inferred=[None, None]),
    case("identity", rt.identity, [M], lambda x: x),
    case("stop_gradient", rt.stop_gradient, [X], lambda x: x),
]

SHAPE_CASES = [
    case("shape", rt.shape, [X], lambda x: np.array(x.shape, I32)),
    case("shape-int64", lambda x: rt.shape(x, out_type=rt.int64), [M],
         lambda x: np.array(x.shape, I64)),
    case("shape-scalar", rt.shape, [np.float32(1)], lambda x: np.zeros(0, I32)),
    case("size", rt.size, [X], lambda x: np.int32(x.size)),
    case("size-int64", lambda x: rt.size(x, out_type="int64"), [M], lambda x: np.int64(6)),
    case("rank", rt.rank, [X], lambda x: np.int32(3)),
    case("rank-scalar", rt.rank, [np.float32(1)], lambda x: np.int32(0)),
]

JOIN_CASES = [
    case(f"concat-axis{axis}", lambda a, b, axis=axis: rt.concat([a, b], axis),
         [sample((2, 3)), sample((2, 3), seed=1)],
         lambda a, b, axis=axis: np.concatenate([a, b], axis))
    for axis in (0, 1, -1, -2)
] + [
    case("concat-three-unequal", lambda a, b, c: rt.concat([a, b, c], 0),
         [sample((1, 3)), sample((2, 3), seed=1), sample((3, 3), seed=2)],
         lambda a, b, c: np.concatenate([a, b, c])),
    case("concat-one", lambda a: rt.concat([a], 0), [M], lambda a: a),
    case("concat-python-list", lambda a: rt.concat([a, [[1, 2, 3]]], 0), [sample((2, 3), I32)],
         lambda a: np.concatenate([a, np.array([[1, 2, 3]], I32)])),
    case("concat-promotes", lambda a, b: rt.concat([a, b], 0),
         [sample((2,), I32), sample((2,), F32)], lambda a, b: np.concatenate([a, b]),
         np.float32),                                   # int32 with float32: float32
] + [
    case(f"stack-axis{axis}", lambda a, b, axis=axis: rt.stack([a, b], axis),
         [sample((2, 3)), sample((2, 3), seed=1)],
         lambda a, b, axis=axis: np.stack([a, b], axis))
    for axis in (0, 1, 2, -1, -3)
] + [
    case("stack-scalars", lambda a, b: rt.stack([a, b, 3]), [np.int32(1), np.int32(2)],
         lambda a, b: np.array([1, 2, 3], I32)),
] + [
    case(f"unstack-axis{axis}", lambda x, axis=axis: rt.unstack(x, axis=axis), [X],
         lambda x, axis=axis: list(np.moveaxis(x, axis, 0)))
    for axis in (0, 1, -1)
] + [
    case("split-equal", lambda x: rt.split(x, 2, axis=-1), [X],
         lambda x: np.split(x, 2, axis=-1)),
    case("split-sizes", lambda x: rt.split(x, [1, 2], axis=1), [X],
         lambda x: np.split(x, [1], axis=1)),
    case("split-minus-one", lambda x: rt.split(x, [1, -1, 1], 2), [X],
         lambda x: np.split(x, [1, 3], axis=2)),
    case("split-tensor-sizes", lambda x: rt.split(x, rt.constant([3, 1]), 2), [X],
         lambda x: np.split(x, [3], axis=2)),
    case("tile-rows", lambda x: rt.tile(x, [2, 1]), [M], lambda x: np.tile(x, (2, 1))),
    case("tile-both", lambda x: rt.tile(x, (2, 3)), [sample((2, 2), I32)],
         lambda x: np.tile(x, (2, 3))),
]

INDICES = np.array([2, 0, 2], I32)
TAKE_CASES = [
    case("gather-vector", rt.gather, [X, np.array([1, 0, 1], I32)], lambda x, i: x[i]),
    case("gather-matrix-axis1", lambda x, i: rt.gather(x, i, axis=1),
         [X, np.array([[0, 2], [1, 1]], I32)], lambda x, i: np.take(x, i, axis=1)),
    case("gather-axis-1-int64", lambda x, i: rt.gather(x, i, axis=-1),
         [X, np.array([3, 0], I64)], lambda x, i: np.take(x, i, axis=-1)),
    case("gather-scalar-index", lambda x, i: rt.gather(x, i, axis=1), [X, np.int32(2)],
         lambda x, i: x[:, 2]),
    # batch_dims: row b of the result takes from row b of params (TF's batched gather)
    case("gather-batch_dims-1", lambda x, i: rt.gather(x, i, batch_dims=1),
         [M, np.array([[2, 0], [1, 1]], I32)],
         lambda x, i: np.stack([x[0][[2, 0]], x[1][[1, 1]]])),
    case("gather-batch_dims-1-axis2", lambda x, i: rt.gather(x, i, axis=2, batch_dims=1),
         [X, np.array([[3, 0, 1], [2, 2, 0]], I32)],
         lambda x, i: np.stack([np.take(x[b], i[b], axis=1) for b in range(2)])),
    case("gather-batch_dims-2", lambda x, i: rt.gather(x, i, batch_dims=-1),
         [X, np.array([[[1, 0], [3, 3], [2, 1]], [[0, 0], [1, 2], [3, 0]]], I32)],
         lambda x, i: np.take_along_axis(x, i, axis=2)),
    case("one_hot", lambda i: rt.one_hot(i, 4), [INDICES], lambda i: np.eye(4, dtype=F32)[i]),
    case("one_hot-out-of-range", lambda i: rt.one_hot(i, 3),
         [np.array([0, 3, -1], I32)],
         lambda i: np.array([[1, 0, 0], [0, 0, 0], [0, 0, 0]], F32)),
    case("one_hot-axis0", lambda i: rt.one_hot(i, 3, axis=0), [INDICES],
         lambda i: np.eye(3, dtype=F32)[i].T),
    case("one_hot-axis-negative", lambda i: rt.one_hot(i, 3, axis=-2),
         [np.array([[0, 1], [2, 0]], I32)],
         lambda i: np.moveaxis(np.eye(3, dtype=F32)[i], -1, 1)),
    case("one_hot-axis-middle", lambda i: rt.one_hot(i, 3, axis=1),
         [np.array([[0, 1], [2, 0]], I32)],
         lambda i: np.moveaxis(np.eye(3, dtype=F32)[i], -1, 1)),
    case("one_hot-on-off-int", lambda i: rt.one_hot(i, 3, on_value=5, off_value=-1,
                                                  dtype=rt.int32), [INDICES],
         lambda i: np.where(np.eye(3, dtype=bool)[i], 5, -1).astype(I32)),
    case("one_hot-dtype-from-int-on_value", lambda i: rt.one_hot(i, 3, on_value=2),
         [INDICES], lambda i: (np.eye(3)[i] * 2).astype(I32)),
    case("one_hot-dtype-from-tensor-off_value",
         lambda i: rt.one_hot(i, 3, off_value=rt.constant(0.5, rt.float64)),
         [INDICES], lambda i: np.where(np.eye(3, dtype=bool)[i], 1, 0.5)),
    case("where-select", rt.where, [sample((2, 3), np.bool_), M, sample((2, 3), seed=1)],
         np.where),
    case("where-broadcast", rt.where, [sample((2, 1), np.bool_), sample((1, 3)),
                                       np.float32(0)], np.where),
    case("where-weak-scalar", lambda c, x: rt.where(c, x, 0), [sample((2, 3), np.bool_),
                                                               sample((2, 3), I32)],
         lambda c, x: np.where(c, x, 0).astype(I32)),
    case("where-coordinates", rt.where, [sample((2, 3), np.bool_)],
         lambda c: np.argwhere(c), I64, inferred=[None, 2]),
]

CONSTRUCTOR_CASES = [
    case("zeros", lambda: rt.zeros([2, 3]), [], lambda: np.zeros((2, 3), F32)),
    case("zeros-int", lambda: rt.zeros((2,), rt.int32), [], lambda: np.zeros(2, I32)),
    case("zeros-scalar", lambda: rt.zeros([]), [], lambda: np.float32(0)),
    case("zeros-int-shape", lambda: rt.zeros(3), [], lambda: np.zeros(3, F32)),
    case("ones", lambda: rt.ones((2, 3), "float64"), [], lambda: np.ones((2, 3))),
    case("ones-bool", lambda: rt.ones([2], rt.bool_), [], lambda: np.ones(2, bool)),
    case("ones-run-time-shape", rt.ones, [np.array([2, 3], I32)], lambda s: np.ones((2, 3), F32),
         inferred=[None, None]),
    case("zeros-shape-of-tensor", lambda x: rt.zeros(rt.shape(x)), [X],
         lambda x: np.zeros(x.shape, F32)),
    case("zeros_like", rt.zeros_like, [X], np.zeros_like),
    case("ones_like", rt.ones_like, [M], np.ones_like),
    case("ones_like-dtype", lambda x: rt.ones_like(x, dtype=rt.bool_), [M],
         lambda x: np.ones_like(x, dtype=bool)),
    case("fill-int", lambda: rt.fill([2, 3], 7), [], lambda: np.full((2, 3), 7, I32)),
    case("fill-float", lambda: rt.fill((2,), 1.5), [], lambda: np.full(2, 1.5, F32)),
    case("fill-numpy-float64", lambda: rt.fill([2], np.float64(0.25)), [],
         lambda: np.full(2, 0.25)),
    case("fill-tensor-value", lambda v: rt.fill([2, 3], v), [np.int64(4)],
         lambda v: np.full((2, 3), 4, I64)),
    case("fill-bool", lambda: rt.fill([2], True), [], lambda: np.ones(2, bool)),
    case("range-limit", lambda: rt.range(5), [], lambda: np.arange(5, dtype=I32)),
    case("range-start-limit-delta", lambda: rt.range(1, 10, 3), [],
         lambda: np.arange(1, 10, 3, dtype=I32)),
    case("range-negative-delta", lambda: rt.range(5, 0, -2), [],
         lambda: np.arange(5, 0, -2, dtype=I32)),
    case("range-empty", lambda: rt.range(3, 1), [], lambda: np.zeros(0, I32)),
    case("range-floats", lambda: rt.range(0.0, 1.0, 0.25), [],
         lambda: np.arange(0, 1, 0.25, dtype=F32)),
    case("range-float-tenths", lambda: rt.range(0.1, 1.0, 0.1), [],
         lambda: np.arange(F32(0.1), F32(1.0), F32(0.1), dtype=F32)),
    case("range-dtype", lambda: rt.range(4, dtype=rt.float64), [], lambda: np.arange(4.0)),
    case("range-int-start-float-delta", lambda: rt.range(0, 2, 0.5), [],
         lambda: np.arange(0, 2, 0.5, dtype=F32)),
    case("range-tensor-limit", rt.range, [np.int32(4)], lambda n: np.arange(4, dtype=I32),
         inferred=[None]),
    case("range-tensor-bounds", lambda a, b: rt.range(a, b, 2), [np.int32(1), np.int32(8)],
         lambda a, b: np.arange(1, 8, 2, dtype=I32), inferred=[None]),
    case("range-int64-tensor", lambda n: rt.range(n), [np.int64(3)],
         lambda n: np.arange(3, dtype=I64), inferred=[None]),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", RESHAPE_CASES + SHAPE_CASES + JOIN_CASES + TAKE_CASES
                         + CONSTRUCTOR_CASES)
def test_array_ops(check, mode):
    check(mode)


# -- t[...] --------------------------------------------------------------------------------------

def _index_case(text, key, extra=(), inferred=None):
    """x[key] for the 2x3x4 int tensor X; `key(x, *tensors)` may use traced tensors."""
    return case(f"getitem-{text}", key, [X, *extra], key, inferred=inferred)


INDEX_CASES = [
    _index_case("0", lambda x: x[0]),
    _index_case("-1", lambda x: x[-1]),
    _index_case("1,2", lambda x: x[1, 2]),
    _index_case(":,1", lambda x: x[:, 1]),
    _index_case("::-1", lambda x: x[::-1]),
    _index_case(":,::-2", lambda x: x[:, ::-2]),
    _index_case("-1:-3:-1", lambda x: x[-1:-3:-1]),
    _index_case("...,1", lambda x: x[..., 1]),
    _index_case("...,::-1,0", lambda x: x[..., ::-1, 0]),
    _index_case("None", lambda x: x[None]),
    _index_case(":,None,1:", lambda x: x[:, None, 1:]),
    _index_case("0,...,None", lambda x: x[0, ..., None]),
    _index_case("1:,-2:,::3", lambda x: x[1:, -2:, ::3]),
    _index_case("5:", lambda x: x[5:]),
    _index_case(":,10:-10", lambda x: x[:, 10:-10]),
    _index_case("constant-tensor", lambda x: x[rt.constant(1), :, rt.constant(-2)]),
    _index_case("traced-scalar", lambda x, i: x[i], [np.int32(1)]),
    _index_case("traced-negative-scalar", lambda x, i: x[:, i], [np.int32(-1)]),
    _index_case("traced-slice-bounds", lambda x, i, j: x[:, i:j], [np.int32(1), np.int32(3)],
                inferred=[2, None, 4]),
    _index_case("traced-step", lambda x, s: x[..., ::s], [np.int32(-2)],
                inferred=[2, 3, None]),
    _index_case("vector-take", lambda x, v: x[v], [np.array([1, 0, 1], I32)]),
    _index_case("vector-take-axis1", lambda x, v: x[:, v], [np.array([2, 0], I64)]),
    _index_case("vector-with-int-apart", lambda x, v: x[0, :, v], [np.array([3, 1], I32)]),
    _index_case("vector-with-int-adjacent", lambda x, v: x[:, 1, v], [np.array([3, 1], I32)]),
    _index_case("two-vectors", lambda x, v, w: x[v, :, w],
                [np.array([1, 0], I32), np.array([[3], [2]], I32)]),
    _index_case("list", lambda x: x[[1, 0]]),
    _index_case("bool-mask", lambda x, m: x[m], [np.array([True, False])],
                inferred=[None, 3, 4]),
    _index_case("bool-mask-of-values", lambda x: x[x > 20], inferred=[None]),
    _index_case("bool-mask-2d", lambda x, m: x[m], [np.eye(2, 3, dtype=bool)],
                inferred=[None, 4]),
    _index_case("bool-mask-after-slice", lambda x, m: x[:, m], [np.array([0, 1, 1], bool)],
                inferred=[2, None, 4]),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("check", INDEX_CASES)
def test_getitem(check, mode):
    check(mode)


@pytest.mark.parametrize("key,error", [
    (2, IndexError), (-3, IndexError), ((0, 0, 0, 0), IndexError), (1.5, TypeError),
    ((Ellipsis, 0, Ellipsis), IndexError)])
def test_getitem_errors_while_tracing(key, error):
    f = rt.function(lambda x: x[key])
    with pytest.raises(error):
        f.get_concrete_function(rt.constant(X))


def test_getitem_rejects_float_tensor_index():
    with pytest.raises(TypeError, match="float32"):
        rt.function(lambda x, i: x[i]).get_concrete_function(rt.constant(X), rt.constant(1.0))


# -- shape / size / rank: constants when static -------------------------------------------------

@pytest.mark.parametrize("op", [rt.shape, rt.size, rt.rank])
def test_shape_size_rank_are_constants_when_static(op):
    assert graph_op_types(op, SPEC([2, 3])) == ["placeholder", "const"]


@pytest.mark.parametrize("op,spec,value", [
    (rt.shape, SPEC([None, 3]), [2, 3]), (rt.size, SPEC([None, 3]), 6),
    (rt.rank, SPEC(None), 2), (rt.shape, SPEC(None), [2, 3])])
def test_shape_size_rank_are_ops_when_dynamic(op, spec, value):
    assert op.__name__ in graph_op_types(op, spec)
    f = rt.function(op, input_signature=[spec])
    np.testing.assert_array_equal(f(rt.constant(M)).numpy(), value)


def test_static_shape_feeds_static_shapes():
    def f(x):
        n = rt.shape(x)[0]
        return rt.zeros(rt.shape(x)), rt.reshape(x, [n, -1]), rt.range(rt.size(x))
    zeros, reshaped, indices = rt.function(f).get_concrete_function(rt.constant(X)).graph.outputs
    assert zeros.shape == rt.TensorShape([2, 3, 4])
    assert reshaped.shape.is_compatible_with([2, 12])
    assert indices.shape == rt.TensorShape([24])


# -- unknown dims ------------------------------------------------------------------------------

UNKNOWN_DIM_CASES = [
    case("transpose-[None,3]", rt.transpose, [M], np.transpose, inferred=[3, None],
         signature=[SPEC([None, 3])]),
    case("reshape-minus-one-[None,3]", lambda x: rt.reshape(x, [-1]), [M], np.ravel,
         inferred=[None], signature=[SPEC([None, 3])]),
    case("reshape-keeps-known-[None,3]", lambda x: rt.reshape(x, [-1, 3, 1]), [M],
         lambda x: x.reshape(-1, 3, 1), inferred=[None, 3, 1], signature=[SPEC([None, 3])]),
    case("expand_dims-[None,3]", lambda x: rt.expand_dims(x, 1), [M], lambda x: x[:, None],
         inferred=[None, 1, 3], signature=[SPEC([None, 3])]),
    case("concat-[None,3]", lambda a, b: rt.concat([a, b], 0), [M, M],
         lambda a, b: np.concatenate([a, b]), inferred=[None, 3],
         signature=[SPEC([None, 3]), SPEC([2, 3])]),
    case("concat-axis1-[None,3]", lambda a, b: rt.concat([a, b], 1), [M, M],
         lambda a, b: np.concatenate([a, b], 1), inferred=[2, 6],
         signature=[SPEC([None, 3]), SPEC([2, 3])]),
    case("stack-[None,3]", lambda a: rt.stack([a, a], 1), [M], lambda a: np.stack([a, a], 1),
         inferred=[None, 2, 3], signature=[SPEC([None, 3])]),
    case("unstack-[None,3]", lambda a: rt.unstack(a, axis=1), [M], lambda a: list(a.T),
         inferred=[[None]] * 3, signature=[SPEC([None, 3])]),
    case("split-[None,4]", lambda a: rt.split(a, 2, axis=1), [sample((2, 4))],
         lambda a: np.split(a, 2, axis=1), inferred=[[None, 2]] * 2,
         signature=[SPEC([None, 4])]),
    case("tile-[None,3]", lambda a: rt.tile(a, [2, 2]), [M], lambda a: np.tile(a, (2, 2)),
         inferred=[None, 6], signature=[SPEC([None, 3])]),
    case("gather-[None]", lambda a, i: rt.gather(a, i, axis=1), [M, np.array([0, 2, 2], I32)],
         lambda a, i: a[:, i], inferred=[2, None],
         signature=[SPEC([2, 3]), SPEC([None], rt.int32)]),
    case("one_hot-[None]", lambda i: rt.one_hot(i, 3), [INDICES],
         lambda i: np.eye(3, dtype=F32)[i], inferred=[None, 3],
         signature=[SPEC([None], rt.int32)]),
    case("where-[None,3]", lambda c, x: rt.where(c, x, 0.0), [sample((2, 3), bool), M],
         lambda c, x: np.where(c, x, np.float32(0)), inferred=[None, 3],
         signature=[SPEC([None, 3], rt.bool_), SPEC([None, 3])]),
    case("zeros_like-[None,3]", rt.zeros_like, [M], np.zeros_like, inferred=[None, 3],
         signature=[SPEC([None, 3])]),
    case("getitem-[None,3]", lambda x: x[1:, ::-1], [M], lambda x: x[1:, ::-1],
         inferred=[None, 3], signature=[SPEC([None, 3])]),
    case("getitem-int-[None,3]", lambda x: x[0, None], [M], lambda x: x[0, None],
         inferred=[1, 3], signature=[SPEC([None, 3])]),
    case("squeeze-[None,1]", rt.squeeze, [sample((2, 1))], np.squeeze, inferred=None,
         signature=[SPEC([None, 1])]),
    case("squeeze-axis-[None,1]", lambda x: rt.squeeze(x, -1), [sample((2, 1))],
         lambda x: x[:, 0], inferred=[None], signature=[SPEC([None, 1])]),
]


@pytest.mark.parametrize("check", UNKNOWN_DIM_CASES)
def test_unknown_dims_while_tracing(check):
    check("graph")


# -- errors ---------------------------------------------------------------------------------------

A, B = sample((2, 3)), sample((2,), bool)
SHAPE_ERRORS = [   # (what, fn, inputs, words the message must contain)
    ("reshape", lambda x: rt.reshape(x, [4, -1]), [A], ["reshape", "(2, 3)", "[4, -1]"]),
    ("reshape-count", lambda x: rt.reshape(x, [5]), [A], ["reshape", "(2, 3)", "[5]"]),
    ("transpose", lambda x: rt.transpose(x, [0, 0]), [A], ["transpose", "(2, 3)"]),
    ("transpose-range", lambda x: rt.transpose(x, [0, 2]), [A], ["transpose", "(2, 3)"]),
    ("squeeze", lambda x: rt.squeeze(x, 1), [A], ["squeeze", "(2, 3)"]),
    ("concat", lambda a, b: rt.concat([a, b], 0), [A, sample((2, 4))],
     ["concat", "(2, 3)", "(2, 4)"]),
    ("concat-rank", lambda a, b: rt.concat([a, b], 0), [A, sample((3,))],
     ["concat", "(2, 3)", "(3,)"]),
    ("concat-axis", lambda a: rt.concat([a, a], 2), [A], ["concat", "(2, 3)"]),
    ("stack", lambda a, b: rt.stack([a, b]), [A, sample((3, 2))], ["stack", "(2, 3)", "(3, 2)"]),
    ("split", lambda x: rt.split(x, [1, 1], axis=1), [A], ["split", "(2, 3)"]),
    ("split-equal", lambda x: rt.split(x, 2, axis=1), [A], ["split", "(2, 3)"]),
    ("tile", lambda x: rt.tile(x, [2]), [A], ["tile", "(2, 3)"]),
    ("broadcast_to", lambda x: rt.broadcast_to(x, [3, 1]), [sample((3,))],
     ["broadcast_to", "(3,)", "(3, 1)"]),
    ("where", lambda c, x: rt.where(c, x, x), [B, sample((3,))], ["where", "(2,)", "(3,)"]),
    ("expand_dims", lambda x: rt.expand_dims(x, 3), [A], ["expand_dims", "(2, 3)"]),
    ("unstack", lambda x: rt.unstack(x, num=3), [A], ["unstack", "(2, 3)"]),
    ("gather-axis", lambda x: rt.gather(x, [0], axis=2), [A], ["gather", "(2, 3)"]),
    ("one_hot-axis", lambda i: rt.one_hot(i, 3, axis=3), [INDICES], ["one_hot", "(3,)"]),
]


@pytest.mark.parametrize("fn,arrays,words", named_rows(SHAPE_ERRORS))
def test_shape_errors_name_op_and_shapes(fn, arrays, words):
    with pytest.raises((ValueError, IndexError)) as info:
        rt.function(fn).get_concrete_function(*[rt.constant(a) for a in arrays])
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    with pytest.raises((ValueError, IndexError)):
        fn(*[rt.constant(a) for a in arrays])


def test_reshape_run_time_mismatch_fails_when_run():
    f = rt.function(rt.reshape)
    with pytest.raises(ValueError, match="reshape"):
        f(rt.constant(M), rt.constant([4, -1]))


# -- coverage of the table ---------------------------------------------------------------------

def test_every_array_op_is_in_a_table():
    tables = RESHAPE_CASES + SHAPE_CASES + JOIN_CASES + TAKE_CASES + CONSTRUCTOR_CASES
    covered = {param.id.split("-")[0] for param in tables}
    assert set(ARRAY_OPS) <= covered, sorted(set(ARRAY_OPS) - covered)


@pytest.mark.parametrize("mode", MODES)
def test_where_needs_a_bool_condition(mode):
    with pytest.raises(TypeError, match="int32"):
        run(rt.where, [sample((3,), I32), M[0], M[1]], mode)


def test_unstack_of_a_dim_known_only_at_run_time():
    f = rt.function(lambda x: rt.unstack(x, num=2), input_signature=[SPEC([None, 3])])
    assert [t.numpy().tolist() for t in f(rt.constant(M))] == M.tolist()
    with pytest.raises(ValueError, match="expected 2 values"):
        f(rt.constant(sample((3, 3))))


def test_range_shape_is_inferred_without_building_it():
    f = rt.function(lambda: rt.range(0, 10 ** 12, 3, dtype=rt.int64))
    assert f.get_concrete_function().graph.outputs[0].shape == rt.TensorShape([333333333334])
