"""Chained comparisons evaluate each operand once, lazily."""


def in_range(x, lo, hi):
    return lo <= x < hi
