"""Methods Python calls implicitly run converted when converted code triggers them.

Converted code calls functions through `converted_call`, which converts them; but
Python also calls a user class's methods by itself: property getters and setters,
operators (`a + b` calls `__add__`), `obj[i]`, `with obj:` (`__enter__`/`__exit__`),
construction (`__init__`). Those calls never pass through `converted_call`, so a
tensor `if` in a property or a print in `__enter__` would run as written, at trace
time. A user class that converted code can reach is therefore *prepared*: each such
method in its `__dict__` is replaced by a dispatcher that converts the call when its
caller is converted code, and calls the method as written otherwise:

    class Speed:                          Speed.__dict__["magnitude"] is a property whose
        @property                         getter, read in converted code, runs
        def magnitude(self):              converted_call(<magnitude>, (obj,), None)
            if self.v < 0: ...            (read anywhere else: the getter as written)

Which classes: the user classes a converted function's module names (and those in its
closure), those converted code constructs or calls methods of, and the classes of
the objects it passes to calls; with their user base classes. Library classes (ours,
numpy, the standard library, installed packages) are never touched, nor are
functions without source (dataclass-generated ones), generators, or functions marked
`ag.do_not_convert`.
"""
import functools
import inspect
import sys
import threading

_ORIGINAL = "__ag_implicit_original__"

# Called implicitly, but too often or at the wrong time to dispatch (attribute lookup
# itself, finalizers) or class-level hooks that are not methods of an instance.
_NOT_DISPATCHED = frozenset(("__getattribute__", "__del__", "__new__", "__init_subclass__",
                             "__class_getitem__", "__set_name__", "__subclasshook__",
                             "__instancecheck__", "__subclasscheck__", "__hash__"))

_seen_types = set()              # every type looked at (user classes prepared, others not)
_seen_modules = set()            # module namespaces whose classes were prepared (by id)
_lock = threading.RLock()
_callers = {}                    # generated file name -> its ConversionOptions


def register_generated(filename, options):
    """Code of `filename` is converted code (with `options`): implicit calls from it convert."""
    _callers[filename] = options


def original(fn):
    """The user's method behind a dispatcher (`fn` itself otherwise)."""
    return getattr(fn, _ORIGINAL, fn)


def prepare_values(values):
    """Prepares the classes of `values` (objects converted code handles)."""
    for value in values:
        if type(value) not in _seen_types:
            prepare_type(type(value))


def prepare_type(cls):
    """Prepares the user class `cls`, its user base classes and the classes of its module."""
    if cls in _seen_types:
        return
    with _lock:
        for klass in getattr(cls, "__mro__", (cls,)):
            if klass not in _seen_types:
                _seen_types.add(klass)
                if _is_user_class(klass):
                    _prepare_class(klass)
                    module = sys.modules.get(klass.__module__)
                    if module is not None:
                        prepare_namespace(vars(module))


def prepare_function(fn):
    """Prepares the user classes `fn`'s module names and those its closure holds (as
    classes or as the classes of objects)."""
    prepare_namespace(fn.__globals__)
    for cell in fn.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        prepare_type(value if isinstance(value, type) else type(value))


def prepare_namespace(namespace):
    """Prepares the user classes among the values of a module's namespace (once per module)."""
    key = id(namespace)
    if key in _seen_modules:
        return
    with _lock:
        _seen_modules.add(key)
        for value in list(namespace.values()):
            if isinstance(value, type) and value not in _seen_types:
                prepare_type(value)


def _is_user_class(cls):
    from autograph import conversion
    return isinstance(cls, type) and not conversion.is_library_module(cls.__module__)


def _prepare_class(cls):
    for name, member in list(vars(cls).items()):
        replacement = None
        if type(member) is property:
            parts = [_dispatcher(f) for f in (member.fget, member.fset, member.fdel)]
            if parts != [member.fget, member.fset, member.fdel]:
                replacement = property(*parts, member.__doc__)
        elif name.startswith("__") and name.endswith("__") and name not in _NOT_DISPATCHED:
            replacement = _dispatcher(member)
            if replacement is member:
                replacement = None
        if replacement is not None:
            try:
                setattr(cls, name, replacement)
            except (AttributeError, TypeError):
                return                  # a class that refuses it (its metaclass): as written


def _dispatcher(fn):
    """`fn` wrapped to run converted when converted code calls it; `fn` itself when it
    cannot be converted (not a function of the user's with source, or a generator)."""
    if not _convertible(fn):
        return fn

    @functools.wraps(fn)
    def dispatch(*args, **kwargs):
        options = _caller_options(sys._getframe(1))
        if options is None or not options.recursive:
            return fn(*args, **kwargs)
        from autograph import conversion
        return conversion.converted_call(fn, args, kwargs, options)

    setattr(dispatch, _ORIGINAL, fn)
    return dispatch


def _convertible(fn):
    from autograph import conversion
    if not inspect.isfunction(fn) or hasattr(fn, _ORIGINAL):
        return False
    if conversion.is_unconverted(fn) or conversion.is_generated(fn):
        return False
    if fn.__code__.co_filename.startswith("<") or conversion.is_library(fn):
        return False
    return not (inspect.isgeneratorfunction(fn) or inspect.iscoroutinefunction(fn)
                or inspect.isasyncgenfunction(fn))


def _caller_options(frame):
    """The conversion options of the converted code running in `frame`, or None: code
    the user wrote, or the library's. A C function that converted code called through
    `converted_call` (a class, `sorted`) calls from converted_call's frame."""
    code = frame.f_code
    options = _callers.get(code.co_filename)
    if options is None and code is _converted_call_code():
        options = frame.f_locals.get("options")
    return options


@functools.cache
def _converted_call_code():
    from autograph import conversion
    return conversion.converted_call.__code__


def text_of(value, conversion, spec):
    """The text a user class gives `value` (its `__str__`, `__repr__` or `__format__`, run
    converted, so tensors it formats print with the graph's values: a FormattedString),
    or None where the class does not format it (`conversion` as in f-strings: None, "s"
    or "r"; `spec` a format spec)."""
    cls = type(value)
    if cls in _PLAIN_TYPES or conversion not in (None, "s", "r"):
        return None
    if conversion is None:
        method = _user_method(cls, "__format__")
        if method is not None:
            return _call_converted(method, (value, spec))
        if spec:
            return None
    names = ("__repr__",) if conversion == "r" else ("__str__", "__repr__")
    for name in names:
        method = getattr(cls, name, None)
        if name == "__str__" and method is object.__str__:
            continue                # object.__str__ calls __repr__
        method = _user_method(cls, name)
        return None if method is None else _call_converted(method, (value,))
    return None


def formats_itself(value):
    """Whether `value`'s class formats it with a method of the user's (see `text_of`)."""
    cls = type(value)
    return cls not in _PLAIN_TYPES and any(
        _user_method(cls, name) is not None for name in ("__format__", "__str__", "__repr__"))


_PLAIN_TYPES = frozenset((str, int, float, bool, complex, type(None), list, tuple, dict))


def _user_method(cls, name):
    method = original(getattr(cls, name, None))
    return method if _convertible(method) else None


def _call_converted(method, args):
    from autograph import conversion
    return conversion.converted_call(method, args, None)
