"""`import autograph, runtime` next to `import numpy`, each in a fresh interpreter.

Both include numpy's own import (ours needs it). Python's start-up is measured apart
and subtracted. Target: within 2.5x of `import numpy`.
"""
import subprocess
import sys

from harness import Report, main

STATEMENTS = {"python start-up": "pass", "numpy": "import numpy",
              "autograph + runtime": "import autograph, runtime"}


def wall_seconds(statement, runs):
    import time
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", statement], check=True)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def measure(quick=False):
    report = Report("import time (fresh interpreter, start-up subtracted)",
                    "autograph + runtime <= 2.5x numpy")
    runs = 5 if quick else 15
    startup = wall_seconds(STATEMENTS["python start-up"], runs)
    for name in ("numpy", "autograph + runtime"):
        report.add(name, wall_seconds(STATEMENTS[name], runs) - startup)
    report.notes.append(f"python start-up: {startup * 1e3:.0f} ms (subtracted)")
    return report


if __name__ == "__main__":
    main(measure)
