"""The command line: show the code AutoGraph generates, and the graphs it traces.

    python -m autograph samples/collatz.py --dump             every converted function
    python -m autograph samples/collatz.py::collatz --dump    one function (or Class.method)
    python -m autograph samples/collatz.py::collatz --graph --args '[27]'
                                                              the traced graph, as text
    python -m autograph samples/collatz.py::collatz --graph collatz.svg --args '[27]'
                                                              ... drawn by Graphviz's dot

The file is imported as a module (its `if __name__ == "__main__":` block does
not run). Without ::QUALNAME, every function decorated with `autograph.convert`
(module level, or methods of module-level classes) is shown.

--args is a Python literal list, read with ast.literal_eval (never eval): numbers,
bools and (nested) lists become tensors (int32, float32, bool as rt.constant gives);
strings, None, tuples and dicts are passed as Python values, fixed in the trace.
A method (Class.method) is traced on an instance made by calling Class().
"""
import argparse
import ast
import importlib.util
import os
import sys

import runtime as rt

from autograph import api
from autograph.errors import AutoGraphError


def _parser():
    parser = argparse.ArgumentParser(
        prog="autograph", description="Show the Python code AutoGraph generates for functions "
        "of a file, or the graph a function traces for example arguments.")
    parser.add_argument("target", metavar="PATH.py[::QUALNAME]",
                        help="a Python file, optionally followed by ::name or ::Class.method")
    parser.add_argument("--dump", action="store_true",
                        help="print the generated code (the default action without --graph)")
    parser.add_argument("--recursive", action="store_true",
                        help="with --dump, also convert functions called by the target when "
                             "generating (affects nothing printed today; kept for symmetry)")
    parser.add_argument("--graph", nargs="?", const="-", metavar="OUT",
                        help="trace the function on the --args and print its graph as text "
                             "(no OUT, or -); with OUT.svg/.png/.pdf draw it with Graphviz's "
                             "dot, with OUT.dot write the DOT text")
    parser.add_argument("--args", default="[]", metavar="LITERAL",
                        help="with --graph: the example arguments, a Python literal list "
                             "such as '[27]' or '[[1.0, 2.0], \"mode\"]'; numbers, bools "
                             "and lists become tensors, other values stay Python values")
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


def _example_args(text):
    """The --args literal as call arguments: numbers, bools and lists become tensors."""
    try:
        values = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise _UsageError(f"--args must be a Python literal list (of numbers, bools, strings, "
                          f"None, lists, tuples, dicts), got {text!r}") from None
    if not isinstance(values, list):
        raise _UsageError(f"--args must be a Python literal list such as '[27]', got {text!r}")

    def convert(value):
        if isinstance(value, (bool, int, float, list)):
            try:
                return rt.constant(value)
            except (TypeError, ValueError) as e:
                raise _UsageError(f"--args: cannot make a tensor of {value!r}: {e}") from None
        return value
    return [convert(v) for v in values]


def _traced_graph(module, qualname, fn, args):
    """The graph of `fn` (converted if it is not already) traced on `args`."""
    instance = None                    # a bound rt.Function holds its instance weakly
    if "." in qualname:
        cls = _resolve(module, qualname.rpartition(".")[0])
        instance = cls()
        fn = fn.__get__(instance, cls)
    if not isinstance(fn, rt.Function):
        fn = api.convert(fn)
    concrete = fn.get_concrete_function(*args)
    del instance
    return concrete


def _show_graph(concrete, out):
    if out == "-":
        return f"{concrete.graph}\n"
    from runtime import viz
    try:
        viz.render(concrete, out)
    except viz.GraphvizNotFound as e:
        raise _UsageError(str(e)) from None
    return f"wrote {out}\n"


def main(argv=None):
    args = _parser().parse_args(argv)
    path, _, qualname = args.target.partition("::")
    try:
        if args.graph is None and args.args != "[]":
            raise _UsageError("--args gives the example arguments of --graph")
        module = _load_module(path)
        if qualname:
            targets = [(qualname, _resolve(module, qualname))]
        else:
            targets = _converted_functions(module)
            if not targets:
                raise _UsageError(f"no function in {path} is decorated with autograph.convert; "
                                  f"name one with {path}::NAME")
        outputs = []
        if args.dump or args.graph is None:
            for name, fn in targets:
                outputs.append(f"# {name}\n{api.to_code(fn).rstrip()}\n")
        if args.graph is not None:
            if len(targets) != 1:
                raise _UsageError(f"--graph traces one function: name it with {path}::NAME")
            name, fn = targets[0]
            concrete = _traced_graph(module, name, fn, _example_args(args.args))
            outputs.append(_show_graph(concrete, args.graph))
    except _UsageError as e:
        print(f"autograph: error: {e}", file=sys.stderr)
        return 2
    except (AutoGraphError, TypeError, ValueError) as e:
        print(f"autograph: error: {e}", file=sys.stderr)
        return 1
    print("\n".join(outputs), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
