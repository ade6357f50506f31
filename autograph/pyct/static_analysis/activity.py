"""Activity analysis: which symbols each statement, block and function reads and writes.

`resolve(node, context)` annotates (keys from anno.Static), the root with FUNCTIONS (the
functions and lambdas in the tree, outer ones first):
  every statement             SCOPE: what it reads/writes, nested blocks included
  def / class statements      DEF_SCOPE: what the statement does where it stands
                              (binds the name; reads decorators, defaults, bases
                              and the free variables of the body)
  FunctionDef, Lambda         SCOPE (= BODY_SCOPE): the function's own, isolated
                              scope (params, body reads/writes, globals, nonlocals);
                              ARGS_SCOPE: the parameters
  ClassDef                    SCOPE (= BODY_SCOPE): the class body's own scope
  If                          COND_SCOPE, BODY_SCOPE, ORELSE_SCOPE
  While                       COND_SCOPE, BODY_SCOPE, ORELSE_SCOPE
  For                         ITERATE_SCOPE (target and iter), BODY_SCOPE, ORELSE_SCOPE
  With, Try, match_case       BODY_SCOPE (Try: ORELSE_SCOPE too)
  comprehensions              SCOPE: their own scope (their targets stay inside)
and CFG_NODE_SCOPE on the parts of compound statements that are CFG nodes (if
and while tests, for iters and targets, with items, except clauses, match subjects and
cases, function arguments, lambda bodies); `cfg_node_scope(ast_node)` reads the
scope of any CFG node.

Composite names: `a.b = 1` modifies `a.b` (and reads `a`); `a.b.c` read reads
`a`, `a.b` and `a.b.c`; `a[i + 1] = x`, whose target has no QN, modifies `a`.
Calls record the called QN in `calls` (`a.append(x)` reads `a`, `a.append` and
records the call `a.append`).
"""
import gast

from autograph.pyct import anno
from autograph.pyct import ast_util
from autograph.pyct import naming
from autograph.pyct import qual_names
from autograph.pyct import visitor

_DEFS = (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)

_SETS = ("read", "modified", "deleted", "bound", "params", "globals", "nonlocals", "calls")


class Scope:
    """Sets of QN read, modified, deleted, bound, ... in a piece of code.

    modified: written (assigned, augmented, deleted, loop targets, imports).
    bound: simple names this code makes local (assignment, def, class, import,
    params). isolated: a function/class/comprehension scope, whose writes stay
    inside and whose free reads count as reads of the enclosing scope.
    """

    __slots__ = ("parent", "isolated", "kind") + _SETS

    def __init__(self, parent, isolated=False, kind=None):
        self.parent = parent
        self.isolated = isolated
        self.kind = kind  # "function", "lambda", "class", "comprehension" or None
        # The sets of _SETS, in its order (spelled out: one Scope per statement).
        self.read = set()
        self.modified = set()
        self.deleted = set()
        self.bound = set()
        self.params = set()
        self.globals = set()
        self.nonlocals = set()
        self.calls = set()

    @property
    def referenced(self):
        return self.read | self.modified

    @property
    def local_names(self):
        """Simple names local to this scope: bound or params, unless global/nonlocal."""
        names = {qn for qn in self.bound | self.params if not qn.is_composite()}
        return names - self.globals - self.nonlocals

    @property
    def free_reads(self):
        """Reads of symbols whose root name is not local to this scope."""
        local_names = self.local_names
        return {qn for qn in self.read if qn.root not in local_names}

    def copy_from(self, other):
        for name in _SETS:
            setattr(self, name, set(getattr(other, name)))

    def merge_from(self, other):
        # As `for name in _SETS: getattr(self, name).update(getattr(other, name))`, spelled
        # out: every statement's scope is merged into the enclosing one.
        if other.read:
            self.read.update(other.read)
        if other.modified:
            self.modified.update(other.modified)
        if other.deleted:
            self.deleted.update(other.deleted)
        if other.bound:
            self.bound.update(other.bound)
        if other.params:
            self.params.update(other.params)
        if other.globals:
            self.globals.update(other.globals)
        if other.nonlocals:
            self.nonlocals.update(other.nonlocals)
        if other.calls:
            self.calls.update(other.calls)

    @classmethod
    def copy_of(cls, other):
        scope = cls(other.parent, other.isolated, other.kind)
        scope.copy_from(other)
        return scope

    def finalize(self):
        """Passes this scope's effects on to its parent."""
        if self.parent is None:
            return
        if self.isolated:
            self.parent.read.update(self.free_reads)
        else:
            self.parent.merge_from(self)

    def __repr__(self):
        parts = [f"{name}={sorted(map(str, getattr(self, name)))}"
                 for name in _SETS if getattr(self, name)]
        return f"Scope({', '.join(parts)})"


def cfg_node_scope(ast_node):
    """The Scope of what one CFG node (see cfg.py) does, or None."""
    getanno = anno.getanno
    scope = getanno(ast_node, anno.Static.CFG_NODE_SCOPE, None)
    if scope is None:
        scope = getanno(ast_node, anno.Static.DEF_SCOPE, None)
        if scope is None:
            scope = getanno(ast_node, anno.Static.SCOPE, None)
    return scope


def overwritten(qn, written):
    """Whether writing the symbols in `written` overwrites qn (it, or an owner, is written)."""
    if qn in written:
        return True
    if not qn.is_composite():
        return False
    return any(owner in written for owner in qn.owner_set)


def signature_parts(fn_node):
    """The expressions of a def or lambda evaluated where it is defined, not when called:
    decorators, defaults, annotations."""
    args = fn_node.args
    params = [a for a in args.posonlyargs + args.args + args.kwonlyargs
              + [args.vararg, args.kwarg] if a is not None]
    parts = list(getattr(fn_node, "decorator_list", ())) + args.defaults
    parts += [d for d in args.kw_defaults if d is not None]
    parts += [a.annotation for a in params if a.annotation is not None]
    if getattr(fn_node, "returns", None) is not None:
        parts.append(fn_node.returns)
    return parts


def resolve(node, context=None, parent_scope=None):
    """Annotates `node` (a function, or any tree) with scopes; returns `node`.

    The walk resolves qualified names as it goes (it annotates the names, attributes and
    subscripts it meets with their QN, as qual_names.resolve does, and the parameters).
    `context` is unused, for symmetry with passes.
    """
    del context
    # A function analysed on its own still reads its decorators and default values (and
    # binds its name) in the code around it: a scope that stands for that code.
    analyzer = _Analyzer(parent_scope or Scope(None, isolated=True, kind="module"))
    analyzer.visit(node)
    anno.setanno(node, anno.Static.FUNCTIONS, analyzer.functions)
    return node


class _Analyzer(ast_util.NodeVisitor):

    def __init__(self, parent_scope):
        self.scope = parent_scope
        self.functions = []             # the functions and lambdas met, outer ones first

    def _enter(self, isolated=False, kind=None):
        self.scope = Scope(self.scope, isolated, kind)
        return self.scope

    def _exit(self):
        scope = self.scope
        scope.finalize()
        self.scope = scope.parent
        return scope

    def _scoped(self, nodes, owner=None, key=None):
        """Visits nodes (one or a list) in a new child scope; annotates owner[key]."""
        self._enter()
        for n in nodes if isinstance(nodes, list) else [nodes]:
            if n is not None:
                self.visit(n)
        scope = self._exit()
        if owner is not None:
            anno.setanno(owner, key, scope)
        return scope

    def visit(self, node):
        """Dispatches on the node type (see _handler): a statement is visited in a scope
        of its own, annotated on it (SCOPE, or DEF_SCOPE for def and class statements)
        and merged into the enclosing one."""
        handler = _handlers.get(type(node))
        if handler is None:
            handler = _handler(type(node))
        handler(self, node)

    def generic_visit(self, node):
        """Visits the children of `node` (as visitor.children lists them, in order).
        Names, the commonest, are tracked here, and handlers called directly: this is
        most of the walk."""
        values = node.__dict__
        fields = _known_fields.get(type(node))
        for field in fields if fields is not None else visitor.child_fields(type(node)):
            value = values.get(field)
            if value is None:
                continue
            for child in value if type(value) is list else (value,):
                cls = type(child)
                if cls is _Name:
                    qn = _name_qn(child)
                    ctx = child.ctx
                    if isinstance(ctx, _Load):
                        self.scope.read.add(qn)
                    else:
                        _track(self.scope, ctx, qn)
                elif cls not in _NO_CHILDREN and isinstance(child, gast.AST):
                    (_handlers.get(cls) or _handler(cls))(self, child)

    def _nothing(self, node):
        pass

    # Symbols.

    def visit_Name(self, node):
        _track(self.scope, node.ctx, _name_qn(node))

    def _visit_composite(self, node):
        self.generic_visit(node)
        qn = _composite_qn(node)
        if qn is not None:
            _track(self.scope, node.ctx, qn)
        elif isinstance(node.ctx, (gast.Store, gast.Del)):
            base = node.value
            while not anno.hasanno(base, anno.Basic.QN) and isinstance(
                    base, (gast.Attribute, gast.Subscript)):
                base = base.value
            if anno.hasanno(base, anno.Basic.QN):
                self.scope.modified.add(anno.getanno(base, anno.Basic.QN))

    visit_Attribute = visit_Subscript = _visit_composite

    def visit_Call(self, node):
        self.generic_visit(node)
        qn = anno.getanno(node.func, anno.Basic.QN, None)
        if qn is not None:
            self.scope.calls.add(qn)
            if node.args and _is_converted_call(qn):     # ag__.converted_call(f, ...)
                called = anno.getanno(node.args[0], anno.Basic.QN, None)
                if called is not None:
                    self.scope.calls.add(called)

    def visit_NamedExpr(self, node):
        self.visit(node.value)
        target_scope = self.scope
        while target_scope.kind == "comprehension":  # PEP 572: binds outside
            target_scope = target_scope.parent
        qn = _name_qn(node.target)
        target_scope.modified.add(qn)
        target_scope.bound.add(qn)

    # Simple statements.

    def visit_AugAssign(self, node):
        self.visit(node.value)
        self.visit(node.target)
        if anno.hasanno(node.target, anno.Basic.QN):
            self.scope.read.add(anno.getanno(node.target, anno.Basic.QN))

    def visit_AnnAssign(self, node):
        self.visit(node.annotation)
        if node.value is not None:
            self.visit(node.value)
            self.visit(node.target)
        elif isinstance(node.target, gast.Name):    # `x: int` makes x local, unassigned
            self.scope.bound.add(_name_qn(node.target))

    def visit_Global(self, node):
        self.scope.globals.update(qual_names.QN(n) for n in node.names)

    def visit_Nonlocal(self, node):
        self.scope.nonlocals.update(qual_names.QN(n) for n in node.names)

    def visit_Import(self, node):
        for alias in node.names:
            qn = qual_names.QN(alias.asname or alias.name.split(".")[0])
            self.scope.modified.add(qn)
            self.scope.bound.add(qn)

    visit_ImportFrom = visit_Import

    # Functions, classes and comprehensions.

    def _visit_params(self, fn_node, fn_scope):
        args = fn_node.args
        args_scope = Scope(fn_scope, isolated=True)
        for arg in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            if arg is not None:
                args_scope.params.add(_name_qn(arg))
        fn_scope.params |= args_scope.params
        fn_scope.bound |= args_scope.params
        anno.setanno(fn_node, anno.Static.ARGS_SCOPE, args_scope)
        anno.setanno(args, anno.Static.CFG_NODE_SCOPE, args_scope)

    def _set_own_scope(self, node, scope):
        anno.setanno(node, anno.Static.SCOPE, scope)
        anno.setanno(node, anno.Static.BODY_SCOPE, scope)

    def visit_FunctionDef(self, node):
        for part in signature_parts(node):
            self.visit(part)
        name = qual_names.QN(node.name)
        self.scope.modified.add(name)
        self.scope.bound.add(name)
        self.functions.append(node)
        fn_scope = self._enter(isolated=True, kind="function")
        self._visit_params(node, fn_scope)
        for stmt in node.body:
            self.visit(stmt)
        self._set_own_scope(node, self._exit())

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        for part in signature_parts(node):
            self.visit(part)
        self.functions.append(node)
        fn_scope = self._enter(isolated=True, kind="lambda")
        self._visit_params(node, fn_scope)
        self._scoped(node.body, node.body, anno.Static.CFG_NODE_SCOPE)
        self._set_own_scope(node, self._exit())

    def visit_ClassDef(self, node):
        for part in node.decorator_list + node.bases + node.keywords:
            self.visit(part)
        name = qual_names.QN(node.name)
        self.scope.modified.add(name)
        self.scope.bound.add(name)
        self._enter(isolated=True, kind="class")
        for stmt in node.body:
            self.visit(stmt)
        self._set_own_scope(node, self._exit())

    def _visit_comprehension(self, node, *result_fields):
        generators = node.generators
        self.visit(generators[0].iter)  # Evaluated in the enclosing scope.
        self._enter(isolated=True, kind="comprehension")
        for i, generator in enumerate(generators):
            if i > 0:
                self.visit(generator.iter)
            self.visit(generator.target)
            for condition in generator.ifs:
                self.visit(condition)
        for field in result_fields:
            self.visit(getattr(node, field))
        anno.setanno(node, anno.Static.SCOPE, self._exit())

    def visit_ListComp(self, node):
        self._visit_comprehension(node, "elt")

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node):
        self._visit_comprehension(node, "key", "value")

    # Compound statements.

    def visit_If(self, node):
        cond = self._scoped(node.test, node, anno.Static.COND_SCOPE)
        anno.setanno(node.test, anno.Static.CFG_NODE_SCOPE, cond)
        self._scoped(node.body, node, anno.Static.BODY_SCOPE)
        self._scoped(node.orelse, node, anno.Static.ORELSE_SCOPE)

    visit_While = visit_If

    def visit_For(self, node):
        self._enter()
        # A converter may add a test that also ends the loop (e.g. `not break_`);
        # it is evaluated at the loop head, with the iterator.
        extra_test = anno.getanno(node, anno.Basic.EXTRA_LOOP_TEST, None)
        self._scoped([node.iter, extra_test], node.iter, anno.Static.CFG_NODE_SCOPE)
        self._scoped(node.target, node.target, anno.Static.CFG_NODE_SCOPE)
        anno.setanno(node, anno.Static.ITERATE_SCOPE, self._exit())
        self._scoped(node.body, node, anno.Static.BODY_SCOPE)
        self._scoped(node.orelse, node, anno.Static.ORELSE_SCOPE)

    visit_AsyncFor = visit_For

    def visit_With(self, node):
        for item in node.items:
            self._scoped([item.context_expr, item.optional_vars], item,
                         anno.Static.CFG_NODE_SCOPE)
        self._scoped(node.body, node, anno.Static.BODY_SCOPE)

    visit_AsyncWith = visit_With

    def visit_Try(self, node):
        self._scoped(node.body, node, anno.Static.BODY_SCOPE)
        for handler in node.handlers:
            self._scoped([handler.type, handler.name], handler, anno.Static.CFG_NODE_SCOPE)
            for stmt in handler.body:
                self.visit(stmt)
        self._scoped(node.orelse, node, anno.Static.ORELSE_SCOPE)
        for stmt in node.finalbody:
            self.visit(stmt)

    visit_TryStar = visit_Try

    def visit_Match(self, node):
        self._scoped(node.subject, node.subject, anno.Static.CFG_NODE_SCOPE)
        for case in node.cases:
            self._scoped([case.pattern, case.guard], case, anno.Static.CFG_NODE_SCOPE)
            self._scoped(case.body, case, anno.Static.BODY_SCOPE)

    def _bind_pattern_name(self, name):
        if name is not None:
            qn = qual_names.QN(name)
            self.scope.modified.add(qn)
            self.scope.bound.add(qn)

    def visit_MatchAs(self, node):
        self.generic_visit(node)
        self._bind_pattern_name(node.name)

    def visit_MatchStar(self, node):
        self._bind_pattern_name(node.name)

    def visit_MatchMapping(self, node):
        self.generic_visit(node)
        self._bind_pattern_name(node.rest)


def _is_converted_call(qn):
    return (qn.has_attr() and qn.attr == "converted_call" and not qn.parent.is_composite()
            and str(qn.parent) == naming.namespace())


def _track(scope, ctx, qn):
    """Records in `scope` the use of `qn` in the context `ctx` (of a Name, Attribute or
    Subscript)."""
    if isinstance(ctx, gast.Load):
        scope.read.add(qn)
    elif isinstance(ctx, gast.Store):
        scope.modified.add(qn)
        if not qn.is_composite():
            scope.bound.add(qn)
    elif isinstance(ctx, gast.Del):
        scope.modified.add(qn)
        scope.deleted.add(qn)


def _name_qn(node):
    """The QN of the Name `node`, annotated on it (a parameter's annotation is an
    expression of the code around the function, visited there)."""
    qn = qual_names.QN(node.id)
    anno.setanno(node, _QN, qn)
    return qn


def _composite_qn(node):
    """The QN of the Attribute or Subscript `node` whose children were visited (their QNs
    annotated), annotated on it; None if it has none (qual_names' rules)."""
    base = anno.getanno(node.value, _QN, None) if type(node.value) in _QUALIFIED else None
    qn = None
    if base is not None:
        if type(node) is gast.Attribute:
            qn = qual_names.QN(base, attr=node.attr)
        else:
            index = qual_names.subscript_qn(node.slice)
            if index is not None:
                qn = qual_names.QN(base, subscript=index)
    if qn is not None:
        anno.setanno(node, _QN, qn)
    elif anno.hasanno(node, _QN):
        anno.delanno(node, _QN)         # (of an earlier form of the tree)
    return qn


_QUALIFIED = frozenset((gast.Name, gast.Attribute, gast.Subscript))


_NO_CHILDREN = visitor.LEAF_TYPES | {gast.Constant}  # Nothing to visit in these.
_known_fields = visitor.known_child_fields
_Name, _Load, _QN = gast.Name, gast.Load, anno.Basic.QN
_handlers = {}  # node type -> function(analyzer, node)


def _handler(cls):
    """The function that visits nodes of type `cls`: its visit_ method of _Analyzer (or
    generic_visit; nothing for a Constant, which has no children), in a scope of its own
    for a statement."""
    method = vars(_Analyzer).get("visit_" + cls.__name__)
    if method is None:
        method = _Analyzer._nothing if cls is gast.Constant else _Analyzer.generic_visit
    if issubclass(cls, gast.stmt):
        key = anno.Static.DEF_SCOPE if issubclass(cls, _DEFS) else anno.Static.SCOPE
        method = _in_own_scope(method, key)
    _handlers[cls] = method
    return method


def _in_own_scope(method, key):
    def visit_statement(self, node):
        parent = self.scope
        scope = self.scope = Scope(parent)
        method(self, node)
        self.scope = parent
        parent.merge_from(scope)  # scope.finalize(): not isolated, has a parent.
        anno.setanno(node, key, scope)
    return visit_statement
