"""Ops of the runtime, declared once each in `registry` (kernel, shape rule, flags)."""
from . import registry  # noqa: F401
from . import math_ops  # noqa: F401
from . import array_ops  # noqa: F401
from . import nn_ops  # noqa: F401
from . import random_ops  # noqa: F401
from . import logging_ops  # noqa: F401
from . import exception_ops  # noqa: F401
from . import quantize_ops  # noqa: F401
from . import data_ops  # noqa: F401
