"""raise marks the program's exception (a tensor `if` stages it); try notes the checks its
body adds to the graph (refused if a handler or the `finally` would miss them)."""


def checked_sqrt(x):
    try:
        if x < 0:
            raise ValueError(f"negative input {x}")
        y = x ** 0.5
    except KeyError:
        raise
    finally:
        print("checked")
    return y
