"""A variable first defined in both branches starts as Undefined before the if."""


def f(x):
    if x > 0:
        y = x
    else:
        y = -x
    return y * 2
