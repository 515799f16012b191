# What `mausbox deploy` asks a unit before it sends anything and after (host/mausbox/deploy.py probe): the .mpy
# version it loads, its platform and the app frozen into its image if any, then the sha256 of every file under
# /maus and /maus-data (walk) and of each path asked for,
# one "<path> <hex or None>" line a file, so that a listing of ~120 files never sits in a 96 KB heap at once.
# A fresh board has no firmware: the host sends this file's text to the raw REPL and calls _probe. It is never
# deployed; tests/fw/test_deployprobe.py runs it under MicroPython.
import hashlib
import os
import sys


def _h(p):
    try:
        h = hashlib.sha256()
        b = bytearray(512)
        with open(p, "rb") as f:
            while 1:
                n = f.readinto(b)
                if not n:
                    break
                h.update(memoryview(b)[:n])
        return h.digest().hex()
    except OSError:
        return None


def _walk(d, out, cut):
    try:
        for e in os.ilistdir(d):
            p = d + "/" + e[0]
            if e[1] & 0x4000:
                _walk(p, out, cut)
            else:
                out.append(p[cut:])
    except OSError:
        pass


def _frozen():
    # The version of the app frozen into this image (`make image`), or "-": its package found in .frozen alone
    # (a /maus folder on the filesystem, found first, would hide it). Whatever maus was loaded stays as it was.
    if sys.implementation.name != "micropython":
        return "-"  # (".frozen" is MicroPython's; CPython, running the tests, may find the package anywhere)
    had = sys.modules.pop("maus", None)
    path = sys.path[:]
    try:
        sys.path[:] = [".frozen"]
        m = __import__("maus")
        return getattr(m, "VERSION", "?")
    except ImportError:
        return "-"
    finally:
        sys.path[:] = path
        sys.modules.pop("maus", None)
        if had is not None:
            sys.modules["maus"] = had


def _probe(want, walk, root=""):
    # root: where "/" is (a test's folder); the paths printed are relative to it. Walked: the app's folder and
    # the data folder of an app frozen into the image (maus.FROZEN_DATA).
    print(getattr(sys.implementation, "_mpy", 0), sys.platform, _frozen())
    o = []
    if walk:
        _walk(root + "/maus", o, len(root) + 1)
        _walk(root + "/maus-data", o, len(root) + 1)
    for p in want:
        if p not in o:
            o.append(p)
    for p in o:
        print(p, _h(root + "/" + p))


def _rmtree(d):
    # A folder and everything in it (a deploy's /maus where the app is frozen in, or where ROMFS has it); none: nothing.
    try:
        for e in os.ilistdir(d):
            p = d + "/" + e[0]
            if e[1] & 0x4000:
                _rmtree(p)
            else:
                os.remove(p)
        os.rmdir(d)
    except OSError:
        pass
