"""Golden files: the code generated for each program in tests/golden/ is pinned.

Each `tests/golden/NAME.py` holds small functions (and classes); `NAME.golden` holds
`ag.to_code` of each, in order. A changed golden file is reviewed like code:
regenerate with `python -m pytest tests/autograph/test_golden.py --update-golden`
and explain the diff in the commit message.
"""
import importlib.util
import pathlib
import sys

import pytest

import autograph as ag

GOLDEN_DIR = pathlib.Path(__file__).resolve().parent.parent / "golden"
PROGRAMS = sorted(p for p in GOLDEN_DIR.glob("*.py"))


def _load(path):
    name = f"golden_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _functions(module):
    """Module-level functions and methods of module-level classes, in source order."""
    found = []
    for name, value in vars(module).items():
        if getattr(value, "__module__", None) != module.__name__:
            continue
        if isinstance(value, type):
            for attr, member in vars(value).items():
                if callable(member) and getattr(member, "__code__", None) and attr != "__init__":
                    found.append((f"{name}.{attr}", member))
        elif callable(value) and getattr(value, "__code__", None):
            found.append((name, value))
    found.sort(key=lambda item: item[1].__code__.co_firstlineno)
    return found


def generated(path):
    module = _load(path)
    parts = [f"# {name}\n{ag.to_code(fn).rstrip()}\n" for name, fn in _functions(module)]
    return "\n".join(parts)


def test_there_are_enough_programs():
    assert len(PROGRAMS) >= 30


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_golden(path, request):
    if sys.version_info < (3, 10) and path.stem.startswith("match_"):
        pytest.skip("match statements need Python 3.10")
    actual = generated(path)
    expected_path = path.with_suffix(".golden")
    if request.config.getoption("--update-golden"):
        expected_path.write_text(actual)
        return
    assert expected_path.exists(), (f"no golden file for {path.name}; create it with "
                                    f"--update-golden and review it")
    expected = expected_path.read_text()
    assert actual == expected, (f"generated code for {path.name} changed; if intended, "
                                f"rerun with --update-golden and review the diff")
