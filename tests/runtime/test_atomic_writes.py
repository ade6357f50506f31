"""Files written whole are replaced atomically (runtime/files.py): a save, an ONNX export or a
rendered graph that fails part-way (a file-size limit, an immutable file, a failed rename or
fsync, a crash between the two files of a save) leaves the previous file as it was, and the
previous save loads with its old outputs; TensorBoard event files, appended to, keep every
whole record when a write fails."""
import errno
import os
import shutil
import stat
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import runtime as rt
from runtime import files
from runtime.saved import LoadError
from runtime.summary import _masked_crc

X = rt.constant([1.0, 2.0, 3.0])


def scaled(scale):
    v = rt.Variable(np.asarray(scale, np.float32), name="scale")
    return rt.function(lambda x: x * v + 1.0, input_signature=[rt.TensorSpec([3], rt.float32)])


OLD, OLD_RESULT = scaled([1.0, 2.0, 3.0]), [2.0, 5.0, 10.0]


@pytest.fixture
def old_save(tmp_path):
    path = str(tmp_path / "model")
    rt.saved.save(OLD, path)
    return path


def assert_old_save_intact(path):
    assert sorted(os.listdir(path)) == ["arrays.npz", "graph.json"]     # nothing left over
    np.testing.assert_array_equal(rt.saved.load(path)(X).numpy(), OLD_RESULT)


def run_python(code, *args):
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                            capture_output=True, text=True, timeout=120)
    return result


# -- the helper ---------------------------------------------------------------------------------

def test_a_failing_block_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "f.txt"
    files.write_file(str(path), "old")
    with pytest.raises(RuntimeError):
        with files.replace_files(str(path)) as (f,):
            f.write(b"half of the new")
            raise RuntimeError("failed while writing")
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["f.txt"]


def test_a_replaced_file_keeps_its_mode_and_a_new_one_gets_the_usual_mode(tmp_path):
    path = tmp_path / "f.txt"
    files.write_file(str(path), "one")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~umask
    os.chmod(path, 0o600)
    files.write_file(str(path), b"two")
    assert path.read_bytes() == b"two" and stat.S_IMODE(os.stat(path).st_mode) == 0o600


# -- saved graphs -------------------------------------------------------------------------------

SAVE_UNDER_A_SIZE_LIMIT = """
import resource, signal, sys
import numpy as np
import runtime as rt
path, which = sys.argv[1], sys.argv[2]
v = rt.Variable(np.random.default_rng(0).normal(size=3 if which == "graph" else 100000)
                .astype(np.float32))
def f(x):
    return rt.reduce_sum(x) * v
if which == "graph":                              # a description of ~200 KB, tiny arrays
    f.__name__ = "f" * 100000
f = rt.function(f, input_signature=[rt.TensorSpec([3], rt.float32)])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)     # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, resource.RLIM_INFINITY))
try:
    rt.saved.save(f, path)
except OSError as e:
    print("save failed", e.errno)
"""


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin",
                    reason="RLIMIT_FSIZE and SIGXFSZ as on Linux")
@pytest.mark.parametrize("which", ["graph", "arrays"], ids=["second write", "first write"])
def test_a_write_cut_short_by_a_file_size_limit_leaves_the_old_save(old_save, which):
    result = run_python(SAVE_UNDER_A_SIZE_LIMIT, old_save, which)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"save failed {errno.EFBIG}"
    assert_old_save_intact(old_save)


@pytest.fixture
def immutable(tmp_path):
    """Make a path immutable (chattr +i) for the test; skip where that is not possible."""
    made = []

    def make(path):
        chattr = shutil.which("chattr")
        if chattr is None or subprocess.run([chattr, "+i", path],
                                            capture_output=True).returncode != 0:
            pytest.skip("chattr +i is not available here (needs root and ext4 or the like)")
        made.append(path)
    yield make
    for path in made:
        subprocess.run(["chattr", "-i", path], capture_output=True)


def test_an_immutable_graph_json_fails_the_save_and_the_arrays_are_put_back(old_save,
                                                                            immutable):
    immutable(os.path.join(old_save, "graph.json"))
    with pytest.raises(PermissionError):
        rt.saved.save(scaled([9.0, 9.0, 9.0]), old_save)
    assert_old_save_intact(old_save)


def test_an_immutable_directory_fails_the_save_before_anything_is_written(old_save,
                                                                          immutable):
    immutable(old_save)
    with pytest.raises(PermissionError):
        rt.saved.save(scaled([9.0, 9.0, 9.0]), old_save)
    assert_old_save_intact(old_save)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root writes into read-only directories")
def test_a_read_only_directory_fails_the_save_and_keeps_the_old_one(old_save):
    os.chmod(old_save, 0o555)
    try:
        with pytest.raises(PermissionError):
            rt.saved.save(scaled([9.0, 9.0, 9.0]), old_save)
    finally:
        os.chmod(old_save, 0o755)
    assert_old_save_intact(old_save)


def test_a_failed_second_rename_puts_the_first_file_back(old_save, monkeypatch):
    real_replace, calls = os.replace, []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == 2:                 # graph.json's rename; the rollback's pass
            raise OSError(errno.EIO, "input/output error", dst)
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="input/output error"):
        rt.saved.save(scaled([9.0, 9.0, 9.0]), old_save)
    monkeypatch.undo()
    assert [os.path.basename(c) for c in calls] == ["arrays.npz", "graph.json", "arrays.npz"]
    assert_old_save_intact(old_save)


def test_a_failed_fsync_replaces_nothing(old_save, monkeypatch):
    def fsync(fd):
        raise OSError(errno.ENOSPC, "no space left on device")

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OSError, match="no space left"):
        rt.saved.save(scaled([9.0, 9.0, 9.0]), old_save)
    monkeypatch.undo()
    assert_old_save_intact(old_save)


CRASH_BETWEEN_THE_RENAMES = """
import os, sys
import numpy as np
import runtime as rt
real_replace = os.replace
def replace_then_die(src, dst):
    real_replace(src, dst)
    os._exit(3)                                   # the power fails after the first rename
os.replace = replace_then_die
v = rt.Variable(np.float32([9.0, 9.0, 9.0]), name="scale")
f = rt.function(lambda x: x * v + 1.0, input_signature=[rt.TensorSpec([3], rt.float32)])
rt.saved.save(f, sys.argv[1])
"""


def test_a_crash_between_the_two_renames_is_refused_not_mixed(old_save):
    result = run_python(CRASH_BETWEEN_THE_RENAMES, old_save)
    assert result.returncode == 3, result.stderr
    with pytest.raises(LoadError, match="the arrays file is not the one saved with this graph "
                                        "description"):
        rt.saved.load(old_save)
    rt.saved.save(scaled([2.0, 2.0, 2.0]), old_save)          # the next save repairs it
    np.testing.assert_array_equal(rt.saved.load(old_save)(X).numpy(), [3.0, 5.0, 7.0])


def test_a_successful_save_over_an_old_one_replaces_both_files(old_save):
    rt.saved.save(scaled([2.0, 2.0, 2.0]), old_save)
    assert sorted(os.listdir(old_save)) == ["arrays.npz", "graph.json"]
    np.testing.assert_array_equal(rt.saved.load(old_save)(X).numpy(), [3.0, 5.0, 7.0])


# -- ONNX, viz renders and the CLI's --graph ---------------------------------------------------

@pytest.fixture
def failing_fsync(monkeypatch):
    def fsync(fd):
        raise OSError(errno.ENOSPC, "no space left on device")
    monkeypatch.setattr(os, "fsync", fsync)


def test_an_onnx_export_that_fails_leaves_the_old_model(tmp_path, monkeypatch):
    onnx = pytest.importorskip("onnx")
    path = str(tmp_path / "f.onnx")
    old = rt.function(lambda x: x + 1.0).get_concrete_function(X)
    rt.onnx.export(old, path)
    before = open(path, "rb").read()
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.ENOSPC,
                                                                              "disk full")))
    with pytest.raises(OSError, match="disk full"):
        rt.onnx.export(rt.function(lambda x: x * 3.0).get_concrete_function(X), path)
    monkeypatch.undo()
    assert open(path, "rb").read() == before and os.listdir(tmp_path) == ["f.onnx"]
    assert [n.op_type for n in onnx.load(path).graph.node][-2:] == ["Add", "Identity"]


def test_a_dot_render_that_fails_leaves_the_old_file(tmp_path, failing_fsync):
    path = tmp_path / "g.dot"
    path.write_text("old picture")
    with pytest.raises(OSError):
        rt.viz.render(OLD.get_concrete_function(), str(path))
    assert path.read_text() == "old picture" and os.listdir(tmp_path) == ["g.dot"]


@pytest.fixture
def fake_dot(tmp_path, monkeypatch):
    """A `dot` program on PATH that draws its input as '<svg>...</svg>', or fails when the
    graph's text says FAIL."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "dot"
    program.write_text("#!/bin/sh\ninput=$(cat)\ncase \"$input\" in *FAIL*) echo bad >&2; "
                       "exit 1;; esac\nprintf '<svg>%s</svg>' \"$input\"\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


@pytest.mark.skipif(os.name != "posix", reason="a shell script stands for dot")
def test_a_picture_is_written_from_dots_output_and_a_failed_one_leaves_the_old(tmp_path,
                                                                               fake_dot):
    path = tmp_path / "g.svg"
    rt.viz.render(OLD.get_concrete_function(), str(path))
    picture = path.read_text()
    assert picture.startswith("<svg>digraph") and picture.endswith("</svg>")
    failing = rt.function(lambda x: rt.identity(x, name="FAIL")).get_concrete_function(X)
    with pytest.raises(RuntimeError, match="dot failed to draw"):
        rt.viz.render(failing, str(path))
    assert path.read_text() == picture and sorted(os.listdir(tmp_path)) == ["bin", "g.svg"]


def test_the_cli_graph_output_that_fails_leaves_the_old_file(tmp_path, failing_fsync, capsys):
    from autograph.__main__ import main
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = tmp_path / "collatz.dot"
    out.write_text("old graph")
    collatz = os.path.join(root, "samples", "collatz.py")
    assert main([f"{collatz}::collatz", "--graph", str(out), "--args", "[27]"]) == 2
    assert "cannot write the graph" in capsys.readouterr().err
    assert out.read_text() == "old graph" and os.listdir(tmp_path) == ["collatz.dot"]


# -- TensorBoard event files -------------------------------------------------------------------

def checked_records(path):
    """The records of a TFRecord file; every length and CRC must check, nothing may trail."""
    data, records = open(path, "rb").read(), []
    while data:
        assert len(data) >= 16, "a partial record at the end"
        header, length_crc = data[:8], data[8:12]
        (length,) = struct.unpack("<Q", header)
        assert _masked_crc(header) == length_crc
        record, crc = data[12:12 + length], data[12 + length:16 + length]
        assert len(record) == length and _masked_crc(record) == crc
        records.append(record)
        data = data[16 + length:]
    return records


EVENTS_UNDER_A_SIZE_LIMIT = """
import os, resource, signal, sys
import numpy as np
import runtime as rt
writer = rt.summary.create_file_writer(sys.argv[1])
with writer.as_default():
    for step in range(5):
        rt.summary.scalar("loss", float(step), step=step)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE,
                       (os.path.getsize(writer.path) + 4096, resource.RLIM_INFINITY))
    try:
        rt.summary.histogram("weights", np.arange(100000.0), step=5, buckets=5000)
        print("written")
    except OSError as e:
        print("histogram failed", e.errno)
    for step in range(5, 8):
        rt.summary.scalar("loss", float(step), step=step)
writer.close()
"""


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin",
                    reason="RLIMIT_FSIZE and SIGXFSZ as on Linux")
def test_an_event_write_cut_short_keeps_every_whole_record(tmp_path):
    result = run_python(EVENTS_UNDER_A_SIZE_LIMIT, str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"histogram failed {errno.EFBIG}"
    (name,) = os.listdir(tmp_path)
    records = checked_records(str(tmp_path / name))
    assert len(records) == 1 + 5 + 3 and b"brain.Event:2" in records[0]
    assert all(b"loss" in r for r in records[1:]) and not any(b"weights" in r for r in records)
    try:
        from tensorboard.backend.event_processing import event_accumulator
    except ImportError:
        return
    acc = event_accumulator.EventAccumulator(str(tmp_path), size_guidance={"scalars": 0})
    acc.Reload()
    assert [e.step for e in acc.Scalars("loss")] == list(range(8))
