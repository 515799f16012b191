# The host service: the unit answers the host over its USB console from its own main loop, so no host
# command stops a game. Framed, checksummed requests and responses (docs/protocol.md):
#
#   #MB<v><kind> <seq:4 hex> <len:4 hex> <crc32:8 hex> <payload: len bytes>\n
#
# kind Q request (host -> unit, JSON), R final response (JSON), P part of a response (JSON or text),
# D data (8 hex digits of file offset, then file bytes), E event (a log record, seq 0000). The crc32 covers
# "<v><kind> <seq> <len>" and the decoded payload. CR (0x0D) is never part of a frame: a payload escapes
# CR and DLE as DLE, byte ^ 0x40, and receivers drop every CR (a console may turn \n into \r\n).
#
# The main loop calls poll(wait_ms) once a pass, outside race windows only: a request that comes in during a
# race waits in the console's input buffer until the race closes. Reads never block: select.poll on stdin
# (the ESP32 port polls its UART / USB ring buffer, extmod/modselect.c + ports/esp32/mphalport.c).
# Buffers are made once; a log is streamed a chunk per frame, a listing an entry batch per frame, so
# neither needs memory that grows with the file or the number of logs.
#
# Over 600 lines on purpose: this is what a host reaches while a game runs, and it is in RAM as one module;
# the rarer operations are maus.host.ops (loaded per request), the REPL's service maus.host.repl. Split
# further, each piece would cost a module's fixed heap at a game's moments (docs/architecture.md).
import binascii
import gc
import hashlib
import json
import os
import sys

from maus import moment
from maus.host import frame
from maus.host.frame import BAUD_WAIT_MS, BOOT_BAUD, PROTO, why  # noqa: F401 - the rates: here for the host's tests too
from maus.host.frame import HDR as _HDR
from maus.host.frame import fits as _fits
from maus.host.frame import hexs as _hexs
from maus.host.frame import puthex as _puthex
from maus.host.frame import unhex as _unhex
from maus.log.store import log_number, valid_name
from micropython import const

_V = const(0x31)  # "1"
_RX_MAX = const(480)  # largest request payload
_CHUNK = const(1024)  # file bytes per data frame during a game (a frame blocks the loop ~90 ms at 115200 baud)
_BIG_CHUNK = const(8192)  # and when no game runs, one a pass: 0.4 % framing instead of 3 % (a console that never
# waits: USB, the virtual unit's pty; on a UART one takes 0.7 s, a pass that long misses a double press)
_AWAKE_MS = const(1000)  # after a request the console is looked at each ms: the next request comes soon
_LIST_BYTES = const(900)  # listing text per frame
_HASH_SLICE = const(8192)  # prefix bytes hashed per poll when a read resumes
_IN_PER_POLL = const(160)  # console bytes taken per poll: typing at the console cannot stall the loop
_NO_BOUND = const(1 << 20)
_STALL_MS = const(500)  # a frame is written whole: a gap this long inside one means its header was a stray
_DLE = const(0x10)
_CR = const(0x0D)
_NL = const(0x0A)
_BAUD_LOST_MS = const(1000)  # at a switched rate: bytes this long that make no valid frame (the host talks at another rate)
_BUSY = b'{"ok": false, "error": "nomem", "msg": "no memory to answer this now: ask again"}'


# Requests served by maus.host.ops (settings, the clock, the card writer's steps, enrolment): they come
# seldom, so their code is in RAM only while one is served.
_BRINGUP = "bringup.json"  # maus.checks.bringup.FILE
_RARE = ("bringup", "settings", "set", "reset_settings", "clock", "card_write", "card_read", "enrol", "enrolled",
         "card_done", "baud")
_CLASS = ("name", "seats", "copied")  # a classroom's requests: maus.settings.classroom has them (loaded as maus.host.ops)


class HostService:
    frames_per_poll = 2  # data frames sent per main-loop pass while a log streams

    def __init__(self, ctx, inp=None, out=None, ready=None, app=True):
        # ctx: the Unit (or _Shelf at the REPL): store, settings, hw, status, mode, game, log, race, rfid.
        self.ctx = ctx
        self.app = app
        self.inp = inp if inp is not None else sys.stdin.buffer
        self.out = out if out is not None else sys.stdout.buffer
        self.poller = None  # the console's select.poll when it is a stream: the loop's idle wakes on it
        if ready is None:
            import select

            p = select.poll()
            p.register(sys.stdin, select.POLLIN)
            self.poller = p
            ready = self._stdin_ready
        self.ready = ready
        self.rx = bytearray(_HDR + _RX_MAX + 1)
        self._rxv = memoryview(self.rx)
        self._n = 0  # bytes of the frame being received
        self._ri = self._rn = 0  # rx[_ri:_rn]: bytes of a failed frame to search again (_bad)
        self._rx_at = 0  # ticks_ms when the console last had bytes of the frame in progress
        self.wake = None  # the app's HostWake (its Ctrl-C rule); None: the REPL's service
        self._want = 0  # its payload length once the header is in
        self._one = bytearray(1)
        self.buf = bytearray(_CHUNK)
        self._bufv = memoryview(self.buf)
        self.job = None  # generator of the request in progress
        self.seq = 0
        self.events_until = 0  # ticks_ms until which log records go out as E frames
        self.card_until = -1  # ticks_ms until which the pad belongs to the host; -1: not
        self.awake_until = -1  # ticks_ms until which the loop polls often (a host session is on); -1: not
        self.dead = False  # stdin at its end (a pipe or /dev/null): nothing to serve for now
        self.dead_until = 0
        self.requests = 0
        self.bad_frames = 0
        self.done = False  # serve(): an `exit` request came
        self.baud = BOOT_BAUD  # the console's rate (op baud, maus.host.ops)
        self.baud_at = -1  # ticks_ms of a switch no valid frame has confirmed yet; -1: none
        self._noise_at = -1  # ticks_ms of the first byte since the last valid frame, at a switched rate
        self.tx = frame.Tx(ctx.hw, self.out)  # frames out, paced where a UART's transmit FIFO would hold the loop

    # --- the main loop's hook -----------------------------------------------------------------------
    def serve(self, now=None):
        """Each main-loop pass outside races (HostWake.serve): serve the host; -> the most ms the loop may idle, or None (no bound)."""
        w = self.poll(_NO_BOUND)
        return None if w == _NO_BOUND else w

    def poll(self, wait_ms=0):
        """Serve what the host sent, advance the request in progress; returns how long the loop may idle."""
        if self.dead and _diff(self._now(), self.dead_until) >= 0:
            self.dead = False
        if not self.dead:
            self._read()
        if self.baud != BOOT_BAUD:
            self._baud_check()
        if self.job is not None:
            if self.tx.fifo and self._players():
                return 1  # a player's input is being taken: the stream waits (a frame holds the loop ~90 ms)
            try:
                if next(self.job, None) is None:
                    self.job = None
            except Exception as e:  # noqa: BLE001 - a failing request answers, never stops the game
                self._drop_job()
                self._fail(self.seq, e, "nofile" if isinstance(e, OSError) and e.args and e.args[0] == 2 else "io")
            if self.job is not None:
                return 0  # more to send: come back at once
        if self.card_until >= 0 and _diff(self._now(), self.card_until) > 0:
            self._card_release()
        if self.awake_until >= 0:
            if _diff(self._now(), self.awake_until) < 0:
                # The loop's idle looks at the console each ms (hw.idle, HostWake.waker); a console it cannot
                # look at (the scenarios' line model): a pass each ms
                return wait_ms if self.poller is not None else min(wait_ms, 1)
            self.awake_until = -1
        return wait_ms

    def _players(self):
        # A button down, a press to confirm or a click that may become a double: the loop must pass every few ms
        # (a join's double press was lost behind a log's frames), so no frame goes out now.
        c = self.ctx
        cap = getattr(c, "capture", None)
        if cap is None:
            return False  # the REPL's service: no game's buttons
        if cap.pending or cap.busy():
            return True
        g = getattr(c, "gest", None)
        return g is not None and g.next_due(c.hw.ticks_ms()) >= 0

    # --- the console's rate (docs/protocol.md, `baud`) ----------------------------------------------------------
    def console(self, rate):
        """The console UART to `rate`, once what was written has gone out (maus.hw.console, loaded for it). The
        state first: a switch that raised still falls back."""
        self.baud = rate
        self.tx.ch = (10000000 + rate - 1) // rate  # µs a byte (10 bits)
        self.baud_at = self._noise_at = -1
        hw = self.ctx.hw
        if hw is not None:
            with moment():
                import maus.hw.console

                maus.hw.console.switch(hw, rate)

    def _baud_check(self):
        # At a switched rate: no valid frame within BAUD_WAIT_MS of the switch (the host's line cannot do the
        # rate), or bytes for _BAUD_LOST_MS that make none (the host went back to the boot rate): back to it.
        now = self._now()
        if ((self.baud_at >= 0 and _diff(now, self.baud_at) >= BAUD_WAIT_MS)
                or (self._noise_at >= 0 and _diff(now, self._noise_at) >= _BAUD_LOST_MS)):
            self.console(BOOT_BAUD)

    def _drop_job(self):
        job, self.job = self.job, None
        if job is not None:
            try:
                job.close()  # runs its `with` exits: an open log file is closed now, not at some later GC
            except Exception:  # noqa: BLE001
                pass

    def _stdin_ready(self):
        for _ in self.poller.ipoll(0):
            return True
        return False

    def _now(self):
        return self.ctx.hw.ticks_ms() if self.ctx.hw is not None else _ticks_ms()

    # --- receiving ----------------------------------------------------------------------------------------
    def _read(self):
        one = self._one
        rx = self.rx
        got = False
        for _ in range(_IN_PER_POLL):
            if self._ri < self._rn:  # a failed frame's bytes behind its "#", searched again (_bad)
                c = rx[self._ri]
                self._ri += 1
                self._byte(c)
                continue
            self._ri = self._rn = 0
            if not self.ready():
                break
            n = self.inp.readinto(one)
            if n is None:
                break  # nothing after all
            if not n:
                # End of input (a pipe with no writer, /dev/null): look again in a second, not every pass.
                self.dead = True
                self.dead_until = (self._now() + 1000) & 0x3FFFFFFF
                return
            if not got and self.baud != BOOT_BAUD and self._noise_at < 0:
                self._noise_at = self._now()
            got = True
            c = one[0]
            w = self.wake
            if w is not None:
                if w.intr(c):  # the app reads Ctrl-C as a byte: HostWake.intr says if it stops the app
                    continue
            elif c == 3:
                # The REPL's service (no app): a board's console driver turns Ctrl-C into KeyboardInterrupt
                # before the byte reaches stdin; a tty in raw mode (the unix port) hands it over.
                raise KeyboardInterrupt
            if c != _CR:
                self._byte(c)
        else:
            return  # more to read: the next pass goes on
        # The console is empty for now.
        if self.wake is not None:
            self.wake.quiet()
        if self._n:
            now = self._now()
            if got:
                self._rx_at = now
            elif _diff(now, self._rx_at) >= _STALL_MS:
                self._bad(self._n, -1)  # a header whose payload never came: it was none

    def _byte(self, c):
        rx = self.rx
        n = self._n
        if n < _HDR:
            # Each header byte is checked as it comes, so a false start gives way to the next "#" at once
            # (no header byte after the first can be a "#": nothing before this one needs a second look).
            if not _fits(n, c):
                self._n = 1 if c == 0x23 else 0
                if self._n:
                    rx[0] = c
                elif n:
                    self.bad_frames += 1
                return
            rx[n] = c
            n += 1
            if n == _HDR:
                self._want = _unhex(rx, 11, 4)
                if self._want > _RX_MAX:
                    self.bad_frames += 1
                    n = 0
            self._n = n
            return
        if n < _HDR + self._want:
            rx[n] = c
            self._n = n + 1
            return
        if c != _NL:
            self._bad(n, c)
            return
        self._n = 0
        self._frame(self._want)

    def _bad(self, n, c):
        # rx[:n], then byte c (-1: none), held no frame (a stray header, a damaged or cut request): counted,
        # and the search for a "#" resumes behind this one's (docs/protocol.md), so a stray header never
        # hides a request that came within its claimed length. The bytes to search again go where _read
        # replays them from (rx[_ri:_rn]), in place: the frame being rebuilt is written below them.
        self.bad_frames += 1
        self._n = 0
        rx = self.rx
        i = rx.find(b"#", 1, n)
        if i < 0:
            if c != 0x23:
                return
            i = n  # none inside: only c, a "#", starts the next
        k = n - i + (c >= 0)  # bytes to search again
        ri = self._ri
        if ri < self._rn:  # failed while replaying: c was rx[ri - 1], and they go right before it
            end = ri - 1 if c >= 0 else ri
            for j in range(n - 1, i - 1, -1):  # backwards: the regions may overlap
                end -= 1
                rx[end] = rx[j]
            self._ri = ri - k
        else:
            for j in range(i, n):
                rx[j - i] = rx[j]
            if c >= 0:
                rx[n - i] = c
            self._ri = 0
            self._rn = k

    def _frame(self, n):
        rx = self._rxv
        seq = _unhex(self.rx, 6, 4)
        try:
            crc = binascii.crc32(rx[_HDR:_HDR + n], binascii.crc32(rx[3:15]))
            bad = crc >> 16 != _unhex(self.rx, 16, 4) or crc & 0xFFFF != _unhex(self.rx, 20, 4)
        except MemoryError:  # no room even to check it: not answered, the host asks again
            self.bad_frames += 1
            return
        if bad:
            self._bad(_HDR + n, -1)  # not answered (the host sends a damaged request again); a "#" in it is looked at
            return
        self.requests += 1
        self.baud_at = self._noise_at = -1  # a valid frame: the host is at this rate
        self.awake_until = (self._now() + _AWAKE_MS) & 0x3FFFFFFF
        for again in (True, False):
            try:
                self._serve(seq, n)
            except Exception as e:  # noqa: BLE001 - every request is answered; none stops the unit
                self._drop_job()
                if again and isinstance(e, MemoryError):
                    # what the attempt made is garbage now (the season bench: a `mark`'s hash and buffers, twice in
                    # 300 games, issue 27): once more after a collect, before the host is told to ask again
                    e = None
                    gc.collect()
                    continue
                self._fail(seq, e, "args" if isinstance(e, (KeyError, TypeError, ValueError, AttributeError,
                                                            IndexError))
                           else "io" if isinstance(e, OSError) else "internal")
            return

    def _fail(self, seq, e, code):
        # The answer to a request that raised e; never raises itself. Out of memory: the busy answer made at
        # build time (nothing to allocate but the frame's crc), or none, and the host's wait runs out.
        try:
            if not isinstance(e, MemoryError):
                self._error(seq, code, why(e) if code != "internal" else "%s: %s" % (type(e).__name__, why(e)))
                return
        except MemoryError:
            pass
        try:
            self.send(0x52, seq, _BUSY)  # "R"
        except MemoryError:
            pass

    def _serve(self, seq, n):
        rx = self._rxv
        if self.rx[3] != _V:
            self._error(seq, "proto", "this unit speaks host protocol %d; the host sent %s: update %s" % (
                PROTO, chr(self.rx[3]), "the unit (mausbox deploy)" if self.rx[3] > _V else "mausbox on the host"))
            return
        try:
            req = json.loads(bytes(rx[_HDR:_HDR + n]))
            op = req["op"]
        except (ValueError, KeyError, TypeError, IndexError, RuntimeError):  # RuntimeError: nested too deep
            self._error(seq, "args", "not a request")
            return
        self._drop_job()  # a new request replaces the one in progress (the host gave up on it)
        self.seq = seq
        # An op is a short lowercase name: anything else is unknown before it reaches getattr (a name over
        # 255 bytes makes MicroPython's getattr raise RuntimeError, not AttributeError).
        fn = getattr(self, "op_" + op, None) if isinstance(op, str) and _opname(op) else None
        if fn is None and (op in _RARE or op in _CLASS):
            fn = op  # maus.host.ops (maus.settings.classroom) has it: loaded for the request and let go again
        elif fn is None:
            self._error(seq, "op", "unknown request %r" % (op if not isinstance(op, str) else op[:40],))
            return
        r = fn(req) if fn is not op else _rare(self, op, req)
        if r is not None:
            if isinstance(r, dict):
                self.reply(seq, r)
            else:
                self.job = r  # a generator: it sends its frames over the next polls

    # --- sending ------------------------------------------------------------------------------------------
    def send(self, kind, seq, data, n=-1, prefix=None):
        """One frame; data is bytes-like (escaped here when it holds CR or DLE), prefix a few ASCII bytes
        sent before it (a data frame's offset)."""
        if n < 0:
            n = len(data)
        mv = memoryview(data)[:n]
        extra = _specials(data, n)
        # (a prefix holds no CR or DLE: escaped, it is the same bytes)
        self.tx.send(kind, seq, (prefix, mv) if prefix else (mv,), extra, self._escaped if extra else None)

    def _escaped(self, b):
        _write_escaped(self.tx.put, b, len(b))

    def reply(self, seq, obj):
        """The answer to request seq (an R frame): obj's JSON, "ok" true unless obj says, in pieces (frame.Tx.reply)."""
        self.tx.reply(seq, obj)

    def _error(self, seq, code, msg):
        self.reply(seq, {"ok": False, "error": code, "msg": msg})

    def event(self, line):
        """A log record as it is written (the log's listener): an E frame while `monitor` subscribes.
        True if sent (the unit then prints no `EV` line for it: one copy on the wire)."""
        if not self.events_until:
            return False
        if _diff(self._now(), self.events_until) >= 0:
            self.events_until = 0  # the lease ran out: the host went away
            return False
        n = len(line)
        if n and line[n - 1] == _NL:
            n -= 1
        self.send(0x45, 0, line, n)  # "E"
        return True

    # --- requests -----------------------------------------------------------------------------------------
    def op_hello(self, req):
        return frame.hello(self.ctx, self.app)

    def op_status(self, req):
        return frame.status(self.ctx, self.app, self.requests, self.bad_frames, self._now())

    def op_logs(self, req):
        skip = req.get("skip", 0)
        if type(skip) is not int or skip < 0:
            raise ValueError("bad skip")
        return self._list(self.seq, skip)

    def _list(self, seq, skip=0):
        # Every log and pulled marker in the logs folder, straight from the directory iterator: constant
        # memory for any number of logs. Text lines "name size" after a line "+index" (the frame's first
        # entry); the host pairs logs and markers. A file
        # that is none of the unit's logs (a stray or foreign name, a directory) is not listed but counted
        # ("strays", the first few named): it never stops a pull. skip: entries the host already has (a
        # listing resumed after a lost frame; the order is the directory's, the same while it is unchanged).
        d = self.ctx.store.dir
        buf = self.buf
        n = 0
        count = 0
        strays = 0
        named = []  # type: list[str]
        try:
            it = _ilistdir(d.encode())  # bytes names: nothing to encode per entry
        except OSError:
            it = ()
        for e in it:
            name = e[0]
            k = len(name)
            base = k - 7 if name.endswith(b".pulled") else k
            if (len(e) > 1 and e[1] == 0x4000) or log_number(name[:base]) < 0:
                if name not in (b"counter", b"index", b"reserve") and not name.endswith(b".tmp"):
                    strays += 1
                    if len(named) < 3:
                        named.append(name.decode("utf-8", "replace")[:64])
                continue
            size = e[3] if len(e) > 3 else _size(d, name)  # littlefs gives the size; VfsPosix (the sim) not
            if size < 0:  # unreadable (a dangling link): skipped and reported, the rest is still served
                strays += 1
                if len(named) < 3:
                    named.append(name.decode("utf-8", "replace")[:64])
                continue
            count += 1
            if count <= skip:
                continue
            if n + k + 12 > _LIST_BYTES:
                self.send(0x50, seq, buf, n)  # "P"
                n = 0
                yield 1
            if not n:  # each frame says where it starts: "+index" (a lost frame shows as a gap)
                buf[0] = 0x2B
                n = _putdec(buf, 1, count - 1)
                buf[n] = _NL
                n += 1
            buf[n:n + k] = name
            n += k
            buf[n] = 0x20
            n = _putdec(buf, n + 1, size)
            buf[n] = _NL
            n += 1
        if n:
            self.send(0x50, seq, buf, n)
        try:
            bringup = os.stat(_BRINGUP)[6]  # the bring-up check's summary (maus.checks.bringup): pulled with the logs
        except OSError:
            bringup = None
        self.reply(seq, {"n": count - min(skip, count), "skip": skip, "total": count, "strays": strays,
                         "stray": named, "bringup": bringup})

    def op_read(self, req):
        name = req["name"]
        off = req.get("off", 0)
        if not (valid_name(name) or name == _BRINGUP) or type(off) is not int or off < 0:
            raise ValueError("bad log name or offset")
        path = name if name == _BRINGUP else self.ctx.store.dir + "/" + name  # the bring-up summary: beside logs/
        try:
            size = os.stat(path)[6]
        except OSError:
            self._error(self.seq, "nofile", "no log %s" % name)
            return None
        if off > size:
            self._error(self.seq, "range", "offset %d is past the end (%d)" % (off, size))
            return None
        return self._stream(self.seq, path, off, size)

    def _stream(self, seq, path, off, size):
        # The file's bytes [off, size) as D frames, then R with the sha256 of [0, size) (the size when the
        # read began: a log still being written grows, the host pulls the rest next time).
        buf = self.buf
        if self.ctx.mode != "play" and not self.tx.fifo:
            try:
                buf = bytearray(_BIG_CHUNK)  # freed with the stream; a fragmented heap gets the small one
            except MemoryError:
                pass
        mv = memoryview(buf)
        chunk = len(buf)
        per_poll = self.frames_per_poll if chunk == _CHUNK and not self.tx.fifo else 1  # a UART: ~90 ms a pass
        h = hashlib.sha256()
        pre = bytearray(b"00000000")
        with open(path, "rb") as f:
            done = 0
            while done < off:  # a resumed read: the digest covers the bytes the host already holds
                k = f.readinto(mv[:min(chunk, off - done)])
                if not k:
                    break
                h.update(mv[:k])
                done += k
                if done % _HASH_SLICE < chunk:
                    self.send(0x50, seq, b"")  # "P", empty: still at work (the host's wait starts again)
                    yield 1
            pos = off
            while pos < size:
                for _ in range(per_poll):
                    k = f.readinto(mv[:min(chunk, size - pos)])
                    if not k:
                        size = pos  # shrank under us: the digest says what was sent
                        break
                    h.update(mv[:k])
                    _puthex(pre, 0, pos, 8)
                    self.send(0x44, seq, buf, k, pre)  # "D"
                    pos += k
                    if pos >= size:
                        break
                if pos < size:
                    yield 1
        self.reply(seq, {"size": size, "sha256": _hexs(h.digest())})

    def op_mark(self, req):
        name = req["name"]
        if not valid_name(name):
            raise ValueError("bad log name")
        return {"marked": self.ctx.store.mark_pulled(name, req["sha256"])}

    def op_events(self, req):
        # Log records go out as E frames for the next s seconds (the host renews; 0 stops).
        s = req.get("s", 10)
        if type(s) is not int or not 0 <= s <= 600:
            raise ValueError("s must be 0..600")
        self.events_until = ((self._now() + s * 1000) & 0x3FFFFFFF or 1) if s else 0
        return {}

    def op_cancel(self, req):
        return {}  # the job in progress was dropped when this request came in

    def _card_release(self):
        self.card_until = -1
        r = self.ctx.rfid
        if r is not None:
            r.resume()

    def op_exit(self, req):
        if self.app:
            self._error(self.seq, "op", "the app is running: nothing to exit")
            return None
        self.done = True
        return {}




def _rare(svc, op, req):
    with moment():
        if op in _CLASS:
            from maus.settings import classroom

            return getattr(classroom, "op_" + op)(svc, req)
        from maus.host import ops

        return getattr(ops, "op_" + op)(svc, req)


def _size(d, name):
    try:
        return os.stat(d + "/" + name.decode())[6]
    except OSError:
        return -1


def _ilistdir(d):
    il = getattr(os, "ilistdir", None)
    if il is not None:
        return il(d)
    return ((n, _mode(d + b"/" + n)) for n in os.listdir(d))  # CPython (the tests): sizes by stat


def _mode(p):
    try:
        return os.stat(p)[0] & 0xF000
    except OSError:
        return 0  # unreadable: _list skips and reports it


def _diff(a, b):
    # ticks_diff for the 2**30 ms wrap, without importing time here
    return ((a - b + 0x20000000) & 0x3FFFFFFF) - 0x20000000


def _ticks_ms():
    import time

    return time.ticks_ms()


def _opname(op):
    if not 0 < len(op) <= 24:
        return False
    for c in op:
        if not ("a" <= c <= "z" or c == "_"):
            return False
    return True


def _putdec(b, i, v):
    # v's decimal digits at b[i:]; returns the index after them
    k = i
    while True:
        b[k] = 0x30 + v % 10
        k += 1
        v //= 10
        if not v:
            break
    j = k - 1
    while i < j:
        b[i], b[j] = b[j], b[i]
        i += 1
        j -= 1
    return k


def _specials(data, n):
    # How many bytes escaping adds (CR and DLE become two bytes each).
    if data.find(b"\r", 0, n) < 0 and data.find(b"\x10", 0, n) < 0:
        return 0
    extra = 0
    for i in range(n):
        if data[i] == _CR or data[i] == _DLE:
            extra += 1
    return extra


def _write_escaped(w, data, n):
    # Rare (a log holding CR or DLE): plain runs as they are, each special byte as DLE, byte ^ 0x40.
    mv = memoryview(data)
    start = 0
    esc = bytearray(2)
    esc[0] = _DLE
    for i in range(n):
        c = data[i]
        if c == _CR or c == _DLE:
            if i > start:
                w(mv[start:i])
            esc[1] = c ^ 0x40
            w(esc)
            start = i + 1
    if n > start:
        w(mv[start:n])


# --- maus.unit.core.HostWake's: the service made when a frame starts, and let go when the host has gone quiet ----
def woken(w, mark):
    """The service for the HostWake w, which has just seen a frame's "#" (mark: maus.loaded() before this
    module was imported); None if there is no room for it now (the host asks again)."""
    import maus

    try:
        svc = HostService(w.ctx, w.inp, w.out, w.ready)
    except MemoryError:
        maus.unload_since(mark)
        return None
    w._mod = sys.modules.get("maus.host.service")
    w._mods = tuple(k for k in sys.modules if k not in mark)
    svc.requests = w.requests
    svc.bad_frames = w.bad_frames
    svc.events_until = w.events_until  # a monitor subscribed in a game (the desk's) goes on
    svc.wake = w
    svc.poller = w.poller  # the same console: the loop's idle wakes on it (its 1 ms look otherwise)
    svc._byte(0x23)
    svc._rx_at = svc._now()
    w.svc = svc
    w._seen = svc.requests
    w._quiet_from = svc._now()
    return svc


def rest(w):
    """A game is chosen (maus.unit.core Unit._switch): w's service goes now if nothing is under way (no request
    coming in or being answered, no monitor's or card lease), not LINGER_MS after the host's last request: left
    lingering into the join and the start, its ~17 KB was where the game's start made what it keeps. The next
    request wakes it again."""
    svc = w.svc
    if svc.job is None and not svc._n and svc._ri >= svc._rn and not svc.events_until and svc.card_until < 0:
        asleep(w)


def asleep(w, game=False):
    """Let w's service go, with the modules its import loaded; its counters stay with w. game: a game begins
    (HostWake.lull): a request in progress is answered `game`, as the desk answers it; -> the bytes read of a
    request not read whole yet (and those still to search again, _bad), for the desk to read on from, or None."""
    import maus

    svc = w.svc
    part = None
    if game:
        if svc.job is not None:
            svc._drop_job()
            try:
                svc._error(svc.seq, "game", "a game is in progress: ask again when it has ended")
            except MemoryError:
                pass  # the host, which has no answer, asks again (the desk answers then)
        if svc._n or svc._ri < svc._rn:
            try:
                part = bytes(svc._rxv[:svc._n]) + bytes(svc._rxv[svc._ri:svc._rn])
            except MemoryError:
                pass
    svc._drop_job()
    if svc.card_until >= 0:
        svc._card_release()
    if svc.baud != BOOT_BAUD:  # the host has gone quiet or a game starts: the console at its boot rate again
        svc.console(BOOT_BAUD)
    w.requests = svc.requests
    w.bad_frames = svc.bad_frames
    w.events_until = svc.events_until  # the desk sends them in a game
    w.svc = None
    w._mod = None
    for k in w._mods:
        maus.unload(k)
    w._mods = ()
    return part
