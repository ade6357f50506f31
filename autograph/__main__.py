"""The command line: show the code AutoGraph generates, and the graphs it traces.

    python -m autograph samples/collatz.py --dump             every converted function
    python -m autograph samples/collatz.py::collatz --dump    one function (or Class.method)
    python -m autograph samples/collatz.py::collatz --graph --args '[27]'
                                                              the traced graph, as text
    python -m autograph samples/collatz.py::collatz --graph collatz.svg --args '[27]'
                                                              ... drawn by Graphviz's dot
    python -m autograph samples/collatz.py::collatz --graph --optimized --args '[27]'
                                                              the graph the passes made
    python -m autograph train.py::step --dump --recursive     step's code, then that of the
                                                              user functions it calls

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
import importlib
import importlib.util
import inspect
import os
import sys
import traceback

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
                        help="with --dump, also print the code generated for the user "
                             "functions the target calls (found by name in its code: "
                             "functions of its module, closures, methods of its class), "
                             "each once; converted code converts them when it calls them")
    parser.add_argument("--graph", nargs="?", const="-", metavar="OUT",
                        help="trace the function on the --args and print its graph as text "
                             "(no OUT, or -); with OUT.svg/.png/.pdf draw it with Graphviz's "
                             "dot, with OUT.dot write the DOT text")
    parser.add_argument("--optimized", action="store_true",
                        help="with --graph: the graph the optimizer passes made of it (the "
                             "one that runs), instead of the graph as traced")
    parser.add_argument("--args", default=None, metavar="LITERAL",
                        help="with --graph: the example arguments, a Python literal list "
                             "such as '[27]' or '[[1.0, 2.0], \"mode\"]'; numbers, bools "
                             "and lists become tensors, other values stay Python values")
    return parser


class _UsageError(Exception):
    pass


def _load_module(path):
    """Import the file as Python does when it runs (its directory, or the root of the
    package it is in, on sys.path for the whole command), as a module of its own."""
    if os.path.isdir(path):
        sources = sorted(f for f in os.listdir(path) if f.endswith(".py"))
        example = f", such as {os.path.join(path, sources[0])}" if sources else ""
        raise _UsageError(f"{path} is a folder: give one Python file (PATH.py[::QUALNAME])"
                          f"{example}")
    if not os.path.isfile(path):
        raise _UsageError(f"no such file: {path}")
    if not path.endswith(".py"):
        raise _UsageError(f"{path} is not a Python source file (.py)")
    directory = os.path.dirname(os.path.abspath(path))
    parts = [os.path.splitext(os.path.basename(path))[0]]
    while os.path.isfile(os.path.join(directory, "__init__.py")):   # in a package
        parts.insert(0, os.path.basename(directory))
        directory = os.path.dirname(directory)
    sys.path.insert(0, directory)
    try:
        if len(parts) > 1:
            return importlib.import_module(".".join(parts))     # relative imports work
        name = "autograph_cli_" + parts[0].replace("-", "_")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    except SyntaxError as e:
        raise _FileError(f"{e.filename}:{e.lineno}: {e.msg}") from None
    except Exception as e:  # noqa: BLE001 - the user's module failed to import
        raise _FileError(f"importing {path} raised {type(e).__name__}: {e}"
                         f"{_where_in(e, path)}") from None


class _FileError(Exception):
    """The user's file failed (exit 1), as opposed to a usage error (exit 2)."""


def _where_in(exc, path):
    """' (at FILE:LINE)' for the last frame of `exc` in the file `path`."""
    target = os.path.abspath(path)
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if os.path.abspath(f.filename) == target]
    return f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""


def _lookup(obj, part):
    """`obj.part`; on a class, the attribute as defined (staticmethod objects and all),
    found along the class's MRO (inherited methods too)."""
    if isinstance(obj, type):
        return inspect.getattr_static(obj, part)
    return getattr(obj, part)


def _walk(module, qualname, what):
    obj = module
    for part in qualname.split("."):
        try:
            obj = _lookup(obj, part)
        except AttributeError:
            raise _UsageError(f"no {what} named '{qualname}' in {module.__file__}") from None
    return obj


def _resolve(module, qualname):
    obj = _walk(module, qualname, "function")
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, type) or not (callable(obj) or isinstance(obj, rt.Function)):
        raise _UsageError(f"'{qualname}' in {module.__file__} is not a function")
    return obj


def _converted_functions(module):
    """(qualname, function) for each ag.convert-decorated function defined in the module
    (module level, or methods of its classes, static and class methods included), each
    once, under the name it was defined with."""
    found, seen = [], set()

    def add(name, value):
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if getattr(value, "_ag_converted", False) and id(value) not in seen:
            seen.add(id(value))
            found.append((name, value))

    for name, value in vars(module).items():
        if isinstance(value, type):
            if value.__module__ == module.__name__:
                for attr, member in vars(value).items():
                    add(f"{name}.{attr}", member)
        elif _defined_in(value, module):       # an alias comes after its def: `seen`
            add(name, value)
    return found


def _defined_in(value, module):
    fn = getattr(value, "python_function", value)
    return getattr(fn, "__module__", None) == module.__name__


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
    """The ConcreteFunction of `fn` (converted if it is not already) traced on `args`
    (None: no --args given)."""
    instance = None                    # a bound rt.Function holds its instance weakly
    if "." in qualname:
        owner, _, attr = qualname.rpartition(".")
        cls = _resolve_class(module, owner)
        raw = inspect.getattr_static(cls, attr)
        if isinstance(raw, (staticmethod, classmethod)):
            fn = getattr(cls, attr)                 # no instance: as Class.attr gives it
        else:
            instance = cls()
            fn = fn.__get__(instance, cls)
    if not isinstance(fn, rt.Function):
        fn = api.convert(fn)
    if args is None:
        if fn.input_signature is None:
            _check_needs_no_arguments(qualname, fn)
        args = []
    concrete = fn.get_concrete_function(*args)
    del instance
    return concrete


def _check_needs_no_arguments(qualname, fn):
    """Without --args, `fn` is traced with no arguments: say so if it needs some."""
    try:
        signature = inspect.signature(fn.python_function)
    except (TypeError, ValueError):
        return
    needed = [p.name for p in signature.parameters.values() if p.default is p.empty
              and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if needed:
        example = ", ".join("1.0" for _ in needed)
        raise _UsageError(f"--graph traces {qualname}({', '.join(needed)}) on example "
                          f"arguments: give them with --args, such as --args '[{example}]'")


def _called_functions(qualname, fn):
    """(qualname, function) of the user functions `fn`'s code calls by name, transitively
    (what converted code would convert): functions of their modules, closures, methods of
    the class `qualname` names; each once, `fn` excluded."""
    from autograph import conversion
    options = conversion.ConversionOptions(recursive=True)
    owner = qualname.rpartition(".")[0]
    found, seen = [], {id(fn)}
    pending = [(getattr(fn, "python_function", fn), owner)]
    while pending:
        current, owner = pending.pop(0)
        current = getattr(current, "__func__", current)
        for name, value in _names_used(current, owner):
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if id(value) in seen or conversion._conversion_target(value, options) is None:
                continue
            seen.add(id(value))
            found.append((name, value))
            pending.append((value, name.rpartition(".")[0]))
    return found


def _names_used(fn, owner):
    """(name, value) of the globals, closure cells and (for a method of class `owner`)
    class attributes that `fn`'s code (nested functions and lambdas included) names."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    cells = {name: cell.cell_contents for name, cell in zip(code.co_freevars,
                                                             fn.__closure__ or ())
             if _has_contents(cell)}
    cls = fn.__globals__.get(owner) if owner and "." not in owner else None
    used = []
    for c in _codes(code):
        for name in c.co_names + c.co_freevars:
            if name in cells:
                used.append((name, cells[name]))
            elif isinstance(cls, type) and name in vars(cls):
                used.append((f"{owner}.{name}", inspect.getattr_static(cls, name)))
            elif name in fn.__globals__:
                used.append((name, fn.__globals__[name]))
    return used


def _has_contents(cell):
    try:
        cell.cell_contents                  # noqa: B018 - empty cells raise ValueError
        return True
    except ValueError:
        return False


def _codes(code):
    yield code
    for const in code.co_consts:
        if inspect.iscode(const):
            yield from _codes(const)


def _resolve_class(module, qualname):
    obj = _walk(module, qualname, "class")
    if not isinstance(obj, type):
        raise _UsageError(f"'{qualname}' in {module.__file__} is not a class")
    return obj


def _show_graph(concrete, out, optimized):
    graph = concrete.optimized_graph if optimized else concrete.graph
    if out == "-":
        return f"{graph}\n"
    from runtime import viz
    try:
        viz.render(graph, out)
    except viz.GraphvizNotFound as e:
        raise _UsageError(str(e)) from None
    except (OSError, RuntimeError) as e:
        raise _UsageError(f"cannot write the graph to {out}: {e}".splitlines()[0]) from None
    return f"wrote {out}\n"


def main(argv=None):
    args = _parser().parse_args(argv)
    path, _, qualname = args.target.partition("::")
    try:
        if args.graph is None and args.args is not None:
            raise _UsageError("--args gives the example arguments of --graph")
        if args.graph is None and args.optimized:
            raise _UsageError("--optimized shows the optimized graph of --graph")
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
            shown = set()
            for name, fn in targets:
                called = _called_functions(name, fn) if args.recursive else []
                for shown_name, shown_fn in [(name, fn)] + called:
                    if id(shown_fn) not in shown:
                        shown.add(id(shown_fn))
                        outputs.append(f"# {shown_name}\n{api.to_code(shown_fn).rstrip()}\n")
        if args.graph is not None:
            if len(targets) != 1:
                raise _UsageError(f"--graph traces one function: name it with {path}::NAME")
            name, fn = targets[0]
            example = None if args.args is None else _example_args(args.args)
            concrete = _traced_graph(module, name, fn, example)
            outputs.append(_show_graph(concrete, args.graph, args.optimized))
    except _UsageError as e:
        print(f"autograph: error: {e}", file=sys.stderr)
        return 2
    except _FileError as e:
        print(f"autograph: error: {e}", file=sys.stderr)
        return 1
    except (AutoGraphError, TypeError, ValueError) as e:
        print(f"autograph: error: {e}", file=sys.stderr)
        return 1
    print("\n".join(outputs), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
