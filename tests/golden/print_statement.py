"""print is a call like any other; converted_call maps it to rt.print in graphs."""


def f(x):
    print("x =", x)
    if x > 0:
        print("positive", x, sep=", ")
    return x
