# The log checker: reads a whole log and says where and how it is damaged (maus.log.read loads it
# for read() and read_stream()). Pure and shared by the unit (boot recovery), the host and the tests.
from maus.log.read import (
    AFTER_END,
    BAD_RECORD,
    EMPTY,
    ENDS,
    INTERNAL,
    NO_END,
    NO_START,
    NOT_BYTES,
    SEQ_GAP,
    TORN,
    check_line,
    split_line,
)


class Problem:
    def __init__(self, line, offset, what, detail=""):
        self.line = line  # 1-based line number
        self.offset = offset  # byte offset of the line's start
        self.what = what
        self.detail = detail

    def __repr__(self):
        s = "line %d (byte %d): %s" % (self.line, self.offset, self.what)
        return s + ": " + self.detail if self.detail else s


class Checker:
    # Feed lines one by one (feed), then call finish(). Keeps records only if asked to, and at most `limit`
    # problems (the rest are counted in `more`): garbage with many newlines must not fill the heap.
    def __init__(self, keep=True, limit=-1):
        self.keep = keep
        self.limit = limit
        self.more = 0
        self.records = []
        self.problems = []
        self.lines = 0
        self.start = None  # the game_start record
        self.end = None  # the game_end / game_abort record
        self.last = None  # the last good record
        self.good_end = 0  # byte offset just after the last good, complete line
        self.good = 0  # number of good records
        self._next = 0  # expected seq

    def _bad(self, offset, what, detail=""):
        if 0 <= self.limit <= len(self.problems):
            self.more += 1
            return
        self.problems.append(Problem(self.lines, offset, what, detail))

    def feed(self, line, offset, complete=True):
        # line: bytes without the newline; complete: it was newline-terminated
        self.lines += 1
        try:
            self._feed(line, offset, complete)
        except Exception as e:  # noqa: BLE001 - never raise, report it
            self._bad(offset, INTERNAL, repr(e))

    def _feed(self, line, offset, complete):
        rec, err = check_line(line)
        if err is not None:
            self._bad(offset, TORN if not complete else err[0], err[1] if complete else err[0])
            self._next += 1  # it held (at least) one record
            return
        if not complete:
            self._bad(offset, TORN, "last record has no newline")
            return
        self.take(rec, offset, len(line) + 1)

    def take(self, rec, offset, length):
        # A record whose line (length bytes with its newline) passed its check.
        seq = rec["seq"]
        if self.good == 0 and rec["type"] != "game_start":
            self._bad(offset, NO_START, "first record is %s" % rec["type"])
        elif rec["type"] == "game_start" and self.good:
            self._bad(offset, BAD_RECORD, "second game_start")
        if seq != self._next:
            self._bad(offset, SEQ_GAP, "seq %d, expected %d" % (seq, self._next))
        if self.end is not None:
            self._bad(offset, AFTER_END, rec["type"])
        self._next = seq + 1
        self.good += 1
        self.good_end = offset + length
        self.last = rec
        if rec["type"] == "game_start" and self.start is None:
            self.start = rec
        elif rec["type"] in ENDS and self.end is None:
            self.end = rec
        if self.keep:
            self.records.append(rec)

    def finish(self, size):
        try:
            if self.lines == 0:
                self._bad(0, EMPTY)
            elif self.start is None and not any(p.what == NO_START for p in self.problems):
                self._bad(0, NO_START, "no game_start record")
            if self.lines and self.end is None:
                self.problems.append(Problem(self.lines, self.good_end, NO_END, "game not finished"))
        except Exception as e:  # noqa: BLE001
            self.problems.append(Problem(0, 0, INTERNAL, repr(e)))
        self.size = size
        return self

    @property
    def ok(self):
        return not self.problems

    def damaged(self):
        # Problems other than a missing game_end.
        return [p for p in self.problems if p.what != NO_END]


def read_chunks(f, buf, limit=8):
    """Check a log from a binary file (seekable) in chunks of len(buf) bytes: the memory it takes is bounded
    by buf whatever a line's length (boot recovery: a line longer than the heap, NULs, garbage). A line that
    fits in buf is checked as read_stream() checks it; a longer one by its CRC over its chunks and its head
    (seq, t and type come first in every record). Records are not kept."""
    c = Checker(False, limit)
    cap = len(buf)
    mv = memoryview(buf)
    pos = 0  # file offset of buf[0]: the start of the line being read
    try:
        while True:
            f.seek(pos)
            n = f.readinto(buf)
            if not n:
                break
            at = 0
            while True:  # every whole line in the chunk
                i = buf.find(b"\n", at, n)
                if i < 0:
                    break
                c.feed(bytes(mv[at:i]), pos + at)
                at = i + 1
            if at:
                pos += at
                if n < cap and at == n:
                    break  # the file ends with its last line's newline
                continue
            if n < cap:  # the file's end without a newline: a torn tail
                c.feed(bytes(mv[:n]), pos, False)
                pos += n
                break
            pos = _long_line(c, f, buf, pos)
    except Exception as e:  # noqa: BLE001 - a read error is reported, not raised
        c._bad(pos, INTERNAL if not isinstance(e, OSError) else TORN, repr(e))
    return c.finish(pos)


def _find(buf, n):
    return buf.find(b"\n", 0, n)


def _long_line(c, f, buf, start):
    # A line longer than buf at `start`: find its end, check its CRC in chunks; -> the offset after it.
    import binascii

    cap = len(buf)
    mv = memoryview(buf)
    head = bytes(mv[:64])
    end = start + cap
    done = False
    while True:  # its end: the next newline, or the file's end
        f.seek(end)
        n = f.readinto(buf)
        if not n:
            break
        i = _find(buf, n)
        if i >= 0:
            end += i
            done = True
            break
        end += n
    length = end - start  # without its newline
    c.lines += 1
    rec = None
    if done and length > 18:
        f.seek(start)
        left = length - 18  # the body: every byte before ,"crc":"hhhhhhhh"}
        k = 0
        while left > 0:
            n = f.readinto(mv[:min(cap, left)])
            if not n:
                break
            k = binascii.crc32(mv[:n], k)
            left -= n
        tail = f.read(18)
        if split_line(b"0" + tail) is not None and tail[8:16] == b"%08x" % (k & 0xFFFFFFFF):
            rec = _head(head)
    if rec is None:
        c._bad(start, TORN if not done else BAD_RECORD, "a line of %d bytes" % length)
        c._next += 1
    else:
        try:
            c.take(rec, start, length + 1)
        except Exception as e:  # noqa: BLE001
            c._bad(start, INTERNAL, repr(e))
    return end + 1 if done else end


def _head(b):
    # {"seq":N,"t":MS,"type":"NAME" at the start of a record -> {"seq", "t", "type"} or None
    if not b.startswith(b'{"seq":'):
        return None
    i = 7
    out = {}
    for key, nxt in ((b"seq", b',"t":'), (b"t", b',"type":"')):
        j = i
        while j < len(b) and 0x30 <= b[j] <= 0x39:
            j += 1
        if j == i or b[j:j + len(nxt)] != nxt:
            return None
        out[key.decode()] = int(b[i:j])
        i = j + len(nxt)
    j = b.find(b'"', i)
    if j <= i:
        return None
    out["type"] = b[i:j].decode()
    return out


def read_stream(f, keep=True):
    # Parse a log from a binary file object, line by line (no copy of the whole file in RAM).
    c = Checker(keep)
    off = 0
    try:
        while True:
            line = f.readline()
            if not line:
                break
            done = line.endswith(b"\n")
            c.feed(line[:-1] if done else line, off, done)
            off += len(line)
    except Exception as e:  # noqa: BLE001 - a read error is reported, not raised
        c.problems.append(Problem(c.lines + 1, off, INTERNAL if not isinstance(e, OSError) else TORN, repr(e)))
    return c.finish(off)


def read(data, keep=True):
    # Parse a whole log (bytes) -> Checker with records, problems, start, end.
    c = Checker(keep)
    try:
        if isinstance(data, str):
            data = data.encode()
        elif not isinstance(data, (bytes, bytearray)):
            try:
                data = bytes(data)
            except Exception:  # noqa: BLE001
                c.problems.append(Problem(0, 0, NOT_BYTES, type(data).__name__))
                c.size = 0
                return c
        n = len(data)
        pos = 0
        while pos < n:
            nl = data.find(b"\n", pos)
            if nl < 0:
                c.feed(bytes(data[pos:]), pos, False)
                break
            c.feed(bytes(data[pos:nl]), pos)
            pos = nl + 1
        return c.finish(n)
    except Exception as e:  # noqa: BLE001
        c.problems.append(Problem(c.lines, 0, INTERNAL, repr(e)))
        c.size = 0
        return c
