"""FizzBuzz over a tensor bound: `for i in range(n)` with an if/elif chain of prints,
all running inside the graph (the prints happen each time the graph runs).

    python samples/fizzbuzz.py [N] [--dump]
"""
import sys

import autograph as ag
import runtime as rt


@ag.convert
def fizzbuzz(n):
    count = 0
    for i in range(1, n + 1):
        if i % 15 == 0:
            print("FizzBuzz")
        elif i % 3 == 0:
            print("Fizz")
        elif i % 5 == 0:
            print("Buzz")
        else:
            print(i)
            count += 1
    return count


def main(argv):
    if "--dump" in argv:
        print(ag.to_code(fizzbuzz))
        return
    n = int(next((a for a in argv if a.isdigit()), 15))
    plain = fizzbuzz(rt.constant(n))
    print(f"{plain} numbers were printed as themselves")


if __name__ == "__main__":
    main(sys.argv[1:])
