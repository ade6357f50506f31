"""while/else with a break: the else runs when the flag stayed unset."""


def find(n, target):
    i = 0
    found = -1
    while i < n:
        if i == target:
            found = i
            break
        i += 1
    else:
        found = -2
    return found
