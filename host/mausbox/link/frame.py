"""The host protocol's frame, the one format both ends speak (docs/protocol.md; the unit's side is
firmware/maus/host/service.py):

    #MB<v><kind> <seq:4 hex> <len:4 hex> <crc32:8 hex> <payload: len bytes>\\n

`v` is the protocol revision ("1"), `kind` one of Q R P D E, `len` the payload's length on the wire and the
crc32 covers "<v><kind> <seq> <len>" followed by the decoded payload. Payloads escape CR and DLE as
DLE, byte ^ 0x40; every receiver drops every CR first (a console may turn \\n into \\r\\n, and a board's
boot messages end their lines with \\r\\n). Everything on the line that is not a good frame is console
text: a `>>> ` prompt, `EV` lines, a traceback, boot chatter. A damaged frame is console text too.
"""

from __future__ import annotations

import binascii
from dataclasses import dataclass

MAGIC = b"#MB"
PROTO = 1  # the revision this host speaks
HDR = 25  # header bytes before the payload
MAX_LEN = 16384  # no frame of revision 1 is longer on the wire
KINDS = b"QRPDE"
REQUEST, RESPONSE, PART, DATA, EVENT = (ord(c) for c in "QRPDE")
DLE, CR = 0x10, 0x0D
_HEXD = frozenset(b"0123456789abcdef")


def escape(data: bytes) -> bytes:
    if b"\r" not in data and b"\x10" not in data:
        return data
    return data.replace(b"\x10", b"\x10P").replace(b"\r", b"\x10M")


def unescape(data: bytes) -> bytes | None:
    """The payload as sent, or None if an escape is broken."""
    if b"\x10" not in data:
        return data
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        j = data.find(b"\x10", i)
        if j < 0:
            out += data[i:]
            break
        out += data[i:j]
        if j + 1 >= n or data[j + 1] not in (0x4D, 0x50):
            return None
        out.append(data[j + 1] ^ 0x40)
        i = j + 2
    return bytes(out)


def _crc(head: bytes, payload: bytes) -> int:
    return binascii.crc32(payload, binascii.crc32(head)) & 0xFFFFFFFF


def encode(kind: int | str, seq: int, payload: bytes, version: int = PROTO) -> bytes:
    k = ord(kind) if isinstance(kind, str) else kind
    wire = escape(payload)
    head = b"%d%c %04x %04x" % (version, k, seq & 0xFFFF, len(wire))
    return MAGIC + head + b" %08x " % _crc(head, payload) + wire + b"\n"


@dataclass
class Frame:
    version: int  # the revision digit's value (1)
    kind: int  # one of REQUEST ... EVENT
    seq: int
    payload: bytes  # decoded

    @property
    def kind_char(self) -> str:
        return chr(self.kind)


def parse_header(h: bytes) -> tuple[int, int, int, int, int] | None:
    """(version, kind, seq, wire length, crc) of a 25-byte header, or None if it is not one."""
    if len(h) < HDR or h[:3] != MAGIC or h[5] != 0x20 or h[10] != 0x20 or h[15] != 0x20 or h[24] != 0x20:
        return None
    if not (0x30 <= h[3] <= 0x39) or h[4] not in KINDS:
        return None
    fields = (h[6:10], h[11:15], h[16:24])
    if not all(_HEXD.issuperset(f) for f in fields):
        return None
    n = int(h[11:15], 16)
    if n > MAX_LEN:
        return None
    return h[3] - 0x30, h[4], int(h[6:10], 16), n, int(h[16:24], 16)


class Parser:
    """Bytes from the unit in, frames and console text out. Keeps no more than one frame of input."""

    def __init__(self):
        self._buf = bytearray()
        self.bad = 0  # frames that failed their crc or escape
        self.damage = 0  # frame starts that turned out damaged: a failed crc or escape, a header that broke off

    @property
    def pending(self) -> bool:
        """A frame's start is held, waiting for the rest of its bytes (a damaged length may wait for ever)."""
        return self._buf.startswith(MAGIC)

    def feed(self, data: bytes) -> list[Frame | bytes]:
        """Frames, and runs of console text (bytes) between them, in arrival order."""
        if data:
            self._buf += data.replace(b"\r", b"")
        out: list[Frame | bytes] = []
        buf = self._buf
        while buf:
            i = buf.find(MAGIC)
            if i < 0:
                keep = 2 if buf.endswith(b"#M") else 1 if buf.endswith(b"#") else 0
                self._text(out, buf[:len(buf) - keep])
                del buf[:len(buf) - keep]
                break
            if i:
                self._text(out, buf[:i])
                del buf[:i]
            if len(buf) < HDR:
                if not _could_be_header(buf):
                    self._skip(out)
                    continue
                break
            h = parse_header(bytes(buf[:HDR]))
            if h is None:
                self._skip(out)
                continue
            version, kind, seq, n, crc = h
            if len(buf) < HDR + n + 1:
                break
            wire = bytes(buf[HDR:HDR + n])
            payload = unescape(wire) if buf[HDR + n] == 0x0A else None
            if payload is None or _crc(bytes(buf[3:15]), payload) != crc:
                self.bad += 1
                self._skip(out)
                continue
            del buf[:HDR + n + 1]
            out.append(Frame(version, kind, seq, payload))
        return out

    def resync(self) -> list[Frame | bytes]:
        """Give up a frame still waiting for its bytes (a damaged length may claim far more than will come) and
        scan again behind its "#": what the bytes held after all. Called before each new request."""
        if not self._buf.startswith(MAGIC):
            return []
        out: list[Frame | bytes] = []
        self._skip(out)
        return out + self.feed(b"")

    def _skip(self, out: list) -> None:
        # Not a frame after all: its "#" is console text, scanning goes on behind it.
        if self._buf.startswith(MAGIC):
            self.damage += 1
        self._text(out, self._buf[:1])
        del self._buf[:1]

    @staticmethod
    def _text(out: list, b) -> None:
        if not b:
            return
        if out and isinstance(out[-1], bytes):
            out[-1] += bytes(b)
        else:
            out.append(bytes(b))


def _could_be_header(b: bytearray) -> bool:
    """Is this start of a header still possibly one (so far every fixed position fits)?"""
    h = bytes(b)
    if len(h) > 3 and not 0x30 <= h[3] <= 0x39:
        return False
    if len(h) > 4 and h[4] not in KINDS:
        return False
    for pos in (5, 10, 15, 24):
        if len(h) > pos and h[pos] != 0x20:
            return False
    return all(c in _HEXD for k, c in enumerate(h) if k in range(6, 10) or k in range(11, 15) or k in range(16, 24))
