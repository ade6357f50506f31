"""The saved-graph decoder, fuzzed: valid saves mutated (JSON edits of the description; bytes
flipped, inserted, dropped or cut in the description, the arrays archive, one .npy member
of it and the one-piece bytes form) must each give a LoadError or a load that saves and loads back as the same graph,
within a time bound and a memory bound, never another exception.

Hypothesis, derandomized; RT_FUZZ_EXAMPLES=5000 runs more (default: a few hundred in all).
"""
import contextlib
import copy
import io
import json
import os
import signal
import tracemalloc
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

import runtime as rt
from runtime.saved import LoadError, from_bytes, to_bytes
from runtime.saved.arrays import digest, read_arrays
from test_saved_damaged import model as damaged_model

EXAMPLES = int(os.environ.get("RT_FUZZ_EXAMPLES", 100))
MAX_ARRAY_BYTES = 1 << 20           # the load's max_bytes: the arrays' share of the bound
MEMORY_BOUND = 64 << 20             # peak bytes traced while loading one example
TIME_BOUND_S = 30                   # a hang guard, far above any one load's time

FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

def model(x, n):
    """The damaged-file tests' model (a while loop around a cond, a variable, constants),
    with a print, a one-hot and a dict of results."""
    out = damaged_model(x, n)
    out = rt.reduce_sum(rt.reshape(out, [1, 2]), axis=0) + rt.cast(n, rt.float32)
    rt.print("out", out)
    return {"out": out, "hot": rt.one_hot(n, depth=3)}


def split(blob):
    """(description, arrays bytes) of the one-piece form."""
    start = len(rt.saved.BYTES_MAGIC) + 8
    size = int.from_bytes(blob[start - 8:start], "little")
    return blob[start:start + size], blob[start + size:]


def join(description, npz):
    return rt.saved.BYTES_MAGIC + len(description).to_bytes(8, "little") + description + npz


BASE = to_bytes(rt.function(model).get_concrete_function(rt.constant([1.0, 1.0]),
                                                         rt.constant(3)))
BASE_DOC = json.loads(split(BASE)[0])


@contextlib.contextmanager
def bounded():
    """Fail if the block runs past TIME_BOUND_S or allocates more than MEMORY_BOUND."""
    def hang(*_):
        raise AssertionError(f"a load ran past {TIME_BOUND_S} s")
    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(TIME_BOUND_S)
    tracemalloc.start()
    try:
        yield
        peak = tracemalloc.get_traced_memory()[1]
        assert peak < MEMORY_BOUND, f"a load took {peak} bytes"
    finally:
        tracemalloc.stop()
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def outcome(what):
    """Count `what` in hypothesis's statistics (--hypothesis-show-statistics)."""
    if currently_in_test_context():
        event(what)


def check_load(blob):
    """LoadError, or a load that survives a save and a load unchanged."""
    with bounded():
        try:
            loaded = from_bytes(blob, max_bytes=MAX_ARRAY_BYTES)
        except LoadError as e:
            assert str(e).startswith("<bytes>")
            outcome(f"refused at {str(e).split(': ')[1][:40]}")
            return "refused"
    outcome("loaded")
    assert isinstance(loaded, rt.ConcreteFunction)
    again = from_bytes(to_bytes(loaded), max_bytes=MAX_ARRAY_BYTES)
    assert str(again.graph) == str(loaded.graph)
    return "loaded"


# -- JSON edits ------------------------------------------------------------------------------

def paths_in(value, path=()):
    """The path (keys and indices) of every value inside a JSON document."""
    yield path
    items = value.items() if isinstance(value, dict) else (
        enumerate(value) if isinstance(value, list) else ())
    for key, child in items:
        yield from paths_in(child, path + (key,))


def at(doc, path):
    for key in path:
        doc = doc[key]
    return doc


TAG_KEYS = ["list", "dict", "float", "complex", "scalar", "dtype", "array", "variable", "rng",
            "slot", "fstring", "namedtuple", "fields", "values", "spec", "output", "opaque",
            "graph", "weak", "rows", "up", "tensor", "inner", "outer"]
STRINGS = st.sampled_from(["x:\u00b2", "x:0", "x:99999999999", "while:1", ":", "n:0", "",
                           "float32", "int64", "bool", "a0", "variable0", "nan", "-inf",
                           "stdout", "input", "placeholder", "const", "while", "cond",
                           "call", "capture", "\u00b2", "x" * 300]) | st.text(max_size=8)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.sampled_from(
        [0, 1, -1, 2, 3, 2**31, 2**63, 10**30]) | st.floats(allow_nan=False,
                                                            allow_infinity=False) | STRINGS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(TAG_KEYS) | STRINGS, children, max_size=3),
    max_leaves=10)


@st.composite
def edited_descriptions(draw):
    doc = copy.deepcopy(BASE_DOC)
    for _ in range(draw(st.integers(1, 3))):
        paths = list(paths_in(doc))
        path = paths[draw(st.integers(0, len(paths) - 1))]
        if not path:
            continue
        parent, key = at(doc, path[:-1]), path[-1]
        how = draw(st.sampled_from(["replace", "delete", "copy", "duplicate"]))
        note(f"{how} at {path}")
        if how == "replace":
            parent[key] = draw(JSON_VALUES)
        elif how == "delete":
            del parent[key]
        elif how == "copy":                       # another part of the file put here
            parent[key] = copy.deepcopy(at(doc, paths[draw(st.integers(0, len(paths) - 1))]))
        elif isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
    return doc


@FUZZ
@given(doc=edited_descriptions())
def test_edited_descriptions(doc):
    description = json.dumps(doc).encode()
    check_load(join(description, split(BASE)[1]))


# -- byte edits ------------------------------------------------------------------------------

@st.composite
def edited_bytes(draw, data):
    data = bytearray(data)
    places = draw(st.randoms(use_true_random=False))     # anywhere, not mostly at the start
    for _ in range(draw(st.integers(1, 4))):
        how = draw(st.sampled_from(["flip", "flip", "set", "set", "insert", "delete", "cut"]))
        i = places.randrange(max(1, len(data)))
        note(f"{how} at {i}")
        if how == "flip" and data:
            data[i] ^= 1 << draw(st.integers(0, 7))
        elif how == "set" and data:
            data[i] = draw(st.sampled_from([0, 0xFF, 0x7F, 0x80, ord("9"), ord("["),
                                            ord('"'), ord("-")]))
        elif how == "insert":
            data[i:i] = draw(st.binary(min_size=1, max_size=8))
        elif how == "delete":
            del data[i:i + draw(st.integers(1, 16))]
        elif how == "cut":
            del data[i:]
    return bytes(data)


@FUZZ
@given(description=edited_bytes(split(BASE)[0]))
def test_byte_edits_of_the_description(description):
    check_load(join(description, split(BASE)[1]))


def rehashed(description, npz):
    """The description recording the digest of `npz`'s arrays when they read (a hostile
    writer of both), so that byte edits of the arrays reach every check after the digest's."""
    try:
        arrays = read_arrays(io.BytesIO(npz), "npz", MAX_ARRAY_BYTES)
    except LoadError:
        return description
    return json.dumps(dict(json.loads(description), arrays_sha256=digest(arrays))).encode()


def stored(npz):
    """The same arrays in an uncompressed .npz (edits then hit the .npy headers directly)."""
    out = io.BytesIO()
    np.savez(out, **read_arrays(io.BytesIO(npz), "npz"))
    return out.getvalue()


@FUZZ
@given(npz=st.sampled_from([split(BASE)[1], stored(split(BASE)[1])]).flatmap(edited_bytes))
def test_byte_edits_of_the_arrays(npz):
    with bounded():
        description = rehashed(split(BASE)[0], npz)
    check_load(join(description, npz))


def npy_members(npz):
    with zipfile.ZipFile(io.BytesIO(npz)) as z:
        return {name: z.read(name) for name in z.namelist()}


BASE_MEMBERS = npy_members(split(BASE)[1])


@st.composite
def edited_members(draw):
    """An archive, whole and with right CRCs, one of whose .npy members is edited."""
    members = dict(BASE_MEMBERS)
    name = draw(st.sampled_from(sorted(members)))
    members[name] = draw(edited_bytes(members[name]))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for key, data in members.items():
            z.writestr(key, data)
    return out.getvalue()


@FUZZ
@given(npz=edited_members())
def test_byte_edits_of_an_array_member(npz):
    with bounded():
        description = rehashed(split(BASE)[0], npz)
    check_load(join(description, npz))


@FUZZ
@given(blob=edited_bytes(BASE))
def test_byte_edits_of_the_one_piece_form(blob):
    check_load(blob)


def test_the_unedited_save_loads():
    assert check_load(BASE) == "loaded"


@pytest.mark.parametrize("edit", [
    lambda d: d["graph"]["ops"][0].update(inputs=["x:\u00b2"]),
    lambda d: d["graph"].update(outputs=["x:\u00b2"]),
    lambda d: d["graph"].update(outputs=["x:" + "9" * 5000]),
    lambda d: d["graph"]["ops"][1].update(origin=["f.py", 1, "f", "x" * 10**5]),
    lambda d: d.update(arrays_sha256=None),
    lambda d: d.pop("arrays_sha256"),
    lambda d: d.update(version=0),
], ids=["input", "output", "huge index", "huge source line", "null digest", "no digest",
        "version 0"])
def test_edits_the_fuzz_found(edit):
    doc = copy.deepcopy(BASE_DOC)
    edit(doc)
    assert check_load(join(json.dumps(doc).encode(), split(BASE)[1])) == "refused"
