"""Build the API reference from the docstrings: `python docs/build.py [OUTPUT_DIR]`.

Writes HTML pages (pdoc, the `docs` extra: `pip install -e '.[docs]'`) for the public API
of `autograph` and `runtime` into OUTPUT_DIR (default `build/docs/`, git-ignored); open
`index.html` there. Each package's `__all__` decides what is shown, so internal modules
(`runtime.executor`, `autograph.pyct`, ...) stay out. The reference documents the checkout
this script sits in, not an installed copy. Exits non-zero when pdoc warns (a docstring
that fails to render, a module that fails to import).
"""
import importlib
import importlib.util
import os
import pathlib
import pkgutil
import sys
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("autograph", "runtime")
# Public modules that their package's `__all__` leaves out (a star import must not import
# them), each with the package it needs: `rt.onnx` needs the onnx extra, `rt.distribute`
# the distributed extra (Dask).
EXTRA_MODULES = {"runtime.onnx": "onnx", "runtime.distribute": "distributed"}


def shadowed_submodules(package):
    """Submodules named like a public function or class of the package (`runtime.function`
    behind `rt.function`): pdoc would document the module under the public name."""
    names = set(package.__all__)
    return [f"{package.__name__}.{info.name}" for info in pkgutil.iter_modules(package.__path__)
            if info.name in names and not _is_module(getattr(package, info.name, None))]


def _is_module(value):
    return type(value).__name__ == "module"


def module_specs():
    """pdoc's module arguments: the packages, the extra modules whose package is installed
    (the `docs` extra installs them all), minus the shadowed submodules."""
    specs = list(PACKAGES)
    for module, needs in EXTRA_MODULES.items():
        if importlib.util.find_spec(needs) is None:
            print(f"{module} left out: it needs {needs}, not installed")
        else:
            specs.append(module)
    for name in PACKAGES:
        specs += ["!" + module for module in shadowed_submodules(importlib.import_module(name))]
    return specs


def build(output_dir):
    import pdoc
    import pdoc.render
    pdoc.render.configure(docformat="markdown", show_source=False,
                          footer_text="autograph and runtime: API reference")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdoc.pdoc(*module_specs(), output_directory=pathlib.Path(output_dir))
    return [str(w.message) for w in caught]


def main(argv):
    sys.path.insert(0, ROOT)
    output_dir = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(ROOT, "build", "docs"))
    try:
        import pdoc  # noqa: F401
    except ImportError:
        sys.exit("docs/build.py needs pdoc: pip install -e '.[docs]'")
    problems = build(output_dir)
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    print(f"API reference written to {os.path.join(output_dir, 'index.html')}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
