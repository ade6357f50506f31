"""Shared helpers of the gradient tests: analytic gradients against central differences.

A gradient case (`grad_case`) is a callable on tensors and the float64 arrays to feed
it. `check_gradients` differentiates the scalar

    loss(*xs) = sum over float results r of reduce_sum(r * w_r)

(`w_r` fixed random weights, so every output element counts with its own weight) with
respect to the inputs in `wrt`, in one of three modes:

  eager          a GradientTape on eager tensors;
  graph          rt.gradients inside rt.function, traced on the arrays' shapes;
  graph-dynamic  the same traced with every dimension unknown (run-time shape paths);

and compares with central finite differences of the eager loss.
"""
import functools

import numpy as np
import pytest

import runtime as rt

MODES = ("eager", "graph", "graph-dynamic")
EPS = 1e-6


def grad_case(name, fn, args, wrt=None, dynamic=True):
    """One table row, a `check(mode)`: the gradients of `fn` at `args` (arrays).

    wrt: indices of the arguments to differentiate (default: every float argument);
    dynamic: False when `fn` needs static shapes (then graph-dynamic is skipped).
    """
    arrays = [np.asarray(a) for a in args]
    if wrt is None:
        wrt = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    check = functools.partial(check_gradients, fn, arrays, wrt, dynamic=dynamic)
    return pytest.param(check, id=name)


def weighted_loss(fn, arrays):
    """loss(*tensors): the results of fn weighted by fixed random arrays, summed."""
    results = rt.nest.flatten(fn(*[rt.constant(a) for a in arrays]))
    rng = np.random.default_rng(1)
    weights = [rng.uniform(0.5, 1.5, size=r.shape) if r.dtype.is_floating else None
               for r in results]

    def loss(*tensors):
        total = 0.0
        for r, w in zip(rt.nest.flatten(fn(*tensors)), weights):
            if w is not None:
                total = total + rt.reduce_sum(r * rt.cast(w, r.dtype))
        return total
    return loss


def numeric_gradient(loss, arrays, i, eps=EPS):
    """Central differences of loss(*arrays) (eager) with respect to arrays[i]."""
    x = arrays[i]
    grad = np.zeros(x.shape)
    for idx in np.ndindex(x.shape):
        values = []
        for step in (eps, -eps):
            shifted = x.copy()
            shifted[idx] += step
            args = arrays[:i] + [shifted] + arrays[i + 1:]
            values.append(float(loss(*[rt.constant(a) for a in args])))
        grad[idx] = (values[0] - values[1]) / (2 * eps)
    return grad


def analytic_gradients(loss, arrays, wrt, mode):
    """The gradients of `loss` with respect to arrays[i] for i in wrt, as arrays."""
    if mode == "eager":
        tensors = [rt.constant(a) for a in arrays]
        with rt.GradientTape() as tape:
            tape.watch([tensors[i] for i in wrt])
            y = loss(*tensors)
        grads = tape.gradient(y, [tensors[i] for i in wrt])
    else:
        signature = None
        if mode == "graph-dynamic":
            signature = [rt.TensorSpec([None] * a.ndim, rt.as_dtype(a.dtype)) for a in arrays]

        def grad_fn(*xs):
            return rt.gradients(loss(*xs), [xs[i] for i in wrt])
        grads = rt.function(grad_fn, input_signature=signature)(*arrays)
    return [None if g is None else np.asarray(g.numpy()) for g in grads]


def check_gradients(fn, arrays, wrt, mode, dynamic=True, rtol=1e-5, atol=1e-6):
    if mode == "graph-dynamic" and not dynamic:
        pytest.skip("needs static shapes")
    loss = weighted_loss(fn, arrays)
    for i, got in zip(wrt, analytic_gradients(loss, arrays, wrt, mode)):
        want = numeric_gradient(loss, arrays, i)
        assert got is not None, f"no gradient for argument {i}"
        assert got.shape == arrays[i].shape, f"argument {i}: gradient shape {got.shape}"
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of argument {i}")


# -- control flow: the same Python function eagerly, converted, and called under a tape ------

FLOW_MODES = ("eager", "converted", "converted-call")


def flow_gradients(fn, arrays, wrt, mode):
    """Gradients of the scalar fn(*tensors) with respect to the tensors at `wrt`.

    eager: Python control flow on eager tensors under a tape; converted: a tape inside
    an autograph-converted function (cond/while ops); converted-call: an eager tape
    around a call of the converted function (one call op, differentiated by recompute).
    """
    import autograph as ag

    tensors = [rt.constant(a) for a in arrays]
    if mode == "converted":
        def with_tape(*xs):
            with rt.GradientTape() as tape:
                tape.watch([xs[i] for i in wrt])
                y = fn(*xs)
            return tape.gradient(y, [xs[i] for i in wrt])
        return ag.convert(with_tape)(*tensors)
    call = ag.convert(fn) if mode == "converted-call" else fn
    with rt.GradientTape() as tape:
        tape.watch([tensors[i] for i in wrt])
        y = call(*tensors)
    return tape.gradient(y, [tensors[i] for i in wrt])


def check_flow_gradients(fn, arrays, mode, rtol=1e-5, atol=1e-6):
    arrays = [np.asarray(a) for a in arrays]
    wrt = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    for i, got in zip(wrt, flow_gradients(fn, arrays, wrt, mode)):
        want = numeric_gradient(fn, arrays, i)
        got = np.zeros_like(want) if got is None else got.numpy()
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of argument {i}")
