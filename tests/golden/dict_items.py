"""d['k'] modified in an if is carried as state."""


def f(x):
    d = {"k": 0}
    if x > 0:
        d["k"] = x
    return d["k"]
