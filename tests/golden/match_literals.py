"""match with literal, OR and wildcard patterns becomes an if/elif chain."""


def classify(x):
    match x:
        case 0:
            kind = 10
        case 1 | 2:
            kind = 20
        case _:
            kind = 30
    return kind
