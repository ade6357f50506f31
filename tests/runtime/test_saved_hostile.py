"""Hostile saved graphs. Each attack is loaded in a fresh process under a memory limit
(RLIMIT_AS: what the process holds after importing, plus a margin far below what the attack
would take) and a timeout, with an audit hook recording every file it opens and anything
that runs code (unpickling, exec other than the fast executor's own program, processes),
and a canary file a pickle payload would make.
Every attack must end in a LoadError naming what is wrong, or in a load of exactly what
was meant; none may hang, exhaust memory, run code or open a file named inside the save."""
import io
import json
import os
import pickle
import shutil
import stat
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

import runtime as rt
from runtime.saved.arrays import MAX_BYTES, digest
from test_saved_damaged import npy_header

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="RLIMIT_AS, /proc and FIFOs as on Linux")

MEMORY_MARGIN_MB = 192
X_GOOD, X_BAD = [1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]

ATTACKER = r"""
import json, os, resource, sys
import numpy as np
import runtime as rt

spec = json.loads(sys.argv[1])
warm = rt.saved.load(spec["good"])        # every module a load or a run needs is imported now
warm(np.zeros(3, np.float32))
try:
    warm(np.zeros(4, np.float32))       # and the error path
except Exception:
    pass

def vm_bytes():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmSize:")) * 1024

limit = vm_bytes() + spec["margin_mb"] * 2**20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
if spec.get("probe_mb"):
    try:
        np.ones(spec["probe_mb"] * 2**20, np.uint8)
    except MemoryError:
        print(json.dumps({"memory_error": True}))
        sys.exit(0)
opened, ran = [], []
RUNS_CODE = ("exec", "pickle.find_class", "marshal.loads", "os.system", "subprocess.Popen",
             "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "ctypes.dlopen")

def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes)):
        opened.append(os.fsdecode(args[0]))
    elif event == "exec" and getattr(args[0], "co_filename", "").startswith("<rt graph "):
        pass            # the fast executor's program, generated from the checked graph
    elif event.startswith(RUNS_CODE):
        ran.append(f"{event} {args!r}"[:300])

sys.addaudithook(hook)
out = {}
try:
    if "bytes_file" in spec:
        with open(spec["bytes_file"], "rb") as f:
            data = f.read()
        fn = rt.saved.from_bytes(data, **spec["options"])
    else:
        fn = rt.saved.load(spec["path"], **spec["options"])
    out["loaded"] = True
    for x in spec["calls"]:
        try:
            out.setdefault("results", []).append(fn(np.array(x, np.float32)).numpy().tolist())
        except Exception as e:
            out.setdefault("errors", []).append(f"{type(e).__name__}: {e}")
except rt.saved.LoadError as e:
    out["load_error"] = str(e)
except MemoryError:
    out["memory_error"] = True
out["opened"], out["ran"] = opened, ran
print(json.dumps(out))
"""


def model(scale=(1.0, 2.0, 3.0)):
    v = rt.Variable(list(scale), name="scale")
    return rt.function(lambda x: rt.reshape(x, [3]) * v + np.full(3, 0.5, np.float32),
                       input_signature=[rt.TensorSpec([None], rt.float32)])


GOOD_RESULT = [1.5, 4.5, 9.5]


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("good") / "model")
    rt.saved.save(model(), path)
    return path


def read_good(good):
    with open(os.path.join(good, "graph.json"), "rb") as f:
        doc = json.loads(f.read())
    with np.load(os.path.join(good, "arrays.npz"), allow_pickle=False) as z:
        return doc, dict(z)


def copy_of(good, tmp_path, name="attack"):
    path = str(tmp_path / name)
    shutil.copytree(good, path)
    return path


def write_doc(path, doc, arrays=None):
    if arrays is not None:
        doc = dict(doc, arrays_sha256=digest(arrays))
    with open(os.path.join(path, "graph.json"), "w") as f:
        json.dump(doc, f)


def attack(good, path, tmp_path, calls=(X_GOOD,), bytes_file=None, probe_mb=0, **options):
    """Load `path` (or from_bytes of `bytes_file`) in a fresh, limited process; its report.
    (`probe_mb`: first allocate that much, to show the limit holds.)"""
    spec = {"good": good, "path": path, "options": options, "calls": list(calls),
            "margin_mb": MEMORY_MARGIN_MB, "probe_mb": probe_mb}
    if bytes_file is not None:
        spec["bytes_file"] = bytes_file
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    result = subprocess.run([sys.executable, "-c", ATTACKER, json.dumps(spec)], env=env,
                            capture_output=True, text=True, timeout=120, cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert not report.get("memory_error"), "the attack exhausted the memory limit"
    assert report["ran"] == [], f"loading ran code: {report['ran']}"
    assert not os.path.exists(CANARY.path), "a pickle payload ran"
    if bytes_file is None:
        save_files = {os.path.join(path, n) for n in ("graph.json", "arrays.npz")}
        assert set(report["opened"]) <= save_files, report["opened"]
    else:
        assert report["opened"] == [bytes_file]
    return report


def refused(report, message):
    assert "load_error" in report, report
    assert message in report["load_error"], report["load_error"]


class CANARY:
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".saved_hostile_canary")


class Payload:
    """Unpickling this makes the canary directory (code from the file running)."""

    def __reduce__(self):
        return os.mkdir, (CANARY.path,)


@pytest.fixture(autouse=True)
def no_canary():
    shutil.rmtree(CANARY.path, ignore_errors=True)
    yield
    shutil.rmtree(CANARY.path, ignore_errors=True)


def test_the_good_save_loads_and_runs_under_the_limits(good, tmp_path):
    report = attack(good, good, tmp_path, calls=[X_GOOD, X_BAD])
    assert report["results"] == [GOOD_RESULT] and "reshape" in report["errors"][0]


def test_the_memory_limit_holds_an_attack_to_the_margin(good, tmp_path):
    with pytest.raises(AssertionError, match="exhausted the memory limit"):
        attack(good, good, tmp_path, probe_mb=2 * MEMORY_MARGIN_MB)


# -- files that are not regular files ---------------------------------------------------------

@pytest.mark.parametrize("name", ["graph.json", "arrays.npz"])
def test_a_fifo_is_refused_at_once(good, tmp_path, name):
    path = copy_of(good, tmp_path)
    os.remove(os.path.join(path, name))
    os.mkfifo(os.path.join(path, name))
    refused(attack(good, path, tmp_path), f"{name} is a FIFO, not a regular file")


@pytest.mark.parametrize("name", ["graph.json", "arrays.npz"])
@pytest.mark.parametrize("target", ["/dev/zero", "elsewhere"])
def test_a_symbolic_link_is_never_followed(good, tmp_path, name, target):
    path = copy_of(good, tmp_path)
    if target == "elsewhere":               # even to the right file
        target = os.path.join(copy_of(good, tmp_path, "real"), name)
    os.remove(os.path.join(path, name))
    os.symlink(target, os.path.join(path, name))
    refused(attack(good, path, tmp_path), f"{name} is a symbolic link, which is never followed")


def test_a_device_is_refused(good, tmp_path):
    path = copy_of(good, tmp_path)
    os.remove(os.path.join(path, "arrays.npz"))
    try:
        os.mknod(os.path.join(path, "arrays.npz"), stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except (PermissionError, AttributeError):
        pytest.skip("making a device node needs privileges this run lacks")
    refused(attack(good, path, tmp_path), "arrays.npz is a character device")


def test_a_directory_in_place_of_a_file_is_refused(good, tmp_path):
    path = copy_of(good, tmp_path)
    os.remove(os.path.join(path, "graph.json"))
    os.mkdir(os.path.join(path, "graph.json"))
    refused(attack(good, path, tmp_path), "graph.json is a directory")


def test_a_huge_graph_description_is_refused_without_reading_it(good, tmp_path):
    path = copy_of(good, tmp_path)
    os.truncate(os.path.join(path, "graph.json"), 8 << 30)        # sparse: 8 GiB of zeros
    refused(attack(good, path, tmp_path), "more than 268435456 bytes")


# -- zip bombs --------------------------------------------------------------------------------

def deflated(header, zero_mib, tail=b""):
    """(raw deflate stream, CRC-32) of header + zero_mib MiB of zeros + tail, made in
    milliseconds: after a full flush every MiB of zeros compresses to the same bytes."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = c.compress(header) + c.flush(zlib.Z_FULL_FLUSH)
    zeros = bytes(1 << 20)
    block = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    end = c.compress(tail) + c.flush()
    crc = zlib.crc32(header)
    for _ in range(zero_mib):
        crc = zlib.crc32(zeros, crc)
    return head + block * zero_mib + end, zlib.crc32(tail, crc)


def zip_archive(members):
    """A zip of (name, deflated data, crc, declared uncompressed size) members, by hand, so
    that a member can declare a size its data does not have."""
    out, directory = io.BytesIO(), []
    for name, data, crc, size in members:
        offset = out.tell()
        name = name.encode()
        out.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 0x21, crc, len(data),
                              size, len(name), 0) + name + data)
        directory.append(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 8, 0, 0x21,
                                     crc, len(data), size, len(name), 0, 0, 0, 0, 0, offset)
                         + name)
    start = out.tell()
    out.write(b"".join(directory))
    out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members),
                          out.tell() - start, start, 0))
    return out.getvalue()


def npy(array):
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def honest_members(arrays, skip=()):
    out = []
    for key, a in arrays.items():
        if key not in skip:
            data = npy(a)
            c = zlib.compressobj(9, zlib.DEFLATED, -15)
            out.append((f"{key}.npy", c.compress(data) + c.flush(), zlib.crc32(data), len(data)))
    return out


def write_npz(path, data):
    with open(os.path.join(path, "arrays.npz"), "wb") as f:
        f.write(data)


def test_a_zip_bomb_past_the_limit_is_refused_before_inflating(good, tmp_path):
    doc, arrays = read_good(good)
    n = (MAX_BYTES >> 2) + 16                         # float32s: just past 1 GiB
    header = npy_header((n,))
    bomb, crc = deflated(header, MAX_BYTES >> 20, bytes(64))
    path = copy_of(good, tmp_path)
    write_npz(path, zip_archive(honest_members(arrays, {"a0"})
                                + [("a0.npy", bomb, crc, len(header) + 4 * n)]))
    assert os.path.getsize(os.path.join(path, "arrays.npz")) < 2 << 20
    refused(attack(good, path, tmp_path), f"more than {MAX_BYTES} bytes (limit max_bytes)")


def test_a_zip_bomb_under_a_lower_limit_is_refused(good, tmp_path):
    doc, arrays = read_good(good)
    header = npy_header((64 << 18,))                 # 64 MiB of float32 zeros
    bomb, crc = deflated(header, 64)
    path = copy_of(good, tmp_path)
    write_npz(path, zip_archive(honest_members(arrays) + [("pad.npy", bomb, crc,
                                                             len(header) + (64 << 20))]))
    refused(attack(good, path, tmp_path, max_bytes=1 << 20), "more than 1048576 bytes")


def test_a_member_declaring_less_than_it_inflates_to_is_read_only_as_declared(good, tmp_path):
    """A bomb behind a small declared size: only the declared bytes are ever inflated, so
    the load is the good one (its CRC and the digest match the declared bytes)."""
    doc, arrays = read_good(good)
    declared = npy(arrays["a0"])
    bomb, _ = deflated(declared, 512)               # and 512 MiB more that nobody asked for
    path = copy_of(good, tmp_path)
    write_npz(path, zip_archive(honest_members(arrays, {"a0"})
                                + [("a0.npy", bomb, zlib.crc32(declared), len(declared))]))
    report = attack(good, path, tmp_path)
    assert report.get("results") == [GOOD_RESULT], report


def test_a_member_whose_data_is_short_of_its_declared_size_is_refused(good, tmp_path):
    doc, arrays = read_good(good)
    data = npy(arrays["a0"])
    path = copy_of(good, tmp_path)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    short = c.compress(data[:-4]) + c.flush()
    write_npz(path, zip_archive(honest_members(arrays, {"a0"})
                                + [("a0.npy", short, zlib.crc32(data), len(data))]))
    refused(attack(good, path, tmp_path), "member 'a0.npy'")


def test_an_archive_listing_too_many_members_is_refused_before_listing_them(good, tmp_path):
    doc, arrays = read_good(good)
    empty = npy(np.zeros(0, np.float32))
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = c.compress(empty) + c.flush()
    members = honest_members(arrays) + [(f"m{i}.npy", data, zlib.crc32(empty), len(empty))
                                        for i in range(30000)]
    path = copy_of(good, tmp_path)
    write_npz(path, zip_archive(members))
    refused(attack(good, path, tmp_path, max_bytes=1 << 20), "its list of members takes")


# -- code in the files ------------------------------------------------------------------------

def test_an_object_array_holding_a_pickle_payload_is_never_unpickled(good, tmp_path):
    doc, arrays = read_good(good)
    path = copy_of(good, tmp_path)
    buffer = io.BytesIO()
    np.savez(buffer, **dict(arrays, a0=np.array([Payload()], dtype=object)))
    write_npz(path, buffer.getvalue())
    refused(attack(good, path, tmp_path), "dtype object is not a tensor dtype")


def test_a_raw_pickle_in_place_of_an_array_is_never_unpickled(good, tmp_path):
    doc, arrays = read_good(good)
    payload = pickle.dumps(Payload())
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    path = copy_of(good, tmp_path)
    write_npz(path, zip_archive(honest_members(arrays, {"a0"}) + [
        ("a0.npy", c.compress(payload) + c.flush(), zlib.crc32(payload), len(payload))]))
    refused(attack(good, path, tmp_path), "member 'a0.npy' is damaged")


def test_a_pickle_in_the_bytes_form_is_never_unpickled(good, tmp_path):
    blob = tmp_path / "blob"
    blob.write_bytes(pickle.dumps(Payload()))
    refused(attack(good, None, tmp_path, bytes_file=str(blob)), "not a saved graph")


# -- files named inside the save ----------------------------------------------------------------

def origins_pointing_at(doc, places, text=None):
    """`doc` with each operation's origin naming one of `places` (text: the saved line)."""
    doc = json.loads(json.dumps(doc))
    for i, o in enumerate(doc["graph"]["ops"]):
        origin = [places[i % len(places)], 1, "f"]
        o["origin"] = origin if text is None else origin + [text]
    return doc


@pytest.mark.parametrize("version", [2, 1])
def test_an_error_from_a_loaded_graph_opens_no_file_its_origins_name(good, tmp_path, version):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET = 'do not show'\n")
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    doc, arrays = read_good(good)
    places = [str(secret), fifo, "/dev/zero"]
    if version == 2:
        doc = origins_pointing_at(doc, places, "y = reshape(x)  # the saved line")
    else:
        doc = origins_pointing_at(doc, places)
        doc["version"] = 1
        del doc["arrays_sha256"]
    path = copy_of(good, tmp_path)
    write_doc(path, doc)
    report = attack(good, path, tmp_path, calls=[X_GOOD, X_BAD])
    assert report["results"] == [GOOD_RESULT]
    (error,) = report["errors"]
    assert "reshape" in error and "do not show" not in error
    assert ("# the saved line" in error) == (version == 2)


# -- malformed descriptions and mismatched files --------------------------------------------------

def test_an_input_reference_with_a_non_ascii_digit_is_a_load_error(good, tmp_path):
    doc, arrays = read_good(good)
    reshape = next(o for o in doc["graph"]["ops"] if o["type"] == "reshape")
    reshape["inputs"][0] = reshape["inputs"][0].split(":")[0] + ":\u00b2"
    path = copy_of(good, tmp_path)
    write_doc(path, doc)
    refused(attack(good, path, tmp_path), ":\u00b2' does not exist")


def test_a_deeply_nested_description_is_a_load_error(good, tmp_path):
    path = copy_of(good, tmp_path)
    with open(os.path.join(path, "graph.json"), "w") as f:
        f.write('{"format": "runtime-saved-graph", "version": 2, "name": ' + "[" * 200000
                + "]" * 200000 + "}")
    refused(attack(good, path, tmp_path), "graph.json")


def test_arrays_from_another_save_are_refused(good, tmp_path):
    other = str(tmp_path / "other")
    rt.saved.save(model(scale=(7.0, 7.0, 7.0)), other)
    path = copy_of(good, tmp_path)
    shutil.copy(os.path.join(other, "arrays.npz"), os.path.join(path, "arrays.npz"))
    refused(attack(good, path, tmp_path), "the arrays file is not the one saved with this graph "
                                          "description")


def test_the_bytes_form_goes_through_the_same_checks(good, tmp_path):
    blob = tmp_path / "blob"
    data = rt.saved.to_bytes(model())
    blob.write_bytes(data)
    assert attack(good, None, tmp_path, bytes_file=str(blob))["results"] == [GOOD_RESULT]
    doc, arrays = read_good(good)
    header = npy_header((64 << 18,))
    bomb, crc = deflated(header, 64)
    start = len(rt.saved.BYTES_MAGIC) + 8
    size = int.from_bytes(data[start - 8:start], "little")
    blob.write_bytes(data[:start + size] + zip_archive(
        honest_members(arrays) + [("pad.npy", bomb, crc, len(header) + (64 << 20))]))
    refused(attack(good, None, tmp_path, bytes_file=str(blob), max_bytes=1 << 20),
            "more than 1048576 bytes")
