"""Fresh names for generated code that never clash with the user's names.

Rule: a generated name is the requested root verbatim when it is free (roots are
chosen by converters, TF style: `do_return`, `retval_`, `if_body`), otherwise
the root with `_1`, `_2`, ... appended. A root that already ends in `_<digits>`
continues that numbering. The Namer remembers what it handed out.

Generated code calls the operators through one name, `ag__` (NAMESPACE) unless the
function's own code, globals or closure use it: then `ag___1`, ... . A conversion chooses
it (`namespace_named`) and everything that writes or recognizes generated code asks
`namespace()` (templates rename the `ag__` they are written with).
"""
import contextlib
import contextvars

from autograph.pyct import qual_names

NAMESPACE = "ag__"
_namespace = contextvars.ContextVar("autograph_namespace", default=NAMESPACE)


def namespace():
    """The name of the operators' namespace in the code being generated now."""
    return _namespace.get()


@contextlib.contextmanager
def namespace_named(name):
    """Generate code calling the operators `name` inside the block."""
    token = _namespace.set(name)
    try:
        yield
    finally:
        _namespace.reset(token)


class Namer:
    """Hands out symbol names unused by the globals, the given locals and itself."""

    def __init__(self, global_names):
        self.global_names = frozenset(global_names)
        self.generated_names = set()
        self._next = {}               # root -> the next suffix to try

    def new_symbol(self, name_root, reserved_locals):
        """A new name starting with `name_root`; `reserved_locals`: strs or QNs."""
        reserved = set()
        for symbol in reserved_locals:
            if isinstance(symbol, qual_names.QN):
                reserved.update(str(s) for s in symbol.support_set)
                reserved.add(symbol.ssf())
            elif isinstance(symbol, str):
                reserved.add(symbol)
            else:
                raise ValueError(f"reserved locals must be str or QN, got {symbol!r}")
        root, sep, suffix = name_root.rpartition("_")
        if sep and root and suffix.isdigit():
            n = int(suffix)
        else:
            root, n = name_root, 0
        name = name_root

        def taken(candidate):
            return (candidate in self.global_names or candidate in reserved
                    or candidate in self.generated_names)

        if taken(name):
            n = max(n + 1, self._next.get(root, 0))   # skip suffixes handed out before
            name = f"{root}_{n}"
            while taken(name):
                n += 1
                name = f"{root}_{n}"
            self._next[root] = n + 1
        self.generated_names.add(name)
        return name
