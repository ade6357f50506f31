"""Shared helpers of the op tests: run an op eagerly and in a traced graph, check it.

A test case (`case`) is a callable on tensors, the numpy arrays to feed it, and a
numpy reference computed from the same arrays. `check_op` runs the callable

  eager   on eager tensors, op by op;
  graph   inside `rt.function`, on placeholders of the arrays' shapes (or of an
          `input_signature` with unknown dims),

and checks each result against the reference: the value (exact for ints and
bools, allclose for floats), the dtype (of the tensor and of the array behind
it), and in graph mode the static shape and dtype inferred while tracing.
"""
import functools

import numpy as np
import pytest

import runtime as rt

MODES = ("eager", "graph")

# Ops of the public API, grouped by the test file whose table covers them.
MATH_OPS = """add subtract multiply divide floordiv mod pow negative abs sign sqrt square exp log
    sin cos tanh sigmoid relu softplus maximum minimum floor ceil round clip_by_value equal
    not_equal less less_equal greater greater_equal logical_and logical_or logical_not
    logical_xor reduce_sum reduce_mean reduce_max reduce_min reduce_prod reduce_any reduce_all
    argmax argmin matmul cast rsqrt log1p tan reciprocal is_nan is_finite squared_difference
    add_n bitwise_and bitwise_or bitwise_xor invert truediv floormod""".split()
ARRAY_OPS = """where transpose reshape shape size rank expand_dims squeeze concat stack unstack
    split tile gather one_hot zeros ones zeros_like ones_like fill range identity
    stop_gradient broadcast_to""".split()
NN_OPS = """softmax log_softmax softmax_cross_entropy_with_logits
    sparse_softmax_cross_entropy_with_logits sigmoid_cross_entropy_with_logits""".split()
RANDOM_OPS = "uniform normal truncated_normal set_seed".split()


def case(name, fn, args, ref, dtype=None, inferred=None, signature=None):
    """One table row, a `check(mode)`: `fn(*tensors)` must match `ref(*arrays)`.

    dtype: the expected result dtype when it is not the reference's own;
    inferred: the static shape(s) expected while tracing, when not the result's;
    signature: TensorSpecs to trace with (unknown dims), instead of the arrays' shapes.
    """
    check = functools.partial(check_op, fn, [np.asarray(a) for a in args], ref, dtype=dtype,
                              inferred=inferred, signature=signature)
    return pytest.param(check, id=name)


def named_rows(table):
    """pytest params for rows `(id, value, ...)` of a table."""
    return [pytest.param(*row[1:], id=row[0]) for row in table]


def sample(shape, dtype=np.float32, kind="any", seed=0):
    """Small deterministic test values; `kind` keeps them in an op's domain.

    any: both signs and zero; nonzero; positive; small (0..3, for int exponents).
    """
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        low, high = {"any": (-5, 6), "nonzero": (1, 6), "positive": (1, 6),
                     "small": (0, 4)}[kind]
        if dtype.kind == "u":
            low = max(low, 0)
        values = rng.integers(low, high, size=shape)
        if kind == "nonzero" and dtype.kind == "i":
            values = values * rng.choice([-1, 1], size=shape)
        return values.astype(dtype)
    low, high = {"any": (-3.0, 3.0), "nonzero": (0.5, 3.0), "positive": (0.25, 3.0),
                 "small": (0.25, 2.0)}[kind]
    values = rng.uniform(low, high, size=shape)
    if kind == "nonzero":
        values = values * rng.choice([-1, 1], size=shape)
    if kind == "any" and values.size > 1:
        values.flat[0] = 0.0
    return values.astype(dtype)


def flat(structure):
    return rt.nest.flatten(structure)


def run_eager(fn, arrays):
    return flat(fn(*[rt.constant(a) for a in arrays]))


def run_graph(fn, arrays, signature=None):
    """(results, concrete function) of `fn` traced by rt.function and called once."""
    traced = rt.function(fn, input_signature=signature)
    tensors = [rt.constant(a) for a in arrays]
    concrete = (traced.get_concrete_function() if signature is not None
                else traced.get_concrete_function(*tensors))
    results = flat(traced(*tensors))
    assert traced.experimental_get_tracing_count() == 1, "the call retraced"
    return results, concrete


def run(fn, arrays, mode, signature=None):
    """(results, static (shape, dtype) per result or None when eager)."""
    if mode == "eager":
        return run_eager(fn, arrays), None
    results, concrete = run_graph(fn, arrays, signature)
    return results, [(t.shape, t.dtype) for t in concrete.graph.outputs]


def assert_values(got, want):
    """`got` equals `want`: exactly for ints and bools, closely for floats."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape} != expected {want.shape}"
    if want.dtype.kind in "fc":
        tol = {2: 2e-3, 4: 2e-6, 8: 1e-12}[np.finfo(want.dtype).dtype.itemsize]
        np.testing.assert_allclose(got.astype(want.dtype), want, rtol=tol, atol=tol,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def check_op(fn, arrays, ref, mode, dtype=None, inferred=None, signature=None):
    """Run `fn` in `mode` and check values, dtypes and inferred shapes against `ref`."""
    results, static = run(fn, arrays, mode, signature if mode == "graph" else None)
    expected = [np.asarray(e) for e in flat(ref(*arrays))]
    assert len(results) == len(expected), f"{len(results)} results, expected {len(expected)}"
    inferred = _per_output(inferred, len(expected))
    for i, (got, want) in enumerate(zip(results, expected)):
        want_dtype = rt.as_dtype(dtype if dtype is not None else want.dtype)
        value = np.asarray(got.numpy())
        assert got.dtype == want_dtype, f"result {i}: dtype {got.dtype}, expected {want_dtype}"
        assert value.dtype == want_dtype.np, f"result {i}: the kernel gave {value.dtype}"
        assert_values(value, want.astype(want_dtype.np))
        if static is not None:
            check_static(static[i], value, want_dtype, inferred[i],
                         exact=signature is None and inferred[i] is None)


def check_static(spec, value, dtype, inferred=None, exact=True):
    """The shape and dtype inferred while tracing agree with the result `value`."""
    shape, static_dtype = spec
    assert static_dtype == dtype, f"inferred dtype {static_dtype}, result has {dtype}"
    assert shape.is_compatible_with(value.shape), \
        f"inferred shape {shape} is not compatible with the result's {value.shape}"
    if inferred is not None:
        assert shape == rt.TensorShape(inferred), f"inferred {shape}, expected {inferred}"
    elif exact:
        assert shape == value.shape, f"inferred {shape}, the result has {value.shape}"


def _per_output(inferred, n):
    if inferred is None or n == 1:
        return [inferred] * n
    return list(inferred)


def graph_op_types(fn, *specs):
    """The op types of `fn`'s graph traced on `specs` (TensorSpecs or arrays)."""
    concrete = rt.function(fn).get_concrete_function(*specs)
    return [op.type for op in concrete.graph.ops]
