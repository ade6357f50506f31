"""continue in a for loop."""


def sum_odd(n):
    s = 0
    for i in range(n):
        if i % 2 == 0:
            continue
        s += i
    return s
