"""Calls go through `ag__.converted_call`, which converts user functions on the fly.

    y = f(x, k=1)      =>   y = ag__.converted_call(f, (x,), {'k': 1})
    print(*xs)         =>   ag__.converted_call(print, (*xs,), None)

At run time `converted_call` calls the runtime, numpy, builtins (after mapping
print/len/range/... to their graph-aware versions) and the standard library as
they are, and converts user functions, methods and lambdas (cached) first.
Zero-argument `super()` gets its arguments spelled out, since the call moves
into generated code that no longer sits in the class body.
"""
import gast

from autograph.pyct import ast_util
from autograph.pyct import templates
from autograph.pyct import transformer


def _is_generated_call(node):
    func = node.func
    while isinstance(func, gast.Attribute):
        func = func.value
    return isinstance(func, gast.Name) and func.id == "ag__"


class _Function:
    def __init__(self):
        self.first_param = None


class CallTreeTransformer(transformer.Base):

    def visit_FunctionDef(self, node):
        with self.state[_Function] as fn:
            params = node.args.posonlyargs + node.args.args
            fn.first_param = params[0].id if params else None
            node.body = self.visit_block(node.body)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        with self.state[_Function] as fn:
            params = node.args.posonlyargs + node.args.args
            fn.first_param = params[0].id if params else None
            node.body = self.visit(node.body)
        return node

    def visit_Call(self, node):
        if (isinstance(node.func, gast.Name) and node.func.id == "super" and not node.args
                and not node.keywords):
            return self._explicit_super(node)
        node = self.generic_visit(node)
        if _is_generated_call(node):
            return node
        args = gast.Tuple(elts=node.args, ctx=gast.Load())
        if node.keywords:
            kwargs = gast.Dict(keys=[gast.Constant(value=kw.arg, kind=None) if kw.arg else None
                                     for kw in node.keywords],
                               values=[kw.value for kw in node.keywords])
        else:
            kwargs = gast.Constant(value=None, kind=None)
        # built directly (the commonest rewrite: a template costs several times more here)
        return ast_util.ag_call("converted_call", [node.func, args, kwargs])

    def _explicit_super(self, node):
        fn = self.state[_Function]
        if fn.level == 0 or fn.first_param is None:
            return node
        return templates.replace_as_expression("super(__class__, self_)",
                                               self_=fn.first_param)


def transform(node, ctx):
    return CallTreeTransformer(ctx).visit(node)
