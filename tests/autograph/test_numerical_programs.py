"""Numerical programs written the way researchers write them in plain Python - root finders,
eigenvalue and linear-system iterations, quadrature, ODE integrators, dynamic programming,
sorting, number theory, clustering, Monte Carlo, simulations with objects holding state -
then decorated with `@ag.convert`.

The reference is the undecorated function run eagerly on numpy values (numpy scalars and
arrays of the dtype the tensors get) and Python numbers; the converted function is traced
and called with `rt.constant` of the same values. `check` requires the same values
(`assert_allclose` with tolerances of the dtype's precision), the same dtype where numpy
gives one (the same kind where Python gives an int/float/bool), the same structure
(tuples, namedtuples, dicts) and exactly the same printed text. Arguments wrapped in `py()`
stay Python values in both runs (functions, Python ints fixed in the trace).

The project's documented differences from numpy are followed: a Python float or a float
tensor meeting an integer tensor gives the float's dtype (float32 for a Python float; JAX's
promotion, `runtime/dtypes.py`), where numpy gives float64.
A bug found is a strict xfail whose reason gives the diagnosis, with its smallest program
at the end of the file. Every converted run has a loop iteration limit, so a graph loop
that never ends is a failure, not a hang.
"""
import collections
import contextlib
import copy
import io
import math

import numpy as np
import pytest

import autograph as ag
import runtime as rt
from equivalence import assert_same


# -- the check ---------------------------------------------------------------------------------

class py:
    """An argument that stays a Python value in the converted call too."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"py({self.value!r})"


_NUMBERS = (bool, int, float, np.generic, np.ndarray)


def _reference_args(value):
    if isinstance(value, py):
        return value.value
    if isinstance(value, (np.ndarray, list, dict)):
        return copy.deepcopy(value)
    return value


def _tensor_args(value):
    if isinstance(value, py):
        return value.value
    if isinstance(value, _NUMBERS):
        return rt.constant(value)
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return type(value)(*(_tensor_args(v) for v in value))
    if isinstance(value, (tuple, list)):
        return type(value)(_tensor_args(v) for v in value)
    return value


def _eager_tensor_args(value):
    """Tensors for a reference run that needs them (a tape watches tensors, not arrays)."""
    return _tensor_args(value)


_CONVERTED = {}


def converted(f):
    """One `ag.convert` per function, so the parametrized cases share its traces."""
    if f not in _CONVERTED:
        _CONVERTED[f] = ag.convert(f)
    return _CONVERTED[f]


LOOP_LIMIT = 100_000        # far above any loop here: a runaway graph loop fails instead


def _run(fn, args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), rt.config.options(loop_iteration_limit=LOOP_LIMIT):
        result = fn(*args)
    return result, out.getvalue()


def check(f, *args, reference_tensors=False, raises=None, match=None):
    """Run f on numpy/Python values and ag.convert(f) on tensors: same results and text.

    `reference_tensors`: the plain run gets eager tensors (for programs that watch their
    inputs on a tape). `raises`: both runs must raise this exception class (with a message
    matching `match`), printing the same text before it. Returns the plain run's result."""
    make = _eager_tensor_args if reference_tensors else _reference_args
    plain_args = [make(a) for a in args]
    if raises is not None:
        out = io.StringIO()
        with pytest.raises(raises, match=match), contextlib.redirect_stdout(out):
            f(*plain_args)
        expected_text = out.getvalue()
        out = io.StringIO()
        with pytest.raises(raises, match=match), contextlib.redirect_stdout(out), \
                rt.config.options(loop_iteration_limit=LOOP_LIMIT):
            converted(f)(*[_tensor_args(a) for a in args])
        assert out.getvalue() == expected_text
        return None
    expected, expected_text = _run(f, plain_args)
    actual, actual_text = _run(converted(f), [_tensor_args(a) for a in args])
    assert actual_text == expected_text, \
        f"printed text differs:\n--- plain\n{expected_text}--- converted\n{actual_text}"
    assert_same(expected, actual)
    return expected


def f32(*values):
    return np.array(values, np.float32)


def f64(*values):
    return np.array(values, np.float64)


def i32(*values):
    return np.array(values, np.int32)


def i64(*values):
    return np.array(values, np.int64)


# -- root finding --------------------------------------------------------------------------------

RootResult = collections.namedtuple("RootResult", "root iterations converged")


def cubic(x):
    return x * x * x - 2 * x - 5


def secant(f, x0, x1, tol, max_iter):
    f0, f1 = f(x0), f(x1)
    for it in range(max_iter):
        if f1 == f0:
            break                               # a flat secant: give up
        x2 = x1 - f1 * (x1 - x0) / (f1 - f0)
        x0, f0 = x1, f1
        x1, f1 = x2, f(x2)
        if abs(x1 - x0) < tol:
            return RootResult(x1, it + 1, True)
    return RootResult(x1, max_iter, False)


@pytest.mark.parametrize("x0, x1, tol, max_iter", [
    (np.float64(2.0), np.float64(3.0), np.float64(1e-12), np.int32(50)),
    (np.float32(2.0), np.float32(3.0), np.float32(1e-5), np.int32(50)),
    (np.float64(2.0), np.float64(3.0), np.float64(1e-12), np.int32(3)),     # runs out
    (np.float64(2.0), np.float64(3.0), np.float64(1e-12), np.int32(0)),     # no iteration
    (np.float64(2.5), np.float64(2.5), np.float64(1e-12), np.int32(50)),    # breaks at once
    (np.float64(-4.0), np.float64(-3.0), np.float64(1e-10), np.int32(100)),
])
def test_secant_method(x0, x1, tol, max_iter):
    check(secant, py(cubic), x0, x1, tol, max_iter)


def newton_polynomial(coeffs, x, tol, max_iter):
    """Newton's method on the polynomial with `coeffs` (highest power first), evaluating
    p and p' together by Horner's rule."""
    iters = 0
    while iters < max_iter:
        p, dp = 0.0, 0.0
        for c in coeffs:
            dp = dp * x + p
            p = p * x + c
        if dp == 0:
            print("zero derivative at", x)
            return x, iters
        step = p / dp
        x = x - step
        iters += 1
        if abs(step) < tol:
            break
    return x, iters


@pytest.mark.parametrize("coeffs, x, tol", [
    (f64(1, 0, -2), np.float64(1.0), np.float64(1e-13)),          # sqrt(2)
    (f32(1, -6, 11, -6), np.float32(0.0), np.float32(1e-6)),      # root 1 of (x-1)(x-2)(x-3)
    (f64(1, -6, 11, -6), np.float64(3.6), np.float64(1e-12)),
    (f64(1, 0, -2), np.float64(0.0), np.float64(1e-12)),          # p'(0) = 0: early return
    (f64(2, 0, 0, -16), np.float64(-5.0), np.float64(1e-12)),     # 2x^3 = 16
])
def test_newton_on_a_polynomial_by_horner(coeffs, x, tol):
    check(newton_polynomial, coeffs, x, tol, np.int32(60))


def golden_section_minimum(f, lo, hi, tol):
    invphi = (math.sqrt(5) - 1) / 2
    c = hi - invphi * (hi - lo)
    d = lo + invphi * (hi - lo)
    fc, fd = f(c), f(d)
    evaluations = 2
    while hi - lo > tol:
        if fc < fd:
            hi, d, fd = d, c, fc
            c = hi - invphi * (hi - lo)
            fc = f(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + invphi * (hi - lo)
            fd = f(d)
        evaluations += 1
    return (lo + hi) / 2, evaluations


@pytest.mark.parametrize("lo, hi, tol", [
    (np.float64(0.0), np.float64(3.0), np.float64(1e-9)),
    (np.float32(-1.0), np.float32(4.0), np.float32(1e-4)),
    (np.float64(0.0), np.float64(3.0), np.float64(10.0)),     # already narrow enough
])
def test_golden_section_search(lo, hi, tol):
    check(golden_section_minimum, py(lambda x: (x - 1.3) ** 2 + 0.25 * x), lo, hi, tol)


def fixed_point(g, x, tol, max_iter):
    """x = g(x), stopped by a tolerance, an iteration cap or divergence
    (status 0: ran out of iterations, 1: converged, 2: diverged)."""
    history = [x]
    status = 0
    for k in range(max_iter):
        x_next = g(x)
        history.append(x_next)
        if abs(x_next) > 1e6:
            status = 2
            print(f"diverged at iteration {k}: |x| = {abs(x_next):.3e}")
            break
        if abs(x_next - x) < tol:
            x = x_next
            status = 1
            break
        x = x_next
    print(f"status {status}: x = {x:.10f} after {len(history) - 1} steps")
    return x, status, rt.stack(history)


@pytest.mark.parametrize("g, x, max_iter", [
    (math.cos, np.float64(1.0), np.int32(200)),
    (lambda x: 0.5 * (x + 2 / x), np.float64(1.0), np.int32(200)),
    (lambda x: 3 * x + 1, np.float64(1.0), np.int32(200)),      # diverges
    (lambda x: 0.9 * x, np.float32(1.0), np.int32(5)),         # runs out
    (lambda x: 0.9 * x, np.float32(1.0), np.int32(0)),
], ids=["cos", "heron", "diverging", "capped", "zero-iterations"])
def test_fixed_point_iteration(g, x, max_iter):
    tol = np.asarray(1e-12 if x.dtype == np.float64 else 1e-6, x.dtype)[()]
    check(fixed_point, py(lambda v: rt.cos(v) if g is math.cos else g(v)), x, tol, max_iter)


# -- linear algebra by iteration -------------------------------------------------------------------

SPD3 = f64([4, 1, 0.5], [1, 3, -0.5], [0.5, -0.5, 2])
DIAG_DOMINANT = f64([10, -1, 2, 0], [-1, 11, -1, 3], [2, -1, 10, -1], [0, 3, -1, 8])
RHS4 = f64(6, 25, -11, 15)


def power_iteration(A, num_iters, tol):
    n = A.shape[0]
    v = rt.ones([n], dtype=A.dtype) / math.sqrt(n)
    lam = 0.0
    for k in range(num_iters):
        w = rt.matmul(A, rt.reshape(v, [n, 1]))[:, 0]
        new_lam = rt.reduce_sum(v * w)
        v = w / rt.sqrt(rt.reduce_sum(w * w))
        if k % 5 == 0:
            print(f"iter {k:3d}: lambda = {new_lam:.6f}")
        if abs(new_lam - lam) < tol:
            lam = new_lam
            break
        lam = new_lam
    return lam, v


@pytest.mark.parametrize("A, num_iters, tol", [
    (SPD3, np.int32(500), np.float64(1e-12)),
    (SPD3.astype(np.float32), np.int32(500), np.float32(1e-6)),
    (DIAG_DOMINANT, np.int32(7), np.float64(1e-12)),               # stops at the cap
    (SPD3, np.int32(0), np.float64(1e-12)),
    (f64([2, 0], [0, 2]), np.int32(50), np.float64(1e-9)),         # converged at step 2
])
def test_power_iteration(A, num_iters, tol):
    check(power_iteration, A, num_iters, tol)


def jacobi(A, b, tol, max_iter):
    n = len(b)
    D = rt.stack([A[i, i] for i in range(n)])
    x = rt.zeros_like(b)
    diff = float("inf")
    it = 0
    while it < max_iter and diff >= tol:
        Ax = rt.reduce_sum(A * rt.reshape(x, [1, n]), axis=1)
        x_new = (b - (Ax - D * x)) / D
        diff = rt.reduce_max(abs(x_new - x))
        x = x_new
        it += 1
    return x, it, diff


@pytest.mark.parametrize("A, b, tol, max_iter", [
    (DIAG_DOMINANT, RHS4, np.float64(1e-10), np.int32(100)),
    (DIAG_DOMINANT.astype(np.float32), RHS4.astype(np.float32), np.float32(1e-5),
     np.int32(100)),
    (DIAG_DOMINANT, RHS4, np.float64(1e-10), np.int32(2)),
    (DIAG_DOMINANT, RHS4, np.float64(1e-10), np.int32(0)),
])
def test_jacobi_iteration(A, b, tol, max_iter):
    check(jacobi, A, b, tol, max_iter)


def gauss_seidel(A, b, sweeps):
    """In-place updates on a Python list of unknowns, the way the algorithm is written."""
    n = len(b)
    x = [0.0] * n
    for sweep in range(sweeps):
        for i in range(n):
            s = b[i]
            for j in range(n):
                if j != i:
                    s = s - A[i, j] * x[j]
            x[i] = s / A[i, i]
    return x


@pytest.mark.parametrize("sweeps", [np.int32(1), np.int32(25)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gauss_seidel_on_a_python_list(sweeps, dtype):
    check(gauss_seidel, DIAG_DOMINANT.astype(dtype), RHS4.astype(dtype), sweeps)


def test_gauss_seidel_with_no_sweep():
    check(gauss_seidel, DIAG_DOMINANT, RHS4, np.int32(0))


def conjugate_gradient(A, b, tol, max_iter, report_every):
    x = rt.zeros_like(b)
    r = b - rt.matmul(A, x[:, None])[:, 0]
    p = r
    rs_old = rt.reduce_sum(r * r)
    for k in range(max_iter):
        Ap = rt.matmul(A, p[:, None])[:, 0]
        alpha = rs_old / rt.reduce_sum(p * Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = rt.reduce_sum(r * r)
        if k % report_every == 0:
            print(f"cg {k}: residual {rt.sqrt(rs_new):.4e}")
        if rt.sqrt(rs_new) < tol:
            print(f"converged in {k + 1} iterations")
            break
        p = r + (rs_new / rs_old) * p
        rs_old = rs_new
    return x


@pytest.mark.parametrize("A, b, tol, report_every", [
    (SPD3, f64(1, 2, 3), np.float64(1e-10), np.int32(1)),
    (DIAG_DOMINANT, RHS4, np.float64(1e-12), np.int32(2)),
    (SPD3.astype(np.float32), f32(1, 2, 3), np.float32(1e-5), np.int32(3)),
])
def test_conjugate_gradient(A, b, tol, report_every):
    check(conjugate_gradient, A, b, tol, np.int32(20), report_every)


def cholesky(A):
    """The textbook triple loop on Python lists of scalars; rejects non-positive pivots."""
    n = A.shape[0]
    L = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = A[i, j]
            for k in range(j):
                s -= L[i][k] * L[j][k]
            if i == j:
                assert s > 0, "matrix is not positive definite"
                L[i][j] = rt.sqrt(s)
            else:
                L[i][j] = s / L[j][j]
    return rt.stack([rt.stack(row) for row in L])


def forward_substitution(L, b, n):
    """Solve L x = b for lower triangular L, the unknowns kept in one vector."""
    size = b.shape[0]
    x = rt.zeros_like(b)
    for i in range(n):
        s = rt.reduce_sum(L[i, :i] * x[:i])
        x = x + rt.one_hot(i, size, dtype=b.dtype) * ((b[i] - s) / L[i, i])
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cholesky_then_forward_substitution(dtype):
    A = SPD3.astype(dtype)
    L = check(cholesky, A)
    check(forward_substitution, L.numpy(), f64(1, 2, 3).astype(dtype), np.int32(3))
    check(forward_substitution, L.numpy(), f64(1, 2, 3).astype(dtype), np.int32(0))


def test_cholesky_rejects_an_indefinite_matrix():
    check(cholesky, f64([1, 2], [2, 1]), raises=AssertionError)


# -- quadrature ------------------------------------------------------------------------------------

def trapezoid(f, a, b, n):
    assert n > 0, "need at least one interval"
    h = (b - a) / n
    total = 0.5 * (f(a) + f(b))
    for i in range(1, n):
        total += f(a + i * h)
    return total * h


def simpson(f, a, b, n):
    if n % 2 == 1:
        print(f"simpson: odd n={n}, using {n + 1} intervals")
        n += 1
    h = (b - a) / n
    total = f(a) + f(b)
    for i in range(1, n):
        weight = 4 if i % 2 == 1 else 2
        total += weight * f(a + i * h)
    return total * h / 3


def gaussian(x):
    return rt.exp(-x * x / 2)


@pytest.mark.parametrize("rule", [trapezoid, simpson])
@pytest.mark.parametrize("a, b, n", [
    (np.float64(0.0), np.float64(2.0), np.int32(64)),
    (np.float64(1.0), np.float64(-1.0), np.int32(1)),           # reversed limits, one interval
    (np.float64(-1.0), np.float64(1.5), np.int64(7)),
    (np.float32(-1.0), np.float32(1.5), py(7)),                 # h stays float32: unrolled
])
def test_composite_rules(rule, a, b, n):
    check(rule, py(gaussian), a, b, n)


def test_float32_limits_with_an_int32_count_keep_the_sum_float32():
    """float32 / int32 is float32 (numpy's is float64, which would change the dtype of the
    loop variable `total`): the converted function agrees with the eager run on tensors."""
    args = (py(gaussian), np.float32(-1.0), np.float32(1.5), np.int32(7))
    result = check(trapezoid, *args, reference_tensors=True)
    assert result.dtype == rt.float32


def test_trapezoid_asserts_a_positive_count():
    check(trapezoid, py(gaussian), np.float64(0.0), np.float64(1.0), np.int32(0),
          raises=AssertionError)


def adaptive_simpson(f, a, b, eps, max_depth):
    """Recursive adaptive Simpson: the depth is a Python number, the test a tensor."""
    def panel(lo, hi, f_lo, f_mid, f_hi):
        return (hi - lo) / 6 * (f_lo + 4 * f_mid + f_hi)

    def refine(lo, hi, f_lo, f_mid, f_hi, whole, eps, depth):
        mid = (lo + hi) / 2
        f_lm, f_rm = f((lo + mid) / 2), f((mid + hi) / 2)
        left = panel(lo, mid, f_lo, f_lm, f_mid)
        right = panel(mid, hi, f_mid, f_rm, f_hi)
        delta = left + right - whole
        if depth == 0 or abs(delta) <= 15 * eps:
            return left + right + delta / 15
        return (refine(lo, mid, f_lo, f_lm, f_mid, left, eps / 2, depth - 1)
                + refine(mid, hi, f_mid, f_rm, f_hi, right, eps / 2, depth - 1))

    fa, fm, fb = f(a), f((a + b) / 2), f(b)
    return refine(a, b, fa, fm, fb, panel(a, b, fa, fm, fb), eps, max_depth)


@pytest.mark.parametrize("a, b, eps", [
    (np.float64(0.0), np.float64(3.0), np.float64(1e-6)),
    (np.float64(0.0), np.float64(3.0), np.float64(1.0)),       # the first panel is enough
    (np.float32(-2.0), np.float32(1.0), np.float32(1e-4)),
])
def test_adaptive_simpson_with_python_depth(a, b, eps):
    check(adaptive_simpson, py(lambda x: rt.sin(x) * x * x), a, b, eps, py(4))


def trapezoid_sampled(x, y):
    """The area under sampled data, with a running list of partial areas."""
    partial = []
    area = 0.0
    for i in range(len(x) - 1):
        area += (x[i + 1] - x[i]) * (y[i] + y[i + 1]) / 2
        partial.append(area)
    return area, rt.stack(partial)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_trapezoid_on_samples(dtype):
    x = np.array([0.0, 0.1, 0.35, 0.5, 0.9, 1.0], dtype)
    check(trapezoid_sampled, x, (x ** 2).astype(dtype))


# -- ODE integration -------------------------------------------------------------------------------

def euler_logistic(y0, r, capacity, h, n_steps):
    ys = [y0]
    y = y0
    for _ in range(n_steps):
        y = y + h * r * y * (1 - y / capacity)
        ys.append(y)
    return rt.stack(ys)


@pytest.mark.parametrize("y0, n_steps", [
    (np.float32(0.1), np.int32(50)), (np.float64(0.1), np.int32(50)),
    (np.float64(12.0), np.int32(10)),         # starts above capacity
    (np.float32(0.5), np.int32(0)),
])
def test_euler_logistic_growth(y0, n_steps):
    check(euler_logistic, y0, y0.dtype.type(1.5), y0.dtype.type(10.0), y0.dtype.type(0.1),
          n_steps)


def rk4_oscillator(state, omega, h, n_steps, report_every):
    def deriv(s):
        return rt.stack([s[1], -omega * omega * s[0]])

    trajectory = []
    t = 0.0
    for k in range(n_steps):
        k1 = deriv(state)
        k2 = deriv(state + h / 2 * k1)
        k3 = deriv(state + h / 2 * k2)
        k4 = deriv(state + h * k3)
        state = state + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += h
        trajectory.append(state)
        if (k + 1) % report_every == 0:
            energy = 0.5 * (state[1] ** 2 + omega ** 2 * state[0] ** 2)
            print(f"t={t:.2f} x={state[0]:+.5f} energy={energy:.8f}")
    return rt.stack(trajectory), t


@pytest.mark.parametrize("state, n_steps, report_every", [
    (f64(1.0, 0.0), np.int32(40), np.int32(10)),
    (f32(0.0, 2.0), np.int32(25), np.int32(5)),
    (f64(1.0, -1.0), np.int32(1), np.int32(1)),
])
def test_rk4_harmonic_oscillator(state, n_steps, report_every):
    dt = state.dtype.type
    check(rk4_oscillator, state, dt(2.0), dt(0.05), n_steps, report_every)


class Integrator:
    """An explicit integrator object holding the time and state, the way simulations are
    often organized: the step is a method, the loop lives in a driver function."""

    def __init__(self, rhs, y, dt):
        self.rhs, self.y, self.dt = rhs, y, dt
        self.t = 0.0
        self.steps = 0

    def advance(self):
        k1 = self.rhs(self.t, self.y)
        k2 = self.rhs(self.t + self.dt, self.y + self.dt * k1)
        self.y = self.y + self.dt / 2 * (k1 + k2)          # Heun's method
        self.t = self.t + self.dt
        self.steps += 1


def integrate_until(y0, dt, t_end):
    sim = Integrator(lambda t, y: -2.0 * y + rt.sin(t), y0, dt)
    while sim.t < t_end:
        sim.advance()
    return sim.t, sim.y, sim.steps


# Attributes a called method assigns (self.t = ... in sim.advance()) are loop state of the
# caller's tensor loop (reduced: run_clock below; also test_equivalence_calls.py's
# method_assigns_attribute_in_tensor_loop).
@pytest.mark.parametrize("y0, dt, t_end", [
    (np.float64(1.0), np.float64(0.1), np.float64(1.0)),
    (np.float32(-1.0), np.float32(0.05), np.float32(0.5)),
    (np.float64(1.0), np.float64(0.1), np.float64(0.0)),       # nothing to do
])
def test_integrator_object_driven_by_a_while_loop(y0, dt, t_end):
    check(integrate_until, y0, dt, t_end)


# -- dynamic programming ---------------------------------------------------------------------------

def edit_distance(a, b, verbose):
    """Levenshtein distance, one DP row at a time (rows grown as lists, then stacked)."""
    n, m = len(a), len(b)
    prev = rt.range(m + 1)
    for i in range(1, n + 1):
        row = [i]
        left = i
        for j in range(1, m + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            left = min(prev[j] + 1, left + 1, prev[j - 1] + cost)
            row.append(left)
        prev = rt.stack(row)
        if verbose:
            print(f"row {i}: {prev}")
    return prev[m]


@pytest.mark.parametrize("a, b", [
    (i32(1, 2, 3, 4, 5), i32(1, 3, 4, 6)),
    (i32(7, 7, 7), i32(7, 7, 7)),
    (i32(1, 2), i32(3, 4, 5, 6, 7)),
    (i32(5), i32(6)),
])
def test_edit_distance(a, b):
    check(edit_distance, a, b, py(True))


def lcs_table(a, b):
    """The full longest-common-subsequence table, built row by row."""
    m = len(b)
    prev = rt.zeros([m + 1], dtype=rt.int32)
    table = [prev]
    for x in a:
        row = [0]
        for j in range(1, m + 1):
            if x == b[j - 1]:
                row.append(prev[j - 1] + 1)
            else:
                row.append(max(prev[j], row[-1]))
        prev = rt.stack(row)
        table.append(prev)
    return table[-1][m], rt.stack(table)


@pytest.mark.parametrize("a, b", [
    (i32(1, 3, 4, 1, 2, 1, 3), i32(3, 4, 1, 2, 1, 3)),
    (i32(1, 2, 3), i32(4, 5)),
    (i32(2), i32(2, 2, 2)),
])
def test_longest_common_subsequence_table(a, b):
    check(lcs_table, a, b)


def knapsack(weights, values, capacity):
    """0/1 knapsack over capacities 0..capacity, one item at a time, vectorized over
    capacities (dp[c] = max(dp[c], dp[c - w] + v) for c >= w)."""
    caps = rt.range(capacity + 1)
    dp = rt.zeros([capacity + 1], dtype=values.dtype)
    for w, v in zip(weights, values):
        if w > capacity:
            print(f"item of weight {w} never fits")
            continue
        shifted = rt.gather(dp, rt.maximum(caps - w, 0))
        dp = rt.where(caps >= w, rt.maximum(dp, shifted + v), dp)
    return dp[capacity], dp


@pytest.mark.parametrize("weights, values, capacity", [
    (i32(1, 3, 4, 5), i32(1, 4, 5, 7), py(7)),
    (i32(2, 20, 3), f32(3.5, 100.0, 1.25), py(5)),
    (i32(9, 9), i64(5, 6), py(4)),                      # nothing fits
])
def test_knapsack(weights, values, capacity):
    check(knapsack, weights, values, capacity)


def longest_increasing_run_and_subsequence(xs):
    """Two classics in one pass: the longest strictly increasing contiguous run, and the
    longest increasing subsequence by the quadratic DP kept in a vector."""
    n = xs.shape[0]
    best = rt.zeros([n], dtype=rt.int32)
    run, longest_run = 0, 0
    for i in range(n):
        if i > 0 and xs[i] > xs[i - 1]:
            run += 1
        else:
            run = 1
        longest_run = max(longest_run, run)
        length = 1
        for j in range(i):
            if xs[j] < xs[i]:
                length = max(length, best[j] + 1)
        best = rt.where(rt.range(n) == i, length, best)
    return longest_run, rt.reduce_max(best)


@pytest.mark.parametrize("xs", [
    f32(3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5), i32(1, 2, 3, 4), i32(4, 3, 2, 1), f64(-1.5),
])
def test_longest_increasing_run_and_subsequence(xs):
    check(longest_increasing_run_and_subsequence, xs)


def coin_change_ways(coins, amount):
    """The number of ways to make each amount, with a Python list indexed by Python ints
    and coins from a tensor."""
    ways = [1] + [0] * amount
    for coin in coins:
        for a in range(1, amount + 1):
            if a >= coin:
                ways[a] = ways[a] + rt.gather(rt.stack(ways), rt.maximum(a - coin, 0))
    return rt.stack(ways)


def test_coin_change_ways():
    check(coin_change_ways, i32(1, 2, 5), py(11))
    check(coin_change_ways, i32(3), py(7))


# -- scans -----------------------------------------------------------------------------------------

def max_drawdown(prices):
    """The largest fall from a running peak, and where it ended."""
    peak = prices[0]
    worst, worst_at = 0.0, 0
    for t, p in enumerate(prices):
        peak = max(peak, p)
        drawdown = (peak - p) / peak
        if drawdown > worst:
            worst, worst_at = drawdown, t
    return worst, worst_at


@pytest.mark.parametrize("prices", [
    f32(100, 110, 105, 120, 90, 95, 130, 80), f64(1, 2, 3, 4), f64(5, 4, 3, 2), f32(7),
])
def test_max_drawdown(prices):
    check(max_drawdown, prices)


def kadane(xs):
    """Maximum subarray sum with its bounds."""
    best = xs[0]
    best_start, best_end = 0, 0
    current, start = 0, 0
    for i in range(len(xs)):
        if current <= 0:
            current, start = xs[i], i
        else:
            current += xs[i]
        if current > best:
            best, best_start, best_end = current, start, i
    return {"sum": best, "start": best_start, "end": best_end}


@pytest.mark.parametrize("xs", [
    i32(-2, 1, -3, 4, -1, 2, 1, -5, 4), i32(-3, -1, -2), f64(2.5, -1.0, 2.5), i64(0),
])
def test_maximum_subarray(xs):
    check(kadane, xs)


# -- sorting ---------------------------------------------------------------------------------------

def odd_even_transposition_sort(values, max_rounds):
    """Sort a Python list of scalars in place with compare-and-swap rounds, stopping early
    once a round swaps nothing; prints each round's swaps."""
    a = [values[i] for i in range(values.shape[0])]
    total_swaps = 0
    for r in range(max_rounds):
        swaps = 0
        for i in range(len(a) - 1):
            if i % 2 == r % 2 and a[i] > a[i + 1]:
                a[i], a[i + 1] = a[i + 1], a[i]
                swaps += 1
        print(f"round {r}: {swaps} swaps")
        total_swaps += swaps
        if swaps == 0 and r > 0:
            break
    return rt.stack(a), total_swaps


@pytest.mark.parametrize("values, max_rounds", [
    (i32(5, 1, 4, 2, 8, 0), np.int32(10)),
    (f32(0.5, -1.5, 3.25, 3.25, -7.0), np.int32(10)),
    (i32(1, 2, 3), np.int32(10)),                     # sorted: stops after round 1
    (f64(3, 2, 1), np.int32(1)),                      # not enough rounds
    (i64(9, 8), np.int32(0)),
])
def test_odd_even_transposition_sort(values, max_rounds):
    check(odd_even_transposition_sort, values, max_rounds)


def selection_sort_by_permutation(v):
    """Selection sort on a tensor: find the minimum of the unsorted tail with argmin, swap
    it into place by gathering with a permutation; count the swaps actually done."""
    n = v.shape[0]
    idx = rt.range(n)
    swaps = 0
    big = rt.reduce_max(v) + 1
    for i in range(n - 1):
        j = rt.argmin(rt.where(idx >= i, v, big), output_type=rt.int32)
        if j != i:
            perm = rt.where(idx == i, j, rt.where(idx == j, i, idx))
            v = rt.gather(v, perm)
            swaps += 1
    return v, swaps


@pytest.mark.parametrize("v", [
    i32(4, 2, 7, 1, 3), f64(1.0, 2.0, 3.0), f32(2.5, -1.0, 2.5, 0.0), i64(3),
])
def test_selection_sort_by_permutation(v):
    check(selection_sort_by_permutation, v)


# -- number theory ---------------------------------------------------------------------------------

def sieve(n):
    """Sieve of Eratosthenes on a boolean vector; returns the prime count and the mask."""
    idx = rt.range(n)
    is_prime = idx >= 2
    p = 2
    while p * p < n:
        if is_prime[p]:
            is_prime = is_prime & ~((idx % p == 0) & (idx > p))
        p += 1
    return rt.reduce_sum(rt.cast(is_prime, rt.int32)), is_prime


@pytest.mark.parametrize("n", [np.int32(50), np.int32(2), np.int32(0), np.int64(101)])
def test_sieve_of_eratosthenes(n):
    check(sieve, n)


def lcm_of(values):
    """The least common multiple of a vector, by Euclid's algorithm for each gcd."""
    result = values[0]
    for v in values[1:]:
        a, b = result, v
        while b != 0:
            a, b = b, a % b
        result = result // a * v
    return result


@pytest.mark.parametrize("values", [
    i32(4, 6, 10), i64(2, 3, 5, 7, 11, 13, 17, 19, 23), i32(12), i64(21, 6, 84, 9),
])
def test_lcm_of_a_vector(values):
    check(lcm_of, values)


def pisano_period(m):
    """The period of the Fibonacci numbers modulo m: an early return from a tensor loop."""
    a, b = 0, 1
    for i in range(m * m):
        a, b = b, (a + b) % m
        if a == 0 and b == 1:
            return i + 1
    return -1


@pytest.mark.parametrize("m", [
    np.int32(2), np.int32(3), np.int32(10), np.int32(1), np.int32(0),
    np.int64(7),                # `a, b = b, ...`: a takes its dtype from another weak number
])
def test_pisano_period(m):
    check(pisano_period, m)


def modpow(base, exp, mod):
    result = 1
    base = base % mod
    while exp > 0:
        if exp % 2 == 1:
            result = result * base % mod
        base = base * base % mod
        exp //= 2
    return result


def is_probable_prime(n):
    """Deterministic Miller-Rabin for n < 3.4e14: early returns from Python loops over
    witnesses, around tensor loops with for/else."""
    if n < 2:
        return False
    for p in (2, 3, 5, 7, 11, 13, 17):
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in (2, 3, 5, 7, 11, 13, 17):
        x = modpow(a, d, n)
        if x == 1 or x == n - 1:
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


@pytest.mark.parametrize("n", [0, 1, 2, 9, 97, 561, 7919, 1_373_653, 25_326_001,
                               1_000_003, 999_999_937, 2_147_483_647])
def test_miller_rabin(n):
    check(is_probable_prime, np.int64(n))


def test_modpow_int32_and_int64():
    check(modpow, np.int32(3), np.int32(200), np.int32(1000))
    check(modpow, np.int64(123456789), np.int64(10**9), np.int64(998244353))
    check(modpow, np.int64(5), np.int64(0), np.int64(7))


# -- Monte Carlo with seeded random ops ------------------------------------------------------------

def check_random(f, *args, seed):
    """Random programs: the plain run and a fresh conversion, each after set_seed(seed),
    draw the same numbers (each seeded op continues one sequence eagerly, and a graph op
    owns its generator), so they must agree like the deterministic programs."""
    rt.random.set_seed(seed)
    expected, expected_text = _run(f, [_reference_args(a) for a in args])
    rt.random.set_seed(seed)
    actual, actual_text = _run(ag.convert(f), [_tensor_args(a) for a in args])
    assert actual_text == expected_text, \
        f"printed text differs:\n--- plain\n{expected_text}--- converted\n{actual_text}"
    assert_same(expected, actual)
    return expected


def monte_carlo_pi(batch, max_batches, target_error, report_every):
    """Estimate pi by batches of random points until the standard error is small."""
    hits, total = 0, 0
    estimate, stderr = 0.0, 1.0
    for b in range(max_batches):
        pts = rt.random.uniform([batch, 2], seed=11, dtype=rt.float64)
        hits += rt.reduce_sum(rt.cast(rt.reduce_sum(pts * pts, axis=1) <= 1.0, rt.int32))
        total += batch
        p = hits / total
        estimate = 4 * p
        stderr = 4 * rt.sqrt(p * (1 - p) / total)
        if (b + 1) % report_every == 0:
            print(f"batch {b + 1}: pi ~ {estimate:.5f} +- {stderr:.5f}")
        if stderr < target_error:
            break
    return estimate, stderr, total


@pytest.mark.parametrize("max_batches, target_error", [
    (np.int32(80), np.float64(0.03)), (np.int32(3), np.float64(1e-9)),
    (np.int32(0), np.float64(0.1)),
])
def test_monte_carlo_pi_until_precise(max_batches, target_error, keep_global_seed):
    check_random(monte_carlo_pi, np.int32(64), max_batches, target_error, np.int32(10), seed=5)


def random_walk_to_barrier(barrier, max_steps, drift):
    """A biased walk with unit steps until it leaves (-barrier, barrier)."""
    position = 0
    path = [position]
    for step in range(max_steps):
        u = rt.random.uniform([], seed=2)
        position += 1 if u < 0.5 + drift else -1
        path.append(position)
        if abs(position) >= barrier:
            side = 1 if position > 0 else -1
            print(f"hit the {side:+d} barrier at step {step + 1}")
            break
    return position, rt.stack(path)


@pytest.mark.parametrize("barrier, max_steps, drift", [
    (np.int32(5), np.int32(200), np.float32(0.2)),
    (np.int32(4), np.int32(200), np.float32(-0.3)),
    (np.int32(50), np.int32(10), np.float32(0.0)),      # never reaches it
    (np.int32(1), np.int32(10), np.float32(0.0)),       # breaks at the first step
])
def test_random_walk_to_a_barrier(barrier, max_steps, drift, keep_global_seed):
    check_random(random_walk_to_barrier, barrier, max_steps, drift, seed=9)


def simulated_annealing(x, temperature, cooling, n_steps):
    """Minimize a bumpy 1-D function: accept a random move if it is better, or with the
    Metropolis probability; keep the best point seen."""
    def energy(v):
        return v * v + 2 * rt.sin(5 * v)

    e = energy(x)
    best_x, best_e = x, e
    accepted = 0
    for step in range(n_steps):
        candidate = x + rt.random.normal([], stddev=0.5, seed=4, dtype=x.dtype)
        e_new = energy(candidate)
        u = rt.random.uniform([], seed=8, dtype=x.dtype)
        if e_new < e or u < rt.exp((e - e_new) / temperature):
            x, e = candidate, e_new
            accepted += 1
            if e < best_e:
                best_x, best_e = x, e
        temperature *= cooling
    return best_x, best_e, accepted


@pytest.mark.parametrize("x, n_steps", [
    (np.float64(2.0), np.int32(60)), (np.float32(-1.5), np.int32(30)),
    (np.float64(0.5), np.int32(0)),
])
def test_simulated_annealing(x, n_steps, keep_global_seed):
    t = x.dtype.type
    check_random(simulated_annealing, x, t(1.0), t(0.95), n_steps, seed=21)


# -- clustering, probabilities, piecewise functions ------------------------------------------------

def kmeans(points, centers, max_steps, tol):
    """Lloyd's algorithm; an empty cluster keeps its center."""
    k = centers.shape[0]
    labels = rt.zeros([points.shape[0]], dtype=rt.int32)
    for step in range(max_steps):
        d = rt.reduce_sum(rt.square(points[:, None, :] - centers[None, :, :]), axis=2)
        labels = rt.argmin(d, axis=1, output_type=rt.int32)
        new_centers = []
        for c in range(k):
            mask = rt.cast(labels == c, points.dtype)
            count = rt.reduce_sum(mask)
            if count > 0:
                new_centers.append(rt.reduce_sum(points * mask[:, None], axis=0) / count)
            else:
                new_centers.append(centers[c])
        new_centers = rt.stack(new_centers)
        shift = rt.reduce_max(abs(new_centers - centers))
        centers = new_centers
        print(f"step {step}: shift {shift:.6f}")
        if shift < tol:
            break
    inertia = rt.reduce_sum(rt.reduce_min(
        rt.reduce_sum(rt.square(points[:, None, :] - centers[None, :, :]), axis=2), axis=1))
    return centers, labels, inertia


BLOBS = f64([0.0, 0.1], [0.2, -0.1], [-0.1, 0.0], [5.0, 5.1], [5.2, 4.9], [4.8, 5.0],
            [0.1, 5.0], [-0.2, 5.2])


@pytest.mark.parametrize("centers, max_steps", [
    (f64([0, 0], [5, 5], [0, 5]), np.int32(10)),
    (f64([1, 1], [2, 2], [100, 100]), np.int32(10)),     # one cluster stays empty
    (f64([0, 0], [5, 5]), np.int32(1)),
    (f64([0, 0], [5, 5]), np.int32(0)),
])
def test_kmeans(centers, max_steps):
    check(kmeans, BLOBS, centers, max_steps, np.float64(1e-9))
    check(kmeans, BLOBS.astype(np.float32), centers.astype(np.float32), max_steps,
          np.float32(1e-6))


def logsumexp(x):
    m = rt.reduce_max(x)
    if m == -math.inf:
        return m                    # every entry is -inf: avoid inf - inf
    return m + rt.log(rt.reduce_sum(rt.exp(x - m)))


def sample_probabilities(logits, temperature):
    """Softmax with a temperature; temperature 0 is greedy (one-hot of the argmax)."""
    assert temperature >= 0, "temperature must be non-negative"
    if temperature == 0:
        return rt.one_hot(rt.argmax(logits), logits.shape[0], dtype=logits.dtype)
    z = logits / temperature
    return rt.exp(z - logsumexp(z))


@pytest.mark.parametrize("logits", [
    f32(1.0, 2.0, 3.0), f64(1000.0, 1001.0, 999.0), f64(-1000.0, -1000.5, -2000.0),
    f32(-np.inf, 0.0, -np.inf), f64(-np.inf, -np.inf),
])
@pytest.mark.parametrize("temperature", [1.0, 0.5, 0.0])
def test_softmax_with_temperature(logits, temperature):
    check(logsumexp, logits)
    with np.errstate(invalid="ignore"):
        check(sample_probabilities, logits, logits.dtype.type(temperature))


def test_negative_temperature_is_rejected():
    check(sample_probabilities, f32(1, 2), np.float32(-1.0), raises=AssertionError)


def softplus_stable(x):
    """log(1 + e^x) without overflow: the branches a careful user writes."""
    if x > 30:
        return x
    elif x < -30:
        return rt.exp(x)
    else:
        return rt.log(1 + rt.exp(x))


@pytest.mark.parametrize("x", [np.float32(50.0), np.float64(-40.0), np.float64(0.3),
                               np.float32(-30.0), np.float64(30.0)])
def test_softplus_with_stability_branches(x):
    check(softplus_stable, x)


BRACKETS = ((10_000.0, 0.0), (40_000.0, 0.1), (100_000.0, 0.2), (None, 0.35))


def income_tax(income):
    """Progressive tax over a Python table of brackets: a tensor `break` out of a Python
    loop, `None` for the open bracket."""
    assert income >= 0, "income must be non-negative"
    tax = 0.0
    lower = 0.0
    for upper, rate in BRACKETS:
        if upper is None or income <= upper:
            tax += (income - lower) * rate
            break
        tax += (upper - lower) * rate
        lower = upper
    marginal = rate
    return tax, marginal


@pytest.mark.parametrize("income", [np.float64(0.0), np.float64(9_999.0),
                                    np.float64(40_000.0), np.float32(75_500.0),
                                    np.float64(1e6)])
def test_income_tax_brackets(income):
    check(income_tax, income)


def test_income_tax_rejects_negative_income():
    check(income_tax, np.float64(-1.0), raises=AssertionError)


# -- normalization and running statistics ----------------------------------------------------------

def minmax_rows(X):
    """Scale each row to [0, 1]; a constant row becomes zeros."""
    rows = []
    for row in X:
        lo, hi = rt.reduce_min(row), rt.reduce_max(row)
        span = hi - lo
        rows.append((row - lo) / span if span > 0 else rt.zeros_like(row))
    return rt.stack(rows)


def robust_zscore(x, k):
    mean = rt.reduce_mean(x)
    std = rt.sqrt(rt.reduce_mean(rt.square(x - mean)))
    std = std if std > 1e-12 else 1.0
    z = (x - mean) / std
    clipped = rt.reduce_sum(rt.cast(abs(z) > k, rt.int32))
    if clipped > 0:
        print(f"clipping {clipped} of {len(x)} values beyond {k} sigma")
    return rt.clip_by_value(z, -k, k)


@pytest.mark.parametrize("X", [
    f32([1, 2, 3], [5, 5, 5], [-1, 0, 4]), f64([0.5, 0.25], [2, 2]), f32([7, 8, 9]),
])
def test_minmax_rows(X):
    check(minmax_rows, X)


@pytest.mark.parametrize("x, k", [
    (f32(1, 2, 3, 4, 100), np.float32(1.5)), (f64(3, 3, 3), np.float64(2.0)),
    (f64(-1, 1, -1, 1), np.float64(3.0)),
])
def test_robust_zscore(x, k):
    check(robust_zscore, x, k)


def running_covariance(X):
    """Welford's algorithm for the mean and covariance of the columns, over the rows."""
    n = 0
    mean = rt.zeros([X.shape[1]], dtype=X.dtype)
    m2 = rt.zeros([X.shape[1], X.shape[1]], dtype=X.dtype)
    for row in X:
        n += 1
        delta = row - mean
        mean = mean + delta / n
        m2 = m2 + delta[:, None] * (row - mean)[None, :]
    cov = m2 / (n - 1) if n > 1 else m2 * math.nan
    return {"n": n, "mean": mean, "cov": cov}


@pytest.mark.parametrize("X", [
    f64([1, 2], [2, 4.5], [3, 5.5], [4, 9]), f32([0.5, -1, 2], [1.5, 0, 2], [2.5, 2, 2]),
    f64([1, 2]),                                           # one row: nan covariance
])
def test_running_covariance(X):
    check(running_covariance, X)


def column_extremes_and_counts(X, threshold):
    """Per-column running minimum and maximum, and how many rows exceed a threshold in
    every column, with `continue` for rows containing a nan."""
    lo = X[0]
    hi = X[0]
    above, skipped = 0, 0
    for row in X:
        if rt.reduce_any(row != row):
            skipped += 1
            continue
        lo = rt.minimum(lo, row)
        hi = rt.maximum(hi, row)
        if rt.reduce_all(row > threshold):
            above += 1
    return lo, hi, above, skipped


@pytest.mark.parametrize("X", [
    f32([1, 5], [3, 2], [4, 6]), f64([2, 2], [np.nan, 9], [1, 3]), i32([4, -1], [0, 8]),
])
def test_column_extremes(X):
    check(column_extremes_and_counts, X, X.dtype.type(1))


# -- reports and printed text ----------------------------------------------------------------------

def print_table(xs, ys):
    """A fixed-width table of values with a sign column and a total line."""
    print(f"{'i':>3} | {'x':>8} | {'y':>11}")
    print("-" * 28)
    total = 0.0
    for i in range(len(xs)):
        if ys[i] >= 0:
            print(f"{i:>3} | {xs[i]:8.3f} | {ys[i]:11.4e} +")
        else:
            print(f"{i:>3} | {xs[i]:8.3f} | {ys[i]:11.4e} -")
        total += ys[i]
    print(f"{'sum':>3} | {'':>8} | {total:11.4e}")
    return total


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_printed_table(dtype):
    xs = np.linspace(-1, 1, 5).astype(dtype)
    check(print_table, xs, (xs ** 3 - xs / 3).astype(dtype))


def amortization(principal, annual_rate, payment):
    """Months to pay off a loan, with a yearly report; refuses a payment that does not
    cover the interest."""
    r = annual_rate / 12
    if payment <= principal * r:
        print(f"a payment of {payment:.2f} never pays off {principal:,.2f}")
        return -1, 0.0
    balance = principal
    month = 0
    total_interest = 0.0
    while balance > 0:
        interest = balance * r
        total_interest += interest
        balance = balance + interest - payment
        month += 1
        if month % 12 == 0:
            print(f"year {month // 12:2d}: balance {max(balance, 0.0):>12,.2f}")
    return month, total_interest


@pytest.mark.parametrize("principal, rate, payment", [
    (np.float64(250_000.0), np.float64(0.045), np.float64(1_900.0)),
    (np.float32(10_000.0), np.float32(0.07), np.float32(300.0)),
    (np.float64(1_000.0), np.float64(0.05), np.float64(5_000.0)),     # paid in one month
    (np.float64(100_000.0), np.float64(0.12), np.float64(1_000.0)),   # interest only
])
def test_loan_amortization(principal, rate, payment):
    check(amortization, principal, rate, payment)


# -- learning rules and optimization ---------------------------------------------------------------

def perceptron(X, y, max_epochs):
    """Rosenblatt's rule until an epoch without mistakes."""
    w = rt.zeros([X.shape[1]], dtype=X.dtype)
    b = 0.0
    epochs = 0
    for epoch in range(max_epochs):
        mistakes = 0
        for xi, yi in zip(X, y):
            if yi * (rt.reduce_sum(w * xi) + b) <= 0:
                w = w + yi * xi
                b = b + yi
                mistakes += 1
        epochs += 1
        print(f"epoch {epoch}: {mistakes} mistakes, w = {w}")
        if mistakes == 0:
            break
    return w, b, epochs


SEPARABLE = f32([2, 1], [3, 4], [-1, -2], [-2, 1], [1, -3], [0.5, 2])
LABELS = f32(1, 1, -1, -1, 1, 1)


@pytest.mark.parametrize("max_epochs", [np.int32(20), np.int32(1), np.int32(0)])
@pytest.mark.parametrize("dtype", [
    np.float32,
    np.float64,                 # an inner tensor loop gives a weak number its dtype
])
def test_perceptron(max_epochs, dtype):
    check(perceptron, SEPARABLE.astype(dtype), LABELS.astype(dtype), max_epochs)


def minimize_quadratic_with_tape(Q, c, x, lr, tol, max_steps):
    """Gradient descent on 1/2 x'Qx - c'x with gradients from a tape; stops on a small
    gradient norm."""
    for step in range(max_steps):
        with rt.GradientTape() as tape:
            tape.watch(x)
            loss = 0.5 * rt.reduce_sum(x * rt.matmul(Q, x[:, None])[:, 0]) \
                - rt.reduce_sum(c * x)
        g = tape.gradient(loss, x)
        if rt.sqrt(rt.reduce_sum(g * g)) < tol:
            print(f"converged after {step} steps, loss {loss:.6f}")
            break
        x = x - lr * g
    return x


@pytest.mark.parametrize("x, lr, max_steps", [
    (f64(0, 0, 0), np.float64(0.2), np.int32(500)),
    (f32(1, -1, 2), np.float32(0.1), np.int32(20)),
    (np.linalg.solve(SPD3, f64(1, 2, 3)), np.float64(0.2), np.int32(50)),   # at the minimum
])
def test_gradient_descent_with_a_tape(x, lr, max_steps):
    Q, c = SPD3.astype(x.dtype), f64(1, 2, 3).astype(x.dtype)
    result = check(minimize_quadratic_with_tape, Q, c, x, lr, x.dtype.type(1e-6), max_steps,
                   reference_tensors=True)
    if max_steps == 500:
        np.testing.assert_allclose(result.numpy(), np.linalg.solve(SPD3, f64(1, 2, 3)),
                                   rtol=1e-5)


def rosenbrock(p):
    x, y = p[0], p[1]
    return (1 - x) ** 2 + 100 * (y - x * x) ** 2


def rosenbrock_grad(p):
    x, y = p[0], p[1]
    return rt.stack([-2 * (1 - x) - 400 * x * (y - x * x), 200 * (y - x * x)])


def descent_with_backtracking(p, max_iter, tol):
    """Steepest descent with an Armijo line search: a while loop inside a for loop."""
    f = rosenbrock(p)
    iters = 0
    halvings = 0
    for it in range(max_iter):
        g = rosenbrock_grad(p)
        gg = rt.reduce_sum(g * g)
        if gg < tol * tol:
            break
        t = 1.0
        while rosenbrock(p - t * g) > f - 1e-4 * t * gg:
            t *= 0.5
            halvings += 1
        p = p - t * g
        f = rosenbrock(p)
        iters += 1
    return p, f, iters, halvings


@pytest.mark.parametrize("p, max_iter", [
    (f64(-1.2, 1.0), np.int32(200)), (f32(0.0, 0.0), np.int32(50)),
    (f64(1.0, 1.0), np.int32(10)),          # the minimum: breaks at once
])
def test_steepest_descent_with_armijo_backtracking(p, max_iter):
    check(descent_with_backtracking, p, max_iter, p.dtype.type(1e-8))


# -- simulations -----------------------------------------------------------------------------------

def heat_equation(u, alpha, n_steps, report_every):
    """Explicit finite differences for u_t = u_xx with fixed ends."""
    assert alpha <= 0.5, "the explicit scheme is unstable for alpha > 1/2"
    for step in range(n_steps):
        interior = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
        u = rt.concat([u[:1], interior, u[-1:]], axis=0)
        if step % report_every == 0:
            print(f"step {step:3d}: peak {rt.reduce_max(u):.6f}, heat {rt.reduce_sum(u):.6f}")
    return u


@pytest.mark.parametrize("u, n_steps", [
    (f64(0, 0, 1, 4, 1, 0, 0), np.int32(30)), (f32(1, 0, 0, 0, 0, 2), np.int32(12)),
    (f64(0, 5, 0), np.int32(0)),
])
def test_heat_equation(u, n_steps):
    check(heat_equation, u, u.dtype.type(0.25), n_steps, np.int32(5))


def test_heat_equation_asserts_stability():
    check(heat_equation, f64(0, 1, 0), np.float64(0.7), np.int32(3), np.int32(1),
          raises=AssertionError)


def elementary_automaton(cells, rule, steps):
    """Wolfram's elementary cellular automaton on a ring; the rule number is a tensor."""
    history = [cells]
    for _ in range(steps):
        left = rt.concat([cells[-1:], cells[:-1]], 0)
        right = rt.concat([cells[1:], cells[:1]], 0)
        pattern = 4 * left + 2 * cells + right
        cells = rule // 2 ** pattern % 2
        history.append(cells)
    return rt.stack(history)


@pytest.mark.parametrize("rule", [np.int32(30), np.int32(90), np.int32(110), np.int32(0)])
def test_elementary_cellular_automaton(rule):
    cells = np.zeros(11, np.int32)
    cells[5] = 1
    check(elementary_automaton, cells, rule, np.int32(6))
    check(elementary_automaton, cells, rule, np.int32(0))


def leaky_integrate_and_fire(currents, dt, tau, threshold, refractory):
    """A spiking neuron: integrate, spike and reset, then stay silent for a while."""
    v = 0.0
    cooldown = 0
    spikes = []
    for t, current in enumerate(currents):
        if cooldown > 0:
            cooldown -= 1
            continue
        v += dt * (current - v) / tau
        if v >= threshold:
            spikes.append(t)
            v = 0.0
            cooldown = refractory
    print(f"{len(spikes)} spikes, final potential {v:.4f}")
    return v, rt.stack(spikes)


@pytest.mark.parametrize("currents, refractory", [
    (np.full(60, 1.5, np.float32), np.int32(3)),
    # float64, given to a weak number in a tensor `if` of a loop that also carries a list
    (np.concatenate([np.zeros(10), np.full(30, 2.5)]), np.int32(0)),
    (np.linspace(0, 3, 40, dtype=np.float32), np.int32(2)),
])
def test_leaky_integrate_and_fire(currents, refractory):
    t = currents.dtype.type
    check(leaky_integrate_and_fire, currents, t(0.5), t(5.0), t(1.0), refractory)


# -- series, integer algorithms, matrix powers -----------------------------------------------------

def exp_by_series(x, tol):
    """exp(x) by scaling and squaring around a Taylor series summed to a tolerance."""
    negative = x < 0
    x = abs(x)
    halvings = 0
    while x > 0.5:
        x = x / 2
        halvings += 1
    term, total, n = 1.0, 1.0, 0
    while abs(term) > tol * abs(total):
        n += 1
        term = term * x / n
        total += term
    for _ in range(halvings):
        total = total * total
    return (1 / total if negative else total), n, halvings


@pytest.mark.parametrize("x", [np.float64(1.0), np.float64(-3.5), np.float64(0.0),
                               np.float32(10.0), np.float32(-0.25), np.float64(0.5)])
def test_exp_by_series(x):
    tol = x.dtype.type(1e-16 if x.dtype == np.float64 else 1e-8)
    result = check(exp_by_series, x, tol)
    np.testing.assert_allclose(result[0], np.exp(x), rtol=1e-5)


def integer_sqrt(n):
    """floor(sqrt(n)) by Newton's method on integers."""
    assert n >= 0, "square root of a negative number"
    if n < 2:
        return n
    x = n
    y = (x + 1) // 2
    while y < x:
        x = y
        y = (x + n // x) // 2
    return x


@pytest.mark.parametrize("n", [np.int32(0), np.int32(1), np.int32(15), np.int32(16),
                               np.int64(10**12 + 7), np.int64(2**62), np.int32(2**31 - 2)])
def test_integer_sqrt(n):
    assert check(integer_sqrt, n) == math.isqrt(int(n))


def test_integer_sqrt_of_a_negative_number():
    check(integer_sqrt, np.int32(-4), raises=AssertionError)


def fibonacci_mod(n, m):
    """F(n) mod m by squaring the matrix [[1, 1], [1, 0]] with a tensor exponent."""
    result = rt.constant([[1, 0], [0, 1]], dtype=m.dtype)
    base = rt.constant([[1, 1], [1, 0]], dtype=m.dtype)
    e = n
    squarings = 0
    while e > 0:
        if e % 2 == 1:
            result = rt.matmul(result, base) % m
        base = rt.matmul(base, base) % m
        squarings += 1
        e //= 2
    return result[0, 1], squarings


@pytest.mark.parametrize("n, m", [
    (np.int64(10), np.int64(1000)), (np.int64(90), np.int64(10**9 + 7)),
    (np.int64(10**15), np.int64(10**9 + 7)), (np.int64(0), np.int64(7)),
    (np.int32(25), np.int32(1000)),
])
def test_fibonacci_by_matrix_squaring(n, m):
    value, _ = check(fibonacci_mod, n, m)
    a, b = 0, 1
    for _ in range(min(int(n), 200)):
        a, b = b, (a + b) % int(m)
    if int(n) <= 200:
        assert int(value) == a


def stationary_distribution(P, tol, max_squarings):
    """Square a transition matrix until its rows stop changing."""
    k = 0
    while k < max_squarings:
        P2 = rt.matmul(P, P)
        change = rt.reduce_max(abs(P2 - P))
        P = P2
        k += 1
        if change < tol:
            break
    return P[0], k


@pytest.mark.parametrize("P, max_squarings", [
    (f64([0.9, 0.1], [0.5, 0.5]), np.int32(30)),
    (f32([0.5, 0.25, 0.25], [0.2, 0.6, 0.2], [0.1, 0.1, 0.8]), np.int32(30)),
    (f64([0.9, 0.1], [0.5, 0.5]), np.int32(2)),
    (f64([1.0, 0.0], [0.0, 1.0]), np.int32(30)),          # already stationary: one step
])
def test_stationary_distribution_by_squaring(P, max_squarings):
    check(stationary_distribution, P, P.dtype.type(1e-12), max_squarings)


# -- classes holding state -----------------------------------------------------------------------

class Polynomial:
    """Coefficients, highest power first; evaluation by Horner's rule and a derivative."""

    def __init__(self, coeffs):
        self.coeffs = coeffs

    def __call__(self, x):
        result = 0.0
        for c in self.coeffs:
            result = result * x + c
        return result

    def derivative(self):
        n = len(self.coeffs) - 1
        return Polynomial([c * (n - i) for i, c in enumerate(self.coeffs[:-1])])


def newton_on_polynomial_object(coeffs, x, max_iter):
    p = Polynomial([coeffs[i] for i in range(len(coeffs))])
    dp = p.derivative()
    for it in range(max_iter):
        slope = dp(x)
        if slope == 0:
            break
        x_new = x - p(x) / slope
        if abs(x_new - x) <= 1e-12 * abs(x_new):
            x = x_new
            break
        x = x_new
    return x, p(x)


@pytest.mark.parametrize("coeffs, x", [
    (f64(1, 0, -5, 0, 4), np.float64(3.0)),
    (f32(2, -3, 1), np.float32(5.0)),
    (f64(1, 0, 1), np.float64(0.0)),                      # p'(0) = 0: breaks at once
])
def test_newton_with_a_polynomial_class(coeffs, x):
    check(newton_on_polynomial_object, coeffs, x, np.int32(100))


class HoltSmoother:
    """Holt's linear trend method; `fit` loops over the series and updates the object."""

    def __init__(self, alpha, beta):
        self.alpha, self.beta = alpha, beta
        self.level = None
        self.trend = None

    def fit(self, series):
        self.level = series[0]
        self.trend = series[1] - series[0]
        errors = []
        for y in series[1:]:
            forecast = self.level + self.trend
            errors.append(y - forecast)
            previous = self.level
            self.level = self.alpha * y + (1 - self.alpha) * forecast
            self.trend = self.beta * (self.level - previous) + (1 - self.beta) * self.trend
        return rt.sqrt(rt.reduce_mean(rt.square(rt.stack(errors))))

    def forecast(self, horizon):
        return [self.level + (h + 1) * self.trend for h in range(horizon)]


def holt_forecast(series, alpha, beta):
    model = HoltSmoother(alpha, beta)
    rmse = model.fit(series)
    return rmse, model.forecast(3), (model.level, model.trend)


@pytest.mark.parametrize("series", [
    f64(3, 5, 9, 20, 12, 17, 22, 23, 51, 41, 56, 75, 60, 75, 88),
    f32(1.0, 1.5, 2.25, 2.5, 3.5), f64(4, 4),
])
def test_holt_smoothing_object(series):
    t = series.dtype.type
    check(holt_forecast, series, t(0.5), t(0.3))


# -- back substitution, searches -------------------------------------------------------------------

UPPER = f64([2, 1, -1], [0, 3, 2], [0, 0, 4])


def back_substitution(U, b, n):
    """Solve U x = b for upper triangular U, from the last unknown up."""
    size = b.shape[0]
    x = rt.zeros_like(b)
    for i in range(n - 1, -1, -1):
        s = rt.reduce_sum(U[i, i + 1:] * x[i + 1:])
        x = x + rt.one_hot(i, size, dtype=b.dtype) * ((b[i] - s) / U[i, i])
    return x


def back_substitution_reversed(U, b, n):
    """The same with `reversed(range(n))`, as it is usually written."""
    size = b.shape[0]
    x = rt.zeros_like(b)
    for i in reversed(range(n)):
        s = rt.reduce_sum(U[i, i + 1:] * x[i + 1:])
        x = x + rt.one_hot(i, size, dtype=b.dtype) * ((b[i] - s) / U[i, i])
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("solver", [
    back_substitution,
    back_substitution_reversed,     # reversed(range(n)) of a tensor n
])
def test_back_substitution(solver, dtype):
    U, b = UPPER.astype(dtype), f64(3, 8, 8).astype(dtype)
    x = check(solver, U, b, np.int32(3))
    np.testing.assert_allclose(U @ x.numpy(), b, rtol=1e-6)
    check(solver, U, b, np.int32(0))


def bisection_steps(f, lo, hi, tol, max_steps):
    """Bisection that reports the loop index it stopped at (the index is used after the
    loop, as Python allows when the loop ran)."""
    assert f(lo) * f(hi) < 0, "the root must be bracketed"
    for k in range(max_steps):
        mid = (lo + hi) / 2
        if f(lo) * f(mid) <= 0:
            hi = mid
        else:
            lo = mid
        if hi - lo < tol:
            break
    print(f"stopped at step {k}: [{lo:.8f}, {hi:.8f}]")
    return (lo + hi) / 2, k


@pytest.mark.parametrize("lo, hi, tol, max_steps", [
    (np.float64(0.0), np.float64(2.0), np.float64(1e-10), np.int32(100)),
    (np.float32(0.5), np.float32(3.0), np.float32(1e-4), np.int32(100)),
    (np.float64(0.0), np.float64(2.0), np.float64(1e-10), np.int32(5)),
    (np.float64(0.0), np.float64(2.0), np.float64(10.0), np.int32(5)),   # breaks at once
])
def test_bisection_reports_its_last_step(lo, hi, tol, max_steps):
    check(bisection_steps, py(lambda x: x * x * x - x - 1), lo, hi, tol, max_steps)


def test_bisection_with_no_step_has_no_last_step():
    """Python: UnboundLocalError for `k`; converted: the documented run-time error, an
    UnboundLocalError naming it."""
    check(bisection_steps, py(lambda x: x * x - 2), np.float64(0.0), np.float64(2.0),
          np.float64(1e-6), np.int32(0), raises=UnboundLocalError)


def test_bisection_rejects_an_unbracketed_root():
    check(bisection_steps, py(lambda x: x * x + 1), np.float64(0.0), np.float64(2.0),
          np.float64(1e-6), np.int32(10), raises=AssertionError)


def next_perfect_number(start, limit):
    """The first perfect number >= start (below limit): `while True` around a divisor
    sum, an inner loop with a tensor bound, and an early exit."""
    n = start
    while True:
        if n >= limit:
            return -1
        divisor_sum = 1
        d = 2
        while d * d <= n:
            if n % d == 0:
                divisor_sum += d
                if d * d != n:
                    divisor_sum += n // d
            d += 1
        if divisor_sum == n and n > 1:
            return n
        n += 1


@pytest.mark.parametrize("start, limit", [
    (np.int32(2), np.int32(1000)), (np.int32(7), np.int32(1000)),
    (np.int32(29), np.int32(1000)), (np.int32(497), np.int32(600)),
    (np.int32(500), np.int32(500)),
])
def test_next_perfect_number(start, limit):
    check(next_perfect_number, start, limit)


# -- comprehensions and generator expressions over tensors -----------------------------------------

def pairwise_sum(x):
    """Pairwise (cascade) summation: halve the vector until one value is left; the vector
    shrinks, so the loop says its shape may change."""
    levels = 0
    while len(x) > 1:
        ag.set_loop_options(shape_invariants=[(x, [None])])
        if len(x) % 2 == 1:
            x = rt.concat([x, rt.zeros([1], dtype=x.dtype)], 0)
        x = x[0::2] + x[1::2]
        levels += 1
    return x[0], levels


@pytest.mark.parametrize("x", [
    np.arange(1, 8, dtype=np.float64), np.linspace(0, 1, 16, dtype=np.float32),
    i32(5), i64(1, -1),
])
def test_pairwise_summation(x):
    check(pairwise_sum, x)


def weighted_mean_by_comprehension(xs, ws):
    """Written with generator expressions: squares via a list comprehension, sums via
    sum() over zip()."""
    squares = [w * w for w in ws]
    total_w = sum(ws[i] for i in range(len(ws)))
    mean = sum(x * w for x, w in zip(xs, ws)) / total_w
    spread = sum(w2 * (x - mean) ** 2 for x, w2 in zip(xs, squares))
    return mean, spread


def polynomial_residuals(coeffs, xs, ys):
    """sum(c_k x^k) with enumerate in a generator expression; residuals with zip."""
    def p(x):
        return sum(c * x ** k for k, c in enumerate(coeffs))
    residuals = [y - p(x) for x, y in zip(xs, ys)]
    return rt.stack(residuals), sum(r * r for r in residuals)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_weighted_mean_by_comprehension(dtype):
    check(weighted_mean_by_comprehension, np.array([1, 2, 4, 8], dtype),
          np.array([0.5, 1, 1, 0.25], dtype))


def test_polynomial_residuals_by_comprehension():
    xs = np.linspace(-1, 1, 5).astype(np.float32)
    check(polynomial_residuals, f32(1, -2, 0.5), xs, (1 - xs) ** 2)


# -- more simulations --------------------------------------------------------------------------------

def mandelbrot_escape(c_re, c_im, max_iter):
    """Escape times on a grid, vectorized; stops early once every point has escaped."""
    zr, zi = c_re * 0, c_im * 0
    escape = rt.fill(rt.shape(c_re), max_iter)
    for i in range(max_iter):
        zr, zi = zr * zr - zi * zi + c_re, 2 * zr * zi + c_im
        escaped_now = (zr * zr + zi * zi > 4) & (escape == max_iter)
        escape = rt.where(escaped_now, i, escape)
        if rt.reduce_all(escape < max_iter):
            print(f"all escaped after {i + 1} iterations")
            break
        zr = rt.clip_by_value(zr, -4.0, 4.0)
        zi = rt.clip_by_value(zi, -4.0, 4.0)
    return escape


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("region, max_iter", [
    ((-2.0, 0.5, -1.2, 1.2), np.int32(30)),
    ((2.5, 3.0, 2.5, 3.0), np.int32(30)),           # all escape at once
    ((-0.2, 0.2, -0.2, 0.2), np.int32(5)),          # none escapes
    ((-2.0, 0.5, -1.2, 1.2), np.int32(0)),
])
def test_mandelbrot_escape_times(region, max_iter, dtype):
    x0, x1, y0, y1 = region
    re, im = np.meshgrid(np.linspace(x0, x1, 7), np.linspace(y0, y1, 5))
    check(mandelbrot_escape, re.astype(dtype), im.astype(dtype), max_iter)


def decay_chain(n0, rates, dt, n_steps):
    """The chain A -> B -> C by explicit Euler; also returns the index of the last step
    taken (n_steps when none was)."""
    a, b, c = n0, n0 * 0, n0 * 0
    last_step = n_steps
    for k in range(n_steps):
        da = -rates[0] * a
        db = rates[0] * a - rates[1] * b
        a, b, c = a + dt * da, b + dt * db, c + dt * rates[1] * b
        last_step = k
    return a, b, c, last_step


# The weak index of `for k in range(n)` assigned to an int64 loop variable takes its dtype.
@pytest.mark.parametrize("n_steps", [
    np.int32(40), np.int32(0),
    np.int64(40),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_decay_chain(n_steps, dtype):
    check(decay_chain, dtype(1000.0), np.array([0.3, 0.1], dtype), dtype(0.1), n_steps)


def ode_solve(method, y, t_end, n_steps):
    """dy/dt = -y + cos(t) with the scheme chosen by a code (0 Euler, 1 midpoint, 2 Heun,
    anything else RK4), matched inside the time loop."""
    def f(t, y):
        return -y + rt.cos(t)

    h = t_end / n_steps
    t = 0.0 * h
    for _ in range(n_steps):
        match method:
            case 0:
                y = y + h * f(t, y)
            case 1:
                y = y + h * f(t + h / 2, y + h / 2 * f(t, y))
            case 2:
                k1 = f(t, y)
                y = y + h / 2 * (k1 + f(t + h, y + h * k1))
            case _:
                k1 = f(t, y)
                k2 = f(t + h / 2, y + h / 2 * k1)
                k3 = f(t + h / 2, y + h / 2 * k2)
                y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + f(t + h, y + h * k3))
        t = t + h
    return y, t


@pytest.mark.parametrize("method", [np.int32(0), np.int32(1), np.int32(2), np.int32(3),
                                    np.int32(-1)])
@pytest.mark.parametrize("y, t_end, n_steps", [
    (np.float64(1.0), np.float64(2.0), np.int32(20)),
    (f32(1.0, -1.0, 0.0), np.float32(1.0), np.int16(8)),    # float32 / int16 is float32
])
def test_ode_scheme_chosen_by_match(method, y, t_end, n_steps):
    check(ode_solve, method, y, t_end, n_steps)


def compensated_sum(xs):
    """Kahan summation next to the naive sum: the compensation (t - s) - y is algebraically
    zero, so it only survives if the graph keeps floating-point evaluation order."""
    s = xs[0] * 0
    c = xs[0] * 0
    naive = xs[0] * 0
    for x in xs:
        naive = naive + x
        y = x - c
        t = s + y
        c = (t - s) - y
        s = t
    return s, naive, c


@pytest.mark.parametrize("xs", [
    np.array([1.0] + [1e-8] * 500, np.float32),
    np.array([1.0] + [1e-4] * 300, np.float16),
    np.array([1e16, 1.0, -1e16, 3.0] * 5, np.float64),
])
def test_kahan_summation_keeps_its_compensation(xs):
    s, naive, _ = check(compensated_sum, xs)
    if xs.dtype != np.float64:
        assert s != naive            # the compensation made a difference


def damped_with_invariant(x, rate, n):
    """A decay that must stay positive, checked by an assert whose message formats the
    step and the value."""
    for i in range(n):
        x = x - rate * x - 0.1
        assert x > 0, f"x became non-positive at step {i}: {x:.4f}"
    return x


def test_assert_with_formatted_message_in_a_loop():
    check(damped_with_invariant, np.float32(1.0), np.float32(0.3), np.int32(2))
    check(damped_with_invariant, np.float32(1.0), np.float32(0.3), np.int32(10),
          raises=AssertionError, match=r"x became non-positive at step 3: -0\.0132")


def ascend_until_large(x, n):
    """Gradient ascent on x^2 that returns from inside the tape's `with` block."""
    for i in range(n):
        with rt.GradientTape() as tape:
            tape.watch(x)
            y = x * x
            if y > 100:
                return x, i
        x = x + tape.gradient(y, x)
    return x, -1


@pytest.mark.parametrize("x, n", [(np.float32(1.0), np.int32(10)),
                                  (np.float64(1.0), np.int32(2)),
                                  (np.float64(20.0), np.int32(5))])
def test_return_from_inside_a_tape_block(x, n):
    check(ascend_until_large, x, n, reference_tensors=True)


# -- the hard cases above, reduced ---------------------------------------------------------------
# The smallest program of each: weak numbers retyped by loops, `if`s and probes, reversed
# tensor ranges, zip/enumerate of tensors in generators, attributes a called method assigns.

def shift_pair(n, step):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, b + step
    return a, b


def nested_running_sum(xs, n):
    b = 0.0
    for _ in range(n):
        for x in xs:
            b = b + x
    return b


def sum_nonnegative_and_keep_all(xs):
    v = 0.0
    seen = []
    for x in xs:
        if x >= 0:
            v += x
        seen.append(x)
    return v, rt.stack(seen)


def last_index(n):
    last = n
    for k in range(n):
        last = k
    return last


def countdown_list(n):
    out = []
    for k in reversed(range(n)):
        out.append(k)
    return rt.stack(out)


def dot_by_generator(x, w):
    return sum(a * b for a, b in zip(x, w))


def powers_by_generator(c, x):
    return sum(ck * x ** k for k, ck in enumerate(c))


class Clock:
    def __init__(self):
        self.t = 0.0

    def tick(self):
        self.t = self.t + 1.0


def run_clock(t_end):
    clock = Clock()
    while clock.t < t_end:
        clock.tick()
    return clock.t


def run_clock_inline(t_end):
    clock = Clock()
    while clock.t < t_end:
        clock.t = clock.t + 1.0         # assigned in the loop itself: carried
    return clock.t


@pytest.mark.parametrize("f, args", [
    pytest.param(shift_pair, (np.int32(3), np.int64(2)), id="weak-retyping-one-pass-int64"),
    pytest.param(shift_pair, (np.int32(3), np.float64(2)), id="weak-retyping-one-pass-float"),
    pytest.param(shift_pair, (np.int32(3), np.int32(2)), id="weak-retyping-default-dtype"),
    pytest.param(nested_running_sum, (f64(1, 2), np.int32(2)), id="weak-into-inner-loop"),
    pytest.param(nested_running_sum, (f32(1, 2), np.int32(2)), id="inner-loop-float32"),
    pytest.param(sum_nonnegative_and_keep_all, (f64(1, -2, 3),), id="probe-loses-weak"),
    pytest.param(sum_nonnegative_and_keep_all, (f32(1, -2, 3),), id="probe-float32"),
    pytest.param(countdown_list, (np.int32(3),), id="reversed-range"),
    pytest.param(dot_by_generator, (f32(1, 2, 3), f32(1, 2, 3)), id="zip-in-generator"),
    pytest.param(powers_by_generator, (f32(1, 2, 3), np.float32(2)),
                 id="enumerate-in-generator"),
    pytest.param(last_index, (np.int64(4),), id="weak-index-into-int64-variable"),
    pytest.param(last_index, (np.int32(4),), id="index-into-int32-variable"),
    pytest.param(run_clock, (np.float32(3.0),), id="method-assigns-attribute-in-loop"),
    pytest.param(run_clock_inline, (np.float32(3.0),), id="attribute-assigned-in-loop"),
])
def test_reduced(f, args):
    check(f, *args)


# -- derivatives from tapes inside the iteration ---------------------------------------------------

def newton_with_autodiff(f, x, tol, max_iter):
    """Newton's method whose derivative comes from a tape at every step."""
    for it in range(max_iter):
        with rt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        dy = tape.gradient(y, x)
        if dy == 0:
            print(f"flat at x = {x:.6f}")
            break
        step = y / dy
        x = x - step
        if abs(step) < tol:
            print(f"converged in {it + 1} iterations: x = {x:.12f}")
            break
    return x


def cubic_in_x(v):
    return v * v * v - 2 * v - 5


def parabola(v):
    return v * v - 4


@pytest.mark.parametrize("f, x, tol", [
    (cubic_in_x, np.float64(2.0), np.float64(1e-12)),
    (cubic_in_x, np.float32(3.0), np.float32(1e-6)),
    (cubic_in_x, np.float64(0.0), np.float64(1e-12)),      # wanders, then converges
    (parabola, np.float64(-0.5), np.float64(1e-12)),
    (parabola, np.float32(0.0), np.float32(1e-6)),         # f'(0) = 0: flat at once
])
def test_newton_with_autodiff(f, x, tol):
    check(newton_with_autodiff, py(f), x, tol, np.int32(50), reference_tensors=True)


def newton_minimize_with_nested_tapes(x, max_iter):
    """Minimize sum(exp(x) - 2x + x^2/2) by Newton steps, the curvature from a tape around
    a tape (the Hessian is diagonal)."""
    iters = 0
    for _ in range(max_iter):
        with rt.GradientTape() as outer:
            outer.watch(x)
            with rt.GradientTape() as inner:
                inner.watch(x)
                f = rt.reduce_sum(rt.exp(x) - 2 * x + 0.5 * x * x)
            g = inner.gradient(f, x)
        h = outer.gradient(g, x)
        x = x - g / h
        iters += 1
        if rt.reduce_max(abs(g)) < 1e-10:
            break
    return x, iters


@pytest.mark.parametrize("x, max_iter", [
    (f64(0, 1, -1), np.int32(20)), (f32(2, -2), np.int32(3)), (f64(0.5), np.int32(0)),
])
def test_newton_minimize_with_nested_tapes(x, max_iter):
    check(newton_minimize_with_nested_tapes, x, max_iter, reference_tensors=True)


def descend_on_variable(w, target, lr, n_steps):
    """Gradient steps on a variable created outside, with a report every 5 steps."""
    for i in range(n_steps):
        with rt.GradientTape() as tape:
            loss = rt.reduce_sum((w - target) ** 2)
        w.assign_sub(lr * tape.gradient(loss, w))
        if i % 5 == 0:
            print(f"step {i}: loss {loss:.6f}")
    return w.read_value()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_descent_on_a_variable(dtype):
    target, lr = np.array([3.0, -1.0], dtype), dtype(0.1)
    texts = []
    results = []
    for fn, wrap in ((descend_on_variable, lambda v: v),
                     (converted(descend_on_variable), rt.constant)):
        w = rt.Variable(np.array([0.0, 1.0], dtype))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            results.append(fn(w, wrap(target), wrap(lr), wrap(np.int32(12))))
            results.append(fn(w, wrap(target), wrap(lr), wrap(np.int32(3))))   # continues
        texts.append(out.getvalue())
        results.append(w.numpy())
    assert texts[1] == texts[0]
    assert_same(results[:3], results[3:])
