# Game log writer: one JSON line per record, CRC32 on each, flushed (littlefs: committed) every time.
# A failing write never reaches game code: the log goes "degraded" and the game goes on.
# Only what a game in progress needs stays loaded: opening a game's log (start_game) is maus.log.start, the
# boot's repair of logs cut short (recover, recover_one) maus.log.repair, its end and abort maus.log.end,
# each loaded for that and let go again; they are reachable here too for the host and the tests.
# Line layout (docs/log-format.md): {"seq":N,"t":MS,"type":"NAME",...fields...,"crc":"hhhhhhhh"}\n, the
# CRC32 (zlib/binascii) over the exact bytes before ,"crc":" as 8 lowercase hex digits.
import binascii
import json

from maus import json_pieces, moment
from maus.ticks import ticks_diff
from micropython import const

VERSION = 2  # log format version, "v" in game_start (2: press late/locked, claim passed)
CRC_KEY = b',"crc":"'
RESERVE = 24576  # free bytes wanted before a game starts when its game has no estimate (maus.log.start.WORST)
HOLD = const(32)  # records a race window can hold (6 players' presses, gestures and prompts fit)
POWER_LOSS = "power loss"


def crc_hex(body):
    return b"%08x" % (binascii.crc32(body) & 0xFFFFFFFF)


def encode(seq, t, typ, fields):
    # -> the full line (bytes, newline included). Keys sorted: same bytes on every port.
    return b"".join(pieces(seq, t, typ, fields))


def pieces(seq, t, typ, fields):
    # -> the line as a list of bytes, one piece a field, an item of a dict or list field, and the CRC (its
    # CRC32 summed piece by piece): written piece by piece, a record never needs one block the size of its
    # line (game_start is ~750 bytes), nor of a field (a 6-player game_end's breakdown is ~500), more than a
    # long-lived unit's fragmented heap may have in one piece at a game's end.
    if not isinstance(typ, str) or not typ:
        raise ValueError("bad record type")
    out = [(b'{"seq":%d,"t":%d,"type":' % (seq, t)) + json.dumps(typ).encode()]
    for k in sorted(fields):
        if not isinstance(k, str) or k in ("seq", "t", "type", "crc"):
            raise ValueError("bad field name %r" % (k,))
        json_pieces(out, "," + json.dumps(k) + ":", fields[k], 1)
    crc = 0
    for p in out:
        crc = binascii.crc32(p, crc)
    out.append(CRC_KEY + (b"%08x" % (crc & 0xFFFFFFFF)) + b'"}\n')
    return out


class GameLog:
    # Created by start_game(); games call record(type, fields).
    # Set on the log only when they change (a smaller attribute table for each log):
    degraded = False  # a write failed: the runtime shows a warning
    error = None  # the OSError that degraded the log
    lost = 0  # records not written since then
    closed = False
    short = False  # the flash had less room than this game's log may need (maus.log.start)
    end_at = None  # type: tuple | None  # (the log path, logs/reserve, the sim wrap or None): set by start_game
    warned = False  # the unit has said the log went degraded (maus.unit.ends.degraded)

    def __init__(self, name, clock, f, listener=None):
        self.name = name
        self.seq = 0
        self.t = 0
        self.listener = listener  # called with every line as its pieces (monitor), may be None
        self._clock = clock
        self._last = clock()
        self._f = f
        self._ok = 0  # seq after the last record committed to flash: numbering goes on from it after a failure
        # A race window (maus.capture.irq.RaceWindow) holds records here until the race is decided: a flash write holds
        # the ESP32's GPIO interrupts off for milliseconds. Preallocated, so holding allocates nothing.
        self.holding = False
        self.held = 0
        self._held = [None] * (3 * HOLD)  # type: list  # type, fields, time of each record held, in turn

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
                h = self._held
                k *= 3
                h[k] = typ
                h[k + 1] = fields
                h[k + 2] = self._now()
                self.held += 1
                seq = self.seq
                self.seq += 1
                return seq
            self.release()  # full: write what is held, in order (the window pays for it)
            self.holding = True
        seq = self.seq
        parts = pieces(seq, self._now(), typ, fields or {})
        self.seq = seq + 1
        self._write(parts, seq)
        self._commit()
        return seq

    def _write(self, parts, seq):
        # One record, piece by piece; committed by _commit's flush (littlefs keeps the file as of its last
        # sync, and a file whose write failed is not synced again: a torn record never reaches flash).
        if self.listener is not None:
            self.listener(parts)
        if self._f is None:
            self.lost += 1
            self.seq = self._ok  # a record not written takes no seq: the log on flash stays contiguous
            return
        try:
            for p in parts:
                self._f.write(p)
        except OSError as e:
            self._fail(e, seq + 1 - self._ok)

    def _commit(self):
        if self._f is not None:
            try:
                self._f.flush()  # littlefs sync: the records are on flash now
                self._ok = self.seq
            except OSError as e:
                self._fail(e, self.seq - self._ok)

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
        h = self._held
        for k in range(n):
            i = 3 * k
            self._write(pieces(seq + k, h[i + 2], h[i], h[i + 1] or {}), seq + k)
            h[i] = h[i + 1] = None
        self._commit()

    def _fail(self, e, lost):
        # littlefs commits at sync: what came after the last one is not on flash (a failed file never syncs),
        # and the numbering goes on from there
        self.degraded = True
        self.error = e
        self.lost += lost
        self.seq = self._ok
        try:
            self._f.close()
        except OSError:
            pass
        self._f = None

    def end(self, scores, winners, breakdown, why, index=True):
        # scores/breakdown keyed by player id (int or str), winners a list of player ids (maus.log.end). index
        # False: the caller has logs/index updated later (ended()), as the unit does once the game's code has gone.
        with moment():
            import maus.log.end

            maus.log.end.end(self, scores, winners, breakdown, why)
        if index:
            self.ended()

    def abort(self, reason):
        with moment():
            import maus.log.end

            maus.log.end.abort(self, reason)
        self.ended()

    def ended(self):
        """Every record, the end too, is on flash: logs/index says the log is finished (the boot need not read
        it). Not with maus.log.end in RAM, nor a game's end moment: a game's end is its tightest moment."""
        at = self.end_at
        if at is not None and self._ok and self._ok == self.seq and not self.held:
            i = at[0].rfind("/")
            with moment():
                import maus.log.index

                maus.log.index.ended(at[0][:i], at[0][i + 1:])

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
