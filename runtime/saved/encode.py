"""A traced graph as JSON-able data, with its arrays set apart for the .npz file.

Attribute values keep their Python type through tagged JSON:

    int, str, bool, None, finite float   themselves
    tuple                                a JSON list
    list / dict                          {"list": [...]} / {"dict": [[key, value], ...]}
    ndarray                              {"array": "a3"}  (a key of the .npz file)
    numpy scalar, complex, inf/nan       {"scalar": v, "dtype": "float32"}, {"complex": [re, im]},
                                         {"float": "nan"}
    DType                                {"dtype": "float32"}
    sub-graph (cond, while, call)        {"graph": {...}}
    Variable                             {"variable": 0}  (an index into "variables")
    random op state                      {"rng": [global_seed, op_seed]} or {"rng": null}
    print/assert template slot           {"slot": 0, "variable": null}, with "weak": "i" (a
                                         Python number), "rows": true or "spread" (a list)
    f-string in a print template         {"fstring": ["text", [value, "r", spec], ...]}
    an object's text shown in a container {"shown": "text" or {"fstring": ...}}
    namedtuple                           {"namedtuple": "Point", "fields": [...], "values": [...]}

The function's signature and output structure use the same form plus
{"spec": {"shape": [...], "dtype": ...}} (a tensor argument), {"output": i}
(the i-th graph output), {"output": i, "choices": ["pos", "neg"]} (the string a tensor
condition chose, the i-th output its index) and {"opaque": "repr"} (a Python argument fixed by the
trace that is not plain data; a loaded function ignores values given for it).
Anything else (a py_function's Python function, a file to print to) is a SaveError, whose
message is the object's `cannot_save` text when it has one.

An operation's (and a function graph's) "device" is the `rt.device` scope it was traced
in, a hint: loading never requires that device (without it, the op runs on cpu:0).
Each operation's "origin" is [file, line, function, source line]: the text of the line
is saved with it (at most SOURCE_LINE_CHARS), so a loaded graph shows it in errors
without opening the file. The header's "arrays_sha256" is the `arrays.digest` of the
arrays file. Version 1 (still read) had neither.
"""
import math

import numpy as np

from .. import devices
from .. import dtypes
from ..function import TensorSpec
from ..nest import Choice, Slot
from ..graph import Graph
from ..ops.logging_ops import FormattedTemplate, Shown, TemplateSlot
from ..ops.random_ops import RngState
from ..variables import Variable
from .arrays import digest
from .errors import SaveError

__all__ = ["FORMAT", "VERSION", "SOURCE_LINE_CHARS", "Writer", "tensor_ref", "shape_json"]

FORMAT = "runtime-saved-graph"
VERSION = 2
SOURCE_LINE_CHARS = 200


def tensor_ref(t):
    """A tensor's name inside its graph: 'op_name:index'."""
    return f"{t.op.name}:{t.index}"


def shape_json(shape):
    """A TensorShape as JSON: null (unknown rank) or a list of ints and nulls."""
    return None if shape.dims is None else list(shape.dims)


class Writer:
    """Turns a ConcreteFunction into a JSON document plus {key: ndarray}."""

    def __init__(self):
        self.arrays = {}
        self._array_keys = {}
        self.variables = []
        self._variable_index = {}
        self.op_modules = {}

    def document(self, concrete):
        graph = self.graph(concrete.graph, [])
        doc = {
            "format": FORMAT, "version": VERSION, "name": concrete.name,
            "signature": self.value(concrete.structured_input_signature, "the signature",
                                    opaque=True),
            "outputs": self.value(concrete._output_template, "the function's results"),
            "graph": graph,
        }
        doc["variables"] = [self._variable_json(i, v) for i, v in enumerate(self.variables)]
        doc["op_modules"] = self.op_modules
        doc["arrays_sha256"] = digest(self.arrays)
        return doc

    # -- graphs ------------------------------------------------------------------------
    def graph(self, g, enclosing):
        stack = enclosing + [g]
        captures = []
        for outer, inner in g.captures:
            captures.append({"inner": tensor_ref(inner), "outer": _outer_ref(outer, stack)})
        return {
            "name": g.name,
            "function": bool(getattr(g, "is_function", False)),
            "ops": [self.op(op, stack) for op in g.ops],
            "inputs": [tensor_ref(t) for t in g.inputs],
            "captures": captures,
            "outputs": [tensor_ref(t) for t in g.outputs],
            "control_outputs": [op.name for op in g.control_outputs],
            **({} if g.n_visible is None else {"n_visible": g.n_visible}),
            **({} if g.device is None else {"device": g.device}),
        }

    def op(self, op, stack):
        if op.type == "py_function":
            func = op.attrs.get("func")
            raise SaveError(
                f"Cannot save {op.describe()}: it calls the Python function "
                f"{getattr(func, '__qualname__', func)!r}, which a saved graph cannot hold. "
                f"Replace rt.py_function by runtime ops to save this function.")
        for t in op.inputs:
            if t.op.graph is not op.graph:
                raise SaveError(f"Cannot save {op.describe()}: its input {t.name} is in "
                                f"another graph")
        declared_by = op.opdef.infer or op.opdef.generic or op.opdef.kernel
        module = getattr(declared_by, "__module__", None)
        if module and not module.startswith("runtime."):
            self.op_modules[op.type] = module
        attrs = {}
        for key, value in op.attrs.items():
            where = f"attribute '{key}' of {op.describe()}"
            attrs[key] = ({"graph": self.graph(value, stack)} if isinstance(value, Graph)
                          else self.value(value, where))
        origin = op.origin
        return {
            "name": op.name,
            "type": op.type,
            "inputs": [tensor_ref(t) for t in op.inputs],
            "control_inputs": [c.name for c in op.control_inputs],
            "attrs": attrs,
            "outputs": [{"dtype": t.dtype.name, "shape": shape_json(t.shape)}
                        for t in op.outputs],
            "origin": None if origin is None else [origin.filename, origin.lineno, origin.name,
                                                   origin.line()[:SOURCE_LINE_CHARS]],
            **({} if op.device is None else {"device": op.device}),
        }

    # -- values ------------------------------------------------------------------------
    def value(self, x, where, opaque=False):
        """The tagged JSON form of an attribute or template value (see the module doc)."""
        def enc(v):
            if v is None or isinstance(v, (bool, str)):
                return v
            if isinstance(v, int):
                return int(v)
            if isinstance(v, float):
                return v if math.isfinite(v) else {"float": repr(v)}
            if isinstance(v, complex):
                return {"complex": [enc(v.real), enc(v.imag)]}
            if isinstance(v, tuple) and hasattr(type(v), "_fields"):
                return {"namedtuple": type(v).__name__, "fields": list(type(v)._fields),
                        "values": [enc(c) for c in v]}
            if type(v) is tuple:
                return [enc(c) for c in v]
            if type(v) is list:
                return {"list": [enc(c) for c in v]}
            if type(v) is dict:
                return {"dict": [[enc(k), enc(c)] for k, c in v.items()]}
            if isinstance(v, np.ndarray):
                return {"array": self._array(v, where)}
            if isinstance(v, np.generic):
                _check_dtype(v.dtype, where)
                return {"scalar": enc(v.item()), "dtype": v.dtype.name}
            if isinstance(v, dtypes.DType):
                return {"dtype": v.name}
            if isinstance(v, Variable):
                return {"variable": self._variable(v, where)}
            if isinstance(v, RngState):
                return {"rng": None if v.seeds is None else [int(s) for s in v.seeds]}
            if isinstance(v, TemplateSlot):
                slot = {"slot": v.index, "variable": None if v.variable is None
                        else self._variable(v.variable, where)}
                if v.weak is not None:
                    slot["weak"] = v.weak           # prints as a Python number
                if v.rows:
                    slot["rows"] = v.rows           # prints as a list of its rows (true),
                                                    # or as its rows ("spread": print(*l))
                return slot
            if isinstance(v, Shown):
                return {"shown": enc(v.text)}
            if isinstance(v, FormattedTemplate):
                return {"fstring": [p if isinstance(p, str) else [enc(p[0]), p[1], enc(p[2])]
                                    for p in v.parts]}
            if isinstance(v, TensorSpec):
                return {"spec": {"shape": shape_json(v.shape), "dtype": v.dtype.name,
                                 "name": v.name}}
            if isinstance(v, Choice):
                return {"output": v.index, "choices": list(v.choices)}
            if isinstance(v, Slot):
                return {"output": v.index}
            if opaque:
                return {"opaque": repr(v)[:200]}
            reason = getattr(v, "cannot_save", None)       # the object says why
            if isinstance(reason, str):
                raise SaveError(f"Cannot save {where}: {reason}")
            raise SaveError(f"Cannot save {where}: it holds a Python object of type "
                            f"{type(v).__name__} ({repr(v)[:80]}); a saved graph holds only "
                            f"tensors, numbers, strings, tuples, lists and dicts")
        return enc(x)

    def _array(self, array, where):
        _check_dtype(array.dtype, where)
        key = self._array_keys.get(id(array))
        if key is None:
            key = self._array_keys[id(array)] = f"a{len(self.arrays)}"
            self.arrays[key] = array
        return key

    def _variable(self, var, where):
        index = self._variable_index.get(id(var))
        if index is None:
            if var._value is None:
                raise SaveError(f"Cannot save {where}: variable '{var.name}' is not "
                                f"initialized")
            index = self._variable_index[id(var)] = len(self.variables)
            self.variables.append(var)
        return index

    def _variable_json(self, index, var):
        key = f"variable{index}"
        self.arrays[key] = devices.to_host(var._value)
        return {"name": var._name, "dtype": var.dtype.name, "shape": shape_json(var.shape),
                "trainable": var.trainable, "value": key}


def _check_dtype(dtype, where):
    if dtype.hasobject or dtype.kind not in "biufc":
        raise SaveError(f"Cannot save {where}: arrays of dtype {dtype} are not tensor data")


def _outer_ref(outer, stack):
    """Where a captured tensor lives: {"up": levels above the capturing graph, "tensor"}."""
    graph = getattr(getattr(outer, "op", None), "graph", None)
    for up, g in enumerate(reversed(stack[:-1]), start=1):
        if g is graph:
            return {"up": up, "tensor": tensor_ref(outer)}
    raise SaveError(f"Cannot save graph '{stack[-1].name}': it captures {outer!r}, which "
                    f"belongs to no graph being saved (trace the function at top level)")
