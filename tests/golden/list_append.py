"""l.append(x) becomes an assignment, so the list is loop state."""


def squares(n):
    out = []
    for i in range(n):
        out.append(i * i)
    return out
