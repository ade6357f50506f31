"""An if/else assigning one variable in both branches."""


def f(x):
    if x > 0:
        x = x * 2
    else:
        x = -x
    return x
