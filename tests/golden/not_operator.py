"""not becomes ag__.not_, a logical_not for tensors."""


def f(x):
    if not x > 0:
        x = -x
    return x
