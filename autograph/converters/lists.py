"""List mutations become assignments, so the list is part of the loop state.

    l.append(x)     =>   l = ag__.list_append(l, x)
    y = l.pop()     =>   l, y = ag__.list_pop(l)
    l.pop()         =>   l = ag__.list_pop(l)[0]

On a Python list these do exactly what the methods do; a list grown inside a
graph loop is carried as a tensor list (see operators/data_structures.py).
Only lists named by a (qualified) name are rewritten.
"""
import gast

from autograph.pyct import anno
from autograph.pyct import templates
from autograph.pyct import transformer


def _method_call(node, method):
    """(target node, call) if `node` is `<qualified name>.method(...)`, else None."""
    if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr == method and not node.keywords):
        return None
    target = node.func.value
    if not anno.hasanno(target, anno.Basic.QN):
        return None
    return target, node


class ListTransformer(transformer.Base):
    statements_only = True

    def visit_Expr(self, node):
        node = self.generic_visit(node)
        found = _method_call(node.value, "append")
        if found is not None and len(found[1].args) == 1:
            target, call = found
            return templates.replace("target = ag__.list_append(target, element)",
                                     target=target, element=call.args[0])
        found = _method_call(node.value, "pop")
        if found is not None and len(found[1].args) <= 1:
            target, call = found
            return templates.replace("target = ag__.list_pop(target, index)[0]",
                                     target=target, index=_index(call))
        return node

    def visit_Assign(self, node):
        node = self.generic_visit(node)
        found = _method_call(node.value, "pop")
        if found is None or len(node.targets) != 1 or len(found[1].args) > 1:
            return node
        target, call = found
        return templates.replace("target, result = ag__.list_pop(target, index)",
                                 target=target, result=node.targets[0], index=_index(call))


def _index(call):
    return call.args[0] if call.args else gast.Constant(value=None, kind=None)


def transform(node, ctx):
    return ListTransformer(ctx).visit(node)
