"""Every sample's graph function, saved and loaded in a fresh process that has neither the
sample's source nor the compiler, gives identical results and prints."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import runtime as rt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sample(name):
    path = os.path.join(ROOT, "samples", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"saved_sample_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sample_functions():
    """{name: (concrete function, example tensor arguments)} for each sample's graph function."""
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(12, 5)).astype(np.float32)
    logits[:, 0] = -10.0
    logits[6, 0] = 10.0
    xs = rng.normal(size=(20, 4, 3)).astype(np.float32)
    rnn_args = [xs, np.zeros((4, 8), np.float32), rng.normal(size=(3, 8)).astype(np.float32),
                rng.normal(size=(8, 8)).astype(np.float32) * 0.5, np.zeros(8, np.float32)]
    beam = [logits, np.int32(12), np.float32(-2.0)]
    nested = sample("nested_functions")
    f2 = nested.F2()                       # bound methods hold their instance weakly
    v = rt.Variable(12.)
    cases = {
        "collatz": (sample("collatz").collatz, [np.int32(27)]),
        "fizzbuzz": (sample("fizzbuzz").fizzbuzz, [np.int32(15)]),
        "dynamic_rnn": (sample("dynamic_rnn").rnn, rnn_args),
        "beam_search": (sample("beam_search").greedy_decode, beam),
        "nested_functions": (nested.F2.__call__.__get__(f2), [v]),
    }
    out = {}
    for name, (fn, args) in cases.items():
        tensors = [rt.constant(a) if isinstance(a, np.generic) else a for a in args]
        out[name] = fn.get_concrete_function(*tensors), [a for a in tensors
                                                         if not isinstance(a, rt.Variable)]
    return out


LOADER = r"""
import sys
import numpy as np
import runtime as rt

for name, path in zip(sys.argv[1::2], sys.argv[2::2]):
    with np.load(path + ".args.npz", allow_pickle=False) as z:
        args = [z[f"arg{i}"] for i in range(len(z.files))]
    print("=== " + name, flush=True)
    result = rt.saved.load(path)(*args)
    np.savez(path + ".result.npz", *[t.numpy() for t in rt.nest.flatten(result)])
assert "autograph" not in sys.modules, "the loader needed the compiler"
"""


def test_every_sample_round_trips_in_a_fresh_process(tmp_path, capsys):
    expected, argv = {}, []
    capsys.readouterr()
    for name, (concrete, args) in sample_functions().items():
        path = str(tmp_path / name)
        rt.saved.save(concrete, path)
        np.savez(path + ".args.npz", **{f"arg{i}": np.asarray(a) for i, a in enumerate(args)})
        print("=== " + name)
        expected[name] = [t.numpy() for t in rt.nest.flatten(concrete(*args))]
        argv += [name, path]
    printed = capsys.readouterr().out
    result = subprocess.run([sys.executable, "-c", LOADER] + argv, capture_output=True,
                            text=True, cwd=str(tmp_path), timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == printed               # fizzbuzz's and the seed's prints too
    for name, values in expected.items():
        with np.load(str(tmp_path / name) + ".result.npz", allow_pickle=False) as z:
            loaded = [z[f"arr_{i}"] for i in range(len(z.files))]
        assert len(loaded) == len(values), name
        for a, b in zip(loaded, values):
            assert a.dtype == b.dtype and np.array_equal(a, b), name


def test_a_sample_graph_reads_back_as_the_same_text(tmp_path):
    concrete, _ = sample_functions()["beam_search"]
    rt.saved.save(concrete, str(tmp_path / "beam"))
    assert str(rt.saved.load(str(tmp_path / "beam")).graph) == str(concrete.graph)


@pytest.mark.parametrize("name", ["collatz", "nested_functions"])
def test_the_description_is_readable_json(tmp_path, name):
    concrete, _ = sample_functions()[name]
    rt.saved.save(concrete, str(tmp_path / name))
    text = (tmp_path / name / "graph.json").read_text()
    assert '"type": "while"' in text or '"type": "call"' in text
