"""The virtual unit's serial line: the speed a host set on its tty, and what a UART receives of bytes sent at
another rate."""

from __future__ import annotations

import fcntl
import struct
import termios

BOOT_BAUD = 115200  # the unit's console rate at power-on (firmware/maus/host/service.py BOOT_BAUD)
TCGETS2 = 0x802C542A  # Linux: struct termios2, whose c_ispeed/c_ospeed hold any rate (pyserial sets odd ones so)
TCSETS2 = 0x402C542B
BOTHER = 0o010000  # c_cflag: the speed is c_ospeed's, not a B-code
CBAUD = 0o010017
_SPEEDS = {getattr(termios, "B%d" % r): r for r in (9600, 19200, 38400, 57600, 115200, 230400, 460800, 500000,
                                                   576000, 921600, 1000000, 1152000, 1500000, 2000000, 2500000,
                                                   3000000, 3500000, 4000000) if hasattr(termios, "B%d" % r)}


def tty_speed(fd: int) -> int:
    """The speed a tty is set to (the host's end: pyserial and mpremote set it on the slave; the pty master reads the
    same termios). Linux's TCGETS2 gives any rate; the classic speed codes are the fallback."""
    try:
        buf = bytearray(44)  # struct termios2: 4 flags, c_line, c_cc[19], c_ispeed, c_ospeed
        fcntl.ioctl(fd, TCGETS2, buf)
        ospeed = struct.unpack_from("<I", buf, 40)[0]
        if ospeed:
            return ospeed
    except OSError:
        pass
    try:
        return _SPEEDS.get(termios.tcgetattr(fd)[5], BOOT_BAUD)
    except termios.error:
        return BOOT_BAUD


def set_tty_speed(fd: int, rate: int) -> bool:
    """Set a tty's speed to `rate` (Linux TCSETS2, any rate), as pyserial sets it; False where that fails."""
    try:
        buf = bytearray(44)
        fcntl.ioctl(fd, TCGETS2, buf)
        cflag = struct.unpack_from("<I", buf, 8)[0]
        struct.pack_into("<I", buf, 8, (cflag & ~CBAUD) | BOTHER)
        struct.pack_into("<II", buf, 36, rate, rate)
        fcntl.ioctl(fd, TCSETS2, buf)
        return True
    except OSError:
        return False


def resample(data: bytes, tx: int, rx: int) -> bytes:
    """Bytes sent back to back at `tx` baud (8N1), as a UART at `rx` baud receives them: it waits for the line to
    go low (a start bit), samples each bit in the middle of its own bit time, and takes the 8 data bits it sampled
    (a framing error too: the ESP32's REPL ISR reads its FIFO as it is, a raw tty without INPCK passes it). The
    line idles high after the last stop bit, so what `rx` sees past it is the end."""
    if tx == rx:
        return bytes(data)
    bits = bytearray()
    for b in data:
        bits.append(0)
        bits.extend((b >> i) & 1 for i in range(8))
        bits.append(1)
    n = len(bits)
    step = tx / rx  # one received bit, in sent bit times

    def level(t: float) -> int:
        i = int(t)
        return bits[i] if i < n else 1

    out = bytearray()
    t = 0.0
    while t < n:
        i = int(t)
        if level(t):  # idle: the next low bit starts a character
            while i < n and bits[i]:
                i += 1
            if i >= n:
                break
            t = float(i)
        start = t
        c = 0
        for k in range(8):
            c |= level(start + (k + 1.5) * step) << k
        out.append(c)
        t = start + 9.5 * step  # the stop bit's sample: the receiver looks for a start bit from there
    return bytes(out)
