"""What a converted `if` or loop carries through a graph: `StatementState`, its one owner.

A tensor `if` traces both branches, a tensor loop its body once, into graph ops whose
inputs and outputs are the statement's *state*: what its bodies may change that the code
after it (or the next iteration, or the loop test) reads. Each piece of state lives in a
*slot*, a place holding a value:

    CellSlot       a closure cell: a local variable of the converted function (the body
                   functions declare it nonlocal, so their closure holds its cell), or a
                   variable of an enclosing function that a helper writes (`nonlocal total`
                   in a function called through a dict)
    GlobalSlot     a module global: declared `global` by the function, or written by a helper
    AttributeSlot  an attribute of an object the bodies reach (`self.count`, `sched.lr`)
    ItemSlot       an item of a dict or list the bodies reach (`d['k']`, `cm[0][1]`)

Two sources decide the slots, each owning what it knows exactly, with no overlap:

1. Static analysis, at conversion (pyct/static_analysis/state.py), owns the plain local
   names: those the bodies assign (themselves, or through local functions they call by
   name) that are live after the statement or into the next iteration. Generated code
   names them in one form, a tuple of names, and the body functions declare them nonlocal
   (or global):

       def if_body():
           nonlocal x
           x = x * 2
       ag__.if_stmt(x > 0, if_body, else_body, ('x',))

   `StatementState.of_names` finds their cells in the bodies' closure.
2. Discovery, at run time, owns everything else, and only a tensor statement pays for it.
   A `Snapshot` records, before a trace, every place the bodies can reach: the cells of
   their closures and of the functions found there (helpers, bound methods, partials), the
   globals they name, the attributes of user objects, the items of lists, tuples and dicts,
   to a bounded depth. After a trace of the bodies (while the graph is built, or the probe
   below), a place that changed and is no slot yet becomes one (`Snapshot.changes`), and the
   statement is traced again with it. Everything reached is restored after each trace.
   Library objects (runtime, numpy, the standard library but for its attribute namespaces
   SimpleNamespace and argparse.Namespace), tensors and variables are not looked into;
   places the converter manages itself (the cells the bodies assign) are state already or
   dead. A statement reaching nothing mutable takes no snapshot.

A loop also needs, before its first trace, the types of the values it will carry where
the values before it do not give them: a variable first assigned in the loop, or holding
None, and lists (do they grow, are they replaced, by what?). Then its body is first
traced once in a scratch graph (the probe), on placeholders standing for the loop's
values; the probe also discovers. The value each slot holds after the probe types it
(`carried_value` in control_flow.py). So a statement is traced once, or twice when
discovery finds state or a loop needs types: never more unless a trace finds state the
one before it did not reach (a write behind a tensor condition that the probe, on Python
values, took the other way).

How slot values are carried (the rules are in control_flow.py):
  tensors and Python numbers      loop variables and cond outputs; numbers stay weakly
                                  typed (a Python float keeps float64 until it meets a
                                  float32 tensor, as eagerly)
  a list whose length changes     a TensorList (rows of one tensor, appended in place as
                                  a Python list is, so a helper's `l.append(x)` is seen)
  a list replaced by another      carried element by element (same length) or as the
                                  tensor replacing it
  tuples, namedtuples, dicts      element by element, rebuilt: an immutable value is made
                                  anew, never assigned into with setattr
  None or no value before a loop  an optional value: a zero of the type the body gives it
  that assigns it                 and a flag saying whether it holds one (`is None` and
                                  checked reads test the flag: a read when the loop never
                                  assigned it fails when the graph runs)
  anything else                   must keep its value (a StagingError names the slot)
"""
import dataclasses
import dis
import sys
import types
import weakref

from runtime.tensor import Tensor
from runtime.variables import Variable

from .data_structures import TensorList
from .variables import Undefined

# -- slots -------------------------------------------------------------------------------------


class Slot:
    """A place holding one value of a statement's state. `label` names it in messages."""

    __slots__ = ("label",)

    def get(self):
        """The value, or Undefined(label) when the place holds none."""
        raise NotImplementedError

    def set(self, value):
        raise NotImplementedError

    def key(self):
        """What identifies the place (two slots with one key are the same place)."""
        raise NotImplementedError

    def __repr__(self):
        return f"<{type(self).__name__} {self.label}>"


class CellSlot(Slot):
    __slots__ = ("cell",)

    def __init__(self, label, cell):
        self.label, self.cell = label, cell

    def get(self):
        try:
            return self.cell.cell_contents
        except ValueError:                      # an empty cell: no value yet
            return Undefined(self.label)

    def set(self, value):
        self.cell.cell_contents = value

    def unbind(self):
        try:
            del self.cell.cell_contents
        except ValueError:
            pass

    def key(self):
        return ("cell", id(self.cell))


class GlobalSlot(Slot):
    __slots__ = ("namespace", "name")

    def __init__(self, label, namespace, name):
        self.label, self.namespace, self.name = label, namespace, name

    def get(self):
        value = self.namespace.get(self.name, _ABSENT)
        return Undefined(self.label) if value is _ABSENT else value

    def set(self, value):
        self.namespace[self.name] = value

    def unbind(self):
        self.namespace.pop(self.name, None)

    def key(self):
        return ("global", id(self.namespace), self.name)


class AttributeSlot(Slot):
    """An attribute in an object's __dict__ (or a __slots__ member): read and written
    directly, as the place it is (never through properties or __setattr__)."""

    __slots__ = ("obj", "attr")

    def __init__(self, label, obj, attr):
        self.label, self.obj, self.attr = label, obj, attr

    def get(self):
        namespace = getattr(self.obj, "__dict__", None)
        if namespace is not None and self.attr in namespace:
            return namespace[self.attr]
        try:
            return object.__getattribute__(self.obj, self.attr)
        except AttributeError:
            return Undefined(self.label)

    def set(self, value):
        namespace = getattr(self.obj, "__dict__", None)
        if type(value) is Undefined:
            if namespace is not None:
                namespace.pop(self.attr, None)
            else:
                _delete_slot_member(self.obj, self.attr)
        elif namespace is not None and self.attr not in _slot_names(type(self.obj)):
            namespace[self.attr] = value
        else:
            object.__setattr__(self.obj, self.attr, value)

    def key(self):
        return ("attr", id(self.obj), self.attr)


class ItemSlot(Slot):
    __slots__ = ("container", "index")

    def __init__(self, label, container, index):
        self.label, self.container, self.index = label, container, index

    def get(self):
        try:
            return self.container[self.index]
        except (KeyError, IndexError):
            return Undefined(self.label)

    def set(self, value):
        if type(value) is Undefined:
            if isinstance(self.container, dict):
                self.container.pop(self.index, None)
            return
        self.container[self.index] = value

    def key(self):
        return ("item", id(self.container), self.index)


def _delete_slot_member(obj, attr):
    try:
        object.__delattr__(obj, attr)
    except AttributeError:
        pass


_ABSENT = object()


# -- the state of one statement -------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class StatementState:
    """The slots a statement carries, outputs first.

    The first `n_outputs` slots are what the statement gives to the code after it (for a
    loop: all). The rest are only reset between the traces of an `if`'s branches (a branch
    reads them first, and the other branch's trace must not leave its value there).
    """

    slots: tuple
    n_outputs: int

    @classmethod
    def of_names(cls, fn, names, n_outputs=None):
        """The state of the plain variables `names`, which the body function `fn` declares
        nonlocal (found in its closure cells) or global."""
        code, closure = fn.__code__, fn.__closure__ or ()
        freevars = code.co_freevars
        slots = []
        for name in names:
            if name in freevars:
                slots.append(CellSlot(name, closure[freevars.index(name)]))
            elif name in code.co_names:
                slots.append(GlobalSlot(name, fn.__globals__, name))
            else:
                raise AssertionError(f"{code.co_name} declares {name!r} neither nonlocal nor "
                                     f"global (internal error: please report it)")
        return cls(tuple(slots), len(slots) if n_outputs is None else n_outputs)

    @property
    def names(self):
        return tuple(slot.label for slot in self.slots)

    def keys(self):
        return {slot.key() for slot in self.slots}

    def values(self):
        return tuple(slot.get() for slot in self.slots)

    def assign(self, values):
        for slot, value in zip(self.slots, values):
            slot.set(value)

    def unbind_undefined(self, values):
        """Leave the variables whose value is Undefined without one (`del x` on every path
        of a tensor `if`): reading them is Python's own UnboundLocalError."""
        for slot, value in zip(self.slots, values):
            if type(value) is Undefined and hasattr(slot, "unbind"):
                slot.unbind()

    def extended(self, slots):
        """This state with the discovered `slots` added as outputs."""
        slots = tuple(slots)
        return StatementState(self.slots[:self.n_outputs] + slots + self.slots[self.n_outputs:],
                              self.n_outputs + len(slots))


# -- discovery: what a trace changed among the places the bodies reach ------------------------

_LIBRARY_ROOTS = frozenset(("runtime", "autograph", "numpy", "builtins", "gast"))
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"types", "functools"}
_OPAQUE = (Tensor, Variable, TensorList, Undefined, type, types.ModuleType,
           types.BuiltinFunctionType, types.CodeType, str, bytes, int, float, complex,
           bool, type(None))
_MAX_DEPTH = 5              # containers and objects looked into below the roots
_MAX_PLACES = 20000         # places recorded by one snapshot


def _is_library(value):
    """Whether `value` is a library's object, not looked into; the standard library's
    attribute namespaces (types.SimpleNamespace, argparse.Namespace) are user records."""
    cls = type(value)
    module = getattr(cls, "__module__", None) or ""
    root = module.partition(".")[0]
    if root not in _LIBRARY_ROOTS and root not in _STDLIB:
        return False
    return not isinstance(value, _namespace_types())


def _namespace_types():
    argparse = sys.modules.get("argparse")        # (not imported here for its sake)
    return (types.SimpleNamespace,) + ((argparse.Namespace,) if argparse else ())


def _slot_names(cls):
    names = []
    for klass in cls.__mro__:
        declared = vars(klass).get("__slots__", ())
        names.extend((declared,) if isinstance(declared, str) else declared)
    return tuple(n for n in names if n not in ("__dict__", "__weakref__"))


class _Container:
    """A mutable container or object recorded by a Snapshot: its contents as they were."""

    __slots__ = ("value", "label", "saved", "holder")

    def __init__(self, value, label, saved, holder):
        self.value, self.label, self.saved, self.holder = value, label, saved, holder


class Snapshot:
    """The places the functions can reach, and their contents before a trace.

    `changes(known)` lists the slots of the places a trace changed that `known` (a set of
    slot keys) does not hold; `restore()` puts everything back.
    """

    def __init__(self):
        self.cells = []             # (CellSlot, value or _ABSENT)
        self.globals = []           # (GlobalSlot, value or _ABSENT)
        self.objects = []           # _Container of a user object, saved: {attr: value}
        self.dicts = []             # _Container of a dict, saved: a copy
        self.lists = []             # _Container of a list, saved: a copy
        self.tensor_lists = []      # _Container of a TensorList, saved: (tensor, weak)
        self._seen = set()
        self._places = 0
        self._mutable = False       # something that may change is recorded

    @classmethod
    def of(cls, functions, managed=()):
        """A snapshot of what `functions` reach, or None when they reach nothing mutable.

        `managed`: names of cells the functions themselves assign (the converter's plain
        variables): their bindings are state already or dead (also where a helper's
        closure holds them); their contents are recorded.
        """
        snapshot = cls()
        managed_cells = {id(cell) for fn in functions
                         for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ())
                         if name in managed}
        walker = _Walker(snapshot, managed_cells)
        for fn in functions:
            walker.function(fn, 0)
        return snapshot if snapshot._mutable else None

    def changes(self, known):
        """[(slot, kind)] of the places changed since the snapshot and not in `known`: kind
        "value" for a place holding another value, "length" for the holder of a list whose
        length changed (the list as a whole is the state)."""
        found, keys = [], set(known)

        def add(slot, kind="value"):
            key = slot.key()
            if key not in keys:
                keys.add(key)
                found.append((slot, kind))

        for slot, before in self.cells + self.globals:
            value = slot.get()
            if not _same_binding(value, before):
                add(slot)
        for entry in self.objects:
            now = _attributes(entry.value)
            for attr in _changed_keys(now, entry.saved):
                add(AttributeSlot(f"{entry.label}.{attr}", entry.value, attr))
        for entry in self.dicts:
            for k in _changed_keys(entry.value, entry.saved):
                add(ItemSlot(f"{entry.label}[{k!r}]", entry.value, k))
        for entry in self.lists:
            now = entry.value
            if len(now) != len(entry.saved):
                if entry.holder is not None:
                    add(entry.holder, "length")
                continue
            for i, (a, b) in enumerate(zip(now, entry.saved)):
                if a is not b:
                    add(ItemSlot(f"{entry.label}[{i}]", now, i))
        for entry in self.tensor_lists:         # grown in place (`l.append(x)` in a helper)
            if entry.value.tensor is not entry.saved[0] and entry.holder is not None:
                add(entry.holder, "length")
        return found

    def restore(self):
        for slot, before in self.cells:
            if before is _ABSENT:
                slot.unbind()
            else:
                slot.set(before)
        for slot, before in self.globals:
            if before is _ABSENT:
                slot.unbind()
            else:
                slot.set(before)
        for entry in self.objects:
            _restore_attributes(entry.value, entry.saved)
        for entry in self.dicts:
            if _changed_keys(entry.value, entry.saved):
                entry.value.clear()
                entry.value.update(entry.saved)
        for entry in self.lists:
            if len(entry.value) != len(entry.saved) or any(
                    a is not b for a, b in zip(entry.value, entry.saved)):
                entry.value[:] = entry.saved
        for entry in self.tensor_lists:
            entry.value.tensor, entry.value.weak = entry.saved


def _same_binding(value, before):
    if value is before:
        return True
    return type(value) is Undefined and before is _ABSENT


def _changed_keys(now, saved):
    keys = [k for k in now if k not in saved or now[k] is not saved[k]]
    keys += [k for k in saved if k not in now]
    return keys


def _attributes(obj):
    namespace = getattr(obj, "__dict__", None)
    values = dict(namespace) if namespace is not None else {}
    for name in _slot_names(type(obj)):
        try:
            values[name] = object.__getattribute__(obj, name)
        except AttributeError:
            pass
    return values


def _restore_attributes(obj, saved):
    now = _attributes(obj)
    for attr in _changed_keys(now, saved):
        slot = AttributeSlot(attr, obj, attr)
        slot.set(saved[attr] if attr in saved else Undefined(attr))


class _Walker:
    """Fills a Snapshot by walking from functions through closures, globals, objects."""

    def __init__(self, snapshot, managed):
        self.snapshot = snapshot
        self.managed = managed
        self.functions = set()

    def function(self, fn, depth):
        code = getattr(fn, "__code__", None)
        if code is None or id(fn) in self.functions or _is_library_function(fn):
            return
        self.functions.add(id(fn))
        # The bindings the body functions themselves (depth 0) may change are their own
        # nonlocals and globals, which the converter knows; a helper's may change too.
        # (Recorded either way: a nested statement may assign what it discovers.)
        helper = depth > 0
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            slot = CellSlot(name, cell)
            value = slot.get()
            if id(cell) not in self.managed:
                self._record(self.snapshot.cells, ("cell", id(cell)), slot,
                             _ABSENT if type(value) is Undefined and _empty(cell) else value,
                             helper)
            self.value(value, name, slot, depth)
        namespace = fn.__globals__
        for name in _global_names(code):
            value = namespace.get(name, _ABSENT)
            if value is _ABSENT or isinstance(value, (types.ModuleType, type)):
                continue
            slot = GlobalSlot(name, namespace, name)
            self._record(self.snapshot.globals, ("global", id(namespace), name), slot, value,
                         helper)
            self.value(value, name, slot, depth)
        for default in (fn.__defaults__ or ()):
            self.value(default, f"{fn.__name__}.__defaults__", None, depth)

    def _record(self, places, key, slot, value, may_change):
        if key in self.snapshot._seen or self.snapshot._places >= _MAX_PLACES:
            return
        self.snapshot._seen.add(key)
        self.snapshot._places += 1
        self.snapshot._mutable |= may_change
        places.append((slot, value))

    def value(self, value, label, holder, depth):
        """Look into `value`, reached through `holder` (a slot, or None: an immutable place)."""
        snapshot = self.snapshot
        if isinstance(value, TensorList) and id(value) not in snapshot._seen:
            self._container(snapshot.tensor_lists, value, label, (value.tensor, value.weak),
                            holder)
            return
        if isinstance(value, _OPAQUE) or depth > _MAX_DEPTH:
            return
        if id(value) in snapshot._seen or snapshot._places >= _MAX_PLACES:
            return
        if isinstance(value, types.FunctionType):
            self.function(value, depth + 1)
            return
        if isinstance(value, types.MethodType):
            self.value(value.__self__, label, None, depth)
            self.function(value.__func__, depth + 1)
            return
        if isinstance(value, list):
            self._container(snapshot.lists, value, label, list(value), holder)
            for i, item in enumerate(value):
                self.value(item, f"{label}[{i}]", ItemSlot(f"{label}[{i}]", value, i),
                           depth + 1)
            return
        if isinstance(value, dict):
            self._container(snapshot.dicts, value, label, dict(value), holder)
            for k, item in list(value.items()):
                self.value(item, f"{label}[{k!r}]", ItemSlot(f"{label}[{k!r}]", value, k),
                           depth + 1)
            return
        if isinstance(value, tuple):
            snapshot._seen.add(id(value))
            fields = getattr(type(value), "_fields", None)
            for i, item in enumerate(value):
                part = f"{label}.{fields[i]}" if fields and i < len(fields) else f"{label}[{i}]"
                self.value(item, part, holder, depth + 1)    # an element of an immutable
            return                                            # value: its holder holds it
        if isinstance(value, (set, frozenset)) or _is_library(value):
            return
        if callable(getattr(value, "func", None)) and hasattr(value, "keywords"):
            self.value(value.func, label, None, depth)      # functools.partial and alike
            self.value(tuple(value.args), label, None, depth)
            return
        attributes = _attributes(value)
        if not attributes and not hasattr(value, "__dict__"):
            return
        self._container(snapshot.objects, value, label, attributes, holder)
        for attr, item in attributes.items():
            self.value(item, f"{label}.{attr}", AttributeSlot(f"{label}.{attr}", value, attr),
                       depth + 1)
        call = getattr(type(value), "__call__", None)
        if isinstance(call, types.FunctionType):
            self.function(call, depth + 1)

    def _container(self, places, value, label, saved, holder):
        self.snapshot._seen.add(id(value))
        self.snapshot._places += 1 + len(saved)
        self.snapshot._mutable = True
        places.append(_Container(value, label, saved, holder))


def _empty(cell):
    try:
        cell.cell_contents
    except ValueError:
        return True
    return False


def _is_library_function(fn):
    module = (getattr(fn, "__module__", None) or "").partition(".")[0]
    return module in _LIBRARY_ROOTS or module in _STDLIB


class _CodeCache:
    """Facts about code objects, by identity (a code object's hash and == look into the
    code nested in it: costly for deeply nested generated code)."""

    def __init__(self):
        self._entries = {}

    def get(self, code):
        entry = self._entries.get(id(code))
        return entry[1] if entry is not None and entry[0]() is code else None

    def put(self, code, value):
        key = id(code)
        ref = weakref.ref(code, lambda dead: self._entries.get(key, (None,))[0] is dead
                          and self._entries.pop(key))
        self._entries[key] = (ref, value)
        return value


_global_names_cache = _CodeCache()


def _global_names(code):
    """The names `code` and the code nested in it use (globals among them)."""
    names = _global_names_cache.get(code)
    if names is None:
        found = set(code.co_names)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                found |= _global_names(const)
        names = _global_names_cache.put(code, frozenset(found))
    return names


_assigned_cells_cache = _CodeCache()
_STORES = frozenset(dis.opmap[name] for name in ("STORE_DEREF", "DELETE_DEREF"))
_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]


def assigned_cells(fn):
    """The free variables (cells) that `fn`'s code, or code nested in it, assigns or
    deletes: for generated body functions, the converter's own variables."""
    return _stored_derefs(fn.__code__)


def _stored_derefs(code):
    names = _assigned_cells_cache.get(code)
    if names is not None:
        return names
    found = set()
    if hasattr(code, "_varname_from_oparg"):
        raw, arg = code.co_code, 0
        for i in range(0, len(raw), 2):
            op = raw[i]
            if op == _EXTENDED_ARG:
                arg = (arg | raw[i + 1]) << 8
                continue
            if op in _STORES:
                found.add(code._varname_from_oparg(arg | raw[i + 1]))
            arg = 0
    else:
        found = {i.argval for i in dis.get_instructions(code) if i.opcode in _STORES}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _stored_derefs(const)
    return _assigned_cells_cache.put(code, frozenset(found))

