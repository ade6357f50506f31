"""Functions from generated source text, imported from real files (conversion reads them).

    f = load("def f(x):\n    return x + 1\n")

Each call writes a new module to a temporary directory and imports it. Note that
code objects compare equal across files when all else is equal, so the compiler's
caches treat the same text loaded twice as one function: vary the text to measure
conversion afresh.
"""
import importlib.util
import itertools
import os
import tempfile

_directory = tempfile.mkdtemp(prefix="ag_sources_")
_count = itertools.count()


def load(source, name="f"):
    """The function `name` defined by `source`, imported from a new file."""
    module_name = f"ag_source_{next(_count)}"
    path = os.path.join(_directory, module_name + ".py")
    with open(path, "w") as file:
        file.write(source)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)
