"""The API reference: `python docs/build.py` builds it from the docstrings (skipped without
the `docs` extra), it shows the public API and not the internal modules, and every public
name has a docstring to show. The guide's snippets run in tests/test_readme.py."""
import importlib
import importlib.util
import inspect
import os
import re
import subprocess
import sys
from html import unescape

import pytest

import autograph as ag
import runtime as rt

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PUBLIC_MODULES = ["autograph", "runtime"] + [f"runtime.{name}" for name in rt.__all__
                                             if inspect.ismodule(getattr(rt, name))]
if importlib.util.find_spec("onnx") is not None:
    PUBLIC_MODULES.append("runtime.onnx")
if importlib.util.find_spec("distributed") is not None:
    PUBLIC_MODULES.append("runtime.distribute")


def public_names(module_name):
    module = importlib.import_module(module_name)
    return [(name, getattr(module, name)) for name in module.__all__]


def undocumented(module_name):
    """`module.name` (and `module.Class.member`) of the public API that has no docstring."""
    missing = []
    for name, value in public_names(module_name):
        if inspect.ismodule(value) or not (callable(value) or inspect.isclass(value)):
            continue
        if not inspect.getdoc(value):
            missing.append(f"{module_name}.{name}")
        if inspect.isclass(value):
            missing += [f"{module_name}.{name}.{member}" for member, attr in vars(value).items()
                        if not member.startswith("_") and not _member_doc(attr)]
    return missing


def _member_doc(attr):
    function = attr.fget if isinstance(attr, property) else getattr(attr, "__func__", attr)
    if not (callable(function) or isinstance(attr, property)):
        return "a class attribute"
    return (function.__doc__ or "").strip()


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_every_public_function_class_and_method_has_a_docstring(module_name):
    assert undocumented(module_name) == []


def test_the_guide_index_links_every_page_and_the_readme_links_the_guide():
    pages = sorted(name for name in os.listdir(os.path.join(ROOT, "docs"))
                   if name.endswith(".md") and name != "README.md")
    with open(os.path.join(ROOT, "docs", "README.md"), encoding="utf-8") as f:
        linked = set(re.findall(r"\]\(([\w-]+\.md)\)", f.read()))
    assert [page for page in pages if page not in linked] == []
    assert [page for page in linked if page not in pages] == []
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        assert "docs/README.md" in f.read()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    pytest.importorskip("pdoc", reason="the API reference needs the docs extra (pdoc)")
    out = tmp_path_factory.mktemp("reference")
    result = subprocess.run([sys.executable, os.path.join(ROOT, "docs", "build.py"), str(out)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""                     # no pdoc warnings
    return out


def page(reference, module_name):
    with open(reference / (module_name.replace(".", "/") + ".html"), encoding="utf-8") as f:
        return f.read()


def sections(html):
    """{id: the section's text} of a pdoc page (one section per documented name)."""
    found = re.findall(r'<section id="([\w.]+)">(.*?)</section>', html, flags=re.S)
    return {name: plain(text) for name, text in found}


def plain(text):
    """The text without markup, backticks and white space (pdoc's markdown moves spaces)."""
    return "".join(unescape(re.sub(r"<[^>]+>", "", text)).replace("`", "").split())


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_the_reference_shows_every_public_name_with_its_docstring(reference, module_name):
    html = page(reference, module_name)
    shown = sections(html)
    linked_modules = set(re.findall(r'href="[\w/]*?(\w+)\.html"', html))
    for name, value in public_names(module_name):
        if inspect.ismodule(value):
            assert name in linked_modules
            continue
        assert name in shown
        if callable(value) and inspect.getdoc(value):
            assert plain(inspect.getdoc(value).splitlines()[0]) in shown[name]


def test_the_reference_leaves_out_internal_modules(reference):
    pages = {str(p.relative_to(reference)) for p in reference.rglob("*.html")}
    expected = {m.replace(".", "/") + ".html" for m in PUBLIC_MODULES} | {"index.html"}
    assert pages == expected
    # `rt.function` is the decorator, not the module runtime/function.py behind it
    assert sections(page(reference, "runtime"))["function"].startswith("deffunction(func=None")


PDB_PROGRAM = """
import autograph as ag
import runtime as rt


@ag.convert
def halve(x):
    while x > 1:
        breakpoint()
        x = x / 2
    return x


print(halve.python_function(rt.constant(3.0)))
rt.run_functions_eagerly(True)
print(halve(rt.constant(3.0)))
"""


def test_pdb_stops_in_converted_code_where_the_guide_says(tmp_path):
    """docs/debugging.md: in the original function pdb stops at the user's line; in the
    converted one, at the same statement of the generated code, its variables in view."""
    (tmp_path / "halve.py").write_text(PDB_PROGRAM)
    commands = "p x\nc\np x\nc\n" * 2
    env = {k: v for k, v in os.environ.items() if k != "PYTHONBREAKPOINT"}
    result = subprocess.run([sys.executable, "halve.py"], cwd=tmp_path, input=commands,
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    stops = result.stdout.split("(Pdb) ")
    assert "halve.py(10)halve()" in stops[0]                     # the original function
    assert "numpy=3.0>" in stops[1] and "numpy=1.5>" in stops[3]
    assert "0.75" in stops[4]
    assert "<autograph generated file" in stops[4] and "loop_body()" in stops[4]
    assert "x = x / 2" in stops[4]
    assert "numpy=3.0>" in stops[5] and "numpy=1.5>" in stops[7]
    assert result.stdout.rstrip().endswith("0.75")
