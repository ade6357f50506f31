"""List mutations become assignments, so the list is part of the loop state.

    l.append(x)          =>   l = ag__.list_append(l, x)
    l.extend(xs)         =>   l = ag__.list_extend(l, xs)
    l.insert(i, x)       =>   l = ag__.list_insert(l, i, x)
    y = l.pop()          =>   l, y = ag__.list_pop(l, None)
    l.pop()              =>   l = ag__.list_pop(l, None)[0]
    total += l.pop()     =>   l, pop_ = ag__.list_pop(l, None)
                              total += pop_

On a Python list these do exactly what the methods do; a list grown inside a
graph loop is carried as a tensor list (see operators/data_structures.py).
Only lists named by a (qualified) name whose root is local to the function are
rewritten (a closure's list stays a method call, or the name would become local).
A `pop()` inside a simple statement is evaluated first, into a temporary, unless
it sits where Python may skip it (`and`/`or`, conditional expressions, lambdas).
"""
import gast

from autograph.pyct import anno
from autograph.pyct import ast_util
from autograph.pyct import qual_names
from autograph.pyct import templates
from autograph.pyct import transformer


class _Function:
    def __init__(self):
        self.node = None
        self.walrus = True
        self._local_names = None

    @property
    def local_names(self):
        """Names the function's own body binds (found on first use: most functions
        call no list method)."""
        if self._local_names is None:
            self._local_names = ast_util.bound_names(self.node, self.walrus)
        return self._local_names


class ListTransformer(transformer.Base):

    statements_only = True

    def visit_FunctionDef(self, node):
        with self.state[_Function] as fn:
            fn.node = node
            fn.walrus = self.ctx.may_walrus
            return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def _list_method(self, node, method, max_args):
        """(target, call) if `node` is `<local qualified name>.method(...)`, else None."""
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                and node.func.attr == method and not node.keywords
                and len(node.args) <= max_args):
            return None
        target = node.func.value
        qn = anno.getanno(qual_names.resolve(target), anno.Basic.QN, None)
        fn = self.state[_Function]
        if qn is None or fn.level == 0 or str(qn.root) not in fn.local_names:
            return None
        return target, node

    def visit_Expr(self, node):
        found = self._list_method(node.value, "append", 1)
        if found is not None and len(found[1].args) == 1:
            target, call = found
            return templates.replace("target = ag__.list_append(target, element)",
                                     target=target, element=call.args[0])
        found = self._list_method(node.value, "extend", 1)
        if found is not None and len(found[1].args) == 1:
            target, call = found
            return templates.replace("target = ag__.list_extend(target, items)",
                                     target=target, items=call.args[0])
        found = self._list_method(node.value, "insert", 2)
        if found is not None and len(found[1].args) == 2:
            target, call = found
            return templates.replace("target = ag__.list_insert(target, i, element)",
                                     target=target, i=call.args[0], element=call.args[1])
        found = self._list_method(node.value, "pop", 1)
        if found is not None:
            target, call = found
            return templates.replace("target = ag__.list_pop(target, index)[0]",
                                     target=target, index=_index(call))
        return self._hoist_pops(node)

    def visit_Assign(self, node):
        found = self._list_method(node.value, "pop", 1)
        if found is None or len(node.targets) != 1:
            return self._hoist_pops(node)
        target, call = found
        return templates.replace("target, result = ag__.list_pop(target, index)",
                                 target=target, result=node.targets[0], index=_index(call))

    def visit_AugAssign(self, node):
        return self._hoist_pops(node)

    visit_AnnAssign = visit_Return = visit_AugAssign

    def visit_If(self, node):
        node = self.generic_visit(node)
        return self._hoist_pops(node, fields=("test",))

    def __init__(self, ctx):
        super().__init__(ctx)
        source = ctx.info.source_code
        self._may_pop = not source or "pop" in source

    def _hoist_pops(self, stmt, fields=None):
        """Moves `l.pop()` calls Python always evaluates out of the statement."""
        if not self._may_pop:
            return stmt
        hoisted = []
        for field in fields or stmt._fields:
            value = getattr(stmt, field, None)
            if isinstance(value, gast.AST) and not isinstance(value, gast.stmt):
                setattr(stmt, field, self._replace_pops(value, hoisted))
        return hoisted + [stmt] if hoisted else stmt

    def _replace_pops(self, node, hoisted):
        if isinstance(node, (gast.Lambda, gast.IfExp, gast.ListComp, gast.SetComp,
                             gast.DictComp, gast.GeneratorExp)):
            return node
        if isinstance(node, gast.BoolOp):
            node.values[0] = self._replace_pops(node.values[0], hoisted)
            return node
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, gast.AST):
                setattr(node, field, self._replace_pops(value, hoisted))
            elif isinstance(value, list):
                value[:] = [self._replace_pops(v, hoisted) if isinstance(v, gast.AST) else v
                            for v in value]
        found = self._list_method(node, "pop", 1)
        if found is None:
            return node
        target, call = found
        name = self.ctx.namer.new_symbol("pop_", ())
        hoisted.extend(templates.replace("target, name = ag__.list_pop(target, index)",
                                         target=target, name=name, index=_index(call)))
        return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def _index(call):
    return call.args[0] if call.args else gast.Constant(value=None, kind=None)


_METHODS = ("append", "pop", "extend", "insert")


def transform(node, ctx):
    source = ctx.info.source_code
    if source and not any(method in source for method in _METHODS):
        return node                 # nothing to rewrite (the usual case: skip the walk)
    return ListTransformer(ctx).visit(node)
