"""rt.saved: a traced function saved as JSON + .npz and loaded back runs the same graph."""
import collections
import json
import os

import numpy as np
import pytest

import runtime as rt
from runtime.ops import registry
from runtime.saved import LoadError, SaveError

Pair = collections.namedtuple("Pair", "total count")


def round_trip(fn, tmp_path, *args):
    """(original concrete function, loaded function) for fn traced on `args`."""
    concrete = rt.function(fn).get_concrete_function(*args)
    rt.saved.save(concrete, str(tmp_path / "saved"))
    return concrete, rt.saved.load(str(tmp_path / "saved"))


def assert_same(a, b):
    for x, y in zip(rt.nest.flatten(a), rt.nest.flatten(b), strict=True):
        if isinstance(x, rt.Tensor):
            assert x.dtype == y.dtype
            np.testing.assert_array_equal(x.numpy(), y.numpy())
        else:
            assert x == y


def many_ops(x, n):
    """A function using many ops and attribute kinds (ints, axes, dtypes, specs, arrays)."""
    y = rt.reshape(rt.transpose(x), [-1]) * 2.0 + rt.constant(np.arange(6, dtype=np.float32))
    parts = rt.split(y, 3)
    z = rt.concat([rt.stack(parts, axis=1), rt.expand_dims(parts[0], 1)], axis=1)
    s = rt.reduce_sum(z, axis=[0], keepdims=True) + rt.reduce_max(z)
    idx = rt.argmax(x, axis=1, output_type=rt.int64)
    hot = rt.one_hot(rt.cast(idx, rt.int32), depth=4, on_value=2.0, off_value=-1.0)
    picked = x[1:, ..., None][0] + rt.gather(x, [1, 0])[0, :, None]
    loop = rt.while_loop(lambda i, acc: i < n, lambda i, acc: (i + 1, acc * 1.5),
                         [rt.constant(0), rt.constant(1.0)])
    r = rt.cond(n > 2, lambda: rt.nn.softmax(x), lambda: rt.sigmoid(x))
    return {"s": s, "hot": hot, "picked": picked, "loop": loop, "r": r,
            "fill": rt.fill([2, 2], 3), "matmul": rt.matmul(x, x, transpose_b=True),
            "inf": rt.minimum(x, float("inf")), "tile": rt.tile(x, [1, 2])}


def test_many_ops_round_trip_with_the_same_results_and_text(tmp_path):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    concrete, loaded = round_trip(many_ops, tmp_path, x, rt.constant(4))
    assert_same(concrete(x, rt.constant(4)), loaded(x, rt.constant(4)))
    assert_same(concrete(x, rt.constant(1)), loaded(x, rt.constant(1)))
    assert str(loaded.graph) == str(concrete.graph)        # every op, attr and source line
    assert isinstance(loaded, rt.ConcreteFunction)


def test_the_files_are_a_versioned_json_description_and_an_npz(tmp_path):
    round_trip(lambda x: x + np.ones(3, np.float32), tmp_path, rt.constant([1.0, 2.0, 3.0]))
    assert sorted(os.listdir(tmp_path / "saved")) == ["arrays.npz", "graph.json"]
    doc = json.loads((tmp_path / "saved" / "graph.json").read_text())
    assert doc["format"] == "runtime-saved-graph" and doc["version"] == 2
    with np.load(tmp_path / "saved" / "arrays.npz", allow_pickle=False) as z:
        assert doc["arrays_sha256"] == rt.saved.arrays.digest(dict(z))
    types = [op["type"] for op in doc["graph"]["ops"]]
    assert types == ["placeholder", "const", "add"]
    const = doc["graph"]["ops"][1]
    assert const["attrs"] == {"value": {"array": "a0"}}
    assert const["outputs"] == [{"dtype": "float32", "shape": [3]}]
    assert const["origin"][0].endswith("test_saved.py")
    assert const["origin"][3] == ("round_trip(lambda x: x + np.ones(3, np.float32), tmp_path, "
                                  "rt.constant([1.0, 2.0, 3.0]))")
    assert doc["signature"] == [[{"spec": {"shape": [3], "dtype": "float32", "name": None}}],
                                {"dict": []}]


def test_structured_results_and_python_values_keep_their_structure(tmp_path):
    def f(x, scale, options):
        return Pair(x * scale, 3), [x, {"b": "text", "a": None}], (1.5, True)

    args = (rt.constant([1, 2]), 2, {"mode": "fast"})
    concrete, loaded = round_trip(f, tmp_path, *args)
    result = loaded(*args)
    assert type(result[0]).__name__ == "Pair" and result[0]._fields == ("total", "count")
    assert result[1][1] == {"b": "text", "a": None} and result[2] == (1.5, True)
    assert_same(concrete(*args), result)
    assert_same(loaded(rt.constant([3, 4])), concrete(rt.constant([3, 4])))  # tensors only


def test_unknown_dimensions_in_the_input_signature(tmp_path):
    f = rt.function(lambda x: rt.reduce_sum(x, axis=1),
                    input_signature=[rt.TensorSpec([None, 2], rt.float64)])
    rt.saved.save(f, str(tmp_path / "s"))
    loaded = rt.saved.load(str(tmp_path / "s"))
    for n in (1, 5):
        x = np.ones((n, 2))
        np.testing.assert_array_equal(loaded(x).numpy(), f(x).numpy())


def test_variables_are_restored_into_new_variables_the_loaded_function_updates(tmp_path):
    v = rt.Variable([1.0, 2.0], name="counter")
    w = rt.Variable(5, trainable=False)

    def step(x):
        v.assign_add(x)
        return v.read_value() * rt.cast(w, rt.float32)

    concrete, loaded = round_trip(step, tmp_path, rt.constant([1.0, 1.0]))
    new_v, new_w = loaded.variables
    assert new_v is not v and new_v.name == "counter:0" and not new_w.trainable
    np.testing.assert_array_equal(new_v.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(loaded(rt.constant([1.0, 1.0])).numpy(), [10.0, 15.0])
    np.testing.assert_array_equal(loaded(rt.constant([1.0, 1.0])).numpy(), [15.0, 20.0])
    np.testing.assert_array_equal(new_v.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])         # the original is untouched


def test_random_ops_keep_their_seeds(tmp_path):
    def draw():
        return rt.random.uniform([3], seed=7), rt.random.normal([2], seed=8)

    rt.random.set_seed(1234)
    try:
        concrete = rt.function(draw).get_concrete_function()
        rt.saved.save(concrete, str(tmp_path / "a"))
        first = rt.saved.load(str(tmp_path / "a"))
        second = rt.saved.load(str(tmp_path / "a"))
        draws = first()
        assert_same(draws, second())                  # same seeds, same sequence,
        assert_same(draws, concrete())                # the original's first draws
        assert not np.array_equal(first()[0].numpy(), draws[0].numpy())   # then new ones
    finally:
        rt.random.set_seed(None)


def test_print_and_assert_run_in_the_loaded_graph(tmp_path, capsys):
    v = rt.Variable(3)

    def f(x):
        rt.print("x is", x, [x, {"v": v}], sep="|")
        rt.debugging.assert_less(x, 10, message="too big")
        return x + 1

    concrete, loaded = round_trip(f, tmp_path, rt.constant(2))
    concrete(rt.constant(2))
    original = capsys.readouterr().out
    loaded(rt.constant(2))
    assert capsys.readouterr().out == original
    assert original.startswith("x is|2|[<rt.Tensor: shape=(), dtype=int32, numpy=2>, {'v': "
                               "<rt.Variable 'Variable:0' shape=() dtype=int32, numpy=3>}]")
    with pytest.raises(AssertionError, match="too big"):
        loaded(rt.constant(12))


def test_nested_functions_and_methods_save_as_call_ops(tmp_path):
    inner = rt.function(lambda a: a * 2)

    def outer(x):
        return inner(x) + inner(x + 1)

    concrete, loaded = round_trip(outer, tmp_path, rt.constant(3))
    assert [op.type for op in loaded.graph.ops].count("call") == 2
    assert loaded(rt.constant(3)).numpy() == 14


def test_a_loaded_function_can_be_saved_again_and_called_from_a_trace(tmp_path):
    _, loaded = round_trip(lambda x: x * x, tmp_path, rt.constant(3.0))
    rt.saved.save(loaded, str(tmp_path / "again"))
    again = rt.saved.load(str(tmp_path / "again"))
    assert str(again.graph) == str(loaded.graph)
    assert rt.function(lambda x: again(x) + 1)(rt.constant(2.0)).numpy() == 5.0


def test_py_function_refuses_to_save_naming_the_op_and_line(tmp_path):
    def f(x):
        return rt.py_function(np.sort, [x], rt.float32)

    concrete = rt.function(f).get_concrete_function(rt.constant([2.0, 1.0]))
    with pytest.raises(SaveError, match=r"py_function.*test_saved\.py:\d+.*'sort'"):
        rt.saved.save(concrete, str(tmp_path / "s"))


def test_python_objects_in_attributes_refuse_to_save(tmp_path):
    class Thing:
        pass

    concrete = rt.function(lambda x: rt.print(Thing(), x)).get_concrete_function(
        rt.constant(1))
    with pytest.raises(SaveError, match="attribute 'template' of operation 'print'.*Thing"):
        rt.saved.save(concrete, str(tmp_path / "s"))


def test_which_trace_to_save(tmp_path):
    f = rt.function(lambda x: x + 1)
    with pytest.raises(ValueError, match="0 traces"):
        rt.saved.save(f, str(tmp_path / "s"))
    f(rt.constant(1))
    rt.saved.save(f, str(tmp_path / "s"))            # the one trace
    f(rt.constant(1.0))
    with pytest.raises(ValueError, match="2 traces.*get_concrete_function"):
        rt.saved.save(f, str(tmp_path / "s"))


def test_load_errors_are_value_errors_naming_the_file(tmp_path):
    assert issubclass(LoadError, ValueError) and issubclass(SaveError, ValueError)
    with pytest.raises(LoadError, match="graph.json: missing"):
        rt.saved.load(str(tmp_path / "nothing"))


def _halve_kernel(x):
    return x / 2


_HALVE = registry.register("test_saved_halve", _halve_kernel,
                           lambda inputs: [(inputs[0].shape, inputs[0].dtype)])


def test_ops_declared_outside_the_runtime_are_recorded_with_their_module(tmp_path):
    @rt.function
    def halve(x):
        return registry.apply(_HALVE, [x], {})

    concrete = halve.get_concrete_function(rt.constant(3.0))
    rt.saved.save(concrete, str(tmp_path / "s"))
    doc = json.loads((tmp_path / "s" / "graph.json").read_text())
    assert doc["op_modules"] == {"test_saved_halve": __name__}
    assert rt.saved.load(str(tmp_path / "s"))(rt.constant(3.0)).numpy() == 1.5


def test_converted_loops_save_with_the_runtime_alone(tmp_path):
    import autograph as ag

    @ag.convert
    def last_double(n):
        i = 0
        while i < n:
            y = i * 2            # first assigned in a tensor loop: an assert_assigned op
            i += 1
        return y

    concrete = last_double.get_concrete_function(rt.constant(3))
    rt.saved.save(concrete, str(tmp_path / "s"))
    doc = json.loads((tmp_path / "s" / "graph.json").read_text())
    assert "op_modules" not in doc or not doc["op_modules"]
    assert rt.saved.load(str(tmp_path / "s"))(rt.constant(3)).numpy() == 4


def test_print_of_a_starred_list_grown_in_a_loop_round_trips(tmp_path, capsys):
    """print(*l): a template slot printed as its rows, each a value of print's ("spread")."""
    import autograph as ag

    @ag.convert
    def squares(n):
        values = []
        for i in range(n):
            values.append(i * i)
        print("rows:", *values, sep=", ")
        return n

    rt.saved.save(squares.get_concrete_function(rt.constant(3)), str(tmp_path / "s"))
    path = tmp_path / "s" / "graph.json"
    loaded = rt.saved.load(str(tmp_path / "s"))
    capsys.readouterr()
    loaded(rt.constant(4))
    loaded(rt.constant(0))
    assert capsys.readouterr().out == "rows:, 0, 1, 4, 9\nrows:\n"
    text = path.read_text()
    assert '"rows": "spread"' in text
    path.write_text(text.replace('"rows": "spread"', '"rows": "spread out"'))
    with pytest.raises(LoadError, match="'rows' is true, false or 'spread'"):
        rt.saved.load(str(tmp_path / "s"))


def test_gradients_through_cond_and_while_round_trip(tmp_path):
    def f(x):
        y = rt.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x), [0, x])[1]
        z = rt.cond(x > 1.0, lambda: y * y, lambda: -y)
        return rt.gradients(z, x)

    concrete, loaded = round_trip(f, tmp_path, rt.constant(2.0))
    for value in (2.0, 0.5):
        assert_same(concrete(rt.constant(value)), loaded(rt.constant(value)))
    assert str(loaded.graph) == str(concrete.graph)


def test_the_gradient_of_a_called_function_whose_loops_read_its_inputs_round_trips(tmp_path):
    w = rt.Variable(2.0)

    @rt.function
    def loss(x):
        total = rt.while_loop(lambda i, s: i < 3,
                              lambda i, s: (i + 1, s + rt.reduce_sum(x) * w), [0, 0.0])[1]
        return rt.cond(total > 0.0, lambda: total * rt.reduce_sum(x), lambda: -total)

    def f(x):
        return rt.gradients(loss(x), [x, w])

    concrete, loaded = round_trip(f, tmp_path, rt.constant([1.0, 2.0]))
    for value in ([1.0, 2.0], [-1.0, 0.5]):
        assert_same(concrete(rt.constant(value)), loaded(rt.constant(value)))
    np.testing.assert_allclose(loaded(rt.constant([1.0, 2.0]))[1].numpy(), 3 * 3.0 * 3.0)


def test_a_printed_f_string_prints_run_time_values_in_the_loaded_graph(tmp_path, capsys):
    from runtime.ops.logging_ops import FormattedString

    def f(x):
        rt.print(FormattedString(["x=", (x, None, ".2f"), " width ", (x * 2, "r", ""),
                                  " ", (x, None, FormattedString([">", (x, None, "")]))]))
        return x

    concrete, loaded = round_trip(f, tmp_path, rt.constant(3))
    capsys.readouterr()
    loaded(rt.constant(4))
    assert capsys.readouterr().out == (
        "x=4.00 width <rt.Tensor: shape=(), dtype=int32, numpy=8>    4\n")
    concrete(rt.constant(5))
    assert capsys.readouterr().out.startswith("x=5.00 width")


def test_a_printed_container_of_tensors_prints_run_time_values_in_the_loaded_graph(
        tmp_path, capsys):
    """Values of an f-string part may be nested structures; an object's text shown in a
    container (logging_ops.Shown) prints as it is; flush=True is kept."""
    from runtime.ops.logging_ops import FormattedString, Shown

    def f(x):
        shown = Shown(FormattedString(["Obj(", (x, None, ".1f"), ")"]))
        rt.print(FormattedString(["s=", ({"xs": [x, (x * 2, None)], "obj": [shown]}, "s", ""),
                                  " ", ((x,), "%", "%r")]), flush=True)
        return x

    concrete, loaded = round_trip(f, tmp_path, rt.constant(3))
    capsys.readouterr()
    loaded(rt.constant(4))
    assert capsys.readouterr().out == (
        "s={'xs': [<rt.Tensor: shape=(), dtype=int32, numpy=4>, "
        "(<rt.Tensor: shape=(), dtype=int32, numpy=8>, None)], 'obj': [Obj(4.0)]} "
        "(<rt.Tensor: shape=(), dtype=int32, numpy=4>,)\n")
    flushes = [op.attrs.get("flush") for op in loaded.graph.get_operations()
               if op.type == "print"]
    assert flushes == [True]


def test_a_version_1_save_still_loads_without_its_source_lines(tmp_path):
    """Version 1 had no arrays digest and origins of [file, line, function]."""
    concrete, _ = round_trip(lambda x: rt.reshape(x, [2]) * 3.0, tmp_path,
                             rt.TensorSpec([None], rt.float32))
    path = tmp_path / "saved" / "graph.json"
    doc = json.loads(path.read_text())
    doc["version"] = 1
    del doc["arrays_sha256"]
    for op in doc["graph"]["ops"]:
        op["origin"] = op["origin"][:3]
    path.write_text(json.dumps(doc))
    loaded = rt.saved.load(str(tmp_path / "saved"))
    np.testing.assert_array_equal(loaded(np.float32([1, 2])).numpy(), [3.0, 6.0])
    with pytest.raises(rt.errors.OpError) as error:
        loaded(np.float32([1, 2, 3]))
    assert "test_saved.py" in str(error.value) and "rt.reshape(x, [2])" not in str(error.value)


def test_the_bytes_form_round_trips_and_holds_the_same_description(tmp_path):
    concrete = rt.function(many_ops).get_concrete_function(
        np.arange(6, dtype=np.float32).reshape(2, 3), rt.constant(4))
    data = rt.saved.to_bytes(concrete)
    assert data.startswith(rt.saved.BYTES_MAGIC)
    loaded = rt.saved.from_bytes(data)
    assert str(loaded.graph) == str(concrete.graph)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_same(concrete(x, rt.constant(4)), loaded(x, rt.constant(4)))
    rt.saved.save(concrete, str(tmp_path / "s"))
    assert (tmp_path / "s" / "graph.json").read_bytes() in data
    with pytest.raises(LoadError, match="not a saved graph"):
        rt.saved.from_bytes(b"PK\x03\x04 an npz alone")
    with pytest.raises(TypeError, match="from_bytes expects bytes"):
        rt.saved.from_bytes("text")
