"""The equivalence check: a converted function behaves like the original run eagerly.

    assert_equivalent(f, 3, [1, 2], tensors=True)

runs `f` three ways on the same arguments and requires equal results (leaf by
leaf through tuples, lists, dicts and namedtuples: exact for ints and bools,
allclose for floats) and exactly equal printed text:

    eager      f(*args)                 the original, op by op
    graph      ag.convert(f)(*args)     converted, traced into a graph, executed
    to_graph   ag.to_graph(f)(*args)    converted, run op by op (no tracing)

With `tensors=True` every number, bool and numpy array among the arguments
(inside tuples, lists, dicts and namedtuples too) becomes `rt.constant(...)`:
an eager tensor for the eager runs, a symbolic one inside the trace. With
`tensors=False` they stay Python values, which the trace specializes on.
`static(v)` keeps one argument a Python value either way; an argument that is
already a tensor stays one. Every run gets fresh arguments, so a function may
mutate them.

`cases(f, g, known_bug(h, "diagnosis", tensors=True))` parametrizes a test over
functions and both argument modes; a known bug is a strict xfail until it is fixed.
"""
import contextlib
import copy
import dataclasses
import difflib
import io
import traceback

import numpy as np
import pytest

import autograph as ag
import runtime as rt

_NUMBERS = (bool, int, float, np.generic, np.ndarray)


class static:
    """An argument that stays a Python value even with `tensors=True`."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"static({self.value!r})"


def arguments(value, tensors):
    """A fresh copy of the argument `value`, numbers made tensors if `tensors`."""
    if isinstance(value, static):
        return copy.deepcopy(value.value)
    if isinstance(value, _NUMBERS):
        return rt.constant(value) if tensors else copy.copy(value)
    if isinstance(value, rt.Tensor):
        return value
    if _is_namedtuple(value):
        return type(value)(*(arguments(v, tensors) for v in value))
    if isinstance(value, (tuple, list)):
        return type(value)(arguments(v, tensors) for v in value)
    if isinstance(value, dict):
        return {k: arguments(v, tensors) for k, v in value.items()}
    try:
        return copy.deepcopy(value)
    except TypeError:
        return value


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


class Outcome:
    """What one run gave: a result or an exception, and the text it printed."""

    def __init__(self, name, result=None, error=None, stdout=""):
        self.name, self.result, self.error, self.stdout = name, result, error, stdout

    def describe(self):
        if self.error is not None:
            what = "".join(traceback.format_exception(self.error)).rstrip()
        else:
            what = f"returned {self.result!r}"
        return f"--- {self.name}: {what}\n    printed {self.stdout!r}"


def run(name, make_fn, args, kwargs, tensors):
    """Call make_fn() on fresh arguments, capturing what it prints and any exception."""
    args = arguments(tuple(args), tensors)
    kwargs = arguments(dict(kwargs), tensors)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            result = make_fn()(*args, **kwargs)
        except Exception as e:          # noqa: BLE001 - compared by the caller
            return Outcome(name, error=e, stdout=out.getvalue())
    return Outcome(name, result=result, stdout=out.getvalue())


# -- comparing results ---------------------------------------------------------------------

_KINDS = {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex"}


def _leaf(value):
    """(kind, numpy array) of a number-like leaf, or None for anything else."""
    if isinstance(value, (rt.Tensor, rt.Variable)):
        value = value.numpy()
    if isinstance(value, _NUMBERS):
        array = np.asarray(value)
        return _KINDS.get(array.dtype.kind, array.dtype.kind), array
    return None


def differences(expected, actual, path="result"):
    """Human-readable differences between two results (empty: equal)."""
    e_leaf, a_leaf = _leaf(expected), _leaf(actual)
    if e_leaf is not None or a_leaf is not None:
        return _leaf_differences(e_leaf, a_leaf, expected, actual, path)
    if _is_namedtuple(expected) or _is_namedtuple(actual):
        if type(expected) is not type(actual):
            return [f"{path}: {type(expected).__name__} != {type(actual).__name__}"]
        return _sequence_differences(expected, actual, path)
    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, type(expected)):
            return [f"{path}: {type(expected).__name__} != {type(actual).__name__}"]
        return _sequence_differences(expected, actual, path)
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or set(expected) != set(actual):
            return [f"{path}: {expected!r} != {actual!r}"]
        return [d for k in expected
                for d in differences(expected[k], actual[k], f"{path}[{k!r}]")]
    if type(expected) is not type(actual) or expected != actual:
        return [f"{path}: {expected!r} != {actual!r}"]
    return []


def _sequence_differences(expected, actual, path):
    if len(expected) != len(actual):
        return [f"{path}: length {len(expected)} != {len(actual)}"]
    return [d for i, (e, a) in enumerate(zip(expected, actual))
            for d in differences(e, a, f"{path}[{i}]")]


def _leaf_differences(e_leaf, a_leaf, expected, actual, path):
    if e_leaf is None or a_leaf is None:
        return [f"{path}: {expected!r} != {actual!r}"]
    (e_kind, e), (a_kind, a) = e_leaf, a_leaf
    if e_kind != a_kind:
        return [f"{path}: {e_kind} {e!r} != {a_kind} {a!r}"]
    if e.shape != a.shape:
        return [f"{path}: shape {e.shape} != {a.shape} ({e!r} != {a!r})"]
    equal = np.allclose(e, a, rtol=1e-5, atol=1e-6, equal_nan=True) if e_kind == "float" \
        else np.array_equal(e, a)
    return [] if equal else [f"{path}: {e!r} != {a!r}"]


# -- the check -----------------------------------------------------------------------------

def assert_equivalent(f, *args, tensors=True, kwargs=None, raises=None):
    """Run f eagerly, converted-and-traced and converted-eagerly; require the same outcome.

    `raises`: the exception class every run must raise (an instance of it or a
    subclass); the printed text must still match. Returns the eager result.
    """
    kwargs = kwargs or {}
    eager = run("eager f(*args)", lambda: f, args, kwargs, tensors)
    others = [run("ag.convert(f)(*args)", lambda: ag.convert(f), args, kwargs, tensors),
              run("ag.to_graph(f)(*args)", lambda: ag.to_graph(f), args, kwargs, tensors)]
    problems = []
    if raises is not None and not isinstance(eager.error, raises):
        problems.append(f"the eager run should raise {raises.__name__}")
    for other in others:
        problems += [f"{other.name}: {p}" for p in _outcome_differences(eager, other, raises)]
    if problems:
        report = [f"{f.__qualname__} with {'tensor' if tensors else 'Python'} arguments "
                  f"{args!r}" + (f", {kwargs!r}" if kwargs else "")]
        report += problems + [eager.describe()] + [o.describe() for o in others]
        raise AssertionError("\n".join(report))
    return eager.result


def _outcome_differences(eager, other, raises):
    problems = []
    if raises is not None:
        if not isinstance(other.error, raises):
            got = f"raised {other.error!r}" if other.error is not None else "returned"
            problems.append(f"should raise {raises.__name__}, but {got}")
    elif eager.error is not None or other.error is not None:
        problems.append(f"raised {other.error!r} where the eager run raised {eager.error!r}")
    else:
        problems += differences(eager.result, other.result)
    if eager.stdout != other.stdout:
        diff = difflib.unified_diff(eager.stdout.splitlines(), other.stdout.splitlines(),
                                    "eager", other.name, lineterm="")
        problems.append("printed text differs:\n" + "\n".join(diff))
    return problems


# -- parametrizing tests over functions ------------------------------------------------------

class known_bug:
    """A function the compiler gets wrong today (with tensor arguments only, with Python
    arguments only, or with both: `tensors=None`). Its cases are strict xfails, so a fix
    shows up as XPASS."""

    def __init__(self, f, reason, tensors=None):
        self.f, self.reason, self.tensors = f, reason, tensors


def cases(*functions, modes=(False, True)):
    """Parameters for `@pytest.mark.parametrize("f, tensors", cases(...))`: each function
    with Python and with tensor arguments, named `<function>-python` / `<function>-tensor`."""
    params = []
    for entry in functions:
        bug = entry if isinstance(entry, known_bug) else None
        f = bug.f if bug else entry
        for tensors in modes:
            marks = ()
            if bug and bug.tensors in (None, tensors):
                marks = pytest.mark.xfail(strict=True, reason=bug.reason)
            params.append(pytest.param(f, tensors, marks=marks,
                                       id=f"{f.__name__}-{'tensor' if tensors else 'python'}"))
    return params


# -- strict comparison of results (values, dtypes, structure) ------------------------------

_TOLERANCES = {np.dtype(np.float16): (1e-3, 1e-3), np.dtype(np.float32): (2e-6, 1e-6),
               np.dtype(np.float64): (1e-12, 1e-12)}


def _typed_leaf(value):
    if isinstance(value, (rt.Tensor, rt.Variable)):
        return True, np.asarray(value.numpy())
    if isinstance(value, (np.generic, np.ndarray)):
        return True, np.asarray(value)
    if isinstance(value, (bool, int, float)):
        return False, np.asarray(value)
    return None, None


def assert_same(expected, actual, path="result", tol=None):
    """`actual` (from the converted run) equals `expected` (from the plain run): the same
    structure (tuples, lists, namedtuples, dicts, dataclasses), dtypes where numpy gives
    one (the kind where Python gives an int, float or bool), and values (floats within
    `tol`, (rtol, atol), or the tolerance of the less precise dtype)."""
    typed, e = _typed_leaf(expected)
    if typed is not None:
        a_typed, a = _typed_leaf(actual)
        assert a_typed is not None, f"{path}: {actual!r} is not a number (expected {expected!r})"
        assert a.shape == e.shape, f"{path}: shape {a.shape} != {e.shape}: {a!r} vs {e!r}"
        if typed:
            assert a.dtype == e.dtype, f"{path}: dtype {a.dtype} != {e.dtype}: {a!r} vs {e!r}"
        else:
            assert a.dtype.kind == e.dtype.kind, f"{path}: {a!r} is not like {expected!r}"
        if e.dtype.kind == "f":
            low = a.dtype if a.dtype.itemsize < e.dtype.itemsize else e.dtype
            rtol, atol = tol or _TOLERANCES[low]
            np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=path)
        else:
            np.testing.assert_array_equal(a, e, err_msg=path)
        return
    if dataclasses.is_dataclass(expected) and not isinstance(expected, type):
        assert type(actual) is type(expected), f"{path}: {type(actual)} != {type(expected)}"
        for field in dataclasses.fields(expected):
            assert_same(getattr(expected, field.name), getattr(actual, field.name),
                        f"{path}.{field.name}", tol)
        return
    if isinstance(expected, tuple) and hasattr(type(expected), "_fields"):
        assert type(actual) is type(expected), f"{path}: {type(actual)} != {type(expected)}"
        for name, e_item, a_item in zip(expected._fields, expected, actual):
            assert_same(e_item, a_item, f"{path}.{name}", tol)
        return
    if isinstance(expected, (tuple, list)):
        assert type(actual) is type(expected), f"{path}: {type(actual)} != {type(expected)}"
        assert len(actual) == len(expected), f"{path}: length {len(actual)} != {len(expected)}"
        for i, (e_item, a_item) in enumerate(zip(expected, actual)):
            assert_same(e_item, a_item, f"{path}[{i}]", tol)
        return
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and set(actual) == set(expected), \
            f"{path}: {actual!r} != {expected!r}"
        for k in expected:
            assert_same(expected[k], actual[k], f"{path}[{k!r}]", tol)
        return
    assert actual == expected and type(actual) is type(expected), \
        f"{path}: {actual!r} != {expected!r}"
