"""self.count modified in a loop: only `i` is named; the attribute is discovered when traced."""


class Counter:
    def __init__(self):
        self.count = 0

    def run(self, n):
        i = 0
        while i < n:
            self.count += i
            i += 1
        return self.count
