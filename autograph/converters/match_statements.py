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
the subject is a tensor), captures, the wildcard, `|`, `as`, and guards. A case with a
guard binds its names before the guard runs (they stay bound when it fails, as in
Python). A statement using other patterns (sequences, mappings, classes) stays a
Python `match`.
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
        chain = []                              # (statements before the test, test, body)
        for case in node.cases:
            test, names = _test(case.pattern, subject)
            binds = [templates.replace("name = subject", name=n, subject=subject)[0]
                     for n in names]
            if case.guard is not None and names and test is None:
                before, binds = binds, []        # a capture: bound before its guard
                test = case.guard
            else:
                before, test = self._case_test(test, names, binds, case.guard, subject)
            chain.append((before, test, binds + case.body))
            if test is None:
                break                            # irrefutable: the rest is unreachable
        result = templates.replace("subject = value", subject=subject, value=node.subject)
        orelse = []
        if chain and chain[-1][1] is None:
            orelse = chain.pop()[2]
        for before, test, body in reversed(chain):
            orelse = before + templates.replace(
                "if test:\n    body\nelse:\n    orelse", test=test, body=body,
                orelse=orelse or [gast.Pass()])
            if isinstance(orelse[-1].orelse[0], gast.Pass) and len(orelse[-1].orelse) == 1:
                orelse[-1].orelse = []
        return result + orelse

    def _case_test(self, test, names, binds, guard, subject):
        """(statements before the case's test, the test: pattern and guard). A pattern
        that matched binds its names even when the guard then fails (Python's order): a
        capture (`case n if n > 0`) binds them before its guard (visit_Match); a pattern
        that can fail, when it matched (a flag), the guard reading the subject for them
        (a tensor test leaves them unset in its other branch)."""
        if guard is None:
            return [], test
        if not names:
            return [], guard if test is None else templates.replace_as_expression(
                "a and b", a=test, b=guard)
        bound_first = [ast_util.copy_clean(b, templates.PRESERVED_ANNOS) for b in binds]
        matched = self.ctx.namer.new_symbol("matched_", ())
        guard = ast_util.rename_symbols(
            guard, {qual_names.QN(n): qual_names.QN(subject) for n in names})
        before = templates.replace("matched = test\nif matched:\n    binds",
                                   matched=matched, test=test, binds=bound_first)
        return before, templates.replace_as_expression("matched and guard", matched=matched,
                                                       guard=guard)


def transform(node, ctx):
    return MatchTransformer(ctx).visit(node)
