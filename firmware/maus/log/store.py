# The logs directory on flash: names, listing with sha256, pulled markers, chunked reads for the host.
# A log <name>.jsonl is pulled when <name>.pulled exists and holds the sha256 the host verified.
# Every change to a log removes its marker, so a marker never vouches for other bytes.
import hashlib
import os
import sys

from maus import LOG_DIR, free_bytes, moment, write_atomic  # noqa: F401 - write_atomic: here for the log code and the host
from maus.log.name import GAME_MAX, NAME_MAX, log_number  # noqa: F401 - log_number: here too for the host service
from micropython import const

DIR = LOG_DIR
EXT = ".jsonl"
PULLED = ".pulled"
_COUNTER = "counter"
_CHUNK = const(512)  # hashing / copying buffer
_STREAM = const(4096)  # stream() chunk for the host's fast pull
_BATCH = const(8)  # pulled logs make_room takes from one directory scan
_MAX_READ = const(16384)  # largest chunk the host may ask for
_OK = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."
RESERVE_FILE = "reserve"  # room kept for a running game's last records (maus.log.start, maus.log.writer)


def valid_name(name):
    # A log file name, never a path: letters, digits, _ - . only, no leading dot, .jsonl.
    if not isinstance(name, str) or not 0 < len(name) <= NAME_MAX or name[0] == ".":
        return False
    if not name.endswith(EXT) or ".." in name:
        return False
    for c in name.encode():
        if c not in _OK:
            return False
    return True


def _exists(path):
    try:
        os.stat(path)
        return True
    except OSError:
        return False


def _remove(path):
    try:
        os.remove(path)
        return True
    except OSError:
        return False


class LogStore:
    def __init__(self, root=""):
        # root: the mount point, "" or "/" on the unit, a test directory elsewhere
        if root and not root.endswith("/"):
            root += "/"
        self.dir = root + DIR
        self.root = root or "/"
        self.unrecovered = []  # logs boot recovery could not repair (flash full): retried at game start
        self.stray = (0, [])  # type: tuple[int, list[str]]  # (count, first names) of the files in logs/ that are none of ours (recover)
        try:
            os.mkdir(self.dir)
        except OSError:
            pass  # exists (or read-only: the first write will say so)

    def path(self, name):
        if not valid_name(name):
            raise ValueError("bad log name")
        return self.dir + "/" + name

    def create(self, name):
        # A new log file, open for writing (binary). logs/index names it first (maus.log.index): the boot
        # then finds the newest log without listing logs/. OSError if that index could not be kept true.
        p = self.path(name)
        with moment():
            import maus.log.index

            maus.log.index.opening(self.dir, name)
        return open(p, "wb")

    def entries(self):
        # [(file name, size or -1)] of the files in the logs directory: one directory scan (sizes from
        # ilistdir). A directory is listed with size -2: it is never a log.
        try:
            il = getattr(os, "ilistdir", None)
            if il is not None:
                return [(e[0], -2 if e[1] == 0x4000 else e[3] if len(e) > 3 else -1) for e in il(self.dir)]
            return [(n, -2 if os.stat(self.dir + "/" + n)[0] & 0x4000 else -1) for n in os.listdir(self.dir)]
        except OSError:
            return []

    def logs(self, entries=None):
        # [(name, size or -1)] of the logs this unit wrote, oldest first (the number prefix sorts by age).
        return sorted(e for e in (entries or self.entries()) if e[1] != -2 and log_number(e[0]) > 0)

    def names(self):
        return [e[0] for e in self.logs()]

    def size(self, name):
        return os.stat(self.path(name))[6]

    def sha256(self, name):
        h = hashlib.sha256()
        try:
            buf = bytearray(_CHUNK)  # here, not per store: a store is made wherever the free space is asked for
        except MemoryError:  # a game's fragmented heap (a host's pull marks its logs while one runs): slower, not refused
            buf = bytearray(32)
        mv = memoryview(buf)
        with open(self.path(name), "rb") as f:
            while True:
                n = f.readinto(buf)
                if not n:
                    break
                h.update(mv[:n])
        return _hex(h.digest())

    def is_pulled(self, name, sha=None):
        # Marker exists (and, given sha, holds it).
        try:
            with open(self.path(name) + PULLED, "rb") as f:
                got = f.read(80)
        except OSError:
            return False
        return sha is None or got == sha.encode()

    def listing(self):
        # One call for the host: [(name, size, sha256 hex, pulled)], oldest first.
        out = []
        for name, size in self.logs():
            try:
                sha = self.sha256(name)
                out.append((name, size if size >= 0 else self.size(name), sha, self.is_pulled(name, sha)))
            except OSError:
                pass  # vanished or unreadable: not listed
        return out

    def mark_pulled(self, name, sha):
        # Marks only if the file still has this sha256; True if marked.
        if not isinstance(sha, str) or self.sha256(name) != sha.lower():
            return False
        write_atomic(self.path(name) + PULLED, sha.lower().encode())
        return True

    def unmark(self, name):
        _remove(self.path(name) + PULLED)

    def delete(self, name):
        # Log first, then its marker: a crash in between leaves only an orphan marker.
        p = self.path(name)
        os.remove(p)
        _remove(p + PULLED)

    def read_chunk(self, name, offset, n):
        # Up to n bytes at offset (b"" at the end).
        _check_range(offset, n)
        with open(self.path(name), "rb") as f:
            f.seek(offset)
            return f.read(n)

    def stream(self, name, offset=0, out=None, chunk=_STREAM):
        # Write the file from offset to out (stdout's byte stream) in large chunks; returns bytes sent.
        _check_range(offset, chunk)
        if out is None:
            out = getattr(sys.stdout, "buffer", sys.stdout)
        buf = bytearray(chunk)
        mv = memoryview(buf)
        sent = 0
        with open(self.path(name), "rb") as f:
            f.seek(offset)
            while True:
                n = f.readinto(buf)
                if not n:
                    break
                out.write(mv[:n])
                sent += n
        return sent

    def free(self):
        return free_bytes(self.dir)

    def reserve_path(self):
        return self.dir + "/" + RESERVE_FILE

    def next_number(self):
        # Boot-persistent game number: max(counter file, newest log + 1). Saves the next one.
        # Only the unit's own names count (log_number): a stray 9999999999-x.jsonl never moves the sequence.
        n = 1
        p = self.dir + "/" + _COUNTER
        try:
            with open(p, "rb") as f:
                n = int(f.read(12))
        except (OSError, ValueError):
            pass
        if not 0 < n <= GAME_MAX:
            n = 1  # a garbled counter: the names alone give the next number
        try:  # streamed from the directory iterator: no list of 2,000 names in the heap at a game's start
            il = getattr(os, "ilistdir", None)
            for e in (il(self.dir) if il is not None else
                      ((x, os.stat(self.dir + "/" + x)[0] & 0xF000) for x in os.listdir(self.dir))):
                if e[1] != 0x4000:  # a directory is never a log
                    n = max(n, log_number(e[0]) + 1)
        except OSError:
            pass
        try:
            write_atomic(p, b"%d" % (n + 1))
        except OSError:
            _remove(p + ".tmp")  # full: the file names alone still give the next number
        return n

    def make_room(self, need, keep=(), feed=None):
        # Free `need` bytes by deleting logs the host pulled (their marker holds the log's sha256), oldest
        # first. An unpulled log is never deleted: when that is not enough the caller says the flash is full.
        # Constant memory: the directory is streamed and only the _BATCH oldest candidates are kept; a marker
        # whose log is gone (a cut between the two removals) is removed on the way. feed(): the watchdog's.
        # -> how many logs went.
        gone = 0
        after = 0  # logs numbered up to here were looked at
        while self.free() < need:
            batch = self._oldest_pulled(after, keep, feed)
            if not batch:
                break
            for num, name in batch:
                after = num
                if feed is not None:
                    feed()
                try:
                    ok = self.is_pulled(name, self.sha256(name))
                except OSError:
                    _remove(self.dir + "/" + name + PULLED)  # its log is gone: an orphan marker
                    continue
                if not ok:
                    continue  # the marker vouches for other bytes: not pulled
                try:
                    self.delete(name)
                except OSError:
                    continue
                gone += 1
                if self.free() >= need:
                    return gone
        return gone

    def _oldest_pulled(self, after, keep, feed=None):
        # [(number, name)] of the _BATCH oldest logs numbered above `after` that have a pulled marker, by age.
        out = []  # type: list[tuple[int, str]]
        try:
            il = getattr(os, "ilistdir", None)
            k = 0
            for e in (il(self.dir) if il is not None else ((x,) for x in os.listdir(self.dir))):
                k += 1
                if feed is not None and not k & 255:
                    feed()
                n = e[0]
                if not n.endswith(PULLED):
                    continue
                n = n[:-len(PULLED)]
                num = log_number(n)
                if num <= after or (out and len(out) >= _BATCH and num >= out[-1][0]) or n in keep:
                    continue
                i = len(out)
                while i and out[i - 1][0] > num:
                    i -= 1
                out.insert(i, (num, n))
                if len(out) > _BATCH:
                    out.pop()
        except OSError:
            pass
        return out


def _check_range(offset, n):
    if type(offset) is not int or type(n) is not int or offset < 0 or not 0 < n <= _MAX_READ:
        raise ValueError("bad offset or length")


def _hex(b):
    return "".join("%02x" % c for c in b)
