"""Equivalence of converted `match` statements: literal, value, capture, wildcard, OR and
guard patterns, on tensor and Python subjects. (Python >= 3.10: conftest.py skips this
file on older versions, which cannot even parse it.)"""
import pytest
from equivalence import assert_equivalent, cases


class Codes:
    ZERO = 0
    ANSWER = 42


def literals(x):
    match x:
        case 0:
            y = 100
        case 1:
            y = 200
        case -4:
            y = 300
        case _:
            y = x
    return y


def values(x):
    match x:
        case Codes.ZERO:
            return "zero"
        case Codes.ANSWER:
            return "answer"
    return "other"


def value_to_number(x):
    match x:
        case Codes.ZERO:
            r = 10
        case Codes.ANSWER:
            r = 20
        case _:
            r = 30
    return r


def or_patterns(x):
    match x:
        case 1 | 2 | 3:
            r = 1
        case 0 | 42:
            r = 2
        case _:
            r = 3
    return r


def guards(x):
    match x:
        case n if n < 0:
            r = -n
        case 0:
            r = 1000
        case n if n % 2 == 0:
            r = n // 2
        case n:
            r = n * 3 + 1
    return r


def as_pattern(x):
    match x:
        case (1 | 2) as small:
            r = small * 10
        case big if big > 5:
            r = big
        case _:
            r = -1
    return r


def match_with_return(x):
    match x:
        case 0:
            return 0
        case n if n > 0:
            total = 0
            for i in range(n):
                total += i
            return total
        case _:
            return -1


def capture_in_loop(n):
    i = 0
    s = 0
    while i < n:
        match i % 3:
            case 0:
                s += 1
            case 1:
                s += 10
            case _:
                s += 100
        i += 1
    return s


def print_in_cases(x):
    match x:
        case 0:
            print("zero")
        case n if n > 0:
            print("positive", n)
        case _:
            print("negative")
    return x


@pytest.mark.parametrize("f, tensors", cases(literals, value_to_number, or_patterns, guards,
                                             as_pattern, match_with_return, print_in_cases))
@pytest.mark.parametrize("x", [-4, 0, 1, 2, 3, 7, 42])
def test_match(f, x, tensors):
    assert_equivalent(f, x, tensors=tensors)


@pytest.mark.parametrize("x", [0, 42, 5])
def test_match_returning_python_strings(x):
    assert_equivalent(values, x, tensors=False)


@pytest.mark.parametrize("n", [0, 5])
def test_match_in_tensor_loop(n, tensors):
    assert_equivalent(capture_in_loop, n, tensors=tensors)


# A pattern that matched binds its names before the guard runs: they stay bound when the
# guard fails (Python's order), as does a name a guard's walrus binds.

def capture_read_after_failed_guard(x):
    match x:
        case n if n > 100:
            return 1
        case _:
            return n


def as_capture_read_after_failed_guard(x):
    seen = -1
    match x:
        case (1 | 2) as small if small > 1:
            return 10
        case 3 as three if three < 0:
            return 20
        case _:
            if x in (1, 3):
                seen = small if x == 1 else three
    return seen


def walrus_in_guard(x):
    match x:
        case 1 if (w := x * 2) > 10:
            return 1
        case _:
            result = w if x == 1 else -1
    return result


@pytest.mark.parametrize("f", [capture_read_after_failed_guard,
                               as_capture_read_after_failed_guard, walrus_in_guard])
@pytest.mark.parametrize("x", [1, 2, 3, 200])
def test_names_bound_by_a_case_whose_guard_failed(f, x):
    assert_equivalent(f, x, tensors=False)


@pytest.mark.parametrize("x", [1, 2, 3, 200])
def test_capture_bound_before_its_guard_with_tensor_subjects(x):
    assert_equivalent(capture_read_after_failed_guard, x, tensors=True)
