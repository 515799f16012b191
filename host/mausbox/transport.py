"""The host's link to a unit (a board over USB or the virtual unit's pty), built on mpremote's SerialTransport.

Every wait is bounded. Expected failures become `UserError` with a sentence that says what to do:
a busy port, missing permissions, a port that does not answer like MicroPython.

`read_file` streams a file from an offset in ONE raw-REPL exec. The unit writes frames to
`sys.stdout.buffer`; the host reads them at link speed:

    b"MBX1" <offset u32> <size u32>          size: the file's size when the read began
    ( <n u16> <n bytes> <crc32 u32> )*       n <= chunk; the frames cover offset..size
    <0 u16> <sha256 of the bytes sent: 32>

All integers little-endian. A frame whose CRC fails, a short stream or a digest mismatch raises
`CorruptRead`/`TruncatedRead` carrying the bytes verified so far, so a caller can resume from
`offset + len(err.good)`. Payload bytes may contain \\x04: the host reads by length, never by terminator.
"""

from __future__ import annotations

import ast
import binascii
import contextlib
import errno
import hashlib
import io
import struct
import time
from dataclasses import dataclass

import serial  # type: ignore[import-untyped]
import serial.tools.list_ports  # type: ignore[import-untyped]
from mpremote.transport import TransportError  # type: ignore[import-untyped]
from mpremote.transport_serial import SerialTransport  # type: ignore[import-untyped]

from mausbox.cli import EXIT_LINK, EXIT_NO_UNIT, EXIT_PROBLEM, UserError

BAUD = 115200
# USB bridges found on ESP32 boards: (vid, pid or None for any) -> name
USB_IDS = {
    (0x10C4, 0xEA60): "CP210x",
    (0x1A86, 0x7523): "CH340",
    (0x1A86, 0x55D4): "CH9102",
    (0x303A, None): "Espressif USB",
    (0x0403, 0x6001): "FTDI FT232R",
    (0x0403, 0x6010): "FTDI FT2232",
    (0x0403, 0x6015): "FTDI FT231X",
}
BUSY_HINT = ("another program holds it: usually an open `mausbox monitor` or `mpremote` session, a serial "
             "monitor or IDE (Thonny, Arduino, VS Code), or ModemManager probing new ports")


class LinkError(UserError):
    """The unit stopped answering or answered garbage."""

    def __init__(self, message: str):
        super().__init__(message, EXIT_LINK)


class UnitExecError(UserError):
    """Code sent to the unit raised: `error` holds MicroPython's traceback text."""

    def __init__(self, output: bytes, error: str):
        last = error.strip().splitlines()[-1] if error.strip() else "error"
        super().__init__(f"the unit reported: {last}", EXIT_PROBLEM)
        self.output = output
        self.error = error


class TruncatedRead(LinkError):
    def __init__(self, message: str, good: bytes, size: int):
        super().__init__(message)
        self.good = good
        self.size = size


class CorruptRead(TruncatedRead):
    pass


@dataclass
class ReadResult:
    data: bytes  # the bytes from offset to size
    offset: int
    size: int  # the file's size on the unit when the read began
    sha256: bytes  # of `data`, computed on the unit and checked here


@dataclass
class PortInfo:
    device: str
    kind: str  # "virtual", a USB bridge name, or "serial"
    description: str
    vid: int | None = None
    pid: int | None = None
    serial_number: str | None = None
    likely_esp32: bool = False


def usb_kind(vid: int | None, pid: int | None) -> str | None:
    if vid is None:
        return None
    return USB_IDS.get((vid, pid)) or USB_IDS.get((vid, None))


def list_ports(include_virtual: bool = True) -> list[PortInfo]:
    """Serial ports that may be units: USB bridges used on ESP32 boards, then running virtual units."""
    from mausbox.sim.ports import running_units

    units = running_units()
    virtual = {u.get("link") or u["pty"] for u in units}
    ports = []
    for p in sorted(serial.tools.list_ports.comports(), key=lambda p: p.device):
        kind = usb_kind(p.vid, p.pid)
        if p.vid is None and not kind or p.device in virtual:
            continue  # a legacy UART (ttyS*): never a unit; a virtual unit (pyserial lists it too): below
        ports.append(PortInfo(p.device, kind or "serial", p.description or "", p.vid, p.pid, p.serial_number,
                              likely_esp32=kind is not None))
    if include_virtual:
        for u in units:
            ports.append(PortInfo(u.get("link") or u["pty"], "virtual", f"virtual unit, folder {u['root']}",
                                  serial_number=u.get("unique_id"), likely_esp32=True))
    return ports


def resolve_port(port: str | None) -> str:
    """The port to use: the one given, else the only likely unit connected."""
    if port:
        return port
    found = [p for p in list_ports() if p.likely_esp32]
    if not found:
        raise UserError("no unit found: connect one by USB (or start `mausbox sim --serial`), or name it "
                        "with --port", EXIT_NO_UNIT)
    if len(found) > 1:
        names = ", ".join(p.device for p in found)
        raise UserError(f"several possible units ({names}): choose one with --port", EXIT_NO_UNIT)
    return found[0].device


def open_error(port: str, e: BaseException) -> UserError:
    """A friendly sentence for a port that would not open."""
    text = str(e)
    code = getattr(e, "errno", None)
    if "exclusively lock" in text or code in (errno.EBUSY, errno.EAGAIN):
        return UserError(f"{port} is busy: {BUSY_HINT}", EXIT_NO_UNIT)
    if isinstance(e, PermissionError) or code == errno.EACCES or "Permission denied" in text:
        return UserError(f"no permission to open {port}: add yourself to the serial group "
                         "(`sudo usermod -aG dialout $USER`, then log out and in again)", EXIT_NO_UNIT)
    if isinstance(e, FileNotFoundError) or code == errno.ENOENT or "No such file" in text:
        return UserError(f"{port} does not exist: is the unit plugged in? `mausbox ports` lists what is "
                         "connected", EXIT_NO_UNIT)
    return UserError(f"cannot open {port}: {text}", EXIT_NO_UNIT)


class _SerialTransport(SerialTransport):
    """mpremote's transport, opened so that the real cause of a failure is kept."""

    # Not super().__init__: it turns every open failure into "failed to access", losing the cause.
    def __init__(self, device: str, baudrate: int = BAUD, timeout: float = 5):
        self.in_raw_repl = False
        self.use_raw_paste = True
        self.device_name = device
        self.mounted = False
        self.serial = serial.Serial(device, baudrate=baudrate, timeout=timeout, exclusive=True)
        self.is_pty = self._is_pty_device(device)


class UnitLink:
    """A raw-REPL session with one unit. Use as a context manager; `close()` restarts the firmware."""

    def __init__(self, port: str | None = None, baud: int = BAUD, timeout: float = 10):
        self.port = resolve_port(port)
        self.timeout = timeout
        self._port_timeout = min(timeout, 5)
        deadline = time.monotonic() + 2.0
        while True:
            try:
                self.t = _SerialTransport(self.port, baud, timeout=self._port_timeout)
                break
            except (OSError, serial.SerialException) as e:
                err = open_error(self.port, e)
                # A port that the previous command is still letting go of frees up within moments.
                if "is busy" in str(err) and time.monotonic() < deadline:
                    time.sleep(0.1)
                    continue
                raise err from None
        self.bytes_sent = 0
        self._buf = bytearray()
        self._at_prompt = False

    # -- session -------------------------------------------------------------------------------------

    def __enter__(self) -> UnitLink:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def enter_raw(self, soft_reset: bool = False) -> None:
        """Stop what runs and enter the raw REPL (the game stops until `close` restarts it)."""
        try:
            self._interrupt()
            with contextlib.redirect_stdout(io.StringIO()):
                self.t.enter_raw_repl(soft_reset=soft_reset, timeout_overall=self.timeout)
            self._buf = bytearray()
            self._at_prompt = False  # mpremote stops right before the first `>`
        except TransportError:
            raise LinkError(f"{self.port} does not answer like MicroPython's REPL: is MicroPython flashed "
                            "(`mausbox flash`), or is another program talking to it?") from None
        except (OSError, serial.SerialException) as e:
            raise LinkError(f"lost the link to {self.port}: {e}") from None

    def _interrupt(self) -> None:
        """Ctrl-C until the unit shows a prompt: a unit still booting, or code that swallowed one
        KeyboardInterrupt, needs more than mpremote's single Ctrl-C. Bounded by the link timeout."""
        end = time.monotonic() + self.timeout
        seen = b""
        while time.monotonic() < end:
            self._write(b"\r\x03")
            quiet_until = time.monotonic() + 0.4
            while time.monotonic() < quiet_until:
                chunk = self._read_some(0.02)
                if chunk:
                    seen = (seen + chunk)[-64:]
                    quiet_until = time.monotonic() + 0.15
            if seen.endswith((b"\n>>> ", b"\n>")):  # a prompt, not a `>` inside printed text
                return

    def ensure_raw(self) -> None:
        if not self.t.in_raw_repl:
            self.enter_raw()

    def close(self, restart: bool = True) -> None:
        """Leave the raw REPL; with `restart`, soft-reset so main.py (the game) runs again."""
        try:
            if self.t.in_raw_repl:
                self.t.exit_raw_repl()
                if restart:
                    self.t.serial.write(b"\x04")
                    self.t.serial.flush()
        except (OSError, serial.SerialException):
            pass
        try:
            self.t.close()
        except (OSError, serial.SerialException):
            pass

    def close_raw(self) -> None:
        """Back to the friendly REPL (the port stays open)."""
        if self.t.in_raw_repl:
            self._write(b"\r\x02")
            self.t.in_raw_repl = False
        self._buf = bytearray()
        self._at_prompt = False

    def handoff(self) -> None:
        """Before calling mpremote's own functions on `self.t`: they read the `>` prompt themselves."""
        self.ensure_raw()
        if self._at_prompt:
            self._write(b"\x01")  # Ctrl-A in the raw REPL: the unit repeats its banner and `>`
            self._at_prompt = False

    def recover(self) -> None:
        """After a broken exchange: interrupt, discard what is in flight, and re-enter the raw REPL."""
        try:
            self.t.serial.write(b"\r\x03\x03")
            time.sleep(0.1)
            self.t.serial.reset_input_buffer()
        except (OSError, serial.SerialException) as e:
            raise LinkError(f"lost the link to {self.port}: {e}") from None
        self.t.in_raw_repl = False
        self._buf = bytearray()
        self.enter_raw()

    # -- exec ----------------------------------------------------------------------------------------

    def _read_some(self, wait: float) -> bytes:
        """What has arrived, or the first bytes within `wait` seconds (b"" if none)."""
        ser = self.t.serial
        try:
            n = ser.in_waiting
            if n:
                return ser.read(min(n, 65536))
            ser.timeout = wait
            try:
                return ser.read(1)
            finally:
                ser.timeout = self._port_timeout
        except (OSError, serial.SerialException) as e:
            raise LinkError(f"lost the link to {self.port}: {e}") from None

    def _fill(self, timeout: float) -> bool:
        """Read what has arrived into the buffer, waiting up to `timeout` for the first byte."""
        end = time.monotonic() + timeout
        while True:
            chunk = self._read_some(min(0.1, max(0.0, end - time.monotonic())))
            if chunk:
                self._buf += chunk
                return True
            if time.monotonic() >= end:
                return False

    def _read(self, n: int, timeout: float) -> bytes:
        """Exactly n bytes, or fewer if the unit goes quiet for `timeout` seconds."""
        while len(self._buf) < n and self._fill(timeout):
            pass
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def _read_until(self, ending: bytes, timeout: float, limit: int = 1 << 24) -> bytes:
        """Up to and including `ending`; LinkError if the unit goes quiet or floods."""
        start = 0
        while True:
            i = self._buf.find(ending, start)
            if i >= 0:
                out = bytes(self._buf[:i + len(ending)])
                del self._buf[:i + len(ending)]
                return out
            start = max(0, len(self._buf) - len(ending) + 1)
            if len(self._buf) > limit:
                raise LinkError(f"{self.port} sent more than {limit} bytes for one command")
            if not self._fill(timeout):
                raise LinkError(f"{self.port} stopped answering (nothing for {timeout:.0f} s)")

    def _write(self, data: bytes) -> None:
        try:
            self.t.serial.write(data)
        except (OSError, serial.SerialException) as e:
            raise LinkError(f"lost the link to {self.port}: {e}") from None
        self.bytes_sent += len(data)

    def _start(self, code: str | bytes) -> None:
        """Send one command at the raw REPL's `>` prompt, in raw-paste mode when the unit has it."""
        self.ensure_raw()
        data = code.encode() if isinstance(code, str) else code
        if not self._at_prompt:
            self._read_until(b">", self.timeout)
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
            raise LinkError(f"{self.port} did not accept a command; try again, or reset the unit")

    def _raw_paste(self, data: bytes) -> None:
        window = struct.unpack("<H", self._read(2, self.timeout) or b"\0\0")[0]
        if not window:
            raise LinkError(f"{self.port} broke off the raw-paste handshake")
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
                    raise LinkError(f"{self.port} sent {b!r} during a raw paste")
            n = min(remain, len(data) - i)
            self._write(data[i:i + n])
            remain -= n
            i += n
        self._write(b"\x04")
        self._read_until(b"\x04", self.timeout)

    def exec(self, code: str | bytes, timeout: float | None = None) -> bytes:
        """Run code in the raw REPL; its output, or UnitExecError with the unit's traceback."""
        timeout = self.timeout if timeout is None else timeout
        self._start(code)
        out = self._read_until(b"\x04", timeout)[:-1]
        err = self._read_until(b"\x04", timeout)[:-1]
        self._read_until(b">", timeout)
        self._at_prompt = True
        if err:
            raise UnitExecError(out, err.decode("utf-8", "replace"))
        return out

    def eval(self, expr: str, timeout: float | None = None):
        """A Python literal computed on the unit."""
        out = self.exec(f"print(repr({expr}))", timeout)
        try:
            return ast.literal_eval(out.decode().strip())
        except (ValueError, SyntaxError, UnicodeDecodeError):
            raise LinkError(f"{self.port} answered {out[:80]!r}, not a value") from None

    # -- files ---------------------------------------------------------------------------------------

    def read_file(self, path: str, offset: int = 0, chunk: int = 2048, timeout: float | None = None,
                  progress=None) -> ReadResult:
        """Stream a file's bytes from `offset` in one exec (see the module doc for the framing)."""
        timeout = self.timeout if timeout is None else timeout
        code = _READ_CODE % (path, int(offset), int(chunk))
        self._start(code)
        hdr = self._read(12, timeout)
        if not hdr.startswith(b"MBX1") or len(hdr) < 12:
            self._fail_read(hdr, timeout)
        off, size = struct.unpack("<II", hdr[4:12])
        if off != offset:
            raise CorruptRead(f"reading {path}: the unit started at {off}, not {offset}", b"", size)
        data = bytearray()
        want = max(0, size - offset)
        while True:
            nb = self._read(2, timeout)
            if len(nb) < 2:
                raise TruncatedRead(f"reading {path}: the stream stopped after {len(data)} bytes", bytes(data), size)
            n = struct.unpack("<H", nb)[0]
            if n == 0:
                break
            if n > chunk or len(data) + n > want:
                raise CorruptRead(f"reading {path}: a frame length is corrupt", bytes(data), size)
            body = self._read(n + 4, timeout)
            if len(body) < n + 4:
                raise TruncatedRead(f"reading {path}: the stream stopped after {len(data)} bytes", bytes(data), size)
            payload, crc = body[:n], struct.unpack("<I", body[n:])[0]
            if binascii.crc32(payload) != crc:
                raise CorruptRead(f"reading {path}: a chunk failed its CRC at byte {offset + len(data)}",
                                  bytes(data), size)
            data += payload
            if progress:
                progress(offset + len(data), size)
        digest = self._read(32, timeout)
        tail = self._read(3, timeout)
        if tail != b"\x04\x04>":
            raise TruncatedRead(f"reading {path}: the end of the stream is missing", bytes(data), size)
        self._at_prompt = True
        if len(data) != want:
            raise TruncatedRead(f"reading {path}: got {len(data)} of {want} bytes", bytes(data), size)
        if hashlib.sha256(data).digest() != digest:
            raise CorruptRead(f"reading {path}: the sha256 does not match", b"", size)
        return ReadResult(bytes(data), offset, size, digest)

    def _fail_read(self, head: bytes, timeout: float):
        if head.startswith(b"\x04"):
            self._buf[:0] = head[1:]
            err = self._read_until(b"\x04", timeout)[:-1].decode("utf-8", "replace")
            self._read_until(b">", timeout)
            self._at_prompt = True
            if "ENOENT" in err:
                raise FileNotFoundError(err.strip().splitlines()[-1])
            raise UnitExecError(b"", err)
        raise LinkError(f"{self.port}: the unit's answer to a read does not start with a frame header "
                        f"({head[:12]!r})")

    def write_file(self, path: str, data: bytes, atomic: bool = True, chunk: int = 3072) -> None:
        """Write a file on the unit in base64 chunks, one exec each (a small file: one exec in all);
        with `atomic`, to `path.tmp`, then renamed over `path`."""
        import base64

        # Relative to "/": MicroPython's VfsPosix (the virtual unit) fails a rename between two absolute paths.
        rel = path.lstrip("/")
        target = rel + ".tmp" if atomic else rel
        parts = [data[i:i + chunk] for i in range(0, len(data), chunk)] or [b""]
        opening = f"import os,binascii\nos.chdir('/')\n_f=open({target!r},'wb')\n_w=_f.write\n_a=binascii.a2b_base64\n"
        closing = "_f.close()\ndel _f,_w,_a\n" + (f"os.rename({target!r},{rel!r})\n" if atomic else "")
        try:
            for i, part in enumerate(parts):
                code = "_w(_a('%s'))\n" % base64.b64encode(part).decode()
                self.exec((opening if i == 0 else "") + code + (closing if i == len(parts) - 1 else ""))
        except UnitExecError:
            self.exec("try:\n _f.close()\nexcept Exception:\n pass")
            raise


_READ_CODE = """import sys,os,struct,hashlib,binascii
def _mbx(p,o,c):
 s=os.stat(p)[6]
 w=sys.stdout.buffer.write
 h=hashlib.sha256()
 b=bytearray(c)
 m=memoryview(b)
 r=s-o
 with open(p,'rb') as f:
  f.seek(o)
  w(b'MBX1'+struct.pack('<II',o,s))
  while r>0:
   n=f.readinto(m[:min(c,r)])
   if not n:break
   r-=n
   h.update(m[:n])
   w(struct.pack('<H',n));w(m[:n]);w(struct.pack('<I',binascii.crc32(m[:n])))
 w(b'\\0\\0'+h.digest())
try:
 _mbx(%r,%d,%d)
finally:
 del _mbx
"""
