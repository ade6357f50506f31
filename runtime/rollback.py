"""A failed graph run leaves the state it wrote as it was: variables, random generators,
the pass counts of shuffled data sets.

The executors run a graph holding stateful ops inside `undone_on_error(run)`: a journal,
per thread, of how to put back each piece of state the run changes. A kernel writing
state outside the run's own values calls `note(owner, entry)` before it changes `owner`
(a Variable, a generator, a counter); the first note of an owner in a run counts. If the
run raises, the entries are undone, newest first, and the error goes on. A run inside a
run (a cond branch, a loop body, a called function) keeps a journal of its own, merged
into the outer one when it succeeds, so an error a py_function catches from a graph call
undoes that call's writes only.

Nothing is copied: an assignment stores a new array (never writes into the old one),
so the journal keeps the old one. Outside a run (`active() is None`) nothing is noted.
What leaves the process cannot be taken back: printed text, files, summaries.
"""
import threading

__all__ = ["Entry", "active", "note", "undone_on_error"]

_local = threading.local()


class Entry:
    """How to put one owner's state back as it was before the run."""

    __slots__ = ()

    def undo(self):
        raise NotImplementedError

    def absorb(self, later):
        """A nested run that succeeded changed the same owner: `later` is its entry."""


class _Journal:
    __slots__ = ("entries",)

    def __init__(self):
        self.entries = {}          # id(owner) -> (owner, Entry), in the order first noted


def active():
    """The current run's journal, or None outside journaled runs."""
    return getattr(_local, "journal", None)


def note(owner, entry):
    """Record how to undo the coming change to `owner` (kept: the first entry of a run),
    and return the entry kept (so a writer may update it)."""
    journal = getattr(_local, "journal", None)
    if journal is None:
        return None
    entries = journal.entries
    kept = entries.get(id(owner))
    if kept is None:
        entries[id(owner)] = (owner, entry)
        return entry
    return kept[1]


def undone_on_error(run):
    """`run` (a function of the feed values), undoing the state it wrote when it raises."""
    def journaled(values):
        outer = getattr(_local, "journal", None)
        journal = _local.journal = _Journal()
        try:
            result = run(values)
        except BaseException:
            _local.journal = outer
            for _, entry in reversed(journal.entries.values()):
                entry.undo()
            raise
        _local.journal = outer
        if outer is not None and journal.entries:
            _merge(outer, journal)
        return result
    return journaled


def _merge(outer, inner):
    entries = outer.entries
    for key, (owner, entry) in inner.entries.items():
        kept = entries.get(key)
        if kept is None:
            entries[key] = (owner, entry)
        else:
            kept[1].absorb(entry)
