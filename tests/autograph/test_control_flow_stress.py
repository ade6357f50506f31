"""Hard control-flow programs: combinations of nested functions, closures, early returns,
loop `else:` clauses, composite state, mixed Python/tensor conditions, prints and asserts.

Each program runs eagerly, converted-and-traced and converted-eagerly (`assert_equivalent`)
with Python arguments and with tensor arguments. Misuse that TensorFlow's AutoGraph rejects
too must raise the documented error. Bugs found are strict xfails (`known_bug`) whose reason
names the module and the diagnosis.
"""
import numpy as np
import pytest
from equivalence import assert_equivalent, cases, differences, static

import autograph as ag
import runtime as rt


def i32(*values):
    return np.array(values, np.int32)


def f32(*values):
    return np.array(values, np.float32)


# == closures and nonlocal state inside tensor control flow =================================

def closure_nonlocal_in_nested_loops(n):
    total = 0
    hits = 0

    def visit(i, j):
        nonlocal total, hits
        if (i + j) % 3 == 0:
            hits += 1
            total += i * j
        else:
            total -= 1

    for i in range(n):
        j = 0
        while j < i:
            visit(i, j)
            j += 1
    return total, hits


def closure_reads_state_assigned_in_loop(n):
    scale = 1

    def scaled(v):
        return v * scale

    acc = 0
    for i in range(n):
        if i % 2 == 0:
            scale = scale + 1
        acc += scaled(i)
    return acc, scale


def closure_with_its_own_tensor_loop(n):
    best = -1

    def search(limit):
        nonlocal best
        k = 0
        while k < limit:
            if k * k > limit and k > best:
                best = k
                return k
            k += 1
        return -k

    s = 0
    for i in range(1, n):
        s += search(i * 3)
    return s, best


def nonlocal_flag_set_in_helper_breaks_loop(v):
    found = False

    def check(x):
        nonlocal found
        if x < 0:
            found = True

    count = 0
    for x in v:
        check(x)
        if found:
            break
        count += 1
    return count, found


def nested_closures_two_levels(n):
    total = 0

    def outer(i):
        def inner(j):
            nonlocal total
            total += i * 10 + j
        j = 0
        while j < 2:
            inner(j)
            j += 1

    for i in range(n):
        outer(i)
    return total


def closure_counter_in_while_condition(n):
    calls = 0

    def more(i):
        nonlocal calls
        calls += 1
        return i < n

    i = 0
    while more(i):
        i += 2
    return i, calls


@pytest.mark.parametrize("f, tensors", cases(
    closure_nonlocal_in_nested_loops, closure_reads_state_assigned_in_loop,
    closure_with_its_own_tensor_loop))
@pytest.mark.parametrize("n", [0, 1, 5])
def test_closures(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(
    nested_closures_two_levels,
    closure_counter_in_while_condition))
@pytest.mark.parametrize("n", [1, 5])
def test_closures_found_bugs(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(nonlocal_flag_set_in_helper_breaks_loop))
@pytest.mark.parametrize("v", [i32(1, 2, -3, 4), i32(1, 2)])
def test_closures_over_vectors(f, v, tensors):
    assert_equivalent(f, v, tensors=tensors)


# == early returns at several depths ========================================================

def return_at_three_depths(n, target):
    i = 0
    while i < n:
        if i == target:
            return i * 100
        for j in range(i):
            if j > 5:
                break
            if i * j == target:
                return i * 10 + j
            k = j
            while k > 0:
                k -= 2
                if k == target - 1:
                    return -k
                if k < 1:
                    continue
        i += 1
    return -1


def return_after_continue_and_break(n):
    total = 0
    for i in range(n):
        if i % 2 == 1:
            continue
        for j in range(n):
            if j > i:
                break
            total += j
            if total > 20:
                return total, i, j
    return total, n, n


def return_in_for_else(v, target):
    for x in v:
        if x == target:
            break
    else:
        return -1
    return target * 2


def return_in_body_and_for_else(v, target):
    for x in v:                         # no break: the `else:` runs unless a return did
        if x == target:
            return x * 2
    else:
        return -1


def return_in_while_else(n):
    i = 0
    while i < n:
        i += 3
        if i == 7:
            break
    else:
        return i * 10
    return i


def return_inside_if_inside_while_inside_if(x, n):
    if x > 0:
        i = 0
        while i < n:
            if i * x > 10:
                return i
            i += 1
        x = -x
    else:
        x = x * 2
    return x


def helper_with_return_in_loop(v, limit):
    for i, x in enumerate(v):
        if x > limit:
            return i
    return -1


def calls_helper_with_return_in_loop(v, n):
    total = 0
    for k in range(n):
        total += helper_with_return_in_loop(v, k)
    return total


@pytest.mark.parametrize("f, tensors", cases(return_at_three_depths))
@pytest.mark.parametrize("n, target", [(0, 3), (5, 3), (6, 4), (4, 100), (8, 5)])
def test_return_at_three_depths(f, n, target, tensors):
    assert_equivalent(f, n, target, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(
    return_after_continue_and_break, return_in_while_else))
@pytest.mark.parametrize("n", [0, 3, 7, 10])
def test_returns_in_loops(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(return_in_for_else, return_in_body_and_for_else))
@pytest.mark.parametrize("target", [2, 9])
def test_return_in_for_else(f, target, tensors):
    assert_equivalent(f, i32(1, 2, 3), target, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(return_inside_if_inside_while_inside_if))
@pytest.mark.parametrize("x, n", [(3, 10), (3, 2), (-2, 5)])
def test_return_inside_nested_if_while(f, x, n, tensors):
    assert_equivalent(f, x, n, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(calls_helper_with_return_in_loop))
@pytest.mark.parametrize("n", [0, 4])
def test_helper_with_return_in_loop(f, n, tensors):
    assert_equivalent(f, i32(1, 4, 2, 6), n, tensors=tensors)


# == loop `else:` clauses with tensor conditions ============================================

def while_else_with_state_in_both(n, stop):
    i = 0
    s = 0
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        s += i
        if s > stop:
            s = -s
            break
    else:
        s = s * 10
        i = -i
    return i, s


def for_else_continue_outer(n):
    # for ... else: continue / break of the outer loop: a classic "all inner passed".
    found = 0
    checked = 0
    for i in range(2, n):
        for d in range(2, i):
            checked += 1
            if i % d == 0:
                break
        else:
            found += i
            continue
        found -= 1
    return found, checked


def nested_while_else_break_outer(n):
    i = 0
    log = 0
    while i < n:
        j = 0
        while j < i:
            if i * j == 6:
                break
            j += 1
        else:
            log += 1
            i += 1
            continue
        log += 100
        break
    return i, log


def for_else_over_zip_of_tensors(u, v):
    total = 0
    for a, b in zip(u, v):
        if a + b == 0:
            total = total - 100
            break
        total += a * b
    else:
        total += 1000
    return total


@pytest.mark.parametrize("f, tensors", cases(while_else_with_state_in_both))
@pytest.mark.parametrize("n, stop", [(0, 5), (3, 100), (9, 5), (9, 100)])
def test_while_else_with_state(f, n, stop, tensors):
    assert_equivalent(f, n, stop, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(for_else_continue_outer,
                                             nested_while_else_break_outer))
@pytest.mark.parametrize("n", [0, 2, 4, 12])
def test_loop_else_clauses(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(for_else_over_zip_of_tensors))
@pytest.mark.parametrize("u, v", [(i32(1, 2, 3), i32(4, 5, 6)), (i32(1, 2, 3), i32(4, -2, 6))])
def test_for_else_over_zip(f, u, v, tensors):
    assert_equivalent(f, u, v, tensors=tensors)


# == zip / enumerate of tensors mixed with Python lists =====================================

def enumerate_zip_nested_targets(u, v):
    acc = 0.0
    last = -1
    for i, (a, b) in enumerate(zip(u, v)):
        if a > b:
            acc += a * i
            last = i
        else:
            acc -= b
    return acc, last


def zip_tensor_with_python_list(v):
    weights = [1.0, -2.0, 0.5, 4.0]
    s = 0.0
    for x, w in zip(v, weights):
        s = s + x * w
    return s


def enumerate_with_start_and_break(v, limit):
    pos = 0
    for k, x in enumerate(v, 10):
        if x > limit:
            pos = k
            break
        pos -= 1
    return pos


def zip_range_with_tensor(n, v):
    s = 0
    for i, x in zip(range(n), v):
        s += i * x
    return s


def enumerate_rows_and_inner_zip(m, w):
    total = 0
    for r, row in enumerate(m):
        for a, b in zip(row, w):
            if a * b < 0:
                continue
            total += a * b * (r + 1)
    return total


def zip_three_with_python_enumerate(u, v, w):
    out = []
    for k, scale in enumerate([1, 10]):
        s = 0
        for a, b, c in zip(u, v, w):
            s += (a - b) * c * scale + k
        out.append(s)
    return out


def zip_of_rows_unpacked(m):
    # each row of a (n, 2) matrix unpacked into two scalars
    s = 0
    for a, b in m:
        if a > b:
            s += a - b
        else:
            s -= 1
    return s


@pytest.mark.parametrize("f, tensors", cases(
    enumerate_zip_nested_targets))
def test_enumerate_zip_nested_targets(f, tensors):
    assert_equivalent(f, f32(1, 5, 2, 7), f32(3, 1, 2, 0), tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(zip_tensor_with_python_list))
@pytest.mark.parametrize("v", [f32(1, 2, 3, 4), f32(1, 2), f32(1, 2, 3, 4, 5, 6)])
def test_zip_tensor_with_python_list(f, v, tensors):
    assert_equivalent(f, v, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(enumerate_with_start_and_break))
@pytest.mark.parametrize("limit", [2, 100])
def test_enumerate_with_start_and_break(f, limit, tensors):
    assert_equivalent(f, i32(1, 2, 3, 4), limit, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(
    zip_range_with_tensor))
@pytest.mark.parametrize("n", [0, 2, 9])
def test_zip_range_with_tensor(f, n, tensors):
    assert_equivalent(f, n, i32(3, 4, 5), tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(enumerate_rows_and_inner_zip))
def test_enumerate_rows_and_inner_zip(f, tensors):
    assert_equivalent(f, np.array([[1, -2], [3, 4], [-5, 6]], np.int32), i32(2, 3),
                      tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(zip_three_with_python_enumerate))
def test_zip_three_with_python_enumerate(f, tensors):
    assert_equivalent(f, i32(1, 2, 3), i32(3, 2, 1), i32(1, -1, 2), tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(zip_of_rows_unpacked))
def test_rows_unpacked(f, tensors):
    assert_equivalent(f, np.array([[3, 1], [1, 3], [5, -5]], np.int32), tensors=tensors)


# == objects, dicts and tuples as loop state ================================================

class Accumulator:
    def __init__(self):
        self.total = 0
        self.count = 0
        self.items = [0, 0, 0]
        self.stats = {"min": 1000, "max": -1000}

    def run(self, v):
        for x in v:
            if x < 0:
                continue
            self.total += x
            self.count += 1
            self.items[1] = self.items[1] + x * 2
            if x > self.stats["max"]:
                self.stats["max"] = x
            if x < self.stats["min"]:
                self.stats["min"] = x
        return self.total


def method_updates_self_in_tensor_loop(v):
    acc = Accumulator()
    t = acc.run(v)
    return t, acc.count, acc.items, acc.stats


class Node:
    def __init__(self, value):
        self.value = value
        self.child = None


def nested_attributes_in_nested_loops(n):
    root = Node(0)
    root.child = Node(1)
    for i in range(n):
        j = 0
        while j < i:
            if (i + j) % 2 == 0:
                root.child.value += j
            else:
                root.value -= 1
            j += 1
    return root.value, root.child.value


def list_items_of_object_in_while(n):
    box = Accumulator()
    i = 0
    while i < n:
        box.items[0] += i
        box.items[2] = box.items[0] - box.items[2]
        i += 1
    return box.items


def dict_with_fixed_keys_and_break(v):
    d = {"sum": 0, "neg": 0, "last": -1}
    for i, x in enumerate(v):
        if x < 0:
            d["neg"] += 1
            if d["neg"] >= 2:
                d["last"] = i
                break
            continue
        d["sum"] = d["sum"] + x
    return d


def dict_of_tuples_in_while(n):
    d = {"p": (0, 1), "q": (1, 1)}
    i = 0
    while i < n:
        a, b = d["p"]
        d["p"] = (b, a + b)
        c, e = d["q"]
        d["q"] = (c * 2, e + c)
        i += 1
    return d


def python_loop_over_dict_keys_in_tensor_loop(n):
    d = {"a": 1, "b": 2, "c": 3}
    for i in range(n):
        for key in ("a", "b", "c"):
            if d[key] % 2 == 0:
                d[key] = d[key] // 2 + i
            else:
                d[key] = d[key] * 3 + 1
    return d


def nested_tuple_state(n):
    state = (0, (1, 2))
    for i in range(n):
        a, (b, c) = state
        state = (a + c, (c, b + i))
    return state


def swap_through_tuple_targets(n):
    a, b, c = 1, 2, 3
    i = 0
    while i < n:
        a, b, c = c, a + 1, b * 2
        if a > 20:
            a, c = c, a
        i += 1
    return a, b, c


@pytest.mark.parametrize("f, tensors", cases(method_updates_self_in_tensor_loop,
                                             dict_with_fixed_keys_and_break))
@pytest.mark.parametrize("v", [i32(3, -1, 5, 2, -4, 7), i32(4, 1), i32(-1, -2, 3)])
def test_composite_state_over_vectors(f, v, tensors):
    assert_equivalent(f, v, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(
    nested_attributes_in_nested_loops, list_items_of_object_in_while,
    dict_of_tuples_in_while, python_loop_over_dict_keys_in_tensor_loop,
    nested_tuple_state, swap_through_tuple_targets))
@pytest.mark.parametrize("n", [0, 1, 6])
def test_composite_state(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


# == state that changes type, and variables first defined in a loop =========================

def python_numbers_become_tensors(v):
    total = 0           # int, then the dtype of v's elements
    flag = False        # bool, then a bool tensor
    best = -1           # int, then an int32 index
    scale = 1.0         # float, stays float but is multiplied by tensors
    for i in range(len(v)):
        total = total + v[i]
        flag = flag or v[i] > 4
        if v[i] > v[best if best >= 0 else 0]:
            best = i
        scale = scale * 0.5
    return total, flag, best, scale


def defined_in_both_branches_of_loop(n):
    i = 0
    while i < n:
        if i % 2 == 0:
            kind = 10
        else:
            kind = 20
        i += 1
    return kind + i


def defined_in_inner_loop(n):
    for i in range(n):
        for j in range(i + 1):
            inner = i * 10 + j
    return inner


def defined_in_loop_read_in_next_iteration(n):
    prev_seen = False
    out = 0
    for i in range(n):
        if prev_seen:
            out += prev
        prev = i * i
        prev_seen = True
    return out, prev


def defined_in_loop_with_else(n):
    i = 0
    while i < n:
        found = i
        i += 2
    else:
        done = i * 3
    return found, done


@pytest.mark.parametrize("f, tensors", cases(python_numbers_become_tensors))
@pytest.mark.parametrize("v", [i32(1, 5, 3, 9), i32(2), i32(9, 1)])
def test_python_numbers_become_tensors(f, v, tensors):
    assert_equivalent(f, v, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(
    defined_in_both_branches_of_loop, defined_in_inner_loop, defined_in_loop_with_else))
@pytest.mark.parametrize("n", [1, 2, 5])
def test_first_defined_in_loop(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(
    defined_in_both_branches_of_loop, defined_in_inner_loop,
    defined_in_loop_read_in_next_iteration, defined_in_loop_with_else))
def test_first_defined_in_loop_that_runs_zero_times(f, tensors):
    assert_equivalent(f, 0, tensors=tensors, raises=UnboundLocalError)


# == deep mixtures: if > for > while > if (> for) with state changed at every level =========

def four_levels_state_at_each(x, n):
    a = 0
    b = 1
    c = 0
    if x > 0:
        a = x
        for i in range(n):
            b = b + i
            j = i
            while j > 0:
                c += 1
                if (i + j) % 3 == 0:
                    a = a + j
                    b = b - 1
                elif j == 1:
                    c = c * 2
                j -= 1
            a = a * 2 % 97
    else:
        b = -x
    return a, b, c


def five_levels_with_break_and_continue(n):
    total = 0
    marks = 0
    for i in range(n):
        if i % 2 == 0:
            k = 0
            while k < n:
                k += 1
                for j in range(k):
                    if j == 2:
                        continue
                    if i + j + k > 9:
                        marks += 1
                        break
                    total += j
                if k > 3:
                    break
        else:
            total -= i
    return total, marks


def deep_nest_return_and_else(n):
    for i in range(n):
        if i > 1:
            j = 0
            while j < i:
                for k in range(j):
                    if i * j * k == 12:
                        return i, j, k
                else:
                    j += 1
                    continue
            else:
                if i == 5:
                    return -1, -1, -1
    return n, 0, 0


def deep_mix_python_and_tensor_loops(x, n):
    out = x
    for scale in (1, 2):                    # Python
        i = 0
        while i < n:                        # tensor
            for w in [0.5, -0.25]:          # Python
                if out > 10.0 * scale:      # tensor
                    out = out * w
                else:
                    out = out + scale
            i += 1
    return out


@pytest.mark.parametrize("f, tensors", cases(four_levels_state_at_each))
@pytest.mark.parametrize("x, n", [(3, 0), (3, 5), (-2, 5), (7, 8)])
def test_four_levels(f, x, n, tensors):
    assert_equivalent(f, x, n, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(five_levels_with_break_and_continue,
                                             deep_nest_return_and_else))
@pytest.mark.parametrize("n", [0, 3, 6, 9])
def test_five_levels(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(deep_mix_python_and_tensor_loops))
@pytest.mark.parametrize("x, n", [(1.0, 0), (1.0, 4), (30.0, 3)])
def test_deep_mix_python_and_tensor_loops(f, x, n, tensors):
    assert_equivalent(f, x, n, tensors=tensors)


# == Python and tensor conditions in one test; and/or values; conditional expressions =====

def python_flag_and_tensor_condition(x, flag, n):
    s = 0
    for i in range(n):
        if flag and x > i:
            s += 1
        elif not flag or x == i:
            s -= 1
        if x > i and flag:
            s += 10
    return s


def python_none_check_then_tensor(x, limit):
    cap = None if limit < 0 else limit
    i = 0
    while cap is not None and i < cap and x > 0:
        x = x - 1
        i += 1
    return x, i


def and_or_return_values_in_loop(v):
    first_nonzero = 0
    last_or = 0
    for x in v:
        first_nonzero = first_nonzero or x
        last_or = x and last_or + x
    return first_nonzero, last_or


def and_or_values_of_tensors(a, b, c):
    y = a or b
    z = a and b or c
    w = (a or c) and (b or c) or a - 1
    return y, z, w


def pre_ternary_idiom(a, b):
    # `cond and x or y` mixes a bool and an int32 value in one tensor cond: TensorFlow's
    # AutoGraph rejects it too (the branches of a cond have one dtype).
    return (a > b) and a or b


def conditional_expression_in_while_test(n, up):
    i = 0 if up else n
    steps = 0
    while (i < n) if up else (i > 0):
        i = i + 1 if up else i - 1
        steps += 1
    return i, steps


def conditional_bound_in_range(n):
    s = 0
    for i in range(n if n > 0 else -n):
        s += i if i % 2 == 0 else -i
    return s


@pytest.mark.parametrize("f, tensors", cases(python_flag_and_tensor_condition))
@pytest.mark.parametrize("x, flag, n", [(2, True, 4), (2, False, 4), (9, True, 0)])
def test_python_flag_and_tensor_condition(f, x, flag, n, tensors):
    assert_equivalent(f, x, static(flag), n, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(python_none_check_then_tensor))
@pytest.mark.parametrize("limit", [-1, 2, 10])
def test_python_none_check_then_tensor(f, limit, tensors):
    assert_equivalent(f, 5, static(limit), tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(and_or_return_values_in_loop))
@pytest.mark.parametrize("v", [i32(0, 0, 3, 0, 5), i32(2, 0, 1)])
def test_and_or_values_in_loop(f, v, tensors):
    assert_equivalent(f, v, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(and_or_values_of_tensors))
@pytest.mark.parametrize("a, b, c", [(0, 3, 5), (2, 0, 7), (4, 3, 0), (0, 0, 0)])
def test_and_or_values_of_tensors(f, a, b, c, tensors):
    assert_equivalent(f, a, b, c, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(conditional_expression_in_while_test))
@pytest.mark.parametrize("n, up", [(4, True), (4, False), (0, True)])
def test_conditional_expression_in_while_test(f, n, up, tensors):
    assert_equivalent(f, n, static(up), tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(conditional_bound_in_range))
@pytest.mark.parametrize("n", [-5, 0, 6])
def test_conditional_bound_in_range(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


def test_pre_ternary_idiom_mixing_bool_and_int_is_a_staging_error():
    assert assert_equivalent(pre_ternary_idiom, 2, 0, tensors=False) == 2
    with pytest.raises(ag.StagingError, match="bool") as info:
        ag.convert(pre_ternary_idiom)(rt.constant(2), rt.constant(0))
    assert "(a > b) and a or b" in str(info.value)


# == helpers that loop, called from loops; recursion with a Python depth ===================

def steps_to_zero(k):
    # divide by 3 when possible, else subtract the remainder's worth, counting steps
    steps = 0
    while k > 0:
        if k % 3 == 0:
            k //= 3
        else:
            k -= k % 3
            steps += 1
        steps += 1
    return steps


def slowest_start_below(n):
    best, arg = 0, 1
    for k in range(1, n):
        s = steps_to_zero(k)
        if s > best:
            best, arg = s, k
    return best, arg


def min_and_max_helper(v):
    lo, hi = v[0], v[0]
    for x in v:
        lo = x if x < lo else lo
        hi = x if x > hi else hi
    return lo, hi


def spread_of_rows(m, threshold):
    wide = 0
    total = 0
    for row in m:
        lo, hi = min_and_max_helper(row)
        if hi - lo > threshold:
            wide += 1
        total += hi - lo
    return wide, total


def halve_recursively(x, depth):
    if depth == 0:
        return x
    if x > 1:
        return halve_recursively(x / 2.0, depth - 1) + 1.0
    return halve_recursively(x * 3.0, depth - 1)


def recursion_inside_tensor_loop(x, n):
    acc = 0.0
    for i in range(n):
        acc += halve_recursively(x + i, 3)
    return acc


def is_even_by_mutual_recursion(k, depth):
    if depth == 0:
        return k % 2 == 0
    return is_odd_by_mutual_recursion(k, depth - 1)


def is_odd_by_mutual_recursion(k, depth):
    if depth == 0:
        return k % 2 == 1
    return is_even_by_mutual_recursion(k, depth - 1)


def mutual_recursion_in_while(n):
    count = 0
    k = 0
    while k < n:
        if is_even_by_mutual_recursion(k, 3):
            count += 1
        k += 1
    return count


@pytest.mark.parametrize("f, tensors", cases(slowest_start_below, mutual_recursion_in_while))
@pytest.mark.parametrize("n", [1, 2, 10])
def test_helpers_that_loop(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(spread_of_rows))
@pytest.mark.parametrize("threshold", [0.5, 3.0])
def test_spread_of_rows(f, threshold, tensors):
    m = np.array([[1.0, 4.0, 2.0], [0.5, 0.5, 1.0], [3.0, -1.0, 0.0]], np.float32)
    assert_equivalent(f, m, threshold, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(recursion_inside_tensor_loop))
@pytest.mark.parametrize("x, n", [(0.5, 0), (0.5, 3), (9.0, 4)])
def test_recursion_inside_tensor_loop(f, x, n, tensors):
    assert_equivalent(f, x, n, tensors=tensors)


# == print and assert inside nested tensor control flow ====================================

def print_lists_of_tensors_in_nested_loops(n):
    acc = [0, 0]
    for i in range(n):
        j = 0
        while j < i:
            if j % 2 == 0:
                acc[0] += j
            else:
                acc[1] = acc[1] + acc[0] + j
            print("i, j =", i, j, "acc:", [acc[0], acc[1]], (i, -j))
            j += 1
        if i % 2 == 1:
            print("odd row", i, sep=":", end="|\n")
    print("final", acc)
    return acc


def print_lists_of_tensors_in_nested_loops_2(v):
    # The same, but every printed element is a tensor eagerly too (derived from `v`).
    acc = [v[0] * 0, v[0] * 0]
    for x in v:
        k = x * 0
        while k < x:
            if k % 2 == 0:
                acc[0] += k
            else:
                acc[1] = acc[1] + acc[0] + k
            print("x, k =", x, k, "acc:", [acc[0], acc[1]], (x, -k), {"k": k})
            k += 1
        if x % 2 == 1:
            print("odd", x, sep=":", end="|\n")
    print("final", acc, [])
    return acc


def print_dict_and_floats_in_while(x):
    stats = {"steps": 0, "value": x}
    while stats["value"] > 1.0:
        stats["value"] = stats["value"] / 3.0
        stats["steps"] += 1
        print(stats["steps"], stats["value"], [stats["value"] * 2.0, -1.5])
    print("stats", stats["steps"], [stats["value"]], (stats["value"], "s"))
    return stats["value"]


def print_in_helper_called_in_loop(n):
    def report(tag, v):
        print(tag, "->", v, "doubled", v * 2)

    for i in range(n):
        if i % 3 == 0:
            report("fizz", i)
        elif i % 3 == 1:
            report("buzz", -i)
    return n


def assert_invariant_in_nested_loops(n):
    total = 0
    for i in range(n):
        j = i
        while j > 0:
            total += j
            j -= 1
            assert total >= j, "total below j"
        assert total >= 0
    return total


def assert_fails_deep_in_loop(n):
    total = 0
    for i in range(n):
        print("step", i, total)
        total += i
        if i > 2:
            assert total < 5, "total too large"
    return total


@pytest.mark.parametrize("f, tensors", cases(
    print_lists_of_tensors_in_nested_loops,
    print_in_helper_called_in_loop, assert_invariant_in_nested_loops))
@pytest.mark.parametrize("n", [0, 1, 4])
def test_print_and_assert_in_nested_loops(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(print_lists_of_tensors_in_nested_loops_2,
                                             modes=(True,)))
@pytest.mark.parametrize("v", [i32(1, 3, 0, 2), i32(2)])
def test_print_lists_of_tensors(f, v, tensors):
    # (numpy arguments would print as np.int32 eagerly: tensors only)
    assert_equivalent(f, v, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(print_lists_of_tensors_in_nested_loops_2))
def test_print_lists_of_tensors_from_a_list(f, tensors):
    # a Python list of numbers (Python mode) or of scalar tensors (tensor mode)
    assert_equivalent(f, [1, 3, 0, 2], tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(print_dict_and_floats_in_while))
@pytest.mark.parametrize("x", [0.5, 30.0])
def test_print_dict_and_floats(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(assert_fails_deep_in_loop))
def test_assert_fails_deep_in_loop(f, tensors):
    assert_equivalent(f, 3, tensors=tensors)
    assert_equivalent(f, 6, tensors=tensors, raises=AssertionError)


def assert_message_formats_values(x):
    i = 0
    while i < 5:
        assert x + i < 7, f"x={x} i={i} sum={x + i}"
        i += 1
    return x


def test_assert_message_shows_the_values_of_the_failing_iteration():
    assert_equivalent(assert_message_formats_values, 1)
    for fn in (assert_message_formats_values, ag.convert(assert_message_formats_values),
               ag.to_graph(assert_message_formats_values)):
        with pytest.raises(AssertionError, match="x=4 i=3 sum=7"):
            fn(rt.constant(4))


# == range with negative steps and tensor bounds; len ======================================

def countdown_by_step(start, stop, step):
    out = 0
    count = 0
    for i in range(start, stop, step):
        out = out * 3 + i
        count += 1
    return out, count


def negative_step_with_break_and_last_index(n):
    last = 100
    for i in range(n, -n, -3):
        if i * i < 2:
            break
        last = i
    return last


def nested_ranges_depending_on_outer(n):
    s = 0
    for i in range(n, 0, -1):
        for j in range(i, -1, -2):
            s += i - j
    return s


def len_of_tensor_and_grown_list(v):
    items = []
    for k in range(3):          # Python loop: a Python list
        items.append(k)
    total = 0
    for i in range(len(v) - 1, -1, -1):
        total = total * 2 + v[i] * len(items)
    return total, len(v), len(items)


def len_of_list_grown_in_tensor_loop(n):
    xs = []
    i = 0
    while i < n:
        xs.append(i * 2)
        if i % 2 == 0:
            xs.append(-i)
        i += 1
    return len(xs)


@pytest.mark.parametrize("f, tensors", cases(countdown_by_step))
@pytest.mark.parametrize("start, stop, step", [
    (10, 0, -3), (10, -1, -1), (0, 10, -2), (5, 5, -1), (-2, -11, -4), (3, 9, 2)])
def test_countdown_by_step(f, start, stop, step, tensors):
    assert_equivalent(f, start, stop, step, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(countdown_by_step))
def test_countdown_by_python_step(f, tensors):
    assert_equivalent(f, 9, -4, static(-2), tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(negative_step_with_break_and_last_index,
                                             nested_ranges_depending_on_outer,
                                             len_of_list_grown_in_tensor_loop))
@pytest.mark.parametrize("n", [0, 1, 5, 8])
def test_negative_steps_and_lengths(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(len_of_tensor_and_grown_list))
@pytest.mark.parametrize("v", [i32(1, 2, 3), i32(5)])
def test_len_of_tensor_and_grown_list(f, v, tensors):
    assert_equivalent(f, v, tensors=tensors)


# == dtype mixes, floor division and modulo with negatives =================================

def floor_div_and_mod_with_negatives(a, b, n):
    q_sum = 0
    r_sum = 0
    for i in range(n):
        x = a - i * 3
        q_sum += x // b
        r_sum += x % b
        if x % b == 0:
            q_sum -= (-x) // b
    return q_sum, r_sum


def float_mod_and_floor_div_in_while(x, m):
    steps = 0
    while x > -5.0:
        x = x - 1.75
        if x % m < 0.5:
            steps += 1
        steps += x // m
    return x, steps


def float_state_plus_int_tensor(v):
    mean = 0.0
    for i in range(len(v)):
        mean = mean + (v[i] - mean) / (i + 1)
    return mean


def int_state_incremented_by_float(n):
    x = rt.constant(1)
    i = 0
    while i < n:
        x = x + 0.5
        i += 1
    return x


@pytest.mark.parametrize("f, tensors", cases(floor_div_and_mod_with_negatives))
@pytest.mark.parametrize("a, b", [(7, 2), (7, -2), (-7, 3), (-7, -3)])
def test_floor_div_and_mod_with_negatives(f, a, b, tensors):
    assert_equivalent(f, a, b, 5, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(float_mod_and_floor_div_in_while))
@pytest.mark.parametrize("x, m", [(3.0, 2.0), (3.0, -1.5), (-4.0, 2.0)])
def test_float_mod_and_floor_div(f, x, m, tensors):
    # (not x <= -5: with zero iterations `steps` stays the int 0 eagerly but is the float
    # the body makes it in a graph loop, as README documents)
    assert_equivalent(f, x, m, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(float_state_plus_int_tensor))
def test_float_state_plus_int_tensor(f, tensors):
    assert_equivalent(f, i32(2, 4, 9, 1), tensors=tensors)


def test_int32_tensor_state_incremented_by_a_float_is_a_staging_error():
    # eagerly x becomes float32 after the first step; a graph loop variable cannot change
    # dtype (TensorFlow's AutoGraph rejects it too)
    assert assert_equivalent(int_state_incremented_by_float, 3, tensors=False) == 2.5
    with pytest.raises(ag.StagingError, match="'x'.*int32.*float32|float32.*int32"):
        ag.convert(int_state_incremented_by_float)(rt.constant(3))


# == loops that run zero times ==============================================================

def zero_trip_keeps_composite_state(n):
    d = {"a": 1, "b": 2.5}
    obj = Node(7)
    t = (1, 2)
    for i in range(n):
        d["a"] += i
        d["b"] = d["b"] * 2
        obj.value = obj.value - i
        t = (t[1], t[0] + i)
    return d, obj.value, t


def zero_trip_over_empty_slice(v, k):
    s = 100
    for x in v[k:]:
        s = s - x
    return s


def zero_trip_inner_loop_on_some_iterations(n):
    out = 0
    for i in range(n):
        for j in range(2, i):
            out += j
            last = j
    return out


@pytest.mark.parametrize("f, tensors", cases(zero_trip_keeps_composite_state,
                                             zero_trip_inner_loop_on_some_iterations))
@pytest.mark.parametrize("n", [0, 4])
def test_zero_trip_state(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(zero_trip_over_empty_slice))
@pytest.mark.parametrize("k", [0, 3])
def test_zero_trip_over_empty_slice(f, k, tensors):
    assert_equivalent(f, i32(1, 2, 3), static(k), tensors=tensors)


# == whole programs =========================================================================

def tiny_vm(code, arg):
    # opcodes: 0 halt, 1 add arg, 2 double, 3 jump back 2 if acc < 50 (and pc >= 2),
    # 4 negate if odd, 5 skip next
    pc = 0
    acc = arg
    steps = 0
    while pc < len(code):
        op = code[pc]
        steps += 1
        if steps > 40:
            acc = -1
            break
        if op == 0:
            break
        elif op == 1:
            acc += arg
        elif op == 2:
            acc = acc * 2
        elif op == 3:
            if acc < 50 and pc >= 2:
                pc -= 2
                continue
        elif op == 4:
            if acc % 2 == 1:
                acc = -acc
        else:
            pc += 2
            continue
        pc += 1
    else:
        steps = steps + 1000
    return acc, steps, pc


def run_length_longest(v):
    best = 0
    best_value = -1
    streak = 0
    for i, x in enumerate(v):
        if i > 0 and x == prev:
            streak += 1
        else:
            streak = 1
        if streak > best:
            best = streak
            best_value = x
        prev = x
    return best, best_value


def bounded_scan_with_lazy_and(v, start):
    i = start
    while 0 <= i < len(v) and v[i] > 0:
        i += 1
    return i


def binary_search(v, target):
    lo = 0
    hi = len(v) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if v[mid] == target:
            return mid
        elif v[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -(lo + 1)


def early_stopping_with_patience(losses, patience):
    state = {"best": 1e9, "wait": 0, "epoch": -1}
    for epoch, loss in enumerate(losses):
        if loss < state["best"] - 0.01:
            state["best"] = loss
            state["wait"] = 0
        else:
            state["wait"] += 1
            if state["wait"] >= patience:
                state["epoch"] = epoch
                break
    else:
        state["epoch"] = len(losses)
    return state


def top_two(v):
    first, second = v[0], v[0] - 1000
    for x in v[1:]:
        if x > first:
            first, second = x, first
        elif x > second:
            second = x
    return first, second


def prime_sum_with_for_else(n):
    total = 0
    count = 0
    k = 2
    while count < n:
        for d in range(2, k):
            if d * d > k:
                total += k
                count += 1
                break
            if k % d == 0:
                break
        else:
            total += k
            count += 1
        k += 1
    return total, k


def bisection_with_iteration_cap(target, iterations):
    lo, hi = 0.0, 10.0
    it = 0
    while it < iterations:
        mid = (lo + hi) / 2
        err = mid * mid - target
        if abs(err) < 1e-3:
            converged = True
            break
        if err > 0:
            hi = mid
        else:
            lo = mid
        it += 1
    else:
        converged = False
    return (lo + hi) / 2, it, converged


class Finder:
    def __init__(self):
        self.calls = 0
        self.last = -1

    def find(self, v, target):
        self.calls += 1
        for i, x in enumerate(v):
            if x == target:
                self.last = i
                return i
        return -1


def method_with_early_return_and_own_state(v, targets):
    finder = Finder()
    total = 0
    for t in targets:
        total += finder.find(v, t)
    return total, finder.calls, finder.last


def loop_target_reassigned_in_body(n):
    s = 0
    for i in range(n):
        i = i * 2          # does not change the next iteration
        s += i
    return s, i


def attribute_and_item_loop_targets(n):
    node = Node(0)
    d = {"k": 0}
    s = 0
    for node.value in range(n):
        s += node.value
    for d["k"] in range(n, 0, -1):
        s = s * 2 + d["k"]
    return s, node.value, d


def not_done_flag_becomes_tensor(x):
    done = False
    steps = 0
    while not done:
        x = x * 3 % 17
        steps += 1
        done = x == 1 or steps >= 20
    return x, steps


def builtins_in_loops(v):
    hi = v[0]
    lo = v[0]
    mag = 0
    for x in v:
        hi = max(hi, x)
        lo = min(lo, x)
        mag += abs(x)
    return hi, lo, mag, sum(v)


def default_argument_captures_loop_state(n):
    acc = 1
    for i in range(n):
        acc = acc * 2 + i

    def read(v=acc):
        return v + 1
    acc = acc * 100
    return read(), acc


def nested_function_returns_from_its_loop_defined_in_loop(n):
    total = 0
    for i in range(n):
        def first_multiple(k):
            j = 1
            while j < 100:
                if (j * k) % 7 == 0:
                    return j
                j += 1
            return -1
        total += first_multiple(i + 1)
    return total


def lambda_as_while_test(n):
    more = lambda k: k * k < n  # noqa: E731
    i = 0
    while more(i):
        i += 1
    return i


@pytest.mark.parametrize("f, tensors", cases(tiny_vm))
@pytest.mark.parametrize("code, arg", [
    (i32(1, 2, 0, 2), 3), (i32(1, 2, 3, 4, 0), 5), (i32(5, 2, 1, 1, 4), 1), (i32(1, 3), 2),
    (i32(2, 3), 0)])
def test_tiny_vm(f, code, arg, tensors):
    assert_equivalent(f, code, arg, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(top_two, builtins_in_loops))
@pytest.mark.parametrize("v", [i32(1, 1, 2, 2, 2, 1), i32(5), i32(3, 9, 9, -4, 9)])
def test_vector_programs(f, v, tensors):
    assert_equivalent(f, v, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(bounded_scan_with_lazy_and))
@pytest.mark.parametrize("start", [0, 2, 4, -1])
def test_bounded_scan_with_lazy_and(f, start, tensors):
    assert_equivalent(f, i32(3, 1, 5, 7), start, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(binary_search))
@pytest.mark.parametrize("target", [1, 7, 8, 20, -3])
def test_binary_search(f, target, tensors):
    assert_equivalent(f, i32(1, 3, 5, 7, 8, 13), target, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(early_stopping_with_patience))
@pytest.mark.parametrize("losses", [f32(1.0, 0.5, 0.49, 0.495, 0.6, 0.3), f32(3.0, 2.0, 1.0)])
def test_early_stopping_with_patience(f, losses, tensors):
    assert_equivalent(f, losses, 2, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(prime_sum_with_for_else))
@pytest.mark.parametrize("n", [0, 1, 6])
def test_prime_sum_with_for_else(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


@pytest.mark.parametrize("target, iterations", [(2.0, 30), (2.0, 3), (25.0, 30), (2.0, 0)])
@pytest.mark.parametrize("tensors", [False, True])
def test_bisection_with_iteration_cap(target, iterations, tensors):
    # `converged = True; break` in a tensor `if`, `converged = False` in the loop's else:
    # defined on every path that leaves the loop. The loop carries `converged` as an
    # optional value (first assigned in it); the `else` assigns it when none did.
    assert_equivalent(bisection_with_iteration_cap, target, iterations, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(
    method_with_early_return_and_own_state))
def test_method_with_early_return_and_own_state(f, tensors):
    assert_equivalent(f, i32(4, 8, 15, 16), i32(15, 3, 4), tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(
    loop_target_reassigned_in_body, attribute_and_item_loop_targets,
    default_argument_captures_loop_state,
    nested_function_returns_from_its_loop_defined_in_loop, lambda_as_while_test))
@pytest.mark.parametrize("n", [1, 6])
def test_odd_loop_shapes(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(not_done_flag_becomes_tensor))
@pytest.mark.parametrize("x", [1, 3, 0])
def test_not_done_flag_becomes_tensor(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


@pytest.mark.parametrize("f, v", [(defined_in_loop_read_in_next_iteration, 1),
                                  (defined_in_loop_read_in_next_iteration, 4),
                                  (run_length_longest, i32(1, 1, 2)),
                                  (run_length_longest, i32(2, 2, 2, 5, 5))])
@pytest.mark.parametrize("tensors", [False, True])
def test_read_in_a_later_iteration_before_the_first_assignment(f, v, tensors):
    # Python is fine (a flag or `i > 0` guards the read). In a graph loop the variable is
    # an optional value: typed from its first assignment, with a flag saying it has one
    # (TensorFlow's AutoGraph rejects it: "must be defined before the loop").
    assert_equivalent(f, v.tolist() if isinstance(v, np.ndarray) and not tensors else v,
                      tensors=tensors)


def test_read_after_a_loop_that_never_assigned_fails_as_in_python():
    assert_equivalent(defined_in_loop_read_in_next_iteration, 0, raises=UnboundLocalError)


# == lists carried through tensor loops, returns of structures =============================

def list_item_and_rotation(n):
    xs = [1, 2, 3]
    i = 0
    while i < n:
        xs[0] = xs[0] + xs[2]
        xs = xs[1:] + xs[:1]
        i += 1
    return xs


def list_comprehension_replacement(n):
    xs = [1, 2, 3]
    for i in range(n):
        xs = [x * 2 - i for x in xs]
    return xs


def while_on_length_of_grown_list(n):
    xs = [1]
    while len(xs) < n:
        xs.append(xs[-1] * 2 + len(xs))
    return rt.stack(xs)


def grown_list_read_back_in_later_loops(n):
    xs = [0, 1]
    for i in range(n):
        xs.append(xs[i] + xs[i + 1])
    s = 0
    for x in xs:
        if x % 2 == 1:
            s += x
    return s, len(xs), sum(xs)


def two_lists_one_grown_conditionally(n):
    evens = []
    everything = []
    for i in range(n):
        everything.append(i)
        if i % 2 == 0:
            evens.append(i * 10)
    return len(evens), len(everything)


def pop_until_empty_with_continue(n):
    xs = []
    for i in range(n):
        xs.append(i)
    total = 0
    while len(xs) > 0:
        x = xs.pop()
        if x % 3 == 0:
            continue
        total = total * 2 + x
    return total


def dict_returned_from_loop(n):
    for i in range(n):
        if i * i > 5:
            return {"i": i, "square": i * i}
    return {"i": -1, "square": -1}


def returns_from_python_and_tensor_loops(n):
    for k in (1, 2, 3):
        for i in range(n):
            if i * k > 4:
                return k, i
    return 0, -1


@pytest.mark.parametrize("f, tensors", cases(
    list_item_and_rotation, list_comprehension_replacement,
    while_on_length_of_grown_list, grown_list_read_back_in_later_loops,
    two_lists_one_grown_conditionally, pop_until_empty_with_continue, dict_returned_from_loop,
    returns_from_python_and_tensor_loops))
@pytest.mark.parametrize("n", [0, 1, 5])
def test_lists_and_returned_structures(f, n, tensors):
    if f is while_on_length_of_grown_list and n == 0:
        n = 1
    assert_equivalent(f, n, tensors=tensors)


# == more odd shapes: walrus, with, star-print, chained comparisons, None checks ===========

def walrus_in_if_in_loop(n):
    s = 0
    for i in range(n):
        if (y := i * 3) % 2 == 0:
            s += y
    return s, y


def tree_sum(x, depth):
    if depth == 0:
        return x
    s = 0
    for i in range(x):
        s += tree_sum(i, depth - 1)
    return s


def recursion_whose_levels_are_tensor_loops(x):
    return tree_sum(x, 3)


def return_from_for_inside_while_true(n):
    i = 0
    while True:
        for j in range(i):
            if i * j > n:
                return i, j
        i += 1


def break_inside_with_in_tensor_loop(n):
    import contextlib
    s = 0
    for i in range(n):
        with contextlib.nullcontext():
            if i > 2:
                break
            s += i
    return s


def star_print_in_loop(n):
    values = [n, n + 1, n * 2]
    for i in range(n):
        print(*values, sep=",", end=";")
        print(i, [values[0], -1.5], {"n": values[2]})
    return n


def chained_comparison_with_python_operands(n):
    c = 0
    for i in range(-2, n):
        if 0 < i < 3 <= n:
            c += 1
    return c


def none_checks_before_tensor_comparisons(v):
    best = None
    idx = None
    for i in range(3):
        if best is None:
            best = v[i]
            idx = i
        elif v[i] > best:
            best = v[i]
            idx = i
    return best, idx


def while_else_continue_and_return_in_for(n):
    for i in range(n):
        j = 0
        while j < i:
            j += 1
            if j * i == 6:
                break
        else:
            continue
        return i, j
    return -1, -1


def float_truthiness_in_while(x):
    steps = 0
    while x:
        x = x - 0.5 if x > 0 else 0.0
        steps += 1
    return steps


def nonlocal_written_in_helper_loop_called_in_if(x):
    log = 0

    def mark(k):
        nonlocal log
        for i in range(k):
            log += i

    if x > 0:
        mark(x)
    else:
        mark(-x + 1)
    return log


def closure_over_branch_result_called_in_loop(x):
    if x > 0:
        scale = 2
    else:
        scale = -3

    def f(v):
        return v * scale

    s = 0
    for i in range(x if x > 0 else -x):
        s += f(i)
    return s


def print_nested_containers(x):
    acc = [x, x * 2]
    for _ in range(2):
        acc = [acc[1], acc[0] + acc[1]]
        print({"a": [x, (x, 1.5)], "b": None, "c": "s"}, [x > 0], acc, *acc, sep=" | ")
    return acc


@pytest.mark.parametrize("f, tensors", cases(
    walrus_in_if_in_loop, recursion_whose_levels_are_tensor_loops,
    return_from_for_inside_while_true, break_inside_with_in_tensor_loop, star_print_in_loop,
    chained_comparison_with_python_operands, while_else_continue_and_return_in_for,
    nonlocal_written_in_helper_loop_called_in_if, closure_over_branch_result_called_in_loop))
@pytest.mark.parametrize("n", [2, 5])
def test_more_odd_shapes(f, n, tensors):
    assert_equivalent(f, n, tensors=tensors)
    if f in (nonlocal_written_in_helper_loop_called_in_if,
             closure_over_branch_result_called_in_loop):
        assert_equivalent(f, -n, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(none_checks_before_tensor_comparisons))
@pytest.mark.parametrize("v", [i32(1, 5, 2), i32(7, 5, 2)])
def test_none_checks_before_tensor_comparisons(f, v, tensors):
    assert_equivalent(f, v, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(float_truthiness_in_while, print_nested_containers))
@pytest.mark.parametrize("x", [2.0, 0.0, -0.5])
def test_float_values(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


# == minimal reproductions of the bugs found ================================================

def nonlocal_written_through_a_helper(n):
    total = 0

    def add(k):
        nonlocal total
        total += k

    def add_twice(k):
        add(k)
        add(k)

    for i in range(n):
        add_twice(i)
    return total


def nonlocal_written_by_recursive_closure(x):
    calls = 0

    def down(k, depth):             # a Python depth: the recursion is unrolled
        nonlocal calls
        calls += 1
        if depth == 0:
            return k
        if k > 0:
            return down(k - 1, depth - 1)
        return down(k + 1, depth - 1)

    return down(x, 2), calls


def nonlocal_written_in_while_test(n):
    calls = 0

    def more(i):
        nonlocal calls
        calls += 1
        return i < n

    i = 0
    while more(i):
        i += 1
    return calls


def nonlocal_written_in_conditional_expression(x):
    count = 0

    def mark(k):
        nonlocal count
        count += 1
        return k

    y = mark(x) if x > 0 else -x
    return y, count


def nonlocal_written_in_and_operand(x):
    count = 0

    def check(k):
        nonlocal count
        count += 1
        return k > 2

    ok = x > 0 and check(x)
    return ok, count


def nonlocal_written_in_conditional_expression_in_loop(n):
    count = 0

    def mark(k):
        nonlocal count
        count += 1
        return k

    s = 0
    for i in range(n):
        s += mark(i) if i % 2 == 0 else 0
    return s, count


def closure_called_through_a_dict(n):
    total = 0

    def add(k):
        nonlocal total
        total += k

    ops = {"add": add}
    for i in range(n):
        ops["add"](i)
    return total


def zip_python_range_with_tensor(v):
    s = 0
    for i, x in zip(range(3), v):
        s += i * x
    return s


def enumerate_index_times_float_in_branch(v):
    acc = 0.0
    for i, a in enumerate(v):
        if a > 1:
            acc += a * i
        else:
            acc -= a
    return acc


def list_first_assigned_in_loop(n):
    for i in range(n):
        pair = [i, i * 2]
    return pair


def list_returned_from_loop(n):
    for i in range(n):
        if i > 2:
            return [i, -i]
    return [0, 0]


def returned_shape_depends_on_iteration(n):
    i = 0
    while True:
        if i >= n:
            return rt.range(i)
        i += 1


def print_list_grown_in_loop(n):
    xs = []
    for i in range(n):
        xs.append(i * 2)
    print("xs", xs)
    return n


def print_loop_counter_in_list(n):
    for i in range(n):
        print([i])
    return n


def print_then_python_assert_fails(n):
    print("before the assert", n)
    assert n < 0, "n must be negative"
    return n


@pytest.mark.parametrize("f, tensors", cases(
    nonlocal_written_through_a_helper,
    nonlocal_written_by_recursive_closure,
    nonlocal_written_in_while_test,
    nonlocal_written_in_conditional_expression,     # a helper's nonlocal write in a lazy
    nonlocal_written_in_and_operand,                # operand is discovered state of its cond
    nonlocal_written_in_conditional_expression_in_loop,
    closure_called_through_a_dict,                  # the cell is found through the dict
    list_first_assigned_in_loop,
    list_returned_from_loop,
    returned_shape_depends_on_iteration,    # the loop gives the return value its shape
    print_list_grown_in_loop,               # prints the rows' values, as eager code does
    print_loop_counter_in_list))            # the counter prints as `1`, not as a tensor
def test_found_bugs(f, tensors):
    # -1 and 4: the untaken and the taken side of the bugs' conditions (4 only where -1
    # would leave a variable unassigned)
    for n in (4,) if f is list_first_assigned_in_loop else (-1, 4):
        assert_equivalent(f, n, tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(
    zip_python_range_with_tensor,
    enumerate_index_times_float_in_branch))
def test_found_bugs_over_vectors(f, tensors):
    assert_equivalent(f, f32(0.5, 2.0, 3.0), tensors=tensors)


@pytest.mark.parametrize("f, tensors", cases(print_then_python_assert_fails))
def test_prints_before_a_failing_assert(f, tensors):
    assert_equivalent(f, 3, tensors=tensors, raises=AssertionError)


# -- exact dtypes: assert_equivalent compares kinds (int/float); these compare dtypes ------

def accumulate_from(v, start):
    total = start
    for x in v:
        total += x
    return total


def float_times_range_index(x, n):
    acc = x * 0
    for i in range(n):
        acc = acc + x * i
    return acc


def _dtypes_agree(f, *args):
    eager = f(*args)
    graph = ag.convert(f)(*args)
    assert differences(eager, graph) == []
    assert graph.dtype == eager.dtype, f"graph {graph.dtype.name} != eager {eager.dtype.name}"


def _weak_case(start, dtype):
    return pytest.param(start, dtype, id=f"{start!r}-{dtype.name}")


# A loop variable that starts as a Python number is weakly typed: `0 + x` keeps x's dtype.
@pytest.mark.parametrize("start, dtype", [
    _weak_case(0, rt.int32), _weak_case(0, rt.int64), _weak_case(0.0, rt.float32),
    _weak_case(0.0, rt.float64), _weak_case(0.0, rt.int32),
    _weak_case(0, rt.float32), _weak_case(0, rt.float16),
    _weak_case(0, rt.int8), _weak_case(0, rt.uint8),
    _weak_case(0.0, rt.float16)])
def test_python_number_loop_variable_takes_the_eager_dtype(start, dtype):
    _dtypes_agree(accumulate_from, rt.constant([1, 2, 3], dtype=dtype), start)


def test_range_index_times_a_float_keeps_the_float_dtype():
    _dtypes_agree(float_times_range_index, rt.constant(1.5), rt.constant(3))
