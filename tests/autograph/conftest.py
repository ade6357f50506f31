"""Shared by the autograph tests: `equivalence` importable, the `tensors` argument mode."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(params=[False, True], ids=["python", "tensor"])
def tensors(request):
    """Run an equivalence test with Python arguments, then with tensor arguments."""
    return request.param


@pytest.fixture
def keep_global_seed():
    """Restore the global random seed a test sets (rt.random.set_seed)."""
    from runtime.ops.random_ops import get_global_seed
    import runtime as rt
    seed = get_global_seed()
    yield
    rt.random.set_seed(seed)


# Files whose syntax needs a newer Python than the oldest we support.
collect_ignore = ["test_equivalence_match.py"] if sys.version_info < (3, 10) else []
