"""TensorBoard summaries: scalars, histograms and graphs written as TensorBoard event files.

    writer = rt.summary.create_file_writer("logs/run1")
    with writer.as_default():
        rt.summary.scalar("loss", loss, step=step)         # eagerly, or inside a graph
        rt.summary.histogram("weights", w, step=step)
        rt.summary.graph(f.get_concrete_function(x))       # the graph tab
    writer.flush()                                         # `tensorboard --logdir logs`

Files are written by this module alone (TFRecord framing, CRC32C, and the few protobuf
messages of TensorBoard's Event format encoded by hand), so writing needs no extra
package; reading them needs TensorBoard (the `tensorboard` extra). Each event is
appended whole: a write that fails part-way (disk full) is cut off again, so no broken
record ever stands before later ones, and `flush` makes them durable. Inside a traced
graph `scalar` and `histogram` add a stateful `write_summary` op that writes each time
the graph runs (such a graph holds the writer, so it cannot be saved with rt.saved).
Graphs are exported as a GraphDef: sub-graphs of cond / while / call become name
scopes ("while/body_graph/add"), each node carries its dtype, output shapes and the
user's source line.
"""
import contextlib
import itertools
import os
import socket
import struct
import threading
import time

import numpy as np

from .graph import Graph
from .ops import registry
from .ops.registry import apply, convert_to_tensor
from .tensor import SymbolicTensor

__all__ = ["create_file_writer", "SummaryWriter", "scalar", "histogram", "graph"]

_state = threading.local()
_file_ids = itertools.count()


# -- protobuf wire format (only what Event, Summary and GraphDef need) ------------------------

def _varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(field, wire):
    return _varint(field << 3 | wire)


def _int(field, n):
    return _key(field, 0) + _varint(int(n))


def _double(field, x):
    return _key(field, 1) + struct.pack("<d", x)


def _float(field, x):
    return _key(field, 5) + struct.pack("<f", x)


def _bytes(field, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    return _key(field, 2) + _varint(len(data)) + data


def _packed_doubles(field, values):
    return _bytes(field, np.asarray(values, "<f8").tobytes())


# -- TFRecord framing --------------------------------------------------------------------------

def _crc32c_table():
    table = []
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    table = _CRC_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _masked_crc(data):
    crc = crc32c(data)
    return struct.pack("<I", (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF)


def _record(data):
    length = struct.pack("<Q", len(data))
    return length + _masked_crc(length) + data + _masked_crc(data)


# -- events ---------------------------------------------------------------------------------

def _event(step=None, **field):
    """An Event message: wall_time, step, and one of file_version / graph_def / summary."""
    out = _double(1, time.time())
    if step is not None:
        out += _int(2, step)
    if "file_version" in field:
        out += _bytes(3, field["file_version"])
    if "graph_def" in field:
        out += _bytes(4, field["graph_def"])
    if "summary" in field:
        out += _bytes(5, field["summary"])
    return out


def _scalar_value(tag, value):
    return _bytes(1, _bytes(1, tag) + _float(2, float(value)))


def _histogram_value(tag, values, buckets):
    values = np.asarray(values, dtype=np.float64).ravel()
    if values.size == 0:
        lo = hi = 0.0
        counts, edges = np.zeros(1), np.zeros(2)
    else:
        lo, hi = float(values.min()), float(values.max())
        counts, edges = np.histogram(values, bins=max(1, int(buckets)),
                                     range=(lo, hi) if hi > lo else (lo - 0.5, lo + 0.5))
    histo = (_double(1, lo) + _double(2, hi) + _double(3, values.size)
             + _double(4, float(values.sum())) + _double(5, float(np.square(values).sum()))
             + _packed_doubles(6, edges[1:]) + _packed_doubles(7, counts))
    return _bytes(1, _bytes(1, tag) + _bytes(5, histo))


# -- GraphDef ---------------------------------------------------------------------------------

_DATA_TYPES = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6,
               "complex64": 8, "int64": 9, "bool": 10, "uint16": 17, "complex128": 18,
               "float16": 19, "uint32": 22, "uint64": 23}


def _shape_proto(shape):
    if shape.dims is None:
        return _int(3, 1)
    return b"".join(_bytes(2, _int(1, -1 if d is None else d)) for d in shape.dims)


def _attr(key, value):
    """One entry of NodeDef.attr (a map<string, AttrValue>)."""
    return _bytes(5, _bytes(1, key) + _bytes(2, value))


def _node_def(name, op, inputs):
    attrs = b""
    if op.outputs:
        attrs += _attr("T", _int(6, _DATA_TYPES.get(op.outputs[0].dtype.name, 0)))
        attrs += _attr("_output_shapes", _bytes(1, b"".join(
            _bytes(7, _shape_proto(t.shape)) for t in op.outputs)))
    if op.origin is not None:
        attrs += _attr("_source", _bytes(2, f"{op.origin.filename}:{op.origin.lineno}"))
    return _bytes(1, _bytes(1, name) + _bytes(2, op.type)
                  + b"".join(_bytes(3, i) for i in inputs) + attrs)


def graph_def(graph):
    """The serialized GraphDef of a Graph (or ConcreteFunction), sub-graphs as name scopes."""
    graph = getattr(graph, "graph", graph)
    names = {}                        # id(op) -> node name
    nodes = []

    def tensor_input(t):
        name = names[id(t.op)]
        return name if t.index == 0 else f"{name}:{t.index}"

    def add(g, scope, feeds):
        for op in g.ops:
            names[id(op)] = scope + op.name
        fed = {id(inner.op): outer for outer, inner in g.captures}
        fed.update({id(ph.op): t for ph, t in zip(g.inputs, feeds)})
        for op in g.ops:
            inputs = [tensor_input(t) for t in op.inputs]
            if id(op) in fed and id(fed[id(op)].op) in names:   # what feeds a sub-graph
                inputs.append(tensor_input(fed[id(op)]))
            inputs += ["^" + names[id(c)] for c in op.control_inputs]
            nodes.append(_node_def(names[id(op)], op, inputs))
            for key, sub in op.attrs.items():
                if isinstance(sub, Graph):      # while / call: inputs start with its feeds
                    add(sub, f"{scope}{op.name}/{key}/", op.inputs)

    add(graph, "", [])
    return b"".join(nodes) + _bytes(4, _int(1, 1))       # versions { producer: 1 }


# -- writers ----------------------------------------------------------------------------------

class SummaryWriter:
    """Writes events to one file in `logdir` (see `create_file_writer`)."""

    def __init__(self, logdir, filename_suffix=""):
        os.makedirs(logdir, exist_ok=True)
        self.logdir = logdir
        name = (f"events.out.tfevents.{int(time.time())}.{socket.gethostname()}."
                f"{os.getpid()}.{next(_file_ids)}{filename_suffix}")
        self.path = os.path.join(logdir, name)
        self._lock = threading.Lock()
        self._file = open(self.path, "wb", buffering=0)
        self._size = 0              # bytes of whole records in the file
        self._write(_event(file_version="brain.Event:2"))

    def _write(self, event):
        """Append one record whole: a write failing part-way (disk full) is cut off again,
        so the records before it, and those written after, stay readable."""
        record = _record(event)
        with self._lock:
            if self._file is None:
                raise ValueError(f"the summary writer for {self.logdir} is closed")
            try:
                view = memoryview(record)
                while view:
                    view = view[self._file.write(view):]
            except BaseException:
                with contextlib.suppress(OSError):
                    self._file.truncate(self._size)
                    self._file.seek(self._size)
                raise
            self._size += len(record)

    def write_scalar(self, tag, value, step):
        """Append a scalar event now (eagerly); `rt.summary.scalar` is the usual way."""
        self._write(_event(step, summary=_scalar_value(tag, value)))

    def write_histogram(self, tag, values, step, buckets=30):
        """Append a histogram event of `values` now; see `rt.summary.histogram`."""
        self._write(_event(step, summary=_histogram_value(tag, values, buckets)))

    def write_graph(self, graph):
        """Append `graph` (an `rt.Graph`) for TensorBoard's graph tab."""
        self._write(_event(graph_def=graph_def(graph)))

    @contextlib.contextmanager
    def as_default(self):
        """Inside the block, rt.summary.scalar/histogram/graph write to this writer."""
        stack = _writers()
        stack.append(self)
        try:
            yield self
        finally:
            stack.pop()

    def flush(self):
        """Make the records written so far durable (they reach the file as written)."""
        with self._lock:
            if self._file is not None:
                os.fsync(self._file.fileno())

    def close(self):
        """Close the file (also on leaving `with writer:`); later writes raise."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<rt.summary.SummaryWriter {self.path}>"


def create_file_writer(logdir, filename_suffix=""):
    """A SummaryWriter writing a new event file in `logdir` (created if missing)."""
    return SummaryWriter(logdir, filename_suffix)


def _writers():
    if not hasattr(_state, "writers"):
        _state.writers = []
    return _state.writers


def _default_writer(what):
    stack = _writers()
    if not stack:
        raise ValueError(f"rt.summary.{what} needs a default writer: use "
                         f"`with rt.summary.create_file_writer(logdir).as_default():`")
    return stack[-1]


# -- summary ops (eager: written at once; in a graph: a stateful op writes when it runs) -------

def _write_kernel(data, step, writer, tag, kind, buckets):
    if kind == "scalar":
        writer.write_scalar(tag, data, int(step))
    else:
        writer.write_histogram(tag, data, int(step), buckets)


_WRITE = registry.register("write_summary", None, lambda inputs, **_: [], stateful=True,
                           numpy=_write_kernel)      # a host op


def _summary(what, name, data, step, kind, buckets=None):
    writer = _default_writer(what)
    if step is None:
        raise ValueError(f"rt.summary.{what}('{name}', ...) needs step=")
    data, step = convert_to_tensor(data), convert_to_tensor(step)
    if not (data.dtype.is_numeric or data.dtype.is_bool):
        raise TypeError(f"rt.summary.{what}: data must be numeric, got {data.dtype.name}")
    if kind == "scalar" and data.shape.rank not in (0, None):
        raise ValueError(f"rt.summary.scalar('{name}'): data must be a scalar, got shape "
                         f"{data.shape}")
    if not step.dtype.is_integer or step.shape.rank not in (0, None):
        raise TypeError(f"rt.summary.{what}: step must be a scalar int")
    if isinstance(data, SymbolicTensor) or isinstance(step, SymbolicTensor):
        return apply(_WRITE, [data, step], {"writer": writer, "tag": name, "kind": kind,
                                            "buckets": buckets})
    _write_kernel(data._host(), step._host(), writer, name, kind, buckets)
    return None


def scalar(name, data, step=None):
    """Write a scalar summary (a loss, an accuracy) to the default writer."""
    return _summary("scalar", name, data, step, "scalar")


def histogram(name, data, step=None, buckets=30):
    """Write a histogram of `data`'s values (`buckets` equal-width bins) to the default writer."""
    return _summary("histogram", name, data, step, "histogram", buckets)


def graph(graph_or_function):
    """Write a Graph or ConcreteFunction to the default writer (TensorBoard's graph tab)."""
    target = getattr(graph_or_function, "graph", graph_or_function)
    if not isinstance(target, Graph):
        raise TypeError(f"rt.summary.graph expects a Graph or a ConcreteFunction, got "
                        f"{graph_or_function!r}")
    _default_writer("graph").write_graph(target)
