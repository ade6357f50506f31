"""`if`, `while` and `for` become calls of `ag__.if_stmt`, `while_stmt`, `for_stmt`.

    if x > 0:                    def if_body():
        x = x * 2                    nonlocal x
    else:                =>          x = x * 2
        x = -x                   def else_body():
                                     nonlocal x
                                     x = -x
                                 ag__.if_stmt(x > 0, if_body, else_body, ('x',))

    while i < n:                 def loop_body():
        i += 1           =>          nonlocal i
                                     i += 1
                                 def loop_test():
                                     return i < n
                                 ag__.while_stmt(loop_test, loop_body, ('i',))

    for x in xs:                 def loop_body(itr):
        s += x           =>          nonlocal s
                                     x = itr
                                     s += x
                                 ag__.for_stmt(xs, None, loop_body, ('s',))

The bodies become local functions sharing the function's variables (`nonlocal`); the
tuple names the variables the statement carries (its state, decided by static analysis:
pyct/static_analysis/state.py), whose cells the operator finds in the body function's
closure. Everything else the statement changes (attributes, items, variables written by
helpers) the operator discovers when it traces it (operators/state.py). A `for` loop's
extra test (from a lowered `break` or `return`) is a function too; `if` statements whose
branches leave variables only to be reset pass their number of outputs, loops with
`ag.set_loop_options` a dict of options. A carried variable that may be unset before the
statement is first set to `ag__.Undefined('x')`, and so is, first in the function, a
local it may read unbound (assigned on some paths only, or deleted: `del x` sets it to
Undefined again); reads of these are checked (`ag__.ld`), as are reads of variables a
loop may leave None. The templates below are these forms.
"""
import gast

from autograph.converters import directives
from autograph.pyct import anno
from autograph.pyct import ast_util
from autograph.pyct import naming
from autograph.pyct import qual_names
from autograph.pyct import templates
from autograph.pyct import transformer
from autograph.pyct import visitor
from autograph.pyct.static_analysis import activity
from autograph.pyct.static_analysis import cfg
from autograph.pyct.static_analysis import liveness
from autograph.pyct.static_analysis import reaching_definitions
from autograph.pyct.static_analysis import state as static_state

_IF = """
def body_name():
    nonlocal nonlocals
    global globals_
    body
def orelse_name():
    nonlocal nonlocals
    global globals_
    orelse
ag__.if_stmt(test, body_name, orelse_name, state)
"""

_IF_WITHOUT_ELSE = """
def body_name():
    nonlocal nonlocals
    global globals_
    body
ag__.if_stmt(test, body_name, lambda: None, state)
"""

_WHILE = """
def body_name():
    nonlocal nonlocals
    global globals_
    body
def test_name():
    return test
ag__.while_stmt(test_name, body_name, state)
"""

_FOR = """
def body_name(iterate):
    nonlocal nonlocals
    global globals_
    target = iterate
    body
ag__.for_stmt(iter_, extra_test, body_name, state)
"""

_EXTRA_TEST = """
def test_name():
    return test
"""

_UNDEFINED = "name = ag__.Undefined(label)"


class _Function:
    def __init__(self):
        self.facts = None             # static_state.FunctionFacts
        self.undefined = set()        # names set to ag__.Undefined in this function
        self.carried_by_loops = set()  # names some loop of this function carries
        self.shared = set()           # names generated functions declare nonlocal
        self.enclosing = []           # names the statements being converted carry


class ControlFlowTransformer(transformer.Base):
    statements_only = True

    def __init__(self, ctx, lambdas=True):
        super().__init__(ctx)
        self.lambdas = lambdas          # whether the tree may hold a lambda

    # -- functions ----------------------------------------------------------------------
    def visit_FunctionDef(self, node):
        functions = self.state[_Function]
        around = functions.value.facts if functions.level else None
        with functions as fn:
            fn.facts = static_state.FunctionFacts(node, self.ctx.info.source_code, around,
                                                  self.lambdas)
            maybe_unbound = reaching_definitions.maybe_unbound_reads(node, fn.facts.scope)
            node.body = self.visit_block(node.body)
            self._bind_unbound(node, fn, maybe_unbound)
            optional = fn.carried_by_loops and fn.carried_by_loops & _none_assigned(node)
            if fn.undefined or optional:
                _CheckedLoads(self.ctx, fn.undefined, optional).visit_body(node.body)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def _bind_unbound(self, node, fn, maybe_unbound):
        """Sets to Undefined, first in the function, the variables that may be unbound
        where they are read (`maybe_unbound`: its reads are then checked; a parameter has
        a value on entry, so it is checked, not reset), and those the generated functions
        share (nonlocal) that no function around them binds: a variable whose every
        assignment moved into generated functions that do not enclose each other."""
        unbound = set()
        own_symbols = ast_util.own_body_symbols(node, self.ctx.may_walrus)
        if fn.shared - own_symbols[0]:
            scope = fn.facts.scope
            unbound = (_unbound_nonlocals(own_symbols, self.ctx.may_walrus)
                       - {str(q) for q in scope.nonlocals} - {str(q) for q in scope.globals})
        fn.undefined.update(maybe_unbound & {str(qn) for qn in fn.facts.scope.params})
        unbound = sorted(unbound | (maybe_unbound - fn.undefined))
        if unbound:
            node.body = ast_util.after_docstring(node.body, self._undefined_inits(unbound))

    def visit_Lambda(self, node):
        return node

    def visit_ClassDef(self, node):
        # The statements of a class body run once, as plain Python; its methods are
        # converted with the function around them.
        node.body = [self.visit(stmt) if isinstance(stmt, (gast.FunctionDef,
                                                           gast.AsyncFunctionDef)) else stmt
                     for stmt in node.body]
        return node

    def visit_AnnAssign(self, node):
        # The annotation of a local variable is never evaluated (PEP 526), and the
        # variable may become nonlocal in a generated function, where an annotation is
        # a SyntaxError: keep the assignment only.
        if not isinstance(node.target, gast.Name):
            return node
        if node.value is None:
            return gast.Pass()
        return gast.Assign(targets=[node.target], value=node.value, type_comment=None)

    # -- shared -------------------------------------------------------------------------
    def _local_state(self, node):
        """The statement's LocalState, its nested statements converted (its variables
        count as read for them: the statement reads each branch's values)."""
        fn = self.state[_Function]
        local = static_state.resolve(node, fn.facts, frozenset().union(*fn.enclosing))
        fn.shared.update(local.nonlocals)
        fn.enclosing.append(frozenset(qual_names.QN(n) for n in local.names))
        try:
            node = self.generic_visit(node)
        finally:
            fn.enclosing.pop()
        return node, local

    def _new(self, root):
        return self.ctx.namer.new_symbol(root, ())

    def _undefined_inits(self, names):
        self.state[_Function].undefined.update(names)
        return [stmt for name in names for stmt in templates.replace(
            _UNDEFINED, name=name, label=ast_util.constant_node(name))]

    def _statement(self, template, local, **replacements):
        """The template filled in, after the Undefined inits of the statement's variables."""
        return self._undefined_inits(local.undefined) + templates.replace(
            template, nonlocals=list(local.nonlocals), globals_=list(local.globals),
            **replacements)

    # -- if ---------------------------------------------------------------------------------
    def visit_If(self, node):
        node, local = self._local_state(node)
        state = [_names_tuple(local.names)]
        if local.resets:        # the variables after the outputs are only reset
            state.append(ast_util.constant_node(len(local.outputs)))
        cond_scope = anno.getanno(node, anno.Static.COND_SCOPE)
        if not node.orelse:
            return _reading(self._statement(
                _IF_WITHOUT_ELSE, local, body_name=self._new("if_body"), body=node.body,
                test=node.test, state=state), cond_scope)
        return _reading(self._statement(
            _IF, local, body_name=self._new("if_body"), body=node.body,
            orelse_name=self._new("else_body"), orelse=node.orelse, test=node.test,
            state=state), cond_scope)

    # -- loops --------------------------------------------------------------------------------
    def _loop_state(self, node, local):
        self.state[_Function].carried_by_loops.update(local.outputs)
        return [_names_tuple(local.names)] + _loop_options(node)

    def visit_While(self, node):
        node, local = self._local_state(node)
        state = self._loop_state(node, local)
        return _reading(self._statement(
            _WHILE, local, body_name=self._new("loop_body"), body=node.body,
            test_name=self._new("loop_test"), test=node.test, state=state),
            activity.Scope(None) if len(state) == 1 else None) + node.orelse

    def visit_For(self, node):
        extra_test = anno.getanno(node, anno.Basic.EXTRA_LOOP_TEST, None)
        node, local = self._local_state(node)
        test_def, test_name = [], "None"
        if extra_test is not None:
            test_name = self._new("extra_test")
            test_def = templates.replace(_EXTRA_TEST, test_name=test_name, test=extra_test)
        state = self._loop_state(node, local)
        loop = _reading(self._statement(
            _FOR, local, body_name=self._new("loop_body"), iterate=self._new("itr"),
            target=node.target, body=node.body, iter_=node.iter, extra_test=test_name,
            state=state), anno.getanno(node, anno.Static.ITERATE_SCOPE) if len(state) == 1
            else None)
        return loop[:-1] + test_def + loop[-1:] + node.orelse


def _reading(statements, scope):
    """`statements`, the last of which calls the operator, that call annotated with the
    SCOPE of the user's expression in it (a while's none: its test is a function of its
    own; None where loop options hold expressions too): the checked-loads pass then
    skips it when that reads none of the names it checks."""
    if scope is not None:
        anno.setanno(statements[-1], anno.Static.SCOPE, scope)
    return statements


def _names_tuple(names):
    return ast_util.tuple_node([ast_util.constant_node(n) for n in names])


def _loop_options(node):
    options = anno.getanno(node, anno.Basic.DIRECTIVES, {}).get(directives.LOOP_OPTIONS)
    if not options:
        return []
    return [gast.Dict(keys=[gast.Constant(value=k, kind=None) for k in options],
                      values=list(options.values()))]


def _unbound_nonlocals(own_symbols, walrus):
    """Names declared nonlocal in the functions nested in a function (`own_symbols`: its
    ast_util.own_body_symbols) that no function between them and it (it included)
    binds. One walk of each function's own body."""
    unbound = set()

    def scan(fn, enclosing_bound):
        bound, declared, nested = ast_util.own_body_symbols(fn, walrus)
        unbound.update(name for name in declared if name not in enclosing_bound)
        inner_bound = enclosing_bound | (bound - declared)
        for child in nested:
            scan(child, inner_bound)

    bound, _, nested = own_symbols
    for child in nested:
        scan(child, bound)
    return unbound


def _none_assigned(fn_node):
    """Names the function sets to None (`x = None`, a parameter defaulting to None): a
    loop assigning one may leave it None (its reads are checked)."""
    names = set()
    args = fn_node.args
    positional = args.posonlyargs + args.args
    for arg, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
        if _is_none(default):
            names.add(arg.id)
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        if default is not None and _is_none(default):
            names.add(arg.id)
    for n in visitor.statements(fn_node.body):
        if isinstance(n, gast.Assign) and _is_none(n.value):
            names.update(t.id for t in n.targets if isinstance(t, gast.Name))
    return names


def _is_none(node):
    return isinstance(node, gast.Constant) and node.value is None


class _CheckedLoads(transformer.Base):
    """Reads of variables that may hold no value become `ag__.ld(x)`: those set to
    ag__.Undefined (where not defined on every path to the statement: statements that kept
    their analysis annotations know), and those a loop may leave None (every read but an
    `is None` test, which becomes `ag__.is_none(x)` later). It visits the nodes left
    unconverted (SKIP_PROCESSING) too, skips the statements that read none of those
    variables, and adds no origins.
    """

    def __init__(self, ctx, undefined, optional):
        super().__init__(ctx)
        self.undefined = undefined
        self.optional = optional
        # (a statement whose activity scope reads and deletes none of them is skipped)
        self._checked = frozenset(qual_names.QN(n) for n in set(undefined) | set(optional))
        self._defined_vars = None   # DEFINED_VARS_IN of the innermost statement with it
        self._defined = {}          # id of such a set -> its names, as strings
        self.nested = 0             # inside a def of the user's nested in the function

    def visit_body(self, body):
        new = []
        for stmt in body:
            result = self.visit(stmt)
            new.extend(result if isinstance(result, list) else [result])
        body[:] = new

    def visit(self, node):
        node_type = type(node)
        if node_type in _NOTHING_TO_CHECK:
            return node
        method = _CHECKED_LOADS_VISITS.get(node_type)
        if method is None:
            method = _CHECKED_LOADS_VISITS[node_type] = getattr(
                _CheckedLoads, "visit_" + node_type.__name__, transformer.Base.generic_visit)
        if not isinstance(node, gast.stmt):
            return method(self, node)
        scope = anno.getanno(node, anno.Static.SCOPE, None)
        if scope is not None and node_type not in _DEFINITIONS and \
                scope.read.isdisjoint(self._checked) and \
                scope.deleted.isdisjoint(self._checked):
            return node
        defined = anno.getanno(node, anno.Static.DEFINED_VARS_IN, None)
        if defined is None:
            return method(self, node)
        saved, self._defined_vars = self._defined_vars, defined
        try:
            return method(self, node)
        finally:
            self._defined_vars = saved

    def _is_defined(self, name):
        """Whether `name` is defined on every path to the statement being visited."""
        defined = self._defined_vars
        if defined is None:
            return False
        names = self._defined.get(id(defined))
        if names is None:
            names = self._defined[id(defined)] = {str(qn) for qn in defined}
        return name in names

    def visit_FunctionDef(self, node):
        if anno.hasanno(node, anno.Basic.SKIP_PROCESSING) and not anno.hasanno(
                node, anno.Basic.UNCONVERTED):
            return node
        written = anno.hasanno(node, anno.Basic.WRITTEN)
        if not written:                 # a body function: only its body is the user's
            node.body = self.visit_block(node.body)
            return node
        self.nested += 1
        try:
            return self.generic_visit(node)
        finally:
            self.nested -= 1

    def visit_Delete(self, node):
        """`del x` of such a symbol makes it Undefined again (in a generated function an
        emptied cell would read as a free variable: NameError, not UnboundLocalError)."""
        if self.nested:
            return self.generic_visit(node)
        result = []
        for target in node.targets:
            if isinstance(target, gast.Name) and target.id in self.undefined:
                check = [] if self._is_defined(target.id) else templates.replace(
                    "ag__.ld(name)", name=target.id)
                result += check + templates.replace(
                    _UNDEFINED, name=target.id, label=gast.Constant(value=target.id, kind=None))
            else:
                result.append(gast.Delete(targets=[self.visit(target)]))
        return result

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and (
                node.id in self.optional or
                (node.id in self.undefined and not self._is_defined(node.id))):
            return ast_util.ag_call("ld", [ast_util.name_node(node.id)])
        return node

    def visit_Compare(self, node):
        if len(node.ops) == 1 and isinstance(node.ops[0], (gast.Is, gast.IsNot)) and \
                _is_none(node.comparators[0]) and isinstance(node.left, gast.Name) and \
                node.left.id in self.optional:
            return node                 # `x is None`: the flag of an optional value
        return self.generic_visit(node)

    def visit_Call(self, node):
        func = node.func
        if (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)
                and func.value.id == naming.namespace() and func.attr == "Undefined"):
            return node
        return self.generic_visit(node)


_NOTHING_TO_CHECK = visitor.LEAF_TYPES | {gast.Constant}
# (A def's or class's SCOPE is its own body's: its reads where it stands are elsewhere.)
_DEFINITIONS = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)
_CHECKED_LOADS_VISITS = {}


def transform(node, ctx):
    activity.resolve(node, ctx)
    graphs = cfg.build(node)
    reaching_definitions.resolve(node, ctx, graphs, names=False)
    liveness.resolve(node, ctx, graphs)
    cfg.release(graphs)
    # (the graphs are those of every function and lambda in the tree)
    lambdas = any(type(fn) is gast.Lambda for fn in graphs)
    return ControlFlowTransformer(ctx, lambdas).visit(node)
