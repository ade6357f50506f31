"""Every python snippet of README.md runs on its own (its own imports, a fresh namespace),
as a reader who copies one into a file runs it; some print what the README says."""
import os
import re
import runpy
import warnings

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
def test_each_readme_snippet_runs_on_its_own(code, tmp_path, capsys):
    path = tmp_path / "snippet.py"
    path.write_text(code)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # a snippet may show a warning
        runpy.run_path(str(path), run_name="__main__")
    out = capsys.readouterr().out
    for marker, lines in EXPECTED.items():
        if marker in code:
            printed = out.splitlines()
            assert len(printed) == len(lines) and all(
                got.startswith(want) for got, want in zip(printed, lines)), out
