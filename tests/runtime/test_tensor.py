"""Tensors: eager ones behave like numpy values, symbolic ones refuse to be Python values."""
import numpy as np
import pytest

import runtime as rt


# -- eager tensors: the Python and numpy protocols ------------------------------------------

def test_numpy_gives_an_ndarray_for_arrays_and_a_numpy_scalar_for_scalars():
    assert type(rt.constant([1.0, 2.0]).numpy()) is np.ndarray
    assert type(rt.constant([[1]]).numpy()) is np.ndarray
    scalar = rt.constant(2.5).numpy()
    assert isinstance(scalar, np.floating) and scalar == 2.5


def test_numpy_is_a_copy_writing_into_it_changes_neither_tensor_nor_variable():
    t = rt.constant([1.0, 2.0])
    t.numpy()[0] = 9.0
    assert t.numpy().tolist() == [1.0, 2.0]
    v = rt.Variable([1.0, 2.0])
    read = v.read_value()
    read.numpy()[0] = 9.0
    assert v.numpy().tolist() == [1.0, 2.0]


def test_numpy_sees_the_value_read_only():
    t = rt.constant([1.0, 2.0])
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(t)[0] = 9.0
    np.array(t)[0] = 9.0                       # np.array copies: writable
    assert t.numpy().tolist() == [1.0, 2.0]


def test_python_number_protocols():
    assert bool(rt.constant(True)) is True
    assert bool(rt.constant(0.0)) is False
    assert int(rt.constant(7)) == 7
    assert float(rt.constant(2.5)) == 2.5
    assert [10, 20, 30][rt.constant(1)] == 20          # __index__
    assert range(10)[rt.constant(2):rt.constant(4)] == range(2, 4)


def test_index_rejects_float_and_non_scalar_tensors():
    with pytest.raises(TypeError, match="scalar integer"):
        [1, 2][rt.constant(1.0)]
    with pytest.raises(TypeError, match="scalar integer"):
        [1, 2][rt.constant([1])]


def test_numpy_functions_take_tensors_and_return_ndarrays():
    x = rt.constant([1.0, 2.0, 3.0])
    squared = np.square(x)
    assert type(squared) is np.ndarray
    np.testing.assert_array_equal(squared, [1.0, 4.0, 9.0])
    assert np.asarray(x).dtype == np.float32
    assert np.asarray(x, dtype=np.float64).dtype == np.float64


def test_str_is_the_str_of_the_numpy_value():
    for value in (2.0, [1, 2, 3], [[1.5, 2.0], [3.0, 4.0]], True):
        t = rt.constant(value)
        assert str(t) == str(t.numpy())
    assert f"{rt.constant(2.5):.2f}" == "2.50"


def test_repr_shows_shape_dtype_and_value():
    assert repr(rt.constant([1, 2])) == (
        "<rt.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>")
    assert repr(rt.constant(2.0)) == "<rt.Tensor: shape=(), dtype=float32, numpy=2.0>"


def test_len_and_iteration_over_the_first_dimension(capsys):
    x = rt.constant([1.0, 2.0, 3.0])
    assert len(x) == 3
    for i in x:
        print(i)
    assert capsys.readouterr().out == "1.0\n2.0\n3.0\n"
    rows = list(rt.constant([[1, 2], [3, 4]]))
    assert [r.dtype for r in rows] == [rt.int32, rt.int32]
    np.testing.assert_array_equal(rows[1].numpy(), [3, 4])


def test_scalars_have_no_length_and_cannot_be_iterated():
    with pytest.raises(TypeError, match="len"):
        len(rt.constant(1.0))
    with pytest.raises(TypeError, match="iterate"):
        iter(rt.constant(1.0))


def test_eager_tensors_are_immutable_and_have_no_graph_name():
    x = rt.constant([1, 2])
    with pytest.raises(TypeError, match="immutable"):
        x[0] = 5
    with pytest.raises(AttributeError, match="eagerly"):
        x.name


def test_shape_dtype_and_ndim():
    x = rt.constant([[1, 2, 3]])
    assert x.shape == rt.TensorShape([1, 3]) and x.shape == (1, 3)
    assert x.dtype == rt.int32 and x.ndim == 2


# -- symbolic tensors -----------------------------------------------------------------------

def _symbolic(shape=(1, 1), graph=None):
    with (graph or rt.Graph()).as_default():
        x = rt.placeholder(rt.float32, shape=list(shape), name="x")
        return rt.matmul(x, x)


def test_symbolic_tensor_name_and_str():
    m = _symbolic()
    assert m.name == "matmul:0"
    assert str(m) == 'Tensor("matmul:0", shape=(1, 1), dtype=float32)'
    assert m.op.type == "matmul" and m.shape == (1, 1) and m.dtype == rt.float32


def test_symbolic_tensor_bool_points_to_autograph_and_cond():
    m = _symbolic()
    with pytest.raises(TypeError) as info:
        bool(m)
    message = str(info.value)
    assert "autograph.convert" in message and "rt.cond" in message
    assert "matmul:0" in message and "test_tensor.py" in message


@pytest.mark.parametrize("use", [int, float, np.asarray, lambda t: [1, 2][t]],
                         ids=["int", "float", "array", "index"])
def test_symbolic_tensor_has_no_python_value(use):
    with pytest.raises(TypeError, match="symbolic tensor"):
        use(_symbolic())


def test_symbolic_tensor_numpy_explains_that_values_exist_only_at_run_time():
    with pytest.raises(ValueError, match="only when the graph runs"):
        _symbolic().numpy()


def test_symbolic_len_and_iteration_need_a_static_first_dimension():
    g = rt.Graph()
    known, unknown = _symbolic((2, 2), g), _symbolic((None, 2), g)
    with g.as_default():
        assert len(known) == 2
        assert [t.shape for t in known] == [(2,), (2,)]
        with pytest.raises(TypeError, match="not known while tracing"):
            len(unknown)
        with pytest.raises(TypeError, match="autograph.convert"):
            iter(unknown)


def test_a_symbolic_tensor_cannot_be_used_outside_its_graph():
    leaked = []

    @rt.function
    def f(x):
        leaked.append(x * 2)
        return x

    f(rt.constant(1.0))
    with pytest.raises(TypeError, match="leaked"):
        leaked[0] + 1
