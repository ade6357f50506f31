"""Conditional expressions become ag__.if_exp with lazy branches."""


def f(x):
    y = x * 2 if x > 0 else -x
    return y + (1 if y > 5 else 0)
