"""Object-oriented programs written the way researchers write them - models holding weights in
attributes, layers in lists and dicts, optimizers and schedulers stepped by a driver,
simulations of particles, accounts and queues whose methods mutate `self` - then converted
with `@ag.convert` (or `ag.convert(obj.method)`).

The reference is the same Python run eagerly. With tensor arguments (`tensors=True`) the
plain run gets numpy values (Python ints become int32, floats float32, bools bool, lists
arrays of those) and the converted run `rt.constant` of the same values, so dtypes must
agree too; with Python arguments both runs get the Python values (the trace specializes on
them) and a Python number in the reference must come back as a number of the same kind.
Printed text must be exactly equal. `fresh(make)` builds an argument anew for every run
(`make(value)` converts the numbers it is given the way the run's arguments are converted),
so an object mutated by one run never reaches another; `py(v)` stays a Python value in
every run. Every converted run has a loop iteration limit: a runaway graph loop fails
instead of hanging.

Bugs found are strict xfails whose reason gives the diagnosis; the reduced reproductions
are at the end of the file.
"""
import collections
import contextlib
import dataclasses
import functools
import io

import numpy as np
import pytest

import autograph as ag
import runtime as rt


# -- the check ---------------------------------------------------------------------------------

class py:
    """An argument that stays a Python value in every run."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"py({self.value!r})"


class fresh:
    """An argument built anew for every run: `make(value)` gets the run's converter for
    numbers (numpy scalars/arrays for the reference, `rt.constant` for the converted run
    with tensor arguments, the identity with Python arguments)."""

    def __init__(self, make):
        self.make = make

    def __repr__(self):
        return "fresh(...)"


_DTYPES = {bool: np.bool_, int: np.int32, float: np.float32}


def _as_numpy(value):
    if isinstance(value, (bool, int, float)):
        return _DTYPES[type(value)](value)
    if isinstance(value, list) and value:
        array = np.asarray(value)
        if array.dtype.kind in "biuf":
            kind = bool if array.dtype.kind == "b" else \
                float if array.dtype.kind == "f" else int
            return np.array(value, _DTYPES[kind])
    return value


def _converter(tensors, reference):
    def convert(value):
        if not tensors:
            return value
        value = _as_numpy(value)
        if reference or not isinstance(value, (np.generic, np.ndarray)):
            return value
        return rt.constant(value)
    return convert


def _arguments(args, tensors, reference):
    convert = _converter(tensors, reference)
    out = []
    for a in args:
        if isinstance(a, py):
            out.append(a.value)
        elif isinstance(a, fresh):
            out.append(a.make(convert))
        else:
            out.append(convert(a))
    return out


LOOP_LIMIT = 10_000         # far above any loop here: a runaway graph loop fails instead


def _leaf(value):
    if isinstance(value, (rt.Tensor, rt.Variable)):
        return True, np.asarray(value.numpy())
    if isinstance(value, (np.generic, np.ndarray)):
        return True, np.asarray(value)
    if isinstance(value, (bool, int, float)):
        return False, np.asarray(value)
    return None, None


def assert_same(expected, actual, path="result"):
    """`actual` (from the converted run) equals `expected` (from the plain run)."""
    typed, e = _leaf(expected)
    if typed is not None:
        a_typed, a = _leaf(actual)
        assert a_typed is not None, f"{path}: {actual!r} is not a number (expected {expected!r})"
        assert a.shape == e.shape, f"{path}: shape {a.shape} != {e.shape}: {a!r} vs {e!r}"
        if typed:
            assert a.dtype == e.dtype, f"{path}: dtype {a.dtype} != {e.dtype}: {a!r} vs {e!r}"
        else:
            assert a.dtype.kind == e.dtype.kind, f"{path}: {a!r} is not like {expected!r}"
        if e.dtype.kind == "f":
            np.testing.assert_allclose(a, e, rtol=2e-6, atol=1e-6, err_msg=path)
        else:
            np.testing.assert_array_equal(a, e, err_msg=path)
        return
    if dataclasses.is_dataclass(expected) and not isinstance(expected, type):
        assert type(actual) is type(expected), f"{path}: {type(actual)} != {type(expected)}"
        for field in dataclasses.fields(expected):
            assert_same(getattr(expected, field.name), getattr(actual, field.name),
                        f"{path}.{field.name}")
        return
    if isinstance(expected, tuple) and hasattr(type(expected), "_fields"):
        assert type(actual) is type(expected), f"{path}: {type(actual)} != {type(expected)}"
        for name, e_item, a_item in zip(expected._fields, expected, actual):
            assert_same(e_item, a_item, f"{path}.{name}")
        return
    if isinstance(expected, (tuple, list)):
        assert type(actual) is type(expected), f"{path}: {type(actual)} != {type(expected)}"
        assert len(actual) == len(expected), f"{path}: length {len(actual)} != {len(expected)}"
        for i, (e_item, a_item) in enumerate(zip(expected, actual)):
            assert_same(e_item, a_item, f"{path}[{i}]")
        return
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and set(actual) == set(expected), \
            f"{path}: {actual!r} != {expected!r}"
        for k in expected:
            assert_same(expected[k], actual[k], f"{path}[{k!r}]")
        return
    assert actual == expected and type(actual) is type(expected), \
        f"{path}: {actual!r} != {expected!r}"


def _run(fn, args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), rt.config.options(loop_iteration_limit=LOOP_LIMIT):
        result = fn(*args)
    return result, out.getvalue()


def check(f, *args, tensors, raises=None, match=None):
    """Run `f` eagerly on the reference arguments and `ag.convert(f)` on the converted ones:
    same results (values, dtypes, structure) and the same printed text. `f` may also be a
    `method(name)`: the method of the run's first argument (a fresh object).

    `raises`: both runs must raise this class (message matching `match`) after printing
    the same text. Returns the reference result."""
    outcomes = []
    for reference in (True, False):
        call_args = _arguments(args, tensors, reference)
        fn = f(call_args) if isinstance(f, method) else f
        if isinstance(f, method):
            call_args = call_args[1:]
        if not reference:
            fn = ag.convert(fn)
        if raises is not None:
            out = io.StringIO()
            with pytest.raises(raises, match=match), contextlib.redirect_stdout(out), \
                    rt.config.options(loop_iteration_limit=LOOP_LIMIT):
                fn(*call_args)
            outcomes.append((None, out.getvalue()))
        else:
            outcomes.append(_run(fn, call_args))
    (expected, expected_text), (actual, actual_text) = outcomes
    assert actual_text == expected_text, \
        f"printed text differs:\n--- plain\n{expected_text}--- converted\n{actual_text}"
    if raises is None:
        assert_same(expected, actual)
    return expected


class method:
    """`check(method("step"), fresh(make_obj), *args)`: convert the bound method
    `obj.step` of the fresh object, as `ag.convert(obj.step)`."""

    def __init__(self, name):
        self.name = name

    def __call__(self, call_args):
        return getattr(call_args[0], self.name)


def modes(python_bug=None, tensor_bug=None):
    """Parametrize `tensors` over both modes, a known bug in one of them a strict xfail."""
    def param(value, name, bug):
        marks = pytest.mark.xfail(strict=True, reason=bug) if bug else ()
        return pytest.param(value, id=name, marks=marks)
    return pytest.mark.parametrize("tensors", [param(False, "python", python_bug),
                                               param(True, "tensor", tensor_bug)])


def staging_error(f, *args, names=(), line=None):
    """`ag.convert(f)` on tensor arguments raises a StagingError naming `names` and the
    user's `line`."""
    call_args = _arguments(args, True, False)
    with pytest.raises(ag.StagingError) as info, \
            rt.config.options(loop_iteration_limit=LOOP_LIMIT):
        ag.convert(f)(*call_args)
    message = str(info.value)
    for name in names:
        assert name in message, message
    if line is not None:
        assert line in message, message
    return message


# One-line diagnoses of the bugs found (reduced reproductions at the end of the file).
LIST_READ_IN_TENSOR_LOOP = (
    "autograph/operators/control_flow.py (_stand_in/_ProbeList): a variable holding a "
    "Python list of numbers that a tensor loop replaces by a tensor is a TensorList inside "
    "the body, so reading it as an operand fails: `x = [1.0, 2.0]; while i < n: "
    "x = rt.constant([3.0, 4.0]) - x` raises TypeError \"unsupported operand type(s) for -: "
    "'SymbolicTensor' and 'TensorList'\" (eagerly the list converts like any array-like)")


# == models holding weights ======================================================================

class Dense:
    """A layer with its weights in rt.Variables and an optional activation."""

    def __init__(self, w, b, activation=None):
        self.w = rt.Variable(w)
        self.b = rt.Variable(b)
        self.activation = activation

    def __call__(self, x):
        y = rt.matmul(x, self.w) + self.b
        if self.activation is not None:
            y = self.activation(y)
        return y


class Sequential:
    def __init__(self, *layers):
        self.layers = list(layers)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class FixedPointSolver:
    """Iterates a model to its fixed point: x <- model(x) until the step is small."""

    def __init__(self, model, tol, max_iter):
        self.model = model
        self.tol = tol
        self.max_iter = max_iter
        self.iterations = 0

    def solve(self, x):
        delta = rt.reduce_max(rt.abs(self.model(x) - x))
        while delta > self.tol and self.iterations < self.max_iter:
            x_new = self.model(x)
            delta = rt.reduce_max(rt.abs(x_new - x))
            x = x_new
            self.iterations += 1
        return x, self.iterations


def contraction_model(convert):
    w = np.array([[0.5, 0.1], [0.0, 0.4]], np.float32)
    return Sequential(Dense(w, np.array([1.0, -1.0], np.float32), rt.tanh),
                      Dense(np.eye(2, dtype=np.float32), np.zeros(2, np.float32)))


def solve_fixed_point(x, tol, max_iter):
    solver = FixedPointSolver(contraction_model(None), tol, max_iter)
    fixed, iterations = solver.solve(x)
    return fixed, iterations, solver.iterations


@modes(python_bug=LIST_READ_IN_TENSOR_LOOP)
@pytest.mark.parametrize("x, tol, max_iter", [
    ([[0.0, 0.0]], 1e-5, 50),
    ([[3.0, -2.0]], 1e-3, 50),
    ([[0.0, 0.0]], 1e-5, 2),            # stops at max_iter
    ([[0.0, 0.0]], 1e-5, 0),            # no iteration
])
def test_fixed_point_of_a_sequential_model(x, tol, max_iter, tensors):
    check(solve_fixed_point, x, tol, max_iter, tensors=tensors)


class ClippedHead:
    """Scales its output down when its total exceeds a limit held in an attribute."""

    def __init__(self, limit):
        self.limit = limit
        self.clipped = 0

    def forward(self, h):
        total = rt.reduce_sum(h)
        if total > self.limit:
            h = h * (self.limit / total)
            self.clipped += 1
        return h


class TwoHeadModel:
    """Sub-objects kept in a dict, iterated in a loop, the better head chosen by a tensor."""

    def __init__(self, limit):
        self.heads = {"mean": ClippedHead(limit), "peak": ClippedHead(limit * 2.0)}

    def forward(self, x):
        outputs = {}
        for name, head in self.heads.items():
            outputs[name] = head.forward(x)
        score_mean = rt.reduce_mean(outputs["mean"])
        score_peak = rt.reduce_max(outputs["peak"])
        if score_mean >= score_peak:
            best = outputs["mean"]
        else:
            best = outputs["peak"]
        return best, outputs, self.heads["mean"].clipped + self.heads["peak"].clipped


def two_head_scores(x, limit):
    model = TwoHeadModel(limit)
    x = rt.convert_to_tensor(x, rt.float32)
    best, outputs, clipped = model.forward(x)
    return best, outputs["mean"], outputs["peak"], clipped, model.heads["peak"].clipped


@pytest.mark.parametrize("x, limit", [
    ([1.0, 2.0, 3.0], 10.0),            # nothing clipped
    ([1.0, 2.0, 3.0], 4.0),             # the mean head clipped
    ([1.0, 2.0, 3.0], 2.0),             # both clipped
    ([-5.0, 1.0, 1.0], 1.0),
])
def test_heads_in_a_dict_of_sub_objects(x, limit, tensors):
    check(two_head_scores, x, limit, tensors=tensors)
