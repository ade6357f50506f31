"""Shared by the autograph tests: `equivalence` importable, the `tensors` argument mode."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(params=[False, True], ids=["python", "tensor"])
def tensors(request):
    """Run an equivalence test with Python arguments, then with tensor arguments."""
    return request.param
