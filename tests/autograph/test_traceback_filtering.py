"""Tracebacks of errors raised through converted functions show the user's frames (and the
note with the original source lines), not the compiler's and runtime's; TensorFlow filters
its frames the same way, and `rt.config.set_traceback_filtering(False)` shows them all."""
import os
import traceback

import pytest

import autograph as ag
import runtime as rt

PACKAGES = tuple(os.path.dirname(m.__file__) + os.sep for m in (ag, rt))


def library_frames(exc):
    return [f for f in traceback.extract_tb(exc.__traceback__)
            if f.filename.startswith(PACKAGES)]


def lookup(table, key):
    return table[key]


def scaled_entry(x, key):
    if x > 0:
        x = x * 2.0
    return x * lookup({"a": 1.0}, key)


def raised(fn, *args):
    with pytest.raises(Exception) as info:
        fn(*args)
    return info.value


def test_a_user_error_in_converted_code_shows_the_user_frames_and_the_note():
    error = raised(ag.convert(scaled_entry), rt.constant(1.0), "b")
    assert isinstance(error, KeyError)
    text = "".join(traceback.format_exception(error))
    assert "In the converted code (original source lines):" in text
    assert "return table[key]" in text and "x * lookup({\"a\": 1.0}, key)" in text
    names = [f.name for f in traceback.extract_tb(error.__traceback__)]
    assert names[0] == "raised" and names[-1].endswith("lookup")
    # one library frame is left: the line of the call that re-raised it, which says why
    [frame] = library_frames(error)
    assert frame.filename.endswith(os.path.join("runtime", "function.py"))
    assert "internal frames hidden" in frame.line


def test_turning_filtering_off_shows_the_compilers_frames():
    rt.config.set_traceback_filtering(False)
    try:
        assert not rt.config.get_traceback_filtering()
        error = raised(ag.convert(scaled_entry), rt.constant(1.0), "b")
    finally:
        rt.config.set_traceback_filtering(True)
    frames = library_frames(error)
    assert any(os.sep + "autograph" + os.sep in f.filename for f in frames)
    assert len(frames) > 5


def test_an_error_of_an_op_while_tracing_ends_at_the_users_line():
    @rt.function
    def bad_matmul(a):
        return rt.matmul(a, rt.ones([3, 3]))

    error = raised(bad_matmul, rt.ones([2, 2]))
    assert isinstance(error, ValueError)
    assert traceback.extract_tb(error.__traceback__)[-1].line == \
        "return rt.matmul(a, rt.ones([3, 3]))"
    assert len(library_frames(error)) == 1


def test_an_error_while_the_graph_runs_keeps_its_message_and_the_users_call():
    @ag.convert
    def checked_sqrt(x):
        rt.debugging.assert_non_negative(x)
        return rt.sqrt(x)

    error = raised(checked_sqrt, rt.constant(-1.0))
    assert isinstance(error, AssertionError)
    assert "test_traceback_filtering.py" in str(error)        # the op's line, in the message
    assert traceback.extract_tb(error.__traceback__)[0].name == "raised"
    assert len(library_frames(error)) == 1


def test_methods_filter_too():
    class Table:
        @ag.convert
        def get(self, key):
            return lookup({"a": 1}, key)

    error = raised(Table().get, "b")
    assert len(library_frames(error)) <= 2     # the method's binding re-raises it as well


class Ledger:
    def entry(self, key):
        def look_up():
            if key:
                return lookup({}, key)
            return None
        return look_up()


def test_frames_keep_the_users_function_names():
    """Converted code objects are named as the user's functions (co_name, __qualname__),
    so frames read `scaled_entry`, never a generated name."""
    error = raised(ag.to_graph(scaled_entry), 1.0, "b")
    names = [f.name for f in traceback.extract_tb(error.__traceback__)]
    assert "scaled_entry" in names and not any(n.startswith("ag__") for n in names)
    converted = ag.to_graph(Ledger.entry)
    assert converted.__code__.co_name == "entry"
    assert converted.__code__.co_qualname == converted.__qualname__ == "Ledger.entry"
    error = raised(converted, Ledger(), "k")
    names = [f.name for f in traceback.extract_tb(error.__traceback__)]
    assert "entry" in names and "look_up" in names, names
