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


def repo_path(rel):
    """A path inside the checkout: MAUSBOX_REPO (set by the harness, whose compiled tests live elsewhere),
    else relative to this file (CPython runs the tests from tests/fw)."""
    import os

    root = None
    try:
        root = os.getenv("MAUSBOX_REPO")
    except Exception:  # noqa: BLE001 - a port without getenv
        pass
    if not root:
        here = __file__.replace("\\", "/").rsplit("/", 1)[0] if "/" in __file__ else "."
        root = here + "/../.."
    return root + "/" + rel


def tmpdir(prefix):
    """A fresh folder for a test's files (CPython: tempfile; MicroPython has none: a random /tmp name)."""
    import os
    import sys

    if sys.implementation.name != "micropython":
        import tempfile

        return tempfile.mkdtemp(prefix=prefix)
    p = "/tmp/%s%d" % (prefix, os.urandom(1)[0] * 256 + os.urandom(1)[0])
    os.mkdir(p)
    return p


def rmtree(p):
    import os
    import sys

    if sys.implementation.name != "micropython":
        import shutil

        shutil.rmtree(p, ignore_errors=True)
        return
    for e in os.ilistdir(p):
        q = p + "/" + e[0]
        if e[1] & 0x4000:
            rmtree(q)
        else:
            os.remove(q)
    os.rmdir(p)
