# The host link in a game (docs/protocol.md, "In a game"): the host service is not in RAM then (its import alone
# is about 17 KB, more than a game at its peak can spare). The desk reads the frames itself, in buffers made
# when the game starts (HostWake.lull, so the game's peak includes them), and answers hello, status, settings,
# reading the clock, events and cancel; everything else is answered "game", and `logs pull` waits for the end.
import binascii
import json
import sys

from micropython import const

from maus.host import frame
from maus.ticks import ticks_diff

_KEEP = const(80)  # payload bytes kept: every request the desk answers is shorter
_RX_MAX = const(480)  # as maus.host.service: the largest request payload
_STALL_MS = const(500)  # as maus.host.service: a header whose payload stops coming was a stray
_IN_PER_POLL = const(160)  # as maus.unit.core
_DEAD_MS = const(1000)
_AGAIN_MS = const(250)  # a status answer that found no memory is tried again on the next passes this long, then "busy"
_BUSY = b'{"ok": false, "error": "nomem", "msg": "no memory to answer this now: ask again"}'  # maus.host.service's
_IN_GAME = b'{"ok": false, "error": "game", "msg": "a game is in progress: ask again when it has ended"}'


class Desk:
    _again = -1  # the seq of a status request whose answer found no memory at the game's peak: tried again (serve)
    _again_at = 0  # ticks_ms of its first try

    def __init__(self, w):
        self.w = w  # the HostWake: the console, the Ctrl-C rule, the request counters, the monitor's lease
        self._dk = bytearray(frame.HDR + _KEEP)  # the frame coming in: its header, then what is kept
        self._dn = 0  # bytes of it come so far (those past the kept ones are only counted)
        self._dw = 0  # its payload length
        self._dat = 0  # ticks_ms of its first byte
        # the answers, paced as the service's (in a game the console runs at the boot rate, 115,200 baud)
        self.tx = frame.Tx(w.ctx.hw, w.out if w.out is not None else sys.stdout.buffer)
        self.tx.idle = self._sample

    def event(self, parts):
        """A log record for a subscribed monitor (HostWake.event), as an E frame; False if none is subscribed."""
        w = self.w
        if not w.events_until:
            return False
        if ticks_diff(w.ctx.hw.ticks_ms(), w.events_until) >= 0:
            w.events_until = 0  # the lease ran out: the host went away
            return False
        try:
            for p in parts:
                if p.find(b"\r") >= 0 or p.find(b"\x10") >= 0:
                    return False  # never in a JSON line; the service would escape it
            k = len(parts) - 1
            last = parts[k]
            if last and last[len(last) - 1] == 0x0A:  # the record's newline: the frame has its own
                parts = list(parts)
                parts[k] = last[:len(last) - 1]
            self.tx.send(0x45, 0, parts)  # "E"
        except MemoryError:
            return False  # the unit prints its EV line instead
        return True

    def serve(self):
        """A main-loop pass in a game (HostWake.serve): the frames read and answered."""
        w = self.w
        if self._again >= 0:
            seq = self._again
            self._again = -1
            self._status(seq, True)
        one = w._one
        for _ in range(_IN_PER_POLL):
            if not w.ready():
                break
            n = w.inp.readinto(one)
            if n is None:
                break
            if not n:
                w.dead_until = (w.ctx.hw.ticks_ms() + _DEAD_MS) & 0x3FFFFFFF
                return None
            c = one[0]
            if w.intr(c) or c == 0x0D:
                continue
            self._byte(c)
        else:
            return 0  # more to read
        w.quiet()
        if self._dn and ticks_diff(w.ctx.hw.ticks_ms(), self._dat) >= _STALL_MS:
            self._dn = 0  # a header whose payload never came
            w.bad_frames += 1
        return None

    def take(self, data):
        """Bytes the service had read of a request it had not read whole when the game began (HostWake.lull):
        the desk reads on from them, so that request is answered too."""
        for c in data:
            self._byte(c)

    def _byte(self, c):
        d = self._dk
        if not self._dn:
            self._dat = self.w.ctx.hw.ticks_ms()
        k = self._dn
        if k < frame.HDR:
            if not frame.fits(k, c):
                if k:
                    self.w.bad_frames += 1
                self._dn = 1 if c == 0x23 else 0
                d[0] = c
                return
            d[k] = c
            k += 1
            if k == frame.HDR:
                self._dw = frame.unhex(d, 11, 4)
                if self._dw > _RX_MAX:
                    self.w.bad_frames += 1
                    k = 0
            self._dn = k
        elif k < frame.HDR + self._dw:
            if k < len(d):
                d[k] = c
            self._dn = k + 1
        else:
            self._dn = 0
            if c == 0x0A:
                self._answer(k - frame.HDR)
            else:
                self.w.bad_frames += 1
                if c == 0x23:
                    self._dn = 1
                    d[0] = c

    def _answer(self, n):
        w = self.w
        d = self._dk
        seq = frame.unhex(d, 6, 4)
        full = n <= _KEEP
        try:
            mv = memoryview(d)
            if full:
                crc = binascii.crc32(mv[frame.HDR:frame.HDR + n], binascii.crc32(mv[3:15]))
                if crc >> 16 != frame.unhex(d, 16, 4) or crc & 0xFFFF != frame.unhex(d, 20, 4):
                    w.bad_frames += 1
                    return  # damaged: the host sends it again
            w.requests += 1
            op = _op(d, frame.HDR, frame.HDR + min(n, _KEEP))
            c = w.ctx
            r = None
            if op == b"hello":
                r = frame.hello(c, True)
            elif op == b"status":
                self._status(seq, False)
                return
            elif op == b"settings":
                st = c.settings
                r = {"values": st.values, "source": st.source, "message": st.message}
            elif op == b"cancel":
                r = {}
            elif full and (op == b"clock" or op == b"events"):
                req = json.loads(bytes(mv[frame.HDR:frame.HDR + n]))
                if op == b"clock" and req.get("rtc") is None:
                    r = {"wall": frame.wall(c.hw)}
                elif op == b"events":
                    s = req.get("s", 10)
                    if type(s) is int and 0 <= s <= 600:
                        w.events_until = ((c.hw.ticks_ms() + s * 1000) & 0x3FFFFFFF or 1) if s else 0
                        r = {}
            if r is None:
                self.tx.send(0x52, seq, (_IN_GAME,))
                return
            self.tx.reply(seq, r)
        except MemoryError:  # no room to answer at the game's peak: "busy", the host asks again (as the service)
            self._busy(seq)
        except Exception:  # noqa: BLE001 - a bad request: the host asks again
            pass

    def _status(self, seq, again):
        # The status answer (~500 bytes in small pieces). At the game's peak there may be no room even for them for a
        # moment (a season of games polled twice a second met it about once in 100 games): tried again on the next
        # passes for _AGAIN_MS, as the moment goes, before the answer is "busy" (the host asks again).
        w = self.w
        c = w.ctx
        try:
            self.tx.reply(seq, frame.status(c, True, w.requests, w.bad_frames, c.hw.ticks_ms()))
        except MemoryError:
            now = c.hw.ticks_ms()
            if not again:
                self._again_at = now
            if ticks_diff(now, self._again_at) < _AGAIN_MS:
                self._again = seq
            else:
                self._busy(seq)

    def _busy(self, seq):
        try:
            self.tx.send(0x52, seq, (_BUSY,))
        except MemoryError:
            pass  # not even that: the host, which had no answer, asks again

    def _sample(self, t):
        # Before the answer's writer waits t µs for the FIFO: an armed piezo (Mucks Mäuschen Still) is sampled
        # meanwhile. The armed loop (Unit._watch) does not run until the frame has gone out (a status answer: ~45 ms
        # at 115,200 baud), and a knock's ring stays over the threshold for only ~25 ms (0.3 of full scale): one that
        # came while an answer went out was no alarm (issue 27, the season's game 232). An alarm raised here waits in
        # the detector (pending) for the loop's next pass.
        c = self.w.ctx
        d = c.detector
        if d is not None and d.armed:
            d.watch(c._piezo_read, self.tx.us, c._stop_watch, t)


def _op(d, i, end):
    # The request's op, from its JSON text as far as the desk kept it (b"" if not found): "op", a colon, a string.
    i = d.find(b'"op"', i, end)
    if i < 0:
        return b""
    i += 4
    while i < end and d[i] in b" :":
        i += 1
    if i >= end or d[i] != 0x22:
        return b""
    j = d.find(b'"', i + 1, end)
    return bytes(d[i + 1:j]) if j > 0 else b""
