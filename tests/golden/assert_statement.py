"""assert becomes ag__.assert_stmt; a message other than a constant is lazy."""


def safe_sqrt(x):
    assert x >= 0, "x must be non-negative"
    assert x < 1e6
    assert x != 3, f"x is {x}"
    return x ** 0.5
