"""The seed's nested graph functions: F2's graph calls F1's graph as one `call` op,
and both read the variable v. Graph and eager execution give the same value.

    python samples/nested_functions.py [--dump]
"""
import sys

import autograph as ag
import runtime as rt


class F1:
    @ag.convert
    def __call__(self, a, x, v):
        y = rt.matmul(a, x) + v
        return y


class F2:
    @ag.convert
    def __call__(self, v):
        a = rt.constant([[10, 10], [11., 1.]])
        x = rt.constant([[1., 0.], [0., 1.]])
        f = F1()
        y = f(a, x, v)
        print("PRINT: ", y)
        return y


def main(argv):
    if "--dump" in argv:
        print(ag.to_code(F2.__call__))
        print(ag.to_code(F1.__call__))
        return
    v = rt.Variable(12.)
    f = F2()
    t = f(v)
    print("PRINT: ", t)
    eager = rt.matmul(rt.constant([[10, 10], [11., 1.]]), rt.constant([[1., 0.], [0., 1.]])) + v
    print("eager: ", eager)
    print(F2.__call__.__get__(f).get_concrete_function(v).graph)


if __name__ == "__main__":
    main(sys.argv[1:])
