"""ag.set_loop_options at the top of a loop body becomes the loop's options."""
import autograph as ag


def grow(n):
    v = [0.0]
    i = 0
    while i < n:
        ag.set_loop_options(maximum_iterations=100)
        i += 1
    return i, v
