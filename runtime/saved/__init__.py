"""Saved graphs: a traced function as data on disk, loaded back without its Python source.

    rt.saved.save(f, "model/")          # an rt.function / ag.convert function, or a ConcreteFunction
    g = rt.saved.load("model/")         # a ConcreteFunction: g(x) runs the saved graph

A saved function is a directory holding
  graph.json   every operation (type, inputs, attributes, output dtypes and shapes, the
               user's source line), sub-graphs of cond / while / call inline, the
               signature, the output structure and the variables (see `encode` for the
               form of attribute values); versioned by its "format" and "version" fields;
  arrays.npz   constants and variable values, whose content hash graph.json records.

Saving replaces both files atomically (see `runtime.files`): a save that fails part-way
leaves the previous one as it was, and a graph.json never loads with another save's
arrays. `to_bytes` / `from_bytes` are the same save as one bytes object (to send a
function to another process); it is read with the same checks.

Loading executes nothing from the files and opens no other file: only regular files are
read (no symbolic link, FIFO or device), within byte limits (`max_bytes` of arrays); no
pickle, no eval; each operation is rebuilt through the op registry and checked (see
`decode`), so a damaged, hand-edited or hostile file raises `LoadError` naming what is
wrong. Source lines for error messages are the text saved with each operation. The loaded
function owns new variables holding the saved values (`.variables`); random ops keep their
seeds. A `py_function` (arbitrary Python) cannot be saved: `SaveError` names it and its line.
"""
import io
import json
import os

from .. import files
from ..function import ConcreteFunction, Function
from .arrays import MAX_BYTES, read_arrays, write_arrays
from .decode import Reader
from .encode import Writer
from .errors import LoadError, SaveError

__all__ = ["save", "load", "to_bytes", "from_bytes", "SaveError", "LoadError", "MAX_BYTES"]

GRAPH_FILE = "graph.json"
ARRAYS_FILE = "arrays.npz"
MAX_JSON_BYTES = 1 << 28
BYTES_MAGIC = b"runtime-saved-graph\n"     # then the JSON's length (8 bytes), JSON, npz


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
    """Write the graph of `fn` to the directory `path` (`graph.json` and `arrays.npz`).

    `fn` is a ConcreteFunction, or an `rt.function` / `ag.convert` function with an
    input_signature or exactly one trace. Atomic: a failed save leaves the last one as it
    was. Raises SaveError for what cannot be saved (a `py_function`, a summary writer).
    """
    description, arrays = _encode(fn)
    os.makedirs(path, exist_ok=True)
    with files.replace_files(os.path.join(path, ARRAYS_FILE),
                             os.path.join(path, GRAPH_FILE)) as (arrays_file, graph_file):
        write_arrays(arrays_file, arrays)
        graph_file.write(description)


def load(path, max_bytes=MAX_BYTES):
    """The saved function in directory `path`, as a ConcreteFunction with `.variables`
    (new variables holding the saved values).

    Executes nothing from the files and opens no other file; the arrays may not inflate
    past `max_bytes`. Anything malformed raises LoadError naming the file and the fault.
    """
    graph_path = os.path.join(path, GRAPH_FILE)
    with _open(graph_path, "missing (is this a directory written by rt.saved.save?)") as f:
        doc = _parse_json(_read_json_bytes(f, graph_path), graph_path)
    arrays_path = os.path.join(path, ARRAYS_FILE)
    with _open(arrays_path, "the arrays file is missing") as f:
        arrays = read_arrays(f, arrays_path, max_bytes)
    return _decode(doc, arrays, path)


def to_bytes(fn):
    """The save of `fn` as one bytes object (what `save` writes, in one piece)."""
    description, arrays = _encode(fn)
    out = io.BytesIO()
    out.write(BYTES_MAGIC + len(description).to_bytes(8, "little") + description)
    write_arrays(out, arrays)
    return out.getvalue()


def from_bytes(data, max_bytes=MAX_BYTES, source="<bytes>"):
    """The function saved in `data` (from `to_bytes`), checked as `load` checks files."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"from_bytes expects bytes, got {type(data).__name__}")
    data = bytes(data)
    start = len(BYTES_MAGIC) + 8
    if not data.startswith(BYTES_MAGIC) or len(data) < start:
        raise LoadError(f"{source}: not a saved graph (it does not start with "
                        f"{BYTES_MAGIC!r})")
    size = int.from_bytes(data[start - 8:start], "little")
    if size > min(MAX_JSON_BYTES, len(data) - start):
        raise LoadError(f"{source}: the graph description's length ({size} bytes) is more "
                        f"than the data holds or a graph description may hold")
    doc = _parse_json(data[start:start + size], f"{source} (graph description)")
    arrays = read_arrays(io.BytesIO(data), f"{source} (arrays)", max_bytes)
    return _decode(doc, arrays, source)


def _encode(fn):
    """(the JSON description as bytes, {key: ndarray}) of the graph of `fn`."""
    writer = Writer()
    doc = writer.document(concrete_function_of(fn))
    text = json.dumps(doc, indent=1, allow_nan=False) + "\n"
    return text.encode("utf-8"), writer.arrays


def _decode(doc, arrays, source):
    try:
        return Reader(doc, arrays, source).function()
    except RecursionError:
        raise LoadError(f"{source}: the graph description is nested too deeply") from None


def _open(path, missing):
    """`path` open for reading if it is a regular file; LoadError otherwise."""
    try:
        return files.open_regular(path)
    except FileNotFoundError:
        raise LoadError(f"{path}: {missing}") from None
    except files.UnsafeFileError as e:
        raise LoadError(f"{path} is {e.strerror} (a saved graph is read only from regular "
                        f"files)") from None
    except OSError as e:
        raise LoadError(f"{path}: cannot be read ({e.strerror or e})") from None


def _read_json_bytes(f, path):
    try:
        return files.read_limited(f, MAX_JSON_BYTES)
    except files.FileTooLargeError:
        raise LoadError(f"{path}: more than {MAX_JSON_BYTES} bytes, more than a graph "
                        f"description may hold") from None
    except OSError as e:
        raise LoadError(f"{path}: cannot be read ({e.strerror or e})") from None


def _reject_constant(name):
    raise ValueError(f"{name} is not valid JSON")


def _parse_json(data, where):
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise LoadError(f"{where}: not a valid graph description: {e}"[:500]) from None
