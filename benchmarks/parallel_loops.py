"""numba's `parallel=True` on the compiled tier's element loops: does it pay on this machine?

The compiled tier lowers the 8-op elementwise chain of `compiled_tier.py` to one loop
over the elements. This script compiles that same generated source twice, as the tier does
(`njit`, serial) and with its outer loop a `prange` under `njit(parallel=True)`, and times
both against numpy at several sizes. The tier uses `parallel=True` only if it helps
(issue 15: "only where it measurably helps on 2 cores").

    python benchmarks/parallel_loops.py [--quick]
"""
import re
import tempfile

import numpy as np
from harness import Report, main, medians

import runtime as rt  # noqa: E402 - harness puts this checkout first on sys.path
from runtime import compiled  # noqa: E402

SIZES = (4 * 2**20, 2**18, 2**14, 2**12)


def chain_region_source():
    """(name, generated source) of the chain's region, traced for any length."""
    from compiled_tier import chain
    rt.config.set_compile_cache_dir(tempfile.mkdtemp())
    with rt.config.options(executor="compiled", compile_policy="always"):
        concrete = chain.get_concrete_function(rt.TensorSpec([None], rt.float32))
        concrete(rt.constant(np.ones(16, np.float32)))
    region, = [r for r in compiled._regions if r.graph_name == "chain"]
    return region.name, region.source


def compiled_pair(name, source):
    """(serial, parallel) numba functions of `source`: as the tier compiles it, and with
    its outer loop a prange under parallel=True."""
    import numba
    from runtime.compiled import helpers
    serial_ns, parallel_ns = dict(vars(helpers), np=np), dict(vars(helpers), np=np, numba=numba)
    exec(source, serial_ns)  # noqa: S102 - the tier's own generated source
    exec(re.sub(r"for (\w+) in range\(", r"for \1 in numba.prange(", source, count=1),
         parallel_ns)  # noqa: S102
    return (numba.njit(error_model="numpy")(serial_ns[name]),
            numba.njit(error_model="numpy", parallel=True)(parallel_ns[name]))


def chain_numpy(x):
    return ((x * np.float32(1.5) + np.float32(0.5)) * x - np.float32(2.0)) * (
        x + np.float32(3.0)) / (x * x)


def measure(quick=False):
    name, source = chain_region_source()
    serial, parallel = compiled_pair(name, source)
    constants = [np.float32(v) for v in (1.5, 0.5, 2.0, 3.0)]
    reports = []
    for size in SIZES:
        x = np.linspace(0.5, 2.0, size, dtype=np.float32)
        assert serial(-1, x, *constants)[0].tobytes() == parallel(-1, x, *constants)[0].tobytes()
        report = Report(f"8-op elementwise chain, {size} float32", "parallel faster than serial")
        report.values.update(medians({
            "compiled, serial": lambda: serial(-1, x, *constants),
            "compiled, parallel=True (2 threads)": lambda: parallel(-1, x, *constants),
            "numpy": lambda: chain_numpy(x)}, repeat=5 if quick else 11))
        reports.append(report)
    return reports


if __name__ == "__main__":
    main(measure)
