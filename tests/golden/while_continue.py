"""continue becomes a flag; the rest of the body is guarded by it."""


def f(n):
    i = 0
    s = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        s += i
    return s
