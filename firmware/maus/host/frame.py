# The host link's frame header (docs/protocol.md), shared by the always-loaded part of the link
# (maus.unit.core HostWake, which answers a few requests in a game) and the host service (maus.host.service):
#
#   #MB<v><kind> <seq:4 hex> <len:4 hex> <crc32:8 hex> <payload: len bytes>\n
import binascii

from maus import LOG_DIR, free_bytes, json_pieces
from maus.ticks import ticks_diff
from micropython import const

TYPE_CHECKING = const(0)  # a constant: the compiler drops the block below, the type checker reads it
if TYPE_CHECKING:
    from typing import Callable

HDR = const(25)  # "#MB1Q ssss llll cccccccc " before the payload
BOOT_BAUD = const(115200)  # the console's rate at power-on (ports/esp32: MICROPY_HW_UART_REPL_BAUD)
BAUD_WAIT_MS = const(2000)  # after a switch (op baud) a valid frame comes this soon, or the unit goes back
_HEX = b"0123456789abcdef"


def fits(i, c):
    """Can byte c stand at position i of a request header "#MB1Q ssss llll cccccccc "?"""
    if i == 0:
        return c == 0x23
    if i == 1:
        return c == 0x4D
    if i == 2:
        return c == 0x42
    if i == 3:
        return 0x30 <= c <= 0x39
    if i == 4:
        return c == 0x51  # "Q": this end takes requests only (an echo of the unit's own frames is not one)
    if i == 5 or i == 10 or i == 15 or i == 24:
        return c == 0x20
    return 0x30 <= c <= 0x39 or 0x61 <= c <= 0x66


def unhex(b, i, n):
    v = 0
    for k in range(i, i + n):
        c = b[k]
        if 0x30 <= c <= 0x39:
            v = v << 4 | (c - 0x30)
        elif 0x61 <= c <= 0x66:
            v = v << 4 | (c - 0x57)
        else:
            return -1
    return v


def puthex(b, i, v, n):
    k = i + n
    while k > i:
        k -= 1
        b[k] = _HEX[v & 15]
        v >>= 4


_SPARE = const(32)  # of the transmit FIFO: room for what else the unit prints (EV and SAY lines)
_SLICE = const(32)  # bytes per write, once the FIFO is full


class Tx:
    """The unit's side of the link writing frames: the host service, and in a game the desk (maus.unit.desk).

    The ESP32 port's console write (ports/esp32/uart.c uart_stdout_tx_strn) stays in C, soft IRQs held off, until
    all it was given is in the UART's 128-byte transmit FIFO (hw.tx_fifo): a ~500-byte status answer written at once
    held a press's first edge off for ~35 ms, a 1 KB data frame ~90 ms. On such a console a frame goes out in slices
    that fit, and the writer spins in bytecode (the pin handlers run at its branches) while the FIFO drains; a USB
    console is written at once. `idle(t)` is called before each wait of t µs (the desk samples an armed piezo)."""

    idle: "Callable[[int], object] | None" = None

    def __init__(self, hw, out):
        self.out = out
        self.hdr = bytearray(b"#MB1R 0000 0000 00000000 ")
        self.hw = hw
        self.fifo = getattr(hw, "tx_fifo", 0) if hw is not None and console(hw) == "uart" else 0
        self.us = getattr(hw, "ticks_us", None) if self.fifo else None  # None: no FIFO to pace
        self.txe = self.us() if self.us is not None else 0  # ticks_us by which the FIFO has sent what was written
        self.ch = 87  # µs a byte on the line (10 bits): 115,200 baud, the console's rate in a game

    def send(self, kind, seq, parts, extra=0, write=None):
        """One frame whose payload is `parts`, bytes pieces; the CRC covers them as they are. Pieces that hold no CR
        or DLE (JSON never does) go out as they are; else write(piece) escapes them, adding `extra` bytes
        (maus.host.service)."""
        n = extra
        for p in parts:
            n += len(p)
        h = self.hdr
        h[4] = kind
        puthex(h, 6, seq, 4)
        puthex(h, 11, n, 4)
        crc = binascii.crc32(memoryview(h)[3:15])
        for p in parts:
            crc = binascii.crc32(p, crc)  # unsigned: a long int on a 32-bit port most of the time, split once
        puthex(h, 16, crc >> 16, 4)
        puthex(h, 20, crc & 0xFFFF, 4)
        put = self.put
        put(h)
        w = write or put
        for p in parts:
            w(p)
        put(b"\n")

    def reply(self, seq, obj):
        """An answer (R frame) to request seq: obj as compact JSON ("ok" true unless obj says), in pieces
        (maus.json_pieces): a status is ~500 bytes, more than a crowded heap may have in one block."""
        if "ok" not in obj:
            obj["ok"] = True
        out = []  # type: list[bytes]
        json_pieces(out, "", obj, 2)
        self.send(0x52, seq, out)

    def put(self, b):
        """b on the line; on a paced console in slices that fit in the FIFO now: the frame still goes out whole in
        this call (nothing else the unit prints comes between its bytes), and the pin IRQs' handlers run in the
        waits between slices."""
        us = self.us
        if us is None:
            self.out.write(b)
            return
        ch = self.ch
        cap = self.fifo - _SPARE
        n = len(b)
        i = 0
        while i < n:
            room = cap - (self._held() + ch - 1) // ch
            want = n - i if n - i < _SLICE else _SLICE
            if room < want:
                self._wait((want - room) * ch)
                room = cap - (self._held() + ch - 1) // ch
            k = n - i if n - i < room else room
            if k <= 0:
                continue
            self.out.write(b[i:i + k] if i or k < n else b)
            self.txe = (us() + self._held() + k * ch) & 0x3FFFFFFF
            i += k

    def _wait(self, t):
        # t µs spinning in bytecode, whose branches run the pin handlers within a few µs (time.sleep_us runs none in
        # its last 155 µs: mp_hal_delay_us); a board's delay that short is a busy loop too. hw.spend: the sim's time.
        us = self.us
        t0 = us()
        if self.idle is not None:
            self.idle(t)
        spend = self.hw.spend
        while ticks_diff(us(), t0) < t:
            spend(t)

    def _held(self):
        # µs the bytes written stay in the FIFO (0 once sent; an old mark, past the slowest rate's, too)
        d = ticks_diff(self.txe, self.us())
        return d if 0 < d <= self.fifo * 10000000 // 9600 else 0


# --- the answers both ends of the unit give: hello and status -------------------------------------------------
PROTO = const(1)  # the protocol revision this firmware speaks (the frame envelope never changes)


def hello(c, app):
    import sys

    import maus

    st = c.status or {}
    v = sys.implementation.version
    return {"proto": PROTO, "proto_min": PROTO, "fw": st.get("version"),
            "unit": getattr(c, "unit_id", None) or (hexs(c.hw.unique_id()) if c.hw is not None else None),
            "board": st.get("board"), "platform": sys.platform, "micropython": "%d.%d.%d" % v[:3],
            "app": app, "safe_mode": bool(st.get("safe_mode")), "mode": c.mode, "game": game(c),
            "name": maus.unit_name(getattr(c, "root", "") or ""),
            "console": console(c.hw) if app and c.hw is not None else None}


def console(hw):
    """How the console reaches the host: "usb" (the chip's own USB port, USB-CDC: no baud rate to agree on) or
    "uart" (UART0 behind a USB-serial bridge), as the board file says (`usb_serial`, docs/boards.md)."""
    b = getattr(hw, "board", None) or {}
    return "usb" if b.get("usb_serial", b.get("family") == "esp32s3") else "uart"


def status(c, app, requests, bad_frames, now):
    import gc

    out = {"status": c.status, "mode": c.mode, "game": game(c), "log": c.log.name if c.log is not None else None,
           "app": app, "mem_free": _mem(gc, "mem_free"), "mem_alloc": _mem(gc, "mem_alloc"),
           "requests": requests, "bad_frames": bad_frames,
           "boot": getattr(c, "boot", None) or (c.status or {}).get("boot"), "crashes": getattr(c, "crashes", None)}
    try:
        # Not c.store.free(): in a game, loading maus.log.store for a status poll took ~2 KB that the game's peak
        # did not have.
        root = getattr(c, "root", None)
        out["free_bytes"] = c.store.free() if root is None else free_bytes(root + LOG_DIR)
    except OSError:
        out["free_bytes"] = None
    out["wall"] = wall(c.hw)
    out["uptime_ms"] = now
    return out


def game(c):
    g = c.game
    return getattr(g, "GAME", None) if g is not None else None


def wall(hw):
    try:
        t = hw.wall_clock() if hw is not None else None
    except OSError:
        t = None
    return None if t is None else "%04d-%02d-%02dT%02d:%02d:%02d" % tuple(t[:6])


def hexs(b):
    return "".join("%02x" % x for x in b)


def _mem(gc, name):
    fn = getattr(gc, name, None)  # MicroPython's; a CPython test run has none
    return fn() if fn is not None else None


def why(e):
    """An exception's text for an error answer (the service's and its rarer operations')."""
    return str(e.args[0]) if e.args else type(e).__name__
