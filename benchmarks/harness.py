"""What the benchmark scripts share: interleaved timing, optional frameworks, the table.

Each script measures one workload in several variants (our eager mode, our graphs,
hand-written numpy, and TensorFlow / JAX / PyTorch when installed) side by side in
one process: the variants take turns, batch after batch, so a noisy neighbour slows
all of them alike, and the median batch is reported. A script's `measure(quick)`
returns a `Report`; run alone, it prints its table (`python benchmarks/NAME.py`);
`run_all.py` prints them all. (A script measuring one workload two ways, time and
memory, returns a list of reports.)
"""
import contextlib
import importlib
import os
import platform
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


class Report:
    """One workload: a value per variant (seconds; bytes with `unit="bytes"` (in MB) or
    `unit="B"` (exact))."""

    def __init__(self, workload, target, baseline="numpy", unit="s"):
        self.workload = workload
        self.target = target
        self.baseline = baseline
        self.unit = unit
        self.values = {}
        self.notes = []

    def add(self, variant, value):
        self.values[variant] = value

    def ratio(self, variant):
        base = self.values.get(self.baseline)
        return None if not base else self.values[variant] / base

    def rows(self):
        for variant, value in self.values.items():
            ratio = self.ratio(variant)
            yield (self.workload, variant, format_value(value, self.unit),
                   "" if ratio is None else f"{ratio:.2f}x")


def format_value(value, unit):
    if unit == "B":
        return f"{value:,} B"
    if unit == "bytes":
        return f"{value / 2**20:.1f} MB"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.2f} ms"
    if value >= 1e-6:
        return f"{value * 1e6:.2f} us"
    return f"{value * 1e9:.0f} ns"


def medians(variants, repeat=15, min_batch_time=0.02, number=None):
    """{name: median seconds per call} of variants run in turns, batch after batch.

    A variant is a zero-argument callable, or (callable, settings) where `settings()`
    is a context manager entered around each batch (e.g. `rt.config.options(...)`).
    """
    variants = {name: v if isinstance(v, tuple) else (v, contextlib.nullcontext)
                for name, v in variants.items()}

    def batch(fn, settings, n):
        with settings():
            start = time.perf_counter()
            for _ in range(n):
                fn()
            return time.perf_counter() - start

    numbers = {}
    for name, (fn, settings) in variants.items():
        batch(fn, settings, 1)                  # warm up: traces, compiles, caches
        n = number or 1
        while number is None and batch(fn, settings, n) < min_batch_time and n < 1 << 20:
            n *= 2
        numbers[name] = n
    samples = {name: [] for name in variants}
    for _ in range(repeat):
        for name, (fn, settings) in variants.items():
            samples[name].append(batch(fn, settings, numbers[name]) / numbers[name])
    return {name: sorted(s)[len(s) // 2] for name, s in samples.items()}


def sample(name):
    """The module of `samples/NAME.py` (the benchmarks time the samples' functions)."""
    import importlib.util
    path = os.path.join(ROOT, "samples", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"samples_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def executor_variants(call):
    """Variants running the graph function call `call()` under each executor (the compiled
    tier's, every region compiled before timing, when numba is installed)."""
    import runtime as rt
    from runtime import compiled
    variants = {f"graph ({name} executor)": (call, lambda name=name: rt.config.options(
        executor=name)) for name in ("fast", "plain")}
    if compiled.available():
        variants["graph (compiled tier)"] = (call, lambda: rt.config.options(
            executor="compiled", compile_policy="always"))
    return variants


def peak_bytes(fn):
    """The most memory (tracemalloc) held at once during one call of `fn`, after a first
    call (tracing, compiling) outside the measurement; buffers loops kept from that call
    for their next run are dropped first, so the call allocates all it uses."""
    import tracemalloc
    fn()
    if "runtime" in sys.modules:
        sys.modules["runtime"].config.release_buffers()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def keep_freed_memory():
    """Tell glibc's malloc to keep freed memory for reuse (no trimming, no mmap for big
    blocks), as a long-running process's warm heap does; False where that is not glibc.
    Whether numpy's freed arrays come back warm or as fresh pages the kernel must zero
    otherwise hangs on thresholds malloc adjusts as the process runs."""
    import ctypes
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3
    return bool(mallopt(m_trim_threshold, 1 << 30) and mallopt(m_mmap_threshold, 1 << 25))


def optional(module):
    """The module if it is installed (TensorFlow, JAX, PyTorch), else None."""
    try:
        return importlib.import_module(module)
    except Exception:  # noqa: BLE001 - any failure to import means: skip that variant
        return None


def machine():
    import numpy as np
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    blas = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS")
    return (f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, "
            f"numpy {np.__version__}, BLAS threads: {blas or 'default'}")


def table(reports):
    """A Markdown table of the reports' rows, then their targets."""
    lines = ["| workload | variant | result | ratio |", "|---|---|---|---|"]
    for report in reports:
        for row in report.rows():
            lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    for report in reports:
        lines.append(f"- {report.workload} (ratios to {report.baseline}): target {report.target}")
        lines.extend(f"  - {note}" for note in report.notes)
    return "\n".join(lines)


def main(measure):
    quick = "--quick" in sys.argv
    print(machine())
    print(table(as_reports(measure(quick))))


def as_reports(result):
    """A script's `measure` result as a list of reports."""
    return list(result) if isinstance(result, (list, tuple)) else [result]
