# Small helpers for firmware tests that run under both CPython and MicroPython.


def raises(exc, fn, *args, **kw):
    """Assert that fn(*args, **kw) raises exc; returns the exception."""
    try:
        fn(*args, **kw)
    except exc as e:
        return e
    raise AssertionError("expected %s" % exc.__name__)


class Rand:
    """A tiny deterministic PRNG (xorshift32): same sequence on CPython and MicroPython."""

    def __init__(self, seed=1):
        self.s = (seed & 0xFFFFFFFF) or 1

    def next(self):
        s = self.s
        s ^= (s << 13) & 0xFFFFFFFF
        s ^= s >> 17
        s ^= (s << 5) & 0xFFFFFFFF
        self.s = s
        return s

    def randint(self, a, b):
        return a + self.next() % (b - a + 1)

    def choice(self, seq):
        return seq[self.next() % len(seq)]

    def random(self):
        return self.next() / 4294967296

    def shuffle(self, lst):
        for i in range(len(lst) - 1, 0, -1):
            j = self.next() % (i + 1)
            lst[i], lst[j] = lst[j], lst[i]
