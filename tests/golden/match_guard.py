"""A capture with a guard: bound before the guard runs (and after it fails), as in Python."""


def bucket(x):
    match x:
        case n if n > 100:
            result = n // 100
        case 7:
            result = -7
        case _:
            result = 0
    return result
