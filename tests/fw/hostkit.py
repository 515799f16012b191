# A console for the host service's tests: bytes in (what the host sends), bytes out (what the unit sends),
# and the host's side of the frame format written out again here, independently of maus.host.service, for
# both interpreters (docs/protocol.md).
import binascii
import json

from maus.log.store import LogStore
from maus.settings.values import Settings


def crc(head, payload):
    return binascii.crc32(payload, binascii.crc32(head)) & 0xFFFFFFFF


def escape(data):
    out = bytearray()
    for c in data:
        if c == 0x0D or c == 0x10:
            out.append(0x10)
            out.append(c ^ 0x40)
        else:
            out.append(c)
    return bytes(out)


def frame(kind, seq, payload, version=1):
    wire = escape(payload)
    head = b"%d%s %04x %04x" % (version, kind.encode(), seq, len(wire))
    return b"#MB" + head + b" %08x " % crc(head, payload) + wire + b"\n"


def request(seq, op, **args):
    args["op"] = op
    return frame("Q", seq, json.dumps(args).encode())


def parse(data, end=None):
    """(frames, text) of data[:end]: frames as (kind, seq, payload) with escapes undone and crc checked; every CR
    is dropped first, as a host does. Few copies: a test at the board's heap parses a log's whole frame, and copies
    of it are the test's, not the unit's."""
    data = bytes(memoryview(data)[:len(data) if end is None else end])  # one copy (MicroPython's bytearray finds nothing)
    if b"\r" in data:
        data = data.replace(b"\r", b"")
    n = len(data)
    frames = []
    text = bytearray()
    i = 0
    while i < n:
        j = data.find(b"#MB", i)
        if j < 0:
            text += data[i:n]
            break
        text += data[i:j]
        h = data[j:j + 25]
        try:
            ln = int(h[11:15], 16)
            want = int(h[16:24], 16)
        except ValueError:
            text += data[j:j + 1]
            i = j + 1
            continue
        # a view, one buffer, one copy: a log's 8 KB frame parsed in the board's heap needs no three of it in one piece
        wire = memoryview(data)[j + 25:j + 25 + ln]
        out = bytearray(len(wire))
        k = m = 0
        while k < len(wire):
            if wire[k] == 0x10:
                out[m] = wire[k + 1] ^ 0x40
                k += 2
            else:
                out[m] = wire[k]
                k += 1
            m += 1
        wire = None
        payload = bytes(memoryview(out)[:m])
        out = None
        if len(h) < 25 or data[j + 25 + ln:j + 26 + ln] != b"\n" or crc(h[3:15], payload) != want:
            text += data[j:j + 1]
            i = j + 1
            continue
        frames.append((chr(h[4]), int(h[6:10], 16), payload))
        i = j + 26 + ln
    return frames, bytes(text)


def garble(data, tx, rx):
    """Bytes sent back to back at `tx` baud (8N1) as a UART at `rx` baud reads them: a start bit is the line low,
    each bit is sampled in the middle of the receiver's own bit time, the 8 data bits are taken as sampled. The
    line idles high after the last stop bit. (host/mausbox/sim/line.py has the virtual unit's own.)"""
    if tx == rx:
        return bytes(data)
    bits = bytearray()
    for b in data:
        bits.append(0)
        for i in range(8):
            bits.append((b >> i) & 1)
        bits.append(1)
    n = len(bits)
    step = tx / rx
    out = bytearray()
    t = 0.0
    while t < n:
        i = int(t)
        if bits[i]:
            while i < n and bits[i]:
                i += 1
            if i >= n:
                break
            t = float(i)
        c = 0
        for k in range(8):
            j = int(t + (k + 1.5) * step)
            c |= (bits[j] if j < n else 1) << k
        out.append(c)
        t += 9.5 * step
    return bytes(out)


class Console:
    """The USB console as the service sees it: `inp.readinto`, `ready()`, `out.write`. `rate` is the unit's UART,
    `host_rate` the host's end: bytes cross between two different rates garbled, as on a wire."""

    def __init__(self):
        self.rx = bytearray()  # host -> unit, not yet read
        self.tx = bytearray()  # unit -> host
        self.inp = self
        self.out = self
        self.rate = self.host_rate = 115200

    def ready(self):
        return len(self.rx) > 0

    def readinto(self, b):
        n = min(len(b), len(self.rx))
        b[:n] = self.rx[:n]
        self.rx[:n] = b""
        return n

    keep = True  # False: what the unit writes is counted (dropped), not kept (a stream's data the test need not read)
    dropped = 0

    def write(self, b):
        if not self.keep:
            self.dropped += len(b)
        else:
            self.tx += garble(bytes(b), self.rate, self.host_rate)
        return len(b)

    def send(self, data):
        self.rx += garble(data, self.host_rate, self.rate)

    def take(self):
        out = bytes(self.tx)
        self.tx = bytearray()
        return out


def answer(svc, con, seq, limit=100000):
    """Poll until the R frame for seq is out; (R json, P/D frames before it, console text). Only what does
    not make a whole frame yet is kept between polls."""
    parts = []
    text = bytearray()
    pending = bytearray()
    for _ in range(limit):
        svc.poll(0)
        pending += con.take()
        cut = _whole(pending)
        if not cut:
            continue
        frames, t = parse(pending, cut)
        pending = pending[cut:]
        text += t
        for f in frames:
            if f[1] == seq and f[0] == "R":
                return json.loads(f[2]), parts, bytes(text)
            if f[1] == seq and f[0] in "PD":
                parts.append(f)
    raise AssertionError("no answer to request %d; text %r" % (seq, bytes(text)[-200:]))


def _whole(buf):
    # how many leading bytes of buf hold only whole frames (and text before them)
    end = 0
    i = 0
    while True:
        j = buf.find(b"#MB", i)
        if j < 0:
            return len(buf) if buf.rfind(b"#") < len(buf) - 3 else end
        if len(buf) < j + 25:
            return j
        try:
            n = int(bytes(buf[j + 11:j + 15]), 16)
        except ValueError:
            i = j + 1
            continue
        k = j + 25 + n + 1  # the service never sends a raw CR
        if k > len(buf):
            return j
        end = i = k


class Hw:
    def __init__(self):
        self.t = 1000
        self.clock = None
        self.board = {"family": "esp32"}
        self.con = None  # a Console whose unit end follows console_baud
        self.rates = []  # every console_baud

    def console_baud(self, rate):
        self.rates.append(rate)
        if self.con is not None:
            self.con.rate = rate

    def ticks_ms(self):
        return self.t

    def unique_id(self):
        return b"\x01\x02\x03\x04\x05\x06"

    def wall_clock(self):
        return self.clock

    def set_clock(self, rtc):
        self.clock = (rtc[0], rtc[1], rtc[2], rtc[4], rtc[5], rtc[6], rtc[3], 0)


class Ctx:
    def __init__(self, root):
        self.hw = Hw()
        self.store = LogStore(root)
        self.settings = Settings(root)
        self.status = {"version": "9.9.9", "board": "sim", "safe_mode": False, "problems": []}
        self.mode = "menu"
        self.game = None
        self.log = None
        self.race = False
        self.detector = None  # no piezo (maus.unit.desk samples an armed one while it writes)
        self.rfid = None
        self.reader = None
        self.enrolment = None
        self.changed = 0

    def settings_changed(self):
        self.changed += 1
