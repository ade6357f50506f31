"""Converting functions: parse, run the converters, load the result; and `converted_call`.

`convert(fn, options)` returns a Python function with the same signature whose
control flow calls the operators. The generated code is compiled in memory,
registered with linecache (tracebacks and pdb show it) and with a source map
(errors point at the user's lines). It runs in the original function's globals
and shares its closure cells, so globals, closures and `nonlocal` behave as in
the original. Results are cached per code object and options.
"""
import builtins
import contextlib
import functools
import gc
import inspect
import os
import sys
import sysconfig
import threading
import types
import warnings
import weakref

import gast

import runtime as rt
from runtime import traceback_utils

from autograph import converters as _converters_package  # noqa: F401
from autograph import implicit_calls
from autograph import operators
from autograph.converters import (asserts, break_statements, call_trees,
                                  conditional_expressions, continue_statements, control_flow,
                                  declarations, directives, exceptions, f_strings,
                                  finally_jumps, lists, logical_expressions,
                                  match_statements, return_statements, unsupported)
from autograph.errors import ConversionError
from autograph.pyct import anno
from autograph.pyct import ast_util
from autograph.pyct import loader
from autograph.pyct import naming
from autograph.pyct import origin_info
from autograph.pyct import parser
from autograph.pyct import templates
from autograph.pyct import transformer

traceback_utils.register_internal_dir(os.path.dirname(os.path.abspath(__file__)))

class _ExpressionTransformer(conditional_expressions.ConditionalExpressionTransformer,
                             logical_expressions.LogicalExpressionTransformer,
                             f_strings.FStringTransformer):
    """Converters 14-16 rewrite different nodes (IfExp; BoolOp, not, Compare; JoinedStr)
    and nothing else: one walk of the (by now much larger) tree serves all three."""


def _expressions(node, ctx):
    return _ExpressionTransformer(ctx).visit(node)


PIPELINE = tuple(m.transform for m in (
    directives, declarations, unsupported, exceptions, match_statements, finally_jumps,
    break_statements, continue_statements, return_statements)) + (
    finally_jumps.check_lowered,) + tuple(
    m.transform for m in (asserts, lists, call_trees, control_flow)) + (_expressions,)
# A generator runs as Python (its statements, moved into the functions control flow makes,
# would yield from those): only its calls and strings are converted, so what it prints
# (a graph print) keeps its place among its caller's prints.
GENERATOR_PIPELINE = (asserts.transform, call_trees.transform, f_strings.transform)


class ConversionOptions:
    """How to convert: `recursive` converts the user functions a function calls, too."""

    __slots__ = ("recursive",)

    def __init__(self, recursive=True):
        self.recursive = bool(recursive)

    def __eq__(self, other):
        return isinstance(other, ConversionOptions) and other.recursive == self.recursive

    def __hash__(self):
        return hash(self.recursive)

    def __repr__(self):
        return f"ConversionOptions(recursive={self.recursive})"


# -- the ag__ namespace of generated code ---------------------------------------------------

_namespaces = {}


def namespace_for(options):
    """The object generated code knows as `ag__`: operators + converted_call(options)."""
    ns = _namespaces.get(options)
    if ns is None:
        ns = types.SimpleNamespace(**{name: getattr(operators, name) for name in dir(operators)
                                      if not name.startswith("_")})
        ns.converted_call = functools.partial(converted_call, options=options)
        ns.options = options
        _namespaces[options] = ns
    return ns


# -- transform -----------------------------------------------------------------------------

def transform(node, ctx, pipeline=PIPELINE):
    """Apply the converter pipeline to a parsed function (see converters/__init__.py),
    after `_scan` (which `generate` runs first). (Qualified names are resolved where a
    converter needs them: the control-flow converter's analyses resolve the whole tree.)"""
    for converter in pipeline:
        node = converter(node, ctx)
    return node


class _Converted:
    """A converted code object, its generated source and file, and the name of the free
    variable that holds the operators' namespace."""

    __slots__ = ("code", "source", "filename", "namespace_name")

    def __init__(self, code, source, filename, namespace_name):
        self.code = code
        self.source = source
        self.filename = filename
        self.namespace_name = namespace_name


def _entity_namespace(fn):
    namespace = dict(fn.__globals__)
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                namespace[name] = cell.cell_contents
            except ValueError:
                pass
    return namespace


class _Generated:
    """A converted tree, the name it defines (a generated one: the factory that holds it
    must not shadow a global or free variable of the user's name) and the name its code
    calls the operators by."""

    __slots__ = ("node", "entity_name", "namespace_name", "signature")

    def __init__(self, node, entity_name, namespace_name, signature):
        self.node = node
        self.entity_name = entity_name
        self.namespace_name = namespace_name
        self.signature = signature          # the parameters as written, to show them

    def shown(self):
        """The tree with the parameters' defaults and annotations as written."""
        self.node.args = self.signature
        return self.node


def generate(fn, options):
    """The converted tree of `fn` (a _Generated)."""
    try:
        node, source, filename, lineno = parser.parse_entity_with_origin(fn)
    except (OSError, TypeError, ValueError) as e:      # SourceUnavailableError included
        raise ConversionError(f"cannot read the source of {_describe(fn)}: {e}") from None
    identifiers, node_types = _scan(node, fn, origin_info.annotated_parsed_nodes(
        node, source, filename, lineno, origin_info.CONVERSION_LOCATED))
    if isinstance(node, gast.AsyncFunctionDef):
        raise ConversionError(f"{_describe(fn)} is an async function ({_where(node)}); "
                              f"async def is not supported")
    namespace = _entity_namespace(fn)
    namer = naming.Namer(set(namespace) | identifiers | set(fn.__code__.co_freevars))
    namespace_name = namer.new_symbol(naming.NAMESPACE, ())
    info = transformer.EntityInfo(name=fn.__name__, source_code=source, source_file=filename,
                                  future_features=(), namespace=namespace, code=fn.__code__)
    ctx = transformer.Context(info, namer, options)
    ctx.node_types = node_types
    signature = ast_util.copy_clean(node.args, preserve_annos=templates.PRESERVED_ANNOS)
    _detach_signature(node)
    if isinstance(node, gast.FunctionDef):
        node.name = entity_name = namer.new_symbol(f"ag__{fn.__name__}", ())
    else:
        entity_name = namer.new_symbol("ag__lambda", ())
    pipeline = GENERATOR_PIPELINE if inspect.isgeneratorfunction(fn) else PIPELINE
    with naming.namespace_named(namespace_name):
        node = transform(node, ctx, pipeline)
    return _Generated(node, entity_name, namespace_name, signature)


def _detach_signature(node):
    """Drops what the def statement evaluates when it runs: defaults, annotations and
    decorators. They were evaluated once, when the user's def ran; the converted function
    takes the values from the original (`_instantiate`), and the lambdas, functions and
    classes written in them are none of the converted code."""
    args = node.args
    args.defaults = []
    args.kw_defaults = [None] * len(args.kwonlyargs)
    for param in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if param is not None:
            param.annotation = None
    if isinstance(node, gast.FunctionDef):
        node.decorator_list = []
        node.returns = None
        node.type_params = []


def _scan(fn_node, fn, nodes):
    """One look at every node before conversion (`nodes`: (node, innermost function or
    lambda around it), from origin_info.annotated_nodes, which walks the tree once for
    both): marks the generators and async functions nested in it (a `yield` inside a
    nested function) to run as written and the defs and
    lambdas as the user's (WRITTEN: converters add their own), records the text of
    conditional expressions as written, and returns every name the code uses (generated
    names must differ from all) and the set of its node types (with markers for the
    constructs Context.lacks answers for, see transformer.LoopElse)."""
    names, node_types = set(), set()
    for n, function in nodes:
        n_type = type(n)
        node_types.add(n_type)
        if n_type is gast.Name:
            names.add(n.id)
        elif n_type in _DEFINITIONS:
            names.add(n.name)
            if n_type is not gast.ClassDef:
                anno.setanno(n, anno.Basic.WRITTEN, True)
            if n_type is gast.AsyncFunctionDef and n is not fn_node:
                _leave_unconverted(n)
        elif n_type is gast.Lambda:
            anno.setanno(n, anno.Basic.WRITTEN, True)
        elif n_type is gast.Global or n_type is gast.Nonlocal:
            names.update(n.names)
        elif n_type is gast.IfExp:
            conditional_expressions.record_source_text(n)
        elif n_type is gast.For and n.orelse:
            node_types.add(transformer.LoopElse)
        elif n_type in _TRY_TYPES and n.finalbody:
            node_types.add(transformer.TryFinally)
        elif n_type is gast.AnnAssign and n.value is None:
            node_types.add(transformer.BareAnnotation)
        elif (n_type is gast.Yield or n_type is gast.YieldFrom) and \
                function is not None and function is not fn_node:
            _leave_unconverted(function)
    return names, node_types


def reject_generator(fn):
    """Raises the ConversionError that says `fn`, a generator function, cannot be given
    to `ag.convert` (converted code calls generators with their calls converted only)."""
    node, source, filename, lineno = parser.parse_entity_with_origin(fn)
    yields = [n for n, function in origin_info.annotated_parsed_nodes(
        node, source, filename, lineno, origin_info.CONVERSION_LOCATED)
        if isinstance(n, (gast.Yield, gast.YieldFrom)) and function in (None, node)]
    where = _where(yields[0]) if yields else "?"
    raise ConversionError(f"{_describe(fn)} is a generator (`yield` at {where}); generators "
                          f"cannot be converted to graph code. Return a list or a tensor "
                          f"instead.")


def _leave_unconverted(fn_node):
    """A generator or coroutine runs as written: its statements, moved into the
    functions control flow makes, would yield (or await) from those instead."""
    anno.setanno(fn_node, anno.Basic.SKIP_PROCESSING, True)
    anno.setanno(fn_node, anno.Basic.UNCONVERTED, True)


_DEFINITIONS = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)
_TRY_TYPES = tuple(getattr(gast, n) for n in ("Try", "TryStar") if hasattr(gast, n))


def _where(node):
    origin = anno.getanno(node, anno.Basic.ORIGIN, None)
    return f"{origin.loc.filename}:{origin.loc.lineno}" if origin is not None else "?"


def _describe(fn):
    return f"function '{getattr(fn, '__qualname__', fn)}'"


def _load(fn, generated):
    """Compile the converted node inside a factory taking the operators' namespace and the
    free variables; its code object, named as the user's function."""
    node, entity_name = generated.node, generated.entity_name
    params = [generated.namespace_name] + list(fn.__code__.co_freevars)
    if isinstance(node, gast.Lambda):
        body = templates.replace("entity_name = lam", entity_name=entity_name, lam=node)
        # The statement holding the lambda maps to the lambda's line (the source map
        # follows statements).
        anno.setanno(body[0], anno.Basic.ORIGIN, anno.getanno(node, anno.Basic.ORIGIN, None))
    else:
        body = [node]
    factory = templates.replace(
        """
        def ag__factory(params):
            body
            return entity_name
        """, params=[gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None)
                     for p in params], body=body, entity_name=entity_name)
    module, module_source, filename, source_map = loader.load_gast_with_source_map(factory)
    traceback_utils.register_source_map(filename, {
        line: traceback_utils.Frame(o.loc.filename, o.loc.lineno, o.function_name or fn.__name__)
        for line, o in source_map.items()})
    factory_code = module.ag__factory.__code__
    code_name = "<lambda>" if isinstance(node, gast.Lambda) else entity_name
    inner = [c for c in factory_code.co_consts
             if isinstance(c, types.CodeType) and c.co_name == code_name]
    if len(inner) != 1:
        raise AssertionError(f"expected one converted code object, found {len(inner)}")
    code = _requalified(inner[0], inner[0].co_qualname, fn.__qualname__)
    return _Converted(code.replace(co_name=fn.__name__), module_source, filename,
                      generated.namespace_name)


def _requalified(code, old, new):
    """`code` and the code nested in it with the qualified-name prefix `old` (the
    generated factory's) replaced by `new`."""
    consts = tuple(_requalified(c, old, new) if isinstance(c, types.CodeType) else c
                   for c in code.co_consts)
    qualname = code.co_qualname
    if qualname == old or qualname.startswith(old + "."):
        qualname = new + qualname[len(old):]
    return code.replace(co_consts=consts, co_qualname=qualname)


_cache = {}
_cache_lock = threading.RLock()
_by_function = weakref.WeakKeyDictionary()


def convert(fn, options):
    """The converted version of the plain function or lambda `fn` (cached)."""
    with _cache_lock:
        try:
            return _by_function[fn][options]
        except (KeyError, TypeError):
            pass
        # Equal code objects of two files (the same def in both) are still two sources.
        key = (fn.__code__, fn.__code__.co_filename, options)
        converted = _cache.get(key)
        if converted is None:
            with _room_to_recurse(fn), _gc_paused():
                converted = _load(fn, generate(fn, options))
            implicit_calls.register_generated(converted.filename, options)
            _cache[key] = converted
        if options.recursive:
            implicit_calls.prepare_function(fn)
        new_fn = _instantiate(fn, converted, options)
        try:
            _by_function.setdefault(fn, {})[options] = new_fn
        except TypeError:
            pass
        return new_fn


def _instantiate(fn, converted, options):
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    ag_cell = types.CellType(namespace_for(options))
    closure = tuple(ag_cell if name == converted.namespace_name else cells[name]
                    for name in converted.code.co_freevars)
    new_fn = types.FunctionType(converted.code, fn.__globals__, fn.__name__, fn.__defaults__,
                                closure)
    new_fn.__kwdefaults__ = fn.__kwdefaults__
    new_fn.__annotations__ = dict(fn.__annotations__)
    new_fn.__qualname__ = fn.__qualname__
    new_fn.__doc__ = fn.__doc__
    new_fn.__module__ = fn.__module__
    new_fn.ag_source = converted.source
    return new_fn


def generated_source(fn, options):
    """The code generated for `fn` (the converted function alone, without the loader)."""
    with _cache_lock, _room_to_recurse(fn):
        return parser.unparse(generate(fn, options).shown())


_RECURSION_LIMIT = 20000


@contextlib.contextmanager
def _gc_paused():
    """No cyclic garbage collection while converting: a conversion allocates thousands of
    tree nodes that live until it ends, and collections in the middle of it (about 6% of
    its time) free nothing; the next collection after it frees its cycles (CFGs)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextlib.contextmanager
def _room_to_recurse(fn):
    """The tree walks recurse once per nesting level of the code (a chain of 400 `+` is
    400 levels): more room than Python's default, and a ConversionError naming the
    function, not a RecursionError, beyond it. Conversions hold _cache_lock, so the
    limit is restored by the one that raised it."""
    old = sys.getrecursionlimit()
    if old < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)
    try:
        yield
    except RecursionError:
        code = fn.__code__
        raise ConversionError(
            f"{_describe(fn)} ({code.co_filename}:{code.co_firstlineno}) nests an expression "
            f"or statements too deeply to convert; split it into smaller parts") from None
    finally:
        sys.setrecursionlimit(old)


# -- converted_call ----------------------------------------------------------------------------

_LIBRARY_MODULES = frozenset(("runtime", "autograph", "numpy", "gast", "pytest", "_pytest",
                              "hypothesis", "builtins"))
_STDLIB_DIRS = tuple({os.path.abspath(sysconfig.get_paths()[k]) + os.sep
                      for k in ("stdlib", "platstdlib")})
_warned = set()
_warn_lock = threading.Lock()


def is_library(fn):
    """Library code is called as it is: ours, numpy, the standard library, installed packages."""
    if _is_library_name(getattr(fn, "__module__", None)):
        return True
    code = getattr(fn, "__code__", None)
    return _is_library_file(code.co_filename if code is not None else "")


def is_library_module(name):
    """Whether the module `name` (a class's `__module__`) is library code."""
    if _is_library_name(name):
        return True
    module = sys.modules.get(name)
    return _is_library_file(getattr(module, "__file__", None) or "")


def _is_library_name(module_name):
    root = (module_name or "").partition(".")[0]
    return root in _LIBRARY_MODULES or root in sys.builtin_module_names or \
        root in getattr(sys, "stdlib_module_names", ())


def _is_library_file(filename):
    if not filename:
        return False
    filename = os.path.abspath(filename)
    if os.sep + "site-packages" + os.sep in filename or \
            os.sep + "dist-packages" + os.sep in filename:
        return True
    return filename.startswith(_STDLIB_DIRS)


def is_generated(fn):
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename.startswith("<autograph generated")


def warn_unconverted(fn, reason):
    key = getattr(fn, "__code__", None) or id(fn)
    with _warn_lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(f"AutoGraph could not convert {_describe(fn)} and runs it as it is: "
                  f"{reason}", stacklevel=_user_stacklevel())


def _user_stacklevel():
    """The warnings stacklevel of the innermost caller outside the runtime and compiler."""
    frame, level = sys._getframe(2), 2
    while frame is not None and traceback_utils.map_frame(
            frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name) is None:
        frame, level = frame.f_back, level + 1
    return level


_BUILTIN_METHOD = type("".format)
# Builtins that read their caller's frame (locals, globals) unless given this many
# arguments (None: always); call_trees calls them directly where their name is written.
_FRAME_ARGUMENTS = {builtins.locals: None, builtins.globals: None, builtins.vars: 1,
                    builtins.dir: 1, builtins.eval: 2, builtins.exec: 2}


def converted_call(f, args, kwargs, options=ConversionOptions()):
    """Call `f(*args, **kwargs)` from generated code, converting `f` first if it is user code."""
    kwargs = kwargs or {}
    if f is not builtins.print and not isinstance(f, functools.partial):
        operators.data_structures.check_unpacked(args)    # f(*l): l of run-time length
    if type(f) is _BUILTIN_METHOD and type(f.__self__) is str and \
            f.__name__ in operators.STR_METHOD_OVERRIDES:      # "{:.3f}".format(loss)
        return operators.STR_METHOD_OVERRIDES[f.__name__](f.__self__, *args, **kwargs)
    try:
        override = operators.BUILTIN_OVERRIDES.get(f)
        frame_arguments = _FRAME_ARGUMENTS.get(f, 0)
    except TypeError:            # unhashable callables
        override, frame_arguments = None, 0
    if override is not None:
        method = _user_len_method(f, args, kwargs)
        if method is not None:          # len(obj) calls obj.__len__(), converted too: it may
            return converted_call(method, args, None, options)   # count a tensor list
        return override(*args, **kwargs)
    if frame_arguments is None or len(args) + len(kwargs) < frame_arguments:
        raise ConversionError(
            f"{f.__name__}() called in converted code other than by its name would read "
            f"autograph's frame, not your function's: call it as `{f.__name__}(...)` or "
            f"pass the namespaces it should use")
    if isinstance(f, functools.partial):
        return converted_call(f.func, f.args + tuple(args), {**f.keywords, **kwargs}, options)
    if inspect.ismethod(f) and not inspect.isfunction(f.__func__):
        # types.MethodType(callable, owner): the callable, with the owner first
        return converted_call(f.__func__, (f.__self__,) + tuple(args), kwargs, options)
    generator = _context_manager_generator(f, options)
    if generator is not None:           # @contextlib.contextmanager: its generator converted
        return contextlib.contextmanager(
            lambda *a, **k: converted_call(generator, a, k, options))(*args, **kwargs)
    target = _conversion_target(f, options)
    if target is None:
        if options.recursive and inspect.isclass(f):
            implicit_calls.prepare_type(f)      # its __init__ and operators run converted
        return f(*args, **kwargs)
    fn, bound_self = target
    implicit_calls.prepare_values(args)
    if bound_self is not None:
        implicit_calls.prepare_type(type(bound_self))
    try:
        converted = convert(fn, options)
    except ConversionError as e:
        warn_unconverted(fn, str(e))
        return f(*args, **kwargs)
    if bound_self is not None:
        return converted(bound_self, *args, **kwargs)
    return converted(*args, **kwargs)


_CONTEXT_MANAGER_CODE = contextlib.contextmanager(lambda: None).__code__


def _context_manager_generator(f, options):
    """The generator function behind a `contextlib.contextmanager` function (or method), or
    None."""
    func = f.__func__ if inspect.ismethod(f) else f
    if not options.recursive or getattr(func, "__code__", None) is not _CONTEXT_MANAGER_CODE:
        return None
    generator = getattr(func, "__wrapped__", None)
    if generator is None:
        return None
    return types.MethodType(generator, f.__self__) if inspect.ismethod(f) else generator


def _user_len_method(f, args, kwargs):
    """The user-defined `__len__` that `len(obj)` calls, or None."""
    if f is not len or len(args) != 1 or kwargs:
        return None
    method = getattr(type(args[0]), "__len__", None)
    if not inspect.isfunction(method) or is_library(method):
        return None
    return method


def is_unconverted(f):
    """Whether `f` is marked to run as it is (`ag.do_not_convert`; a method of such a
    function reads the mark through its function)."""
    return getattr(f, "__ag_do_not_convert__", False) is True


def _conversion_target(f, options):
    """(function to convert, bound self or None), or None to call `f` as it is."""
    if not options.recursive:
        return None
    if is_unconverted(f) or isinstance(f, rt.Function):
        return None
    bound_self = None
    if inspect.ismethod(f):
        bound_self, f = f.__self__, f.__func__
    elif not inspect.isfunction(f):
        call = getattr(type(f), "__call__", None)
        if inspect.isclass(f) or not inspect.isfunction(call):
            return None
        bound_self, f = f, call
    f = implicit_calls.original(f)
    if is_generated(f) or is_library(f):
        return None
    if inspect.iscoroutinefunction(f) or inspect.isasyncgenfunction(f):
        return None
    return f, bound_self
