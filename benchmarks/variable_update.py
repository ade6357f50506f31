"""The cost of a variable's lock on the eager hot path: `v.assign_add(t)` as shipped (its
kernel holds the variable's lock) next to the same call with the same read-modify-write
kernel minus the lock, and numpy's `a = a + 1`, batches taking turns in one process.
"""
import contextlib

import numpy as np

import runtime as rt
from harness import Report, main, medians
from runtime import variables
from runtime.ops import registry


def unlocked_assign_add(delta, var):
    """assign_add's kernel without the lock (what it was before variables had one)."""
    delta = delta.astype(var.dtype.np, copy=False)
    old = variables._read_kernel(var)
    new = np.add(old, delta)
    if new.shape != old.shape:
        raise ValueError("shape changed")
    var._value = new
    return new


@contextlib.contextmanager
def without_the_lock():
    opdef = registry.get("assign_add")
    shipped = opdef.kernel
    object.__setattr__(opdef, "kernel", unlocked_assign_add)
    try:
        yield
    finally:
        object.__setattr__(opdef, "kernel", shipped)


def measure(quick=False):
    report = Report("eager v.assign_add(t), scalar float32", "lock: no regression worth noting",
                    baseline="assign_add without the lock")
    v, one = rt.Variable(0.0), rt.constant(1.0)
    a = [np.float32(0.0)]

    def numpy_add():
        a[0] = a[0] + np.float32(1.0)

    variants = {"assign_add (with the variable's lock)": lambda: v.assign_add(one),
                "assign_add without the lock": (lambda: v.assign_add(one), without_the_lock),
                "numpy a = a + 1": numpy_add}
    for name, seconds in medians(variants, repeat=7 if quick else 25).items():
        report.add(name, seconds)
    return report


if __name__ == "__main__":
    main(measure)
