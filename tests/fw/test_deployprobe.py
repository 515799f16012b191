# firmware/deployprobe.py, which `mausbox deploy` sends to a unit's raw REPL (host/mausbox/deploy.py probe): the
# unit's .mpy version and platform, then a line per file under /maus and per path asked for, with its sha256.
import hashlib
import os
import sys

import deployprobe
from fwtest import rmtree, tmpdir


class _Os:
    # CPython has no os.ilistdir: MicroPython's entries (name, type) from scandir
    @staticmethod
    def ilistdir(d):
        for e in os.scandir(d):
            yield e.name, 0x4000 if e.is_dir() else 0x8000

    remove = staticmethod(os.remove)
    rmdir = staticmethod(os.rmdir)


def _run(root, want, walk):
    out = []
    deployprobe.print = lambda *a: out.append(" ".join(str(x) for x in a))
    if not hasattr(os, "ilistdir"):
        deployprobe.os = _Os
    try:
        deployprobe._probe(want, walk, root)
    finally:
        del deployprobe.print
        deployprobe.os = os
    return out


def test_the_probe_lists_and_hashes_every_file_under_maus_and_each_path_asked_for():
    root = tmpdir("probe")
    try:
        os.mkdir(root + "/maus")
        os.mkdir(root + "/maus/unit")
        data = {"maus/a.mpy": b"A" * 1300, "maus/unit/b.mpy": b"", "main.py": b"import maus\n"}
        for p, b in data.items():
            with open(root + "/" + p, "wb") as f:
                f.write(b)
        out = _run(root, ["main.py", "boot.py", "maus/a.mpy"], 1)
        mpy, platform, frozen = out[0].split()
        assert platform == sys.platform and int(mpy) >= 0, out[0]
        assert frozen == "-", out[0]  # no app frozen into this interpreter
        got = dict(ln.split(" ") for ln in out[1:])
        assert sorted(got) == ["boot.py", "main.py", "maus/a.mpy", "maus/unit/b.mpy"], got  # a.mpy once
        for p, b in data.items():
            assert got[p] == hashlib.sha256(b).digest().hex(), p
        assert got["boot.py"] == "None"
        out = _run(root, ["main.py"], 0)  # no walk: only what was asked for
        assert [ln.split(" ")[0] for ln in out[1:]] == ["main.py"], out
    finally:
        rmtree(root)


def test_the_probe_walks_a_frozen_apps_data_folder_and_rmtree_takes_a_folder_whole():
    root = tmpdir("probe2")
    try:
        for d in ("/maus-data", "/maus-data/texts", "/maus", "/maus/unit", "/maus/unit/deep"):
            os.mkdir(root + d)
        for p in ("maus-data/texts/unit.en.json", "maus/unit/deep/x.mpy"):
            with open(root + "/" + p, "wb") as f:
                f.write(b"{}")
        out = _run(root, [], 1)
        assert sorted(ln.split(" ")[0] for ln in out[1:]) == ["maus-data/texts/unit.en.json", "maus/unit/deep/x.mpy"]
        if not hasattr(os, "ilistdir"):
            deployprobe.os = _Os
        try:
            deployprobe._rmtree(root + "/maus")
            deployprobe._rmtree(root + "/no-such-folder")  # nothing there: nothing done
        finally:
            deployprobe.os = os
        assert sorted(e for e in os.listdir(root)) == ["maus-data"]
    finally:
        rmtree(root)
