"""Collatz: how many steps from n to 1. A data-dependent `while` with a conditional
expression inside, converted into one graph loop.

    python samples/collatz.py [N] [--dump]
"""
import sys

import autograph as ag
import runtime as rt


@ag.convert
def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def main(argv):
    if "--dump" in argv:
        print(ag.to_code(collatz))
        return
    n = int(next((a for a in argv if a.isdigit()), 27))
    steps = collatz(rt.constant(n))
    print(f"collatz({n}) reaches 1 after {steps} steps")
    print(collatz.get_concrete_function(rt.constant(n)).graph)


if __name__ == "__main__":
    main(sys.argv[1:])
