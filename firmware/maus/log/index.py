# logs/index: what the boot needs to know about the newest log, so that it need not list logs/ (2,000 logs
# are 2,000 entries to read from littlefs at every boot). Loaded for a moment and let go again: when a log is
# created (maus.log.store.create), when its game has ended (maus.log.writer GameLog.ended) and at boot
# (maus.log.repair).
# One line: "<counter> <newest log or -> <o|d> <size> <crc32 hex>\n" (docs/log-format.md, "The index").
# It names a log before the log exists, so no log is ever newer than the index says; a missing, torn or
# garbled index, or one that disagrees with the flash (the counter file, the log's presence), means a scan.
import os
from binascii import crc32

from maus import write_atomic

NAME = "index"


def counter(d):
    # the counter file's number, 0 when it is missing or out of range: another numbering than the index's
    # (older firmware, a host tool) shows as a different counter
    try:
        with open(d + "/counter", "rb") as f:
            n = int(f.read(12))
    except (OSError, ValueError):
        return 0
    return n if 0 < n <= 9999999 else 0


def line(c, name, done, size):
    b = b"%d %s %s %d" % (c, (name or "-").encode(), b"d" if done else b"o", size)
    return b + b" %08x\n" % (crc32(b) & 0xFFFFFFFF)


def read(d):
    # -> (counter, newest log name or "", finished, size), or None: missing, torn, garbled
    from maus.log.name import log_number

    try:
        with open(d + "/" + NAME, "rb") as f:
            b = f.read(120)
    except OSError:
        return None
    i = b.rfind(b" ")
    if i < 0 or b[-1:] != b"\n":
        return None
    try:
        if int(b[i + 1:-1], 16) != crc32(b[:i]) & 0xFFFFFFFF:
            return None
        p = b[:i].split(b" ")
        if len(p) != 4 or p[2] not in (b"o", b"d"):
            return None
        name = str(p[1], "utf-8")
        c = int(p[0])
        size = int(p[3])
    except (ValueError, UnicodeError):
        return None
    if name == "-":
        name = ""
    elif log_number(name) <= 0:
        return None
    return c, name, p[2] == b"d", size


def write(d, c, name, done, size):
    # -> True when written. Else the index is removed (a stale one could hide a newer log) and False; OSError
    # only when it could neither be written nor removed.
    p = d + "/" + NAME
    try:
        write_atomic(p, line(c, name, done, size))
        return True
    except OSError:
        pass
    for q in (p + ".tmp", p):
        try:
            os.remove(q)
        except OSError as e:
            if q == p and e.args and e.args[0] != 2:  # ENOENT: there is none
                raise
    return False


def opening(d, name):
    """Before a new log is created: the index names it, unfinished (raises OSError if a stale index stays)."""
    write(d, counter(d), name, False, 0)


def ended(d, name):
    """A log's end record is on flash: the index says it is finished, at its size (best effort: an index
    left saying unfinished only has the boot read the log's last line)."""
    try:
        write(d, counter(d), name, True, os.stat(d + "/" + name)[6])
    except OSError:
        pass
