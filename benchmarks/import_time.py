"""`import autograph, runtime` next to `import numpy`, each in a fresh interpreter.

Both include numpy's own import (ours needs it); Python's start-up is measured apart
and subtracted. Measured with compiled bytecode cached, as for any installed package
(in a temporary PYTHONPYCACHEPREFIX, so nothing is written into the work tree), and
without it: with PYTHONDONTWRITEBYTECODE=1 (this environment sets it) our modules are
compiled from source at every import while numpy's installed bytecode is still read.
Target: within 2.5x of `import numpy`.
"""
import os
import subprocess
import sys
import tempfile
import time

from harness import Report, main

STATEMENTS = {"numpy": "import numpy", "autograph + runtime": "import autograph, runtime"}


def wall_seconds(statement, runs, env):
    subprocess.run([sys.executable, "-c", statement], check=True, env=env)     # warm up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", statement], check=True, env=env)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def measure(quick=False):
    report = Report("import time (fresh interpreter, start-up subtracted)",
                    "autograph + runtime <= 2.5x numpy (bytecode cached)")
    runs = 5 if quick else 15
    with tempfile.TemporaryDirectory() as cache:
        settings = {
            "bytecode cached": dict(os.environ, PYTHONPYCACHEPREFIX=cache),
            "no bytecode cache": dict(os.environ, PYTHONDONTWRITEBYTECODE="1"),
        }
        settings["bytecode cached"].pop("PYTHONDONTWRITEBYTECODE", None)
        for label, env in settings.items():
            startup = wall_seconds("pass", runs, env)
            for name, statement in STATEMENTS.items():
                report.add(f"{name}, {label}", wall_seconds(statement, runs, env) - startup)
    report.baseline = "numpy, bytecode cached"
    return report


if __name__ == "__main__":
    main(measure)
