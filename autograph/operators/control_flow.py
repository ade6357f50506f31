"""Run-time dispatch of converted `if`, `while`, `for` and conditional expressions.

Generated code passes the statement's pieces as functions, and its variables by name:

    ag__.if_stmt(x > 0, if_body, else_body, ('x',))

A Python value or an eager tensor as the condition runs the plain Python statement; a
symbolic tensor builds `rt.cond` / `rt.while_loop`, tracing each body with the state as
its inputs and outputs. What the state is - the named variables, whose cells the body
functions' closure holds, and what discovery adds - is a StatementState (state.py).
"""
import collections
import re
import threading

import numpy as np

import runtime as rt
from runtime import control_flow as rt_cf
from runtime import data as rt_data
from runtime import dtypes
from runtime import nest
from runtime import trace_warnings
from runtime import traceback_utils
from runtime.errors import loop_limit_exceeded
from runtime.ops import random_ops, registry
from runtime.tensor import SymbolicTensor, Tensor

from ..errors import StagingError, is_user_error, mark_user_error, staging_error
from . import raises
from . import state as state_lib
from .data_structures import TensorList, check_list_element
from .state import StatementState
from .variables import (Undefined, UndefinedReturnValue, checked,
                        is_undefined, optional_of, register_optional)

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
    probing = 0        # how many loop probes (scratch traces) are running


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


class _Unreached:
    """What a branch or loop body that raises (a staged `raise`) gives: nothing the graph
    reads (a cond takes zeros of the other branch's values)."""

    def __repr__(self):
        return "<unreached>"


_UNREACHED = _Unreached()


def _raising_staged(fn):
    """`fn` traced: a `raise` of the program leaving it becomes a raise op in the graph
    being traced (the graph raises it when it runs this branch or body), and `fn` gives
    _UNREACHED."""
    def call(*args):
        try:
            return fn(*args)
        except Exception as e:
            if not raises.is_raised(e):
                raise
            raises.stage_raise(e)
            return _UNREACHED
    return call


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
# What a statement carries is a StatementState (operators/state.py): the plain variables the
# converter names, and what discovery finds.

_MAX_TRACES = 8         # traces of one statement while discovery still finds new state


class _MoreState(Exception):
    """Raised out of a trace that changed places outside the statement's state: the
    statement is traced again with them (`slots`; `samples`: the values they had)."""

    def __init__(self, slots, samples=None, retyped=None):
        super().__init__("internal: more state found")
        self.slots = slots
        self.samples = samples or {}
        self.retyped = retyped or {}


def _snapshot(functions):
    """The Snapshot of what the functions reach beyond the cells they assign themselves
    (the converter's variables), or None."""
    functions = [fn for fn in functions if getattr(fn, "__code__", None) is not None]
    managed = set()
    for fn in functions:
        managed |= state_lib.assigned_cells(fn)
    return state_lib.Snapshot.of(functions, managed)


def _new_state(snapshot, state):
    """The slots the trace just made changed and `state` does not hold, with their
    samples: raised as _MoreState when there are any."""
    if snapshot is None:
        return
    found = snapshot.changes(state.keys())
    if found:
        samples = {slot.key(): _sample(slot.get(), kind) for slot, kind in found}
        raise _MoreState([slot for slot, _ in found], samples)


def _retried(trace, state, snapshot, what):
    """Call `trace(state)` until no trace finds more state; returns its result."""
    before = state.values()
    samples, retyped = {}, {}
    for _ in range(_MAX_TRACES):
        try:
            return trace(state, samples, retyped)
        except _MoreState as more:
            if snapshot is not None:
                snapshot.restore()
            state.assign(before)
            state = state.extended(more.slots)
            before = state.values()
            samples.update(more.samples)
            retyped.update(more.retyped)
    raise staging_error(f"{what}: its state kept growing over {_MAX_TRACES} traces "
                        f"(internal error: please report it)", skip=3)


# -- if ---------------------------------------------------------------------------------------

def as_condition(value):
    """`value` as `if value:` tests it: a tensor list (a list grown in a graph loop) is
    true when it has elements (a tensor when its length is known only at run time)."""
    if isinstance(value, TensorList):
        n = value.length()
        return n > 0 if isinstance(n, int) else rt.greater(n, 0)
    return value


def if_stmt(cond, body, orelse, symbol_names, n_outputs=None):
    """`if cond: body() else: orelse()`, as a graph cond when `cond` is symbolic.

    `symbol_names`: the variables the branches assign (declared nonlocal or global in
    `body`); the first `n_outputs` (all by default) are what the statement gives to the
    code after it, the rest are only reset to their values before the statement between
    the traces of the two branches.
    """
    cond = as_condition(cond)
    if is_symbolic(cond):
        state = StatementState.of_names(body, symbol_names, n_outputs)
        staged_cond(truth(cond), body, orelse, state, "tensor `if`")
    elif cond:
        body()
    else:
        orelse()


def staged_cond(pred, true_fn, false_fn, state, what, result_name=None, reach=None):
    """A graph cond of `true_fn()` / `false_fn()` carrying `state` (and what discovery
    adds to it); returns the value of the branch functions (`result_name` names it).
    `reach`: the user's functions whose reach discovery looks at (the branches)."""
    snapshot = _snapshot(reach or (true_fn, false_fn))

    def trace(state, samples, retyped):
        return _traced_cond(pred, true_fn, false_fn, state, snapshot, retyped, what,
                            result_name)

    return _retried(trace, state, snapshot, what)


def _traced_cond(pred, true_fn, false_fn, state, snapshot, retyped, what, result_name):
    before = state.values()
    # (lists a branch grew: tensor lists; `retyped` holds an element of each)
    init = tuple(_as_tensor_list(v, retyped[slot.key()], slot.label)
                 if slot.key() in retyped else v for slot, v in zip(state.slots, before))
    names, n_outputs = state.names, state.n_outputs
    undefined_in_true = set()
    branch_values = {}
    probing = _tracing.probing
    shown = _display_names(names)
    flat_names = []         # the flat outputs' names, filled in by the true branch
    failed = {}             # (a probe's) branch that raised: its exception
    raised = set()          # the branches that raise when the graph runs them

    def branch(fn, which):
        def traced():
            state.assign(_fresh(init))      # each branch starts from its own copy of lists
            try:
                result = _raising_staged(_user(fn))()
            except Exception as e:  # noqa: BLE001 - re-raised, or tolerated by a probe
                if isinstance(e, _MoreState):
                    raise
                if probing and which not in failed and not failed:
                    # A probe only types the loop's values: a branch that cannot run on
                    # them (it reads what the other creates) changes nothing.
                    failed[which] = e
                    if snapshot is not None:
                        snapshot.restore()
                    return _failed_branch(init, n_outputs)
                label = _unassigned_read(e, state, init)
                if label is None:
                    raise
                frames = traceback_utils.map_traceback(e.__traceback__)
                raise StagingError(
                    f"{_quoted(label)} is read in the {which} branch of a tensor "
                    f"`if`, where it has no value yet (it is assigned only in the other "
                    f"branch, or later in a loop around it). A graph runs both branches' "
                    f"code, so it needs a value before the `if`: assign it before the "
                    f"`if` (or before the loop)",
                    frames[-1] if frames else None) from None
            if result is _UNREACHED:
                if snapshot is not None:
                    snapshot.restore()
                raised.add(which)
                return _UNREACHED
            values = list(state.values())
            _new_state(snapshot, state)
            if snapshot is not None:
                snapshot.restore()
            branch_values[which] = values
            if which == "false" and "true" in branch_values:
                _relist(state, init, branch_values["true"], values)
            undefined = {n for n, v in zip(names[:n_outputs], values) if type(v) is Undefined}
            if which == "true":
                undefined_in_true.update(undefined)
            elif not probing and "true" not in raised:
                _check_defined_in_both(undefined_in_true, undefined)
            for i in range(n_outputs, len(values)):      # nothing reads these afterwards
                if type(values[i]) is Undefined:
                    values[i] = UndefinedReturnValue()
            out = (_to_graph_value(result), tuple(_branch_value(v) for v in values[:n_outputs]),
                   tuple(_to_graph_value(v) for v in values[n_outputs:]))
            if which == "true":
                flat_names.extend([result_name or "the value"] * len(nest.flatten(out[0])))
                for name, v in zip(shown, out[1] + out[2]):
                    flat_names.extend([name] * len(nest.flatten(v)))
            return out
        return traced

    missing = _is_unknown_in_probe if probing else _is_missing_return
    outs = _staging_check(what, rt_cf.cond_with_names, pred, branch(true_fn, "true"),
                          branch(false_fn, "false"), names=flat_names,
                          missing=lambda v: v is _UNREACHED or missing(v))
    if outs is _UNREACHED:                  # both branches raise: nothing after runs
        state.assign(init)
        return None
    result, merged, resets = outs
    final = tuple(_unless_unchanged(_from_branch_value(v, like, name), like)
                  for v, like, name in zip(merged, init, names)) + tuple(
        _from_graph_value(v, like) for v, like in zip(resets, init[n_outputs:]))
    state.assign(final)
    state.unbind_undefined(final)
    return result


def _failed_branch(init, n_outputs):
    """What a branch that failed in a probe gives: no value (None: the other branch's
    types it, _is_unknown_in_probe), nothing changed."""
    return (None, tuple((_to_graph_value(v), True) for v in init[:n_outputs]),
            tuple(_to_graph_value(v) for v in init[n_outputs:]))


def _unassigned_read(error, state, init):
    """The label of the slot (holding no value before the `if`) whose read raised `error`,
    or None: the other branch creates it."""
    for slot, value in zip(state.slots, init):
        if type(value) is not Undefined:
            continue
        if isinstance(error, UnboundLocalError) and error.name == slot.label:
            return slot.label
        if isinstance(error, AttributeError) and isinstance(slot, state_lib.AttributeSlot) \
                and getattr(error, "obj", None) is slot.obj and error.name == slot.attr:
            return slot.label
        if isinstance(error, KeyError) and isinstance(slot, state_lib.ItemSlot) \
                and error.args and error.args[0] == slot.index:
            return slot.label
    return None


def _branch_value(value):
    """A state value as a branch returns it: an optional value as (its value, its flag),
    any other as (value, True) - so only optional values add outputs (equal Python
    values of the two branches are no outputs)."""
    found = optional_of(value) if not isinstance(value, (Undefined, UndefinedReturnValue)) \
        else None
    if found is not None:
        return (_to_graph_value(value), found[0])
    return (_to_graph_value(value), True)


def _from_branch_value(pair, like, name):
    value, flag = pair
    value = _from_graph_value(value, like)
    if isinstance(flag, Tensor):
        found = optional_of(like)
        absent = found[2] if found is not None else Undefined(name)
        register_optional(value, flag, found[1] if found is not None else name, absent)
    return value


def _relist(state, init, true_values, false_values):
    """A list the branches leave with different lengths (one appended to it): the state
    holds a tensor list instead, whose length the graph decides."""
    retyped = {}
    for slot, before, a, b in zip(state.slots, init, true_values, false_values):
        if not isinstance(before, (list, TensorList)):
            continue                # (new lists of two lengths: a structure error)
        lists = [v for v in (a, b) if isinstance(v, (list, TensorList))]
        if len(lists) != 2 or not any(isinstance(v, list) for v in lists):
            continue
        if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            continue
        elements = [e for v in lists for e in (v if isinstance(v, list) else [])]
        sample = next((e for e in elements), None)
        if sample is None:
            sample = next((v for v in lists if isinstance(v, TensorList)), None)
        retyped[slot.key()] = sample
    if retyped:
        raise _MoreState([], retyped=retyped)


def _as_tensor_list(value, element, name):
    """The list `value` as a TensorList; `element` (or a TensorList like it) gives the
    element type if it is empty."""
    if isinstance(value, TensorList):
        return value
    if value:
        return TensorList.from_list(list(value), name)
    if element is None:
        raise staging_error(
            f"{_quoted(name)} is an empty list whose length a tensor decides, and whose "
            f"elements are not known: give it an element before (or start from a tensor)",
            skip=6)
    return _empty_like(element, name)


def _empty_like(element, name):
    """An empty TensorList of elements like `element`, or like a TensorList's (weakly
    typed as its elements are: rows standing for Python numbers print as numbers)."""
    if isinstance(element, TensorList):
        empty = TensorList.empty_like(element.element_like(), name)
        empty.weak = element.weak
        return empty
    return TensorList.empty_like(element, name)


def _fresh(values):
    """The state with Python lists, dicts and tensor lists copied, so one branch cannot
    see the other's in-place changes (`l.append(x)` in the true branch)."""
    return tuple(v.copy() if isinstance(v, (list, dict, TensorList)) else v for v in values)


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


def _is_unknown_in_probe(value):
    """A probe's branch value that the other branch's types: no value, or None (a
    variable `None` before the loop that only one branch assigns, in a nested `if`)."""
    return value is None or is_undefined(value)


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
        return staged_cond(truth(cond), if_true, if_false, StatementState((), 0),
                           f"conditional expression `{expr_repr}`")
    return if_true() if cond else if_false()


# -- while -----------------------------------------------------------------------------------

def while_stmt(test, body, symbol_names, opts=None):
    """`while test(): body()`; a graph loop once the condition is symbolic.

    A condition that becomes a tensor after some Python iterations turns the rest
    of the loop into a graph loop, starting from the state reached so far. Iterations
    on an eager tensor condition count against rt.config's loop iteration limit
    (Python-valued conditions never do).
    """
    cond, tested = _first_test(test)
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
        cond, tested = _first_test(test)
    state = StatementState.of_names(body, symbol_names)
    _tensor_loop(test, body, state, opts, reach=(body, test), tested=tested)


class _Tested:
    """A `while` test whose evaluation before a graph loop staged ops with effects (a
    print, a variable write, a random draw), which must run as often as in Python: the
    loop carries `value` in, and evaluates the test again after each iteration's body
    (before the next, as Python), its random ops drawing from the same `generators`."""

    __slots__ = ("value", "generators")

    def __init__(self, value, generators):
        self.value, self.generators = value, generators

    def again(self, test):
        """The test evaluated in the loop body, as the condition it carries."""
        with random_ops.reusing_generators(self.generators):
            result = as_condition(_user(test)())
        return truth(result) if is_symbolic(result) else rt.constant(bool(result))


def _first_test(test):
    """(test() as a condition, a _Tested when it is symbolic and its ops have effects,
    else None: the graph loop's condition evaluates the test, and the ops of this
    evaluation, unused, are pruned)."""
    if rt.executing_eagerly():
        return as_condition(test()), None
    graph = rt.get_default_graph()
    start = len(graph.ops)
    with random_ops.recording_generators() as generators:
        cond = as_condition(test())
    if not is_symbolic(cond) or not any(_has_effects(op) for op in graph.ops[start:]):
        return cond, None
    return cond, _Tested(truth(cond), generators)


def _has_effects(op):
    _, writes, stateful = op.effects()
    return bool(writes) or stateful


class _Optional:
    """The initial value of a slot a tensor loop may leave without a value: None, or none
    at all, before the loop (`absent`), and assigned in it. The loop carries `zero` (of the
    type the body assigns) and `flag` (whether it holds a value: False before the first
    assignment), unless `flag` is None (the return value: read only once returned)."""

    __slots__ = ("name", "zero", "flag", "absent")

    def __init__(self, name, zero, flag, absent):
        self.name, self.zero, self.flag, self.absent = name, zero, flag, absent


_LOOP_LEAVES = (Tensor, rt.Variable, TensorList) + _NUMBERS


def _carried(value):
    """Whether loop state of this value becomes a loop variable of the graph loop:
    tensors, numbers, tensor lists, and tuples/lists/dicts of them."""
    if isinstance(value, _Optional):
        return True
    leaves = nest.flatten(value)
    return bool(leaves) and all(isinstance(v, _LOOP_LEAVES) for v in leaves)


def _tensor_loop(test, body, state, opts, prefix=(), reach=(), tested=None):
    """rt.while_loop over the loop state, after `prefix` loop variables of a `for`.

    `test(*prefix)` and `body(*prefix)` see the state through its slots; the body
    returns the next prefix values. `reach`: the user's functions whose reach discovery
    looks at. `tested`: a _Tested, whose value the loop carries as its last variable.
    """
    snapshot = _snapshot(reach)
    samples = {}
    probed = any(_needs_type(v) for v in state.values())
    if probed:
        state, samples = _probe(state, body, prefix, snapshot)

    def trace(state, found_samples, retyped):
        return _traced_loop(test, body, state, {**samples, **found_samples}, retyped,
                            snapshot, opts, prefix, tested)

    before = state.values()
    try:
        return _retried(trace, state, snapshot, "tensor loop")
    except Exception:
        if probed or snapshot is None:
            raise
        # The body failed on the state found so far: it may read what it creates behind a
        # tensor condition (`if first: obj.x = 0 else: obj.x += 1`). A probe, which lets
        # a branch fail, finds that state; with it the loop is traced again.
        snapshot.restore()
        state.assign(before)
        try:
            grown, samples = _probe(state, body, prefix, snapshot)
        except Exception:  # noqa: BLE001 - the loop's own error says more
            grown = state
        if len(grown.slots) == len(state.slots):
            raise
    return _retried(trace, grown, snapshot, "tensor loop")


def _needs_type(value):
    """Whether a loop needs the probe to know how to carry this value."""
    return (is_undefined(value) or value is None or isinstance(value, list)) and \
        optional_of(value) is None


def _traced_loop(test, body, state, samples, retyped, snapshot, opts, prefix, tested):
    names = state.names
    init = [_carried_init(v, samples.get(slot.key(), _NO_SAMPLE), slot.label)
            for slot, v in zip(state.slots, state.values())]
    carried = [i for i, v in enumerate(init) if _carried(v)]
    flagged = [i for i in carried if isinstance(init[i], _Optional) and
               init[i].flag is not None]
    n_pre, n_car = len(prefix), len(carried)

    def state_of(loop_values, flags):
        values = list(init)
        for i, v in zip(carried, loop_values):
            values[i] = _from_graph_value(v, _like(init[i]))
        for i, flag in zip(flagged, flags):
            register_optional(values[i], flag, init[i].name, init[i].absent)
        return tuple(values)

    def split(loop_values):
        return (loop_values[n_pre:n_pre + n_car],
                loop_values[n_pre + n_car:n_pre + n_car + len(flagged)])

    def cond_fn(*loop_values):
        if tested is not None:          # the test's value after the previous body
            return loop_values[-1]
        state.assign(state_of(*split(loop_values)))
        result = as_condition(_user(test)(*loop_values[:n_pre]))
        return truth(result) if is_symbolic(result) else result

    def body_fn(*loop_values):
        state.assign(state_of(*split(loop_values)))
        next_prefix = _raising_staged(_user(body))(*loop_values[:n_pre]) or ()
        if next_prefix is _UNREACHED:       # the body raises when it runs
            return loop_values
        go_on = () if tested is None else (tested.again(test),)
        values = state.values()
        _new_state(snapshot, state)
        _check_unchanged(state, values, init, carried)
        _check_owned(state, values, init, owned, owned - any_rank)
        outputs, flags = [], []
        for i in carried:
            value, flag = _loop_output(values[i], init[i])
            outputs.append(value)
            if i in flagged:
                flags.append(flag)
        return tuple(next_prefix) + tuple(outputs) + tuple(flags) + go_on

    test_value = () if tested is None else (tested.value,)
    loop_vars = (tuple(prefix) + tuple(_initial_graph_value(init[i]) for i in carried)
                 + tuple(init[i].flag for i in flagged) + test_value)
    loop_names = ([f"<iteration {k}>" for k in range(n_pre)]
                  + _display_names([names[i] for i in carried])
                  + [f"<{names[i]} assigned>" for i in flagged]
                  + ["<the `while` test>"] * len(test_value))
    # Values the loop gives their shape (first assigned in it, the return value) take any
    # shape of the rank they start with, or any rank once an iteration changes it.
    owned = {i for i in carried if isinstance(init[i], _Optional) or _is_return_slot(names[i])}
    any_rank = {i for i in owned if retyped.get(state.slots[i].key()) is _ANY_RANK}
    invariants = _invariants(opts, init, carried, n_pre, len(flagged) + len(test_value),
                             owned, any_rank)
    try:
        outs = list(_staging_check(
            "tensor loop", rt_cf.while_loop_with_names, cond_fn, body_fn, loop_vars,
            shape_invariants=invariants,
            maximum_iterations=(opts or {}).get("maximum_iterations"),
            names=loop_names, adapt_numbers=True))
    finally:
        if snapshot is not None:
            snapshot.restore()
    loop_values, flags = split(outs)
    final = list(state_of(loop_values, flags))
    for i in flagged:
        if not isinstance(state.slots[i], (state_lib.CellSlot, state_lib.GlobalSlot)):
            # (an attribute or item: no read of it is checked; it is checked here)
            final[i] = checked(final[i])
    state.assign(tuple(final))
    return outs[:n_pre]


_ANY_RANK = object()


def _is_return_slot(name):
    return name.startswith("retval_") and _GENERATED.match(name) is not None


def _check_owned(state, values, init, owned, ranked):
    """A value the loop owns (it gives it its type) that an iteration gives another
    structure (the probe could not tell: `return v` of a list the body grows later) or
    another rank (`ranked` ones): traced again, typed by this iteration, of any rank."""
    samples, any_rank = {}, {}
    for i in owned:
        value = values[i]
        if value is None or is_undefined(value):
            continue
        before = _to_graph_value(_like(init[i]))
        after = _to_graph_value(value)
        key = state.slots[i].key()
        if not nest.same_structure(before, after):
            samples[key] = _sample(value)
            continue
        if i not in ranked:
            continue
        ranks = [(getattr(getattr(a, "shape", None), "rank", 0), b.shape.rank)
                 for a, b in zip(nest.flatten(after), nest.flatten(before))
                 if isinstance(b, Tensor)]
        if any(a != b for a, b in ranks):
            any_rank[key] = _ANY_RANK
    if samples or any_rank:
        raise _MoreState([], samples=samples, retyped=any_rank)


def _like(value):
    """What a loop value is rebuilt like (see _from_graph_value)."""
    return value.zero if isinstance(value, _Optional) else value


def _initial_graph_value(value):
    if isinstance(value, _Optional):
        return _to_graph_value(value.zero)
    if type(value) is float:
        return _python_float(value)
    return _to_graph_value(value)


def _python_float(value):
    """A variable holding a Python float, as a loop carries it: float64 standing for the
    number (weak: it takes the dtype of the float32 tensors it meets, as eagerly), so
    Python's own arithmetic on it (`lr *= 0.9`) keeps its precision. (Floats in lists are
    data, which ops convert to float32 arrays, as eagerly: they stay float32.)"""
    t = registry.constant(value, dtypes.float64)
    t.weak = "f"
    return t


def _loop_output(value, init):
    """(graph value, flag) of a slot's value at the end of an iteration."""
    if isinstance(init, _Optional) and init.flag is not None:
        if value is None or is_undefined(value):
            return _to_graph_value(init.zero), False       # (assigned None again)
        found = optional_of(value)
        return _to_graph_value(value), (found[0] if found is not None else True)
    return _to_graph_value(value), None


# -- how a loop carries each slot ------------------------------------------------------------

class _Grown:
    """The sample of a list whose length the body changed: a tensor list; `element` is
    an element it held, or a TensorList of such elements (None when none was seen)."""

    __slots__ = ("element",)

    def __init__(self, element):
        self.element = element


_NO_SAMPLE = object()


def _sample(value, kind="value"):
    """What a slot held after a trace of the body, as much as typing needs (taken before
    the places are restored)."""
    # (A grown list's element type is its first element's: the element only types a list
    # that was empty before, whose first element is the first one appended.)
    if kind == "length" and isinstance(value, list):
        return _Grown(value[0] if value else None)
    if isinstance(value, _ProbeList):
        if len(value) != value.initial_length:
            return _Grown(value[0] if len(value) else value.first)
        return list(value)
    if isinstance(value, TensorList):
        return _Grown(value)
    if isinstance(value, list):
        return list(value)
    return value


def _carried_init(before, sample, name):
    """The value a graph loop starts a slot from, given its value `before` the loop and
    what a trace of the body left in it (`sample`)."""
    if sample is _NO_SAMPLE or sample is before:
        return before
    if optional_of(before) is not None:
        found = optional_of(before)
        return _Optional(found[1], before, found[0], found[2])
    if type(before) is UndefinedReturnValue:
        if is_undefined(sample) or not _typeable(sample):
            return before
        return _Optional(name, _typed_zero(sample, name), None, before)
    if type(before) is Undefined or before is None:
        if is_undefined(sample) or sample is None or not _typeable(sample):
            return before
        zero = _typed_zero(sample, name)
        return _Optional(name, zero, False, None if before is None else before)
    if isinstance(before, list):
        if isinstance(sample, _Grown):
            return _as_tensor_list(before, sample.element, name)
        if isinstance(sample, list) and len(sample) != len(before):
            return _as_tensor_list(before, sample[0] if sample else None, name)
        if isinstance(sample, Tensor) and not isinstance(before, TensorList):
            try:
                return registry.convert_to_tensor(before, dtype_hint=sample.dtype)
            except (TypeError, ValueError):
                return before
    return before


def _typeable(sample):
    """Whether a sample gives a loop value a type: it holds a tensor, number or tensor list
    (an empty list does not: a list the body returns before it grows it)."""
    if isinstance(sample, _Grown):
        return sample.element is not None
    leaves = nest.flatten(sample)
    return bool(leaves) and all(isinstance(v, _LOOP_LEAVES) for v in leaves)


def _typed_zero(value, name):
    if isinstance(value, _Grown):
        if value.element is None:
            raise staging_error(
                f"{_quoted(name)} is first assigned inside a tensor loop to an empty list "
                f"whose elements are not known; give it a value before the loop", skip=6)
        return _empty_like(value.element, name)
    if isinstance(value, TensorList):
        return _empty_like(value, value.name)
    if nest.is_nested(value) and not isinstance(value, list):
        return nest.map_structure(lambda v: _typed_zero(v, name), value)
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
        zero = rt.constant(np.zeros(dims, t.dtype.np))
    return zero


# -- the probe: one scratch trace of a loop body, for the types it needs ----------------------

def _probe(state, body, prefix, snapshot):
    """Trace the body once in a scratch graph, the state standing in as placeholders (as
    in a graph loop, where every iteration's values are unknown); returns the state with
    what the trace discovered, and the samples of every slot. Everything is restored."""
    init = state.values()
    scratch = rt.Graph("probe", outer_graph=rt.get_default_graph())
    _tracing.probing += 1
    try:
        with scratch.as_default():
            state.assign(tuple(_stand_in(v, scratch, name)
                               for v, name in zip(init, state.names)))
            _raising_staged(_user(body))(*[_probe_tensor(p) for p in prefix])
            samples = {slot.key(): _sample(slot.get()) for slot in state.slots}
            found = snapshot.changes(state.keys()) if snapshot is not None else []
            for slot, kind in found:
                samples[slot.key()] = _sample(slot.get(), kind)
    finally:
        _tracing.probing -= 1
        if snapshot is not None:
            snapshot.restore()
        state.assign(init)
    return state.extended(slot for slot, _ in found), samples


def _probe_tensor(value):
    """A loop prefix value (the counter) as the probe sees it: a placeholder, as in the
    loop (a constant 0 would make `t[i]` of a tensor of static length 0 an error)."""
    return _stand_in(value, rt.get_default_graph())


class _ProbeList(list):
    """A list standing for a state list in the probe: a Python list of placeholders that
    remembers its length (did the body grow it?), reads at a tensor index, and checks
    what is appended (a list the loop grows holds tensors: the error names the append)."""

    def __init__(self, items=(), name="list"):
        super().__init__(items)
        self.initial_length = len(self)
        self.first = None
        self.name = name

    def append(self, element):
        check_list_element(element, self.name)
        if self.first is None:
            self.first = element
        super().append(element)

    def copy(self):
        new = _ProbeList(self, self.name)
        new.initial_length, new.first = self.initial_length, self.first
        return new

    def __getitem__(self, i):
        if isinstance(i, Tensor) and len(self):
            return rt.gather(rt.stack(list(self)), i)
        return super().__getitem__(i)


def _stand_in(value, graph, name="list", top=True):
    """A placeholder shaped like a loop-state value, for the probe (`top`: the slot's
    value itself, not an element of it)."""
    if isinstance(value, list):
        return _ProbeList((_stand_in(v, graph, name, False) for v in value), name)
    if isinstance(value, TensorList):
        return TensorList(_placeholder(value.tensor, graph, first_unknown=True), value.name,
                          value.weak)
    found = optional_of(value)
    if nest.is_nested(value):
        return nest.map_structure(lambda v: _stand_in(v, graph, name, False), value)
    if type(value) is float and top:
        return _placeholder(_python_float(value), graph)
    if isinstance(value, (Tensor, rt.Variable) + _NUMBERS):
        t = _placeholder(value, graph)
        if found is not None:
            register_optional(t, _placeholder(found[0], graph), found[1], found[2])
        return t
    return value


def _placeholder(value, graph, first_unknown=False):
    t = value.read_value() if isinstance(value, rt.Variable) else \
        registry.convert_to_tensor(value)
    dims = t.shape.dims
    if first_unknown and dims:
        dims = [None] + list(dims[1:])
    op = graph.create_op(registry.get("placeholder"), [], {"shape": dims, "dtype": t.dtype},
                         [(rt.TensorShape(dims), t.dtype)], name="probe")
    # A Python number (or a tensor standing for one) is weak in the loop: here too.
    op.outputs[0].weak = (getattr(value, "weak", None) if isinstance(value, Tensor)
                          else dtypes.weak_kind(value))
    return op.outputs[0]


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


def _check_unchanged(state, values, init, carried):
    """The slots the loop does not carry must keep their values; one without a value (or
    None) before the loop that this iteration assigns is traced again, typed by it."""
    carried = set(carried)
    names = state.names
    graph = rt.get_default_graph()
    retype = {}
    for i, (now, before) in enumerate(zip(values, init)):
        if i in carried:
            continue
        if (is_undefined(before) or before is None) and _typeable(_sample(now)) \
                and not isinstance(now, list):
            retype[state.slots[i].key()] = _sample(now)
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
    if retype:
        raise _MoreState([], samples=retype)


def _kind(value):
    if is_undefined(value):
        return "no value"
    return "None" if value is None else f"a Python {type(value).__name__}"


def _invariants(opts, init, carried, n_pre, n_flags, owned=(), any_rank=()):
    """Shape invariants per loop variable: from set_loop_options, [None, ...] for lists,
    any shape of their rank for the values the loop owns (`any_rank`: of any rank)."""
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
        value = _like(init[i])
        default = _default_invariant
        if i in any_rank:
            default = _any_shape
        elif i in owned:
            # Its value before the loop is a stand-in, not the user's: its shape may be
            # whatever each iteration assigns.
            default = _relaxed_invariant
        if i in given:
            out.append(given[i])
        else:
            out.append(nest.map_structure(default, value))
    out += [None] * n_flags
    return out if any(s is not None for s in nest.flatten(out)) else None


def _any_shape(value):
    return rt.TensorShape(None)


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


# -- for --------------------------------------------------------------------------------------

def for_stmt(iter_, extra_test, body, symbol_names, opts=None):
    """`for x in iter_: body(x)` with an optional early-exit test (lowered break/return).

    Symbolic tensors (and range/enumerate/zip over them) iterate in a graph loop, and so
    does an `rt.data.Dataset` while tracing; any other iterable, eager tensors included,
    is unrolled as plain Python.
    """
    from .py_builtins import TensorIterable
    if isinstance(iter_, rt_data.Dataset) and not rt.executing_eagerly():
        _dataset_for(iter_, extra_test, body, StatementState.of_names(body, symbol_names), opts)
        return
    iterable = TensorIterable.of(iter_)
    if iterable is not None:
        _tensor_for(iterable, extra_test, body, StatementState.of_names(body, symbol_names),
                    opts)
    else:
        _python_for(iter_, extra_test, body, symbol_names)


def _python_for(iter_, extra_test, loop_body, symbol_names):
    body = trace_warnings.counting_iterations(loop_body)    # warns if it unrolls a lot
    if extra_test is None:
        for target in iter_:
            body(target)
        return
    iterator = iter(iter_)
    state = None
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
            if state is None:
                state = StatementState.of_names(loop_body, symbol_names)
            staged_cond(truth(go_on), lambda t=target: body(t), lambda: None, state,
                        "tensor `if`", reach=_reach(loop_body, extra_test))
        else:
            body(target)


def _reach(body, extra_test):
    """The user's functions a loop's discovery looks at (see _tensor_loop)."""
    return (body,) if extra_test is None else (body, extra_test)


def _tensor_for(iterable, extra_test, body, state, opts):
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
    _tensor_loop(test, loop_body, state, opts, prefix=(0,), reach=_reach(body, extra_test))


def _dataset_for(dataset, extra_test, body, state, opts):
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

    _tensor_loop(test, loop_body, state, opts, prefix=iteration.initial,
                 reach=_reach(body, extra_test))
