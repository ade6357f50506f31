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

Statements after an unconditional jump (or a `raise`) in the same block are unreachable
and dropped. An `if` one of whose branches always jumps, the other never, takes the rest
of the block into that other branch instead of a guard (as TensorFlow does), so the
common `if c: return a` / `return b` is one if/else whose both branches return:

    if c:                                  if c:
        return a                               retval_ = a; do_return = True
    return b              =>               else:
                                               retval_ = b; do_return = True

Otherwise a tensor `c` would make `do_return` a tensor, and the rest of the function
(a `raise`, a None return) would be traced under `if not do_return:` too.
"""
import gast

from autograph.pyct import anno
from autograph.pyct import templates
from autograph.pyct import transformer


class _Block:
    def __init__(self):
        self.is_target = False      # the block a jump leaves (loop / function body)
        self.flag = None            # a target's flag
        self.may_jump = False       # the statement just visited may have jumped
        self.jumped = False         # the statement just visited is itself a jump
        self.used = False           # any jump to this target
        self.definitely = False     # every path through the statements so far jumps
        self.any_jump = False       # some statement in the block may jump
        self.flag_read = False      # a target's flag is tested somewhere (a guard)


class GuardingTransformer(transformer.Base):
    """Base for the continue and return converters."""

    def visit_block_guarded(self, nodes, flag=None, is_target=False):
        """Visits statements; after one that may jump, the rest go under a guard."""
        with self.state[_Block] as block:
            block.is_target = is_target
            block.flag = flag
            nodes = _prune_guards(self.visit_block(nodes, after_visit=self._after_statement))
            used = block.used
        self.last_block = block
        return nodes, used

    def record_jump(self):
        """Called where a jump is replaced: marks the blocks up to its target."""
        stack = self.state[_Block].stack
        stack[-1].jumped = True
        for block in reversed(stack):
            block.may_jump = block.any_jump = True
            if block.is_target:
                block.used = True
                return block.flag
        raise AssertionError("a jump outside of any target block")

    def current_target_flag(self, reading=False):
        for block in reversed(self.state[_Block].stack):
            if block.is_target:
                block.flag_read = block.flag_read or reading
                return block.flag
        return None

    def last_flag_read(self):
        """Whether the target block visited last tests its flag anywhere."""
        return self.last_block.flag_read

    def _after_statement(self, node):
        block = self.state[_Block].value
        collapse = getattr(node, "_ag_collapse", None)
        if block.jumped or isinstance(node, gast.Raise) or collapse == "unreachable":
            block.jumped = block.may_jump = False
            block.definitely = True
            return node, []                     # what follows is unreachable
        if not block.may_jump:
            return node, None
        block.may_jump = False
        if collapse is not None:
            return node, getattr(node, collapse)    # the rest goes into the other branch
        guard = templates.replace("if not flag:\n    pass",
                                  flag=self.current_target_flag(reading=True))[0]
        guard.body = []
        guard._ag_guard = True
        nodes = node if isinstance(node, list) else [node]
        # In errors, the guard has the line of the first statement it guards (a return
        # value of another dtype after a loop: that `return`), or, for generated ones (the
        # implicit `return None`), of the statement before it that may jump (_prune_guards).
        origin = next((anno.getanno(n, anno.Basic.ORIGIN) for n in reversed(nodes)
                       if anno.hasanno(n, anno.Basic.ORIGIN)), None)
        if origin is not None:
            anno.setanno(guard, anno.Basic.ORIGIN, origin)
        return nodes + [guard], guard.body

    # Blocks that are not jump targets: statements after a jump inside them are guarded.
    def visit_If(self, node):
        node.test = self.visit(node.test)
        body_jumps = orelse_jumps = (False, False)
        if node.body:
            node.body, _ = self.visit_block_guarded(node.body)
            body_jumps = (self.last_block.definitely, self.last_block.any_jump)
        if node.orelse:
            node.orelse, _ = self.visit_block_guarded(node.orelse)
            orelse_jumps = (self.last_block.definitely, self.last_block.any_jump)
        node.body = node.body or [gast.Pass()]
        if body_jumps[0] and orelse_jumps[0]:
            node._ag_collapse = "unreachable"
        elif body_jumps[0] and not orelse_jumps[1]:
            node._ag_collapse = "orelse"
        elif orelse_jumps[0] and not body_jumps[1]:
            node._ag_collapse = "body"
        return node

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


def drop_assignments(nodes, name):
    """Removes `name = ...` statements from a statement list and the blocks nested in it
    (not from functions defined there): for a flag nothing ends up testing."""
    kept = []
    for node in nodes:
        if (isinstance(node, gast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], gast.Name) and node.targets[0].id == name):
            continue
        if not isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            for field in ("body", "orelse", "finalbody"):
                block = getattr(node, field, None)
                if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                    setattr(node, field, drop_assignments(block, name) or [gast.Pass()])
            for handler in getattr(node, "handlers", None) or ():
                handler.body = drop_assignments(handler.body, name) or [gast.Pass()]
        kept.append(node)
    return kept


def _prune_guards(nodes):
    """Removes guards that got no statements (the jump was the block's last statement);
    gives the others the origin of the first statement they guard, if it has one."""
    if nodes and getattr(nodes[-1], "_ag_guard", False):
        guard = nodes[-1]
        guard.body = _prune_guards(guard.body)
        if not guard.body:
            nodes.pop()
        elif anno.hasanno(guard.body[0], anno.Basic.ORIGIN):
            anno.setanno(guard, anno.Basic.ORIGIN,
                         anno.getanno(guard.body[0], anno.Basic.ORIGIN))
    return nodes
