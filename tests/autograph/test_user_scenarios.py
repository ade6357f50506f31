"""Programs written the way users write them (in the spirit of TensorFlow AutoGraph's own
integration tests): basic if/while/for, loop control flow, early returns, composite names,
calls, lists, datasets, print/assert, builtins, variables, loop options and small ML
programs. Each runs eagerly, converted-and-traced and converted-eagerly (`assert_equivalent`)
with Python and with tensor arguments; misuse that TensorFlow's AutoGraph rejects too must
raise the documented error naming the variable and the user's file:line.

Data is int32 / float32 (TensorFlow's defaults) unless a test is about other dtypes.
A failure found is a strict xfail (`known_bug`) with a one-line diagnosis."""
import collections
import functools
import inspect
import os

import numpy as np
import pytest
from equivalence import assert_equivalent, cases, differences, static

import autograph as ag
import runtime as rt

HERE = os.path.basename(__file__)


def i32(*values):
    return np.array(values, np.int32)


def f32(*values):
    return np.array(values, np.float32)


# -- basic if ----------------------------------------------------------------------------

def leaky_relu(x, alpha):
    if x > 0:
        y = x
    elif x > -1:
        y = x * alpha
    else:
        y = -alpha
    return y


def grade(score):
    if score >= 90:
        letter = 4
    elif score >= 80:
        letter = 3
    elif score >= 70:
        letter = 2
    else:
        letter = 0
    bonus = 1 if score % 10 >= 7 else 0
    return letter, bonus


def swap_if_greater(a, b):
    if a > b:
        a, b = b, a
    return a, b


def compound_conditions(x, y):
    if (x > 0 and y > 0) or not (x > -5):
        r = 1
    elif (x > 0) | (y > 0):
        r = 2
    else:
        r = 3
    return r, x if x > y else y


def condition_on_reduction(v):
    if rt.reduce_any(v > 3):
        v = v - 3
    if rt.equal(rt.reduce_sum(v), 3):
        v = v * 10
    return v


def optional_argument(x, y=None):
    if y is not None and y > 0:
        x = x + y
    return x if y is None else x * 2


@pytest.mark.parametrize("f, tensors", cases(leaky_relu))
@pytest.mark.parametrize("x", [2.0, -0.5, -3.0])
def test_leaky_relu(f, x, tensors):
    assert_equivalent(f, x, 0.1, tensors=tensors)


@pytest.mark.parametrize("score", [95, 87, 72, 40])
def test_grade(score, tensors):
    assert_equivalent(grade, score, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(swap_if_greater, compound_conditions))
@pytest.mark.parametrize("x, y", [(3, 2), (1, -1), (-7, 2), (-2, -3)])
def test_two_argument_conditions(f, x, y, tensors):
    assert_equivalent(f, x, y, tensors=tensors)


@pytest.mark.parametrize("v", [i32(1, 2, 6), i32(1, 2, 0)])
def test_condition_on_reduction(v, tensors):
    assert_equivalent(condition_on_reduction, v, tensors=tensors)


def test_optional_argument(tensors):
    assert_equivalent(optional_argument, 2, tensors=tensors)
    assert_equivalent(optional_argument, 2, 3, tensors=tensors)
    assert_equivalent(optional_argument, 2, -3, tensors=tensors)


# -- basic while -------------------------------------------------------------------------

def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-4:
        x = (x + a / x) / 2.0
    return x


def cube_root_bisection(target, lo, hi):
    while hi - lo > 1e-5:
        mid = (lo + hi) / 2.0
        if mid * mid * mid > target:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2.0


def collatz_peak(n):
    peak = n
    steps = 0
    while n > 1:
        if n % 2 == 0:
            n //= 2
        else:
            n = 3 * n + 1
        peak = rt.maximum(peak, n)
        steps += 1
    return steps, peak


def digit_sum(n):
    s = 0
    while n > 0:
        s += n % 10
        n //= 10
    return s


def count_primes_below(n):
    count = 0
    k = 2
    while k < n:
        d = 2
        prime = True
        while d * d <= k:
            if k % d == 0:
                prime = False
                break
            d += 1
        if prime:
            count += 1
        k += 1
    return count


def loop_until_flag(x):
    done = False
    steps = 0
    while not done:
        x = x * 2
        steps += 1
        done = x > 50
    return x, steps


def compound_while_condition(n, limit):
    i = 0
    s = 0
    while i < n and s < limit:
        s += i
        i += 1
    return i, s


def chained_while_condition(x):
    steps = 0
    while 0 < x < 100:
        x = x * 3
        steps += 1
    return x, steps


@pytest.mark.parametrize("f, args", [
    (newton_sqrt, (2.0,)), (newton_sqrt, (9.0,)),
    (cube_root_bisection, (2.0, 0.0, 2.0)),
    (collatz_peak, (27,)), (collatz_peak, (1,)),
    (digit_sum, (98765,)), (digit_sum, (0,)),
    (count_primes_below, (30,)),
    (loop_until_flag, (3,)), (loop_until_flag, (60,)),
    (compound_while_condition, (10, 7)), (compound_while_condition, (3, 100)),
    (chained_while_condition, (2,)), (chained_while_condition, (-2,)),
], ids=lambda v: getattr(v, "__name__", None))
def test_while_programs(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


# -- basic for: range, tensors, Python lists ---------------------------------------------

def range_with_step(a, b):
    s = 0
    for i in range(a, b, 2):
        s += i
    return s


def countdown(n):
    out = []
    for i in range(n, 0, -1):
        out.append(i)
    return rt.stack(out)


def range_evaluated_once(n):
    count = 0
    for _ in range(n):
        n = n - 1
        count += 1
    return count, n


def loop_variable_after_loop(n):
    i = -1
    for i in range(n):
        pass
    return i


def sign_counts(v):
    pos = 0
    neg = 0
    for x in v:
        if x > 0:
            pos += 1
        elif x < 0:
            neg += 1
    return pos, neg


def row_sums(m):
    out = []
    for row in m:
        acc = 0
        for x in row:
            acc += x
        out.append(acc)
    return rt.stack(out)


def weighted_by_position(v):
    s = 0
    for i in range(len(v)):
        s += v[i] * (i + 1)
    return s


def even_position_dot(u, v):
    dot = 0
    for i, (a, b) in enumerate(zip(u, v)):
        if i % 2 == 0:
            dot += a * b
    return dot


def reversed_copy(v):
    out = []
    for i in range(len(v) - 1, -1, -1):
        out.append(v[i])
    return rt.stack(out)


def zip_with_python_weights(v):
    weights = [1, 10, 100]
    s = 0
    for x, w in zip(v, weights):
        s += x * w
    return s


def lower_triangle_sum(m):
    total = 0
    for i in range(len(m)):
        for j in range(i + 1):
            total += m[i, j]
    return total


def iterated_tensor_rebound(v):
    s = 0
    for x in v:
        v = v * 2
        s += x
    return s, v


@pytest.mark.parametrize("f, args", [
    (range_with_step, (1, 9)), (range_with_step, (5, 2)),
    (countdown, (4,)),
    (range_evaluated_once, (4,)),
    (loop_variable_after_loop, (4,)),
    (sign_counts, (i32(1, -2, 0, 3, -4),)),
    (row_sums, (i32(1, 2, 3, 4, 5, 6).reshape(3, 2),)),
    (weighted_by_position, (i32(1, 2, 3),)),
    (even_position_dot, (i32(1, 2, 3), i32(4, 5, 6))),
    (reversed_copy, (i32(1, 2, 3),)),
    (zip_with_python_weights, (i32(1, 2, 3),)),
    (lower_triangle_sum, (np.arange(9, dtype=np.int32).reshape(3, 3),)),
    (iterated_tensor_rebound, (i32(1, 2, 3),)),
], ids=lambda v: getattr(v, "__name__", None))
def test_for_programs(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


def test_for_over_tensor_with_unknown_length():
    f = ag.convert(weighted_by_position, input_signature=[rt.TensorSpec([None], rt.int32)])
    assert f(rt.constant(i32(1, 2, 3))).numpy() == 14
    assert f(rt.constant(i32(5))).numpy() == 5
    g = ag.convert(sign_counts, input_signature=[rt.TensorSpec([None], rt.int32)])
    assert [t.numpy() for t in g(rt.constant(i32(1, -1, 2)))] == [2, 1]


# -- loop control flow: break, continue, return, else ------------------------------------

def while_true_break(n):
    i = 0
    while True:
        i += 1
        if i * i > n:
            break
    return i


def early_stopping(losses):
    best = losses[0]
    patience = 0
    epoch = 0
    for loss in losses:
        epoch += 1
        if loss < best:
            best = loss
            patience = 0
        else:
            patience += 1
        if patience >= 2:
            break
    return epoch, best


def skip_negatives_mean(v, threshold):
    total = 0.0
    count = 0
    for x in v:
        if x < threshold:
            continue
        total += x
        count += 1
    if count > 0:
        return total / rt.cast(count, rt.float32)
    return rt.constant(0.0)


def find_index(v, target):
    for i, x in enumerate(v):
        if x == target:
            return i
    return -1


def first_negative_cell(m):
    for i in range(len(m)):
        for j in range(len(m[i])):
            if m[i][j] < 0:
                return i, j
    return -1, -1


def search_with_diagonal_flag(m, target):
    i = 0
    while i < len(m):
        for j in range(len(m[0])):
            if m[i, j] == target:
                if i == j:
                    return i, j, True
                return i, j, False
        i += 1
    return -1, -1, False


def for_else_search(v, target):
    found = 0
    for x in v:
        if x == target:
            found = 1
            break
    else:
        found = -1
    return found


def while_else_counter(n):
    i = 0
    s = 0
    while i < n:
        i += 1
        if i % 2:
            continue
        s += i
    else:
        s += 100
    return s


def inner_break_outer_else(n):
    out = 0
    for i in range(n):
        for j in range(i):
            if j > 3:
                break
        else:
            out += i
    return out


def return_from_python_loop_in_tensor_loop(n):
    i = 0
    while i < n:
        for k in range(3):
            if i * k > 5:
                return i, k
        i += 1
    return -1, -1


def nested_break_and_continue(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        j = 0
        while True:
            j += 1
            if j > i:
                break
            if j % 2 == 0:
                continue
            total += j
    return total


@pytest.mark.parametrize("f, args", [
    (while_true_break, (10,)), (while_true_break, (0,)),
    (early_stopping, (f32(5.0, 4.0, 4.5, 3.0, 3.5, 3.6, 1.0),)),
    (early_stopping, (f32(5.0, 4.0, 3.0),)),
    (skip_negatives_mean, (f32(1.0, 5.0, 7.0), 4.0)),
    (skip_negatives_mean, (f32(1.0, 2.0), 4.0)),
    (find_index, (i32(4, 5, 6), 5)), (find_index, (i32(4, 5, 6), 9)),
    (first_negative_cell, (i32(1, 2, 3, -4).reshape(2, 2),)),
    (first_negative_cell, (i32(1, 2, 3, 4).reshape(2, 2),)),
    (search_with_diagonal_flag, (i32(1, 2, 3, 4).reshape(2, 2), 4)),
    (search_with_diagonal_flag, (i32(1, 2, 3, 4).reshape(2, 2), 3)),
    (search_with_diagonal_flag, (i32(1, 2, 3, 4).reshape(2, 2), 9)),
    (for_else_search, (i32(1, 2, 3), 2)), (for_else_search, (i32(1, 2, 3), 7)),
    (while_else_counter, (6,)),
    (inner_break_outer_else, (7,)),
    (return_from_python_loop_in_tensor_loop, (5,)),
    (return_from_python_loop_in_tensor_loop, (2,)),
    (nested_break_and_continue, (7,)),
], ids=lambda v: getattr(v, "__name__", None))
def test_loop_control_flow(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


# -- early return ------------------------------------------------------------------------

def guard_clauses(x, y):
    if x < 0:
        return 0
    if y < 0:
        return 1
    if x > y:
        return 2
    return 3


def classify(x):
    if x < 0:
        return {"label": -1, "score": -x}
    elif x == 0:
        return {"label": 0, "score": x}
    return {"label": 1, "score": x * 2}


def report_and_return(n):
    for i in range(n):
        print("i", i)
        if i == 2:
            print("found")
            return i
    print("not found")
    return -1


def activation_with_else(x, kind):
    if kind == "relu":
        if x > 0:
            return x
        else:
            return 0.0
    elif kind == "abs":
        return abs(x)
    raise ValueError("unknown activation " + kind)


@pytest.mark.parametrize("x, y", [(-1, 2), (1, -2), (3, 2), (2, 3)])
def test_guard_clauses(x, y, tensors):
    assert_equivalent(guard_clauses, x, y, tensors=tensors)


@pytest.mark.parametrize("x", [-2, 0, 3])
def test_classify_returns_dicts(x, tensors):
    assert_equivalent(classify, x, tensors=tensors)


@pytest.mark.parametrize("n", [2, 5])
def test_print_then_return_from_loop(n, tensors):
    assert_equivalent(report_and_return, n, tensors=tensors)


@pytest.mark.parametrize("kind", ["relu", "abs"])
@pytest.mark.parametrize("x", [2.0, -2.0])
def test_activation_by_python_string(x, kind, tensors):
    assert_equivalent(activation_with_else, x, static(kind), tensors=tensors)


# -- composite names: attributes, dict items, list items ---------------------------------

class RunningStats:
    def __init__(self):
        self.n = 0
        self.mean = 0.0
        self.m2 = 0.0

    def consume(self, v):
        for x in v:
            self.n += 1
            delta = x - self.mean
            self.mean += delta / rt.cast(self.n, rt.float32)
            self.m2 += delta * (x - self.mean)
        return self.variance()

    def variance(self):
        if self.n < 2:
            return rt.constant(0.0)
        return self.m2 / rt.cast(self.n - 1, rt.float32)


def welford(v):
    stats = RunningStats()
    var = stats.consume(v)
    return stats.mean, var, stats.n


class Cell:
    def __init__(self):
        self.h = 0.0


class Net:
    def __init__(self):
        self.cell = Cell()
        self.steps = 0


def nested_attribute_state(xs):
    net = Net()
    for x in xs:
        net.cell.h = net.cell.h * 0.5 + x
        net.steps += 1
    return net.cell.h, net.steps


def dict_counters(v):
    d = {"pos": 0, "neg": 0, "sum": 0.0}
    for x in v:
        if x > 0:
            d["pos"] += 1
        else:
            d["neg"] += 1
        d["sum"] = d["sum"] + x
    return d


def nested_dict_state(n):
    state = {"inner": {"count": 0}, "total": 0}
    i = 0
    while i < n:
        state["inner"]["count"] += 1
        state["total"] += i
        i += 1
    return state


def list_item_accumulators(v):
    acc = [0, 0]
    for x in v:
        acc[0] += x
        acc[-1] += 1
    return acc


def list_item_in_branch(x):
    pair = [x, x]
    if x > 0:
        pair[0] = x * 10
    else:
        pair[1] = x * 10
    return pair


class Agent:
    def __init__(self):
        self.position = 0
        self.reward = 0.0


def agent_episode(actions):
    agent = Agent()
    for a in actions:
        if a > 0:
            agent.position = agent.position + a
        else:
            agent.reward = agent.reward - 0.5
    return agent.position, agent.reward


def objects_in_list_and_dict(n):
    cells = [Cell(), Cell()]
    registry = {"main": Cell()}
    for i in range(n):
        cells[0].h = cells[0].h + 1.0
        cells[1].h = cells[1].h * 2.0 + 1.0
        registry["main"].h = registry["main"].h - 1.0
    return cells[0].h, cells[1].h, registry["main"].h


@pytest.mark.parametrize("f, args", [
    (welford, (f32(1.0, 2.0, 4.0, 8.0),)), (welford, (f32(3.0),)),
    (nested_attribute_state, (f32(1.0, 2.0, 3.0),)),
    (dict_counters, (f32(1.0, -2.0, 3.0),)),
    (nested_dict_state, (3,)),
    (list_item_accumulators, (i32(1, 2, 3),)),
    (list_item_in_branch, (2,)), (list_item_in_branch, (-2,)),
    (agent_episode, (i32(1, -1, 2, 3),)),
    (objects_in_list_and_dict, (3,)),
], ids=lambda v: getattr(v, "__name__", None))
def test_composite_names(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


# -- calls: user functions, lambdas, namedtuples, methods, nested and recursive ---------

Step = collections.namedtuple("Step", ["index", "value"])
Pair = collections.namedtuple("Pair", ["lo", "hi"])


def square(x):
    return x * x


def sum_of_squares(n):
    s = 0
    i = 0
    while i < n:
        s += square(i)
        i += 1
    return s


def lambda_in_branches(x):
    f = lambda y: y * 2 + 1     # noqa: E731
    if x > 0:
        x = f(x)
    else:
        x = f(-x)
    return x


def nested_step_function(x, n):
    def step(a):
        if a % 2 == 0:
            return a // 2
        return a * 3 + 1
    for _ in range(n):
        x = step(x)
    return x


def best_step(v):
    steps = []
    for i in range(3):
        steps.append(Step(i, v[i] * 2))
    best = steps[0]
    for s in steps:
        if s.value > best.value:
            best = s
    return best


def min_max_pair(v):
    p = Pair(v[0], v[0])
    for x in v:
        p = Pair(rt.minimum(p.lo, x), rt.maximum(p.hi, x))
    return p


def fast_power(x, n):
    if n == 0:
        return rt.ones_like(x)
    half = fast_power(x, n // 2)
    if n % 2 == 0:
        return half * half
    return half * half * x


def recursion_with_python_depth(x):
    return fast_power(x, 5), fast_power(x, 4)


def halve_until(x, depth):
    if depth == 0:
        return x
    if x > 10.0:
        x = x / 2.0
    return halve_until(x, depth - 1)


class Square:
    def area(self, x):
        return x * x


class Circle:
    def area(self, x):
        return 3.0 * x * x


def polymorphic_calls(x):
    total = 0.0
    for shape in [Square(), Circle()]:
        a = shape.area(x)
        if a > 10.0:
            total += a
    return total


class Tools:
    @staticmethod
    def clip(x):
        if x > 5:
            return 5
        return x

    @classmethod
    def double_clip(cls, x):
        return cls.clip(x) * 2


def static_and_class_methods(n):
    s = 0
    for i in range(n):
        s += Tools.double_clip(i)
    return s


def keyword_and_default_arguments(x, scale=2, shift=0):
    def affine(v, w=scale, b=shift):
        return v * w + b
    total = 0
    for i in range(3):
        total += affine(x, b=i)
    return total


def functools_reduce(v):
    return functools.reduce(lambda a, b: a + b * 2, [v[0], v[1], v[2]])


def closures_made_in_loop(n):
    fs = []
    for i in range(3):
        fs.append(lambda k=i: k * n)
    return fs[0]() + fs[1]() + fs[2]()


def nonlocal_accumulator(v):
    total = 0

    def add(x):
        nonlocal total
        total += x
    for x in v:
        add(x)
    return total


def typed_signature(x: rt.Tensor, n: int = 3, *, scale: float = 2.0) -> rt.Tensor:
    """Annotations on the signature do not get in the way."""
    total = x
    for _ in range(n):
        total = total * scale
    return total


@pytest.mark.parametrize("f, args", [
    (sum_of_squares, (5,)),
    (lambda_in_branches, (3,)), (lambda_in_branches, (-3,)),
    (nested_step_function, (7, 5)),
    (best_step, (i32(1, 5, 2),)),
    (min_max_pair, (f32(1.0, -2.0, 3.0),)),
    (recursion_with_python_depth, (2.0,)),
    (halve_until, (100.0, static(3))), (halve_until, (5.0, static(3))),
    (polymorphic_calls, (2.0,)),
    (static_and_class_methods, (8,)),
    (keyword_and_default_arguments, (2,)),
    (functools_reduce, (i32(1, 5, 2),)),
    (closures_made_in_loop, (2,)),
    (nonlocal_accumulator, (i32(1, 2, 3),)),
    (typed_signature, (1.5,)),
], ids=lambda v: getattr(v, "__name__", None))
def test_calls(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


class Trainer:
    def __init__(self):
        self.w = rt.Variable(1.0)

    @ag.convert
    def fit(self, xs, lr):
        for x in xs:
            with rt.GradientTape() as tape:
                loss = (self.w * x - 2.0 * x) ** 2
            self.w.assign_sub(lr * tape.gradient(loss, self.w))
        return self.w.read_value()


def test_converted_method_keeps_variable_state_across_calls():
    xs = rt.constant(f32(1.0, 2.0, 0.5))
    converted, plain = Trainer(), Trainer()
    for _ in range(2):
        got = converted.fit(xs, 0.1)
        want = Trainer.fit.python_function(plain, xs, 0.1)
        assert not differences(want, got), differences(want, got)


# -- lists grown in loops ----------------------------------------------------------------

def softmax_by_loops(logits):
    m = rt.reduce_max(logits)
    total = 0.0
    for z in logits:
        total += rt.exp(z - m)
    out = []
    for z in logits:
        out.append(rt.exp(z - m) / total)
    return rt.stack(out)


def evens_in_list(n):
    evens = []
    for i in range(n):
        if i % 2 == 0:
            evens.append(i)
    return rt.stack(evens)


def prefix_sums_from_last_element(n):
    xs = [0]
    for i in range(n):
        xs.append(xs[-1] + i)
    return rt.stack(xs)


def length_inside_loop(n):
    xs = []
    i = 0
    while i < n:
        xs.append(len(xs) * 10)
        i += 1
    return rt.stack(xs)


def list_read_back_after_loop(n):
    xs = []
    for i in range(n):
        xs.append(i + 1)
    total = 0
    for x in xs:
        total += x
    return total, xs[0] + xs[-1], len(xs)


def pop_every_other(n):
    xs = [1, 2, 3, 4, 5, 6, 7, 8]
    for i in range(n):
        if i % 2 == 0:
            xs.pop()
    return rt.stack(xs)


def drain_with_pop(n):
    xs = []
    for i in range(n):
        xs.append(i)
    total = 0
    while len(xs) > 0:
        total += xs.pop()
    return total


def cumulative_rows(m):
    out = []
    s = rt.zeros_like(m[0])
    for row in m:
        s = s + row
        out.append(s)
    return rt.stack(out)


@pytest.mark.parametrize("f, args", [
    (softmax_by_loops, (f32(1.0, 2.0, 3.0),)),
    (evens_in_list, (5,)),
    (prefix_sums_from_last_element, (4,)),
    (length_inside_loop, (3,)),
    (list_read_back_after_loop, (4,)),
    (pop_every_other, (5,)),
    (drain_with_pop, (4,)),
    (cumulative_rows, (f32(1, 2, 3, 4, 5, 6).reshape(3, 2),)),
], ids=lambda v: getattr(v, "__name__", None))
def test_lists(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


# -- datasets ----------------------------------------------------------------------------

FEATURES = f32(1, 2, 3, 4, 5, 6, 7, 8, 9, 10).reshape(5, 2)
LABELS = f32(1, 0, 1, 0, 1)
DATA = rt.data.Dataset.from_tensor_slices((FEATURES, LABELS))


def dataset_weighted_sum(scale):
    total = 0.0
    for x, y in DATA.batch(2):
        total += rt.reduce_sum(x) * scale + rt.reduce_sum(y)
    return total


def dataset_break(limit):
    seen = 0
    for x, _ in DATA:
        if rt.reduce_sum(x) > limit:
            break
        seen += 1
    return seen


def dataset_continue_and_return(limit):
    total = 0.0
    for x, y in DATA:
        if y == 0:
            continue
        total += rt.reduce_max(x)
        if total > limit:
            return total, True
    return total, False


def dataset_of_dicts(ds, w):
    loss = 0.0
    n = 0
    for i, batch in enumerate(ds):
        pred = rt.reduce_sum(batch["x"] * w, axis=1)
        loss += rt.reduce_sum(rt.square(pred - batch["y"]))
        n += 1
    return loss / n, n


class State:
    """Holds a program's variables (None until its first call creates it)."""

    def __init__(self):
        self.v = None


def train_logistic_regression(ds, lr, model):
    if model.v is None:     # variables only on the first call (see "variables" below)
        model.v = rt.Variable(rt.zeros([2])), rt.Variable(0.0), rt.optimizers.SGD(lr)
    w, b, opt = model.v
    losses = []
    for x, y in ds:
        with rt.GradientTape() as tape:
            logits = rt.reduce_sum(x * w, axis=1) + b
            loss = rt.reduce_mean(
                rt.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tape.gradient(loss, [w, b])
        opt.apply_gradients(zip(grads, [w, b]))
        losses.append(loss)
    return rt.stack(losses), w.read_value(), b.read_value()


def shuffled_first_column(seed):
    ds = rt.data.Dataset.from_tensor_slices(FEATURES).shuffle(5, seed=seed).batch(2)
    firsts = []
    for batch in ds:
        firsts.append(batch[0, 0])
    return rt.stack(firsts)          # (a list grown in a graph loop is a tensor list)


def iterator_and_next(scale):
    it = iter(rt.data.Dataset.from_tensor_slices(i32(1, 2, 3, 4)))
    total = next(it) * 100
    for x in it:
        if x > 2:
            total += x * scale
    return total


@pytest.mark.parametrize("f, args", [
    (dataset_weighted_sum, (2.0,)),
    (dataset_break, (8.0,)), (dataset_break, (100.0,)),
    (dataset_continue_and_return, (8.0,)), (dataset_continue_and_return, (100.0,)),
    (dataset_of_dicts, (static(rt.data.Dataset.from_tensor_slices(
        {"x": FEATURES, "y": LABELS}).batch(2)), f32(0.1, -0.1))),
    (train_logistic_regression, (static(DATA.batch(2)), static(0.1), State())),
    (shuffled_first_column, (static(3),)),
    (iterator_and_next, (2,)),
], ids=lambda v: getattr(v, "__name__", None))
def test_datasets(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


# -- print and assert --------------------------------------------------------------------

def training_log(losses, every):
    step = 0
    for loss in losses:
        step += 1
        if step % every == 0:
            print("step", step, "loss", loss)
        elif loss > 1.0:
            print("warning: high loss at step", step)
    print("done after", step, "steps")
    return step


def print_with_sep_and_end(x):
    print("x =", x, sep="", end=";\n")
    print([x, x + 1], (x, "a"), {"k": x})
    print(x / 3, x // 3, x % 3, -x, x > 1 and x < 5)
    return x


def progress_bar(n):
    i = 0
    while True:
        print("iter", i, end=" ")
        i += 1
        if i >= n:
            print()
            break
    return i


def print_in_nested_ifs(n):
    for i in range(n):
        if i % 2 == 0:
            if i % 4 == 0:
                print("four", i)
            else:
                print("two", i)
    return n


def lazy_and_prints(x):
    def checked(v):
        print("checked", v)
        return v < 10
    if x > 0 and checked(x):
        y = 1
    else:
        y = 0
    return y


def ternary_with_side_effects(x):
    def pos(v):
        print("pos", v)
        return v

    def neg(v):
        print("neg", v)
        return -v
    return pos(x) if x > 0 else neg(x)


def validate_then_sum(v):
    total = 0
    for x in v:
        print("checking", x)
        assert x >= 0, "negative value"
        total += x
    return total


def print_tensors_of_several_dtypes(m):
    print(m)
    print(m > 2)
    print(rt.cast(m, rt.float32) / 3)
    return m


@pytest.mark.parametrize("f, args", [
    (training_log, (f32(2.0, 0.5, 0.25, 1.5, 0.125), 2)),
    (print_with_sep_and_end, (7,)), (print_with_sep_and_end, (2.5,)),
    (progress_bar, (3,)),
    (print_in_nested_ifs, (6,)),
    (lazy_and_prints, (5,)), (lazy_and_prints, (-5,)), (lazy_and_prints, (50,)),
    (ternary_with_side_effects, (3,)), (ternary_with_side_effects, (-3,)),
    (validate_then_sum, (i32(1, 2, 3),)),
    (print_tensors_of_several_dtypes, (i32(1, 2, 3, 4).reshape(2, 2),)),
], ids=lambda v: getattr(v, "__name__", None))
def test_print_and_assert(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


def test_failing_assert_in_a_loop_after_prints(tensors):
    assert_equivalent(validate_then_sum, i32(1, 2, -1, 3), tensors=tensors,
                      raises=AssertionError)


# -- builtins: len, range, int, float, isinstance, min/max/sum ---------------------------

def casts(x):
    return int(x), float(x), int(-x), pow(x, 2), abs(-x)


def int_bound_from_float(x):
    s = 0
    for i in range(int(x)):
        s += i
    return s


def isinstance_dispatch(x):
    if isinstance(x, rt.Tensor):
        return x * 2
    return x * 3


def builtin_reductions(v):
    return sum(v), max(v[0], v[1]), min(v[0], v[1]), len(v)


def membership_test(x):
    if x in (1, 2, 3):
        return x * 10
    return x


@pytest.mark.parametrize("f, args", [
    (casts, (2.7,)), (casts, (-3.5,)),
    (int_bound_from_float, (4.7,)),
    (isinstance_dispatch, (2,)),
    (builtin_reductions, (i32(1, -2, -3),)),
    (membership_test, (2,)), (membership_test, (7,)),
], ids=lambda v: getattr(v, "__name__", None))
def test_builtins(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


# -- variables ---------------------------------------------------------------------------
# A graph function creates its variables on its first call only (tf.function's rule), so
# each program keeps them in `state` (a State, made fresh for every run).

def variable_accumulates(n, state):
    if state.v is None:
        state.v = rt.Variable(0)
    v = state.v
    i = 0
    while i < n:
        v.assign_add(i)
        i += 1
    return v.read_value()


def variable_in_branches(x, state):
    if state.v is None:
        state.v = rt.Variable(1.0)
    v = state.v
    if x > 0:
        v.assign(x * 2.0)
    else:
        v.assign_sub(x)
    return v.read_value()


def variable_as_loop_condition(n, state):
    if state.v is None:
        state.v = rt.Variable(0)
    v = state.v
    while v < n:
        v.assign_add(2)
    return v.read_value()


def exponential_moving_average(xs, decay, state):
    if state.v is None:
        state.v = rt.Variable(0.0)
    avg = state.v
    for x in xs:
        avg.assign(decay * avg + (1 - decay) * x)
    return avg.read_value()


class Counter:
    def __init__(self):
        self.v = rt.Variable(0)

    def bump(self, k):
        self.v.assign_add(k)


def variable_through_method(n, state):
    if state.v is None:
        state.v = Counter()
    c = state.v
    for i in range(n):
        if i % 2 == 0:
            c.bump(i)
    return c.v.read_value()


@pytest.mark.parametrize("f, args", [
    (variable_accumulates, (4, State())),
    (variable_in_branches, (2.0, State())), (variable_in_branches, (-2.0, State())),
    (variable_as_loop_condition, (5, State())),
    (exponential_moving_average, (f32(1.0, 2.0, 3.0), 0.5, State())),
    (variable_through_method, (5, State())),
], ids=lambda v: getattr(v, "__name__", None))
def test_variables(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


# -- loop options: shape invariants, maximum_iterations ----------------------------------

def grow_rows(n):
    m = rt.zeros([1, 2])
    i = 0
    while i < n:
        ag.set_loop_options(shape_invariants=[(m, rt.TensorShape([None, 2]))])
        m = rt.concat([m, rt.ones([1, 2]) * rt.cast(i, rt.float32)], axis=0)
        i += 1
    return m


def grow_two_vectors(n):
    a = rt.zeros([0], dtype=rt.int32)
    b = rt.zeros([0], dtype=rt.int32)
    for i in range(n):
        ag.set_loop_options(shape_invariants=[(a, [None]), (b, [None])])
        a = rt.concat([a, [i]], 0)
        if i % 2 == 0:
            b = rt.concat([b, [i * 10]], 0)
    return a, b


def grow_dict_item(n):
    state = {"buf": rt.zeros([0]), "count": 0}
    i = 0
    while i < n:
        ag.set_loop_options(shape_invariants=[(state["buf"], [None])])
        state["buf"] = rt.concat([state["buf"], [1.0]], 0)
        state["count"] += 1
        i += 1
    return state


def pad_to_length(v, size):
    while rt.shape(v)[0] < size:
        ag.set_loop_options(shape_invariants=[(v, [None])])
        v = rt.concat([v, [0]], 0)
    return v


def generous_iteration_cap(n):
    i = 0
    s = 0
    while i < n:
        ag.set_loop_options(maximum_iterations=100)
        s += i
        i += 1
    return s


@pytest.mark.parametrize("f, args", [
    (grow_rows, (3,)), (grow_rows, (0,)),
    (grow_two_vectors, (4,)),
    (grow_dict_item, (3,)),
    (pad_to_length, (i32(1, 2), 5)),
    (generous_iteration_cap, (10,)),
], ids=lambda v: getattr(v, "__name__", None))
def test_loop_options(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


def spin(step):
    i = step * 0
    while i >= 0:
        ag.set_loop_options(maximum_iterations=5)
        i += step
    return i


def capped_for(n):
    s = 0
    for i in range(n):
        ag.set_loop_options(maximum_iterations=3)
        s += i
    return s


def test_maximum_iterations_caps_graph_loops():
    # Eagerly the directive does nothing (as in TensorFlow); a graph loop stops after 5
    # (capped_for after 3).
    assert ag.convert(spin)(rt.constant(2)).numpy() == 10
    assert ag.convert(capped_for)(rt.constant(10)).numpy() == 0 + 1 + 2


loop_options = ag.set_loop_options      # (imported under another name)


def capped_by_an_alias(n):
    s = 0
    for i in range(n):
        loop_options(maximum_iterations=2)
        s += i
    return s


def test_the_directive_under_another_name_caps_graph_loops():
    assert ag.convert(capped_by_an_alias)(rt.constant(10)).numpy() == 0 + 1


# -- typical ML programs -----------------------------------------------------------------

def bubble_sort(v):
    n = len(v)
    for i in range(n):
        for j in range(n - 1 - i):
            a = v[j]
            b = v[j + 1]
            if a > b:
                v = rt.concat([v[:j], rt.stack([b, a]), v[j + 2:]], 0)
    return v


def argmax_search(v):
    best = v[0]
    best_i = 0
    for i in range(1, len(v)):
        if v[i] > best:
            best = v[i]
            best_i = i
    return best_i, best


def fibonacci(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


def rnn(xs, h0, w, u):
    h = h0
    for x in xs:
        h = rt.tanh(w * h + u * x)
    return h


def loss_over_batches(xs, ys, batch):
    total = 0.0
    count = 0
    i = 0
    while i < len(xs):
        x = xs[i:i + batch]
        y = ys[i:i + batch]
        total += rt.reduce_sum(rt.square(x - y))
        count += 1
        i += batch
    return total / rt.cast(count, rt.float32)


def greedy_decode(logits):
    tokens = []
    score = 0.0
    for step_logits in logits:
        tok = rt.argmax(step_logits)
        score += rt.reduce_max(rt.nn.log_softmax(step_logits))
        tokens.append(tok)
        if tok == 0:
            break
    return rt.stack(tokens), score


def kmeans_1d(points, c0, c1):
    for _ in range(5):
        s0 = 0.0
        n0 = 0.0
        s1 = 0.0
        n1 = 0.0
        for p in points:
            if abs(p - c0) <= abs(p - c1):
                s0 += p
                n0 += 1.0
            else:
                s1 += p
                n1 += 1.0
        if n0 > 0:
            c0 = s0 / n0
        if n1 > 0:
            c1 = s1 / n1
    return c0, c1


def gradient_descent_until_converged(xs, ys):
    w = rt.constant(0.0)
    prev = rt.constant(1e9)
    step = 0
    while True:
        p = rt.sigmoid(w * xs)
        loss = -rt.reduce_mean(ys * rt.log(p + 1e-7) + (1.0 - ys) * rt.log(1.0 - p + 1e-7))
        w = w - 0.5 * rt.reduce_mean((p - ys) * xs)
        step += 1
        if prev - loss < 1e-3 or step >= 200:
            break
        prev = loss
    return w, step


def accuracy(logits, labels):
    correct = 0
    for i in range(len(labels)):
        if rt.cast(rt.argmax(logits[i]), rt.int32) == labels[i]:
            correct += 1
    return correct / len(labels)


def top_k_by_masking(scores, k):
    chosen = []
    remaining = scores
    for _ in range(k):
        best = rt.argmax(remaining)
        chosen.append(best)
        remaining = remaining - rt.one_hot(best, 4) * 1000.0
    return rt.stack(chosen)


def power_and_gradient(x, n):
    with rt.GradientTape() as tape:
        tape.watch(x)
        y = rt.ones_like(x)
        for _ in range(n):
            y = y * x
    return y, tape.gradient(y, x)


def matrix_power(m, k):
    result = rt.cast(rt.one_hot(rt.range(2), 2), m.dtype)
    while k > 0:
        if k % 2 == 1:
            result = rt.matmul(result, m)
        m = rt.matmul(m, m)
        k = k // 2
    return result


class MLP:
    def __init__(self):
        self.w1 = rt.constant([[1.0, -1.0], [0.5, 2.0]])
        self.w2 = rt.constant([[1.0], [-1.0]])
        self.layers = [self.hidden, self.output]

    def hidden(self, x):
        return rt.relu(rt.matmul(x, self.w1))

    def output(self, x):
        return rt.matmul(x, self.w2)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def mlp_predict(x):
    y = MLP()(x)
    if rt.reduce_sum(y) > 0:
        label = 1
    else:
        label = 0
    return y, label


@pytest.mark.parametrize("f, args", [
    (bubble_sort, (i32(3, 1, 2, 5, 4),)),
    (argmax_search, (f32(3.0, 1.0, 7.0, 2.0),)),
    (fibonacci, (0,)), (fibonacci, (10,)),
    (gcd, (12, 18)), (gcd, (7, 0)),
    (rnn, (f32(1.0, -1.0, 0.5), 0.0, 0.5, 1.5)),
    (loss_over_batches, (f32(1, 2, 3, 4, 5), f32(1, 1, 1, 1, 1), 2)),
    (greedy_decode, (f32(0.1, 2, 0.3, 0.5, 0.1, 3, 4, 0, 0, 0, 5, 0).reshape(4, 3),)),
    (kmeans_1d, (f32(1.0, 1.5, 8.0, 9.0, 2.0), 0.0, 10.0)),
    (gradient_descent_until_converged, (f32(1, -1, 2, -2), f32(1, 0, 1, 0))),
    (accuracy, (f32(1, 2, 3, 0.5, 0.1, 0.2).reshape(3, 2), i32(1, 0, 0))),
    (top_k_by_masking, (f32(0.1, 0.5, 0.3, 0.9), 3)),
    (matrix_power, (i32(1, 1, 1, 0).reshape(2, 2), 5)),
    (mlp_predict, (f32(1.0, 2.0).reshape(1, 2),)), (mlp_predict, (f32(-1.0, 0.0).reshape(1, 2),)),
], ids=lambda v: getattr(v, "__name__", None))
def test_ml_programs(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


def test_gradient_through_a_tensor_loop():
    assert_equivalent(power_and_gradient, 2.0, 3, tensors=True)
    assert_equivalent(power_and_gradient, rt.constant(2.0), static(3), tensors=False)


# -- misuse: errors TensorFlow's AutoGraph raises too ------------------------------------

def line_of(fn, text):
    """The file line of the first line of `fn` containing `text`."""
    lines, first = inspect.getsourcelines(fn)
    for offset, line in enumerate(lines):
        if text in line:
            return first + offset
    raise AssertionError(f"{text!r} not in {fn.__name__}")


def assert_names(error, fn, text, *names):
    message = str(error)
    for name in names:
        assert name in message, message
    assert f'{HERE}", line {line_of(fn, text)}' in message or \
        f"{HERE}:{line_of(fn, text)}" in message, message


def last_value_set_in_one_branch(n):
    i = 0
    while i < n:
        if i > 2:
            last = i
        i += 1
    return last


def hit_set_before_break_only(v):
    for x in v:
        if x > 2:
            hit = x
            break
    return hit


def counter_changes_dtype(n):
    x = rt.constant(1)
    for _ in range(n):
        x = x * 1.5
    return x


def buffer_doubles(n):
    v = rt.zeros([1])
    for _ in range(n):
        v = rt.concat([v, v], 0)
    return v


def best_starts_as_none(v):
    best = None
    for x in v:
        if best is None or x > best:
            best = x
    return best


def state_changes_structure(n):
    s = (0, 0)
    for i in range(n):
        s = i
    return s


def object_made_in_each_branch(x):
    if x > 0:
        o = Cell()
        o.h = x
    else:
        o = Cell()
    return o.h


def vector_condition(v):
    if v > 0:
        return v
    return -v


def recursion_on_tensor_depth(n):
    if n <= 0:
        return 0
    return n + recursion_on_tensor_depth(n - 1)


def test_variable_defined_in_one_branch_inside_a_loop():
    # The loop carries `last` as an optional value (typed from its first assignment, with a
    # flag): read after a loop that never assigned it, it fails at the read, as in Python.
    assert assert_equivalent(last_value_set_in_one_branch, 5) == 4
    assert_equivalent(last_value_set_in_one_branch, 2, raises=UnboundLocalError)
    with pytest.raises(UnboundLocalError) as info:
        ag.convert(last_value_set_in_one_branch)(rt.constant(2))
    assert_names(info.value, last_value_set_in_one_branch, "return last", "'last'")


def test_variable_defined_only_before_a_break():
    assert assert_equivalent(hit_set_before_break_only, i32(1, 3, 4)) == 3
    assert_equivalent(hit_set_before_break_only, i32(1, 2), raises=UnboundLocalError)
    with pytest.raises(UnboundLocalError) as info:
        ag.convert(hit_set_before_break_only)(rt.constant(i32(1, 2)))
    assert_names(info.value, hit_set_before_break_only, "return hit", "'hit'")


def test_loop_variable_changes_dtype():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(counter_changes_dtype)(rt.constant(3))
    assert_names(info.value, counter_changes_dtype, "for _ in range(n)",
                 "'x'", "int32", "float32")


def test_loop_variable_changes_shape():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(buffer_doubles)(rt.constant(3))
    assert_names(info.value, buffer_doubles, "for _ in range(n)", "'v'", "shape_invariants")


def test_none_loop_variable():
    # Typed from its first assignment; `best is None` tests whether it has one yet.
    assert assert_equivalent(best_starts_as_none, i32(1, 5, 3)) == 5
    assert assert_equivalent(best_starts_as_none, i32(-4, -7, -2)) == -2
    assert assert_equivalent(best_starts_as_none, [1, 5, 3], tensors=False) == 5
    # No iteration: eagerly None, which a graph value cannot be: the read fails.
    f = ag.convert(best_starts_as_none, input_signature=[rt.TensorSpec([None], rt.int32)])
    with pytest.raises(UnboundLocalError) as info:
        f(rt.constant(i32()))
    assert_names(info.value, best_starts_as_none, "return best", "'best'", "None")


def test_loop_variable_changes_structure():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(state_changes_structure)(rt.constant(3))
    assert_names(info.value, state_changes_structure, "for i in range(n)", "s")


def test_different_objects_in_the_branches():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(object_made_in_each_branch)(rt.constant(2.0))
    assert_names(info.value, object_made_in_each_branch, "if x > 0", "'o'")


def test_non_scalar_condition():
    with pytest.raises(ValueError) as info:
        ag.convert(vector_condition)(rt.constant(i32(1, -1)))
    assert_names(info.value, vector_condition, "if v > 0", "shape")
    assert_equivalent(vector_condition, i32(1, -1), raises=ValueError)


def test_recursion_on_a_tensor_depth():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(recursion_on_tensor_depth)(rt.constant(3))
    assert "recursion_on_tensor_depth" in str(info.value)
    assert f"{HERE}:{line_of(recursion_on_tensor_depth, 'return n +')}" in str(info.value)
    assert ag.convert(recursion_on_tensor_depth)(3).numpy() == 6


def pairs_in_a_tensor_loop(n):
    out = []
    for i in range(n):
        out.append((i, i * 2))
    return out


def test_list_of_tuples_grown_in_a_tensor_loop_names_the_list():
    with pytest.raises(ag.StagingError) as info:
        ag.convert(pairs_in_a_tensor_loop)(rt.constant(3))
    assert "tuple" in str(info.value)
    assert_names(info.value, pairs_in_a_tensor_loop, "out.append(", "'out'")


def doubled_by_comprehension(n):
    return [i * 2 for i in range(n)]


def test_comprehension_over_a_tensor_range_says_to_use_a_loop():
    assert doubled_by_comprehension(3) == [0, 2, 4]
    with pytest.raises(TypeError, match="only a `for` statement over it becomes a graph loop"):
        ag.convert(doubled_by_comprehension)(rt.constant(3))


def training_log_with_f_strings(n):
    loss = 10.0
    for step in range(n):
        loss = loss * 0.5
        print(f"step {step}: loss {loss:.3f} ({loss!s}) [{step:>{n}}]")
    print(f"done after {n} steps")
    return loss


def training_log_with_format_and_percent(n):
    loss = 10.0
    for step in range(n):
        loss = loss * 0.5
        print("step {}: loss {:.3f} [{:>{}}] {k}".format(step, loss, step, n, k=loss))
        print("step %d: loss %.3f %s %5.1f%%" % (step, loss, step, loss))
        print("%(s)d/%(l)06.2f" % {"s": step, "l": loss})
    return loss


def f_string_as_a_value(x):
    label = f"x={x}"            # a tensor's text while tracing, as in TensorFlow
    return len(f"{3:04d}"), label.startswith("x=")


@pytest.mark.parametrize("f, tensors", cases(training_log_with_f_strings,
                                             training_log_with_format_and_percent))
def test_f_strings_print_the_values_the_graph_computes(f, tensors):
    assert_equivalent(f, 4, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(f_string_as_a_value))
def test_f_strings_are_strings(f, tensors):
    assert_equivalent(f, 2, tensors=tensors)


# -- walrus, annotations, early returns, loop variables retyped, data sets of arguments ----

# A name bound by `:=` in a while condition is loop state, with Python values too.


def walrus_in_while_condition(n):
    count = 0
    while (n := n - 1) > 0:
        count += n
    return count, n


def walrus_binds_new_name_in_condition(n):
    i = 0
    while (j := i * 2) < n:
        i += 1
    return i, j


# An annotated assignment (`y: float = ...`) to a name the if/loop carries (Python forbids
# annotating a nonlocal name).


def annotated_in_branches(x):
    if x > 0:
        y: float = x * 2.0
    else:
        y = -x
    return y


def annotated_loop_state(n):
    total = 0
    for i in range(n):
        total: int = total + i
    return total


# A container indexed by a key the tensor loop's body assigns is carried whole. (A
# Python list indexed by a tensor cannot be traced at all: a TypeError saying so.)


def metrics_by_key(n):
    metrics = {"loss": 0, "steps": 0}
    i = 0
    while i < n:
        for key in ["loss", "steps"]:
            metrics[key] = metrics[key] + 1
        i += 1
    return metrics


def counts_by_slot(n):
    counts = [0, 0]
    i = 0
    while i < n:
        slot = i % 2
        counts[slot] = counts[slot] + 1
        i += 1
    return counts


# Code after a Python `if` whose body always returns (through a tensor `if c: return a`
# then `return b`) is not traced: the trailing `raise` must not fire.

def activation(x, kind):
    if kind == "relu":
        if x > 0:
            return x
        return 0.0
    raise ValueError("unknown activation " + kind)


def tree_reduce(tree, x):
    if isinstance(tree, tuple):
        left = tree_reduce(tree[0], x)
        right = tree_reduce(tree[1], x)
        if left > right:
            return left - right
        return left + right
    return tree * x


# A Python-number loop variable is weakly typed in the body: a tensor `if` may assign it an
# int64/float64 tensor.


def smallest_so_far(v):
    best = 1e9
    for x in v:
        if x < best:
            best = x
    return best


def last_match(v, target):
    found = -1
    for x in v:
        if x == target:
            found = x
    return found


# A data set built from the function's (symbolic) arguments.


def mean_loss_of_batches(features, labels):
    data = rt.data.Dataset.from_tensor_slices((features, labels)).batch(2)
    total = 0.0
    count = 0
    for x, y in data:
        total += rt.reduce_sum(rt.square(x - y))
        count += 1
    return total / count


def walrus_while_with_else(n):
    total = 0
    while (n := n - 1) > 0:
        total += n
    else:
        total = total * 10
    return total, n


def declared_then_assigned_in_branches(x):
    y: float
    if x > 0:
        y = x * 2.0
    else:
        y = -x * 1.0
    return y


def class_body_with_control_flow(x, mode="fast"):
    class Config:             # a class body runs as plain Python (a tensor `if` here
        if mode == "fast":    # would be a TypeError, as in TensorFlow)
            scale = 2
        else:
            scale = 3
        offset: int = 1

        def apply(self, v):
            if v > 0:
                return v * self.scale + self.offset
            return v

    return Config().apply(x), Config.__annotations__["offset"] is int


def bug_params(bug, *args, suffix=""):
    """`cases(bug)` with the arguments `args` put between the function and the mode."""
    return [pytest.param(p.values[0], args, p.values[1], marks=p.marks, id=p.id + suffix)
            for p in cases(bug)]


@pytest.mark.parametrize("f, args, tensors", [
    *bug_params(walrus_in_while_condition, 5),
    *bug_params(walrus_binds_new_name_in_condition, 5),
    *bug_params(annotated_loop_state, 5),
    *bug_params(annotated_in_branches, 2.0),
    *bug_params(walrus_while_with_else, 5),
    *bug_params(declared_then_assigned_in_branches, 2.0),
    *bug_params(class_body_with_control_flow, 3),
    *bug_params(metrics_by_key, 3),
    *bug_params(counts_by_slot, 3)[:1],            # python mode only (see below)
    *bug_params(activation, 2.0, static("relu"), suffix="-positive"),
    *bug_params(activation, -2.0, static("relu"), suffix="-negative"),
    *bug_params(tree_reduce, static(((1, 2), (3, (4, 5)))), 2),
    *bug_params(smallest_so_far, np.array([3.0, 1.0, 2.0])),
    *bug_params(last_match, np.array([1, 2, 3]), 2),
    *bug_params(mean_loss_of_batches, f32(1, 2, 3, 4, 5), f32(1, 1, 1, 1, 1)),
])
def test_bugs_found_stay_fixed(f, args, tensors):
    assert_equivalent(f, *args, tensors=tensors)


def test_python_list_indexed_by_a_tensor_in_a_loop_says_so():
    with pytest.raises(TypeError) as info:
        ag.convert(counts_by_slot)(rt.constant(3))
    assert "as a Python index" in str(info.value) and "rt.stack" in str(info.value)
    assert "test_user_scenarios.py:" in str(info.value)


# Falling off the end of a function whose other path returns from a tensor `if` is the
# StagingError an explicit `return None` gets.

def positive_or_nothing(x):
    if x > 0:
        return x


def first_three_or_nothing(n):
    i = 0
    while i < n:
        if i == 3:
            return i
        i += 1


@pytest.mark.parametrize("f, arg", [(positive_or_nothing, -1), (first_three_or_nothing, 2)])
def test_implicit_none_return_is_not_a_silent_zero(f, arg):
    assert f(rt.constant(arg)) is None
    converted = ag.convert(f)
    with pytest.raises(ag.StagingError):
        converted(rt.constant(arg))


# A return-value mismatch names the user's `if`, not generated names. (Returning 1 on one
# path and 2.5 on the other is no error: Python numbers are weakly typed, the graph
# returns a float32.)

def value_or_none(x):
    if x > 0:
        return x * 2
    return None


@pytest.mark.parametrize("f", [value_or_none])
def test_mismatched_return_values_name_the_users_if(f):
    with pytest.raises(ag.StagingError) as info:
        ag.convert(f)(rt.constant(1))
    assert "retval_" not in str(info.value) and "return" in str(info.value)
    assert_names(info.value, f, "if x > 0")


# A list grown in a tensor loop becomes a tensor list whose element dtype is fixed by its
# first element; an element of another dtype is a StagingError naming the list and the
# line (TF raises too), never cast (1.5 -> 1).


def mixed_numbers_in_list(n):
    xs = [1]
    for _ in range(n):
        xs.append(0.5)
    return rt.stack(xs)


def int_then_float_tensor_in_list(n):
    xs = []
    for i in range(n):
        xs.append(i)
        xs.append(rt.constant(1.5))
    return rt.stack(xs)


@pytest.mark.parametrize("f, line", [(mixed_numbers_in_list, "xs.append(0.5)"),
                                     (int_then_float_tensor_in_list, "xs.append(rt.")])
def test_list_elements_of_another_dtype_are_not_silently_cast(f, line):
    f(rt.constant(2))
    with pytest.raises(ag.StagingError) as info:
        ag.convert(f)(rt.constant(2))
    assert_names(info.value, f, line, "'xs'")


# A list grown in a tensor loop by `+=`/`+`/extend/insert works like append (TF rejects
# them).


def grow_by_plus_equals(n):
    xs = []
    for i in range(n):
        xs += [i]
    return rt.stack(xs)


def grow_by_extend(n):
    xs = []
    for i in range(n):
        xs.extend([i, -i])
    return rt.stack(xs)


def grow_by_plus(n):
    xs = [0]
    for i in range(n):
        xs = xs + [i * 2]
    return rt.stack(xs)


def grow_by_insert(n):
    xs = [5]
    for i in range(n):
        xs.insert(0, i)
        if i > 1:
            xs.extend([i])
    return rt.stack(xs), len(xs)


def python_list_extended_and_inserted(n):
    xs = []
    for i in range(3):
        xs.extend([i, n])
    xs.insert(1, 7)
    return xs


@pytest.mark.parametrize("f, tensors", cases(grow_by_plus_equals, grow_by_extend,
                                             grow_by_plus, grow_by_insert,
                                             python_list_extended_and_inserted))
def test_list_grown_without_append(f, tensors):
    assert_equivalent(f, 3, tensors=tensors)
