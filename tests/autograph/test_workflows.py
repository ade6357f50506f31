"""Inspection and deployment workflows as a user runs them: the command line on the user's own
files (--dump, --graph with --args), converted functions saved with rt.saved and loaded back
(here and in a fresh process), rt.viz.to_dot pictures of converted control flow, and
ag.to_code."""
import ast
import importlib.util
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import autograph as ag
import runtime as rt
from autograph.__main__ import main
from runtime.saved import SaveError

HAS_DOT = shutil.which("dot") is not None


def write(directory, name, source):
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def cli(capsys, *argv):
    """(exit code, stdout, stderr) of the command line run in this process."""
    capsys.readouterr()
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def dumped(out):
    """{qualified name: generated code} from --dump output, in order."""
    parts = re.split(r"^# (\S+)\n", out, flags=re.M)
    assert parts[0] == ""
    return dict(zip(parts[1::2], parts[2::2]))


def dump_names(capsys, target):
    """The qualified names --dump shows for `target`, which must succeed."""
    code, out, err = cli(capsys, target, "--dump")
    assert code == 0, err
    return list(dumped(out))


def import_file(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# -- the command line on user files ---------------------------------------------------------

PROGRAM = '''\
import autograph as ag
import runtime as rt


class Model:
    def __init__(self):
        self.k = 2

    @ag.convert
    def step(self, x):
        if x > 0:
            y = x * self.k
        else:
            y = -x
        return y

    class Inner:
        def go(self, x):
            while x < 3:
                x += 1
            return x


@ag.convert
def outer(x):
    def inner(y):
        if y > 1:
            return y * 2
        return y
    return inner(x)


absval = ag.convert(lambda x: x if x > 0 else -x)

CONST = 5


def plain(x):
    for i in range(3):
        x = x + i
    return x


if __name__ == "__main__":
    print("MAIN BLOCK RAN")
    raise SystemExit(7)
'''


def test_dump_shows_methods_nested_functions_and_lambdas_as_valid_python(tmp_path, capsys):
    src = write(tmp_path, "wf_program.py", PROGRAM)
    code, out, err = cli(capsys, src, "--dump")
    assert code == 0, err
    assert "MAIN BLOCK RAN" not in out + err          # the __main__ block does not run
    functions = dumped(out)
    assert list(functions) == ["Model.step", "outer", "absval"]
    for name, text in functions.items():
        ast.parse(text)                               # every dump is Python
    assert functions["Model.step"].startswith("def ag__step(self, x):")
    assert "ag__.if_stmt(x > 0" in functions["Model.step"]
    inner = functions["outer"]                        # the nested function is converted too
    assert "    def inner(y):" in inner and "ag__.if_stmt(y > 1" in inner
    assert functions["absval"].startswith("lambda x: ag__.if_exp(x > 0")


@pytest.mark.parametrize("qualname, start", [
    ("Model.step", "def ag__step(self, x):"),
    ("Model.Inner.go", "def ag__go(self, x):"),       # a method of a nested class
    ("plain", "def ag__plain(x):"),                   # not decorated: converted for the dump
    ("absval", "lambda x:"),
])
def test_dump_by_qualified_name(tmp_path, capsys, qualname, start):
    src = write(tmp_path, "wf_program_q.py", PROGRAM)
    code, out, err = cli(capsys, f"{src}::{qualname}", "--dump")
    assert code == 0, err
    assert out.startswith(f"# {qualname}\n{start}")
    ast.parse(out)


@pytest.mark.parametrize("suffix, message", [
    ("::nope", "no function named 'nope'"),
    ("::Model.nope", "no function named 'Model.nope'"),
    ("::outer.inner", "no function named 'outer.inner'"),
    ("::CONST", "'CONST' in"),
    ("::rt", "'rt' in"),
    ("::Model", "'Model' in"),                       # a class: 'is not a function'
])
def test_unknown_or_unsuitable_names_are_a_one_line_error_exit_2(tmp_path, capsys, suffix,
                                                                 message):
    src = write(tmp_path, "wf_program_bad.py", PROGRAM)
    code, out, err = cli(capsys, f"{src}{suffix}", "--dump")
    assert (code, out) == (2, "")
    assert err.startswith("autograph: error: ") and message in err and err.count("\n") == 1


@pytest.mark.parametrize("make", [
    lambda tmp: tmp / "missing.py",
    lambda tmp: tmp / "missing_dir" / "prog.py",
    lambda tmp: tmp,                                  # a directory
    lambda tmp: write(tmp, "notes.txt", "x = 1\n"),
], ids=["missing-file", "missing-directory", "a-directory", "not-a-py-file"])
def test_files_that_cannot_be_loaded_are_a_one_line_error_exit_2(tmp_path, capsys, make):
    code, out, err = cli(capsys, make(tmp_path), "--dump")
    assert (code, out) == (2, "")
    assert err.startswith("autograph: error: ") and err.count("\n") == 1


def test_sibling_modules_imported_at_module_level(tmp_path, capsys):
    write(tmp_path, "wf_sibling_helper.py", """\
        def double(x):
            return x * 2
        """)
    src = write(tmp_path, "wf_sibling_user.py", """\
        import autograph as ag
        import wf_sibling_helper
        from wf_sibling_helper import double

        @ag.convert
        def f(x):
            if x > 0:
                x = wf_sibling_helper.double(x)
            return double(x)
        """)
    code, out, err = cli(capsys, f"{src}::f", "--dump", "--graph", "--args", "[3]")
    assert code == 0, err
    assert "ag__.converted_call(wf_sibling_helper.double, (x,), None)" in out
    assert "multiply" in out and "wf_sibling_helper.py:2" in out and "wf_sibling_user.py:7" in out


# the import runs while --graph traces, and finds the module as `python FILE.py` does
def test_sibling_module_imported_inside_the_function_when_traced(tmp_path, capsys):
    write(tmp_path, "wf_lazy_helper.py", "def double(x):\n    return x * 2\n")
    src = write(tmp_path, "wf_lazy_user.py", """\
        import autograph as ag

        @ag.convert
        def f(x):
            import wf_lazy_helper
            if x > 0:
                x = wf_lazy_helper.double(x)
            return x
        """)
    code, out, err = cli(capsys, f"{src}::f", "--graph", "--args", "[3]")
    assert code == 0, err
    assert "multiply" in out and "wf_lazy_helper.py:2" in out, out


# a file beside an __init__.py is imported as part of its package
def test_a_package_file_with_relative_imports(tmp_path, capsys):
    write(tmp_path, "wf_relpkg/__init__.py", "")
    write(tmp_path, "wf_relpkg/helper.py", "def double(x):\n    return x * 2\n")
    src = write(tmp_path, "wf_relpkg/model.py", """\
        import autograph as ag
        from .helper import double

        @ag.convert
        def f(x):
            if x > 0:
                x = double(x)
            return x
        """)
    assert dump_names(capsys, src) == ["f"]


def test_a_file_with_a_syntax_error_is_a_one_line_error(tmp_path, capsys):
    src = write(tmp_path, "wf_syntax.py", "import autograph as ag\n\n@ag.convert\n"
                                          "def f(x)\n    return x\n")
    code, out, err = cli(capsys, src, "--dump")
    assert code in (1, 2) and out == ""
    assert err.startswith("autograph: error: ") and err.count("\n") == 1
    assert "wf_syntax.py" in err and "4" in err


@pytest.mark.parametrize("exception", [
    "RuntimeError",
    "ValueError",
])
def test_a_file_that_raises_at_import_names_the_file(tmp_path, capsys, exception):
    src = write(tmp_path, f"wf_raises_{exception}.py",
                f"import autograph as ag\nraise {exception}('bad config')\n")
    code, out, err = cli(capsys, src, "--dump")
    assert code in (1, 2) and out == ""
    assert "bad config" in err and f"wf_raises_{exception}.py" in err
    assert "Traceback" not in err


STATIC = '''\
import autograph as ag


class Model:
    @staticmethod
    @ag.convert
    def stat(x):
        while x < 10:
            x = x + 1
        return x

    @ag.convert
    @classmethod
    def build(cls, x):
        return x + 1

    @ag.convert
    def step(self, x):
        return x * 2
'''


def test_dump_lists_converted_static_and_class_methods(tmp_path, capsys):
    src = write(tmp_path, "wf_static_dump.py", STATIC)
    assert dump_names(capsys, src) == ["Model.stat", "Model.build", "Model.step"]


# a staticmethod is called without an instance
def test_graph_of_a_static_method(tmp_path, capsys):
    src = write(tmp_path, "wf_static_graph.py", STATIC)
    code, out, err = cli(capsys, f"{src}::Model.stat", "--graph", "--args", "[3]")
    assert code == 0, err
    assert out.startswith("graph stat(x: i32[]) {") and "while" in out


def test_an_inherited_method_by_qualified_name(tmp_path, capsys):
    src = write(tmp_path, "wf_inherit.py", """\
        import autograph as ag

        class Base:
            scale = 2

            @ag.convert
            def step(self, x):
                if x > 0:
                    return x * self.scale
                return x

        class Child(Base):
            scale = 5
        """)
    code, out, err = cli(capsys, f"{src}::Child.step", "--graph", "--args", "[2]")
    assert code == 0, err
    assert "const[value=5]" in out                    # traced on Child()


def test_dump_without_a_name_skips_what_is_not_converted(tmp_path, capsys):
    src = write(tmp_path, "wf_none_converted.py", "def f(x):\n    return x\n")
    code, out, err = cli(capsys, src, "--dump")
    assert (code, out) == (2, "")
    assert "no function in" in err and "::NAME" in err and err.count("\n") == 1


# a converted function imported from another module is not the file's (and does not make a
# bare --graph ambiguous)
def test_dump_lists_only_the_functions_of_the_file(tmp_path, capsys):
    write(tmp_path, "wf_lib_converted.py", """\
        import autograph as ag

        @ag.convert
        def libfn(x):
            return x + 1
        """)
    src = write(tmp_path, "wf_imports_converted.py", """\
        import autograph as ag
        from wf_lib_converted import libfn

        @ag.convert
        def mine(x):
            return libfn(x)
        """)
    assert dump_names(capsys, src) == ["mine"]


def test_dump_lists_an_aliased_function_once(tmp_path, capsys):
    src = write(tmp_path, "wf_alias.py", """\
        import autograph as ag

        @ag.convert
        def mine(x):
            return x + 1

        alias = mine
        """)
    assert dump_names(capsys, src) == ["mine"]


UNICODE = '''\
import autograph as ag


@ag.convert
def größe(wert, 名前="ü"):
    """Doc with ünïcode — and "quotes" and a \\\\ backslash."""
    if wert > 0:
        print("positiv ✓", 名前, "tab\\there \\"q\\" 'x' \\\\n")
        résultat = wert * 2
    else:
        résultat = -wert
    return résultat


@ag.convert
def long_line(x):
    weights = [LONG_LIST]; label = "LONG_TEXT"
    y = x + weights[-1] + len(label)
    if x > 0 and x < 100 and LONG_AND:
        y = y * 2
    return y
'''.replace("LONG_LIST", ", ".join(map(str, range(600)))).replace("LONG_TEXT", "é" * 3000).replace(
    "LONG_AND", " and ".join(f"x != {i}" for i in range(5, 14)))


def test_unicode_identifiers_and_strings_and_very_long_lines(tmp_path, capsys):
    src = write(tmp_path, "wf_unicode.py", UNICODE)
    code, out, err = cli(capsys, src, "--dump")
    assert code == 0, err
    functions = dumped(out)
    assert list(functions) == ["größe", "long_line"]
    tree = ast.parse(functions["größe"])
    docstring = 'Doc with ünïcode — and "quotes" and a \\ backslash.'
    assert ast.get_docstring(tree.body[0]) == docstring
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
    assert {"positiv ✓", "tab\there \"q\" 'x' \\n", "ü", "résultat"} <= strings
    assert max(map(len, functions["long_line"].splitlines())) > 2000
    ast.parse(functions["long_line"])

    code, out, err = cli(capsys, f"{src}::größe", "--graph", "--args", "[3]")
    assert code == 0, err
    assert out.startswith("graph größe(wert: i32[]) {") and "'positiv ✓', 'ü'" in out
    code, out, err = cli(capsys, f"{src}::long_line", "--graph", "--args", "[1]")
    assert code == 0, err
    assert "const[value=599]" in out and "const[value=3000]" in out
    assert "wf_unicode.py:18" in out and "wf_unicode.py:19" in out


# Python compiles and runs a few hundred chained operators: a conversion or a one-line
# ConversionError, never a RecursionError traceback
def test_a_long_chained_expression(tmp_path, capsys):
    terms = " + ".join(str(i) for i in range(1, 400))
    src = write(tmp_path, "wf_long_expression.py",
                f"import autograph as ag\n\n@ag.convert\ndef f(x):\n    return x + {terms}\n")
    code, out, err = cli(capsys, src, "--dump")
    if code == 0:
        ast.parse(dumped(out)["f"])
    else:
        assert err.startswith("autograph: error: ") and err.count("\n") == 1
        assert "wf_long_expression.py:5" in err


ARGS_PROGRAM = '''\
def show(x, extra=None):
    if extra is None:
        return x
    return x, extra
'''


@pytest.mark.parametrize("literal, header", [
    ("[27]", "x: i32[]"),
    ("[-3]", "x: i32[]"),
    ("[1.5]", "x: f32[]"),
    ("[True]", "x: bool[]"),
    ("[[1, 2]]", "x: i32[2]"),
    ("[[1, 2.5]]", "x: f32[2]"),
    ("[[[1.0], [2.0]]]", "x: f32[2,1]"),
    ("[[True, False]]", "x: bool[2]"),
    ("[[]]", "x: f32[0]"),
    ("[1, 2]", "x: i32[], extra: i32[]"),     # a number for each argument becomes a tensor
])
def test_args_numbers_bools_and_lists_become_tensors(tmp_path, capsys, literal, header):
    src = write(tmp_path, "wf_args.py", ARGS_PROGRAM)
    code, out, err = cli(capsys, f"{src}::show", "--graph", "--args", literal)
    assert code == 0, err
    assert out.startswith(f"graph show({header}) {{")


@pytest.mark.parametrize("literal", ["[[1, 2], 'mode']", "[[1, 2], None]", "[[1, 2], (7, 'a')]",
                                     "[[1, 2], {'k': 7}]", "[[1, 2], 1j]"])
def test_args_strings_none_tuples_and_dicts_stay_python_values(tmp_path, capsys, literal):
    src = write(tmp_path, "wf_args_py.py", ARGS_PROGRAM)
    code, out, err = cli(capsys, f"{src}::show", "--graph", "--args", literal)
    assert code == 0, err
    assert out.startswith("graph show(x: i32[2]) {")   # the Python value is no input
    if "7" in literal:
        assert "const[value=7]" in out               # but a returned number is a constant


def test_graph_of_a_function_with_an_input_signature_needs_no_args(tmp_path, capsys):
    src = write(tmp_path, "wf_signature.py", """\
        import autograph as ag
        import runtime as rt

        @ag.convert(input_signature=[rt.TensorSpec([None], rt.float32)])
        def total(x):
            s = 0.0
            for v in x:
                s += v
            return s
        """)
    code, out, err = cli(capsys, src, "--graph")
    assert code == 0, err
    assert out.startswith("graph total(x: f32[?]) {")
    code, out, err = cli(capsys, src, "--graph", "--args", "[[1, 2]]")
    assert code == 1 and "does not match the input_signature" in err and err.count("\n") == 1


# the lambda's line, not its caller's (<frozen runpy> under the CLI)
def test_ops_of_a_converted_lambda_point_at_the_lambda(tmp_path, capsys):
    src = write(tmp_path, "wf_lambda_origin.py", """\
        import autograph as ag

        absval = ag.convert(lambda x: x if x > 0 else -x)
        """)
    code, out, err = cli(capsys, f"{src}::absval", "--graph", "--args", "[3]")
    assert code == 0, err
    origins = re.findall(r"# (\S+)$", out, flags=re.M)
    assert origins and set(origins) == {"wf_lambda_origin.py:3"}


def test_the_dot_file_of_the_graph_is_written(tmp_path, capsys):
    src = write(tmp_path, "wf_program_dot.py", PROGRAM)
    out_file = tmp_path / "step.dot"
    code, out, err = cli(capsys, f"{src}::Model.step", "--graph", out_file, "--args", "[2]")
    assert code == 0, err
    assert out == f"wrote {out_file}\n"
    assert dot_problems(out_file.read_text()) == []


@pytest.mark.parametrize("name", [
    "no_dir/g.dot",                                  # a missing directory
    # an extension dot cannot draw
    pytest.param("g.txt", marks=pytest.mark.skipif(not HAS_DOT,
                                                   reason="Graphviz's dot is not installed")),
])
def test_an_output_the_graph_cannot_be_written_to_is_a_one_line_error(tmp_path, capsys, name):
    code, out, err = cli(capsys, f"{write(tmp_path, 'wf_out.py', ARGS_PROGRAM)}::show",
                         "--graph", tmp_path / name, "--args", "[1]")
    assert code in (1, 2) and out == ""
    assert err.startswith("autograph: error: ") and err.count("\n") == 1


# placeholders and returned constants are made with no user frame on the stack; the graph
# names no '<frozen runpy>' line for them
def test_python_dash_m_graph_names_no_interpreter_frames(tmp_path):
    src = write(tmp_path, "wf_runpy.py", """\
        def f(x):
            if x > 0:
                x = x * 2
            return x, 7
        """)
    out_file = tmp_path / "f.dot"
    result = subprocess.run(
        [sys.executable, "-m", "autograph", f"{src}::f", "--graph", str(out_file),
         "--args", "[3]"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    dot = out_file.read_text()
    assert "wf_runpy.py:2" in dot and "wf_runpy.py:3" in dot
    assert "<frozen" not in dot


# -- saved converted functions --------------------------------------------------------------

def make_accumulator():
    """A converted function with a loop, a tensor if, a variable, print, assert and nested
    results, over vectors of any length."""
    acc = rt.Variable(1.0, name="acc")

    @ag.convert(input_signature=[rt.TensorSpec([None], rt.float32), rt.TensorSpec([], rt.int32)])
    def accumulate(x, n):
        total = rt.reduce_sum(x)
        i = 0
        while i < n:
            if total > 100.0:
                break
            total = total * 2.0
            i += 1
        acc.assign_add(total)
        print("total", total, "steps", i)
        assert total >= 0.0, f"negative total {total}"
        return {"total": total, "parts": [i, (x * 2.0, acc.read_value())], "tag": "v1"}

    return accumulate, acc


def flat(result):
    return [t.numpy() if isinstance(t, rt.Tensor) else t for t in rt.nest.flatten(result)]


def assert_same(a, b):
    fa, fb = flat(a), flat(b)
    assert len(fa) == len(fb)
    for x, y in zip(fa, fb):
        if isinstance(x, np.ndarray) or isinstance(x, np.generic):
            assert x.dtype == y.dtype and np.array_equal(x, y)
        else:
            assert x == y


def test_a_converted_function_round_trips_with_its_loop_variable_prints_and_asserts(
        tmp_path, capsys):
    accumulate, acc = make_accumulator()
    rt.saved.save(accumulate, str(tmp_path / "acc"))         # the input_signature's trace
    loaded = rt.saved.load(str(tmp_path / "acc"))
    (new_acc,) = loaded.variables
    assert new_acc is not acc and new_acc.numpy() == 1.0
    for size, n in [(3, 3), (5, 2), (1, 10), (0, 4)]:         # other lengths than any traced
        x = np.arange(size, dtype=np.float32)
        capsys.readouterr()
        expected = accumulate(x, n)
        printed = capsys.readouterr().out
        result = loaded(x, n)
        assert capsys.readouterr().out == printed and printed.startswith("total ")
        assert_same(result, expected)
        assert result["tag"] == "v1" and isinstance(result["parts"][1], tuple)
        assert new_acc.numpy() == acc.numpy()                 # assignments persist
    with pytest.raises(AssertionError, match="negative total -2"):
        loaded(np.array([-1.0], np.float32), 1)
    with pytest.raises(ValueError, match="input_signature|trace expects"):
        loaded(np.ones((2, 2), np.float32), 1)


def test_saving_twice_to_the_same_path(tmp_path):
    path = str(tmp_path / "model")
    w = rt.Variable(np.arange(3, dtype=np.float32))

    @ag.convert
    def f(x):
        if rt.reduce_sum(x) > 0:
            w.assign_add(x)
        return w.read_value()

    @ag.convert
    def g(x, y):
        return x * y

    concrete = f.get_concrete_function(rt.constant(np.ones(3, np.float32)))
    rt.saved.save(concrete, path)
    first = rt.saved.load(path)
    w.assign([10.0, 10.0, 10.0])
    rt.saved.save(concrete, path)                            # new variable values
    second = rt.saved.load(path)
    one = np.ones(3, np.float32)
    np.testing.assert_array_equal(first(one).numpy(), [1, 2, 3])
    np.testing.assert_array_equal(second(one).numpy(), [11, 11, 11])
    rt.saved.save(g.get_concrete_function(rt.constant(2), rt.constant(3)), path)
    assert sorted(os.listdir(path)) == ["arrays.npz", "graph.json"]
    assert rt.saved.load(path)(rt.constant(4), rt.constant(5)).numpy() == 20
    np.testing.assert_array_equal(first(one).numpy(), [2, 3, 4])   # loaded before: unharmed


def test_a_converted_method_saved_from_one_instance(tmp_path):
    class Counter:
        def __init__(self, start):
            self.total = rt.Variable(start)

        @ag.convert
        def add(self, x):
            if x > 0:
                self.total.assign_add(x)
            return self.total.read_value()

    a, b = Counter(1.0), Counter(100.0)
    a.add(rt.constant(1.0))
    rt.saved.save(a.add, str(tmp_path / "a"))
    loaded = rt.saved.load(str(tmp_path / "a"))
    assert loaded(rt.constant(5.0)).numpy() == 7.0 and loaded(rt.constant(-5.0)).numpy() == 7.0
    assert a.total.numpy() == 2.0 and b.total.numpy() == 100.0


LOADER = r"""
import json, sys
import numpy as np
import runtime as rt

out = {}
acc = rt.saved.load(sys.argv[1])
for size, n in [(3, 3), (5, 2)]:
    r = acc(np.arange(size, dtype=np.float32), n)
    out.setdefault("acc", []).append([np.asarray(v).tolist() if not isinstance(v, str) else v
                                      for v in [t.numpy() if hasattr(t, "numpy") else t
                                                for t in rt.nest.flatten(r)]])
try:
    acc(np.array([-1.0], np.float32), 1)
except AssertionError as e:
    out["assert"] = str(e).splitlines()[0]
dense = rt.saved.load(sys.argv[2])
out["dense"] = dense(np.ones((2, 3), np.float32)).numpy().tolist()
out["autograph_imported"] = "autograph" in sys.modules
print(json.dumps(out))
"""


def test_loaded_in_a_fresh_process_without_the_compiler(tmp_path, capsys):
    accumulate, _ = make_accumulator()
    rt.saved.save(accumulate, str(tmp_path / "acc"))
    rt.random.set_seed(3)
    try:
        layer = rt.layers.Dense(2, activation=rt.relu)

        @ag.convert(input_signature=[rt.TensorSpec([None, 3], rt.float32)])
        def predict(x):
            y = layer(x)
            if rt.reduce_sum(y) > 0:
                y = y / rt.reduce_sum(y)
            return y

        predict(np.ones((1, 3), np.float32))
        rt.saved.save(predict, str(tmp_path / "dense"))
    finally:
        rt.random.set_seed(None)
    capsys.readouterr()
    expected = [[v.tolist() if isinstance(v, (np.ndarray, np.generic)) else v
                 for v in flat(accumulate(np.arange(size, dtype=np.float32), n))]
                for size, n in [(3, 3), (5, 2)]]
    printed = capsys.readouterr().out
    result = subprocess.run([sys.executable, "-c", LOADER, str(tmp_path / "acc"),
                             str(tmp_path / "dense")],
                            capture_output=True, text=True, timeout=60, cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr
    *prints, last = result.stdout.splitlines()
    assert "\n".join(prints[:2]) + "\n" == printed           # the same prints, in order
    out = json.loads(last)
    assert out["acc"] == expected
    assert out["assert"].endswith("failed: assertion failed: negative total -2.0")
    np.testing.assert_allclose(out["dense"], predict(np.ones((2, 3), np.float32)).numpy())
    assert out["autograph_imported"] is False


def test_py_function_cannot_be_saved_and_the_error_names_its_line(tmp_path):
    @ag.convert
    def f(x):
        if x > 0:
            x = rt.py_function(lambda a: a * 2, [x], rt.int32)
        return x

    concrete = f.get_concrete_function(rt.constant(1))
    with pytest.raises(SaveError, match=r"py_function.*test_workflows\.py:\d+.*Replace "
                                        r"rt\.py_function"):
        rt.saved.save(concrete, str(tmp_path / "s"))
    assert not os.path.exists(tmp_path / "s")                # nothing half-written


# functions and lambdas nested in converted code keep the user's qualname, not the
# generated factory's ('ag__factory.<locals>...')
def test_py_function_save_error_names_the_users_function(tmp_path):
    @ag.convert
    def f(x):
        return rt.py_function(lambda a: a * 2, [x], rt.int32)

    with pytest.raises(SaveError) as info:
        rt.saved.save(f.get_concrete_function(rt.constant(1)), str(tmp_path / "s"))
    assert "ag__" not in str(info.value)
    assert "f.<locals>.<lambda>" in str(info.value)


@pytest.mark.parametrize("body, message", [
    ("print('tags', {1, 2}, x)", r"attribute 'template' of operation 'print'.*"
                                 r"wf_unsaveable_\d\.py:5.*type set"),
    ("print('to', x, file=SINK)", r"attribute 'file' of operation 'print'.*"
                                  r"wf_unsaveable_\d\.py:5.*TextIOWrapper"),
    ("return {1, 2}, x", r"Cannot save the function's results: .*type set"),
])
def test_python_objects_a_saved_graph_cannot_hold_are_a_save_error(tmp_path, body, message):
    name = f"wf_unsaveable_{len(body) % 10}"
    # (The file the print writes to is closed here, not left to the garbage collector,
    # whose ResourceWarning would land in whichever test it happens to run in.)
    src = write(tmp_path, f"{name}.py",
                f"import os\nSINK = open(os.devnull, 'w')\n\ndef f(x):\n    {body}\n"
                f"    return x\n")
    module = import_file(src, name)
    try:
        concrete = ag.convert(module.f).get_concrete_function(rt.constant(1))
        with pytest.raises(SaveError, match=message):
            rt.saved.save(concrete, str(tmp_path / "s"))
    finally:
        module.SINK.close()


def test_a_print_to_stderr_round_trips(tmp_path, capfd):
    @ag.convert
    def f(x):
        print("warn", x, file=sys.stderr)
        return x + 1

    concrete = f.get_concrete_function(rt.constant(1))
    rt.saved.save(concrete, str(tmp_path / "s"))
    loaded = rt.saved.load(str(tmp_path / "s"))
    capfd.readouterr()
    assert loaded(rt.constant(4)).numpy() == 5
    assert capfd.readouterr().err == "warn 4\n"


# -- DOT pictures ---------------------------------------------------------------------------

def dot_problems(text):
    """Syntax problems of DOT text: unbalanced braces/brackets, unterminated quoted strings,
    raw line breaks inside quoted strings, node ids declared twice."""
    problems, stack, i, in_string = [], [], 0, False
    pairs = {"}": "{", "]": "["}
    while i < len(text):
        c = text[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
            elif c in "\r\n":
                problems.append(f"line break inside a quoted string at {i}")
        elif c == '"':
            in_string = True
        elif c in "{[":
            stack.append(c)
        elif c in "}]":
            if not stack or stack.pop() != pairs[c]:
                problems.append(f"unbalanced {c} at {i}")
        i += 1
    if in_string:
        problems.append("unterminated quoted string")
    if stack:
        problems.append(f"unclosed {''.join(stack)}")
    declared = re.findall(r"^\s*(n\d+) \[label=", text, flags=re.M)
    twice = sorted({n for n in declared if declared.count(n) > 1})
    if twice:
        problems.append(f"nodes declared more than once: {twice}")
    return problems


def graphviz_warnings(text):
    result = subprocess.run(["dot", "-Tcanon"], input=text, capture_output=True, text=True,
                            timeout=60)
    return result.returncode, result.stderr


def test_dot_of_converted_cond_and_while_with_special_characters(tmp_path):
    src = write(tmp_path, 'we"ird\\dir/mo"d\\el.py', """\
        import autograph as ag
        import runtime as rt

        def grow(y):
            while y < 10:
                y = y * 2
            return y

        @ag.convert
        def f(x):
            if x > 0:
                x = grow(x)
            else:
                x = -x
            return rt.identity(x, name='he said "hi"\\nnext\\\\line {x}')
        """)
    module = import_file(src, "wf_weird_dot")
    dot = rt.viz.to_dot(module.f.get_concrete_function(rt.constant(3)))
    assert dot_problems(dot) == []
    assert dot.startswith('digraph "f" {')
    assert 'mo\\"d\\\\el.py:11' in dot and 'mo\\"d\\\\el.py:5' in dot    # the user's lines
    assert 'label="he said \\"hi\\"\\nnext\\\\line {x} (identity)' in dot
    clusters = re.findall(r'subgraph cluster\d+ \{\n\s*label="([^"]*)"', dot)
    assert clusters == ["cond: then_graph then", "while: cond_graph while_cond",
                        "while: body_graph while_body", "cond: else_graph else"]
    if HAS_DOT:
        assert graphviz_warnings(dot) == (0, "")


# one function graph under several call ops gets its own node ids in each cluster, so
# Graphviz draws every call
def test_dot_of_a_function_called_twice_draws_each_call(tmp_path):
    double = rt.function(lambda a: a * 2)

    @ag.convert
    def f(x):
        y = double(x) + double(x + 1)
        while y < 100:
            y = double(y)
        return y

    dot = rt.viz.to_dot(f.get_concrete_function(rt.constant(3)))
    assert dot_problems(dot) == []
    if HAS_DOT:
        assert graphviz_warnings(dot) == (0, "")


def test_dot_of_a_loaded_graph_is_the_dot_of_the_original(tmp_path):
    @ag.convert
    def f(x, n):
        i = 0
        while i < n:
            if x > 10.0:
                x = x / 2.0
            else:
                x = x * 3.0
            i += 1
        return x

    concrete = f.get_concrete_function(rt.constant(1.0), rt.constant(3))
    rt.saved.save(concrete, str(tmp_path / "s"))
    dot = rt.viz.to_dot(concrete)
    assert rt.viz.to_dot(rt.saved.load(str(tmp_path / "s"))) == dot
    assert dot_problems(dot) == []


# -- ag.to_code and converted methods -------------------------------------------------------

def test_to_code_of_a_function_defined_by_exec_is_a_clear_error():
    namespace = {}
    exec("def f(x):\n    if x > 0:\n        return x\n    return -x\n", namespace)
    for fn in (namespace["f"], eval("lambda x: x + 1")):
        with pytest.raises(ag.ConversionError, match=r"cannot read the source of function "
                           r"'(f|<lambda>)'.*not in the interactive shell, exec or eval"):
            ag.to_code(fn)
    with warnings.catch_warnings(record=True) as caught:       # README: runs unconverted,
        warnings.simplefilter("always")                        # with one warning
        converted = ag.convert(namespace["f"])
        assert converted(3) == 3 and converted(-2) == 2 and converted(-5) == 5
    assert len(caught) == 1 and "could not convert function 'f'" in str(caught[0].message)


def helper_for_code(y):
    return y * 2 if y > 0 else y


@ag.convert
def function_for_code(x, n):
    total = 0
    for i in range(n):
        if x > i and (x < 100 or i == 2):
            total += helper_for_code(x)
        elif x == i:
            continue
        else:
            break
    g = lambda z: z if z else -z                                # noqa: E731
    return total, g(x), [a for a in range(3) if a]


def test_to_code_is_the_same_text_every_time(tmp_path, capsys):
    first = ag.to_code(function_for_code)
    assert ag.to_code(function_for_code) == first
    function_for_code(rt.constant(3), rt.constant(4))        # converted and traced meanwhile
    assert ag.to_code(function_for_code) == first
    assert ag.to_code(function_for_code.python_function) == first
    assert ag.to_code(function_for_code, recursive=True) == first
    ast.parse(first)
    src = write(tmp_path, "wf_code.py", "import autograph as ag\n\n\n"
                + inspect.getsource(helper_for_code) + "\n\n"
                + inspect.getsource(function_for_code))
    code, out, err = cli(capsys, f"{src}::function_for_code", "--dump")
    assert code == 0, err
    result = subprocess.run(
        [sys.executable, "-m", "autograph", f"{src}::function_for_code", "--dump"],
        capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONHASHSEED="12345"))
    assert result.returncode == 0, result.stderr
    assert out == result.stdout == f"# function_for_code\n{first}\n"


class Scaler:
    def __init__(self, k):
        self.k = k
        self.traces = 0

    @ag.convert
    def apply(self, x):
        self.traces += 1
        if x > 0:
            return x * self.k
        return x - self.k


def test_a_method_converted_in_the_class_body_on_two_instances():
    a, b = Scaler(2), Scaler(10)
    assert a.apply(rt.constant(3)).numpy() == 6 and b.apply(rt.constant(3)).numpy() == 30
    assert a.apply(rt.constant(-1)).numpy() == -3 and b.apply(rt.constant(-1)).numpy() == -11
    assert a.apply(3) == 6 and b.apply(3) == 30               # Python values: traced once
    assert (a.traces, b.traces) == (2, 2)                     # each instance its own traces
    a.k = 5                                                   # fixed in a's existing traces
    assert a.apply(rt.constant(3)).numpy() == 6
    assert Scaler(5).apply(rt.constant(3)).numpy() == 15
    assert "def ag__apply(self, x):" in ag.to_code(Scaler.apply)


# not the converted code of the weak-method wrapper that binds it
def test_to_code_of_a_bound_converted_method_is_the_methods_code():
    assert ag.to_code(Scaler(2).apply) == ag.to_code(Scaler.apply)
