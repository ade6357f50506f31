"""The command line's --graph: the traced graph of a function for --args, as text or a picture."""
import os
import shutil

import pytest

import runtime as rt
from autograph.__main__ import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLATZ = os.path.join(ROOT, "samples", "collatz.py")
NESTED = os.path.join(ROOT, "samples", "nested_functions.py")


def test_graph_prints_the_text_form_of_the_traced_graph(capsys):
    assert main([f"{COLLATZ}::collatz", "--graph", "--args", "[27]"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("graph collatz(n: i32[]) {")
    assert "while[n_vars=2" in out and "# collatz.py:16" in out


def test_dash_is_the_text_form_and_the_only_converted_function_needs_no_name(capsys):
    assert main([COLLATZ, "--graph", "-", "--args", "[27]"]) == 0
    assert capsys.readouterr().out.startswith("graph collatz(n: i32[]) {")


def test_args_become_tensors_and_methods_are_traced_on_a_new_instance(capsys):
    assert main([f"{NESTED}::F1.__call__", "--graph", "--args",
                 "[[[1.0, 2.0]], [[1.0], [2.0]], 3]"]) == 0
    assert capsys.readouterr().out.startswith(
        "graph __call__(a: f32[1,2], x: f32[2,1], v: i32[]) {")


def test_python_values_in_args_are_fixed_in_the_trace(tmp_path, capsys):
    source = tmp_path / "prog.py"
    source.write_text("def scale(x, mode, factors):\n"
                      "    if mode == 'double':\n"
                      "        return x * factors['k']\n"
                      "    return x\n")
    assert main([f"{source}::scale", "--graph", "--args", "[[1, 2], 'double', {'k': 2}]"]) == 0
    out = capsys.readouterr().out
    assert "multiply" in out and "prog.py:3" in out


def test_both_dump_and_graph(capsys):
    assert main([f"{COLLATZ}::collatz", "--dump", "--graph", "--args", "[5]"]) == 0
    out = capsys.readouterr().out
    assert "def ag__collatz(n):" in out and "graph collatz(n: i32[])" in out


@pytest.mark.parametrize("argv, message", [
    (["--graph", "--args", "27"], "--args must be a Python literal list such as '[27]'"),
    (["--graph", "--args", "[__import__('os').getcwd()]"], "must be a Python literal list"),
    (["--args", "[1]"], "--args gives the example arguments of --graph"),
    (["--graph", "--args", "[[1, [2]]]"], "cannot make a tensor of"),
    (["--graph"], "--graph traces collatz(n) on example arguments: give them with --args, "
                  "such as --args '[1.0]'"),
    (["--optimized"], "--optimized shows the optimized graph of --graph"),
])
def test_bad_args_get_a_one_line_error(argv, message, capsys):
    assert main([f"{COLLATZ}::collatz"] + argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_graph_needs_one_function(capsys):
    assert main([NESTED, "--graph"]) == 2
    assert "--graph traces one function" in capsys.readouterr().err


def test_dot_file_is_written_without_graphviz(tmp_path, capsys):
    out = tmp_path / "collatz.dot"
    assert main([f"{COLLATZ}::collatz", "--graph", str(out), "--args", "[27]"]) == 0
    assert out.read_text().startswith('digraph "collatz" {')
    assert f"wrote {out}" in capsys.readouterr().out


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_svg_of_a_sample_graph_is_rendered(tmp_path, capsys):
    out = tmp_path / "collatz.svg"
    assert main([f"{COLLATZ}::collatz", "--graph", str(out), "--args", "[27]"]) == 0
    svg = out.read_text()
    assert "<svg" in svg and "while_body" in svg and "collatz.py:16" in svg


def test_without_graphviz_a_picture_is_a_clear_one_line_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert main([f"{COLLATZ}::collatz", "--graph", str(tmp_path / "c.svg"), "--args", "[2]"]) == 2
    err = capsys.readouterr().err
    assert "needs the Graphviz program 'dot', which is not on PATH" in err
    assert err.count("\n") == 1


def test_graph_without_args_traces_a_function_that_takes_none(tmp_path, capsys):
    source = tmp_path / "prog.py"
    source.write_text("import runtime as rt\n\n\ndef ones(n=3):\n    return rt.ones([n])\n")
    assert main([f"{source}::ones", "--graph"]) == 0
    assert capsys.readouterr().out.startswith("graph ones() {")


def test_optimized_prints_the_graph_the_passes_made(tmp_path, capsys):
    source = tmp_path / "prog.py"
    source.write_text("def f(x):\n    unused = x * 3.0\n    return (x + 1.0) * 3.0\n")
    assert main([f"{source}::f", "--graph", "--args", "[1.0]"]) == 0
    traced = capsys.readouterr().out
    with rt.config.options(optimizations=True):        # CI also runs with RT_OPTIMIZE=0
        assert main([f"{source}::f", "--graph", "--optimized", "--args", "[1.0]"]) == 0
    optimized = capsys.readouterr().out
    assert "= multiply(x, const)" in traced and "multiply(x, const)" not in optimized  # pruned
    assert "= fused(" in optimized and "= fused(" not in traced
