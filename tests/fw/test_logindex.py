# logs/index (maus.log.index): with a good index the boot reads no directory listing of logs/ and opens none
# of its finished logs; with the index missing, stale or torn it lists logs/ once, recovers the newest log
# as before and writes the index again (docs/log-format.md, "The index"). The filesystem's own calls are
# counted: under MicroPython a VFS that wraps the real one (VfsPosix on a temp folder) is mounted and
# sees every call the firmware's os makes; under CPython the os functions themselves are wrapped.
import gc
import os
import sys

from fwtest import rmtree, tmpdir
from maus.log import index as logindex
from maus.log import start as logstart
from maus.log import writer as gamelog
from maus.log.store import LogStore

MPY = sys.implementation.name == "micropython"
N = 300  # finished logs on the unit, a third of them pulled


def _s(path):
    return str(path, "utf-8") if isinstance(path, bytes) else path


class Counted:
    # A mounted filesystem (MicroPython VFS protocol) that counts the listings, stats and opens in logs/.
    def __init__(self, inner, host=""):
        self.inner = inner
        self.host = host  # the folder it serves
        self.reset()

    def reset(self):
        self.lists = 0
        self.stats = 0
        self.opens = 0  # files in logs/ opened, other than the index and the counter
        self.named = []  # the first of them

    def _in_logs(self, path):
        return _s(path).startswith("/logs/")

    def mount(self, readonly, mkfs):
        return self.inner.mount(readonly, mkfs)

    def umount(self):
        return self.inner.umount()

    def ilistdir(self, path):
        if _s(path).rstrip("/") == "/logs":
            self.lists += 1
        return self.inner.ilistdir(path)

    def stat(self, path):
        if self._in_logs(path):
            self.stats += 1
        return self.inner.stat(path)

    def open(self, path, mode):
        if self._in_logs(path):
            self.opened(_s(path).rsplit("/", 1)[1])
        return self.inner.open(path, mode)

    def opened(self, name):
        if name not in ("index", "counter"):
            self.opens += 1
            if len(self.named) < 3:
                self.named.append(name)

    def chdir(self, path):
        return self.inner.chdir(path)

    def getcwd(self):
        return self.inner.getcwd()

    def mkdir(self, path):
        return self.inner.mkdir(path)

    def remove(self, path):
        return self.inner.remove(path)

    def rename(self, a, b):
        # VfsPosix.rename builds both paths in one buffer, so under a folder the second overwrites the first:
        # the folder's own paths, through the root filesystem
        return os.rename(self.host + _s(a), self.host + _s(b))

    def rmdir(self, path):
        return self.inner.rmdir(path)

    def statvfs(self, path):
        return self.inner.statvfs(path)


class Unit:
    # A unit's flash holding N finished logs, with its filesystem calls counted.
    def __init__(self):
        self.dir = tmpdir("mbxidx")
        if MPY:
            import vfs

            self.root = "/idx%d" % (os.urandom(1)[0] * 256 + os.urandom(1)[0])
            self.fs = Counted(vfs.VfsPosix(self.dir), self.dir)
            vfs.mount(self.fs, self.root)
        else:
            import builtins

            self.root = self.dir
            self.fs = Counted(None)
            self._real = (os.listdir, os.stat, builtins.open)
            fs, real_listdir, real_stat, real_open = self.fs, os.listdir, os.stat, builtins.open
            logs = (self.dir + "/logs").encode()

            def listdir(p="."):
                if (p.encode() if isinstance(p, str) else p).rstrip(b"/") == logs:
                    fs.lists += 1
                return real_listdir(p)

            def stat(p, *a, **kw):
                if isinstance(p, (str, bytes)) and (p.encode() if isinstance(p, str) else p).startswith(logs + b"/"):
                    fs.stats += 1
                return real_stat(p, *a, **kw)

            def open_(p, *a, **kw):
                if isinstance(p, str) and p.startswith(self.dir + "/logs/"):
                    fs.opened(p.rsplit("/", 1)[1])
                return real_open(p, *a, **kw)

            os.listdir, os.stat, builtins.open = listdir, stat, open_
        self.store = LogStore(self.root)
        done = gamelog.encode(0, 0, "game_start", {}) + gamelog.encode(1, 5, "game_end", {})
        for i in range(1, N + 1):
            self.write("%05d-mg.jsonl" % i, done)
            if i % 3 == 0:
                self.write("%05d-mg.jsonl.pulled" % i, b"0" * 64)
        self.write("counter", b"%d" % (N + 1))
        self.fs.reset()

    def write(self, name, data):
        with open(self.store.dir + "/" + name, "wb") as f:
            f.write(data)

    def read(self, name):
        with open(self.store.dir + "/" + name, "rb") as f:
            return f.read()

    def recover(self):
        # the boot's step (maus.unit.boot.recover), counted from here
        from maus import moment

        self.fs.reset()
        problems = []
        with moment():
            from maus.unit.boot import recover

            out = recover(self.root, None, problems)
        assert not problems, problems
        return out

    def close(self):
        if MPY:
            import vfs

            vfs.umount(self.root)
        else:
            import builtins

            os.listdir, os.stat, builtins.open = self._real
        rmtree(self.dir)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()


def _game(u, finish=True, records=3):
    log = logstart.start_game(u.store, lambda: 0, "mausgeflippt", None, [(1, "red", False), (2, "blue", False)],
                             "b", "u", "f", {}, reserve=0)
    for k in range(records):
        log.record("press", {"player": 1, "offset_us": k})
    if finish:
        log.end({1: 1, 2: 0}, [1], {}, "x")
    else:
        log.close()  # the power went: no end
    return log.name


def _aborted(u, name):
    from maus.log import check as logcheck

    r = logcheck.read(u.read(name))
    assert r.ok, r.problems
    return r.records[-2]["type"] == "recovered" and r.records[-1]["type"] == "game_abort"


def _no_listing(u):
    assert u.fs.lists == 0, "logs/ listed %d times" % u.fs.lists
    assert u.fs.stats <= 1, u.fs.stats  # the newest log, to see it is there at the size the index says
    assert u.fs.opens == 0, u.fs.named  # no log opened


def test_the_index_spares_the_boot_listing_logs():
    with Unit() as u:
        assert u.recover() == [] and u.fs.lists == 1  # no index yet: one pass over logs/ writes it
        assert logindex.read(u.store.dir) == (N + 1, "%05d-mg.jsonl" % N, True, len(u.read("%05d-mg.jsonl" % N)))
        assert u.recover() == []
        _no_listing(u)
        name = _game(u)  # a game played to its end: the index names its log, finished
        assert name == "%05d-mausgeflippt.jsonl" % (N + 1)
        assert u.recover() == []
        _no_listing(u)
        cut = _game(u, finish=False)  # the power went during the next game
        assert logindex.read(u.store.dir)[1:3] == (cut, False)
        rep = u.recover()
        assert rep == [{"name": cut, "cut_bytes": 0, "records": 4, "aborted": True}], rep
        assert u.fs.lists == 0 and _aborted(u, cut)
        assert logindex.read(u.store.dir)[1:] == (cut, True, len(u.read(cut)))  # closed now, and said so
        assert u.recover() == []
        _no_listing(u)
        assert u.store.next_number() == N + 3


def test_a_cut_log_is_recovered_when_the_index_is_missing_stale_or_torn():
    cases = ("missing", "empty", "torn", "flipped", "garbage", "counter", "gone")
    for what in cases:
        gc.collect()
        with Unit() as u:
            u.recover()
            _game(u)
            cut = _game(u, finish=False, records=5)
            data = u.read(cut)
            u.write(cut, data + b'{"seq":6,"t":0,"ty')  # a torn record at its end
            line = u.read("index")
            if what == "missing":
                os.remove(u.store.dir + "/index")
            elif what == "empty":
                u.write("index", b"")
            elif what == "torn":  # a file system that tears writes (not littlefs): the first half of it
                u.write("index", line[:len(line) // 2])
            elif what == "flipped":
                u.write("index", line.replace(b" o ", b" d "))  # says finished: its CRC says otherwise
            elif what == "garbage":
                u.write("index", b"\xff" * 40 + b"\n")
            elif what == "counter":  # another numbering since (older firmware): a newer log the index never saw
                newer = "%05d-mms.jsonl" % (N + 9)
                u.write(newer, gamelog.encode(0, 0, "game_start", {}) + b'{"seq":1')  # cut after its start
                u.write("counter", b"%d" % (N + 10))
            elif what == "gone":  # the log the index names went (deleted from the host); the one before is cut
                os.remove(u.store.dir + "/" + cut)
                cut = "%05d-mausgeflippt.jsonl" % (N + 1)
                u.write(cut, u.read(cut)[:-10])
            rep = u.recover()
            assert u.fs.lists == 1, (what, u.fs.lists)  # it fell back to one pass over logs/
            if what == "counter":
                assert [r["name"] for r in rep] == [newer], (what, rep)
                assert rep[0]["records"] == 1 and rep[0]["aborted"], rep
                assert _aborted(u, newer)
                newest = newer
            else:
                assert [r["name"] for r in rep] == [cut] and rep[0]["aborted"] and rep[0]["cut_bytes"] > 0, (what, rep)
                assert _aborted(u, cut), what
                newest = cut
            ix = logindex.read(u.store.dir)
            assert ix is not None and ix[1:] == (newest, True, len(u.read(newest))), (what, ix)
            assert u.recover() == [], what
            _no_listing(u)


def test_an_index_that_cannot_be_written_is_removed_and_never_left_stale():
    with Unit() as u:
        u.recover()
        name = _game(u)
        assert logindex.read(u.store.dir)[1:3] == (name, True)
        os.mkdir(u.store.dir + "/index.tmp")  # the write fails (a full flash fails the same way)
        assert not logindex.write(u.store.dir, N + 2, "%05d-mg.jsonl" % (N + 5), False, 0)
        assert logindex.read(u.store.dir) is None  # gone: the next boot lists logs/ rather than trust it
        os.rmdir(u.store.dir + "/index.tmp")
        assert u.recover() == [] and u.fs.lists == 1
        assert logindex.read(u.store.dir)[1:3] == (name, True)


def test_a_finished_log_at_another_size_is_read_once_and_the_index_follows():
    with Unit() as u:
        u.recover()
        name = _game(u)
        u.write(name, u.read(name) + gamelog.encode(9, 9, "note", {"text": "x"}))  # grown behind the index
        assert u.recover() == [] and u.fs.lists == 0 and u.fs.opens >= 1  # read, still finished: not repaired
        assert logindex.read(u.store.dir)[1:] == (name, True, len(u.read(name)))
        assert u.recover() == []
        _no_listing(u)
