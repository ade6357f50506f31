"""Temporaries used only inside a branch are not part of the state."""


def f(x):
    if x > 0:
        t = x * x
        x = t + 1
    return x
