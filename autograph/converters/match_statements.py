"""`match` statements become if/elif chains, so a tensor subject works too.

    match x:                         subject_ = x
        case 0:                      if ag__.match_value(subject_, 0):
            y = 1                        y = 1
        case 1 | 2:          =>      elif ag__.or_(lambda: ag__.match_value(subject_, 1),
            y = 2                                  lambda: ag__.match_value(subject_, 2)):
        case n if n > 5:                 y = 2
            y = n                    elif subject_ > 5:
        case _:                          n = subject_
            y = 0                        y = n
                                     else:
                                         y = 0

Supported patterns: literals and values (`==`; `is` for None/True/False unless
the subject is a tensor), captures, the wildcard, `|`, `as`, and guards (a
guard sees a capture as the subject itself). A statement using other patterns
(sequences, mappings, classes) stays a Python `match`.
"""
import gast

from autograph.pyct import ast_util
from autograph.pyct import qual_names
from autograph.pyct import templates
from autograph.pyct import transformer
from autograph.pyct import visitor

_MATCH_TYPES = tuple(getattr(gast, name) for name in (
    "MatchValue", "MatchSingleton", "MatchAs", "MatchOr") if hasattr(gast, name))


def _supported(pattern):
    if not isinstance(pattern, _MATCH_TYPES):
        return False
    if isinstance(pattern, gast.MatchOr):
        return all(_supported(p) and not _binds(p) for p in pattern.patterns)
    if isinstance(pattern, gast.MatchAs) and pattern.pattern is not None:
        return _supported(pattern.pattern)
    return True


def _binds(pattern):
    return any(isinstance(n, gast.MatchAs) and n.name for n in visitor.walk(pattern))


def _test(pattern, subject):
    """The test for `pattern` (None: always matches) and the names it binds."""
    if isinstance(pattern, gast.MatchValue):
        return templates.replace_as_expression("ag__.match_value(s, v)", s=subject,
                                               v=pattern.value), []
    if isinstance(pattern, gast.MatchSingleton):
        return templates.replace_as_expression(
            "ag__.match_singleton(s, v)", s=subject,
            v=gast.Constant(value=pattern.value, kind=None)), []
    if isinstance(pattern, gast.MatchOr):
        tests = [_test(p, subject)[0] for p in pattern.patterns]
        if any(t is None for t in tests):
            return None, []
        result = tests[-1]
        for t in reversed(tests[:-1]):
            result = templates.replace_as_expression("a or b", a=t, b=result)
        return result, []
    # MatchAs: a capture (`case n`), the wildcard (`case _`) or `case P as n`.
    test, names = (None, []) if pattern.pattern is None else _test(pattern.pattern, subject)
    return test, names + ([pattern.name] if pattern.name else [])


class MatchTransformer(transformer.Base):
    statements_only = True

    def visit_Match(self, node):
        node = self.generic_visit(node)
        if not all(_supported(case.pattern) for case in node.cases):
            return node
        subject = self.ctx.namer.new_symbol("subject_", ())
        chain = []
        for case in node.cases:
            test, names = _test(case.pattern, subject)
            guard = case.guard
            if guard is not None and names:
                guard = ast_util.rename_symbols(
                    guard, {qual_names.QN(n): qual_names.QN(subject) for n in names})
            if guard is not None:
                test = guard if test is None else templates.replace_as_expression(
                    "a and b", a=test, b=guard)
            binds = [templates.replace("name = subject", name=n, subject=subject)[0]
                     for n in names]
            chain.append((test, binds + case.body))
            if test is None:
                break                            # irrefutable: the rest is unreachable
        result = templates.replace("subject = value", subject=subject, value=node.subject)
        orelse = []
        if chain and chain[-1][0] is None:
            orelse = chain.pop()[1]
        for test, body in reversed(chain):
            orelse = templates.replace("if test:\n    body\nelse:\n    orelse", test=test,
                                       body=body, orelse=orelse or [gast.Pass()])
            if isinstance(orelse[0].orelse[0], gast.Pass) and len(orelse[0].orelse) == 1:
                orelse[0].orelse = []
        return result + orelse


def transform(node, ctx):
    if ctx.lacks(gast.Match):
        return node                 # nothing to convert: skip the walk
    return MatchTransformer(ctx).visit(node)
