"""The raw REPL on a unit's port, built on mpremote's SerialTransport: for deploy, flash and recovery only.

Entering it stops whatever runs (the app gets Ctrl-C). `UnitLink.repl()` hands one out; `UnitLink.recover()`
uses it to start the host service on a unit that is at its REPL anyway. Every wait is bounded.

Every command is checked: it goes as `_mbx_x(b"<code>", <crc32>, globals())`, and the unit's
`_mbx_x` (firmware/maus/host/cexec.py, sent at the start of each raw-REPL session and tested there) refuses a command
whose bytes were damaged on the wire before it is compiled; the host sends it again (up to TRIES times).
"""

from __future__ import annotations

import binascii
import struct
import time

import serial  # type: ignore[import-untyped]
from mpremote.transport_serial import SerialTransport  # type: ignore[import-untyped]

from mausbox.errors import EXIT_PROBLEM, UserError
from mausbox.paths import FIRMWARE_PKG

CEXEC = FIRMWARE_PKG / "host" / "cexec.py"
REFUSED = "MBX-DAMAGED"  # maus.host.cexec.MBX_DAMAGED
TRIES = 4


def checked(code: bytes, crc: int | None = None) -> bytes:
    """The command as sent: the code and its crc32, for maus.host.cexec._mbx_x to check before it runs it."""
    return b"_mbx_x(%s,%d,globals())\n" % (repr(code).encode(), binascii.crc32(code) if crc is None else crc)


def not_run(error: str) -> bool:
    """Did the unit refuse the command before running any of it? Either the check failed, or the wrapper line
    itself was damaged (an error raised outside the exec'd code, whose frames say "<string>")."""
    return REFUSED in error or '"<string>"' not in error


class UnitExecError(UserError):
    """Code sent to the unit raised: `error` holds MicroPython's traceback text."""

    def __init__(self, output: bytes, error: str):
        last = error.strip().splitlines()[-1] if error.strip() else "error"
        super().__init__(f"the unit reported: {last}", EXIT_PROBLEM)
        self.output = output
        self.error = error


class _Transport(SerialTransport):
    """mpremote's transport over a port the link has already opened."""

    def __init__(self, ser: serial.Serial, device: str):  # not super().__init__: it opens the port itself
        self.in_raw_repl = False
        self.use_raw_paste = True
        self.device_name = device
        self.mounted = False
        self.serial = ser
        self.is_pty = self._is_pty_device(device)


class RawRepl:
    def __init__(self, link):
        from mausbox.link.errors import LinkError, LinkLost

        self.link = link
        self.port = link.port
        self.timeout = link.timeout
        self.t = _Transport(link.ser, link.port)
        self._buf = bytearray()
        self._at_prompt = False
        self.bytes_sent = 0
        self.refused = 0  # damaged commands the unit refused (each sent again)
        self._armed = False  # the unit's interpreter has _mbx_x
        self.saw_prompt = False  # the unit showed a MicroPython prompt to a Ctrl-C
        self.LinkError = LinkError
        self.LinkLost = LinkLost

    # --- session --------------------------------------------------------------------------------------------
    def enter_raw(self, soft_reset: bool = False) -> None:
        """Stop what runs and enter the raw REPL (the steps of mpremote's enter_raw_repl, each bounded by the
        link timeout as a whole: its own waits restart at every byte, so a dripping line would hold them)."""
        self.link._in.clear()
        self.link.parser = type(self.link.parser)()
        self._armed = False
        t = self.timeout
        try:
            self._interrupt()
            self._buf = bytearray()
            self._write(b"\r\x01")  # Ctrl-A: the raw REPL
            if soft_reset:
                self._read_until(b"raw REPL; CTRL-B to exit\r\n>", t)
                self._write(b"\x04")  # Ctrl-D: soft reset (boot.py runs, main.py does not)
                self._read_until(b"soft reboot\r\n", t)
            self._read_until(b"raw REPL; CTRL-B to exit\r\n", t)
        except self.LinkError:
            raise self.LinkError(f"{self.port}: no MicroPython raw-REPL prompt within {t:.0f} s: is MicroPython "
                                 "flashed (`mausbox flash`), or is another program talking to it?") from None
        self.t.in_raw_repl = True
        self._at_prompt = False  # as mpremote leaves it: right before the first `>`

    def _interrupt(self) -> None:
        """Ctrl-C until the unit shows a prompt: a unit still booting, or code that swallowed one
        KeyboardInterrupt, needs more than mpremote's single Ctrl-C. Bounded by the link timeout."""
        end = time.monotonic() + self.timeout
        seen = b""
        first = True
        while time.monotonic() < end:
            # Then also Ctrl-B: a unit left in the raw REPL says nothing to Ctrl-C, but shows the friendly prompt
            # Two Ctrl-Cs: the app takes a lone one for a stray byte (maus.unit.core INTR_MS).
            self._write(b"\r\x03\x03" if first else b"\r\x03\x03\x02")
            first = False
            quiet_until = time.monotonic() + 0.4
            while time.monotonic() < min(quiet_until, end):  # a unit that never goes quiet: bounded too
                chunk = self.link.read_raw(0.02)
                if chunk:
                    seen = (seen + chunk)[-64:]
                    quiet_until = time.monotonic() + 0.15
            if seen.endswith((b"\n>>> ", b"\n>")):  # a prompt, not a `>` inside printed text
                self.saw_prompt = True
                return

    def ensure_raw(self) -> None:
        if not self.t.in_raw_repl:
            self.enter_raw()

    def close_raw(self) -> None:
        """Back to the friendly REPL (the port stays open)."""
        if self.t.in_raw_repl:
            self._write(b"\r\x02")
            self.t.in_raw_repl = False
        self._buf = bytearray()
        self._at_prompt = False

    def soft_reset(self) -> None:
        """Leave the raw REPL and soft-reset: boot.py and main.py (the app) run again."""
        self.close_raw()
        self._write(b"\x04")

    def handoff(self) -> None:
        """Before calling mpremote's own functions on `self.t`: they read the `>` prompt themselves."""
        self.ensure_raw()
        self.t.serial.timeout = min(self.timeout, 5)
        if not self._at_prompt:
            self._read_until(b">", self.timeout)
        self._buf = bytearray()
        self._write(b"\x01")  # Ctrl-A in the raw REPL: the unit repeats its banner and `>`, for mpremote
        self._at_prompt = False

    def recover(self) -> None:
        """After a broken exchange: interrupt, discard what is in flight, and re-enter the raw REPL. The line
        that broke it may still be damaging what passes (bounds.py, RECOVER_PAD): filler goes before each
        Ctrl-C, and it is tried again with a growing pause while the unit does not show its prompt."""
        from mausbox.link.bounds import RECOVER_PAD, backoff

        last: Exception | None = None
        for attempt in range(TRIES):
            self.flush_line(RECOVER_PAD)
            try:
                self.enter_raw()
                return
            except self.LinkError as e:
                last = e
                time.sleep(backoff(attempt + 1))
        assert last is not None
        raise last

    def flush_line(self, pad: int) -> None:
        """Filler, then Ctrl-Cs; what is in flight is dropped. Newlines are nothing to a raw paste that lost
        bytes, to the raw or friendly REPL (Ctrl-C clears the line after them) and to the app; the Ctrl-Cs
        behind them stop what runs."""
        self._write(b"\n" * pad + b"\r\x03\x03")
        time.sleep(0.1)
        try:
            self.t.serial.reset_input_buffer()
        except (OSError, serial.SerialException) as e:
            raise self.LinkLost(f"lost the link to {self.port}: {e}") from None
        self.t.in_raw_repl = False
        self._buf = bytearray()

    # --- bytes ----------------------------------------------------------------------------------------------
    def _write(self, data: bytes) -> None:
        self.link.write(data)
        self.bytes_sent += len(data)

    def _fill(self, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while True:
            chunk = self.link.read_raw(min(0.1, max(0.0, end - time.monotonic())))
            if chunk:
                self._buf += chunk
                return True
            if time.monotonic() >= end:
                return False

    def _read(self, n: int, timeout: float) -> bytes:
        """Exactly n bytes, or fewer once `timeout` seconds have passed."""
        end = time.monotonic() + timeout
        while len(self._buf) < n and time.monotonic() < end and self._fill(max(0.0, end - time.monotonic())):
            pass
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def _read_until(self, ending: bytes, timeout: float, limit: int = 1 << 24) -> bytes:
        """Up to and including `ending`; LinkError if the unit goes quiet, floods, or takes past `timeout`."""
        start = 0
        end = time.monotonic() + timeout
        while True:
            i = self._buf.find(ending, start)
            if i >= 0:
                out = bytes(self._buf[:i + len(ending)])
                del self._buf[:i + len(ending)]
                return out
            start = max(0, len(self._buf) - len(ending) + 1)
            if len(self._buf) > limit:
                raise self.LinkError(f"{self.port} sent more than {limit} bytes for one command")
            left = end - time.monotonic()
            if left <= 0 or not self._fill(left):
                raise self.LinkError(f"{self.port}: no end of the command's output within {timeout:.0f} s")

    # --- exec -----------------------------------------------------------------------------------------------
    def _start(self, code: str | bytes) -> None:
        """Send one command at the raw REPL's `>` prompt, in raw-paste mode when the unit has it."""
        self.ensure_raw()
        data = code.encode() if isinstance(code, str) else code
        if not self._at_prompt:
            self._read_until(b">", self.timeout)
        else:  # at the prompt nothing more is due: what is here is damage (a repeated end, say), not ours
            self._buf = bytearray()
            self.link.read_raw(0)
        self._at_prompt = False
        if self.t.use_raw_paste:
            self._write(b"\x05A\x01")
            answer = self._read(2, self.timeout)
            if answer == b"R\x01":
                self._raw_paste(data)
                return
            if answer != b"R\x00":  # an old firmware: it echoed the bytes back as a raw REPL would
                self._read_until(b"w REPL; CTRL-B to exit\r\n>", self.timeout)
            self.t.use_raw_paste = False
        for i in range(0, len(data), 256):
            self._write(data[i:i + 256])
            time.sleep(0.01)
        self._write(b"\x04")
        if self._read(2, self.timeout) != b"OK":
            raise self.LinkError(f"{self.port} did not accept a command; try again, or reset the unit")

    def _raw_paste(self, data: bytes) -> None:
        got = self._read(2, self.timeout)
        window = struct.unpack("<H", got)[0] if len(got) == 2 else 0  # a short reply: no window
        if not window:
            raise self.LinkError(f"{self.port} broke off the raw-paste handshake")
        remain = window
        i = 0
        while i < len(data):
            while remain == 0 or self._buf or self.t.serial.in_waiting:
                b = self._read(1, self.timeout)
                if b == b"\x01":
                    remain += window
                elif b == b"\x04":  # the unit ended the paste early (a syntax error): acknowledge
                    self._write(b"\x04")
                    return
                else:
                    raise self.LinkError(f"{self.port} sent {b!r} during a raw paste")
            n = min(remain, len(data) - i)
            self._write(data[i:i + n])
            remain -= n
            i += n
        self._write(b"\x04")
        self._read_until(b"\x04", self.timeout)

    def _arm(self) -> None:
        """Give this session's interpreter maus.host.cexec's checker (its text, from firmware/) and check that it
        refuses a damaged command and runs a sound one; the text itself may be damaged on the way: again."""
        if self._armed:
            return
        src = CEXEC.read_bytes()
        for _ in range(TRIES):
            try:
                self._exec_plain(src)
                if self._exec_plain(checked(b"print(6*7)")).strip() != b"42":
                    continue
                try:
                    self._exec_plain(checked(b"print(1)", binascii.crc32(b"print(1)") ^ 1))
                except UnitExecError as e:
                    if REFUSED in e.error:
                        self._armed = True
                        return
            except UnitExecError:
                continue
            except self.LinkError:
                self.recover()
        raise self.LinkError(f"{self.port}: could not set up checked commands on the unit (the link damages "
                             "too much); check the cable, or try again")

    def exec(self, code: str | bytes, timeout: float | None = None) -> bytes:
        """Run code in the raw REPL, checked (a command damaged on the way is refused by the unit and sent
        again); its output, or UnitExecError with the unit's traceback."""
        data = code.encode() if isinstance(code, str) else code
        self.ensure_raw()
        self._arm()
        for attempt in range(TRIES):
            try:
                return self._exec_plain(checked(data), timeout)
            except UnitExecError as e:
                if not not_run(e.error) or attempt == TRIES - 1:
                    raise
                self.refused += 1
        raise AssertionError

    def _exec_plain(self, code: str | bytes, timeout: float | None = None) -> bytes:
        timeout = self.timeout if timeout is None else timeout
        self._start(code)
        out = self._read_until(b"\x04", timeout)[:-1]
        err = self._read_until(b"\x04", timeout)[:-1]
        self._read_until(b">", timeout)
        self._at_prompt = True
        if err:
            raise UnitExecError(out, err.decode("utf-8", "replace"))
        return out

    def start_exec(self, code: str) -> None:
        """Start code that keeps running (the host service), checked: its output is the link's to read."""
        self.ensure_raw()
        self._arm()
        self._start(checked(code.encode()))

    def peek_exec_end(self, wait: float) -> str | None:
        """Right after start_exec: the error text if the code ended at once (an import that failed), else None
        (what came meanwhile goes back to the link's frame parser)."""
        end = time.monotonic() + wait
        while time.monotonic() < end:
            if self._buf.count(b"\x04") >= 2:
                break
            self._fill(max(0.0, end - time.monotonic()))
        data = bytes(self._buf)
        self._buf = bytearray()
        if data.count(b"\x04") >= 2:
            _out, err, _rest = data.split(b"\x04", 2)
            self._at_prompt = _rest.startswith(b">")
            return err.decode("utf-8", "replace") or "the host service ended at once"
        for item in self.link.parser.feed(data):
            self.link._in.append(item)
        return None

    def finish_exec(self, timeout: float) -> None:
        """After the host service ended: its exec's end marks and the `>` prompt."""
        pending = bytearray()
        while self.link._in:
            item = self.link._in.popleft()
            if isinstance(item, bytes):
                pending += item
        pending += self.link.parser._buf
        self.link.parser = type(self.link.parser)()
        self._buf = pending + self._buf
        self._read_until(b"\x04", timeout)
        self._read_until(b"\x04", timeout)
        self._read_until(b">", timeout)
        self._at_prompt = True

    def eval(self, expr: str, timeout: float | None = None):
        import ast

        out = self.exec(f"print(repr({expr}))", timeout)
        try:
            return ast.literal_eval(out.decode().strip())
        except (ValueError, SyntaxError, UnicodeDecodeError):
            raise self.LinkError(f"{self.port} answered {out[:80]!r}, not a value") from None

    # --- files ----------------------------------------------------------------------------------------------
    def write_file(self, path: str, data: bytes, atomic: bool = True, chunk: int = 3072, progress=None) -> None:
        """Write a file on the unit in base64 chunks, one exec each (a small file: one exec in all), as
        mpremote's fs_writefile does but a third the bytes; with `atomic`, to `path.tmp`, renamed over `path`."""
        import base64

        # Relative to "/": MicroPython's VfsPosix (the virtual unit) fails a rename between two absolute paths.
        rel = path.lstrip("/")
        target = rel + ".tmp" if atomic else rel
        parts = [data[i:i + chunk] for i in range(0, len(data), chunk)] or [b""]
        opening = f"import os,binascii\nos.chdir('/')\n_f=open({target!r},'wb')\n_w=_f.write\n_a=binascii.a2b_base64\n"
        closing = "_f.close()\ndel _f,_w,_a\n" + (f"os.rename({target!r},{rel!r})\n" if atomic else "")
        done = 0
        try:
            for i, part in enumerate(parts):
                code = "_w(_a('%s'))\n" % base64.b64encode(part).decode()
                self.exec((opening if i == 0 else "") + code + (closing if i == len(parts) - 1 else ""))
                done += len(part)
                if progress is not None:
                    progress(done)
        except UnitExecError:
            self.exec("try:\n _f.close()\nexcept Exception:\n pass")
            raise
