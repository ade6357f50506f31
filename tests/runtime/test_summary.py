"""rt.summary: scalars, histograms and graphs in event files that TensorBoard's reader reads."""
import os
import struct

import numpy as np
import pytest

import runtime as rt
from runtime.summary import crc32c


def read_records(path):
    """The records of a TFRecord file, checking its framing (lengths, masked CRCs)."""
    data, records = open(path, "rb").read(), []
    while data:
        (length,) = struct.unpack("<Q", data[:8])
        records.append(data[12:12 + length])
        data = data[16 + length:]
    return records


def test_crc32c_of_the_standard_check_string():
    assert crc32c(b"123456789") == 0xE3069283


def test_writing_needs_no_extra_package(tmp_path):
    with rt.summary.create_file_writer(str(tmp_path)) as writer:
        with writer.as_default():
            rt.summary.scalar("loss", 0.5, step=1)
    (name,) = os.listdir(tmp_path)
    assert name.startswith("events.out.tfevents.")
    records = read_records(str(tmp_path / name))
    assert len(records) == 2 and b"brain.Event:2" in records[0] and b"loss" in records[1]


def test_summaries_need_a_default_writer_and_a_step(tmp_path):
    with pytest.raises(ValueError, match="needs a default writer"):
        rt.summary.scalar("loss", 1.0, step=0)
    with rt.summary.create_file_writer(str(tmp_path)).as_default():
        with pytest.raises(ValueError, match=r"scalar\('loss', ...\) needs step="):
            rt.summary.scalar("loss", 1.0)
        with pytest.raises(ValueError, match="must be a scalar"):
            rt.summary.scalar("loss", [1.0, 2.0], step=0)


@pytest.fixture
def accumulator():
    module = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")

    def read(logdir):
        acc = module.EventAccumulator(logdir, size_guidance={"scalars": 0, "histograms": 0})
        acc.Reload()
        return acc
    return read


def test_scalars_and_histograms_read_back_with_tensorboard(tmp_path, accumulator):
    values = np.random.default_rng(0).normal(size=1000)
    with rt.summary.create_file_writer(str(tmp_path)) as writer, writer.as_default():
        for step in range(3):
            rt.summary.scalar("loss", rt.constant(1.0 / (step + 1)), step=step)
        rt.summary.histogram("weights", values, step=5, buckets=20)
    acc = accumulator(str(tmp_path))
    assert [(e.step, round(e.value, 4)) for e in acc.Scalars("loss")] == [
        (0, 1.0), (1, 0.5), (2, 0.3333)]
    (event,) = acc.Histograms("weights")
    histo = event.histogram_value
    assert event.step == 5 and histo.num == 1000 and len(histo.bucket) == 20
    assert sum(histo.bucket) == 1000 and histo.min == values.min() and histo.max == values.max()
    assert histo.sum == pytest.approx(values.sum())


def test_summaries_inside_a_graph_write_each_time_it_runs(tmp_path, accumulator):
    writer = rt.summary.create_file_writer(str(tmp_path))

    @rt.function
    def train_step(x, step):
        rt.summary.scalar("double", x * 2.0, step=step)
        rt.summary.histogram("x", rt.stack([x, x + 1.0]), step=step)
        return x + 1.0

    with writer.as_default():
        x = rt.constant(1.0)
        for step in range(3):
            x = train_step(x, rt.constant(step))
    writer.close()
    assert train_step.experimental_get_tracing_count() == 1
    acc = accumulator(str(tmp_path))
    assert [(e.step, e.value) for e in acc.Scalars("double")] == [(0, 2.0), (1, 4.0), (2, 6.0)]
    assert [e.histogram_value.num for e in acc.Histograms("x")] == [2, 2, 2]


def test_the_graph_of_a_concrete_function_for_the_graph_tab(tmp_path, accumulator):
    def f(x, n):
        _, y = rt.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * x), [0, x])
        return y

    concrete = rt.function(f).get_concrete_function(rt.constant([1.0, 2.0]), rt.constant(3))
    with rt.summary.create_file_writer(str(tmp_path)) as writer, writer.as_default():
        rt.summary.graph(concrete)
    graph = accumulator(str(tmp_path)).Graph()
    nodes = {n.name: n for n in graph.node}
    assert nodes["while"].op == "while" and list(nodes["while"].input) == ["const", "x", "n", "x"]
    body_mul = nodes["while/body_graph/multiply"]
    assert list(body_mul.input) == ["while/body_graph/arg1", "while/body_graph/x"]
    assert list(nodes["while/body_graph/x"].input) == ["x"]          # a captured tensor
    assert list(nodes["while/body_graph/arg1"].input) == ["x"]          # a loop variable's feed
    assert body_mul.attr["_output_shapes"].list.shape[0].dim[0].size == 2
    assert body_mul.attr["T"].type == 1                                # DT_FLOAT
    assert body_mul.attr["_source"].s.decode().endswith(
        f"test_summary.py:{f.__code__.co_firstlineno + 1}")
