"""rt.data: each transformation against the same pipeline written in plain Python, eagerly
and traced (rt.function, which iterates a data set of known length by unrolling it);
shuffle's buffer, seeds and passes; errors; what saving, ONNX export and the compiled tier
do with data set ops. Loops over data sets in converted functions (graph loops) are in
tests/autograph/test_datasets.py."""
import copy
import itertools

import numpy as np
import pytest

import runtime as rt
from runtime.ops import data_ops

Dataset = rt.data.Dataset


def values(ds):
    """The elements of `ds` as Python numbers and lists (tuples and dicts kept)."""
    return [_plain(e) for e in ds]


def _plain(element):
    if isinstance(element, tuple):
        return tuple(_plain(e) for e in element)
    if isinstance(element, dict):
        return {k: _plain(v) for k, v in element.items()}
    return element.numpy().tolist()


def chunks(items, size, drop=False):
    out = [items[i:i + size] for i in range(0, len(items), size)]
    return [c for c in out if len(c) == size] if drop else out


def gen_source(n):
    def gen():
        yield from range(n)
    return Dataset.from_generator(gen, output_signature=rt.TensorSpec([], rt.int64))


# -- transformations: eager iteration against plain Python ------------------------------------

X = np.arange(10)


@pytest.mark.parametrize("make, want", [
    (lambda: Dataset.from_tensor_slices(X), list(range(10))),
    (lambda: Dataset.from_tensor_slices(X).batch(4), chunks(list(range(10)), 4)),
    (lambda: Dataset.from_tensor_slices(X).batch(4, drop_remainder=True),
     chunks(list(range(10)), 4, drop=True)),
    (lambda: Dataset.from_tensor_slices(X).map(lambda v: v * v + 1),
     [v * v + 1 for v in range(10)]),
    (lambda: Dataset.from_tensor_slices(X).filter(lambda v: v % 3 == 1), [1, 4, 7]),
    (lambda: Dataset.from_tensor_slices(X).take(3), [0, 1, 2]),
    (lambda: Dataset.from_tensor_slices(X).take(-1), list(range(10))),
    (lambda: Dataset.from_tensor_slices(X).take(20), list(range(10))),
    (lambda: Dataset.from_tensor_slices(X).skip(7), [7, 8, 9]),
    (lambda: Dataset.from_tensor_slices(X).skip(-1), []),
    (lambda: Dataset.from_tensor_slices(X).skip(20), []),
    (lambda: Dataset.from_tensor_slices(X[:3]).repeat(2), [0, 1, 2] * 2),
    (lambda: Dataset.from_tensor_slices(X[:3]).repeat().take(7), [0, 1, 2, 0, 1, 2, 0]),
    (lambda: Dataset.from_tensor_slices(X[:0]).repeat(), []),
    (lambda: Dataset.range(5), list(range(5))),
    (lambda: Dataset.range(2, 11, 3), list(range(2, 11, 3))),
    (lambda: Dataset.range(9, 1, -2), list(range(9, 1, -2))),
    (lambda: Dataset.range(3, 3), []),
    (lambda: Dataset.zip(Dataset.range(3), Dataset.from_tensor_slices(X)),
     [(i, i) for i in range(3)]),
    (lambda: Dataset.zip({"a": Dataset.range(2), "b": Dataset.range(5, 9)}),
     [{"a": 0, "b": 5}, {"a": 1, "b": 6}]),
    (lambda: Dataset.from_tensor_slices(X[:3]).enumerate(10), [(10, 0), (11, 1), (12, 2)]),
    (lambda: Dataset.from_tensor_slices(X).batch(4).unbatch(), list(range(10))),
    (lambda: Dataset.from_tensor_slices(X).prefetch(2), list(range(10))),
    (lambda: Dataset.from_tensors([1, 2]), [[1, 2]]),
    (lambda: gen_source(5), list(range(5))),
    (lambda: gen_source(5).batch(2), [[0, 1], [2, 3], [4]]),
    (lambda: gen_source(5).batch(2, drop_remainder=True), [[0, 1], [2, 3]]),
    (lambda: gen_source(6).skip(2).take(3), [2, 3, 4]),
    (lambda: gen_source(3).enumerate(), [(0, 0), (1, 1), (2, 2)]),
    (lambda: Dataset.zip(gen_source(2), Dataset.range(5)), [(0, 0), (1, 1)]),
    (lambda: gen_source(7).filter(lambda v: v % 2 == 0).map(lambda v: v // 2), [0, 1, 2, 3]),
    (lambda: Dataset.from_tensor_slices(X).filter(lambda v: v > 2).repeat(2).batch(4),
     chunks(list(range(3, 10)) * 2, 4)),
    (lambda: gen_source(3).map(lambda v: rt.stack([v, v])).unbatch(), [0, 0, 1, 1, 2, 2]),
    (lambda: Dataset.from_tensor_slices(X).map(lambda v: (v, -v)).batch(3).take(1),
     [([0, 1, 2], [0, -1, -2])]),
], ids=itertools.count())
def test_transformations_give_the_elements_python_gives(make, want):
    assert values(make()) == want
    if int(make().cardinality()) >= 0:    # unrolled while tracing: its length is known
        assert [_plain(e) for e in rt.function(lambda: list(make()))()] == want


def test_structures_pass_through_slices_and_batches():
    data = Dataset.from_tensor_slices({"x": np.arange(10.0), "y": np.arange(10) % 3})
    assert len(data) == 10
    first = next(iter(data))
    assert float(first["x"]) == 0.0 and int(first["y"]) == 0
    assert [int(b["x"].shape[0]) for b in data.batch(4)] == [4, 4, 2] and len(data.batch(4)) == 3
    assert [len(b["y"]) for b in data.batch(4, drop_remainder=True)] == [4, 4]
    Point = __import__("collections").namedtuple("Point", "x y")
    assert values(Dataset.from_tensor_slices(Point([1, 2], [3, 4]))) == [(1, 3), (2, 4)]
    assert values(Dataset.from_tensor_slices([[1, 2], [3, 4]])) == [[1, 2], [3, 4]]   # one tensor


def test_a_map_function_gets_a_tuples_components_as_arguments_and_is_traced_once():
    traces = []

    def scale(x, y):
        traces.append(1)             # Python runs while tracing only
        return x * 2, y + 1

    data = Dataset.from_tensor_slices((np.arange(4.0), np.arange(4))).map(scale)
    assert values(data) == [(0.0, 1), (2.0, 2), (4.0, 3), (6.0, 4)]
    assert values(data.batch(3)) == [([0.0, 2.0, 4.0], [1, 2, 3]), ([6.0], [4])]
    assert len(traces) == 1 and data.element_spec[0].dtype == rt.float64


def test_a_map_function_returning_python_numbers_and_lists_gives_tensors():
    data = Dataset.range(3).map(lambda v: [v, 7])
    assert values(data) == [(0, 7), (1, 7), (2, 7)]
    assert data.element_spec[1].dtype == rt.int32


def test_cardinality_and_len():
    n = {"slices": Dataset.range(10), "batch": Dataset.range(10).batch(3),
         "drop": Dataset.range(10).batch(3, drop_remainder=True),
         "take": Dataset.range(10).take(4), "skip": Dataset.range(10).skip(4),
         "repeat": Dataset.range(3).repeat(2), "zip": Dataset.zip(Dataset.range(3),
                                                                  Dataset.range(5)),
         "unbatch": Dataset.range(8).batch(4, drop_remainder=True).unbatch()}
    assert {k: len(d) for k, d in n.items()} == {
        "slices": 10, "batch": 4, "drop": 3, "take": 4, "skip": 6, "repeat": 6, "zip": 3,
        "unbatch": 8}
    assert int(Dataset.range(3).repeat().cardinality()) == rt.data.INFINITE_CARDINALITY
    assert int(Dataset.range(3).filter(lambda v: v > 0).cardinality()) == \
        rt.data.UNKNOWN_CARDINALITY
    with pytest.raises(TypeError, match="infinite"):
        len(Dataset.range(3).repeat())
    with pytest.raises(TypeError, match="unknown"):
        len(gen_source(3))


# -- shuffle ---------------------------------------------------------------------------------

def orders(ds, passes=3):
    return [values(ds) for _ in range(passes)]


def test_shuffle_gives_a_new_order_each_pass_reproducibly_from_its_seed():
    first = orders(Dataset.range(20).shuffle(8, seed=5))
    assert all(sorted(p) == list(range(20)) for p in first)
    assert len({tuple(p) for p in first}) == 3 and list(range(20)) not in first
    assert orders(Dataset.range(20).shuffle(8, seed=5)) == first    # a new data set: again
    assert orders(Dataset.range(20).shuffle(8, seed=6)) != first


def test_shuffle_without_reshuffling_gives_one_order():
    same = orders(Dataset.range(20).shuffle(20, seed=5, reshuffle_each_iteration=False))
    assert same[0] == same[1] == same[2] != list(range(20))


def test_shuffle_emits_through_a_buffer_of_buffer_size():
    # Output t is one of the first t + buffer_size elements (TensorFlow's buffer).
    for k in (1, 3, 8, 40):
        for order in orders(Dataset.range(30).shuffle(k, seed=k)):
            assert all(v < t + k for t, v in enumerate(order)), (k, order)
    assert values(Dataset.range(10).shuffle(1, seed=1)) == list(range(10))


def test_shuffle_order_is_tensorflows_buffer_fed_element_by_element():
    def buffered(n, k, draws):        # TF: fill k; emit a random one, the next in its place
        buffer, out = [], []
        for element in range(n):
            buffer.append(element)
            if len(buffer) == k:
                out.append(_take(buffer, draws[len(out)]))
        while buffer:
            out.append(_take(buffer, draws[len(out)]))
        return out

    def _take(buffer, j):
        buffer[j], buffer[-1] = buffer[-1], buffer[j]
        return buffer.pop()

    for n, k, seed in itertools.product([0, 1, 5, 17, 64], [1, 2, 7, 64, 100], [0, -3, 99]):
        t = np.arange(n)
        draws = data_ops._draws(np.int64(seed), t, np.minimum(k, n - t)).tolist()
        got = data_ops.shuffle_order(n, np.int64(seed), k).numpy().tolist()
        assert got == buffered(n, k, draws), (n, k, seed)


def test_shuffle_of_a_pulled_source_gives_the_order_of_an_indexed_one():
    # from_generator and filter shuffle through a buffer of elements, slices through an
    # order computed at once: the same draws, the same order.
    indexed = orders(Dataset.range(12).shuffle(5, seed=2))
    assert orders(gen_source(12).shuffle(5, seed=2)) == indexed
    assert orders(Dataset.range(12).filter(lambda v: v >= 0).shuffle(5, seed=2)) == indexed


def test_shuffle_seeds_follow_the_random_ops_rule():
    rt.random.set_seed(3)
    a = orders(Dataset.range(10).shuffle(10), 2)
    rt.random.set_seed(3)
    assert orders(Dataset.range(10).shuffle(10), 2) == a
    rt.random.set_seed(None)
    unseeded = [orders(Dataset.range(30).shuffle(30), 1)[0] for _ in range(3)]
    assert len({tuple(o) for o in unseeded}) == 3


def test_shuffle_then_repeat_reshuffles_each_repetition():
    data = Dataset.range(6).shuffle(6, seed=1).repeat(3)
    elements = values(data)
    passes = [elements[:6], elements[6:12], elements[12:]]
    assert all(sorted(p) == list(range(6)) for p in passes) and len(
        {tuple(p) for p in passes}) == 3


def test_a_copied_data_set_continues_its_own_passes():
    data = Dataset.range(8).shuffle(8, seed=4).map(lambda v: v + 1)
    values(data)
    copied = copy.deepcopy(data)
    assert values(copied) == values(data)


def test_shuffle_draws_are_uniform():
    draws = data_ops._draws(np.int64(123), np.arange(60000), 6)
    counts = np.bincount(draws, minlength=6)
    assert counts.min() > 9500 and counts.max() < 10500 and draws.max() < 6


# -- from_generator -----------------------------------------------------------------------------

def test_from_generator_calls_the_generator_anew_each_pass_with_its_args():
    calls = []

    def gen(n):
        calls.append(int(n))
        for i in range(int(n)):
            yield {"i": i, "half": i / 2}

    spec = {"i": rt.TensorSpec([], rt.int32), "half": rt.TensorSpec([], rt.float32)}
    data = Dataset.from_generator(gen, output_signature=spec, args=(3,))
    assert values(data) == [{"i": 0, "half": 0.0}, {"i": 1, "half": 0.5}, {"i": 2, "half": 1.0}]
    assert values(data.take(1)) == [{"i": 0, "half": 0.0}] and calls == [3, 3]
    old = Dataset.from_generator(lambda: iter([[1, 2]]), output_types=rt.int64,
                                 output_shapes=[2])
    assert values(old) == [[1, 2]]


def test_from_generator_values_that_do_not_fit_the_signature_are_clear_errors():
    def bad_shape():
        yield np.zeros(3)

    data = Dataset.from_generator(bad_shape, output_signature=rt.TensorSpec([2], rt.float64))
    with pytest.raises(ValueError, match=r"from_generator\(.*bad_shape\).*shape \(3,\).*\(2,\)"):
        values(data)

    def bad_structure():
        yield 1

    data = Dataset.from_generator(bad_structure, output_signature=(
        rt.TensorSpec([], rt.int32), rt.TensorSpec([], rt.int32)))
    with pytest.raises(TypeError, match="structure of output_signature"):
        values(data)
    with pytest.raises(TypeError, match="output_signature"):
        Dataset.from_generator(bad_structure)


def test_an_error_in_the_generator_reaches_the_caller():
    def failing():
        yield 1
        raise KeyError("no more")

    data = Dataset.from_generator(failing, output_signature=rt.TensorSpec([], rt.int32))
    with pytest.raises(KeyError, match="no more"):
        values(data)


# -- errors ------------------------------------------------------------------------------------

def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="first dimensions differ"):
        Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))
    with pytest.raises(ValueError, match="first dimension"):
        Dataset.from_tensor_slices(rt.constant(1.0))
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        Dataset.range(3).batch(0)
    with pytest.raises(ValueError, match="buffer_size must be a positive int"):
        Dataset.range(3).shuffle(0)
    with pytest.raises(ValueError, match="step must not be zero"):
        Dataset.range(0, 5, 0)
    with pytest.raises(TypeError, match="scalar bool"):
        Dataset.range(3).filter(lambda v: v + 1)
    with pytest.raises(ValueError, match="first dimension"):
        Dataset.range(3).unbatch()


def test_batching_elements_of_different_shapes_is_an_error_naming_batch():
    def ragged():
        yield [1, 2]
        yield [1, 2, 3]

    data = Dataset.from_generator(ragged, output_signature=rt.TensorSpec([None], rt.int32))
    with pytest.raises(rt.errors.InvalidArgumentError, match="batch: its elements have "
                                                             "different shapes"):
        values(data.batch(2))


def test_slices_of_a_traced_functions_arguments_are_graph_ops():
    def shuffled_batch_sums(features, labels):
        data = Dataset.from_tensor_slices((features, labels))
        return [rt.reduce_sum(x) - rt.reduce_sum(y) for x, y in data.shuffle(4, seed=3).batch(3)]

    features, labels = np.arange(7.0), np.ones(7)
    expected = [float(t) for t in shuffled_batch_sums(features, labels)]
    traced = rt.function(shuffled_batch_sums)(rt.constant(features), rt.constant(labels))
    assert [float(t) for t in traced] == expected and len(expected) == 3
    assert expected != [0.0, 9.0, 5.0]          # the unshuffled batches
    # Of unknown length, Python cannot unroll it while tracing: a converted `for` loops.
    spec = rt.TensorSpec([None], rt.float64)
    fn = rt.function(shuffled_batch_sums, input_signature=[spec, spec])
    with pytest.raises(TypeError, match="an unknown number of elements cannot be iterated "
                                        "by Python while tracing.*autograph.convert"):
        fn.get_concrete_function()


def test_slices_of_unequal_lengths_known_at_run_time_fail_when_the_graph_runs():
    @rt.function(input_signature=[rt.TensorSpec([None]), rt.TensorSpec([None])])
    def first(a, b):
        return next(iter(Dataset.from_tensor_slices((a, b)).take(1)))

    with pytest.raises(TypeError, match="unknown number"):
        first.get_concrete_function()
    iteration = rt.function(lambda a, b: rt.data.Iteration(
        Dataset.from_tensor_slices((a, b))).initial[0],
        input_signature=[rt.TensorSpec([None]), rt.TensorSpec([None])])
    assert bool(iteration(rt.zeros([2]), rt.zeros([2])))
    with pytest.raises(rt.errors.InvalidArgumentError, match="from_tensor_slices: the first "
                                                             "dimensions of its tensors differ"):
        iteration(rt.zeros([2]), rt.zeros([3]))


# -- gradients ----------------------------------------------------------------------------------

def test_gradients_reach_the_sliced_tensors_eagerly_and_in_graphs():
    x = rt.constant(np.arange(1.0, 7.0))

    def loss(x):        # each element's square, times the size of its batch (4 or 2)
        total = rt.constant(0.0, rt.float64)
        for batch in Dataset.from_tensor_slices(x).shuffle(6, seed=1).batch(4):
            total += rt.reduce_sum(batch * batch) * rt.cast(rt.shape(batch)[0], rt.float64)
        return total

    with rt.GradientTape() as tape:
        tape.watch(x)
        y = loss(x)
    eager = tape.gradient(y, x).numpy()
    graph = rt.function(lambda x: rt.gradients(loss(x), x)[0])(x).numpy()
    np.testing.assert_allclose(graph, eager)
    sizes = eager / (2 * x.numpy())
    assert sorted(sizes.tolist()) == [2, 2, 4, 4, 4, 4] and sizes.tolist() != [4] * 4 + [2] * 2


# -- saving, ONNX, the compiled tier ----------------------------------------------------------

def _loop_function(data):
    import autograph as ag

    @ag.convert
    def total(scale):
        s = rt.constant(0.0, rt.float64)
        for batch in data:
            s = s * 0.5 + rt.reduce_sum(batch) * scale
        return s
    return total


def test_a_graph_looping_over_an_unshuffled_data_set_saves_and_loads(tmp_path):
    data = Dataset.from_tensor_slices(np.arange(10.0)).map(lambda v: v * 2).filter(
        lambda v: v > 3).batch(3)
    total = _loop_function(data)
    want = float(total(rt.constant(2.0, rt.float64)))
    rt.saved.save(total, str(tmp_path))
    loaded = rt.saved.load(str(tmp_path))
    assert float(loaded(rt.constant(2.0, rt.float64))) == want == float(
        _loop_function(data).python_function(rt.constant(2.0, rt.float64)))


def test_saving_a_reshuffling_or_generator_data_set_is_a_save_error_naming_it(tmp_path):
    total = _loop_function(Dataset.range(6).shuffle(6, seed=1))
    total(rt.constant(1, rt.int64))
    with pytest.raises(rt.saved.SaveError, match="dataset_pass_seed.*passes over the data "
                                                 "set shuffled at .*test_data.py.*"
                                                 "reshuffle_each_iteration=False"):
        rt.saved.save(total, str(tmp_path))
    total = _loop_function(gen_source(3))
    total(rt.constant(1, rt.int64))
    with pytest.raises(rt.saved.SaveError, match=r"Dataset.from_generator\(gen_source"):
        rt.saved.save(total, str(tmp_path))
    fixed = _loop_function(Dataset.range(6).shuffle(6, seed=1, reshuffle_each_iteration=False))
    want = float(fixed(rt.constant(1, rt.int64)))
    rt.saved.save(fixed, str(tmp_path))
    assert float(rt.saved.load(str(tmp_path))(rt.constant(1, rt.int64))) == want


def test_onnx_export_of_a_data_set_loop_is_an_export_error_naming_the_ops(tmp_path):
    pytest.importorskip("onnx")
    total = _loop_function(Dataset.from_tensor_slices(np.arange(6)).batch(2))
    with pytest.raises(rt.onnx.ExportError, match="no ONNX equivalent: .*dataset_gather"):
        rt.onnx.export(total, str(tmp_path / "m.onnx"), rt.constant(1, rt.int64))


def test_the_compiled_tier_runs_data_set_loops_as_the_fast_executor_does():
    import autograph as ag
    pytest.importorskip("numba")

    def run(jit):
        data = Dataset.from_tensor_slices(np.arange(12.0)).shuffle(5, seed=2).map(
            lambda v: v * 3).batch(5)
        f = ag.convert(_loop_function(data).python_function, jit_compile=jit)
        with rt.config.options(compile_policy="always"):
            return [float(f(rt.constant(1.5, rt.float64))) for _ in range(3)]

    assert run(True) == run(False)
