"""An f-string printed in a loop: ag__.fstring, so a graph print shows run-time values."""


def report(n):
    total = 0.0
    for i in range(n):
        total += 0.5 * i
        print(f"step {i}: total {total:.2f}, width {i:>{n}}")
    return total
