"""Every python snippet of README.md runs on its own, as a reader who copies one into a
file runs it: in a fresh Python process, in an empty folder; some print what the README
says."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def snippets():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    found = re.findall(r"^```python\n(.*?)^```$", text, flags=re.S | re.M)
    return [pytest.param(code, id=f"snippet-{i + 1}") for i, code in enumerate(found)]


# What a snippet prints, where the README shows it (a line of the snippet -> its output).
EXPECTED = {
    "c = Counter()": ["[2, 4, 6]", "rt.Variable 'Variable' created while tracing "
                                   "'fresh_each_call' a second time"],
    "def row_sums(x):": ["2"],
}


def test_the_readme_has_snippets():
    assert len(snippets()) >= 5


@pytest.mark.parametrize("code", snippets())
def test_each_readme_snippet_runs_on_its_own(code, tmp_path):
    if "rt.onnx." in code and importlib.util.find_spec("onnx") is None:
        pytest.skip("the snippet uses rt.onnx: the optional extra onnx is not installed")
    if "rt.distribute." in code and importlib.util.find_spec("distributed") is None:
        pytest.skip("the snippet uses rt.distribute: the optional extra distributed is not "
                    "installed")
    (tmp_path / "snippet.py").write_text(code)
    result = subprocess.run([sys.executable, "snippet.py"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for marker, lines in EXPECTED.items():
        if marker in code:
            printed = out.splitlines()
            assert len(printed) == len(lines) and all(
                got.startswith(want) for got, want in zip(printed, lines)), out
