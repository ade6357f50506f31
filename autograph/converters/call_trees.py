"""Calls go through `ag__.converted_call`, which converts user functions on the fly.

    y = f(x, k=1)      =>   y = ag__.converted_call(f, (x,), {'k': 1})
    print(*xs)         =>   ag__.converted_call(print, (*ag__.starred(xs),), None)

At run time `converted_call` calls the runtime, numpy, builtins (after mapping
print/len/range/... to their graph-aware versions) and the standard library as
they are, and converts user functions, methods and lambdas (cached) first.
Zero-argument `super()` gets its arguments spelled out (`ag__.super_(__class__,
lambda: self, 'self')`), since the call moves into generated code that no longer sits in
the class body. Builtins that read their caller's frame are called directly, given the
user's function's variables where they would read the frame:

    locals()           =>   ag__.user_locals({'x': lambda: x, ...}, locals_)
    eval(source)       =>   eval(source, globals(), ag__.user_locals({...}, locals_))

(by name only: a local or global of the same name is called as it is).
"""
import builtins
import re
import sys
import types

import gast

from autograph.pyct import anno
from autograph.pyct import ast_util
from autograph.pyct import naming
from autograph.pyct import templates
from autograph.pyct import transformer


def _is_generated_call(node):
    func = node.func
    while isinstance(func, gast.Attribute):
        func = func.value
    return isinstance(func, gast.Name) and func.id == naming.namespace()


# Builtins that read the caller's frame: called from converted_call they would read its.
_FRAME_BUILTINS = ("locals", "vars", "dir", "eval", "exec", "globals", "breakpoint")
# Where one of those or `super` may be called (then the names the code binds are needed).
_FRAME_CALL = re.compile(r"\b(?:%s)\b" % "|".join(["super", *_FRAME_BUILTINS]))


class _Scope:
    """The innermost scope of the user's code around a call: 'function' (a def or lambda
    the user wrote), 'class' (a class body) or 'comprehension'."""

    def __init__(self):
        self.kind = None
        self.node = None
        self.first_param = None
        self.frame_dict = None      # the name of its locals() dict (Python < 3.13), if any


class CallTreeTransformer(transformer.Base):

    def __init__(self, ctx, entity, bound):
        super().__init__(ctx)
        self.entity = entity        # the converted function's node
        self.bound = bound          # names the function binds somewhere (may shadow builtins)

    def _function_scope(self, node, visit_body):
        if not anno.hasanno(node, anno.Basic.WRITTEN):      # a converter's lambda
            visit_body()
            return node
        with self.state[_Scope] as scope:
            scope.kind, scope.node = "function", node
            params = node.args.posonlyargs + node.args.args
            scope.first_param = params[0].id if params else None
            visit_body()
            if scope.frame_dict is not None:
                node.body = ast_util.after_docstring(node.body, templates.replace(
                    "frame_dict = {}", frame_dict=scope.frame_dict))
        return node

    def visit_FunctionDef(self, node):
        def visit_body():
            node.body = self.visit_block(node.body)
        return self._function_scope(node, visit_body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        def visit_body():
            node.body = self.visit(node.body)
        return self._function_scope(node, visit_body)

    def _other_scope(self, node, kind):
        with self.state[_Scope] as scope:
            scope.kind, scope.node = kind, node
            return self.generic_visit(node)

    def visit_ClassDef(self, node):
        return self._other_scope(node, "class")

    def visit_ListComp(self, node):
        return self._other_scope(node, "comprehension")

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp

    def visit_Call(self, node):
        if (isinstance(node.func, gast.Name) and node.func.id == "super" and not node.args
                and not node.keywords and self._is_builtin("super")):
            return self._explicit_super(node)
        if isinstance(node.func, gast.Name) and node.func.id in _FRAME_BUILTINS and \
                self._is_builtin(node.func.id):
            frame_call = self._frame_call(node)
            if frame_call is not None:
                return frame_call
        node = self.generic_visit(node)
        if _is_generated_call(node):
            return node
        args = ast_util.tuple_node([self._unpacked(arg) for arg in node.args])
        if node.keywords:
            kwargs = gast.Dict(keys=[gast.Constant(value=kw.arg, kind=None) if kw.arg else None
                                     for kw in node.keywords],
                               values=[kw.value for kw in node.keywords])
        else:
            kwargs = ast_util.constant_node(None)
        # built directly (the commonest rewrite: a template costs several times more here)
        return ast_util.ag_call("converted_call", [node.func, args, kwargs])

    @staticmethod
    def _unpacked(arg):
        """A call's argument, `*value` as `*ag__.starred(value)` (a tensor list of run-time
        length passes as one argument, which print prints)."""
        if not isinstance(arg, gast.Starred):
            return arg
        arg.value = templates.replace_as_expression("ag__.starred(value)", value=arg.value)
        return arg

    def _explicit_super(self, node):
        fn = self.state[_Scope]
        if fn.level == 0 or fn.kind != "function" or fn.first_param is None:
            return node
        # (the argument read when called: it may have been reassigned or deleted)
        return templates.replace_as_expression(
            "ag__.super_(__class__, lambda: self_, name)", self_=fn.first_param,
            name=gast.Constant(value=fn.first_param, kind=None))

    # -- builtins that read the caller's frame --------------------------------------------
    def _is_builtin(self, name):
        """Whether `name` is the builtin of that name where the function reads it."""
        builtin = getattr(builtins, name)
        return (name not in self.bound
                and (self.ctx.info.namespace or {}).get(name, builtin) is builtin)

    def _frame_call(self, node):
        """The call of a frame builtin, called directly and given the user's frame's
        variables where it would read them; None: a call through converted_call (one that
        reads no frame: `vars(obj)`; or `eval(s)` with `globals` shadowed, refused there)."""
        scope = self.state[_Scope]
        name = node.func.id
        plain = not node.keywords and not any(isinstance(a, gast.Starred) for a in node.args)
        if scope.level and scope.kind == "comprehension" and name != "globals" and plain and \
                not node.args:
            # as written, but without the operators' namespace (a free variable there)
            return templates.replace_as_expression(
                "ag__.without_name(call(), name)", call=name,
                name=gast.Constant(value=naming.namespace(), kind=None))
        if scope.level == 0 or scope.kind != "function" or name in ("globals", "breakpoint"):
            # as written: in a class body, a comprehension; `breakpoint()` stops the debugger
            # in the converted function's frame, the user's variables in view
            return self.generic_visit(node)
        if name in ("locals", "vars", "dir") and plain and not node.args:
            template = ("ag__.user_dir(readers, frame_dict)" if name == "dir" else
                        "ag__.user_locals(readers, frame_dict)")
            return templates.replace_as_expression(
                template, readers=self._readers(scope.node),
                frame_dict=self._frame_dict(scope))
        if name in ("eval", "exec") and plain and len(node.args) == 1:
            if not self._is_builtin("globals"):
                return None
            return templates.replace_as_expression(
                "call(source, globals(), ag__.user_locals(readers, frame_dict))", call=name,
                source=self.visit(node.args[0]), readers=self._readers(scope.node),
                frame_dict=self._frame_dict(scope))
        if name in ("eval", "exec"):
            return self.generic_visit(node)      # given its namespaces: reads no frame
        return None

    def _frame_dict(self, scope):
        """Where `locals()` keeps its dict in a def of the user's, before Python 3.13: one
        dict per call, updated by each `locals()` (so what `exec` writes into it stays);
        None (a new dict each time) since 3.13 (PEP 667) and in lambdas."""
        if sys.version_info >= (3, 13) or not isinstance(scope.node, gast.FunctionDef):
            return "None"
        if scope.frame_dict is None:
            scope.frame_dict = self.ctx.namer.new_symbol("locals_", ())
        return scope.frame_dict

    def _readers(self, fn_node):
        """`{'a': lambda: a, ...}` for the variables `locals()` shows in the user's function
        `fn_node`, in Python's order (that of its code object)."""
        names = [n for n in self._frame_names(fn_node)
                 if n.isidentifier()]            # (not a tool's rewrite's `@py_assert1`)
        return gast.Dict(keys=[gast.Constant(value=n, kind=None) for n in names],
                         values=[gast.Lambda(args=ast_util.arguments(),
                                             body=ast_util.name_node(n)) for n in names])

    def _frame_names(self, fn_node):
        """The local, cell and free variables of the user's def or lambda `fn_node`, from
        its code object: the converted function's own, or one nested in its constants (by
        name and first line). A def in code that cannot run has none (the compiler drops
        it): its parameters and the names it binds, never read."""
        if fn_node is self.entity:
            code = self.ctx.info.code
        else:
            code = self._nested_code(fn_node)
        if code is None:
            args = fn_node.args
            params = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs
                      + [args.vararg, args.kwarg] if a is not None]
            own = ast_util.own_body_symbols(fn_node)[0] if hasattr(fn_node, "name") else ()
            return params + sorted(set(own) - set(params))
        return code.co_varnames + tuple(n for n in code.co_cellvars
                                        if n not in code.co_varnames) + code.co_freevars

    def _nested_code(self, fn_node):
        name = getattr(fn_node, "name", "<lambda>")
        first_line = _first_line(fn_node)
        stack = [self.ctx.info.code]
        while stack and first_line is not None:
            code = stack.pop()
            if code.co_name == name and code.co_firstlineno == first_line:
                return code
            stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        return None


def _first_line(fn_node):
    """The line of the user's file where the code object of the def or lambda `fn_node`
    starts: its first decorator's, or its own (the def's origin, moved up by the lines
    between the decorator and the def: only statements and calls have origins)."""
    origin = anno.getanno(fn_node, anno.Basic.ORIGIN, None)
    if origin is None:
        return None
    above = [d.lineno for d in getattr(fn_node, "decorator_list", ())
             if getattr(d, "lineno", None) is not None]
    lineno = getattr(fn_node, "lineno", None)
    if lineno is None or not above:
        return origin.loc.lineno
    return origin.loc.lineno - max(0, lineno - min(above))


def _bound_names(node):
    """Every name the code binds somewhere (assignments, parameters, defs, imports...)."""
    names = set()
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            names.add(n.id)
        elif isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, gast.alias):
            names.add((n.asname or n.name).partition(".")[0])
        elif isinstance(n, (gast.Global, gast.Nonlocal)):
            names.update(n.names)
        elif isinstance(n, (gast.MatchAs, gast.MatchStar)) and n.name:
            names.add(n.name)
        elif isinstance(n, gast.MatchMapping) and n.rest:
            names.add(n.rest)
    return names


def transform(node, ctx):
    source = ctx.info.source_code
    bound = set()
    if source is None or _FRAME_CALL.search(source):
        bound = _bound_names(node)
    return CallTreeTransformer(ctx, node, bound).visit(node)
