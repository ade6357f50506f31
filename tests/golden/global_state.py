"""A global written inside a branch is declared global in the branch function."""
CALLS = 0


def f(x):
    global CALLS
    if x > 0:
        CALLS = CALLS + 1
    return x
