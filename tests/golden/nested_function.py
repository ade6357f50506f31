"""A nested function's control flow is converted with the rest; closures keep working."""


def f(x):
    scale = 3

    def inner(v):
        if v > 0:
            v = v * scale
        return v

    return inner(x)
