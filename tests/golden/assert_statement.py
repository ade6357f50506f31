"""assert becomes ag__.assert_stmt with a lazy message."""


def safe_sqrt(x):
    assert x >= 0, "x must be non-negative"
    assert x < 1e6
    return x ** 0.5
