"""Lambdas are converted in place: a conditional expression inside one."""


def f(x):
    g = lambda v: v * 2 if v > 0 else -v  # noqa: E731
    return g(x) + (lambda v: v + 1)(x)
