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
