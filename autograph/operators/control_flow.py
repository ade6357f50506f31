"""Run-time dispatch of converted `if`, `while`, `for` and conditional expressions.

Generated code passes the statement's pieces as functions:

    ag__.if_stmt(x > 0, if_body, else_body, get_state, set_state, ('x',))

`get_state()` returns the current values of the symbols the statement modifies
and that are used later (its state, named by the tuple); `set_state(values)`
assigns them. When the state is plain variables, generated code passes None for
both: the body function declares each `nonlocal` (or `global`), and its closure
cells (or globals) are the variables themselves (`closure_state`). A Python
value or an eager tensor as the condition runs the plain Python statement; a
symbolic tensor builds `rt.cond` / `rt.while_loop`, tracing each body once with
the state as its inputs and outputs.
"""
import collections
import contextlib
import re
import sys
import threading
import types

import numpy as np

import runtime as rt
from runtime import control_flow as rt_cf
from runtime import data as rt_data
from runtime import dtypes
from runtime import nest
from runtime import trace_warnings
from runtime import traceback_utils
from runtime.errors import loop_limit_exceeded
from runtime.ops import logging_ops
from runtime.ops import registry
from runtime.tensor import SymbolicTensor, Tensor

from ..errors import StagingError, is_user_error, mark_user_error, staging_error
from .data_structures import TensorList, check_list_element
from .variables import Undefined, UndefinedReturnValue, is_undefined

__all__ = ["if_stmt", "while_stmt", "for_stmt", "if_exp", "is_symbolic"]

_NUMBERS = (bool, int, float, np.generic)


def is_symbolic(value):
    """True for values known only when a graph runs (symbolic tensors, graph variables)."""
    if isinstance(value, SymbolicTensor):
        return True
    if isinstance(value, rt.Variable):
        return not rt.executing_eagerly()
    return False


class _Tracing(threading.local):
    depth = 0          # how many tensor branches / loop bodies are being traced


_tracing = _Tracing()


def truth(value):
    """A symbolic value as a condition: bool tensors as they are, other scalars as
    Python's truth test (`x != 0`), as `if x:` does eagerly."""
    if isinstance(value, rt.Variable):
        value = value.read_value()
    if value.dtype.is_bool:
        return value
    if value.shape.rank not in (0, None):
        raise staging_error(
            f"the truth value of a tensor of shape {value.shape} is ambiguous (as for a "
            f"numpy array); use rt.reduce_any or rt.reduce_all", skip=3)
    return rt.not_equal(value, rt.zeros([], value.dtype))


def _user(fn):
    """Wrap a body traced into graph control flow: count the nesting, and mark the
    user's own exceptions so they are not mistaken for staging errors."""
    def call(*args):
        _tracing.depth += 1
        try:
            return fn(*args)
        except RecursionError as e:
            if _tracing.depth == 1:     # the outermost traced body: room to explain
                raise _recursion_while_tracing(e) from None
            raise
        except Exception as e:
            raise mark_user_error(e)
        finally:
            _tracing.depth -= 1
    return call


def _recursion_while_tracing(exc):
    """A StagingError for a RecursionError raised while tracing tensor control flow: most
    likely a function calling itself under a tensor condition, which tracing follows into
    both branches forever."""
    frames = traceback_utils.map_traceback(exc.__traceback__)
    calls = [f for f in frames if not f.line().startswith("def ")] or frames
    # The repeated call: preferably a line calling a function that recurs (statements
    # the compiler adds map to the `def` line; the `if` deciding it recurs as often).
    counts = collections.Counter(calls)
    recurring = {f.name for f, n in counts.items() if n > 1}
    calling = [f for f in calls if any(f"{name}(" in f.line() for name in recurring)]
    site = ""
    if calls:
        frame = collections.Counter(calling or calls).most_common(1)[0][0]
        site = f" (recursing at {frame.short()}: `{frame.line()}`)"
    return staging_error(
        f"maximum recursion depth exceeded while tracing a tensor `if` or loop{site}. A "
        f"function that calls itself where a tensor condition decides whether to recurse "
        f"never reaches its base case while tracing: both branches are traced, the "
        f"recursive call included, with the condition unknown. Make the recursion depth a "
        f"Python value, or write the recursion as a loop (a tensor `while`).", skip=3)


def unsupported_in_tensor_control_flow(construct, advice):
    """Raise if called while tracing the body of a graph cond/loop (placed by the compiler)."""
    if _tracing.depth:
        raise staging_error(f"`{construct}` is not supported inside a tensor `if` or loop: "
                            f"{advice}", skip=2)


def _staging_check(construct, fn, *args, **kwargs):
    """Call rt.cond/rt.while_loop; their own checks become StagingErrors at the user's line."""
    try:
        return fn(*args, **kwargs)
    except (ValueError, TypeError) as e:
        if is_user_error(e) or isinstance(e, StagingError):
            raise
        message = str(e)
        for prefix in ("cond: ", "while_loop: "):
            if message.startswith(prefix):
                message = message[len(prefix):]
        raise staging_error(f"{construct}: {message}", skip=3) from None


def _to_graph_value(value):
    """A value as rt.cond / rt.while_loop carry it (tensor lists as their stacked tensor)."""
    return nest.map_structure(lambda v: v.stack() if isinstance(v, TensorList) else v, value)


def _from_graph_value(value, like):
    """Undo `_to_graph_value` given the value the symbol had before the statement."""
    if isinstance(like, TensorList) and isinstance(value, Tensor):
        return TensorList(value, like.name, like.weak)
    if nest.is_nested(like) and nest.is_nested(value) and nest.same_structure(like, value):
        return nest.map_structure(_from_graph_value, value, like)
    return value


# -- state -------------------------------------------------------------------------------------

def closure_state(fn, symbol_names):
    """(get_state, set_state) for the plain variables `symbol_names`, which the body
    function `fn` declares nonlocal (read and written through its closure cells) or
    global. A variable without a value reads as Undefined(name), as `ag__.ldu` does."""
    code = fn.__code__
    freevars = code.co_freevars
    closure = fn.__closure__ or ()
    slots = []
    for name in symbol_names:
        if name in freevars:
            slots.append(closure[freevars.index(name)])
        elif name in code.co_names:
            slots.append(name)
        else:
            raise AssertionError(f"{code.co_name} declares {name!r} neither nonlocal nor "
                                 f"global (internal error: please report it)")
    namespace = fn.__globals__
    pairs = tuple(zip(symbol_names, slots))

    def get_state():
        values = []
        for name, slot in pairs:
            if type(slot) is str:
                value = namespace.get(slot, _MISSING)
                values.append(Undefined(name) if value is _MISSING else value)
            else:
                try:
                    values.append(slot.cell_contents)
                except ValueError:                      # an empty cell: no value yet
                    values.append(Undefined(name))
        return tuple(values)

    def set_state(values):
        for (_, slot), value in zip(pairs, values):
            if type(slot) is str:
                namespace[slot] = value
            else:
                slot.cell_contents = value

    def unbind(values):
        """Leave the variables whose value is Undefined without one (`del x` on every
        path of a tensor `if`): reading them is Python's own UnboundLocalError."""
        for (_, slot), value in zip(pairs, values):
            if type(value) is not Undefined:
                continue
            if type(slot) is str:
                namespace.pop(slot, None)
            else:
                try:
                    del slot.cell_contents
                except ValueError:
                    pass

    set_state.unbind = unbind

    return get_state, set_state


_MISSING = object()


def _accessors(fn, get_state, set_state, symbol_names):
    if get_state is None:
        return closure_state(fn, symbol_names)
    return get_state, set_state


# -- if ---------------------------------------------------------------------------------------

def as_condition(value):
    """`value` as `if value:` tests it: a tensor list (a list grown in a graph loop) is
    true when it has elements (a tensor when its length is known only at run time)."""
    if isinstance(value, TensorList):
        n = value.length()
        return n > 0 if isinstance(n, int) else rt.greater(n, 0)
    return value


def if_stmt(cond, body, orelse, get_state, set_state, symbol_names, n_outputs=None):
    """`if cond: body() else: orelse()`, as a graph cond when `cond` is symbolic.

    The first `n_outputs` symbols (all by default) are what the statement gives to the
    code after it; the rest are only reset to their values before the statement
    between the traces of the two branches.
    """
    cond = as_condition(cond)
    if is_symbolic(cond):
        get_state, set_state = _accessors(body, get_state, set_state, symbol_names)
        names = list(symbol_names)
        if n_outputs is None or n_outputs == len(names):
            # Attributes the branches' calls assign (`acc.add(x)`) are outputs too.
            found = _object_state([body, orelse], [body, orelse], get_state, set_state,
                                  names)
            if found:
                get_state, set_state, names = _with_object_state(get_state, set_state,
                                                                 names, found)
            n_outputs = len(names)
        _tensor_if(truth(cond), body, orelse, get_state, set_state, tuple(names), n_outputs)
    elif cond:
        body()
    else:
        orelse()


def _tensor_if(cond, body, orelse, get_state, set_state, symbol_names, n_outputs):
    init = get_state()
    undefined_in_true = set()

    def branch(fn, which):
        def traced():
            set_state(_fresh(init))     # each branch starts from its own copy of lists
            try:
                _user(fn)()
            except UnboundLocalError as e:     # (ag__.ld's: `name` says which variable)
                if e.name not in symbol_names:
                    raise
                frames = traceback_utils.map_traceback(e.__traceback__)
                raise StagingError(
                    f"{_quoted(e.name)} is read in the {which} branch of a tensor "
                    f"`if`, where it has no value yet (it is assigned only in the other "
                    f"branch, or later in a loop around it). A graph runs both branches' "
                    f"code, so it needs a value before the `if`: assign it before the "
                    f"`if` (or before the loop)",
                    frames[-1] if frames else None) from None
            values = list(get_state())
            undefined = {n for n, v in zip(symbol_names[:n_outputs], values)
                         if type(v) is Undefined}
            if which == "true":
                undefined_in_true.update(undefined)
            else:
                _check_defined_in_both(undefined_in_true, undefined)
            for i in range(n_outputs, len(values)):      # nothing reads these afterwards
                if type(values[i]) is Undefined:
                    values[i] = UndefinedReturnValue()
            return tuple(_to_graph_value(v) for v in values)
        return traced

    outs = _staging_check("tensor `if`", rt_cf.cond_with_names, cond,
                          branch(body, "true"), branch(orelse, "false"),
                          names=_display_names(symbol_names), missing=_is_missing_return)
    final = tuple(_unless_unchanged(_from_graph_value(v, like), like)
                  for v, like in zip(outs, init))
    set_state(final)
    unbind = getattr(set_state, "unbind", None)
    if unbind is not None:
        unbind(final)


def _fresh(values):
    """The state with Python lists and dicts copied, so one branch cannot see the other's
    in-place changes (`l.append(x)` in the true branch)."""
    return tuple(type(v)(v) if type(v) in (list, dict) else v for v in values)


def _unless_unchanged(value, like):
    """`like` itself if `value` is a copy of it (`_fresh`) that no branch changed: the
    object keeps its identity, as in Python (a tensor loop around the `if` checks it)."""
    if type(value) is list and type(like) is list and len(value) == len(like):
        same = all(a is b for a, b in zip(value, like))
    elif type(value) is dict and type(like) is dict and value.keys() == like.keys():
        same = all(value[k] is like[k] for k in like)
    else:
        return value
    return like if same else value


def _is_missing_return(value):
    return type(value) is UndefinedReturnValue


# The flags and slots the jump converters make, by what errors should call them.
_GENERATED = re.compile(r"(retval_|do_return|break_|continue_)(_\d+)?$")
_MEANING = {"retval_": "the return value", "do_return": "whether the function has returned",
            "break_": "whether the loop has broken out",
            "continue_": "whether the iteration has continued"}


def _display_names(names):
    """State names for error messages: what a compiler-made symbol stands for (has
    spaces: the runtime prints it unquoted), the user's names as they are."""
    out = []
    for name in names:
        match = _GENERATED.match(name)
        out.append(_MEANING[match.group(1)] if match else name)
    return out


def _quoted(name):
    """A state symbol's name quoted; what a compiler-made one stands for as it is."""
    name = _display_names([name])[0]
    return name if " " in name else f"'{name}'"


def _check_defined_in_both(undefined_in_true, undefined_in_false):
    only = undefined_in_true ^ undefined_in_false
    if not only:
        return
    name = sorted(only)[0]
    defined_in, other = ("false", "true") if name in undefined_in_true else ("true", "false")
    raise staging_error(
        f"'{name}' is assigned in the {defined_in} branch of a tensor `if` but not in the "
        f"{other} branch, and it is used after the `if`. In a graph both branches must give "
        f"it a value: assign '{name}' before the `if` or in both branches.", skip=4)


# -- conditional expression ---------------------------------------------------------------------

def if_exp(cond, if_true, if_false, expr_repr):
    """`if_true() if cond else if_false()`, as a graph cond when `cond` is symbolic."""
    cond = as_condition(cond)
    if is_symbolic(cond):
        return _staging_check(f"conditional expression `{expr_repr}`", rt_cf.cond_with_names,
                              truth(cond), _user(if_true), _user(if_false))
    return if_true() if cond else if_false()


# -- while -----------------------------------------------------------------------------------

def while_stmt(test, body, get_state, set_state, symbol_names, opts=None):
    """`while test(): body()`; a graph loop once the condition is symbolic.

    A condition that becomes a tensor after some Python iterations turns the rest
    of the loop into a graph loop, starting from the state reached so far. Iterations
    on an eager tensor condition count against rt.config's loop iteration limit
    (Python-valued conditions never do).
    """
    cond = as_condition(test())
    limit = rt.config.get_loop_iteration_limit()
    tensor_iterations = 0
    python_body = trace_warnings.counting_iterations(body)  # warns if it unrolls a lot
    while not is_symbolic(cond):
        if not cond:
            return
        if limit is not None and isinstance(cond, (Tensor, rt.Variable)):
            if tensor_iterations == limit:
                raise loop_limit_exceeded(limit, traceback_utils.user_frame(2))
            tensor_iterations += 1
        python_body()
        cond = as_condition(test())
    get_state, set_state = _accessors(body, get_state, set_state, symbol_names)
    _tensor_loop(test, body, get_state, set_state, symbol_names, opts)


class _FirstAssignedInLoop:
    """Initial value of a symbol first assigned inside a tensor loop.

    The loop carries a zero of the type the body assigns (found by tracing the
    body once in a scratch graph) and, for user variables, a flag saying whether
    the body ran: reading the symbol after a loop that ran zero times fails at
    run time, as it would in Python.
    """

    __slots__ = ("name", "zero", "is_return")

    def __init__(self, name, zero, is_return):
        self.name = name
        self.zero = zero
        self.is_return = is_return


_LOOP_LEAVES = (Tensor, rt.Variable, TensorList) + _NUMBERS


def _carried(value):
    """Whether loop state of this value becomes a loop variable of the graph loop:
    tensors, numbers, tensor lists, and tuples/lists/dicts of them."""
    if isinstance(value, _FirstAssignedInLoop):
        return True
    leaves = nest.flatten(value)
    return bool(leaves) and all(isinstance(v, _LOOP_LEAVES) for v in leaves)


def _tensor_loop(test, body, get_state, set_state, symbol_names, opts, prefix=()):
    """rt.while_loop over the loop state, after `prefix` loop variables of a `for`.

    `test(*prefix)` and `body(*prefix)` see the state through get/set_state; the
    body returns the next prefix values.
    """
    names = list(symbol_names)
    found = _object_state([body], [body, test], get_state, set_state, names, prefix)
    if found:
        get_state, set_state, names = _with_object_state(get_state, set_state, names, found)
    # (the probe's prefix values are tensors, as in the loop: never Python values; weak
    # where the loop's are, standing for the Python number they start from)
    init = _initial_state(list(get_state()), names,
                          lambda: body(*[_probe_tensor(p) for p in prefix]),
                          get_state, set_state)
    carried = [i for i, v in enumerate(init) if _carried(v)]
    flagged = [i for i in carried
               if isinstance(init[i], _FirstAssignedInLoop) and not init[i].is_return]
    n_pre, n_car = len(prefix), len(carried)

    def state_of(loop_values):
        values = list(init)
        for i, v in zip(carried, loop_values):
            values[i] = _from_graph_value(v, init[i])
        return tuple(values)

    def cond_fn(*loop_values):
        set_state(state_of(loop_values[n_pre:n_pre + n_car]))
        result = _user(test)(*loop_values[:n_pre])
        return truth(result) if is_symbolic(result) else result

    def body_fn(*loop_values):
        set_state(state_of(loop_values[n_pre:n_pre + n_car]))
        next_prefix = _user(body)(*loop_values[:n_pre]) or ()
        values = get_state()
        _check_unchanged(values, init, carried, names)
        return (tuple(next_prefix) + tuple(_to_graph_value(values[i]) for i in carried)
                + (True,) * len(flagged))

    loop_vars = (tuple(prefix) + tuple(_initial_graph_value(init[i]) for i in carried)
                 + (False,) * len(flagged))
    loop_names = ([f"<iteration {k}>" for k in range(n_pre)]
                  + _display_names([names[i] for i in carried])
                  + [f"<{names[i]} assigned>" for i in flagged])
    invariants = _invariants(opts, init, carried, n_pre, len(flagged))
    outs = list(_staging_check(
        "tensor loop", rt_cf.while_loop_with_names, cond_fn, body_fn, loop_vars,
        shape_invariants=invariants, maximum_iterations=(opts or {}).get("maximum_iterations"),
        names=loop_names, adapt_numbers=True))
    final = list(state_of(outs[n_pre:n_pre + n_car]))
    for i, flag in zip(flagged, outs[n_pre + n_car:]):
        final[i] = _assert_assigned(flag, final[i], names[i])
    set_state(tuple(final))
    return outs[:n_pre]


def _initial_graph_value(value):
    if isinstance(value, _FirstAssignedInLoop):
        return _to_graph_value(value.zero)
    return _to_graph_value(value)


def _same(now, before):
    """The same value: the same object, or an equal non-tensor (a property may build a new
    but equal object each time it is read, `x.shape`)."""
    if now is before:
        return True
    if type(now) is not type(before) or isinstance(now, (Tensor, rt.Variable, TensorList)):
        return False
    try:
        return bool(now == before)
    except Exception:  # noqa: BLE001 - objects with odd __eq__ count as different
        return False


def _check_unchanged(values, init, carried, names):
    carried = set(carried)
    graph = rt.get_default_graph()
    for i, (now, before) in enumerate(zip(values, init)):
        if i in carried:
            continue
        if _same(now, before):
            if isinstance(now, (dict, list)) and any(
                    isinstance(leaf, SymbolicTensor) and leaf.graph is graph
                    for leaf in nest.flatten(now)):
                raise staging_error(
                    f"{_quoted(names[i])} is a Python {type(now).__name__} without tensors "
                    f"before a tensor loop, and the loop puts values computed in it into "
                    f"it; a graph loop can only change what it carries from the start: "
                    f"give {_quoted(names[i])} its entries (tensors) before the loop",
                    skip=4)
            continue
        if is_undefined(before) and is_undefined(now):
            continue
        raise staging_error(
            f"{_quoted(names[i])} holds {_kind(before)} and is changed inside a tensor loop; only "
            f"tensors (and numbers, which become tensors) can change in a graph loop",
            skip=4)


def _kind(value):
    if is_undefined(value):
        return "no value"
    return "None" if value is None else f"a Python {type(value).__name__}"


def _invariants(opts, init, carried, n_pre, n_flags):
    """Shape invariants per loop variable: from set_loop_options, and [None, ...] for lists."""
    given = {}
    pairs = (opts or {}).get("shape_invariants") or ()
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise staging_error(
                f"set_loop_options: shape_invariants is a list of (variable, shape) pairs, "
                f"such as [(v, [None, 3])]; it holds {pair!r:.80}", skip=5)
    names = (opts or {}).get("shape_invariant_names") or ()
    for k, (var, shape) in enumerate(pairs):
        for i, value in enumerate(init):
            if value is var:
                given[i] = rt.TensorShape(shape)
                break
        else:
            what = f"'{names[k]}' ({var!r:.80})" if k < len(names) else f"{var!r:.80}"
            raise staging_error(f"set_loop_options: a shape invariant names {what}, which is "
                                f"not a variable this loop changes; give invariants only "
                                f"for the loop's variables", skip=5)
    out = [None] * n_pre
    for i in carried:
        value = init[i]
        default = _default_invariant
        if isinstance(value, _FirstAssignedInLoop):
            # Its value before the loop is a stand-in, not the user's: its shape may be
            # whatever each iteration assigns (only the rank stays).
            value, default = value.zero, _relaxed_invariant
        if i in given:
            out.append(given[i])
        else:
            out.append(nest.map_structure(default, value))
    out += [None] * n_flags
    return out if any(s is not None for s in nest.flatten(out)) else None


def _relaxed_invariant(value):
    shape = _default_invariant(value)
    return rt.TensorShape(None if shape.rank is None else [None] * shape.rank)


def _default_invariant(value):
    """A tensor list may grow; anything else keeps its shape (None: the initial shape)."""
    if isinstance(value, TensorList):
        return value.growing_shape()
    if isinstance(value, (Tensor, rt.Variable)):
        return value.shape
    return rt.TensorShape([])


# -- attributes of the caller's objects that the body changes ------------------------------
# `while clock.t < end: clock.tick()`: tick() assigns clock.t, which the converter cannot
# see (the assignment is in another function). The objects the body can reach through its
# closure (its free variables, their attributes, the elements of lists and dicts there)
# are compared before and after a scratch trace of the body: what it changed is loop state.

_LIBRARY_ROOTS = frozenset(("runtime", "autograph", "numpy", "builtins", "gast"))


def _user_object(value):
    cls = type(value)
    if isinstance(value, (Tensor, rt.Variable, TensorList, type, types.ModuleType,
                          types.FunctionType, types.MethodType, types.BuiltinFunctionType)):
        return False
    module = (getattr(cls, "__module__", None) or "").partition(".")[0]
    return (module not in _LIBRARY_ROOTS and module not in _STDLIB
            and hasattr(value, "__dict__"))


_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"types", "functools"}


def _reachable_objects(functions):
    """[(label, object)] of user objects reachable from the functions' closures: the free
    variables, one level of their attributes, and elements of lists, tuples and dicts."""
    found, seen = [], set()

    def add(label, value, depth):
        if isinstance(value, (list, tuple)) and depth:
            for k, item in enumerate(value[:64]):
                add(f"{label}[{k}]", item, depth - 1)
            return
        if isinstance(value, dict) and depth:
            for key, item in list(value.items())[:64]:
                add(f"{label}[{key!r}]", item, depth - 1)
            return
        if not _user_object(value) or id(value) in seen:
            return
        seen.add(id(value))
        found.append((label, value))
        if depth:
            for attr, item in list(vars(value).items()):
                add(f"{label}.{attr}", item, depth - 1)

    functions, seen_functions = list(functions), set()
    while functions:
        fn = functions.pop()
        code, closure = getattr(fn, "__code__", None), getattr(fn, "__closure__", None)
        if code is None or not closure or id(fn) in seen_functions:
            continue
        seen_functions.add(id(fn))
        for name, cell in zip(code.co_freevars, closure):
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if isinstance(value, types.FunctionType):
                functions.append(value)         # the generated body inside a wrapper
            else:
                add(name, value, 2)
    return found


def _object_state(bodies, reach, get_state, set_state, names, prefix=()):
    """[(label, object, attribute)] that the functions `bodies` (a loop body; an `if`'s
    branches) change on the objects the functions `reach` can reach: found by tracing each
    once in a scratch graph, everything restored after; minus what the state names."""
    if getattr(_tracing, "discovering", False):
        return []           # (inside another statement's discovery trace: it finds them)
    objects = _reachable_objects(reach)
    if not objects:
        return []
    before = [(label, obj, dict(vars(obj))) for label, obj in objects]
    init = tuple(get_state())
    changed = {}
    for body in bodies:
        _tracing.discovering = True
        try:
            with _scratch_trace(init, names, set_state):
                _user(body)(*[_probe_tensor(p) for p in prefix])
        except Exception:  # noqa: BLE001 - the real trace reports it properly
            pass
        finally:
            _tracing.discovering = False
            for label, obj, saved in before:
                now = vars(obj)
                for attr in set(now) | set(saved):
                    if now.get(attr, _ABSENT) is not saved.get(attr, _ABSENT):
                        changed.setdefault(f"{label}.{attr}", (obj, attr))
                now.clear()
                now.update(saved)
    known = set(names)
    return [(label, obj, attr) for label, (obj, attr) in sorted(changed.items())
            if label not in known]


_ABSENT = object()


def _with_object_state(get_state, set_state, names, found):
    """get_state/set_state/names extended by the attributes `found` (_object_state)."""
    n = len(names)

    def get_all():
        return tuple(get_state()) + tuple(
            vars(obj).get(attr, Undefined(label)) for label, obj, attr in found)

    def set_all(values):
        set_state(tuple(values[:n]))
        for (label, obj, attr), value in zip(found, values[n:]):
            if type(value) is Undefined:
                vars(obj).pop(attr, None)
            else:
                setattr(obj, attr, value)

    return get_all, set_all, list(names) + [label for label, _, _ in found]


def _probe_tensor(value):
    """A loop prefix value (the counter) as the probe sees it: a placeholder, as in the
    loop (a constant 0 would make `t[i]` of a tensor of static length 0 an error)."""
    return _stand_in(value, rt.get_default_graph())


def _initial_state(init, names, probe_body, get_state, set_state):
    """Typed initial values for a graph loop.

    Python lists the body grows or shrinks become tensor lists; one it only replaces by
    a list of the same length (`acc = [a + g for a, g in zip(acc, grads)]`) stays a list,
    carried element by element. Symbols without a value, and empty lists, get the type
    the body gives them. All this is learned by tracing the body once in a scratch graph.
    """
    unknown = [i for i, v in enumerate(init) if is_undefined(v) or isinstance(v, list)]
    fixed_lists = any(isinstance(v, list) and v for v in init)
    probed = None
    if fixed_lists:
        try:                                # lists as lists: which keep their length?
            probed = _probe(init, probe_body, get_state, set_state, names, lists=True)
        except (StagingError, TypeError, ValueError, IndexError):
            fixed_lists = False             # (a branch pops, say): tensor lists all
    if probed is None and unknown:
        probed = _probe(init, probe_body, get_state, set_state, names)
    out = list(init)
    for i, value in enumerate(init):
        if isinstance(value, list):
            if fixed_lists and value and type(probed[i]) is list and \
                    len(probed[i]) == len(value):
                continue                    # a list of fixed length: a nested structure
            if value:
                out[i] = TensorList.from_list(value, names[i])
            else:
                sample = probed[i]
                if isinstance(sample, _ProbeList) and sample.element is not None:
                    out[i] = TensorList.empty_like(sample.element, names[i])  # appended to
        elif is_undefined(value):
            assigned = probed[i]
            if is_undefined(assigned):
                continue          # not assigned by the body either
            out[i] = _FirstAssignedInLoop(names[i], _typed_zero(assigned, names[i]),
                                          type(value) is UndefinedReturnValue)
    return out


@contextlib.contextmanager
def _scratch_trace(init, names, set_state, lists=False):
    """A scratch graph in which the state `init` holds symbolic stand-ins (as in a graph
    loop, where every iteration's values are unknown); the state is restored after.
    Non-empty lists stand in as lists (`lists`) or tensor lists."""
    scratch = rt.Graph("probe", outer_graph=rt.get_default_graph())
    try:
        with scratch.as_default():
            set_state(tuple(_stand_in(v, scratch, name, lists)
                            for v, name in zip(init, names)))
            yield
    finally:
        set_state(tuple(init))


def _probe(init, probe_body, get_state, set_state, names, lists=False):
    """Run the body once in a scratch trace and return the state it leaves."""
    with _scratch_trace(init, names, set_state, lists):
        _user(probe_body)()
        return list(get_state())


class _ProbeList:
    """Stands for an empty list during the probe: it records the first element appended
    and otherwise stays the same object (so probed branches agree on it)."""

    def __init__(self, name="list"):
        self.element = None
        self.name = name

    def append(self, element):
        check_list_element(element, self.name)
        if self.element is None:
            self.element = element

    def extend(self, items):
        for item in items:
            self.append(item)

    def __iadd__(self, items):
        self.extend(items)
        return self

    __add__ = __iadd__

    def insert(self, i, element):
        self.append(element)

    def pop(self, i=None):
        if self.element is None:
            raise IndexError("pop from empty list")
        return self.element

    def __len__(self):
        return 0

    def __iter__(self):
        return iter(())


def _stand_in(value, graph, name="list", lists=False):
    """A placeholder shaped like a loop-state value; lists as the loop may carry them."""
    if isinstance(value, list):
        if not value:
            return _ProbeList(name)
        if not lists:
            return TensorList.from_list(value, name)
        return [_stand_in(v, graph, name) for v in value]   # grown in place if appended to
    if nest.is_nested(value):
        return nest.map_structure(lambda v: _stand_in(v, graph, name, lists), value)
    if isinstance(value, (Tensor, rt.Variable) + _NUMBERS):
        t = value.read_value() if isinstance(value, rt.Variable) else \
            registry.convert_to_tensor(value)
        op = graph.create_op(registry.get("placeholder"), [],
                             {"shape": t.shape.dims, "dtype": t.dtype}, [(t.shape, t.dtype)],
                             name="probe")
        # A Python number (or a tensor standing for one) is weak in the loop: here too.
        op.outputs[0].weak = (getattr(value, "weak", None) if isinstance(value, Tensor)
                              else dtypes.weak_kind(value))
        return op.outputs[0]
    return value


def _typed_zero(value, name):
    if nest.is_nested(value) and not isinstance(value, list):
        return nest.map_structure(lambda v: _typed_zero(v, name), value)
    if isinstance(value, TensorList):
        return TensorList.empty_like(value.element_like())
    if isinstance(value, _ProbeList):
        # (an empty list the loop grows, assigned to this symbol too: `return v`)
        if value.element is None:
            raise staging_error(
                f"{_quoted(name)} is first assigned inside a tensor loop to an empty list "
                f"whose elements are not known; give it a value before the loop", skip=6)
        return TensorList.empty_like(value.element, value.name)
    if isinstance(value, list):
        # First assigned in the body, a list is made anew each iteration: a structure of
        # fixed length (a list the body grew started empty, a tensor list, above).
        return [_typed_zero(v, name) for v in value]
    if not isinstance(value, (Tensor, rt.Variable) + _NUMBERS):
        raise staging_error(
            f"{_quoted(name)} is first assigned inside a tensor loop and holds {_kind(value)}; a "
            f"symbol assigned in a graph loop must hold a tensor (assign it before the loop)",
            skip=6)
    t = value.read_value() if isinstance(value, rt.Variable) else \
        registry.convert_to_tensor(value)
    dims = [0 if d is None else d for d in (t.shape.dims or ())]
    with rt.init_scope():
        return rt.constant(np.zeros(dims, t.dtype.np))


def _assert_assigned(flag, value, name):
    """`value` (every tensor in it: a tuple, dict or tensor list first assigned in the
    loop too) checked to have been assigned when the graph runs."""
    message = (f"{_quoted(name)} is used after a tensor loop that ran zero times, so it was never "
               f"assigned")

    def checked(v):
        if isinstance(v, TensorList):
            return TensorList(logging_ops.assert_assigned(flag, v.tensor, message), v.name,
                              v.weak)
        if isinstance(v, Tensor):
            return logging_ops.assert_assigned(flag, v, message)
        return v

    if isinstance(value, TensorList) or not nest.is_nested(value):
        return checked(value)
    return nest.map_structure(checked, value)


# -- for --------------------------------------------------------------------------------------

def for_stmt(iter_, extra_test, body, get_state, set_state, symbol_names, opts=None):
    """`for x in iter_: body(x)` with an optional early-exit test (lowered break/return).

    Symbolic tensors (and range/enumerate/zip over them) iterate in a graph loop, and so
    does an `rt.data.Dataset` while tracing; any other iterable, eager tensors included,
    is unrolled as plain Python.
    """
    from .py_builtins import TensorIterable
    dataset = isinstance(iter_, rt_data.Dataset) and not rt.executing_eagerly()
    iterable = None if dataset else TensorIterable.of(iter_)
    if get_state is None and (dataset or iterable is not None or extra_test is not None):
        get_state, set_state = closure_state(body, symbol_names)
    if dataset:
        _dataset_for(iter_, extra_test, body, get_state, set_state, symbol_names, opts)
    elif iterable is not None:
        _tensor_for(iterable, extra_test, body, get_state, set_state, symbol_names, opts)
    else:
        _python_for(iter_, extra_test, body, get_state, set_state, symbol_names)


def _python_for(iter_, extra_test, body, get_state, set_state, symbol_names):
    body = trace_warnings.counting_iterations(body)     # warns if it unrolls a lot
    if extra_test is None:
        for target in iter_:
            body(target)
        return
    iterator = iter(iter_)
    while True:
        # The test comes before the next element is taken, as a `break` leaves a shared
        # iterator: `for e in it: break` then `list(it)` still has every other element.
        go_on = extra_test()
        if not is_symbolic(go_on) and not go_on:
            return
        try:
            target = next(iterator)
        except StopIteration:
            return
        if is_symbolic(go_on):
            # A tensor-dependent break/return already happened: the remaining
            # iterations run only if the test holds when the graph runs.
            if_stmt(go_on, lambda t=target: body(t), lambda: None, get_state,
                    set_state, symbol_names)
        else:
            body(target)


def _tensor_for(iterable, extra_test, body, get_state, set_state, symbol_names, opts):
    n = iterable.length()

    def test(i):
        more = i < n
        if extra_test is None:
            return more
        go_on = extra_test()
        return rt.logical_and(more, truth(go_on) if is_symbolic(go_on) else go_on)

    def loop_body(i):
        body(iterable.element(i))
        return (i + 1,)

    # The counter starts as the Python 0: weakly typed, as the int `range` yields
    # (`x_float32 * i` stays float32).
    _tensor_loop(test, loop_body, get_state, set_state, symbol_names, opts, prefix=(0,))


def _dataset_for(dataset, extra_test, body, get_state, set_state, symbol_names, opts):
    """`for x in dataset` while tracing: a graph loop whose first loop variables are the
    pass over the data set (rt.data.Iteration); a `break` stops it pulling elements."""
    iteration = rt_data.Iteration(dataset)

    def go_on():
        result = extra_test()
        return truth(result) if is_symbolic(result) else result

    def test(*pass_values):
        more = iteration.has(pass_values)
        return more if extra_test is None else rt.logical_and(more, go_on())

    def loop_body(*pass_values):
        body(iteration.element(pass_values))
        return iteration.advance(pass_values, None if extra_test is None else go_on())

    _tensor_loop(test, loop_body, get_state, set_state, symbol_names, opts,
                 prefix=iteration.initial)
