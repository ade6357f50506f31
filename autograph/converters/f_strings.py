"""f-strings become `ag__.fstring`, so that printing one shows a graph's run-time values.

    f"step {i}: loss {loss:.3f}"   =>   ag__.fstring('step ', (i, -1, ''), ': loss ',
                                                     (loss, -1, '.3f'))
    "loss %.3f" % loss             =>   ag__.percent_format('loss %.3f', loss)

(`"...".format(...)` needs no rewrite: converted_call sends it to ag__.str_format.)

It returns the same string Python builds, unless a value is a symbolic tensor: then an
`rt` FormattedString, a string with the text Python gives while tracing that `print`
(converted to a graph print) formats again each time the graph runs. Format specs that
are f-strings themselves are converted the same way; conversions (`!r`, `!s`, `!a`) pass
as Python's codes.
"""
import gast

from autograph.pyct import ast_util
from autograph.pyct import transformer


class FStringTransformer(transformer.Base):

    def visit_JoinedStr(self, node):
        node = self.generic_visit(node)
        if all(isinstance(v, gast.Constant) for v in node.values):   # f"abc", a spec ".2f"
            return node         # (a string constant first in a body would be a docstring)
        parts = []
        # Python 3.12 ends a nested spec (`{i:>{n}}`) with an empty string: it adds nothing
        for value in [v for v in node.values if not _empty_string(v)]:
            if isinstance(value, gast.FormattedValue):
                spec = value.format_spec
                if spec is None:
                    spec = gast.Constant(value="", kind=None)
                elif isinstance(spec, gast.JoinedStr) and all(
                        isinstance(v, gast.Constant) for v in spec.values):     # ".2f"
                    spec = gast.Constant(value="".join(v.value for v in spec.values),
                                         kind=None)
                parts.append(gast.Tuple(elts=[value.value,
                                              gast.Constant(value=value.conversion, kind=None),
                                              spec], ctx=gast.Load()))
            else:
                parts.append(value)
        return ast_util.ag_call("fstring", parts)


    def visit_BinOp(self, node):
        node = self.generic_visit(node)
        if not (isinstance(node.op, gast.Mod) and isinstance(node.left, gast.Constant)
                and isinstance(node.left.value, str)):
            return node
        return ast_util.ag_call("percent_format", [node.left, node.right])


def _empty_string(node):
    return isinstance(node, gast.Constant) and node.value == ""


def transform(node, ctx):
    return FStringTransformer(ctx).visit(node)
