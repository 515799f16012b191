# The boot's repair of logs a power cut left open, done once a boot and let go again (maus.unit.boot):
# recover cuts a torn tail and closes a game that has no end record; files in logs/ that are none of the
# unit's are left alone and counted. The log reader (maus.log.read) is loaded by the repair only.
import os
import re

from maus.log.name import log_number
from maus.log.store import PULLED, RESERVE_FILE
from maus.log.writer import POWER_LOSS, encode
from micropython import const

_TAIL = const(1024)  # bytes read from a log's end to see if it finished cleanly
# A log's or its marker's name as log_number takes it (5-7 digits, a slug, .jsonl), matched in C: the boot's
# pass over 2,000 logs and their markers costs little more than the directory itself (re has no {m,n}).
_NAMEB = re.compile(b"^[0-9][0-9][0-9][0-9][0-9][0-9]?[0-9]?-[a-z0-9_]+\\.jsonl(\\.pulled)?$")


def ours(name):
    """A name in logs/ this unit made: a log, its pulled marker, the counter, the index, the reserve, a temp
    file."""
    if name.endswith(PULLED):
        name = name[:-len(PULLED)]
    elif name.endswith(".tmp"):
        return True
    return name == "counter" or name == "index" or name == RESERVE_FILE or log_number(name) > 0


def strays(entries, most=3):
    # (how many, the first `most` names) of the files in logs/ that are none of ours (a foreign file, a
    # directory): left alone, reported.
    k = 0
    first = []  # type: list[str]
    for e in entries:
        if e[1] == -2 or not ours(e[0]):
            k += 1
            if len(first) < most:
                first.append(e[0])
    return k, first


# --- boot recovery -------------------------------------------------------------------------------

def _finished(path, size, buf):
    # Fast path: the last line (read into buf) is a verified game_end/game_abort.
    from maus.log import read as logread

    n = min(size, len(buf))
    mv = memoryview(buf)
    with open(path, "rb") as f:
        f.seek(size - n)
        f.readinto(mv[:n])
    if buf[n - 1] != 10:  # newline
        return False
    i = buf.rfind(b"\n", 0, n - 1)
    if i < 0 and n < size:
        return False  # last line longer than buf: take the slow path
    rec, err = logread.check_line(bytes(mv[i + 1:n - 1]))
    return err is None and rec["type"] in logread.ENDS


def _scan(path, buf):
    # Check every line in chunks of buf (a line of any length, garbage, NULs); -> Checker (records not kept).
    from maus.log.check import read_chunks

    with open(path, "rb") as f:
        return read_chunks(f, buf)


def _copy(src, dst, n, buf, extra):
    # dst = the first n bytes of src + extra, committed once at close
    mv = memoryview(buf)
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        while n > 0:
            k = fi.readinto(buf)
            if not k:
                break
            k = min(k, n)
            fo.write(mv[:k])
            n -= k
        fo.write(extra)


def recover_one(store, name, buf=None, size=-1):
    # -> None if the log is fine, else a dict saying what was done.
    from maus.log import read as logread

    path = store.path(name)
    if size < 0:
        size = os.stat(path)[6]
    buf = buf or bytearray(_TAIL)
    if size and _finished(path, size, buf):
        return None
    c = _scan(path, buf)
    cut = size - c.good_end
    if c.good == 0:
        if c.lines > 1 or (c.lines == 1 and c.problems[0].what != logread.TORN):
            return {"name": name, "cut_bytes": 0, "records": 0, "damaged": True}  # not ours to cut
        # empty or one torn line: the power went before game_start was committed
        store.delete(name)
        return {"name": name, "cut_bytes": cut, "records": 0, "deleted": True}
    if c.end is not None and not cut:
        return None  # finished; any damage inside is the reader's to report
    last = c.last
    seq = last["seq"] + 1
    t = last["t"]
    extra = b""
    if c.end is None:
        extra = encode(seq, t, "recovered", {"cut_bytes": cut, "records": c.good})
        extra += encode(seq + 1, t, "game_abort", {"reason": POWER_LOSS})
    store.unmark(name)  # the bytes change: any pulled marker is void
    if cut:
        tmp = path + ".tmp"
        _copy(path, tmp, c.good_end, buf, extra)
        os.rename(tmp, path)  # atomic: old torn file or new repaired one
    elif extra:
        with open(path, "ab") as f:
            f.write(extra)  # one commit at close: both records or neither
    return {"name": name, "cut_bytes": cut, "records": c.good, "aborted": c.end is None}


def recover(store, feed=None):
    # At boot: repair what a power cut can have left unfinished; returns the reports (dicts) of the logs that
    # needed it. Games are played one at a time and each log ends before the next one starts, so only the
    # newest log can be open (and the one before it, when the newest is a start the cut left without its
    # first record): they alone are checked, and boot time does not grow with the finished logs.
    # logs/index (maus.log.index) names the newest log and whether it finished: when it agrees with the flash
    # the boot reads no directory at all; otherwise (missing, torn, stale) one pass over logs/ finds the
    # newest log (_walk) and the index is written again. feed(): the watchdog's.
    # Never raises OSError: a log that cannot be repaired is reported with "error" (store.unrecovered: tried
    # again at the next game's start).
    from maus.log import index as logindex

    buf = bytearray(_TAIL)  # one buffer for the whole boot
    store.unrecovered = []
    store.stray = (0, [])
    ix = logindex.read(store.dir)
    if ix is not None and ix[0] == logindex.counter(store.dir):
        out = _indexed(store, ix, buf, feed)
        if out is not None:
            return out
    return _walk(store, feed, buf)


def _one(store, name, buf, size):
    # recover_one, its failure a report
    try:
        return recover_one(store, name, buf, size)
    except OSError as e:
        store.unrecovered.append(name)
        try:
            os.remove(store.path(name) + ".tmp")
        except OSError:
            pass
        return {"name": name, "error": e}


def _index(store, name, r):
    # logs/index after the boot checked the newest log `name` ("": there is none); r: its report
    from maus.log import index as logindex

    d = store.dir
    try:
        if r is not None and "aborted" not in r:  # damaged, not repaired: it stays to be checked again
            logindex.write(d, logindex.counter(d), name, False, 0)
        else:
            logindex.write(d, logindex.counter(d), name, True, os.stat(store.path(name))[6] if name else 0)
    except OSError:
        pass  # neither written nor removed: it said unfinished, or it was found stale and will be again


def _indexed(store, ix, buf, feed):
    # The boot by the index: -> the reports, or None when the index disagrees with the flash (a scan then).
    _c, name, done, size = ix
    if not name:
        return []  # no log yet
    try:
        now = os.stat(store.path(name))[6]
    except OSError:
        return None  # the index names a log that is not there
    if done and now == size:
        return []  # finished, untouched since: not even read
    if feed is not None:
        feed()
    r = _one(store, name, buf, now)
    if r is not None and r.get("deleted"):
        return _walk(store, feed, buf) + [r]  # the one before it: found by a scan (rare: a cut at a start)
    _index(store, name, r)  # finished now (or a size the index did not know), else still to be checked
    return [r] if r is not None else []


def _walk(store, feed, buf):
    # One streamed pass over the directory (no list of its entries: 2,000 logs would not fit the heap) finds
    # the newest logs, temp files a cut left (removed) and files that are none of the unit's (left alone,
    # counted in store.stray for the boot's problems); then the newest are recovered and logs/index written.
    gone = []  # type: list[str]  # a few temp files to remove (more wait for the next boot)
    newest = [(0, b"", -1), (0, b"", -1)]  # the two newest logs (number, name, size), newest first
    k = 0
    first = []  # type: list[str]
    d = store.dir + "/"
    db = store.dir.encode()
    il = getattr(os, "ilistdir", None)
    match = _NAMEB.match
    try:
        n = 0
        # bytes names (no str made for each of 2,000 entries); a log or a marker costs a match and an int
        for e in (il(db) if il is not None else
                  ((x, os.stat(db + b"/" + x)[0] & 0xF000) for x in os.listdir(db))):
            n += 1
            if feed is not None and not n & 255:
                feed()
            name = e[0]
            if e[1] != 0x4000:
                if match(name) is not None:
                    i = name.find(b"-")
                    j = len(name)
                    if name[j - 1] == 100:  # "d": a log's pulled marker (.pulled)
                        if j - i <= 38 and j <= 71 and int(name[:i]):
                            continue
                    elif j - i <= 31 and j <= 64:
                        num = int(name[:i])
                        if num > newest[1][0]:
                            x = (num, name, e[3] if len(e) > 3 else -1)  # type: ignore[misc]
                            if num > newest[0][0]:
                                newest[1] = newest[0]
                                newest[0] = x
                            else:
                                newest[1] = x
                            continue
                        if num:
                            continue
                # none of the unit's logs or markers (rare): the counter, the reserve, a temp file, or a stray
                try:
                    t = str(name, "utf-8")
                except UnicodeError:
                    t = ""
                if t and ours(t):
                    if t.endswith(".tmp") and len(gone) < 8:
                        gone.append(t)
                    continue
            k += 1
            if len(first) < 3:
                try:
                    first.append(str(name, "utf-8"))
                except UnicodeError:
                    first.append(repr(name))
    except OSError:
        pass
    store.stray = (k, first)
    for name in gone:
        try:
            os.remove(d + name)
        except OSError:
            pass
    out = []  # type: list[dict]
    keep = None  # the newest log left, "" when there is none
    r = None
    for _num, name, size in newest:
        if not name:
            keep = ""  # no log before the ones deleted: none is left
            break
        name = str(name, "utf-8")
        if feed is not None:
            feed()
        r = _one(store, name, buf, size)
        if r is not None:
            out.append(r)
        if r is None or not r.get("deleted"):
            keep = name
            break  # the newest log is whole: the ones before it were closed before it began
    if keep is not None:
        _index(store, keep, r if keep else None)
    else:  # both newest went: the one before them is not known here, nor to the next boot's index
        try:
            os.remove(d + "index")
        except OSError:
            pass
    out.reverse()
    return out
