"""A return two loops deep: both loops stop, the rest is guarded."""


def find_pair(n, target):
    for i in range(n):
        for j in range(n):
            if i * j == target:
                return i + j
    return -1
