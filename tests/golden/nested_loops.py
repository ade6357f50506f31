"""A loop inside a loop: each becomes its own while_stmt/for_stmt."""


def triangle(n):
    count = 0
    for i in range(n):
        j = 0
        while j < i:
            count += 1
            j += 1
    return count
