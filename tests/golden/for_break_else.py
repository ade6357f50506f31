"""for/else with break: the break flag is an extra loop test."""


def first_negative(xs):
    index = -1
    for i, x in enumerate(xs):
        if x < 0:
            index = i
            break
    else:
        index = len(xs)
    return index
