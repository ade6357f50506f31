"""rt.cond and rt.while_loop: plain Python eagerly, operations owning sub-graphs when traced."""
import numpy as np
import pytest

import runtime as rt
from runtime.control_flow import cond_with_names, while_loop_with_names

SCALAR = rt.TensorSpec([], rt.float32)
INT = rt.TensorSpec([], rt.int32)


class Calls:
    """Wraps functions to count how often Python runs them."""

    def __init__(self):
        self.counts = {}

    def __call__(self, name, fn):
        def counted(*args):
            self.counts[name] = self.counts.get(name, 0) + 1
            return fn(*args)
        return counted


def trace(fn, *specs):
    """The graph of `fn` traced as an rt.function on `specs`."""
    return rt.function(fn).get_concrete_function(*specs).graph


# -- eager: plain Python -----------------------------------------------------------------------

def test_eager_cond_runs_only_the_taken_branch_and_returns_its_value_as_is():
    calls = Calls()
    result = rt.cond(rt.constant(2.0) > 1.0, calls("then", lambda: "yes"),
                     calls("else", lambda: "no"))
    assert result == "yes" and calls.counts == {"then": 1}
    assert rt.cond(False, lambda: 1, lambda: 2) == 2


def test_eager_while_loop_is_a_python_loop():
    assert rt.while_loop(lambda i: i < 3, lambda i: i + 1, 0) == 3
    assert rt.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + i), (0, 0)) == (4, 6)
    i, = rt.while_loop(lambda i: i < 10, lambda i: i + 1, [rt.constant(0)],
                       maximum_iterations=rt.constant(3))
    assert int(i) == 3


# -- graphs: cond -------------------------------------------------------------------------------

def test_traced_cond_is_one_op_owning_both_branches_traced_once():
    calls = Calls()

    @rt.function
    def f(x, y):
        return rt.cond(x > 0, calls("then", lambda: x + y), calls("else", lambda: x - y))

    assert float(f(rt.constant(1.0), rt.constant(2.0))) == 3.0
    assert float(f(rt.constant(-1.0), rt.constant(2.0))) == -3.0
    assert calls.counts == {"then": 1, "else": 1}
    graph = f.get_concrete_function(SCALAR, SCALAR).graph
    assert [op.type for op in graph.ops] == ["placeholder", "placeholder", "const", "greater",
                                             "cond"]
    cond_op = graph.ops[-1]
    assert [op.type for op in cond_op.attrs["then_graph"].ops] == ["capture", "capture", "add"]
    assert [op.type for op in cond_op.attrs["else_graph"].ops] == [
        "capture", "capture", "subtract"]
    assert [t.name for t in cond_op.inputs] == ["greater:0", "x:0", "y:0"]   # captures


def test_cond_branches_may_return_structures():
    @rt.function
    def f(x):
        return rt.cond(x > 0, lambda: {"v": x, "pair": (x * 2, "same")},
                       lambda: {"v": -x, "pair": (x * 3, "same")})

    result = f(rt.constant(2.0))
    assert float(result["v"]) == 2.0
    assert float(result["pair"][0]) == 4.0 and result["pair"][1] == "same"
    assert float(f(rt.constant(-2.0))["pair"][0]) == -6.0


def test_python_numbers_from_branches_become_tensors():
    pick = rt.function(lambda x: rt.cond(x > 0, lambda: 1, lambda: 2.5))
    assert float(pick(rt.constant(1.0))) == 1.0
    assert float(pick(rt.constant(-1.0))) == 2.5
    assert pick(rt.constant(1.0)).dtype == rt.float32
    mixed = rt.function(lambda x: rt.cond(x > 0, lambda: 1, lambda: x))
    assert float(mixed(rt.constant(5.0))) == 1.0 and mixed(rt.constant(5.0)).dtype == rt.float32
    assert float(mixed(rt.constant(-5.0))) == -5.0


def test_a_python_predicate_while_tracing_picks_a_branch_without_a_cond_op():
    calls = Calls()
    graph = trace(lambda x: rt.cond(True, calls("then", lambda: x), calls("else", lambda: -x)),
                  SCALAR)
    assert calls.counts == {"then": 1}
    assert "cond" not in [op.type for op in graph.ops]


def test_cond_branches_may_return_operations(capsys):
    @rt.function
    def report(x):
        return rt.cond(x > 0, lambda: rt.print("positive"), lambda: rt.print("not positive"))

    assert report(rt.constant(1)) is None
    report(rt.constant(-1))
    assert capsys.readouterr().out == "positive\nnot positive\n"


def test_cond_branch_errors_name_the_outputs():
    with pytest.raises(ValueError, match=r"same structure, got \(\*, \*\) and \*"):
        trace(lambda x: rt.cond(x > 0, lambda: (x, x), lambda: x), SCALAR)
    with pytest.raises(TypeError, match="output 0 has dtype float32 in the true branch but "
                                        "int32 in the false branch"):
        trace(lambda x: rt.cond(x > 0, lambda: x, lambda: rt.cast(x, rt.int32)), SCALAR)
    with pytest.raises(TypeError, match="'b' has dtype float32 in the true branch but int32"):
        trace(lambda x: cond_with_names(x > 0, lambda: (1, x), lambda: (2, rt.cast(x, rt.int32)),
                                        names=["a", "b"]), SCALAR)
    with pytest.raises(ValueError, match="is None in the true branch but a tensor"):
        trace(lambda x: rt.cond(x > 0, lambda: None, lambda: x), SCALAR)
    with pytest.raises(ValueError, match="<built-in function len> in the true branch and "
                                         "<built-in function abs> in the false branch"):
        trace(lambda x: rt.cond(x > 0, lambda: len, lambda: abs), SCALAR)


def test_a_cond_choosing_between_strings_gives_the_string_its_branch_took():
    f = rt.function(lambda x: rt.cond(x > 0, lambda: "pos", lambda: "neg"))
    assert (f(rt.constant(1.0)), f(rt.constant(-1.0))) == ("pos", "neg")


def test_a_tensor_leaked_out_of_a_branch_is_an_error_naming_where_it_was_made():
    leaked = []

    def then():
        leaked.append(rt.constant(1.0) + 1.0)
        return 1.0

    @rt.function
    def f(x):
        rt.cond(x > 0, then, lambda: 2.0)
        return leaked[0] * 2.0

    with pytest.raises(ValueError, match=r"Tensor add:0 \(created at test_control_flow.py:\d+\) "
                                         r"belongs to graph 'then' #\d+, which is neither"):
        f(rt.constant(1.0))


def test_cond_predicate_must_be_a_scalar_bool():
    with pytest.raises(TypeError, match="scalar bool tensor, got dtype float32"):
        trace(lambda x: rt.cond(x, lambda: x, lambda: x), SCALAR)


# -- graphs: while_loop --------------------------------------------------------------------------

def test_traced_while_loop_is_one_op_whose_cond_and_body_are_traced_once():
    calls = Calls()

    @rt.function
    def total(n):
        return rt.while_loop(calls("cond", lambda i, s: i < n),
                             calls("body", lambda i, s: (i + 1, s + i)), (0, 0))

    i, s = total(rt.constant(5))
    assert (int(i), int(s)) == (5, 10)
    assert [int(v) for v in total(rt.constant(10))] == [10, 45]
    assert calls.counts == {"cond": 1, "body": 1}
    graph = total.get_concrete_function(INT).graph
    loop = [op for op in graph.ops if op.type == "while"]
    assert len(loop) == 1
    (outer, inner), = loop[0].attrs["cond_graph"].captures
    assert outer.name == "n:0" and inner.op.type == "capture"
    assert [t.name for t in loop[0].inputs] == ["const:0", "const_1:0", "n:0"]


def test_a_loop_whose_state_is_a_variable_needs_no_loop_variables():
    v = rt.Variable(0)

    @rt.function
    def count_to_ten():
        def body():
            v.assign_add(1)
            return ()
        return rt.while_loop(lambda: v < 10, body, [])

    assert count_to_ten() == [] and v.numpy() == 10


def test_maximum_iterations_static_and_tensor():
    @rt.function
    def count(n, limit):
        return rt.while_loop(lambda i: i < n, lambda i: i + 1, [0], maximum_iterations=limit)

    assert int(count(rt.constant(10), 3)[0]) == 3
    assert int(count(rt.constant(10), rt.constant(4))[0]) == 4
    assert int(count(rt.constant(2), rt.constant(4))[0]) == 2
    static = count.get_concrete_function(INT, 3).graph
    assert [op for op in static.ops if op.type == "while"][0].attrs["maximum_iterations"] == 3


def test_cond_inside_while_loop():
    @rt.function
    def sum_even(n):
        def body(i, s):
            return i + 1, rt.cond(i % 2 == 0, lambda: s + i, lambda: s)
        return rt.while_loop(lambda i, s: i < n, body, (0, 0))[1]

    assert int(sum_even(rt.constant(10))) == 20


def test_while_loop_inside_cond_capturing_the_functions_input():
    @rt.function
    def f(x):
        return rt.cond(x > 0, lambda: rt.while_loop(lambda i: i < x, lambda i: i * 2, 1),
                       lambda: 0)

    assert int(f(rt.constant(5))) == 8
    assert int(f(rt.constant(-5))) == 0


def test_loop_variable_changing_dtype_is_an_error_naming_it():
    start = rt.constant(0)
    with pytest.raises(TypeError, match="loop variable 0 has dtype int32 before the loop but "
                                        "float32 after an iteration"):
        trace(lambda x: rt.while_loop(lambda i: i < 3, lambda i: rt.cast(i, rt.float32),
                                      [start]), SCALAR)
    with pytest.raises(TypeError, match="'j' has dtype int32 before the loop"):
        trace(lambda x: while_loop_with_names(lambda i, j: i < x,
                                              lambda i, j: (i, rt.cast(j, rt.float32)),
                                              [x, start], names=["i", "j"]), SCALAR)


def _doubling_loop(x, **kwargs):
    return rt.while_loop(lambda v: rt.reduce_sum(v) < x, lambda v: rt.concat([v, v], 0),
                         [rt.constant([1.0])], **kwargs)


def test_loop_variable_changing_shape_needs_a_shape_invariant():
    with pytest.raises(ValueError, match=r"loop variable 0 has shape \(1,\) before the loop but "
                                         r"\(2,\) after an iteration.*shape_invariants"):
        trace(_doubling_loop, SCALAR)


@pytest.mark.parametrize("invariant", [[None], rt.TensorShape([None])], ids=["list", "shape"])
def test_shape_invariants_with_unknown_dims_let_the_shape_change(invariant):
    grow = rt.function(lambda x: _doubling_loop(x, shape_invariants=[invariant]))
    v, = grow(rt.constant(5.0))
    np.testing.assert_array_equal(v.numpy(), np.ones(8, np.float32))


def test_shape_invariant_must_hold_for_the_initial_value():
    with pytest.raises(ValueError, match="does not hold for its initial shape"):
        trace(lambda x: _doubling_loop(x, shape_invariants=[[2]]), SCALAR)


def test_body_returning_another_structure_is_an_error():
    with pytest.raises(ValueError, match="structure of the loop variables"):
        trace(lambda x: rt.while_loop(lambda i, j: i < x, lambda i, j: i, [x, x]), SCALAR)


def test_loop_cond_must_return_a_scalar_bool():
    with pytest.raises(TypeError, match="cond must return a scalar bool"):
        trace(lambda x: rt.while_loop(lambda i: i, lambda i: i + 1, [x]), SCALAR)
