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


def rows(t):
    return Dataset.from_tensor_slices(t)


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
    (lambda: Dataset.range(3).concatenate(Dataset.range(10, 12)), [0, 1, 2, 10, 11]),
    (lambda: Dataset.range(3).concatenate(Dataset.range(10, 12)).batch(2),
     [[0, 1], [2, 10], [11]]),
    (lambda: gen_source(2).concatenate(Dataset.range(5, 7)).concatenate(gen_source(1)),
     [0, 1, 5, 6, 0]),
    (lambda: Dataset.range(3).map(lambda v: v * 2).concatenate(gen_source(2)), [0, 2, 4, 0, 1]),
    (lambda: Dataset.range(2).concatenate(Dataset.range(3).repeat()).take(6),
     [0, 1, 0, 1, 2, 0]),
    (lambda: Dataset.range(10).shard(3, 0), [0, 3, 6, 9]),
    (lambda: Dataset.range(10).shard(3, 2), [2, 5, 8]),
    (lambda: Dataset.range(10).shard(3, 1).batch(2), [[1, 4], [7]]),
    (lambda: gen_source(10).shard(4, 1), [1, 5, 9]),
    (lambda: Dataset.range(5).repeat().shard(2, 1).take(4), [1, 3, 0, 2]),
    (lambda: Dataset.range(1, 5).map(lambda n: rt.fill([n], n)).padded_batch(2),
     [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]),
    (lambda: Dataset.range(1, 5).map(lambda n: rt.fill([n], n)).padded_batch(2, 5, -1),
     [[[1, -1, -1, -1, -1], [2, 2, -1, -1, -1]], [[3, 3, 3, -1, -1], [4, 4, 4, 4, -1]]]),
    (lambda: Dataset.range(1, 4).map(lambda n: rt.fill([n], n)).padded_batch(
        2, drop_remainder=True), [[[1, 0], [2, 2]]]),
    (lambda: Dataset.zip(Dataset.range(1, 3).map(lambda n: rt.fill([n], n)), Dataset.range(
        2)).padded_batch(2, ([3], []), (7, 0)), [([[1, 7, 7], [2, 2, 7]], [0, 1])]),
    (lambda: Dataset.from_tensor_slices(X[:5]).padded_batch(2), [[0, 1], [2, 3], [4]]),
    (lambda: Dataset.range(5).map(lambda v: v * v).cache(), [0, 1, 4, 9, 16]),
    (lambda: gen_source(4).cache().batch(3), [[0, 1, 2], [3]]),
    (lambda: Dataset.from_tensor_slices([[1, 2, 3], [4, 5, 6]]).flat_map(rows),
     [1, 2, 3, 4, 5, 6]),
    (lambda: Dataset.range(4).flat_map(lambda n: Dataset.range(n)), [0, 0, 1, 0, 1, 2]),
    (lambda: gen_source(3).flat_map(lambda n: gen_source(2).map(lambda v: v + 10 * n)),
     [0, 1, 10, 11, 20, 21]),
    (lambda: Dataset.range(1, 6).interleave(lambda x: Dataset.from_tensors(x).repeat(6),
                                            cycle_length=2, block_length=4),
     [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5]),
    (lambda: Dataset.range(4).interleave(lambda n: Dataset.range(10 * n, 10 * n + n),
                                         cycle_length=3),
     [10, 20, 30, 21, 31, 32]),
    (lambda: Dataset.range(3).interleave(lambda n: Dataset.range(n), cycle_length=1),
     [0, 0, 1]),
    (lambda: Dataset.range(3).apply(lambda ds: ds.map(lambda v: v + 1)), [1, 2, 3]),
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


def test_cardinality_and_len_of_the_tensorflow_additions():
    ten = Dataset.range(10)
    known = {"concatenate": ten.concatenate(Dataset.range(5)), "shard": ten.shard(3, 0),
             "shard last": ten.shard(3, 2), "padded": ten.map(lambda v: rt.fill([v], v))
             .padded_batch(4), "padded drop": ten.padded_batch(4, drop_remainder=True),
             "cache": ten.map(lambda v: v * 2).cache()}
    assert {k: len(d) for k, d in known.items()} == {
        "concatenate": 15, "shard": 4, "shard last": 3, "padded": 3, "padded drop": 2,
        "cache": 10}
    unknown = [ten.flat_map(lambda v: Dataset.range(v)), ten.interleave(
        lambda v: Dataset.range(v), cycle_length=2), ten.concatenate(gen_source(2)),
        gen_source(5).shard(2, 1), gen_source(5).cache()]
    assert [int(d.cardinality()) for d in unknown] == [rt.data.UNKNOWN_CARDINALITY] * 5
    infinite = [ten.repeat().concatenate(ten), ten.concatenate(ten.repeat()),
                ten.repeat().shard(2, 0), ten.repeat().cache()]
    assert [int(d.cardinality()) for d in infinite] == [rt.data.INFINITE_CARDINALITY] * 4
    for data in unknown[:1] + infinite[:1]:
        with pytest.raises(TypeError, match="unknown|infinite"):
            len(data)


# -- cache ---------------------------------------------------------------------------------------

def counted_source(n, calls):
    def gen():
        calls.append(1)
        yield from range(n)
    return Dataset.from_generator(gen, output_signature=rt.TensorSpec([], rt.int64))


def test_cache_runs_the_pipeline_before_it_only_on_the_first_full_pass():
    calls = []
    data = counted_source(4, calls).map(lambda v: v * 2).cache()
    assert values(data.take(2)) == [0, 2] and len(calls) == 1     # unfinished: not kept
    assert orders(data) == [[0, 2, 4, 6]] * 3 and len(calls) == 2
    assert orders(data.batch(3), 2) == [[[0, 2, 4], [6]]] * 2 and len(calls) == 2


def test_cache_after_shuffle_keeps_one_order_and_shuffle_after_cache_reshuffles():
    kept = orders(Dataset.range(12).shuffle(12, seed=3).cache())
    assert kept[0] == kept[1] == kept[2] != list(range(12))
    calls = []
    reshuffled = orders(counted_source(12, calls).cache().shuffle(12, seed=3))
    assert len({tuple(o) for o in reshuffled}) == 3 and len(calls) == 1
    assert all(sorted(o) == list(range(12)) for o in reshuffled)


def test_a_pass_begun_before_the_cache_is_complete_reads_the_pipeline():
    calls = []
    data = counted_source(3, calls).cache()
    pairs = values(Dataset.zip(data, data))       # two passes at once: both pull
    assert pairs == [(0, 0), (1, 1), (2, 2)] and len(calls) == 2
    assert values(data) == [0, 1, 2] and len(calls) == 2


def test_a_cache_file_is_written_by_the_first_full_pass_and_read_by_later_data_sets(tmp_path):
    calls = []

    def ragged():
        calls.append(1)
        yield from ([1, 2, 3], [4], np.zeros(0, np.int64))

    def make():
        source = Dataset.from_generator(ragged, output_signature=rt.TensorSpec([None], rt.int64))
        return Dataset.zip(source, Dataset.range(3)).cache(str(tmp_path / "cache"))

    want = [([1, 2, 3], 0), ([4], 1), ([], 2)]
    assert values(make()) == want and calls == [1]
    assert values(make()) == want and calls == [1]            # a new program would, too
    assert int(rt.function(lambda: make().reduce(
        np.int64(0), lambda s, e: s + rt.reduce_sum(e[0]) + e[1]))()) == 13     # in a graph
    assert calls == [1]
    with pytest.raises(rt.errors.InvalidArgumentError,
                       match="cache: the file .*cache' does not hold elements of the data set "
                             "cached at .*test_data.py.*remove it"):
        values(Dataset.range(3).cache(str(tmp_path / "cache")))
    (tmp_path / "junk").write_bytes(b"not an npz file")
    with pytest.raises(rt.errors.InvalidArgumentError, match="does not hold elements"):
        values(Dataset.range(3).cache(str(tmp_path / "junk")))


# -- padded_batch, concatenate, shard, flat_map, interleave: their errors ------------------------

def test_padded_batch_pads_each_component_to_its_shape():
    def ragged():
        yield [1, 2, 3], [10]
        yield [4, 5], [11, 12]

    data = Dataset.from_generator(ragged, output_signature=(
        rt.TensorSpec([None], rt.int32), rt.TensorSpec([None], rt.int32)))
    padded = data.padded_batch(2, padded_shapes=([4], [None]), padding_values=(-1, 100))
    assert values(padded) == [([[1, 2, 3, -1], [4, 5, -1, -1]], [[10, 100], [11, 12]])]
    assert [s.shape.as_list() for s in padded.element_spec] == [[None, 4], [None, None]]
    words = Dataset.range(1, 4).map(lambda n: rt.cast(rt.fill([n, 2], n), rt.float32))
    assert values(words.padded_batch(3, padding_values=0.5))[0][0] == [
        [1, 1], [0.5, 0.5], [0.5, 0.5]]


def test_padded_batch_errors_name_the_shapes():
    lengths = Dataset.range(1, 5).map(lambda n: rt.fill([n], n))
    with pytest.raises(rt.errors.InvalidArgumentError,
                       match=r"padded_batch: an element has shape \(3,\), which does not fit "
                             r"the padded shape \(2,\)"):
        values(lengths.padded_batch(2, padded_shapes=[2]))
    with pytest.raises(ValueError, match=r"padded shape \(2, 2\) does not fit the component "
                                         r"shape \(None,\)"):
        lengths.padded_batch(2, padded_shapes=[2, 2])
    with pytest.raises(ValueError, match="structure of the elements"):
        lengths.padded_batch(2, padded_shapes=([2], [3]))
    with pytest.raises(TypeError, match="scalar of the component's dtype int64"):
        lengths.padded_batch(2, padding_values=rt.constant(1.5))
    unknown = Dataset.from_generator(lambda: iter([[1]]), output_signature=rt.TensorSpec(
        None, rt.int32))
    with pytest.raises(ValueError, match="padded_shapes must be given"):
        unknown.padded_batch(2)


def test_concatenate_joins_element_specs_and_refuses_other_dtypes():
    a = Dataset.from_tensor_slices(np.zeros((2, 3)))
    joined = a.concatenate(Dataset.from_tensor_slices(np.ones((1, 4))))
    assert joined.element_spec.shape.as_list() == [None]
    assert values(joined) == [[0.0] * 3, [0.0] * 3, [1.0] * 4]
    with pytest.raises(TypeError, match="concatenate: the data sets' elements differ in dtype"):
        a.concatenate(Dataset.range(3))
    with pytest.raises(TypeError, match="differ in structure"):
        a.concatenate(Dataset.zip(a, a))
    with pytest.raises(TypeError, match="concatenate takes a data set"):
        a.concatenate([1, 2])


def test_shard_arguments_are_checked_as_tensorflow_does():
    with pytest.raises(rt.errors.InvalidArgumentError, match="num_shards must be positive"):
        Dataset.range(4).shard(0, 0)
    with pytest.raises(rt.errors.InvalidArgumentError, match=r"index must be in \[0, "
                                                             r"num_shards\), got index 3"):
        Dataset.range(4).shard(3, 3)


def test_flat_map_and_interleave_errors_name_the_transformation():
    with pytest.raises(TypeError, match="flat_map: the function must return a data set"):
        Dataset.range(3).flat_map(lambda v: v + 1)
    with pytest.raises(TypeError, match="interleave needs a function"):
        Dataset.range(3).interleave(3)
    with pytest.raises(ValueError, match="interleave: cycle_length must be a positive int"):
        Dataset.range(3).interleave(lambda v: Dataset.range(v), cycle_length=0)
    with pytest.raises(TypeError, match="cache: filename must be a path"):
        Dataset.range(3).cache(3)


def test_a_flat_map_function_runs_once_per_trace_not_once_per_element():
    made = []

    def expand(n):
        made.append(1)
        return Dataset.range(n)

    data = Dataset.range(5).flat_map(expand)
    assert values(data) == [0, 0, 1, 0, 1, 2, 0, 1, 2, 3] and len(made) == 2   # start, next
    values(data)
    assert len(made) == 2


# -- reduce --------------------------------------------------------------------------------------

def test_reduce_gives_the_final_state_eagerly_and_in_graphs():
    def stats(data):
        return data.reduce((np.int64(0), np.float64(0.0)), lambda s, x: (s[0] + 1, s[1] + x))

    data = Dataset.from_tensor_slices(np.arange(1.0, 6.0))
    assert [float(t) for t in stats(data)] == [5, 15.0]
    assert [float(t) for t in rt.function(stats)(data)] == [5, 15.0]
    assert int(Dataset.range(5).reduce(np.int64(0), lambda x, _: x + 1)) == 5
    assert int(Dataset.range(0).reduce(np.int64(7), lambda x, y: x + y)) == 7
    assert int(Dataset.range(5).reduce(0, lambda x, y: x + y)) == 10    # a number adapts


def test_reduce_relaxes_a_state_that_changes_shape_and_keeps_its_dtypes():
    grown = Dataset.range(4).reduce(rt.zeros([0], rt.int64), lambda s, x: rt.concat(
        [s, rt.reshape(x, [1])], 0))
    assert grown.numpy().tolist() == [0, 1, 2, 3]
    with pytest.raises(TypeError, match="reduce: the function must keep the state's dtypes: "
                                        "float32 in the initial state, float64 returned"):
        Dataset.from_tensor_slices(np.arange(3.0)).reduce(rt.constant(0.0), lambda s, x: s + x)
    with pytest.raises(TypeError, match="reduce: the function must return the structure"):
        Dataset.range(3).reduce((np.int64(0), np.int64(0)), lambda s, x: s[0] + x)


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

    cases = list(itertools.product([0, 1, 5, 17, 64, 300], [1, 2, 7, 64, 100, 299], [0, -3]))
    for n, k, seed in cases + [(70000, 69000, 5), (70000, 300, 6)]:    # slots past 2**16
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
    calls = []
    cached = counted_source(3, calls).cache()
    values(cached)
    copied = copy.deepcopy(cached)
    assert values(copied) == [0, 1, 2] and len(calls) == 1       # the cache it had
    unfilled = copy.deepcopy(counted_source(3, calls).cache())
    assert values(unfilled) == values(unfilled) == [0, 1, 2] and len(calls) == 2


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
