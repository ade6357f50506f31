"""The two errors of saving and loading graphs."""

__all__ = ["SaveError", "LoadError"]


class SaveError(ValueError):
    """A graph holds something that cannot be saved as data (a py_function, a Python object)."""


class LoadError(ValueError):
    """A saved graph is damaged, hand-edited into something invalid, or from a newer version.

    The message names the file and the graph, operation or attribute at fault.
    """
