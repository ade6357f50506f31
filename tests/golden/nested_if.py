"""Nested ifs: the inner statement is converted first and becomes part of a branch."""


def f(x, y):
    z = 0
    if x > 0:
        if y > 0:
            z = x + y
        else:
            z = x - y
    return z
