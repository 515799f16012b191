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
# The ESP32 port's console write (ports/esp32/uart.c uart_stdout_tx_strn) stays in C until all it was given is in the
# UART's 128-byte transmit FIFO (hw.tx_fifo): a ~500-byte status answer written at once held the buttons' soft IRQs
# off for ~35 ms (a press then got its first edge that late). The desk writes a frame in slices that fit and spins
# (bytecode: handlers run) while the FIFO drains, so no write waits. In a game the console runs at the boot
# rate, 115,200 baud. maus.host.service paces its frames the same way.
_CHAR_US = const(87)  # a byte at 115,200 baud (10 bits), rounded up
_SPARE = const(32)  # of the FIFO: room for what else the unit printed (EV and SAY lines)
_SLICE = const(32)  # bytes per write, once the FIFO is full


class Desk:
    _again = -1  # the seq of a status request whose answer found no memory at the game's peak: tried again (serve)
    _again_at = 0  # ticks_ms of its first try

    def __init__(self, w):
        self.w = w  # the HostWake: the console, the Ctrl-C rule, the request counters, the monitor's lease
        self._dk = bytearray(frame.HDR + _KEEP)  # the frame coming in: its header, then what is kept
        self._dn = 0  # bytes of it come so far (those past the kept ones are only counted)
        self._dw = 0  # its payload length
        self._dat = 0  # ticks_ms of its first byte
        self._oh = bytearray(b"#MB1R 0000 0000 00000000 ")  # the answer's header
        hw = w.ctx.hw
        self._fifo = getattr(hw, "tx_fifo", 0) if hw is not None and frame.console(hw) == "uart" else 0
        self._us = getattr(hw, "ticks_us", None) if self._fifo else None  # None: no FIFO to pace
        self._txe = self._us() if self._us is not None else 0  # by when the FIFO has sent what the desk wrote (_put)

    def event(self, parts):
        """A log record for a subscribed monitor (HostWake.event), as an E frame; False if none is subscribed."""
        w = self.w
        if not w.events_until:
            return False
        if ticks_diff(w.ctx.hw.ticks_ms(), w.events_until) >= 0:
            w.events_until = 0  # the lease ran out: the host went away
            return False
        try:
            line = b"".join(parts)
            n = len(line)
            if n and line[n - 1] == 0x0A:
                n -= 1
            if line.find(b"\r", 0, n) >= 0 or line.find(b"\x10", 0, n) >= 0:
                return False  # never in a JSON line; the service would escape it
            self._send(0x45, 0, memoryview(line)[:n])  # "E"
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
                self._send(0x52, seq, _IN_GAME)
                return
            self._reply(seq, r)
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
            self._reply(seq, frame.status(c, True, w.requests, w.bad_frames, c.hw.ticks_ms()))
        except MemoryError:
            now = c.hw.ticks_ms()
            if not again:
                self._again_at = now
            if ticks_diff(now, self._again_at) < _AGAIN_MS:
                self._again = seq
            else:
                self._busy(seq)

    def _reply(self, seq, r):
        frame.reply(self._w(), self._oh, seq, r)

    def _busy(self, seq):
        try:
            self._send(0x52, seq, _BUSY)
        except MemoryError:
            pass  # not even that: the host, which had no answer, asks again

    def _send(self, kind, seq, payload):
        frame.send(self._w(), self._oh, kind, seq, (payload,))

    def _w(self):
        # the console's writer: paced (_put) where a transmit FIFO would hold the loop (the module's note)
        return self._put if self._us is not None else self._out().write

    def _out(self):
        return self.w.out if self.w.out is not None else sys.stdout.buffer

    def _put(self, b):
        # b written in slices that fit in the transmit FIFO now (the module's note): the frame still goes out whole
        # in this pass (nothing else the unit prints can come between its bytes), and the pin IRQs' handlers run in
        # the waits between slices.
        us = self._us
        out = self._out()
        cap = self._fifo - _SPARE
        n = len(b)
        i = 0
        while i < n:
            room = cap - (self._held(us) + _CHAR_US - 1) // _CHAR_US
            want = n - i if n - i < _SLICE else _SLICE
            if room < want:
                self._wait((want - room) * _CHAR_US)
                room = cap - (self._held(us) + _CHAR_US - 1) // _CHAR_US
            k = n - i if n - i < room else room
            if k <= 0:
                continue
            out.write(b[i:i + k] if i or k < n else b)
            self._txe = (us() + self._held(us) + k * _CHAR_US) & 0x3FFFFFFF
            i += k

    def _wait(self, t):
        # t µs spinning in bytecode, whose branches run the pin handlers within a few µs (time.sleep_us runs none in
        # its last 155 µs: mp_hal_delay_us); a board's delay that short is a busy loop too. hw.spend: the sim's time.
        # An armed piezo (Mucks Mäuschen Still) is sampled meanwhile: the armed loop (Unit._watch) does not run
        # until the frame has gone out (a status answer: ~45 ms at 115,200 baud), and a knock's ring stays over the
        # threshold for only ~25 ms (0.3 of full scale): one that came while an answer went out was no alarm (issue
        # 27, the season's game 232). An alarm raised here waits in the detector (pending) for the loop's next pass.
        us = self._us
        c = self.w.ctx
        d = c.detector
        t0 = us()
        if d is not None and d.armed:
            d.watch(c._piezo_read, us, c._stop_watch, t)
        spend = c.hw.spend
        while ticks_diff(us(), t0) < t:
            spend(t)

    def _held(self, us):
        # µs the bytes the desk wrote stay in the FIFO (0 once sent; an old mark, past ticks_diff's range, too)
        d = ticks_diff(self._txe, us())
        return d if 0 < d <= self._fifo * _CHAR_US else 0


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
