"""try inside an if gets a check that fails when the if is a tensor if."""


def f(x):
    if x > 0:
        try:
            x = x + 1
        except ValueError:
            x = 0
    return x
