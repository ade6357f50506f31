"""Specification of the static half of statement state (static_analysis/state.py): which
plain local variables an `if`, `while` or `for` carries, declares nonlocal, leaves unset."""
import pytest

from autograph.pyct import qual_names
from autograph.pyct.static_analysis import state
from autograph.pyct.static_analysis.state import LocalState


@pytest.fixture
def local_state(analyze, stmt):
    """local_state(src, 'first line of the statement', enclosing=()) -> its LocalState."""
    def compute(src, line, enclosing=()):
        fn = analyze(src)
        return state.resolve(stmt(fn, line), state.FunctionFacts(fn, src),
                             frozenset(qual_names.QN(n) for n in enclosing))
    return compute


def test_an_if_carries_what_it_assigns_and_later_code_reads(local_state):
    assert local_state("""
        def f(x):
            if x > 0:
                x = x * 2
                t = 1
            else:
                x = -x
            return x
        """, "if x > 0:") == LocalState(outputs=("x",), nonlocals=("x",))


def test_a_variable_first_assigned_in_the_statement_starts_undefined(local_state):
    assert local_state("""
        def f(x):
            if x > 0:
                y = 1
            else:
                y = 2
            return y
        """, "if x > 0:") == LocalState(outputs=("y",), nonlocals=("y",), undefined=("y",))


def test_a_branch_reading_a_variable_first_resets_it(local_state):
    # `y` is read in the body before the branch writes it, and nothing reads it after.
    assert local_state("""
        def f(x):
            y = 0
            if x > 0:
                print(y)
                y = 1
            return x
        """, "if x > 0:") == LocalState(resets=("y",), nonlocals=("y",))


def test_a_loop_carries_what_the_next_iteration_reads(local_state):
    assert local_state("""
        def f(n):
            i = 0
            s = 0
            while i < n:
                tmp = i * 2
                s = s + tmp
                i += 1
            return s
        """, "while i < n:") == LocalState(outputs=("i", "s"), nonlocals=("i", "s"))


def test_a_for_target_is_carried_only_when_read_after_the_loop(local_state):
    src = """
        def f(xs):
            s = 0
            for x in xs:
                s = s + x
            return s, x
        """
    assert local_state(src, "for x in xs:") == LocalState(
        outputs=("s", "x"), nonlocals=("s", "x"), undefined=("x",))


def test_attributes_and_items_are_left_to_discovery(local_state):
    assert local_state("""
        def f(self, d, n):
            i = 0
            while i < n:
                self.count += i
                d['k'] = i
                i += 1
            return self.count, d
        """, "while i < n:") == LocalState(outputs=("i",), nonlocals=("i",))


def test_a_local_function_called_by_name_writes_its_nonlocals(local_state):
    assert local_state("""
        def f(n):
            total = 0
            def add(k):
                nonlocal total
                total += k
            def add_twice(k):
                add(k)
                add(k)
            for i in range(n):
                add_twice(i)
            return total
        """, "for i in range(n):") == LocalState(outputs=("total",), nonlocals=("total",))


def test_the_functions_own_nonlocals_and_globals_are_always_carried(local_state):
    assert local_state("""
        def f(x):
            global calls
            if x > 0:
                calls = calls + 1
            return x
        """, "if x > 0:") == LocalState(outputs=("calls",), globals=("calls",))


def test_a_variable_captured_by_a_lambda_stays_shared(local_state):
    # `i` is not read after the loop, but the lambdas read it late (as in Python).
    assert local_state("""
        def f(n):
            fns = []
            for i in range(n):
                fns = fns + [lambda: i]
            return fns
        """, "for i in range(n):") == LocalState(outputs=("fns",), nonlocals=("fns", "i"))


def test_a_nested_statement_carries_what_the_statement_around_it_carries(local_state):
    src = """
        def f(x, n):
            y = 0
            for i in range(n):
                if x > 0:
                    y = 1
                y = 2
            return y
        """
    # The loop reads what the `if` leaves in `y` (its state), though `y = 2` follows.
    assert local_state(src, "if x > 0:", enclosing=("y",)) == LocalState(
        outputs=("y",), nonlocals=("y",))
    assert local_state(src, "if x > 0:") == LocalState(nonlocals=("y",))


def test_names_lists_the_outputs_then_the_resets():
    local = LocalState(outputs=("a", "b"), resets=("c",))
    assert local.names == ("a", "b", "c")


def test_without_lambdas_the_defs_in_statements_are_found_by_their_blocks(analyze):
    src = """
        def f(xs):
            total = 0
            for x in xs:
                if x > 0:
                    def add(v=x):
                        return total + v + x
                    try:
                        total = add()
                    except ValueError:
                        class K:
                            def m(self):
                                return x
                while total > 10:
                    total = total // 2
            return total
        """
    fn = analyze(src)
    searched = state.FunctionFacts(fn, src, lambdas=False).captured
    walked = state.FunctionFacts(fn, src, lambdas=True).captured
    assert {k: names for k, (_, names) in searched.items()} == {
        k: names for k, (_, names) in walked.items()}
    assert sorted(len(names) for _, names in walked.values()) == [0, 3, 3]
