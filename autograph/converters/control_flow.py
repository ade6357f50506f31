"""`if`, `while` and `for` become calls of `ag__.if_stmt`, `while_stmt`, `for_stmt`.

    if x > 0:                   def get_state():
        x = x * 2                   return (x,)
    else:                       def set_state(vars_):
        x = -x          =>          nonlocal x
                                    (x,) = vars_
                                def if_body():
                                    nonlocal x
                                    x = x * 2
                                def else_body():
                                    nonlocal x
                                    x = -x
                                ag__.if_stmt(x > 0, if_body, else_body, get_state, set_state, ('x',))

The state of a statement is what its bodies modify and later code reads
(liveness), plus attributes/items of existing objects it modifies. The bodies
become local functions that share the state with the enclosing function
(`nonlocal`); a symbol of the state that may be unset before the statement is
first set to `ag__.Undefined('x')`, and later reads of it check it (`ag__.ld`).
Loops carry as state also what the next iteration or the loop test reads.
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


class _Function:
    def __init__(self):
        self.scope = None
        self.undefined = set()        # names set to ag__.Undefined in this function
        self.closure_writes = {}      # local function name -> enclosing names it writes
        self.shared = set()           # names generated functions declare nonlocal
        self.enclosing_state = []     # state of the statements being converted, outermost first
        self.has_closures = True      # a lambda or def may be nested in the function


def _unbound_nonlocals(fn_node, walrus):
    """Names declared nonlocal in functions nested in fn_node that no function between
    them and fn_node (fn_node included) binds. One walk of each function's own body."""
    unbound = set()

    def scan(fn, enclosing_bound):
        bound, declared, nested = ast_util.own_body_symbols(fn, walrus)
        unbound.update(name for name in declared if name not in enclosing_bound)
        inner_bound = enclosing_bound | (bound - declared)
        for child in nested:
            scan(child, inner_bound)

    bound, _, nested = ast_util.own_body_symbols(fn_node, walrus)
    for child in nested:
        scan(child, bound)
    return unbound


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


class ControlFlowTransformer(transformer.Base):
    statements_only = True

    # -- functions ----------------------------------------------------------------------
    def visit_FunctionDef(self, node):
        functions = self.state[_Function]
        # A nested function may call its siblings and itself, defined around it.
        around = dict(functions.value.closure_writes) if functions.level else {}
        with functions as fn:
            fn.scope = anno.getanno(node, anno.Static.SCOPE)
            fn.has_closures = _has_closures(node, self.ctx.info.source_code)
            fn.closure_writes = {**around, **_closure_writes(node)}
            maybe_unbound = reaching_definitions.maybe_unbound_reads(node, fn.scope)
            node.body = self.visit_block(node.body)
            # A variable the generated functions share (nonlocal) must be bound in a
            # function around them; one whose every assignment moved into generated
            # functions that do not enclose each other starts undefined here.
            unbound = []
            if fn.shared - ast_util.bound_names(node, self.ctx.may_walrus):
                unbound = sorted(_unbound_nonlocals(node, self.ctx.may_walrus)
                                 - {str(q) for q in fn.scope.nonlocals}
                                 - {str(q) for q in fn.scope.globals})
            # (a parameter has a value on entry: checked, not reset)
            params = {str(qn) for qn in fn.scope.params}
            fn.undefined.update(maybe_unbound & params)
            unbound = sorted(set(unbound) | (maybe_unbound - fn.undefined))
            if unbound:
                node.body = ast_util.after_docstring(node.body, self._undefined_inits(
                    [qual_names.QN(n) for n in unbound]))
            if fn.undefined:
                _CheckedLoads(fn.undefined).visit_body(node.body)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

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
    def _modified(self, *scopes, live=frozenset()):
        """What the blocks modify, including enclosing variables written (through nonlocal)
        by local functions they use: calling one may write them; and attributes and items
        of local objects whose methods they call, which the blocks or later code (`live`)
        read."""
        fn = self.state[_Function]
        modified = set()
        for scope in scopes:
            modified |= scope.modified
            for used in scope.read:
                modified |= fn.closure_writes.get(used, set())
        # A method called on a local object may assign its attributes (`clock.tick()`
        # sets clock.t): the attributes and items of it that the blocks or later code read
        # may change ("soft" state: written back only if the value changed). Not what is
        # called, nor objects whose attributes are read in turn (`c.v` of `c.v.read()`).
        called = {qn for scope in scopes for qn in scope.calls}
        receivers = {qn.parent for qn in called
                     if qn.is_composite() and not qn.parent.is_composite()}
        receivers &= fn.scope.local_names
        soft = set()
        if receivers:
            reads = set(live).union(*(scope.read for scope in scopes))
            prefixes = {owner for qn in reads | called for owner in qn.owner_set}
            soft = {qn for qn in reads if qn.is_composite() and qn.root in receivers
                    and qn not in called and qn not in prefixes} - modified
        return modified | soft, soft

    def _visit_inside(self, node, state):
        """Converts the statements nested in `node`. Its state counts as live for them:
        its get_state reads it, so a nested statement must not leave a branch's value in it."""
        fn = self.state[_Function]
        fn.enclosing_state.append(frozenset(state))
        try:
            return self.generic_visit(node)
        finally:
            fn.enclosing_state.pop()

    def _state(self, node, modified, live, read=frozenset(), reset=frozenset(),
                deleted=frozenset()):
        """(state symbols, number of them that are outputs, nonlocal names, global names,
        undefined, maybe undefined)."""
        fn = self.state[_Function]
        # `d[k]` whose key changes inside the statement is no fixed slot: carry `d`.
        varying = {qn for qn in modified if not qn.is_composite()}
        modified = {_fixed_prefix(qn, varying) for qn in modified}
        live = live.union(*fn.enclosing_state)
        defined = anno.getanno(node, anno.Static.DEFINED_VARS_IN, frozenset())
        maybe = anno.getanno(node, anno.Static.MAYBE_DEFINED_VARS_IN, frozenset())
        fn_locals = fn.scope.local_names
        state, reset_only = [], []
        for qn in sorted(modified):
            if _is_generated_name(qn):
                continue
            if qn.is_composite():
                if qn.root in maybe or qn.root not in fn_locals:
                    state.append(qn)
            elif qn in live or qn in fn.scope.nonlocals or qn in fn.scope.globals:
                state.append(qn)       # read later, or visible outside the function
            elif qn in maybe and qn in reset:
                reset_only.append(qn)  # a branch reads it first: reset between branch traces
        n_outputs = len(state)
        state += reset_only
        simple = [qn for qn in modified if not qn.is_composite() and not _is_generated_name(qn)]
        declared_global = {qn for qn in simple if qn in fn.scope.globals}
        outer = {qn for qn in simple if qn in fn.scope.nonlocals}
        nonlocal_names = {qn for qn in simple if qn in fn_locals and (qn in state or qn in maybe)}
        nonlocal_names |= outer
        if fn.has_closures:
            # A variable a lambda or def in the block reads stays the function's own (late
            # binding: `fns.append(lambda: i)` in a loop sees the last `i`, as in Python).
            captured = _captured_names(node)
            nonlocal_names |= {qn for qn in simple if qn in fn_locals and str(qn) in captured}
        fn.shared.update(str(qn) for qn in nonlocal_names)
        undefined = [qn for qn in state if not qn.is_composite() and qn not in maybe
                     and qn in fn_locals]
        # An attribute or item the statement creates may not exist before it; a name it
        # deletes may not exist after a branch.
        maybe_undefined = [qn for qn in state if qn in deleted or qn not in defined and (
            qn in maybe if not qn.is_composite() else qn not in maybe)]
        return (state, n_outputs, sorted(nonlocal_names), sorted(declared_global), undefined,
                maybe_undefined)

    def _new(self, root):
        return self.ctx.namer.new_symbol(root, ())

    def _accessors(self, state, nonlocal_names, global_names, maybe_undefined,
                   soft=frozenset()):
        """Statements defining get_state/set_state, and the names to pass.

            def get_state():                def set_state(vars_):
                return (a, ag__.ldu(...))       nonlocal a, b
                                                (a, b) = vars_

        Only a state with attributes or items (`self.x`, `d['k']`) needs them: plain
        variables are declared nonlocal or global in the body functions, and the
        operators read and write them through the closure (operators.closure_state).
        """
        if not any(qn.is_composite() for qn in state):
            return [], "None", "None"
        get_name, set_name, vars_name = self._new("get_state"), self._new("set_state"), \
            self._new("vars_")
        values = [ast_util.ag_call("ldu", [
            gast.Lambda(args=ast_util.arguments(), body=qn.ast()),
            gast.Constant(value=str(qn), kind=None)])
                  if qn in maybe_undefined or qn in soft else qn.ast() for qn in state]
        targets, write_back = [], []
        for qn in state:
            if qn not in soft:
                targets.append(_store_target(qn))
                continue
            temp = self._new("value")           # written back only if it changed
            targets.append(ast_util.name_node(temp, gast.Store()))
            key = (gast.Constant(value=qn.attr, kind=None) if qn.has_attr()
                   else qn.subscript.ast())
            write_back.append(gast.Expr(value=ast_util.ag_call("write_back", [
                qn.parent.ast(), key, ast_util.name_node(temp),
                gast.Constant(value=qn.has_attr(), kind=None)])))
        get_state = ast_util.function_def(
            get_name, [], [gast.Return(value=gast.Tuple(elts=values, ctx=gast.Load()))])
        set_state = ast_util.function_def(
            set_name, [vars_name],
            [gast.Assign(targets=[gast.Tuple(elts=targets, ctx=gast.Store())],
                         value=ast_util.name_node(vars_name), type_comment=None)]
            + write_back,
            [str(n) for n in nonlocal_names], [str(n) for n in global_names])
        for n in (get_state, set_state):
            anno.setanno(n, anno.Basic.SKIP_PROCESSING, True)
        return [get_state, set_state], get_name, set_name

    def _body_function(self, name_root, body, nonlocal_names, global_names, params=()):
        name = self._new(name_root)
        node = ast_util.function_def(name, list(params), body,
                                     [str(n) for n in nonlocal_names],
                                     [str(n) for n in global_names])
        return [node], name

    def _undefined_inits(self, undefined):
        self.state[_Function].undefined.update(str(qn) for qn in undefined)
        return [gast.Assign(targets=[_store_target(qn)], value=ast_util.ag_call(
            "Undefined", [gast.Constant(value=str(qn), kind=None)]), type_comment=None)
            for qn in undefined]

    @staticmethod
    def _names_tuple(state):
        return gast.Tuple(elts=[gast.Constant(value=str(qn), kind=None) for qn in state],
                          ctx=gast.Load())

    def _loop_options(self, node):
        options = anno.getanno(node, anno.Basic.DIRECTIVES, {}).get(directives.LOOP_OPTIONS)
        if not options:
            return gast.Dict(keys=[], values=[])
        return gast.Dict(keys=[gast.Constant(value=k, kind=None) for k in options],
                         values=list(options.values()))

    # -- if ---------------------------------------------------------------------------------
    def visit_If(self, node):
        # What a branch reads before writing it: a value the other branch's trace must not
        # leave behind (captured before the branches are rewritten).
        branches_live_in = anno.getanno(node, anno.Static.LIVE_VARS_IN_BODY, frozenset())
        if node.orelse:
            branches_live_in |= anno.getanno(node.orelse[0], anno.Static.LIVE_VARS_IN,
                                             frozenset())
        body_scope = anno.getanno(node, anno.Static.BODY_SCOPE)
        orelse_scope = anno.getanno(node, anno.Static.ORELSE_SCOPE)
        live_out = anno.getanno(node, anno.Static.LIVE_VARS_OUT)
        modified, soft = self._modified(body_scope, orelse_scope, live=live_out)
        read = body_scope.read | orelse_scope.read
        state, n_outputs, nonlocals, globals_, undefined, maybe_undefined = self._state(
            node, modified, live_out, read, branches_live_in,
            body_scope.deleted | orelse_scope.deleted)
        node = self._visit_inside(node, state)
        accessors, get_state, set_state = self._accessors(state, nonlocals, globals_,
                                                          maybe_undefined, soft)
        body_def, body_name = self._body_function("if_body", node.body, nonlocals, globals_)
        if node.orelse:
            else_def, else_name = self._body_function("else_body", node.orelse, nonlocals,
                                                      globals_)
        else:
            else_def, else_name = [], "lambda: None"
        # Symbols after the first n_outputs are only reset between the branch traces.
        args = [node.test, _expr(body_name), _expr(else_name), _expr(get_state),
                _expr(set_state), self._names_tuple(state)]
        if n_outputs < len(state):
            args.append(gast.Constant(value=n_outputs, kind=None))
        call = [gast.Expr(value=ast_util.ag_call("if_stmt", args))]
        return self._undefined_inits(undefined) + accessors + body_def + else_def + call

    # -- while --------------------------------------------------------------------------------
    def visit_While(self, node):
        body_scope = anno.getanno(node, anno.Static.BODY_SCOPE)
        live = (anno.getanno(node, anno.Static.LIVE_VARS_OUT)
                | anno.getanno(node, anno.Static.LIVE_VARS_IN))
        cond_scope = anno.getanno(node, anno.Static.COND_SCOPE)
        modified, soft = self._modified(body_scope, cond_scope, live=live)
        state, _, nonlocals, globals_, undefined, maybe_undefined = self._state(
            node, modified, live, body_scope.read | cond_scope.read)
        node = self._visit_inside(node, state)
        accessors, get_state, set_state = self._accessors(state, nonlocals, globals_,
                                                          maybe_undefined, soft)
        body_def, body_name = self._body_function("loop_body", node.body, nonlocals, globals_)
        test_name = self._new("loop_test")
        test_def = [ast_util.function_def(test_name, [], [gast.Return(value=node.test)])]
        call = [gast.Expr(value=ast_util.ag_call("while_stmt", [
            _expr(test_name), _expr(body_name), _expr(get_state), _expr(set_state),
            self._names_tuple(state), self._loop_options(node)]))]
        return (self._undefined_inits(undefined) + accessors + body_def + test_def + call
                + node.orelse)

    # -- for ----------------------------------------------------------------------------------
    def visit_For(self, node):
        body_scope = anno.getanno(node, anno.Static.BODY_SCOPE)
        extra_test = anno.getanno(node, anno.Basic.EXTRA_LOOP_TEST, None)
        live = (anno.getanno(node, anno.Static.LIVE_VARS_OUT)
                | anno.getanno(node, anno.Static.LIVE_VARS_IN))
        if extra_test is not None:
            live = live | _names_read(extra_test)
        modified, soft = self._modified(body_scope, live=live)
        modified |= _stored_symbols(node.target)
        state, _, nonlocals, globals_, undefined, maybe_undefined = self._state(
            node, modified, live, body_scope.read)
        node = self._visit_inside(node, state)
        accessors, get_state, set_state = self._accessors(state, nonlocals, globals_,
                                                          maybe_undefined, soft)
        itr = self._new("itr")
        body = [gast.Assign(targets=[node.target], value=ast_util.name_node(itr),
                            type_comment=None)] + node.body
        body_def, body_name = self._body_function("loop_body", body, nonlocals, globals_,
                                                  params=[itr])
        if extra_test is not None:
            test_name = self._new("extra_test")
            test_def = [ast_util.function_def(test_name, [], [gast.Return(value=extra_test)])]
        else:
            test_name, test_def = "None", []
        call = [gast.Expr(value=ast_util.ag_call("for_stmt", [
            node.iter, _expr(test_name), _expr(body_name), _expr(get_state),
            _expr(set_state), self._names_tuple(state), self._loop_options(node)]))]
        return (self._undefined_inits(undefined) + accessors + body_def + test_def + call
                + node.orelse)


def _fixed_prefix(qn, varying):
    """The longest prefix of `qn` (itself included) whose subscripts use none of the names
    in `varying`: `d` for `d[k]` or `d[k].x` when k varies."""
    chain = []
    while qn.is_composite():
        chain.append(qn)
        qn = qn.parent
    for prefix in reversed(chain):              # from the root outwards
        if prefix.has_subscript() and prefix.subscript.support_set & varying:
            return prefix.parent
    return chain[0] if chain else qn


def _store_target(qn):
    target = qn.ast()
    templates.set_ctx(target, gast.Store())
    return target


# The stand-ins for accessors and branches a statement does not need.
_EXPRESSIONS = {
    "None": lambda: gast.Constant(value=None, kind=None),
    "lambda: None": lambda: gast.Lambda(args=ast_util.arguments(),
                                        body=gast.Constant(value=None, kind=None)),
    "lambda: ()": lambda: gast.Lambda(args=ast_util.arguments(),
                                      body=gast.Tuple(elts=[], ctx=gast.Load())),
    "lambda _: None": lambda: gast.Lambda(args=ast_util.arguments("_"),
                                          body=gast.Constant(value=None, kind=None)),
}


def _expr(source):
    """A gast expression for a generated name or one of the stand-ins above."""
    build = _EXPRESSIONS.get(source)
    return build() if build is not None else ast_util.name_node(source)


def _stored_symbols(target):
    """The symbols a for-loop target assigns."""
    return {anno.getanno(n, anno.Basic.QN) for n in visitor.walk(target)
            if isinstance(getattr(n, "ctx", None), gast.Store) and anno.hasanno(n, anno.Basic.QN)}


def _is_generated_name(qn):
    return str(qn.root) == naming.namespace()


class _CheckedLoads(gast.NodeTransformer):
    """Reads of symbols that may hold ag__.Undefined become `ag__.ld(x)`.

    Statements that kept their analysis annotations skip the symbols defined on
    every path to them.
    """

    def __init__(self, names):
        self.names = names
        self.defined = frozenset()
        self.nested = 0             # inside a def of the user's nested in the function

    def visit_body(self, body):
        new = []
        for stmt in body:
            result = self.visit(stmt)
            new.extend(result if isinstance(result, list) else [result])
        body[:] = new

    def visit(self, node):
        if isinstance(node, gast.stmt) and anno.hasanno(node, anno.Static.DEFINED_VARS_IN):
            saved = self.defined
            self.defined = {str(qn) for qn in anno.getanno(node, anno.Static.DEFINED_VARS_IN)}
            try:
                return super().visit(node)
            finally:
                self.defined = saved
        return super().visit(node)

    def visit_FunctionDef(self, node):
        if anno.hasanno(node, anno.Basic.SKIP_PROCESSING) and not anno.hasanno(
                node, anno.Basic.UNCONVERTED):                  # get_state / set_state
            return node
        written = anno.hasanno(node, anno.Basic.WRITTEN)
        self.nested += written
        try:
            return self.generic_visit(node)
        finally:
            self.nested -= written

    def visit_Delete(self, node):
        """`del x` of such a symbol makes it Undefined again (in a generated function an
        emptied cell would read as a free variable: NameError, not UnboundLocalError)."""
        if self.nested:
            return self.generic_visit(node)
        result = []
        for target in node.targets:
            if isinstance(target, gast.Name) and target.id in self.names:
                check = [] if target.id in self.defined else templates.replace(
                    "ag__.ld(name)", name=target.id)
                result += check + templates.replace("name = ag__.Undefined(text)",
                                                    name=target.id, text=gast.Constant(
                                                        value=target.id, kind=None))
            else:
                result.append(gast.Delete(targets=[self.visit(target)]))
        return result

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.names and \
                node.id not in self.defined:
            return ast_util.ag_call("ld", [ast_util.name_node(node.id)])
        return node

    def visit_Call(self, node):
        func = node.func
        if (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)
                and func.value.id == naming.namespace() and func.attr in ("Undefined", "ldu")):
            return node
        return self.generic_visit(node)


def transform(node, ctx):
    activity.resolve(node, ctx)
    graphs = cfg.build(node)
    reaching_definitions.resolve(node, ctx, graphs, names=False)
    liveness.resolve(node, ctx, graphs)
    return ControlFlowTransformer(ctx).visit(node)
