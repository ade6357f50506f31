"""autograph: convert plain Python control flow into graph code for the runtime.

    import autograph as ag
    import runtime as rt

    @ag.convert
    def collatz(n):
        steps = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps += 1
        return steps

    collatz(rt.constant(27))        # one traced graph with a while loop

`convert` is the decorator; `to_code` shows the generated Python, `to_graph` returns it
untraced. The runtime it targets is the `runtime` package. The user guide is
docs/README.md in the source tree; `python -m autograph FILE.py --dump` prints the code
generated for a file.
"""
from autograph.api import convert, do_not_convert, set_loop_options, to_code, to_graph
from autograph.errors import AutoGraphError, ConversionError, StagingError

# The public API (API.md): what `dir(ag)`, `from autograph import *` and API references
# show. The compiler's modules (ag.conversion, ag.pyct, ...) stay importable by full name.
__all__ = ["convert", "to_graph", "to_code", "do_not_convert", "set_loop_options",
           "ConversionError", "StagingError", "AutoGraphError"]
__version__ = "0.1.0.dev0"


def __dir__():
    return sorted(__all__ + ["__version__"])
