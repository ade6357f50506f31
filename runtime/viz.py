"""Pictures of graphs: Graphviz DOT text, rendered by the `dot` program when it is installed.

    print(rt.viz.to_dot(concrete_fn.graph))      # DOT text
    rt.viz.render(concrete_fn, "f.svg")          # runs `dot -Tsvg` (also .png, .pdf; .dot writes text)

Each operation is a box labelled with its name and type, the dtype and shape of its
outputs, and the user's source line; edges carry tensors (control dependencies are
dashed). The sub-graphs of cond / while / call are clusters beside the operation
that owns them, linked to it by a dotted edge; a captured tensor enters its cluster
by a dashed edge from where it was computed.
"""
import os
import shutil
import subprocess

from .files import write_file
from .graph import Graph, _attr_str, _type_str

__all__ = ["to_dot", "render", "GraphvizNotFound"]


class GraphvizNotFound(RuntimeError):
    """The Graphviz `dot` program is not on PATH."""


def _quote(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class _Dot:
    def __init__(self):
        self.lines = []
        self.node_ids = {}            # (cluster, id(op)) -> DOT node id
        self.clusters = 0
        self.scope = 0                # the cluster being drawn: a function called twice
                                      # is drawn twice, with nodes of its own each time

    def node_id(self, op):
        key = (self.scope, id(op))
        if key not in self.node_ids:
            self.node_ids[key] = f"n{len(self.node_ids)}"
        return self.node_ids[key]

    def graph(self, g, indent):
        out = self.lines
        for op in g.ops:
            types = ", ".join(_type_str(t) for t in op.outputs)
            label = [f"{op.name}" if op.name == op.type else f"{op.name} ({op.type})"]
            if op.type == "const":
                types = f"{types} = {_attr_str(op.attrs['value'])}"
            if types:
                label.append(types)
            if op.origin is not None:
                label.append(op.origin.short())
            shape = "ellipse" if op.type in ("placeholder", "capture") else "box"
            out.append(f"{indent}{self.node_id(op)} [label={_quote(chr(10).join(label))}, "
                       f"shape={shape}];")
        ret = f"{self.node_id(g)}"
        out.append(f"{indent}{ret} [label=\"return\", shape=plaintext];")
        for op in g.ops:
            for t in op.inputs:
                self.edge(t, self.node_id(op), indent)
            for c in op.control_inputs:
                out.append(f"{indent}{self.node_id(c)} -> {self.node_id(op)} [style=dashed];")
        for t in g.outputs:
            self.edge(t, ret, indent)
        for op in g.ops:
            for key, sub in op.attrs.items():
                if isinstance(sub, Graph):
                    self.cluster(op, key, sub, indent)

    def edge(self, t, target, indent):
        self.lines.append(f"{indent}{self.node_id(t.op)} -> {target} "
                          f"[label={_quote(_type_str(t))}];")

    def cluster(self, owner, key, sub, indent):
        self.clusters += 1
        name = f"cluster{self.clusters}"
        self.lines.append(f"{indent}subgraph {name} {{")
        inner = indent + "  "
        self.lines.append(f"{inner}label={_quote(f'{owner.name}: {key} {sub.name}')}; "
                          f"style=rounded; color=gray50;")
        outer_scope, self.scope = self.scope, self.clusters
        try:
            self.graph(sub, inner)
            first = self.node_id(sub.ops[0] if sub.ops else sub)
            captured = [self.node_id(c.op) for _, c in sub.captures]
        finally:
            self.scope = outer_scope
        self.lines.append(f"{indent}}}")
        self.lines.append(f"{indent}{self.node_id(owner)} -> {first} "
                          f"[style=dotted, arrowhead=none, lhead={name}];")
        for (outer, _), inner_id in zip(sub.captures, captured):
            if (outer_scope, id(outer.op)) in self.node_ids:
                self.lines.append(f"{indent}{self.node_id(outer.op)} -> {inner_id} "
                                  f"[style=dashed, color=gray50];")


def to_dot(graph, name=None):
    """Graphviz DOT text for a Graph (or a ConcreteFunction's graph)."""
    graph = getattr(graph, "graph", graph)
    if not isinstance(graph, Graph):
        raise TypeError(f"to_dot expects a Graph or a ConcreteFunction, got {graph!r}")
    dot = _Dot()
    dot.graph(graph, "  ")
    header = [f"digraph {_quote(name or graph.name)} {{",
              "  compound=true; rankdir=TB;",
              '  node [fontname="monospace", fontsize=10];',
              '  edge [fontname="monospace", fontsize=9];']
    return "\n".join(header + dot.lines + ["}"]) + "\n"


def render(graph, path, fmt=None):
    """Write a picture of `graph` to `path` (format from the extension; .dot/.gv: DOT text)."""
    text = to_dot(graph)
    fmt = fmt or os.path.splitext(path)[1].lstrip(".").lower() or "svg"
    if fmt in ("dot", "gv"):
        write_file(path, text)
        return path
    program = shutil.which("dot")
    if program is None:
        raise GraphvizNotFound(
            f"drawing {path} needs the Graphviz program 'dot', which is not on PATH; "
            f"install Graphviz, or write DOT text to a .dot file")
    result = subprocess.run([program, f"-T{fmt}"], input=text.encode("utf-8"),
                            capture_output=True, timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"dot failed to draw {path}: "
                           f"{result.stderr.decode('utf-8', 'replace').strip()}")
    write_file(path, result.stdout)
    return path
