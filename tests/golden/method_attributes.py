"""self.count modified in a loop is carried as state (a composite name)."""


class Counter:
    def __init__(self):
        self.count = 0

    def run(self, n):
        i = 0
        while i < n:
            self.count += i
            i += 1
        return self.count
