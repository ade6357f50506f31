"""break becomes a flag that is also part of the loop test."""


def f(n):
    i = 0
    while i < n:
        if i * i > 50:
            break
        i += 1
    return i
