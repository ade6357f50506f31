"""A saved JSON graph description rebuilt into a runtime Graph, checking everything.

Every operation is rebuilt through the op registry, as tracing builds it: its
attributes are decoded (see `encode` for their tagged form) and checked, its
inputs must be outputs of earlier operations (so a graph with a cycle, or a
reference to a missing tensor, never loads), its kernel must accept the inputs
and attributes, and its shape rule runs on them and must agree with the dtypes
and shapes the file declares. Sub-graphs of cond / while / call must fit the
operation that owns them. Whatever is wrong raises a `LoadError` naming the file
and the graph, operation or attribute at fault; nothing in the file is executed.
Before any of that, the arrays must be those the description was saved with (their
digest), and a source location is kept as data (`SavedFrame`): no file it names is opened.
"""
import collections
import inspect

import numpy as np

from .. import context
from .. import devices
from .. import dtypes
from .. import nest
from ..function import ConcreteFunction, TensorSpec
from ..nest import Choice, Slot
from ..graph import Graph
from ..ops import registry
from ..ops.logging_ops import FormattedTemplate, Shown, TemplateSlot
from ..ops.random_ops import RngState
from ..shapes import TensorShape
from ..traceback_utils import Frame
from ..variables import Variable
from .arrays import MAX_BYTES, digest
from .encode import FORMAT, SOURCE_LINE_CHARS, VERSION
from .errors import LoadError

__all__ = ["Reader", "SavedFrame"]


_ORIGIN_CHARS = max(4096, SOURCE_LINE_CHARS)     # a file name, function name or source line


class SavedFrame(Frame):
    """A source location read from a saved graph: its line is the text saved with it (a
    loaded graph never opens the files it names; a version-1 save has no text)."""

    __slots__ = ("text",)

    def __init__(self, filename, lineno, name, text=""):
        super().__init__(filename, lineno, name)
        self.text = text

    def line(self):
        return self.text


class Opaque:
    """A Python argument of the trace that was not plain data (its repr is kept)."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return f"<unsaved Python value {self.text}>"


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_ints(v):
    return isinstance(v, tuple) and all(_is_int(x) for x in v)


def _is_number(v):
    return isinstance(v, (int, float, complex, np.generic)) and not isinstance(
        v, (np.str_, np.bytes_))


_KIND_CHECKS = {
    "an int": _is_int,
    "an int or null": lambda v: v is None or _is_int(v),
    "a bool": lambda v: isinstance(v, bool),
    "a string": lambda v: isinstance(v, str),
    "a dtype": lambda v: isinstance(v, dtypes.DType),
    "a list of ints": _is_ints,
    "null or a list of ints": lambda v: v is None or _is_ints(v),
    "null, an int or a list of ints": lambda v: v is None or _is_int(v) or _is_ints(v),
    "null or a list of ints and nulls": lambda v: v is None or (
        isinstance(v, tuple) and all(d is None or _is_int(d) for d in v)),
    "a number": _is_number,
    "an array or a number": lambda v: isinstance(v, np.ndarray) or _is_number(v),
    "a list": lambda v: isinstance(v, tuple),
    "a sub-graph": lambda v: isinstance(v, Graph),
    "a variable": lambda v: isinstance(v, Variable),
    "a random state": lambda v: isinstance(v, RngState),
    "null": lambda v: v is None,
    'null, "stdout" or "stderr"': lambda v: v in (None, "stdout", "stderr"),
    'null, an int or "input"': lambda v: v is None or _is_int(v) or v == "input",
    "an index spec": lambda v: isinstance(v, tuple) and all(
        isinstance(item, tuple) and item and item[0] in ("i", "t", "s", "n", "e")
        for item in v),
}

# What each attribute name holds, for every op that uses it (unknown names: any value).
_ATTR_KINDS = {
    "axis": "null, an int or a list of ints", "keepdims": "a bool", "dtype": "a dtype",
    "out_type": "a dtype", "output_type": "a dtype",
    "shape": "null or a list of ints and nulls", "perm": "null or a list of ints",
    "num": "an int or null", "sizes": "a list of ints", "multiples": "a list of ints",
    "depth": "an int", "on_value": "a number", "off_value": "a number",
    "value": "an array or a number", "spec": "an index spec",
    "transpose_a": "a bool", "transpose_b": "a bool",
    "n_vars": "an int", "maximum_iterations": 'null, an int or "input"',
    "n_outputs": "an int or null", "stacks": "an int or null",
    "cond_map": "a list of ints", "body_map": "a list of ints",
    "then_map": "a list of ints", "else_map": "a list of ints",
    "cond_graph": "a sub-graph", "body_graph": "a sub-graph", "then_graph": "a sub-graph",
    "else_graph": "a sub-graph", "f": "a sub-graph",
    "var": "a variable", "state": "a random state",
    "template": "a list", "sep": "a string", "end": "a string",
    "file": 'null, "stdout" or "stderr"', "flush": "a bool",
    "summarize": "an int or null", "message": "a string",
    "minval": "a number", "maxval": "a number", "mean": "a number", "stddev": "a number",
}


class Reader:
    """Rebuilds the ConcreteFunction of a saved document; `source` names it in errors."""

    def __init__(self, doc, arrays, source):
        self.doc = doc
        self.arrays = arrays
        self.source = source
        self.variables = []

    def fail(self, where, message):
        raise LoadError(f"{self.source}: {where}: {message}")

    def field(self, d, key, kind, where):
        """d[key], which must be an instance of `kind`."""
        if not isinstance(d, dict):
            self.fail(where, f"expected a JSON object, got {type(d).__name__}")
        if key not in d:
            self.fail(where, f"the field '{key}' is missing")
        value = d[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            names = kind.__name__ if isinstance(kind, type) else "/".join(
                k.__name__ for k in kind)
            self.fail(where, f"the field '{key}' must be {names}, got {type(value).__name__}")
        return value

    # -- the function ---------------------------------------------------------------------
    def function(self):
        doc = self.doc
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            self.fail("header", f"not a saved graph (the 'format' field is not {FORMAT!r})")
        version = self.field(doc, "version", int, "header")
        if version > VERSION:
            self.fail("header", f"written by a newer version of the format ({version}); "
                                f"this runtime reads versions up to {VERSION}")
        if version < 1:
            self.fail("header", f"version {version} of the format does not exist")
        if version >= 2:
            self.check_digest(self.field(doc, "arrays_sha256", str, "header"))
        name = self.field(doc, "name", str, "header")
        self.op_modules = doc.get("op_modules") if isinstance(doc.get("op_modules"),
                                                                dict) else {}
        with context.init_scope():
            self.variables = [self.variable(v, f"variables[{i}]") for i, v in
                              enumerate(self.field(doc, "variables", list, "header"))]
        graph = self.graph(self.field(doc, "graph", dict, "header"), [], "graph")
        if graph.captures:
            self.fail(f"graph '{graph.name}'", "the function's graph cannot capture tensors")
        graph.is_function = True
        signature = self.value(doc.get("signature"), "signature", "signature")
        outputs = self.value(doc.get("outputs"), "outputs", "outputs")
        self.check_signature(signature, graph)
        for leaf in nest.flatten(outputs):
            if isinstance(leaf, Slot) and not 0 <= leaf.index < len(graph.outputs):
                self.fail("outputs", f"refers to output {leaf.index} of a graph with "
                                     f"{len(graph.outputs)} outputs")
        concrete = ConcreteFunction(graph, outputs, signature, name)
        concrete.variables = list(self.variables)
        return concrete

    def check_digest(self, recorded):
        if digest(self.arrays) != recorded:
            self.fail("header", "the arrays file is not the one saved with this graph "
                                "description (their content hash differs): the two files come "
                                "from different saves, or one of them was changed")

    def check_signature(self, signature, graph):
        if not (isinstance(signature, tuple) and len(signature) == 2
                and isinstance(signature[0], tuple) and isinstance(signature[1], dict)):
            self.fail("signature", "must be [arguments, {keyword arguments}]")
        specs = [x for x in nest.flatten(signature) if isinstance(x, TensorSpec)]
        if len(specs) != len(graph.inputs):
            self.fail("signature", f"lists {len(specs)} tensor arguments but the graph has "
                                   f"{len(graph.inputs)} inputs")
        for i, (spec, ph) in enumerate(zip(specs, graph.inputs)):
            if spec.dtype != ph.dtype or not spec.shape.is_compatible_with(ph.shape):
                self.fail("signature", f"tensor argument {i} is {spec} but the graph's input "
                                       f"{ph.op.name} has dtype {ph.dtype.name} and shape "
                                       f"{ph.shape}")

    def variable(self, d, where):
        name = self.field(d, "name", str, where)
        dtype = self.dtype(self.field(d, "dtype", str, where), where)
        shape = self.shape(d.get("shape"), where)
        array = self.array(self.field(d, "value", str, where), where)
        if array.dtype != dtype.np:
            self.fail(where, f"variable '{name}' is declared {dtype.name} but its value is "
                             f"{array.dtype}")
        if not TensorShape(array.shape).is_subshape_of(shape):
            self.fail(where, f"variable '{name}' is declared with shape {shape} but its "
                             f"value has shape {list(array.shape)}")
        trainable = self.field(d, "trainable", bool, where)
        return Variable(array, trainable=trainable, name=name, dtype=dtype, shape=shape)

    # -- graphs --------------------------------------------------------------------------
    def graph(self, d, enclosing, where):
        name = self.field(d, "name", str, where)
        where = f"graph '{name}'" if not enclosing else f"{where} (graph '{name}')"
        g = Graph(name=name, outer_graph=enclosing[-1] if enclosing else None)
        if self.field(d, "function", bool, where):
            g.is_function = True
        stack = enclosing + [g]
        for i, op in enumerate(self.field(d, "ops", list, where)):
            self.op(op, g, stack, f"{where} ops[{i}]")
        for i, c in enumerate(self.field(d, "captures", list, where)):
            self.capture(c, g, stack, f"{where} captures[{i}]")
        g.inputs = [self.tensor(r, g, f"{where} inputs")
                    for r in self.field(d, "inputs", list, where)]
        self.check_interface(g, where)
        g.outputs = [self.tensor(r, g, f"{where} outputs")
                     for r in self.field(d, "outputs", list, where)]
        if "n_visible" in d:            # outputs past it are kept for gradients only
            n = d["n_visible"]
            if not (_is_int(n) and 0 <= n <= len(g.outputs)):
                self.fail(where, f"n_visible {n!r} is not a count of its outputs")
            g.n_visible = n
        g.control_outputs = [self.op_named(n, g, f"{where} control_outputs")
                             for n in self.field(d, "control_outputs", list, where)]
        g.device = self.device(d, where)
        return g

    def device(self, d, where):
        """The device hint of a graph or operation (None when it has none)."""
        name = d.get("device")
        if name is None:
            return None
        try:
            return devices.canonical(name)
        except (TypeError, ValueError):
            self.fail(where, f"'device' must be a device name like 'gpu:0', got {name!r}"[:300])

    def capture(self, d, g, stack, where):
        inner = self.tensor(self.field(d, "inner", str, where), g, where)
        outer_ref = self.field(d, "outer", dict, where)
        up = self.field(outer_ref, "up", int, where)
        if not 1 <= up < len(stack):
            self.fail(where, f"'up' must be between 1 and {len(stack) - 1}, got {up}")
        outer = self.tensor(self.field(outer_ref, "tensor", str, where), stack[-1 - up], where)
        if inner.op.type != "capture":
            self.fail(where, f"{inner.name} is a {inner.op.type} op, not a capture")
        if id(outer) in g._capture_map or any(inner is i for _, i in g.captures):
            self.fail(where, f"{inner.name} is captured twice")
        if outer.dtype != inner.dtype:
            self.fail(where, f"captures {outer.name} of dtype {outer.dtype.name} into "
                             f"{inner.name} of dtype {inner.dtype.name}")
        g.captures.append((outer, inner))
        g._capture_map[id(outer)] = inner

    def check_interface(self, g, where):
        """Every placeholder is an input and every capture op is fed: nothing runs unfed."""
        inputs = {id(t.op) for t in g.inputs}
        if len(inputs) != len(g.inputs):
            self.fail(where, "an input is listed twice")
        captured = {id(inner.op) for _, inner in g.captures}
        for op in g.ops:
            if op.type == "placeholder" and id(op) not in inputs:
                self.fail(where, f"placeholder '{op.name}' is not one of the graph's inputs")
            if op.type != "placeholder" and id(op) in inputs:
                self.fail(where, f"input '{op.name}' is a {op.type} op, not a placeholder")
            if op.type == "capture" and id(op) not in captured:
                self.fail(where, f"capture '{op.name}' is not listed in 'captures'")

    def op_named(self, name, g, where):
        if not isinstance(name, str):
            self.fail(where, f"expected an operation name, got {name!r}")
        try:
            return g.get_operation_by_name(name)
        except KeyError:
            self.fail(where, f"no operation named '{name}' before this point in graph "
                             f"'{g.name}' (a missing operation, or a cycle)")

    def tensor(self, ref, g, where):
        if not isinstance(ref, str) or ":" not in ref:
            self.fail(where, f"expected a tensor name 'op:index', got {ref!r}")
        op_name, _, index = ref.rpartition(":")
        op = self.op_named(op_name, g, where)
        if not (index.isascii() and index.isdigit() and len(index) < 10) \
                or int(index) >= len(op.outputs):
            self.fail(where, f"operation '{op_name}' has {len(op.outputs)} outputs, so "
                             f"{ref!r} does not exist")
        return op.outputs[int(index)]

    # -- operations ------------------------------------------------------------------------
    def op(self, d, g, stack, where):
        name = self.field(d, "name", str, where)
        op_type = self.field(d, "type", str, where)
        where = f"{where} operation '{name}' ({op_type})"
        if not name or name in g._ops_by_name:
            self.fail(where, "the operation name is empty or used twice")
        try:
            opdef = registry.get(op_type)
        except KeyError:
            module = self.op_modules.get(op_type)
            hint = (f"; it was declared by module {module}: import that module before "
                    f"loading" if isinstance(module, str) else "")
            self.fail(where, f"unknown op type '{op_type}'{hint}")
        if op_type == "py_function":
            self.fail(where, "py_function calls Python code, which a saved graph never holds")
        inputs = [self.tensor(r, g, where) for r in self.field(d, "inputs", list, where)]
        attrs = {}
        for key, value in self.field(d, "attrs", dict, where).items():
            attrs[key] = self.attr(key, value, stack, f"{where} attribute '{key}'")
        declared = [self.output_spec(o, f"{where} outputs[{i}]")
                    for i, o in enumerate(self.field(d, "outputs", list, where))]
        self.check_attrs(opdef, inputs, attrs, where)
        check = _SUBGRAPH_CHECKS.get(op_type)
        if check is not None:
            problem = check(inputs, **attrs)
            if problem:
                self.fail(where, problem)
        specs = declared if opdef.infer is None else self.infer(opdef, inputs, attrs, where)
        specs = self.reconcile(specs, declared, where)
        op = g.create_op(opdef, inputs, attrs, specs, name=name, origin=self.origin(d, where))
        if op.name != name:
            self.fail(where, f"the operation name clashes with '{op.name}'")
        if d.get("origin") is None:
            op.origin = None
        op.device = self.device(d, where)
        op.control_inputs = [self.op_named(n, g, f"{where} control_inputs")
                             for n in self.field(d, "control_inputs", list, where)]

    def check_attrs(self, opdef, inputs, attrs, where):
        for key, value in attrs.items():
            kind = _ATTR_KINDS.get(key)
            if kind is not None and not _KIND_CHECKS[kind](value):
                self.fail(f"{where} attribute '{key}'", f"must be {kind}, got {value!r}"[:300])
        if opdef.effect is not None and not isinstance(attrs.get("var"), Variable):
            self.fail(where, "the attribute 'var' must name a variable")
        try:
            inspect.signature(opdef.kernel).bind(*inputs, **attrs)
        except TypeError as e:
            self.fail(where, f"its kernel does not take these {len(inputs)} inputs and "
                             f"attributes {sorted(attrs)}: {e}")
        except ValueError:          # a kernel without a signature: the shape rule decides
            pass

    def infer(self, opdef, inputs, attrs, where):
        try:
            specs = [(TensorShape(shape), dtype) for shape, dtype in
                     opdef.infer(inputs, **attrs)]
        except RecursionError:
            raise
        except Exception as e:  # noqa: BLE001 - any failure of the rule is the file's fault
            self.fail(where, f"its inputs or attributes are invalid: {e}"[:500])
        for shape, dtype in specs:
            if not isinstance(dtype, dtypes.DType):
                self.fail(where, f"its inputs or attributes are invalid: they make an output "
                                 f"of dtype {dtype!r}"[:300])
        return specs

    def reconcile(self, specs, declared, where):
        """The inferred output specs, refined by the declared ones, which must agree."""
        if len(specs) != len(declared):
            self.fail(where, f"declares {len(declared)} outputs, the op makes {len(specs)}")
        out = []
        for i, ((shape, dtype), (d_shape, d_dtype)) in enumerate(zip(specs, declared)):
            if dtype != d_dtype or not shape.is_compatible_with(d_shape):
                self.fail(where, f"output {i} is declared {d_dtype.name}{d_shape.short()} but "
                                 f"the op makes {dtype.name}{shape.short()}")
            out.append((shape.merge_with(d_shape), dtype))
        return out

    def output_spec(self, d, where):
        dtype = self.dtype(self.field(d, "dtype", str, where), where)
        shape = self.shape(d.get("shape", "missing"), where)
        n = shape.num_elements()
        if n is not None and n * dtype.np.itemsize > MAX_BYTES:
            self.fail(where, f"the shape {shape} is too large ({n} elements)")
        return shape, dtype

    def origin(self, d, where):
        origin = d.get("origin")
        if origin is None:
            return None
        texts = origin[:1] + origin[2:] if isinstance(origin, list) else None
        if not (isinstance(origin, list) and len(origin) in (3, 4) and _is_int(origin[1])
                and all(isinstance(t, str) and len(t) <= _ORIGIN_CHARS for t in texts)):
            self.fail(where, f"'origin' must be [file, line, function, source line], got "
                             f"{origin!r}"[:300])
        return SavedFrame(*origin)

    # -- values ----------------------------------------------------------------------------
    def dtype(self, name, where):
        try:
            return dtypes.as_dtype(name)
        except (TypeError, ValueError):
            self.fail(where, f"unknown dtype {name!r}")

    def shape(self, dims, where):
        if dims is None:
            return TensorShape(None)
        if not isinstance(dims, list) or not all(d is None or (_is_int(d) and 0 <= d < 2**62)
                                                 for d in dims):
            self.fail(where, f"a shape must be null or a list of sizes and nulls, got "
                             f"{dims!r}"[:300])
        return TensorShape(dims)

    def array(self, key, where):
        if not isinstance(key, str) or key not in self.arrays:
            self.fail(where, f"the array {key!r} is missing from the arrays file")
        return self.arrays[key]

    def attr(self, key, value, stack, where):
        if isinstance(value, dict) and set(value) == {"graph"}:
            return self.graph(self.field(value, "graph", dict, where), stack, where)
        return self.value(value, where, "attr")

    def value(self, x, where, context_):
        """Decode the tagged JSON of `encode` (context_: 'attr', 'signature' or 'outputs')."""
        def dec(v):
            if v is None or isinstance(v, (bool, str, int, float)):
                return v
            if isinstance(v, list):
                return tuple(dec(c) for c in v)
            if not isinstance(v, dict):
                self.fail(where, f"unexpected JSON value {v!r}"[:300])
            tag = frozenset(v)
            decode = _TAGS.get(tag)
            if decode is None or (tag in _CONTEXT_TAGS and _CONTEXT_TAGS[tag] != context_):
                self.fail(where, f"unknown tagged value with keys {sorted(v)}")
            try:
                return decode(self, v, dec, where)
            except LoadError:
                raise
            except (TypeError, ValueError, OverflowError) as e:
                self.fail(where, f"invalid value {v!r}: {e}"[:300])
        return dec(x)


def _index(reader, v, n, what, where):
    if not _is_int(v) or not 0 <= v < n:
        reader.fail(where, f"{what} {v!r} does not exist")
    return v


def _dec_scalar(r, v, dec, where):
    dtype = r.dtype(v["dtype"], where)
    value = dec(v["scalar"])
    if not _is_number(value):
        r.fail(where, f"a scalar must be a number, got {value!r}")
    return dtype.np.type(value)


def _dec_dict(r, v, dec, where):
    items = v["dict"]
    if not isinstance(items, list) or not all(isinstance(p, list) and len(p) == 2
                                              for p in items):
        r.fail(where, "a dict must be a list of [key, value] pairs")
    return {dec(k): dec(c) for k, c in items}


def _dec_float(r, v, dec, where):
    if v["float"] not in ("nan", "inf", "-inf"):
        r.fail(where, f"{v['float']!r} is not 'nan', 'inf' or '-inf'")
    return float(v["float"])


def _dec_rng(r, v, dec, where):
    seeds = v["rng"]
    if seeds is None:
        return RngState(None)
    if not (isinstance(seeds, list) and len(seeds) == 2
            and all(_is_int(s) and 0 <= s < 2**63 for s in seeds)):
        r.fail(where, f"a random state is null or two seeds, got {seeds!r}")
    return RngState(tuple(seeds))


def _dec_slot(r, v, dec, where):
    var = v["variable"]
    slot = TemplateSlot(
        _index(r, v["slot"], 2**31, "template slot", where),
        None if var is None else r.variables[_index(r, var, len(r.variables), "variable",
                                                    where)])
    weak, rows = v.get("weak"), v.get("rows", False)
    if weak is not None and weak not in ("b", "i", "f", "c"):
        r.fail(where, f"a template slot's 'weak' is one of b, i, f, c, got {weak!r}")
    if not (isinstance(rows, bool) or rows == "spread"):
        r.fail(where, f"a template slot's 'rows' is true, false or 'spread', got {rows!r}")
    slot.weak, slot.rows = weak, rows
    return slot


def _dec_fstring(r, v, dec, where):
    if not isinstance(v["fstring"], list):
        r.fail(where, "'fstring' must hold a JSON list")
    parts = []
    for part in v["fstring"]:
        if isinstance(part, str):
            parts.append(part)
            continue
        if not (isinstance(part, list) and len(part) == 3
                and part[1] in (None, "s", "r", "a", "%", "choice")):
            r.fail(where, f"an f-string part is text or [value, conversion, spec], got "
                          f"{part!r}"[:300])
        spec = dec(part[2])
        if part[1] == "choice":               # the strings a tensor condition chooses among
            if not (isinstance(spec, (list, tuple)) and spec
                    and all(isinstance(c, (str, FormattedTemplate)) for c in spec)):
                r.fail(where, f"a chosen string's choices must be text or f-strings, got "
                              f"{spec!r}"[:300])
            parts.append((dec(part[0]), "choice", tuple(spec)))
            continue
        if not isinstance(spec, (str, FormattedTemplate)):
            r.fail(where, f"an f-string format spec must be text, got {spec!r}"[:300])
        parts.append((dec(part[0]), part[1], spec))
    return FormattedTemplate(tuple(parts))


def _dec_choice(r, v, where):
    choices = v["choices"]
    if not (isinstance(choices, list) and choices and all(isinstance(c, str) for c in choices)):
        r.fail(where, f"'choices' must be a list of strings, got {choices!r}"[:300])
    return Choice(_index(r, v["output"], 2**31, "output", where), choices)


def _dec_shown(r, v, dec, where):
    text = dec(v["shown"])
    if not isinstance(text, (str, FormattedTemplate)):
        r.fail(where, f"a shown text must be text or an f-string, got {text!r}"[:300])
    return Shown(text)


def _dec_namedtuple(r, v, dec, where):
    fields, values = v["fields"], v["values"]
    if not (isinstance(fields, list) and isinstance(values, list)
            and len(fields) == len(values) and isinstance(v["namedtuple"], str)):
        r.fail(where, "a namedtuple needs a name and as many fields as values")
    cls = collections.namedtuple(v["namedtuple"], fields)
    return cls(*[dec(c) for c in values])


def _dec_spec(r, v, dec, where):
    spec = v["spec"]
    name = r.field(spec, "name", (str, type(None)), where)
    return TensorSpec(r.shape(spec.get("shape"), where),
                      r.dtype(r.field(spec, "dtype", str, where), where), name)


def _dec_complex(r, v, dec, where):
    parts = v["complex"]
    if not (isinstance(parts, list) and len(parts) == 2):
        r.fail(where, "a complex number is [real, imag]")
    return complex(dec(parts[0]), dec(parts[1]))


def _dec_list(r, v, dec, where):
    if not isinstance(v["list"], list):
        r.fail(where, "'list' must hold a JSON list")
    return [dec(c) for c in v["list"]]


_TAGS = {
    frozenset({"list"}): _dec_list,
    frozenset({"dict"}): _dec_dict,
    frozenset({"float"}): _dec_float,
    frozenset({"complex"}): _dec_complex,
    frozenset({"scalar", "dtype"}): _dec_scalar,
    frozenset({"array"}): lambda r, v, dec, where: r.array(v["array"], where),
    frozenset({"dtype"}): lambda r, v, dec, where: r.dtype(v["dtype"], where),
    frozenset({"variable"}): lambda r, v, dec, where: r.variables[
        _index(r, v["variable"], len(r.variables), "variable", where)],
    frozenset({"rng"}): _dec_rng,
    frozenset({"slot", "variable"}): _dec_slot,
    frozenset({"fstring"}): _dec_fstring,
    frozenset({"shown"}): _dec_shown,
    frozenset({"namedtuple", "fields", "values"}): _dec_namedtuple,
    frozenset({"spec"}): _dec_spec,
    frozenset({"output"}): lambda r, v, dec, where: Slot(
        _index(r, v["output"], 2**31, "output", where)),
    frozenset({"output", "choices"}): lambda r, v, dec, where: _dec_choice(r, v, where),
    frozenset({"opaque"}): lambda r, v, dec, where: Opaque(str(v["opaque"])),
}
_CONTEXT_TAGS = {frozenset({"spec"}): "signature", frozenset({"opaque"}): "signature",
                 frozenset({"output"}): "outputs", frozenset({"array"}): "attr",
                 frozenset({"output", "choices"}): "outputs",
                 frozenset({"rng"}): "attr", frozenset({"slot", "variable"}): "attr",
                 frozenset({"fstring"}): "attr", frozenset({"shown"}): "attr"}
# A print's template slot may also say how its value prints ("weak", "rows").
for _extra in ({"weak"}, {"rows"}, {"weak", "rows"}):
    _TAGS[frozenset({"slot", "variable"} | _extra)] = _dec_slot
    _CONTEXT_TAGS[frozenset({"slot", "variable"} | _extra)] = "attr"


# -- sub-graphs fit the operation that owns them ---------------------------------------------

def _feeds_problem(what, tensors, placeholders):
    """Why `tensors` cannot feed `placeholders` (count, dtype, shape), or None."""
    if len(tensors) != len(placeholders):
        return f"{what} takes {len(placeholders)} values but is fed {len(tensors)}"
    for i, (t, ph) in enumerate(zip(tensors, placeholders)):
        if t.dtype != ph.dtype or not t.shape.is_compatible_with(ph.shape):
            return (f"{what} value {i} ({ph.op.name}) is {ph.dtype.name}{ph.shape.short()} "
                    f"but is fed {t.dtype.name}{t.shape.short()}")
    return None


def _mapped_captures(what, graph, mapping, available):
    if len(mapping) != len(graph.captures):
        return None, (f"{what} has {len(graph.captures)} captures but its map lists "
                      f"{len(mapping)}")
    if any(not 0 <= i < len(available) for i in mapping):
        return None, f"{what}'s capture map {mapping} points past the {len(available)} inputs"
    return [available[i] for i in mapping], None


def _check_cond(inputs, then_graph, else_graph, then_map, else_map, n_outputs=None):
    if not inputs or not inputs[0].dtype.is_bool or inputs[0].shape.rank not in (0, None):
        return "the first input (the predicate) must be a scalar bool"
    if len(then_graph.outputs) != len(else_graph.outputs) or any(
            a.dtype != b.dtype for a, b in zip(then_graph.outputs, else_graph.outputs)):
        return "the branches' outputs differ in number or dtype"
    if n_outputs is not None and not 0 <= n_outputs <= len(then_graph.outputs):
        return f"n_outputs={n_outputs} but the branches have {len(then_graph.outputs)} outputs"
    for what, g, mapping in (("then_graph", then_graph, then_map),
                             ("else_graph", else_graph, else_map)):
        if g.inputs:
            return f"{what} must not have inputs (only captures)"
        fed, problem = _mapped_captures(what, g, mapping, inputs[1:])
        problem = problem or _feeds_problem(what, fed, [i for _, i in g.captures])
        if problem:
            return problem
    return None


def _check_while(inputs, n_vars, cond_graph, body_graph, cond_map, body_map,
                 maximum_iterations, stacks=None):
    rest = inputs[n_vars:]
    if n_vars < 0 or len(inputs) < n_vars:
        return f"n_vars={n_vars} but the op has {len(inputs)} inputs"
    if maximum_iterations == "input":
        if not rest or not rest[-1].dtype.is_integer or rest[-1].shape.rank not in (0, None):
            return "maximum_iterations='input' needs a last input that is a scalar int"
        rest = rest[:-1]
    elif maximum_iterations is not None and maximum_iterations < 0:
        return "maximum_iterations must not be negative"
    loop_vars = inputs[:n_vars]
    for what, g, mapping in (("cond_graph", cond_graph, cond_map),
                             ("body_graph", body_graph, body_map)):
        fed, problem = _mapped_captures(what, g, mapping, rest)
        problem = (problem or _feeds_problem(f"{what} (loop variables)", loop_vars, g.inputs)
                   or _feeds_problem(f"{what} (captures)", fed, [i for _, i in g.captures]))
        if problem:
            return problem
    out = cond_graph.outputs
    if len(out) != 1 or not out[0].dtype.is_bool or out[0].shape.rank not in (0, None):
        return "cond_graph must return one scalar bool"
    collected = len(body_graph.outputs) - n_vars    # values gradients collect per iteration
    if collected < 0 or (stacks is not None and not 0 <= stacks <= collected):
        return (f"body_graph has {len(body_graph.outputs)} outputs for {n_vars} loop variables "
                f"and stacks={stacks}")
    return _feeds_problem("body_graph's results as loop variables",
                          body_graph.outputs[:n_vars], body_graph.inputs)


def _check_call(inputs, f):
    return _feeds_problem(f"the called graph '{f.name}'", inputs,
                          list(f.inputs) + [i for _, i in f.captures])


_SUBGRAPH_CHECKS = {"cond": _check_cond, "while": _check_while, "call": _check_call}
