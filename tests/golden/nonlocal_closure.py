"""A nested function writing an enclosing variable through nonlocal."""


def counter(n):
    total = 0

    def add(v):
        nonlocal total
        if v > 0:
            total += v

    for i in range(n):
        add(i)
    return total
