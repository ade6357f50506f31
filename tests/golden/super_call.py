"""Zero-argument super() gets its arguments spelled out."""


class Base:
    def scale(self, x):
        return x * 2


class Child(Base):
    def scale(self, x):
        if x > 0:
            x = super().scale(x)
        return x
