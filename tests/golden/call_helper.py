"""Calls go through ag__.converted_call, which converts user functions recursively."""


def square(x):
    return x * x


def f(x):
    return square(x) + abs(x)
