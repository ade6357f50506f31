"""An if without else: the else branch keeps the state as it is."""


def f(x, y):
    if x > y:
        y = x
    return y
