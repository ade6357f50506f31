"""Loading generated code: compile source in memory and run it as a fresh module.

Each load gets its own file name, `<autograph generated file N>`, and its source
is registered with linecache, so tracebacks, pdb and inspect.getsource show the
generated lines. Nothing is written to disk.
"""
import itertools
import linecache
import types

from autograph.pyct import origin_info
from autograph.pyct import parser

_load_counter = itertools.count(1)


def load_source(source, delete_on_exit=True):
    """Runs `source` as a new module; returns (module, filename).

    `delete_on_exit` is accepted for compatibility with file-based loaders;
    there is no file to delete.
    """
    del delete_on_exit
    number = next(_load_counter)
    filename = f"<autograph generated file {number}>"
    if not source.endswith("\n"):
        source += "\n"
    # An mtime of None tells linecache.checkcache to keep the entry.
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = types.ModuleType(f"autograph_generated_{number}")
    module.__file__ = filename
    exec(compile(source, filename, "exec"), module.__dict__)  # pylint: disable=exec-used
    return module, filename


def load_ast(nodes, indentation="    ", include_source_map=False):
    """Prints and loads gast nodes; returns (module, source, source_map or None)."""
    source = parser.unparse(nodes, indentation=indentation)
    module, filename = load_source(source)
    source_map = None
    if include_source_map:
        source_map = origin_info.create_source_map(nodes, source, filename)
    return module, source, source_map
