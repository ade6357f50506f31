"""Every python snippet of README.md and of the guide (docs/*.md) runs on its own, as a
reader who copies one into a file runs it: in a fresh Python process, in an empty folder.
Where a ```text block follows a snippet, it is what the snippet prints, exactly; some README
snippets print what the README says in prose (EXPECTED)."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCUMENTS = ["README.md"] + sorted(
    f"docs/{name}" for name in os.listdir(os.path.join(ROOT, "docs")) if name.endswith(".md"))
# A python block, then (after blank lines only) the text block of its output, if any.
SNIPPET = re.compile(r"^```python\n(.*?)^```\n(?:\s*^```text\n(.*?)^```$)?", flags=re.S | re.M)


def snippets(document):
    with open(os.path.join(ROOT, document), encoding="utf-8") as f:
        return [(m.group(1), m.group(2)) for m in SNIPPET.finditer(f.read())]


def all_snippets():
    return [pytest.param(code, output, id=f"{document}-{i + 1}")
            for document in DOCUMENTS for i, (code, output) in enumerate(snippets(document))]


# What a README snippet prints, where the README says it in prose (a line of the snippet ->
# its output lines' beginnings).
EXPECTED = {
    "c = Counter()": ["[2, 4, 6]", "rt.Variable 'Variable' created while tracing "
                                   "'fresh_each_call' a second time"],
    "def row_sums(x):": ["2"],
    "def make_data():": ["True True"],
}
# Snippets that need an optional extra (a marker in the code -> the module it needs).
EXTRAS = {"rt.onnx.": "onnx", "onnxruntime": "onnxruntime", "compiled_regions": "numba",
          "rt.distribute.": "distributed", '"strict:': "array_api_strict"}


def test_the_readme_and_every_guide_page_have_snippets():
    assert len(snippets("README.md")) >= 5
    guide = [document for document in DOCUMENTS if document.startswith("docs/")]
    assert len(guide) >= 8
    assert sum(output is not None for document in guide for _, output in snippets(document)) >= 20


@pytest.mark.parametrize("code, output", all_snippets())
def test_each_snippet_runs_on_its_own(code, output, tmp_path):
    for marker, module in EXTRAS.items():
        if marker in code and importlib.util.find_spec(module) is None:
            pytest.skip(f"the snippet uses {marker}: the optional package {module} is absent")
    (tmp_path / "snippet.py").write_text(code)
    # breakpoint() in a snippet (docs/debugging.md) does not stop: no one is there to type.
    env = dict(os.environ, PYTHONBREAKPOINT="0")
    result = subprocess.run([sys.executable, "snippet.py"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    if output is not None:
        assert out == output
        return
    for marker, lines in EXPECTED.items():
        if marker in code:
            printed = out.splitlines()
            assert len(printed) == len(lines) and all(
                got.startswith(want) for got, want in zip(printed, lines)), out
