"""`for x in dataset` in converted functions: one graph loop over a pass of the data set.

The oracle is the same Python run eagerly on a twin data set (same seed): per pass the same
elements in the same order, a new order on every pass (each call of the converted function
makes a new pass over a data set it captures), the same printed text, the same training.
The graph does not grow with the data. rt.data itself is tested in
tests/runtime/test_data.py."""
import contextlib
import io
import threading

import numpy as np
import pytest

import autograph as ag
import runtime as rt

Dataset = rt.data.Dataset
F64 = rt.float64


def gen_source(n):
    def gen():
        yield from np.arange(n, dtype=np.float64)
    return Dataset.from_generator(gen, output_signature=rt.TensorSpec([], F64))


X = np.arange(11.0)
PIPELINES = {
    "slices": lambda: Dataset.from_tensor_slices(X),
    "shuffle-batch": lambda: Dataset.from_tensor_slices(X).shuffle(4, seed=2).batch(3),
    "shuffle-all-batch-drop": lambda: Dataset.from_tensor_slices(X).shuffle(
        11, seed=7).batch(3, drop_remainder=True),
    "map-shuffle": lambda: Dataset.from_tensor_slices(X).map(lambda v: v * v).shuffle(5, seed=1),
    "filter-shuffle-batch": lambda: Dataset.from_tensor_slices(X).filter(
        lambda v: v % 3 > 0).shuffle(3, seed=5).batch(2),
    "skip-take-repeat": lambda: Dataset.from_tensor_slices(X).skip(2).take(4).repeat(2),
    "shuffle-repeat-batch": lambda: Dataset.from_tensor_slices(X[:5]).shuffle(
        5, seed=3).repeat(2).batch(4),
    "zip-enumerate": lambda: Dataset.zip(Dataset.from_tensor_slices(X), Dataset.range(
        6)).enumerate(1).map(lambda i, pair: pair[0] * rt.cast(i + pair[1], F64)),
    "range-unbatch": lambda: Dataset.range(9).batch(4).unbatch().map(
        lambda v: rt.cast(v, F64)),
    "generator-shuffle-batch": lambda: gen_source(7).shuffle(3, seed=4).batch(2),
    "generator-map-repeat": lambda: gen_source(3).map(lambda v: v + 0.5).repeat(2),
    "cache-shuffle-batch": lambda: Dataset.from_tensor_slices(X).map(
        lambda v: v * 3).cache().shuffle(11, seed=3).batch(4),
    "generator-cache-shuffle": lambda: gen_source(6).cache().shuffle(4, seed=2),
    "shuffle-cache-repeat": lambda: Dataset.from_tensor_slices(X[:5]).shuffle(
        5, seed=8).cache().repeat(2),
    "concatenate-shuffle-batch": lambda: Dataset.from_tensor_slices(X[:4]).concatenate(
        Dataset.from_tensor_slices(X[6:])).shuffle(6, seed=4).batch(3),
    "generator-concatenate-batch": lambda: gen_source(3).concatenate(
        Dataset.from_tensor_slices(X[:4]).shuffle(4, seed=1)).batch(2),
    "shard-shuffle": lambda: Dataset.from_tensor_slices(X).shard(2, 1).shuffle(4, seed=6),
    "generator-shard": lambda: gen_source(9).shard(4, 3),
    "padded-batch": lambda: Dataset.range(1, 7).map(lambda n: rt.fill(
        [n], rt.cast(n, F64))).shuffle(6, seed=5).padded_batch(4, padding_values=-1.0),
    "padded-batch-fixed-drop": lambda: Dataset.range(1, 8).map(lambda n: rt.fill(
        [n % 3 + 1, 2], rt.cast(n, F64))).padded_batch(3, [4, None], drop_remainder=True),
    "flat-map-shuffle": lambda: Dataset.from_tensor_slices(X[:9].reshape(3, 3)).flat_map(
        lambda row: Dataset.from_tensor_slices(row).shuffle(3, seed=2)),
    "flat-map-generator": lambda: gen_source(3).flat_map(
        lambda v: Dataset.range(rt.cast(v, rt.int64) + 1).map(lambda i: rt.cast(i, F64) + v)),
    "interleave-shuffle": lambda: Dataset.range(1, 6).shuffle(5, seed=9).interleave(
        lambda n: Dataset.from_tensors(rt.cast(n, F64)).repeat(n), cycle_length=2,
        block_length=2),
    "interleave-shuffle-inside-repeat": lambda: Dataset.range(3).interleave(
        lambda n: Dataset.range(3 * n, 3 * n + 3).shuffle(3, seed=1).repeat(2).map(
            lambda v: rt.cast(v, F64)), cycle_length=3),
}
# Data sets made anew for each element (in a flat_map function) start again from their
# seed, and a cache after a shuffle keeps the first pass's order: the same each pass.
SAME_ORDER = {"shuffle-cache-repeat", "flat-map-shuffle", "interleave-shuffle-inside-repeat"}


def one_pass(data):
    """The elements of one pass over `data`, flattened into one vector."""
    seen = rt.zeros([0], F64)
    for x in data:
        ag.set_loop_options(shape_invariants=[(seen, [None])])
        seen = rt.concat([seen, rt.reshape(rt.cast(x, F64), [-1])], 0)
    return seen


def passes(fn, data, n=3):
    return [fn(data).numpy().tolist() for _ in range(n)]


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_each_call_is_a_new_pass_with_the_elements_eager_passes_give(name):
    make = PIPELINES[name]
    eager = passes(one_pass, make())
    graph = passes(ag.convert(one_pass), make())
    assert graph == eager
    if "shuffle" in name and name not in SAME_ORDER:
        assert len({tuple(p) for p in eager}) == 3          # a new order each pass


def test_the_loop_is_one_graph_loop_whatever_the_size_of_the_data():
    def count_ops(graph):
        return sum(1 + sum(count_ops(g) for g in op.subgraphs()) for op in graph.ops)

    def graph_of(n):
        data = Dataset.from_tensor_slices((np.arange(n * 4.0).reshape(n, 4), np.arange(n)))
        data = data.shuffle(n, seed=1).map(lambda x, y: (x * 2, y)).batch(8)
        return ag.convert(lambda: one_pass(data.map(lambda x, y: x))).get_concrete_function(
        ).graph

    small, large = graph_of(10), graph_of(1000)
    assert count_ops(small) == count_ops(large)

    def pipelines_of(n):      # the TensorFlow additions, pulled element by element
        rows = Dataset.from_tensor_slices(np.arange(n * 2.0).reshape(n, 2))
        cached = rows.map(lambda r: r * 2).cache().shuffle(n, seed=1).batch(8).prefetch(
            rt.data.AUTOTUNE)
        woven = Dataset.range(n).interleave(lambda k: Dataset.range(k % 3), cycle_length=3)
        padded = Dataset.range(n).map(lambda k: rt.fill([k % 4], k)).padded_batch(3)
        return [ag.convert(one_pass).get_concrete_function(data).graph for data in (
            cached, woven, padded, rows.concatenate(rows).shard(3, 1))]

    assert [count_ops(g) for g in pipelines_of(10)] == [count_ops(g) for g in pipelines_of(500)]
    plain = ag.convert(one_pass).get_concrete_function(
        Dataset.from_tensor_slices(np.arange(100.0)).shuffle(100, seed=1).batch(8)).graph
    assert [op.type for op in plain.ops].count("while") == 1 and count_ops(plain) < 60


def test_a_data_set_made_inside_the_function_starts_over_on_every_call():
    def two_passes(seed):
        data = Dataset.from_tensor_slices(X).shuffle(11, seed=seed)
        return rt.stack([one_pass(data), one_pass(data)])

    eager = [two_passes(4).numpy().tolist() for _ in range(2)]
    converted = ag.convert(two_passes)
    assert [converted(4).numpy().tolist() for _ in range(2)] == eager
    assert eager[0] == eager[1] and eager[0][0] != eager[0][1]


def test_epochs_in_a_tensor_loop_reshuffle_as_python_epochs_do():
    def epochs(data, n):
        total = rt.constant(0.0, F64)
        for epoch in rt.range(n):
            for batch in data:
                total = total * 0.5 + rt.reduce_sum(batch * rt.range(
                    1, rt.shape(batch)[0] + 1, dtype=F64)) * rt.cast(epoch + 1, F64)
        return total

    make = PIPELINES["shuffle-batch"]
    eager = [float(epochs(make_, rt.constant(3))) for make_ in [make()] for _ in range(2)]
    graph = [float(ag.convert(epochs)(data, rt.constant(3))) for data in [make()]
             for _ in range(2)]
    np.testing.assert_allclose(graph, eager, rtol=1e-12)
    assert eager[0] != eager[1]


# -- training -------------------------------------------------------------------------------

def training_data():
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(40, 3))
    ys = xs @ np.array([[0.5], [-1.0], [2.0]]) + 0.3
    return Dataset.from_tensor_slices((xs, ys)).shuffle(40, seed=11).batch(8)


def train(data, w, b, optimizer, epochs):
    losses = []
    for _ in range(epochs):
        for x, y in data:
            with rt.GradientTape() as tape:
                loss = rt.reduce_mean(rt.square(rt.matmul(x, w) + b - y))
            grads = tape.gradient(loss, [w, b])
            optimizer.apply_gradients(zip(grads, [w, b]))
            losses.append(loss)
    return rt.stack(losses)


@pytest.mark.parametrize("optimizer", [lambda: rt.optimizers.SGD(0.1, momentum=0.5),
                                       lambda: rt.optimizers.Adam(0.05)], ids=["sgd", "adam"])
def test_a_training_run_over_a_shuffled_set_inside_one_function_matches_the_eager_run(
        optimizer):
    def run(fn):
        w, b = rt.Variable(np.zeros([3, 1])), rt.Variable(np.zeros([1]))
        opt = optimizer()
        opt.build([w, b])
        data = training_data()
        losses = [fn(data, w, b, opt, 3).numpy() for _ in range(2)]   # two calls: 6 epochs
        return np.concatenate(losses), w.numpy(), b.numpy()

    want, got = run(train), run(ag.convert(train))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-10)
    assert want[0].shape == (30,) and want[0][-1] < 0.5 * want[0][0]


def test_gradients_flow_through_a_loop_over_a_data_set():
    def loss_and_gradients(data, w):
        with rt.GradientTape() as tape:
            total = rt.constant(0.0, F64)
            for x, y in data:
                total += rt.reduce_sum(rt.square(rt.matmul(x, w) - y))
        return total, tape.gradient(total, w)

    w = rt.Variable(np.full([3, 1], 0.25))
    want = [[t.numpy() for t in loss_and_gradients(training_data(), w)] for _ in range(1)]
    data = training_data()
    got = [[t.numpy() for t in ag.convert(loss_and_gradients)(data, w)] for _ in range(1)]
    for a, b in zip(got[0], want[0]):
        np.testing.assert_allclose(a, b, rtol=1e-10)


def test_the_canonical_cache_shuffle_batch_prefetch_pipeline_trains_as_eagerly():
    calls = []

    def normalized(x, y):
        calls.append(1)                       # Python runs while tracing only
        return (x - 1.0) / 2.0, y

    def pipeline():
        rng = np.random.default_rng(0)
        xs = rng.normal(size=(40, 3))
        ys = xs @ np.array([[0.5], [-1.0], [2.0]]) + 0.3
        return Dataset.from_tensor_slices((xs, ys)).map(normalized).cache().shuffle(
            40, seed=11).batch(8).prefetch(rt.data.AUTOTUNE)

    def run(fn):
        w, b = rt.Variable(np.zeros([3, 1])), rt.Variable(np.zeros([1]))
        opt = rt.optimizers.SGD(0.1)
        opt.build([w, b])
        data = pipeline()
        return np.concatenate([fn(data, w, b, opt, 2).numpy() for _ in range(3)]), w.numpy()

    want, got = run(train), run(ag.convert(train))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10)
    assert want[0].shape == (30,) and want[0][-1] < 0.5 * want[0][0]


def test_reduce_in_a_converted_function_is_one_loop_equal_to_the_eager_result():
    def loss(data, w):
        return data.reduce(rt.constant(0.0, F64), lambda total, xy: total + rt.reduce_sum(
            rt.square(rt.matmul(xy[0], w) - xy[1])))

    w = rt.Variable(np.full([3, 1], 0.25))
    data = training_data()
    eager = [float(loss(data, w)) for _ in range(2)]
    converted = ag.convert(loss)
    assert [float(converted(data, w)) for _ in range(2)] == pytest.approx(eager, rel=1e-12)
    graph = converted.get_concrete_function(data, w).graph
    assert [op.type for op in graph.ops].count("while") == 1


def test_a_cache_a_function_captures_is_filled_once_and_one_made_inside_on_every_call():
    pulled = []

    def gen():
        for v in range(4):
            pulled.append(v)
            yield float(v)

    captured = Dataset.from_generator(gen, output_signature=rt.TensorSpec([], F64)).cache()
    total = ag.convert(lambda: rt.reduce_sum(one_pass(captured)))
    assert [float(total()) for _ in range(3)] == [6.0] * 3 and pulled == [0, 1, 2, 3]

    def twice(scale):
        data = Dataset.from_generator(gen, output_signature=rt.TensorSpec([], F64)).map(
            lambda v: v * scale).cache()
        return rt.stack([one_pass(data), one_pass(data)])

    pulled.clear()
    converted = ag.convert(twice)
    assert converted(rt.constant(2.0, F64)).numpy().tolist() == [[0, 2, 4, 6]] * 2
    assert converted(rt.constant(3.0, F64)).numpy().tolist() == [[0, 3, 6, 9]] * 2
    assert pulled == [0, 1, 2, 3] * 2             # one fill per call


# -- Python semantics inside the loop -----------------------------------------------------------

def printed(fn, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = fn(*args)
    return out.getvalue(), result


def test_printed_text_in_the_loop_and_in_a_map_function_equals_the_eager_text():
    def noisy(v):
        print("map", v)
        return v * 2

    def show(data):
        for i, x in enumerate(data):
            print("element", i, x)
        return 0

    def make():
        return Dataset.from_tensor_slices(np.arange(4)).shuffle(4, seed=9).map(noisy)

    eager, _ = printed(show, make())
    data = make()
    graph = [printed(ag.convert(show), data)[0] for _ in range(2)]
    assert graph[0] == eager and graph[1] != eager
    assert eager.count("map") == 4 and "element 3" in eager


def test_break_and_return_stop_the_pass_without_pulling_more():
    pulled = []

    def gen():
        for i in range(10):
            pulled.append(i)
            yield i

    def first_over(data, limit):
        total = 0
        for x in data:
            total += x
            if total > limit:
                return x
        return -1

    data = Dataset.from_generator(gen, output_signature=rt.TensorSpec([], rt.int64))
    assert int(first_over(data, 5)) == 3 and pulled == [0, 1, 2, 3]
    pulled.clear()
    converted = ag.convert(first_over)
    assert int(converted(data, rt.constant(5, rt.int64))) == 3 and pulled == [0, 1, 2, 3]
    pulled.clear()
    assert int(converted(data, rt.constant(100, rt.int64))) == -1 and pulled == list(range(10))


def test_zip_enumerate_and_len_of_data_sets_in_converted_code():
    def weighted(a, b):
        total = rt.constant(0, rt.int64)
        for i, (x, y) in enumerate(zip(a, b)):
            total += (i + 1) * x * y
        return total + len(a)

    def make():
        return Dataset.range(5), Dataset.range(3, 9).shuffle(6, seed=2)

    eager = [int(weighted(*pair)) for pair in [make()] for _ in range(3)]
    pair = make()
    assert [int(ag.convert(weighted)(*pair)) for _ in range(3)] == eager


def test_a_map_function_with_tensor_control_flow_is_converted():
    def clipped(v):
        if v > 5:
            v = v * 0 + 5
        return v

    data = Dataset.from_tensor_slices(np.arange(9.0)).map(clipped)
    assert [float(v) for v in data] == [0, 1, 2, 3, 4, 5, 5, 5, 5]
    assert float(ag.convert(lambda: rt.reduce_sum(one_pass(data)))()) == 30.0


def test_python_iteration_of_a_data_set_of_unknown_length_while_tracing_is_a_clear_error():
    def listed(data):
        return rt.stack(list(data))

    with pytest.raises(TypeError, match="unknown number of elements cannot be iterated by "
                                        "Python while tracing"):
        ag.convert(listed)(Dataset.range(5).filter(lambda v: v > 1))
    assert ag.convert(listed)(Dataset.range(3)).numpy().tolist() == [0, 1, 2]   # length known


def test_a_loop_variable_changing_dtype_in_a_data_set_loop_is_a_staging_error():
    def changes(data):
        v = rt.constant(0, rt.int32)
        for _ in data:
            v = rt.constant(0.0)
        return v

    with pytest.raises(ag.StagingError, match="'v' has dtype int32 before the loop"):
        ag.convert(changes)(Dataset.range(3))


def test_concurrent_calls_each_fill_their_own_cache_of_a_data_set_made_inside():
    barrier = threading.Barrier(2, timeout=20)

    def meet():
        barrier.wait()           # both calls have begun their first pass
        return np.int32(0)

    def passes_of(x):
        data = Dataset.from_tensor_slices(x).map(lambda v: v * 10.0).cache()
        first = one_pass(data.map(lambda v: v + rt.cast(rt.py_function(meet, [], rt.int32),
                                                         F64)))
        return rt.stack([first, one_pass(data)])

    converted = ag.convert(passes_of, input_signature=[rt.TensorSpec([3], F64)])
    inputs = {0: np.arange(3.0), 1: np.arange(3.0) + 100}
    results = {}

    def call(k):
        results[k] = converted(rt.constant(inputs[k])).numpy().tolist()

    threads = [threading.Thread(target=call, args=(k,)) for k in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {k: [list(x * 10)] * 2 for k, x in inputs.items()}


def test_concurrent_calls_each_make_their_own_passes_over_a_data_set_made_inside():
    barrier = threading.Barrier(2, timeout=20)
    together = [False]

    def meet():
        if together[0]:
            barrier.wait()       # both calls have made their data set; neither has passed
        return np.int32(0)

    def two_passes():
        data = Dataset.from_tensor_slices(X).shuffle(11, seed=3).batch(4)
        rt.py_function(meet, [], rt.int32)
        return rt.stack([one_pass(data), one_pass(data)])

    want = two_passes().numpy().tolist()
    converted = ag.convert(two_passes)
    assert converted().numpy().tolist() == want
    together[0] = True
    results = []

    def call():
        for _ in range(3):
            results.append(converted().numpy().tolist())

    threads = [threading.Thread(target=call) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [want] * 6 and want[0] != want[1]
