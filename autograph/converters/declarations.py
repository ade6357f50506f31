"""Bare annotations (`x: int`) declare `x` a local variable of its function.

    def f(c):                      def f(c):
        if c:                          x: int
            x: int         =>          if c:
            print(x)                       pass
        return x                           print(x)
                                       return x

The declaration is all a bare annotation does in a function (the annotation is never
evaluated), but the control-flow converter moves the statements of an `if` or loop into
functions of their own, where it would declare `x` local to those instead. So each name
annotated without a value is declared once, at the top of the function it belongs to.
"""
import gast

from autograph.pyct import anno
from autograph.pyct import templates
from autograph.pyct import transformer
from autograph.pyct import visitor


class _Function:
    def __init__(self):
        self.declared = {}          # name -> its first annotation


class DeclarationTransformer(transformer.Base):
    statements_only = True

    def visit_FunctionDef(self, node):
        with self.state[_Function] as fn:
            node.body = self.visit_block(node.body)
            declarations = []
            for name, annotation in fn.declared.items():
                declaration = templates.replace("name: annotation", name=name,
                                                annotation=annotation)[0]
                anno.setanno(declaration, anno.Basic.SKIP_PROCESSING, True)
                declarations.append(declaration)
            node.body = declarations + node.body
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        # A class body's annotations are its own (they go to __annotations__).
        node.body = [self.visit(s) if isinstance(s, (gast.FunctionDef, gast.AsyncFunctionDef))
                     else s for s in node.body]
        return node

    def visit_AnnAssign(self, node):
        if node.value is not None or not isinstance(node.target, gast.Name):
            return node
        self.state[_Function].declared.setdefault(node.target.id, node.annotation)
        return gast.Pass()


def transform(node, ctx):
    if not ctx.holds(gast.AnnAssign) or not isinstance(node, gast.FunctionDef) or not any(isinstance(n, gast.AnnAssign) and n.value is None
               for n in visitor.statements([node], into_scopes=True)):
        return node
    return DeclarationTransformer(ctx).visit(node)
