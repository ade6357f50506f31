"""An early return in an if: a do_return flag and a return-value slot."""


def clip(x):
    if x > 10:
        return 10
    if x < 0:
        return 0
    return x
