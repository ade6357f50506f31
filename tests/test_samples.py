"""Every sample runs, prints its result, and dumps its generated code with --dump."""
import os
import runpy
import sys

import pytest

SAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "samples")


def run_sample(name, *argv, capsys):
    old_argv = sys.argv
    sys.argv = [name] + list(argv)
    try:
        runpy.run_path(os.path.join(SAMPLES, name), run_name="__main__")
    finally:
        sys.argv = old_argv
    return capsys.readouterr().out


@pytest.mark.parametrize("name, expected", [
    ("collatz.py", "collatz(27) reaches 1 after 111 steps"),
    ("fizzbuzz.py", "8 numbers were printed as themselves"),
    ("dynamic_rnn.py", "final state matches numpy: True"),
    ("beam_search.py", "decoded 7 tokens"),
])
def test_sample_prints_its_result(name, expected, capsys):
    assert expected in run_sample(name, capsys=capsys)


@pytest.mark.parametrize("name", ["collatz.py", "fizzbuzz.py", "dynamic_rnn.py",
                                  "beam_search.py", "nested_functions.py", "quantize_mlp.py"])
def test_sample_dump_shows_generated_code(name, capsys):
    out = run_sample(name, "--dump", capsys=capsys)
    assert "def ag__" in out and "ag__." in out


def test_quantize_mlp_prints_size_accuracy_and_difference_per_precision(capsys):
    lines = run_sample("quantize_mlp.py", capsys=capsys).splitlines()
    assert lines[0].split() == ["weights", "saved", "size", "accuracy", "largest", "difference"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert list(rows) == ["float32", "float16", "int8"]
    size = {name: int(row[1]) for name, row in rows.items()}
    assert size["float32"] > 3.5 * size["int8"] and size["float32"] > 1.9 * size["float16"]
    assert all(float(row[3]) > 0.9 for row in rows.values())
    difference = {name: float(row[4]) for name, row in rows.items()}
    assert difference["float32"] == 0 < difference["float16"] < difference["int8"] < 0.1


def test_fizzbuzz_prints_in_the_graph_each_call(capsys):
    out = run_sample("fizzbuzz.py", "15", capsys=capsys)
    assert out.splitlines()[:5] == ["1", "2", "Fizz", "4", "Buzz"]
    assert out.splitlines()[14] == "FizzBuzz"


def test_seed_nested_functions(capsys):
    out = run_sample("nested_functions.py", capsys=capsys)
    lines = out.splitlines()
    # Converted code prints at run time, with values, exactly like the eager program
    # (the seed's tf.function printed the symbolic tensor once, at trace time).
    assert lines[0:2] == ["PRINT:  [[22. 22.]", " [23. 13.]]"]
    assert lines[2:4] == ["PRINT:  [[22. 22.]", " [23. 13.]]"]
    assert lines[4:6] == ["eager:  [[22. 22.]", " [23. 13.]]"]


def test_seed_tf1_session_and_eager(capsys):
    out = run_sample("tf1_session.py", capsys=capsys)
    assert out.splitlines() == [
        'Tensor("matmul:0", shape=(1, 1), dtype=float32)', "[[4.]]", "[[4.]]",
        "[1. 4. 9.]", "1.0", "2.0", "3.0"]
