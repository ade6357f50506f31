"""The command line: `python -m autograph PATH.py[::QUALNAME] --dump`."""
import os
import subprocess
import sys

import pytest

from autograph.__main__ import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLATZ = os.path.join(ROOT, "samples", "collatz.py")
NESTED = os.path.join(ROOT, "samples", "nested_functions.py")


def test_dump_prints_every_converted_function(capsys):
    assert main([NESTED, "--dump"]) == 0
    out = capsys.readouterr().out
    assert "# F1.__call__" in out and "# F2.__call__" in out
    assert "ag__.converted_call(rt.matmul, (a, x), None)" in out


def test_dump_one_function_by_qualified_name(capsys):
    assert main([f"{COLLATZ}::collatz", "--dump"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# collatz\ndef ag__collatz(n):")
    assert "ag__.while_stmt(" in out


def test_a_method_by_qualified_name(capsys):
    assert main([f"{NESTED}::F1.__call__", "--dump"]) == 0
    assert "def ag____call__(self, a, x, v):" in capsys.readouterr().out


@pytest.mark.parametrize("target, message", [
    ("no/such/file.py", "no such file"),
    (f"{COLLATZ}::nope", "no function named 'nope'"),
])
def test_bad_targets_get_a_one_line_error_and_exit_2(target, message, capsys):
    assert main([target, "--dump"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_help_explains_the_flags(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--dump" in out and "QUALNAME" in out and "--optimized" in out
    assert "affects nothing" not in out
    assert "--recursive with --dump, also print the code generated for the user functions " \
           "the target calls" in out


def test_a_folder_is_named_as_one_and_a_file_in_it_suggested(capsys):
    samples = os.path.dirname(COLLATZ)
    assert main([samples, "--dump"]) == 2
    err = capsys.readouterr().err
    assert f"{samples} is a folder: give one Python file (PATH.py[::QUALNAME]), such as " \
           f"{os.path.join(samples, '')}" in err and err.count("\n") == 1


CALLS = """\
import autograph as ag


def clip(x, limit):
    if x > limit:
        x = limit
    return x


def scale(x):
    return clip(x * 2.0, 10.0)


class Model:
    def helper(self, x):
        return scale(x) + 1.0

    @ag.convert
    def __call__(self, x):
        return self.helper(x)


@ag.convert
def step(x):
    return scale(x) + (lambda v: clip(v, 1.0))(x) + len([1, 2])
"""


def test_recursive_dumps_the_user_functions_the_target_calls_each_once(tmp_path, capsys):
    source = tmp_path / "prog.py"
    source.write_text(CALLS)
    assert main([f"{source}::step", "--dump"]) == 0
    assert [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("# ")] == ["# step"]
    assert main([f"{source}::step", "--dump", "--recursive"]) == 0
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if line.startswith("# ")] == [
        "# step", "# scale", "# clip"]
    assert "def ag__clip(x, limit):" in out and "ag__.if_stmt(" in out
    assert main([str(source), "--dump", "--recursive"]) == 0
    assert [line for line in capsys.readouterr().out.splitlines() if line.startswith("# ")] \
        == ["# Model.__call__", "# Model.helper", "# scale", "# clip", "# step"]


def test_python_dash_m_entry_point():
    result = subprocess.run([sys.executable, "-m", "autograph", f"{COLLATZ}::collatz", "--dump"],
                            capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "def ag__collatz(n):" in result.stdout
