"""UnitLink: the host's one link to a unit, over any serial port (a board's USB bridge or a virtual unit's pty).

Over 600 lines on purpose: UnitLink is one state machine (a session, its requests and waits, recovery at the
REPL, the line's speed), and its parts share that state; the frames, bounds and raw REPL are modules of their own.

Every command talks to the unit's host service (firmware/maus/host/service.py) through it: requests and responses
in the frames of `frame.py`, while the unit keeps playing. Only when the unit shows its REPL (no app runs:
safe mode, a stopped app) does the link start the same service from the raw REPL (`recover`), and only
deploy asks for the raw REPL itself (`repl()`). Every wait is bounded by the link's timeout, counted from the
request or from the last frame of its answer that made progress, and every request by its total bound
(bounds.py): console text, drips, garbage and valid frames that bring nothing new never extend them.
"""

from __future__ import annotations

import hashlib
import json
import select
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import serial  # type: ignore[import-untyped]

from mausbox.errors import UserError
from mausbox.link.bounds import (
    BUSY_WAIT,
    FALLBACK_MARGIN,
    HASH_SLICE,
    IDLE_PROBE,
    LIST_RESUMES,
    LOST_QUIET,
    LOST_SILENT,
    MAX_ANSWER,
    MAX_ENTRIES,
    MAX_LOG_BYTES,
    PROBE_WAIT,
    QUICK_OPS,
    READ_SLACK,
    RESYNC_PAD,
    SWITCH_GUARD,
    UNIT_FALLBACK,
    backoff,
    request_bound,
)
from mausbox.link.errors import AnswerLost, FrameGap, LinkError, LinkLost, LinkTimeout, NoService, UnitError
from mausbox.link.frame import DATA, EVENT, PART, PROTO, REQUEST, RESPONSE, Frame, Parser, encode
from mausbox.link.ports import BAUD, open_port, resolve_port

if TYPE_CHECKING:
    from mausbox.link.repl import RawRepl

TEXT_TAIL = 600  # console text kept for messages
# The bounds of every wait (docs/protocol.md, Timing) are named in bounds.py.


class UnitLink:
    """A session with one unit. `hello()` first (it also brings up the service on a unit at the REPL, if
    allowed); then `request`, `read`, `events`. Use as a context manager."""

    def __init__(self, port: str | None = None, timeout: float = 10.0, baud: int = BAUD, recover: bool = True,
                 host: str = "", ser=None, fast: int | None = None):
        self.port = port if ser is not None and port else resolve_port(port)
        self.timeout = timeout
        self.allow_recover = recover
        self.host = host or _host_name()
        self.ser = ser if ser is not None else open_port(self.port, baud)
        self._fd = _fileno(self.ser)  # None: a port without one (Windows, a test's loopback)
        # The line's rate: `base` the unit's boot rate, `rate` the one in use; `fast` the one to agree on after
        # hello (None or `base`: none). `rate_note` says why the link stays at (or went back to) `base`.
        self.base = self.rate = baud
        self.fast = fast if fast and fast != baud else None
        self.rate_note = ""
        self._probing = False
        self.parser = Parser()
        self._in: deque[Frame | bytes] = deque()
        self._seq = int(time.monotonic() * 1000) & 0x7FFF or 1
        self.info: dict | None = None  # the unit's hello answer
        self.served = False  # the service runs in a raw-REPL exec we started (recover)
        self.events_in: deque[dict | bytes] = deque()  # E frames that came while waiting for something else
        self.tail = bytearray()  # the last console text
        self.on_text: Callable[[bytes], None] | None = None  # console text as it arrives (monitor --raw)
        self.bytes_in = 0
        self.bytes_out = 0
        self._repl: RawRepl | None = None
        self.then_seq = 0
        self._t0 = 0.0  # when the request being answered was sent
        self._lost = False  # a wait failed: resynchronise both ends before the next request
        # A caller that asks again (a pull) gives up on a quick request's answer as soon as it is clearly lost
        # (bounds.py, LOST_QUIET): what came since the request, to tell.
        self.resend_lost = False
        self._rx_at = 0.0  # when the last byte came (or the request went)
        self._rx_n0 = 0  # bytes_in when the request went
        self._damage0 = 0  # the parser's damage count then
        self._req_text = 0  # console text since then
        self.answer_complete = False  # a read has every byte it asked for: only its final answer is missing

    # --- session --------------------------------------------------------------------------------------------
    def __enter__(self) -> UnitLink:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.slow_down(settle=False)  # the port closes: nothing more is said at either rate
        if self._repl is not None and self._repl.t.in_raw_repl and not self.served:
            try:  # deploy left the unit in the raw REPL: back to the friendly one (no reset unless asked)
                self._repl.close_raw()
            except LinkError:
                pass
        if self.served:
            self.served = False
            try:  # end serve(): the unit goes back to its raw REPL, then to the friendly one it was at
                self.request("exit", timeout=min(self.timeout, 5))
                self._raw_repl().finish_exec(timeout=min(self.timeout, 5))
                self._raw_repl().close_raw()
            except (LinkError, UserError):
                pass
        try:
            self.ser.close()
        except (OSError, serial.SerialException):
            pass

    # --- bytes ----------------------------------------------------------------------------------------------
    def write(self, data: bytes) -> None:
        try:
            self.ser.write(data)
        except (OSError, serial.SerialException) as e:
            raise LinkLost(f"lost the link to {self.port}: {e}") from None
        self.bytes_out += len(data)

    def read_raw(self, wait: float) -> bytes:
        """What has arrived, or the first bytes within `wait` seconds (b"" if none). Bypasses the parser:
        for the raw REPL only."""
        ser = self.ser
        try:
            n = ser.in_waiting
            if n:
                data = ser.read(min(n, 65536))
            elif self._fd is not None:
                # Wait on the descriptor: pyserial's own timeout rewrites the tty's settings (tcsetattr, flock) at
                # each change, thousands of times a pull (1.2 s of a 5 s pull's CPU)
                # Readable with nothing waiting is a port that went away: pyserial's read says so (LinkLost below)
                ready = select.select([self._fd], [], [], max(0.0, wait))[0]
                data = ser.read(min(max(1, ser.in_waiting), 65536)) if ready else b""
            else:
                ser.timeout = max(0.0, wait)
                data = ser.read(1)
                if data and ser.in_waiting:
                    data += ser.read(min(ser.in_waiting, 65536))
        except (OSError, serial.SerialException) as e:
            raise LinkLost(f"lost the link to {self.port}: {e}") from None
        self.bytes_in += len(data)
        return data

    def _pump(self, wait: float) -> bool:
        """Read and parse what arrives within `wait`; True if anything came."""
        data = self.read_raw(wait)
        if not data:
            return False
        self._rx_at = time.monotonic()
        for item in self.parser.feed(data):
            self._in.append(item)
        return True

    def _text(self, t: bytes) -> None:
        self.tail += t
        del self.tail[:-TEXT_TAIL]
        if self.on_text is not None:
            self.on_text(t)

    # --- requests -------------------------------------------------------------------------------------------
    def _next_seq(self) -> int:
        self._seq = self._seq % 0xFFFF + 1
        return self._seq

    def send_request(self, op: str, **args) -> int:
        if self.rate != self.base and not self._probing and time.monotonic() - self._rx_at >= IDLE_PROBE:
            self._probe()
        seq = self._next_seq()
        body = json.dumps(dict(op=op, **args), separators=(",", ":"), ensure_ascii=True).encode()
        self._in.extend(self.parser.resync())
        pad = b""
        if self._lost:  # the unit may be waiting for the rest of a damaged frame: fill it first
            self._lost = False
            pad = b"\n" * RESYNC_PAD
        if pad:  # and Ctrl-B first: a raw REPL (a served service ended by a damaged Ctrl-C) goes back to the
            pad = b"\x02" + pad  # friendly one, where the request is echoed and seen as such (NoService); the
            #                     app and the service take it for a stray byte
        self.write(pad + encode(REQUEST, seq, body))
        self._rx_at = time.monotonic()
        self._rx_n0 = self.bytes_in
        self._damage0 = self.parser.damage
        self._req_text = 0
        self.answer_complete = False
        return seq

    def next_frame(self, seq: int, deadline: float, op: str) -> Frame:
        """The next frame of the answer to request `seq` (R, P or D), or LinkTimeout at `deadline`. Event
        frames are kept for `events()`; an echo of the request followed by a prompt means a REPL (NoService)."""
        echoed = False
        junk = others = 0
        while True:
            while self._in:
                item = self._in.popleft()
                if isinstance(item, bytes):
                    junk += len(item)
                    self._req_text += len(item)
                    self._text(item)
                    if echoed and self.tail.endswith(b">>> "):
                        raise NoService(f"{self.port}: the unit shows the MicroPython REPL: its app is not "
                                        "running (safe mode, or stopped with Ctrl-C)")
                    continue
                if item.kind == EVENT:
                    if len(self.events_in) < 1000:  # a unit flooding events while we wait: the oldest kept
                        self.events_in.append(_event(item.payload))
                    continue
                if item.kind == REQUEST:
                    echoed = echoed or item.seq == seq  # a REPL echoes what it is sent
                    continue
                if item.seq != seq:
                    others += 1
                    continue  # the end of an earlier answer we gave up on
                return item
            left = deadline - time.monotonic()
            if left <= 0:
                raise LinkTimeout(self._timeout_message(op, junk, echoed, others))
            lost = self._answer_lost(op) if self.resend_lost else None
            if lost:
                raise AnswerLost(lost)
            self._pump(min(left, 0.1))

    def _answer_lost(self, op: str) -> str | None:
        """Why the answer to a quick request is lost by now, or None (bounds.py, LOST_QUIET): the unit sends an
        answer's frames back to back, so a quiet line after damage means nothing more of it is coming."""
        if op not in QUICK_OPS:
            return None
        quiet = time.monotonic() - self._rx_at
        if quiet < LOST_QUIET:
            return None
        in_game = self.info is None or self.info.get("mode") == "play"
        p = self.parser
        if p.damage > self._damage0 or p.pending or self.answer_complete or (self._req_text and not in_game):
            return f"{self.port}: the answer to `{op}` came damaged (nothing more of it for {LOST_QUIET:g} s)"
        if quiet >= LOST_SILENT and not in_game and self.bytes_in == self._rx_n0:
            return f"{self.port}: no answer to `{op}` within {LOST_SILENT:g} s (the request was lost on the way?)"
        return None

    def _timeout_message(self, op: str, junk: int, echoed: bool, others: int = 0) -> str:
        t = self.timeout
        if echoed:
            return f"{self.port}: the unit echoes what it is sent but does not answer `{op}` within {t:g} s"
        seen = bytes(self.tail[-120:]).decode("utf-8", "replace").strip().replace("\n", " | ")
        if others:
            return (f"{self.port}: no answer to `{op}` within {t:g} s: the unit sent {others} frame(s) that "
                    "answer no request of this session (it repeats an old answer?)")
        if not junk:
            return f"{self.port}: no answer to `{op}` within {t:g} s (the unit sent nothing)"
        if op == "hello" and any(m in bytes(self.tail) for m in (b"EV {", b"SAY ", b"MAUSBOX READY")):
            return (f"{self.port}: the unit plays but does not answer `hello` within {t:g} s: its firmware is "
                    "older than this host's protocol; run `mausbox deploy` (it stops the game)")
        return (f"{self.port}: no answer to `{op}` within {t:g} s; it sent {junk} bytes that were not an "
                f"answer, the last: {seen[-80:]!r}")

    def request(self, op: str, timeout: float | None = None, on_frame: Callable[[Frame], None] | None = None,
                **args) -> dict:
        """Send a request, collect its answer: P and D frames go to `on_frame`, the R frame's JSON is returned;
        UnitError if the unit refused."""
        end = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            try:
                return self.answer(self.send_request(op, **args), op, on_frame, timeout)
            except UnitError as e:
                # "nomem": the unit had no memory to answer this now (a game at its peak): asked again. A
                # streamed answer is not: its caller resumes from what it got.
                if e.error != "nomem" or on_frame is not None or time.monotonic() >= end:
                    raise
            time.sleep(BUSY_WAIT)

    def _bounded(self, seq: int, op: str, deadline: float, total_end: float, frames: int) -> Frame:
        """next_frame, cut off at the progress deadline or the request's total bound, whichever comes first;
        `frames`: how many frames of this answer came so far."""
        try:
            return self.next_frame(seq, min(deadline, total_end), op)
        except AnswerLost:  # asked again at once, at the same rate: a unit busy for a moment is no other rate
            self._lost = True
            raise
        except LinkTimeout:  # a whole timeout without progress: the unit may have gone back (a game began)
            self._lost = True
            self._to_base(f"`{op}` failed at {self.rate} baud")
            if time.monotonic() >= total_end and deadline > total_end:
                raise LinkTimeout(f"{self.port}: `{op}` did not finish within its bound of "
                                  f"{total_end - self._t0:.3g} s: the unit kept sending without getting to the "
                                  "end") from None
            if frames:
                raise LinkTimeout(f"{self.port}: no progress on `{op}` within {self.timeout:g} s: the unit keeps "
                                  f"sending ({frames} frames) without moving on") from None
            raise

    def answer(self, seq: int, op: str, on_frame: Callable[[Frame], bool | None] | None = None,
               timeout: float | None = None) -> dict:
        """The answer to request `seq` (sent with `send_request`), as `request` collects it. Progress (what
        restarts the wait and lengthens the total bound) is a part never seen before in this answer that
        `on_frame` did not refuse (False: nothing new in it); without `on_frame` the request has no parts and
        nothing but its answer is progress. So neither a frame repeated forever nor two taking
        turns hold a command."""
        t = self.timeout if timeout is None else timeout
        self._t0 = time.monotonic()
        deadline = self._t0 + t
        seen: set[bytes] = set()
        got = frames = 0
        while True:
            f = self._bounded(seq, op, deadline, self._t0 + request_bound(t, got), frames)
            frames += 1
            if f.kind == RESPONSE:
                return self._final(op, f)
            if on_frame is None:
                continue
            key = hashlib.blake2b(bytes([f.kind]) + f.payload, digest_size=12).digest()
            if on_frame(f) is not False and key not in seen:
                if len(seen) < MAX_ENTRIES:
                    seen.add(key)
                got += len(f.payload) + 26
                if got > MAX_ANSWER:
                    raise LinkError(f"{self.port}: the answer to `{op}` goes on past {MAX_ANSWER} bytes")
                deadline = time.monotonic() + t  # new content of the answer: the unit is at work

    def _final(self, op: str, f: Frame) -> dict:
        """A request's final answer (an R frame) as a dict; LinkError if it is not one, UnitError if it says
        the request failed."""
        try:
            doc = json.loads(f.payload)
        except ValueError:
            raise LinkError(f"{self.port}: the answer to `{op}` is not JSON") from None
        if not isinstance(doc, dict):
            raise LinkError(f"{self.port}: the answer to `{op}` is not an object")
        if not doc.get("ok"):
            raise UnitError(self.port, op, str(doc.get("error")), str(doc.get("msg")))
        return doc

    # --- the service ----------------------------------------------------------------------------------------
    def hello(self, then: str | None = None) -> dict:
        """Who the unit is (docs/protocol.md `hello`); a unit at its REPL gets the service started first when
        the link may recover it. Checks that both ends speak a common revision. `then`: a request (without
        arguments) sent right behind it, saving a round trip; its seq is in `self.then_seq`."""
        if self.info is not None:
            if then:
                self.then_seq = self.send_request(then)
            return self.info
        negotiate = self.fast is not None and not self.served
        try:
            seq = self.send_request("hello", host=self.host, proto=PROTO)
            if then and not negotiate:  # a switch comes between: `then` is asked after it
                self.then_seq = self.send_request(then)
                then = None
            info = self.answer(seq, "hello")
        except NoService:
            if not self.allow_recover:
                raise
            self.recover()
            info = self.request("hello", host=self.host, proto=PROTO)
            if then:
                self.then_seq = self.send_request(then)
                then = None
        except UnitError as e:
            if e.error == "proto":
                raise LinkError(f"{self.port}: {e.msg}") from None
            raise
        try:
            lo, hi = int(info.get("proto_min") or info.get("proto") or 0), int(info.get("proto") or 0)
        except (TypeError, ValueError):
            raise LinkError(f"{self.port}: the unit's `hello` answer is garbled (proto {info.get('proto')!r})") from None
        if not lo <= PROTO <= hi:
            if PROTO < lo:
                raise LinkError(f"{self.port}: the unit speaks host protocol {lo}..{hi}, this mausbox {PROTO}: "
                                "update mausbox on this computer")
            raise LinkError(f"{self.port}: the unit speaks host protocol {lo}..{hi}, this mausbox {PROTO}: "
                            "update the unit with `mausbox deploy`")
        self.info = info
        if negotiate and self.fast is not None:
            self.speed_up(self.fast)
        if then:
            self.then_seq = self.send_request(then)
        return info

    # --- the line's rate (docs/protocol.md, `baud`) ---------------------------------------------------------
    def speed_up(self, rate: int) -> bool:
        """Agree on `rate` with the unit (after hello): it answers `baud` at the rate in use, switches, and takes a
        hello at the new one as the sign the host is there. A unit whose console is native USB, in a game, at its
        REPL, or with firmware that does not know `baud` stays at this rate (`rate_note` says why), and so does
        one whose line cannot carry the rate: then the host goes back itself and waits out the unit's own
        fall-back (UNIT_FALLBACK). True if the link runs at `rate` now."""
        self.fast = None  # one try a session
        info = self.info or {}
        if info.get("console") == "usb":
            self.rate_note = "the unit's console is native USB: no rate to agree on"
            return False
        if not info.get("app") or info.get("mode") == "play" or self.served:
            self.rate_note = "the unit is in a game or at its REPL: it stays at %d baud" % self.rate
            return False
        try:
            ans = self.request("baud", rate=rate, timeout=min(self.timeout, 5.0))
        except UnitError as e:  # `op`: firmware older than `baud`; `game`, `busy`: not now
            self.rate_note = f"the unit keeps {self.rate} baud ({e.error}: {e.msg})"
            return False
        except LinkError as e:
            self.rate_note = f"no answer to `baud`: {e}"
            return False
        if not ans.get("switch"):
            self.rate_note = f"the unit stays at {ans.get('baud')} baud"
            return False
        switched = time.monotonic()
        wait = float(ans.get("wait_ms") or UNIT_FALLBACK * 1000) / 1000
        time.sleep(SWITCH_GUARD)
        old = self.rate
        if self._set_rate(rate):
            resend, self.resend_lost = self.resend_lost, False  # the whole window: a busy unit answers late
            try:
                self.request("hello", host=self.host, proto=PROTO, timeout=max(0.2, wait - SWITCH_GUARD))
                self.rate_note = ""
                return True
            except LinkError as e:
                why = f"no answer at {rate} baud ({e})"
            finally:
                self.resend_lost = resend
        else:
            why = f"this computer's port does not take {rate} baud"
        # The line does not carry the rate (a bridge that cannot do it): back, and on once the unit is back too.
        self._set_rate(old)
        self._lost = True
        self.rate_note = why + f"; back to {old} baud"
        time.sleep(max(0.0, switched + wait + FALLBACK_MARGIN - time.monotonic()))
        return False

    def slow_down(self, settle: bool = True) -> None:
        """Back to the boot rate at the end of a session (and before the raw REPL): asked at the rate in use; if
        that fails, the unit goes back by itself (its service quiet, or bytes it cannot read). `settle`: wait
        until the unit has switched (the link goes on at the boot rate)."""
        if self.rate == self.base:
            return
        try:
            self.request("baud", rate=self.base, timeout=min(self.timeout, 2.0))
            if settle:
                time.sleep(SWITCH_GUARD)  # the unit switches once its answer has left
        except (LinkError, UserError):
            pass
        self._to_base("")

    def _probe(self) -> None:
        """After a long quiet at a switched rate: is the unit still at it? Its service goes back to the boot rate
        once the host has been quiet for 10 s (or when a game starts)."""
        self._probing = True
        try:
            self.request("hello", host=self.host, proto=PROTO, timeout=PROBE_WAIT)
        except LinkError:
            self._to_base("")
            self.rate_note = f"the unit went back to {self.base} baud (its service went quiet, or a game began)"
        finally:
            self._probing = False

    def _to_base(self, why: str) -> None:
        if self.rate != self.base:
            self._set_rate(self.base)
            self.rate_note = why

    def _set_rate(self, rate: int) -> bool:
        try:
            self.ser.baudrate = rate
        except (OSError, ValueError, serial.SerialException):
            return False
        self.rate = rate
        try:
            self.ser.reset_input_buffer()  # what came while the two ends were at different rates is noise
        except (OSError, AttributeError, serial.SerialException):
            pass
        self._in.extend(self.parser.resync())
        return True

    def recover(self) -> None:
        """The unit is at its REPL (nothing runs that a Ctrl-C could stop): start the host service there."""
        from mausbox.link.repl import TRIES, not_run

        repl = self._raw_repl()
        repl.enter_raw()
        for _ in range(TRIES):
            repl.start_exec("import maus.host.repl\nmaus.host.repl.serve()\n")
            self.served = True
            # serve() is up once the first request is answered; an old firmware without it ends the exec now.
            head = repl.peek_exec_end(0.5)
            if head is None or not not_run(head):
                break
            repl.refused += 1  # the command was damaged on the way and refused: again
        if head is not None:
            self.served = False
            last = head.strip().splitlines()[-1] if head.strip() else "error"
            if "maus.host" in head or "hostsvc" in head or "ImportError" in head:
                raise LinkError(f"{self.port}: the unit's firmware has no host service (older than this mausbox): "
                                "run `mausbox deploy`")
            raise LinkError(f"{self.port}: the unit could not start its host service: {last}")

    def _raw_repl(self):
        if self._repl is None:
            from mausbox.link.repl import RawRepl

            self._repl = RawRepl(self)
        return self._repl

    def repl(self):
        """The raw REPL on this port, for deploy (and flash's deploy). Entering it stops the app, at the boot rate."""
        self.slow_down()
        return self._raw_repl()

    # --- operations -----------------------------------------------------------------------------------------
    def status(self) -> dict:
        self.hello()
        return self.request("status")

    def listing(self, resumes: int = LIST_RESUMES) -> list[tuple[str, int]]:
        """Every log and pulled marker in the unit's logs folder: (name, size), as the unit's directory has them.
        Each part says where it starts (`+index`): after a lost part the listing resumes from the last whole
        one (`skip`), so a long listing over a faulty link is not started again. Names the unit found in its
        logs folder that are none of its logs land in `self.strays` (the first few; `self.stray_count` all)."""
        out: list[tuple[str, int]] = []
        gap = unplaced = False
        had = 0  # entries here when this attempt started: a resumed attempt has some

        def part(f: Frame) -> bool:
            nonlocal gap, unplaced
            if f.kind != PART or gap:
                return False
            lines = f.payload.decode("utf-8", "replace").splitlines()
            if lines and not lines[0].startswith("+") and had:
                gap = unplaced = True  # a part that does not say where it starts cannot go behind the entries here
                return False
            if lines and lines[0].startswith("+"):
                try:
                    at = int(lines[0][1:])
                except ValueError:
                    at = -1
                if at != len(out):
                    gap = at > len(out) or at < 0  # an older part again (a repeat) is skipped
                    return False
                lines = lines[1:]
            for line in lines:
                name, _, size = line.rpartition(" ")
                try:
                    out.append((name, int(size)))
                except ValueError:
                    out.append((line, -1))
            return bool(lines)  # progress: new entries, nothing else

        def capped(f: Frame) -> bool:
            took = part(f)
            if len(out) > MAX_ENTRIES:
                raise LinkError(f"{self.port}: the listing goes on past {MAX_ENTRIES} entries: not a unit's")
            return took

        total = None
        lost: LinkTimeout | None = None
        for attempt in range(resumes + 1):
            gap = False
            had = len(out)
            try:
                if not out:
                    self.hello(then="logs")
                    seq = self.then_seq
                else:
                    self.hello()
                    seq = self.send_request("logs", skip=len(out))
                done = self.answer(seq, "logs", on_frame=capped)
            except LinkTimeout as e:  # the end of the listing lost: resumed from the entries here, as after a
                if len(out) == had:  # gap, if this attempt brought any (else the unit is not at work)
                    if unplaced and lost is not None:
                        raise lost from None  # what went wrong first: the same part again is only its echo
                    raise
                lost = e
                time.sleep(backoff(attempt + 1))
                continue
            self.listed = done  # the listing's final answer (its counts; `bringup`: the summary's size, or None)
            self.strays = [str(x) for x in done.get("stray") or [] if isinstance(x, str)]
            self.stray_count = done.get("strays") if isinstance(done.get("strays"), int) else len(self.strays)
            total = done.get("total", done.get("n"))
            if not gap and total == len(out):
                return out
            if "total" not in done:  # a unit without resume: only a whole listing again
                out.clear()
        if lost is not None and total is None:
            raise lost
        raise LinkError(f"{self.port}: the listing came incomplete ({len(out)} of {total} entries)")

    def read(self, name: str, offset: int, sink: Callable[[bytes], object],
             progress: Callable[[int], None] | None = None, size: int | None = None) -> tuple[int, str]:
        """Stream log `name` from `offset`; each chunk, in order and checked, goes to `sink`. Returns (size,
        sha256 hex) of the file [0, size) as the unit read it. FrameGap if a chunk is missing (a damaged frame):
        the caller resumes from `offset + what sink got`. `size`: what the listing said (the read's bound
        follows from it; a log still being written may have grown a little since)."""
        self.hello()
        have = offset
        gap = -1  # where a chunk went missing
        most = (size if size is not None else MAX_LOG_BYTES) + READ_SLACK  # more than this is not the log
        keepalives = offset // HASH_SLICE + 2  # empty P frames while the unit hashes the prefix

        def data(f: Frame) -> None:
            nonlocal have, gap
            if f.kind != DATA or gap >= 0:
                return
            try:
                off = int(f.payload[:8], 16)
            except ValueError:
                gap = have
                return
            chunk = f.payload[8:]
            if off + len(chunk) <= have:
                return  # a repeat of bytes already here
            if off != have:
                gap = have
                return
            if have + len(chunk) > most:
                raise LinkError(f"{self.port}: {name}: the unit sends more than the log's {most} bytes")
            sink(chunk)
            have += len(chunk)
            if size is not None and have >= size:
                self.answer_complete = True
            if progress is not None:
                progress(have)

        seq = self.send_request("read", name=name, off=offset)
        self.answer_complete = size is not None and offset >= size
        self._t0 = time.monotonic()
        deadline = self._t0 + self.timeout
        frames = 0
        while True:
            f = self._bounded(seq, "read", deadline,
                              self._t0 + request_bound(self.timeout, have - offset, offset), frames)
            frames += 1
            if f.kind == RESPONSE:
                doc = self._final("read", f)
                size, sha = doc.get("size"), doc.get("sha256")
                if gap >= 0 or have != size:
                    raise FrameGap(f"{self.port}: {name}: a chunk was lost at byte {have}", have)
                if not isinstance(sha, str) or len(sha) != 64:
                    raise LinkError(f"{self.port}: the unit sent no digest for {name}")
                return size, sha
            before = have
            data(f)
            if gap >= 0:
                raise FrameGap(f"{self.port}: {name}: a chunk was lost at byte {have}", have)
            if have > before:
                deadline = time.monotonic() + self.timeout  # new bytes: progress
            elif f.kind == PART and not f.payload and keepalives > 0:
                keepalives -= 1  # the unit hashing a resumed read's prefix: progress too, a bounded number
                deadline = time.monotonic() + self.timeout

    def events(self, seconds: float | None = None, lease: int = 10) -> Iterator[dict | bytes]:
        """Log records (dicts; bytes for a record that is not JSON) as the unit writes them, renewing the
        subscription every few seconds; ends after `seconds` if given."""
        self.hello()
        end = None if seconds is None else time.monotonic() + seconds
        renew = 0.0
        while end is None or time.monotonic() < end:
            if time.monotonic() >= renew:
                self.request("events", s=lease)
                renew = time.monotonic() + lease / 3
            while self.events_in:
                yield self.events_in.popleft()
            wait = 0.2 if end is None else max(0.0, min(0.2, end - time.monotonic()))
            self._pump(wait)
            while self._in:
                item = self._in.popleft()
                if isinstance(item, bytes):
                    self._text(item)
                elif item.kind == EVENT:
                    yield _event(item.payload)
        try:
            self.request("events", s=0, timeout=min(self.timeout, 3))
        except LinkError:
            pass


def _host_name() -> str:
    import mausbox

    return f"mausbox {mausbox.__version__}"


def _event(payload: bytes) -> dict | bytes:
    try:
        doc = json.loads(payload)
    except ValueError:
        return payload
    return doc if isinstance(doc, dict) else payload


def _fileno(ser) -> int | None:
    try:
        fd = ser.fileno()
    except (AttributeError, OSError, ValueError, serial.SerialException):
        return None
    return fd if isinstance(fd, int) and fd >= 0 else None
