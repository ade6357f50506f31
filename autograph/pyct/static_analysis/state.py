"""The static half of a statement's state: the plain local variables it carries.

A converted `if`, `while` or `for` carries what its bodies change that later code reads
(autograph/operators/state.py has the whole design: the run-time half discovers
attributes, items, closures written by helpers and the types of the values). Static
analysis owns the function's plain local variables, where it is exact. For a statement:

  modified    the variables its bodies assign (a loop: also its target; a `while`: what
              its test binds), and those that local functions the bodies call by name
              assign through `nonlocal` (`closure_writes`)
  outputs     the modified ones live after the statement or, for a loop, into the next
              iteration (liveness); also those a statement around it carries (its
              branches' values are read by that statement), and the function's own
              `nonlocal` and `global` variables (visible outside it)
  resets      an `if`'s modified variables that a branch reads before writing them and
              nothing reads after: reset to their value between the traces of the branches
  nonlocals   what the body functions declare nonlocal: the modified variables of the
              function that exist before the statement or are carried, those a lambda or
              def in the statement reads (late binding), and the function's own nonlocals
  globals     the modified variables the function declares `global`
  undefined   carried variables bound on no path to the statement: generated code sets
              them to `ag__.Undefined(name)` first, and checks their reads

`resolve` needs activity, reaching definitions and liveness annotations (in that order).
"""
import dataclasses

import gast

from autograph.pyct import anno
from autograph.pyct import naming
from autograph.pyct import qual_names
from autograph.pyct import visitor


@dataclasses.dataclass(frozen=True)
class LocalState:
    """The plain variables one statement carries (see the module docstring)."""

    outputs: tuple = ()
    resets: tuple = ()
    nonlocals: tuple = ()
    globals: tuple = ()
    undefined: tuple = ()

    @property
    def names(self):
        """What generated code passes: the outputs, then the reset-only variables."""
        return self.outputs + self.resets


class FunctionFacts:
    """What the analysis of a statement needs to know about the function around it."""

    def __init__(self, fn_node, source, around=None, lambdas=True):
        """`lambdas`: whether the function may hold a lambda (else only its statements
        are looked at for the defs nested in it)."""
        self.scope = anno.getanno(fn_node, anno.Static.SCOPE)
        self.local_names = self.scope.local_names
        self.has_closures = _has_closures(fn_node, source)
        # A nested function may call its siblings and itself, defined around it.
        self.closure_writes = dict(around.closure_writes) if around else {}
        # {id of an if, while or for statement: (it, the names the lambdas and defs nested
        # in it read)}, found in one walk of each outermost one (empty without closures).
        self.captured = {}
        if self.has_closures:
            self.closure_writes.update(_closure_writes(fn_node))
            for stmt in visitor.statements(fn_node.body):   # outer statements first
                if isinstance(stmt, _STATEMENTS) and id(stmt) not in self.captured:
                    _captured_by_statement([stmt], self.captured,
                                           visitor.children if lambdas else _blocks)


def resolve(node, facts, enclosing=frozenset()):
    """The LocalState of the If, While or For `node` in the function `facts` describes;
    `enclosing`: the variables the statements around it carry."""
    if isinstance(node, gast.If):
        return _if_state(node, facts, enclosing)
    if isinstance(node, gast.While):
        cond_scope = anno.getanno(node, anno.Static.COND_SCOPE)
        modified = _modified(facts, anno.getanno(node, anno.Static.BODY_SCOPE), cond_scope)
        return _state(node, facts, modified, _loop_live(node), enclosing)
    body_scope = anno.getanno(node, anno.Static.BODY_SCOPE)
    live = _loop_live(node)
    extra_test = anno.getanno(node, anno.Basic.EXTRA_LOOP_TEST, None)
    if extra_test is not None:
        live = live | _names_read(extra_test)
    modified = _modified(facts, body_scope) | {
        qn for qn in _stored_symbols(node.target) if not qn.is_composite()}
    return _state(node, facts, modified, live, enclosing)


def _if_state(node, facts, enclosing):
    # What a branch reads before writing it: a value the other branch's trace must not
    # leave behind.
    reset = anno.getanno(node, anno.Static.LIVE_VARS_IN_BODY, frozenset())
    if node.orelse:
        reset |= anno.getanno(node.orelse[0], anno.Static.LIVE_VARS_IN, frozenset())
    modified = _modified(facts, anno.getanno(node, anno.Static.BODY_SCOPE),
                         anno.getanno(node, anno.Static.ORELSE_SCOPE))
    return _state(node, facts, modified, anno.getanno(node, anno.Static.LIVE_VARS_OUT),
                  enclosing, reset)


def _loop_live(node):
    return anno.getanno(node, anno.Static.LIVE_VARS_OUT) | anno.getanno(
        node, anno.Static.LIVE_VARS_IN)


def _modified(facts, *scopes):
    """The plain variables the blocks assign, including enclosing variables written
    (through nonlocal) by local functions they call: calling one may write them."""
    modified = set()
    for scope in scopes:
        modified.update(qn for qn in scope.modified if not qn.is_composite())
        for used in scope.read:
            modified |= facts.closure_writes.get(used, set())
    namespace = naming.namespace()
    return {qn for qn in modified if str(qn.root) != namespace}


def _state(node, facts, modified, live, enclosing, reset=frozenset()):
    scope = facts.scope
    live = live | enclosing
    maybe = anno.getanno(node, anno.Static.MAYBE_DEFINED_VARS_IN, frozenset())
    fn_locals = facts.local_names
    outputs, resets = [], []
    for qn in modified:             # (in any order: _strings sorts them)
        if qn in live or qn in scope.nonlocals or qn in scope.globals:
            outputs.append(qn)      # read later, or visible outside the function
        elif qn in maybe and qn in reset:
            resets.append(qn)       # a branch reads it first: reset between branch traces
    carried = set(outputs) | set(resets)
    nonlocals = {qn for qn in modified if qn in scope.nonlocals or (
        qn in fn_locals and (qn in carried or qn in maybe))}
    if facts.has_closures:
        # A variable a lambda or def in the block reads stays the function's own (late
        # binding: `fns.append(lambda: i)` in a loop sees the last `i`, as in Python).
        statement, captured = facts.captured.get(id(node), (None, None))
        if statement is not node:
            captured = _captured_names(node)
        nonlocals |= {qn for qn in modified if qn in fn_locals and str(qn) in captured}
    return LocalState(
        outputs=_strings(outputs), resets=_strings(resets), nonlocals=_strings(nonlocals),
        globals=_strings(qn for qn in modified if qn in scope.globals),
        undefined=_strings(qn for qn in outputs if qn not in maybe and qn in fn_locals))


def _strings(qns):
    return tuple(sorted(str(qn) for qn in qns))


def _closure_writes(fn_node):
    """{name of a def nested in fn_node: the enclosing variables it assigns via nonlocal,
    itself or through the local functions it calls (transitively)}."""
    writes, reads = {}, {}
    for n in visitor.statements(fn_node.body, into_scopes=True):
        if not isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef)):
            continue
        scope = anno.getanno(n, anno.Static.SCOPE, None)
        if scope is None:
            continue
        name = qual_names.QN(n.name)
        writes[name] = {qn for qn in scope.modified if qn in scope.nonlocals}
        reads[name] = scope.read
    changed = True
    while changed:                          # add_twice() calls add(), which writes total
        changed = False
        for name, read in reads.items():
            for callee in read:
                extra = writes.get(callee, set()) - writes[name]
                if callee != name and extra:
                    writes[name] |= extra
                    changed = True
    return {name: written for name, written in writes.items() if written}


def _captured_by_statement(nodes, captured, below=visitor.children):
    """The names read inside the lambdas and defs nested in `nodes`; records them for each
    if, while and for statement among them (and below) in `captured`, by id. `below`
    lists the nodes to look in under a node (_blocks, where no lambda can be)."""
    names = set()
    for node in nodes:
        if isinstance(node, _CLOSURES):
            names.update(m.id for m in visitor.walk(node)
                         if isinstance(m, gast.Name) and isinstance(m.ctx, gast.Load))
            continue
        inner = _captured_by_statement(below(node), captured, below)
        if isinstance(node, _STATEMENTS):
            captured[id(node)] = (node, inner)
        names |= inner
    return names


def _blocks(node):
    """The statements (and except handlers, match cases) in the blocks of `node`."""
    values = node.__dict__
    return [n for field in _BLOCK_FIELDS for n in values.get(field) or ()]


_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
_CLOSURES = (gast.Lambda, gast.FunctionDef, gast.AsyncFunctionDef)
_STATEMENTS = (gast.If, gast.While, gast.For)


def _captured_names(node):
    """Names read inside the lambdas and defs nested in `node`."""
    names = set()
    for n in visitor.walk(node):
        if isinstance(n, (gast.Lambda, gast.FunctionDef, gast.AsyncFunctionDef)):
            names.update(m.id for m in visitor.walk(n)
                         if isinstance(m, gast.Name) and isinstance(m.ctx, gast.Load))
    return names


def _has_closures(fn_node, source):
    """Whether a lambda or def is nested in the function (a cheap, conservative test)."""
    if source is None or "lambda" in source:
        return True
    return any(isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef))
               for n in visitor.statements(fn_node.body))


def _names_read(node):
    return {qual_names.QN(n.id) for n in visitor.walk(node)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _stored_symbols(target):
    """The symbols a for-loop target assigns."""
    return {anno.getanno(n, anno.Basic.QN) for n in visitor.walk(target)
            if isinstance(getattr(n, "ctx", None), gast.Store) and anno.hasanno(n, anno.Basic.QN)}
