"""Saved graphs: a traced function as data on disk, loaded back without its Python source.

    rt.saved.save(f, "model/")          # an rt.function / ag.convert function, or a ConcreteFunction
    g = rt.saved.load("model/")         # a ConcreteFunction: g(x) runs the saved graph

A saved function is a directory holding
  graph.json   every operation (type, inputs, attributes, output dtypes and shapes, the
               user's source line), sub-graphs of cond / while / call inline, the
               signature, the output structure and the variables (see `encode` for the
               form of attribute values); versioned by its "format" and "version" fields;
  arrays.npz   constants and variable values.

Loading executes nothing from the files: no pickle (`allow_pickle=False`), no eval; each
operation is rebuilt through the op registry and checked (see `decode`), so a damaged or
hand-edited file raises `LoadError` naming what is wrong. The loaded function owns new
variables holding the saved values (`.variables`); random ops keep their seeds. A
`py_function` (arbitrary Python) cannot be saved: `SaveError` names it and its line.
"""
import json
import os

from ..function import ConcreteFunction, Function
from .arrays import MAX_BYTES, read_arrays, write_arrays
from .decode import Reader
from .encode import Writer
from .errors import LoadError, SaveError

__all__ = ["save", "load", "SaveError", "LoadError"]

GRAPH_FILE = "graph.json"
ARRAYS_FILE = "arrays.npz"
MAX_JSON_BYTES = 1 << 28


def concrete_function_of(fn):
    """The one ConcreteFunction to export for `fn` (an rt.function, or a ConcreteFunction)."""
    if isinstance(fn, ConcreteFunction):
        return fn
    if isinstance(fn, Function):
        if fn.input_signature is not None:
            return fn.get_concrete_function()
        traces = fn.concrete_functions
        if len(traces) == 1:
            return traces[0]
        raise ValueError(
            f"{fn!r} has {len(traces)} traces; pass one of them "
            f"(fn.get_concrete_function(*example_args)) or give the function an "
            f"input_signature")
    raise TypeError(f"Expected an rt.function or a ConcreteFunction, got {fn!r}")


def save(fn, path):
    """Write the graph of `fn` (see `concrete_function_of`) to the directory `path`."""
    writer = Writer()
    doc = writer.document(concrete_function_of(fn))
    os.makedirs(path, exist_ok=True)
    write_arrays(os.path.join(path, ARRAYS_FILE), writer.arrays)
    with open(os.path.join(path, GRAPH_FILE), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, allow_nan=False)
        f.write("\n")


def load(path, max_bytes=MAX_BYTES):
    """The saved function in directory `path`, as a ConcreteFunction with `.variables`."""
    doc = _read_json(os.path.join(path, GRAPH_FILE))
    arrays = read_arrays(os.path.join(path, ARRAYS_FILE), max_bytes)
    try:
        return Reader(doc, arrays, path).function()
    except RecursionError:
        raise LoadError(f"{path}: the graph description is nested too deeply") from None


def _reject_constant(name):
    raise ValueError(f"{name} is not valid JSON")


def _read_json(path):
    try:
        size = os.path.getsize(path)
        if size > MAX_JSON_BYTES:
            raise LoadError(f"{path}: {size} bytes is more than a graph description may hold")
        with open(path, encoding="utf-8") as f:
            return json.load(f, parse_constant=_reject_constant)
    except FileNotFoundError:
        raise LoadError(f"{path}: missing (is this a directory written by rt.saved.save?)") \
            from None
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise LoadError(f"{path}: not a valid graph description: {e}") from None
