"""A return inside a loop stops the loop (extra loop test on do_return)."""


def index_of(xs, value):
    for i in range(len(xs)):
        if xs[i] == value:
            return i
    return -1
