"""for over range: a graph loop when the bound is a tensor."""


def sum_squares(n):
    total = 0
    for i in range(n):
        total += i * i
    return total
