"""Project-wide pytest options."""

import os

import pytest

# Tests that start a fresh Python process (saved graphs loaded elsewhere, the CLI, the loop
# limit read from the environment) import this checkout, installed or not.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p)
# Every conversion checks the loader's predicted statement lines (its source map) against
# a parse of the printed code (autograph/pyct/loader.py).
os.environ.setdefault("AUTOGRAPH_CHECK_LINES", "1")
# Graphs compile before their first run, so that the suites test the executor they name
# (by default a small loop-free graph's first run is interpreted: the plain executor,
# which CI's RT_EXECUTOR=plain run tests); tests/runtime/test_lazy_compile.py tests that.
os.environ.setdefault("RT_LAZY_COMPILE", "0")


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/*.golden from the current compiler output "
                          "(review the diff before committing)")


@pytest.fixture
def on_cpu():
    """Run the test with cpu:0 as the default device, whatever `RT_DEVICE` says: for tests
    of the numpy path's own machinery (the fast executor's numpy source, `out=` reuse and
    the memory peaks it gives, kernels called directly with numpy arrays)."""
    import runtime as rt
    with rt.config.options(default_device="cpu:0"):
        yield
