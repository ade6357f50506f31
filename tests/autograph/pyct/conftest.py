"""Shared helpers for the pyct tests: run the static analyses, find statements by text."""
import textwrap

import gast
import pytest

from autograph.pyct import anno
from autograph.pyct import parser
from autograph.pyct.static_analysis import activity
from autograph.pyct.static_analysis import cfg
from autograph.pyct.static_analysis import liveness
from autograph.pyct.static_analysis import reaching_definitions


def _first_line(node):
    return parser.unparse(node).split("\n")[0].strip()


@pytest.fixture
def analyze():
    """analyze(src) -> the parsed function, with all static analyses run."""
    def run(src):
        node = parser.parse(textwrap.dedent(src))
        activity.resolve(node)
        graphs = cfg.build(node)
        reaching_definitions.resolve(node, None, graphs)
        liveness.resolve(node, None, graphs)
        return node
    return run


@pytest.fixture
def stmt():
    """stmt(tree, 'first line of a statement') -> that statement (the first one)."""
    def find(tree, text):
        for node in gast.walk(tree):
            if isinstance(node, gast.stmt) and _first_line(node) == text:
                return node
        raise AssertionError(f"no statement {text!r}")
    return find


@pytest.fixture
def names():
    """names(node, key) -> sorted strings of the QN set annotated under key."""
    def get(node, key):
        return sorted(str(qn) for qn in anno.getanno(node, key))
    return get
