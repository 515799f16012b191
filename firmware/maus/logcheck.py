# The log checker: reads a whole log and says where and how it is damaged (maus.logread loads it
# for read() and read_stream()). Pure and shared by the unit (boot recovery), the host and the tests.
from maus.logread import (
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
    # Feed lines one by one (feed), then call finish(). Keeps records only if asked to.
    def __init__(self, keep=True):
        self.keep = keep
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
        self.good_end = offset + len(line) + 1
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
