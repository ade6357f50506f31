"""and/or keep their laziness: the right side is a lambda."""


def f(x, y):
    both = x > 0 and y > 0
    either = x > 0 or y > 0 or x == y
    return both, either
