# Game log writer: one JSON line per record, CRC32 on each, flushed (littlefs: committed) every time.
# A failing write never reaches game code: the log goes "degraded" and the game goes on.
# Boot recovery (recover) cuts a torn tail and closes a game that has no end record.
import json
import os

from micropython import const

from maus import logread
from maus.logstore import EXT, LogStore, write_atomic  # noqa: F401 - LogStore re-exported
from maus.ticks import ticks_diff

_RESERVED = ("seq", "t", "type", "crc")
_SEP = (",", ":")
_TAIL = const(1024)  # bytes read from a log's end to see if it finished cleanly
RESERVE = 24576  # free bytes wanted before a game starts
HOLD = const(32)  # records a race window can hold (6 players' presses, gestures and prompts fit)
POWER_LOSS = "power loss"


def encode(seq, t, typ, fields):
    # -> the full line (bytes, newline included). Keys sorted: same bytes on every port.
    if not isinstance(typ, str) or not typ:
        raise ValueError("bad record type")
    parts = ['{"seq":%d,"t":%d,"type":%s' % (seq, t, json.dumps(typ))]
    for k in sorted(fields):
        if not isinstance(k, str) or k in _RESERVED:
            raise ValueError("bad field name %r" % (k,))
        parts.append(",%s:%s" % (json.dumps(k), json.dumps(fields[k], separators=_SEP)))
    body = "".join(parts).encode()
    return body + logread.CRC_KEY + logread.crc_hex(body) + b'"}\n'


class GameLog:
    # Created by start_game(); games call record(type, fields).
    def __init__(self, store, name, clock, f, listener=None):
        self.store = store
        self.name = name
        self.seq = 0
        self.t = 0
        self.degraded = False  # a write failed: the runtime shows a warning
        self.error = None  # the OSError that degraded the log
        self.lost = 0  # records not written since then
        self.closed = False
        self.dropped = []  # type: list[str]  # unpulled logs deleted to make room: show them
        self.listener = listener  # called with every line (monitor), may be None
        self._clock = clock
        self._last = clock()
        self._f = f
        # A race window (maus.race) holds records here until the race is decided: a flash write holds
        # the ESP32's GPIO interrupts off for milliseconds. Preallocated, so holding allocates nothing.
        self.holding = False
        self.held = 0
        self._hold_typ = [""] * HOLD
        self._hold_f = [None] * HOLD  # type: list
        self._hold_t = [0] * HOLD

    def _now(self):
        # ms since game start (game_start is 0); summed step by step so it never wraps
        now = self._clock()
        if self.seq == 0:
            self._last = now
            return 0
        d = ticks_diff(now, self._last)
        self._last = now
        if d > 0:
            self.t += d
        return self.t

    def record(self, typ, fields=None):
        # Append one record; returns its seq. Raises only on programming errors (bad fields).
        if self.holding:
            k = self.held
            if k < HOLD:
                if not isinstance(typ, str) or not typ:
                    raise ValueError("bad record type")
                self._hold_typ[k] = typ
                self._hold_f[k] = fields
                self._hold_t[k] = self._now()
                self.held = k + 1
                seq = self.seq
                self.seq += 1
                return seq
            self.release()  # full: write what is held, in order (the window pays for it)
            self.holding = True
        line = encode(self.seq, self._now(), typ, fields or {})
        seq = self.seq
        self.seq += 1
        self._write(line)
        self._commit()
        return seq

    def _write(self, line):
        if self.listener is not None:
            self.listener(line)
        if self._f is None:
            self.lost += 1
            return
        try:
            self._f.write(line)
        except OSError as e:
            self._fail(e)

    def _commit(self):
        if self._f is not None:
            try:
                self._f.flush()  # littlefs sync: the records are on flash now
            except OSError as e:
                self._fail(e)

    def hold(self):
        """A race window opens: keep records in memory (no flash write, no encoding) until release()."""
        self.holding = True

    def release(self):
        """The race is decided: write the held records in order, with the times they were made, and
        commit them with one sync (after a power cut: all of them or none)."""
        self.holding = False
        n = self.held
        if not n:
            return
        self.held = 0
        seq = self.seq - n
        for k in range(n):
            f = self._hold_f[k]
            self._write(encode(seq + k, self._hold_t[k], self._hold_typ[k], f or {}))
            self._hold_f[k] = None
        self._commit()

    def _fail(self, e):
        self.degraded = True
        self.error = e
        self.lost += 1
        try:
            self._f.close()
        except OSError:
            pass
        self._f = None

    def end(self, scores, winners, breakdown, why):
        # scores/breakdown keyed by player id (int or str), winners a list of player ids.
        self.release()
        self.record("game_end", {"scores": _skeys(scores), "winners": list(winners),
                                 "breakdown": _skeys(breakdown), "why": why})
        self.close()

    def abort(self, reason):
        self.release()
        self.record("game_abort", {"reason": reason})
        self.close()

    def close(self):
        if self.held:
            self.release()
        self.holding = False
        self.closed = True
        if self._f is not None:
            try:
                self._f.close()
            except OSError as e:
                self.degraded = True
                self.error = e
            self._f = None


def _skeys(d):
    return {str(k): v for k, v in d.items()}


def start_game(store, clock, game, variant, players, board, unit, fw, settings, wall=None, ticks=0,
               reserve=RESERVE, listener=None, wrap=None):
    # Make room, open logs/<NNNNN>-<game>.jsonl and write game_start. Never raises OSError:
    # on a full or broken flash the returned log is degraded and the game goes on.
    # players: [(id, colour, young)] or [{"id":..,"colour":..,"young":..}]
    # wrap(f): the simulator's flash layer around the file (maus.hw.sim flash_file), None on a board.
    dropped = []
    f = None
    err = None
    name = None
    try:
        dropped = store.make_room(reserve)
    except OSError as e:
        err = e
    if store.unrecovered:
        recover(store)  # there may be room now
    try:
        name = "%05d-%s%s" % (store.next_number(), _slug(game), EXT)
        f = store.create(name)
        if wrap is not None:
            f = wrap(f)
    except OSError as e:
        err = e
    log = GameLog(store, name, clock, f, listener)
    log.dropped = dropped
    pl = []
    for p in players:
        if isinstance(p, dict):
            pl.append({"id": p["id"], "colour": p["colour"], "young": bool(p.get("young", False))})
        else:
            pl.append({"id": p[0], "colour": p[1], "young": bool(p[2])})
    log.record("game_start", {"v": logread.VERSION, "game": game, "variant": variant, "players": pl,
                              "board": board, "unit": unit, "fw": fw, "settings": settings,
                              "wall": wall, "ticks": ticks})
    if f is None:
        log.degraded = True
        log.error = err
    if dropped:
        log.record("note", {"text": "deleted unpulled logs to make room", "logs": dropped})
    return log


def _slug(game):
    s = "".join(c if ("a" <= c <= "z" or "0" <= c <= "9" or c == "_") else "_" for c in str(game).lower())
    return s[:24] or "game"


def wall_iso(tm):
    # time.localtime() tuple -> "YYYY-MM-DDTHH:MM:SS"
    return "%04d-%02d-%02dT%02d:%02d:%02d" % tuple(tm[:6])


# --- boot recovery -------------------------------------------------------------------------------

def _finished(path, size, buf):
    # Fast path: the last line (read into buf) is a verified game_end/game_abort.
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


def _scan(path):
    # Check every line; -> Checker (records not kept).
    with open(path, "rb") as f:
        return logread.read_stream(f, keep=False)


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
    path = store.path(name)
    if size < 0:
        size = os.stat(path)[6]
    buf = buf or bytearray(_TAIL)
    if size and _finished(path, size, buf):
        return None
    c = _scan(path)
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


def recover(store):
    # At boot: repair every log; returns the reports (dicts) of those that needed it.
    # Never raises OSError: a log that cannot be repaired is reported with "error".
    ents = store.entries()  # one directory scan: littlefs metadata reads are the cost here
    store.tidy(ents)
    out = []
    buf = bytearray(_TAIL)  # one buffer for the whole boot
    store.unrecovered = []
    for name, size in store.logs(ents):
        try:
            r = recover_one(store, name, buf, size)
        except OSError as e:
            r = {"name": name, "error": e}
            store.unrecovered.append(name)
            try:
                os.remove(store.path(name) + ".tmp")
            except OSError:
                pass
        if r is not None:
            out.append(r)
    return out
