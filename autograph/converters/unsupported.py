"""Constructs that cannot become graph code get a check that names them.

    if x > 0:                                     if x > 0:
        try:                                          ag__.unsupported_in_tensor_control_flow(
            y = f(x)                   =>                 'try', '...')
        except ValueError:                            try:
            y = 0                                         ...

A `try` inside a tensor `if` or loop would catch errors only while tracing,
never when the graph runs, so it is an error there (a StagingError at the
`try` line); under a Python condition it runs as Python.
"""
import gast

from autograph.pyct import templates
from autograph.pyct import transformer

_TRY_ADVICE = ("it would catch errors only while the graph is built, not when it runs. "
               "Move the try/except out of the tensor-dependent block, or check the "
               "condition with rt.debugging asserts instead.")
_TRY_TYPES = tuple(getattr(gast, n) for n in ("Try", "TryStar") if hasattr(gast, n))


class _Block:
    def __init__(self):
        self.depth = 0


class UnsupportedTransformer(transformer.Base):
    statements_only = True

    def _visit_control_flow(self, node):
        with self.state[_Block] as block:
            block.depth = 1
            return self.generic_visit(node)

    visit_If = visit_While = visit_For = _visit_control_flow

    def visit_FunctionDef(self, node):
        with self.state[_Block]:
            return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def _visit_try(self, node):
        node = self.generic_visit(node)
        block = self.state[_Block]
        if block.level == 0 or not block.depth:
            return node
        check = templates.replace(
            "ag__.unsupported_in_tensor_control_flow(construct, advice)",
            construct=gast.Constant(value="try", kind=None),
            advice=gast.Constant(value=_TRY_ADVICE, kind=None))
        return check + [node]

    visit_Try = _visit_try
    if hasattr(gast, "TryStar"):
        visit_TryStar = _visit_try


def transform(node, ctx):
    if ctx.lacks(*_TRY_TYPES):
        return node                 # nothing to check: skip the walk
    return UnsupportedTransformer(ctx).visit(node)
