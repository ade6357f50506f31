"""l.pop() returns the list and the element."""


def pop_two(items):
    last = items.pop()
    items.pop()
    return items, last
