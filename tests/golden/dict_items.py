"""d['k'] modified in an if: no variable is carried; the item is discovered when traced."""


def f(x):
    d = {"k": 0}
    if x > 0:
        d["k"] = x
    return d["k"]
