"""Shared by the jump converters: statements after a jump go under `if not flag:`.

A jump (`continue`, `return`) becomes an assignment to a flag. Every block from
the jump out to the block the jump leaves (a loop body, a function body) must
then skip its remaining statements when the flag is set:

    for x in xs:                           for x in xs:
        if x < 0:                              continue_ = False
            continue              =>           if x < 0:
        y = f(x)                                   continue_ = True
                                               if not continue_:
                                                   y = f(x)

Statements after an unconditional jump in the same block are unreachable and dropped.
"""
import gast

from autograph.pyct import templates
from autograph.pyct import transformer


class _Block:
    def __init__(self):
        self.is_target = False      # the block a jump leaves (loop / function body)
        self.flag = None            # a target's flag
        self.may_jump = False       # the statement just visited may have jumped
        self.jumped = False         # the statement just visited is itself a jump
        self.used = False           # any jump to this target


class GuardingTransformer(transformer.Base):
    """Base for the continue and return converters."""

    def visit_block_guarded(self, nodes, flag=None, is_target=False):
        """Visits statements; after one that may jump, the rest go under a guard."""
        with self.state[_Block] as block:
            block.is_target = is_target
            block.flag = flag
            nodes = _prune_guards(self.visit_block(nodes, after_visit=self._after_statement))
            used = block.used
        return nodes, used

    def record_jump(self):
        """Called where a jump is replaced: marks the blocks up to its target."""
        stack = self.state[_Block].stack
        stack[-1].jumped = True
        for block in reversed(stack):
            block.may_jump = True
            if block.is_target:
                block.used = True
                return block.flag
        raise AssertionError("a jump outside of any target block")

    def current_target_flag(self):
        for block in reversed(self.state[_Block].stack):
            if block.is_target:
                return block.flag
        return None

    def _after_statement(self, node):
        block = self.state[_Block].value
        if block.jumped:
            block.jumped = block.may_jump = False
            return node, []                     # what follows is unreachable
        if not block.may_jump:
            return node, None
        block.may_jump = False
        guard = templates.replace("if not flag:\n    pass", flag=self.current_target_flag())[0]
        guard.body = []
        guard._ag_guard = True
        nodes = node if isinstance(node, list) else [node]
        return nodes + [guard], guard.body

    # Blocks that are not jump targets: statements after a jump inside them are guarded.
    def visit_If(self, node):
        node.test = self.visit(node.test)
        return self.visit_nested_blocks(node, ("body", "orelse"))

    def visit_With(self, node):
        return self.visit_nested_blocks(node, ("body",))

    def visit_Try(self, node):
        node = self.visit_nested_blocks(node, ("body", "orelse", "finalbody"))
        for handler in node.handlers:
            self.visit_nested_blocks(handler, ("body",))
        return node

    def visit_nested_blocks(self, node, fields):
        """Visits the statement lists `fields` of `node` as inner (non-target) blocks."""
        for field in fields:
            stmts = getattr(node, field, None)
            if stmts:
                new, _ = self.visit_block_guarded(stmts)
                setattr(node, field, new or [gast.Pass()])
        return node


def _prune_guards(nodes):
    """Removes guards that got no statements (the jump was the block's last statement)."""
    if nodes and getattr(nodes[-1], "_ag_guard", False):
        nodes[-1].body = _prune_guards(nodes[-1].body)
        if not nodes[-1].body:
            nodes.pop()
    return nodes
