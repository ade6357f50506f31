"""Properties: random programs behave the same converted. Two generators:

1. Structured programs over int and float tensors (this first part).
2. Odd but legal Python on Python arguments (the second part, `odd_programs`): defaults
   holding lambdas, decorated helpers, classes and functions defined in loops, shadowed
   builtins (`print`, `range`, `len`, `super`), variables named like generated code (`ag__`,
   `loop_body`, `break_`, `retval_`) and unicode names, `global`/`nonlocal`, `match` with
   guards, walrus, try/except/finally with break/continue/return in `finally`, `with`,
   `del`, bare annotations, nested generators, `locals()`/`vars()`/`dir()`/`eval`/`exec`. Each
   either converts and behaves exactly as the original (value, printed text, type of a
   raised exception), or its conversion is refused with a ConversionError naming a line
   of its file; anything else (an internal error included) fails. 200 examples by default
   (AG_ODD_EXAMPLES), 3000 in the `slow` run (`pytest -m slow`, AG_ODD_SLOW_EXAMPLES;
   the last result is in tests/README.md).

The first generator:

A grammar generates functions `f(x, y, z)` (x, y int, z float) of nested if / elif / else,
while loops (each bounded by its own counter, so every program terminates) and for loops
over ranges, both with `else:`, break and continue at any depth, early returns (from nested
loops too), print, conditional expressions; int variables a-d and float variables p, q;
helper functions defined inside `f` (with the same statements, reading f's variables) and
called from it; and lists appended to in a loop (at any depth inside it, under ifs too),
then read with len, indexing, `rt.stack` and `for v in l`.

Programs stay inside what converts by design: every variable is assigned at the top (a
variable defined on one path only is a StagingError), ints and floats never mix in one
variable (a loop variable keeps its dtype) and floats stay float32 tensors (dyadic values,
so no rounding differs), and a list is created, grown in one tensor-bounded loop and read
right there (a list grown under a tensor `if` outside a loop is a StagingError). Each
program is written to a file and imported (conversion reads the source) and checked with
`assert_equivalent` on `rt.constant` inputs (y sometimes a Python int): same values and
same printed text, eagerly and converted.

Deterministic for CI (derandomized, no example database); AG_FUZZ_EXAMPLES=3000 runs more.
A failure prints the program; paste it into REGRESSIONS below (a compiler bug as a strict
xfail with a one-line diagnosis).
"""
import contextlib
import io
import itertools
import os
import textwrap
import traceback

import pytest
from equivalence import assert_equivalent, static
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from source_files import load

import autograph as ag

INTS = ("a", "b", "c", "d")
FLOATS = ("p", "q")
MAX_DEPTH = 3
MAX_LOOPS = 3               # per function
MAX_HELPERS = 2
MAX_LISTS = 2


class _Function:
    """The names the statements of one generated function may use, and its returns."""

    def __init__(self, ints, int_reads, floats, float_reads, returns):
        self.ints = ints                    # int variables it assigns
        self.int_reads = int_reads          # int names it reads (inputs, closures too)
        self.floats = floats
        self.float_reads = float_reads
        self.returns = returns              # atom -> an early `return` statement
        self.loops = []                     # numbers of its loops: counters k<n>, targets i<n>

    def init(self):
        return ([f"k{n} = 0" for n in self.loops] + [f"i{n} = 0" for n in self.loops])


MAIN = dict(ints=INTS, int_reads=INTS + ("x", "y"), floats=FLOATS,
            float_reads=FLOATS + ("z",),
            returns=lambda atom: f"return a, b, c, d, p, q, {atom}")
HELPER = dict(ints=("u", "v"), int_reads=("u", "v", "x", "y") + INTS, floats=(),
              float_reads=(), returns=lambda atom: f"return ({atom} + u) % 97")


class _Program:
    """Draws one program's statements; renders them as Python source."""

    def __init__(self, draw):
        self.draw = draw
        self.fn = None                      # the function being drawn
        self.loops = itertools.count(1)     # numbers loops program-wide
        self.labels = itertools.count()
        self.helpers = []                   # names of the helpers defined so far
        self.lists = 0
        self.list_name = None               # inside a list's loop: the list appended to

    def pick(self, options):
        return self.draw(st.sampled_from(options))

    # -- expressions ---------------------------------------------------------------------
    def atom(self, scope):
        if self.pick(("variable", "variable", "constant")) == "constant":
            return str(self.draw(st.integers(-3, 5)))
        return self.pick(self.fn.int_reads + scope)

    def float_atom(self):
        return self.pick(self.fn.float_reads)

    def expression(self, scope):
        ops = ["+", "-", "*", "//", "%", "if"] + ["call"] * bool(self.helpers) + [
            "from_float"] * bool(self.fn.float_reads)
        op = self.pick(tuple(ops))
        left, right = self.atom(scope), self.atom(scope)
        if op == "if":
            return f"{left} if {self.condition(scope)} else {right}"
        if op in ("//", "%"):
            return f"{left} {op} {self.draw(st.integers(1, 4))}"
        if op == "call":
            return f"{self.pick(tuple(self.helpers))}({left}, {right})"
        if op == "from_float":
            return (f"(rt.cast(rt.clip_by_value({self.float_atom()}, -50.0, 50.0), rt.int32)"
                    f" + {left}) % 97")
        return f"({left} {op} {right}) % 97"        # bounded: no int32 overflow

    def float_expression(self, scope):
        a, b = self.float_atom(), self.float_atom()
        return self.pick((
            f"{a} + {b}", f"{a} - {b}", f"{a} * 0.5", f"{a} * 2.0", f"{a} / 4.0",
            f"abs({a})", f"-{a}", f"rt.maximum({a}, {b})", f"rt.minimum({a}, 2.5)",
            f"rt.cast({self.atom(scope)}, rt.float32) * 0.5",
            f"{a} if {self.condition(scope)} else {b}"))

    def condition(self, scope, depth=0):
        kinds = ("compare", "compare", "parity", "chain") + ("float",) * bool(
            self.fn.float_reads) + (("and", "or", "not") * (depth < 1))
        kind = self.pick(kinds)
        if kind == "compare":
            op = self.pick(("<", "<=", "==", "!=", ">", ">="))
            return f"{self.atom(scope)} {op} {self.atom(scope)}"
        if kind == "float":
            right = self.pick((self.float_atom(), "0.5", "-1.0"))
            return f"{self.float_atom()} {self.pick(('<', '<=', '>', '>='))} {right}"
        if kind == "parity":
            return f"{self.atom(scope)} % 2 == 0"
        if kind == "chain":
            return f"{self.draw(st.integers(-3, 2))} < {self.atom(scope)} <= {self.atom(scope)}"
        if kind == "not":
            return f"not ({self.condition(scope, depth + 1)})"
        return f"({self.condition(scope, depth + 1)}) {kind} ({self.condition(scope, depth + 1)})"

    # -- statements ----------------------------------------------------------------------
    def block(self, depth, scope, in_loop):
        n = self.draw(st.integers(1, 3))
        return [line for _ in range(n) for line in self.statement(depth, scope, in_loop)]

    def statement(self, depth, scope, in_loop):
        kinds = ["assign", "assign", "augmented", "print", "return"]
        if self.fn.floats:
            kinds += ["float_assign"]
        if depth < MAX_DEPTH:
            kinds += ["if", "if_else", "elif"]
            if len(self.fn.loops) < MAX_LOOPS:
                kinds += ["while", "for"]
        if in_loop:
            kinds += ["break", "continue"]
        if self.list_name is not None:
            kinds += ["append"] * 3
        if (depth == 0 and self.fn.floats and self.lists < MAX_LISTS
                and len(self.fn.loops) < MAX_LOOPS):
            kinds += ["list_loop"] * 3
        kind = self.pick(tuple(kinds))
        return getattr(self, "_" + kind)(depth, scope, in_loop)

    def _assign(self, depth, scope, in_loop):
        return [f"{self.pick(self.fn.ints)} = {self.expression(scope)}"]

    def _float_assign(self, depth, scope, in_loop):
        if self.draw(st.booleans()):
            return [f"{self.pick(self.fn.floats)} += {self.float_atom()}"]
        return [f"{self.pick(self.fn.floats)} = {self.float_expression(scope)}"]

    def _augmented(self, depth, scope, in_loop):
        op = self.pick(("+=", "-="))
        return [f"{self.pick(self.fn.ints)} {op} {self.atom(scope)}"]

    def _print(self, depth, scope, in_loop):
        values = [self.atom(scope) for _ in range(self.draw(st.integers(1, 3)))]
        if self.fn.float_reads and self.draw(st.booleans()):
            values.append(self.float_atom())
        end = self.pick(("", ", end=' | '"))
        return [f"print('p{next(self.labels)}', {', '.join(values)}{end})"]

    def _return(self, depth, scope, in_loop):
        return [self.fn.returns(self.atom(scope))]

    def _break(self, depth, scope, in_loop):
        return ["break"]

    def _continue(self, depth, scope, in_loop):
        return ["continue"]

    def _append(self, depth, scope, in_loop):
        return [f"{self.list_name}.append({self.pick((self.atom(scope), self.expression(scope)))})"]

    def _if(self, depth, scope, in_loop):
        return ([f"if {self.condition(scope)}:"]
                + _indent(self.block(depth + 1, scope, in_loop)))

    def _if_else(self, depth, scope, in_loop):
        return (self._if(depth, scope, in_loop) + ["else:"]
                + _indent(self.block(depth + 1, scope, in_loop)))

    def _elif(self, depth, scope, in_loop):
        return (self._if(depth, scope, in_loop) + [f"elif {self.condition(scope)}:"]
                + _indent(self.block(depth + 1, scope, in_loop)) + ["else:"]
                + _indent(self.block(depth + 1, scope, in_loop)))

    def _new_loop(self):
        n = next(self.loops)
        self.fn.loops.append(n)
        return n

    def _while(self, depth, scope, in_loop, bound=None):
        n = self._new_loop()
        test = f"k{n} < {self.draw(st.integers(0, 3)) if bound is None else bound}"
        if self.draw(st.booleans()):
            test += f" and ({self.condition(scope)})"
        body = [f"k{n} += 1"] + self.block(depth + 1, scope, True)
        return [f"k{n} = 0", f"while {test}:"] + _indent(body) + self._else(depth, scope, in_loop)

    def _for(self, depth, scope, in_loop, bound=None):
        n = self._new_loop()
        if bound is None:
            bound = self.pick(("3", "x % 4", "y % 3", f"{self.pick(self.fn.ints)} % 3", "0"))
        body = self.block(depth + 1, scope + (f"i{n}",), True)
        return ([f"for i{n} in range({bound}):"] + _indent(body)
                + self._else(depth, scope, in_loop))

    def _else(self, depth, scope, in_loop):
        if self.draw(st.integers(0, 3)):
            return []
        list_name, self.list_name = self.list_name, None     # after the loop: no appends
        try:
            return ["else:"] + _indent(self.block(depth + 1, scope, in_loop))
        finally:
            self.list_name = list_name

    def _list_loop(self, depth, scope, in_loop):
        """A list grown in a loop over a tensor bound, then read."""
        self.lists += 1
        name = self.list_name = f"l{self.lists}"
        loop = self.pick((self._for, self._while))
        try:
            lines = [f"{name} = []"] + loop(depth, scope, in_loop, bound="1 + x % 3")
        finally:
            self.list_name = None
        for _ in range(self.draw(st.integers(1, 2))):
            target, other = self.pick(self.fn.ints), self.pick(self.fn.ints)
            lines += self.pick((
                [f"{target} = ({target} + len({name})) % 97"],
                [f"if len({name}) > 0:",
                 f"    {target} = ({other} + {name}[{self.pick(('0', '-1'))}]) % 97"],
                [f"{target} = ({target} + (rt.reduce_sum(rt.stack({name})) "
                 f"if len({name}) > 0 else 0)) % 97"],
                [f"for v in {name}:", f"    {target} = ({target} + v) % 97"]))
        return lines

    # -- functions -----------------------------------------------------------------------
    def function(self, header, names, final_return):
        """The lines of a function drawn with `names` (MAIN or HELPER)."""
        outer, self.fn = self.fn, _Function(**names)
        try:
            body = self.block(0, (), False)
            return [header] + _indent(self.fn.init() + body + [final_return])
        finally:
            self.fn = outer


def _indent(lines):
    return ["    " + line for line in lines]


@st.composite
def programs(draw):
    """The source of `def f(x, y, z)`: initializations, helpers, a random body, a return."""
    program = _Program(draw)
    init = ["a = 0", "b = 1", "c = x", "d = y", "p = z * 0.5", "q = z + 1.0"]
    helpers = []
    for k in range(1, draw(st.integers(0, MAX_HELPERS)) + 1):
        helpers += program.function(f"def h{k}(u, v):", HELPER, "return (u + v) % 97")
        program.helpers.append(f"h{k}")
    main = program.function("def f(x, y, z):", MAIN, "return a, b, c, d, p, q, 0")
    lines = ["import runtime as rt", "", "", main[0]] + _indent(init + helpers) + main[1:]
    return "\n".join(lines) + "\n"


def check(source, x, y, static_y=False, z=None):
    args = (x, static(y) if static_y else y) + (() if z is None else (z,))
    assert_equivalent(load(source), *args)


@settings(max_examples=int(os.environ.get("AG_FUZZ_EXAMPLES", 50)), deadline=None,
          derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(source=programs(), x=st.integers(-6, 6), y=st.integers(-6, 6), static_y=st.booleans(),
       z=st.sampled_from((-2.5, -1.0, -0.5, 0.0, 0.5, 1.5, 3.0)))
def test_random_programs_behave_the_same_converted(source, x, y, static_y, z):
    note(source)
    check(source, x, y, static_y, z)


# -- regressions: programs the property found, pasted as they were generated ------------

REGRESSIONS = [
    # The first program found (shrunk): a return inside nested loops.
    pytest.param("""
        def f(x, y):
            a = 0
            b = 1
            c = x
            d = y
            k1 = 0
            k2 = 0
            i1 = 0
            i2 = 0
            a = (a + a) % 97
            if a < a:
                a = (a + a) % 97
            elif (a < a) and (a < a):
                if (a < a) and (a < a):
                    if d < a:
                        a = a // 1
                    elif a < a:
                        a = (a + 0) % 97
                        a = (c + a) % 97
                    else:
                        a = (a + a) % 97
                        a = (0 + a) % 97
                    a = (a + a) % 97
                    a = (a + b) % 97
                return a, a, b, c, d
            else:
                a = (a + a) % 97
                for i1 in range(x % 4):
                    k2 = 0
                    while k2 < 0 and (a < a):
                        k2 += 1
                        return a, a, b, c, d
                        break
            a += a
            return a, b, c, d, 0
        """, 3, 2, False, None, id="return-in-nested-loops"),
    # The elif test reads 0, not the `a = 6` of the true branch (traced first), so 'p0' is
    # printed: a variable dead after an `if` is still state of its branches.
    pytest.param("""
        def f(x, y):
            a = 0
            b = 1
            c = x
            d = y
            k1 = 0
            k2 = 0
            k3 = 0
            i1 = 0
            i2 = 0
            i3 = 0
            if -2 > d:
                for i1 in range(3):
                    for i2 in range(y % 3):
                        return a, a, b, c, d
                        c = d // 1
                    return x, a, b, c, d
                    break
                k3 = 0
                while k3 < 1:
                    k3 += 1
                    a = b % 2
                    a = (4 + 2) % 97
                return d, a, b, c, d
            elif x >= a:
                print('p0', b, a)
            else:
                a = b % 1
            a = b // 3
            return a, b, c, d, 0
        """, 2, 2, False, None, id="elif-test-sees-true-branch-write"),
    # Reduced from a 66-line program: the else branch returns `a`, not the `a` the true
    # branch doubled, for the same reason.
    pytest.param("""
        def f(x, y):
            b = 1
            d = y
            c = d // 4
            for i2 in range(3):
                a = i2 // 2
            if -3 < x <= -2:
                a += a
            else:
                return 0, a, b, c, d
            a = 5 // 4
            return a, b, c, d, 0
        """, 5, -6, False, None, id="return-sees-true-branch-write"),
    # `c = (b + b) % 97` in the elif stays in its branch, though the outer `if` carries c
    # (its true branch returns c first) and the elif, where c is dead, does not.
    pytest.param("""
        def f(x, y):
            a = 0
            b = 1
            c = x
            d = y
            k1 = 0
            i1 = 0
            for i1 in range(y % 3):
                if a >= d:
                    a = 1 if 0 < b <= a else d
                    b = (i1 + c) % 97
                    if d % 2 == 0:
                        b = b // 1
                        d = c // 1
                    else:
                        c += d
                        a = (c + 1) % 97
                        c = (d + 2) % 97
                elif 2 < 2 <= a:
                    return c, a, b, c, d
                else:
                    b += y
            else:
                b = (c + b) % 97
                if a % 2 == 0:
                    if d < a:
                        b = (x + -1) % 97
                        return a, a, b, c, d
                    a = (x + 0) % 97
                    print('p0', 2)
                elif 1 < b:
                    c = (b + b) % 97
                    a -= -3
                else:
                    print('p1', y, d, end=' | ')
            print('p2', 0, b)
            c = (2 * a) % 97
            return a, b, c, d, 0
        """, 0, 3, False, None, id="nested-if-leaks-enclosing-state"),
    # (Reduced from 21 programs of the float/list grammar.) A tensor `if` inside a tensor
    # loop whose branches never append to the empty list `l1` leaves it unchanged for the
    # loop (each branch starts from a copy of it).
    pytest.param("""
        import runtime as rt


        def f(x, y, z):
            c = x
            d = y
            l1 = []
            k1 = 0
            while k1 < 1 + x % 3:
                k1 += 1
                if (c == y) or (d % 2 == 0):
                    if y <= 3:
                        l1.append(x)
            return len(l1), k1
        """, 5, 5, True, 0.5, id="unchanged-list-through-tensor-if-in-loop"),
]


@pytest.mark.parametrize("source, x, y, static_y, z", REGRESSIONS)
def test_property_regressions(source, x, y, static_y, z):
    check(textwrap.dedent(source), x, y, static_y, z)


# == odd but legal Python: every construct converted with Python's semantics =================

ODD_NAMES = ("a", "ag__", "loop_body", "break_", "retval_", "ñ", "数")   # int variables
ODD_PRELUDE = '''\
import builtins
import contextlib
import functools

G = 0


def deco(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


class Base:
    def m(self, p):
        return p * 2

'''


class _Odd:
    """Draws the statements of one odd function; `scopes` says what the innermost
    function may use: its int variables and whether it is inside a loop."""

    def __init__(self, draw):
        self.draw = draw
        self.counter = itertools.count(1)
        self.names = ODD_NAMES                 # the int variables of the current function
        self.in_loop = False
        self.in_helper = False

    def pick(self, options):
        return self.draw(st.sampled_from(options))

    def chance(self, n=2):
        return self.draw(st.integers(0, n - 1)) == 0

    # -- expressions ---------------------------------------------------------------------
    def atom(self):
        kind = self.pick(("name", "name", "name", "constant", "param"))
        if kind == "constant":
            return str(self.draw(st.integers(-3, 7)))
        if kind == "param":
            return self.pick(("x", "y", "opt(x)", "k"))
        return self.pick(self.names)

    def expression(self):
        kind = self.pick(("binary", "binary", "atom", "if", "call", "lambda", "fstring"))
        left, right = self.atom(), self.atom()
        if kind == "atom":
            return left
        if kind == "if":
            return f"({left} if {self.condition()} else {right})"
        if kind == "call":
            return self.pick((f"abs({left} - {right})", f"max({left}, {right}, 0)",
                              f"len([{left}, {right}])", f"min(({left}, {right}))"))
        if kind == "lambda":
            return f"(lambda p, d={left}: (p + d) % 97)({right})"
        if kind == "fstring":
            return f"len(f'{{{left}}}-{{{right}!r:>3}}')"
        op = self.pick(("+", "-", "*", "//", "%"))
        if op in ("//", "%"):
            return f"({left} {op} {self.draw(st.integers(1, 4))})"
        return f"(({left} {op} {right}) % 97)"

    def condition(self):
        kind = self.pick(("compare", "compare", "and", "or", "not", "chain", "in", "walrus"))
        left, right = self.atom(), self.atom()
        if kind == "compare":
            return f"{left} {self.pick(('<', '<=', '==', '!=', '>', '>='))} {right}"
        if kind == "chain":
            return f"{self.draw(st.integers(-2, 2))} < {left} <= {right}"
        if kind == "in":
            return f"{left} in ({right}, 1, 2)"
        if kind == "not":
            return f"not {left} > {right}"
        if kind == "walrus":
            return f"({self.pick(self.names)} := {self.expression()}) > {right}"
        return f"({left} > {right}) {kind} ({right} % 2 == 0)"

    # -- statements ----------------------------------------------------------------------
    def block(self, depth):
        return [line for _ in range(self.draw(st.integers(1, 3)))
                for line in self.statement(depth)]

    def statement(self, depth):
        kinds = ["assign", "assign", "augmented", "print", "raise", "locals", "eval"]
        if depth < 3:
            kinds += ["if", "if_else", "while", "for", "match", "try", "with",
                      "helper", "class_", "generator", "annotated", "del_"]
        if self.in_loop:
            kinds += ["break", "continue", "break"]
        kinds += ["return"]
        return getattr(self, "_" + self.pick(tuple(kinds)))(depth)

    def _assign(self, depth):
        return [f"{self.pick(self.names)} = {self.expression()}"]

    def _augmented(self, depth):
        return [f"{self.pick(self.names)} {self.pick(('+=', '-=', '*='))} {self.atom()}",
                f"{self.pick(self.names)} %= 97"]

    def _print(self, depth):
        values = ", ".join(self.atom() for _ in range(self.draw(st.integers(1, 3))))
        end = self.pick(("", ", end='|'", ", sep='-'"))
        return [f"print('p{next(self.counter)}', {values}{end})"]

    def _raise(self, depth):
        error = self.pick(("ValueError", "KeyError", "ZeroDivisionError"))
        return [f"if {self.condition()}:", f"    raise {error}({self.atom()})"]

    def _locals(self, depth):
        if self.in_helper:
            return [f"print(sorted(vars()))"]
        return [f"print(sorted(locals()), len(dir()))"]

    def _eval(self, depth):
        name = self.pick(self.names)
        if self.chance(3):          # a name only exec defines: in the frame's locals() dict
            return [f"exec('e{next(self.counter)} = {name} * 2')",
                    "print(sorted(locals()))"]
        return [f"{self.pick(self.names)} = eval('({name} + 1) % 97')"]

    def _return(self, depth):
        return [f"return {self.result()}"]

    def result(self):
        if self.in_helper:
            return f"({self.atom()} + p) % 97"
        return "(" + ", ".join(self.names) + ")"

    def _break(self, depth):
        return ["break"]

    def _continue(self, depth):
        return ["continue"]

    def _if(self, depth):
        return [f"if {self.condition()}:"] + _indent(self.block(depth + 1))

    def _if_else(self, depth):
        lines = self._if(depth)
        if self.chance():
            lines += [f"elif {self.condition()}:"] + _indent(self.block(depth + 1))
        return lines + ["else:"] + _indent(self.block(depth + 1))

    def _loop_body(self, depth):
        in_loop, self.in_loop = self.in_loop, True
        try:
            return self.block(depth + 1)
        finally:
            self.in_loop = in_loop

    def _loop_else(self, depth):
        return ["else:"] + _indent(self.block(depth + 1)) if self.chance(3) else []

    def _while(self, depth):
        n = next(self.counter)
        test = f"k{n} < {self.draw(st.integers(0, 3))}"
        if self.chance():
            test += f" and ({self.condition()})"
        return ([f"k{n} = 0", f"while {test}:", f"    k{n} += 1"]
                + _indent(self._loop_body(depth)) + self._loop_else(depth))

    def _for(self, depth):
        n = next(self.counter)
        target, iterable = self.pick((
            (f"i{n}", f"range({self.draw(st.integers(0, 3))})"),
            (f"i{n}", f"[{self.atom()}, {self.atom()}]"),
            (f"i{n}, j{n}", f"enumerate(range(x % 3 + 1))"),
            (f"i{n}, j{n}", f"zip(range(3), 'abc')"),
            (f"{self.pick(self.names)}", "range(2)")))
        return ([f"for {target} in {iterable}:"] + _indent(self._loop_body(depth))
                + self._loop_else(depth))

    def _match(self, depth):
        n = next(self.counter)
        body = lambda: _indent(_indent(self.block(depth + 2)))         # noqa: E731
        cases = self.pick((
            [f"case 0 | 1:", f"case {self.draw(st.integers(2, 4))} as m{n}:",
             f"case c{n} if c{n} > {self.draw(st.integers(-1, 5))}:"],
            [f"case c{n} if c{n} % 2 == 0:", f"case {self.draw(st.integers(-1, 5))}:"],
            [f"case ({self.draw(st.integers(0, 3))} | 5) as m{n} if m{n} > 3:",
             f"case -1:"]))
        lines = [f"match {self.atom()}:"]
        for case in cases:
            lines += ["    " + case] + body()
        lines += ["    case _:"]
        if cases[0].startswith("case c"):       # bound even when its guard failed
            lines += [f"        {self.pick(self.names)} = c{n}"]
        return lines + body()

    def _try(self, depth):
        lines = ["try:"] + _indent(self.block(depth + 1))
        if self.chance():
            lines += ["except (ValueError, KeyError) as e:"] + _indent(
                [f"print('caught', type(e).__name__)"] + self.block(depth + 1))
        lines += ["finally:"] + _indent(self.block(depth + 1))
        if self.in_loop and self.chance():
            lines += ["    " + self.pick(("break", "continue"))]
        elif self.chance(3):
            lines += [f"    return {self.result()}"]
        return lines

    def _with(self, depth):
        return ["with contextlib.nullcontext(" + self.atom() + ") as w:"] + _indent(
            [f"{self.pick(self.names)} = w"] + self.block(depth + 1))

    def _annotated(self, depth):
        n = next(self.counter)
        return [f"t{n}: int", "try:", f"    print(t{n})", "except NameError as e:",
                "    print(type(e).__name__)"]

    def _del(self, depth):
        name = self.pick(self.names)
        return [f"del {name}", f"{name} = {self.atom()}"]

    _del_ = _del

    def _helper(self, depth):
        """A nested def with odd defaults, decorated, maybe nonlocal/global, called."""
        n = next(self.counter)
        outer = self.pick(self.names)
        header = self.pick((f"def h{n}(p, q=lambda: {self.atom()}, *, r=[lambda s: s + 1]):",
                            f"def h{n}(p, q=lambda: 3, *, r=[lambda s: s]) -> (lambda: int)():"))
        decorator = self.pick(("@deco", "@(lambda fn: fn)", ""))
        outer = self.pick(tuple(n for n in self.names if n != "p"))
        declared = self.pick(([f"nonlocal {outer}"], ["global G", "G += 1"], []))
        names, in_loop, in_helper = self.names, self.in_loop, self.in_helper
        own = ("p", "u", "v") + ((outer,) if declared[:1] == [f"nonlocal {outer}"] else ())
        self.names, self.in_loop, self.in_helper = own, False, True
        try:
            doc = ["f'doc of h'"] if self.chance() else []
            body = (doc + declared + ["u = p", "v = 1"] + self.block(depth + 1)
                    + [f"return (p + q() + r[0](1)) % 97"])
        finally:
            self.names, self.in_loop, self.in_helper = names, in_loop, in_helper
        call = f"{self.pick(self.names)} = h{n}({self.atom()}) if h{n}.__doc__ is None else -1"
        return ([decorator] if decorator else []) + [header] + _indent(body) + [call]

    def _class_(self, depth):
        n = next(self.counter)
        return [f"class K{n}(Base):", f"    attr = {self.atom()}",
                "    def m(self, p):",
                "        return (super().m(p) + self.attr) % 97",
                f"{self.pick(self.names)} = K{n}().m({self.atom()})"]

    def _generator(self, depth):
        n = next(self.counter)
        return [f"def gen{n}(m):", "    for i in range(m):",
                f"        if i % 2 == {self.draw(st.integers(0, 1))}:",
                f"            yield i + {self.atom()}", "        else:", "            continue",
                f"{self.pick(self.names)} = sum(gen{n}({self.draw(st.integers(0, 4))})) % 97"]


@st.composite
def odd_programs(draw):
    """The source of `def f(x, y, opt=..., *, k=...)` in a module with helpers."""
    program = _Odd(draw)
    prelude = []
    shadows = ("print", "range", "len", "super", "global")
    for shadow in draw(st.lists(st.sampled_from(shadows), unique=True, max_size=2)):
        prelude += {
            "print": ["def print(*values, **kwargs):",
                      "    builtins.print('|', *values, **kwargs)"],
            "range": ["range = lambda *bounds: builtins.range(*bounds)[:2]"],
            "len": ["len = lambda s: builtins.len(s) + 100"],
            "super": ["super = lambda *args: Base()"],
            "global": ["global G", "G = (G + x) % 97"],
        }[shadow]
    init = [f"{name} = {i}" for i, name in enumerate(ODD_NAMES)]
    body = program.block(0)
    lines = (["def f(x, y, opt=lambda z: z + 1, *, k=(lambda: 2)()):"]
             + _indent(prelude + init + body + [f"return {program.result()}, G"]))
    return ODD_PRELUDE + "\n" + "\n".join(lines) + "\n"


class _Run:
    """What one call gave: a result or an exception, and the text it printed."""

    def __init__(self, fn, args):
        out = io.StringIO()
        self.result = self.error = None
        with contextlib.redirect_stdout(out):
            try:
                self.result = fn(*args)
            except Exception as e:          # noqa: BLE001 - compared by the caller
                self.error = e
        self.stdout = out.getvalue()

    def describe(self):
        if self.error is not None:
            return "".join(traceback.format_exception(self.error)) + f"printed {self.stdout!r}"
        return f"returned {self.result!r}, printed {self.stdout!r}"


def check_odd(source, x, y):
    """The function converts and behaves as the original on (x, y) (value, printed text,
    exception type), or conversion is refused with a ConversionError naming a line of
    its file. Each run gets its module afresh (the programs change a global)."""
    path_of = {}

    def fresh():
        fn = load(source)
        path_of["file"] = fn.__code__.co_filename
        return fn

    eager = _Run(fresh(), (x, y))
    fn = fresh()
    try:
        converted = ag.to_graph(fn)
    except ag.ConversionError as e:
        assert f"{path_of['file']}:" in str(e), f"the refusal names no line: {e}"
        event(f"refused: {str(e).split('(')[0][:40]}")
        return
    got = _Run(converted, (x, y))
    problems = []
    if eager.error is not None or got.error is not None:
        if not (eager.error is not None and isinstance(got.error, type(eager.error))):
            problems.append("different exceptions")
    elif type(eager.result) is not type(got.result) or eager.result != got.result:
        problems.append("different results")
    if eager.stdout != got.stdout:
        problems.append("different printed text")
    assert not problems, "\n".join(problems + ["--- eager: " + eager.describe(),
                                               "--- converted: " + got.describe()])
    event("raised" if eager.error is not None else "returned")


ODD_SETTINGS = dict(deadline=None, database=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.data_too_large])


@settings(max_examples=int(os.environ.get("AG_ODD_EXAMPLES", 200)), derandomize=True,
          **ODD_SETTINGS)
@given(source=odd_programs(), x=st.integers(-3, 5), y=st.integers(-3, 5))
def test_odd_but_legal_functions_behave_as_python(source, x, y):
    note(source)
    check_odd(source, x, y)


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("AG_ODD_SLOW_EXAMPLES", 3000)), **ODD_SETTINGS)
@given(source=odd_programs(), x=st.integers(-3, 5), y=st.integers(-3, 5))
def test_odd_but_legal_functions_behave_as_python_slow(source, x, y):
    note(source)
    check_odd(source, x, y)
