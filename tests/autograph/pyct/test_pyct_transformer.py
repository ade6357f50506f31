"""Specification of transformer.Base: state stacks, block visits, origins, debug printing."""
from autograph.pyct import anno
from autograph.pyct import parser
from autograph.pyct import templates
from autograph.pyct import transformer


class _Loop:
    def __init__(self):
        self.depth_seen = None


class _LoopDepth(transformer.Base):
    """Records on each break the number of loops around it."""

    def visit_While(self, node):
        with self.state[_Loop] as loop:
            assert loop is self.state[_Loop].value
            node = self.generic_visit(node)
        return node

    def visit_Break(self, node):
        anno.setanno(node, anno.Basic.DIRECTIVES, self.state[_Loop].level)
        self.state[_Loop].depth_seen = self.state[_Loop].level
        return node


def test_state_stack_tracks_enclosing_constructs():
    node = parser.parse("""
        while a:
            while b:
                break
            break
        """)
    converter = _LoopDepth(ctx=None)
    converter.visit(node)
    inner_break = node.body[0].body[0]
    outer_break = node.body[1]
    assert anno.getanno(inner_break, anno.Basic.DIRECTIVES) == 2
    assert anno.getanno(outer_break, anno.Basic.DIRECTIVES) == 1
    assert converter.state[_Loop].level == 0


class _MoveRestUnderIf(transformer.Base):
    """After `return`, the remaining statements go under `if not done:`."""

    def visit_Return(self, node):
        return templates.replace("done = True\nretval = value", value=node.value)

    def visit_FunctionDef(self, node):
        def after_visit(new_nodes):
            if isinstance(new_nodes, list) and len(new_nodes) == 2:
                guard = templates.replace("if not done:\n    pass")[0]
                guard.body = []
                return new_nodes + [guard], guard.body
            return new_nodes, None
        node.body = self.visit_block(node.body, after_visit=after_visit)
        return node


def test_visit_block_can_redirect_the_remaining_statements():
    node = parser.parse("def f():\n    a = 1\n    return a\n    b = 2\n    c = 3")
    node = _MoveRestUnderIf(ctx=None).visit(node)
    assert parser.unparse(node) == (
        "def f():\n    a = 1\n    done = True\n    retval = a\n"
        "    if not done:\n        b = 2\n        c = 3")


def test_replacement_nodes_inherit_the_origin_of_what_they_replace():
    node = parser.parse("def f():\n    return x")
    ret = node.body[0]
    anno.setanno(ret, anno.Basic.ORIGIN, "line 2")
    anno.setanno(ret.value, anno.Basic.ORIGIN, "x on line 2")
    node = _MoveRestUnderIf(ctx=None).visit(node)
    done, retval = node.body[:2]
    assert anno.getanno(done, anno.Basic.ORIGIN) == "line 2"
    # New expressions go without: readers take the enclosing statement's origin.
    assert not anno.hasanno(retval.targets[0], anno.Basic.ORIGIN)
    assert anno.getanno(retval.value, anno.Basic.ORIGIN) == "x on line 2"


def test_context_and_debug_print(capsys):
    ctx = transformer.Context(info=transformer.EntityInfo(
        name="f", source_code="", source_file="f.py", future_features=(), namespace={}),
        namer=None, user={"optional": True})
    converter = transformer.Base(ctx)
    assert converter.ctx.info.name == "f" and converter.ctx.user == {"optional": True}
    node = parser.parse("x = 1")
    assert converter.debug_print(node) is node
    assert capsys.readouterr().out == "x = 1\n"


class _RenameAll(transformer.Base):

    def visit_Name(self, node):
        node.id = "renamed"
        return node


def test_skip_processing_leaves_a_subtree_alone():
    node = parser.parse("a = b + c")
    anno.setanno(node.value.right, anno.Basic.SKIP_PROCESSING, True)
    assert parser.unparse(_RenameAll(ctx=None).visit(node)) == "renamed = renamed + c"
