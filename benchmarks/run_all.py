"""Run every benchmark and print one table (Markdown), with the machine it ran on.

    python benchmarks/run_all.py [--quick] [NAME ...]

NAMES pick scripts (collatz rnn mlp memory_chain loop_gradient_memory loop_gradient
parallel_matmul call_overhead op_overhead trace_cost import_time quantized_mlp
dataset_epoch); all by
default. Paste the output into README.md.
"""
import datetime
import importlib
import sys

from harness import as_reports, machine, table

SCRIPTS = ["collatz", "rnn", "mlp", "memory_chain", "loop_gradient_memory", "loop_gradient",
           "parallel_matmul", "call_overhead", "op_overhead", "trace_cost", "import_time",
           "quantized_mlp", "dataset_epoch"]


def main(argv):
    quick = "--quick" in argv
    names = [a for a in argv if not a.startswith("-")] or SCRIPTS
    reports = []
    for name in names:
        print(f"running {name} ...", file=sys.stderr)
        reports.extend(as_reports(importlib.import_module(name).measure(quick)))
    print(f"### {datetime.date.today()} — {machine()}\n")
    print(f"`python benchmarks/run_all.py{' --quick' if quick else ''}`\n")
    print(table(reports))


if __name__ == "__main__":
    main(sys.argv[1:])
