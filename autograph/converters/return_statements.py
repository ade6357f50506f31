"""Early and nested `return`s become a flag and a return-value slot.

    def f(x):                          def f(x):
        for y in x:                        do_return = False
            if y > 0:                      retval_ = ag__.UndefinedReturnValue()
                return y       =>          for y in x:          # extra test: not do_return
        return -1                              if y > 0:
                                                   retval_ = y
                                                   do_return = True
                                           if not do_return:
                                               retval_ = -1
                                               do_return = True
                                           return ag__.ret(retval_)

Statements after a return are guarded by `if not do_return:`, loops stop on it (or, after
an `if` one branch of which always returns, go into the other branch: see guards.py).
A function that may fall off its end gets an explicit `return None` there first. A
function whose only `return` is its last statement is left as it is.
"""
import gast

from autograph.converters import guards
from autograph.pyct import anno
from autograph.pyct import templates
from autograph.pyct import visitor


def _returns_of(fn_node):
    """The Return nodes of a function, not of functions nested in it."""
    return [n for n in visitor.statements(fn_node.body) if type(n) is gast.Return]


def needs_lowering(fn_node):
    returns = _returns_of(fn_node)
    if not returns:
        return False
    return not (len(returns) == 1 and fn_node.body[-1] is returns[0])


class _Function:
    def __init__(self):
        self.do_return = None
        self.retval = None
        self.tested_by_loop = False     # a loop test reads do_return
        self.lowered = 0                # returns lowered so far (each assigns do_return)


class ReturnTransformer(guards.GuardingTransformer):
    statements_only = True

    def visit_Return(self, node):
        fn = self.state[_Function]
        if fn.level == 0 or fn.do_return is None:
            return node
        self.record_jump()
        fn.lowered += 1
        value = node.value if node.value is not None else gast.Constant(value=None, kind=None)
        # The value first: a `return g()` whose g raises (caught around the return) has
        # not returned.
        return templates.replace("retval = value\ndo_return = True", do_return=fn.do_return,
                                 retval=fn.retval, value=value)

    def _lowering(self):
        fn = self.state[_Function]
        return fn.level > 0 and fn.do_return is not None

    def _lowers_a_return(self, loop, field):
        """Visits the loop's blocks; whether a return in its `field` block was lowered
        (the block assigns do_return: the loop must test it)."""
        fn = self.state[_Function]
        lowered = fn.lowered if fn.level else 0
        self.visit_nested_blocks(loop, (field,))
        inside = self._lowering() and fn.lowered > lowered
        self.visit_nested_blocks(loop, ("orelse",))
        return inside

    def visit_While(self, node):
        if isinstance(node.test, gast.Constant) and node.test.value:
            node._ag_collapse = "unreachable"   # `while True:` without break: only a
                                                # return leaves it (break was lowered first)
        node.test = self.visit(node.test)
        if self._lowers_a_return(node, "body"):
            self.state[_Function].tested_by_loop = True
            node.test = templates.replace_as_expression(
                "not do_return and test", do_return=self.state[_Function].do_return,
                test=node.test)
        return node

    def visit_For(self, node):
        node.iter = self.visit(node.iter)
        if self._lowers_a_return(node, "body"):
            self.state[_Function].tested_by_loop = True
            extra = templates.replace_as_expression(
                "not do_return", do_return=self.state[_Function].do_return)
            existing = anno.getanno(node, anno.Basic.EXTRA_LOOP_TEST, None)
            if existing is not None:
                extra = templates.replace_as_expression("a and b", a=extra, b=existing)
            anno.setanno(node, anno.Basic.EXTRA_LOOP_TEST, extra)
        return node

    def visit_FunctionDef(self, node):
        with self.state[_Function] as fn:
            if not needs_lowering(node):
                node.body, _ = self._visit_unlowered(node.body)
                return node
            fn.do_return = self.ctx.namer.new_symbol("do_return", ())
            fn.retval = self.ctx.namer.new_symbol("retval_", ())
            # Falling off the end returns None: say so, so that a tensor condition
            # deciding between a value and None is an error, not a silent fill value.
            # (Dropped as unreachable when every path returns.)
            if not isinstance(node.body[-1], gast.Return):
                node.body.append(gast.Return(value=None))
            body, _ = self.visit_block_guarded(node.body, fn.do_return, is_target=True)
            if not (self.last_flag_read() or fn.tested_by_loop):
                # Every return ended up in an if/else (see guards.py): nothing tests
                # do_return, so it is not needed at all.
                body = guards.drop_assignments(body, fn.do_return)
                node.body = templates.replace(
                    """
                    retval = ag__.UndefinedReturnValue()
                    body
                    return ag__.ret(retval)
                    """, retval=fn.retval, body=body)
                return node
            node.body = templates.replace(
                """
                do_return = False
                retval = ag__.UndefinedReturnValue()
                body
                return ag__.ret(retval)
                """, do_return=fn.do_return, retval=fn.retval, body=body)
        return node

    def _visit_unlowered(self, body):
        with self.state[guards._Block] as block:
            block.is_target = True
            return self.visit_block_guarded(body)

    visit_AsyncFunctionDef = visit_FunctionDef


def transform(node, ctx):
    if isinstance(node, gast.FunctionDef) and not needs_lowering(node) \
            and not _defines_functions(node):
        return node                 # nothing to lower (the usual case: skip the walk)
    return ReturnTransformer(ctx).visit(node)


def _defines_functions(fn_node):
    """Whether a def or class statement is nested in the function (statements only)."""
    stack = list(fn_node.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            return True
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(n, field, None)
            if isinstance(block, list):
                stack.extend(block)
    return False
