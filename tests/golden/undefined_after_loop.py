"""A variable first assigned in a loop and used after it: Undefined, then checked loads."""


def last_square(n):
    for i in range(n):
        sq = i * i
    return sq
