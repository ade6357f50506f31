"""Damaged, truncated, hand-edited and hostile saved graphs: each gets a LoadError saying what
is wrong, at load time (never a crash inside the executor, never code executed)."""
import copy
import io
import json
import os
import pickle
import shutil
import zipfile

import numpy as np
import pytest

import runtime as rt
from runtime.saved import LoadError

V = rt.Variable([1.0, 2.0], name="v")


def model(x, n):
    w = np.array([0.5, 2.0], np.float32)

    def body(i, acc):
        acc = rt.cond(i > 1, lambda: acc * w, lambda: acc + V)
        return i + 1, acc

    limit = rt.minimum(n, 10)
    _, out = rt.while_loop(lambda i, acc: i < limit, body, [rt.constant(0), x])
    return out * 2.0


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("good") / "model")
    args = (rt.constant([1.0, 1.0]), rt.constant(3))
    rt.saved.save(rt.function(model).get_concrete_function(*args), path)
    return read_saved(path)


def read_saved(path):
    """(path, graph description, arrays) of a saved function, to edit and write back."""
    with open(os.path.join(path, "graph.json")) as f:
        doc = json.load(f)
    with np.load(os.path.join(path, "arrays.npz"), allow_pickle=False) as z:
        return path, doc, dict(z)


def write(tmp_path, doc=None, arrays=None, graph_bytes=None, npz_bytes=None):
    """A saved graph of `doc` and `arrays` (or of the files' bytes); the description records
    the arrays' digest, as a hostile writer of both files would."""
    path = str(tmp_path / "damaged")
    os.makedirs(path)
    if graph_bytes is None:
        if arrays is not None and all(a.dtype != object for a in arrays.values()):
            doc = dict(doc, arrays_sha256=rt.saved.arrays.digest(arrays))
        graph_bytes = json.dumps(doc).encode()
    with open(os.path.join(path, "graph.json"), "wb") as f:
        f.write(graph_bytes)
    if npz_bytes is None:
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)            # np.savez pickles object arrays
        npz_bytes = buffer.getvalue()
    with open(os.path.join(path, "arrays.npz"), "wb") as f:
        f.write(npz_bytes)
    return path


def op(doc, name, graph=None):
    for o in (graph or doc["graph"])["ops"]:
        if o["name"] == name:
            return o
    raise KeyError(name)


def while_op(doc):
    return op(doc, "while")


def body(doc):
    return while_op(doc)["attrs"]["body_graph"]["graph"]


def test_the_undamaged_file_loads(saved):
    loaded = rt.saved.load(saved[0])
    args = rt.constant([1.0, 1.0]), rt.constant(3)
    np.testing.assert_array_equal(loaded(*args).numpy(), rt.function(model)(*args).numpy())


def edit_ops(fn):
    def edit(doc, arrays):
        fn(doc)
    return edit


# Each case: (id, edit(doc, arrays) in place, what the error says)
JSON_CASES = [
    ("unknown op", edit_ops(lambda d: op(d, "minimum").update(type="launch_missiles")),
     r"operation 'minimum' \(launch_missiles\): unknown op type 'launch_missiles'"),
    ("unknown op with its module", edit_ops(lambda d: (
        op(d, "minimum").update(type="tensor_list_push"),
        d.update(op_modules={"tensor_list_push": "somepackage.ops"}))),
     "unknown op type 'tensor_list_push'; it was declared by module somepackage.ops: import "
     "that module before loading"),
    ("py_function", edit_ops(lambda d: op(d, "minimum").update(type="py_function")),
     "py_function calls Python code"),
    ("cycle", edit_ops(lambda d: op(d, "minimum").update(inputs=["while:1", "n:0"])),
     r"no operation named 'while' before this point .*cycle"),
    ("self loop", edit_ops(lambda d: op(d, "minimum").update(inputs=["minimum:0", "n:0"])),
     "no operation named 'minimum' before this point"),
    ("control cycle", edit_ops(lambda d: op(d, "minimum").update(control_inputs=["while"])),
     "control_inputs: no operation named 'while'"),
    ("missing tensor", edit_ops(lambda d: op(d, "minimum").update(inputs=["nope:0", "n:0"])),
     "no operation named 'nope'"),
    ("missing output index", edit_ops(lambda d: op(d, "minimum").update(inputs=["x:7", "n:0"])),
     r"operation 'x' has 1 outputs, so 'x:7' does not exist"),
    ("bad tensor name", edit_ops(lambda d: op(d, "minimum").update(inputs=[3, "n:0"])),
     "expected a tensor name 'op:index', got 3"),
    ("missing graph output", edit_ops(lambda d: d["graph"].update(outputs=["gone:0"])),
     "graph 'model' outputs: no operation named 'gone'"),
    ("wrong declared dtype", edit_ops(lambda d: op(d, "minimum")["outputs"][0].update(
        dtype="float32")), r"output 0 is declared float32\[\] but the op makes int32\[\]"),
    ("unknown dtype", edit_ops(lambda d: op(d, "minimum")["outputs"][0].update(
        dtype="float128")), "unknown dtype 'float128'"),
    ("inconsistent shape", edit_ops(lambda d: op(d, "x")["outputs"][0].update(shape=[3])),
     r"declared float32\[3\] but the op makes float32\[2\]"),
    ("negative dim", edit_ops(lambda d: op(d, "x")["attrs"].update(shape=[-2])),
     "invalid: Dimension -2 must be >= 0"),
    ("huge declared shape", edit_ops(lambda d: op(d, "x")["outputs"][0].update(
        shape=[10**9, 10**9])), "too large"),
    ("attr of the wrong type", edit_ops(lambda d: while_op(d)["attrs"].update(n_vars="2")),
     "attribute 'n_vars': must be an int, got '2'"),
    ("dtype attr not a dtype", edit_ops(lambda d: op(d, "x")["attrs"].update(dtype="float32")),
     "attribute 'dtype': must be a dtype"),
    ("capture map past the inputs", edit_ops(lambda d: while_op(d)["attrs"].update(
        cond_map=[9])), r"capture map \(9,\) points past"),
    ("loop vars miscounted", edit_ops(lambda d: while_op(d)["attrs"].update(n_vars=1)),
     "cond_graph .loop variables. takes 2 values but is fed 1"),
    ("body returns another dtype", edit_ops(lambda d: body(d).update(
        outputs=list(reversed(body(d)["outputs"])))),
     "body_graph's results as loop variables value 0 .* is int32"),
    ("missing attr", edit_ops(lambda d: while_op(d)["attrs"].pop("cond_map")),
     "kernel does not take these"),
    ("extra attr", edit_ops(lambda d: op(d, "minimum")["attrs"].update(power=9000)),
     "kernel does not take these"),
    ("wrong number of inputs", edit_ops(lambda d: op(d, "minimum").update(inputs=["n:0"])),
     "kernel does not take these 1 inputs"),
    ("duplicate name", edit_ops(lambda d: op(d, "minimum").update(name="x")),
     "name is empty or used twice"),
    ("placeholder not an input", edit_ops(lambda d: d["graph"].update(inputs=["x:0"])),
     "placeholder 'n' is not one of the graph's inputs"),
    ("unknown tag", edit_ops(lambda d: op(d, "x")["attrs"].update(shape={"eval": "1+1"})),
     r"unknown tagged value with keys \['eval'\]"),
    ("opaque in an attr", edit_ops(lambda d: op(d, "x")["attrs"].update(
        dtype={"opaque": "os.system"})), "unknown tagged value"),
    ("missing variable", edit_ops(lambda d: d.update(variables=[])),
     "variable 0 does not exist"),
    ("variable dtype", edit_ops(lambda d: d["variables"][0].update(dtype="int32")),
     "variable 'v' is declared int32 but its value is float32"),
    ("variable shape", edit_ops(lambda d: d["variables"][0].update(shape=[5])),
     r"declared with shape \(5,\) but its value has shape \[2\]"),
    ("newer version", edit_ops(lambda d: d.update(version=99)),
     "newer version of the format"),
    ("not a saved graph", edit_ops(lambda d: d.update(format="something else")),
     "not a saved graph"),
    ("missing field", edit_ops(lambda d: d["graph"].pop("ops")), "the field 'ops' is missing"),
    ("field of the wrong type", edit_ops(lambda d: d["graph"].update(ops={"a": 1})),
     "the field 'ops' must be list"),
    ("signature mismatch", edit_ops(lambda d: d["signature"][0][0]["spec"].update(
        dtype="int32")), "tensor argument 0 is TensorSpec"),
    ("output slot past the outputs", edit_ops(lambda d: d.update(outputs={"output": 4})),
     "refers to output 4 of a graph with 1 outputs"),
    ("bad origin", edit_ops(lambda d: op(d, "minimum").update(origin="here")),
     r"'origin' must be \[file, line, function, source line\]"),
    ("missing array reference", edit_ops(lambda d: d["variables"][0].update(value="zzz")),
     "the array 'zzz' is missing from the arrays file"),
    ("bad random state", edit_ops(lambda d: op(d, "x")["attrs"].update(
        dtype={"rng": ["a", 1]})), "a random state is null or two seeds"),
    ("bad f-string part", edit_ops(lambda d: op(d, "x")["attrs"].update(
        dtype={"fstring": ["a", [1, "x", ""]]})), "an f-string part is text or"),
    ("f-string spec not text", edit_ops(lambda d: op(d, "x")["attrs"].update(
        dtype={"fstring": [[1, None, 5]]})), "an f-string format spec must be text"),
]


@pytest.mark.parametrize("edit, message", [c[1:] for c in JSON_CASES],
                         ids=[c[0] for c in JSON_CASES])
def test_hand_edited_graph_descriptions(saved, tmp_path, edit, message):
    path, doc, arrays = saved
    doc, arrays = copy.deepcopy(doc), dict(arrays)
    edit(doc, arrays)
    with pytest.raises(LoadError, match=message):
        rt.saved.load(write(tmp_path, doc, arrays))


def test_an_array_dropped_from_the_npz(saved, tmp_path):
    path, doc, arrays = saved
    arrays = {k: v for k, v in arrays.items() if k != "a0"}
    with pytest.raises(LoadError, match="the array 'a0' is missing from the arrays file"):
        rt.saved.load(write(tmp_path, doc, arrays))


def test_a_constant_of_another_dtype(saved, tmp_path):
    path, doc, arrays = saved
    key = next(k for k, a in arrays.items() if a.tolist() == [0.5, 2.0])
    arrays = dict(arrays, **{key: arrays[key].astype(np.int64)})
    with pytest.raises(LoadError, match=r"declared float32\[2\] but the op makes int64\[2\]"):
        rt.saved.load(write(tmp_path, doc, arrays))


class Exploit:
    def __reduce__(self):
        return (os.system, ("echo pwned > /dev/null",))


def test_a_pickle_payload_in_the_npz_is_never_unpickled(saved, tmp_path):
    path, doc, arrays = saved
    arrays = dict(arrays, a0=np.array([Exploit()], dtype=object))
    with pytest.raises(LoadError, match="dtype object is not a tensor dtype"):
        rt.saved.load(write(tmp_path, doc, arrays))


def npz_with(member, data):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr(member, data)
    return buffer.getvalue()


def npy_header(shape, descr="<f4"):
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": descr, "fortran_order": False, "shape": shape})
    return buffer.getvalue()


@pytest.mark.parametrize("member, data, message", [
    ("a0.npy", pickle.dumps(Exploit()), "damaged"),
    ("a0.npy", npy_header((10**6, 10**6)) + b"\0" * 8, r"declares shape \[1000000, 1000000\]"),
    ("a0.npy", npy_header((4,), "|O"), "not a tensor dtype"),
    ("a0.npy", npy_header((2,), "<M8[s]"), "not a tensor dtype"),
    ("a0.npy", npy_header((2,)) + b"\0" * 3, r"declares shape \[2\] of float32 \(8 bytes\)"),
    ("a0.txt", b"hello", "is not a .npy array"),
], ids=["raw pickle", "huge shape", "object dtype", "datetime dtype", "short data", "not npy"])
def test_hostile_npz_members(saved, tmp_path, member, data, message):
    with pytest.raises(LoadError, match=message):
        rt.saved.load(write(tmp_path, saved[1], npz_bytes=npz_with(member, data)))


def test_the_size_limit_on_arrays(saved):
    with pytest.raises(LoadError, match="more than 8 bytes"):
        rt.saved.load(saved[0], max_bytes=8)


@pytest.mark.parametrize("cut", ["graph.json", "arrays.npz"])
def test_truncated_files(saved, tmp_path, cut):
    path = str(tmp_path / "cut")
    shutil.copytree(saved[0], path)
    name = os.path.join(path, cut)
    with open(name, "rb") as f:
        data = f.read()
    with open(name, "wb") as f:
        f.write(data[:len(data) // 2])
    with pytest.raises(LoadError, match="not a valid graph description|not a readable .npz"):
        rt.saved.load(path)


@pytest.mark.parametrize("graph_bytes, message", [
    (b"\xff\xfe garbage", "not a valid graph description"),
    (b'{"format": NaN}', "NaN is not valid JSON"),
    (b"[" * 100000 + b"]" * 100000, "not a valid graph description|nested too deeply"),
    (b"[1, 2]", "not a saved graph"),
])
def test_garbage_graph_descriptions(saved, tmp_path, graph_bytes, message):
    with pytest.raises(LoadError, match=message):
        rt.saved.load(write(tmp_path, arrays=saved[2], graph_bytes=graph_bytes))


def test_deeply_nested_attributes(saved, tmp_path):
    doc = copy.deepcopy(saved[1])
    op(doc, "x")["attrs"]["shape"] = "DEEP"
    data = json.dumps(doc).replace('"DEEP"', "[" * 900 + "]" * 900).encode()
    with pytest.raises(LoadError, match="nested too deeply"):
        rt.saved.load(write(tmp_path, graph_bytes=data, arrays=saved[2]))


def every_attr(graph, path=()):
    """(op path, attr name) of every attribute in a graph document, sub-graphs included."""
    for o in graph["ops"]:
        for key, value in o["attrs"].items():
            if isinstance(value, dict) and "graph" in value:
                yield from every_attr(value["graph"], path + ((o["name"], key),))
            else:
                yield path, o["name"], key


def saved_many_ops(tmp_path):
    from test_saved import many_ops
    path = str(tmp_path / "many_ops")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    rt.saved.save(rt.function(many_ops).get_concrete_function(x, rt.constant(4)), path)
    return read_saved(path)


@pytest.mark.parametrize("which", ["model", "many_ops"])
def test_every_attribute_replaced_by_a_value_of_the_wrong_type_is_caught(saved, tmp_path,
                                                                         which):
    path, doc, arrays = saved if which == "model" else saved_many_ops(tmp_path)
    for i, (sub, name, key) in enumerate(every_attr(doc["graph"])):
        edited = copy.deepcopy(doc)
        graph = edited["graph"]
        for op_name, attr in sub:
            graph = op(edited, op_name, graph)["attrs"][attr]["graph"]
        attrs = op(edited, name, graph)["attrs"]
        attrs[key] = 12345 if isinstance(attrs[key], str) else "wrong"
        with pytest.raises(LoadError, match=f"operation '{name}'"):
            rt.saved.load(write(tmp_path / str(i), edited, arrays))
