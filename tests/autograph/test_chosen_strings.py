"""Strings chosen by a tensor condition: `"pos" if x > 0 else "neg"`, an if/elif chain
assigning labels. The graph chooses the string when it runs (runtime.ops.logging_ops.
ChosenText); printed, formatted, concatenated, compared with a string or returned, it
behaves as the eager Python string does. Each program runs converted with tensor
arguments and as plain Python on numbers; values and printed text must be equal."""
import contextlib
import io
import json
import os

import numpy as np
import pytest

import autograph as ag
import runtime as rt


def grade(x):
    if x >= 90:
        g = "A"
    elif x >= 80:
        g = "B"
    elif x >= 70:
        g = "C"
    else:
        g = "F"
    print(f"score {x}: grade {g}")
    print("grade " + g + "!", "%s/%s" % (g, "pass" if g != "F" else "fail"))
    if g == "A" or g == "B":
        print("good")
    else:
        print("keep going")
    return g


def sign_label(x):
    print("positive" if x > 0 else "negative" if x < 0 else "zero")
    return x * 2, ("up" if x > 0 else "down")


def nested_labels(x, y):
    if x > 0:
        kind = "big" if x > 10 else "small"
    else:
        kind = "negative"
    where = "right" if y > 0 else "left"
    label = kind + "-" + where
    print("{}: {!r}".format(label, kind), sep="")
    return {"kind": kind, "where": where}


def progress(losses):
    best = 100.0
    for loss in losses:
        if loss < best:
            status = f"improved to {loss:.3f}"
            best = loss
        else:
            status = "no improvement"
        print(status)
    return best


def formatted_labels(x):
    if x > 10:
        msg = f"big {x}"
    elif x > 0:
        msg = "small"
    else:
        msg = f"negative {x * 2} ({'odd' if x % 2 else 'even'})"
    print("msg:", msg, f"[{msg:>12}]")
    return x


def same_string_in_both_branches(x):
    if x > 0:
        s = "same"
        x = x + 1
    else:
        s = "same"
    return s, x


def run(fn, args, tensors):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        if tensors:
            result = ag.convert(fn)(*[rt.constant(a) for a in args])
        else:
            result = fn(*args)
    return rt.nest.map_structure(
        lambda v: v.numpy().item() if isinstance(v, rt.Tensor) else v, result), out.getvalue()


@pytest.mark.parametrize("executor", ["fast", "plain"])
@pytest.mark.parametrize("fn, args", [
    (grade, (95,)), (grade, (85,)), (grade, (72,)), (grade, (10,)),
    (sign_label, (3.0,)), (sign_label, (-2.0,)), (sign_label, (0.0,)),
    (nested_labels, (20, 1)), (nested_labels, (5, -1)), (nested_labels, (-3, 2)),
    (same_string_in_both_branches, (1.0,)), (same_string_in_both_branches, (-1.0,)),
    (progress, ([3.0, 2.5, 2.7, 1.0],)), (progress, ([],)),
    (formatted_labels, (20,)), (formatted_labels, (5,)), (formatted_labels, (-3,)),
    (formatted_labels, (-4,)),
])
def test_a_string_chosen_by_a_tensor_condition_behaves_as_pythons(fn, args, executor):
    expected = run(fn, args, tensors=False)
    with rt.config.options(executor=executor):
        got = run(fn, args, tensors=True)
    assert got == expected


def test_the_choice_is_made_each_time_the_graph_runs():
    f = rt.function(ag.to_graph(sign_label))
    for x in (1.0, -1.0, 0.0, 4.0):
        assert f(rt.constant(x))[1] == run(sign_label, (x,), tensors=False)[0][1]
    assert f.experimental_get_tracing_count() == 1


def test_a_chosen_string_survives_save_and_load_and_a_tampered_choice_fails(tmp_path):
    f = rt.function(ag.to_graph(sign_label), input_signature=[rt.TensorSpec([], rt.float32)])
    rt.saved.save(f, str(tmp_path / "m"))
    loaded = rt.saved.load(str(tmp_path / "m"))
    assert [loaded(rt.constant(x))[1] for x in (2.0, -2.0)] == ["up", "down"]
    path = next(os.path.join(root, name) for root, _, names in os.walk(tmp_path / "m")
                for name in names if name == "graph.json")
    with open(path) as fh:
        doc = json.load(fh)
    chosen = [leaf for leaf in doc["outputs"] if isinstance(leaf, dict) and "choices" in leaf]
    assert [leaf["choices"] for leaf in chosen] == [["up", "down"]]
    chosen[0]["choices"][1] = 7                          # not a string: refused on load
    with open(path, "w") as fh:
        json.dump(doc, fh)
    with pytest.raises(rt.saved.LoadError, match="choices"):
        rt.saved.load(str(tmp_path / "m"))


def test_a_chosen_string_used_where_its_text_is_needed_while_tracing_is_an_error():
    @ag.convert
    def as_key(x):
        counts = {}
        counts["pos" if x > 0 else "neg"] = 1
        return x

    with pytest.raises(TypeError, match="cannot be a dict key or set member"):
        as_key(rt.constant(1.0))

    @ag.convert
    def in_a_loop(n):
        s = "start"
        for i in rt.range(n):
            s = "even" if i % 2 == 0 else "odd"
        return s

    with pytest.raises(ag.StagingError, match="'s' holds a Python str"):
        in_a_loop(rt.constant(3))


def test_a_chosen_f_string_prints_in_a_saved_graph_and_cannot_be_returned(tmp_path):
    f = rt.function(ag.to_graph(formatted_labels), input_signature=[rt.TensorSpec([], rt.int32)])
    rt.saved.save(f, str(tmp_path / "m"))
    loaded = rt.saved.load(str(tmp_path / "m"))
    for x in (20, 5, -3):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            loaded(rt.constant(x))
        assert out.getvalue() == run(formatted_labels, (x,), tensors=False)[1]

    @ag.convert
    def returns_it(x):
        return f"v={x}" if x > 0 else "none"

    with pytest.raises(TypeError, match=r"one of 'v=\{\.\.\.\}' or 'none'"):
        returns_it(rt.constant(1.0))

    @ag.convert
    def compares_it(x):
        s = f"v={x}" if x > 0 else "none"
        return s == "none"

    with pytest.raises(TypeError, match="formatted from tensors"):
        compares_it(rt.constant(1.0))


def test_comparing_a_chosen_string_gives_a_bool_tensor_in_the_graph():
    @rt.function
    def f(x):
        s = rt.cond(x > 0, lambda: "pos", lambda: "neg")
        return s == "pos", s != "neg", s == "other", rt.cast(s == "neg", rt.int32)

    for x, want in ((1.0, (True, True, False, 0)), (-1.0, (False, False, False, 1))):
        assert [np.asarray(v).item() for v in f(rt.constant(x))] == list(want)
