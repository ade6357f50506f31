"""The command line: show the code AutoGraph generates.

    python -m autograph samples/collatz.py --dump             every converted function
    python -m autograph samples/collatz.py::collatz --dump    one function (or Class.method)

The file is imported as a module (its `if __name__ == "__main__":` block does
not run). Without ::QUALNAME, every function decorated with `autograph.convert`
(module level, or methods of module-level classes) is shown.
"""
import argparse
import importlib.util
import os
import sys

import runtime as rt

from autograph import api
from autograph.errors import AutoGraphError


def _parser():
    parser = argparse.ArgumentParser(
        prog="autograph", description="Show the Python code AutoGraph generates for functions "
        "of a file.")
    parser.add_argument("target", metavar="PATH.py[::QUALNAME]",
                        help="a Python file, optionally followed by ::name or ::Class.method")
    parser.add_argument("--dump", action="store_true",
                        help="print the generated code (the default action)")
    parser.add_argument("--recursive", action="store_true",
                        help="with --dump, also convert functions called by the target when "
                             "generating (affects nothing printed today; kept for symmetry)")
    return parser


class _UsageError(Exception):
    pass


def _load_module(path):
    if not os.path.isfile(path):
        raise _UsageError(f"no such file: {path}")
    name = "autograph_cli_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    return module


def _resolve(module, qualname):
    obj = module
    for part in qualname.split("."):
        try:
            obj = getattr(obj, part) if not isinstance(obj, type) else obj.__dict__[part]
        except (AttributeError, KeyError):
            raise _UsageError(f"no function named '{qualname}' in {module.__file__}") from None
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if not (callable(obj) or isinstance(obj, rt.Function)):
        raise _UsageError(f"'{qualname}' in {module.__file__} is not a function")
    return obj


def _converted_functions(module):
    """(qualname, function) for each ag.convert-decorated function of the module."""
    found = []
    for name, value in vars(module).items():
        if getattr(value, "_ag_converted", False):
            found.append((name, value))
        elif isinstance(value, type) and value.__module__ == module.__name__:
            for attr, member in vars(value).items():
                if getattr(member, "_ag_converted", False):
                    found.append((f"{name}.{attr}", member))
    return found


def main(argv=None):
    args = _parser().parse_args(argv)
    path, _, qualname = args.target.partition("::")
    try:
        module = _load_module(path)
        if qualname:
            targets = [(qualname, _resolve(module, qualname))]
        else:
            targets = _converted_functions(module)
            if not targets:
                raise _UsageError(f"no function in {path} is decorated with autograph.convert; "
                                  f"name one with {path}::NAME")
        outputs = []
        for name, fn in targets:
            outputs.append(f"# {name}\n{api.to_code(fn).rstrip()}\n")
    except _UsageError as e:
        print(f"autograph: error: {e}", file=sys.stderr)
        return 2
    except AutoGraphError as e:
        print(f"autograph: error: {e}", file=sys.stderr)
        return 1
    print("\n".join(outputs), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
